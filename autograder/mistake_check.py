"""Prove the grader tells right from wrong: every catalogued mistake fails its exercise's tests,
every catalogued right answer passes them.

One kernel runs the solution notebook top to bottom (which also proves it runs without
error); then, per exercise, each mistake's code replaces the answer, the exercise's test
cell runs and must fail. The cell runs in two steps, its visible asserts and then its
hidden check, which is what the whole cell does, and it tells which part caught the mistake.
Each right answer replaces the answer the same way and must pass the whole cell. Finally
the true answer is restored and its test cell must pass again.

With ``hidden=False`` (the test suite) no hidden check runs in this kernel, only the
visible asserts: the hidden checks' verdicts on every mistake and right answer are
``autograder.check_harness``'s, which calls the same checks, and on the solution nbgrader's,
which grades it. Running them here too was a quarter of the suite's time for the mistakes,
and for the solution and the right answers half this kernel's.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field

from nbclient.exceptions import CellExecutionError

from autograder import course, notebook, right_answers
from autograder.execute import KernelSession
from autograder.mistakes import catalogue
from autograder.nbgrader_settings import CELL_TIMEOUT_S

# A mistake that loops forever should fail quickly, not hold the suite for two minutes.
MISTAKE_TIMEOUT_S = 60


@dataclass
class MistakeOutcome:
    exercise: str
    mistake: str
    error: str | None  # None means the test cell passed: the grader missed this mistake
    definition_error: str | None = None  # the mistake's own code failed to run
    passes_visible: bool = False  # only the hidden check caught it


@dataclass
class RightOutcome:
    exercise: str
    answer: str
    error: str | None  # None means it passed, as it must; else how the test cell rejected it


@dataclass
class LessonMistakeReport:
    lesson: str
    solution_seconds: float = 0.0
    solution_error: str | None = None  # the first error while running the solution, if any
    hidden: bool = True  # False: a mistake that passed its visible asserts stopped there
    restored_failures: dict[str, str] = field(default_factory=dict)  # solution failed on re-run
    outcomes: list[MistakeOutcome] = field(default_factory=list)
    right: list[RightOutcome] = field(default_factory=list)

    def missed(self) -> list[MistakeOutcome]:
        """Mistakes whose exercise tests passed anyway (those never given to the hidden
        check are not counted: see ``check_lesson``'s ``hidden``)."""
        return [
            o for o in self.outcomes if o.error is None and (self.hidden or not o.passes_visible)
        ]

    def rejected(self) -> list[RightOutcome]:
        """Right answers that the exercise's tests failed: bugs in the checks."""
        return [r for r in self.right if r.error is not None]


# What one mistake can switch for the whole kernel when its visible test calls it (autograd
# off, left off, as 09's grad-mode-left-off does), put back before the next one runs: each
# mistake is judged as if it were alone in the solution (probes restore these themselves).
# The kernel imports the course's own autograder, as the solution's hidden tests do.
RESET_MODES = "from autograder.boundary import usual_modes\nusual_modes()"


def check_lesson(lesson: str, hidden: bool = True) -> LessonMistakeReport:
    """Run the solution once, then swap in every catalogued mistake for its exercise; with
    ``hidden`` False, every test cell runs its visible asserts only."""
    nb = notebook.read(course.solution_notebook(lesson))
    if not hidden:
        for cell in nb.cells:
            if notebook.is_test(cell):
                cell.source = notebook.split_test(cell.source)[0]
    mistakes = catalogue(course.topic(lesson))
    rights = right_answers.catalogue(course.topic(lesson))
    report = LessonMistakeReport(lesson, hidden=hidden)
    with tempfile.TemporaryDirectory(prefix="mistakes-") as cwd:
        session = KernelSession(nb, cwd, timeout=CELL_TIMEOUT_S)
        with session.started():
            start = time.perf_counter()
            try:
                for index in range(len(nb.cells)):
                    if nb.cells[index].cell_type == "code":
                        session.run_cell(index)
            except CellExecutionError as err:
                report.solution_error = f"cell {index}: {err.ename}: {err.evalue}"
                return report
            report.solution_seconds = time.perf_counter() - start
            session.client.timeout = MISTAKE_TIMEOUT_S
            for ex in notebook.exercises(nb):
                visible, hidden_code = notebook.split_test(ex.test_source)
                for mistake in mistakes.get(ex.grade_id, []):
                    broken = session.run_source(mistake.code)
                    if broken:  # the catalogue's code must define the wrong answer cleanly
                        report.outcomes.append(
                            MistakeOutcome(ex.grade_id, mistake.name, None, definition_error=broken)
                        )
                        continue
                    error = session.run_source(visible)
                    passes_visible = error is None
                    if passes_visible and hidden:
                        error = session.run_source(hidden_code)
                    report.outcomes.append(
                        MistakeOutcome(
                            ex.grade_id, mistake.name, error, passes_visible=passes_visible
                        )
                    )
                    session.run_source(RESET_MODES)  # a mistake's modes stay with it
                for answer in rights.get(ex.grade_id, []):
                    error = session.run_source(answer.code) or session.run_source(ex.test_source)
                    report.right.append(RightOutcome(ex.grade_id, answer.name, error))
                restore_error = session.run_source(ex.answer_source) or session.run_source(
                    ex.test_source
                )
                if restore_error:
                    report.restored_failures[ex.grade_id] = restore_error
    return report
