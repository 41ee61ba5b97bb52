"""Student notebooks with a learner's answers filled in from the solutions."""

from __future__ import annotations

import re

from nbformat import NotebookNode

from autograder import course, notebook

MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def answer_from_solution(source: str) -> str:
    """The solution cell's code as a learner would type it: the same, minus nbgrader's markers."""
    return MARKER.sub("", source)


def filled(lesson: str) -> NotebookNode:
    """The student notebook with every answer cell replaced by the solution's answer.

    Test cells stay the student's (visible checks only): this is what a learner who got
    everything right has in front of them.
    """
    student = notebook.read(course.student_notebook(lesson))
    answers = {
        ex.grade_id: answer_from_solution(ex.answer_source) for ex in course.exercises(lesson)
    }
    for ex in notebook.exercises(student):
        student.cells[ex.answer_index].source = answers[ex.grade_id]
    return student
