"""Probes for 06_debugging (see autograder/probes/__init__.py).

Models cross the data boundary as a *spec*: an architecture name plus the parameter values
(``{"kind": "mlp", "sizes": [4, 8, 3], "act": "relu", "dtype": ..., "device": ...,
"params": [tensors]}``). :func:`build_model` turns a spec into a module; the grader builds
the very same module from the same spec for its reference run.
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import torch
from torch import nn

from tutorial_lib.checks import CheckError, check_no_hooks_left

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
    model = WithUnused() if spec["kind"] == "with_unused" else mlp(spec["sizes"], spec["act"])
    with torch.no_grad():
        for p, value in zip(model.parameters(), spec["params"], strict=True):
            p.copy_(value)
    return model.to(device=spec["device"], dtype=spec["dtype"])


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


# ----------------------------------------------------------------------------- training steps


def probe_overfit_one_batch(overfit_one_batch, case: dict) -> dict:
    """The returned losses and the model's parameters after training."""
    model = build_model(case["model"])
    loss_fn = LOSSES[case["loss"]]()
    losses = overfit_one_batch(
        model, case["x"], case["y"], loss_fn, num_steps=case["steps"], lr=case["lr"]
    )
    return {"losses": _plain(losses), "params": params_of(model)}


def probe_clipped_step(clipped_step, case: dict) -> dict:
    """clipped_step on a model with stale gradients: the returned value, the parameters after."""
    model = build_model(case["model"])
    set_grads(model, case["grads"])
    optimizer = torch.optim.SGD(model.parameters(), lr=case["lr"], momentum=case["momentum"])
    loss = LOSSES[case["loss"]]()(model(case["x"]), case["y"])
    result = clipped_step(model, optimizer, loss, case["max_norm"])
    return {"result": _plain(result), "params": params_of(model)}


def probe_grad_norms(grad_norms, case: dict) -> dict:
    """grad_norms after one backward pass of mean(model(x)**2); which gradients it changed."""
    model = build_model(case["model"])
    model(case["x"]).pow(2).mean().backward()
    before = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
    result = grad_norms(model)
    changed = [
        n
        for n, p in model.named_parameters()
        if n in before and (p.grad is None or not torch.equal(p.grad, before[n]))
    ]
    return {"result": _plain(result), "changed": changed}


def probe_diagnose_gradients(diagnose_gradients, case: dict):
    """The returned diagnosis for a copy of the norms."""
    return _plain(diagnose_gradients(dict(case["norms"]), **case["kwargs"]))


def probe_accumulated_step(accumulated_step, case: dict) -> dict:
    """accumulated_step on a model with stale gradients: the returned value, the parameters after."""
    model = build_model(case["model"])
    set_grads(model, case["grads"])
    optimizer = torch.optim.SGD(model.parameters(), lr=case["lr"])
    loss_fn = LOSSES[case["loss"]]()
    result = accumulated_step(model, optimizer, loss_fn, case["x"], case["y"], case["micro_batch"])
    return {"result": _plain(result), "params": params_of(model)}


def probe_autocast_step(autocast_step, case: dict) -> dict:
    """The returned loss, the dtypes the Linear layers computed in, the parameters after, and
    the GradScaler's scale after the step (when the case has one)."""
    model = build_model(case["model"])
    set_grads(model, case["grads"])
    optimizer = torch.optim.SGD(model.parameters(), lr=case["lr"])
    scaler = None
    if case["scaler"] is not None:
        scaler = torch.amp.GradScaler(case["device"].type, **case["scaler"])
    seen: list[torch.dtype] = []
    handles = [
        m.register_forward_hook(lambda mod, inp, out: seen.append(out.dtype))
        for m in model.modules()
        if isinstance(m, nn.Linear)
    ]
    try:
        result = autocast_step(
            model, optimizer, LOSSES[case["loss"]](), case["x"], case["y"], scaler=scaler
        )
    finally:
        for h in handles:
            h.remove()
    return {
        "result": _plain(result),
        "linear_dtypes": seen,
        "param_dtypes": {n: p.dtype for n, p in model.named_parameters()},
        "params": params_of(model),
        "scale": None if scaler is None else float(scaler.get_scale()),
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
    "ordinary": _ordinary,
}


def nonfinite_model(case: dict) -> tuple[nn.Module, torch.Tensor]:
    """The model and input ``case["model"]`` names, on ``case["device"]``."""
    model, x = NONFINITE_MODELS[case["model"]]()
    return model.to(case["device"]), x.to(case["device"])


def probe_first_nonfinite_module(first_nonfinite_module, case: dict) -> dict:
    """The returned name, and the message about forward hooks left on the model (or None)."""
    model, x = nonfinite_model(case)
    result = first_nonfinite_module(model, x)
    try:
        check_no_hooks_left(model, case["what"])
        hooks = None
    except CheckError as err:
        hooks = str(err)
    return {"result": _plain(result), "hooks": hooks}


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
    generator = set_seed(case["seed"])
    if not isinstance(generator, torch.Generator):
        return {"generator": False, "returned": _plain(generator)}
    device = case["device"]
    draws = {
        "Python's random": [random.random() for _ in range(3)],
        "NumPy's global generator": np.random.rand(3).tolist(),
        "torch's CPU generator": torch.rand(3).tolist(),
        "the torch.Generator you returned": torch.rand(3, generator=generator).tolist(),
    }
    if device.type == "cuda":
        draws["torch's CUDA generator"] = torch.rand(3, device=device).tolist()
    return {"generator": True, "draws": draws}


def probe_loader_run(set_seed, case: dict) -> torch.Tensor:
    """All batches of a shuffled two-worker DataLoader over NoisyDataset, generator=set_seed(seed)."""
    loader = torch.utils.data.DataLoader(
        NoisyDataset(), batch_size=2, shuffle=True, num_workers=2, generator=set_seed(case["seed"])
    )
    return torch.cat(list(loader))
