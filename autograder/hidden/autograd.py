"""Hidden checks for 02_autograd."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from autograder.boundary import AnswerRaised, call, observe
from autograder.probes import autograd as probes
from autograder.probes.tensors import build, layout
from tutorial_lib.checks import CheckError, assert_close, check_shape, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape: int, g: torch.Generator, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype).to(get_device())


def _tol(dtype: torch.dtype) -> dict:
    """Tolerances for comparing with a reference: float64 answers must keep float64 precision
    (a float32 working copy loses it), float32 ones are compared loosely."""
    if dtype == torch.float64:
        return {"rtol": 1e-9, "atol": 1e-10}
    return {"rtol": 1e-4, "atol": 1e-5}


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
    w = w.detach().clone().requires_grad_(True)
    b = b.detach().clone().requires_grad_(True)
    with torch.enable_grad():
        ((x @ w + b - y) ** 2).mean().backward()
    return w.grad, b.grad


def check_mse_grads(mse_grads) -> None:
    """Closed-form gradients against autograd's, in float32 and float64, non-contiguous x too."""
    g = _gen(10)
    cases = [(1, 1, torch.float32), (5, 3, torch.float32), (64, 8, torch.float32)]
    cases += [(7, 2, torch.float64), (1, 4, torch.float64), (33, 5, torch.float64)]
    for n, f, dtype in cases:
        x = _randn(n, f, g=g, dtype=dtype)
        y = _randn(n, 1, g=g, dtype=dtype)
        w = _randn(f, 1, g=g, dtype=dtype)
        b = _randn(1, g=g, dtype=dtype)
        _run_mse_case(mse_grads, x, y, w, b)
    x = layout(_randn(4, 9, g=g), ["transpose", 0, 1])  # (9, 4) non-contiguous view: N=9, F=4
    _run_mse_case(mse_grads, x, _randn(9, 1, g=g), _randn(4, 1, g=g), _randn(1, g=g))
    d = torch.float64
    x = layout(_randn(3, 6, g=g, dtype=d), ["transpose", 0, 1])  # float64 and non-contiguous
    _run_mse_case(
        mse_grads,
        x,
        _randn(6, 1, g=g, dtype=d),
        _randn(3, 1, g=g, dtype=d),
        _randn(1, g=g, dtype=d),
    )


def _run_mse_case(mse_grads, x_spec, y, w, b) -> None:
    x = build(x_spec)
    n, f = x.shape
    what = _("mse_grads(x of shape {shape}, {dtype})").format(
        shape=(n, f), dtype=str(x.dtype).replace("torch.", "")
    )
    hint = {_NO_GRAPH: _("Compute the gradients from the formulas, without backward().")}
    case = {"x": x_spec, "y": y, "w": w, "b": b}
    seen = _observe(probes.probe_mse_grads, mse_grads, case, what, hint)
    if seen["recorded"]:
        raise CheckError(
            _(
                "{what} used autograd: it recorded a graph (torch.enable_grad() and backward() or "
                "torch.autograd.grad) although the exercise asks for the gradients by hand. Compute "
                "them from the formulas: grad_w = (2 / N) * x.T @ r, grad_b = (2 / N) * "
                "r.sum(dim=0)."
            ).format(what=what)
        )
    if not seen["inputs_unchanged"]:
        raise CheckError(
            _(
                "{what} changed one of its inputs in place (x, y, w or b). The caller still needs "
                "them: build new tensors (r = x @ w + b - y) instead of -=, += or .sub_() on them."
            ).format(what=what)
        )
    grad_w, grad_b = _tuple_of(seen["result"], 2, what)
    ref_w, ref_b = _reference_mse_grads(x, y, w, b)
    w_what, b_what = (_from(name, what) for name in ("grad_w", "grad_b"))
    check_type(grad_w, torch.Tensor, w_what)
    check_shape(grad_w, (f, 1), names="F 1", what=w_what)
    check_type(grad_b, torch.Tensor, b_what)
    check_shape(grad_b, (1,), what=b_what)
    if _close(grad_w, ref_w / 2) and _close(grad_b, ref_b / 2) and n > 0:
        raise CheckError(
            _(
                "{what}: the gradients are half the right size. The derivative of r**2 is 2*r: "
                "keep the factor 2."
            ).format(what=what)
        )
    if n > 1 and _close(grad_w, ref_w * n) and _close(grad_b, ref_b * n):
        raise CheckError(
            _(
                "{what}: the gradients are N={n} times too large. The loss is a mean over the N "
                "rows, so every term carries a factor 1/N."
            ).format(what=what, n=n)
        )
    for got, ref, name in ((grad_w, ref_w, "grad_w"), (grad_b, ref_b, "grad_b")):
        try:
            assert_close(got, ref, what=_from(name, what), **_tol(x.dtype))
        except CheckError as err:
            raise CheckError(f"{err}{_hint(got, ref)}") from None


# Exercise 2 ------------------------------------------------------------------------------


def _reference_fit(x, y, lr, num_steps, zero_grads=True):
    f = x.shape[1]
    w = torch.zeros(f, 1, dtype=x.dtype, device=x.device, requires_grad=True)
    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)
    losses = []
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


def check_fit_linear(fit_linear) -> None:
    """Hand-written gradient descent against a reference, step by step, several problems."""
    g = _gen(20)
    cases = [(8, 1, 0.1, 5, torch.float32), (32, 3, 0.05, 20, torch.float32)]
    cases += [(1, 2, 0.1, 3, torch.float32), (16, 4, 0.02, 10, torch.float64)]
    cases += [(5, 2, 0.1, 0, torch.float32), (10, 2, 0.1, 1, torch.float32)]
    cases += [(12, 3, 0.3, 4, torch.float64)]
    for n, f, lr, steps, dtype in cases:
        x = _randn(n, f, g=g, dtype=dtype)
        y = x @ _randn(f, 1, g=g, dtype=dtype) + 0.5 + 0.1 * _randn(n, 1, g=g, dtype=dtype)
        what = _("fit_linear(x of shape {shape}, lr={lr}, num_steps={steps})").format(
            shape=(n, f), lr=lr, steps=steps
        )
        hints = {  # the keys are PyTorch's words, looked for in its error: not translated
            "leaf Variable": _("Put the in-place update inside `with torch.no_grad():`."),
            "NoneType": _(
                "A .grad was None: `w = w - lr * w.grad` rebinds w to a non-leaf "
                "tensor, which gets no .grad. Update in place inside torch.no_grad(): w -= ..."
            ),
            "same dtype": _("Create w and b with dtype=x.dtype and device=x.device."),
            _NO_GRAPH: _(
                "After the first step w and b no longer require grad: rebinding them "
                "(w = w - ...) under no_grad made plain tensors. Update in place: w -= ..."
            ),
        }
        case = {"x": x, "y": y, "lr": lr, "num_steps": steps}
        seen = _observe(probes.probe_fit_linear, fit_linear, case, what, hints)
        w, b, losses = _tuple_of(seen["result"], 3, what)
        if not seen["inputs_unchanged"]:
            raise CheckError(
                _(
                    "{what} changed x or y in place; only the parameters may change. Build new "
                    "tensors instead of -=, += or .sub_() on the inputs."
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
        check_type(w, torch.Tensor, _from("w", what))
        check_shape(w, (f, 1), names="F 1", what=_from("w", what))
        check_type(b, torch.Tensor, _from("b", what))
        check_shape(b, (1,), what=_from("b", what))
        ref_w, ref_b, ref_losses = _reference_fit(x, y, lr, steps)
        if steps and lr != 0.1 and not _close(w, ref_w):
            lr_w, lr_b, _losses = _reference_fit(x, y, 0.1, steps)
            if _close(w, lr_w) and _close(b, lr_b):
                raise CheckError(
                    _(
                        "{what}: your parameters match a run with lr=0.1, not lr={lr}. Use the "
                        "lr argument for the step size, not a fixed number."
                    ).format(what=what, lr=lr)
                )
        if steps > 1 and not _close(w, ref_w):
            bad_w, bad_b, _losses = _reference_fit(x, y, lr, steps, zero_grads=False)
            if _close(w, bad_w) and _close(b, bad_b):
                raise CheckError(
                    _(
                        "{what}: your parameters match a run that never zeroes .grad. backward() "
                        "adds into .grad, so each step used the sum of all past gradients. Zero "
                        "w.grad and b.grad after every update."
                    ).format(what=what)
                )
        assert_close(
            torch.tensor(losses, dtype=torch.float64),
            torch.tensor(ref_losses, dtype=torch.float64),
            what=_("the losses from {what} (the loss before each update)").format(what=what),
            rtol=1e-4,
            atol=1e-5,
        )
        for got, ref, name in ((w, ref_w, "w"), (b, ref_b, "b")):
            try:
                assert_close(got.detach(), ref, what=_from(name, what), **_tol(x.dtype))
            except CheckError as err:
                advice = _(" Create w and b with dtype=x.dtype and device=x.device.")
                raise CheckError(f"{err}{advice}{_hint(got, ref)}") from None


# Exercise 3 ------------------------------------------------------------------------------


def check_accumulated_grad(accumulated_grad) -> None:
    """Micro-batch accumulation equals the full-batch gradient, even sizes and uneven ones."""
    g = _gen(30)
    cases = [  # (N, F, micro_size, loss, w is a column, prefill .grad)
        (8, 3, 2, "mse", True, False),
        (12, 2, 4, "logistic", False, False),
        (10, 3, 4, "mse", True, False),  # 4 + 4 + 2: the last micro-batch is shorter
        (7, 2, 3, "logistic", False, True),  # 3 + 3 + 1, and a stale .grad
        (6, 4, 1, "mse", True, True),  # one row at a time
        (5, 2, 8, "mse", True, False),  # micro_size larger than the batch: one micro-batch
        (1, 3, 1, "logistic", False, False),
        (9, 3, 4, "mse", True, True, torch.float64),  # 4 + 4 + 1 in float64
        (11, 2, 5, "logistic", False, False, torch.float64, True),  # non-contiguous x
    ]
    for n, f, micro, loss, column, prefill, *more in cases:
        dtype = more[0] if more else torch.float32
        transposed = len(more) > 1 and more[1]
        fn = probes.LOSSES[loss]
        x = _randn(n, f, g=g, dtype=dtype)
        x_spec = layout(x.T.contiguous(), ["transpose", 0, 1]) if transposed else x
        shape = (f, 1) if column else (f,)
        y = _randn(n, 1, g=g, dtype=dtype) if column else torch.sign(_randn(n, g=g, dtype=dtype))
        w = _randn(*shape, g=g, dtype=dtype).requires_grad_(True)
        stale = torch.full_like(w, 5.0)
        (full,) = torch.autograd.grad(fn(w, x, y), w)
        what = _("accumulated_grad(x of shape {shape}, micro_size={micro})").format(
            shape=(n, f), micro=micro
        )
        case = {"x": x_spec, "y": y, "w": w.detach(), "micro_size": micro, "loss": loss}
        case["stale"] = stale.detach() if prefill else None
        seen = observe(probes.probe_accumulated_grad, accumulated_grad, case, what)
        got = seen["result"]
        check_type(got, torch.Tensor, what)
        check_shape(got, shape, what=what)
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
        if not seen["inputs_unchanged"]:
            raise CheckError(
                _("{what} changed x or y in place; leave the caller's data alone.").format(
                    what=what
                )
            )
        _diagnose_accumulation(got, full, w, x, y, fn, micro, stale if prefill else None, what)
        try:
            vs_full = _("{what} vs the full-batch gradient").format(what=what)
            assert_close(got, full, what=vs_full, **_tol(dtype))
        except CheckError as err:
            raise CheckError(f"{err}{_hint(got, full)}") from None


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


def check_round_ste(round_ste) -> None:
    """Forward equals torch.round; backward passes the upstream gradient through unchanged."""
    g = _gen(40)
    cases = [
        _randn(g=g) * 3,  # a 0-d tensor
        _randn(1, g=g) * 3,
        _randn(5, g=g) * 3,
        layout(_randn(4, 3, g=g) * 3, ["transpose", 0, 1]),  # non-contiguous (3, 4)
        _randn(6, g=g, dtype=torch.float64) * 3,
        # ties: torch.round rounds halves to the even neighbour
        torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5], device=get_device()),
        torch.tensor([[0.5, -3.5], [4.5, 1.25]], dtype=torch.float64, device=get_device()),
    ]
    for x_spec in cases:
        x0 = build(x_spec)
        what = _("round_ste(x of shape {shape}, {dtype})").format(
            shape=tuple(x0.shape), dtype=str(x0.dtype).replace("torch.", "")
        )
        v = _randn(*x0.shape, g=g, dtype=x0.dtype)
        seen = observe(probes.probe_round_ste, round_ste, {"x": x_spec, "v": v}, what)
        out = seen["out"]
        check_type(out, torch.Tensor, what)
        if not seen["x_unchanged"]:
            raise CheckError(
                _(
                    "{what} changed the caller's x in place (x.round_(), x.data = ..., x += ...). "
                    "Return a new tensor: x + (x.round() - x).detach()."
                ).format(what=what)
            )
        check_shape(out, tuple(x0.shape), what=what)
        rounded = torch.round(x0)
        half_up = torch.floor(x0 + 0.5)
        away = torch.sign(x0) * torch.floor(x0.abs() + 0.5)
        if (
            isinstance(out, torch.Tensor)
            and out.shape == x0.shape
            and not torch.equal(out.detach().to(x0.dtype), rounded)
        ):
            for other, how in ((half_up, _("up")), (away, _("away from zero"))):
                if torch.equal(out.detach().to(x0.dtype), other):
                    raise CheckError(
                        _(
                            "{what} rounds halves {how} ({inputs} -> {outputs}); torch.round "
                            "rounds them to the even neighbour (0.5 -> 0, 1.5 -> 2, 2.5 -> 2). "
                            "Use x.round() for the forward values."
                        ).format(
                            what=what,
                            how=how,
                            inputs=x0.flatten().tolist()[:4],
                            outputs=out.detach().flatten().tolist()[:4],
                        )
                    )
        assert_close(out.detach(), rounded, what=what, atol=1e-5, rtol=0)
        if not seen["requires_grad"]:
            raise CheckError(
                _(
                    "{what} does not require grad: it is cut off from x. Only the correction "
                    "(x.round() - x) should be detached; x itself must stay in the graph."
                ).format(what=what)
            )
        grad = seen["grad"]
        if _close(grad, torch.zeros_like(grad)):
            raise CheckError(
                _(
                    "the gradient through {what} is zero: rounding has a zero derivative almost "
                    "everywhere. Return x + (x.round() - x).detach() so the gradient skips it."
                ).format(what=what)
            )
        if _close(grad, -v):
            raise CheckError(
                _(
                    "the gradient through {what} is minus the upstream gradient: you detached x "
                    "and left (x.round() - x) in the graph. Detach the correction, not x."
                ).format(what=what)
            )
        through = _("the gradient through {what} (should equal the upstream)").format(what=what)
        assert_close(grad, v, what=through)
    plain = torch.tensor([0.4, 2.6], device=get_device())  # no requires_grad at all
    what = _("round_ste on a tensor that does not require grad")
    out = observe(call, round_ste, {"args": [plain]}, what)["result"]
    check_type(out, torch.Tensor, what)
    assert_close(out, torch.tensor([0.0, 3.0], device=get_device()), what=what)


# Exercise 5 ------------------------------------------------------------------------------


def check_HuberFunction(HuberFunction) -> None:
    """Forward against F.huber_loss; backward against the exact derivative, with an upstream
    gradient that is not all ones, and against finite differences with gradcheck."""
    g = _gen(50)
    g_upstream = _gen(51)  # a stream of its own, so the inputs stay those of gradcheck's days
    kind = observe(probes.probe_huber_class, HuberFunction, None, "HuberFunction")
    if not kind["is_function"]:
        raise CheckError(
            _("HuberFunction should be a class that subclasses torch.autograd.Function.")
        )
    plan = [((1,), 1.0), ((6,), 0.5), ((3, 5), 2.5), ((4,), 1.0), ((5, 2), 0.3, "t")]
    plan += [((4,), 0.75, "float64"), ((6,), 1.5, "edges")]
    for shape, delta, *kind in plan:
        dtype = torch.float64 if kind == ["float64"] else torch.float32
        x = _randn(*shape, g=g, dtype=dtype) * 2
        x_spec = x
        if kind == ["t"]:  # a non-contiguous view of shape (5, 2)
            x_spec = layout(x.T.contiguous(), ["transpose", 0, 1])
        if kind == ["edges"]:  # exactly at +-delta, at 0, just inside and outside
            x = torch.tensor([delta, -delta, 0.0, 0.5 * delta, 3 * delta, -2 * delta])
            x_spec = x = x.to(get_device())
        what = _("HuberFunction.apply(x of shape {shape}, {dtype}, delta={delta})").format(
            shape=shape, dtype=str(dtype)[6:], delta=delta
        )
        x64 = _randn(*shape, g=g, dtype=torch.float64) * 2
        if kind == ["edges"]:
            x64 = x.double() + 1e-3  # gradcheck's finite differences: not exactly on a kink
        v64 = _randn(*shape, g=g_upstream, dtype=torch.float64)
        case = {"x": x_spec, "delta": delta, "x64": x64, "v64": v64}
        seen = observe(probes.probe_huber, HuberFunction, case, what)
        out = seen["out"]
        check_type(out, torch.Tensor, what)
        check_shape(out, shape, what=what)
        if not seen["x_unchanged"]:
            raise CheckError(
                _(
                    "{what} changed its input x in place (x.abs_(), x.mul_(), ...); compute "
                    "the output as a new tensor."
                ).format(what=what)
            )
        expected = F.huber_loss(x, torch.zeros_like(x), reduction="none", delta=delta)
        if delta != 1.0 and out.shape == x.shape:
            at_one = F.huber_loss(x, torch.zeros_like(x), reduction="none", delta=1.0)
            half = torch.where(x.abs() <= delta, 0.5 * x**2, delta * (x.abs() - 0.5))
            for wrong, hint in (
                (at_one, _("as if delta were 1.0: use the delta argument")),
                (
                    half,
                    _(
                        "with delta * (|x| - 0.5) in the linear part; it is "
                        "delta * (|x| - 0.5 * delta)"
                    ),
                ),
            ):
                if _close(out, wrong, 1e-5) and not _close(out, expected, 1e-5):
                    raise CheckError(
                        _("{what} computes the Huber function {hint}.").format(what=what, hint=hint)
                    )
        assert_close(out, expected, what=what)
        hint = _(
            " Did backward multiply by grad_output, use ctx.delta (not a fixed 1.0) and return "
            "one gradient per forward input?"
        )
        backward = _("the backward of {what}").format(what=what)
        if seen["gradcheck"] is not None:
            raise CheckError(
                _("{backward} disagrees with finite differences: {error}.{hint}").format(
                    backward=backward, error=seen["gradcheck"], hint=hint
                )
            )
        if seen["backward_raised"] is not None:
            raise CheckError(
                _("{backward} raised: {error}.{hint}").format(
                    backward=backward, error=seen["backward_raised"], hint=hint
                )
            )
        try:
            assert_close(
                seen["grad"],
                v64 * x64.clamp(-delta, delta),
                what=_("{backward} for an upstream gradient v (x64 of shape {shape})").format(
                    backward=backward, shape=shape
                ),
                rtol=1e-6,
                atol=1e-8,
            )
        except CheckError as err:
            raise CheckError(f"{err}{hint}") from None


# Exercises 6 and 7 -----------------------------------------------------------------------


def _second_derivatives():
    return {  # name: f'', for the functions in probes.ELEMENTWISE
        "x**3": lambda t: 6 * t,
        "sin(x)": lambda t: -torch.sin(t),
        "exp(-x**2)": lambda t: (4 * t**2 - 2) * torch.exp(-(t**2)),
        "3*x + 1 (f'' = 0)": torch.zeros_like,
        "2, a constant that ignores x (f'' = 0)": torch.zeros_like,
    }


def _zero_hint() -> str:
    # A function, not a constant: the message is looked up in the language of the moment.
    return _(
        " When a derivative does not depend on x (f ignores x: f(x) has no graph; f is linear: "
        "f' has none), torch.autograd.grad raises or returns None. The derivative is zero there: "
        "check .requires_grad first and return torch.zeros_like(x), a tensor, never None."
    )


def _create_graph_hint() -> str:
    return _("Pass create_graph=True to the first torch.autograd.grad.") + _zero_hint()


def _zero_case(name: str) -> bool:
    return "= 0" in name or "Hessian 0" in name


def _result_tensor(got, name: str, what: str) -> None:
    if got is None and _zero_case(name):
        raise CheckError(_("{what} returned None.").format(what=what) + _zero_hint())
    check_type(got, torch.Tensor, what)


def _not_leave_caller(what: str, leaf: bool) -> CheckError:
    whose = _("the caller's leaf x (which requires grad)") if leaf else _("the caller's x")
    return CheckError(
        _(
            "{what} changed {whose}: its values, its requires_grad or its .grad. Work on "
            "x.detach().clone().requires_grad_(True) and use torch.autograd.grad, which fills no "
            ".grad."
        ).format(what=what, whose=whose)
    )


def check_second_derivative(second_derivative) -> None:
    """f'' for elementwise functions, several shapes; the caller's x is left untouched."""
    g = _gen(60)
    shapes = [(), (1,), (7,), (2, 3), (3, 2, 2)]
    for i, shape in enumerate(shapes):
        for j, (name, d2f) in enumerate(_second_derivatives().items()):
            f = probes.ELEMENTWISE[name]
            dtype = torch.float64 if i % 2 else torch.float32
            x = _randn(*shape, g=g, dtype=dtype)
            x_spec = x
            if len(shape) == 2 and j % 2:  # a non-contiguous view of shape (2, 3)
                x_spec = layout(x.T.contiguous(), ["transpose", 0, 1])
            leaf = (i + j) % 3 == 0  # the caller's x is itself a leaf that requires grad
            what = _("second_derivative({name}, x of shape {shape}, {dtype})").format(
                name=name, shape=shape, dtype=str(dtype)[6:]
            )
            hint = {_NO_GRAPH: _create_graph_hint()}
            case = {"function": name, "x": x_spec, "leaf": leaf}
            try:
                seen = _observe(probes.probe_second_derivative, second_derivative, case, what, hint)
            except AnswerRaised as err:
                raise CheckError(
                    err.with_hint(
                        _(
                            "second_derivative must work for an x of any shape (here {shape}): "
                            "differentiate f(x).sum() twice with torch.autograd.grad, which keeps "
                            "x's shape, rather than building a Hessian or looping over a 1-D x."
                        ).format(shape=shape)
                    )
                ) from None
            got = seen["result"]
            _result_tensor(got, name, what)
            check_shape(got, shape, what=what)
            if seen["x_touched"]:
                raise _not_leave_caller(what, leaf)
            first = torch.autograd.functional.jacobian(lambda t, f=f: f(t).sum(), x)
            if "f'' = 0" not in name and _close(got, first):
                raise CheckError(
                    _(
                        "{what} returned the first derivative. Differentiate twice: the first "
                        "torch.autograd.grad needs create_graph=True so its result can be "
                        "differentiated again."
                    ).format(what=what)
                )
            try:
                assert_close(got.detach(), d2f(x), what=what, **_tol(dtype))
            except CheckError as err:
                raise CheckError(f"{err}{_hint(got, x)}") from None


def check_hvp(hvp) -> None:
    """Hessian-vector products against the full Hessian, for several functions and sizes."""
    g = _gen(70)
    for dim in (1, 3, 6):
        a = _randn(dim, dim, g=g, dtype=torch.float64)  # not symmetric: the Hessian is a + a.T
        c = _randn(dim, g=g, dtype=torch.float64)
        for j, (name, f) in enumerate(probes.scalar_functions(a, c).items()):
            x = _randn(dim, g=g, dtype=torch.float64)
            v = _randn(dim, g=g, dtype=torch.float64)
            leaf = (dim + j) % 2 == 0  # the caller's x is itself a leaf that requires grad
            what = _("hvp({name}, x of shape {shape})").format(name=name, shape=(dim,))
            hint = {_NO_GRAPH: _create_graph_hint()}
            case = {"function": name, "a": a, "c": c, "x": x, "v": v, "leaf": leaf}
            seen = _observe(probes.probe_hvp, hvp, case, what, hint)
            got = seen["result"]
            _result_tensor(got, name, what)
            check_shape(got, (dim,), names="D", what=what)
            if seen["x_touched"]:
                raise _not_leave_caller(what, leaf)
            if not seen["v_unchanged"]:
                raise CheckError(
                    _(
                        "{what} changed the caller's v in place; compute (g * v).sum() without "
                        "modifying v."
                    ).format(what=what)
                )
            hessian = torch.autograd.functional.hessian(f, x)
            expected = hessian @ v
            if dim > 1 and "Hessian 0" not in name:
                diagonal_only = torch.diagonal(hessian) * v
                row_sums = hessian.sum(1) * v
                if _close(got, diagonal_only) or _close(got, row_sums):
                    raise CheckError(
                        _(
                            "{what} multiplies by v elementwise after differentiating, which "
                            "ignores how x_i and x_j interact. Form the scalar (grad * v).sum() "
                            "first, then differentiate it with respect to x."
                        ).format(what=what)
                    )
            gradient = torch.autograd.functional.jacobian(f, x)
            if "Hessian 0" not in name and _close(got, gradient * v):
                raise CheckError(
                    _(
                        "{what} is the gradient times v, a first derivative. Differentiate "
                        "(g * v).sum() once more, with g from grad(..., create_graph=True)."
                    ).format(what=what)
                )
            try:
                assert_close(got.detach(), expected, what=what, **_tol(torch.float64))
            except CheckError as err:
                raise CheckError(f"{err}{_hint(got, expected)}") from None
