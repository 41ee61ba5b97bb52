"""Probes for 00_welcome (see autograder/probes/__init__.py)."""

from __future__ import annotations

import torch

# The scalar functions value_and_grad is tried on. The grader names one in the case; their
# derivatives, the expected answers, are in autograder/hidden/welcome.py.
FUNCTIONS = {
    "sum of squares": lambda t: (t**2).sum(),
    "sum of sin": lambda t: torch.sin(t).sum(),
    "mean of cubes": lambda t: (t**3).mean(),
}


def probe_halve_until_small(halve_until_small, case: dict) -> dict:
    """The output, whether it is still connected to x, and d(out.sum())/dx."""
    x = case["x"].detach().requires_grad_(True)
    out = halve_until_small(x, case["limit"])
    seen = {"out": out, "connected": isinstance(out, torch.Tensor) and out.grad_fn is not None}
    if seen["connected"]:
        (seen["grad"],) = torch.autograd.grad(out.sum(), x)
    return seen


def probe_value_and_grad(value_and_grad, case: dict) -> dict:
    """The returned (value, grad) and whether the caller's x was left alone."""
    x = case["x"]
    result = value_and_grad(FUNCTIONS[case["function"]], x)
    return {"result": result, "x_touched": x.requires_grad or x.grad is not None}
