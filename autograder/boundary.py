"""How a hidden check reaches the student's answer: through a probe, and only data comes back.

A hidden check (``autograder/hidden/<topic>.py``) never calls the student's function or
class itself. It hands a *probe* (a function in ``autograder/probes/<topic>.py``) and a
*case* (plain data) to :func:`observe`. The probe builds the inputs from the case, calls the
answer, and returns what it saw as data (numbers, strings, tensors, lists, dicts). The
check then compares that data with what the same probe gives for its reference answer.

The same check code runs in two places:

- in the student's kernel, as plain nbgrader runs it: ``student`` is the real function and
  the probe runs right here (its result still goes through :mod:`autograder.wire`, so both
  places see exactly the same kind of values);
- in the grader's own process (``python -m autograder grade``): ``student`` is a
  :class:`Remote`, the probe runs in the sandboxed kernel, and only the encoded result comes
  back. Nothing the student's code does in its kernel can reach the comparison.

Probes live in their own modules because they are handed to the student's kernel: they
hold no reference answers and no expected values.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from autograder import wire
from autograder.dynamo_unmarked import dynamo_unmarked
from tutorial_lib.checks import (
    CheckError,
    call_failure_message,
    is_stub,
    learner_call,
    learner_frames,
)
from tutorial_lib.i18n import _

PROBE_PACKAGE = "autograder.probes"


class AnswerUnreachable(CheckError):
    """The answer could not be run or its result did not come back: the exercise scores zero."""


class AnswerRaised(CheckError):
    """The student's code raised while the probe ran it.

    The message is the one ``tutorial_lib.checks.call`` gives in a visible test: the error,
    the student's own lines of the traceback (``frames``) and, last, the student's function as
    the probe called it (``called_as``), so that a check may append ". <hint>" to it.
    """

    def __init__(
        self,
        what: str,
        type_name: str,
        message: str,
        frames: list[str] | tuple[str, ...] = (),
        called_as: str = "",
    ):
        self.type_name, self.message = type_name, message
        self.frames, self.called_as = list(frames), called_as
        super().__init__(
            call_failure_message(what, type_name, message, frames, called_as=called_as)
            if message.strip() or frames
            else f"{what} raised {type_name}"
        )

    def with_hint(self, hint: str) -> str:
        """The message with the check's hint for this error as its last line, as ``call``
        shows an exercise's hint."""
        return f"{self}\n" + _("Hint: {hint}").format(hint=hint.strip())


class Channel(Protocol):
    """Runs ``probe(<the student's object called name>, case)`` somewhere; returns the envelope."""

    def run(self, probe_module: str, probe_name: str, name: str, case_json: str) -> str: ...


@dataclass(frozen=True)
class Remote:
    """The grader's handle on a name defined in the student's kernel. It cannot be called."""

    name: str
    channel: Channel

    def __call__(self, *args, **kwargs):
        raise TypeError(
            f"a hidden check called {self.name} directly; it must go through observe(probe, ...)"
        )


def call(fn: Callable, case: dict) -> Any:
    """The generic probe: ``fn(*case["args"], **case["kwargs"])`` and the arguments afterwards.

    Returns ``{"result": ..., "args": [...]}``; the arguments come back too so that a check
    can see whether the answer changed the caller's tensors in place.
    """
    args, kwargs = list(case.get("args", [])), dict(case.get("kwargs", {}))
    result = fn(*args, **kwargs)
    return {"result": result, "args": args}


def run_probe(probe: Callable, student: Any, case: Any) -> str:
    """Run ``probe(student, case)`` and encode what happened: a value or the exception raised."""
    try:
        with process_modes_kept(), dynamo_unmarked():
            value = probe(student, case)
    except Exception as err:  # the student's code may raise anything; report it as data
        return wire.encode({"raised": _raised(err)})
    return wire.encode({"value": value})


# What an answer can switch for the whole process, by the name its message gives: how to read
# it, how to set it, and the value a caller usually has. The probes start every contract call
# from the usual values and report what an answer left switched (``probes.contract``);
# run_probe puts back whatever they were; the mistake runner resets them between answers.
# The global random generators are process-wide too, under another rule (drawing from torch's
# is fine, reseeding any is not): ``probes.contract.random_watched`` saves, judges and restores them.
# torch.use_deterministic_algorithms is not here: a seeding helper (07's set_seed) may switch it
# on; lesson 07's training-step probes watch it themselves.
def _set_default_device(device) -> None:
    """torch.set_default_device, with the CPU as no default at all: setting "cpu" would put a
    device mode in front of every later torch call."""
    torch.set_default_device(None if torch.device(device).type == "cpu" else device)


MODES: dict[str, tuple[Callable, Callable, Any]] = {
    "torch.is_grad_enabled()": (torch.is_grad_enabled, torch.set_grad_enabled, True),
    "torch.get_default_dtype()": (torch.get_default_dtype, torch.set_default_dtype, torch.float32),
    "torch.get_default_device()": (torch.get_default_device, _set_default_device, "cpu"),
    # Left on, anomaly detection makes every later backward pass several times slower.
    "torch.is_anomaly_enabled()": (
        torch.is_anomaly_enabled,
        torch.autograd.set_detect_anomaly,
        False,
    ),
    # TF32 trades float32 matmul and convolution precision for speed on a GPU, for every
    # later call of the caller's (the matmul setting is also torch.backends.cuda.matmul's).
    "torch.get_float32_matmul_precision()": (
        torch.get_float32_matmul_precision,
        torch.set_float32_matmul_precision,
        "highest",
    ),
    "torch.backends.cudnn.allow_tf32": (
        lambda: torch.backends.cudnn.allow_tf32,
        lambda on: setattr(torch.backends.cudnn, "allow_tf32", on),
        True,
    ),
}


def modes_now() -> dict[str, str]:
    """Each mode's value now, as text (it crosses the wire)."""
    return {name: str(read()) for name, (read, _set, _usual) in MODES.items()}


def usual_modes() -> None:
    """Set every mode to the value a caller usually has."""
    for _read, set_mode, usual in MODES.values():
        set_mode(usual)


@contextlib.contextmanager
def process_modes_kept():
    """Put back what an answer can switch for the whole process (MODES). An answer that
    turns autograd off and raises before turning it on again (on an input the probe chose)
    must not fail the learner's later cells, nor, replayed in the grader by the
    misconception matcher, the next submission's checks."""
    saved = [(set_mode, read()) for read, set_mode, _usual in MODES.values()]
    try:
        yield
    finally:
        for set_mode, value in saved:
            set_mode(value)


# At most this many of the student's traceback lines cross, the last ones (a deep recursion
# would otherwise flood the message), each cut to this many characters.
MAX_FRAMES, MAX_FRAME_CHARS = 8, 300


def _raised(err: Exception) -> list[str]:
    """What crosses for an exception: its type, message, the student's frames, the call."""
    if is_stub(err):  # nothing to point at
        return [type(err).__name__, str(err)[:2000]]
    frames = [f[:MAX_FRAME_CHARS] for f in learner_frames(err.__traceback__)[-MAX_FRAMES:]]
    called_as = learner_call(err.__traceback__)[:MAX_FRAME_CHARS]
    return [type(err).__name__, str(err)[:2000], "\n".join(frames), called_as]


def serve(probe_module: str, probe_name: str, name: str, case_json: str, out_path: str) -> None:
    """Kernel side of a :class:`Remote` call: look the answer up in the user's namespace, probe
    it, and write the envelope to ``out_path``."""
    from IPython import get_ipython

    namespace = get_ipython().user_ns
    if name not in namespace:
        envelope = wire.encode({"missing": name})
    else:
        probe = getattr(importlib.import_module(probe_module), probe_name)
        envelope = run_probe(probe, namespace[name], wire.decode(case_json))
    with open(out_path, "w") as f:
        f.write(envelope)


def observe(probe: Callable, student: Any, case: Any = None, what: str = "") -> Any:
    """What ``probe`` saw when it ran ``student`` on ``case``, as data.

    Raises ``NotImplementedError`` when the answer is still the stub, :class:`AnswerRaised`
    when it raised anything else, :class:`AnswerUnreachable` when no usable result came back.
    """
    what = what or f"{getattr(student, 'name', getattr(student, '__name__', 'the answer'))}(...)"
    if isinstance(student, Remote):
        if not probe.__module__.startswith(PROBE_PACKAGE) and probe is not call:
            raise TypeError(f"{probe.__qualname__} is not a probe: probes live in {PROBE_PACKAGE}")
        envelope = student.channel.run(
            probe.__module__, probe.__name__, student.name, wire.encode(case)
        )
    else:
        envelope = run_probe(probe, student, wire.roundtrip(case))
    try:
        outcome = wire.decode(envelope)
    except wire.WireError as err:
        raise AnswerUnreachable(f"{what}: the result could not be read ({err})") from None
    if type(outcome) is not dict or len(outcome) != 1:
        raise AnswerUnreachable(f"{what}: the result could not be read")
    ((kind, body),) = outcome.items()
    if kind == "value":
        return body
    if (
        kind == "raised"
        and type(body) is list
        and len(body) in (2, 4)
        and all(type(b) is str for b in body)
    ):
        if body[0] == "NotImplementedError" and len(body) == 2:  # the stub (see _raised)
            raise NotImplementedError(body[1])
        frames, called_as = (body[2].splitlines(), body[3]) if len(body) == 4 else ([], "")
        raise AnswerRaised(what, body[0], body[1], frames, called_as)
    if kind == "missing":
        raise AnswerUnreachable(f"{what}: nothing called {body!r} is defined in the notebook")
    raise AnswerUnreachable(f"{what}: the result could not be read")
