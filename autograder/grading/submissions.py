"""Find every (student, assignment) pair in a submissions folder and say whether it can be graded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder import course, notebook
from autograder.grading import files
from autograder.grading.status import Status

OK, MISSING, INVALID = Status.OK, Status.MISSING, Status.INVALID
WRONG_ASSIGNMENT = Status.WRONG_ASSIGNMENT


@dataclass
class Submission:
    student: str
    assignment: str
    path: Path | None  # the notebook to grade; None when there is nothing gradable
    status: str  # OK when gradable, else why not
    message: str = ""


def grade_ids(lesson: str) -> set[str]:
    """The test-cell ids of a lesson, from its solution notebook."""
    return {ex.test_id for ex in course.exercises(lesson)}


def max_points(lesson: str) -> float:
    """The points a lesson is worth."""
    return sum(ex.points for ex in course.exercises(lesson))


def _ids_in(nb) -> set[str]:
    return {notebook.nbgrader_meta(c).get("grade_id") for c in nb.cells} - {None}


def inspect(student: str, assignment: str, folder: Path) -> Submission:
    """Decide what to grade in ``folder`` (``SUBMISSIONS/<student>/<assignment>``)."""
    link = files.linked(folder, folder.parent.parent)
    if link is not None:  # a student's or assignment's folder that points elsewhere
        why = f"{link.name}/ is a symbolic link: submit the notebook itself"
        return Submission(student, assignment, None, INVALID, why)
    entries = sorted(folder.iterdir()) if folder.is_dir() else []
    links = [p for p in entries if p.is_symlink()]
    found = [p for p in entries if p.is_file() and not p.is_symlink()]
    if not found and links:
        names = ", ".join(p.name for p in links[:5])
        return Submission(
            student, assignment, None, INVALID, f"only symbolic links, not files: {names}"
        )
    if not found:
        return Submission(student, assignment, None, MISSING, _nothing_in(folder))
    expected = folder / f"{assignment}.ipynb"
    notebooks = [p for p in found if p.suffix == ".ipynb"]
    if expected in links:
        why = files.why_not_a_notebook(
            expected.name, files.NotAFile(f"{expected.name} is a symbolic link")
        )
        return Submission(student, assignment, None, INVALID, why)
    if expected in found:
        path = expected
    elif len(notebooks) == 1:
        path = notebooks[0]  # renamed by the student: still theirs to grade
    elif not notebooks:
        names = ", ".join(p.name for p in found[:5])
        return Submission(student, assignment, None, INVALID, f"no notebook, only: {names}")
    else:
        names = ", ".join(p.name for p in notebooks)
        return Submission(
            student,
            assignment,
            None,
            INVALID,
            f"several notebooks, none named {expected.name}: {names}",
        )
    try:
        nb = read_notebook(path)
    except Exception as err:  # nbformat raises several validation error types
        why = files.why_not_a_notebook(path.name, err)  # never the file's own bytes
        return Submission(student, assignment, None, INVALID, why)
    ids = _ids_in(nb)
    own = grade_ids(assignment)
    if ids and not ids & own:
        other = next((lesson for lesson in course.lessons() if ids & grade_ids(lesson)), None)
        if other:
            return Submission(
                student,
                assignment,
                None,
                WRONG_ASSIGNMENT,
                f"{path.name} is the notebook of {other}",
            )
    return Submission(student, assignment, path, OK)


def read_notebook(path: Path):
    """A submitted notebook, read without following a link (``files.NotAFile`` if it is one)."""
    return nbformat.reads(files.read_bytes(path).decode("utf-8"), as_version=4)


def _nothing_in(folder: Path) -> str:
    """Why nothing was found, naming notebooks that sit elsewhere in the student's folder."""
    student = folder.parent
    lessons = set(course.lessons())
    elsewhere = sorted(
        str(p.relative_to(student))
        for p in student.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts and p.relative_to(student).parts[0] not in lessons
    )
    if not elsewhere:
        return "no files were submitted"
    return (
        f"nothing in {folder.name}/, but the student's folder has {', '.join(elsewhere[:5])}: "
        f"move it to {student.name}/{folder.name}/{folder.name}.ipynb to have it graded"
    )


# Folders in a submissions download that are not students: a Mac zip's resource forks.
NOT_STUDENTS = {"__MACOSX"}


def discover(root: Path, assignments: list[str] | None) -> list[Submission]:
    """Every student folder crossed with every assignment asked for (or found)."""
    students = sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith(".") and p.name not in NOT_STUDENTS
        # a link to a folder is listed too, and judged (invalid) by inspect
    )
    if assignments is None:
        found = {a.name for s in students for a in (root / s).iterdir() if a.is_dir()}
        assignments = [lesson for lesson in course.lessons() if lesson in found]
    return [inspect(s, a, root / s / a) for s in students for a in assignments]
