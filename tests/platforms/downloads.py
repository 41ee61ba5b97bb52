"""Build Canvas and Moodle submission downloads as each LMS names them, with the usual noise."""

from __future__ import annotations

import zipfile
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
