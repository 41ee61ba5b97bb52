"""Hidden checks for 00_welcome.

Each exercise is a :class:`Contract` (``autograder/contracts.py``): a reference, a function
that draws inputs, and the families the text promises. ``value_and_grad`` keeps
hand-written lines for what a contract does not see: the caller's ``x.grad`` and the
gradients of the tensors ``x`` was computed from.
"""

from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

from autograder.boundary import observe
from autograder.contracts import FLOAT64_EXACT, TOLERANCE, Build, Contract, Draw, Inputs, uses
from autograder.probes import welcome as probes
from tutorial_lib.checks import (
    CheckError,
    assert_close,
    check_shape,
    check_type,
    same_device,
)
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _

# ---------------------------------------------------------------------------------------------
# Exercise 1: pick_device


def _reference_device(cuda_available: bool, mps_available: bool) -> torch.device:
    if cuda_available:
        return torch.device("cuda")
    if mps_available:
        return torch.device("mps")
    return torch.device("cpu")


def _compare_device(got, expected: torch.device, what: str, inputs: Inputs) -> None:
    """Devices compared by what they resolve to: torch.device("cuda:0") is the default CUDA
    device as much as torch.device("cuda") is."""
    cuda, mps = inputs.args
    check_type(got, torch.device, what)
    if same_device(got, expected):
        return
    hint = _(" Prefer CUDA, then MPS, then the CPU, and only pick a back-end that is available.")
    if got.type == "mps" and cuda:
        hint = _(" CUDA comes first when both are available: test cuda_available before mps.")
    elif got.type == expected.type:
        hint = _(" Leave out the index or use 0: torch.device({type!r}).").format(
            type=expected.type
        )
    elif got.type == "cpu" and cuda and mps:
        hint = _(" Both are available here: CUDA comes first, so return torch.device('cuda').")
    elif got.type == "cpu" and mps:
        hint = _(
            " MPS is available here (mps_available=True): return torch.device('mps'). Use "
            "the arguments, not torch.backends.mps.is_available() or the machine you run on."
        )
    elif got.type == "cpu" and cuda:
        hint = _(" Use the arguments, not torch.cuda.is_available(): CUDA is available here.")
    raise CheckError(
        _("{what} returned {got}, expected {expected}.{hint}").format(
            what=what, got=got, expected=expected, hint=hint
        )
    )


PICK_DEVICE = Contract(
    "pick_device",
    _reference_device,
    lambda d: Inputs((d.draw(st.booleans()), d.draw(st.booleans()))),
    families=("values",),  # two booleans in, a device out: no tensor for the other families
    arg_names=("cuda_available", "mps_available"),
    compare=_compare_device,
)


@uses(PICK_DEVICE)
def check_pick_device(pick_device) -> None:
    """The contract: every combination of available back-ends, CUDA, then MPS, then CPU;
    then the same combinations while torch claims this machine has every accelerator, and
    none: the answer decides from its arguments, not from the machine it runs on."""
    for available in (True, False):
        seen = observe(
            probes.probe_pick_device_elsewhere,
            pick_device,
            {"available": available},
            _("pick_device on a machine with every accelerator")
            if available
            else _("pick_device on a machine with no accelerator"),
        )
        for cuda, mps, got in seen["results"]:
            expected = _reference_device(cuda, mps)
            check_type(got, torch.device, f"pick_device({cuda}, {mps})")
            if same_device(got, expected):
                continue
            where = (
                _("on a machine that has CUDA and MPS")
                if available
                else _("on a machine with neither CUDA nor MPS")
            )
            raise CheckError(
                _(
                    "pick_device({cuda}, {mps}) returned {got} {where}, expected {expected}: "
                    "decide from the arguments only. torch.cuda.is_available(), "
                    "torch.backends.mps.is_available() and the setup cell's device describe the "
                    "machine the code runs on, not the one the caller asks about."
                ).format(cuda=cuda, mps=mps, got=got, where=where, expected=expected)
            )


# ---------------------------------------------------------------------------------------------
# Exercise 2: halve_until_small


def _reference_halve(x: torch.Tensor, limit: float) -> torch.Tensor:
    while x.norm() > limit:
        x = x / 2
    return x


def _draw_halving(d: Draw) -> Inputs:
    """x of shape (D,) and a limit: a norm exactly at the limit after some halvings (3-4-5,
    exact in every dtype; in float32 also 24, 60 and 61 halvings, past a loop capped at 10,
    20 or 60 tries, and still far from float32's overflow in x.norm(); in float64 a norm just over the
    limit that a float32 norm rounds down to it), or random values under, near and far over
    the limit."""
    if d.draw(st.booleans()):
        # float16 ends at 65504: the far ones only where the family keeps x's dtype
        # (no more than 62: x / 2**k, a right answer, cannot divide by an int past int64; and
        # no more than 61: at 62, a squared-norm answer's x * x overflows float32 and never ends)
        far = [] if d.family == "dtypes" else [24, 60, 61, "float64 just over"]
        k = d.draw(st.sampled_from([0, 1, 2, 3, *far]))
        if k == "float64 just over":  # a norm of 5 * (1 + 2**-40): over 5, though not in float32
            return Inputs((torch.tensor([3.0, 4.0], dtype=torch.float64) * (1 + 2.0**-40), 5.0))
        return Inputs((torch.tensor([3.0, 4.0]) * 2.0**k, 5.0))
    limit = d.draw(st.sampled_from([0.3, 1.0, 2.5, 7.0, 40.0]))
    return Inputs((d.tensor(d.size(1, 8), low=-10.0, high=10.0), limit))


def _compare_halving(got, expected: torch.Tensor, what: str, inputs: Inputs) -> None:
    x, limit = inputs.args
    try:
        assert_close(got, expected, *TOLERANCE.get(expected.dtype, (None, None)), what=what)
    except CheckError as err:
        norm, steps = float(x.double().norm()), 0
        while norm / 2**steps > limit:
            steps += 1
        hint = ""
        if isinstance(got, torch.Tensor) and got.dtype != x.dtype:
            hint = _(
                " Halving keeps the dtype: work on x itself, without a .float() or .double() copy."
            )
        elif isinstance(got, torch.Tensor) and got.shape == expected.shape:
            hint = _(
                " The norm of x is {norm:.6g}, so {steps} halving(s) bring it to at most "
                "{limit:.3g}: halve while x.norm() > limit (strictly), with the Euclidean norm "
                "x.norm(), and stop as soon as it is at most the limit."
            ).format(norm=norm, steps=steps, limit=limit)
            norm32, steps32 = float(x.float().norm()), 0
            while norm32 / 2**steps32 > limit and steps32 <= steps:
                steps32 += 1
            if x.dtype == torch.float64 and math.isfinite(norm32) and steps32 != steps:
                hint += _(
                    " x is float64 here, and its norm is just over the limit: a norm taken in "
                    "float32 (x.float().norm(), .float() on the norm) rounds it down to the "
                    "limit. Take x.norm() in x's own dtype."
                )
        raise CheckError(f"{err}{hint}") from None


HALVE_UNTIL_SMALL = Contract(
    "halve_until_small",
    _reference_halve,
    _draw_halving,
    # (meta has no norm to compare: the device family runs on stand-ins that keep values)
    families=("values", "edges", "dtypes", "strides", "grad", "device"),
    arg_names=("x", "limit"),
    compare=_compare_halving,
)


@uses(HALVE_UNTIL_SMALL)
def check_halve_until_small(halve_until_small) -> None:
    """The contract: norms at, under and far over the limit, every dtype, non-contiguous,
    with gradients (0.5 ** k back to x); the caller's x left as it was. Then what the
    contract does not draw: an x that is the result of other operations (not a leaf), which
    autograd lets an answer change in place, and which must keep its values too."""
    device = get_device()
    for values, limit in (([3.0, 4.0], 1.0), ([6.0, -8.0, 0.0], 100.0)):
        x = torch.tensor(values, device=device)
        what = _(
            "halve_until_small(x, {limit}) with x = {values}, the result of other operations "
            "(x = leaf * 1, not a leaf)"
        ).format(limit=limit, values=values)
        seen = observe(
            probes.probe_halve_until_small,
            halve_until_small,
            {"x": x, "limit": limit, "kind": "nonleaf"},
            what,
        )
        if not torch.equal(seen["x_after"].cpu(), x.cpu()):
            raise CheckError(
                _(
                    "{what} changed the caller's x: in-place halving (x /= 2, x.div_(2), "
                    "x.mul_(0.5)) is allowed by autograd on a tensor that is not a leaf, but it "
                    "writes into the caller's tensor. Build a new tensor at each halving: "
                    "x = x / 2."
                ).format(what=what)
            )
        expected = _reference_halve(x, limit)
        assert_close(seen["out"], expected, what=what)
        if not seen["requires_grad"] or seen.get("grad") is None:
            raise CheckError(
                _("{what}: the result is not connected to x's leaf in autograd's graph.").format(
                    what=what
                )
            )
        steps = round(math.log2(float(x.norm()) / float(expected.norm()))) if x.norm() else 0
        assert_close(
            seen["grad"],
            torch.full_like(x, 0.5**steps),
            what=_("the gradient of {what}").format(what=what),
        )


# ---------------------------------------------------------------------------------------------
# Exercise 3: value_and_grad


def _reference_value_and_grad(f, x: torch.Tensor) -> tuple[float, torch.Tensor]:
    leaf = x.detach().clone().requires_grad_(True)
    y = f(leaf)
    y.backward()
    return y.item(), leaf.grad


def _draw_function_and_point(d: Draw) -> Inputs:
    """One of probes.FUNCTIONS (built in the kernel from its name) at x of one or two
    dimensions."""
    name = d.draw(st.sampled_from(list(probes.FUNCTIONS)))
    shape = [d.size(1, 4) for _dim in range(d.draw(st.integers(1, 2)))]
    f = Build(probes.build_function, {"name": name}, _function_words(name))
    return Inputs((f, d.tensor(*shape)))


def _compare_value_and_grad(got, expected: tuple, what: str, inputs: Inputs) -> None:
    """(a float within rounding of f's value in x's dtype, the gradient in x's dtype)."""
    x = inputs.args[1]
    check_type(got, (tuple, list), what)
    if len(got) != 2:
        raise CheckError(
            _("{what} should return (value, grad), got {n} items.").format(what=what, n=len(got))
        )
    value, grad = got
    vwhat = _("the value from {what}").format(what=what)
    if isinstance(value, torch.Tensor):
        raise CheckError(
            _("{vwhat} is a tensor; the text asks for a Python float: y.item().").format(
                vwhat=vwhat
            )
        )
    check_type(value, float, vwhat)
    # float64: as exact as float64 computes it (a float32 copy is off by 1e-8 and more)
    rtol, atol = {**TOLERANCE, **FLOAT64_EXACT}[x.dtype]
    if abs(value - expected[0]) > atol + rtol * abs(expected[0]):
        raise CheckError(
            _(
                "{vwhat} is {value!r}, expected {expected!r}. Compute f on a copy in x's dtype "
                "(x.detach().clone()), without a .float() or .double() copy."
            ).format(vwhat=vwhat, value=value, expected=expected[0])
        )
    gwhat = _("the gradient from {what}").format(what=what)
    if isinstance(grad, torch.Tensor) and grad.dtype != x.dtype:
        raise CheckError(
            _(
                "{gwhat} has dtype {got}, expected {expected} (x's dtype). Copy x with "
                "x.detach().clone(), which keeps its dtype, rather than .float()."
            ).format(gwhat=gwhat, got=grad.dtype, expected=x.dtype)
        )
    assert_close(grad, expected[1], *{**TOLERANCE, **FLOAT64_EXACT}[x.dtype], what=gwhat)


# No grad family: the reference's result has no graph (a float and a .grad), so the engine
# has nothing to differentiate and does not run the answer there. The hand-written lines of
# the check hand over an x that requires grad instead. The device family runs on stand-ins
# that keep values (meta has none to return with .item()).
VALUE_AND_GRAD = Contract(
    "value_and_grad",
    _reference_value_and_grad,
    _draw_function_and_point,
    families=("values", "edges", "dtypes", "strides", "device"),
    arg_names=("f", "x"),
    compare=_compare_value_and_grad,
    # float64 inputs then carry bits float32 cannot hold: a float32 working copy shows
    tolerance=FLOAT64_EXACT,
)

_DERIVATIVES = {
    "sum of squares": lambda t: 2 * t,
    "sum of sin": torch.cos,
    "mean of cubes": lambda t: 3 * t**2 / t.numel(),
    "weighted sum": lambda t: torch.arange(t.numel(), dtype=t.dtype, device=t.device).reshape(
        t.shape
    ),
}


def _function_words(name: str) -> str:
    """A function of probes.FUNCTIONS named in the current language (the key stays English)."""
    return {
        "sum of squares": _("sum of squares"),
        "sum of sin": _("sum of sin"),
        "mean of cubes": _("mean of cubes"),
        "weighted sum": _("weighted sum"),
    }.get(name, name)


def _caller_cases() -> list[tuple[str, torch.Tensor, str, torch.Tensor | None]]:
    """What the contract cannot see: a caller's x.grad (already there, or None and to stay
    None, whether x requires grad or not) and the leaf a non-leaf x comes from."""
    g = torch.Generator().manual_seed(1)
    return [
        ("sum of sin", torch.randn(3, generator=g), "plain", None),  # no .grad left on it
        # the same shape again at once: a leaf kept from the call before adds its .grad
        ("sum of squares", torch.randn(3, generator=g), "plain", None),
        ("sum of squares", torch.randn(2, 3, generator=g), "leaf", None),
        ("sum of sin", torch.randn(4, generator=g), "leaf", torch.full((4,), 7.0)),
        ("weighted sum", torch.randn(2, 3, generator=g), "leaf", torch.full((2, 3), 7.0)),
        ("mean of cubes", torch.randn(3, generator=g), "nonleaf", None),
    ]


@uses(VALUE_AND_GRAD)
def check_value_and_grad(value_and_grad) -> None:
    """The contract (several functions at random points, every dtype, x plain or requiring
    grad, x's values and requires_grad kept), then: a caller's .grad, already there or None,
    stays as it was, no gradient reaches the leaf a non-leaf x was computed from, the
    caller's grad mode is left as it was, and the gradient comes from autograd (f gets a
    tensor it tracks at least once), not from finite differences."""
    device = get_device()
    for name, x_cpu, kind, old_grad in _caller_cases():
        x = x_cpu.to(device)
        caller = {
            "plain": "",
            "leaf": ", x.requires_grad=True"
            + (_(" with an existing .grad") if old_grad is not None else ""),
            "nonleaf": _(", x computed from a leaf that requires grad"),
        }[kind]
        what = _("value_and_grad({name}, x of shape {shape}, {dtype}{caller})").format(
            name=_function_words(name), shape=tuple(x.shape), dtype=x.dtype, caller=caller
        )
        case = {"function": name, "x": x, "kind": kind}
        if old_grad is not None:
            case["old_grad"] = old_grad.to(device)
        seen = observe(probes.probe_value_and_grad, value_and_grad, case, what)
        result = seen["result"]
        check_type(result, (tuple, list), what)
        if len(result) != 2:
            raise CheckError(
                _("{what} should return (value, grad), got {n} items.").format(
                    what=what, n=len(result)
                )
            )
        gwhat = _("the gradient from {what}").format(what=what)
        grad = result[1]
        if grad is None:
            raise CheckError(
                _(
                    "{gwhat} is None. The caller's x requires grad here, so x.clone() is not a new "
                    "leaf: it keeps x's history, backward() sends the gradient through it into the "
                    "caller's tensors, and the clone's own .grad stays None. Cut the history first: "
                    "x.detach().clone().requires_grad_(True)."
                ).format(gwhat=gwhat)
            )
        check_type(grad, torch.Tensor, gwhat)
        check_shape(grad, tuple(x.shape), what=gwhat)
        if seen.get("grad_requires_grad"):
            raise CheckError(
                _(
                    "{gwhat} requires grad: it carries a graph back through f (create_graph=True, "
                    "or a gradient computed from tensors that require grad), which keeps f's "
                    "intermediate tensors alive as long as the caller holds the gradient, and "
                    "makes every later use of it record operations. Return plain numbers: "
                    "leaf.grad after y.backward(), or torch.autograd.grad(y, leaf) without "
                    "create_graph."
                ).format(gwhat=gwhat)
            )
        try:
            assert_close(grad, _DERIVATIVES[name](x), what=gwhat, rtol=1e-4, atol=1e-5)
        except CheckError as err:
            hint = ""
            if old_grad is not None:
                hint = _(
                    " The caller's x already had a .grad: gradients add up in .grad, so work "
                    "on a fresh copy (x.detach().clone().requires_grad_(True)) whose .grad "
                    "starts empty."
                )
            raise CheckError(f"{err}{hint}") from None
        if not seen["autograd"]:
            raise CheckError(
                _(
                    "{what}: f was never called on a tensor that requires grad, so the gradient "
                    "did not come from autograd (finite differences only approximate it). Ask "
                    "autograd: leaf = x.detach().clone().requires_grad_(True), y = f(leaf), "
                    "y.backward(), then leaf.grad."
                ).format(what=what)
            )
        _check_caller_untouched(what, seen, x, kind, old_grad)


def _check_caller_untouched(what, seen, x, kind, old_grad) -> None:
    fix = _(" Work on a private copy: x.detach().clone().requires_grad_(True).")
    if not torch.equal(seen["x_after"], x):
        raise CheckError(
            _("{what} changed the values of the caller's x.{fix}").format(what=what, fix=fix)
        )
    wanted_rg = kind != "plain"
    if seen["x_requires_grad"] != wanted_rg:
        raise CheckError(
            _("{what} changed the caller's x.requires_grad from {before} to {after}.{fix}").format(
                what=what, before=wanted_rg, after=seen["x_requires_grad"], fix=fix
            )
        )
    if kind == "plain" and seen["x_grad"] is not None:
        raise CheckError(
            _("{what} left a .grad on the caller's x.{fix}").format(what=what, fix=fix)
        )
    if kind == "leaf":
        after = seen["x_grad"]
        if old_grad is None and after is not None:
            raise CheckError(
                _(
                    "{what} filled the caller's x.grad: backward() went through to the caller's "
                    "tensor. x.clone() keeps the history; x.detach().clone() starts a new leaf."
                ).format(what=what)
                + fix
            )
        if old_grad is not None and (
            after is None or not torch.equal(after.cpu(), old_grad.to(after.dtype))
        ):
            raise CheckError(
                _(
                    "{what} changed the .grad the caller's x already had (it was all 7s). Leave "
                    "the caller's gradients alone."
                ).format(what=what)
                + fix
            )
    if kind == "nonleaf" and seen["leaf_grad"] is not None:
        raise CheckError(
            _(
                "{what} sent a gradient back into the tensors x was computed from (their .grad "
                "is no longer None): x.clone() keeps x's history; x.detach().clone() cuts it."
            ).format(what=what)
            + fix
        )
