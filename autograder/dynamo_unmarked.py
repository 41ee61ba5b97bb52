"""Checks on the meta device without importing torch.compile's tracer for them.

PyTorch wraps its Python meta kernels, and every TorchDispatchMode's ``__torch_dispatch__``,
in ``torch._disable_dynamo``: on a kernel's first call the wrapper imports ``torch._dynamo``
(about 1.1 s, the compiler's tracer) only to mark the kernel as one ``torch.compile`` must
not trace. A lesson that neither compiles nor builds an optimizer (02 autograd) would pay
that import for its checks alone, in the learner's kernel.

While ``torch._dynamo`` is not loaded no compile can be running, so the mark changes
nothing. Inside :func:`dynamo_unmarked`, the import made by that wrapper (in
``torch._compile``, and only there) gets a stand-in whose ``disable`` hands the kernel back
as it is; when the outermost block ends, each kernel so answered loses its mark again, so a
later call marks it for real. Nothing is put in ``sys.modules``: any other import of
``torch._dynamo`` (torch.export's internals, the learner's code, an optimizer) loads the
real module as usual, and from then on the wrapper finds it there and is not answered.
"""

from __future__ import annotations

import builtins
import contextlib
import sys
from collections.abc import Callable, Iterator

import torch._compile

_outer_import: Callable | None = None  # builtins.__import__ as the outermost block found it
_answered: list[Callable] = []  # kernels whose mark is the stand-in's, unmarked at the end
_depth = 0


class _StandInDynamo:
    @staticmethod
    def disable(fn: Callable, recursive: bool = True, wrapping: bool = True) -> Callable:
        _answered.append(fn)
        return fn  # the wrapper stores it as fn.__dynamo_disable and calls it


class _StandInTorch:
    """What ``import torch._dynamo`` binds (the name ``torch``) in torch._compile's wrapper."""

    _dynamo = _StandInDynamo


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if name.startswith("torch._dynamo") or "torch._dynamo" in sys.modules:
        if globals is vars(torch._compile) and "torch._dynamo" not in sys.modules:
            return _StandInTorch
        # The real module is loading or loaded (torch.compile, torch.export, an optimizer):
        # step aside for good, before the compiler could meet this Python function.
        _step_aside()
    return _outer_import(name, globals, locals, fromlist, level)


def _step_aside() -> None:
    if builtins.__import__ is _import:
        builtins.__import__ = _outer_import


@contextlib.contextmanager
def dynamo_unmarked() -> Iterator[None]:
    """Run the block with torch._compile's lazy import of torch._dynamo answered by the
    stand-in (see the module's text) while torch._dynamo is not loaded; nested blocks are
    one."""
    global _depth, _outer_import
    if _depth == 0 and "torch._dynamo" not in sys.modules:
        _outer_import, builtins.__import__ = builtins.__import__, _import
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            _step_aside()
            while _answered:
                fn = _answered.pop()
                if getattr(fn, "__dynamo_disable", None) is fn:
                    del fn.__dynamo_disable
