"""Hidden checks for 00_welcome."""

from __future__ import annotations

import torch

from autograder.boundary import call, observe
from autograder.probes import welcome as probes
from tutorial_lib.checks import (
    CheckError,
    assert_close,
    check_device,
    check_shape,
    check_type,
    same_device,
)
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _

# ---------------------------------------------------------------------------------------------
# Exercise 1: pick_device


def check_pick_device(pick_device) -> None:
    """Every combination of available back-ends, preferring CUDA, then MPS, then CPU.

    Devices are compared by what they resolve to: torch.device("cuda:0") is the default
    CUDA device as much as torch.device("cuda") is.
    """
    cases = {
        (False, False): torch.device("cpu"),
        (False, True): torch.device("mps"),
        (True, False): torch.device("cuda"),
        (True, True): torch.device("cuda"),
    }
    for (cuda, mps), expected in cases.items():
        what = f"pick_device(cuda_available={cuda}, mps_available={mps})"
        got = observe(call, pick_device, {"args": [cuda, mps]}, what)["result"]
        check_type(got, torch.device, what)
        if same_device(got, expected):
            continue
        hint = _(
            " Prefer CUDA, then MPS, then the CPU, and only pick a back-end that is available."
        )
        if got.type == "mps" and cuda:
            hint = _(" CUDA comes first when both are available: test cuda_available before mps.")
        elif got.type == expected.type:
            hint = _(" Leave out the index or use 0: torch.device({type!r}).").format(
                type=expected.type
            )
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


# ---------------------------------------------------------------------------------------------
# Exercise 2: halve_until_small


def _reference_halvings(norm: float, limit: float) -> int:
    count = 0
    while norm > limit:
        norm /= 2
        count += 1
    return count


def _halving_cases() -> list[tuple[torch.Tensor, float, str]]:
    g = torch.Generator().manual_seed(0)
    cases = [
        (torch.tensor([3.0, 4.0]), 5.0, "leaf"),  # norm exactly at the limit: no halving
        (torch.tensor([0.1, 0.0]), 1.0, "leaf"),  # already small
        (torch.tensor([4.0, 0.0]), 1.0, "leaf"),  # 4 -> 2 -> 1: the ratio is a power of two
        (torch.tensor([0.0, 8.0, 0.0]), 0.5, "plain"),  # no gradients asked for
        (torch.tensor([6.0, 8.0]), 1.0, "nonleaf"),  # x has a history of its own
    ]
    for size in (1, 3, 7, 16):
        x = torch.randn(size, generator=g) * 10
        cases.append((x, float(torch.rand(1, generator=g)) + 0.1, "leaf"))
    x64 = (torch.randn(5, generator=g, dtype=torch.float64) * 1e3) + 1 / 3
    cases.append((x64, 0.3, "leaf"))
    cases.append((x64, 0.7, "plain"))
    return cases


def _kind_words(kind: str) -> str:
    """How the caller's x was made, in the current language (looked up at each call)."""
    return {
        "leaf": "requires_grad=True",
        "plain": _("no requires_grad"),
        "nonleaf": _("computed from a leaf that requires grad"),
    }[kind]


def check_halve_until_small(halve_until_small) -> None:
    """Values, dtype and gradients against a reference: inputs at, under and far over the
    limit, float64, with and without gradients; the caller's x must not change."""
    device = get_device()
    for x_cpu, limit, kind in _halving_cases():
        x = x_cpu.to(device)
        steps = _reference_halvings(float(x_cpu.norm()), limit)
        what = _(
            "halve_until_small(x of shape {shape}, {dtype}, {kind}, limit={limit:.3g})"
        ).format(shape=tuple(x.shape), dtype=x.dtype, kind=_kind_words(kind), limit=limit)
        seen = observe(
            probes.probe_halve_until_small,
            halve_until_small,
            {"x": x, "limit": limit, "kind": kind},
            what,
        )
        out = seen["out"]
        check_type(out, torch.Tensor, what)
        check_shape(out, tuple(x.shape), names="D", what=what)
        if out.dtype != x.dtype:
            raise CheckError(
                _(
                    "{what} has dtype {got}, expected {expected} (x's dtype). Halving keeps "
                    "the dtype: work on x itself, without a .float() or .double() copy."
                ).format(what=what, got=out.dtype, expected=x.dtype)
            )
        check_device(out, device, what)
        try:
            assert_close(out, x / 2**steps, what=what)
        except CheckError as err:
            raise CheckError(
                _(
                    "{err} The norm of x is {norm:.6g}, so {steps} halving(s) bring "
                    "it to at most {limit:.3g}: halve while x.norm() > limit (strictly), with the "
                    "Euclidean norm x.norm(), and stop as soon as it is at most the limit."
                ).format(err=err, norm=float(x_cpu.norm()), steps=steps, limit=limit)
            ) from None
        if not torch.equal(seen["x_after"], x):
            raise CheckError(
                _(
                    "{what} changed the caller's x in place (x /= 2, x.mul_, x.data...). Build a "
                    "new tensor each time (x = x / 2) so the caller's tensor keeps its values."
                ).format(what=what)
            )
        if kind == "plain":
            continue
        if not seen["requires_grad"]:
            raise CheckError(
                _(
                    "{what} returned a tensor with no autograd history: the result is cut off from "
                    "x. Build it with tensor operations on x (x / 2), not from x.item(), x.tolist(), "
                    "torch.tensor(...) or .detach(); when no halving is needed, return x itself."
                ).format(what=what)
            )
        grad = seen.get("grad")
        if grad is None:
            raise CheckError(
                _(
                    "{what}: out.sum().backward() leaves the caller's x without a gradient. The "
                    "result must be computed from x itself."
                ).format(what=what)
            )
        assert_close(
            grad,
            torch.full_like(x, 0.5**steps),
            what=_("d out.sum() / dx for {what} (0.5 ** {steps} everywhere)").format(
                what=what, steps=steps
            ),
        )


# ---------------------------------------------------------------------------------------------
# Exercise 3: value_and_grad

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


def _value_cases() -> list[tuple[str, torch.Tensor, str, torch.Tensor | None]]:
    g = torch.Generator().manual_seed(1)
    cases = []
    for shape in [(1,), (4,), (2, 3)]:
        for name in probes.FUNCTIONS:
            cases.append((name, torch.randn(shape, generator=g), "plain", None))
    old = torch.full((2, 3), 7.0)
    cases += [
        ("sum of squares", torch.randn(2, 3, generator=g), "leaf", None),
        ("sum of sin", torch.randn(4, generator=g), "leaf", torch.full((4,), 7.0)),
        ("weighted sum", torch.randn(2, 3, generator=g), "leaf", old),
        ("mean of cubes", torch.randn(3, generator=g), "nonleaf", None),
        ("sum of squares", torch.randn(3, 2, generator=g, dtype=torch.float64) * 30, "plain", None),
        ("sum of sin", torch.randn(5, generator=g, dtype=torch.float64) * 3, "leaf", None),
    ]
    return cases


def check_value_and_grad(value_and_grad) -> None:
    """Several scalar functions at random points, float32 and float64; the caller's x (plain,
    a leaf that requires grad and already has a .grad, or a non-leaf) must stay as it was."""
    device = get_device()
    for name, x_cpu, kind, old_grad in _value_cases():
        x = x_cpu.to(device)
        f = probes.FUNCTIONS[name]
        df = _DERIVATIVES[name]
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
        value, grad = result
        check_type(value, float, _("the value from {what}").format(what=what))
        expected = float(f(x.double()))
        rel = 1e-9 if x.dtype == torch.float64 else 1e-4
        if abs(value - expected) > rel * max(1.0, abs(expected)):
            hint = ""
            if x.dtype == torch.float64:
                hint = _(
                    " x is float64: compute in x's dtype (no .float() copy), or the value loses "
                    "half its digits."
                )
            raise CheckError(
                _("the value from {what} is {value!r}, expected {expected!r}.{hint}").format(
                    what=what, value=value, expected=expected, hint=hint
                )
            )
        gwhat = _("the gradient from {what}").format(what=what)
        if grad is None and kind != "plain":
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
        if grad.dtype != x.dtype:
            raise CheckError(
                _(
                    "{gwhat} has dtype {got}, expected {expected} (x's dtype). Copy x with "
                    "x.detach().clone(), which keeps its dtype, rather than .float()."
                ).format(gwhat=gwhat, got=grad.dtype, expected=x.dtype)
            )
        check_device(grad, device, gwhat)
        try:
            assert_close(grad, df(x), what=gwhat, rtol=1e-4, atol=1e-5)
        except CheckError as err:
            hint = ""
            if old_grad is not None:
                hint = _(
                    " The caller's x already had a .grad: gradients add up in .grad, so work "
                    "on a fresh copy (x.detach().clone().requires_grad_(True)) whose .grad "
                    "starts empty."
                )
            raise CheckError(f"{err}{hint}") from None
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
