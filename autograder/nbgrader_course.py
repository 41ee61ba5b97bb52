"""Real nbgrader autograding of submissions, in a scratch course directory.

The scratch course holds the lesson's solution notebook as nbgrader's source, a fresh
gradebook, and ``submitted/<student>/<lesson>/<lesson>.ipynb``; nbgrader then generates,
autogrades and records scores exactly as it would for an instructor.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder import course
from autograder.execute import kernel_env

CONFIG_TEMPLATE = """\
# An nbgrader course written by the course's grader; nbgrader and formgrader can open it.
from autograder.nbgrader_settings import configure
c = get_config()
configure(c)
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = {db_url!r}
"""


class AutogradeError(RuntimeError):
    """nbgrader itself failed (not a student's code)."""


@dataclass
class Grade:
    grade_id: str  # the test cell's id, e.g. "test_to_nchw"
    score: float
    max_score: float


def make_course(lesson: str, workdir: Path, solutions: Path | None = None) -> Path:
    """Lay out a scratch nbgrader course for ``lesson`` in ``workdir``; return its root."""
    solutions = course.SOLUTIONS if solutions is None else solutions
    root = workdir / "course"
    shutil.copytree(solutions / lesson, root / "source" / lesson)
    write_config(root)
    return root


def write_config(root: Path) -> None:
    """The ``nbgrader_config.py`` of the course at ``root``: the course's settings, its gradebook."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(
        CONFIG_TEMPLATE.format(root=str(root), db_url=f"sqlite:///{root / 'gradebook.db'}")
    )


def course_config(root: Path):
    """The traitlets config of the nbgrader course at ``root``, for nbgrader's in-process API."""
    from traitlets.config import Config

    from autograder.nbgrader_settings import configure

    config = Config()
    configure(config)
    config.CourseDirectory.root = str(root)
    config.CourseDirectory.db_url = f"sqlite:///{root / 'gradebook.db'}"
    return config


def run_nbgrader(root: Path, *args: str) -> None:
    """Run an nbgrader command in the course folder ``root``; raise with its stderr on failure."""
    env = kernel_env()
    # The course config imports autograder: find it even where the checkout is not on the path.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(course.ROOT), env.get("PYTHONPATH")]))
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise AutogradeError(f"nbgrader {' '.join(args)} failed:\n{result.stderr[-4000:]}")


def autograde(
    lesson: str, submissions: dict[str, Path], workdir: Path, solutions: Path | None = None
) -> dict[str, list[Grade]]:
    """Autograde each student's notebook for ``lesson``; return their grades per test cell."""
    from nbgrader.api import Gradebook

    root = make_course(lesson, workdir, solutions)
    run_nbgrader(root, "generate_assignment", lesson, "--force")
    for student, path in submissions.items():
        target = root / "submitted" / student / lesson / f"{lesson}.ipynb"
        target.parent.mkdir(parents=True)
        shutil.copy(path, target)
    run_nbgrader(root, "autograde", lesson, "--force")
    grades: dict[str, list[Grade]] = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        for student in submissions:
            nb = gradebook.find_submission_notebook(lesson, lesson, student)
            grades[student] = [
                Grade(g.name, float(g.score), float(g.max_score))
                for g in nb.grades
                if g.cell.max_score  # written-answer cells have no autograded score
            ]
    return grades


def autograded_notebook(workdir: Path, lesson: str, student: str) -> Path:
    """Where nbgrader wrote a student's executed, graded notebook."""
    return workdir / "course" / "autograded" / student / lesson / f"{lesson}.ipynb"
