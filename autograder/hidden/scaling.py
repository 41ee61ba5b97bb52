"""Hidden checks for 10_scaling.

Every check reaches the learner's function through a probe (autograder/probes/scaling.py)
and judges the data that comes back. The profiler checks compute the expected answer from
the profile's rows, which the probe returns next to the answer (timings cannot be rebuilt).
"""

from __future__ import annotations

import re

import torch
from hypothesis import strategies as st
from torch.utils.data import DistributedSampler

from autograder import wire
from autograder.boundary import observe
from autograder.contracts import FLOAT64_EXACT, Build, Contract, Draw, Inputs, uses
from autograder.probes import scaling as probes
from tutorial_lib.checks import CheckError, assert_close, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _


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


def _field_hint(field: str | None) -> str:
    """What a top_ops time that matches the profile's column ``field`` is (a function, not a
    dict: each call looks the words up in its own language)."""
    hints = {
        "total": _("that is cpu_time_total (includes everything it calls)"),
        "avg": _("that is cpu_time, the average per call"),
        "self_us": _("that is in microseconds: divide by 1000"),
        "total_us": _("that is cpu_time_total in microseconds"),
        "self": _("that is the self CPU time in ms"),
    }
    return hints.get(field, _("it matches none of the profile's columns"))


def _top_ops_expected(entries: list[dict], k: int) -> list[dict]:
    """The k aten:: entries with the largest self time, largest first."""
    ops = [e for e in entries if e["key"].startswith("aten::")]
    return sorted(ops, key=lambda e: e["self"], reverse=True)[:k]


def _judge_top_ops(result: object, entries: list[dict], k: int, default_k: bool, what: str):
    """top_ops' result against the profile's rows: aten:: only, self time, ms, largest first,
    every entry (not one per name), k entries (or all the operators there are)."""
    ops = [e for e in entries if e["key"].startswith("aten::")]
    check_type(result, list, what)
    for item in result:  # a label first: it also makes the count wrong, less plainly
        name = item[0] if isinstance(item, tuple) and item else None
        if isinstance(name, str) and not name.startswith("aten::"):
            raise CheckError(
                _(
                    "{what} contains {name!r}, which is not a PyTorch operator: keep only "
                    "entries whose key starts with 'aten::' (your own labels are left out)."
                ).format(what=what, name=name)
            )
    expected = _top_ops_expected(entries, k)  # ties: any order, same times
    if isinstance(result, list) and all(
        e["self"] == 0 and e["total"] == 0 for e in expected[len(result) :]
    ):
        expected = expected[: len(result)]  # rows with no CPU time (a GPU side) may be left out
    elif isinstance(result, list) and len(result) != len(expected):
        # ... also before taking k: a CPU row with no self time (a wrapper's) stays
        cpu_rows = _top_ops_expected([e for e in entries if e["self"] or e["total"]], k)
        if len(result) == len(cpu_rows):
            expected = cpu_rows
    if len(result) != len(expected):
        default = _(" (k defaults to 5)") if default_k else ""
        idle = len(result) < len(expected) and any(e["self"] == 0 for e in expected)
        raise CheckError(
            _(
                "{what} returned {count} entries; expected {expected}{default}: the "
                "profile has {ops} aten:: operators, and top_ops keeps the k largest "
                "(filter to aten:: first, then take k)."
            ).format(
                what=what,
                count=len(result),
                expected=len(expected),
                default=default,
                ops=len(ops),
            )
            + (
                _(
                    " An operator whose self time is 0 (a wrapper whose time is all in "
                    "what it calls) is still one of the entries: do not filter on the time."
                )
                if idle
                else ""
            )
        )
    for item in result:
        check_type(item, tuple, _("an entry of {what}").format(what=what))
        if len(item) != 2 or not isinstance(item[0], str):
            raise CheckError(
                _("each entry of {what} should be (name, ms), got {item!r}.").format(
                    what=what, item=item
                )
            )
        name, ms = item
        check_type(ms, float, _("the time of {name} in {what}").format(name=name, what=what))
        if not name.startswith("aten::"):
            raise CheckError(
                _(
                    "{what} contains {name!r}, which is not a PyTorch operator: keep only "
                    "entries whose key starts with 'aten::' (your own labels are left out)."
                ).format(what=what, name=name)
            )
        rows = [e for e in entries if e["key"] == name]
        if not rows:
            raise CheckError(
                _("{what} contains {name!r}, which is not in the profile.").format(
                    what=what, name=name
                )
            )
        if not any(_close(ms, e["self"]) for e in rows):
            field = _which_field(ms, rows[0])
            raise CheckError(
                _(
                    "{what} gives {name} {ms:.6g} ms; its self CPU time is {own:.6g} ms ({hint})."
                ).format(
                    what=what,
                    name=name,
                    ms=ms,
                    own=max(e["self"] for e in rows),
                    hint=_field_hint(field),
                )
            )
    times = [ms for _name, ms in result]
    if times != sorted(times, reverse=True):
        raise CheckError(
            _("{what} is not sorted largest first: {times}.").format(what=what, times=times)
        )
    expected_times = [e["self"] for e in expected]
    if any(not _close(a, b) for a, b in zip(times, expected_times, strict=True)):
        names = [n for n, _ms in result]
        lost = [e["key"] for e in expected if e["key"] not in names]
        repeated = [
            n for n in dict.fromkeys(names + lost) if sum(e["key"] == n for e in entries) > 1
        ]
        hint = (
            _(
                " The profile has several rows called {names} (a CPU row and a GPU row "
                "with no CPU time): a dict keyed by name keeps only the last one. Keep every "
                "entry of key_averages() and sort them."
            ).format(names=repeated[:2])
            if repeated
            else _(" Sort by self_cpu_time_total, largest first.")
        )
        raise CheckError(
            _(
                "{what} gives times {times}, not the {count} "
                "largest self times {expected} ({keys}).{hint}"
            ).format(
                what=what,
                times=[round(t, 4) for t in times],
                count=len(expected),
                expected=[round(t, 4) for t in expected_times],
                keys=[e["key"] for e in expected],
                hint=hint,
            )
        )


def _reference_top_ops(prof, k: int = 5) -> list[tuple[str, float]]:
    ops = [e for e in prof.key_averages() if e.key.startswith("aten::")]
    ops.sort(key=lambda e: e.self_cpu_time_total, reverse=True)
    return [(e.key, e.self_cpu_time_total / 1000) for e in ops[:k]]


# What a drawn profile's rows are called: operators (a wrapper, aten::linear, with a large
# total), labels (one that starts like another), a CUDA runtime call.
_ROW_KEYS = (
    "aten::mm",
    "aten::addmm",
    "aten::linear",
    "aten::relu",
    "step",
    "stepper",
    "load",
    # a label with "aten" inside, at its start even: 'aten' in key, or startswith('aten')
    # without the colons, is not startswith('aten::')
    "aten_concatenate",
    "wrap(aten::mm)",  # a label with "aten::" inside: 'aten::' in key is not startswith either
)


def _draw_rows(d: Draw) -> list[dict]:
    """Rows of key_averages() as a GPU run gives them: CPU rows (self and total CPU time in
    microseconds, calls; a self time of 0 now and then, as a wrapper's can be), a key on
    several CPU rows, and a CPU row's GPU twin (same key, no CPU time) listed before or after
    it."""
    rows = []
    for _row in range(d.size(0, 6, empty_ok=True)):
        key = d.draw(st.sampled_from(_ROW_KEYS))
        own = float(d.draw(st.one_of(st.integers(1, 40), st.just(0)))) * 25.0
        cpu = {
            "key": key,
            "self": own,
            "total": own + float(d.draw(st.integers(0, 40))) * 25.0,
            "count": d.draw(st.integers(1, 4)),
        }
        gpu = {"key": key, "device": "cuda", "device_total": 250.0, "device_self": 250.0}
        twin = d.draw(st.sampled_from([None, "after", "before"]))
        rows += {None: [cpu], "after": [cpu, gpu], "before": [gpu, cpu]}[twin]
    return rows


def _profile_arg(rows: list[dict]) -> Build:
    """The profile as a Build, named by its rows (CPU times in microseconds)."""
    named = [
        f"{r['key']} (GPU)"
        if r.get("device") == "cuda"
        else f"{r['key']} self {r['self']:g} total {r['total']:g} us"
        for r in rows
    ]
    return Build(probes.build_fake_profile, {"rows": rows}, f"a profile with rows {named}")


def _draw_top_ops(d: Draw) -> Inputs:
    """A drawn profile, and k left at its default (5), 0 (no entries), 1 to 4, or far more
    than the rows."""
    prof = _profile_arg(_draw_rows(d))
    k = d.draw(st.sampled_from([None, 0, 1, 2, 3, 4, 10_000]))
    return Inputs((prof,) if k is None else (prof, k))


def _compare_top_ops(got: object, expected: list, what: str, inputs: Inputs) -> None:
    prof = inputs.args[0]
    k = inputs.args[1] if len(inputs.args) > 1 else 5
    entries = _entries(probes.profile_rows(prof.make()))
    _judge_top_ops(got, entries, k, len(inputs.args) == 1, what)


TOP_OPS = Contract(
    "top_ops",
    _reference_top_ops,
    _draw_top_ops,
    families=("values", "edges"),  # a profile in, numbers out: no tensor family applies
    compare=_compare_top_ops,
    arg_names=("prof", "k"),
    examples=24,  # cheap fakes; a name's CPU and GPU rows in either order take a few draws
)


@uses(TOP_OPS)
def check_top_ops(top_ops) -> None:
    """The contract (drawn GPU-like profiles: CPU and GPU rows per name, labels, wrappers, k
    and its default), then a real profile of a small training loop."""
    for k in (3, None):
        case = {"seed": 0, "k": k, "device": get_device()}
        call = "top_ops(prof)" if k is None else f"top_ops(prof, k={k})"
        what = _("{call} on {profile}").format(
            call=call, profile=_("a profile of a small training loop")
        )
        seen = observe(probes.probe_top_ops, top_ops, case, what)
        _judge_top_ops(
            seen["result"], _entries(seen["rows"]), 5 if k is None else k, k is None, what
        )


def _judge_time_per_label(result: object, entries: list[dict], labels: list, what: str) -> None:
    """time_per_label's result against the profile's rows: one key per label, the sum of the
    cpu_time_total of every row whose key is the label, in ms; 0.0 for an absent label."""
    check_type(result, dict, what)
    if sorted(result, key=repr) != sorted(labels, key=repr):
        raise CheckError(
            _("{what} has keys {keys}; expected exactly {labels}, one per label asked for.").format(
                what=what, keys=sorted(result, key=repr), labels=sorted(labels)
            )
        )
    for label in labels:
        value = result[label]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            check_type(value, float, f"{what}[{label!r}]")
        rows = [e for e in entries if e["key"] == label]
        if not rows:
            if value != 0.0:
                raise CheckError(
                    _(
                        "{what}[{label!r}] is {value}; a label that never ran gets 0.0 (and "
                        "only rows whose key is exactly the label count, not names that "
                        "contain it)."
                    ).format(what=what, label=label, value=value)
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
                        _(
                            "{what}[{label!r}] is {value:.6g} ms, the cpu_time_total of one of "
                            "the {count} rows called {label!r}; the label's total is the sum "
                            "over all of them, {total:.6g} ms. With a GPU the same label has a "
                            "CPU row and a GPU row: a dict keyed by name, or the first match "
                            "only, keeps one of them. Add up every row whose key is the label."
                        ).format(
                            what=what,
                            label=label,
                            value=value,
                            count=len(rows),
                            total=fields["total"],
                        )
                    )
        others = [e["key"] for e in entries if e["key"] != label and label in e["key"]]
        if field is None and others:
            hint = _(
                "it also counts {others}: compare keys with ==, not startswith or 'in'"
            ).format(others=others[:2])
        else:
            hint = {
                "self": _("that is the self time, which leaves out the operators inside the label"),
                "avg": _("that is cpu_time, one call's average: use the total over all calls"),
                "total_us": _("that is in microseconds: divide by 1000"),
                "self_us": _("that is the self time in microseconds"),
            }.get(field, _("it matches none of the profile's columns"))
        raise CheckError(
            _(
                "{what}[{label!r}] is {value:.6g} ms; the label's total CPU time is "
                "{total:.6g} ms ({hint})."
            ).format(what=what, label=label, value=value, total=fields["total"], hint=hint)
        )


def _reference_time_per_label(prof, labels: list) -> dict:
    totals = {label: 0.0 for label in labels}
    for e in prof.key_averages():
        if e.key in totals:
            totals[e.key] += e.cpu_time_total / 1000
    return totals


def _draw_time_per_label(d: Draw) -> Inputs:
    """A drawn profile; labels that ran (on a CPU row, a GPU row or several), one that never
    did, one that starts like another ("step", "stepper"); none in edges."""
    rows = _draw_rows(d)
    wanted = st.lists(st.sampled_from(("step", "load", "stepper", "never ran")), unique=True)
    return Inputs((_profile_arg(rows), d.draw(wanted)))


def _compare_time_per_label(got: object, expected: dict, what: str, inputs: Inputs) -> None:
    prof, labels = inputs.args
    _judge_time_per_label(got, _entries(probes.profile_rows(prof.make())), labels, what)


TIME_PER_LABEL = Contract(
    "time_per_label",
    _reference_time_per_label,
    _draw_time_per_label,
    families=("values", "edges"),  # the text promises a list of labels: no once family
    compare=_compare_time_per_label,
    arg_names=("prof", "labels"),
    examples=24,
)


@uses(TIME_PER_LABEL)
def check_time_per_label(time_per_label) -> None:
    """The contract (drawn GPU-like profiles: a label's CPU and GPU rows, repeated rows,
    absent labels, exact key matches), then a real profile of a small training loop."""
    labels = ["load", "step", "outer", "inner", "never ran"]
    case = {"seed": 2, "labels": labels, "device": get_device()}
    what = _("time_per_label(prof, {labels}) on {profile}").format(
        labels=labels, profile=_("a profile of a small training loop")
    )
    seen = observe(probes.probe_time_per_label, time_per_label, case, what)
    _judge_time_per_label(seen["result"], _entries(seen["rows"]), labels, what)


def _reference_shards(n: int, world_size: int, epoch: int, seed: int = 0) -> list[list[int]]:
    shards = []
    for rank in range(world_size):
        sampler = DistributedSampler(
            range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed
        )
        sampler.set_epoch(epoch)
        shards.append([int(i) for i in sampler])
    return shards


def _draw_shards(d: Draw) -> Inputs:
    """0 to 20 samples (none only in edges: every rank gets an empty shard) on 1 to 8 ranks
    (more ranks than samples: the padding repeats the list more than once), epochs 0 to 5,
    the seed left at its default or given."""
    n, world_size = d.size(1, 20, empty_ok=True), d.size(1, 8)
    epoch = d.draw(st.integers(0, 5))
    seed = d.draw(st.sampled_from([None, 0, 1, 5]))
    return Inputs((n, world_size, epoch) if seed is None else (n, world_size, epoch, seed))


def _compare_shards(got: object, expected: list, what: str, inputs: Inputs) -> None:
    """DistributedSampler's shards exactly; a wrong answer named by its sizes, coverage, epoch
    or dealing."""
    n, world_size, epoch = inputs.args[:3]
    seed = inputs.args[3] if len(inputs.args) > 3 else 0
    if not isinstance(got, list):
        kind = wire.type_name(got)
        hint = _(" Did you forget a `return`?") if kind == "NoneType" else ""
        raise CheckError(
            _("{what} should be a list, got {type}.{hint}").format(what=what, type=kind, hint=hint)
        )
    if len(got) != world_size:
        raise CheckError(
            _("{what} returned {count} shards; expected one per rank ({world_size}).").format(
                what=what, count=len(got), world_size=world_size
            )
        )
    shards = []
    for r, shard in enumerate(got):
        items = list(shard) if isinstance(shard, (list, tuple, torch.Tensor)) else [shard]
        if isinstance(shard, torch.Tensor) or any(isinstance(i, torch.Tensor) for i in items):
            raise CheckError(
                _(
                    "shard {rank} of {what} holds tensors ({items}); the text asks for lists of "
                    "ints: turn a tensor of indices into them with .tolist()."
                ).format(rank=r, what=what, items=items[:3])
            )
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            raise CheckError(
                _("shard {rank} of {what} should hold integer indices, got {items}.").format(
                    rank=r, what=what, items=items[:5]
                )
            )
        shards.append([int(i) for i in items])
    if shards == expected:
        return
    per_rank = -(-n // world_size)
    sizes = [len(s) for s in shards]
    if sizes != [per_rank] * world_size:
        raise CheckError(
            _(
                "{what} gives shard sizes {sizes}; DistributedSampler pads so that every rank "
                "gets {per_rank} (ceil(n / world_size)), repeating the shuffled list as often "
                "as needed (more than once when world_size > 2 n). Unequal shards mean "
                "unequal numbers of steps, and DDP waits forever for the rank that stopped "
                "early."
            ).format(what=what, sizes=sizes, per_rank=per_rank)
        )
    covered = set().union(*map(set, shards))
    if len(covered) < n:
        raise CheckError(
            _(
                "{what} misses samples {missed}: the shards overlap. "
                "Every rank must shuffle with the same seed (seed + epoch), then take every "
                "world_size-th index starting at its rank."
            ).format(what=what, missed=sorted(set(range(n)) - covered)[:10])
        )
    if n > 1 and world_size == 1 and shards == [list(range(n))]:
        raise CheckError(
            _(
                "{what} = {shards}: the indices in order, not shuffled. DistributedSampler "
                "(shuffle=True) shuffles with seed + epoch whatever world_size is, one rank "
                "included."
            ).format(what=what, shards=shards)
        )
    if epoch > 0 and shards == _reference_shards(n, world_size, 0, seed):
        raise CheckError(
            _(
                "{what} equals the shards of epoch 0: the epoch is ignored. Call "
                "sampler.set_epoch(epoch) before iterating."
            ).format(what=what)
        )
    flat = [i for shard in expected for i in shard]
    if sorted(i for shard in shards for i in shard) == sorted(flat):
        raise CheckError(
            _(
                "{what} = {shards}: the right indices, dealt out differently from "
                "DistributedSampler ({expected}). After padding, rank r takes every "
                "world_size-th index starting at r (indices[r::world_size]), not a "
                "contiguous chunk."
            ).format(what=what, shards=shards, expected=expected)
        )
    raise CheckError(
        _(
            "{what} = {shards} differs from what DistributedSampler yields: {expected}. "
            "Shuffle with torch.randperm(n, generator seeded with seed + epoch), pad by "
            "repeating the start, then rank r takes indices[r::world_size]."
        ).format(what=what, shards=shards, expected=expected)
    )


def _shards_hint(family: str, inputs: Inputs) -> str:
    if inputs.args[0] == 0:
        return _(
            "An empty dataset (n=0): DistributedSampler gives every rank an empty list, with "
            "nothing to pad and nothing to divide by n."
        )
    return ""


SHARDS_FOR_EPOCH = Contract(
    "shards_for_epoch",
    _reference_shards,
    _draw_shards,
    families=("values", "edges"),  # ints in, ints out: no tensor families apply
    compare=_compare_shards,
    arg_names=("n", "world_size", "epoch", "seed"),
    hint=_shards_hint,
)


@uses(SHARDS_FOR_EPOCH)
def check_shards_for_epoch(shards_for_epoch) -> None:
    """The contract (exactly DistributedSampler's shards, for many sizes, epochs and seeds),
    then: the global random state is left alone."""
    what = "shards_for_epoch(10, 2, epoch=3, seed=1)"
    case = {"n": 10, "world_size": 2, "epoch": 3, "seed": 1}
    if observe(probes.probe_shards_for_epoch, shards_for_epoch, case, what)["rng_changed"]:
        raise CheckError(
            _(
                "{what} changed the global random state: torch.manual_seed(...) (also as "
                "generator=torch.manual_seed(...), which returns the global generator "
                "reseeded) resets the caller's random stream. DistributedSampler uses a "
                "generator of its own; if you shuffle yourself, use "
                "torch.Generator().manual_seed(seed + epoch)."
            ).format(what=what)
        )


def _reference_average(model, world_size, all_reduce):
    for p in model.parameters():
        if p.grad is not None:
            all_reduce(p.grad)
            p.grad /= world_size


def _draw_average(d: Draw) -> Inputs:
    """World sizes from 1; float32 or float64; a parameter tied between two modules, or not;
    now and then no gradient at all (no backward pass ran)."""
    world_size = d.size(1, 5)
    spec = {
        "seed": d.draw(st.integers(0, 99)),
        "dtype": d.draw(st.sampled_from(["float32", "float64"])),
        "tied": d.draw(st.booleans()),
        "grads": d.draw(st.sampled_from([True, True, False])),
        "frozen_after": not d.draw(st.booleans()),  # first drawn: frozen after backward
    }
    label = (
        f"a {spec['dtype']} model with a frozen bias and an unused layer"
        + (", a weight shared by two layers" if spec["tied"] else "")
        + ("" if spec["grads"] else ", no gradients yet")
        + (
            ", a bias frozen after the backward pass (its .grad is set)"
            if spec["frozen_after"]
            else ""
        )
    )
    reduce = Build(probes.build_all_reduce, {"world_size": world_size}, "all_reduce")
    return Inputs((Build(probes.build_grad_model, spec, label), world_size, reduce))


def _average_hint(family: str, inputs: Inputs) -> str:
    hint = _(
        "For each parameter of model.parameters() (each once) whose .grad is not None, "
        "requires_grad or not: "
        "all_reduce(p.grad), which sums in place over the ranks (wait on its handle if you "
        "pass async_op=True), then divide that gradient once by world_size={world_size}, in "
        "place. Leave the weights and the parameters without .grad as they are; return None."
    ).format(world_size=inputs.args[1])
    if inputs.args[0].spec["dtype"] == "float64":
        hint += _(
            " Divide in the gradient's own dtype (p.grad /= world_size): a float32 working "
            "copy of a float64 gradient is off by about 1e-8."
        )
    return hint


AVERAGE_GRADIENTS = Contract(
    "average_gradients",
    _reference_average,
    _draw_average,
    # no tensors among the arguments: the model's dtype is drawn in its recipe
    families=("values", "edges"),
    mutates=(0,),
    arg_names=("model", "world_size", "all_reduce"),
    hint=_average_hint,
    # divided in place, in the gradient's dtype: a float32 working copy is off by 1e-8
    tolerance=FLOAT64_EXACT,
)


@uses(AVERAGE_GRADIENTS)
def check_average_gradients(average_gradients) -> None:
    """The contract: the model afterwards (every .grad, the weights, the flags) as the
    reference leaves it, on simulated ranks of several world sizes, None returned. By hand
    (values cannot show it): a gradient of zeros goes through all_reduce like any other, and
    each .grad is divided in place (the same tensor afterwards)."""
    spec = {"seed": 3, "dtype": "float32", "tied": False, "grads": True, "frozen_after": False}
    what = _(
        "average_gradients(model, 2, all_reduce) on a model whose unused layer holds zero "
        "gradients (zero_grad(set_to_none=False) leaves them so)"
    )
    seen = observe(
        probes.probe_average_zero_grads,
        average_gradients,
        {"model": spec, "world_size": 2},
        what,
    )
    if seen["reduced"] < seen["grad_elements"]:
        raise CheckError(
            _(
                "{what} passed {reduced} gradient elements to all_reduce; the gradients hold "
                "{total}. Reduce every gradient that is not None, zeros included: every rank "
                "must make the same all_reduce calls in the same order (a rank that skips one "
                "leaves the others waiting forever), and the other ranks' gradients for that "
                "parameter need not be zero."
            ).format(what=what, reduced=seen["reduced"], total=seen["grad_elements"])
        )
    if seen["replaced"]:
        raise CheckError(
            _(
                "{what} replaced the .grad of {names} with a new tensor (or gave it new memory: "
                "p.grad.data = ...): divide in place "
                "(p.grad /= world_size or p.grad.div_(world_size)), as the text asks. DDP's "
                "gradient buckets and any hook or optimizer holding the gradient keep the old "
                "tensor, which then holds the sum, not the average."
            ).format(what=what, names=", ".join(seen["replaced"]))
        )

    what = _("average_gradients(model, 3, all_reduce) on a model on a GPU")
    seen = observe(
        probes.probe_average_on_meta,
        average_gradients,
        {"model": spec, "world_size": 3},
        what,
    )
    if "device_mix" in seen:
        raise CheckError(
            _(
                "{what} mixed devices ({error}): a tensor made without device= (torch.tensor("
                "[world_size]), say) sits on the CPU while the gradients are on the GPU. "
                "Divide by the number itself: p.grad /= world_size."
            ).format(what=what, error=seen["device_mix"])
        )


def _reference_save(model, path, rank):
    if rank != 0:
        return False
    torch.save(getattr(model, "module", model).state_dict(), path)
    return True


def _draw_save(d: Draw) -> Inputs:
    """Rank 0 and others; a DistributedDataParallel model or a plain one, in train or eval
    mode, with or without gradients and a frozen layer; the path as a str or a Path."""
    spec = {
        "seed": d.draw(st.integers(0, 9)),
        "wrapped": d.draw(st.booleans()),
        "training": d.draw(st.booleans()),
        "grads": not d.draw(st.booleans()),  # the first draw holds gradients
        "frozen": not d.draw(st.booleans()),  # ... and a frozen layer
    }
    label = (
        (
            _("a DistributedDataParallel model")
            if spec["wrapped"]
            else _("a plain (unwrapped) model")
        )
        + (" (train mode" if spec["training"] else " (eval mode")
        + (", holding gradients" if spec["grads"] else "")
        + (", a frozen layer" if spec["frozen"] else "")
        + ")"
    )
    rank = d.draw(st.sampled_from([0, 1, 2, 3]))
    where = {"file": f"rank{rank}.pt", "as_str": d.draw(st.booleans())}
    path = Build(probes.build_checkpoint_path, where, "a str path" if where["as_str"] else "a Path")
    return Inputs((Build(probes.build_save_model, spec, label), path, rank))


def _save_hint(family: str, inputs: Inputs) -> str:
    if inputs.args[2] != 0:
        return _("Every rank but 0 writes nothing and returns False.")
    return _(
        "Rank 0 unwraps a wrapped model (model.module; a plain model has none: "
        "getattr(model, 'module', model)), torch.save(its state_dict(), path) and returns True, "
        "leaving the model's mode and device as they were."
    )


SAVE_CHECKPOINT = Contract(
    "save_checkpoint",
    _reference_save,
    _draw_save,
    families=("values",),  # no tensor arguments; the file itself is judged by hand below
    arg_names=("model", "path", "rank"),
    hint=_save_hint,
)


@uses(SAVE_CHECKPOINT)
def check_save_checkpoint(save_checkpoint) -> None:
    """The contract: True on rank 0 and False elsewhere, the model (its mode, its weights)
    left as it was. By hand: only rank 0 writes; the file is a plain state_dict (nested
    parts, buffers, a root parameter, keys that contain "module.") that loads with
    weights_only=True; the model stays on its device."""
    device = get_device()
    kinds = {
        "ddp": _("a DistributedDataParallel model"),
        "plain": _("a plain (unwrapped) model"),
        "dp": _("a DataParallel model"),
    }
    for wrapper, kind in kinds.items():
        base = {"seed": 5, "device": device, "wrapped": wrapper == "ddp", "wrapper": wrapper}
        for rank in (3, 1):
            what = f"save_checkpoint({kind}, path, rank={rank})"
            case = {**base, "rank": rank, "file": f"rank{rank}.pt", "as_str": False}
            seen = observe(probes.probe_save_checkpoint, save_checkpoint, case, what)
            if seen["files"]:
                raise CheckError(
                    _(
                        "{what} wrote {files}: only rank 0 saves (if rank != 0: return False "
                        "before torch.save), or N processes write the same file at once."
                    ).format(what=what, files=seen["files"])
                )
        expected = probes.build_checkpoint_model(base).state_dict()
        for as_str in (False, True):
            as_a_str = _(" as a str") if as_str else ""
            what = f"save_checkpoint({kind}, path{as_a_str}, rank=0)"
            # each mode once, with gradients: saving must leave both as they were
            case = {**base, "rank": 0, "file": f"rank0-{as_str}.pt", "as_str": as_str}
            case |= {"training": not as_str, "grads": True}
            seen = observe(probes.probe_save_checkpoint, save_checkpoint, case, what)
            if not seen["exists"]:
                raise CheckError(
                    _(
                        "{what} returned True but wrote no file at the given path ({files} "
                        "in its folder): torch.save(state_dict, path) with the path as given."
                    ).format(what=what, files=seen["files"])
                )
            if seen["load_error"] is not None:
                raise CheckError(
                    _(
                        "the file from {what} does not load with weights_only=True "
                        "({error}). Save model.state_dict(), not the model object."
                    ).format(what=what, error=seen["load_error"])
                )
            if seen["inner_device"].type != device.type:
                raise CheckError(
                    _(
                        "{what} moved the model to {device}: saving must not change "
                        "it (Module.cpu() moves the caller's model in place)."
                    ).format(what=what, device=seen["inner_device"])
                )
            if seen["inner_conversions"]:
                raise CheckError(
                    _(
                        "{what} called .cpu(), .to() or another conversion on the caller's "
                        "model: on a GPU that moves the model being trained off its device. "
                        "Leave the model alone; for a file that loads anywhere, save "
                        "{{k: v.cpu() for k, v in state_dict().items()}}."
                    ).format(what=what)
                )
            if seen["inner_training"] != case["training"] or not seen["grads_kept"]:
                raise CheckError(
                    _(
                        "{what} changed the model it saves (its train/eval mode or its "
                        "gradients): done on rank 0 alone, the ranks then train differently. "
                        "Save without touching the model: torch.save(the inner model's "
                        "state_dict(), path)."
                    ).format(what=what)
                )
            state = seen["state"]
            if state is None:
                raise CheckError(
                    _(
                        "the object saved by {what} should be a dict (a state_dict), got {type}."
                    ).format(what=what, type=seen["loaded_type"])
                )
            if sorted(state, key=repr) != sorted(expected):
                got = sorted(state, key=repr)
                missing = sorted(set(expected) - set(state))
                if any(isinstance(k, str) and k.startswith("module.") for k in state):
                    hint = _(" Save the inner model: model.module.state_dict().")
                    if wrapper == "dp":
                        hint += _(
                            " A DataParallel model is a wrapper too: unwrap it as well "
                            "(hasattr(model, 'module'), or isinstance with both classes)."
                        )
                elif missing and all("running" in k or "num_batches" in k for k in missing):
                    hint = _(
                        " The buffers (batch norm's running statistics) are missing: save "
                        "state_dict(), not the named parameters."
                    )
                elif any(isinstance(k, str) and "module." in k for k in missing):
                    hint = _(
                        " Keys were rewritten: replace('module.', '') also edits keys such as "
                        "'encoder_module.0.weight'. Unwrap the model (model.module) instead of "
                        "editing keys."
                    )
                else:
                    hint = ""
                raise CheckError(
                    _(
                        "the state_dict saved by {what} has keys {got}...; the plain model "
                        "expects {expected}... (missing {missing}).{hint}"
                    ).format(
                        what=what,
                        got=got[:5],
                        expected=sorted(expected)[:5],
                        missing=missing[:3],
                        hint=hint,
                    )
                )
            for key, value in expected.items():
                got = state[key]
                saved = _("saved {key}").format(key=key)
                check_type(got, torch.Tensor, saved)
                assert_close(got.cpu(), value.detach().cpu(), what=saved)


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


def _wrapper_hint(before: str, after: str) -> str:
    """What a wrong renaming of one key says about the code that did it."""
    expected = _reference_unwrap(before)
    replaced = {
        before.replace("module.", "").replace("_orig_mod.", ""),
        before.replace("_orig_mod.", "").replace("module.", ""),
    }
    if after in replaced:
        return _(
            "str.replace removes the prefix wherever it appears, also inside the key: strip "
            "only at the start (str.startswith / str.removeprefix)."
        )
    if after != expected and _reference_unwrap(after) == expected:
        return _(
            "{after!r} still starts with a wrapper's prefix: keep stripping while the key starts "
            "with either prefix, in whatever order they come (one wrapper can hold another, "
            "several times)."
        ).format(after=after)
    if expected.endswith(after) and len(after) < len(expected):
        eaten = expected[: len(expected) - len(after)]
        if re.fullmatch(r"((module|_orig_mod).)+", eaten):
            return _(
                "{eaten!r} was taken for a prefix: in a regular expression an unescaped '.' "
                "matches any character, so escape it (r'^(module\\.|_orig_mod\\.)+')."
            ).format(eaten=eaten)
        if set(eaten) <= set("module._orig"):
            return _(
                "{eaten!r} was eaten from the start of {expected!r}: str.lstrip removes any of "
                "the characters listed (m, o, d, u, l, e, '.', ...), not a word. Use "
                "str.removeprefix."
            ).format(eaten=eaten, expected=expected)
        return _(
            "{name!r} is a name of its own, not a wrapper's prefix: compare the "
            "whole prefix with its dot (key.startswith('module.'); in a regular expression "
            "r'^module\\.', since an unescaped '.' matches any character)."
        ).format(name=expected.split(".")[0])
    if expected == before:
        return _(
            "This key does not start with 'module.' or '_orig_mod.' (it starts with "
            "{name!r}), so it stays as it is."
        ).format(name=before.split(".")[0])
    if after == before:
        return _("This key starts with a wrapper's prefix and should lose it.")
    return _("Remove only whole leading 'module.' and '_orig_mod.' parts, nothing else.")


def _reference_strip(state_dict: dict) -> dict:
    return {_reference_unwrap(key): value for key, value in state_dict.items()}


# Names after the prefixes: real ones, ones with the words inside, ones that start with the
# same letters as a prefix (str.lstrip, a regex's unescaped '.'), each at most once per dict.
_KEY_NAMES = (
    "fc.w",
    "embed.weight",
    "module_norm.weight",
    "attn_module.weight",
    "_orig_mod_x.bias",
    "_orig_modx.w",
    "modules.count",
    "model.weight",
    "head.module.bias",
    "encoder._orig_mod.weight",
    "encoder.module.fc.weight",
)


def _draw_strip(d: Draw) -> Inputs:
    """A dict of 0 to 5 keys, each a run of wrapper prefixes (none to three, in any order)
    before a name of its own; small tensors as values (the identity of the values is checked
    below, by hand)."""
    names = d.draw(st.permutations(_KEY_NAMES))[: d.size(0, 5, empty_ok=True)]
    prefix = st.lists(st.sampled_from(_WRAPPER_PREFIXES), max_size=3)
    keys = ["".join(d.draw(prefix)) + name for name in names]
    return Inputs(({key: torch.tensor(float(i)) for i, key in enumerate(keys)},))


def _compare_strip(got: object, expected: dict, what: str, inputs: Inputs) -> None:
    """The keys renamed, in order, each to the reference's; the values in their places."""
    if not isinstance(got, dict):
        raise CheckError(
            _("{call} returned a {type}; return a dict (key -> tensor).").format(
                call=what, type=wire.type_name(got)
            )
        )
    keys_before, out_keys, want = list(inputs.args[0]), list(got), list(expected)
    if out_keys != want:
        wrong = [
            (a, b) for a, b in zip(keys_before, out_keys, strict=False) if b != _reference_unwrap(a)
        ]
        if len(out_keys) == len(want) and sorted(out_keys, key=repr) == sorted(want):
            raise CheckError(
                _(
                    "{call} returned the right keys in another order: {keys}, expected "
                    "{expected}. Build the new dict in the input's order."
                ).format(call=what, keys=out_keys[:4], expected=want[:4])
            )
        if wrong:
            before, after = wrong[0]
            raise CheckError(
                _(
                    "{call} turned the key {before!r} into {after!r}, expected {want!r}. {hint}"
                ).format(
                    call=what,
                    before=before,
                    after=after,
                    want=_reference_unwrap(before),
                    hint=_wrapper_hint(before, after),
                )
            )
        raise CheckError(
            _(
                "{call} returned {count} keys, expected {expected_count}: {expected}. "
                "Keep every entry, renamed or not."
            ).format(call=what, count=len(out_keys), expected_count=len(want), expected=want[:4])
        )
    for key, value in expected.items():
        assert_close(got[key], value, what=f"{what}[{key!r}]")


STRIP_WRAPPER_PREFIXES = Contract(
    "strip_wrapper_prefixes",
    _reference_strip,
    _draw_strip,
    # A dict of tensors: the engine neither snapshots it nor sees the values' identity, so
    # the check below watches both by hand. No tensor family applies (nothing is computed).
    families=("values", "edges"),
    compare=_compare_strip,
    arg_names=("state_dict",),
    examples=24,  # string cases are cheap; the traps need several prefix runs to show
)


@uses(STRIP_WRAPPER_PREFIXES)
def check_strip_wrapper_prefixes(strip_wrapper_prefixes) -> None:
    """The contract (keys stripped of every leading run of prefixes, in order, on drawn
    checkpoints: names with the words inside, names starting like a prefix, no prefix at all,
    an empty dict), then: the caller's dict left alone, a new dict even when nothing changes,
    the same tensor objects (non-contiguous ones, Parameters, float64 and float16 ones, one
    "on a GPU" too)."""
    g = torch.Generator().manual_seed(11)
    mixed = [
        ["module.encoder.module.fc.weight", torch.randn(2, 3, generator=g), True],
        ["modules.count", torch.tensor(4), False],
        ["_orig_mod._orig_mod.module.module.deep.w", torch.randn(2, generator=g), False],
        ["module._orig_mod.fc.w", torch.randn(2, 2, generator=g), True],
        ["module.bn.running_var", torch.rand(3, generator=g), False, "float64"],
        ["_orig_mod.half.weight", torch.randn(2, 3, generator=g), True, "float16"],
        ["module.emb.weight", torch.randn(3, 2, generator=g), False, "param"],
        ["module._orig_mod.gpu.weight", torch.randn(2, 2, generator=g), False, "gpu"],
        # nine wrappers deep: a loop of a fixed number of passes stops before the name
        ["module._orig_mod." * 4 + "module.deeper.w", torch.randn(2, generator=g), False],
    ]
    plain = [
        ["fc.weight", torch.randn(2, 3, generator=g), True],
        ["bn.count", torch.tensor(0), False],
    ]
    cases = [
        (_("a state_dict with some wrapped keys"), mixed),
        (_("a plain state_dict (no prefixes)"), plain),
        (_("an empty state_dict"), []),
    ]
    for what, entries in cases:
        call = f"strip_wrapper_prefixes({what})"
        keys_before = [key for key, *_rest in entries]
        seen = observe(
            probes.probe_strip_wrapper_prefixes, strip_wrapper_prefixes, {"entries": entries}, call
        )
        if seen["caller_keys_after"] != keys_before or not seen["caller_values_kept"]:
            raise CheckError(
                _(
                    "{call} changed the caller's dict: its keys are now "
                    "{keys}. Build and return a new dict instead of "
                    "renaming keys in place (the caller may still need the original)."
                ).format(call=call, keys=seen["caller_keys_after"][:4])
            )
        if seen["same_object"]:
            raise CheckError(
                _(
                    "{call} returned the caller's dict itself. Return a new dict even when no key "
                    "needs renaming: whoever edits the result would otherwise edit the caller's "
                    "checkpoint too."
                ).format(call=call)
            )
        expected = [_reference_unwrap(key) for key in keys_before]
        for before, after, want in zip(keys_before, seen["keys"] or [], expected, strict=False):
            if after != want:
                raise CheckError(
                    _(
                        "{call} turned the key {before!r} into {after!r}, expected {want!r}: "
                        "remove leading 'module.' and '_orig_mod.' for as long as the key starts "
                        "with one (a loop that ends when nothing changes), not a fixed number of "
                        "times."
                    ).format(call=call, before=before, after=after, want=want)
                )
        for i, (key, value) in enumerate(zip(expected, seen["values"] or [], strict=False)):
            if i not in value["is_of"]:
                how = (
                    _(
                        "a new tensor object on the same memory (a view, .detach(), .data, or "
                        ".cpu() of a tensor on a GPU)"
                    )
                    if i in value["shares_memory_with"]
                    else _(
                        "a {type} that is not the original (a copy: clone(), contiguous(), "
                        ".float(), .cpu() or .to(...))"
                    ).format(type=value["type"])
                )
                raise CheckError(
                    _(
                        "{call}: the value for {key!r} is {how}. Rename the keys and keep the "
                        "values as they are: the same tensor objects."
                    ).format(call=call, key=key, how=how)
                )
