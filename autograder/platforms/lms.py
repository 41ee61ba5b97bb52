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
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

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


class LmsError(ValueError):
    """The download cannot be read at all (not a zip, not a folder, nothing in it)."""


@dataclass
class Found:
    """One student's notebook in the download, and how it was recognised."""

    student: str  # the LMS's id: Canvas user id, Moodle participant id
    name: str  # the name the LMS gave (Canvas: "lastfirst"; Moodle: "Full Name")
    path: str  # where it is inside the download
    prefix: str  # the LMS's prefix for this student (for feedback named to upload back)
    filename: str  # the file's own name, as the student uploaded it
    late: bool | None = None  # Canvas marks late submissions; Moodle's names do not say
    renamed: str = ""  # the file's own name when it is not LESSON.ipynb, for the report
    submission: str = ""  # Canvas's submission id


@dataclass
class Collected:
    """What was found in a download: one notebook per student, and everything else."""

    source: str
    lesson: str
    found: list[Found] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # files no rule matched, with why
    extra: list[str] = field(default_factory=list)  # a student's other files, not graded

    def to_dict(self) -> dict:
        return asdict(self)


def _members(download: Path) -> dict[str, bytes | Path | _Link]:
    """Relative path -> content (bytes from a zip, a Path in a folder), junk left out."""
    if download.is_dir():  # a link is never followed: it is listed, with no content
        files = {
            p.relative_to(download).as_posix(): LINK if p.is_symlink() else p
            for p in sorted(download.rglob("*"))
            if p.is_file() or p.is_symlink()
        }
    elif zipfile.is_zipfile(download):
        with zipfile.ZipFile(download) as archive:
            files = {}
            for info in archive.infolist():
                if info.is_dir():
                    continue
                name = PurePosixPath(info.filename)
                if name.is_absolute() or ".." in name.parts:
                    raise LmsError(f"{download} holds an unsafe path: {info.filename!r}")
                files[name.as_posix()] = archive.read(info)
    elif download.exists():
        raise LmsError(f"{download} is neither a folder nor a zip file")
    else:
        raise LmsError(f"{download} does not exist")
    return {k: v for k, v in files.items() if not any(j in k for j in JUNK)}


class _Link:
    """What a folder download's symbolic link stands for in ``_members``: not read, listed."""


LINK = _Link()


def _read(content: bytes | Path) -> bytes:
    return grading_files.read_bytes(content) if isinstance(content, Path) else content


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


def collect(download: Path, source: str, lesson: str) -> tuple[Collected, dict[str, bytes]]:
    """Match a download's files to students; return what was found and each notebook's bytes."""
    if source not in SOURCES:
        raise LmsError(f"unknown LMS {source!r}; choose one of {', '.join(SOURCES)}")
    members = _members(download)
    if not members:
        raise LmsError(f"{download} holds no files")
    collected = Collected(source, lesson)
    candidates: dict[str, list[tuple[Found, bytes]]] = {}
    for path, content in members.items():
        if content is LINK:
            collected.unmatched.append(f"{path}: a symbolic link, not read")
            continue
        found = _match(path, source)
        if found is None:
            rule = (
                "name_[LATE_]userid_submissionid_file"
                if source == CANVAS
                else ("Full Name_id_assignsubmission_file_/file")
            )
            collected.unmatched.append(f"{path}: not named as {source} names downloads ({rule})")
            continue
        if not path.endswith(".ipynb"):
            collected.extra.append(f"{path}: not a notebook (student {found.student})")
            continue
        candidates.setdefault(found.student, []).append((found, _read(content)))
    contents = {}
    for student, entries in sorted(candidates.items()):
        chosen, content = _choose(entries, lesson)
        for found, _ in entries:
            if found is not chosen:
                collected.extra.append(
                    f"{found.path}: another notebook of student {student}; graded "
                    f"{chosen.filename} instead"
                )
        if name_match(chosen.filename, lesson):
            chosen.renamed = chosen.filename
        collected.found.append(chosen)
        contents[student] = content
    if not collected.found:
        raise LmsError(
            f"no {source} submission found in {download}: is it a {source} download, and "
            f"is --from right? {len(collected.unmatched)} files did not match"
        )
    return collected, contents


def _choose(entries: list[tuple[Found, bytes]], lesson: str) -> tuple[Found, bytes]:
    """The notebook to grade: one named after the lesson (renamed or not) before any other,
    then the latest resubmission (Canvas's highest ``-N``)."""
    return min(
        entries,
        key=lambda e: (name_match(e[0].filename, lesson) == 2, -_resubmission(e[0].filename)),
    )


def _match(path: str, source: str) -> Found | None:
    parts = PurePosixPath(path).parts
    if source == CANVAS:
        match = CANVAS_NAME.match(parts[-1])
        if match is None:
            return None
        prefix = parts[-1][: match.start("filename")]
        return Found(
            student=match["user"],
            name=match["name"],
            path=path,
            prefix=prefix,
            filename=match["filename"],
            late=bool(match["late"]),
            submission=match["submission"],
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
        return Found(
            student=match["user"],
            name=match["name"],
            path=path,
            prefix=part[: match.start("filename")],
            filename=PurePosixPath(own).name,
        )
    return None


def stage(download: Path, source: str, lesson: str, into: Path) -> Collected:
    """Write the download's notebooks in nbgrader's layout (``into/<id>/<lesson>/<lesson>.ipynb``)."""
    collected, contents = collect(download, source, lesson)
    for found in collected.found:
        folder = into / found.student / lesson
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{lesson}.ipynb").write_bytes(contents[found.student])
    return collected


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
    for title, items in (("not graded", collected.extra), ("unmatched", collected.unmatched)):
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
        result = by_id.get(row[header.index("ID")].strip())
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
        result = by_id.get(match.group(1)) if match else None
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
