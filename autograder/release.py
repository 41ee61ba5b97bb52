"""Regenerate the student notebooks (``notebooks/``) from ``solutions/`` with nbgrader.

``release()`` writes them; ``release(check=True)`` writes nothing and lists what is stale,
so CI can fail when someone edited a solution and forgot to regenerate.

Each translated edition (``notebooks/<lang>/``, see ``autograder.translations``) is built
the same way, from the solution with its markdown cells replaced by their translation, so
cell ids, grade_ids, nbgrader metadata and code are the English ones. The check also fails
when a translated cell is missing or was translated from an older English text.
"""

from __future__ import annotations

import filecmp
import shutil
import tempfile
from pathlib import Path

from autograder import course, notebook, translations


class ReleaseError(RuntimeError):
    """nbgrader could not generate a lesson's student version."""


def generate(lesson: str, release_dir: Path, source_dir: Path | None = None) -> Path:
    """Run nbgrader's generate step for one lesson into ``release_dir/<lesson>/``.

    ``source_dir`` holds ``<lesson>/<lesson>.ipynb`` (default: ``solutions/``).
    """
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from autograder.nbgrader_settings import configure

    config = Config()
    configure(config)
    config.CourseDirectory.root = str(course.ROOT)
    config.CourseDirectory.source_directory = str(source_dir or course.SOLUTIONS)
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
            fresh = generate(lesson, Path(tmp) / "en")
            problems += _sync(fresh, course.NOTEBOOKS / lesson, f"notebooks/{lesson}", check)
            for lang in translations.LANGUAGES:
                problems += _release_translation(lesson, lang, Path(tmp) / lang, check)
    if lessons is None:
        problems += _orphans(fix=not check)
        for lang in translations.LANGUAGES:
            problems += _orphans(fix=not check, lang=lang)
    return problems


def _sync(fresh: Path, target: Path, shown: str, check: bool) -> list[str]:
    """Make ``target`` a copy of ``fresh`` (or, with ``check``, list how it differs)."""
    differences = _tree_differences(fresh, target)
    if not differences:
        return []
    if check:
        return [f"{shown}: {d}" for d in differences]
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(fresh, target)
    return []


def _release_translation(lesson: str, lang: str, work: Path, check: bool) -> list[str]:
    """Build (or check) ``notebooks/<lang>/<lesson>/`` from the lesson's translation file.

    A lesson with problems in its translation gets no notebook written: a half-English
    edition is worse than none, and the problems say which cells to translate.
    """
    target = translations.notebooks_dir(lang) / lesson
    shown = f"notebooks/{lang}/{lesson}"
    if not translations.translation_file(lang, lesson).is_file():
        if translations.edition_exists(lang):  # every lesson of an edition is translated
            return translations.problems(
                lang, lesson, notebook.read(course.solution_notebook(lesson))
            )
        if target.exists():  # an edition whose translations were removed
            if check:
                return [f"{shown}: has no translation file; remove it (`make release` does)"]
            shutil.rmtree(target)
        return []
    solution = notebook.read(course.solution_notebook(lesson))
    notebook.strip_outputs(solution)  # as the English edition is built from a stripped source
    found = translations.problems(lang, lesson, solution)
    if found:
        return found
    source = work / "source"
    # The lesson's other files (data, images) go with it, as in the English edition.
    shutil.copytree(course.SOLUTIONS / lesson, source / lesson, dirs_exist_ok=True)
    notebook.write(
        translations.translate_notebook(solution, lesson, lang), source / lesson / f"{lesson}.ipynb"
    )
    fresh = generate(lesson, work / "release", source_dir=source)
    return _sync(fresh, target, shown, check)


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


def _orphans(fix: bool, lang: str | None = None) -> list[str]:
    """Student folders whose lesson no longer exists in solutions/ (in one edition).

    The translated editions' folders (``notebooks/zh``) are not orphans of the English one.
    """
    folder = course.NOTEBOOKS if lang is None else translations.notebooks_dir(lang)
    if not folder.is_dir():
        return []
    known = set(course.lessons()) | (set(translations.LANGUAGES) if lang is None else set())
    orphans = [p for p in folder.iterdir() if p.is_dir() and p.name not in known]
    if fix:
        for p in orphans:
            shutil.rmtree(p)
        return []
    return [
        f"{p.relative_to(course.NOTEBOOKS.parent)}: has no lesson in solutions/" for p in orphans
    ]
