"""Hidden checks for 00_welcome."""

from __future__ import annotations

import torch

from autograder.boundary import call, observe
from autograder.probes import welcome as probes
from tutorial_lib.checks import CheckError, assert_close, check_type
from tutorial_lib.device import get_device


def check_pick_device(pick_device) -> None:
    """Every combination of available back-ends, preferring CUDA, then MPS, then CPU."""
    cases = {
        (False, False): torch.device("cpu"),
        (False, True): torch.device("mps"),
        (True, False): torch.device("cuda"),
        (True, True): torch.device("cuda"),
    }
    for (cuda, mps), expected in cases.items():
        what = f"pick_device({cuda}, {mps})"
        got = observe(call, pick_device, {"args": [cuda, mps]}, what)["result"]
        check_type(got, torch.device, what)
        if got != expected:
            raise CheckError(
                f"pick_device(cuda_available={cuda}, mps_available={mps}) returned {got}, "
                f"expected {expected}. Prefer CUDA, then MPS, then the CPU, and only pick a "
                "back-end that is available."
            )


def _reference_halvings(norm: float, limit: float) -> int:
    count = 0
    while norm > limit:
        norm /= 2
        count += 1
    return count


def check_halve_until_small(halve_until_small) -> None:
    """Values and gradients against a reference, including inputs already small enough."""
    device = get_device()
    g = torch.Generator().manual_seed(0)
    cases = [(torch.tensor([3.0, 4.0]), 5.0)]  # norm exactly at the limit: no halving
    cases += [(torch.tensor([0.1, 0.0]), 1.0)]  # already small
    for size in (1, 3, 7, 16):
        x = torch.randn(size, generator=g) * 10
        cases.append((x, float(torch.rand(1, generator=g)) + 0.1))
    for x_cpu, limit in cases:
        x = x_cpu.to(device)
        steps = _reference_halvings(float(x_cpu.norm()), limit)
        what = f"halve_until_small(x of shape {tuple(x.shape)}, limit={limit:.3g})"
        seen = observe(
            probes.probe_halve_until_small, halve_until_small, {"x": x, "limit": limit}, what
        )
        out = seen["out"]
        check_type(out, torch.Tensor, what)
        assert_close(out, x / 2**steps, what=what, exact_dtype=False)
        if not seen["connected"] and steps > 0:
            raise CheckError(
                f"{what} has no grad_fn: the result is cut off from x. Build it with tensor "
                "operations on x (x / 2), not from x.item(), x.tolist() or torch.tensor(...)."
            )
        if steps > 0:
            assert_close(seen["grad"], torch.full_like(x, 0.5**steps), what=f"gradient of {what}")


def check_value_and_grad(value_and_grad) -> None:
    """Several scalar functions at random points; the caller's tensor must stay untouched."""
    device = get_device()
    g = torch.Generator().manual_seed(1)
    derivatives = {
        "sum of squares": lambda t: 2 * t,
        "sum of sin": torch.cos,
        "mean of cubes": lambda t: 3 * t**2 / t.numel(),
    }
    for shape in [(1,), (4,), (2, 3)]:
        for name, df in derivatives.items():
            f = probes.FUNCTIONS[name]
            x = torch.randn(shape, generator=g).to(device)
            what = f"value_and_grad({name}, x of shape {shape})"
            seen = observe(
                probes.probe_value_and_grad, value_and_grad, {"function": name, "x": x}, what
            )
            result = seen["result"]
            check_type(result, tuple, what)
            if len(result) != 2:
                raise CheckError(f"{what} should return (value, grad), got {len(result)} items.")
            value, grad = result
            check_type(value, float, f"the value from {what}")
            expected = float(f(x))
            if abs(value - expected) > 1e-4 * max(1.0, abs(expected)):
                raise CheckError(f"the value from {what} is {value:.6g}, expected {expected:.6g}.")
            assert_close(grad, df(x), what=f"the gradient from {what}", rtol=1e-4, atol=1e-5)
            if seen["x_touched"]:
                raise CheckError(
                    f"{what} changed the caller's tensor (requires_grad or .grad). Work on a "
                    "copy: x.detach().clone().requires_grad_(True)."
                )
