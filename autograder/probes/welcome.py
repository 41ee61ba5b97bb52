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


def _machine_claims(available: bool) -> dict[tuple[object, str], object]:
    """What torch says about this machine's accelerators, replaced so that it claims every
    one (``available``) or none: the (module, attribute) pairs and their stand-ins."""
    accelerator = torch.device("cuda") if available else None
    claims = {
        (torch.cuda, "is_available"): lambda: available,
        (torch.cuda, "device_count"): lambda: int(available),
        (torch.backends.mps, "is_available"): lambda: available,
        (torch.backends.mps, "is_built"): lambda: available,
    }
    if hasattr(torch, "accelerator"):  # torch 2.6 and later
        claims[(torch.accelerator, "is_available")] = lambda *a, **k: available
        claims[(torch.accelerator, "current_accelerator")] = lambda *a, **k: accelerator
        claims[(torch.accelerator, "device_count")] = lambda *a, **k: int(available)
    return claims


def probe_pick_device_elsewhere(pick_device, case: dict) -> dict:
    """pick_device on every pair of flags while torch claims that this machine has every
    accelerator (``case["available"]``) or none: an answer that decides from its arguments
    gives the same devices either way. The claims are put back afterwards."""
    claims = _machine_claims(bool(case["available"]))
    saved = {key: getattr(*key) for key in claims}
    # The setup cell's `device` describes the machine too: on one with every accelerator it
    # would be cuda. Where the answer's globals hold it, it follows the claims meanwhile.
    namespace = getattr(pick_device, "__globals__", None)
    if not (isinstance(namespace, dict) and isinstance(namespace.get("device"), torch.device)):
        namespace = None
    old_device = namespace["device"] if namespace is not None else None
    results = []
    try:
        for (module, attr), stand_in in claims.items():
            setattr(module, attr, stand_in)
        if namespace is not None:
            namespace["device"] = torch.device("cuda" if case["available"] else "cpu")
        for cuda in (False, True):
            for mps in (False, True):
                results.append([cuda, mps, pick_device(cuda, mps)])
    finally:
        for (module, attr), original in saved.items():
            setattr(module, attr, original)
        if namespace is not None:
            namespace["device"] = old_device
    return {"results": results}


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


def _differentiated(t) -> bool:
    """Whether autograd tracks ``t`` in any of its modes: reverse (requires_grad, as in
    backward() or torch.func.grad), forward (a dual tensor of torch.autograd.forward_ad) or
    a torch.func transform (jacfwd, jvp). A plain tensor, or a batch of them under vmap
    alone, is not: f evaluated on it gives values, not derivatives."""
    if not isinstance(t, torch.Tensor):
        return False
    if t.requires_grad:
        return True
    functorch = getattr(torch._C, "_functorch", None)
    if functorch is not None and functorch.is_gradtrackingtensor(t):
        return True
    return torch.autograd.forward_ad.unpack_dual(t).tangent is not None


def probe_value_and_grad(value_and_grad, case: dict) -> dict:
    """The returned (value, grad) and what became of the caller's x (and of its leaf)."""
    kind = case.get("kind", "plain")
    x, leaf = _caller_tensor(case["x"], kind)
    if kind == "leaf" and case.get("old_grad") is not None:
        x.grad = case["old_grad"].detach().clone()  # a gradient the caller already had
    with warnings.catch_warnings():  # reading .grad of a non-leaf warns; the answer may too
        warnings.simplefilter("ignore")
        function, differentiable = FUNCTIONS[case["function"]], []

        def f(t):  # notes whether f ever gets a tensor that autograd tracks
            differentiable.append(_differentiated(t))
            return function(t)

        result = value_and_grad(f, x)
        seen = {
            "result": result,
            "autograd": any(differentiable),  # False: the gradient came from elsewhere
            "x_requires_grad": x.requires_grad,
            "x_grad": x.grad if x.is_leaf else None,
            "leaf_grad": leaf.grad if (leaf is not None and leaf is not x) else None,
            "x_after": x.detach().clone(),
        }
    if isinstance(result, (tuple, list)) and len(result) == 2:
        grad = result[1]
        seen["grad_requires_grad"] = isinstance(grad, torch.Tensor) and grad.requires_grad
    return seen


def build_function(spec: dict):
    """The scalar function of :data:`FUNCTIONS` named ``spec["name"]``: value_and_grad's
    first argument, which crosses to the kernel as a name (a function is not data)."""
    return FUNCTIONS[spec["name"]]
