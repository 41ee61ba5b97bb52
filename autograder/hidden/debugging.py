"""Hidden checks for 07_debugging."""

from __future__ import annotations

import copy
import itertools
import math
import random

import torch
from hypothesis import strategies as st
from torch import nn

from autograder import wire
from autograder.boundary import observe
from autograder.contracts import (
    Build,
    Contract,
    Draw,
    Inputs,
    compare_values,
    copies,
    describe,
    uses,
)
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


def _classification(n, features, classes, g, device, dtype=torch.float32):
    x = torch.randn(n, features, generator=g, dtype=dtype).to(device)
    y = torch.randint(0, classes, (n,), generator=g).to(device)
    return x, y


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


def _check_flags(seen: dict, what: str) -> None:
    """torch.use_deterministic_algorithms left as the caller had it (the probe noted a change,
    and set it back); the contract watches anomaly detection (boundary.MODES)."""
    if seen.get("flags_changed"):
        raise CheckError(
            _(
                "{what} changed torch's global settings and left them so: {flags}. They "
                "stay that way for the rest of the caller's session (deterministic algorithms "
                "make some later operations raise). Set them back before returning."
            ).format(what=what, flags=", ".join(seen["flags_changed"]))
        )


def _check_modes(seen: dict, what: str) -> None:
    """The caller's model left in the eval mode it came in (the probe called it in eval mode)."""
    if seen.get("modes_changed"):
        raise CheckError(
            _(
                "{what} was given a model in eval mode and left {modules} in training mode. "
                "The mode is the caller's (a model in eval mode may be fine-tuned with its "
                "BatchNorm statistics frozen): do not call model.train() inside, or restore "
                "the mode you found."
            ).format(what=what, modules=seen["modes_changed"])
        )


def _stale_grads(spec: dict, g: torch.Generator) -> list[torch.Tensor | None]:
    """Leftover gradients from an earlier step on the parameters a step trains (None on a frozen
    or unused one, as the caller's would be): a correct answer zeroes them first."""
    return [
        None if not p.requires_grad or name == "unused" else 10 * torch.randn(p.shape, generator=g)
        for name, p in probes.build_model(spec).named_parameters()
    ]


def _draw_step_model(
    d: Draw, g: torch.Generator, n: int, kind: str | None = None
) -> tuple[dict, dict, str]:
    """A model spec (an MLP, a float64 MLP, or one with a frozen layer and an unused parameter;
    ``kind`` picks one) with stale gradients, and a batch of ``n`` for it: what a training
    step's contract gets."""
    kind = kind or d.draw(st.sampled_from(["mlp", "float64 mlp", "with_unused"]))
    if kind == "mlp":
        features, classes = d.size(1, 5), d.size(2, 4)
        spec = _mlp([features, d.size(1, 8), classes], g, device="cpu")
        x, y = _classification(n, features, classes, g, "cpu")
        batch, label = {"x": x, "y": y, "loss": "cross_entropy"}, "an MLP"
    elif kind == "float64 mlp":
        spec = _mlp([3, 5, 2], g, act="tanh", dtype=torch.float64, device="cpu")
        x = torch.randn(n, 3, generator=g, dtype=torch.float64)
        y = torch.randn(n, 2, generator=g, dtype=torch.float64)
        batch, label = {"x": x, "y": y, "loss": "mse"}, "a float64 MLP"
    else:
        spec = _with_unused(g, "cpu")
        x, y = _classification(n, 4, 2, g, "cpu")
        batch = {"x": x, "y": y, "loss": "cross_entropy"}
        label = "a model with a frozen layer and an unused parameter"
    model = {"model": spec, "grads": _stale_grads(spec, g)}
    return model, batch, label + " (its .grad left from an earlier step)"


# ----------------------------------------------------------------------------- overfit_one_batch


def _reference_overfit(model, x, y, loss_fn, num_steps=100, lr=1e-2) -> list[float]:
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _step in range(num_steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
    return losses


def _draw_overfit(d: Draw) -> Inputs:
    """A model in training mode, a batch (the edges family favours one example), a mean loss;
    num_steps (0 in the edges family) and lr given, or both left to their defaults."""
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 2**16)))
    shape = d.draw(st.sampled_from(["step model", "batchnorm", "float64 targets", "tied"]))
    if shape == "batchnorm":  # the recorded loss is the training-mode one (batch statistics)
        spec = {
            "kind": "batchnorm",
            "dtype": torch.float32,
            "device": torch.device("cpu"),
            "params": probes.random_params(probes.BatchNormMLP(), g),
        }
        x, y = _classification(d.size(2, 8), 4, 2, g, "cpu")  # BatchNorm trains on 2 rows or more
        model = {"model": spec, "grads": _stale_grads(spec, g)}
        batch = {"x": x, "y": y, "loss": "cross_entropy"}
        label = "an MLP with BatchNorm1d in training mode (its .grad left from an earlier step)"
    elif shape == "tied":  # one weight shared by two layers: Adam must see it once
        spec = {
            "kind": "tied",
            "dtype": torch.float32,
            "device": torch.device("cpu"),
            "params": probes.random_params(probes.Tied(), g),
        }
        x, y = _classification(d.size(1, 8), 4, 4, g, "cpu")
        model = {"model": spec, "grads": _stale_grads(spec, g)}
        batch = {"x": x, "y": y, "loss": "cross_entropy"}
        label = _GRAD_NORM_MODELS["tied"] + " (its .grad left from an earlier step)"
    elif shape == "float64 targets":
        model, batch, label = _draw_step_model(d, g, d.size(1, 8), kind="float64 mlp")
        if d.draw(st.booleans()):  # targets it already fits: every loss is 0, every step counts
            batch["y"] = probes.build_model(model["model"])(batch["x"]).detach()
            label += _(", on targets it already fits exactly (every loss is 0)")
        else:  # targets far away: gradient norms in the thousands, where a clip inside bites
            batch["y"] = batch["y"] * 1e4
            label += _(", on targets of about 1e4 (gradient norms far above 1)")
    else:
        model, batch, label = _draw_step_model(d, g, d.size(1, 8))
    args = (
        Build(probes.build_step_model, model, label),
        batch["x"],
        batch["y"],
        Build(probes.build_loss, {"loss": batch["loss"]}, batch["loss"]),
    )
    # The defaults are part of the task; they cost 100 steps a call, so only the values
    # family calls them (edges is about the batch and the step count).
    if d.family == "values" and d.draw(st.booleans()):
        return Inputs(args)
    steps = d.size(1, 12, empty_ok=True)
    return Inputs(args, {"num_steps": steps, "lr": d.draw(st.sampled_from([0.1, 3e-2, 1e-2]))})


def _compare_overfit(got, expected: list, what: str, inputs: Inputs) -> None:
    """A list of one Python float per step, the reference's losses within 1e-4."""
    check_type(got, list, what)
    if len(got) != len(expected):
        raise CheckError(
            _("{what} returned {n_losses} losses, expected one per step ({steps}).").format(
                what=what, n_losses=len(got), steps=len(expected)
            )
        )
    for i, value in enumerate(got):
        if isinstance(value, torch.Tensor):
            raise CheckError(
                _(
                    "entry {i} of {what} is a tensor. Store loss.item(): a stored loss "
                    "tensor keeps its whole autograd graph (every saved activation of that "
                    "step) alive, so memory grows with every step."
                ).format(i=i, what=what)
            )
        check_type(value, float, f"entry {i} of {what}")
    if not expected:
        return
    wide = inputs.args[1].dtype == torch.float64
    got_t, expected_t = (torch.tensor(v, dtype=torch.float64) for v in (got, expected))
    if wide and torch.allclose(got_t, expected_t, rtol=1e-5, atol=1e-7):
        if not torch.allclose(got_t, expected_t, rtol=1e-9, atol=1e-12):
            raise CheckError(
                _(
                    "the losses from {what} are right to about 7 digits only: the model and "
                    "the batch are float64 here, and the losses went through float32 (a "
                    "torch.tensor(losses), a .float()). Return the Python floats of "
                    "loss.item()."
                ).format(what=what)
            )
        return
    assert_close(
        got_t,
        expected_t,
        rtol=1e-4,
        atol=1e-6,
        what=_("the losses from {what}").format(what=what),
    )


def _overfit_hint(family: str, inputs: Inputs) -> str:
    defaults = (
        ""
        if inputs.kwargs
        else _(" num_steps and lr were left to their defaults here: num_steps=100, lr=1e-2.")
    )
    return (
        _(
            "Build one torch.optim.Adam(model.parameters(), lr=lr), its other settings at their "
            "defaults, before the loop; every step: zero_grad, forward, loss, record "
            "loss.item(), backward, step (entry 0 is the loss before any update). Train the "
            "model you were given in place and leave it in training mode."
        )
        + defaults
    )


OVERFIT_ONE_BATCH = Contract(
    "overfit_one_batch",
    _reference_overfit,
    _draw_overfit,
    families=("values", "edges"),
    mutates=(0,),  # trained in place: its weights, .grad and mode are compared afterwards
    compare=_compare_overfit,
    arg_names=("model", "x", "y", "loss_fn"),
    hint=_overfit_hint,
    examples=8,
)


@uses(OVERFIT_ONE_BATCH)
def check_overfit_one_batch(overfit_one_batch) -> None:
    """The contract (the losses, and the model's weights, gradients and mode afterwards,
    against a reference Adam run; x and y untouched), then what it does not watch: torch's
    global random state, on the notebook's device."""
    device = get_device()
    g = torch.Generator().manual_seed(60)
    spec = _mlp([4, 8, 3], g, device=device)
    x, y = _classification(8, 4, 3, g, device)
    case = {"model": spec, "x": x, "y": y, "loss": "cross_entropy", "steps": 5, "lr": 1e-2}
    what = "overfit_one_batch(..., num_steps=5, lr=0.01)"
    seen = observe(probes.probe_overfit_one_batch, overfit_one_batch, case, what)
    if seen["losses_alive"] > 2:
        raise CheckError(
            _(
                "{what} kept {alive} of its loss tensors alive at once during the loop: each "
                "stored loss tensor keeps its step's autograd graph, so memory grows with "
                "every step, even if they become floats at the end. Store loss.item() as "
                "soon as the loss is computed."
            ).format(what=what, alive=seen["losses_alive"])
        )
    _check_flags(seen, what)
    if seen["rng_changed"]:
        raise CheckError(
            _(
                "{what} changed torch's global random state (a torch.manual_seed(...) "
                "inside, or random draws). Seeding belongs to the caller: a helper "
                "that reseeds silently makes every later random number of the caller's "
                "run repeat. Remove it."
            ).format(what=what)
        )


# ----------------------------------------------------------------------------- clipped_step


def _reference_clipped(model, optimizer, loss, max_norm) -> float:
    optimizer.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    optimizer.step()
    return norm.item()


def _draw_clipped(d: Draw) -> Inputs:
    """A model with stale gradients, SGD over it, the loss of a batch of N (the edges family
    favours one example), and a max_norm below the gradient norm (clipping acts) or far above
    it (the gradients must be left alone)."""
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 2**16)))
    n = d.size(1, 8)
    model, batch, label = _draw_step_model(d, g, n)
    if d.draw(st.booleans()):  # the caller's mode is the caller's: a step does not set it
        model["eval"] = True
        label += _(", in eval mode")
    fresh = probes.build_step_model(model)
    fresh.zero_grad()
    probes.build_loss_of(batch, fresh).backward()
    norm = float(
        nn.utils.get_total_norm([p.grad for p in fresh.parameters() if p.grad is not None])
    )
    factor = d.draw(st.sampled_from([1e3, 0.5, 0.1] if d.family == "edges" else [2.0, 0.5, 0.1]))
    sgd = {
        "lr": d.draw(st.sampled_from([0.1, 1.0])),
        "momentum": d.draw(st.sampled_from([0.0, 0.9])),
    }
    sgd_label = f"SGD(lr={sgd['lr']}, momentum={sgd['momentum']})"
    if d.family == "values" and model["model"]["kind"] == "mlp" and d.draw(st.booleans()):
        # An optimizer over the last layer only: the text clips all of model.parameters(),
        # whose gradients the norm covers, not only those the optimizer steps. No stale
        # gradient outside the optimizer, so zeroing with model.zero_grad() is right too.
        sgd["last"] = 2
        held = len(model["grads"]) - sgd["last"]
        model = dict(model, grads=[None] * held + model["grads"][held:])
        sgd_label += " over the last layer's weight and bias only"
    return Inputs(
        (
            Build(probes.build_step_model, model, label),
            Build(probes.build_sgd, sgd, sgd_label, of=(0,)),
            Build(
                probes.build_loss_of, batch, f"its {batch['loss']} loss on a batch of {n}", of=(0,)
            ),
            float(f"{factor * norm:.3g}"),
        )
    )


def _fresh_norms(inputs: Inputs) -> list[float]:
    """Each parameter's gradient norm from one backward pass of the call's loss (no stale ones)."""
    model, _optimizer, loss, *_rest = copies(inputs.args)
    model.zero_grad()
    loss.backward()
    return [float(p.grad.double().norm()) for p in model.parameters() if p.grad is not None]


def _compare_clipped(got, expected: float, what: str, inputs: Inputs) -> None:
    """A Python float, the total norm before clipping; the usual wrong norms named."""
    got = _as_float(got, _("the value {what} returned").format(what=what))
    max_norm = inputs.args[3]
    tight = inputs.args[0].spec["model"]["dtype"] == torch.float64
    err = abs(got - expected)
    if err <= (1e-10 if tight else 1e-5) * max(1.0, expected):
        return
    if expected > max_norm and abs(got - max_norm) <= 1e-4 * max_norm:
        raise CheckError(
            _(
                "{what} returned {got:.6g}, which is max_norm: that is the norm after "
                "clipping. Return the norm before clipping ({total:.6g}): "
                "clip_grad_norm_ returns it."
            ).format(what=what, got=got, total=expected)
        )
    if tight and err <= 1e-5 * max(1.0, expected):
        raise CheckError(
            _(
                "{what} returned {got!r}; the total gradient norm before clipping is "
                "{total!r}. Right to about 7 digits only: the gradients are float64 "
                "here and the norm was computed in float32. Return what "
                "clip_grad_norm_ gives back (.item())."
            ).format(what=what, got=got, total=expected)
        )
    hint = ""
    if abs(got - sum(_fresh_norms(inputs))) <= 1e-4 * max(1.0, got):
        hint = _(
            " Your value is the sum of the per-parameter norms; the total norm is "
            "the square root of the sum of their squares."
        )
    raise CheckError(
        _(
            "{what} returned {got:.6g}; the total gradient norm before clipping is "
            "{total:.6g}. Return the value clip_grad_norm_ gives back (one L2 norm "
            "over all parameters together).{hint}"
        ).format(what=what, got=got, total=expected, hint=hint)
    )


def _clipped_hint(family: str, inputs: Inputs) -> str:
    norm = math.sqrt(sum(n * n for n in _fresh_norms(inputs)))
    max_norm = inputs.args[3]
    if norm > max_norm:
        state = _(
            "Here the gradient norm before clipping is {norm:.4g}, above max_norm={max_norm:.4g}: "
            "every gradient is scaled by max_norm / norm."
        )
    else:
        state = _(
            "Here the gradient norm before clipping is {norm:.4g}, at most "
            "max_norm={max_norm:.4g}: clipping must leave the gradients as they are."
        )
    return state.format(norm=norm, max_norm=max_norm) + _(
        " The order: optimizer.zero_grad() (old gradients are lying around), loss.backward(), "
        "clip_grad_norm_(model.parameters(), max_norm) (all parameters together, by one "
        "norm), optimizer.step()."
    )


CLIPPED_STEP = Contract(
    "clipped_step",
    _reference_clipped,
    _draw_clipped,
    families=("values", "edges"),
    mutates=(0, 1, 2),  # the step: weights, .grad and momentum; loss.backward() fills loss.grad
    compare=_compare_clipped,
    arg_names=("model", "optimizer", "loss", "max_norm"),
    hint=_clipped_hint,
)


@uses(CLIPPED_STEP)
def check_clipped_step(clipped_step) -> None:
    """The contract: the returned norm, and the model's weights and gradients and the
    optimizer's momentum afterwards, against zero_grad -> backward -> clip_grad_norm_ -> step;
    then what it does not watch: the loss's graph is freed by the backward pass."""
    g = torch.Generator().manual_seed(61)
    spec = _mlp([4, 8, 3], g, device=get_device())
    x, y = _classification(6, 4, 3, g, spec["device"])
    case = {"model": spec, "x": x, "y": y, "loss": "cross_entropy", "max_norm": 1.0}
    what = "clipped_step(model, optimizer, loss, max_norm=1.0)"
    seen = observe(probes.probe_clipped_step, clipped_step, case, what)
    if seen["graph_kept"]:
        raise CheckError(
            _(
                "{what} left the loss's graph alive after the step (loss.backward() could run "
                "a second time): backward(retain_graph=True) keeps every activation of the "
                "forward pass in memory until the caller drops the loss, into the next step. "
                "Call loss.backward() plainly; it frees the graph."
            ).format(what=what)
        )
    _check_flags(seen, what)


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
    "tied": "a model whose output layer shares (ties) the input layer's weight",
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
    elif kind == "tied":
        spec = {
            "kind": "tied",
            "dtype": dtype,
            "device": torch.device("cpu"),
            "params": probes.random_params(probes.Tied(), g),
        }
    else:
        spec = _nested(g, "cpu", dtype=dtype)
    width = spec["sizes"][0] if kind == "mlp" else 4
    x = torch.randn(d.size(2, 7), width, generator=g, dtype=dtype)  # BatchNorm needs 2 rows
    label = f"{_GRAD_NORM_MODELS[kind]} ({str(dtype).removeprefix('torch.')}), after backward()"
    built = {"model": spec, "x": x}
    if d.family == "edges":
        # gradients of about 1e20 (a float32 norm overflows to inf, in the gradient's own
        # dtype), or one gradient entry already inf: the norms are read, the gradients kept
        extreme = d.draw(st.sampled_from(["none", "huge", "inf"]))
        if extreme == "huge":
            built["grad_scale"] = 1e20
            label += ", its gradients scaled to about 1e20"
        elif extreme == "inf":
            built["poison"] = True
            label += ", one gradient entry inf"
    return Inputs((Build(probes.build_model_with_grads, built, label),))


def _compare_grad_norms(got, expected: dict, what: str, inputs: Inputs) -> None:
    """Names, order and values of the norms (float64 models to about 10 digits)."""
    check_type(got, dict, what)
    missing = [n for n in expected if n not in got]
    extra = [n for n in got if n not in expected]
    model = copies(inputs.args)[0]
    aliases = [n for n, _p in model.named_parameters(remove_duplicate=False) if n in extra]
    if aliases:
        raise CheckError(
            _(
                "{what} has entries {extra}: a second name of a parameter that is shared "
                "(tied) with another module. One parameter has one gradient: list it once, "
                "under the name model.named_parameters() gives it (it skips the duplicates)."
            ).format(what=what, extra=aliases)
        )
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
        if math.isinf(expected[name]) != math.isinf(value):
            raise CheckError(
                _(
                    "the entry {name!r} of {what} is {value:.6g}, expected {value2:.6g}: "
                    "p.grad.norm() in the gradient's own dtype. A float32 gradient this "
                    "large has a float32 norm of inf; converting to float64 (or to Python "
                    "floats) first measures something else."
                ).format(name=name, what=what, value=value, value2=expected[name])
            )
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
    zero ones kept; the model (its gradients included) left as it was. Then a frozen layer that
    still holds the .grad of an earlier step: it has a gradient, so it is listed."""
    g = torch.Generator().manual_seed(62)
    spec = _with_unused(g, "cpu")
    case = {"model": spec, "x": torch.randn(3, 4, generator=g), "frozen_grads": True}
    what = "grad_norms(model) for a model whose frozen layer still holds an earlier .grad"
    got = observe(probes.probe_grad_norms, grad_norms, case, what)["result"]
    frozen = [n for n, p in probes.build_model(spec).named_parameters() if not p.requires_grad]
    missing = [n for n in frozen if not isinstance(got, dict) or n not in got]
    if missing:
        raise CheckError(
            _(
                "{what} left out {missing}: frozen (requires_grad=False) but holding a "
                ".grad from before it was frozen. Test p.grad is None, not p.requires_grad: "
                "list every parameter that has a gradient."
            ).format(what=what, missing=missing)
        )


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
        kinds = ["first-on-ratio", "on-explode", "unbounded-inf", "zeros", "plain", "wide"]
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
    elif kind == "wide":  # finite, but beyond float32's range (a float32 copy makes it inf)
        values[where], explode = 2.0**200, "inf"
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
    wide = [v for v in inputs.args[0].values() if math.isfinite(v) and v > 3.4e38]
    if wide:
        reason += _(
            " ({norm:g} is finite as a Python float; a float32 copy, such as torch.tensor(...) "
            "of the values, turns it into inf: compare the floats themselves)"
        ).format(norm=wide[0])
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
    _check_largest(diagnose_gradients)
    if seen["norms_changed"]:
        raise CheckError(
            _(
                "{what} changed the dict it was given; read the norms without "
                "modifying the caller's dict (copy it if you need to reorder or remove "
                "entries)."
            ).format(what=what)
        )


def _check_largest(diagnose_gradients) -> None:
    """The first norm against the largest, not a mean or a median: one large layer among
    small ones (the contract's profiles rarely separate the two)."""
    norms = {"0.weight": 5e-3, "1.weight": 1.0, "2.weight": 1e-3, "3.weight": 1e-3}
    what = f"diagnose_gradients({norms}, vanish_ratio=0.01)"
    case = {"norms": norms, "kwargs": {"vanish_ratio": 0.01}}
    got = observe(probes.probe_diagnose_gradients, diagnose_gradients, case, what)["result"]
    if got != "vanishing":
        raise CheckError(
            _(
                "{what} returned {got!r}, expected 'vanishing': the first norm, 0.005, is at "
                "most vanish_ratio times the largest norm (0.01 x 1.0). Compare with the "
                "largest norm (max), not with their mean or median."
            ).format(what=what, got=got)
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

# model name in probes.NONFINITE_MODELS -> how the feedback names it
_NONFINITE_MODELS = {
    "log_relu": "log of a ReLU output",  # ReLU gives exact zeros, log(0) = -inf
    # registration order differs from execution order; inf first (body.1), NaN later (head)
    "reordered": "head registered before body",
    # overflow squashed back to finite numbers: the final output is finite
    "squashed": "an overflow that tanh squashes",
    "exp_relu": "inf but no NaN",
    "tuple_output": "a module returning a tuple",
    "nested": "nested Sequentials (log of a negative number: NaN, no inf)",
    # the container's own forward makes the NaN; its child's output is finite
    "own_forward": "a module whose own forward (not a child's) takes a log",
    "ordinary": "an ordinary MLP",  # everything finite
    # the model's own forward takes the log: it is not a submodule, so the answer is None
    "root_forward": "a model whose own forward (no submodule's) takes a log",
    # one ReLU called twice: finite the first time, NaN the second, after the log's -inf
    "shared_relu": "a ReLU module called twice, before and after a log",
    # finite outputs near float32's largest value: a check on their sum or mean overflows
    "huge_finite": "finite outputs near float32's largest value (their sum overflows)",
    "empty_batch": "an ordinary MLP on an empty batch (0 rows)",
    # float64 outputs near 1e300: finite, but inf once cast to float32
    "huge_float64": "a float64 model whose finite outputs lie beyond float32's range",
    # x holds -inf, the first ReLU makes it 0: no module outputs a non-finite value
    "nonfinite_input": "an input holding -inf that the first ReLU turns into 0",
}


def _reference_nonfinite(model: nn.Module, x: torch.Tensor) -> str | None:
    culprits: list[str] = []

    def make_hook(name):
        def hook(module, inputs, output):
            outputs = output if isinstance(output, (tuple, list)) else (output,)
            if any(isinstance(o, torch.Tensor) and not torch.isfinite(o).all() for o in outputs):
                culprits.append(name)

        return hook

    handles = [m.register_forward_hook(make_hook(n)) for n, m in model.named_modules() if n]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for handle in handles:
            handle.remove()
    return culprits[0] if culprits else None


def _draw_nonfinite(d: Draw) -> Inputs:
    """A model where NaN or inf appears somewhere inside (or nowhere), in training mode; the
    edges family also hands it over in eval mode or carrying hooks of its caller's."""
    name = d.draw(st.sampled_from(sorted(_NONFINITE_MODELS)))
    training, hooks = True, False
    if d.family == "edges":
        training = d.draw(st.sampled_from([True, False, "mixed"]))
        hooks = d.draw(st.booleans())
    label = (
        _NONFINITE_MODELS[name]
        + {
            True: " in train mode",
            False: " in eval mode",
            "mixed": " in train mode, its last submodule in eval mode",
        }[training]
    )
    if hooks:
        label += _(", carrying its caller's hooks")
    spec = {"model": name, "training": training, "caller_hooks": hooks}
    x = probes.NONFINITE_MODELS[name]()[1]
    return Inputs((Build(probes.build_nonfinite_model, spec, label), x))


def _compare_nonfinite(got, expected: str | None, what: str, inputs: Inputs) -> None:
    """The name of the first module to output NaN/inf, or None; the usual slips named."""
    if got is not None:
        check_type(got, str, what)
    if got == expected:
        return
    model, x = copies(inputs.args)
    order = _execution_order(model, x)
    containers = {n for n, m in model.named_modules() if n and any(True for _ in m.children())}
    hint = ""
    spec = getattr(inputs.args[0], "spec", {})
    if expected is None:
        hint = _(" Every output in this model is finite, so return None.")
        if spec.get("model") == "huge_finite":
            hint += _(
                " Its outputs are close to float32's largest value: test every element "
                "with torch.isfinite(t).all(), not a sum or a mean of them (which overflows)."
            )
        elif spec.get("model") == "huge_float64":
            hint += _(
                " Its outputs are float64 and far beyond float32's range: test them in their "
                "own dtype, torch.isfinite(t), not after .float()."
            )
        elif spec.get("model") == "nonfinite_input":
            hint += _(
                " Only a module's output counts: x itself holds -inf, but the first module "
                "(a ReLU) outputs 0 there."
            )
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


FIRST_NONFINITE_MODULE = Contract(
    "first_nonfinite_module",
    _reference_nonfinite,
    _draw_nonfinite,
    families=("values", "edges"),
    compare=_compare_nonfinite,
    arg_names=("model", "x"),
    examples=16,
)


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


@uses(FIRST_NONFINITE_MODULE)
def check_first_nonfinite_module(first_nonfinite_module) -> None:
    """The contract (the first module to produce NaN/inf, or None; the model's hooks, the
    caller's own included, and its mode as they were), then what it cannot say: a forward
    pass that raises leaves no hook behind (on the notebook's device, global hooks too)."""
    what = "first_nonfinite_module(model, x) for an ordinary model"
    seen = observe(
        probes.probe_nonfinite_grad_mode, first_nonfinite_module, {"device": get_device()}, what
    )
    if any(seen["seen"]):
        raise CheckError(
            _(
                "{what} ran the forward pass with autograd recording (torch.is_grad_enabled() "
                "was True inside it): run model(x) under torch.no_grad(), which also keeps "
                "no activations for a backward pass that never comes."
            ).format(what=what)
        )
    what = "first_nonfinite_module(model, x) for a model whose forward pass raises (after a -inf)"
    case = {"model": "raises", "device": get_device(), "what": what, "may_raise": True}
    seen = observe(probes.probe_first_nonfinite_module, first_nonfinite_module, case, what)
    _check_flags(seen, what)
    if not seen["raised"] and seen["result"] is None:
        raise CheckError(
            _(
                "{what} returned None: the forward pass raised (after a module had output "
                "-inf), and None means that every output was finite. Let the error reach "
                "the caller (try: ... finally: removes the hooks without catching it)."
            ).format(what=what)
        )
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


# ----------------------------------------------------------------------------- accumulated_step


def _reference_accumulated(model, optimizer, loss_fn, x, y, micro_batch) -> float:
    optimizer.zero_grad()
    total = 0.0
    for x_chunk, y_chunk in zip(x.split(micro_batch), y.split(micro_batch), strict=True):
        loss = loss_fn(model(x_chunk), y_chunk) * (len(x_chunk) / len(x))
        loss.backward()
        total += loss.item()
    optimizer.step()
    return total


def _draw_accumulated(d: Draw) -> Inputs:
    """A model with stale gradients, SGD over it, a mean loss, a batch of N and a micro_batch
    (the edges family favours N = 1, micro_batch = 1 and micro_batch >= N; a last piece
    smaller than the others is common)."""
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 2**16)))
    if d.family == "edges":
        n = d.size(1, 10)
        micro = d.size(1, 12)
    else:  # several pieces, their shares often not a power of two
        n = d.draw(st.integers(3, 10))
        micro = d.draw(st.integers(1, n - 1))
    model, batch, label = _draw_step_model(d, g, n)
    sgd = {"lr": 0.5, "momentum": d.draw(st.sampled_from([0.0, 0.9]))}
    return Inputs(
        (
            Build(probes.build_step_model, model, label),
            Build(probes.build_sgd, sgd, f"SGD(lr=0.5, momentum={sgd['momentum']})", of=(0,)),
            Build(probes.build_loss, {"loss": batch["loss"]}, batch["loss"]),
            batch["x"],
            batch["y"],
            micro,
        )
    )


def _compare_accumulated(got, expected: float, what: str, inputs: Inputs) -> None:
    """A Python float, the whole batch's mean loss (float64 batches to about 10 digits)."""
    got = _as_float(got, _("the value {what} returned").format(what=what))
    tight = inputs.args[3].dtype == torch.float64
    err = abs(got - expected)
    if err <= (1e-10 if tight else 1e-5) * max(1.0, abs(expected)):
        return
    hint = _(" Add up the scaled micro-batch losses as Python floats (loss.item()).")
    if tight and err <= 1e-5 * max(1.0, abs(expected)):
        hint = _(
            " It is right to about 7 digits only: the sum was kept in float32 (a "
            "torch.zeros(()) accumulator, or a .float()). Add Python floats, "
            "loss.item(), which keep the float64 precision."
        )
    raise CheckError(
        _("{what} returned {got!r}; the mean loss over the whole batch is {full!r}.{hint}").format(
            what=what, got=got, full=expected, hint=hint
        )
    )


def _accumulated_hint(family: str, inputs: Inputs) -> str:
    n, micro = len(inputs.args[3]), inputs.args[5]
    sizes = [len(piece) for piece in inputs.args[3].split(micro)]
    return _(
        "Here the pieces have {sizes} rows of N={n}: weight each piece's mean loss by "
        "len(x_chunk) / len(x) before its backward() (dividing by the number of pieces is "
        "only right when they are all the same size). Zero the old gradients once before the "
        "loop (the model arrives with gradients of an earlier step in .grad), and call "
        "optimizer.step() once after it."
    ).format(sizes=sizes, n=n)


ACCUMULATED_STEP = Contract(
    "accumulated_step",
    _reference_accumulated,
    _draw_accumulated,
    families=("values", "edges"),
    mutates=(0, 1),  # one step: the weights, .grad and the optimizer's momentum
    compare=_compare_accumulated,
    arg_names=("model", "optimizer", "loss_fn", "x", "y", "micro_batch"),
    hint=_accumulated_hint,
    tolerance={torch.float64: (1e-9, 1e-12)},  # float64 weights: float32 anywhere shows
    examples=12,
)


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


@uses(ACCUMULATED_STEP)
def check_accumulated_step(accumulated_step) -> None:
    """The contract (one accumulated step equals one large-batch step: the returned loss, the
    weights, gradients and momentum afterwards; x and y untouched), then the memory the text
    is about, on the notebook's device: no forward pass sees more than micro_batch rows, and
    each piece's graph is freed by its backward() before the next piece runs."""
    device = get_device()
    g = torch.Generator().manual_seed(65)
    n, micro = 7, 2
    spec = _mlp([4, 6, 3], g, device=device)
    x, y = _classification(n, 4, 3, g, device)
    case = {
        "model": spec,
        "grads": _junk_grads(spec, g),
        "x": x,
        "y": y,
        "loss": "cross_entropy",
        "lr": 0.5,
        "micro_batch": micro,
    }
    what = f"accumulated_step(..., x with N={n}, micro_batch={micro})"
    seen = observe(probes.probe_accumulated_step, accumulated_step, case, what)
    _check_flags(seen, what)
    eval_case = dict(case, eval=True)
    eval_what = f"accumulated_step(model in eval mode, ..., x with N={n}, micro_batch={micro})"
    _check_modes(
        observe(probes.probe_accumulated_step, accumulated_step, eval_case, eval_what), eval_what
    )
    if seen["loss_fn_changed"]:
        raise CheckError(
            _(
                "{what} changed the loss function it was given ({names}): the caller keeps "
                "using it afterwards. Leave loss_fn as it is (a mean loss) and scale each "
                "piece's loss by len(x_chunk) / len(x)."
            ).format(what=what, names=", ".join(seen["loss_fn_changed"]))
        )
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
    # Pieces of other sizes (torch.tensor_split's even ones, x.chunk(k)) give the same step
    # here, but not with a layer that looks at the whole piece (BatchNorm: the text's caveat).
    n, micro = 10, 4
    x, y = _classification(n, 4, 3, g, device)
    sizes_case = dict(case, x=x, y=y, micro_batch=micro)
    sizes_what = f"accumulated_step(..., x with N={n}, micro_batch={micro})"
    rows = observe(probes.probe_accumulated_step, accumulated_step, sizes_case, sizes_what)["rows"]
    pieces = [len(piece) for piece in x.split(micro)]
    if rows != pieces:
        raise CheckError(
            _(
                "{what} ran the model on pieces of {rows} rows; the text's pieces are "
                "x.split(micro_batch): {pieces}, consecutive, all of micro_batch rows but the "
                "last. Other pieces give the same step only while no layer looks at the piece "
                "as a whole (BatchNorm does)."
            ).format(what=sizes_what, rows=rows, pieces=pieces)
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


# ----------------------------------------------------------------------------- autocast_step


# The low-precision dtype each device type's autocast must use (the exercise text says so);
# any other device type (Apple's mps) may use either.
_LOW = {"cpu": (torch.bfloat16,), "cuda": (torch.float16,)}
_EITHER = (torch.float16, torch.bfloat16)


def _reference_autocast(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None) -> dict:
    if resume is not None:
        model.load_state_dict(resume["model"])
        optimizer.load_state_dict(resume["optimizer"])
        scaler.load_state_dict(resume["scaler"])
    dtype = torch.float16 if x.device.type == "cuda" else torch.bfloat16
    optimizer.zero_grad()
    with torch.autocast(device_type=x.device.type, dtype=dtype):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)
    scaler.update()
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scaler": scaler.state_dict(),
    }
    return {"loss": loss.item(), "grad_norm": grad_norm.item(), "checkpoint": checkpoint}


def _true_norm(model, x, y) -> float:
    """The float32 gradient norm of the cross-entropy on (x, y), leaving .grad alone."""
    loss = nn.functional.cross_entropy(model(x), y)
    grads = torch.autograd.grad(loss, [p for p in model.parameters() if p.requires_grad])
    return float(torch.stack([gr.norm() for gr in grads]).norm())


def _resume_point(spec, g, device, lr) -> tuple[dict, dict]:
    """A checkpoint to resume from (other weights, SGD momentum buffers, a scale of 2**5 that
    grows every step), and the spec of the model it holds."""
    resumed = {**spec, "params": probes.random_params(probes.build_model(spec).cpu(), g)}
    reference = probes.build_model(resumed)
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
    return checkpoint, resumed


def _amp_devices() -> list[str]:
    """Where the contract runs the step: the CPU (bfloat16), and CUDA (float16) where the
    grader has it."""
    return ["cpu"] + (["cuda"] if get_device().type == "cuda" else [])


def _draw_autocast(d: Draw) -> Inputs:
    """A model with stale gradients, SGD over it, a GradScaler that grows every step, a batch
    and a max_norm half the true gradient norm (clipping acts). The edges family resumes from
    a checkpoint (other weights, momentum buffers, a scale of 2**5), or starts from a scale
    of 2**120, at which the scaled gradients overflow (the step must be skipped)."""
    device = d.draw(st.sampled_from(_amp_devices()))
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 2**16)))
    n = d.size(1, 16)
    spec = _mlp([8, d.size(4, 32), 4], g, device=device)
    x, y = _classification(n, 8, 4, g, device)
    run = "plain" if d.family != "edges" else d.draw(st.sampled_from(["resume", "overflow"]))
    settings, momentum, resume, weights = (
        {"init_scale": 2.0**10, "growth_interval": 1},
        0.0,
        None,
        spec,
    )
    if run == "overflow":
        x = 1e4 * x  # large enough for bfloat16, which has float32's range
        settings = {"init_scale": 2.0**120, "growth_interval": 1}
    elif run == "resume":
        settings, momentum = {"init_scale": 2.0**10, "growth_interval": 1000}, 0.9
        checkpoint, weights = _resume_point(spec, g, device, 0.1)
        resume = Build(probes.build_resume, {"checkpoint": checkpoint}, "a checkpoint to resume")
    max_norm = float(f"{0.5 * _true_norm(probes.build_model(weights), x, y):.3g}")
    model = {"model": spec, "grads": _stale_grads(spec, g)}
    scaler = {"device": device, "settings": settings}
    scale = "2**120" if run == "overflow" else "2**10"
    args = (
        Build(
            probes.build_step_model,
            model,
            f"an MLP on {device} (its .grad left from an earlier step)",
        ),
        Build(
            probes.build_sgd,
            {"lr": 0.1, "momentum": momentum},
            f"SGD(momentum={momentum})",
            of=(0,),
        ),
        Build(probes.build_scaler, scaler, f"GradScaler({device!r}, init_scale={scale})"),
        Build(probes.build_loss, {"loss": "cross_entropy"}, "CrossEntropyLoss()"),
        x,
        y,
        max_norm,
        resume,
    )
    return Inputs(args)


def _compare_autocast(got, expected: dict, what: str, inputs: Inputs) -> None:
    """The returned dict: the loss, the norm before clipping, the checkpoint after the step."""
    if not isinstance(got, dict):
        raise CheckError(
            _(
                "{what} returned {returned}; return a dict {{'loss': float, "
                "'grad_norm': float, 'checkpoint': {{'model': ..., 'optimizer': ..., "
                "'scaler': ...}}}}."
            ).format(what=what, returned=describe(got))
        )
    missing = [k for k in expected if k not in got]
    if missing:
        raise CheckError(
            _("{what} returned a dict with the keys {keys}; it is missing {missing}.").format(
                what=what, keys=sorted(map(str, got)), missing=missing
            )
        )
    loss = _as_float(got["loss"], f"the 'loss' {what} returned")
    norm = _as_float(got["grad_norm"], f"the 'grad_norm' {what} returned")
    if abs(loss - expected["loss"]) > 1e-3 * max(1.0, abs(expected["loss"])):
        raise CheckError(
            _(
                "{what} returned the loss {got_loss:.5g}; the step gives {ref_loss:.5g}. Return "
                "the unscaled loss, loss.item() (not scaler.scale(loss)); when resume is given, "
                "the loss of the model loaded from it."
            ).format(what=what, got_loss=loss, ref_loss=expected["loss"])
        )
    ref_norm = expected["grad_norm"]
    if math.isfinite(ref_norm) and abs(norm - ref_norm) > 1e-3 * ref_norm:
        ratio = norm / ref_norm
        hint = ""
        if ratio > 100:
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
            ).format(what=what, got_norm=norm, ref_norm=ref_norm, hint=hint)
        )
    keys = sorted(map(str, got["checkpoint"])) if isinstance(got["checkpoint"], dict) else []
    if keys != sorted(expected["checkpoint"]):
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
            ).format(
                what=what, keys=keys, _CHECKPOINT_KEYS=sorted(expected["checkpoint"]), hint=hint
            )
        )
    saved = wire.roundtrip(expected["checkpoint"])  # as the answer's crossed (on a GPU too)
    compare_values(got["checkpoint"], saved, f"{what}['checkpoint']", inputs)


def _autocast_hint(family: str, inputs: Inputs) -> str:
    hint = _(
        "The order: load the three states when resume is given, optimizer.zero_grad(), the "
        "forward pass and the loss inside torch.autocast, scaler.scale(loss).backward(), "
        "scaler.unscale_(optimizer), clip_grad_norm_(model.parameters(), max_norm), "
        "scaler.step(optimizer), scaler.update(); keep the weights float32."
    )
    if inputs.args[7] is not None:
        hint += _(
            " Here the step resumes: model.load_state_dict, optimizer.load_state_dict (its "
            "momentum buffers change the step) and scaler.load_state_dict (the scale goes on "
            "from 2**5)."
        )
    elif inputs.args[2].spec["settings"]["init_scale"] > 2.0**100:
        hint += _(
            " Here the scaled gradients overflow: scaler.step(optimizer) skips such a step "
            "(optimizer.step() does not) and scaler.update() halves the scale."
        )
    return hint


AUTOCAST_STEP = Contract(
    "autocast_step",
    _reference_autocast,
    _draw_autocast,
    families=("values", "edges"),
    # one step: the weights, .grad and the optimizer's state; resume too, as loading it does
    # (optimizer.load_state_dict keeps the checkpoint's momentum buffers, which step() updates)
    mutates=(0, 1, 7),
    compare=_compare_autocast,
    arg_names=("model", "optimizer", "scaler", "loss_fn", "x", "y", "max_norm", "resume"),
    hint=_autocast_hint,
    tolerance={torch.float32: (1e-3, 1e-5)},  # low-precision forward passes may round apart
    examples=4,
)


def _check_autocast_used(autocast_step, device: torch.device, g: torch.Generator) -> None:
    """What the contract cannot see in the result: the Linear layers computed in the device
    type's low-precision dtype, and the checkpoint saves and loads with weights_only=True."""
    low = _LOW.get(device.type, _EITHER)
    named = " or ".join(str(d) for d in low)
    spec = _mlp([8, 32, 32, 4], g, device=device)
    x, y = _classification(16, 8, 4, g, device)
    settings = {"init_scale": 2.0**10, "growth_interval": 1}
    if device.type not in _LOW:  # GradScaler supports CPU and CUDA
        settings = {"enabled": False}
    case = _autocast_case(spec, g, x, y, device, settings, 1.0, eval=True)
    what = f"autocast_step on {device.type} (a model in eval mode)"
    seen = observe(probes.probe_autocast_step, autocast_step, case, what)
    _check_flags(seen, what)
    _check_modes(seen, what)
    dtypes = seen["linear_dtypes"]
    if not dtypes or any(dt not in low for dt in dtypes):
        raise CheckError(
            _(
                "{what}: the Linear layers computed in {value}, expected {named}. Run "
                "the forward pass and the loss inside "
                "torch.autocast(device_type=x.device.type, dtype=...) with {named} for "
                "device type {type!r} (bfloat16 for 'cpu', float16 for 'cuda')."
            ).format(
                what=what, value=sorted({str(d) for d in dtypes}), named=named, type=device.type
            )
        )
    if seen["checkpoint_error"]:
        raise CheckError(
            _(
                "the 'checkpoint' {what} returned does not save and load with "
                "torch.save and torch.load(weights_only=True): {checkpoint_error}. "
                "Store the three state_dict()s (model.state_dict(), "
                "optimizer.state_dict(), scaler.state_dict()), not the objects."
            ).format(what=what, checkpoint_error=seen["checkpoint_error"])
        )


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


@uses(AUTOCAST_STEP)
def check_autocast_step(autocast_step) -> None:
    """The contract (a plain step, one resumed from a checkpoint, one whose scaled gradients
    overflow: the returned loss, norm and checkpoint, the weights, gradients and optimizer
    state afterwards, on the CPU in bfloat16 and on CUDA in float16 where the grader has it),
    then what it cannot see: autocast used with the device type's dtype, the checkpoint
    loadable with weights_only=True, the device type and dtype derived from x."""
    g = torch.Generator().manual_seed(66)
    _check_autocast_used(autocast_step, torch.device("cpu"), g)
    _check_device_type_from_x(autocast_step, g)
    device = get_device()
    if device.type != "cpu":
        _check_autocast_used(autocast_step, device, g)
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


def _reference_set_seed(seed: int) -> torch.Generator:
    """What set_seed returns (the grader's own global generators are left alone)."""
    return torch.Generator().manual_seed(seed)


def _draw_seed(d: Draw) -> Inputs:
    """A seed below or above 2**32 (NumPy's limit); the edges family favours its boundaries."""
    if d.family == "edges":
        return Inputs((d.draw(st.sampled_from([0, 1, 2**32 - 1, 2**32, 2**62])),))
    return Inputs((d.draw(st.integers(0, 2**40)),))


def _compare_generator(got, expected: torch.Generator, what: str, inputs: Inputs) -> None:
    """A torch.Generator (only its type crosses: its numbers are checked by hand below)."""
    if got != wire.roundtrip(expected):
        raise CheckError(
            _(
                "{what} returned {got}; return a new torch.Generator seeded with seed (g = "
                "torch.Generator(); g.manual_seed(seed)), meant for DataLoader(..., "
                "generator=...)."
            ).format(what=what, got=describe(got))
        )


def _seed_hint(family: str, inputs: Inputs) -> str:
    return _(
        "NumPy only takes seeds below 2**32: pass seed % 2**32 to np.random.seed (Python's "
        "random and torch take the seed as is)."
    )


SET_SEED = Contract(
    "set_seed",
    _reference_set_seed,
    _draw_seed,
    families=("values", "edges"),
    compare=_compare_generator,
    arg_names=("seed",),
    hint=_seed_hint,
    global_random_ok=True,  # seeding them is the exercise (the reference returns a generator)
)


def _seeded_draws(set_seed, seed: int, salt: int, device: torch.device) -> dict[str, list[float]]:
    """The next numbers of every generator after set_seed(seed) (each first seeded with salt)."""
    what = f"set_seed({seed})"
    case = {"seed": seed, "salt": salt, "device": device}
    seen = observe(probes.probe_set_seed, set_seed, case, what)
    if not seen["generator"]:  # the contract's case; an answer that returns one only sometimes
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
    if str(seed) not in seen.get("cuda_seeds", []):
        raise CheckError(
            _(
                "{what} did not seed CUDA's generators with {seed} (torch.cuda.manual_seed_all "
                "was called with {got}): on a GPU the model's dropout and every random tensor "
                "made there would differ from run to run. torch.manual_seed(seed) seeds the "
                "CPU and all CUDA devices."
            ).format(what=what, seed=seed, got=seen.get("cuda_seeds", []))
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
    python = random.Random(seed)  # Python's random takes the whole seed, above 2**32 too
    expected = [python.random() for _draw in range(3)]
    if seen["draws"].get("Python's random") != expected:
        raise CheckError(
            _(
                "after {what}, Python's random gave {got}; random.seed({seed}) gives "
                "{expected}. Give random.seed the seed itself: only NumPy needs "
                "seed % 2**32."
            ).format(
                what=what, got=seen["draws"].get("Python's random"), seed=seed, expected=expected
            )
        )
    return seen["draws"]


@uses(SET_SEED)
def check_set_seed(set_seed) -> None:
    """The contract (a torch.Generator for every seed, above 2**32 too), then what it cannot
    see from the grader: same seed, same numbers from every generator; a different seed
    changes each; DataLoader workers too."""
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
    family favours a batch of one); no .grad yet (the engine compares the model's .grad with
    the reference's afterwards, and the text lets an answer clear what its own loop made: stale
    gradients that must not count are the hand-written probe's)."""
    kinds = ["mlp", "float64 mlp", "with_unused", "flat_mlp", "embedded"]
    if d.family != "values":  # the draws favour the first kinds: each family starts elsewhere
        kinds = kinds[3:] + kinds[:3] if d.family == "edges" else kinds[2:] + kinds[:2]
    kind = d.draw(st.sampled_from(kinds))
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
    elif kind == "embedded":  # x holds integer token ids: the norms take the weights' dtype
        spec = {
            "kind": "embedded",
            "dtype": torch.float32,
            "device": torch.device("cpu"),
            "params": probes.random_params(probes.Embedded(), g),
        }
        x, y = torch.randint(0, 10, (n, 3), generator=g), torch.randint(0, 3, (n,), generator=g)
        loss, label = "cross_entropy", "token ids (N, 3, int64) into an nn.Embedding"
    else:
        spec = {
            "kind": "flat_mlp",
            "dtype": torch.float32,
            "device": torch.device("cpu"),
            "params": probes.random_params(probes.FlatMLP(), g),
        }
        x, y = torch.randn(n, 1, 4, 4, generator=g), torch.randint(0, 3, (n,), generator=g)
        loss, label = "cross_entropy", "images (N, 1, 4, 4) into nn.Flatten, in eval mode"
    model = {"model": spec, "eval": kind == "flat_mlp"}
    if d.family == "edges" and kind != "flat_mlp" and d.draw(st.booleans()):
        # a caller's model in training mode with its last layer frozen in eval mode: an
        # answer that switches modes and restores only the model's own flag changes it
        model["eval_last"] = True
        label += ", in train mode with its last submodule in eval mode"
    return Inputs(
        (
            Build(probes.build_step_model, model, label),
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
            stale = [
                torch.zeros_like(p) if p.grad is None else p.grad
                for p in model.parameters()
                if p.requires_grad
            ]
            per_example = _per_example_grads(model, loss_fn, x, y)
            hint = _per_sample_hint(got, model, loss_fn, x, y, per_example, stale)
        raise CheckError(_("{err}{hint}").format(err=err, hint=hint)) from None


PER_SAMPLE_GRAD_NORMS = Contract(
    "per_sample_grad_norms",
    _reference_per_sample,
    _draw_per_sample,
    # device: the text asks for the norms on x's device (a result made on the CPU shows)
    families=("values", "edges", "strides", "device"),
    mutates=(0,),  # compared afterwards: a loop that zeroes .grad must leave it as it came (None)
    compare=_compare_per_sample,
    arg_names=("model", "loss_fn", "x", "y"),
)


@uses(PER_SAMPLE_GRAD_NORMS)
def check_per_sample_grad_norms(per_sample_grad_norms) -> None:
    """The contract (against a loop of one backward pass per example, x and y untouched),
    then a model whose .grad holds stale gradients: its weights and train/eval mode left as
    they were, and the stale gradients not counted."""
    g = torch.Generator().manual_seed(67)
    device = get_device()
    spec = _mlp([6, 16, 4], g, device=device)
    x, y = _classification(10, 6, 4, g, device)
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
    if seen["requires_grad"]:
        raise CheckError(
            _(
                "{what} returned norms that require grad: they hold a graph back to the "
                "parameters, and with it every example's activations, as long as the caller "
                "keeps them. Hand torch.func detached parameters ({{n: p.detach() ...}}), as "
                "the lesson does (or take the norms of what torch.autograd.grad returns)."
            ).format(what=what)
        )
    if seen["device"] != str(x.device):
        raise CheckError(
            _(
                "{what} returned its norms on {got}, but x is on {device}: a tensor made with "
                "torch.zeros(...) or torch.tensor(...) lands on the CPU unless you pass "
                "device=x.device (or torch.stack the norms themselves)."
            ).format(what=what, got=seen["device"], device=x.device)
        )
    expected = _reference_per_sample(probes.build_model(spec), nn.CrossEntropyLoss(), x, y).cpu()
    got = seen["result"]
    if not (
        isinstance(got, torch.Tensor)
        and got.shape == expected.shape
        and torch.allclose(got, expected.to(got.dtype), rtol=1e-4, atol=1e-6)
    ):
        raise CheckError(
            _(
                "{what}, with gradients of an earlier backward pass already in .grad, gave "
                "other norms than the same model without them: the caller's .grad must not "
                "count. Zero it before each example's backward(), or use torch.func, which "
                "never reads it."
            ).format(what=what)
        )
