"""Probes for 01_tensors (see autograder/probes/__init__.py)."""

from __future__ import annotations

import numpy as np
import torch

# A tensor crosses the data boundary as plain contiguous values, so a non-contiguous input
# (a permuted view, channels-last memory) is described as a base tensor plus the layout
# operations that make it: {"base": tensor, "ops": [["permute", 0, 2, 3, 1], ...]}.
_LAYOUT_OPS = {
    "permute": lambda t, *dims: t.permute(*dims),
    "transpose": lambda t, a, b: t.transpose(a, b),
    "contiguous": lambda t: t.contiguous(),
    "channels_last": lambda t: t.contiguous(memory_format=torch.channels_last),
}


def layout(base: torch.Tensor, *ops: list) -> dict:
    """The description of ``base`` with ``ops`` applied, e.g. ``layout(x, ["transpose", 0, 1])``."""
    return {"base": base, "ops": [list(op) for op in ops]}


def build(spec: dict | torch.Tensor) -> torch.Tensor:
    """The tensor a :func:`layout` description stands for (a plain tensor stands for itself)."""
    if isinstance(spec, torch.Tensor):
        return spec
    t = spec["base"]
    for name, *args in spec.get("ops", []):
        t = _LAYOUT_OPS[name](t, *args)
    return t


# ---------------------------------------------------------------------------------------------
# shared_and_copied: NumPy arrays cannot cross, so the probe builds them by index.


def numpy_cases() -> list[tuple[str, np.ndarray]]:
    """The arrays shared_and_copied is tried on, with a description of each."""
    rng = np.random.default_rng(1)
    transposed = rng.standard_normal((3, 4)).T  # a non-contiguous view (strides reversed)
    return [
        ("a float64 array of shape (2, 3)", np.arange(6, dtype=np.float64).reshape(2, 3)),
        ("a float32 array of shape (5,)", rng.standard_normal(5).astype(np.float32)),
        ("an int64 array of shape (3, 2, 2)", np.arange(12, dtype=np.int64).reshape(3, 2, 2)),
        ("an int32 array of shape (1,)", np.array([4], dtype=np.int32)),
        ("a uint8 array of shape (2, 2)", np.array([[1, 2], [3, 4]], dtype=np.uint8)),
        ("a transposed (non-contiguous) float64 array of shape (4, 3)", transposed),
        (
            "every other column of an int64 array: shape (3, 2), strided",
            np.arange(12).reshape(3, 4)[:, ::2],
        ),
        (
            "a float16 array of shape (2, 2) in Fortran order",
            np.asfortranarray(np.ones((2, 2), dtype=np.float16)),
        ),
    ]


ARRAY_DTYPES = ("float64", "float32", "float16", "int64", "int32", "uint8", "bool")


def build_array(spec: dict) -> np.ndarray:
    """A NumPy array for the contract of shared_and_copied: ``dtype``, ``shape`` (0-d and empty
    allowed), ``seed``, and ``layout``: "C", "F" (Fortran order), "transposed" or "strided"
    (every other element of a wider array), the last three with positive strides."""
    rng = np.random.default_rng(spec["seed"])
    shape, layout = tuple(spec["shape"]), spec["layout"]
    wide = (*shape[:-1], shape[-1] * 2) if shape and layout == "strided" else shape
    if layout == "transposed":
        wide = tuple(reversed(shape))
    values = rng.integers(0, 100, size=wide).astype(spec["dtype"])
    if layout == "F":
        return np.asfortranarray(values)
    if layout == "transposed":
        return values.T
    if layout == "strided" and shape:
        return values[..., ::2]
    return values


def written_value(old) -> int:
    """The value the probe writes into the array's first element: anything but ``old``."""
    return 99 if old != 99 else 98


def probe_shared_and_copied(shared_and_copied, case: dict) -> dict:
    """What came back, then which of array and tensors see each other's writes.

    The returned tensors are copies taken right after the call. Then: write the array's
    first element and read both tensors there; write ``shared``'s last element and read the
    array; write ``copied``'s last element and read the array.
    """
    _, a = numpy_cases()[case["index"]]
    result = shared_and_copied(a)
    seen: dict = {"result": result}
    if not (
        type(result) in (tuple, list)
        and len(result) == 2
        and all(isinstance(t, torch.Tensor) and tuple(t.shape) == a.shape for t in result)
    ):
        return seen
    shared, copied = result
    seen["result"] = (shared.detach().clone(), copied.detach().clone())
    seen["same_memory"] = shared.data_ptr() == copied.data_ptr()
    first = (0,) * a.ndim
    last = tuple(s - 1 for s in a.shape)
    old = a[first].item()
    a[first] = written_value(old)
    seen["shared_first_after_array_write"] = shared[first].item()
    seen["copied_first_after_array_write"] = copied[first].item()
    a[first] = old
    shared[last] = 77
    seen["array_last_after_shared_write"] = a[last].item()
    copied[last] = 55
    seen["array_last_after_copied_write"] = a[last].item()
    return seen


# ---------------------------------------------------------------------------------------------
# "No Python loops": the torch calls an answer makes must not grow with its input's sizes.


class CountCalls(torch.overrides.TorchFunctionMode):
    """While active, counts every torch function and tensor method called."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def _loop_inputs(exercise: str, n: int) -> tuple:
    """Inputs of the exercise with every size n (lengths 0, 1, ... so both cases are alike)."""
    g = torch.Generator().manual_seed(n)
    if exercise == "normalize_per_channel":
        return (torch.randn(n, n, n, n, generator=g),)
    if exercise == "pairwise_distances":
        return (torch.randn(n, n, generator=g), torch.randn(n, n, generator=g) + 3.0)
    if exercise == "masked_mean":
        return (torch.randn(n, n + 1, n, generator=g), torch.arange(n) % (n + 1))
    if exercise == "attention_scores":
        return (torch.randn(n, n, n, n, generator=g), torch.randn(n, n, n + 1, n, generator=g))
    raise ValueError(exercise)


def probe_loop_calls(answer, case: dict) -> dict:
    """How many torch calls the answer makes on inputs of each size in ``case["sizes"]``."""
    counts = []
    for n in case["sizes"]:
        args = _loop_inputs(case["exercise"], n)
        with CountCalls() as mode:
            answer(*args)
        counts.append(mode.calls)
    return {"calls": counts}


# ---------------------------------------------------------------------------------------------
# The notebook's global ``device``: a result must stay where its inputs are.


def _device_inputs(exercise: str) -> tuple:
    """Small CPU inputs of the exercise."""
    g = torch.Generator().manual_seed(0)
    if exercise == "to_nchw":
        return (torch.randn(2, 3, 4, 2, generator=g),)
    if exercise == "flatten_features":
        return (torch.randn(2, 3, 4, generator=g),)
    return _loop_inputs(exercise, 2)


def probe_global_device(answer, case: dict) -> dict:
    """The answer on CPU inputs while the notebook's global ``device`` (the setup cell's) names
    another one, ``meta``: a grader without a GPU has ``device`` equal to the inputs' device,
    so a result moved with ``.to(device)``, or a tensor made with ``device=device``, shows
    only this way. The global is put back before returning. Returns the devices of the
    tensors in the result, or the error raised; ``skipped`` where the answer reads no such
    global."""
    names = getattr(answer, "__globals__", None)
    if not isinstance(names, dict) or not isinstance(names.get("device"), torch.device):
        return {"skipped": True}
    args = _device_inputs(case["exercise"])
    old = names["device"]
    names["device"] = torch.device("meta")
    try:
        result = answer(*args)
    except Exception as err:  # a mix of devices, as a GPU would refuse it
        text = (str(err).splitlines() or [""])[0]
        return {"raised": f"{type(err).__name__}: {text}"[:300]}
    finally:
        names["device"] = old
    found = [result] if isinstance(result, torch.Tensor) else []
    if isinstance(result, (tuple, list)):
        found = [t for t in result if isinstance(t, torch.Tensor)]
    return {"devices": sorted({t.device.type for t in found})}
