"""Probes for 04_layers (see autograder/probes/__init__.py).

The builders (``build_embedding``, ``build_encoder_layer``) make the same seeded objects in
the learner's kernel and in the grader, so the check can compute the expected answer on its
own copy. They hold no answers: they only make inputs.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn


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
    result = batch_norm(*inputs, training=case["training"], **case.get("kwargs", {}))
    after = [t if t is not None else None for t in inputs]
    return {"result": result, "changed": [names[i] for i in _changed(before, after)]}


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
    """causal_mask(t_q, t_k[, device=...])."""
    kwargs = {"device": torch.device(case["device"])} if "device" in case else {}
    return {"result": causal_mask(case["t_q"], case["t_k"], **kwargs)}


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
        out = encoder_layer_forward(layer, case["x"])
    return {"out": out, "training_after": layer.training}
