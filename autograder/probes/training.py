"""Probes for 06_training (see autograder/probes/__init__.py).

Each probe builds a small seeded setup from its case (the builders here are shared with
autograder/hidden/training.py, which builds identical copies for its reference runs), runs
the learner's function or class on it and returns what it saw as data: returned values,
model modes, learning rates, weights and optimizer/scheduler states afterwards. Learning-rate
schedules arrive as tables of factors in the case; nothing here knows the right answers.
"""

from __future__ import annotations

import copy
import fractions
import os
import shutil
import tempfile
import warnings
import weakref

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.flop_counter import FlopCounterMode

from autograder.probes import devices
from tutorial_lib.checks import is_stub
from tutorial_lib.data import load_digits, train_val_split

# ---------------------------------------------------------------------------------------
# Shared builders and helpers (the hidden checks call these too)
# ---------------------------------------------------------------------------------------


def as_data(value):
    """``value`` with dict, tuple, float and int subclasses (OrderedDict, namedtuple,
    numpy.float64...) turned into the plain types that cross the boundary."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (torch.Size, torch.device, torch.dtype, str)) or value is None:
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, dict):
        return {k: as_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(as_data(v) for v in value)
    return value


def model_state(model: nn.Module) -> dict:
    """A detached copy of ``model.state_dict()`` as a plain dict."""
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _first_line(err: Exception) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:300] if text else ""


def _raised(err: Exception) -> list[str]:
    """An exception the learner's code raised, as data: [type name, first line of message],
    the type named "stub" for the exercise's own NotImplementedError (see is_stub)."""
    return ["stub" if is_stub(err) else type(err).__name__, _first_line(err)]


def classification_data(n: int, features: int, classes: int, seed: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    y = torch.randint(0, classes, (n,), generator=g)
    return TensorDataset(x, y)


def build_mlp(features: int, classes: int, dropout: float, seed: int, device) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(features, 16), nn.ReLU(), nn.Dropout(dropout), nn.Linear(16, classes)
    ).to(device)


def factor_scheduler(optimizer, factors: list[float]) -> LambdaLR:
    """A LambdaLR whose factor after ``step`` steps is ``factors[step]`` (the last one after)."""
    last = len(factors) - 1
    return LambdaLR(optimizer, lambda step: factors[min(step, last)])


# ---------------------------------------------------------------------------------------
# Contract builders (autograder/contracts.py: Build): each makes one argument from a spec.
# The kernel and the grader build their own copies, argument by argument in order; the
# optimizer builder gets the model (``of``), and the scheduler the optimizer.
# ---------------------------------------------------------------------------------------


def build_contract_model(spec: dict) -> nn.Module:
    """A seeded MLP on 4 features in the spec's mode; with ``grads``, its .grad already holds
    the caller's gradients (accumulated over earlier batches, say). The global random state
    is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec["seed"])
        model = nn.Sequential(
            nn.Linear(4, 16),
            nn.ReLU(),
            nn.Dropout(spec.get("dropout", 0.0)),
            nn.Linear(16, spec["classes"]),
        )
        if spec.get("grads"):
            for p in model.parameters():
                p.grad = torch.randn_like(p)
    if spec.get("frozen"):  # the caller froze the first layer (fine-tuning the head only)
        model[0].requires_grad_(False)
    model.train(spec["training"])
    return model


def build_contract_loader(spec: dict) -> DataLoader:
    """A DataLoader over n seeded samples (classification: 3 classes; regression: 1 target),
    with its own generator, so iterating it draws nothing from the global random state."""
    seed, n = spec["seed"], spec["n"]
    if spec.get("task") == "regression":
        g = torch.Generator().manual_seed(seed)
        data = TensorDataset(torch.randn(n, 4, generator=g), torch.randn(n, 1, generator=g))
    else:
        data = classification_data(n, 4, 3, seed)
    return DataLoader(data, batch_size=spec["batch"], generator=torch.Generator().manual_seed(seed))


def build_contract_loss(spec: dict) -> nn.Module:
    if spec.get("task") == "regression":
        return nn.MSELoss()
    return nn.CrossEntropyLoss(label_smoothing=spec.get("label_smoothing", 0.0))


def build_contract_optimizer(spec: dict, model: nn.Module) -> torch.optim.Optimizer:
    """SGD over the parameters of the contract's model (``Build(..., of=(model's position,))``);
    with ``spec["groups"] == 2``, the last layer in a second group at half the rate."""
    if spec.get("groups", 1) == 2:
        params = list(model.parameters())
        return torch.optim.SGD(
            [{"params": params[:-2]}, {"params": params[-2:], "lr": spec["lr"] / 2}],
            lr=spec["lr"],
            momentum=spec["momentum"],
        )
    return torch.optim.SGD(model.parameters(), lr=spec["lr"], momentum=spec["momentum"])


def build_contract_scheduler(spec: dict, optimizer: torch.optim.Optimizer) -> LambdaLR:
    """A table-driven LambdaLR (see factor_scheduler) on the contract's optimizer; with
    ``spec["stepped"]``, already that many steps along (a resumed run's schedule)."""
    scheduler = factor_scheduler(optimizer, spec["factors"])
    with warnings.catch_warnings():  # "lr_scheduler.step() before optimizer.step()"
        warnings.simplefilter("ignore")
        for _ in range(spec.get("stepped", 0)):
            scheduler.step()
    return scheduler


# ---------------------------------------------------------------------------------------
# Exercise 1: make_loss_fn
# ---------------------------------------------------------------------------------------


def probe_make_loss_fn(make_loss_fn, case: dict) -> dict:
    """What make_loss_fn returns for ``case["task"]``: whether it is a Module instance, its type.
    (Its values, gradients and effects on the caller's tensors are the contract's.)"""
    loss_fn = make_loss_fn(case["task"])
    return {"is_module": isinstance(loss_fn, nn.Module), "type": type(loss_fn).__name__}


def probe_make_loss_fn_unknown(make_loss_fn, case: dict) -> dict:
    """What make_loss_fn does with a task it should not know."""
    try:
        make_loss_fn(case["task"])
    except Exception as err:  # any exception is the observation
        return {"raised": type(err).__name__, "is_value_error": isinstance(err, ValueError)}
    return {"raised": None, "is_value_error": False}


# ---------------------------------------------------------------------------------------
# Exercise 2: train_one_epoch
# ---------------------------------------------------------------------------------------


def build_train_run(case: dict):
    """(model, loader, loss_fn, optimizer, scheduler) for one train_one_epoch case.

    The loader has its own generator, so iterating it leaves the global random state alone:
    after an epoch, that state has moved only by what dropout drew."""
    seed, n = case["seed"], case["n"]
    if case["task"] == "regression":
        dim = case.get("target_dim", 1)  # y (B, D): D > 1 tells len(y) from y.numel()
        g = torch.Generator().manual_seed(seed)
        # target_scale: large targets, large gradients (what a clip of its own would cut)
        x = torch.randn(n, 4, generator=g)
        y = torch.randn(n, dim, generator=g) * case.get("target_scale", 1.0)
        data = TensorDataset(x, y)
        loss_fn, classes = nn.MSELoss(), dim
    else:
        data = classification_data(n, 4, 3, seed)
        loss_fn, classes = nn.CrossEntropyLoss(), 3
    if case.get("float64"):  # a run in double precision: the batches must keep their dtype
        data = TensorDataset(*(t.double() if t.is_floating_point() else t for t in data.tensors))
    loader = DataLoader(
        data,
        batch_size=case["batch"],
        shuffle=case.get("shuffle", False),
        drop_last=case.get("drop_last", False),
        generator=torch.Generator().manual_seed(seed),
    )
    model = build_mlp(4, classes, 0.3, seed, case["device"])
    if case.get("float64"):
        model.double()
    if case.get("stale_grads"):  # the caller's .grad, left from earlier work: zero it first
        g = torch.Generator().manual_seed(seed + 500)
        for p in model.parameters():
            p.grad = torch.randn(p.shape, generator=g, dtype=p.dtype).to(p.device)
    if case["start_in_eval"]:
        model.eval()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    factors = case["lr_factors"]
    scheduler = factor_scheduler(optimizer, factors) if factors is not None else None
    return model, loader, loss_fn, optimizer, scheduler


def loss_settings(loss_fn: nn.Module) -> dict:
    """A loss module's plain settings (reduction, label_smoothing, ...) and those of the
    modules inside it, as text: what an answer that sets loss_fn.reduction leaves changed."""
    return {
        f"{name}.{key}" if name else key: repr(value)
        for name, module in loss_fn.named_modules()
        for key, value in vars(module).items()
        if not key.startswith("_") and key not in ("training", "tokens")
    }


def _grad_norm(model: nn.Module) -> float:
    """The norm of every parameter's .grad together (missing ones count as zero)."""
    total = 0.0
    for p in model.parameters():
        if p.grad is not None:
            total += float(p.grad.detach().double().pow(2).sum())
    return total**0.5


class _GraphToken:
    """Rides on a loss's graph (in its grad_fn's metadata): alive exactly as long as the graph."""


class TrackedLoss(nn.Module):
    """A loss that marks the graph of every loss it returns, so a probe can count how many
    batches' graphs are still alive (a loop that keeps each batch's loss tensor keeps them all).
    """

    def __init__(self, loss_fn: nn.Module):
        super().__init__()
        self.loss_fn = loss_fn
        self.tokens: list[weakref.ref] = []

    def forward(self, *args, **kwargs):
        loss = self.loss_fn(*args, **kwargs)
        if isinstance(loss, torch.Tensor) and loss.grad_fn is not None:
            token = _GraphToken()
            loss.grad_fn.metadata["probe_graph"] = token
            self.tokens.append(weakref.ref(token))
        return loss

    def earlier_graphs_alive(self) -> int:
        """How many graphs of losses before the latest one are still alive."""
        return sum(ref() is not None for ref in self.tokens[:-1])


def probe_train_one_epoch(train_one_epoch, case: dict) -> dict:
    """The returned value, the model's mode, the learning rate and the weights afterwards, and
    what happened in order: forward calls, and per optimizer step the learning rate it used,
    the gradient norm it saw and how many earlier batches' graphs were still alive, scheduler
    steps, the global random state at the end."""
    model, loader, loss_fn, optimizer, scheduler = build_train_run(case)
    loss_fn = TrackedLoss(loss_fn)
    events = {
        "forwards": 0,
        "eval_forwards": 0,
        "steps": [],
        "scheduler_steps": 0,
        "graphs_alive": [],
    }

    def count_forward(module, args):
        events["forwards"] += 1
        events["eval_forwards"] += not all(m.training for m in module.modules())

    def record_step(opt, args, kwargs):
        events["steps"].append([float(opt.param_groups[0]["lr"]), _grad_norm(model)])
        events["graphs_alive"].append(loss_fn.earlier_graphs_alive())

    model.register_forward_pre_hook(count_forward)
    optimizer.register_step_pre_hook(record_step)
    if scheduler is not None:
        real_step = scheduler.step

        def counted_step(*args, **kwargs):
            events["scheduler_steps"] += 1
            return real_step(*args, **kwargs)

        scheduler.step = counted_step
    torch.manual_seed(case["seed"] + 1000)  # the dropout masks the grader's run uses too
    settings = loss_settings(loss_fn)
    with warnings.catch_warnings():  # e.g. "lr_scheduler.step() before optimizer.step()"
        warnings.simplefilter("ignore")
        result = train_one_epoch(model, loader, loss_fn, optimizer, case["device"], scheduler)
    return {
        "result": as_data(result),
        "loss_fn_changed": sorted(
            k for k, v in loss_settings(loss_fn).items() if settings.get(k) != v
        ),
        # what the caller's next lines meet: autograd on, the default dtype as it was
        "grad_enabled_after": torch.is_grad_enabled(),
        "default_dtype_after": str(torch.get_default_dtype()),
        "training": model.training,
        "lr": as_data(optimizer.param_groups[0]["lr"]),
        "state": model_state(model),
        "rng": torch.get_rng_state(),
        **events,
    }


# ---------------------------------------------------------------------------------------
# Exercise 3: evaluate
# ---------------------------------------------------------------------------------------


class RecordingModel(nn.Module):
    """A model that remembers, for every forward call, whether autograd and training were on."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net
        self.calls: list[tuple[bool, bool]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # train mode anywhere inside counts: `model.training = False` sets the top flag only
        self.calls.append((torch.is_grad_enabled(), any(m.training for m in self.modules())))
        return self.net(x)


def build_eval_run(case: dict):
    """(model, loader, loss_fn) for one evaluate case; the model is in the mode the case asks
    for, and the loader has its own generator (iterating it draws nothing from the global one).
    """
    data = classification_data(case["n"], 4, 3, case["seed"])
    loader = DataLoader(
        data, batch_size=case["batch"], generator=torch.Generator().manual_seed(case["seed"])
    )
    model = RecordingModel(build_mlp(4, 3, 0.5, case["seed"], case["device"]))
    model.train(case["start_training"])
    loss_fn = nn.CrossEntropyLoss(label_smoothing=case.get("label_smoothing", 0.0))
    return model, loader, loss_fn


def probe_evaluate(evaluate, case: dict) -> dict:
    """How each forward call ran (autograd on? train mode?), and afterwards whether autograd
    is still on and whether the global random state moved. (The result, the model's modes,
    weights and gradients afterwards are the contract's: autograder/hidden/training.py.)"""
    model, loader, loss_fn = build_eval_run(case)
    if case.get("once"):
        loader = ReadOnceLoader(loader)
    torch.manual_seed(case["seed"] + 2000)
    rng_before = torch.get_rng_state()
    grad_before = torch.is_grad_enabled()
    settings = loss_settings(loss_fn)
    try:
        # a caller may evaluate with gradients already off: they must stay off afterwards
        torch.set_grad_enabled(not case.get("grad_off", False))
        evaluate(model, loader, loss_fn, case["device"])
        grad_after = torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(grad_before)  # the next probe starts as this one did
    return {
        "loss_fn_changed": sorted(
            k for k, v in loss_settings(loss_fn).items() if settings.get(k) != v
        ),
        "calls": [list(c) for c in model.calls],
        "grad_enabled_after": grad_after,
        "rng_changed": not torch.equal(rng_before, torch.get_rng_state()),
    }


class ReadOnceLoader:
    """A stream of batches that can be read once (a generator, a loader over a stream):
    iterating it a second time raises. It has no len() and no .dataset."""

    def __init__(self, loader):
        self.loader, self.read = loader, False

    def __iter__(self):
        if self.read:
            raise RuntimeError(
                "this loader is a stream of batches that can be read only once, and it was "
                "iterated a second time: count the samples in the loop that evaluates them"
            )
        self.read = True
        return iter(self.loader)


# ---------------------------------------------------------------------------------------
# Exercise 4: make_warmup_cosine
# ---------------------------------------------------------------------------------------


def build_lr_groups(spec: dict) -> torch.optim.SGD:
    """An SGD with one parameter group per rate in ``spec["lrs"]`` (each over its own tensor),
    for a scheduler to drive (the contract of make_warmup_cosine)."""
    params = [torch.zeros(2, requires_grad=True) for _ in spec["lrs"]]
    return torch.optim.SGD(
        [{"params": [p], "lr": lr} for p, lr in zip(params, spec["lrs"], strict=True)]
    )


# ---------------------------------------------------------------------------------------
# Exercise 5: EarlyStopping
# ---------------------------------------------------------------------------------------


def build_stop_model(seed: int, device) -> nn.Module:
    """A small model with buffers next to its parameters (batch norm's running statistics)."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2)).to(device)


def build_contract_stop_model(spec: dict) -> nn.Module:
    """build_stop_model's network, seeded without touching the global random state, in the
    spec's mode (the contract of EarlyStopping)."""
    with torch.random.fork_rng(devices=[]):
        model = build_stop_model(spec["seed"], "cpu")
    return model.train(spec["training"])


def _type_or_repr(value):
    return (
        value if type(value) is bool else {"repr": repr(value)[:80], "type": type(value).__name__}
    )


def probe_EarlyStopping(EarlyStopping, case: dict) -> dict:
    """Feed the losses (adding 1 to every weight and buffer before each, as a training step
    would), then restore_best: each step's return value and best_loss, and the state at the
    end. ``min_delta`` None means it is left to its default. It runs in a scratch working
    folder (put back afterwards): the files the stopper wrote there are seen too."""
    scratch = tempfile.mkdtemp(prefix="stop-probe-")
    here = os.getcwd()
    os.chdir(scratch)
    try:
        seen = _probe_stopping(EarlyStopping, case)
    finally:
        os.chdir(here)
        files = sorted(os.listdir(scratch))
        shutil.rmtree(scratch, ignore_errors=True)
    seen["new_files"] = files
    return seen


def _probe_stopping(EarlyStopping, case: dict) -> dict:
    model = build_stop_model(case["seed"], case["device"])
    if case.get("double"):  # a float64 model: its copy must keep the digits float32 drops
        model.double()
    if case["min_delta"] is None:
        stopper = EarlyStopping(patience=case["patience"])
    else:
        stopper = EarlyStopping(patience=case["patience"], min_delta=case["min_delta"])
    seen = {"steps": [], "step_raised": None, "restore_raised": None, "restored": None}
    seen["initial_best"] = as_data(stopper.best_loss)
    for p in model.parameters():  # the caller's gradients, which a stopper only leaves alone
        p.grad = torch.full_like(p, 0.5)
    modes_before = [m.training for m in model.modules()]
    for loss in case["losses"]:
        with torch.no_grad():  # a "training step" that changes weights and buffers in place
            for value in model.state_dict().values():
                value.add_(1)
        try:
            got = stopper.step(loss, model)
        except Exception as err:  # reported after the steps before it
            seen["step_raised"] = _raised(err)
            return seen
        seen["steps"].append(
            {"returned": _type_or_repr(got), "best_loss": as_data(stopper.best_loss)}
        )
    params_before = [id(p) for p in model.parameters()]
    try:
        stopper.restore_best(model)
    except Exception as err:  # reported after the steps
        seen["restore_raised"] = _raised(err)
        return seen
    seen["restored"] = model_state(model)
    # the caller's optimizer holds these very tensors: restoring copies into them
    seen["same_parameters"] = [id(p) for p in model.parameters()] == params_before
    seen["grads_kept"] = all(
        p.grad is not None and bool((p.grad == 0.5).all()) for p in model.parameters()
    )
    seen["modes_kept"] = [m.training for m in model.modules()] == modes_before
    seen["best_after_restore"] = as_data(stopper.best_loss)
    # training goes on after a restore (a new learning rate, say), then restores again: the
    # stored best weights are still the best epoch's
    with torch.no_grad():
        for value in model.state_dict().values():
            value.add_(1)
    try:
        stopper.restore_best(model)
    except Exception as err:
        seen["restore_again_raised"] = _raised(err)
        return seen
    seen["restored_again"] = model_state(model)
    return seen


# ---------------------------------------------------------------------------------------
# Exercises 6 and 7: save_checkpoint and load_checkpoint
# ---------------------------------------------------------------------------------------


def build_resume_objects(device, init_seed: int, lr_factors: list[float]):
    """(model, optimizer, scheduler) of the small resumable training run; the model has a
    batch norm, so its state_dict holds buffers as well as parameters."""
    torch.manual_seed(init_seed)
    model = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3)).to(
        device
    )
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.03, weight_decay=0.01)
    return model, optimizer, factor_scheduler(optimizer, lr_factors)


_SCRATCH: list[tempfile.TemporaryDirectory] = []


def build_checkpoint_path(spec: dict) -> str:
    """A path where no file is yet, named ``spec["name"]``, in a folder of its own inside a
    scratch folder that goes away with the process (the contract of save_checkpoint)."""
    if not _SCRATCH:
        _SCRATCH.append(tempfile.TemporaryDirectory(prefix="ckpt-contract-"))
    return os.path.join(tempfile.mkdtemp(dir=_SCRATCH[0].name), spec["name"])


def build_contract_checkpoint(spec: dict) -> str:
    """A checkpoint file as save_checkpoint writes it, of the contract's model, SGD and
    LambdaLR after ``spec["steps"]`` seeded training steps (so it holds momentum buffers
    and a moved schedule), with ``spec["epoch"]``; returns its path. The global random state
    is left as it was (the contract of load_checkpoint)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec["seed"])
        model = build_contract_model(
            {"seed": spec["seed"] + 1000, "classes": 3, "dropout": 0.0, "training": True}
        )
        optimizer = build_contract_optimizer({"lr": 0.1, "momentum": 0.9}, model)
        scheduler = build_contract_scheduler({"factors": [1.0, 0.5, 0.25]}, optimizer)
        for _ in range(spec["steps"]):
            x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
    path = build_checkpoint_path({"name": "checkpoint.pt"})
    bundle = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "epoch": spec["epoch"],
    }
    torch.save(bundle, path)
    return path


def probe_save_checkpoint(save_checkpoint, case: dict) -> dict:
    """Objects in the states the case gives are saved into a fresh folder; returns whether
    the file exists and what torch.load(weights_only=True) reads. (What the call returned
    and whether it changed the caller's objects are the contract's.)"""
    model, optimizer, scheduler = build_resume_objects(
        case["device"], case["init_seed"], case["lr_factors"]
    )
    model.load_state_dict(case["states"]["model"])
    optimizer.load_state_dict(case["states"]["optimizer"])
    scheduler.load_state_dict(case["states"]["scheduler"])
    model.train()
    folder = tempfile.mkdtemp(prefix="ckpt-probe-")
    try:
        path = os.path.join(folder, case["filename"])
        save_checkpoint(path, model, optimizer, scheduler, case["epoch"])
        seen = {"exists": os.path.isfile(path), "files": sorted(os.listdir(folder))}
        seen["checkpoint"], seen["load_error"] = None, None
        if seen["exists"]:
            try:
                seen["checkpoint"] = as_data(
                    torch.load(path, map_location="cpu", weights_only=True)
                )
            except Exception as err:  # pickled objects are refused by weights_only
                seen["load_error"] = type(err).__name__
        return seen
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _digits_on_stand_ins(model: nn.Module, x: torch.Tensor) -> str | None:
    """A copy of ``model`` and ``x`` as stand-ins for a GPU's (devices.py), in eval mode
    without gradients: PyTorch's words where forward mixed devices, else None."""
    on_gpu = devices.stand_in_module(copy.deepcopy(model)).eval()
    try:
        with torch.no_grad(), devices.Placed(), torch.random.fork_rng(devices=[]):
            on_gpu(devices.stand_in(x.clone()))
    except Exception as err:  # the answer's own code: only a mix counts
        if devices.MIXED in str(err):
            return devices.MIXED
    return None


def probe_save_checkpoint_device(save_checkpoint, case: dict) -> dict:
    """Save a model whose tensors stand for ones on a GPU (devices.stand_in_module): whether
    they all still do afterwards. A save that moves the model to the CPU (model.cpu(),
    model.to("cpu")) moves the caller's model (a stand-in refuses the move, as a mix of
    devices: False too); ``None`` where the answer raised anything else."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(case["seed"])
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 3))
    devices.stand_in_module(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = factor_scheduler(optimizer, [1.0, 0.5])
    folder = tempfile.mkdtemp(prefix="ckpt-probe-")
    try:
        try:
            save_checkpoint(os.path.join(folder, "checkpoint.pt"), model, optimizer, scheduler, 1)
        except Exception as err:  # the answer's own code, as data
            mixed = any(words in str(err) for words in devices.DEVICE_MIX)
            return {"stayed": False if mixed else None, "error": str(err).splitlines()[0][:200]}
        return {"stayed": all(isinstance(t, devices.StandIn) for t in model.state_dict().values())}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def save_as_if_on_absent_gpu(obj, path: str) -> None:
    """torch.save(obj, path), its tensors' storages tagged as on a CUDA device this machine
    does not have (cuda:0 without CUDA, one index past the last GPU with it): the file a GPU
    run leaves for a machine without that GPU. torch.load reads it only with a map_location."""
    absent = f"cuda:{torch.cuda.device_count() if torch.cuda.is_available() else 0}"

    def tagger(storage):  # every storage, wherever it is now
        return absent

    entry = (-1000, tagger, lambda storage, location: None)
    registry = torch.serialization._package_registry
    registry.insert(0, entry)
    try:
        torch.save(obj, path)
    finally:
        registry.remove(entry)


def probe_load_checkpoint(load_checkpoint, case: dict) -> dict:
    """``case["checkpoint"]`` is written to a file and loaded into fresh objects; returns the
    returned value, the model, optimizer and scheduler states afterwards, and whether the
    optimizer still updates the model's own parameters. With ``case["absent_gpu"]`` the file
    says its tensors were on a GPU this machine lacks (only map_location reads it)."""
    folder = tempfile.mkdtemp(prefix="ckpt-probe-")
    try:
        path = os.path.join(folder, "checkpoint.pt")
        if case.get("absent_gpu"):
            save_as_if_on_absent_gpu(case["checkpoint"], path)
        else:
            torch.save(case["checkpoint"], path)
        model, optimizer, scheduler = build_resume_objects(
            case["device"], case["init_seed"], case["lr_factors"]
        )
        returned = load_checkpoint(path, model, optimizer, scheduler, case["device"])
        own = {id(p) for p in model.parameters()}
        tracked = [id(p) for group in optimizer.param_groups for p in group["params"]]
        return {
            "file_kept": os.path.isfile(path),
            "returned": as_data(returned),
            "model": model_state(model),
            "optimizer": as_data(optimizer.state_dict()),
            "scheduler": as_data(scheduler.state_dict()),
            "optimizer_tracks_model": len(tracked) == len(own) and set(tracked) == own,
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def probe_load_checkpoint_mismatch(load_checkpoint, case: dict) -> dict:
    """Load a checkpoint whose model entry does not fit the model: what was raised, if anything."""
    folder = tempfile.mkdtemp(prefix="ckpt-probe-")
    try:
        path = os.path.join(folder, "checkpoint.pt")
        torch.save(case["checkpoint"], path)
        model, optimizer, scheduler = build_resume_objects(
            case["device"], case["init_seed"], case["lr_factors"]
        )
        try:
            load_checkpoint(path, model, optimizer, scheduler, case["device"])
        except Exception as err:  # raising is what strict loading does here
            return {"raised": type(err).__name__}
        return {"raised": None}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def probe_load_checkpoint_pickled(load_checkpoint, case: dict) -> dict:
    """Load a checkpoint that also holds a pickled object (under an extra key): what was
    raised, if anything (weights_only=True refuses such a file)."""
    folder = tempfile.mkdtemp(prefix="ckpt-probe-")
    try:
        path = os.path.join(folder, "checkpoint.pt")
        # a plain Python object (from the standard library): weights_only=True refuses it
        torch.save({**case["checkpoint"], "note": fractions.Fraction(1, 3)}, path)
        model, optimizer, scheduler = build_resume_objects(
            case["device"], case["init_seed"], case["lr_factors"]
        )
        try:
            load_checkpoint(path, model, optimizer, scheduler, case["device"])
        except Exception as err:  # weights_only refusing the object is what is asked
            return {"raised": type(err).__name__}
        return {"raised": None}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# Exercise 8: DigitsCNN
# ---------------------------------------------------------------------------------------


def digits_loaders(recipe: dict) -> tuple[DataLoader, DataLoader]:
    """The course's train and validation loaders of the bundled digits (seeded shuffling)."""
    x, y = load_digits()
    train_idx, val_idx = train_val_split(len(x), recipe["val_fraction"], seed=recipe["seed"])
    generator = torch.Generator().manual_seed(recipe["seed"])
    train_loader = DataLoader(
        TensorDataset(x[train_idx], y[train_idx]),
        batch_size=recipe["batch_size"],
        shuffle=True,
        generator=generator,
    )
    val_loader = DataLoader(TensorDataset(x[val_idx], y[val_idx]), batch_size=256)
    return train_loader, val_loader


def _in_layout(x: torch.Tensor, layout: str) -> torch.Tensor:
    """``x`` (N, C, H, W), same values, handed over in another memory layout."""
    if layout == "transposed":  # non-contiguous: H and W swapped in memory
        return x.transpose(2, 3).contiguous().transpose(2, 3)
    if layout == "channels_last":  # stored (N, H, W, C), seen as (N, C, H, W)
        # clone with an explicit format: .contiguous() would keep the strides when C is 1
        return (
            x.permute(0, 2, 3, 1).clone(memory_format=torch.contiguous_format).permute(0, 3, 1, 2)
        )
    return x


def build_digits_batch(spec: dict) -> torch.Tensor:
    """A seeded batch (n, 1, 8, 8) of pixels in [0, 1] in ``spec["dtype"]``, for the contract
    of DigitsCNN. It seeds the global random state too: the model the probe builds right
    after it starts from the same weights on every run."""
    torch.manual_seed(spec["seed"])
    g = torch.Generator().manual_seed(spec["seed"])
    x = torch.rand(spec["n"], 1, 8, 8, generator=g)
    return x.to(getattr(torch, spec["dtype"]))


def probe_DigitsCNN(DigitsCNN, case: dict) -> dict:
    """Type, parameter count, forward FLOPs for one image (as FlopCounterMode counts them),
    whether there is a 4-d (convolution) weight and whether it gets a gradient (the
    convolution is used), and the eval-mode outputs on each batch in ``case["inputs"]`` (or
    what the forward pass raised). Each batch is handed over in the memory layout that
    ``case["layouts"]`` names for it ("contiguous", "transposed" or "channels_last"),
    holding the same values."""
    torch.manual_seed(case["seed"])
    model = DigitsCNN()
    seen = {"is_module": isinstance(model, nn.Module), "type": type(model).__name__}
    if not seen["is_module"]:
        return seen
    model = model.to(case["device"])
    seen["outputs"] = []
    model.eval()
    layouts = case.get("layouts", ["contiguous"] * len(case["inputs"]))
    for x, layout in zip(case["inputs"], layouts, strict=True):
        x = _in_layout(x, layout)
        try:
            with torch.no_grad():
                out = model(x)
        except Exception as err:  # usually a Linear layer with the wrong in_features
            seen["outputs"].append({"raised": _raised(err)})
            break
        seen["outputs"].append({"out": as_data(out)})
    seen["loud"] = None  # the logits of very bright images: large, unless something caps them
    if len(seen["outputs"]) == len(case["inputs"]):
        try:
            with torch.no_grad():
                seen["loud"] = as_data(model(case["inputs"][0] * 1000))
                # eval mode draws nothing: the same batch again gives the same logits
                seen["same_again"] = bool(
                    torch.equal(model(case["inputs"][0]), seen["outputs"][0]["out"])
                )
                # each image's logits are its own: the first image alone, as in its batch
                seen["first_alone"] = as_data(model(case["inputs"][0][:1]))
        except Exception:  # the outputs above already tell what is wrong
            pass
    # counted after a forward pass, which gives lazy modules (nn.LazyLinear) their shapes
    try:
        seen["n_params"] = sum(p.numel() for p in model.parameters())
    except ValueError:  # a lazy module that never ran: no count to give
        seen["n_params"] = None
    seen["has_conv"] = any(v.ndim == 4 for v in model.state_dict().values())
    seen["flops"] = None
    if len(seen["outputs"]) == len(case["inputs"]):
        try:
            with torch.no_grad(), FlopCounterMode(display=False) as counter:
                model(case["inputs"][0][:1])  # one image
            seen["flops"] = int(counter.get_total_flops())
        except Exception:  # the outputs above already tell what is wrong
            pass
    seen["device_mix"] = None  # a tensor made in forward without device= (on a GPU: fails)
    if len(seen["outputs"]) == len(case["inputs"]):
        on_meta = copy.deepcopy(model).to("meta").eval()
        with torch.no_grad():  # only mixed devices count: meta cannot run everything
            ran = devices.on_meta(lambda: on_meta(torch.empty(2, 1, 8, 8, device="meta")))
        seen["device_mix"] = ran.get("device_mix")
        if "copy out of meta" in ran.get("inconclusive", ""):
            # forward reads values back or moves a tensor to the CPU (.cpu(), .tolist()):
            # once more on stand-ins, which keep their values, to see whether the result mixes
            seen["device_mix"] = _digits_on_stand_ins(model, case["inputs"][0][:2])
    seen["conv_used"] = None
    if len(seen["outputs"]) == len(case["inputs"]) and seen["has_conv"]:
        model.train()
        model.zero_grad()
        try:
            model(case["inputs"][-1]).float().pow(2).sum().backward()
        except Exception:  # the outputs above already tell what is wrong
            return seen
        seen["conv_used"] = any(
            p.ndim == 4 and p.grad is not None and bool(p.grad.abs().sum() > 0)
            for p in model.parameters()
        )
    return seen


def probe_DigitsCNN_training(DigitsCNN, case: dict) -> dict:
    """Train a fresh DigitsCNN with the recipe in the case; its outputs on the validation set."""
    recipe, device = case["recipe"], case["device"]
    torch.manual_seed(recipe["seed"])
    model = DigitsCNN().to(device)
    train_loader, val_loader = digits_loaders(recipe)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=recipe["lr"], weight_decay=recipe["weight_decay"]
    )
    scheduler = factor_scheduler(optimizer, case["lr_factors"])
    loss_fn = nn.CrossEntropyLoss()
    for _ in range(recipe["num_epochs"]):
        model.train()
        for x, y in train_loader:
            loss = loss_fn(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
    model.eval()
    with torch.no_grad():
        outputs = torch.cat([model(x.to(device)).float().cpu() for x, _ in val_loader])
    return {"predictions": outputs.argmax(dim=1), "outputs": outputs}


# ---------------------------------------------------------------------------------------
# Exercise 9: train_logged
# ---------------------------------------------------------------------------------------

LOGGED_TAGS = ("train/loss", "train/lr", "train/grad_norm")


def build_logged_run(case: dict):
    """(model, loader, loss_fn, optimizer, scheduler) for one train_logged case.

    As in build_train_run, the loader shuffles with its own generator, so the global random
    state moves only by what dropout draws."""
    seed = case["seed"]
    loader = DataLoader(
        classification_data(case["n"], 4, 3, seed),
        batch_size=case["batch"],
        shuffle=case["shuffle"],
        generator=torch.Generator().manual_seed(seed),
    )
    model = build_mlp(4, 3, 0.2, seed, case["device"])
    if case["start_in_eval"]:
        model.eval()
    optimizer = torch.optim.SGD(model.parameters(), lr=case["lr"], momentum=0.9)
    scheduler = factor_scheduler(optimizer, case["lr_factors"])
    return model, loader, nn.CrossEntropyLoss(), optimizer, scheduler


def _as_step(step):
    """A global_step as an int when it is one (ints, 0-d tensors, NumPy ints), else None."""
    if isinstance(step, bool) or step is None:
        return None
    try:
        as_int = int(step)
    except (TypeError, ValueError, RuntimeError):
        return None
    return as_int if as_int == step else None


class RecordingWriter(dict):
    """A stand-in for a SummaryWriter that keeps what it is given, as data: for each of
    LOGGED_TAGS the [global_step, value] of every add_scalar call (other tags are the
    learner's own business), and how many of those came before the last flush() or close()
    (the contract of train_logged compares it with the reference's)."""

    def __init__(self):
        super().__init__(scalars={tag: [] for tag in LOGGED_TAGS}, flushed=0)

    def add_scalar(self, tag, scalar_value, global_step=None, *args, **kwargs):
        if str(tag) in self["scalars"]:
            self["scalars"][str(tag)].append([_as_step(global_step), float(scalar_value)])

    def flush(self):
        self["flushed"] = sum(len(calls) for calls in self["scalars"].values())

    def close(self):
        self.flush()


def build_recording_writer(spec: dict) -> RecordingWriter:
    return RecordingWriter()


def _recording_writer(log_dir: str):
    """A real SummaryWriter on log_dir that also notes every add_scalar call (tag and step)
    and how many of them came before the last flush() or close()."""
    from torch.utils.tensorboard import SummaryWriter  # here: only this probe needs it

    class RecordingWriter(SummaryWriter):
        def __init__(self, log_dir):
            self.calls, self.flushed_upto, self.closes = [], 0, 0
            # a long flush interval: on disk early only if flush() or close() put it there
            super().__init__(log_dir, max_queue=10_000, flush_secs=3600)

        def add_scalar(self, tag, scalar_value, global_step=None, *args, **kwargs):
            self.calls.append([str(tag), _as_step(global_step)])
            return super().add_scalar(tag, scalar_value, global_step, *args, **kwargs)

        def flush(self):
            self.flushed_upto = len(self.calls)
            return super().flush()

        def close(self):
            self.flushed_upto = len(self.calls)
            self.closes += 1
            return super().close()

    return RecordingWriter(log_dir)


def read_scalars(log_dir: str) -> dict:
    """Every scalar in log_dir's event files, read back as TensorBoard reads them:
    {tag: [[step, value], ...]} in the order they were written."""
    import logging

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    tb_logger = logging.getLogger("tensorboard")
    was_disabled, tb_logger.disabled = tb_logger.disabled, True  # no warnings on stderr
    try:
        events = EventAccumulator(log_dir, size_guidance={"scalars": 0})  # 0: keep them all
        events.Reload()
        return {
            tag: [[int(e.step), float(e.value)] for e in events.Scalars(tag)]
            for tag in events.Tags()["scalars"]
        }
    finally:
        tb_logger.disabled = was_disabled


def probe_train_logged(train_logged, case: dict) -> dict:
    """What train_logged did with a writer of the probe's own: the returned value, every
    add_scalar call and whether it was flushed, the scalars read back from the event files,
    and per optimizer step the learning rate and gradient norm it used; then the model's
    mode and weights, the scheduler's count and the global random state."""
    model, loader, loss_fn, optimizer, scheduler = build_logged_run(case)
    events = {"forwards": 0, "eval_forwards": 0, "steps": []}

    def count_forward(module, args):
        events["forwards"] += 1
        events["eval_forwards"] += not all(m.training for m in module.modules())

    def record_step(opt, args, kwargs):  # the gradients as the step sees them: clipped
        events["steps"].append([float(opt.param_groups[0]["lr"]), _grad_norm(model)])

    model.register_forward_pre_hook(count_forward)
    optimizer.register_step_pre_hook(record_step)
    log_dir = tempfile.mkdtemp(prefix="train_logged_")
    try:
        writer = _recording_writer(log_dir)
        torch.manual_seed(case["seed"] + 1000)  # the dropout masks the grader's run uses too
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = train_logged(
                model,
                loader,
                loss_fn,
                optimizer,
                scheduler,
                writer,
                case["device"],
                case["num_epochs"],
                case["max_norm"],
            )
        seen = {
            "result": as_data(result),
            "training": model.training,
            "state": model_state(model),
            "lr": as_data(optimizer.param_groups[0]["lr"]),
            "scheduler_steps": int(scheduler.last_epoch),
            "rng": torch.get_rng_state(),
            "calls": writer.calls,
            "unflushed": len(writer.calls) - writer.flushed_upto,
            "closes": writer.closes,  # the caller closes the writer, not train_logged
            **events,
        }
        writer.close()  # what the caller does at the end of the run
        seen["scalars"] = read_scalars(log_dir)
        seen["event_files"] = sum(
            name.startswith("events.out.tfevents") for name in os.listdir(log_dir)
        )
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)
    return seen
