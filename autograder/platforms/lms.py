"""Canvas and Moodle: a submissions download in, a gradebook to import and feedback out.

A download (a zip or the folder it unpacks to) is matched file by file against each LMS's
documented naming:

- Canvas, "Download Submissions": ``name[_LATE]_userid_submissionid_filename``; a
  resubmission's file gets ``-1``, ``-2``... before its extension.
- Moodle, "Download all submissions": ``Full Name_id_assignsubmission_file_/filename`` (one
  folder per participant), or the same prefix on the file's own name without folders.

The student's id is the LMS's own (Canvas user id, Moodle participant id), so grades go back
to the right row. Renamed notebooks (``01_tensors (2).ipynb``, ``Copy of ...``, anything
else when it is the student's only notebook) and late flags are recognised and reported;
everything that cannot be matched is listed, never dropped silently. nbgrader's
``zip_collect`` does the same job for its own layout.

Each entry is judged on its own, so one bad entry never stops the run: a name that cannot
be decoded, is unsafe or is in the zip twice, a damaged entry, one that expands past
``ENTRY_CAP`` or takes the download past ``TOTAL_CAP`` is listed in ``refused`` with why, and
every other student is graded. Only each student's chosen notebook is expanded, streamed to
disk a chunk at a time. Ids and names too long for a file name are shortened with a hash.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import lzma
import re
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from autograder.grading import files as grading_files

CANVAS = "canvas"
MOODLE = "moodle"
SOURCES = (CANVAS, MOODLE)

CANVAS_NAME = re.compile(
    r"^(?P<name>[^_/]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<filename>.+)$"
)
MOODLE_NAME = re.compile(
    r"^(?P<name>.+?)_(?P<user>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<filename>.*)$"
)
# What copies, downloads and resubmissions add to a notebook's name.
RENAMES = (
    re.compile(r"^copy of\s+", re.I),  # Google Drive / Colab "Copy of ..."
    re.compile(r"\s*\(\d+\)$"),  # a browser's "name (2)"
    re.compile(r"-\d+$"),  # Canvas's resubmission "name-1"
    re.compile(r"\s*-\s*copy$", re.I),  # "name - Copy"
)
JUNK = ("__MACOSX/", ".DS_Store", "Thumbs.db", "desktop.ini")

# How much one download may expand to. A notebook is text with its outputs' images inlined:
# a heavy one (many plots) is ~10 MB, so 50 MB never refuses real work, and 300 students
# at 1.5 MB each stay far under 500 MB. Past either cap the download is damaged or hostile
# (a zip of zeros expands a thousandfold), and expanding it would fill the disk. Only the
# notebooks that are graded are expanded, each counted as it is copied: the sizes a zip
# declares are the zip's claim, never trusted.
ENTRY_CAP = 50 * 2**20
TOTAL_CAP = 500 * 2**20
CHUNK = 2**20  # what is held in memory at once while a notebook is copied out

# A file name is at most 255 bytes (NAME_MAX on Linux and macOS). LMS ids are numbers of at
# most ~20 digits and names a few dozen characters; a longer one is shortened to its start
# and a hash of the whole (``fit``), so it always gives the same file name, and two never
# share one. With these, the longest name written (a Canvas feedback file) stays under 255.
ID_MAX = 40  # a student's id (a folder in OUT) and Canvas's submission id
NAME_MAX = 80  # the student's name, in bytes, in a feedback file's name
PLUGIN_MAX = 24  # Moodle's submission plugin ("file", "onlinetext")


class LmsError(ValueError):
    """The download cannot be read at all (not a zip, not a folder, nothing in it)."""


def fit(value: str, limit: int) -> str:
    """``value``, or when its UTF-8 is over ``limit`` bytes, its start and a hash of the whole.

    Stable (the same value always gives the same result) and one-to-one in practice (the hash
    is 64 bits of SHA-256), so a shortened id still keys the same student on every run.
    """
    data = value.encode("utf-8")
    if len(data) <= limit:
        return value
    digest = hashlib.sha256(data).hexdigest()[:16]
    head = data[: limit - len(digest) - 1].decode("utf-8", "ignore")  # whole characters only
    return f"{head}-{digest}"


@dataclass
class Found:
    """One student's notebook in the download, and how it was recognised."""

    student: str  # the LMS's id: Canvas user id, Moodle participant id (``fit`` to ID_MAX)
    name: str  # the name the LMS gave (Canvas: "lastfirst"; Moodle: "Full Name")
    path: str  # where it is inside the download
    prefix: str  # the LMS's prefix for this student (for feedback named to upload back)
    filename: str  # the file's own name, as the student uploaded it
    late: bool | None = None  # Canvas marks late submissions; Moodle's names do not say
    renamed: str = ""  # the file's own name when it is not LESSON.ipynb, for the report
    submission: str = ""  # Canvas's submission id (``fit`` to ID_MAX)
    full_id: str = ""  # the LMS's whole id when ``student`` had to be shortened (``fit``)


@dataclass
class Collected:
    """What was found in a download: one notebook per student, and everything else."""

    source: str
    lesson: str
    found: list[Found] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # no rule matched, or a link; with why
    extra: list[str] = field(default_factory=list)  # a student's other files, not graded
    # Entries not read, or not graded, for what they are: a name that cannot be decoded, is
    # unsafe or is in the zip twice; over a size cap; damaged. Each "path: why".
    refused: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


class Refused(Exception):
    """Why one entry of a download cannot be used; the others go on."""


@dataclass
class _Entry:
    """One file of a download: its path (printable), and how to read it or why not to."""

    path: str
    open: Callable[[int], BinaryIO] | None = None  # given the cap for one entry; None: not read
    problem: str = ""  # why it is not read
    link: bool = False  # a folder download's symbolic link: listed, never followed


# What reading a damaged zip entry raises: a bad CRC or header, a truncated or corrupt
# stream, an unsupported method or an encrypted entry, a local name that cannot be decoded.
_DAMAGED = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError)
_DAMAGED += (NotImplementedError, RuntimeError)


@contextlib.contextmanager
def _entries(download: Path) -> Iterator[list[_Entry]]:
    """The download's files, junk left out, each readable while the context is open."""
    if download.is_dir():
        yield _folder_entries(download)
    elif zipfile.is_zipfile(download):
        with _open_zip(download) as (archive, problems, shown):
            yield _zip_entries(archive, problems, shown)
    elif download.exists():
        raise LmsError(f"{download} is neither a folder nor a zip file")
    else:
        raise LmsError(f"{download} does not exist")


def _junk(path: str) -> bool:
    return any(j in path for j in JUNK)


def _folder_entries(root: Path) -> list[_Entry]:
    entries = []
    for p in sorted(root.rglob("*")):
        path = p.relative_to(root).as_posix()
        if _junk(path):
            continue
        if grading_files.linked(p, root) is not None:  # a link is never followed: listed
            entries.append(_Entry(path, link=True))
        elif p.is_dir():
            continue
        elif not stat.S_ISREG(p.lstat().st_mode):
            entries.append(_Entry(path, problem="not a regular file (a pipe or a device)"))
        else:
            entries.append(_Entry(path, open=_folder_opener(p)))
    return entries


def _folder_opener(path: Path) -> Callable[[int], BinaryIO]:
    def open_file(cap: int) -> BinaryIO:
        # A folder's sizes are the file system's own, not an archive's claim: a file over
        # the cap is refused unread, and one under it is held whole (at most the cap).
        size = path.lstat().st_size
        if size > cap:
            raise Refused(_over_entry_cap(cap, f"is {size:,} bytes"))
        return io.BytesIO(grading_files.read_bytes(path))

    return open_file


def _zip_entries(archive: zipfile.ZipFile, problems: dict[int, str], shown: dict[int, str]):
    infos = archive.infolist()
    copies = Counter(PurePosixPath(i.filename).as_posix() for i in infos if not i.is_dir())
    entries = []
    for index, info in enumerate(infos):
        if info.is_dir():
            continue
        name = PurePosixPath(info.filename)
        path = shown.get(index, name.as_posix())
        if _junk(path):
            continue
        problem = problems.get(index, "")
        if not problem and (name.is_absolute() or ".." in name.parts):
            problem = "an absolute path, or one through '..': not read, the zip is unsafe"
        elif not problem and copies[name.as_posix()] > 1:
            problem = (
                f"the zip holds {copies[name.as_posix()]} entries of this name, and which one "
                "the LMS meant cannot be told: none is read; download the submissions again"
            )
        opener = None if problem else (lambda _cap, info=info: archive.open(info))
        entries.append(_Entry(path, open=opener, problem=problem))
    return entries


@contextlib.contextmanager
def _open_zip(download: Path):
    """The zip, and what its listing holds that the zipfile module cannot list.

    ``zipfile.ZipFile`` stops on the first entry whose name is flagged UTF-8 but is not, or
    that needs a newer zip version than it reads: one entry would stop the whole download.
    Those entries are found by reading the central directory here, and the zip is listed
    through a view where their flag and version are ones zipfile accepts; they are then
    refused by index (``problems``), with their raw name shown escaped (``shown``).
    """
    with download.open("rb") as raw:
        try:
            archive, problems, shown = _listed(raw)
        except zipfile.BadZipFile as err:
            raise LmsError(f"{download} is a damaged zip file ({err}): download it again") from None
        with archive:
            yield archive, problems, shown


def _listed(raw: BinaryIO) -> tuple[zipfile.ZipFile, dict[int, str], dict[int, str]]:
    try:
        return zipfile.ZipFile(raw), {}, {}
    except (UnicodeDecodeError, NotImplementedError):
        start, directory = _central_directory(raw)
        patched, problems, shown = _repaired_directory(directory)
        return zipfile.ZipFile(_PatchedRegion(raw, start, patched)), problems, shown


def _central_directory(f: BinaryIO) -> tuple[int, bytes]:
    """Where the zip's central directory starts, and its bytes, found as zipfile finds them."""
    f.seek(0, io.SEEK_END)
    size = f.tell()
    tail_start = max(0, size - (22 + 0xFFFF))  # the end record, and a comment of up to 64 KiB
    f.seek(tail_start)
    tail = f.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise zipfile.BadZipFile("no end of central directory record")
    (directory_size,) = struct.unpack_from("<L", tail, at + 12)
    end = tail_start + at
    if at >= 20 and tail[at - 20 : at - 16] == b"PK\x06\x07":  # a Zip64 locator
        f.seek(end - 20 - 56)
        record = f.read(56)
        if record[:4] == b"PK\x06\x06":
            (directory_size,) = struct.unpack_from("<Q", record, 40)
            end -= 20 + 56
    f.seek(end - directory_size)
    return end - directory_size, f.read(directory_size)


def _repaired_directory(directory: bytes) -> tuple[bytes, dict[int, str], dict[int, str]]:
    """The central directory with what zipfile refuses neutralised, and which entries those were."""
    patched = bytearray(directory)
    problems: dict[int, str] = {}
    shown: dict[int, str] = {}
    pos = index = 0
    while pos + 46 <= len(directory) and directory[pos : pos + 4] == b"PK\x01\x02":
        version, flags = directory[pos + 6], struct.unpack_from("<H", directory, pos + 8)[0]
        name_len, extra_len, comment_len = struct.unpack_from("<3H", directory, pos + 28)
        raw = directory[pos + 46 : pos + 46 + name_len]
        if flags & 0x800:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError:
                shown[index] = raw.decode("utf-8", "backslashreplace")
                problems[index] = (
                    "its name is marked UTF-8 but is not (a damaged or hand-made zip): not "
                    "read; download the submissions again"
                )
                struct.pack_into("<H", patched, pos + 8, flags & ~0x800)
        if version > zipfile.MAX_EXTRACT_VERSION:
            problems[index] = (
                f"needs zip version {version / 10:.1f}, newer than is read: not read; "
                "download the submissions again"
            )
            patched[pos + 6] = 20
        pos += 46 + name_len + extra_len + comment_len
        index += 1
    return bytes(patched), problems, shown


class _PatchedRegion(io.RawIOBase):
    """A file read as it is, except ``len(patched)`` bytes from ``start``, read from ``patched``."""

    def __init__(self, f: BinaryIO, start: int, patched: bytes):
        self._f, self._start, self._patched = f, start, patched

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def readinto(self, buffer) -> int:
        at = self._f.tell()
        n = self._f.readinto(buffer)
        low, high = max(at, self._start), min(at + n, self._start + len(self._patched))
        if low < high:
            view = memoryview(buffer).cast("B")
            view[low - at : high - at] = self._patched[low - self._start : high - self._start]
        return n


def _over_entry_cap(cap: int, what: str = "expands") -> str:
    return (
        f"{what}, past {cap:,} bytes, the cap for one notebook: not graded; a genuine "
        "notebook that large can be cleared of its outputs and submitted again"
    )


def name_match(filename: str, lesson: str) -> int:
    """0: ``LESSON.ipynb``; 1: the lesson's name renamed by a copy or a download; 2: other."""
    stem = PurePosixPath(filename).stem
    if stem == lesson:
        return 0
    for pattern in RENAMES:
        stem = pattern.sub("", stem).strip()
    return 1 if stem == lesson else 2


def _resubmission(filename: str) -> int:
    """Canvas's ``-N`` suffix: the higher, the later the upload."""
    match = re.search(r"-(\d+)\.ipynb$", filename)
    return int(match.group(1)) if match else 0


def stage(
    download: Path,
    source: str,
    lesson: str,
    into: Path,
    entry_cap: int | None = None,
    total_cap: int | None = None,
) -> Collected:
    """Write the download's notebooks in nbgrader's layout (``into/<id>/<lesson>/<lesson>.ipynb``).

    Each entry is judged on its own: one that cannot be read, or is over a cap, is listed in
    ``refused`` and the others are staged. Only each student's chosen notebook is expanded,
    streamed to disk and counted as it goes (caps: ``ENTRY_CAP`` and ``TOTAL_CAP``).
    """
    if source not in SOURCES:
        raise LmsError(f"unknown LMS {source!r}; choose one of {', '.join(SOURCES)}")
    caps = _Caps(
        ENTRY_CAP if entry_cap is None else entry_cap,
        TOTAL_CAP if total_cap is None else total_cap,
    )
    collected = Collected(source, lesson)
    with _entries(download) as entries:
        if not entries:
            raise LmsError(f"{download} holds no files")
        candidates = _candidates(entries, collected)
        for student, chosen, entry in _chosen(candidates, lesson, collected):
            target = into / student / lesson / f"{lesson}.ipynb"
            try:
                caps.used += _copy(entry, target, caps)
            except Refused as why:
                shutil.rmtree(into / student, ignore_errors=True)
                collected.refused.append(f"{entry.path}: {why} (student {student})")
                continue
            collected.found.append(chosen)
    if not collected.found:
        raise LmsError(
            f"no {source} submission found in {download}: is it a {source} download, and "
            f"is --from right? {len(collected.unmatched)} files did not match, "
            f"{len(collected.refused)} were refused"
            + "".join(f"\n  {r}" for r in collected.refused[:10])
        )
    return collected


def collect(
    download: Path, source: str, lesson: str, **caps: int
) -> tuple[Collected, dict[str, bytes]]:
    """What ``stage`` finds, with each graded notebook's bytes (for a download small enough
    to hold in memory; the grade command stages to disk)."""
    with tempfile.TemporaryDirectory(prefix="lms-") as folder:
        collected = stage(download, source, lesson, Path(folder), **caps)
        contents = {
            f.student: (Path(folder) / f.student / lesson / f"{lesson}.ipynb").read_bytes()
            for f in collected.found
        }
    return collected, contents


@dataclass
class _Caps:
    entry: int
    total: int
    used: int = 0  # bytes expanded so far, across the download


def _candidates(entries: list[_Entry], collected: Collected) -> dict[str, list]:
    """Student -> [(Found, entry)] of their notebooks; everything else listed in ``collected``."""
    source = collected.source
    candidates: dict[str, list[tuple[Found, _Entry]]] = {}
    for entry in entries:
        if entry.link:
            collected.unmatched.append(f"{entry.path}: a symbolic link, not read")
            continue
        if entry.problem:
            collected.refused.append(f"{entry.path}: {entry.problem}")
            continue
        found = _match(entry.path, source)
        if found is None:
            rule = (
                "name_[LATE_]userid_submissionid_file"
                if source == CANVAS
                else ("Full Name_id_assignsubmission_file_/file")
            )
            collected.unmatched.append(
                f"{entry.path}: not named as {source} names downloads ({rule})"
            )
            continue
        if not entry.path.endswith(".ipynb"):
            collected.extra.append(f"{entry.path}: not a notebook (student {found.student})")
            continue
        candidates.setdefault(found.student, []).append((found, entry))
    return candidates


def _chosen(candidates: dict[str, list], lesson: str, collected: Collected):
    """Each student's notebook to grade, by name alone (nothing is expanded to choose)."""
    for student, entries in sorted(candidates.items()):
        chosen, entry = _choose(entries, lesson)
        for found, _ in entries:
            if found is not chosen:
                collected.extra.append(
                    f"{found.path}: another notebook of student {student}; graded "
                    f"{chosen.filename} instead"
                )
        if name_match(chosen.filename, lesson):
            chosen.renamed = chosen.filename
        yield student, chosen, entry


def _copy(entry: _Entry, target: Path, caps: _Caps) -> int:
    """Stream one entry to ``target``, counting bytes; ``Refused`` past a cap or if damaged."""
    limit = min(caps.entry, caps.total - caps.used)
    target.parent.mkdir(parents=True, exist_ok=True)
    copied = 0
    with _reading(entry, caps) as source, target.open("wb") as out:
        while True:
            with _damaged_entry():
                chunk = source.read(min(CHUNK, limit + 1 - copied))
            if not chunk:
                return copied
            copied += len(chunk)
            if copied > limit:
                raise Refused(_over_cap(caps, limit))
            out.write(chunk)


@contextlib.contextmanager
def _reading(entry: _Entry, caps: _Caps) -> Iterator[BinaryIO]:
    with _damaged_entry():
        source = entry.open(caps.entry)
    with source:
        yield source


@contextlib.contextmanager
def _damaged_entry():
    """A failure to read one entry refuses that entry, never the whole download."""
    try:
        yield
    except grading_files.NotAFile as err:
        raise Refused(f"{err}: not read") from None
    except _DAMAGED as err:
        raise Refused(
            f"damaged or unreadable ({type(err).__name__}): not graded; download the "
            "submissions again, or ask the student to submit again"
        ) from None


def _over_cap(caps: _Caps, limit: int) -> str:
    if limit < caps.entry:
        return (
            f"not graded: the download's notebooks together expand past {caps.total:,} bytes, "
            "the cap for one download; grade this student from a download of fewer students"
        )
    return _over_entry_cap(caps.entry)


def _choose(entries: list[tuple[Found, _Entry]], lesson: str) -> tuple[Found, _Entry]:
    """The notebook to grade: one named after the lesson (renamed or not) before any other,
    then the latest resubmission (Canvas's highest ``-N``)."""
    return min(
        entries,
        key=lambda e: (name_match(e[0].filename, lesson) == 2, -_resubmission(e[0].filename)),
    )


def _match(path: str, source: str) -> Found | None:
    """The student a download's path names, their ids ``fit`` for file names."""
    parts = PurePosixPath(path).parts
    if source == CANVAS:
        match = CANVAS_NAME.match(parts[-1])
        if match is None:
            return None
        student, submission = fit(match["user"], ID_MAX), fit(match["submission"], ID_MAX)
        late = "_LATE" if match["late"] else ""
        return Found(
            student=student,
            name=match["name"],
            path=path,
            prefix=f"{fit(match['name'], NAME_MAX)}{late}_{student}_{submission}_",
            filename=match["filename"],
            late=bool(late),
            submission=submission,
            full_id=match["user"] if student != match["user"] else "",
        )
    # Moodle: the prefix is a folder ("Full Name_id_assignsubmission_file_/nb.ipynb") or on
    # the file itself ("Full Name_id_assignsubmission_file_nb.ipynb").
    for i, part in enumerate(parts):
        match = MOODLE_NAME.match(part)
        if match is None:
            continue
        own = "/".join(parts[i + 1 :]) if i + 1 < len(parts) else match["filename"]
        if not own:
            return None
        student = fit(match["user"], ID_MAX)
        plugin = fit(match["plugin"], PLUGIN_MAX)
        return Found(
            student=student,
            name=match["name"],
            path=path,
            prefix=f"{fit(match['name'], NAME_MAX)}_{student}_assignsubmission_{plugin}_",
            filename=PurePosixPath(own).name,
            full_id=match["user"] if student != match["user"] else "",
        )
    return None


def report(collected: Collected) -> str:
    """A few lines for the instructor: what was matched, renamed, late, left out."""
    lines = [
        f"{collected.source}: {len(collected.found)} students' notebooks for {collected.lesson}"
    ]
    late = [f.student for f in collected.found if f.late]
    renamed = [f"{f.student}: {f.renamed}" for f in collected.found if f.renamed]
    if late:
        lines.append(f"  late ({len(late)}): {', '.join(late)}")
    if renamed:
        lines.append(f"  renamed ({len(renamed)}): {'; '.join(renamed)}")
    shortened = [
        f"{f.student} (the LMS id is {len(f.full_id)} characters)"
        for f in collected.found
        if f.full_id
    ]
    if shortened:
        lines.append(f"  ids too long for a file name, shortened ({len(shortened)}):")
        lines += [f"    {item}" for item in shortened]
    for title, items in (
        ("not graded", collected.extra),
        ("unmatched", collected.unmatched),
        ("refused", collected.refused),
    ):
        if items:
            lines.append(f"  {title} ({len(items)}):")
            lines += [f"    {item}" for item in items]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Out: gradebooks and feedback


@dataclass
class GradebookOutcome:
    path: Path
    filled: int
    not_in_gradebook: list[str]  # graded students the gradebook has no row for
    no_grade: list[str]  # gradebook rows with no graded submission (left as they were)
    not_graded: list[str] = field(default_factory=list)  # grader errors: their cells left empty


def fill_canvas_gradebook(
    export: Path, results: list[dict], lesson: str, out: Path, column: str | None = None
) -> GradebookOutcome:
    """Fill the lesson's column of a Canvas gradebook export, scaled to its points possible.

    Rows are matched by Canvas's user ``ID`` (the id in the download's file names). The file
    written keeps Canvas's identity columns and the one assignment column, which is what
    Canvas's "Import" reads; the other assignments are left untouched there.
    """
    with export.open(newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    if not rows or "ID" not in rows[0]:
        raise LmsError(f"{export} is not a Canvas gradebook export (no ID column)")
    header = rows[0]
    target = _canvas_column(header, lesson, column, export)
    identity = [
        c for c in ("Student", "ID", "SIS User ID", "SIS Login ID", "Section") if c in header
    ]
    keep = [header.index(c) for c in identity] + [target]
    by_id = {r["student"]: r for r in results if r["assignment"] == lesson}
    written, seen, filled, no_grade = [[header[i] for i in keep]], set(), 0, []
    not_graded: list[str] = []
    points = _points_possible(rows, header, target)
    for row in rows[1:]:
        row = row + [""] * (len(header) - len(row))
        if row[0].strip() in ("Points Possible", "Manual Posting") or not row[header.index("ID")]:
            written.append([row[i] for i in keep])  # Canvas's own header rows go back as they are
            continue
        result = by_id.get(fit(row[header.index("ID")].strip(), ID_MAX))  # as staged
        if result is None:
            no_grade.append(f"{row[0]} ({row[header.index('ID')]})")
        elif result["score"] is None:  # a grader error: no grade, and no 0 either
            seen.add(result["student"])
            row[target] = ""
            not_graded.append(result["student"])
        else:
            seen.add(result["student"])
            scale = points / result["max_score"] if points and result["max_score"] else 1.0
            row[target] = f"{result['score'] * scale:g}"
            filled += 1
        written.append([row[i] for i in keep])
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(written)
    return GradebookOutcome(out, filled, sorted(set(by_id) - seen), no_grade, not_graded)


def _canvas_column(header: list[str], lesson: str, column: str | None, export: Path) -> int:
    if column is not None:
        if column not in header:
            raise LmsError(f"{export} has no column {column!r}")
        return header.index(column)
    matches = [i for i, c in enumerate(header) if lesson in c]
    if len(matches) != 1:
        named = ", ".join(repr(header[i]) for i in matches) or "none"
        raise LmsError(
            f"{export}: {len(matches)} columns name {lesson} ({named}); choose one with "
            "--canvas-column"
        )
    return matches[0]


def _points_possible(rows: list[list[str]], header: list[str], target: int) -> float:
    for row in rows[1:3]:
        if row and row[0].strip() == "Points Possible" and len(row) > target:
            try:
                return float(row[target])
            except ValueError:
                return 0.0
    return 0.0


MOODLE_ID = re.compile(r"(\d+)$")


def fill_moodle_worksheet(
    worksheet: Path, results: list[dict], lesson: str, out: Path
) -> GradebookOutcome:
    """Fill Moodle's offline grading worksheet: Grade (scaled to Maximum Grade) and feedback.

    Rows are matched by the number in ``Identifier`` ("Participant 123"), the id in the
    download's folder names. Moodle's "Upload grading worksheet" reads the file written.
    """
    with worksheet.open(newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        fields = list(reader.fieldnames or [])
        rows = list(reader)
    needed = {"Identifier", "Grade"}
    if not needed <= set(fields):
        raise LmsError(f"{worksheet} is not a Moodle grading worksheet (needs {sorted(needed)})")
    if "Feedback comments" not in fields:
        fields.append("Feedback comments")
    by_id = {r["student"]: r for r in results if r["assignment"] == lesson}
    seen, filled, no_grade = set(), 0, []
    not_graded: list[str] = []
    for row in rows:
        match = MOODLE_ID.search(row["Identifier"].strip())
        result = by_id.get(fit(match.group(1), ID_MAX)) if match else None  # as staged
        if result is None:
            no_grade.append(f"{row.get('Full name', '')} ({row['Identifier']})")
            continue
        seen.add(result["student"])
        if result["score"] is None:  # a grader error: no grade, and no 0 either
            row["Grade"] = ""
            row["Feedback comments"] = ""
            not_graded.append(result["student"])
            continue
        try:
            maximum = float(row.get("Maximum Grade") or result["max_score"])
        except ValueError:
            maximum = result["max_score"]
        scale = maximum / result["max_score"] if result["max_score"] else 1.0
        row["Grade"] = f"{result['score'] * scale:.2f}"
        row["Feedback comments"] = _feedback_text(result)
        filled += 1
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return GradebookOutcome(out, filled, sorted(set(by_id) - seen), no_grade, not_graded)


def _feedback_text(result: dict) -> str:
    lines = [f"{result['score']:g} / {result['max_score']:g} ({result['status']})"]
    for t in result.get("tests", []):
        if not t.get("passed"):
            lines.append(
                f"{t['exercise']}: {(t.get('misconception') or t.get('message') or '')[:300]}"
            )
    return "\n".join(lines)


def write_feedback(collected: Collected, out: Path) -> Path:
    """Each student's feedback named as the LMS names their upload, zipped for bulk upload.

    Canvas matches a re-uploaded file by its ``name_userid_submissionid_`` prefix, Moodle's
    "Upload multiple feedback files in a zip" by the participant's folder.
    """
    lesson = collected.lesson
    folder = out / "lms" / "feedback"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for found in collected.found:
        html = out / "feedback" / found.student / lesson / f"{lesson}.html"
        if not html.is_file():
            continue
        if collected.source == CANVAS:
            target = folder / f"{found.prefix}{lesson}_feedback.html"
        else:
            target = folder / found.prefix / f"{lesson}_feedback.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(html, target)
    archive = out / "lms" / "feedback.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                z.write(path, path.relative_to(folder).as_posix())
    archive.write_bytes(buffer.getvalue())
    return archive
