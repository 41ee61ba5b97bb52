"""Hidden checks for 09_scaling.

Every check reaches the learner's function through a probe (autograder/probes/scaling.py)
and judges the data that comes back. The profiler checks compute the expected answer from
the profile's rows, which the probe returns next to the answer (timings cannot be rebuilt).
"""

from __future__ import annotations

import torch
from torch.utils.data import DistributedSampler

from autograder.boundary import observe
from autograder.probes import scaling as probes
from tutorial_lib.checks import CheckError, assert_close, check_type
from tutorial_lib.device import get_device


def _entry_ms(rows: list[dict]) -> dict[str, dict[str, float]]:
    """The profile's rows (key_averages) by key: times in ms, and the raw microseconds."""
    return {
        row["key"]: {
            "self": row["self_cpu_time_total"] / 1000,
            "total": row["cpu_time_total"] / 1000,
            "avg": row["cpu_time"] / 1000,
            "self_us": row["self_cpu_time_total"],
            "total_us": row["cpu_time_total"],
        }
        for row in rows
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
    device = get_device()
    for seed in (0, 1):
        for k in (1, 3, 6, 10_000):
            what = f"top_ops(prof, k={k})"
            case = {"seed": seed, "k": k, "device": device}
            seen = observe(probes.probe_top_ops, top_ops, case, what)
            entries = _entry_ms(seen["rows"])
            ops = sorted(
                ((key, v["self"]) for key, v in entries.items() if key.startswith("aten::")),
                key=lambda kv: kv[1],
                reverse=True,
            )
            result = seen["result"]
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
    device = get_device()
    for seed in (2, 3):
        labels = ["load", "step", "outer", "inner", "never ran"]
        what = f"time_per_label(prof, {labels})"
        case = {"seed": seed, "labels": labels, "device": device}
        seen = observe(probes.probe_time_per_label, time_per_label, case, what)
        entries = _entry_ms(seen["rows"])
        result = seen["result"]
        check_type(result, dict, what)
        if sorted(result, key=repr) != sorted(labels, key=repr):
            raise CheckError(
                f"{what} has keys {sorted(result, key=repr)}; expected exactly {sorted(labels)}."
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
        case = {"n": n, "world_size": world_size, "epoch": epoch, "seed": seed}
        seen = observe(probes.probe_shards_for_epoch, shards_for_epoch, case, what)
        if not seen["is_list"]:
            hint = " Did you forget a `return`?" if seen["type"] == "NoneType" else ""
            raise CheckError(f"{what} should be a list, got {seen['type']}.{hint}")
        result = seen["shards"]
        if len(result) != world_size:
            raise CheckError(
                f"{what} returned {len(result)} shards; expected one per rank ({world_size})."
            )
        shards = []
        for r, shard in enumerate(result):
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
        case = {
            "seed": world_size,
            "world_size": world_size,
            "dtype": dtype,
            "device": device,
            "x": torch.randn(6, 4, generator=g).to(device=device, dtype=dtype),
        }
        reference = probes.build_grad_model(case)
        local = {
            name: p.grad.detach().clone()
            for name, p in reference.named_parameters()
            if p.grad is not None
        }
        what = f"average_gradients(model, world_size={world_size}) ({dtype})"
        seen = observe(probes.probe_average_gradients, average_gradients, case, what)
        misuse = seen["misuse"]
        if misuse is not None:
            if misuse.get("kind") == "op":
                raise CheckError(
                    f"{what}: all_reduce was called with op={misuse.get('op')}; use the default, "
                    "ReduceOp.SUM."
                )
            raise CheckError(
                f"{what}: all_reduce was called with {misuse.get('type')}; call it on p.grad only "
                "for parameters whose .grad is not None."
            )
        if not seen["returned_none"]:
            raise CheckError(
                f"{what} returned {seen['returned_type']}; it works in place and returns None."
            )
        if not seen["calls"]:
            raise CheckError(
                f"{what} never called all_reduce: sum the gradients over the ranks first."
            )
        factor = (world_size + 1) / 2  # mean of 1, 2, ..., world_size
        grads = seen["grads"]
        for name, _ in reference.named_parameters():
            got = grads.get(name)
            if name not in local:
                if got is not None:
                    raise CheckError(
                        f"{what} gave {name} a gradient; parameters without .grad stay None."
                    )
                continue
            if got is None:
                raise CheckError(
                    f"after {what} {name}.grad is None. all_reduce works in place and returns None: "
                    "do not assign its result to p.grad."
                )
            check_type(got, torch.Tensor, f"{name}.grad after {what}")
            summed = local[name] * world_size * factor
            comparable = got.shape == summed.shape and got.dtype == summed.dtype
            got = got.to(summed.device)
            if comparable and world_size > 1 and torch.allclose(got, summed):
                raise CheckError(
                    f"after {what} {name}.grad is the sum over the ranks, not the average: divide by "
                    "world_size after all_reduce."
                )
            for wrong in (2, 1) if world_size not in (1, 2) else ():
                if comparable and torch.allclose(got, summed / wrong):
                    raise CheckError(
                        f"after {what} {name}.grad was divided by {wrong}, not by world_size="
                        f"{world_size}: averaging by the wrong world size changes the step size."
                    )
            assert_close(got, local[name] * factor, what=f"{name}.grad after {what}")


def check_save_checkpoint(save_checkpoint) -> None:
    """Only rank 0 writes; the file is a plain state_dict that loads with weights_only=True."""
    device = get_device()
    for wrapped in (True, False):
        kind = "a DDP-style wrapped model" if wrapped else "a plain model"
        base = {"seed": 5, "device": device, "wrapped": wrapped}
        for rank in (3, 1, 2):
            what = f"save_checkpoint({kind}, path, rank={rank})"
            case = {**base, "rank": rank, "file": f"rank{rank}.pt", "as_str": rank == 2}
            seen = observe(probes.probe_save_checkpoint, save_checkpoint, case, what)
            result = seen["result"]
            if result is not False:
                raise CheckError(f"{what} returned {result!r}; every rank but 0 returns False.")
            if seen["files"]:
                raise CheckError(
                    f"{what} wrote {seen['files']}: only rank 0 saves, or N processes write the "
                    "same file at once."
                )
        expected = probes.build_checkpoint_model(base).state_dict()
        for as_str in (False, True):
            what = f"save_checkpoint({kind}, path, rank=0)"
            case = {**base, "rank": 0, "file": f"rank0-{as_str}.pt", "as_str": as_str}
            seen = observe(probes.probe_save_checkpoint, save_checkpoint, case, what)
            result = seen["result"]
            if result is not True:
                raise CheckError(f"{what} returned {result!r}; rank 0 saves and returns True.")
            if not seen["exists"]:
                raise CheckError(f"{what} returned True but wrote no file at the given path.")
            if seen["load_error"] is not None:
                raise CheckError(
                    f"the file from {what} does not load with weights_only=True "
                    f"({seen['load_error']}). Save model.state_dict(), not the model object."
                )
            state = seen["state"]
            if state is None:
                raise CheckError(
                    f"the object saved by {what} should be a dict, got {seen['loaded_type']}."
                )
            if sorted(state, key=repr) != sorted(expected):
                hint = (
                    " Save the inner model: model.module.state_dict()."
                    if any(isinstance(k, str) and k.startswith("module.") for k in state)
                    else ""
                )
                raise CheckError(
                    f"the state_dict saved by {what} has keys {sorted(state, key=repr)[:4]}...; a "
                    f"plain model expects {sorted(expected)[:4]}....{hint}"
                )
            for key, value in expected.items():
                got = state[key]
                check_type(got, torch.Tensor, f"saved {key}")
                assert_close(got.cpu(), value.detach().cpu(), what=f"saved {key}")
