"""Plausible wrong answers for 11_gpt's exercises."""

from autograder.mistakes import Mistake

_LOSS = """def next_token_loss(logits, tokens, ignore_index=-100):
{body}
"""

_EMB = """class GPTEmbedding(nn.Module):
    def __init__(self, vocab_size, context, d_model):
        super().__init__()
        self.context = context
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(context, d_model)

    def forward(self, idx, start=0):
        b, t = idx.shape
{check}{body}
"""
_EMB_CHECK = "        if start + t > self.context:\n            raise ValueError('too long')\n"

_ATTN = """def causal_attention(q, k, v):
    t_q, t_k = q.shape[-2], k.shape[-2]
{body}
"""

_BLOCK = """class Block(nn.Module):
    def __init__(self, d_model, n_heads):
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
        q, k, v = ({split} for z in (q, k, v))
        if past is not None:
{append}
        heads = causal_attention(q, k, v)
{rest}
"""
_APPEND = (
    "            k = torch.cat([past[0], k], dim=2)\n            v = torch.cat([past[1], v], dim=2)"
)
_SPLIT = "z.reshape(b, t, h, c // h).transpose(1, 2)"
_REST = (
    "        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
    "        return x + self.mlp(self.ln2(x)), (k, v)"
)


def _block(split=_SPLIT, append=_APPEND, rest=_REST):
    return _BLOCK.format(split=split, append=append, rest=rest)


_PROBS = """def next_token_probs(logits, temperature=1.0, top_k=None):
{body}
"""

_SAMPLE = """@torch.no_grad()
def sample_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
    logits, past = model({prompt})
    for step in range(max_new_tokens):
        probs = next_token_probs(logits[:, -1], temperature, top_k)
        new = torch.multinomial(probs, 1{gen})
        idx = torch.cat([idx, new], dim=1)
        if step == max_new_tokens - 1:
            break
{refill}
    return idx
"""
_REFILL = (
    "        if past[0][0].shape[2] < model.context:\n"
    "            logits, past = model(new, past)\n"
    "        else:\n"
    "            logits, past = model(idx[:, -model.context:])"
)


def _sample(prompt="idx[:, -model.context:]", gen=", generator=generator", refill=_REFILL):
    return _SAMPLE.format(prompt=prompt, gen=gen, refill=refill)


_EXPORT = """def export_gpt(model, example):
{body}
"""

MISTAKES = {
    "next_token_loss": [
        Mistake(
            name="targets-not-shifted",
            message="Logits at position i were scored against the token at position i, the one "
            "the model is reading: the model learns to copy. Compare logits[:, :-1] with "
            "tokens[:, 1:].",
            code=_LOSS.format(
                body="    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), "
                "tokens.reshape(-1), ignore_index=ignore_index)"
            ),
        ),
        Mistake(
            name="shifted-the-wrong-way",
            message="The shift runs backwards: logits[:, 1:] against tokens[:, :-1] predicts "
            "the previous token. The logits drop their LAST position, the tokens their FIRST.",
            code=_LOSS.format(
                body="    return F.cross_entropy(logits[:, 1:].reshape(-1, logits.shape[-1]), "
                "tokens[:, :-1].reshape(-1), ignore_index=ignore_index)"
            ),
        ),
        Mistake(
            name="classes-not-on-axis-1",
            message="F.cross_entropy takes the classes on axis 1: (N, V) or (B, V, T), not "
            "(B, T, V). Flatten to (B*T, V) or transpose(1, 2).",
            code=_LOSS.format(
                body="    return F.cross_entropy(logits[:, :-1], tokens[:, 1:], "
                "ignore_index=ignore_index)"
            ),
        ),
        Mistake(
            name="ignore-index-not-passed-on",
            message="F.cross_entropy ignores -100 by default, so the default case works, but a "
            "caller's other ignore_index was counted as a class. Pass ignore_index=ignore_index.",
            code=_LOSS.format(
                body="    v = logits.shape[-1]\n"
                "    return F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1))"
            ),
        ),
        Mistake(
            name="mean-of-row-means",
            message="Each row's loss was averaged first, then the rows: a row with few counted "
            "targets weighs as much as a full one. Average over all counted targets at once.",
            code=_LOSS.format(
                body="    rows = [F.cross_entropy(logits[i, :-1], tokens[i, 1:], "
                "ignore_index=ignore_index) for i in range(logits.shape[0])]\n"
                "    return torch.stack(rows).mean()"
            ),
        ),
        Mistake(
            name="padded-targets-flat-view",
            message="logits.view(B * T, V) needs contiguous memory, and a caller's logits may "
            "be a transposed or sliced view: use reshape (or flatten), which copies only when "
            "it must.",
            code=_LOSS.format(
                body="    b, t, v = logits.shape\n"
                "    pad = torch.full((b, 1), ignore_index, dtype=tokens.dtype, device=tokens.device)\n"
                "    targets = torch.cat([tokens[:, 1:], pad], dim=1)  # the last position: no target\n"
                "    return F.cross_entropy(logits.view(b * t, v), targets.view(b * t), "
                "ignore_index=ignore_index)"
            ),
        ),
        Mistake(
            name="padding-made-on-cpu",
            message="torch.full((B, 1), ...) without device= lands on the CPU: with tokens on "
            "a GPU, torch.cat refuses to mix devices. Pass device=tokens.device.",
            code=_LOSS.format(
                body="    b, t, v = logits.shape\n"
                "    pad = torch.full((b, 1), ignore_index, dtype=tokens.dtype)\n"
                "    targets = torch.cat([tokens[:, 1:], pad], dim=1)\n"
                "    return F.cross_entropy(logits.reshape(b * t, v), targets.reshape(b * t), "
                "ignore_index=ignore_index)"
            ),
        ),
        Mistake(
            name="loss-rebuilt-from-item",
            message="torch.tensor(loss.item()) has the right value but no graph: nothing can "
            "be learned from it. Return the tensor F.cross_entropy gives.",
            code=_LOSS.format(
                body="    v = logits.shape[-1]\n"
                "    loss = F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1), "
                "ignore_index=ignore_index)\n"
                "    return torch.tensor(loss.item(), dtype=logits.dtype, device=logits.device)"
            ),
        ),
        Mistake(
            name="stabilised-in-place",
            message="logits -= logits.amax(...) changes the caller's logits: subtract out of "
            "place (F.cross_entropy is stable on its own).",
            code=_LOSS.format(
                body="    v = logits.shape[-1]\n"
                "    with torch.no_grad():\n"
                "        logits -= logits.amax(dim=-1, keepdim=True)\n"
                "    return F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1), "
                "ignore_index=ignore_index)"
            ),
        ),
    ],
    "GPTEmbedding": [
        Mistake(
            name="positions-forgotten",
            message="Only the token embeddings: the model cannot tell 37 from 73. Add "
            "self.pos(positions) for positions start..start+T-1.",
            code=_EMB.format(check=_EMB_CHECK, body="        return self.tok(idx)"),
        ),
        Mistake(
            name="start-ignored",
            message="The positions always start at 0: with a cache the new tokens sit at "
            "start, start+1, ...; use torch.arange(start, start + T).",
            code=_EMB.format(
                check=_EMB_CHECK,
                body="        return self.tok(idx) + self.pos(torch.arange(t, device=idx.device))",
            ),
        ),
        Mistake(
            name="positions-from-token-ids",
            message="self.pos(idx) looks the position table up with the token ids: the "
            "positions are 0..T-1 (plus start), whatever the tokens.",
            code=_EMB.format(check=_EMB_CHECK, body="        return self.tok(idx) + self.pos(idx)"),
        ),
        Mistake(
            name="positions-from-batch-index",
            message="The positions were counted along the batch axis (sample i got position i): "
            "count along axis 1, the sequence.",
            code=_EMB.format(
                check=_EMB_CHECK,
                body="        return self.tok(idx) + self.pos(torch.arange(b, device=idx.device) "
                "+ start)[:, None]",
            ),
        ),
        Mistake(
            name="off-by-one-context-check",
            message="start + T == context still fits (positions end at context - 1); raise "
            "only when start + T > context.",
            code=_EMB.format(
                check="        if start + t >= self.context:\n            raise ValueError('too long')\n",
                body="        return self.tok(idx) + self.pos(torch.arange(start, start + t, "
                "device=idx.device))",
            ),
        ),
        Mistake(
            name="flattened-by-view",
            message="idx.view(-1) needs contiguous memory, and a caller's idx may be a slice or "
            "a transposed view: use reshape (or let nn.Embedding take (B, T) as it is).",
            code=_EMB.format(
                check=_EMB_CHECK,
                body="        flat = self.tok(idx.view(-1)).view(b, t, -1)\n"
                "        return flat + self.pos(torch.arange(start, start + t, device=idx.device))",
            ),
        ),
        Mistake(
            name="position-table-detached",
            message="The position rows were read from self.pos.weight.detach(): the values are "
            "right but the position table never learns. Use self.pos(positions) (or slice "
            "self.pos.weight without detaching).",
            code=_EMB.format(
                check=_EMB_CHECK,
                body="        return self.tok(idx) + self.pos.weight.detach()[start:start + t]",
            ),
        ),
        Mistake(
            name="squeezed-result",
            message=".squeeze() drops every axis of size 1: a batch of one, a single position or "
            "d_model = 1 lose their axis. Return (B, T, d_model) as it is.",
            code=_EMB.format(
                check=_EMB_CHECK,
                body="        out = self.tok(idx) + self.pos(torch.arange(start, start + t, "
                "device=idx.device))\n"
                "        return out.squeeze()",
            ),
        ),
    ],
    "causal_attention": [
        Mistake(
            name="mask-polarity-reversed",
            message="The mask says True = masked out (nn.Transformer's convention), but for "
            "F.scaled_dot_product_attention True means MAY attend: queries saw their future.",
            code=_ATTN.format(
                body="    masked = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device)"
                ".triu(diagonal=1 + t_k - t_q)\n"
                "    return F.scaled_dot_product_attention(q, k, v, attn_mask=masked)"
            ),
        ),
        Mistake(
            name="is-causal-top-left",
            message="is_causal=True aligns the triangle top-left: with fewer queries than keys "
            "(a cache), query i sees keys 0..i only. Use tril(diagonal=T_k - T_q).",
            code=_ATTN.format(
                body="    return F.scaled_dot_product_attention(q, k, v, is_causal=True)"
            ),
        ),
        Mistake(
            name="no-mask",
            message="No causal mask: every position sees the whole sequence, the future included.",
            code=_ATTN.format(body="    return F.scaled_dot_product_attention(q, k, v)"),
        ),
        Mistake(
            name="tril-offset-wrong-sign",
            message="tril(diagonal=T_q - T_k) shifts the triangle the wrong way: the last query "
            "must see every key, so the offset is T_k - T_q.",
            code=_ATTN.format(
                body="    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device)"
                ".tril(diagonal=t_q - t_k)\n"
                "    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)"
            ),
        ),
        Mistake(
            name="scaled-by-v-width",
            message="The scores were divided by sqrt of v's width; the scale is sqrt(D) of q "
            "and k (they can differ from v's).",
            code=_ATTN.format(
                body="    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device)"
                ".tril(diagonal=t_k - t_q)\n"
                "    scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return torch.softmax(scores, dim=-1) @ v"
            ),
        ),
        Mistake(
            name="mask-made-on-cpu",
            message="torch.ones(T_q, T_k) without device= lands on the CPU, so SDPA refuses it "
            "next to q on a GPU: pass device=q.device.",
            code=_ATTN.format(
                body="    mask = torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=t_k - t_q)\n"
                "    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)"
            ),
        ),
        Mistake(
            name="attention-weights-detached",
            message="The attention weights were detached: the values are right but no gradient "
            "reaches q and k, so the model cannot learn where to look.",
            code=_ATTN.format(
                body="    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    weights = scores.masked_fill(~mask, float('-inf')).softmax(dim=-1)\n"
                "    return weights.detach() @ v"
            ),
        ),
    ],
    "Block": [
        Mistake(
            name="post-norm",
            message="The LayerNorms sit on the residual path (post-norm, x = ln(x + f(x))): a "
            "pre-norm block normalises inside the branches only, x = x + f(ln(x)).",
            code=_block(
                rest="        x = self.ln1(x + self.proj(heads.transpose(1, 2).reshape(b, t, c)))\n"
                "        return self.ln2(x + self.mlp(x)), (k, v)"
            ),
        ),
        Mistake(
            name="attention-residual-missing",
            message="The attention branch replaces x instead of being added to it: "
            "x = x + proj(...).",
            code=_block(
                rest="        x = self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)"
            ),
        ),
        Mistake(
            name="cache-not-returned-in-full",
            message="The block returned only the new keys and values: the next call would lose "
            "the cached ones. Return the concatenation.",
            code=_block(
                append="            k_all = torch.cat([past[0], k], dim=2)\n"
                "            v_all = torch.cat([past[1], v], dim=2)\n"
                "            heads = causal_attention(q, k_all, v_all)\n"
                "            x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "            return x + self.mlp(self.ln2(x)), (k, v)"
            ),
        ),
        Mistake(
            name="new-keys-before-cached",
            message="The new keys were put before the cached ones: the cache holds the earlier "
            "positions, so torch.cat([past[0], k]).",
            code=_block(
                append="            k = torch.cat([k, past[0]], dim=2)\n"
                "            v = torch.cat([v, past[1]], dim=2)"
            ),
        ),
        Mistake(
            name="heads-by-view",
            message="z.view(B, H, T, D) cuts the memory of (B, T, C) into heads along the "
            "sequence; reshape to (B, T, H, D) and transpose(1, 2).",
            code=_block(split="z.reshape(b, h, t, c // h)"),
        ),
        Mistake(
            name="cache-detached-before-attention",
            message="k and v were detached before the attention (to keep the cache small): the "
            "values are right, but no gradient flows through the keys and values back to x. "
            "Detach only what you store, not what the attention uses.",
            code=_block(
                rest="        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)"
            ).replace(
                "        heads = causal_attention(q, k, v)",
                "        k, v = k.detach(), v.detach()\n        heads = causal_attention(q, k, v)",
            ),
        ),
        Mistake(
            name="own-attention-mask-on-cpu",
            message="The causal mask was made with torch.ones(T_q, T_k) without device=: on a "
            "GPU it sits on the CPU next to scores on the GPU. Pass device=x.device (or call "
            "causal_attention).",
            code=_block().replace(
                "        heads = causal_attention(q, k, v)",
                "        t_k = k.shape[2]\n"
                "        scores = q @ k.transpose(-2, -1) / math.sqrt(c // h)\n"
                "        mask = torch.ones(t, t_k, dtype=torch.bool).tril(diagonal=t_k - t)\n"
                "        heads = scores.masked_fill(~mask, float('-inf')).softmax(-1) @ v",
            ),
        ),
        Mistake(
            name="additive-mask-in-float32",
            message="An additive mask made with torch.zeros(T_q, T_k) is float32: added to "
            "half-precision scores it turns them float32, and the product with v fails. Make it "
            "in the scores' dtype (dtype=scores.dtype) or use a boolean mask.",
            code=_block().replace(
                "        heads = causal_attention(q, k, v)",
                "        t_k = k.shape[2]\n"
                "        scores = q @ k.transpose(-2, -1) / math.sqrt(c // h)\n"
                "        bias = torch.zeros(t, t_k, device=x.device).masked_fill(\n"
                "            torch.ones(t, t_k, dtype=torch.bool, device=x.device).triu(t_k - t + 1),"
                " float('-inf'))\n"
                "        heads = (scores + bias).softmax(-1) @ v",
            ),
        ),
        Mistake(
            name="x-flattened-by-view",
            message="x.view(B * T, C) needs contiguous memory, and a caller's x may be a slice "
            "or a transposed view: use reshape, or let the LayerNorm and Linear take (B, T, C).",
            code=_block().replace(
                "        q, k, v = self.qkv(self.ln1(x)).split(c, dim=-1)",
                "        flat = self.qkv(self.ln1(x.view(b * t, c))).reshape(b, t, 3 * c)\n"
                "        q, k, v = flat.split(c, dim=-1)",
            ),
        ),
        Mistake(
            name="residual-added-in-place",
            message="x += ... adds the branch into the caller's tensor: their x is changed. "
            "Write x = x + proj(...), a new tensor.",
            code=_block(
                rest="        x += self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)"
            ),
        ),
        Mistake(
            name="ln1-reused-for-mlp",
            message="The MLP branch normalised with ln1: each branch has its own LayerNorm "
            "(ln2 for the MLP), with its own weights.",
            code=_block(
                rest="        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln1(x)), (k, v)"
            ),
        ),
    ],
    "next_token_probs": [
        Mistake(
            name="temperature-not-applied",
            message="The logits were not divided by the temperature: the knob does nothing. "
            "softmax(logits / temperature).",
            code=_PROBS.format(
                body="    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
        Mistake(
            name="top-k-after-softmax-not-renormalised",
            message="Top-k zeroed probabilities after the softmax, and what was kept no longer "
            "sums to 1. Mask the logits with -inf before the softmax (or renormalise).",
            code=_PROBS.format(
                body="    probs = F.softmax(logits / temperature, dim=-1)\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = probs.topk(top_k, dim=-1).values[:, -1:]\n"
                "        probs = probs * (probs >= kth)\n"
                "    return probs"
            ),
        ),
        Mistake(
            name="temperature-multiplied",
            message="The logits were multiplied by the temperature: it works backwards. Divide.",
            code=_PROBS.format(
                body="    logits = logits * temperature\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
        Mistake(
            name="top-k-over-the-whole-batch",
            message="The k-th largest logit was taken over the whole batch, not per row: rows "
            "with lower logits lose tokens they should keep. topk along dim=-1.",
            code=_PROBS.format(
                body="    logits = logits / temperature\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.flatten().topk(top_k).values[-1]\n"
                "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
        Mistake(
            name="top-k-not-clamped",
            message="A top_k at least V must keep everything; topk(k) with k > V raises.",
            code=_PROBS.format(
                body="    logits = logits / temperature\n"
                "    if top_k is not None:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
        Mistake(
            name="caller-logits-changed-in-place",
            message="The caller's logits were changed in place (masked_fill_ / indexed "
            "assignment): work on a new tensor.",
            code=_PROBS.format(
                body="    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits.masked_fill_(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits / temperature, dim=-1)"
            ),
        ),
        Mistake(
            name="mask-made-on-cpu",
            message="torch.full(logits.shape, -inf) without device= lands on the CPU: build "
            "it with torch.full_like(logits, float('-inf')).",
            code=_PROBS.format(
                body="    scaled = logits / temperature\n"
                "    if top_k is not None and top_k < scaled.shape[-1]:\n"
                "        values, where = scaled.topk(top_k, dim=-1)\n"
                "        scaled = torch.full(scaled.shape, float('-inf'), dtype=scaled.dtype)"
                ".scatter(-1, where, values)\n"
                "    return F.softmax(scaled, dim=-1)"
            ),
        ),
        Mistake(
            name="softmax-in-float32",
            message="softmax(logits.float()) turns half-precision logits into float32 "
            "probabilities: keep the logits' dtype.",
            code=_PROBS.format(
                body="    logits = logits.float() / temperature\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
    ],
    "sample_cached": [
        Mistake(
            name="cache-not-truncated",
            message="The cache kept growing past the context: the next token needs a position "
            "the table does not have. Once it holds `context` positions, drop it and run the "
            "last `context` tokens without it.",
            code=_sample(refill="        logits, past = model(new, past)"),
        ),
        Mistake(
            name="cache-slid-instead-of-rebuilt",
            message="The oldest position was dropped from the cache, but every cached key was "
            "computed at its old position: the tokens differ from sampling without a cache. "
            "Rebuild the cache from the last `context` tokens.",
            code=_sample(
                refill="        if past[0][0].shape[2] >= model.context:\n"
                "            past = [(k[:, :, 1:], v[:, :, 1:]) for k, v in past]\n"
                "        logits, past = model(new, past)"
            ),
        ),
        Mistake(
            name="generator-not-used",
            message="torch.multinomial drew from the global RNG, not the generator given: the "
            "run is not reproducible and differs from sample(). Pass generator=generator.",
            code=_sample(gen=""),
        ),
        Mistake(
            name="prompt-not-cropped",
            message="The first call read the whole prompt; a prompt longer than the context "
            "needs positions that do not exist. Read idx[:, -model.context:].",
            code=_sample(prompt="idx"),
        ),
        Mistake(
            name="no-cache-used",
            message="The right tokens, but the whole window was recomputed at every step: keep "
            "`present` and pass it as `past` with the new token alone.",
            code=_sample(refill="        logits, past = model(idx[:, -model.context:])"),
        ),
        Mistake(
            name="sampled-with-gradients",
            message="Without torch.no_grad() every call records a graph that nobody "
            "differentiates: memory grows with each token. Decorate with @torch.no_grad().",
            code=_sample().replace("@torch.no_grad()\n", ""),
        ),
        Mistake(
            name="first-token-before-the-loop",
            message="The first token was drawn before the loop, so max_new_tokens=0 still "
            "appends one: draw every token inside the loop.",
            code=(
                "@torch.no_grad()\n"
                "def sample_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None,\n"
                "                  generator=None):\n"
                "    logits, past = model(idx[:, -model.context:])\n"
                "    probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "    idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], 1)\n"
                "    for _ in range(max_new_tokens - 1):\n"
                "        if past[0][0].shape[2] < model.context:\n"
                "            logits, past = model(idx[:, -1:], past)\n"
                "        else:\n"
                "            logits, past = model(idx[:, -model.context:])\n"
                "        probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "        idx = torch.cat([idx, torch.multinomial(probs, 1, generator=generator)], 1)\n"
                "    return idx\n"
            ),
        ),
        Mistake(
            name="squeezed-probabilities",
            message="probs.squeeze() drops the batch axis of a batch of one: multinomial then "
            "returns (1,), not (1, 1), and torch.cat fails. Keep (B, V) and draw (B, 1).",
            code=_sample().replace(
                "torch.multinomial(probs, 1, generator=generator)",
                "torch.multinomial(probs.squeeze(), 1, generator=generator)",
            ),
        ),
    ],
    "export_gpt": [
        Mistake(
            name="static-sequence-length",
            message="Without dynamic_shapes the program accepts only the example's length. "
            "Pass dynamic_shapes={'idx': {1: Dim('T', max=model.context)}}.",
            code=_EXPORT.format(body="    return torch.export.export(model, (example,))"),
        ),
        Mistake(
            name="dim-without-max",
            message="Dim('T') without max: the model raises past its context, so export "
            "refuses an unbounded length. Give max=model.context.",
            code=_EXPORT.format(
                body="    return torch.export.export(model, (example,), "
                "dynamic_shapes={'idx': {1: Dim('T')}})"
            ),
        ),
        Mistake(
            name="returns-the-module",
            message="ep.module() is a GraphModule; the exercise asks for the ExportedProgram "
            "itself (it can be saved, inspected and turned into a module by the caller).",
            code=_EXPORT.format(
                body="    seq = Dim('T', min=1, max=model.context)\n"
                "    return torch.export.export(model, (example,), "
                "dynamic_shapes={'idx': {1: seq}}).module()"
            ),
        ),
        Mistake(
            name="context-hard-coded",
            message="The length's bound was the lesson's LINE, not model.context: another "
            "model's program cannot take its own full context.",
            code=_EXPORT.format(
                body="    seq = Dim('T', min=1, max=LINE)\n"
                "    return torch.export.export(model, (example,), "
                "dynamic_shapes={'idx': {1: seq}})"
            ),
        ),
        Mistake(
            name="mode-changed",
            message="The model was put in eval mode and left there: the caller's mode is "
            "theirs. Export as it is (or restore the mode afterwards).",
            code=_EXPORT.format(
                body="    model.eval()\n"
                "    seq = Dim('T', min=1, max=model.context)\n"
                "    return torch.export.export(model, (example,), "
                "dynamic_shapes={'idx': {1: seq}})"
            ),
        ),
    ],
}
