"""Right answers for 01_tensors unlike the solution (see autograder/right_answers/__init__.py)."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "labels_to_tensor": [
        RightAnswer(
            name="long-tensor-then-to",
            why="torch.LongTensor is the int64 tensor class: it builds int64 even from an empty "
            "list, and .to(device) moves it; the text only asks for int64 on device.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.LongTensor(labels).to(device)\n"
            ),
        ),
        RightAnswer(
            name="as-tensor-long",
            why="torch.as_tensor with dtype=torch.long (another name for int64) and device=: "
            "a list has no memory to share, so it copies like torch.tensor.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.as_tensor(labels, dtype=torch.long, device=device)\n"
            ),
        ),
        RightAnswer(
            name="through-numpy-int64",
            why="A NumPy int64 array of the labels, shared into a tensor and moved: the same "
            "values, dtype and device.",
            code=(
                "import numpy as np\n"
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.from_numpy(np.array(labels, dtype=np.int64)).to(device)\n"
            ),
        ),
        RightAnswer(
            name="tensor-then-long",
            why="torch.tensor infers int64 from Python ints (and float32 from an empty list); .long() makes both int64 without a detour through floats for the non-empty case.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.tensor(labels, device=device).long()\n"
            ),
        ),
        RightAnswer(
            name="new-tensor-of-an-empty-anchor",
            why="An empty int64 tensor made on device, then anchor.new_tensor(labels): new_tensor takes the anchor's dtype and device, so an empty list and large labels come out right.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    anchor = torch.empty(0, dtype=torch.int64, device=device)\n"
                "    return anchor.new_tensor(labels)\n"
            ),
        ),
        RightAnswer(
            name="stacked-0d-tensors-or-empty",
            why="Each label as a 0-d int64 tensor on device, stacked; the empty list (nothing to stack) gets its own empty int64 tensor on device.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    if not labels:\n"
                "        return torch.empty(0, dtype=torch.int64, device=device)\n"
                "    return torch.stack([torch.tensor(v, dtype=torch.int64, device=device) for v in labels])\n"
            ),
        ),
        RightAnswer(
            name="zeros-filled-by-index",
            why="A zero int64 tensor on device filled one label at a time: assigning a Python int into a tensor on any device is allowed.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    out = torch.zeros(len(labels), dtype=torch.int64, device=device)\n"
                "    for i, v in enumerate(labels):\n"
                "        out[i] = v\n"
                "    return out\n"
            ),
        ),
        RightAnswer(
            name="to-with-device-keyword",
            why="Built on the CPU as int64, then moved with .to(device=device, non_blocking=True): the keyword form of the move.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.as_tensor(labels, dtype=torch.int64).to(device=device, non_blocking=True)\n"
            ),
        ),
        RightAnswer(
            name="empty-on-device-then-copy",
            why="An empty int64 tensor of the right length made on device, the labels copied in from "
            "a CPU int64 tensor: copy_ may cross devices, and the empty list needs no copy.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    out = torch.empty(len(labels), dtype=torch.int64, device=device)\n"
                "    if labels:\n"
                "        out.copy_(torch.tensor(labels, dtype=torch.int64))\n"
                "    return out\n"
            ),
        ),
    ],
    "shared_and_copied": [
        RightAnswer(
            name="as-tensor-and-clone",
            why="torch.as_tensor shares a CPU array of any dtype when no dtype is asked for, "
            "and .clone() of it is an independent copy with the same dtype.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    shared = torch.as_tensor(a)\n"
                "    return shared, shared.clone()\n"
            ),
        ),
        RightAnswer(
            name="asarray-and-numpy-copy",
            why="torch.asarray shares by default; a NumPy copy of the array, shared into a "
            "tensor, is independent of a. Returned as a list, which unpacks the same.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return [torch.asarray(a), torch.from_numpy(a.copy())]\n"
            ),
        ),
        RightAnswer(
            name="deepcopy-of-shared",
            why="copy.deepcopy of the shared tensor is a new tensor with its own memory, the same "
            "dtype and shape.",
            code=(
                "import copy\n"
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    shared = torch.from_numpy(a)\n"
                "    return shared, copy.deepcopy(shared)\n"
            ),
        ),
        RightAnswer(
            name="flattened-copy-viewed-back",
            why="a.flatten() is always a new array (C order), torch.tensor copies it once more, and .view(a.shape) gives back the array's shape; a 0-d array is copied as it is.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    copied = torch.tensor(a.flatten()).view(a.shape) if a.ndim else torch.tensor(a)\n"
                "    return torch.from_numpy(a), copied\n"
            ),
        ),
    ],
    "to_nchw": [
        RightAnswer(
            name="movedim",
            why="movedim(-1, 1) moves the channel axis to position 1 and keeps the others in "
            "order: the same view as permute(0, 3, 1, 2).",
            code="def to_nchw(x):\n    return x.movedim(-1, 1)\n",
        ),
        RightAnswer(
            name="einsum-contiguous",
            why="einsum with the output letters in NCHW order; the text asks for the values, "
            "not for a view, so a contiguous copy is as good.",
            code=(
                "import torch\n"
                "def to_nchw(x):\n"
                "    return torch.einsum('nhwc->nchw', x).contiguous()\n"
            ),
        ),
        RightAnswer(
            name="two-transposes",
            why="transpose(1, 3) gives (N, C, W, H); a second transpose(2, 3) puts H before W.",
            code="def to_nchw(x):\n    return x.transpose(1, 3).transpose(2, 3)\n",
        ),
        RightAnswer(
            name="as-strided-with-the-inputs-strides",
            why="as_strided with x's own strides reordered (and its storage offset): the same view "
            "permute makes, on any layout.",
            code=(
                "def to_nchw(x):\n"
                "    n, h, w, c = x.shape\n"
                "    sn, sh, sw, sc = x.stride()\n"
                "    return x.as_strided((n, c, h, w), (sn, sc, sh, sw), x.storage_offset())\n"
            ),
        ),
        RightAnswer(
            name="rows-of-pixels-transposed",
            why="Merges H and W into one axis of pixels, transposes pixels and channels, and splits the pixels again: reshape copies where a permuted or empty x needs it.",
            code=(
                "import torch\n"
                "def to_nchw(x):\n"
                "    n, h, w, c = x.shape\n"
                "    return x.reshape(n, h * w, c).transpose(1, 2).reshape(n, c, h, w)\n"
            ),
        ),
    ],
    "flatten_features": [
        RightAnswer(
            name="reshape-with-explicit-size",
            why="reshape with the feature count computed from the shape: no -1 to infer, so it "
            "works on an empty batch, and reshape copies when the input is non-contiguous.",
            code=(
                "import math\n"
                "def flatten_features(x):\n"
                "    return x.reshape(x.shape[0], math.prod(x.shape[1:]))\n"
            ),
        ),
        RightAnswer(
            name="contiguous-then-view",
            why="contiguous() first makes view legal on any input; the sizes are given "
            "explicitly, so an empty batch works too.",
            code=(
                "def flatten_features(x):\n"
                "    features = 1\n"
                "    for size in x.shape[1:]:\n"
                "        features *= size\n"
                "    return x.contiguous().view(len(x), features)\n"
            ),
        ),
        RightAnswer(
            name="torch-flatten-end-dim",
            why="torch.flatten with start_dim=1 and end_dim=-1 spelled out.",
            code=(
                "import torch\n"
                "def flatten_features(x):\n"
                "    return torch.flatten(x, start_dim=1, end_dim=-1)\n"
            ),
        ),
        RightAnswer(
            name="reshape-minus-one-first",
            why="-1 in the batch position is inferred from the product of the other sizes, which is never 0 here: it works for N = 0.",
            code=(
                "import math, torch\n"
                "def flatten_features(x):\n"
                "    return x.reshape(-1, math.prod(x.shape[1:]))\n"
            ),
        ),
        RightAnswer(
            name="reduce-of-the-feature-sizes",
            why="The feature count as a product folded with functools.reduce (1 for no sizes), then "
            "reshape: no -1 to infer.",
            code=(
                "import operator\n"
                "from functools import reduce\n"
                "def flatten_features(x):\n"
                "    return x.reshape(x.size(0), reduce(operator.mul, x.shape[1:], 1))\n"
            ),
        ),
    ],
    "normalize_per_channel": [
        RightAnswer(
            name="functional-batch-norm",
            why="F.batch_norm in training mode with no running statistics computes exactly "
            "these per-channel population statistics; eps is passed on.",
            code=(
                "import torch.nn.functional as F\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    return F.batch_norm(x, None, None, training=True, eps=eps)\n"
            ),
        ),
        RightAnswer(
            name="var-mean-and-rsqrt",
            why="torch.var_mean gives both statistics in one call (unbiased=False is "
            "correction=0), and rsqrt multiplies instead of dividing.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    var, mean = torch.var_mean(x, dim=(0, 2, 3), keepdim=True, unbiased=False)\n"
                "    return (x - mean) * torch.rsqrt(var + eps)\n"
            ),
        ),
        RightAnswer(
            name="channels-first-rows",
            why="Moves C to the front and flattens the rest into rows of one channel each, "
            "computes the statistics per row with E[x^2] - E[x]^2, and broadcasts them back "
            "with view(1, C, 1, 1).",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    rows = x.transpose(0, 1).reshape(c, -1)  # (C, N*H*W)\n"
                "    mean = rows.mean(dim=1)\n"
                "    var = (rows * rows).mean(dim=1) - mean * mean\n"
                "    return (x - mean.view(1, c, 1, 1)) / (var.view(1, c, 1, 1) + eps).sqrt()\n"
            ),
        ),
        RightAnswer(
            name="batchnorm-module-without-running-stats",
            why="nn.BatchNorm2d with affine=False and track_running_stats=False keeps no buffers and "
            "always uses the batch statistics (population variance), moved to x's device and "
            "dtype, with the eps given.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    bn = torch.nn.BatchNorm2d(x.shape[1], eps=eps, affine=False, track_running_stats=False)\n"
                "    return bn.to(x.device, x.dtype)(x)\n"
            ),
        ),
        RightAnswer(
            name="std-mean-squared",
            why="torch.std_mean with correction=0 gives the population standard deviation; its square "
            "is the variance the text asks for.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    std, mean = torch.std_mean(x, dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / torch.sqrt(std * std + eps)\n"
            ),
        ),
        RightAnswer(
            name="float64-working-copy-cast-back",
            why="Statistics and result computed in float64 and cast back to x's dtype: more precise than x's own dtype, and the result keeps that dtype, as the text asks.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    xd = x.double()\n"
                "    mean = xd.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = xd.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return ((xd - mean) / torch.sqrt(var + eps)).to(x.dtype)\n"
            ),
        ),
        RightAnswer(
            name="two-pass-by-hand",
            why="The mean first, then the mean of the squared deviations (the population variance written out), both with keepdim=True.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    centred = x - x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = (centred * centred).mean(dim=(0, 2, 3), keepdim=True)\n"
                "    return centred / torch.sqrt(var + eps)\n"
            ),
        ),
    ],
    "pairwise_distances": [
        RightAnswer(
            name="matmul-identity-with-clamp",
            why="The faster identity |a|^2 + |b|^2 - 2 a.b that the text mentions, clamped at "
            "0 before the square root.",
            code=(
                "def pairwise_distances(a, b):\n"
                "    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T\n"
                "    return sq.clamp(min=0).sqrt()\n"
            ),
        ),
        RightAnswer(
            name="unsqueeze-and-vector-norm",
            why="unsqueeze instead of None indexing, and torch.linalg.vector_norm over the "
            "feature axis instead of squaring, summing and taking the root.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    diff = a.unsqueeze(1) - b.unsqueeze(0)  # (N, M, D)\n"
                "    return torch.linalg.vector_norm(diff, dim=-1)\n"
            ),
        ),
        RightAnswer(
            name="addmm-identity-clamped",
            why="The identity |a|^2 + |b|^2 - 2 a.b in one torch.addmm (alpha=-2), clamped at 0 "
            "before the square root, as the text allows.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    sq = torch.addmm((a * a).sum(1)[:, None] + (b * b).sum(1)[None], a, b.T, alpha=-2)\n"
                "    return sq.clamp_min(0).sqrt()\n"
            ),
        ),
        RightAnswer(
            name="einsum-of-differences",
            why="The (N, M, D) differences by broadcasting, their squared norms summed over D with einsum, then the square root.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    diff = a[:, None, :] - b[None, :, :]\n"
                '    return torch.einsum("nmd,nmd->nm", diff, diff).sqrt()\n'
            ),
        ),
    ],
    "masked_mean": [
        RightAnswer(
            name="masked-fill-and-count",
            why="masked_fill puts zeros on the padding (whatever it held), and the count is the "
            "mask's own sum per row, clamped at 1.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    steps = torch.arange(x.shape[1], device=x.device)\n"
                "    keep = (steps[None, :] < lengths[:, None]).unsqueeze(-1)  # (B, T, 1)\n"
                "    total = x.masked_fill(~keep, 0.0).sum(dim=1)\n"
                "    return total / keep.sum(dim=1).clamp(min=1).to(x.dtype)\n"
            ),
        ),
        RightAnswer(
            name="nanmean-then-zeros",
            why="Marks the padding as NaN, takes nanmean over time (which ignores it), and "
            "turns the NaN of an empty row into the zeros the text asks for.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    steps = torch.arange(x.shape[1], device=x.device)\n"
                "    pad = (steps[None, :] >= lengths[:, None]).unsqueeze(-1)\n"
                "    means = x.masked_fill(pad, float('nan')).nanmean(dim=1)\n"
                "    return torch.nan_to_num(means, nan=0.0)\n"
            ),
        ),
        RightAnswer(
            name="einsum-weights",
            why="The mean as a weighted sum over time: weights 1/length on real steps, 0 on "
            "the padding, applied with einsum after the padding is replaced by zeros.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    steps = torch.arange(x.shape[1], device=x.device)\n"
                "    mask = steps[None, :] < lengths[:, None]  # (B, T)\n"
                "    weights = mask.to(x.dtype) / lengths.clamp(min=1).to(x.dtype)[:, None]\n"
                "    clean = torch.where(mask[:, :, None], x, torch.zeros((), dtype=x.dtype, device=x.device))\n"
                "    return torch.einsum('bt,btf->bf', weights, clean)\n"
            ),
        ),
        RightAnswer(
            name="nan-to-num-then-mask",
            why="nan_to_num turns NaN into 0 and inf into the largest finite float, so multiplying by the mask zeroes every padding value.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    mask = (torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None])[:, :, None]\n"
                "    return (torch.nan_to_num(x) * mask).sum(1) / lengths.clamp(min=1)[:, None].to(x.dtype)\n"
            ),
        ),
        RightAnswer(
            name="cumsum-at-the-length",
            why="Zeroes the padding with torch.where, takes a running sum over time with a 0 in "
            "front, and reads each row's sum at index lengths[b]: one gather, no loop.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    b, t, f = x.shape\n"
                "    steps = torch.arange(t, device=x.device)\n"
                "    clean = torch.where((steps[None] < lengths[:, None])[..., None], x, 0)\n"
                "    sums = torch.cat([clean.new_zeros(b, 1, f), clean.cumsum(1)], 1)\n"
                "    total = sums[torch.arange(b, device=x.device), lengths]\n"
                "    return total / lengths.clamp(min=1)[:, None].to(x.dtype)\n"
            ),
        ),
        RightAnswer(
            name="mask-weights-through-matmul",
            why="Weights 1/length on real steps and 0 elsewhere, in x's dtype, applied with a batched "
            "matmul to the padding-free x: (B, 1, T) @ (B, T, F).",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    mask = torch.arange(x.shape[1], device=x.device)[None] < lengths[:, None]\n"
                "    weights = mask.to(x.dtype) / lengths.clamp(min=1)[:, None].to(x.dtype)\n"
                "    clean = torch.where(mask[..., None], x, 0)\n"
                "    return (weights[:, None, :] @ clean).squeeze(1)\n"
            ),
        ),
    ],
    "attention_scores": [
        RightAnswer(
            name="matmul-mT-tensor-scale",
            why="@ with k.mT (the last two dimensions transposed) and the scale as a tensor "
            "(torch.tensor(D).sqrt(), float32): the same scores within rounding.",
            code=(
                "import torch\n"
                "def attention_scores(q, k):\n"
                "    d = q.size(-1)\n"
                "    return (q @ k.mT) / torch.tensor(d).sqrt()\n"
            ),
        ),
        RightAnswer(
            name="bmm-with-reshape",
            why="Merges batch and heads with reshape (which copies a non-contiguous input when "
            "it must) and uses torch.bmm, then splits them again; scales q first.",
            code=(
                "import math, torch\n"
                "def attention_scores(q, k):\n"
                "    b, h, t, d = q.shape\n"
                "    s = k.shape[2]\n"
                "    q3 = q.reshape(b * h, t, d) / math.sqrt(d)\n"
                "    k3 = k.reshape(b * h, s, d)\n"
                "    return torch.bmm(q3, k3.transpose(1, 2)).reshape(b, h, t, s)\n"
            ),
        ),
        RightAnswer(
            name="broadcast-multiply-and-sum",
            why="Every query times every key by broadcasting, (B, H, T, 1, D) * (B, H, 1, S, D), "
            "summed over D: the dot products without matmul, then the scale.",
            code=(
                "import math\n"
                "def attention_scores(q, k):\n"
                "    return (q[..., :, None, :] * k[..., None, :, :]).sum(-1) / math.sqrt(q.shape[-1])\n"
            ),
        ),
        RightAnswer(
            name="baddbmm-with-alpha",
            why="Merges batch and heads with flatten (a copy where it must), lets baddbmm apply the "
            "scale as alpha, and splits them again with unflatten.",
            code=(
                "import math\n"
                "import torch\n"
                "def attention_scores(q, k):\n"
                "    b, h, t, d = q.shape\n"
                "    s = k.shape[2]\n"
                "    out = torch.baddbmm(q.new_zeros(b * h, t, s), q.flatten(0, 1), k.flatten(0, 1).mT, beta=0, alpha=1 / math.sqrt(d))\n"
                "    return out.unflatten(0, (b, h))\n"
            ),
        ),
        RightAnswer(
            name="scale-q-first",
            why="Divides q by sqrt(D) before the product: the same scores, (q / sqrt(D)) @ k^T, with transpose(2, 3), the last two axes of a 4-d k.",
            code=(
                "import math\n"
                "def attention_scores(q, k):\n"
                "    return (q / math.sqrt(q.shape[-1])) @ k.transpose(2, 3)\n"
            ),
        ),
    ],
}
