"""The misconception matcher: which catalogued mistake behaves like a learner's answer?

When a hidden check fails, :func:`misconception` replays the probes the check ran (the
:class:`~autograder.judge.Call` values its verdict recorded) on every mistake catalogued
for the exercise in ``autograder/mistakes/`` and names the first one whose results are the
same data as the learner's, so the feedback can give that mistake's message. Given the
test cell's :class:`Visible` tests and how they ended for the learner, a mistake must also
end them the same way. The mistakes are our own code, so they run here, in copies of the
namespace the solution notebook leaves (:func:`solution_namespace`, :func:`with_code`).

What it does not do: it never runs a learner's code (only the recorded results of the
probes reach it), and it does not decide whether an answer passes: that is the judge's
verdict (:mod:`autograder.judge`), and a mistake that matches nothing changes no score.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import math
import os
import re
import shutil
import tempfile
import threading
from dataclasses import dataclass
from typing import Any

import torch

from autograder import boundary, course, notebook, wire
from autograder.judge import Call, CheckSpec, InProcessChannel, specs
from autograder.mistakes import Mistake, catalogue


def same_data(a: Any, b: Any, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    """Equal as data, tensors and floats within a tolerance."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        a, b = a.detach().cpu(), b.detach().cpu()
        if a.dtype.is_floating_point or a.dtype.is_complex:
            return bool(torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
        return bool(torch.equal(a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=rtol, abs_tol=atol)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(
            same_data(x, y, rtol, atol) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_data(a[k], b[k], rtol, atol) for k in a)
    return a == b


def _outcome(envelope: str) -> Any:
    """The decoded envelope, with an exception's message dropped (it often holds addresses)."""
    try:
        outcome = wire.decode(envelope)
    except wire.WireError:
        return None
    if type(outcome) is dict and "raised" in outcome:
        return {"raised": outcome["raised"][0]}
    return outcome


def misconception(
    spec: CheckSpec,
    calls: list[Call],
    namespace: dict,
    mistakes: list[Mistake],
    visible: Visible | None = None,
) -> Mistake | None:
    """The first catalogued mistake whose probes give what the learner's answer gave.

    ``namespace`` is the solution notebook's (see :func:`solution_namespace`); each mistake's
    code is run in a copy of it. The recorded calls are replayed as they were made. A check
    stops at its first failure, so a few calls may fit several mistakes; given ``visible``
    (the test cell's visible tests and how they ended for the learner), a mistake must also
    end them the same way, so a hint never contradicts the error the learner sees.
    """
    if not calls:
        return None
    seen = [_outcome(c.envelope) for c in calls]
    for mistake in mistakes:
        ns = with_code(namespace, mistake.code)
        if ns is None:
            continue
        channel = InProcessChannel(ns)
        try:
            if all(
                same_data(
                    _outcome(channel.run(c.probe_module, c.probe_name, c.name, c.case_json)), s
                )
                for c, s in zip(calls, seen, strict=True)
            ) and (visible is None or visible_ending(visible.code, ns) == visible.ending):
                return mistake
        except Exception:  # a mistake that cannot even be probed matches nothing
            continue
    return None


@dataclass(frozen=True)
class Visible:
    """A test cell's visible tests (hidden region removed) and how they ended for the learner."""

    code: str
    ending: str | None  # None: they passed; else error_signature(...)


NUMBER = re.compile(r"-?\d+(\.\d+)?(e-?\d+)?")


def error_signature(ename: str, evalue: str) -> str:
    """An error as its type and first line, numbers masked: the same mistake on other random
    inputs reads the same."""
    first = (str(evalue).strip().splitlines() or [""])[0]
    return f"{ename}: {NUMBER.sub('#', first)}"


def visible_ending(code: str, namespace: dict) -> str | None:
    """How ``code`` (visible tests, trusted) ends in a copy of ``namespace``."""
    import warnings

    ns = dict(namespace)
    quiet = io.StringIO()
    try:
        with (
            contextlib.redirect_stdout(quiet),
            contextlib.redirect_stderr(quiet),
            warnings.catch_warnings(),
            # A mistake's visible tests may switch autograd off for good (09's
            # grad-mode-left-off): this is the grader's process, which judges more answers.
            boundary.process_modes_kept(),
        ):
            warnings.simplefilter("ignore")
            exec(_compiled(code, "<visible tests>"), ns)
    except Exception as err:
        return error_signature(type(err).__name__, str(err))
    return None


def name_misconception(
    lesson: str, spec: CheckSpec, calls: list[Call], visible: Visible | None = None
) -> Mistake | None:
    """:func:`misconception` for a grading worker. The solution runs here only as far as the
    exercise's test cell, once per lesson and process (:func:`solution_namespace`): a wrong
    answer early in a lesson does not wait for the whole lesson to run."""
    exercise = spec.exercise or _exercise_of(lesson, spec.test_id)
    mistakes = catalogue(course.topic(lesson)).get(exercise, [])
    if not mistakes or not calls:
        return None
    before = next(ex.test_index for ex in course.exercises(lesson) if ex.test_id == spec.test_id)
    return misconception(spec, calls, solution_namespace(lesson, before), mistakes, visible)


def _exercise_of(lesson: str, test_id: str) -> str:
    found = specs(lesson).get(test_id)
    return found.exercise if found else ""


def with_code(namespace: dict, code: str) -> dict | None:
    """A copy of ``namespace`` after running ``code`` (a catalogued answer, our own) in it;
    None if that code raises."""
    ns = dict(namespace)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "<mistake>", "exec"), ns)
    except Exception:
        return None
    return ns


@dataclass
class _SolutionRun:
    """A lesson's solution, run here as far as it was needed so far."""

    namespace: dict
    scratch: str  # the working folder of its cells: what they write lands there
    cells_run: int = 0  # cells [0, cells_run) have run (test cells skipped)


_RUNS: dict[str, _SolutionRun] = {}
_RUNS_LOCK = threading.Lock()  # the cells change the working folder, which is process-wide


def solution_namespace(lesson: str, before: int | None = None) -> dict:
    """The namespace a kernel has after running the solution's code cells before cell
    ``before`` (all of them when None), test cells skipped.

    Trusted code only (the course's own solution); mistakes are swapped into copies of it
    (:func:`with_code`). Each cell runs once per lesson and process, when a caller first needs
    it: the lesson's code takes seconds to minutes on a busy machine, and a cell may register
    something process-wide that must not be registered twice (08's serialization tag). A
    later call may go further; the namespace returned is the same dict, grown.
    """
    with _RUNS_LOCK:
        return _run_solution(lesson, before)


def _run_solution(lesson: str, before: int | None) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    nb = notebook.read(course.solution_notebook(lesson))
    run = _RUNS.get(lesson)
    if run is None:
        scratch = tempfile.mkdtemp(prefix="solution-")  # removed when this process exits
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        ns: dict = {"__name__": "__main__", "display": lambda *a, **k: None}
        run = _RUNS[lesson] = _SolutionRun(ns, scratch)
    end = len(nb.cells) if before is None else before
    here = os.getcwd()
    os.chdir(run.scratch)
    try:
        for i in range(run.cells_run, end):
            cell = nb.cells[i]
            if cell.cell_type == "code" and not notebook.is_test(cell):
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(_compiled(cell.source, f"<{lesson} cell {i}>"), run.namespace)
            run.cells_run = i + 1
    except BaseException:
        del _RUNS[lesson]  # half a cell ran: the next caller starts again from a fresh run
        raise
    finally:
        os.chdir(here)
    return run.namespace


def _compiled(code: str, filename: str):
    """Compile as IPython does, keeping the source in linecache so inspect.getsource works."""
    import linecache

    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    return compile(code, filename, "exec")
