"""Hidden checks for 04_layers.

PyTorch is the oracle wherever it has the layer: a real ``nn.Conv1d`` for output sizes and
receptive fields, ``F.batch_norm``, ``F.scaled_dot_product_attention`` and
``nn.TransformerEncoderLayer`` itself. The learner's answers are reached through the probes
in ``autograder/probes/layers.py``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from autograder.boundary import AnswerRaised, call, observe
from autograder.contracts import Contract, Draw, Inputs, uses
from autograder.probes import layers as probes
from tutorial_lib.checks import CheckError, assert_close, check_dtype, check_shape, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _


def _rule_kept(seen: dict, what: str, rule: str) -> None:
    """Fail when the answer called a shortcut its exercise's text forbids (the probe records
    each call, and makes it raise, while the answer runs)."""
    if seen.get("broken"):
        raise CheckError(
            _(
                "{what} called {calls}, which this exercise does not allow "
                "(the grader makes it raise while your function runs). {rule}"
            ).format(what=what, calls=_(" and ").join(seen["broken"]), rule=rule)
        )


# The rules are functions: a message is looked up in the language of the moment it is shown.
def _batch_norm_rule() -> str:
    return _(
        "Write BatchNorm by hand: the mean and the biased variance over every axis but 1 "
        "(x.mean, x.var(correction=0)), then (x - mean) / sqrt(var + eps) * weight + bias. "
        "F.batch_norm is what you check yourself against, not what you call."
    )


def _attention_rule() -> str:
    return _(
        "Write attention by hand: scores = q @ k.transpose(-2, -1) / sqrt(D), hidden keys filled "
        "with -inf, softmax over the keys, then @ v. F.scaled_dot_product_attention is what you "
        "check yourself against, not what you call."
    )


def _encoder_rule() -> str:
    return _(
        "Compute the layer from its parts: q, k, v from self_attn.in_proj_weight and "
        "in_proj_bias, your own attention over the heads (matrix products, or your attention "
        "from Exercise 6), then self_attn.out_proj, the norms and the feed-forward. Calling the "
        "layer, or its self_attn, would only repeat what you are asked to rebuild."
    )


def _int(value, what: str) -> int:
    """An int (a bool is not one); a float that is whole is named as the likely slip."""
    if type(value) is float and value.is_integer():
        raise CheckError(
            _(
                "{what} returned the float {value}; sizes are ints. Use floor division (//) "
                "rather than / and int() or math.floor afterwards."
            ).format(what=what, value=value)
        )
    check_type(value, int, what)
    if type(value) is bool:
        raise CheckError(_("{what} returned a bool, expected an int.").format(what=what))
    return value


# ---------------------------------------------------------------------------------------
# 1. conv_output_size


def _conv_length(size: int, kernel_size: int, stride: int, padding: int, dilation: int) -> int:
    """What a real Conv1d makes of ``size`` positions (PyTorch as the oracle); 0 if it refuses."""
    conv = torch.nn.Conv1d(1, 1, kernel_size, stride=stride, padding=padding, dilation=dilation)
    try:
        with torch.no_grad():
            return int(conv(torch.zeros(1, 1, size)).shape[-1])
    except RuntimeError:
        return 0


def check_conv_output_size(conv_output_size) -> None:
    """Random sizes, kernels, strides, paddings and dilations against a real convolution."""
    g = torch.Generator().manual_seed(40)
    cases = [(9, 2, 2, 0, 1), (10, 3, 4, 0, 1), (5, 5, 1, 0, 1), (6, 3, 1, 0, 2), (1, 1, 1, 0, 1)]
    cases += [(2, 3, 1, 1, 1), (1, 3, 1, 1, 1), (3, 5, 2, 1, 1)]  # fits only thanks to padding
    for _draw in range(40):
        k, s, p, d = (int(torch.randint(lo, hi, (1,), generator=g)) for lo, hi in _RANGES)
        cases.append((int(torch.randint(1, 40, (1,), generator=g)), k, s, min(p, k // 2 + 1), d))
    too_small = [(3, 5, 1, 0, 1), (4, 3, 1, 0, 2), (2, 7, 2, 1, 1)]
    for size, k, s, p, d in cases:
        expected = _conv_length(size, k, s, p, d)
        if expected == 0:
            too_small.append((size, k, s, p, d))
            continue
        what = f"conv_output_size({size}, {k}, stride={s}, padding={p}, dilation={d})"
        case = {"args": [size, k], "kwargs": {"stride": s, "padding": p, "dilation": d}}
        got = _int(observe(call, conv_output_size, case, what)["result"], what)
        if got != expected:
            raise CheckError(
                _(
                    "{what} returned {got}, but a real nn.Conv1d gives {expected} positions. The "
                    "dilated kernel spans dilation*(kernel_size-1)+1 inputs, padding adds to both "
                    "ends, and the division by the stride is floored (not rounded) before the +1."
                ).format(what=what, got=got, expected=expected)
            )
    for size, k, s, p, d in too_small:
        what = f"conv_output_size({size}, {k}, stride={s}, padding={p}, dilation={d})"
        case = {"args": [size, k], "kwargs": {"stride": s, "padding": p, "dilation": d}}
        try:
            got = observe(call, conv_output_size, case, what)["result"]
        except AnswerRaised as err:
            if err.type_name == "ValueError":
                continue
            raise CheckError(
                _(
                    "{what} raised {error}: the kernel does not fit, so raise ValueError "
                    "with a message that says so."
                ).format(what=what, error=err.type_name)
            ) from None
        raise CheckError(
            _(
                "{what} returned {got!r}, but the dilated kernel does not fit in the padded input "
                "(a real convolution refuses it). Raise ValueError instead of returning a size."
            ).format(what=what, got=got)
        )


_RANGES = ((1, 8), (1, 5), (0, 4), (1, 4))  # kernel, stride, padding, dilation


# ---------------------------------------------------------------------------------------
# 2. receptive_field


def _measured_field(layers: list[tuple[int, int]]) -> int:
    """How many input positions one output position of a stack of Conv1d layers depends on.

    Measured with autograd: the gradient of one central output reaches exactly the inputs it
    depends on; the field is their extent.
    """
    length = 1
    for k, s in reversed(layers):  # an input long enough for at least one output
        length = (length - 1) * s + k
    length += 64
    x = torch.zeros(1, 1, length, requires_grad=True)
    y = x
    for k, s in layers:
        conv = torch.nn.Conv1d(1, 1, k, stride=s, bias=False)
        torch.nn.init.ones_(conv.weight)
        y = conv(y)
    y[0, 0, y.shape[-1] // 2].backward()
    seen = x.grad[0, 0].nonzero()
    return int(seen.max() - seen.min() + 1)  # the extent, gaps (a 1x1 conv with stride) included


def check_receptive_field(receptive_field) -> None:
    """Stacks with strides anywhere, against the field measured by autograd; input untouched."""
    g = torch.Generator().manual_seed(41)
    stacks = [[], [(5, 1)], [(2, 2), (3, 1)], [(3, 1), (2, 2)], [(3, 2), (3, 2), (3, 2)]]
    stacks += [[(1, 3), (3, 1)], [(3, 1), (3, 1), (2, 2), (3, 1), (3, 1), (2, 2), (3, 1)]]
    for _stack in range(12):
        depth = int(torch.randint(1, 6, (1,), generator=g))
        stacks.append(
            [
                (
                    int(torch.randint(1, 6, (1,), generator=g)),
                    int(torch.randint(1, 4, (1,), generator=g)),
                )
                for _layer in range(depth)
            ]
        )
    for layers in stacks:
        what = f"receptive_field({layers})"
        seen = observe(probes.probe_receptive_field, receptive_field, {"layers": layers}, what)
        got = _int(seen["result"], what)
        expected = _measured_field(layers)
        if got != expected:
            raise CheckError(
                _(
                    "{what} returned {got}, but one output of that stack spans {expected} input "
                    "positions, first to last (measured with autograd). Each layer adds "
                    "(kernel_size - 1) times the product of the strides of all the layers BEFORE "
                    "it; its own stride only matters for the layers after it."
                ).format(what=what, got=got, expected=expected)
            )
        if seen["layers_after"] != [list(pair) for pair in layers]:
            raise CheckError(
                _(
                    "{what} changed the caller's list (it became {after}). Read "
                    "the layers without popping, reversing or sorting the list in place."
                ).format(what=what, after=seen["layers_after"])
            )


# ---------------------------------------------------------------------------------------
# 3. batch_norm


def _reference_batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps):
    """F.batch_norm, with its running statistics updated on copies and returned."""
    new_mean, new_var = running_mean.clone(), running_var.clone()
    y = F.batch_norm(x, new_mean, new_var, weight, bias, training, momentum, eps)
    return y, new_mean, new_var


def _draw_batch_norm(d: Draw) -> Inputs:
    """(N, C), (N, C, L) or (N, C, H, W); with or without weight and bias; both modes."""
    training = d.draw(st.booleans())
    spatial = [d.size(1, 3) for _axis in range(d.draw(st.integers(0, 2)))]
    n, c = d.size(1, 4), d.size(1, 4)
    if training and n * math.prod(spatial) < 2:
        n = 2  # a batch statistic needs two values per channel (F.batch_norm refuses one)
    affine = d.draw(st.booleans())
    args = (
        d.tensor(n, c, *spatial, low=-3.0, high=4.0),
        d.tensor(c),
        d.tensor(c, low=0.5, high=1.5),  # a variance is positive
        d.tensor(c) if affine else None,
        d.tensor(c) if affine else None,
    )
    kwargs = {
        "training": training,
        "momentum": d.draw(st.sampled_from([0.1, 0.3, 0.9])),
        "eps": d.draw(st.sampled_from([1e-5, 1e-3, 0.5])),
    }
    return Inputs(args, kwargs)


def _batch_norm_hint(family: str, inputs: Inputs) -> str:
    if family == "dtypes" and inputs.args[0].dtype == torch.float64:
        return _(
            "Compute in the input's dtype: a float32 working copy (even one cast back at the "
            "end) is only good to about 1e-7."
        )
    if inputs.args[0].dim() > 2:
        return _(
            "For an input with more than two axes, reduce over every axis but axis 1 (for "
            "(N, C, H, W): dims 0, 2 and 3) and reshape the (C,) statistics to (1, C, 1, 1)."
        )
    return _(
        "In training: the batch mean and the biased variance (correction=0) normalise x; the "
        "running statistics move by momentum towards the batch mean and the unbiased variance."
    )


BATCH_NORM = Contract(
    "batch_norm",
    _reference_batch_norm,
    _draw_batch_norm,
    rules=tuple(probes.BATCH_NORM_RULES),
    rule_text=_batch_norm_rule,
    grad_args=(0, 3, 4),  # x, weight, bias (the running statistics are buffers)
    arg_names=("x", "running_mean", "running_var", "weight", "bias"),
    hint=_batch_norm_hint,
)


@uses(BATCH_NORM)
def check_batch_norm(batch_norm) -> None:
    """The contract: against F.batch_norm on every input family, the caller's tensors kept."""


# ---------------------------------------------------------------------------------------
# 4. mean_embedding


def check_mean_embedding(mean_embedding) -> None:
    """Pads anywhere (and rows of only pads), tables with and without padding_idx, gradients."""
    device = get_device()
    g = torch.Generator().manual_seed(43)
    configs = [  # (B, T, num, dim, pad_id, padding_idx of the table)
        (3, 5, 11, 4, 0, 0),
        (4, 6, 9, 3, 0, None),
        (2, 4, 7, 5, 6, None),
        (3, 3, 8, 2, 2, 5),
        (1, 1, 5, 3, 4, None),
    ]
    for i, (b, t, num, dim, pad_id, padding_idx) in enumerate(configs):
        tokens = torch.randint(0, num, (b, t), generator=g)
        keep = torch.rand(b, t, generator=g) > 0.4
        tokens = torch.where(keep, tokens, torch.full_like(tokens, pad_id))
        tokens[0, -1] = pad_id  # at least one pad
        if b > 1:
            tokens[-1] = pad_id  # a row of only pads
        case = {
            "seed": 430 + i,
            "num": num,
            "dim": dim,
            "padding_idx": padding_idx,
            "device": str(device),
            "tokens": tokens.to(device),
            "pad_id": pad_id,
            "weights": torch.randn(b, dim, generator=g).to(device),
        }
        what = (
            f"mean_embedding(tokens of shape ({b}, {t}), a table of {num} rows "
            f"{'with padding_idx=' + str(padding_idx) if padding_idx is not None else 'without padding_idx'}"
            f", pad_id={pad_id})"
        )
        seen = observe(probes.probe_mean_embedding, mean_embedding, case, what)
        table = probes.build_embedding(case)
        w = table.weight.detach()
        mask = (tokens != pad_id).to(device).unsqueeze(-1).float()  # (B, T, 1)
        count = mask.sum(1)  # (B, 1)
        expected = (w[tokens.to(device)] * mask).sum(1) / count.clamp(min=1)
        out = seen["out"]
        check_type(out, torch.Tensor, what)
        check_shape(out, (b, dim), names="B D", what=what)
        if bool(torch.isnan(out).any()):
            raise CheckError(
                _(
                    "{what} has NaN in rows {rows}: "
                    "a row of only pads divides by a count of zero. Clamp the count to at least 1 "
                    "so such a row comes out as zeros."
                ).format(what=what, rows=torch.isnan(out).any(1).nonzero().flatten().tolist())
            )
        assert_close(out, expected, what=what, rtol=1e-4, atol=1e-5)
        if seen["tokens_changed"]:
            raise CheckError(
                _(
                    "{what} changed the caller's tokens in place. Build a mask (tokens != pad_id) "
                    "instead of overwriting the pads."
                ).format(what=what)
            )
        grad = seen["grad"]
        if grad is None:
            raise CheckError(
                _(
                    "{what} is cut off from the table's weights: no gradient reaches "
                    "embedding.weight. Look the vectors up with embedding(tokens) (no .detach(), no "
                    "torch.no_grad(), no .data), so the table can learn."
                ).format(what=what)
            )
        if bool(torch.isnan(grad).any()):
            raise CheckError(
                _(
                    "{what} sends NaN gradients to the table: dividing by a zero count and then "
                    "replacing the NaN (nan_to_num, torch.where) still sends NaN backwards. Clamp "
                    "the count to at least 1 before dividing."
                ).format(what=what)
            )
        expected_grad = torch.zeros_like(w)  # d/dW of sum(out * weights)
        share = (mask / count.clamp(min=1).unsqueeze(1)).squeeze(-1)  # (B, T)
        flat = (share.unsqueeze(-1) * case["weights"].unsqueeze(1)).reshape(-1, dim)
        expected_grad.index_add_(0, tokens.to(device).reshape(-1), flat)
        if padding_idx is not None:
            # nn.Embedding never trains its padding row; an answer that multiplies one-hot
            # rows by the weight does. Both are right here, so that row is not compared.
            expected_grad[padding_idx] = 0
            grad = grad.clone()
            grad[padding_idx] = 0
        assert_close(
            grad,
            expected_grad,
            what=_("the gradient {what} sends to the table").format(what=what),
            rtol=1e-4,
            atol=1e-5,
        )


# ---------------------------------------------------------------------------------------
# 5. causal_mask


def check_causal_mask(causal_mask) -> None:
    """Square and rectangular (t_k > t_q: cached keys) masks, on the grader's device."""
    device = get_device()
    for t_q, t_k in [(1, 1), (4, 4), (1, 5), (2, 6), (3, 4), (5, 9), (6, 6)]:
        what = f"causal_mask({t_q}, {t_k})"
        got = observe(probes.probe_causal_mask, causal_mask, {"t_q": t_q, "t_k": t_k}, what)
        got = got["result"]
        expected = torch.ones(t_q, t_k, dtype=torch.bool).tril(t_k - t_q)
        check_type(got, torch.Tensor, what)
        check_shape(got, (t_q, t_k), names="T_q T_k", what=what)
        check_dtype(got, torch.bool, what)
        if not torch.equal(got.cpu(), expected):
            i, j = (int(v) for v in (got.cpu() != expected).nonzero()[0])
            if expected[i, j]:
                whether = _("it may see key {j} (not in its future)").format(j=j)
            else:
                whether = _("it may not see key {j} (its future)").format(j=j)
            raise CheckError(
                _(
                    "{what}[{i}, {j}] is {value}: query {i} sits at position "
                    "{position} of the {t_k} keys, so {whether}. The mask is "
                    "torch.ones(t_q, t_k).tril(diagonal=t_k - t_q) as bools."
                ).format(
                    what=what,
                    i=i,
                    j=j,
                    value=bool(got[i, j]),
                    position=t_k - t_q + i,
                    t_k=t_k,
                    whether=whether,
                )
            )
        what = f"causal_mask({t_q}, {t_k}, device={device})"
        got = observe(
            probes.probe_causal_mask,
            causal_mask,
            {"t_q": t_q, "t_k": t_k, "device": str(device)},
            what,
        )["result"]
        check_type(got, torch.Tensor, what)
        assert_close(got, expected.to(device), what=what)
    _check_causal_mask_device(causal_mask)


def _check_causal_mask_device(causal_mask) -> None:
    """The mask is made on the device asked for: a second device (meta) that a CPU-only grader
    has too, so a mask made on the CPU and never moved fails here as it would on a GPU."""
    what = "causal_mask(3, 5, device=torch.device('meta'))"
    case = {"t_q": 3, "t_k": 5, "device": "meta", "describe": True}
    try:
        seen = observe(probes.probe_causal_mask, causal_mask, case, what)
    except (AnswerRaised, NotImplementedError):
        return  # an operation the meta device lacks: the values were checked above
    if seen.get("device") != "meta":
        where = seen.get(
            "device", _("no device (it returned a {type})").format(type=seen.get("type"))
        )
        raise CheckError(
            _(
                "{what} returned a mask on {where}, not on the device it was asked for. Create it "
                "there: torch.ones(t_q, t_k, dtype=torch.bool, device=device) (or .to(device)); a "
                "mask left on the CPU fails in masked_fill against scores on a GPU."
            ).format(what=what, where=where)
        )


# ---------------------------------------------------------------------------------------
# 6. attention


def _reference_attention(q, k, v, mask=None):
    """Attention written out (the reference for every dtype, masks of any broadcast shape)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _draw_attention(d: Draw) -> Inputs:
    """Batch axes (none to two), T_q != T_k, D != D_v; no mask, a causal, padding or random one."""
    batch = [d.size(1, 3) for _axis in range(d.draw(st.integers(0, 2)))]
    t_q, t_k, dim, dim_v = d.size(1, 5), d.size(1, 6), d.size(1, 8), d.size(1, 6)
    q, k = d.tensor(*batch, t_q, dim), d.tensor(*batch, t_k, dim)
    v = d.tensor(*batch, t_k, dim_v)
    kind = d.draw(st.sampled_from([None, "causal", "random"]))
    mask = None
    if kind == "causal":
        mask = torch.ones(t_q, t_k, dtype=torch.bool).tril(t_k - t_q)
        mask[..., 0] = True  # a query before every key still sees the first
    elif kind == "random":
        mask = d.bools(*batch, t_q, t_k)
        mask[..., 0] = True  # every query sees at least one key
    return Inputs((q, k, v, mask))


def _attention_hint(family: str, inputs: Inputs) -> str:
    q, _k, v, _mask = inputs.args
    if q.shape[-1] != v.shape[-1]:
        return _("Scale the scores by sqrt(D), the size of q's and k's last axis (not v's).")
    if family == "dtypes" and q.dtype == torch.float64:
        return _(
            "Compute in the inputs' dtype: a float32 working copy (even one cast back to "
            "float64 at the end) is only good to about 1e-7."
        )
    return ""


ATTENTION = Contract(
    "attention",
    _reference_attention,
    _draw_attention,
    rules=tuple(probes.ATTENTION_RULES),
    rule_text=_attention_rule,
    arg_names=("q", "k", "v", "mask"),
    hint=_attention_hint,
)


@uses(ATTENTION)
def check_attention(attention) -> None:
    """The contract: against attention written out, on every input family."""


# ---------------------------------------------------------------------------------------
# 7. split_heads


def _reference_split_heads(x, n_heads):
    b, t, c = x.shape
    return x.reshape(b, t, n_heads, c // n_heads).transpose(1, 2)


def _draw_split_heads(d: Draw) -> Inputs:
    """(B, T, C) with C a multiple of the head count (one head, one head per channel included)."""
    n_heads, width = d.size(1, 4), d.size(1, 3)
    x = d.tensor(d.size(1, 3, empty_ok=True), d.size(1, 4, empty_ok=True), n_heads * width)
    return Inputs((x, n_heads))


SPLIT_HEADS = Contract(
    "split_heads",
    _reference_split_heads,
    _draw_split_heads,
    arg_names=("x", "n_heads"),
    hint=lambda family, inputs: _(
        "Head j must hold channels j*D to (j+1)*D of every position: view as (B, T, H, D) "
        "first, then swap T and H; viewing straight as (B, H, T, D) mixes positions into heads."
    ),
)


@uses(SPLIT_HEADS)
def check_split_heads(split_heads) -> None:
    """The contract, then: a width that does not divide raises ValueError."""
    what = "split_heads(x of shape (2, 3, 10), n_heads=4)"
    try:
        observe(call, split_heads, {"args": [torch.zeros(2, 3, 10), 4]}, what)
    except AnswerRaised as err:
        if err.type_name == "ValueError":
            return
        raise CheckError(
            _(
                "{what} raised {error}: check that C is divisible by n_heads first and "
                "raise ValueError with a message that names both numbers."
            ).format(what=what, error=err.type_name)
        ) from None
    raise CheckError(
        _(
            "{what} returned a result: 10 channels cannot be split into 4 heads. Raise ValueError."
        ).format(what=what)
    )


# ---------------------------------------------------------------------------------------
# 8. encoder_layer_forward


def check_encoder_layer_forward(encoder_layer_forward) -> None:
    """Against nn.TransformerEncoderLayer itself: post- and pre-norm, relu and gelu, several
    widths and heads, train and eval mode (no dropout); the layer's mode is left alone."""
    device = get_device()
    g = torch.Generator().manual_seed(46)
    configs = [  # (B, T, d_model, heads, d_ff, norm_first, activation, training)
        (2, 5, 8, 2, 16, False, "relu", False),
        (1, 3, 12, 3, 8, False, "gelu", True),
        (3, 4, 8, 4, 32, True, "relu", False),
        (2, 6, 6, 1, 12, True, "gelu", True),
        (2, 1, 16, 4, 16, False, "relu", True),
    ]
    for i, (b, t, c, h, d_ff, norm_first, activation, training) in enumerate(configs):
        case = {
            "seed": 460 + i,
            "d_model": c,
            "n_heads": h,
            "d_ff": d_ff,
            "norm_first": norm_first,
            "activation": activation,
            "training": training,
            "device": str(device),
            "x": torch.randn(b, t, c, generator=g).to(device),
        }
        what = (
            f"encoder_layer_forward(a layer with d_model={c}, nhead={h}, "
            f"norm_first={norm_first}, activation={activation!r}, in "
            f"{'train' if training else 'eval'} mode; x of shape ({b}, {t}, {c}))"
        )
        seen = observe(probes.probe_encoder_layer_forward, encoder_layer_forward, case, what)
        _rule_kept(seen, what, _encoder_rule())
        layer = probes.build_encoder_layer(case)
        with torch.no_grad():
            expected = layer(case["x"])
        out = seen["out"]
        check_type(out, torch.Tensor, what)
        check_shape(out, (b, t, c), names="B T C", what=what)
        try:
            assert_close(out.detach(), expected, what=what, rtol=1e-4, atol=1e-4)
        except CheckError as err:
            raise CheckError(f"{err}{_encoder_hint(norm_first, activation, h)}") from None
        if seen["training_after"] != training:
            raise CheckError(
                _(
                    "{what} left the layer in {mode} mode. "
                    "Do not call layer.eval() or layer.train(): the caller owns its mode."
                ).format(what=what, mode="train" if seen["training_after"] else "eval")
            )


def _encoder_hint(norm_first: bool, activation: str, heads: int) -> str:
    order = (
        _("pre-norm (norm_first=True): x + attn(norm1(x)), then x + ff(norm2(x))")
        if norm_first
        else _("post-norm (norm_first=False): norm1(x + attn(x)), then norm2(x + ff(x))")
    )
    return _(
        " This layer is {order}; its feed-forward uses layer.activation ({activation}); "
        "attention splits C into {heads} heads and scales by sqrt(C / heads)."
    ).format(order=order, activation=activation, heads=heads)
