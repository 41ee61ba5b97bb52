"""Probes for 07_debugging (see autograder/probes/__init__.py).

Models cross the data boundary as a *spec*: an architecture name plus the parameter values
(``{"kind": "mlp", "sizes": [4, 8, 3], "act": "relu", "dtype": ..., "device": ...,
"params": [tensors]}``). :func:`build_model` turns a spec into a module; the grader builds
the very same module from the same spec for its reference run.
"""

from __future__ import annotations

import copy
import io
import itertools
import math
import random
import warnings
import weakref

import numpy as np
import torch
from torch import nn

from autograder.probes.contract import SavedTensors

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid}
LOSSES = {"cross_entropy": nn.CrossEntropyLoss, "mse": nn.MSELoss}


# ----------------------------------------------------------------------------- model builders


class WithUnused(nn.Module):
    """A frozen first layer and a parameter the forward pass never uses: their grads stay None."""

    def __init__(self):
        super().__init__()
        self.frozen = nn.Linear(4, 6)
        self.body = nn.Linear(6, 6)
        self.unused = nn.Parameter(torch.zeros(3))
        self.head = nn.Linear(6, 2)
        self.frozen.requires_grad_(False)

    def forward(self, x):
        return self.head(torch.tanh(self.body(self.frozen(x))))


class Nested(nn.Module):
    """A parameter on the root module (a cls_token), nested blocks, a bias-free layer, buffers."""

    def __init__(self):
        super().__init__()
        self.cls_token = nn.Parameter(torch.zeros(1, 4))
        self.blocks = nn.ModuleList(
            [
                nn.Sequential(nn.Linear(4, 4, bias=False), nn.LayerNorm(4)),
                nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)),
            ]
        )
        self.register_buffer("scale", torch.full((4,), 0.5))
        self.dead = nn.Linear(4, 4)  # behind a ReLU that is never active: exactly zero gradients
        self.head = nn.Linear(4, 2)

    def forward(self, x):
        h = x + self.cls_token
        for block in self.blocks:
            h = torch.tanh(block(h))
        h = h + torch.relu(self.dead(h) - 1e3)
        return self.head(h * self.scale)


class FlatMLP(nn.Module):
    """Images (N, 1, 4, 4) through nn.Flatten into an MLP: a batch of one needs its batch axis."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x):
        return self.net(x)


class BatchNormMLP(nn.Module):
    """A Linear, BatchNorm1d, ReLU, Linear: its output depends on the train/eval mode (batch
    statistics or running ones), and a training forward pass updates the running statistics."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2))

    def forward(self, x):
        return self.net(x)


class Tied(nn.Module):
    """An input and an output projection that share one weight (tied, as in a language model):
    named_parameters() lists it once, under its first name."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(4, 4, bias=False)
        self.body = nn.Linear(4, 4)
        self.out = nn.Linear(4, 4, bias=False)
        self.out.weight = self.embed.weight

    def forward(self, x):
        return self.out(torch.tanh(self.body(self.embed(x))))


class Embedded(nn.Module):
    """Token ids (N, 3) through an nn.Embedding, averaged, into a Linear: x is an integer
    tensor, the parameters float."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        return self.head(self.embed(x).mean(-2))


MODEL_KINDS = {
    "embedded": Embedded,
    "with_unused": WithUnused,
    "nested": Nested,
    "flat_mlp": FlatMLP,
    "batchnorm": BatchNormMLP,
    "tied": Tied,
}


def mlp(sizes, act: str = "relu") -> nn.Sequential:
    """Linear layers of the given widths with ``act`` between them (float32, on the CPU)."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(ACTIVATIONS[act]())
    return nn.Sequential(*layers)


def random_params(model: nn.Module, g: torch.Generator) -> list[torch.Tensor]:
    """Values for each parameter of ``model``: randn / sqrt(fan-in), drawn from ``g``."""
    return [torch.randn(p.shape, generator=g) / math.sqrt(p.shape[-1]) for p in model.parameters()]


def build_model(spec: dict) -> nn.Module:
    """The module ``spec`` describes, its parameters set to ``spec["params"]``."""
    kind = spec["kind"]
    model = MODEL_KINDS[kind]() if kind in MODEL_KINDS else mlp(spec["sizes"], spec["act"])
    with torch.no_grad():
        for p, value in zip(model.parameters(), spec["params"], strict=True):
            p.copy_(value)
    return model.to(device=spec["device"], dtype=spec["dtype"])


def build_model_with_grads(spec: dict) -> nn.Module:
    """The model ``spec["model"]`` describes, after one backward pass of mean(model(x) ** 2)
    on ``spec["x"]``: what grad_norms reads (a contract's builder, the same in the grader)."""
    model = build_model(spec["model"])
    model(spec["x"]).pow(2).mean().backward()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None and spec.get("grad_scale"):
                p.grad.mul_(spec["grad_scale"])  # huge: a float32 norm overflows to inf
        if spec.get("poison"):  # one gradient entry already inf (an overflow upstream)
            grads = [p.grad for p in model.parameters() if p.grad is not None]
            grads[-1].view(-1)[0] = float("inf")
    return model


def build_model_with_stale_grads(spec: dict) -> nn.Module:
    """The model ``spec["model"]`` describes (in eval mode with ``spec["eval"]``), its
    trainable parameters holding the caller's gradients ``spec["grads"]`` from an earlier
    backward pass (a contract's builder, the same in the grader)."""
    model = build_model(spec["model"])
    if spec.get("eval"):
        model.eval()
    for p, grad in zip(model.parameters(), spec["grads"], strict=True):
        if p.requires_grad:
            p.grad = grad.clone()
    return model


def build_step_model(spec: dict) -> nn.Module:
    """The model ``spec["model"]`` describes, in training mode (eval mode with ``spec["eval"]``);
    where ``spec["grads"]`` holds a tensor for a parameter, that parameter's .grad is left from
    an earlier step (None: no gradient). A training step's contract builder."""
    model = build_model(spec["model"]).train(not spec.get("eval", False))
    if spec.get("eval_last"):  # the caller froze its last submodule in eval mode
        list(model.modules())[-1].eval()
    grads = spec.get("grads") or [None] * len(list(model.parameters()))
    for p, grad in zip(model.parameters(), grads, strict=True):
        if grad is not None:
            p.grad = grad.to(device=p.device, dtype=p.dtype, copy=True)
    return model


def build_scaler(spec: dict) -> torch.amp.GradScaler:
    """A GradScaler for ``spec["device"]`` with the settings ``spec["settings"]``."""
    return torch.amp.GradScaler(spec["device"], **spec["settings"])


def build_resume(spec: dict) -> dict:
    """The checkpoint ``spec["checkpoint"]`` (the three state_dicts an earlier step saved)."""
    return copy.deepcopy(spec["checkpoint"])


def build_sgd(spec: dict, model: nn.Module) -> torch.optim.Optimizer:
    """SGD over the model before it (``Build(..., of=(0,))``); with ``spec["last"]``, over its
    last that many parameters only (a caller fine-tuning the head)."""
    params = list(model.parameters())[-spec["last"] :] if spec.get("last") else model.parameters()
    return torch.optim.SGD(params, lr=spec["lr"], momentum=spec.get("momentum", 0.0))


def build_loss_of(spec: dict, model: nn.Module) -> torch.Tensor:
    """The loss the caller has just computed from the model's output on ``spec["x"]``: a scalar
    with its graph (its .grad is kept, so that reading it after backward() is allowed)."""
    loss = LOSSES[spec["loss"]]()(model(spec["x"]), spec["y"])
    loss.retain_grad()
    return loss


def build_loss(spec: dict) -> nn.Module:
    """A mean loss by name (``cross_entropy`` or ``mse``)."""
    return LOSSES[spec["loss"]]()


def set_grads(model: nn.Module, grads: list[torch.Tensor]) -> None:
    """Leftover gradients from an earlier step: a correct answer zeroes them first."""
    for p, grad in zip(model.parameters(), grads, strict=True):
        p.grad = grad.clone()


def params_of(model: nn.Module) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def _plain(value):
    """Builtin numbers, strings and containers for their subclasses (a NumPy float64, an
    OrderedDict), so an answer that passed an isinstance test before still crosses as data."""
    if value is None or isinstance(value, torch.Tensor):
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, dict):
        return {_plain(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    return value


# ----------------------------------------------------------------------------- global settings


def global_flags() -> dict:
    """torch.use_deterministic_algorithms as it is, then switched off for the call that follows:
    a training step that leaves it on makes some of its caller's later operations raise. The
    contract watches the other process-wide switches (boundary.MODES), where this one is not:
    set_seed may switch it on."""
    saved = {
        "torch.use_deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
        "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(),
    }
    torch.use_deterministic_algorithms(False)
    return saved


def flags_changed(saved: dict) -> list[str]:
    """The switches that the call in between left on; all set back to ``saved`` (what
    :func:`global_flags` found), so the session goes on as it was."""
    changed = [
        name
        for name, on in [
            ("torch.use_deterministic_algorithms", torch.are_deterministic_algorithms_enabled()),
        ]
        if on
    ]
    torch.use_deterministic_algorithms(
        saved["torch.use_deterministic_algorithms"], warn_only=saved["warn_only"]
    )
    return changed


# ----------------------------------------------------------------------------- training steps


def probe_overfit_one_batch(overfit_one_batch, case: dict) -> dict:
    """Whether training changed torch's global random state (the contract watches the rest)."""
    model = build_model(case["model"]).train()
    rng_before = torch.get_rng_state()
    loss_fn = CountsLive(LOSSES[case["loss"]]())
    flags = global_flags()
    overfit_one_batch(model, case["x"], case["y"], loss_fn, num_steps=case["steps"], lr=case["lr"])
    return {
        "rng_changed": not torch.equal(torch.get_rng_state(), rng_before),
        "losses_alive": loss_fn.most_alive,
        "flags_changed": flags_changed(flags),
    }


class CountsLive(nn.Module):
    """A loss function that notes, at every call, how many of the losses it returned are still
    alive (referenced by the caller): one or two for a loop that keeps loss.item(), one per
    step for a loop that stores the loss tensors."""

    def __init__(self, loss_fn: nn.Module):
        super().__init__()
        self.loss_fn, self.returned, self.most_alive = loss_fn, [], 0

    def forward(self, output, target):
        self.returned = [r for r in self.returned if r() is not None]
        self.most_alive = max(self.most_alive, len(self.returned))
        loss = self.loss_fn(output, target)
        self.returned.append(weakref.ref(loss))
        return loss


def probe_clipped_step(clipped_step, case: dict) -> dict:
    """Whether the loss's graph survives clipped_step (a second backward() would run)."""
    model = build_model(case["model"]).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with SavedTensors() as saved:  # counts the activations the loss's graph holds
        loss = LOSSES[case["loss"]]()(model(case["x"]), case["y"])
    flags = global_flags()
    clipped_step(model, optimizer, loss, case["max_norm"])
    return {"graph_kept": saved.live > 0, "flags_changed": flags_changed(flags)}


def probe_grad_norms(grad_norms, case: dict) -> dict:
    """grad_norms after one backward pass of mean(model(x)**2); which gradients it changed."""
    model = build_model(case["model"])
    model(case["x"]).pow(2).mean().backward()
    if case.get("frozen_grads"):  # frozen after an earlier step: they keep that step's .grad
        for p in model.parameters():
            if not p.requires_grad:
                p.grad = torch.ones_like(p)
    before = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    result = grad_norms(model)
    changed = [
        n
        for n, p in model.named_parameters()
        if n in before and (p.grad is None or not torch.equal(p.grad, before[n]))
    ]
    return {"result": _plain(result), "changed": changed}


def probe_diagnose_gradients(diagnose_gradients, case: dict):
    """The returned diagnosis for a copy of the norms, and whether the answer changed that dict."""
    norms = dict(case["norms"])
    items = list(norms.items())
    result = diagnose_gradients(norms, **case["kwargs"])
    unchanged = type(norms) is dict and [(k, v) for k, v in norms.items()] == items
    return {"result": _plain(result), "norms_changed": not unchanged}


def probe_accumulated_step(accumulated_step, case: dict) -> dict:
    """accumulated_step on a model with stale gradients: the rows of each forward pass, and the
    order of the forward and backward passes (the contract compares the step itself)."""
    model = build_model(case["model"])
    set_grads(model, case["grads"])
    optimizer = torch.optim.SGD(model.parameters(), lr=case["lr"])
    rows: list[int] = []  # the batch size of every forward pass the model ran
    events: list[str] = []  # "F" a forward pass with a graph ("f" without), "B" its backward

    def note_backward(mod, inp, out) -> None:
        if isinstance(out, torch.Tensor) and out.requires_grad:
            events.append("F")
            out.register_hook(lambda grad: events.append("B"))
        else:
            events.append("f")

    handles = [
        model.register_forward_pre_hook(lambda mod, inp: rows.append(int(inp[0].shape[0]))),
        model.register_forward_hook(note_backward),
    ]
    loss_fn = LOSSES[case["loss"]]()
    settings = _settings(loss_fn)
    model.train(not case.get("eval", False))
    flags = global_flags()
    try:
        accumulated_step(model, optimizer, loss_fn, case["x"], case["y"], case["micro_batch"])
    finally:
        for handle in handles:
            handle.remove()
    changed = sorted(k for k, v in _settings(loss_fn).items() if settings.get(k) != v)
    return {
        "rows": rows,
        "events": "".join(events),
        "loss_fn_changed": changed,
        "flags_changed": flags_changed(flags),
        "modes_changed": modes_changed(model, not case.get("eval", False)),
    }


def modes_changed(model: nn.Module, training: bool) -> list[str]:
    """The modules of ``model`` whose train/eval mode is no longer ``training``."""
    return [name or "(the model)" for name, m in model.named_modules() if m.training != training]


def _settings(module: nn.Module) -> dict:
    """A module's plain attributes (a loss's reduction, ignore_index...), as data."""
    return {k: repr(v) for k, v in vars(module).items() if isinstance(v, (str, int, float, bool))}


class ReportsDevice(torch.Tensor):
    """A CPU tensor that reports another device (``x.device``, ``x.is_cuda``, ``x.get_device()``).

    It lets a CPU machine see which device type an answer derives from its input: the data
    stays on the CPU, and every operation on it returns a plain tensor.
    """

    __torch_function__ = torch._C._disabled_torch_function_impl
    reported = "cuda"

    @property
    def device(self):
        return torch.device(self.reported, 0)

    @property
    def is_cuda(self):
        return self.reported == "cuda"

    @property
    def is_cpu(self):
        return self.reported == "cpu"

    def get_device(self):
        return 0


def _autocast_state() -> dict:
    return {
        dt: [torch.is_autocast_enabled(dt), torch.get_autocast_dtype(dt)] for dt in ("cpu", "cuda")
    }


def _saved_and_loaded(checkpoint) -> tuple[object, str]:
    """``checkpoint`` after torch.save and torch.load(weights_only=True), or why that failed."""
    buffer = io.BytesIO()
    try:
        torch.save(checkpoint, buffer)
        buffer.seek(0)
        return torch.load(buffer, weights_only=True), ""
    except Exception as err:  # an object that cannot be pickled or that weights_only refuses
        return None, f"{type(err).__name__}: {str(err).splitlines()[0][:200] if str(err) else ''}"


def probe_autocast_step(autocast_step, case: dict) -> dict:
    """The dtypes the Linear layers computed in, the autocast state during the forward pass,
    and whether the returned checkpoint saves and loads with weights_only=True (the contract
    compares the step itself). With ``case["reports"]`` the input is a CPU tensor that reports
    that device type."""
    model = build_model(case["model"])
    set_grads(model, case["grads"])
    optimizer = torch.optim.SGD(model.parameters(), lr=case["lr"], momentum=case["momentum"])
    scaler = torch.amp.GradScaler(case["device"].type, **case["scaler"])
    x = case["x"]
    if case.get("reports"):
        x = x.as_subclass(ReportsDevice)
        x.reported = case["reports"]
    seen: list[torch.dtype] = []
    states: list[dict] = []

    def record(mod, inp, out):
        seen.append(out.dtype)
        states.append(_autocast_state())

    handles = [m.register_forward_hook(record) for m in model.modules() if isinstance(m, nn.Linear)]
    model.train(not case.get("eval", False))
    flags = global_flags()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # autocast("cuda") on a machine without CUDA warns
            result = autocast_step(
                model,
                optimizer,
                scaler,
                LOSSES[case["loss"]](),
                x,
                case["y"],
                case["max_norm"],
            )
    finally:
        for h in handles:
            h.remove()
    checkpoint = result.get("checkpoint") if isinstance(result, dict) else None
    checkpoint, error = _saved_and_loaded(checkpoint)
    return {
        "flags_changed": flags_changed(flags),
        "modes_changed": modes_changed(model, not case.get("eval", False)),
        "linear_dtypes": seen,
        "autocast": states,
        "checkpoint_error": error
        or ("" if isinstance(checkpoint, dict) else f"it is a {type(checkpoint).__name__}"),
    }


# ----------------------------------------------------------------------------- first_nonfinite_module


class Log(nn.Module):
    def forward(self, x):
        return torch.log(x)


class Exp(nn.Module):
    def forward(self, x):
        return torch.exp(x)


class SplitReciprocal(nn.Module):
    """Returns a tuple: the input, and its reciprocal (inf where the input is 0)."""

    def forward(self, x):
        return x, 1.0 / x


class TakeFirst(nn.Module):
    def forward(self, pair):
        return pair[0]


class Reordered(nn.Module):
    """``head`` is registered first but runs last; ``body`` holds an exp."""

    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 3)
        self.body = nn.Sequential(nn.Linear(4, 4), Exp(), nn.Identity())

    def forward(self, x):
        return self.head(self.body(x))


class Squashed(nn.Module):
    """exp, then tanh: an overflow to inf is squashed back to 1."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Linear(3, 3)
        self.blowup = Exp()
        self.squash = nn.Tanh()
        self.out = nn.Linear(3, 2)

    def forward(self, x):
        return self.out(self.squash(self.blowup(self.scale(x))))


class LogOfLinear(nn.Module):
    """A container whose own forward makes the NaN: its child's output is finite, its log is not."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        return torch.log(self.lin(x))


class BadShape(nn.Module):
    """log(0) = -inf, then a Linear whose input size is wrong: the forward pass raises."""

    def __init__(self):
        super().__init__()
        self.relu = nn.ReLU()
        self.log = Log()
        self.out = nn.Linear(3, 1)

    def forward(self, x):
        return self.out(self.log(self.relu(x)))


class SharedReLU(nn.Module):
    """One ReLU module called twice: its first output is finite, its second (after the log's
    -inf) is not, so the first culprit in firing order is the log, not the ReLU."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(2, 2)
        self.act = nn.ReLU()
        self.log = Log()
        self.fc2 = nn.Linear(2, 2)

    def forward(self, x):
        return self.act(self.fc2(self.log(self.act(self.fc1(x)))))


def _set_linear(layer: nn.Linear, weight: torch.Tensor, bias: torch.Tensor) -> None:
    with torch.no_grad():
        layer.weight.copy_(weight)
        layer.bias.copy_(bias)


def _log_relu():
    m = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), Log(), nn.Linear(3, 2))
    _set_linear(m[0], torch.eye(3), torch.zeros(3))
    return m, torch.tensor([[1.0, -1.0, 2.0], [0.5, 0.5, 0.5]])


def _reordered():
    m = Reordered()
    _set_linear(m.body[0], 100 * torch.eye(4), torch.zeros(4))
    _set_linear(m.head, torch.tensor([[1.0, -1, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1]]), torch.zeros(3))
    return m, torch.tensor([[10.0, 10.0, 0.1, 0.2]])


def _squashed():
    m = Squashed()
    _set_linear(m.scale, 200 * torch.eye(3), torch.zeros(3))
    return m, torch.tensor([[1.0, 0.1, -1.0], [0.2, 0.3, 0.4]])


def _exp_relu():
    return nn.Sequential(nn.Identity(), Exp(), nn.ReLU()), torch.tensor([[1000.0, 1.0]])


def _tuple_output():
    m = nn.Sequential(nn.Linear(2, 2), SplitReciprocal(), TakeFirst())
    _set_linear(m[0], torch.eye(2), torch.zeros(2))
    return m, torch.tensor([[0.0, 1.0]])


def _nested():
    m = nn.Sequential(nn.Sequential(nn.Linear(2, 2), Log()), nn.Linear(2, 1))
    _set_linear(m[0][0], -torch.eye(2), torch.zeros(2))
    return m, torch.tensor([[1.0, 2.0], [3.0, 4.0]])


def _own_forward():
    m = nn.Sequential(LogOfLinear(), nn.Linear(2, 1))
    _set_linear(m[0].lin, -torch.eye(2), torch.zeros(2))
    return m, torch.tensor([[1.0, 2.0], [0.5, 3.0]])


def _root_forward():
    m = LogOfLinear()  # the model itself takes the log: no submodule's output is non-finite
    _set_linear(m.lin, -torch.eye(2), torch.zeros(2))
    return m, torch.tensor([[1.0, 2.0], [0.5, 3.0]])


def _shared_relu():
    m = SharedReLU()
    _set_linear(m.fc1, torch.eye(2), torch.zeros(2))
    _set_linear(m.fc2, torch.eye(2), torch.zeros(2))
    return m, torch.tensor([[1.0, -1.0], [2.0, 3.0]])


def _raises():
    return BadShape(), torch.tensor([[1.0, -1.0]])


def _huge_finite():
    """Outputs near float32's largest value: finite, but their sum overflows to inf."""
    m = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    _set_linear(m[0], 1e38 * torch.eye(2), torch.zeros(2))
    return m, torch.tensor([[3.0, 3.0], [2.0, 3.0]])


def _huge_float64():
    """A float64 model whose outputs are finite but far beyond float32's range (about 1e300):
    cast to float32 they would read as inf."""
    m = nn.Sequential(nn.Linear(2, 2), nn.Tanh()).double()
    _set_linear(
        m[0], 1e300 * torch.eye(2, dtype=torch.float64), torch.zeros(2, dtype=torch.float64)
    )
    return m, torch.tensor([[3.0, -2.0], [1.0, 0.5]], dtype=torch.float64)


def _nonfinite_input():
    """x itself holds -inf; the first ReLU turns it into 0, so every module's output is finite
    (only outputs count, not inputs)."""
    m = nn.Sequential(nn.ReLU(), nn.Linear(3, 2))
    _set_linear(m[1], torch.ones(2, 3), torch.zeros(2))
    return m, torch.tensor([[1.0, -float("inf"), 2.0]])


def _empty_batch():
    m, x = _ordinary()
    return m, x[:0]


def _ordinary():
    g = torch.Generator().manual_seed(64)
    m = mlp([5, 7, 7, 3])
    with torch.no_grad():
        for p, value in zip(m.parameters(), random_params(m, g), strict=True):
            p.copy_(value)
    return m, torch.randn(4, 5, generator=g)


NONFINITE_MODELS = {
    "log_relu": _log_relu,
    "reordered": _reordered,
    "squashed": _squashed,
    "exp_relu": _exp_relu,
    "tuple_output": _tuple_output,
    "nested": _nested,
    "own_forward": _own_forward,
    "root_forward": _root_forward,
    "shared_relu": _shared_relu,
    "raises": _raises,
    "ordinary": _ordinary,
    "huge_finite": _huge_finite,
    "empty_batch": _empty_batch,
    "huge_float64": _huge_float64,
    "nonfinite_input": _nonfinite_input,
}


def build_nonfinite_model(spec: dict) -> nn.Module:
    """The model ``spec["model"]`` names (its input is ``NONFINITE_MODELS[...]()[1]``), in the
    mode ``spec["training"]`` says; with ``spec["caller_hooks"]``, carrying hooks of its
    caller's own (on the model and its first submodule). A contract's builder."""
    model, _x = NONFINITE_MODELS[spec["model"]]()
    model.train(spec["training"] is not False)
    if spec["training"] == "mixed":  # the last submodule frozen in eval mode by its caller
        list(model.modules())[-1].eval()
    if spec.get("caller_hooks"):
        calls: list[str] = []
        first = next(m for name, m in model.named_modules() if name)
        model.register_forward_hook(lambda mod, inp, out: calls.append("model"))
        first.register_forward_hook(lambda mod, inp, out: calls.append("first"))
        first.register_forward_pre_hook(lambda mod, inp: calls.append("first pre"))
    return model


def nonfinite_model(case: dict) -> tuple[nn.Module, torch.Tensor]:
    """The model and input ``case["model"]`` names, on ``case["device"]``."""
    model, x = NONFINITE_MODELS[case["model"]]()
    return model.to(case["device"]), x.to(case["device"])


_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_HOOK_DICTS = ("_global_forward_hooks", "_global_forward_pre_hooks")


def hook_snapshot(model: nn.Module) -> dict[str, list[int]]:
    """The ids of every hook on every module of ``model``, and of torch's global module hooks."""
    from torch.nn.modules import module as module_module

    snapshot = {}
    for name, m in model.named_modules():
        for attr in _HOOK_DICTS:
            snapshot[f"{name or '(the model)'} {attr.strip('_')}"] = sorted(getattr(m, attr))
    for attr in _GLOBAL_HOOK_DICTS:
        snapshot[f"torch.nn.modules.module {attr}"] = sorted(getattr(module_module, attr))
    return snapshot


def hook_changes(before: dict, after: dict) -> dict[str, list[str]]:
    """Where hooks were added (``left``) and where hooks that were there went (``removed``)."""
    left = [where for where, ids in after.items() if set(ids) - set(before.get(where, ()))]
    removed = [where for where, ids in before.items() if set(ids) - set(after.get(where, ()))]
    return {"left": left, "removed": removed}


def probe_first_nonfinite_module(first_nonfinite_module, case: dict) -> dict:
    """The exception the call raised (with ``case["may_raise"]``), and the hooks it left on
    the model or among torch's global module hooks (the contract watches the rest)."""
    model, x = nonfinite_model(case)
    before = hook_snapshot(model)
    raised, result = None, None
    flags = global_flags()
    try:
        result = first_nonfinite_module(model, x)
    except Exception as err:
        if not case.get("may_raise"):
            raise
        raised = type(err).__name__
    return {
        "raised": raised,
        "result": _plain(result),
        "flags_changed": flags_changed(flags),
        **hook_changes(before, hook_snapshot(model)),
    }


class GradModeSpy(nn.Module):
    """Notes whether autograd was recording when its forward ran."""

    def __init__(self):
        super().__init__()
        self.seen: list[bool] = []

    def forward(self, x):
        self.seen.append(torch.is_grad_enabled())
        return x


def probe_nonfinite_grad_mode(first_nonfinite_module, case: dict) -> dict:
    """Whether autograd was recording during the forward pass first_nonfinite_module ran."""
    spy = GradModeSpy()
    model = nn.Sequential(nn.Linear(2, 2), spy, nn.Linear(2, 1)).to(case["device"])
    first_nonfinite_module(model, torch.ones(3, 2, device=case["device"]))
    return {"seen": list(spy.seen)}


# ----------------------------------------------------------------------------- set_seed


class NoisyDataset(torch.utils.data.Dataset):
    """Each item draws from Python's random, NumPy and torch: all three must be seeded."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, i: int) -> torch.Tensor:
        return torch.tensor(
            [float(i), random.random(), float(np.random.rand()), float(torch.rand(()))],
            dtype=torch.float64,
        )


def probe_set_seed(set_seed, case: dict) -> dict:
    """Whether set_seed(seed) returned a torch.Generator, and the next numbers of every generator.

    Every source is first seeded with ``case["salt"]``, so that a source set_seed leaves
    alone gives known numbers (different for each salt) instead of whatever came before.
    """
    random.seed(case["salt"])
    np.random.seed(case["salt"])
    torch.manual_seed(case["salt"])
    cuda_seeds: list[str] = []  # what CUDA's manual_seed_all received (torch.manual_seed calls it)

    def recorded(f):
        def manual_seed_all(seed):
            cuda_seeds.append(str(seed))
            return f(seed)

        return manual_seed_all

    homes = (torch.cuda, torch.cuda.random)
    saved = [(home, home.manual_seed_all) for home in homes]
    try:
        for home, f in saved:
            home.manual_seed_all = recorded(f)
        generator = set_seed(case["seed"])
    finally:
        for home, f in saved:
            home.manual_seed_all = f
    if not isinstance(generator, torch.Generator):
        return {"generator": False, "returned": _plain(generator)}
    device = case["device"]
    is_global = generator is torch.default_generator
    torch_draws = torch.rand(3).tolist()
    state = torch.get_rng_state()
    generator_draws = torch.rand(3, generator=generator).tolist()
    draws = {
        "Python's random": [random.random() for _ in range(3)],
        "NumPy's global generator": np.random.rand(3).tolist(),
        "torch's CPU generator": torch_draws,
        "the torch.Generator you returned": generator_draws,
    }
    if device.type == "cuda":
        draws["torch's CUDA generator"] = torch.rand(3, device=device).tolist()
    return {
        "generator": True,
        "draws": draws,
        "is_global": is_global,
        "generator_moves_global": not torch.equal(torch.get_rng_state(), state),
        "generator_device": generator.device,
        "cuda_seeds": cuda_seeds,
    }


def probe_loader_run(set_seed, case: dict) -> torch.Tensor:
    """All batches of a shuffled two-worker DataLoader over NoisyDataset, generator=set_seed(seed)."""
    loader = torch.utils.data.DataLoader(
        NoisyDataset(), batch_size=2, shuffle=True, num_workers=2, generator=set_seed(case["seed"])
    )
    return torch.cat(list(loader))


# ----------------------------------------------------------------------------- per_sample_grad_norms


def probe_per_sample_grad_norms(per_sample_grad_norms, case: dict) -> dict:
    """The returned norms for a model whose trainable parameters hold stale gradients, and
    whether the call changed the weights, the inputs or the model's train/eval mode."""
    model = build_model(case["model"])
    if case.get("eval"):
        model.eval()
    for p, grad in zip(model.parameters(), case["grads"], strict=True):
        if p.requires_grad:  # leftovers of the caller's last backward pass
            p.grad = grad.clone()
    x, y = case["x"], case["y"]
    x_before, y_before = x.clone(), y.clone()
    before = params_of(model)
    modes = [m.training for m in model.modules()]
    result = per_sample_grad_norms(model, LOSSES[case["loss"]](), x, y)
    tensor = isinstance(result, torch.Tensor)
    return {
        "result": _plain(result.detach().cpu() if tensor else result),
        "requires_grad": tensor and result.requires_grad,
        "device": str(result.device) if tensor else "",
        "weights_changed": any(
            not torch.equal(p.detach(), b) for p, b in zip(model.parameters(), before, strict=True)
        ),
        "inputs_changed": not (torch.equal(x, x_before) and torch.equal(y, y_before)),
        "mode_changed": modes != [m.training for m in model.modules()],
    }
