"""Hidden checks for 07_deployment."""

from __future__ import annotations

import copy
import io
import os
import tempfile
import time
import warnings
from collections import OrderedDict

import torch
from torch import nn

from tutorial_lib.checks import CheckError, assert_close, check_type
from tutorial_lib.device import get_device

# ---------------------------------------------------------------------------------------
# Helpers: checkpoints that look as if they came from a GPU, and a file that runs code.
# ---------------------------------------------------------------------------------------

_TAG = {"location": None}  # while set, torch.save labels every storage with this location


def _fake_tagger(obj):
    return _TAG["location"]


def _fake_deserializer(obj, location):
    return None  # never claims a storage: loading falls through to torch's own rules


# Priority 2: before torch's CPU tagger (10); distinct from the lesson's own trick (1).
torch.serialization.register_package(2, _fake_tagger, _fake_deserializer)


def _save_as_gpu(obj, path: str) -> None:
    """torch.save(obj, path), labelling every tensor as saved from a CUDA device."""
    # A device index this machine lacks, so that loading without map_location fails even on
    # a machine with GPUs (on a CPU-only machine any CUDA label fails).
    _TAG["location"] = f"cuda:{torch.cuda.device_count() + 1}"
    try:
        torch.save(obj, path)
    finally:
        _TAG["location"] = None


_PAYLOAD_RUNS: list[str] = []


def _payload(note: str) -> None:
    """What a malicious checkpoint would run while unpickling (here: only a note)."""
    _PAYLOAD_RUNS.append(note)


class _Payload:
    def __reduce__(self):
        return (_payload, ("code from the checkpoint ran",))


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else type(err).__name__


def _call(what: str, fn, *args, hints: dict[str, str] | None = None):
    """Call student code; turn an unexpected exception into a CheckError with a hint."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    except NotImplementedError:
        raise
    except CheckError:
        raise
    except Exception as err:  # any error from student code becomes a message
        message = str(err)
        hint = ""
        for needle, text in (hints or {}).items():
            if needle.lower() in message.lower():
                hint = " " + text
                break
        raise CheckError(f"{what} raised {type(err).__name__}: {_first_line(err)}.{hint}") from None


# ---------------------------------------------------------------------------------------
# Exercise 1: strip_module_prefix
# ---------------------------------------------------------------------------------------


def _reference_strip(state_dict):
    return OrderedDict((k.removeprefix("module."), v) for k, v in state_dict.items())


class _Block(nn.Module):
    def __init__(self, g: torch.Generator, width: int):
        super().__init__()
        self.submodule = nn.Linear(width, width)
        self.module_norm = nn.LayerNorm(width)
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g))


def check_strip_module_prefix(strip_module_prefix) -> None:
    """DataParallel-style keys, keys with 'module' inside, mixed and empty state dicts."""
    g = torch.Generator().manual_seed(7)
    cases = []
    for width in (1, 3):
        inner = nn.Sequential(_Block(g, width), nn.Linear(width, 2))
        cases.append(("a DataParallel checkpoint", nn.DataParallel(inner).state_dict()))
    mixed = OrderedDict()
    mixed["module.encoder.weight"] = torch.randn(2, 3, generator=g)
    mixed["head.module.bias"] = torch.randn(3, generator=g)  # 'module.' inside: keep it
    mixed["modules.count"] = torch.tensor(4)  # starts with 'module' but not 'module.'
    mixed["module.submodule.weight"] = torch.randn(3, 3, generator=g).t()  # non-contiguous
    cases.append(("a state_dict with some prefixed keys", mixed))
    cases.append(("an empty state_dict", OrderedDict()))
    for what, sd in cases:
        keys_before = list(sd)
        out = _call(f"strip_module_prefix({what})", strip_module_prefix, sd)
        check_type(out, dict, f"strip_module_prefix({what})")
        expected = _reference_strip(sd)
        if list(sd) != keys_before:
            raise CheckError(
                f"strip_module_prefix changed the caller's dict ({what}). Build and return a "
                "new dict instead of renaming keys in place."
            )
        if list(out) != list(expected):
            wrong = [
                (a, b) for a, b in zip(sd, out, strict=False) if b != a.removeprefix("module.")
            ]
            example = f" For example {wrong[0][0]!r} became {wrong[0][1]!r}." if wrong else ""
            raise CheckError(
                f"strip_module_prefix({what}) returned keys {list(out)[:6]}, expected "
                f"{list(expected)[:6]} (same order).{example} Remove 'module.' only at the "
                "start of a key (str.removeprefix); str.replace also edits names like "
                "'submodule.' and str.lstrip removes characters, not a prefix."
            )
        for key, value in expected.items():
            got = out[key]
            check_type(got, torch.Tensor, f"the value for {key!r}")
            if got.data_ptr() != value.data_ptr() or got.shape != value.shape:
                raise CheckError(
                    f"the value for {key!r} is not the original tensor: rename the keys, keep "
                    "the values as they are (no copies, no changes)."
                )


# ---------------------------------------------------------------------------------------
# Exercise 2: load_checkpoint_cpu
# ---------------------------------------------------------------------------------------


class _Classifier(nn.Module):
    def __init__(self, g: torch.Generator, d_in: int, head_name: str = "head"):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, 6), nn.BatchNorm1d(6), nn.ReLU())
        setattr(self, head_name, nn.Linear(6, 3))
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.randn(p.shape, generator=g))
            self.body[1].running_mean.copy_(torch.randn(6, generator=g))


_LOAD_HINTS = {
    "CUDA": "The checkpoint was saved on a GPU: pass map_location='cpu' to torch.load.",
    "Missing key": "Pass strict=False to load_state_dict and report the keys instead of raising.",
    "Unexpected key": "Pass strict=False to load_state_dict and report the keys instead of raising.",
    "Weights only load failed": "The checkpoint holds only tensors; keep weights_only=True.",
}


def check_load_checkpoint_cpu(load_checkpoint_cpu) -> None:
    """GPU-labelled checkpoints with renamed, missing and extra keys; weights really loaded."""
    g = torch.Generator().manual_seed(11)
    folder = tempfile.mkdtemp(prefix="deploy-check-")
    cases = [
        ("a checkpoint whose head is called 'classifier'", 4, "classifier", None, None),
        ("a checkpoint that matches exactly", 1, "head", None, None),
        (
            "a checkpoint with an extra 'temperature' entry and no body.0.bias",
            3,
            "head",
            "temperature",
            "body.0.bias",
        ),
    ]
    for i, (what, d_in, head_name, extra, drop) in enumerate(cases):
        source = _Classifier(g, d_in, head_name)
        sd = source.state_dict()
        if extra:
            sd[extra] = torch.tensor([1.5])
        if drop:
            del sd[drop]
        path = os.path.join(folder, f"ckpt{i}.pt")
        _save_as_gpu(sd, path)
        model = _Classifier(torch.Generator().manual_seed(99 + i), d_in, "head")
        before = {k: v.clone() for k, v in model.state_dict().items()}
        model_keys = set(before)
        expected_missing = sorted(model_keys - set(sd))
        expected_unexpected = sorted(set(sd) - model_keys)
        call = f"load_checkpoint_cpu(path, model) for {what}"
        result = _call(call, load_checkpoint_cpu, path, model, hints=_LOAD_HINTS)
        check_type(result, (tuple, list), call)
        if len(result) != 2:
            raise CheckError(
                f"{call} should return (missing, unexpected), got {len(result)} items."
            )
        missing, unexpected = (sorted(str(k) for k in part) for part in result)
        if (missing, unexpected) == (
            expected_unexpected,
            expected_missing,
        ) and missing != unexpected:
            raise CheckError(
                f"{call} swapped the lists: missing keys are the model's keys the checkpoint "
                "lacks; unexpected keys are checkpoint keys the model does not have."
            )
        if missing != expected_missing:
            raise CheckError(
                f"{call} reported missing keys {missing}, expected {expected_missing}: the "
                "model's keys that the checkpoint does not provide."
            )
        if unexpected != expected_unexpected:
            raise CheckError(
                f"{call} reported unexpected keys {unexpected}, expected {expected_unexpected}: "
                "checkpoint keys the model has no place for."
            )
        after = model.state_dict()
        for key in model_keys & set(sd):
            if not torch.equal(after[key].cpu(), sd[key].cpu()):
                raise CheckError(
                    f"after {call}, model.state_dict()[{key!r}] does not hold the checkpoint's "
                    "values: call model.load_state_dict(state_dict, strict=False)."
                )
        for key in expected_missing:
            if not torch.equal(after[key], before[key]):
                raise CheckError(f"{call} changed {key!r}, which the checkpoint does not have.")
        if any(t.device.type != "cpu" for t in after.values()):
            raise CheckError(f"{call} moved the model off the CPU; load onto the CPU.")


# ---------------------------------------------------------------------------------------
# Exercise 3: safe_load
# ---------------------------------------------------------------------------------------


def check_safe_load(safe_load) -> None:
    """Plain and metadata checkpoints load onto the CPU; pickled modules and code are refused."""
    g = torch.Generator().manual_seed(3)
    folder = tempfile.mkdtemp(prefix="deploy-check-")
    hints = {
        "Weights only load failed": (
            "Catch pickle.UnpicklingError (what torch.load(weights_only=True) raises for a "
            "file that is not plain weights) and return None."
        ),
        "CUDA": "The file was saved on a GPU: pass map_location='cpu'.",
    }
    plain = OrderedDict(w=torch.randn(3, 2, generator=g), b=torch.randn(1, generator=g))
    meta = {"model": plain, "epoch": 7, "classes": ["cat", "dog"], "lr": 0.1}
    good = [("a plain state_dict", plain), ("a dict with epoch, class names and lr", meta)]
    for i, (what, obj) in enumerate(good):
        path = os.path.join(folder, f"good{i}.pt")
        _save_as_gpu(obj, path)
        call = f"safe_load on {what} saved from a GPU"
        out = _call(call, safe_load, path, hints=hints)
        if out is None:
            raise CheckError(
                f"{call} returned None, but the file holds only tensors and plain Python "
                "values. Did an error (a missing map_location='cpu'?) get swallowed by a broad "
                "except?"
            )
        check_type(out, dict, call)
        state = out["model"] if "model" in obj else out
        for key, value in plain.items():
            got = state[key]
            check_type(got, torch.Tensor, f"{call}: entry {key!r}")
            if got.device.type != "cpu":
                raise CheckError(f"{call} put {key!r} on {got.device}: pass map_location='cpu'.")
            assert_close(got, value, what=f"{call}: entry {key!r}")
        if "epoch" in obj and out.get("epoch") != 7:
            raise CheckError(
                f"{call} lost the metadata: expected epoch 7, got {out.get('epoch')!r}."
            )

    whole = os.path.join(folder, "whole_model.pt")
    torch.save(nn.Sequential(nn.Linear(2, 2)), whole)
    evil = os.path.join(folder, "evil.pt")
    torch.save({"weight": torch.zeros(2), "extra": _Payload()}, evil)
    bad = [("a pickled nn.Module (torch.save(model))", whole), ("a file that runs code", evil)]
    for what, path in bad:
        _PAYLOAD_RUNS.clear()
        call = f"safe_load on {what}"
        out = _call(call, safe_load, path, hints=hints)
        if _PAYLOAD_RUNS:
            raise CheckError(
                f"{call}: the code hidden in the file ran while loading. Only "
                "torch.load(..., weights_only=True) refuses to run it; never load an untrusted "
                "file with weights_only=False."
            )
        if out is not None:
            raise CheckError(
                f"{call} returned a {type(out).__name__}, expected None: weights_only=True "
                "refuses anything but tensors and plain containers, and safe_load should "
                "report that refusal as None."
            )


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


_EXPORT_HINTS = {
    "data-dependent": (
        "torch.export cannot follow a Python `if` on a tensor's value: write the branch with "
        "torch.cond(model.gate(x), model.pos, model.neg, (x,))."
    ),
}


def _as_callable(result):
    if isinstance(result, torch.export.ExportedProgram):
        return result.module()
    return result


def check_export_gated(export_gated) -> None:
    """Export from an example on one branch, then run inputs that take each branch."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    for dim, batch in ((8, 4), (3, 1)):
        torch.manual_seed(dim)
        model = GatedNet(dim).to(device)  # left in training mode on purpose
        reference = copy.deepcopy(model).eval()
        example = (torch.rand(batch, dim, generator=g) + 0.1).to(device)  # gate True
        call = f"export_gated(GatedNet({dim}), example of shape {(batch, dim)})"
        result = _call(call, export_gated, model, example, hints=_EXPORT_HINTS)
        run = _as_callable(result)
        if not callable(run):
            raise CheckError(
                f"{call} returned a {type(result).__name__}; return torch.export's program."
            )
        same = [example, (torch.rand(batch, dim, generator=g) + 0.5).to(device)]
        other = [-(torch.rand(batch, dim, generator=g) + 0.1).to(device)]
        for branch, inputs in (("the example's branch", same), ("the other branch", other)):
            for x in inputs:
                with torch.no_grad(), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    got = run(x)
                    want = reference(x)
                check_type(got, torch.Tensor, f"the exported model's output ({branch})")
                try:
                    assert_close(
                        got.detach(), want, what=f"output on {branch}", rtol=1e-4, atol=1e-5
                    )
                except CheckError as err:
                    if branch == "the example's branch":
                        hint = (
                            "Even the branch the example took differs from the model in eval "
                            "mode: Dropout was still active. Call model.eval() before exporting."
                        )
                    else:
                        hint = (
                            "The branch was frozen at export time: tracing (torch.jit.trace) "
                            "records only the path the example took. Export with torch.export "
                            "and torch.cond so both branches are in the graph."
                        )
                    raise CheckError(f"{call}: {err} {hint}") from None
        if not isinstance(result, torch.export.ExportedProgram):
            raise CheckError(
                f"{call} returned a {type(result).__name__}. TorchScript (torch.jit.script / "
                "trace) is the legacy path; return the ExportedProgram from "
                "torch.export.export."
            )


# ---------------------------------------------------------------------------------------
# Exercise 5: onnx_round_trip
# ---------------------------------------------------------------------------------------


def _onnx_model(g: torch.Generator, d_in: int) -> nn.Module:
    model = nn.Sequential(
        nn.Linear(d_in, 32),
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
    return model  # in training mode, as a model straight out of a training loop


def check_onnx_round_trip(onnx_round_trip) -> None:
    """ONNX Runtime's output against the model in eval mode; the tolerance arguments honoured."""
    device = get_device()
    g = torch.Generator().manual_seed(21)
    folder = tempfile.mkdtemp(prefix="deploy-check-")
    hints = {"onnxscript": "torch.onnx.export(..., dynamo=True) needs the onnxscript package."}
    for i, (batch, d_in, tol) in enumerate(((12, 6, None), (1, 3, 0.0))):
        model = _onnx_model(g, d_in).to(device)
        reference = copy.deepcopy(model).eval()
        x = torch.randn(batch, d_in, generator=g).to(device)
        with torch.no_grad():
            want = reference(x).cpu()
        path = os.path.join(folder, f"model{i}.onnx")
        if tol is None:
            call = f"onnx_round_trip(model, x of shape {(batch, d_in)}, path)"
            result = _call(call, onnx_round_trip, model, x, path, hints=hints)
        else:
            call = f"onnx_round_trip(model, x of shape {(batch, d_in)}, path, rtol=0, atol=0)"
            result = _call(call, onnx_round_trip, model, x, path, tol, tol, hints=hints)
        check_type(result, tuple, call)
        if len(result) != 2:
            raise CheckError(f"{call} should return (onnx_out, matches), got {len(result)} items.")
        onnx_out, matches = result
        check_type(onnx_out, torch.Tensor, f"onnx_out from {call}")
        if not os.path.exists(path):
            raise CheckError(f"{call} did not write the ONNX file to path.")
        assert_close(
            onnx_out.detach().cpu(),
            want,
            rtol=1e-4,
            atol=1e-4,
            what=f"onnx_out from {call} against the model in eval mode",
        )
        if not isinstance(matches, bool) and type(matches).__name__ != "bool_":
            raise CheckError(
                f"matches from {call} should be a bool, got {type(matches).__name__}. "
                "torch.allclose returns one; .item() turns a one-element tensor into a bool."
            )
        exact = torch.equal(onnx_out.detach().cpu(), want)
        if tol is None and not matches:
            raise CheckError(
                f"{call} said matches=False, but ONNX Runtime agrees with PyTorch to "
                f"{(onnx_out.detach().cpu() - want).abs().max().item():.2g}. Two runtimes "
                "never agree bit for bit: compare within rtol and atol (torch.allclose), on "
                "the model in eval mode."
            )
        if tol is not None and matches and not exact:
            raise CheckError(
                f"{call} said matches=True although the outputs are not identical: pass the "
                "rtol and atol arguments on to the comparison."
            )


# ---------------------------------------------------------------------------------------
# Exercise 6: quantize_report
# ---------------------------------------------------------------------------------------


def _serialized_nbytes(model: nn.Module) -> int:
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    return buffer.getbuffer().nbytes


def _reference_int8(model: nn.Module) -> nn.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_
        except ImportError:
            return torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
        quantize_(model, Int8DynamicActivationInt8WeightConfig())
        return model


def _accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


_QUANT_KEYS = ("size_fp32", "size_int8", "acc_fp32", "acc_int8")


def check_quantize_report(quantize_report) -> None:
    """Sizes from the serialised state_dict, accuracies in eval mode, the caller's model intact."""
    g = torch.Generator().manual_seed(13)
    for d_in, hidden, n in ((64, 256, 300), (48, 512, 1)):
        torch.manual_seed(d_in)
        model = nn.Sequential(
            nn.Linear(d_in, hidden), nn.ReLU(), nn.Dropout(0.5), nn.Linear(hidden, 10)
        )  # on the CPU, in training mode
        x = torch.randn(n, d_in, generator=g)
        with torch.no_grad():
            y = model.eval()(x).argmax(dim=1)
        flip = torch.rand(n, generator=g) < 0.2  # some labels the model gets wrong
        y = torch.where(flip, torch.randint(0, 10, (n,), generator=g), y)
        model.train()
        pristine = copy.deepcopy(model)
        call = f"quantize_report(model with Linear({d_in}, {hidden}), x of shape {(n, d_in)}, y)"
        report = _call(call, quantize_report, model, x, y)
        check_type(report, dict, call)
        missing = [k for k in _QUANT_KEYS if k not in report]
        if missing:
            raise CheckError(f"{call} lacks the keys {missing}; expected {list(_QUANT_KEYS)}.")
        for key in _QUANT_KEYS[:2]:
            check_type(report[key], int, f"report[{key!r}]")
        for key in _QUANT_KEYS[2:]:
            check_type(report[key], float, f"report[{key!r}]")
        state = model.state_dict()
        for key, value in pristine.state_dict().items():
            if (
                key not in state
                or type(state[key]) is not torch.Tensor
                or not torch.equal(state[key], value)
            ):
                raise CheckError(
                    f"{call} changed the caller's model ({key!r} is now "
                    f"{type(state.get(key)).__name__}). Quantise a copy: "
                    "quantize_int8(copy.deepcopy(model))."
                )
        ref_fp32 = _serialized_nbytes(pristine)
        if abs(report["size_fp32"] - ref_fp32) > 0.02 * ref_fp32:
            raise CheckError(
                f"report['size_fp32'] is {report['size_fp32']} bytes; torch.save of the "
                f"model's state_dict takes {ref_fp32}. Measure the serialised state_dict "
                "(torch.save into io.BytesIO)."
            )
        ratio = report["size_int8"] / ref_fp32
        if ratio > 0.9:
            raise CheckError(
                f"report['size_int8'] is {ratio:.0%} of the float32 size: nothing shrank. "
                "Quantised weights still report dtype float32, so numel() * element_size() "
                "lies; serialise the quantised model's state_dict and count the bytes."
            )
        if ratio > 0.4:
            raise CheckError(
                f"report['size_int8'] is {ratio:.0%} of the float32 size; int8 weights should "
                "take about a quarter. Half precision (model.half()) is not int8 quantisation."
            )
        if ratio < 0.15:
            raise CheckError(
                f"report['size_int8'] is only {ratio:.0%} of the float32 size: some weights "
                "were not counted (quantised layers may keep them outside .parameters()). "
                "Serialise the whole state_dict."
            )
        ref_acc = _accuracy(pristine.eval(), x, y)
        if abs(report["acc_fp32"] - ref_acc) > 1e-6:
            raise CheckError(
                f"report['acc_fp32'] is {report['acc_fp32']:.4f}, expected {ref_acc:.4f} (the "
                "model in eval mode). Call model.eval() first: Dropout changes the predictions "
                "in training mode."
            )
        ref_int8 = _accuracy(_reference_int8(copy.deepcopy(pristine).eval()), x, y)
        if abs(report["acc_int8"] - ref_int8) > 0.05 + 1.0 / n:
            raise CheckError(
                f"report['acc_int8'] is {report['acc_int8']:.4f}; the int8 copy in eval mode "
                f"scores about {ref_int8:.4f}. Evaluate the quantised copy, in eval mode, under "
                "torch.no_grad()."
            )


# ---------------------------------------------------------------------------------------
# Exercise 7: measure_latency_ms
# ---------------------------------------------------------------------------------------


class _FakeModel:
    """Sleeps a scripted number of milliseconds per call; remembers how it was called."""

    def __init__(self, durations_ms: list[float]):
        self.durations_ms = durations_ms
        self.calls = 0
        self.grad_enabled: list[bool] = []
        self.inputs: list[object] = []

    def __call__(self, x):
        ms = self.durations_ms[min(self.calls, len(self.durations_ms) - 1)]
        self.calls += 1
        self.grad_enabled.append(torch.is_grad_enabled())
        self.inputs.append(x)
        time.sleep(ms / 1000)
        return x


def check_measure_latency_ms(measure_latency_ms) -> None:
    """Warm-up calls untimed, the median of the timed calls, no autograd, every call counted."""
    x = torch.zeros(2, 3, device=get_device())
    cases = [
        # (warmup, runs, durations, expected median, what a wrong answer would see)
        (4, 3, [40] * 4 + [4] * 3, 4.0, "slow first calls"),
        (2, 9, [4, 4, 4, 4, 4, 4, 90, 4, 4, 4, 4], 4.0, "one 90 ms hiccup"),
        (1, 5, [4, 12, 2, 12, 12, 12], 12.0, "one unusually fast call"),
    ]
    for warmup, runs, durations, expected, situation in cases:
        fake = _FakeModel(durations)
        call = f"measure_latency_ms(fn, x, warmup={warmup}, runs={runs})"
        got = _call(call, measure_latency_ms, fake, x, warmup, runs)
        check_type(got, float, call)
        if fake.calls != warmup + runs:
            raise CheckError(
                f"{call} called fn {fake.calls} times, expected warmup + runs = "
                f"{warmup + runs}: first {warmup} untimed warm-up calls, then {runs} timed ones."
            )
        if any(inp is not x for inp in fake.inputs):
            raise CheckError(f"{call} did not pass x itself to fn.")
        if any(fake.grad_enabled):
            raise CheckError(
                f"{call} ran fn with autograd on. Inference records no graph: run the calls "
                "under torch.no_grad() (or torch.inference_mode())."
            )
        if not expected * 0.8 <= got <= expected + 8.0:
            if got * 1000 >= expected * 0.8 and got * 1000 <= expected + 8.0:
                hint = "That looks like seconds: perf_counter counts seconds, multiply by 1000."
            elif situation == "slow first calls":
                hint = "Did the warm-up calls (the slow ones here) get timed too? Time only the runs after warm-up."
            elif situation == "one 90 ms hiccup":
                hint = "A mean is dragged up by one hiccup; report the median."
            else:
                hint = (
                    "The minimum reports the luckiest call, not the typical one; report the median."
                )
            raise CheckError(
                f"{call} returned {got:.2f} ms with {situation}; the median of the timed calls "
                f"is about {expected:g} ms (in milliseconds). {hint}"
            )
