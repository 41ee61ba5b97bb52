"""Build Canvas and Moodle submission downloads as each LMS names them, with the usual noise."""

from __future__ import annotations

import functools
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Upload:
    user: str  # the LMS's id: Canvas user id, Moodle participant id
    name: str  # Canvas "lastfirst", Moodle "Full Name"
    filename: str  # what the student uploaded
    content: bytes
    late: bool = False
    submission: str = "900"


def canvas_zip(path: Path, uploads: list[Upload], strays: dict[str, bytes] | None = None) -> Path:
    """Canvas's "Download Submissions": name[_LATE]_userid_submissionid_filename, flat."""
    with zipfile.ZipFile(path, "w") as z:
        for u in uploads:
            late = "_LATE" if u.late else ""
            z.writestr(f"{u.name}{late}_{u.user}_{u.submission}_{u.filename}", u.content)
        for name, content in (strays or {}).items():
            z.writestr(name, content)
    return path


def moodle_folder(root: Path, uploads: list[Upload], folders: bool = True) -> Path:
    """Moodle's "Download all submissions", unpacked: one folder per participant (or flat)."""
    root.mkdir(parents=True, exist_ok=True)
    for u in uploads:
        prefix = f"{u.name}_{u.user}_assignsubmission_file_"
        target = root / prefix / u.filename if folders else root / f"{prefix}{u.filename}"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(u.content)
    return root


def canvas_export(path: Path, lesson: str, students: list[tuple[str, str]], points: int) -> Path:
    """A Canvas gradebook export: identity columns, two assignments, a points-possible row."""
    rows = [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Quiz 1 (101)",
         f"{lesson} (202)", "Current Score"],
        ["    Points Possible", "", "", "", "", "10", str(points), "(read only)"],
    ]  # fmt: skip
    for name, user in students:
        rows.append([name, user, f"sis{user}", f"login{user}", "Section A", "7", "", "70"])
    path.write_text("\n".join(",".join(f'"{c}"' for c in row) for row in rows) + "\n")
    return path


def moodle_worksheet(path: Path, students: list[tuple[str, str]], maximum: float) -> Path:
    """Moodle's offline grading worksheet as it downloads."""
    header = (
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Online text,Last modified (grade),Feedback comments"
    )
    lines = [header]
    for name, user in students:
        lines.append(
            f"Participant {user},{name},{user}@example.edu,Submitted for grading,,"
            f'{maximum:.2f},Yes,"Monday, 30 November 2026, 9:00 AM",,-,'
        )
    path.write_text("\n".join(lines) + "\n")
    return path


# ---------------------------------------------------------------------------------------
# Zips no honest LMS writes, built byte by byte: Python's zipfile would refuse to write them.

MIB = 2**20


@dataclass(frozen=True)
class RawEntry:
    name: bytes  # written as is, whether or not it is valid UTF-8
    data: bytes = b""  # stored uncompressed
    zeros_mib: int = 0  # or: this many MiB of zero bytes, deflated (a zip bomb)
    utf8: bool = False  # set the "name is UTF-8" flag (bit 11)
    claims: int | None = None  # the expanded size the headers declare (default: the true one)
    version: int = 20  # "version needed to extract", times ten


@functools.cache  # the same bomb in several entries or tests is built once
def _deflated_zeros(mib: int) -> tuple[bytes, int, int]:
    """(deflate stream, CRC-32, size) of ``mib`` MiB of zeros, without compressing them all.

    One MiB compressed and flushed with ``Z_FULL_FLUSH`` is a run of blocks that refer to
    nothing before them, so the stream for N MiB is that run N times, then the final block.
    """
    zeros = bytes(MIB)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(mib):
        crc = zlib.crc32(zeros, crc)
    return block * mib + compressor.flush(zlib.Z_FINISH), crc, mib * MIB


def raw_zip(path: Path, entries: list[RawEntry]) -> Path:
    """A zip of ``entries`` in order, duplicates and all (no Zip64: keep it under 4 GiB)."""
    body, directory = bytearray(), bytearray()
    for e in entries:
        if e.zeros_mib:
            data, crc, size = _deflated_zeros(e.zeros_mib)
            method = zipfile.ZIP_DEFLATED
        else:
            data, crc, size, method = e.data, zlib.crc32(e.data), len(e.data), zipfile.ZIP_STORED
        size = size if e.claims is None else e.claims
        flags = 0x800 if e.utf8 else 0
        dos_time, dos_date = 0, (2026 - 1980) << 9 | 12 << 5 | 1
        common = (e.version, flags, method, dos_time, dos_date, crc, len(data), size, len(e.name))
        directory += struct.pack("<4s2B5H3L5H2L", b"PK\x01\x02", 20, 3, *common, 0, 0, 0, 0,
                                 0o644 << 16, len(body)) + e.name  # fmt: skip
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", *common, 0) + e.name + data
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(entries), len(entries),
                      len(directory), len(body), 0)  # fmt: skip
    path.write_bytes(bytes(body + directory + end))
    return path
