"""Probes for 11_gpt (see autograder/probes/__init__.py).

``ToyLM`` is a stand-in language model with the GPT's calling convention
(``model(idx, past=None) -> (logits, present)``, ``model.context``, a ``ValueError`` past the
last position) that the samplers and the export are run on. It is not the lesson's GPT and
holds no answer: its "attention" is a running mean, so that cached and uncached calls give
bit-identical logits and a sampler's tokens can be compared exactly. It also records every
call, so that a check can see whether the cache was used.
"""

from __future__ import annotations

import contextlib
import warnings

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from autograder.probes import devices


def probe_parameter_names(cls, case: dict) -> dict:
    """The names of ``cls(*case["args"])``'s parameters, in the order it registers them, and
    its ``context`` and ``n_heads`` attributes (None where missing; an attribute of another
    type as its repr): a contract fills both sides' parameters in that order."""
    with torch.random.fork_rng(devices=[]):  # the module's own init must not move the global RNG
        module = cls(*case["args"])
    if not isinstance(module, nn.Module):
        return {"names": None, "type": type(module).__name__, "context": None, "n_heads": None}
    names = [name for name, _p in module.named_parameters()]
    n_heads = getattr(module, "n_heads", None)
    return {
        "names": names,
        "type": type(module).__name__,
        "context": getattr(module, "context", None),
        "n_heads": n_heads if n_heads is None or type(n_heads) is int else repr(n_heads)[:60],
    }


def probe_GPTEmbedding(GPTEmbedding, case: dict) -> dict:
    """Build the module and run each call of the case: what it raised (and its message), or
    the gradients that ``(out * w).sum()`` sends to its two tables (and whether they are
    sparse). Then the first call that mixed devices once the module is on the meta device, and
    the standard deviations of a fresh GPTEmbedding(64, 32, 16)'s tables (its initialisation)."""
    with torch.random.fork_rng(devices=[]):
        module = GPTEmbedding(case["vocab_size"], case["context"], case["d_model"])
    module = module.to(case["device"])
    seen = {"calls": []}
    table = getattr(getattr(module, "pos", None), "weight", None)
    with torch.enable_grad():  # whatever grad mode an earlier cell left switched
        for call in case["calls"]:
            module.zero_grad()
            lookups = _RowsPastTable(table) if isinstance(table, torch.Tensor) else None
            try:
                with lookups or contextlib.nullcontext():
                    out = module(call["idx"], start=call["start"])
            except (ValueError, IndexError, RuntimeError) as err:
                seen["calls"].append(
                    {
                        "raised": type(err).__name__,
                        "message": str(err)[:300],
                        "past_table": bool(lookups and lookups.hit),
                    }
                )
                continue
            entry = {"tok_grad": None, "pos_grad": None}
            if isinstance(out, torch.Tensor) and out.requires_grad and out.shape == call["w"].shape:
                (out * call["w"]).sum().backward()
                grads = [module.tok.weight.grad, module.pos.weight.grad]
                entry["sparse"] = any(g is not None and g.is_sparse for g in grads)
                if entry["sparse"]:  # as data, dense (the check says why it fails)
                    grads = [None if g is None else g.to_dense() for g in grads]
                entry["tok_grad"], entry["pos_grad"] = (
                    None if g is None else g.detach().clone() for g in grads
                )
            seen["calls"].append(entry)
    seen["device_mix"] = _embedding_on_meta(module, case)
    with torch.random.fork_rng(devices=[]):  # tables large enough for their spread to show
        big = GPTEmbedding(64, 32, 16)
    seen["init_std"] = [float(big.tok.weight.detach().std()), float(big.pos.weight.detach().std())]
    return seen


class _RowsPastTable(TorchFunctionMode):
    """While active, ``hit`` says whether a lookup asked ``table`` (the position table) for a
    row it does not have: ``F.embedding``, ``index_select`` or indexing with a tensor. On a
    CPU that raises IndexError, which an answer can turn into ValueError afterwards; on a GPU
    it is a device-side assert first, which no ``except`` catches."""

    def __init__(self, table: torch.Tensor):
        super().__init__()
        self.table, self.hit = table, False

    def _is_table(self, t) -> bool:
        return (
            isinstance(t, torch.Tensor)
            and t.shape == self.table.shape
            and t.device == self.table.device
            and t.data_ptr() == self.table.data_ptr()
        )

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        pairs = {  # func -> (the table's place, the index's place), positional or keyword
            F.embedding: ((0, "input"), (1, "weight")),
            torch.embedding: ((1, "indices"), (0, "weight")),
            torch.index_select: ((2, "index"), (0, "input")),
            torch.Tensor.index_select: ((2, "index"), (0, "self")),
            torch.Tensor.__getitem__: ((1, "indices"), (0, "self")),
        }
        if func in pairs:
            (i, i_name), (w, w_name) = pairs[func]
            index = args[i] if len(args) > i else kwargs.get(i_name)
            weight = args[w] if len(args) > w else kwargs.get(w_name)
            if isinstance(index, tuple) and index:
                index = index[0]
            if (
                self._is_table(weight)
                and isinstance(index, torch.Tensor)
                and index.dtype in (torch.int64, torch.int32)
                and index.numel()
                and int(index.max()) >= weight.shape[0]
            ):
                self.hit = True
        return func(*args, **kwargs)


def _embedding_on_meta(module: nn.Module, case: dict) -> str | None:
    """The module on PyTorch's meta device (a GPU's stand-in on a CPU-only grader), called on
    the case's first call that fits: the first call that mixed devices, or None."""
    fits = [c for c in case["calls"] if c["start"] + c["idx"].shape[1] <= case["context"]]
    if not fits:
        return None
    on_meta, idx = module.to("meta"), fits[0]["idx"].to("meta")
    with torch.no_grad():  # only mixed devices count: meta cannot run everything
        return devices.on_meta(lambda: on_meta(idx, start=fits[0]["start"])).get("device_mix")


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
    if case.get("grads"):  # the caller's gradients, which a sampler must leave alone
        g = torch.Generator().manual_seed(case["seed"] + 1)
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=g, dtype=p.dtype)
    return model.to(case["device"]).train(case.get("training", False))


def build_generator(spec: dict) -> torch.Generator:
    """A CPU generator seeded ``spec["seed"]``: both sides draw the same tokens from it."""
    return torch.Generator().manual_seed(spec["seed"])


def probe_sample_cached(sample_cached, case: dict) -> dict:
    """The tokens sampled from a ToyLM, the model's calls ([T, start, grad enabled]) and the
    generator's next draws afterwards."""
    model = build_toy(case)
    idx = case["idx"]
    args = (model, idx, case["max_new_tokens"], case["temperature"], case["top_k"])
    if case.get("global_seed") is not None:  # generator=None: the global random state, seeded
        with torch.random.fork_rng(devices=[idx.device] if idx.is_cuda else []):
            torch.manual_seed(case["global_seed"])
            out = sample_cached(*args, None)
            after = next_draws(None, idx.device)
        return {"out": out, "calls": model.calls, "after": after}
    g = torch.Generator(device=case["device"]).manual_seed(case["gen_seed"])
    out = sample_cached(*args, g)
    return {"out": out, "calls": model.calls, "after": next_draws(g, idx.device)}


def next_draws(generator: torch.Generator | None, device) -> list[int]:
    """The next numbers the generator (the global one where None) gives: equal after two
    samplers only if both drew from it equally often."""
    return torch.randint(0, 2**62, (4,), generator=generator, device=device).tolist()


def probe_sample_cached_on_meta(sample_cached, case: dict) -> dict:
    """The sampler run on a ToyLM and a prompt on PyTorch's ``meta`` device (a GPU's stand-in
    on a CPU-only grader; the generator stays on the CPU, which multinomial on meta accepts):
    the result's device, or ``device_mix`` with PyTorch's words, or ``inconclusive`` where the
    answer needs values (or its ``next_token_probs`` cannot run on meta: its own check says)."""
    import inspect

    model = build_toy(case | {"device": "meta"})
    idx = case["idx"].to("meta")
    g = torch.Generator().manual_seed(case["gen_seed"])
    helper = getattr(inspect.unwrap(sample_cached), "__globals__", {}).get("next_token_probs")
    try:
        if callable(helper):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                logits = torch.zeros(idx.shape[0], case["vocab_size"], device="meta")
                probs = helper(logits, case["temperature"], case["top_k"])
            if not isinstance(probs, torch.Tensor) or probs.device.type != "meta":
                return {"inconclusive": "next_token_probs: not on meta"}
    except Exception as err:
        return {"inconclusive": f"next_token_probs: {type(err).__name__}"}
    left = _LeftMeta()

    def run():
        with left:
            return sample_cached(
                model, idx, case["max_new_tokens"], case["temperature"], case["top_k"], g
            )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen = devices.on_meta(run)
    if left.moved:
        return {"moved": left.moved}
    if "result" not in seen:
        return seen
    out = seen["result"]
    return {"device": str(out.device) if isinstance(out, torch.Tensor) else None}


class _LeftMeta(TorchFunctionMode):
    """While active, ``moved`` names the first call that copied a tensor off the meta device
    (``.cpu()``, ``.to("cpu")``, ``.numpy()``): on a GPU, the sampler's probabilities or
    tokens would then be on the CPU, drawn from another generator than sample()'s."""

    def __init__(self):
        super().__init__()
        self.moved = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.moved is None and args and _on_meta(args[0]):
            if func in (torch.Tensor.cpu, torch.Tensor.numpy):
                self.moved = f".{func.__name__}()"
            elif func is torch.Tensor.to and any(
                _names_cpu(a) for a in (*args[1:], kwargs.get("device"))
            ):
                self.moved = ".to('cpu')"
        return func(*args, **kwargs)


def _on_meta(t) -> bool:
    return isinstance(t, torch.Tensor) and t.device.type == "meta"


def _names_cpu(a) -> bool:
    if isinstance(a, torch.Tensor):
        return a.device.type == "cpu"
    if isinstance(a, (str, torch.device)):
        try:
            return torch.device(a).type == "cpu"
        except RuntimeError:  # not a device name: PyTorch's own error follows
            return False
    return False


def probe_export_gpt_on_meta(export_gpt, case: dict) -> dict:
    """export_gpt on a ToyLM and an example on PyTorch's ``meta`` device (a GPU's stand-in on
    a CPU-only grader): the devices of the model's parameters afterwards, or what the call
    raised (an answer that moves the model or the example to the CPU cannot copy out of
    meta)."""
    model = build_toy(case | {"device": "meta", "recording": False})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            export_gpt(model, case["example"].to("meta"))
    except Exception as err:
        first = str(err).splitlines()[0][:200] if str(err) else ""
        return {"raised": f"{type(err).__name__}: {first}"}
    return {"devices": sorted({p.device.type for p in model.parameters()})}


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
