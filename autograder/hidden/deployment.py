"""Hidden checks for 08_deployment.

Every contact with the learner's answer goes through ``observe`` and a probe in
``autograder/probes/deployment.py``, which builds the inputs (files included) from the case
and returns what it saw as data. The references and expected values are here.
"""

from __future__ import annotations

import copy
import io
import re
import statistics
import warnings
from collections import OrderedDict

import torch
from torch import nn

from autograder.boundary import AnswerRaised, observe
from autograder.probes import deployment as probes
from tutorial_lib.checks import CheckError, assert_close
from tutorial_lib.device import get_device
from tutorial_lib.i18n import N_, _

_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the colours some torch errors carry


def _first_line(text: str) -> str:
    text = _ANSI.sub("", text).strip()
    return text.splitlines()[0][:300] if text else ""


def _observe(probe, student, case: dict, what: str, hints: dict[str, str] | None = None):
    """What ``probe`` saw; an error the answer raised becomes a CheckError with a hint."""
    try:
        return observe(probe, student, case, what)
    except AnswerRaised as err:
        hint = ""
        for needle, text in (hints or {}).items():
            if needle.lower() in err.message.lower():
                hint = " " + _(text)  # the hint tables hold English: translated here, when asked
                break
        first = _first_line(err.message) or err.type_name
        raise CheckError(
            _("{what} raised {type_name}: {first}.{hint}").format(
                what=what, type_name=err.type_name, first=first, hint=hint
            )
        ) from None


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
        hint = _(" Did you forget a `return` (or, for a .grad, to call backward())?")
    elif expected is torch.Tensor and kind["module"] == "numpy":
        hint = _(" Convert with torch.from_numpy(...) or torch.as_tensor(...).")
    elif expected is torch.Tensor and got in ("int", "float", "list", "tuple"):
        hint = _(" Build a tensor with torch.tensor(...).")
    elif expected in (float, int) and _qualname(torch.Tensor) in kind["mro"]:
        hint = _(" Use .item() to turn a one-element tensor into a Python number.")
    article = "an" if wanted[:1].lower() in "aeiou" else "a"
    raise CheckError(
        _("{what} should be {article} {wanted}, got {got}.{hint}").format(
            what=what, article=article, wanted=wanted, got=got, hint=hint
        )
    )


def _plain_state(module: nn.Module) -> dict:
    """A state_dict as a plain dict (what may cross to a probe), order kept."""
    return dict(module.state_dict())


def _modes_changed(seen: dict) -> str:
    """'' when every module kept its mode; else what changed, in words."""
    before = {name: training for name, training in seen["modes_before"]}
    after = {name: training for name, training in seen["modes_after"]}
    root_before, root_after = before.get(""), after.get("")

    def word(training) -> str:
        return _("training mode") if training else _("eval mode")

    if root_before != root_after:
        return _("it was in {before} and came back in {after}").format(
            before=word(root_before), after=word(root_after)
        )
    changed = [name for name in before if after.get(name) != before[name]]
    if changed:
        return _("submodule {name!r} came back in {mode}").format(
            name=changed[0], mode=word(after.get(changed[0]))
        )
    return ""


# ---------------------------------------------------------------------------------------
# Exercise 3: strip_module_prefix
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


def _strip_hint(before: str, after: str) -> str:
    """What a wrong renaming of one key says about the code that did it."""
    if before.startswith("module.module.") and after == before.removeprefix("module.module."):
        return _(
            "Both 'module.' prefixes went: remove only the first one (str.removeprefix "
            "once, not in a loop); the second belongs to the model that was wrapped."
        )
    if after == before.replace("module.", ""):
        return _("str.replace removes 'module.' wherever it appears, not only at the start.")
    if after == before.lstrip("module."):
        return _("str.lstrip removes any of the characters m, o, d, u, l, e and '.', not a word.")
    if not before.startswith("module."):
        return _(
            "This key does not start with 'module.' (it starts with {start!r}), so it "
            "stays as it is. Test key.startswith('module.') (a regular expression needs "
            "r'^module\\.': an unescaped '.' matches any character)."
        ).format(start=before.split(".")[0])
    if after == before:
        return _("This key starts with 'module.' and should lose it.")
    return _("Remove exactly the 7 characters 'module.' at the start (str.removeprefix).")


def check_strip_module_prefix(strip_module_prefix) -> None:
    """DistributedDataParallel-style keys, keys with 'module' inside, mixed, doubly wrapped and empty."""
    g = torch.Generator().manual_seed(7)
    cases = []  # (what, [key, tensor, handed over transposed])
    for width in (1, 3):
        inner = nn.Sequential(_Block(g, width), nn.Linear(width, 2))
        sd = {f"module.{k}": v for k, v in inner.state_dict().items()}  # what DDP's wrapper saves
        cases.append(
            ("a DistributedDataParallel checkpoint", [[k, v, False] for k, v in sd.items()])
        )
    mixed = [
        ["module.encoder.weight", torch.randn(2, 3, generator=g), False],
        ["head.module.bias", torch.randn(3, generator=g), False],  # 'module.' inside: keep it
        ["modules.count", torch.tensor(4), False],  # starts with 'module' but not 'module.'
        ["module_norm.weight", torch.randn(3, generator=g), False],  # 'module' then '_'
        ["module.submodule.weight", torch.randn(3, 3, generator=g), True],  # non-contiguous
        ["_orig_mod.module.fc.weight", torch.randn(2, generator=g), False],  # not at the start
        ["module.module.head.weight", torch.randn(2, 2, generator=g), False],  # wrapped twice
    ]
    cases.append(("a state_dict with some prefixed keys", mixed))
    plain = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).state_dict()
    cases.append(("a checkpoint without the prefix", [[k, v, False] for k, v in plain.items()]))
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
                _(
                    "strip_module_prefix changed the caller's dict ({what}): its keys are now "
                    "{keys}. Build and return a new dict instead of renaming keys in place (the "
                    "caller may still need the original)."
                ).format(what=what, keys=seen["caller_keys_after"][:4])
            )
        if seen["same_object"]:
            raise CheckError(
                _(
                    "strip_module_prefix({what}) returned the caller's dict itself. Return a new "
                    "dict even when no key needs renaming: whoever edits the result would "
                    "otherwise edit the caller's checkpoint too."
                ).format(what=what)
            )
        out_keys = seen["keys"]
        if out_keys != list(expected):
            if sorted(out_keys) == sorted(expected):
                raise CheckError(
                    _(
                        "strip_module_prefix({what}) returned the right keys in another order: "
                        "{keys}, expected {expected}. Build the new dict in the input's order "
                        "(renaming in place moves each renamed key to the end)."
                    ).format(what=what, keys=out_keys[:6], expected=list(expected)[:6])
                )
            wrong = [
                (a, b)
                for a, b in zip(keys_before, out_keys, strict=False)
                if b != a.removeprefix("module.")
            ]
            if wrong:
                before, after = wrong[0]
                raise CheckError(
                    _(
                        "strip_module_prefix({what}) turned the key {before!r} into {after!r}, "
                        "expected {removeprefix!r}. {strip_hint}"
                    ).format(
                        what=what,
                        before=before,
                        after=after,
                        removeprefix=before.removeprefix("module."),
                        strip_hint=_strip_hint(before, after),
                    )
                )
            raise CheckError(
                _(
                    "strip_module_prefix({what}) returned {n_out_keys} keys, expected "
                    "{n_expected}: {expected}. Keep every entry, renamed or not."
                ).format(
                    what=what,
                    n_out_keys=len(out_keys),
                    n_expected=len(expected),
                    expected=list(expected)[:6],
                )
            )
        for (key, source), value in zip(expected.items(), seen["values"], strict=True):
            _check_kind(value["kind"], torch.Tensor, f"the value for {key!r}")
            if source not in value["same_tensor_as"]:
                raise CheckError(
                    _(
                        "the value for {key!r} is not the original tensor (a copy, or a contiguous() "
                        "or clone() of it): rename the keys, keep the values as they are."
                    ).format(key=key)
                )


# ---------------------------------------------------------------------------------------
# Exercise 2: load_checkpoint_cpu
# ---------------------------------------------------------------------------------------


_LOAD_HINTS = {
    "CUDA": N_("The checkpoint was saved on a GPU: pass map_location='cpu' to torch.load."),
    "Missing key": N_(
        "Pass strict=False to load_state_dict and report the keys instead of raising."
    ),
    "Unexpected key": N_(
        "Pass strict=False to load_state_dict and report the keys instead of raising."
    ),
    "Weights only load failed": N_("The checkpoint holds only tensors; keep weights_only=True."),
}


def _key_hint(wrong: list[str], extras: bool) -> str:
    """Why a list of key names may be off, from what kind of names are in the difference."""
    if "scale" in wrong and extras:
        return _(
            " 'scale' is a non-persistent buffer: it is not in model.state_dict(), so no "
            "checkpoint can miss it. Compare with model.state_dict()'s keys (what "
            "load_state_dict compares), or return what load_state_dict(strict=False) "
            "reports."
        )
    if any(k.endswith(("running_mean", "running_var", "num_batches_tracked")) for k in wrong):
        return _(
            " Those are BatchNorm buffers: a state_dict holds buffers next to "
            "parameters, so named_parameters() alone does not list every key. Compare "
            "with model.state_dict()'s keys, or return what "
            "load_state_dict(strict=False) reports."
        )
    return ""


def check_load_checkpoint_cpu(load_checkpoint_cpu) -> None:
    """GPU-labelled checkpoints with renamed, missing and extra keys; weights really loaded;
    buffers, a root parameter and a non-persistent buffer; the model's mode kept; no code run."""
    g = torch.Generator().manual_seed(11)
    cases = [
        # (what, d_in, checkpoint's head name, extra key, dropped key, extras, model in train)
        (
            "a checkpoint whose head is called 'classifier'",
            4,
            "classifier",
            None,
            None,
            False,
            True,
        ),
        ("a checkpoint that matches exactly", 1, "head", None, None, False, True),
        (
            "a checkpoint with an extra 'temperature' entry and no body.0.bias",
            3,
            "head",
            "temperature",
            "body.0.bias",
            False,
            True,
        ),
        (
            "a checkpoint of a model with a cls_token, a nested encoder and a non-persistent "
            "buffer, without encoder.block.0.bias, into a model in eval mode",
            2,
            "classifier",
            None,
            "encoder.block.0.bias",
            True,
            False,
        ),
    ]
    for i, (what, d_in, head_name, extra, drop, extras, train) in enumerate(cases):
        sd = _plain_state(probes.Classifier(g, d_in, head_name, extras))
        if extra:
            sd[extra] = torch.tensor([1.5])
        if drop:
            del sd[drop]
        case = {"state": sd, "d_in": d_in, "model_seed": 99 + i, "extras": extras, "train": train}
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
                _("{call} should return (missing, unexpected), got {length} items.").format(
                    call=call, length=seen["length"]
                )
            )
        for part in seen["parts"]:
            if part is None:
                raise CheckError(
                    _("{call} should return two lists of key names (missing, unexpected).").format(
                        call=call
                    )
                )
        missing, unexpected = (sorted(part) for part in seen["parts"])
        if (missing, unexpected) == (
            expected_unexpected,
            expected_missing,
        ) and missing != unexpected:
            raise CheckError(
                _(
                    "{call} swapped the lists: missing keys are the model's keys the checkpoint "
                    "lacks; unexpected keys are checkpoint keys the model does not have."
                ).format(call=call)
            )
        if missing != expected_missing:
            wrong = sorted(set(missing) ^ set(expected_missing))
            raise CheckError(
                _(
                    "{call} reported missing keys {missing}, expected {expected_missing}: the "
                    "model's keys that the checkpoint does not provide.{key_hint}"
                ).format(
                    call=call,
                    missing=missing,
                    expected_missing=expected_missing,
                    key_hint=_key_hint(wrong, extras),
                )
            )
        if unexpected != expected_unexpected:
            wrong = sorted(set(unexpected) ^ set(expected_unexpected))
            raise CheckError(
                _(
                    "{call} reported unexpected keys {unexpected}, expected "
                    "{expected_unexpected}: checkpoint keys the model has no place for.{key_hint}"
                ).format(
                    call=call,
                    unexpected=unexpected,
                    expected_unexpected=expected_unexpected,
                    key_hint=_key_hint(wrong, extras),
                )
            )
        after = seen["after"]
        if set(after) != model_keys:
            raise CheckError(
                _(
                    "after {call}, the model's state_dict has the keys {after}, expected "
                    "{model_keys}: load into the model, do not change its layers."
                ).format(call=call, after=sorted(after), model_keys=sorted(model_keys))
            )
        for key in model_keys & set(sd):
            if not torch.equal(after[key].cpu(), sd[key].cpu()):
                raise CheckError(
                    _(
                        "after {call}, model.state_dict()[{key!r}] does not hold the checkpoint's "
                        "values: call model.load_state_dict(state_dict, strict=False)."
                    ).format(call=call, key=key)
                )
        for key in expected_missing:
            if not torch.equal(after[key].cpu(), before[key]):
                raise CheckError(
                    _("{call} changed {key!r}, which the checkpoint does not have.").format(
                        call=call, key=key
                    )
                )
        if any(not device.startswith("cpu") for device in seen["devices"].values()):
            raise CheckError(
                _("{call} moved the model off the CPU; load onto the CPU.").format(call=call)
            )
        changed = _modes_changed(seen)
        if changed:
            raise CheckError(
                _(
                    "{call} changed the model's mode: {changed}. Loading weights does not call "
                    "model.eval() or model.train(); leave the mode to the caller."
                ).format(call=call, changed=changed)
            )

    sd = _plain_state(probes.Classifier(g, 2, "head"))
    case = {"state": sd, "d_in": 2, "model_seed": 7, "payload": True}
    call = "load_checkpoint_cpu(path, model) for a checkpoint that also holds code to run"
    seen = _observe(probes.probe_load_checkpoint_cpu, load_checkpoint_cpu, case, call)
    if seen["payload_ran"]:
        raise CheckError(
            _(
                "{call}: the code in the file ran while loading. Load with torch.load(path, "
                "map_location='cpu', weights_only=True), which refuses anything but tensors "
                "and plain containers."
            ).format(call=call)
        )


# ---------------------------------------------------------------------------------------
# Exercise 1: safe_load
# ---------------------------------------------------------------------------------------


_SAFE_HINTS = {
    "Weights only load failed": (
        "Catch pickle.UnpicklingError (what torch.load(weights_only=True) raises for a "
        "file that is not plain weights) and return None."
    ),
    "CUDA": "The file was saved on a GPU: pass map_location='cpu'.",
}


def _check_loaded(seen: dict, obj, call: str) -> None:
    """What safe_load returned for a file holding ``obj``: the same values, on the CPU."""
    if seen["kind"]["name"] == "NoneType":
        raise CheckError(
            _(
                "{call} returned None, but the file holds only tensors and plain Python "
                "values. Did an error (a missing map_location='cpu'?) get swallowed by a "
                "broad except, or does your code accept only dicts?"
            ).format(call=call)
        )
    out = seen["out"]
    if isinstance(obj, torch.Tensor):
        _check_kind(seen["kind"], torch.Tensor, call)
        device = seen["devices"].get("", "cpu")
        if not device.startswith("cpu"):
            raise CheckError(
                _("{call} returned a tensor on {device}: pass map_location='cpu'.").format(
                    call=call, device=device
                )
            )
        assert_close(out, obj, what=f"{call}: the tensor")
        return
    _check_kind(seen["kind"], dict, call)
    state, prefix = out, ""
    if "model" in obj:
        state, prefix = out.get("model"), "model."
        if not isinstance(state, dict):
            raise CheckError(
                _("{call} lost the entry 'model' (the state_dict inside the file).").format(
                    call=call
                )
            )
    plain = obj.get("model", obj)
    for key, value in plain.items():
        if key not in state:
            raise CheckError(
                _("{call}: entry {key!r} is missing from what it returned.").format(
                    call=call, key=key
                )
            )
        got = state[key]
        if not isinstance(got, torch.Tensor):
            raise CheckError(
                _("{call}: entry {key!r} should be a Tensor, got {type_name}.").format(
                    call=call, key=key, type_name=type(got).__name__
                )
            )
        device = seen["devices"].get(prefix + key, "cpu")
        if not device.startswith("cpu"):
            raise CheckError(
                _("{call} put {key!r} on {device}: pass map_location='cpu'.").format(
                    call=call, key=key, device=device
                )
            )
        if got.dtype != value.dtype:
            raise CheckError(
                _(
                    "{call}: entry {key!r} came back as {got}, but the file holds {saved}. "
                    "Return the tensors as torch.load gives them: no .float(), no conversion "
                    "(float64 precision and int64 counters would be lost)."
                ).format(call=call, key=key, got=got.dtype, saved=value.dtype)
            )
        assert_close(got, value, what=f"{call}: entry {key!r}")
    for key, value in obj.items():
        if key != "model" and not isinstance(value, torch.Tensor) and out.get(key) != value:
            raise CheckError(
                _(
                    "{call} lost the metadata: expected {key} {value!r}, got {got!r}. Return "
                    "everything the file holds."
                ).format(call=call, key=key, value=value, got=out.get(key))
            )


def check_safe_load(safe_load) -> None:
    """Plain checkpoints load onto the CPU; pickled modules and code are refused (None); a
    damaged or missing file is an error, not a refusal; a file that changes between two reads
    runs nothing; torch's list of allowed classes is left alone."""
    g = torch.Generator().manual_seed(3)
    plain = {
        "w": torch.randn(3, 2, generator=g),
        "b": torch.randn(1, generator=g),
        "steps": torch.tensor([5, 7]),  # int64 stays int64
        "scale": torch.randn(2, generator=g, dtype=torch.float64),  # float64 stays float64
    }
    meta = {"model": plain, "epoch": 7, "classes": ["cat", "dog"], "lr": 0.1}
    good = [
        ("a plain state_dict", plain),
        ("a dict with epoch, class names and lr", meta),
        ("a single tensor", torch.randn(4, generator=g)),
    ]
    for what, obj in good:
        call = f"safe_load on {what} saved from a GPU"
        seen = _observe(
            probes.probe_safe_load, safe_load, {"file": "gpu", "obj": obj}, call, _SAFE_HINTS
        )
        _check_loaded(seen, obj, call)
        if seen["safe_globals_changed"]:
            raise CheckError(
                _(
                    "{call} changed torch's list of allowed classes "
                    "(torch.serialization.add_safe_globals): every later torch.load in the "
                    "program would trust them too. Load with weights_only=True and nothing else."
                ).format(call=call)
            )

    bad = [
        ("a pickled nn.Module (torch.save(model))", "whole_model"),
        ("a file that runs code", "runs_code"),
    ]
    for what, file in bad:
        call = f"safe_load on {what}"
        seen = _observe(probes.probe_safe_load, safe_load, {"file": file}, call, _SAFE_HINTS)
        if seen["payload_ran"]:
            raise CheckError(
                _(
                    "{call}: the code hidden in the file ran while loading. Only torch.load(..., "
                    "weights_only=True) refuses to run it; never load an untrusted file with "
                    "weights_only=False, not even to look at it after a refusal."
                ).format(call=call)
            )
        if seen["kind"]["name"] != "NoneType":
            raise CheckError(
                _(
                    "{call} returned a {name}, expected None: weights_only=True refuses anything "
                    "but tensors and plain containers, and safe_load should report that refusal "
                    "as None (without allowing extra classes)."
                ).format(call=call, name=seen["kind"]["name"])
            )

    broken = [
        ("a truncated checkpoint (half its bytes)", "truncated"),
        ("a path where there is no file", "missing"),
    ]
    for what, file in broken:
        call = f"safe_load on {what}"
        case = {"file": file, "obj": plain, "catch": True}
        seen = _observe(probes.probe_safe_load, safe_load, case, call)
        if seen["error"] is None:
            got = (
                "None"
                if seen["kind"]["name"] == "NoneType"
                else _("a {type_name}").format(type_name=seen["kind"]["name"])
            )
            raise CheckError(
                _(
                    "{call} returned {got}; it should raise. None means 'the file is unsafe', "
                    "and a damaged or missing file is not that: catch only "
                    "pickle.UnpicklingError (the refusal) and let other errors (RuntimeError, "
                    "OSError) reach the caller."
                ).format(call=call, got=got)
            )

    call = "safe_load on a file that is replaced by one that runs code after its first read"
    case = {"file": "changes", "obj": plain, "catch": True}
    seen = _observe(probes.probe_safe_load, safe_load, case, call)
    if seen["payload_ran"]:
        raise CheckError(
            _(
                "{call}: the code in the new file ran. Your safe_load reads the file twice "
                "(a check, then a second load without weights_only=True) and the file "
                "changed in between. Load once, with weights_only=True, and return what that "
                "load gave."
            ).format(call=call)
        )
    if seen["reads"] > 1:
        raise CheckError(
            _(
                "{call}: your safe_load read the file {reads} times (torch.load, or "
                "get_unsafe_globals_in_checkpoint, then torch.load). The text asks for one "
                "load: between a check and a second read the file can change, and here it did, "
                "so what you checked is not what you returned (or an unsafe file came back "
                "as an error instead of None). Call torch.load(path, map_location='cpu', "
                "weights_only=True) once and return what it gave."
            ).format(call=call, reads=seen["reads"])
        )


# ---------------------------------------------------------------------------------------
# Exercise 4: export_gated
# ---------------------------------------------------------------------------------------


_DATA_DEPENDENT = ("data-dependent", "GuardOnDataDependent", "Dynamic control flow")


def _data_dependent_message(call: str, err: AnswerRaised) -> str:
    return _(
        "{call} failed inside torch.export with {type_name} ('{first_line}'). That is "
        "data-dependent control flow: GatedNet.forward has a Python `if` on a "
        "tensor's value (x.mean() > 0), and export traces x as a symbol with no "
        "value, so it cannot pick a branch that holds for every input. Keep both "
        "branches in the graph: export a wrapper whose forward returns "
        "torch.cond(model.gate(x), model.pos, model.neg, (x,))."
    ).format(call=call, type_name=err.type_name, first_line=_first_line(err.message)[:90])


def _gated_inputs(g: torch.Generator, batch: int, dim: int) -> tuple[list, list]:
    """Inputs that take the example's branch (batch mean > 0) and the other one.

    Besides uniform signs, each branch gets a batch whose mean has the other sign from most
    of its entries, its first entry and, for a batch of several rows, some rows' means: a
    gate computed from anything but the whole batch's mean picks the wrong branch there.
    """
    same = [torch.rand(batch, dim, generator=g) + 0.5]
    other = [-(torch.rand(batch, dim, generator=g) + 0.1)]
    for sign, bucket in ((1.0, same), (-1.0, other)):
        x = torch.full((batch, dim), -0.2 * sign)
        if batch == 1:
            x[0, -1] = sign * 0.4 * dim  # one large entry decides the mean
        else:
            x[1, 3 % dim] = sign * 0.4 * dim * batch / 2
            x[2 % batch, (5 % dim)] = sign * 0.4 * dim * batch / 2
        bucket.append(x)
    return same, other


def check_export_gated(export_gated) -> None:
    """Export from an example on one branch, then run inputs that take each branch (mixed
    signs included); the model comes back in the mode it had (training or eval)."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    for dim, batch, train in ((8, 4, True), (3, 1, False)):
        example = (torch.rand(batch, dim, generator=g) + 0.1).to(device)  # gate True
        same, other = _gated_inputs(g, batch, dim)
        same = [example] + [x.to(device) for x in same]
        other = [x.to(device) for x in other]
        case = {
            "dim": dim,
            "device": device,
            "example": example,
            "inputs": same + other,
            "train": train,
        }
        reference = probes.build_gated(case).eval()
        mode = "training" if train else "eval"
        call = f"export_gated(GatedNet({dim}) in {mode} mode, example of shape {(batch, dim)})"
        try:
            seen = observe(probes.probe_export_gated, export_gated, case, call)
        except AnswerRaised as err:
            if any(
                key.lower() in err.message.lower() or key in err.type_name
                for key in _DATA_DEPENDENT
            ):
                raise CheckError(_data_dependent_message(call, err)) from None
            raise CheckError(
                _(
                    "{call} raised {type_name}: {first_line}. Export a wrapper nn.Module whose "
                    "forward returns torch.cond(model.gate(x), model.pos, model.neg, (x,)), with "
                    "the model in eval mode."
                ).format(call=call, type_name=err.type_name, first_line=_first_line(err.message))
            ) from None
        if seen["module_error"] is not None:
            raise CheckError(
                _(
                    "{call} returned an ExportedProgram whose .module() raised {module_error}."
                ).format(call=call, module_error=seen["module_error"])
            )
        if not seen["callable"]:
            raise CheckError(
                _("{call} returned a {name}; return torch.export's program.").format(
                    call=call, name=seen["kind"]["name"]
                )
            )
        outputs = iter(seen["outputs"])
        branches = ((_("the example's branch"), same, True), (_("the other branch"), other, False))
        for branch, inputs, the_examples in branches:
            for index, x in enumerate(inputs):
                out = next(outputs)
                mixed = index == len(inputs) - 1
                if out["error"] is not None:
                    raise CheckError(
                        _(
                            "the program from {call} raised {error} on an input that takes {branch}."
                        ).format(call=call, error=out["error"], branch=branch)
                    )
                got = out["value"]
                with torch.no_grad():
                    want = reference(x)
                _check_kind(out["kind"], torch.Tensor, f"the exported model's output ({branch})")
                try:
                    assert_close(got, want, what=f"output on {branch}", rtol=1e-4, atol=1e-5)
                except CheckError as err:
                    if mixed:
                        hint = _(
                            "This batch's mean and most of its entries (its first one, some rows) have "
                            "opposite signs. The branch must follow model.gate(x), the mean of the whole "
                            "batch: one decision for the batch, not per row or from one entry."
                        )
                    elif the_examples:
                        hint = _(
                            "Even the branch the example took differs from the model in eval mode: "
                            "Dropout was still active. Call model.eval() before exporting."
                        )
                    else:
                        hint = _(
                            "The branch was frozen at export time: tracing (torch.jit.trace) records "
                            "only the path the example took. Export with torch.export and torch.cond so "
                            "both branches are in the graph."
                        )
                    raise CheckError(
                        _("{call}: {err} {hint}").format(call=call, err=err, hint=hint)
                    ) from None
        if not seen["is_exported_program"]:
            raise CheckError(
                _(
                    "{call} returned a {name}. TorchScript (torch.jit.script / trace) is the "
                    "legacy path; return the ExportedProgram from torch.export.export."
                ).format(call=call, name=seen["kind"]["name"])
            )
        changed = _modes_changed(seen)
        if changed:
            raise CheckError(
                _(
                    "{call} changed the caller's model: {changed}. Export in eval mode, then "
                    "restore the mode you found: was_training = model.training; model.eval(); "
                    "export; model.train(was_training). The exported program keeps eval "
                    "behaviour."
                ).format(call=call, changed=changed)
            )


# ---------------------------------------------------------------------------------------
# Exercise 5: onnx_round_trip
# ---------------------------------------------------------------------------------------


def _within(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float) -> bool:
    gap = (got.double() - want.double()).abs()
    return bool((gap <= atol + rtol * want.double().abs()).all())


def _expected_matches(got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float):
    """True or False where torch.allclose(got, want, rtol, atol) says so with a margin (half
    and twice the tolerances agree); None where it is too close to call."""
    if torch.equal(got, want):
        return True
    loose, tight = _within(got, want, 2 * rtol, 2 * atol), _within(got, want, rtol / 2, atol / 2)
    return tight if loose == tight else None


def check_onnx_round_trip(onnx_round_trip) -> None:
    """ONNX Runtime's output against the model (handed over in training mode) in eval mode;
    zero tolerances, and a relative-only tolerance on outputs in the thousands; an input that
    requires grad and one that is not contiguous."""
    device = get_device()
    g = torch.Generator().manual_seed(21)
    hints = {
        "onnxscript": N_("torch.onnx.export(..., dynamo=True) needs the onnxscript package."),
        "requires grad": (
            N_(
                "x requires grad here: hand ONNX Runtime x.detach().cpu().numpy(), as the exercise "
                "says (numpy() refuses a tensor that requires grad, and one on a GPU)."
            )
        ),
        "Failed to export": (
            N_(
                "The model comes in training mode: call model.eval() before exporting (in "
                "training mode BatchNorm needs a batch of more than one row, and Dropout is on)."
            )
        ),
    }
    # Two exports, as each takes a while; the visible tests cover the default tolerances.
    cases = [
        # (batch, d_in, scale, how rtol and atol are passed, their values, input kind)
        (1, 3, 1.0, "positional", (0.0, 0.0), "requires_grad"),
        (8, 5, 3e4, "keywords", (1e-4, 0.0), "non-contiguous"),
    ]
    for i, (batch, d_in, scale, passing, (rtol, atol), kind) in enumerate(cases):
        x = torch.randn(batch, d_in, generator=g)
        case = {"seed": 21 + i, "d_in": d_in, "device": device, "scale": scale}
        if kind == "non-contiguous":
            case["x_t"] = x.t().contiguous().to(device)  # handed over as x_t.t()
        else:
            case["x"] = x.to(device)
        case["requires_grad"] = kind == "requires_grad"
        if passing == "positional":
            case["tol_args"] = [rtol, atol]
            tol_text = f", {rtol:g}, {atol:g}"
        elif passing == "keywords":
            case["tol_kwargs"] = {"rtol": rtol, "atol": atol}
            tol_text = f", rtol={rtol:g}, atol={atol:g}"
        else:
            tol_text = ""
        x_text = "x (requires grad)" if kind == "requires_grad" else f"x ({kind})"
        call = f"onnx_round_trip(model, {x_text} of shape {(batch, d_in)}, path{tol_text})"
        reference = probes.build_onnx_model(case).eval()
        with torch.no_grad():
            want = reference(x.to(device)).cpu()
        seen = _observe(probes.probe_onnx_round_trip, onnx_round_trip, case, call, hints=hints)
        _check_kind(seen["kind"], tuple, call)
        if seen["length"] != 2:
            raise CheckError(
                _("{call} should return (onnx_out, matches), got {length} items.").format(
                    call=call, length=seen["length"]
                )
            )
        _check_kind(seen["out_kind"], torch.Tensor, f"onnx_out from {call}")
        if not seen["file_written"]:
            raise CheckError(_("{call} did not write the ONNX file to path.").format(call=call))
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
                _(
                    "matches from {call} should be a bool, got {name}. torch.allclose returns "
                    "one; .item() turns a one-element tensor into a bool."
                ).format(call=call, name=seen["matches_kind"]["name"])
            )
        expected = _expected_matches(onnx_out, want, rtol, atol)
        if expected is None or matches == expected:
            continue
        gap = (onnx_out.double() - want.double()).abs()
        worst = int(gap.argmax())
        detail = _(
            "The largest gap is {gap:.3g} at a value of size {size:.3g}; "
            "torch.allclose(onnx_out, expected, rtol={rtol:g}, atol={atol:g}) allows |a "
            "- b| <= atol + rtol * |b|, which says {expected}."
        ).format(
            gap=gap.max().item(),
            size=want.flatten()[worst].abs().item(),
            rtol=rtol,
            atol=atol,
            expected=expected,
        )
        if passing == "positional":
            hint = _(
                "With rtol=0 and atol=0 only identical outputs match: pass the rtol and atol "
                "arguments on to the comparison instead of fixed tolerances."
            )
        else:
            hint = _(
                "These outputs are in the thousands, so rtol is what lets them match while "
                "atol=0 allows no absolute gap: compare with torch.allclose(onnx_out, "
                "expected, rtol=rtol, atol=atol) (not torch.equal, not the absolute gap "
                "alone, rtol and atol not swapped), against the model in eval mode."
            )
        raise CheckError(
            _("{call} said matches={matches}. {detail} {hint}").format(
                call=call, matches=matches, detail=detail, hint=hint
            )
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
    """Sizes from the serialised state_dict, accuracies in eval mode under no_grad, the int8
    copy really evaluated (on a model where int8 visibly changes the predictions), the caller's
    model intact and in the mode it had."""
    g = torch.Generator().manual_seed(13)
    cases = [
        # (d_in, hidden, n, outlier value of input feature 0 or None, model in training mode)
        (64, 256, 300, None, True),
        (48, 512, 1, None, True),
        (40, 256, 200, 2000.0, False),
    ]
    for d_in, hidden, n, outlier, train in cases:
        case = {"d_in": d_in, "hidden": hidden, "outlier": outlier is not None, "train": train}
        pristine = probes.build_quant_model(case)  # on the CPU
        x = torch.randn(n, d_in, generator=g)
        if outlier is not None:
            x[:, 0] = outlier  # ignored by the float32 model, not by int8 activations
        with torch.no_grad():
            y = copy.deepcopy(pristine).eval()(x).argmax(dim=1)
        flip = torch.rand(n, generator=g) < 0.2  # some labels the model gets wrong
        y = torch.where(flip, torch.randint(0, 10, (n,), generator=g), y)
        case.update(x=x, y=y)
        mode = "training" if train else "eval"
        where = (
            _(", feature 0 = {outlier:g}").format(outlier=outlier) if outlier is not None else ""
        )
        call = (
            f"quantize_report(model with Linear({d_in}, {hidden}) in {mode} mode, x of shape "
            f"{(n, d_in)}{where}, y)"
        )
        seen = _observe(probes.probe_quantize_report, quantize_report, case, call)
        _check_kind(seen["kind"], dict, call)
        missing = [k for k in _QUANT_KEYS if k not in seen["keys"]]
        if missing:
            raise CheckError(
                _("{call} lacks the keys {missing}; expected {quant_keys}.").format(
                    call=call, missing=missing, quant_keys=list(_QUANT_KEYS)
                )
            )
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
                    _(
                        "{call} changed the caller's model ({key!r} is now {now}). Quantise a copy: "
                        "quantize_int8(copy.deepcopy(model))."
                    ).format(call=call, key=key, now=now)
                )
        changed = _modes_changed(seen)
        if changed:
            raise CheckError(
                _(
                    "{call} changed the caller's model: {changed}. Evaluate in eval mode, then "
                    "restore the mode you found (was_training = model.training ... "
                    "model.train(was_training)), or evaluate a copy."
                ).format(call=call, changed=changed)
            )
        forwards = seen["forwards"]
        if any(f["grad_enabled"] for f in forwards):
            raise CheckError(
                _(
                    "{call} ran a forward pass with autograd on. Measure the accuracies under "
                    "torch.no_grad() (or torch.inference_mode()): no graph is needed."
                ).format(call=call)
            )
        if any(f["training"] for f in forwards):
            raise CheckError(
                _(
                    "{call} ran a forward pass in training mode (Dropout active). Both models "
                    "are measured in eval mode: copy the model after model.eval(), or call "
                    ".eval() on the int8 copy as well."
                ).format(call=call)
            )
        ref_fp32 = _serialized_nbytes(pristine)
        if abs(report["size_fp32"] - ref_fp32) > 0.02 * ref_fp32:
            raise CheckError(
                _(
                    "report['size_fp32'] is {size_fp32} bytes; torch.save of the model's "
                    "state_dict takes {ref_fp32}. Measure the serialised state_dict (torch.save "
                    "into io.BytesIO)."
                ).format(size_fp32=report["size_fp32"], ref_fp32=ref_fp32)
            )
        ratio = report["size_int8"] / ref_fp32
        if ratio > 0.9:
            raise CheckError(
                _(
                    "report['size_int8'] is {ratio:.0%} of the float32 size: nothing shrank. "
                    "Quantised weights still report dtype float32, so numel() * element_size() "
                    "lies; serialise the quantised model's state_dict and count the bytes."
                ).format(ratio=ratio)
            )
        if ratio > 0.4:
            raise CheckError(
                _(
                    "report['size_int8'] is {ratio:.0%} of the float32 size; int8 weights should "
                    "take about a quarter. Half precision (model.half()) is not int8 "
                    "quantisation."
                ).format(ratio=ratio)
            )
        if ratio < 0.15:
            raise CheckError(
                _(
                    "report['size_int8'] is only {ratio:.0%} of the float32 size: some weights "
                    "were not counted (quantised layers may keep them outside .parameters()). "
                    "Serialise the whole state_dict."
                ).format(ratio=ratio)
            )
        ref_acc = _accuracy(copy.deepcopy(pristine).eval(), x, y)
        if abs(report["acc_fp32"] - ref_acc) > 1e-6:
            raise CheckError(
                _(
                    "report['acc_fp32'] is {acc_fp32:.4f}, expected {ref_acc:.4f} (the fraction "
                    "of rows whose argmax is the label, for the model in eval mode). Call "
                    "model.eval() first: Dropout changes the predictions in training mode."
                ).format(acc_fp32=report["acc_fp32"], ref_acc=ref_acc)
            )
        ref_int8 = _accuracy(_reference_int8(copy.deepcopy(pristine).eval()), x, y)
        if abs(report["acc_int8"] - ref_int8) > 0.1 + 1.0 / n:
            hint = (
                _(
                    " That is the float32 model's accuracy: here int8 visibly changes the "
                    "predictions, so measure acc_int8 on the quantised copy."
                )
                if abs(report["acc_int8"] - ref_acc) < 1e-6
                else _(" Evaluate the quantised copy, in eval mode, under torch.no_grad().")
            )
            raise CheckError(
                _(
                    "{call}: report['acc_int8'] is {acc_int8:.4f}; the int8 copy in eval mode "
                    "scores about {ref_int8:.4f} (float32: {ref_acc:.4f}).{hint}"
                ).format(
                    call=call,
                    acc_int8=report["acc_int8"],
                    ref_int8=ref_int8,
                    ref_acc=ref_acc,
                    hint=hint,
                )
            )


# ---------------------------------------------------------------------------------------
# Exercise 7: measure_latency_ms
# ---------------------------------------------------------------------------------------


def _what_it_looks_like(got: float, slept: list[float], warmup: int) -> str:
    """Which wrong statistic of the fake's real call times ``got`` is closest to, in words."""
    timed = slept[warmup:]
    candidates = {
        _("the mean of the timed calls"): statistics.fmean(timed),
        _("the fastest timed call (the minimum)"): min(timed),
        _("the slowest timed call (the maximum)"): max(timed),
        _("the median of all calls, warm-up included"): statistics.median(slept),
        _("the mean of all calls, warm-up included"): statistics.fmean(slept),
        _("the median in seconds, not milliseconds"): statistics.median(timed) / 1000,
        _("the total of the timed calls"): sum(timed),
    }
    name, value = min(candidates.items(), key=lambda item: abs(item[1] - got))
    if abs(value - got) > 0.2 * max(value, 0.5):
        return ""
    hints = {
        _("the mean of the timed calls"): _("one slow call drags a mean up; report the median"),
        _("the fastest timed call (the minimum)"): _(
            "the minimum is the luckiest call; report the median"
        ),
        _("the slowest timed call (the maximum)"): _("report the median, the typical call"),
        _("the median of all calls, warm-up included"): _("time only the calls after the warm-up"),
        _("the mean of all calls, warm-up included"): _(
            "time only the calls after the warm-up, and take their median"
        ),
        _("the median in seconds, not milliseconds"): _(
            "perf_counter counts seconds: multiply by 1000"
        ),
        _("the total of the timed calls"): _("time each call separately and take the median"),
    }
    return _(" {got:.3f} ms is close to {name} ({value:.3f} ms): {hint}.").format(
        got=got, name=name, value=value, hint=hints[name]
    )


def _check_cuda_sync(seen: dict, call: str, runs: int) -> None:
    """With an input on a (pretended) CUDA device, a synchronize between each timed call and
    the clock reading after it."""
    error = seen["error"]
    if error is not None:
        text = f"{error['type']} {error['line']}".lower()
        if any(word in text for word in ("cuda", "nvidia", "driver", "not compiled")):
            return  # it reached for a real GPU this machine lacks: nothing more to see here
        raise CheckError(
            _("{call} raised {type}: {line}").format(
                call=call, type=error["type"], line=error["line"]
            )
        )
    events = seen["events"]
    calls = [i for i, event in enumerate(events) if event == "call"]
    timed = calls[len(calls) - runs :] if runs else []
    if "sync" not in events:
        raise CheckError(
            _(
                "{call} never called torch.cuda.synchronize(). On a GPU, fn(x) only queues "
                "the work and returns at once, so the clock would time the launch, not the "
                "work: when x.device.type == 'cuda', synchronize after each call, before "
                "reading the clock."
            ).format(call=call)
        )
    clocks = [i for i, event in enumerate(events) if event == "clock"]
    if not clocks:
        return  # timed with a clock we do not watch: the synchronize calls are all we see
    for number, index in enumerate(timed, start=1):
        after = [i for i in clocks if i > index]
        if not after:
            continue
        between = events[index + 1 : after[0]]
        if "sync" not in between:
            raise CheckError(
                _(
                    "{call} read the clock after timed call {number} without a "
                    "torch.cuda.synchronize() in between. GPU work is queued: fn(x) returns "
                    "before it has run, so synchronize after fn(x) and before perf_counter()."
                ).format(call=call, number=number)
            )


def check_measure_latency_ms(measure_latency_ms) -> None:
    """Warm-up calls untimed, the median of the timed calls, no autograd (and autograd back on
    afterwards), every call counted, the default and keyword arguments, a synchronize for
    an input on CUDA.

    The fake model sleeps a scripted time per call and reports how long each call really
    took; the expected answer is the median of those real durations over the timed calls
    (for an even number of runs, anything between the two middle ones: torch.median gives
    the lower one).
    """
    device = get_device()
    cases = [
        # (warmup, runs, scripted durations in ms, situation, keywords)
        (4, 3, [40] * 4 + [4] * 3, _("slow first calls"), False),
        (2, 9, [4, 4, 4, 4, 4, 4, 150, 4, 4, 4, 4], _("one 150 ms hiccup"), False),
        (1, 5, [4, 12, 2, 12, 12, 12], _("one unusually fast call"), False),
        (1, 4, [20, 2, 8, 12, 40], _("an even number of runs"), True),
        (0, 1, [3], _("no warm-up asked for (warmup=0, runs=1)"), False),
        (None, None, [0], _("the default warmup=5, runs=20"), False),
        (None, 3, [0], _("runs=3 and the default warmup=5"), True),
    ]
    for warmup, runs, durations, situation, keywords in cases:
        shown_warmup = 5 if warmup is None else warmup
        shown_runs = 20 if runs is None else runs
        parts = ["fn", "x"]
        for name, value in (("warmup", warmup), ("runs", runs)):
            if value is not None:
                parts.append(f"{name}={value}" if keywords else str(value))
        call = f"measure_latency_ms({', '.join(parts)})"
        case = {
            "device": device,
            "durations_ms": durations,
            "warmup": warmup,
            "runs": runs,
            "keywords": keywords,
        }
        seen = _observe(probes.probe_measure_latency_ms, measure_latency_ms, case, call)
        _check_kind(seen["kind"], float, call)
        total = shown_warmup + shown_runs
        if seen["calls"] != total:
            raise CheckError(
                _(
                    "{call} called fn {calls} times, expected warmup + runs = {total}: first "
                    "{shown_warmup} untimed warm-up calls, then {shown_runs} timed ones (use the "
                    "arguments and their defaults warmup=5, runs=20, not fixed numbers)."
                ).format(
                    call=call,
                    calls=seen["calls"],
                    total=total,
                    shown_warmup=shown_warmup,
                    shown_runs=shown_runs,
                )
            )
        if not seen["same_input"]:
            raise CheckError(_("{call} did not pass x itself to fn.").format(call=call))
        if any(seen["grad_enabled"]):
            first = seen["grad_enabled"].index(True)
            which = "a warm-up call" if first < shown_warmup else "a timed call"
            raise CheckError(
                _(
                    "{call} ran fn with autograd on ({which}, call {number}). Inference records "
                    "no graph: make every call, warm-up included, under torch.no_grad() (or "
                    "torch.inference_mode())."
                ).format(call=call, which=which, number=first + 1)
            )
        if not seen["grad_restored"]:
            raise CheckError(
                _(
                    "{call} left autograd switched off for the rest of the program. Use `with "
                    "torch.no_grad():` around the calls rather than "
                    "torch.set_grad_enabled(False)."
                ).format(call=call)
            )
        if durations == [0]:
            continue  # counting calls is the point here; a 0 ms call is all noise
        timed = sorted(seen["slept_ms"][shown_warmup:total])
        low, high = timed[(len(timed) - 1) // 2], timed[len(timed) // 2]
        got = seen["value"]
        if not low * 0.8 <= got <= high + 8.0:
            median = statistics.median(timed)
            raise CheckError(
                _(
                    "{call} returned {got:.3f} ms with {situation}; the median of the "
                    "{shown_runs} timed calls is {median:.3f} ms (in "
                    "milliseconds).{what_it_looks_like}"
                ).format(
                    call=call,
                    got=got,
                    situation=situation,
                    shown_runs=shown_runs,
                    median=median,
                    what_it_looks_like=_what_it_looks_like(
                        got, seen["slept_ms"][:total], shown_warmup
                    ),
                )
            )

    call = "measure_latency_ms(fn, x on a CUDA device, 2, 3)"
    case = {
        "device": device,
        "durations_ms": [1],
        "warmup": 2,
        "runs": 3,
        "cuda": True,
    }
    seen = _observe(probes.probe_measure_latency_ms, measure_latency_ms, case, call)
    _check_cuda_sync(seen, call, 3)


# ---------------------------------------------------------------------------------------
# Exercise 8: save_for_serving
# ---------------------------------------------------------------------------------------

_SERVING_FILES = {"program": "model.pt2", "weights": "weights.safetensors"}

_SERVING_HINTS = {
    "share memory": (
        N_(
            "The model has tied weights (two state-dict names, one tensor) and save_file refuses "
            "tensors that share memory: use safetensors.torch.save_model(model, path), which keeps "
            "one name per shared tensor, or drop the duplicate names yourself."
        )
    ),
    "non contiguous": (
        N_(
            "A tensor of the state dict is a transposed view (not contiguous) and safetensors "
            "stores only row-major bytes: save {name: t.contiguous()} or use save_model(model, "
            "path), which does that for you."
        )
    ),
    "does not exist": N_(
        "folder may not exist yet: create it with Path(folder).mkdir(parents=True, exist_ok=True)."
    ),
    "No such file": N_(
        "folder may not exist yet: create it with Path(folder).mkdir(parents=True, exist_ok=True)."
    ),
}


def _serving_cases(device, g: torch.Generator) -> list[dict]:
    """A BatchNorm + Dropout MLP in training mode, a tied-weight LM in eval mode written to a
    folder that does not exist yet, and a model whose state holds a non-contiguous weight."""
    specs = [
        # kind, dims, seed, train, folder parts, folder exists, folder as Path
        ("mlp", (5, 12, 3), 41, True, ["serve"], True, False),
        ("tied", (13, 6), 42, False, ["new", "serve"], False, True),
        ("transposed", (4, 6), 43, True, ["served"], True, True),
    ]
    cases = []
    for kind, dims, seed, train, parts, exists, as_path in specs:
        batch = []  # the example, then two fresh inputs of its shape
        for _attempt in range(3):
            if kind == "tied":
                batch.append(torch.randint(0, dims[0], (2, 7), generator=g).to(device))
            else:
                batch.append((torch.randn(6, dims[0], generator=g) * 2).to(device))
        example, inputs = batch[0], batch[1:]
        cases.append(
            {
                "kind": kind,
                "dims": list(dims),
                "seed": seed,
                "device": device,
                "train": train,
                "folder_parts": parts,
                "folder_exists": exists,
                "as_path": as_path,
                "example": example,
                "inputs": inputs,
            }
        )
    return cases


def _serving_call(case: dict) -> str:
    names = {
        "mlp": _("an MLP with BatchNorm and Dropout"),
        "tied": _("a language model with tied weights"),
        "transposed": _("a model whose weight is a transposed (non-contiguous) view"),
    }
    mode = "training" if case["train"] else "eval"
    folder = _("a folder that does not exist yet") if not case["folder_exists"] else "folder"
    kind = "Path" if case["as_path"] else "str"
    return _("save_for_serving({model} in {mode} mode, example, {folder} as a {kind})").format(
        model=names[case["kind"]], mode=mode, folder=folder, kind=kind
    )


def _check_serving_outputs(outputs: list, wants: list, call: str, what: str, hint: str) -> None:
    for out, want in zip(outputs, wants, strict=True):
        if out["error"] is not None:
            raise CheckError(
                _("{what} from {call} raised {error} on a fresh input.").format(
                    what=what, call=call, error=out["error"]
                )
            )
        try:
            assert_close(out["value"], want, rtol=1e-4, atol=1e-5, what=what)
        except CheckError as err:
            raise CheckError(
                _("{call}: {err} {hint}").format(call=call, err=err, hint=hint)
            ) from None


def check_save_for_serving(save_for_serving) -> None:
    """Reload both files the answer wrote (in the probe) and compare with the model in eval
    mode on fresh inputs; the returned paths, the folder used, the caller's mode."""
    device = get_device()
    g = torch.Generator().manual_seed(33)
    for case in _serving_cases(device, g):
        call = _serving_call(case)
        seen = _observe(
            probes.probe_save_for_serving, save_for_serving, case, call, hints=_SERVING_HINTS
        )
        _check_kind(seen["kind"], dict, call)
        returned = seen["returned"]
        if sorted(returned) != sorted(_SERVING_FILES):
            raise CheckError(
                _(
                    "{call} returned a dict with the keys {returned}; expected exactly 'program' "
                    "and 'weights'."
                ).format(call=call, returned=sorted(returned))
            )
        for key, name in _SERVING_FILES.items():
            entry = returned[key]
            if _qualname(torch.export.ExportedProgram) in entry["kind"]["mro"]:
                raise CheckError(
                    _(
                        "{call} returned the ExportedProgram itself under {key!r}. A server needs a "
                        "file: torch.export.save(program, folder / 'model.pt2'), then return that "
                        "path."
                    ).format(call=call, key=key)
                )
            if entry["where"] is None:
                raise CheckError(
                    _(
                        "{call}: result[{key!r}] is a {type_name}; return the path of the file written (a "
                        "Path or a str), folder / {name!r}."
                    ).format(call=call, key=key, type_name=entry["kind"]["name"], name=name)
                )
            if name not in (seen["in_folder"] or []):
                where = (
                    _(
                        " It is in the current working directory: build the path from folder "
                        "(Path(folder) / name), not from the file name alone."
                    )
                    if name in seen["in_cwd"]
                    else ""
                )
                raise CheckError(
                    _("{call} did not write {name} into folder.{where}").format(
                        call=call, name=name, where=where
                    )
                )
            if entry["where"] != name:
                raise CheckError(
                    _(
                        "{call}: result[{key!r}] points to {where!r} relative to folder; expected "
                        "folder / {name!r}, the file written."
                    ).format(call=call, key=key, where=entry["where"], name=name)
                )

        reference = probes.build_serving(case).eval()
        with torch.no_grad():
            wants = [reference(x) for x in case["inputs"]]

        program = seen["program"]
        if program["error"] is not None:
            raise CheckError(
                _(
                    "torch.export.load could not read the model.pt2 that {call} wrote ({type}: "
                    "{line}). Write it with torch.export.save(program, path): torch.save "
                    "pickles the object instead."
                ).format(
                    call=call, type=program["error"]["type"], line=program["error"]["line"][:120]
                )
            )
        if _qualname(torch.export.ExportedProgram) not in program["kind"]["mro"]:
            raise CheckError(
                _(
                    "torch.export.load of the model.pt2 that {call} wrote gave a {name}; save "
                    "torch.export.export's ExportedProgram."
                ).format(call=call, name=program["kind"]["name"])
            )
        _check_serving_outputs(
            program["outputs"],
            wants,
            call,
            _("the reloaded model.pt2's output"),
            _(
                "The program must compute what the model does in eval mode: call model.eval() "
                "before torch.export.export (in training mode Dropout stays on and BatchNorm "
                "uses each batch's statistics)."
            ),
        )

        weights = seen["weights"]
        if weights["error"] is not None:
            line = weights["error"]["line"]
            if "header" in line.lower():
                hint = _(
                    " That is not a safetensors file (torch.save writes a pickle whatever the "
                    "name): use safetensors.torch.save_model or save_file."
                )
            elif "Missing key" in line:
                hint = _(
                    " Save the whole model.state_dict(), buffers (BatchNorm's running "
                    "statistics) included, not only the parameters."
                )
            elif "Unexpected key" in line:
                hint = _(
                    " A tied tensor is stored under both of its names (a .clone() hides the "
                    "sharing from save_file and doubles the file): keep one name per shared "
                    "tensor, as save_model does."
                )
            else:
                hint = ""
            raise CheckError(
                _(
                    "safetensors.torch.load_model(model, path) could not load the "
                    "weights.safetensors that {call} wrote ({type}: {line}).{hint}"
                ).format(call=call, type=weights["error"]["type"], line=line[:160], hint=hint)
            )
        _check_serving_outputs(
            weights["outputs"],
            wants,
            call,
            _("a model loaded from the weights.safetensors"),
            _("Save the model's own state_dict (every parameter and buffer) as it is."),
        )

        changed = _modes_changed(seen)
        if changed:
            raise CheckError(
                _(
                    "{call} changed the caller's model: {changed}. Note was_training = "
                    "model.training, export in eval mode, then model.train(was_training)."
                ).format(call=call, changed=changed)
            )
