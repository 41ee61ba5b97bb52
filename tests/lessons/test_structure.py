"""Rules every lesson follows, checked without running it. New lessons are covered automatically."""

import importlib
import re

import pytest

import tutorial_lib
from autograder import authoring, course, notebook, right_answers
from autograder.mistakes import Mistake, catalogue
from autograder.right_answers import RightAnswer
from autograder.verify import MIN_MISTAKES, MIN_RIGHT_ANSWERS

LESSONS = course.lessons()
HIDDEN_CALL = re.compile(
    r"### BEGIN HIDDEN TESTS\n"
    r"from autograder\.hidden\.(?P<topic>\w+) import (?P<fn>check_\w+); (?P=fn)\((?P<arg>\w+)\)\n"
    r"### END HIDDEN TESTS\s*$"
)


def solution(lesson):
    return notebook.read(course.solution_notebook(lesson))


def test_there_are_lessons():
    assert LESSONS[0] == "00_welcome"


def test_lesson_numbers_are_unique():
    numbers = [lesson[:2] for lesson in LESSONS]
    assert len(numbers) == len(set(numbers))


@pytest.mark.parametrize("lesson", LESSONS)
def test_header_and_setup_cells(lesson):
    cells = solution(lesson).cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# ")
    assert course.colab_url(lesson) in cells[0].source, "the header needs the Open-in-Colab badge"
    assert "**Time:**" in cells[0].source
    assert cells[1].source == authoring.SETUP_SOURCE.strip("\n"), (
        "cell 2 must be the shared setup cell (autograder.authoring.SETUP_SOURCE)"
    )
    assert f'COURSE_VERSION = "{tutorial_lib.__version__}"' in cells[1].source


@pytest.mark.parametrize("lesson", LESSONS)
def test_nbgrader_metadata_is_sane(lesson):
    nb = solution(lesson)
    exercises = notebook.exercises(nb)  # raises if an answer lacks its test cell
    assert exercises, f"{lesson} has no graded exercise"
    ids = [notebook.nbgrader_meta(c)["grade_id"] for c in nb.cells if notebook.nbgrader_meta(c)]
    assert len(ids) == len(set(ids)), f"duplicate grade_ids in {lesson}"
    for ex in exercises:
        test_meta = notebook.nbgrader_meta(nb.cells[ex.test_index])
        assert ex.test_id == f"test_{ex.grade_id}"
        assert test_meta["locked"] is True, f"{ex.test_id} must be locked"
        assert 0 < ex.points <= 3, f"{ex.test_id} should be worth 1 to 3 points"
        assert "### BEGIN SOLUTION" in ex.answer_source
    graded = [c for c in nb.cells if notebook.is_test(c)]
    assert len(graded) == len(exercises), "every test cell follows an answer cell"


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_test_cell_ends_with_one_hidden_check_that_exists(lesson):
    for ex in notebook.exercises(solution(lesson)):
        match = HIDDEN_CALL.search(ex.test_source)
        assert match, f"{ex.test_id} must end with one hidden-check line (see CONTRIBUTING.md)"
        assert match["topic"] == course.topic(lesson)
        assert match["fn"] == f"check_{ex.grade_id}" and match["arg"] == ex.grade_id
        module = importlib.import_module(f"autograder.hidden.{match['topic']}")
        assert callable(getattr(module, match["fn"], None)), f"{match['fn']} is missing"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_exercise_has_at_least_four_catalogued_mistakes(lesson):
    exercises = {ex.grade_id for ex in notebook.exercises(solution(lesson))}
    mistakes = catalogue(course.topic(lesson))
    assert set(mistakes) <= exercises, (
        f"mistakes for unknown exercises: {set(mistakes) - exercises}"
    )
    short = []
    for grade_id in sorted(exercises):
        entries = mistakes.get(grade_id, [])
        if len(entries) < MIN_MISTAKES:
            short.append(f"{grade_id} has {len(entries)}")
        assert len({m.name for m in entries}) == len(entries), f"{grade_id}: duplicate names"
        for m in entries:
            assert isinstance(m, Mistake) and m.message.strip() and m.code.strip()
            compile(m.code, f"{grade_id}/{m.name}", "exec")
    assert not short, f"each exercise needs {MIN_MISTAKES} catalogued mistakes: {short}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_exercise_has_a_catalogued_right_answer_unlike_the_solution(lesson):
    nb = solution(lesson)
    exercises = {ex.grade_id: ex.answer_source for ex in notebook.exercises(nb)}
    rights = right_answers.catalogue(course.topic(lesson))
    assert set(rights) <= set(exercises), (
        f"right answers for unknown exercises: {set(rights) - set(exercises)}"
    )
    for grade_id, answer_source in sorted(exercises.items()):
        entries = rights.get(grade_id, [])
        assert len(entries) >= MIN_RIGHT_ANSWERS, f"{grade_id} needs a catalogued right answer"
        assert len({r.name for r in entries}) == len(entries), f"{grade_id}: duplicate names"
        for r in entries:
            assert isinstance(r, RightAnswer) and r.why.strip() and r.code.strip()
            compile(r.code, f"{grade_id}/{r.name}", "exec")
            assert r.code.strip() != answer_source.strip(), f"{grade_id}/{r.name} is the solution"


@pytest.mark.parametrize("lesson", LESSONS)
def test_notebooks_are_output_free(lesson):
    for path in (course.solution_notebook(lesson), course.student_notebook(lesson)):
        assert not notebook.has_outputs(notebook.read(path)), f"{path} keeps outputs"


def _region_lines(source: str) -> set[str]:
    """Lines inside BEGIN/END SOLUTION and BEGIN/END HIDDEN TESTS regions."""
    lines, inside = set(), False
    for line in source.splitlines():
        stripped = line.strip()
        if stripped in ("### BEGIN SOLUTION", "### BEGIN HIDDEN TESTS"):
            inside = True
        elif stripped in ("### END SOLUTION", "### END HIDDEN TESTS"):
            inside = False
        elif inside and stripped:
            lines.add(stripped)
    return lines


@pytest.mark.parametrize("lesson", LESSONS)
def test_nothing_from_solution_or_hidden_regions_reaches_students(lesson):
    nb = solution(lesson)
    secret = set().union(*(_region_lines(c.source) for c in nb.cells if c.cell_type == "code"))
    # Lines that also appear outside the regions (a shared `return x`, say) are not secrets.
    outside = set()
    for cell in nb.cells:
        outside |= {line.strip() for line in cell.source.splitlines()} - _region_lines(cell.source)
    secret -= outside
    student = course.student_notebook(lesson).read_text()
    assert "BEGIN SOLUTION" not in student and "BEGIN HIDDEN TESTS" not in student
    student_lines = {
        line.strip()
        for c in notebook.read(course.student_notebook(lesson)).cells
        for line in c.source.splitlines()
    }
    leaked = sorted(secret & student_lines)
    assert not leaked, f"solution/hidden lines in the student notebook: {leaked[:5]}"


def test_release_check_passes():
    from autograder.release import release

    assert release(check=True) == []
