"""Hidden checks for 09_transfer.

Every check reaches the learner's function through a probe (autograder/probes/transfer.py)
and judges the data that comes back; the references are built here from the same case.
"""

from __future__ import annotations

import functools

import torch
from hypothesis import strategies as st

from autograder.boundary import AnswerRaised, observe
from autograder.contracts import Build, Contract, Draw, Inputs, uses
from autograder.probes import transfer as probes
from tutorial_lib.checks import CheckError, assert_close, check_shape, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import _


def _changed(
    before: dict[str, torch.Tensor], after: dict[str, torch.Tensor], skip_prefix: str | None = None
) -> list[str]:
    return [
        k
        for k, v in before.items()
        if (skip_prefix is None or not k.startswith(skip_prefix))
        and (
            k not in after
            or not isinstance(after[k], torch.Tensor)
            or after[k].shape != v.shape
            or not torch.equal(after[k].cpu(), v.cpu())
        )
    ]


def _describe_head(case: dict) -> str:
    kind = "LayerNorm then Linear" if case.get("head_kind") == "seq" else "Linear"
    bias = "" if case.get("head_bias", True) else ", bias=False"
    return f"{kind}{bias}"


def check_replace_head(replace_head) -> None:
    """Several head names, widths, class counts, dtypes and devices (meta too, which shows a
    device taken from anywhere but the old head); bias-free heads, a head that is not the last
    child, a root parameter and a buffer; fresh weights from the caller's random stream; the
    rest of the model untouched."""
    device = get_device()
    g = torch.Generator().manual_seed(0)
    cases = [  # (head name, in, old classes, new classes, dtype, options)
        ("head", 64, 10, 3, torch.float32, {}),
        ("fc", 7, 5, 1, torch.float32, {"head_bias": False, "aux": True}),
        ("classifier", 33, 2, 2, torch.float64, {"root_param": True}),
        ("head", 5, 4, 4, torch.float32, {}),  # as many classes as before: still a fresh layer
        ("fc", 6, 3, 5, torch.float32, {"head_dtype": torch.float64, "extra": "fc_norm"}),
        ("head", 9, 4, 2, torch.float32, {"meta": True}),  # no values: only the device tells
    ]
    first_weight = None
    for head_attr, in_features, old_classes, num_classes, dtype, options in cases:
        options = dict(options)
        on_meta = options.pop("meta", False)
        case = {
            "seed": int(torch.randint(0, 10_000, (1,), generator=g)),
            "in_features": in_features,
            "out_features": old_classes,
            "head_attr": head_attr,
            "dtype": dtype,
            "device": torch.device("meta") if on_meta else device,
            "num_classes": num_classes,
            **options,
        }
        head_dtype = options.get("head_dtype") or dtype
        reference = probes.build_net(case).eval()
        old_head = getattr(reference, head_attr)
        before = None if on_meta else probes.state_of(reference)
        flags_before = {n: p.requires_grad for n, p in reference.named_parameters()}
        case["x"] = torch.randn(3, 6, generator=g).to(device=device, dtype=dtype)
        where = _("on the meta device") if on_meta else f"{dtype}"
        what = _("{call} (old head {old_head}, model {where})").format(
            call=f"replace_head(model, {num_classes}, head_attr={head_attr!r})",
            old_head=old_head,
            where=where,
        )
        try:
            seen = observe(probes.probe_replace_head, replace_head, case, what)
        except AnswerRaised as err:
            if err.type_name != "AttributeError":
                raise
            raise CheckError(
                _(
                    "{what} raised AttributeError: {error}. The head is getattr(model, head_attr) "
                    "(it may have no bias, and need not be the last child); read in_features, "
                    "weight.device and weight.dtype from it and replace it with setattr(model, "
                    "head_attr, new_layer)."
                ).format(what=what, error=err.message)
            ) from None
        if not seen["returned_model"]:
            raise CheckError(
                _(
                    "{what} returned {type}; return the model itself (the same "
                    "object, with its head replaced)."
                ).format(what=what, type=seen["returned_type"])
            )
        new_head = seen["head"]
        if new_head is None:
            raise CheckError(
                _(
                    "model.{head_attr} after {what} should be an nn.Linear, got {type}: "
                    "build a new nn.Linear(old.in_features, num_classes)."
                ).format(head_attr=head_attr, what=what, type=seen["head_type"])
            )
        if new_head["in_features"] != in_features:
            raise CheckError(
                _(
                    "after {what} the head has in_features={got}, expected "
                    "{in_features}: read it from the old head (old.in_features), do not hard-code it."
                ).format(what=what, got=new_head["in_features"], in_features=in_features)
            )
        if tuple(new_head["shape"]) != (num_classes, in_features):
            raise CheckError(
                _(
                    "after {what} the head's weight has shape {got}, expected "
                    "{shape}. Setting .out_features does not resize the weight, "
                    "and replacing another layer (the last child, say) leaves the head as it was: "
                    "build a new nn.Linear and setattr(model, {head_attr!r}, ...)."
                ).format(
                    what=what,
                    got=tuple(new_head["shape"]),
                    shape=(num_classes, in_features),
                    head_attr=head_attr,
                )
            )
        if new_head["device"].type != case["device"].type:
            raise CheckError(
                _(
                    "after {what} the head is on {got}, but the old head was on "
                    "{device}: take the device from the old head (device=old.weight.device), "
                    "not from a global `device` or from elsewhere in the model."
                ).format(what=what, got=new_head["device"], device=case["device"])
            )
        if new_head["dtype"] != head_dtype:
            raise CheckError(
                _(
                    "after {what} the head is {got}, but the old head was {dtype}: "
                    "create it with dtype=old.weight.dtype (the head's own, which need not be the "
                    "dtype of the model's first parameter)."
                ).format(what=what, got=new_head["dtype"], dtype=head_dtype)
            )
        if seen["logits"] is None:
            raise CheckError(
                _(
                    "calling the model after {what} raised {error}: the new head "
                    "must take the old head's inputs."
                ).format(what=what, error=seen.get("logits_error"))
            )
        if on_meta:
            if list(seen["logits"]) != [3, num_classes]:
                raise CheckError(
                    _("logits after {what} have shape {got}, expected {shape}.").format(
                        what=what, got=tuple(seen["logits"]), shape=(3, num_classes)
                    )
                )
            continue
        weight = new_head["weight"].cpu()
        old_weight = old_head.weight.detach().cpu()
        rows = min(num_classes, old_classes)
        if torch.equal(weight[:rows], old_weight[:rows]):
            raise CheckError(
                _(
                    "after {what} the head's first {rows} rows are the old head's weights: the new "
                    "head must start from fresh random weights (a new nn.Linear), not a copy of the "
                    "old classes."
                ).format(what=what, rows=rows)
            )
        changed = _changed(before, seen["state"], skip_prefix=f"{head_attr}.")
        if changed:
            raise CheckError(
                _(
                    "{what} changed parts of the model other than the head: {changed}. Only "
                    "model.{head_attr} should be replaced."
                ).format(what=what, changed=changed, head_attr=head_attr)
            )
        flags = {n: f for n, f in seen["flags"].items() if not n.startswith(f"{head_attr}.")}
        flipped = [n for n, f in flags.items() if flags_before.get(n) != f]
        if flipped:
            raise CheckError(
                _(
                    "{what} changed requires_grad of {flipped}: leave the rest of the model as it was."
                ).format(what=what, flipped=flipped)
            )
        logits_what = _("logits after {what}").format(what=what)
        check_shape(seen["logits"], (3, num_classes), names="N classes", what=logits_what)
        if first_weight is None:
            first_weight = (case, weight)
    # Fresh weights come from the caller's random stream: another seed, another head.
    case, weight = first_weight
    other = observe(
        probes.probe_replace_head,
        replace_head,
        {**case, "rng_seed": case["seed"] + 2},
        _("replace_head(model, ...) under another global seed"),
    )
    varied = weight.numel() > 1 and bool((weight != weight.flatten()[0]).any())
    if varied and other["head"] is not None and torch.equal(other["head"]["weight"].cpu(), weight):
        raise CheckError(
            _(
                "replace_head gives the same 'fresh' head whatever the caller's random state: did "
                "you call torch.manual_seed inside it? That resets the caller's random stream "
                "(every later random number in their program changes). Let nn.Linear draw from the "
                "global generator as it is."
            )
        )


def _freeze_cases(device) -> list[dict]:
    base = {"seed": 1, "in_features": 5, "out_features": 3, "device": device}
    return [
        {**base, "head_attr": "head", "extra": None, "mode": "train"},
        {**base, "head_attr": "fc", "extra": "fc_norm", "mode": "train"},
        {**base, "head_attr": "classifier", "extra": None, "mode": "eval"},
        {**base, "head_attr": "head", "mode": "train", "root_param": True, "head_kind": "seq"},
        {**base, "head_attr": "fc", "mode": "eval", "head_bias": False, "aux": True},
    ]


def _case_label(case: dict) -> str:
    head = f"model.{case['head_attr']} ({_describe_head(case)})"
    parts = [_("head {head}").format(head=head)]
    if case.get("root_param"):
        parts.append(_("a cls_token parameter on the root module"))
    if case.get("extra"):
        parts.append(_("a {extra} next to it").format(extra=case["extra"]))
    if case.get("aux"):
        parts.append(_("an aux layer after the head"))
    return ", ".join(parts)


def check_freeze_backbone(freeze_backbone) -> None:
    """Only the head stays trainable (even if it was frozen), whatever it is called and whatever
    it holds (a Sequential, no bias); root parameters are frozen too; values, buffers and every
    module's mode unchanged."""
    for case in _freeze_cases(get_device()):
        head_attr, mode = case["head_attr"], case["mode"]
        reference = probes.build_net(case)
        before = probes.state_of(reference)
        what = _("{call} (model in {mode} mode, {label})").format(
            call=f"freeze_backbone(model, head_attr={head_attr!r})",
            mode=mode,
            label=_case_label(case),
        )
        try:
            seen = observe(probes.probe_freeze_backbone, freeze_backbone, case, what)
        except AnswerRaised as err:
            if err.type_name != "AttributeError":
                raise
            raise CheckError(
                _(
                    "{what} raised AttributeError: {error}. The head can be any module (here "
                    "{head}): set requires_grad on every tensor of "
                    "getattr(model, head_attr).parameters() instead of naming .weight and .bias."
                ).format(what=what, error=err.message, head=_describe_head(case))
            ) from None
        if not seen["returned_model"]:
            raise CheckError(
                _("{what} returned {type}; return the model itself.").format(
                    what=what, type=seen["returned_type"]
                )
            )
        moved = sorted(n or "(root)" for n, t in seen["modes"].items() if t != (mode == "train"))
        if moved:
            raise CheckError(
                _(
                    "{what} changed the train/eval mode of {moved}: the model was in {mode} mode. "
                    "model.eval() (or .eval() on batch norm layers) freezes no parameter; "
                    "requires_grad does. Leave every module's mode alone."
                ).format(what=what, moved=moved[:4], mode=mode)
            )
        expected = {
            name: name.startswith(f"{head_attr}.") for name, _ in reference.named_parameters()
        }
        got = seen["requires_grad"]
        head_frozen = [n for n, e in expected.items() if e and not got.get(n, False)]
        if head_frozen:
            raise CheckError(
                _(
                    "after {what} the head's parameters {frozen} are frozen: nothing could learn. "
                    "Freeze everything else, then set requires_grad=True on every parameter of the "
                    "head (even one frozen before the call)."
                ).format(what=what, frozen=head_frozen)
            )
        still_trainable = [n for n, e in expected.items() if not e and got.get(n, True)]
        if still_trainable:
            raise CheckError(
                _(
                    "after {what} these parameters outside the head are still trainable: "
                    "{trainable}. Freeze every parameter that is not in model.{head_attr}: "
                    "parameters of the root module itself (model.parameters() includes them, "
                    "model.children() does not) and every other part, not only model.backbone, and "
                    "not by matching the start of a name without the dot."
                ).format(what=what, trainable=still_trainable, head_attr=head_attr)
            )
        changed = _changed(before, seen["state"])
        if changed:
            raise CheckError(
                _("{what} changed values of {changed}; only requires_grad should change.").format(
                    what=what, changed=changed
                )
            )


def check_make_optimizer(make_optimizer) -> None:
    """Groups in order, the right learning rates, only trainable parameters, none twice;
    parameters outside model.backbone (a neck, a cls_token on the root) in the backbone group;
    requires_grad left as it was."""
    device = get_device()
    cases = [  # (label, head name, what is frozen: parameter or module names, options)
        (_("all trainable"), "head", [], {}),
        (_("frozen backbone"), "head", ["backbone", "neck"], {}),
        (_("first layer frozen"), "fc", ["backbone.0"], {"extra": "fc_norm"}),
        (_("head bias frozen"), "classifier", ["classifier.bias"], {"root_param": True}),
        (_("frozen backbone and neck"), "head", ["backbone", "neck"], {"root_param": True}),
        (_("a two-layer head"), "fc", [], {"head_kind": "seq", "head_bias": False, "aux": True}),
    ]
    for label, head_attr, frozen_prefixes, options in cases:
        backbone_lr, head_lr = 3e-4, 2e-2
        case = {
            "seed": 2,
            "in_features": 4,
            "out_features": 3,
            "head_attr": head_attr,
            "device": device,
            "frozen": frozen_prefixes,
            "backbone_lr": backbone_lr,
            "head_lr": head_lr,
            **options,
        }
        reference = probes.build_net(case)
        frozen_names = set(probes.frozen_in_case(reference, frozen_prefixes))
        all_names = [n for n, _ in reference.named_parameters()]
        in_head = {n for n in all_names if n.startswith(f"{head_attr}.")}
        head_names = {n for n in all_names if n in in_head and n not in frozen_names}
        body_names = {n for n in all_names if n not in in_head and n not in frozen_names}
        what = _(
            "make_optimizer(model with {label} ({details}), {backbone_lr}, {head_lr}, "
            "head_attr={head_attr!r})"
        ).format(
            label=label,
            details=_case_label(case),
            backbone_lr=backbone_lr,
            head_lr=head_lr,
            head_attr=head_attr,
        )
        try:
            seen = observe(probes.probe_make_optimizer, make_optimizer, case, what)
        except AnswerRaised as err:
            if err.type_name != "ValueError":
                raise
            raise CheckError(
                _(
                    "{what} raised ValueError: {error}. Each parameter may appear in one group "
                    "only (the backbone group must not include the head), and a group may not be "
                    "empty of everything."
                ).format(what=what, error=err.message)
            ) from None
        if not seen["is_adamw"]:
            article = "an" if seen["type"][:1].lower() in "aeiou" else "a"
            raise CheckError(
                _(
                    "{what} should be a torch.optim.AdamW, got {article} {type}: return "
                    "torch.optim.AdamW([...groups...])."
                ).format(what=what, article=article, type=seen["type"])
            )
        if seen["requires_grad"] != seen["requires_grad_before"]:
            flipped = sorted(
                n
                for n, f in seen["requires_grad"].items()
                if seen["requires_grad_before"].get(n) != f
            )
            raise CheckError(
                _(
                    "{what} changed requires_grad of {flipped}: make_optimizer only reads which "
                    "parameters are trainable; freezing is freeze_backbone's job."
                ).format(what=what, flipped=flipped)
            )
        groups = seen["groups"]
        requires_grad = seen["requires_grad"]
        in_groups = [n for group in groups for n in group["params"]]
        frozen = [
            n
            for n in in_groups
            if n in frozen_names or (n in requires_grad and not requires_grad[n])
        ]
        if frozen:
            raise CheckError(
                _(
                    "{what} put frozen parameters in the optimizer: {frozen}. Pass only parameters "
                    "with requires_grad=True (filter the head's too)."
                ).format(what=what, frozen=frozen)
            )
        twice = sorted({n for n in in_groups if in_groups.count(n) > 1})
        if twice:
            raise CheckError(
                _("{what} lists {twice} more than once: each parameter goes in one group.").format(
                    what=what, twice=twice
                )
            )
        expected = ([(body_names, backbone_lr)] if body_names else []) + [(head_names, head_lr)]
        got_lrs = [group["lr"] for group in groups]
        if len(groups) != len(expected):
            empty = [i for i, group in enumerate(groups) if not group["params"]]
            raise CheckError(
                _(
                    "{what} has {count} parameter group(s) with learning rates {lrs}; expected {expected}: "
                ).format(what=what, count=len(groups), lrs=got_lrs, expected=len(expected))
                + (
                    _("a backbone group at backbone_lr, then a head group at head_lr.")
                    if body_names
                    else _("only the head group, since nothing else is trainable.")
                )
                + (
                    _(" Group(s) {empty} are empty: leave an empty group out.").format(empty=empty)
                    if empty
                    else ""
                )
            )
        for i, ((names, lr), group) in enumerate(zip(expected, groups, strict=True)):
            role = "head" if names is head_names else "backbone"
            got_names = set(group["params"])
            if got_names != names or len(group["params"]) != len(names):
                hint = ""
                missing = names - got_names
                if role == "backbone" and any(not n.startswith("backbone.") for n in missing):
                    hint = _(
                        " Everything trainable outside the head belongs here, not only "
                        "model.backbone: model.parameters() minus the head's."
                    )
                elif any(not n.startswith(f"{head_attr}.") for n in got_names - names):
                    hint = _(
                        " Take the head's parameters from getattr(model, {head_attr!r}) "
                        "(a name prefix without the dot also matches its neighbours)."
                    ).format(head_attr=head_attr)
                raise CheckError(
                    _(
                        "group {i} of {what} should hold the trainable {role} parameters; missing "
                        "{missing}, unexpected {unexpected}.{hint}"
                    ).format(
                        i=i,
                        what=what,
                        role=role,
                        missing=sorted(missing),
                        unexpected=sorted(got_names - names),
                        hint=hint,
                    )
                )
            if not isinstance(group["lr"], (int, float)) or abs(group["lr"] - lr) > 1e-12:
                raise CheckError(
                    _(
                        "group {i} ({role}) of {what} has lr={got}, expected {lr}. Learning "
                        "rates per group: {lrs} (backbone_lr for the backbone group, head_lr for "
                        "the head's)."
                    ).format(i=i, role=role, what=what, got=group["lr"], lr=lr, lrs=got_lrs)
                )


def _draw_extract_features(d: Draw) -> Inputs:
    """A backbone (conv, batch norm with "pretraining" statistics, dropout) in either mode,
    raw images far from those statistics, float or (C, 1, 1) statistics, any batch_size."""
    c, n, training = d.draw(st.sampled_from([1, 3])), d.size(1, 9), d.draw(st.booleans())
    spec = {"seed": d.draw(st.integers(0, 99)), "c": c, "training": training}
    label = _("a backbone in {mode} mode").format(mode="train" if training else "eval")
    x = d.tensor(n, c, 6, 5, low=1.0, high=3.0)
    if d.draw(st.booleans()):
        mean, std = d.tensor(c, 1, 1, low=0.0, high=0.5), d.tensor(c, 1, 1, low=0.3, high=1.3)
    else:
        mean, std = 0.3, 0.4
    kwargs = {"batch_size": d.size(1, 8)} if d.draw(st.booleans()) else {}
    args = (Build(probes.build_contract_backbone, spec, label), x, mean, std)
    return Inputs(args, kwargs)


def _reference_extract_features(backbone, x, mean, std, batch_size=128):
    backbone.eval()
    with torch.no_grad():
        return backbone((x - mean) / std)


def _compare_features(got, expected, what: str, inputs: Inputs) -> None:
    """The features against the reference; features of x normalised with its own statistics,
    or not at all, are named."""
    check_type(got, torch.Tensor, what)
    check_shape(got, tuple(expected.shape), names="N F", what=what)
    if got.requires_grad:
        raise CheckError(
            _("{what} requires grad: run the backbone under torch.no_grad().").format(what=what)
        )
    if got.dtype != expected.dtype:
        raise CheckError(
            _(
                "{what} returned {got} features; the backbone and x are {dtype}. "
                "Keep x's dtype (no .float() working copy)."
            ).format(what=what, got=got.dtype, dtype=expected.dtype)
        )
    close = functools.partial(torch.allclose, rtol=1e-4, atol=1e-5)
    if not close(got, expected) and inputs.args:  # the hand-written cases name no slip
        backbone, x = inputs.args[0].make().eval(), inputs.args[1]
        with torch.no_grad():
            own = backbone((x - x.mean()) / x.std()) if x.numel() > 1 else None
            raw = backbone(x)
        if own is not None and close(got, own):
            raise CheckError(
                _(
                    "{what} normalised x with its own mean and std. Use the pretraining "
                    "statistics passed in as mean and std: the backbone only knows inputs "
                    "prepared that way."
                ).format(what=what)
            )
        if close(got, raw):
            raise CheckError(
                _("{what} did not normalise x: compute (x - mean) / std first.").format(what=what)
            )
    assert_close(
        got, expected, rtol=1e-4, atol=1e-5, what=_("the features from {what}").format(what=what)
    )


# The caller's backbone comes back as it was (modes, batch norm statistics, requires_grad
# flags, hooks), and so does x; a non-contiguous x and one on another device work.
EXTRACT_FEATURES = Contract(
    "extract_features",
    _reference_extract_features,
    _draw_extract_features,
    families=("values", "edges", "strides", "device"),
    compare=_compare_features,
    arg_names=("backbone", "x", "mean", "std"),
)


@uses(EXTRACT_FEATURES)
def check_extract_features(extract_features) -> None:
    """The contract: the features, the caller's backbone and x untouched, other layouts and
    devices. Here: eval mode and no graph while the backbone runs, batches of at most
    batch_size (128 by default), float64, the global random state untouched."""
    device = get_device()
    g = torch.Generator().manual_seed(3)
    cases = [  # (N, C, batch_size (None: the default), tensor stats?, dtype, starts in train mode?)
        (10, 1, 4, False, torch.float32, True),
        (7, 3, 1, True, torch.float64, False),
        (130, 1, None, False, torch.float32, False),
    ]
    for n, c, batch_size, tensor_stats, dtype, training in cases:
        case = {
            "seed": int(torch.randint(0, 10_000, (1,), generator=g)),
            "c": c,
            # statistics "from pretraining", far from those of the batch
            "running_mean": torch.randn(4, generator=g),
            "running_var": torch.rand(4, generator=g) + 0.5,
            "device": device,
            "dtype": dtype,
            "training": training,
            "batch_size": batch_size,
        }
        if tensor_stats:
            case["mean"] = (torch.rand(c, 1, 1, generator=g) * 0.5).to(device=device, dtype=dtype)
            case["std"] = (torch.rand(c, 1, 1, generator=g) + 0.3).to(device=device, dtype=dtype)
        else:
            case["mean"], case["std"] = 0.3, 0.4
        # (N, C, 6, 5) here; the probe hands the learner its transpose, non-contiguous (N, C, 5, 6)
        case["x"] = (torch.rand(n, c, 6, 5, generator=g) * 2 + 1).to(device=device, dtype=dtype)
        reference = probes.build_backbone(case).eval()
        x, mean, std = probes.features_input(case), case["mean"], case["std"]
        size = _("the default batch_size") if batch_size is None else f"batch_size={batch_size}"
        mode = "train" if training else "eval"
        what = _(
            "extract_features(backbone in {mode} mode, x of shape {shape} {dtype} "
            "(non-contiguous), {size})"
        ).format(mode=mode, shape=tuple(x.shape), dtype=dtype, size=size)
        seen = observe(probes.probe_extract_features, extract_features, case, what)
        if seen["rng_changed"]:
            raise CheckError(
                _(
                    "{what} changed the global random state (torch.manual_seed, or random numbers "
                    "drawn): in eval mode nothing is random, so leave the caller's random stream "
                    "alone."
                ).format(what=what)
            )
        calls = seen["calls"]
        if any(call["grad_enabled"] for call in calls):
            raise CheckError(
                _(
                    "{what} ran the backbone with grad enabled (so autograd recorded a graph, "
                    "even if you .detach() the result afterwards): run it under "
                    "torch.no_grad() or torch.inference_mode()."
                ).format(what=what)
            )
        if any(call["training"] or call["dropout_training"] for call in calls):
            raise CheckError(
                _(
                    "{what} ran the backbone in train mode (dropout and batch statistics on): "
                    "call backbone.eval() before computing features."
                ).format(what=what)
            )
        limit = 128 if batch_size is None else batch_size
        sizes = [call["n"] for call in calls]
        if calls and (max(sizes) > limit or sum(sizes) != n):
            default = _(" (its default, 128)") if batch_size is None else ""
            raise CheckError(
                _(
                    "{what} fed the backbone batches of {sizes}{more}; "
                    "expected batches of at most batch_size={limit}{default} covering all {n} "
                    "images once: loop over x[i:i + batch_size] for i in range(0, len(x), "
                    "batch_size)."
                ).format(
                    what=what,
                    sizes=sizes[:6],
                    more="..." if len(sizes) > 6 else "",
                    limit=limit,
                    default=default,
                    n=n,
                )
            )
        with torch.no_grad():
            expected = reference((x - mean) / std)
        _compare_features(seen["features"], expected, what, Inputs(()))


# Measured on this problem (3 labels per class, seeds 0-2): from scratch 0.61, one learning rate
# for all 0.58-0.67, fine-tuned with the two groups 0.73-0.76, linear probe 0.73-0.77.
MIN_ACCURACY_10 = 0.68
MIN_ACCURACY_3 = 0.8
PROCESS_EPOCHS = 4  # short runs that show how fine_tune trains, not how well


def _fine_tune_basics(seen: dict, what: str) -> None:
    """What every run must satisfy: a Module, a copy, the caller's model and data untouched,
    returned in eval mode."""
    if not seen["is_module"]:
        article = "an" if seen["type"][:1].lower() in "aeiou" else "a"
        hint = _(" Did you forget a `return`?") if seen["type"] == "NoneType" else ""
        raise CheckError(
            _("{what} should be a Module, got {article} {type}.{hint}").format(
                what=what, article=article, type=seen["type"], hint=hint
            )
        )
    if seen["pretrained_changed"] or seen["flags_changed"]:
        changed = seen["pretrained_changed"][:4] or _("its requires_grad flags")
        raise CheckError(
            _(
                "{what} changed the pretrained model ({changed}). Work on copy.deepcopy(pretrained) "
                "so that the caller's network (the published weights) stays as it was: deep-copy "
                "first, then replace the head, freeze or train the copy."
            ).format(what=what, changed=changed)
        )
    if seen["modes_changed"]:
        raise CheckError(
            _(
                "{what} changed the train/eval mode of the pretrained model it was given: call "
                "train() on your copy, not on `pretrained`."
            ).format(what=what)
        )
    if seen["same_object"]:
        raise CheckError(
            _("{what} returned the pretrained model itself; return a trained copy.").format(
                what=what
            )
        )
    if seen["data_changed"]:
        raise CheckError(
            _("{what} changed the caller's x or y in place: leave the data as it is.").format(
                what=what
            )
        )
    if seen["training"] or seen["modules_training"]:
        raise CheckError(
            _(
                "{what} returned a model with {modules} in train mode; return "
                "model.eval() (it sets every submodule)."
            ).format(what=what, modules=seen["modules_training"][:3])
        )


def _training_steps(seen: dict, what: str, num_epochs: int) -> None:
    """One full-batch forward in train mode with grad per epoch (forwards for logging, in eval
    mode or under no_grad, do not count)."""
    forwards = seen["forwards"]
    if not forwards:
        raise CheckError(
            _(
                "{what} never ran the pretrained backbone: fine-tune copy.deepcopy(pretrained) (a "
                "new network is training from scratch)."
            ).format(what=what)
        )
    steps = [f for f in forwards if f["grad_enabled"] and f["training"]]
    in_eval = [f for f in forwards if f["grad_enabled"] and not f["training"]]
    if not steps and in_eval:
        raise CheckError(
            _(
                "{what} ran all its {count} training forwards in eval mode: the copy of a "
                "pretrained model comes in eval mode, so call model.train() before the loop (batch "
                "norm then uses and learns the new data's statistics), and model.eval() at the end."
            ).format(what=what, count=len(in_eval))
        )
    if len(steps) != num_epochs:
        raise CheckError(
            _(
                "{what} ran {count} training forwards (train mode, grad enabled); with "
                "num_epochs={num_epochs} and full-batch training expected exactly one per epoch "
                "(one forward, backward and optimizer step each): loop over range(num_epochs), the "
                "argument, not a fixed number."
            ).format(what=what, count=len(steps), num_epochs=num_epochs)
        )
    if seen["stale_grads"]:
        raise CheckError(
            _(
                "{what}: in {count} of its backward passes the gradients were added to "
                "those of the step before (backward() accumulates into .grad): call "
                "optimizer.zero_grad() at every step, before loss.backward()."
            ).format(what=what, count=seen["stale_grads"])
        )
    sizes = sorted({f["n"] for f in steps})
    if sizes != [seen["n_train"]]:
        raise CheckError(
            _(
                "{what} trained on batches of {sizes}; full-batch training feeds all "
                "{n} labelled images at every step."
            ).format(what=what, sizes=sizes, n=seen["n_train"])
        )


def _backbone_moved(seen: dict, pretrained_state: dict) -> tuple[list[str], list[str]]:
    state = seen["state"] or {}
    names = [k for k in pretrained_state if k.startswith("backbone.") and "running" not in k]
    names = [k for k in names if not k.endswith("num_batches_tracked")]
    moved = [
        k
        for k in names
        if k in state
        and state[k].shape == pretrained_state[k].shape
        and not torch.allclose(
            state[k].cpu().float(), pretrained_state[k].cpu().float(), rtol=0, atol=1e-7
        )
    ]
    still = [k for k in names if k not in moved]
    return moved, still


def check_fine_tune(fine_tune) -> None:
    """Fine-tune a fresh pretrained net on 3 noisy digits per class: it must clearly beat
    scratch, and train the right way: a copy, train mode, num_epochs full-batch steps, the
    backbone at backbone_lr (not frozen, and still with backbone_lr=0), the head at head_lr,
    returned in eval mode, the caller's random stream not reseeded."""
    device = get_device()
    pretrained_state = {
        k: v.detach().cpu() for k, v in probes._pretrained(str(device)).state_dict().items()
    }
    subsets = [(10, MIN_ACCURACY_10, None), (3, MIN_ACCURACY_3, 3)]
    for num_classes, threshold, keep in subsets:
        case = {"device": device, "num_classes": num_classes, "keep": keep, "state": keep is None}
        xa, _xb, _ya, yb = probes.fine_tune_task(case)  # not `_`: that is the translation
        what = f"fine_tune(pretrained, x {tuple(xa.shape)}, y, num_classes={num_classes})"
        seen = observe(probes.probe_fine_tune, fine_tune, case, what)
        _fine_tune_basics(seen, what)
        logits = seen["logits"]
        if logits is None:
            raise CheckError(
                _("calling the model from {what} on held-out digits raised {error}.").format(
                    what=what, error=seen.get("logits_error")
                )
            )
        logits_what = _("logits of the model from {what}").format(what=what)
        check_type(logits, torch.Tensor, logits_what)
        check_shape(logits, (len(yb), num_classes), names="N classes", what=logits_what)
        _training_steps(seen, what + _(" (num_epochs left at its default)"), 60)
        if keep is None:
            moved, still = _backbone_moved(seen, pretrained_state)
            if still:
                raise CheckError(
                    _(
                        "after {what} these backbone parameters never moved: {still}. Fine-tuning "
                        "trains every layer (the backbone with backbone_lr): do not freeze the "
                        "backbone, and give its trainable parameters to the optimizer."
                    ).format(what=what, still=still[:4])
                )
        acc = (logits.detach().cpu().argmax(dim=1) == yb).float().mean().item()
        if acc < threshold:
            raise CheckError(
                _(
                    "the model from {what} reaches {acc:.3f} accuracy on held-out noisy digits; a "
                    "fine-tuned pretrained network reaches well above {threshold} (from scratch "
                    "gets much less). Start from the pretrained weights, give it a fresh trainable "
                    "head, and train with the two learning rates for num_epochs steps."
                ).format(what=what, acc=acc, threshold=threshold)
            )
    # Short runs that show how it trains: the learning rates per group, num_epochs, the seed.
    base = {"device": device, "num_classes": 10, "keep": None, "state": True, "logits": False}
    runs = {}
    for name, backbone_lr, head_lr, rng_seed in [
        ("head only", 0.0, 1e-2, 0),
        ("nothing", 0.0, 0.0, 0),
        ("head only, other seed", 0.0, 1e-2, 1),
    ]:
        kwargs = {"num_epochs": PROCESS_EPOCHS, "backbone_lr": backbone_lr, "head_lr": head_lr}
        case = {**base, "kwargs": kwargs, "rng_seed": rng_seed}
        what = (
            f"fine_tune(pretrained, x, y, 10, num_epochs={PROCESS_EPOCHS}, "
            f"backbone_lr={backbone_lr}, head_lr={head_lr})"
        )
        seen = observe(probes.probe_fine_tune, fine_tune, case, what)
        _fine_tune_basics(seen, what)
        _training_steps(seen, what, PROCESS_EPOCHS)
        moved, _still = _backbone_moved(seen, pretrained_state)
        if moved:
            raise CheckError(
                _(
                    "after {what} the backbone moved ({moved}), though backbone_lr is 0: give the "
                    "backbone's parameters their own group with lr=backbone_lr (make_optimizer), "
                    "not one learning rate for the whole model."
                ).format(what=what, moved=moved[:3])
            )
        runs[name] = seen["state"]
    head_keys = [k for k in runs["nothing"] if k.startswith("head.")]

    def same_head(a: str, b: str) -> bool:
        return all(
            k in runs[a] and k in runs[b] and torch.equal(runs[a][k].cpu(), runs[b][k].cpu())
            for k in head_keys
        )

    if same_head("head only", "nothing"):
        raise CheckError(
            _(
                "fine_tune with head_lr=1e-2 leaves the new head exactly where head_lr=0 leaves it "
                "(after {steps} steps): the head does not train. Keep the new head trainable "
                "and give it a group with lr=head_lr."
            ).format(steps=PROCESS_EPOCHS)
        )
    initial = [runs["nothing"][k] for k in head_keys if k.endswith("weight")]
    random_init = any(w.numel() > 1 and bool((w != w.flatten()[0]).any()) for w in initial)
    if random_init and same_head("head only", "head only, other seed"):
        raise CheckError(
            _(
                "fine_tune gives the same model whatever the caller's random state: did you call "
                "torch.manual_seed inside it? That resets the caller's random stream; leave seeding "
                "to the caller."
            )
        )


# --- LoRA (section 10) -------------------------------------------------------------------


def _lora_case(g: torch.Generator, device, in_f, out_f, r, alpha, bias, dtype, x_shape) -> dict:
    """A LoRA case: the base's seed and shape, r and alpha, an input x and trained-looking A, B."""
    return {
        "seed": int(torch.randint(0, 10_000, (1,), generator=g)),
        "rng_seed": int(torch.randint(0, 10_000, (1,), generator=g)),
        "in_features": in_f,
        "out_features": out_f,
        "bias": bias,
        "dtype": dtype,
        "device": device,
        "r": r,
        "alpha": alpha,
        "x": torch.randn(*x_shape, in_f, generator=g).to(device=device, dtype=dtype),
        "A": torch.randn(r, in_f, generator=g).to(device=device, dtype=dtype),
        "B": torch.randn(out_f, r, generator=g).to(device=device, dtype=dtype),
    }


def _lora_reference(case: dict, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    base = probes.build_base(case)
    x = case["x"]
    with torch.no_grad():
        return base(x) + (case["alpha"] / case["r"]) * (x @ A.T) @ B.T


def check_LoRALinear(LoRALinear) -> None:
    """Square and rectangular layers, with and without bias, float32 and float64, inputs of
    several ranks, r larger than in_features: shapes, dtype and device of A and B, the base
    frozen and untouched, B zero and A random (so that a gradient reaches B), alpha / r, the
    output with trained A and B, and A drawn from the caller's random stream."""
    device = get_device()
    g = torch.Generator().manual_seed(9)
    cases = [  # in, out, r, alpha, bias, dtype, x's leading shape
        (8, 8, 2, 4.0, True, torch.float32, (2, 3)),
        (7, 3, 1, 1.0, False, torch.float32, (4,)),
        (6, 10, 4, 16.0, True, torch.float64, (2, 1, 5)),
        (3, 5, 8, 8.0, True, torch.float32, (1,)),  # r larger than in_features is allowed
    ]
    first = None
    for in_f, out_f, r, alpha, bias, dtype, x_shape in cases:
        case = _lora_case(g, device, in_f, out_f, r, alpha, bias, dtype, x_shape)
        dt = "" if dtype == torch.float32 else f", {dtype}"
        what = f"LoRALinear(nn.Linear({in_f}, {out_f}, bias={bias}{dt}), r={r}, alpha={alpha})"
        with_forward = _("{what} and its forward").format(what=what)
        seen = observe(probes.probe_lora_linear, LoRALinear, case, with_forward)
        if not seen["is_module"]:
            raise CheckError(_("{what} is not an nn.Module: subclass nn.Module.").format(what=what))
        for key, name, shape in (("A", "lora_A", (r, in_f)), ("B", "lora_B", (out_f, r))):
            p = seen[key]
            if p is None:
                raise CheckError(
                    _(
                        "{what} has no tensor attribute {name}: store the adapter's matrices as "
                        "self.lora_A (r, in_features) and self.lora_B (out_features, r)."
                    ).format(what=what, name=name)
                )
            if not p["parameter"]:
                raise CheckError(
                    _(
                        "{what}.{name} is a plain tensor, not an nn.Parameter: the optimizer would "
                        "never see it. Wrap it in nn.Parameter(...)."
                    ).format(what=what, name=name)
                )
            if tuple(p["shape"]) != shape:
                raise CheckError(
                    _(
                        "{what}.{name} has shape {got}, expected {shape}: lora_A is "
                        "(r, in_features) and maps x down to r numbers, lora_B is (out_features, r) "
                        "and maps them back up."
                    ).format(what=what, name=name, got=tuple(p["shape"]), shape=shape)
                )
            if p["dtype"] != dtype or p["device"].type != torch.device(device).type:
                raise CheckError(
                    _(
                        "{what}.{name} is {got_dtype} on {got_device}, but the base layer is "
                        "{dtype} on {device}: create it with device=base.weight.device, "
                        "dtype=base.weight.dtype."
                    ).format(
                        what=what,
                        name=name,
                        got_dtype=p["dtype"],
                        got_device=p["device"],
                        dtype=dtype,
                        device=device,
                    )
                )
        if seen["forward_error"] is not None:
            raise CheckError(
                _(
                    "calling {what} on x of shape {shape} raised "
                    "{error}. The forward is base(x) + scaling * (x @ lora_A.T) @ "
                    "lora_B.T; `@` works on any number of leading dimensions (torch.mm does not)."
                ).format(what=what, shape=tuple(case["x"].shape), error=seen["forward_error"])
            )
        trainable = sorted(n for n, f in seen["flags"].items() if f)
        if trainable != ["lora_A", "lora_B"]:
            raise CheckError(
                _(
                    "the trainable parameters of {what} are {trainable}; expected exactly "
                    "['lora_A', 'lora_B']: freeze the base (base.requires_grad_(False)), and keep A "
                    "and B trainable."
                ).format(what=what, trainable=trainable)
            )
        if not seen["base_is_given"] or not seen["base_unchanged"]:
            raise CheckError(
                _(
                    "{what} must keep the given layer as self.base with its values unchanged "
                    "(it holds the pretrained weights); do not build a new nn.Linear or "
                    "re-initialise it."
                ).format(what=what)
            )
        A0, B0 = seen["A"]["value"].cpu(), seen["B"]["value"].cpu()
        if B0.abs().max().item() != 0:
            raise CheckError(
                _(
                    "{what}.lora_B is not zero at initialisation (max |B| = {largest:.3g}): "
                    "the adapted layer then differs from the pretrained one before any training. "
                    "Start B at zero and A at random."
                ).format(what=what, largest=B0.abs().max().item())
            )
        spread = (A0 - A0.flatten()[0]).abs().max().item()
        if A0.abs().max().item() == 0 or (A0.numel() > 1 and spread == 0):
            how = _("zero") if A0.abs().max().item() == 0 else _("constant")
            raise CheckError(
                _(
                    "{what}.lora_A is {how} at "
                    "initialisation: B's gradient is multiplied by A, so with A zero nothing ever "
                    "trains (and a constant A makes all r directions the same). Draw A at random."
                ).format(what=what, how=how)
            )
        assert_close(
            seen["out_init"],
            probes.build_base(case)(case["x"]).detach(),
            what=_("{what}(x) right after construction (it must equal base(x))").format(what=what),
        )
        if seen["base_grad"]:
            raise CheckError(
                _(
                    "after backward through {what} the base's weight has a gradient: freeze it."
                ).format(what=what)
            )
        grad_B = seen["grad_B"]
        if grad_B is None or grad_B.abs().max().item() == 0:
            raise CheckError(
                _(
                    "after backward through {what} lora_B has no gradient: the forward must use "
                    "lora_B (and A must be random)."
                ).format(what=what)
            )
        scaling = seen["scaling"]
        if not isinstance(scaling, (int, float)) or abs(scaling - alpha / r) > 1e-9 * max(
            1, alpha / r
        ):
            raise CheckError(
                _(
                    "{what}.scaling is {scaling!r}, expected alpha / r = {expected:g}: the scaling "
                    "keeps the size of the update comparable when you change r."
                ).format(what=what, scaling=scaling, expected=alpha / r)
            )
        if seen["out_set"] is None:
            raise CheckError(
                _("{what}: could not set lora_A and lora_B to trained values.").format(what=what)
            )
        expected = _lora_reference(case, case["A"], case["B"])
        unscaled = _lora_reference({**case, "alpha": case["r"]}, case["A"], case["B"])
        if alpha != r and torch.allclose(
            seen["out_set"].cpu(), unscaled.cpu(), atol=1e-5, rtol=1e-4
        ):
            raise CheckError(
                _(
                    "{what} with trained A and B gives base(x) + (x @ A.T) @ B.T: the update is not "
                    "scaled. Multiply it by self.scaling = alpha / r = {expected:g}."
                ).format(what=what, expected=alpha / r)
            )
        assert_close(
            seen["out_set"],
            expected,
            what=_(
                "{what}(x) with trained lora_A and lora_B (base(x) + alpha / r * x A^T B^T)"
            ).format(what=what),
        )
        if first is None:
            first = (case, A0)
    case, A0 = first
    other = observe(
        probes.probe_lora_linear,
        LoRALinear,
        {**case, "rng_seed": case["rng_seed"] + 1},
        _("LoRALinear(...) under another global seed"),
    )
    if other["A"] is not None and torch.equal(other["A"]["value"].cpu(), A0):
        raise CheckError(
            _(
                "LoRALinear draws the same lora_A whatever the caller's random state: did you call "
                "torch.manual_seed inside it? That resets the caller's random stream; let the init "
                "draw from the global generator."
            )
        )


def check_merge_lora(merge_lora) -> None:
    """Square and rectangular layers, with and without bias, float32 and float64, several
    scalings: a new nn.Linear with base.weight + scaling * B @ A, the base's bias (none when
    it has none), the base's dtype and device, the adapter left unchanged, a second merge of
    the same adapter giving the same layer."""
    device = get_device()
    g = torch.Generator().manual_seed(11)
    cases = [  # in, out, r, scaling, bias, dtype
        (6, 4, 2, 4.0, True, torch.float32),
        (5, 5, 3, 0.5, False, torch.float32),  # square: a transposed update has the right shape
        (4, 9, 1, 2.0, True, torch.float64),
    ]
    for in_f, out_f, r, scaling, bias, dtype in cases:
        case = _lora_case(g, device, in_f, out_f, r, scaling * r, bias, dtype, (3,))
        case["scaling"] = scaling
        dt = "" if dtype == torch.float32 else f", {dtype}"
        what = _("merge_lora(layer) for a layer with base {base}, r={r}, scaling={scaling}").format(
            base=f"nn.Linear({in_f}, {out_f}, bias={bias}{dt})", r=r, scaling=scaling
        )
        seen = observe(probes.probe_merge_lora, merge_lora, case, what)
        if seen["changed"]:
            raise CheckError(
                _(
                    "{what} changed the adapter it was given ({changed}): adding the update "
                    "into layer.base.weight in place means the adapter now adds it a second time "
                    "(merged twice). Build a new nn.Linear (or a copy of the base) for the sum."
                ).format(what=what, changed=seen["changed"])
            )
        if not seen["is_linear"]:
            raise CheckError(
                _("{what} returned {type}; return a new nn.Linear.").format(
                    what=what, type=seen["type"]
                )
            )
        if seen["is_base"]:
            raise CheckError(
                _(
                    "{what} returned layer.base itself: return a new nn.Linear, so that the adapter "
                    "and the merged layer do not share (and later change) one weight."
                ).format(what=what)
            )
        w = seen["weight"]
        base = probes.build_base(case)
        A, B = case["A"], case["B"]
        with torch.no_grad():
            expected_w = base.weight + scaling * B @ A
        if tuple(w["shape"]) != (out_f, in_f):
            raise CheckError(
                _(
                    "the weight from {what} has shape {got}, expected {shape} "
                    "(base.weight's): the update is lora_B @ lora_A, (out, r) @ (r, in)."
                ).format(what=what, got=tuple(w["shape"]), shape=(out_f, in_f))
            )
        if w["dtype"] != dtype or w["device"].type != torch.device(device).type:
            raise CheckError(
                _(
                    "the layer from {what} is {got_dtype} on {got_device}, but the base is {dtype} "
                    "on {device}: create it with the base's device and dtype (nn.Linear(..., "
                    "device=..., dtype=...)), or copy the base."
                ).format(
                    what=what,
                    got_dtype=w["dtype"],
                    got_device=w["device"],
                    dtype=dtype,
                    device=device,
                )
            )
        if seen["has_bias"] != bias:
            template = (
                _(
                    "the layer from {what} has bias, but the base has none: use bias=base.bias "
                    "is not None (a bias where the base has none starts at random values)."
                )
                if seen["has_bias"]
                else _(
                    "the layer from {what} has no bias, but the base has one: use bias=base.bias "
                    "is not None (a bias where the base has none starts at random values)."
                )
            )
            raise CheckError(template.format(what=what))
        got_w = w["value"].cpu()
        if torch.allclose(got_w, (base.weight + B @ A).detach().cpu(), atol=1e-6) and scaling != 1:
            raise CheckError(
                _(
                    "the weight from {what} is base.weight + lora_B @ lora_A: the scaling is "
                    "missing. Use base.weight + layer.scaling * lora_B @ lora_A."
                ).format(what=what)
            )
        if in_f == out_f and torch.allclose(
            got_w, (base.weight + scaling * (B @ A).T).detach().cpu(), atol=1e-6
        ):
            raise CheckError(
                _(
                    "the weight from {what} adds (B @ A).T, the transposed update (only a square "
                    "layer lets that through): the update is lora_B @ lora_A, (out, r) @ (r, in)."
                ).format(what=what)
            )
        assert_close(got_w, expected_w.detach(), what=_("the weight from {what}").format(what=what))
        if bias:
            bias_what = _("the bias from {what}").format(what=what)
            assert_close(seen["bias"]["value"], base.bias.detach(), what=bias_what)
        if seen["out_error"] is not None:
            raise CheckError(
                _("calling the layer from {what} raised {error}.").format(
                    what=what, error=seen["out_error"]
                )
            )
        with torch.no_grad():
            expected_out = base(case["x"]) + scaling * (case["x"] @ A.T) @ B.T
        out_what = _("the output of the layer from {what}").format(what=what)
        assert_close(seen["out"], expected_out, what=out_what)
        if seen["second_weight"] is None or not torch.allclose(
            seen["second_weight"].cpu(), got_w, atol=1e-6
        ):
            raise CheckError(
                _(
                    "calling {what} a second time on the same adapter gives another weight: merging "
                    "must not change the adapter (or keep any state), or the second merge adds the "
                    "update twice."
                ).format(what=what)
            )
