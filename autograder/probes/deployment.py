"""Probes for 08_deployment (see autograder/probes/__init__.py).

Files (checkpoints, ONNX models) are written and read here, in a fresh temporary folder of
the kernel that runs the answer. What comes back is data: return values described by
their type, tensors, key lists, flags and what a scripted fake model saw. The expected
answers are in autograder/hidden/deployment.py.
"""

from __future__ import annotations

import contextlib
import io
import os
import tempfile
import time
import warnings
from collections import OrderedDict

import torch
from torch import nn

from autograder.boundary import modes_now, usual_modes
from autograder.probes import seed_cpu

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
    """No warnings and nothing on stderr (nbgrader scores a test cell with stderr as 0)."""
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        yield


_MARKER = "deploy-probe: the warning filters as the probe set them"


@contextlib.contextmanager
def _settings_watched(seen: dict):
    """Notes in ``seen["settings"]`` each setting of the whole process that the block left
    switched, as ``[name, before, after]``: the contract's (``boundary.MODES``: autograd, the
    default dtype and device, anomaly detection) and, for these probes, torch's thread count,
    Python's garbage collector, cuDNN's autotuner, torch's RNG reseeded (it is first moved
    off any seed's state, and put back afterwards), a blanket warnings filter left in front.
    The block starts from the usual settings (MODES' usual values, the collector on, no
    autotuner); afterwards the probe's own are as it found them, and ``run_probe`` puts back
    MODES. Use inside ``_quiet()``."""
    import gc

    def now() -> dict:
        return {
            **modes_now(),
            "torch.get_num_threads()": torch.get_num_threads(),
            "gc.isenabled()": gc.isenabled(),
            "torch.backends.cudnn.benchmark": bool(torch.backends.cudnn.benchmark),
        }

    found = now()  # the kernel's, as the probe found it (a test cell may have switched them)
    rng = torch.random.get_rng_state()
    torch.rand(1)  # a state no manual_seed gives
    moved = torch.random.get_rng_state()
    warnings.filterwarnings("default", message=_MARKER)
    # As a caller usually has them, so that an answer that switches one shows every time.
    usual_modes()
    gc.enable()
    torch.backends.cudnn.benchmark = False
    threads = torch.get_num_threads()
    torch.set_num_threads(threads + 1)  # a count that an answer's set_num_threads(n) changes
    before = now()
    try:
        yield
    finally:
        after = now()
        changed = [[k, before[k], after[k]] for k in before if before[k] != after[k]]
        for entry in changed:
            if entry[0] == "torch.get_num_threads()":  # before is the probe's count: say what ran
                entry[:] = [f"torch.set_num_threads({entry[2]})", "", ""]
        if not torch.equal(torch.random.get_rng_state(), moved):
            changed.append(["torch.manual_seed(...)", "", ""])
        first = warnings.filters[0] if warnings.filters else None
        if first is not None and first[:4] == ("ignore", None, Warning, None):  # all of them
            changed.append(["warnings.simplefilter('ignore')", "", ""])
        seen["settings"] = changed
        torch.set_num_threads(threads)
        (gc.enable if found["gc.isenabled()"] else gc.disable)()
        torch.backends.cudnn.benchmark = found["torch.backends.cudnn.benchmark"]
        torch.random.set_rng_state(rng)


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


def _error(err: BaseException, folder: str = "") -> dict:
    """An exception as data: its type's name and first line (the probe's folder masked)."""
    line = _first_line(err)
    if folder:
        line = line.replace(folder, "<folder>")
    return {"type": type(err).__name__, "line": line}


def _modes(model: nn.Module) -> list:
    """[name, training] for the model and every submodule: the mode a caller set."""
    return [[name, module.training] for name, module in model.named_modules()]


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


def save_payload(path: str) -> None:
    """A checkpoint whose unpickling calls a function (harmless here: it leaves a note)."""
    torch.save({"weight": torch.zeros(2), "extra": _Payload()}, path)


# ---------------------------------------------------------------------------------------
# Exercise 1: strip_module_prefix
# ---------------------------------------------------------------------------------------


def probe_strip_module_prefix(strip_module_prefix, case: dict) -> dict:
    """The returned keys in order, which original tensor each value is, the caller's keys after.

    ``case["entries"]``: ``[key, tensor, transposed]``; a transposed entry is handed over as
    ``tensor.t()`` (a non-contiguous view). A value need not be a tensor (a module's extra
    state); with ``case["meta"]`` every tensor is handed over on the meta device.
    """
    sd = OrderedDict()
    for key, tensor, transposed in case["entries"]:
        if isinstance(tensor, torch.Tensor) and case.get("meta"):
            tensor = tensor.to("meta")  # a model built on the meta device: no data to copy
        sd[key] = tensor.t() if transposed else tensor
    originals = list(sd.values())
    with _quiet():
        try:
            out = strip_module_prefix(sd)
        except NotImplementedError as err:  # not the unanswered stub: meta holds no data
            if not case.get("meta"):
                raise
            raise RuntimeError(f"{_first_line(err)} (a tensor on the meta device)") from None
    seen = {"kind": describe(out), "caller_keys_after": list(sd), "keys": None, "values": None}
    seen["same_object"] = out is sd
    if isinstance(out, dict):
        seen["keys"] = list(out)
        seen["values"] = []
        for value in out.values():
            sources = []
            if isinstance(value, torch.Tensor):
                sources = [
                    i
                    for i, t in enumerate(originals)
                    if isinstance(t, torch.Tensor)
                    and value.data_ptr() == t.data_ptr()
                    and value.shape == t.shape
                ]
            same = [i for i, t in enumerate(originals) if value is t]
            seen["values"].append(
                {"kind": describe(value), "same_tensor_as": sources, "same_object_as": same}
            )
    return seen


# ---------------------------------------------------------------------------------------
# Exercise 2: load_checkpoint_cpu
# ---------------------------------------------------------------------------------------


class Classifier(nn.Module):
    """A small classifier whose weights all come from ``g``; its head's name is a choice.

    With ``extras`` it also has what real models have and a key count can miss: a parameter
    on the root module (a class token), a nested block, and a non-persistent buffer (which
    is not in the state_dict at all).
    """

    def __init__(self, g: torch.Generator, d_in: int, head_name: str = "head", extras=False):
        super().__init__()
        with torch.random.fork_rng(devices=[]):
            self.body = nn.Sequential(nn.Linear(d_in, 6), nn.BatchNorm1d(6), nn.ReLU())
            setattr(self, head_name, nn.Linear(6, 3))
            if extras:
                self.cls_token = nn.Parameter(torch.zeros(1, 6))
                self.encoder = nn.ModuleDict({"block": nn.Sequential(nn.Linear(6, 6))})
                self.register_buffer("scale", torch.ones(1), persistent=False)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g))
            self.body[1].running_mean.copy_(torch.randn(6, generator=g))


def build_classifier(case: dict) -> Classifier:
    """The model that load_checkpoint_cpu loads into: seeded by ``case["model_seed"]``.

    In training mode unless ``case["train"]`` is False; in float64 where ``case["dtype"]``
    says so; with gradients on its parameters where ``case["grads"]`` says so; with its first
    layer frozen (``requires_grad=False``, as in fine-tuning) where ``case["frozen"]`` says so.
    """
    g = torch.Generator().manual_seed(case["model_seed"])
    model = Classifier(g, case["d_in"], "head", case.get("extras", False))
    if case.get("dtype") == "float64":
        model = model.double()
    if case.get("frozen"):  # the caller's choice of what trains: loading leaves it alone
        model.body[0].requires_grad_(False)
    if case.get("grads"):  # the caller's gradients, which loading leaves alone
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=g, dtype=p.dtype)
    return model.train(case.get("train", True))


def build_gpu_checkpoint(spec: dict) -> str:
    """The path of a checkpoint saved as if from a GPU, in a fresh folder: the state_dict of a
    Classifier seeded by ``spec["seed"]`` (``d_in``, ``head`` name, ``extras``), with the key
    ``spec["extra"]`` added and ``spec["drop"]`` removed where they are given."""
    g = torch.Generator().manual_seed(spec["seed"])
    model = Classifier(g, spec["d_in"], spec["head"], spec["extras"])
    state = OrderedDict(model.state_dict())
    if spec.get("extra"):
        state[spec["extra"]] = torch.tensor([1.5])
    if spec.get("drop"):
        state.pop(spec["drop"], None)
    path = os.path.join(tempfile.mkdtemp(prefix="deploy-probe-"), "checkpoint.pt")
    save_as_gpu(state, path)
    return path


def probe_load_checkpoint_cpu(load_checkpoint_cpu, case: dict) -> dict:
    """Save ``case["state"]`` as if from a GPU, load it into a fresh model; the result and weights.

    With ``case["payload"]`` the file also holds an object whose unpickling runs code; an
    exception the answer raises then comes back as data (``error``).
    """
    folder = tempfile.mkdtemp(prefix="deploy-probe-")
    path = os.path.join(folder, "checkpoint.pt")
    state = OrderedDict(case["state"])
    if case.get("payload"):
        state["extra"] = _Payload()
    save_as_gpu(state, path)
    model = build_classifier(case)
    modes_before = _modes(model)
    own_before = dict(model.named_parameters()) | dict(model.named_buffers())
    PAYLOAD_RUNS.clear()
    result, error = None, None
    with _quiet():
        try:
            result = load_checkpoint_cpu(path, model)
        except Exception as err:
            if not case.get("payload"):
                raise
            error = _error(err, folder)
    seen = {"kind": describe(result), "length": None, "parts": None, "error": error}
    seen["payload_ran"] = bool(PAYLOAD_RUNS)
    PAYLOAD_RUNS.clear()
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
    seen["modes_before"], seen["modes_after"] = modes_before, _modes(model)
    own_after = dict(model.named_parameters()) | dict(model.named_buffers())
    seen["replaced"] = [name for name, t in own_before.items() if own_after.get(name) is not t]
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


def _safe_global_names() -> list[str]:
    """What torch.load(weights_only=True) has been told to allow, beyond its own list."""
    return sorted(repr(entry) for entry in torch.serialization.get_safe_globals())


@contextlib.contextmanager
def _changes_on_second_read(path: str, replacement: bytes, reads: list):
    """While active, the second read of ``path`` through torch's loaders finds ``replacement``.

    torch.load (also as torch.serialization.load) and get_unsafe_globals_in_checkpoint count
    as reads; each is noted in ``reads``. A loader that checks a file, then loads it again,
    meets a file that changed in between (another process, an attacker).
    """
    serialization = torch.serialization
    originals = {
        (torch, "load"): torch.load,
        (serialization, "load"): serialization.load,
        (serialization, "get_unsafe_globals_in_checkpoint"): getattr(
            serialization, "get_unsafe_globals_in_checkpoint", None
        ),
    }

    def counting(real):
        def read(f, *args, **kwargs):
            reads.append(1)
            if len(reads) == 2 and isinstance(f, (str, os.PathLike)):
                with open(path, "wb") as out:
                    out.write(replacement)
            return real(f, *args, **kwargs)

        return read

    try:
        for (owner, name), real in originals.items():
            if real is not None:
                setattr(owner, name, counting(real))
        yield
    finally:
        for (owner, name), real in originals.items():
            if real is not None:
                setattr(owner, name, real)


def build_saved_file(spec: dict) -> str:
    """The path of a file in a fresh folder: ``spec["obj"]`` saved as if from a GPU where
    ``spec["file"]`` is ``"gpu"``, a pickled nn.Module for ``"whole_model"``, a file whose
    unpickling runs code for ``"runs_code"``."""
    path = os.path.join(tempfile.mkdtemp(prefix="deploy-probe-"), "file.pt")
    if spec["file"] == "whole_model":
        with torch.random.fork_rng(devices=[]):
            seed_cpu(0)
            torch.save(nn.Sequential(nn.Linear(2, 2)), path)
    elif spec["file"] == "runs_code":
        save_payload(path)
    else:
        save_as_gpu(spec["obj"], path)
    return path


@contextlib.contextmanager
def _cuda_claimed(claimed: bool):
    """While active (where ``claimed``), torch.cuda.is_available() says True: code that picks
    the GPU whenever there is one shows it on any machine."""
    real = torch.cuda.is_available
    if claimed:
        torch.cuda.is_available = lambda: True
    try:
        yield
    finally:
        torch.cuda.is_available = real


def probe_safe_load(safe_load, case: dict) -> dict:
    """Write the file ``case["file"]`` names, run safe_load on it; what came back, what ran.

    ``"gpu"``: ``case["obj"]`` saved as if from a GPU; ``"whole_model"``: a pickled
    nn.Module; ``"runs_code"``: a file whose unpickling calls a function; ``"truncated"``:
    ``case["obj"]`` saved, then cut to half its bytes; ``"empty"``: an empty file;
    ``"missing"``: a path with no file;
    ``"changes"``: ``case["obj"]`` saved, replaced by a file that runs code when it is read a
    second time. With ``case["catch"]`` an exception the answer raises comes back as data; with
    ``case["cuda_available"]`` torch.cuda.is_available() says True while the answer runs.
    """
    folder = tempfile.mkdtemp(prefix="deploy-probe-")
    path = os.path.join(folder, "file.pt")
    kind = case["file"]
    reads: list = []
    swap = contextlib.nullcontext()
    if kind == "gpu":
        save_as_gpu(case["obj"], path)
    elif kind == "whole_model":
        with torch.random.fork_rng(devices=[]):
            seed_cpu(0)
            torch.save(nn.Sequential(nn.Linear(2, 2)), path)
    elif kind == "runs_code":
        save_payload(path)
    elif kind == "truncated":
        torch.save(case["obj"], path)
        with open(path, "rb") as f:
            data = f.read()
        with open(path, "wb") as f:
            f.write(data[: len(data) // 2])
    elif kind == "missing":
        # A name people give weights-only checkpoints; it also shows in the error message, so
        # an answer that catches every error and picks refusals by their words is caught.
        path = os.path.join(folder, "model_weights_only.pt")
    elif kind == "changes":
        payload_path = os.path.join(folder, "payload.pt")
        save_payload(payload_path)
        with open(payload_path, "rb") as f:
            swap = _changes_on_second_read(path, f.read(), reads)
        torch.save(case["obj"], path)
    elif kind == "empty":  # a save that stopped before writing anything
        open(path, "wb").close()
    PAYLOAD_RUNS.clear()
    # From an empty list of allowed classes (put back afterwards), so that a class the answer
    # allows shows every time, not only the first (a second add changes nothing).
    allowed = torch.serialization.get_safe_globals()
    torch.serialization.clear_safe_globals()
    out, error = None, None
    watched: dict = {}
    try:
        with (
            _quiet(),
            _settings_watched(watched),
            swap,
            _cuda_claimed(case.get("cuda_available", False)),
        ):
            try:
                out = safe_load(path)
            except Exception as err:
                if not case.get("catch"):
                    raise
                error = _error(err, folder)
        added = _safe_global_names()
    finally:
        torch.serialization.clear_safe_globals()
        torch.serialization.add_safe_globals(allowed)
    devices: dict = {}
    seen = {"kind": describe(out), "payload_ran": bool(PAYLOAD_RUNS), "error": error}
    seen["out"] = _plain(out, "", devices)
    seen["devices"] = devices
    seen["reads"] = len(reads)
    seen["safe_globals_changed"] = bool(added)
    seen["settings"] = watched["settings"]
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


class NegatedGatedNet(GatedNet):
    """A GatedNet subclass with its own gate: a batch whose mean is negative takes ``pos``."""

    def gate(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean() < 0


def build_gated(case: dict) -> GatedNet:
    """GatedNet(case["dim"]) (NegatedGatedNet where ``case["gate"]`` is ``"negated"``) seeded
    with the dim, on case["device"], in training mode unless ``case["train"]`` is False."""
    kind = NegatedGatedNet if case.get("gate") == "negated" else GatedNet
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["dim"])
        model = kind(case["dim"])
    return model.to(case["device"]).train(case.get("train", True))


def probe_export_gated(export_gated, case: dict) -> dict:
    """Export from ``case["example"]``; what the result is and its outputs on ``case["inputs"]``.

    Each output is ``{"kind", "value", "error"}``; ``error`` says what running it raised.
    The modes of the model and its submodules are noted before and after the export.
    """
    model = build_gated(case)  # in training mode, as it comes from training, unless told
    modes_before = _modes(model)
    with _quiet():
        result = export_gated(model, case["example"])
    seen = {
        "kind": describe(result),
        "is_exported_program": isinstance(result, torch.export.ExportedProgram),
        "module_error": None,
        "callable": False,
        "outputs": [],
        "modes_before": modes_before,
        "modes_after": _modes(model),
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
    """The model to export, weights from ``case["seed"]``, on ``case["device"]``, training mode.

    ``case["scale"]`` (default 1) multiplies the last layer's weights: outputs in the
    thousands, where a relative tolerance matters more than an absolute one. With
    ``case["constant"]`` the first output is that constant for every row (zero weights, the
    constant as bias: exact in any runtime), far larger than the others.
    """
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
        model[-1].weight.mul_(case.get("scale", 1.0))
        if case.get("constant"):
            model[-1].weight[0] = 0.0
            model[-1].bias[0] = case["constant"]
    return model.to(case["device"])  # in training mode, as a model straight out of training


def onnx_input(case: dict) -> torch.Tensor:
    """``case["x"]`` as the answer gets it: a transposed view of ``case["x_t"]`` (not contiguous)
    where that is given, requiring grad where ``case["requires_grad"]`` says so."""
    x = case["x_t"].t() if case.get("x_t") is not None else case["x"]
    if case.get("requires_grad"):
        x = x.detach().requires_grad_(True)
    return x


def probe_onnx_round_trip(onnx_round_trip, case: dict) -> dict:
    """Run the round trip into a fresh folder; (onnx_out, matches) described, the file's presence.

    ``case["tol_args"]`` (a list) is passed on positionally after the path,
    ``case["tol_kwargs"]`` (a dict) as keywords; with neither, the defaults apply.
    """
    path = os.path.join(tempfile.mkdtemp(prefix="deploy-probe-"), "model.onnx")
    model = build_onnx_model(case)
    args = (model, onnx_input(case), path, *case.get("tol_args", []))
    watched: dict = {}
    with _quiet(), _seeded(case["device"]), _settings_watched(watched):
        result = onnx_round_trip(*args, **case.get("tol_kwargs", {}))
    seen = {"kind": describe(result), "length": None, "file_written": os.path.exists(path)}
    seen["settings"] = watched["settings"]
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
    """Linear(d_in, hidden), ReLU, Dropout(0.5), Linear(hidden, 10), seeded with d_in; on the CPU.

    In training mode unless ``case["train"]`` is False. With ``case["outlier"]`` the first
    layer ignores input feature 0 (its weights are zero): the check makes that feature huge,
    which the float32 model does not notice and int8 activations do (their scale follows the
    largest value, and the ordinary features round to a few levels).
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["d_in"])
        model = nn.Sequential(
            nn.Linear(case["d_in"], case["hidden"]),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(case["hidden"], 10),
        )
    if case.get("outlier"):
        with torch.no_grad():
            model[0].weight[:, 0] = 0.0
    return model.train(case.get("train", True))


class _ForwardNotes:
    """A forward pre-hook noting how each forward pass ran (autograd on, training mode).

    copy.deepcopy(model) keeps this very hook, so the passes of copies are noted too; a
    pickled model (torch.save(model)) carries a fresh, empty one.
    """

    def __init__(self):
        self.seen: list = []

    def __call__(self, module, args):
        self.seen.append({"grad_enabled": torch.is_grad_enabled(), "training": module.training})

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_ForwardNotes, ())


def probe_quantize_report(quantize_report, case: dict) -> dict:
    """The report (types and numbers), the caller's model's state_dict and modes afterwards, and
    how each forward pass of the model (or of a copy of it) ran: autograd on, training mode."""
    model = build_quant_model(case)
    modes_before = _modes(model)
    note = _ForwardNotes()
    forwards = note.seen
    handle = model.register_forward_pre_hook(note)
    try:
        with _quiet(), _seeded():
            report = quantize_report(model, case["x"], case["y"])
    finally:
        handle.remove()
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
    seen["modes_before"], seen["modes_after"] = modes_before, _modes(model)
    seen["forwards"] = forwards
    return seen


# ---------------------------------------------------------------------------------------
# Exercise 7: measure_latency_ms
# ---------------------------------------------------------------------------------------


_real_perf_counter = time.perf_counter  # the fake model's own clock, never patched


class _VirtualClock:
    """The time the answer reads while it is timed: it moves only when the fake model runs,
    by the scripted duration. An answer that reads time.perf_counter (or perf_counter_ns,
    monotonic, time) gets exact numbers, so the same answer always returns the same value
    and a wrong one can be recognised; one that bound a clock before the probe started
    (``from time import perf_counter``) still reads real time, and the fake really sleeps."""

    def __init__(self):
        self.seconds = 1000.0
        self.read: set[str] = set()  # the names of the clocks the answer read

    def advance(self, ms: float) -> None:
        self.seconds += ms / 1000


@contextlib.contextmanager
def _virtual_time(clock: _VirtualClock):
    """time's clocks read ``clock`` for the duration of the block; put back after."""

    def seconds(name: str):
        def read() -> float:
            clock.read.add(name)
            return clock.seconds

        return read

    def nanoseconds(name: str):
        def read() -> int:
            clock.read.add(name)
            return round(clock.seconds * 1e9)

        return read

    fakes = {
        "perf_counter": seconds("perf_counter"),
        "perf_counter_ns": nanoseconds("perf_counter_ns"),
        "monotonic": seconds("monotonic"),
        "monotonic_ns": nanoseconds("monotonic_ns"),
        "time": seconds("time"),
        "time_ns": nanoseconds("time_ns"),
    }
    originals = {name: getattr(time, name) for name in fakes}
    try:
        for name, fake in fakes.items():
            setattr(time, name, fake)
        yield
    finally:
        for name, real in originals.items():
            setattr(time, name, real)


class FakeModel:
    """Sleeps a scripted number of milliseconds per call; remembers how it was called.

    Each call is also noted in ``events`` (shared with the clock and synchronize stand-ins of
    :func:`_pretend_cuda`), so the order of calls, clock readings and synchronisations shows.
    """

    def __init__(
        self,
        durations_ms: list[float],
        events: list | None = None,
        clock: _VirtualClock | None = None,
    ):
        self.durations_ms = durations_ms
        self.clock = clock or _VirtualClock()
        self.calls = 0
        self.grad_enabled: list[bool] = []
        self.inputs: list[object] = []
        self.slept_ms: list[float] = []  # each call's scripted duration (it sleeps at least that)
        self.events = events if events is not None else []

    def __call__(self, x):
        ms = self.durations_ms[min(self.calls, len(self.durations_ms) - 1)]
        self.calls += 1
        self.grad_enabled.append(torch.is_grad_enabled())
        self.inputs.append(x)
        self.events.append("call")
        start = _real_perf_counter()
        time.sleep(ms / 1000)
        while (_real_perf_counter() - start) * 1000 < ms:  # sleep can wake a little early
            time.sleep(0.0005)
        self.clock.advance(ms)
        self.slept_ms.append(float(ms))  # what the virtual clock says the call took
        return x


class _OnCuda(torch.Tensor):
    """A CPU tensor that says it lives on CUDA device 0: the device handling shows on any machine."""

    @property
    def device(self):
        return torch.device("cuda", 0)

    @property
    def is_cuda(self):
        return True

    def get_device(self):
        return 0


@contextlib.contextmanager
def _pretend_cuda(events: list):
    """torch.cuda.synchronize (and torch.accelerator's) note "sync"; time.perf_counter and
    perf_counter_ns note "clock"; torch.cuda.is_available() says True. All put back after."""

    def sync(*args, **kwargs):
        events.append("sync")

    def clock(real):
        def read(*args, **kwargs):
            events.append("clock")
            return real(*args, **kwargs)

        return read

    patches = [(torch.cuda, "synchronize", sync), (torch.cuda, "is_available", lambda: True)]
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "synchronize"):
        patches.append((accelerator, "synchronize", sync))
    for name in ("perf_counter", "perf_counter_ns"):  # what the exercise says to time with
        patches.append((time, name, clock(getattr(time, name))))
    originals = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        yield
    finally:
        for owner, name, value in originals:
            setattr(owner, name, value)


def probe_measure_latency_ms(measure_latency_ms, case: dict) -> dict:
    """Time a scripted fake model; the answer and what the fake saw (calls, inputs, grad mode).

    ``case["warmup"]`` and ``case["runs"]`` are passed positionally, or as keywords where
    ``case["keywords"]`` says so; ``None`` leaves that argument out (its default applies).
    With ``case["cuda"]`` the input claims to be on a CUDA device and the order of calls,
    clock readings and synchronisations comes back in ``events``; an exception the answer
    raises then comes back as data (``error``).
    """
    x = torch.zeros(2, 3, device=case["device"])
    events: list = []
    pretend = contextlib.nullcontext()
    if case.get("cuda"):
        x = torch.zeros(2, 3).as_subclass(_OnCuda)
        pretend = _pretend_cuda(events)
    clock = _VirtualClock()
    fake = FakeModel(list(case["durations_ms"]), events, clock)
    args, kwargs = [fake, x], {}
    for name in ("warmup", "runs"):
        if case[name] is not None:
            if case.get("keywords"):
                kwargs[name] = case[name]
            else:
                args.append(case[name])
    got, error = None, None
    grad_before = torch.is_grad_enabled()  # an earlier call may have switched it off
    torch.set_grad_enabled(True)  # as a caller has it: on
    watched: dict = {}
    try:
        with _quiet(), _settings_watched(watched):
            try:
                with _virtual_time(clock), pretend:  # pretend's clock notes wrap the virtual one
                    got = measure_latency_ms(*args, **kwargs)
            except Exception as err:
                if not case.get("cuda"):
                    raise
                error = _error(err)
        grad_after = all(name != "torch.is_grad_enabled()" for name, *_ in watched["settings"])
    finally:
        torch.set_grad_enabled(grad_before)  # autograd as this probe found it
    return {
        "kind": describe(got),
        "value": _number(got),
        "calls": fake.calls,
        "same_input": all(inp is x for inp in fake.inputs),
        "grad_enabled": list(fake.grad_enabled),
        "grad_restored": grad_after,
        "slept_ms": list(fake.slept_ms),
        "clocks_read": sorted(clock.read),
        "events": events,
        "error": error,
        "settings": [e for e in watched["settings"] if e[0] != "torch.is_grad_enabled()"],
    }


# ---------------------------------------------------------------------------------------
# Exercise 8: save_for_serving
# ---------------------------------------------------------------------------------------


class ServingMLP(nn.Module):
    """Linear, BatchNorm1d, ReLU, Dropout, Linear: eval and training mode differ twice over."""

    def __init__(self, d_in: int, hidden: int, classes: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d_in, hidden),
            nn.BatchNorm1d(hidden),
            nn.ReLU(),
            nn.Dropout(0.4),
            nn.Linear(hidden, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class TiedLM(nn.Module):
    """Token ids (N, T) -> scores (N, T, V); the output layer is the embedding (tied weights)."""

    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.drop = nn.Dropout(0.3)
        self.head = nn.Linear(dim, vocab)
        self.head.weight = self.embed.weight  # one tensor, two names in the state dict

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.drop(self.embed(tokens)))


class TransposedNet(nn.Module):
    """A layer whose weight came from an (in, out) layout as a transposed view (not contiguous)."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.proj = nn.Linear(d_in, d_out)
        self.proj.weight = nn.Parameter(torch.randn(d_in, d_out).t())
        self.norm = nn.BatchNorm1d(d_out)
        self.drop = nn.Dropout(0.3)
        # Rebuilt by __init__, so not in the state_dict (nor in weights.safetensors: a strict
        # load_model refuses a file that holds it).
        self.register_buffer("shift", torch.linspace(-0.5, 0.5, d_out), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(torch.relu(self.norm(self.proj(x)) + self.shift))


def build_serving(case: dict) -> nn.Module:
    """The model ``case["kind"]`` describes, seeded with ``case["seed"]``, with BatchNorm
    statistics far from a batch's own; on ``case["device"]``, in training mode unless
    ``case["train"]`` is False."""
    dims = case["dims"]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])
        if case["kind"] == "tied":
            model = TiedLM(*dims)
        elif case["kind"] == "transposed":
            model = TransposedNet(*dims)
        else:
            model = ServingMLP(*dims)
        with torch.no_grad():
            for module in model.modules():
                if isinstance(module, nn.BatchNorm1d):
                    module.running_mean.copy_(torch.randn(module.num_features) * 2)
                    module.running_var.copy_(torch.rand(module.num_features) * 3 + 0.5)
    return model.to(case["device"]).train(case.get("train", True))


def _where(value, folder: str, scratch: str = "") -> str | None:
    """Where a returned path points, relative to ``folder`` (resolved from the current
    directory; a path inside the probe's working directory ``scratch`` as
    ``<working directory>/...``, since that folder's name changes from run to run); None for
    something that is not a path."""
    if not isinstance(value, (str, os.PathLike)):
        return None
    try:
        real = os.path.realpath(os.fspath(value))
        if scratch and real.startswith(os.path.realpath(scratch) + os.sep):
            inside = os.path.relpath(real, os.path.realpath(scratch))
            return os.path.join("<working directory>", inside)
        return os.path.relpath(real, os.path.realpath(folder))
    except (TypeError, ValueError):
        return None


def _run_all(run, inputs: list, device) -> list:
    """``run(x)`` for each input as {"value", "error"}, without autograd, warnings or stderr."""
    outputs = []
    for x in inputs:
        out, error = None, None
        try:
            with torch.no_grad(), _quiet(), _seeded(device):
                out = run(x)
        except Exception as err:  # reported as data
            error = f"{type(err).__name__}: {_first_line(err)}"
        if isinstance(out, torch.Tensor):
            out = out.detach()
        else:
            error = error or f"returned a {type(out).__name__}"
            out = None
        outputs.append({"value": out, "error": error})
    return outputs


def _reload_program(path: str, case: dict, masks: tuple) -> dict:
    """torch.export.load(path) and its module's outputs on ``case["inputs"]``."""
    seen = {"found": os.path.isfile(path), "error": None, "kind": None, "outputs": []}
    if not seen["found"]:
        return seen
    try:
        with _quiet():
            program = torch.export.load(path)
    except Exception as err:  # reported as data
        seen["error"] = _masked(err, masks)
        return seen
    seen["kind"] = describe(program)
    if isinstance(program, torch.export.ExportedProgram):
        seen["outputs"] = _run_all(program.module(), case["inputs"], case["device"])
    return seen


def _reload_weights(path: str, case: dict, masks: tuple) -> dict:
    """load_model into a model of the same class with other weights (strict), its eval outputs."""
    seen = {"found": os.path.isfile(path), "error": None, "names": None, "outputs": []}
    if not seen["found"]:
        return seen
    from safetensors import safe_open
    from safetensors.torch import load_model

    fresh = build_serving({**case, "seed": case["seed"] + 1000, "train": False})
    try:
        with _quiet():
            with safe_open(path, framework="pt") as f:
                seen["names"] = sorted(f.keys())
            load_model(fresh, path, strict=True, device=str(case["device"]))
    except Exception as err:  # reported as data
        seen["error"] = _masked(err, masks)
        # load_model's error names the keys on its later lines: keep them, on one line.
        seen["error"]["line"] = " ".join(
            _masked(RuntimeError(" ".join(str(err).split())), masks)["line"].split()
        )
        return seen
    seen["outputs"] = _run_all(fresh.eval(), case["inputs"], case["device"])
    return seen


def _masked(err: BaseException, masks: tuple) -> dict:
    """_error with every temporary folder of the probe masked (they differ from run to run)."""
    seen = _error(err)
    for folder in masks:
        seen["line"] = seen["line"].replace(os.path.realpath(folder), "<folder>")
        seen["line"] = seen["line"].replace(folder, "<folder>")
    return seen


def _tensors_changed(before: dict, model: nn.Module) -> list:
    """[name, what] for each parameter or buffer of ``model`` whose device, dtype or values
    differ from ``before`` (name -> a clone taken earlier), or that is gone."""
    after = dict([*model.named_parameters(), *model.named_buffers()])
    changed = []
    for name, old in before.items():
        new = after.get(name)
        if new is None:
            changed.append([name, "gone"])
        elif new.device != old.device:
            changed.append([name, f"device {old.device} -> {new.device}"])
        elif new.dtype != old.dtype:
            changed.append([name, f"dtype {old.dtype} -> {new.dtype}"])
        elif new.shape != old.shape or not torch.equal(new.detach(), old):
            changed.append([name, "values"])
    return changed


def probe_save_for_serving(save_for_serving, case: dict) -> dict:
    """Run the answer with a fresh folder (created or not, ``str`` or ``Path``) from a fresh
    working directory; what it returned, which files it wrote where, the model's modes, and
    the outputs of both files reloaded here (the program on ``case["inputs"]``, the weights
    loaded into a model with other weights)."""
    from pathlib import Path

    model = build_serving(case)
    for p in model.parameters():  # straight out of training: the last step's gradients
        p.grad = torch.full_like(p, 0.25)
    modes_before = _modes(model)
    flags_before = [[n, p.requires_grad] for n, p in model.named_parameters()]
    tensors_before = {
        name: t.detach().clone() for name, t in [*model.named_parameters(), *model.named_buffers()]
    }
    root = tempfile.mkdtemp(prefix="deploy-probe-")
    folder = os.path.join(root, *case["folder_parts"])
    if case["folder_exists"]:
        os.makedirs(folder)
    scratch = tempfile.mkdtemp(prefix="deploy-cwd-")  # the answer's working directory
    here = os.getcwd()
    os.chdir(scratch)
    try:
        watched: dict = {}
        with _quiet(), _seeded(case["device"]), _settings_watched(watched):
            result = save_for_serving(
                model, case["example"], Path(folder) if case["as_path"] else folder
            )
        returned = None
        if isinstance(result, dict):
            returned = {
                str(key): {"kind": describe(value), "where": _where(value, folder, scratch)}
                for key, value in result.items()
            }
    finally:
        os.chdir(here)
    masks = (root, scratch)
    return {
        "kind": describe(result),
        "returned": returned,
        "in_folder": sorted(os.listdir(folder)) if os.path.isdir(folder) else None,
        "in_cwd": sorted(os.listdir(scratch)),
        "modes_before": modes_before,
        "modes_after": _modes(model),
        "flags_before": flags_before,
        "flags_after": [[n, p.requires_grad] for n, p in model.named_parameters()],
        "tensors_changed": _tensors_changed(tensors_before, model),
        "grads_kept": [
            n
            for n, p in model.named_parameters()
            if p.grad is not None and bool((p.grad == 0.25).all())
        ],
        "settings": watched["settings"],
        "program": _reload_program(os.path.join(folder, "model.pt2"), case, masks),
        "weights": _reload_weights(os.path.join(folder, "weights.safetensors"), case, masks),
    }
