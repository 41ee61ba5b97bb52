"""Checks whose failure messages teach: type, then shape (named dims), then dtype, device, values.

Visible tests in the notebooks and hidden tests in the grader use these same helpers, so a
learner meets one vocabulary of messages. Every check raises ``CheckError`` (an
``AssertionError``) and returns nothing when it passes.
"""

from __future__ import annotations

import dis
import inspect
import linecache
import math
import os
import sys
import sysconfig
import traceback
import types
from collections.abc import Callable, Sequence

import torch

from tutorial_lib.i18n import _


class CheckError(AssertionError):
    """A check failed; the message says what differs and what to try."""


# The default names of what a check looks at: translated when shown, like the messages.
# A name a test passes (``what="to_nchw(x)"``) is code, and stays as it is.
_DEFAULT_WHATS = ("result", "backward", "your function")


def _what(what: str) -> str:
    return _(what) if what in _DEFAULT_WHATS else what


# Default tolerances per dtype: (rtol, atol). Float32 matches torch.testing's defaults;
# half precision keeps about three significant digits.
TOLERANCES = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1.3e-6, 1e-5),
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-5),
}


def shape_str(shape: Sequence[int]) -> str:
    """Format a shape like Python prints a tuple: ``(2, 3)``, ``(5,)``, ``()``."""
    return str(tuple(int(s) for s in shape))


def _names_list(names: str | Sequence[str] | None, ndim: int) -> list[str] | None:
    if names is None:
        return None
    parts = names.split() if isinstance(names, str) else list(names)
    if len(parts) != ndim:
        raise ValueError(f"names {names!r} has {len(parts)} entries for a {ndim}-d shape")
    return parts


def check_type(obj: object, expected_type: type | tuple[type, ...], what: str = "result") -> None:
    """Fail unless ``obj`` is an instance of ``expected_type``; suggest the usual conversion."""
    if isinstance(obj, expected_type):
        return
    wanted = (
        _(" or ").join(t.__name__ for t in expected_type)
        if isinstance(expected_type, tuple)
        else expected_type.__name__
    )
    module, got = type(obj).__module__, type(obj).__name__
    # An object the grader could only receive as its type's name (autograder.wire's
    # Unsendable) says which type it stands for: name that one, not the stand-in.
    stands_for = getattr(obj, "type_name", None)
    if isinstance(stands_for, str) and "." in stands_for:
        module, _dot, got = stands_for.rpartition(".")
    hint = ""
    if obj is None:
        hint = _(" Did you forget a `return` (or, for a .grad, to call backward())?")
    elif expected_type is torch.Tensor and module.split(".")[0] == "numpy":
        hint = _(" Convert with torch.from_numpy(...) or torch.as_tensor(...).")
    elif expected_type is torch.device and isinstance(obj, str):
        hint = _(" Wrap the name: torch.device({name}).").format(name=repr(obj))
    elif expected_type is torch.Tensor and isinstance(obj, (int, float, list, tuple)):
        hint = _(" Build a tensor with torch.tensor(...).")
    elif expected_type in (float, int) and isinstance(obj, torch.Tensor):
        hint = _(" Use .item() to turn a one-element tensor into a Python number.")
    article = "an" if wanted[:1].lower() in "aeiou" else "a"
    raise CheckError(
        _("{what} should be {article} {wanted}, got {got}.{hint}").format(
            what=_what(what), article=article, wanted=wanted, got=got, hint=hint
        )
    )


def check_shape(
    tensor: object,
    expected: Sequence[int],
    names: str | Sequence[str] | None = None,
    what: str = "result",
) -> None:
    """Fail unless ``tensor.shape == expected``; name the dimensions that differ.

    ``names`` labels the expected dimensions, e.g. ``"N C H W"``; ``None`` in ``expected``
    accepts any size for that dimension.
    """
    check_type(tensor, torch.Tensor, what)
    actual = tuple(tensor.shape)
    expected = tuple(expected)
    labels = _names_list(names, len(expected))
    as_names = _(" as ({names})").format(names=", ".join(labels)) if labels else ""
    if len(actual) == len(expected) and all(
        e is None or a == e for a, e in zip(actual, expected, strict=True)
    ):
        return
    head = _("{what} has shape {actual}, expected {expected}{as_names}").format(
        what=_what(what),
        actual=shape_str(actual),
        expected=_fmt_expected(expected),
        as_names=as_names,
    )
    if len(actual) != len(expected):
        hint = _rank_hint(actual, expected)
        raise CheckError(
            _("{head}: it has {ndim} dimensions, expected {expected_ndim}.{hint}").format(
                head=head, ndim=len(actual), expected_ndim=len(expected), hint=hint
            )
        )
    differing = [
        (i, a, e)
        for i, (a, e) in enumerate(zip(actual, expected, strict=True))
        if e is not None and a != e
    ]
    parts = [
        _("{dim} is {size}, expected {expected}").format(
            dim=labels[i] if labels else _("dim {i}").format(i=i), size=a, expected=e
        )
        for i, a, e in differing
    ]
    detail = _("; ").join(parts)
    hint = ""
    if None not in expected and sorted(actual) == sorted(expected):
        if labels and len(differing) == 2:
            swapped = _(" and ").join(labels[i] for i, _a, _e in differing)
            hint = _(" {dims} are swapped - did you permute in the wrong order?").format(
                dims=swapped
            )
        else:
            hint = _(
                " The sizes are right but in another order - did you permute in the wrong order?"
            )
    elif None not in expected and math.prod(actual) == math.prod(expected):
        hint = _(" Same number of elements: a reshape or view with the wrong sizes?")
    raise CheckError(_("{head}: {detail}.{hint}").format(head=head, detail=detail, hint=hint))


def _fmt_expected(expected: tuple) -> str:
    if None in expected:
        return "(" + ", ".join("*" if e is None else str(e) for e in expected) + ")"
    return shape_str(expected)


def _rank_hint(actual: tuple, expected: tuple) -> str:
    squeezed_a = tuple(s for s in actual if s != 1)
    squeezed_e = tuple(s for s in expected if s != 1 and s is not None)
    if squeezed_a == squeezed_e:
        if len(actual) > len(expected):
            return _(
                " Extra size-1 dimensions: a reduction without keepdim=False, or a missing squeeze?"
            )
        return _(" Missing size-1 dimensions: did you need keepdim=True or unsqueeze?")
    if len(actual) < len(expected):
        return _(" Did a reduction or flatten remove a dimension you needed?")
    return ""


def check_dtype(tensor: object, expected: torch.dtype, what: str = "result") -> None:
    """Fail unless ``tensor.dtype == expected``; explain the common dtype slips."""
    check_type(tensor, torch.Tensor, what)
    if tensor.dtype == expected:
        return
    hint = ""
    if expected == torch.int64 and tensor.dtype == torch.float32 and tensor.numel() == 0:
        hint = _(" An empty tensor has no values to infer from: pass dtype=torch.int64.")
    elif expected == torch.int64 and tensor.dtype == torch.float32:
        hint = _(  # the usual ways integers turn into floats on the way
            " Floats come from torch.Tensor(...) (always float32), true division (/) and"
            " float factories (torch.zeros without dtype); torch.tensor(...) of Python ints,"
            " // and dtype=torch.int64 keep integers."
        )
    elif expected == torch.float32 and tensor.dtype == torch.float64:
        hint = _(" NumPy arrays are float64 by default: cast with .float() or dtype=torch.float32.")
    elif expected.is_floating_point and not tensor.dtype.is_floating_point:
        hint = _(" Integer tensors cannot hold fractions or gradients: cast with .float().")
    raise CheckError(
        _("{what} has dtype {actual}, expected {expected}.{hint}").format(
            what=_what(what), actual=tensor.dtype, expected=expected, hint=hint
        )
    )


def _resolved_index(device: torch.device) -> int:
    """The index a device name stands for: its own, or the current one of its type."""
    if device.index is not None:
        return device.index
    if device.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.current_device()
    return 0  # cpu, mps, meta, and cuda where this process has none: there is only device 0


def same_device(a: torch.device | str, b: torch.device | str) -> bool:
    """Whether ``a`` and ``b`` are the same device once resolved: ``cuda`` is ``cuda:0`` (the
    current one), ``cpu`` is ``cpu:0``; a different type or index is another device.

    Compare devices with this, never with ``==``: ``torch.device("cuda") == torch.device("cuda:0")``
    is False although both name the same GPU.
    """
    a, b = torch.device(a), torch.device(b)
    return a.type == b.type and _resolved_index(a) == _resolved_index(b)


_same_device = same_device  # the old private name, kept for callers elsewhere


def check_device(tensor: object, expected: torch.device | str, what: str = "result") -> None:
    """Fail unless ``tensor`` lives on ``expected``; suggest ``.to(device)``."""
    check_type(tensor, torch.Tensor, what)
    expected = torch.device(expected)
    if same_device(tensor.device, expected):
        return
    raise CheckError(
        _(
            "{what} is on {actual}, expected {expected}. Create it on the input's device"
            " (e.g. torch.zeros(..., device=x.device)) or move it with .to(device)."
        ).format(what=_what(what), actual=tensor.device, expected=expected)
    )


def tolerances(dtype: torch.dtype) -> tuple[float, float]:
    """Default (rtol, atol) for comparing values of ``dtype``; zero for exact dtypes."""
    return TOLERANCES.get(dtype, (0.0, 0.0))


def assert_close(
    actual: object,
    expected: object,
    rtol: float | None = None,
    atol: float | None = None,
    what: str = "result",
    names: str | Sequence[str] | None = None,
    exact_dtype: bool = True,
    same_device: bool = True,
) -> None:
    """Fail unless ``actual`` matches ``expected`` in type, shape, dtype, device and values.

    Values are compared within ``atol + rtol * |expected|`` (defaults per dtype); the message
    reports how many positions differ, the first differing index, and the max abs/rel error.
    """
    if not isinstance(expected, torch.Tensor):
        expected = torch.as_tensor(expected)
        if isinstance(actual, torch.Tensor):
            expected = expected.to(actual.device)
            exact_dtype = exact_dtype and not expected.dtype.is_floating_point
    check_type(actual, torch.Tensor, what)
    check_shape(actual, tuple(expected.shape), names=names, what=what)
    if exact_dtype:
        check_dtype(actual, expected.dtype, what)
    if same_device:
        check_device(actual, expected.device, what)
    default_rtol, default_atol = tolerances(expected.dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    _compare_values(actual, expected, rtol, atol, what)


def _compare_values(
    actual: torch.Tensor, expected: torch.Tensor, rtol: float, atol: float, what: str
) -> None:
    a = actual.detach().to("cpu", torch.float64)
    e = expected.detach().to("cpu", torch.float64)
    if a.numel() == 0:
        return
    both_nan = torch.isnan(a) & torch.isnan(e)
    abs_err = (a - e).abs()
    ok = (abs_err <= atol + rtol * e.abs()) | both_nan
    ok &= ~(torch.isnan(a) ^ torch.isnan(e))  # a NaN on one side only is always wrong
    if bool(ok.all()):
        return
    bad = ~ok
    first = tuple(int(i) for i in torch.nonzero(bad)[0].tolist())
    finite = bad & torch.isfinite(abs_err)
    max_abs = float(abs_err[finite].max()) if bool(finite.any()) else float("nan")
    # Relative error only means something where the expected value is not zero.
    relative = finite & (e != 0)
    rel = (
        _(", max rel error {error}").format(
            error=f"{float((abs_err[relative] / e[relative].abs()).max()):.3g}"
        )
        if bool(relative.any())
        else ""
    )
    where = _("index {index}").format(index=first) if first else _("the only element")
    raise CheckError(
        _(
            "{what} differs from the expected values at {bad} of {total} positions."
            " First at {where}: got {got}, expected {expected}."
            " Max abs error {max_abs}{rel} (allowed: atol={atol}, rtol={rtol})."
        ).format(
            what=_what(what),
            bad=int(bad.sum()),
            total=a.numel(),
            where=where,
            got=_num(a[first]),
            expected=_num(e[first]),
            max_abs=f"{max_abs:.3g}",
            rel=rel,
            atol=f"{atol:g}",
            rtol=f"{rtol:g}",
        )
    )


def _num(x: torch.Tensor) -> str:
    value = float(x)
    return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.6g}"


def check_gradcheck(
    fn: Callable[..., torch.Tensor], *inputs: torch.Tensor, what: str = "backward"
) -> None:
    """Fail unless ``fn``'s analytic gradients match finite differences (float64 inputs)."""
    prepared = tuple(
        x.detach().to(torch.float64).requires_grad_(True)
        if isinstance(x, torch.Tensor) and x.is_floating_point()
        else x
        for x in inputs
    )
    try:
        torch.autograd.gradcheck(fn, prepared, eps=1e-6, atol=1e-5, rtol=1e-3)
    except Exception as err:  # gradcheck raises GradcheckError or whatever fn raised
        text = str(err).strip()
        first_line = text.splitlines()[0].rstrip(" ,.:;") if text else type(err).__name__
        raise CheckError(
            _(
                "{what} disagrees with finite differences: {error}. Did backward multiply by"
                " grad_output and return one gradient per forward input?"
            ).format(what=_what(what), error=first_line)
        ) from None


def check_no_hooks_left(model: torch.nn.Module, what: str = "your function") -> None:
    """Fail if any submodule of ``model`` still has a forward hook after ``what`` returned."""
    left = [name or "(the model)" for name, m in model.named_modules() if m._forward_hooks]
    if left:
        raise CheckError(
            _(
                "{what} left forward hooks on {modules}. Keep the handle that "
                "register_forward_hook returns and call handle.remove() on each (in a finally: "
                "block), or every later forward pass runs your hooks again."
            ).format(what=_what(what), modules=left)
        )


# --- Calling the learner's function ---------------------------------------------------------

# Where library code lives: frames from these folders are dropped from a learner's traceback.
# The learner's own frames are the rest (notebook cells, and whatever file they wrote).
_LIBRARY_DIRS = tuple(
    os.path.join(d, "")  # with the separator, so that /x/torch does not hold /x/torchvision
    for d in {
        os.path.dirname(torch.__file__),
        os.path.dirname(os.path.abspath(__file__)),
        *(sysconfig.get_paths().get(k) or "" for k in ("stdlib", "purelib", "platlib")),
    }
    if d
)

# The kinds of error a hint can be given for, tried in this order: a device or index
# message often mentions "size" or "dimension" too, so shape comes last; autograd's
# complaints about in-place changes mention gradients too, so inplace comes before grad.
_ERROR_KINDS = (
    ("device", ("device", "cuda", "mps")),
    ("dtype", ("dtype", "scalar type", "result type", "not implemented for '")),
    ("inplace", ("in-place", "inplace")),
    ("grad", ("grad", "backward")),
    ("index", ("index", "out of range", "out of bounds")),
    (
        "shape",
        (
            "shape", "size", "mat1 and mat2", "must match", "broadcast", "dimension", "mismatch",
            "cannot be multiplied",
        ),
    ),
)  # fmt: skip


class CallError(CheckError):
    """The learner's function raised: the message names the call, the error, the learner's
    own lines of the traceback and the exercise's hint."""


def call(fn: Callable, *args: object, hints: str | dict[str, str] | None = None, **kwargs: object):
    """Return ``fn(*args, **kwargs)``; if it raises, fail with a message a learner can act on.

    The message says which call failed (the function's name and each argument's kind:
    shape, dtype and device for tensors, ``len`` for lists), the original error, only the
    learner's own traceback lines (torch's, this library's and other installed code's are
    dropped) and the exercise's hint for that kind of error. ``hints`` is one string, shown
    for any error, or a dict with keys ``"shape"`` (size mismatches, mat1 and mat2),
    ``"dtype"``, ``"device"``, ``"index"``, ``"inplace"`` (autograd and in-place changes),
    ``"grad"`` (backward, requires_grad) and ``"any"`` (shown when no other key matches)::

        out = call(attention, q, k, v, hints={"shape": "Transpose k's last two dims."})

    The stub's ``NotImplementedError`` (a blank exercise) passes through unchanged.
    """
    __tracebackhide__ = True  # pytest leaves this frame out of its reports
    try:
        return fn(*args, **kwargs)
    except NotImplementedError as err:
        if is_stub(err):
            raise
        frames = learner_frames(err.__traceback__)
        name = getattr(fn, "__name__", type(fn).__name__)
        message = call_failure_message(
            describe_call(name, args, kwargs), type(err).__name__, str(err), frames, hints
        )
    except Exception as err:  # anything the learner's code raised, with its traceback
        frames = learner_frames(err.__traceback__)
        name = getattr(fn, "__name__", type(fn).__name__)
        message = call_failure_message(
            describe_call(name, args, kwargs), type(err).__name__, str(err), frames, hints
        )
    # A notebook shows the lines above this one. To the learner: your function raised an
    # error. The message below says which call it was, shows only your own lines of the
    # traceback (torch's are left out: they would bury it) and adds the exercise's hint.
    raise CallError(message) from None


def describe_arg(value: object) -> str:
    """One argument as a learner needs it to debug: ``tensor(2, 3) float32 cpu``, ``list len 4``."""
    if isinstance(value, torch.Tensor):
        return f"tensor{shape_str(value.shape)} {str(value.dtype).removeprefix('torch.')} {value.device}"
    if isinstance(value, (bool, int, float)) or value is None:
        return repr(value)
    if isinstance(value, (list, tuple, dict)):
        return f"{type(value).__name__} len {len(value)}"
    return type(value).__name__


def describe_call(name: str, args: Sequence[object], kwargs: dict[str, object]) -> str:
    """``name(tensor(2, 3) float32 cpu, dim=1)``."""
    parts = [describe_arg(a) for a in args] + [f"{k}={describe_arg(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def learner_frames(tb: types.TracebackType | None) -> list[str]:
    """The traceback's lines from the learner's own code, as ``where, line N, in name: source``."""
    lines = []
    for frame, lineno in traceback.walk_tb(tb):
        if _is_library(frame):
            continue
        code = frame.f_code
        source = linecache.getline(code.co_filename, lineno, frame.f_globals).strip()
        source = f": {source}" if source else ""
        lines.append(f"{_where(code.co_filename)}, line {lineno}, in {code.co_name}{source}")
    return lines


def is_stub(err: BaseException) -> bool:
    """Whether ``err`` is an unanswered exercise: a NotImplementedError raised by the
    learner's own code (the stub's ``raise NotImplementedError()``). One raised inside a
    library is an error like any other (an operator with no kernel for that device or dtype,
    an nn.Module subclass without forward), and "not answered yet" would mislead."""
    if not isinstance(err, NotImplementedError):
        return False
    frames = list(traceback.walk_tb(err.__traceback__))
    return not frames or not _is_library(frames[-1][0])


def learner_call(tb: types.TracebackType | None) -> str:
    """The first call into the learner's code in ``tb`` with its arguments, as far as they can
    still be seen: ``MLP.forward(x=tensor(4, 3) float32 cpu)``; an argument the function
    assigned to before it raised shows as ``x=...``. Empty when ``tb`` has no learner frame."""
    for frame, _lineno in traceback.walk_tb(tb):
        if _is_library(frame):
            continue
        code = frame.f_code
        if code.co_name.startswith("<"):  # a cell or a module: not a function call
            return ""
        count = code.co_argcount + code.co_kwonlyargcount
        count += bool(code.co_flags & inspect.CO_VARARGS) + bool(
            code.co_flags & inspect.CO_VARKEYWORDS
        )
        assigned = {i.argval for i in dis.get_instructions(code) if i.opname in _ASSIGNS}
        shown = [
            f"{name}={'...' if name in assigned else describe_arg(frame.f_locals.get(name))}"
            for name in code.co_varnames[:count]
            if name not in ("self", "cls")
        ]
        return f"{code.co_qualname}({', '.join(shown)})"
    return ""


_ASSIGNS = ("STORE_FAST", "DELETE_FAST", "STORE_DEREF", "DELETE_DEREF")

# Packages whose frames are never the learner's: their code can be loaded from anywhere
# (the grader hands its probes to the kernel as source), so their module names tell.
_LIBRARY_PACKAGES = ("torch", "tutorial_lib", "autograder", "numpy")


def _is_library(frame: types.FrameType) -> bool:
    path = frame.f_code.co_filename
    package = str(frame.f_globals.get("__name__", "")).partition(".")[0]
    return (
        package in _LIBRARY_PACKAGES
        or path.startswith("<frozen ")
        or os.path.abspath(path).startswith(_LIBRARY_DIRS)
    )


def _where(path: str) -> str:
    """A notebook cell's file as IPython names it (``Cell In[5]``), any other file as is."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    count = getattr(getattr(shell, "compile", None), "_filename_map", {}).get(path)
    return f"Cell In[{count}]" if count is not None else path


def error_kind(type_name: str, message: str) -> str | None:
    """Which hint key an error of ``type_name`` with ``message`` is about, or None."""
    if type_name == "IndexError":
        return "index"
    text = message.lower()
    for kind, words in _ERROR_KINDS:
        if any(w in text for w in words):
            return kind
    return None


def call_failure_message(
    call_text: str,
    type_name: str,
    message: str,
    frames: Sequence[str],
    hints: str | dict[str, str] | None = None,
    called_as: str = "",
) -> str:
    """The text of a :class:`CallError`; the grader's hidden checks use it as well, with
    ``called_as`` (the learner's function as the grader's probe called it) in place of a hint.
    """
    text = message.strip() or _("(no message)")
    text = text if len(text) <= 800 else text[:800] + " ..."
    lines = [
        _("{call} raised {error_type}: {message}").format(
            call=call_text, error_type=type_name, message=text
        )
    ]
    if frames:
        lines.append(_("Your code, where it raised (last line last):"))
        lines += [f"  {f}" for f in frames]
    if called_as:
        lines.append(_("Called as {call}").format(call=called_as))
    hint = hints
    if isinstance(hints, dict):
        kind = error_kind(type_name, message)
        hint = hints.get(kind) if kind in hints else hints.get("any")
    if hint:
        lines.append(_("Hint: {hint}").format(hint=hint))
    return "\n".join(lines)
