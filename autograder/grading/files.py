"""Reading what students submitted: never through a symbolic link, never quoting its bytes.

A submitted "notebook" that is a link to the solution would be graded as the solution; one
that links to a system file would put that file's first line into the student's feedback
(nbformat's own error messages quote the start of what they could not parse). Every route
reads submitted files through here.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path


class NotAFile(OSError):
    """A submitted path that is a symbolic link, or not a regular file."""


def linked(path: Path, root: Path) -> Path | None:
    """The first part of ``path`` below ``root`` that is a symbolic link (None: no link)."""
    for part in [*reversed(path.relative_to(root).parents), path.relative_to(root)]:
        if part != Path(".") and (root / part).is_symlink():
            return root / part
    return None


def read_bytes(path: Path) -> bytes:
    """A regular file's bytes, opened without following a link (``NotAFile`` otherwise)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise NotAFile(f"{path.name} is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise NotAFile(f"{path.name} is not a regular file")
        return f.read()


def why_not_a_notebook(name: str, err: Exception) -> str:
    """Why a file is not a notebook, in words that quote none of its content."""
    if isinstance(err, json.JSONDecodeError):
        return f"{name} is not valid notebook JSON (line {err.lineno}, column {err.colno})"
    if isinstance(err, UnicodeDecodeError):
        return f"{name} is not UTF-8 text (byte {err.start} cannot be read)"
    if type(err).__name__ == "NotJSONError":  # nbformat's: its own text quotes the bytes
        return f"{name} is not valid notebook JSON"
    if isinstance(err, NotAFile):
        return f"{err}: submit the notebook file itself"
    return f"{name} is not a Jupyter notebook ({type(err).__name__})"
