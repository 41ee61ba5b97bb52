"""Another device on a CPU-only grader, for the contracts' ``device`` family.

The family runs an answer with its inputs on PyTorch's ``meta`` device: a tensor made
without ``device=`` lands on the CPU, and mixing the two should fail as it would on a GPU.
Two gaps, each closed here:

- Many of ``meta``'s kernels do not check devices (``matmul``, ``F.linear``,
  ``F.embedding``, ``index_select``, ``gather``, in-place arithmetic accept a CPU tensor):
  :class:`OneDevice` refuses, as a GPU does, any call that mixes the inputs' device with a
  CPU tensor.
- ``meta`` holds no values: an answer that needs one (``x.norm() > limit`` in a loop,
  ``.item()``, ``.tolist()``) cannot run there. :class:`StandIn` is a CPU tensor standing
  for one on another device: it keeps its values and refuses to mix with a plain tensor.
  Tensors made while :class:`Placed` is active are stand-ins too when the answer says where
  to put them (``device=x.device``, ``.to(x.device)``), and plain when it does not
  (``torch.zeros(n)``, ``torch.tensor`` of values read back); ``x.new_zeros`` and
  ``torch.zeros_like(x)`` follow x. What a stand-in cannot tell: a device written out as
  ``"cpu"`` counts as placed (here the inputs' device is the CPU too).

In both, what a GPU also lets a CPU tensor meet is allowed: a 0-d tensor (a scalar) as an
operand (not as the target of an in-place operation), indexing with CPU indices, copying or
assigning CPU values in, and moving (``.to``). ``stand_in_module`` makes a model's
parameters and buffers stand-ins: the contract's rerun (``contract._on_stand_in``) hands an
answer its models, and the object its class builds, "on a GPU" that way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

MIXED = (
    "Expected all tensors to be on the same device, but found at least two devices: the "
    "inputs' device (standing in for a GPU) and cpu"
)

# What a mix of devices says, in the words PyTorch uses for it ("... is not on the expected
# device", autograd's "invalid gradient ... expected device meta but got cpu").
DEVICE_MIX = ("expected device", "Expected all tensors to be on the same device")

# What a GPU lets a CPU tensor take part in: indexing with CPU indices, assigning or copying
# CPU values in, moving, and reading only another tensor's shape or type.
_MAY_MIX = {
    torch.Tensor.__getitem__,
    torch.Tensor.__setitem__,
    torch.Tensor.index_put_,
    torch.Tensor.index_put,
    torch.Tensor.copy_,
    torch.Tensor.to,
    torch.Tensor.new_tensor,
    torch.Tensor.type_as,
    torch.Tensor.expand_as,
    torch.Tensor.view_as,
    torch.Tensor.reshape_as,
}
# What leaves the device: values read back, or a tensor moved to the CPU on purpose.
_LEAVES = {torch.Tensor.cpu, torch.Tensor.numpy, torch.Tensor.tolist, torch.Tensor.item}


_IN_PLACE_OPERATORS = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__"}


# Indexing goes one way only: a GPU tensor takes CPU indices, but a CPU tensor refuses
# indices on a GPU ("indices should be either on cpu or on the same device as the indexed
# tensor"): counts kept in a CPU table indexed by the labels, a one-hot row taken from a CPU
# torch.eye. (A 0-d index is read as a number.)
_INDEXING = {
    torch.Tensor.__getitem__,
    torch.Tensor.__setitem__,
    torch.Tensor.index_put_,
    torch.Tensor.index_put,
}


def _mixes(func, args, kwargs, elsewhere) -> bool:
    """Whether the call meets a tensor on the inputs' device (``elsewhere(t)``) and a CPU one
    in a way a GPU refuses: a CPU tensor that is not 0-d, or one (0-d included) that an
    in-place operation would write a device tensor into (``total += loss``), or a CPU
    tensor indexed by device indices."""
    if func in _INDEXING:
        target, index = args[0], args[1] if len(args) > 1 else kwargs.get("indices")
        return (
            isinstance(target, torch.Tensor)
            and not elsewhere(target)
            and target.device.type == "cpu"
            and any(elsewhere(t) and t.dim() > 0 for t in tensors_in(index))
        )
    if func in _MAY_MIX:
        return False
    tensors = tensors_in((args, kwargs))
    if not any(map(elsewhere, tensors)):
        return False
    name = getattr(func, "__name__", "")
    in_place = name in _IN_PLACE_OPERATORS or (name.endswith("_") and not name.startswith("_"))
    target = args[0] if args else None
    if in_place and isinstance(target, torch.Tensor) and not elsewhere(target):
        return target.device.type == "cpu"
    return any(not elsewhere(t) and t.device.type == "cpu" and t.dim() > 0 for t in tensors)


class OneDevice(TorchFunctionMode):
    """While active, a call that mixes a ``meta`` tensor with a CPU one raises, as on a GPU;
    ``mixed`` names the calls that did, even where the answer caught the error."""

    def __init__(self):
        super().__init__()
        self.mixed: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if _mixes(func, args, kwargs, lambda t: t.device.type == "meta"):
            self.mixed.append(getattr(func, "__name__", str(func)))
            raise RuntimeError(f"{MIXED} (in {self.mixed[-1]})")
        return func(*args, **kwargs)


def on_meta(call: Callable[[], Any]) -> dict:
    """``call()`` (which puts its tensors on ``meta``) under :class:`OneDevice`, as data:
    ``{"result": ...}``; ``{"device_mix": PyTorch's words}`` where it mixed devices, even
    where the answer caught the error; ``{"inconclusive": ...}`` for any other error (meta
    holds no values, so an answer that reads one cannot run there)."""
    mode = OneDevice()
    try:
        with mode:
            result = call()
    except Exception as err:  # the answer's own code: any error is data
        message = str(err).strip().splitlines()[0][:300] if str(err).strip() else ""
        if any(words in str(err) for words in DEVICE_MIX):
            return {"device_mix": message}
        if not mode.mixed:
            return {"inconclusive": f"{type(err).__name__}: {message}"}
    if mode.mixed:
        return {"device_mix": f"{MIXED} (in {mode.mixed[0]})"}
    return {"result": result}


class StandIn(torch.Tensor):
    """A CPU tensor standing for one on another device (see the module's docstring)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = tensors_in((args, kwargs))
        transformed = any(map(_wrapped, tensors))  # torch.func's wrappers: not ours to judge
        if not transformed and _mixes(func, args, kwargs, lambda t: isinstance(t, StandIn)):
            raise RuntimeError(MIXED)
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **kwargs)
        if func in _LEAVES:  # .cpu() of a stand-in is itself here: a plain tensor, as moved
            return out.as_subclass(torch.Tensor) if isinstance(out, StandIn) else out
        return stand_in(out)


class Placed(TorchFunctionMode):
    """While active, a tensor made with a device named (``device=``, ``.to(device)``) is a
    stand-in: the answer put it where its inputs are. ``transformed`` says whether the
    answer used a ``torch.func`` transform (grad, jacfwd, vmap): its wrapped tensors drop
    the stand-in's class, so such a run cannot tell devices apart."""

    def __init__(self):
        super().__init__()
        self.transformed = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not self.transformed and any(map(_wrapped, tensors_in((args, kwargs)))):
            self.transformed = True
        out = func(*args, **kwargs)
        named = kwargs.get("device") is not None
        if func is torch.Tensor.to:  # .to(device), .to("cuda"), .to(other_tensor)
            named = named or any(isinstance(a, (torch.device, str, StandIn)) for a in args[1:])
        return stand_in(out) if named else out


def stand_in(value: Any) -> Any:
    """``value``'s plain tensors as stand-ins (in tuples, lists and PyTorch's named tuples)."""
    if type(value) in (torch.Tensor, torch.nn.Parameter):
        if value.is_leaf and value.requires_grad:  # a leaf still (an alias would get no .grad)
            return value.detach().as_subclass(StandIn).requires_grad_()
        return value.as_subclass(StandIn)
    if isinstance(value, list):
        return [stand_in(v) for v in value]
    if isinstance(value, tuple) and not isinstance(value, torch.Size):
        items = [stand_in(v) for v in value]
        return tuple(items) if type(value) is tuple else type(value)(items)
    return value


def stand_in_module(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` with every parameter and buffer a stand-in (still parameters, with their
    ``requires_grad``): it keeps its values and refuses a plain CPU tensor, as a model on a
    GPU would. Changed in place; returned for convenience."""
    for module in model.modules():
        for name, p in list(module._parameters.items()):
            if p is not None:
                stand = stand_in(p.detach())
                module._parameters[name] = torch.nn.Parameter(stand, p.requires_grad)
        for name, b in list(module._buffers.items()):
            if b is not None:
                module._buffers[name] = stand_in(b)
    return model


def describe(value: Any) -> Any:
    """A result as ``contract.describe_meta`` gives one from ``meta``: a stand-in as on the
    inputs' device (``"meta"``), a plain tensor as on the CPU."""
    if isinstance(value, torch.Tensor):
        device = "meta" if isinstance(value, StandIn) else "cpu"
        return {"device": device, "dtype": value.dtype, "shape": list(value.shape)}
    if isinstance(value, (list, tuple)):
        return [describe(v) for v in value]
    if isinstance(value, dict):
        return {k: describe(v) for k, v in value.items()}
    return value


def _wrapped(t: torch.Tensor) -> bool:
    """A tensor inside a ``torch.func`` transform, or a forward-mode dual tensor."""
    functorch = getattr(torch._C, "_functorch", None)
    if functorch is not None and functorch.is_functorch_wrapped_tensor(t):
        return True
    return torch.autograd.forward_ad.unpack_dual(t).tangent is not None


def tensors_in(value: Any) -> list[torch.Tensor]:
    """The tensors in a value (a tensor, or a tuple, list or dict of them)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []
