"""Probes for 10_scaling (see autograder/probes/__init__.py).

The profiler exercises get a real profile of a small workload (one per seed, kept for the
kernel's lifetime so that every call about it sees the same one) and return, next to the
answer, the profile's ``key_averages()`` as rows of numbers: timings cannot be rebuilt, so
the check judges the answer against the rows. The distributed exercises get simulated ranks:
an ``all_reduce`` standing in for other processes (it records how it was called), and
checkpoints written to and read back from a fresh temporary folder.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import time
from pathlib import Path

os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # the profiler's C++ messages would go to stderr

import torch
import torch.distributed as dist
from torch import nn
from torch.profiler import ProfilerActivity, profile, record_function


def plain(value, depth: int = 0):
    """``value`` with subclasses of the built-in types made plain (a namedtuple a tuple, an
    OrderedDict a dict, a NumPy float64 a float), so that it crosses as the type it claims to be.
    Anything else (a NumPy float32, an object) is left as it is."""
    if depth > 16 or value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, (torch.Tensor, torch.Size, torch.device, torch.dtype)):
        return value
    if isinstance(value, int):  # bool cannot be subclassed: it was returned above
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, tuple):
        return tuple(plain(v, depth + 1) for v in value)
    if isinstance(value, list):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}
    return value


def _busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@functools.lru_cache(maxsize=4)
def profile_workload(seed: int, device_name: str):
    """A profile with operators, a label with a large self time, and labels called repeatedly."""
    device = torch.device(device_name)
    g = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)).to(device)
        x = torch.randn(64, 32, generator=g).to(device)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(3):
                with record_function("load"):
                    _busy(0.003)  # Python time: the label's own (self) time, no operator
                    xb = x + 0.01 * torch.randn_like(x)
                with record_function("concatenate"):  # a label with "aten" inside its name
                    _busy(0.001)
                    xb = torch.cat([xb[:32], xb[32:]])
                with record_function("step"):
                    model(xb).pow(2).mean().backward()
            with record_function("outer"), record_function("inner"):
                torch.mm(x, x.T)
    return prof


def profile_rows(prof) -> list[dict]:
    """``prof.key_averages()`` as data: key, count, and the CPU times in microseconds."""
    return [
        {
            "key": e.key,
            "count": int(e.count),
            "self_cpu_time_total": float(e.self_cpu_time_total),
            "cpu_time_total": float(e.cpu_time_total),
            "cpu_time": float(e.cpu_time),
        }
        for e in prof.key_averages()
    ]


class FakeProfile:
    """A profile whose ``key_averages()`` returns the rows the case describes, as the real
    ``EventList`` of ``FunctionEventAvg`` a profile gives: what a profile with a GPU looks
    like (a label's CPU row and its GPU row share a key) on a machine without one."""

    def __init__(self, rows: list[dict]):
        self.rows = rows

    def key_averages(self, *args, **kwargs):
        from torch.autograd import DeviceType
        from torch.autograd.profiler_util import EventList, FunctionEventAvg

        events = []
        for row in self.rows:
            e = FunctionEventAvg()
            e.key = row["key"]
            e.count = row.get("count", 1)
            e.self_cpu_time_total = row.get("self", 0.0)
            e.cpu_time_total = row.get("total", row.get("self", 0.0))
            e.device_time_total = row.get("device_total", 0.0)
            e.self_device_time_total = row.get("device_self", 0.0)
            e.device_type = DeviceType.CUDA if row.get("device") == "cuda" else DeviceType.CPU
            e.use_device = "cuda"
            events.append(e)
        return EventList(events)


def build_fake_profile(spec: dict) -> FakeProfile:
    """A contract's profile: the FakeProfile of the spec's rows (built alike in the kernel
    and in the grader, unlike a real profile's timings)."""
    return FakeProfile(spec["rows"])


def _profile_for(case: dict):
    if case.get("fake") is not None:
        return FakeProfile(case["fake"])
    return profile_workload(case["seed"], str(case["device"]))


def probe_top_ops(top_ops, case: dict) -> dict:
    """top_ops(prof, k) on the seed's profile (or the case's fake one), and its rows. ``k``
    None: the argument is left out (its default applies)."""
    prof = _profile_for(case)
    result = top_ops(prof) if case["k"] is None else top_ops(prof, case["k"])
    return {"result": plain(result), "rows": profile_rows(prof)}


def probe_time_per_label(time_per_label, case: dict) -> dict:
    """time_per_label(prof, labels) on the seed's profile (or the case's fake one), and its rows."""
    prof = _profile_for(case)
    result = time_per_label(prof, list(case["labels"]))
    return {"result": plain(result), "rows": profile_rows(prof)}


def probe_shards_for_epoch(shards_for_epoch, case: dict) -> dict:
    """The result's type, each shard as a list of what it holds (when it is a list), and
    whether the global random state changed."""
    args = [case["n"], case["world_size"], case["epoch"]]
    if case["seed"] is not None:  # None: the argument is left out (its default applies)
        args.append(case["seed"])
    rng_before = torch.get_rng_state()
    result = shards_for_epoch(*args)
    rng_changed = not torch.equal(rng_before, torch.get_rng_state())
    seen = {
        "type": type(result).__name__,
        "is_list": isinstance(result, list),
        "shards": None,
        "rng_changed": rng_changed,
    }
    if seen["is_list"]:
        seen["shards"] = [plain(list(shard)) for shard in result]
    return seen


def build_grad_model(spec: dict) -> nn.Module:
    """A model with local gradients: [used network, unused Linear] and, with ``tied``, a third
    Linear sharing the used network's last weight; the first bias frozen. With ``grads`` False
    no backward pass ran (every .grad None); with ``frozen_after`` the last bias was frozen
    after the backward pass, so it holds a .grad all the same (it is reduced like any other)."""
    dtype = getattr(torch, spec["dtype"])
    g = torch.Generator().manual_seed(spec["seed"])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec["seed"])
        used = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 3))
        parts = [used, nn.Linear(2, 2)]  # [1] is never used: its grads stay None
        if spec.get("tied"):
            parts.append(nn.Linear(5, 3))
            parts[2].weight = used[2].weight  # one Parameter in two modules
        model = nn.ModuleList(parts)
    model = model.to(dtype=dtype)
    used[0].bias.requires_grad_(False)  # frozen
    if spec.get("grads", True):
        x = torch.randn(6, 4, generator=g, dtype=dtype)
        out = used(x)
        if spec.get("tied"):
            out = out + parts[2](torch.tanh(used[0](x)))
        out.pow(2).sum().backward()
    if spec.get("frozen_after"):
        used[2].bias.requires_grad_(False)
    return model


def probe_average_zero_grads(average_gradients, case: dict) -> dict:
    """average_gradients on ``build_grad_model(case["model"])`` whose unused layer holds zero
    gradients (``optimizer.zero_grad(set_to_none=False)`` leaves them so), with the simulated
    all_reduce: how many gradient elements went through all_reduce against how many there
    are, and which gradients were replaced by a new tensor (the text asks for in place)."""
    model = build_grad_model(case["model"])
    for p in model[1].parameters():  # the unused layer: zeros, not None
        p.grad = torch.zeros_like(p)
    named = [(name, p) for name, p in model.named_parameters() if p.grad is not None]
    grads = [p.grad for _name, p in named]
    # the memory too: p.grad.data = p.grad / n keeps the tensor object but not its memory
    memory = [g.data_ptr() for g in grads]
    log: dict = {"calls": [], "misuse": None, "pending": 0, "changed_before_wait": False}
    average_gradients(model, case["world_size"], fake_all_reduce(case["world_size"], log))
    reduced = 0
    for shape in log["calls"]:
        reduced += int(torch.Size(shape).numel())
    return {
        "reduced": reduced,
        "grad_elements": sum(g.numel() for g in grads),
        "replaced": [
            name
            for (name, p), g, ptr in zip(named, grads, memory, strict=True)
            if p.grad is not g or p.grad.data_ptr() != ptr
        ],
    }


def probe_average_on_meta(average_gradients, case: dict) -> dict:
    """average_gradients on ``build_grad_model(case["model"])`` moved to the meta device (a
    stand-in for a GPU), gradients included, with the simulated all_reduce: whether the
    answer mixed in a tensor of another device (a divisor made with torch.tensor([n]) on the
    CPU, say). See ``devices.on_meta``."""
    from autograder.probes import devices

    model = build_grad_model(case["model"]).to("meta")  # built outside the one-device mode
    for p in model.parameters():
        p.grad = torch.ones_like(p) if p.requires_grad else None
    log: dict = {"calls": [], "misuse": None, "pending": 0, "changed_before_wait": False}
    reduce = fake_all_reduce(case["world_size"], log)
    seen = devices.on_meta(lambda: average_gradients(model, case["world_size"], reduce))
    return {key: seen[key] for key in ("device_mix", "inconclusive") if key in seen}


def build_all_reduce(spec: dict):
    """The simulated all_reduce of ``spec["world_size"]`` ranks (see ``fake_all_reduce``)."""
    log: dict = {"calls": [], "misuse": None, "pending": 0, "changed_before_wait": False}
    return fake_all_reduce(spec["world_size"], log)


class AllReduceMisuse(Exception):
    """Raised by the simulated all_reduce when it is called in a way the real one rejects."""


class FakeWork:
    """What the simulated ``all_reduce(..., async_op=True)`` returns: like the real handle,
    the sum only lands in the tensor when somebody waits for it."""

    def __init__(self, tensor: torch.Tensor, factor: float, log: dict):
        self.tensor, self.factor, self.log = tensor, factor, log
        self.sent = tensor.detach().clone()  # what this rank contributed when it launched
        self.done = False
        log["pending"] += 1

    def wait(self, timeout=None) -> bool:
        if not self.done:
            self.done = True
            self.log["pending"] -= 1
            if not torch.equal(self.tensor, self.sent):
                self.log["changed_before_wait"] = True
            with torch.no_grad():
                self.tensor.copy_(self.sent * self.factor)
        return True

    def is_completed(self) -> bool:
        return self.done

    def is_success(self) -> bool:
        return self.done

    def get_future(self):
        work = self

        class _Future:
            def wait(self):
                work.wait()
                return [work.tensor]

            def value(self):
                return [work.tensor]

            def done(self):
                return work.done

        return _Future()


def fake_all_reduce(world_size: int, log: dict):
    """An all_reduce for world_size simulated ranks, where rank r's tensor is (r + 1) times ours.

    ``log["calls"]`` gets the shape of every tensor it reduces; ``log["misuse"]`` what was wrong
    with a call it refused (a non-tensor, an op other than SUM or AVG). With ``async_op=True``
    it returns a :class:`FakeWork`; ``log["pending"]`` counts handles nobody waited for.
    """
    total = world_size * (world_size + 1) / 2

    def all_reduce(tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        if not isinstance(tensor, torch.Tensor):
            log["misuse"] = {"kind": "not a tensor", "type": type(tensor).__name__}
            raise AllReduceMisuse(f"all_reduce was called with {type(tensor).__name__}")
        log["calls"].append(list(tensor.shape))
        if op == dist.ReduceOp.SUM:
            factor = total
        elif op == dist.ReduceOp.AVG:
            factor = total / world_size
        else:
            log["misuse"] = {"kind": "op", "op": str(op)}
            raise AllReduceMisuse(f"all_reduce was called with op={op}")
        if async_op:
            return FakeWork(tensor, factor, log)
        with torch.no_grad():
            tensor.mul_(factor)
        return None

    return all_reduce


def ddp_wrapped(module: nn.Module) -> nn.Module:
    """A genuine ``DistributedDataParallel`` object holding ``module`` (``isinstance`` and
    ``.module`` both work), built without the process group its constructor needs: enough
    to be unwrapped and saved, not to train."""
    from torch.nn.parallel import DistributedDataParallel

    wrapper = DistributedDataParallel.__new__(DistributedDataParallel)
    nn.Module.__init__(wrapper)
    wrapper.module = module
    return wrapper


class CheckpointNet(nn.Module):
    """A plain model with nested parts, buffers (one not persistent) and a parameter on the root
    module; one part's
    name contains "module." in its keys (``encoder_module.0.weight``)."""

    def __init__(self):
        super().__init__()
        self.encoder_module = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
        self.scale = nn.Parameter(torch.tensor([1.5, -0.5, 2.0, 0.25]))
        self.head = nn.Linear(4, 2)
        # not part of the state_dict: a checkpoint that saves it does not load strictly
        self.register_buffer("mask", torch.ones(4), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder_module(x) * self.scale * self.mask)

    def _apply(self, fn, recurse=True):
        """Counts conversions (.cpu(), .to(), .float(), ...; each goes through _apply), so that
        moving the caller's model shows on a machine where it already is on the CPU."""
        self.__dict__["conversions"] = self.__dict__.get("conversions", 0) + 1
        return super()._apply(fn, recurse)


def build_checkpoint_model(case: dict) -> nn.Module:
    """The plain model save_checkpoint is given (wrapped or not, see ``probe_save_checkpoint``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])
        plain_model = CheckpointNet()
    with torch.no_grad():  # batch norm statistics that are not the defaults
        plain_model.encoder_module[1].running_mean.uniform_(
            -1, 1, generator=torch.Generator().manual_seed(case["seed"])
        )
        plain_model.encoder_module[1].num_batches_tracked.fill_(7)
    return plain_model.to(case["device"])


def build_save_model(spec: dict) -> nn.Module:
    """The model save_checkpoint is given: wrapped in a real DistributedDataParallel object or
    plain, in train or eval mode, with ``grads`` holding the gradients of a backward pass (a
    checkpoint taken mid-step must leave them), with ``frozen`` its encoder's linear layer
    frozen (``requires_grad=False``, as in fine-tuning: saving must leave that too)."""
    inner = build_checkpoint_model({"seed": spec["seed"], "device": "cpu"})
    if spec.get("frozen"):
        inner.encoder_module[0].requires_grad_(False)
    if spec.get("grads"):
        x = torch.randn(4, 3, generator=torch.Generator().manual_seed(spec["seed"]))
        inner(x).pow(2).sum().backward()
    inner.train(spec["training"])
    return ddp_wrapped(inner) if spec["wrapped"] else inner


def _same_grad(now: torch.Tensor | None, before: torch.Tensor | None) -> bool:
    if now is None or before is None:
        return now is before
    return torch.equal(now, before)


_SCRATCH: list = []  # one folder for the kernel's lifetime, removed when the process ends


def build_checkpoint_path(spec: dict):
    """A path (a str or a Path) in a fresh folder of its own, where nothing exists yet."""
    if not _SCRATCH:
        _SCRATCH.append(tempfile.TemporaryDirectory(prefix="probe-ckpt-"))
    folder = Path(tempfile.mkdtemp(dir=_SCRATCH[0].name))
    path = folder / spec["file"]
    return str(path) if spec["as_str"] else path


def probe_save_checkpoint(save_checkpoint, case: dict) -> dict:
    """save_checkpoint(model, path, rank) in a fresh folder: what it returned, the files it left
    there, and what the file at path holds, loaded with weights_only=True. A wrapped model is a
    real DistributedDataParallel object (see ``ddp_wrapped``)."""
    inner = build_checkpoint_model(case)
    if case.get("wrapper") == "dp":  # DataParallel: .module as well (no GPU needed to build it)
        model = nn.DataParallel(inner)
    else:
        model = ddp_wrapped(inner) if case["wrapped"] else inner
    if case.get("grads"):  # a backward in eval mode: batch norm's statistics stay as built
        inner.eval()
        inner(torch.ones(2, 3, device=case["device"])).pow(2).sum().backward()
    inner.train(case.get("training", True))
    grads = [None if p.grad is None else p.grad.clone() for p in inner.parameters()]
    inner.__dict__["conversions"] = 0  # building (and wrapping) moved it to the case's device
    folder = Path(tempfile.mkdtemp(prefix="probe-ckpt-"))
    try:
        path = folder / case["file"]
        result = save_checkpoint(model, str(path) if case["as_str"] else path, case["rank"])
        seen = {
            "result": plain(result),
            "files": sorted(p.name for p in folder.iterdir()),
            "exists": path.exists(),
            "load_error": None,
            "loaded_type": None,
            "state": None,
            "inner_training": bool(inner.training),
            "grads_kept": all(
                _same_grad(p.grad, g) for p, g in zip(inner.parameters(), grads, strict=True)
            ),
            "inner_device": next(inner.parameters()).device,
            "inner_conversions": inner.__dict__.get("conversions", 0),
        }
        if path.is_file():
            try:
                state = torch.load(path, map_location="cpu", weights_only=True)
            except Exception as err:  # an unpickling error for a pickled module
                seen["load_error"] = type(err).__name__
            else:
                seen["loaded_type"] = type(state).__name__
                if isinstance(state, dict):
                    seen["state"] = plain(state)
        return seen
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def probe_strip_wrapper_prefixes(strip_wrapper_prefixes, case: dict) -> dict:
    """The returned keys in order, which original tensor object each value is, and the caller's
    dict afterwards.

    ``case["entries"]``: ``[key, tensor, transposed]`` or ``[key, tensor, transposed, kind]``;
    a transposed entry is handed over as ``tensor.t()`` (a non-contiguous view, as a
    state_dict may hold). ``kind``: ``"param"`` an ``nn.Parameter`` (what
    ``state_dict(keep_vars=True)`` holds), ``"gpu"`` a stand-in for a tensor on a GPU
    (``probes.devices.StandIn``: its ``.cpu()`` is another object), or a dtype's name
    (``"float64"``, ``"float16"``): a ``.detach()``, ``.cpu()`` or ``.float()`` of such a
    value is a new object.
    """
    from collections import OrderedDict

    sd = OrderedDict()
    for key, tensor, transposed, *kind in case["entries"]:
        value = tensor.t() if transposed else tensor
        if kind and kind[0] == "param":
            value = nn.Parameter(value)
        elif kind and kind[0] == "gpu":
            from autograder.probes import devices

            value = devices.stand_in(value)
        elif kind:
            value = value.to(getattr(torch, kind[0]))
        sd[key] = value
    originals = list(sd.values())
    out = strip_wrapper_prefixes(sd)
    seen = {
        "type": type(out).__name__,
        "is_dict": isinstance(out, dict),
        "same_object": out is sd,
        "caller_keys_after": list(sd),
        "caller_values_kept": len(sd) == len(originals)
        and all(a is b for a, b in zip(sd.values(), originals, strict=True)),
        "keys": None,
        "values": None,
    }
    if isinstance(out, dict):
        seen["keys"] = [k if isinstance(k, str) else repr(k) for k in out]
        seen["values"] = []
        for value in out.values():
            is_tensor = isinstance(value, torch.Tensor)
            seen["values"].append(
                {
                    "type": type(value).__name__,
                    "is_of": [i for i, t in enumerate(originals) if value is t],
                    "shares_memory_with": [
                        i
                        for i, t in enumerate(originals)
                        if is_tensor and value.data_ptr() == t.data_ptr() and value.shape == t.shape
                    ],
                }
            )
    return seen
