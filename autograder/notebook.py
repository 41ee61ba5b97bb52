"""Read exercises out of a notebook: answer cells, their test cells, points and sources."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

SOLUTION_BEGIN = "### BEGIN SOLUTION"
HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
NBFORMAT_VERSION = 4


@dataclass(frozen=True)
class Exercise:
    """One graded exercise: the answer cell and the locked test cell that follows it."""

    grade_id: str  # the answer cell's grade_id, e.g. "to_nchw"
    test_id: str  # the test cell's grade_id, e.g. "test_to_nchw"
    answer_index: int
    test_index: int
    points: float
    answer_source: str
    test_source: str


def read(path: Path) -> NotebookNode:
    """Load a notebook as nbformat v4."""
    return nbformat.read(str(path), as_version=NBFORMAT_VERSION)


def write(nb: NotebookNode, path: Path) -> None:
    """Write a notebook the way nbformat does (stable key order, one-space indent)."""
    nbformat.write(nb, str(path))


def nbgrader_meta(cell: NotebookNode) -> dict:
    """The cell's nbgrader metadata, or an empty dict."""
    return dict(cell.get("metadata", {}).get("nbgrader", {}))


def is_answer(cell: NotebookNode) -> bool:
    """An autograded answer cell: nbgrader solution, not graded itself."""
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("solution", False) and not meta.get("grade", False)


def is_test(cell: NotebookNode) -> bool:
    """An autograder test cell: graded, not a solution cell."""
    meta = nbgrader_meta(cell)
    return cell.cell_type == "code" and meta.get("grade", False) and not meta.get("solution", False)


def exercises(nb: NotebookNode) -> list[Exercise]:
    """Pair every answer cell with the first test cell after it.

    Raises ``ValueError`` when an answer cell has no test cell before the next answer cell.
    """
    found = []
    cells = nb.cells
    for i, cell in enumerate(cells):
        if not is_answer(cell):
            continue
        grade_id = nbgrader_meta(cell)["grade_id"]
        test_index = next(
            (j for j in range(i + 1, len(cells)) if is_test(cells[j]) or is_answer(cells[j])), None
        )
        if test_index is None or not is_test(cells[test_index]):
            raise ValueError(f"answer cell {grade_id!r} is not followed by its test cell")
        test = cells[test_index]
        meta = nbgrader_meta(test)
        found.append(
            Exercise(
                grade_id=grade_id,
                test_id=meta["grade_id"],
                answer_index=i,
                test_index=test_index,
                points=float(meta.get("points", 0)),
                answer_source=cell.source,
                test_source=test.source,
            )
        )
    return found


def has_outputs(nb: NotebookNode) -> bool:
    """True when any code cell keeps outputs or an execution count."""
    return any(
        cell.get("outputs") or cell.get("execution_count")
        for cell in nb.cells
        if cell.cell_type == "code"
    )


def strip_outputs(nb: NotebookNode) -> bool:
    """Remove outputs and execution counts in place (nbgrader metadata stays); True if changed."""
    changed = False
    for cell in nb.cells:
        if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count")):
            cell.outputs = []
            cell.execution_count = None
            changed = True
    return changed


HIDDEN_END = "### END HIDDEN TESTS"


def split_test(source: str) -> tuple[str, str]:
    """A test cell's (visible, hidden) code: the lines outside and inside its hidden region.

    Run one after the other in a kernel they do what the whole cell does; run apart they tell
    whether an answer already fails the visible asserts or only the hidden check.
    """
    visible, hidden, inside = [], [], False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped == HIDDEN_BEGIN:
            inside = True
        elif stripped == HIDDEN_END:
            inside = False
        else:
            (hidden if inside else visible).append(line)
    return "\n".join(visible) + "\n", "\n".join(hidden) + "\n"
