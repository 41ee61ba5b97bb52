"""Probes for 09_transfer (see autograder/probes/__init__.py).

Every probe builds its model from the case with a fixed seed (``build_net``,
``build_backbone``, the pretrained ``DigitNet``), so that the check can build the same one
for its reference; it runs the learner's function and reports what it saw: which object came
back, the head's shape, dtype and device, which parameters require grad, the optimizer's
groups as parameter names, the weights and buffers afterwards, the model's outputs.
"""

from __future__ import annotations

import copy
import functools
import warnings

import torch
import torch.nn.functional as F
from torch import nn

from autograder.boundary import modes_now
from tutorial_lib.data import load_digits


class Net(nn.Module):
    """A tiny model with a backbone, a neck, optional extra parts, and a head under any name.

    Options (all from the case): ``extra`` a LayerNorm whose name starts like the head's
    (``fc_norm`` next to ``fc``); ``root_param`` a parameter on the root module itself (a
    ``cls_token``); ``head_kind`` ``"linear"`` or ``"seq"`` (LayerNorm then Linear);
    ``head_bias``; ``aux`` a side Linear registered *after* the head (so the head is not the
    last child); ``shared`` a ``shared`` Linear whose weight *is* the neck's (a layer shared
    in the body: one parameter, two modules; ``named_parameters()`` names it once).
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        head_attr: str,
        extra: str | None = None,
        root_param: bool = False,
        head_kind: str = "linear",
        head_bias: bool = True,
        aux: bool = False,
        shared: bool = False,
    ):
        super().__init__()
        self.head_attr = head_attr
        self.backbone = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU())
        self.neck = nn.Linear(8, in_features)
        if extra is not None:  # a module whose name starts like the head's: fc_norm next to fc
            setattr(self, extra, nn.LayerNorm(in_features))
        self.extra = extra
        if root_param:  # a parameter of the root module itself, as a ViT's cls_token
            self.cls_token = nn.Parameter(torch.linspace(-0.5, 0.5, in_features))
        else:
            self.cls_token = None
        if shared:  # unused in forward; its weight is the neck's
            self.shared = nn.Linear(8, in_features, bias=False)
            self.shared.weight = self.neck.weight
        if head_kind == "seq":
            head = nn.Sequential(
                nn.LayerNorm(in_features), nn.Linear(in_features, out_features, bias=head_bias)
            )
        else:
            head = nn.Linear(in_features, out_features, bias=head_bias)
        setattr(self, head_attr, head)
        if aux:  # registered after the head: the last child is not the head
            self.aux = nn.Linear(in_features, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.neck(self.backbone(x))
        if self.cls_token is not None:
            h = h + self.cls_token
        if self.extra is not None:
            h = getattr(self, self.extra)(h)
        head = getattr(self, self.head_attr)
        weight = getattr(head, "weight", None)
        if isinstance(weight, torch.Tensor) and weight.dtype != h.dtype:
            h = h.to(weight.dtype)  # a head kept in another dtype than the body
        return head(h)


def build_net(case: dict) -> Net:
    """The case's ``Net``: seed, widths, head name, extra parts, device and dtype (and a head
    dtype of its own when the case gives ``head_dtype``)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])
        model = Net(
            case["in_features"],
            case["out_features"],
            case["head_attr"],
            case.get("extra"),
            root_param=case.get("root_param", False),
            head_kind=case.get("head_kind", "linear"),
            head_bias=case.get("head_bias", True),
            aux=case.get("aux", False),
            shared=case.get("shared", False),
        )
        model.register_buffer("steps_seen", torch.tensor(3))  # a buffer next to the parameters
    model = model.to(device=case["device"], dtype=case.get("dtype", torch.float32))
    if case.get("head_dtype") is not None:
        getattr(model, case["head_attr"]).to(case["head_dtype"])
    return model


def state_of(model: nn.Module) -> dict[str, torch.Tensor]:
    """A copy of the model's state_dict, as a plain dict."""
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _named_flags(model: nn.Module) -> dict[str, bool]:
    return {name: bool(p.requires_grad) for name, p in model.named_parameters()}


def _error(err: Exception) -> str:
    return f"{type(err).__name__}: {err}"[:500]


def _is_meta(device) -> bool:
    return torch.device(device).type == "meta"


def probe_replace_head(replace_head, case: dict) -> dict:
    """What came back, the head afterwards (and whether it is the old head object, changed
    in place), logits for case x. On the meta device (no values) only the head's description
    comes back."""
    head_attr = case["head_attr"]
    meta = _is_meta(case["device"])
    model = build_net(case).eval()
    old = getattr(model, head_attr)
    modes = modes_now()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case.get("rng_seed", case["seed"] + 1))
        result = replace_head(model, case["num_classes"], head_attr=head_attr)
    after = modes_now()
    head = getattr(model, head_attr, None)
    seen = {
        # process-wide settings left switched, [name, before, after]: the contract watches
        # them on its float32 cases; a switch on the float64 or meta path shows only here
        "modes": [[k, v, after[k]] for k, v in modes.items() if after[k] != v],
        "returned_model": result is model,
        "returned_type": type(result).__name__,
        "head_type": type(head).__name__,
        "head_is_old": head is old,
        "head": None,
        "logits": None,
    }
    if isinstance(head, nn.Linear):
        seen["head"] = {
            "in_features": head.in_features,
            "out_features": head.out_features,
            "shape": list(head.weight.shape),
            "weight": None if meta else head.weight.detach().clone(),
            "bias": None if meta or head.bias is None else head.bias.detach().clone(),
            "dtype": head.weight.dtype,
            "device": head.weight.device,
        }
    try:
        with torch.no_grad():
            x = torch.empty(3, 6, device="meta") if meta else case["x"]
            logits = model(x)
        seen["logits"] = list(logits.shape) if meta else logits
    except Exception as err:  # a head of the wrong width: the check says which
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


def _number(value):
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value.item())  # AdamW also takes a tensor learning rate
    return value


def probe_make_optimizer(make_optimizer, case: dict) -> dict:
    """The optimizer's type and its groups as (lr, weight_decay, parameter names), which
    parameters require grad after the call. A parameter not in the model is named "?"."""
    model = build_net(case)
    params = dict(model.named_parameters())
    for name in frozen_in_case(model, case["frozen"]):
        params[name].requires_grad_(False)
    flags_before = _named_flags(model)

    opt = make_optimizer(model, case["backbone_lr"], case["head_lr"], head_attr=case["head_attr"])
    names = {id(p): n for n, p in model.named_parameters()}
    groups = None
    if isinstance(opt, torch.optim.Optimizer):
        groups = [
            {
                "lr": _number(group.get("lr")),
                "weight_decay": _number(group.get("weight_decay")),
                "params": [names.get(id(p), "?") for p in group["params"]],
            }
            for group in opt.param_groups
        ]
    return {
        "type": type(opt).__name__,
        "is_adamw": isinstance(opt, torch.optim.AdamW),
        "groups": groups,
        "requires_grad_before": flags_before,
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


def build_contract_backbone(spec: dict) -> nn.Sequential:
    """build_backbone for a contract (autograder/contracts.py: Build): float32 on the CPU,
    its "pretraining" batch norm statistics drawn from the spec's seed, and no dropout (a
    forward in train mode then gives the same wrong features every time it is judged)."""
    g = torch.Generator().manual_seed(spec["seed"])
    case = {
        "seed": spec["seed"],
        "c": spec["c"],
        "running_mean": torch.randn(4, generator=g),
        "running_var": torch.rand(4, generator=g) + 0.5,
        "device": "cpu",
        "dtype": torch.float32,
        "training": spec["training"],
    }
    backbone = build_backbone(case)
    backbone[3] = nn.Identity()
    return backbone.train(spec["training"])  # the new layer in the backbone's mode too


def features_input(case: dict) -> torch.Tensor:
    """The case's images as a non-contiguous (N, C, 5, 6) tensor (the case holds (N, C, 6, 5))."""
    return case["x"].transpose(2, 3)


def probe_extract_features(extract_features, case: dict) -> dict:
    """The features and how the backbone was run: the batch sizes its first layer saw, with
    grad mode and the backbone's mode at each; whether the global random state changed, or
    autograd was left switched off (the
    backbone and x afterwards are the contract's: autograder/hidden/transfer.py). ``batch_size`` None: the
    argument is left out (its default applies)."""
    backbone = build_backbone(case)
    calls: list[dict] = []

    def record(module, args):
        calls.append(
            {
                "n": int(args[0].shape[0]) if args and isinstance(args[0], torch.Tensor) else -1,
                "grad_enabled": bool(torch.is_grad_enabled()),
                "training": bool(backbone.training),
                "dropout_training": bool(backbone[3].training),
            }
        )

    handle = backbone[0].register_forward_pre_hook(record)
    device = case["device"]  # the case's tensors cross on the CPU where it is meta (no values)
    x = features_input(case).to(device)
    mean, std = (
        s.to(device) if isinstance(s, torch.Tensor) else s for s in (case["mean"], case["std"])
    )
    kwargs = {} if case["batch_size"] is None else {"batch_size": case["batch_size"]}
    torch.set_grad_enabled(True)  # the caller's autograd on, as at a notebook's top level
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])  # dropout, should it run in train mode: the same every run
        rng_before = torch.get_rng_state()
        try:
            feats = extract_features(backbone, x, mean, std, **kwargs)
        except NotImplementedError as err:
            if not _is_meta(device) or not str(err):
                raise  # the stub
            feats = {"error": _error(err)}  # a copy out of meta: the features left the device
        finally:
            torch.set_grad_enabled(True)
        rng_changed = not torch.equal(rng_before, torch.get_rng_state())
    handle.remove()
    if _is_meta(case["device"]) and isinstance(feats, torch.Tensor):  # no values: where it is
        feats = {"device": feats.device.type, "shape": list(feats.shape), "dtype": feats.dtype}
    return {
        "features": feats,
        "calls": calls,
        "rng_changed": rng_changed,
    }


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
    """What came back, whether the pretrained model it got changed (weights, buffers,
    requires_grad, mode), and the returned model's weights and logits. ``case["kwargs"]`` are
    passed on (num_epochs, the learning rates); the global random generator is seeded with
    ``case["rng_seed"]`` before the call."""
    device = torch.device(case["device"])
    pretrained = copy.deepcopy(_pretrained(str(device)))
    before = state_of(pretrained)
    flags = [p.requires_grad for p in pretrained.parameters()]
    modes = [m.training for m in pretrained.modules()]
    xa, ya, xb, _ = (t.to(device) for t in fine_tune_task(case))
    xa_before, ya_before = xa.clone(), ya.clone()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case.get("rng_seed", 0))
        tuned = fine_tune(pretrained, xa, ya, case["num_classes"], **case.get("kwargs", {}))
    after = pretrained.state_dict()
    is_module = isinstance(tuned, nn.Module)
    seen = {
        "is_module": is_module,
        "type": type(tuned).__name__,
        "pretrained_changed": [
            k
            for k, v in before.items()
            if k not in after or after[k].shape != v.shape or not torch.equal(after[k], v)
        ],
        "flags_changed": flags != [p.requires_grad for p in pretrained.parameters()],
        "modes_changed": modes != [m.training for m in pretrained.modules()],
        "data_changed": not (torch.equal(xa, xa_before) and torch.equal(ya, ya_before)),
        "same_object": tuned is pretrained,
        "training": bool(getattr(tuned, "training", False)),
        "modules_training": sorted(
            name or "(root)" for name, m in tuned.named_modules() if m.training
        )
        if is_module
        else [],
        "n_train": len(ya),
        "state": state_of(tuned) if is_module and case.get("state") else None,
        "logits": None,
    }
    if is_module and case.get("logits", True):
        try:
            with torch.no_grad():
                seen["logits"] = tuned(xb)
        except Exception as err:
            seen["logits_error"] = _error(err)
    return seen


# --- LoRA (section 10) -------------------------------------------------------------------


def build_base(case: dict) -> nn.Linear:
    """The case's pretrained ``nn.Linear``: seed, widths, bias, device and dtype."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])
        base = nn.Linear(case["in_features"], case["out_features"], bias=case.get("bias", True))
    return base.to(device=case["device"], dtype=case["dtype"])


def _tensor_or_none(value) -> torch.Tensor | None:
    return value.detach().clone() if isinstance(value, torch.Tensor) else None


def _describe_param(p) -> dict | None:
    if not isinstance(p, torch.Tensor):
        return None
    return {
        "shape": list(p.shape),
        "dtype": p.dtype,
        "device": p.device,
        "parameter": isinstance(p, nn.Parameter),
        "value": p.detach().clone(),
    }


def probe_lora_devices(LoRALinear, case: dict) -> dict:
    """``LoRALinear(base, r, alpha)`` built around a base on PyTorch's ``meta`` device (a
    stand-in for a GPU, here as built: the contract moves the layer afterwards): the device
    of each of its parameters and buffers, by name; ``raised`` where building failed there."""
    base = build_base({**case, "device": "meta"})
    try:
        with torch.random.fork_rng(devices=[]):
            layer = LoRALinear(base, case["r"], case["alpha"])
    except Exception as err:  # meta holds no values: an init that reads one cannot tell
        return {"raised": _error(err), "devices": {}}
    tensors = {**dict(layer.named_parameters()), **dict(layer.named_buffers())}
    return {"raised": None, "devices": {k: str(t.device) for k, t in tensors.items()}}


def probe_lora_linear(LoRALinear, case: dict) -> dict:
    """Build ``LoRALinear(base, r, alpha)`` under the global seed ``case["rng_seed"]`` and report:
    its parameters (names, flags, shapes), ``lora_A``/``lora_B``/``scaling``, whether ``base`` is
    the given layer with its values unchanged, the output and gradients at initialisation."""
    base = build_base(case)
    before = state_of(base)
    x = case["x"]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["rng_seed"])
        layer = LoRALinear(base, case["r"], case["alpha"])
    scaling = getattr(layer, "scaling", None)
    if isinstance(scaling, torch.Tensor) and scaling.numel() == 1:
        scaling = scaling.item()
    seen = {
        "is_module": isinstance(layer, nn.Module),
        "base_is_given": getattr(layer, "base", None) is base,
        "base_unchanged": all(torch.equal(v, base.state_dict()[k]) for k, v in before.items()),
        "flags": _named_flags(layer) if isinstance(layer, nn.Module) else {},
        "A": _describe_param(getattr(layer, "lora_A", None)),
        "B": _describe_param(getattr(layer, "lora_B", None)),
        "scaling": scaling if isinstance(scaling, (int, float)) else repr(scaling)[:80],
        "out_init": None,
        "grad_A": None,
        "grad_B": None,
        "base_grad": None,
        "forward_error": None,
    }
    try:
        out = layer(x)
    except Exception as err:  # reported as data: the check says what it means
        seen["forward_error"] = _error(err)
        return seen
    seen["out_init"] = out.detach().clone()
    if out.requires_grad:
        out.sum().backward()
        with warnings.catch_warnings():  # .grad of a non-leaf factor warns (on stderr)
            warnings.simplefilter("ignore")
            seen["grad_A"] = _tensor_or_none(getattr(getattr(layer, "lora_A", None), "grad", None))
            seen["grad_B"] = _tensor_or_none(getattr(getattr(layer, "lora_B", None), "grad", None))
    seen["base_grad"] = base.weight.grad is not None
    return seen


class Adapter(nn.Module):
    """The parts of a LoRA layer that ``merge_lora`` reads: ``base``, ``lora_A``, ``lora_B``,
    ``scaling``. Calling it is not part of merging, so it cannot be called."""

    def __init__(self, base: nn.Linear, A: torch.Tensor, B: torch.Tensor, scaling: float):
        super().__init__()
        self.base = base.requires_grad_(False)
        self.lora_A = nn.Parameter(A.clone())
        self.lora_B = nn.Parameter(B.clone())
        self.scaling = scaling

    def forward(self, x):
        raise RuntimeError("merge_lora should read the layer's weights, not call the layer")


def probe_merge_lora(merge_lora, case: dict) -> dict:
    """Run ``merge_lora`` on an adapter built from the case, twice; report the merged layer (type,
    weight, bias, dtype, device, output on ``case["x"]``, tensors shared with the adapter),
    whether the adapter's tensors are unchanged afterwards, and whether a second merge gives
    the same weight; its state_dict keys and parameter names. On the meta device: only the merged
    layer's type and devices."""
    base = build_base(case)
    A, B = (case[k].to(case["device"]) for k in ("A", "B"))  # they cross on the CPU for meta
    layer = Adapter(base, A, B, case["scaling"])
    if _is_meta(case["device"]):  # no values: only where the merged layer's tensors are
        try:
            merged = merge_lora(layer)
        except NotImplementedError as err:
            if not str(err):
                raise  # the stub
            return {"error": _error(err)}  # a copy out of meta: a layer made elsewhere
        return {
            "type": type(merged).__name__,
            "is_linear": isinstance(merged, nn.Linear),
            "devices": {k: v.device.type for k, v in merged.state_dict().items()}
            if isinstance(merged, nn.Module)
            else {},
        }
    before = state_of(layer)
    merged = merge_lora(layer)
    seen = {
        "type": type(merged).__name__,
        "is_linear": isinstance(merged, nn.Linear),
        "is_base": merged is base,
        "changed": [k for k, v in before.items() if not torch.equal(v, layer.state_dict()[k])],
        "weight": None,
        "bias": None,
        "has_bias": None,
        "out": None,
        "second_weight": None,
        "out_error": None,
        "shared": [],
        "state_keys": [],
        "parameter_names": [],
    }
    if isinstance(merged, nn.Linear):
        seen["state_keys"] = list(merged.state_dict())
        seen["parameter_names"] = [name for name, _p in merged.named_parameters()]
        adapter = {t.untyped_storage().data_ptr() for t in layer.state_dict().values()}
        seen["shared"] = [
            name
            for name, t in merged.state_dict().items()
            if t.numel() and t.untyped_storage().data_ptr() in adapter
        ]
        seen["weight"] = _describe_param(merged.weight)
        seen["has_bias"] = merged.bias is not None
        seen["bias"] = _describe_param(merged.bias)
        try:
            with torch.no_grad():
                seen["out"] = merged(case["x"]).detach().clone()
        except Exception as err:  # reported as data: the check says what it means
            seen["out_error"] = _error(err)
        again = merge_lora(layer)
        if isinstance(again, nn.Linear):
            seen["second_weight"] = again.weight.detach().clone()
    return seen


# --- Builders for contracts (autograder/contracts.py: Build) ------------------------------


def _reseed(spec: dict) -> None:
    """Seed the global generator from the spec, last thing before the call: the fresh layers
    both sides draw (a new head) are then the same, as nn.Linear draws them."""
    if "rng" in spec:
        torch.manual_seed(spec["rng"])


def build_contract_net(spec: dict) -> Net:
    """A ``Net`` on the CPU in float32 for a contract: every parameter filled with distinct
    values from the spec's seed (so a parameter is known by its values), in a drawn mode,
    the parameters or modules named in ``frozen`` frozen, ``.grad`` set where ``grads``."""
    options = ("extra", "root_param", "head_kind", "head_bias", "aux", "shared")
    case = {
        "seed": spec["seed"],
        "in_features": spec["in_features"],
        "out_features": spec["out_features"],
        "head_attr": spec["head_attr"],
        "device": "cpu",
        **{k: spec[k] for k in options if k in spec},
    }
    model = build_net(case).train(spec.get("training", True))
    g = torch.Generator().manual_seed(spec["seed"])
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g))
    params = dict(model.named_parameters())
    for name in frozen_in_case(model, spec.get("frozen", [])):
        params[name].requires_grad_(False)
    if spec.get("grads"):
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=g)
    _reseed(spec)
    return model


class SmallDigitNet(nn.Module):
    """A DigitNet for contracts: backbone -> (N, 12), head -> (N, classes), linear layers and
    batch norm only. Its arithmetic is the same whatever the number of threads (a convolution's
    is not), so the learner's kernel and the grader train it to the same numbers."""

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Flatten(), nn.Linear(64, 12), nn.BatchNorm1d(12), nn.ReLU()
        )
        self.head = nn.Linear(12, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.backbone(x))


def build_contract_pretrained(spec: dict) -> SmallDigitNet:
    """A small "pretrained" net for fine_tune's contract: weights and batch norm statistics
    from the spec's seed, in eval mode (as a loaded model comes)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec["seed"])
        model = SmallDigitNet(spec.get("classes", 10))
    g = torch.Generator().manual_seed(spec["seed"])
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=g) * 0.1)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=g) + 0.5)
    model.eval()
    # Training amplifies rounding (AdamW's first steps move each weight by about lr whatever
    # the size of its gradient), and how a reduction is split between threads changes its
    # rounding: both sides train on one thread, as the learner's kernel already does.
    torch.set_num_threads(1)
    _reseed(spec)
    return model


def build_contract_base(spec: dict) -> nn.Linear:
    """The pretrained ``nn.Linear`` a LoRA layer wraps, on the CPU in float32."""
    case = {**spec, "device": "cpu", "dtype": torch.float32}
    base = build_base(case)
    _reseed(spec)
    return base


def build_contract_adapter(spec: dict) -> Adapter:
    """A trained-looking LoRA layer for merge_lora: a seeded base, A and B, the spec's scaling."""
    base = build_base({**spec, "device": "cpu", "dtype": torch.float32})
    g = torch.Generator().manual_seed(spec["seed"] + 1)
    A = torch.randn(spec["r"], spec["in_features"], generator=g)
    B = torch.randn(spec["out_features"], spec["r"], generator=g)
    return Adapter(base, A, B, spec["scaling"])
