"""One lesson's full self-check, for the contributor's edit-verify loop (``python -m autograder verify``).

Runs what the test suite runs for a lesson and prints it readably: the mistake runner's
verdict on every catalogued mistake (with the message the checks gave), and nbgrader's
scores for the solution and the untouched student version.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from autograder import course, judge, notebook
from autograder.execute import errors
from autograder.mistake_check import LessonMistakeReport, check_lesson
from autograder.nbgrader_course import autograde, autograded_notebook


def verify(lesson: str) -> list[str]:
    """Print a lesson's report; return the problems found (empty when all is well)."""
    problems: list[str] = []
    report = check_lesson(lesson)
    if report.solution_error:
        return [f"the solution notebook fails: {report.solution_error}"]
    print(f"{lesson}: solution ran in {report.solution_seconds:.1f} s (one thread)")
    for exercise, line in contract_lines(lesson).items():
        print(f"  checks  {exercise:<24} {line}")
    for outcome in report.outcomes:
        if outcome.error is None:
            why = outcome.definition_error or "its test cell passed"
            problems.append(f"mistake {outcome.exercise}/{outcome.mistake} was not caught: {why}")
            print(f"  MISSED  {outcome.exercise:<24} {outcome.mistake}: {why}")
        else:
            where = "hidden " if outcome.passes_visible else "visible"
            print(
                f"  caught  {outcome.exercise:<24} {where} {outcome.mistake}: {outcome.error[:160]}"
            )
    for right in report.right:
        if right.error is None:
            print(f"  right   {right.exercise:<24} {right.answer}: passes")
        else:
            problems.append(f"right answer {right.exercise}/{right.answer} fails: {right.error}")
            print(f"  REJECTED {right.exercise:<23} {right.answer}: {right.error[:160]}")
    problems += catalogue_problems(lesson, report)
    for grade_id, error in report.restored_failures.items():
        problems.append(f"{grade_id}: the solution fails its tests after the mistakes ran: {error}")
    with tempfile.TemporaryDirectory(prefix="verify-") as tmp:
        grades = autograde(
            lesson,
            {
                "solution": course.solution_notebook(lesson),
                "blank": course.student_notebook(lesson),
            },
            Path(tmp),
        )
        for student, expect_full in (("solution", True), ("blank", False)):
            got = sum(g.score for g in grades[student])
            total = sum(g.max_score for g in grades[student])
            print(f"  nbgrader: {student} scores {got:g} / {total:g}")
            if (got != total) if expect_full else (got != 0):
                problems.append(f"nbgrader gave the {student} version {got:g} / {total:g}")
        blank = notebook.read(autograded_notebook(Path(tmp), lesson, "blank"))
        for err in errors(blank):
            if err.ename != "NotImplementedError":
                problems.append(
                    f"student version: cell {err.index} raised {err.ename}: {err.evalue}"
                )
    return problems


def contract_lines(lesson: str) -> dict[str, str]:
    """Exercise -> the contract families its hidden check declares, or that it has none."""
    lines = {}
    for spec in judge.specs(lesson).values():
        contracts = judge.contracts(spec.topic, spec.check)
        if not contracts:
            lines[spec.exercise] = "hand-written (no contract)"
            continue
        lines[spec.exercise] = "; ".join(
            "contract " + " ".join(c.families) + (f", rules {' '.join(c.rules)}" if c.rules else "")
            for c in contracts
        )
    return lines


# What every exercise's catalogues must hold (CONTRIBUTING.md, "Mistake catalogue").
MIN_MISTAKES = 4
MIN_PASSING_VISIBLE = 1
MIN_RIGHT_ANSWERS = 1


def catalogue_problems(lesson: str, report: LessonMistakeReport) -> list[str]:
    """Exercises whose catalogues are too thin to prove the checks tell right from wrong."""
    problems = []
    for ex in course.exercises(lesson):
        mine = [o for o in report.outcomes if o.exercise == ex.grade_id]
        hidden_only = [o for o in mine if o.passes_visible]
        rights = [r for r in report.right if r.exercise == ex.grade_id]
        if len(mine) < MIN_MISTAKES:
            problems.append(f"{ex.grade_id}: {len(mine)} catalogued mistakes, need {MIN_MISTAKES}")
        if len(hidden_only) < MIN_PASSING_VISIBLE:
            problems.append(
                f"{ex.grade_id}: no catalogued mistake passes the visible asserts, so none "
                "proves the hidden check catches what they miss"
            )
        if len(rights) < MIN_RIGHT_ANSWERS:
            problems.append(f"{ex.grade_id}: no catalogued right answer unlike the solution")
    return problems
