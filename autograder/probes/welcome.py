"""Probes for 00_welcome (see autograder/probes/__init__.py)."""

from __future__ import annotations

import warnings

import torch


def _ramp(t: torch.Tensor) -> torch.Tensor:
    """0, 1, 2, ... in t's shape, dtype and device."""
    return torch.arange(t.numel(), dtype=t.dtype, device=t.device).reshape(t.shape)


# The scalar functions value_and_grad is tried on. The grader names one in the case; their
# derivatives, the expected answers, are in autograder/hidden/welcome.py.
FUNCTIONS = {
    "sum of squares": lambda t: (t**2).sum(),
    "sum of sin": lambda t: torch.sin(t).sum(),
    "mean of cubes": lambda t: (t**3).mean(),
    "weighted sum": lambda t: (t * _ramp(t)).sum(),
}


def _caller_tensor(base: torch.Tensor, kind: str) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The tensor the caller hands over, and the leaf it comes from (None when none asks for
    gradients). ``kind``: "plain" (no gradients), "leaf" (requires_grad=True) or "nonleaf"
    (the result of an operation on a leaf that requires gradients)."""
    base = base.detach().clone()
    if kind == "plain":
        return base, None
    leaf = base.requires_grad_(True)
    return (leaf if kind == "leaf" else leaf * 1), leaf


def probe_halve_until_small(halve_until_small, case: dict) -> dict:
    """The output, whether it requires gradients, d(out.sum())/d(the caller's leaf), and the
    caller's x afterwards (it must not have changed)."""
    x, leaf = _caller_tensor(case["x"], case.get("kind", "leaf"))
    out = halve_until_small(x, case["limit"])
    is_tensor = isinstance(out, torch.Tensor)
    seen = {
        "out": out.detach().clone() if is_tensor else out,
        "requires_grad": is_tensor and out.requires_grad,
        "x_after": x.detach().clone(),
    }
    if leaf is not None and seen["requires_grad"]:
        (seen["grad"],) = torch.autograd.grad(out.sum(), leaf, allow_unused=True)
    return seen


def probe_value_and_grad(value_and_grad, case: dict) -> dict:
    """The returned (value, grad) and what became of the caller's x (and of its leaf)."""
    kind = case.get("kind", "plain")
    x, leaf = _caller_tensor(case["x"], kind)
    if kind == "leaf" and case.get("old_grad") is not None:
        x.grad = case["old_grad"].detach().clone()  # a gradient the caller already had
    with warnings.catch_warnings():  # reading .grad of a non-leaf warns; the answer may too
        warnings.simplefilter("ignore")
        result = value_and_grad(FUNCTIONS[case["function"]], x)
        seen = {
            "result": result,
            "x_requires_grad": x.requires_grad,
            "x_grad": x.grad if x.is_leaf else None,
            "leaf_grad": leaf.grad if (leaf is not None and leaf is not x) else None,
            "x_after": x.detach().clone(),
        }
    return seen


def build_function(spec: dict):
    """The scalar function of :data:`FUNCTIONS` named ``spec["name"]``: value_and_grad's
    first argument, which crosses to the kernel as a name (a function is not data)."""
    return FUNCTIONS[spec["name"]]
