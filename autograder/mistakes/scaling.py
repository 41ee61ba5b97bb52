"""Plausible wrong answers for 10_scaling's exercises."""

from autograder.mistakes import Mistake

_SHARDS_HEAD = "from torch.utils.data import DistributedSampler\ndef shards_for_epoch(n, world_size, epoch, seed=0):\n"
_SAVE_HEAD = "import torch\ndef save_checkpoint(model, path, rank):\n"

MISTAKES = {
    "top_ops": [
        Mistake(
            name="total-not-self",
            message="cpu_time_total includes everything an operator calls; rank by self_cpu_time_total.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    ops = [e for e in prof.key_averages() if e.key.startswith('aten::')]\n"
                "    ops.sort(key=lambda e: e.cpu_time_total, reverse=True)\n"
                "    return [(e.key, e.cpu_time_total / 1000) for e in ops[:k]]\n"
            ),
        ),
        Mistake(
            name="keeps-labels",
            message="Keep only aten:: operators; record_function labels and DataLoader entries are not operators.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    ops = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)\n"
                "    return [(e.key, e.self_cpu_time_total / 1000) for e in ops[:k]]\n"
            ),
        ),
        Mistake(
            name="microseconds",
            message="The profiler's totals are microseconds: divide by 1000 for milliseconds.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    ops = [e for e in prof.key_averages() if e.key.startswith('aten::')]\n"
                "    ops.sort(key=lambda e: e.self_cpu_time_total, reverse=True)\n"
                "    return [(e.key, float(e.self_cpu_time_total)) for e in ops[:k]]\n"
            ),
        ),
        Mistake(
            name="smallest-first",
            message="Sort in descending order (reverse=True): the slowest operators first.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    ops = [e for e in prof.key_averages() if e.key.startswith('aten::')]\n"
                "    ops.sort(key=lambda e: e.self_cpu_time_total)\n"
                "    return [(e.key, e.self_cpu_time_total / 1000) for e in ops[:k]]\n"
            ),
        ),
    ],
    "time_per_label": [
        Mistake(
            name="self-time",
            message="A label's self time leaves out the operators inside it: use cpu_time_total.",
            code=(
                "def time_per_label(prof, labels):\n"
                "    totals = {e.key: e.self_cpu_time_total / 1000 for e in prof.key_averages()}\n"
                "    return {label: float(totals.get(label, 0.0)) for label in labels}\n"
            ),
        ),
        Mistake(
            name="average-per-call",
            message="cpu_time is one call's average; the label ran several times: use cpu_time_total.",
            code=(
                "def time_per_label(prof, labels):\n"
                "    totals = {e.key: e.cpu_time / 1000 for e in prof.key_averages()}\n"
                "    return {label: float(totals.get(label, 0.0)) for label in labels}\n"
            ),
        ),
        Mistake(
            name="key-error-for-missing",
            message="A label that never ran is not in the profile: give it 0.0 instead of failing.",
            code=(
                "def time_per_label(prof, labels):\n"
                "    totals = {e.key: e.cpu_time_total / 1000 for e in prof.key_averages()}\n"
                "    return {label: float(totals[label]) for label in labels}\n"
            ),
        ),
    ],
    "shards_for_epoch": [
        Mistake(
            name="forgets-set-epoch",
            message="Without sampler.set_epoch(epoch) every epoch repeats the same order and shards.",
            code=_SHARDS_HEAD
            + (
                "    return [[int(i) for i in DistributedSampler(range(n), num_replicas=world_size, rank=r,\n"
                "             shuffle=True, seed=seed)] for r in range(world_size)]\n"
            ),
        ),
        Mistake(
            name="seed-per-rank",
            message="Every rank must shuffle with the same seed, or the shards overlap and miss samples.",
            code=_SHARDS_HEAD
            + (
                "    shards = []\n"
                "    for r in range(world_size):\n"
                "        s = DistributedSampler(range(n), num_replicas=world_size, rank=r, shuffle=True, seed=seed + r)\n"
                "        s.set_epoch(epoch)\n"
                "        shards.append([int(i) for i in s])\n"
                "    return shards\n"
            ),
        ),
        Mistake(
            name="contiguous-chunks-no-padding",
            message="Chunks without padding give ranks different numbers of batches (and DDP hangs).",
            code=(
                "import torch\n"
                "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
                "    g = torch.Generator().manual_seed(seed + epoch)\n"
                "    order = torch.randperm(n, generator=g).tolist()\n"
                "    return [[int(i) for i in chunk] for chunk in torch.tensor(order).chunk(world_size)]\n"
            ),
        ),
    ],
    "average_gradients": [
        Mistake(
            name="sum-not-average",
            message="all_reduce sums; divide by world_size to average.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad)\n"
            ),
        ),
        Mistake(
            name="hard-coded-world-size",
            message="Averaging by the wrong world size: 2 is right only for two processes.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad)\n"
                "            p.grad /= 2\n"
            ),
        ),
        Mistake(
            name="assigns-all-reduce-result",
            message="all_reduce works in place and returns None: do not assign its result.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            p.grad = all_reduce(p.grad)\n"
                "            if p.grad is not None:\n"
                "                p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="no-none-check",
            message="Frozen or unused parameters have grad None: skip them.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        all_reduce(p.grad)\n"
                "        p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="divides-before-and-after",
            message="Divide once: pre-dividing and dividing again averages by world_size squared.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            p.grad /= world_size\n"
                "            all_reduce(p.grad)\n"
                "            p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="assigns-divided-grad",
            message="p.grad = p.grad / world_size puts a new tensor in .grad: divide in place "
            "(p.grad /= world_size), or whatever holds the old gradient keeps the sum.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for name, p in model.named_parameters():\n"
                "        if p.grad is None:\n"
                "            continue\n"
                "        all_reduce(p.grad, op=dist.ReduceOp.SUM)\n"
                "        p.grad = p.grad / world_size\n"
            ),
        ),
    ],
    "save_checkpoint": [
        Mistake(
            name="saves-on-every-rank",
            message="Only rank 0 saves; other ranks write nothing.",
            code=_SAVE_HEAD
            + (
                "    inner = getattr(model, 'module', model)\n"
                "    torch.save(inner.state_dict(), path)\n"
                "    return rank == 0\n"
            ),
        ),
        Mistake(
            name="keeps-module-prefix",
            message="Save model.module.state_dict(): the wrapper's keys start with 'module.'.",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    torch.save(model.state_dict(), path)\n"
                "    return True\n"
            ),
        ),
        Mistake(
            name="pickles-whole-model",
            message="torch.save(model) pickles the object; save the state_dict so weights_only=True loads it.",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    torch.save(getattr(model, 'module', model), path)\n"
                "    return True\n"
            ),
        ),
        Mistake(
            name="inverted-rank-test",
            message="`if rank:` is true for every rank but 0: the test is the wrong way round.",
            code=_SAVE_HEAD
            + (
                "    if rank:\n"
                "        torch.save(getattr(model, 'module', model).state_dict(), path)\n"
                "        return True\n"
                "    return False\n"
            ),
        ),
    ],
}

# Wrong answers that pass the visible asserts (a CPU-only profile, default arguments, a DDP
# model only, a synchronous stand-in for all_reduce) and that only the hidden check catches.
_PAD = "    per_rank = math.ceil(n / world_size)\n    padding = per_rank * world_size - n\n"
_MORE = {
    "top_ops": [
        Mistake(
            name="dict-by-key",
            message="A dict keyed by name keeps one row per key; with a GPU an operator's GPU row overwrites its CPU row.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    times = {e.key: e.self_cpu_time_total for e in prof.key_averages()\n"
                "             if e.key.startswith('aten::')}\n"
                "    ranked = sorted(times.items(), key=lambda kv: kv[1], reverse=True)\n"
                "    return [(name, us / 1000) for name, us in ranked[:k]]\n"
            ),
        ),
        Mistake(
            name="top-k-then-filter",
            message="Filter to aten:: operators first, then take k: the other way round returns fewer.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    ranked = sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True)\n"
                "    return [(e.key, e.self_cpu_time_total / 1000) for e in ranked[:k]\n"
                "            if e.key.startswith('aten::')]\n"
            ),
        ),
        Mistake(
            name="wrong-default-k",
            message="k defaults to 5: top_ops(prof) returns the five slowest operators.",
            code=(
                "def top_ops(prof, k=3):\n"
                "    ops = [e for e in prof.key_averages() if e.key.startswith('aten::')]\n"
                "    ops.sort(key=lambda e: e.self_cpu_time_total, reverse=True)\n"
                "    return [(e.key, e.self_cpu_time_total / 1000) for e in ops[:k]]\n"
            ),
        ),
    ],
    "time_per_label": [
        Mistake(
            name="dict-overwrite",
            message="A dict keyed by name keeps the last row: with a GPU a label's GPU row (no CPU time) overwrites its CPU row.",
            code=(
                "def time_per_label(prof, labels):\n"
                "    totals = {e.key: e.cpu_time_total / 1000 for e in prof.key_averages()}\n"
                "    return {label: float(totals.get(label, 0.0)) for label in labels}\n"
            ),
        ),
        Mistake(
            name="first-match-only",
            message="Add up every row whose key is the label; the first one may be the GPU row.",
            code=(
                "def time_per_label(prof, labels):\n"
                "    events = list(prof.key_averages())\n"
                "    return {label: next((e.cpu_time_total / 1000 for e in events if e.key == label), 0.0)\n"
                "            for label in labels}\n"
            ),
        ),
        Mistake(
            name="substring-match",
            message="Compare keys with ==: 'step' in 'stepper' is true.",
            code=(
                "def time_per_label(prof, labels):\n"
                "    events = list(prof.key_averages())\n"
                "    return {label: sum(e.cpu_time_total for e in events if label in e.key) / 1000\n"
                "            for label in labels}\n"
            ),
        ),
    ],
    "shards_for_epoch": [
        Mistake(
            name="reseeds-global-rng",
            message="generator=torch.manual_seed(...) reseeds the global generator: use torch.Generator().manual_seed(...).",
            code=(
                "import math\nimport torch\n"
                "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
                "    order = torch.randperm(n, generator=torch.manual_seed(seed + epoch)).tolist()\n"
            )
            + _PAD
            + (
                "    order += (order * math.ceil(padding / n))[:padding] if padding else []\n"
                "    return [order[r::world_size] for r in range(world_size)]\n"
            ),
        ),
        Mistake(
            name="pads-only-once",
            message="When the padding is longer than the list, repeat the list as often as needed.",
            code=(
                "import math\nimport torch\n"
                "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
                "    g = torch.Generator().manual_seed(seed + epoch)\n"
                "    order = torch.randperm(n, generator=g).tolist()\n"
            )
            + _PAD
            + (
                "    order += order[:padding]\n"
                "    return [order[r::world_size] for r in range(world_size)]\n"
            ),
        ),
        Mistake(
            name="contiguous-after-padding",
            message="After padding rank r takes indices[r::world_size], not a contiguous chunk.",
            code=(
                "import math\nimport torch\n"
                "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
                "    g = torch.Generator().manual_seed(seed + epoch)\n"
                "    order = torch.randperm(n, generator=g).tolist()\n"
            )
            + _PAD
            + (
                "    order += (order * math.ceil(padding / n))[:padding] if padding else []\n"
                "    return [order[r * per_rank:(r + 1) * per_rank] for r in range(world_size)]\n"
            ),
        ),
    ],
    "average_gradients": [
        Mistake(
            name="async-without-wait",
            message="all_reduce(async_op=True) returns a handle: the sum lands only after handle.wait().",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad, async_op=True)  # overlap the communication\n"
                "            p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="modules-double-count",
            message="model.modules() visits nested modules again: each gradient gets reduced several times.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for module in model.modules():\n"
                "        for p in module.parameters():\n"
                "            if p.grad is not None:\n"
                "                all_reduce(p.grad)\n"
                "                p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="reduces-the-parameter",
            message="all_reduce(p) sums the weights over the ranks, not the gradients: the "
            "caller's weights change and the gradients stay local. Reduce p.grad.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            with torch.no_grad():\n"
                "                all_reduce(p)\n"
                "            p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="modules-own-parameters",
            message="Each module's own parameters (recurse=False) list a weight shared by two "
            "modules twice: it is reduced and divided twice. model.parameters() lists it once.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for module in model.modules():\n"
                "        for p in module.parameters(recurse=False):\n"
                "            if p.grad is not None:\n"
                "                all_reduce(p.grad)\n"
                "                p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="fills-missing-grads",
            message="Frozen and unused parameters were given zero gradients: their .grad must "
            "stay None (an optimizer skips None, but it decays or moves a zero gradient).",
            code=(
                "import torch\nimport torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is None:\n"
                "            p.grad = torch.zeros_like(p)\n"
                "        all_reduce(p.grad)\n"
                "        p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="bucket-of-no-gradients",
            message="torch.cat of an empty list raises: before any backward pass there is no "
            "gradient to reduce, and the function must simply do nothing.",
            code=(
                "import torch\nimport torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
                "    flat = torch.cat([g.reshape(-1) for g in grads])\n"
                "    all_reduce(flat)\n"
                "    flat /= world_size\n"
                "    offset = 0\n"
                "    for g in grads:\n"
                "        g.copy_(flat[offset:offset + g.numel()].view_as(g))\n"
                "        offset += g.numel()\n"
            ),
        ),
        Mistake(
            name="world-size-from-dist",
            message="Use the world_size you are given; dist.get_world_size() needs a process group.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad)\n"
                "            p.grad /= dist.get_world_size()\n"
            ),
        ),
    ],
    "save_checkpoint": [
        Mistake(
            name="always-model-module",
            message="A plain model has no .module: unwrap only a wrapped model.",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    torch.save(model.module.state_dict(), path)\n"
                "    return True\n"
            ),
        ),
        Mistake(
            name="parameters-only",
            message="named_parameters() leaves out the buffers (batch norm statistics): save state_dict().",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    inner = getattr(model, 'module', model)\n"
                "    torch.save({k: p.detach() for k, p in inner.named_parameters()}, path)\n"
                "    return True\n"
            ),
        ),
        Mistake(
            name="replace-module-everywhere",
            message="replace('module.', '') also edits keys such as encoder_module.0.weight: unwrap instead.",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    state = {k.replace('module.', ''): v for k, v in model.state_dict().items()}\n"
                "    torch.save(state, path)\n"
                "    return True\n"
            ),
        ),
        Mistake(
            name="unwraps-dataparallel-only",
            message="DistributedDataParallel is not a DataParallel: check for the DDP class (or for .module).",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    if isinstance(model, torch.nn.DataParallel):\n"
                "        model = model.module\n"
                "    torch.save(model.state_dict(), path)\n"
                "    return True\n"
            ),
        ),
        Mistake(
            name="evals-before-saving",
            message="Saving must not change the model: model.eval() on rank 0 alone makes the ranks train differently.",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    inner = getattr(model, 'module', model)\n"
                "    inner.eval()\n"
                "    torch.save(inner.state_dict(), path)\n"
                "    return True\n"
            ),
        ),
    ],
}
_STRIP_HEAD = "def strip_wrapper_prefixes(state_dict):\n"
_MORE["strip_wrapper_prefixes"] = [
    Mistake(
        name="replace-anywhere",
        message="str.replace also edits 'module.' inside a key (attn_module.weight): strip only at the start.",
        code=_STRIP_HEAD
        + (
            "    return {k.replace('module.', '').replace('_orig_mod.', ''): v\n"
            "            for k, v in state_dict.items()}\n"
        ),
    ),
    Mistake(
        name="lstrip-characters",
        message="str.lstrip removes any of the listed characters, not a prefix: 'embed' loses its 'e'.",
        code=_STRIP_HEAD
        + (
            "    out = {}\n"
            "    for key, value in state_dict.items():\n"
            "        while key.startswith(('module.', '_orig_mod.')):\n"
            "            if key.startswith('module.'):\n"
            "                key = key.lstrip('module.')\n"
            "            else:\n"
            "                key = key.lstrip('_orig_mod.')\n"
            "        out[key] = value\n"
            "    return out\n"
        ),
    ),
    Mistake(
        name="each-prefix-once",
        message="Each prefix removed once, in one order: module._orig_mod.x and module.module.x keep a prefix.",
        code=_STRIP_HEAD
        + (
            "    return {k.removeprefix('_orig_mod.').removeprefix('module.'): v\n"
            "            for k, v in state_dict.items()}\n"
        ),
    ),
    Mistake(
        name="module-loop-then-orig-loop",
        message="Stripping all 'module.' first, then all '_orig_mod.', misses _orig_mod.module.x: loop over both together.",
        code=_STRIP_HEAD
        + (
            "    out = {}\n"
            "    for key, value in state_dict.items():\n"
            "        while key.startswith('module.'):\n"
            "            key = key[len('module.'):]\n"
            "        while key.startswith('_orig_mod.'):\n"
            "            key = key[len('_orig_mod.'):]\n"
            "        out[key] = value\n"
            "    return out\n"
        ),
    ),
    Mistake(
        name="only-module",
        message="Lesson 08's strip_module_prefix in a loop: '_orig_mod.' (torch.compile's prefix) stays.",
        code=_STRIP_HEAD
        + (
            "    out = {}\n"
            "    for key, value in state_dict.items():\n"
            "        while key.startswith('module.'):\n"
            "            key = key.removeprefix('module.')\n"
            "        out[key] = value\n"
            "    return out\n"
        ),
    ),
    Mistake(
        name="split-without-the-dot",
        message="startswith('module') without the dot also matches module_norm.weight, and split drops its first part.",
        code=_STRIP_HEAD
        + (
            "    out = {}\n"
            "    for key, value in state_dict.items():\n"
            "        while key.startswith(('module', '_orig_mod')):\n"
            "            key = key.split('.', 1)[1]\n"
            "        out[key] = value\n"
            "    return out\n"
        ),
    ),
    Mistake(
        name="regex-unescaped-dot",
        message="An unescaped '.' in the pattern matches any character: '_orig_mod_x.bias' loses '_orig_mod_'.",
        code=(
            "import re\n"
            + _STRIP_HEAD
            + "    return {re.sub(r'^((module|_orig_mod).)+', '', k): v for k, v in state_dict.items()}\n"
        ),
    ),
    Mistake(
        name="known-combinations-only",
        message="Only the combinations seen in the examples: three wrappers (or _orig_mod._orig_mod.) keep a prefix.",
        code=_STRIP_HEAD
        + (
            "    combos = ('_orig_mod.module.', 'module._orig_mod.', 'module.module.', 'module.', '_orig_mod.')\n"
            "    out = {}\n"
            "    for key, value in state_dict.items():\n"
            "        for prefix in combos:\n"
            "            if key.startswith(prefix):\n"
            "                key = key[len(prefix):]\n"
            "                break\n"
            "        out[key] = value\n"
            "    return out\n"
        ),
    ),
    Mistake(
        name="same-dict-when-clean",
        message="Returns the caller's dict when no key has a prefix: edits of the result then edit the checkpoint.",
        code=_STRIP_HEAD
        + (
            "    prefixes = ('module.', '_orig_mod.')\n"
            "    if not any(k.startswith(prefixes) for k in state_dict):\n"
            "        return state_dict  # nothing to do\n"
            "    out = {}\n"
            "    for key, value in state_dict.items():\n"
            "        while key.startswith(prefixes):\n"
            "            key = key.split('.', 1)[1]\n"
            "        out[key] = value\n"
            "    return out\n"
        ),
    ),
    Mistake(
        name="renames-in-place",
        message="Renaming in the caller's dict changes it (and moves renamed keys to the end): build a new dict.",
        code=_STRIP_HEAD
        + (
            "    for key in list(state_dict):\n"
            "        new = key\n"
            "        while new.startswith(('module.', '_orig_mod.')):\n"
            "            new = new.split('.', 1)[1]\n"
            "        if new != key:\n"
            "            state_dict[new] = state_dict.pop(key)\n"
            "    return state_dict\n"
        ),
    ),
    Mistake(
        name="clones-values",
        message="The values must stay the same tensor objects: clone() copies every weight.",
        code=_STRIP_HEAD
        + (
            "    out = {}\n"
            "    for key, value in state_dict.items():\n"
            "        while key.startswith(('module.', '_orig_mod.')):\n"
            "            key = key.split('.', 1)[1]\n"
            "        out[key] = value.clone()\n"
            "    return out\n"
        ),
    ),
]

_MORE["strip_wrapper_prefixes"].append(
    Mistake(
        name="prefix-from-first-key",
        message="The first key does not tell every key's prefix, and an empty checkpoint has no "
        "first key: strip each key on its own.",
        code=_STRIP_HEAD
        + (
            "    first = next(iter(state_dict))\n"
            "    prefix = ''\n"
            "    while first.startswith(('module.', '_orig_mod.')):\n"
            "        head = first.split('.', 1)[0] + '.'\n"
            "        prefix += head\n"
            "        first = first[len(head):]\n"
            "    return {k[len(prefix):] if k.startswith(prefix) else k: v\n"
            "            for k, v in state_dict.items()}\n"
        ),
    )
)
_MORE["shards_for_epoch"].append(
    Mistake(
        name="single-rank-unshuffled",
        message="One rank still reads a shuffled epoch: DistributedSampler shuffles with seed + "
        "epoch whatever world_size is; only the split is trivial.",
        code=_SHARDS_HEAD
        + (
            "    if world_size == 1:\n"
            "        return [list(range(n))]\n"
            "    shards = []\n"
            "    for rank in range(world_size):\n"
            "        s = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed)\n"
            "        s.set_epoch(epoch)\n"
            "        shards.append(list(s))\n"
            "    return shards\n"
        ),
    )
)

# Red-team round: wrong answers written from the exercise text alone.
_MORE_2 = {
    "top_ops": [
        Mistake(
            name="aten-substring",
            message="'aten' in key also matches labels such as 'concatenate': keep keys that start with 'aten::'.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    ops = [e for e in prof.key_averages() if 'aten' in e.key]\n"
                "    ops.sort(key=lambda e: e.self_cpu_time_total, reverse=True)\n"
                "    return [(e.key, e.self_cpu_time_total / 1000) for e in ops[:k]]\n"
            ),
        ),
        Mistake(
            name="sums-rows-per-name",
            message="Rank the entries: adding up the rows that share a name merges entries the text keeps apart.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    times = {}\n"
                "    for e in prof.key_averages():\n"
                "        if e.key.startswith('aten::'):\n"
                "            times[e.key] = times.get(e.key, 0.0) + e.self_cpu_time_total / 1000\n"
                "    return sorted(times.items(), key=lambda kv: kv[1], reverse=True)[:k]\n"
            ),
        ),
    ],
    "time_per_label": [
        Mistake(
            name="max-row-per-label",
            message="The largest row is not the sum: a label on several CPU rows adds them all up.",
            code=(
                "def time_per_label(prof, labels):\n"
                "    rows = list(prof.key_averages())\n"
                "    return {label: max([e.cpu_time_total / 1000 for e in rows if e.key == label], default=0.0)\n"
                "            for label in labels}\n"
            ),
        ),
        Mistake(
            name="every-key-returned",
            message="One entry per label asked for: a defaultdict of every row's key returns labels nobody asked for.",
            code=(
                "from collections import defaultdict\n"
                "def time_per_label(prof, labels):\n"
                "    totals = defaultdict(float)\n"
                "    for e in prof.key_averages():\n"
                "        totals[e.key] += e.cpu_time_total / 1000\n"
                "    for label in labels:\n"
                "        totals[label] += 0.0\n"
                "    return totals\n"
            ),
        ),
    ],
    "strip_wrapper_prefixes": [
        Mistake(
            name="two-passes",
            message="A fixed number of passes: three or four wrappers keep a prefix. Loop until no prefix is left.",
            code=_STRIP_HEAD
            + (
                "    out = {}\n"
                "    for key, value in state_dict.items():\n"
                "        for _ in range(2):\n"
                "            key = key.removeprefix('module.').removeprefix('_orig_mod.')\n"
                "        out[key] = value\n"
                "    return out\n"
            ),
        ),
    ],
    "shards_for_epoch": [
        Mistake(
            name="tensor-indices",
            message="Lists of ints: indexing a randperm tensor gives 0-d tensors; use .tolist().",
            code=(
                "import math\nimport torch\n"
                "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
                "    g = torch.Generator().manual_seed(seed + epoch)\n"
                "    order = torch.randperm(n, generator=g)\n"
                "    total = math.ceil(n / world_size) * world_size\n"
                "    order = order.repeat(math.ceil(total / n))[:total]\n"
                "    return [list(order[r::world_size]) for r in range(world_size)]\n"
            ),
        ),
        Mistake(
            name="ignores-seed",
            message="The seed argument is part of the shuffle: DistributedSampler(..., seed=seed).",
            code=_SHARDS_HEAD
            + (
                "    shards = []\n"
                "    for r in range(world_size):\n"
                "        s = DistributedSampler(range(n), num_replicas=world_size, rank=r, shuffle=True)\n"
                "        s.set_epoch(epoch)\n"
                "        shards.append(list(s))\n"
                "    return shards\n"
            ),
        ),
    ],
    "average_gradients": [
        Mistake(
            name="returns-model",
            message="average_gradients works in place and returns None.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad)\n"
                "            p.grad /= world_size\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="state-dict-keep-vars",
            message="state_dict() lists a shared weight under both names: it is reduced twice.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.state_dict(keep_vars=True).values():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad)\n"
                "            p.grad /= world_size\n"
            ),
        ),
        Mistake(
            name="divides-in-float32",
            message="A float64 gradient divided in float32 loses its precision: divide in place, in its dtype.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad)\n"
                "            p.grad.copy_(p.grad.float() / world_size)\n"
            ),
        ),
        Mistake(
            name="leaves-autograd-off",
            message="torch.set_grad_enabled(False) switches autograd off for the whole process and leaves it off: the next training step would compute no gradients at all. Changing .grad in place needs no mode; if you want one, use a with torch.no_grad() block.",
            code=(
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    torch.set_grad_enabled(False)\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad)\n"
                "            p.grad /= world_size\n"
            ),
        ),
    ],
    "save_checkpoint": [
        Mistake(
            name="moves-to-cpu",
            message="Module.cpu() moves the caller's model in place: copy the state_dict's tensors instead.",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    inner = getattr(model, 'module', model)\n"
                "    torch.save(inner.cpu().state_dict(), path)  # loads on any machine\n"
                "    return True\n"
            ),
        ),
        Mistake(
            name="unwraps-ddp-only",
            message="A DataParallel model is wrapped too (model.module): unwrap both, or check for .module.",
            code=(
                "import torch\n"
                "from torch.nn.parallel import DistributedDataParallel as DDP\n"
                "def save_checkpoint(model, path, rank):\n"
                "    if rank != 0:\n"
                "        return False\n"
                "    if isinstance(model, DDP):\n"
                "        model = model.module\n"
                "    torch.save(model.state_dict(), path)\n"
                "    return True\n"
            ),
        ),
        Mistake(
            name="eval-then-train",
            message="train() afterwards is not 'as it was': a model in eval mode comes back in train mode.",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    inner = getattr(model, 'module', model)\n"
                "    inner.eval()\n"
                "    torch.save(inner.state_dict(), path)\n"
                "    inner.train()\n"
                "    return True\n"
            ),
        ),
    ],
}
_MORE_2["top_ops"].append(
    Mistake(
        name="append-then-check-k",
        message="Checking the count only after appending returns one entry for k=0: stop before, or slice [:k].",
        code=(
            "def top_ops(prof, k=5):\n"
            "    out = []\n"
            "    for e in sorted(prof.key_averages(), key=lambda e: e.self_cpu_time_total, reverse=True):\n"
            "        if e.key.startswith('aten::'):\n"
            "            out.append((e.key, e.self_cpu_time_total / 1000))\n"
            "            if len(out) == k:\n"
            "                break\n"
            "    return out\n"
        ),
    )
)
_MORE_2["time_per_label"].append(
    Mistake(
        name="first-cpu-row",
        message="Skipping the GPU row is not enough: a label can have several CPU rows; add up every row.",
        code=(
            "from torch.autograd import DeviceType\n"
            "def time_per_label(prof, labels):\n"
            "    rows = [e for e in prof.key_averages() if e.device_type == DeviceType.CPU]\n"
            "    return {label: next((e.cpu_time_total / 1000 for e in rows if e.key == label), 0.0)\n"
            "            for label in labels}\n"
        ),
    )
)
_MORE_2["strip_wrapper_prefixes"] += [
    Mistake(
        name="drops-parts-anywhere",
        message="Only leading parts go: head.module.bias keeps its 'module'.",
        code=_STRIP_HEAD
        + (
            "    return {'.'.join(p for p in k.split('.') if p not in ('module', '_orig_mod')): v\n"
            "            for k, v in state_dict.items()}\n"
        ),
    ),
    Mistake(
        name="same-dict-when-empty",
        message="An empty checkpoint still gets a new dict: returning the caller's lets edits of the result reach it.",
        code=_STRIP_HEAD
        + (
            "    if not state_dict:\n"
            "        return state_dict\n"
            "    out = {}\n"
            "    for key, value in state_dict.items():\n"
            "        while key.startswith(('module.', '_orig_mod.')):\n"
            "            key = key.split('.', 1)[1]\n"
            "        out[key] = value\n"
            "    return out\n"
        ),
    ),
]
_MORE_2["shards_for_epoch"].append(
    Mistake(
        name="repeats-by-ratio",
        message="An empty dataset has no ratio to repeat by: DistributedSampler gives every rank an empty shard.",
        code=(
            "import math\nimport torch\n"
            "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
            "    g = torch.Generator().manual_seed(seed + epoch)\n"
            "    order = torch.randperm(n, generator=g).tolist()\n"
            "    total = math.ceil(n / world_size) * world_size\n"
            "    order = (order * math.ceil(total / n))[:total]\n"
            "    return [order[r::world_size] for r in range(world_size)]\n"
        ),
    )
)
_MORE_2.setdefault("average_gradients", []).append(
    Mistake(
        name="skips-frozen-by-requires-grad",
        message="A parameter frozen after the backward pass still holds a .grad, and the optimizer still applies it: reduce every .grad that is not None, whatever requires_grad says, or the ranks' copies drift apart.",
        code=(
            "import torch.distributed as dist\n"
            "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
            "    for p in model.parameters():\n"
            "        if p.requires_grad and p.grad is not None:\n"
            "            all_reduce(p.grad)\n"
            "            p.grad.div_(world_size)\n"
        ),
    )
)
_MORE_2.setdefault("save_checkpoint", []).append(
    Mistake(
        name="zero-grad-before-saving",
        message="Saving must not change the model: zero_grad() on rank 0 alone throws away gradients the other ranks keep, so the next step differs between them.",
        code=_SAVE_HEAD
        + (
            "    if rank != 0:\n"
            "        return False\n"
            "    inner = model.module if hasattr(model, 'module') else model\n"
            "    inner.zero_grad(set_to_none=True)  # 'a clean checkpoint'\n"
            "    torch.save(inner.state_dict(), path)\n"
            "    return True\n"
        ),
    )
)
for _grade_id, _extra in _MORE_2.items():
    _MORE[_grade_id] = _MORE.get(_grade_id, []) + _extra

# Red-team round 3: wrong answers written from the exercise text alone.
_MORE_3 = {
    "top_ops": [
        Mistake(
            name="aten-colons-anywhere",
            message="'aten::' in key also matches a label such as 'wrap(aten::mm)': keep the keys "
            "that start with 'aten::'.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    ops = [e for e in prof.key_averages() if 'aten::' in e.key]\n"
                "    ops.sort(key=lambda e: e.self_cpu_time_total, reverse=True)\n"
                "    return [(e.key, e.self_cpu_time_total / 1000) for e in ops[:k]]\n"
            ),
        ),
        Mistake(
            name="drops-idle-operators",
            message="An operator with 0 self time is still an entry: filtering on the time returns "
            "fewer than k when there are k operators.",
            code=(
                "def top_ops(prof, k=5):\n"
                "    ops = [e for e in prof.key_averages()\n"
                "           if e.key.startswith('aten::') and e.self_cpu_time_total > 0]\n"
                "    ops.sort(key=lambda e: e.self_cpu_time_total, reverse=True)\n"
                "    return [(e.key, e.self_cpu_time_total / 1000) for e in ops[:k]]\n"
            ),
        ),
    ],
    "strip_wrapper_prefixes": [
        Mistake(
            name="converts-values",
            message="Keep the values as they are: .float() makes a new tensor of a float64 or "
            "float16 value (and changes its dtype).",
            code=_STRIP_HEAD
            + (
                "    out = {}\n"
                "    for key, value in state_dict.items():\n"
                "        while key.startswith(('module.', '_orig_mod.')):\n"
                "            key = key.split('.', 1)[1]\n"
                "        out[key] = value.float() if value.is_floating_point() else value\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="moves-values-to-cpu",
            message="Keep the values as they are: .cpu() of a tensor on a GPU is a copy.",
            code=_STRIP_HEAD
            + (
                "    out = {}\n"
                "    for key, value in state_dict.items():\n"
                "        while key.startswith(('module.', '_orig_mod.')):\n"
                "            key = key.split('.', 1)[1]\n"
                "        out[key] = value.cpu()\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="detaches-parameters",
            message="Keep the values as they are: .detach() of a Parameter (a state_dict saved "
            "with keep_vars=True) is a new tensor object.",
            code=_STRIP_HEAD
            + (
                "    out = {}\n"
                "    for key, value in state_dict.items():\n"
                "        while key.startswith(('module.', '_orig_mod.')):\n"
                "            key = key.split('.', 1)[1]\n"
                "        out[key] = value.detach() if value.requires_grad else value\n"
                "    return out\n"
            ),
        ),
    ],
    "average_gradients": [
        Mistake(
            name="skips-zero-gradients",
            message="Reduce every gradient that is not None, zeros included: the other ranks "
            "call all_reduce for it (a rank that skips one leaves them waiting), and their "
            "gradients need not be zero.",
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None and p.grad.abs().sum() > 0:\n"
                "            all_reduce(p.grad)\n"
                "            p.grad /= world_size\n"
            ),
        ),
    ],
    "save_checkpoint": [
        Mistake(
            name="toggles-requires-grad",
            message="Saving must not change the model: requires_grad_(True) afterwards unfreezes "
            "the layers that were frozen.",
            code=_SAVE_HEAD
            + (
                "    if rank != 0:\n"
                "        return False\n"
                "    inner = getattr(model, 'module', model)\n"
                "    inner.requires_grad_(False)\n"
                "    torch.save(inner.state_dict(), path)\n"
                "    inner.requires_grad_(True)\n"
                "    return True\n"
            ),
        ),
    ],
}
for _grade_id, _extra in _MORE_3.items():
    _MORE[_grade_id] = _MORE.get(_grade_id, []) + _extra

for _grade_id, _extra in _MORE.items():
    MISTAKES[_grade_id] = MISTAKES.get(_grade_id, []) + _extra

# Fifth red-team round: new memory behind the same .grad, a fixed number of stripping passes,
# and non-persistent buffers saved.
_MORE_4 = {
    "average_gradients": [
        Mistake(
            name="grad-data-reassigned",
            message="p.grad.data = p.grad.data / world_size keeps the .grad object but gives it new "
            "memory: DDP's buckets and anything holding that memory keep the sum. Divide in place: "
            "p.grad /= world_size.",
            code=(
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    for p in model.parameters():\n"
                "        if p.grad is not None:\n"
                "            all_reduce(p.grad)\n"
                "            p.grad.data = p.grad.data / world_size\n"
            ),
        ),
    ],
    "strip_wrapper_prefixes": [
        Mistake(
            name="four-stripping-passes",
            message="Four passes strip at most eight prefixes: a key wrapped deeper keeps some. Loop "
            "until the key starts with neither prefix.",
            code=(
                "def strip_wrapper_prefixes(state_dict):\n"
                "    out = {}\n"
                "    for k, v in state_dict.items():\n"
                "        for _ in range(4):\n"
                "            for p in ('module.', '_orig_mod.'):\n"
                "                if k.startswith(p):\n"
                "                    k = k[len(p):]\n"
                "        out[k] = v\n"
                "    return out\n"
            ),
        ),
    ],
    "save_checkpoint": [
        Mistake(
            name="saves-every-buffer",
            message="named_buffers() lists non-persistent buffers too, which state_dict() leaves out: "
            "the file then has keys a plain model does not accept. Save inner.state_dict().",
            code=(
                "def save_checkpoint(model, path, rank):\n"
                "    if rank != 0:\n"
                "        return False\n"
                "    inner = model.module if hasattr(model, 'module') else model\n"
                "    sd = {**{n: p.detach() for n, p in inner.named_parameters()}, **dict(inner.named_buffers())}\n"
                "    torch.save(sd, path)\n"
                "    return True\n"
            ),
        ),
    ],
}
_MORE_4["top_ops"] = [
    Mistake(
        name="startswith-aten-without-colons",
        message="startswith('aten') also keeps a label such as 'aten_concatenate': the operators' "
        "names start with 'aten::', colons included.",
        code=(
            "def top_ops(prof, k=5):\n"
            "    ops = [e for e in prof.key_averages() if e.key.startswith('aten')]\n"
            "    ops.sort(key=lambda e: e.self_cpu_time_total, reverse=True)\n"
            "    return [(e.key, e.self_cpu_time_total / 1000) for e in ops[:k]]\n"
        ),
    )
]
_MORE_4["average_gradients"].append(
    Mistake(
        name="divisor-tensor-on-cpu",
        message="torch.tensor([world_size]) is made on the CPU: dividing a GPU gradient by it "
        "fails. Divide by the number itself: p.grad /= world_size.",
        code=(
            "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
            "    for p in model.parameters():\n"
            "        if p.grad is not None:\n"
            "            all_reduce(p.grad)\n"
            "            p.grad.div_(torch.tensor([world_size], dtype=p.grad.dtype))\n"
        ),
    )
)
for _grade_id, _extra in _MORE_4.items():
    MISTAKES[_grade_id] = MISTAKES.get(_grade_id, []) + _extra
