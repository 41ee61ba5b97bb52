"""Grade the one notebook a platform hands over, with the class grader, as a class of one.

Gradescope and PrairieLearn run a fresh container per submission and give it the student's
files. Here they become ``<work>/submissions/student/<lesson>/<lesson>.ipynb`` and go through
:func:`autograder.grading.run.grade`, so the score is the one ``python -m autograder grade``
gives the same notebook.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder import course
from autograder.grading import files, sandbox
from autograder.grading.run import GradeOptions, UsageError, grade
from autograder.grading.status import Status
from autograder.grading.submissions import max_points
from autograder.grading.worker import Result
from autograder.platforms.lms import name_match

STUDENT = "student"


@dataclass(frozen=True)
class Picked:
    """What a platform's submission folder holds to grade."""

    notebook: Path | None  # None: nothing to grade
    note: str  # for the student: what was graded, what was left out, or why nothing was
    invalid: bool = False  # only symbolic links were submitted: not gradable, never read


def pick_notebook(folder: Path, lesson: str) -> Picked:
    """The notebook to grade among a submission's files, and a note for the student."""
    if not folder.is_dir():
        return Picked(None, f"nothing was submitted (no folder {folder})")
    everything = sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    notebooks = [p for p in everything if files.linked(p, folder) is None]
    links = [str(p.relative_to(folder)) for p in everything if p not in notebooks]
    if links and not notebooks:  # never followed: a link could point at the solution
        return Picked(
            None,
            f"only symbolic links were submitted, not notebooks: {', '.join(links[:5])}; "
            f"upload {lesson}.ipynb itself",
            invalid=True,
        )
    if not notebooks:
        names = ", ".join(sorted(p.name for p in folder.rglob("*") if p.is_file())[:5])
        return Picked(
            None, f"no notebook was submitted ({names or 'no files at all'}): upload {lesson}.ipynb"
        )
    best = min(notebooks, key=lambda p: (name_match(p.name, lesson), len(p.parts), p.name))
    note = "" if best.name == f"{lesson}.ipynb" else f"graded {best.relative_to(folder)}"
    if len(notebooks) > 1 or links:
        others = [str(p.relative_to(folder)) for p in notebooks if p != best]
        others += [f"{link} (a symbolic link)" for link in links]
        note = f"graded {best.relative_to(folder)}; also submitted, not graded: {', '.join(others)}"
    return Picked(best, note)


def find_notebook(folder: Path, lesson: str) -> tuple[Path | None, str]:
    """``pick_notebook``'s notebook and note."""
    picked = pick_notebook(folder, lesson)
    return picked.notebook, picked.note


def not_gradable(lesson: str, status: Status, message: str) -> dict:
    """The row of a submission judged without running it, as the grade command writes one."""
    return Result(STUDENT, lesson, status, 0.0, max_points(lesson), message=message).to_dict()


def grade_notebook(
    notebook: Path | None, lesson: str, work: Path, sandboxed: bool | None = None, **options
) -> dict:
    """The grade command's result row for one notebook (``None``: nothing was submitted)."""
    if lesson not in course.lessons():
        raise ValueError(f"unknown lesson {lesson!r}; lessons: {', '.join(course.lessons())}")
    folder = work / "submissions" / STUDENT / lesson
    folder.mkdir(parents=True, exist_ok=True)
    if notebook is not None:
        (folder / f"{lesson}.ipynb").write_bytes(files.read_bytes(notebook))
    opts = GradeOptions(
        work / "submissions",
        work / "out",
        [lesson],
        jobs=1,
        sandboxed=sandbox.available() if sandboxed is None else sandboxed,
        progress=False,
        **options,
    )
    (row,) = grade(opts)
    return row


class GraderFailed(RuntimeError):
    """The grader could not grade the notebook: the platform must show a failed grading job,
    never a score (a zero the student did not earn would stand)."""


def grade_or_fail(notebook: Path | None, lesson: str, work: Path, **options) -> dict:
    """``grade_notebook``'s row; ``GraderFailed`` for a grader error, whatever its cause."""
    try:
        row = grade_notebook(notebook, lesson, work, **options)
    except (UsageError, OSError, RuntimeError) as err:
        raise GraderFailed(f"{type(err).__name__}: {err}") from err
    if row["status"] == Status.GRADER_ERROR:
        raise GraderFailed(row.get("message") or "the grader failed on this notebook")
    return row


def fail(root: Path, why: str) -> int:
    """End a platform's grading job as failed: no results.json (an old one is removed), the
    reason on the job's log, a non-zero exit. Gradescope and PrairieLearn both show such a
    job as an autograder failure to retry, not as points."""
    (root / "results" / "results.json").unlink(missing_ok=True)
    print(f"The grader failed; no score was given (retry the grading job): {why}", file=sys.stderr)
    return 1


def write_results(root: Path, data: dict) -> Path:
    """Write a platform's ``root/results/results.json`` (where Gradescope and PrairieLearn
    both read it); return its path."""
    out = root / "results" / "results.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1))
    return out
