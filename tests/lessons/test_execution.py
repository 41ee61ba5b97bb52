"""Every lesson, executed: the solution, the student version, real nbgrader, the mistake catalogue.

Each lesson's notebooks run a fixed number of times however many tests read the results:
nbgrader autogrades the solution and the untouched student version once (those runs are
also the "runs top to bottom" checks), and the mistake runner executes the solution once
more and swaps every catalogued mistake into that kernel. Tests of one lesson share an
xdist group, so the cached results stay in one worker.
"""

import functools
import tempfile
from pathlib import Path

import pytest

from autograder import course, notebook
from autograder.execute import errors
from autograder.mistake_check import LessonMistakeReport, check_lesson
from autograder.nbgrader_course import Grade, autograde, autograded_notebook

pytestmark = pytest.mark.lesson
LESSONS = [
    pytest.param(lesson, marks=pytest.mark.xdist_group(lesson)) for lesson in course.lessons()
]


@functools.cache
def graded(lesson: str) -> tuple[dict[str, list[Grade]], Path]:
    """nbgrader's grades for the solution and the blank student version, and its work folder."""
    workdir = Path(tempfile.mkdtemp(prefix=f"graded-{lesson}-"))
    grades = autograde(
        lesson,
        {"solution": course.solution_notebook(lesson), "blank": course.student_notebook(lesson)},
        workdir,
    )
    return grades, workdir


@functools.cache
def mistakes(lesson: str) -> LessonMistakeReport:
    return check_lesson(lesson)


@pytest.mark.parametrize("lesson", LESSONS)
def test_solution_runs_top_to_bottom_without_error(lesson):
    _, workdir = graded(lesson)
    nb = notebook.read(autograded_notebook(workdir, lesson, "solution"))
    failures = [f"cell {e.index}: {e.ename}: {e.evalue}" for e in errors(nb)]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("lesson", LESSONS)
def test_nbgrader_gives_the_solution_full_marks(lesson):
    grades, _ = graded(lesson)
    lost = [
        f"{g.grade_id}: {g.score:g}/{g.max_score:g}"
        for g in grades["solution"]
        if g.score != g.max_score
    ]
    assert not lost, f"the solution lost points: {lost}"
    expected = {
        ex.test_id for ex in notebook.exercises(notebook.read(course.solution_notebook(lesson)))
    }
    assert {g.grade_id for g in grades["solution"]} == expected


@pytest.mark.parametrize("lesson", LESSONS)
def test_nbgrader_gives_the_untouched_student_version_zero(lesson):
    grades, _ = graded(lesson)
    earned = [f"{g.grade_id}: {g.score:g}" for g in grades["blank"] if g.score != 0]
    assert not earned, f"an empty submission earned points: {earned}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_student_version_fails_only_with_not_implemented(lesson):
    _, workdir = graded(lesson)
    nb = notebook.read(autograded_notebook(workdir, lesson, "blank"))
    found = errors(nb)
    other = [
        f"cell {e.index}: {e.ename}: {e.evalue}" for e in found if e.ename != "NotImplementedError"
    ]
    assert not other, "the student version has errors besides NotImplementedError:\n" + "\n".join(
        other
    )
    assert found, "the student version raised no NotImplementedError: are the exercises stubbed?"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_catalogued_mistake_fails_and_the_solution_passes(lesson):
    report = mistakes(lesson)
    assert report.solution_error is None, f"the solution failed: {report.solution_error}"
    assert not report.restored_failures, (
        f"the solution fails its own tests: {report.restored_failures}"
    )
    missed = [
        f"{o.exercise}/{o.mistake}: {o.definition_error or 'its test cell passed'}"
        for o in report.missed()
    ]
    assert not missed, "mistakes the tests did not catch:\n" + "\n".join(missed)
    assert report.outcomes, "no mistakes were checked"
