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

from autograder.boundary import AnswerRaised, observe
from autograder.probes import gpt as probes
from tutorial_lib.checks import CheckError, assert_close, check_shape, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# ---------------------------------------------------------------------------------------
# 1. next_token_loss


def _reference_loss(logits, tokens, ignore_index):
    logits = logits.detach().clone().requires_grad_(True)
    v = logits.shape[-1]
    loss = F.cross_entropy(
        logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1), ignore_index=ignore_index
    )
    loss.backward()
    return loss.detach(), logits.grad


def check_next_token_loss(next_token_loss) -> None:
    """Several sizes and dtypes, ignored targets spread unevenly over the rows, another
    ignore_index; the loss and its gradient against F.cross_entropy on shifted targets."""
    device = get_device()
    g = torch.Generator().manual_seed(1100)
    configs = [  # B, T, V, dtype, ignore_index (None: the default), fraction ignored
        (1, 2, 5, torch.float32, None, 0.0),
        (3, 7, 11, torch.float64, None, 0.0),
        (4, 9, 13, torch.float32, None, 0.4),
        (2, 6, 7, torch.float64, 0, 0.0),  # 0 is also a token: it must not be learned
        (5, 5, 6, torch.float32, 3, 0.3),
        (1, 12, 13, torch.float32, -1, 0.5),
    ]
    for b, t, v, dtype, ignore, fraction in configs:
        logits = (torch.randn(b, t, v, generator=g, dtype=torch.float64) * 2).to(dtype).to(device)
        tokens = torch.randint(0, v, (b, t), generator=g)
        hidden_value = -100 if ignore is None else ignore
        if fraction:  # row i loses a different number of targets than row j
            for row in range(b):
                drop = torch.rand(t, generator=g) < fraction * (row + 1) / b
                drop[0] = True  # the first token is never a target: the ignore there is harmless
                tokens[row, drop] = hidden_value
            tokens[0, -1] = 0 if hidden_value != 0 else 1  # at least one target counted
        tokens = tokens.to(device)
        kwargs = {} if ignore is None else {"ignore_index": ignore}
        what = f"next_token_loss(logits of shape ({b}, {t}, {v}) {_dtype_name(dtype)}, tokens" + (
            f", ignore_index={ignore})" if ignore is not None else ")"
        )
        case = {"logits": logits, "tokens": tokens, "kwargs": kwargs}
        seen = observe(probes.probe_next_token_loss, next_token_loss, case, what)
        expected, expected_grad = _reference_loss(logits, tokens, hidden_value)
        loss = seen["loss"]
        check_type(loss, torch.Tensor, what)
        check_shape(loss, (), what=what)
        try:
            assert_close(loss, expected, what=what, exact_dtype=False)
        except CheckError:
            unshifted = F.cross_entropy(
                logits.reshape(-1, v), tokens.reshape(-1), ignore_index=hidden_value
            )
            if torch.allclose(loss.to(unshifted), unshifted.detach(), atol=1e-5):
                raise CheckError(
                    _(
                        "{what} scored logits[:, i] against tokens[:, i]: shift the targets by "
                        "one (tokens[:, 1:] against logits[:, :-1])."
                    ).format(what=what)
                ) from None
            hint = (
                _(
                    " Pass ignore_index on to F.cross_entropy: the caller chose another value "
                    "than -100, and those targets must not count."
                )
                if ignore is not None
                else _(
                    " Average over the counted targets, all rows together (a row with "
                    "fewer counted targets must not weigh more), and leave the ignored ones out."
                )
                if fraction
                else ""
            )
            raise CheckError(
                _("{what}: wrong value, {got:.5f} instead of {expected:.5f}.{hint}").format(
                    what=what, got=loss.item(), expected=expected.item(), hint=hint
                )
            ) from None
        if seen["grad"] is None:
            raise CheckError(
                _(
                    "{what} returned a loss that does not reach the logits' gradient: "
                    "compute it from logits with torch operations, no .item() or .detach()."
                ).format(what=what)
            )
        assert_close(
            seen["grad"],
            expected_grad,
            what=_("the gradient of {what} to the logits").format(what=what),
        )
        if seen["tokens_changed"] or seen["logits_changed"]:
            raise CheckError(
                _("{what} changed the caller's tensors in place; leave them as they are.").format(
                    what=what
                )
            )


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


def check_causal_attention(causal_attention) -> None:
    """Batched and unbatched, T_q < T_k (one query and several), D_v != D, float64, and the
    gradients to q, k and v."""
    device = get_device()
    g = torch.Generator().manual_seed(1102)
    configs = [  # leading axes, T_q, T_k, D, D_v, dtype
        ((2, 3), 6, 6, 8, 8, torch.float32),
        ((), 1, 1, 4, 4, torch.float32),
        ((1, 2), 1, 7, 4, 4, torch.float32),
        ((3,), 3, 8, 5, 5, torch.float64),
        ((2, 2), 4, 4, 16, 3, torch.float32),
        ((1,), 2, 5, 2, 6, torch.float64),
    ]
    for lead, t_q, t_k, d, d_v, dtype in configs:

        def rand(*shape, lead=lead, dtype=dtype):
            return torch.randn(*lead, *shape, generator=g, dtype=torch.float64).to(dtype).to(device)

        q, k, v = rand(t_q, d), rand(t_k, d), rand(t_k, d_v)
        w = rand(t_q, d_v)
        what = (
            f"causal_attention(q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, "
            f"{_dtype_name(dtype)})"
        )
        case = {"q": q, "k": k, "v": v, "w": w, "grad": True}
        seen = observe(probes.probe_causal_attention, causal_attention, case, what)
        qr, kr, vr = (t.clone().requires_grad_(True) for t in (q, k, v))
        expected = _reference_attention(qr, kr, vr)
        (expected * w).sum().backward()
        out = seen["out"]
        check_type(out, torch.Tensor, what)
        check_shape(out, tuple(expected.shape), what=what)
        try:
            assert_close(out, expected.detach(), what=what)
        except CheckError as err:
            if t_q < t_k:
                top_left = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                if torch.allclose(out.to(top_left), top_left, atol=1e-5):
                    raise CheckError(
                        _(
                            "{what} let query i see keys 0..i (is_causal=True, or tril() without "
                            "a diagonal): the queries are the LAST T_q positions, so query i sees "
                            "keys 0..T_k - T_q + i, tril(diagonal=T_k - T_q)."
                        ).format(what=what)
                    ) from None
            if d != d_v:
                scaled = F.scaled_dot_product_attention(
                    q,
                    k,
                    v,
                    attn_mask=torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(t_k - t_q),
                    scale=1 / math.sqrt(d_v),
                )
                if torch.allclose(out.to(scaled), scaled, atol=1e-5):
                    raise CheckError(
                        _(
                            "{what} scaled the scores by sqrt({d_v}), v's width: the "
                            "scale is sqrt of the width of q and k, sqrt({d})."
                        ).format(what=what, d_v=d_v, d=d)
                    ) from None
            raise err from None
        if seen["grads"] is None or any(gr is None for gr in seen["grads"]):
            raise CheckError(
                _("{what}: the output does not carry gradients to q, k and v.").format(what=what)
            )
        for name, got, ref in zip("qkv", seen["grads"], (qr.grad, kr.grad, vr.grad), strict=True):
            assert_close(
                got, ref, what=_("the gradient of {what} to {name}").format(what=what, name=name)
            )


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


def check_next_token_probs(next_token_probs) -> None:
    """Batches whose rows have different top-k sets, temperatures above and below 1, top_k of
    1, of V and above V, float64; rows sum to 1 and the caller's logits stay as they were."""
    device = get_device()
    g = torch.Generator().manual_seed(1105)
    configs = [  # B, V, dtype, kwargs
        (1, 5, torch.float32, {}),
        (3, 13, torch.float32, {"temperature": 0.7}),
        (4, 9, torch.float32, {"top_k": 3}),
        (2, 6, torch.float64, {"temperature": 1.8, "top_k": 2}),
        (3, 7, torch.float32, {"top_k": 1}),
        (2, 5, torch.float32, {"top_k": 5}),
        (2, 4, torch.float64, {"top_k": 10, "temperature": 0.5}),
    ]
    for b, v, dtype, kwargs in configs:
        logits = (torch.randn(b, v, generator=g, dtype=torch.float64) * 2).to(dtype).to(device)
        logits[0] += 3.0  # one row far above the others: a top-k over the whole batch shows
        args = ", ".join(f"{k}={val}" for k, val in kwargs.items())
        what = f"next_token_probs(logits of shape ({b}, {v}) {_dtype_name(dtype)}{', ' if args else ''}{args})"
        try:
            seen = observe(
                probes.probe_next_token_probs,
                next_token_probs,
                {"logits": logits, "kwargs": kwargs},
                what,
            )
        except AnswerRaised as err:
            if kwargs.get("top_k", 0) >= v:
                raise CheckError(
                    _(
                        "{error}. A top_k of at least V ({v}) keeps every token: "
                        "skip the masking (topk cannot pick more than V)."
                    ).format(error=err, v=v)
                ) from None
            raise
        expected = _reference_probs(logits, **kwargs)
        probs = seen["probs"]
        check_type(probs, torch.Tensor, what)
        check_shape(probs, (b, v), names="B V", what=what)
        sums = probs.to(torch.float64).sum(-1)
        if bool(sums.isnan().any()) and "top_k" in kwargs:
            raise CheckError(
                _(
                    "{what}: a row came out NaN, every logit in it masked. Keep the top_k largest "
                    "logits of EACH row (topk along dim=-1, each row's own k-th value), not the "
                    "whole batch's."
                ).format(what=what)
            )
        if not torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
            raise CheckError(
                _(
                    "{what}: the rows sum to {sums}, not 1. Mask with -inf "
                    "before the softmax, so that what is kept is renormalised."
                ).format(what=what, sums=sums.tolist())
            )
        try:
            assert_close(probs, expected, what=what)
        except CheckError as err:
            if "top_k" in kwargs and b > 1:
                raise CheckError(
                    _(
                        "{error} Keep the top_k largest logits of EACH row (topk along "
                        "dim=-1, the k-th value per row), not of the whole batch."
                    ).format(error=err)
                ) from None
            raise
        if seen["logits_changed"]:
            raise CheckError(
                _(
                    "{what} changed the caller's logits in place (/=, masked_fill_ or "
                    "an indexed assignment on them): work on a new tensor."
                ).format(what=what)
            )


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
