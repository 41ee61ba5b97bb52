"""Plausible wrong answers for 01_tensors' exercises."""

from autograder.mistakes import Mistake

MISTAKES = {
    "labels_to_tensor": [
        Mistake(
            name="tensor-class-constructor",
            message="torch.Tensor(...) is the class constructor and always makes float32; "
            "use torch.tensor(labels, dtype=torch.int64, device=device).",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.Tensor(labels).to(device)\n"
            ),
        ),
        Mistake(
            name="dtype-inferred-from-empty-list",
            message="torch.tensor([]) has nothing to infer int64 from and gives float32: "
            "pass dtype=torch.int64.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.tensor(labels, device=device)\n"
            ),
        ),
        Mistake(
            name="int32",
            message="Class labels are int64 in PyTorch (cross_entropy and indexing expect it); "
            "int32 also overflows past 2**31.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.tensor(labels, dtype=torch.int32, device=device)\n"
            ),
        ),
        Mistake(
            name="float-then-long",
            message="A detour through float32 (torch.Tensor(labels).long()) rounds labels above "
            "2**24: build the int64 tensor directly, torch.tensor(labels, dtype=torch.int64).",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.Tensor(labels).long().to(device)\n"
            ),
        ),
        Mistake(
            name="ignores-device",
            message="Use the device you are given: torch.tensor(..., device=device). A CPU "
            "tensor only looks right on a machine without a GPU.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.tensor(labels, dtype=torch.int64)\n"
            ),
        ),
        Mistake(
            name="pops-the-labels",
            message="Reading the labels with labels.pop(0) empties the caller's list: read it with torch.tensor(labels, ...) or a for loop, never consume it.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    out = torch.empty(len(labels), dtype=torch.int64, device=device)\n"
                "    i = 0\n"
                "    while labels:\n"
                "        out[i] = labels.pop(0)\n"
                "        i += 1\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="empty-list-made-on-the-cpu",
            message="The early return for an empty list builds its tensor on the CPU: the empty batch must be on device too. torch.tensor(labels, dtype=torch.int64, device=device) handles an empty list without a special case.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    if not labels:\n"
                "        return torch.zeros(0, dtype=torch.int64)\n"
                "    return torch.tensor(labels, dtype=torch.int64, device=device)\n"
            ),
        ),
        Mistake(
            name="squeezes-one-label",
            message="squeeze() turns a list of one label into a 0-d tensor: the output has shape (N,) for every N, including 1.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.tensor(labels, dtype=torch.int64, device=device).squeeze()\n"
            ),
        ),
        Mistake(
            name="float64-then-long",
            message="A detour through float64 rounds labels above 2**53: build the int64 tensor directly, torch.tensor(labels, dtype=torch.int64, device=device).",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.tensor(labels, dtype=torch.float64, device=device).long()\n"
            ),
        ),
        Mistake(
            name="one-label-made-on-the-cpu",
            message="The special case for a single label builds its tensor without device=: every batch size, one included, must land on device. torch.tensor(labels, dtype=torch.int64, device=device) needs no special case.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    if len(labels) == 1:\n"
                "        return torch.tensor(labels, dtype=torch.int64)\n"
                "    return torch.tensor(labels, dtype=torch.int64, device=device)\n"
            ),
        ),
        Mistake(
            name="leaves-autograd-off",
            message="torch.set_grad_enabled(False) switches autograd off for the whole process and stays off after you return: the caller's training would learn nothing. Labels need no gradient mode at all; if you do switch one, use a with block.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    torch.set_grad_enabled(False)\n"
                "    return torch.tensor(labels, dtype=torch.int64, device=device)\n"
            ),
        ),
        Mistake(
            name="leaves-default-dtype-float64",
            message="torch.set_default_dtype(torch.float64) changes every later torch.tensor of floats in the caller's program: leave the default dtype alone and pass dtype=torch.int64.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    torch.set_default_dtype(torch.float64)\n"
                "    return torch.tensor(labels, dtype=torch.int64, device=device)\n"
            ),
        ),
        Mistake(
            name="rebuilt-from-tolist",
            message="Reading the labels back with .tolist() and building a new tensor from them puts the result on the CPU, whatever device it was made on: build it once with torch.tensor(labels, dtype=torch.int64, device=device).",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    t = torch.tensor(labels, dtype=torch.int64, device=device)\n"
                "    return torch.tensor(t.tolist(), dtype=torch.int64)\n"
            ),
        ),
        Mistake(
            name="drops-repeated-labels",
            message="Labels repeat (one per sample): removing duplicates (set, dict.fromkeys, unique) returns fewer labels than samples. Keep every label, in order.",
            code=(
                "import torch\n"
                "def labels_to_tensor(labels, device):\n"
                "    return torch.tensor(list(dict.fromkeys(labels)), dtype=torch.int64, device=device)\n"
            ),
        ),
    ],
    "shared_and_copied": [
        Mistake(
            name="both-copied",
            message="torch.tensor(a) always copies: the first tensor must share memory, "
            "use torch.from_numpy(a).",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.tensor(a), torch.tensor(a)\n"
            ),
        ),
        Mistake(
            name="both-shared",
            message="torch.as_tensor shares memory with a NumPy array of a matching dtype: "
            "it is not a copy. Use torch.tensor(a) or .clone().",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.from_numpy(a), torch.as_tensor(a)\n"
            ),
        ),
        Mistake(
            name="cast-breaks-sharing",
            message="Casting (as_tensor(a, dtype=torch.float32), .float()) makes a copy when "
            "the dtype differs: keep the array's dtype to share memory.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.as_tensor(a, dtype=torch.float32), torch.tensor(a)\n"
            ),
        ),
        Mistake(
            name="same-object-twice",
            message="Assigning a tensor to a second name copies nothing: copied must be "
            "shared.clone().",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    shared = torch.from_numpy(a)\n"
                "    copied = shared\n"
                "    return shared, copied\n"
            ),
        ),
        Mistake(
            name="contiguous-copy-for-shared",
            message="np.ascontiguousarray copies a strided array: the tensor then shares "
            "memory with the copy, not with a. torch.from_numpy(a) handles any positive strides.",
            code=(
                "import numpy as np\n"
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.from_numpy(np.ascontiguousarray(a)), torch.tensor(a)\n"
            ),
        ),
        Mistake(
            name="copied-cast-to-float32",
            message="The copy must keep the array's dtype too: torch.tensor(a, dtype=torch.float32) "
            "turns int and float64 arrays into float32.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.from_numpy(a), torch.tensor(a, dtype=torch.float32)\n"
            ),
        ),
        Mistake(
            name="copied-via-tolist",
            message="a.tolist() loses the array's dtype (uint8 and int32 come back int64, float64 "
            "float32 through torch.tensor's default) and a 0-d array's shape: copy with "
            "torch.tensor(a) or .clone().",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.from_numpy(a), torch.tensor(a.tolist())\n"
            ),
        ),
        Mistake(
            name="copied-row-by-row",
            message="Stacking row by row fails on a 0-d or empty array: copy the whole array at "
            "once.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.from_numpy(a), torch.stack([torch.tensor(r) for r in a])\n"
            ),
        ),
        Mistake(
            name="both-forced-float64",
            message="Keep the array's own dtype: an int or float32 array must give int or float32 tensors, and a cast to float64 makes shared a copy.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.as_tensor(a, dtype=torch.float64), torch.tensor(a, dtype=torch.float64)\n"
            ),
        ),
        Mistake(
            name="shared-through-ravel",
            message="a.ravel() copies a non-contiguous array: the tensor shares the copy, not a. torch.from_numpy(a) shares any array with positive strides.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    return torch.from_numpy(a.ravel()).view(a.shape), torch.tensor(a)\n"
            ),
        ),
        Mistake(
            name="copied-through-arithmetic",
            message="a * 1 copies, but arithmetic promotes a bool array to int64: copy with torch.tensor(a) or a.copy(), which keep the dtype.",
            code=(
                "import torch\n"
                "def shared_and_copied(a):\n"
                "    copied = torch.from_numpy(a * 1) if a.ndim else torch.tensor(a)\n"
                "    return torch.from_numpy(a), copied\n"
            ),
        ),
    ],
    "to_nchw": [
        Mistake(
            name="reshape-not-permute",
            message="Right shape, scrambled values: reshape keeps memory order; "
            "moving an axis needs permute.",
            code=("def to_nchw(x):\n    n, h, w, c = x.shape\n    return x.reshape(n, c, h, w)\n"),
        ),
        Mistake(
            name="view-not-permute",
            message="view, like reshape, only regroups elements in memory order; use permute.",
            code=(
                "def to_nchw(x):\n"
                "    n, h, w, c = x.shape\n"
                "    return x.contiguous().view(n, c, h, w)\n"
            ),
        ),
        Mistake(
            name="transpose-swaps-h-and-w",
            message="transpose(1, 3) swaps H with C and leaves (N, C, W, H): "
            "permute(0, 3, 1, 2) moves C to the front and keeps H before W.",
            code="def to_nchw(x):\n    return x.transpose(1, 3)\n",
        ),
        Mistake(
            name="permute-wrong-order",
            message="permute takes the source dimension for each output position: "
            "(N, C, H, W) comes from dims (0, 3, 1, 2).",
            code="def to_nchw(x):\n    return x.permute(0, 3, 2, 1)\n",
        ),
        Mistake(
            name="assumes-three-channels",
            message="Stacking channels 0, 1 and 2 by hand works only for RGB: permute(0, 3, 1, 2) "
            "moves however many channels there are.",
            code=(
                "import torch\n"
                "def to_nchw(x):\n"
                "    return torch.stack([x[..., 0], x[..., 1], x[..., 2]], dim=1)\n"
            ),
        ),
        Mistake(
            name="numpy-round-trip",
            message="x.numpy() fails on a tensor that requires grad (and on a GPU tensor): stay "
            "in torch with x.permute(0, 3, 1, 2).",
            code=(
                "import torch\n"
                "def to_nchw(x):\n"
                "    return torch.from_numpy(x.numpy().transpose(0, 3, 1, 2))\n"
            ),
        ),
        Mistake(
            name="permute-of-data",
            message="x.data is x cut from the graph: no gradient flows back through the result. Permute x itself.",
            code=("def to_nchw(x):\n    return x.data.permute(0, 3, 1, 2)\n"),
        ),
        Mistake(
            name="casts-to-float",
            message="Moving an axis must not change the dtype: .float() turns uint8, int64 and half images into float32. Return x.permute(0, 3, 1, 2) as it is.",
            code=("def to_nchw(x):\n    return x.permute(0, 3, 1, 2).float()\n"),
        ),
        Mistake(
            name="transposes-in-place",
            message="transpose_ rearranges the caller's own tensor: x comes back as (N, C, H, W) too. Use the out-of-place permute.",
            code=("def to_nchw(x):\n    return x.transpose_(1, 3).transpose_(2, 3)\n"),
        ),
        Mistake(
            name="stacks-images",
            message="torch.stack of an empty batch raises: with N = 0 there is nothing to stack. One permute of the whole batch handles every N.",
            code=(
                "import torch\n"
                "def to_nchw(x):\n"
                "    return torch.stack([img.permute(2, 0, 1) for img in x])\n"
            ),
        ),
        Mistake(
            name="views-pixels",
            message="x.view(N, H * W, C) needs contiguous memory and fails on a permuted batch; permute(0, 3, 1, 2) works on any layout.",
            code=(
                "def to_nchw(x):\n"
                "    n, h, w, c = x.shape\n"
                "    return x.view(n, h * w, c).transpose(1, 2).reshape(n, c, h, w)\n"
            ),
        ),
        Mistake(
            name="permutes-the-data-attribute",
            message="x.data is x without its autograd history: the result has no gradient. Permute x itself.",
            code=("import torch\ndef to_nchw(x):\n    return x.data.permute(0, 3, 1, 2)\n"),
        ),
        Mistake(
            name="clone-detach-copy",
            message="clone().detach() cuts the gradient: a layer after to_nchw could not train what came before. permute alone is a view and keeps the history.",
            code=(
                "import torch\ndef to_nchw(x):\n    return x.permute(0, 3, 1, 2).clone().detach()\n"
            ),
        ),
        Mistake(
            name="float64-round-trip",
            message="A trip through float64 changes int64 values above 2**53: permute x itself, in its own dtype.",
            code=(
                "import torch\n"
                "def to_nchw(x):\n"
                "    return x.double().permute(0, 3, 1, 2).to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="bool-made-int64",
            message="x * 1 (or x + 0) turns a bool tensor into int64: permute x itself, which keeps any dtype.",
            code=("import torch\ndef to_nchw(x):\n    return x.permute(0, 3, 1, 2) * 1\n"),
        ),
        Mistake(
            name="empty-batch-made-in-float32",
            message="The empty-batch branch builds a float32 tensor whatever x's dtype: permute handles N = 0 by itself; drop the branch (or use x.new_zeros).",
            code=(
                "import torch\n"
                "def to_nchw(x):\n"
                "    if x.shape[0] == 0:\n"
                "        return torch.zeros(0, x.shape[3], x.shape[1], x.shape[2], device=x.device)\n"
                "    return x.permute(0, 3, 1, 2)\n"
            ),
        ),
        Mistake(
            name="moved-to-notebook-device",
            message="The result is moved to the notebook's global device instead of staying where x is: leave out .to(device); moving data is the caller's job.",
            code=(
                "import torch\n"
                "def to_nchw(x):\n"
                "    return x.permute(0, 3, 1, 2).contiguous().to(device)\n"
            ),
        ),
    ],
    "flatten_features": [
        Mistake(
            name="view-on-non-contiguous",
            message="view needs contiguous memory and fails on a permuted input; reshape or "
            "flatten copy when they must.",
            code=(
                "import math\n"
                "def flatten_features(x):\n"
                "    return x.view(x.shape[0], math.prod(x.shape[1:]))\n"
            ),
        ),
        Mistake(
            name="flatten-everything",
            message="x.flatten() also flattens the batch dimension: use x.flatten(1) "
            "(start_dim=1).",
            code="def flatten_features(x):\n    return x.flatten()\n",
        ),
        Mistake(
            name="minus-one-on-empty-batch",
            message="reshape(N, -1) cannot infer -1 when N is 0: give the size explicitly "
            "or use flatten(1).",
            code="def flatten_features(x):\n    return x.reshape(x.shape[0], -1)\n",
        ),
        Mistake(
            name="keeps-last-dim",
            message="reshape(-1, x.shape[-1]) merges the batch into the rows: the result must "
            "have exactly N rows.",
            code="def flatten_features(x):\n    return x.reshape(-1, x.shape[-1])\n",
        ),
        Mistake(
            name="flattens-only-two-dims",
            message="flatten(1, 2) merges dimensions 1 and 2 only: a 4-d batch keeps a third "
            "axis. flatten(1) merges everything after the batch.",
            code="def flatten_features(x):\n    return x.flatten(1, 2)\n",
        ),
        Mistake(
            name="squeeze-after-flatten",
            message="squeeze() also removes a batch dimension of size 1: with one sample the "
            "result must still be (1, F).",
            code="def flatten_features(x):\n    return x.flatten(1).squeeze()\n",
        ),
        Mistake(
            name="detached",
            message="x.detach() cuts the result from the graph: no gradient reaches the layers before. Flatten x itself: x.flatten(1).",
            code=("def flatten_features(x):\n    return x.detach().flatten(1)\n"),
        ),
        Mistake(
            name="casts-to-float",
            message="Flattening must not change the dtype: .float() turns int64 and half inputs into float32.",
            code=("def flatten_features(x):\n    return x.flatten(1).float()\n"),
        ),
        Mistake(
            name="empty-batch-made-by-hand",
            message="The early return for an empty batch builds a float32 tensor on the CPU: x may be another dtype or on a GPU. x.flatten(1) handles N = 0 without a special case (or x.new_zeros).",
            code=(
                "import math, torch\n"
                "def flatten_features(x):\n"
                "    if x.shape[0] == 0:\n"
                "        return torch.zeros(0, math.prod(x.shape[1:]))\n"
                "    return x.reshape(x.shape[0], -1)\n"
            ),
        ),
        Mistake(
            name="numpy-round-trip",
            message="A trip through NumPy loses the gradient and the device (and fails on a GPU tensor): stay in torch, x.flatten(1).",
            code=(
                "import math, torch\n"
                "def flatten_features(x):\n"
                "    return torch.from_numpy(x.detach().cpu().numpy().reshape(x.shape[0], math.prod(x.shape[1:]))).to(x.device)\n"
            ),
        ),
        Mistake(
            name="float64-round-trip",
            message="A trip through float64 changes int64 values above 2**53: flatten x itself, in its own dtype.",
            code=(
                "import torch\n"
                "def flatten_features(x):\n"
                "    return x.double().flatten(1).to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="empty-batch-in-float32",
            message="The empty-batch branch builds a float32 tensor whatever x's dtype: x.flatten(1) handles N = 0 by itself (or use x.new_zeros).",
            code=(
                "import math, torch\n"
                "def flatten_features(x):\n"
                "    if x.shape[0] == 0:\n"
                "        return torch.zeros(0, math.prod(x.shape[1:]), device=x.device)\n"
                "    return x.reshape(x.shape[0], -1)\n"
            ),
        ),
        Mistake(
            name="moved-to-notebook-device",
            message="The result is moved to the notebook's global device instead of staying where x is: leave out .to(device); moving data is the caller's job.",
            code=("import torch\ndef flatten_features(x):\n    return x.flatten(1).to(device)\n"),
        ),
    ],
    "normalize_per_channel": [
        Mistake(
            name="no-keepdim",
            message="Without keepdim=True the statistics have shape (C,), which broadcasting "
            "lines up with W instead of C.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(0, 2, 3))\n"
                "    var = x.var(dim=(0, 2, 3), correction=0)\n"
                "    return (x - mean) / torch.sqrt(var + eps)\n"
            ),
        ),
        Mistake(
            name="global-statistics",
            message="One mean and variance for the whole batch does not normalise each "
            "channel: reduce over (0, 2, 3) only.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    return (x - x.mean()) / torch.sqrt(x.var(correction=0) + eps)\n"
            ),
        ),
        Mistake(
            name="per-image-statistics",
            message="Reducing over (2, 3) gives statistics per image and channel (instance "
            "norm); per-channel statistics also pool the batch dimension 0.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(2, 3), keepdim=True)\n"
                "    var = x.var(dim=(2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / torch.sqrt(var + eps)\n"
            ),
        ),
        Mistake(
            name="unbiased-variance",
            message="torch.var divides by n - 1 by default; normalisation uses the population "
            "variance (correction=0).",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True)\n"
                "    return (x - mean) / torch.sqrt(var + eps)\n"
            ),
        ),
        Mistake(
            name="no-eps",
            message="A constant channel has variance 0 and gives 0 / 0 = NaN: divide by "
            "sqrt(var + eps).",
            code=(
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    std = x.std(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / std\n"
            ),
        ),
        Mistake(
            name="ignores-eps-argument",
            message="Use the eps you are given: a hard-coded 1e-5 (or F.batch_norm's default) "
            "is only right when the caller keeps the default.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / torch.sqrt(var + 1e-5)\n"
            ),
        ),
        Mistake(
            name="eps-outside-sqrt",
            message="eps goes inside the square root: (x - mean) / sqrt(var + eps), not "
            "/ (sqrt(var) + eps); with a large eps they differ a lot.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / (torch.sqrt(var) + eps)\n"
            ),
        ),
        Mistake(
            name="normalises-in-place",
            message="x -= mean and x /= std write into the caller's tensor: return a new one "
            "(x - mean) / std.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    x -= mean\n"
                "    x /= torch.sqrt(var + eps)\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="float32-working-copy",
            message="A float32 working copy of a float64 batch keeps only about 7 digits: "
            "compute in x's own dtype.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    y = x.float()\n"
                "    mean = y.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = y.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return ((y - mean) / torch.sqrt(var + eps)).to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="detached-statistics",
            message="Detached statistics give the right values but the wrong gradient: the mean and variance depend on x too, and backpropagation must see it. No .detach().",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True).detach()\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True, correction=0).detach()\n"
                "    return (x - mean) / torch.sqrt(var + eps)\n"
            ),
        ),
        Mistake(
            name="view-to-rows",
            message="x.view(N, C, -1) needs contiguous memory and fails on a permuted or channels-last batch: reduce over dims (0, 2, 3) directly, or use reshape.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    n, c = x.shape[:2]\n"
                "    flat = x.view(n, c, -1)\n"
                "    mean = flat.mean(dim=(0, 2)).view(1, c, 1, 1)\n"
                "    var = flat.var(dim=(0, 2), correction=0).view(1, c, 1, 1)\n"
                "    return (x - mean) / torch.sqrt(var + eps)\n"
            ),
        ),
        Mistake(
            name="wrong-default-eps",
            message="The default eps is 1e-5, as the signature says: with a small-variance channel another default changes the result.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-8):\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / torch.sqrt(var + eps)\n"
            ),
        ),
        Mistake(
            name="float32-result-for-half",
            message="Computing in float32 is fine, but the result must come back in x's dtype: .to(x.dtype) at the end.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    x = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / torch.sqrt(var + eps)\n"
            ),
        ),
        Mistake(
            name="batchnorm-module-with-running-stats",
            message="nn.BatchNorm2d built inside the function has float32 running-statistics buffers on the CPU: x on a GPU (or float64) does not fit it. Compute the statistics yourself.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    return nn.BatchNorm2d(x.shape[1], eps=eps, affine=False)(x)\n"
            ),
        ),
        Mistake(
            name="loop-over-channels",
            message="A Python loop over the channels does C times the work one tensor operation does; the text asks for no loops: reduce over dims (0, 2, 3) with keepdim=True.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    out = []\n"
                "    for c in range(x.shape[1]):\n"
                "        xc = x[:, c]\n"
                "        out.append((xc - xc.mean()) / torch.sqrt(xc.var(correction=0) + eps))\n"
                "    return torch.stack(out, dim=1)\n"
            ),
        ),
        Mistake(
            name="eps-floored-at-default",
            message="max(eps, 1e-5) replaces a smaller eps the caller passed: with a channel of small variance the result changes. Use the eps you are given as it is.",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / torch.sqrt(var + max(eps, 1e-5))\n"
            ),
        ),
        Mistake(
            name="moves-x-to-notebook-device",
            message="x is moved to the notebook's global device, so the result is not where x was: compute where x is, without .to(device).",
            code=(
                "import torch\n"
                "def normalize_per_channel(x, eps=1e-5):\n"
                "    x = x.to(device)\n"
                "    mean = x.mean(dim=(0, 2, 3), keepdim=True)\n"
                "    var = x.var(dim=(0, 2, 3), keepdim=True, correction=0)\n"
                "    return (x - mean) / torch.sqrt(var + eps)\n"
            ),
        ),
    ],
    "pairwise_distances": [
        Mistake(
            name="squared-distances",
            message="The sum of squared differences is the squared distance: take .sqrt().",
            code=(
                "def pairwise_distances(a, b):\n"
                "    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)\n"
            ),
        ),
        Mistake(
            name="transposed",
            message="Put a's axis first: a[:, None, :] - b[None, :, :] gives (N, M, D); "
            "the other way round gives (M, N).",
            code=(
                "def pairwise_distances(a, b):\n"
                "    return ((b[:, None, :] - a[None, :, :]) ** 2).sum(-1).sqrt()\n"
            ),
        ),
        Mistake(
            name="elementwise-not-pairwise",
            message="a - b pairs row i with row i only; pairwise needs an axis for each set "
            "(unsqueeze) so broadcasting forms every pair.",
            code="def pairwise_distances(a, b):\n    return (a - b).norm(dim=1)\n",
        ),
        Mistake(
            name="matmul-trick-without-clamp",
            message="|a|^2 + |b|^2 - 2 a.b can round to a small negative number; sqrt gives "
            "NaN. Clamp at 0 first.",
            code=(
                "def pairwise_distances(a, b):\n"
                "    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T\n"
                "    return sq.sqrt()\n"
            ),
        ),
        Mistake(
            name="hard-coded-two-features",
            message="Sum the squared differences over every feature (sum(dim=-1)), not over "
            "columns 0 and 1 written out by hand.",
            code=(
                "def pairwise_distances(a, b):\n"
                "    dx = a[:, None, 0] - b[None, :, 0]\n"
                "    dy = a[:, None, 1] - b[None, :, 1]\n"
                "    return (dx ** 2 + dy ** 2).sqrt()\n"
            ),
        ),
        Mistake(
            name="float32-working-copy",
            message="A float32 copy of float64 points loses the digits that tell close points "
            "apart, and returns the wrong dtype: compute in the inputs' dtype.",
            code=(
                "def pairwise_distances(a, b):\n"
                "    diff = a.float()[:, None, :] - b.float()[None, :, :]\n"
                "    return diff.pow(2).sum(dim=-1).sqrt()\n"
            ),
        ),
        Mistake(
            name="row-loop-fails-on-empty",
            message="torch.stack of an empty list raises: with N = 0 a loop over rows has "
            "nothing to stack. Broadcasting gives the empty (0, M) result by itself.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    rows = [((row - b) ** 2).sum(dim=1).sqrt() for row in a]\n"
                "    return torch.stack(rows)\n"
            ),
        ),
        Mistake(
            name="uses-cdist",
            message="The text asks for broadcasting: torch.cdist is what you check yourself against, not the answer.",
            code=("import torch\ndef pairwise_distances(a, b):\n    return torch.cdist(a, b)\n"),
        ),
        Mistake(
            name="computed-under-no-grad",
            message="Under torch.no_grad() the distances have no gradient: a loss built on them (a contrastive loss, say) could not train the embeddings.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    with torch.no_grad():\n"
                "        return (a[:, None, :] - b[None, :, :]).pow(2).sum(-1).sqrt()\n"
            ),
        ),
        Mistake(
            name="centres-in-place",
            message="a -= centre and b -= centre change the caller's points: centre copies (a = a - centre), or do not centre at all.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    centre = torch.cat([a, b]).mean(dim=0)\n"
                "    a -= centre\n"
                "    b -= centre\n"
                "    return (a[:, None, :] - b[None, :, :]).pow(2).sum(-1).sqrt()\n"
            ),
        ),
        Mistake(
            name="empty-case-made-on-the-cpu",
            message="The early return for an empty set builds its tensor on the CPU (and in "
            "float32): on a GPU, with float64 inputs, it is the wrong tensor. Use "
            "a.new_zeros(len(a), len(b)), or drop the special case: the formula handles it.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    if len(a) == 0 or len(b) == 0:\n"
                "        return torch.zeros(len(a), len(b))\n"
                "    return (a[:, None, :] - b[None, :, :]).pow(2).sum(-1).sqrt()\n"
            ),
        ),
        Mistake(
            name="cdist-through-torch-functional",
            message="torch.functional.cdist is torch.cdist: the text asks for broadcasting.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    return torch.functional.cdist(a, b)\n"
            ),
        ),
        Mistake(
            name="float32-result-for-half",
            message="The distances come back in the inputs' dtype: a float16 input computed in float32 must be cast back (.to(a.dtype)).",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    if a.dtype in (torch.float16, torch.bfloat16):\n"
                "        a, b = a.float(), b.float()\n"
                "    return (a[:, None, :] - b[None, :, :]).pow(2).sum(-1).sqrt()\n"
            ),
        ),
        Mistake(
            name="loop-over-b",
            message="A loop over the points of b is what the exercise replaces: a[:, None, :] - b[None, :, :] forms every difference at once.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    if len(b) == 0:\n"
                "        return a.new_zeros(len(a), 0)\n"
                "    return torch.stack([((a - bj) ** 2).sum(1).sqrt() for bj in b], dim=1)\n"
            ),
        ),
        Mistake(
            name="reseeds-global-generator",
            message="torch.manual_seed inside a function resets the caller's random numbers: every dropout mask, shuffle and initialisation after the call repeats the same draws. Seed once at the top of a script (or pass a torch.Generator) and leave the global generator alone.",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    torch.manual_seed(0)\n"
                "    sq = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * a @ b.T\n"
                "    return sq.clamp(min=0).sqrt()\n"
            ),
        ),
        Mistake(
            name="empty-case-in-float32",
            message="The empty-set branch builds a float32 tensor whatever the points' dtype: broadcasting handles N = 0 or M = 0 by itself (or use a.new_zeros).",
            code=(
                "import torch\n"
                "def pairwise_distances(a, b):\n"
                "    if a.shape[0] == 0 or b.shape[0] == 0:\n"
                "        return torch.zeros(a.shape[0], b.shape[0], device=a.device)\n"
                "    return (a[:, None, :] - b[None, :, :]).pow(2).sum(-1).sqrt()\n"
            ),
        ),
    ],
    "masked_mean": [
        Mistake(
            name="plain-mean",
            message="x.mean(dim=1) averages the padding too and divides by the padded length T.",
            code="def masked_mean(x, lengths):\n    return x.mean(dim=1)\n",
        ),
        Mistake(
            name="divides-by-padded-length",
            message="Masking the sum is half the job: divide by each row's length, not by T.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    t = x.shape[1]\n"
                "    mask = torch.arange(t, device=x.device)[None, :] < lengths[:, None]\n"
                "    return (x * mask[:, :, None]).sum(dim=1) / t\n"
            ),
        ),
        Mistake(
            name="assumes-zero-padding",
            message="Padding is not always zero: mask it out before summing.",
            code=(
                "def masked_mean(x, lengths):\n"
                "    return x.sum(dim=1) / lengths.clamp(min=1)[:, None]\n"
            ),
        ),
        Mistake(
            name="mask-off-by-one",
            message="Valid steps are 0 .. length - 1: compare with <, not <=.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    t = x.shape[1]\n"
                "    mask = torch.arange(t, device=x.device)[None, :] <= lengths[:, None]\n"
                "    total = (x * mask[:, :, None]).sum(dim=1)\n"
                "    return total / lengths.clamp(min=1)[:, None]\n"
            ),
        ),
        Mistake(
            name="nan-on-empty-sequence",
            message="A length of 0 gives 0 / 0 = NaN: divide by lengths.clamp(min=1).",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    t = x.shape[1]\n"
                "    mask = torch.arange(t, device=x.device)[None, :] < lengths[:, None]\n"
                "    total = (x * mask[:, :, None]).sum(dim=1)\n"
                "    return total / lengths[:, None]\n"
            ),
        ),
        Mistake(
            name="multiplies-by-mask",
            message="x * mask keeps NaN and inf padding (nan * 0 and inf * 0 are nan): select "
            "the real steps with torch.where(mask, x, 0) or masked_fill.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    steps = torch.arange(x.shape[1], device=x.device)\n"
                "    mask = steps[None, :] < lengths[:, None]\n"
                "    total = (x * mask[:, :, None]).sum(dim=1)\n"
                "    return total / lengths.clamp(min=1).to(x.dtype)[:, None]\n"
            ),
        ),
        Mistake(
            name="max-of-empty-lengths",
            message="lengths.max() fails on an empty batch: the padded length is x.shape[1], "
            "no need to compute it.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    t = int(lengths.max())\n"
                "    x = x[:, :t]\n"
                "    mask = torch.arange(t, device=x.device)[None, :] < lengths[:, None]\n"
                "    total = torch.where(mask[:, :, None], x, torch.zeros_like(x)).sum(dim=1)\n"
                "    return total / lengths.clamp(min=1).to(x.dtype)[:, None]\n"
            ),
        ),
        Mistake(
            name="arange-on-the-cpu",
            message="torch.arange(T) lives on the CPU: on a GPU it cannot meet lengths. "
            "Create it with device=x.device.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    mask = torch.arange(x.shape[1])[None, :] < lengths[:, None]\n"
                "    total = torch.where(mask[:, :, None], x, torch.zeros_like(x)).sum(dim=1)\n"
                "    return total / lengths.clamp(min=1).to(x.dtype)[:, None]\n"
            ),
        ),
        Mistake(
            name="detached-input",
            message="x.detach() cuts the mean from the graph: no gradient reaches the sequence encoder. Select the real steps of x itself.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    x = x.detach()\n"
                "    mask = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]\n"
                "    total = torch.where(mask[:, :, None], x, torch.zeros_like(x)).sum(dim=1)\n"
                "    return total / lengths.clamp(min=1).to(x.dtype)[:, None]\n"
            ),
        ),
        Mistake(
            name="masked-fill-in-place",
            message="x.masked_fill_ writes zeros into the caller's batch: use the out-of-place x.masked_fill (or torch.where).",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    mask = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]\n"
                "    x.masked_fill_(~mask[:, :, None], 0.0)\n"
                "    return x.sum(dim=1) / lengths.clamp(min=1).to(x.dtype)[:, None]\n"
            ),
        ),
        Mistake(
            name="count-as-float32",
            message="lengths.float() is float32, and a float16 sum divided by it becomes float32: convert the count to x's dtype, .to(x.dtype).",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    mask = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]\n"
                "    total = torch.where(mask[:, :, None], x, torch.zeros_like(x)).sum(dim=1)\n"
                "    return total / lengths.clamp(min=1).float()[:, None]\n"
            ),
        ),
        Mistake(
            name="empty-batch-made-by-hand",
            message="The early return for an empty batch builds a float32 tensor on the CPU: use x.new_zeros(0, x.shape[2]), or drop the special case.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    if x.shape[0] == 0:\n"
                "        return torch.zeros(0, x.shape[2])\n"
                "    steps = torch.arange(x.shape[1], device=x.device)\n"
                "    mask = (steps[None, :] < lengths[:, None])[:, :, None]\n"
                "    total = torch.where(mask, x, torch.zeros_like(x)).sum(1)\n"
                "    return total / lengths.clamp(min=1)[:, None].to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="clamps-lengths-in-place",
            message="lengths.clamp_(min=1) changes the caller's lengths (0 becomes 1): use lengths.clamp(min=1), which makes a new tensor.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    steps = torch.arange(x.shape[1], device=x.device)\n"
                "    mask = (steps[None, :] < lengths[:, None])[:, :, None]\n"
                "    total = torch.where(mask, x, torch.zeros_like(x)).sum(1)\n"
                "    return total / lengths.clamp_(min=1)[:, None].to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="zeros-made-on-the-cpu",
            message="torch.zeros(x.shape) is a float32 CPU tensor: torch.where cannot mix it with x on a GPU. Use torch.zeros_like(x) or a plain 0.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    steps = torch.arange(x.shape[1], device=x.device)\n"
                "    mask = (steps[None, :] < lengths[:, None])[:, :, None]\n"
                "    total = torch.where(mask, x, torch.zeros(x.shape)).sum(1)\n"
                "    return total / lengths.clamp(min=1)[:, None].to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="loop-over-rows",
            message="A loop over the rows (x[i, :n].mean(0)) is the slow answer the exercise replaces: build the (B, T) mask and reduce the whole batch at once.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    rows = [x[i, :n].sum(0) / max(int(n), 1) for i, n in enumerate(lengths.tolist())]\n"
                "    return torch.stack(rows) if rows else x.new_zeros(0, x.shape[2])\n"
            ),
        ),
        Mistake(
            name="reseeds-global-generator",
            message="torch.manual_seed inside a function resets the caller's random numbers: every dropout mask, shuffle and initialisation after the call repeats the same draws. Seed once at the top of a script (or pass a torch.Generator) and leave the global generator alone.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    torch.manual_seed(42)\n"
                "    steps = torch.arange(x.shape[1], device=x.device)\n"
                "    keep = (steps[None, :] < lengths[:, None]).unsqueeze(-1)  # (B, T, 1)\n"
                "    total = x.masked_fill(~keep, 0.0).sum(dim=1)\n"
                "    return total / keep.sum(dim=1).clamp(min=1).to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="empty-batch-in-float32",
            message="The B = 0 branch builds a float32 tensor whatever x's dtype: the masked sum handles an empty batch by itself (or use x.new_zeros).",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    B, T, F = x.shape\n"
                "    if B == 0:\n"
                "        return torch.zeros(0, F, device=x.device)\n"
                "    real = torch.arange(T, device=x.device)[None, :] < lengths[:, None]\n"
                "    total = torch.where(real[:, :, None], x, 0).sum(dim=1)\n"
                "    return total / lengths.clamp(min=1)[:, None]\n"
            ),
        ),
        Mistake(
            name="float32-working-copy-cast-back",
            message="The sum is taken in float32 and cast back: for float64 x that loses digits. Sum in x's own dtype.",
            code=(
                "import torch\n"
                "def masked_mean(x, lengths):\n"
                "    T = x.shape[1]\n"
                "    real = torch.arange(T, device=x.device)[None, :] < lengths[:, None]\n"
                "    total = torch.where(real[:, :, None], x.float(), 0).sum(dim=1)\n"
                "    return (total / lengths.clamp(min=1)[:, None]).to(x.dtype)\n"
            ),
        ),
    ],
    "attention_scores": [
        Mistake(
            name="no-scaling",
            message="Scaled dot-product attention divides the scores by sqrt(D).",
            code="def attention_scores(q, k):\n    return q @ k.transpose(-2, -1)\n",
        ),
        Mistake(
            name="scaled-by-d",
            message="Divide by sqrt(D), not by D.",
            code="def attention_scores(q, k):\n    return q @ k.transpose(-2, -1) / q.shape[-1]\n",
        ),
        Mistake(
            name="einsum-output-transposed",
            message="The output subscripts decide the order: '...->bhts' puts queries on rows.",
            code=(
                "import math, torch\n"
                "def attention_scores(q, k):\n"
                "    d = q.shape[-1]\n"
                "    return torch.einsum('bhtd,bhsd->bhst', q, k) / math.sqrt(d)\n"
            ),
        ),
        Mistake(
            name="transpose-wrong-dims",
            message="Transpose only the last two dimensions of k: transpose(-2, -1) (or .mT).",
            code=(
                "import math\n"
                "def attention_scores(q, k):\n"
                "    return q @ k.transpose(1, 3) / math.sqrt(q.shape[-1])\n"
            ),
        ),
        Mistake(
            name="bmm-with-view",
            message="view needs contiguous memory, and heads split off with a transpose are "
            "not: use reshape, or matmul / einsum on the 4-d tensors directly.",
            code=(
                "import math, torch\n"
                "def attention_scores(q, k):\n"
                "    b, h, t, d = q.shape\n"
                "    s = k.shape[2]\n"
                "    scores = torch.bmm(q.view(b * h, t, d), k.view(b * h, s, d).transpose(1, 2))\n"
                "    return scores.view(b, h, t, s) / math.sqrt(d)\n"
            ),
        ),
        Mistake(
            name="float32-working-copy",
            message="q.float() turns float64 inputs into float32: keep the inputs' dtype.",
            code=(
                "import math, torch\n"
                "def attention_scores(q, k):\n"
                "    scores = q.float() @ k.float().transpose(-2, -1)\n"
                "    return scores / math.sqrt(q.shape[-1])\n"
            ),
        ),
        Mistake(
            name="scales-q-in-place",
            message="q /= sqrt(D) divides the caller's queries: the next use of q sees them scaled. Scale the scores (or q / sqrt(D), a new tensor).",
            code=(
                "import math\n"
                "def attention_scores(q, k):\n"
                "    q /= math.sqrt(q.shape[-1])\n"
                "    return q @ k.transpose(-2, -1)\n"
            ),
        ),
        Mistake(
            name="computed-under-no-grad",
            message="Under torch.no_grad() the scores have no gradient, so the attention layer cannot learn its projections.",
            code=(
                "import math, torch\n"
                "def attention_scores(q, k):\n"
                "    with torch.no_grad():\n"
                "        return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
            ),
        ),
        Mistake(
            name="integer-square-root",
            message="math.isqrt(D) is the integer square root (1 for D = 2 or 3): divide by math.sqrt(D).",
            code=(
                "import math, torch\n"
                "def attention_scores(q, k):\n"
                "    return q @ k.transpose(-2, -1) / math.isqrt(q.shape[-1])\n"
            ),
        ),
        Mistake(
            name="loop-over-heads",
            message="A loop over the heads is what batched matmul does for you: q @ k.transpose(-2, -1) multiplies every (batch, head) pair at once.",
            code=(
                "import math, torch\n"
                "def attention_scores(q, k):\n"
                "    heads = [q[:, h] @ k[:, h].transpose(-2, -1) for h in range(q.shape[1])]\n"
                "    return torch.stack(heads, dim=1) / math.sqrt(q.shape[-1])\n"
            ),
        ),
        Mistake(
            name="scale-made-on-notebook-device",
            message="The scale is a tensor made on the notebook's global device, not q's: use math.sqrt(D), a Python number, or device=q.device.",
            code=(
                "import torch\n"
                "def attention_scores(q, k):\n"
                "    scale = torch.tensor(q.shape[-1], dtype=q.dtype, device=device).sqrt()\n"
                "    return q @ k.transpose(-2, -1) / scale\n"
            ),
        ),
    ],
}
