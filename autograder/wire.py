"""The data that may cross from a student's kernel to the grader: JSON, tensors as raw bytes.

What crosses: ``None``, bools, ints, floats, strings, lists, tuples, dicts, ``torch.Tensor``
(dtype, shape and bytes; ``requires_grad`` and the device ride along), ``torch.device``, ``torch.dtype`` and ``torch.Size``. Anything else is sent as
``{"__object__": "module.QualName"}`` so a check can say what it got instead. There is no
pickle anywhere: ``decode`` builds plain values and plain ``torch.Tensor`` objects from
JSON and bytes it has checked, so a lying tensor subclass or an object whose ``__eq__`` is
always true cannot come through; only the numbers it claims to hold can.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import torch

# Limits on what the grader accepts: a submission that floods it gets an error, not the
# grader's memory. A probe's result is small (a few tensors of a few thousand numbers).
MAX_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 32

_DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.float64,
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.int16,
        torch.int8,
        torch.uint8,
        torch.bool,
        torch.complex64,
        torch.complex128,
    )
}


class WireError(ValueError):
    """What came back is not data this module wrote (or is over the limits)."""


def encode(value: Any) -> str:
    """``value`` as a JSON string. Never fails on odd objects: they become a type name."""
    return json.dumps(_to_json(value, 0), allow_nan=True, separators=(",", ":"))


def decode(text: str | bytes) -> Any:
    """The value ``encode`` wrote. Raises ``WireError`` on anything malformed or too big."""
    if len(text) > MAX_BYTES:
        raise WireError(f"the result is {len(text):,} bytes; at most {MAX_BYTES:,} are read")
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise WireError(f"the result is not valid JSON: {err}") from None
    return _from_json(raw, 0)


def roundtrip(value: Any) -> Any:
    """``decode(encode(value))``: what the grader would see of ``value``."""
    return decode(encode(value))


def _to_json(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        return {"__object__": "too deeply nested"}
    kind = type(value)  # type(), not isinstance(): an object can claim any __class__
    # Subclasses of the plain types (OrderedDict, numpy.float64, an IntEnum, a namedtuple)
    # are sent as the plain type: only the value crosses.
    if value is None or issubclass(kind, bool):
        return None if value is None else bool(value)
    if issubclass(kind, str):
        return str.__str__(value)
    if issubclass(kind, int):
        value = int.__index__(value)
        return value if -(2**63) <= value < 2**63 else {"__bigint__": str(value)}
    if issubclass(kind, float):
        value = float.__float__(value)
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if issubclass(kind, torch.Tensor):
        return _tensor_to_json(value)
    if kind is torch.device:
        return {"__device__": str(value)}
    if kind is torch.dtype:
        return {"__dtype__": str(value).removeprefix("torch.")}
    if kind is torch.Size:
        return {"__size__": [int(n) for n in value]}
    if issubclass(kind, list):
        return [_to_json(v, depth + 1) for v in list.__iter__(value)]
    if issubclass(kind, tuple):
        return {"__tuple__": [_to_json(v, depth + 1) for v in tuple.__iter__(value)]}
    if issubclass(kind, dict):
        pairs = dict.items(value)
        return {"__dict__": [[_to_json(k, depth + 1), _to_json(v, depth + 1)] for k, v in pairs]}
    return {"__object__": f"{kind.__module__}.{kind.__qualname__}"}


def _tensor_to_json(t: torch.Tensor) -> Any:
    if t.device.type == "meta":  # no values to send
        return {"__object__": "torch.Tensor on the meta device"}
    # A subclass's __torch_function__ is switched off: its data is sent, not its story.
    with torch._C.DisableTorchFunctionSubclass():
        meta = {"requires_grad": bool(t.requires_grad), "device": str(t.device)}
        plain = t.detach()
        if plain.layout != torch.strided:
            plain = plain.to_dense()
        plain = torch.Tensor._make_subclass(torch.Tensor, plain.cpu().contiguous())
    dtype = str(plain.dtype).removeprefix("torch.")
    if dtype not in _DTYPES:  # float8, quantized...: send float32 values, say what it was
        meta["original_dtype"] = dtype
        plain = plain.float() if not plain.is_quantized else plain.dequantize()
        dtype = "float32"
    data = (
        plain.numpy().tobytes()
        if plain.dtype != torch.bfloat16
        else plain.view(torch.int16).numpy().tobytes()
    )
    return {
        "__tensor__": {
            "dtype": dtype,
            "shape": list(plain.shape),
            "data": base64.b64encode(data).decode("ascii"),
            **meta,
        }
    }


def _from_json(raw: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("the result is nested too deeply")
    if raw is None or type(raw) in (bool, int, float, str):
        return raw
    if type(raw) is list:
        return [_from_json(v, depth + 1) for v in raw]
    if type(raw) is not dict or len(raw) != 1:
        raise WireError(f"unexpected {type(raw).__name__} in the result")
    ((tag, body),) = raw.items()
    if tag == "__tuple__" and type(body) is list:
        return tuple(_from_json(v, depth + 1) for v in body)
    if tag == "__dict__" and type(body) is list:
        out = {}
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise WireError("malformed dict in the result")
            key = _from_json(pair[0], depth + 1)
            if not isinstance(key, (str, int, float, bool, tuple, type(None))):
                raise WireError("unhashable dict key in the result")
            out[key] = _from_json(pair[1], depth + 1)
        return out
    if tag == "__tensor__" and type(body) is dict:
        return _tensor_from_json(body)
    if tag == "__device__" and type(body) is str:
        try:
            return torch.device(body)
        except RuntimeError as err:
            raise WireError(f"bad device {body!r}") from err
    if tag == "__dtype__" and body in _DTYPES:
        return _DTYPES[body]
    if tag == "__size__" and type(body) is list and all(type(n) is int for n in body):
        return torch.Size(body)
    if tag == "__bigint__" and type(body) is str and body.lstrip("-").isdigit() and len(body) < 400:
        return int(body)
    if tag == "__float__" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "__object__" and type(body) is str:
        return Unsendable(body[:200])
    raise WireError(f"unexpected tag {tag!r} in the result")


def _tensor_from_json(body: dict) -> torch.Tensor:
    dtype = _DTYPES.get(body.get("dtype"))
    shape = body.get("shape")
    if (
        dtype is None
        or type(shape) is not list
        or not all(type(n) is int and n >= 0 for n in shape)
    ):
        raise WireError("malformed tensor in the result")
    try:
        data = base64.b64decode(body.get("data", ""), validate=True)
    except (ValueError, TypeError) as err:
        raise WireError("malformed tensor bytes in the result") from err
    numel = math.prod(shape)
    itemsize = torch.empty((), dtype=dtype).element_size()
    if len(data) != numel * itemsize:
        raise WireError(
            f"a tensor of shape {shape} needs {numel * itemsize} bytes, got {len(data)}"
        )
    storage_dtype = torch.int16 if dtype == torch.bfloat16 else dtype
    flat = (
        torch.frombuffer(bytearray(data), dtype=storage_dtype)
        if data
        else torch.empty(0, dtype=storage_dtype)
    )
    tensor = flat.view(dtype) if dtype == torch.bfloat16 else flat
    tensor = tensor.reshape(shape).clone()
    device = _device_here(body.get("device"))
    if device is not None:
        tensor = tensor.to(device)
    if body.get("requires_grad") is True and (dtype.is_floating_point or dtype.is_complex):
        tensor.requires_grad_(True)
    return tensor


def _device_here(name: object) -> torch.device | None:
    """The tensor's device, where this process has it too (the kernel and grader share a machine)."""
    if type(name) is not str or name.startswith("cpu"):
        return None
    try:
        device = torch.device(name)
    except RuntimeError:
        return None
    if device.type == "cuda" and torch.cuda.is_available():
        return device if (device.index or 0) < torch.cuda.device_count() else None
    if device.type == "mps" and torch.backends.mps.is_available():
        return device
    return None


class Unsendable:
    """Stands for an object that is not data (a module, a function...): only its type's name."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unsendable) and other.type_name == self.type_name

    def __hash__(self) -> int:
        return hash(self.type_name)


def type_name(value: object) -> str:
    """The type of a value that came back, as a learner would name it (``Linear``, ``str``)."""
    if isinstance(value, Unsendable):
        return value.type_name.rsplit(".", 1)[-1]
    return type(value).__name__
