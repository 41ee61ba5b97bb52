"""Build lesson notebooks from code: cells with the right nbgrader metadata, and the shared setup.

Lessons are edited as notebooks in ``solutions/`` (JupyterLab's nbgrader toolbar writes the
same metadata). These helpers are for writing a new lesson as a script, and they define
the two cells every lesson shares, which the tests compare against.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbformat import NotebookNode

import tutorial_lib
from autograder import course

SCHEMA_VERSION = 3  # nbgrader's cell-metadata schema

SETUP_SOURCE = f'''\
# Setup: run this cell first. Where the course helpers are missing (on Colab, say) it installs
# `tutorial_lib` at this course's version. It never installs or upgrades torch.
import importlib.util
import os
import subprocess
import sys

COURSE_VERSION = "{tutorial_lib.__version__}"
if importlib.util.find_spec("tutorial_lib") is None:
    source = os.environ.get(
        "COURSE_PIP_SOURCE",
        f"git+https://github.com/{course.REPO_SLUG}@v{{COURSE_VERSION}}",
    )
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", source], check=True)

import torch

import tutorial_lib
from tutorial_lib import get_device

device = get_device()
print(f"torch {{torch.__version__}} | tutorial_lib {{tutorial_lib.__version__}} | device: {{device}}")
'''


def badge(lesson: str) -> str:
    """The Open-in-Colab badge, as markdown, for a lesson's student notebook."""
    return (
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"({course.colab_url(lesson)})"
    )


def header(lesson: str, title: str, learn: Sequence[str], minutes: int) -> NotebookNode:
    """The first cell: title, badge, what you will learn, expected time."""
    bullets = "\n".join(f"- {item}" for item in learn)
    return md(
        f"# {title}\n\n{badge(lesson)}\n\n**You will learn**\n\n{bullets}\n\n"
        f"**Time:** about {minutes} minutes. Run the setup cell below first."
    )


def md(text: str) -> NotebookNode:
    """A markdown cell."""
    return nbformat.v4.new_markdown_cell(text.strip("\n"))


def code(source: str) -> NotebookNode:
    """An ordinary code cell (demonstrations; not graded)."""
    return nbformat.v4.new_code_cell(source.strip("\n"))


def setup() -> NotebookNode:
    """The setup cell every lesson starts with, folded: a student sees its first line."""
    cell = code(SETUP_SOURCE)
    cell.metadata["jupyter"] = {"source_hidden": True}
    return cell


def answer(grade_id: str, source: str) -> NotebookNode:
    """An autograded answer cell; put the solution between BEGIN/END SOLUTION markers."""
    if "### BEGIN SOLUTION" not in source:
        raise ValueError(f"answer cell {grade_id!r} has no ### BEGIN SOLUTION region")
    cell = code(source)
    cell.metadata["nbgrader"] = {
        "grade": False,
        "grade_id": grade_id,
        "locked": False,
        "schema_version": SCHEMA_VERSION,
        "solution": True,
        "task": False,
    }
    return cell


def tests(grade_id: str, source: str, points: int = 1) -> NotebookNode:
    """A locked autograder test cell worth ``points``; hidden checks go in a HIDDEN TESTS region."""
    if not grade_id.startswith("test_"):
        raise ValueError(f"test cell ids start with 'test_', got {grade_id!r}")
    cell = code(source)
    cell.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": grade_id,
        "locked": True,
        "points": points,
        "schema_version": SCHEMA_VERSION,
        "solution": False,
        "task": False,
    }
    return cell


def build(cells: Sequence[NotebookNode]) -> NotebookNode:
    """A notebook with the course's kernel and stable cell ids (so diffs stay small)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = list(cells)
    for i, cell in enumerate(nb.cells):
        cell.id = f"cell-{i:03d}"
    nbformat.validate(nb)
    return nb


def save(nb: NotebookNode, lesson: str) -> Path:
    """Write a lesson's solution notebook to ``solutions/<lesson>/<lesson>.ipynb``."""
    path = course.solution_notebook(lesson)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path
