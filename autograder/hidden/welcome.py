"""Hidden checks for 00_welcome."""

from __future__ import annotations

import torch

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
        got = pick_device(cuda, mps)
        check_type(got, torch.device, f"pick_device({cuda}, {mps})")
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
        x = x_cpu.to(device).requires_grad_(True)
        steps = _reference_halvings(float(x_cpu.norm()), limit)
        out = halve_until_small(x, limit)
        what = f"halve_until_small(x of shape {tuple(x.shape)}, limit={limit:.3g})"
        check_type(out, torch.Tensor, what)
        assert_close(out, x.detach() / 2**steps, what=what, exact_dtype=False)
        if out.grad_fn is None and steps > 0:
            raise CheckError(
                f"{what} has no grad_fn: the result is cut off from x. Build it with tensor "
                "operations on x (x / 2), not from x.item(), x.tolist() or torch.tensor(...)."
            )
        if steps > 0:
            (grad,) = torch.autograd.grad(out.sum(), x)
            assert_close(grad, torch.full_like(x, 0.5**steps), what=f"gradient of {what}")


def check_value_and_grad(value_and_grad) -> None:
    """Several scalar functions at random points; the caller's tensor must stay untouched."""
    device = get_device()
    g = torch.Generator().manual_seed(1)
    functions = {
        "sum of squares": (lambda t: (t**2).sum(), lambda t: 2 * t),
        "sum of sin": (lambda t: torch.sin(t).sum(), torch.cos),
        "mean of cubes": (lambda t: (t**3).mean(), lambda t: 3 * t**2 / t.numel()),
    }
    for shape in [(1,), (4,), (2, 3)]:
        for name, (f, df) in functions.items():
            x = torch.randn(shape, generator=g).to(device)
            result = value_and_grad(f, x)
            what = f"value_and_grad({name}, x of shape {shape})"
            check_type(result, tuple, what)
            if len(result) != 2:
                raise CheckError(f"{what} should return (value, grad), got {len(result)} items.")
            value, grad = result
            check_type(value, float, f"the value from {what}")
            expected = float(f(x))
            if abs(value - expected) > 1e-4 * max(1.0, abs(expected)):
                raise CheckError(f"the value from {what} is {value:.6g}, expected {expected:.6g}.")
            assert_close(grad, df(x), what=f"the gradient from {what}", rtol=1e-4, atol=1e-5)
            if x.requires_grad or x.grad is not None:
                raise CheckError(
                    f"{what} changed the caller's tensor (requires_grad or .grad). Work on a "
                    "copy: x.detach().clone().requires_grad_(True)."
                )
