"""Every lesson, executed: the solution, the student version, real nbgrader, the mistake catalogue.

Each lesson's notebooks run a fixed number of times however many tests read the results:
nbgrader autogrades the solution and the untouched student version once (those runs are
also the "runs top to bottom" checks), the grade command grades them and a partial answer
once, and the mistake runner executes the solution once more and swaps every catalogued
mistake into that kernel. Tests of one lesson share an xdist group, so the cached results
stay in one worker.
"""

import atexit
import functools
import importlib
import re
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest

from autograder import check_harness, course, notebook, translations
from autograder.execute import errors
from autograder.grading import samples, sandbox
from autograder.grading.run import GradeOptions, grade
from autograder.mistake_check import LessonMistakeReport, check_lesson
from autograder.mistakes import catalogue
from autograder.nbgrader_course import Grade, autograde, autograded_notebook
from autograder.verify import catalogue_problems

pytestmark = pytest.mark.lesson
LESSONS = [
    pytest.param(lesson, marks=pytest.mark.xdist_group(lesson)) for lesson in course.lessons()
]


# Exercises whose probes report wall-clock timings (a profile, a latency): no replay of a
# mistake can give the same numbers, so the misconception matcher cannot name them.
TIMED = {"top_ops", "time_per_label", "measure_latency_ms"}


@functools.cache
def _partial_exercise(lesson: str) -> str:
    """The exercise the partial sample gets wrong: the first one without timings that no
    other exercise's answer or test uses, so that its mistake costs no other exercise points."""
    nb = samples.solution(lesson)
    graded_cells = [
        (i, cell)
        for i, cell in enumerate(nb.cells)
        if notebook.is_answer(cell) or notebook.is_test(cell)
    ]
    for ex in notebook.exercises(nb):
        name = re.compile(rf"\b{re.escape(ex.grade_id)}\b")
        used_elsewhere = any(
            name.search(cell.source)
            for i, cell in graded_cells
            if i not in (ex.answer_index, ex.test_index)
        )
        if ex.grade_id not in TIMED and not used_elsewhere:
            return ex.grade_id
    raise AssertionError(f"{lesson}: no exercise stands alone for the partial sample")


def _workdir(prefix: str) -> Path:
    """A scratch folder for one lesson's runs, removed when this test process exits (each
    lesson's runs leave 1 to 4 MB of notebooks, gradebooks and feedback)."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@functools.cache
def graded(lesson: str) -> tuple[dict[str, list[Grade]], Path]:
    """Plain nbgrader's grades for the solution and the blank student version."""
    workdir = _workdir(f"graded-{lesson}-")
    honest = {
        "solution": course.solution_notebook(lesson),
        "blank": course.student_notebook(lesson),
    }
    grades = autograde(lesson, honest, workdir / "plain")
    return grades, workdir / "plain"


def _partial_grades(lesson: str, solution: list[Grade]) -> dict[str, float]:
    """What plain nbgrader gives the partial answer, from its grades of the solution: the
    wrong exercise's test cell scores 0 and, as no other cell uses that exercise, every
    other cell what it scored in the solution. (Grading the partial answer with nbgrader
    too ran the whole solution once more per lesson, for the same figures.)"""
    wrong = next(
        ex.test_id for ex in course.exercises(lesson) if ex.grade_id == _partial_exercise(lesson)
    )
    return {g.grade_id: 0.0 if g.grade_id == wrong else g.score for g in solution}


def _right_answers(lesson: str) -> nbformat.NotebookNode:
    """The solution as a learner of the Chinese edition hands it in (the English one where
    the lesson has no Chinese edition yet): grading it here, against plain nbgrader's grades
    of the English solution, shows both editions score the same, at no extra cost."""
    return translations.submission(lesson, "zh", samples.solution(lesson)) or samples.solution(
        lesson
    )


@functools.cache
def graded_by_the_grade_command(lesson: str) -> dict[str, dict]:
    """The same three submissions through ``python -m autograder grade`` (trusted verdicts);
    the solution and the partial answer in the Chinese edition's notebook."""
    workdir = _workdir(f"trusted-{lesson}-")
    subs = workdir / "submissions"
    right = _right_answers(lesson)
    nbs = {
        "solution": right,
        "blank": samples.blank(lesson),
        "partial": samples.with_first_mistake(lesson, right, _partial_exercise(lesson)),
    }
    samples.write_class(subs, lesson, nbs)
    opts = GradeOptions(
        subs, workdir / "out", [lesson], jobs=1, sandboxed=sandbox.available(), progress=False
    )
    return {r["student"]: r for r in grade(opts)}


@functools.cache
def mistakes(lesson: str) -> LessonMistakeReport:
    """Every mistake's and every right answer's visible asserts, in the kernel. The hidden
    checks' verdicts on them are the data-boundary test's (the same checks, called once per
    answer, not twice), and on the solution nbgrader's."""
    return check_lesson(lesson, hidden=False)


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
    expected = {ex.test_id for ex in course.exercises(lesson)}
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
    """In the kernel: the solution runs, each mistake's code defines its answer, the visible
    asserts fail on it or it is left to the hidden check (whose verdict on every mistake the
    data-boundary test below judges), and the restored solution passes again."""
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


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_catalogued_right_answer_passes_in_the_kernel(lesson):
    """Its visible asserts, in the kernel; its hidden checks are the data-boundary test's."""
    report = mistakes(lesson)
    assert report.solution_error is None, f"the solution failed: {report.solution_error}"
    rejected = [f"{r.exercise}/{r.answer}: {r.error}" for r in report.rejected()]
    assert not rejected, "right answers the tests reject (bugs in the checks):\n" + "\n".join(
        rejected
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_exercise_has_a_mistake_only_its_hidden_check_catches(lesson):
    report = mistakes(lesson)
    assert report.solution_error is None, f"the solution failed: {report.solution_error}"
    problems = [p for p in catalogue_problems(lesson, report) if "visible" in p]
    assert not problems, "\n".join(problems)


def visible_exempt(topic: str) -> dict[str, str]:
    """``VISIBLE_EXEMPT`` of ``autograder.mistakes.<topic>``: exercises whose first mistake no
    visible input can tell apart, and why (issue #30). Missing means none."""
    return dict(
        getattr(importlib.import_module(f"autograder.mistakes.{topic}"), "VISIBLE_EXEMPT", {})
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_visible_test_catches_each_exercises_first_mistake(lesson):
    """A learner meets the most common wrong answer (the catalogue's first) in the visible
    test, not first in the grade."""
    report = mistakes(lesson)
    assert report.solution_error is None, f"the solution failed: {report.solution_error}"
    topic = course.topic(lesson)
    exempt = visible_exempt(topic)
    passed = []
    for grade_id, listed in catalogue(topic).items():
        if not listed or grade_id in exempt:
            continue
        first = next((o for o in report.outcomes if o.exercise == grade_id), None)
        if first is None:  # not an exercise of the notebook: another test says so
            continue
        assert first.mistake == listed[0].name
        if first.passes_visible:
            passed.append(f"{grade_id}: its first mistake {first.mistake} passes the visible test")
    assert not passed, (
        "make the visible asserts fail on these (or list the exercise in VISIBLE_EXEMPT of "
        f"autograder/mistakes/{topic}.py with the reason):\n" + "\n".join(passed)
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_hidden_checks_across_the_data_boundary_pass_right_answers_and_fail_every_mistake(lesson):
    # Naming every mistake is the authors' harness's figure (``python -m autograder trusted``);
    # the grade route's naming is tested below, on one mistake per lesson.
    report = check_harness.check_lesson(lesson, name=False)
    assert not report.failures, "\n".join(report.failures)
    assert report.mistakes and report.exercises and report.right_answers


@pytest.mark.parametrize("lesson", LESSONS)
def test_honest_submissions_score_as_with_plain_nbgrader(lesson):
    plain, _ = graded(lesson)
    ours = graded_by_the_grade_command(lesson)
    plain_scores = {
        student: {g.grade_id: g.score for g in grades} for student, grades in plain.items()
    }
    plain_scores["partial"] = _partial_grades(lesson, plain["solution"])
    for student in ("solution", "blank", "partial"):
        expected = plain_scores[student]
        got = {t["test_id"]: t["score"] for t in ours[student]["tests"]}
        assert got == expected, f"{student}: grade command {got}, plain nbgrader {expected}"
        assert ours[student]["status"] == "ok", ours[student]


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_chinese_submission_gets_its_feedback_in_chinese(lesson):
    """The partial answer, in the Chinese edition, fails its first wrong exercise: the
    message (a visible assert's ``tr()`` text, a check of tutorial_lib's, or the hidden
    check's verdict) is in Chinese."""
    assert translations.submission(lesson, "zh", samples.solution(lesson)) is not None
    first = _partial_exercise(lesson)
    partial = graded_by_the_grade_command(lesson)["partial"]
    test = next(t for t in partial["tests"] if t["exercise"] == first)
    assert test["score"] == 0
    assert re.search(r"[\u4e00-\u9fff]", test["message"]), test["message"]


@pytest.mark.parametrize("lesson", LESSONS)
def test_a_wrong_answer_is_named_after_its_catalogued_mistake(lesson):
    first = _partial_exercise(lesson)
    mistake = catalogue(course.topic(lesson))[first][0]
    partial = graded_by_the_grade_command(lesson)["partial"]
    test = next(t for t in partial["tests"] if t["exercise"] == first)
    assert test["score"] == 0
    named = [m.message for m in catalogue(course.topic(lesson))[first]]
    if not test["misconception"]:
        pytest.fail(f"{first}: {mistake.name} was not recognised; message: {test['message']}")
    assert test["misconception"] in named
