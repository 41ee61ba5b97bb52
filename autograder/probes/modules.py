"""Probes for 03_modules (see autograder/probes/__init__.py).

Each probe builds what its case describes (seeded), runs the learner's class or function step
by step and returns what it saw as a flat dict: one key per step, in the order the steps ran.
When the learner's code raises, the probe records the step and the error under ``"raised"``
and stops there, so the check can judge every earlier step first, as it did when it ran the
code itself. Builders the check needs too (the models handed to the answer) live here.
"""

from __future__ import annotations

import contextlib
import gc
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from autograder.probes import seed_cpu

# The activation classes an MLP is built with; the case names one.
ACTIVATIONS = {"ReLU": nn.ReLU, "Tanh": nn.Tanh, "GELU": nn.GELU, "PReLU": nn.PReLU}


class _Stop(Exception):
    """The learner's code raised in a step: the probe returns what it saw until then."""


@contextlib.contextmanager
def _steps(seed: int) -> Iterator[None]:
    """Seed the random generators (restored afterwards) and end quietly at a raised step."""
    with torch.random.fork_rng(devices=[]):
        seed_cpu(seed)
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


def _construct(seen: dict, cls: Any, *args: Any, **kwargs: Any) -> Any:
    """``cls(*args, **kwargs)`` as the "construct" step (a reseed in __init__ is the values
    family's to catch: the contracts build every class watched)."""
    return _run(seen, "construct", cls, *args, **kwargs)


def _grads_in_modes(seen: dict, module: nn.Module, x: torch.Tensor) -> None:
    """The module's output and the gradient it sends back to ``x`` (of the output's sum), in
    training mode and then in eval mode: under "train out", "train grad", "eval out",
    "eval requires_grad" and "eval grad" (None where the output has no graph); then, called on
    an x that does not require grad, the names of the parameters left without a gradient, under
    "train plain no grad" and "eval plain no grad"; how many of three outputs the caller
    dropped are still alive, under "outputs kept". The module is left in eval mode."""
    for mode in ("train", "eval"):
        module.train(mode == "train")
        xg = x.detach().clone().requires_grad_(True)
        out = _run(seen, f"{mode} out", module, xg)
        seen[f"{mode} out"] = _copy(out)
        has_graph = isinstance(out, torch.Tensor) and out.requires_grad
        seen[f"{mode} requires_grad"] = has_graph
        if has_graph:
            _run(seen, f"{mode} backward", lambda o=out: o.sum().backward())
        seen[f"{mode} grad"] = None if xg.grad is None else xg.grad.clone()
    # The usual training call: x without requires_grad, only the weights need gradients. An
    # answer that turns autograd off when x has no gradient to take leaves them without one.
    for mode in ("train", "eval"):
        module.train(mode == "train")
        for p in module.parameters():
            p.grad = None
        out = _run(seen, f"{mode} plain out", module, x.detach().clone())
        if isinstance(out, torch.Tensor) and out.requires_grad:
            _run(seen, f"{mode} plain backward", lambda o=out: o.sum().backward())
        seen[f"{mode} plain no grad"] = [
            name for name, p in module.named_parameters() if p.requires_grad and p.grad is None
        ]
    # Outputs the caller dropped must go: a module that keeps every one (a list of them, to
    # look at later) keeps every call's graph alive, and memory grows with each batch.
    refs = []
    for _call in range(3):
        out = _run(seen, "repeated out", module, x.detach().clone())
        if isinstance(out, torch.Tensor):
            refs.append(weakref.ref(out))
        del out
    if any(ref() is not None for ref in refs):
        gc.collect()  # only a reference cycle can still hold them (a full pass costs 0.2 s)
    seen["outputs kept"] = sum(ref() is not None for ref in refs)


# ---------------------------------------------------------------- MLP


def build_activation(spec: dict) -> type[nn.Module]:
    """The activation class an MLP contract passes: ``spec["name"]`` in ACTIVATIONS. Like
    build_seeded, it seeds the global random generator: whatever an answer draws in its
    constructor (layers it does not register, so that no fill reaches them) is then the same
    on every run, and so is the verdict."""
    seed_cpu(spec.get("seed", 0))
    return ACTIVATIONS[spec["name"]]


def build_seeded(spec: dict) -> Any:
    """``spec["value"]`` (a list copied, so the caller's stays the caller's), after seeding the
    global random generator (see build_activation)."""
    seed_cpu(spec.get("seed", 0))
    value = spec["value"]
    return list(value) if isinstance(value, list) else value


def probe_MLP(MLP, case: dict) -> dict:
    """The parameters' names and shapes as built.

    case: sizes, activation (a name in ACTIVATIONS), seed.
    """
    seen: dict = {}
    with _steps(case["seed"]):
        activation = ACTIVATIONS[case["activation"]]
        model = _construct(seen, MLP, list(case["sizes"]), activation=activation)
        if not _note_type(seen, model):
            return seen
        seen["parameters"] = [[name, list(p.shape)] for name, p in model.named_parameters()]
        seen["activations"] = sum(isinstance(m, activation) for m in model.modules())
        _grads_in_modes(seen, model, torch.randn(4, case["sizes"][0]))
        seen["no grad"] = [
            name for name, p in model.named_parameters() if p.requires_grad and p.grad is None
        ]
    return seen


# ---------------------------------------------------------------- ResidualBlock


def probe_ResidualBlock(ResidualBlock, case: dict) -> dict:
    """One block, built, then its output and the gradient
    it sends back to x in training mode and in eval mode.

    case: dim, hidden, x (a CPU tensor), seed.
    """
    seen: dict = {}
    with _steps(case["seed"]):
        block = _construct(seen, ResidualBlock, case["dim"], case["hidden"])
        if not _note_type(seen, block):
            return seen
        _grads_in_modes(seen, block, case["x"])
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


class Tempered(nn.Module):
    """A layer and a 0-d Parameter (a learned temperature): shape () holds one element."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.temperature = nn.Parameter(torch.tensor(1.0))

    def forward(self, x):
        return self.fc(x) / self.temperature


def build_count_model(name: str) -> nn.Module:
    """The model a count_trainable_parameters case names."""
    if name == "scalar":
        return Tempered()
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
    if name == "twin-norms":  # two Parameters of equal shape and value: still two
        return nn.Sequential(nn.LayerNorm(4), nn.LayerNorm(4))
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
        seed_cpu(spec.get("seed", 0))
        model = nn.Sequential(*[build_count_model(name) for name in spec["parts"]])
        if spec.get("root"):
            model.cls_token = nn.Parameter(torch.zeros(1, 1, 3))
    params = list(model.parameters())
    if spec.get("grads"):  # gradients of an earlier backward, which counting leaves alone
        for p in params:
            p.grad = torch.ones_like(p)
    for i in spec.get("frozen", []):
        if i < len(params):
            params[i].requires_grad_(False)
    return model.train(spec.get("training", True))


# ---------------------------------------------------------------- RunningMean


def _buffer_state(module: nn.Module) -> dict:
    sd = module.state_dict(keep_vars=True)
    return {"keys": sorted(sd), "running_mean": _copy(sd.get("running_mean"))}


def probe_RunningMean(RunningMean, case: dict) -> dict:
    """One module through training batches, an empty batch, eval mode and a reload: the
    output and the state_dict entry after each.

    case: num_features, momentum, train (batches), eval_x (a batch), seed.
    """
    seen: dict = {}
    nf, momentum = case["num_features"], case["momentum"]
    with _steps(case["seed"]):
        module = _construct(seen, RunningMean, nf, momentum=momentum)
        if not _note_type(seen, module):
            return seen
        module.train()
        for i, x in enumerate(case["train"]):
            _forward(seen, f"out {i}", module, x)
            seen[f"buffer {i}"] = _buffer_state(module)
        _forward(seen, "empty", module, torch.zeros(0, nf))
        seen["buffer empty"] = _buffer_state(module)
        module.eval()
        x = case["eval_x"]
        _forward(seen, "eval", module, x)
        seen["buffer eval"] = _buffer_state(module)

        def eval_grad():  # d(sum of the output)/dx in eval mode: all ones
            xg = x.detach().clone().requires_grad_(True)
            out = module(xg)
            if not (isinstance(out, torch.Tensor) and out.requires_grad):
                return None
            out.sum().backward()
            return None if xg.grad is None else xg.grad.clone()

        seen["eval grad"] = _run(seen, "eval grad", eval_grad)

        def reloaded():
            fresh = RunningMean(nf, momentum=momentum)
            fresh.load_state_dict(module.state_dict())
            fresh.eval()
            return fresh(x)

        seen["fresh"] = _copy(_run(seen, "fresh", reloaded))

        other: list = []

        def under_no_grad():  # a training batch in a caller's torch.no_grad() block
            other.append(RunningMean(nf, momentum=momentum))
            other[0].train()
            with torch.no_grad():
                other[0](case["train"][0])
                return torch.is_grad_enabled()

        seen["grad on under no_grad"] = _run(seen, "under no_grad", under_no_grad)
        seen["buffer under no_grad"] = _buffer_state(other[0])
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
    """Returns a tuple: copies of the two halves of the last dimension (copies, so that the
    in-place doubling after it is autograd's business only)."""

    def forward(self, x):
        half = x.shape[-1] // 2
        return x[..., :half].clone(), x[..., half:].clone()


class HookNet(nn.Module):
    """inp -> block (fc, in-place ReLU) -> split (a tuple; its second half then doubled in
    place, which a stored tuple without copies shows) -> shared, used on each half -> out ->
    tanh."""

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
        b.mul_(2.0)
        return self.tanh(self.out(torch.cat([self.shared(a), self.shared(b)], dim=-1)))


def build_hook_model(seed: int) -> nn.Module:
    """The model capture_activations is tried on (on the CPU), seeded."""
    with torch.random.fork_rng(devices=[]):
        seed_cpu(seed)
        return HookNet()


def build_hooked_model(spec: dict) -> nn.Module:
    """build_hook_model(seed) in the spec's mode (``mixed``: block in the other one; ``frozen``:
    inp frozen by the caller), with the caller's own forward hooks (on the model and on
    block.fc) already registered: an answer must leave them, the modes and the flags as they
    are."""
    model = build_hook_model(spec["seed"]).train(spec["training"])
    if spec.get("mixed"):  # one part in the other mode: model.train(was) does not restore it
        model.block.train(not spec["training"])
    if spec.get("frozen"):  # frozen by the caller: requires_grad_(True) afterwards unfreezes it
        model.inp.requires_grad_(False)
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
    one on block.fc: still there? how often did they run?), its modes and requires_grad flags;
    last, on a fresh float64 model and x standing in for a GPU, the names stored off that
    device or in another dtype.

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
        # Last, a model and x "on a GPU" (stand-ins that keep their values): the names whose
        # stored tensors left that device (a .cpu() in the hook).
        from autograder.probes import devices

        # The model in float64 too: the names whose stored tensors changed dtype (a .float()).
        away = devices.stand_in_module(build_hook_model(case["seed"]).double())
        x = devices.stand_in(case["calls"][0]["x"].double())
        got = _run(seen, "stand-in call", capture_activations, away, x, ["inp", "split"])
        stored = got.items() if isinstance(got, dict) else ()
        seen["left the device"] = sorted(
            str(name)
            for name, value in stored
            if any(not isinstance(t, devices.StandIn) for t in devices.tensors_in(value))
        )
        seen["changed dtype"] = sorted(
            str(name)
            for name, value in stored
            if any(t.dtype != torch.float64 for t in devices.tensors_in(value))
        )
    return seen


# ---------------------------------------------------------------- init_weights


def build_init_layer(spec: dict) -> nn.Module:
    """One module init_weights is called on, as model.apply calls it on each: ``kind`` (see
    below) with sizes ``n`` and ``m``, ``bias`` / ``affine`` flags, in ``dtype``. Its
    parameters are seeded and moved away from the defaults (so a reset shows). Last, the
    global random generator is seeded with ``1000 + seed``: the answer and the reference then
    draw the same numbers, so Kaiming weights compare value for value."""
    n, m = spec["n"], spec["m"]
    with torch.random.fork_rng(devices=[]):
        seed_cpu(spec["seed"])
        kind = spec["kind"]
        if kind == "linear":
            module: nn.Module = nn.Linear(n, m, bias=spec["bias"])
        elif kind == "layernorm":
            module = nn.LayerNorm(n, elementwise_affine=spec["affine"], bias=spec["bias"])
        elif kind == "embedding":
            module = nn.Embedding(n + 1, m)
        elif kind == "conv1d":
            module = nn.Conv1d(n, m, 3, bias=spec["bias"])
        elif kind == "batchnorm":
            module = nn.BatchNorm1d(n)
        elif kind == "relu":
            module = nn.ReLU()
        else:  # "sequential": apply visits its children itself; called on it, change nothing
            module = nn.Sequential(nn.Linear(n, m), nn.ReLU(), nn.LayerNorm(m))
        with torch.no_grad():
            for p in module.parameters():
                p.uniform_(0.5, 1.5)  # neither ones, zeros nor a Kaiming draw
    module = module.to(getattr(torch, spec["dtype"]))
    if spec.get("frozen"):  # frozen by the caller: initialised in place, still frozen
        module.requires_grad_(False)
    seed_cpu(1000 + spec["seed"])
    return module


# ---------------------------------------------------------------- EncoderClassifier


def build_encoder_parts(seed: int) -> tuple[nn.Module, nn.Module, nn.Module]:
    """(encoder, head, new_head) on the CPU, seeded."""
    with torch.random.fork_rng(devices=[]):
        seed_cpu(seed)
        encoder = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
        head = nn.Linear(8, 3)
        new_head = nn.Sequential(nn.Linear(8, 4), nn.Tanh())
    return encoder, head, new_head


def _shift_output(module: nn.Module, inputs: Any, output: torch.Tensor) -> torch.Tensor:
    """A caller's forward hook that changes the output: skipped by .forward(), it shows."""
    return output + 0.5


def _double_output(module: nn.Module, inputs: Any, output: torch.Tensor) -> torch.Tensor:
    return output * 2.0


def build_encoder_part(spec: dict) -> nn.Module:
    """An EncoderClassifier's part, seeded, with a forward hook of the caller's that changes
    its output: ``part`` "encoder" (Linear(n_in, hidden), ReLU; the hook adds 0.5) or "head"
    (Linear(hidden, classes); the hook doubles), in ``dtype``."""
    with torch.random.fork_rng(devices=[]):
        seed_cpu(spec.get("seed", 0))
        if spec["part"] == "encoder" and spec.get("plain_encoder"):  # no parameters at all
            part: nn.Module = nn.Sequential(nn.ReLU())
            part.register_forward_hook(_shift_output)
        elif spec["part"] == "encoder":
            part = nn.Sequential(nn.Linear(spec["n_in"], spec["hidden"]), nn.ReLU())
            part.register_forward_hook(_shift_output)
        else:
            part = nn.Linear(spec["hidden"], spec["classes"])
            part.register_forward_hook(_double_output)
    return part.to(getattr(torch, spec.get("dtype", "float32")))


def probe_swap_head(EncoderClassifier, case: dict) -> dict:
    """swap_head on a model built from build_encoder_parts: whether it returned the old head,
    the state_dict keys and parameter count after, the outputs after and whether the
    encoder's hook ran for each.

    case: seed (for build_encoder_parts), inputs (CPU tensors, run after the swap). Then
    the old head swapped back in: what that returned, and the output on the first input.
    Last, swap_head on a model whose encoder has no parameters.
    """
    seen: dict = {}
    with _steps(case["seed"]):
        encoder, head, new_head = build_encoder_parts(case["seed"])
        calls: list = []
        encoder.register_forward_hook(lambda module, inputs, output: calls.append(1))
        model = _construct(seen, EncoderClassifier, encoder, head)
        if not _note_type(seen, model):
            return seen
        for p in model.parameters():  # gradients a caller accumulated: swap_head keeps them
            p.grad = torch.ones_like(p)
        new_head[0].bias.requires_grad_(False)  # frozen by the caller: swap_head keeps it so
        parts = {"encoder": encoder, "head": head, "new_head": new_head}
        seen["parts before swap"] = {k: _part_state(m) for k, m in parts.items()}
        old = _run(seen, "swap_head", _call_method, model, "swap_head", new_head)
        seen["returned the old head"] = old is head
        seen["parts after swap"] = {k: _part_state(m) for k, m in parts.items()}
        seen["keys after swap"] = sorted(model.state_dict())
        seen["parameters after swap"] = sum(p.numel() for p in model.parameters())
        for i, x in enumerate(case["inputs"]):
            before = len(calls)
            _forward(seen, f"swapped out {i}", model, x)
            seen[f"swapped hook ran {i}"] = len(calls) > before
            seen[f"swapped hook runs {i}"] = len(calls) - before
        # and back: the head replaced now is the Sequential (no .weight of its own)
        back = _run(seen, "swap back", _call_method, model, "swap_head", head)
        seen["returned the new head"] = back is new_head
        _forward(seen, "back out", model, case["inputs"][0])
        _grads_in_modes(seen, model, case["inputs"][0])
        # an encoder without parameters (a fixed feature map): nothing to read a device from
        plain = _construct(seen, EncoderClassifier, nn.Sequential(nn.ReLU()), nn.Linear(5, 3))
        first = plain.head
        got = _run(seen, "plain swap", _call_method, plain, "swap_head", nn.Linear(5, 2))
        seen["plain swap returned the old head"] = got is first
    return seen


def _part_state(module: nn.Module) -> dict:
    """What swap_head must leave as it was of a part: modes, requires_grad flags, gradients."""
    return {
        "training": [m.training for m in module.modules()],
        "requires_grad": [p.requires_grad for p in module.parameters()],
        "grads": [None if p.grad is None else p.grad.clone() for p in module.parameters()],
    }


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
    'token': a TokenClassifier (parameters on the root too); 'tied': embed, body and out,
    out.weight the same Parameter as embed.weight (named_parameters() lists it once, as
    embed.weight)."""
    if name == "tied":
        model = nn.Sequential(
            OrderedDict(embed=nn.Embedding(5, 4), body=nn.Linear(4, 4), out=nn.Linear(4, 5))
        )
        model.out.weight = model.embed.weight
        return model
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


def build_freeze(spec: dict) -> nn.Module:
    """A freeze_except model: build_freeze_model(``kind``), seeded, with the parameters at
    positions ``frozen`` (in named_parameters() order) already frozen by an earlier call, in
    ``training`` mode."""
    with torch.random.fork_rng(devices=[]):
        seed_cpu(spec.get("seed", 0))
        model = build_freeze_model(spec["kind"])
    params = list(model.parameters())
    for i in spec.get("frozen", []):
        if i < len(params):
            params[i].requires_grad_(False)
    return model.train(spec.get("training", True))


def probe_freeze_buffers(freeze_except, case: dict) -> dict:
    """freeze_except on a TokenClassifier (a buffer on the root, BatchNorm's in the encoder):
    each buffer's requires_grad afterwards, by name.

    case: trainable (module names), seed.
    """
    seen: dict = {}
    with _steps(case["seed"]):
        model = build_freeze_model("token")
        _run(seen, "freeze_except", freeze_except, model, list(case["trainable"]))
        seen["buffers requiring grad"] = [n for n, b in model.named_buffers() if b.requires_grad]
    return seen
