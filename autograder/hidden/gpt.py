"""Hidden checks for 11_gpt.

PyTorch is the oracle where it has the operation (``F.cross_entropy``,
``F.scaled_dot_product_attention``, ``nn.Embedding``); the block, the top-k and the samplers
are computed here from the same seeded weights. The learner's answers are reached through the
probes in ``autograder/probes/gpt.py``; the samplers and the export run on its ``ToyLM``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace

import torch
import torch.nn.functional as F
from hypothesis import strategies as st
from torch import nn
from torch.export import ExportedProgram

from autograder import wire
from autograder.boundary import observe
from autograder.contracts import (
    FLOAT64_EXACT,
    TOLERANCE,
    Build,
    Contract,
    Draw,
    Inputs,
    compare_values,
    uses,
)
from autograder.probes import gpt as probes
from tutorial_lib.checks import CheckError, assert_close, check_shape, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _

# ---------------------------------------------------------------------------------------
# 1. next_token_loss


def _reference_loss(logits, tokens, ignore_index=-100):
    """F.cross_entropy on the shifted targets (the grader's copy)."""
    v = logits.shape[-1]
    return F.cross_entropy(
        logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1), ignore_index=ignore_index
    )


def _draw_next_token_loss(d: Draw) -> Inputs:
    """(B, T, V) logits, T from 2, moderate or as confident as a trained model's (up to 100:
    exp overflows, log(p + eps) caps the loss); targets ignored unevenly across rows; another
    ignore_index."""
    b, t, v = d.size(1, 4), d.size(2, 7), d.size(2, 9)
    ignore = d.draw(st.sampled_from([None, 0, -1, 3]))
    if ignore == 3:
        v = max(v, 4)  # an ignore_index that is a token id (or negative), not one past V
    span = d.draw(st.sampled_from([4.0, 100.0]))
    logits = d.tensor(b, t, v, low=-span, high=span)
    hidden = -100 if ignore is None else ignore
    tokens = d.integers(b, t, low=0, high=v)
    if d.draw(st.booleans()):  # row i loses a different share of its targets than row j
        dropped = d.bools(b, t) & (torch.arange(b)[:, None] < d.draw(st.integers(1, b)))
        tokens = tokens.masked_fill(dropped, hidden)
    tokens[0, -1] = 1 if hidden == 0 else 0  # at least one target counted
    return Inputs((logits, tokens), {} if ignore is None else {"ignore_index": ignore})


def _loss_hint(family: str, inputs: Inputs) -> str:
    if "ignore_index" in inputs.kwargs:
        return _(
            "Pass ignore_index on to F.cross_entropy: the caller chose another value than "
            "-100, and those targets must not count."
        )
    if float(inputs.args[0].abs().max()) > 10:
        return _(
            "These logits are as large as a confident model's: take log-probabilities with "
            "log_softmax or F.cross_entropy (stable), not log(softmax + eps), which caps the "
            "loss, nor exp without subtracting the max, which overflows."
        )
    return _(
        "Score logits[:, i] against tokens[:, i + 1] and average over the counted targets, all "
        "rows together (a row with fewer counted targets must not weigh more), leaving the "
        "ignored ones out."
    )


def _compare_loss(got, expected, what: str, inputs: Inputs) -> None:
    """A scalar in the logits' dtype, close to the reference; not shifted?"""
    logits, tokens = inputs.args
    check_type(got, torch.Tensor, what)
    check_shape(got, (), what=what)
    rtol, atol = TOLERANCE[expected.dtype]
    try:
        assert_close(got, expected.detach(), what=what, rtol=rtol, atol=atol)
    except CheckError:
        hidden = inputs.kwargs.get("ignore_index", -100)
        v = logits.shape[-1]
        unshifted = F.cross_entropy(logits.reshape(-1, v), tokens.reshape(-1), ignore_index=hidden)
        if torch.allclose(got.detach().to(unshifted), unshifted, atol=1e-5):
            raise CheckError(
                _(
                    "{what} scored logits[:, i] against tokens[:, i]: shift the targets by "
                    "one (tokens[:, 1:] against logits[:, :-1])."
                ).format(what=what)
            ) from None
        raise


NEXT_TOKEN_LOSS = Contract(
    "next_token_loss",
    _reference_loss,
    _draw_next_token_loss,
    compare=_compare_loss,
    arg_names=("logits", "tokens"),
    hint=_loss_hint,
    tolerance=FLOAT64_EXACT,
)


@uses(NEXT_TOKEN_LOSS)
def check_next_token_loss(next_token_loss) -> None:
    """The contract: against F.cross_entropy on the shifted targets, the gradient to the
    logits included, on every input family."""


# ---------------------------------------------------------------------------------------
# Class exercises whose text names the parameters but not the order they are registered in.


def _parameter_names(cls, args: tuple, what: str, wanted: tuple[str, ...]) -> dict:
    """The answer's parameter names in registration order (a probe); the text's names missing
    fail here, with the names the text asks for."""
    seen = observe(probes.probe_parameter_names, cls, {"args": list(args)}, what)
    names = seen["names"]
    if names is None:
        raise CheckError(
            _("{what} built a {type_name}, not an nn.Module.").format(
                what=what, type_name=seen["type"]
            )
        )
    missing = [n for n in wanted if n not in names]
    if missing:
        raise CheckError(
            _(
                "{what} has no parameters named {missing} (it has {names}): use exactly the "
                "submodules the text names, so that its weights are found by name."
            ).format(what=what, missing=missing, names=names[:8])
        )
    return seen


def _in_order(module: nn.Module, names: Sequence[str]) -> nn.Module:
    """The reference's submodules reordered as the answer registered them (``names``, its
    parameters' names): the contract fills both sides' parameters in registration order, so
    each parameter then gets the same values as the answer's of that name."""
    for top in dict.fromkeys(n.split(".")[0] for n in names):
        if top in module._modules:
            module._modules[top] = module._modules.pop(top)
    return module


def _as_registered(contract: Contract, names: Sequence[str]) -> Contract:
    """The contract with its reference class built in the answer's registration order."""
    reference = contract.reference

    def build(*args):
        return _in_order(reference(*args), names)

    return replace(contract, reference=build)


# ---------------------------------------------------------------------------------------
# 2. GPTEmbedding


class _ReferenceEmbedding(nn.Module):
    def __init__(self, vocab_size: int, context: int, d_model: int):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(context, d_model)

    def forward(self, idx, start=0):
        t = idx.shape[1]
        return self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))


def _draw_embedding(d: Draw) -> Inputs:
    """Tables of several sizes; T from 1 to the context (T = context included), start anywhere
    that fits, given or left to its default."""
    vocab, context, d_model = d.size(1, 9), d.size(1, 7), d.size(1, 5)
    t = d.size(1, context)
    idx = d.integers(d.size(1, 3), t, low=0, high=vocab)
    start = d.draw(st.sampled_from([None, 0, *range(1, context - t + 1)]))
    return Inputs((vocab, context, d_model, idx), {} if start is None else {"start": start})


def _embedding_hint(family: str, inputs: Inputs) -> str:
    start = inputs.kwargs.get("start", 0)
    t = inputs.args[3].shape[1]
    return _(
        "Return self.tok(idx) + self.pos(positions) for the positions start..start+T-1 "
        "(here {first}..{last}), counted along the sequence axis."
    ).format(first=start, last=start + t - 1)


GPT_EMBEDDING = Contract(
    "GPTEmbedding",
    _ReferenceEmbedding,
    _draw_embedding,
    # no dtypes and no grad: the call's only tensor is int64 (the tables' gradients below)
    families=("values", "edges", "strides", "device"),
    construct=3,
    arg_names=("vocab_size", "context", "d_model", "idx"),
    hint=_embedding_hint,
)


def check_GPTEmbedding(GPTEmbedding) -> None:
    """The contract (weights filled in the answer's registration order); by hand: the
    context attribute, ValueError one position past the table (not at T = context), and the
    gradients that reach both tables."""
    vocab, context, d_model = 7, 5, 3
    name = f"GPTEmbedding({vocab}, {context}, {d_model})"
    seen = _parameter_names(GPTEmbedding, (vocab, context, d_model), name, _EMBEDDING_NAMES)
    if seen["context"] != context:
        raise CheckError(
            _("{name}.context is {got!r}, expected {context}.").format(
                name=name, got=seen["context"], context=context
            )
        )
    device = get_device()
    g = torch.Generator().manual_seed(1101)
    # B, T, start: the last three do not fit (the last one's numbers tell its sizes apart)
    calls = [(2, 5, 0), (1, 2, 3), (1, 2, 4), (3, 6, 0), (1, 3, 4)]
    case_calls = [
        {
            "idx": torch.randint(0, vocab, (b, t), generator=g).to(device),
            "start": start,
            "w": torch.randn(b, t, d_model, generator=g).to(device),
        }
        for b, t, start in calls
    ]
    case_calls[0]["idx"][1, :2] = torch.tensor([0, vocab - 1])  # the first and last rows learn
    case = {
        "vocab_size": vocab, "context": context, "d_model": d_model,
        "device": device, "calls": case_calls,
    }  # fmt: skip
    seen_calls = observe(probes.probe_GPTEmbedding, GPTEmbedding, case, name)
    got_calls = seen_calls["calls"]
    for (b, t, s), got in zip(calls, got_calls, strict=True):
        what = f"{name}(idx of shape ({b}, {t}), start={s})"
        if s + t > context:
            if got.get("raised") != "ValueError":
                raise CheckError(
                    _(
                        "{what} needs positions {first}..{last} of a table with {context} "
                        "rows: raise ValueError (got {got})."
                    ).format(
                        what=what,
                        first=s,
                        last=s + t - 1,
                        context=context,
                        got=got.get("raised") or _("a result"),
                    )
                )
            if got.get("past_table"):
                raise CheckError(
                    _(
                        "{what} raised ValueError only after asking the position table for "
                        "row {last}, which it does not have ({context} rows): on a CPU that "
                        "lookup raises IndexError, but on a GPU it is a device-side error that "
                        "no except catches. Compare start + T with self.context and raise "
                        "BEFORE looking anything up, as the text says."
                    ).format(what=what, last=s + t - 1, context=context)
                )
            continue
        if "raised" in got:
            raise CheckError(
                _(
                    "{what} raised {error_type}, but positions {first}..{last} fit a "
                    "context of {context} (the condition is start + T > context)."
                ).format(
                    what=what, error_type=got["raised"], first=s, last=s + t - 1, context=context
                )
            )
    _as_registered(GPT_EMBEDDING, seen["names"]).check(GPTEmbedding)
    for (b, t, s), call, got in zip(calls, case_calls, got_calls, strict=True):
        if s + t > context:
            continue
        what = f"{name}(idx of shape ({b}, {t}), start={s})"
        if got.get("sparse"):
            raise CheckError(
                _(
                    "{what}: the tables' gradients are sparse (nn.Embedding(..., sparse=True)), "
                    "and AdamW, which trains the GPT, refuses sparse gradients: use "
                    "nn.Embedding(vocab_size, d_model) as the text says."
                ).format(what=what)
            )
        if got["tok_grad"] is None or got["pos_grad"] is None:
            raise CheckError(
                _(
                    "{what}: no gradient reached the tables; use self.tok and "
                    "self.pos (nn.Embedding modules) on the forward path."
                ).format(what=what)
            )
        w = call["w"]
        tok_grad = torch.zeros(vocab, d_model, device=device).index_add_(
            0, call["idx"].flatten(), w.reshape(-1, d_model)
        )
        pos_grad = torch.zeros(context, d_model, device=device)
        pos_grad[s : s + t] = w.sum(0)
        sends = _("the gradient {what} sends to {table}")
        assert_close(got["tok_grad"], tok_grad, what=sends.format(what=what, table="tok"))
        assert_close(got["pos_grad"], pos_grad, what=sends.format(what=what, table="pos"))
    if seen_calls.get("device_mix"):
        raise CheckError(
            _(
                "{name} moved to another device (here PyTorch's 'meta' device, as a GPU would "
                "be) mixed devices: {error}. The positions must be made on idx's device "
                "(torch.arange(..., device=idx.device)); a tensor kept as a plain attribute "
                "does not move with the module (register_buffer does)."
            ).format(name=name, error=seen_calls["device_mix"])
        )
    tok_std, pos_std = seen_calls["init_std"]
    if not (0.75 < tok_std < 1.25 and 0.75 < pos_std < 1.25):
        raise CheckError(
            _(
                "GPTEmbedding(64, 32, 16)'s tables start with standard deviations {tok:.3f} "
                "(tok) and {pos:.3f} (pos), where nn.Embedding's default initialisation gives "
                "about 1: leave the default initialisation alone, as the text asks (the GPT "
                "sets its own)."
            ).format(tok=tok_std, pos=pos_std)
        )
    (b, t, s), got = calls[-1], got_calls[-1]
    numbers = {int(n) for n in re.findall(r"\d+", got.get("message", ""))}
    if context not in numbers or not numbers & {s + t, s + t - 1, t}:
        raise CheckError(
            _(
                "{name}(idx of shape ({b}, {t}), start={start}) raised ValueError({message!r}): "
                "name the sizes in the message, as the text asks: the positions it needs (up to "
                "{last}, or start + T = {end}) and the context ({context}), so that the caller "
                "sees what did not fit."
            ).format(
                name=name,
                b=b,
                t=t,
                start=s,
                message=got.get("message", ""),
                last=s + t - 1,
                end=s + t,
                context=context,
            )
        )


_EMBEDDING_NAMES = ("tok.weight", "pos.weight")
check_GPTEmbedding.contracts = (GPT_EMBEDDING,)  # for make verify: run above, in answer order


# ---------------------------------------------------------------------------------------
# 3. causal_attention


def _reference_attention(q, k, v):
    t_q, t_k = q.shape[-2], k.shape[-2]
    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _draw_causal_attention(d: Draw) -> Inputs:
    """Leading axes (none to two), T_q <= T_k (one query, several, all), D != D_v; queries
    moderate or large (scores up to a few hundred: exp without the max subtracted overflows);
    or every score below -10000, key 0's the highest by at least 200 (a finite mask value such
    as -1e4 is then above every score a query may see, and takes the weight; not in half
    precision, where such scores overflow)."""
    lead = [d.size(1, 3) for _axis in range(d.draw(st.integers(0, 2)))]
    t_k = d.size(1, 6)
    t_q = d.draw(st.integers(1, t_k))
    dim, dim_v = d.size(1, 8), d.size(1, 6)
    spans = [2.0, 40.0] if d.family == "dtypes" else [2.0, 40.0, "far"]
    span = d.draw(st.sampled_from(spans))
    if span == "far":  # score(i, j) = -2e4 * sqrt(D) * (1 + j / 100): softmax picks key 0
        q = torch.full((*lead, t_q, dim), 2e4)
        steps = 1 + torch.arange(t_k, dtype=torch.float32) / 100
        k = (-steps[:, None]).expand(*lead, t_k, dim).contiguous()
        return Inputs((q, k, d.tensor(*lead, t_k, dim_v)))
    q = d.tensor(*lead, t_q, dim, low=-span, high=span)
    return Inputs((q, d.tensor(*lead, t_k, dim), d.tensor(*lead, t_k, dim_v)))


def _causal_hint(family: str, inputs: Inputs) -> str:
    q, k, v = inputs.args
    if q.numel() and float(q.abs().max()) > 1e3:
        return _(
            "Every score here is below -10000: a finite mask value such as -1e4 is then "
            "ABOVE the scores of the keys a query may see, and the masked keys take all the "
            "weight. Mask with -inf (masked_fill(~mask, float('-inf'))), as the text says, or "
            "use F.scaled_dot_product_attention with a bool mask."
        )
    if q.numel() and float(q.abs().max()) > 10:
        return _(
            "These scores are large (a sharp attention): mask them with -inf BEFORE a softmax "
            "(it subtracts the max); exp without the max overflows, and masking after the "
            "softmax leaves rows whose allowed weights all underflowed to 0."
        )
    if q.shape[-1] != v.shape[-1]:
        return _("Scale the scores by sqrt(D), the width of q and k (not v's).")
    if q.shape[-2] < k.shape[-2]:
        return _(
            "The queries are the LAST T_q positions: query i sees keys 0..T_k - T_q + i, "
            "tril(diagonal=T_k - T_q), not is_causal=True (which aligns the triangle top-left)."
        )
    return ""


CAUSAL_ATTENTION = Contract(
    "causal_attention",
    _reference_attention,
    _draw_causal_attention,
    arg_names=("q", "k", "v"),
    hint=_causal_hint,
    tolerance=FLOAT64_EXACT,
)


@uses(CAUSAL_ATTENTION)
def check_causal_attention(causal_attention) -> None:
    """The contract: against SDPA with a bottom-right causal mask, gradients to q, k and v."""


# ---------------------------------------------------------------------------------------
# 4. Block


class _ReferenceBlock(nn.Module):
    """The text's block; its attention is SDPA with a bottom-right causal mask."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x, past=None):
        b, t, c = x.shape
        h = self.n_heads
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=-1)
        q, k, v = (z.reshape(b, t, h, c // h).transpose(1, 2) for z in (q, k, v))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
        heads = _reference_attention(q, k, v).transpose(1, 2).reshape(b, t, c)
        x = x + self.proj(heads)
        # The cache returned detached: its values are compared, but the text asks nothing of
        # its gradients (an answer may detach what it stores), so ``grad`` follows y alone.
        return x + self.mlp(self.ln2(x)), (k.detach(), v.detach())


_BLOCK_NAMES = tuple(
    f"{part}.{kind}"
    for part in ("ln1", "qkv", "proj", "ln2", "mlp.0", "mlp.2")
    for kind in ("weight", "bias")
)


def _draw_block(d: Draw) -> Inputs:
    """One head or several, B = 1 and T = 1 included; a cache of 1 to 4 positions, or none
    (none where the family changes x alone: its dtype or device would not match the cache's)."""
    n_heads, width = d.size(1, 3), d.size(1, 4)
    c = n_heads * width
    b, t = d.size(1, 3), d.size(1, 4)
    x = d.tensor(b, t, c)
    if d.family in ("dtypes", "device") or not d.draw(st.booleans()):
        return Inputs((c, n_heads, x))
    t_past = d.size(1, 4)
    return Inputs(
        (c, n_heads, x, (d.tensor(b, n_heads, t_past, width), d.tensor(b, n_heads, t_past, width)))
    )


def _block_hint(family: str, inputs: Inputs) -> str:
    return _(
        "Pre-norm: x = x + proj(attention of the heads of qkv(ln1(x))), then y = x + "
        "mlp(ln2(x)), each LayerNorm used in its own branch; with past, the new keys and values "
        "come after the cached ones, and the block returns them all."
    )


BLOCK = Contract(
    "Block",
    _ReferenceBlock,
    _draw_block,
    construct=2,
    arg_names=("d_model", "n_heads", "x", "past"),
    hint=_block_hint,
)


def check_Block(Block) -> None:
    """The contract, the weights filled in the answer's registration order (the text names
    the submodules, not their order): the output, the keys and values with the cache, the
    gradient to x, in every family."""
    seen = _parameter_names(Block, (8, 2), "Block(8, 2)", _BLOCK_NAMES)
    if seen.get("n_heads") != 2:
        raise CheckError(
            _(
                "Block(8, 2).n_heads is {got!r}, expected 2: store the number of heads as "
                "self.n_heads, as the text asks (the attention maps read block.n_heads)."
            ).format(got=seen.get("n_heads"))
        )
    _as_registered(BLOCK, seen["names"]).check(Block)


check_Block.contracts = (BLOCK,)  # for make verify: run above, in answer order


# ---------------------------------------------------------------------------------------
# 5. next_token_probs


def _reference_probs(logits, temperature=1.0, top_k=None):
    logits = logits / temperature
    if top_k is not None and top_k < logits.shape[-1]:
        kth = logits.topk(top_k, dim=-1).values[:, -1:]
        logits = logits.masked_fill(logits < kth, -math.inf)
    return F.softmax(logits, dim=-1)


def _draw_next_token_probs(d: Draw) -> Inputs:
    """(B, V) logits without ties (steps of 0.25, exact in every dtype drawn), one row far above
    the others; temperatures above and below 1, and 0.01 (the lesson's own: a logit of 1
    becomes 100, so exp overflows unless each row's max is subtracted first); top_k of 1,
    below V, V and above V."""
    # on meta only the top-k path makes tensors: there, V leaves room for a top_k below it
    b, v = d.size(1, 4), d.size(3, 9) if d.family == "device" else d.size(1, 9)
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 2**16)))
    logits = torch.stack([torch.randperm(v, generator=g) for _row in range(b)]).float() * 0.25
    logits[0] += d.draw(st.sampled_from([0.0, 3.0]))  # a top-k over the whole batch shows
    kwargs = {}
    temperature = d.draw(st.sampled_from([None, 0.7, 1.8, 0.5, 0.01]))
    if temperature is not None:
        kwargs["temperature"] = temperature
    top_k = d.draw(st.sampled_from([None, 1, 2, 3, max(v - 1, 1), v, v + 3]))
    if top_k is not None:
        kwargs["top_k"] = top_k
    if temperature == 0.01 and d.family != "dtypes" and d.draw(st.booleans()):
        # every logit over the temperature near -30000: a mask of -1e4 in place of -inf would
        # then be the largest score, and the masked tokens would take all the probability
        # (steps of 0.25 around -300 stay exact in float32 and float64)
        logits -= 300.0
    return Inputs((logits,), kwargs)


def _compare_probs(got, expected, what: str, inputs: Inputs) -> None:
    """Rows that sum to 1, each row's own top-k; then the default comparison."""
    if isinstance(got, torch.Tensor) and got.shape == expected.shape and got.numel():
        sums = got.detach().to(torch.float64).sum(-1)
        if bool(sums.isnan().any()) and _rows_lost_to_batch_top_k(sums.isnan(), inputs):
            raise CheckError(
                _(
                    "{what}: a row came out NaN, every logit in it masked. Keep the top_k largest "
                    "logits of EACH row (topk along dim=-1, each row's own k-th value), not the "
                    "whole batch's."
                ).format(what=what)
            )
        if bool(sums.isnan().any()):
            raise CheckError(
                _(
                    "{what}: a row came out NaN. Divided by a small temperature, logits become "
                    "large: exp overflows to inf (or a row far below another underflows to 0) "
                    "and inf / inf, 0 / 0 are NaN. Use F.softmax, or subtract EACH row's max "
                    "(amax(dim=-1, keepdim=True)) before exp."
                ).format(what=what)
            )
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-2):
            raise CheckError(
                _(
                    "{what}: the rows sum to {sums}, not 1. Mask with -inf "
                    "before the softmax, so that what is kept is renormalised."
                ).format(what=what, sums=sums.tolist())
            )
        (logits,) = inputs.args
        top_k = inputs.kwargs.get("top_k")
        if top_k is not None and top_k < logits.shape[-1] and got.device.type != "meta":
            kth = logits.topk(top_k, dim=-1).values[:, -1:]
            outside = (logits < kth).to(got.device)
            if bool((got.detach()[outside] != 0).any()):
                raise CheckError(
                    _(
                        "{what}: a token outside the top {k} got probability {p:.3g}, where the "
                        "text asks for exactly 0. Set those logits to -inf before the softmax "
                        "(no floor such as clamp(min=1e-12), no finite mask value)."
                    ).format(what=what, k=top_k, p=float(got.detach()[outside].abs().max()))
                )
    compare_values(got, expected, what, inputs)


def _rows_lost_to_batch_top_k(nan_rows: torch.Tensor, inputs: Inputs) -> bool:
    """Whether the NaN rows are rows whose every logit is below the whole batch's k-th largest
    (a top-k over the batch masks them entirely), not an overflow of a softmax by hand."""
    (logits,) = inputs.args
    top_k = inputs.kwargs.get("top_k")
    if top_k is None or top_k >= logits.shape[-1]:
        return False
    kth = logits.flatten().topk(min(top_k, logits.numel())).values[-1]
    lost = logits.amax(dim=-1) < kth
    return bool((lost[nan_rows.to(lost.device)]).all())


def _probs_hint(family: str, inputs: Inputs) -> str:
    (logits,) = inputs.args
    temperature = inputs.kwargs.get("temperature", 1.0)
    if "top_k" in inputs.kwargs and float(logits.max()) / temperature < -1e4:
        return _(
            "Every logit divided by the temperature is below -10000 here: a mask of a large "
            "negative number (-1e4) is then above them all and takes the probability. Set the "
            "logits outside the top k to -inf, which is below every score, so that they get "
            "exactly 0."
        )
    if "top_k" in inputs.kwargs and inputs.kwargs["top_k"] >= logits.shape[-1]:
        return _(
            "A top_k of at least V keeps every token: skip the masking (topk cannot pick more "
            "than V)."
        )
    if "top_k" in inputs.kwargs and logits.shape[0] > 1:
        return _(
            "Keep the top_k largest logits of EACH row (topk along dim=-1, the k-th value per "
            "row), not of the whole batch."
        )
    return ""


NEXT_TOKEN_PROBS = Contract(
    "next_token_probs",
    _reference_probs,
    _draw_next_token_probs,
    families=("values", "edges", "strides", "dtypes", "device"),
    compare=_compare_probs,
    arg_names=("logits",),
    hint=_probs_hint,
    # the text asks for no float64 precision: a softmax taken in float32 and cast back (the
    # usual care for half-precision logits) is off by about 1e-7 on float64 logits
    tolerance={torch.float64: (1e-5, 1e-7)},
)


@uses(NEXT_TOKEN_PROBS)
def check_next_token_probs(next_token_probs) -> None:
    """The contract: rows summing to 1, each row's own top-k, the caller's logits kept."""


# ---------------------------------------------------------------------------------------
# 6. sample_cached


def _reference_sample(model, idx, max_new_tokens, temperature, top_k, generator):
    with torch.no_grad():
        for _ in range(max_new_tokens):
            logits, _ = model(idx[:, -model.context :])
            probs = _reference_probs(logits[:, -1], temperature, top_k)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], dim=1)
    return idx


def _draw_sample(d: Draw) -> Inputs:
    """A stand-in model of several contexts; a batch of one, a one-token prompt, a prompt that
    fills or overflows the context; no new token, a few, or enough to run past the context;
    temperatures above and below 1, top-k or not. The model holds gradients (the caller's,
    which the sampler must leave as they are)."""
    vocab, context = d.size(2, 9), d.size(1, 7)
    spec = {"vocab_size": vocab, "context": context, "dim": 6, "seed": d.draw(st.integers(0, 99)),
            "device": "cpu", "grads": True}  # fmt: skip
    idx = d.integers(d.size(1, 3), d.size(1, 9), low=0, high=vocab)
    new = d.size(0, 12, empty_ok=True)
    temperature = d.draw(st.sampled_from([1.0, 0.5, 1.5]))
    top_k = d.draw(st.sampled_from([None, 1, 3, vocab + 1]))
    model = Build(probes.build_toy, spec, f"a model with context {context}")
    seed = d.draw(st.integers(0, 99))
    generator = Build(probes.build_generator, {"seed": seed}, f"a generator seeded {seed}")
    return Inputs((model, idx, new, temperature, top_k, generator))


def _sample_hint(family: str, inputs: Inputs) -> str:
    model, idx = inputs.args[:2]
    if idx.shape[1] > model.spec["context"]:
        return _(
            "The prompt is longer than the context: the first call reads its last "
            "`context` tokens only."
        )
    return _(
        "Draw one token per step with torch.multinomial(probs, 1, generator=generator) from "
        "next_token_probs(logits[:, -1], temperature, top_k), and once the cache is full, run "
        "the last `context` tokens without a cache."
    )


SAMPLE_CACHED = Contract(
    "sample_cached",
    _reference_sample,
    _draw_sample,
    # no dtypes, device or grad: the tokens are int64, the generator lives on the CPU
    families=("values", "edges", "strides"),
    arg_names=("model", "idx", "max_new_tokens", "temperature", "top_k", "generator"),
    hint=_sample_hint,
)


@uses(SAMPLE_CACHED)
def check_sample_cached(sample_cached) -> None:
    """The contract: the tokens of the uncached sampler, token for token. By hand, on a
    stand-in model that records its calls: the cache really used (one new position per call,
    at every step while it has room), no gradients, a full window only when the cache is
    full; with generator=None, the tokens of the global random state, seeded alike on both
    sides; on the meta device (a GPU's stand-in), no tensor made on the CPU."""
    device = get_device()
    g = torch.Generator().manual_seed(1106)
    configs = [  # vocab, context, B, T_prompt, new, temperature, top_k
        (7, 8, 1, 1, 5, 1.0, None),
        (9, 6, 3, 4, 12, 0.8, 3),
        (5, 6, 2, 9, 5, 1.5, None),  # the prompt is longer than the context
        (11, 5, 2, 5, 7, 1.0, 4),  # the prompt fills the context
        (6, 4, 2, 2, 6, 1.0, 1),  # top_k=1: one token is certain, and is still drawn
    ]
    for i, (vocab, context, b, t, new, tau, top_k) in enumerate(configs):
        toy = {"vocab_size": vocab, "context": context, "dim": 6, "seed": 60 + i, "device": device}
        idx = torch.randint(0, vocab, (b, t), generator=g).to(device)
        case = toy | {"idx": idx, "max_new_tokens": new, "temperature": tau, "top_k": top_k,
                      "gen_seed": 70 + i}  # fmt: skip
        what = (
            f"sample_cached(model with context {context}, idx of shape ({b}, {t}), {new}, "
            f"temperature={tau}, top_k={top_k})"
        )
        seen = observe(probes.probe_sample_cached, sample_cached, case, what)
        calls = seen["calls"]
        if any(c[2] for c in calls):
            raise CheckError(
                _(
                    "{what} ran the model with gradients enabled: sample under "
                    "torch.no_grad() (or the @torch.no_grad() decorator)."
                ).format(what=what)
            )
        if any(c[1] > 0 and c[0] != 1 for c in calls):
            raise CheckError(
                _(
                    "{what} fed more than the one new token together with a cache: "
                    "with past, pass only the token just drawn."
                ).format(what=what)
            )
        room = min(t, context) < context  # the prompt leaves the cache room to grow
        if new > 1 and room and not any(c[1] > 0 for c in calls):
            raise CheckError(
                _(
                    "{what} gave the right tokens but never passed a cache to the model: it "
                    "recomputed the whole window at every step. Keep `present` from each call and "
                    "pass it as `past` with the new token alone."
                ).format(what=what)
            )
        full_windows = sum(1 for c in calls if c[1] == 0)
        allowed = 1 + max(0, min(t, context) + new - 1 - context) + 1
        if full_windows > allowed:
            raise CheckError(
                _(
                    "{what} ran {full_windows} calls without a cache where {allowed} at most are "
                    "needed: reuse the cache while it holds fewer than `context` positions."
                ).format(what=what, full_windows=full_windows, allowed=allowed)
            )
        cached_calls = sum(1 for c in calls if c[1] > 0)
        possible = min(new - 1, context - min(t, context))  # steps before the cache is full
        if cached_calls < possible:
            raise CheckError(
                _(
                    "{what} fed a new token with the cache {cached} times where {possible} "
                    "steps had room in it: the cache was dropped before it was full. Feed the "
                    "new token alone with the cache while the cache holds fewer than "
                    "`context` positions (not context - 1)."
                ).format(what=what, cached=cached_calls, possible=possible)
            )
        reference_generator = torch.Generator(device=device).manual_seed(70 + i)
        _reference_sample(probes.build_toy(toy), idx, new, tau, top_k, reference_generator)
        _check_draws(seen["after"], probes.next_draws(reference_generator, device), what)
    # Without a generator, both samplers draw from the global random state, seeded alike.
    vocab, context, b, t, new = 7, 5, 2, 3, 6
    toy = {"vocab_size": vocab, "context": context, "dim": 6, "seed": 65, "device": device}
    idx = torch.randint(0, vocab, (b, t), generator=g).to(device)
    case = toy | {"idx": idx, "max_new_tokens": new, "temperature": 1.0, "top_k": None,
                  "global_seed": 75}  # fmt: skip
    what = (
        f"sample_cached(model with context {context}, idx of shape ({b}, {t}), {new}, "
        "generator=None)"
    )
    seen = observe(probes.probe_sample_cached, sample_cached, case, what)
    got = seen["out"]
    with torch.random.fork_rng(devices=[idx.device] if idx.is_cuda else []):
        torch.manual_seed(75)
        expected = _reference_sample(probes.build_toy(toy), idx, new, 1.0, None, None)
        expected_after = probes.next_draws(None, idx.device)
    if not isinstance(got, torch.Tensor) or not torch.equal(got.cpu(), expected.cpu()):
        raise CheckError(
            _(
                "{what} drew {got} where sample() from the same global random state draws "
                "{expected}: with generator=None, pass None on to torch.multinomial (it then "
                "draws from PyTorch's global generator, as sample() does), do not make one."
            ).format(
                what=what,
                got=got.tolist() if isinstance(got, torch.Tensor) else repr(got)[:80],
                expected=expected.tolist(),
            )
        )
    _check_draws(seen["after"], expected_after, what)
    # On the meta device (a GPU's stand-in): tokens gathered in a tensor made without device=
    # mix devices, which a CPU-only grader would not see otherwise.
    vocab, context, b, t, new, tau, top_k = configs[1]
    case = {"vocab_size": vocab, "context": context, "dim": 6, "seed": 61,
            "idx": torch.randint(0, vocab, (b, t), generator=g), "max_new_tokens": new,
            "temperature": tau, "top_k": top_k, "gen_seed": 71}  # fmt: skip
    what = (
        f"sample_cached(model with context {context}, idx of shape ({b}, {t}), {new}, "
        f"temperature={tau}, top_k={top_k}) [inputs on the meta device]"
    )
    seen = observe(probes.probe_sample_cached_on_meta, sample_cached, case, what)
    if "moved" in seen:
        raise CheckError(
            _(
                "{what}: with the model and the prompt on another device (here PyTorch's "
                "'meta' device, as a GPU would be), the answer copied a tensor to the CPU "
                "({call}). On a GPU, torch.multinomial would then draw on the CPU, from another "
                "generator than sample() uses (or refuse the caller's CUDA generator), and the "
                "tokens would differ. Keep the probabilities and the tokens on idx's device."
            ).format(what=what, call=seen["moved"])
        )
    if "device_mix" in seen:
        raise CheckError(
            _(
                "{what}: with the model and the prompt on another device (here PyTorch's "
                "'meta' device, as a GPU would be), the answer mixed devices: {error}. A "
                "tensor made with torch.zeros, torch.tensor... lands on the CPU unless you pass "
                "device=idx.device (or build it with idx.new_zeros)."
            ).format(what=what, error=seen["device_mix"])
        )
    if "device" in seen and seen["device"] != "meta":
        raise CheckError(
            _(
                "{what} returned a tensor on {device}, not on the prompt's device (meta, "
                "standing in for a GPU): keep the tokens where idx is."
            ).format(what=what, device=seen["device"])
        )


def _check_draws(got: list[int], expected: list[int], what: str) -> None:
    """The generator's next numbers after the answer equal those after sample(): both drew
    from it exactly once per new token."""
    if got != expected:
        raise CheckError(
            _(
                "{what} gave the right tokens but left the random generator in another state "
                "than sample() does: it drew from it more (or less) often than once per new "
                "token (a token drawn after the last one and thrown away, say). Draw exactly "
                "once per token, torch.multinomial(probs, 1, generator=generator), as sample() "
                "does: the caller's next draws from that generator depend on it."
            ).format(what=what)
        )


# ---------------------------------------------------------------------------------------
# 7. export_gpt


def _reference_export(model, example):
    """What crosses back of an ExportedProgram: its type's name (a program is not data; the
    hand-written check runs the answer's program where it was made)."""
    return wire.Unsendable(f"{ExportedProgram.__module__}.{ExportedProgram.__qualname__}")


def _draw_export(d: Draw) -> Inputs:
    """A stand-in model of several contexts, in train or eval mode; an example of T >= 2 (an
    example of one position would pin the length to 1), B = 1 included."""
    context = d.size(3, 9)  # from 3: T is dynamic from 2 (export pins lengths 0 and 1)
    spec = {"vocab_size": d.size(2, 9), "context": context, "dim": 4,
            "seed": d.draw(st.integers(0, 99)), "device": "cpu",
            "training": d.draw(st.booleans()), "recording": False}  # fmt: skip
    mode = "train" if spec["training"] else "eval"
    model = Build(probes.build_toy, spec, f"a model with context {context} in {mode} mode")
    example = d.integers(d.size(1, 3), d.size(2, context), low=0, high=spec["vocab_size"])
    return Inputs((model, example))


def _compare_export(got, expected, what: str, inputs: Inputs) -> None:
    if got != expected:
        name = got.type_name if isinstance(got, wire.Unsendable) else type(got).__name__
        raise CheckError(
            _(
                "{what} returned a {type_name}, not the ExportedProgram that "
                "torch.export.export returns (no .module() on it)."
            ).format(what=what, type_name=name.rsplit(".", 1)[-1])
        )


EXPORT_GPT = Contract(
    "export_gpt",
    _reference_export,
    _draw_export,
    # values only: each example exports (seconds); the program's logits are judged by hand
    families=("values",),
    compare=_compare_export,
    arg_names=("model", "example"),
    examples=3,
)


@uses(EXPORT_GPT)
def check_export_gpt(export_gpt) -> None:
    """The contract: an ExportedProgram, the model (its mode) left as it was. By hand, on a
    stand-in model with another context than the lesson's (and once in train mode): the
    program accepts every length from 1 to the context and gives the model's logits."""
    device = get_device()
    g = torch.Generator().manual_seed(1107)
    for i, (vocab, context, b, t, training) in enumerate(
        [(9, 7, 2, 3, False), (6, 13, 1, 5, True)]
    ):
        toy = {"vocab_size": vocab, "context": context, "dim": 4, "seed": 80 + i,
               "device": device, "training": training}  # fmt: skip
        lengths = sorted({1, 2, t, context})
        inputs = [torch.randint(0, vocab, (b, n), generator=g).to(device) for n in lengths]
        example = torch.randint(0, vocab, (b, t), generator=g).to(device)
        what = f"export_gpt(model with context {context}, example of shape ({b}, {t}))"
        seen = observe(
            probes.probe_export_gpt, export_gpt, toy | {"example": example, "inputs": inputs}, what
        )
        if not seen["is_program"]:
            return  # the contract said so already
        if i == 0:
            _check_export_on_meta(export_gpt, toy, example, what)
        model = probes.build_toy(toy)
        model.recording = False
        for n, idx, got in zip(lengths, inputs, seen["outputs"], strict=True):
            if isinstance(got, str) and "size()[0]" in got:  # the guard on the batch size
                raise CheckError(
                    _(
                        "the program {what} returned refused idx of shape ({b}, {n}), the "
                        "example's batch size: {error}. Export with the example as it is given "
                        "(all its rows), so that the program takes its batch size."
                    ).format(what=what, b=b, n=n, error=got)
                )
            if isinstance(got, str):
                raise CheckError(
                    _(
                        "the program {what} returned refused idx of shape ({b}, {n}): {error}. "
                        "The sequence axis must be dynamic from 1 to model.context ({context} "
                        "here): Dim('T', max=model.context), not a number from the lesson."
                    ).format(what=what, b=b, n=n, error=got, context=context)
                )
            with torch.no_grad():
                expected = model(idx)[0]
            assert_close(
                got,
                expected,
                what=_("the program's logits for idx of shape ({b}, {n})").format(b=b, n=n),
            )


def _check_export_on_meta(export_gpt, toy: dict, example: torch.Tensor, what: str) -> None:
    """The model and the example on the meta device (a GPU's stand-in): an answer that moves
    either to the CPU (model.cpu(), example.cpu()) raises there, or leaves the model moved.
    Other errors are meta's own limits, not the answer's: they say nothing."""
    seen = observe(
        probes.probe_export_gpt_on_meta, export_gpt, toy | {"example": example.cpu()}, what
    )
    moved = "Cannot copy out of meta" in seen.get("raised", "")
    if moved or seen.get("devices", ["meta"]) != ["meta"]:
        raise CheckError(
            _(
                "{what} [model and example on another device]: with the model and the example "
                "on another device (here PyTorch's 'meta' device, as a GPU would be), the "
                "answer moved them to the CPU ({error}). The caller's model stays where the "
                "caller put it: export it and the example as they are (a program for a CPU "
                "server is the caller's choice, made before calling export_gpt)."
            ).format(what=what, error=seen.get("raised") or seen.get("devices"))
        )
