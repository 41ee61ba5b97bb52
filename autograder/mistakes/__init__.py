"""Catalogues of plausible wrong answers, one module per lesson topic.

Each ``autograder/mistakes/<topic>.py`` defines ``MISTAKES``: a dict from an exercise's
answer ``grade_id`` to a list of ``Mistake``. The test suite swaps each mistake into the
solution notebook's kernel and runs that exercise's test cell: every mistake must fail,
the solution must pass. That is how we know the grader tells right from wrong. At least
four per exercise, and at least one of them passes the visible asserts (catching it is the
hidden check's job); ``autograder.right_answers`` holds the other half of the proof.
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
    return load_catalogue("autograder.mistakes", topic, "MISTAKES")


def load_catalogue(package: str, topic: str, attribute: str) -> dict:
    """``<package>.<topic>.<attribute>`` as a dict; empty if the topic has no module there."""
    try:
        module = importlib.import_module(f"{package}.{topic}")
    except ModuleNotFoundError as err:
        if err.name == f"{package}.{topic}":
            return {}
        raise
    return dict(getattr(module, attribute))
