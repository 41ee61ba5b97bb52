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
    ],
}
