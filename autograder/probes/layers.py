"""Probes for 04_layers (see autograder/probes/__init__.py).

The builders (``build_embedding``, ``build_encoder_layer``) make the same seeded objects in
the learner's kernel and in the grader, so the check can compute the expected answer on its
own copy. They hold no answers: they only make inputs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode


class RuleBroken(Exception):
    """Raised inside an answer that calls what its exercise's text forbids."""


class _Forbid(TorchFunctionMode):
    """While active, each torch function in ``functions`` raises RuleBroken; calls are noted."""

    def __init__(self, functions: dict[Callable, str], called: list[str]):
        super().__init__()
        self.functions, self.called = functions, called

    def __torch_function__(self, func, types, args=(), kwargs=None):
        for forbidden, name in self.functions.items():
            if func is forbidden:
                self.called.append(name)
                raise RuleBroken(f"{name} is not allowed in this exercise")
        return func(*args, **(kwargs or {}))


@contextmanager
def forbidden(
    functions: dict[Callable, str], methods: dict[tuple[type, str], str] | None = None
) -> Iterator[list[str]]:
    """For the duration of the block, the exercise's forbidden shortcuts raise RuleBroken.

    ``functions`` are torch functions (caught by a TorchFunctionMode, so also when a module
    calls them); ``methods`` are (class, name) pairs replaced on the class (so ``layer(x)``,
    ``layer.forward(x)`` and ``type(layer).forward(layer, x)`` all raise). Yields the list of
    names called, which stays filled even when the answer catches the error.
    """
    called: list[str] = []

    def raiser(name: str):
        def forbidden_method(*args, **kwargs):
            called.append(name)
            raise RuleBroken(f"{name} is not allowed in this exercise")

        return forbidden_method

    saved = {(cls, attr): cls.__dict__[attr] for cls, attr in methods or {}}
    try:
        for (cls, attr), name in (methods or {}).items():
            setattr(cls, attr, raiser(name))
        with _Forbid(functions, called):
            yield called
    finally:
        for (cls, attr), original in saved.items():
            setattr(cls, attr, original)


def _run_forbidding(fn: Callable, args: list, kwargs: dict, functions, methods=None) -> dict:
    """``fn(*args, **kwargs)`` with the shortcuts forbidden: its result and what it called.

    An uncaught RuleBroken is not the answer's error but the rule's: it comes back as
    ``{"result": None, "broken": [...]}`` for the check to explain.
    """
    with forbidden(functions, methods) as called:
        try:
            result = fn(*args, **kwargs)
        except RuleBroken:
            result = None
    return {"result": result, "broken": sorted(set(called))}


# The text's "by hand" rules (issue #27): each exercise's shortcuts, named as a learner writes them.
BATCH_NORM_SHORTCUTS = {
    F.batch_norm: "F.batch_norm (or an nn.BatchNorm layer)",
    torch.batch_norm: "torch.batch_norm",
    torch.native_batch_norm: "torch.native_batch_norm",
}
ATTENTION_SHORTCUTS = {
    F.scaled_dot_product_attention: "F.scaled_dot_product_attention",
    F.multi_head_attention_forward: "F.multi_head_attention_forward (or nn.MultiheadAttention)",
}
ENCODER_SHORTCUTS = {F.multi_head_attention_forward: "F.multi_head_attention_forward"} | {
    getattr(torch, name): f"torch.{name}"  # the layer's fused fast paths, private: where present
    for name in ("_transformer_encoder_layer_fwd", "_native_multi_head_attention")
    if hasattr(torch, name)
}
ENCODER_METHODS = {
    (nn.TransformerEncoderLayer, "forward"): "layer(x) (nn.TransformerEncoderLayer.forward)",
    (nn.MultiheadAttention, "forward"): "layer.self_attn(...) (nn.MultiheadAttention.forward)",
}


def _changed(before: list[torch.Tensor], after: list[torch.Tensor | None]) -> list[int]:
    """Positions of the tensors an answer changed in place."""
    return [
        i
        for i, (b, a) in enumerate(zip(before, after, strict=True))
        if a is not None and not torch.equal(b, a)
    ]


def probe_receptive_field(receptive_field, case: dict) -> dict:
    """The answer for a stack given as a list of (kernel_size, stride) tuples, and the list after."""
    layers = [tuple(pair) for pair in case["layers"]]
    result = receptive_field(layers)
    return {"result": result, "layers_after": [list(pair) for pair in layers]}


def probe_batch_norm(batch_norm, case: dict) -> dict:
    """The three returned tensors, and which inputs (x, mean, var, weight, bias) it changed."""
    names = ("x", "running_mean", "running_var", "weight", "bias")
    inputs = [case[name] for name in names]
    before = [t.clone() if t is not None else torch.zeros(0) for t in inputs]
    kwargs = {"training": case["training"]} | case.get("kwargs", {})
    seen = _run_forbidding(batch_norm, inputs, kwargs, BATCH_NORM_SHORTCUTS)
    after = [t if t is not None else None for t in inputs]
    return seen | {"changed": [names[i] for i in _changed(before, after)]}


def build_embedding(case: dict) -> nn.Embedding:
    """A seeded embedding table (with or without a padding_idx) on the case's device."""
    g = torch.Generator().manual_seed(case["seed"])
    with torch.random.fork_rng(devices=[]):  # the layer's own init must not move the global RNG
        table = nn.Embedding(case["num"], case["dim"], padding_idx=case.get("padding_idx"))
    with torch.no_grad():
        table.weight.copy_(torch.randn(case["num"], case["dim"], generator=g))
    return table.to(case["device"])


def probe_mean_embedding(mean_embedding, case: dict) -> dict:
    """The output, the gradient it sends to the table, and whether tokens were changed."""
    table = build_embedding(case)
    tokens = case["tokens"]
    before = tokens.clone()
    out = mean_embedding(tokens, table, case["pad_id"])
    seen = {"out": out, "tokens_changed": not torch.equal(before, tokens), "grad": None}
    if isinstance(out, torch.Tensor) and out.requires_grad:
        (out * case["weights"]).sum().backward()
        seen["grad"] = table.weight.grad
    return seen


def probe_causal_mask(causal_mask, case: dict) -> dict:
    """causal_mask(t_q, t_k[, device=...]); with ``describe``, only where the result lives.

    A tensor on the meta device has no values to send, so for that case the probe returns its
    device, shape and dtype instead.
    """
    kwargs = {"device": torch.device(case["device"])} if "device" in case else {}
    result = causal_mask(case["t_q"], case["t_k"], **kwargs)
    if not case.get("describe"):
        return {"result": result}
    if not isinstance(result, torch.Tensor):
        return {"type": type(result).__name__}
    return {"device": str(result.device), "shape": list(result.shape), "dtype": str(result.dtype)}


def probe_attention(attention, case: dict) -> dict:
    """attention(q, k, v, mask) with the library's attention forbidden; the arguments after."""
    args = [case["q"], case["k"], case["v"], case.get("mask")]
    seen = _run_forbidding(attention, args, {}, ATTENTION_SHORTCUTS)
    return seen | {"args": args}


def probe_split_heads(split_heads, case: dict) -> dict:
    """split_heads on x as given, or on a non-contiguous view of the same values."""
    x = case["x"]
    if case.get("non_contiguous"):
        x = x.transpose(1, 2).contiguous().transpose(1, 2)  # same values, (B, T, C) strides
    before = x.clone()
    result = split_heads(x, case["n_heads"])
    return {"result": result, "x_changed": not torch.equal(before, x)}


def build_encoder_layer(case: dict) -> nn.TransformerEncoderLayer:
    """A seeded nn.TransformerEncoderLayer (batch_first, no dropout) in the case's mode."""
    activation = {"relu": "relu", "gelu": "gelu"}[case["activation"]]
    with torch.random.fork_rng(devices=[]):  # the layer's own init must not move the global RNG
        layer = nn.TransformerEncoderLayer(
            case["d_model"],
            case["n_heads"],
            dim_feedforward=case["d_ff"],
            dropout=0.0,
            activation=activation,
            batch_first=True,
            norm_first=case["norm_first"],
        )
    g = torch.Generator().manual_seed(case["seed"])
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    layer.train(case["training"])
    return layer.to(case["device"])


def probe_encoder_layer_forward(encoder_layer_forward, case: dict) -> dict:
    """The answer's output for the case's layer, and the layer's mode afterwards."""
    layer = build_encoder_layer(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the layer's own notes on its fast path
        seen = _run_forbidding(
            encoder_layer_forward, [layer, case["x"]], {}, ENCODER_SHORTCUTS, ENCODER_METHODS
        )
    return {"out": seen["result"], "broken": seen["broken"], "training_after": layer.training}
