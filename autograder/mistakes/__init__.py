"""Catalogues of plausible wrong answers, one module per lesson topic.

Each ``autograder/mistakes/<topic>.py`` defines ``MISTAKES``: a dict from an exercise's
answer ``grade_id`` to a list of ``Mistake``. The test suite swaps each mistake into the
solution notebook's kernel and runs that exercise's test cell: every mistake must fail,
the solution must pass. That is how we know the grader tells right from wrong.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Mistake:
    """A wrong answer a learner would plausibly write, and what to tell them about it."""

    name: str  # short, kebab-case: "reshape-not-permute"
    message: str  # what a student whose answer behaves like this should be told
    code: str  # a complete replacement for the answer cell


def catalogue(topic: str) -> dict[str, list[Mistake]]:
    """The ``MISTAKES`` dict of ``autograder.mistakes.<topic>``; empty if there is no module."""
    try:
        module = importlib.import_module(f"autograder.mistakes.{topic}")
    except ModuleNotFoundError as err:
        if err.name == f"autograder.mistakes.{topic}":
            return {}
        raise
    return dict(module.MISTAKES)
