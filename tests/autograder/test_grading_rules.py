"""nbgrader, as this course configures it: warnings cost nothing, deleted tests come back."""

import nbformat
import pytest

from autograder import course, release
from autograder.nbgrader_course import autograde, autograded_notebook
from tests.autograder.conftest import PROBE

pytestmark = pytest.mark.lesson  # starts kernels: not part of `make test-fast`


def test_warnings_deleted_cells_and_blank_submissions(probe_course, tmp_path):
    release.release()
    solution = course.solution_notebook(PROBE)
    deleted = tmp_path / "deleted.ipynb"
    nb = nbformat.read(str(solution), as_version=4)
    nb.cells = [
        c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") != "test_triple"
    ]
    nbformat.write(nb, str(deleted))

    grades = autograde(
        PROBE,
        {"warns": solution, "deleted": deleted, "blank": course.student_notebook(PROBE)},
        tmp_path / "work",
    )
    scores = {s: {g.grade_id: g.score for g in gs} for s, gs in grades.items()}
    # A correct answer that writes warnings and progress to stderr keeps its points.
    assert scores["warns"] == {"test_noisy_double": 2.0, "test_triple": 1.0}
    # The deleted test cell is restored and graded.
    assert scores["deleted"] == {"test_noisy_double": 2.0, "test_triple": 1.0}
    assert scores["blank"] == {"test_noisy_double": 0.0, "test_triple": 0.0}
    graded = autograded_notebook(tmp_path / "work", PROBE, "warns").read_text()
    assert "correct, but noisy" in graded  # the warning is still shown to the student
