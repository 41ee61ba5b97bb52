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
        Mistake(
            name="mask-from-inputs",
            message="The ignored positions were read from the inputs, tokens[:, :-1], not from the "
            "targets, tokens[:, 1:]: a target equal to ignore_index was counted, and a "
            "counted one left out.",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens[:, 1:]\n"
                "    keep = tokens[:, :-1] != ignore_index\n"
                "    logp = logits[:, :-1].log_softmax(-1)\n"
                "    picked = logp.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)\n"
                "    return -(picked * keep).sum() / keep.sum()\n"
            ),
        ),
        Mistake(
            name="divided-by-all-positions",
            message="The summed loss was divided by all B * (T - 1) positions, ignored ones included:"
            " average over the counted targets only (reduction='mean' with ignore_index "
            "does).",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    v = logits.shape[-1]\n"
                "    total = F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1),\n"
                "                            ignore_index=ignore_index, reduction='sum')\n"
                "    return total / tokens[:, 1:].numel()\n"
            ),
        ),
        Mistake(
            name="ignored-targets-zeroed-in-place",
            message="targets[~keep] = 0 wrote into tokens[:, 1:], a view of the caller's tokens: "
            "their ignored targets became 0. Use torch.where(keep, targets, 0) or masked_fill"
            " (out of place).",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens[:, 1:]\n"
                "    keep = targets != ignore_index\n"
                "    targets[~keep] = 0\n"
                "    logp = logits[:, :-1].log_softmax(-1)\n"
                "    picked = logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)\n"
                "    return -(picked * keep).sum() / keep.sum()\n"
            ),
        ),
        Mistake(
            name="negative-means-ignored",
            message="Only negative targets were left out (targets >= 0), which holds for -100 but not"
            " for a caller's ignore_index of 0 or 3: compare with ignore_index itself.",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens[:, 1:]\n"
                "    keep = targets >= 0\n"
                "    logp = logits[:, :-1].log_softmax(-1)\n"
                "    picked = logp.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)\n"
                "    return -(picked * keep).sum() / keep.sum()\n"
            ),
        ),
        Mistake(
            name="loss-under-no-grad",
            message="The loss was computed under torch.no_grad() and then marked requires_grad_(): it"
            " has the right value but no graph back to the logits, so nothing learns from it.",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    v = logits.shape[-1]\n"
                "    with torch.no_grad():\n"
                "        loss = F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1), ignore_index=ignore_index)\n"
                "    return loss.requires_grad_()\n"
            ),
        ),
        Mistake(
            name="logits-marked-requires-grad",
            message="logits.requires_grad_(True) changes the caller's tensor (a leaf they did not ask"
            " to train): the loss needs no such call, the gradient reaches logits that "
            "already require it.",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    logits.requires_grad_(True)\n"
                "    v = logits.shape[-1]\n"
                "    return F.cross_entropy(logits[:, :-1].reshape(-1, v), tokens[:, 1:].reshape(-1), ignore_index=ignore_index)\n"
            ),
        ),
        Mistake(
            name="weights-made-on-cpu",
            message="torch.ones(B, T - 1) without device= lands on the CPU: with logits on a GPU the "
            "product with the losses fails. Build the weights from the targets (targets != "
            "ignore_index) or pass device=.",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    b, t, v = logits.shape\n"
                "    targets = tokens[:, 1:]\n"
                "    w = torch.ones(b, t - 1)\n"
                "    w = w * (targets != ignore_index)\n"
                "    nll = F.cross_entropy(logits[:, :-1].transpose(1, 2), targets, ignore_index=ignore_index, reduction='none')\n"
                "    return (nll * w).sum() / w.sum()\n"
            ),
        ),
        Mistake(
            name="log-of-softmax-plus-eps",
            message="log(softmax + 1e-9) caps every position's loss at about 20.7: a confidently "
            "wrong prediction is scored far too mildly and its gradient vanishes. Use "
            "log_softmax (or F.cross_entropy).",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens[:, 1:]\n"
                "    keep = targets != ignore_index\n"
                "    probs = logits[:, :-1].softmax(-1)\n"
                "    picked = probs.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)\n"
                "    return -(torch.log(picked + 1e-9) * keep).sum() / keep.sum()\n"
            ),
        ),
        Mistake(
            name="logsumexp-without-max",
            message="logits.exp().sum().log() overflows to inf for large logits (exp(89) in float32, "
            "exp(12) in float16): use torch.logsumexp or log_softmax, which subtract the max "
            "first.",
            code=(
                "def next_token_loss(logits, tokens, ignore_index=-100):\n"
                "    targets = tokens[:, 1:]\n"
                "    keep = targets != ignore_index\n"
                "    lg = logits[:, :-1]\n"
                "    lse = lg.exp().sum(-1).log()\n"
                "    picked = lg.gather(-1, torch.where(keep, targets, 0).unsqueeze(-1)).squeeze(-1)\n"
                "    return ((lse - picked) * keep).sum() / keep.sum()\n"
            ),
        ),
        Mistake(
            name="loss-in-float64",
            message="The loss comes back in float64 for float32 logits: return it in the logits' "
            "dtype, as the text asks (a caller's mixed-precision loop expects the dtype it fed in).",
            code=_LOSS.format(
                body="    v = logits.shape[-1]\n"
                "    return F.cross_entropy(logits[:, :-1].reshape(-1, v).double(), "
                "tokens[:, 1:].reshape(-1), ignore_index=ignore_index)"
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
        Mistake(
            name="positions-made-on-cpu",
            message="torch.arange(start, start + T) without device= makes the positions on the CPU: "
            "with the model on a GPU the position table refuses them. Pass device=idx.device.",
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
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t))\n"
            ),
        ),
        Mistake(
            name="tables-reinitialised-small",
            message="The tables were re-initialised with std 0.02: the text asks to leave "
            "nn.Embedding's default (N(0, 1)) alone; the GPT sets its own initialisation.",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "        nn.init.normal_(self.tok.weight, std=0.02)\n"
                "        nn.init.normal_(self.pos.weight, std=0.02)\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
        Mistake(
            name="token-table-detached",
            message="The token vectors were read from self.tok.weight.detach(): the values are right "
            "but the token table never learns. Use self.tok(idx).",
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
                "        return self.tok.weight.detach()[idx] + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
        Mistake(
            name="positions-kept-as-plain-attribute",
            message="torch.arange(context) kept as a plain attribute stays on the CPU when the module"
            " moves to a GPU: make the positions in forward on idx's device, or "
            "register_buffer them.",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "        self.positions = torch.arange(context)\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(self.positions[start:start + t])\n"
            ),
        ),
        Mistake(
            name="length-checked-only-with-start",
            message="The length was checked only when start > 0: T > context with start = 0 went on "
            "to the lookup, which raises an IndexError (on a GPU, a device-side error). Check"
            " start + T > context always.",
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
                "        if start and start + t > self.context:\n"
                '            raise ValueError("too long")\n'
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
        Mistake(
            name="positions-under-no-grad",
            message="The position vectors were looked up under torch.no_grad(): the values are right "
            "but the position table never learns.",
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
                "        with torch.no_grad():\n"
                "            p = self.pos(torch.arange(start, start + t, device=idx.device))\n"
                "        return self.tok(idx) + p\n"
            ),
        ),
        Mistake(
            name="tables-in-float64",
            message="The tables were made in float64 (dtype=torch.float64): the embeddings come out "
            "float64 while the rest of the model is float32. Leave the dtype to the default.",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "        self.tok = nn.Embedding(vocab_size, d_model, dtype=torch.float64)\n"
                "        self.pos = nn.Embedding(context, d_model, dtype=torch.float64)\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
        Mistake(
            name="sparse-gradients",
            message="nn.Embedding(..., sparse=True) gives sparse gradients, which AdamW (used to "
            "train the GPT) refuses: use nn.Embedding(vocab_size, d_model), as the text says.",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "        self.tok = nn.Embedding(vocab_size, d_model, sparse=True)\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
        Mistake(
            name="max-norm-tables",
            message="max_norm=1.0 rescales the looked-up rows in place at every call: the vectors are"
            " not the table's. Use nn.Embedding(vocab_size, d_model), as the text says.",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "        self.tok = nn.Embedding(vocab_size, d_model, max_norm=1.0)\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
        Mistake(
            name="padding-idx-zero",
            message="padding_idx=0 makes token 0 (the digit '0') a padding token: its vector starts "
            "at zero and never learns. Use nn.Embedding(vocab_size, d_model), as the text "
            "says.",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "        self.tok = nn.Embedding(vocab_size, d_model, padding_idx=0)\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
        Mistake(
            name="grad-scaled-by-frequency",
            message="scale_grad_by_freq=True divides each token's gradient by how often it occurs in "
            "the batch: not the gradient of the sum. Use nn.Embedding(vocab_size, d_model), "
            "as the text says.",
            code=(
                "class GPTEmbedding(nn.Module):\n"
                "    def __init__(self, vocab_size, context, d_model):\n"
                "        super().__init__()\n"
                "        self.tok = nn.Embedding(vocab_size, d_model)\n"
                "        self.pos = nn.Embedding(context, d_model)\n"
                "        self.context = context\n"
                "        self.tok = nn.Embedding(vocab_size, d_model, scale_grad_by_freq=True)\n"
                "\n"
                "    def forward(self, idx, start=0):\n"
                "        t = idx.shape[1]\n"
                "        if start + t > self.context:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}')\n"
                "        return self.tok(idx) + self.pos(torch.arange(start, start + t, device=idx.device))\n"
            ),
        ),
        Mistake(
            name="error-message-without-sizes",
            message="ValueError('sequence too long') says that something did not fit but not "
            "what: the text asks for the sizes in the message, the positions needed (start + T) "
            "and the context, e.g. f'positions {start}..{start + t - 1} do not fit a context "
            "of {self.context}'.",
            code=_EMB.format(
                check="        if start + t > self.context:\n"
                "            raise ValueError('sequence too long')\n",
                body="        return self.tok(idx) + self.pos(torch.arange(start, start + t, "
                "device=idx.device))",
            ),
        ),
        Mistake(
            name="value-error-after-the-lookup",
            message="The ValueError is raised only when the position lookup has failed (an "
            "IndexError caught and turned into ValueError). On a CPU that works, but on a GPU "
            "an index out of range is a device-side error that no except catches. Compare "
            "start + T with self.context and raise BEFORE looking anything up.",
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
                "        positions = torch.arange(start, start + t, device=idx.device)\n"
                "        try:\n"
                "            pos = self.pos(positions)\n"
                "        except IndexError as err:\n"
                "            raise ValueError(f'{start} + {t} > {self.context}') from err\n"
                "        return self.tok(idx) + pos\n"
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
        Mistake(
            name="causal-only-when-square",
            message="No mask when T_q < T_k is right for one new query only: with several new queries"
            " the first ones saw the later ones. Use tril(diagonal=T_k - T_q) for every T_q.",
            code=(
                "def causal_attention(q, k, v):\n"
                "    if q.shape[-2] == k.shape[-2]:\n"
                "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"
                "    return F.scaled_dot_product_attention(q, k, v)  # the new tokens see the whole cache\n"
            ),
        ),
        Mistake(
            name="assumes-four-dims",
            message="The answer unpacked q as (B, H, T, D) and used axes 2 and 3: the text allows any"
            " leading axes (..., T, D). Use negative axes: shape[-2], transpose(-2, -1), "
            "softmax(dim=-1).",
            code=(
                "def causal_attention(q, k, v):\n"
                "    b, h, t_q, d = q.shape\n"
                "    t_k = k.shape[2]\n"
                "    scores = q @ k.transpose(2, 3) / math.sqrt(d)\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    return scores.masked_fill(~mask, float('-inf')).softmax(dim=3) @ v\n"
            ),
        ),
        Mistake(
            name="leading-dims-flattened-by-view",
            message="q.view(-1, T, D) needs contiguous memory, and a caller's q may be a transposed "
            "view: use reshape, or keep the leading axes (matmul and SDPA broadcast over "
            "them).",
            code=(
                "def causal_attention(q, k, v):\n"
                "    *lead, t_q, d = q.shape\n"
                "    t_k, d_v = k.shape[-2], v.shape[-1]\n"
                "    q3, k3, v3 = q.view(-1, t_q, d), k.view(-1, t_k, d), v.view(-1, t_k, d_v)\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    out = F.scaled_dot_product_attention(q3, k3, v3, attn_mask=mask)\n"
                "    return out.view(*lead, t_q, d_v)\n"
            ),
        ),
        Mistake(
            name="softmax-in-float32-kept",
            message="The scores were computed in float32 and the result stayed float32: half-"
            "precision inputs must give a half-precision result. Cast back with .to(q.dtype).",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    scores = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(q.shape[-1])\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    return scores.masked_fill(~mask, float('-inf')).softmax(-1) @ v.float()\n"
            ),
        ),
        Mistake(
            name="values-detached",
            message="v.detach() cut the values from the graph: the output is right but no gradient "
            "reaches v (and the projection that made it).",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    return scores.masked_fill(~mask, float('-inf')).softmax(-1) @ v.detach()\n"
            ),
        ),
        Mistake(
            name="minus-1e9-mask",
            message="-1e9 does not fit in float16 (its largest value is 65504): masked_fill raises on"
            " half-precision scores. Mask with float('-inf').",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    return scores.masked_fill(~mask, -1e9).softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="exp-without-max",
            message="scores.exp() without subtracting the max overflows for sharp attention (large "
            "scores) and gives inf / inf = nan: mask with -inf and use softmax, which "
            "subtracts the max.",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    e = scores.exp() * mask\n"
                "    return (e / e.sum(-1, keepdim=True)) @ v\n"
            ),
        ),
        Mistake(
            name="masked-after-the-softmax",
            message="The mask was applied after the softmax and the weights renormalised: where a "
            "future key dominates, the allowed weights all underflow to 0 and the row becomes"
            " 0 / 0 = nan. Mask with -inf before the softmax.",
            code=(
                "def causal_attention(q, k, v):\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    allowed = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) * allowed\n"
                "    return (w / w.sum(-1, keepdim=True)) @ v\n"
            ),
        ),
        Mistake(
            name="reseeds-global-generator",
            message="torch.manual_seed inside a function resets the caller's random numbers: every dropout mask, shuffle and initialisation after the call repeats the same draws. Seed once at the top of a script (or pass a torch.Generator) and leave the global generator alone.",
            code=(
                "import torch\n"
                "def causal_attention(q, k, v):\n"
                "    torch.manual_seed(1234)\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    rows = torch.arange(t_q, device=q.device)[:, None] + (t_k - t_q)\n"
                "    cols = torch.arange(t_k, device=q.device)[None, :]\n"
                "    scores = torch.einsum('...qd,...kd->...qk', q, k) / q.shape[-1] ** 0.5\n"
                "    scores = scores.masked_fill(cols > rows, float('-inf'))\n"
                "    return scores.softmax(dim=-1) @ v\n"
            ),
        ),
        Mistake(
            name="reseeds-cuda-generators",
            message="torch.cuda.manual_seed_all inside a function resets the caller's random numbers on the GPU: every dropout mask drawn there after the call repeats. On a machine without CUDA it changes nothing visible, which is why it slips through there. Seed once at the top of a script and leave the global generators alone.",
            code=(
                "import torch\n"
                "def causal_attention(q, k, v):\n"
                "    torch.cuda.manual_seed_all(1234)  # 'for reproducible GPU runs'\n"
                "    t_q, t_k = q.shape[-2], k.shape[-2]\n"
                "    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device).tril(diagonal=t_k - t_q)\n"
                "    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5\n"
                "    return scores.masked_fill(~mask, float('-inf')).softmax(dim=-1) @ v\n"
            ),
        ),
        Mistake(
            name="finite-mask-minus-1e4",
            message="masked_fill(..., -1e4) hides the future only while every real score is far "
            "above -10000: with scores below it (a sharp attention, large activations), the "
            "masked keys get the highest scores and take the weight. Mask with -inf, as the "
            "text says.",
            code=_ATTN.format(
                body="    mask = torch.ones(t_q, t_k, dtype=torch.bool, device=q.device)"
                ".tril(diagonal=t_k - t_q)\n"
                "    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5\n"
                "    return scores.masked_fill(~mask, -1e4).softmax(dim=-1) @ v"
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
        Mistake(
            name="qkv-interleaved-per-head",
            message="qkv(ln1(x)) was split per head first, each head's 3D channels cut into q, k, v: "
            "the text's q, k, v are the three C-wide thirds, in that order, each then split "
            "into heads.",
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
                "        qkv = self.qkv(self.ln1(x)).reshape(b, t, h, 3 * d).transpose(1, 2)\n"
                "        q, k, v = qkv.chunk(3, dim=-1)\n"
                "        if past is not None:\n"
                "            k = torch.cat([past[0], k], dim=2)\n"
                "            v = torch.cat([past[1], v], dim=2)\n"
                "        heads = causal_attention(q, k, v)\n"
                "        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="heads-take-strided-channels",
            message="reshape(B, T, D, H) gives head j the channels j, j + H, j + 2H...: head j holds "
            "channels j*D .. (j+1)*D, so reshape(B, T, H, D).transpose(1, 2).",
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
                "        q, k, v = (z.reshape(b, t, d, h).permute(0, 3, 1, 2) for z in (q, k, v))\n"
                "        if past is not None:\n"
                "            k = torch.cat([past[0], k], dim=2)\n"
                "            v = torch.cat([past[1], v], dim=2)\n"
                "        heads = causal_attention(q, k, v)\n"
                "        x = x + self.proj(heads.permute(0, 2, 3, 1).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="scaled-by-model-width",
            message="The scores were divided by sqrt(C), the model's width: each head's scores are "
            "scaled by sqrt(D), its own width, D = C / H.",
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
                "        t_k = k.shape[2]\n"
                "        scores = q @ k.transpose(-2, -1) / math.sqrt(c)\n"
                "        mask = torch.ones(t, t_k, dtype=torch.bool, device=x.device).tril(t_k - t)\n"
                "        heads = scores.masked_fill(~mask, float('-inf')).softmax(-1) @ v\n"
                "        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="relu-mlp",
            message="The MLP used ReLU: the text's MLP is Linear(C, 4C), GELU, Linear(4C, C).",
            code=(
                "class Block(nn.Module):\n"
                "    def __init__(self, d_model, n_heads):\n"
                "        super().__init__()\n"
                "        self.n_heads = n_heads\n"
                "        self.ln1 = nn.LayerNorm(d_model)\n"
                "        self.qkv = nn.Linear(d_model, 3 * d_model)\n"
                "        self.proj = nn.Linear(d_model, d_model)\n"
                "        self.ln2 = nn.LayerNorm(d_model)\n"
                "        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.ReLU(), nn.Linear(4 * d_model, d_model))\n"
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
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="gelu-tanh",
            message="nn.GELU(approximate='tanh') is GPT-2's approximation, not the text's nn.GELU(): "
            "the outputs differ slightly, and the grader loads weights into the text's block.",
            code=(
                "class Block(nn.Module):\n"
                "    def __init__(self, d_model, n_heads):\n"
                "        super().__init__()\n"
                "        self.n_heads = n_heads\n"
                "        self.ln1 = nn.LayerNorm(d_model)\n"
                "        self.qkv = nn.Linear(d_model, 3 * d_model)\n"
                "        self.proj = nn.Linear(d_model, d_model)\n"
                "        self.ln2 = nn.LayerNorm(d_model)\n"
                "        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(approximate='tanh'), nn.Linear(4 * d_model, d_model))\n"
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
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="parallel-branches",
            message="Both branches read the block's input (parallel attention and MLP, as in GPT-J): "
            "in the text the MLP reads x after the attention was added, y = x + mlp(ln2(x)).",
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
                "        a = self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + a + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="q-and-k-swapped",
            message="The first third of qkv(ln1(x)) was used as the keys and the second as the "
            "queries: the order is q, k, v.",
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
                "        k, q, v = self.qkv(self.ln1(x)).split(c, dim=-1)\n"
                "        q, k, v = (z.reshape(b, t, h, d).transpose(1, 2) for z in (q, k, v))\n"
                "        if past is not None:\n"
                "            k = torch.cat([past[0], k], dim=2)\n"
                "            v = torch.cat([past[1], v], dim=2)\n"
                "        heads = causal_attention(q, k, v)\n"
                "        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="no-grad-with-cache",
            message="The attention ran under torch.no_grad() whenever a cache was given: a cache does"
            " not mean inference, and the block's output lost its gradient through the "
            "attention.",
            code=(
                "import contextlib\n"
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
                "        with torch.no_grad() if past is not None else contextlib.nullcontext():\n"
                "            heads = causal_attention(q, k, v)\n"
                "        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="n-heads-not-stored",
            message="The number of heads was stored under another name: the text asks for "
            "self.n_heads, which the attention maps read (block.n_heads).",
            code=(
                "class Block(nn.Module):\n"
                "    def __init__(self, d_model, n_heads):\n"
                "        super().__init__()\n"
                "        self.h = n_heads\n"
                "        self.ln1 = nn.LayerNorm(d_model)\n"
                "        self.qkv = nn.Linear(d_model, 3 * d_model)\n"
                "        self.proj = nn.Linear(d_model, d_model)\n"
                "        self.ln2 = nn.LayerNorm(d_model)\n"
                "        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))\n"
                "\n"
                "    def forward(self, x, past=None):\n"
                "        b, t, c = x.shape\n"
                "        h = self.h\n"
                "        d = c // h\n"
                "        q, k, v = self.qkv(self.ln1(x)).split(c, dim=-1)\n"
                "        q, k, v = (z.reshape(b, t, h, d).transpose(1, 2) for z in (q, k, v))\n"
                "        if past is not None:\n"
                "            k = torch.cat([past[0], k], dim=2)\n"
                "            v = torch.cat([past[1], v], dim=2)\n"
                "        heads = causal_attention(q, k, v)\n"
                "        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="mask-filled-with-float32-min",
            message="torch.finfo(torch.float32).min does not fit in float16: masked_fill raises on "
            "half-precision scores. Mask with float('-inf') (or finfo(scores.dtype).min).",
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
                "        t_k = k.shape[2]\n"
                "        scores = q @ k.transpose(-2, -1) / math.sqrt(d)\n"
                "        mask = torch.ones(t, t_k, dtype=torch.bool, device=x.device).tril(t_k - t)\n"
                "        heads = scores.masked_fill(~mask, torch.finfo(torch.float32).min).softmax(-1) @ v\n"
                "        x = x + self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        return x + self.mlp(self.ln2(x)), (k, v)\n"
            ),
        ),
        Mistake(
            name="mlp-on-attention-output",
            message="The MLP read ln2 of the attention branch alone: it reads the residual stream "
            "after the attention was added, y = x + mlp(ln2(x)).",
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
                "        a = self.proj(heads.transpose(1, 2).reshape(b, t, c))\n"
                "        x = x + a\n"
                "        return x + self.mlp(self.ln2(a)), (k, v)\n"
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
        Mistake(
            name="kth-value-without-keepdim",
            message="values[:, -1] is (B,), not (B, 1): compared with (B, V) logits it lines up "
            "with the columns, not the rows, and fails or masks the wrong tokens once B > 1. "
            "Keep the axis: values[:, -1:].",
            code=_PROBS.format(
                body="    logits = logits / temperature\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1]\n"
                "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
        Mistake(
            name="temperature-skipped-with-top-k",
            message="With top_k given, the logits went to the softmax without being divided by "
            "the temperature: both knobs apply together.",
            code=_PROBS.format(
                body="    if top_k is not None:\n"
                "        kth = logits.topk(min(top_k, logits.shape[-1]), dim=-1).values[:, -1:]\n"
                "        return F.softmax(logits.masked_fill(logits < kth, float('-inf')), dim=-1)\n"
                "    return F.softmax(logits / temperature, dim=-1)"
            ),
        ),
        Mistake(
            name="keep-mask-made-on-cpu",
            message="torch.zeros(shape, dtype=torch.bool) without device= lands on the CPU, and "
            "scattering GPU indices into it fails: torch.zeros_like(logits, dtype=torch.bool).",
            code=_PROBS.format(
                body="    scaled = logits / temperature\n"
                "    if top_k is not None and top_k < scaled.shape[-1]:\n"
                "        keep = torch.zeros(scaled.shape, dtype=torch.bool)\n"
                "        keep.scatter_(-1, scaled.topk(top_k, dim=-1).indices, True)\n"
                "        scaled = scaled.masked_fill(~keep, float('-inf'))\n"
                "    return F.softmax(scaled, dim=-1)"
            ),
        ),
        Mistake(
            name="softmax-by-hand-without-max",
            message="exp(logits) overflows to inf once a logit over the temperature passes 88 "
            "(11 in float16), and inf / inf is NaN: at temperature 0.01 that is a logit of 0.9. "
            "Use F.softmax, or subtract each row's max before exp.",
            code=_PROBS.format(
                body="    scaled = logits / temperature\n"
                "    if top_k is not None and top_k < scaled.shape[-1]:\n"
                "        kth = scaled.topk(top_k, dim=-1).values[:, -1:]\n"
                "        scaled = scaled.masked_fill(scaled < kth, float('-inf'))\n"
                "    e = scaled.exp()\n"
                "    return e / e.sum(dim=-1, keepdim=True)"
            ),
        ),
        Mistake(
            name="softmax-by-hand-batch-max",
            message="The max subtracted before exp was the whole batch's, not each row's: a row "
            "far below it underflows to all zeros and 0 / 0 is NaN. amax(dim=-1, keepdim=True).",
            code=_PROBS.format(
                body="    scaled = logits / temperature\n"
                "    if top_k is not None and top_k < scaled.shape[-1]:\n"
                "        kth = scaled.topk(top_k, dim=-1).values[:, -1:]\n"
                "        scaled = scaled.masked_fill(scaled < kth, float('-inf'))\n"
                "    e = (scaled - scaled.max()).exp()\n"
                "    return e / e.sum(dim=-1, keepdim=True)"
            ),
        ),
        Mistake(
            name="masked-with-float32-min",
            message="torch.finfo(torch.float32).min does not fit in float16 (masked_fill "
            "raises): mask with float('-inf'), which every float dtype holds.",
            code=_PROBS.format(
                body="    logits = logits / temperature\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits = logits.masked_fill(logits < kth, torch.finfo(torch.float32).min)\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
        Mistake(
            name="renormalised-over-the-batch",
            message="After zeroing the probabilities outside the top k, they were divided by the "
            "whole batch's total: each row must be divided by its own sum.",
            code=_PROBS.format(
                body="    probs = F.softmax(logits / temperature, dim=-1)\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = probs.topk(top_k, dim=-1).values[:, -1:]\n"
                "        probs = probs * (probs >= kth)\n"
                "        probs = probs / probs.sum()\n"
                "    return probs"
            ),
        ),
        Mistake(
            name="masked-in-place-at-temperature-one",
            message="At temperature 1 the division was skipped, so masked_fill_ wrote -inf into "
            "the caller's own logits: mask out of place (masked_fill, not masked_fill_), or "
            "always divide first (which makes a new tensor).",
            code=_PROBS.format(
                body="    scaled = logits if temperature == 1.0 else logits / temperature\n"
                "    if top_k is not None and top_k < scaled.shape[-1]:\n"
                "        kth = scaled.topk(top_k, dim=-1).values[:, -1:]\n"
                "        scaled.masked_fill_(scaled < kth, float('-inf'))\n"
                "    return F.softmax(scaled, dim=-1)"
            ),
        ),
        Mistake(
            name="masked-with-minus-1e4",
            message="-1e4 is not below every logit: once the logits divided by the temperature "
            "are all under -10000 (at temperature 0.01, logits under -100), the masked tokens "
            "have the largest scores and take all the probability. Mask with float('-inf'), "
            "which is below every score.",
            code=_PROBS.format(
                body="    logits = logits / temperature\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits = logits.masked_fill(logits < kth, -1e4)\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
        Mistake(
            name="top-k-of-v-minus-1-skipped",
            message="The masking was skipped for top_k >= V - 1, but top_k = V - 1 still "
            "leaves one token out: only a top_k of at least V keeps everything "
            "(top_k < logits.shape[-1] is the condition to mask).",
            code=_PROBS.format(
                body="    logits = logits / temperature\n"
                "    if top_k is not None and top_k < logits.shape[-1] - 1:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits, dim=-1)"
            ),
        ),
        Mistake(
            name="probabilities-floored",
            message="clamp(min=1e-12) keeps a log of the probabilities finite, but the tokens "
            "outside the top k must get exactly 0, as the text says (and the rows no longer sum "
            "to 1 exactly). Return the softmax as it is.",
            code=_PROBS.format(
                body="    logits = logits / temperature\n"
                "    if top_k is not None and top_k < logits.shape[-1]:\n"
                "        kth = logits.topk(top_k, dim=-1).values[:, -1:]\n"
                "        logits = logits.masked_fill(logits < kth, float('-inf'))\n"
                "    return F.softmax(logits, dim=-1).clamp(min=1e-12)"
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
        Mistake(
            name="cache-rebuilt-one-step-early",
            message="The cache was dropped while it still had room for one more position (the "
            "test was < model.context - 1): a full window was recomputed where the new token "
            "alone would do. Feed it with the cache while the cache holds fewer than "
            "`context` positions.",
            code=_sample(refill=_REFILL.replace("< model.context:", "< model.context - 1:")),
        ),
        Mistake(
            name="caller-mode-changed",
            message="model.eval() and then model.train() at the end leaves a model that the "
            "caller had in eval mode in train mode: the caller set the mode, leave it alone.",
            code=_sample()
            .replace(
                "    logits, past = model(idx", "    model.eval()\n    logits, past = model(idx", 1
            )
            .replace("    return idx\n", "    model.train()\n    return idx\n"),
        ),
        Mistake(
            name="returned-sequence-cropped",
            message="The prompt was cropped to its last `context` tokens and that cropped "
            "sequence was returned: only the model's input is cropped, the result is the whole "
            "prompt followed by the new tokens, (B, T + max_new_tokens).",
            code=_sample().replace(
                "    logits, past = model(idx[:, -model.context:])\n    for",
                "    idx = idx[:, -model.context:]\n    logits, past = model(idx)\n    for",
            ),
        ),
        Mistake(
            name="context-from-the-lesson",
            message="The window was the lesson's LINE, not model.context: a model with another "
            "context gets windows it cannot read, or shorter ones than sample() reads.",
            code=_sample(prompt="idx[:, -LINE:]")
            .replace("past[0][0].shape[2] < model.context", "past[0][0].shape[2] < LINE")
            .replace("model(idx[:, -model.context:])", "model(idx[:, -LINE:])"),
        ),
        Mistake(
            name="cache-length-from-len-past",
            message="len(past) is the number of blocks, not the number of cached positions: the "
            "cache is never dropped and runs past the position table. The positions are "
            "past[0][0].shape[2].",
            code=_sample(refill=_REFILL.replace("past[0][0].shape[2]", "len(past)")),
        ),
        Mistake(
            name="new-tokens-gathered-on-cpu",
            message="torch.zeros(B, 0, dtype=torch.long) without device= lands on the CPU, and "
            "concatenating the GPU tokens to it fails: make it with idx.new_zeros(B, 0).",
            code=(
                "@torch.no_grad()\n"
                "def sample_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None,\n"
                "                  generator=None):\n"
                "    drawn = torch.zeros(idx.shape[0], 0, dtype=torch.long)\n"
                "    logits, past = model(idx[:, -model.context:])\n"
                "    for step in range(max_new_tokens):\n"
                "        probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "        new = torch.multinomial(probs, 1, generator=generator)\n"
                "        drawn = torch.cat([drawn, new], dim=1)\n"
                "        if step == max_new_tokens - 1:\n"
                "            break\n"
                "        if past[0][0].shape[2] < model.context:\n"
                "            logits, past = model(new, past)\n"
                "        else:\n"
                "            logits, past = model(torch.cat([idx, drawn], 1)[:, -model.context:])\n"
                "    return torch.cat([idx, drawn], dim=1)\n"
            ),
        ),
        Mistake(
            name="cache-full-judged-by-sequence-length",
            message="idx.shape[1] counts the token just appended, which the cache does not hold "
            "yet: idx.shape[1] < model.context drops the cache one step early. The cache's "
            "positions are past[0][0].shape[2].",
            code=_sample(refill=_REFILL.replace("past[0][0].shape[2]", "idx.shape[1]")),
        ),
        Mistake(
            name="own-generator-when-none",
            message="Without a generator, sample() draws from PyTorch's global random state; a "
            "generator seeded here instead draws other tokens (the same ones at every call). "
            "Pass generator on as it is, None included.",
            code=_sample().replace(
                "    logits, past = model(idx[:, -model.context:])\n    for",
                "    if generator is None:\n"
                "        generator = torch.Generator(device=idx.device).manual_seed(0)\n"
                "    logits, past = model(idx[:, -model.context:])\n    for",
            ),
        ),
        Mistake(
            name="parameters-frozen",
            message="model.requires_grad_(False) keeps the sampling free of gradients, but it "
            "changes the caller's model for good (it no longer trains): use torch.no_grad(), "
            "which changes nothing outside the call.",
            code=_sample().replace(
                "    logits, past = model(idx[:, -model.context:])\n    for",
                "    model.requires_grad_(False)\n"
                "    logits, past = model(idx[:, -model.context:])\n    for",
            ),
        ),
        Mistake(
            name="top-k-not-passed-on",
            message="top_k was not passed on to next_token_probs, so every token could be "
            "drawn: next_token_probs(logits[:, -1], temperature, top_k).",
            code=_sample().replace(
                "next_token_probs(logits[:, -1], temperature, top_k)",
                "next_token_probs(logits[:, -1], temperature=temperature)",
            ),
        ),
        Mistake(
            name="caller-gradients-cleared",
            message="model.zero_grad() threw away the gradients the caller's model held (a "
            "training step may be half done): sampling under torch.no_grad() makes none, so "
            "there is nothing to clear.",
            code=_sample().replace(
                "    logits, past = model(idx[:, -model.context:])\n    for",
                "    model.zero_grad()\n    logits, past = model(idx[:, -model.context:])\n    for",
            ),
        ),
        Mistake(
            name="token-drawn-after-the-last",
            message="The loop draws the next token at the end of each step, so after the last "
            "one it draws once more and throws the token away: the tokens are right, but the "
            "generator has moved one draw further than sample() leaves it, and the caller's "
            "next draws from it change. Draw exactly once per new token.",
            code=(
                "@torch.no_grad()\n"
                "def sample_cached(model, idx, max_new_tokens, temperature=1.0, top_k=None,\n"
                "                  generator=None):\n"
                "    logits, past = model(idx[:, -model.context:])\n"
                "    probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "    new = torch.multinomial(probs, 1, generator=generator)\n"
                "    for _ in range(max_new_tokens):\n"
                "        idx = torch.cat([idx, new], dim=1)\n"
                "        if past[0][0].shape[2] < model.context:\n"
                "            logits, past = model(new, past)\n"
                "        else:\n"
                "            logits, past = model(idx[:, -model.context:])\n"
                "        probs = next_token_probs(logits[:, -1], temperature, top_k)\n"
                "        new = torch.multinomial(probs, 1, generator=generator)\n"
                "    return idx\n"
            ),
        ),
        Mistake(
            name="argmax-for-top-k-one",
            message="With top_k=1 the token is certain, so argmax gives the same one, but it "
            "skips the draw: the generator is left one draw behind sample() at every step, "
            "and the caller's next draws from it change. Draw with torch.multinomial every "
            "time.",
            code=_sample().replace(
                "        new = torch.multinomial(probs, 1, generator=generator)\n",
                "        if top_k == 1:\n"
                "            new = probs.argmax(dim=-1, keepdim=True)\n"
                "        else:\n"
                "            new = torch.multinomial(probs, 1, generator=generator)\n",
            ),
        ),
        Mistake(
            name="probabilities-moved-to-the-cpu",
            message="The probabilities go to the CPU (.cpu()) for torch.multinomial and the "
            "token comes back with .to(idx.device). On a CPU-only machine nothing changes, "
            "but on a GPU the draw is made on the CPU, from another generator than the one "
            "sample() draws from (and a CUDA generator is refused): the tokens differ. Keep "
            "the probabilities on the model's device.",
            code=_sample().replace(
                "        new = torch.multinomial(probs, 1, generator=generator)\n",
                "        new = torch.multinomial(probs.cpu(), 1, generator=generator).to(idx.device)\n",
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
        Mistake(
            name="mode-read-after-eval",
            message="model.training was read after model.eval(), so the mode put back is always "
            "eval: a model the caller had in train mode is left in eval mode. Read the mode "
            "first (or do not change it at all).",
            code=_EXPORT.format(
                body="    model.eval()\n"
                "    was_training = model.training\n"
                "    seq = Dim('T', min=1, max=model.context)\n"
                "    program = torch.export.export(model, (example,), "
                "dynamic_shapes={'idx': {1: seq}})\n"
                "    model.train(was_training)\n"
                "    return program"
            ),
        ),
        Mistake(
            name="example-of-one-row",
            message="The program was exported from one row of the example, so it accepts a "
            "batch of one only: export with the example as given.",
            code=_EXPORT.format(
                body="    seq = Dim('T', min=1, max=model.context)\n"
                "    return torch.export.export(model, (example[:1],), "
                "dynamic_shapes={'idx': {1: seq}})"
            ),
        ),
        Mistake(
            name="gradients-switched-off",
            message="requires_grad_(False) on the model's parameters changes the caller's "
            "model (it no longer trains): an exported program needs no such change.",
            code=_EXPORT.format(
                body="    model.requires_grad_(False)\n"
                "    seq = Dim('T', min=1, max=model.context)\n"
                "    return torch.export.export(model, (example,), "
                "dynamic_shapes={'idx': {1: seq}})"
            ),
        ),
        Mistake(
            name="model-moved-to-cpu",
            message="model.cpu() moves the caller's model off the GPU (for good: the caller's "
            "next training step then fails on its GPU batches), and the program is traced on "
            "the CPU, so it refuses the GPU inputs the caller gives it. Export the model where "
            "it is.",
            code=_EXPORT.format(
                body="    model = model.cpu()\n"
                "    seq = Dim('T', min=1, max=model.context)\n"
                "    return torch.export.export(model, (example.cpu(),), "
                "dynamic_shapes={'idx': {1: seq}})"
            ),
        ),
        Mistake(
            name="example-moved-to-cpu",
            message="example.cpu() traces the program with its input on the CPU while the "
            "model's weights are on the GPU: export refuses the mix (or the program refuses the "
            "caller's GPU inputs). Export with the example as it is given.",
            code=_EXPORT.format(
                body="    seq = Dim('T', min=1, max=model.context)\n"
                "    return torch.export.export(model, (example.cpu(),), "
                "dynamic_shapes={'idx': {1: seq}})"
            ),
        ),
    ],
}
