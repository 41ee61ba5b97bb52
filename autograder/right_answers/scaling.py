"""Right answers for 10_scaling's exercises, unlike the solution (see autograder/right_answers)."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "top_ops": [
        RightAnswer(
            name="heapq-nlargest",
            why="heapq.nlargest over the aten:: entries, converting with * 1e-3: the same list.",
            code=(
                "import heapq\n"
                "def top_ops(prof, k=5):\n"
                "    ops = (e for e in prof.key_averages() if e.key.startswith('aten::'))\n"
                "    best = heapq.nlargest(k, ops, key=lambda e: e.self_cpu_time_total)\n"
                "    return [(e.key, float(e.self_cpu_time_total) * 1e-3) for e in best]\n"
            ),
        ),
        RightAnswer(
            name="cpu-rows-only",
            why="Keeps only CPU-side rows (device_type CPU) before ranking: GPU rows have no CPU time.",
            code=(
                "from torch.autograd import DeviceType\n"
                "def top_ops(prof, k=5):\n"
                "    rows = [e for e in prof.key_averages()\n"
                "            if e.device_type == DeviceType.CPU and e.key[:6] == 'aten::']\n"
                "    rows = sorted(rows, key=lambda e: -e.self_cpu_time_total)[:k]\n"
                "    return [tuple([e.key, e.self_cpu_time_total / 1000.0]) for e in rows]\n"
            ),
        ),
    ],
    "time_per_label": [
        RightAnswer(
            name="int-zero-start",
            why=(
                "Starts every label at the integer 0 and adds the rows' totals; a label that never "
                "ran keeps 0, which equals 0.0."
            ),
            code=(
                "def time_per_label(prof, labels):\n"
                "    totals = dict.fromkeys(labels, 0)\n"
                "    for e in prof.key_averages():\n"
                "        if e.key in totals:\n"
                "            totals[e.key] = totals[e.key] + e.cpu_time_total / 1000\n"
                "    return totals\n"
            ),
        ),
        RightAnswer(
            name="defaultdict-sum-per-label",
            why="A defaultdict(float) of per-key sums, then one lookup per label: a dict subclass.",
            code=(
                "from collections import defaultdict\n"
                "def time_per_label(prof, labels):\n"
                "    sums = defaultdict(float)\n"
                "    for e in prof.key_averages():\n"
                "        sums[e.key] += e.cpu_time_total\n"
                "    out = defaultdict(float)\n"
                "    for label in labels:\n"
                "        out[label] = sums.get(label, 0.0) / 1000\n"
                "    return out\n"
            ),
        ),
    ],
    "shards_for_epoch": [
        RightAnswer(
            name="reimplemented-with-own-generator",
            why=(
                "Reimplements DistributedSampler (the text allows it): randperm with its own "
                "generator seeded seed + epoch, padding by repeating, rank r takes [r::world_size]."
            ),
            code=(
                "import math\nimport torch\n"
                "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
                "    g = torch.Generator()\n"
                "    g.manual_seed(seed + epoch)\n"
                "    order = torch.randperm(n, generator=g).tolist()\n"
                "    total = math.ceil(n / world_size) * world_size\n"
                "    while len(order) < total:\n"
                "        order += order[: total - len(order)]\n"
                "    return [order[r:total:world_size] for r in range(world_size)]\n"
            ),
        ),
        RightAnswer(
            name="seed-plus-epoch-no-set-epoch",
            why=(
                "DistributedSampler shuffles with seed + epoch; passing seed=seed + epoch and "
                "leaving the epoch at 0 gives the same order, so set_epoch is not needed."
            ),
            code=(
                "from torch.utils.data import DistributedSampler\n"
                "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
                "    return [list(DistributedSampler(list(range(n)), num_replicas=world_size, rank=r,\n"
                "                                    shuffle=True, seed=seed + epoch))\n"
                "            for r in range(world_size)]\n"
            ),
        ),
    ],
    "average_gradients": [
        RightAnswer(
            name="async-then-wait",
            why=(
                "Launches every all_reduce with async_op=True, waits on each handle, then divides: "
                "what DDP does to overlap communication; the text does not forbid it."
            ),
            code=(
                "import torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
                "    handles = [all_reduce(g, async_op=True) for g in grads]\n"
                "    for handle in handles:\n"
                "        handle.wait()\n"
                "    for g in grads:\n"
                "        g.div_(world_size)\n"
            ),
        ),
        RightAnswer(
            name="one-flat-bucket",
            why=(
                "Flattens every gradient into one bucket, reduces it with a single all_reduce, "
                "divides and copies the slices back: the same averages with one collective."
            ),
            code=(
                "import torch\nimport torch.distributed as dist\n"
                "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
                "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
                "    if not grads:\n"
                "        return None\n"
                "    flat = torch.cat([g.reshape(-1) for g in grads])\n"
                "    all_reduce(flat)\n"
                "    flat /= world_size\n"
                "    offset = 0\n"
                "    for g in grads:\n"
                "        g.copy_(flat[offset:offset + g.numel()].view_as(g))\n"
                "        offset += g.numel()\n"
                "    return None\n"
            ),
        ),
    ],
    "save_checkpoint": [
        RightAnswer(
            name="isinstance-ddp",
            why=(
                "Unwraps with isinstance(model, (DistributedDataParallel, DataParallel)) instead "
                "of looking for a .module attribute: a DDP model is a DistributedDataParallel."
            ),
            code=(
                "import torch\n"
                "from torch.nn.parallel import DataParallel, DistributedDataParallel\n"
                "def save_checkpoint(model, path, rank):\n"
                "    if rank == 0:\n"
                "        if isinstance(model, (DistributedDataParallel, DataParallel)):\n"
                "            model = model.module\n"
                "        torch.save(model.state_dict(), path)\n"
                "        return True\n"
                "    return False\n"
            ),
        ),
        RightAnswer(
            name="hasattr-module-file-object",
            why="hasattr(model, 'module') and a file opened by hand for torch.save: the same file.",
            code=(
                "import torch\n"
                "def save_checkpoint(model, path, rank):\n"
                "    if rank != 0:\n"
                "        return False\n"
                "    inner = model.module if hasattr(model, 'module') else model\n"
                "    with open(path, 'wb') as f:\n"
                "        torch.save(inner.state_dict(), f)\n"
                "    return True\n"
            ),
        ),
        RightAnswer(
            name="removeprefix-keys",
            why=(
                "Strips the wrapper's 'module.' prefix from the start of each key (removeprefix "
                "touches nothing else): the inner model's keys, in a plain dict."
            ),
            code=(
                "import torch\n"
                "def save_checkpoint(model, path, rank):\n"
                "    if rank != 0:\n"
                "        return False\n"
                "    state = {k.removeprefix('module.'): v for k, v in model.state_dict().items()}\n"
                "    torch.save(state, path)\n"
                "    return True\n"
            ),
        ),
    ],
    "strip_wrapper_prefixes": [
        RightAnswer(
            name="anchored-regex",
            why="One anchored, escaped pattern repeated with +, into an OrderedDict: the same keys, order and tensors.",
            code=(
                "import re\n"
                "from collections import OrderedDict\n"
                "_WRAPPERS = re.compile(r'^(?:module\\.|_orig_mod\\.)+')\n"
                "def strip_wrapper_prefixes(state_dict):\n"
                "    return OrderedDict((_WRAPPERS.sub('', k), v) for k, v in state_dict.items())\n"
            ),
        ),
        RightAnswer(
            name="split-parts",
            why="Splits each key on '.', drops leading parts named module or _orig_mod (never the last), joins the rest.",
            code=(
                "def strip_wrapper_prefixes(state_dict):\n"
                "    result = dict()\n"
                "    for key in state_dict:\n"
                "        parts = key.split('.')\n"
                "        start = 0\n"
                "        while start < len(parts) - 1 and parts[start] in {'module', '_orig_mod'}:\n"
                "            start += 1\n"
                "        result['.'.join(parts[start:])] = state_dict[key]\n"
                "    return result\n"
            ),
        ),
        RightAnswer(
            name="recursive",
            why="A recursive helper that removes one prefix and calls itself on the rest.",
            code=(
                "def _unwrap(key):\n"
                "    for prefix in ('_orig_mod.', 'module.'):\n"
                "        if key.startswith(prefix):\n"
                "            return _unwrap(key.removeprefix(prefix))\n"
                "    return key\n"
                "def strip_wrapper_prefixes(state_dict):\n"
                "    return {_unwrap(k): v for k, v in state_dict.items()}\n"
            ),
        ),
    ],
}

RIGHT_ANSWERS["average_gradients"] += [
    RightAnswer(
        name="reduce-op-avg",
        why=(
            "all_reduce(p.grad, op=ReduceOp.AVG) averages in one call (gloo and NCCL support it): "
            "the visible test's stand-in expects it, and no division follows."
        ),
        code=(
            "import torch.distributed as dist\n"
            "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
            "    for p in model.parameters():\n"
            "        if p.grad is not None:\n"
            "            all_reduce(p.grad, op=dist.ReduceOp.AVG)\n"
        ),
    ),
    RightAnswer(
        name="divides-before-reducing",
        why="Divides each gradient by world_size, then sums: the same average (DDP pre-divides too).",
        code=(
            "import torch.distributed as dist\n"
            "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
            "    for p in model.parameters():\n"
            "        if p.grad is not None:\n"
            "            p.grad.div_(world_size)\n"
            "            all_reduce(p.grad)\n"
        ),
    ),
]
RIGHT_ANSWERS["shards_for_epoch"].append(
    RightAnswer(
        name="fork-rng-global-seed",
        why=(
            "Shuffles with the global generator inside torch.random.fork_rng, which restores it: "
            "the same permutation as a generator of its own, the caller's stream left alone."
        ),
        code=(
            "import math\nimport torch\n"
            "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
            "    with torch.random.fork_rng(devices=[]):\n"
            "        torch.manual_seed(seed + epoch)\n"
            "        order = torch.randperm(n).tolist()\n"
            "    total = math.ceil(n / world_size) * world_size\n"
            "    while len(order) < total:\n"
            "        order += order[: total - len(order)]\n"
            "    return [order[r::world_size] for r in range(world_size)]\n"
        ),
    )
)
RIGHT_ANSWERS["save_checkpoint"].append(
    RightAnswer(
        name="deepcopy-to-cpu",
        why="Moves a deep copy of the inner model to the CPU, never the caller's model: a portable file.",
        code=(
            "import copy\nimport torch\n"
            "def save_checkpoint(model, path, rank):\n"
            "    if rank != 0:\n"
            "        return False\n"
            "    inner = model.module if hasattr(model, 'module') else model\n"
            "    torch.save(copy.deepcopy(inner).cpu().state_dict(), path)\n"
            "    return True\n"
        ),
    )
)

# Red-team round 3: right answers in other styles, written from the exercise text alone.
RIGHT_ANSWERS["time_per_label"].append(
    RightAnswer(
        name="average-times-count",
        why="cpu_time * count per row is the row's cpu_time_total (to rounding): the same sums.",
        code=(
            "def time_per_label(prof, labels):\n"
            "    out = {}\n"
            "    for label in labels:\n"
            "        out[label] = 0.0\n"
            "        for e in prof.key_averages():\n"
            "            if e.key == label:\n"
            "                out[label] += e.cpu_time * e.count / 1000\n"
            "    return out\n"
        ),
    )
)
RIGHT_ANSWERS["shards_for_epoch"].append(
    RightAnswer(
        name="cycle-padding",
        why="Pads by cycling the shuffled list with itertools (any number of times): the same shards.",
        code=(
            "import itertools\nimport math\nimport torch\n"
            "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
            "    g = torch.Generator().manual_seed(seed + epoch)\n"
            "    perm = torch.randperm(n, generator=g).tolist()\n"
            "    total = math.ceil(n / world_size) * world_size\n"
            "    order = list(itertools.islice(itertools.cycle(perm), total)) if perm else []\n"
            "    return [order[r::world_size] for r in range(world_size)]\n"
        ),
    )
)
RIGHT_ANSWERS["save_checkpoint"].append(
    RightAnswer(
        name="atomic-rename",
        why="Writes a temporary file next to path and renames it into place: one file, never half-written.",
        code=(
            "import os\nimport torch\n"
            "def save_checkpoint(model, path, rank):\n"
            "    if rank != 0:\n"
            "        return False\n"
            "    inner = getattr(model, 'module', model)\n"
            "    tmp = str(path) + '.tmp'\n"
            "    torch.save(inner.state_dict(), tmp)\n"
            "    os.replace(tmp, path)\n"
            "    return True\n"
        ),
    )
)
RIGHT_ANSWERS["top_ops"].append(
    RightAnswer(
        name="skips-rows-without-cpu-time",
        why=(
            "Leaves out the rows with no CPU time at all (a GPU side) before taking k, keeping "
            "a wrapper whose self time is 0 but whose total is not: the same operators."
        ),
        code=(
            "def top_ops(prof, k=5):\n"
            "    rows = [e for e in prof.key_averages()\n"
            "            if e.key.startswith('aten::') and (e.self_cpu_time_total or e.cpu_time_total)]\n"
            "    rows.sort(key=lambda e: e.self_cpu_time_total, reverse=True)\n"
            "    return [(e.key, e.self_cpu_time_total / 1000) for e in rows[:k]]\n"
        ),
    )
)

RIGHT_ANSWERS["shards_for_epoch"].append(
    RightAnswer(
        name="one-sampler-rank-attribute",
        why="One DistributedSampler, set_epoch once, its rank attribute changed before each "
        "read: __iter__ reads self.rank, so each read gives that rank's shard.",
        code=(
            "from torch.utils.data import DistributedSampler\n"
            "def shards_for_epoch(n, world_size, epoch, seed=0):\n"
            "    s = DistributedSampler(list(range(n)), num_replicas=world_size, rank=0, shuffle=True, seed=seed)\n"
            "    s.set_epoch(epoch)\n"
            "    out = []\n"
            "    for r in range(world_size):\n"
            "        s.rank = r\n"
            "        out.append([int(i) for i in iter(s)])\n"
            "    return out\n"
        ),
    )
)
RIGHT_ANSWERS["average_gradients"].append(
    RightAnswer(
        name="torch-div-out",
        why="torch.div(g, world_size, out=g) divides in place, into the gradient's own memory.",
        code=(
            "import torch\n"
            "import torch.distributed as dist\n"
            "def average_gradients(model, world_size, all_reduce=dist.all_reduce):\n"
            "    for _name, p in model.named_parameters():\n"
            "        g = p.grad\n"
            "        if g is None:\n"
            "            continue\n"
            "        all_reduce(g)\n"
            "        torch.div(g, world_size, out=g)\n"
        ),
    )
)
