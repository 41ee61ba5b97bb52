"""Translated editions of the lessons, kept in step with the English source.

``solutions/`` stays the only source of code, tests and structure. A translation is one
Markdown file per lesson, ``translations/<lang>/<lesson>.md``, with one block per markdown
cell of the solution notebook::

    <!-- cell: cell-004 en: 3f2a9c01b7de -->
    译文……

The header names the cell (its nbformat id) and the first 12 hex digits of the sha256 of the
English cell's source it was translated from. When the English cell changes, the hash no
longer matches and the release check names the cell: a translation can lag, never silently.
Code cells are never translated, so answers, visible tests and hidden checks are the same.
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from autograder import course, notebook

# The editions the release can build, beside the English one in notebooks/. An edition
# exists where its folder ``translations/<lang>/`` does; then every lesson must have its
# translation file, so a new lesson cannot be released without one.
LANGUAGES = ("zh",)

# Key in a notebook's metadata that names its language; absent means English. The grader
# reads it to give feedback in the learner's language.
LANGUAGE_KEY = "language"

HEADER = re.compile(r"^<!-- cell: (\S+) en: ([0-9a-f]{12}) -->$", re.MULTILINE)


class TranslationError(ValueError):
    """A translation file cannot be read as blocks (text before the first header, a cell twice)."""


@dataclass(frozen=True)
class Block:
    """One translated markdown cell: which cell, which English text it translates, the text."""

    cell_id: str
    en_hash: str
    text: str


def en_hash(source: str) -> str:
    """The short hash a block records of the English cell it translates."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def translations_dir(lang: str) -> Path:
    """``translations/<lang>/`` beside ``solutions/`` (a scratch course's, in tests)."""
    return course.SOLUTIONS.parent / "translations" / lang


def translation_file(lang: str, lesson: str) -> Path:
    return translations_dir(lang) / f"{lesson}.md"


def edition_exists(lang: str) -> bool:
    return translations_dir(lang).is_dir()


def notebooks_dir(lang: str) -> Path:
    """The folder of one edition's student notebooks: ``notebooks/<lang>/``."""
    return course.NOTEBOOKS / lang


def translated_lessons(lang: str) -> list[str]:
    """Lessons (present in solutions/) that have a translation file in ``lang``."""
    return [lesson for lesson in course.lessons() if translation_file(lang, lesson).is_file()]


def parse(text: str, where: str = "translation") -> dict[str, Block]:
    """The blocks of a translation file, by cell id, in file order."""
    parts = HEADER.split(text)
    if parts[0].strip():
        raise TranslationError(
            f"{where}: text before the first '<!-- cell: ... en: ... -->' header; every "
            "block must start with its header line"
        )
    blocks: dict[str, Block] = {}
    for i in range(1, len(parts), 3):
        cell_id, digest, body = parts[i], parts[i + 1], parts[i + 2]
        if cell_id in blocks:
            raise TranslationError(f"{where}: {cell_id} is translated twice; keep one block")
        blocks[cell_id] = Block(cell_id, digest, body.strip("\n"))
    return blocks


def read(lang: str, lesson: str) -> dict[str, Block]:
    path = translation_file(lang, lesson)
    return parse(path.read_text(encoding="utf-8"), str(shown_path(path)))


def markdown_cells(nb: NotebookNode) -> list[NotebookNode]:
    return [cell for cell in nb.cells if cell.cell_type == "markdown"]


# What is left of a markdown cell once code, math, links' targets and HTML are taken out:
# if it still has English words, a block holding the same text has not been translated.
_NOT_PROSE = re.compile(
    r"```.*?```|`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\]\([^)]*\)|<[^>]+>|https?://\S+", re.DOTALL
)
_ENGLISH_WORD = re.compile(r"[A-Za-z]{3,}")


def has_prose(markdown: str) -> bool:
    """True when a cell has English words to translate (not only code, math or links)."""
    return len(_ENGLISH_WORD.findall(_NOT_PROSE.sub(" ", markdown))) >= 2


@dataclass(frozen=True)
class Todo:
    """A cell a translator has to (re)translate, and why."""

    cell_id: str
    why: str  # "missing", "stale" or "English"


def todo(nb: NotebookNode, blocks: dict[str, Block]) -> list[Todo]:
    """The markdown cells of ``nb`` whose translation is missing, stale or still English."""
    found = []
    for cell in markdown_cells(nb):
        block = blocks.get(cell.id)
        if block is None:
            found.append(Todo(cell.id, "missing"))
        elif block.en_hash != en_hash(cell.source):
            found.append(Todo(cell.id, "stale"))
        elif block.text == cell.source.strip("\n") and has_prose(cell.source):
            found.append(Todo(cell.id, "English"))
    return found


_WHY = {
    "missing": "has no translated block",
    "stale": "changed in English since it was translated (its en: hash no longer matches)",
    "English": "is still the English text",
}


def problems(lang: str, lesson: str, nb: NotebookNode) -> list[str]:
    """What keeps a lesson's translation from building: one line per cell, naming it."""
    path = translation_file(lang, lesson)
    shown = shown_path(path)
    command = f"python -m autograder translate {lang} {lesson}"
    if not path.is_file():
        if not edition_exists(lang):
            return []
        return [f"{shown}: missing; run `{command}` to start it"]
    try:
        blocks = read(lang, lesson)
    except TranslationError as err:
        return [str(err)]
    found = [f"{shown}: {t.cell_id} {_WHY[t.why]}" for t in todo(nb, blocks)]
    markdown_ids = {cell.id for cell in markdown_cells(nb)}
    found += [
        f"{shown}: {cell_id} is not a markdown cell of solutions/{lesson}; delete its block"
        for cell_id in blocks
        if cell_id not in markdown_ids
    ]
    if found:
        found.append(f"{shown}: run `{command}` to list and refresh these cells")
    return found


def colab_url(lesson: str, lang: str) -> str:
    """The Open-in-Colab address of a lesson's student notebook in ``lang``."""
    english = f"/notebooks/{lesson}/{lesson}.ipynb"
    return course.colab_url(lesson).replace(english, f"/notebooks/{lang}/{lesson}/{lesson}.ipynb")


def translate_notebook(nb: NotebookNode, lesson: str, lang: str) -> NotebookNode:
    """A copy of the solution ``nb`` with its markdown in ``lang``; code cells untouched.

    The Colab badge points at the translated student notebook, and the notebook's metadata
    names the language. Raises ``TranslationError`` when a markdown cell has no block
    (``problems`` says which, for the release check).
    """
    blocks = read(lang, lesson)
    out = copy.deepcopy(nb)
    english_badge, translated_badge = course.colab_url(lesson), colab_url(lesson, lang)
    for cell in markdown_cells(out):
        block = blocks.get(cell.id)
        if block is None:
            raise TranslationError(f"{shown_path(translation_file(lang, lesson))}: no {cell.id}")
        cell.source = block.text.replace(english_badge, translated_badge)
    out.metadata[LANGUAGE_KEY] = lang
    return out


def skeleton(nb: NotebookNode, blocks: dict[str, Block]) -> str:
    """The translation file refreshed against ``nb``: kept blocks as they are, every other
    markdown cell (new, or changed in English) with its current English text and hash, in
    notebook order. Blocks of cells that are gone are dropped."""
    parts = []
    for cell in markdown_cells(nb):
        digest = en_hash(cell.source)
        block = blocks.get(cell.id)
        text = block.text if block and block.en_hash == digest else cell.source.strip("\n")
        parts.append(f"<!-- cell: {cell.id} en: {digest} -->\n{text}\n")
    return "\n".join(parts)


def refresh(lang: str, lesson: str, nb: NotebookNode) -> tuple[Path, list[Todo]]:
    """Write the refreshed translation file of a lesson; return it and what is left to do.

    What is listed is computed before the refresh, so a stale cell is still called stale
    (after the refresh its block holds the English text and would read as "English").
    """
    path = translation_file(lang, lesson)
    blocks = read(lang, lesson) if path.is_file() else {}
    left = todo(nb, blocks)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(skeleton(nb, blocks), encoding="utf-8")
    return path, left


def shown_path(path: Path) -> Path:
    """A path as a contributor types it: relative to the checkout where possible."""
    try:
        return path.relative_to(course.ROOT)
    except ValueError:
        return path


def submission(lesson: str, lang: str, answers: NotebookNode) -> NotebookNode | None:
    """What a learner of the ``lang`` edition hands in: its released student notebook with
    the answer cells of ``answers`` (the solution, say). None where the edition is not built.

    Tests grade this to show that a translated notebook scores as the English one does.
    """
    path = notebooks_dir(lang) / lesson / f"{lesson}.ipynb"
    if not path.is_file():
        return None
    nb = notebook.read(path)
    by_id = {
        notebook.nbgrader_meta(cell)["grade_id"]: cell.source
        for cell in answers.cells
        if notebook.is_answer(cell)
    }
    for cell in nb.cells:
        if notebook.is_answer(cell):
            cell.source = by_id[notebook.nbgrader_meta(cell)["grade_id"]]
    return nb
