"""Probes for 07_deployment (see autograder/probes/__init__.py).

Files (checkpoints, ONNX models) are written and read here, in a fresh temporary folder of
the kernel that runs the answer. What comes back is data: return values described by
their type, tensors, key lists, flags and what a scripted fake model saw. The expected
answers are in autograder/hidden/deployment.py.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
import warnings
from collections import OrderedDict

import torch
from torch import nn

# ---------------------------------------------------------------------------------------
# Shared helpers
# ---------------------------------------------------------------------------------------


def describe(obj) -> dict:
    """The type of ``obj`` as data: its name, module and the classes it derives from."""
    kind = type(obj)
    return {
        "name": kind.__name__,
        "module": kind.__module__,
        "mro": [f"{c.__module__}.{c.__qualname__}" for c in kind.__mro__],
    }


def _number(value):
    """``value`` as a plain int or float where it is one (NumPy scalars included), else None."""
    if type(value) in (bool, int, float):
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    return None


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def _seeded(device=None):
    """A fixed random state (Dropout, random init) that leaves the caller's generators alone."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    cuda = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=cuda):
        torch.manual_seed(0)
        yield


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else ""


# ---------------------------------------------------------------------------------------
# Checkpoints that look as if they came from a GPU, and a file that runs code.
# ---------------------------------------------------------------------------------------

# While "location" is set, torch.save labels every storage with it. The grader hands this
# module to the kernel afresh for every test cell, so the state lives on torch.serialization
# and the tagger is registered once per process (a second registration at the same
# priority makes torch compare two functions and fail).
_TAG = torch.serialization.__dict__.setdefault("_course_fake_gpu_tag", {"location": None})


def _fake_tagger(obj):
    return _TAG["location"]


def _fake_deserializer(obj, location):
    return None  # never claims a storage: loading falls through to torch's own rules


# Priority 2: before torch's CPU tagger (10); distinct from the lesson's own trick (1).
if not _TAG.get("registered"):
    torch.serialization.register_package(2, _fake_tagger, _fake_deserializer)
    _TAG["registered"] = True


def save_as_gpu(obj, path: str) -> None:
    """torch.save(obj, path), labelling every tensor as saved from a CUDA device."""
    # A device index this machine lacks, so that loading without map_location fails even on
    # a machine with GPUs (on a CPU-only machine any CUDA label fails).
    _TAG["location"] = f"cuda:{torch.cuda.device_count() + 1}"
    try:
        torch.save(obj, path)
    finally:
        _TAG["location"] = None


PAYLOAD_RUNS: list[str] = []


def _payload(note: str) -> None:
    """What a malicious checkpoint would run while unpickling (here: only a note)."""
    PAYLOAD_RUNS.append(note)


class _Payload:
    def __reduce__(self):
        return (_payload, ("code from the checkpoint ran",))


# ---------------------------------------------------------------------------------------
# Exercise 1: strip_module_prefix
# ---------------------------------------------------------------------------------------


def probe_strip_module_prefix(strip_module_prefix, case: dict) -> dict:
    """The returned keys in order, which original tensor each value is, the caller's keys after.

    ``case["entries"]``: ``[key, tensor, transposed]``; a transposed entry is handed over as
    ``tensor.t()`` (a non-contiguous view).
    """
    sd = OrderedDict()
    for key, tensor, transposed in case["entries"]:
        sd[key] = tensor.t() if transposed else tensor
    originals = list(sd.values())
    with _quiet():
        out = strip_module_prefix(sd)
    seen = {"kind": describe(out), "caller_keys_after": list(sd), "keys": None, "values": None}
    if isinstance(out, dict):
        seen["keys"] = list(out)
        seen["values"] = []
        for value in out.values():
            sources = []
            if isinstance(value, torch.Tensor):
                sources = [
                    i
                    for i, t in enumerate(originals)
                    if value.data_ptr() == t.data_ptr() and value.shape == t.shape
                ]
            seen["values"].append({"kind": describe(value), "same_tensor_as": sources})
    return seen


# ---------------------------------------------------------------------------------------
# Exercise 2: load_checkpoint_cpu
# ---------------------------------------------------------------------------------------


class Classifier(nn.Module):
    """A small classifier whose weights all come from ``g``; its head's name is a choice."""

    def __init__(self, g: torch.Generator, d_in: int, head_name: str = "head"):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            self.body = nn.Sequential(nn.Linear(d_in, 6), nn.BatchNorm1d(6), nn.ReLU())
            setattr(self, head_name, nn.Linear(6, 3))
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g))
            self.body[1].running_mean.copy_(torch.randn(6, generator=g))


def build_classifier(case: dict) -> Classifier:
    """The model that load_checkpoint_cpu loads into: seeded by ``case["model_seed"]``."""
    g = torch.Generator().manual_seed(case["model_seed"])
    return Classifier(g, case["d_in"], "head")


def probe_load_checkpoint_cpu(load_checkpoint_cpu, case: dict) -> dict:
    """Save ``case["state"]`` as if from a GPU, load it into a fresh model; the result and weights."""
    path = os.path.join(tempfile.mkdtemp(prefix="deploy-probe-"), "checkpoint.pt")
    save_as_gpu(OrderedDict(case["state"]), path)
    model = build_classifier(case)
    with _quiet():
        result = load_checkpoint_cpu(path, model)
    seen = {"kind": describe(result), "length": None, "parts": None}
    if isinstance(result, (tuple, list)):
        seen["length"] = len(result)
        parts = []
        for part in result:
            try:
                parts.append([str(k) for k in part])
            except TypeError:
                parts.append(None)
        seen["parts"] = parts
    after = model.state_dict()
    seen["after"] = {k: v.detach().cpu() for k, v in after.items()}
    seen["devices"] = {k: str(v.device) for k, v in after.items()}
    return seen


# ---------------------------------------------------------------------------------------
# Exercise 3: safe_load
# ---------------------------------------------------------------------------------------


def _plain(obj, path: str, devices: dict):
    """``obj`` with dict/list/tuple subclasses made plain; tensors' devices noted by path."""
    if isinstance(obj, torch.Tensor):
        devices[path] = str(obj.device)
        return obj.detach().cpu()
    if isinstance(obj, dict):
        return {k: _plain(v, f"{path}.{k}" if path else str(k), devices) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v, f"{path}[{i}]", devices) for i, v in enumerate(obj)]
    if isinstance(obj, tuple):
        return tuple(_plain(v, f"{path}[{i}]", devices) for i, v in enumerate(obj))
    return obj


def probe_safe_load(safe_load, case: dict) -> dict:
    """Write the file ``case["file"]`` names, run safe_load on it; what came back, what ran.

    ``"gpu"``: ``case["obj"]`` saved as if from a GPU; ``"whole_model"``: a pickled
    nn.Module; ``"runs_code"``: a file whose unpickling calls a function.
    """
    path = os.path.join(tempfile.mkdtemp(prefix="deploy-probe-"), "file.pt")
    if case["file"] == "gpu":
        save_as_gpu(case["obj"], path)
    elif case["file"] == "whole_model":
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            torch.save(nn.Sequential(nn.Linear(2, 2)), path)
    else:
        torch.save({"weight": torch.zeros(2), "extra": _Payload()}, path)
    PAYLOAD_RUNS.clear()
    with _quiet():
        out = safe_load(path)
    devices: dict = {}
    seen = {"kind": describe(out), "payload_ran": bool(PAYLOAD_RUNS)}
    seen["out"] = _plain(out, "", devices)
    seen["devices"] = devices
    PAYLOAD_RUNS.clear()
    return seen


# ---------------------------------------------------------------------------------------
# Exercise 4: export_gated
# ---------------------------------------------------------------------------------------


class GatedNet(nn.Module):
    """The lesson's GatedNet: the whole batch goes through one branch, chosen by the data."""

    def __init__(self, dim: int = 8, p: float = 0.5):
        super().__init__()
        self.pos = nn.Sequential(nn.Linear(dim, dim), nn.Dropout(p), nn.Tanh())
        self.neg = nn.Sequential(nn.Linear(dim, dim), nn.Dropout(p), nn.ReLU())

    def gate(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean() > 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.gate(x):
            return self.pos(x)
        return self.neg(x)


def build_gated(case: dict) -> GatedNet:
    """GatedNet(case["dim"]) seeded with the dim, on case["device"], in training mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["dim"])
        model = GatedNet(case["dim"])
    return model.to(case["device"])


def probe_export_gated(export_gated, case: dict) -> dict:
    """Export from ``case["example"]``; what the result is and its outputs on ``case["inputs"]``.

    Each output is ``{"kind", "value", "error"}``; ``error`` says what running it raised.
    """
    model = build_gated(case)  # left in training mode on purpose
    with _quiet():
        result = export_gated(model, case["example"])
    seen = {
        "kind": describe(result),
        "is_exported_program": isinstance(result, torch.export.ExportedProgram),
        "module_error": None,
        "callable": False,
        "outputs": [],
    }
    try:
        run = result.module() if seen["is_exported_program"] else result
    except Exception as err:  # reported as data
        seen["module_error"] = f"{type(err).__name__}: {_first_line(err)}"
        return seen
    seen["callable"] = callable(run)
    if not seen["callable"]:
        return seen
    for x in case["inputs"]:
        out, error = None, None
        try:
            with torch.no_grad(), _quiet(), _seeded(case["device"]):
                out = run(x)
        except Exception as err:  # reported as data
            error = f"{type(err).__name__}: {_first_line(err)}"
        if isinstance(out, torch.Tensor):
            out = out.detach()
        seen["outputs"].append({"kind": describe(out), "value": out, "error": error})
    return seen


# ---------------------------------------------------------------------------------------
# Exercise 5: onnx_round_trip
# ---------------------------------------------------------------------------------------


def build_onnx_model(case: dict) -> nn.Module:
    """The model to export, weights from ``case["seed"]``, on ``case["device"]``, training mode."""
    g = torch.Generator().manual_seed(case["seed"])
    with torch.random.fork_rng(devices=[]):
        model = nn.Sequential(
            nn.Linear(case["d_in"], 32),
            nn.BatchNorm1d(32),
            nn.ReLU(),
            nn.Dropout(0.3),
            nn.Linear(32, 32),
            nn.GELU(),
            nn.Linear(32, 5),
        )
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.5)
        model[1].running_mean.copy_(torch.randn(32, generator=g))
        model[1].running_var.copy_(torch.rand(32, generator=g) + 0.5)
    return model.to(case["device"])  # in training mode, as a model straight out of training


def probe_onnx_round_trip(onnx_round_trip, case: dict) -> dict:
    """Run the round trip into a fresh folder; (onnx_out, matches) described, the file's presence.

    With ``case["tol"]`` set, it is passed as both rtol and atol.
    """
    path = os.path.join(tempfile.mkdtemp(prefix="deploy-probe-"), "model.onnx")
    model = build_onnx_model(case)
    args = (model, case["x"], path)
    if case["tol"] is not None:
        args += (case["tol"], case["tol"])
    with _quiet(), _seeded(case["device"]):
        result = onnx_round_trip(*args)
    seen = {"kind": describe(result), "length": None, "file_written": os.path.exists(path)}
    if isinstance(result, tuple):
        seen["length"] = len(result)
    if isinstance(result, tuple) and len(result) == 2:
        onnx_out, matches = result
        seen["out_kind"] = describe(onnx_out)
        seen["out"] = onnx_out.detach().cpu() if isinstance(onnx_out, torch.Tensor) else None
        seen["matches_kind"] = describe(matches)
        seen["matches"] = bool(matches) if type(matches).__name__ in ("bool", "bool_") else None
    return seen


# ---------------------------------------------------------------------------------------
# Exercise 6: quantize_report
# ---------------------------------------------------------------------------------------


def build_quant_model(case: dict) -> nn.Module:
    """Linear(d_in, hidden), ReLU, Dropout(0.5), Linear(hidden, 10), seeded with d_in; CPU, train."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["d_in"])
        return nn.Sequential(
            nn.Linear(case["d_in"], case["hidden"]),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(case["hidden"], 10),
        )


def probe_quantize_report(quantize_report, case: dict) -> dict:
    """The report (types and numbers) and the caller's model's state_dict afterwards."""
    model = build_quant_model(case)
    with _quiet(), _seeded():
        report = quantize_report(model, case["x"], case["y"])
    seen = {"kind": describe(report), "keys": None, "kinds": None, "values": None}
    if isinstance(report, dict):
        seen["keys"] = [k for k in report if isinstance(k, str)]
        seen["kinds"] = {k: describe(report[k]) for k in seen["keys"]}
        seen["values"] = {k: _number(report[k]) for k in seen["keys"]}
    state = {}
    for key, value in model.state_dict().items():
        plain = type(value) is torch.Tensor
        state[key] = {"type": type(value).__name__, "tensor": value.detach() if plain else None}
    seen["state_after"] = state
    return seen


# ---------------------------------------------------------------------------------------
# Exercise 7: measure_latency_ms
# ---------------------------------------------------------------------------------------


class FakeModel:
    """Sleeps a scripted number of milliseconds per call; remembers how it was called."""

    def __init__(self, durations_ms: list[float]):
        self.durations_ms = durations_ms
        self.calls = 0
        self.grad_enabled: list[bool] = []
        self.inputs: list[object] = []
        self.slept_ms: list[float] = []  # how long each call really took (sleep overshoots)

    def __call__(self, x):
        ms = self.durations_ms[min(self.calls, len(self.durations_ms) - 1)]
        self.calls += 1
        self.grad_enabled.append(torch.is_grad_enabled())
        self.inputs.append(x)
        start = time.perf_counter()
        time.sleep(ms / 1000)
        self.slept_ms.append((time.perf_counter() - start) * 1000)
        return x


def probe_measure_latency_ms(measure_latency_ms, case: dict) -> dict:
    """Time a scripted fake model; the answer and what the fake saw (calls, inputs, grad mode)."""
    x = torch.zeros(2, 3, device=case["device"])
    fake = FakeModel(list(case["durations_ms"]))
    with _quiet():
        got = measure_latency_ms(fake, x, case["warmup"], case["runs"])
    return {
        "kind": describe(got),
        "value": _number(got),
        "calls": fake.calls,
        "same_input": all(inp is x for inp in fake.inputs),
        "grad_enabled": list(fake.grad_enabled),
        "slept_ms": list(fake.slept_ms),
    }
