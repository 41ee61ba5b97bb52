"""Probes for 04_layers (see autograder/probes/__init__.py).

The builders (``build_embedding``, ``build_encoder_layer``) make the same seeded objects in
the learner's kernel and in the grader, so the check can compute the expected answer on its
own copy. They hold no answers: they only make inputs.
"""

from __future__ import annotations

import torch
from torch import nn

# The text's "by hand" rules (issue #27): each exercise's shortcuts, named as a learner writes them.
# Contracts name them (autograder/probes/contract.py's SHORTCUTS holds the functions).
# Their neighbours count too: the other normalisations reach the same numbers once x is
# reshaped (instance_norm even updates running statistics). And each routine is forbidden
# as its ATen kernels too, however it is reached: a torch.ops operator, torch's private entry
# points, a module compiled by torch.jit.script (TorchScript calls its ops without passing
# through Python, but every kernel run passes through a dispatch mode).
BATCH_NORM_RULES = (
    "F.batch_norm",
    "torch.batch_norm",
    "torch.native_batch_norm",
    "F.instance_norm",
    "torch.instance_norm",
    "F.group_norm",
    "torch.group_norm",
    "torch.native_group_norm",
    "F.layer_norm",
    "torch.layer_norm",
    "torch.native_layer_norm",
    "F.rms_norm",  # of x minus its mean, it is (x - mean) / sqrt(var + eps)
    "torch.rms_norm",
    "ATen's normalisation kernels",
)
ATTENTION_RULES = (
    "F.scaled_dot_product_attention",
    "F.multi_head_attention_forward",
    "ATen's attention kernels",
)
# layer(x) and self_attn(...) both call F.multi_head_attention_forward; the fused kernels
# behind them are the same layer. The text asks for the attention in the learner's own code
# (matrix products, or Exercise 6's attention), so the library's attention is ruled out too.
ENCODER_RULES = (
    "F.scaled_dot_product_attention",
    "F.multi_head_attention_forward",
    "ATen's encoder-layer kernels",
)


def build_embedding(case: dict) -> nn.Embedding:
    """A seeded embedding table (with or without a padding_idx) on the case's device; frozen
    (requires_grad False) or in eval mode where the case says so: the caller's choices."""
    g = torch.Generator().manual_seed(case["seed"])
    with torch.random.fork_rng(devices=[]):  # the layer's own init must not move the global RNG
        table = nn.Embedding(case["num"], case["dim"], padding_idx=case.get("padding_idx"))
    with torch.no_grad():
        table.weight.copy_(torch.randn(case["num"], case["dim"], generator=g))
    table.weight.requires_grad_(not case.get("frozen", False))
    table.train(case.get("training", True))
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


def probe_batch_norm_stats(batch_norm, case: dict) -> dict:
    """Whether the returned running statistics share memory with the caller's, or need grad."""
    x = case["x"].clone().requires_grad_(True)
    weight = case["weight"].clone().requires_grad_(True)
    bias = case["bias"].clone().requires_grad_(True)
    mean, var = case["running_mean"], case["running_var"]
    _y, new_mean, new_var = batch_norm(x, mean, var, weight, bias, training=case["training"])
    pairs = ((new_mean, mean), (new_var, var))
    return {
        "shared": [
            isinstance(new, torch.Tensor)
            and new.untyped_storage().data_ptr() == old.untyped_storage().data_ptr()
            for new, old in pairs
        ],
        "graph": [bool(getattr(new, "requires_grad", False)) for new, _old in pairs],
    }


def build_encoder_layer(case: dict) -> nn.TransformerEncoderLayer:
    """A seeded nn.TransformerEncoderLayer (batch_first, no dropout) in the case's mode."""
    activation = {"relu": "relu", "gelu": "gelu", "silu": nn.SiLU()}[case["activation"]]
    with torch.random.fork_rng(devices=[]):  # the layer's own init must not move the global RNG
        layer = nn.TransformerEncoderLayer(
            case["d_model"],
            case["n_heads"],
            dim_feedforward=case["d_ff"],
            dropout=0.0,
            activation=activation,
            batch_first=True,
            norm_first=case["norm_first"],
            layer_norm_eps=case.get("eps", 1e-5),
        )
    g = torch.Generator().manual_seed(case["seed"])
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    layer.train(case["training"])
    return layer.to(case["device"])
