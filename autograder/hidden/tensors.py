"""Hidden checks for 01_tensors."""

from __future__ import annotations

import math

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
    shape_str,
)
from tutorial_lib.device import get_device


def _run(fn, what: str, *inputs, hint: str = "", when: str = ""):
    """What the learner's function returned for ``inputs`` (tensors or layout descriptions).

    An error it raises becomes a CheckError (NotImplementedError passes through); ``hint`` is
    added to the message when the error's text contains ``when``.
    """
    try:
        return observe(probes.probe_tensors, fn, {"inputs": list(inputs)}, what)
    except AnswerRaised as err:
        if hint and when in err.message:
            raise CheckError(f"{err}{hint}") from None
        raise


def _describe(x: torch.Tensor) -> str:
    contiguity = "" if x.is_contiguous() else ", non-contiguous"
    return f"x of shape {shape_str(x.shape)}, {x.dtype}{contiguity}"


# ---------------------------------------------------------------------------------------------
# Exercise 1: labels_to_tensor


def check_labels_to_tensor(labels_to_tensor) -> None:
    """Lists of Python ints of several lengths (empty, one, large values) -> int64 on device."""
    device = get_device()
    g = torch.Generator().manual_seed(0)
    cases = [
        [3, 1, 2],
        [7],
        [-100, 0, 5],  # -100 is the usual "ignore this position" label
        [2**40 + 1, 2**33],  # too big for int32, not exact in float32
        torch.randint(0, 10, (50,), generator=g).tolist(),
    ]
    for labels in cases:
        what = f"labels_to_tensor({labels if len(labels) <= 5 else 'a list of 50 labels'})"
        out = observe(call, labels_to_tensor, {"args": [list(labels), device]}, what)["result"]
        check_type(out, torch.Tensor, what)
        check_shape(out, (len(labels),), names="N", what=what)
        check_dtype(out, torch.int64, what)
        check_device(out, device, what)
        expected = torch.tensor(labels, dtype=torch.int64, device=device)
        assert_close(out, expected, what=what)
    what = "labels_to_tensor([]) (an empty batch)"
    out = observe(call, labels_to_tensor, {"args": [[], device]}, what)["result"]
    check_type(out, torch.Tensor, what)
    check_shape(out, (0,), names="N", what=what)
    if out.dtype != torch.int64:
        raise CheckError(
            f"{what} has dtype {out.dtype}, expected torch.int64. With no numbers to look at, "
            "torch.tensor([]) falls back to float32: pass dtype=torch.int64 explicitly."
        )
    check_device(out, device, what)


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
        check_type(result, tuple, what)
        if len(result) != 2:
            raise CheckError(f"{what} should return (shared, copied), got {len(result)} items.")
        shared, copied = result
        for label, t in (("shared", shared), ("copied", copied)):
            check_type(t, torch.Tensor, f"{label} from {what}")
            check_shape(t, original.shape, what=f"{label} from {what}")
            check_device(t, "cpu", f"{label} from {what}")
        if seen["same_memory"] and original.size > 0:
            raise CheckError(
                f"shared and copied from {what} are the same memory: copied must be independent."
                " Make it with torch.tensor(a) or torch.from_numpy(a).clone()."
            )
        first = (0,) * original.ndim
        last = tuple(s - 1 for s in original.shape)
        at_first, at_last = _index_str(first), _index_str(last)
        old = original[first].item()
        new = probes.written_value(old)
        if seen["shared_first_after_array_write"] != new:
            raise CheckError(
                f"{what}: after a[{at_first}] = {new} the shared tensor still holds {old}: it does "
                "not share memory with the array. torch.tensor(a) always copies, and so does any "
                "cast to another dtype (torch.as_tensor(a, dtype=...), .float()). "
                "torch.from_numpy(a) shares."
            )
        if seen["copied_first_after_array_write"] != old:
            raise CheckError(
                f"{what}: after a[{at_first}] = {new} the copied tensor changed too: it shares "
                "memory with the array. torch.from_numpy and torch.as_tensor share; "
                "torch.tensor(a) or .clone() makes an independent copy."
            )
        if seen["array_last_after_shared_write"] != 77:
            raise CheckError(
                f"{what}: after shared[{at_last}] = 77 the array did not change: shared is not a "
                "view of the array's memory. Use torch.from_numpy(a)."
            )
        if seen["array_last_after_copied_write"] == 55:
            raise CheckError(
                f"{what}: after copied[{at_last}] = 55 the array changed: copied shares memory."
            )
        expected_dtype = torch.from_numpy(original).dtype
        check_dtype(shared, expected_dtype, f"shared from {what}")
        check_dtype(copied, expected_dtype, f"copied from {what}")
        assert_close(shared, torch.from_numpy(original), what=f"shared from {what}")
        assert_close(copied, torch.from_numpy(original), what=f"copied from {what}")


# ---------------------------------------------------------------------------------------------
# Exercise 3: to_nchw

_PERMUTE_HINT = (
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
            (0, 3, 4, 2),
        ]
    ]
    cases.append(torch.randint(0, 256, (2, 3, 5, 4), generator=g, dtype=torch.uint8))
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
    """Several NHWC batches (square, not square, size-1, empty, uint8, non-contiguous)."""
    device = get_device()
    g = torch.Generator().manual_seed(2)
    for spec_cpu in _nhwc_cases(g):
        spec = _on(device, spec_cpu)
        x = build(spec)
        what = f"to_nchw({_describe(x)})"
        out = _run(to_nchw, what, spec)
        n, h, w, c = x.shape
        check_type(out, torch.Tensor, what)
        check_shape(out, (n, c, h, w), names="N C H W", what=what)
        try:
            assert_close(out, x.permute(0, 3, 1, 2), what=what)
        except CheckError as err:
            raise CheckError(f"{err}{_PERMUTE_HINT}") from None


# ---------------------------------------------------------------------------------------------
# Exercise 4: flatten_features


def _flatten_cases(g: torch.Generator) -> list:
    return [
        torch.randn(4, 3, 5, 5, generator=g),
        layout(torch.randn(2, 3, 4, 5, generator=g), ["permute", 0, 2, 3, 1]),  # non-contiguous
        layout(torch.randn(3, 6, 4, generator=g), ["transpose", 1, 2]),  # non-contiguous
        torch.randn(1, 7, generator=g),
        torch.randn(5, 1, 1, 1, generator=g),
        torch.randint(0, 9, (2, 2, 3), generator=g),
        torch.randn(0, 3, 4, generator=g),  # an empty batch
    ]


def check_flatten_features(flatten_features) -> None:
    """Contiguous and non-contiguous inputs, 2-d to 4-d, int64, and an empty batch."""
    device = get_device()
    g = torch.Generator().manual_seed(3)
    for spec_cpu in _flatten_cases(g):
        spec = _on(device, spec_cpu)
        x = build(spec)
        what = f"flatten_features({_describe(x)})"
        hint = ""
        if not x.is_contiguous():
            hint = (
                " The input is non-contiguous (a permuted view), and view needs contiguous "
                "memory: use reshape or flatten, which copy when they must."
            )
        elif x.shape[0] == 0:
            hint = (
                " The batch is empty, so a -1 cannot be inferred (0 = 0 * anything): give the "
                "feature size explicitly (math.prod(x.shape[1:])) or use x.flatten(1)."
            )
        out = _run(flatten_features, what, spec, hint=hint)
        n = x.shape[0]
        features = math.prod(x.shape[1:])
        check_type(out, torch.Tensor, what)
        check_shape(out, (n, features), names="N F", what=what)
        assert_close(out, x.reshape(n, features), what=what)


# ---------------------------------------------------------------------------------------------
# Exercise 5: normalize_per_channel

_KEEPDIM_HINT = (
    " Reducing over (0, 2, 3) without keepdim=True leaves shape (C,), and broadcasting lines "
    "up trailing dimensions: (C,) meets W, not C. Keep the reduced dimensions (shape "
    "(1, C, 1, 1)) so each channel gets its own statistics."
)


def _channel_batches(g: torch.Generator) -> list:
    shapes = [(4, 3, 5, 3), (2, 3, 4, 4), (8, 2, 3, 5), (1, 4, 2, 2), (3, 1, 1, 1), (2, 3, 1, 3)]
    batches: list = []
    for shape in shapes:
        c = shape[1]
        scale = torch.rand(1, c, 1, 1, generator=g) * 4 + 0.5  # very different channels
        shift = torch.randn(1, c, 1, 1, generator=g) * 10
        batches.append(torch.randn(shape, generator=g) * scale + shift)
    dead = torch.randn(3, 2, 4, 4, generator=g)
    dead[:, 1] = 3.0  # a constant channel: variance 0, which is what eps is for
    batches.append(dead)
    batches.append(batches[0].to(torch.float64))
    batches.append(layout(batches[1], ["channels_last"]))
    batches.append(layout(torch.randn(5, 6, 3, 2, generator=g), ["permute", 0, 3, 1, 2]))
    return batches


def _normalize_variants(x: torch.Tensor) -> list[tuple[torch.Tensor, str]]:
    """Wrong answers a learner is likely to have written, each with what to tell them."""

    def norm(dims, keepdim=True, correction=0):
        mean = x.mean(dim=dims, keepdim=keepdim)
        var = x.var(dim=dims, keepdim=keepdim, correction=correction)
        return (x - mean) / torch.sqrt(var + 1e-5)

    variants = [
        (lambda: norm((0, 2, 3), keepdim=False), _KEEPDIM_HINT),
        (
            lambda: norm((0, 1, 2, 3)),
            " You normalised with one mean and variance for the whole batch: each channel needs "
            "its own, over dims (0, 2, 3).",
        ),
        (
            lambda: norm((2, 3)),
            " You normalised each image's channel separately (over (2, 3)): per-channel "
            "statistics also pool the batch, dims (0, 2, 3).",
        ),
        (
            lambda: norm((1, 2, 3)),
            " You normalised each sample separately (over (1, 2, 3)): reduce over (0, 2, 3).",
        ),
        (
            lambda: norm((0, 2, 3), correction=1),
            " The variance divides by n - 1 (torch.var's default): pass correction=0.",
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
    """Against batch normalisation's statistics, including W == C where broadcasting lies."""
    device = get_device()
    g = torch.Generator().manual_seed(4)
    for spec_cpu in _channel_batches(g):
        spec = _on(device, spec_cpu)
        x = build(spec)
        what = f"normalize_per_channel({_describe(x)})"
        out = _run(
            normalize_per_channel, what, spec, hint=_KEEPDIM_HINT, when="must match the size"
        )
        check_type(out, torch.Tensor, what)
        check_shape(out, tuple(x.shape), names="N C H W", what=what)
        expected = F.batch_norm(x, None, None, training=True, eps=1e-5)
        if bool(torch.isnan(out).any()):
            raise CheckError(
                f"{what} contains NaN. A channel whose values are all equal has variance 0, and "
                "0 / 0 is NaN: that is what eps is for. Divide by torch.sqrt(var + eps)."
            )
        try:
            assert_close(out, expected, what=what, rtol=1e-4, atol=1e-4)
        except CheckError as err:
            hint = (
                f" The channel means of your result are {_fmt(out.detach().double().mean(dim=(0, 2, 3)))}"
                " (they should be 0) and each channel's values must be divided by "
                "sqrt(var + eps), with var over (N, H, W) and correction=0."
            )
            for variant, variant_hint in _normalize_variants(x):
                if variant.shape == out.shape and torch.allclose(
                    out.detach().double(), variant.double(), rtol=1e-4, atol=1e-4
                ):
                    hint = variant_hint
                    break
            raise CheckError(f"{err}{hint}") from None


def _fmt(values: torch.Tensor) -> str:
    return "[" + ", ".join(f"{float(v):.3g}" for v in values[:6]) + "]"


# ---------------------------------------------------------------------------------------------
# Exercise 6: pairwise_distances


def _reference_distances(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    diff = a.double()[:, None, :] - b.double()[None, :, :]  # (N, M, D)
    return diff.pow(2).sum(-1).sqrt().to(torch.promote_types(a.dtype, b.dtype))


def check_pairwise_distances(pairwise_distances) -> None:
    """Random point sets of several sizes (N == M, N != M, D = 1, empty), then self-distances."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    cases = [
        (torch.randn(3, 2, generator=g), torch.randn(4, 2, generator=g)),
        (torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)),
        (torch.randn(1, 1, generator=g), torch.randn(6, 1, generator=g)),
        (torch.randn(7, 4, generator=g), torch.randn(1, 4, generator=g)),
        (torch.randn(4, 6, generator=g), torch.randn(3, 6, generator=g)),
        (torch.randn(0, 3, generator=g), torch.randn(2, 3, generator=g)),
        (torch.randn(6, 5, generator=g).double(), torch.randn(2, 5, generator=g).double()),
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
        out = _run(pairwise_distances, what, a_spec, b)
        check_type(out, torch.Tensor, what)
        check_shape(out, (a.shape[0], b.shape[0]), names="N M", what=what)
        expected = _reference_distances(a, b)
        try:
            assert_close(out, expected, what=what, rtol=1e-4, atol=1e-4, exact_dtype=False)
        except CheckError as err:
            hint = ""
            if a.shape[0] == b.shape[0] and torch.allclose(out.double(), expected.T.double()):
                hint = " It is the transpose of the answer: row i must belong to a[i]."
            elif torch.allclose(out.double(), expected.double() ** 2, rtol=1e-4, atol=1e-4):
                hint = " These are squared distances: take the square root."
            raise CheckError(f"{err}{hint}") from None
    # Distances of a set to itself: the diagonal is exactly 0, and must not be NaN.
    a = (torch.randn(64, 16, generator=g) * 3).to(device)
    what = "pairwise_distances(a, a) for a of shape (64, 16)"
    out = _run(pairwise_distances, what, a, a)
    check_type(out, torch.Tensor, what)
    check_shape(out, (64, 64), names="N M", what=what)
    if bool(torch.isnan(out).any()):
        raise CheckError(
            f"{what} contains NaN. With |a|^2 + |b|^2 - 2 a.b, rounding can make a squared "
            "distance slightly negative, and its square root is NaN: clamp at 0 before sqrt "
            "(or subtract the points directly)."
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


def _padded_batch(b: int, t: int, f: int, lengths: list[int], g: torch.Generator):
    x = torch.randn(b, t, f, generator=g)
    steps = torch.arange(t)[None, :, None]  # (1, T, 1)
    padding = steps >= torch.tensor(lengths, dtype=torch.int64).reshape(b, 1, 1)
    x = x.masked_fill(padding, 0.0) + padding * (500.0 + torch.rand(b, t, f, generator=g))
    return x, torch.tensor(lengths, dtype=torch.int64)


def check_masked_mean(masked_mean) -> None:
    """Padded batches whose padding is large and non-zero; full, short and zero lengths."""
    device = get_device()
    g = torch.Generator().manual_seed(6)
    cases = [
        _padded_batch(3, 5, 2, [5, 2, 1], g),
        _padded_batch(4, 6, 6, [1, 6, 3, 4], g),  # T == F
        _padded_batch(2, 4, 3, [4, 4], g),  # no padding at all
        _padded_batch(3, 3, 3, [0, 3, 2], g),  # an empty sequence: zeros, not NaN
        _padded_batch(1, 7, 1, [3], g),
        _padded_batch(0, 4, 2, [], g),  # an empty batch
    ]
    x64, len64 = _padded_batch(3, 8, 4, [8, 5, 1], g)
    cases.append((x64.double(), len64))
    xt, lent = _padded_batch(2, 5, 4, [2, 5], g)
    # the same values, non-contiguous
    cases.append((layout(xt, ["transpose", 1, 2], ["contiguous"], ["transpose", 1, 2]), lent))
    for x_cpu, lengths_cpu in cases:
        x_spec, lengths = _on(device, x_cpu), lengths_cpu.to(device)
        x = build(x_spec)
        what = f"masked_mean({_describe(x)}, lengths={lengths_cpu.tolist()})"
        out = _run(masked_mean, what, x_spec, lengths)
        check_type(out, torch.Tensor, what)
        check_shape(out, (x.shape[0], x.shape[2]), names="B F", what=what)
        expected = _reference_masked_mean(x, lengths)
        if bool(torch.isnan(out).any()):
            raise CheckError(
                f"{what} contains NaN. A sequence of length 0 divides 0 by 0: divide by "
                "lengths.clamp(min=1) so that it gives zeros."
            )
        try:
            assert_close(out, expected, what=what, rtol=1e-4, atol=1e-4)
        except CheckError as err:
            hint = (
                " Padding positions hold large values here (about 500): they must not enter the "
                "sum, and each row must be divided by its own length, not by T."
            )
            raise CheckError(f"{err}{hint}") from None


# ---------------------------------------------------------------------------------------------
# Exercise 8: attention_scores


def check_attention_scores(attention_scores) -> None:
    """Batched, multi-head queries and keys; T != S, T == S, D = 1, float64, non-contiguous."""
    device = get_device()
    g = torch.Generator().manual_seed(7)
    cases = [
        (torch.randn(2, 3, 4, 8, generator=g), torch.randn(2, 3, 5, 8, generator=g)),
        (torch.randn(1, 2, 6, 4, generator=g), torch.randn(1, 2, 6, 4, generator=g)),
        (torch.randn(3, 1, 2, 1, generator=g), torch.randn(3, 1, 3, 1, generator=g)),
        (torch.randn(1, 1, 1, 16, generator=g), torch.randn(1, 1, 4, 16, generator=g)),
        (
            torch.randn(2, 2, 3, 5, generator=g).double(),
            torch.randn(2, 2, 4, 5, generator=g).double(),
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
        what = f"attention_scores(q {shape_str(q.shape)}, k {shape_str(k.shape)}, {q.dtype})"
        out = _run(attention_scores, what, q_spec, k_spec)
        b, h, t, d = q.shape
        check_type(out, torch.Tensor, what)
        check_shape(out, (b, h, t, k.shape[2]), names="B H T S", what=what)
        expected = (q.double() @ k.double().transpose(-2, -1) / math.sqrt(d)).to(q.dtype)
        try:
            assert_close(out, expected, what=what, rtol=1e-4, atol=1e-5)
        except CheckError as err:
            hint = ""
            ratio = (out.double() / expected.double()).flatten()
            ratio = ratio[torch.isfinite(ratio)]
            if ratio.numel() and torch.allclose(ratio, torch.full_like(ratio, math.sqrt(d))):
                hint = " Every score is sqrt(D) times too big: divide by math.sqrt(D)."
            elif (
                ratio.numel()
                and d > 1
                and torch.allclose(ratio, torch.full_like(ratio, 1 / math.sqrt(d)))
            ):
                hint = " Every score is sqrt(D) times too small: divide by sqrt(D), not by D."
            elif t == k.shape[2]:
                hint = " Row t must hold query t's scores against every key: scores[..., t, s] = q[..., t, :] . k[..., s, :] / sqrt(D)."
            raise CheckError(f"{err}{hint}") from None
