"""The kernel side of a contract (``autograder/contracts.py``): one generic probe.

``probe_contract(answer, case)`` calls the answer on the case's arguments, changed the way
the case's *family* asks (a view with other strides, the ``meta`` device, inputs that
require grad), with the exercise's forbidden shortcuts made to raise, and returns what it
saw as data: the result, the arguments it changed in place, the shortcuts it called, the
gradients it sends back to its inputs. It holds no reference answer: the grader computes
the expected values on its own copy of the same inputs.
"""

from __future__ import annotations

import importlib
import random
import sys
import warnings
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.boundary import modes_now, usual_modes
from autograder.probes import devices, seed_cpu
from autograder.probes.devices import DEVICE_MIX, tensors_in


class RuleBroken(Exception):
    """Raised inside an answer that calls what its exercise's text forbids."""


@dataclass(frozen=True)
class Kernels:
    """A shortcut no Python name catches: any ATen kernel whose name holds one of
    ``fragments`` ("batch_norm" matches aten.native_batch_norm.default). A library routine
    reached as a ``torch.ops`` operator, or inside a module compiled by ``torch.jit.script``,
    still runs its kernel, and every kernel run passes through a dispatch mode."""

    fragments: tuple[str, ...]


# Every shortcut an exercise's text may forbid, by the name a learner writes. A contract
# names them; only names listed here can be forbidden (nothing is looked up by string).
SHORTCUTS: dict[str, Callable | Kernels] = {
    # 04_layers: the other library routes to BatchNorm, attention and a whole encoder layer
    # (torch's private entry points to them are caught by their kernels, below)
    "F.instance_norm": F.instance_norm,
    "torch.instance_norm": torch.instance_norm,
    "F.group_norm": F.group_norm,
    "torch.group_norm": torch.group_norm,
    "torch.native_group_norm": torch.native_group_norm,
    "torch.native_layer_norm": torch.native_layer_norm,
    "F.rms_norm": F.rms_norm,
    "torch.rms_norm": torch.rms_norm,
    "torch.func.hessian": torch.func.hessian,
    "torch.func.jacrev": torch.func.jacrev,
    "torch.func.jacfwd": torch.func.jacfwd,
    "torch.autograd.grad": torch.autograd.grad,
    "torch.autograd.backward": torch.autograd.backward,
    "torch.autograd.functional.jacobian": torch.autograd.functional.jacobian,
    "F.batch_norm": F.batch_norm,
    "torch.batch_norm": torch.batch_norm,
    "torch.native_batch_norm": torch.native_batch_norm,
    "F.layer_norm": F.layer_norm,
    "torch.layer_norm": torch.layer_norm,
    "F.scaled_dot_product_attention": F.scaled_dot_product_attention,
    "F.multi_head_attention_forward": F.multi_head_attention_forward,
    "F.softmax": F.softmax,
    "torch.softmax": torch.softmax,
    "F.cross_entropy": F.cross_entropy,
    "F.nll_loss": F.nll_loss,
    "F.mse_loss": F.mse_loss,
    "F.embedding_bag": F.embedding_bag,
    "torch.cdist": torch.cdist,
    "torch.autograd.functional.hessian": torch.autograd.functional.hessian,
    "torch.autograd.functional.hvp": torch.autograd.functional.hvp,
    "torch.autograd.functional.vhp": torch.autograd.functional.vhp,
    # 02_autograd: forward-mode autograd (dual numbers; torch.func.jvp makes them too)
    "torch.autograd.forward_ad.make_dual": torch._make_dual,
    # 04_layers: the same routines as kernels, however they are reached
    "ATen's normalisation kernels": Kernels(
        ("batch_norm", "instance_norm", "group_norm", "layer_norm", "rms_norm")
    ),
    "ATen's attention kernels": Kernels(("attention",)),
    "ATen's encoder-layer kernels": Kernels(("attention", "transformer_encoder_layer")),
}


def _breaks(name: str, kernels: dict[Kernels, str], called: list[str]) -> None:
    """Raises RuleBroken where ``name`` (a function's or an ATen kernel's) holds a fragment of
    one of the forbidden ``kernels``."""
    for rule, rule_name in kernels.items():
        if any(fragment in name for fragment in rule.fragments):
            called.append(f"{rule_name} ({name})")
            raise RuleBroken(f"{name} is not allowed in this exercise")


class _Forbid(TorchFunctionMode):
    """While active, each torch function in ``functions`` raises RuleBroken, and so does one
    whose name holds a fragment of ``kernels`` (a private entry point, a ``torch.ops``
    operator: some never reach a kernel of that name, as they decompose first); calls are
    noted."""

    def __init__(self, functions: dict[Callable, str], kernels: dict, called: list[str]):
        super().__init__()
        self.functions, self.kernels, self.called = functions, kernels, called

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = self.functions.get(func)
        if name is not None:
            self.called.append(name)
            raise RuleBroken(f"{name} is not allowed in this exercise")
        if self.kernels:
            op = isinstance(func, (torch._ops.OpOverload, torch._ops.OpOverloadPacket))
            _breaks(str(func) if op else getattr(func, "__name__", ""), self.kernels, self.called)
        return func(*args, **(kwargs or {}))


class _ForbidKernels(TorchDispatchMode):
    """While active, an ATen kernel whose name holds a fragment of ``kernels`` raises
    RuleBroken, however it was reached (TorchScript calls kernels without passing through
    Python's functions)."""

    def __init__(self, kernels: dict[Kernels, str], called: list[str]):
        super().__init__()
        self.kernels, self.called = kernels, called

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        _breaks(str(func), self.kernels, self.called)
        return func(*args, **(kwargs or {}))


@contextmanager
def _without_torchscript() -> Iterator[None]:
    """torch.jit.script switched off for the block (it then hands back what it is given): a
    module it would compile runs as Python, where the functions it calls show. (Compiled, a
    routine may not reach a kernel of its own name: attention that returns its weights runs
    as bmm and softmax.)"""
    was_on = bool(torch.jit._state._enabled)
    torch.jit._state.disable()
    try:
        yield
    finally:
        if was_on:
            torch.jit._state.enable()


@contextmanager
def forbidden(
    functions: dict[Callable | Kernels, str], methods: dict[tuple[type, str], str] | None = None
) -> Iterator[list[str]]:
    """For the duration of the block, the exercise's forbidden shortcuts raise RuleBroken.

    ``functions`` are torch functions (caught by a TorchFunctionMode, so also when a module
    calls them) or :class:`Kernels` (caught by a TorchDispatchMode); ``methods`` are (class,
    name) pairs replaced on the class (so ``layer(x)``, ``layer.forward(x)`` and
    ``type(layer).forward(layer, x)`` all raise). Yields the list of names called, which
    stays filled even when the answer catches the error. Functions that are not torch
    functions (``torch.autograd.functional.hessian``) are replaced in their module for the
    block.
    """
    called: list[str] = []
    kernels = {f: n for f, n in functions.items() if isinstance(f, Kernels)}
    functions = {f: n for f, n in functions.items() if f not in kernels}

    def raiser(name: str):
        def forbidden_function(*args, **kwargs):
            called.append(name)
            raise RuleBroken(f"{name} is not allowed in this exercise")

        return forbidden_function

    plain = {f: n for f, n in functions.items() if not _is_torch_function(f)}
    patched = [(module, f.__name__, f) for f in plain for module in _homes(f)]
    saved = {(cls, attr): cls.__dict__[attr] for cls, attr in methods or {}}
    try:
        for (cls, attr), name in (methods or {}).items():
            setattr(cls, attr, raiser(name))
        for module, attr, f in patched:
            setattr(module, attr, raiser(plain[f]))
        torch_functions = {f: n for f, n in functions.items() if f not in plain}
        # A mode routes every torch call through Python: only where a rule needs one.
        watch = torch_functions or kernels
        with (
            _Forbid(torch_functions, kernels, called) if watch else nullcontext(),
            _ForbidKernels(kernels, called) if kernels else nullcontext(),
            _without_torchscript() if kernels else nullcontext(),
        ):
            yield called
    finally:
        for (cls, attr), original in saved.items():
            setattr(cls, attr, original)
        for module, attr, f in patched:
            setattr(module, attr, f)


def _is_torch_function(f: Callable) -> bool:
    """Whether a TorchFunctionMode sees calls of ``f`` (torch's own ops and F's functions)."""
    return getattr(f, "__module__", "") in ("torch", "torch.nn.functional", "torch._C._nn") or (
        type(f).__name__ == "builtin_function_or_method"
    )


# Where PyTorch offers a function under another public name too (torch.optim.SGD is
# torch.optim.sgd's): each is replaced while a rule holds.
_PUBLIC = ("torch", "torch.func", "torch.autograd", "torch.autograd.functional", "torch.optim")


def _homes(f: Callable) -> list:
    """The module that defines ``f`` and every public one that offers it by the same name."""
    found = [importlib.import_module(f.__module__)]
    for name in _PUBLIC:
        module = importlib.import_module(name)
        if getattr(module, f.__name__, None) is f and module not in found:
            found.append(module)
    return found


# The seed torch's global generator holds while a contract's call is watched: one no learner
# writes, so a torch.manual_seed(k) inside the answer shows as torch.initial_seed() changing.
WATCH_SEED = 0x5EED_C0DE_2026_1206


def random_state() -> tuple:
    """What a call must leave as it found of the process's global random generators: torch's
    seed (a draw from it is no fault: a DataLoader's iterator draws its base seed there, a
    lazy layer initialises from it), Python's whole state and NumPy's (nothing in PyTorch
    draws from those)."""
    np = sys.modules.get("numpy")
    numpy_state = np.random.get_state() if np is not None else None
    return (
        torch.initial_seed(),
        random.getstate(),
        None if numpy_state is None else (numpy_state[1].tobytes(), numpy_state[2]),
    )


# CUDA's seeding functions, counted while a call is watched: where CUDA has not started (a
# CPU-only grader) torch only queues them, so no state shows that they ran.
CUDA_SEEDING = ("manual_seed", "manual_seed_all", "seed", "seed_all")


@contextmanager
def cuda_seeding_counted() -> Iterator[list[str]]:
    """Yields the list of CUDA seeding functions the block called itself; each still does
    what it does. Those that ``torch.manual_seed`` and ``torch.seed`` make are not counted:
    the CPU seed they also set is judged, and ``torch.random.fork_rng`` puts it back."""
    calls: list[str] = []

    def counted(name: str, f: Callable) -> Callable:
        def seeding(*args, **kwargs):
            if sys._getframe(1).f_globals.get("__name__") != "torch.random":
                calls.append(f"torch.cuda.{name}")
            return f(*args, **kwargs)

        return seeding

    homes = (torch.cuda, torch.cuda.random)
    saved = [(home, name, getattr(home, name)) for home in homes for name in CUDA_SEEDING]
    try:
        for home, name, f in saved:
            setattr(home, name, counted(name, f))
        yield calls
    finally:
        for home, name, f in saved:
            setattr(home, name, f)


@dataclass
class RandomWatch:
    """What :func:`random_watched` saw of its block."""

    reseeded: bool = False  # a global generator reseeded, or Python's or NumPy's drawn from


@contextmanager
def random_watched(watch: bool = True) -> Iterator[RandomWatch]:
    """Watches the block for a reseed of a global random generator (CUDA's by the calls that
    seed them) or a draw from Python's or NumPy's (``watch=False``: sees nothing, for the
    families that do not judge this).
    Torch's CPU generator is first seeded with WATCH_SEED (the grader seeds the reference's
    the same way, so a layer initialised from it draws the same numbers on both sides);
    Python's and NumPy's are moved one draw on, a state no seeding gives (Hypothesis seeds
    both with 0 for every example, so a ``random.seed(0)`` would otherwise change nothing).
    All are put back afterwards: the probe leaves the caller's random numbers as they were."""
    seen = RandomWatch()
    if not watch:
        yield seen
        return
    np = sys.modules.get("numpy")
    saved = (torch.random.get_rng_state(), random.getstate(), np and np.random.get_state())
    torch.default_generator.manual_seed(WATCH_SEED)  # the CPU's only: CUDA's stay as they are
    random.random()
    if np is not None:
        np.random.random()
    start = random_state()
    try:
        with cuda_seeding_counted() as cuda_seeded:
            yield seen
        seen.reseeded = random_state() != start or bool(cuda_seeded)
    finally:
        torch.random.set_rng_state(saved[0])
        random.setstate(saved[1])
        if np is not None:
            np.random.set_state(saved[2])


def run_forbidding(fn: Callable, args: list, kwargs: dict, functions, methods=None) -> dict:
    """``fn(*args, **kwargs)`` with the shortcuts forbidden: its result and what it called.

    An error after a rule broke is not the answer's error but the rule's: it comes back as
    ``{"result": None, "broken": [...]}`` for the check to explain.
    """
    with forbidden(functions, methods) as called:
        try:
            result = fn(*args, **kwargs)
        except Exception:  # RuleBroken, or what it became on its way out (TorchScript wraps it)
            if not called:
                raise
            result = None
    return {"result": result, "broken": sorted(set(called))}


# ---------------------------------------------------------------------------------------
# The families' changes to the inputs, made here so that the answer meets them as they are.


def other_strides(t: torch.Tensor) -> torch.Tensor:
    """The same values in a non-contiguous layout (a ``.view`` of it fails; ``.reshape`` works)."""
    if sum(n > 1 for n in t.shape) >= 2:  # every axis reversed in memory (column-major)
        order = list(reversed(range(t.dim())))
        return t.permute(order).contiguous().permute(order)
    return torch.stack([t, t], dim=-1)[..., 0]  # every other element of a wider buffer


def grad_weights(out: torch.Tensor) -> torch.Tensor:
    """Fixed, uneven weights for ``(out * w).sum()``, the same here and in the grader."""
    n = out.numel()
    w = torch.linspace(-1.0, 1.5, n, dtype=out.dtype, device=out.device) if n else out.new_zeros(0)
    return w.reshape(out.shape)


def describe_meta(value: Any) -> Any:
    """A result computed on ``meta``: each tensor as its device, dtype and shape (no values)."""
    if isinstance(value, torch.Tensor):
        return {"device": str(value.device), "dtype": value.dtype, "shape": list(value.shape)}
    if isinstance(value, (list, tuple)):
        return type(value)(describe_meta(v) for v in value)
    if isinstance(value, dict):
        return {k: describe_meta(v) for k, v in value.items()}
    return value


class ReadOnce:
    """An iterable that can be iterated only once, as a generator or a data stream is."""

    def __init__(self, items: list):
        self.items, self.used = items, False

    def __iter__(self):
        if self.used:
            raise RuntimeError("this iterable was already read once (it is a stream)")
        self.used = True
        return iter(self.items)


def _on_meta(arg: Any) -> Any:
    """An argument moved to the meta device: tensors, modules, and a device argument itself."""
    if isinstance(arg, (torch.Tensor, torch.nn.Module)):
        return arg.to("meta")
    return torch.device("meta") if isinstance(arg, torch.device) else arg


def built(arg: Any, earlier: list | None = None) -> Any:
    """An argument as the answer gets it: ``{"build": [module, builder, spec]}`` becomes the
    object a builder of a probe module makes (a seeded model, an optimizer...); the grader
    makes its own copy with the same builder. ``"of"`` lists earlier arguments the builder
    also gets (an optimizer over the model before it)."""
    if type(arg) is dict and "build" in arg and set(arg) <= {"build", "of"}:
        module, name, spec = arg["build"]
        if not module.startswith("autograder.probes."):
            raise ValueError(f"builders live in autograder.probes, not {module}")
        builder = getattr(importlib.import_module(module), name)
        return builder(spec, *[(earlier or [])[i] for i in arg.get("of", [])])
    return arg


def probe_function(where: list) -> Callable:
    """A function of a probe module, named as [module, name] (a contract's ``view``)."""
    module, name = where
    if not module.startswith("autograder.probes."):
        raise ValueError(f"views live in autograder.probes, not {module}")
    return getattr(importlib.import_module(module), name)


def built_all(args: list) -> list:
    """Every argument built, in order, each Build getting the earlier ones it names."""
    done: list = []
    for a in args:
        done.append(built(a, done))
    return done


def fill_parameters(obj: Any, seed: int = 0, by_name: bool = False) -> Any:
    """A module's parameters filled, in registration order, with values from ``seed``: the
    learner's module and the reference's hold the same weights wherever their parameters
    have the same shapes in the same order (what their texts ask), however each was built.
    ``by_name``, where the text names every parameter (``self.lora_A``): each from a seed of
    its name's, so the order in which the answer registered them does not matter."""
    if isinstance(obj, torch.nn.Module):
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in obj.named_parameters():
                if by_name:
                    g = torch.Generator().manual_seed(seed + zlib.crc32(name.encode()))
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    return obj


def call_device(args: list) -> torch.device | None:
    """The device of the first tensor argument: a constructed module is moved to it."""
    return next((a.device for a in args if isinstance(a, torch.Tensor)), None)


def cast_parts(init: list, call: list) -> list:
    """A class's module arguments (the parts it is built from) in the call's dtype and on its
    device, as the class will be: cast before the caller's snapshot, so that the cast is not
    taken for a change the answer made."""
    dtype, device = call_dtype(call), call_device(call)
    return [a.to(device=device, dtype=dtype) if isinstance(a, torch.nn.Module) else a for a in init]


def call_dtype(args: list) -> torch.dtype | None:
    """The dtype of the first float tensor argument: a constructed module is cast to it."""
    for a in args:
        if isinstance(a, torch.Tensor) and a.dtype.is_floating_point:
            return a.dtype
    return None


def answer_callable(
    answer: Any,
    args: list,
    case: dict,
    place: Callable | None = None,
    watch: RandomWatch | None = None,
) -> tuple[Callable, list, Any]:
    """What the case calls, with what, and the object it belongs to. A function is called on
    all the arguments; a class (``construct``: how many leading arguments go to it) is built
    from the first ones, its weights filled (``fill``) and cast to the dtype and device of the
    call's tensors, then called on the rest; ``method`` names what is called instead
    (``apply`` of a Function). ``place(obj, call)`` puts a built module elsewhere. With
    ``watch``, building is watched as a call is (:func:`random_watched`): a reseed in the
    class's ``__init__`` shows there, where the fork below would otherwise hide it."""
    k = case.get("construct")
    if k is None:
        obj, call = answer, args
    else:
        call = args[k:]
        with torch.random.fork_rng(devices=[]):  # what fill leaves alone, the same every run
            seed_cpu(0)
            with random_watched(watch is not None) as built:
                obj = answer(*cast_parts(args[:k], call))
        if watch is not None:
            watch.reseeded = built.reseeded
        if case.get("fill", True):
            fill_parameters(obj, by_name=case.get("fill") == "by name")
        if isinstance(obj, torch.nn.Module):
            (place or _to_call)(obj, call)
    return (getattr(obj, case["method"]) if case.get("method") else obj), call, obj


def _to_call(obj: torch.nn.Module, call: list) -> None:
    obj.to(device=call_device(call), dtype=call_dtype(call))


def _to_stand_ins(obj: torch.nn.Module, call: list) -> None:
    devices.stand_in_module(obj.to(dtype=call_dtype(call)))


def trained_parameters(objects: list, by_name: bool = False) -> list[torch.nn.Parameter]:
    """The parameters that require grad of every module among ``objects``, in order (of
    their names, ``by_name``): the ``grad`` family compares their gradients too (a weight
    read through .data or .detach() gives the right values and trains nothing)."""
    seen: set[int] = set()
    params = []
    for o in objects:
        if isinstance(o, torch.nn.Module):
            named = list(o.named_parameters())
            for _name, p in sorted(named, key=lambda item: item[0]) if by_name else named:
                if p.requires_grad and id(p) not in seen:
                    seen.add(id(p))
                    params.append(p)
    return params


def effect(arg: Any) -> Any:
    """What an argument the text lets the answer change looks like afterwards, as data the
    grader compares with the reference's copy: a tensor's values and gradient, a module's
    state, modes, requires_grad flags and gradients, an optimizer's settings and state."""
    if isinstance(arg, torch.Tensor):
        grad = None if arg.grad is None else arg.grad.detach().clone()
        return {"values": arg.detach().clone(), "requires_grad": arg.requires_grad, "grad": grad}
    if isinstance(arg, torch.nn.Module):
        params = list(arg.parameters())
        return {
            "state": {k: v.detach().clone() for k, v in arg.state_dict().items()},
            "training": [m.training for m in arg.modules()],
            "requires_grad": [p.requires_grad for p in params],
            "grads": [None if p.grad is None else p.grad.detach().clone() for p in params],
        }
    if isinstance(arg, torch.optim.Optimizer):
        return {
            "settings": [
                {k: v for k, v in sorted(g.items()) if k != "params"} for g in arg.param_groups
            ],
            "state": [dict(sorted(s.items())) for s in arg.state.values()],
        }
    if isinstance(arg, (list, tuple)):
        return [effect(a) for a in arg]
    if isinstance(arg, dict):
        return {str(k): effect(v) for k, v in arg.items()}
    return arg


def snapshot(arg: Any) -> Any:
    """What the caller can see of an argument: a tensor's values, shape, requires_grad and
    memory (its dtype, layout and storage: ``x.data = ...`` or ``x.set_(...)`` swap them
    under the caller's name); a module's state, modes, requires_grad flags, gradients and
    hooks; a list's, tuple's or dict's items. None for the rest."""
    if isinstance(arg, torch.Tensor):
        values = None if arg.device.type == "meta" else arg.detach().clone()
        leaf_grad = arg.grad if arg.is_leaf else None  # (a non-leaf's .grad only warns)
        grad = None if leaf_grad is None or values is None else leaf_grad.clone()
        memory = (arg.dtype, arg.stride(), arg.storage_offset(), _storage(arg))
        return ("tensor", values, tuple(arg.shape), arg.requires_grad, grad, memory)
    if isinstance(arg, (list, tuple)):
        return (type(arg).__name__, len(arg), [snapshot(a) if _watched(a) else a for a in arg])
    if isinstance(arg, dict):
        return ("dict", {k: snapshot(v) if _watched(v) else v for k, v in arg.items()})
    if isinstance(arg, torch.nn.Module):
        return (
            "module",
            {k: v.detach().clone() for k, v in arg.state_dict().items() if v.device.type != "meta"},
            [m.training for m in arg.modules()],
            [
                (p.requires_grad, None if p.grad is None else p.grad.clone())
                for p in arg.parameters()
            ],
            sum(len(h) for m in arg.modules() for h in _hook_dicts(m)),
        )
    return None


def _watched(a: Any) -> bool:
    return isinstance(a, (torch.Tensor, torch.nn.Module, list, tuple, dict))


def _hook_dicts(m: torch.nn.Module) -> list[dict]:
    return [m._forward_hooks, m._forward_pre_hooks, m._backward_hooks]


def same_snapshot(a: Any, b: Any) -> bool:
    """Whether two snapshots are equal (tensors exactly, NaN where NaN was)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and _same(a, b)
    if isinstance(a, (list, tuple)):
        return (
            isinstance(b, (list, tuple))
            and len(a) == len(b)
            and all(same_snapshot(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same_snapshot(a[k], b[k]) for k in a)
        )
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True  # NaN where NaN was
    return a == b


class LargestMade(TorchDispatchMode):
    """The ``largest`` family's measure: the most elements any one tensor an operation made
    in new memory held while the block ran (a view of an operation's input is not new, nor
    PyTorch's zero tensors; an expanded tensor counts its one row). A Hessian formed, even
    batched in one call (vmap, is_grads_batched), makes D * D; batches joined with torch.cat
    make all of them at once; a low-rank update multiplied out makes the full matrix."""

    def __init__(self):
        super().__init__()
        self.peak = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        given = {_storage(t) for t in tensors_in((args, kwargs))}
        for t in tensors_in(out):
            if _storage(t) not in given:
                self.peak = max(self.peak, _allocated(t))
        return out


def _allocated(t: torch.Tensor) -> int:
    """How many elements ``t``'s memory holds: what was made, not how big it looks."""
    try:
        if t._is_zerotensor():
            return 0
        return t.untyped_storage().nbytes() // max(t.element_size(), 1)
    except Exception:  # a tensor without storage (a functorch wrapper): no memory of its own
        return 0


def _storage(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except Exception:  # a tensor without storage (a functorch wrapper): count it as new
        return -id(t)


class SavedTensors:
    """Counts the bytes autograd keeps for backward while a block runs, and their peak.

    Every tensor a graph saves passes through the pack hook and is held by a ``_Held``
    until its graph is freed (after backward, or when the last reference to the loss goes),
    so ``peak`` is how much memory for graphs the block needed at once: one batch's graph
    for a loop that frees each, every batch's for one that keeps them, none under no_grad.
    """

    def __init__(self):
        self.live = self.peak = 0

    def __enter__(self):
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, _Held.unpack)
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc):
        self._hooks.__exit__(*exc)

    def _pack(self, t: torch.Tensor) -> _Held:
        return _Held(t, self)


class _Held:
    """One saved tensor, counted while its graph holds it."""

    def __init__(self, t: torch.Tensor, counter: SavedTensors):
        self.t, self.counter = t, counter
        self.nbytes = t.numel() * t.element_size()
        counter.live += self.nbytes
        counter.peak = max(counter.peak, counter.live)

    def __del__(self):
        self.counter.live -= self.nbytes

    @staticmethod
    def unpack(held: _Held) -> torch.Tensor:
        return held.t


def probe_contract(answer: Callable, case: dict) -> dict:
    """Run the answer on the case as its family asks; return what it did, as data.

    ``case``: ``args`` (each plain data, a tensor, or a ``built`` object), ``kwargs``,
    ``family`` (``values``, ``strides``, ``device``, ``grad``, ``once``...), ``once_args``
    (positions of lists to pass as read-once streams), ``grad_args`` (positions of the float tensors to differentiate),
    ``rules`` (names in SHORTCUTS), ``grad_outputs`` (which float tensors of the result
    to differentiate). Returns ``result``, ``changed`` (positions of the arguments changed
    in place), ``broken`` (shortcuts called), and for ``grad``: ``grads`` when the chosen
    outputs all have a graph; for ``device``: the result described, or ``device_mix``
    with PyTorch's message, or ``inconclusive`` when the answer needs values to run.
    """
    args, kwargs, family = built_all(case["args"]), dict(case.get("kwargs", {})), case["family"]
    grad_args = [i for i in case.get("grad_args", []) if family == "grad"]
    if family == "strides":  # the tensors sent as data (a built one is the builder's to lay out)
        sent = [isinstance(a, torch.Tensor) for a in case["args"]]
        args = [other_strides(a) if data else a for a, data in zip(args, sent, strict=True)]
    if family == "device":
        args = [_on_meta(a) for a in args]
    for i in grad_args:
        args[i] = args[i].detach().requires_grad_(True)
    k = case.get("construct")
    if k is not None:
        args[:k] = cast_parts(args[:k], args[k:])
    before = [snapshot(a) for a in args]
    watched = list(args)  # the caller's objects, compared with their snapshots afterwards
    if family == "once":  # an iterable argument as a stream: it can be read only once
        args = [ReadOnce(a) if i in case.get("once_args", []) else a for i, a in enumerate(args)]
    functions = {SHORTCUTS[name]: name for name in case.get("rules", [])}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a warning is not a verdict, and stderr costs marks
            # The modes as a caller has them (a test cell that called the answer may have left
            # them switched; boundary.run_probe puts back whatever they were afterwards), then
            # what the answer leaves, its class's __init__ included.
            usual_modes()
            modes = modes_now()
            construction = RandomWatch()
            fn, call, obj = answer_callable(
                answer, args, case, watch=construction if family == "values" else None
            )
            one_device = devices.OneDevice() if family == "device" else nullcontext()
            with (
                SavedTensors() if family == "memory" else nullcontext() as saved,
                LargestMade() if family == "largest" else nullcontext() as made,
                one_device,
                random_watched(family == "values") as random_seen,
            ):
                seen = run_forbidding(fn, call, kwargs, functions)
            modes_after = modes_now()
            if case.get("view") and not seen["broken"]:  # objects as the data they stand for
                seen["result"] = probe_function(case["view"])(seen["result"])
    except (RuntimeError, NotImplementedError) as err:
        if family != "device":
            raise
        if any(words in str(err) for words in DEVICE_MIX):
            return {"device_mix": str(err).splitlines()[0][:300]}
        with_values = _on_stand_in(answer, case, functions)
        if with_values is not None:
            return with_values
        return {"inconclusive": f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"}
    if family == "device" and one_device.mixed:  # mixed, and the answer caught the error
        return {"device_mix": f"{devices.MIXED} (in {one_device.mixed[0]})"}
    if family == "device" and case.get("backward"):
        mixed = _backward_on_meta(answer, case, functions)
        if mixed:
            return {"device_mix": mixed}
    result = seen["result"]
    changed = [
        i
        for i, (a, b) in enumerate(zip(watched, before, strict=True))
        if b is not None and not same_snapshot(snapshot(a), b)
    ]
    seen = {"broken": seen["broken"], "changed": changed}
    if modes_after != modes:  # the caller's autograd or default dtype, left switched
        seen["modes"] = [modes, modes_after]
    if saved is not None:
        seen["saved_peak"] = saved.peak
    if made is not None:
        seen["made_peak"] = made.peak
    if family == "values":
        seen["reseeded"] = random_seen.reseeded or construction.reseeded
    if family not in ("device", "grad") and case.get("mutates"):  # what it may change, as it is now
        seen["effects"] = [effect(watched[i]) for i in case["mutates"]]
    if family == "device":
        return seen | {"result": describe_meta(result)}
    if family == "grad":
        # The outputs the reference differentiates (the grader says which), all with a graph.
        outs = [t for t in tensors_in(result) if t.is_floating_point()]
        chosen = [outs[k] for k in case.get("grad_outputs", []) if k < len(outs)]
        if (
            chosen
            and len(chosen) == len(case["grad_outputs"])
            and all(t.requires_grad for t in chosen)
        ):
            # d(sum of w * out)/d(input), with each w handed to backward as the output's
            # gradient itself, so a backward that changes its grad_output in place shows.
            weights = [grad_weights(t) for t in chosen]
            kept = [w.clone() for w in weights]
            params = trained_parameters([*args, obj], by_name=case.get("fill") == "by name")
            wrt = [args[i] for i in grad_args] + params
            grads = []
            if wrt:
                grads = list(
                    torch.autograd.grad(chosen, wrt, grad_outputs=weights, allow_unused=True)
                )
            # A custom autograd.Function's backward runs here, not in the call: what it
            # leaves switched is the caller's too.
            after_backward = modes_now()
            if after_backward != modes and "modes" not in seen:
                seen["modes"] = [modes, after_backward]
            seen["grads"] = grads[: len(grad_args)]
            seen["param_grads"] = grads[len(grad_args) :]
            seen["grad_output_changed"] = not all(map(torch.equal, weights, kept))
    return seen | {"result": result}


def _backward_on_meta(answer: Callable, case: dict, functions: dict) -> str | None:
    """The device family's backward, for a contract that also declares ``grad``: the call
    once more on ``meta`` with its float inputs requiring grad, then the gradients of its
    float outputs with respect to them and to the parameters it trains. PyTorch's words
    where forward or backward mixed devices (a custom backward that makes a CPU tensor),
    else None (any other error tells nothing: meta holds no values)."""
    try:
        args = [_on_meta(a) for a in built_all(case["args"])]
        for i in case.get("grad_args", []):
            args[i] = args[i].detach().requires_grad_(True)
        k = case.get("construct")
        if k is not None:
            args[:k] = cast_parts(args[:k], args[k:])
        # built outside OneDevice: moving a module's parameters compares their types, which
        # OneDevice would take for a mix
        fn, call, obj = answer_callable(answer, args, case)
    except Exception:  # the forward run has judged what building does
        return None
    wrt = [args[i] for i in case.get("grad_args", [])] + trained_parameters([*args, obj])

    def forward_and_backward():
        result = run_forbidding(fn, call, dict(case.get("kwargs", {})), functions)["result"]
        outs = [t for t in tensors_in(result) if t.is_floating_point() and t.requires_grad]
        if outs and wrt:
            weights = [torch.ones_like(t) for t in outs]
            torch.autograd.grad(outs, wrt, grad_outputs=weights, allow_unused=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        usual_modes()
        return devices.on_meta(forward_and_backward).get("device_mix")


def _on_stand_in(answer: Callable, case: dict, functions: dict) -> dict | None:
    """The device family once more, on tensors that keep their values (``devices.py``), for
    an answer that ``meta`` could not run because it reads values: the tensor arguments, the
    built models (before what is built over them: an optimizer holds their stand-ins) and the
    object a class builds all stand for a GPU's. None where that cannot tell either: another
    error, or a ``torch.func`` transform (its tensors drop the stand-in's class)."""
    args: list = []
    for a in case["args"]:
        args.append(_here(built(a, args)))
    kwargs = {k: _here(v) for k, v in case.get("kwargs", {}).items()}
    k = case.get("construct")
    if k is not None:
        args[:k] = cast_parts(args[:k], args[k:])
    placed = devices.Placed()
    try:
        # seeded, as the builders are: the same answer gives the same result every run (a
        # shuffled loader, dropout), and the caller's random state is left as it was
        with warnings.catch_warnings(), placed, torch.random.fork_rng(devices=[]):
            warnings.simplefilter("ignore")
            seed_cpu(0)
            usual_modes()  # as the meta run started (it may have switched them)
            # built under Placed: what the class makes with device= is placed, as on a GPU
            fn, call, _obj = answer_callable(answer, args, case, place=_to_stand_ins)
            seen = run_forbidding(fn, call, kwargs, functions)
            if case.get("view") and not seen["broken"]:
                seen["result"] = probe_function(case["view"])(seen["result"])
    except Exception as err:  # the answer's own error: meta's verdict (inconclusive) stands
        if devices.MIXED in str(err) and not placed.transformed:
            return {"device_mix": devices.MIXED}
        return None
    if placed.transformed:
        return None
    result = devices.describe(seen["result"])
    return {"broken": seen["broken"], "changed": [], "result": result}


def _here(arg: Any) -> Any:
    """An argument for the stand-in run: tensors and models as stand-ins; a device argument
    names the CPU, the inputs' device here (so what the answer makes with it is placed)."""
    if isinstance(arg, torch.device):
        return torch.device("cpu")
    if isinstance(arg, torch.nn.Module):
        return devices.stand_in_module(arg)
    return devices.stand_in(arg)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values (NaN where NaN was counts as unchanged)."""
    if type(a) is not type(b) or a.dtype != b.dtype or a.shape != b.shape:
        return False  # a tensor subclass (a quantized weight, say) put in place counts too
    try:
        if a.dtype.is_floating_point or a.dtype.is_complex:
            return bool(torch.allclose(a, b, rtol=0.0, atol=0.0, equal_nan=True))
        return bool(torch.equal(a, b))
    except (NotImplementedError, RuntimeError, TypeError):  # a subclass that cannot compare
        return False
