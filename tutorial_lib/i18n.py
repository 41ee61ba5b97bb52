"""The language of the course's messages: English, or a translation from ``locale/``.

Messages are marked with ``_()`` and looked up in the standard library's gettext. The
catalogues are kept as ``.po`` text and compiled
into gettext's binary form in memory when first needed: tutorial_lib is installed on Colab
straight from git with pip, where no build step would run ``msgfmt``, and a compiled ``.mo``
committed beside its ``.po`` could silently fall behind it.

A language's catalogue is ``locale/<lang>/LC_MESSAGES/course.po`` (tutorial_lib's checks and
the grader's own messages) together with one file per lesson, ``locale/<lang>/lessons/
<lesson>.po`` (its test cells' messages and hints, its hidden checks' and its catalogued
mistakes'): a lesson's translator edits one file.

In a notebook, messages are marked with ``tr()`` (``from tutorial_lib import tr``): IPython
rebinds ``_`` to the last result after every cell, so ``_`` cannot be trusted there.

Which language, first match wins:

1. ``with language("zh"):`` around the code (the grader's, while it judges a Chinese
   submission);
2. the ``COURSE_LANG`` environment variable (``zh``, ``zh_CN``...), which
   ``set_language("zh")`` sets;
3. in JupyterLab, the notebook's path: a notebook under ``notebooks/zh/`` speaks Chinese
   (Jupyter tells its kernels the path in ``JPY_SESSION_NAME``);
4. English.
"""

from __future__ import annotations

import ast
import contextlib
import contextvars
import functools
import gettext
import io
import os
import re
import struct
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

ENV = "COURSE_LANG"
DOMAIN = "course"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
ENGLISH = "en"

_chosen: contextvars.ContextVar[str | None] = contextvars.ContextVar("course_lang", default=None)


def normalise(lang: str | None) -> str:
    """``zh_CN.UTF-8``, ``zh-Hans``, ``ZH`` -> ``zh``; empty, None or not a language code
    (it names a folder of ``locale/``: never a path) -> English."""
    code = (lang or "").strip().replace("-", "_").split("_")[0].split(".")[0].lower()
    return code if re.fullmatch(r"[a-z]{2,3}", code) else ENGLISH


@functools.cache  # asked for every message; the catalogues do not change while it runs
def available() -> tuple[str, ...]:
    """The languages messages can be in: English and every catalogue in ``locale/``."""
    found = {p.parent.parent.name for p in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po")}
    return (ENGLISH, *sorted(found))


def _from_session_path() -> str | None:
    """``zh`` for a JupyterLab kernel whose notebook is in a ``zh`` folder, else None."""
    path = os.environ.get("JPY_SESSION_NAME", "")
    # The lesson's folder or the one above it (notebooks/zh/01_tensors/01_tensors.ipynb):
    # not any folder of the path, which may be a user's home named like a language.
    folders = PurePosixPath(path.replace("\\", "/")).parts[:-1][-2:]
    return next((p for p in folders if p in available()[1:]), None)


def current() -> str:
    """The language messages are in now (see the module's docstring for the order)."""
    return normalise(_chosen.get() or os.environ.get(ENV) or _from_session_path())


def set_language(lang: str | None) -> None:
    """Messages in ``lang`` from now on, in this process and the ones it starts (None: back
    to the default). It sets ``COURSE_LANG``: a context variable would not outlive the
    notebook cell that set it, since ipykernel runs each cell in a task of its own."""
    if lang:
        os.environ[ENV] = normalise(lang)
    else:
        os.environ.pop(ENV, None)


@contextlib.contextmanager
def language(lang: str | None) -> Iterator[None]:
    """Messages in ``lang`` inside the ``with`` block (this thread or task only)."""
    token = _chosen.set(normalise(lang) if lang else None)
    try:
        yield
    finally:
        _chosen.reset(token)


def gettext_for(lang: str, message: str) -> str:
    """``message`` translated into ``lang`` (itself where there is no translation)."""
    return catalogue(normalise(lang)).gettext(message)


def _(message: str) -> str:
    """``message`` in the current language: mark every message a learner reads with this."""
    return gettext_for(current(), message)


tr = _  # the notebooks' name for it (see the module's docstring)


def N_(message: str) -> str:  # gettext's conventional name
    """Mark ``message`` for translation and return it unchanged: for tables built when a
    module is imported, whose entries ``_()`` translates later, when one is shown (the
    language is the learner's at that moment, not the importer's)."""
    return message


@functools.cache
def catalogue(lang: str) -> gettext.NullTranslations:
    """The gettext translations of ``lang``: English (no-op) when it has no catalogue."""
    paths = catalogue_files(lang)
    if lang == ENGLISH or not paths:
        return gettext.NullTranslations()
    entries: dict[str, str] = {}
    for path in paths:
        entries.update(read_po(path.read_text("utf-8"), path.name))
    return gettext.GNUTranslations(io.BytesIO(compile_po(entries)))


def catalogue_files(lang: str) -> list[Path]:
    """The ``.po`` files of ``lang``: the course's, then one per lesson (see the docstring)."""
    folder = LOCALE_DIR / lang
    shared = folder / "LC_MESSAGES" / f"{DOMAIN}.po"
    return [p for p in [shared, *sorted(folder.glob("lessons/*.po"))] if p.is_file()]


def read_po(text: str, name: str = f"{DOMAIN}.po") -> dict[str, str]:
    """msgid -> msgstr of a ``.po`` file (its header under ""); untranslated entries left out.

    Only what this course's catalogues use: ``msgid``/``msgstr`` with continued string lines,
    comments, and ``#, fuzzy`` entries (skipped, as msgfmt does). No plurals or contexts.
    """
    entries: dict[str, str] = {}
    flags: set[str] = set()
    msgid: str | None = None
    msgstr: str | None = None

    def flush() -> None:
        nonlocal msgid, msgstr
        if msgid is not None and msgstr and "fuzzy" not in flags:
            entries[msgid] = msgstr
        msgid = msgstr = None
        flags.clear()

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        starts_entry = not line or line.startswith(("#", "msgid "))
        if starts_entry and msgstr is not None:
            flush()
        if line.startswith("#,"):
            flags.update(flag.strip() for flag in line[2:].split(","))
        elif not line or line.startswith("#"):
            continue
        elif line.startswith("msgid "):
            msgid = _po_string(line[6:], name, number)
        elif line.startswith("msgstr ") and msgid is not None:
            msgstr = _po_string(line[7:], name, number)
        elif line.startswith('"') and msgstr is not None:
            msgstr += _po_string(line, name, number)
        elif line.startswith('"') and msgid is not None:
            msgid += _po_string(line, name, number)
        else:
            raise ValueError(f"{name} line {number}: cannot read {raw!r}")
    flush()
    return entries


def _po_string(token: str, name: str, number: int) -> str:
    token = token.strip()
    if not (token.startswith('"') and token.endswith('"')):
        raise ValueError(f"{name} line {number}: expected a quoted string, got {token!r}")
    return ast.literal_eval(token)


def compile_po(entries: dict[str, str]) -> bytes:
    """The GNU ``.mo`` bytes of ``entries`` (what msgfmt writes), for ``GNUTranslations``."""
    # gettext decodes with the header's charset (ASCII without one): always say UTF-8.
    entries = {"": "Content-Type: text/plain; charset=UTF-8\n", **entries}
    keys = sorted(entries)
    ids = [k.encode("utf-8") for k in keys]
    strs = [entries[k].encode("utf-8") for k in keys]
    header_size = 7 * 4
    ids_table = header_size
    strs_table = ids_table + 8 * len(keys)
    data_start = strs_table + 8 * len(keys)
    offsets, blob = [], b""
    for item in ids + strs:
        offsets.append((len(item), data_start + len(blob)))
        blob += item + b"\0"
    table = b"".join(struct.pack("<II", length, start) for length, start in offsets)
    header = struct.pack("<Iiiiiii", 0x950412DE, 0, len(keys), ids_table, strs_table, 0, 0)
    return header + table + blob
