"""Probes for 02_autograd (see autograder/probes/__init__.py)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
import torch.utils._pytree
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.boundary import usual_modes
from autograder.probes import seed_cpu
from autograder.probes.tensors import CountCalls, build

# ---------------------------------------------------------------------------------------------
# mse_grads and fit_linear


def probe_mse_grads(mse_grads, case: dict) -> dict:
    """``mse_grads(x, y, w, b)`` run under torch.no_grad(), as the exercise asks.

    ``recorded``: whether autograd saved anything for a backward pass while it ran (it
    switched recording back on); ``inputs_unchanged``: whether x, y, w and b kept their values.
    """
    x, y, w, b = (build(case[k]) for k in ("x", "y", "w", "b"))
    before = [t.clone() for t in (x, y, w, b)]
    recorded = []

    def pack(t):
        recorded.append(1)
        return t

    with (
        torch.no_grad(),
        torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t),
        DtypesMade() as made,
    ):
        result = mse_grads(x, y, w, b)
    unchanged = all(torch.equal(a, b_) for a, b_ in zip((x, y, w, b), before, strict=True))
    return {
        "result": result,
        "recorded": bool(recorded),
        "inputs_unchanged": unchanged,
        "dtypes": sorted(made.dtypes),  # of the tensors of more than one element it made
    }


class DtypesMade(TorchDispatchMode):
    """While active, the dtypes of the tensors of more than one element that operations
    return (a 0-d scale factor left out): a working copy in another dtype shows."""

    def __init__(self):
        super().__init__()
        self.dtypes: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in torch.utils._pytree.tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.numel() > 1 and t.dtype.is_floating_point:
                self.dtypes.add(str(t.dtype))
        return out


def probe_fit_linear(fit_linear, case: dict) -> dict:
    """What ``fit_linear(x, y, lr, num_steps)`` returned, and whether it left x and y alone."""
    x, y = case["x"], case["y"]
    x_before, y_before = x.clone(), y.clone()
    optimizers: list[str] = []  # torch.optim optimizers made while it ran (the text: by hand)
    original = torch.optim.Optimizer.__init__

    def noting(self, *args, **kwargs):
        optimizers.append(type(self).__name__)
        original(self, *args, **kwargs)

    unpacked: list[int] = []  # saved tensors a backward pass read (the text: backward())

    def unpack(t):
        unpacked.append(1)
        return t

    torch.optim.Optimizer.__init__ = noting
    try:
        with torch.random.fork_rng(devices=[]):  # a state of the probe's own, restored afterwards
            seed_cpu(2718 + case["num_steps"])
            rng_before = torch.random.get_rng_state()
            counted = True
            try:
                with (
                    torch.enable_grad(),  # as a caller's training code has it
                    torch.autograd.graph.saved_tensors_hooks(lambda t: t, unpack),
                ):
                    result = fit_linear(x, y, case["lr"], case["num_steps"])
            except RuntimeError as err:
                # torch.func's transforms (autograd all the same) refuse saved-tensor hooks:
                # call again without counting
                if "saved tensor hooks" not in str(err):
                    raise
                counted = False
                x.copy_(x_before)
                y.copy_(y_before)
                with torch.enable_grad():
                    result = fit_linear(x, y, case["lr"], case["num_steps"])
            rng_untouched = torch.equal(torch.random.get_rng_state(), rng_before)
    finally:
        torch.optim.Optimizer.__init__ = original
    seen = {
        "result": result,
        "inputs_unchanged": torch.equal(x, x_before) and torch.equal(y, y_before),
        "global_rng_untouched": rng_untouched,
        "optimizers": sorted(set(optimizers)),
    }
    if counted:  # saved tensors a backward pass read; absent where they could not be counted
        seen["differentiations"] = len(unpacked)
    return seen


# ---------------------------------------------------------------------------------------------
# accumulated_grad


def mse(w, xb, yb):
    return ((xb @ w - yb) ** 2).mean()


def logistic(w, xb, yb):
    return F.softplus(-yb * torch.tanh(xb @ w)).mean()


LOSSES = {"mse": mse, "logistic": logistic}


def build_loss(spec: dict):
    """A contract's loss_fn argument: one of LOSSES by name."""
    return LOSSES[spec["loss"]]


def build_leaf(spec: dict) -> torch.Tensor:
    """A contract's w: a seeded leaf of ``shape`` and ``dtype`` that requires grad; with
    ``stale``, its .grad already holds 5.0 everywhere (left from an earlier step)."""
    g = torch.Generator().manual_seed(spec["seed"])
    dtype = getattr(torch, spec["dtype"])
    w = torch.randn(spec["shape"], generator=g, dtype=torch.float64).to(dtype)
    w.requires_grad_(True)
    if spec["stale"]:
        w.grad = torch.full_like(w, 5.0)
    return w


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
    x, y = build(case["x"]), case["y"]
    x_before, y_before = x.clone(), y.clone()
    got = accumulated_grad(loss_fn, w, x, y, case["micro_size"])
    after = None if w.grad is None else w.grad.detach().clone()
    return {
        "result": got,
        "sizes": list(loss_fn.sizes),
        "inputs_unchanged": torch.equal(x, x_before) and torch.equal(y, y_before),
        "grad_after": after,  # w.grad once the call returned (None where it was cleared)
    }


# ---------------------------------------------------------------------------------------------
# HuberFunction


def probe_huber_class(HuberFunction, case: dict) -> dict:
    """Whether the answer is a class that subclasses torch.autograd.Function, and how its
    forward and backward treat the caller's x, the ctx and the process's settings.

    ``saves_x``: forward saved x itself (not a copy) with ctx.save_for_backward and kept no
    tensor of x's memory as a ctx attribute; ``delta_on_ctx``: ctx.delta holds delta;
    ``grad_exact``: in float64, backward's gradient is the derivative to float64's precision
    (``grad_error``: what apply or backward raised there). The contract judges the process's
    settings, backward included.
    """
    is_class = isinstance(HuberFunction, type)
    is_function = is_class and issubclass(HuberFunction, torch.autograd.Function)
    saves_x = True  # whether forward kept x with ctx.save_for_backward (the text asks for it)
    x_unchanged = True  # whether forward and backward left the caller's x as it was
    delta_on_ctx = True
    grad_exact = True
    grad_error = None
    if is_function:
        x = torch.tensor([-2.0, -0.5, 0.25, 1.5], dtype=torch.float64, requires_grad=True)
        before = x.detach().clone()
        usual_modes()  # as a caller has them (boundary.run_probe puts back what they were)
        try:
            out = HuberFunction.apply(x, 1.0)
            ctx = out.grad_fn
            saved = ctx.saved_tensors
            saves_x = any(
                isinstance(t, torch.Tensor)
                and t.shape == x.shape
                and t.data_ptr() == x.data_ptr()
                and torch.equal(t.detach().double(), before)
                for t in saved
            ) and not any(
                isinstance(t, torch.Tensor) and t.numel() and t.data_ptr() == x.data_ptr()
                for t in vars(ctx).values()
            )
            delta_on_ctx = getattr(ctx, "delta", None) == 1.0
            out.sum().backward()
        except Exception:  # the contract has reported any failure of apply or backward
            pass
        x_unchanged = torch.equal(x.detach(), before)
        try:  # values float32 cannot hold: a float32 working copy in backward shows
            delta = 0.75
            x2 = torch.tensor([-2.3, -0.7, -0.1, 0.3, 0.6, 1.9], dtype=torch.float64)
            x2.requires_grad_(True)
            up = torch.tensor([0.3, -1.7, 2.9, 0.11, -0.37, 1.3], dtype=torch.float64)
            (HuberFunction.apply(x2, delta) * up).sum().backward()
            exact = up * x2.detach().clamp(-delta, delta)
            grad_exact = x2.grad is None or bool(
                torch.allclose(x2.grad.double(), exact, rtol=1e-12, atol=1e-13)
            )
        except Exception as err:  # the contract's grad family reports it too
            grad_error = f"{type(err).__name__}: {_first_line(err)}"
    return {
        "is_class": is_class,
        "is_function": is_function,
        "saves_x": saves_x,
        "x_unchanged": x_unchanged,
        "delta_on_ctx": delta_on_ctx,
        "grad_exact": grad_exact,
        "grad_error": grad_error,
    }


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
    "2, a constant that ignores x (f'' = 0)": lambda t: torch.full_like(t, 2.0),
}


STALE_GRAD = 0.5  # what a caller's leaf x holds in .grad before the call, with ``stale``


def _caller_x(case: dict) -> torch.Tensor:
    """The caller's x: a plain tensor, or (``leaf``) a leaf that requires grad itself; with
    ``stale`` too, its .grad already holds STALE_GRAD everywhere (left from an earlier step)."""
    x = build(case["x"])
    if not case.get("leaf"):
        return x
    x = x.detach().clone().requires_grad_(True)
    if case.get("stale"):
        x.grad = torch.full_like(x, STALE_GRAD)
    return x


def _touched(x: torch.Tensor, case: dict) -> bool:
    """Whether the caller's requires_grad or .grad changed: a .grad filled, added to, zeroed
    or cleared (``x.grad = None`` after a backward() into it shows only where one was there)."""
    if x.requires_grad != bool(case.get("leaf")):
        return True
    if not (case.get("leaf") and case.get("stale")):
        return x.grad is not None
    return x.grad is None or not torch.equal(x.grad, torch.full_like(x, STALE_GRAD))


def probe_second_derivative(second_derivative, case: dict) -> dict:
    """The returned f'' and whether the caller's x was left alone (values, flags, .grad)."""
    x = _caller_x(case)
    before = x.detach().clone()
    result = second_derivative(ELEMENTWISE[case["function"]], x)
    touched = _touched(x, case) or not torch.equal(x.detach(), before)
    return {"result": result, "x_touched": touched}


def scalar_functions(a: torch.Tensor, c: torch.Tensor) -> dict:
    """The scalar functions hvp is tried on, built from a matrix ``a`` and a vector ``c``."""
    return {
        "x @ A @ x": lambda t: t @ a @ t,
        "logsumexp(x)": lambda t: torch.logsumexp(t, dim=0),
        "sum(x**4) + (c @ x)**2": lambda t: (t**4).sum() + (c @ t) ** 2,
        "c @ x (Hessian 0)": lambda t: c @ t,
        "c @ c, a constant that ignores x (Hessian 0)": lambda t: c @ c,
    }


def probe_hvp(hvp, case: dict) -> dict:
    """The returned Hessian-vector product and whether the caller's x and v were left alone."""
    f = scalar_functions(case["a"], case["c"])[case["function"]]
    x = _caller_x(case)
    v = case["v"]
    x_before, v_before = x.detach().clone(), v.clone()
    result = hvp(f, x, v)
    touched = _touched(x, case) or not torch.equal(x.detach(), x_before)
    return {"result": result, "x_touched": touched, "v_unchanged": torch.equal(v, v_before)}


def probe_under_no_grad(fn, case: dict) -> dict:
    """``fn(*case["args"])`` called inside a caller's ``torch.no_grad()`` block: whether it
    raised (an answer need not work there) and, where it returned, whether recording was
    still off afterwards (``torch.set_grad_enabled(True)`` before returning switches it on
    for the rest of the caller's block)."""
    args = [build(a) if isinstance(a, (torch.Tensor, dict)) else a for a in case["args"]]
    with torch.no_grad():
        try:
            fn(*args)
        except Exception:
            return {"raised": True, "grad_enabled_after": False}
        enabled = torch.is_grad_enabled()
    return {"raised": False, "grad_enabled_after": enabled}


def probe_hvp_calls(hvp, case: dict) -> dict:
    """How many torch calls hvp makes for f = x @ A @ x with x of each size in ``case["sizes"]``:
    two differentiations make as many for any size, a Hessian formed row by row one more per
    row."""
    counts = []
    for n in case["sizes"]:
        g = torch.Generator().manual_seed(n)
        a, x, v = (torch.randn(shape, generator=g, dtype=torch.float64) for shape in [(n, n), n, n])
        with CountCalls() as mode:
            hvp(lambda t, a=a: t @ a @ t, x, v)
        counts.append(mode.calls)
    return {"calls": counts}


# ---------------------------------------------------------------------------------------------
# Builders for the contracts (autograder/contracts.py): a function argument cannot cross as
# data, so the kernel builds it from a recipe. Constants are made in the input's dtype and on
# its device at each call, so the dtypes and device families meet a function that follows x.


def build_elementwise(spec: dict):
    """The elementwise function ``ELEMENTWISE[spec["name"]]`` for second_derivative."""
    return ELEMENTWISE[spec["name"]]


def _constants(spec: dict, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.tensor(spec["a"], dtype=t.dtype, device=t.device)
    c = torch.tensor(spec["c"], dtype=t.dtype, device=t.device)
    return a, c


def build_scalar_function(spec: dict):
    """A scalar function of a (D,) tensor for hvp: ``spec`` names it and holds the constants
    (``a`` a D x D list, not symmetric; ``c`` a list of D numbers)."""
    name = spec["name"]
    if name == "x @ A @ x":
        return lambda t: t @ _constants(spec, t)[0] @ t
    if name == "logsumexp(x)":
        return lambda t: torch.logsumexp(t, dim=0)
    if name == "sum(x**4) + (c @ x)**2":
        return lambda t: (t**4).sum() + (_constants(spec, t)[1] @ t) ** 2
    if name == "c @ x (Hessian 0)":
        return lambda t: _constants(spec, t)[1] @ t
    if name == "c @ c, a constant that ignores x (Hessian 0)":
        return lambda t: (lambda c: c @ c)(_constants(spec, t)[1])
    raise ValueError(f"no scalar function named {name!r}")


SCALAR_FUNCTIONS = (
    "x @ A @ x",
    "logsumexp(x)",
    "sum(x**4) + (c @ x)**2",
    "c @ x (Hessian 0)",
    "c @ c, a constant that ignores x (Hessian 0)",
)
