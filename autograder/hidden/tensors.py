"""Hidden checks for 01_tensors.

Exercises whose answer is a function of tensors are :class:`Contract`\\ s
(``autograder/contracts.py``): a reference, a function that draws inputs, and the families
of inputs and behaviours the text promises. ``shared_and_copied``'s contract says what it
returns (the array's values, dtype and shape, for any array); which tensor shares the
array's memory no contract says, and stays hand-written.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from hypothesis import strategies as st

from autograder.boundary import call, observe
from autograder.contracts import (
    FLOAT64_EXACT,
    TOLERANCE,
    Build,
    Contract,
    Draw,
    Inputs,
    describe,
    uses,
)
from autograder.probes import tensors as probes
from tutorial_lib.checks import CheckError, assert_close
from tutorial_lib.i18n import _


def _close(got, expected: torch.Tensor, what: str, tol: tuple[float, float] | None = None):
    """The contracts' comparison (type, shape, dtype, values), with the exercise's hint added
    by the caller when it fails."""
    rtol, atol = tol or TOLERANCE.get(expected.dtype, (0.0, 0.0))
    assert_close(got, expected.detach(), rtol=rtol, atol=atol, what=what)
    _exactly(got, expected, what)


def _exactly(got, expected: torch.Tensor, what: str) -> None:
    """Integers compared exactly: assert_close compares in float64, which cannot tell int64
    values above 2**53 apart (a round trip through float64 would pass it)."""
    if (
        expected.dtype.is_floating_point
        or expected.dtype.is_complex
        or expected.device.type == "meta"
        or not isinstance(got, torch.Tensor)
        or got.shape != expected.shape
        or got.device.type == "meta"
    ):
        return
    g, e = got.detach().cpu(), expected.detach().cpu()
    differ = g != e
    if bool(differ.any()):
        at = tuple(int(i) for i in differ.nonzero()[0])
        raise CheckError(
            _(
                "{what} differs from the expected integers at {n} of {total} positions. First "
                "at index {at}: got {got}, expected {expected}. Integers must be exact: a round "
                "trip through float32 (above 2**24) or float64 (above 2**53) rounds them."
            ).format(
                what=what,
                n=int(differ.sum()),
                total=differ.numel(),
                at=at,
                got=int(g[at]),
                expected=int(e[at]),
            )
        )


def _hinted(
    hint: Callable[[object, torch.Tensor, Inputs], str], tolerance: dict | None = None
) -> Callable:
    """A contract's comparison that adds ``hint(got, expected, inputs)`` to its failure: the
    hint sees what came back, so it speaks only of the mistake it recognises. ``tolerance``
    maps a dtype to (rtol, atol) where the exercise asks for more than TOLERANCE."""

    def compare(got, expected: torch.Tensor, what: str, inputs: Inputs) -> None:
        tol = (tolerance or {}).get(expected.dtype)
        try:
            _close(got, expected, what, tol)
        except CheckError as err:
            raise CheckError(f"{err}{hint(got, expected, inputs)}") from None

    return compare


def _same_kind(got, expected: torch.Tensor) -> bool:
    """A tensor of the expected shape and dtype (its values are what differs)."""
    return (
        isinstance(got, torch.Tensor)
        and got.shape == expected.shape
        and got.dtype == expected.dtype
    )


def _is_half(dtype: torch.dtype) -> bool:
    return dtype in (torch.float16, torch.bfloat16)


# Empty inputs in the dtypes the families do not draw. The dtypes family draws empty float16,
# bfloat16 and float64 inputs; where "any dtype" is promised, a separate path for an empty
# input that builds its result with torch.zeros(..., device=x.device) (float32 whatever x is)
# must also keep int64, uint8 and bool. (Bool, and int64 beyond 2**53, are also called once
# each: the values family draws few examples, and may draw no int64 at all.)
_UNDRAWN_DTYPES = (torch.int64, torch.uint8, torch.bool)


def _any_dtype_inputs(*shape: int) -> list[torch.Tensor]:
    """A bool tensor, int64 values above 2**53, then empty batches in the dtypes no family
    draws."""
    g = torch.Generator().manual_seed(0)
    empty = [torch.zeros(0, *shape[1:], dtype=t) for t in _UNDRAWN_DTYPES]
    bools = torch.randint(0, 2, shape, generator=g).bool()
    large = torch.randint(2**54, 2**55, shape, generator=g)
    return [bools, large, *empty]


def _empty_keeps_dtype(answer, name: str, calls: list[tuple[list, torch.Tensor]]) -> None:
    """Call ``answer`` on each ``args`` (most of them empty); its result must equal
    ``expected``: its shape, dtype and values, integers exactly."""
    for args, expected in calls:
        what = f"{name}({', '.join(describe(a) for a in args)})"
        got = observe(call, answer, {"args": args}, what)["result"]
        kept = not isinstance(got, torch.Tensor) or got.dtype == expected.dtype
        if not kept and got.shape == expected.shape and expected.numel() > 0:
            raise CheckError(
                _(
                    "{what} has dtype {got}, expected {expected}: the result keeps x's dtype, "
                    "whatever it is. Arithmetic changes it (x * 1 or x + 0 makes a bool tensor "
                    "int64), and so do .float() and .double(); moving axes and reshaping do not."
                ).format(what=what, got=got.dtype, expected=expected.dtype)
            )
        if not kept and got.shape == expected.shape:
            raise CheckError(
                _(
                    "{what} has dtype {got}, expected {expected}. An empty input must give a "
                    "result in the input's dtype too: a separate path that builds it with "
                    "torch.zeros(...) gets float32 unless told. Leave the empty case to the "
                    "general code (broadcasting, reductions and reshape handle a size of 0), or "
                    "build it with x.new_zeros(...)."
                ).format(what=what, got=got.dtype, expected=expected.dtype)
            )
        _close(got, expected, what)


def _stays_with_inputs(answer, name: str) -> None:
    """With the notebook's ``device`` naming another device than the inputs', the result must
    stay on the inputs' device (the CPU here): on a GPU machine, ``.to(device)`` moves a CPU x's
    result away from it, and ``device=device`` mixes devices."""
    what = _("{name}(inputs on the CPU, the notebook's device a GPU)").format(name=name)
    seen = observe(probes.probe_global_device, answer, {"exercise": name}, what)
    if "raised" in seen:
        raise CheckError(
            _(
                "{what} raised {error}. The answer uses the notebook's global `device`, not "
                "the device of its inputs: make new tensors with device=x.device (or x.new_zeros, "
                "torch.zeros_like), so they live where the inputs do."
            ).format(what=what, error=seen["raised"])
        )
    moved = [d for d in seen.get("devices", []) if d != "cpu"]
    if moved:
        raise CheckError(
            _(
                "{what} returned a tensor on {device}: the answer moved its result to the "
                "notebook's global `device`. The result belongs where the inputs are; leave "
                "moving data to the caller (no .to(device) inside the function)."
            ).format(what=what, device=moved[0])
        )


# ---------------------------------------------------------------------------------------------
# Exercise 1: labels_to_tensor


def _reference_labels(labels: list, device: torch.device) -> torch.Tensor:
    return torch.tensor(labels, dtype=torch.int64, device=device)


_LABEL = st.one_of(
    st.integers(-100, 20),  # -100 is the usual "ignore this position" label
    # odd and above 2**54: exact neither in float32 (above 2**24) nor in float64 (2**53)
    st.integers(2**53, 2**61).map(lambda v: 2 * v + 1),
    st.integers(-(2**62), -(2**31) - 1),  # too small for int32
)


def _draw_labels(d: Draw) -> Inputs:
    """A list of ints (empty in edges, large ones too) and a device: meta, standing in for a
    GPU, in the device family (the answer must create the tensor where it is told). In values,
    a list of two or more repeats its first label at the end: labels repeat (one per sample),
    and every one of them must come back, in order."""
    labels = [d.draw(_LABEL) for _label in range(d.size(1, 6, empty_ok=True))]
    if d.family == "values" and len(labels) > 1:
        labels.append(labels[0])
    return Inputs((labels, torch.device("meta" if d.family == "device" else "cpu")))


def _labels_hint(got, expected: torch.Tensor, inputs: Inputs) -> str:
    labels = inputs.args[0]
    if labels and _same_kind(got, expected) and max(abs(v) for v in labels) > 2**24:
        return _(
            " Large labels are not exact in floats (float32 above 2**24, float64 above "
            "2**53): build the int64 tensor directly from the list "
            "(torch.tensor(labels, dtype=torch.int64)), not through a float tensor and .long()."
        )
    return ""


LABELS_TO_TENSOR = Contract(
    "labels_to_tensor",
    _reference_labels,
    _draw_labels,
    families=("values", "edges", "device"),
    arg_names=("labels", "device"),
    compare=_hinted(_labels_hint),
)


@uses(LABELS_TO_TENSOR)
def check_labels_to_tensor(labels_to_tensor) -> None:
    """The contract: the caller's list comes back unchanged, as every argument must, and the
    result is on the device given, even where the answer reads values back (the device
    family then runs it on stand-ins that keep them, ``probes/devices.py``)."""


# ---------------------------------------------------------------------------------------------
# Exercise 2: shared_and_copied (a contract for what it returns; shared memory by hand)


def _index_str(index: tuple[int, ...]) -> str:
    return ", ".join(str(i) for i in index)


def _reference_shared_and_copied(a):
    return torch.from_numpy(a), torch.from_numpy(a).clone()


def _draw_array(d: Draw) -> Inputs:
    """Any array from_numpy takes: seven dtypes (bool too), 0-d and empty shapes, four memory layouts."""
    ndim = d.draw(st.integers(0 if d.family == "edges" else 1, 3))
    shape = [d.size(1, 4, empty_ok=True) for _ in range(ndim)]
    layouts = ["transposed", "strided", "F"] if d.family == "strides" else ["C"]
    spec = {
        "dtype": d.draw(st.sampled_from(probes.ARRAY_DTYPES)),
        "shape": shape,
        "seed": d.draw(st.integers(0, 99)),
        "layout": d.draw(st.sampled_from(layouts)),
    }
    label = _("a {layout} {dtype} array of shape {shape}").format(
        layout=spec["layout"], dtype=spec["dtype"], shape=tuple(shape)
    )
    return Inputs((Build(probes.build_array, spec, label),))


SHARED_AND_COPIED = Contract(
    "shared_and_copied",
    _reference_shared_and_copied,
    _draw_array,
    families=("values", "edges", "strides"),
    arg_names=("a",),
    hint=lambda family, inputs: _(
        "Both tensors keep the array's dtype and shape: torch.from_numpy(a) and "
        "torch.tensor(a) do; torch.Tensor(a), dtype=... and .float() change the dtype."
    ),
)


@uses(SHARED_AND_COPIED)
def check_shared_and_copied(shared_and_copied) -> None:
    """Mutate the array and the tensors; the first tensor must follow the array, the second not.
    (The contract has checked what comes back: two tensors with the array's values.)"""
    for index, (name, original) in enumerate(probes.numpy_cases()):
        what = f"shared_and_copied({name})"
        seen = observe(probes.probe_shared_and_copied, shared_and_copied, {"index": index}, what)
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


# ---------------------------------------------------------------------------------------------
# Exercise 3: to_nchw


def _draw_any_dtype(d: Draw, *shape: int) -> torch.Tensor:
    """A float32 tensor, or (in the values family) uint8 or int64 values beyond float64's
    exact range (2**53; so beyond float32's too): the answer must work for any dtype without a
    round trip through floats."""
    kind = d.draw(st.sampled_from(["float", "uint8", "int64"])) if d.family == "values" else "float"
    if kind == "uint8":
        return d.integers(*shape, low=0, high=256).to(torch.uint8)
    if kind == "int64":
        return d.integers(*shape, low=2**54, high=2**55)
    return d.tensor(*shape)


def _draw_nhwc(d: Draw) -> Inputs:
    """(N, H, W, C): an empty batch in edges, 1 to 4 channels, H != W, any dtype."""
    n = d.size(1, 3, empty_ok=True)
    return Inputs((_draw_any_dtype(d, n, d.size(1, 4), d.size(1, 4), d.size(1, 4)),))


def _to_nchw_hint(got, expected: torch.Tensor, inputs: Inputs) -> str:
    x = inputs.args[0]
    if not _same_kind(got, expected):
        if isinstance(got, torch.Tensor) and got.dim() == 4 and got.shape[1] == 3 != x.shape[-1]:
            return _(
                " This x has C = {c} channel(s): the answer must work for any number of "
                "channels, which permute(0, 3, 1, 2) does."
            ).format(c=x.shape[-1])
        return ""
    hint = _(
        " The shape is right but the values are scrambled: reshape and view keep the elements "
        "in memory order and only regroup them, they never move an axis. Moving the channel "
        "axis needs permute(0, 3, 1, 2)."
    )
    if not x.dtype.is_floating_point:
        hint += _(
            " (Integer values above 2**24 change in a round trip through float32, above 2**53 "
            "through float64.)"
        )
    return hint


TO_NCHW = Contract(
    "to_nchw",
    lambda x: x.permute(0, 3, 1, 2),
    _draw_nhwc,
    arg_names=("x",),
    compare=_hinted(_to_nchw_hint),
)


@uses(TO_NCHW)
def check_to_nchw(to_nchw) -> None:
    """The contract: any dtype and channel count, empty, non-contiguous, requiring grad, on
    another device; x left as it was. Then empty batches in other dtypes."""
    _stays_with_inputs(to_nchw, "to_nchw")
    _empty_keeps_dtype(
        to_nchw,
        "to_nchw",
        [([x], x.permute(0, 3, 1, 2)) for x in _any_dtype_inputs(2, 3, 4, 2)],
    )


# ---------------------------------------------------------------------------------------------
# Exercise 4: flatten_features


def _reference_flatten(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(x.shape[0], math.prod(x.shape[1:]))


def _draw_batch(d: Draw) -> Inputs:
    """(N, d1, ...) of 2 to 5 dimensions; N = 0 and N = 1 in edges; any dtype."""
    # In grad, 3-d from on: flatten(1) of a 2-d x is x itself, which has no grad_fn of its own
    # and so reads as "no gradient history" to the engine.
    low = 2 if d.family == "grad" else 1
    dims = [d.size(1, 4) for _dim in range(d.draw(st.integers(low, 4)))]
    return Inputs((_draw_any_dtype(d, d.size(1, 3, empty_ok=True), *dims),))


def _flatten_hint(got, expected: torch.Tensor, inputs: Inputs) -> str:
    x = inputs.args[0]
    if not isinstance(got, torch.Tensor) or got.shape == expected.shape:
        return ""
    if x.shape[0] == 1 and tuple(got.shape) == tuple(expected.shape[1:]):
        return _(" With one sample, a squeeze() removes the batch dimension too: leave it.")
    if x.dim() > 3:
        return _(
            " Every dimension after the first must be merged, however many there are: "
            "x.flatten(1) (start_dim=1, end_dim=-1)."
        )
    return ""


FLATTEN_FEATURES = Contract(
    "flatten_features",
    _reference_flatten,
    _draw_batch,
    arg_names=("x",),
    compare=_hinted(_flatten_hint),
)


@uses(FLATTEN_FEATURES)
def check_flatten_features(flatten_features) -> None:
    """The contract: 2-d to 5-d, N = 0 and 1, non-contiguous, any dtype, gradients, device.
    Then empty batches in other dtypes."""
    _stays_with_inputs(flatten_features, "flatten_features")
    _empty_keeps_dtype(
        flatten_features,
        "flatten_features",
        [([x], x.reshape(x.shape[0], 12)) for x in _any_dtype_inputs(2, 3, 4)],
    )


# ---------------------------------------------------------------------------------------------
# "No Python loops" (exercises 5 to 8): the number of torch calls must not grow with the sizes.

_LOOP_SIZES = (2, 5)


def _no_loops(answer, exercise: str) -> None:
    """Call the answer on inputs with every size 2, then 5: a vectorised answer makes the same
    number of torch calls on both, a Python loop over an axis makes more on the larger."""
    seen = observe(
        probes.probe_loop_calls,
        answer,
        {"exercise": exercise, "sizes": list(_LOOP_SIZES)},
        f"{exercise}(...)",
    )
    small, large = seen["calls"]
    if large > small:
        raise CheckError(
            _(
                "{name} makes {small} torch calls on inputs whose sizes are all {n_small} and "
                "{large} on inputs whose sizes are all {n_large}: the work is done in a Python "
                "loop (over a batch, a channel, a point or a row), which the text rules out. "
                "Express it with tensor operations on whole tensors (broadcasting, reductions "
                "with dim=, torch.where, matmul or einsum)."
            ).format(
                name=exercise,
                small=small,
                large=large,
                n_small=_LOOP_SIZES[0],
                n_large=_LOOP_SIZES[1],
            )
        )


# ---------------------------------------------------------------------------------------------
# Exercise 5: normalize_per_channel


def _keepdim_hint() -> str:
    # A function, not a constant: the message is looked up in the language of each call.
    return _(
        " Reducing over (0, 2, 3) without keepdim=True leaves shape (C,), and broadcasting lines "
        "up trailing dimensions: (C,) meets W, not C. Keep the reduced dimensions (shape "
        "(1, C, 1, 1)) so each channel gets its own statistics."
    )


def _normalized(
    x: torch.Tensor, eps: float, dims=(0, 2, 3), keepdim=True, correction=0, outside=False
) -> torch.Tensor:
    mean = x.mean(dim=dims, keepdim=keepdim)
    var = x.var(dim=dims, keepdim=keepdim, correction=correction)
    if outside:
        return (x - mean) / (torch.sqrt(var) + eps)
    return (x - mean) / torch.sqrt(var + eps)


def _reference_normalize(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """Batch normalisation's statistics, computed in float64 and returned in x's dtype."""
    return _normalized(x.double(), eps).to(x.dtype)


def _draw_channels(d: Draw) -> Inputs:
    """(N, C, H, W) with very different channels (W == C where broadcasting lies), at least
    two values per channel; sometimes a constant channel (variance 0) and another eps. In
    values (float32 only), sometimes channels with a tiny spread (variance about 1e-4, where
    eps=1e-9 and eps=1e-5 give clearly different results)."""
    n, c, h, w = d.size(1, 4), d.size(1, 4), d.size(1, 4), d.size(1, 4)
    if n * h * w == 1:
        w = 2  # one value per channel: F.batch_norm refuses it, and the text does not ask
    tiny = d.family == "values" and d.draw(st.booleans())
    (low, high), shift_range = ((0.01, 0.03), 0.05) if tiny else ((0.5, 4.5), 5.0)
    scale = d.tensor(1, c, 1, 1, low=low, high=high)
    shift = d.tensor(1, c, 1, 1, low=-shift_range, high=shift_range)
    x = d.tensor(n, c, h, w) * scale + shift
    if tiny:  # no constant channel, and an eps far below 1e-5 (or the default itself)
        eps = d.draw(st.sampled_from([1e-9, None]))
        return Inputs((x,), {} if eps is None else {"eps": eps})
    constant = d.draw(st.booleans())
    if constant:
        x[:, -1] = 3.0  # a constant channel: variance 0, which is what eps is for
    # eps=1e-9 only without one: it would blow float32's rounding of a 0 up to 1e-3
    eps = d.draw(st.sampled_from([None, 1e-2, 0.5] + ([] if constant else [1e-9])))
    return Inputs((x,), {} if eps is None else {"eps": eps})


def _normalize_variants(x: torch.Tensor, eps: float) -> list[tuple[torch.Tensor, str]]:
    """Wrong answers a learner is likely to have written, each with what to tell them."""
    variants = [
        (lambda: _normalized(x, eps, keepdim=False), _keepdim_hint()),
        (
            lambda: _normalized(x, eps, dims=(0, 1, 2, 3)),
            _(
                " You normalised with one mean and variance for the whole batch: each channel needs "
                "its own, over dims (0, 2, 3)."
            ),
        ),
        (
            lambda: _normalized(x, eps, dims=(2, 3)),
            _(
                " You normalised each image's channel separately (over (2, 3)): per-channel "
                "statistics also pool the batch, dims (0, 2, 3)."
            ),
        ),
        (
            lambda: _normalized(x, eps, dims=(1, 2, 3)),
            _(" You normalised each sample separately (over (1, 2, 3)): reduce over (0, 2, 3)."),
        ),
        (
            lambda: _normalized(x, eps, correction=1),
            _(" The variance divides by n - 1 (torch.var's default): pass correction=0."),
        ),
        (
            lambda: _normalized(x, 1e-5),
            _(
                " This was called with eps={eps:g} and your result matches eps=1e-5: use the eps "
                "argument, not a constant (F.batch_norm and nn.BatchNorm2d also need it passed)."
            ).format(eps=eps),
        ),
        (
            lambda: _normalized(x, eps, outside=True),
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


def _compare_normalize(got, expected: torch.Tensor, what: str, inputs: Inputs) -> None:
    """float32 within 5e-4 (a sum of many values), float64 within 1e-7; in float16 and
    bfloat16 only roughly: what that family checks is that x's dtype is kept."""
    x, eps = inputs.args[0], inputs.kwargs.get("eps", 1e-5)
    tol = {torch.float32: (5e-4, 5e-4), torch.float64: (1e-7, 1e-9)}.get(x.dtype, (0.1, 0.1))
    try:
        _close(got, expected, what, tol)
    except CheckError as err:
        if not isinstance(got, torch.Tensor) or got.shape != expected.shape:
            raise
        if bool(torch.isnan(got).any()):
            raise CheckError(
                _(
                    "{what} contains NaN. A channel whose values are all equal has variance 0, "
                    "and 0 / 0 is NaN: that is what eps is for. Divide by torch.sqrt(var + eps)."
                ).format(what=what)
            ) from None
        hint = _(
            " The channel means of your result are {means}"
            " (they should be 0) and each channel's values must be divided by "
            "sqrt(var + eps), with var over (N, H, W) and correction=0."
        ).format(means=_fmt(got.detach().double().mean(dim=(0, 2, 3))))
        if x.dtype == torch.float64:
            hint += _(
                " x is float64 here: a float32 working copy (x.float()) keeps only about 7 "
                "digits; compute in x's own dtype."
            )
        x64, got64 = x.double(), got.detach().double()
        for variant, variant_hint in _normalize_variants(x64, eps):
            if (
                variant.shape == got.shape
                and torch.allclose(got64, variant, rtol=1e-3, atol=1e-3, equal_nan=True)
                and not torch.allclose(expected.double(), variant, rtol=1e-3, atol=1e-3)
            ):
                hint = variant_hint
                break
        raise CheckError(f"{err}{hint}") from None


NORMALIZE_PER_CHANNEL = Contract(
    "normalize_per_channel",
    _reference_normalize,
    _draw_channels,
    arg_names=("x",),
    compare=_compare_normalize,
)


@uses(NORMALIZE_PER_CHANNEL)
def check_normalize_per_channel(normalize_per_channel) -> None:
    """The contract: W == C, constant channels, several eps, every dtype, non-contiguous,
    gradients, another device; x left as it was."""
    _no_loops(normalize_per_channel, "normalize_per_channel")
    _stays_with_inputs(normalize_per_channel, "normalize_per_channel")


def _fmt(values: torch.Tensor) -> str:
    return "[" + ", ".join(f"{float(v):.3g}" for v in values[:6]) + "]"


# ---------------------------------------------------------------------------------------------
# Exercise 6: pairwise_distances


def _reference_distances(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    diff = a.double()[:, None, :] - b.double()[None, :, :]  # (N, M, D)
    return diff.pow(2).sum(-1).sqrt().to(torch.promote_types(a.dtype, b.dtype))


def _draw_points(d: Draw) -> Inputs:
    """a (N, D), b (M, D), N or M empty in edges, b's points apart from a's; or a set against
    a copy of itself, large enough that |a|^2 + |b|^2 - 2 a.b rounds below 0 on the diagonal
    (not where a distance of 0 has no gradient, nor in half precision)."""
    if d.family not in ("grad", "dtypes") and d.draw(st.integers(0, 3)) == 3:
        a = d.tensor(d.size(8, 16), d.size(8, 16))
        return Inputs((a, a.clone()))
    dim = d.size(1, 6)
    a = d.tensor(d.size(1, 5, empty_ok=True), dim)
    return Inputs((a, d.tensor(d.size(1, 5, empty_ok=True), dim, low=2.5, high=6.5)))


def _distances_rule() -> str:
    return _(
        "Broadcast a[:, None, :] - b[None, :, :] and reduce over D: torch.cdist is what you "
        "check yourself against, not what you call."
    )


def _compare_distances(got, expected: torch.Tensor, what: str, inputs: Inputs) -> None:
    a, b = inputs.args
    # |a|^2 + |b|^2 - 2 a.b, which the text allows, rounds: most near a distance of 0.
    same = a.shape == b.shape and torch.equal(a, b)
    tol = {torch.float32: (1e-4, 1e-2 if same else 1e-3), torch.float64: (1e-9, 1e-6)}.get(
        expected.dtype, (0.1, 0.5)
    )
    try:
        _close(got, expected, what, tol)
    except CheckError as err:
        hint = ""
        if not isinstance(got, torch.Tensor) or got.dtype != expected.dtype:
            hint = _(
                " Compute in the inputs' dtype, without a .float() copy or a float32 tensor "
                "to fill."
            )
        elif got.shape != expected.shape:
            if a.shape[0] == 0 or b.shape[0] == 0:
                hint = _(
                    " One of the sets is empty here: the answer is an empty (N, M) tensor. "
                    "Broadcasting handles that; a loop with torch.stack does not."
                )
        elif bool(torch.isnan(got).any()):
            hint = _(
                " With |a|^2 + |b|^2 - 2 a.b, rounding can make a squared distance slightly "
                "negative, and its square root is NaN: clamp at 0 before sqrt (or subtract the "
                "points directly)."
            )
        else:
            g, e = got.detach().double(), expected.double()
            if (
                a.shape[0] == b.shape[0]
                and torch.allclose(g, e.T, rtol=1e-3, atol=1e-3)
                and not torch.allclose(e, e.T, rtol=1e-3, atol=1e-3)
            ):
                hint = _(" It is the transpose of the answer: row i must belong to a[i].")
            elif torch.allclose(g, e**2, rtol=1e-3, atol=1e-3):
                hint = _(" These are squared distances: take the square root.")
            elif a.dtype == torch.float64:
                hint = _(
                    " The points are float64: a float32 working copy loses the digits that "
                    "tell close points apart."
                )
            elif a.shape[1] != 2:
                hint = _(" Sum the squared differences over all D = {d} features.").format(
                    d=a.shape[1]
                )
        raise CheckError(f"{err}{hint}") from None


PAIRWISE_DISTANCES = Contract(
    "pairwise_distances",
    _reference_distances,
    _draw_points,
    rules=("torch.cdist",),
    rule_text=_distances_rule,
    arg_names=("a", "b"),
    compare=_compare_distances,
    examples=16,
)


@uses(PAIRWISE_DISTANCES)
def check_pairwise_distances(pairwise_distances) -> None:
    """The contract: N != M, empty sets, a set against itself (no NaN), every dtype,
    non-contiguous, gradients, another device; a and b left as they were; no torch.cdist.
    (Empty sets in other dtypes: the contract's dtypes family draws them.)"""
    _no_loops(pairwise_distances, "pairwise_distances")
    _stays_with_inputs(pairwise_distances, "pairwise_distances")


# ---------------------------------------------------------------------------------------------
# Exercise 7: masked_mean


def _reference_masked_mean(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    steps = torch.arange(x.shape[1])
    real = (steps[None, :] < lengths[:, None])[:, :, None]  # (B, T, 1)
    total = torch.where(real, x.double(), torch.zeros((), dtype=torch.float64)).sum(1)
    return (total / lengths.clamp(min=1).double()[:, None]).to(x.dtype)


_PADDING = {"large": None, "nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}


def _draw_padded(d: Draw) -> Inputs:
    """(B, T, F) with lengths from 0 to T (B = 0 in edges); the padding holds large values
    (about 500), NaN, inf or -inf, so that only steps selected as real may enter the sum."""
    b, t, f = d.size(1, 4, empty_ok=True), d.size(1, 6), d.size(1, 4)
    x = d.tensor(b, t, f)
    lengths = d.integers(b, low=0, high=t + 1)
    pad = d.draw(st.sampled_from(list(_PADDING)))
    filler = d.tensor(b, t, f, low=500.0, high=501.0)
    if _PADDING[pad] is not None:
        filler = torch.full((b, t, f), _PADDING[pad])
    real = (torch.arange(t)[None, :] < lengths[:, None])[:, :, None]
    return Inputs((torch.where(real, x, filler), lengths))


def _masked_mean_hint(got, expected: torch.Tensor, inputs: Inputs) -> str:
    x, lengths = inputs.args
    if x.shape[0] == 0:
        return _(
            " The batch is empty (B = 0): the answer is an empty (0, F) tensor. "
            "lengths.max() and friends fail on an empty tensor; use T = x.shape[1]."
        )
    if not _same_kind(got, expected):
        return ""
    hint = _(
        " Here lengths = {lengths} and T = {t}; the padding holds large values, NaN or inf. It "
        "must not enter the sum (multiplying by a mask keeps NaN: nan * 0 is nan; select with "
        "torch.where(mask, x, 0)), each row is divided by its own length, not by T, and a row "
        "of length 0 gives zeros (lengths.clamp(min=1))."
    ).format(lengths=lengths.tolist(), t=x.shape[1])
    if x.dtype == torch.float64:
        hint += _(" x is float64: a float32 working copy loses digits; keep x's dtype.")
    return hint


MASKED_MEAN = Contract(
    "masked_mean",
    _reference_masked_mean,
    _draw_padded,
    arg_names=("x", "lengths"),
    # "in x's dtype": a float32 working copy cast back is off by about 1e-8
    compare=_hinted(_masked_mean_hint, FLOAT64_EXACT),
)


@uses(MASKED_MEAN)
def check_masked_mean(masked_mean) -> None:
    """The contract: padding large, NaN or infinite; lengths 0 to T; B = 0; every dtype,
    non-contiguous, gradients, x and lengths on another device; both left as they were.
    (Empty batches in other dtypes: the contract's dtypes family draws them.)"""
    _no_loops(masked_mean, "masked_mean")
    _stays_with_inputs(masked_mean, "masked_mean")


# ---------------------------------------------------------------------------------------------
# Exercise 8: attention_scores


def _reference_scores(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    return scores.to(q.dtype)


def _draw_heads(d: Draw) -> Inputs:
    """q (B, H, T, D), k (B, H, S, D), T != S, D from 1. In values, sometimes heads split off
    a (B, T, H, D) tensor with a transpose, as in a model: B and H then cannot be merged by a
    view (the strides family's layout, transposed last axes, would let them)."""
    b, h, dim = d.size(1, 3), d.size(1, 3), d.size(1, 8)
    t, s = d.size(1, 5), d.size(1, 5)
    if d.family == "values" and d.draw(st.booleans()):
        return Inputs((_split_heads(d.tensor(b, t, h, dim)), _split_heads(d.tensor(b, s, h, dim))))
    return Inputs((d.tensor(b, h, t, dim), d.tensor(b, h, s, dim)))


def _split_heads(base: torch.Tensor) -> Build:
    """``base`` (B, T, H, D) as (B, H, T, D) with a transpose: a layout only a builder makes
    (a tensor crosses to the kernel contiguous)."""
    b, t, h, dim = base.shape
    label = f"float32 tensor of shape {(b, h, t, dim)}, a transpose(1, 2) of {(b, t, h, dim)}"
    return Build(probes.build, probes.layout(base, ["transpose", 1, 2]), label)


def _compare_scores(got, expected: torch.Tensor, what: str, inputs: Inputs) -> None:
    q = inputs.args[0]
    q = q.make() if isinstance(q, Build) else q
    d = q.shape[-1]
    try:
        _close(got, expected, what)
    except CheckError as err:
        hint = ""
        if isinstance(got, torch.Tensor) and got.dtype != expected.dtype:
            hint = _(" Compute in q's dtype ({dtype}), without a .float() copy.").format(
                dtype=q.dtype
            )
        elif isinstance(got, torch.Tensor) and got.shape == expected.shape:
            ratio = (got.detach().double() / expected.double()).flatten()
            ratio = ratio[torch.isfinite(ratio)]
            if (
                d > 1
                and ratio.numel()
                and torch.allclose(ratio, torch.full_like(ratio, math.sqrt(d)), rtol=1e-3)
            ):
                hint = _(" Every score is sqrt(D) times too big: divide by math.sqrt(D).")
            elif (
                d > 1
                and ratio.numel()
                and torch.allclose(ratio, torch.full_like(ratio, 1 / math.sqrt(d)), rtol=1e-3)
            ):
                hint = _(" Every score is sqrt(D) times too small: divide by sqrt(D), not by D.")
            elif q.dtype == torch.float64:
                hint = _(
                    " q and k are float64 here: a float32 working copy loses digits; keep "
                    "their dtype."
                )
            else:
                hint = _(
                    " Row t must hold query t's scores against every key: "
                    "scores[..., t, s] = q[..., t, :] . k[..., s, :] / sqrt(D)."
                )
        raise CheckError(f"{err}{hint}") from None


ATTENTION_SCORES = Contract(
    "attention_scores",
    _reference_scores,
    _draw_heads,
    arg_names=("q", "k"),
    compare=_compare_scores,
)


@uses(ATTENTION_SCORES)
def check_attention_scores(attention_scores) -> None:
    """The contract: T != S, D = 1, every dtype, non-contiguous (heads split off with a
    transpose), gradients, another device; q and k left as they were."""
    _no_loops(attention_scores, "attention_scores")
    _stays_with_inputs(attention_scores, "attention_scores")
