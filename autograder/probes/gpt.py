"""Probes for 11_gpt (see autograder/probes/__init__.py).

``ToyLM`` is a stand-in language model with the GPT's calling convention
(``model(idx, past=None) -> (logits, present)``, ``model.context``, a ``ValueError`` past the
last position) that the samplers and the export are run on. It is not the lesson's GPT and
holds no answer: its "attention" is a running mean, so that cached and uncached calls give
bit-identical logits and a sampler's tokens can be compared exactly. It also records every
call, so that a check can see whether the cache was used.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn


def _grad_or_none(t: torch.Tensor) -> torch.Tensor | None:
    return None if t.grad is None else t.grad.detach().clone()


def probe_parameter_names(cls, case: dict) -> dict:
    """The names of ``cls(*case["args"])``'s parameters, in the order it registers them, and
    its ``context`` attribute: a contract fills both sides' parameters in that order."""
    with torch.random.fork_rng(devices=[]):  # the module's own init must not move the global RNG
        module = cls(*case["args"])
    if not isinstance(module, nn.Module):
        return {"names": None, "type": type(module).__name__, "context": None}
    names = [name for name, _p in module.named_parameters()]
    return {
        "names": names,
        "type": type(module).__name__,
        "context": getattr(module, "context", None),
    }


def probe_GPTEmbedding(GPTEmbedding, case: dict) -> dict:
    """Build the module and run each call of the case: what it raised, or the gradients that
    ``(out * w).sum()`` sends to its two tables."""
    with torch.random.fork_rng(devices=[]):
        module = GPTEmbedding(case["vocab_size"], case["context"], case["d_model"])
    module = module.to(case["device"])
    seen = {"calls": []}
    for call in case["calls"]:
        module.zero_grad()
        try:
            out = module(call["idx"], start=call["start"])
        except (ValueError, IndexError, RuntimeError) as err:
            seen["calls"].append({"raised": type(err).__name__})
            continue
        entry = {"tok_grad": None, "pos_grad": None}
        if isinstance(out, torch.Tensor) and out.requires_grad and out.shape == call["w"].shape:
            (out * call["w"]).sum().backward()
            entry["tok_grad"] = _grad_or_none(module.tok.weight)
            entry["pos_grad"] = _grad_or_none(module.pos.weight)
        seen["calls"].append(entry)
    return seen


class ToyLM(nn.Module):
    """A tiny seeded language model with the GPT's calling convention (see the module's doc)."""

    def __init__(self, vocab_size: int, context: int, dim: int, seed: int, dtype=torch.float64):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.context = context
        self.tok = nn.Parameter(torch.randn(vocab_size, dim, generator=g, dtype=dtype))
        self.pos = nn.Parameter(torch.randn(context, dim, generator=g, dtype=dtype))
        self.out = nn.Parameter(torch.randn(dim, vocab_size, generator=g, dtype=dtype))
        self.calls: list[list] = []
        self.recording = True

    def forward(self, idx: torch.Tensor, past: list | None = None):
        t = idx.shape[1]
        start = 0 if past is None else past[0][0].shape[2]
        if self.recording:
            self.calls.append([int(t), int(start), bool(torch.is_grad_enabled())])
        if start + t > self.context:
            raise ValueError(f"positions {start}..{start + t - 1} do not fit {self.context}")
        feats = self.tok[idx] + self.pos[start : start + t]  # (B, T, D)
        keys = feats.unsqueeze(1)  # (B, 1, T, D)
        if past is not None:
            keys = torch.cat([past[0][0], keys], dim=2)
        running = keys.cumsum(dim=2)[:, 0, -t:]  # (B, T, D): sums over positions 0..i
        counts = torch.arange(start + 1, start + t + 1, device=idx.device, dtype=feats.dtype)
        mixed = torch.tanh(feats + running / counts[:, None])
        return 2.0 * mixed @ self.out, [(keys, keys)]


def build_toy(case: dict) -> ToyLM:
    with torch.random.fork_rng(devices=[]):
        model = ToyLM(case["vocab_size"], case["context"], case["dim"], case["seed"])
    model.recording = case.get("recording", True)  # int(T) would pin an exported length
    return model.to(case["device"]).train(case.get("training", False))


def build_generator(spec: dict) -> torch.Generator:
    """A CPU generator seeded ``spec["seed"]``: both sides draw the same tokens from it."""
    return torch.Generator().manual_seed(spec["seed"])


def probe_sample_cached(sample_cached, case: dict) -> dict:
    """The tokens sampled from a ToyLM, and the model's calls: [T, start, grad enabled]."""
    model = build_toy(case)
    g = torch.Generator(device=case["device"]).manual_seed(case["gen_seed"])
    out = sample_cached(
        model, case["idx"], case["max_new_tokens"], case["temperature"], case["top_k"], g
    )
    return {"out": out, "calls": model.calls}


def probe_export_gpt(export_gpt, case: dict) -> dict:
    """Export a ToyLM, then run the program on each length of the case; errors become names."""
    model = build_toy(case)
    model.recording = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = export_gpt(model, case["example"])
    seen = {
        "type": type(program).__name__,
        "is_program": isinstance(program, torch.export.ExportedProgram),
        "training_after": model.training,
        "outputs": [],
    }
    if not seen["is_program"]:
        return seen
    module = program.module()
    for idx in case["inputs"]:
        try:
            logits = module(idx)[0]
        except Exception as err:  # the program's guards raise several kinds
            seen["outputs"].append(f"{type(err).__name__}: {str(err).splitlines()[0][:200]}")
            continue
        seen["outputs"].append(logits)
    return seen
