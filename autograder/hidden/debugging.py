"""Hidden checks for 06_debugging."""

from __future__ import annotations

import itertools
import math

import torch
from torch import nn

from autograder.boundary import AnswerRaised, observe
from autograder.probes import debugging as probes
from tutorial_lib.checks import CheckError, assert_close, check_type
from tutorial_lib.device import get_device

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
        raise CheckError(f"{what} is a tensor; return a Python float with .item() (or float(...)).")
    check_type(value, (float, int), what)
    return float(value)


# ----------------------------------------------------------------------------- overfit_one_batch


def _reference_overfit(model, x, y, loss_fn, num_steps, lr) -> list[float]:
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(num_steps):
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

    for spec, x, y, loss, steps, lr, label in cases:
        reference = probes.build_model(spec)
        expected = _reference_overfit(reference, x, y, probes.LOSSES[loss](), steps, lr)
        what = f"overfit_one_batch(..., num_steps={steps}, lr={lr:g}) on a {label} batch"
        case = {"model": spec, "x": x, "y": y, "loss": loss, "steps": steps, "lr": lr}
        seen = observe(probes.probe_overfit_one_batch, overfit_one_batch, case, what)
        losses = seen["losses"]
        check_type(losses, list, what)
        if len(losses) != steps:
            raise CheckError(
                f"{what} returned {len(losses)} losses, expected one per step ({steps})."
            )
        for i, value in enumerate(losses):
            if isinstance(value, torch.Tensor):
                raise CheckError(
                    f"entry {i} of {what} is a tensor. Store loss.item(): a stored loss tensor keeps "
                    "its whole autograd graph (every saved activation of that step) alive, so memory "
                    "grows with every step."
                )
            check_type(value, float, f"entry {i} of {what}")
        if steps == 0:
            continue
        try:
            assert_close(
                torch.tensor(losses, dtype=torch.float64),
                torch.tensor(expected, dtype=torch.float64),
                rtol=1e-4,
                atol=1e-6,
                what=f"the losses from {what}",
            )
        except CheckError as err:
            raise CheckError(
                f"{err} Build one Adam optimizer before the loop; every step: zero_grad, forward, "
                "loss, record loss.item(), backward, step. Entry 0 is the loss before any update."
            ) from None
        if not _params_close(seen["params"], _params(reference)):
            raise CheckError(
                f"{what}: the model's weights after training differ from a reference run. "
                "Train the model you were given, in place."
            )


# ----------------------------------------------------------------------------- clipped_step


def _grad_step(model, x, y, loss_fn, lr, momentum, max_norm) -> float | None:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)
    optimizer.zero_grad()
    loss_fn(model(x), y).backward()
    total = None
    if max_norm is not None:
        total = float(nn.utils.clip_grad_norm_(model.parameters(), max_norm))
    optimizer.step()
    return total


def check_clipped_step(clipped_step) -> None:
    """Updated weights and the returned norm against clip-then-step; clipping on and off."""
    device = get_device()
    g = torch.Generator().manual_seed(61)
    loss_fn = nn.CrossEntropyLoss()
    for sizes, n, max_norm, lr, momentum in [
        ([4, 8, 3], 16, 0.1, 0.5, 0.0),
        ([5, 3], 1, 0.05, 1.0, 0.9),
        ([3, 16, 16, 2], 32, 1e3, 0.1, 0.0),  # max_norm far above the norm: nothing to clip
    ]:
        spec = _mlp(sizes, g, device=device)
        x, y = _classification(n, sizes[0], sizes[-1], g, device)
        clipped_ref, plain_ref = probes.build_model(spec), probes.build_model(spec)
        total = _grad_step(clipped_ref, x, y, loss_fn, lr, momentum, max_norm)
        _grad_step(plain_ref, x, y, loss_fn, lr, momentum, None)
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
        what = f"clipped_step(..., max_norm={max_norm:g})"
        seen = observe(probes.probe_clipped_step, clipped_step, case, what)
        got = _as_float(seen["result"], f"the value {what} returned")
        if not _params_close(seen["params"], _params(clipped_ref)):
            if total > max_norm and _params_close(seen["params"], _params(plain_ref)):
                raise CheckError(
                    f"{what}: the weights moved by the full, unclipped gradient. Clip between "
                    "loss.backward() and optimizer.step(); clipping after the step changes nothing "
                    "that was used."
                )
            raise CheckError(
                f"{what}: the weights after the step differ from zero_grad -> backward -> "
                "clip_grad_norm_(model.parameters(), max_norm) -> step. Did you zero the old "
                "gradients first, and clip by norm (not by value)?"
            )
        if total > max_norm and abs(got - max_norm) <= 1e-4 * max_norm:
            raise CheckError(
                f"{what} returned {got:.6g}, which is max_norm: that is the norm after clipping. "
                f"Return the norm before clipping ({total:.6g}): clip_grad_norm_ returns it."
            )
        if abs(got - total) > 1e-4 * max(1.0, total):
            raise CheckError(
                f"{what} returned {got:.6g}; the total gradient norm before clipping is "
                f"{total:.6g}. Return the value clip_grad_norm_ gives back (one norm over all "
                "parameters together)."
            )


# ----------------------------------------------------------------------------- grad_norms


def check_grad_norms(grad_norms) -> None:
    """Names, order and values against per-parameter norms; None gradients left out."""
    device = get_device()
    g = torch.Generator().manual_seed(62)
    specs = [
        ("a sigmoid MLP", _mlp([4, 8, 8, 2], g, act="sigmoid", device=device)),
        ("a float64 MLP", _mlp([3, 5, 1], g, dtype=_wide_float(device), device=device)),
        ("a model with a frozen layer and an unused parameter", _with_unused(g, device)),
    ]
    for label, spec in specs:
        model = probes.build_model(spec)
        dtype = next(model.parameters()).dtype
        first = next(m for m in model.modules() if isinstance(m, nn.Linear))
        x = torch.randn(7, first.in_features, generator=g, dtype=dtype).to(device)
        model(x).pow(2).mean().backward()
        expected = {
            n: float(p.grad.double().norm())
            for n, p in model.named_parameters()
            if p.grad is not None
        }
        what = f"grad_norms(model) for {label}"
        try:
            seen = observe(probes.probe_grad_norms, grad_norms, {"model": spec, "x": x}, what)
        except AnswerRaised as err:
            if err.type_name in ("AttributeError", "TypeError") and "NoneType" in err.message:
                raise CheckError(
                    f"{err}. Parameters that got no gradient (frozen ones, unused ones) have "
                    "p.grad None: skip them."
                ) from None
            raise
        got = seen["result"]
        check_type(got, dict, what)
        missing = [n for n in expected if n not in got]
        extra = [n for n in got if n not in expected]
        if extra:
            raise CheckError(
                f"{what} has entries {extra} for parameters whose .grad is None; leave those out "
                "(a frozen or unused parameter has no gradient, which is not the same as zero)."
            )
        if missing:
            raise CheckError(
                f"{what} is missing {missing}; use the names from model.named_parameters()."
            )
        if list(got) != list(expected):
            raise CheckError(
                f"{what} lists {list(got)}; keep the order of model.named_parameters()."
            )
        for name, value in got.items():
            value = _as_float(value, f"the entry {name!r} of {what}")
            if abs(value - expected[name]) > 1e-5 * max(1e-6, expected[name]) + 1e-12:
                raise CheckError(
                    f"the entry {name!r} of {what} is {value:.6g}, expected {expected[name]:.6g}: the "
                    "L2 norm of p.grad over all its elements (p.grad.norm()), not of the weights "
                    "and not a mean."
                )
        if seen["changed"]:
            raise CheckError(
                f"{what} changed the gradient of {seen['changed'][0]!r}; only read the gradients."
            )


# ----------------------------------------------------------------------------- diagnose_gradients


def _reference_diagnosis(norms: dict, vanish_ratio: float, explode_norm: float) -> str:
    values = list(norms.values())
    if any(not math.isfinite(v) for v in values) or max(values) > explode_norm:
        return "exploding"
    if values[0] <= vanish_ratio * max(values):
        return "vanishing"
    return "healthy"


def check_diagnose_gradients(diagnose_gradients) -> None:
    """Hand-made norm profiles, custom thresholds, NaN and inf, then random profiles."""
    nan, inf = float("nan"), float("inf")
    cases = [
        ({"0.weight": 1e-7, "0.bias": 1e-7, "2.weight": 1e-2, "2.bias": 2e-3}, {}),
        ({"0.weight": 0.3, "2.weight": 0.5, "4.weight": 0.8}, {}),
        ({"0.weight": 5e3, "2.weight": 2.0}, {}),
        ({"0.weight": nan, "2.weight": 1.0}, {}),
        ({"0.weight": 1.0, "2.weight": inf}, {}),
        ({"0.weight": 0.0, "1.weight": 0.0}, {}),  # nothing flows at all
        ({"0.weight": 2e-5, "2.weight": 3e-5, "4.weight": 1e-5}, {}),  # small but even: healthy
        ({"0.weight": 0.5, "4.weight": 1e3 - 1}, {}),  # first / largest just below 1e-3
        ({"only": 0.7}, {}),
        ({"0.weight": 0.05, "2.weight": 1.0}, {"vanish_ratio": 0.1}),
        ({"0.weight": 0.5, "2.weight": 60.0}, {"explode_norm": 50.0}),
        ({"a": 1e-4, "b": 1e-2}, {"vanish_ratio": 1e-3, "explode_norm": 1e5}),
    ]
    g = torch.Generator().manual_seed(63)
    for _ in range(20):
        size = int(torch.randint(1, 8, (1,), generator=g))
        values = (10 ** (torch.rand(size, generator=g) * 10 - 6)).tolist()
        cases.append(({f"{i}.weight": v for i, v in enumerate(values)}, {}))
    for norms, kwargs in cases:
        vanish_ratio = kwargs.get("vanish_ratio", 1e-3)
        explode_norm = kwargs.get("explode_norm", 1e3)
        expected = _reference_diagnosis(norms, vanish_ratio, explode_norm)
        shown = ", ".join(f"{k}: {v:.3g}" for k, v in norms.items())
        extra = "".join(f", {k}={v:g}" for k, v in kwargs.items())
        what = f"diagnose_gradients({{{shown}}}{extra})"
        case = {"norms": norms, "kwargs": kwargs}
        try:
            got = observe(probes.probe_diagnose_gradients, diagnose_gradients, case, what)
        except AnswerRaised as err:
            if err.type_name == "ZeroDivisionError":
                raise CheckError(
                    f"{what} raised ZeroDivisionError: when every norm is 0, a ratio divides by "
                    "zero. Compare first <= vanish_ratio * largest instead of dividing."
                ) from None
            raise
        check_type(got, str, what)
        if got != expected:
            raise CheckError(
                f"{what} returned {got!r}, expected {expected!r}. Check in order: any NaN/inf or a "
                "norm above explode_norm -> 'exploding'; the first (input-side) norm at most "
                "vanish_ratio times the largest -> 'vanishing'; else 'healthy'. Use the arguments, "
                "not fixed numbers."
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
    ("nested", "nested Sequentials", "0.1"),
    ("ordinary", "an ordinary MLP", None),  # everything finite
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
    """Models where NaN/inf appears inside; the first module to produce one, and no hooks left."""
    device = get_device()
    for name, label, expected in _NONFINITE_CASES:
        what = f"first_nonfinite_module(model, x) for {label}"
        case = {"model": name, "device": device, "what": what}
        seen = observe(probes.probe_first_nonfinite_module, first_nonfinite_module, case, what)
        got = seen["result"]
        if got is not None:
            check_type(got, str, what)
        if seen["hooks"] is not None:
            raise CheckError(seen["hooks"])
        if got == expected:
            continue
        order = _execution_order(*probes.nonfinite_model(case))
        hint = ""
        if expected is None:
            hint = " Every output in this model is finite, so return None."
        elif got is None:
            hint = (
                " A module inside produced NaN or inf even if the final output is finite (or you "
                "only looked for NaN: torch.isfinite also catches inf; or a tuple output hid it). "
                "Hook every submodule and test each tensor it outputs with torch.isfinite."
            )
        elif expected.startswith(got + "."):
            hint = " That is the container; name the innermost module (the first hook to fire)."
        elif got in order and order.index(got) > order.index(expected):
            hint = (
                f" {got!r} runs after {expected!r} in the forward pass and only inherited the "
                "NaN/inf. Return the module whose hook fires first with a non-finite output (the "
                "order the forward pass runs modules, not the order of named_modules())."
            )
        raise CheckError(f"{what} returned {got!r}, expected {expected!r}.{hint}")


# ----------------------------------------------------------------------------- accumulated_step


def _accumulate(model, x, y, loss_fn, lr, micro_batch, weighting: str) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    optimizer.zero_grad()
    chunks = list(zip(x.split(micro_batch), y.split(micro_batch), strict=True))
    for xc, yc in chunks:
        weight = {"none": 1.0, "count": 1.0 / len(chunks)}[weighting]
        (loss_fn(model(xc), yc) * weight).backward()
    optimizer.step()


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
    ]
    for n, micro, kind in cases:
        if kind == "classification":
            spec = _mlp([4, 6, 3], g, device=device)
            x, y = _classification(n, 4, 3, g, device)
            loss = "cross_entropy"
        else:
            spec = _mlp([3, 5, 2], g, act="tanh", device=device)
            x = torch.randn(n, 3, generator=g).to(device)
            y = torch.randn(n, 2, generator=g).to(device)
            loss = "mse"
        loss_fn = probes.LOSSES[loss]()
        big = probes.build_model(spec)
        optimizer = torch.optim.SGD(big.parameters(), lr=lr)
        full_loss = loss_fn(big(x), y)
        full_loss.backward()
        optimizer.step()
        variants = {}
        for weighting in ("none", "count"):
            variants[weighting] = probes.build_model(spec)
            _accumulate(variants[weighting], x, y, loss_fn, lr, micro, weighting)

        case = {
            "model": spec,
            "grads": _junk_grads(spec, g),
            "x": x,
            "y": y,
            "loss": loss,
            "lr": lr,
            "micro_batch": micro,
        }
        what = f"accumulated_step(..., x with N={n}, micro_batch={micro})"
        seen = observe(probes.probe_accumulated_step, accumulated_step, case, what)
        got = _as_float(seen["result"], f"the value {what} returned")
        params = seen["params"]
        if _params_close(params, _params(big), rtol=1e-4, atol=1e-6):
            if abs(got - full_loss.item()) > 1e-4 * max(1.0, abs(full_loss.item())):
                raise CheckError(
                    f"{what} returned {got:.6g}; the mean loss over the whole batch is "
                    f"{full_loss.item():.6g}. Add up the scaled micro-batch losses (as floats)."
                )
            continue
        if _params_close(params, _params(variants["none"]), rtol=1e-4, atol=1e-6):
            hint = (
                " Your update matches adding up the micro-batch *mean* losses unscaled: the summed "
                "gradient is about N / micro_batch times too big. Multiply each micro-batch loss "
                "by len(x_chunk) / len(x) before backward()."
            )
        elif _params_close(params, _params(variants["count"]), rtol=1e-4, atol=1e-6):
            hint = (
                " Your update matches dividing every loss by the number of micro-batches; that is "
                "only right when all micro-batches are the same size. Here the last one is "
                "smaller: weight each by len(x_chunk) / len(x)."
            )
        else:
            hint = (
                " Zero the old gradients once before the loop, call backward() for every "
                "micro-batch, and optimizer.step() once after the loop."
            )
        raise CheckError(f"{what}: the weights differ from one step on the whole batch.{hint}")


# ----------------------------------------------------------------------------- autocast_step


def _check_autocast_on(autocast_step, device: torch.device, g: torch.Generator) -> None:
    low = torch.float16 if device.type == "cuda" else torch.bfloat16
    for use_scaler in (False, True):
        spec = _mlp([8, 32, 32, 4], g, device=device)
        x, y = _classification(16, 8, 4, g, device)
        loss_fn = nn.CrossEntropyLoss()
        lr = 0.1
        reference = probes.build_model(spec)
        before = _params(reference)
        ref_opt = torch.optim.SGD(reference.parameters(), lr=lr)
        ref_loss = loss_fn(reference(x), y)
        ref_loss.backward()
        ref_opt.step()

        case = {
            "model": spec,
            "grads": _junk_grads(spec, g),
            "x": x,
            "y": y,
            "loss": "cross_entropy",
            "lr": lr,
            "device": device,
            "scaler": {"init_scale": 2.0**10, "growth_interval": 1} if use_scaler else None,
        }
        what = f"autocast_step on {device.type}" + (" with a GradScaler" if use_scaler else "")
        seen_step = observe(probes.probe_autocast_step, autocast_step, case, what)
        got = _as_float(seen_step["result"], f"the value {what} returned")
        seen = seen_step["linear_dtypes"]
        if not seen or any(dt != low for dt in seen):
            raise CheckError(
                f"{what}: the Linear layers produced {sorted({str(d) for d in seen})}, expected "
                f"{low}. Run the forward pass and the loss inside torch.autocast(device_type="
                f"x.device.type, dtype={low}) (on {device.type}: {low})."
            )
        wrong = [n for n, dt in seen_step["param_dtypes"].items() if dt != torch.float32]
        if wrong:
            raise CheckError(
                f"{what} changed the dtype of {wrong}. Keep the weights in float32; autocast "
                "casts inside the operations, you never call model.to(bfloat16) or .half()."
            )
        if abs(got - ref_loss.item()) > 3e-2 * max(1.0, abs(ref_loss.item())):
            raise CheckError(
                f"{what} returned the loss {got:.5g}; a float32 forward pass gives "
                f"{ref_loss.item():.5g}. Return the unscaled loss, loss.item()."
            )
        params = seen_step["params"]
        if len(params) != len(before) or any(
            p.shape != b.shape for p, b in zip(params, before, strict=False)
        ):
            raise CheckError(
                f"{what} changed the model's parameters themselves (their number or shapes); "
                "only update their values with one optimizer step."
            )
        # bfloat16 keeps about 3 significant digits, so compare the whole update vector.
        step = torch.cat(
            [(p.to(b.device, b.dtype) - b).flatten() for p, b in zip(params, before, strict=True)]
        )
        ref_step = torch.cat(
            [
                (r.detach() - b).flatten()
                for r, b in zip(reference.parameters(), before, strict=True)
            ]
        )
        rel_err = float((step - ref_step).norm() / ref_step.norm())
        if rel_err > 0.25:
            ratio = float(step.norm() / ref_step.norm())
            hint = " Did you zero the old gradients first?"
            if use_scaler and ratio > 100:
                hint = (
                    " The step is about the scale factor too large: call scaler.step(optimizer) "
                    "(it unscales the gradients first), not optimizer.step()."
                )
            elif ratio < 1e-3:
                hint = " The weights did not move: call optimizer.step() (or scaler.step)."
            raise CheckError(
                f"{what}: the weight update is {ratio:.3g} times as long as a float32 step and "
                f"differs from it by {rel_err:.0%} (allowed: 25%).{hint}"
            )
        if use_scaler and seen_step["scale"] != 2.0**11:
            raise CheckError(
                f"{what}: the scaler's scale is {seen_step['scale']:g} after a step without "
                "overflow; with growth_interval=1 it should have grown to 2048. Call "
                "scaler.update() after scaler.step(optimizer)."
            )


def check_autocast_step(autocast_step) -> None:
    """The CPU bfloat16 path always; the CUDA float16 + GradScaler path when there is CUDA."""
    g = torch.Generator().manual_seed(66)
    _check_autocast_on(autocast_step, torch.device("cpu"), g)
    device = get_device()
    if device.type == "cuda":
        _check_autocast_on(autocast_step, device, g)
    else:
        print(
            "hidden checks: CUDA float16 + GradScaler path SKIPPED (no CUDA device here: "
            f"get_device() is {device}); the CPU bfloat16 path was checked."
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
                f"{what} raised ValueError: {err.message}. NumPy only takes seeds below 2**32: "
                "pass seed % 2**32 to np.random.seed (Python's random and torch take the seed "
                "as is)."
            ) from None
        raise
    if not seen["generator"]:
        check_type(seen["returned"], torch.Generator, f"the value {what} returned")
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
                raise CheckError(f"the hidden check could not draw numbers after {what}.")
        for source in first:
            if first[source] != second[source]:
                raise CheckError(
                    f"after {what} twice, {source} gave different numbers: {first[source][:2]} vs "
                    f"{second[source][:2]}. Seed it too: {_HOW[source]}. Seeding only torch leaves "
                    "shuffles and augmentations written with random or NumPy unrepeatable."
                )
            if first[source] == third[source]:
                raise CheckError(
                    f"set_seed({seed}) and set_seed({seed + 1}) give the same numbers from {source}: "
                    f"use the seed you were given ({_HOW[source]})."
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
            "two DataLoader runs with num_workers=2 and generator=set_seed(3) gave different "
            "batches: return a torch.Generator seeded with the seed, so the shuffle order and the "
            "workers' seeds repeat."
        )
    if torch.equal(runs[0], runs[2]):
        raise CheckError(
            "DataLoader runs with set_seed(3) and set_seed(4) were identical: "
            "seed the returned generator with the seed you were given."
        )
