import nbformat

from autograder import course, release
from tests.autograder.conftest import PROBE


def test_a_new_lesson_folder_is_discovered_and_released(probe_course):
    assert course.lessons() == [PROBE]
    assert release.release(check=True)  # nothing released yet: stale
    assert release.release() == []
    student = course.student_notebook(PROBE)
    assert student.is_file()
    assert release.release(check=True) == []


def test_student_version_has_no_solution_or_hidden_test(probe_course):
    release.release()
    text = course.student_notebook(PROBE).read_text()
    assert "raise NotImplementedError()" in text
    for secret in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "SECRET-PROBE-CHECK", "return 3 * x"):
        assert secret not in text


def test_check_reports_a_stale_student_notebook(probe_course):
    release.release()
    path = course.solution_notebook(PROBE)
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[0].source = "# Probe, edited"
    nbformat.write(nb, str(path))
    problems = release.release(check=True)
    assert problems == [f"notebooks/{PROBE}: {PROBE}.ipynb is stale"]


def test_check_reports_outputs_in_solutions_and_release_strips_them(probe_course):
    release.release()
    path = course.solution_notebook(PROBE)
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[1].execution_count = 1
    nbformat.write(nb, str(path))
    assert any("has outputs" in p for p in release.release(check=True))
    release.release()
    assert release.release(check=True) == []


def test_check_reports_orphan_student_folders(probe_course):
    release.release()
    (course.NOTEBOOKS / "42_gone").mkdir()
    assert release.release(check=True) == ["notebooks/42_gone: has no lesson in solutions/"]
