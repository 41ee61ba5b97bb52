"""The misconception matcher's solution namespace: run as far as needed, each cell once."""

import nbformat
import pytest

from autograder import course, misconceptions


@pytest.fixture
def toy_lesson(tmp_path, monkeypatch):
    """A three-cell solution: code, a test cell (never run), code that writes a file."""
    cells = [
        nbformat.v4.new_code_cell("runs = ['first']"),
        nbformat.v4.new_code_cell("runs.append('the test cell')"),
        nbformat.v4.new_code_cell("runs.append('third')\nopen('made.txt', 'w').write('x')"),
    ]
    cells[1].metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_x"}
    path = tmp_path / "toy.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(path))
    monkeypatch.setattr(course, "solution_notebook", lambda lesson: path)
    monkeypatch.delitem(misconceptions._RUNS, "toy", raising=False)
    yield "toy"
    misconceptions._RUNS.pop("toy", None)


def test_the_namespace_holds_only_the_cells_before_the_one_asked_for(toy_lesson, tmp_path):
    ns = misconceptions.solution_namespace(toy_lesson, before=2)
    assert ns["runs"] == ["first"]  # the test cell is skipped, the third cell not reached
    assert not (tmp_path / "made.txt").exists()


def test_a_later_call_goes_on_from_there_and_runs_no_cell_twice(toy_lesson, tmp_path):
    first = misconceptions.solution_namespace(toy_lesson, before=1)
    whole = misconceptions.solution_namespace(toy_lesson)
    again = misconceptions.solution_namespace(toy_lesson, before=1)
    assert first is whole is again
    assert whole["runs"] == ["first", "third"]
    assert not (tmp_path / "made.txt").exists()  # written in the run's own scratch folder


def test_a_cell_that_raises_leaves_no_half_run_namespace(toy_lesson, tmp_path, monkeypatch):
    broken = tmp_path / "broken.ipynb"
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("1 / 0")]
    )
    nbformat.write(nb, str(broken))
    monkeypatch.setattr(course, "solution_notebook", lambda lesson: broken)
    with pytest.raises(ZeroDivisionError):
        misconceptions.solution_namespace(toy_lesson)
    assert toy_lesson not in misconceptions._RUNS


def test_an_exercise_not_answered_yet_is_matched_with_no_mistake(monkeypatch):
    """The grader skips the matcher for NotImplementedError: building the solution's
    namespace for a blank exercise cost a blank 05_data submission 51 s."""
    from autograder import judge
    from autograder.judge import InProcessChannel

    def unanswered(*args):
        raise NotImplementedError

    lesson = "00_welcome"
    ex = course.exercises(lesson)[0]
    spec = judge.specs(lesson)[ex.test_id]
    verdict = judge.run_check(spec, InProcessChannel({ex.grade_id: unanswered}))
    assert not verdict.passed and not verdict.answered
    wrong = judge.run_check(spec, InProcessChannel({ex.grade_id: lambda *a, **k: None}))
    assert not wrong.passed and wrong.answered
