"""Time every lesson: solution and student version in fresh kernels, plus exercise counts.

A script, not a test: timings on a shared 2-core machine vary, so they are printed for a
person to read rather than asserted.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder import course, right_answers
from autograder.execute import errors, run_notebook
from autograder.mistakes import catalogue


@dataclass
class BenchRow:
    lesson: str
    solution_s: float
    student_s: float
    exercises: int
    points: float
    mistakes: int
    right_answers: int
    solution_errors: int


def bench_lesson(lesson: str) -> BenchRow:
    """Run one lesson's solution and student notebooks and count its exercises."""
    solution_nb, solution_s = run_notebook(course.solution_notebook(lesson), allow_errors=True)
    _, student_s = run_notebook(course.student_notebook(lesson), allow_errors=True)
    exercises = course.exercises(lesson)
    mistakes = catalogue(course.topic(lesson))
    rights = right_answers.catalogue(course.topic(lesson))
    return BenchRow(
        lesson=lesson,
        solution_s=solution_s,
        student_s=student_s,
        exercises=len(exercises),
        points=sum(e.points for e in exercises),
        mistakes=sum(len(mistakes.get(e.grade_id, [])) for e in exercises),
        right_answers=sum(len(rights.get(e.grade_id, [])) for e in exercises),
        solution_errors=len(errors(solution_nb)),
    )


HEADER = ("lesson", "solution s", "student s", "exercises", "points", "mistakes", "right", "errors")


def format_table(rows: list[BenchRow]) -> str:
    """A fixed-width table with a total row."""
    lines = ["{:<16}{:>12}{:>11}{:>11}{:>8}{:>10}{:>7}{:>8}".format(*HEADER)]
    for r in rows:
        lines.append(
            f"{r.lesson:<16}{r.solution_s:>12.1f}{r.student_s:>11.1f}{r.exercises:>11}"
            f"{r.points:>8g}{r.mistakes:>10}{r.right_answers:>7}{r.solution_errors:>8}"
        )
    lines.append(
        f"{'total':<16}{sum(r.solution_s for r in rows):>12.1f}"
        f"{sum(r.student_s for r in rows):>11.1f}{sum(r.exercises for r in rows):>11}"
        f"{sum(r.points for r in rows):>8g}{sum(r.mistakes for r in rows):>10}"
        f"{sum(r.right_answers for r in rows):>7}"
        f"{sum(r.solution_errors for r in rows):>8}"
    )
    return "\n".join(lines)
