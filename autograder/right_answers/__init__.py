"""Catalogues of right answers unlike the solution, one module per lesson topic.

Each ``autograder/right_answers/<topic>.py`` defines ``RIGHT_ANSWERS``: a dict from an
exercise's answer ``grade_id`` to a list of ``RightAnswer``. They are what a careful learner
might write from the exercise's text alone: another API, another but equivalent return type
where the text allows it, ``cuda:0`` for ``cuda``, a subclass check for a duck-typed one.
The test suite swaps each into the solution's kernel (``verify``) and runs it across the
boundary (``trusted``): every one must pass. A check that rejects one is a bug in the check.
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.mistakes import load_catalogue


@dataclass(frozen=True)
class RightAnswer:
    """A correct answer written differently from the solution, and why it is still right."""

    name: str  # short, kebab-case: "einsum-instead-of-matmul"
    why: str  # how it differs from the solution, and why the text allows it
    code: str  # a complete replacement for the answer cell


def catalogue(topic: str) -> dict[str, list[RightAnswer]]:
    """The ``RIGHT_ANSWERS`` dict of ``autograder.right_answers.<topic>``; empty if none."""
    return load_catalogue("autograder.right_answers", topic, "RIGHT_ANSWERS")
