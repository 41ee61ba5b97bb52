"""Sample submissions made from a lesson's own notebooks, for ``make grade-demo`` and the tests.

Built at run time from ``solutions/`` and ``notebooks/``, so they can never drift from the
lesson they pretend to answer.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder import course, notebook
from autograder.mistakes import catalogue


def solution(lesson: str) -> NotebookNode:
    """The solution notebook, as a student who got everything right would hand it in."""
    return notebook.read(course.solution_notebook(lesson))


def blank(lesson: str) -> NotebookNode:
    """The untouched student version."""
    return notebook.read(course.student_notebook(lesson))


def replace_answer(nb: NotebookNode, grade_id: str, code: str) -> NotebookNode:
    """A copy of ``nb`` whose answer cell ``grade_id`` holds ``code``."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if notebook.nbgrader_meta(cell).get("grade_id") == grade_id:
            cell.source = code
            return nb
    raise KeyError(f"no answer cell {grade_id!r}")


def with_first_mistake(lesson: str, nb: NotebookNode, grade_id: str) -> NotebookNode:
    """``nb`` with the first catalogued mistake of exercise ``grade_id`` as its answer."""
    mistake = catalogue(course.topic(lesson))[grade_id][0]
    return replace_answer(nb, grade_id, mistake.code)


def demo_class(lesson: str) -> dict[str, NotebookNode]:
    """A small class: right, partial (one catalogued mistake), broken (a crash), blank."""
    right = solution(lesson)
    exercises = notebook.exercises(right)
    partial = with_first_mistake(lesson, right, exercises[0].grade_id)
    broken = replace_answer(
        right, exercises[-1].grade_id, "import os\nos._exit(1)  # the kernel dies here\n"
    )
    return {"right": right, "partial": partial, "broken": broken, "blank": blank(lesson)}


def write_class(root: Path, lesson: str, notebooks: dict[str, NotebookNode]) -> Path:
    """Lay notebooks out as ``root/<student>/<lesson>/<lesson>.ipynb``; return ``root``."""
    for student, nb in notebooks.items():
        path = root / student / lesson / f"{lesson}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(path))
    return root
