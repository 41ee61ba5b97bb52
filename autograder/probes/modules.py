"""Probes for 03_modules (see autograder/probes/__init__.py).

Each probe builds what its case describes (seeded), runs the learner's class or function step
by step and returns what it saw as a flat dict: one key per step, in the order the steps ran.
When the learner's code raises, the probe records the step and the error under ``"raised"``
and stops there, so the check can judge every earlier step first, as it did when it ran the
code itself. Builders the check needs too (the models handed to the answer) live here.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

# The activation classes an MLP is built with; the case names one.
ACTIVATIONS = {"ReLU": nn.ReLU, "Tanh": nn.Tanh, "GELU": nn.GELU, "PReLU": nn.PReLU}


class _Stop(Exception):
    """The learner's code raised in a step: the probe returns what it saw until then."""


@contextlib.contextmanager
def _steps(seed: int) -> Iterator[None]:
    """Seed the random generators (restored afterwards) and end quietly at a raised step."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        with contextlib.suppress(_Stop):
            yield


def _run(seen: dict, step: str, fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``; if it raises, note ``step`` and the error in ``seen["raised"]``
    and stop."""
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise
    except Exception as err:  # the learner's code may raise anything: report it as data
        seen["raised"] = {
            "step": step,
            "type": type(err).__name__,
            "bases": [c.__name__ for c in type(err).__mro__],
            "message": str(err)[:2000],
        }
        raise _Stop from None


def _call_method(obj: Any, name: str, *args: Any) -> Any:
    """``obj.name(*args)``, looked up inside the step (a missing method is the learner's error)."""
    return getattr(obj, name)(*args)


def _copy(value: Any) -> Any:
    """A snapshot of ``value``: tensors cloned (requires_grad kept), so later steps cannot change it."""
    if isinstance(value, torch.Tensor):
        copy = value.detach().clone()
        if value.requires_grad and (copy.is_floating_point() or copy.is_complex()):
            copy.requires_grad_(True)
        return copy
    if type(value) in (list, tuple):
        return type(value)(_copy(v) for v in value)
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    return value


def _note_type(seen: dict, obj: Any) -> bool:
    seen["type"] = type(obj).__name__
    seen["is_module"] = isinstance(obj, nn.Module)
    return seen["is_module"]


def _forward(seen: dict, key: str, module: Any, x: torch.Tensor) -> Any:
    out = _run(seen, key, module, x)
    seen[key] = _copy(out)
    return out


# ---------------------------------------------------------------- MLP


def probe_MLP(MLP, case: dict) -> dict:
    """Parameter shapes as built, the weights after .to(device), the outputs on each input.

    case: sizes, activation (a name in ACTIVATIONS, or None for the default), device,
    double (convert with .double() instead of moving), inputs (CPU tensors), seed.
    """
    seen: dict = {}
    with _steps(case["seed"]):
        kwargs = {}
        if case.get("activation") is not None:
            kwargs["activation"] = ACTIVATIONS[case["activation"]]
        sizes = list(case["sizes"])
        model = _run(seen, "construct", MLP, sizes, **kwargs)
        seen["sizes unchanged"] = sizes == list(case["sizes"])
        if not _note_type(seen, model):
            return seen
        seen["parameters"] = [[name, list(p.shape)] for name, p in model.named_parameters()]
        if case.get("double"):
            model = _run(seen, "move", model.double)
        else:
            model = _run(seen, "move", model.to, case["device"])
        seen["weights"] = [_copy(p) for _, p in model.named_parameters()]
        for i, x in enumerate(case["inputs"]):
            _forward(seen, f"out {i}", model, x.to(case["device"]))
    return seen


# ---------------------------------------------------------------- ResidualBlock


def probe_ResidualBlock(ResidualBlock, case: dict) -> dict:
    """state_dict keys and tensors, two calls on each input, which parameters get gradients.

    case: dim, hidden, device, inputs (list of {"x": CPU tensor, "t": transpose it on the
    device, to get a non-contiguous input}), backward_x (CPU tensor), seed.
    """
    seen: dict = {}
    device = case["device"]
    with _steps(case["seed"]):
        block = _run(seen, "construct", ResidualBlock, case["dim"], case["hidden"])
        if not _note_type(seen, block):
            return seen
        seen["keys"] = sorted(block.state_dict())
        block = _run(seen, "move", block.to, device)
        seen["state"] = _copy(dict(block.state_dict()))
        for i, item in enumerate(case["inputs"]):
            x = item["x"].to(device)
            x = x.t() if item["t"] else x
            before = x.clone()
            _forward(seen, f"out {i}", block, x)
            seen[f"x unchanged {i}"] = torch.equal(x, before)
            _forward(seen, f"again {i}", block, x)
        x = case["backward_x"].to(device).requires_grad_(True)  # the caller's leaf

        def backward():
            block.zero_grad()
            block(x).pow(2).sum().backward()

        _run(seen, "backward", backward)
        seen["grads"] = [[name, _copy(p.grad)] for name, p in block.named_parameters()]
        seen["x.grad"] = _copy(x.grad)
        if case.get("double_x") is not None:
            block = _run(seen, "double", block.double)
            _forward(seen, "double out", block, case["double_x"].to(device))
    return seen


# ---------------------------------------------------------------- count_trainable_parameters


class Tied(nn.Module):
    """An embedding and an output layer that share one weight (weight tying)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10, bias=False)
        self.out.weight = self.emb.weight  # one Parameter, two names

    def forward(self, idx):
        return self.out(self.emb(idx))


class TokenModel(nn.Module):
    """Parameters on the root module itself (a cls_token, a frozen scale), a buffer and a child."""

    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 1, 6))
        self.scale = nn.Parameter(torch.ones(6), requires_grad=False)
        self.register_buffer("pos", torch.zeros(5, 6))
        self.encoder = nn.Sequential(nn.Linear(6, 6), nn.LayerNorm(6))

    def forward(self, x):
        return self.encoder(x + self.pos[: x.shape[-2]] + self.cls_token) * self.scale


def build_count_model(name: str) -> nn.Module:
    """The model a count_trainable_parameters case names."""
    if name == "linear":
        return nn.Linear(7, 3)
    if name == "linear-no-bias":
        return nn.Linear(1, 1, bias=False)
    if name == "relu":
        return nn.ReLU()
    if name in ("batchnorm", "batchnorm-frozen"):
        model = nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.Linear(5, 2))
        if name == "batchnorm-frozen":
            model[0].requires_grad_(False)
        return model
    if name == "bias-frozen":
        model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
        model[0].bias.requires_grad_(False)
        return model
    if name == "tied":
        return Tied()
    if name == "lstm":
        return nn.LSTM(3, 4)
    if name == "cls-token":
        return TokenModel()
    if name == "shared-in-sequential":
        layer = nn.Linear(3, 3)
        return nn.Sequential(layer, nn.ReLU(), layer)  # one layer used twice: one set of weights
    if name == "empty":
        return nn.Sequential()
    if name == "conv":
        model = nn.Sequential(nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4), nn.Flatten())
        model[1].bias.requires_grad_(False)
        return model
    raise ValueError(f"no count model called {name!r}")


def build_count_parts(spec: dict) -> nn.Module:
    """A model for count_trainable_parameters: ``parts`` (names of build_count_model) side by
    side in a Sequential, ``root`` a Parameter registered on the model itself, ``frozen`` the
    positions (in model.parameters()) of the parameters frozen, ``training`` its mode."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.get("seed", 0))
        model = nn.Sequential(*[build_count_model(name) for name in spec["parts"]])
        if spec.get("root"):
            model.cls_token = nn.Parameter(torch.zeros(1, 1, 3))
    params = list(model.parameters())
    for i in spec.get("frozen", []):
        if i < len(params):
            params[i].requires_grad_(False)
    return model.train(spec.get("training", True))


# ---------------------------------------------------------------- RunningMean


def _backward_of_sum(out: Any) -> None:
    out.sum().backward()


def _buffer_state(module: nn.Module) -> dict:
    sd = module.state_dict(keep_vars=True)
    return {"keys": sorted(sd), "running_mean": _copy(sd.get("running_mean"))}


def probe_RunningMean(RunningMean, case: dict) -> dict:
    """The buffer and outputs through training batches, an empty batch, eval mode, a reload.

    case: num_features, momentum, device, train (CPU batches, run with requires_grad),
    eval_x (CPU batch), seed. After each training batch: the output, the state_dict entry
    (requires_grad kept) and x.grad after out.sum().backward().
    """
    seen: dict = {}
    device = case["device"]
    nf, momentum = case["num_features"], case["momentum"]
    with _steps(case["seed"]):
        module = _run(seen, "construct", RunningMean, nf, momentum=momentum)
        if not _note_type(seen, module):
            return seen
        seen["initial"] = _buffer_state(module)
        seen["parameters"] = [name for name, _ in module.named_parameters()]
        module = _run(seen, "move", module.to, device)
        module.train()
        for i, x_cpu in enumerate(case["train"]):
            x = x_cpu.to(device).requires_grad_(True)
            out = _forward(seen, f"out {i}", module, x)
            seen[f"buffer {i}"] = _buffer_state(module)
            _run(seen, f"backward {i}", _backward_of_sum, out)
            seen[f"x.grad {i}"] = _copy(x.grad)
        _forward(seen, "empty", module, torch.zeros(0, nf, device=device))
        seen["buffer empty"] = _buffer_state(module)
        module.eval()
        x = case["eval_x"].to(device)
        _forward(seen, "eval", module, x)
        seen["buffer eval"] = _buffer_state(module)

        def reloaded():
            fresh = RunningMean(nf, momentum=momentum).to(device)
            fresh.load_state_dict(module.state_dict())
            fresh.eval()
            return fresh(x)

        seen["fresh"] = _copy(_run(seen, "fresh", reloaded))
    return seen


def probe_RunningMean_double(RunningMean, case: dict) -> dict:
    """RunningMean(num_features, momentum).double(): its buffer, and its output on ``x``."""
    seen: dict = {}
    with _steps(case["seed"]):
        nf, momentum = case["num_features"], case["momentum"]
        kwargs = {} if momentum is None else {"momentum": momentum}  # None: the default
        module = _run(seen, "construct", RunningMean, nf, **kwargs)
        if not _note_type(seen, module):
            return seen
        module = _run(seen, "move", module.double)
        seen["buffer"] = _buffer_state(module)
        _forward(seen, "out", module, case["x"])
        seen["buffer after"] = _buffer_state(module)
    return seen


# ---------------------------------------------------------------- capture_activations


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.act = nn.ReLU(inplace=True)  # overwrites fc's output: captured tensors need a copy

    def forward(self, x):
        return self.act(self.fc(x))


class Halves(nn.Module):
    """Returns a tuple: the two halves of the last dimension."""

    def forward(self, x):
        half = x.shape[-1] // 2
        return x[..., :half], x[..., half:]


class HookNet(nn.Module):
    """inp -> block (fc, in-place ReLU) -> split (a tuple) -> shared, used on each half ->
    out -> tanh."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 6)
        self.block = Block()
        self.split = Halves()
        self.shared = nn.Linear(3, 3)  # called twice per forward pass
        self.out = nn.Linear(6, 3)
        self.tanh = nn.Tanh()

    def forward(self, x):
        a, b = self.split(self.block(self.inp(x)))
        return self.tanh(self.out(torch.cat([self.shared(a), self.shared(b)], dim=-1)))


def build_hook_model(seed: int) -> nn.Module:
    """The model capture_activations is tried on (on the CPU), seeded."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return HookNet()


def build_hooked_model(spec: dict) -> nn.Module:
    """build_hook_model(seed) in the spec's mode, with the caller's own forward hooks (on the
    model and on block.fc) already registered: an answer must leave them where they are."""
    model = build_hook_model(spec["seed"]).train(spec["training"])
    model.register_forward_hook(_callers_hook)
    model.block.fc.register_forward_hook(_callers_hook)
    return model


def _callers_hook(module: nn.Module, inputs: Any, output: Any) -> None:
    """A hook of the caller's: it changes nothing."""


def _plain_key(key: Any) -> Any:
    return key if type(key) is str else f"<{type(key).__name__} {key!r:.60}>"


def _global_hooks() -> int:
    from torch.nn.modules import module as module_file

    return len(module_file._global_forward_hooks)


def probe_capture_activations(capture_activations, case: dict) -> dict:
    """Each call's result (type, and a copy if it is a dict), the modules left with hooks other
    than the caller's, and what became of the caller's model: its own hooks (one on the model,
    one on block.fc: still there? how often did they run?), its modes and requires_grad flags.

    case: seed (for build_hook_model), device, calls (list of {"x": CPU tensor, "names",
    "raises": x has the wrong width, so model(x) raises}), all made on one model, in order.
    """
    seen: dict = {}
    with _steps(case["seed"]):
        model = build_hook_model(case["seed"]).to(case["device"]).train()
        runs = {"": 0, "block.fc": 0}

        def counting(key):
            def hook(module, inputs, output):
                runs[key] += 1

            return hook

        mine = {
            "": model.register_forward_hook(counting("")).id,
            "block.fc": model.block.fc.register_forward_hook(counting("block.fc")).id,
        }
        global_before = _global_hooks()
        for i, call in enumerate(case["calls"]):
            x = call["x"].to(case["device"])
            before = dict(runs)
            if call.get("raises"):
                try:
                    capture_activations(model, x, list(call["names"]))
                    seen[f"raised {i}"] = None
                except NotImplementedError:
                    raise
                except Exception as err:  # the model's own error, as expected
                    seen[f"raised {i}"] = type(err).__name__
            else:
                got = _run(seen, f"call {i}", capture_activations, model, x, list(call["names"]))
                seen[f"type {i}"] = type(got).__name__
                if isinstance(got, dict):
                    seen[f"result {i}"] = {_plain_key(k): _copy(v) for k, v in got.items()}
            seen[f"hooks left {i}"] = [
                name or "(the model)"
                for name, m in model.named_modules()
                if set(m._forward_hooks) - {mine.get(name)}
            ] + (["(a global hook)"] if _global_hooks() > global_before else [])
            seen[f"caller hooks kept {i}"] = [
                key for key, hid in mine.items() if hid in model.get_submodule(key)._forward_hooks
            ]
            seen[f"model runs {i}"] = runs[""] - before[""]
            seen[f"training {i}"] = all(m.training for m in model.modules())
            seen[f"requires_grad {i}"] = all(p.requires_grad for p in model.parameters())
    return seen


# ---------------------------------------------------------------- init_weights


def build_init_model(seed: int) -> nn.Module:
    """The model init_weights is applied to, its LayerNorm moved away from the defaults."""
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Linear(400, 300),
        nn.ReLU(),
        nn.Linear(300, 100),
        nn.LayerNorm(100),
        nn.Dropout(0.1),
        nn.Linear(100, 2),
    )
    with torch.no_grad():
        model[3].weight.uniform_(0.5, 1.5)  # not LayerNorm's default, so a reset shows
        model[3].bias.uniform_(-1, 1)
    return model


def build_init_extras(seed: int) -> nn.Module:
    """Layers init_weights must cope with: no bias, no affine, others to leave alone, nesting."""
    torch.manual_seed(seed)
    extras = nn.Sequential(
        nn.Linear(200, 100, bias=False),  # [0]: no bias to zero
        nn.LayerNorm(5, elementwise_affine=False),  # [1]: no weight, no bias
        nn.Embedding(10, 4),  # [2] to [4]: not Linear, not LayerNorm: left alone
        nn.Conv1d(2, 3, 3),
        nn.BatchNorm1d(4),
        nn.Sequential(nn.Linear(50, 400)),  # [5][0]: a nested Linear
    )
    with torch.no_grad():
        extras[4].weight.uniform_(0.5, 1.5)  # not BatchNorm's default, so a reset shows
        extras[4].bias.uniform_(-1, 1)
    return extras


def _layer(module: nn.Module) -> dict:
    return {
        "weight": _copy(getattr(module, "weight", None)),
        "bias": _copy(getattr(module, "bias", None)),
    }


def probe_init_weights(init_weights, case: dict) -> dict:
    """model.apply(init_weights), then init_weights on one nn.Linear(500, 250): the layers after.

    case: seed, device.
    """
    seen: dict = {}
    with _steps(case["seed"]):
        model = build_init_model(case["seed"]).to(case["device"])
        _run(seen, "apply", model.apply, init_weights)
        single = nn.Linear(500, 250)
        _run(seen, "single", init_weights, single)
        seen["layers"] = {
            "model[0]": _layer(model[0]),
            "model[2]": _layer(model[2]),
            "model[5]": _layer(model[5]),
            "a single nn.Linear(500, 250)": _layer(single),
            "model[3]": _layer(model[3]),
        }
        extras = build_init_extras(case["seed"]).to(case["device"])
        seen["before"] = {f"extras[{i}]": _layer(extras[i]) for i in (2, 3, 4)}
        _run(seen, "apply extras", extras.apply, init_weights)
        seen["after"] = {f"extras[{i}]": _layer(extras[i]) for i in (2, 3, 4)}
        seen["extras"] = {
            "extras[0], an nn.Linear(200, 100, bias=False)": _layer(extras[0]),
            "extras[5][0], an nn.Linear(50, 400) inside a nested Sequential": _layer(extras[5][0]),
        }
        # the same model again, after another seed: a correct init draws other numbers
        torch.manual_seed(case["seed"] + 1)
        again = build_init_model(case["seed"] + 1).to(case["device"])
        _run(seen, "apply again", again.apply, init_weights)
        seen["same draws after another seed"] = bool(torch.equal(model[2].weight, again[2].weight))
    return seen


# ---------------------------------------------------------------- EncoderClassifier


def build_encoder_parts(seed: int) -> tuple[nn.Module, nn.Module, nn.Module]:
    """(encoder, head, new_head) on the CPU, seeded."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        encoder = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
        head = nn.Linear(8, 3)
        new_head = nn.Sequential(nn.Linear(8, 4), nn.Tanh())
    return encoder, head, new_head


def probe_EncoderClassifier(EncoderClassifier, case: dict) -> dict:
    """Keys, outputs and whether the encoder's hook ran; eval() reaching the parts; swap_head.

    case: seed (for build_encoder_parts), device, inputs and inputs_after_swap (CPU tensors).
    """
    seen: dict = {}
    device = case["device"]
    with _steps(case["seed"]):
        encoder, head, new_head = build_encoder_parts(case["seed"])
        calls, head_calls = [], []
        encoder.register_forward_hook(lambda module, inputs, output: calls.append(1))
        head.register_forward_hook(lambda module, inputs, output: head_calls.append(1))
        model = _run(seen, "construct", EncoderClassifier, encoder, head)
        if not _note_type(seen, model):
            return seen
        seen["keys"] = sorted(model.state_dict())
        seen["holds the given parts"] = (
            getattr(model, "encoder", None) is encoder and getattr(model, "head", None) is head
        )
        model = _run(seen, "move", model.to, device)
        for i, x in enumerate(case["inputs"]):
            before, head_before = len(calls), len(head_calls)
            _forward(seen, f"out {i}", model, x.to(device))
            seen[f"hook ran {i}"] = len(calls) > before
            seen[f"head hook ran {i}"] = len(head_calls) > head_before

        def backward():
            model.zero_grad()
            model(case["inputs"][0].to(device)).pow(2).sum().backward()

        _run(seen, "backward", backward)
        seen["grads"] = {
            "encoder": all(p.grad is not None for p in encoder.parameters()),
            "head": all(p.grad is not None for p in head.parameters()),
        }
        _run(seen, "eval", model.eval)
        seen["parts training after eval"] = [encoder.training, head.training]
        _run(seen, "train", model.train)
        new_head = new_head.to(device)
        old = _run(seen, "swap_head", _call_method, model, "swap_head", new_head)
        seen["returned the old head"] = old is head
        seen["keys after swap"] = sorted(model.state_dict())
        seen["parameters after swap"] = sum(p.numel() for p in model.parameters())
        for i, x in enumerate(case["inputs_after_swap"]):
            before = len(calls)
            _forward(seen, f"swapped out {i}", model, x.to(device))
            seen[f"swapped hook ran {i}"] = len(calls) > before
    return seen


# ---------------------------------------------------------------- freeze_except


class TokenClassifier(nn.Module):
    """A cls_token parameter and a buffer on the root, an encoder with a BatchNorm, a head."""

    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(4))
        self.register_buffer("shift", torch.ones(4))
        self.encoder = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 4))
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        return self.head(self.encoder(x) + self.cls_token + self.shift)


def build_freeze_model(name: str) -> nn.Module:
    """'deep': 11 Linear(3, 3) named '0'..'10'; 'nested': an encoder Sequential and a head;
    'token': a TokenClassifier (parameters on the root too)."""
    if name == "deep":
        return nn.Sequential(*[nn.Linear(3, 3) for _ in range(11)])
    if name == "token":
        return TokenClassifier()
    return nn.Sequential(
        OrderedDict(
            encoder=nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4)),
            head=nn.Linear(4, 2),
        )
    )


def _sgd_step(model: nn.Module, x: torch.Tensor) -> None:
    for p in model.parameters():
        p.grad = None
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(x).pow(2).sum().backward()
    optimizer.step()


def probe_freeze_except(freeze_except, case: dict) -> dict:
    """For each call, in order on the case's models: the return value, every parameter's
    requires_grad, and, when some parameter still trains, the weights before and after one
    SGD step (lr 0.1) on the loss model(x).pow(2).sum().

    case: seed, device, calls (list of {"model": "deep" or "nested", "trainable", "x"}).
    """
    seen: dict = {}
    device = case["device"]
    with _steps(case["seed"]):
        models = {name: build_freeze_model(name).to(device) for name in ("deep", "nested", "token")}
        for i, call in enumerate(case["calls"]):
            model = models[call["model"]]
            got = _run(seen, f"call {i}", freeze_except, model, list(call["trainable"]))
            seen[f"result {i}"] = _copy(got)
            seen[f"requires_grad {i}"] = [
                [n, bool(p.requires_grad)] for n, p in model.named_parameters()
            ]
            if not any(p.requires_grad for p in model.parameters()):
                continue
            seen[f"before {i}"] = {n: _copy(p) for n, p in model.named_parameters()}
            _run(seen, f"step {i}", _sgd_step, model, call["x"].to(device))
            seen[f"after {i}"] = {n: _copy(p) for n, p in model.named_parameters()}
    return seen
