"""Hidden checks for 10_scaling.

Every check reaches the learner's function through a probe (autograder/probes/scaling.py)
and judges the data that comes back. The profiler checks compute the expected answer from
the profile's rows, which the probe returns next to the answer (timings cannot be rebuilt).
"""

from __future__ import annotations

import re

import torch
from torch import nn
from torch.utils.data import DistributedSampler

from autograder.boundary import AnswerRaised, observe
from autograder.probes import scaling as probes
from tutorial_lib.checks import CheckError, assert_close, check_type
from tutorial_lib.device import get_device


def _entries(rows: list[dict]) -> list[dict]:
    """The profile's rows (key_averages), in order, with times in ms and raw microseconds. Keys
    repeat: with a GPU a label has a CPU row and a GPU row."""
    return [
        {
            "key": row["key"],
            "self": row["self_cpu_time_total"] / 1000,
            "total": row["cpu_time_total"] / 1000,
            "avg": row["cpu_time"] / 1000,
            "self_us": row["self_cpu_time_total"],
            "total_us": row["cpu_time_total"],
        }
        for row in rows
    ]


def _close(value: float, ref: float) -> bool:
    return abs(value - ref) <= 1e-6 * max(1.0, abs(ref))


def _which_field(value: float, fields: dict[str, float]) -> str | None:
    for name, ref in fields.items():
        if name != "key" and _close(value, ref):
            return name
    return None


_FIELD_HINTS = {
    "total": "that is cpu_time_total (includes everything it calls)",
    "avg": "that is cpu_time, the average per call",
    "self_us": "that is in microseconds: divide by 1000",
    "total_us": "that is cpu_time_total in microseconds",
    "self": "that is the self CPU time in ms",
}

# Profiles as a GPU run gives them, for a grader without a GPU: the same key on a CPU row and
# a GPU row (no CPU time), operators and labels mixed, repeated calls (times in microseconds).
FAKE_TOP_OPS = [
    {"key": "aten::addmm", "self": 900.0, "total": 1500.0, "count": 3},
    {"key": "aten::addmm", "device": "cuda", "device_total": 640.0, "device_self": 640.0},
    {"key": "train_step", "self": 2600.0, "total": 5200.0},
    {"key": "train_step", "device": "cuda", "device_total": 1900.0},
    {"key": "aten::mm", "self": 700.0, "total": 700.0, "count": 4},
    {"key": "aten::mm", "device": "cuda", "device_total": 420.0, "device_self": 420.0},
    {"key": "cudaLaunchKernel", "self": 450.0, "total": 450.0, "count": 20},
    {"key": "aten::linear", "self": 40.0, "total": 1560.0, "count": 3},
    {"key": "aten::copy_", "self": 310.0, "total": 330.0, "count": 2},
    {"key": "aten::relu", "self": 125.0, "total": 260.0, "count": 3},
    {"key": "void gemm_kernel<float>", "device": "cuda", "device_total": 800.0},
]
FAKE_TOP_OPS_GPU_FIRST = [  # the GPU rows before the CPU ones
    {"key": "aten::mm", "device": "cuda", "device_total": 420.0, "device_self": 420.0},
    {"key": "aten::addmm", "device": "cuda", "device_total": 640.0, "device_self": 640.0},
    {"key": "aten::mm", "self": 820.0, "total": 820.0, "count": 4},
    {"key": "aten::addmm", "self": 530.0, "total": 1100.0, "count": 3},
    {"key": "aten::add_", "self": 95.0, "total": 95.0, "count": 6},
    {"key": "step", "self": 300.0, "total": 2000.0},
]
FAKE_LABELS = [
    {"key": "load", "self": 2800.0, "total": 3000.0, "count": 3},
    {"key": "load", "device": "cuda", "device_total": 15.0},  # the GPU row comes after
    {"key": "step", "device": "cuda", "device_total": 1200.0},  # the GPU row comes first
    {"key": "step", "self": 90.0, "total": 5000.0, "count": 3},
    {"key": "stepper", "self": 700.0, "total": 777.0},  # a name that starts like "step"
    {"key": "outer", "self": 100.0, "total": 1000.0},
    {"key": "outer", "self": 20.0, "total": 200.0},  # the same label on a second CPU row
    {"key": "aten::mm", "self": 600.0, "total": 600.0, "count": 4},
]


def check_top_ops(top_ops) -> None:
    """Against key_averages() of fresh profiles and of GPU-like fakes with repeated keys: aten::
    only, self time, ms, largest first, every entry (not one per name), k and its default."""
    device = get_device()
    cases = [{"seed": seed, "k": k} for seed in (0, 1) for k in (1, 3, 6, 10_000)]
    cases += [
        {"seed": 0, "k": None},  # the default, k=5
        {"fake": FAKE_TOP_OPS, "k": 3, "label": "a GPU-like profile (CPU and GPU rows)"},
        {"fake": FAKE_TOP_OPS, "k": None, "label": "a GPU-like profile (CPU and GPU rows)"},
        {"fake": FAKE_TOP_OPS_GPU_FIRST, "k": 2, "label": "a profile listing GPU rows first"},
    ]
    for case in cases:
        case = {"seed": 0, **case, "device": device}
        k = 5 if case["k"] is None else case["k"]
        call = "top_ops(prof)" if case["k"] is None else f"top_ops(prof, k={k})"
        what = f"{call} on {case.get('label', 'a profile of a small training loop')}"
        seen = observe(probes.probe_top_ops, top_ops, case, what)
        entries = _entries(seen["rows"])
        ops = sorted(
            (e for e in entries if e["key"].startswith("aten::")),
            key=lambda e: e["self"],
            reverse=True,
        )
        result = seen["result"]
        check_type(result, list, what)
        expected = ops[:k]  # the fakes have no ties within the first k
        if len(result) != len(expected):
            default = " (k defaults to 5)" if case["k"] is None else ""
            raise CheckError(
                f"{what} returned {len(result)} entries; expected {len(expected)}{default}: the "
                f"profile has {len(ops)} aten:: operators, and top_ops keeps the k largest "
                "(filter to aten:: first, then take k)."
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
            rows = [e for e in entries if e["key"] == name]
            if not rows:
                raise CheckError(f"{what} contains {name!r}, which is not in the profile.")
            if not any(_close(ms, e["self"]) for e in rows):
                field = _which_field(ms, rows[0])
                hint = _FIELD_HINTS.get(field, "it matches none of the profile's columns")
                raise CheckError(
                    f"{what} gives {name} {ms:.6g} ms; its self CPU time is "
                    f"{max(e['self'] for e in rows):.6g} ms ({hint})."
                )
        times = [ms for _, ms in result]
        if times != sorted(times, reverse=True):
            raise CheckError(f"{what} is not sorted largest first: {times}.")
        expected_times = [e["self"] for e in expected]
        if any(not _close(a, b) for a, b in zip(times, expected_times, strict=True)):
            names = [n for n, _ in result]
            lost = [e["key"] for e in expected if e["key"] not in names]
            repeated = [n for n in lost if sum(e["key"] == n for e in entries) > 1]
            hint = (
                f" The profile has several rows called {repeated[:2]} (a CPU row and a GPU row "
                "with no CPU time): a dict keyed by name keeps only the last one. Keep every "
                "entry of key_averages() and sort them."
                if repeated
                else " Sort by self_cpu_time_total, largest first."
            )
            raise CheckError(
                f"{what} gives times {[round(t, 4) for t in times]}, not the {len(expected)} "
                f"largest self times {[round(t, 4) for t in expected_times]} "
                f"({[e['key'] for e in expected]}).{hint}"
            )


def check_time_per_label(time_per_label) -> None:
    """Totals (children included, all calls, every row with that key summed: a GPU run gives a
    label a CPU row and a GPU row) in ms per label; 0.0 for absent labels; exact key matches."""
    device = get_device()
    cases = [
        {"seed": 2, "labels": ["load", "step", "outer", "inner", "never ran"]},
        {"seed": 3, "labels": ["load", "step", "outer", "inner", "never ran"]},
        {
            "fake": FAKE_LABELS,
            "labels": ["load", "step", "outer", "never ran"],
            "label": "a GPU-like profile (CPU and GPU rows per label)",
        },
    ]
    for case in cases:
        case = {"seed": 0, **case, "device": device}
        labels = case["labels"]
        what = (
            f"time_per_label(prof, {labels}) on "
            f"{case.get('label', 'a profile of a small training loop')}"
        )
        seen = observe(probes.probe_time_per_label, time_per_label, case, what)
        entries = _entries(seen["rows"])
        result = seen["result"]
        check_type(result, dict, what)
        if sorted(result, key=repr) != sorted(labels, key=repr):
            raise CheckError(
                f"{what} has keys {sorted(result, key=repr)}; expected exactly {sorted(labels)}, "
                "one per label asked for."
            )
        for label in labels:
            value = result[label]
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                check_type(value, float, f"{what}[{label!r}]")
            rows = [e for e in entries if e["key"] == label]
            if not rows:
                if value != 0.0:
                    raise CheckError(
                        f"{what}[{label!r}] is {value}; a label that never ran gets 0.0 (and only "
                        "rows whose key is exactly the label count, not names that contain it)."
                    )
                continue
            fields = {
                name: sum(e[name] for e in rows)
                for name in ("total", "self", "avg", "total_us", "self_us")
            }
            if _close(value, fields["total"]):
                continue
            field = _which_field(value, fields)
            if field is None and len(rows) > 1:
                for e in rows:
                    if _close(value, e["total"]):
                        raise CheckError(
                            f"{what}[{label!r}] is {value:.6g} ms, the cpu_time_total of one of the "
                            f"{len(rows)} rows called {label!r}; the label's total is the sum over "
                            f"all of them, {fields['total']:.6g} ms. With a GPU the same label has a "
                            "CPU row and a GPU row: a dict keyed by name, or the first match only, "
                            "keeps one of them. Add up every row whose key is the label."
                        )
            others = [e["key"] for e in entries if e["key"] != label and label in e["key"]]
            if field is None and others:
                hint = f"it also counts {others[:2]}: compare keys with ==, not startswith or 'in'"
            else:
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
    cases = [  # (n, world_size, epoch, seed; None: left at its default, 0)
        (10, 2, 0, 0),
        (10, 2, 3, 0),
        (7, 3, 1, 5),
        (1, 2, 0, 0),
        (16, 4, 2, 1),
        (5, 1, 4, 0),
        (9, 4, 1, 3),
        (2, 5, 1, 0),  # more padding than samples: the list repeats more than once
        (3, 8, 2, 7),
        (11, 3, 2, None),
    ]
    for n, world_size, epoch, seed in cases:
        seed_arg = "" if seed is None else f", seed={seed}"
        what = f"shards_for_epoch({n}, {world_size}, epoch={epoch}{seed_arg})"
        case = {"n": n, "world_size": world_size, "epoch": epoch, "seed": seed}
        seed = 0 if seed is None else seed
        seen = observe(probes.probe_shards_for_epoch, shards_for_epoch, case, what)
        if not seen["is_list"]:
            hint = " Did you forget a `return`?" if seen["type"] == "NoneType" else ""
            raise CheckError(f"{what} should be a list, got {seen['type']}.{hint}")
        if seen["rng_changed"]:
            raise CheckError(
                f"{what} changed the global random state: torch.manual_seed(...) (also as "
                "generator=torch.manual_seed(...), which returns the global generator reseeded) "
                "resets the caller's random stream. DistributedSampler uses a generator of its "
                "own; if you shuffle yourself, use torch.Generator().manual_seed(seed + epoch)."
            )
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
                f"{per_rank} (ceil(n / world_size)), repeating the shuffled list as often as needed "
                "(more than once when world_size > 2 n). Unequal shards mean unequal numbers of "
                "steps, and DDP waits forever for the rank that stopped early."
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
        flat = [i for shard in expected for i in shard]
        if sorted(i for shard in shards for i in shard) == sorted(flat):
            raise CheckError(
                f"{what} = {shards}: the right indices, dealt out differently from "
                f"DistributedSampler ({expected}). After padding, rank r takes every "
                "world_size-th index starting at r (indices[r::world_size]), not a contiguous chunk."
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
                f"{what} never called all_reduce: sum the gradients over the ranks first "
                "(all_reduce(p.grad) for every parameter whose .grad is not None)."
            )
        if seen["pending"]:
            raise CheckError(
                f"{what} launched all_reduce(..., async_op=True) and never waited for "
                f"{seen['pending']} of the handles: an asynchronous all_reduce returns a work "
                "handle, and the sum only lands in the tensor after handle.wait(). Wait on every "
                "handle (then divide), or call all_reduce synchronously."
            )
        if seen["changed_before_wait"]:
            raise CheckError(
                f"{what} changed a gradient between launching its asynchronous all_reduce and "
                "waiting for it: the reduction then overwrites (or races with) your division. "
                "Call handle.wait() first, then divide by world_size."
            )
        if seen["weights_changed"]:
            raise CheckError(
                f"{what} changed the weights {seen['weights_changed'][:3]}: only the gradients "
                "are averaged (all_reduce(p.grad), not p or p.data)."
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
            expected = local[name] * factor
            if comparable and not torch.allclose(got, expected):
                ratio = (got.double().norm() / expected.double().norm()).item()
                raise CheckError(
                    f"after {what} {name}.grad is {ratio:.4g} times the average over the ranks. "
                    "Reduce each gradient exactly once (model.parameters() lists each parameter "
                    "once; looping over model.modules() visits nested ones several times), then "
                    "divide it once by world_size."
                )
            assert_close(got, expected, what=f"{name}.grad after {what}")


def _observe_save(save_checkpoint, case: dict, what: str) -> dict:
    try:
        return observe(probes.probe_save_checkpoint, save_checkpoint, case, what)
    except AnswerRaised as err:
        if err.type_name != "AttributeError" or case["wrapped"]:
            raise
        raise CheckError(
            f"{what} raised AttributeError: {err.message}. A plain model has no .module: unwrap "
            "only a wrapped model (isinstance(model, DistributedDataParallel), or "
            "getattr(model, 'module', model))."
        ) from None


def check_save_checkpoint(save_checkpoint) -> None:
    """Only rank 0 writes; the file is a plain state_dict (nested parts, buffers, a root
    parameter, keys that contain "module.") that loads with weights_only=True; the model given
    is a real DistributedDataParallel object or a plain model, and stays as it was."""
    device = get_device()
    for wrapped in (True, False):
        kind = "a DistributedDataParallel model" if wrapped else "a plain (unwrapped) model"
        base = {"seed": 5, "device": device, "wrapped": wrapped}
        for rank in (3, 1, 2):
            what = f"save_checkpoint({kind}, path, rank={rank})"
            case = {**base, "rank": rank, "file": f"rank{rank}.pt", "as_str": rank == 2}
            seen = _observe_save(save_checkpoint, case, what)
            result = seen["result"]
            if result is not False:
                raise CheckError(
                    f"{what} returned {result!r}; every rank but 0 writes nothing and returns False."
                )
            if seen["files"]:
                raise CheckError(
                    f"{what} wrote {seen['files']}: only rank 0 saves (if rank != 0: return False "
                    "before torch.save), or N processes write the same file at once."
                )
        expected = probes.build_checkpoint_model(base).state_dict()
        for as_str in (False, True):
            what = f"save_checkpoint({kind}, path{' as a str' if as_str else ''}, rank=0)"
            case = {**base, "rank": 0, "file": f"rank0-{as_str}.pt", "as_str": as_str}
            seen = _observe_save(save_checkpoint, case, what)
            result = seen["result"]
            if result is not True:
                raise CheckError(f"{what} returned {result!r}; rank 0 saves and returns True.")
            if not seen["exists"]:
                raise CheckError(
                    f"{what} returned True but wrote no file at the given path ({seen['files']} "
                    "in its folder): torch.save(state_dict, path) with the path as given."
                )
            if seen["load_error"] is not None:
                raise CheckError(
                    f"the file from {what} does not load with weights_only=True "
                    f"({seen['load_error']}). Save model.state_dict(), not the model object."
                )
            if not seen["inner_training"]:
                raise CheckError(
                    f"{what} left the model in eval mode: saving must not change it (on rank 0 "
                    "only, training would then go on differently there). A state_dict is the "
                    "same in either mode."
                )
            if seen["inner_device"].type != device.type:
                raise CheckError(
                    f"{what} moved the model to {seen['inner_device']}: saving must not change "
                    "it (Module.cpu() moves the caller's model in place)."
                )
            state = seen["state"]
            if state is None:
                raise CheckError(
                    f"the object saved by {what} should be a dict (a state_dict), got "
                    f"{seen['loaded_type']}."
                )
            if sorted(state, key=repr) != sorted(expected):
                got = sorted(state, key=repr)
                missing = sorted(set(expected) - set(state))
                if any(isinstance(k, str) and k.startswith("module.") for k in state):
                    hint = " Save the inner model: model.module.state_dict()."
                elif missing and all("running" in k or "num_batches" in k for k in missing):
                    hint = (
                        " The buffers (batch norm's running statistics) are missing: save "
                        "state_dict(), not the named parameters."
                    )
                elif any(isinstance(k, str) and "module." in k for k in missing):
                    hint = (
                        " Keys were rewritten: replace('module.', '') also edits keys such as "
                        "'encoder_module.0.weight'. Unwrap the model (model.module) instead of "
                        "editing keys."
                    )
                else:
                    hint = ""
                raise CheckError(
                    f"the state_dict saved by {what} has keys {got[:5]}...; the plain model "
                    f"expects {sorted(expected)[:5]}... (missing {missing[:3]}).{hint}"
                )
            for key, value in expected.items():
                got = state[key]
                check_type(got, torch.Tensor, f"saved {key}")
                assert_close(got.cpu(), value.detach().cpu(), what=f"saved {key}")


# ---------------------------------------------------------------------------------------
# strip_wrapper_prefixes
# ---------------------------------------------------------------------------------------

_WRAPPER_PREFIXES = ("module.", "_orig_mod.")


def _reference_unwrap(key: str) -> str:
    """The key without any leading run of 'module.' and '_orig_mod.', in any order."""
    stripped = True
    while stripped:
        stripped = False
        for prefix in _WRAPPER_PREFIXES:
            if key.startswith(prefix):
                key, stripped = key[len(prefix) :], True
    return key


class _Inner(nn.Module):
    """Names that trap the usual shortcuts: 'module' and '_orig_mod' inside names, names that
    start with letters of 'module.' (str.lstrip), a batch norm with an int64 buffer."""

    def __init__(self, g: torch.Generator):
        super().__init__()
        self.embed = nn.Embedding(5, 3)
        self.module_norm = nn.LayerNorm(3)
        self.attn_module = nn.Linear(3, 3)
        self.add_module("_orig_mod_proj", nn.Linear(3, 2))
        self.bn = nn.BatchNorm1d(2)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g))


def _wrapper_hint(before: str, after: str) -> str:
    """What a wrong renaming of one key says about the code that did it."""
    expected = _reference_unwrap(before)
    replaced = {
        before.replace("module.", "").replace("_orig_mod.", ""),
        before.replace("_orig_mod.", "").replace("module.", ""),
    }
    if after in replaced:
        return (
            "str.replace removes the prefix wherever it appears, also inside the key: strip "
            "only at the start (str.startswith / str.removeprefix)."
        )
    if after != expected and _reference_unwrap(after) == expected:
        return (
            f"{after!r} still starts with a wrapper's prefix: keep stripping while the key starts "
            "with either prefix, in whatever order they come (one wrapper can hold another, "
            "several times)."
        )
    if expected.endswith(after) and len(after) < len(expected):
        eaten = expected[: len(expected) - len(after)]
        if re.fullmatch(r"((module|_orig_mod).)+", eaten):
            return (
                f"{eaten!r} was taken for a prefix: in a regular expression an unescaped '.' "
                r"matches any character, so escape it (r'^(module\.|_orig_mod\.)+')."
            )
        if set(eaten) <= set("module._orig"):
            return (
                f"{eaten!r} was eaten from the start of {expected!r}: str.lstrip removes any of "
                "the characters listed (m, o, d, u, l, e, '.', ...), not a word. Use "
                "str.removeprefix."
            )
        return (
            f"{expected.split('.')[0]!r} is a name of its own, not a wrapper's prefix: compare the "
            "whole prefix with its dot (key.startswith('module.'); in a regular expression "
            r"r'^module\.', since an unescaped '.' matches any character)."
        )
    if expected == before:
        return (
            f"This key does not start with 'module.' or '_orig_mod.' (it starts with "
            f"{before.split('.')[0]!r}), so it stays as it is."
        )
    if after == before:
        return "This key starts with a wrapper's prefix and should lose it."
    return "Remove only whole leading 'module.' and '_orig_mod.' parts, nothing else."


def check_strip_wrapper_prefixes(strip_wrapper_prefixes) -> None:
    """Checkpoints of compiled, DataParallel and nested wrappers (a real model's keys), keys
    with the words inside them, no prefix at all, and an empty dict."""
    g = torch.Generator().manual_seed(11)
    inner = _Inner(g)
    inner_sd = inner.state_dict()
    cases = []  # (what, [[key, tensor, transposed], ...])
    for what, prefix in (
        ("a compiled model's state_dict", "_orig_mod."),
        ("DataParallel around a compiled model", "module._orig_mod."),
        ("a compiled DataParallel model", "_orig_mod.module."),
        ("three wrappers (compiled, DDP, compiled)", "_orig_mod.module._orig_mod."),
        ("DataParallel in DataParallel in DataParallel", "module.module.module."),
    ):
        cases.append((what, [[prefix + k, v, False] for k, v in inner_sd.items()]))
    cases.append(
        ("a DataParallel checkpoint", [["module." + k, v, False] for k, v in inner_sd.items()])
    )
    mixed = [
        ["module.encoder.module.fc.weight", torch.randn(2, 3, generator=g), True],
        ["modules.count", torch.tensor(4), False],  # 'module' then 's'
        ["module_norm.weight", torch.randn(3, generator=g), False],  # 'module' then '_'
        ["_orig_mod_x.bias", torch.randn(3, generator=g), False],  # '_orig_mod' then '_'
        ["_orig_modx.w", torch.randn(1, generator=g), False],
        ["model.weight", torch.randn(2, generator=g), False],  # every letter is in 'module.'
        ["_orig_mod.embed.weight", torch.randn(5, 3, generator=g), False],
        ["head.module.bias", torch.randn(3, generator=g), False],  # inside: keep it
        ["encoder._orig_mod.weight", torch.randn(3, generator=g), False],
        ["_orig_mod._orig_mod.module.module.deep.w", torch.randn(2, generator=g), False],
        ["module._orig_mod.fc.w", torch.randn(2, 2, generator=g), True],
    ]
    cases.append(("a state_dict with some wrapped keys", mixed))
    cases.append(("a plain state_dict (no prefixes)", [[k, v, False] for k, v in inner_sd.items()]))
    cases.append(("an empty state_dict", []))
    for what, entries in cases:
        call = f"strip_wrapper_prefixes({what})"
        keys_before = [key for key, _, _ in entries]
        seen = observe(
            probes.probe_strip_wrapper_prefixes, strip_wrapper_prefixes, {"entries": entries}, call
        )
        if not seen["is_dict"]:
            raise CheckError(f"{call} returned a {seen['type']}; return a dict (key -> tensor).")
        if seen["caller_keys_after"] != keys_before or not seen["caller_values_kept"]:
            raise CheckError(
                f"{call} changed the caller's dict: its keys are now "
                f"{seen['caller_keys_after'][:4]}. Build and return a new dict instead of "
                "renaming keys in place (the caller may still need the original)."
            )
        if seen["same_object"]:
            raise CheckError(
                f"{call} returned the caller's dict itself. Return a new dict even when no key "
                "needs renaming: whoever edits the result would otherwise edit the caller's "
                "checkpoint too."
            )
        expected = [_reference_unwrap(key) for key in keys_before]
        out_keys = seen["keys"]
        if out_keys != expected:
            wrong = [
                (a, b)
                for a, b in zip(keys_before, out_keys, strict=False)
                if b != _reference_unwrap(a)
            ]
            if len(out_keys) == len(expected) and sorted(out_keys) == sorted(expected):
                raise CheckError(
                    f"{call} returned the right keys in another order: {out_keys[:4]}, expected "
                    f"{expected[:4]}. Build the new dict in the input's order."
                )
            if wrong:
                before, after = wrong[0]
                raise CheckError(
                    f"{call} turned the key {before!r} into {after!r}, expected "
                    f"{_reference_unwrap(before)!r}. {_wrapper_hint(before, after)}"
                )
            raise CheckError(
                f"{call} returned {len(out_keys)} keys, expected {len(expected)}: {expected[:4]}. "
                "Keep every entry, renamed or not."
            )
        for i, (key, value) in enumerate(zip(expected, seen["values"], strict=True)):
            if i not in value["is_of"]:
                how = (
                    "a new tensor object on the same memory (a view, .detach() or .data)"
                    if i in value["shares_memory_with"]
                    else f"a {value['type']} that is not the original (a copy, clone() or contiguous())"
                )
                raise CheckError(
                    f"{call}: the value for {key!r} is {how}. Rename the keys and keep the values "
                    "as they are: the same tensor objects."
                )
