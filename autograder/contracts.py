"""Contracts: an exercise's whole promise, checked by property on generated inputs.

A hidden check used to list cases by hand; each round of wrong answers found the
neighbours of the cases listed. A :class:`Contract` says once what the exercise promises
instead: its reference (run here, in the grader), how to draw its inputs, and which
*families* of inputs and behaviours it must handle. :meth:`Contract.check` then has
Hypothesis draw inputs for each family, runs the learner's answer on them through the
generic probe (``autograder/probes/contract.py``, in the learner's kernel), compares what
came back with the reference's answer on the same inputs, and, when they differ, shrinks
the input to the smallest one that still fails, so the feedback names it ("for x of shape
(1, 0), float16: ...").

The families, each reusable by any exercise whose inputs are tensors:

- ``values``: inputs of many shapes, float32; the answer's result equals the reference's.
- ``edges``: the smallest sizes the text allows (0 where empty is allowed, 1, odd sizes).
- ``dtypes``: float16, bfloat16 and float64 inputs; the result keeps the reference's dtype.
- ``strides``: the same values in a non-contiguous layout (``.view`` breaks, ``.reshape`` works).
- ``device``: the inputs on PyTorch's ``meta`` device, so a tensor made without ``device=``
  shows on a CPU-only grader as it would on a GPU (PyTorch refuses to mix the two). An
  answer that needs values (``.item()``, a loop on ``x.norm()``), which ``meta`` cannot
  run, is called once more on tensors that keep their values and refuse to mix with plain
  CPU ones, and a call that mixes devices is refused even where ``meta``'s kernels
  would not check (``probes/devices.py``).
- ``grad``: the result's graph reaches the inputs and its gradients equal the reference's.
- ``once``: list arguments arrive as streams that can be read once (a generator, a loader).
- ``memory``: the bytes autograd keeps for backward, at their peak during the call, are at
  most about the reference's: a loop that keeps every batch's graph alive until the end, or
  an evaluation without ``torch.no_grad()``, fails (``probes.contract.SavedTensors``).
- ``largest``: the largest single tensor the call makes is at most about the reference's,
  on the largest inputs the contract draws: a Hessian formed where the text says "without
  forming it", batches joined into one, a low-rank product multiplied out, fail
  (``probes.contract.LargestMade``).

Arguments that are not data (a model, an optimizer) are :class:`Build` recipes: the kernel
builds the answer's copy, the grader the reference's; a module counts as changed when its
state, modes, requires_grad flags, gradients or hooks differ after the call.

In every family the arguments must come back unchanged (unless the contract says which
may change), the process-wide settings of ``boundary.MODES`` (autograd's mode, the default
dtype and device, anomaly detection) as they were, and the exercise's
forbidden shortcuts raise while the answer runs; and in ``values``, a call whose reference
reseeds no global random generator must reseed none either (nor draw from Python's or NumPy's).

Runs are derandomized (the same notebook always gets the same score) and budgeted: each
family draws a few examples, and at most :data:`PROBE_BUDGET` probes run per family, the
rest of a shrink reusing results it already has.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import random
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import core as hypothesis_core
from hypothesis import strategies as st
from hypothesis.errors import Flaky, HypothesisException
from hypothesis.internal import entropy as hypothesis_entropy
from hypothesis.internal.conjecture import providers as hypothesis_providers
from hypothesis.internal.constants_ast import Constants

from autograder import wire
from autograder.boundary import AnswerRaised, AnswerUnreachable, observe
from autograder.dynamo_unmarked import dynamo_unmarked
from autograder.probes import contract as probe
from tutorial_lib.checks import CheckError, assert_close
from tutorial_lib.i18n import _

FAMILIES = ("values", "edges", "dtypes", "strides", "device", "grad", "once", "memory", "largest")
# The memory family's allowance: twice the reference's peak of saved activations, plus this
# (a right answer may save a little more, e.g. x * x keeps x twice where x ** 2 keeps it once).
MEMORY_SLACK = 2, 1024
# The largest family's allowance, in elements: twice the reference's largest tensor, plus a
# few (a right answer may make a temporary the reference does not, of the same size).
LARGEST_SLACK = 2, 8
OTHER_DTYPES = (torch.float16, torch.bfloat16, torch.float64)  # what ``dtypes`` draws
PROBE_BUDGET = 40  # kernel round trips per family, generation and shrinking together
EXAMPLES = 8  # inputs drawn per family before shrinking
BACKWARD_DRAWS = 2  # of the device family's, the ones also run backward (contracts with grad)
# One fixed seed for every run: the same notebook always gets the same score. (It is the
# seed ``derandomize=True`` derived from this module's first version, so the draws stayed
# the same; a fixed seed spares Hypothesis hashing the source at every call, and keeps the
# draws from changing whenever this file is edited.)
SEED = 1602057732771641025714973450934382553949948571985099510297410148200175936541243889569960391279210207773431987883944


# Hypothesis also draws, now and then, a constant found in the source of the "local" modules
# loaded (any outside site-packages: this course when installed editable, a learner's own
# files). Which modules are loaded differs between the grader, a kernel and the authors'
# harness, and changes whenever one of them is edited, so the same notebook met other inputs
# on another route. The course draws only from its strategies and its seeds: an empty pool.
# (Nothing is then cached under ./.hypothesis either, in a learner's or an author's folder.)
# (Hypothesis has no setting for this; tests/autograder/test_contracts.py proves it holds.)
hypothesis_providers._get_local_constants = Constants

# On its first run in a thread, Hypothesis makes a Random of its own and registers it after a
# full gc.collect() (a check that someone holds it, for a warning): 0.3 s in a kernel that
# has loaded torch, paid by every graded notebook's first hidden test. This is what
# register_random() does, less the collection; the module holds the Random. These are
# Hypothesis' internals: a release without them (pyproject allows others than the pinned
# one) does its own registering, collection included, and grades the same.
_HYPOTHESIS_RANDOM = random.Random()
if hasattr(hypothesis_core, "threadlocal") and hasattr(hypothesis_entropy, "_RKEY"):
    hypothesis_core.threadlocal._hypothesis_global_random = _HYPOTHESIS_RANDOM
    hypothesis_entropy.RANDOMS_TO_MANAGE[next(hypothesis_entropy._RKEY)] = _HYPOTHESIS_RANDOM


def family_seed(family: str, dtype: torch.dtype | None = None) -> int:
    """Each family (and each precision of ``dtypes``) draws from a seed of its own: with one
    seed for all, every family repeated the same few choices, so an option that the first
    draws missed (one of a ``sampled_from``'s, say) was missed by every family alike."""
    k = FAMILIES.index(family) * (len(OTHER_DTYPES) + 1)
    return SEED + k + (OTHER_DTYPES.index(dtype) + 1 if dtype is not None else 0)


# The tolerances of the contract being judged (its own, over TOLERANCE), for compare_values.
_TOLERANCE: contextvars.ContextVar[dict | None] = contextvars.ContextVar("tolerance", default=None)

# Whether a failing family shrinks its input to the smallest that fails: the message a
# learner reads names that input. Pass or fail never depends on it (a failure is found before
# shrinking starts), so a caller that reads only the verdict may skip it (``without_shrinking``).
_SHRINK: contextvars.ContextVar[bool] = contextvars.ContextVar("shrink", default=True)


@contextlib.contextmanager
def without_shrinking():
    """Within the block, a failing contract reports the first failing input it drew."""
    token = _SHRINK.set(False)
    try:
        yield
    finally:
        _SHRINK.reset(token)


# Tolerances per dtype for comparing with the reference: the answer may add in another order.
TOLERANCE = {
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (4e-2, 4e-2),
    torch.float32: (1e-4, 1e-5),
    torch.float64: (1e-7, 1e-9),
}
# Where the text says "compute in the input's dtype": a float32 working copy is off by 1e-8.
FLOAT64_EXACT = {torch.float64: (1e-9, 1e-9)}


@dataclass(frozen=True)
class Draw:
    """What a contract's ``inputs`` function gets: Hypothesis' ``draw`` and the family."""

    draw: Callable[[st.SearchStrategy], Any]
    family: str

    def size(self, low: int = 1, high: int = 5, empty_ok: bool = False) -> int:
        """One dimension's size; ``edges`` and ``device`` favour 0 (where allowed), 1 and odd sizes;
        ``dtypes`` draws 0 now and then (where allowed); ``strides`` draws 2 or more where it
        may, so every axis has a stride to get wrong; ``largest`` draws the largest."""
        if self.family in ("edges", "device"):  # the smallest allowed, one, odd, the largest
            # (on meta only the code path taken matters, and the rare one is the empty input)
            smallest = 0 if empty_ok else low
            sizes = {smallest, low, 1, 3, 7, high}
            return self.draw(
                st.sampled_from(sorted(n for n in sizes if low <= n <= high or n == smallest))
            )
        if self.family == "largest":  # what grows with the inputs shows best on the largest
            return high
        if self.family == "dtypes" and empty_ok:  # the rare path in another precision too
            # (a separate branch for an empty input that builds its result in float32)
            return self.draw(st.sampled_from([0, *range(low, high + 1)]))
        if self.family == "strides" and high >= 2:
            low = max(low, 2)  # a size-1 axis has no stride to get wrong
        return self.draw(st.integers(low, high))

    def tensor(self, *shape: int, low: float = -2.0, high: float = 2.0) -> torch.Tensor:
        """A float32 tensor of ``shape``, its values from a drawn seed (shrinks to seed 0)."""
        seed = self.draw(st.integers(0, 2**16))
        g = torch.Generator().manual_seed(seed)
        return torch.rand(shape, generator=g) * (high - low) + low

    def integers(self, *shape: int, low: int = 0, high: int = 10) -> torch.Tensor:
        """An int64 tensor of ``shape`` with values in ``[low, high)``, from a drawn seed."""
        seed = self.draw(st.integers(0, 2**16))
        g = torch.Generator().manual_seed(seed)
        return torch.randint(low, high, shape, generator=g)

    def bools(self, *shape: int) -> torch.Tensor:
        """A bool tensor of ``shape`` from a drawn seed."""
        return self.integers(*shape, low=0, high=2).bool()


@dataclass(frozen=True)
class Build:
    """An argument that cannot cross as data (a model, an optimizer): the kernel builds it
    with ``builder(spec)``, a function of a probe module, and the reference gets its own copy
    built the same way. ``label`` is how the feedback names it."""

    builder: Callable[..., Any]
    spec: dict
    label: str = ""
    of: tuple[int, ...] = ()  # earlier arguments the builder also gets (the model of an optimizer)

    def sent(self) -> dict:
        return {"build": [self.builder.__module__, self.builder.__name__, self.spec]} | (
            {"of": list(self.of)} if self.of else {}
        )

    def make(self) -> Any:
        """The grader's own copy (for a Build with no ``of``; see ``copies`` otherwise)."""
        return self.builder(self.spec)


@dataclass(frozen=True)
class Inputs:
    """One drawn call: positional and keyword arguments."""

    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Contract:
    """What one exercise promises, for every input its ``inputs`` function can draw.

    ``reference(*args, **kwargs)`` is the grader's answer; ``inputs(d: Draw) -> Inputs``
    draws a call; ``families`` are the families checked, in order; ``rules`` are shortcut
    names (``probes.contract.SHORTCUTS``) the text forbids; ``mutates`` are positions of
    arguments the text says the answer changes; ``compare(got, expected, what, inputs)``
    overrides the default comparison of results; ``grad_args`` are the positions of the
    float tensors ``grad`` differentiates (all float tensors when None); ``hint(family,
    inputs)`` adds the exercise's advice to the message of a wrong result, a wrong gradient
    or an error raised; ``tolerance`` maps a
    dtype to (rtol, atol) where the text asks for more than TOLERANCE (float64 at 1e-9 where
    it says "compute in the input's dtype": a float32 working copy cast back is off by 1e-8).

    A class exercise sets ``construct`` (how many leading arguments go to the class; the
    rest go to the call): both sides build their object, fill its parameters in order from
    one seed (``fill``; so equal shapes in equal order mean equal weights), cast it to the
    dtype and device of the call's tensors and call it, or its ``method`` (``apply`` of an
    autograd Function, with ``construct`` left None). ``mutates`` arguments are compared
    with the reference's copies after the call (values, gradients, modes, optimizer state);
    ``may_change`` arguments may change in any way the text leaves open (not compared).
    ``view`` (a function of a probe module) turns a result that cannot cross as data (a
    DataLoader, a Subset) into the data it stands for, on both sides, before the comparison.
    """

    name: str
    reference: Callable[..., Any]
    inputs: Callable[[Draw], Inputs]
    families: tuple[str, ...] = ("values", "edges", "strides", "dtypes", "device", "grad")
    rules: tuple[str, ...] = ()
    rule_text: Callable[[], str] | None = None
    mutates: tuple[int, ...] = ()
    may_change: tuple[int, ...] = ()
    once_args: tuple[int, ...] = ()
    compare: Callable[[Any, Any, str, Inputs], None] | None = None
    grad_args: tuple[int, ...] | None = None
    arg_names: tuple[str, ...] = ()
    hint: Callable[[str, Inputs], str] | None = None
    tolerance: dict | None = None
    examples: int = EXAMPLES
    construct: int | None = None
    method: str | None = None
    fill: bool | str = True  # or "by name", where the text names every parameter
    view: Callable[[Any], Any] | None = None
    # The answer may reseed the global random generators where the reference does not:
    # seeding them is the exercise.
    global_random_ok: bool = False

    def __post_init__(self):
        unknown = set(self.families) - set(FAMILIES)
        if unknown:
            raise ValueError(f"{self.name}: unknown contract families {sorted(unknown)}")
        if ("once" in self.families) != bool(self.once_args):
            raise ValueError(f"{self.name}: the once family and once_args go together")
        missing = set(self.rules) - set(probe.SHORTCUTS)
        if missing:
            raise ValueError(f"{self.name}: rules name no known shortcut: {sorted(missing)}")

    def check(self, answer: Any) -> None:
        """Check every family in order; the first that fails raises with its smallest input."""
        with dynamo_unmarked():  # the reference meets the meta device too
            for family in self.families:
                for dtype in OTHER_DTYPES if family == "dtypes" else (None,):
                    _check_family(self, answer, family, dtype)


def uses(*contracts: Contract, after: bool = False) -> Callable:
    """Decorate a hidden check: its contracts run first, then its own hand-written lines;
    with ``after=True`` the hand-written lines run first, where their messages name the
    exercise's typical slips more plainly than a generated counterexample would.

    The contracts stay readable on the check (``check.contracts``), for ``make verify``.
    """

    def wrap(check: Callable) -> Callable:
        def checked(answer, *rest):
            if after:
                check(answer, *rest)
            for c in contracts:
                c.check(answer)
            return None if after else check(answer, *rest)

        checked.__name__, checked.__doc__ = check.__name__, check.__doc__
        checked.__wrapped__ = check
        checked.contracts = contracts
        return checked

    return wrap


# ---------------------------------------------------------------------------------------
# One family: Hypothesis draws, the probe runs the answer, the reference is compared.


class _Stop(Exception):
    """The answer cannot be judged on any input (a stub, a kernel gone): stop the search."""


def _check_family(contract: Contract, answer: Any, family: str, dtype=None) -> None:
    """One family's run; ``dtypes`` runs once per precision in OTHER_DTYPES (``dtype``)."""
    runner = _Runner(contract, answer, family)

    @seed(family_seed(family, dtype))
    @settings(
        max_examples=contract.examples if dtype is None else max(2, contract.examples // 2),
        database=None,  # nothing written to disk, nothing remembered between students
        deadline=None,  # no wall-clock limit judges a student
        phases=(Phase.generate, Phase.shrink) if _SHRINK.get() else (Phase.generate,),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
    )
    @given(st.data())
    def holds(data):
        inputs = contract.inputs(Draw(data.draw, family))
        if dtype is not None:  # the dtypes family: one other precision for the whole call
            inputs = _as_dtype(inputs, dtype, fine=dtype == torch.float64 and _exact(contract))
        runner.run(inputs)

    holds._hypothesis_internal_database_key = None  # no database: no key to hash (as find() does)
    try:
        holds()
    except _Stop:
        raise runner.stopped from None
    except Flaky:
        raise CheckError(
            _(
                "{name} gave different results for the same input when called twice: "
                "it must not depend on hidden state or randomness it does not seed."
            ).format(name=contract.name)
        ) from None
    except HypothesisException as err:  # a contract that cannot draw: ours to fix
        raise AnswerUnreachable(f"{contract.name}: the contract could not run ({err})") from None


class _Runner:
    """Runs one family's examples: probes through the channel, within a budget, cached."""

    def __init__(self, contract: Contract, answer: Any, family: str):
        self.contract, self.answer, self.family = contract, answer, family
        self.seen: dict[str, BaseException | None] = {}
        self.probes = 0
        self.stopped: BaseException | None = None

    def run(self, inputs: Inputs) -> None:
        key = wire.encode([_sent(inputs.args), inputs.kwargs])
        if self.stopped is not None:
            self._stop()
        if key in self.seen:
            if self.seen[key] is not None:
                raise self.seen[key]
            return
        if self.probes >= PROBE_BUDGET:
            return  # past the budget, unseen inputs are not probed (the shrink stops here)
        self.probes += 1
        try:
            self._judge(inputs)
        except (NotImplementedError, AnswerUnreachable) as err:
            self.stopped = err
        except CheckError as err:
            self.seen[key] = err
            raise
        if self.stopped is not None:
            self._stop()  # outside the except: the same failure as every later call's
        self.seen[key] = None

    def _stop(self) -> None:
        """Raised from one place, so Hypothesis sees one failure and does not call it flaky."""
        raise _Stop

    def _judge(self, inputs: Inputs) -> None:
        c = self.contract
        what = describe_call(c, inputs, self.family)
        float_args = [
            i
            for i, a in enumerate(inputs.args)
            if isinstance(a, torch.Tensor) and a.dtype.is_floating_point
        ]
        wanted = float_args if c.grad_args is None else c.grad_args
        grad_args = [i for i in wanted if i in float_args]
        case = {
            "args": _sent(inputs.args),
            "once_args": list(c.once_args),
            "kwargs": inputs.kwargs,
            "family": self.family,
            "grad_args": grad_args,
            # the device family then runs backward too, on the first draws only: a backward
            # that makes its gradient on the CPU does so whatever the input's size
            "backward": "grad" in c.families and self.probes <= BACKWARD_DRAWS,
            "rules": list(c.rules),
            "mutates": list(c.mutates),
            "construct": c.construct,
            "method": c.method,
            "fill": c.fill,
            "view": [c.view.__module__, c.view.__name__] if c.view else None,
        }
        if self.family == "grad":
            graph = None
            if self.probes % 2 == 0:
                # Every other draw, where the reference trains parameters, its inputs do not
                # require grad, as plain data in a training step does not: the parameters
                # must get their gradients all the same (an answer that switches autograd
                # off unless x asks for it, torch.set_grad_enabled(x.requires_grad), does not).
                graph = _reference_graph(c, inputs, [])
                if graph is not None:
                    grad_args = case["grad_args"] = []
            if graph is None:
                graph = _reference_graph(c, inputs, grad_args)
            if graph is None:
                return  # the reference's result has no graph either: nothing to compare
            case["grad_outputs"] = graph.outputs
        try:
            seen = observe(probe.probe_contract, self.answer, case, what)
        except AnswerRaised as err:
            hint = c.hint(self.family, inputs) if c.hint else ""
            raise CheckError(
                _("{what} raised {error}: {message}").format(
                    what=what,
                    error=err.type_name,
                    message=_plain((err.message.splitlines() or [""])[0])[:300],
                )
                + (f" {hint}" if hint else "")
                + _frames(err)
            ) from None
        if self.family == "device" and "inconclusive" in seen:
            return  # the answer needs values (item(), nonzero()): meta cannot tell
        if self.family == "device" and "device_mix" in seen:
            raise device_mix_error(what, seen["device_mix"])
        if seen.get("broken"):
            rule = c.rule_text() if c.rule_text else ""
            raise CheckError(
                _(
                    "{what} called {calls}, which this exercise does not allow (the grader "
                    "makes it raise while your function runs). {rule}"
                )
                .format(what=what, calls=_(" and ").join(seen["broken"]), rule=rule)
                .strip()
            )
        if seen.get("modes"):
            before, after = seen["modes"]
            switched = ", ".join(
                f"{name}: {before[name]} -> {after[name]}"
                for name in before
                if before[name] != after[name]
            )
            raise CheckError(
                _(
                    "{what} left a setting of the whole process switched ({switched}): the "
                    "caller's later code would run with it. Switch modes in a `with` block "
                    "(torch.no_grad(), torch.enable_grad()) or put them back before returning."
                ).format(what=what, switched=switched)
            )
        changed = [i for i in seen.get("changed", []) if i not in c.mutates + c.may_change]
        if changed:
            names = ", ".join(_arg_name(c, i) for i in changed)
            raise CheckError(
                _(
                    "{what} changed its argument {names} (a tensor's values, shape, requires_grad or "
                    "memory, as x.data = ... does; "
                    "a module's weights, train/eval mode, gradients or hooks). The caller still "
                    "needs it as it was: compute on a copy or with out-of-place operations "
                    "(x = x - m, not x -= m), and put back any mode you change."
                ).format(what=what, names=names)
            )
        theirs = copies(inputs.args)  # the reference's own arguments
        memory, largest = self.family == "memory", self.family == "largest"
        made = probe.LargestMade() if largest else None  # around the call, as in the probe
        with probe.SavedTensors() if memory else contextlib.nullcontext() as saved:
            expected, _obj, reference_reseeded = _run_reference(
                c, theirs, inputs.kwargs, watched=self.family == "values", around_call=made
            )
        if c.view is not None:
            expected = wire.roundtrip(c.view(expected))
        if memory:
            _compare_memory(c, seen.get("saved_peak", 0), saved.peak, what, inputs)
        if largest:
            _compare_largest(c, seen.get("made_peak", 0), made.peak, what, inputs)
        if self.family == "device":
            _compare_on_meta(seen.get("result"), expected, what)
            return
        compare = c.compare or compare_values
        token = _TOLERANCE.set({**TOLERANCE, **(c.tolerance or {})})
        try:
            compare(seen.get("result"), expected, what, inputs)
            for i, got in zip(c.mutates, seen.get("effects", []), strict=False):
                after = _("{what}, its argument {name} afterwards").format(
                    what=what, name=_arg_name(c, i)
                )
                compare_values(got, wire.roundtrip(probe.effect(theirs[i])), after, inputs)
            if self.family == "grad":
                _compare_grads(c, graph, grad_args, seen, what)
        except CheckError as err:
            hint = c.hint(self.family, inputs) if c.hint else ""
            if not hint:
                raise
            raise CheckError(f"{err} {hint}") from None
        finally:
            _TOLERANCE.reset(token)
        if seen.get("reseeded") and not reference_reseeded and not c.global_random_ok:
            raise CheckError(
                _(
                    "{what} reseeded a global random number generator (torch.manual_seed, "
                    "random.seed, np.random.seed) or drew from Python's or NumPy's, which this "
                    "exercise does not need: every later random number of the caller would "
                    "change. Seed once at the top of a script, not inside a function; where "
                    "randomness is needed, take a torch.Generator argument."
                ).format(what=what)
            )


def _exact(c: Contract) -> bool:
    """Whether the contract compares float64 results as FLOAT64_EXACT does (the text says
    "compute in the input's dtype")."""
    rtol = (c.tolerance or {}).get(torch.float64, TOLERANCE[torch.float64])[0]
    return rtol <= FLOAT64_EXACT[torch.float64][0]


def _finer(t: torch.Tensor) -> torch.Tensor:
    """``t`` (float64, drawn in float32) with each value that is not a whole number moved by
    one to two parts in 2**27 of itself: bits float32 cannot hold. Without them a float32
    working copy of a float64 input is exact, and a copy cast back passes where the text says
    "compute in the input's dtype". Whole numbers (labels, masks, counts), infinities and NaN
    stay as they are; each move is below half a float32 step, so no two values swap places."""
    g = torch.Generator().manual_seed(t.numel())
    moved = t * (1 + (1 + torch.rand(t.shape, generator=g, dtype=t.dtype)) * 2.0**-27)
    return torch.where(~torch.isfinite(t) | (t == t.round()), t, moved)


def _as_dtype(inputs: Inputs, dtype: torch.dtype, fine: bool = False) -> Inputs:
    """The call with its float tensors in ``dtype``, those inside a tuple or list argument too
    (a cache of (k, v) pairs, a batch of samples); the others stay as they are. ``fine``:
    float64 values with bits below float32's precision (``_finer``)."""

    def cast(a: Any) -> Any:
        if isinstance(a, torch.Tensor):
            if not a.dtype.is_floating_point:
                return a
            return _finer(a.to(dtype)) if fine else a.to(dtype)
        if type(a) in (tuple, list):
            return type(a)(cast(x) for x in a)
        return a

    return Inputs(tuple(cast(a) for a in inputs.args), inputs.kwargs)


def copies(args: Sequence) -> list:
    """The reference's own arguments: tensors cloned, built objects built again (in order,
    each getting the earlier copies it names)."""
    made: list = []
    for a in args:
        if isinstance(a, Build):
            made.append(a.builder(a.spec, *[made[i] for i in a.of]))
        else:
            tensor = isinstance(a, torch.Tensor)
            made.append(a.detach().clone().requires_grad_(a.requires_grad) if tensor else a)
    return made


def _run_reference(
    c: Contract, args: list, kwargs: dict, watched: bool = False, around_call: Any = None
) -> tuple[Any, Any, bool]:
    """The reference's result on its own copies, called the way the answer is; the object it
    belongs to (its class's instance, if built); and, ``watched`` (the values family, as the
    probe watches the answer), whether building the instance or the call reseeded a global
    random generator. ``around_call``: a context manager around the call alone."""
    case = {"construct": c.construct, "method": c.method, "fill": c.fill}
    construction = probe.RandomWatch()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # in a plain nbgrader kernel, stderr would cost marks
        fn, call, obj = probe.answer_callable(
            c.reference, args, case, watch=construction if watched else None
        )
        with probe.random_watched(watched) as random_seen, around_call or contextlib.nullcontext():
            result = fn(*call, **kwargs)
        return result, obj, random_seen.reseeded or construction.reseeded


def _sent(args: Sequence) -> list:
    """The arguments as they cross to the kernel (built objects as their recipe)."""
    return [a.sent() if isinstance(a, Build) else a for a in args]


def _arg_name(c: Contract, i: int) -> str:
    return c.arg_names[i] if i < len(c.arg_names) else f"#{i + 1}"


def _plain(text: str) -> str:
    """Text without terminal colour codes (some of torch's errors carry them)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _frames(err: AnswerRaised) -> str:
    return ("\n" + "\n".join(err.frames[-3:])) if err.frames else ""


def describe_call(c: Contract, inputs: Inputs, family: str) -> str:
    """``name(x: float16 (1, 0), k=2)`` plus how the family changed the inputs."""
    parts = [
        f"{_arg_name(c, i) if c.arg_names else ''}{': ' if c.arg_names else ''}{describe(a)}"
        for i, a in enumerate(inputs.args)
    ]
    kwargs = [f"{k}={describe(v)}" for k, v in inputs.kwargs.items()]
    how = {
        "strides": _(" [tensor inputs non-contiguous]"),
        "device": _(" [inputs on another device]"),
        "grad": _(" [float inputs require grad]"),
        "once": _(" [lists passed as streams that can be read once]"),
    }.get(family, "")
    if c.construct is None:
        return f"{c.name}({', '.join(parts + kwargs)}){how}"
    # A class: built from the first arguments, then called (or its method) on the rest.
    built, called = parts[: c.construct], parts[c.construct :] + kwargs
    if c.method == "__getattribute__":  # an attribute of the built object, read back
        return f"{c.name}({', '.join(built)}).{inputs.args[c.construct]}{how}"
    method = f".{c.method}" if c.method else ""
    return f"{c.name}({', '.join(built)}){method}({', '.join(called)}){how}"


def describe(value: Any) -> str:
    """A short description of an argument: a tensor by dtype and shape, the rest by repr."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        return f"{dtype} tensor of shape {tuple(value.shape)}"
    if isinstance(value, Build):
        return value.label or value.builder.__name__.removeprefix("build_")
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------------------------------
# Comparisons.


def compare_values(got: Any, expected: Any, what: str, inputs: Inputs) -> None:
    """Tensors by dtype, shape and value (tolerance by dtype); sequences item by item."""
    if isinstance(expected, torch.Tensor):
        rtol, atol = (_TOLERANCE.get() or TOLERANCE).get(expected.dtype, (0.0, 0.0))
        assert_close(got, expected.detach(), rtol=rtol, atol=atol, what=what)
        return
    if isinstance(expected, dict):
        if not isinstance(got, dict) or sorted(got) != sorted(expected):
            raise CheckError(
                _("{what} has keys {got}, expected {expected}.").format(
                    what=what,
                    got=sorted(got) if isinstance(got, dict) else describe(got),
                    expected=sorted(expected),
                )
            )
        for k in expected:
            compare_values(got[k], expected[k], f"{what}[{k!r}]", inputs)
        return
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            raise CheckError(
                _("{what} returned {got}, expected {n} values.").format(
                    what=what, got=describe(got), n=len(expected)
                )
            )
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            compare_values(g, e, f"{what}[{i}]", inputs)
        return
    if isinstance(expected, float):
        if not isinstance(got, (int, float)) or not math.isclose(
            got, expected, rel_tol=1e-6, abs_tol=1e-9
        ):
            raise CheckError(
                _("{what} returned {got}, expected {expected}.").format(
                    what=what, got=got, expected=expected
                )
            )
        return
    if got != expected or type(got) is not type(expected):
        raise CheckError(
            _("{what} returned {got!r}, expected {expected!r}.").format(
                what=what, got=got, expected=expected
            )
        )


def device_mix_error(what: str, error: str) -> CheckError:
    """The device family's verdict on an answer that mixed devices (PyTorch's ``error``);
    also for a hand-written check that runs the family's probe itself."""
    return CheckError(
        _(
            "{what}: with its inputs on another device (standing in for a "
            "GPU), the answer mixed devices: {error}. A tensor made with "
            "torch.zeros, torch.arange, torch.tensor... lands on the CPU unless you "
            "pass device=x.device (or build it with x.new_zeros, torch.zeros_like)."
        ).format(what=what, error=error)
    )


def stays_on_its_device(got: dict, what: str) -> None:
    """A tensor the device family's probe described must be on ``meta``, its inputs' device."""
    if got["device"] != "meta":
        raise CheckError(
            _(
                "{what} returned a tensor on {device}, not on its inputs' device "
                "(standing in for a GPU). Make new tensors with device=x.device or "
                "x.new_*, so the result lives where the inputs do."
            ).format(what=what, device=got["device"])
        )


def _compare_on_meta(got: Any, expected: Any, what: str) -> None:
    """On ``meta`` only where the tensors live, their dtypes and shapes can be compared."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, dict) or "device" not in got:
            raise CheckError(
                _("{what} returned {got}, expected a tensor.").format(what=what, got=describe(got))
            )
        stays_on_its_device(got, what)
        if got["dtype"] != expected.dtype or list(got["shape"]) != list(expected.shape):
            raise CheckError(
                _(
                    "{what} returned {dtype} of shape {shape}, expected {edtype} of shape {eshape}."
                ).format(
                    what=what,
                    dtype=got["dtype"],
                    shape=tuple(got["shape"]),
                    edtype=expected.dtype,
                    eshape=tuple(expected.shape),
                )
            )
    elif isinstance(expected, (tuple, list)) and isinstance(got, (tuple, list)):
        for i, (g, e) in enumerate(zip(got, expected, strict=False)):
            _compare_on_meta(g, e, f"{what}[{i}]")
    elif isinstance(expected, dict) and isinstance(got, dict):  # (the values family: the keys)
        for key in [k for k in expected if k in got]:
            _compare_on_meta(got[key], expected[key], f"{what}[{key!r}]")


def _compare_memory(c: Contract, got: int, reference: int, what: str, inputs: Inputs) -> None:
    factor, slack = MEMORY_SLACK
    if got > factor * reference + slack:
        hint = c.hint("memory", inputs) if c.hint else ""
        raise CheckError(
            _(
                "{what} kept {got:,} bytes of saved activations alive at once for backward, "
                "where {reference:,} are enough: graphs are kept longer than needed (a loss "
                "stored as a tensor rather than with .item(), losses summed before one "
                "backward, a forward pass outside torch.no_grad() that nothing differentiates)."
                " {hint}"
            )
            .format(what=what, got=got, reference=reference, hint=hint)
            .strip()
        )


def _compare_largest(c: Contract, got: int, reference: int, what: str, inputs: Inputs) -> None:
    factor, slack = LARGEST_SLACK
    if got > factor * reference + slack:
        rule = c.rule_text() if c.rule_text else ""
        hint = c.hint("largest", inputs) if c.hint else ""
        raise CheckError(
            _(
                "{what} made a tensor of {got:,} numbers at once, where the largest this "
                "task needs holds {reference:,}: it built something whole that the text asks "
                "you to avoid. {rule} {hint}"
            )
            .format(what=what, got=got, reference=reference, rule=rule, hint=hint)
            .strip()
        )


@dataclass(frozen=True)
class _Graph:
    """The reference's gradients: which float outputs carry a graph, and d(sum w*out)/d(input)."""

    outputs: list[int]
    grads: list[torch.Tensor]
    inputs: list[torch.Tensor]
    param_grads: list[torch.Tensor] = field(default_factory=list)


def _reference_graph(c: Contract, inputs: Inputs, grad_args: list[int]) -> _Graph | None:
    args = copies(inputs.args)
    for i in grad_args:
        args[i] = args[i].detach().requires_grad_(True)
    result, obj, _reseeded = _run_reference(c, args, inputs.kwargs)
    outs = [t for t in probe.tensors_in(result) if t.is_floating_point()]
    positions = [k for k, t in enumerate(outs) if t.requires_grad]
    params = probe.trained_parameters([*args, obj], by_name=c.fill == "by name")
    if not positions or not (grad_args or params):
        return None
    total = sum((outs[k] * probe.grad_weights(outs[k])).sum() for k in positions)
    wrt = [args[i] for i in grad_args] + params
    grads = [
        torch.zeros_like(a) if g is None else g
        for a, g in zip(wrt, torch.autograd.grad(total, wrt, allow_unused=True), strict=True)
    ]
    return _Graph(
        positions, grads[: len(grad_args)], wrt[: len(grad_args)], grads[len(grad_args) :]
    )


def _compare_grads(c: Contract, graph: _Graph, grad_args: list[int], seen: dict, what: str):
    """The answer's result reaches its inputs in the graph, with the reference's gradients."""
    if seen.get("grad_output_changed"):
        raise CheckError(
            _(
                "{what}: its backward changed grad_output in place. Autograd may hand the same "
                "tensor to other parts of the graph too, which then get wrong gradients: "
                "compute a new tensor (grad_output * ..., not grad_output.mul_(...))."
            ).format(what=what)
        )
    if "grads" not in seen:
        raise CheckError(
            _(
                "{what}: the result has no gradient history (no grad_fn), so a loss computed "
                "from it cannot train anything. Do not compute it under torch.no_grad(), with "
                ".detach(), .item() or by building a new tensor from its values."
            ).format(what=what)
        )
    for i, got, exp in zip(grad_args, seen["grads"], graph.grads, strict=True):
        name = _arg_name(c, i)
        got = torch.zeros_like(exp) if got is None else got
        rtol, atol = TOLERANCE.get(exp.dtype, (1e-4, 1e-5))
        try:
            assert_close(got, exp, rtol=rtol * 10, atol=atol * 10, what=f"the gradient for {name}")
        except CheckError as err:
            raise CheckError(
                _(
                    "{what}: the gradient that flows back to {name} is wrong. The values are "
                    "right but part of the computation is cut from the graph (a .detach(), "
                    "torch.no_grad(), a statistic taken with .item()) or changed in place. {err}"
                ).format(what=what, name=name, err=err)
            ) from None
    got_params = seen.get("param_grads", [])
    if len(got_params) != len(graph.param_grads):
        raise CheckError(
            _(
                "{what}: {got} parameters take part in training (require grad), where "
                "{expected} should: freeze only what the text says, and register every "
                "weight as an nn.Parameter (a plain tensor attribute is not trained)."
            ).format(what=what, got=len(got_params), expected=len(graph.param_grads))
        )
    for k, (got, exp) in enumerate(zip(got_params, graph.param_grads, strict=True)):
        got = torch.zeros_like(exp) if got is None else got
        rtol, atol = TOLERANCE.get(exp.dtype, (1e-4, 1e-5))
        try:
            assert_close(got, exp, rtol=rtol * 10, atol=atol * 10, what=f"parameter #{k + 1}")
        except CheckError as err:
            raise CheckError(
                _(
                    "{what}: the gradient that reaches the module's parameter #{k} (of shape "
                    "{shape}) is wrong. The values are right but the weight is cut from the "
                    "graph (read through .data or .detach(), used under torch.no_grad()) or "
                    "used twice where the text uses it once. {err}"
                ).format(what=what, k=k + 1, shape=tuple(exp.shape), err=err)
            ) from None
