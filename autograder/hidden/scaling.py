"""Hidden checks for 09_scaling."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # the profiler's C++ messages would go to stderr

import torch
import torch.distributed as dist
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function
from torch.utils.data import DistributedSampler

from tutorial_lib.checks import CheckError, assert_close, check_type
from tutorial_lib.device import get_device


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def _profile_workload(seed: int):
    """A profile with operators, a label with a large self time, and labels called repeatedly."""
    device = get_device()
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)).to(device)
    x = torch.randn(64, 32, generator=g).to(device)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            with record_function("load"):
                _busy(0.003)  # Python time: the label's own (self) time, no operator
                xb = x + 0.01 * torch.randn_like(x)
            with record_function("step"):
                model(xb).pow(2).mean().backward()
        with record_function("outer"), record_function("inner"):
            torch.mm(x, x.T)
    return prof


def _entry_ms(prof) -> dict[str, dict[str, float]]:
    return {
        e.key: {
            "self": e.self_cpu_time_total / 1000,
            "total": e.cpu_time_total / 1000,
            "avg": e.cpu_time / 1000,
            "self_us": e.self_cpu_time_total,
            "total_us": e.cpu_time_total,
        }
        for e in prof.key_averages()
    }


def _which_field(value: float, fields: dict[str, float]) -> str | None:
    for name, ref in fields.items():
        if abs(value - ref) <= 1e-6 * max(1.0, abs(ref)):
            return name
    return None


_FIELD_HINTS = {
    "total": "that is cpu_time_total (includes everything it calls)",
    "avg": "that is cpu_time, the average per call",
    "self_us": "that is in microseconds: divide by 1000",
    "total_us": "that is cpu_time_total in microseconds",
    "self": "that is the self CPU time in ms",
}


def check_top_ops(top_ops) -> None:
    """Against key_averages() of fresh profiles: aten:: only, self time, ms, largest first."""
    for seed in (0, 1):
        prof = _profile_workload(seed)
        entries = _entry_ms(prof)
        ops = sorted(
            ((k, v["self"]) for k, v in entries.items() if k.startswith("aten::")),
            key=lambda kv: kv[1],
            reverse=True,
        )
        for k in (1, 3, 6, 10_000):
            what = f"top_ops(prof, k={k})"
            result = top_ops(prof, k)
            check_type(result, list, what)
            expected = ops[:k]
            if len(result) != len(expected):
                raise CheckError(
                    f"{what} returned {len(result)} entries; expected {len(expected)} (the profile "
                    f"has {len(ops)} aten:: operators)."
                )
            for item in result:
                check_type(item, tuple, f"an entry of {what}")
                if len(item) != 2 or not isinstance(item[0], str):
                    raise CheckError(f"each entry of {what} should be (name, ms), got {item!r}.")
                name, ms = item
                check_type(ms, float, f"the time of {name} in {what}")
                if not name.startswith("aten::"):
                    raise CheckError(
                        f"{what} contains {name!r}, which is not a PyTorch operator: keep only "
                        "entries whose key starts with 'aten::' (your own labels are left out)."
                    )
                fields = entries.get(name)
                if fields is None:
                    raise CheckError(f"{what} contains {name!r}, which is not in the profile.")
                field = _which_field(ms, fields)
                if field != "self":
                    hint = _FIELD_HINTS.get(field, "it matches none of the profile's columns")
                    raise CheckError(
                        f"{what} gives {name} {ms:.6g} ms; its self CPU time is "
                        f"{fields['self']:.6g} ms ({hint})."
                    )
            times = [ms for _, ms in result]
            if times != sorted(times, reverse=True):
                raise CheckError(f"{what} is not sorted largest first: {times}.")
            expected_times = [ms for _, ms in expected]
            if any(abs(a - b) > 1e-6 for a, b in zip(times, expected_times, strict=True)):
                raise CheckError(
                    f"{what} times {[round(t, 4) for t in times]} are not the {len(expected)} "
                    f"largest self times {[round(t, 4) for t in expected_times]}: sort by "
                    "self_cpu_time_total."
                )


def check_time_per_label(time_per_label) -> None:
    """Totals (children included, all calls) in ms per label; 0.0 for absent labels."""
    for seed in (2, 3):
        prof = _profile_workload(seed)
        entries = _entry_ms(prof)
        labels = ["load", "step", "outer", "inner", "never ran"]
        what = f"time_per_label(prof, {labels})"
        result = time_per_label(prof, labels)
        check_type(result, dict, what)
        if sorted(result) != sorted(labels):
            raise CheckError(
                f"{what} has keys {sorted(result)}; expected exactly {sorted(labels)}."
            )
        for label in labels:
            value = result[label]
            check_type(value, float, f"{what}[{label!r}]")
            if label not in entries:
                if value != 0.0:
                    raise CheckError(
                        f"{what}[{label!r}] is {value}; a label that never ran gets 0.0."
                    )
                continue
            fields = entries[label]
            field = _which_field(value, fields)
            if field != "total":
                hint = {
                    "self": "that is the self time, which leaves out the operators inside the label",
                    "avg": "that is cpu_time, one call's average: use the total over all calls",
                    "total_us": "that is in microseconds: divide by 1000",
                    "self_us": "that is the self time in microseconds",
                }.get(field, "it matches none of the profile's columns")
                raise CheckError(
                    f"{what}[{label!r}] is {value:.6g} ms; the label's total CPU time is "
                    f"{fields['total']:.6g} ms ({hint})."
                )


def _reference_shards(n: int, world_size: int, epoch: int, seed: int) -> list[list[int]]:
    shards = []
    for rank in range(world_size):
        sampler = DistributedSampler(
            range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed
        )
        sampler.set_epoch(epoch)
        shards.append([int(i) for i in sampler])
    return shards


def check_shards_for_epoch(shards_for_epoch) -> None:
    """Exactly DistributedSampler's shards, for several sizes, epochs and seeds."""
    cases = [
        (10, 2, 0, 0),
        (10, 2, 3, 0),
        (7, 3, 1, 5),
        (1, 2, 0, 0),
        (16, 4, 2, 1),
        (5, 1, 4, 0),
        (9, 4, 1, 3),
    ]
    for n, world_size, epoch, seed in cases:
        what = f"shards_for_epoch({n}, {world_size}, epoch={epoch}, seed={seed})"
        result = shards_for_epoch(n, world_size, epoch, seed)
        check_type(result, list, what)
        if len(result) != world_size:
            raise CheckError(
                f"{what} returned {len(result)} shards; expected one per rank ({world_size})."
            )
        shards = []
        for r, shard in enumerate(result):
            shard = list(shard)
            if not all(
                isinstance(i, int) or (isinstance(i, torch.Tensor) and i.numel() == 1)
                for i in shard
            ):
                raise CheckError(
                    f"shard {r} of {what} should hold integer indices, got {shard[:5]}."
                )
            shards.append([int(i) for i in shard])
        expected = _reference_shards(n, world_size, epoch, seed)
        if shards == expected:
            continue
        per_rank = -(-n // world_size)
        sizes = [len(s) for s in shards]
        if sizes != [per_rank] * world_size:
            raise CheckError(
                f"{what} gives shard sizes {sizes}; DistributedSampler pads so that every rank gets "
                f"{per_rank} (ceil(n / world_size)). Unequal shards mean unequal numbers of steps, "
                "and DDP waits forever for the rank that stopped early."
            )
        covered = set().union(*map(set, shards))
        if len(covered) < n:
            raise CheckError(
                f"{what} misses samples {sorted(set(range(n)) - covered)[:10]}: the shards overlap. "
                "Every rank must shuffle with the same seed (seed + epoch), then take every "
                "world_size-th index starting at its rank."
            )
        if epoch > 0 and shards == _reference_shards(n, world_size, 0, seed):
            raise CheckError(
                f"{what} equals the shards of epoch 0: the epoch is ignored. Call "
                "sampler.set_epoch(epoch) before iterating."
            )
        raise CheckError(
            f"{what} = {shards} differs from what DistributedSampler yields: {expected}. Shuffle "
            "with torch.randperm(n, generator seeded with seed + epoch), pad by repeating the start, "
            "then rank r takes indices[r::world_size]."
        )


def _fake_all_reduce(world_size: int, calls: list):
    """An all_reduce for world_size simulated ranks, where rank r's tensor is (r + 1) times ours."""
    total = world_size * (world_size + 1) / 2

    def all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        if not isinstance(tensor, torch.Tensor):
            raise CheckError(
                f"all_reduce was called with {type(tensor).__name__}; call it on p.grad only for "
                "parameters whose .grad is not None."
            )
        calls.append(tuple(tensor.shape))
        if op == dist.ReduceOp.SUM:
            tensor.mul_(total)
        elif op == dist.ReduceOp.AVG:
            tensor.mul_(total / world_size)
        else:
            raise CheckError(f"all_reduce was called with op={op}; use the default, ReduceOp.SUM.")

    return all_reduce


def check_average_gradients(average_gradients) -> None:
    """Simulated ranks of several world sizes; frozen and unused parameters keep grad None."""
    device = get_device()
    g = torch.Generator().manual_seed(4)
    for world_size, dtype in [
        (3, torch.float32),
        (1, torch.float32),
        (2, torch.float64),
        (5, torch.float32),
    ]:
        torch.manual_seed(world_size)
        used = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
        model = nn.ModuleList([used, nn.Linear(2, 2)]).to(device=device, dtype=dtype)  # [1] unused
        used[0].bias.requires_grad_(False)  # frozen
        x = torch.randn(6, 4, generator=g).to(device=device, dtype=dtype)
        used(x).pow(2).sum().backward()
        local = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
        calls: list = []
        what = f"average_gradients(model, world_size={world_size}) ({dtype})"
        result = average_gradients(
            model, world_size, all_reduce=_fake_all_reduce(world_size, calls)
        )
        if result is not None:
            raise CheckError(
                f"{what} returned {type(result).__name__}; it works in place and returns None."
            )
        if not calls:
            raise CheckError(
                f"{what} never called all_reduce: sum the gradients over the ranks first."
            )
        factor = (world_size + 1) / 2  # mean of 1, 2, ..., world_size
        for name, p in model.named_parameters():
            if name not in local:
                if p.grad is not None:
                    raise CheckError(
                        f"{what} gave {name} a gradient; parameters without .grad stay None."
                    )
                continue
            if p.grad is None:
                raise CheckError(
                    f"after {what} {name}.grad is None. all_reduce works in place and returns None: "
                    "do not assign its result to p.grad."
                )
            got = p.grad.detach()
            summed = local[name] * world_size * factor
            if world_size > 1 and torch.allclose(got, summed):
                raise CheckError(
                    f"after {what} {name}.grad is the sum over the ranks, not the average: divide by "
                    "world_size after all_reduce."
                )
            for wrong in (2, 1) if world_size not in (1, 2) else ():
                if torch.allclose(got, summed / wrong):
                    raise CheckError(
                        f"after {what} {name}.grad was divided by {wrong}, not by world_size="
                        f"{world_size}: averaging by the wrong world size changes the step size."
                    )
            assert_close(got, local[name] * factor, what=f"{name}.grad after {what}")


class _Wrapper(nn.Module):
    """Stands in for DistributedDataParallel: the real model lives in .module."""

    def __init__(self, module: nn.Module):
        super().__init__()
        self.module = module


def check_save_checkpoint(save_checkpoint) -> None:
    """Only rank 0 writes; the file is a plain state_dict that loads with weights_only=True."""
    device = get_device()
    for wrapped in (True, False):
        torch.manual_seed(5)
        plain = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2)).to(device)
        model = _Wrapper(plain) if wrapped else plain
        kind = "a DDP-style wrapped model" if wrapped else "a plain model"
        folder = Path(tempfile.mkdtemp(prefix="hidden-ckpt-"))
        for rank in (3, 1, 2):
            path = folder / f"rank{rank}.pt"
            what = f"save_checkpoint({kind}, path, rank={rank})"
            result = save_checkpoint(model, str(path) if rank == 2 else path, rank)
            if result is not False:
                raise CheckError(f"{what} returned {result!r}; every rank but 0 returns False.")
            if any(folder.iterdir()):
                raise CheckError(
                    f"{what} wrote {[p.name for p in folder.iterdir()]}: only rank 0 saves, or N "
                    "processes write the same file at once."
                )
        for as_str in (False, True):
            path = folder / f"rank0-{as_str}.pt"
            what = f"save_checkpoint({kind}, path, rank=0)"
            result = save_checkpoint(model, str(path) if as_str else path, 0)
            if result is not True:
                raise CheckError(f"{what} returned {result!r}; rank 0 saves and returns True.")
            if not path.exists():
                raise CheckError(f"{what} returned True but wrote no file at the given path.")
            try:
                state = torch.load(path, map_location="cpu", weights_only=True)
            except Exception as err:  # an unpickling error for a pickled module
                raise CheckError(
                    f"the file from {what} does not load with weights_only=True ({type(err).__name__}). "
                    "Save model.state_dict(), not the model object."
                ) from None
            check_type(state, dict, f"the object saved by {what}")
            expected = plain.state_dict()
            if sorted(state) != sorted(expected):
                hint = (
                    " Save the inner model: model.module.state_dict()."
                    if any(k.startswith("module.") for k in state)
                    else ""
                )
                raise CheckError(
                    f"the state_dict saved by {what} has keys {sorted(state)[:4]}...; a plain model "
                    f"expects {sorted(expected)[:4]}....{hint}"
                )
            for key, value in expected.items():
                assert_close(state[key], value.detach().cpu(), what=f"saved {key}")
