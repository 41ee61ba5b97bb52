"""Hidden checks run in the grader's own process, against answers that live elsewhere.

The grade command calls :func:`run_check` for every test cell of a submission. The check's
code runs here, in the trusted process; the learner's functions and classes are
:class:`~autograder.boundary.Remote` handles, and every probe of them runs in the learner's
sandboxed kernel, whose only way back is the data :mod:`autograder.wire` reads. A check that
cannot reach the answer, or whose probe does not come back in time, fails: the exercise
scores zero (fail closed).

When a check fails, :func:`misconception` replays the probes it ran on every catalogued
mistake for the exercise (our own code, so it runs here) and names the mistake whose
results match the learner's, with the catalogue's message.

``python -m autograder trusted LESSON`` checks a lesson's checks this way without a kernel:
the solution must pass, every catalogued mistake must fail and be recognised.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import math
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from autograder import boundary, course, notebook, right_answers, wire
from autograder.mistakes import Mistake, catalogue
from tutorial_lib.checks import CheckError

HIDDEN_LINE = re.compile(r"from autograder\.hidden\.(\w+) import (\w+); \2\((.*)\)\s*$")


@dataclass(frozen=True)
class CheckSpec:
    """One test cell's hidden check: ``check(*args)`` from ``autograder.hidden.<topic>``."""

    test_id: str
    exercise: str  # the answer cell's grade_id
    topic: str
    check: str
    args: tuple[str, ...]


def specs(lesson: str) -> dict[str, CheckSpec]:
    """test cell grade_id -> its check, read from the solution notebook (the trusted source)."""
    found = {}
    for ex in course.exercises(lesson):
        spec = parse_hidden_line(ex.test_source)
        if spec is None:
            raise ValueError(f"{lesson}: test cell {ex.test_id} has no hidden-check line")
        topic, check, args = spec
        found[ex.test_id] = CheckSpec(ex.test_id, ex.grade_id, topic, check, args)
    return found


def parse_hidden_line(source: str) -> tuple[str, str, tuple[str, ...]] | None:
    """(topic, check name, argument names) of a test cell's hidden-check line, if it has one."""
    for line in source.splitlines():
        match = HIDDEN_LINE.match(line.strip())
        if match:
            call = ast.parse(match.group(2) + "(" + match.group(3) + ")", mode="eval").body
            names = tuple(arg.id for arg in call.args if isinstance(arg, ast.Name))
            if len(names) != len(call.args) or call.keywords:
                raise ValueError(f"hidden checks take names defined in the notebook: {line!r}")
            return match.group(1), match.group(2), names
    return None


@dataclass
class Call:
    """One probe run, as the recorder saw it."""

    probe_module: str
    probe_name: str
    name: str
    case_json: str
    envelope: str


class RecordingChannel:
    """Passes probe runs to another channel and remembers them (for misconception matching)."""

    def __init__(self, inner: boundary.Channel):
        self.inner = inner
        self.calls: list[Call] = []

    def run(self, probe_module: str, probe_name: str, name: str, case_json: str) -> str:
        envelope = self.inner.run(probe_module, probe_name, name, case_json)
        self.calls.append(Call(probe_module, probe_name, name, case_json, envelope))
        return envelope


class InProcessChannel:
    """Runs probes on the objects of a namespace in this process (our own code only)."""

    def __init__(self, namespace: dict):
        self.namespace = namespace

    def run(self, probe_module: str, probe_name: str, name: str, case_json: str) -> str:
        if name not in self.namespace:
            return wire.encode({"missing": name})
        probe = getattr(importlib.import_module(probe_module), probe_name)
        with contextlib.redirect_stdout(io.StringIO()):
            return boundary.run_probe(probe, self.namespace[name], wire.decode(case_json))


@dataclass
class Verdict:
    passed: bool
    message: str = ""
    calls: list[Call] = field(default_factory=list)
    seconds: float = 0.0


def run_check(spec: CheckSpec, channel: boundary.Channel) -> Verdict:
    """Run one hidden check here, its probes through ``channel``. Anything but a pass fails."""
    start = time.perf_counter()
    recorder = RecordingChannel(channel)
    check = getattr(importlib.import_module(f"autograder.hidden.{spec.topic}"), spec.check)
    remotes = [boundary.Remote(name, recorder) for name in spec.args]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            check(*remotes)
    except NotImplementedError:
        verdict = Verdict(False, "not answered yet: the answer still raises NotImplementedError")
    except (CheckError, AssertionError) as err:
        verdict = Verdict(False, str(err) or type(err).__name__)
    except Exception as err:  # the check met data it did not expect: fail closed, say why
        verdict = Verdict(
            False, f"the hidden check could not judge the answer ({type(err).__name__}: {err})"
        )
    else:
        verdict = Verdict(True)
    verdict.calls = recorder.calls
    verdict.seconds = time.perf_counter() - start
    return verdict


_PROBE_IMPORT = re.compile(r"^\s*from autograder\.probes(?:\.(\w+) import| import (\w+))", re.M)


def kernel_modules(topics: set[str], stand_in: str) -> dict[str, str]:
    """Module name -> source the student's kernel gets while the grader probes it.

    The wire format, the topics' probes and the probe modules they import (no answers in
    any of them), and for each topic a stand-in ``autograder.hidden.<topic>`` (the real
    checks must never be readable there).
    """
    package = course.ROOT / "autograder"
    modules = {
        "autograder": "",
        "autograder.wire": (package / "wire.py").read_text(),
        "autograder.boundary": (package / "boundary.py").read_text(),
        "autograder.hidden": "",
        "autograder.probes": (package / "probes" / "__init__.py").read_text(),
    }
    wanted = sorted(topics)
    while wanted:
        topic = wanted.pop()
        name = f"autograder.probes.{topic}"
        if name in modules or not (package / "probes" / f"{topic}.py").is_file():
            continue
        modules[name] = (package / "probes" / f"{topic}.py").read_text()
        wanted += [a or b for a, b in _PROBE_IMPORT.findall(modules[name])]
    for topic in sorted(topics):
        modules[f"autograder.hidden.{topic}"] = stand_in
    return modules


# ---------------------------------------------------------------------------------------
# Misconceptions: which catalogued mistake behaves like this answer?


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
        ns = _with_code(namespace, mistake.code)
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
        ):
            warnings.simplefilter("ignore")
            exec(_compiled(code, "<visible tests>"), ns)
    except Exception as err:
        return error_signature(type(err).__name__, str(err))
    return None


_SOLUTION_NAMESPACES: dict[str, dict] = {}


def name_misconception(
    lesson: str, spec: CheckSpec, calls: list[Call], visible: Visible | None = None
) -> Mistake | None:
    """:func:`misconception` for a grading worker: the solution namespace is built once per lesson."""
    exercise = spec.exercise or _exercise_of(lesson, spec.test_id)
    mistakes = catalogue(course.topic(lesson)).get(exercise, [])
    if not mistakes or not calls:
        return None
    if lesson not in _SOLUTION_NAMESPACES:
        _SOLUTION_NAMESPACES[lesson] = solution_namespace(lesson)
    return misconception(spec, calls, _SOLUTION_NAMESPACES[lesson], mistakes, visible)


def _exercise_of(lesson: str, test_id: str) -> str:
    found = specs(lesson).get(test_id)
    return found.exercise if found else ""


def _with_code(namespace: dict, code: str) -> dict | None:
    ns = dict(namespace)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "<mistake>", "exec"), ns)
    except Exception:
        return None
    return ns


def solution_namespace(lesson: str) -> dict:
    """The namespace a kernel has after running the solution's code cells, test cells skipped.

    Trusted code only (the course's own solution); mistakes are swapped into copies of it.
    """
    import matplotlib

    matplotlib.use("Agg")
    ns: dict = {"__name__": "__main__", "display": lambda *a, **k: None}
    nb = notebook.read(course.solution_notebook(lesson))
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="solution-") as scratch:
        os.chdir(scratch)  # whatever the lesson writes lands in a folder that goes away
        try:
            for i, cell in enumerate(nb.cells):
                if cell.cell_type != "code" or notebook.is_test(cell):
                    continue
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(_compiled(cell.source, f"<{lesson} cell {i}>"), ns)
        finally:
            os.chdir(here)
    return ns


def _compiled(code: str, filename: str):
    """Compile as IPython does, keeping the source in linecache so inspect.getsource works."""
    import linecache

    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    return compile(code, filename, "exec")


# ---------------------------------------------------------------------------------------
# The author's harness: python -m autograder trusted LESSON


@dataclass
class HarnessReport:
    lesson: str
    failures: list[str] = field(default_factory=list)
    exercises: int = 0
    mistakes: int = 0
    recognised: int = 0
    right_answers: int = 0
    seconds: float = 0.0


def check_lesson(lesson: str, only: str | None = None) -> HarnessReport:
    """Solution and every catalogued right answer pass each check run across the boundary;
    each mistake fails and is named."""
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
            ns = _with_code(namespace, answer.code)
            if ns is None:
                report.failures.append(f"{spec.exercise}/{answer.name}: its code does not run")
                continue
            verdict = run_check(spec, InProcessChannel(ns))
            if not verdict.passed:
                report.failures.append(
                    f"{spec.exercise}/{answer.name}: a right answer fails: {verdict.message}"
                )
        for mistake in mistakes.get(spec.exercise, []):
            report.mistakes += 1
            ns = _with_code(namespace, mistake.code)
            if ns is None:
                report.failures.append(f"{spec.exercise}/{mistake.name}: its code does not run")
                continue
            verdict = run_check(spec, InProcessChannel(ns))
            if verdict.passed:
                report.failures.append(f"{spec.exercise}/{mistake.name}: passes the trusted check")
                continue
            named = misconception(spec, verdict.calls, namespace, mistakes[spec.exercise])
            report.recognised += named is not None
    report.seconds = time.perf_counter() - start
    return report
