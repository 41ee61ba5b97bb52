"""Probes for 02_autograd (see autograder/probes/__init__.py)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.probes.tensors import build

# ---------------------------------------------------------------------------------------------
# mse_grads and fit_linear


def probe_mse_grads(mse_grads, case: dict):
    """``mse_grads(x, y, w, b)`` run under torch.no_grad(), as the exercise asks."""
    x, y, w, b = (build(case[k]) for k in ("x", "y", "w", "b"))
    with torch.no_grad():
        return mse_grads(x, y, w, b)


def probe_fit_linear(fit_linear, case: dict) -> dict:
    """What ``fit_linear(x, y, lr, num_steps)`` returned, and whether it left x and y alone."""
    x, y = case["x"], case["y"]
    x_before, y_before = x.clone(), y.clone()
    result = fit_linear(x, y, case["lr"], case["num_steps"])
    return {
        "result": result,
        "inputs_unchanged": torch.equal(x, x_before) and torch.equal(y, y_before),
    }


# ---------------------------------------------------------------------------------------------
# accumulated_grad


def mse(w, xb, yb):
    return ((xb @ w - yb) ** 2).mean()


def logistic(w, xb, yb):
    return F.softplus(-yb * torch.tanh(xb @ w)).mean()


LOSSES = {"mse": mse, "logistic": logistic}


class RecordingLoss:
    """Wraps a loss function and remembers the batch size of every call."""

    def __init__(self, fn):
        self.fn = fn
        self.sizes: list[int] = []

    def __call__(self, w, xb, yb):
        self.sizes.append(int(xb.shape[0]))
        return self.fn(w, xb, yb)


def probe_accumulated_grad(accumulated_grad, case: dict) -> dict:
    """The returned gradient and the micro-batch sizes loss_fn was called with.

    ``w`` requires grad; when the case has a ``stale`` tensor, ``w.grad`` holds it before the call.
    """
    w = case["w"].detach().clone().requires_grad_(True)
    if case.get("stale") is not None:
        w.grad = case["stale"].clone()
    loss_fn = RecordingLoss(LOSSES[case["loss"]])
    got = accumulated_grad(loss_fn, w, case["x"], case["y"], case["micro_size"])
    return {"result": got, "sizes": list(loss_fn.sizes)}


# ---------------------------------------------------------------------------------------------
# round_ste


def probe_round_ste(round_ste, case: dict) -> dict:
    """The output for a non-leaf x = z * 1.0, and the gradient that reaches z for upstream v.

    ``grad`` is None when the output is not a tensor of x's shape that requires grad; zeros
    when the output does not depend on z at all.
    """
    x0 = build(case["x"])
    z = x0.detach().clone().requires_grad_(True)
    x = z * 1.0  # a non-leaf input: the gradient must flow on to z
    out = round_ste(x)
    seen = {"out": out, "requires_grad": isinstance(out, torch.Tensor) and out.requires_grad}
    if seen["requires_grad"] and out.shape == x0.shape:
        (grad,) = torch.autograd.grad(out, z, grad_outputs=case["v"], allow_unused=True)
        seen["grad"] = torch.zeros_like(z) if grad is None else grad
    return seen


# ---------------------------------------------------------------------------------------------
# HuberFunction


def probe_huber_class(HuberFunction, case: dict) -> dict:
    """Whether the answer is a class that subclasses torch.autograd.Function."""
    is_class = isinstance(HuberFunction, type)
    return {
        "is_class": is_class,
        "is_function": is_class and issubclass(HuberFunction, torch.autograd.Function),
    }


def probe_huber(HuberFunction, case: dict) -> dict:
    """Forward at ``x``; at the float64 point ``x64``: the vector-Jacobian product with ``v64``
    (None if backward raised, with the error in ``backward_raised``) and what
    torch.autograd.gradcheck said (None when it passed)."""
    delta = case["delta"]
    out = HuberFunction.apply(case["x"], delta)
    seen: dict = {"out": out, "grad": None, "backward_raised": None}
    x64 = case["x64"].detach().clone().requires_grad_(True)
    try:
        out64 = HuberFunction.apply(x64, delta)
        (seen["grad"],) = torch.autograd.grad(out64, x64, grad_outputs=case["v64"])
    except Exception as err:  # the learner's backward may raise anything: report it
        seen["backward_raised"] = _first_line(err)
    seen["gradcheck"] = _gradcheck(lambda t: HuberFunction.apply(t, delta), case["x64"])
    return seen


def _gradcheck(fn, x: torch.Tensor) -> str | None:
    """None if fn's analytic gradient matches finite differences, else the first error line."""
    prepared = x.detach().to(torch.float64).requires_grad_(True)
    try:
        torch.autograd.gradcheck(fn, (prepared,), eps=1e-6, atol=1e-5, rtol=1e-3)
    except Exception as err:  # gradcheck raises GradcheckError or whatever fn raised
        return _first_line(err)
    return None


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0].rstrip(" ,.:;") if text else type(err).__name__


# ---------------------------------------------------------------------------------------------
# second_derivative and hvp


ELEMENTWISE = {
    "x**3": lambda t: t**3,
    "sin(x)": torch.sin,
    "exp(-x**2)": lambda t: torch.exp(-(t**2)),
    "3*x + 1 (f'' = 0)": lambda t: 3 * t + 1,
}


def probe_second_derivative(second_derivative, case: dict) -> dict:
    """The returned f'' and whether the caller's x was left alone."""
    x = case["x"]
    result = second_derivative(ELEMENTWISE[case["function"]], x)
    return {"result": result, "x_touched": x.requires_grad or x.grad is not None}


def scalar_functions(a: torch.Tensor, c: torch.Tensor) -> dict:
    """The scalar functions hvp is tried on, built from a matrix ``a`` and a vector ``c``."""
    return {
        "x @ A @ x": lambda t: t @ a @ t,
        "logsumexp(x)": lambda t: torch.logsumexp(t, dim=0),
        "sum(x**4) + (c @ x)**2": lambda t: (t**4).sum() + (c @ t) ** 2,
        "c @ x (Hessian 0)": lambda t: c @ t,
    }


def probe_hvp(hvp, case: dict) -> dict:
    """The returned Hessian-vector product and whether the caller's x was left alone."""
    f = scalar_functions(case["a"], case["c"])[case["function"]]
    x = case["x"]
    result = hvp(f, x, case["v"])
    return {"result": result, "x_touched": x.requires_grad or x.grad is not None}
