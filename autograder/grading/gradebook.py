"""Put a graded submission's scores into the class's nbgrader gradebook."""

from __future__ import annotations

import warnings
from pathlib import Path


def record(out: Path, data: dict) -> None:
    """Scores into ``OUT/gradebook.db``, where formgrader reads them."""
    from nbgrader.api import Gradebook
    from sqlalchemy.exc import SAWarning

    student, assignment = data["student"], data["assignment"]
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gradebook:
        # nbgrader's own submission code trips SQLAlchemy's autoflush warning; it is harmless.
        warnings.simplefilter("ignore", SAWarning)
        gradebook.update_or_create_student(student)
        gradebook.update_or_create_submission(assignment, student)
        for test in data["tests"]:
            grade = gradebook.find_grade(test["test_id"], assignment, assignment, student)
            grade.auto_score = test["score"]
        gradebook.db.commit()
