"""The class's nbgrader course (OUT) and its gradebook: made without a subprocess, and fed
graded scores."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path

from autograder import course
from autograder.nbgrader_course import course_config, write_config


def prepare_course(out: Path, assignments: list[str]) -> None:
    """Make OUT an nbgrader course that knows each assignment (source copied from solutions/).

    In this process, through nbgrader's API: a subprocess would import nbgrader again, and
    everything here comes before the first submission can be graded.
    """
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    out.mkdir(parents=True, exist_ok=True)
    write_config(out)  # formgrader opens OUT for manual review
    if not (out / "gradebook.db").exists():  # a re-run keeps the class's gradebook
        create_gradebook(out / "gradebook.db")
    config = course_config(out)
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    for assignment in assignments:
        source = out / "source" / assignment
        if source.exists():
            shutil.rmtree(source)
        shutil.copytree(course.SOLUTIONS / assignment, source)
        outcome = api.generate_assignment(assignment, force=True)
        if not outcome["success"]:
            log = "\n".join(filter(None, [outcome.get("log"), outcome.get("error")]))
            raise RuntimeError(f"nbgrader could not generate {assignment}:\n{log[-4000:]}")


def course_template(out: Path, assignment: str) -> Path:
    """A minimal course a worker copies: the assignment's source and the class gradebook.

    ``out`` is any course ``prepare_course`` made: OUT here, a scratch one on a Dask worker.
    """
    template = out / ".work" / "template" / assignment
    if template.exists():
        shutil.rmtree(template)
    shutil.copytree(out / "source" / assignment, template / "source" / assignment)
    shutil.copy(out / "gradebook.db", template / "gradebook.db")
    return template


def create_gradebook(db_path: Path) -> None:
    """An empty nbgrader gradebook at ``db_path``, made in this process.

    nbgrader makes a new gradebook by running ``alembic heads`` in a subprocess to learn the
    schema's version: about 2 s here, all of it before the first submission can be graded,
    and it needs ``alembic`` on PATH. Here the version comes from nbgrader's own migration
    scripts, read in-process; the tables are nbgrader's own. nbgrader then finds an existing
    database and skips its subprocess.
    """
    import nbgrader
    from alembic.script import ScriptDirectory
    from nbgrader.api import Base
    from sqlalchemy import create_engine, text

    migrations = Path(nbgrader.__file__).parent / "alembic"
    head = ScriptDirectory(str(migrations)).get_current_head()
    engine = create_engine(f"sqlite:///{db_path}")
    try:
        Base.metadata.create_all(bind=engine)
        with engine.begin() as connection:
            connection.execute(
                text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
            )
            connection.execute(
                text("INSERT INTO alembic_version (version_num) VALUES (:head)"), {"head": head}
            )
    finally:
        engine.dispose()


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
                # nbgrader's rule (SaveAutoGrades): review only a cell graded by hand before
                grade.needs_manual_grade = grade.manual_score is not None
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
