"""Regenerate the student notebooks (``notebooks/``) from ``solutions/`` with nbgrader.

``release()`` writes them; ``release(check=True)`` writes nothing and lists what is stale,
so CI can fail when someone edited a solution and forgot to regenerate.
"""

from __future__ import annotations

import filecmp
import shutil
import tempfile
from pathlib import Path

from autograder import course, notebook


class ReleaseError(RuntimeError):
    """nbgrader could not generate a lesson's student version."""


def generate(lesson: str, release_dir: Path) -> Path:
    """Run nbgrader's generate step for one lesson into ``release_dir/<lesson>/``."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from autograder.nbgrader_settings import configure

    config = Config()
    configure(config)
    config.CourseDirectory.root = str(course.ROOT)
    config.CourseDirectory.source_directory = str(course.SOLUTIONS)
    config.CourseDirectory.release_directory = str(release_dir)
    config.GenerateAssignment.no_database = True  # the release needs no gradebook (as --no-db)
    config.SaveCells.enabled = False
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    result = api.generate_assignment(lesson, force=True, create=False)
    if not result["success"]:
        raise ReleaseError(
            f"nbgrader could not release {lesson}:\n{result.get('error') or result.get('log')}"
        )
    return release_dir / lesson


def _tree_differences(expected: Path, actual: Path) -> list[str]:
    """Paths (relative) that differ between two folders, including missing and extra files."""
    if not actual.is_dir():
        return [f"{actual.name}/ is missing"]
    expected_files = {p.relative_to(expected) for p in expected.rglob("*") if p.is_file()}
    actual_files = {p.relative_to(actual) for p in actual.rglob("*") if p.is_file()}
    differences = [f"{p} is missing" for p in sorted(expected_files - actual_files)]
    differences += [f"{p} should not be there" for p in sorted(actual_files - expected_files)]
    differences += [
        f"{p} is stale"
        for p in sorted(expected_files & actual_files)
        if not filecmp.cmp(expected / p, actual / p, shallow=False)
    ]
    return differences


def release(lessons: list[str] | None = None, check: bool = False) -> list[str]:
    """Regenerate student notebooks (or, with ``check``, report how they are out of date).

    Also strips outputs from the solution notebooks (or reports them with ``check``).
    Returns a list of problems found; empty means everything was (or is) up to date.
    """
    wanted = lessons or course.lessons()
    unknown = sorted(set(wanted) - set(course.lessons()))
    if unknown:
        raise ReleaseError(f"no such lesson in solutions/: {', '.join(unknown)}")
    problems: list[str] = []
    for lesson in wanted:
        problems += _outputs_in_solution(lesson, fix=not check)
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        for lesson in wanted:
            fresh = generate(lesson, Path(tmp))
            target = course.NOTEBOOKS / lesson
            differences = _tree_differences(fresh, target)
            if not differences:
                continue
            if check:
                problems += [f"notebooks/{lesson}: {d}" for d in differences]
            else:
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(fresh, target)
    if lessons is None:
        problems += _orphans(fix=not check)
    return problems


def _outputs_in_solution(lesson: str, fix: bool) -> list[str]:
    path = course.solution_notebook(lesson)
    nb = notebook.read(path)
    if not notebook.has_outputs(nb):
        return []
    if fix:
        notebook.strip_outputs(nb)
        notebook.write(nb, path)
        return []
    return [f"solutions/{lesson}: has outputs or execution counts (run `make release`)"]


def _orphans(fix: bool) -> list[str]:
    """Student folders whose lesson no longer exists in solutions/."""
    if not course.NOTEBOOKS.is_dir():
        return []
    known = set(course.lessons())
    orphans = [p for p in course.NOTEBOOKS.iterdir() if p.is_dir() and p.name not in known]
    if fix:
        for p in orphans:
            shutil.rmtree(p)
        return []
    return [f"notebooks/{p.name}: has no lesson in solutions/" for p in orphans]
