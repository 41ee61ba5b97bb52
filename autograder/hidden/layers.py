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
from autograder.contracts import FLOAT64_EXACT, TOLERANCE, Build, Contract, Draw, Inputs, uses
from autograder.probes import layers as probes
from tutorial_lib.checks import CheckError, assert_close, check_dtype, check_shape, check_type
from tutorial_lib.i18n import _


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
        "layer, its self_attn or F.scaled_dot_product_attention would only repeat what you are "
        "asked to rebuild."
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


def _conv_length(size: int, kernel_size: int, stride=1, padding=0, dilation=1) -> int:
    """What a real Conv1d makes of ``size`` positions (PyTorch as the oracle)."""
    conv = torch.nn.Conv1d(1, 1, kernel_size, stride=stride, padding=padding, dilation=dilation)
    with torch.no_grad():
        return int(conv(torch.zeros(1, 1, size)).shape[-1])


def _draw_conv(d: Draw) -> Inputs:
    """A kernel, stride, padding and dilation, and an input the dilated kernel fits in (the
    smallest such input included: one output position, or one thanks to the padding only)."""
    k, s, p, dil = d.size(1, 7), d.size(1, 4), d.size(0, 3, empty_ok=True), d.size(1, 3)
    span = dil * (k - 1) + 1
    size = max(1, span - 2 * p) + d.size(0, 12, empty_ok=True)
    return Inputs((size, k), {"stride": s, "padding": p, "dilation": dil})


def _compare_conv(got, expected: int, what: str, inputs: Inputs) -> None:
    if _int(got, what) != expected:
        raise CheckError(
            _(
                "{what} returned {got}, but a real nn.Conv1d gives {expected} positions. The "
                "dilated kernel spans dilation*(kernel_size-1)+1 inputs, padding adds to both "
                "ends, and the division by the stride is floored (not rounded) before the +1."
            ).format(what=what, got=got, expected=expected)
        )


CONV_OUTPUT_SIZE = Contract(
    "conv_output_size",
    _conv_length,
    _draw_conv,
    families=("values", "edges"),
    compare=_compare_conv,
    arg_names=("size", "kernel_size"),
)


# Inputs the kernel fits in, where a few draws rarely go: a stride wider than the padded
# input (one position all the same), padding wider than the kernel, an exact fit, a fit thanks
# to the padding only. A real Conv1d takes them all.
_CONV_FITS = [(1, 1, 2, 0, 1), (3, 1, 5, 0, 1), (2, 3, 4, 1, 1), (2, 1, 1, 2, 1), (5, 5, 9, 0, 1)]
_CONV_FITS += [(1, 3, 3, 1, 1), (5, 3, 7, 0, 2), (4, 2, 9, 3, 3)]


@uses(CONV_OUTPUT_SIZE)
def check_conv_output_size(conv_output_size) -> None:
    """The contract against a real convolution, then: inputs that fit where draws rarely go (a
    stride wider than the input, padding wider than the kernel) give a size, and a kernel that
    does not fit raises."""
    for size, k, s, p, d in _CONV_FITS:
        what = f"conv_output_size({size}, {k}, stride={s}, padding={p}, dilation={d})"
        case = {"args": [size, k], "kwargs": {"stride": s, "padding": p, "dilation": d}}
        expected = _conv_length(size, k, s, p, d)
        try:
            got = observe(call, conv_output_size, case, what)["result"]
        except AnswerRaised as err:
            raise CheckError(
                _(
                    "{what} raised {error}, but the dilated kernel fits in the padded input and "
                    "a real nn.Conv1d gives {expected} positions. Raise only when "
                    "dilation*(kernel_size-1)+1 is larger than size + 2*padding: a stride wider "
                    "than the input still gives one position, and padding may be wider than "
                    "the kernel."
                ).format(what=what, error=err.type_name, expected=expected)
            ) from None
        _compare_conv(got, expected, what, Inputs((size, k), {}))
    # the last two: (size + 2p - span) / stride in (-1, 0), which int() truncates to 0
    cases = [(3, 5, 1, 0, 1), (4, 3, 1, 0, 2), (2, 7, 2, 1, 1), (1, 2, 1, 0, 1), (4, 3, 2, 0, 2)]
    for size, k, s, p, d in [*cases, (5, 4, 3, 0, 2)]:
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


def _draw_stack(d: Draw) -> Inputs:
    """A stack of (kernel_size, stride) pairs, the empty stack and 1-wide layers included."""
    depth = d.size(0, 6, empty_ok=True)
    return Inputs(([(d.size(1, 5), d.size(1, 3)) for _layer in range(depth)],))


def _compare_field(got, expected: int, what: str, inputs: Inputs) -> None:
    if _int(got, what) != expected:
        raise CheckError(
            _(
                "{what} returned {got}, but one output of that stack spans {expected} input "
                "positions, first to last (measured with autograd). Each layer adds "
                "(kernel_size - 1) times the product of the strides of all the layers BEFORE "
                "it; its own stride only matters for the layers after it."
            ).format(what=what, got=got, expected=expected)
        )


RECEPTIVE_FIELD = Contract(
    "receptive_field",
    _measured_field,
    _draw_stack,
    families=("values", "edges"),
    compare=_compare_field,
    arg_names=("layers",),
)


@uses(RECEPTIVE_FIELD)
def check_receptive_field(receptive_field) -> None:
    """The contract against autograd's measure (the caller's list comes back unchanged)."""


# ---------------------------------------------------------------------------------------
# 3. batch_norm


def _reference_batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps):
    """F.batch_norm, with its running statistics updated on copies and returned."""
    new_mean, new_var = running_mean.clone(), running_var.clone()
    y = F.batch_norm(x, new_mean, new_var, weight, bias, training, momentum, eps)
    return y, new_mean, new_var


def _draw_batch_norm(d: Draw) -> Inputs:
    """(N, C), (N, C, L) or (N, C, H, W); weight and bias each given or None; both modes."""
    training = d.draw(st.booleans())
    spatial = [d.size(1, 3) for _axis in range(d.draw(st.integers(0, 2)))]
    n, c = d.size(1, 4), d.size(1, 4)
    if training and n * math.prod(spatial) < 2:
        n = 2  # a batch statistic needs two values per channel (F.batch_norm refuses one)
    # weight and bias each present or None (F.batch_norm takes either alone)
    scale, shift = d.draw(st.booleans()), d.draw(st.booleans())
    args = (
        d.tensor(n, c, *spatial, low=-3.0, high=4.0),
        d.tensor(c),
        d.tensor(c, low=0.5, high=1.5),  # a variance is positive
        d.tensor(c) if scale else None,
        d.tensor(c) if shift else None,
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
    tolerance=FLOAT64_EXACT,
)


@uses(BATCH_NORM)
def check_batch_norm(batch_norm) -> None:
    """The contract: against F.batch_norm on every input family, the caller's tensors kept,
    no route to a library normalisation (a function, a torch.ops operator, TorchScript: their
    kernels); then: the new running statistics are new tensors, with no graph (buffers)."""
    g = torch.Generator().manual_seed(44)
    for training in (True, False):
        case = {
            "x": torch.randn(4, 3, 2, generator=g, dtype=torch.float64),
            "running_mean": torch.randn(3, generator=g, dtype=torch.float64),
            "running_var": torch.rand(3, generator=g, dtype=torch.float64) + 0.5,
            "weight": torch.rand(3, generator=g, dtype=torch.float64) + 0.5,
            "bias": torch.randn(3, generator=g, dtype=torch.float64),
            "training": training,
        }
        mode = "training=True" if training else "training=False"
        what = f"batch_norm(x of shape (4, 3, 2) requiring grad, ..., {mode})"
        seen = observe(probes.probe_batch_norm_stats, batch_norm, case, what)
        for name, shared, graph in zip(
            ("new_running_mean", "new_running_var"), seen["shared"], seen["graph"], strict=True
        ):
            if shared:
                raise CheckError(
                    _(
                        "{what} returned the caller's own tensor (or a view of it) as "
                        "{name}: return a new tensor (.clone()), even when its values are "
                        "unchanged."
                    ).format(what=what, name=name)
                )
            if graph:
                raise CheckError(
                    _(
                        "{what}: {name} requires grad. Running statistics are buffers, as "
                        "F.batch_norm keeps them: update them from the detached batch "
                        "statistics (mean.detach()), so they carry no graph."
                    ).format(what=what, name=name)
                )


# ---------------------------------------------------------------------------------------
# 4. mean_embedding


def _reference_mean_embedding(tokens, embedding, pad_id):
    keep = (tokens != pad_id).unsqueeze(-1)
    return (embedding(tokens) * keep).sum(1) / keep.sum(1).clamp(min=1)


def _draw_mean_embedding(d: Draw) -> Inputs:
    """Pads anywhere, a row of only pads, tables with no padding_idx, with pad_id as theirs or
    with another one. (No dtypes family: the text does not ask to keep a float16 table's dtype,
    and a float32 mask times a float16 table is float32.)"""
    num, dim = d.size(2, 9), d.size(1, 5)
    b, t = d.size(1, 4), d.size(1, 6)
    pad_id = d.draw(st.integers(0, num - 1))
    tokens = d.integers(b, t, high=num)
    tokens = torch.where(d.bools(b, t), tokens, torch.full_like(tokens, pad_id))
    if d.draw(st.booleans()):
        tokens[-1] = pad_id  # a row of only pads
    padding_idx = d.draw(st.sampled_from([None, pad_id, (pad_id + 1) % num]))
    spec = {
        "seed": d.draw(st.integers(0, 99)),
        "num": num,
        "dim": dim,
        "padding_idx": padding_idx,
        "device": "cpu",
        # the caller's choices, which the answer must leave as they are
        "frozen": d.draw(st.booleans()),
        "training": d.draw(st.booleans()),
    }
    label = f"an Embedding({num}, {dim}, padding_idx={padding_idx})" + (
        (", frozen" if spec["frozen"] else "") + ("" if spec["training"] else ", in eval mode")
    )
    return Inputs((tokens, Build(probes.build_embedding, spec, label), pad_id))


def _compare_mean_embedding(got, expected, what: str, inputs: Inputs) -> None:
    if isinstance(got, torch.Tensor) and got.shape == expected.shape and got.isnan().any():
        raise CheckError(
            _(
                "{what} has NaN in rows {rows}: "
                "a row of only pads divides by a count of zero. Clamp the count to at least 1 "
                "so such a row comes out as zeros."
            ).format(what=what, rows=got.isnan().any(1).nonzero().flatten().tolist())
        )
    rtol, atol = TOLERANCE[expected.dtype]
    assert_close(got, expected.detach(), rtol=rtol, atol=atol, what=what)


MEAN_EMBEDDING = Contract(
    "mean_embedding",
    _reference_mean_embedding,
    _draw_mean_embedding,
    families=("values", "edges", "strides", "device"),
    compare=_compare_mean_embedding,
    arg_names=("tokens", "embedding", "pad_id"),
    hint=lambda family, inputs: _(
        "Mask the pads out with (tokens != pad_id), the pad_id you are given (not "
        "embedding.padding_idx), and divide by the number of kept tokens, clamped to at "
        "least 1."
    ),
)


@uses(MEAN_EMBEDDING)
def check_mean_embedding(mean_embedding) -> None:
    """The contract (values, pads, dtypes, layouts, device, tokens kept), then: the gradient
    reaches the table's weight (a contract differentiates tensor arguments, not a module's
    parameters) and carries no NaN from a row of only pads."""
    configs = [(3, 5, 11, 4, 0, 0), (4, 6, 9, 3, 0, None), (3, 3, 8, 2, 2, 5)]
    g = torch.Generator().manual_seed(43)
    for i, (b, t, num, dim, pad_id, padding_idx) in enumerate(configs):
        tokens = torch.randint(0, num, (b, t), generator=g)
        keep = torch.rand(b, t, generator=g) > 0.4
        tokens = torch.where(keep, tokens, torch.full_like(tokens, pad_id))
        tokens[0, -1] = pad_id  # at least one pad
        tokens[-1] = pad_id  # a row of only pads
        case = {
            "seed": 430 + i,
            "num": num,
            "dim": dim,
            "padding_idx": padding_idx,
            "device": "cpu",
            "tokens": tokens,
            "pad_id": pad_id,
            "weights": torch.randn(b, dim, generator=g),
        }
        what = (
            f"mean_embedding(tokens of shape ({b}, {t}), a table of {num} rows "
            f"{'with padding_idx=' + str(padding_idx) if padding_idx is not None else 'without padding_idx'}"
            f", pad_id={pad_id})"
        )
        grad = observe(probes.probe_mean_embedding, mean_embedding, case, what)["grad"]
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
        w = probes.build_embedding(case).weight.detach()
        mask = (tokens != pad_id).unsqueeze(-1).float()  # (B, T, 1)
        count = mask.sum(1).clamp(min=1)  # (B, 1)
        expected_grad = torch.zeros_like(w)  # d/dW of sum(out * weights)
        share = (mask / count.unsqueeze(1)).squeeze(-1)  # (B, T)
        flat = (share.unsqueeze(-1) * case["weights"].unsqueeze(1)).reshape(-1, dim)
        expected_grad.index_add_(0, tokens.reshape(-1), flat)
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


def _reference_causal_mask(t_q, t_k, device=None):
    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(t_k - t_q)


def _draw_causal_mask(d: Draw) -> Inputs:
    """t_q <= t_k (one query, square, cached keys); device= absent, None, the CPU or, in the
    ``device`` family, meta (standing in for a GPU)."""
    t_k = d.size(1, 8)
    t_q = d.size(1, t_k)
    if d.family == "device":
        return Inputs((t_q, t_k), {"device": torch.device("meta")})
    device = d.draw(st.sampled_from(["absent", None, torch.device("cpu")]))
    return Inputs((t_q, t_k), {} if device == "absent" else {"device": device})


def _compare_causal_mask(got, expected, what: str, inputs: Inputs) -> None:
    t_q, t_k = inputs.args
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


CAUSAL_MASK = Contract(
    "causal_mask",
    _reference_causal_mask,
    _draw_causal_mask,
    families=("values", "edges", "device"),
    compare=_compare_causal_mask,
    arg_names=("t_q", "t_k"),
)


@uses(CAUSAL_MASK)
def check_causal_mask(causal_mask) -> None:
    """The contract: every t_q <= t_k against tril(t_k - t_q), made on the device asked for,
    and autograd, the default dtype and the default device left as they were."""


# ---------------------------------------------------------------------------------------
# 6. attention


def _reference_attention(q, k, v, mask=None):
    """Attention written out (the reference for every dtype, masks of any broadcast shape)."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


# Now and then, in the values family, every score is about +-800: exp() of it overflows to
# inf (or underflows to 0, and 0 / 0) in float64, so a softmax written as
# exp(s) / exp(s).sum(-1) without subtracting the row's maximum gives NaN where the reference
# does not. In float64: a float32 score of 100 carries rounding errors that its near one-hot
# weights magnify to the size of float32's tolerance, and right answers would fail by chance.
# And now and then, with a mask, every score is about -20000: a hidden key filled with a
# finite number above that (-1e4, a common choice) then outscores the visible keys and takes
# their weight, where -inf (or the dtype's most negative number) gives it exactly zero.
_LARGE_SCORE = 800.0
_HUGE_SCORE = 25 * _LARGE_SCORE


def _draw_attention(d: Draw) -> Inputs:
    """Batch axes (none to two), T_q != T_k, D != D_v; no mask, a causal, padding or random one;
    in ``values``, now and then float64 scores large enough to overflow a softmax without its
    maximum, or negative enough, with a mask, to outscore a finite fill such as -1e4."""
    batch = [d.size(1, 3) for _axis in range(d.draw(st.integers(0, 2)))]
    t_q, t_k, dim, dim_v = d.size(1, 5), d.size(1, 6), d.size(1, 8), d.size(1, 6)
    q, k = d.tensor(*batch, t_q, dim), d.tensor(*batch, t_k, dim)
    v = d.tensor(*batch, t_k, dim_v)
    if d.family == "values" and d.draw(st.booleans()):
        q, k, v = q.double(), k.double(), v.double()
        k[..., 0] = 1.0  # a shared first channel: every score shifted by the same amount
        score = d.draw(st.sampled_from([_LARGE_SCORE, -_LARGE_SCORE, -_HUGE_SCORE]))
        q[..., 0] = score * math.sqrt(dim)
    huge = bool(q.abs().max() >= _HUGE_SCORE)  # only worth drawing with a mask
    kind = d.draw(
        st.sampled_from(
            ["causal", "random", "padding"] if huge else [None, "causal", "random", "padding"]
        )
    )
    mask = None
    if kind == "causal":
        mask = torch.ones(t_q, t_k, dtype=torch.bool).tril(t_k - t_q)
        mask[..., 0] = True  # a query before every key still sees the first
    elif kind == "random":
        mask = d.bools(*batch, t_q, t_k)
        mask[..., 0] = True  # every query sees at least one key
    elif kind == "padding":
        # a key-padding mask (..., 1, T_k), shared by the queries and, with fewer leading
        # axes or size-1 ones (B, 1, 1, T_k: over the heads), by some batch axes too:
        # "broadcastable to (..., T_q, T_k)", not of that shape
        lead = [
            d.draw(st.sampled_from([n, 1])) for n in batch[d.draw(st.integers(0, len(batch))) :]
        ]
        mask = d.bools(*lead, 1, t_k)
        mask[..., 0] = True
    return Inputs((q, k, v, mask))


def _attention_hint(family: str, inputs: Inputs) -> str:
    q, k, v, mask = inputs.args
    hints = []
    if q.shape[-1] != v.shape[-1]:
        hints.append(_("Scale the scores by sqrt(D), the size of q's and k's last axis (not v's)."))
    if mask is not None and mask.shape[-2:] != (q.shape[-2], k.shape[-2]):
        hints.append(
            _(
                "The mask need only broadcast against the scores (a padding mask of shape "
                "(..., 1, T_k), say): fill with scores.masked_fill(~mask, float('-inf')) or "
                "torch.where(mask, scores, -inf), not by indexing with the mask or reshaping it."
            )
        )
    if q.abs().max() >= _HUGE_SCORE:  # the values family's float64 draw of scores of -20000
        hints.append(
            _(
                "These inputs are float64 and every score is about -20000: a hidden key filled "
                "with a finite number above that (-1e4, say) outscores the visible keys and "
                "takes their weight. Fill hidden scores with float('-inf') (or "
                "torch.finfo(scores.dtype).min), and let torch.softmax subtract each row's "
                "maximum."
            )
        )
    elif q.abs().max() >= _LARGE_SCORE:  # the values family's float64 draw of large scores
        hints.append(
            _(
                "These inputs are float64 and their scores about 800 (or -800): exp() of such "
                "scores overflows to inf (or underflows to 0, and 0 / 0), so "
                "exp(s) / exp(s).sum(-1) gives NaN. Use torch.softmax, or subtract each row's "
                "maximum before exp; and compute in float64, not in a float32 working copy."
            )
        )
    elif family == "dtypes" and q.dtype == torch.float64:
        hints.append(
            _(
                "Compute in the inputs' dtype: a float32 working copy (even one cast back to "
                "float64 at the end) is only good to about 1e-7."
            )
        )
    return " ".join(hints)


ATTENTION = Contract(
    "attention",
    _reference_attention,
    _draw_attention,
    rules=tuple(probes.ATTENTION_RULES),
    rule_text=_attention_rule,
    arg_names=("q", "k", "v", "mask"),
    hint=_attention_hint,
    tolerance=FLOAT64_EXACT,
)


@uses(ATTENTION)
def check_attention(attention) -> None:
    """The contract: against attention written out, on every input family, with no route to
    the library's attention (a function, a torch.ops operator, TorchScript: its kernels)."""


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
            if "10" in err.message and "4" in err.message:
                return
            raise CheckError(
                _(
                    "{what} raised ValueError({message!r}): name both numbers in the message, "
                    "the 10 channels and the 4 heads, so the caller sees what to fix."
                ).format(what=what, message=err.message)
            ) from None
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


def _reference_encoder_layer(layer, x):
    return layer(x)


def _draw_encoder_layer(d: Draw) -> Inputs:
    """Post- and pre-norm, relu and gelu, one head or several, train or eval mode (no dropout);
    x of shape (B, T, C), one position and a batch of one included."""
    n_heads = d.size(1, 3)
    # C >= 4: the layer norms of a narrower layer leave too little of x to tell answers apart
    spec = {
        "d_model": n_heads * d.size(max(2, -(-4 // n_heads)), 4),
        "n_heads": n_heads,
        "d_ff": d.size(1, 8),
        # silu: neither relu nor gelu (layer.activation_relu_or_gelu is 0)
        "activation": d.draw(st.sampled_from(["relu", "gelu", "silu"])),
        "eps": d.draw(st.sampled_from([1e-5, 0.1])),  # layer_norm_eps: norm1.eps, not 1e-5
        "norm_first": d.draw(st.booleans()),
        "training": d.draw(st.booleans()),
        "seed": d.draw(st.integers(0, 99)),
        "device": "cpu",
    }
    label = (
        f"a layer with d_model={spec['d_model']}, nhead={n_heads}, "
        f"norm_first={spec['norm_first']}, activation={spec['activation']!r}, "
        f"layer_norm_eps={spec['eps']}, in "
        f"{'train' if spec['training'] else 'eval'} mode"
    )
    x = d.tensor(d.size(1, 3), d.size(1, 5), spec["d_model"])
    return Inputs((Build(probes.build_encoder_layer, spec, label), x))


def _compare_encoder_layer(got, expected, what: str, inputs: Inputs) -> None:
    assert_close(got, expected.detach(), rtol=1e-4, atol=1e-4, what=what)


def _encoder_hint(family: str, inputs: Inputs) -> str:
    spec = inputs.args[0].spec
    order = (
        _("pre-norm (norm_first=True): x + attn(norm1(x)), then x + ff(norm2(x))")
        if spec["norm_first"]
        else _("post-norm (norm_first=False): norm1(x + attn(x)), then norm2(x + ff(x))")
    )
    return (
        _(
            " This layer is {order}; its feed-forward uses layer.activation ({activation}); "
            "attention splits C into {heads} heads and scales by sqrt(C / heads)."
        )
        .format(order=order, activation=spec["activation"], heads=spec["n_heads"])
        .strip()
    )


ENCODER_LAYER_FORWARD = Contract(
    "encoder_layer_forward",
    _reference_encoder_layer,
    _draw_encoder_layer,
    # no dtypes: it turns x alone into float64, and the layer's weights stay float32
    families=("values", "edges", "strides", "device", "grad"),
    rules=probes.ENCODER_RULES,
    rule_text=_encoder_rule,
    compare=_compare_encoder_layer,
    arg_names=("layer", "x"),
    hint=_encoder_hint,
)


@uses(ENCODER_LAYER_FORWARD)
def check_encoder_layer_forward(encoder_layer_forward) -> None:
    """The contract: against nn.TransformerEncoderLayer itself, the layer's mode and weights
    left as they were, gradients reaching x, without calling the layer or its self_attn,
    nor the library's attention or the layer's own kernels reached another way (torch.ops,
    a copy compiled by torch.jit.script); on another device, even where the answer reads
    values back (the device family then runs it on stand-ins that keep them,
    ``probes/devices.py``)."""
