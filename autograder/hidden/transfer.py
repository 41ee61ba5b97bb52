"""Hidden checks for 08_transfer.

Every check reaches the learner's function through a probe (autograder/probes/transfer.py)
and judges the data that comes back; the references are built here from the same case.
"""

from __future__ import annotations

import functools

import torch

from autograder.boundary import AnswerRaised, observe
from autograder.probes import transfer as probes
from tutorial_lib.checks import CheckError, assert_close, check_shape, check_type
from tutorial_lib.device import get_device


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


def check_replace_head(replace_head) -> None:
    """Several head names, widths, class counts, dtypes; the rest of the model untouched."""
    device = get_device()
    g = torch.Generator().manual_seed(0)
    cases = [
        ("head", 64, 10, 3, torch.float32),
        ("fc", 7, 5, 1, torch.float32),
        ("classifier", 33, 2, 2, torch.float64),
        ("head", 5, 4, 4, torch.float32),  # as many classes as before: still a fresh layer
    ]
    for head_attr, in_features, old_classes, num_classes, dtype in cases:
        case = {
            "seed": int(torch.randint(0, 10_000, (1,), generator=g)),
            "in_features": in_features,
            "out_features": old_classes,
            "head_attr": head_attr,
            "dtype": dtype,
            "device": device,
            "num_classes": num_classes,
        }
        reference = probes.build_net(case).eval()
        old_head = getattr(reference, head_attr)
        old_weight = old_head.weight.detach().clone()
        before = probes.state_of(reference)
        case["x"] = torch.randn(3, 6, generator=g).to(device=device, dtype=dtype)
        what = f"replace_head(model, {num_classes}, head_attr={head_attr!r}) (old head {old_head})"
        try:
            seen = observe(probes.probe_replace_head, replace_head, case, what)
        except AnswerRaised as err:
            if err.type_name != "AttributeError":
                raise
            raise CheckError(
                f"{what} raised AttributeError: {err.message}. The head is getattr(model, head_attr); "
                "replace it with setattr(model, head_attr, new_layer)."
            ) from None
        if not seen["returned_model"]:
            raise CheckError(f"{what} returned {seen['returned_type']}; return the model itself.")
        new_head = seen["head"]
        if new_head is None:
            raise CheckError(
                f"model.{head_attr} after {what} should be a Linear, got {seen['head_type']}."
            )
        if new_head["in_features"] != in_features:
            raise CheckError(
                f"after {what} the head has in_features={new_head['in_features']}, expected "
                f"{in_features}: read it from the old head (old.in_features), do not hard-code it."
            )
        weight = new_head["weight"]
        if tuple(weight.shape) != (num_classes, in_features):
            raise CheckError(
                f"after {what} the head's weight has shape {tuple(weight.shape)}, expected "
                f"{(num_classes, in_features)}. Setting .out_features does not resize the weight: "
                "build a new nn.Linear."
            )
        if new_head["dtype"] != dtype or new_head["device"].type != device.type:
            raise CheckError(
                f"after {what} the head is {new_head['dtype']} on {new_head['device']}, but "
                f"the model is {dtype} on {device}: create it with device=old.weight.device, "
                "dtype=old.weight.dtype."
            )
        if num_classes == old_classes and torch.equal(weight.cpu(), old_weight.cpu()):
            raise CheckError(f"after {what} the head still has the old weights: make a new layer.")
        changed = _changed(before, seen["state"], skip_prefix=f"{head_attr}.")
        if changed:
            raise CheckError(f"{what} changed parts of the model other than the head: {changed}.")
        if seen["logits"] is None:
            raise CheckError(
                f"calling the model after {what} raised {seen.get('logits_error')}: the new head "
                "must take the old head's inputs."
            )
        check_shape(
            seen["logits"], (3, num_classes), names="N classes", what=f"logits after {what}"
        )


def check_freeze_backbone(freeze_backbone) -> None:
    """Only the head stays trainable (even if it was frozen), whatever it is called."""
    device = get_device()
    cases = [("head", None, "train"), ("fc", "fc_norm", "train"), ("classifier", None, "eval")]
    for head_attr, extra, mode in cases:
        case = {
            "seed": 1,
            "in_features": 5,
            "out_features": 3,
            "head_attr": head_attr,
            "extra": extra,
            "mode": mode,
            "device": device,
        }
        reference = probes.build_net(case)
        before = probes.state_of(reference)
        what = f"freeze_backbone(model, head_attr={head_attr!r})"
        seen = observe(probes.probe_freeze_backbone, freeze_backbone, case, what)
        if not seen["returned_model"]:
            raise CheckError(f"{what} returned {seen['returned_type']}; return the model itself.")
        if any(t != (mode == "train") for t in seen["modes"].values()):
            raise CheckError(
                f"{what} changed the train/eval mode. model.eval() does not freeze anything; "
                "requires_grad does. Leave the mode alone."
            )
        expected = {
            name: name.startswith(f"{head_attr}.") for name, _ in reference.named_parameters()
        }
        got = seen["requires_grad"]
        head_frozen = [n for n, e in expected.items() if e and not got.get(n, False)]
        if head_frozen:
            raise CheckError(
                f"after {what} the head's parameters {head_frozen} are frozen: nothing could learn. "
                "Freeze everything else, then set requires_grad=True on the head's parameters."
            )
        still_trainable = [n for n, e in expected.items() if not e and got.get(n, True)]
        if still_trainable:
            raise CheckError(
                f"after {what} these parameters outside the head are still trainable: "
                f"{still_trainable}. Freeze every parameter that is not in model.{head_attr} "
                "(not only model.backbone, and not by matching the start of a name without the dot)."
            )
        changed = _changed(before, seen["state"])
        if changed:
            raise CheckError(
                f"{what} changed values of {changed}; only requires_grad should change."
            )


def check_make_optimizer(make_optimizer) -> None:
    """Groups in order, the right learning rates, only trainable parameters, none twice."""
    device = get_device()
    cases = [  # (label, head name, what is frozen: parameter or module names)
        ("all trainable", "head", []),
        ("frozen backbone", "head", ["backbone", "neck"]),
        ("first layer frozen", "fc", ["backbone.0"]),
        ("head bias frozen", "classifier", ["classifier.bias"]),
    ]
    for label, head_attr, frozen_prefixes in cases:
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
        }
        reference = probes.build_net(case)
        frozen_names = set(probes.frozen_in_case(reference, frozen_prefixes))
        all_names = [n for n, _ in reference.named_parameters()]
        in_head = {n for n in all_names if n.startswith(f"{head_attr}.")}
        head_names = {n for n in all_names if n in in_head and n not in frozen_names}
        body_names = {n for n in all_names if n not in in_head and n not in frozen_names}
        what = (
            f"make_optimizer(model with {label}, {backbone_lr}, {head_lr}, head_attr={head_attr!r})"
        )
        try:
            seen = observe(probes.probe_make_optimizer, make_optimizer, case, what)
        except AnswerRaised as err:
            if err.type_name != "ValueError":
                raise
            raise CheckError(
                f"{what} raised ValueError: {err.message}. Each parameter may appear in one group "
                "only, and the backbone group must not include the head."
            ) from None
        if not seen["is_adamw"]:
            article = "an" if seen["type"][:1].lower() in "aeiou" else "a"
            raise CheckError(f"{what} should be an AdamW, got {article} {seen['type']}.")
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
                f"{what} put frozen parameters in the optimizer: {frozen}. Pass only parameters "
                "with requires_grad=True."
            )
        expected = ([(body_names, backbone_lr)] if body_names else []) + [(head_names, head_lr)]
        got_lrs = [group["lr"] for group in groups]
        if len(groups) != len(expected):
            raise CheckError(
                f"{what} has {len(groups)} parameter group(s) with learning rates "
                f"{got_lrs}; expected {len(expected)}: "
                + (
                    "a backbone group at backbone_lr, then a head group at head_lr."
                    if body_names
                    else "only the head group, since nothing else is trainable."
                )
            )
        for i, ((names, lr), group) in enumerate(zip(expected, groups, strict=True)):
            role = "head" if names is head_names else "backbone"
            got_names = set(group["params"])
            if got_names != names or len(group["params"]) != len(names):
                raise CheckError(
                    f"group {i} of {what} should hold the trainable {role} parameters; missing "
                    f"{sorted(names - got_names)}, unexpected {sorted(got_names - names)}."
                )
            if abs(group["lr"] - lr) > 1e-12:
                raise CheckError(
                    f"group {i} ({role}) of {what} has lr={group['lr']}, expected {lr}. Learning "
                    f"rates per group: {got_lrs}."
                )


def check_extract_features(extract_features) -> None:
    """Pretraining normalisation, eval mode, no graph, any batch size, the mode restored."""
    device = get_device()
    g = torch.Generator().manual_seed(3)
    cases = [  # (N, C, batch_size, tensor stats?, dtype, starts in train mode?)
        (10, 1, 4, False, torch.float32, True),
        (1, 3, 128, True, torch.float32, True),
        (7, 3, 1, True, torch.float64, False),
        (9, 1, 3, False, torch.float32, True),
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
        reference = probes.build_backbone(case)
        before = probes.state_of(reference)
        reference.eval()
        x, mean, std = probes.features_input(case), case["mean"], case["std"]
        what = (
            f"extract_features(backbone, x of shape {tuple(x.shape)} {dtype}, batch_size="
            f"{batch_size})"
        )
        seen = observe(probes.probe_extract_features, extract_features, case, what)
        feats = seen["features"]
        check_type(feats, torch.Tensor, what)
        check_shape(feats, (n, 16), names="N F", what=what)
        if feats.requires_grad:
            raise CheckError(f"{what} requires grad: run the backbone under torch.no_grad().")
        if seen["training"] != training:
            raise CheckError(
                f"{what}: the backbone was in {'train' if training else 'eval'} mode before the call "
                f"and is in {'train' if seen['training'] else 'eval'} mode after it. Remember "
                "backbone.training and restore it with backbone.train(was_training)."
            )
        if _changed(before, seen["state"]):
            raise CheckError(
                f"{what} changed batch norm's running statistics: the backbone ran in train mode. "
                "Call backbone.eval() before computing features."
            )
        with torch.no_grad():
            expected = reference((x - mean) / std)
            own = reference((x - x.mean()) / x.std())
            raw = reference(x)
        feats = feats.to(expected.device)
        close = functools.partial(torch.allclose, rtol=1e-4, atol=1e-5)
        if feats.dtype == expected.dtype and not close(feats, expected):
            if close(feats, own):
                raise CheckError(
                    f"{what} normalised x with its own mean and std. Use the pretraining statistics "
                    "passed in as mean and std: the backbone only knows inputs prepared that way."
                )
            if close(feats, raw):
                raise CheckError(f"{what} did not normalise x: compute (x - mean) / std first.")
        assert_close(feats, expected, rtol=1e-4, atol=1e-5, what=f"the features from {what}")


# Measured on this problem (3 labels per class, seeds 0-2): from scratch 0.61, one learning rate
# for all 0.58-0.67, fine-tuned with the two groups 0.73-0.76, linear probe 0.73-0.77.
MIN_ACCURACY_10 = 0.68
MIN_ACCURACY_3 = 0.8


def check_fine_tune(fine_tune) -> None:
    """Fine-tune a fresh pretrained net on 3 noisy digits per class; it must clearly beat scratch."""
    device = get_device()
    subsets = [(10, MIN_ACCURACY_10, None), (3, MIN_ACCURACY_3, 3)]
    for num_classes, threshold, keep in subsets:
        case = {"device": device, "num_classes": num_classes, "keep": keep}
        xa, _, _, yb = probes.fine_tune_task(case)
        what = f"fine_tune(pretrained, x {tuple(xa.shape)}, y, num_classes={num_classes})"
        seen = observe(probes.probe_fine_tune, fine_tune, case, what)
        if not seen["is_module"]:
            article = "an" if seen["type"][:1].lower() in "aeiou" else "a"
            hint = " Did you forget a `return`?" if seen["type"] == "NoneType" else ""
            raise CheckError(f"{what} should be a Module, got {article} {seen['type']}.{hint}")
        if seen["pretrained_changed"] or seen["flags_changed"]:
            raise CheckError(
                f"{what} changed the pretrained model. Work on copy.deepcopy(pretrained) so that the "
                "caller's network (the published weights) stays as it was."
            )
        if seen["same_object"]:
            raise CheckError(f"{what} returned the pretrained model itself; return a trained copy.")
        if seen["training"]:
            raise CheckError(f"{what} returned a model in train mode; return model.eval().")
        logits = seen["logits"]
        if logits is None:
            raise CheckError(
                f"calling the model from {what} on held-out digits raised {seen.get('logits_error')}."
            )
        check_type(logits, torch.Tensor, f"logits of the model from {what}")
        check_shape(
            logits,
            (len(yb), num_classes),
            names="N classes",
            what=f"logits of the model from {what}",
        )
        acc = (logits.detach().cpu().argmax(dim=1) == yb).float().mean().item()
        if acc < threshold:
            raise CheckError(
                f"the model from {what} reaches {acc:.3f} accuracy on held-out noisy digits; a "
                f"fine-tuned pretrained network reaches well above {threshold} (from scratch gets "
                "much less). Start from the pretrained weights, give it a fresh trainable head, and "
                "train with the two learning rates for num_epochs steps."
            )
