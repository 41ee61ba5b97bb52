"""The authors' harness: ``python -m autograder trusted LESSON``.

For each exercise of a lesson, :func:`check_lesson` runs the hidden check
(:func:`autograder.judge.run_check`) across the data boundary, in this process, with no
kernel: the solution and every catalogued right answer must pass, every catalogued mistake
must fail and should be named by :func:`autograder.misconceptions.misconception`. Where
the check declares contracts (property-based, :mod:`autograder.contracts`), the first
mistake it catches is judged a second time and must get the same verdict, word for word. The
:class:`HarnessReport` counts them and lists what went wrong, so an author learns in
seconds that a check is too strict, too lax or cannot recognise a mistake.

What it does not do: it grades no submission, starts no kernel and runs no sandbox (the
grade command does: ``autograder.grading``), and it runs only the course's own code, never
a learner's.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field

from autograder import course, right_answers
from autograder.contracts import without_shrinking
from autograder.judge import InProcessChannel, contracts, run_check, specs
from autograder.misconceptions import misconception, solution_namespace, with_code
from autograder.mistakes import catalogue


@dataclass
class HarnessReport:
    """What :func:`check_lesson` found in one lesson: counts, and each problem as a line."""

    lesson: str
    failures: list[str] = field(default_factory=list)
    exercises: int = 0
    mistakes: int = 0
    recognised: int = 0
    right_answers: int = 0
    seconds: float = 0.0


def check_lesson(lesson: str, only: str | None = None, name: bool = True) -> HarnessReport:
    """Solution and every catalogued right answer pass each check run across the boundary;
    each mistake fails and, with ``name``, is named.

    Naming costs as much as judging (each failing mistake's probes are replayed on the
    mistakes before it) and only ``recognised`` reports it, so a caller that reads only
    ``failures`` (the test suite) passes ``name=False``. Without naming, contracts also skip
    shrinking a failing input to its smallest (a tenth to a fifth of the time, measured on
    03_modules and 11_gpt): every verdict is the same, only a message may name a larger input.
    """
    with contextlib.nullcontext() if name else without_shrinking():
        return _check_lesson(lesson, only, name)


def _check_lesson(lesson: str, only: str | None, name: bool) -> HarnessReport:
    start = time.perf_counter()
    report = HarnessReport(lesson)
    namespace = solution_namespace(lesson)
    mistakes = catalogue(course.topic(lesson))
    rights = right_answers.catalogue(course.topic(lesson))
    for spec in specs(lesson).values():
        if only and spec.exercise != only:
            continue
        report.exercises += 1
        verdict = run_check(spec, InProcessChannel(namespace))
        if not verdict.passed:
            report.failures.append(f"{spec.exercise}: the solution fails: {verdict.message}")
        for answer in rights.get(spec.exercise, []):
            report.right_answers += 1
            ns = with_code(namespace, answer.code)
            if ns is None:
                report.failures.append(f"{spec.exercise}/{answer.name}: its code does not run")
                continue
            verdict = run_check(spec, InProcessChannel(ns))
            if not verdict.passed:
                report.failures.append(
                    f"{spec.exercise}/{answer.name}: a right answer fails: {verdict.message}"
                )
        replayed = not _has_contracts(spec)  # a contract's first caught mistake is judged twice
        for mistake in mistakes.get(spec.exercise, []):
            report.mistakes += 1
            ns = with_code(namespace, mistake.code)
            if ns is None:
                report.failures.append(f"{spec.exercise}/{mistake.name}: its code does not run")
                continue
            verdict = run_check(spec, InProcessChannel(ns))
            if verdict.passed:
                report.failures.append(f"{spec.exercise}/{mistake.name}: passes the trusted check")
                continue
            if not replayed:
                replayed = True
                again = run_check(spec, InProcessChannel(ns))
                if (again.passed, again.message) != (verdict.passed, verdict.message):
                    report.failures.append(
                        f"{spec.exercise}/{mistake.name}: judged twice, two verdicts: "
                        f"{verdict.message!r} then {again.message!r}"
                    )
            if name:
                named = misconception(spec, verdict.calls, namespace, mistakes[spec.exercise])
                report.recognised += named is not None
    report.seconds = time.perf_counter() - start
    return report


def _has_contracts(spec) -> bool:
    """Whether the exercise's hidden check declares contracts (autograder.contracts.uses)."""
    return bool(contracts(spec.topic, spec.check))
