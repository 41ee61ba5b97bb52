"""Hidden checks for 03_modules.

Each exercise declares contracts (``autograder/contracts.py``): a reference class or
function, how to draw its inputs, and the families it must handle; a class is built on both
sides with the same weights (``construct``), an argument the text lets the answer change is
compared with the reference's afterwards (``mutates``). What a single call cannot show (a
module through several calls, swap_head, an activation with a parameter) is judged by hand
from what a probe in ``autograder/probes/modules.py`` saw, step by step.
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
from hypothesis import strategies as st
from torch import nn

from autograder.boundary import AnswerRaised, AnswerUnreachable, observe
from autograder.contracts import Build, Contract, Draw, Inputs, compare_values, uses
from autograder.probes import modules as probes
from tutorial_lib.checks import (
    CheckError,
    assert_close,
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


def _judge_modes(seen: dict, what: str) -> None:
    """The probe's ``_grads_in_modes``: in eval mode the module computes what it computes in
    training mode (none of these layers depends on the mode), with a graph back to x and the
    same gradient."""
    train_out = _take(seen, "train out", f"{what} in training mode", calling=True)
    eval_what = _("{what} in eval mode").format(what=what)
    eval_out = _take(seen, "eval out", eval_what, calling=True)
    assert_close(
        eval_out, train_out, what=_("{what}, against training mode").format(what=eval_what)
    )
    for mode, label in (("train", f"{what} in training mode"), ("eval", eval_what)):
        if not seen.get(f"{mode} requires_grad"):
            raise CheckError(
                _(
                    "{label}, called on an x that requires grad, returned a result with no "
                    "graph (no grad_fn): no gradient reaches x or the weights. Leave autograd "
                    "alone in forward, in every mode: no torch.no_grad(), no .detach(); the "
                    "caller decides (a model in eval mode still needs gradients for "
                    "saliency maps or for fine-tuning with frozen statistics)."
                ).format(label=label)
            )
        if _take(seen, f"{mode} grad", label) is None:
            raise CheckError(
                _(
                    "{label}: after out.sum().backward(), x.grad is None: the result has a "
                    "graph, but not back to x (a .detach() or torch.no_grad() on the way). "
                    "Leave autograd alone in forward, in every mode."
                ).format(label=label)
            )
    assert_close(
        seen["eval grad"],
        seen["train grad"],
        what=_("the gradient that {what} sends back to x").format(what=eval_what),
    )
    kept = _take(seen, "outputs kept", what, calling=True)
    if kept > 1:
        raise CheckError(
            _(
                "{what} keeps the outputs of earlier calls: {kept} of 3 outputs the caller had "
                "dropped are still alive, and each holds its whole graph. Memory then grows "
                "with every batch. Return the output without storing it on the module."
            ).format(what=what, kept=kept)
        )
    for mode, label in (("train", f"{what} in training mode"), ("eval", eval_what)):
        unreached = _take(seen, f"{mode} plain no grad", label, calling=True)
        if unreached:
            raise CheckError(
                _(
                    "{label}, called on an x that does not require grad (the usual training "
                    "call: only the weights need gradients), left the parameters {names} "
                    "without a gradient after out.sum().backward(). Do not switch autograd "
                    "off when x has no gradient (no torch.no_grad() or "
                    "set_grad_enabled(x.requires_grad), no detached weights): the optimizer "
                    "needs the weights' gradients whatever x is."
                ).format(label=label, names=unreached)
            )


# ---------------------------------------------------------------- Exercise: MLP


class _ReferenceMLP(nn.Module):
    """Linear, activation(), ..., Linear: registered in order (so filled with the same weights)."""

    def __init__(self, sizes, activation=nn.ReLU):
        super().__init__()
        layers = []
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
            layers.append(nn.Linear(n_in, n_out))
            if i < len(sizes) - 2:
                layers.append(activation())
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


def _draw_mlp_call(d: Draw) -> tuple[list[int], torch.Tensor]:
    """sizes of 2 to 5 widths (one layer to four), and a batch x, empty in ``edges``."""
    sizes = [d.size(1, 6) for _layer in range(d.size(2, 5))]
    return sizes, d.tensor(d.size(1, 4, empty_ok=True), sizes[0])


def _draw_mlp(d: Draw) -> Inputs:
    """An activation without parameters (ReLU, Tanh, GELU): PReLU's weight would be filled in
    another order by an answer that keeps its activations in a list of their own."""
    sizes, x = _draw_mlp_call(d)
    name = d.draw(st.sampled_from(["ReLU", "Tanh", "GELU"]))
    return Inputs((sizes, Build(probes.build_activation, {"name": name}, f"nn.{name}"), x))


def _mlp_hint(family: str, inputs: Inputs) -> str:
    return _(
        "MLP(sizes, activation) is Linear(sizes[0], sizes[1]), activation(), ..., "
        "Linear(sizes[-2], sizes[-1]): the activation passed in between the layers, none after "
        "the last; the layers created once, in __init__, in order, and registered (an "
        "nn.ModuleList or nn.Sequential, not a Python list)."
    )


MLP_CONTRACT = Contract(
    "MLP",
    _ReferenceMLP,
    _draw_mlp,
    construct=2,
    arg_names=("sizes", "activation", "x"),
    hint=_mlp_hint,
)


def _draw_mlp_default(d: Draw) -> Inputs:
    sizes, x = _draw_mlp_call(d)
    return Inputs((Build(probes.build_seeded, {"value": sizes}, repr(sizes)), x))


MLP_DEFAULT = Contract(  # the default activation, nn.ReLU
    "MLP",
    _ReferenceMLP,
    _draw_mlp_default,
    families=("values",),
    construct=1,
    arg_names=("sizes", "x"),
    hint=_mlp_hint,
    examples=4,
)


@uses(MLP_CONTRACT, MLP_DEFAULT)
def check_MLP(MLP) -> None:
    """The contracts (the same weights, filled in order, give the reference's outputs on every
    input family; the caller's sizes kept), then: an activation with a parameter (nn.PReLU)
    is a fresh instance per hidden layer, which a contract cannot fill in a fixed order."""
    what = "MLP([3, 5, 4, 2], activation=nn.PReLU)"
    case = {"sizes": [3, 5, 4, 2], "activation": "PReLU", "seed": 3}
    seen = observe(probes.probe_MLP, MLP, case, what)
    _check_module(seen, what)
    prelus = [shape for _name, shape in _take(seen, "parameters", what) if shape == [1]]
    if len(prelus) != 2:
        raise CheckError(
            _(
                "{what} has {n_prelus} PReLU weight(s), expected {fresh}: create a fresh "
                "instance activation() for every hidden layer. One instance used after every "
                "layer shares its parameters between them."
            ).format(what=what, n_prelus=len(prelus), fresh=2)
        )
    relu_what = "MLP([3, 5, 4, 2])"
    relu_seen = observe(
        probes.probe_MLP, MLP, {"sizes": [3, 5, 4, 2], "activation": "ReLU", "seed": 3}, relu_what
    )
    _check_module(relu_seen, relu_what)
    n_relus = _take(relu_seen, "activations", relu_what)
    if n_relus != 2:
        raise CheckError(
            _(
                "{what} contains {n} nn.ReLU module(s), expected {fresh}: one fresh instance "
                "activation() after every layer but the last, registered in the model (even "
                "for the default nn.ReLU, not F.relu in forward), so that model.modules() and "
                "forward hooks find them."
            ).format(what=relu_what, n=n_relus, fresh=2)
        )
    _judge_modes(seen, what)
    unused = _take(seen, "no grad", what)
    if unused:
        raise CheckError(
            _(
                "{what}: after model(x).sum().backward() the parameters {names} have no "
                "gradient: forward never uses them. Use the registered activations in forward "
                "(an activation() created in forward is a new module on every call, whose "
                "parameters no optimizer sees)."
            ).format(what=what, names=unused)
        )


# ---------------------------------------------------------------- Exercise: ResidualBlock


class _ReferenceResidualBlock(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


def _draw_residual_sizes(d: Draw) -> tuple:
    """dim and hidden, after seeding the global random generator (build_seeded): what an answer
    draws in its constructor is then the same on every run."""
    dim, hidden = d.size(1, 5), d.size(1, 5)
    return Build(probes.build_seeded, {"value": dim}, str(dim)), hidden


def _seeded_int(arg) -> int:
    return arg.spec["value"] if isinstance(arg, Build) else arg


def _draw_residual(d: Draw) -> Inputs:
    """x of shape (..., dim): no leading axis to two, each possibly empty in ``edges``."""
    dim, hidden = _draw_residual_sizes(d)
    batch = [d.size(1, 3, empty_ok=True) for _axis in range(d.draw(st.integers(0, 2)))]
    return Inputs((dim, hidden, d.tensor(*batch, _seeded_int(dim))))


def _residual_hint(family: str, inputs: Inputs) -> str:
    return _(
        "The block returns x + fc2(relu(fc1(x))): the skip x added as it came, no activation "
        "after the sum, fc1 = nn.Linear(dim, hidden) and fc2 = nn.Linear(hidden, dim) created "
        "once, in __init__ (layers made in forward get new random weights on every call)."
    )


RESIDUAL_BLOCK = Contract(
    "ResidualBlock",
    _ReferenceResidualBlock,
    _draw_residual,
    construct=2,
    arg_names=("dim", "hidden", "x"),
    hint=_residual_hint,
)
RESIDUAL_STATE = Contract(  # the state_dict names the text asks for
    "ResidualBlock",
    _ReferenceResidualBlock,
    lambda d: Inputs(_draw_residual_sizes(d)),
    families=("values",),
    construct=2,
    method="state_dict",
    arg_names=("dim", "hidden"),
    hint=lambda family, inputs: _(
        "Its state_dict() keys are fc1.weight, fc1.bias, fc2.weight, fc2.bias: two layers "
        "named fc1 = nn.Linear(dim, hidden) and fc2 = nn.Linear(hidden, dim), and no other "
        "parameter or buffer."
    ),
    examples=4,
)


@uses(RESIDUAL_STATE, RESIDUAL_BLOCK)
def check_ResidualBlock(ResidualBlock) -> None:
    """The contracts: its state_dict names, then x + fc2(relu(fc1(x))) with the same weights
    on every input family (any leading axes, non-contiguous, float16 to float64, another
    device, gradients through the skip and the layers), the caller's x left as it was; then
    one block built and called in training and in eval mode (the
    same output, gradients in both)."""
    what = "ResidualBlock(4, 6)"
    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(4))
    case = {"dim": 4, "hidden": 6, "x": x, "seed": 4}
    seen = observe(probes.probe_ResidualBlock, ResidualBlock, case, what)
    _check_module(seen, what)
    _judge_modes(seen, what)


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
    "twin-norms",
    "scalar",
)


# A weight tied across two modules, one layer used twice, a Parameter on a model itself,
# no parameters at all, parameters not called weight and bias, distinct parameters of equal
# values (two LayerNorms: one object each, though their values match), a 0-d Parameter
# (shape (), one element: no len(), no product over an empty shape without a start).
_TRICKY_PARTS = (
    "tied",
    "shared-in-sequential",
    "cls-token",
    "empty",
    "relu",
    "lstm",
    "twin-norms",
    "scalar",
)


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
    spec["grads"] = d.draw(st.booleans())  # gradients of the caller's: left as they are
    label = _("a Sequential of {parts}").format(parts=parts)
    if root:
        label += _(" with a cls_token Parameter of its own")
    if frozen:
        label += _(", parameters {frozen} of model.parameters() frozen").format(frozen=frozen)
    if spec["grads"]:
        label += _(", its parameters holding gradients")
    return Inputs((Build(probes.build_count_parts, spec, label),))


def _count_hint(family: str, inputs: Inputs) -> str:
    parts = inputs.args[0].spec["parts"]
    hint = _(" Count elements with p.numel(), only where p.requires_grad is True.")
    if {"tied", "shared-in-sequential"} & set(parts):
        hint += _(
            " A shared weight appears under two names but is one Parameter: "
            "model.parameters() lists it once; model.modules() or state_dict() twice."
        )
    if "twin-norms" in parts:
        hint += _(
            " Two LayerNorms hold equal values (weights of ones, biases of zeros) in distinct "
            "Parameters: each one counts; compare parameters by identity, never by value."
        )
    if {"batchnorm", "batchnorm-frozen", "conv", "cls-token"} & set(parts):
        hint += _(" Buffers (BatchNorm's running statistics) are not parameters.")
    if "scalar" in parts:
        hint += _(
            " A 0-d Parameter (shape ()) holds one element: p.numel() is 1, where len(p) "
            "raises and a product over its empty shape needs a start of 1."
        )
    if inputs.args[0].spec.get("grads"):
        hint += _(
            " Counting reads the model and changes nothing: no zero_grad(), no requires_grad_()."
        )
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


class _ReferenceRunningMean(nn.Module):
    def __init__(self, num_features, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(num_features))

    def forward(self, x):
        if self.training and x.shape[0] > 0:
            with torch.no_grad():
                self.running_mean.lerp_(x.mean(dim=0), self.momentum)
        return x - self.running_mean


def _draw_running_mean(d: Draw) -> Inputs:
    """A fresh module's first training batch: (N, F), N = 0 in ``edges`` (no update), and
    in ``edges`` a NaN in the last feature (the text's x.mean(dim=0) propagates it)."""
    nf = d.size(1, 5)
    momentum = d.draw(st.sampled_from([0.1, 0.3, 0.9, 1.0]))
    x = d.tensor(d.size(1, 5, empty_ok=True), nf, low=-3.0, high=4.0)
    if d.family == "edges" and len(x) > 1 and d.draw(st.booleans()):
        x[0, -1] = float("nan")  # x.mean(dim=0) is NaN there: a mean that skips NaN differs
    return Inputs((nf, momentum, x))


def _running_mean_hint(family: str, inputs: Inputs) -> str:
    return _(
        "A fresh module is in training mode with running_mean all zeros (a buffer, no "
        "parameters): it first updates running_mean = (1 - momentum) * running_mean + "
        "momentum * x.mean(dim=0), under torch.no_grad(), then returns x - running_mean."
    )


RUNNING_MEAN = Contract(
    "RunningMean",
    _ReferenceRunningMean,
    _draw_running_mean,
    construct=2,
    arg_names=("num_features", "momentum", "x"),
    hint=_running_mean_hint,
)
RUNNING_MEAN_STATE = Contract(  # the buffer's name, value and dtype: what state_dict() saves
    "RunningMean",
    _ReferenceRunningMean,
    lambda d: Inputs((d.size(1, 5), d.draw(st.sampled_from([0.1, 0.5])))),
    families=("values",),
    construct=2,
    method="state_dict",
    arg_names=("num_features", "momentum"),
    hint=lambda family, inputs: _(
        "Register the buffer with self.register_buffer('running_mean', "
        "torch.zeros(num_features)): a tensor kept as a plain attribute is neither saved by "
        "state_dict() nor moved by .to(device), and an nn.Parameter would be trained."
    ),
    examples=4,
)
RUNNING_MEAN_DEFAULT = Contract(  # momentum left out: 0.1
    "RunningMean",
    _ReferenceRunningMean,
    lambda d: (lambda nf: Inputs((nf, d.tensor(d.size(1, 4), nf))))(d.size(1, 4)),
    families=("values",),
    construct=1,
    arg_names=("num_features", "x"),
    examples=4,
)


def _buffer(state: dict, what: str) -> torch.Tensor:
    """The running_mean entry of a state_dict the probe saw (keys and that tensor)."""
    buf = state.get("running_mean")
    check_type(buf, torch.Tensor, f"{what}'s running_mean")
    return buf


@uses(RUNNING_MEAN_STATE, RUNNING_MEAN, RUNNING_MEAN_DEFAULT)
def check_RunningMean(RunningMean) -> None:
    """The contracts (the buffer; a fresh module's first training batch on every input
    family; the default momentum), then what takes several calls on one module: the average
    over batches, an empty batch and eval mode leaving it alone, a reload through
    load_state_dict."""
    what = "RunningMean(3, momentum=0.3)"
    g = torch.Generator().manual_seed(5)
    batches = (4, 1)
    case = {
        "num_features": 3,
        "momentum": 0.3,
        "train": [torch.randn(n, 3, generator=g) for n in batches],
        "eval_x": torch.randn(6, 3, generator=g),
        "seed": 5,
    }
    seen = observe(probes.probe_RunningMean, RunningMean, case, what)
    _check_module(seen, what)
    ref = torch.zeros(3)
    for i, (n, x) in enumerate(zip(batches, case["train"], strict=True)):
        label = _("{what} in training mode, batch {i} of shape ({n}, 3)").format(
            what=what, i=i + 1, n=n
        )
        out = _take(seen, f"out {i}", label, calling=True)
        ref = 0.7 * ref + 0.3 * x.mean(0)
        buf = _buffer(_take(seen, f"buffer {i}", label), what)
        assert_close(buf, ref, what=f"running_mean after {label}", rtol=1e-5, atol=1e-6)
        assert_close(out, x - ref, what=label, rtol=1e-5, atol=1e-6)
    _take(seen, "empty", f"{what} on an empty batch", calling=True)
    buf = _buffer(_take(seen, "buffer empty", f"{what} on an empty batch"), what)
    if not torch.allclose(buf, ref, rtol=1e-5, atol=1e-6):
        raise CheckError(
            _(
                "{what}: an empty batch changed running_mean to {values}; the mean of zero "
                "rows is NaN. Skip the update when the batch is empty."
            ).format(what=what, values=buf.detach().cpu().tolist())
        )
    x = case["eval_x"]
    out = _take(seen, "eval", f"{what} in eval mode", calling=True)
    buf = _buffer(_take(seen, "buffer eval", f"{what} in eval mode"), what)
    if not torch.allclose(buf, ref, rtol=1e-5, atol=1e-6):
        raise CheckError(
            _(
                "{what}: running_mean changed in eval mode. Update it only when "
                "self.training is True."
            ).format(what=what)
        )
    assert_close(out, x - ref, what=f"{what} in eval mode", rtol=1e-5, atol=1e-6)
    grad = _take(seen, "eval grad", f"{what} in eval mode, on an x that requires grad")
    if grad is None:
        raise CheckError(
            _(
                "{what} in eval mode, called on an x that requires grad, returned a result "
                "with no graph: x - running_mean must pass gradients back to x in every mode "
                "(x.grad all ones after out.sum().backward()). Only the update goes under "
                "torch.no_grad()."
            ).format(what=what)
        )
    assert_close(
        grad,
        torch.ones_like(x),
        what=_("x.grad after {what}(x).sum().backward() in eval mode").format(what=what),
    )
    fresh_what = _("a fresh {what} after load_state_dict").format(what=what)
    fresh = _take(seen, "fresh", fresh_what, calling=True)
    assert_close(fresh, x - ref, what=fresh_what, rtol=1e-5, atol=1e-6)
    no_grad_what = _(
        "{what} in training mode, called inside the caller's torch.no_grad() block"
    ).format(what=what)
    _take(seen, "grad on under no_grad", no_grad_what, calling=True)
    buf = _buffer(_take(seen, "buffer under no_grad", no_grad_what), what)
    expected = 0.3 * case["train"][0].mean(0)
    if not torch.allclose(buf, expected, rtol=1e-5, atol=1e-6):
        raise CheckError(
            _(
                "{what}: running_mean is {values}, expected {expected}. Training mode is "
                "self.training, whatever autograd's mode: a caller may run batches under "
                "torch.no_grad() to refresh the statistics. Test self.training, not "
                "torch.is_grad_enabled() or x.requires_grad."
            ).format(what=no_grad_what, values=buf.tolist(), expected=expected.tolist())
        )
    if seen.get("grad on under no_grad"):
        raise CheckError(
            _(
                "{what} in training mode, called inside the caller's torch.no_grad() block, "
                "switched autograd back on (torch.set_grad_enabled(True) after the update?): "
                "the caller's later code records graphs it did not ask for. Update under "
                "`with torch.no_grad():`, which puts the caller's setting back."
            ).format(what=what)
        )


# ---------------------------------------------------------------- Exercise: capture_activations


def _expected_activations(model, x):
    with torch.no_grad():
        acts = {"inp": model.inp(x)}
        acts["block.fc"] = model.block.fc(acts["inp"])
        acts["block.act"] = acts["block"] = torch.relu(acts["block.fc"])
        a, b = acts["block"][..., :3], acts["block"][..., 3:]
        acts["split"] = (a, b)
        first, last = model.shared(a), model.shared(b * 2.0)  # split's b, doubled in place
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
    # a submodule in the other mode, a part frozen by the caller: a save-and-restore of the
    # root's mode, or requires_grad_(True) for everything afterwards, changes them
    spec["mixed"] = d.draw(st.booleans())
    spec["frozen"] = d.draw(st.booleans())
    names = [name for name in _HOOK_NAMES if d.draw(st.booleans())]  # each one half the time
    x = d.tensor(d.size(0 if d.family == "edges" else 1, 4, empty_ok=True), 4)
    label = _("a model with forward hooks of its own")
    if spec["mixed"]:
        label += _(", its block in the other train/eval mode")
    if spec["frozen"]:
        label += _(", its inp layer frozen")
    model = Build(probes.build_hooked_model, spec, label)
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
            if (
                name == "split"
                and isinstance(value, (tuple, list))
                and len(value) == 2
                and all(isinstance(t, torch.Tensor) for t in value)
                and value[1].shape == expected["split"][1].shape
                and x.shape[0]
                and torch.allclose(value[1], expected["split"][1] * 2.0)
            ):
                hint = _(
                    " The model doubles split's second output in place after your hook ran, "
                    "and that changed the tensors you stored: store copies, "
                    "tuple(t.detach().clone() for t in output)."
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
    families=("values", "edges", "strides", "device"),
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
            if seen[f"raised {i}"] is None:
                raise CheckError(
                    _(
                        "{what} returned although model(x) raised (x has 7 features, not 4): "
                        "the caller never hears of the error. Let it propagate: remove the "
                        "hooks in a finally: block, with no except that swallows it."
                    ).format(what=what)
                )
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
    what = _(
        "capture_activations(model, x, ['inp', 'split']) with model and x in float64 on "
        "another device"
    )
    left = _take(seen, "left the device", what)
    if left:
        raise CheckError(
            _(
                "{what} (standing in for a GPU) stored {names} on the CPU. Store "
                "output.detach().clone(): the copy stays on the output's device, no .cpu() "
                "(a caller compares or reuses it on that device)."
            ).format(what=what, names=left)
        )
    cast = _take(seen, "changed dtype", what)
    if cast:
        raise CheckError(
            _(
                "{what} stored {names} in another dtype than the output's float64. Store "
                "output.detach().clone() as it is: no .float() or .to(dtype)."
            ).format(what=what, names=cast)
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


def _reference_init(module) -> None:
    if isinstance(module, nn.Linear):
        nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.LayerNorm):
        if module.weight is not None:
            nn.init.ones_(module.weight)
        if module.bias is not None:
            nn.init.zeros_(module.bias)


# The two kinds to initialise come up twice as often as the kinds to leave alone.
_INIT_KINDS = ("linear", "layernorm") * 2 + (
    "embedding",
    "conv1d",
    "batchnorm",
    "relu",
    "sequential",
)


def _init_label(spec: dict) -> str:
    n, m, bias = spec["n"], spec["m"], spec["bias"]
    no_bias = "" if bias else ", bias=False"
    norm_args = f"{n}" + ("" if spec["affine"] else ", elementwise_affine=False") + no_bias
    label = {
        "linear": f"nn.Linear({n}, {m}{no_bias})",
        "layernorm": f"nn.LayerNorm({norm_args})",
        "embedding": f"nn.Embedding({n + 1}, {m})",
        "conv1d": f"nn.Conv1d({n}, {m}, 3{no_bias})",
        "batchnorm": f"nn.BatchNorm1d({n})",
        "relu": "nn.ReLU()",
        "sequential": f"nn.Sequential(nn.Linear({n}, {m}), nn.ReLU(), nn.LayerNorm({m}))",
    }[spec["kind"]]
    label += "" if spec["dtype"] == "float32" else f".to(torch.{spec['dtype']})"
    if spec.get("frozen"):
        label += _(", frozen (requires_grad_(False))")
    return label


# A LayerNorm with a weight and no bias (edges); frozen layers (new Parameters unfreeze them).
_INIT_EDGE_KINDS = ("layernorm", "linear")


def _draw_init(d: Draw) -> Inputs:
    """One module of each kind apply meets (with and without a bias or an affine part, in
    float32 or float64, frozen or not), its parameters away from their defaults; the
    generator seeded. ``edges``: a LayerNorm with a weight and no bias, a Linear. (Subclasses
    are not drawn: the text names nn.Linear and nn.LayerNorm, and right_answers keeps an exact
    type test.)"""
    edges = d.family == "edges"
    spec = {
        "kind": d.draw(st.sampled_from(_INIT_EDGE_KINDS if edges else _INIT_KINDS)),
        "n": d.size(1, 40),
        "m": d.size(1, 40),
        # mostly, and when shrunk, the ordinary layer: with a bias and an affine part
        "bias": d.draw(st.sampled_from([True, True, False])),
        "affine": d.draw(st.sampled_from([True, True, False])),
        "dtype": d.draw(st.sampled_from(["float32", "float64"])),
        "seed": d.draw(st.integers(0, 99)),
        "frozen": d.draw(st.sampled_from([False, False, True])),
    }
    if edges and spec["kind"] == "layernorm":
        spec["affine"], spec["bias"] = True, False
    return Inputs((Build(probes.build_init_layer, spec, _init_label(spec)),))


def _init_hint(family: str, inputs: Inputs) -> str:
    return _(
        "An nn.Linear gets nn.init.kaiming_normal_(weight, nonlinearity='relu') (mode='fan_in', "
        "a normal draw of standard deviation sqrt(2 / in_features), from the global generator "
        "as it is, never reseeded) and a zero bias; an nn.LayerNorm a weight of ones and a "
        "bias of zeros; what is None is skipped, and every other module (a container "
        "included: apply visits its children itself) is left alone."
    )


INIT_WEIGHTS = Contract(
    "init_weights",
    _reference_init,
    _draw_init,
    families=("values", "edges", "device"),
    mutates=(0,),
    compare=lambda got, expected, what, inputs: None,  # what it returns, apply ignores
    arg_names=("module",),
    hint=_init_hint,
    examples=24,
)


# The modules init_weights leaves alone, each drawn in every run (INIT_WEIGHTS draws them
# by chance, and its examples go mostly to the kinds it initialises).
_INIT_LEFT_ALONE = ("embedding", "conv1d", "batchnorm", "relu", "sequential")


def _draw_init_left_alone(d: Draw) -> Inputs:
    """One of the modules to leave alone (an embedding, a convolution, a BatchNorm, a ReLU, a
    Sequential), small, in float32."""
    spec = {
        "kind": d.draw(st.sampled_from(_INIT_LEFT_ALONE)),
        "n": d.size(1, 9),
        "m": d.size(1, 9),
        "bias": d.draw(st.booleans()),
        "affine": True,
        "dtype": "float32",
        "seed": d.draw(st.integers(0, 99)),
        "frozen": False,
    }
    return Inputs((Build(probes.build_init_layer, spec, _init_label(spec)),))


INIT_LEFT_ALONE = Contract(
    "init_weights",
    _reference_init,
    _draw_init_left_alone,
    families=("values",),
    mutates=(0,),
    compare=lambda got, expected, what, inputs: None,
    arg_names=("module",),
    hint=lambda family, inputs: _(
        "Only an nn.Linear and an nn.LayerNorm are initialised; every other module (an "
        "nn.Embedding, a convolution, a BatchNorm, an activation, a container) is left "
        "exactly as it was, even where it has a 2-d weight."
    ),
    examples=16,
)


@uses(INIT_WEIGHTS, INIT_LEFT_ALONE)
def check_init_weights(init_weights) -> None:
    """The contract: the module afterwards, value for value, against the reference drawing
    from the same seeded generator (Kaiming-normal fan_in weights, zero biases, LayerNorm
    ones and zeros, None skipped, other modules untouched, no reseeding)."""


# ---------------------------------------------------------------- Exercise: EncoderClassifier


class _ReferenceEncoderClassifier(nn.Module):
    def __init__(self, encoder, head):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def forward(self, x):
        return self.head(self.encoder(x))


def _draw_encoder_parts(d: Draw) -> tuple:
    """An encoder and a head, each with a caller's forward hook that changes its output."""
    spec = {"n_in": d.size(1, 5), "hidden": d.size(1, 6), "classes": d.size(1, 4)}
    spec["seed"] = d.draw(st.integers(0, 9))
    spec["dtype"] = d.draw(st.sampled_from(["float32", "float64", "bfloat16"]))
    # an encoder without parameters (nn.Sequential(nn.ReLU())): nothing to read a device from
    spec["plain_encoder"] = d.draw(st.sampled_from([False, False, True]))
    if spec["plain_encoder"]:
        spec["hidden"] = spec["n_in"]
    cast = "" if spec["dtype"] == "float32" else f".to(torch.{spec['dtype']})"
    encoder_text = (
        "nn.Sequential(nn.ReLU())"
        if spec["plain_encoder"]
        else f"nn.Sequential(nn.Linear({spec['n_in']}, {spec['hidden']}), nn.ReLU())"
    )
    encoder = Build(
        probes.build_encoder_part,
        {**spec, "part": "encoder"},
        f"{encoder_text}{cast} " + _("with a forward hook of the caller's"),
    )
    head = Build(
        probes.build_encoder_part,
        {**spec, "part": "head"},
        f"nn.Linear({spec['hidden']}, {spec['classes']}){cast} "
        + _("with a forward hook of the caller's"),
    )
    return encoder, head


def _draw_encoder_classifier(d: Draw) -> Inputs:
    """Parts in float32, float64 or bfloat16 and x in their dtype, (N, n_in) or (N, L, n_in)
    (the dtypes family would
    cast the caller's parts, which the engine's snapshot cannot compare across dtypes)."""
    encoder, head = _draw_encoder_parts(d)
    # sometimes a sequence axis, (N, L, n_in): the features are then (N, L, hidden), which
    # the head takes as they are (no flatten, no squeeze of the encoder's output)
    seq = [d.size(2, 3)] if d.draw(st.booleans()) else []
    x = d.tensor(d.size(1, 4, empty_ok=True), *seq, encoder.spec["n_in"])
    return Inputs((encoder, head, x.to(getattr(torch, encoder.spec["dtype"]))))


def _encoder_hint(family: str, inputs: Inputs) -> str:
    return _(
        "Store the given modules themselves as self.encoder and self.head (no copy, no list), "
        "and return self.head(self.encoder(x)): both called through __call__, so the hooks "
        "the caller put on them run, with nothing under torch.no_grad() or detached."
    )


ENCODER_CLASSIFIER = Contract(
    "EncoderClassifier",
    _ReferenceEncoderClassifier,
    _draw_encoder_classifier,
    families=("values", "edges", "strides", "device", "grad"),
    construct=2,
    mutates=(0, 1),  # filled with the model's weights: the caller's parts must be the model's
    arg_names=("encoder", "head", "x"),
    hint=_encoder_hint,
)
ENCODER_STATE = Contract(  # the state_dict names the text asks for
    "EncoderClassifier",
    _ReferenceEncoderClassifier,
    lambda d: Inputs(_draw_encoder_parts(d)),
    families=("values",),
    construct=2,
    method="state_dict",
    mutates=(0, 1),
    arg_names=("encoder", "head"),
    hint=_encoder_hint,
    examples=4,
)


@uses(ENCODER_STATE, ENCODER_CLASSIFIER)
def check_EncoderClassifier(EncoderClassifier) -> None:
    """The contracts (state_dict names; head(encoder(x)) with the caller's parts and hooks on
    every input family), then swap_head, which takes two steps: it returns the old head, and
    the model then uses and registers the new one; and swapping the first head back in."""
    g = torch.Generator().manual_seed(8)
    encoder, old_head, new_head = probes.build_encoder_parts(8)  # as the probe's
    batches = (3, 0)
    inputs = [torch.randn(n, 5, generator=g) for n in batches]
    what = "EncoderClassifier(encoder, head)"
    seen = observe(probes.probe_swap_head, EncoderClassifier, {"seed": 8, "inputs": inputs}, what)
    _check_module(seen, what)
    returned_old = _take(seen, "returned the old head", f"{what}.swap_head(new_head)")
    if not returned_old:
        raise CheckError(
            _(
                "{what}.swap_head(new_head) should return the head it replaced (the old one)."
            ).format(what=what)
        )
    before, after = seen["parts before swap"], seen["parts after swap"]
    for part in ("encoder", "head", "new_head"):
        for key in ("training", "requires_grad", "grads"):
            same = len(before[part][key]) == len(after[part][key]) and all(
                (a is None and b is None)
                or (
                    isinstance(a, torch.Tensor)
                    and isinstance(b, torch.Tensor)
                    and torch.equal(a, b)
                )
                or a == b
                for a, b in zip(before[part][key], after[part][key], strict=False)
            )
            if not same:
                raise CheckError(
                    _(
                        "{what}.swap_head(new_head) changed the {part}'s {key} (its modules' "
                        "train/eval modes, its parameters' requires_grad flags or their "
                        "gradients). swap_head replaces self.head and returns the old head, "
                        "nothing else: the caller may train the old head again, or keep the "
                        "gradients it accumulated."
                    ).format(what=what, part=part.replace("_", " "), key=key)
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
    for i, (n, x) in enumerate(zip(batches, inputs, strict=True)):
        label = _("{what} after swap_head, on x of shape ({n}, 5)").format(what=what, n=n)
        out = _take(seen, f"swapped out {i}", label, calling=True)
        with torch.no_grad():
            ref = new_head(encoder(x))
        check_shape(out, (n, 4), names="N classes", what=label)
        assert_close(out, ref, what=label, rtol=1e-5, atol=1e-6)
        runs = seen.get(f"swapped hook runs {i}", 1)
        if runs != 1:
            raise CheckError(
                _(
                    "{label}: the encoder ran {runs} times in one forward pass (its forward "
                    "hooks ran {runs} times). Compute the features once, "
                    "features = self.encoder(x), and give them to the head."
                ).format(label=label, runs=runs)
            )
    back_what = _("{what}.swap_head(head), swapping the first head back in").format(what=what)
    if not _take(seen, "returned the new head", back_what):
        raise CheckError(
            _(
                "{what} should return the head it replaced, the nn.Sequential swapped in "
                "before: swap_head takes any module as it is (a head need not have a .weight)."
            ).format(what=back_what)
        )
    out = _take(seen, "back out", back_what, calling=True)
    with torch.no_grad():
        ref = old_head(encoder(inputs[0]))
    assert_close(out, ref, what=back_what, rtol=1e-5, atol=1e-6)
    _judge_modes(seen, what)
    plain_what = _(
        "EncoderClassifier(nn.Sequential(nn.ReLU()), nn.Linear(5, 3)).swap_head(nn.Linear(5, 2)) "
        "(an encoder without parameters)"
    )
    if not _take(seen, "plain swap returned the old head", plain_what):
        raise CheckError(
            _(
                "{what} should return the head it replaced. swap_head needs nothing from the "
                "encoder: assign self.head = new_head and return the old one."
            ).format(what=plain_what)
        )


# ---------------------------------------------------------------- Exercise: freeze_except


def _reference_freeze(model, trainable):
    prefixes = tuple(name + "." for name in trainable if name)
    everything = "" in trainable
    kept = []
    for name, p in model.named_parameters():
        train = everything or name.startswith(prefixes)
        p.requires_grad_(train)
        if train:
            kept.append(name)
    return kept


_FREEZE_MODULES = {
    kind: [name for name, _m in probes.build_freeze_model(kind).named_modules()]
    for kind in ("nested", "deep", "token")
}


# For the tied model: names that take the shared weight's two modules (embed, out) together
# or leave both out. (Where one of them trains and the other not, the text's two rules, by
# module and by name, disagree on the shared weight: not drawn.)
_TIED_TRAINABLE = ((), ("",), ("body",), ("embed", "out"), ("out", "body", "embed"))


def _draw_freeze(d: Draw) -> Inputs:
    """A model ('deep': modules '0' to '10', so '1' next to '10'; 'nested': encoder.0,
    encoder.2, head; 'token': parameters on the model itself too; 'tied': one weight under
    two names, listed once), some parameters already
    frozen, in train or eval mode; up to three of its module names ('' the model itself)."""
    kind = d.draw(st.sampled_from(["nested", "deep", "token", "tied"]))
    spec = {
        "kind": kind,
        "frozen": sorted(d.draw(st.sets(st.integers(0, 21), max_size=4))),
        "training": not d.draw(st.booleans()),  # shrinks to train mode
    }
    if kind == "tied":  # the shared weight's two modules together or neither (see above)
        trainable = list(d.draw(st.sampled_from(_TIED_TRAINABLE)))
        label = _(
            "nn.Sequential(embed=nn.Embedding, body=nn.Linear, out=nn.Linear) with "
            "out.weight tied to embed.weight"
        )
        if spec["frozen"]:
            label += _(" with parameters {frozen} of named_parameters() frozen before").format(
                frozen=spec["frozen"]
            )
        if not spec["training"]:
            label += _(", in eval mode")
        return Inputs((Build(probes.build_freeze, spec, label), trainable))
    names = _FREEZE_MODULES[kind]
    if kind == "deep" and d.family != "edges":  # '1' and '10' together, and '0', often
        names = [*names, "1", "10", "1", "0", "0"]
    elif kind == "deep":  # one name that '10.weight' starts with ('1') or contains ('0.')
        names = ["0", "1", ""]
    count = d.draw(st.integers(1 if kind == "deep" else 0, 1 if d.family == "edges" else 3))
    trainable = [d.draw(st.sampled_from(names)) for _name in range(count)]
    label = {
        "nested": "nn.Sequential(encoder=nn.Sequential(nn.Linear, nn.ReLU, nn.Linear), "
        "head=nn.Linear)",
        "deep": _("nn.Sequential of 11 nn.Linear (modules '0' to '10')"),
        "token": _("a model with a cls_token Parameter of its own, an encoder and a head"),
    }[kind]
    if spec["frozen"]:
        label += _(" with parameters {frozen} of named_parameters() frozen before").format(
            frozen=spec["frozen"]
        )
    if not spec["training"]:
        label += _(", in eval mode")
    return Inputs((Build(probes.build_freeze, spec, label), trainable))


def _freeze_hint(family: str, inputs: Inputs) -> str:
    return _(
        "A parameter trains when its name in model.named_parameters() starts with one of the "
        "names plus '.' ('1' covers '1.weight', not '10.weight'; '' covers every parameter): "
        "p.requires_grad_(True) for those, p.requires_grad_(False) for the others (an earlier "
        "call may have frozen what trains now), and nothing else changed (not .grad, not the "
        "mode). Return the trainable names in named_parameters() order."
    )


def _compare_freeze(got, expected, what: str, inputs: Inputs) -> None:
    """The names as a list (what the text asks), in named_parameters() order, once each."""
    if type(got) is not list:
        raise CheckError(
            _(
                "{what} returned a {type_name}: return the trainable names as a list, "
                "[name for name, p in model.named_parameters() if ...]."
            ).format(what=what, type_name=type(got).__name__)
        )
    if len(got) != len(set(got)):
        raise CheckError(
            _(
                "{what} returned {got}, with a name more than once: a weight shared by two "
                "modules is one parameter, which model.named_parameters() lists once (not "
                "named_parameters(remove_duplicate=False))."
            ).format(what=what, got=got)
        )
    compare_values(got, expected, what, inputs)


FREEZE_EXCEPT = Contract(
    "freeze_except",
    _reference_freeze,
    _draw_freeze,
    families=("values", "edges"),
    mutates=(0,),
    compare=_compare_freeze,
    arg_names=("model", "trainable"),
    hint=_freeze_hint,
    examples=16,
)


@uses(FREEZE_EXCEPT)
def check_freeze_except(freeze_except) -> None:
    """The contract: the names returned and the model afterwards (requires_grad flags, and
    nothing else: weights, modes, gradients) against the reference, on prefixes that look
    alike ('1' and '10'), nested names, '', tied weights and models frozen by an earlier
    call; then the buffers, which the contract's snapshot sees only by value: none made to
    require grad."""
    what = "freeze_except(TokenClassifier(), [''])"
    seen = observe(probes.probe_freeze_buffers, freeze_except, {"trainable": [""], "seed": 1}, what)
    buffers = _take(seen, "buffers requiring grad", what)
    if buffers:
        raise CheckError(
            _(
                "{what} made the buffers {names} require grad. Buffers (BatchNorm's running "
                "statistics, a fixed shift) are not parameters: set requires_grad on "
                "model.named_parameters() only."
            ).format(what=what, names=buffers)
        )
