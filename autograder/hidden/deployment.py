"""Hidden checks for 08_deployment.

Every contact with the learner's answer goes through ``observe`` and a probe in
``autograder/probes/deployment.py``, which builds the inputs (files included) from the case
and returns what it saw as data. The references and expected values are here.
"""

from __future__ import annotations

import copy
import io
import pickle
import re
import statistics
import warnings
from collections import OrderedDict

import torch
from hypothesis import strategies as st
from torch import nn

from autograder import wire
from autograder.boundary import AnswerRaised, observe
from autograder.contracts import Build, Contract, Draw, Inputs, compare_values, describe, uses
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


def _check_settings(seen: dict, call: str) -> None:
    """The first setting of the whole process that the probe saw left switched, as an error."""
    switched = seen.get("settings") or []
    if not switched:
        return
    name, before, after = switched[0]
    what = name if before == after == "" else f"{name}: {before} -> {after}"
    raise CheckError(
        _(
            "{call} left a setting of the whole process switched ({what}): the caller's later "
            "code would run with it. Put back whatever you switch (a `with` block, or note the "
            "old value and restore it), and reseed no global random generator."
        ).format(call=call, what=what)
    )


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


# What a key may start with: DistributedDataParallel's prefix (once or twice), a prefix with
# 'module.' after it, and names that start with the letters 'module' but not 'module.'.
_PREFIXES = ("", "module.", "module.module.", "_orig_mod.module.", "head.module.")
_STEMS = ("fc", "encoder", "modules", "module_norm", "attn_module", "model")
_LEAVES = ("weight", "bias", "running_mean", "num_batches_tracked")


def _draw_state_dict(d: Draw) -> Inputs:
    """A state_dict of 0 to 6 entries (float32, float16 and int64 values of a few shapes), each
    key a prefix, a stem and a leaf; keys stay distinct once stripped."""
    state = {}  # a plain dict: it crosses as one, and the feedback shows it as one
    for i in range(d.size(1, 6, empty_ok=True)):
        prefix = d.draw(st.sampled_from(_PREFIXES))
        stem = d.draw(st.sampled_from(_STEMS))
        leaf = d.draw(st.sampled_from(_LEAVES))
        key = f"{prefix}{stem}{i or ''}.{leaf}"
        if leaf == "num_batches_tracked":
            state[key] = d.integers(low=0, high=100)
        else:
            value = d.tensor(d.size(1, 3))
            state[key] = value.half() if d.draw(st.booleans()) and i % 2 else value
    return Inputs((state,))


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


_STRIP_HINTS = {
    "meta": N_(
        "The values are tensors on the meta device (a model built without memory), which "
        "hold no data to copy: keep each value as it is (no .cpu(), .to() or .clone())."
    ),
}


def _compare_strip(got, expected, what: str, inputs: Inputs) -> None:
    """The keys in the input's order, each renamed as removeprefix does; the values kept."""
    if not isinstance(got, dict):
        raise CheckError(
            _("{what} returned {got}, expected a dict.").format(what=what, got=describe(got))
        )
    keys_before, out_keys = list(inputs.args[0]), list(got)
    if out_keys != list(expected):
        if sorted(out_keys) == sorted(expected):
            raise CheckError(
                _(
                    "{what} returned the right keys in another order: {keys}, expected "
                    "{expected}. Build the new dict in the input's order (renaming in place "
                    "moves each renamed key to the end)."
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
                    "{what} turned the key {before!r} into {after!r}, expected "
                    "{removeprefix!r}. {strip_hint}"
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
                "{what} returned {n_out_keys} keys, expected {n_expected}: {expected}. Keep "
                "every entry, renamed or not."
            ).format(
                what=what,
                n_out_keys=len(out_keys),
                n_expected=len(expected),
                expected=list(expected)[:6],
            )
        )
    for key in expected:
        compare_values(got[key], expected[key], f"{what}[{key!r}]", inputs)


STRIP_MODULE_PREFIX = Contract(
    "strip_module_prefix",
    _reference_strip,
    _draw_state_dict,
    # A dict argument: dtypes, strides, device and grad change tensor arguments only, so
    # the draw mixes float16 and int64 values itself; identity is checked by hand below.
    families=("values", "edges"),
    compare=_compare_strip,
    arg_names=("state_dict",),
)


@uses(STRIP_MODULE_PREFIX)
def check_strip_module_prefix(strip_module_prefix) -> None:
    """The contract (keys renamed in order, values equal, the caller's dict unchanged), then:
    a new dict even when nothing is renamed, and the original tensors, a transposed one too."""
    g = torch.Generator().manual_seed(7)
    cases = [
        (
            "a state_dict with some prefixed keys",
            [
                ["module.encoder.weight", torch.randn(2, 3, generator=g), False],
                ["head.module.bias", torch.randn(3, generator=g), False],
                ["module.submodule.weight", torch.randn(3, 3, generator=g), True],
            ],
        ),
        (
            "a checkpoint without the prefix",
            [
                ["fc.weight", torch.randn(2, 2, generator=g), True],
                ["fc.bias", torch.randn(2, generator=g), False],
            ],
        ),
        (
            "a state_dict with an extra-state entry (a dict, not a tensor)",
            [
                ["module.fc.weight", torch.randn(2, 2, generator=g), False],
                ["module.fc._extra_state", {"fp8_scale": 2.0, "version": 3}, False],
                ["head.bias", torch.randn(2, generator=g), False],
            ],
        ),
        (
            "a state_dict of a model built on the meta device",
            [
                ["module.fc.weight", torch.randn(2, 3, generator=g), False],
                ["module.fc.bias", torch.randn(2, generator=g), False],
            ],
            True,
        ),
    ]
    for what, entries, *on_meta in cases:
        call = f"strip_module_prefix({what})"
        case = {"entries": entries, "meta": bool(on_meta)}
        seen = _observe(
            probes.probe_strip_module_prefix, strip_module_prefix, case, call, _STRIP_HINTS
        )
        _check_kind(seen["kind"], dict, call)
        if seen["same_object"]:
            raise CheckError(
                _(
                    "strip_module_prefix({what}) returned the caller's dict itself. Return a new "
                    "dict even when no key needs renaming: whoever edits the result would "
                    "otherwise edit the caller's checkpoint too."
                ).format(what=what)
            )
        expected = [key.removeprefix("module.") for key, _t, _c in entries]
        if seen["keys"] != expected:
            raise CheckError(
                _(
                    "{call} returned the keys {keys}, expected {expected}: keep every entry, "
                    "whatever its value (a module's extra state need not be a tensor), and "
                    "rename only a leading 'module.'."
                ).format(call=call, keys=seen["keys"], expected=expected)
            )
        for source, (key, (_k, original, _c), value) in enumerate(
            zip(expected, entries, seen["values"], strict=True)
        ):
            if not isinstance(original, torch.Tensor):
                if source not in value["same_object_as"]:
                    raise CheckError(
                        _(
                            "the value for {key!r} is not the caller's object: keep every "
                            "value as it is, tensors or not."
                        ).format(key=key)
                    )
                continue
            _check_kind(value["kind"], torch.Tensor, f"the value for {key!r}")
            if source not in value["same_tensor_as"]:
                raise CheckError(
                    _(
                        "the value for {key!r} is not the original tensor (a copy, or a contiguous() "
                        "or clone() of it): rename the keys, keep the values as they are."
                    ).format(key=key)
                )
            if source not in value["same_object_as"]:
                raise CheckError(
                    _(
                        "the value for {key!r} shares the original tensor's memory but is another "
                        "tensor object (a .detach() or a view of it): the text asks for the "
                        "original tensors themselves, so put each value in the new dict as it is."
                    ).format(key=key)
                )


# ---------------------------------------------------------------------------------------
# Exercise 2: load_checkpoint_cpu
# ---------------------------------------------------------------------------------------


def _reference_load_checkpoint(path, model):
    state = torch.load(path, map_location="cpu", weights_only=True)
    result = model.load_state_dict(state, strict=False)
    return list(result.missing_keys), list(result.unexpected_keys)


def _draw_load_checkpoint(d: Draw) -> Inputs:
    """A GPU checkpoint (its head named 'head' or 'classifier', maybe an extra entry, maybe a
    parameter or buffer dropped) into a model in training or eval mode, each with or without
    a root parameter, a nested block and a non-persistent buffer."""
    d_in = d.size(1, 4)
    extras = d.draw(st.booleans())
    # Not num_batches_tracked: BatchNorm fills it in itself, and load_state_dict does not
    # report it missing (an answer that compares key sets would, rightly by the text).
    drops = ["body.0.bias", "body.1.running_mean", "body.1.running_var"]
    ckpt = {
        "seed": d.draw(st.integers(0, 99)),
        "d_in": d_in,
        "head": d.draw(st.sampled_from(["head", "classifier"])),
        "extras": d.draw(st.booleans()),
        "extra": d.draw(st.sampled_from([None, "temperature"])),
        "drop": d.draw(st.sampled_from([None, *drops, "encoder.block.0.bias"])),
    }
    model = {
        "d_in": d_in,
        "model_seed": d.draw(st.integers(100, 199)),
        "extras": extras,
        "train": d.draw(st.booleans()),
        "grads": d.draw(st.booleans()),
        "frozen": d.draw(st.booleans()),
    }
    parts = [_("head {head!r}").format(head=ckpt["head"])]
    if ckpt["extras"]:
        parts.append(_("a cls_token and an encoder"))
    if ckpt["extra"]:
        parts.append(_("an extra {key!r}").format(key=ckpt["extra"]))
    if ckpt["drop"]:
        parts.append(_("no {key!r}").format(key=ckpt["drop"]))
    mode = "training" if model["train"] else "eval"
    with_extras = _(" with a cls_token, an encoder and a non-persistent buffer") if extras else ""
    if model["grads"]:
        with_extras += _(" and gradients from its last training step")
    if model["frozen"]:
        with_extras += _(" and its first layer frozen (requires_grad=False)")
    return Inputs(
        (
            Build(
                probes.build_gpu_checkpoint,
                ckpt,
                _("a GPU checkpoint with {parts}").format(parts=", ".join(parts)),
            ),
            Build(probes.build_classifier, model, f"a model in {mode} mode{with_extras}"),
        )
    )


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


def _compare_load_checkpoint(got, expected, what: str, inputs: Inputs) -> None:
    """(missing, unexpected): two lists of key names, in any order."""
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        raise CheckError(
            _("{call} should return (missing, unexpected), got {got}.").format(
                call=what, got=describe(got)
            )
        )
    if not all(isinstance(part, (tuple, list)) for part in got):
        raise CheckError(
            _("{call} should return two lists of key names (missing, unexpected).").format(
                call=what
            )
        )
    missing, unexpected = (sorted(map(str, part)) for part in got)
    expected_missing, expected_unexpected = (sorted(part) for part in expected)
    extras = inputs.args[1].spec["extras"]
    if (missing, unexpected) == (expected_unexpected, expected_missing) and missing != unexpected:
        raise CheckError(
            _(
                "{call} swapped the lists: missing keys are the model's keys the checkpoint "
                "lacks; unexpected keys are checkpoint keys the model does not have."
            ).format(call=what)
        )
    if missing != expected_missing:
        raise CheckError(
            _(
                "{call} reported missing keys {missing}, expected {expected_missing}: the "
                "model's keys that the checkpoint does not provide.{key_hint}"
            ).format(
                call=what,
                missing=missing,
                expected_missing=expected_missing,
                key_hint=_key_hint(sorted(set(missing) ^ set(expected_missing)), extras),
            )
        )
    if unexpected != expected_unexpected:
        raise CheckError(
            _(
                "{call} reported unexpected keys {unexpected}, expected "
                "{expected_unexpected}: checkpoint keys the model has no place for.{key_hint}"
            ).format(
                call=what,
                unexpected=unexpected,
                expected_unexpected=expected_unexpected,
                key_hint=_key_hint(sorted(set(unexpected) ^ set(expected_unexpected)), extras),
            )
        )


LOAD_CHECKPOINT_CPU = Contract(
    "load_checkpoint_cpu",
    _reference_load_checkpoint,
    _draw_load_checkpoint,
    # The model is the argument the text lets change: afterwards it must hold what the
    # reference's copy holds (the checkpoint's matching tensors, nothing else) in its mode.
    families=("values", "edges"),
    mutates=(1,),
    compare=_compare_load_checkpoint,
    arg_names=("path", "model"),
    hint=lambda family, inputs: _(
        "(model.load_state_dict(state, strict=False) copies every tensor whose name matches, "
        "buffers included, leaves the mode alone and reports the keys.)"
    ),
    examples=6,
)


@uses(LOAD_CHECKPOINT_CPU)
def check_load_checkpoint_cpu(load_checkpoint_cpu) -> None:
    """The contract (GPU checkpoints with renamed, missing and extra keys, buffers, a root
    parameter and a non-persistent buffer; the model loaded, in its mode), then: no code in
    the file runs."""
    g = torch.Generator().manual_seed(11)
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

    call = "load_checkpoint_cpu(path, model) for a checkpoint saved from a DDP wrapper ('module.' keys)"
    prefixed = {f"module.{key}": value for key, value in sd.items()}
    case = {"state": prefixed, "d_in": 2, "model_seed": 7}
    seen = _observe(probes.probe_load_checkpoint_cpu, load_checkpoint_cpu, case, call)
    result = probes.build_classifier(case).load_state_dict(prefixed, strict=False)
    want = [sorted(result.missing_keys), sorted(result.unexpected_keys)]
    # BatchNorm fills in a missing num_batches_tracked itself: either way is right.
    got = [sorted(part) for part in seen["parts"] or [] if part is not None]
    if len(got) == 2:
        got[0] = [k for k in got[0] if not k.endswith("num_batches_tracked")]
    if got != want:
        raise CheckError(
            _(
                "{call} reported (missing, unexpected) = {got}, expected {want}: report the "
                "checkpoint's keys as they are. Renaming them on the way (a 'module.' prefix "
                "removed, say) loads tensors the caller never asked for and hides the very "
                "mismatch the function is there to report."
            ).format(call=call, got=got, want=want)
        )

    call = "load_checkpoint_cpu(path, model) for a float64 checkpoint into a float64 model"
    # Thirds: values that float32 cannot hold exactly.
    sd64 = {k: v.double() / 3 if v.is_floating_point() else v for k, v in sd.items()}
    case = {"state": sd64, "d_in": 2, "model_seed": 7, "dtype": "float64"}
    seen = _observe(probes.probe_load_checkpoint_cpu, load_checkpoint_cpu, case, call)
    for key, value in sd64.items():
        after = seen["after"].get(key)
        if after is not None and not torch.equal(after, value):
            raise CheckError(
                _(
                    "{call}: after loading, {key!r} is not the checkpoint's value (largest "
                    "difference {gap:.2e}). Load the tensors as they are, no .float() or other "
                    "conversion: load_state_dict copies each one into the model's own tensor."
                ).format(
                    call=call,
                    key=key,
                    gap=(after.double() - value.double()).abs().max().item(),
                )
            )

    call = "load_checkpoint_cpu(path, model) for a GPU checkpoint of the same model"
    case = {"state": sd, "d_in": 2, "model_seed": 7}
    seen = _observe(probes.probe_load_checkpoint_cpu, load_checkpoint_cpu, case, call)
    if seen["replaced"]:
        raise CheckError(
            _(
                "{call} replaced the model's tensor {name!r} with another tensor object "
                "(load_state_dict(..., assign=True)?). The text asks to copy the checkpoint's "
                "values into the model's own parameters and buffers (the default, assign=False): "
                "an optimizer built over the model still holds the old ones."
            ).format(call=call, name=seen["replaced"][0])
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


def _reference_safe_load(path):
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        return None


_SAVED_DTYPES = (torch.float32, torch.float64, torch.int64, torch.float16)


def _draw_saved_file(d: Draw) -> Inputs:
    """A file saved from a GPU holding a state_dict (float64, int64 and float16 entries kept
    as they are, empty included), a dict with metadata, one tensor or a list; or a file the
    safe loader refuses: a pickled nn.Module, a file that runs code."""
    kind = d.draw(st.sampled_from(["state_dict", "metadata", "tensor", "list", "refused"]))

    def tensor():
        dtype = d.draw(st.sampled_from(_SAVED_DTYPES))
        shape = [d.size(1, 3) for _axis in range(d.draw(st.integers(0, 2)))]
        if dtype == torch.int64:
            return d.integers(*shape, high=100)
        return d.tensor(*shape).to(dtype)

    def state_dict():
        return {f"layer{i}.weight": tensor() for i in range(d.size(1, 4, empty_ok=True))}

    if kind == "refused":
        file = d.draw(st.sampled_from(["whole_model", "runs_code"]))
        words = {"whole_model": _("a pickled nn.Module"), "runs_code": _("a file that runs code")}
        return Inputs((Build(probes.build_saved_file, {"file": file}, words[file]),))
    obj = {
        "state_dict": state_dict,
        "metadata": lambda: {"model": state_dict(), "epoch": 7, "classes": ["cat"], "lr": 0.1},
        "tensor": tensor,
        "list": lambda: [tensor() for _item in range(d.size(1, 3))],
    }[kind]()
    words = {
        "state_dict": _("a state_dict"),
        "metadata": _("a dict with epoch, class names and lr"),
        "tensor": _("a single tensor"),
        "list": _("a list of tensors"),
    }
    label = _("{what} saved from a GPU").format(what=words[kind])
    return Inputs((Build(probes.build_saved_file, {"file": "gpu", "obj": obj}, label),))


def _compare_safe_load(got, expected, what: str, inputs: Inputs) -> None:
    """None exactly for a refused file; otherwise what the file holds, dtypes kept, on the CPU."""
    if expected is None and got is not None:
        raise CheckError(
            _(
                "{call} returned a {name}, expected None: weights_only=True refuses anything "
                "but tensors and plain containers, and safe_load should report that refusal "
                "as None (without allowing extra classes)."
            ).format(call=what, name=wire.type_name(got))
        )
    if got is None and expected is not None:
        raise CheckError(
            _(
                "{call} returned None, but the file holds only tensors and plain Python "
                "values. Did an error (a missing map_location='cpu'?) get swallowed by a "
                "broad except, or does your code accept only dicts?"
            ).format(call=what)
        )
    try:
        compare_values(got, expected, what, inputs)
    except CheckError as err:
        raise CheckError(
            _(
                "{err} Return what torch.load(path, map_location='cpu', weights_only=True) "
                "gives: no .float(), no conversion, nothing left out."
            ).format(err=err)
        ) from None


SAFE_LOAD = Contract(
    "safe_load",
    _reference_safe_load,
    _draw_saved_file,
    # The argument is a path to a file: no tensor for dtypes, strides, device or grad to
    # change; the draw varies what the file holds instead.
    families=("values", "edges"),
    compare=_compare_safe_load,
    arg_names=("path",),
)


@uses(SAFE_LOAD)
def check_safe_load(safe_load) -> None:
    """The contract (plain files load onto the CPU as they are; refused files give None),
    then: no code in a refused file runs, torch's list of allowed classes is left alone, a
    damaged or missing file is an error, not a refusal, and a file that changes between two
    reads runs nothing."""
    for what, file in (
        ("a pickled nn.Module (torch.save(model))", "whole_model"),
        ("a file that runs code", "runs_code"),
    ):
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
        _check_settings(seen, call)
        if seen["safe_globals_changed"]:
            raise CheckError(
                _(
                    "{call} changed torch's list of allowed classes "
                    "(torch.serialization.add_safe_globals): every later torch.load in the "
                    "program would trust them too. Load with weights_only=True and nothing else."
                ).format(call=call)
            )

    plain = {"w": torch.ones(3, 2), "steps": torch.tensor([5, 7])}

    broken = [
        ("a truncated checkpoint (half its bytes)", "truncated"),
        ("an empty file (a save that stopped before writing anything)", "empty"),
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

    call = "safe_load(path) of a GPU checkpoint, where torch.cuda.is_available() is True"
    case = {"file": "gpu", "obj": plain, "catch": True, "cuda_available": True}
    seen = _observe(probes.probe_safe_load, safe_load, case, call)
    elsewhere = sorted(set(seen["devices"].values()) - {"cpu"})
    if seen["error"] is not None or elsewhere:
        detail = (
            f"{seen['error']['type']}: {seen['error']['line'][:120]}"
            if seen["error"] is not None
            else ", ".join(elsewhere)
        )
        raise CheckError(
            _(
                "{call}: every tensor should come back on the CPU, whatever the machine has "
                "({detail}). Load with map_location='cpu', not onto the GPU whenever "
                "torch.cuda.is_available()."
            ).format(call=call, detail=detail)
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


def _reference_export_gated(model: nn.Module, example: torch.Tensor) -> type:
    """What a right answer returns, by its type: torch.export's program. A program cannot
    cross from the kernel, so the contract compares types, and check_export_gated runs the
    answer's program by hand on both branches. Exporting here as well (a wrapper whose forward
    is torch.cond(model.gate(x), model.pos, model.neg, (x,))) cost about 0.4 s a draw for a
    value nobody read."""
    return torch.export.ExportedProgram


def _draw_export_gated(d: Draw) -> Inputs:
    """GatedNet(D) in training or eval mode; an example of shape (N, D) on either branch."""
    # The first (simplest) draw is in train mode for values, in eval mode for edges: with two
    # examples a family, both modes the answer must put back are met.
    train = d.draw(st.booleans()) != (d.family == "values")
    spec = {"dim": d.size(1, 8), "device": "cpu", "train": train}
    sign = d.draw(st.sampled_from([1.0, -1.0]))
    example = d.tensor(d.size(1, 4), spec["dim"], low=0.1, high=1.0) * sign
    mode = "training" if spec["train"] else "eval"
    label = f"GatedNet({spec['dim']}) in {mode} mode"
    return Inputs((Build(probes.build_gated, spec, label), example))


def _compare_export_gated(got, expected, what: str, inputs: Inputs) -> None:
    """An ExportedProgram (its outputs are compared by hand: a program cannot cross)."""
    wanted = _qualname(expected)
    if not (isinstance(got, wire.Unsendable) and got.type_name == wanted):
        raise CheckError(
            _(
                "{what} returned a {name}. TorchScript (torch.jit.script / trace) is the "
                "legacy path; return the ExportedProgram from torch.export.export."
            ).format(what=what, name=wire.type_name(got))
        )


EXPORT_GATED = Contract(
    "export_gated",
    _reference_export_gated,
    _draw_export_gated,
    # What crosses is the program's type; the model must come back as it was (weights,
    # its own and its submodules' modes, hooks) for every size, mode and branch drawn.
    families=("values", "edges"),
    compare=_compare_export_gated,
    arg_names=("model", "example"),
    examples=2,  # each example exports the answer's program: about 0.4 s
)


def _took_the_other_branch(got, reference: nn.Module, x: torch.Tensor) -> bool:
    """Whether ``got`` is the output of the branch that ``reference.gate(x)`` did not pick."""
    if not isinstance(got, torch.Tensor):
        return False
    with torch.no_grad():
        other = reference.neg(x) if bool(reference.gate(x)) else reference.pos(x)
    got = got.to(other.device)
    return got.shape == other.shape and torch.allclose(got, other, rtol=1e-4, atol=1e-5)


# After the cases below, whose messages explain an export that raises.
@uses(EXPORT_GATED, after=True)
def check_export_gated(export_gated) -> None:
    """By hand: export from an example on one branch, then run inputs that take each branch
    (mixed signs included). Then the contract: an ExportedProgram, the model as it was (its
    mode included) for many sizes, modes and branches."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    # The second model is a GatedNet subclass with its own gate (x.mean() < 0): the branch
    # must come from model.gate(x), not from a copy of GatedNet's rule.
    for dim, batch, train, gate in ((8, 4, True, "mean"), (3, 1, False, "negated")):
        example = (torch.rand(batch, dim, generator=g) + 0.1).to(device)  # mean > 0
        same, other = _gated_inputs(g, batch, dim)
        same = [example] + [x.to(device) for x in same]
        other = [x.to(device) for x in other]
        case = {
            "dim": dim,
            "device": device,
            "example": example,
            "inputs": same + other,
            "train": train,
            "gate": gate,
        }
        reference = probes.build_gated(case).eval()
        mode = "training" if train else "eval"
        net = (
            f"GatedNet({dim})"
            if gate == "mean"
            else f"a GatedNet subclass ({dim}) whose gate is x.mean() < 0"
        )
        call = f"export_gated({net} in {mode} mode, example of shape {(batch, dim)})"
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
                    if gate != "mean" and _took_the_other_branch(got, reference, x):
                        hint = _(
                            "This model is a GatedNet subclass with its own gate (x.mean() < 0), and "
                            "the program took the branch that gate did not pick: decide with "
                            "model.gate(x) itself, not with a copy of GatedNet's rule (x.mean() > 0)."
                        )
                    elif mixed:
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
    zero tolerances, a relative-only tolerance on outputs in the thousands, and a tiny rtol
    on outputs of mixed size (each element within its own tolerance); an input that requires
    grad and one that is not contiguous."""
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
    # Three exports, as each takes a while; the visible tests cover the default tolerances.
    # The third has one output column that is a huge constant (exact in both runtimes) next to
    # ordinary ones, and a tiny rtol: elementwise (torch.allclose) the ordinary outputs' gaps
    # are too large, while a tolerance scaled by the largest output (or a share of elements
    # within tolerance) would let them through.
    cases = [
        # (batch, d_in, scale, how rtol and atol are passed, their values, input kind, constant)
        (1, 3, 1.0, "positional", (0.0, 0.0), "requires_grad", None),
        (8, 5, 3e4, "keywords", (1e-4, 0.0), "non-contiguous", None),
        (8, 4, 1.0, "keywords", (1e-9, 0.0), "one huge output column", 1e6),
    ]
    for i, (batch, d_in, scale, passing, (rtol, atol), kind, constant) in enumerate(cases):
        x = torch.randn(batch, d_in, generator=g)
        case = {"seed": 21 + i, "d_in": d_in, "device": device, "scale": scale}
        if constant is not None:
            case["constant"] = constant
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
        _check_settings(seen, call)
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
        elif constant is not None:
            hint = _(
                "One output column is huge and the others are small: each element must be "
                "within atol + rtol * |its expected value| (torch.allclose(onnx_out, expected, "
                "rtol=rtol, atol=atol)), not within a tolerance scaled by the largest output, "
                "and every element, not most of them."
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


def _reference_quantize_report(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> dict:
    fp32 = copy.deepcopy(model).eval()
    int8 = _reference_int8(copy.deepcopy(fp32))
    return {
        "size_fp32": _serialized_nbytes(fp32),
        "size_int8": _serialized_nbytes(int8),
        "acc_fp32": _accuracy(fp32, x, y),
        "acc_int8": _accuracy(int8, x, y),
    }


_QUANT_KEYS = ("size_fp32", "size_int8", "acc_fp32", "acc_int8")


def _draw_quantize(d: Draw) -> Inputs:
    """A Linear(D, 256) classifier (D from 40, where int8 takes about a quarter of the bytes)
    in training or eval mode, 1 to 300 rows, labels mostly its own predictions; with an
    outlier, input feature 0 is huge, which int8 activations notice and float32 does not."""
    spec = {
        "d_in": d.size(40, 64),
        "hidden": 256,
        "outlier": d.draw(st.booleans()),
        "train": d.draw(st.booleans()),
    }
    n = d.size(1, 300)
    x = d.tensor(n, spec["d_in"], low=-3.0, high=3.0)
    if spec["outlier"]:
        x[:, 0] = 2000.0
    with torch.no_grad():
        y = probes.build_quant_model(spec).eval()(x).argmax(dim=1)
    flip = d.bools(n) & d.bools(n)  # about a quarter of the labels the model gets wrong
    y = torch.where(flip, d.integers(n, high=10), y)
    mode = "training" if spec["train"] else "eval"
    where = _(", feature 0 = 2000") if spec["outlier"] else ""
    label = _("a model with Linear({d_in}, 256) in {mode} mode{where}").format(
        d_in=spec["d_in"], mode=mode, where=where
    )
    return Inputs((Build(probes.build_quant_model, spec, label), x, y))


def _compare_quantize(got, expected, what: str, inputs: Inputs) -> None:
    """Sizes as ints, the float32 one as the reference's, the int8 one about a quarter of it
    (torchao or the built-in API); accuracies as floats, the int8 one within a few rows."""
    if not isinstance(got, dict):
        raise CheckError(
            _("{what} returned {got}, expected a dict.").format(what=what, got=describe(got))
        )
    missing = [k for k in _QUANT_KEYS if k not in got]
    if missing:
        raise CheckError(
            _("{call} lacks the keys {missing}; expected {quant_keys}.").format(
                call=what, missing=missing, quant_keys=list(_QUANT_KEYS)
            )
        )
    for key, kind in zip(_QUANT_KEYS, (int, int, float, float), strict=True):
        value = got[key]
        if type(value) is not kind and not (kind is float and type(value) is int):
            raise CheckError(
                _("{what}: report[{key!r}] should be a {kind}, got {got}.").format(
                    what=what, key=key, kind=kind.__name__, got=describe(value)
                )
            )
    ref_fp32 = expected["size_fp32"]
    if abs(got["size_fp32"] - ref_fp32) > 0.02 * ref_fp32:
        raise CheckError(
            _(
                "{what}: report['size_fp32'] is {size_fp32} bytes; torch.save of the model's "
                "state_dict takes {ref_fp32}. Measure the serialised state_dict (torch.save "
                "into io.BytesIO)."
            ).format(what=what, size_fp32=got["size_fp32"], ref_fp32=ref_fp32)
        )
    ratio = got["size_int8"] / ref_fp32
    if ratio > 0.9:
        raise CheckError(
            _(
                "{what}: report['size_int8'] is {ratio:.0%} of the float32 size: nothing shrank. "
                "Quantised weights still report dtype float32, so numel() * element_size() "
                "lies; serialise the quantised model's state_dict and count the bytes."
            ).format(what=what, ratio=ratio)
        )
    if ratio > 0.45:
        raise CheckError(
            _(
                "{what}: report['size_int8'] is {ratio:.0%} of the float32 size; int8 weights "
                "should take about a third or less. Half precision (model.half()) is not int8 "
                "quantisation."
            ).format(what=what, ratio=ratio)
        )
    if ratio < 0.15:
        raise CheckError(
            _(
                "{what}: report['size_int8'] is only {ratio:.0%} of the float32 size: some "
                "weights were not counted (quantised layers may keep them outside "
                ".parameters()). Serialise the whole state_dict."
            ).format(what=what, ratio=ratio)
        )
    ref_acc = expected["acc_fp32"]
    if abs(got["acc_fp32"] - ref_acc) > 1e-6:
        hint = (
            _("Call model.eval() first: Dropout changes the predictions in training mode.")
            if inputs.args[0].spec["train"]
            else _("Count the rows whose argmax is the label and divide by the number of rows.")
        )
        raise CheckError(
            _(
                "{what}: report['acc_fp32'] is {acc_fp32:.4f}, expected {ref_acc:.4f} (the "
                "fraction of rows whose argmax is the label, for the model in eval mode). {hint}"
            ).format(what=what, acc_fp32=got["acc_fp32"], ref_acc=ref_acc, hint=hint)
        )
    ref_int8, n = expected["acc_int8"], len(inputs.args[2])
    if abs(got["acc_int8"] - ref_int8) > 0.1 + 1.0 / n:
        hint = (
            _(
                " That is the float32 model's accuracy: here int8 visibly changes the "
                "predictions, so measure acc_int8 on the quantised copy."
            )
            if abs(got["acc_int8"] - ref_acc) < 1e-6
            else _(" Evaluate the quantised copy, in eval mode, under torch.no_grad().")
        )
        raise CheckError(
            _(
                "{call}: report['acc_int8'] is {acc_int8:.4f}; the int8 copy in eval mode "
                "scores about {ref_int8:.4f} (float32: {ref_acc:.4f}).{hint}"
            ).format(
                call=what,
                acc_int8=got["acc_int8"],
                ref_int8=ref_int8,
                ref_acc=ref_acc,
                hint=hint,
            )
        )


QUANTIZE_REPORT = Contract(
    "quantize_report",
    _reference_quantize_report,
    _draw_quantize,
    # No dtypes, device or grad: int8 quantisation is a float32, CPU technique, and the
    # report holds numbers, not tensors with a graph.
    families=("values", "edges", "strides"),
    compare=_compare_quantize,
    arg_names=("model", "x", "y"),
    examples=6,
)


def _check_quantize_by_hand(quantize_report) -> None:
    """What a contract cannot see: the caller's model not quantised (a quantised weight cannot
    be compared with a float one), every forward pass in eval mode and without autograd (the
    contract sees the caller's mode restored)."""
    g = torch.Generator().manual_seed(13)
    case = {"d_in": 40, "hidden": 256, "outlier": False, "train": True}
    pristine = probes.build_quant_model(case)
    x = torch.randn(20, 40, generator=g)
    case.update(x=x, y=torch.randint(0, 10, (20,), generator=g))
    call = "quantize_report(model with Linear(40, 256) in training mode, x of shape (20, 40), y)"
    seen = _observe(probes.probe_quantize_report, quantize_report, case, call)
    for key, value in pristine.state_dict().items():
        entry = seen["state_after"].get(key)
        if entry is None or entry["tensor"] is None or not torch.equal(entry["tensor"], value):
            now = entry["type"] if entry is not None else "NoneType"
            raise CheckError(
                _(
                    "{call} changed the caller's model ({key!r} is now {now}). Quantise a copy: "
                    "quantize_int8(copy.deepcopy(model))."
                ).format(call=call, key=key, now=now)
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


# After the hand-written cases: a caller's model quantised in place cannot even be compared.
@uses(QUANTIZE_REPORT, after=True)
def check_quantize_report(quantize_report) -> None:
    """By hand first (a caller's model quantised in place cannot even be compared), then the
    contract: sizes from the serialised state_dict, accuracies in eval mode, the int8 copy
    really evaluated, on many models and inputs, the caller's model and mode unchanged."""
    _check_quantize_by_hand(quantize_report)


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
    if len(timed) > 2:
        trimmed = sorted(timed)[1:-1]
        candidates[_("the mean without the fastest and slowest call")] = statistics.fmean(trimmed)
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
        _("the mean without the fastest and slowest call"): _(
            "a trimmed mean still follows the hiccups; report the median"
        ),
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

    The fake model takes a scripted time per call, on the probe's virtual clock (what
    time.perf_counter reads while the answer runs: exact, so a wrong answer gives the same
    number every time and can be recognised) and really sleeps at least as long (for a
    clock bound before the probe); the expected answer is the median of the scripted
    durations of the timed calls (for an even number of runs, anything between the two
    middle ones: torch.median gives the lower one).
    """
    device = get_device()
    cases = [
        # (warmup, runs, scripted durations in ms, situation, keywords)
        (4, 3, [40] * 4 + [4] * 3, _("slow first calls"), False),
        (2, 9, [4, 4, 4, 4, 4, 4, 150, 4, 4, 4, 4], _("one 150 ms hiccup"), False),
        (1, 5, [4, 12, 2, 12, 12, 12], _("one unusually fast call"), False),
        (1, 4, [20, 2, 8, 12, 40], _("an even number of runs"), True),
        (1, 7, [30, 4, 4, 90, 4, 120, 4, 4], _("two hiccups"), False),
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
        _check_settings(seen, call)
        read = set(seen["clocks_read"])
        if read and read <= {"time", "time_ns"}:
            raise CheckError(
                _(
                    "{call} timed the calls with time.time(), the wall clock: it is not "
                    "monotonic (the system may set it back or forward while you measure) and "
                    "on some systems it ticks too coarsely for one call. Time with "
                    "time.perf_counter(), as the exercise says."
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


def _non_persistent(case: dict) -> list[str]:
    """Names of the buffers of the case's model that its state_dict leaves out."""
    model = probes.build_serving(case)
    state = model.state_dict()
    return [name for name, _buffer in model.named_buffers() if name not in state]


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
            elif "Unexpected key" in line and any(
                f'"{name}"' in line or f"'{name}'" in line for name in _non_persistent(case)
            ):
                hint = _(
                    " A buffer registered with persistent=False is not part of the "
                    "state_dict (the model rebuilds it): save model.state_dict(), not "
                    "named_parameters() and named_buffers()."
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
        flags = [
            (name, flag, after)
            for (name, flag), (_name, after) in zip(
                seen["flags_before"], seen["flags_after"], strict=True
            )
            if flag != after
        ]
        if flags:
            name, flag, after = flags[0]
            raise CheckError(
                _(
                    "{call} changed the caller's model: {name}.requires_grad went from {before} "
                    "to {after}. Exporting and saving read the model; leave its parameters as "
                    "they were."
                ).format(call=call, name=name, before=flag, after=after)
            )
        if seen["tensors_changed"]:
            name, what = seen["tensors_changed"][0]
            raise CheckError(
                _(
                    "{call} changed the caller's model: {name} ({what}). Exporting and saving "
                    "read the model: no .half(), .cpu() or .to() on it (convert a copy, if "
                    "anything), and no forward pass in training mode (BatchNorm would update its "
                    "running statistics)."
                ).format(call=call, name=name, what=what)
            )
        lost = [n for n, _p in seen["flags_after"] if n not in seen["grads_kept"]]
        if lost:
            raise CheckError(
                _(
                    "{call} changed the caller's model: the .grad of {name} is not what it was "
                    "(model.zero_grad()?). Exporting and saving read the model; leave its "
                    "gradients to the caller."
                ).format(call=call, name=lost[0])
            )
        _check_settings(seen, call)
