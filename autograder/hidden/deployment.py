"""Hidden checks for 07_deployment.

Every contact with the learner's answer goes through ``observe`` and a probe in
``autograder/probes/deployment.py``, which builds the inputs (files included) from the case
and returns what it saw as data. The references and expected values are here.
"""

from __future__ import annotations

import copy
import io
import statistics
import warnings
from collections import OrderedDict

import torch
from torch import nn

from autograder.boundary import AnswerRaised, observe
from autograder.probes import deployment as probes
from tutorial_lib.checks import CheckError, assert_close
from tutorial_lib.device import get_device


def _first_line(text: str) -> str:
    text = text.strip()
    return text.splitlines()[0][:300] if text else ""


def _observe(probe, student, case: dict, what: str, hints: dict[str, str] | None = None):
    """What ``probe`` saw; an error the answer raised becomes a CheckError with a hint."""
    try:
        return observe(probe, student, case, what)
    except AnswerRaised as err:
        hint = ""
        for needle, text in (hints or {}).items():
            if needle.lower() in err.message.lower():
                hint = " " + text
                break
        first = _first_line(err.message) or err.type_name
        raise CheckError(f"{what} raised {err.type_name}: {first}.{hint}") from None


def _qualname(kind: type) -> str:
    return f"{kind.__module__}.{kind.__qualname__}"


def _check_kind(kind: dict, expected: type | tuple[type, ...], what: str) -> None:
    """check_type for a value described by ``probes.describe`` (same messages and hints)."""
    types = expected if isinstance(expected, tuple) else (expected,)
    if any(_qualname(t) in kind["mro"] for t in types):
        return
    wanted = " or ".join(t.__name__ for t in types)
    got = kind["name"]
    hint = ""
    if kind["name"] == "NoneType":
        hint = " Did you forget a `return` (or, for a .grad, to call backward())?"
    elif expected is torch.Tensor and kind["module"] == "numpy":
        hint = " Convert with torch.from_numpy(...) or torch.as_tensor(...)."
    elif expected is torch.Tensor and got in ("int", "float", "list", "tuple"):
        hint = " Build a tensor with torch.tensor(...)."
    elif expected in (float, int) and _qualname(torch.Tensor) in kind["mro"]:
        hint = " Use .item() to turn a one-element tensor into a Python number."
    article = "an" if wanted[:1].lower() in "aeiou" else "a"
    raise CheckError(f"{what} should be {article} {wanted}, got {got}.{hint}")


def _plain_state(module: nn.Module) -> dict:
    """A state_dict as a plain dict (what may cross to a probe), order kept."""
    return dict(module.state_dict())


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
    cases = []  # (what, [key, tensor, handed over transposed])
    for width in (1, 3):
        inner = nn.Sequential(_Block(g, width), nn.Linear(width, 2))
        sd = nn.DataParallel(inner).state_dict()
        cases.append(("a DataParallel checkpoint", [[k, v, False] for k, v in sd.items()]))
    mixed = [
        ["module.encoder.weight", torch.randn(2, 3, generator=g), False],
        ["head.module.bias", torch.randn(3, generator=g), False],  # 'module.' inside: keep it
        ["modules.count", torch.tensor(4), False],  # starts with 'module' but not 'module.'
        ["module.submodule.weight", torch.randn(3, 3, generator=g), True],  # non-contiguous
    ]
    cases.append(("a state_dict with some prefixed keys", mixed))
    cases.append(("an empty state_dict", []))
    for what, entries in cases:
        keys_before = [key for key, _, _ in entries]
        call = f"strip_module_prefix({what})"
        seen = _observe(
            probes.probe_strip_module_prefix, strip_module_prefix, {"entries": entries}, call
        )
        _check_kind(seen["kind"], dict, call)
        expected = _reference_strip(OrderedDict((key, i) for i, key in enumerate(keys_before)))
        if seen["caller_keys_after"] != keys_before:
            raise CheckError(
                f"strip_module_prefix changed the caller's dict ({what}). Build and return a "
                "new dict instead of renaming keys in place."
            )
        out_keys = seen["keys"]
        if out_keys != list(expected):
            wrong = [
                (a, b)
                for a, b in zip(keys_before, out_keys, strict=False)
                if b != a.removeprefix("module.")
            ]
            example = f" For example {wrong[0][0]!r} became {wrong[0][1]!r}." if wrong else ""
            raise CheckError(
                f"strip_module_prefix({what}) returned keys {out_keys[:6]}, expected "
                f"{list(expected)[:6]} (same order).{example} Remove 'module.' only at the "
                "start of a key (str.removeprefix); str.replace also edits names like "
                "'submodule.' and str.lstrip removes characters, not a prefix."
            )
        for (key, source), value in zip(expected.items(), seen["values"], strict=True):
            _check_kind(value["kind"], torch.Tensor, f"the value for {key!r}")
            if source not in value["same_tensor_as"]:
                raise CheckError(
                    f"the value for {key!r} is not the original tensor: rename the keys, keep "
                    "the values as they are (no copies, no changes)."
                )


# ---------------------------------------------------------------------------------------
# Exercise 2: load_checkpoint_cpu
# ---------------------------------------------------------------------------------------


_LOAD_HINTS = {
    "CUDA": "The checkpoint was saved on a GPU: pass map_location='cpu' to torch.load.",
    "Missing key": "Pass strict=False to load_state_dict and report the keys instead of raising.",
    "Unexpected key": "Pass strict=False to load_state_dict and report the keys instead of raising.",
    "Weights only load failed": "The checkpoint holds only tensors; keep weights_only=True.",
}


def check_load_checkpoint_cpu(load_checkpoint_cpu) -> None:
    """GPU-labelled checkpoints with renamed, missing and extra keys; weights really loaded."""
    g = torch.Generator().manual_seed(11)
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
        sd = _plain_state(probes.Classifier(g, d_in, head_name))
        if extra:
            sd[extra] = torch.tensor([1.5])
        if drop:
            del sd[drop]
        case = {"state": sd, "d_in": d_in, "model_seed": 99 + i}
        before = _plain_state(probes.build_classifier(case))
        model_keys = set(before)
        expected_missing = sorted(model_keys - set(sd))
        expected_unexpected = sorted(set(sd) - model_keys)
        call = f"load_checkpoint_cpu(path, model) for {what}"
        seen = _observe(
            probes.probe_load_checkpoint_cpu, load_checkpoint_cpu, case, call, hints=_LOAD_HINTS
        )
        _check_kind(seen["kind"], (tuple, list), call)
        if seen["length"] != 2:
            raise CheckError(
                f"{call} should return (missing, unexpected), got {seen['length']} items."
            )
        for part in seen["parts"]:
            if part is None:
                raise CheckError(
                    f"{call} should return two lists of key names (missing, unexpected)."
                )
        missing, unexpected = (sorted(part) for part in seen["parts"])
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
        after = seen["after"]
        if set(after) != model_keys:
            raise CheckError(
                f"after {call}, the model's state_dict has the keys {sorted(after)}, expected "
                f"{sorted(model_keys)}: load into the model, do not change its layers."
            )
        for key in model_keys & set(sd):
            if not torch.equal(after[key].cpu(), sd[key].cpu()):
                raise CheckError(
                    f"after {call}, model.state_dict()[{key!r}] does not hold the checkpoint's "
                    "values: call model.load_state_dict(state_dict, strict=False)."
                )
        for key in expected_missing:
            if not torch.equal(after[key].cpu(), before[key]):
                raise CheckError(f"{call} changed {key!r}, which the checkpoint does not have.")
        if any(not device.startswith("cpu") for device in seen["devices"].values()):
            raise CheckError(f"{call} moved the model off the CPU; load onto the CPU.")


# ---------------------------------------------------------------------------------------
# Exercise 3: safe_load
# ---------------------------------------------------------------------------------------


def check_safe_load(safe_load) -> None:
    """Plain and metadata checkpoints load onto the CPU; pickled modules and code are refused."""
    g = torch.Generator().manual_seed(3)
    hints = {
        "Weights only load failed": (
            "Catch pickle.UnpicklingError (what torch.load(weights_only=True) raises for a "
            "file that is not plain weights) and return None."
        ),
        "CUDA": "The file was saved on a GPU: pass map_location='cpu'.",
    }
    plain = {"w": torch.randn(3, 2, generator=g), "b": torch.randn(1, generator=g)}
    meta = {"model": plain, "epoch": 7, "classes": ["cat", "dog"], "lr": 0.1}
    good = [("a plain state_dict", plain), ("a dict with epoch, class names and lr", meta)]
    for what, obj in good:
        call = f"safe_load on {what} saved from a GPU"
        seen = _observe(probes.probe_safe_load, safe_load, {"file": "gpu", "obj": obj}, call, hints)
        out = seen["out"]
        if seen["kind"]["name"] == "NoneType":
            raise CheckError(
                f"{call} returned None, but the file holds only tensors and plain Python "
                "values. Did an error (a missing map_location='cpu'?) get swallowed by a broad "
                "except?"
            )
        _check_kind(seen["kind"], dict, call)
        prefix = ""
        state = out
        if "model" in obj:
            state, prefix = out.get("model"), "model."
            if not isinstance(state, dict):
                raise CheckError(f"{call} lost the entry 'model' (the state_dict inside the file).")
        for key, value in plain.items():
            if key not in state:
                raise CheckError(f"{call}: entry {key!r} is missing from what it returned.")
            got = state[key]
            if not isinstance(got, torch.Tensor):
                raise CheckError(
                    f"{call}: entry {key!r} should be a Tensor, got {type(got).__name__}."
                )
            device = seen["devices"].get(prefix + key, "cpu")
            if not device.startswith("cpu"):
                raise CheckError(f"{call} put {key!r} on {device}: pass map_location='cpu'.")
            assert_close(got, value, what=f"{call}: entry {key!r}")
        if "epoch" in obj and out.get("epoch") != 7:
            raise CheckError(
                f"{call} lost the metadata: expected epoch 7, got {out.get('epoch')!r}."
            )

    bad = [
        ("a pickled nn.Module (torch.save(model))", "whole_model"),
        ("a file that runs code", "runs_code"),
    ]
    for what, file in bad:
        call = f"safe_load on {what}"
        seen = _observe(probes.probe_safe_load, safe_load, {"file": file}, call, hints)
        if seen["payload_ran"]:
            raise CheckError(
                f"{call}: the code hidden in the file ran while loading. Only "
                "torch.load(..., weights_only=True) refuses to run it; never load an untrusted "
                "file with weights_only=False."
            )
        if seen["kind"]["name"] != "NoneType":
            raise CheckError(
                f"{call} returned a {seen['kind']['name']}, expected None: weights_only=True "
                "refuses anything but tensors and plain containers, and safe_load should "
                "report that refusal as None."
            )


# ---------------------------------------------------------------------------------------
# Exercise 4: export_gated
# ---------------------------------------------------------------------------------------


_EXPORT_HINTS = {
    "data-dependent": (
        "torch.export cannot follow a Python `if` on a tensor's value: write the branch with "
        "torch.cond(model.gate(x), model.pos, model.neg, (x,))."
    ),
}


def check_export_gated(export_gated) -> None:
    """Export from an example on one branch, then run inputs that take each branch."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    for dim, batch in ((8, 4), (3, 1)):
        example = (torch.rand(batch, dim, generator=g) + 0.1).to(device)  # gate True
        same = [example, (torch.rand(batch, dim, generator=g) + 0.5).to(device)]
        other = [-(torch.rand(batch, dim, generator=g) + 0.1).to(device)]
        case = {"dim": dim, "device": device, "example": example, "inputs": same + other}
        reference = probes.build_gated(case).eval()
        call = f"export_gated(GatedNet({dim}), example of shape {(batch, dim)})"
        seen = _observe(probes.probe_export_gated, export_gated, case, call, hints=_EXPORT_HINTS)
        if seen["module_error"] is not None:
            raise CheckError(
                f"{call} returned an ExportedProgram whose .module() raised {seen['module_error']}."
            )
        if not seen["callable"]:
            raise CheckError(
                f"{call} returned a {seen['kind']['name']}; return torch.export's program."
            )
        outputs = iter(seen["outputs"])
        for branch, inputs in (("the example's branch", same), ("the other branch", other)):
            for x in inputs:
                out = next(outputs)
                if out["error"] is not None:
                    raise CheckError(
                        f"the program from {call} raised {out['error']} on an input that takes "
                        f"{branch}."
                    )
                got = out["value"]
                with torch.no_grad():
                    want = reference(x)
                _check_kind(out["kind"], torch.Tensor, f"the exported model's output ({branch})")
                try:
                    assert_close(got, want, what=f"output on {branch}", rtol=1e-4, atol=1e-5)
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
        if not seen["is_exported_program"]:
            raise CheckError(
                f"{call} returned a {seen['kind']['name']}. TorchScript (torch.jit.script / "
                "trace) is the legacy path; return the ExportedProgram from "
                "torch.export.export."
            )


# ---------------------------------------------------------------------------------------
# Exercise 5: onnx_round_trip
# ---------------------------------------------------------------------------------------


def check_onnx_round_trip(onnx_round_trip) -> None:
    """ONNX Runtime's output against the model in eval mode; the tolerance arguments honoured."""
    device = get_device()
    g = torch.Generator().manual_seed(21)
    hints = {"onnxscript": "torch.onnx.export(..., dynamo=True) needs the onnxscript package."}
    for i, (batch, d_in, tol) in enumerate(((12, 6, None), (1, 3, 0.0))):
        x = torch.randn(batch, d_in, generator=g).to(device)
        case = {"seed": 21 + i, "d_in": d_in, "device": device, "x": x, "tol": tol}
        reference = probes.build_onnx_model(case).eval()
        with torch.no_grad():
            want = reference(x).cpu()
        if tol is None:
            call = f"onnx_round_trip(model, x of shape {(batch, d_in)}, path)"
        else:
            call = f"onnx_round_trip(model, x of shape {(batch, d_in)}, path, rtol=0, atol=0)"
        seen = _observe(probes.probe_onnx_round_trip, onnx_round_trip, case, call, hints=hints)
        _check_kind(seen["kind"], tuple, call)
        if seen["length"] != 2:
            raise CheckError(
                f"{call} should return (onnx_out, matches), got {seen['length']} items."
            )
        _check_kind(seen["out_kind"], torch.Tensor, f"onnx_out from {call}")
        if not seen["file_written"]:
            raise CheckError(f"{call} did not write the ONNX file to path.")
        onnx_out = seen["out"]
        assert_close(
            onnx_out,
            want,
            rtol=1e-4,
            atol=1e-4,
            what=f"onnx_out from {call} against the model in eval mode",
        )
        matches = seen["matches"]
        if matches is None:
            raise CheckError(
                f"matches from {call} should be a bool, got {seen['matches_kind']['name']}. "
                "torch.allclose returns one; .item() turns a one-element tensor into a bool."
            )
        exact = torch.equal(onnx_out, want)
        if tol is None and not matches:
            raise CheckError(
                f"{call} said matches=False, but ONNX Runtime agrees with PyTorch to "
                f"{(onnx_out - want).abs().max().item():.2g}. Two runtimes "
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
        case = {"d_in": d_in, "hidden": hidden}
        pristine = probes.build_quant_model(case)  # on the CPU, in training mode
        x = torch.randn(n, d_in, generator=g)
        with torch.no_grad():
            y = pristine.eval()(x).argmax(dim=1)
        flip = torch.rand(n, generator=g) < 0.2  # some labels the model gets wrong
        y = torch.where(flip, torch.randint(0, 10, (n,), generator=g), y)
        case.update(x=x, y=y)
        call = f"quantize_report(model with Linear({d_in}, {hidden}), x of shape {(n, d_in)}, y)"
        seen = _observe(probes.probe_quantize_report, quantize_report, case, call)
        _check_kind(seen["kind"], dict, call)
        missing = [k for k in _QUANT_KEYS if k not in seen["keys"]]
        if missing:
            raise CheckError(f"{call} lacks the keys {missing}; expected {list(_QUANT_KEYS)}.")
        for key in _QUANT_KEYS[:2]:
            _check_kind(seen["kinds"][key], int, f"report[{key!r}]")
        for key in _QUANT_KEYS[2:]:
            _check_kind(seen["kinds"][key], float, f"report[{key!r}]")
        report = seen["values"]
        state = seen["state_after"]
        for key, value in pristine.state_dict().items():
            entry = state.get(key)
            if entry is None or entry["tensor"] is None or not torch.equal(entry["tensor"], value):
                now = entry["type"] if entry is not None else "NoneType"
                raise CheckError(
                    f"{call} changed the caller's model ({key!r} is now {now}). Quantise a "
                    "copy: quantize_int8(copy.deepcopy(model))."
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


def check_measure_latency_ms(measure_latency_ms) -> None:
    """Warm-up calls untimed, the median of the timed calls, no autograd, every call counted.

    The fake model sleeps a scripted time per call and reports how long each call really
    took; the expected answer is the median of those real durations over the timed calls.
    """
    device = get_device()
    cases = [
        # (warmup, runs, scripted durations in ms, what a wrong answer would see)
        (4, 3, [40] * 4 + [4] * 3, "slow first calls"),
        (2, 9, [4, 4, 4, 4, 4, 4, 90, 4, 4, 4, 4], "one 90 ms hiccup"),
        (1, 5, [4, 12, 2, 12, 12, 12], "one unusually fast call"),
    ]
    for warmup, runs, durations, situation in cases:
        call = f"measure_latency_ms(fn, x, warmup={warmup}, runs={runs})"
        case = {"device": device, "durations_ms": durations, "warmup": warmup, "runs": runs}
        seen = _observe(probes.probe_measure_latency_ms, measure_latency_ms, case, call)
        _check_kind(seen["kind"], float, call)
        if seen["calls"] != warmup + runs:
            raise CheckError(
                f"{call} called fn {seen['calls']} times, expected warmup + runs = "
                f"{warmup + runs}: first {warmup} untimed warm-up calls, then {runs} timed ones."
            )
        if not seen["same_input"]:
            raise CheckError(f"{call} did not pass x itself to fn.")
        if any(seen["grad_enabled"]):
            raise CheckError(
                f"{call} ran fn with autograd on. Inference records no graph: run the calls "
                "under torch.no_grad() (or torch.inference_mode())."
            )
        expected = statistics.median(seen["slept_ms"][warmup : warmup + runs])
        got = seen["value"]
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
                f"is about {expected:.1f} ms (in milliseconds). {hint}"
            )
