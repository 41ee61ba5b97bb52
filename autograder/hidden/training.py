"""Hidden checks for 06_training.

Each exercise declares a contract (autograder/contracts.py): the learner's answer and a
reference run on drawn inputs, built by the same builders (autograder/probes/training.py),
and their results and effects (the model, optimizer and writer afterwards) compared. What a
contract cannot say stays hand-written: a probe runs the learner's function on a seeded
model and loader (with dropout, a real SummaryWriter, a checkpoint file on disk, the
digits training run) and a reference does the same here: the order of the steps, the
global random state, a resumed run, the accuracy reached.
"""

from __future__ import annotations

import math
import warnings

import torch
from hypothesis import strategies as st
from torch import nn
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader

from autograder import wire
from autograder.boundary import observe
from autograder.contracts import Build, Contract, Draw, Inputs, copies, uses
from autograder.probes import training as probes
from tutorial_lib.checks import CheckError, check_shape, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import N_, _

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
    """The stub's NotImplementedError, which the probe saw: the answer is still (partly) the
    stub."""
    if raised[0] == "stub":
        raise NotImplementedError(raised[1])


def _close(a: float, b: float, tol: float = 1e-4) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(b))


def _states_match(state_a: dict, state_b: dict, what: str, hint: str) -> None:
    for (name, a), b in zip(state_a.items(), state_b.values(), strict=True):
        if not torch.allclose(a.float(), b.float().to(a.device), rtol=1e-4, atol=1e-5):
            raise CheckError(
                _(
                    "{what}: parameter {name!r} differs from what it should be (max abs difference "
                    "{max_difference:.3g}). {hint}"
                ).format(
                    what=what,
                    name=name,
                    max_difference=float((a.float() - b.float().to(a.device)).abs().max()),
                    hint=hint,
                )
            )


# ---------------------------------------------------------------------------------------
# Exercise 1: make_loss_fn
# ---------------------------------------------------------------------------------------

_LOSS_HINTS = {
    "multiclass": N_(
        "one class per sample: nn.CrossEntropyLoss(), which takes raw logits "
        "(it applies log-softmax itself; do not add a softmax)."
    ),
    "multilabel": N_(
        "several independent yes/no labels per sample: nn.BCEWithLogitsLoss(), "
        "which takes raw logits and applies a numerically stable sigmoid itself."
    ),
    "regression": N_("real-valued targets: nn.MSELoss()."),
}
_REF_LOSSES = {
    "multiclass": nn.CrossEntropyLoss,
    "multilabel": nn.BCEWithLogitsLoss,
    "regression": nn.MSELoss,
}


def _ref_make_loss_fn(task: str) -> nn.Module:
    return _REF_LOSSES[task]()


def _draw_make_loss_fn(d: Draw) -> Inputs:
    """A task, then logits (N, C) (some very confident: only a stable loss stays finite on
    them) and targets of the task's kind; the loss is built from the task, called on the rest."""
    task = d.draw(st.sampled_from(list(_REF_LOSSES)))
    n, c = d.size(1, 6), d.size(1, 5)
    scale = d.draw(st.sampled_from([2.0, 200.0]))
    logits = d.tensor(n, c, low=-scale, high=scale)
    if task == "multiclass":
        target = d.integers(n, low=0, high=c)
    elif task == "multilabel":
        target = d.bools(n, c).float()
    else:
        target = d.tensor(n, c)
    return Inputs((task, logits, target))


def _loss_hint(family: str, inputs: Inputs) -> str:
    task = inputs.args[0]
    hint = _("The task {task!r} needs {task_hint}").format(
        task=task, task_hint=_(_LOSS_HINTS[task])
    )
    if family == "values" and float(inputs.args[1].abs().max()) > 10:
        hint += _(
            " On confident logits a softmax or sigmoid followed by a log underflows; the "
            "built-in loss works on the logits directly (log-sum-exp) and stays finite."
        )
    return hint


# make_loss_fn(task) builds the loss (construct=1), called on (logits, target): its value and
# gradient on every family; the caller's tensors must come back unchanged.
MAKE_LOSS_FN = Contract(
    "make_loss_fn",
    _ref_make_loss_fn,
    _draw_make_loss_fn,
    construct=1,
    grad_args=(1,),
    arg_names=("task", "logits", "target"),
    hint=_loss_hint,
    examples=12,  # three tasks: each family meets every one
)


@uses(MAKE_LOSS_FN)
def check_make_loss_fn(make_loss_fn) -> None:
    """The contract: each task's loss, value and gradient, against torch's own on random,
    very confident, non-contiguous, other-precision and meta logits, the caller's tensors
    unchanged. Here: a Module instance for each task, ValueError for any other."""
    for task in _REF_LOSSES:
        seen = observe(
            probes.probe_make_loss_fn, make_loss_fn, {"task": task}, f"make_loss_fn({task!r})"
        )
        if not seen["is_module"]:
            raise CheckError(
                _("make_loss_fn({task!r}) should be a Module, got {type_name}.").format(
                    task=task, type_name=seen["type"]
                )
                + (
                    _(" Return an instance, e.g. nn.MSELoss(), not the class nn.MSELoss.")
                    if seen["type"] == "type"
                    else _(
                        " Return a loss module such as nn.MSELoss(), not a function or a number."
                    )
                )
            )
    # other spellings of the three names are "any other name" too
    for unknown in (
        "ranking",
        "",
        "MultiClass",
        " regression",
        "regression ",
        "regressor",
        "binary_multilabel",
    ):
        seen = observe(
            probes.probe_make_loss_fn_unknown,
            make_loss_fn,
            {"task": unknown},
            f"make_loss_fn({unknown!r})",
        )
        if seen["is_value_error"]:
            continue
        if seen["raised"] is not None:
            raise CheckError(
                _(
                    "make_loss_fn({unknown!r}) raised {raised}; an unknown task should raise "
                    "ValueError (a dict lookup raises KeyError: catch it and raise ValueError, or "
                    "test each name with if)."
                ).format(unknown=unknown, raised=seen["raised"])
            )
        if unknown.strip().lower() in _REF_LOSSES or unknown in ("regressor", "binary_multilabel"):
            raise CheckError(
                _(
                    "make_loss_fn({unknown!r}) returned a loss; only the exact names "
                    "'multiclass', 'multilabel' and 'regression' are tasks, and any other name "
                    "raises ValueError: compare the whole name as it is (==), without lower(), "
                    "strip(), startswith(), endswith() or in."
                ).format(unknown=unknown)
            )
        raise CheckError(
            _(
                "make_loss_fn({unknown!r}) returned something; an unknown task should raise "
                "ValueError, not fall back to a default loss or return None."
            ).format(unknown=unknown)
        )


# ---------------------------------------------------------------------------------------
# Exercise 2: train_one_epoch
# ---------------------------------------------------------------------------------------


def _train_case(
    train_one_epoch,
    device,
    seed,
    n,
    batch,
    use_scheduler,
    start_in_eval,
    task,
    shuffle=False,
    float64=False,
    target_dim=1,
    stale_grads=False,
    drop_last=False,
    target_scale=1.0,
):
    batches = n // batch if drop_last else math.ceil(n / batch)
    case = {
        "device": device,
        "seed": seed,
        "n": n,
        "batch": batch,
        "start_in_eval": start_in_eval,
        "task": task,
        "shuffle": shuffle,
        "float64": float64,
        "target_dim": target_dim,
        "stale_grads": stale_grads,
        "drop_last": drop_last,
        "target_scale": target_scale,
        "lr_factors": _warmup_cosine_table(3, 2 * batches) if use_scheduler else None,
    }
    what = (
        f"train_one_epoch ({n} samples in batches of {batch}, {batches} batches"
        f"{', with a scheduler' if use_scheduler else ''}"
        f"{', a float64 model and data' if float64 else ''}"
        f"{f', targets y of shape (B, {target_dim})' if target_dim > 1 else ''}"
        f"{', the model arriving with .grad already set' if stale_grads else ''}"
        f"{', the loader dropping its last partial batch' if drop_last else ''}"
        f"{f', targets of size about {target_scale:g} (large gradients)' if target_scale != 1 else ''})"
    )
    seen = observe(probes.probe_train_one_epoch, train_one_epoch, case, what)
    ref = probes.probe_train_one_epoch(_ref_train_one_epoch, case)  # the same run, done right
    _model, loader, *_rest = probes.build_train_run(case)
    sizes = [len(xb) for xb, _ in loader]
    got = _as_float(seen["result"], _("the value returned by {what}").format(what=what))
    if not seen["training"]:
        raise CheckError(
            _(
                "after {what} the model is in eval mode. Call model.train() at the start (and "
                "leave it so): a model that was just evaluated would otherwise train with "
                "dropout switched off."
            ).format(what=what)
        )
    if not seen.get("grad_enabled_after", True):
        raise CheckError(
            _(
                "after {what} gradients are switched off for the whole program: the caller's "
                "next epoch would fail at loss.backward(). Leave autograd as you found it: no "
                "torch.set_grad_enabled(False) (use `with torch.no_grad():` for a block that "
                "needs no graph)."
            ).format(what=what)
        )
    if seen.get("default_dtype_after", "torch.float32") != "torch.float32":
        raise CheckError(
            _(
                "after {what} the default dtype is {dtype}: every tensor the caller makes from "
                "then on changes type. Do not call torch.set_default_dtype inside a helper."
            ).format(what=what, dtype=seen["default_dtype_after"])
        )
    if seen.get("loss_fn_changed"):
        raise CheckError(
            _(
                "after {what} the caller's loss_fn has other settings ({settings}): the "
                "caller's next epoch or evaluation would compute another loss. Use loss_fn as "
                "it is given, and change none of its attributes (such as reduction)."
            ).format(what=what, settings=", ".join(seen["loss_fn_changed"]))
        )
    if seen["eval_forwards"]:
        raise CheckError(
            _(
                "{what} ran the model in eval mode for {eval_forwards} of its {forwards} "
                "forward passes (the model arrived in {value} mode). Call model.train() at the "
                "start, before the loop, so dropout and batch norm train from the first batch."
            ).format(
                what=what,
                eval_forwards=seen["eval_forwards"],
                forwards=seen["forwards"],
                value="eval" if case["start_in_eval"] else "train",
            )
        )
    if seen["forwards"] not in (batches, 0):  # 0: called model.forward, which skips hooks
        raise CheckError(
            _(
                "{what} ran the model {forwards} times for {batches} batches. Run the model "
                "once per batch and compute the loss from that output; use loss.item() for the "
                "epoch's total instead of running the model again."
            ).format(what=what, forwards=seen["forwards"], batches=batches)
        )
    steps, ref_steps = seen["steps"], ref["steps"]
    if len(steps) != batches:
        raise CheckError(
            _(
                "{what} called optimizer.step() {n_steps} times for {batches} batches: step "
                "once per batch, after loss.backward()."
            ).format(what=what, n_steps=len(steps), batches=batches)
        )
    alive = max(seen["graphs_alive"], default=0)
    if alive:
        step = seen["graphs_alive"].index(alive) + 1
        raise CheckError(
            _(
                "{what}: at optimizer step {step}, the graphs of {alive} earlier batches were "
                "still alive. The loop keeps a reference to each batch's loss tensor (total += "
                "loss * len(x), or a list of losses), so every batch's graph stays in memory "
                "until the epoch ends. Add loss.item(), a float, to the total."
            ).format(what=what, step=step, alive=alive)
        )
    if use_scheduler:
        _check_schedule_use(seen, ref, what, batches)
    if not torch.equal(seen["rng"], ref["rng"]):
        raise CheckError(
            _(
                "{what} changed the global random state in a way training alone does not (each "
                "dropout layer draws from it, nothing else should). Do not call "
                "torch.manual_seed (or draw random numbers) inside train_one_epoch: seeding is "
                "the caller's choice, and reseeding gives every epoch the same dropout masks."
            ).format(what=what)
        )
    for k, ((_first, norm), (_ref_first, ref_norm)) in enumerate(
        zip(steps, ref_steps, strict=True)
    ):
        if ref_norm > 0 and norm == 0:
            raise CheckError(
                _(
                    "{what}: at optimizer step {value} every gradient was zero, so the step did "
                    "nothing. optimizer.zero_grad() must come before loss.backward(), not between "
                    "backward() and step()."
                ).format(what=what, value=k + 1)
            )
        if not _close(norm, ref_norm, 1e-3):
            hint = (
                _(
                    "The gradients of earlier batches were still in .grad: call "
                    "optimizer.zero_grad() once per batch, before loss.backward()."
                )
                if k > 0 and norm > ref_norm
                else _(
                    "The model arrived with gradients already in .grad (left by the caller), "
                    "and the first step added this batch's gradient to them: call "
                    "optimizer.zero_grad() in every batch before loss.backward(), not after "
                    "optimizer.step()."
                )
                if k == 0 and stale_grads
                else _(
                    "The gradients were smaller than loss.backward() made them: something "
                    "scaled them down before optimizer.step() (clip_grad_norm_, say). This "
                    "exercise does not clip: forward, loss, optimizer.zero_grad(), "
                    "loss.backward(), optimizer.step(), nothing in between."
                )
                if target_scale != 1 and norm < ref_norm
                else _(
                    "Each batch must do, in order: forward, loss, optimizer.zero_grad(), "
                    "loss.backward(), optimizer.step(). Did you move x and y to the device, and use "
                    "the loss_fn you were given?"
                )
            )
            raise CheckError(
                _(
                    "{what}: at optimizer step {value} the gradient norm was {norm:.5g}, expected "
                    "{ref_norm:.5g}. {hint}"
                ).format(what=what, value=k + 1, norm=norm, ref_norm=ref_norm, hint=hint)
            )
    _states_match(
        seen["state"],
        ref["state"],
        what,
        "Each batch must do, in order: forward, loss, optimizer.zero_grad(), loss.backward(), "
        "optimizer.step(). Did you call model.train() (dropout on) and move x and y to the "
        "device?",
    )
    expected = ref["result"]
    if not _close(got, expected):
        hint = (
            _(
                " The batches here have {sizes} samples: weight each batch's mean loss by its "
                "size (loss.item() * len(x)) and divide by the number of samples, so a small "
                "last batch does not count as much as a full one."
            ).format(sizes=sizes)
            if len(set(sizes)) > 1
            else _(
                " Return the mean loss per sample over the whole epoch, from the losses "
                "computed before each step (not recomputed after it)."
            )
        )
        raise CheckError(
            _("{what} returned {got:.6g}, expected {expected:.6g}.{hint}").format(
                what=what, got=got, expected=expected, hint=hint
            )
        )


def _check_schedule_use(seen: dict, ref: dict, what: str, batches: int) -> None:
    """The learning rate each optimizer step used, against the schedule stepped per batch."""
    used = [lr for lr, _ in seen["steps"]]
    wanted = [lr for lr, _ in ref["steps"]]
    if seen["scheduler_steps"] != batches:
        raise CheckError(
            _(
                "{what} called scheduler.step() {scheduler_steps} times for {batches} batches. "
                "This schedule counts optimizer steps: call scheduler.step() once per batch, "
                "right after optimizer.step(), not once per epoch."
            ).format(what=what, scheduler_steps=seen["scheduler_steps"], batches=batches)
        )
    if all(_close(a, b, 1e-6) for a, b in zip(used, wanted, strict=True)):
        if not _close(seen["lr"], ref["lr"], 1e-6):
            raise CheckError(
                _(
                    "after {what} the learning rate is {lr:.4g}, expected {lr2:.4g}: call "
                    "scheduler.step() once per batch, right after optimizer.step()."
                ).format(what=what, lr=seen["lr"], lr2=ref["lr"])
            )
        return
    if len(used) > 1 and all(_close(a, b, 1e-6) for a, b in zip(used, wanted[1:], strict=False)):
        raise CheckError(
            _(
                "{what}: optimizer step 1 used the learning rate {used:.4g}, which the schedule "
                "gives step 2; it should use {wanted:.4g}. scheduler.step() ran before "
                "optimizer.step(): call it right after optimizer.step(), so each step uses the "
                "rate the schedule set for it."
            ).format(what=what, used=used[0], wanted=wanted[0])
        )
    k = next(i for i, (a, b) in enumerate(zip(used, wanted, strict=True)) if not _close(a, b, 1e-6))
    raise CheckError(
        _(
            "{what}: optimizer step {value} used the learning rate {used:.4g}, expected "
            "{wanted:.4g}. Call scheduler.step() exactly once per batch, right after "
            "optimizer.step(), and pass the scheduler you were given."
        ).format(what=what, value=k + 1, used=used[k], wanted=wanted[k])
    )


def _contract_model(d: Draw, classes: int, dropout: float, may_freeze: bool = False) -> Build:
    """The model argument of a contract: seeded, in a drawn mode; outside the device family
    its .grad may already hold the caller's gradients; with ``may_freeze``, its first layer
    may be frozen by the caller (requires_grad False)."""
    training = d.draw(st.booleans())
    grads = d.family != "device" and d.draw(st.booleans())
    frozen = may_freeze and d.draw(st.booleans())
    spec = {
        "seed": d.draw(st.integers(0, 99)),
        "classes": classes,
        "dropout": dropout,
        "training": training,
        "grads": grads,
        "frozen": frozen,
    }
    label = _("a model in {mode} mode").format(mode="train" if training else "eval")
    if grads:
        label += _(" (its .grad already set by the caller)")
    if frozen:
        label += _(" (its first layer frozen by the caller)")
    return Build(probes.build_contract_model, spec, label)


def _contract_loader(d: Draw, task: str) -> Build:
    n, batch = d.size(1, 40), d.size(1, 16)
    spec = {"seed": d.draw(st.integers(0, 99)), "n": n, "batch": batch, "task": task}
    label = _("a loader of {n} samples in batches of {batch}").format(n=n, batch=batch)
    return Build(probes.build_contract_loader, spec, label)


def _contract_loss(task: str, smoothing: float = 0.0) -> Build:
    spec = {"task": task, "label_smoothing": smoothing}
    label = (
        "MSELoss()"
        if task == "regression"
        else f"CrossEntropyLoss(label_smoothing={smoothing})"
        if smoothing
        else "CrossEntropyLoss()"
    )
    return Build(probes.build_contract_loss, spec, label)


# The device argument, as a caller passes it: the device family moves it to meta with the
# tensors and models (probes.contract._on_meta), so a batch left on the CPU shows there.
CONTRACT_DEVICE = torch.device("cpu")


def _draw_train_one_epoch(d: Draw) -> Inputs:
    task = d.draw(st.sampled_from(["classification", "regression"]))
    model = _contract_model(d, 1 if task == "regression" else 3, 0.3)
    loader = _contract_loader(d, task)
    optimizer = Build(probes.build_contract_optimizer, {"lr": 0.1, "momentum": 0.9}, "SGD", of=(0,))
    scheduler = None
    if d.draw(st.booleans()):
        scheduler = Build(
            probes.build_contract_scheduler, {"factors": [1.0, 0.5, 0.25]}, "a LambdaLR", of=(3,)
        )
    args = (model, loader, _contract_loss(task), optimizer, CONTRACT_DEVICE, scheduler)
    return Inputs(args)


# Only the device family: the rest of an epoch (the order of the steps, the learning rates,
# the weights, the random state) is observed by the hand-written probe below, whose
# messages name the step that went wrong.
TRAIN_ONE_EPOCH = Contract(
    "train_one_epoch",
    _ref_train_one_epoch,
    _draw_train_one_epoch,
    families=("device",),
    mutates=(0,),  # training changes the model (its weights, grads and mode)
    arg_names=("model", "loader", "loss_fn", "optimizer", "device", "scheduler"),
)


@uses(TRAIN_ONE_EPOCH)
def check_train_one_epoch(train_one_epoch) -> None:
    """Returned mean loss, the order of the steps, the learning rate each optimizer step used,
    how many batches' graphs stay alive, the final parameters and the global random state
    against a reference epoch; the contract: x and y both moved to the device."""
    device = get_device()
    cases = [
        # seed, n, batch, scheduler, start in eval mode, task
        (0, 40, 8, False, False, "classification"),
        (1, 50, 16, False, False, "classification"),  # last batch of 2
        (2, 37, 10, False, True, "classification"),  # the model arrives in eval mode
        (3, 45, 7, True, False, "classification"),
        (4, 1, 4, False, False, "classification"),  # a single sample
        (5, 30, 8, False, False, "regression"),
        (6, 20, 6, True, True, "regression"),  # scheduler and eval mode, last batch of 2
    ]
    for case in cases:
        _train_case(train_one_epoch, device, *case)
    _train_case(train_one_epoch, device, 7, 26, 5, False, False, "classification", shuffle=True)
    # a run in double precision: the batches are moved to the device, their dtype kept
    _train_case(train_one_epoch, device, 9, 18, 4, False, False, "regression", float64=True)
    # y (B, 3): a batch's size is len(x), not y.numel()
    _train_case(train_one_epoch, device, 10, 22, 6, False, False, "regression", target_dim=3)
    # the caller's .grad is not this epoch's: zero_grad comes before the first backward too
    _train_case(
        train_one_epoch, device, 11, 24, 8, False, False, "classification", stale_grads=True
    )
    # drop_last: the samples the loop sees are fewer than len(loader.dataset)
    _train_case(train_one_epoch, device, 12, 29, 8, False, False, "classification", drop_last=True)
    # large targets, so large gradients: a clip_grad_norm_ of the answer's own shows
    _train_case(train_one_epoch, device, 13, 24, 8, False, False, "regression", target_scale=100.0)


# ---------------------------------------------------------------------------------------
# Exercise 3: evaluate
# ---------------------------------------------------------------------------------------


def _draw_evaluate(d: Draw) -> Inputs:
    """A model in either mode (its dropout is p=0, so a forward in the wrong mode gives the
    same values: the hand-written probe names that mistake), a loader, a loss with or
    without label smoothing."""
    model = _contract_model(d, 3, 0.0, may_freeze=True)
    loss = _contract_loss("classification", d.draw(st.sampled_from([0.0, 0.2])))
    return Inputs((model, _contract_loader(d, "classification"), loss, CONTRACT_DEVICE))


def _compare_evaluate(got, expected, what: str, inputs: Inputs) -> None:
    """(mean_loss, accuracy), two floats, against the reference, with the likely slips named."""
    if not isinstance(got, (tuple, list)):
        raise CheckError(
            _(
                "{what} returned a {type_name}; return the pair (mean_loss, accuracy) as a "
                "tuple: return total / count, correct / count."
            ).format(what=what, type_name=wire.type_name(got))
        )
    if len(got) != 2:
        raise CheckError(
            _("{what} should return (mean_loss, accuracy), got {n_result} items.").format(
                what=what, n_result=len(got)
            )
        )
    loss = _as_float(got[0], _("the loss returned by {what}").format(what=what))
    acc = _as_float(got[1], _("the accuracy returned by {what}").format(what=what))
    ref_loss, ref_acc = expected
    loader_spec, smoothing = inputs.args[1].spec, inputs.args[2].spec["label_smoothing"]
    n, batch = loader_spec["n"], loader_spec["batch"]
    sizes = [batch] * (n // batch) + ([n % batch] if n % batch else [])
    if not _close(loss, ref_loss):
        if smoothing:
            ref_model, loader, _loss, device = copies(inputs.args)
            plain, _accuracy = _ref_evaluate(ref_model, loader, nn.CrossEntropyLoss(), device)
            if _close(loss, plain):
                raise CheckError(
                    _(
                        "the loss returned by {what} is {loss:.6g}, expected {ref_loss:.6g}: that is "
                        "what a plain cross-entropy gives, but the loss_fn passed in here is "
                        "CrossEntropyLoss(label_smoothing={smoothing}). Compute the loss with the "
                        "loss_fn argument, not a loss of your own choosing."
                    ).format(what=what, loss=loss, ref_loss=ref_loss, smoothing=smoothing)
                )
        raise CheckError(
            _(
                "the loss returned by {what} is {loss:.6g}, expected {ref_loss:.6g}. Give "
                "loss_fn the raw logits (no softmax), and weight each batch's mean by its size "
                "(the batches have {sizes} samples)."
            ).format(what=what, loss=loss, ref_loss=ref_loss, sizes=sizes)
        )
    if not _close(acc, ref_acc, 1e-6):
        hint = (
            _(" Return a fraction between 0 and 1, not a percentage.")
            if acc > 1
            else _(
                " Count the correct samples over all batches ({sizes}) and divide by their "
                "number; averaging per-batch accuracies over-weights a small last batch."
            ).format(sizes=sizes)
        )
        raise CheckError(
            _(
                "the accuracy returned by {what} is {acc:.6g}, expected {ref_acc:.6g}: the "
                "fraction of samples whose largest logit (argmax over dim=1) is the "
                "label.{hint}"
            ).format(what=what, acc=acc, ref_acc=ref_acc, hint=hint)
        )


# The caller's model must come back as it was: every submodule's mode, its weights, its
# .grad (no backward, no zero_grad) and its hooks; x and y must both go to the device.
EVALUATE = Contract(
    "evaluate",
    _ref_evaluate,
    _draw_evaluate,
    families=("values", "edges", "device"),
    compare=_compare_evaluate,
    arg_names=("model", "loader", "loss_fn", "device"),
)


@uses(EVALUATE)
def check_evaluate(evaluate) -> None:
    """The contract: the weighted mean loss and the accuracy, the caller's model (modes,
    weights, gradients) untouched, both x and y on the device. Here: eval mode and no
    gradients inside, autograd on and the global random state untouched afterwards."""
    device = get_device()
    for seed, n, batch, start_training, grad_off, once in [
        (0, 40, 8, True, False, False),
        (1, 37, 8, False, False, False),
        (2, 21, 8, True, True, False),  # called with gradients already off
        (3, 19, 4, False, False, True),  # a loader that can be read once
    ]:
        what = f"evaluate ({n} samples in batches of {batch})"
        if grad_off:
            what = _("{what}, called with gradients off").format(what=what)
        if once:
            what = _("{what}, on a stream of batches that can be read once").format(what=what)
        case = {
            "device": device,
            "seed": seed,
            "n": n,
            "batch": batch,
            "start_training": start_training,
            "label_smoothing": 0.0,
            "grad_off": grad_off,
            "once": once,
        }
        seen = observe(probes.probe_evaluate, evaluate, case, what)
        _check_evaluated(seen, what, grad_off)
        if seen.get("loss_fn_changed"):
            raise CheckError(
                _(
                    "after {what} the caller's loss_fn has other settings ({settings}): "
                    "evaluation changes nothing, the loss function included. Use loss_fn as it "
                    "is given, and change none of its attributes (such as reduction)."
                ).format(what=what, settings=", ".join(seen["loss_fn_changed"]))
            )


def _check_evaluated(seen: dict, what: str, grad_off: bool = False) -> None:
    calls = seen["calls"]
    if not calls:
        raise CheckError(_("{what} never called the model.").format(what=what))
    if any(training for _, training in calls):
        raise CheckError(
            _(
                "{what} ran the model in train mode: dropout was active and batch norm would "
                "update its running statistics. Call model.eval() before the loop."
            ).format(what=what)
        )
    if any(grad for grad, _ in calls):
        raise CheckError(
            _(
                "{what} ran the model with gradients enabled, which records a graph for every "
                "batch and wastes memory. Wrap the loop in `with torch.no_grad():`."
            ).format(what=what)
        )
    if grad_off and seen["grad_enabled_after"]:
        raise CheckError(
            _(
                "after {what} gradients are switched on: the caller had them off, and an "
                "evaluation must leave that as it found it. `with torch.no_grad():` around the "
                "loop restores the previous state; torch.set_grad_enabled(True) at the end "
                "does not."
            ).format(what=what)
        )
    if not grad_off and not seen["grad_enabled_after"]:
        raise CheckError(
            _(
                "after {what} gradients are switched off for the whole program: the next "
                "training step's loss.backward() would fail. Use `with torch.no_grad():` (or "
                "torch.inference_mode()) around the loop, which switches them back on when it "
                "ends, not torch.set_grad_enabled(False) on its own."
            ).format(what=what)
        )
    if seen["rng_changed"]:
        raise CheckError(
            _(
                "{what} changed the global random state (an evaluation in eval mode draws no "
                "random numbers). Do not call torch.manual_seed inside evaluate: it silently "
                "changes the caller's next dropout masks and shuffles."
            ).format(what=what)
        )


# ---------------------------------------------------------------------------------------
# Exercise 4: make_warmup_cosine
# ---------------------------------------------------------------------------------------


class _QuietLambdaLR(LambdaLR):
    """The reference scheduler; ``step(k)`` jumps to step k without the deprecation warning."""

    def step(self, epoch=None):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return super().step(epoch)


def _contract_scheduler(optimizer, warmup_steps: int, total_steps: int) -> LambdaLR:
    return _QuietLambdaLR(
        optimizer, lambda step: warmup_cosine_factor(step, warmup_steps, total_steps)
    )


def _draw_warmup_cosine(d: Draw) -> Inputs:
    """An SGD with one to three parameter groups (each its own base rate), a warm-up of 0 or
    more steps, a total of at least the warm-up, and the step the scheduler is moved to,
    up to four past the end (``scheduler.step(k)``: LambdaLR then sets each rate to
    base * factor(k))."""
    lrs = d.draw(st.sampled_from([[0.1], [0.01, 0.3], [0.2, 0.05, 1.0]]))
    warmup = d.size(0, 6)
    total = warmup + d.size(0, 8)
    step = d.draw(st.integers(0, total + 4))
    label = _("an SGD with base rates {lrs}").format(lrs=lrs)
    return Inputs((Build(probes.build_lr_groups, {"lrs": lrs}, label), warmup, total, step))


def _warmup_hint(family: str, inputs: Inputs) -> str:
    """What the factor is at the step the scheduler was moved to."""
    warmup, total, step = inputs.args[1:]
    if step < warmup:
        where = _("During warm-up the factor is step / warmup_steps (0 at step 0, 1 at the end).")
    elif step >= total and step > warmup:  # at step == total == warmup progress is still 0
        where = _("After total_steps the factor stays at 0: clamp progress to at most 1.")
    else:
        where = _(
            "After warm-up, progress = (step - warmup_steps) / max(1, total_steps - "
            "warmup_steps) goes from 0 to 1: the cosine starts where the warm-up ended."
        )
    return where + _(
        " LambdaLR multiplies each group's base rate by your function of step alone: return "
        "a factor between 0 and 1 (not a learning rate), with no counter of your own (it is "
        "called once per parameter group)."
    )


# The scheduler is built (construct=3) and moved to step k with scheduler.step(k); the
# optimizer's learning rates afterwards are compared with the reference's (mutates).
MAKE_WARMUP_COSINE = Contract(
    "make_warmup_cosine",
    _contract_scheduler,
    _draw_warmup_cosine,
    families=("values", "edges"),
    construct=3,
    method="step",
    mutates=(0,),
    arg_names=("optimizer", "warmup_steps", "total_steps", "step"),
    hint=_warmup_hint,
    examples=16,
)


@uses(MAKE_WARMUP_COSINE)
def check_make_warmup_cosine(make_warmup_cosine) -> None:
    """The contract: every parameter group's learning rate at any step, up to four past the
    end, for warm-ups from 0 steps, against the formula."""


# ---------------------------------------------------------------------------------------
# Exercise 5: EarlyStopping
# ---------------------------------------------------------------------------------------

_STOP_CASES = [
    # patience, min_delta (None: left to its default), validation losses
    (2, 0.0, [1.0, 0.8, 0.85, 0.9, 0.7]),
    (3, 0.0, [1.0, 0.9, 0.95, 0.96, 0.8, 0.85, 0.86, 0.87, 0.5]),
    (1, 0.0, [0.5, 0.5, 0.4]),  # an equal loss is no improvement
    (2, 0.05, [1.0, 0.97, 0.94, 0.93, 0.92, 0.91]),  # gains under min_delta do not count
    (4, 0.0, [3.0, 2.0, 1.5, 1.2, 1.1, 1.05]),  # never stops
    # exactly min_delta better is not better (values exact in binary, so no rounding)
    (1, 0.25, [1.0, 0.75, 0.5]),
    (2, 0.25, [2.0, 1.5, 1.25, 1.0, 0.75, 0.625]),
    (2, 0.05, [4.0, 3.9, 3.92, 3.7, 3.69, 3.68]),  # min_delta is absolute, not relative
    (2, None, [1.0, 0.999, 0.9985, 0.998, 0.9979]),  # the default min_delta is 0
    (3, None, [2.0, 2.0, 1.9, 1.9, 1.9]),
    (2, 0.0, [float("nan"), float("nan"), 1.0]),  # no improvement at all: restore_best keeps
    (1, 0.0, [float("inf")]),  # an infinite loss is no improvement on inf either
    (3, 0.0, []),  # restore_best before any step
    (2, 0.0, [1.0, 0.9, float("nan"), float("nan")]),
]


def _stop_case(
    EarlyStopping, patience, min_delta, losses, device, seed, until_stop=True, double=False
):
    shown_delta = "" if min_delta is None else f", min_delta={min_delta}"
    what = f"EarlyStopping(patience={patience}{shown_delta})"
    if double:
        what = _("{what}, on a float64 model").format(what=what)
    # The reference decides how many epochs the run lasts: until it says stop.
    ref = _RefEarlyStopping(patience, 0.0 if min_delta is None else min_delta)
    expected_steps, best_epoch = [], None
    for epoch, loss in enumerate(losses):
        best_before = ref.best_loss
        expected = ref.step(loss)
        if ref.bad_epochs == 0:
            best_epoch = epoch
        expected_steps.append((expected, ref.best_loss, best_before))
        if expected and until_stop:
            break
    fed = losses[: len(expected_steps)]
    case = {
        "device": device,
        "seed": seed,
        "patience": patience,
        "min_delta": min_delta,
        "losses": fed,
        "double": double,
    }
    seen = observe(probes.probe_EarlyStopping, EarlyStopping, case, what)
    for epoch, (expected, ref_best, best_before) in enumerate(expected_steps):
        loss, shown = fed[epoch], fed[: epoch + 1]
        if epoch >= len(seen["steps"]):
            name, message = seen["step_raised"]
            _stub_or(seen["step_raised"])
            raise CheckError(
                _(
                    "{what}: after the validation losses {shown}, step raised {name}: {message}"
                ).format(what=what, shown=shown, name=name, message=message)
            )
        step = seen["steps"][epoch]
        got = step["returned"]  # a bool: the contract checked the type
        hint = _stop_hint(expected, min_delta, loss, best_before)
        if got != expected:
            raise CheckError(
                _(
                    "{what}: after the validation losses {shown}, step returned {got}, expected "
                    "{expected}. {hint}"
                ).format(what=what, shown=shown, got=got, expected=expected, hint=hint)
            )
        best = step["best_loss"]
        check_type(best, (float, int), f"{what}.best_loss")
        if not (best == ref_best or _close(best, ref_best, 1e-9)):
            raise CheckError(
                _(
                    "{what}: after the validation losses {shown}, best_loss is {best}, expected "
                    "{ref_best}. {hint}"
                ).format(what=what, shown=shown, best=best, ref_best=ref_best, hint=hint)
            )
    if seen["restore_raised"] is not None:
        _stub_or(seen["restore_raised"])
        name, message = seen["restore_raised"]
        if best_epoch is None:
            raise CheckError(
                _(
                    "{what}: after the validation losses {fed} (none an improvement) restore_best "
                    "raised {name}: {message} With no best weights stored yet, restore_best should "
                    "leave the model as it is (if self.best_state is None: return)."
                ).format(what=what, fed=fed, name=name, message=message)
            )
        raise CheckError(
            _(
                "{what}: restore_best raised {name}: {message} Keep a copy of the best epoch's "
                "weights in step (when the loss improves) and load it with "
                "model.load_state_dict."
            ).format(what=what, name=name, message=message)
        )
    if seen.get("same_parameters") is False:
        raise CheckError(
            _(
                "{what}: after restore_best the model's parameters are other tensor objects than "
                "before, so the caller's optimizer no longer updates them (load_state_dict with "
                "assign=True, or parameters replaced). Load with model.load_state_dict(best), "
                "which copies the stored values into the existing parameters."
            ).format(what=what)
        )
    start_model = probes.build_stop_model(seed, device)
    start = probes.model_state(start_model.double() if double else start_model)
    # the probe adds 1 to every weight and buffer before each step
    steps_done = len(fed) if best_epoch is None else best_epoch + 1
    for key, value in seen["restored"].items():
        wanted = (start[key] + steps_done).to(value.device)
        if value.dtype.is_floating_point:
            # float64: a copy kept in float32 (v.float()) loses the last digits
            rtol = 1e-12 if double else 1e-5
            same = value.shape == wanted.shape and torch.allclose(value, wanted, rtol=rtol)
        else:
            same = torch.equal(value, wanted)
        if same:
            continue
        if double and value.shape == wanted.shape and torch.allclose(value, wanted):
            raise CheckError(
                _(
                    "{what}: after restore_best {key!r} is the best epoch's only to about 7 "
                    "digits: the stored copy was kept in float32 (v.float(), or a dtype of "
                    "your own). Store the tensors as they are, v.detach().clone(), in the "
                    "model's own dtype."
                ).format(what=what, key=key)
            )
        if best_epoch is None:
            raise CheckError(
                _(
                    "{what}: after the validation losses {fed} (none an improvement), restore_best "
                    "changed {key!r}. With no best weights stored yet, restore_best should leave "
                    "the model as it is."
                ).format(what=what, fed=fed, key=key)
            )
        if not any(key.endswith(n) for n in ("weight", "bias")):
            raise CheckError(
                _(
                    "{what}: after restore_best the buffer {key!r} is not the best epoch's. Copy "
                    "the whole model.state_dict() (parameters and buffers, such as batch norm's "
                    "running statistics), not only model.parameters()."
                ).format(what=what, key=key)
            )
        raise CheckError(
            _(
                "{what}: after restore_best {key!r} is not the one from the best epoch (epoch "
                "{best_epoch}, loss {losses}). model.state_dict() returns the live tensors, "
                "which keep changing as training goes on: store a copy, {{k: v.detach().clone() "
                "for k, v in model.state_dict().items()}}, when the loss improves, and only "
                "then."
            ).format(what=what, key=key, best_epoch=best_epoch, losses=losses[best_epoch])
        )
    _stopper_side_effects(seen, what, expected_steps[-1][1] if expected_steps else math.inf)
    again = seen.get("restored_again")
    raised_again = seen.get("restore_again_raised")
    if raised_again is not None or (
        again is not None
        and best_epoch is not None
        and not all(torch.equal(again[k], v) for k, v in seen["restored"].items())
    ):
        raise CheckError(
            _(
                "{what}: a second restore_best, after more training, did not load the best "
                "epoch's weights again{raised}. restore_best loads the stored copy and keeps it: "
                "a caller may train on and restore again. Do not delete or reset the stored "
                "weights in restore_best."
            ).format(
                what=what,
                raised="" if raised_again is None else f" ({raised_again[0]})",
            )
        )


def _stopper_side_effects(seen: dict, what: str, ref_best: float) -> None:
    """What a stopper must leave alone: best_loss starts at inf and survives restore_best; the
    caller's gradients and modes; the working folder (a file of fixed name is one copy for
    every stopper)."""
    initial = seen.get("initial_best", math.inf)
    if not (isinstance(initial, (int, float)) and initial == math.inf):
        raise CheckError(
            _(
                "{what}: best_loss starts at {initial!r}, expected math.inf: then any first "
                "loss, however large (an exploding run's 1e12 included), is an improvement."
            ).format(what=what, initial=initial)
        )
    if seen.get("grads_kept") is False:
        raise CheckError(
            _(
                "{what}: after step and restore_best the model's .grad is not what the caller "
                "left there. The stopper only reads the model (and restore_best loads weights): "
                "no zero_grad, no backward; gradients belong to the training loop."
            ).format(what=what)
        )
    if seen.get("modes_kept") is False:
        raise CheckError(
            _(
                "{what}: after step and restore_best the model is in another mode (train/eval) "
                "than the caller left it in. Storing and loading weights needs no mode: call "
                "neither model.eval() nor model.train()."
            ).format(what=what)
        )
    after = seen.get("best_after_restore", ref_best)
    if not (after == ref_best or (isinstance(after, float) and _close(after, ref_best, 1e-9))):
        raise CheckError(
            _(
                "{what}: after restore_best, best_loss is {after!r}, expected {ref_best!r}: "
                "restore_best loads the best weights and changes nothing else (the caller may "
                "print best_loss, or restore again)."
            ).format(what=what, after=after, ref_best=ref_best)
        )
    if seen.get("new_files"):
        raise CheckError(
            _(
                "{what} wrote {files} into the working folder. A file of a fixed name is shared "
                "by every stopper (two runs overwrite each other's best weights) and is left "
                "behind: keep the copy in the object, {{k: v.detach().clone() for k, v in "
                "model.state_dict().items()}}."
            ).format(what=what, files=seen["new_files"])
        )


def _stop_hint(expected: bool, min_delta, loss: float, best: float) -> str:
    """What to try, given the reference's decision and the best loss before this step."""
    delta = 0.0 if min_delta is None else min_delta
    if isinstance(loss, float) and math.isnan(loss):
        return _("A NaN loss is not an improvement: test `val_loss < best_loss - min_delta`.")
    if isinstance(loss, float) and math.isfinite(best) and loss == best - delta:
        exactly = (
            _("exactly min_delta={delta} below").format(delta=delta) if delta > 0 else _("equal to")
        )
        return _(
            "{loss} is {exactly} the best loss before it: not an improvement. Only val_loss "
            "< best_loss - min_delta (strictly) counts."
        ).format(loss=loss, exactly=exactly)
    if min_delta is None:
        return _(
            "min_delta was left to its default, which is 0.0: every strictly lower loss is "
            "an improvement."
        )
    if delta > 0:
        return _(
            "With min_delta={delta}, only a loss below best_loss - min_delta is an "
            "improvement (min_delta is an absolute amount, not a fraction); smaller gains "
            "count as bad epochs and do not change best_loss."
        ).format(delta=delta)
    if expected:
        return _(
            "Count consecutive epochs without improvement and return True whenever that "
            "count has reached patience (>=, so also on later bad epochs if the caller goes "
            "on)."
        )
    return _(
        "An improvement means val_loss < best_loss - min_delta; it resets the count of "
        "bad epochs to zero. Stop only when the count reaches patience."
    )


def _first_step_hint(patience: int, min_delta: float, loss: float) -> str:
    """_stop_hint for a fresh stopper's first step (the best loss before it is inf)."""
    return _stop_hint(_RefEarlyStopping(patience, min_delta).step(loss), min_delta, loss, math.inf)


class _ContractEarlyStopping(_RefEarlyStopping):
    def step(self, val_loss: float, model: nn.Module) -> bool:
        return super().step(val_loss)


def _draw_early_stopping(d: Draw) -> Inputs:
    """EarlyStopping(patience, min_delta) built (construct=2), then its first step: a loss
    that improves on inf, or inf or NaN (which do not), and a model it must only read."""
    patience = d.size(1, 3)
    min_delta = d.draw(st.sampled_from([0.0, 0.05, 0.25]))
    loss = d.draw(st.sampled_from([1.0, 0.5, math.inf, math.nan]))
    spec = {"seed": d.draw(st.integers(0, 99)), "training": d.draw(st.booleans())}
    model = Build(probes.build_contract_stop_model, spec, _("a model with batch norm"))
    return Inputs((patience, min_delta, loss, model))


# The first step of a fresh stopper: True or False (a bool) as the reference decides, and
# the model (weights, buffers, modes) left as it was, on the CPU and on another device.
# Sequences of losses and restore_best are checked by the hand-written lines below.
EARLY_STOPPING = Contract(
    "EarlyStopping",
    _ContractEarlyStopping,
    _draw_early_stopping,
    families=("values", "edges", "device"),
    construct=2,
    method="step",
    arg_names=("patience", "min_delta", "val_loss", "model"),
    hint=lambda family, inputs: _first_step_hint(*inputs.args[:3]),
)


@uses(EARLY_STOPPING)
def check_EarlyStopping(EarlyStopping) -> None:
    """The contract: the first step's decision, a bool, the model only read. Here: stop
    decisions, best loss and restored weights for several loss sequences."""
    device = get_device()
    for i, (patience, min_delta, losses) in enumerate(_STOP_CASES):
        _stop_case(EarlyStopping, patience, min_delta, losses, device, seed=i)
    g = torch.Generator().manual_seed(9)
    # a caller that goes on after True: the count has still reached patience, until the
    # next improvement resets it
    for i, (patience, losses) in enumerate(
        [(2, [1.0, 1.1, 1.2, 1.3, 0.5, 0.6, 0.7, 0.8]), (1, [2.0, 2.5, 2.5, 1.0, 1.0])]
    ):
        _stop_case(EarlyStopping, patience, 0.0, losses, device, seed=40 + i, until_stop=False)
    # a float64 model: the stored copy keeps the model's dtype
    _stop_case(EarlyStopping, 2, 0.0, [1.0, 0.5, 0.7, 0.8], device, seed=50, double=True)
    for i in range(5):  # random walks, in steps of 1/1024 so that no comparison is rounded
        walk = 1 + torch.randn(12, generator=g).cumsum(0) * 0.1
        losses = [round(float(v) * 1024) / 1024 for v in walk]
        _stop_case(EarlyStopping, 1 + i % 3, (i % 2) / 64, losses, device, seed=30 + i)


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
        self._runs: dict[int, tuple[list[float], dict]] = {}

    def uninterrupted(self, split: int) -> tuple[list[float], dict]:
        """(every epoch's loss, the checkpoint after ``split`` epochs) of one run, done once."""
        if split not in self._runs:
            model, optimizer, scheduler = self.fresh(self.seed)
            losses = self.run(model, optimizer, scheduler, 0, split)
            states = _ref_checkpoint(model, optimizer, scheduler, split)  # copies
            losses += self.run(model, optimizer, scheduler, split, self.total_epochs)
            self._runs[split] = (losses, states)
        return self._runs[split]

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
    expected, _states = setup.uninterrupted(split)
    model, optimizer, scheduler = setup.fresh(setup.seed + 1)  # a new process: other weights
    start = restore(model, optimizer, scheduler)
    if start != split:
        raise CheckError(
            _(
                "{what}: load_checkpoint returned {start!r}, expected {split}: the number of "
                "epochs already finished, which is where the loop continues (range(start, "
                "num_epochs))."
            ).format(what=what, start=start, split=split)
        )
    rest = setup.run(model, optimizer, scheduler, split, setup.total_epochs)
    got = first + rest
    if not all(_close(a, b, 1e-4) for a, b in zip(got, expected, strict=True)):
        shown = ", ".join(f"{v:.4f}" for v in got)
        want = ", ".join(f"{v:.4f}" for v in expected)
        raise CheckError(
            _(
                "{what}: stopping after epoch {split} and resuming gave the epoch losses "
                "[{shown}], an uninterrupted run gave [{want}]. {hint}"
            ).format(what=what, split=split, shown=shown, want=want, hint=hint)
        )


def _saved(save_checkpoint, setup: _ResumeSetup, split: int, filename: str):
    """Train ``split`` epochs here; the learner's save_checkpoint writes the state. Returns
    (the losses so far, the state that was saved, what the probe saw)."""
    losses, states = setup.uninterrupted(split)
    first = losses[:split]
    case = {**setup.case(setup.seed + 7), "states": states, "epoch": split, "filename": filename}
    # an answer that pickles the objects raised in the contract already (its LambdaLR)
    seen = observe(probes.probe_save_checkpoint, save_checkpoint, case, "save_checkpoint")
    return first, states, seen


def _check_saved_file(seen: dict, states: dict, epoch: int, filename: str) -> dict:
    """The checkpoint file: written, readable with weights_only, the four entries (that the
    objects saved are left as they were is the contract's)."""
    # returned None, the model and optimizer left as they were: the contract
    if seen["load_error"] is not None:  # pickled objects are refused by weights_only
        raise CheckError(
            _(
                "torch.load(path, weights_only=True) could not read the checkpoint "
                "({load_error}). Save state_dicts and plain numbers, never the model or "
                "optimizer objects themselves."
            ).format(load_error=seen["load_error"])
        )
    checkpoint = seen["checkpoint"]
    if not isinstance(checkpoint, dict):
        raise CheckError(
            _(
                "the saved checkpoint is a {type_name}; save one dict with the keys 'model', "
                "'optimizer', 'scheduler' and 'epoch'."
            ).format(type_name=wire.type_name(checkpoint))
        )
    wanted = {"model", "optimizer", "scheduler", "epoch"}
    if set(checkpoint) != wanted:
        missing = sorted(wanted - set(checkpoint))
        hint = (
            _(
                " Without the optimizer's state (Adam's moment estimates, momentum buffers) the "
                "resumed run takes different steps."
            )
            if "optimizer" in missing
            else _(" Without the scheduler's state the resumed run starts the schedule again.")
            if "scheduler" in missing
            else ""
        )
        raise CheckError(
            _("the checkpoint has the keys {checkpoint}, expected {wanted}.{hint}").format(
                checkpoint=sorted(checkpoint, key=str), wanted=sorted(wanted), hint=hint
            )
        )
    if checkpoint["epoch"] != epoch or type(checkpoint["epoch"]) is not int:
        raise CheckError(
            _(
                "checkpoint['epoch'] is {epoch!r} (a {type_name}), expected the int {epoch2} "
                "that was passed in: save epoch itself, not a tensor or epoch + 1."
            ).format(
                epoch=checkpoint["epoch"],
                type_name=wire.type_name(checkpoint["epoch"]),
                epoch2=epoch,
            )
        )
    saved_model = checkpoint["model"]
    if not isinstance(saved_model, dict):
        raise CheckError(
            _("checkpoint['model'] is a {type_name}; save model.state_dict().").format(
                type_name=wire.type_name(saved_model)
            )
        )
    for key, value in states["model"].items():
        saved = saved_model.get(key)
        if not isinstance(saved, torch.Tensor) or not torch.equal(saved.cpu(), value.cpu()):
            kind = _("a parameter") if key.endswith(("weight", "bias")) else _("a buffer")
            raise CheckError(
                _(
                    "checkpoint['model'] should be model.state_dict(); {key!r} ({kind}) is {value}. "
                    "model.state_dict() holds the parameters and the buffers (batch norm's running "
                    "statistics); model.parameters() alone misses the buffers."
                ).format(
                    key=key,
                    kind=kind,
                    value=_("missing from it") if saved is None else _("different"),
                )
            )
    optimizer_state = checkpoint["optimizer"]
    if (
        not isinstance(optimizer_state, dict)
        or not optimizer_state.get("state")
        or not isinstance(optimizer_state.get("param_groups"), list)
        or len(optimizer_state["param_groups"]) != len(states["optimizer"]["param_groups"])
    ):
        raise CheckError(
            _(
                "checkpoint['optimizer'] holds no per-parameter state: save "
                "optimizer.state_dict() (both its 'state' and its 'param_groups')."
            )
        )
    scheduler_state = checkpoint["scheduler"]
    if (
        not isinstance(scheduler_state, dict)
        or scheduler_state.get("last_epoch") != states["scheduler"]["last_epoch"]
    ):
        got = scheduler_state.get("last_epoch") if isinstance(scheduler_state, dict) else None
        raise CheckError(
            _(
                "checkpoint['scheduler'] says the schedule is at step {got!r}, expected "
                "{last_epoch}: save scheduler.state_dict()."
            ).format(got=got, last_epoch=states["scheduler"]["last_epoch"])
        )
    lacking = sorted(set(states["scheduler"]) - set(scheduler_state))
    if lacking:  # a hand-made dict with the step alone: load_state_dict needs every entry
        raise CheckError(
            _(
                "checkpoint['scheduler'] lacks {lacking}, which scheduler.state_dict() holds "
                "and scheduler.load_state_dict() needs: save scheduler.state_dict() itself, "
                "not a dict of your own."
            ).format(lacking=lacking)
        )
    extra = sorted(set(seen.get("files", [filename])) - {filename})
    if extra:
        raise CheckError(
            _(
                "save_checkpoint left {extra} beside {filename!r} in the caller's folder: write "
                "exactly the path given and nothing else (a temporary file written first must "
                "be renamed onto the path, os.replace, or removed)."
            ).format(extra=extra, filename=filename)
        )
    return checkpoint


def _contract_optimizer_and_scheduler(model_at: int) -> tuple[Build, Build]:
    """The contract's SGD over the model at ``model_at`` and a LambdaLR on that SGD."""
    optimizer = Build(
        probes.build_contract_optimizer, {"lr": 0.1, "momentum": 0.9}, "SGD", of=(model_at,)
    )
    scheduler = Build(
        probes.build_contract_scheduler,
        {"factors": [1.0, 0.5, 0.25]},
        "a LambdaLR",
        of=(model_at + 1,),
    )
    return optimizer, scheduler


def _draw_save_checkpoint(d: Draw) -> Inputs:
    name = d.draw(st.sampled_from(["checkpoint.pt", "nested-name.ckpt"]))
    path = Build(probes.build_checkpoint_path, {"name": name}, _("a new path"))
    optimizer, scheduler = _contract_optimizer_and_scheduler(1)
    model = _contract_model(d, 3, 0.3)
    return Inputs((path, model, optimizer, scheduler, d.draw(st.integers(0, 9))))


def _contract_save(path, model, optimizer, scheduler, epoch) -> None:
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "epoch": epoch,
        },
        path,
    )


# Returns None and leaves the objects as they were: the model's weights, modes and
# gradients (train or eval mode, .grad set or not), the optimizer's settings and state.
SAVE_CHECKPOINT = Contract(
    "save_checkpoint",
    _contract_save,
    _draw_save_checkpoint,
    families=("values",),
    mutates=(2,),  # compared with the reference's: saving leaves it as it was
    arg_names=("path", "model", "optimizer", "scheduler", "epoch"),
    examples=6,
)


@uses(SAVE_CHECKPOINT)
def check_save_checkpoint(save_checkpoint) -> None:
    """The contract: None returned, the objects left as they were. Here: the file holds all
    four entries, loads with weights_only, and resumes exactly."""
    device = get_device()
    stayed = observe(
        probes.probe_save_checkpoint_device, save_checkpoint, {"seed": 3}, "save_checkpoint"
    )["stayed"]
    if stayed is False:
        raise CheckError(
            _(
                "save_checkpoint, given a model on another device (standing in for a GPU), "
                "moved it to the CPU or mixed it with CPU tensors: model.cpu() or "
                "model.to(...) moves the caller's model itself, not a copy, and its next "
                "training step would fail. Save model.state_dict() as it is: torch.load(..., "
                "map_location=device) moves the tensors when they are loaded."
            )
        )
    _losses, states, seen = _saved(
        save_checkpoint, _ResumeSetup(device, seed=3, total_epochs=1), 1, "nested-name.ckpt"
    )
    _check_saved_file(seen, states, 1, "nested-name.ckpt")
    for seed, split in [(4, 2), (5, 3)]:
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


def _draw_load_checkpoint(d: Draw) -> Inputs:
    steps, epoch = d.draw(st.integers(1, 4)), d.draw(st.integers(0, 9))
    spec = {"seed": d.draw(st.integers(0, 99)), "steps": steps, "epoch": epoch}
    label = _("a checkpoint saved after {steps} steps, at epoch {epoch}").format(
        steps=steps, epoch=epoch
    )
    optimizer, scheduler = _contract_optimizer_and_scheduler(1)
    model = _contract_model(d, 3, 0.0)
    path = Build(probes.build_contract_checkpoint, spec, label)
    return Inputs((path, model, optimizer, scheduler, "cpu"))


def _contract_load(path, model, optimizer, scheduler, device) -> int:
    checkpoint = torch.load(path, map_location=device, weights_only=True)
    return _ref_restore(checkpoint, model, optimizer, scheduler)


# Returns the stored epoch (an int); afterwards the model (weights and buffers; its modes
# and gradients as they were) and the optimizer (its rates and momentum buffers) are the
# reference's. The scheduler and the resumed run are checked by the hand-written lines.
LOAD_CHECKPOINT = Contract(
    "load_checkpoint",
    _contract_load,
    _draw_load_checkpoint,
    families=("values",),
    mutates=(1, 2),
    arg_names=("path", "model", "optimizer", "scheduler", "device"),
    examples=6,
)


def _schedule_value(value) -> list:
    """A scheduler state entry (an int, or a list or tuple of rates) as a list of floats."""
    if isinstance(value, (list, tuple)):
        return [float(v) for v in value]
    return [None if value is None else float(value)]


@uses(LOAD_CHECKPOINT)
def check_load_checkpoint(load_checkpoint) -> None:
    """The contract: the epoch returned, the model and optimizer restored. Here: a resumed
    run repeats an uninterrupted one, epoch loss for epoch loss; the optimizer still drives
    the model's parameters; a checkpoint that does not fit is refused."""
    device = get_device()
    for seed, split, absent_gpu in [(6, 2, False), (7, 3, False), (8, 1, True)]:
        setup = _ResumeSetup(device, seed)
        losses, checkpoint = setup.uninterrupted(split)
        first = losses[:split]
        case = {**setup.case(setup.seed + 1), "checkpoint": checkpoint}  # other weights
        # a checkpoint a GPU run saved, read on a machine without that GPU: map_location
        case["absent_gpu"] = absent_gpu
        what = (
            _("load_checkpoint (on a checkpoint saved on a GPU this machine does not have)")
            if absent_gpu
            else "load_checkpoint"
        )
        seen = observe(probes.probe_load_checkpoint, load_checkpoint, case, what)
        # returned an int, model and optimizer restored: the contract
        if seen.get("file_kept") is False:
            raise CheckError(
                _(
                    "after load_checkpoint the checkpoint file is gone. Loading only reads it: if "
                    "the resumed run crashes too, the caller needs the file again. Leave "
                    "removing old checkpoints to the caller."
                )
            )
        if not seen["optimizer_tracks_model"]:
            raise CheckError(
                _(
                    "after load_checkpoint the optimizer no longer holds the model's parameters, so "
                    "optimizer.step() would not train the model. Load the states into the objects "
                    "you were given: model.load_state_dict(checkpoint['model']) copies into the "
                    "existing parameters (do not use assign=True, and do not build a new model or "
                    "optimizer)."
                )
            )

        saved_schedule = probes.as_data(checkpoint["scheduler"])
        differ = sorted(
            key
            for key in ("last_epoch", "_step_count", "_last_lr", "base_lrs")
            if key in saved_schedule
            and _schedule_value(seen["scheduler"].get(key)) != _schedule_value(saved_schedule[key])
        )
        if differ:  # e.g. only scheduler.last_epoch set: get_last_lr() still the fresh one's
            raise CheckError(
                _(
                    "after load_checkpoint the scheduler's {keys} are not the saved ones: "
                    "setting a single attribute (such as last_epoch) restores part of it, and "
                    "scheduler.get_last_lr() then reports a rate the optimizer is not using. "
                    "Call scheduler.load_state_dict(checkpoint['scheduler'])."
                ).format(keys=differ)
            )

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
    setup = _ResumeSetup(device, 10)
    model, optimizer, scheduler = setup.fresh(setup.seed)
    checkpoint = _ref_checkpoint(model, optimizer, scheduler, 0)
    dropped = sorted(checkpoint["model"])[-1]
    del checkpoint["model"][dropped]  # a checkpoint of some other model
    seen = observe(
        probes.probe_load_checkpoint_mismatch,
        load_checkpoint,
        {**setup.case(setup.seed + 1), "checkpoint": checkpoint},
        "load_checkpoint",
    )
    if seen["raised"] is None:
        raise CheckError(
            _(
                "load_checkpoint accepted a checkpoint whose 'model' entry lacks {dropped!r}, "
                "which leaves that tensor as it was (randomly initialised) without a word. Load "
                "strictly, model.load_state_dict(checkpoint['model']) (strict=True is the "
                "default), so that a checkpoint that does not fit the model raises an error."
            ).format(dropped=dropped)
        )
    checkpoint = _ref_checkpoint(model, optimizer, scheduler, 0)
    seen = observe(
        probes.probe_load_checkpoint_pickled,
        load_checkpoint,
        {**setup.case(setup.seed + 1), "checkpoint": checkpoint},
        "load_checkpoint",
    )
    if seen["raised"] is None:
        raise CheckError(
            _(
                "load_checkpoint read a checkpoint that also holds a pickled Python object "
                "without a word: it unpickled the file with weights_only=False, which runs "
                "whatever code such an object names. Read it with torch.load(path, "
                "map_location=device, weights_only=True), which refuses anything but tensors "
                "and plain data."
            )
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
MAX_FLOPS = 3_000_000  # forward FLOPs per image, as FlopCounterMode counts them; no stopwatch
MIN_ACCURACY = 0.95


def _squashed_ending(outputs: torch.Tensor) -> str | None:
    """What the model's last operation looks like from its outputs, if not raw logits."""
    out = outputs.detach().double()
    ones = torch.ones(len(out), dtype=out.dtype, device=out.device)
    if bool((out >= 0).all()) and torch.allclose(out.sum(1), ones, atol=1e-4):
        return "a softmax: every row is non-negative and sums to 1"
    if bool((out <= 0).all()) and torch.allclose(out.logsumexp(1), 0 * ones, atol=1e-4):
        return "a log-softmax: every row's logsumexp is 0"
    if bool(((out >= 0) & (out <= 1)).all()):
        return "a sigmoid: every output lies between 0 and 1"
    if bool((out >= 0).all()) and float((out == 0).double().mean()) > 0.05:
        return "a ReLU: no output is negative and many are exactly 0"
    if bool((out.abs() <= 1).all()):
        return "a tanh (or another squashing function): every output lies between -1 and 1"
    return None


def _capped_logits(outputs) -> float | None:
    """The bound a clamp puts on the logits, if one does: the largest |logit| reached by two
    or more logits of one row (raw logits tie exactly almost never)."""
    if not isinstance(outputs, torch.Tensor) or outputs.ndim != 2 or not outputs.numel():
        return None
    size = outputs.detach().double().abs()
    bound = float(size.max())
    if bound > 0 and math.isfinite(bound) and bool(((size == bound).sum(dim=1) >= 2).any()):
        return bound
    return None


def _draw_digits_batch(d: Draw) -> Inputs:
    """A float32 batch (N, 1, 8, 8) of pixels in [0, 1], one image included (the text asks
    nothing of other precisions, so a forward that calls x.float() is right); DigitsCNN()
    takes no arguments (construct=0), its forward the batch. The batch's builder
    also seeds the global random state, so the model built right after it gets the same
    initial weights on every run (the learner's architecture is free: nothing to fill)."""
    n = d.size(1, 7)
    dtype = "float32"
    spec = {"seed": d.draw(st.integers(0, 99)), "n": n, "dtype": dtype}
    label = _("a {dtype} batch of shape ({n}, 1, 8, 8)").format(dtype=dtype, n=n)
    return Inputs((Build(probes.build_digits_batch, spec, label),))


def _compare_logits_shape(got, expected, what: str, inputs: Inputs) -> None:
    """The architecture is the learner's: only the logits' shape and dtype are the text's."""
    if not isinstance(got, torch.Tensor):
        raise CheckError(
            _("{what} returned {got}, expected a tensor of logits.").format(
                what=what, got=wire.type_name(got)
            )
        )
    if tuple(got.shape) != tuple(expected.shape) or got.dtype != expected.dtype:
        n = expected.shape[0]
        raise CheckError(
            _(
                "{what} returned {dtype} of shape {got_shape}, expected {edtype} of shape "
                "({n}, 10): keep the batch dimension, even for a batch of one (no .squeeze())."
            ).format(
                what=what,
                dtype=got.dtype,
                got_shape=tuple(got.shape),
                edtype=expected.dtype,
                n=n,
            )
        )


class _RefDigitsCNN(nn.Module):
    """The text's suggested design (only its output's shape, dtype and device are compared)."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(128, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


# DigitsCNN() built with no arguments (construct=0) and called on a drawn batch: logits of
# shape (N, 10) in the batch's dtype and on its device, for any N and any memory layout.
# Its architecture is free, so values and gradients are not compared (the hand-written
# lines below check that the convolution is used and that training reaches the accuracy).
DIGITS_CNN = Contract(
    "DigitsCNN",
    _RefDigitsCNN,
    _draw_digits_batch,
    # not "device": a LazyLinear moved to meta before its first batch cannot infer its
    # size there (on a GPU it can), so meta would reject a right answer; not "dtypes": the
    # text asks for float32 batches only
    families=("values", "edges", "strides"),
    construct=0,
    fill=False,  # nothing to compare weights for (and a LazyLinear has none yet)
    compare=_compare_logits_shape,
    arg_names=("x",),
)


@uses(DIGITS_CNN)
def check_DigitsCNN(DigitsCNN) -> None:
    """The contract: logits of shape (N, 10) in the batch's dtype, for any N (1 included),
    dtype and strided layout. Here: a channels-last batch, raw logits, a convolution that
    is used, size (parameters and FLOPs, counted: no wall-clock limit judges
    a student), then the real training run: accuracy and raw logits after training."""
    device = get_device()
    g = torch.Generator().manual_seed(1)
    sizes = (5, 6)  # other sizes, dtypes and strided layouts: the contract
    inputs = [torch.rand(n, 1, 8, 8, generator=g).to(device) for n in sizes]
    layouts = ["contiguous", "channels_last"]
    case = {"seed": DIGITS_RECIPE["seed"], "device": device, "inputs": inputs, "layouts": layouts}
    seen = observe(probes.probe_DigitsCNN, DigitsCNN, case, "DigitsCNN()")
    if not seen["is_module"]:
        raise CheckError(
            _(
                "DigitsCNN() should be a Module, got {type_name}: write class "
                "DigitsCNN(nn.Module) and call super().__init__() first."
            ).format(type_name=seen["type"])
        )
    n_params = seen["n_params"]
    if n_params is not None and n_params > MAX_PARAMETERS:
        raise CheckError(
            _(
                "DigitsCNN has {n_params:,} parameters; keep it under {max_parameters:,} so it "
                "trains in seconds on a CPU (8x8 images need few channels)."
            ).format(n_params=n_params, max_parameters=MAX_PARAMETERS)
        )
    if not seen["has_conv"]:
        raise CheckError(
            _("DigitsCNN has no convolution (no 4-d weight): use at least one nn.Conv2d.")
        )
    described = {
        "contiguous": "",
        "transposed": "non-contiguous ",
        "channels_last": "channels-last (permuted from (N, H, W, C)) ",
    }
    for n, layout, output in zip(sizes, layouts, seen["outputs"], strict=False):
        batch = f"a {described[layout]}batch of shape ({n}, 1, 8, 8)"
        if "raised" in output:  # usually a Linear layer with the wrong in_features
            _stub_or(output["raised"])
            name, message = output["raised"]
            raise CheckError(
                _(
                    "DigitsCNN on {batch} raised {name}: {message} Print x.shape after each layer; "
                    "each MaxPool2d(2) halves H and W, and nn.Flatten() (or x.flatten(1)) keeps the "
                    "batch dimension"
                ).format(batch=batch, name=name, message=message)
                + (
                    _(
                        ". .view needs memory in the usual order, which a permuted batch (and the "
                        "convolution's output on it) does not have: use nn.Flatten(), x.flatten(1) or "
                        "x.reshape(len(x), -1)."
                    )
                    if "view" in message
                    else _(".")
                )
            )
        check_shape(output["out"], (n, 10), names="N classes", what=f"DigitsCNN on {batch}")
    if len(seen["outputs"]) != len(sizes):
        raise CheckError(_("DigitsCNN: the outputs for every test batch did not come back."))
    ending = _squashed_ending(torch.cat([o["out"] for o in seen["outputs"]]))
    if ending is not None and ending.startswith(("a softmax", "a log-softmax")):
        raise CheckError(
            _(
                "DigitsCNN's outputs look like {ending}. Return raw logits, the last Linear "
                "layer's output as it is: CrossEntropyLoss applies log-softmax itself."
            ).format(ending=ending)
        )
    if seen.get("same_again") is False:
        raise CheckError(
            _(
                "DigitsCNN in eval mode gave other logits for the same batch the second time: "
                "something random runs even in eval mode (F.dropout(x, p, training=True), say). "
                "Use an nn.Dropout layer, or F.dropout(x, p, training=self.training), so that "
                "model.eval() switches it off."
            )
        )
    alone = seen.get("first_alone")
    if alone is not None and len(seen["outputs"][0]["out"]) > 1:
        together = seen["outputs"][0]["out"][:1]
        if alone.shape == together.shape and not torch.allclose(
            alone.float(), together.float(), rtol=1e-3, atol=1e-4
        ):
            raise CheckError(
                _(
                    "DigitsCNN in eval mode gave the first image other logits alone than in "
                    "its batch: forward mixes the images of a batch (a mean or max over the "
                    "whole batch, say), so a prediction depends on which images come with it. "
                    "Work on each image by itself: x.mean(dim=(1, 2, 3), keepdim=True), not "
                    "x.mean(), or leave the pixels as they are."
                )
            )
    loud = seen.get("loud")
    cap = _capped_logits(loud)
    if cap is not None:
        raise CheckError(
            _(
                "DigitsCNN's logits for very bright images (pixels times 1000) stop at "
                "{cap:.4g}: in one row several logits are exactly {cap:.4g}, the mark of a "
                "clamp (or hardtanh, ReLU6) after the last layer. Return raw logits, the last "
                "Linear layer's output as it is."
            ).format(cap=cap)
        )
    if seen.get("device_mix"):
        raise CheckError(
            _(
                "DigitsCNN, moved with its batch to another device (here PyTorch's 'meta' "
                "device, as a GPU would be), mixed devices: {error}. A tensor made in forward "
                "with torch.zeros, torch.ones, torch.linspace... lands on the CPU unless you pass "
                "device=x.device (or use x.new_ones, torch.ones_like), and .cpu() (or .tolist(), "
                ".numpy()) moves one there, away from the layers' weights: keep every tensor on "
                "x's device."
            ).format(error=seen["device_mix"])
        )
    if not seen["conv_used"]:
        raise CheckError(
            _(
                "DigitsCNN has a Conv2d, but its weight gets no gradient: forward does not use "
                "it. Pass x through the convolution layers in forward."
            )
        )
    flops = seen.get("flops")
    if flops is not None and flops > MAX_FLOPS:
        raise CheckError(
            _(
                "DigitsCNN costs {flops:,} FLOPs per image in its forward pass, more than "
                "{max_flops:,}: use fewer channels, or pool before the wider layers (8x8 images "
                "need little)."
            ).format(flops=flops, max_flops=MAX_FLOPS)
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
    seen = observe(probes.probe_DigitsCNN_training, DigitsCNN, case, "training DigitsCNN")
    predictions, outputs = seen["predictions"], seen.get("outputs")
    if (
        not isinstance(predictions, torch.Tensor)
        or predictions.shape != labels.shape
        or not isinstance(outputs, torch.Tensor)
        or outputs.shape != (len(labels), 10)
    ):
        raise CheckError(
            _("training DigitsCNN: its outputs on the validation set did not come back.")
        )
    ending = _squashed_ending(outputs)
    acc = float((predictions.cpu() == labels).float().mean())
    # small logits alone are no proof of a squashing function: a model that learned too
    # little has them too, but its logits for very bright images (pixels times 1000) are
    # large, where a tanh keeps them within 1
    unbounded = (
        isinstance(loud, torch.Tensor) and bool(loud.numel()) and float(loud.abs().max()) > 1
    )
    if ending is not None and ending.startswith("a tanh") and (acc >= MIN_ACCURACY or unbounded):
        ending = None
    if ending is not None:
        raise CheckError(
            _(
                "after training, DigitsCNN's outputs on the validation set look like {ending} "
                "(validation accuracy {acc:.1%}). Return raw logits: end with the last Linear "
                "layer, with no softmax, log-softmax, sigmoid, ReLU or tanh after it; "
                "CrossEntropyLoss applies log-softmax itself."
            ).format(ending=ending, acc=acc)
        )
    if acc < MIN_ACCURACY:
        raise CheckError(
            _(
                "DigitsCNN reached {acc:.1%} validation accuracy with the course's recipe, "
                "expected at least {min_accuracy:.0%}. Two conv layers (16 and 32 channels, "
                "3x3, padding=1) each followed by ReLU and MaxPool2d(2), then a Linear layer, "
                "are enough; do not pool the 8x8 image down to 1x1 too early."
            ).format(acc=acc, min_accuracy=MIN_ACCURACY)
        )


# ---------------------------------------------------------------------------------------
# Exercise 9: train_logged
# ---------------------------------------------------------------------------------------


def _ref_train_logged(
    model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm
) -> int:
    model.train()
    step = 0
    for _epoch in range(num_epochs):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            lr = optimizer.param_groups[0]["lr"]
            optimizer.step()
            scheduler.step()
            writer.add_scalar("train/loss", loss.item(), step)
            writer.add_scalar("train/lr", lr, step)
            writer.add_scalar("train/grad_norm", grad_norm.item(), step)
            step += 1
    writer.flush()
    return step


def _logged_factors(total: int) -> list[float]:
    """A warm-up plus cosine that starts above zero, so every step's rate is its own."""
    return [0.1 + 0.9 * f for f in _warmup_cosine_table(2, total)]


_LOGGED_FACTORS = [0.2, 1.0, 0.6, 0.3, 0.1]  # every step's rate differs from the next one's


def _draw_train_logged(d: Draw) -> Inputs:
    """A model without dropout (so both runs take the same steps) in either mode, a loader,
    SGD and a LambdaLR over it, a recording writer, 1 to 3 epochs and a clipping threshold
    that clips every step, some or none."""
    model = _contract_model(d, 3, 0.0)
    loader = _contract_loader(d, "classification")
    # the first group's rate is the one to log; a resumed run's schedule is some steps along,
    # while the run's own step counter starts at 0
    groups, stepped = d.draw(st.sampled_from([1, 2])), d.draw(st.sampled_from([0, 2]))
    optimizer = Build(
        probes.build_contract_optimizer,
        {"lr": 0.2, "momentum": 0.9, "groups": groups},
        "SGD" if groups == 1 else "SGD with 2 parameter groups (lr 0.2 and 0.1)",
        of=(0,),
    )
    scheduler = Build(
        probes.build_contract_scheduler,
        {"factors": _LOGGED_FACTORS, "stepped": stepped},
        "a LambdaLR" if not stepped else f"a LambdaLR already {stepped} steps along",
        of=(3,),
    )
    writer = Build(probes.build_recording_writer, {}, _("a writer"))
    num_epochs, max_norm = d.size(1, 3), d.draw(st.sampled_from([0.05, 0.5, 100.0]))
    loss = _contract_loss("classification")
    device = CONTRACT_DEVICE  # meta in the device family, with the model and batches
    return Inputs((model, loader, loss, optimizer, scheduler, writer, device, num_epochs, max_norm))


def _logged_hint(family: str, inputs: Inputs) -> str:
    return _(
        "Each step: forward, loss, optimizer.zero_grad(), loss.backward(), grad_norm = "
        "clip_grad_norm_(model.parameters(), max_norm), lr = optimizer.param_groups[0]['lr'], "
        "optimizer.step(), scheduler.step(); log with writer.add_scalar(tag, value, step) "
        "'train/loss' (loss.item()), 'train/lr' (the rate read before scheduler.step()) and "
        "'train/grad_norm' (the norm clip_grad_norm_ returns, before clipping), with one step "
        "counter for the whole run, from 0; call writer.flush() at the end. The writer's "
        "record holds [step, value] for each call; 'flushed' counts the values logged before "
        "the last flush."
    )


# The whole run against the reference's: the steps taken (the int returned), the model's
# weights, modes and gradients and the optimizer's rates and momentum afterwards, and every
# scalar logged (tag, step, value) and flushed, on a writer that records them.
TRAIN_LOGGED = Contract(
    "train_logged",
    _ref_train_logged,
    _draw_train_logged,
    families=("values", "edges", "device"),
    mutates=(0, 3, 5),  # the model and optimizer train; the writer records
    arg_names=(
        "model",
        "loader",
        "loss_fn",
        "optimizer",
        "scheduler",
        "writer",
        "device",
        "num_epochs",
        "max_norm",
    ),
    hint=_logged_hint,
    examples=6,
)


def _logged_case(train_logged, device, seed, n, batch, num_epochs, max_norm, shuffle, eval_start):
    """A run with dropout and a real SummaryWriter: the model trained in train mode, once per
    batch, the global random state moved only by dropout, one event file."""
    per_epoch = math.ceil(n / batch)
    total = per_epoch * num_epochs
    case = {
        "device": device,
        "seed": seed,
        "n": n,
        "batch": batch,
        "shuffle": shuffle,
        "start_in_eval": eval_start,
        "lr": 0.2,
        "lr_factors": _logged_factors(total),
        "num_epochs": num_epochs,
        "max_norm": max_norm,
    }
    what = (
        f"train_logged ({n} samples in batches of {batch}, {per_epoch} batches per epoch, "
        f"num_epochs={num_epochs}, max_norm={max_norm:g})"
    )
    seen = observe(probes.probe_train_logged, train_logged, case, what)
    ref = probes.probe_train_logged(_ref_train_logged, case)  # the same run, done right
    if not seen["training"] or seen["eval_forwards"]:
        raise CheckError(
            _(
                "{what} ran the model in eval mode (it arrived in {value} mode). Call "
                "model.train() at the start, so dropout is on from the first batch."
            ).format(what=what, value="eval" if eval_start else "train")
        )
    if seen["forwards"] not in (total, 0):  # 0: model.forward called directly, no hooks
        raise CheckError(
            _(
                "{what} ran the model {forwards} times for {total} steps: once per batch. Log "
                "loss.item() of the loss you trained on; do not run the model again to log it."
            ).format(what=what, forwards=seen["forwards"], total=total)
        )
    if not torch.equal(seen["rng"], ref["rng"]):
        raise CheckError(
            _(
                "{what} changed the global random state in a way training alone does not (only "
                "dropout should draw from it). Do not call torch.manual_seed or draw random "
                "numbers inside train_logged: seeding is the caller's choice."
            ).format(what=what)
        )
    if seen["closes"]:
        raise CheckError(
            _(
                "{what} closed the writer it was given. Call writer.flush() at the end instead: "
                "the writer belongs to the caller, who may log more after the run (validation "
                "losses, say) and closes it."
            ).format(what=what)
        )
    if seen["event_files"] != 1:
        raise CheckError(
            _(
                "{what} left {event_files} event files in the writer's folder, expected 1: log "
                "with the writer you were given instead of opening new SummaryWriters."
            ).format(what=what, event_files=seen["event_files"])
        )
    got_losses = [value for _step, value in seen["scalars"].get("train/loss", [])]
    ref_losses = [value for _step, value in ref["scalars"]["train/loss"]]
    if len(got_losses) == len(ref_losses) and not all(
        _close(a, b, 1e-4) for a, b in zip(got_losses, ref_losses, strict=True)
    ):
        epoch = next(
            k // per_epoch
            for k, (a, b) in enumerate(zip(got_losses, ref_losses, strict=True))
            if not _close(a, b, 1e-4)
        )
        hint = (
            _(
                " The loader shuffles: iterate it afresh every epoch (for x, y in loader), so "
                "each epoch gets a new order; a list of its batches made once repeats the first "
                "epoch's order."
            )
            if shuffle and epoch > 0
            else ""
        )
        raise CheckError(
            _(
                "{what}: the losses logged from epoch {epoch} on differ from a correct run's.{hint}"
            ).format(what=what, epoch=epoch + 1, hint=hint)
        )


@uses(TRAIN_LOGGED)
def check_train_logged(train_logged) -> None:
    """The contract: the steps returned, the trained model and optimizer, every scalar
    logged and flushed, against a reference run. Here, with dropout and a real
    SummaryWriter: train mode from the first batch, one forward per batch, the global
    random state moved only by dropout, one event file."""
    device = get_device()
    cases = [
        # seed, n, batch, num_epochs, max_norm, shuffle, eval start
        (1, 30, 8, 3, 100.0, True, False),  # shuffled, last batch of 6
        (2, 10, 4, 1, 0.05, False, True),  # one epoch; arrives in eval mode
    ]
    for case in cases:
        _logged_case(train_logged, device, *case)
