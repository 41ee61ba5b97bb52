"""Probes for 04_layers (see autograder/probes/__init__.py).

The builders (``build_embedding``, ``build_encoder_layer``) make the same seeded objects in
the learner's kernel and in the grader, so the check can compute the expected answer on its
own copy. They hold no answers: they only make inputs.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

# The text's "by hand" rules (issue #27): each exercise's shortcuts, named as a learner writes them.
# Contracts name them (autograder/probes/contract.py's SHORTCUTS holds the functions).
# Their neighbours count too: the other normalisations reach the same numbers once x is
# reshaped (instance_norm even updates running statistics), and torch's private entry points
# to the same kernels are the same shortcut under another name.
BATCH_NORM_RULES = (
    "F.batch_norm",
    "torch.batch_norm",
    "torch.native_batch_norm",
    "torch._native_batch_norm_legit",
    "torch._native_batch_norm_legit_no_training",
    "torch._batch_norm_impl_index",
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
)
ATTENTION_RULES = (
    "F.scaled_dot_product_attention",
    "torch._scaled_dot_product_attention_math",
    "torch._scaled_dot_product_flash_attention_for_cpu",
    "F.multi_head_attention_forward",
    "torch._native_multi_head_attention",
)
# layer(x) and self_attn(...) both call F.multi_head_attention_forward; the fused kernels
# behind them are the same layer. The text asks for the attention in the learner's own code
# (matrix products, or Exercise 6's attention), so the library's attention is ruled out too.
ENCODER_RULES = (
    "F.multi_head_attention_forward",
    "torch._native_multi_head_attention",
    "torch._transformer_encoder_layer_fwd",
    *ATTENTION_RULES[:3],
)

# The same shortcuts reached where the rules above cannot see them: as torch.ops operators
# (torch.ops.aten.batch_norm, or its .default overload), or compiled by torch.jit.script
# (TorchScript calls its ops without passing through Python). A fragment of the name of what
# runs: the function called, or the ATen kernel it dispatches to.
BATCH_NORM_SEEN = ("batch_norm", "instance_norm", "group_norm", "layer_norm", "rms_norm")
ATTENTION_SEEN = ("attention",)
ENCODER_SEEN = ("attention", "transformer_encoder_layer")


class _FunctionsSeen(TorchFunctionMode):
    """Notes the name of each torch function called while active ('aten.batch_norm' for an
    operator, 'multi_head_attention_forward' for a function)."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if isinstance(func, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
            self.names.append(str(func))
        else:
            self.names.append(getattr(func, "__name__", ""))
        return func(*args, **(kwargs or {}))


class _KernelsSeen(TorchDispatchMode):
    """Notes each ATen kernel run while active ('aten.native_batch_norm.default'), from
    Python or from TorchScript alike."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(str(func))
        return func(*args, **(kwargs or {}))


def probe_library_calls(answer, case: dict) -> list[str]:
    """What the answer runs, on the case's arguments, whose name holds one of the case's
    fragments (none for an answer written with tensor operations). ``case["layer"]``, if
    given, is an encoder layer's spec, built and passed first. torch.jit.script is switched
    off meanwhile (it then hands back what it is given), so a layer it would compile runs as
    Python, where its calls show."""
    args = list(case["args"])
    if "layer" in case:
        args.insert(0, build_encoder_layer(case["layer"]))
    jit_was_on = bool(torch.jit._state._enabled)
    torch.jit._state.disable()
    try:
        with warnings.catch_warnings(), _FunctionsSeen() as functions, _KernelsSeen() as kernels:
            warnings.simplefilter("ignore")  # what the answer warns is not the question here
            answer(*args, **case.get("kwargs", {}))
    finally:
        if jit_was_on:
            torch.jit._state.enable()
    seen = functions.names + kernels.names  # the call as written first, then its kernels
    return list(dict.fromkeys(n for n in seen if any(f in n for f in case["fragments"])))


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
