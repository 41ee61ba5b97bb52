"""Hidden checks for 01_tensors."""

from __future__ import annotations

import math
import re

import torch
import torch.nn.functional as F

from autograder.boundary import AnswerRaised, call, observe
from autograder.probes import tensors as probes
from autograder.probes.tensors import build, layout
from tutorial_lib.checks import (
    CheckError,
    assert_close,
    check_device,
    check_dtype,
    check_shape,
    check_type,
    same_device,
    shape_str,
)
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _


def _run(fn, what: str, *inputs, hint: str = "", when: str = ""):
    """What the learner's function returned for ``inputs`` (tensors or layout descriptions).

    An error it raises becomes a CheckError (NotImplementedError passes through); ``hint`` is
    added to the message, as its last line, when the error's text contains ``when``.
    """
    try:
        return observe(probes.probe_tensors, fn, {"inputs": list(inputs)}, what)
    except AnswerRaised as err:
        if hint and when in err.message:
            raise CheckError(err.with_hint(hint)) from None
        raise


def _pure(fn, what: str, *inputs, kwargs: dict | None = None, hint: str = "", when: str = ""):
    """(what ``fn(*inputs, **kwargs)`` returned, the index of an input it wrote into or None).

    Like :func:`_run`, through a probe that also sends the inputs back as the caller sees
    them after the call.
    """
    case = {"inputs": list(inputs), "kwargs": dict(kwargs or {})}
    try:
        seen = observe(probes.probe_pure, fn, case, what)
    except AnswerRaised as err:
        if hint and when in err.message:
            raise CheckError(err.with_hint(hint)) from None
        raise
    changed = None
    for i, (spec, after) in enumerate(zip(inputs, seen["inputs_after"], strict=True)):
        if not _same_values(build(spec), after):
            changed = i
            break
    return seen["result"], changed


def _same_values(a: torch.Tensor, b: object) -> bool:
    if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
        return False
    a, b = a.detach().cpu(), b.detach().cpu()
    if a.dtype.is_floating_point:
        return torch.equal(torch.isnan(a), torch.isnan(b)) and torch.equal(
            a.nan_to_num(0.0), b.nan_to_num(0.0)
        )
    return torch.equal(a, b)


def _check_untouched(what: str, changed: int | None, names: list[str]) -> None:
    """Fail if the answer wrote into the caller's input number ``changed``."""
    if changed is None:
        return
    raise CheckError(
        _(
            "{what} changed its input {name} in place (an in-place operation such as "
            "-=, /=, x[mask] = ..., .masked_fill_ or .unsqueeze_ on the caller's tensor): the "
            "caller's data must come back as it went in. Use the out-of-place forms "
            "(x = x - mean, torch.where, .masked_fill, .unsqueeze), or work on x.clone()."
        ).format(what=what, name=names[changed])
    )


# The errors a CPU tensor meets next to a tensor on another device (meta stands in for a GPU
# here). Not matched on purpose: "Expected `value` to be on same device", which meta raises for
# a CPU 0-dim tensor that CUDA accepts, and errors about meta tensors having no data.
_DEVICE_MIX = re.compile(
    r"Tensor on device \w+ is not on the expected device|Expected all tensors to be on the same device"
)


def _check_on_meta(fn, what: str, inputs: list[dict], fix: str) -> None:
    """Run ``fn`` on meta tensors (a stand-in for a second device on a CPU-only grader) and fail
    only where it mixes devices or returns its result on another device.

    Meta tensors have no values, so an error about that (``.item()``, ``.tolist()``) proves
    nothing here and is let through; the value checks run on the real device.
    """
    seen = observe(probes.probe_on_meta, fn, {"inputs": inputs}, what)
    if "raised" in seen:
        name, message = seen["raised"]
        if _DEVICE_MIX.search(message):
            raise CheckError(
                _("{what} raised {name}: {message} {fix}").format(
                    what=what, name=name, message=message.strip(), fix=fix
                )
            )
        return
    if "device" in seen and seen["device"] != "meta":
        raise CheckError(
            _("{what} returned a tensor on {device}, not on the input's device. {fix}").format(
                what=what, device=seen["device"], fix=fix
            )
        )


def _describe(x: torch.Tensor, name: str = "x") -> str:
    contiguity = "" if x.is_contiguous() else _(", non-contiguous")
    return _("{name} of shape {shape}, {dtype}{contiguity}").format(
        name=name, shape=shape_str(x.shape), dtype=x.dtype, contiguity=contiguity
    )


# ---------------------------------------------------------------------------------------------
# Exercise 1: labels_to_tensor


def check_labels_to_tensor(labels_to_tensor) -> None:
    """Lists of Python ints of several lengths (empty, one, large values) -> int64 on device;
    the device argument must be honoured (meta stands in for a GPU), the list left alone."""
    device = get_device()
    g = torch.Generator().manual_seed(0)
    cases = [
        [3, 1, 2],
        [7],
        [-100, 0, 5],  # -100 is the usual "ignore this position" label
        [2**40 + 1, 2**33 + 3, 16_777_217],  # too big for int32, not exact in float32
        [2**60 + 1, -(2**55) - 1],  # not exact in float64 either
        torch.randint(0, 10, (50,), generator=g).tolist(),
    ]
    for labels in cases:
        shown = labels if len(labels) <= 5 else _("a list of 50 labels")
        what = f"labels_to_tensor({shown}, {device})"
        seen = observe(call, labels_to_tensor, {"args": [list(labels), device]}, what)
        out = seen["result"]
        check_type(out, torch.Tensor, what)
        check_shape(out, (len(labels),), names="N", what=what)
        check_dtype(out, torch.int64, what)
        check_device(out, device, what)
        expected = torch.tensor(labels, dtype=torch.int64, device=device)
        try:
            assert_close(out, expected, what=what)
        except CheckError as err:
            hint = ""
            if max(abs(v) for v in labels) > 2**24:
                hint = _(
                    " Large labels are not exact in floats (float32 above 2**24, float64 above "
                    "2**53): build the int64 tensor directly from the list "
                    "(torch.tensor(labels, dtype=torch.int64)), not through a float tensor and "
                    ".long()."
                )
            raise CheckError(f"{err}{hint}") from None
        if seen["args"][0] != list(labels):
            raise CheckError(
                _(
                    "{what} changed the caller's list of labels: read it, do not sort or modify it."
                ).format(what=what)
            )
    what = _("labels_to_tensor([], {device}) (an empty batch)").format(device=device)
    out = observe(call, labels_to_tensor, {"args": [[], device]}, what)["result"]
    check_type(out, torch.Tensor, what)
    check_shape(out, (0,), names="N", what=what)
    if out.dtype != torch.int64:
        raise CheckError(
            _(
                "{what} has dtype {dtype}, expected torch.int64. With no numbers to look at, "
                "torch.tensor([]) falls back to float32: pass dtype=torch.int64 explicitly."
            ).format(what=what, dtype=out.dtype)
        )
    check_device(out, device, what)
    # Another device than the grader's: the answer must use the device it is given.
    labels = [4, 0, 2]
    what = f"labels_to_tensor({labels}, torch.device('meta'))"
    seen = observe(
        probes.probe_on_meta,
        labels_to_tensor,
        {"inputs": [{"value": labels}, {"device": "meta"}]},
        what,
    )
    fix = _(
        "Create the tensor on the device you are given: torch.tensor(labels, "
        "dtype=torch.int64, device=device) (or .to(device)); the meta device stands in for a GPU "
        "here, and on a GPU machine the device would be cuda."
    )
    if "raised" in seen:
        name, message = seen["raised"]
        if _DEVICE_MIX.search(message):
            raise CheckError(
                _("{what} raised {name}: {message} {fix}").format(
                    what=what, name=name, message=message.strip(), fix=fix
                )
            )
    elif "device" in seen:
        if not same_device(seen["device"], "meta"):
            raise CheckError(
                _("{what} returned a tensor on {device}, expected meta. {fix}").format(
                    what=what, device=seen["device"], fix=fix
                )
            )
        if seen["dtype"] != torch.int64:
            raise CheckError(
                _("{what} has dtype {dtype}, expected torch.int64.").format(
                    what=what, dtype=seen["dtype"]
                )
            )


# ---------------------------------------------------------------------------------------------
# Exercise 2: shared_and_copied


def _index_str(index: tuple[int, ...]) -> str:
    return ", ".join(str(i) for i in index)


def check_shared_and_copied(shared_and_copied) -> None:
    """Mutate the array and the tensors; the first tensor must follow the array, the second not."""
    for index, (name, original) in enumerate(probes.numpy_cases()):
        what = f"shared_and_copied({name})"
        seen = observe(probes.probe_shared_and_copied, shared_and_copied, {"index": index}, what)
        result = seen["result"]
        check_type(result, (tuple, list), what)
        if len(result) != 2:
            raise CheckError(
                _("{what} should return (shared, copied), got {count} items.").format(
                    what=what, count=len(result)
                )
            )
        shared, copied = result
        for label, t in (("shared", shared), ("copied", copied)):
            source = _("{label} from {what}").format(label=label, what=what)
            check_type(t, torch.Tensor, source)
            check_shape(t, original.shape, what=source)
            check_device(t, "cpu", source)
        if seen["same_memory"] and original.size > 0:
            raise CheckError(
                _(
                    "shared and copied from {what} are the same memory: copied must be independent."
                    " Make it with torch.tensor(a) or torch.from_numpy(a).clone()."
                ).format(what=what)
            )
        first = (0,) * original.ndim
        last = tuple(s - 1 for s in original.shape)
        at_first, at_last = _index_str(first), _index_str(last)
        old = original[first].item()
        new = probes.written_value(old)
        if seen["shared_first_after_array_write"] != new:
            raise CheckError(
                _(
                    "{what}: after a[{at}] = {new} the shared tensor still holds {old}: it does "
                    "not share memory with the array. torch.tensor(a) always copies, and so does any "
                    "cast to another dtype (torch.as_tensor(a, dtype=...), .float()) or making the "
                    "array contiguous first (np.ascontiguousarray(a), a.copy(), a reshape of a "
                    "strided array). torch.from_numpy(a) shares any array with positive strides."
                ).format(what=what, at=at_first, new=new, old=old)
            )
        if seen["copied_first_after_array_write"] != old:
            raise CheckError(
                _(
                    "{what}: after a[{at}] = {new} the copied tensor changed too: it shares "
                    "memory with the array. torch.from_numpy and torch.as_tensor share; "
                    "torch.tensor(a) or .clone() makes an independent copy."
                ).format(what=what, at=at_first, new=new)
            )
        if seen["array_last_after_shared_write"] != 77:
            raise CheckError(
                _(
                    "{what}: after shared[{at}] = 77 the array did not change: shared is not a "
                    "view of the array's memory. Use torch.from_numpy(a)."
                ).format(what=what, at=at_last)
            )
        if seen["array_last_after_copied_write"] == 55:
            raise CheckError(
                _(
                    "{what}: after copied[{at}] = 55 the array changed: copied shares memory."
                ).format(what=what, at=at_last)
            )
        expected_dtype = torch.from_numpy(original).dtype
        for label, t in (("shared", shared), ("copied", copied)):
            if t.dtype != expected_dtype:
                raise CheckError(
                    _(
                        "{label} from {what} has dtype {dtype}, expected {expected} (the "
                        "array's). Keep the dtype: torch.from_numpy(a) and torch.tensor(a) do; "
                        "torch.Tensor(a), dtype=... and .float() change it."
                    ).format(label=label, what=what, dtype=t.dtype, expected=expected_dtype)
                )
        for label, t in (("shared", shared), ("copied", copied)):
            source = _("{label} from {what}").format(label=label, what=what)
            assert_close(t, torch.from_numpy(original), what=source)


# ---------------------------------------------------------------------------------------------
# Exercise 3: to_nchw


def _permute_hint() -> str:
    # A function, not a constant: the message is looked up in the language of each call.
    return _(
        " The shape is right but the values are scrambled: reshape and view keep the elements in "
        "memory order and only regroup them, they never move an axis. Moving the channel axis "
        "needs permute(0, 3, 1, 2)."
    )


def _nhwc_cases(g: torch.Generator) -> list:
    cases = [
        torch.randn(n, h, w, c, generator=g)
        for n, h, w, c in [
            (2, 5, 7, 3),
            (1, 4, 4, 3),
            (3, 3, 3, 3),
            (1, 1, 1, 1),
            (2, 6, 2, 1),
            (2, 3, 5, 4),
            (0, 3, 4, 2),
        ]
    ]
    cases.append(torch.randint(0, 256, (2, 3, 5, 4), generator=g, dtype=torch.uint8))
    # int64 values beyond float32's exact range: a round trip through floats changes them
    cases.append(torch.randint(2**40, 2**41, (1, 2, 3, 2), generator=g))
    # a float batch that requires grad, as an activation inside a model would
    cases.append(torch.randn(2, 4, 3, 3, generator=g).requires_grad_(True))
    nchw = torch.randn(2, 3, 6, 5, generator=g)
    # channels-last view of an NCHW tensor: non-contiguous
    cases.append(layout(nchw, ["permute", 0, 2, 3, 1]))
    return cases


def _on(device: torch.device, spec):
    """``spec`` (a tensor or a layout description) with its tensor moved to ``device``."""
    if isinstance(spec, torch.Tensor):
        return spec.to(device)
    return {**spec, "base": spec["base"].to(device)}


def check_to_nchw(to_nchw) -> None:
    """Several NHWC batches (square, not square, 1 to 4 channels, empty, uint8, large int64,
    requiring grad, non-contiguous); the caller's x must not change."""
    device = get_device()
    g = torch.Generator().manual_seed(2)
    for spec_cpu in _nhwc_cases(g):
        spec = _on(device, spec_cpu)
        x = build(spec)
        grad_note = ", requires_grad=True" if x.requires_grad else ""
        what = f"to_nchw({_describe(x)}{grad_note})"
        n, h, w, c = x.shape
        hint = ""
        if x.requires_grad:
            hint = _(
                " x requires grad: stay in torch (x.permute(0, 3, 1, 2)); a detour through "
                "NumPy or Python lists fails on such tensors and on GPU tensors."
            )
        elif c != 3:
            hint = _(
                " This x has C = {c} channel(s): the answer must work for any number of "
                "channels, which permute(0, 3, 1, 2) does."
            ).format(c=c)
        out, changed = _pure(to_nchw, what, spec, hint=hint)
        check_type(out, torch.Tensor, what)
        check_shape(out, (n, c, h, w), names="N C H W", what=what)
        try:
            assert_close(out, x.permute(0, 3, 1, 2), what=what)
        except CheckError as err:
            extra = _permute_hint()
            if not x.dtype.is_floating_point and "dtype" not in str(err):
                extra += _(" (Integer values above 2**24 change in a round trip through float32.)")
            raise CheckError(f"{err}{extra}") from None
        _check_untouched(what, changed, ["x"])


# ---------------------------------------------------------------------------------------------
# Exercise 4: flatten_features


def _flatten_cases(g: torch.Generator) -> list:
    return [
        torch.randn(4, 3, 5, 5, generator=g),
        layout(torch.randn(2, 3, 4, 5, generator=g), ["permute", 0, 2, 3, 1]),  # non-contiguous
        layout(torch.randn(3, 6, 4, generator=g), ["transpose", 1, 2]),  # non-contiguous
        layout(torch.randn(2, 3, 4, 4, generator=g), ["channels_last"]),  # channels-last memory
        torch.randn(1, 7, generator=g),  # N = 1: the batch dimension must stay
        torch.randn(1, 3, 2, generator=g),
        torch.randn(5, 1, 1, 1, generator=g),
        torch.randn(2, 2, 1, 3, 2, generator=g),  # five dimensions
        torch.randint(0, 9, (2, 2, 3), generator=g),
        torch.randn(0, 3, 4, generator=g),  # an empty batch
        torch.randn(0, 2, 2, 3, generator=g),
    ]


def check_flatten_features(flatten_features) -> None:
    """Contiguous and non-contiguous inputs, 2-d to 5-d, N = 1, int64, and empty batches."""
    device = get_device()
    g = torch.Generator().manual_seed(3)
    for spec_cpu in _flatten_cases(g):
        spec = _on(device, spec_cpu)
        x = build(spec)
        what = f"flatten_features({_describe(x)})"
        hint = ""
        if not x.is_contiguous():
            hint = _(
                " The input is non-contiguous (a permuted view), and view needs contiguous "
                "memory: use reshape or flatten, which copy when they must."
            )
        elif x.shape[0] == 0:
            hint = _(
                " The batch is empty, so a -1 cannot be inferred (0 = 0 * anything): give the "
                "feature size explicitly (math.prod(x.shape[1:])) or use x.flatten(1)."
            )
        out, changed = _pure(flatten_features, what, spec, hint=hint)
        n = x.shape[0]
        features = math.prod(x.shape[1:])
        check_type(out, torch.Tensor, what)
        try:
            check_shape(out, (n, features), names="N F", what=what)
        except CheckError as err:
            extra = ""
            if n == 1 and tuple(out.shape) == (features,):
                extra = _(
                    " With one sample, a squeeze() removes the batch dimension too: leave it."
                )
            elif x.dim() > 3:
                extra = _(
                    " Every dimension after the first must be merged, however many there are: "
                    "x.flatten(1) (start_dim=1, end_dim=-1)."
                )
            raise CheckError(f"{err}{extra}") from None
        assert_close(out, x.reshape(n, features), what=what)
        _check_untouched(what, changed, ["x"])


# ---------------------------------------------------------------------------------------------
# Exercise 5: normalize_per_channel


def _keepdim_hint() -> str:
    # A function, not a constant: the message is looked up in the language of each call.
    return _(
        " Reducing over (0, 2, 3) without keepdim=True leaves shape (C,), and broadcasting lines "
        "up trailing dimensions: (C,) meets W, not C. Keep the reduced dimensions (shape "
        "(1, C, 1, 1)) so each channel gets its own statistics."
    )


def _channel_batches(g: torch.Generator) -> list[tuple[object, float | None]]:
    """(x or its layout description, the eps to pass or None for the default)."""
    shapes = [(4, 3, 5, 3), (2, 3, 4, 4), (8, 2, 3, 5), (1, 4, 2, 2), (3, 1, 1, 1), (2, 3, 1, 3)]
    batches: list = []
    for shape in shapes:
        c = shape[1]
        scale = torch.rand(1, c, 1, 1, generator=g) * 4 + 0.5  # very different channels
        shift = torch.randn(1, c, 1, 1, generator=g) * 10
        batches.append((torch.randn(shape, generator=g) * scale + shift, None))
    dead = torch.randn(3, 2, 4, 4, generator=g)
    dead[:, 1] = 3.0  # a constant channel: variance 0, which is what eps is for
    batches.append((dead, None))
    batches.append((dead, 1e-2))  # the eps argument must be used, not a constant
    batches.append((batches[1][0], 0.5))  # a large eps goes inside the square root
    batches.append((batches[0][0].to(torch.float64), None))
    x64 = torch.randn(6, 3, 4, 5, generator=g, dtype=torch.float64) * 0.1 + 1000.0
    batches.append((x64, 1e-9))  # float64 throughout: a small spread on a large mean
    batches.append((layout(batches[1][0], ["channels_last"]), None))
    batches.append((layout(torch.randn(5, 6, 3, 2, generator=g), ["permute", 0, 3, 1, 2]), None))
    return batches


def _normalize_variants(x: torch.Tensor, eps: float) -> list[tuple[torch.Tensor, str]]:
    """Wrong answers a learner is likely to have written, each with what to tell them."""

    def norm(dims, keepdim=True, correction=0, eps=eps, outside=False):
        mean = x.mean(dim=dims, keepdim=keepdim)
        var = x.var(dim=dims, keepdim=keepdim, correction=correction)
        if outside:
            return (x - mean) / (torch.sqrt(var) + eps)
        return (x - mean) / torch.sqrt(var + eps)

    variants = [
        (lambda: norm((0, 2, 3), keepdim=False), _keepdim_hint()),
        (
            lambda: norm((0, 1, 2, 3)),
            _(
                " You normalised with one mean and variance for the whole batch: each channel needs "
                "its own, over dims (0, 2, 3)."
            ),
        ),
        (
            lambda: norm((2, 3)),
            _(
                " You normalised each image's channel separately (over (2, 3)): per-channel "
                "statistics also pool the batch, dims (0, 2, 3)."
            ),
        ),
        (
            lambda: norm((1, 2, 3)),
            _(" You normalised each sample separately (over (1, 2, 3)): reduce over (0, 2, 3)."),
        ),
        (
            lambda: norm((0, 2, 3), correction=1),
            _(" The variance divides by n - 1 (torch.var's default): pass correction=0."),
        ),
        (
            lambda: norm((0, 2, 3), eps=1e-5),
            _(
                " This was called with eps={eps:g} and your result matches eps=1e-5: use the eps "
                "argument, not a constant (F.batch_norm and nn.BatchNorm2d also need it passed)."
            ).format(eps=eps),
        ),
        (
            lambda: norm((0, 2, 3), outside=True),
            _(
                " eps belongs inside the square root: divide by torch.sqrt(var + eps), not by "
                "torch.sqrt(var) + eps (with a large eps the two differ a lot)."
            ),
        ),
    ]
    out = []
    for make, hint in variants:
        try:
            out.append((make(), hint))
        except RuntimeError:  # that wrong answer would have raised for this shape
            continue
    return out


def check_normalize_per_channel(normalize_per_channel) -> None:
    """Against batch normalisation's statistics, including W == C where broadcasting lies,
    several eps values, float64 precision and non-contiguous inputs; x must not change."""
    device = get_device()
    g = torch.Generator().manual_seed(4)
    for spec_cpu, eps in _channel_batches(g):
        spec = _on(device, spec_cpu)
        x = build(spec)
        eps_note = "" if eps is None else f", eps={eps:g}"
        what = f"normalize_per_channel({_describe(x)}{eps_note})"
        kwargs = {} if eps is None else {"eps": eps}
        out, changed = _pure(
            normalize_per_channel,
            what,
            spec,
            kwargs=kwargs,
            hint=_keepdim_hint(),
            when="must match the size",
        )
        used_eps = 1e-5 if eps is None else eps
        check_type(out, torch.Tensor, what)
        check_shape(out, tuple(x.shape), names="N C H W", what=what)
        expected = F.batch_norm(x.double(), None, None, training=True, eps=used_eps).to(x.dtype)
        if bool(torch.isnan(out).any()):
            raise CheckError(
                _(
                    "{what} contains NaN. A channel whose values are all equal has variance 0, and "
                    "0 / 0 is NaN: that is what eps is for. Divide by torch.sqrt(var + eps)."
                ).format(what=what)
            )
        if x.dtype == torch.float64 and out.dtype != torch.float64:
            raise CheckError(
                _(
                    "{what} has dtype {dtype}, expected torch.float64: compute in x's dtype "
                    "(no .float() working copy)."
                ).format(what=what, dtype=out.dtype)
            )
        tol = 1e-6 if x.dtype == torch.float64 else 5e-4
        try:
            assert_close(out, expected, what=what, rtol=tol, atol=tol)
        except CheckError as err:
            hint = _(
                " The channel means of your result are {means}"
                " (they should be 0) and each channel's values must be divided by "
                "sqrt(var + eps), with var over (N, H, W) and correction=0."
            ).format(means=_fmt(out.detach().double().mean(dim=(0, 2, 3))))
            if x.dtype == torch.float64:
                hint += _(
                    " x is float64 here: a float32 working copy (x.float()) keeps only about 7 "
                    "digits; compute in x's own dtype."
                )
            for variant, variant_hint in _normalize_variants(x, used_eps):
                if variant.shape == out.shape and torch.allclose(
                    out.detach().double(), variant.double(), rtol=tol, atol=tol
                ):
                    hint = variant_hint
                    break
            raise CheckError(f"{err}{hint}") from None
        _check_untouched(what, changed, ["x"])


def _fmt(values: torch.Tensor) -> str:
    return "[" + ", ".join(f"{float(v):.3g}" for v in values[:6]) + "]"


# ---------------------------------------------------------------------------------------------
# Exercise 6: pairwise_distances


def _reference_distances(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    diff = a.double()[:, None, :] - b.double()[None, :, :]  # (N, M, D)
    return diff.pow(2).sum(-1).sqrt().to(torch.promote_types(a.dtype, b.dtype))


def check_pairwise_distances(pairwise_distances) -> None:
    """Random point sets of several sizes (N == M, N != M, D = 1, D = 3, empty on either side),
    float64 precision, non-contiguous, then self-distances; a and b must not change."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    cases = [
        (torch.randn(3, 2, generator=g), torch.randn(4, 2, generator=g)),
        (torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)),
        (torch.randn(1, 1, generator=g), torch.randn(6, 1, generator=g)),
        (torch.randn(7, 4, generator=g), torch.randn(1, 4, generator=g)),
        (torch.randn(4, 6, generator=g), torch.randn(3, 6, generator=g)),
        (torch.randn(0, 3, generator=g), torch.randn(2, 3, generator=g)),
        (torch.randn(2, 3, generator=g), torch.randn(0, 3, generator=g)),
        (
            torch.randn(6, 5, generator=g).double() * 0.1 + 100.0,
            torch.randn(2, 5, generator=g).double() * 0.1 + 100.0,
        ),
        # a non-contiguous
        (
            layout(torch.randn(3, 4, generator=g), ["transpose", 0, 1]),
            torch.randn(2, 3, generator=g),
        ),
    ]
    for a_cpu, b_cpu in cases:
        a_spec, b = _on(device, a_cpu), b_cpu.to(device)
        a = build(a_spec)
        what = f"pairwise_distances(a {shape_str(a.shape)}, b {shape_str(b.shape)}, {a.dtype})"
        hint = ""
        if a.shape[0] == 0 or b.shape[0] == 0:
            hint = _(
                " One of the sets is empty here: the answer is an empty (N, M) tensor. "
                "Broadcasting handles that; a loop with torch.stack does not."
            )
        out, changed = _pure(pairwise_distances, what, a_spec, b, hint=hint)
        check_type(out, torch.Tensor, what)
        check_shape(out, (a.shape[0], b.shape[0]), names="N M", what=what)
        if out.dtype != a.dtype:
            raise CheckError(
                _(
                    "{what} has dtype {dtype}, expected {expected} (the inputs' dtype): compute "
                    "in the inputs' dtype, without a .float() copy or a float32 tensor to fill."
                ).format(what=what, dtype=out.dtype, expected=a.dtype)
            )
        check_device(out, device, what)
        expected = _reference_distances(a, b)
        tol = 1e-9 if a.dtype == torch.float64 else 1e-4
        try:
            assert_close(out, expected, what=what, rtol=tol, atol=tol)
        except CheckError as err:
            hint = ""
            if a.shape[0] == b.shape[0] and torch.allclose(out.double(), expected.T.double()):
                hint = _(" It is the transpose of the answer: row i must belong to a[i].")
            elif torch.allclose(out.double(), expected.double() ** 2, rtol=1e-4, atol=1e-4):
                hint = _(" These are squared distances: take the square root.")
            elif a.dtype == torch.float64:
                hint = _(
                    " The points are float64 and close together: a float32 working copy loses "
                    "the digits that tell them apart."
                )
            elif a.shape[1] != 2:
                hint = _(" Sum the squared differences over all D = {d} features.").format(
                    d=a.shape[1]
                )
            raise CheckError(f"{err}{hint}") from None
        _check_untouched(what, changed, ["a", "b"])
    # Distances of a set to itself: the diagonal is exactly 0, and must not be NaN.
    a = (torch.randn(64, 16, generator=g) * 3).to(device)
    what = _("pairwise_distances(a, a) for a of shape (64, 16)")
    out = _run(pairwise_distances, what, a, a)
    check_type(out, torch.Tensor, what)
    check_shape(out, (64, 64), names="N M", what=what)
    if bool(torch.isnan(out).any()):
        raise CheckError(
            _(
                "{what} contains NaN. With |a|^2 + |b|^2 - 2 a.b, rounding can make a squared "
                "distance slightly negative, and its square root is NaN: clamp at 0 before sqrt "
                "(or subtract the points directly)."
            ).format(what=what)
        )
    assert_close(out, _reference_distances(a, a), what=what, rtol=1e-3, atol=1e-2)


# ---------------------------------------------------------------------------------------------
# Exercise 7: masked_mean


def _reference_masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    rows = [
        x[i, : int(length)].mean(0) if int(length) > 0 else x.new_zeros(x.shape[2])
        for i, length in enumerate(lengths.tolist())
    ]
    return torch.stack(rows) if rows else x.new_zeros(0, x.shape[2])


_PADDING = {
    "large": None,  # 500 and a bit: finite, but far from the data
    "nan": float("nan"),
    "inf": float("inf"),
    "-inf": float("-inf"),
}


def _padded_batch(b: int, t: int, f: int, lengths: list[int], g: torch.Generator, pad="large"):
    x = torch.randn(b, t, f, generator=g)
    steps = torch.arange(t)[None, :, None]  # (1, T, 1)
    padding = steps >= torch.tensor(lengths, dtype=torch.int64).reshape(b, 1, 1)
    filler = 500.0 + torch.rand(b, t, f, generator=g)
    if _PADDING[pad] is not None:
        filler = torch.full((b, t, f), _PADDING[pad])
    x = torch.where(padding, filler, x)
    return x, torch.tensor(lengths, dtype=torch.int64), pad


def check_masked_mean(masked_mean) -> None:
    """Padded batches whose padding is large, NaN or infinite; full, short and zero lengths;
    T == F, float64, non-contiguous, an empty batch; x on another device (meta stands in)."""
    device = get_device()
    g = torch.Generator().manual_seed(6)
    cases = [
        _padded_batch(3, 5, 2, [5, 2, 1], g),
        _padded_batch(4, 6, 6, [1, 6, 3, 4], g),  # T == F
        _padded_batch(2, 4, 3, [4, 4], g),  # no padding at all
        _padded_batch(3, 3, 3, [0, 3, 2], g),  # an empty sequence: zeros, not NaN
        _padded_batch(1, 7, 1, [3], g),
        _padded_batch(0, 4, 2, [], g),  # an empty batch
        _padded_batch(3, 4, 2, [2, 4, 1], g, pad="nan"),  # padding that is not a number
        _padded_batch(2, 5, 3, [3, 1], g, pad="-inf"),
        _padded_batch(3, 3, 2, [1, 0, 2], g, pad="inf"),
    ]
    x64, len64, _pad = _padded_batch(3, 8, 4, [8, 5, 1], g)  # not `_`: the message lookup
    x64 = x64.double() * 1e-3 + 1e3  # float64 data with digits float32 cannot hold
    cases.append((x64, len64, "large"))
    xt, lent, _pad = _padded_batch(2, 5, 4, [2, 5], g)
    # the same values, non-contiguous
    cases.append(
        (layout(xt, ["transpose", 1, 2], ["contiguous"], ["transpose", 1, 2]), lent, "large")
    )
    for x_cpu, lengths_cpu, pad in cases:
        x_spec, lengths = _on(device, x_cpu), lengths_cpu.to(device)
        x = build(x_spec)
        pad_note = "" if pad == "large" else _(", padding filled with {pad}").format(pad=pad)
        what = f"masked_mean({_describe(x)}, lengths={lengths_cpu.tolist()}{pad_note})"
        hint = ""
        if x.shape[0] == 0:
            hint = _(
                " The batch is empty (B = 0): the answer is an empty (0, F) tensor. "
                "lengths.max() and friends fail on an empty tensor; use T = x.shape[1]."
            )
        out, changed = _pure(masked_mean, what, x_spec, lengths, hint=hint)
        check_type(out, torch.Tensor, what)
        check_shape(out, (x.shape[0], x.shape[2]), names="B F", what=what)
        if x.dtype == torch.float64 and out.dtype != torch.float64:
            raise CheckError(
                _(
                    "{what} has dtype {dtype}, expected torch.float64: compute in x's dtype "
                    "(no .float() working copy)."
                ).format(what=what, dtype=out.dtype)
            )
        check_device(out, device, what)
        expected = _reference_masked_mean(x, lengths)
        bad_rows = (
            torch.isnan(out).any(dim=1).cpu() if out.numel() else torch.zeros(0, dtype=torch.bool)
        )
        if bool(bad_rows.any()) or bool(torch.isinf(out).any()):
            real = bad_rows & (lengths_cpu > 0)
            if pad != "large" and (bool(real.any()) or bool(torch.isinf(out).any())):
                raise CheckError(
                    _(
                        "{what} contains NaN or inf in rows that have real steps. The padding "
                        "holds {pad} here, and multiplying by a mask does not remove it: "
                        "{pad} * 0 is nan. Select the real steps instead: torch.where(mask, x, 0) "
                        "or x.masked_fill(~mask, 0), then sum."
                    ).format(what=what, pad=pad)
                )
            raise CheckError(
                _(
                    "{what} contains NaN. A sequence of length 0 divides 0 by 0: divide by "
                    "lengths.clamp(min=1) so that it gives zeros."
                ).format(what=what)
            )
        tol = 1e-9 if x.dtype == torch.float64 else 1e-4
        try:
            assert_close(out, expected, what=what, rtol=tol, atol=tol)
        except CheckError as err:
            hint = _(
                " Padding positions hold large values here (about 500): they must not enter the "
                "sum, and each row must be divided by its own length, not by T."
            )
            if x.dtype == torch.float64:
                hint += _(" x is float64: a float32 working copy loses digits; keep x's dtype.")
            raise CheckError(f"{err}{hint}") from None
        _check_untouched(what, changed, ["x", "lengths"])
    what = _("masked_mean(x on another device (meta, a stand-in for a GPU), lengths on it too)")
    _check_on_meta(
        masked_mean,
        what,
        [{"shape": [3, 5, 2], "dtype": "float32"}, {"shape": [3], "dtype": "int64"}],
        _(
            "Make every tensor you create on x's device: torch.arange(T, device=x.device). On a "
            "GPU, a CPU tensor next to x fails the same way."
        ),
    )


# ---------------------------------------------------------------------------------------------
# Exercise 8: attention_scores


def check_attention_scores(attention_scores) -> None:
    """Batched, multi-head queries and keys; T != S, T == S, D = 1, float64, non-contiguous;
    q and k must not change."""
    device = get_device()
    g = torch.Generator().manual_seed(7)
    cases = [
        (torch.randn(2, 3, 4, 8, generator=g), torch.randn(2, 3, 5, 8, generator=g)),
        (torch.randn(1, 2, 6, 4, generator=g), torch.randn(1, 2, 6, 4, generator=g)),
        (torch.randn(3, 1, 2, 1, generator=g), torch.randn(3, 1, 3, 1, generator=g)),
        (torch.randn(1, 1, 1, 16, generator=g), torch.randn(1, 1, 4, 16, generator=g)),
        (torch.randn(2, 4, 3, 6, generator=g), torch.randn(2, 4, 2, 6, generator=g)),
        (
            torch.randn(2, 2, 3, 24, generator=g).double() * 10,
            torch.randn(2, 2, 4, 24, generator=g).double() * 10,
        ),
        # heads split from (B, T, H, D) and moved forward: a non-contiguous view, as in a model
        (
            layout(torch.randn(2, 5, 4, 3, generator=g), ["transpose", 1, 2]),
            layout(torch.randn(2, 6, 4, 3, generator=g), ["transpose", 1, 2]),
        ),
    ]
    for q_cpu, k_cpu in cases:
        q_spec, k_spec = _on(device, q_cpu), _on(device, k_cpu)
        q, k = build(q_spec), build(k_spec)
        what = f"attention_scores({_describe(q, 'q')}, {_describe(k, 'k')})"
        hint = ""
        if not q.is_contiguous():
            hint = _(
                " q and k are non-contiguous here (heads split off with a transpose), and view "
                "needs contiguous memory: use reshape, or matmul / einsum on the 4-d tensors."
            )
        out, changed = _pure(attention_scores, what, q_spec, k_spec, hint=hint)
        b, h, t, d = q.shape
        check_type(out, torch.Tensor, what)
        check_shape(out, (b, h, t, k.shape[2]), names="B H T S", what=what)
        if out.dtype != q.dtype:
            raise CheckError(
                _(
                    "{what} has dtype {dtype}, expected {expected} (q's dtype): compute in the "
                    "inputs' dtype, without a .float() copy."
                ).format(what=what, dtype=out.dtype, expected=q.dtype)
            )
        check_device(out, device, what)
        expected = (q.double() @ k.double().transpose(-2, -1) / math.sqrt(d)).to(q.dtype)
        # float64: a scale rounded to float32 (torch.tensor(D).sqrt()) is still right
        rtol, atol = (1e-7, 1e-9) if q.dtype == torch.float64 else (1e-4, 1e-5)
        try:
            assert_close(out, expected, what=what, rtol=rtol, atol=atol)
        except CheckError as err:
            hint = ""
            ratio = (out.double() / expected.double()).flatten()
            ratio = ratio[torch.isfinite(ratio)]
            if ratio.numel() and torch.allclose(ratio, torch.full_like(ratio, math.sqrt(d))):
                hint = _(" Every score is sqrt(D) times too big: divide by math.sqrt(D).")
            elif (
                ratio.numel()
                and d > 1
                and torch.allclose(ratio, torch.full_like(ratio, 1 / math.sqrt(d)))
            ):
                hint = _(" Every score is sqrt(D) times too small: divide by sqrt(D), not by D.")
            elif q.dtype == torch.float64:
                hint = _(
                    " q and k are float64 here: a float32 working copy loses digits; keep "
                    "their dtype."
                )
            elif t == k.shape[2]:
                hint = _(
                    " Row t must hold query t's scores against every key: "
                    "scores[..., t, s] = q[..., t, :] . k[..., s, :] / sqrt(D)."
                )
            raise CheckError(f"{err}{hint}") from None
        _check_untouched(what, changed, ["q", "k"])
