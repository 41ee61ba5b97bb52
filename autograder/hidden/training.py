"""Hidden checks for 05_training.

Every check runs the learner's function next to a small reference implementation on
identical copies of a seeded model and loader, and compares plain results: returned
numbers, learning rates, parameters and losses.
"""

from __future__ import annotations

import copy
import math
import os
import tempfile
import time

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader, TensorDataset

from tutorial_lib.checks import CheckError, check_shape, check_type
from tutorial_lib.data import load_digits, train_val_split
from tutorial_lib.device import get_device

# ---------------------------------------------------------------------------------------
# Reference implementations (what the solution notebook asks for)
# ---------------------------------------------------------------------------------------


def _ref_train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None) -> float:
    model.train()
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if scheduler is not None:
            scheduler.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count


def _ref_evaluate(model, loader, loss_fn, device) -> tuple[float, float]:
    was_training = model.training
    model.eval()
    total, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            total += loss_fn(logits, y).item() * len(x)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(x)
    model.train(was_training)
    return total / count, correct / count


def warmup_cosine_factor(step: int, warmup_steps: int, total_steps: int) -> float:
    """The multiplier of the base learning rate after ``step`` scheduler steps."""
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def _ref_scheduler(optimizer, warmup_steps: int, total_steps: int) -> LambdaLR:
    return LambdaLR(optimizer, lambda step: warmup_cosine_factor(step, warmup_steps, total_steps))


class _RefEarlyStopping:
    def __init__(self, patience: int, min_delta: float = 0.0):
        self.patience, self.min_delta = patience, min_delta
        self.best_loss, self.bad_epochs = math.inf, 0

    def step(self, val_loss: float) -> bool:
        if val_loss < self.best_loss - self.min_delta:
            self.best_loss, self.bad_epochs = val_loss, 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def _ref_save(path, model, optimizer, scheduler, epoch) -> None:
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "epoch": epoch,
        },
        path,
    )


def _ref_load(path, model, optimizer, scheduler, device) -> int:
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    return checkpoint["epoch"]


# ---------------------------------------------------------------------------------------
# Small shared helpers
# ---------------------------------------------------------------------------------------


def _classification_data(n: int, features: int, classes: int, seed: int) -> TensorDataset:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    y = torch.randint(0, classes, (n,), generator=g)
    return TensorDataset(x, y)


def _mlp(features: int, classes: int, dropout: float, seed: int, device) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(features, 16), nn.ReLU(), nn.Dropout(dropout), nn.Linear(16, classes)
    ).to(device)


def _as_float(value, what: str) -> float:
    check_type(value, float, what)
    return float(value)


def _close(a: float, b: float, tol: float = 1e-4) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


def _states_match(state_a: dict, state_b: dict, what: str, hint: str) -> None:
    for (name, a), b in zip(state_a.items(), state_b.values(), strict=True):
        if not torch.allclose(a.float(), b.float(), rtol=1e-4, atol=1e-5):
            raise CheckError(
                f"{what}: parameter {name!r} differs from what it should be "
                f"(max abs difference {float((a.float() - b.float()).abs().max()):.3g}). {hint}"
            )


# ---------------------------------------------------------------------------------------
# Exercise 1: make_loss_fn
# ---------------------------------------------------------------------------------------

_LOSS_HINTS = {
    "multiclass": "one class per sample: nn.CrossEntropyLoss(), which takes raw logits "
    "(it applies log-softmax itself; do not add a softmax).",
    "multilabel": "several independent yes/no labels per sample: nn.BCEWithLogitsLoss(), "
    "which takes raw logits and applies a numerically stable sigmoid itself.",
    "regression": "real-valued targets: nn.MSELoss().",
}


def _loss_cases(task: str, g: torch.Generator, device):
    for n, c in [(1, 2), (7, 3), (32, 10)]:
        logits = 4 * torch.randn(n, c, generator=g)
        if task == "multiclass":
            target = torch.randint(0, c, (n,), generator=g)
        elif task == "multilabel":
            target = (torch.rand(n, c, generator=g) < 0.4).float()
        else:
            target = torch.randn(n, c, generator=g)
        yield logits.to(device), target.to(device)
    if task == "multilabel":  # very confident logits: only a stable formulation gets these right
        logits = torch.tensor([[30.0, -30.0, 25.0], [-40.0, 40.0, 0.0]])
        target = torch.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
        yield logits.to(device), target.to(device)


def check_make_loss_fn(make_loss_fn) -> None:
    """Each task's loss against torch's own, on random and very confident logits."""
    device = get_device()
    g = torch.Generator().manual_seed(5)
    reference = {
        "multiclass": nn.CrossEntropyLoss(),
        "multilabel": nn.BCEWithLogitsLoss(),
        "regression": nn.MSELoss(),
    }
    for task, ref in reference.items():
        loss_fn = make_loss_fn(task)
        check_type(loss_fn, nn.Module, f"make_loss_fn({task!r})")
        for logits, target in _loss_cases(task, g, device):
            what = f"make_loss_fn({task!r}) on logits of shape {tuple(logits.shape)}"
            try:
                got = loss_fn(logits, target)
            except Exception as err:  # a wrong loss for the targets' type or range
                raise CheckError(
                    f"{what} raised {type(err).__name__}: {str(err).splitlines()[0]} "
                    f"The task needs {_LOSS_HINTS[task]}"
                ) from None
            check_type(got, torch.Tensor, what)
            expected = ref(logits, target)
            if got.shape != expected.shape:
                raise CheckError(
                    f"{what} returned shape {tuple(got.shape)}, expected a scalar: keep the "
                    "default reduction='mean'."
                )
            if not torch.allclose(got.float(), expected.float(), rtol=1e-4, atol=1e-4):
                raise CheckError(
                    f"{what} gave {float(got):.5g}, expected {float(expected):.5g}. "
                    f"The task needs {_LOSS_HINTS[task]}"
                )
    try:
        make_loss_fn("ranking")
    except ValueError:
        return
    except Exception as err:
        raise CheckError(
            f"make_loss_fn('ranking') raised {type(err).__name__}; an unknown task should "
            "raise ValueError."
        ) from None
    raise CheckError(
        "make_loss_fn('ranking') returned something; an unknown task should raise ValueError."
    )


# ---------------------------------------------------------------------------------------
# Exercise 2: train_one_epoch
# ---------------------------------------------------------------------------------------


def _train_case(train_one_epoch, device, seed, n, batch, use_scheduler, start_in_eval, task):
    if task == "regression":
        g = torch.Generator().manual_seed(seed)
        data = TensorDataset(torch.randn(n, 4, generator=g), torch.randn(n, 1, generator=g))
        loss_fn, classes = nn.MSELoss(), 1
    else:
        data = _classification_data(n, 4, 3, seed)
        loss_fn, classes = nn.CrossEntropyLoss(), 3
    loader = DataLoader(data, batch_size=batch, shuffle=False)
    runs = {}
    for who in ("student", "reference"):
        model = _mlp(4, classes, 0.3, seed, device)
        if start_in_eval:
            model.eval()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scheduler = _ref_scheduler(optimizer, 3, 2 * len(loader)) if use_scheduler else None
        torch.manual_seed(seed + 1000)  # identical dropout masks for both runs
        fn = train_one_epoch if who == "student" else _ref_train_one_epoch
        result = fn(model, loader, loss_fn, optimizer, device, scheduler)
        runs[who] = (model, optimizer, result)
    model, optimizer, got = runs["student"]
    ref_model, ref_optimizer, expected = runs["reference"]
    sizes = [len(xb) for xb, _ in loader]
    what = (
        f"train_one_epoch ({n} samples in batches of {batch}, {len(loader)} batches"
        f"{', with a scheduler' if use_scheduler else ''})"
    )
    got = _as_float(got, f"the value returned by {what}")
    if not model.training:
        raise CheckError(
            f"after {what} the model is in eval mode. Call model.train() at the start: "
            "a model that was just evaluated would otherwise train with dropout switched off."
        )
    lr, ref_lr = optimizer.param_groups[0]["lr"], ref_optimizer.param_groups[0]["lr"]
    if use_scheduler and not _close(lr, ref_lr, 1e-6):
        raise CheckError(
            f"after {what} the learning rate is {lr:.4g}, expected "
            f"{ref_lr:.4g}. This schedule counts optimizer steps: call scheduler.step() once "
            "per batch, right after optimizer.step(), not once per epoch."
        )
    _states_match(
        model.state_dict(),
        ref_model.state_dict(),
        what,
        "Each batch must do, in order: forward, loss, optimizer.zero_grad(), loss.backward(), "
        "optimizer.step(). Without zero_grad the gradients of earlier batches pile up. Did "
        "you call model.train() (dropout on) and move x and y to the device?",
    )
    if not _close(got, expected):
        hint = (
            f" The batches here have {sizes} samples: weight each batch's mean loss by its "
            "size (loss.item() * len(x)) and divide by the number of samples, so a small last "
            "batch does not count as much as a full one."
            if len(set(sizes)) > 1
            else " Return the mean loss per sample over the whole epoch."
        )
        raise CheckError(f"{what} returned {got:.6g}, expected {expected:.6g}.{hint}")


def check_train_one_epoch(train_one_epoch) -> None:
    """Returned mean loss, final parameters and learning rate against a reference epoch."""
    device = get_device()
    cases = [
        # seed, n, batch, scheduler, start in eval mode, task
        (0, 40, 8, False, False, "classification"),
        (1, 50, 16, False, False, "classification"),  # last batch of 2
        (2, 37, 10, False, True, "classification"),  # the model arrives in eval mode
        (3, 45, 7, True, False, "classification"),
        (4, 1, 4, False, False, "classification"),  # a single sample
        (5, 30, 8, False, False, "regression"),
    ]
    for case in cases:
        _train_case(train_one_epoch, device, *case)


# ---------------------------------------------------------------------------------------
# Exercise 3: evaluate
# ---------------------------------------------------------------------------------------


class _Probe(nn.Module):
    """A model that remembers, for every forward call, whether autograd and training were on."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net
        self.calls: list[tuple[bool, bool]] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls.append((torch.is_grad_enabled(), self.training))
        return self.net(x)


def check_evaluate(evaluate) -> None:
    """Eval mode and no gradients inside, the caller's mode afterwards, weighted mean loss."""
    device = get_device()
    loss_fn = nn.CrossEntropyLoss()
    for seed, n, batch in [(0, 40, 8), (1, 37, 8), (2, 1, 4), (3, 64, 64)]:
        loader = DataLoader(_classification_data(n, 4, 3, seed), batch_size=batch)
        sizes = [len(xb) for xb, _ in loader]
        what = f"evaluate ({n} samples in batches of {batch})"
        for start_training in (True, False):
            probe = _Probe(_mlp(4, 3, 0.5, seed, device))
            probe.train(start_training)
            before = copy.deepcopy(probe.state_dict())
            result = evaluate(probe, loader, loss_fn, device)
            check_type(result, tuple, what)
            if len(result) != 2:
                raise CheckError(
                    f"{what} should return (mean_loss, accuracy), got {len(result)} items."
                )
            loss = _as_float(result[0], f"the loss returned by {what}")
            acc = _as_float(result[1], f"the accuracy returned by {what}")
            if not probe.calls:
                raise CheckError(f"{what} never called the model.")
            if any(training for _, training in probe.calls):
                raise CheckError(
                    f"{what} ran the model in train mode: dropout was active and batch norm "
                    "would update its running statistics. Call model.eval() before the loop."
                )
            if any(grad for grad, _ in probe.calls):
                raise CheckError(
                    f"{what} ran the model with gradients enabled, which records a graph for "
                    "every batch and wastes memory. Wrap the loop in `with torch.no_grad():`."
                )
            if probe.training != start_training:
                mode = "train" if start_training else "eval"
                raise CheckError(
                    f"{what}: the model arrived in {mode} mode and left in "
                    f"{'train' if probe.training else 'eval'} mode. Remember "
                    "was_training = model.training first, and call model.train(was_training) at "
                    "the end."
                )
            if any(p.grad is not None for p in probe.parameters()):
                raise CheckError(
                    f"{what} left gradients in the parameters' .grad: no backward here."
                )
            _states_match(probe.state_dict(), before, what, "evaluate must not change the model.")
            probe.train(start_training)
            ref_loss, ref_acc = _ref_evaluate(probe, loader, loss_fn, device)
            if not _close(loss, ref_loss):
                raise CheckError(
                    f"the loss returned by {what} is {loss:.6g}, expected {ref_loss:.6g}. Give "
                    f"CrossEntropyLoss the raw logits (no softmax), and weight each batch's mean "
                    f"by its size (the batches have {sizes} samples)."
                )
            if not _close(acc, ref_acc, 1e-6):
                hint = (
                    " Return a fraction between 0 and 1, not a percentage."
                    if acc > 1
                    else f" Count the correct samples over all batches ({sizes}) and divide by "
                    "their number; averaging per-batch accuracies over-weights a small last batch."
                )
                raise CheckError(
                    f"the accuracy returned by {what} is {acc:.6g}, expected {ref_acc:.6g}: the "
                    f"fraction of samples whose largest logit (argmax over dim=1) is the label.{hint}"
                )


# ---------------------------------------------------------------------------------------
# Exercise 4: make_warmup_cosine
# ---------------------------------------------------------------------------------------


def check_make_warmup_cosine(make_warmup_cosine) -> None:
    """The learning rate after every step, for several warm-up lengths, against the formula."""
    device = get_device()
    for warmup, total, lrs in [
        (5, 20, (0.1,)),
        (0, 10, (0.5,)),
        (3, 3, (1.0,)),
        (4, 50, (0.01, 0.3)),
    ]:
        params = [torch.zeros(2, device=device, requires_grad=True) for _ in lrs]
        optimizer = torch.optim.SGD(
            [{"params": [p], "lr": lr} for p, lr in zip(params, lrs, strict=True)]
        )
        what = f"make_warmup_cosine(optimizer, warmup_steps={warmup}, total_steps={total})"
        try:
            scheduler = make_warmup_cosine(optimizer, warmup, total)
        except ZeroDivisionError:
            raise CheckError(
                f"{what} raised ZeroDivisionError: warmup_steps may be 0 (no warm-up). Divide by "
                "warmup_steps only inside `if step < warmup_steps:`, which is never true then."
            ) from None
        if not hasattr(scheduler, "step"):
            raise CheckError(
                f"{what} returned a {type(scheduler).__name__}; return a scheduler, "
                "for example torch.optim.lr_scheduler.LambdaLR(optimizer, factor)."
            )
        for step in range(total + 4):
            for group, base in zip(optimizer.param_groups, lrs, strict=True):
                expected = base * warmup_cosine_factor(step, warmup, total)
                got = group["lr"]
                if abs(got - expected) > 1e-7 + 1e-6 * base:
                    raise CheckError(
                        f"{what}: after {step} scheduler steps the learning rate is {got:.6g}, "
                        f"expected {expected:.6g} (base lr {base}). {_schedule_hint(step, warmup, total, got, base)}"
                    )
            optimizer.step()
            try:
                scheduler.step()
            except ZeroDivisionError:
                raise CheckError(
                    f"{what}: scheduler.step() raised ZeroDivisionError after {step} steps. Use "
                    "max(1, ...) for the cosine's length (total_steps - warmup_steps may be 0) and "
                    "divide by warmup_steps only while step < warmup_steps."
                ) from None


def _schedule_hint(step: int, warmup: int, total: int, got: float, base: float) -> str:
    if got < 0:
        return (
            "A learning rate must never be negative: the factor is 0.5 * (1 + cos(pi * progress))."
        )
    if got > base * (1 + 1e-6):
        return (
            "The learning rate went above the base rate. LambdaLR multiplies the base rate by "
            "your function's value: return a factor between 0 and 1, not a learning rate."
        )
    if step < warmup:
        return "During warm-up the factor is step / warmup_steps (0 at step 0, 1 at the end)."
    if step >= total:
        return "After total_steps the factor stays at 0: clamp progress to at most 1."
    return (
        "After warm-up, progress = (step - warmup_steps) / max(1, total_steps - warmup_steps) "
        "goes from 0 to 1: the cosine starts where the warm-up ended."
    )


# ---------------------------------------------------------------------------------------
# Exercise 5: EarlyStopping
# ---------------------------------------------------------------------------------------

_STOP_CASES = [
    # patience, min_delta, validation losses
    (2, 0.0, [1.0, 0.8, 0.85, 0.9, 0.7]),
    (3, 0.0, [1.0, 0.9, 0.95, 0.96, 0.8, 0.85, 0.86, 0.87, 0.5]),
    (1, 0.0, [0.5, 0.5, 0.4]),  # an equal loss is no improvement
    (2, 0.05, [1.0, 0.97, 0.94, 0.93, 0.92, 0.91]),  # gains under min_delta do not count
    (4, 0.0, [3.0, 2.0, 1.5, 1.2, 1.1, 1.05]),  # never stops
]


def _stop_case(EarlyStopping, patience, min_delta, losses, device, seed):
    torch.manual_seed(seed)
    model = nn.Linear(3, 2).to(device)
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    stopper = EarlyStopping(patience=patience, min_delta=min_delta)
    ref = _RefEarlyStopping(patience, min_delta)
    what = f"EarlyStopping(patience={patience}, min_delta={min_delta})"
    seen, best_epoch = [], None
    for epoch, loss in enumerate(losses):
        with torch.no_grad():  # an "optimizer step" that changes the weights in place
            for p in model.parameters():
                p.add_(1.0)
        seen.append(loss)
        expected = ref.step(loss)
        if ref.bad_epochs == 0:
            best_epoch = epoch
        got = stopper.step(loss, model)
        if not isinstance(got, bool):
            raise CheckError(f"{what}.step(...) should return True or False, got {got!r}.")
        if got != expected:
            raise CheckError(
                f"{what}: after the validation losses {seen}, step returned {got}, expected "
                f"{expected}. {_stop_hint(expected, min_delta, loss)}"
            )
        best = stopper.best_loss
        check_type(best, (float, int), f"{what}.best_loss")
        if not (best == ref.best_loss or _close(best, ref.best_loss, 1e-9)):
            raise CheckError(
                f"{what}: after the validation losses {seen}, best_loss is {best}, expected "
                f"{ref.best_loss}. {_stop_hint(expected, min_delta, loss)}"
            )
        if expected:
            break
    stopper.restore_best(model)
    for key, value in model.state_dict().items():
        wanted = start[key] + (best_epoch + 1)
        if not torch.allclose(value, wanted):
            raise CheckError(
                f"{what}: after restore_best the weights are not the ones from the best epoch "
                f"(epoch {best_epoch}, loss {losses[best_epoch]}). model.state_dict() returns "
                "the live tensors, which keep changing as training goes on: store a copy, "
                "{k: v.detach().clone() for k, v in model.state_dict().items()}."
            )


def _stop_hint(expected: bool, min_delta: float, loss: float) -> str:
    if isinstance(loss, float) and math.isnan(loss):
        return "A NaN loss is not an improvement: test `val_loss < best_loss - min_delta`."
    if min_delta > 0:
        return (
            f"With min_delta={min_delta}, only a loss below best_loss - min_delta is an "
            "improvement; smaller gains count as bad epochs."
        )
    if expected:
        return (
            "Count consecutive epochs without improvement and stop when that count "
            "reaches patience (>=)."
        )
    return (
        "An improvement means val_loss < best_loss - min_delta; it resets the count of bad "
        "epochs to zero. Stop only when the count reaches patience."
    )


def check_EarlyStopping(EarlyStopping) -> None:
    """Stop decisions, best loss and restored weights for several loss sequences."""
    device = get_device()
    for i, (patience, min_delta, losses) in enumerate(_STOP_CASES):
        _stop_case(EarlyStopping, patience, min_delta, losses, device, seed=i)
    g = torch.Generator().manual_seed(9)
    for i in range(5):  # random walks
        losses = [round(float(v), 4) for v in 1 + torch.randn(12, generator=g).cumsum(0) * 0.1]
        _stop_case(EarlyStopping, 1 + i % 3, 0.01 * (i % 2), losses, device, seed=10 + i)
    _stop_case(EarlyStopping, 2, 0.0, [1.0, 0.9, float("nan"), float("nan")], device, seed=20)


# ---------------------------------------------------------------------------------------
# Exercises 6 and 7: save_checkpoint and load_checkpoint
# ---------------------------------------------------------------------------------------


class _ResumeSetup:
    """A small training run whose shuffling depends only on the epoch number."""

    def __init__(self, device, seed: int, total_epochs: int = 4):
        self.device, self.seed, self.total_epochs = device, seed, total_epochs
        self.loss_fn = nn.CrossEntropyLoss()
        self.generator = torch.Generator()
        data = _classification_data(44, 5, 3, seed)
        self.loader = DataLoader(data, batch_size=8, shuffle=True, generator=self.generator)

    def fresh(self, init_seed: int):
        torch.manual_seed(init_seed)
        model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3)).to(self.device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=0.03, weight_decay=0.01)
        total_steps = self.total_epochs * len(self.loader)
        return model, optimizer, _ref_scheduler(optimizer, 3, total_steps)

    def run(self, model, optimizer, scheduler, start: int, stop: int) -> list[float]:
        losses = []
        for epoch in range(start, stop):
            self.generator.manual_seed(self.seed * 100 + epoch)  # same order after a resume
            losses.append(
                _ref_train_one_epoch(
                    model, self.loader, self.loss_fn, optimizer, self.device, scheduler
                )
            )
        return losses


def _resume_and_compare(save, load, setup: _ResumeSetup, split: int, what: str, hint: str) -> None:
    model, optimizer, scheduler = setup.fresh(setup.seed)
    expected = setup.run(model, optimizer, scheduler, 0, setup.total_epochs)
    model, optimizer, scheduler = setup.fresh(setup.seed)
    first = setup.run(model, optimizer, scheduler, 0, split)
    folder = tempfile.mkdtemp(prefix="ckpt-check-")
    path = os.path.join(folder, "checkpoint.pt")
    save(path, model, optimizer, scheduler, split)
    model, optimizer, scheduler = setup.fresh(setup.seed + 1)  # a new process: other weights
    start = load(path, model, optimizer, scheduler, setup.device)
    if start != split:
        raise CheckError(
            f"{what}: load_checkpoint returned {start!r}, expected {split}: the number of "
            "epochs already finished, which is where the loop continues (range(start, "
            "num_epochs))."
        )
    rest = setup.run(model, optimizer, scheduler, split, setup.total_epochs)
    got = first + rest
    if not all(_close(a, b, 1e-4) for a, b in zip(got, expected, strict=True)):
        shown = ", ".join(f"{v:.4f}" for v in got)
        want = ", ".join(f"{v:.4f}" for v in expected)
        raise CheckError(
            f"{what}: stopping after epoch {split} and resuming gave the epoch losses [{shown}], "
            f"an uninterrupted run gave [{want}]. {hint}"
        )


def check_save_checkpoint(save_checkpoint) -> None:
    """The file holds all four entries, loads with weights_only, and resumes exactly."""
    device = get_device()
    setup = _ResumeSetup(device, seed=3)
    model, optimizer, scheduler = setup.fresh(3)
    setup.run(model, optimizer, scheduler, 0, 1)
    path = os.path.join(tempfile.mkdtemp(prefix="ckpt-check-"), "nested-name.ckpt")
    try:
        result = save_checkpoint(path, model, optimizer, scheduler, 1)
    except (AttributeError, TypeError, RuntimeError) as err:  # e.g. pickling a LambdaLR's lambda
        raise CheckError(
            f"save_checkpoint raised {type(err).__name__}: {str(err).splitlines()[0]} Save "
            "state_dicts (plain dicts of tensors and numbers), not the model, optimizer or "
            "scheduler objects: objects drag their code along and often cannot be pickled."
        ) from None
    if result is not None:
        raise CheckError("save_checkpoint should write the file and return None.")
    if not os.path.exists(path):
        raise CheckError(
            f"save_checkpoint did not create a file at the path it was given ({path})."
        )
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # pickled objects are refused by weights_only
        raise CheckError(
            "torch.load(path, weights_only=True) could not read the checkpoint "
            f"({type(err).__name__}). Save state_dicts and plain numbers, never the model or "
            "optimizer objects themselves."
        ) from None
    check_type(checkpoint, dict, "the saved checkpoint")
    wanted = {"model", "optimizer", "scheduler", "epoch"}
    if set(checkpoint) != wanted:
        missing = sorted(wanted - set(checkpoint))
        hint = (
            " Without the optimizer's state (Adam's moment estimates, momentum buffers) the "
            "resumed run takes different steps."
            if "optimizer" in missing
            else ""
        )
        raise CheckError(
            f"the checkpoint has the keys {sorted(checkpoint)}, expected {sorted(wanted)}.{hint}"
        )
    if checkpoint["epoch"] != 1 or not isinstance(checkpoint["epoch"], int):
        raise CheckError(
            f"checkpoint['epoch'] is {checkpoint['epoch']!r}, expected the int 1 that was passed in."
        )
    for key, value in model.state_dict().items():
        saved = checkpoint["model"].get(key) if isinstance(checkpoint["model"], dict) else None
        if not isinstance(saved, torch.Tensor) or not torch.equal(saved, value.cpu()):
            raise CheckError(
                f"checkpoint['model'] should be model.state_dict(); {key!r} is missing or differs."
            )
    if not checkpoint["optimizer"].get("state"):
        raise CheckError("checkpoint['optimizer'] holds no state: save optimizer.state_dict().")
    if checkpoint["scheduler"].get("last_epoch") != scheduler.last_epoch:
        raise CheckError("checkpoint['scheduler'] should be scheduler.state_dict().")
    for seed, split in [(4, 2), (5, 1)]:
        _resume_and_compare(
            save_checkpoint,
            _ref_load,
            _ResumeSetup(device, seed),
            split,
            "save_checkpoint",
            "Save model, optimizer and scheduler state_dicts and the epoch.",
        )


def check_load_checkpoint(load_checkpoint) -> None:
    """A resumed run repeats an uninterrupted one, epoch loss for epoch loss."""
    device = get_device()
    for seed, split in [(6, 2), (7, 3), (8, 1)]:
        _resume_and_compare(
            _ref_save,
            load_checkpoint,
            _ResumeSetup(device, seed),
            split,
            "load_checkpoint",
            "Restore all three: model.load_state_dict(checkpoint['model']), the same for the "
            "optimizer (its moments and step counts) and the scheduler (where the schedule "
            "is), each from its own key, with strict loading.",
        )


# ---------------------------------------------------------------------------------------
# Exercise 8: DigitsCNN
# ---------------------------------------------------------------------------------------

DIGITS_RECIPE = {
    "seed": 0,
    "val_fraction": 0.2,
    "batch_size": 32,
    "num_epochs": 10,
    "lr": 5e-3,
    "weight_decay": 1e-4,
}
MAX_PARAMETERS = 100_000
MAX_SECONDS = 30.0
MIN_ACCURACY = 0.95


def train_digits(model: nn.Module, device, progress=None) -> tuple[list[float], list[float], float]:
    """The grader's recipe: returns per-epoch train and validation losses and the final accuracy."""
    r = DIGITS_RECIPE
    x, y = load_digits()
    train_idx, val_idx = train_val_split(len(x), r["val_fraction"], seed=r["seed"])
    generator = torch.Generator().manual_seed(r["seed"])
    train_loader = DataLoader(
        TensorDataset(x[train_idx], y[train_idx]),
        batch_size=r["batch_size"],
        shuffle=True,
        generator=generator,
    )
    val_loader = DataLoader(TensorDataset(x[val_idx], y[val_idx]), batch_size=256)
    optimizer = torch.optim.AdamW(model.parameters(), lr=r["lr"], weight_decay=r["weight_decay"])
    steps = r["num_epochs"] * len(train_loader)
    scheduler = _ref_scheduler(optimizer, len(train_loader), steps)
    loss_fn = nn.CrossEntropyLoss()
    train_losses, val_losses, acc = [], [], 0.0
    for _ in range(r["num_epochs"]):
        train_losses.append(
            _ref_train_one_epoch(model, train_loader, loss_fn, optimizer, device, scheduler)
        )
        val_loss, acc = _ref_evaluate(model, val_loader, loss_fn, device)
        val_losses.append(val_loss)
        if progress is not None:
            progress(val_loss, acc)
    return train_losses, val_losses, acc


def check_DigitsCNN(DigitsCNN) -> None:
    """Shapes, logits (not probabilities), a convolution, size, then the real training run."""
    device = get_device()
    torch.manual_seed(DIGITS_RECIPE["seed"])
    model = DigitsCNN().to(device)
    check_type(model, nn.Module, "DigitsCNN()")
    n_params = sum(p.numel() for p in model.parameters())
    if n_params > MAX_PARAMETERS:
        raise CheckError(
            f"DigitsCNN has {n_params:,} parameters; keep it under {MAX_PARAMETERS:,} so it trains "
            "in seconds on a CPU (8x8 images need few channels)."
        )
    if not any(v.ndim == 4 for v in model.state_dict().values()):
        raise CheckError(
            "DigitsCNN has no convolution (no 4-d weight): use at least one nn.Conv2d."
        )
    g = torch.Generator().manual_seed(1)
    model.eval()
    for n in (1, 5, 64):
        x = torch.rand(n, 1, 8, 8, generator=g).to(device)
        try:
            with torch.no_grad():
                out = model(x)
        except Exception as err:  # usually a Linear layer with the wrong in_features
            raise CheckError(
                f"DigitsCNN on a batch of shape ({n}, 1, 8, 8) raised {type(err).__name__}: "
                f"{str(err).splitlines()[0]} Print x.shape after each layer; each MaxPool2d(2) "
                "halves H and W, and nn.Flatten() keeps the batch dimension."
            ) from None
        check_shape(out, (n, 10), names="N classes", what=f"DigitsCNN on a batch of {n}")
    probs = out.detach().float()
    if bool((probs >= 0).all()) and torch.allclose(
        probs.sum(1), torch.ones(len(probs), device=device), atol=1e-4
    ):
        raise CheckError(
            "DigitsCNN returns probabilities (each row sums to 1): it ends in a softmax. Return "
            "raw logits; CrossEntropyLoss applies log-softmax itself."
        )
    torch.manual_seed(DIGITS_RECIPE["seed"])
    model = DigitsCNN().to(device)
    start = time.perf_counter()
    _, _, acc = train_digits(model, device)
    seconds = time.perf_counter() - start
    if acc < MIN_ACCURACY:
        raise CheckError(
            f"DigitsCNN reached {acc:.1%} validation accuracy with the course's recipe, expected at "
            f"least {MIN_ACCURACY:.0%}. Two conv layers (16 and 32 channels, 3x3, padding=1) each "
            "followed by ReLU and MaxPool2d(2), then a Linear layer, are enough; do not pool "
            "the 8x8 image down to 1x1 too early."
        )
    if seconds > MAX_SECONDS:
        raise CheckError(
            f"training DigitsCNN took {seconds:.1f} s, more than {MAX_SECONDS:.0f} s: use fewer "
            "channels or layers."
        )
