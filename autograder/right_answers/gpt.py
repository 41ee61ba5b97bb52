"""Right answers to 11_gpt's exercises, written differently from the solution."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "next_token_loss": [
        RightAnswer(
            name="log-softmax-gather-and-mask",
            why="log_softmax and gather by hand, with an explicit mask of the counted targets "
            "and a division by their count",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens[:, 1:]\n"
                "    keep = targets != ignore_index\n"
                "    log_probs = logits[:, :-1].log_softmax(dim=-1)\n"
                "    picked = log_probs.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)\n"
                "    return -(picked * keep).sum() / keep.sum()\n"
            ),
        ),
        RightAnswer(
            name="transposed-classes",
            why="keeps (B, V, T-1) for F.cross_entropy instead of flattening",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    return F.cross_entropy(logits[:, :-1].transpose(1, 2), tokens[:, 1:],\n"
                "                           ignore_index=ignore_index)\n"
            ),
        ),
        RightAnswer(
            name="remapped-to-default-ignore",
            why="maps the caller's ignore_index to -100 and uses F.nll_loss on log_softmax, "
            "flattened with flatten(0, 1)",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens[:, 1:].masked_fill(tokens[:, 1:] == ignore_index, -100)\n"
                "    return F.nll_loss(logits[:, :-1].log_softmax(-1).flatten(0, 1), targets.flatten())\n"
            ),
        ),
        RightAnswer(
            name="nanmean",
            why="gathers the target log-probabilities with torch.where for the ignored ones and "
            "averages the kept ones by boolean indexing",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens[:, 1:]\n"
                "    keep = targets != ignore_index\n"
                "    nll = -logits[:, :-1].log_softmax(-1).gather(-1, torch.where(keep, targets, 0)[..., None])[..., 0]\n"
                "    return nll[keep].mean()\n"
            ),
        ),
        RightAnswer(
            name="logsumexp-minus-chosen-boolean-index",
            why="the loss as logsumexp minus the chosen logit, the counted positions picked by "
            "boolean indexing and averaged with mean()",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    x, targets = logits[:, :-1], tokens[:, 1:]\n"
                "    keep = targets != ignore_index\n"
                "    safe = targets.where(keep, torch.zeros_like(targets))\n"
                "    chosen = x.gather(-1, safe.unsqueeze(-1)).squeeze(-1)\n"
                "    return (torch.logsumexp(x, dim=-1) - chosen)[keep].mean()\n"
            ),
        ),
        RightAnswer(
            name="rolled-targets-last-ignored",
            why="the targets made by rolling the tokens one step left (a copy) with the last "
            "position set to ignore_index, and every logit kept",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens.roll(-1, dims=1)\n"
                "    targets[:, -1] = ignore_index\n"
                "    return F.cross_entropy(logits.transpose(1, 2), targets, "
                "ignore_index=ignore_index)\n"
            ),
        ),
    ],
    "GPTEmbedding": [
        RightAnswer(
            name="slice-of-the-table",
            why="slices the position table's weight instead of looking positions up, and "
            "checks the length first",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok, self.pos = nn.Embedding(vocab_size, d_model), nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        end = start + idx.size(1)\n"
                "        if end > self.context:\n"
                "            raise ValueError(f'{end} positions, context {self.context}')\n"
                "        return self.tok(idx) + self.pos.weight[start:end].unsqueeze(0)\n"
            ),
        ),
        RightAnswer(
            name="position-table-registered-first",
            why="registers pos before tok (the text names them, not their order) and adds the "
            "positions as an arange broadcast over the batch",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.context = context\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        if start + idx.shape[-1] > self.context:\n"
                "            raise ValueError(f'{start} + {idx.shape[-1]} > {self.context}')\n"
                "        where = torch.arange(idx.shape[-1], device=idx.device) + start\n"
                "        return self.pos(where)[None] + self.tok(idx)\n"
            ),
        ),
        RightAnswer(
            name="functional-lookups",
            why="F.embedding on both weights, the positions expanded to idx's shape, the length "
            "checked against the table's num_embeddings",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.pos.num_embeddings:\n"
                '            raise ValueError(f"positions {start}..{start + t - 1} need more than {self.context} rows")\n'
                "        where = torch.arange(start, start + t, device=idx.device).expand_as(idx)\n"
                "        return F.embedding(idx, self.tok.weight) + F.embedding(where, self.pos.weight)\n"
            ),
        ),
        RightAnswer(
            name="positions-in-a-buffer",
            why="keeps arange(context) in a non-persistent buffer (it moves with the module) and "
            "slices it",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                '        self.register_buffer("positions", torch.arange(context), persistent=False)\n'
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(self.positions[start:start + t])\n"
            ),
        ),
        RightAnswer(
            name="cpu-positions-moved",
            why="makes the positions on the CPU and moves them to idx's device with .to (the "
            "meta check must not take the move for a mix of devices)",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t).to(idx.device))\n"
            ),
        ),
        RightAnswer(
            name="slice-first-checked-by-its-length",
            why="slices the position table (a slice past the end is short, never an index out "
            "of range) and raises ValueError when the slice has fewer than T rows; no lookup "
            "out of range happens",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        rows = self.pos.weight[start:start + t]\n"
                "        if rows.shape[0] < t:\n"
                "            raise ValueError(f'start {start} + T {t} > context {self.context}')\n"
                "        return self.tok(idx) + rows\n"
            ),
        ),
        RightAnswer(
            name="token-lookup-before-the-check",
            why="looks the tokens up first (their ids are in range) and checks the positions "
            "before the position table is read",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        x = self.tok(idx)\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'positions up to {start + t - 1}, context {self.context}')\n"
                "        return x + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
    ],
    "causal_attention": [
        RightAnswer(
            name="by-hand-with-minus-inf",
            why="matrix products and a softmax, the mask built from index comparisons",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    rows = torch.arange(t_q, device=q.device)[:, None] + (t_k - t_q)\n"
                "    cols = torch.arange(t_k, device=q.device)[None, :]\n"
                "    scores = torch.einsum('...qd,...kd->...qk', q, k) / q.shape[-1] ** 0.5\n"
                "    scores = scores.masked_fill(cols > rows, float('-inf'))\n"
                "    return scores.softmax(dim=-1) @ v\n"
            ),
        ),
        RightAnswer(
            name="float-mask",
            why="an additive float mask (0 and -inf) for SDPA instead of a bool one",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    bias = torch.full((t_q, t_k), float('-inf'), dtype=q.dtype, device=q.device)\n"
                "    bias = bias.triu(diagonal=t_k - t_q + 1)\n"
                "    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)\n"
            ),
        ),
        RightAnswer(
            name="rows-of-the-square-mask",
            why="takes the last T_q rows of the square T_k x T_k lower triangle as SDPA's bool "
            "mask",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.size(-2), k.size(-2)\n"
                "    square = torch.ones(t_k, t_k, dtype=torch.bool, device=q.device).tril()\n"
                "    return F.scaled_dot_product_attention(q, k, v, attn_mask=square[t_k - t_q:])\n"
            ),
        ),
        RightAnswer(
            name="softmax-at-least-float32",
            why="by hand in at least float32 (half inputs promoted), positions compared for the "
            "mask, cast back to the inputs' dtype",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    work = torch.promote_types(q.dtype, torch.float32)\n"
                "    scores = q.to(work) @ k.to(work).mT * q.shape[-1] ** -0.5\n"
                "    pos_q = torch.arange(t_k - t_q, t_k, device=q.device)\n"
                "    pos_k = torch.arange(t_k, device=q.device)\n"
                "    scores = scores.masked_fill(pos_k[None, :] > pos_q[:, None], float('-inf'))\n"
                "    return (scores.softmax(-1) @ v.to(work)).to(q.dtype)\n"
            ),
        ),
        RightAnswer(
            name="einsum-with-triu-mask",
            why="einsum for both products and the masked-out triangle built with triu "
            "(True = hidden), filled with -inf",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    s = torch.einsum('...qd,...kd->...qk', q, k) / math.sqrt(q.shape[-1])\n"
                "    hidden = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device)"
                ".triu(diagonal=t_k - t_q + 1)\n"
                "    w = torch.softmax(s.masked_fill(hidden, float('-inf')), dim=-1)\n"
                "    return torch.einsum('...qk,...kd->...qd', w, v)\n"
            ),
        ),
        RightAnswer(
            name="float64-inside-cast-back",
            why="computes the scores and the softmax in float64 and casts the result back to "
            "the inputs' dtype",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    keep = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(t_k - t_q)\n"
                "    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    weights = scores.masked_fill(~keep, float('-inf')).softmax(-1)\n"
                "    return (weights @ v.double()).to(q.dtype)\n"
            ),
        ),
    ],
    "Block": [
        RightAnswer(
            name="chunk-unflatten-and-own-attention",
            why="chunk and unflatten for the heads, attention written out with einsum, cache "
            "appended with torch.cat on the last-but-one axis",
            code=(
                "class Block(nn.Module):\n"
                "    def __init__(self, d_model, n_heads):\n"
                "        super().__init__()\n"
                "        self.n_heads = n_heads\n"
                "        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)\n"
                "        self.qkv = nn.Linear(d_model, 3 * d_model)\n"
                "        self.proj = nn.Linear(d_model, d_model)\n"
                "        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),\n"
                "                                 nn.Linear(4 * d_model, d_model))\n"
                "\n"
                "    def forward(self, x, past=None):\n"
                "        q, k, v = (z.unflatten(-1, (self.n_heads, -1)).transpose(1, 2)\n"
                "                   for z in self.qkv(self.ln1(x)).chunk(3, dim=-1))\n"
                "        if past is not None:\n"
                "            k, v = torch.cat((past[0], k), -2), torch.cat((past[1], v), -2)\n"
                "        t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "        scores = torch.einsum('bhqd,bhkd->bhqk', q, k) / math.sqrt(q.shape[-1])\n"
                "        future = torch.ones(t_q, t_k, dtype=torch.bool, device=x.device).triu(t_k - t_q + 1)\n"
                "        weights = scores.masked_fill(future, float('-inf')).softmax(-1)\n"
                "        merged = (weights @ v).transpose(1, 2).flatten(2)\n"
                "        x = x + self.proj(merged)\n"
                "        x = x + self.mlp(self.ln2(x))\n"
                "        return x, (k, v)\n"
            ),
        ),
        RightAnswer(
            name="cache-returned-detached",
            why="returns the cache detached (the text asks nothing of its gradients); y keeps its"
            " whole graph",
            code=(
                "class Block(nn.Module):\n"
                "    def __init__(self, d_model, n_heads):\n"
                "        super().__init__()\n"
                "        self.n_heads = n_heads\n"
                "        self.ln1 = nn.LayerNorm(d_model)\n"
                "        self.qkv = nn.Linear(d_model, 3 * d_model)\n"
                "        self.proj = nn.Linear(d_model, d_model)\n"
                "        self.ln2 = nn.LayerNorm(d_model)\n"
                "        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))\n"
                "\n"
                "    def forward(self, x, past=None):\n"
                "        b, t, c = x.shape\n"
                "        h = self.n_heads\n"
                "        d = c // h\n"
                "        q, k, v = self.qkv(self.ln1(x)).split(c, dim=-1)\n"
                "        q, k, v = (z.reshape(b, t, h, d).transpose(1, 2) for z in (q, k, v))\n"
                "        if past is not None:\n"
                "            k = torch.cat([past[0], k], dim=2)\n"
                "            v = torch.cat([past[1], v], dim=2)\n"
                "        heads = causal_attention(q, k, v)\n"
                "        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k.detach(), v.detach())\n"
            ),
        ),
        RightAnswer(
            name="five-d-permute",
            why="splits qkv with one view(B, T, 3, H, D).permute(2, 0, 3, 1, 4) and merges with "
            "permute and reshape",
            code=(
                "class Block(nn.Module):\n"
                "    def __init__(self, d_model, n_heads):\n"
                "        super().__init__()\n"
                "        self.n_heads = n_heads\n"
                "        self.ln1 = nn.LayerNorm(d_model)\n"
                "        self.qkv = nn.Linear(d_model, 3 * d_model)\n"
                "        self.proj = nn.Linear(d_model, d_model)\n"
                "        self.ln2 = nn.LayerNorm(d_model)\n"
                "        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))\n"
                "\n"
                "    def forward(self, x, past=None):\n"
                "        b, t, c = x.shape\n"
                "        h = self.n_heads\n"
                "        d = c // h\n"
                "        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, h, d).permute(2, 0, 3, 1, 4)\n"
                "        if past is not None:\n"
                "            k = torch.cat([past[0], k], dim=2)\n"
                "            v = torch.cat([past[1], v], dim=2)\n"
                "        heads = causal_attention(q, k, v)\n"
                "        merged = heads.permute(0, 2, 1, 3).reshape(b, t, c)\n"
                "        x = x + self.proj(merged)\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
    ],
    "next_token_probs": [
        RightAnswer(
            name="scatter-the-top-k",
            why="builds a -inf tensor and scatters the top-k values into it, clamps k with min",
            code=(
                "def next_token_probs(logits, temperature=1.0, top_k=None):\n"
                "    scaled = logits / temperature\n"
                "    if top_k:\n"
                "        values, where = scaled.topk(min(top_k, scaled.shape[-1]), dim=-1)\n"
                "        scaled = torch.full_like(scaled, float('-inf')).scatter(-1, where, values)\n"
                "    return scaled.softmax(-1)\n"
            ),
        ),
        RightAnswer(
            name="sorted-threshold-and-own-softmax",
            why="the k-th value read from a descending sort, torch.where with a -inf tensor, and "
            "a softmax written out with each row's max subtracted",
            code=(
                "def next_token_probs(logits, temperature=1.0, top_k=None):\n"
                "    z = logits.div(temperature)\n"
                "    if top_k is not None and top_k < z.size(-1):\n"
                "        kth = z.sort(dim=-1, descending=True).values[..., top_k - 1, None]\n"
                "        z = torch.where(z >= kth, z, torch.full_like(z, -torch.inf))\n"
                "    e = (z - z.amax(dim=-1, keepdim=True)).exp()\n"
                "    return e / e.sum(dim=-1, keepdim=True)\n"
            ),
        ),
        RightAnswer(
            name="softmax-in-float32-cast-back",
            why="masks with the dtype's most negative finite value and takes the softmax in "
            "float32, cast back to the logits' dtype (float64 logits lose digits they do not "
            "need)",
            code=(
                "def next_token_probs(logits, temperature=1.0, top_k=None):\n"
                "    z = logits / temperature\n"
                "    if top_k is not None and top_k < z.shape[-1]:\n"
                "        kth = z.topk(top_k, dim=-1).values[:, -1:]\n"
                "        z = torch.where(z < kth, torch.finfo(z.dtype).min, z)\n"
                "    return F.softmax(z, dim=-1, dtype=torch.float32).to(logits.dtype)\n"
            ),
        ),
        RightAnswer(
            name="top-k-after-softmax-renormalised",
            why="the top k kept after the softmax and the row renormalised: the same "
            "distribution as masking the logits before it",
            code=(
                "def next_token_probs(logits, temperature=1.0, top_k=None):\n"
                "    probs = torch.softmax(logits / temperature, dim=-1)\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = probs.topk(top_k, dim=-1).values[..., -1:]\n"
                "        probs = probs * (probs >= kth)\n"
                "        probs = probs / probs.sum(-1, keepdim=True)\n"
                "    return probs\n"
            ),
        ),
        RightAnswer(
            name="kthvalue-on-a-clone",
            why="the k-th largest found with kthvalue from below, top_k clamped to V with min, "
            "and the mask written in place into its own copy",
            code=(
                "def next_token_probs(logits, temperature=1.0, top_k=None):\n"
                "    x = logits.clone() / temperature\n"
                "    if top_k is not None:\n"
                "        k = min(top_k, x.shape[-1])\n"
                "        kth = torch.kthvalue(x, x.shape[-1] - k + 1, dim=-1, keepdim=True).values\n"
                "        x[x < kth] = -float('inf')\n"
                "    return torch.nn.functional.softmax(x, dim=-1)\n"
            ),
        ),
    ],
    "sample_cached": [
        RightAnswer(
            name="cache-length-tracked-by-hand",
            why="counts the cached positions itself and resets the cache to None, feeding the "
            "window whenever there is no cache",
            code=(
                "def sample_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None,\n"
                "                  generator=None):\n"
                "    past, cached, feed = None, 0, idx[:, -model.context:]\n"
                "    with torch.no_grad():\n"
                "        for _ in range(max_new_tokens):\n"
                "            logits, past = model(feed, past)\n"
                "            cached += feed.shape[1]\n"
                "            probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "            token = torch.multinomial(probs, num_samples=1, generator=generator)\n"
                "            idx = torch.cat((idx, token), dim=1)\n"
                "            if cached < model.context:\n"
                "                feed = token\n"
                "            else:\n"
                "                past, cached, feed = None, 0, idx[:, -model.context:]\n"
                "    return idx\n"
            ),
        ),
        RightAnswer(
            name="preallocated-output-one-call-ahead",
            why="writes into a preallocated (B, T + N) tensor, runs under inference_mode, and "
            "calls the model after every draw (the last call's logits go unused)",
            code=(
                "def sample_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None,\n"
                "                  generator=None):\n"
                "    b, t = idx.shape\n"
                "    out = idx.new_empty(b, t + max_new_tokens)\n"
                "    out[:, :t] = idx\n"
                "    with torch.inference_mode():\n"
                "        logits, cache = model(idx[:, -model.context:])\n"
                "        n = t\n"
                "        while n < t + max_new_tokens:\n"
                "            probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "            out[:, n:n + 1] = torch.multinomial(probs, 1, generator=generator)\n"
                "            n += 1\n"
                "            if cache[0][0].size(-2) >= model.context:\n"
                "                logits, cache = model(out[:, max(0, n - model.context):n])\n"
                "            else:\n"
                "                logits, cache = model(out[:, n - 1:n], cache)\n"
                "    return out\n"
            ),
        ),
        RightAnswer(
            name="window-kept-apart-tokens-in-a-list",
            why="keeps the model's window apart from the result, gathers the new tokens in a "
            "list and concatenates once, under a no_grad block instead of the decorator",
            code=(
                "def sample_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None,\n"
                "                  generator=None):\n"
                "    with torch.no_grad():\n"
                "        new = []\n"
                "        window = idx[:, -model.context:]\n"
                "        logits, past = model(window)\n"
                "        for step in range(max_new_tokens):\n"
                "            probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "            t = torch.multinomial(probs, num_samples=1, generator=generator)\n"
                "            new.append(t)\n"
                "            window = torch.cat([window, t], dim=1)\n"
                "            if step == max_new_tokens - 1:\n"
                "                break\n"
                "            if past[0][0].size(2) < model.context:\n"
                "                logits, past = model(t, past=past)\n"
                "            else:\n"
                "                window = window[:, -model.context:]\n"
                "                logits, past = model(window)\n"
                "        return torch.cat([idx, *new], dim=1)\n"
            ),
        ),
        RightAnswer(
            name="one-model-call-per-step-feed-variable",
            why="one model call at the top of every step, on either the new token with the "
            "cache or the last context tokens with past=None",
            code=(
                "@torch.no_grad()\n"
                "def sample_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None,\n"
                "                  generator=None):\n"
                "    feed, past = idx[:, -model.context:], None\n"
                "    for _ in range(max_new_tokens):\n"
                "        logits, past = model(feed, past)\n"
                "        probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "        new = torch.multinomial(probs, 1, generator=generator)\n"
                "        idx = torch.cat([idx, new], dim=1)\n"
                "        if past[0][0].shape[2] < model.context:\n"
                "            feed = new\n"
                "        else:\n"
                "            feed, past = idx[:, -model.context:], None\n"
                "    return idx\n"
            ),
        ),
    ],
    "export_gpt": [
        RightAnswer(
            name="dim-dynamic-as-a-tuple",
            why="Dim.DYNAMIC given by position (a tuple) instead of by name; export finds the "
            "bound itself from the model's check",
            code=(
                "def export_gpt(model, example):\n"
                "    return torch.export.export(model, (example,), dynamic_shapes=({1: Dim.DYNAMIC},))\n"
            ),
        ),
        RightAnswer(
            name="shape-tuple-per-axis",
            why="the dynamic shape as a tuple with one entry per axis (Dim.STATIC for the batch), "
            "in a list matching the positional arguments, the Dim built with torch.export.Dim",
            code=(
                "def export_gpt(model, example):\n"
                "    length = torch.export.Dim('length', min=1, max=model.context)\n"
                "    return torch.export.export(model, args=(example,),\n"
                "                               dynamic_shapes=[(Dim.STATIC, length)])\n"
            ),
        ),
        RightAnswer(
            name="model-to-the-example-device",
            why="moves the model to the example's device first (where it already is: nothing "
            "changes) and imports export and Dim by name",
            code=(
                "def export_gpt(model, example):\n"
                "    from torch.export import Dim, export\n"
                "    model = model.to(example.device)\n"
                "    seq = Dim('T', min=1, max=model.context)\n"
                "    return export(model, (example,), dynamic_shapes={'idx': {1: seq}})\n"
            ),
        ),
        RightAnswer(
            name="under-no-grad-non-strict-decomposed",
            why="exports under torch.no_grad() with strict=False and returns the program "
            "after run_decompositions()",
            code=(
                "def export_gpt(model, example):\n"
                "    seq = Dim('seq', min=1, max=model.context)\n"
                "    with torch.no_grad():\n"
                "        program = torch.export.export(model, (example,), "
                "dynamic_shapes=({1: seq},), strict=False)\n"
                "    return program.run_decompositions()\n"
            ),
        ),
    ],
}
