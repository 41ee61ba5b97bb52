"""Hidden checks for 03_modules."""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict

import torch
from torch import nn

from tutorial_lib.checks import (
    CheckError,
    assert_close,
    check_dtype,
    check_no_hooks_left,
    check_shape,
    check_type,
)
from tutorial_lib.device import get_device

_LEFT_BEHIND = (
    "After .to(device) something the module uses stayed behind: a layer kept in a plain Python "
    "list, a tensor kept as a plain attribute, or a tensor created on a fixed device in forward. "
    "Register layers as submodules and constant tensors with register_buffer."
)


def _call(module, x: torch.Tensor, what: str) -> torch.Tensor:
    """module(x), turning a device or dtype clash into a message that names the usual causes."""
    try:
        return module(x)
    except RuntimeError as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0]
        if any(word in first for word in ("device", "dtype", "same type", "Half", "Double")):
            raise CheckError(f"{what} failed with: {first}. {_LEFT_BEHIND}") from None
        raise


def _no_parameters(what: str) -> CheckError:
    return CheckError(
        f"{what} has no parameters (model.parameters() is empty), so an optimizer cannot train "
        "it, .to(device) cannot move it and state_dict() cannot save it. Layers kept in a plain "
        "Python list or dict, or created inside forward, are invisible to nn.Module: assign "
        "them in __init__ (self.fc = nn.Linear(...)) or keep them in nn.ModuleList / "
        "nn.ModuleDict."
    )


# ---------------------------------------------------------------- Exercise: MLP


def _mlp_reference(x, params, activation):
    h = x
    pairs = list(zip(params[0::2], params[1::2], strict=True))
    for i, (weight, bias) in enumerate(pairs):
        h = h @ weight.T + bias
        if i < len(pairs) - 1:
            h = activation()(h)
    return h


def check_MLP(MLP) -> None:
    """Parameter shapes per layer, values against a reference built from its own weights."""
    device = get_device()
    g = torch.Generator().manual_seed(3)
    configs = [
        ([4, 16, 3], nn.ReLU),
        ([5, 2], nn.ReLU),
        ([3, 8, 8, 8, 1], nn.Tanh),
        ([1, 1, 1], nn.ReLU),
        ([6, 32, 16, 4], nn.GELU),
    ]
    for sizes, activation in configs:
        what = f"MLP({sizes}, activation=nn.{activation.__name__})"
        model = MLP(sizes, activation=activation)
        check_type(model, nn.Module, what)
        named = list(model.named_parameters())
        if not named:
            raise _no_parameters(what)
        expected = []
        for n_in, n_out in itertools.pairwise(sizes):
            expected += [(n_out, n_in), (n_out,)]
        shapes = [tuple(p.shape) for _, p in named]
        if shapes != expected:
            raise CheckError(
                f"{what} has parameters of shapes {shapes}, expected {expected}: one "
                "nn.Linear(sizes[i], sizes[i + 1]) (with a bias) for each consecutive pair of "
                "sizes, registered in order, and no other parameters."
            )
        model = model.to(device)
        for n in (0, 1, 7):
            x = torch.randn(n, sizes[0], generator=g).to(device)
            label = f"{what} on x of shape ({n}, {sizes[0]})"
            out = _call(model, x, label)
            with torch.no_grad():
                ref = _mlp_reference(x, [p for _, p in model.named_parameters()], activation)
            check_shape(out, (n, sizes[-1]), names="N out", what=label)
            try:
                assert_close(out, ref, what=label, rtol=1e-4, atol=1e-5)
            except CheckError as err:
                if n and torch.allclose(out, activation()(ref), rtol=1e-4, atol=1e-5):
                    raise CheckError(
                        f"{label}: the activation is applied after the last layer too. The "
                        "last nn.Linear's output (the scores, or logits) must stay unbounded."
                    ) from None
                if activation is not nn.ReLU and n:
                    raise CheckError(
                        f"{err} Did you use the activation passed in (nn.{activation.__name__}), "
                        "creating a fresh instance with activation()?"
                    ) from None
                raise
    model = MLP([3, 5, 2]).double()  # .to(dtype) on the CPU stands in for .to(device)
    x = torch.randn(4, 3, generator=g, dtype=torch.float64)
    out = _call(model, x, "MLP([3, 5, 2]).double() on float64 input")
    check_dtype(out, torch.float64, "MLP([3, 5, 2]).double() on float64 input")


# ---------------------------------------------------------------- Exercise: ResidualBlock

_RESIDUAL_KEYS = {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}


def check_ResidualBlock(ResidualBlock) -> None:
    """x + fc2(relu(fc1(x))) from its own state_dict; stable parameters; any leading dims."""
    device = get_device()
    g = torch.Generator().manual_seed(4)
    for dim, hidden in [(4, 8), (1, 1), (16, 3), (5, 5)]:
        what = f"ResidualBlock({dim}, {hidden})"
        block = ResidualBlock(dim, hidden)
        check_type(block, nn.Module, what)
        keys = set(block.state_dict())
        if not keys:
            raise _no_parameters(what)
        if keys != _RESIDUAL_KEYS:
            raise CheckError(
                f"{what}.state_dict() has keys {sorted(keys)}, expected {sorted(_RESIDUAL_KEYS)}:"
                " two layers named fc1 = nn.Linear(dim, hidden) and fc2 = nn.Linear(hidden, dim)."
            )
        block = block.to(device)
        sd = block.state_dict()
        check_shape(sd["fc1.weight"], (hidden, dim), names="hidden dim", what=f"{what}.fc1.weight")
        check_shape(sd["fc2.weight"], (dim, hidden), names="dim hidden", what=f"{what}.fc2.weight")
        inputs = [
            torch.randn(5, dim, generator=g),
            torch.randn(1, dim, generator=g),
            torch.randn(0, dim, generator=g),
            torch.randn(2, 3, dim, generator=g),  # (N, L, D): Linear works on the last dim
            torch.randn(dim, 6, generator=g).t(),  # non-contiguous (6, D)
        ]
        for x_cpu in inputs:
            x = x_cpu.to(device)
            label = f"{what} on x of shape {tuple(x.shape)}"
            out = _call(block, x, label)
            with torch.no_grad():
                h = torch.relu(x @ sd["fc1.weight"].T + sd["fc1.bias"])
                ref = x + h @ sd["fc2.weight"].T + sd["fc2.bias"]
            check_shape(out, tuple(x.shape), what=label)
            again = block(x)
            if x.numel() and not torch.allclose(out, again, rtol=1e-5, atol=1e-6):
                raise CheckError(
                    f"{label}: calling the block twice on the same x gave different outputs. "
                    "Layers created inside forward get fresh random weights on every call and "
                    "are never trained: create them once, in __init__."
                )
            try:
                assert_close(out, ref, what=label, rtol=1e-4, atol=1e-5)
            except CheckError:
                if x.numel() and torch.allclose(out, ref - x, rtol=1e-4, atol=1e-5):
                    raise CheckError(
                        f"{label}: the skip connection is missing; return x + fc2(relu(fc1(x)))."
                    ) from None
                if x.numel() and torch.allclose(out, torch.relu(ref), rtol=1e-4, atol=1e-5):
                    raise CheckError(
                        f"{label}: there should be no ReLU after the sum; return "
                        "x + fc2(relu(fc1(x)))."
                    ) from None
                raise
        x = torch.randn(3, dim, generator=g).to(device)
        block.zero_grad()
        block(x).pow(2).sum().backward()
        missing = [name for name, p in block.named_parameters() if p.grad is None]
        if missing:
            raise CheckError(
                f"{what}: after backward these parameters have no gradient: {missing}. "
                "forward must use the layers registered in __init__."
            )


# ---------------------------------------------------------------- Exercise: count_trainable


class _Tied(nn.Module):
    """An embedding and an output layer that share one weight (weight tying)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10, bias=False)
        self.out.weight = self.emb.weight  # one Parameter, two names

    def forward(self, idx):
        return self.out(self.emb(idx))


def check_count_trainable_parameters(count_trainable_parameters) -> None:
    """Elements, not tensors; buffers excluded; frozen excluded; shared weights counted once."""
    torch.manual_seed(0)
    frozen = nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.Linear(5, 2))
    frozen[0].requires_grad_(False)
    partly = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
    partly[0].bias.requires_grad_(False)
    cases = [
        ("nn.Linear(7, 3)", nn.Linear(7, 3), 24),
        ("nn.Linear(1, 1, bias=False)", nn.Linear(1, 1, bias=False), 1),
        ("nn.ReLU() (no parameters)", nn.ReLU(), 0),
        (
            "Linear(4, 5) + BatchNorm1d(5) + Linear(5, 2) (the buffers are not parameters)",
            nn.Sequential(nn.Linear(4, 5), nn.BatchNorm1d(5), nn.Linear(5, 2)),
            47,
        ),
        ("the same model with its first Linear frozen", frozen, 22),
        ("Linear(3, 3) + Linear(3, 1) with the first bias frozen", partly, 13),
        ("an Embedding(10, 4) whose weight is shared with a Linear(4, 10) (tied)", _Tied(), 40),
        (
            "nn.LSTM(3, 4)",
            nn.LSTM(3, 4),
            4 * 4 * 3 + 4 * 4 * 4 + 2 * 4 * 4,
        ),
    ]
    for what, model, expected in cases:
        got = count_trainable_parameters(model.to(get_device()))
        label = f"count_trainable_parameters({what})"
        check_type(got, int, label)
        if got != expected:
            hint = " Count elements with p.numel(), only where p.requires_grad is True."
            if expected == 40 and got == 80:
                hint = (
                    " A shared weight appears under two names but is one Parameter: "
                    "model.parameters() lists it once; model.modules() or state_dict() twice."
                )
            elif "buffers" in what and got > expected:
                hint = " Buffers (BatchNorm's running statistics) are not parameters."
            raise CheckError(f"{label} returned {got}, expected {expected}.{hint}")


# ---------------------------------------------------------------- Exercise: RunningMean


def _buffer(module, what: str) -> torch.Tensor:
    sd = module.state_dict(keep_vars=True)
    if "running_mean" not in sd:
        raise CheckError(
            f"{what}.state_dict() has keys {sorted(sd)}, but no 'running_mean'. A tensor kept "
            "as a plain attribute (self.running_mean = torch.zeros(...)) is neither saved by "
            "state_dict() nor moved by .to(device): register it with "
            "self.register_buffer('running_mean', torch.zeros(num_features))."
        )
    return sd["running_mean"]


def check_RunningMean(RunningMean) -> None:
    """Buffer registered, saved, moved and converted; updates only in training, no history."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    for num_features, momentum in [(3, 0.1), (1, 0.5), (7, 0.9)]:
        what = f"RunningMean({num_features}, momentum={momentum})"
        module = RunningMean(num_features, momentum=momentum)
        check_type(module, nn.Module, what)
        buf = _buffer(module, what)
        params = [name for name, _ in module.named_parameters()]
        if params:
            raise CheckError(
                f"{what} has parameters {params}. The running mean is not learned: an "
                "nn.Parameter would be handed to the optimizer and trained. Use register_buffer."
            )
        assert_close(buf, torch.zeros(num_features), what=f"{what}'s initial running_mean")
        module = module.to(device)
        ref = torch.zeros(num_features, device=device)
        module.train()
        for n in (4, 1, 9):
            x = torch.randn(n, num_features, generator=g).to(device).requires_grad_(True)
            label = f"{what} in training mode on a batch of shape ({n}, {num_features})"
            out = _call(module, x, label)
            ref = (1 - momentum) * ref + momentum * x.detach().mean(0)
            buf = _buffer(module, what)
            if buf.requires_grad:
                raise CheckError(
                    f"{label}: after the call running_mean requires grad, so it drags the "
                    "autograd graph of every earlier batch along. Update it under "
                    "torch.no_grad() (or from x.detach())."
                )
            assert_close(buf, ref, what=f"running_mean after {label}", rtol=1e-5, atol=1e-6)
            assert_close(out, x.detach() - ref, what=label, rtol=1e-5, atol=1e-6)
            out.sum().backward()
            assert_close(
                x.grad,
                torch.ones_like(x),
                what=f"x.grad after out.sum().backward() ({label})",
                rtol=1e-5,
                atol=1e-6,
            )
        empty = torch.zeros(0, num_features, device=device)
        out = _call(module, empty, f"{what} on an empty batch")
        check_shape(out, (0, num_features), names="N F", what=f"{what} on an empty batch")
        try:
            assert_close(_buffer(module, what), ref, what="running_mean", rtol=1e-5, atol=1e-6)
        except CheckError:
            raise CheckError(
                f"{what}: an empty batch changed running_mean to "
                f"{_buffer(module, what).detach().cpu().tolist()}; the mean of zero rows is "
                "NaN. Skip the update when the batch is empty."
            ) from None
        module.eval()
        x = torch.randn(6, num_features, generator=g).to(device)
        out = _call(module, x, f"{what} in eval mode")
        try:
            assert_close(_buffer(module, what), ref, what="running_mean", rtol=1e-5, atol=1e-6)
        except CheckError:
            raise CheckError(
                f"{what}: running_mean changed in eval mode. Update it only when "
                "self.training is True."
            ) from None
        assert_close(out, x - ref, what=f"{what} in eval mode", rtol=1e-5, atol=1e-6)
        fresh = RunningMean(num_features, momentum=momentum).to(device)
        fresh.load_state_dict(module.state_dict())
        fresh.eval()
        assert_close(
            fresh(x), x - ref, what=f"a fresh {what} after load_state_dict", rtol=1e-5, atol=1e-6
        )
    module = RunningMean(2, momentum=0.5).double()  # the CPU's stand-in for .to(device)
    check_dtype(_buffer(module, "RunningMean(2)"), torch.float64, "running_mean after .double()")
    out = _call(module, torch.ones(3, 2, dtype=torch.float64), "RunningMean(2).double()")
    check_dtype(out, torch.float64, "RunningMean(2).double() on float64 input")


# ---------------------------------------------------------------- Exercise: capture_activations


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.act = nn.ReLU(inplace=True)  # overwrites fc's output: captured tensors need a copy

    def forward(self, x):
        return self.act(self.fc(x))


def _hook_model():
    return nn.Sequential(
        OrderedDict(inp=nn.Linear(4, 6), block=_Block(), out=nn.Linear(6, 3), tanh=nn.Tanh())
    )


def _expected_activations(model, x):
    with torch.no_grad():
        acts = {"inp": model.inp(x)}
        acts["block.fc"] = model.block.fc(acts["inp"])
        acts["block.act"] = acts["block"] = torch.relu(acts["block.fc"])
        acts["out"] = model.out(acts["block"])
        acts["tanh"] = acts[""] = torch.tanh(acts["out"])
    return acts


def check_capture_activations(capture_activations) -> None:
    """Outputs of the named modules (the root included), detached copies, no hooks left."""
    device = get_device()
    g = torch.Generator().manual_seed(6)
    torch.manual_seed(6)
    model = _hook_model().to(device)
    cases = [
        ["inp", "block.fc", "out"],
        ["block"],
        ["block.fc"],
        ["", "inp"],
        ["tanh", "block.act", "block.fc", "inp"],
        [],
    ]
    for n in (5, 1, 0):
        for names in cases:
            x = torch.randn(n, 4, generator=g).to(device)
            what = f"capture_activations(model, x of shape ({n}, 4), {names})"
            got = capture_activations(model, x, names)
            check_type(got, dict, what)
            if set(got) != set(names):
                missing = sorted(set(names) - set(got))
                extra = sorted(set(got) - set(names))
                hint = ""
                if "" in missing:
                    hint = (
                        " '' is the model itself; its hooks only run when you call model(x), "
                        "not model.forward(x)."
                    )
                if extra:
                    hint += " Start from an empty dict on every call."
                elif missing and len(got) == 1 and len(names) > 1:
                    hint += (
                        " Every hook wrote under one key: a function defined in a loop reads "
                        "the loop variable when it runs, not when it was defined. Bind it as a "
                        "default argument: def hook(module, inputs, output, name=name)."
                    )
                raise CheckError(
                    f"{what} returned the keys {sorted(got)}; missing {missing}, unexpected "
                    f"{extra}.{hint}"
                )
            expected = _expected_activations(model, x)
            for name in names:
                label = f"the activation of {name!r} from {what}"
                check_type(got[name], torch.Tensor, label)
                if got[name].requires_grad:
                    raise CheckError(
                        f"{label} requires grad: it keeps the whole graph alive. Store "
                        "output.detach().clone()."
                    )
                try:
                    assert_close(got[name], expected[name], what=label, rtol=1e-5, atol=1e-6)
                except CheckError as err:
                    hint = ""
                    if name == "block.fc" and torch.allclose(got[name], expected["block"]):
                        hint = (
                            " The in-place ReLU that runs after it changed the tensor your "
                            "hook stored: store a copy, output.detach().clone()."
                        )
                    raise CheckError(
                        f"{err}{hint} The hook's arguments are (module, inputs, output); "
                        "store the output."
                    ) from None
            check_no_hooks_left(model, what)


# ---------------------------------------------------------------- Exercise: init_weights


def check_init_weights(init_weights) -> None:
    """Linear: Kaiming-normal weights (fan_in, ReLU gain), zero bias; LayerNorm: ones, zeros."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(7)
        model = nn.Sequential(
            nn.Linear(400, 300),
            nn.ReLU(),
            nn.Linear(300, 100),
            nn.LayerNorm(100),
            nn.Dropout(0.1),
            nn.Linear(100, 2),
        ).to(get_device())
        with torch.no_grad():
            model[3].weight.uniform_(0.5, 1.5)  # not LayerNorm's default, so a reset shows
            model[3].bias.uniform_(-1, 1)
        try:
            model.apply(init_weights)
        except (ValueError, RuntimeError, TypeError, AttributeError) as err:
            raise CheckError(
                f"model.apply(init_weights) failed with {type(err).__name__}: {err}. apply "
                "calls init_weights on every submodule (Linear, ReLU, LayerNorm, Dropout and "
                "the Sequential itself): test isinstance(module, nn.Linear) and "
                "isinstance(module, nn.LayerNorm), and leave other modules alone."
            ) from None
        single = nn.Linear(500, 250)
        init_weights(single)  # called on one layer directly, as apply would
    for name, layer in [
        ("model[0]", model[0]),
        ("model[2]", model[2]),
        ("model[5]", model[5]),
        ("a single nn.Linear(500, 250)", single),
    ]:
        if not bool((layer.bias == 0).all()):
            raise CheckError(
                f"{name}.bias is not all zeros after init: nn.init.zeros_(module.bias)."
            )
        weight = layer.weight.detach().to("cpu", torch.float64)  # MPS has no float64
        if weight.numel() < 10_000:
            continue
        fan_in = weight.shape[1]
        want = math.sqrt(2.0 / fan_in)
        std = float(weight.std())
        if abs(std - want) > 0.03 * want:
            raise CheckError(
                f"{name}.weight has standard deviation {std:.4f} after init, expected "
                f"sqrt(2 / fan_in) = {want:.4f} (fan_in = in_features = {fan_in}). Use "
                "nn.init.kaiming_normal_(m.weight, nonlinearity='relu') (mode='fan_in', the "
                "default)."
            )
        if abs(float(weight.mean())) > 5 * want / math.sqrt(weight.numel()):
            raise CheckError(f"{name}.weight should have mean 0, got {float(weight.mean()):.4f}.")
        if float(weight.abs().max()) < 2.5 * want:
            raise CheckError(
                f"{name}.weight looks uniformly distributed (no value beyond 2.5 standard "
                "deviations); use the normal version, nn.init.kaiming_normal_."
            )
    ln = model[3]
    if not (bool((ln.weight == 1).all()) and bool((ln.bias == 0).all())):
        raise CheckError(
            "after model.apply(init_weights) a LayerNorm should have weight all ones and bias "
            "all zeros: nn.init.ones_(module.weight), nn.init.zeros_(module.bias)."
        )


# ---------------------------------------------------------------- Exercise: EncoderClassifier


def check_EncoderClassifier(EncoderClassifier) -> None:
    """Registered parts named encoder/head, encoder called through __call__, swappable head."""
    device = get_device()
    g = torch.Generator().manual_seed(8)
    torch.manual_seed(8)
    encoder = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
    head = nn.Linear(8, 3)
    calls = []
    encoder.register_forward_hook(lambda module, inputs, output: calls.append(1))
    model = EncoderClassifier(encoder, head)
    what = "EncoderClassifier(encoder, head)"
    check_type(model, nn.Module, what)
    keys = set(model.state_dict())
    expected_keys = {"encoder.0.weight", "encoder.0.bias", "head.weight", "head.bias"}
    if not keys:
        raise _no_parameters(what)
    if keys != expected_keys:
        raise CheckError(
            f"{what}.state_dict() has keys {sorted(keys)}, expected {sorted(expected_keys)}: "
            "store the parts as self.encoder and self.head."
        )
    model = model.to(device)
    for n in (4, 1, 0):
        x = torch.randn(n, 5, generator=g).to(device)
        label = f"{what} on x of shape ({n}, 5)"
        before = len(calls)
        out = _call(model, x, label)
        if len(calls) == before:
            raise CheckError(
                f"{label}: the encoder's forward hooks did not run. Call the part as "
                "self.encoder(x), never self.encoder.forward(x): hooks only run through "
                "__call__."
            )
        with torch.no_grad():
            ref = head(encoder(x))
        check_shape(out, (n, 3), names="N classes", what=label)
        assert_close(out, ref, what=label, rtol=1e-5, atol=1e-6)
    model.eval()
    if encoder.training or head.training:
        raise CheckError(f"{what}.eval() did not reach the encoder and head: register them.")
    model.train()
    new_head = nn.Sequential(nn.Linear(8, 4), nn.Tanh()).to(device)
    old = model.swap_head(new_head)
    if old is not head:
        raise CheckError(
            f"{what}.swap_head(new_head) should return the head it replaced (the old one)."
        )
    keys = set(model.state_dict())
    expected_keys = {"encoder.0.weight", "encoder.0.bias", "head.0.weight", "head.0.bias"}
    if keys != expected_keys:
        raise CheckError(
            f"after swap_head(nn.Sequential(nn.Linear(8, 4), nn.Tanh())) the state_dict has "
            f"keys {sorted(keys)}, expected {sorted(expected_keys)}: the new head must replace "
            "self.head (assign it: self.head = new_head)."
        )
    n_params = sum(p.numel() for p in model.parameters())
    if n_params != 5 * 8 + 8 + 8 * 4 + 4:
        raise CheckError(
            f"after swap_head the model has {n_params} parameters, expected 84 (the encoder's "
            "48 and the new head's 36)."
        )
    for n in (3, 0):
        x = torch.randn(n, 5, generator=g).to(device)
        label = f"{what} after swap_head, on x of shape ({n}, 5)"
        before = len(calls)
        out = _call(model, x, label)
        if len(calls) == before:
            raise CheckError(f"{label}: the encoder's hooks did not run; call self.encoder(x).")
        with torch.no_grad():
            ref = new_head(encoder(x))
        check_shape(out, (n, 4), names="N classes", what=label)
        assert_close(out, ref, what=label, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- Exercise: freeze_except


def _freeze_case(freeze_except, model, prefixes, expected, device, g):
    what = f"freeze_except(model, {prefixes})"
    got = freeze_except(model, prefixes)
    check_type(got, list, what)
    flags = {name: p.requires_grad for name, p in model.named_parameters()}
    wrong_on = [name for name, on in flags.items() if on and name not in expected]
    wrong_off = [name for name, on in flags.items() if not on and name in expected]
    if wrong_on:
        if prefixes and all(name.startswith(tuple(prefixes)) for name in wrong_on):
            hint = (
                "A name in trainable names a module: '1' covers '1.weight' but not "
                "'10.weight'; test name.startswith(prefix + '.')."
            )
        else:
            hint = (
                "Freeze with p.requires_grad_(False). Setting p.grad = None only forgets the "
                "last gradient (the next backward computes it again and optimizer.step() "
                "updates the weight), and eval() changes layer behaviour, not gradients."
            )
        shown = wrong_on if len(wrong_on) <= 6 else [*wrong_on[:6], f"... ({len(wrong_on)} in all)"]
        raise CheckError(
            f"after {what} these parameters still have requires_grad=True: {shown}. {hint}"
        )
    if wrong_off:
        raise CheckError(
            f"after {what} these parameters are frozen but should train: {wrong_off}. Every "
            "parameter whose name starts with one of the names plus '.' trains, nested names "
            "such as 'encoder.2' included (compare against model.named_parameters() names), "
            "and gets requires_grad_(True) in case an earlier call froze it."
        )
    if got != expected:
        raise CheckError(
            f"{what} returned {got}, expected the trainable parameter names {expected}, in "
            "model.named_parameters() order."
        )
    if not expected:
        return
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    for p in model.parameters():
        p.grad = None
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(8, 3, generator=g).to(device)
    model(x).pow(2).sum().backward()
    optimizer.step()
    for name, p in model.named_parameters():
        changed = not torch.equal(p.detach(), before[name])
        if name in expected and not changed:
            raise CheckError(f"after {what} and one SGD step, {name} did not change.")
        if name not in expected and changed:
            raise CheckError(f"after {what} and one SGD step, the frozen {name} changed.")


def check_freeze_except(freeze_except) -> None:
    """Flags, return value and an actual SGD step, on prefixes that look alike ('1' vs '10')."""
    device = get_device()
    g = torch.Generator().manual_seed(9)
    torch.manual_seed(9)
    deep = nn.Sequential(*[nn.Linear(3, 3) for _ in range(11)]).to(device)  # names '0'..'10'
    all_names = [name for name, _ in deep.named_parameters()]
    _freeze_case(freeze_except, deep, ["1"], ["1.weight", "1.bias"], device, g)
    expected = ["0.weight", "0.bias", "10.weight", "10.bias"]
    _freeze_case(freeze_except, deep, ["10", "0"], expected, device, g)
    _freeze_case(freeze_except, deep, [], [], device, g)
    full = [str(i) for i in range(11)]
    _freeze_case(freeze_except, deep, full, all_names, device, g)
    nested = nn.Sequential(
        OrderedDict(
            encoder=nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 4)),
            head=nn.Linear(4, 2),
        )
    ).to(device)
    _freeze_case(freeze_except, nested, ["head"], ["head.weight", "head.bias"], device, g)
    expected = ["encoder.2.weight", "encoder.2.bias", "head.weight", "head.bias"]
    _freeze_case(freeze_except, nested, ["head", "encoder.2"], expected, device, g)
