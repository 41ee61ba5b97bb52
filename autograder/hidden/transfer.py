"""Hidden checks for 08_transfer."""

from __future__ import annotations

import copy
import functools

import torch
import torch.nn.functional as F
from torch import nn

from tutorial_lib.checks import CheckError, assert_close, check_shape, check_type
from tutorial_lib.data import load_digits
from tutorial_lib.device import get_device


class _Net(nn.Module):
    """A tiny model with a backbone, an optional extra part, and a linear head under any name."""

    def __init__(
        self, in_features: int, out_features: int, head_attr: str, extra: str | None = None
    ):
        super().__init__()
        self.head_attr = head_attr
        self.backbone = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU())
        self.neck = nn.Linear(8, in_features)
        if extra is not None:  # a module whose name starts like the head's: fc_norm next to fc
            setattr(self, extra, nn.LayerNorm(in_features))
        self.extra = extra
        setattr(self, head_attr, nn.Linear(in_features, out_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.neck(self.backbone(x))
        if self.extra is not None:
            h = getattr(self, self.extra)(h)
        return getattr(self, self.head_attr)(h)


def _state(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _changed(
    before: dict[str, torch.Tensor], model: nn.Module, skip_prefix: str | None = None
) -> list[str]:
    after = model.state_dict()
    return [
        k
        for k, v in before.items()
        if (skip_prefix is None or not k.startswith(skip_prefix))
        and (k not in after or after[k].shape != v.shape or not torch.equal(after[k], v))
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
        torch.manual_seed(int(torch.randint(0, 10_000, (1,), generator=g)))
        model = _Net(in_features, old_classes, head_attr).to(device=device, dtype=dtype).eval()
        old_head = getattr(model, head_attr)
        old_weight = old_head.weight.detach().clone()
        before = _state(model)
        what = f"replace_head(model, {num_classes}, head_attr={head_attr!r}) (old head {old_head})"
        try:
            result = replace_head(model, num_classes, head_attr=head_attr)
        except AttributeError as err:
            raise CheckError(
                f"{what} raised AttributeError: {err}. The head is getattr(model, head_attr); "
                "replace it with setattr(model, head_attr, new_layer)."
            ) from None
        if result is not model:
            raise CheckError(f"{what} returned {type(result).__name__}; return the model itself.")
        new_head = getattr(model, head_attr)
        check_type(new_head, nn.Linear, f"model.{head_attr} after {what}")
        if new_head.in_features != in_features:
            raise CheckError(
                f"after {what} the head has in_features={new_head.in_features}, expected "
                f"{in_features}: read it from the old head (old.in_features), do not hard-code it."
            )
        if tuple(new_head.weight.shape) != (num_classes, in_features):
            raise CheckError(
                f"after {what} the head's weight has shape {tuple(new_head.weight.shape)}, expected "
                f"{(num_classes, in_features)}. Setting .out_features does not resize the weight: "
                "build a new nn.Linear."
            )
        if new_head.weight.dtype != dtype or new_head.weight.device.type != device.type:
            raise CheckError(
                f"after {what} the head is {new_head.weight.dtype} on {new_head.weight.device}, but "
                f"the model is {dtype} on {device}: create it with device=old.weight.device, "
                "dtype=old.weight.dtype."
            )
        if num_classes == old_classes and torch.equal(new_head.weight.detach(), old_weight):
            raise CheckError(f"after {what} the head still has the old weights: make a new layer.")
        changed = _changed(before, model, skip_prefix=f"{head_attr}.")
        if changed:
            raise CheckError(f"{what} changed parts of the model other than the head: {changed}.")
        x = torch.randn(3, 6, generator=g).to(device=device, dtype=dtype)
        check_shape(model(x), (3, num_classes), names="N classes", what=f"logits after {what}")


def _expected_trainable(model: nn.Module, head_attr: str) -> dict[str, bool]:
    return {name: name.startswith(f"{head_attr}.") for name, _ in model.named_parameters()}


def check_freeze_backbone(freeze_backbone) -> None:
    """Only the head stays trainable (even if it was frozen), whatever it is called."""
    device = get_device()
    cases = [("head", None, "train"), ("fc", "fc_norm", "train"), ("classifier", None, "eval")]
    for head_attr, extra, mode in cases:
        torch.manual_seed(1)
        model = _Net(5, 3, head_attr, extra=extra).to(device)
        model.train(mode == "train")
        getattr(model, head_attr).requires_grad_(False)  # frozen earlier: must come back
        model.backbone[0].bias.requires_grad_(False)  # already frozen: must stay so
        before = _state(model)
        what = f"freeze_backbone(model, head_attr={head_attr!r})"
        result = freeze_backbone(model, head_attr=head_attr)
        if result is not model:
            raise CheckError(f"{what} returned {type(result).__name__}; return the model itself.")
        modes = {name: m.training for name, m in model.named_modules()}
        if any(t != (mode == "train") for t in modes.values()):
            raise CheckError(
                f"{what} changed the train/eval mode. model.eval() does not freeze anything; "
                "requires_grad does. Leave the mode alone."
            )
        expected = _expected_trainable(model, head_attr)
        got = {name: p.requires_grad for name, p in model.named_parameters()}
        head_frozen = [n for n, e in expected.items() if e and not got[n]]
        if head_frozen:
            raise CheckError(
                f"after {what} the head's parameters {head_frozen} are frozen: nothing could learn. "
                "Freeze everything else, then set requires_grad=True on the head's parameters."
            )
        still_trainable = [n for n, e in expected.items() if not e and got[n]]
        if still_trainable:
            raise CheckError(
                f"after {what} these parameters outside the head are still trainable: "
                f"{still_trainable}. Freeze every parameter that is not in model.{head_attr} "
                "(not only model.backbone, and not by matching the start of a name without the dot)."
            )
        changed = _changed(before, model)
        if changed:
            raise CheckError(
                f"{what} changed values of {changed}; only requires_grad should change."
            )


def check_make_optimizer(make_optimizer) -> None:
    """Groups in order, the right learning rates, only trainable parameters, none twice."""
    device = get_device()
    cases = [
        ("all trainable", "head", lambda m: None),
        (
            "frozen backbone",
            "head",
            lambda m: (m.backbone.requires_grad_(False), m.neck.requires_grad_(False)),
        ),
        ("first layer frozen", "fc", lambda m: m.backbone[0].requires_grad_(False)),
        ("head bias frozen", "classifier", lambda m: m.classifier.bias.requires_grad_(False)),
    ]
    for label, head_attr, freeze in cases:
        torch.manual_seed(2)
        model = _Net(4, 3, head_attr).to(device)
        freeze(model)
        backbone_lr, head_lr = 3e-4, 2e-2
        what = (
            f"make_optimizer(model with {label}, {backbone_lr}, {head_lr}, head_attr={head_attr!r})"
        )
        try:
            opt = make_optimizer(model, backbone_lr, head_lr, head_attr=head_attr)
        except ValueError as err:
            raise CheckError(
                f"{what} raised ValueError: {err}. Each parameter may appear in one group only, "
                "and the backbone group must not include the head."
            ) from None
        check_type(opt, torch.optim.AdamW, what)
        head = getattr(model, head_attr)
        head_ids = {id(p) for p in head.parameters() if p.requires_grad}
        body_ids = {
            id(p)
            for p in model.parameters()
            if p.requires_grad and id(p) not in {id(q) for q in head.parameters()}
        }
        names = {id(p): n for n, p in model.named_parameters()}
        in_groups = [id(p) for group in opt.param_groups for p in group["params"]]
        params = dict(model.named_parameters())
        frozen = [names[i] for i in in_groups if i in names and not params[names[i]].requires_grad]
        if frozen:
            raise CheckError(
                f"{what} put frozen parameters in the optimizer: {frozen}. Pass only parameters "
                "with requires_grad=True."
            )
        expected = ([(body_ids, backbone_lr)] if body_ids else []) + [(head_ids, head_lr)]
        got_lrs = [group["lr"] for group in opt.param_groups]
        if len(opt.param_groups) != len(expected):
            raise CheckError(
                f"{what} has {len(opt.param_groups)} parameter group(s) with learning rates "
                f"{got_lrs}; expected {len(expected)}: "
                + (
                    "a backbone group at backbone_lr, then a head group at head_lr."
                    if body_ids
                    else "only the head group, since nothing else is trainable."
                )
            )
        for i, ((ids, lr), group) in enumerate(zip(expected, opt.param_groups, strict=True)):
            role = "head" if ids is head_ids else "backbone"
            got_ids = {id(p) for p in group["params"]}
            if got_ids != ids or len(group["params"]) != len(ids):
                missing = sorted(names[j] for j in ids - got_ids)
                extra = sorted(names.get(j, "?") for j in got_ids - ids)
                raise CheckError(
                    f"group {i} of {what} should hold the trainable {role} parameters; missing "
                    f"{missing}, unexpected {extra}."
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
        torch.manual_seed(int(torch.randint(0, 10_000, (1,), generator=g)))
        backbone = nn.Sequential(
            nn.Conv2d(c, 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),  # (N, 16)
        )
        with torch.no_grad():  # statistics "from pretraining", far from those of the batch
            backbone[1].running_mean.copy_(torch.randn(4, generator=g))
            backbone[1].running_var.copy_(torch.rand(4, generator=g) + 0.5)
        backbone = backbone.to(device=device, dtype=dtype).train(training)
        if tensor_stats:
            mean = (torch.rand(c, 1, 1, generator=g) * 0.5).to(device=device, dtype=dtype)
            std = (torch.rand(c, 1, 1, generator=g) + 0.3).to(device=device, dtype=dtype)
        else:
            mean, std = 0.3, 0.4
        x = (torch.rand(n, c, 6, 5, generator=g) * 2 + 1).transpose(
            2, 3
        )  # non-contiguous (N, C, 5, 6)
        x = x.to(device=device, dtype=dtype)
        before = _state(backbone)
        reference = copy.deepcopy(backbone).eval()
        what = (
            f"extract_features(backbone, x of shape {tuple(x.shape)} {dtype}, batch_size="
            f"{batch_size})"
        )
        feats = extract_features(backbone, x, mean, std, batch_size=batch_size)
        check_shape(feats, (n, 16), names="N F", what=what)
        if feats.requires_grad:
            raise CheckError(f"{what} requires grad: run the backbone under torch.no_grad().")
        if backbone.training != training:
            raise CheckError(
                f"{what}: the backbone was in {'train' if training else 'eval'} mode before the call "
                f"and is in {'train' if backbone.training else 'eval'} mode after it. Remember "
                "backbone.training and restore it with backbone.train(was_training)."
            )
        if _changed(before, backbone):
            raise CheckError(
                f"{what} changed batch norm's running statistics: the backbone ran in train mode. "
                "Call backbone.eval() before computing features."
            )
        with torch.no_grad():
            expected = reference((x - mean) / std)
            own = reference((x - x.mean()) / x.std())
            raw = reference(x)
        close = functools.partial(torch.allclose, rtol=1e-4, atol=1e-5)
        if not close(feats, expected):
            if close(feats, own):
                raise CheckError(
                    f"{what} normalised x with its own mean and std. Use the pretraining statistics "
                    "passed in as mean and std: the backbone only knows inputs prepared that way."
                )
            if close(feats, raw):
                raise CheckError(f"{what} did not normalise x: compute (x - mean) / std first.")
        assert_close(feats, expected, rtol=1e-4, atol=1e-5, what=f"the features from {what}")


class _DigitNet(nn.Module):
    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(32 * 4 * 4, 64),
            nn.ReLU(),
        )
        self.head = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))


@functools.lru_cache(maxsize=1)
def _transfer_problem(device_name: str):
    """A network pretrained on clean digits, and few-label noisy digits: (model, data) on device."""
    device = torch.device(device_name)
    x_all, y_all = load_digits()
    perm = torch.randperm(len(y_all), generator=torch.Generator().manual_seed(10))
    source, target = perm[:800], perm[800:]
    mean, std = x_all[source].mean(), x_all[source].std()
    xs, ys = ((x_all[source] - mean) / std).to(device), y_all[source].to(device)
    noise = torch.randn(x_all[target].shape, generator=torch.Generator().manual_seed(11))
    xt, yt = ((x_all[target] + 0.3 * noise - mean) / std).to(device), y_all[target].to(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(12)
        model = _DigitNet(10).to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
        g = torch.Generator().manual_seed(13)
        model.train()
        for _ in range(5):
            order = torch.randperm(len(ys), generator=g)
            for start in range(0, len(ys), 64):
                idx = order[start : start + 64].to(device)
                loss = F.cross_entropy(model(xs[idx]), ys[idx])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    model.eval()
    g = torch.Generator().manual_seed(14)
    chosen = []
    for c in range(10):
        members = torch.nonzero(yt.cpu() == c).flatten()
        chosen.append(members[torch.randperm(len(members), generator=g)[:3]])
    train_idx = torch.cat(chosen)
    rest = torch.ones(len(yt), dtype=torch.bool)
    rest[train_idx] = False
    test_idx = torch.nonzero(rest).flatten()
    return model, (xt[train_idx], yt[train_idx], xt[test_idx], yt[test_idx])


def _accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return (model(x).argmax(dim=1) == y).float().mean().item()


# Measured on this problem (3 labels per class, seeds 0-2): from scratch 0.61, one learning rate
# for all 0.58-0.67, fine-tuned with the two groups 0.73-0.76, linear probe 0.73-0.77.
MIN_ACCURACY_10 = 0.68
MIN_ACCURACY_3 = 0.8


def check_fine_tune(fine_tune) -> None:
    """Fine-tune a fresh pretrained net on 3 noisy digits per class; it must clearly beat scratch."""
    device = get_device()
    pretrained, (x_tr, y_tr, x_te, y_te) = _transfer_problem(str(device))
    before = _state(pretrained)
    flags = [p.requires_grad for p in pretrained.parameters()]
    subsets = [(10, MIN_ACCURACY_10, None), (3, MIN_ACCURACY_3, 3)]
    for num_classes, threshold, keep in subsets:
        if keep is None:
            xa, ya, xb, yb = x_tr, y_tr, x_te, y_te
        else:  # only the digits 0, 1, 2: a 3-class task
            mask_a, mask_b = y_tr < keep, y_te < keep
            xa, ya, xb, yb = x_tr[mask_a], y_tr[mask_a], x_te[mask_b], y_te[mask_b]
        what = f"fine_tune(pretrained, x {tuple(xa.shape)}, y, num_classes={num_classes})"
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            tuned = fine_tune(pretrained, xa, ya, num_classes)
        check_type(tuned, nn.Module, what)
        if _changed(before, pretrained) or flags != [
            p.requires_grad for p in pretrained.parameters()
        ]:
            raise CheckError(
                f"{what} changed the pretrained model. Work on copy.deepcopy(pretrained) so that the "
                "caller's network (the published weights) stays as it was."
            )
        if tuned is pretrained:
            raise CheckError(f"{what} returned the pretrained model itself; return a trained copy.")
        if tuned.training:
            raise CheckError(f"{what} returned a model in train mode; return model.eval().")
        check_shape(
            tuned(xb[:4]),
            (4, num_classes),
            names="N classes",
            what=f"logits of the model from {what}",
        )
        acc = _accuracy(tuned, xb, yb)
        if acc < threshold:
            raise CheckError(
                f"the model from {what} reaches {acc:.3f} accuracy on held-out noisy digits; a "
                f"fine-tuned pretrained network reaches well above {threshold} (from scratch gets "
                "much less). Start from the pretrained weights, give it a fresh trainable head, and "
                "train with the two learning rates for num_epochs steps."
            )
