"""Hidden checks for 05_training.

Every check has a probe (autograder/probes/training.py) run the learner's function on a
seeded model and loader, runs a small reference implementation here on identical copies
built by the same builders, and compares plain results: returned numbers, learning rates,
parameters, optimizer and scheduler states, and losses.
"""

from __future__ import annotations

import math
import time

import torch
from torch import nn
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader

from autograder import wire
from autograder.boundary import AnswerRaised, observe
from autograder.probes import training as probes
from tutorial_lib.checks import CheckError, check_shape, check_type
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


def _warmup_cosine_table(warmup_steps: int, total_steps: int) -> list[float]:
    """The factors after 0..total_steps steps; the last one (0) holds for every later step.

    Probes get the schedule as this table (see ``probes.factor_scheduler``), not the formula.
    """
    return [warmup_cosine_factor(s, warmup_steps, total_steps) for s in range(total_steps + 1)]


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


def _ref_checkpoint(model, optimizer, scheduler, epoch) -> dict:
    """What a checkpoint holds, as data (what save_checkpoint should write)."""
    return probes.as_data(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "epoch": epoch,
        }
    )


def _ref_restore(checkpoint: dict, model, optimizer, scheduler) -> int:
    """What load_checkpoint should do with what the file holds."""
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    return checkpoint["epoch"]


# ---------------------------------------------------------------------------------------
# Small shared helpers
# ---------------------------------------------------------------------------------------


def _as_float(value, what: str) -> float:
    check_type(value, float, what)
    return float(value)


def _stub_or(raised: list[str]) -> None:
    """A NotImplementedError the probe saw means the answer is still (partly) the stub."""
    if raised[0] == "NotImplementedError":
        raise NotImplementedError(raised[1])


def _close(a: float, b: float, tol: float = 1e-4) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


def _states_match(state_a: dict, state_b: dict, what: str, hint: str) -> None:
    for (name, a), b in zip(state_a.items(), state_b.values(), strict=True):
        if not torch.allclose(a.float(), b.float().to(a.device), rtol=1e-4, atol=1e-5):
            raise CheckError(
                f"{what}: parameter {name!r} differs from what it should be "
                f"(max abs difference {float((a.float() - b.float().to(a.device)).abs().max()):.3g}). {hint}"
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
        pairs = list(_loss_cases(task, g, device))
        seen = observe(
            probes.probe_make_loss_fn,
            make_loss_fn,
            {"task": task, "pairs": pairs},
            f"make_loss_fn({task!r})",
        )
        if not seen["is_module"]:
            raise CheckError(
                f"make_loss_fn({task!r}) should be a Module, got {seen['type']}."
                + (
                    " Return an instance, e.g. nn.MSELoss(), not the class nn.MSELoss."
                    if seen["type"] == "type"
                    else ""
                )
            )
        for (logits, target), loss in zip(pairs, seen["losses"], strict=False):
            what = f"make_loss_fn({task!r}) on logits of shape {tuple(logits.shape)}"
            if "raised" in loss:  # a wrong loss for the targets' type or range
                _stub_or(loss["raised"])
                name, message = loss["raised"]
                raise CheckError(
                    f"{what} raised {name}: {message} The task needs {_LOSS_HINTS[task]}"
                )
            got = loss["value"]
            check_type(got, torch.Tensor, what)
            expected = ref(logits, target)
            if got.shape != expected.shape:
                raise CheckError(
                    f"{what} returned shape {tuple(got.shape)}, expected a scalar: keep the "
                    "default reduction='mean'."
                )
            if not torch.allclose(
                got.float(), expected.float().to(got.device), rtol=1e-4, atol=1e-4
            ):
                raise CheckError(
                    f"{what} gave {float(got):.5g}, expected {float(expected):.5g}. "
                    f"The task needs {_LOSS_HINTS[task]}"
                )
        if len(seen["losses"]) != len(pairs):
            raise CheckError(f"make_loss_fn({task!r}): the losses did not all come back.")
    seen = observe(
        probes.probe_make_loss_fn_unknown,
        make_loss_fn,
        {"task": "ranking"},
        "make_loss_fn('ranking')",
    )
    if seen["is_value_error"]:
        return
    if seen["raised"] is not None:
        raise CheckError(
            f"make_loss_fn('ranking') raised {seen['raised']}; an unknown task should "
            "raise ValueError."
        )
    raise CheckError(
        "make_loss_fn('ranking') returned something; an unknown task should raise ValueError."
    )


# ---------------------------------------------------------------------------------------
# Exercise 2: train_one_epoch
# ---------------------------------------------------------------------------------------


def _train_case(train_one_epoch, device, seed, n, batch, use_scheduler, start_in_eval, task):
    batches = math.ceil(n / batch)
    case = {
        "device": device,
        "seed": seed,
        "n": n,
        "batch": batch,
        "start_in_eval": start_in_eval,
        "task": task,
        "lr_factors": _warmup_cosine_table(3, 2 * batches) if use_scheduler else None,
    }
    what = (
        f"train_one_epoch ({n} samples in batches of {batch}, {batches} batches"
        f"{', with a scheduler' if use_scheduler else ''})"
    )
    seen = observe(probes.probe_train_one_epoch, train_one_epoch, case, what)
    ref_model, loader, loss_fn, ref_optimizer, ref_scheduler = probes.build_train_run(case)
    torch.manual_seed(seed + 1000)  # identical dropout masks for both runs
    expected = _ref_train_one_epoch(
        ref_model, loader, loss_fn, ref_optimizer, device, ref_scheduler
    )
    sizes = [len(xb) for xb, _ in loader]
    got = _as_float(seen["result"], f"the value returned by {what}")
    if not seen["training"]:
        raise CheckError(
            f"after {what} the model is in eval mode. Call model.train() at the start: "
            "a model that was just evaluated would otherwise train with dropout switched off."
        )
    lr, ref_lr = seen["lr"], ref_optimizer.param_groups[0]["lr"]
    if use_scheduler and not (isinstance(lr, (int, float)) and _close(lr, ref_lr, 1e-6)):
        raise CheckError(
            f"after {what} the learning rate is {lr:.4g}, expected "
            f"{ref_lr:.4g}. This schedule counts optimizer steps: call scheduler.step() once "
            "per batch, right after optimizer.step(), not once per epoch."
        )
    _states_match(
        seen["state"],
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


def check_evaluate(evaluate) -> None:
    """Eval mode and no gradients inside, the caller's mode afterwards, weighted mean loss."""
    device = get_device()
    loss_fn = nn.CrossEntropyLoss()
    for seed, n, batch in [(0, 40, 8), (1, 37, 8), (2, 1, 4), (3, 64, 64)]:
        what = f"evaluate ({n} samples in batches of {batch})"
        for start_training in (True, False):
            case = {
                "device": device,
                "seed": seed,
                "n": n,
                "batch": batch,
                "start_training": start_training,
            }
            seen = observe(probes.probe_evaluate, evaluate, case, what)
            ref_model, loader = probes.build_eval_run(case)
            sizes = [len(xb) for xb, _ in loader]
            result = seen["result"]
            check_type(result, tuple, what)
            if len(result) != 2:
                raise CheckError(
                    f"{what} should return (mean_loss, accuracy), got {len(result)} items."
                )
            loss = _as_float(result[0], f"the loss returned by {what}")
            acc = _as_float(result[1], f"the accuracy returned by {what}")
            calls = seen["calls"]
            if not calls:
                raise CheckError(f"{what} never called the model.")
            if any(training for _, training in calls):
                raise CheckError(
                    f"{what} ran the model in train mode: dropout was active and batch norm "
                    "would update its running statistics. Call model.eval() before the loop."
                )
            if any(grad for grad, _ in calls):
                raise CheckError(
                    f"{what} ran the model with gradients enabled, which records a graph for "
                    "every batch and wastes memory. Wrap the loop in `with torch.no_grad():`."
                )
            if seen["training"] != start_training:
                mode = "train" if start_training else "eval"
                raise CheckError(
                    f"{what}: the model arrived in {mode} mode and left in "
                    f"{'train' if seen['training'] else 'eval'} mode. Remember "
                    "was_training = model.training first, and call model.train(was_training) at "
                    "the end."
                )
            if seen["grads_left"]:
                raise CheckError(
                    f"{what} left gradients in the parameters' .grad: no backward here."
                )
            _states_match(
                seen["state"], ref_model.state_dict(), what, "evaluate must not change the model."
            )
            ref_loss, ref_acc = _ref_evaluate(ref_model, loader, loss_fn, device)
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
        what = f"make_warmup_cosine(optimizer, warmup_steps={warmup}, total_steps={total})"
        case = {
            "device": device,
            "warmup": warmup,
            "total": total,
            "lrs": list(lrs),
            "steps": total + 4,
        }
        try:
            seen = observe(probes.probe_make_warmup_cosine, make_warmup_cosine, case, what)
        except AnswerRaised as err:
            if err.type_name != "ZeroDivisionError":
                raise
            raise CheckError(
                f"{what} raised ZeroDivisionError: warmup_steps may be 0 (no warm-up). Divide by "
                "warmup_steps only inside `if step < warmup_steps:`, which is never true then."
            ) from None
        if not seen["has_step"]:
            raise CheckError(
                f"{what} returned a {seen['type']}; return a scheduler, "
                "for example torch.optim.lr_scheduler.LambdaLR(optimizer, factor)."
            )
        for step, group_lrs in enumerate(seen["lrs"]):
            for got, base in zip(group_lrs, lrs, strict=True):
                expected = base * warmup_cosine_factor(step, warmup, total)
                if not isinstance(got, (int, float)):
                    raise CheckError(
                        f"{what}: after {step} scheduler steps the learning rate is a "
                        f"{wire.type_name(got)}, expected the number {expected:.6g}."
                    )
                if abs(got - expected) > 1e-7 + 1e-6 * base:
                    raise CheckError(
                        f"{what}: after {step} scheduler steps the learning rate is {got:.6g}, "
                        f"expected {expected:.6g} (base lr {base}). {_schedule_hint(step, warmup, total, got, base)}"
                    )
        raised = seen["step_raised"]
        if raised is not None:
            step = len(seen["lrs"]) - 1
            _stub_or(raised)
            if raised[0] == "ZeroDivisionError":
                raise CheckError(
                    f"{what}: scheduler.step() raised ZeroDivisionError after {step} steps. Use "
                    "max(1, ...) for the cosine's length (total_steps - warmup_steps may be 0) and "
                    "divide by warmup_steps only while step < warmup_steps."
                )
            raise CheckError(
                f"{what}: scheduler.step() raised {raised[0]} after {step} steps: {raised[1]}"
            )
        if len(seen["lrs"]) != total + 4:
            raise CheckError(f"{what}: the learning rates after each step did not all come back.")


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
    what = f"EarlyStopping(patience={patience}, min_delta={min_delta})"
    # The reference decides how many epochs the run lasts: until it says stop.
    ref = _RefEarlyStopping(patience, min_delta)
    expected_steps, best_epoch = [], None
    for epoch, loss in enumerate(losses):
        expected = ref.step(loss)
        if ref.bad_epochs == 0:
            best_epoch = epoch
        expected_steps.append((expected, ref.best_loss))
        if expected:
            break
    fed = losses[: len(expected_steps)]
    case = {
        "device": device,
        "seed": seed,
        "patience": patience,
        "min_delta": min_delta,
        "losses": fed,
    }
    seen = observe(probes.probe_EarlyStopping, EarlyStopping, case, what)
    for epoch, (expected, ref_best) in enumerate(expected_steps):
        loss, shown = fed[epoch], fed[: epoch + 1]
        if epoch >= len(seen["steps"]):
            name, message = seen["step_raised"]
            _stub_or(seen["step_raised"])
            raise CheckError(
                f"{what}: after the validation losses {shown}, step raised {name}: {message}"
            )
        step = seen["steps"][epoch]
        got = step["returned"]
        if type(got) is not bool:
            raise CheckError(f"{what}.step(...) should return True or False, got {got['repr']}.")
        if got != expected:
            raise CheckError(
                f"{what}: after the validation losses {shown}, step returned {got}, expected "
                f"{expected}. {_stop_hint(expected, min_delta, loss)}"
            )
        best = step["best_loss"]
        check_type(best, (float, int), f"{what}.best_loss")
        if not (best == ref_best or _close(best, ref_best, 1e-9)):
            raise CheckError(
                f"{what}: after the validation losses {shown}, best_loss is {best}, expected "
                f"{ref_best}. {_stop_hint(expected, min_delta, loss)}"
            )
    if seen["restore_raised"] is not None:
        _stub_or(seen["restore_raised"])
        name, message = seen["restore_raised"]
        raise CheckError(
            f"{what}: restore_best raised {name}: {message} Keep a copy of the best epoch's "
            "weights in step (when the loss improves) and load it with model.load_state_dict."
        )
    start = probes.model_state(probes.build_stop_model(seed, device))
    for key, value in seen["restored"].items():
        wanted = start[key] + (best_epoch + 1)
        if not torch.allclose(value, wanted.to(value.device)):
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
        data = probes.classification_data(44, 5, 3, seed)
        self.loader = DataLoader(data, batch_size=8, shuffle=True, generator=self.generator)
        self.lr_factors = _warmup_cosine_table(3, total_epochs * len(self.loader))

    def fresh(self, init_seed: int):
        return probes.build_resume_objects(self.device, init_seed, self.lr_factors)

    def case(self, init_seed: int) -> dict:
        """What a probe needs to build the same (model, optimizer, scheduler) as fresh()."""
        return {"device": self.device, "init_seed": init_seed, "lr_factors": self.lr_factors}

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


def _resume_and_compare(
    setup: _ResumeSetup, split: int, first: list[float], restore, what: str, hint: str
) -> None:
    """Resume after ``split`` epochs in objects ``restore(model, optimizer, scheduler)`` set up
    (returning the start epoch); the epoch losses must repeat an uninterrupted run's."""
    model, optimizer, scheduler = setup.fresh(setup.seed)
    expected = setup.run(model, optimizer, scheduler, 0, setup.total_epochs)
    model, optimizer, scheduler = setup.fresh(setup.seed + 1)  # a new process: other weights
    start = restore(model, optimizer, scheduler)
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


def _saved(save_checkpoint, setup: _ResumeSetup, split: int, filename: str):
    """Train ``split`` epochs here; the learner's save_checkpoint writes the state. Returns
    (the losses so far, the state that was saved, what the probe saw)."""
    model, optimizer, scheduler = setup.fresh(setup.seed)
    first = setup.run(model, optimizer, scheduler, 0, split)
    states = _ref_checkpoint(model, optimizer, scheduler, split)
    case = {**setup.case(setup.seed + 7), "states": states, "epoch": split, "filename": filename}
    try:
        seen = observe(probes.probe_save_checkpoint, save_checkpoint, case, "save_checkpoint")
    except AnswerRaised as err:  # e.g. pickling a LambdaLR's lambda
        if err.type_name not in ("AttributeError", "TypeError", "RuntimeError", "PicklingError"):
            raise
        raise CheckError(
            f"save_checkpoint raised {err.type_name}: {err.message.splitlines()[0] if err.message else ''} Save "
            "state_dicts (plain dicts of tensors and numbers), not the model, optimizer or "
            "scheduler objects: objects drag their code along and often cannot be pickled."
        ) from None
    return first, states, seen


def _check_saved_file(seen: dict, states: dict, epoch: int, filename: str) -> dict:
    """The checkpoint file: written, readable with weights_only, the four entries."""
    if seen["returned"] is not None:
        raise CheckError("save_checkpoint should write the file and return None.")
    if not seen["exists"]:
        raise CheckError(
            f"save_checkpoint did not create a file at the path it was given (a path ending in "
            f"{filename!r})."
        )
    if seen["load_error"] is not None:  # pickled objects are refused by weights_only
        raise CheckError(
            "torch.load(path, weights_only=True) could not read the checkpoint "
            f"({seen['load_error']}). Save state_dicts and plain numbers, never the model or "
            "optimizer objects themselves."
        )
    checkpoint = seen["checkpoint"]
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
            f"the checkpoint has the keys {sorted(checkpoint, key=str)}, expected "
            f"{sorted(wanted)}.{hint}"
        )
    if checkpoint["epoch"] != epoch or type(checkpoint["epoch"]) is not int:
        raise CheckError(
            f"checkpoint['epoch'] is {checkpoint['epoch']!r}, expected the int {epoch} that was "
            "passed in."
        )
    for key, value in states["model"].items():
        saved = checkpoint["model"].get(key) if isinstance(checkpoint["model"], dict) else None
        if not isinstance(saved, torch.Tensor) or not torch.equal(saved.cpu(), value.cpu()):
            raise CheckError(
                f"checkpoint['model'] should be model.state_dict(); {key!r} is missing or differs."
            )
    optimizer_state = checkpoint["optimizer"]
    if not isinstance(optimizer_state, dict) or not optimizer_state.get("state"):
        raise CheckError("checkpoint['optimizer'] holds no state: save optimizer.state_dict().")
    scheduler_state = checkpoint["scheduler"]
    if (
        not isinstance(scheduler_state, dict)
        or scheduler_state.get("last_epoch") != states["scheduler"]["last_epoch"]
    ):
        raise CheckError("checkpoint['scheduler'] should be scheduler.state_dict().")
    return checkpoint


def check_save_checkpoint(save_checkpoint) -> None:
    """The file holds all four entries, loads with weights_only, and resumes exactly."""
    device = get_device()
    _, states, seen = _saved(save_checkpoint, _ResumeSetup(device, seed=3), 1, "nested-name.ckpt")
    _check_saved_file(seen, states, 1, "nested-name.ckpt")
    for seed, split in [(4, 2), (5, 1)]:
        setup = _ResumeSetup(device, seed)
        first, states, seen = _saved(save_checkpoint, setup, split, "checkpoint.pt")
        checkpoint = _check_saved_file(seen, states, split, "checkpoint.pt")
        _resume_and_compare(
            setup,
            split,
            first,
            lambda m, o, s, checkpoint=checkpoint: _ref_restore(checkpoint, m, o, s),
            "save_checkpoint",
            "Save model, optimizer and scheduler state_dicts and the epoch.",
        )


def check_load_checkpoint(load_checkpoint) -> None:
    """A resumed run repeats an uninterrupted one, epoch loss for epoch loss."""
    device = get_device()
    for seed, split in [(6, 2), (7, 3), (8, 1)]:
        setup = _ResumeSetup(device, seed)
        model, optimizer, scheduler = setup.fresh(setup.seed)
        first = setup.run(model, optimizer, scheduler, 0, split)
        case = {
            **setup.case(setup.seed + 1),  # a new process: other weights
            "checkpoint": _ref_checkpoint(model, optimizer, scheduler, split),
        }
        seen = observe(probes.probe_load_checkpoint, load_checkpoint, case, "load_checkpoint")

        def restore(model, optimizer, scheduler, seen=seen):
            """Put the learner's loaded states into the grader's own objects."""
            model.load_state_dict(seen["model"])
            optimizer.load_state_dict(seen["optimizer"])
            scheduler.load_state_dict(seen["scheduler"])
            return seen["returned"]

        _resume_and_compare(
            setup,
            split,
            first,
            restore,
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


def check_DigitsCNN(DigitsCNN) -> None:
    """Shapes, logits (not probabilities), a convolution, size, then the real training run."""
    device = get_device()
    g = torch.Generator().manual_seed(1)
    sizes = (1, 5, 64)
    inputs = [torch.rand(n, 1, 8, 8, generator=g).to(device) for n in sizes]
    case = {"seed": DIGITS_RECIPE["seed"], "device": device, "inputs": inputs}
    seen = observe(probes.probe_DigitsCNN, DigitsCNN, case, "DigitsCNN()")
    if not seen["is_module"]:
        raise CheckError(f"DigitsCNN() should be a Module, got {seen['type']}.")
    n_params = seen["n_params"]
    if n_params > MAX_PARAMETERS:
        raise CheckError(
            f"DigitsCNN has {n_params:,} parameters; keep it under {MAX_PARAMETERS:,} so it trains "
            "in seconds on a CPU (8x8 images need few channels)."
        )
    if not seen["has_conv"]:
        raise CheckError(
            "DigitsCNN has no convolution (no 4-d weight): use at least one nn.Conv2d."
        )
    out = None
    for n, output in zip(sizes, seen["outputs"], strict=False):
        if "raised" in output:  # usually a Linear layer with the wrong in_features
            _stub_or(output["raised"])
            name, message = output["raised"]
            raise CheckError(
                f"DigitsCNN on a batch of shape ({n}, 1, 8, 8) raised {name}: "
                f"{message} Print x.shape after each layer; each MaxPool2d(2) "
                "halves H and W, and nn.Flatten() keeps the batch dimension."
            )
        out = output["out"]
        check_type(out, torch.Tensor, f"DigitsCNN on a batch of {n}")
        check_shape(out, (n, 10), names="N classes", what=f"DigitsCNN on a batch of {n}")
    if len(seen["outputs"]) != len(sizes):
        raise CheckError("DigitsCNN: the outputs for every test batch did not come back.")
    probs = out.detach().float()
    if bool((probs >= 0).all()) and torch.allclose(
        probs.sum(1), torch.ones(len(probs), device=probs.device), atol=1e-4
    ):
        raise CheckError(
            "DigitsCNN returns probabilities (each row sums to 1): it ends in a softmax. Return "
            "raw logits; CrossEntropyLoss applies log-softmax itself."
        )
    train_loader, val_loader = probes.digits_loaders(DIGITS_RECIPE)
    train_batches = len(train_loader)
    labels = torch.cat([y for _, y in val_loader])
    case = {
        "recipe": DIGITS_RECIPE,
        "device": device,
        "lr_factors": _warmup_cosine_table(
            train_batches, DIGITS_RECIPE["num_epochs"] * train_batches
        ),
    }
    start = time.perf_counter()  # timed here, around the whole probe: data, training, predictions
    seen = observe(probes.probe_DigitsCNN_training, DigitsCNN, case, "training DigitsCNN")
    seconds = time.perf_counter() - start
    predictions = seen["predictions"]
    if not isinstance(predictions, torch.Tensor) or predictions.shape != labels.shape:
        raise CheckError(
            "training DigitsCNN: its predictions on the validation set did not come back."
        )
    acc = float((predictions.cpu() == labels).float().mean())
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
