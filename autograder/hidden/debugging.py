"""Hidden checks for 07_debugging."""

from __future__ import annotations

import copy
import itertools
import math

import torch
from hypothesis import strategies as st
from torch import nn

from autograder.boundary import AnswerRaised, observe
from autograder.contracts import Build, Contract, Draw, Inputs, uses
from autograder.probes import debugging as probes
from tutorial_lib.checks import CheckError, assert_close, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _

# ----------------------------------------------------------------------------- helpers


def _mlp(sizes, g, act="relu", dtype=torch.float32, device=None) -> dict:
    """The spec of linear layers of the given widths with ``act`` between them, weights from ``g``."""
    return {
        "kind": "mlp",
        "sizes": list(sizes),
        "act": act,
        "dtype": dtype,
        "device": torch.device(device or get_device()),
        "params": probes.random_params(probes.mlp(sizes, act), g),
    }


def _with_unused(g, device) -> dict:
    """The spec of a model with a frozen layer and a parameter the forward pass never uses."""
    return {
        "kind": "with_unused",
        "dtype": torch.float32,
        "device": torch.device(device),
        "params": probes.random_params(probes.WithUnused(), g),
    }


def _nested(g, device, dtype=torch.float32) -> dict:
    """The spec of a model with a root-level parameter, nested blocks and buffers."""
    return {
        "kind": "nested",
        "dtype": dtype,
        "device": torch.device(device),
        "params": probes.random_params(probes.Nested(), g),
    }


def _wide_float(device) -> torch.dtype:
    """float64 where the device has it; Apple's MPS does not."""
    return torch.float32 if torch.device(device).type == "mps" else torch.float64


def _classification(n, features, classes, g, device, dtype=torch.float32):
    x = torch.randn(n, features, generator=g, dtype=dtype).to(device)
    y = torch.randint(0, classes, (n,), generator=g).to(device)
    return x, y


def _params(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _params_close(got, expected: list[torch.Tensor], rtol=1e-4, atol=1e-6) -> bool:
    """Whether the parameters a probe returned match ``expected`` (a model or a list)."""
    if isinstance(got, nn.Module):
        got = _params(got)
    if type(got) is not list or len(got) != len(expected):
        return False
    for p, e in zip(got, expected, strict=True):
        if not isinstance(p, torch.Tensor) or p.shape != e.shape or p.dtype != e.dtype:
            return False
        if not torch.allclose(p.to(e.device), e, rtol=rtol, atol=atol):
            return False
    return True


def _junk_grads(spec: dict, g: torch.Generator) -> list[torch.Tensor]:
    """Leftover gradients from an earlier step: a correct answer zeroes them first."""
    return [
        (10 * torch.randn(p.shape, generator=g, dtype=p.dtype)).to(p.device)
        for p in probes.build_model(spec).parameters()
    ]


def _as_float(value, what: str) -> float:
    if isinstance(value, torch.Tensor):
        raise CheckError(
            _("{what} is a tensor; return a Python float with .item() (or float(...)).").format(
                what=what
            )
        )
    check_type(value, (float, int), what)
    return float(value)


# ----------------------------------------------------------------------------- overfit_one_batch


def _reference_overfit(model, x, y, loss_fn, num_steps, lr) -> list[float]:
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _step in range(num_steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return losses


def check_overfit_one_batch(overfit_one_batch) -> None:
    """Loss sequence and final weights against a reference Adam run on the same batch."""
    device = get_device()
    g = torch.Generator().manual_seed(60)
    cases = []
    for n, features, hidden, classes, steps, lr in [(8, 4, 16, 3, 30, 1e-2), (1, 3, 5, 2, 5, 1e-1)]:
        spec = _mlp([features, hidden, classes], g, device=device)
        x, y = _classification(n, features, classes, g, device)
        cases.append((spec, x, y, "cross_entropy", steps, lr, "classification"))
    wide = _wide_float(device)
    spec = _mlp([3, 6, 2], g, act="tanh", dtype=wide, device=device)
    x = torch.randn(6, 3, generator=g, dtype=wide).to(device)
    y = torch.randn(6, 2, generator=g, dtype=wide).to(device)
    cases.append((spec, x, y, "mse", 20, 3e-2, f"{wide} regression"))
    spec = _mlp([2, 2], g, device=device)
    x, y = _classification(3, 2, 2, g, device)
    cases.append((spec, x, y, "cross_entropy", 0, 1e-2, "zero steps"))
    spec = _mlp([3, 4, 2], g, device=device)
    x, y = _classification(4, 3, 2, g, device)
    cases.append((spec, x, y, "cross_entropy", None, None, "classification"))  # the defaults

    for spec, x, y, loss, steps, lr, label in cases:
        defaults = steps is None
        if defaults:
            steps, lr = 100, 1e-2
            what = f"overfit_one_batch(model, x, y, loss_fn) (num_steps and lr left to their defaults) on a {label} batch"
        else:
            what = f"overfit_one_batch(..., num_steps={steps}, lr={lr:g}) on a {label} batch"
        reference = probes.build_model(spec)
        expected = _reference_overfit(reference, x, y, probes.LOSSES[loss](), steps, lr)
        case = {"model": spec, "x": x, "y": y, "loss": loss, "steps": steps, "lr": lr}
        case["defaults"] = defaults
        seen = observe(probes.probe_overfit_one_batch, overfit_one_batch, case, what)
        losses = seen["losses"]
        check_type(losses, list, what)
        if len(losses) != steps:
            hint = _(" The signature's defaults are num_steps=100, lr=1e-2.") if defaults else ""
            raise CheckError(
                _(
                    "{what} returned {n_losses} losses, expected one per step ({steps}).{hint}"
                ).format(what=what, n_losses=len(losses), steps=steps, hint=hint)
            )
        for i, value in enumerate(losses):
            if isinstance(value, torch.Tensor):
                raise CheckError(
                    _(
                        "entry {i} of {what} is a tensor. Store loss.item(): a stored loss "
                        "tensor keeps its whole autograd graph (every saved activation of that "
                        "step) alive, so memory grows with every step."
                    ).format(i=i, what=what)
                )
            check_type(value, float, f"entry {i} of {what}")
        try:
            assert_close(
                torch.tensor(losses, dtype=torch.float64).reshape(steps),
                torch.tensor(expected, dtype=torch.float64).reshape(steps),
                rtol=1e-4,
                atol=1e-6,
                what=_("the losses from {what}").format(what=what),
            )
        except CheckError as err:
            hint = (
                _(" The defaults are num_steps=100, lr=1e-2.")
                if defaults
                else _(" Use lr={lr:g}, the lr you were given.").format(lr=lr)
            )
            raise CheckError(
                _(
                    "{err} Build one torch.optim.Adam(model.parameters(), lr=lr) before "
                    "the loop; every step: zero_grad, forward, loss, record loss.item(), "
                    "backward, step. Entry 0 is the loss before any update.{hint}"
                ).format(err=err, hint=hint)
            ) from None
        if not _params_close(seen["params"], _params(reference)):
            raise CheckError(
                _(
                    "{what}: the losses match a reference run within tolerance, but the "
                    "model's weights after training differ from it. Use "
                    "torch.optim.Adam(model.parameters(), lr=lr) with its other settings "
                    "left at their defaults (betas, eps, no weight decay, no amsgrad), "
                    "train the model you were given in place, and do not change its "
                    "weights after the last step."
                ).format(what=what)
            )
        _check_no_side_effects(seen, what)


def _check_no_side_effects(seen: dict, what: str) -> None:
    """The caller's model mode, tensors and global random state, as a training helper leaves them."""
    if seen["training"]:
        raise CheckError(
            _(
                "{what} left {training} in eval mode. The model came in training mode "
                "and a training helper must leave it so: drop the model.eval() (or "
                "call model.train() again before returning)."
            ).format(what=what, training=seen["training"])
        )
    if seen["inputs_changed"]:
        raise CheckError(
            _(
                "{what} changed the caller's x or y in place. Leave the inputs alone: "
                "compute on them, or on a copy (x.clone()), without in-place "
                "operations."
            ).format(what=what)
        )
    if seen.get("rng_changed"):
        raise CheckError(
            _(
                "{what} changed torch's global random state (a torch.manual_seed(...) "
                "inside, or random draws). Seeding belongs to the caller: a helper "
                "that reseeds silently makes every later random number of the caller's "
                "run repeat. Remove it."
            ).format(what=what)
        )


# ----------------------------------------------------------------------------- clipped_step


def _grad_step(model, x, y, loss_fn, lr, momentum, max_norm, how="total") -> float | None:
    """One SGD step; ``how`` says how the gradients are clipped (the right way is "total")."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    total = float(torch.stack([gr.double().norm() for gr in grads]).norm())
    with torch.no_grad():
        if how == "total":
            nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        elif how == "always":  # rescaled to max_norm even when the norm is below it
            for gr in grads:
                gr.mul_(max_norm / total)
        elif how == "per_parameter":
            for gr in grads:
                gr.mul_(min(1.0, max_norm / (float(gr.norm()) + 1e-6)))
    optimizer.step()
    return total


def check_clipped_step(clipped_step) -> None:
    """Updated weights and the returned norm against clip-then-step; clipping on and off,
    float64, frozen and unused parameters, and the ways of clipping that differ from it."""
    device = get_device()
    g = torch.Generator().manual_seed(61)
    loss_fn = nn.CrossEntropyLoss()
    wide = _wide_float(device)
    for label, spec, n, max_norm, lr, momentum in [
        ("an MLP", _mlp([4, 8, 3], g, device=device), 16, 0.1, 0.5, 0.0),
        ("a linear layer", _mlp([5, 3], g, device=device), 1, 0.05, 1.0, 0.9),
        # max_norm far above the norm: nothing to clip
        ("an MLP", _mlp([3, 16, 16, 2], g, device=device), 32, 1e3, 0.1, 0.0),
        (
            f"a {wide} MLP",
            _mlp([3, 6, 2], g, act="tanh", dtype=wide, device=device),
            8,
            0.3,
            0.2,
            0.0,
        ),
        (
            "a model with a frozen layer and an unused parameter",
            _with_unused(g, device),
            6,
            0.02,
            1.0,
            0.0,
        ),
    ]:
        model = probes.build_model(spec)
        dtype = next(model.parameters()).dtype
        in_features = next(m for m in model.modules() if isinstance(m, nn.Linear)).in_features
        classes = [m for m in model.modules() if isinstance(m, nn.Linear)][-1].out_features
        x, y = _classification(n, in_features, classes, g, device, dtype=dtype)
        refs = {}
        for how in ("total", "none", "always", "per_parameter"):
            refs[how] = probes.build_model(spec)
            norm = _grad_step(refs[how], x, y, loss_fn, lr, momentum, max_norm, how)
            if how == "total":
                total = norm
        case = {
            "model": spec,
            "grads": _junk_grads(spec, g),
            "x": x,
            "y": y,
            "loss": "cross_entropy",
            "lr": lr,
            "momentum": momentum,
            "max_norm": max_norm,
        }
        what = f"clipped_step(..., max_norm={max_norm:g}) on {label}"
        seen = observe(probes.probe_clipped_step, clipped_step, case, what)
        got = _as_float(seen["result"], f"the value {what} returned")
        if not _params_close(seen["params"], _params(refs["total"])):
            matches = [
                h
                for h in ("none", "always", "per_parameter")
                if _params_close(seen["params"], _params(refs[h]))
            ]
            if total > max_norm and "none" in matches:
                hint = _(
                    "the weights moved by the full, unclipped gradient. Clip between "
                    "loss.backward() and optimizer.step() with the max_norm you were "
                    "given; clipping after the step changes nothing that was used."
                )
            elif "always" in matches:
                hint = _(
                    "the gradient norm {total:.4g} is below max_norm, so clipping must "
                    "leave it alone, but your step rescaled it to length max_norm. "
                    "clip_grad_norm_ only scales down (by max_norm / norm when norm > "
                    "max_norm)."
                ).format(total=total)
            elif "per_parameter" in matches:
                hint = _(
                    "your update matches clipping every parameter's gradient separately. "
                    "Clip them together, by one norm over all of them: "
                    "clip_grad_norm_(model.parameters(), max_norm)."
                )
            else:
                hint = _(
                    "the weights after the step differ from zero_grad -> backward -> "
                    "clip_grad_norm_(model.parameters(), max_norm) -> step. Did you zero "
                    "the old gradients first, use the max_norm you were given, and clip by "
                    "norm (not by value)?"
                )
            raise CheckError(_("{what}: {hint}").format(what=what, hint=hint))
        if total > max_norm and abs(got - max_norm) <= 1e-4 * max_norm:
            raise CheckError(
                _(
                    "{what} returned {got:.6g}, which is max_norm: that is the norm after "
                    "clipping. Return the norm before clipping ({total:.6g}): "
                    "clip_grad_norm_ returns it."
                ).format(what=what, got=got, total=total)
            )
        tight = next(iter(seen["params"])).dtype == torch.float64
        if tight and 1e-10 * max(1.0, total) < abs(got - total) <= 1e-5 * max(1.0, total):
            raise CheckError(
                _(
                    "{what} returned {got!r}; the total gradient norm before clipping is "
                    "{total!r}. Right to about 7 digits only: the gradients are float64 "
                    "here and the norm was computed in float32. Return what "
                    "clip_grad_norm_ gives back (.item())."
                ).format(what=what, got=got, total=total)
            )
        if abs(got - total) > 1e-4 * max(1.0, total):
            per_param = [float(gr.double().norm()) for gr in _fresh_grads(spec, x, y, loss_fn)]
            hint = ""
            if abs(got - sum(per_param)) <= 1e-4 * max(1.0, got):
                hint = _(
                    " Your value is the sum of the per-parameter norms; the total norm is "
                    "the square root of the sum of their squares."
                )
            raise CheckError(
                _(
                    "{what} returned {got:.6g}; the total gradient norm before clipping is "
                    "{total:.6g}. Return the value clip_grad_norm_ gives back (one L2 norm "
                    "over all parameters together).{hint}"
                ).format(what=what, got=got, total=total, hint=hint)
            )


def _fresh_grads(spec, x, y, loss_fn) -> list[torch.Tensor]:
    """The gradients of one backward pass on a fresh copy of the model (None ones left out)."""
    model = probes.build_model(spec)
    loss_fn(model(x), y).backward()
    return [p.grad for p in model.parameters() if p.grad is not None]


# ----------------------------------------------------------------------------- grad_norms


def _reference_grad_norms(model: nn.Module) -> dict[str, float]:
    return {n: p.grad.norm().item() for n, p in model.named_parameters() if p.grad is not None}


# (kind, label): an MLP, a model with a frozen layer and an unused parameter (None gradients),
# one with a root-level parameter, nested blocks, a bias-free layer, buffers and a dead ReLU
# (exactly zero gradients)
_GRAD_NORM_MODELS = {
    "mlp": "an MLP",
    "with_unused": "a model with a frozen layer and an unused parameter",
    "nested": "a model with a cls_token, nested blocks, a bias-free layer, buffers and a dead ReLU",
}


def _draw_grad_norms(d: Draw) -> Inputs:
    """A model of each kind, float32 or float64, after one backward pass on a drawn batch."""
    kind = d.draw(st.sampled_from(sorted(_GRAD_NORM_MODELS)))
    dtype = d.draw(st.sampled_from([torch.float32, torch.float64]))
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 2**16)))
    if kind == "mlp":
        sizes = [d.size(1, 6) for _layer in range(d.draw(st.integers(2, 4)))]
        act = d.draw(st.sampled_from(["sigmoid", "tanh"]))
        spec = _mlp(sizes, g, act=act, dtype=dtype, device="cpu")
    elif kind == "with_unused":
        spec = _with_unused(g, "cpu") | {"dtype": dtype}
    else:
        spec = _nested(g, "cpu", dtype=dtype)
    width = spec["sizes"][0] if kind == "mlp" else 4
    x = torch.randn(d.size(2, 7), width, generator=g, dtype=dtype)  # BatchNorm needs 2 rows
    label = f"{_GRAD_NORM_MODELS[kind]} ({str(dtype).removeprefix('torch.')}), after backward()"
    return Inputs((Build(probes.build_model_with_grads, {"model": spec, "x": x}, label),))


def _compare_grad_norms(got, expected: dict, what: str, inputs: Inputs) -> None:
    """Names, order and values of the norms (float64 models to about 10 digits)."""
    check_type(got, dict, what)
    missing = [n for n in expected if n not in got]
    extra = [n for n in got if n not in expected]
    if extra:
        raise CheckError(
            _(
                "{what} has entries {extra} for parameters whose .grad is None; leave "
                "those out (a frozen or unused parameter has no gradient, which is not "
                "the same as zero)."
            ).format(what=what, extra=extra)
        )
    if missing and all(expected[n] == 0.0 for n in missing):
        raise CheckError(
            _(
                "{what} is missing {missing}, whose gradients are exactly zero (a dead "
                "ReLU): a zero gradient is still a gradient, so keep those entries "
                "(0.0); leave out only parameters whose .grad is None."
            ).format(what=what, missing=missing)
        )
    if missing:
        raise CheckError(
            _(
                "{what} is missing {missing}; use the names from "
                "model.named_parameters(), which lists every parameter: nested ones "
                "and ones registered on the model itself (not only the .weight and "
                ".bias of its layers)."
            ).format(what=what, missing=missing)
        )
    if list(got) != list(expected):
        raise CheckError(
            _("{what} lists {got}; keep the order of model.named_parameters().").format(
                what=what, got=list(got)
            )
        )
    wide = inputs.args[0].spec["model"]["dtype"] == torch.float64
    rtol = 1e-10 if wide else 1e-5
    for name, value in got.items():
        value = _as_float(value, f"the entry {name!r} of {what}")
        err = abs(value - expected[name])
        if err > rtol * max(1e-6, expected[name]) + 1e-12:
            if wide and err <= 1e-5 * expected[name]:
                raise CheckError(
                    _(
                        "the entry {name!r} of {what} is {value!r}, expected {value2!r}: right "
                        "to about 7 digits, so it was computed in float32. The gradients are "
                        "float64 here; take p.grad.norm() in the gradient's own dtype (no "
                        ".float())."
                    ).format(name=name, what=what, value=value, value2=expected[name])
                )
            raise CheckError(
                _(
                    "the entry {name!r} of {what} is {value:.6g}, expected {value2:.6g}: "
                    "the L2 norm of p.grad over all its elements (p.grad.norm()), not of "
                    "the weights and not a mean."
                ).format(name=name, what=what, value=value, value2=expected[name])
            )


GRAD_NORMS = Contract(
    "grad_norms",
    _reference_grad_norms,
    _draw_grad_norms,
    families=("values", "edges"),
    compare=_compare_grad_norms,
    arg_names=("model",),
    examples=12,
)


@uses(GRAD_NORMS)
def check_grad_norms(grad_norms) -> None:
    """The contract: names, order and values against p.grad.norm(); None gradients left out,
    zero ones kept; the model (its gradients included) left as it was."""


# ----------------------------------------------------------------------------- diagnose_gradients


def _reference_diagnosis(norms: dict, vanish_ratio: float, explode_norm: float) -> str:
    values = list(norms.values())
    if any(not math.isfinite(v) for v in values) or max(values) > explode_norm:
        return "exploding"
    if values[0] <= vanish_ratio * max(values):
        return "vanishing"
    return "healthy"


def _reference_diagnosis_call(norms: dict, vanish_ratio: float = 1e-3, explode_norm: float = 1e3):
    return _reference_diagnosis(norms, vanish_ratio, explode_norm)


# Norms are powers of two, so a boundary (first == vanish_ratio * largest, a norm equal to
# explode_norm) is met exactly, whichever way an answer multiplies or divides.
_LAYER_NAMES = ("embed.weight", "0.weight", "0.bias", "cls_token", "2.weight", "head.weight")


def _draw_diagnosis(d: Draw) -> Inputs:
    """A norm profile (its first name never the first in sorted order), with or without custom
    thresholds, of a drawn kind: the values family favours the shapes of a profile (vanishing
    towards the input, one tiny middle layer, NaN or inf somewhere), the edges family its
    boundaries (equalities, inf with explode_norm=inf, all zeros, one entry)."""
    kinds = ["plain", "vanishing", "tiny-middle", "nonfinite"]
    if d.family == "edges":
        kinds = ["first-on-ratio", "on-explode", "unbounded-inf", "zeros", "plain"]
    kind = d.draw(st.sampled_from(kinds))
    n = d.size(1, len(_LAYER_NAMES))
    if kind in ("vanishing", "tiny-middle"):
        n = max(n, 3)
    names = d.draw(st.permutations(_LAYER_NAMES))[:n]
    if n > 1 and names[0] == min(names):  # sorting the names must change which comes first
        names[0], names[1] = names[1], names[0]
    values = [2.0 ** d.draw(st.integers(-30, 12)) for _name in names]
    ratio = d.draw(st.sampled_from([None, -10, -3, -1]))
    explode = d.draw(st.sampled_from([None, 6, 10, 12, "inf"]))
    where = d.draw(st.integers(0, n - 1))
    if kind == "vanishing":
        values[0] = 2.0**-24 * max(values)
    elif kind == "tiny-middle":
        values[0] = max(values)
        values[1 + where % (n - 1)] = 2.0**-24 * values[0]
    elif kind == "nonfinite":
        values[where] = d.draw(st.sampled_from([math.nan, math.inf]))
    elif kind == "unbounded-inf":
        values[where], explode = math.inf, "inf"
    elif kind == "zeros":
        values = [0.0] * n
    elif kind == "first-on-ratio":
        ratio = -10 if ratio is None else ratio
        values[0] = 2.0**ratio * max(values)
    elif kind == "on-explode":
        explode = 10 if explode in (None, "inf") else explode
        values[where] = 2.0**explode
    kwargs = {}
    if ratio is not None:
        kwargs["vanish_ratio"] = 2.0**ratio
    if explode is not None:
        kwargs["explode_norm"] = math.inf if explode == "inf" else 2.0**explode
    return Inputs((dict(zip(names, values, strict=True)),), kwargs)


def _diagnosis_hint(family: str, inputs: Inputs) -> str:
    reason = _why_diagnosis(
        inputs.args[0],
        inputs.kwargs.get("vanish_ratio", 1e-3),
        inputs.kwargs.get("explode_norm", 1e3),
    )
    return _(
        "Here {reason}. Check in order: any NaN/inf or a norm above explode_norm -> "
        "'exploding'; the first (input-side) norm at most vanish_ratio times the largest -> "
        "'vanishing'; else 'healthy'. Use the arguments you were given, not fixed numbers."
    ).format(reason=reason)


DIAGNOSE_GRADIENTS = Contract(
    "diagnose_gradients",
    _reference_diagnosis_call,
    _draw_diagnosis,
    families=("values", "edges"),
    arg_names=("norms",),
    hint=_diagnosis_hint,
    examples=30,
)


@uses(DIAGNOSE_GRADIENTS)
def check_diagnose_gradients(diagnose_gradients) -> None:
    """The contract, then: the caller's dict is left as it was (a dict is not a tensor, so
    the contract does not watch it)."""
    norms = {"head.weight": 2.0, "0.weight": 1e-7, "2.weight": 0.5}
    what = "diagnose_gradients({'head.weight': 2.0, '0.weight': 1e-07, '2.weight': 0.5})"
    case = {"norms": norms, "kwargs": {}}
    seen = observe(probes.probe_diagnose_gradients, diagnose_gradients, case, what)
    if seen["norms_changed"]:
        raise CheckError(
            _(
                "{what} changed the dict it was given; read the norms without "
                "modifying the caller's dict (copy it if you need to reorder or remove "
                "entries)."
            ).format(what=what)
        )


def _why_diagnosis(norms: dict, vanish_ratio: float, explode_norm: float) -> str:
    """The reason for the expected diagnosis, in words."""
    bad = [k for k, v in norms.items() if not math.isfinite(v)]
    if bad:
        return _("{name!r} is {norm} (not finite)").format(name=bad[0], norm=norms[bad[0]])
    big = [k for k, v in norms.items() if v > explode_norm]
    if big:
        return _("{name!r} is {norm:g}, above explode_norm={explode_norm:g}").format(
            name=big[0], norm=norms[big[0]], explode_norm=explode_norm
        )
    first_key = next(iter(norms))
    first, largest = norms[first_key], max(norms.values())
    if first <= vanish_ratio * largest:
        template = _(
            "nothing is above explode_norm={explode_norm:g}, and the first norm "
            "({first_key!r}: {first:g}) is at most vanish_ratio={vanish_ratio:g} "
            "times the largest ({largest:g})"
        )
    else:
        template = _(
            "nothing is above explode_norm={explode_norm:g} (a norm equal to it is "
            "not above it), and the first norm ({first_key!r}: {first:g}) is more "
            "than vanish_ratio={vanish_ratio:g} times the largest ({largest:g}); "
            "other small norms do not matter"
        )
    return template.format(
        explode_norm=explode_norm,
        first_key=first_key,
        first=first,
        vanish_ratio=vanish_ratio,
        largest=largest,
    )


# ----------------------------------------------------------------------------- first_nonfinite_module

# (model name in probes.NONFINITE_MODELS, description, the module where NaN/inf first appears)
_NONFINITE_CASES = [
    ("log_relu", "log of a ReLU output", "2"),  # ReLU gives exact zeros, log(0) = -inf
    # registration order differs from execution order; inf first (body.1), NaN later (head)
    ("reordered", "head registered before body", "body.1"),
    # overflow squashed back to finite numbers: the final output is finite
    ("squashed", "an overflow that tanh squashes", "blowup"),
    ("exp_relu", "inf but no NaN", "1"),
    ("tuple_output", "a module returning a tuple", "1"),
    ("nested", "nested Sequentials (log of a negative number: NaN, no inf)", "0.1"),
    # the container's own forward makes the NaN; its child's output is finite
    ("own_forward", "a module whose own forward (not a child's) takes a log", "0"),
    ("ordinary", "an ordinary MLP", None),  # everything finite
]

# (model, label, expected, extra case entries): the caller's own hooks must survive the call;
# a forward pass that raises must not leave hooks behind either
_NONFINITE_SIDE_CASES = [
    ("log_relu", "a model that already carries hooks of its caller's", "2", {"caller_hooks": True}),
    ("raises", "a model whose forward pass raises (after a -inf)", None, {"may_raise": True}),
]


def _execution_order(model: nn.Module, x: torch.Tensor) -> list[str]:
    order: list[str] = []
    handles = [
        m.register_forward_hook(lambda mod, inp, out, name=name: order.append(name))
        for name, m in model.named_modules()
        if name
    ]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return order


def check_first_nonfinite_module(first_nonfinite_module) -> None:
    """Models where NaN/inf appears inside; the first module to produce one; no hooks left, the
    caller's own hooks kept, the model's mode unchanged, also when the forward pass raises."""
    device = get_device()
    cases = [(n, label, expected, {}) for n, label, expected in _NONFINITE_CASES]
    for name, label, expected, extra in cases + _NONFINITE_SIDE_CASES:
        what = f"first_nonfinite_module(model, x) for {label}"
        case = {"model": name, "device": device, "what": what, **extra}
        seen = observe(probes.probe_first_nonfinite_module, first_nonfinite_module, case, what)
        got = seen["result"]
        if seen["left"]:
            raise CheckError(
                _("{what} left hooks behind on {left}").format(what=what, left=seen["left"])
                + (_(" (the forward pass raised)") if seen["raised"] else "")
                + _(
                    ". Keep the handle each register_*_hook returns and call "
                    "handle.remove() on every one in a finally: block, so they go even "
                    "when model(x) raises; otherwise every later forward pass runs your "
                    "hooks again."
                )
            )
        if seen["removed"]:
            raise CheckError(
                _(
                    "{what} removed hooks that were there before the call, on {removed}: "
                    "they belong to the caller. Remove only your own hooks, through the "
                    "handles register_forward_hook returned (handle.remove()), never by "
                    "clearing a module's _forward_hooks."
                ).format(what=what, removed=seen["removed"])
            )
        if seen["mode_changed"]:
            raise CheckError(
                _(
                    "{what} switched {mode_changed} to eval mode and left them there. The "
                    "model came in training mode; a debugging helper must leave it as it "
                    "found it (no model.eval(), or restore the mode with "
                    "model.train(was_training) before returning)."
                ).format(what=what, mode_changed=seen["mode_changed"])
            )
        if extra.get("may_raise"):
            continue
        if got is not None:
            check_type(got, str, what)
        if got == expected:
            continue
        model, _inputs = probes.nonfinite_model(case)
        order = _execution_order(*probes.nonfinite_model(case))
        containers = {n for n, m in model.named_modules() if n and any(True for _ in m.children())}
        hint = ""
        if expected is None:
            hint = _(" Every output in this model is finite, so return None.")
        elif expected in containers and (got is None or got not in containers):
            hint = _(
                " {expected!r} is a module with children, and its own forward (an "
                "operation it calls itself, like torch.log) makes the NaN: its "
                "children's outputs are finite. Hook every module in "
                "model.named_modules() (except the model itself, name ''), containers "
                "too, not only the leaves."
            ).format(expected=expected)
        elif got is None:
            hint = _(
                " A module inside produced NaN or inf even if the final output is "
                "finite (or you only looked for NaN or only for inf: torch.isfinite "
                "catches both; or a tuple output hid it). Hook every submodule and "
                "test each tensor it outputs with torch.isfinite."
            )
        elif expected.startswith(got + "."):
            hint = _(
                " That is the container; name the innermost module (the first hook to "
                "fire): model.named_modules() reaches nested modules, "
                "model.named_children() does not."
            )
        elif got in order and order.index(got) > order.index(expected):
            hint = _(
                " {got!r} runs after {expected!r} in the forward pass and only "
                "inherited the NaN/inf. Return the module whose hook fires first with "
                "a non-finite output (the order the forward pass runs modules, not the "
                "order of named_modules())."
            ).format(got=got, expected=expected)
        raise CheckError(
            _("{what} returned {got!r}, expected {expected!r}.{hint}").format(
                what=what, got=got, expected=expected, hint=hint
            )
        )


# ----------------------------------------------------------------------------- accumulated_step


def _accumulate(model, x, y, loss_fn, lr, micro_batch, weighting: str, stale=None) -> None:
    """One accumulated SGD step, each piece's loss weighted as ``weighting`` says; with
    ``stale``, those gradients are left in .grad instead of zeroed."""
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    optimizer.zero_grad()
    if stale is not None:
        probes.set_grads(model, stale)
    chunks = list(zip(x.split(micro_batch), y.split(micro_batch), strict=True))
    for xc, yc in chunks:
        weight = {
            "none": 1.0,
            "count": 1.0 / len(chunks),
            "share": len(xc) / len(x),
            "micro": micro_batch / len(x),
        }[weighting]
        (loss_fn(model(xc), yc) * weight).backward()
    optimizer.step()


def _graphs_kept(events: str) -> bool:
    """Whether a forward pass ran while an earlier one's graph still waited for its backward
    pass ("F" a forward pass with a graph, "f" one without, "B" a backward pass)."""
    waiting = False
    for event in events:
        if event == "F" and waiting:
            return True
        if event != "f":
            waiting = event == "F"
    return False


def check_accumulated_step(accumulated_step) -> None:
    """One accumulated step equals one large-batch step, including a smaller last micro-batch."""
    device = get_device()
    g = torch.Generator().manual_seed(65)
    lr = 0.5
    cases = [
        (8, 4, "classification"),
        (10, 3, "classification"),
        (5, 1, "regression"),
        (7, 2, "regression"),
        (5, 5, "classification"),
        (3, 10, "classification"),
        (9, 2, "wide regression"),
        (7, 3, "wide classification"),
    ]
    wide = _wide_float(device)
    for n, micro, kind in cases:
        dtype = wide if kind.startswith("wide") else torch.float32
        if kind.endswith("classification"):
            spec = _mlp([4, 6, 3], g, dtype=dtype, device=device)
            x, y = _classification(n, 4, 3, g, device, dtype=dtype)
            loss = "cross_entropy"
        else:
            spec = _mlp([3, 5, 2], g, act="tanh", dtype=dtype, device=device)
            x = torch.randn(n, 3, generator=g, dtype=dtype).to(device)
            y = torch.randn(n, 2, generator=g, dtype=dtype).to(device)
            loss = "mse"
        tight = dtype == torch.float64
        rtol, atol = (1e-9, 1e-12) if tight else (1e-4, 1e-6)
        loss_fn = probes.LOSSES[loss]()
        big = probes.build_model(spec)
        optimizer = torch.optim.SGD(big.parameters(), lr=lr)
        full_loss = loss_fn(big(x), y)
        full_loss.backward()
        optimizer.step()
        variants = {}
        for weighting in ("none", "count", "micro"):
            variants[weighting] = probes.build_model(spec)
            _accumulate(variants[weighting], x, y, loss_fn, lr, micro, weighting)
        junk = _junk_grads(spec, g)
        variants["stale"] = probes.build_model(spec)
        _accumulate(variants["stale"], x, y, loss_fn, lr, micro, "share", stale=junk)

        case = {
            "model": spec,
            "grads": junk,
            "x": x,
            "y": y,
            "loss": loss,
            "lr": lr,
            "micro_batch": micro,
        }
        what = f"accumulated_step(..., x with N={n}, micro_batch={micro})" + (
            f" on {dtype}" if tight else ""
        )
        seen = observe(probes.probe_accumulated_step, accumulated_step, case, what)
        got = _as_float(seen["result"], f"the value {what} returned")
        params = seen["params"]
        if seen["rows"] and max(seen["rows"]) > micro:
            raise CheckError(
                _(
                    "{what} ran the model on {max} rows at once (its forward passes saw "
                    "{rows} rows); no forward pass may see more than micro_batch={micro}, "
                    "or the memory saving is gone. x.split(micro_batch) gives pieces of "
                    "micro_batch rows (x.chunk(k) gives k pieces, a different thing); "
                    "compute the returned loss from the pieces too."
                ).format(what=what, max=max(seen["rows"]), rows=seen["rows"], micro=micro)
            )
        if _graphs_kept(seen.get("events", "")):
            raise CheckError(
                _(
                    "{what} ran a piece's forward pass while an earlier piece's graph was still "
                    "waiting for its backward() (forward F and backward B went {events}). A "
                    "graph holds its piece's activations until backward() frees them: adding "
                    "up the pieces' losses (or their outputs) and calling backward() once keeps "
                    "every piece's graph alive together, as much memory as the whole batch. "
                    "Call backward() on each piece's scaled loss before the next forward pass, "
                    "and add up loss.item()."
                ).format(what=what, events=" ".join(seen["events"]))
            )
        if seen["inputs_changed"]:
            raise CheckError(
                _(
                    "{what} changed the caller's x or y in place. Split them "
                    "(x.split(micro_batch) gives views) and compute on the pieces without "
                    "in-place operations."
                ).format(what=what)
            )
        if _params_close(params, _params(big), rtol=rtol, atol=atol):
            full = full_loss.item()
            if abs(got - full) > (1e-10 if tight else 1e-4) * max(1.0, abs(full)):
                hint = _(" Add up the scaled micro-batch losses as Python floats (loss.item()).")
                if tight and abs(got - full) <= 1e-5 * max(1.0, abs(full)):
                    hint = _(
                        " It is right to about 7 digits only: the sum was kept in float32 (a "
                        "torch.zeros(()) accumulator, or a .float()). Add Python floats, "
                        "loss.item(), which keep the float64 precision."
                    )
                raise CheckError(
                    _(
                        "{what} returned {got!r}; the mean loss over the whole batch is "
                        "{full!r}.{hint}"
                    ).format(what=what, got=got, full=full, hint=hint)
                )
            continue
        if tight and _params_close(params, _params(big), rtol=1e-4, atol=1e-6):
            raise CheckError(
                _(
                    "{what}: the weights match one step on the whole batch to about 7 "
                    "digits only; on float64 they should match to 9 or more. Somewhere the "
                    "computation went through float32 (a .float(), a float32 scale "
                    "tensor): keep x's dtype."
                ).format(what=what)
            )
        if _params_close(params, _params(variants["none"]), rtol=rtol, atol=atol):
            hint = _(
                " Your update matches adding up the micro-batch *mean* losses "
                "unscaled: the summed gradient is about N / micro_batch times too big. "
                "Multiply each micro-batch loss by len(x_chunk) / len(x) before "
                "backward()."
            )
        elif _params_close(params, _params(variants["count"]), rtol=rtol, atol=atol):
            hint = _(
                " Your update matches dividing every loss by the number of "
                "micro-batches; that is only right when all micro-batches are the same "
                "size. Here the last one is smaller: weight each by len(x_chunk) / "
                "len(x)."
            )
        elif n % micro and _params_close(params, _params(variants["micro"]), rtol=rtol, atol=atol):
            hint = _(
                " Your update matches weighting every piece by micro_batch / len(x); "
                "the last piece is smaller here: weight each by its own size, "
                "len(x_chunk) / len(x)."
            )
        elif _params_close(params, _params(variants["stale"]), rtol=rtol, atol=atol):
            hint = _(
                " Your update includes the gradients that were already in .grad when "
                "the function was called (from an earlier step): call "
                "optimizer.zero_grad() once, before the first backward()."
            )
        else:
            hint = _(
                " Zero the old gradients once before the loop, call backward() for "
                "every micro-batch, and optimizer.step() once after the loop."
            )
        raise CheckError(
            _("{what}: the weights differ from one step on the whole batch.{hint}").format(
                what=what, hint=hint
            )
        )


# ----------------------------------------------------------------------------- autocast_step


# The low-precision dtype each device type's autocast must use (the exercise text says so);
# any other device type (Apple's mps) may use either.
_LOW = {"cpu": (torch.bfloat16,), "cuda": (torch.float16,)}
_EITHER = (torch.float16, torch.bfloat16)
_CHECKPOINT_KEYS = ["model", "optimizer", "scaler"]


def _autocast_case(spec, g, x, y, device, scaler, max_norm, **extra) -> dict:
    return {
        "model": spec,
        "grads": _junk_grads(spec, g),
        "x": x,
        "y": y,
        "loss": "cross_entropy",
        "lr": 0.1,
        "momentum": 0.0,
        "device": device,
        "scaler": scaler,
        "max_norm": max_norm,
        **extra,
    }


def _float32_clipped_step(model, optimizer, x, y, max_norm) -> float:
    """The full-precision step the mixed-precision one must come close to; the norm before clipping."""
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    norm = float(nn.utils.clip_grad_norm_(model.parameters(), max_norm))
    optimizer.step()
    return norm


def _true_norm(model, x, y) -> float:
    """The float32 gradient norm of the cross-entropy on (x, y), leaving .grad alone."""
    loss = nn.functional.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, [p for p in model.parameters() if p.requires_grad])
    return float(torch.stack([gr.norm() for gr in grads]).norm())


def _resume_point(spec, g, device, lr) -> tuple[dict, nn.Module, torch.optim.Optimizer]:
    """A checkpoint to resume from (other weights, SGD momentum buffers, a scale of 2**5 that
    grows every step), and the reference model and optimizer already resumed from it."""
    reference = probes.build_model(
        {**spec, "params": probes.random_params(probes.build_model(spec).cpu(), g)}
    )
    optimizer = torch.optim.SGD(reference.parameters(), lr=lr, momentum=0.9)
    for p in reference.parameters():
        p.grad = torch.randn(p.shape, generator=g).to(device)
    optimizer.step()  # momentum buffers now exist
    checkpoint = {
        "model": {k: v.detach().clone() for k, v in reference.state_dict().items()},
        "optimizer": copy.deepcopy(optimizer.state_dict()),
        "scaler": {
            "scale": 2.0**5,
            "growth_factor": 2.0,
            "backoff_factor": 0.5,
            "growth_interval": 1,
            "_growth_tracker": 0,
        },
    }
    return checkpoint, reference, optimizer


def _check_step_result(seen: dict, what: str) -> tuple[float, float]:
    """The returned dict's loss and grad_norm as floats, and its checkpoint's keys."""
    if seen.get("returned") is not None:
        raise CheckError(
            _(
                "{what} returned {returned}; return a dict {{'loss': float, "
                "'grad_norm': float, 'checkpoint': {{'model': ..., 'optimizer': ..., "
                "'scaler': ...}}}}."
            ).format(what=what, returned=seen["returned"])
        )
    missing = [k for k in ("loss", "grad_norm", "checkpoint") if k not in seen["keys"]]
    if missing:
        raise CheckError(
            _("{what} returned a dict with the keys {keys}; it is missing {missing}.").format(
                what=what, keys=seen["keys"], missing=missing
            )
        )
    loss = _as_float(seen["loss"], f"the 'loss' {what} returned")
    norm = _as_float(seen["grad_norm"], f"the 'grad_norm' {what} returned")
    if seen["checkpoint_error"]:
        raise CheckError(
            _(
                "the 'checkpoint' {what} returned does not save and load with "
                "torch.save and torch.load(weights_only=True): {checkpoint_error}. "
                "Store the three state_dict()s (model.state_dict(), "
                "optimizer.state_dict(), scaler.state_dict()), not the objects."
            ).format(what=what, checkpoint_error=seen["checkpoint_error"])
        )
    keys = seen["checkpoint_keys"]
    if sorted(keys) != sorted(_CHECKPOINT_KEYS):
        hint = ""
        if "scaler" not in keys:
            hint = _(
                " Without the scaler's state a resumed run starts again from the "
                "initial scale (65536 by default) and has to back off step by step: "
                "save scaler.state_dict() next to the model's and the optimizer's."
            )
        raise CheckError(
            _(
                "the 'checkpoint' {what} returned has the keys {keys}, expected "
                "{_CHECKPOINT_KEYS}.{hint}"
            ).format(what=what, keys=sorted(keys), _CHECKPOINT_KEYS=_CHECKPOINT_KEYS, hint=hint)
        )
    return loss, norm


def _check_autocast_on(autocast_step, device: torch.device, g: torch.Generator) -> None:
    low = _LOW.get(device.type, _EITHER)
    named = " or ".join(str(d) for d in low)
    scaled = device.type in _LOW  # GradScaler supports CPU and CUDA
    runs = ["plain", "overflow", "resume"] if scaled else ["unscaled"]
    for run in runs:
        spec = _mlp([8, 32, 32, 4], g, device=device)
        x, y = _classification(16, 8, 4, g, device)
        if run == "overflow" and device.type == "cpu":
            # bfloat16 has float32's range: large inputs make the scaled gradients overflow
            # (in float16, a scale of 2**120 alone overflows the backward pass)
            x = 1e4 * x
        lr = 0.1
        if run == "resume":
            resume, reference, ref_opt = _resume_point(spec, g, device, lr)
        else:
            resume, reference = None, probes.build_model(spec)
            ref_opt = torch.optim.SGD(reference.parameters(), lr=lr)
        before = _params(reference)
        with torch.no_grad():
            ref_loss = nn.functional.cross_entropy(reference(x), y).item()
        max_norm = 0.5 * _true_norm(reference, x, y)  # half the true norm: clipping always acts
        ref_norm = _float32_clipped_step(reference, ref_opt, x, y, max_norm)
        scaler = {"init_scale": 2.0**10, "growth_interval": 1}
        if run == "overflow":
            scaler = {"init_scale": 2.0**120, "growth_interval": 1}
        elif run == "resume":
            scaler = {"init_scale": 2.0**10, "growth_interval": 1000}
        elif run == "unscaled":
            scaler = {"enabled": False}
        extra = {"resume": resume, "momentum": 0.9} if resume is not None else {}
        case = _autocast_case(spec, g, x, y, device, scaler, max_norm, **extra)
        what = f"autocast_step on {device.type} (max_norm={max_norm:.3g})"
        if run == "overflow":
            what += " whose scaled gradients overflow (init_scale=2**120)"
        elif run == "resume":
            what += " resuming from a checkpoint (resume=...)"
        seen_step = observe(probes.probe_autocast_step, autocast_step, case, what)
        got_loss, got_norm = _check_step_result(seen_step, what)
        seen = seen_step["linear_dtypes"]
        if not seen or any(dt not in low for dt in seen):
            raise CheckError(
                _(
                    "{what}: the Linear layers computed in {value}, expected {named}. Run "
                    "the forward pass and the loss inside "
                    "torch.autocast(device_type=x.device.type, dtype=...) with {named} for "
                    "device type {type!r} (bfloat16 for 'cpu', float16 for 'cuda')."
                ).format(
                    what=what, value=sorted({str(d) for d in seen}), named=named, type=device.type
                )
            )
        wrong = [n for n, dt in seen_step["param_dtypes"].items() if dt != torch.float32]
        if wrong:
            raise CheckError(
                _(
                    "{what} changed the dtype of {wrong}. Keep the weights in float32; "
                    "autocast casts inside the operations, you never call "
                    "model.to(bfloat16) or .half()."
                ).format(what=what, wrong=wrong)
            )
        params = seen_step["params"]
        if len(params) != len(before) or any(
            p.shape != b.shape for p, b in zip(params, before, strict=False)
        ):
            raise CheckError(
                _(
                    "{what} changed the model's parameters themselves (their number or "
                    "shapes); only update their values with one optimizer step."
                ).format(what=what)
            )
        if abs(got_loss - ref_loss) > 3e-2 * max(1.0, abs(ref_loss)):
            hint = _("Return the unscaled loss, loss.item() (not scaler.scale(loss)).")
            if run == "resume":
                hint = _(
                    "Load the checkpoint's weights before the forward pass: "
                    "model.load_state_dict(resume['model'])."
                )
            raise CheckError(
                _(
                    "{what} returned the loss {got_loss:.5g}; a float32 forward pass gives "
                    "{ref_loss:.5g}. {hint}"
                ).format(what=what, got_loss=got_loss, ref_loss=ref_loss, hint=hint)
            )
        step = torch.cat(
            [(p.to(b.device, b.dtype) - b).flatten() for p, b in zip(params, before, strict=True)]
        )
        if run == "overflow":
            if not bool(torch.isfinite(step).all()) or float(step.abs().max()) > 0:
                raise CheckError(
                    _(
                        "{what}: the weights changed (to {value}). When the scaled gradients "
                        "hold inf or NaN the step must be skipped: scaler.step(optimizer) does "
                        "that check (unscale_ records the inf), optimizer.step() does not. "
                        "Call scaler.step(optimizer), then scaler.update()."
                    ).format(
                        what=what,
                        value="non-finite values"
                        if not bool(torch.isfinite(step).all())
                        else "other values",
                    )
                )
            if seen_step["scale"] != 2.0**119:
                raise CheckError(
                    _(
                        "{what}: the scaler's scale is {scale:g} after a step whose gradients "
                        "overflowed; it should have backed off to half (2**119). Call "
                        "scaler.update() after scaler.step(optimizer)."
                    ).format(what=what, scale=seen_step["scale"])
                )
            continue
        if abs(got_norm - ref_norm) > 0.05 * ref_norm:
            ratio = got_norm / ref_norm if ref_norm else float("inf")
            hint = ""
            if scaled and ratio > 100:
                hint = _(
                    " It is about {ratio:.0f} times too large: the scale factor. The "
                    "gradients were still multiplied by the scale when clip_grad_norm_ "
                    "measured them; call scaler.unscale_(optimizer) between the scaled "
                    "backward and the clipping."
                ).format(ratio=ratio)
            raise CheckError(
                _(
                    "{what} returned grad_norm {got_norm:.5g}; the true gradient norm "
                    "before clipping is {ref_norm:.5g}. Return what clip_grad_norm_ gives "
                    "back, measured on unscaled gradients.{hint}"
                ).format(what=what, got_norm=got_norm, ref_norm=ref_norm, hint=hint)
            )
        after_ref = _params(reference)
        ref_step = torch.cat([(r - b).flatten() for r, b in zip(after_ref, before, strict=True)])
        rel_err = float((step - ref_step).norm() / ref_step.norm())
        if rel_err > 0.25:
            ratio = float(step.norm() / ref_step.norm())
            hint = _(
                " Did you zero the old gradients first (optimizer.zero_grad()), and "
                "clip the unscaled gradients with the max_norm you were given?"
            )
            if run == "resume":
                hint = _(
                    " Resume all three states before the step: model.load_state_dict, "
                    "optimizer.load_state_dict (its momentum buffers change the step) and "
                    "scaler.load_state_dict."
                )
            elif ratio > 1.5 and ratio < 2.5:
                hint = _(
                    " The update is about as long as an unclipped one: clip with "
                    "clip_grad_norm_(model.parameters(), max_norm) after scaler.unscale_ "
                    "and before scaler.step."
                )
            elif scaled and ratio > 100:
                hint = _(
                    " The step is about the scale factor too large: call "
                    "scaler.step(optimizer) (it unscales the gradients first), not "
                    "optimizer.step()."
                )
            elif scaled and ratio < 1e-2:
                hint = _(
                    " The step is about 1/scale too small: the gradients were clipped "
                    "while still scaled (call scaler.unscale_(optimizer) before "
                    "clip_grad_norm_), or the plain loss was backpropagated (use "
                    "scaler.scale(loss).backward())."
                )
            raise CheckError(
                _(
                    "{what}: the weight update is {ratio:.3g} times as long as a float32 "
                    "step with clipping and differs from it by {rel_err:.0%} (allowed: "
                    "25%).{hint}"
                ).format(what=what, ratio=ratio, rel_err=rel_err, hint=hint)
            )
        if scaled:
            expected_scale = 2.0**6 if run == "resume" else 2.0**11
            if seen_step["scale"] != expected_scale:
                if run == "resume" and seen_step["scale"] in (2.0**10, 2.0**11):
                    hint = _(
                        "the scaler started from its own initial scale, not the checkpoint's "
                        "(2**5): call scaler.load_state_dict(resume['scaler'])."
                    )
                else:
                    hint = _(
                        "with growth_interval=1 it grows to twice its value at every step "
                        "without overflow. Call scaler.update() after scaler.step(optimizer)."
                    )
                raise CheckError(
                    _(
                        "{what}: the scaler's scale is {scale:g} after the step, expected "
                        "{expected_scale:g}: {hint}"
                    ).format(
                        what=what,
                        scale=seen_step["scale"],
                        expected_scale=expected_scale,
                        hint=hint,
                    )
                )
            saved = seen_step["checkpoint"]["scaler"]
            if not isinstance(saved, dict) or saved.get("scale") != expected_scale:
                raise CheckError(
                    _(
                        "the checkpoint's 'scaler' entry from {what} is {saved!r}; expected "
                        "the scaler's state after the step (scale {expected_scale:g}): save "
                        "scaler.state_dict() after scaler.update()."
                    ).format(what=what, saved=saved, expected_scale=expected_scale)
                )
        saved_model = seen_step["checkpoint"]["model"]
        if not isinstance(saved_model, dict) or not _params_close(
            list(saved_model.values()),
            [p.to(b.device) for p, b in zip(params, before, strict=True)],
        ):
            raise CheckError(
                _(
                    "the checkpoint's 'model' entry from {what} does not hold the weights "
                    "after the step: save model.state_dict() after scaler.step."
                ).format(what=what)
            )
        if (
            not isinstance(seen_step["checkpoint"]["optimizer"], dict)
            or "param_groups" not in seen_step["checkpoint"]["optimizer"]
        ):
            raise CheckError(
                _(
                    "the checkpoint's 'optimizer' entry from {what} is not an optimizer's "
                    "state_dict: save optimizer.state_dict()."
                ).format(what=what)
            )


def _check_device_type_from_x(autocast_step, g: torch.Generator) -> None:
    """On a CPU tensor that reports device type 'cuda', the answer must ask for CUDA's autocast
    with float16: the device type comes from x, whatever machine runs the check."""
    cpu = torch.device("cpu")
    spec = _mlp([8, 16, 4], g, device=cpu)
    x, y = _classification(8, 8, 4, g, cpu)
    scaler = {"init_scale": 2.0**10, "growth_interval": 1}
    case = _autocast_case(spec, g, x, y, cpu, scaler, 1.0, reports="cuda")
    what = "autocast_step(..., x, ...) for an x whose x.device.type is 'cuda'"
    seen = observe(probes.probe_autocast_step, autocast_step, case, what)
    states = seen["autocast"]
    if not states:
        raise CheckError(
            _("{what}: the model's forward pass never ran; call model(x).").format(what=what)
        )
    cpu_on = any(state["cpu"][0] for state in states)
    cuda_dtypes = {state["cuda"][1] for state in states}
    if cpu_on or cuda_dtypes != {torch.float16}:
        asked = []
        if cpu_on:
            asked.append(_("the CPU's autocast"))
        if cuda_dtypes != {torch.float16}:
            asked.append(
                _("no CUDA autocast with float16 (CUDA's autocast dtype was {dtypes})").format(
                    dtypes=sorted(str(d) for d in cuda_dtypes)
                )
            )
        raise CheckError(
            _(
                "{what}: the forward pass ran under {asked}. Derive both choices from "
                "the input: torch.autocast(device_type=x.device.type, "
                "dtype=torch.float16 if x.device.type == 'cuda' else torch.bfloat16). "
                "A hard-coded 'cpu', the notebook's `device`, or "
                "torch.cuda.is_available() pick the wrong autocast when x lives "
                "elsewhere."
            ).format(what=what, asked=_(" and ").join(asked))
        )


def check_autocast_step(autocast_step) -> None:
    """The CPU bfloat16 path with a GradScaler (a plain step, one whose scaled gradients
    overflow, one resumed from a checkpoint); the device type and dtype derived from x; the
    same on the notebook's device when it is not the CPU (float16 on CUDA)."""
    g = torch.Generator().manual_seed(66)
    _check_autocast_on(autocast_step, torch.device("cpu"), g)
    _check_device_type_from_x(autocast_step, g)
    device = get_device()
    if device.type != "cpu":
        _check_autocast_on(autocast_step, device, g)
    if device.type != "cuda":
        print(
            "hidden checks: CUDA float16 + GradScaler path SKIPPED (no CUDA device here: "
            f"get_device() is {device}); the CPU bfloat16 path and the device type taken from x "
            "were checked."
        )


# ----------------------------------------------------------------------------- set_seed


_HOW = {
    "Python's random": "random.seed(seed)",
    "NumPy's global generator": "np.random.seed(seed % 2**32)",
    "torch's CPU generator": "torch.manual_seed(seed)",
    "the torch.Generator you returned": "g = torch.Generator(); g.manual_seed(seed); return g",
    "torch's CUDA generator": "torch.manual_seed(seed) (it seeds every CUDA device too)",
}


def _seeded_draws(set_seed, seed: int, salt: int, device: torch.device) -> dict[str, list[float]]:
    """The next numbers of every generator after set_seed(seed) (each first seeded with salt)."""
    what = f"set_seed({seed})"
    case = {"seed": seed, "salt": salt, "device": device}
    try:
        seen = observe(probes.probe_set_seed, set_seed, case, what)
    except AnswerRaised as err:
        if err.type_name == "ValueError":
            raise CheckError(
                _(
                    "{what} raised ValueError: {message}. NumPy only takes seeds below "
                    "2**32: pass seed % 2**32 to np.random.seed (Python's random and torch "
                    "take the seed as is)."
                ).format(what=what, message=err.message)
            ) from None
        raise
    if not seen["generator"]:
        check_type(seen["returned"], torch.Generator, f"the value {what} returned")
    if seen["is_global"] or seen["generator_moves_global"]:
        raise CheckError(
            _(
                "{what} returned torch's global generator (torch.manual_seed(seed) "
                "returns it), not a new one: a DataLoader drawing from it moves the "
                "global random state, so the shuffle order and everything else seeded "
                "from torch depend on each other. Return g = torch.Generator(); "
                "g.manual_seed(seed)."
            ).format(what=what)
        )
    if torch.device(seen["generator_device"]).type != "cpu":
        raise CheckError(
            _(
                "{what} returned a generator on {generator_device}; DataLoader's "
                "shuffling needs a CPU generator: torch.Generator() (no device "
                "argument)."
            ).format(what=what, generator_device=seen["generator_device"])
        )
    if seed < 2**32:
        fresh = torch.Generator().manual_seed(seed)
        expected = torch.rand(3, generator=fresh).tolist()
        for source, hint in [
            (
                "torch's CPU generator",
                "torch.manual_seed(seed), and draw nothing from torch after it inside set_seed",
            ),
            (
                "the torch.Generator you returned",
                "g = torch.Generator(); g.manual_seed(seed), seeded with seed itself",
            ),
        ]:
            got = seen["draws"].get(source)
            if got != expected:
                raise CheckError(
                    _(
                        "after {what}, {source} gave {got}; seeded with {seed} it gives "
                        "{expected}. Use {hint}."
                    ).format(
                        what=what, source=source, got=got, seed=seed, expected=expected, hint=hint
                    )
                )
    return seen["draws"]


def check_set_seed(set_seed) -> None:
    """Same seed, same numbers from every generator; a different seed changes each; workers too."""
    device = get_device()
    salts = itertools.count(1000)
    for seed in (0, 7, 2024, 2**33 + 5):
        what = f"set_seed({seed})"
        first = _seeded_draws(set_seed, seed, next(salts), device)
        second = _seeded_draws(set_seed, seed, next(salts), device)
        third = _seeded_draws(set_seed, seed + 1, next(salts), device)
        expected_sources = set(_HOW) - (
            {"torch's CUDA generator"} if device.type != "cuda" else set()
        )
        for draws in (first, second, third):
            if type(draws) is not dict or set(draws) != expected_sources:
                raise CheckError(
                    _("the hidden check could not draw numbers after {what}.").format(what=what)
                )
        for source in first:
            if first[source] != second[source]:
                raise CheckError(
                    _(
                        "after {what} twice, {source} gave different numbers: {value} vs "
                        "{value2}. Seed it too: {value3}. Seeding only torch leaves shuffles "
                        "and augmentations written with random or NumPy unrepeatable."
                    ).format(
                        what=what,
                        source=source,
                        value=first[source][:2],
                        value2=second[source][:2],
                        value3=_HOW[source],
                    )
                )
            if first[source] == third[source]:
                raise CheckError(
                    _(
                        "set_seed({seed}) and set_seed({value}) give the same numbers from "
                        "{source}: use the seed you were given ({value2})."
                    ).format(seed=seed, value=seed + 1, source=source, value2=_HOW[source])
                )
    runs = [
        observe(
            probes.probe_loader_run, set_seed, {"seed": seed}, f"a DataLoader with set_seed({seed})"
        )
        for seed in (3, 3, 4)
    ]
    for run in runs:
        check_type(run, torch.Tensor, "the batches of a DataLoader run")
    if not torch.equal(runs[0], runs[1]):
        raise CheckError(
            _(
                "two DataLoader runs with num_workers=2 and generator=set_seed(3) gave "
                "different batches: return a torch.Generator seeded with the seed, so "
                "the shuffle order and the workers' seeds repeat."
            )
        )
    if torch.equal(runs[0], runs[2]):
        raise CheckError(
            _(
                "DataLoader runs with set_seed(3) and set_seed(4) were identical: seed "
                "the returned generator with the seed you were given."
            )
        )


# ----------------------------------------------------------------------------- per_sample_grad_norms


def _per_example_grads(model, loss_fn, x, y, trainable_only=True) -> list[list[torch.Tensor]]:
    """For every example, its gradients (one per trainable parameter, in order), by a loop;
    with ``trainable_only=False``, one per parameter of a model that has none frozen."""
    params = [p for p in model.parameters() if p.requires_grad or not trainable_only]
    out = []
    for i in range(len(x)):
        loss = loss_fn(model(x[i : i + 1]), y[i : i + 1])
        grads = torch.autograd.grad(loss, params, allow_unused=True, materialize_grads=True)
        out.append(list(grads))
    return out


def _norms(per_example, combine="l2") -> torch.Tensor:
    rows = []
    for grads in per_example:
        if combine == "l2":
            rows.append(torch.cat([gr.flatten() for gr in grads]).norm())
        else:  # the sum of every parameter's own norm
            rows.append(sum(gr.norm() for gr in grads))
    return torch.stack(rows)


def _per_sample_hint(got: torch.Tensor, model, loss_fn, x, y, per_example, stale) -> str:
    """Name the misconception that gives ``got``, where one does."""
    n = len(x)

    def close(candidate: torch.Tensor) -> bool:
        return bool(torch.allclose(got, candidate.to(got.dtype), rtol=1e-3, atol=1e-6))

    running = [[sum(parts) for parts in zip(*per_example[: i + 1], strict=True)] for i in range(n)]
    with_stale = [[gr + s for gr, s in zip(grads, stale, strict=True)] for grads in running]
    if close(_norms(running)) or close(_norms(with_stale)):
        return _(
            " Entry i holds the gradients of examples 0..i added together (and "
            "what was in .grad before the call): backward() adds to .grad. Zero "
            "the gradients before each example's backward, or use torch.func, "
            "which never touches .grad."
        )
    if close(_norms(per_example, combine="sum")):
        return _(
            " Your values are the sum of each parameter's own norm; the norm over "
            "all parameters together is the square root of the sum of their "
            "squares: torch.cat([g.flatten(1) for g in grads.values()], "
            "dim=1).norm(dim=1)."
        )
    if n > 1 and close(_norms(per_example) / n):
        return _(
            " Your values are {n} (the batch size) times too small: each example's "
            "loss is its own loss, not its share of the batch mean."
        ).format(n=n)
    if n > 1 and bool(torch.allclose(got, got[:1].expand(n))):
        return _(
            " Every example got the same norm: that is one gradient for the whole "
            "batch. Compute one gradient per example: vmap(grad(loss of one "
            "example)) over the batch."
        )
    unfrozen = copy.deepcopy(model).requires_grad_(True)
    with_frozen = _per_example_grads(unfrozen, loss_fn, x, y, trainable_only=False)
    if len(with_frozen[0]) != len(per_example[0]) and close(_norms(with_frozen)):
        return _(
            " Your norms include the frozen parameters (requires_grad=False): a "
            "training step never updates them. Take only the parameters with "
            "p.requires_grad."
        )
    return ""


def _reference_per_sample(model, loss_fn, x, y) -> torch.Tensor:
    return _norms(_per_example_grads(model, loss_fn, x, y))


def _draw_per_sample(d: Draw) -> Inputs:
    """An MLP (cross-entropy), a float64 MLP (mean squared error), a model with a frozen layer
    and an unused parameter, or images through nn.Flatten in eval mode; N examples (the edges
    family favours a batch of one); the trainable parameters hold stale gradients."""
    kind = d.draw(st.sampled_from(["mlp", "float64 mlp", "with_unused", "flat_mlp"]))
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 2**16)))
    n = d.size(1, 7)
    if kind == "mlp":
        features, classes = d.size(1, 6), d.size(2, 4)
        spec = _mlp([features, d.size(1, 8), classes], g, device="cpu")
        x, y = _classification(n, features, classes, g, "cpu")
        loss, label = "cross_entropy", "an MLP (cross-entropy)"
    elif kind == "float64 mlp":
        spec = _mlp([3, 8, 2], g, act="tanh", dtype=torch.float64, device="cpu")
        x = torch.randn(n, 3, generator=g, dtype=torch.float64)
        y = torch.randn(n, 2, generator=g, dtype=torch.float64)
        loss, label = "mse", "a float64 MLP (mean squared error)"
    elif kind == "with_unused":
        spec = _with_unused(g, "cpu")
        x, y = torch.randn(n, 4, generator=g), torch.randn(n, 2, generator=g)
        loss, label = "mse", "a model with a frozen layer and an unused parameter"
    else:
        spec = {
            "kind": "flat_mlp",
            "dtype": torch.float32,
            "device": torch.device("cpu"),
            "params": probes.random_params(probes.FlatMLP(), g),
        }
        x, y = torch.randn(n, 1, 4, 4, generator=g), torch.randint(0, 3, (n,), generator=g)
        loss, label = "cross_entropy", "images (N, 1, 4, 4) into nn.Flatten, in eval mode"
    model = {"model": spec, "grads": _junk_grads(spec, g), "eval": kind == "flat_mlp"}
    return Inputs(
        (
            Build(probes.build_model_with_stale_grads, model, label),
            Build(probes.build_loss, {"loss": loss}, loss),
            x,
            y,
        )
    )


def _compare_per_sample(got, expected: torch.Tensor, what: str, inputs: Inputs) -> None:
    """A tensor of shape (N,) in the parameters' dtype, the loop's norms; a wrong one named."""
    n = len(expected)
    if not isinstance(got, torch.Tensor):
        raise CheckError(
            _(
                "{what} returned {__name__}; return a tensor of shape ({n},): one norm "
                "per example (torch.stack a list of norms, or .norm(dim=1) of the "
                "flattened per-example gradients)."
            ).format(what=what, __name__=type(got).__name__, n=n)
        )
    if tuple(got.shape) != (n,):
        raise CheckError(
            _(
                "{what} returned shape {shape}, expected ({n},) (N): one norm per "
                "example, over all the parameters together."
            ).format(what=what, shape=tuple(got.shape), n=n)
        )
    if got.dtype != expected.dtype:
        raise CheckError(
            _(
                "{what} returned {dtype}; the parameters are {dtype2}. Keep their "
                "dtype (no .float())."
            ).format(what=what, dtype=got.dtype, dtype2=expected.dtype)
        )
    tight = expected.dtype == torch.float64
    try:
        assert_close(
            got,
            expected,
            rtol=1e-9 if tight else 1e-4,
            atol=1e-12 if tight else 1e-6,
            what=_("the norms from {what}").format(what=what),
        )
    except CheckError as err:
        if tight and torch.allclose(got, expected, rtol=1e-5):  # before the hints: with N = 1
            hint = _(  # the loop's running sums equal the right norms to 1e-3
                " Right to about 7 digits only: the model is float64 and something was "
                "computed in float32."
            )
        else:
            model, loss_fn = inputs.args[0].make(), inputs.args[1].make()
            x, y = inputs.args[2:]
            stale = [p.grad for p in model.parameters() if p.requires_grad]
            per_example = _per_example_grads(model, loss_fn, x, y)
            hint = _per_sample_hint(got, model, loss_fn, x, y, per_example, stale)
        raise CheckError(_("{err}{hint}").format(err=err, hint=hint)) from None


PER_SAMPLE_GRAD_NORMS = Contract(
    "per_sample_grad_norms",
    _reference_per_sample,
    _draw_per_sample,
    families=("values", "edges", "strides"),
    mutates=(0,),  # a loop of backward passes may overwrite the caller's .grad (the text allows it)
    compare=_compare_per_sample,
    arg_names=("model", "loss_fn", "x", "y"),
)


@uses(PER_SAMPLE_GRAD_NORMS)
def check_per_sample_grad_norms(per_sample_grad_norms) -> None:
    """The contract (against a loop of one backward pass per example, x and y untouched),
    then what it lets the answer change: the model's .grad, but not its weights or its
    train/eval mode."""
    g = torch.Generator().manual_seed(67)
    spec = _mlp([6, 16, 4], g, device="cpu")
    x, y = _classification(10, 6, 4, g, "cpu")
    what = f"per_sample_grad_norms(model, loss_fn, x, y) for an MLP in train mode, x of shape {tuple(x.shape)}"
    case = {"model": spec, "grads": _junk_grads(spec, g), "x": x, "y": y, "loss": "cross_entropy"}
    seen = observe(probes.probe_per_sample_grad_norms, per_sample_grad_norms, case, what)
    if seen["weights_changed"]:
        raise CheckError(
            _(
                "{what} changed the model's weights. Only compute gradients: no "
                "optimizer step, no in-place update."
            ).format(what=what)
        )
    if seen["mode_changed"]:
        raise CheckError(
            _(
                "{what} switched the model between train() and eval() and left it so; "
                "put back the mode you found."
            ).format(what=what)
        )
