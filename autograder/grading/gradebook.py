"""Put graded submissions' scores into the class's nbgrader gradebook."""

from __future__ import annotations

import warnings
from pathlib import Path


class ClassGradebook:
    """``OUT/gradebook.db``, where formgrader reads scores; opened lazily, once per run.

    Opening nbgrader's Gradebook builds a SQLAlchemy engine, which costs more than the
    writes themselves; the grade command's main process records every result through one.
    """

    def __init__(self, out: Path):
        self.out = out
        self._gradebook = None

    def record(self, data: dict) -> None:
        from sqlalchemy.exc import SAWarning

        gradebook = self._open()
        student, assignment = data["student"], data["assignment"]
        with warnings.catch_warnings():
            # nbgrader's own submission code trips SQLAlchemy's autoflush warning; harmless.
            warnings.simplefilter("ignore", SAWarning)
            gradebook.update_or_create_student(student)
            gradebook.update_or_create_submission(assignment, student)
            for test in data["tests"]:
                grade = gradebook.find_grade(test["test_id"], assignment, assignment, student)
                grade.auto_score = test["score"]
            gradebook.db.commit()  # each result is saved at once: an interrupted run keeps it

    def _open(self):
        if self._gradebook is None:
            from nbgrader.api import Gradebook

            self._gradebook = Gradebook(f"sqlite:///{self.out / 'gradebook.db'}")
        return self._gradebook

    def close(self) -> None:
        if self._gradebook is not None:
            self._gradebook.close()
            self._gradebook = None
