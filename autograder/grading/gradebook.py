"""Put a graded submission into the class's nbgrader gradebook and write its HTML feedback."""

from __future__ import annotations

import warnings
from pathlib import Path


def _api(out: Path):
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from autograder.nbgrader_settings import configure

    config = Config()
    configure(config)
    config.CourseDirectory.root = str(out)
    return NbGraderAPI(CourseDirectory(config=config), config=config)


def record(out: Path, data: dict) -> None:
    """Scores into ``OUT/gradebook.db`` (formgrader reads them), then the feedback HTML."""
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
    outcome = _api(out).generate_feedback(assignment, student, force=True)
    if not outcome["success"]:
        data["message"] = (data.get("message", "") + " feedback could not be generated").strip()
