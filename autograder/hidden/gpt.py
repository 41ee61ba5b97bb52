"""Hidden checks for 11_gpt.

PyTorch is the oracle where it has the operation (``F.cross_entropy``,
``F.scaled_dot_product_attention``, ``nn.Embedding``); the block, the top-k and the samplers
are computed here from the same seeded weights. The learner's answers are reached through the
probes in ``autograder/probes/gpt.py``; the samplers and the export run on its ``ToyLM``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from autograder.boundary import observe
from autograder.contracts import (
    FLOAT64_EXACT,
    TOLERANCE,
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


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# ---------------------------------------------------------------------------------------
# 1. next_token_loss


def _reference_loss(logits, tokens, ignore_index=-100):
    """F.cross_entropy on the shifted targets (the grader's copy)."""
    v = logits.shape[-1]
    return F.cross_entropy(
        logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1), ignore_index=ignore_index
    )


def _draw_next_token_loss(d: Draw) -> Inputs:
    """(B, T, V) logits, T from 2; targets ignored unevenly across rows; another ignore_index."""
    b, t, v = d.size(1, 4), d.size(2, 7), d.size(2, 9)
    logits = d.tensor(b, t, v, low=-4.0, high=4.0)
    ignore = d.draw(st.sampled_from([None, 0, -1, 3]))
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
    return _(
        "Score logits[:, i] against tokens[:, i + 1] and average over the counted targets, all "
        "rows together (a row with fewer counted targets must not weigh more), leaving the "
        "ignored ones out."
    )


def _compare_loss(got, expected, what: str, inputs: Inputs) -> None:
    """A scalar of any float dtype (the text names none), close to the reference; not shifted?"""
    logits, tokens = inputs.args
    check_type(got, torch.Tensor, what)
    check_shape(got, (), what=what)
    rtol, atol = TOLERANCE[expected.dtype]
    try:
        assert_close(got, expected.detach(), what=what, exact_dtype=False, rtol=rtol, atol=atol)
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
# 2. GPTEmbedding


def check_GPTEmbedding(GPTEmbedding) -> None:
    """Several sizes and dtypes, the last position, T = context, start anywhere, one position
    past the table (ValueError), and the gradients to both tables."""
    device = get_device()
    g = torch.Generator().manual_seed(1101)
    configs = [  # vocab, context, d_model, dtype, [(B, T, start)]
        (7, 5, 3, torch.float32, [(1, 1, None), (2, 5, None), (1, 1, 4), (3, 2, 3), (1, 2, 4)]),
        (13, 10, 8, torch.float64, [(4, 10, 0), (2, 3, 7), (1, 4, 7), (2, 11, 0)]),
        (5, 3, 4, torch.float32, [(2, 3, None), (1, 1, 2), (1, 1, 3)]),
    ]
    for vocab, context, d_model, dtype, calls in configs:
        tok = torch.randn(vocab, d_model, generator=g, dtype=torch.float64).to(dtype)
        pos = torch.randn(context, d_model, generator=g, dtype=torch.float64).to(dtype)
        case_calls = []
        for b, t, start in calls:
            idx = torch.randint(0, vocab, (b, t), generator=g).to(device)
            w = torch.randn(b, t, d_model, generator=g, dtype=torch.float64).to(dtype).to(device)
            case_calls.append({"idx": idx, "start": start, "w": w})
        case = {
            "vocab_size": vocab, "context": context, "d_model": d_model,
            "tok": tok, "pos": pos, "device": device, "calls": case_calls,
        }  # fmt: skip
        name = f"GPTEmbedding({vocab}, {context}, {d_model})"
        seen = observe(
            probes.probe_GPTEmbedding, GPTEmbedding, case, f"{name} in {_dtype_name(dtype)}"
        )
        if seen["context"] != context:
            raise CheckError(
                _("{name}.context is {got!r}, expected {context}.").format(
                    name=name, got=seen["context"], context=context
                )
            )
        tok_d, pos_d = tok.to(device), pos.to(device)
        for (b, t, start), call, got in zip(calls, case_calls, seen["calls"], strict=True):
            s = 0 if start is None else start
            what = f"{name}(idx of shape ({b}, {t}){'' if start is None else f', start={start}'})"
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
                continue
            if "raised" in got:
                raise CheckError(
                    _(
                        "{what} raised {error_type}, but positions {first}..{last} fit a "
                        "context of {context} (the condition is start + T > context)."
                    ).format(
                        what=what,
                        error_type=got["raised"],
                        first=s,
                        last=s + t - 1,
                        context=context,
                    )
                )
            expected = tok_d[call["idx"]] + pos_d[s : s + t]
            out = got["out"]
            check_type(out, torch.Tensor, what)
            check_shape(out, (b, t, d_model), names="B T C", what=what)
            try:
                assert_close(out, expected, what=what)
            except CheckError as err:
                if torch.allclose(out.to(expected), tok_d[call["idx"]]):
                    raise CheckError(
                        _(
                            "{what} returned the token embeddings alone: add the position "
                            "embeddings."
                        ).format(what=what)
                    ) from None
                if start and torch.allclose(out.to(expected), tok_d[call["idx"]] + pos_d[:t]):
                    raise CheckError(
                        _(
                            "{what} used positions 0..{used_last}: the tokens are at "
                            "positions start..start+T-1 = {first}..{last}."
                        ).format(what=what, used_last=t - 1, first=s, last=s + t - 1)
                    ) from None
                raise err from None
            if got["tok_grad"] is None or got["pos_grad"] is None:
                raise CheckError(
                    _(
                        "{what}: no gradient reached the tables; use self.tok and "
                        "self.pos (nn.Embedding modules) on the forward path."
                    ).format(what=what)
                )
            w = call["w"]
            tok_grad = torch.zeros_like(tok_d).index_add_(
                0, call["idx"].flatten(), w.reshape(-1, d_model)
            )
            pos_grad = torch.zeros_like(pos_d)
            pos_grad[s : s + t] = w.sum(0)
            sends = _("the gradient {what} sends to {table}")
            assert_close(got["tok_grad"], tok_grad, what=sends.format(what=what, table="tok"))
            assert_close(got["pos_grad"], pos_grad, what=sends.format(what=what, table="pos"))


# ---------------------------------------------------------------------------------------
# 3. causal_attention


def _reference_attention(q, k, v):
    t_q, t_k = q.shape[-2], k.shape[-2]
    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def _draw_causal_attention(d: Draw) -> Inputs:
    """Leading axes (none to two), T_q <= T_k (one query, several, all), D != D_v."""
    lead = [d.size(1, 3) for _axis in range(d.draw(st.integers(0, 2)))]
    t_k = d.size(1, 6)
    t_q = d.draw(st.integers(1, t_k))
    dim, dim_v = d.size(1, 8), d.size(1, 6)
    return Inputs(
        (d.tensor(*lead, t_q, dim), d.tensor(*lead, t_k, dim), d.tensor(*lead, t_k, dim_v))
    )


def _causal_hint(family: str, inputs: Inputs) -> str:
    q, k, v = inputs.args
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


def _block_state(d_model: int, g: torch.Generator) -> dict:
    """Seeded weights for every tensor of a Block, LayerNorms far from their defaults."""
    shapes = {
        "ln1.weight": (d_model,), "ln1.bias": (d_model,),
        "qkv.weight": (3 * d_model, d_model), "qkv.bias": (3 * d_model,),
        "proj.weight": (d_model, d_model), "proj.bias": (d_model,),
        "ln2.weight": (d_model,), "ln2.bias": (d_model,),
        "mlp.0.weight": (4 * d_model, d_model), "mlp.0.bias": (4 * d_model,),
        "mlp.2.weight": (d_model, 4 * d_model), "mlp.2.bias": (d_model,),
    }  # fmt: skip
    state = {}
    for name, shape in shapes.items():
        scale = 1 / math.sqrt(shape[-1]) if len(shape) == 2 else 0.5
        state[name] = torch.randn(shape, generator=g) * scale
        if name.endswith("weight") and len(shape) == 1:
            state[name] += 1.0
    return state


def _reference_block(state, x, n_heads, past):
    b, t, c = x.shape
    p = {k: v.to(x) for k, v in state.items()}
    h = F.layer_norm(x, (c,), p["ln1.weight"], p["ln1.bias"])
    q, k, v = F.linear(h, p["qkv.weight"], p["qkv.bias"]).split(c, dim=-1)
    q, k, v = (z.reshape(b, t, n_heads, c // n_heads).transpose(1, 2) for z in (q, k, v))
    if past is not None:
        k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
    heads = _reference_attention(q, k, v).transpose(1, 2).reshape(b, t, c)
    x = x + F.linear(heads, p["proj.weight"], p["proj.bias"])
    h = F.layer_norm(x, (c,), p["ln2.weight"], p["ln2.bias"])
    h = F.linear(
        F.gelu(F.linear(h, p["mlp.0.weight"], p["mlp.0.bias"])), p["mlp.2.weight"], p["mlp.2.bias"]
    )
    return x + h, (k, v)


def check_Block(Block) -> None:
    """Seeded weights loaded by name; one head and several, B = 1, T = 1, with and without a
    cache, float64; the output, the returned keys and values, and the gradient to x."""
    device = get_device()
    g = torch.Generator().manual_seed(1104)
    configs = [  # d_model, n_heads, B, T, T_past (None: no cache), dtype
        (8, 2, 2, 5, None, torch.float32),
        (6, 1, 1, 1, None, torch.float32),
        (12, 3, 2, 1, 4, torch.float32),
        (8, 4, 1, 3, 2, torch.float64),
        (16, 2, 3, 4, None, torch.float64),
    ]
    for d_model, n_heads, b, t, t_past, dtype in configs:
        state = _block_state(d_model, g)
        x = torch.randn(b, t, d_model, generator=g, dtype=torch.float64).to(dtype).to(device)
        w = torch.randn(b, t, d_model, generator=g, dtype=torch.float64).to(dtype).to(device)
        past = None
        if t_past is not None:
            d = d_model // n_heads
            past = [
                torch.randn(b, n_heads, t_past, d, generator=g, dtype=torch.float64)
                .to(dtype)
                .to(device)
                for _ in range(2)
            ]
        what = (
            f"Block({d_model}, {n_heads})(x of shape ({b}, {t}, {d_model}) {_dtype_name(dtype)}"
            + (f", past of {t_past} positions)" if past is not None else ")")
        )
        case = {"d_model": d_model, "n_heads": n_heads, "state": state, "x": x, "w": w,
                "past": past, "device": device}  # fmt: skip
        seen = observe(probes.probe_Block, Block, case, what)
        if "missing" in seen:
            raise CheckError(
                _(
                    "Block({d_model}, {n_heads}) has no parameters named {missing}: use "
                    "exactly the submodules ln1, qkv, proj, ln2 and mlp (Linear, GELU, Linear)."
                ).format(d_model=d_model, n_heads=n_heads, missing=seen["missing"])
            )
        xr = x.clone().requires_grad_(True)
        expected, (k, v) = _reference_block(state, xr, n_heads, past)
        (expected * w).sum().backward()
        check_type(seen["y"], torch.Tensor, what)
        if not isinstance(seen["kv"], list) or len(seen["kv"]) != 2:
            raise CheckError(
                _("{what} should return (y, (k, v)); got {type_name} as the second item.").format(
                    what=what, type_name=type(seen["kv"]).__name__
                )
            )
        tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == torch.float32 else {}
        try:
            assert_close(
                seen["y"],
                expected.detach(),
                what=_("the output of {what}").format(what=what),
                **tol,
            )
        except CheckError as err:
            raise CheckError(
                _(
                    "{error} Pre-norm: x = x + proj(attention of the heads of qkv(ln1(x))), then "
                    "y = x + mlp(ln2(x)), each LayerNorm used in its own branch."
                ).format(error=err)
            ) from None
        assert_close(
            seen["kv"][0],
            k.detach(),
            what=_("the keys {what} returns (cache + new)").format(what=what),
            **tol,
        )
        assert_close(
            seen["kv"][1],
            v.detach(),
            what=_("the values {what} returns (cache + new)").format(what=what),
            **tol,
        )
        if seen["grad"] is None:
            raise CheckError(
                _("{what}: the output does not carry gradients back to x.").format(what=what)
            )
        assert_close(
            seen["grad"], xr.grad, what=_("the gradient of {what} to x").format(what=what), **tol
        )


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
    the others; temperatures above and below 1; top_k of 1, below V, V and above V."""
    b, v = d.size(1, 4), d.size(1, 9)
    g = torch.Generator().manual_seed(d.draw(st.integers(0, 2**16)))
    logits = torch.stack([torch.randperm(v, generator=g) for _row in range(b)]).float() * 0.25
    logits[0] += d.draw(st.sampled_from([0.0, 3.0]))  # a top-k over the whole batch shows
    kwargs = {}
    temperature = d.draw(st.sampled_from([None, 0.7, 1.8, 0.5]))
    if temperature is not None:
        kwargs["temperature"] = temperature
    top_k = d.draw(st.sampled_from([None, 1, 2, 3, v, v + 3]))
    if top_k is not None:
        kwargs["top_k"] = top_k
    return Inputs((logits,), kwargs)


def _compare_probs(got, expected, what: str, inputs: Inputs) -> None:
    """Rows that sum to 1, each row's own top-k; then the default comparison."""
    if isinstance(got, torch.Tensor) and got.shape == expected.shape and got.numel():
        sums = got.detach().to(torch.float64).sum(-1)
        if bool(sums.isnan().any()) and "top_k" in inputs.kwargs:
            raise CheckError(
                _(
                    "{what}: a row came out NaN, every logit in it masked. Keep the top_k largest "
                    "logits of EACH row (topk along dim=-1, each row's own k-th value), not the "
                    "whole batch's."
                ).format(what=what)
            )
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-2):
            raise CheckError(
                _(
                    "{what}: the rows sum to {sums}, not 1. Mask with -inf "
                    "before the softmax, so that what is kept is renormalised."
                ).format(what=what, sums=sums.tolist())
            )
    compare_values(got, expected, what, inputs)


def _probs_hint(family: str, inputs: Inputs) -> str:
    (logits,) = inputs.args
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
    tolerance=FLOAT64_EXACT,
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


def check_sample_cached(sample_cached) -> None:
    """On a stand-in model: a batch of one, a one-token prompt, a prompt longer than the context,
    runs well past the context, top-k, no new token; the same tokens as the uncached sampler,
    and the cache really used (one new position per call while it has room)."""
    device = get_device()
    g = torch.Generator().manual_seed(1106)
    configs = [  # vocab, context, B, T_prompt, new, temperature, top_k
        (7, 8, 1, 1, 5, 1.0, None),
        (9, 6, 3, 4, 12, 0.8, 3),
        (5, 6, 2, 9, 5, 1.5, None),  # the prompt is longer than the context
        (11, 5, 2, 5, 7, 1.0, 4),  # the prompt fills the context
        (6, 4, 1, 2, 0, 1.0, None),
        (8, 7, 2, 3, 1, 0.5, None),
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
        model = probes.build_toy(toy)
        model.recording = False
        gen = torch.Generator(device=device).manual_seed(70 + i)
        expected = _reference_sample(model, idx, new, tau, top_k, gen)
        out = seen["out"]
        check_type(out, torch.Tensor, what)
        check_shape(out, tuple(expected.shape), names="B T", what=what)
        calls = seen["calls"]
        if not torch.equal(out.to(expected), expected):
            too_long = [c for c in calls if c[0] > context]
            hint = (
                _(
                    " The prompt is longer than the context: the first call reads its last "
                    "`context` tokens only."
                )
                if too_long and t > context
                else _(
                    " Draw one token per step with torch.multinomial(probs, 1, "
                    "generator=generator) from next_token_probs(logits[:, -1], temperature, "
                    "top_k), and once the cache is full, run the last `context` tokens without "
                    "a cache."
                )
            )
            raise CheckError(
                _(
                    "{what} drew {got}, but sampling without a cache draws "
                    "{expected} with the same generator.{hint}"
                ).format(what=what, got=out.tolist(), expected=expected.tolist(), hint=hint)
            )
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


# ---------------------------------------------------------------------------------------
# 7. export_gpt


def check_export_gpt(export_gpt) -> None:
    """On a stand-in model with another context than the lesson's (and once in train mode):
    an ExportedProgram that accepts every length from 1 to the context and gives the model's
    logits; the model's mode unchanged."""
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
            raise CheckError(
                _(
                    "{what} returned a {type_name}, not the ExportedProgram that "
                    "torch.export.export returns (no .module() on it)."
                ).format(what=what, type_name=seen["type"])
            )
        if seen["training_after"] != training:
            raise CheckError(
                _(
                    "{what} changed the model's mode (train: {before} before, "
                    "{after} after); leave it as the caller set it."
                ).format(what=what, before=training, after=seen["training_after"])
            )
        model = probes.build_toy(toy)
        model.recording = False
        for n, idx, got in zip(lengths, inputs, seen["outputs"], strict=True):
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
