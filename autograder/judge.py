"""The judge: runs a lesson's hidden checks in the grader's own process.

Each test cell of a solution notebook ends with one hidden-check line,
``from autograder.hidden.<topic> import <check>; <check>(<names>)``. :func:`specs` reads
those lines into :class:`CheckSpec` values and :func:`run_check` runs one of them here.
The learner's functions and classes reach the check as
:class:`~autograder.boundary.Remote` handles: every probe of them goes through a channel
(the sandboxed kernel when grading, :class:`InProcessChannel` for our own code), and
:class:`RecordingChannel` keeps each probe's result so a failure can be explained later. A
check that cannot reach the answer, or whose probe does not come back in time, fails: the
exercise scores zero (fail closed). :func:`kernel_modules` lists the only grader modules a
kernel may hold while it is probed: the wire format and the probes, never a real check.

What it does not do: it starts no kernel and never runs a learner's code in this process
(``autograder.grading`` does both), and it does not say which mistake a failing answer
made (:mod:`autograder.misconceptions` does).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import re
import time
from dataclasses import dataclass, field

from autograder import boundary, course, wire
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


def contracts(topic: str, check: str) -> tuple:
    """The contracts a hidden check declares (``@uses``; ``autograder/contracts.py``), or ()
    for a check written by hand."""
    found = getattr(importlib.import_module(f"autograder.hidden.{topic}"), check)
    return getattr(found, "contracts", ())


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
    """What one hidden check decided, with the probes it ran to decide it."""

    passed: bool
    message: str = ""
    calls: list[Call] = field(default_factory=list)
    seconds: float = 0.0
    answered: bool = True  # False: the answer still raises NotImplementedError


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
        verdict = Verdict(
            False, "not answered yet: the answer still raises NotImplementedError", answered=False
        )
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
        "autograder.dynamo_unmarked": (package / "dynamo_unmarked.py").read_text(),
        "autograder.hidden": "",
        "autograder.probes": (package / "probes" / "__init__.py").read_text(),
    }
    # The generic probe every contract (autograder/contracts.py) runs, and what it imports.
    wanted = [*sorted(topics), "contract"]
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
