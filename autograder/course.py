"""Where the course's lessons live and how they are named."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"  # nbgrader's "source" directory: the only hand-edited copy
NOTEBOOKS = ROOT / "notebooks"  # nbgrader's "release" directory: generated, never edited

LESSON_PATTERN = re.compile(r"^(\d\d)_([a-z][a-z0-9_]*)$")

# Where the course is published; the Colab badges point here.
REPO_SLUG = "pytorch-course/pytorch-course"
BRANCH = "main"


def lessons(root: Path | None = None) -> list[str]:
    """Lesson folder names in ``solutions/``, in course order (``00_welcome``, ``01_tensors``...)."""
    root = SOLUTIONS if root is None else root
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and LESSON_PATTERN.match(p.name))


def topic(lesson: str) -> str:
    """The lesson's name without its number: ``01_tensors`` -> ``tensors``."""
    match = LESSON_PATTERN.match(lesson)
    if not match:
        raise ValueError(f"{lesson!r} is not a lesson name like '01_tensors'")
    return match.group(2)


def solution_notebook(lesson: str) -> Path:
    """The instructor's notebook, with solutions and hidden tests."""
    return SOLUTIONS / lesson / f"{lesson}.ipynb"


def exercises(lesson: str) -> list:
    """The lesson's exercises (each answer cell with its test cell), from its solution notebook."""
    from autograder import notebook  # here, not at the top: this module stays import-light

    return notebook.exercises(notebook.read(solution_notebook(lesson)))


def student_notebook(lesson: str) -> Path:
    """The generated student notebook."""
    return NOTEBOOKS / lesson / f"{lesson}.ipynb"


def colab_url(lesson: str) -> str:
    """The Open-in-Colab address of a lesson's student notebook."""
    return (
        f"https://colab.research.google.com/github/{REPO_SLUG}/blob/{BRANCH}/"
        f"notebooks/{lesson}/{lesson}.ipynb"
    )
