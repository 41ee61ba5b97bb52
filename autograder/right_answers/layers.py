"""Right answers to 04_layers' exercises, written differently from the solution."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "conv_output_size": [
        RightAnswer(
            name="math-floor",
            why="floors a true division and rejects an output of fewer than one position",
            code=(
                "import math\n"
                "def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):\n"
                "    out = math.floor(\n"
                "        (size + 2 * padding - dilation * (kernel_size - 1) - 1) / stride + 1\n"
                "    )\n"
                "    if out < 1:\n"
                "        raise ValueError(f'no output position: the kernel is too wide for {size}')\n"
                "    return out\n"
            ),
        ),
        RightAnswer(
            name="measured-with-a-real-layer",
            why="asks a real Conv1d, and turns its refusal into the ValueError asked for",
            code=(
                "def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):\n"
                "    conv = torch.nn.Conv1d(\n"
                "        1, 1, kernel_size, stride=stride, padding=padding, dilation=dilation\n"
                "    )\n"
                "    try:\n"
                "        with torch.no_grad():\n"
                "            return conv(torch.zeros(1, 1, size)).shape[-1]\n"
                "    except RuntimeError as err:\n"
                "        raise ValueError(str(err)) from err\n"
            ),
        ),
        RightAnswer(
            name="divmod-of-the-room",
            why="the room left for the kernel, divided with divmod; a negative room raises",
            code=(
                "def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):\n"
                "    room = size + 2 * padding - (dilation * (kernel_size - 1) + 1)\n"
                "    if room < 0:\n"
                '        raise ValueError(f"a kernel spanning {dilation * (kernel_size - 1) + 1} does not fit in {size + 2 * padding}")\n'
                "    steps, _ = divmod(room, stride)\n"
                "    return steps + 1\n"
            ),
        ),
    ],
    "receptive_field": [
        RightAnswer(
            name="backwards-from-the-output",
            why="walks from the output to the input: each layer maps a field of r positions "
            "to (r - 1) * stride + kernel_size",
            code=(
                "def receptive_field(layers):\n"
                "    field = 1\n"
                "    for kernel_size, stride in reversed(layers):\n"
                "        field = (field - 1) * stride + kernel_size\n"
                "    return field\n"
            ),
        ),
        RightAnswer(
            name="closed-form-with-math-prod",
            why="the sum over layers of (k - 1) times the product of the earlier strides",
            code=(
                "import math\n"
                "def receptive_field(layers):\n"
                "    strides = [s for _, s in layers]\n"
                "    return 1 + sum(\n"
                "        (k - 1) * math.prod(strides[:i]) for i, (k, _) in enumerate(layers)\n"
                "    )\n"
            ),
        ),
        RightAnswer(
            name="recursive-from-the-first-layer",
            why="the first layer's kernel plus the rest's field, minus one, times the first stride, "
            "recursively",
            code=(
                "def receptive_field(layers):\n"
                "    if not layers:\n"
                "        return 1\n"
                "    (k, s), rest = layers[0], layers[1:]\n"
                "    return k + (receptive_field(rest) - 1) * s\n"
            ),
        ),
        RightAnswer(
            name="input-positions-enumerated",
            why="walks back from one output position and collects the set of input positions it "
            "reads, then measures first to last",
            code=(
                "def receptive_field(layers):\n"
                "    positions = {0}\n"
                "    for k, s in reversed(layers):\n"
                "        positions = {p * s + i for p in positions for i in range(k)}\n"
                "    return max(positions) - min(positions) + 1\n"
            ),
        ),
    ],
    "batch_norm": [
        RightAnswer(
            name="var-mean-keepdim-and-lerp",
            why="keeps the reduced axes (keepdim) so the statistics broadcast without a view, "
            "and moves the running statistics with torch.lerp",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training,\n"
                "               momentum=0.1, eps=1e-5):\n"
                "    dims = (0, *range(2, x.ndim))\n"
                "    shape = (1, -1) + (1,) * (x.ndim - 2)\n"
                "    if training:\n"
                "        var, mean = torch.var_mean(x, dim=dims, keepdim=True, correction=0)\n"
                "        n = x.numel() / x.shape[1]\n"
                "        batch_mean = mean.detach().flatten()\n"
                "        batch_var = var.detach().flatten() * n / (n - 1)\n"
                "        new_mean = torch.lerp(running_mean, batch_mean, momentum)\n"
                "        new_var = torch.lerp(running_var, batch_var, momentum)\n"
                "    else:\n"
                "        mean, var = running_mean.reshape(shape), running_var.reshape(shape)\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = (x - mean) / (var + eps).sqrt()\n"
                "    if weight is not None:\n"
                "        y = y * weight.reshape(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.reshape(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        RightAnswer(
            name="channels-last-flattened",
            why="moves the channels last, flattens the rest, uses var_mean and rsqrt",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training,\n"
                "               momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    flat = x.movedim(1, -1).reshape(-1, c)  # (everything else, C)\n"
                "    if training:\n"
                "        var, mean = torch.var_mean(flat, dim=0, unbiased=False)\n"
                "        n = flat.shape[0]\n"
                "        new_mean = running_mean + momentum * (mean.detach() - running_mean)\n"
                "        unbiased = var.detach() * n / (n - 1)\n"
                "        new_var = running_var + momentum * (unbiased - running_var)\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = (flat - mean) * torch.rsqrt(var + eps)\n"
                "    if weight is not None:\n"
                "        y = y * weight\n"
                "    if bias is not None:\n"
                "        y = y + bias\n"
                "    shape = list(x.shape)\n"
                "    shape.append(shape.pop(1))\n"
                "    return y.reshape(shape).movedim(-1, 1), new_mean, new_var\n"
            ),
        ),
        RightAnswer(
            name="channels-first-sum-of-squares",
            why="channels moved to the front and flattened; the statistics from sums of squares; the "
            "eval copies made by * 1",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    per_channel = x.transpose(0, 1).reshape(c, -1)  # (C, everything else)\n"
                "    if training:\n"
                "        n = per_channel.shape[1]\n"
                "        mean = per_channel.sum(1) / n\n"
                "        centred = per_channel - mean[:, None]\n"
                "        sq = (centred * centred).sum(1)\n"
                "        var = sq / n\n"
                "        new_mean = running_mean * (1 - momentum) + mean.detach() * momentum\n"
                "        new_var = running_var * (1 - momentum) + (sq.detach() / (n - 1)) * momentum\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean * 1, running_var * 1\n"
                "    y = (per_channel - mean[:, None]) / (var[:, None] + eps) ** 0.5\n"
                "    if weight is not None:\n"
                "        y = y * weight[:, None]\n"
                "    if bias is not None:\n"
                "        y = y + bias[:, None]\n"
                "    y = y.reshape(c, x.shape[0], *x.shape[2:]).transpose(0, 1)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        RightAnswer(
            name="channels-flattened-and-no-grad-update",
            why="flattens x to (C, everything else) for torch.var_mean, and updates the running "
            "statistics under torch.no_grad()",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training,\n"
                "               momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    flat = x.transpose(0, 1).reshape(c, -1)\n"
                "    if training:\n"
                "        var, mean = torch.var_mean(flat, dim=1, correction=0)\n"
                "        n = flat.shape[1]\n"
                "        with torch.no_grad():\n"
                "            new_mean = running_mean * (1 - momentum) + mean * momentum\n"
                "            new_var = running_var * (1 - momentum) + var * (n / (n - 1)) * momentum\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.detach().clone(), running_var.detach().clone()\n"
                "    shape = (1, c) + (1,) * (x.ndim - 2)\n"
                "    y = (x - mean.reshape(shape)) / (var.reshape(shape) + eps).sqrt()\n"
                "    if weight is not None:\n"
                "        y = y * weight.reshape(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.reshape(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
    ],
    "mean_embedding": [
        RightAnswer(
            name="weighted-einsum",
            why="weights each position by 1/count (0 for pads) and sums with einsum",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    keep = (tokens != pad_id).float()  # (B, T)\n"
                "    weights = keep / keep.sum(1, keepdim=True).clamp(min=1)\n"
                "    return torch.einsum('bt,btd->bd', weights, embedding(tokens))\n"
            ),
        ),
        RightAnswer(
            name="one-hot-times-the-weight",
            why="builds the one-hot rows and multiplies by embedding.weight, as the lesson "
            "shows an embedding is",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    one_hot = F.one_hot(tokens, embedding.num_embeddings).to(embedding.weight.dtype)\n"
                "    one_hot = one_hot * (tokens != pad_id).unsqueeze(-1)  # pads: all-zero rows\n"
                "    counts = one_hot.sum(dim=(1, 2)).clamp(min=1).unsqueeze(-1)  # (B, 1)\n"
                "    return one_hot.sum(1) @ embedding.weight / counts\n"
            ),
        ),
        RightAnswer(
            name="where-with-scalars-and-0d-pad",
            why="pad_id as a 0-d CPU tensor (a scalar, which a GPU tensor may meet), the mask from torch.where with Python scalars, the rows looked up with weight.index_select.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    pad = torch.tensor(pad_id)  # a 0-d CPU tensor: a scalar on any device\n"
                "    keep = torch.where(tokens != pad, 1.0, 0.0).unsqueeze(-1)\n"
                "    vecs = embedding.weight.index_select(0, tokens.reshape(-1)).reshape(*tokens.shape, -1)\n"
                "    return (vecs * keep).sum(1) / keep.sum(1).clamp_min(1)\n"
            ),
        ),
        RightAnswer(
            name="scatter-added-counts",
            why="Counts each id per sequence with scatter_add_ into zeros made on tokens.device, zeroes pad_id's column, and multiplies the counts by the weight.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    w = embedding.weight\n"
                "    counts = torch.zeros(tokens.shape[0], w.shape[0], dtype=w.dtype, device=tokens.device)\n"
                "    counts.scatter_add_(1, tokens, torch.ones_like(tokens, dtype=w.dtype))\n"
                "    counts[:, pad_id] = 0\n"
                "    return counts @ w / counts.sum(1, keepdim=True).clamp(min=1)\n"
            ),
        ),
        RightAnswer(
            name="row-loop-with-item",
            why="A loop over the sequences: the count read with .item(), the kept tokens picked with a bool mask, a row of only pads made with weight.new_zeros (the table's device and dtype).",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    rows = []\n"
                "    for row in tokens:\n"
                "        keep = row != pad_id\n"
                "        n = int(keep.sum().item())\n"
                "        if n == 0:\n"
                "            rows.append(embedding.weight.new_zeros(embedding.embedding_dim))\n"
                "        else:\n"
                "            rows.append(embedding(row[keep]).sum(0) / n)\n"
                "    if not rows:\n"
                "        return embedding.weight.new_zeros(0, embedding.embedding_dim)\n"
                "    return torch.stack(rows)\n"
            ),
        ),
        RightAnswer(
            name="vmap-over-the-sequences",
            why="torch.vmap of the mean of one sequence: the mask's dtype taken from the table, the count clamped, the table looked up through the module.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    def one(row):\n"
                "        keep = (row != pad_id).unsqueeze(-1).to(embedding.weight.dtype)\n"
                "        return (embedding(row) * keep).sum(0) / keep.sum().clamp(min=1)\n"
                "    return torch.vmap(one)(tokens)\n"
            ),
        ),
        RightAnswer(
            name="index-select-and-where",
            why="rows gathered with weight.index_select, pads replaced with a 0-d zero by torch.where, "
            "the count cast to the table's dtype",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    vectors = embedding.weight.index_select(0, tokens.reshape(-1)).reshape(*tokens.shape, -1)\n"
                "    keep = tokens.ne(pad_id)\n"
                "    total = torch.where(keep[..., None], vectors, vectors.new_zeros(()))\n"
                "    return total.sum(1) / keep.sum(1, keepdim=True).clamp_min(1).to(vectors.dtype)\n"
            ),
        ),
        RightAnswer(
            name="embedding-bag-mean-with-padding-idx",
            why="F.embedding_bag in mean mode with padding_idx=pad_id leaves the pads out of each bag's"
            " mean, and gives zeros for a bag of only pads",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                '    return F.embedding_bag(tokens, embedding.weight, mode="mean", padding_idx=pad_id)\n'
            ),
        ),
        RightAnswer(
            name="embedding-bag-with-weights",
            why="F.embedding_bag sums each row's vectors weighted 1 (kept) or 0 (pad), then "
            "divides by the clamped count",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    w = (tokens != pad_id).to(embedding.weight.dtype)\n"
                "    s = F.embedding_bag(tokens, embedding.weight, per_sample_weights=w, mode='sum')\n"
                "    return s / w.sum(1, keepdim=True).clamp(min=1)\n"
            ),
        ),
        RightAnswer(
            name="pads-as-nan-and-nanmean",
            why="marks the pads NaN (masked_fill sends no gradient through them) and takes "
            "nanmean over T; a row of only pads becomes zeros with nan_to_num",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    vectors = embedding(tokens).masked_fill((tokens == pad_id).unsqueeze(-1), float('nan'))\n"
                "    return torch.nan_to_num(vectors.nanmean(dim=1))\n"
            ),
        ),
    ],
    "causal_mask": [
        RightAnswer(
            name="compared-positions",
            why="compares key positions with each query's position in the sequence",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    query_at = torch.arange(t_k - t_q, t_k, device=device).unsqueeze(1)\n"
                "    return torch.arange(t_k, device=device).unsqueeze(0) <= query_at\n"
            ),
        ),
        RightAnswer(
            name="full-of-true-minus-the-future",
            why="torch.full of True on device, triu(t_k - t_q + 1) keeps only the future, logical_not turns it into what may be seen.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    return torch.full((t_q, t_k), True, device=device).triu(t_k - t_q + 1).logical_not()\n"
            ),
        ),
        RightAnswer(
            name="numpy-tri-then-moved",
            why="np.tri(t_q, t_k, t_k - t_q) is the same triangle as bools; shared into a tensor and moved to device when one is given.",
            code=(
                "import numpy as np\n"
                "def causal_mask(t_q, t_k, device=None):\n"
                "    m = torch.from_numpy(np.tri(t_q, t_k, t_k - t_q, dtype=bool))\n"
                "    return m if device is None else m.to(device)\n"
            ),
        ),
        RightAnswer(
            name="last-rows-of-a-square",
            why="the last t_q rows of the t_k x t_k lower triangle, cloned",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    square = torch.ones(t_k, t_k, dtype=torch.bool, device=device).tril()\n"
                "    return square[t_k - t_q:].clone()\n"
            ),
        ),
        RightAnswer(
            name="materialised-causal-lower-right",
            why="torch.nn.attention.bias.causal_lower_right, the bias the lesson names, materialised on"
            " the device",
            code=(
                "from torch.nn.attention.bias import causal_lower_right\n"
                "def causal_mask(t_q, t_k, device=None):\n"
                "    return causal_lower_right(t_q, t_k)._materialize(device)\n"
            ),
        ),
    ],
    "attention": [
        RightAnswer(
            name="additive-mask-and-matmul",
            why="turns the bool mask into an additive one (0 or -inf), uses .mT, torch.matmul "
            "and F.softmax",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = torch.matmul(q, k.mT) / q.size(-1) ** 0.5\n"
                "    if mask is not None:\n"
                "        bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)\n"
                "        scores = scores + bias.masked_fill(~mask, float('-inf'))\n"
                "    return torch.matmul(F.softmax(scores, dim=-1), v)\n"
            ),
        ),
        RightAnswer(
            name="einsum-and-finfo-min",
            why="einsum for the products and the dtype's lowest number for hidden keys",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = torch.einsum('...qd,...kd->...qk', q, k) * q.shape[-1] ** -0.5\n"
                "    if mask is not None:\n"
                "        low = torch.finfo(scores.dtype).min\n"
                "        scores = torch.where(mask, scores, torch.full_like(scores, low))\n"
                "    return torch.einsum('...qk,...kd->...qd', scores.softmax(-1), v)\n"
            ),
        ),
        RightAnswer(
            name="0d-cpu-scale-and-where-scalar",
            why="The scale as a 0-d CPU tensor (a scalar, which a GPU tensor may meet) and torch.where with a Python -inf for hidden keys.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scale = torch.tensor(q.shape[-1], dtype=q.dtype).rsqrt()  # 0-d CPU: a scalar\n"
                "    scores = (q @ k.transpose(-2, -1)) * scale\n"
                "    if mask is not None:\n"
                "        scores = torch.where(mask, scores, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        RightAnswer(
            name="new-full-bias",
            why="An additive bias made with scores.new_full (the scores' dtype and device), 0 where a key may be seen.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q.matmul(k.mT).div(math.sqrt(q.size(-1)))\n"
                "    if mask is not None:\n"
                "        bias = scores.new_full(mask.shape, float('-inf')).masked_fill(mask, 0.0)\n"
                "        scores = scores + bias\n"
                "    return torch.softmax(scores, -1).matmul(v)\n"
            ),
        ),
        RightAnswer(
            name="einsum-and-a-softmax-by-hand",
            why="q scaled before an einsum, the softmax written out with the max subtracted",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = torch.einsum('...qd,...kd->...qk', q * q.shape[-1] ** -0.5, k)\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(mask.logical_not(), -math.inf)\n"
                "    scores = scores - scores.amax(-1, keepdim=True).detach()\n"
                "    e = scores.exp()\n"
                "    return (e / e.sum(-1, keepdim=True)) @ v\n"
            ),
        ),
        RightAnswer(
            name="vmapped-over-the-batch-axes",
            why="attention for one (T_q, D) query matrix, torch.vmap-ed once per broadcast batch axis; "
            "no mask is a mask of all True",
            code=(
                "def _one(q, k, v, mask):\n"
                "    s = q @ k.T / math.sqrt(q.shape[-1])\n"
                "    s = torch.where(mask, s, float('-inf'))\n"
                "    return torch.softmax(s, -1) @ v\n"
                "def attention(q, k, v, mask=None):\n"
                "    if mask is None:\n"
                "        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device)\n"
                "    batch = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2], mask.shape[:-2])\n"
                "    q, k, v = (t.expand(*batch, *t.shape[-2:]) for t in (q, k, v))\n"
                "    mask = mask.expand(*batch, *mask.shape[-2:])\n"
                "    f = _one\n"
                "    for _ in batch:\n"
                "        f = torch.vmap(f)\n"
                "    return f(q, k, v, mask)\n"
            ),
        ),
        RightAnswer(
            name="einsum-where-and-own-stable-softmax",
            why="einsum for the scores, torch.where with a -inf tensor on the scores' device, "
            "and a softmax written out with each row's maximum subtracted first",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    s = torch.einsum('...qd,...kd->...qk', q, k) * (1.0 / math.sqrt(q.size(-1)))\n"
                "    if mask is not None:\n"
                "        hidden = torch.tensor(float('-inf'), dtype=s.dtype, device=s.device)\n"
                "        s = torch.where(mask, s, hidden)\n"
                "    s = s - s.amax(-1, keepdim=True)\n"
                "    w = s.exp()\n"
                "    return (w / w.sum(-1, keepdim=True)) @ v\n"
            ),
        ),
        RightAnswer(
            name="finfo-min-fill",
            why="fills hidden keys with the dtype's most negative finite value, not -inf: every "
            "query sees a key, so their weights still come out as exactly zero",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        s = s.masked_fill(mask.logical_not(), torch.finfo(s.dtype).min)\n"
                "    return torch.matmul(F.softmax(s, dim=-1), v)\n"
            ),
        ),
        RightAnswer(
            name="bmm-on-flattened-batch",
            why="flattens the leading axes for torch.bmm (the mask expanded to the scores' shape "
            "first, so masks that only broadcast work too) and restores them at the end",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    *lead, tq, d = q.shape\n"
                "    tk, dv = k.shape[-2], v.shape[-1]\n"
                "    q3, k3, v3 = q.reshape(-1, tq, d), k.reshape(-1, tk, d), v.reshape(-1, tk, dv)\n"
                "    s = torch.bmm(q3, k3.transpose(1, 2)) / math.sqrt(d)\n"
                "    if mask is not None:\n"
                "        m = mask.expand(*lead, tq, tk).reshape(-1, tq, tk)\n"
                "        s = s.masked_fill(~m, float('-inf'))\n"
                "    return torch.bmm(s.softmax(-1), v3).reshape(*lead, tq, dv)\n"
            ),
        ),
        RightAnswer(
            name="q-and-k-each-scaled-by-a-fourth-root",
            why="scales q and k each by D ** -0.25 before the product: the same scores, rounded "
            "differently (also on scores of -20000)",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    r = q.shape[-1] ** 0.25\n"
                "    scores = (q / r) @ (k / r).transpose(-2, -1)\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
    ],
    "split_heads": [
        RightAnswer(
            name="stacked-chunks",
            why="cuts the channels into n_heads chunks and stacks them on a new head axis",
            code=(
                "def split_heads(x, n_heads):\n"
                "    if x.shape[-1] % n_heads != 0:\n"
                "        raise ValueError(f'{x.shape[-1]} channels, {n_heads} heads')\n"
                "    return torch.stack(x.chunk(n_heads, dim=-1), dim=1)\n"
            ),
        ),
        RightAnswer(
            name="unflatten-and-permute",
            why="unflatten the channel axis, then permute",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                "        raise ValueError(f'C={c} is not divisible by n_heads={n_heads}')\n"
                "    return x.unflatten(-1, (n_heads, c // n_heads)).permute(0, 2, 1, 3)\n"
            ),
        ),
        RightAnswer(
            name="indexed-with-cpu-indices",
            why="Indexes the channel axis with a (H, D) table of CPU indices, which any device accepts, then swaps T and H.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                '        raise ValueError(f"{c} channels cannot make {n_heads} heads")\n'
                "    idx = torch.arange(c).view(n_heads, c // n_heads)  # CPU indices index any device\n"
                "    return x[..., idx].transpose(1, 2)\n"
            ),
        ),
        RightAnswer(
            name="stacked-splits",
            why="x.split into C / H wide pieces, stacked on a new axis 1",
            code=(
                "def split_heads(x, n_heads):\n"
                "    c = x.shape[-1]\n"
                "    if c % n_heads != 0:\n"
                '        raise ValueError(f"C={c} is not a multiple of n_heads={n_heads}")\n'
                "    return torch.stack(x.split(c // n_heads, dim=-1), dim=1)\n"
            ),
        ),
        RightAnswer(
            name="view-then-transpose",
            why="view, not reshape: splitting one axis into two is a view whatever the strides, "
            "so a non-contiguous x works too",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                '        raise ValueError(f"C={c} is not divisible by n_heads={n_heads}")\n'
                "    return x.view(b, t, n_heads, c // n_heads).transpose(1, 2)\n"
            ),
        ),
    ],
    "encoder_layer_forward": [
        RightAnswer(
            name="own-functions-and-separate-projections",
            why="slices q, k and v's projections out of in_proj_weight and reuses the "
            "lesson's own attention and split_heads",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    c, h = x.shape[-1], sa.num_heads\n"
                "    w_q, w_k, w_v = sa.in_proj_weight.split(c)\n"
                "    b_q, b_k, b_v = sa.in_proj_bias.split(c)\n"
                "    def block(z):\n"
                "        q = split_heads(z @ w_q.T + b_q, h)\n"
                "        k = split_heads(z @ w_k.T + b_k, h)\n"
                "        v = split_heads(z @ w_v.T + b_v, h)\n"
                "        out = attention(q, k, v).permute(0, 2, 1, 3).flatten(2)\n"
                "        return sa.out_proj(out)\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if not layer.norm_first:\n"
                "        x = layer.norm1(x + block(x))\n"
                "        return layer.norm2(x + ff(x))\n"
                "    x = x + block(layer.norm1(x))\n"
                "    return x + ff(layer.norm2(x))\n"
            ),
        ),
        RightAnswer(
            name="0d-cpu-scale",
            why="The scale 1/sqrt(C/H) as a 0-d CPU tensor (a scalar, which a GPU tensor may meet), heads by reshape and transpose.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    b, t, c = x.shape\n"
                "    h = sa.num_heads\n"
                "    scale = torch.tensor(c // h, dtype=x.dtype).rsqrt()  # 0-d CPU tensor: a scalar anywhere\n"
                "    def attend(z):\n"
                "        qkv = F.linear(z, sa.in_proj_weight, sa.in_proj_bias)\n"
                "        q, k, v = (p.reshape(b, t, h, c // h).transpose(1, 2) for p in qkv.chunk(3, -1))\n"
                "        w = (q @ k.transpose(-2, -1) * scale).softmax(-1)\n"
                "        return sa.out_proj((w @ v).transpose(1, 2).reshape(b, t, c))\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        return x + ff(layer.norm2(x))\n"
                "    x = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(x + ff(x))\n"
            ),
        ),
        RightAnswer(
            name="functional-layer-norm-and-as-tensor-scale",
            why="F.layer_norm with the layer's own norm weights and eps, and the scale from torch.as_tensor(..., device=z.device).",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    h = sa.num_heads\n"
                "    c = x.shape[-1]\n"
                "    def ln(norm, z):\n"
                "        return F.layer_norm(z, norm.normalized_shape, norm.weight, norm.bias, norm.eps)\n"
                "    def attend(z):\n"
                "        q, k, v = F.linear(z, sa.in_proj_weight, sa.in_proj_bias).unflatten(-1, (3, h, -1)).permute(2, 0, 3, 1, 4)\n"
                "        scores = q @ k.mT / torch.as_tensor(c / h, dtype=z.dtype, device=z.device).sqrt()\n"
                "        out = scores.softmax(dim=-1) @ v\n"
                "        return F.linear(out.transpose(1, 2).flatten(2), sa.out_proj.weight, sa.out_proj.bias)\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(ln(layer.norm1, x))\n"
                "        return x + ff(ln(layer.norm2, x))\n"
                "    x = ln(layer.norm1, x + attend(x))\n"
                "    return ln(layer.norm2, x + ff(x))\n"
            ),
        ),
        RightAnswer(
            name="heads-copied-into-new-zeros",
            why="Each head's attention copied into z.new_zeros(b, t, c), made on x's device: copying values in is allowed on any device, and gradients flow through the copy.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    b, t, c = x.shape\n"
                "    h = sa.num_heads\n"
                "    d = c // h\n"
                "    def attend(z):\n"
                "        q, k, v = F.linear(z, sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1)\n"
                "        out = z.new_zeros(b, t, c)\n"
                "        for i in range(h):\n"
                "            s = slice(i * d, (i + 1) * d)\n"
                "            out[..., s] = attention(q[..., s], k[..., s], v[..., s])\n"
                "        return sa.out_proj(out)\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        return x + ff(layer.norm2(x))\n"
                "    x = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(x + ff(x))\n"
            ),
        ),
        RightAnswer(
            name="einsum-projections-and-dropouts",
            why="in_proj_weight viewed as (3, H, D, C) and applied with einsum; the layer's dropouts (p"
            " = 0) kept where the layer has them",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    h = sa.num_heads\n"
                "    c = x.shape[-1]\n"
                "    d = c // h\n"
                "    w = sa.in_proj_weight.reshape(3, h, d, c)\n"
                "    bias = sa.in_proj_bias.reshape(3, h, 1, d)\n"
                "    def attend(z):\n"
                "        q, k, v = torch.einsum('btc,shdc->sbhtd', z, w) + bias[:, None]\n"
                "        weights = torch.softmax(torch.einsum('bhqd,bhkd->bhqk', q, k) / d ** 0.5, dim=-1)\n"
                "        merged = torch.einsum('bhqk,bhkd->bqhd', weights, v).flatten(2)\n"
                "        return sa.out_proj(merged)\n"
                "    def ff(z):\n"
                "        return layer.linear2(layer.dropout(layer.activation(layer.linear1(z))))\n"
                "    if layer.norm_first:\n"
                "        x = x + layer.dropout1(attend(layer.norm1(x)))\n"
                "        return x + layer.dropout2(ff(layer.norm2(x)))\n"
                "    x = layer.norm1(x + layer.dropout1(attend(x)))\n"
                "    return layer.norm2(x + layer.dropout2(ff(x)))\n"
            ),
        ),
        RightAnswer(
            name="addmm-and-a-loop-over-heads",
            why="projects with torch.addmm on (B*T, C), attends head by head with baddbmm and "
            "bmm, and concatenates the heads",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    b, t, c = x.shape\n"
                "    h = sa.num_heads\n"
                "    d = c // h\n"
                "    def attend(z):\n"
                "        qkv = torch.addmm(sa.in_proj_bias, z.reshape(-1, c), sa.in_proj_weight.t())\n"
                "        q, k, v = qkv.reshape(b, t, 3 * c).split(c, dim=-1)\n"
                "        heads = []\n"
                "        for j in range(h):\n"
                "            s = slice(j * d, (j + 1) * d)\n"
                "            start = torch.zeros(b, t, t, dtype=z.dtype, device=z.device)\n"
                "            scores = torch.baddbmm(start, q[..., s], k[..., s].transpose(1, 2), alpha=1 / math.sqrt(d))\n"
                "            heads.append(torch.bmm(torch.softmax(scores, -1), v[..., s]))\n"
                "        return sa.out_proj(torch.cat(heads, dim=-1))\n"
                "    def ff(z):\n"
                "        return layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        y = x + attend(layer.norm1(x))\n"
                "        return y + ff(layer.norm2(y))\n"
                "    y = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(y + ff(y))\n"
            ),
        ),
        RightAnswer(
            name="private-ff-block",
            why="the feed-forward half through the layer's own _ff_block (linear1, activation, "
            "dropout, linear2, dropout2: no attention in it), the attention by hand",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    h = sa.num_heads\n"
                "    def attend(z):\n"
                "        q, k, v = F.linear(z, sa.in_proj_weight, sa.in_proj_bias).chunk(3, dim=-1)\n"
                "        out = attention(split_heads(q, h), split_heads(k, h), split_heads(v, h))\n"
                "        return sa.out_proj(out.transpose(1, 2).flatten(-2))\n"
                "    if layer.norm_first:\n"
                "        x = x + layer.dropout1(attend(layer.norm1(x)))\n"
                "        return x + layer._ff_block(layer.norm2(x))\n"
                "    x = layer.norm1(x + layer.dropout1(attend(x)))\n"
                "    return layer.norm2(x + layer._ff_block(x))\n"
            ),
        ),
        RightAnswer(
            name="qkv-reshaped-in-one-and-functional-norms",
            why="q, k and v split into heads in one reshape (B, T, 3, H, D) and permute; the "
            "norms through F.layer_norm with the layers' own eps; every linear through F.linear",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    b, t, c = x.shape\n"
                "    sa = layer.self_attn\n"
                "    h = sa.num_heads\n"
                "    def ln(norm, z):\n"
                "        return F.layer_norm(z, norm.normalized_shape, norm.weight, norm.bias, norm.eps)\n"
                "    def attend(z):\n"
                "        qkv = (z @ sa.in_proj_weight.T + sa.in_proj_bias).reshape(b, t, 3, h, c // h)\n"
                "        q, k, v = qkv.permute(2, 0, 3, 1, 4)\n"
                "        w = torch.einsum('bhqd,bhkd->bhqk', q, k).div(math.sqrt(c // h)).softmax(-1)\n"
                "        out = torch.einsum('bhqk,bhkd->bqhd', w, v).reshape(b, t, c)\n"
                "        return F.linear(out, sa.out_proj.weight, sa.out_proj.bias)\n"
                "    def ff(z):\n"
                "        return layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        y = x + attend(ln(layer.norm1, x))\n"
                "        return y + ff(ln(layer.norm2, y))\n"
                "    y = ln(layer.norm1, x + attend(x))\n"
                "    return ln(layer.norm2, y + ff(y))\n"
            ),
        ),
    ],
}
