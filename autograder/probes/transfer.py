"""Probes for 08_transfer (see autograder/probes/__init__.py).

Every probe builds its model from the case with a fixed seed (``build_net``,
``build_backbone``, the pretrained ``DigitNet``), so that the check can build the same one
for its reference; it runs the learner's function and reports what it saw: which object came
back, the head's shape, dtype and device, which parameters require grad, the optimizer's
groups as parameter names, the weights and buffers afterwards, the model's outputs.
"""

from __future__ import annotations

import copy
import functools

import torch
import torch.nn.functional as F
from torch import nn

from tutorial_lib.data import load_digits


class Net(nn.Module):
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


def build_net(case: dict) -> Net:
    """The case's ``Net``: seed, widths, head name, extra part, device and dtype."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])
        model = Net(case["in_features"], case["out_features"], case["head_attr"], case.get("extra"))
    return model.to(device=case["device"], dtype=case.get("dtype", torch.float32))


def state_of(model: nn.Module) -> dict[str, torch.Tensor]:
    """A copy of the model's state_dict, as a plain dict."""
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _named_flags(model: nn.Module) -> dict[str, bool]:
    return {name: bool(p.requires_grad) for name, p in model.named_parameters()}


def _error(err: Exception) -> str:
    return f"{type(err).__name__}: {err}"[:500]


def probe_replace_head(replace_head, case: dict) -> dict:
    """What came back, the head afterwards, the whole state_dict afterwards, logits for case x."""
    head_attr = case["head_attr"]
    model = build_net(case).eval()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"] + 1)  # the new head's initial weights: the same every run
        result = replace_head(model, case["num_classes"], head_attr=head_attr)
    head = getattr(model, head_attr, None)
    seen = {
        "returned_model": result is model,
        "returned_type": type(result).__name__,
        "head_type": type(head).__name__,
        "head": None,
        "state": state_of(model),
    }
    if isinstance(head, nn.Linear):
        seen["head"] = {
            "in_features": head.in_features,
            "weight": head.weight.detach().clone(),
            "dtype": head.weight.dtype,
            "device": head.weight.device,
        }
    try:
        with torch.no_grad():
            seen["logits"] = model(case["x"])
    except Exception as err:  # a head of the wrong width: the check says which
        seen["logits"] = None
        seen["logits_error"] = _error(err)
    return seen


def prepare_freeze_case(case: dict) -> Net:
    """The model freeze_backbone gets: in the case's mode, head frozen earlier, one bias frozen."""
    model = build_net(case)
    model.train(case["mode"] == "train")
    getattr(model, case["head_attr"]).requires_grad_(False)  # frozen earlier: must come back
    model.backbone[0].bias.requires_grad_(False)  # already frozen: must stay so
    return model


def probe_freeze_backbone(freeze_backbone, case: dict) -> dict:
    """What came back, every module's mode, every parameter's requires_grad, the state after."""
    model = prepare_freeze_case(case)
    result = freeze_backbone(model, head_attr=case["head_attr"])
    return {
        "returned_model": result is model,
        "returned_type": type(result).__name__,
        "modes": {name: bool(m.training) for name, m in model.named_modules()},
        "requires_grad": _named_flags(model),
        "state": state_of(model),
    }


def frozen_in_case(model: nn.Module, prefixes: list[str]) -> list[str]:
    """The names of the parameters the case freezes: each prefix is a parameter or module name."""
    return [
        name
        for name, _ in model.named_parameters()
        if any(name == p or name.startswith(p + ".") for p in prefixes)
    ]


def probe_make_optimizer(make_optimizer, case: dict) -> dict:
    """The optimizer's type and its groups as (lr, weight_decay, parameter names), and which
    parameters require grad after the call. A parameter not in the model is named "?"."""
    model = build_net(case)
    params = dict(model.named_parameters())
    for name in frozen_in_case(model, case["frozen"]):
        params[name].requires_grad_(False)
    opt = make_optimizer(model, case["backbone_lr"], case["head_lr"], head_attr=case["head_attr"])
    names = {id(p): n for n, p in model.named_parameters()}
    groups = None
    if isinstance(opt, torch.optim.Optimizer):
        groups = [
            {
                "lr": group.get("lr"),
                "weight_decay": group.get("weight_decay"),
                "params": [names.get(id(p), "?") for p in group["params"]],
            }
            for group in opt.param_groups
        ]
    return {
        "type": type(opt).__name__,
        "is_adamw": isinstance(opt, torch.optim.AdamW),
        "groups": groups,
        "requires_grad": _named_flags(model),
    }


def build_backbone(case: dict) -> nn.Sequential:
    """A small conv backbone with "pretraining" batch norm statistics from the case."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])
        backbone = nn.Sequential(
            nn.Conv2d(case["c"], 4, 3, padding=1),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.AdaptiveAvgPool2d(2),
            nn.Flatten(),  # (N, 16)
        )
    with torch.no_grad():
        backbone[1].running_mean.copy_(case["running_mean"])
        backbone[1].running_var.copy_(case["running_var"])
    return backbone.to(device=case["device"], dtype=case["dtype"]).train(case["training"])


def features_input(case: dict) -> torch.Tensor:
    """The case's images as a non-contiguous (N, C, 5, 6) tensor (the case holds (N, C, 6, 5))."""
    return case["x"].transpose(2, 3)


def probe_extract_features(extract_features, case: dict) -> dict:
    """The features, the backbone's mode afterwards, and its state_dict afterwards."""
    backbone = build_backbone(case)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])  # dropout, should it run in train mode: the same every run
        feats = extract_features(
            backbone, features_input(case), case["mean"], case["std"], batch_size=case["batch_size"]
        )
    return {"features": feats, "training": bool(backbone.training), "state": state_of(backbone)}


class DigitNet(nn.Module):
    """The pretrained network fine_tune starts from: backbone -> (N, 64), head -> (N, classes)."""

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
def transfer_data():
    """Clean source digits (x, y) and noisy target digits, split into 3 labels per class for
    training and the rest for testing; all normalised with the source statistics, on the CPU."""
    x_all, y_all = load_digits()
    perm = torch.randperm(len(y_all), generator=torch.Generator().manual_seed(10))
    source, target = perm[:800], perm[800:]
    mean, std = x_all[source].mean(), x_all[source].std()
    xs, ys = (x_all[source] - mean) / std, y_all[source]
    noise = torch.randn(x_all[target].shape, generator=torch.Generator().manual_seed(11))
    xt, yt = (x_all[target] + 0.3 * noise - mean) / std, y_all[target]
    g = torch.Generator().manual_seed(14)
    chosen = []
    for c in range(10):
        members = torch.nonzero(yt == c).flatten()
        chosen.append(members[torch.randperm(len(members), generator=g)[:3]])
    train_idx = torch.cat(chosen)
    rest = torch.ones(len(yt), dtype=torch.bool)
    rest[train_idx] = False
    test_idx = torch.nonzero(rest).flatten()
    return (xs, ys), (xt[train_idx], yt[train_idx], xt[test_idx], yt[test_idx])


@functools.lru_cache(maxsize=1)
def _pretrained(device_name: str) -> DigitNet:
    """A DigitNet trained on the clean digits (cached; the probe hands out deep copies)."""
    device = torch.device(device_name)
    (xs, ys), _ = transfer_data()
    xs, ys = xs.to(device), ys.to(device)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(12)
        model = DigitNet(10).to(device)
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
    return model.eval()


def fine_tune_task(case: dict) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x_train, y_train, x_test, y_test) on the CPU; with ``keep`` only the digits below it."""
    _, (x_tr, y_tr, x_te, y_te) = transfer_data()
    keep = case.get("keep")
    if keep is None:
        return x_tr, y_tr, x_te, y_te
    a, b = y_tr < keep, y_te < keep
    return x_tr[a], y_tr[a], x_te[b], y_te[b]


def probe_fine_tune(fine_tune, case: dict) -> dict:
    """What came back, whether the pretrained model it got changed, and the logits of the
    returned model on the held-out digits (under no_grad, in the mode it was returned in)."""
    device = torch.device(case["device"])
    pretrained = copy.deepcopy(_pretrained(str(device)))
    before = state_of(pretrained)
    flags = [p.requires_grad for p in pretrained.parameters()]
    xa, ya, xb, _ = (t.to(device) for t in fine_tune_task(case))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        tuned = fine_tune(pretrained, xa, ya, case["num_classes"])
    after = pretrained.state_dict()
    seen = {
        "is_module": isinstance(tuned, nn.Module),
        "type": type(tuned).__name__,
        "pretrained_changed": [
            k
            for k, v in before.items()
            if k not in after or after[k].shape != v.shape or not torch.equal(after[k], v)
        ],
        "flags_changed": flags != [p.requires_grad for p in pretrained.parameters()],
        "same_object": tuned is pretrained,
        "training": bool(getattr(tuned, "training", False)),
        "logits": None,
    }
    if seen["is_module"]:
        try:
            with torch.no_grad():
                seen["logits"] = tuned(xb)
        except Exception as err:
            seen["logits_error"] = _error(err)
    return seen
