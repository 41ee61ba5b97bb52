"""Hidden checks for 02_autograd."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from autograder.boundary import AnswerRaised, observe
from autograder.contracts import (
    FLOAT64_EXACT,
    TOLERANCE,
    Build,
    Contract,
    Draw,
    Inputs,
    compare_values,
    copies,
    uses,
)
from autograder.probes import autograd as probes
from tutorial_lib.checks import CheckError, assert_close, check_shape, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape: int, g: torch.Generator, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype).to(get_device())


def _precision() -> str:
    # A function, not a constant: the message is looked up in the language of the moment.
    return _(
        " If the dtype is right but the values are only close: a float32 working copy (.float(), "
        "torch.zeros(...) without dtype=) loses float64's precision; compute in the input's dtype."
    )


def _hint(got: object, ref: torch.Tensor) -> str:
    """What to try when ``got`` differs from the float reference ``ref``: dtype, then precision."""
    if isinstance(got, torch.Tensor) and got.dtype != ref.dtype:
        return _(
            " Keep the input's dtype ({dtype} in, {dtype} out): no "
            ".float() copy, and new tensors made with dtype=x.dtype or torch.zeros_like(...)."
        ).format(dtype=str(ref.dtype)[6:])
    return _precision() if ref.dtype == torch.float64 else ""


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = 1e-4) -> bool:
    a, b = a.detach().double().cpu(), b.detach().double().cpu()
    return a.shape == b.shape and bool(torch.allclose(a, b, rtol=tol, atol=tol))


def _tuple_of(result: object, count: int, what: str) -> tuple:
    check_type(result, tuple, what)
    if len(result) != count:
        raise CheckError(
            _("{what} should return {count} items, got {got}.").format(
                what=what, count=count, got=len(result)
            )
        )
    return result


def _observe(probe, fn, case: dict, what: str, hints: dict[str, str]):
    """What ``probe`` saw of the student's answer; turn a familiar autograd error into a hint."""
    try:
        return observe(probe, fn, case, what)
    except AnswerRaised as err:
        if err.type_name in ("RuntimeError", "TypeError"):
            text = err.message.strip().splitlines()[0] if err.message.strip() else ""
            for needle, hint in hints.items():
                if needle in text:
                    raise CheckError(err.with_hint(hint)) from None
        raise


_NO_GRAPH = "does not require grad and does not have a grad_fn"  # PyTorch's words: not translated


def _from(name: str, what: str) -> str:
    """``grad_w from mse_grads(...)``: one output of the call ``what`` describes."""
    return _("{name} from {what}").format(name=name, what=what)


# Exercise 1 ------------------------------------------------------------------------------


def _reference_mse_grads(x, y, w, b):
    """The closed form (the grader's copy): (2 / N) x.T @ r and (2 / N) r.sum(dim=0)."""
    n = x.shape[0]
    r = x @ w + b - y
    return (2.0 / n) * x.T @ r, (2.0 / n) * r.sum(dim=0)


def _draw_mse_grads(d: Draw) -> Inputs:
    """x (N, F), y (N, 1), w (F, 1), b (1,): one row, one feature, odd sizes."""
    n, f = d.size(1, 5), d.size(1, 4)
    return Inputs((d.tensor(n, f), d.tensor(n, 1), d.tensor(f, 1), d.tensor(1)))


def _mse_hint(family: str, inputs: Inputs) -> str:
    if family == "dtypes" and inputs.args[0].dtype == torch.float64:
        return _precision()
    return ""


MSE_GRADS = Contract(
    "mse_grads",
    _reference_mse_grads,
    _draw_mse_grads,
    families=("values", "edges", "strides", "dtypes", "device"),
    rules=(
        "torch.autograd.grad",
        "torch.autograd.backward",
        "torch.autograd.forward_ad.make_dual",
    ),
    rule_text=lambda: _(
        "Work the gradients out by hand from the residuals r = x @ w + b - y: grad_w = (2 / N) "
        "* x.T @ r, grad_b = (2 / N) * r.sum(dim=0). Autograd is what you check yourself "
        "against, not what you call."
    ),
    arg_names=("x", "y", "w", "b"),
    hint=_mse_hint,
    tolerance=FLOAT64_EXACT,
)


@uses(MSE_GRADS)
def check_mse_grads(mse_grads) -> None:
    """The contract, then one call under torch.no_grad(), as the text promises: it must not
    switch recording back on (torch.enable_grad() and autograd)."""
    g = _gen(10)
    x, y, w, b = _randn(5, 3, g=g), _randn(5, 1, g=g), _randn(3, 1, g=g), _randn(1, g=g)
    what = _("mse_grads(x of shape {shape}, {dtype})").format(shape=(5, 3), dtype="float32")
    hint = {_NO_GRAPH: _("Compute the gradients from the formulas, without backward().")}
    case = {"x": x, "y": y, "w": w, "b": b}
    seen = _observe(probes.probe_mse_grads, mse_grads, case, what, hint)
    others = [d for d in seen.get("dtypes", []) if d != "torch.float32"]
    if others:
        raise CheckError(
            _(
                "{what} computed in {dtypes}, not in the inputs' float32: the text asks you to "
                "compute in the dtype of the inputs. Leave x, y, w and b as they are (no "
                ".double() or .float() copies)."
            ).format(what=what, dtypes=", ".join(d[6:] for d in others))
        )
    if seen["recorded"]:
        raise CheckError(
            _(
                "{what} used autograd: it recorded a graph (torch.enable_grad() and backward() or "
                "torch.autograd.grad) although the exercise asks for the gradients by hand. Compute "
                "them from the formulas: grad_w = (2 / N) * x.T @ r, grad_b = (2 / N) * "
                "r.sum(dim=0)."
            ).format(what=what)
        )


# Exercise 2 ------------------------------------------------------------------------------


def _reference_fit(x, y, lr, num_steps, zero_grads=True):
    f = x.shape[1]
    w = torch.zeros(f, 1, dtype=x.dtype, device=x.device, requires_grad=True)
    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)
    losses = []
    with torch.enable_grad():
        for _step in range(num_steps):
            loss = ((x @ w + b - y) ** 2).mean()
            losses.append(loss.item())
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
                b -= lr * b.grad
            if zero_grads:
                w.grad.zero_()
                b.grad.zero_()
    return w.detach(), b.detach(), losses


def _draw_fit_linear(d: Draw) -> Inputs:
    """A noisy linear problem; lr small enough not to diverge; no steps, one step, several.
    Edges also draw a problem solved exactly by the first step (x a column of ones, lr 0.25):
    every later loss is 0.0, and the loop must still run, and report, every step."""
    if d.family == "edges" and d.draw(st.booleans()):
        n = d.size(1, 6)
        x = torch.ones(n, 1)
        return Inputs((x, torch.full((n, 1), 1.5), 0.25, d.size(2, 6)))
    n, f = d.size(1, 6), d.size(1, 3)
    x = d.tensor(n, f, low=-1.0, high=1.0)
    y = x @ d.tensor(f, 1) + 0.5 + 0.1 * d.tensor(n, 1, low=-1.0, high=1.0)
    lr = d.draw(st.sampled_from([0.05, 0.1, 0.02, 0.2]))
    return Inputs((x, y, lr, d.size(0, 6, empty_ok=True)))


def _compare_fit_linear(got, expected, what: str, inputs: Inputs) -> None:
    """Types and one loss per step, then the parameters and the losses (float64: its precision)."""
    x, _y, _lr, steps = inputs.args
    w, b, losses = _tuple_of(got, 3, what)
    check_type(losses, list, _("the losses from {what}").format(what=what))
    if len(losses) != steps:
        raise CheckError(
            _("{what} returned {count} losses, expected one per step ({steps}).").format(
                what=what, count=len(losses), steps=steps
            )
        )
    each_loss = _("each loss from {what} (store loss.item(): a tensor keeps its graph)").format(
        what=what
    )
    for loss in losses:
        check_type(loss, float, each_loss)
    ref_w, ref_b, ref_losses = expected
    for got_t, name, shape in ((w, "w", (x.shape[1], 1)), (b, "b", (1,))):
        check_type(got_t, torch.Tensor, _from(name, what))
        check_shape(got_t, shape, what=_from(name, what))
    rtol, atol = TOLERANCE[x.dtype] if x.dtype != torch.float64 else (1e-9, 1e-10)
    if losses:
        # float64: loss.item() is a float64 number; a float32 reading (loss.float().item()) is
        # off by about 1e-8, like a float32 working copy
        loss_tol = (rtol, atol) if x.dtype == torch.float64 else (max(rtol, 1e-6), max(atol, 1e-8))
        try:
            assert_close(
                torch.tensor(losses, dtype=torch.float64),
                torch.tensor(ref_losses, dtype=torch.float64),
                what=_("the losses from {what} (the loss before each update)").format(what=what),
                rtol=loss_tol[0],
                atol=loss_tol[1],
            )
        except CheckError as err:
            hint = _precision() if x.dtype == torch.float64 else ""
            raise CheckError(f"{err}{hint}") from None
    for got_t, ref, name in ((w, ref_w, "w"), (b, ref_b, "b")):
        try:
            assert_close(got_t.detach(), ref, what=_from(name, what), rtol=rtol, atol=atol)
        except CheckError as err:
            advice = _(" Create w and b with dtype=x.dtype and device=x.device.")
            raise CheckError(f"{err}{advice}{_hint(got_t, ref)}") from None


FIT_LINEAR = Contract(
    "fit_linear",
    _reference_fit,
    _draw_fit_linear,
    # device: the losses need values (.item()), so it runs on stand-ins that keep them
    families=("values", "edges", "strides", "dtypes", "device"),
    compare=_compare_fit_linear,
    arg_names=("x", "y", "lr", "num_steps"),
    tolerance=FLOAT64_EXACT,
)


@uses(FIT_LINEAR)
def check_fit_linear(fit_linear) -> None:
    """The contract (the device family cannot run it: loss.item() needs values), then the
    caller's random stream: the parameters start from zeros, nothing random is drawn."""
    g = _gen(20)
    x = _randn(8, 2, g=g)
    y = x @ _randn(2, 1, g=g) + 0.5
    what = _("fit_linear(x of shape {shape}, lr={lr}, num_steps={steps})").format(
        shape=(8, 2), lr=0.1, steps=3
    )
    case = {"x": x, "y": y, "lr": 0.1, "num_steps": 3}
    seen = observe(probes.probe_fit_linear, fit_linear, case, what)
    if seen.get("optimizers"):
        raise CheckError(
            _(
                "{what} used torch.optim ({names}): the exercise asks for gradient descent "
                "written by hand. Update w and b in place inside torch.no_grad() (w -= lr * "
                "w.grad) and zero both gradients yourself."
            ).format(what=what, names=", ".join(seen["optimizers"]))
        )
    if not seen.get("differentiations", 1):
        raise CheckError(
            _(
                "{what} never called backward(): it worked the gradients out by hand. The "
                "exercise is gradient descent with autograd: compute the loss, call "
                "loss.backward(), then update w and b from w.grad and b.grad inside "
                "torch.no_grad()."
            ).format(what=what)
        )
    if not seen["global_rng_untouched"]:
        raise CheckError(
            _(
                "{what} reseeded or drew from the global random generator (torch.manual_seed, "
                "torch.randn, ...). The parameters start from zeros, so nothing random is "
                "needed, and a function must not change the caller's random stream."
            ).format(what=what)
        )
    _check_grad_mode_kept(fit_linear, [x, y, 0.1, 3], what)


def _check_grad_mode_kept(fn, args: list, what: str) -> None:
    """Called inside a caller's torch.no_grad() block, the answer may raise, but where it
    returns, recording must still be off: torch.set_grad_enabled(True) at its end (rather than
    putting back what it found) would switch autograd on for the rest of the caller's block."""
    seen = observe(probes.probe_under_no_grad, fn, {"args": args}, what)
    if not seen["raised"] and seen["grad_enabled_after"]:
        raise CheckError(
            _(
                "{what}, called inside the caller's torch.no_grad() block, returned with "
                "autograd switched on (torch.set_grad_enabled(True) at the end): the rest of the "
                "caller's block would record graphs. Switch modes in a `with` block "
                "(torch.no_grad(), torch.enable_grad()), which puts back what it found."
            ).format(what=what)
        )


# Exercise 3 ------------------------------------------------------------------------------


def _reference_accumulated_grad(loss_fn, w, x, y, micro_size):
    w.grad = None
    n = x.shape[0]
    for xb, yb in zip(x.split(micro_size), y.split(micro_size), strict=True):
        (loss_fn(w, xb, yb) * (len(xb) / n)).backward()
    return w.grad


def _draw_accumulated_grad(d: Draw) -> Inputs:
    """A mean-squared or logistic loss; N rows split by any micro_size (longer than N, one,
    one that leaves a shorter last piece); float32 or float64; w's .grad stale or empty."""
    loss = d.draw(st.sampled_from(["mse", "logistic"]))
    n, f = d.size(1, 12), d.size(1, 4)
    micro = d.draw(st.integers(1, 13))
    if d.family == "memory":  # four or more pieces, wide enough for their graphs to count
        n, f, micro = 32, 64, d.draw(st.sampled_from([4, 8]))
    dtype = d.draw(st.sampled_from(["float32", "float64"]))
    x = d.tensor(n, f).to(getattr(torch, dtype))
    y = d.tensor(n, 1) if loss == "mse" else torch.sign(d.tensor(n)) + (d.tensor(n) == 0)
    spec = {
        "shape": [f, 1] if loss == "mse" else [f],
        "dtype": dtype,
        "seed": d.draw(st.integers(0, 99)),
        "stale": d.draw(st.booleans()),
    }
    label = _("w of shape {shape}, {dtype}").format(shape=tuple(spec["shape"]), dtype=dtype)
    if spec["stale"]:
        label += _(" (its .grad left from an earlier step)")
    w = Build(probes.build_leaf, spec, label)
    return Inputs((Build(probes.build_loss, {"loss": loss}, loss), w, x, y.to(x.dtype), micro))


def _compare_accumulated_grad(got, expected, what: str, inputs: Inputs) -> None:
    """The full-batch gradient; when it differs, which of the text's pitfalls it matches."""
    try:
        compare_values(got, expected, what, inputs)
    except CheckError as err:
        if isinstance(got, torch.Tensor) and got.shape == expected.shape:
            loss_fn, w, x, y, micro = copies(inputs.args)
            stale = None if w.grad is None else w.grad.clone()
            _diagnose_accumulation(got, expected, w, x, y, loss_fn, micro, stale, what)
        raise CheckError(f"{err}{_hint(got, expected)}") from None


ACCUMULATED_GRAD = Contract(
    "accumulated_grad",
    _reference_accumulated_grad,
    _draw_accumulated_grad,
    families=("values", "edges", "strides", "device", "memory"),
    may_change=(1,),  # w.grad: the text returns it, an answer may also leave it as it found it
    compare=_compare_accumulated_grad,
    arg_names=("loss_fn", "w", "x", "y", "micro_size"),
    tolerance=FLOAT64_EXACT,
)


@uses(ACCUMULATED_GRAD)
def check_accumulated_grad(accumulated_grad) -> None:
    """The contract, then the text's memory rule: loss_fn is called once per micro-batch of
    micro_size rows (a full-batch loss gives the same gradient and keeps every row's graph)."""
    g = _gen(30)
    for n, micro in ((8, 2), (10, 4), (7, 3), (6, 4)):
        x, y = _randn(n, 3, g=g), _randn(n, 1, g=g)
        w = _randn(3, 1, g=g)
        stale = torch.full_like(w, 5.0) if micro == 3 else None
        what = _("accumulated_grad(x of shape {shape}, micro_size={micro})").format(
            shape=(n, 3), micro=micro
        )
        if stale is not None:
            what += _(" (its .grad left from an earlier step)")
        case = {"x": x, "y": y, "w": w, "micro_size": micro, "loss": "mse", "stale": stale}
        seen = observe(probes.probe_accumulated_grad, accumulated_grad, case, what)
        after, got = seen.get("grad_after"), seen.get("result")
        if (
            stale is not None
            and after is not None
            and not (
                torch.equal(after.cpu(), stale.cpu())
                or (isinstance(got, torch.Tensor) and _close(after, got, 1e-6))
            )
        ):
            raise CheckError(
                _(
                    "{what} returned the right gradient but left w.grad holding something else "
                    "(the old .grad plus the new one, say). The caller reads w.grad: clear it "
                    "first (w.grad = None), accumulate into it and return it."
                ).format(what=what)
            )
        expected_sizes = [len(c) for c in torch.arange(n).split(micro)]
        if sorted(seen["sizes"]) != sorted(expected_sizes):
            hint = ""
            if len(seen["sizes"]) == min(micro, n) and len(expected_sizes) != len(seen["sizes"]):
                hint = _(
                    " x.chunk(micro_size) makes micro_size pieces; x.split(micro_size) makes "
                    "pieces of micro_size rows."
                )
            raise CheckError(
                _(
                    "{what} called loss_fn on batches of sizes {sizes}, expected "
                    "{expected}: split x and y with x.split(micro_size) and call loss_fn "
                    "once per micro-batch.{hint}"
                ).format(what=what, sizes=seen["sizes"], expected=expected_sizes, hint=hint)
            )


def _diagnose_accumulation(got, full, w, x, y, fn, micro, stale, what) -> None:
    xs, ys = x.split(micro), y.split(micro)
    k = len(xs)
    grads = [torch.autograd.grad(fn(w, xb, yb), w)[0] for xb, yb in zip(xs, ys, strict=True)]
    unscaled = sum(grads)
    if _close(full, got):
        return
    if k > 1 and _close(got, unscaled):
        raise CheckError(
            _(
                "{what} is the sum of the {k} micro-batch gradients, about {k} times too big. "
                "Each micro-batch loss is a mean over its own rows: scale it by its share of the "
                "batch, len(xb) / N, before backward()."
            ).format(what=what, k=k)
        )
    if k > 1 and _close(got, unscaled / k):
        raise CheckError(
            _(
                "{what}: dividing by the number of micro-batches ({k}) is only right when they "
                "all have the same size. Here the last one is shorter: scale each loss by "
                "len(xb) / N instead."
            ).format(what=what, k=k)
        )
    if k > 1 and _close(got, grads[-1] * len(xs[-1]) / x.shape[0]):
        raise CheckError(
            _(
                "{what} holds only the last micro-batch's share: .grad was cleared inside the "
                "loop. Clear it once, before the first micro-batch."
            ).format(what=what)
        )
    if stale is not None and _close(got, full + stale):
        raise CheckError(
            _(
                "{what} still contains the gradient that was in w.grad before the call. Set "
                "w.grad = None (or zero it) before accumulating."
            ).format(what=what)
        )


# Exercise 4 ------------------------------------------------------------------------------


def _reference_round_ste(x):
    return x + (x.round() - x).detach()


def _draw_round_ste(d: Draw) -> Inputs:
    """Any shape (0-d and empty included); plain values, or halves, where rounding ties;
    edges also draw float64 beside a tie and magnitudes beyond int64."""
    shape = [d.size(1, 4, empty_ok=True) for _axis in range(d.draw(st.integers(0, 2)))]
    if d.family in ("edges", "device") and d.draw(st.booleans()):
        # empty, in one or two axes (the engine draws 0 rarely); on meta, the path an empty
        # input takes is the one a tensor made without device= hides in
        shape = [0, *shape[1:]]
    if d.family == "edges" and d.draw(st.booleans()):
        # float64 just beside a tie (1.5 - 1e-9 rounds to 1): a float32 copy makes it the tie
        nudge = d.draw(st.sampled_from([1e-9, -1e-9]))
        return Inputs((d.integers(*shape, low=-7, high=8).double() * 0.5 + nudge,))
    if d.family == "edges" and d.draw(st.booleans()):
        # large magnitudes, whole numbers already: beyond int32 and int64, so a round trip
        # through .long() or .int() overflows where torch.round leaves them as they are
        big = torch.tensor([1.0e19, -2.0e20, 7.0e30, -4.0e25])
        return Inputs((big[d.integers(*shape, low=0, high=4)],))
    if d.draw(st.booleans()):  # ties: torch.round sends halves to the even neighbour
        return Inputs((d.integers(*shape, low=-7, high=8).float() * 0.5,))
    return Inputs((d.tensor(*shape, low=-4.0, high=4.0),))


ROUND_STE = Contract(
    "round_ste",
    _reference_round_ste,
    _draw_round_ste,
    arg_names=("x",),
)


@uses(ROUND_STE)
def check_round_ste(round_ste) -> None:
    """The contract: torch.round's values, the upstream gradient passed straight through;
    then a call inside the caller's torch.no_grad() (quantised inference) leaves it off."""
    x = torch.tensor([0.2, 1.7, -2.6], device=get_device())
    _check_grad_mode_kept(round_ste, [x], _("round_ste(x of shape {shape})").format(shape=(3,)))


# Exercise 5 ------------------------------------------------------------------------------


class _ReferenceHuber(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, delta):
        ctx.save_for_backward(x)
        ctx.delta = delta
        return torch.where(x.abs() <= delta, 0.5 * x**2, delta * (x.abs() - 0.5 * delta))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * x.clamp(-ctx.delta, ctx.delta), None


def _draw_huber(d: Draw) -> Inputs:
    """x of any shape; delta from 0.3 to 2.5. Edges put x on the kinks: exactly +-delta, 0."""
    delta = d.draw(st.sampled_from([1.0, 0.3, 0.5, 0.75, 1.5, 2.5]))
    shape = [d.size(1, 5, empty_ok=True) for _axis in range(d.draw(st.integers(0, 2)))]
    if d.family == "edges":  # multiples of delta / 2: on the kinks, inside and outside
        return Inputs((d.integers(*shape, low=-6, high=7).float() * (delta / 2), delta))
    return Inputs((d.tensor(*shape, low=-3 * delta, high=3 * delta), delta))


def _compare_huber(got, expected, what: str, inputs: Inputs) -> None:
    """The Huber values; when they differ, the two misreadings of delta the text warns of."""
    try:
        compare_values(got, expected, what, inputs)
    except CheckError as err:
        x, delta = inputs.args
        x = x.to(expected.dtype)
        at_one = F.huber_loss(x, torch.zeros_like(x), reduction="none", delta=1.0)
        half = torch.where(x.abs() <= delta, 0.5 * x**2, delta * (x.abs() - 0.5))
        for wrong, hint in (
            (at_one, _("as if delta were 1.0: use the delta argument")),
            (
                half,
                _("with delta * (|x| - 0.5) in the linear part; it is delta * (|x| - 0.5 * delta)"),
            ),
        ):
            if delta != 1.0 and isinstance(got, torch.Tensor) and _close(got, wrong, 1e-3):
                raise CheckError(
                    _("{what} computes the Huber function {hint}.").format(what=what, hint=hint)
                ) from None
        raise err from None


HUBER = Contract(
    "HuberFunction.apply",
    _ReferenceHuber,
    _draw_huber,
    method="apply",
    grad_args=(0,),
    compare=_compare_huber,
    arg_names=("x", "delta"),
    hint=lambda family, inputs: (
        _(
            "Did backward multiply by grad_output, use ctx.delta (not a fixed 1.0) and return "
            "one gradient per forward input (None for delta)?"
        )
        if family == "grad"
        else ""
    ),
)


@uses(HUBER)
def check_HuberFunction(HuberFunction) -> None:
    """A subclass of torch.autograd.Function (the contract has called its apply: values,
    kinks, dtypes, layouts, devices, and its backward against the exact derivative)."""
    kind = observe(probes.probe_huber_class, HuberFunction, None, "HuberFunction")
    if not kind["is_function"]:
        raise CheckError(
            _("HuberFunction should be a class that subclasses torch.autograd.Function.")
        )
    if not kind.get("x_unchanged", True):
        raise CheckError(
            _(
                "HuberFunction changed the caller's x (forward or backward wrote into it, e.g. "
                "x.clamp_() on the saved x): use out-of-place operations, x.clamp(-delta, delta)."
            )
        )
    if not kind.get("saves_x", True):
        raise CheckError(
            _(
                "HuberFunction.forward did not save x with ctx.save_for_backward(x), as the text "
                "asks: keep the tensors backward needs there, not as attributes such as ctx.x "
                "(saved tensors are checked for in-place changes and freed after backward())."
            )
            + _(
                " Save x itself, not a copy (x.clone() doubles the memory and hides in-place changes)."
            )
        )
    if not kind.get("delta_on_ctx", True):
        raise CheckError(
            _(
                "HuberFunction.forward did not keep delta as ctx.delta, as the text asks: "
                "save_for_backward is for tensors, a Python float goes on ctx as an attribute."
            )
        )
    if kind.get("grad_error"):
        raise CheckError(
            _(
                "HuberFunction raised on a float64 x with delta=0.75 (forward, then backward "
                "with a grad_output that is not all ones): {error}"
            ).format(error=kind["grad_error"])
        )
    if not kind.get("grad_exact", True):
        raise CheckError(
            _(
                "HuberFunction's backward is not exact in float64: its gradient is off by about "
                "1e-8, as it is when it computes in float32 (.float(), a float32 constant) and "
                "autograd casts the result back. Compute in the dtype of x and grad_output."
            )
        )


# Exercises 6 and 7 -----------------------------------------------------------------------


def _zero_hint() -> str:
    # A function, not a constant: the message is looked up in the language of the moment.
    return _(
        " When a derivative does not depend on x (f ignores x: f(x) has no graph; f is linear: "
        "f' has none), torch.autograd.grad raises or returns None. The derivative is zero there: "
        "check .requires_grad first and return torch.zeros_like(x), a tensor, never None."
    )


def _create_graph_hint() -> str:
    return _("Pass create_graph=True to the first torch.autograd.grad.") + _zero_hint()


def _not_leave_caller(what: str) -> CheckError:
    return CheckError(
        _(
            "{what} changed {whose}: its values, its requires_grad or its .grad. Work on "
            "x.detach().clone().requires_grad_(True) and use torch.autograd.grad, which fills no "
            ".grad."
        ).format(what=what, whose=_("the caller's leaf x (which requires grad)"))
    )


def _derivatives_hint(family: str, inputs: Inputs) -> str:
    """Zeros for the functions whose derivative ignores x; float64's precision; else twice."""
    f, x = inputs.args[0], inputs.args[1]
    if "= 0" in f.spec["name"] or "Hessian 0" in f.spec["name"]:
        return _zero_hint().strip()
    if family == "dtypes" and x.dtype == torch.float64:
        return _precision().strip()
    if family == "device":
        return _(
            "A tensor made with torch.ones(x.shape), torch.zeros(...) or torch.tensor(...) lands "
            "on the CPU: use torch.ones_like(x) (or .sum() before torch.autograd.grad) so it "
            "lives where x does."
        )
    return ""


def _compare_no_graph(got, expected, what: str, inputs: Inputs) -> None:
    """The values, after the result's own graph: for an x that does not require grad, the
    derivative is a plain tensor (a create_graph=True on the last differentiation returns one
    that requires grad and keeps every graph of the call alive as long as the caller keeps it)."""
    if isinstance(got, torch.Tensor) and got.requires_grad:
        raise CheckError(
            _(
                "{what} returned a tensor that requires grad although x does not: it carries "
                "the graph of the last differentiation, and keeps every saved tensor of the call "
                "alive while the caller holds the result. Differentiate the last time without "
                "create_graph=True (or return the result .detach()ed)."
            ).format(what=what)
        )
    compare_values(got, expected, what, inputs)


def _reference_second_derivative(f, x):
    x = x.detach().clone().requires_grad_(True)
    out = f(x).sum()
    if not out.requires_grad:
        return torch.zeros_like(x)
    (df,) = torch.autograd.grad(out, x, create_graph=True)
    if not df.requires_grad:
        return torch.zeros_like(x)
    return torch.autograd.grad(df.sum(), x)[0]


def _draw_second_derivative(d: Draw) -> Inputs:
    """Each elementwise function; x of any shape (0-d, one element, up to three axes)."""
    name = d.draw(st.sampled_from(sorted(probes.ELEMENTWISE)))
    shape = [d.size(1, 4) for _axis in range(d.draw(st.integers(0, 3)))]
    f = Build(probes.build_elementwise, {"name": name}, name)
    return Inputs((f, d.tensor(*shape)))


SECOND_DERIVATIVE = Contract(
    "second_derivative",
    _reference_second_derivative,
    _draw_second_derivative,
    families=("values", "edges", "strides", "dtypes", "device"),
    compare=_compare_no_graph,
    arg_names=("f", "x"),
    hint=_derivatives_hint,
    tolerance=FLOAT64_EXACT,
)


@uses(SECOND_DERIVATIVE)
def check_second_derivative(second_derivative) -> None:
    """The contract, then a caller's x that is itself a leaf requiring grad, its .grad holding
    a stale gradient: left as it was."""
    x = _randn(2, 3, g=_gen(60), dtype=torch.float64)
    what = _("second_derivative({name}, x of shape {shape}, {dtype})").format(
        name="x**3", shape=(2, 3), dtype="float64"
    )
    case = {"function": "x**3", "x": x, "leaf": True, "stale": True}
    hint = {_NO_GRAPH: _create_graph_hint()}
    if _observe(probes.probe_second_derivative, second_derivative, case, what, hint)["x_touched"]:
        raise _not_leave_caller(what)


def _reference_hvp(f, x, v):
    """H @ v by differentiating twice, the Hessian never formed (the largest family compares
    the biggest tensor the answer makes with this one's)."""
    x = x.detach().clone().requires_grad_(True)
    out = f(x)
    if not out.requires_grad:  # f ignores x
        return torch.zeros_like(x).detach()
    (g,) = torch.autograd.grad(out, x, create_graph=True)
    if not g.requires_grad:  # f is linear in x
        return torch.zeros_like(x).detach()
    (hv,) = torch.autograd.grad((g * v).sum(), x)
    return hv


def _draw_hvp(d: Draw) -> Inputs:
    """Each scalar function of probes.scalar_functions; D from 1; A not symmetric."""
    dim = d.size(1, 6)
    spec = {
        "name": d.draw(st.sampled_from(probes.SCALAR_FUNCTIONS)),
        "a": d.tensor(dim, dim).tolist(),
        "c": d.tensor(dim).tolist(),
    }
    f = Build(probes.build_scalar_function, spec, spec["name"])
    return Inputs((f, d.tensor(dim, low=-1.0, high=1.0), d.tensor(dim)))


HVP = Contract(
    "hvp",
    _reference_hvp,
    _draw_hvp,
    families=("values", "edges", "strides", "dtypes", "device", "largest"),
    compare=_compare_no_graph,
    rules=(
        "torch.autograd.functional.hessian",
        "torch.autograd.functional.jacobian",
        "torch.func.hessian",
        "torch.func.jacrev",
        "torch.func.jacfwd",
    ),
    rule_text=lambda: _(
        "Do not form the Hessian (D * D numbers): differentiate twice, g = grad(f(x), x, "
        "create_graph=True), then grad((g * v).sum(), x), about the cost of two backward passes."
    ),
    arg_names=("f", "x", "v"),
    hint=_derivatives_hint,
    tolerance=FLOAT64_EXACT,
)


@uses(HVP)
def check_hvp(hvp) -> None:
    """The contract, then a caller's x that is itself a leaf requiring grad: left as it was;
    and the cost: as many torch calls for x of 3 numbers as for 9 (a Hessian formed row by
    row, one differentiation per row, makes more)."""
    g = _gen(70)
    a, c = _randn(3, 3, g=g, dtype=torch.float64), _randn(3, g=g, dtype=torch.float64)
    x, v = _randn(3, g=g, dtype=torch.float64), _randn(3, g=g, dtype=torch.float64)
    what = _("hvp({name}, x of shape {shape})").format(name="x @ A @ x", shape=(3,))
    case = {"function": "x @ A @ x", "a": a, "c": c, "x": x, "v": v, "leaf": True, "stale": True}
    hint = {_NO_GRAPH: _create_graph_hint()}
    seen = _observe(probes.probe_hvp, hvp, case, what, hint)
    if seen["x_touched"]:
        raise _not_leave_caller(what)
    sizes = [3, 9]
    counted = _observe(probes.probe_hvp_calls, hvp, {"sizes": sizes}, what, hint)
    small, large = counted["calls"]
    if large > small:
        raise CheckError(
            _(
                "hvp(x @ A @ x, x, v) makes {small} torch calls for x of {n_small} numbers and "
                "{large} for {n_large}: its work grows with the size of x, as it does when the "
                "Hessian is formed (one differentiation per row). {rule}"
            ).format(
                small=small, large=large, n_small=sizes[0], n_large=sizes[1], rule=HVP.rule_text()
            )
        )
