"""Plausible wrong answers for 09_scaling's exercises."""

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
