"""Hidden checks for 03_modules.

Every check reaches the learner's class or function through a probe in
``autograder/probes/modules.py``; the probe returns what it saw step by step (see its
docstring), and the judging below works on that data only.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import torch
from hypothesis import strategies as st
from torch import nn

from autograder.boundary import AnswerRaised, AnswerUnreachable, observe
from autograder.contracts import Build, Contract, Draw, Inputs, uses
from autograder.probes import modules as probes
from tutorial_lib.checks import (
    CheckError,
    assert_close,
    check_dtype,
    check_shape,
    check_type,
)
from tutorial_lib.device import get_device
from tutorial_lib.i18n import N_, _

_LEFT_BEHIND = N_(
    "After .to(device) something the module uses stayed behind: a layer kept in a plain Python "
    "list, a tensor kept as a plain attribute, or a tensor created on a fixed device in forward. "
    "Register layers as submodules and constant tensors with register_buffer."
)


def _take(seen: dict, key: str, what: str, calling: bool = False) -> Any:
    """``seen[key]``; if the probe stopped before that step, the error the learner's code raised.

    ``calling`` marks a call of the module: a device or dtype clash there gets a message that
    names the usual causes.
    """
    if key in seen:
        return seen[key]
    raised = seen.get("raised")
    if type(raised) is not dict:
        raise AnswerUnreachable(f"{what}: the probe's result has no {key!r}")
    type_name, message = str(raised.get("type")), str(raised.get("message", ""))
    if calling and "RuntimeError" in raised.get("bases", []):
        first = (message.strip().splitlines() or [type_name])[0]
        if any(word in first for word in ("device", "dtype", "same type", "Half", "Double")):
            raise CheckError(
                _("{what} failed with: {first}. {left_behind}").format(
                    what=what, first=first, left_behind=_(_LEFT_BEHIND)
                )
            )
    raise AnswerRaised(what, type_name, message)


def _check_module(seen: dict, what: str) -> None:
    """The probe's note of what the constructor returned: it must be an nn.Module."""
    raised = seen.get("raised")
    if (
        type(raised) is dict
        and raised.get("step") == "construct"
        and "before Module.__init__() call" in str(raised.get("message"))
    ):
        raise CheckError(
            _(
                "{what} raised {type}: {message}. Call super().__init__() first in __init__, "
                "before assigning any submodule, parameter or buffer."
            ).format(what=what, type=raised.get("type"), message=raised.get("message"))
        )
    type_name = _take(seen, "type", what)
    if seen.get("is_module") is not True:
        raise CheckError(
            _("{what} should be a Module, got {type_name}.").format(what=what, type_name=type_name)
        )


def _no_parameters(what: str) -> CheckError:
    return CheckError(
        _(
            "{what} has no parameters (model.parameters() is empty), so an optimizer "
            "cannot train it, .to(device) cannot move it and state_dict() cannot save "
            "it. Layers kept in a plain Python list or dict, or created inside forward, "
            "are invisible to nn.Module: assign them in __init__ (self.fc = "
            "nn.Linear(...)) or keep them in nn.ModuleList / nn.ModuleDict."
        ).format(what=what)
    )


# ---------------------------------------------------------------- Exercise: MLP


def _linear_pairs(params: list) -> list:
    """(weight, bias) of each Linear, in order: a 2-D weight is followed by its bias; other
    tensors (a PReLU's weight) are skipped."""
    pairs, i = [], 0
    while i < len(params):
        if params[i].dim() == 2 and i + 1 < len(params):
            pairs.append((params[i], params[i + 1]))
            i += 2
        else:
            i += 1
    return pairs


def _mlp_reference(x, params, activation):
    h = x
    pairs = _linear_pairs(params)
    for i, (weight, bias) in enumerate(pairs):
        h = h @ weight.T + bias
        if i < len(pairs) - 1:
            h = activation().to(h.device, h.dtype)(h)
    return h


def check_MLP(MLP) -> None:
    """Parameter shapes per layer, values against a reference built from its own weights."""
    device = get_device()
    g = torch.Generator().manual_seed(3)
    configs = [
        ([4, 16, 3], "ReLU"),
        ([5, 2], "ReLU"),
        ([3, 8, 8, 8, 1], "Tanh"),
        ([1, 1, 1], "ReLU"),
        ([6, 32, 16, 4], "GELU"),
        ([3, 5, 4, 2], "PReLU"),  # an activation with a parameter: one fresh instance per layer
    ]
    for sizes, name in configs:
        activation = probes.ACTIVATIONS[name]
        what = f"MLP({sizes}, activation=nn.{name})"
        batches = (0, 1, 7)
        inputs = [torch.randn(n, sizes[0], generator=g) for n in batches]
        case = {"sizes": sizes, "activation": name, "device": device, "inputs": inputs, "seed": 3}
        seen = observe(probes.probe_MLP, MLP, case, what)
        _check_module(seen, what)
        if seen.get("sizes unchanged") is False:
            raise CheckError(
                _(
                    "{what} changed the caller's sizes list (pop, append, ...); read it, do not "
                    "modify it."
                ).format(what=what)
            )
        named = _take(seen, "parameters", what)
        if not named:
            raise _no_parameters(what)
        expected = []
        for n_in, n_out in itertools.pairwise(sizes):
            expected += [(n_out, n_in), (n_out,)]
        shapes = [tuple(shape) for _, shape in named]
        if name == "PReLU":
            fresh = len(sizes) - 2  # one PReLU weight of shape (1,) per hidden layer
            prelus = [s_ for s_ in shapes if s_ == (1,)]
            if [s_ for s_ in shapes if s_ != (1,)] == expected and len(prelus) != fresh:
                raise CheckError(
                    _(
                        "{what} has {n_prelus} PReLU weight(s), expected {fresh}: create a fresh "
                        "instance activation() for every hidden layer. One instance used after every "
                        "layer shares its parameters between them."
                    ).format(what=what, n_prelus=len(prelus), fresh=fresh)
                )
            shapes = [s_ for s_ in shapes if s_ != (1,)]
        if shapes != expected:
            raise CheckError(
                _(
                    "{what} has parameters of shapes {shapes}, expected {expected}: one "
                    "nn.Linear(sizes[i], sizes[i + 1]) (with a bias) for each consecutive pair "
                    "of sizes, registered in order, and no other parameters."
                ).format(what=what, shapes=shapes, expected=expected)
            )
        params = _take(seen, "weights", f"{what}.to({device})")
        for i, (n, x_cpu) in enumerate(zip(batches, inputs, strict=True)):
            x = x_cpu.to(device)
            label = _("{what} on x of shape ({n}, {size})").format(what=what, n=n, size=sizes[0])
            out = _take(seen, f"out {i}", label, calling=True)
            with torch.no_grad():
                ref = _mlp_reference(x, params, activation)
            check_shape(out, (n, sizes[-1]), names="N out", what=label)
            try:
                assert_close(out, ref, what=label, rtol=1e-4, atol=1e-5)
            except CheckError as err:
                if n and torch.allclose(out, activation()(ref), rtol=1e-4, atol=1e-5):
                    raise CheckError(
                        _(
                            "{label}: the activation is applied after the last layer too. The last "
                            "nn.Linear's output (the scores, or logits) must stay unbounded."
                        ).format(label=label)
                    ) from None
                if activation is not nn.ReLU and n:
                    raise CheckError(
                        _(
                            "{err} Did you use the activation passed in (nn.{name}), creating a fresh "
                            "instance with activation()?"
                        ).format(err=err, name=name)
                    ) from None
                raise
    # .double() on the CPU stands in for .to(device)
    x = torch.randn(4, 3, generator=g, dtype=torch.float64)
    case = {
        "sizes": [3, 5, 2],
        "activation": None,
        "double": True,
        "device": torch.device("cpu"),
        "inputs": [x],
        "seed": 3,
    }
    label = _("MLP([3, 5, 2]).double() on float64 input")
    seen = observe(probes.probe_MLP, MLP, case, "MLP([3, 5, 2]).double()")
    out = _take(seen, "out 0", label, calling=True)
    check_dtype(out, torch.float64, label)


# ---------------------------------------------------------------- Exercise: ResidualBlock

_RESIDUAL_KEYS = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}


def check_ResidualBlock(ResidualBlock) -> None:
    """x + fc2(relu(fc1(x))) from its own state_dict; stable parameters; any leading dims."""
    device = get_device()
    g = torch.Generator().manual_seed(4)
    for dim, hidden in [(4, 8), (1, 1), (16, 3), (5, 5)]:
        what = f"ResidualBlock({dim}, {hidden})"
        inputs = [
            {"x": torch.randn(5, dim, generator=g), "t": False},
            {"x": torch.randn(1, dim, generator=g), "t": False},
            {"x": torch.randn(0, dim, generator=g), "t": False},
            {
                "x": torch.randn(2, 3, dim, generator=g),
                "t": False,
            },  # (N, L, D): Linear works on the last dim
            {
                "x": torch.randn(dim, 6, generator=g),
                "t": True,
            },  # the probe passes x.t(): non-contiguous (6, D)
        ]
        backward_x = torch.randn(3, dim, generator=g)
        case = {
            "dim": dim,
            "hidden": hidden,
            "device": device,
            "inputs": inputs,
            "backward_x": backward_x,
            "double_x": torch.randn(2, dim, generator=g, dtype=torch.float64),
            "seed": 4,
        }
        seen = observe(probes.probe_ResidualBlock, ResidualBlock, case, what)
        _check_module(seen, what)
        keys = set(_take(seen, "keys", what))
        if not keys:
            raise _no_parameters(what)
        if keys != _RESIDUAL_KEYS:
            raise CheckError(
                _(
                    "{what}.state_dict() has keys {keys}, expected {residual_keys}: two layers "
                    "named fc1 = nn.Linear(dim, hidden) and fc2 = nn.Linear(hidden, dim)."
                ).format(what=what, keys=sorted(keys), residual_keys=sorted(_RESIDUAL_KEYS))
            )
        sd = _take(seen, "state", f"{what}.to({device})")
        check_shape(sd["fc1.weight"], (hidden, dim), names="hidden dim", what=f"{what}.fc1.weight")
        check_shape(sd["fc2.weight"], (dim, hidden), names="dim hidden", what=f"{what}.fc2.weight")
        for i, item in enumerate(inputs):
            x = item["x"].to(device)
            x = x.t() if item["t"] else x
            label = _("{what} on x of shape {shape}").format(what=what, shape=tuple(x.shape))
            out = _take(seen, f"out {i}", label, calling=True)
            with torch.no_grad():
                h = torch.relu(x @ sd["fc1.weight"].T + sd["fc1.bias"])
                ref = x + h @ sd["fc2.weight"].T + sd["fc2.bias"]
            check_shape(out, tuple(x.shape), what=label)
            if seen.get(f"x unchanged {i}") is False:
                raise CheckError(
                    _(
                        "{label}: forward changed the caller's x in place (x += ..., x.add_(...)). "
                        "The caller's tensor is overwritten, and on a leaf that requires grad "
                        "autograd refuses it: return x + self.fc2(...), a new tensor."
                    ).format(label=label)
                )
            again = _take(seen, f"again {i}", f"{label} (a second call)", calling=True)
            check_shape(again, tuple(x.shape), what=f"{label} (a second call)")
            if x.numel() and not torch.allclose(out, again, rtol=1e-5, atol=1e-6):
                raise CheckError(
                    _(
                        "{label}: calling the block twice on the same x gave different outputs. "
                        "Layers created inside forward get fresh random weights on every call and "
                        "are never trained: create them once, in __init__."
                    ).format(label=label)
                )
            try:
                assert_close(out, ref, what=label, rtol=1e-4, atol=1e-5)
            except CheckError:
                if x.numel() and torch.allclose(out, ref - x, rtol=1e-4, atol=1e-5):
                    raise CheckError(
                        _(
                            "{label}: the skip connection is missing; return x + fc2(relu(fc1(x)))."
                        ).format(label=label)
                    ) from None
                if x.numel() and torch.allclose(out, torch.relu(ref), rtol=1e-4, atol=1e-5):
                    raise CheckError(
                        _(
                            "{label}: there should be no ReLU after the sum; return x + "
                            "fc2(relu(fc1(x)))."
                        ).format(label=label)
                    ) from None
                raise
        grads = _take(seen, "grads", f"{what}: block(x).pow(2).sum().backward()")
        missing = [name for name, grad in grads if grad is None]
        if missing:
            raise CheckError(
                _(
                    "{what}: after backward these parameters have no gradient: {missing}. "
                    "forward must use the layers registered in __init__."
                ).format(what=what, missing=missing)
            )
        x = backward_x.to(device).requires_grad_(True)
        with torch.enable_grad():
            h = torch.relu(x @ sd["fc1.weight"].T + sd["fc1.bias"])
            (x + h @ sd["fc2.weight"].T + sd["fc2.bias"]).pow(2).sum().backward()
        label = f"x.grad after {what}(x).pow(2).sum().backward()"
        got = seen.get("x.grad")
        if got is None:
            raise CheckError(
                _(
                    "{label} is None: the gradient does not reach the input. Do not detach x or "
                    "compute the block under torch.no_grad()."
                ).format(label=label)
            )
        assert_close(
            got,
            x.grad,
            what=f"{label} (through the skip and through fc1, fc2)",
            rtol=1e-4,
            atol=1e-5,
        )
        if "double out" in seen or "raised" in seen:
            out = _take(seen, "double out", f"{what}.double() on float64 input", calling=True)
            check_dtype(out, torch.float64, _("{what}.double() on float64 input").format(what=what))


# ---------------------------------------------------------------- Exercise: count_trainable


_COUNT_PARTS = (
    "linear",
    "linear-no-bias",
    "relu",
    "batchnorm",
    "batchnorm-frozen",
    "bias-frozen",
    "cls-token",
    "tied",
    "lstm",
    "shared-in-sequential",
    "empty",
    "conv",
)


# A weight tied across two modules, one layer used twice, a Parameter on a model itself,
# no parameters at all, parameters not called weight and bias.
_TRICKY_PARTS = ("tied", "shared-in-sequential", "cls-token", "empty", "relu", "lstm")


def _reference_count(model) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _draw_count_model(d: Draw) -> Inputs:
    """Models put together from parts (buffers, frozen weights or biases, tied and shared
    weights, parameters on a model itself, an LSTM), some parameters frozen on top."""
    if d.family == "edges":  # one part, among those a loop over layers gets wrong
        parts = [d.draw(st.sampled_from(_TRICKY_PARTS))]
    else:
        parts = [d.draw(st.sampled_from(_COUNT_PARTS)) for _part in range(d.size(0, 4))]
    frozen = sorted(d.draw(st.sets(st.integers(0, 7), max_size=3)))
    root = d.draw(st.booleans())
    spec = {"parts": parts, "root": root, "frozen": frozen, "training": d.draw(st.booleans())}
    label = _("a Sequential of {parts}").format(parts=parts)
    if root:
        label += _(" with a cls_token Parameter of its own")
    if frozen:
        label += _(", parameters {frozen} of model.parameters() frozen").format(frozen=frozen)
    return Inputs((Build(probes.build_count_parts, spec, label),))


def _count_hint(family: str, inputs: Inputs) -> str:
    parts = inputs.args[0].spec["parts"]
    hint = _(" Count elements with p.numel(), only where p.requires_grad is True.")
    if {"tied", "shared-in-sequential"} & set(parts):
        hint += _(
            " A shared weight appears under two names but is one Parameter: "
            "model.parameters() lists it once; model.modules() or state_dict() twice."
        )
    if {"batchnorm", "batchnorm-frozen", "conv", "cls-token"} & set(parts):
        hint += _(" Buffers (BatchNorm's running statistics) are not parameters.")
    if inputs.args[0].spec["root"] or "cls-token" in parts:
        hint += _(
            " Parameters registered on the model itself (the cls_token) count too: "
            "model.parameters() lists them with its children's; walking the layers (leaf "
            "modules, or modules with .weight and .bias) misses them."
        )
    return hint.strip()  # the engine puts a space before it


COUNT_TRAINABLE_PARAMETERS = Contract(
    "count_trainable_parameters",
    _reference_count,
    _draw_count_model,
    families=("values", "edges"),
    arg_names=("model",),
    hint=_count_hint,
    examples=16,
)


@uses(COUNT_TRAINABLE_PARAMETERS)
def check_count_trainable_parameters(count_trainable_parameters) -> None:
    """The contract: elements, not tensors; buffers and frozen parameters left out; shared
    weights counted once; the caller's model (flags, mode) left as it was."""


# ---------------------------------------------------------------- Exercise: RunningMean


def _buffer(state: dict, what: str) -> torch.Tensor:
    """The running_mean entry of a state_dict the probe saw (keys and that tensor)."""
    if state.get("running_mean") is None:
        raise CheckError(
            _(
                "{what}.state_dict() has keys {keys}, but no 'running_mean'. A tensor kept "
                "as a plain attribute (self.running_mean = torch.zeros(...)) is neither "
                "saved by state_dict() nor moved by .to(device): register it with "
                "self.register_buffer('running_mean', torch.zeros(num_features))."
            ).format(what=what, keys=state.get("keys"))
        )
    buf = state["running_mean"]
    check_type(buf, torch.Tensor, f"{what}'s running_mean")
    return buf


def check_RunningMean(RunningMean) -> None:
    """Buffer registered, saved, moved and converted; updates only in training, no history."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    for num_features, momentum in [(3, 0.1), (1, 0.5), (7, 0.9)]:
        what = f"RunningMean({num_features}, momentum={momentum})"
        batches = (4, 1, 9)
        train = [torch.randn(n, num_features, generator=g) for n in batches]
        eval_x = torch.randn(6, num_features, generator=g)
        case = {
            "num_features": num_features,
            "momentum": momentum,
            "device": device,
            "train": train,
            "eval_x": eval_x,
            "seed": 5,
        }
        seen = observe(probes.probe_RunningMean, RunningMean, case, what)
        _check_module(seen, what)
        buf = _buffer(_take(seen, "initial", what), what)
        params = _take(seen, "parameters", what)
        if params:
            raise CheckError(
                _(
                    "{what} has parameters {params}. The running mean is not learned: an "
                    "nn.Parameter would be handed to the optimizer and trained. Use "
                    "register_buffer."
                ).format(what=what, params=params)
            )
        assert_close(buf, torch.zeros(num_features), what=f"{what}'s initial running_mean")
        ref = torch.zeros(num_features, device=device)
        for i, (n, x_cpu) in enumerate(zip(batches, train, strict=True)):
            x = x_cpu.to(device)
            label = _("{what} in training mode on a batch of shape ({n}, {num_features})").format(
                what=what, n=n, num_features=num_features
            )
            out = _take(seen, f"out {i}", label, calling=True)
            ref = (1 - momentum) * ref + momentum * x.mean(0)
            buf = _buffer(_take(seen, f"buffer {i}", label), what)
            if buf.requires_grad:
                raise CheckError(
                    _(
                        "{label}: after the call running_mean requires grad, so it drags the "
                        "autograd graph of every earlier batch along. Update it under "
                        "torch.no_grad() (or from x.detach())."
                    ).format(label=label)
                )
            assert_close(buf, ref, what=f"running_mean after {label}", rtol=1e-5, atol=1e-6)
            assert_close(out, x - ref, what=label, rtol=1e-5, atol=1e-6)
            grad_what = _("x.grad after out.sum().backward() ({label})").format(label=label)
            grad = _take(seen, f"x.grad {i}", grad_what)
            assert_close(grad, torch.ones_like(x), what=grad_what, rtol=1e-5, atol=1e-6)
        out = _take(seen, "empty", f"{what} on an empty batch", calling=True)
        check_shape(out, (0, num_features), names="N F", what=f"{what} on an empty batch")
        buf = _buffer(_take(seen, "buffer empty", f"{what} on an empty batch"), what)
        try:
            assert_close(buf, ref, what="running_mean", rtol=1e-5, atol=1e-6)
        except CheckError:
            raise CheckError(
                _(
                    "{what}: an empty batch changed running_mean to {values}; the mean of zero "
                    "rows is NaN. Skip the update when the batch is empty."
                ).format(what=what, values=buf.detach().cpu().tolist())
            ) from None
        x = eval_x.to(device)
        out = _take(seen, "eval", f"{what} in eval mode", calling=True)
        buf = _buffer(_take(seen, "buffer eval", f"{what} in eval mode"), what)
        try:
            assert_close(buf, ref, what="running_mean", rtol=1e-5, atol=1e-6)
        except CheckError:
            raise CheckError(
                _(
                    "{what}: running_mean changed in eval mode. Update it only when "
                    "self.training is True."
                ).format(what=what)
            ) from None
        assert_close(out, x - ref, what=f"{what} in eval mode", rtol=1e-5, atol=1e-6)
        fresh_what = _("a fresh {what} after load_state_dict").format(what=what)
        fresh = _take(seen, "fresh", fresh_what, calling=True)
        assert_close(fresh, x - ref, what=fresh_what, rtol=1e-5, atol=1e-6)
    # .double() on the CPU stands in for .to(device)
    case = {
        "num_features": 2,
        "momentum": 0.5,
        "x": torch.ones(3, 2, dtype=torch.float64),
        "seed": 5,
    }
    seen = observe(probes.probe_RunningMean_double, RunningMean, case, "RunningMean(2).double()")
    _check_module(seen, "RunningMean(2, momentum=0.5)")
    buf = _buffer(_take(seen, "buffer", "RunningMean(2).double()"), "RunningMean(2)")
    check_dtype(buf, torch.float64, "running_mean after .double()")
    out = _take(seen, "out", "RunningMean(2).double()", calling=True)
    check_dtype(out, torch.float64, "RunningMean(2).double() on float64 input")
    x = torch.randn(5, 3, generator=g, dtype=torch.float64)
    case = {"num_features": 3, "momentum": None, "x": x, "seed": 5}
    what = _("RunningMean(3) (the default momentum, 0.1)")
    seen = observe(probes.probe_RunningMean_double, RunningMean, case, what)
    _check_module(seen, what)
    buf = _buffer(_take(seen, "buffer after", f"{what} after one training batch"), what)
    assert_close(
        buf,
        0.1 * x.mean(0),
        what=f"running_mean of {what} after one training batch from zeros",
        rtol=1e-6,
        atol=1e-8,
    )


# ---------------------------------------------------------------- Exercise: capture_activations


def _expected_activations(model, x):
    with torch.no_grad():
        acts = {"inp": model.inp(x)}
        acts["block.fc"] = model.block.fc(acts["inp"])
        acts["block.act"] = acts["block"] = torch.relu(acts["block.fc"])
        a, b = acts["block"][..., :3], acts["block"][..., 3:]
        acts["split"] = (a, b)
        first, last = model.shared(a), model.shared(b)
        acts["shared"] = last  # the module runs twice: its last output
        acts["shared (first call)"] = first
        acts["out"] = model.out(torch.cat([first, last], dim=-1))
        acts["tanh"] = acts[""] = torch.tanh(acts["out"])
    return acts


def _compare_activation(got, expected, name: str, label: str) -> None:
    if isinstance(expected, tuple):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            raise CheckError(
                _(
                    "{label}: the module returns a tuple of {n_expected} tensors; store a tuple "
                    "(or list) of their detached copies, got {type_name}. In the hook: "
                    "tuple(t.detach().clone() for t in output)."
                ).format(label=label, n_expected=len(expected), type_name=type(got).__name__)
            )
        for k, (g_, e_) in enumerate(zip(got, expected, strict=True)):
            _compare_activation(g_, e_, name, f"{label}[{k}]")
        return
    check_type(got, torch.Tensor, label)
    if got.requires_grad:
        raise CheckError(
            _(
                "{label} requires grad: it keeps the whole graph alive. Store "
                "output.detach().clone()."
            ).format(label=label)
        )
    assert_close(got, expected, what=label, rtol=1e-5, atol=1e-6)


_HOOK_NAMES = ("", "inp", "block", "block.fc", "block.act", "split", "shared", "out", "tanh")


def _reference_capture(model, x, names):
    acts = _expected_activations(model, x)
    return {name: acts[name] for name in names}


def _draw_capture(d: Draw) -> Inputs:
    """The hook model (train or eval mode, the caller's own hooks on it), a batch (empty and
    one row included) and some of its module names (none, the model itself '', a module run
    twice, one returning a tuple)."""
    spec = {"seed": d.draw(st.integers(0, 9)), "training": d.draw(st.booleans())}
    names = [name for name in _HOOK_NAMES if d.draw(st.booleans())]  # each one half the time
    x = d.tensor(d.size(0 if d.family == "edges" else 1, 4, empty_ok=True), 4)
    model = Build(probes.build_hooked_model, spec, _("a model with forward hooks of its own"))
    return Inputs((model, x, names))


def _compare_capture(got, expected: dict, what: str, inputs: Inputs) -> None:
    names = inputs.args[2]
    if not isinstance(got, dict):
        type_name = type(got).__name__
        hint = _(" Did you forget a `return`?") if got is None else ""
        raise CheckError(
            _("{what} should be a dict, got {type_name}.{hint}").format(
                what=what, type_name=type_name, hint=hint
            )
        )
    if set(got) != set(names):
        missing = sorted(set(names) - set(got))
        extra = sorted(set(got) - set(names), key=str)
        hint = ""
        if "" in missing:
            hint = _(
                " '' is the model itself; its hooks only run when you call model(x), not "
                "model.forward(x)."
            )
        if "split" in missing:
            hint += _(
                " 'split' returns a tuple of tensors: store a tuple of their detached "
                "copies, tuple(t.detach().clone() for t in output)."
            )
        if extra:
            hint += _(" Start from an empty dict on every call.")
        elif missing and len(got) == 1 and len(names) > 1:
            hint += _(
                " Every hook wrote under one key: a function defined in a loop reads the "
                "loop variable when it runs, not when it was defined. Bind it as a default "
                "argument: def hook(module, inputs, output, name=name)."
            )
        raise CheckError(
            _(
                "{what} returned the keys {got}; missing {missing}, unexpected {extra}.{hint}"
            ).format(what=what, got=sorted(got, key=str), missing=missing, extra=extra, hint=hint)
        )
    x = inputs.args[1]
    acts = _expected_activations(inputs.args[0].make(), x)
    for name in names:
        label = _("the activation of {name!r} from {what}").format(name=name, what=what)
        try:
            _compare_activation(got[name], expected[name], name, label)
        except CheckError as err:
            hint = ""
            value = got[name]
            if (
                name == "block.fc"
                and isinstance(value, torch.Tensor)
                and value.shape == acts["block"].shape
                and torch.allclose(value, acts["block"])
            ):
                hint = _(
                    " The in-place ReLU that runs after it changed the tensor your hook stored: "
                    "store a copy, output.detach().clone()."
                )
            if (
                name == "shared"
                and x.shape[0]
                and isinstance(value, torch.Tensor)
                and value.shape == acts["shared"].shape
                and torch.allclose(value, acts["shared (first call)"])
            ):
                hint = _(
                    " 'shared' runs twice in one forward pass and you kept its first output; "
                    "keep the last one (let the second call overwrite the entry)."
                )
            if "tuple" in str(err):
                raise
            raise CheckError(
                _(
                    "{err}{hint} The hook's arguments are (module, inputs, output); store the "
                    "output."
                ).format(err=err, hint=hint)
            ) from None


CAPTURE_ACTIVATIONS = Contract(
    "capture_activations",
    _reference_capture,
    _draw_capture,
    families=("values", "edges", "strides"),
    compare=_compare_capture,
    arg_names=("model", "x", "names"),
)


@uses(CAPTURE_ACTIVATIONS)
def check_capture_activations(capture_activations) -> None:
    """The contract (outputs of the named modules, the root included, detached copies; a
    module run twice, a tuple output; the caller's hooks, mode and flags kept), then, on one
    model in turn: model(x) runs once, through __call__; a forward pass that raises leaves no
    hook behind; no global hook stays (what a contract's snapshot of the model cannot see)."""
    device = get_device()
    g = torch.Generator().manual_seed(6)
    calls = [
        {"x": torch.randn(3, 4, generator=g), "names": ["inp", "block.fc"]},
        {"x": torch.randn(2, 7, generator=g), "names": ["inp", ""], "raises": True},
        {"x": torch.randn(2, 4, generator=g), "names": ["shared", "out"]},
    ]
    case = {"seed": 6, "device": device, "calls": calls}
    seen = observe(
        probes.probe_capture_activations, capture_activations, case, "capture_activations(...)"
    )
    for i, call in enumerate(calls):
        what = _("capture_activations(model, x of shape {shape}, {names})").format(
            shape=tuple(call["x"].shape), names=call["names"]
        )
        if call.get("raises"):
            if f"raised {i}" not in seen:
                _take(seen, f"raised {i}", what)
            _judge_hooks_left(
                seen,
                i,
                _("{what} (where model(x) raises: x has 7 features, not 4)").format(what=what),
            )
            continue
        _take(seen, f"type {i}", what)
        if seen.get(f"model runs {i}") == 0:
            raise CheckError(
                _(
                    "{what}: the model's own forward hooks did not run, so model(x) was never "
                    "called through __call__. Call model(x), not model.forward(x)."
                ).format(what=what)
            )
        _judge_hooks_left(seen, i, what)
        if seen.get(f"model runs {i}", 1) > 1:
            raise CheckError(
                _(
                    "{what} ran the model {runs} times; run model(x) once, with all the hooks "
                    "registered."
                ).format(what=what, runs=seen[f"model runs {i}"])
            )


def _judge_hooks_left(seen: dict, i: int, what: str) -> None:
    kept = seen.get(f"caller hooks kept {i}")
    if kept is not None and set(kept) != {"", "block.fc"}:
        lost = sorted({"", "block.fc"} - set(kept))
        raise CheckError(
            _(
                "{what} removed forward hooks that the caller had registered before (on "
                "{lost}). Remove only your own: keep the handle that register_forward_hook "
                "returns and call handle.remove(), never module._forward_hooks.clear()."
            ).format(what=what, lost=[k or _("(the model)") for k in lost])
        )
    left = seen.get(f"hooks left {i}")
    if left:
        raise CheckError(
            _(
                "{what} left forward hooks on {left}. Keep the handle that "
                "register_forward_hook returns and call handle.remove() on each (in a "
                "finally: block, so that it runs even when model(x) raises), or every later "
                "forward pass runs your hooks again."
            ).format(what=what, left=left)
        )


# ---------------------------------------------------------------- Exercise: init_weights

_APPLY_ERRORS = {"ValueError", "RuntimeError", "TypeError", "AttributeError"}


def check_init_weights(init_weights) -> None:
    """Linear: Kaiming-normal weights (fan_in, ReLU gain), zero bias; LayerNorm: ones, zeros."""
    case = {"seed": 7, "device": get_device()}
    seen = observe(probes.probe_init_weights, init_weights, case, "model.apply(init_weights)")
    raised = seen.get("raised")
    if type(raised) is dict and raised.get("step") == "apply":
        if _APPLY_ERRORS & set(raised.get("bases", [])):
            raise CheckError(
                _(
                    "model.apply(init_weights) failed with {type}: {message}. apply calls "
                    "init_weights on every submodule (Linear, ReLU, LayerNorm, Dropout and the "
                    "Sequential itself): test isinstance(module, nn.Linear) and "
                    "isinstance(module, nn.LayerNorm), and leave other modules alone. A layer "
                    "built with bias=False (or a LayerNorm with elementwise_affine=False) has "
                    "None there: skip what is None."
                ).format(type=raised["type"], message=raised["message"])
            )
        _take(seen, "layers", "model.apply(init_weights)")
    layers = _take(seen, "layers", "init_weights(nn.Linear(500, 250))")
    _judge_linears(layers)
    ln = layers["model[3]"]
    if not all(isinstance(ln[k], torch.Tensor) for k in ("weight", "bias")) or not (
        bool((ln["weight"] == 1).all()) and bool((ln["bias"] == 0).all())
    ):
        raise CheckError(
            _(
                "after model.apply(init_weights) a LayerNorm should have weight all ones and "
                "bias all zeros: nn.init.ones_(module.weight), nn.init.zeros_(module.bias)."
            )
        )
    raised = seen.get("raised")
    if type(raised) is dict and raised.get("step") == "apply extras":
        raise CheckError(
            _(
                "init_weights failed with {type}: {message}, applied to Linear(200, 100, "
                "bias=False), LayerNorm(5, elementwise_affine=False), Embedding, Conv1d, "
                "BatchNorm1d and a nested Linear. A layer built without a bias (or a "
                "LayerNorm without elementwise_affine) has None there: skip what is None; "
                "leave every module that is not an nn.Linear or nn.LayerNorm alone."
            ).format(type=raised["type"], message=raised["message"])
        )
    _judge_linears(_take(seen, "extras", "extras.apply(init_weights)"))
    for name, before in seen["before"].items():
        after = seen["after"][name]
        changed = [
            k
            for k in ("weight", "bias")
            if isinstance(before[k], torch.Tensor) and not torch.equal(before[k], after[k])
        ]
        if changed:
            kind = {
                "extras[2]": "nn.Embedding",
                "extras[3]": "nn.Conv1d",
                "extras[4]": "nn.BatchNorm1d",
            }
            raise CheckError(
                _(
                    "model.apply(init_weights) changed the {changed} of {name}, an {kind}. Only "
                    "nn.Linear and nn.LayerNorm are to be initialised: test isinstance(module, "
                    "nn.Linear) / isinstance(module, nn.LayerNorm), not hasattr(module, "
                    "'weight') or the weight's number of dimensions."
                ).format(changed=_(" and ").join(changed), name=name, kind=kind[name])
            )
    if _take(seen, "same draws after another seed", "model.apply(init_weights), twice"):
        raise CheckError(
            _(
                "model.apply(init_weights) drew the same weights after two different seeds: "
                "init_weights reseeds the global random generator (torch.manual_seed inside "
                "it). That makes every layer of a shape identical and resets the caller's "
                "random stream; leave seeding to the caller."
            )
        )


def _judge_linears(layers: dict) -> None:
    """Kaiming-normal (fan_in, ReLU) weights and zero biases for each Linear the probe saw."""
    for name, layer in layers.items():
        if name == "model[3]":
            continue
        bias, weight = layer["bias"], layer["weight"]
        if "bias=False" in name:
            pass
        elif not isinstance(bias, torch.Tensor) or not bool((bias == 0).all()):
            raise CheckError(
                _("{name}.bias is not all zeros after init: nn.init.zeros_(module.bias).").format(
                    name=name
                )
            )
        check_type(weight, torch.Tensor, f"{name}.weight")
        weight = weight.detach().to("cpu", torch.float64)  # MPS has no float64
        if weight.numel() < 10_000 or weight.dim() != 2:
            continue
        fan_in = weight.shape[1]
        want = math.sqrt(2.0 / fan_in)
        std = float(weight.std())
        if abs(std - want) > 0.03 * want:
            raise CheckError(
                _(
                    "{name}.weight has standard deviation {std:.4f} after init, expected sqrt(2 "
                    "/ fan_in) = {want:.4f} (fan_in = in_features = {fan_in}). Use "
                    "nn.init.kaiming_normal_(m.weight, nonlinearity='relu') (mode='fan_in', the "
                    "default)."
                ).format(name=name, std=std, want=want, fan_in=fan_in)
            )
        if abs(float(weight.mean())) > 5 * want / math.sqrt(weight.numel()):
            raise CheckError(
                _("{name}.weight should have mean 0, got {mean:.4f}.").format(
                    name=name, mean=float(weight.mean())
                )
            )
        if float(weight.abs().max()) < 2.5 * want:
            raise CheckError(
                _(
                    "{name}.weight looks uniformly distributed (no value beyond 2.5 standard "
                    "deviations); use the normal version, nn.init.kaiming_normal_."
                ).format(name=name)
            )


# ---------------------------------------------------------------- Exercise: EncoderClassifier


def check_EncoderClassifier(EncoderClassifier) -> None:
    """Registered parts named encoder/head, encoder called through __call__, swappable head."""
    device = get_device()
    g = torch.Generator().manual_seed(8)
    encoder, head, new_head = (
        m.to(device) for m in probes.build_encoder_parts(8)
    )  # as the probe's
    batches, batches_after = (4, 1, 0), (3, 0)
    inputs = [torch.randn(n, 5, generator=g) for n in batches]
    inputs_after = [torch.randn(n, 5, generator=g) for n in batches_after]
    case = {"seed": 8, "device": device, "inputs": inputs, "inputs_after_swap": inputs_after}
    what = "EncoderClassifier(encoder, head)"
    seen = observe(probes.probe_EncoderClassifier, EncoderClassifier, case, what)
    _check_module(seen, what)
    keys = set(_take(seen, "keys", what))
    expected_keys = {"encoder.0.weight", "encoder.0.bias", "head.weight", "head.bias"}
    if not keys:
        raise _no_parameters(what)
    if keys != expected_keys:
        raise CheckError(
            _(
                "{what}.state_dict() has keys {keys}, expected {expected_keys}: store the "
                "parts as self.encoder and self.head."
            ).format(what=what, keys=sorted(keys), expected_keys=sorted(expected_keys))
        )
    for i, (n, x_cpu) in enumerate(zip(batches, inputs, strict=True)):
        x = x_cpu.to(device)
        label = _("{what} on x of shape ({n}, 5)").format(what=what, n=n)
        out = _take(seen, f"out {i}", label, calling=True)
        if not seen.get(f"hook ran {i}"):
            raise CheckError(
                _(
                    "{label}: the encoder's forward hooks did not run. Call the part as "
                    "self.encoder(x), never self.encoder.forward(x): hooks only run through "
                    "__call__."
                ).format(label=label)
            )
        if not seen.get(f"head hook ran {i}", True):
            raise CheckError(
                _(
                    "{label}: the head's forward hooks did not run. Call it as self.head(...), "
                    "never self.head.forward(...): hooks only run through __call__."
                ).format(label=label)
            )
        with torch.no_grad():
            ref = head(encoder(x))
        check_shape(out, (n, 3), names="N classes", what=label)
        assert_close(out, ref, what=label, rtol=1e-5, atol=1e-6)
    if seen.get("holds the given parts") is False:
        raise CheckError(
            _(
                "{what} does not keep the modules it was given as self.encoder and self.head "
                "(a copy, or a wrapper): train the model and the caller's encoder would not "
                "change. Assign them as they are: self.encoder = encoder."
            ).format(what=what)
        )
    grads = _take(seen, "grads", f"{what}(x).pow(2).sum().backward()")
    cut = [part for part, ok in grads.items() if not ok]
    if cut:
        raise CheckError(
            _(
                "after {what}(x).pow(2).sum().backward() the {cut} parameters have no "
                "gradient: forward must not run a part under torch.no_grad() or detach its "
                "output. Freezing is the caller's choice (requires_grad_(False)), not the "
                "model's."
            ).format(what=what, cut=_(" and ").join(cut))
        )
    if any(_take(seen, "parts training after eval", f"{what}.eval()")):
        raise CheckError(
            _("{what}.eval() did not reach the encoder and head: register them.").format(what=what)
        )
    returned_old = _take(seen, "returned the old head", f"{what}.swap_head(new_head)")
    if not returned_old:
        raise CheckError(
            _(
                "{what}.swap_head(new_head) should return the head it replaced (the old one)."
            ).format(what=what)
        )
    keys = set(_take(seen, "keys after swap", f"{what}.swap_head(new_head)"))
    expected_keys = {"encoder.0.weight", "encoder.0.bias", "head.0.weight", "head.0.bias"}
    if keys != expected_keys:
        raise CheckError(
            _(
                "after swap_head(nn.Sequential(nn.Linear(8, 4), nn.Tanh())) the state_dict "
                "has keys {keys}, expected {expected_keys}: the new head must replace "
                "self.head (assign it: self.head = new_head)."
            ).format(keys=sorted(keys), expected_keys=sorted(expected_keys))
        )
    n_params = _take(seen, "parameters after swap", f"{what}.swap_head(new_head)")
    if n_params != 5 * 8 + 8 + 8 * 4 + 4:
        raise CheckError(
            _(
                "after swap_head the model has {n_params} parameters, expected 84 (the "
                "encoder's 48 and the new head's 36)."
            ).format(n_params=n_params)
        )
    for i, (n, x_cpu) in enumerate(zip(batches_after, inputs_after, strict=True)):
        x = x_cpu.to(device)
        label = _("{what} after swap_head, on x of shape ({n}, 5)").format(what=what, n=n)
        out = _take(seen, f"swapped out {i}", label, calling=True)
        if not seen.get(f"swapped hook ran {i}"):
            raise CheckError(
                _("{label}: the encoder's hooks did not run; call self.encoder(x).").format(
                    label=label
                )
            )
        with torch.no_grad():
            ref = new_head(encoder(x))
        check_shape(out, (n, 4), names="N classes", what=label)
        assert_close(out, ref, what=label, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- Exercise: freeze_except


def _judge_freeze(seen: dict, i: int, prefixes: list[str], expected: list[str]) -> None:
    what = f"freeze_except(model, {prefixes})"
    got = _take(seen, f"result {i}", what)
    check_type(got, list, what)
    flags = dict(seen[f"requires_grad {i}"])
    wrong_on = [name for name, on in flags.items() if on and name not in expected]
    wrong_off = [name for name, on in flags.items() if not on and name in expected]
    if wrong_off and "" in prefixes:
        raise CheckError(
            _(
                "after {what} these parameters are frozen but should train: {wrong_off}. '' "
                "is the name named_modules() gives the model itself, so every parameter is "
                "inside it (prefix + '.' never matches for ''): treat '' as the whole model."
            ).format(what=what, wrong_off=wrong_off)
        )
    if wrong_on:
        if prefixes and all(name.startswith(tuple(prefixes)) for name in wrong_on):
            hint = _(
                "A name in trainable names a module: '1' covers '1.weight' but not "
                "'10.weight'; test name.startswith(prefix + '.')."
            )
        else:
            hint = _(
                "Freeze with p.requires_grad_(False). Setting p.grad = None only forgets the "
                "last gradient (the next backward computes it again and optimizer.step() "
                "updates the weight), and eval() changes layer behaviour, not gradients."
            )
        shown = (
            wrong_on
            if len(wrong_on) <= 6
            else [*wrong_on[:6], _("... ({count} in all)").format(count=len(wrong_on))]
        )
        raise CheckError(
            _(
                "after {what} these parameters still have requires_grad=True: {shown}. {hint}"
            ).format(what=what, shown=shown, hint=hint)
        )
    if wrong_off:
        raise CheckError(
            _(
                "after {what} these parameters are frozen but should train: {wrong_off}. "
                "Every parameter whose name starts with one of the names plus '.' trains, "
                "nested names such as 'encoder.2' included (compare against "
                "model.named_parameters() names), and gets requires_grad_(True) in case an "
                "earlier call froze it."
            ).format(what=what, wrong_off=wrong_off)
        )
    if got != expected:
        raise CheckError(
            _(
                "{what} returned {got}, expected the trainable parameter names {expected}, "
                "in model.named_parameters() order."
            ).format(what=what, got=got, expected=expected)
        )
    if not expected:
        return
    before = seen[f"before {i}"]
    after = _take(seen, f"after {i}", f"one SGD step after {what}")
    for name in flags:
        changed = not torch.equal(after[name], before[name])
        if name in expected and not changed:
            raise CheckError(
                _("after {what} and one SGD step, {name} did not change.").format(
                    what=what, name=name
                )
            )
        if name not in expected and changed:
            raise CheckError(
                _("after {what} and one SGD step, the frozen {name} changed.").format(
                    what=what, name=name
                )
            )


def check_freeze_except(freeze_except) -> None:
    """Flags, return value and an actual SGD step, on prefixes that look alike ('1' vs '10')."""
    g = torch.Generator().manual_seed(9)
    deep_names = [name for name, _ in probes.build_freeze_model("deep").named_parameters()]
    token_names = [name for name, _ in probes.build_freeze_model("token").named_parameters()]
    nested = ["encoder.2.weight", "encoder.2.bias", "head.weight", "head.bias"]
    plan = [  # (model, trainable, the names expected to train), in order on the same models
        ("deep", ["1"], ["1.weight", "1.bias"]),  # the deep model's names are '0'..'10'
        ("deep", ["10", "0"], ["0.weight", "0.bias", "10.weight", "10.bias"]),
        ("deep", [], []),
        ("deep", [str(i) for i in range(11)], deep_names),
        ("nested", ["head"], ["head.weight", "head.bias"]),
        ("nested", ["head", "encoder.2"], nested),
        ("nested", ["encoder"], ["encoder.0.weight", "encoder.0.bias", *nested[:2]]),
        ("nested", [""], ["encoder.0.weight", "encoder.0.bias", *nested]),
        ("token", ["head"], ["head.weight", "head.bias"]),
        ("token", ["encoder.1"], ["encoder.1.weight", "encoder.1.bias"]),
        ("token", [""], token_names),
        ("token", ["encoder"], [n for n in token_names if n.startswith("encoder.")]),
        ("deep", ["", "3"], deep_names),
    ]
    calls = [
        {"model": model, "trainable": trainable, "x": torch.randn(8, 3, generator=g)}
        for model, trainable, _ in plan
    ]
    case = {"seed": 9, "device": get_device(), "calls": calls}
    seen = observe(probes.probe_freeze_except, freeze_except, case, "freeze_except(...)")
    for i, (_model, trainable, expected) in enumerate(plan):
        _judge_freeze(seen, i, trainable, expected)
