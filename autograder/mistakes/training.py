"""Plausible wrong answers for 06_training's exercises."""

from autograder.mistakes import Mistake

_TRAIN_HEAD = "import torch\ndef train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
_EVAL_HEAD = "import torch\ndef evaluate(model, loader, loss_fn, device):\n"
_SCHED_HEAD = (
    "import math\nimport torch\n"
    "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
    "    def factor(step):\n"
)
_SCHED_TAIL = "    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)\n"


_GUARDED_RESTORE = (
    "if self.best_state is not None:\n            model.load_state_dict(self.best_state)"
)


def _stopper(init_extra: str, step_body: str, restore: str = _GUARDED_RESTORE) -> str:
    return (
        "import math\n"
        "class EarlyStopping:\n"
        "    def __init__(self, patience, min_delta=0.0):\n"
        "        self.patience, self.min_delta = patience, min_delta\n"
        "        self.best_loss, self.bad_epochs, self.best_state = math.inf, 0, None\n"
        f"{init_extra}"
        "    def step(self, val_loss, model):\n"
        f"{step_body}"
        "    def restore_best(self, model):\n"
        f"        {restore}\n"
    )


_CLONE = "{k: v.detach().clone() for k, v in model.state_dict().items()}"

MISTAKES = {
    "make_loss_fn": [
        Mistake(
            name="softmax-before-cross-entropy",
            message="CrossEntropyLoss applies log-softmax itself: give it raw logits, not softmax "
            "probabilities.",
            code=(
                "import torch\nfrom torch import nn\n"
                "class SoftmaxCE(nn.Module):\n"
                "    def forward(self, logits, y):\n"
                "        return nn.functional.cross_entropy(logits.softmax(dim=1), y)\n"
                "def make_loss_fn(task):\n"
                "    if task == 'multiclass':\n        return SoftmaxCE()\n"
                "    if task == 'multilabel':\n        return nn.BCEWithLogitsLoss()\n"
                "    if task == 'regression':\n        return nn.MSELoss()\n"
                "    raise ValueError(task)\n"
            ),
        ),
        Mistake(
            name="cross-entropy-for-multilabel",
            message="Multi-label targets are independent yes/no answers: BCEWithLogitsLoss, not "
            "CrossEntropyLoss (which reads the row as one distribution).",
            code=(
                "from torch import nn\n"
                "def make_loss_fn(task):\n"
                "    if task in ('multiclass', 'multilabel'):\n        return nn.CrossEntropyLoss()\n"
                "    if task == 'regression':\n        return nn.MSELoss()\n"
                "    raise ValueError(task)\n"
            ),
        ),
        Mistake(
            name="sigmoid-then-bce",
            message="A sigmoid followed by BCELoss saturates on confident logits; "
            "BCEWithLogitsLoss does both in one stable step.",
            code=(
                "import torch\nfrom torch import nn\n"
                "class SigmoidBCE(nn.Module):\n"
                "    def forward(self, logits, y):\n"
                "        return nn.functional.binary_cross_entropy(torch.sigmoid(logits), y)\n"
                "def make_loss_fn(task):\n"
                "    if task == 'multiclass':\n        return nn.CrossEntropyLoss()\n"
                "    if task == 'multilabel':\n        return SigmoidBCE()\n"
                "    if task == 'regression':\n        return nn.MSELoss()\n"
                "    raise ValueError(task)\n"
            ),
        ),
        Mistake(
            name="bce-on-logits",
            message="BCELoss expects probabilities in [0, 1]; on logits use BCEWithLogitsLoss.",
            code=(
                "from torch import nn\n"
                "def make_loss_fn(task):\n"
                "    if task == 'multiclass':\n        return nn.CrossEntropyLoss()\n"
                "    if task == 'multilabel':\n        return nn.BCELoss()\n"
                "    if task == 'regression':\n        return nn.MSELoss()\n"
                "    raise ValueError(task)\n"
            ),
        ),
        Mistake(
            name="returns-class",
            message="Return an instance, nn.MSELoss(), not the class nn.MSELoss.",
            code=(
                "from torch import nn\n"
                "def make_loss_fn(task):\n"
                "    return {'multiclass': nn.CrossEntropyLoss, 'multilabel': nn.BCEWithLogitsLoss,\n"
                "            'regression': nn.MSELoss}[task]\n"
            ),
        ),
        Mistake(
            name="no-error-for-unknown-task",
            message="An unknown task name should raise ValueError, not fall back silently.",
            code=(
                "from torch import nn\n"
                "def make_loss_fn(task):\n"
                "    if task == 'multilabel':\n        return nn.BCEWithLogitsLoss()\n"
                "    if task == 'regression':\n        return nn.MSELoss()\n"
                "    return nn.CrossEntropyLoss()\n"
            ),
        ),
    ],
    "train_one_epoch": [
        Mistake(
            name="missing-zero-grad",
            message="Without optimizer.zero_grad() every batch's gradient is added to the previous "
            "ones: the steps use the running sum.",
            code=_TRAIN_HEAD
            + (
                "    model.train()\n    total, count = 0.0, 0\n"
                "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
                "        loss = loss_fn(model(x), y)\n        loss.backward()\n        optimizer.step()\n"
                "        if scheduler is not None:\n            scheduler.step()\n"
                "        total += loss.item() * len(x)\n        count += len(x)\n"
                "    return total / count\n"
            ),
        ),
        Mistake(
            name="mean-of-batch-means",
            message="Averaging the batch means over-weights a small last batch: weight each by its "
            "size.",
            code=_TRAIN_HEAD
            + (
                "    model.train()\n    losses = []\n"
                "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
                "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
                "        loss.backward()\n        optimizer.step()\n"
                "        if scheduler is not None:\n            scheduler.step()\n"
                "        losses.append(loss.item())\n"
                "    return sum(losses) / len(losses)\n"
            ),
        ),
        Mistake(
            name="no-train-mode",
            message="Call model.train() at the start: after an evaluation the model is still in "
            "eval mode and would train with dropout off.",
            code=_TRAIN_HEAD
            + (
                "    total, count = 0.0, 0\n"
                "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
                "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
                "        loss.backward()\n        optimizer.step()\n"
                "        if scheduler is not None:\n            scheduler.step()\n"
                "        total += loss.item() * len(x)\n        count += len(x)\n"
                "    return total / count\n"
            ),
        ),
        Mistake(
            name="scheduler-per-epoch",
            message="This schedule counts optimizer steps: call scheduler.step() after every "
            "optimizer.step(), not once per epoch.",
            code=_TRAIN_HEAD
            + (
                "    model.train()\n    total, count = 0.0, 0\n"
                "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
                "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
                "        loss.backward()\n        optimizer.step()\n"
                "        total += loss.item() * len(x)\n        count += len(x)\n"
                "    if scheduler is not None:\n        scheduler.step()\n"
                "    return total / count\n"
            ),
        ),
        Mistake(
            name="zero-grad-after-backward",
            message="zero_grad() between backward() and step() wipes the gradient just computed: "
            "the step does nothing.",
            code=_TRAIN_HEAD
            + (
                "    model.train()\n    total, count = 0.0, 0\n"
                "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
                "        loss = loss_fn(model(x), y)\n        loss.backward()\n"
                "        optimizer.zero_grad()\n        optimizer.step()\n"
                "        if scheduler is not None:\n            scheduler.step()\n"
                "        total += loss.item() * len(x)\n        count += len(x)\n"
                "    return total / count\n"
            ),
        ),
        Mistake(
            name="returns-tensor",
            message="Sum loss.item(), not the loss tensors: a tensor total keeps every batch's "
            "graph alive and is not a float.",
            code=_TRAIN_HEAD
            + (
                "    model.train()\n    total, count = 0.0, 0\n"
                "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
                "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
                "        loss.backward()\n        optimizer.step()\n"
                "        if scheduler is not None:\n            scheduler.step()\n"
                "        total = total + loss * len(x)\n        count += len(x)\n"
                "    return total / count\n"
            ),
        ),
        Mistake(
            name="divides-by-dataset-length",
            message="len(loader.dataset) counts samples the loop may never see (a loader that "
            "drops its last partial batch, or samples a subset): count them as the loop sees "
            "them, n += len(x).",
            code=(
                "import torch\n"
                "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
                "    model.train()\n"
                "    total = 0.0\n"
                "    for x, y in loader:\n"
                "        x, y = x.to(device), y.to(device)\n"
                "        loss = loss_fn(model(x), y)\n"
                "        optimizer.zero_grad()\n"
                "        loss.backward()\n"
                "        optimizer.step()\n"
                "        if scheduler is not None:\n"
                "            scheduler.step()\n"
                "        total += loss.item() * len(x)\n"
                "    return total / len(loader.dataset)\n"
            ),
        ),
    ],
    "evaluate": [
        Mistake(
            name="evaluates-in-train-mode",
            message="Call model.eval() before evaluating: dropout and batch norm behave differently "
            "in train mode.",
            code=_EVAL_HEAD
            + (
                "    total, correct, count = 0.0, 0, 0\n"
                "    with torch.no_grad():\n"
                "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
                "            logits = model(x)\n"
                "            total += loss_fn(logits, y).item() * len(x)\n"
                "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
                "            count += len(x)\n"
                "    return total / count, correct / count\n"
            ),
        ),
        Mistake(
            name="with-gradients",
            message="Evaluate under torch.no_grad(): otherwise every batch records a graph "
            "nobody uses.",
            code=_EVAL_HEAD
            + (
                "    was_training = model.training\n    model.eval()\n"
                "    total, correct, count = 0.0, 0, 0\n"
                "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
                "        logits = model(x)\n"
                "        total += loss_fn(logits, y).item() * len(x)\n"
                "        correct += (logits.argmax(dim=1) == y).sum().item()\n"
                "        count += len(x)\n"
                "    model.train(was_training)\n"
                "    return total / count, correct / count\n"
            ),
        ),
        Mistake(
            name="does-not-restore-train-mode",
            message="Remember model.training and restore it: the next epoch would otherwise train "
            "in eval mode.",
            code=_EVAL_HEAD
            + (
                "    model.eval()\n    total, correct, count = 0.0, 0, 0\n"
                "    with torch.no_grad():\n"
                "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
                "            logits = model(x)\n"
                "            total += loss_fn(logits, y).item() * len(x)\n"
                "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
                "            count += len(x)\n"
                "    return total / count, correct / count\n"
            ),
        ),
        Mistake(
            name="always-back-to-train",
            message="Restore the mode the model came in with, model.train(was_training), not "
            "always train mode.",
            code=_EVAL_HEAD
            + (
                "    model.eval()\n    total, correct, count = 0.0, 0, 0\n"
                "    with torch.no_grad():\n"
                "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
                "            logits = model(x)\n"
                "            total += loss_fn(logits, y).item() * len(x)\n"
                "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
                "            count += len(x)\n"
                "    model.train()\n"
                "    return total / count, correct / count\n"
            ),
        ),
        Mistake(
            name="softmax-before-loss",
            message="CrossEntropyLoss wants raw logits; a softmax first gives a wrong, squashed loss.",
            code=_EVAL_HEAD
            + (
                "    was_training = model.training\n    model.eval()\n"
                "    total, correct, count = 0.0, 0, 0\n"
                "    with torch.no_grad():\n"
                "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
                "            probs = model(x).softmax(dim=1)\n"
                "            total += loss_fn(probs, y).item() * len(x)\n"
                "            correct += (probs.argmax(dim=1) == y).sum().item()\n"
                "            count += len(x)\n"
                "    model.train(was_training)\n"
                "    return total / count, correct / count\n"
            ),
        ),
        Mistake(
            name="mean-of-batch-means",
            message="Weight each batch's mean loss by its size: the last batch may be smaller.",
            code=_EVAL_HEAD
            + (
                "    was_training = model.training\n    model.eval()\n"
                "    losses, correct, count = [], 0, 0\n"
                "    with torch.no_grad():\n"
                "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
                "            logits = model(x)\n"
                "            losses.append(loss_fn(logits, y).item())\n"
                "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
                "            count += len(x)\n"
                "    model.train(was_training)\n"
                "    return sum(losses) / len(losses), correct / count\n"
            ),
        ),
        Mistake(
            name="accuracy-as-percent",
            message="Return the accuracy as a fraction between 0 and 1.",
            code=_EVAL_HEAD
            + (
                "    was_training = model.training\n    model.eval()\n"
                "    total, correct, count = 0.0, 0, 0\n"
                "    with torch.no_grad():\n"
                "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
                "            logits = model(x)\n"
                "            total += loss_fn(logits, y).item() * len(x)\n"
                "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
                "            count += len(x)\n"
                "    model.train(was_training)\n"
                "    return total / count, 100.0 * correct / count\n"
            ),
        ),
    ],
    "make_warmup_cosine": [
        Mistake(
            name="cosine-ignores-warmup",
            message="The cosine starts where the warm-up ends: progress = (step - warmup_steps) / "
            "(total_steps - warmup_steps).",
            code=_SCHED_HEAD
            + (
                "        if step < warmup_steps:\n            return step / warmup_steps\n"
                "        progress = min(1.0, step / total_steps)\n"
                "        return 0.5 * (1 + math.cos(math.pi * progress))\n"
            )
            + _SCHED_TAIL,
        ),
        Mistake(
            name="no-clamp-after-total",
            message="After total_steps the factor stays at 0: clamp progress to at most 1.",
            code=_SCHED_HEAD
            + (
                "        if step < warmup_steps:\n            return step / warmup_steps\n"
                "        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)\n"
                "        return 0.5 * (1 + math.cos(math.pi * progress))\n"
            )
            + _SCHED_TAIL,
        ),
        Mistake(
            name="divides-by-zero-warmup",
            message="warmup_steps may be 0: only divide by it while step < warmup_steps.",
            code=_SCHED_HEAD
            + (
                "        warm = min(1.0, step / warmup_steps)\n"
                "        progress = min(1.0, max(0, step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
                "        return warm * 0.5 * (1 + math.cos(math.pi * progress))\n"
            )
            + _SCHED_TAIL,
        ),
        Mistake(
            name="returns-learning-rate",
            message="LambdaLR multiplies the base rate by your function: return a factor, not a "
            "learning rate.",
            code=(
                "import math\nimport torch\n"
                "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
                "    base = optimizer.param_groups[0]['lr']\n"
                "    def factor(step):\n"
                "        if step < warmup_steps:\n            return base * step / warmup_steps\n"
                "        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
                "        return base * 0.5 * (1 + math.cos(math.pi * progress))\n"
            )
            + _SCHED_TAIL,
        ),
        Mistake(
            name="cosine-to-minus-one",
            message="cos(pi * progress) goes from 1 to -1; the factor is 0.5 * (1 + cos(...)).",
            code=_SCHED_HEAD
            + (
                "        if step < warmup_steps:\n            return step / warmup_steps\n"
                "        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
                "        return math.cos(math.pi * progress)\n"
            )
            + _SCHED_TAIL,
        ),
        Mistake(
            name="warmup-off-by-one",
            message="The warm-up factor is step / warmup_steps: 0 at step 0.",
            code=_SCHED_HEAD
            + (
                "        if step < warmup_steps:\n            return (step + 1) / warmup_steps\n"
                "        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
                "        return 0.5 * (1 + math.cos(math.pi * progress))\n"
            )
            + _SCHED_TAIL,
        ),
    ],
    "EarlyStopping": [
        Mistake(
            name="state-dict-not-copied",
            message="model.state_dict() holds the live tensors, which training keeps changing: "
            "store a clone.",
            code=_stopper(
                "",
                "        if val_loss < self.best_loss - self.min_delta:\n"
                "            self.best_loss, self.bad_epochs = val_loss, 0\n"
                "            self.best_state = model.state_dict()\n"
                "        else:\n            self.bad_epochs += 1\n"
                "        return self.bad_epochs >= self.patience\n",
            ),
        ),
        Mistake(
            name="counter-not-reset",
            message="An improvement resets the count of bad epochs to zero: patience counts "
            "consecutive epochs.",
            code=_stopper(
                "",
                "        if val_loss < self.best_loss - self.min_delta:\n"
                f"            self.best_loss, self.best_state = val_loss, {_CLONE}\n"
                "        else:\n            self.bad_epochs += 1\n"
                "        return self.bad_epochs >= self.patience\n",
            ),
        ),
        Mistake(
            name="stops-one-epoch-late",
            message="Stop when the count reaches patience (>=), not when it exceeds it.",
            code=_stopper(
                "",
                "        if val_loss < self.best_loss - self.min_delta:\n"
                f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
                "        else:\n            self.bad_epochs += 1\n"
                "        return self.bad_epochs > self.patience\n",
            ),
        ),
        Mistake(
            name="ignores-min-delta",
            message="An improvement must beat the best loss by more than min_delta.",
            code=_stopper(
                "",
                "        if val_loss < self.best_loss:\n"
                f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
                "        else:\n            self.bad_epochs += 1\n"
                "        return self.bad_epochs >= self.patience\n",
            ),
        ),
        Mistake(
            name="nan-counts-as-improvement",
            message="Test for an improvement (val_loss < best - min_delta); testing for its "
            "opposite with >= lets a NaN loss reset the count.",
            code=_stopper(
                "",
                "        if val_loss >= self.best_loss - self.min_delta:\n"
                "            self.bad_epochs += 1\n"
                "        else:\n"
                f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
                "        return self.bad_epochs >= self.patience\n",
            ),
        ),
    ],
    "save_checkpoint": [
        Mistake(
            name="no-optimizer-state",
            message="Save optimizer.state_dict() too: without Adam's moments and step counts a "
            "resumed run takes different steps.",
            code=(
                "import torch\n"
                "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
                "    torch.save({'model': model.state_dict(), 'scheduler': scheduler.state_dict(),\n"
                "                'epoch': epoch}, path)\n"
            ),
        ),
        Mistake(
            name="no-scheduler-state",
            message="Save scheduler.state_dict(): otherwise the resumed run restarts the schedule.",
            code=(
                "import torch\n"
                "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
                "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
                "                'epoch': epoch}, path)\n"
            ),
        ),
        Mistake(
            name="pickles-objects",
            message="Save state_dicts, not the model and optimizer objects: weights_only loading "
            "refuses pickled objects.",
            code=(
                "import torch\n"
                "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
                "    torch.save({'model': model, 'optimizer': optimizer, 'scheduler': scheduler,\n"
                "                'epoch': epoch}, path)\n"
            ),
        ),
        Mistake(
            name="weights-only-file",
            message="A checkpoint is a bundle: model, optimizer, scheduler and epoch, not just "
            "the weights.",
            code=(
                "import torch\n"
                "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
                "    torch.save(model.state_dict(), path)\n"
            ),
        ),
    ],
    "load_checkpoint": [
        Mistake(
            name="model-only",
            message="Restore the optimizer and the scheduler as well, or the resumed run differs.",
            code=(
                "import torch\n"
                "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
                "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
                "    model.load_state_dict(checkpoint['model'])\n"
                "    return checkpoint['epoch']\n"
            ),
        ),
        Mistake(
            name="no-scheduler",
            message="Restore the scheduler too: a fresh one starts the warm-up again.",
            code=(
                "import torch\n"
                "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
                "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
                "    model.load_state_dict(checkpoint['model'])\n"
                "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
                "    return checkpoint['epoch']\n"
            ),
        ),
        Mistake(
            name="non-strict-whole-bundle",
            message="load_state_dict(checkpoint, strict=False) on the whole bundle matches no key "
            "and loads nothing; use checkpoint['model'] with strict loading.",
            code=(
                "import torch\n"
                "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
                "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
                "    model.load_state_dict(checkpoint, strict=False)\n"
                "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
                "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
                "    return checkpoint['epoch']\n"
            ),
        ),
        Mistake(
            name="returns-next-epoch-plus-one",
            message="Return the stored number of finished epochs; range(start, num_epochs) then "
            "continues at the right place.",
            code=(
                "import torch\n"
                "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
                "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
                "    model.load_state_dict(checkpoint['model'])\n"
                "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
                "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
                "    return checkpoint['epoch'] + 1\n"
            ),
        ),
    ],
    "DigitsCNN": [
        Mistake(
            name="softmax-at-the-end",
            message="End with raw logits: CrossEntropyLoss applies log-softmax itself.",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.net = nn.Sequential(\n"
                "            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
                "            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
                "            nn.Flatten(), nn.Linear(128, 10), nn.Softmax(dim=1))\n"
                "    def forward(self, x):\n"
                "        return self.net(x)\n"
            ),
        ),
        Mistake(
            name="view-on-channels-last",
            message="x.view(len(x), -1) needs memory in the usual order; a batch permuted from "
            "(N, H, W, C) is channels-last, and so is the convolution's output on it: use "
            "nn.Flatten(), x.flatten(1) or x.reshape(len(x), -1).",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.features = nn.Sequential(\n"
                "            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
                "            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))\n"
                "        self.fc = nn.Linear(128, 10)\n"
                "    def forward(self, x):\n"
                "        x = self.features(x)\n"
                "        return self.fc(x.view(x.size(0), -1))\n"
            ),
        ),
        Mistake(
            name="wide-layers-without-pooling",
            message="Two wide convolutions on the full 8x8 image cost about 9.5 million FLOPs "
            "per image, over the budget of 3 million: pool before the wider layer, or use "
            "fewer channels.",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.net = nn.Sequential(\n"
                "            nn.Conv2d(1, 64, 3, padding=1), nn.ReLU(),\n"
                "            nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(),\n"
                "            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))\n"
                "    def forward(self, x):\n"
                "        return self.net(x)\n"
            ),
        ),
        Mistake(
            name="wrong-flatten-size",
            message="After two MaxPool2d(2) an 8x8 image is 2x2: the Linear layer takes 32 * 2 * 2 "
            "features.",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.net = nn.Sequential(\n"
                "            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
                "            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
                "            nn.Flatten(), nn.Linear(32 * 8 * 8, 10))\n"
                "    def forward(self, x):\n"
                "        return self.net(x)\n"
            ),
        ),
        Mistake(
            name="pools-to-1x1-too-early",
            message="Global pooling right after one small convolution throws away where the "
            "strokes are; keep some spatial size before the Linear layer.",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.net = nn.Sequential(\n"
                "            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),\n"
                "            nn.Flatten(), nn.Linear(8, 10))\n"
                "    def forward(self, x):\n"
                "        return self.net(x)\n"
            ),
        ),
        Mistake(
            name="flattens-the-batch",
            message="x.flatten() merges the batch into one vector; nn.Flatten() (or "
            "x.flatten(1)) keeps dimension 0.",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.conv = nn.Sequential(\n"
                "            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
                "            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))\n"
                "        self.fc = nn.Linear(128, 10)\n"
                "    def forward(self, x):\n"
                "        return self.fc(self.conv(x).flatten())\n"
            ),
        ),
        Mistake(
            name="no-convolution",
            message="The task asks for a CNN: use at least one nn.Conv2d.",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))\n"
                "    def forward(self, x):\n"
                "        return self.net(x)\n"
            ),
        ),
    ],
}


# ---------------------------------------------------------------------------------------
# Wrong answers that pass the visible asserts (or look like it): defaults never varied,
# side effects, edge inputs, and the process judged by one outcome.
# ---------------------------------------------------------------------------------------

_LOSS_REST = (
    "    if task == 'multilabel':\n        return nn.BCEWithLogitsLoss()\n"
    "    if task == 'regression':\n        return nn.MSELoss()\n"
    "    raise ValueError(task)\n"
)

MISTAKES["make_loss_fn"] += [
    Mistake(
        name="dict-lookup-keyerror",
        message="A dict lookup of an unknown task raises KeyError; the task asks for ValueError: "
        "catch the KeyError and raise ValueError, or test each name.",
        code=(
            "from torch import nn\n"
            "def make_loss_fn(task):\n"
            "    losses = {'multiclass': nn.CrossEntropyLoss, 'multilabel': nn.BCEWithLogitsLoss,\n"
            "              'regression': nn.MSELoss}\n"
            "    return losses[task]()\n"
        ),
    ),
    Mistake(
        name="softmax-then-log-by-hand",
        message="softmax(...).log() underflows to -inf on confident logits; log_softmax (inside "
        "CrossEntropyLoss) computes the same thing stably.",
        code=(
            "import torch\nfrom torch import nn\n"
            "class HandCE(nn.Module):\n"
            "    def forward(self, logits, y):\n"
            "        log_p = logits.softmax(dim=1).log()\n"
            "        return -log_p.gather(1, y[:, None]).mean()\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return HandCE()\n" + _LOSS_REST
        ),
    ),
    Mistake(
        name="detached-loss",
        message="A loss rebuilt from .item() has no graph: loss.backward() cannot reach the "
        "model. Return the loss tensor torch computed.",
        code=(
            "import torch\nfrom torch import nn\n"
            "class NumberCE(nn.Module):\n"
            "    def forward(self, logits, y):\n"
            "        return torch.tensor(nn.functional.cross_entropy(logits, y).item())\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return NumberCE()\n" + _LOSS_REST
        ),
    ),
    Mistake(
        name="shifts-logits-in-place",
        message="Subtracting the row maximum in place (sub_) changes the caller's logits; "
        "cross-entropy needs no such shift, and a loss must only read its inputs.",
        code=(
            "import torch\nfrom torch import nn\n"
            "class ShiftedCE(nn.Module):\n"
            "    def forward(self, logits, y):\n"
            "        logits.sub_(logits.max(dim=1, keepdim=True).values.detach())\n"
            "        return nn.functional.cross_entropy(logits, y)\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return ShiftedCE()\n" + _LOSS_REST
        ),
    ),
    Mistake(
        name="multilabel-summed-over-labels",
        message="The mean reduction averages over every (sample, label) pair; summing over the "
        "labels first makes the loss C times larger.",
        code=(
            "import torch\nfrom torch import nn\n"
            "class SummedBCE(nn.Module):\n"
            "    def forward(self, logits, y):\n"
            "        per = nn.functional.binary_cross_entropy_with_logits(logits, y, reduction='none')\n"
            "        return per.sum(dim=1).mean()\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return nn.CrossEntropyLoss()\n"
            "    if task == 'multilabel':\n        return SummedBCE()\n"
            "    if task == 'regression':\n        return nn.MSELoss()\n"
            "    raise ValueError(task)\n"
        ),
    ),
]

MISTAKES["make_loss_fn"] += [
    Mistake(
        name="one-hot-made-on-cpu",
        message="A one-hot target built with torch.zeros(logits.shape) lives on the CPU: on a "
        "GPU the loss fails. Make it with torch.zeros_like(logits) (or use CrossEntropyLoss).",
        code=(
            "import torch\nfrom torch import nn\n"
            "class OneHotCE(nn.Module):\n"
            "    def forward(self, logits, y):\n"
            "        one_hot = torch.zeros(logits.shape).scatter(1, y[:, None], 1.0)\n"
            "        return -(one_hot * logits.log_softmax(dim=1)).sum(dim=1).mean()\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return OneHotCE()\n" + _LOSS_REST
        ),
    ),
    Mistake(
        name="regression-loss-in-float32",
        message="Casting to float32 answers a float16 or float64 prediction in another "
        "precision: compute the loss in the dtype it is given (nn.MSELoss does).",
        code=(
            "import torch\nfrom torch import nn\n"
            "class FloatMSE(nn.Module):\n"
            "    def forward(self, pred, target):\n"
            "        return ((pred.float() - target.float()) ** 2).mean()\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return nn.CrossEntropyLoss()\n"
            "    if task == 'multilabel':\n        return nn.BCEWithLogitsLoss()\n"
            "    if task == 'regression':\n        return FloatMSE()\n"
            "    raise ValueError(task)\n"
        ),
    ),
    Mistake(
        name="flattens-with-view",
        message="logits.view(-1) fails on a non-contiguous batch; flatten with .reshape(-1), or "
        "give BCEWithLogitsLoss the (N, C) tensors as they are.",
        code=(
            "import torch\nfrom torch import nn\n"
            "class FlatBCE(nn.Module):\n"
            "    def forward(self, logits, y):\n"
            "        return nn.functional.binary_cross_entropy_with_logits(logits.view(-1), y.view(-1))\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return nn.CrossEntropyLoss()\n"
            "    if task == 'multilabel':\n        return FlatBCE()\n"
            "    if task == 'regression':\n        return nn.MSELoss()\n"
            "    raise ValueError(task)\n"
        ),
    ),
    Mistake(
        name="regression-loss-without-graph",
        message="A loss computed under torch.no_grad() has no graph: loss.backward() cannot "
        "train anything. Compute it with autograd on.",
        code=(
            "import torch\nfrom torch import nn\n"
            "class QuietMSE(nn.Module):\n"
            "    def forward(self, pred, target):\n"
            "        with torch.no_grad():\n"
            "            return nn.functional.mse_loss(pred, target)\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return nn.CrossEntropyLoss()\n"
            "    if task == 'multilabel':\n        return nn.BCEWithLogitsLoss()\n"
            "    if task == 'regression':\n        return QuietMSE()\n"
            "    raise ValueError(task)\n"
        ),
    ),
]

_TRAIN_LOOP_END = (
    "        total += loss.item() * len(x)\n        count += len(x)\n    return total / count\n"
)

MISTAKES["train_one_epoch"] += [
    Mistake(
        name="scheduler-before-optimizer",
        message="scheduler.step() before optimizer.step() makes every step use the next step's "
        "learning rate (the warm-up's first step is skipped): step the scheduler right after "
        "the optimizer.",
        code=_TRAIN_HEAD
        + (
            "    model.train()\n    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
            "        optimizer.step()\n"
        )
        + _TRAIN_LOOP_END,
    ),
    Mistake(
        name="loss-recomputed-after-step",
        message="Report the loss the step was computed from; running the model again after "
        "optimizer.step() measures the updated model and doubles the work.",
        code=_TRAIN_HEAD
        + (
            "    model.train()\n    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
            "        with torch.no_grad():\n            loss = loss_fn(model(x), y)\n"
        )
        + _TRAIN_LOOP_END,
    ),
    Mistake(
        name="reseeds-global-rng",
        message="torch.manual_seed inside train_one_epoch resets the caller's random state: "
        "every epoch gets the same dropout masks. Leave seeding to the caller.",
        code=_TRAIN_HEAD
        + (
            "    torch.manual_seed(0)  # reproducible epochs\n"
            "    model.train()\n    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
        )
        + _TRAIN_LOOP_END,
    ),
    Mistake(
        name="counts-batch-size",
        message="The last batch may be smaller than loader.batch_size: count len(x) samples.",
        code=_TRAIN_HEAD
        + (
            "    model.train()\n    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
            "        total += loss.item() * loader.batch_size\n        count += loader.batch_size\n"
            "    return total / count\n"
        ),
    ),
]

_EVAL_LOOP = (
    "    total, correct, count = 0.0, 0, 0\n"
    "    with torch.no_grad():\n"
    "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
    "            logits = model(x)\n"
    "            total += loss_fn(logits, y).item() * len(x)\n"
    "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
    "            count += len(x)\n"
)

MISTAKES["evaluate"] += [
    Mistake(
        name="restores-root-flag-only",
        message="Assigning model.training changes only the top module; its children stay in "
        "eval mode. Restore with model.train(was_training).",
        code=_EVAL_HEAD
        + "    was_training = model.training\n    model.eval()\n"
        + _EVAL_LOOP
        + "    model.training = was_training\n    return total / count, correct / count\n",
    ),
    Mistake(
        name="ignores-loss-fn",
        message="Use the loss_fn you are given; a hard-coded cross-entropy gives another number "
        "for any other loss.",
        code=_EVAL_HEAD
        + (
            "    was_training = model.training\n    model.eval()\n"
            "    total, correct, count = 0.0, 0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += torch.nn.functional.cross_entropy(logits, y).item() * len(x)\n"
            "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
            "            count += len(x)\n"
            "    model.train(was_training)\n"
            "    return total / count, correct / count\n"
        ),
    ),
    Mistake(
        name="reseeds-global-rng",
        message="torch.manual_seed inside evaluate resets the caller's random state (the next "
        "epoch's shuffling and dropout); an evaluation should change nothing.",
        code=_EVAL_HEAD
        + "    torch.manual_seed(0)\n    was_training = model.training\n    model.eval()\n"
        + _EVAL_LOOP
        + "    model.train(was_training)\n    return total / count, correct / count\n",
    ),
    Mistake(
        name="accuracy-mean-of-batch-accuracies",
        message="Averaging per-batch accuracies over-weights a small last batch: count correct "
        "samples over all batches and divide once.",
        code=_EVAL_HEAD
        + (
            "    was_training = model.training\n    model.eval()\n"
            "    total, count, accs = 0.0, 0, []\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y).item() * len(x)\n"
            "            accs.append((logits.argmax(dim=1) == y).float().mean().item())\n"
            "            count += len(x)\n"
            "    model.train(was_training)\n"
            "    return total / count, sum(accs) / len(accs)\n"
        ),
    ),
]

MISTAKES["make_warmup_cosine"] += [
    Mistake(
        name="zeroes-base-rates",
        message="Setting each group's lr to 0 before building LambdaLR makes 0 the base rate it "
        "multiplies: every later rate is 0. Leave the optimizer's rates alone; the factor "
        "(0 at step 0) does the warm-up.",
        code=(
            "import math\nimport torch\n"
            "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
            "    for group in optimizer.param_groups:\n        group['lr'] = 0.0\n"
            "    def factor(step):\n"
            "        if step < warmup_steps:\n            return step / warmup_steps\n"
            "        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
            "        return 0.5 * (1 + math.cos(math.pi * progress))\n"
        )
        + _SCHED_TAIL,
    ),
    Mistake(
        name="cosine-length-zero",
        message="total_steps may equal warmup_steps: divide by max(1, total_steps - warmup_steps).",
        code=_SCHED_HEAD
        + (
            "        if step < warmup_steps:\n            return step / warmup_steps\n"
            "        progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))\n"
            "        return 0.5 * (1 + math.cos(math.pi * progress))\n"
        )
        + _SCHED_TAIL,
    ),
    Mistake(
        name="counts-calls-not-steps",
        message="LambdaLR calls the factor once per parameter group: a counter of your own "
        "runs ahead with several groups. Use the step argument.",
        code=(
            "import math\nimport torch\n"
            "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
            "    calls = [0]\n"
            "    def factor(_):\n"
            "        step = calls[0] // 1\n"
            "        calls[0] += 1\n"
            "        if step < warmup_steps:\n            return step / warmup_steps\n"
            "        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
            "        return 0.5 * (1 + math.cos(math.pi * progress))\n"
        )
        + _SCHED_TAIL,
    ),
]

MISTAKES["EarlyStopping"] += [
    Mistake(
        name="step-puts-model-in-eval",
        message="step only reads the model: calling model.eval() there leaves the caller's "
        "training run without dropout and with frozen batch norm statistics.",
        code=_stopper(
            "",
            "        model.eval()\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
        ),
    ),
    Mistake(
        name="min-delta-inclusive",
        message="A loss exactly min_delta better is not an improvement: the test is strict, "
        "val_loss < best_loss - min_delta.",
        code=_stopper(
            "",
            "        if val_loss <= self.best_loss - self.min_delta:\n"
            f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
        ),
    ),
    Mistake(
        name="relative-min-delta",
        message="min_delta is an absolute amount of loss, not a fraction of the best loss.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss * (1 - self.min_delta):\n"
            f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
        ),
    ),
    Mistake(
        name="wrong-default-min-delta",
        message="min_delta defaults to 0.0: without it every strictly lower loss is an "
        "improvement.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
        ).replace("min_delta=0.0", "min_delta=0.01"),
    ),
    Mistake(
        name="restore-before-improvement-crashes",
        message="Before any improvement there are no best weights: restore_best should leave the "
        "model as it is, not load None.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
            restore="model.load_state_dict(self.best_state)",
        ),
    ),
    Mistake(
        name="copies-parameters-only",
        message="model.parameters() misses the buffers (batch norm's running statistics): copy "
        "the whole state_dict and load it strictly.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad_epochs = val_loss, 0\n"
            "            self.best_state = {n: p.detach().clone() for n, p in model.named_parameters()}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
            restore="if self.best_state is not None:\n            model.load_state_dict(self.best_state, strict=False)",
        ),
    ),
    Mistake(
        name="best-loss-follows-small-gains",
        message="Only an improvement (by more than min_delta) changes best_loss; a smaller gain "
        "is a bad epoch and leaves best_loss where it was.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            f"            self.bad_epochs, self.best_state = 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        self.best_loss = min(self.best_loss, val_loss)\n"
            "        return self.bad_epochs >= self.patience\n",
        ),
    ),
    Mistake(
        name="first-loss-always-best",
        message="The first loss is an improvement only if it is below inf - min_delta: a NaN "
        "(or inf) first loss is not, and must not become best_loss.",
        code=_stopper(
            "",
            "        if self.best_state is None or val_loss < self.best_loss - self.min_delta:\n"
            f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
        ),
    ),
]

_SAVE_HEAD = (
    "import os\nimport torch\ndef save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
)

MISTAKES["save_checkpoint"] += [
    Mistake(
        name="zero-grad-before-saving",
        message="Saving only reads the objects: optimizer.zero_grad() there wipes the caller's "
        "gradients (accumulated over batches, say). Leave the objects as they were.",
        code=_SAVE_HEAD
        + (
            "    optimizer.zero_grad()  # gradients do not belong in a checkpoint\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': epoch}, path)\n"
        ),
    ),
    Mistake(
        name="hard-coded-file-name",
        message="Save to exactly the path you are given, not to a file name of your own next "
        "to it.",
        code=_SAVE_HEAD
        + (
            "    target = os.path.join(os.path.dirname(path), 'checkpoint.pt')\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': epoch}, target)\n"
        ),
    ),
    Mistake(
        name="epoch-as-tensor",
        message="Save the epoch as the int it is; a tensor epoch compares equal in an assert "
        "but is no longer a number for range(start, num_epochs).",
        code=_SAVE_HEAD
        + (
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': torch.tensor(epoch)}, path)\n"
        ),
    ),
    Mistake(
        name="parameters-not-state-dict",
        message="model.named_parameters() misses the buffers (batch norm's running statistics): "
        "save model.state_dict().",
        code=_SAVE_HEAD
        + (
            "    weights = {n: p.detach() for n, p in model.named_parameters()}\n"
            "    torch.save({'model': weights, 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': epoch}, path)\n"
        ),
    ),
    Mistake(
        name="eval-before-saving",
        message="Saving must not change the model: model.eval() here leaves the rest of "
        "training in eval mode.",
        code=_SAVE_HEAD
        + (
            "    model.eval()  # a clean model to save\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': epoch}, path)\n"
        ),
    ),
]

_LOAD_HEAD = "import torch\ndef load_checkpoint(path, model, optimizer, scheduler, device):\n"

MISTAKES["load_checkpoint"] += [
    Mistake(
        name="loads-into-a-new-optimizer",
        message="Load into the optimizer you were given: a new optimizer gets the saved "
        "momentum buffers and rates, and the caller's goes on without them.",
        code=_LOAD_HEAD
        + (
            "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
            "    model.load_state_dict(checkpoint['model'])\n"
            "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
            "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
            "    return checkpoint['epoch']\n"
        ),
    ),
    Mistake(
        name="loads-into-eval-mode",
        message="Loading restores weights, not a mode: model.eval() after loading leaves the "
        "resumed training without dropout. Leave the model's mode to the caller.",
        code=_LOAD_HEAD
        + (
            "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
            "    model.load_state_dict(checkpoint['model'])\n"
            "    model.eval()\n"
            "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
            "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
            "    return checkpoint['epoch']\n"
        ),
    ),
    Mistake(
        name="non-strict-model-load",
        message="strict=False loads a checkpoint that does not fit without a word; keep the "
        "default strict loading so a mismatch raises.",
        code=_LOAD_HEAD
        + (
            "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
            "    model.load_state_dict(checkpoint['model'], strict=False)\n"
            "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
            "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
            "    return checkpoint['epoch']\n"
        ),
    ),
    Mistake(
        name="assign-replaces-parameters",
        message="load_state_dict(..., assign=True) swaps in new parameter tensors that the "
        "optimizer does not hold: training after the resume would not move the model.",
        code=_LOAD_HEAD
        + (
            "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
            "    model.load_state_dict(checkpoint['model'], assign=True)\n"
            "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
            "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
            "    return checkpoint['epoch']\n"
        ),
    ),
]

_CNN_BODY = (
    "from torch import nn\n"
    "class DigitsCNN(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.net = nn.Sequential(\n"
    "            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
    "            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
    "            nn.Flatten(), nn.Linear(128, 10){end})\n"
    "    def forward(self, x):\n"
    "        return self.net(x){after}\n"
)

MISTAKES["DigitsCNN"] += [
    Mistake(
        name="sigmoid-at-the-end",
        message="A sigmoid squashes the outputs into (0, 1): they are no longer logits. End with "
        "the last Linear layer.",
        code=_CNN_BODY.format(end=", nn.Sigmoid()", after=""),
    ),
    Mistake(
        name="relu-after-last-linear",
        message="A ReLU after the last Linear layer clips every negative logit to 0; end with the "
        "Linear layer itself.",
        code=_CNN_BODY.format(end=", nn.ReLU()", after=""),
    ),
    Mistake(
        name="log-softmax-at-the-end",
        message="The task asks for raw logits; CrossEntropyLoss applies log-softmax itself.",
        code=_CNN_BODY.format(end=", nn.LogSoftmax(dim=1)", after=""),
    ),
    Mistake(
        name="squeeze-drops-batch-of-one",
        message=".squeeze() also drops the batch dimension of a batch of one: the output must "
        "stay (N, 10).",
        code=_CNN_BODY.format(end="", after=".squeeze()"),
    ),
    Mistake(
        name="convolution-not-used",
        message="A Conv2d that forward never calls is not a CNN: pass x through it.",
        code=(
            "from torch import nn\n"
            "class DigitsCNN(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.conv = nn.Conv2d(1, 16, 3, padding=1)\n"
            "        self.mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(),\n"
            "                                 nn.Linear(128, 10))\n"
            "    def forward(self, x):\n"
            "        return self.mlp(x)\n"
        ),
    ),
]

MISTAKES["EarlyStopping"] += [
    Mistake(
        name="true-only-once",
        message="Return True whenever the count has reached patience (>=): with == a caller "
        "that goes on gets False again on the next bad epoch.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs == self.patience\n",
        ),
    ),
]

MISTAKES["train_one_epoch"] += [
    Mistake(
        name="train-mode-at-the-end",
        message="model.train() must come before the loop: called at the end, the whole epoch "
        "trains in the mode the model arrived in (eval after an evaluation).",
        code=_TRAIN_HEAD
        + (
            "    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
            "        total += loss.item() * len(x)\n        count += len(x)\n"
            "    model.train()\n"
            "    return total / count\n"
        ),
    ),
]


def _logged(
    clip: str = "        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n",
    lr: str = "        lr = optimizer.param_groups[0]['lr']\n",
    after_step: str = "",
    step_expr: str = "step",
    model_train: str = "    model.train()\n",
    flush: str = "    writer.flush()\n",
    result: str = "step",
    per_epoch_scheduler: bool = False,
) -> str:
    """train_logged as the solution writes it, with one part swapped out."""
    sched = "" if per_epoch_scheduler else "        scheduler.step()\n"
    return (
        "import torch\nfrom torch import nn\n"
        "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, "
        "num_epochs, max_norm):\n"
        f"{model_train}"
        "    step = 0\n"
        "    for epoch in range(num_epochs):\n"
        "      for i, (x, y) in enumerate(loader):\n"
        "        x, y = x.to(device), y.to(device)\n"
        "        loss = loss_fn(model(x), y)\n"
        "        optimizer.zero_grad()\n"
        "        loss.backward()\n"
        f"{clip}{lr}"
        "        optimizer.step()\n"
        f"{sched}{after_step}"
        f"        writer.add_scalar('train/loss', loss.item(), {step_expr})\n"
        f"        writer.add_scalar('train/lr', lr, {step_expr})\n"
        f"        writer.add_scalar('train/grad_norm', float(grad_norm), {step_expr})\n"
        "        step += 1\n"
        + ("      scheduler.step()\n" if per_epoch_scheduler else "")
        + f"{flush}"
        f"    return {result}\n"
    )


MISTAKES["train_logged"] = [
    Mistake(
        name="step-restarts-each-epoch",
        message="The global step must keep counting across epochs: with the batch index as the "
        "step, every epoch's points land on the same steps and the curves overwrite each other.",
        code=_logged(step_expr="i"),
    ),
    Mistake(
        name="lr-after-scheduler-step",
        message="Read the learning rate before scheduler.step(): afterwards param_groups holds "
        "the next step's rate, so the logged schedule is one step early.",
        code=_logged(lr="", after_step="        lr = optimizer.param_groups[0]['lr']\n"),
    ),
    Mistake(
        name="grad-norm-after-clipping",
        message="Log the norm clip_grad_norm_ returns (before clipping); measured after "
        "clipping it is never above max_norm, a flat line that hides exploding gradients.",
        code=_logged(
            clip="        nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "        grad_norm = torch.linalg.vector_norm(\n"
            "            torch.stack([p.grad.norm() for p in model.parameters()]))\n"
        ),
    ),
    Mistake(
        name="no-flush",
        message="Call writer.flush() before returning: the writer writes from a background "
        "thread, and whoever reads the files right after the run may miss the last events.",
        code=_logged(flush=""),
    ),
    Mistake(
        name="clip-after-step",
        message="Clip between loss.backward() and optimizer.step(): after the step the update "
        "has already used the unclipped gradients.",
        code=_logged(
            clip="",
            after_step="        grad_norm = nn.utils.clip_grad_norm_("
            "model.parameters(), max_norm)\n",
        ),
    ),
    Mistake(
        name="norm-without-clipping",
        message="Measuring the norm is not clipping: clip_grad_norm_(model.parameters(), "
        "max_norm) both returns the norm and scales the gradients down.",
        code=_logged(
            clip="        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), float('inf'))\n"
        ),
    ),
    Mistake(
        name="scheduler-per-epoch",
        message="This schedule counts optimizer steps: call scheduler.step() once per batch, "
        "not once per epoch.",
        code=_logged(per_epoch_scheduler=True),
    ),
    Mistake(
        name="no-train-mode",
        message="Call model.train() at the start: a model that arrives in eval mode (after an "
        "evaluation) would train with dropout switched off.",
        code=_logged(model_train=""),
    ),
    Mistake(
        name="steps-of-last-epoch",
        message="Return the number of optimizer steps of the whole run, not of one epoch.",
        code=_logged(result="i + 1"),
    ),
    Mistake(
        name="step-from-one",
        message="Count the steps from 0, as the scheduler does: step k is logged at global step k.",
        code=_logged(step_expr="step + 1"),
    ),
]

# Issue #27: devices, graphs kept alive, the caller's gradients and hooks.
MISTAKES["train_one_epoch"] += [
    Mistake(
        name="targets-left-on-cpu",
        message="Move both x and y to the device: a target left on the CPU meets logits on the "
        "GPU in the loss, and PyTorch refuses to mix devices.",
        code=_TRAIN_HEAD
        + (
            "    model.train()\n    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        x = x.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
        )
        + _TRAIN_LOOP_END,
    ),
    Mistake(
        name="sums-loss-tensors",
        message="total = total + loss * len(x) keeps every batch's graph alive until the epoch "
        "ends, even with one .item() at the end: add loss.item() to the total.",
        code=_TRAIN_HEAD
        + (
            "    model.train()\n    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
            "        total = total + loss * len(x)\n        count += len(x)\n"
            "    return float(total) / count\n"
        ),
    ),
]

MISTAKES["evaluate"] += [
    Mistake(
        name="targets-left-on-cpu",
        message="Move y to the device too: the loss and the comparison with the predictions "
        "mix a GPU tensor with a CPU one.",
        code=_EVAL_HEAD
        + (
            "    was_training = model.training\n    model.eval()\n"
            "    total, correct, count = 0.0, 0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n            logits = model(x.to(device))\n"
            "            total += loss_fn(logits, y).item() * len(x)\n"
            "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
            "            count += len(x)\n"
            "    model.train(was_training)\n"
            "    return total / count, correct / count\n"
        ),
    ),
    Mistake(
        name="zero-grad-in-evaluate",
        message="model.zero_grad() in evaluate throws away the gradients the caller was "
        "accumulating: evaluation must change nothing, .grad included.",
        code=_EVAL_HEAD
        + "    model.zero_grad()\n    was_training = model.training\n    model.eval()\n"
        + _EVAL_LOOP
        + "    model.train(was_training)\n    return total / count, correct / count\n",
    ),
    Mistake(
        name="hook-left-on-the-model",
        message="A forward hook registered to collect the logits stays on the caller's model "
        "(and keeps collecting): remove it with the handle register_forward_hook returns.",
        code=_EVAL_HEAD
        + (
            "    was_training = model.training\n    model.eval()\n"
            "    outputs = []\n"
            "    model.register_forward_hook(lambda m, inp, out: outputs.append(out))\n"
            "    total, correct, count = 0.0, 0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
            "            model(x)\n            logits = outputs[-1]\n"
            "            total += loss_fn(logits, y).item() * len(x)\n"
            "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
            "            count += len(x)\n"
            "    model.train(was_training)\n"
            "    return total / count, correct / count\n"
        ),
    ),
]

MISTAKES["train_logged"] += [
    Mistake(
        name="reseeds-inside-the-run",
        message="torch.manual_seed inside train_logged resets the caller's random state: the "
        "dropout masks repeat. Leave seeding to the caller.",
        code=_logged(model_train="    torch.manual_seed(0)\n    model.train()\n"),
    ),
    Mistake(
        name="zero-grad-after-step",
        message="optimizer.zero_grad() after the step instead of before loss.backward(): the "
        "first step adds the caller's leftover gradients to its own, and the model ends "
        "without the last step's gradients.",
        code=_logged(
            after_step="        optimizer.zero_grad()\n",
        ).replace(
            "        optimizer.zero_grad()\n        loss.backward()\n", "        loss.backward()\n"
        ),
    ),
]

# Red-team round (from the notebook text alone): candidates appended at each list's end.
MISTAKES["make_loss_fn"] += [
    Mistake(
        name="case-insensitive-task-name",
        message="Only the three names are tasks: 'MultiClass' or ' regression' is 'any other "
        "name' and must raise ValueError, not be normalised with lower()/strip().",
        code=(
            "from torch import nn\n"
            "def make_loss_fn(task):\n"
            "    task = task.strip().lower()\n"
            "    if task == 'multiclass':\n        return nn.CrossEntropyLoss()\n" + _LOSS_REST
        ),
    ),
    Mistake(
        name="log-sum-exp-without-max",
        message="logits.exp() overflows to inf on confident logits: log_softmax (or "
        "CrossEntropyLoss) subtracts the maximum first and stays finite.",
        code=(
            "import torch\nfrom torch import nn\n"
            "class ExpCE(nn.Module):\n"
            "    def forward(self, logits, y):\n"
            "        log_p = logits - logits.exp().sum(dim=1, keepdim=True).log()\n"
            "        return -log_p.gather(1, y[:, None]).mean()\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return ExpCE()\n" + _LOSS_REST
        ),
    ),
    Mistake(
        name="multilabel-in-float64",
        message="Computing the loss in float64 returns a float64 loss for float32 logits: "
        "compute it in the dtype it is given.",
        code=(
            "import torch\nfrom torch import nn\n"
            "class DoubleBCE(nn.Module):\n"
            "    def forward(self, logits, y):\n"
            "        return nn.functional.binary_cross_entropy_with_logits(logits.double(), y.double())\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n        return nn.CrossEntropyLoss()\n"
            "    if task == 'multilabel':\n        return DoubleBCE()\n"
            "    if task == 'regression':\n        return nn.MSELoss()\n"
            "    raise ValueError(task)\n"
        ),
    ),
]

MISTAKES["train_one_epoch"] += [
    Mistake(
        name="counts-samples-in-a-first-pass",
        message="Read the loader once: a first pass to count the samples draws another "
        "shuffle (and doubles the loading work); count len(x) in the training loop.",
        code=_TRAIN_HEAD
        + (
            "    model.train()\n    n = sum(len(x) for x, _ in loader)\n    total = 0.0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "    return total / n\n"
        ),
    ),
    Mistake(
        name="targets-cast-to-long",
        message="y may be float targets (B, D) for a regression: cast nothing, move y to the "
        "device as it is.",
        code=_TRAIN_HEAD
        + (
            "    model.train()\n    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device).long()\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
        )
        + _TRAIN_LOOP_END,
    ),
    Mistake(
        name="skips-batches-of-one",
        message="Train on every batch, a batch of one included: skipping it leaves samples "
        "out of the epoch.",
        code=_TRAIN_HEAD
        + (
            "    model.train()\n    total, count = 0.0, 0\n"
            "    for x, y in loader:\n        if len(x) < 2:\n            continue\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n        optimizer.zero_grad()\n"
            "        loss.backward()\n        optimizer.step()\n"
            "        if scheduler is not None:\n            scheduler.step()\n"
        )
        + _TRAIN_LOOP_END,
    ),
]

MISTAKES["evaluate"] += [
    Mistake(
        name="unfreezes-parameters",
        message="Switching requires_grad off and back on for every parameter unfreezes the "
        "ones the caller had frozen: use torch.no_grad() and leave the flags alone.",
        code=_EVAL_HEAD
        + "    was_training = model.training\n    model.eval()\n"
        + "    for p in model.parameters():\n        p.requires_grad_(False)\n"
        + _EVAL_LOOP
        + "    for p in model.parameters():\n        p.requires_grad_(True)\n"
        + "    model.train(was_training)\n    return total / count, correct / count\n",
    ),
    Mistake(
        name="grad-switched-back-on",
        message="torch.set_grad_enabled(True) at the end turns gradients on even for a caller "
        "that had them off: `with torch.no_grad():` restores the state it found.",
        code=_EVAL_HEAD
        + (
            "    was_training = model.training\n    model.eval()\n"
            "    torch.set_grad_enabled(False)\n"
            "    total, correct, count = 0.0, 0, 0\n"
            "    for x, y in loader:\n        x, y = x.to(device), y.to(device)\n"
            "        logits = model(x)\n"
            "        total += loss_fn(logits, y).item() * len(x)\n"
            "        correct += (logits.argmax(dim=1) == y).sum().item()\n"
            "        count += len(x)\n"
            "    torch.set_grad_enabled(True)\n"
            "    model.train(was_training)\n    return total / count, correct / count\n"
        ),
    ),
    Mistake(
        name="counts-samples-in-a-first-pass",
        message="Read the loader once: a first pass only to count the samples doubles the "
        "loading work, and a stream of batches can be read only once.",
        code=_EVAL_HEAD
        + (
            "    was_training = model.training\n    model.eval()\n"
            "    n = sum(len(y) for _, y in loader)\n"
            "    total, correct = 0.0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y).item() * len(x)\n"
            "            correct += (logits.argmax(dim=1) == y).sum().item()\n"
            "    model.train(was_training)\n    return total / n, correct / n\n"
        ),
    ),
]

MISTAKES["make_warmup_cosine"] += [
    Mistake(
        name="warmup-inclusive-at-zero",
        message="With warmup_steps=0 there is no warm-up: step 0 already has the full factor "
        "1. Test step < warmup_steps (strict).",
        code=_SCHED_HEAD
        + (
            "        if step <= warmup_steps:\n            return step / max(1, warmup_steps)\n"
            "        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
            "        return 0.5 * (1 + math.cos(math.pi * progress))\n"
        )
        + _SCHED_TAIL,
    ),
    Mistake(
        name="sequential-library-schedulers",
        message="The task asks for a LambdaLR with this factor; LinearLR plus "
        "CosineAnnealingLR in a SequentialLR is another object with its own rules.",
        code=(
            "import torch\n"
            "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
            "    S = torch.optim.lr_scheduler\n"
            "    warm = S.LinearLR(optimizer, start_factor=1e-8, end_factor=1.0, total_iters=max(1, warmup_steps))\n"
            "    cos = S.CosineAnnealingLR(optimizer, T_max=max(1, total_steps - warmup_steps))\n"
            "    return S.SequentialLR(optimizer, [warm, cos], milestones=[warmup_steps])\n"
        ),
    ),
    Mistake(
        name="factor-as-tensor",
        message="Return a Python number: a tensor factor turns every learning rate into a tensor.",
        code=_SCHED_HEAD
        + (
            "        if step < warmup_steps:\n            return torch.tensor(step / warmup_steps)\n"
            "        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
            "        return 0.5 * (1 + torch.cos(torch.tensor(math.pi * progress)))\n"
        )
        + _SCHED_TAIL,
    ),
]

MISTAKES["EarlyStopping"] += [
    Mistake(
        name="class-level-shared-state",
        message="A dict made in the class body is shared by every EarlyStopping: one "
        "stopper's best weights leak into another's restore_best. Make it in __init__.",
        code=(
            "import math\n"
            "class EarlyStopping:\n"
            "    best_state = {}\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad_epochs = math.inf, 0\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad_epochs = val_loss, 0\n"
            f"            self.best_state.update({_CLONE})\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.best_state:\n"
            "            model.load_state_dict(self.best_state)\n"
        ),
    ),
    Mistake(
        name="restore-with-assign",
        message="load_state_dict(..., assign=True) makes the stored copies the model's new "
        "parameters: the caller's optimizer no longer holds them, and further training "
        "changes the stored best. Load without assign (it copies into the parameters).",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            f"            self.best_loss, self.bad_epochs, self.best_state = val_loss, 0, {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
            restore="if self.best_state is not None:\n"
            "            model.load_state_dict(self.best_state, assign=True)",
        ),
    ),
    Mistake(
        name="snapshot-only-once",
        message="Store a new copy at every improvement, not only the first time: otherwise "
        "restore_best goes back to the first improving epoch.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad_epochs = val_loss, 0\n"
            "            if self.best_state is None:\n"
            f"                self.best_state = {_CLONE}\n"
            "        else:\n            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
        ),
    ),
]

MISTAKES["save_checkpoint"] += [
    Mistake(
        name="eval-then-train-around-saving",
        message="model.train() after saving puts a model that was in eval mode into train "
        "mode: saving needs no mode at all, so change none.",
        code=_SAVE_HEAD
        + (
            "    model.eval()\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': epoch}, path)\n"
            "    model.train()\n"
        ),
    ),
]

MISTAKES["load_checkpoint"] += [
    Mistake(
        name="weights-only-off",
        message="Load with weights_only=True: weights_only=False unpickles whatever objects "
        "the file holds, code included.",
        code=_LOAD_HEAD
        + (
            "    checkpoint = torch.load(path, map_location=device, weights_only=False)\n"
            "    model.load_state_dict(checkpoint['model'])\n"
            "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
            "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
            "    return checkpoint['epoch']\n"
        ),
    ),
    Mistake(
        name="train-mode-after-loading",
        message="Loading restores weights, not a mode: leave the model's mode to the caller.",
        code=_LOAD_HEAD
        + (
            "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
            "    model.load_state_dict(checkpoint['model'])\n"
            "    model.train()\n"
            "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
            "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
            "    return checkpoint['epoch']\n"
        ),
    ),
    Mistake(
        name="zero-grad-after-loading",
        message="Loading must not touch the gradients: optimizer.zero_grad() there throws "
        "away what the caller had accumulated.",
        code=_LOAD_HEAD
        + (
            "    checkpoint = torch.load(path, map_location=device, weights_only=True)\n"
            "    model.load_state_dict(checkpoint['model'])\n"
            "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
            "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
            "    optimizer.zero_grad()\n"
            "    return checkpoint['epoch']\n"
        ),
    ),
]

MISTAKES["train_logged"] += [
    Mistake(
        name="closes-the-writer",
        message="Flush, do not close: the writer is the caller's, who may log more after the "
        "run (validation losses, say).",
        code=_logged(flush="    writer.close()\n"),
    ),
    Mistake(
        name="targets-left-on-cpu",
        message="Move both x and y to the device: a target left on the CPU meets logits on the "
        "GPU in the loss.",
        code=_logged().replace(
            "        x, y = x.to(device), y.to(device)\n", "        x = x.to(device)\n"
        ),
    ),
    Mistake(
        name="new-writer-on-its-folder",
        message="Use the writer you were given: a second SummaryWriter on its folder writes a "
        "second event file.",
        code=_logged(flush="    writer.flush()\n").replace(
            "    step = 0\n",
            "    from torch.utils.tensorboard import SummaryWriter\n"
            "    writer = SummaryWriter(writer.log_dir)\n    step = 0\n",
        ),
    ),
]

MISTAKES["DigitsCNN"] += [
    Mistake(
        name="normalises-input-in-place",
        message="x.sub_(0.5) changes the caller's batch: normalise out of place (x = x - 0.5).",
        code=_CNN_BODY.format(end="", after="").replace(
            "        return self.net(x)", "        return self.net(x.sub_(0.5).div_(0.5))"
        ),
    ),
    Mistake(
        name="extra-channel-made-on-cpu",
        message="torch.ones(...) without device= lands on the CPU: on a GPU torch.cat meets "
        "the batch on another device. Use x.new_ones or torch.ones_like(x).",
        code=(
            "import torch\nfrom torch import nn\n"
            "class DigitsCNN(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.net = nn.Sequential(\n"
            "            nn.Conv2d(2, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
            "            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
            "            nn.Flatten(), nn.Linear(128, 10))\n"
            "    def forward(self, x):\n"
            "        ones = torch.ones(len(x), 1, 8, 8)  # a constant channel, the conv's 'bias'\n"
            "        return self.net(torch.cat([x, ones], dim=1))\n"
        ),
    ),
    Mistake(
        name="features-detached",
        message="features.detach() stops the gradient at the convolutions: they never train. "
        "Let the gradient flow through the whole network.",
        code=_CNN_BODY.format(end="", after="").replace(
            "        return self.net(x)",
            "        return self.net[6:](self.net[:6](x).detach())",
        ),
    ),
]

# Device red team (issue #27): devices and process-wide modes.
MISTAKES["train_one_epoch"] += [
    Mistake(
        name="weights-on-cpu",
        message="torch.tensor(sizes) without device= lands on the CPU: on a GPU the product with the stacked losses mixes devices. Make it with device= the losses' device, or sum loss.item() * len(x) as floats.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    losses, sizes = [], []\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        losses.append(loss.detach())\n"
            "        sizes.append(len(x))\n"
            "    w = torch.tensor(sizes, dtype=torch.float32)\n"
            "    return (torch.stack(losses) @ w / w.sum()).item()\n"
        ),
    ),
    Mistake(
        name="single-sample-batch-not-moved",
        message="A batch of one sample is never moved to the device: on a GPU its labels stay on the CPU and the loss mixes devices. Move every batch, x and y, whatever its size.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    total, count = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        if len(x) > 1:  # a lone sample needs no transfer batching\n"
            "            x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x.to(device)), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "        count += len(x)\n"
            "    return total / count\n"
        ),
    ),
    Mistake(
        name="grad-off-left",
        message="torch.set_grad_enabled(False) at the end switches autograd off for the caller: the next epoch's loss.backward() fails. Leave it as you found it.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    torch.set_grad_enabled(True)\n"
            "    model.train()\n"
            "    total, count = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "        count += len(x)\n"
            "    torch.set_grad_enabled(False)  # the epoch is over: no more graphs\n"
            "    return total / count\n"
        ),
    ),
]
MISTAKES["evaluate"] += [
    Mistake(
        name="hits-on-cpu",
        message="torch.zeros(1) without device= lands on the CPU: on a GPU adding the device's hit count into it mixes devices. Make it with device=device, or count with .item().",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was = model.training\n"
            "    model.eval()\n"
            "    total = 0.0\n"
            "    hits = torch.zeros(1, dtype=torch.long)\n"
            "    n = 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y).item() * len(y)\n"
            "            hits += (logits.argmax(1) == y).sum()\n"
            "            n += len(y)\n"
            "    model.train(was)\n"
            "    return total / n, hits.item() / n\n"
        ),
    ),
    Mistake(
        name="mask-fill-cpu",
        message="A mask computed on the CPU (labels never moved) used in masked_fill on the device's tensor: a GPU refuses a mask on another device. Move y to the device and count there.",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was = model.training\n"
            "    model.eval()\n"
            "    total, correct, n = 0.0, 0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x = x.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y.to(device)).item() * len(y)\n"
            "            wrong = logits.argmax(1).cpu() != y\n"
            "            correct += len(y) - int(torch.ones(len(y), device=device).masked_fill(~wrong, 0).sum())\n"
            "            n += len(y)\n"
            "    model.train(was)\n"
            "    return total / n, correct / n\n"
        ),
    ),
]
MISTAKES["EarlyStopping"] += [
    Mistake(
        name="grad-off-snapshot",
        message="torch.set_grad_enabled(False) inside step() switches autograd off for the whole training loop that calls it: copy under `with torch.no_grad():` instead.",
        code=(
            "import math\n"
            "import torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.state = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        torch.set_grad_enabled(False)  # no graph for the copies\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.state = {k: v.clone() for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.state is not None:\n"
            "            model.load_state_dict(self.state)\n"
        ),
    ),
    Mistake(
        name="default-dtype-in-init",
        message="torch.set_default_dtype(torch.float64) in the constructor changes every tensor the caller makes afterwards: leave the default dtype alone.",
        code=(
            "import math\n"
            "import torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        torch.set_default_dtype(torch.float64)  # compare losses in double precision\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.state = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.state is not None:\n"
            "            model.load_state_dict(self.state)\n"
        ),
    ),
    Mistake(
        name="default-dtype-in-step",
        message="torch.set_default_dtype(torch.float64) in step() changes every tensor the caller makes afterwards: leave the default dtype alone.",
        code=(
            "import math\n"
            "import torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.state = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        torch.set_default_dtype(torch.float64)  # compare losses in double precision\n"
            "        if float(torch.tensor(val_loss)) < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.state is not None:\n"
            "            model.load_state_dict(self.state)\n"
        ),
    ),
]
MISTAKES["train_logged"] += [
    Mistake(
        name="clip-limit-1d-cpu",
        message="torch.tensor([max_norm]) is a 1-element CPU tensor, not a scalar: on a GPU dividing it by the gradients' norm mixes devices. Use the float max_norm (or clip_grad_norm_).",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    step = 0\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "            norm = torch.linalg.vector_norm(torch.cat([g.flatten() for g in grads]))\n"
            "            scale = torch.clamp(torch.tensor([max_norm]) / (norm + 1e-6), max=1.0)\n"
            "            for g in grads:\n"
            "                g.mul_(scale)\n"
            "            lr = optimizer.param_groups[0]['lr']\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "            writer.add_scalar('train/loss', loss.item(), step)\n"
            "            writer.add_scalar('train/lr', lr, step)\n"
            "            writer.add_scalar('train/grad_norm', norm.item(), step)\n"
            "            step += 1\n"
            "    writer.flush()\n"
            "    return step\n"
        ),
    ),
    Mistake(
        name="one-hot-target-on-cpu",
        message="The one-hot target is built from y left on the CPU: on a GPU the loss mixes devices. Move y to the device first (and loss_fn takes class ids anyway).",
        code=(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    step = 0\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            out = model(x.to(device))\n"
            "            target = F.one_hot(y, out.shape[1]).to(out.dtype)  # probabilities as the target\n"
            "            loss = loss_fn(out, target)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "            lr = optimizer.param_groups[0]['lr']\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "            writer.add_scalar('train/loss', loss.item(), step)\n"
            "            writer.add_scalar('train/lr', lr, step)\n"
            "            writer.add_scalar('train/grad_norm', float(grad_norm), step)\n"
            "            step += 1\n"
            "    writer.flush()\n"
            "    return step\n"
        ),
    ),
]

# Device red team (issue #27): a CPU 0-d accumulator updated in place.
MISTAKES["evaluate"] += [
    Mistake(
        name="cpu-0d-accumulator-in-place",
        message="torch.zeros(()) without device= is a CPU accumulator: on a GPU adding the device's loss into it in place (+=) fails, since a CPU scalar may be an operand of a GPU op but not its output. Make it with device=device, or add up loss.item() as floats.",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was = model.training\n"
            "    model.eval()\n"
            "    total, hits, n = torch.zeros(()), torch.zeros((), dtype=torch.long), 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y) * len(y)\n"
            "            hits += (logits.argmax(1) == y).sum()\n"
            "            n += len(y)\n"
            "    model.train(was)\n"
            "    return total.item() / n, hits.item() / n\n"
        ),
    ),
]

# Device red team (issue #27): a CPU 0-d accumulator updated in place.
MISTAKES["train_one_epoch"] += [
    Mistake(
        name="cpu-0d-loss-total-in-place",
        message="torch.zeros(()) without device= is a CPU accumulator: on a GPU adding the device's loss into it in place (+=) fails, since a CPU scalar may be an operand of a GPU op but not its output. Make it with device=device, or add up loss.item() as floats.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    total, count = torch.zeros(()), 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.detach() * len(x)\n"
            "        count += len(x)\n"
            "    return total.item() / count\n"
        ),
    ),
]


# Red team, round 3 (issue #27): fresh wrong answers written from the exercise texts alone
# (task names matched loosely, the caller's loss_fn or random state changed, side effects of a
# stopper, files left or deleted, a checkpoint from a GPU run, capped logits, a resumed schedule).
MISTAKES["make_loss_fn"] += [
    Mistake(
        name="endswith-task-names",
        message="Only the three exact names are tasks: task.endswith('class') or task.startswith('regress') also accepts 'binary_multilabel' or 'regressor'. Compare the whole name with ==.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "def make_loss_fn(task):\n"
            "    if task.endswith('class'):\n"
            "        return nn.CrossEntropyLoss()\n"
            "    if task.endswith('label'):\n"
            "        return nn.BCEWithLogitsLoss()\n"
            "    if task.startswith('regress'):\n"
            "        return nn.MSELoss()\n"
            "    raise ValueError(task)\n"
        ),
    ),
    Mistake(
        name="rstrip-task-name",
        message="task.rstrip() turns 'regression ' into a task; every name other than the three exact ones raises ValueError: compare the name as it is.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "def make_loss_fn(task):\n"
            "    task = task.rstrip()\n"
            "    if task == 'multiclass':\n"
            "        return nn.CrossEntropyLoss()\n"
            "    if task == 'multilabel':\n"
            "        return nn.BCEWithLogitsLoss()\n"
            "    if task == 'regression':\n"
            "        return nn.MSELoss()\n"
            "    raise ValueError(task)\n"
        ),
    ),
    Mistake(
        name="loss-shaped-1",
        message="The loss must be a 0-d scalar, as the built-in losses return it: reshape(1) gives shape (1,), which code that expects a scalar loss does not.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "class Keep(nn.Module):\n"
            "    def __init__(self, inner):\n"
            "        super().__init__(); self.inner = inner\n"
            "    def forward(self, a, b):\n"
            "        return self.inner(a, b).reshape(1)\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n"
            "        return Keep(nn.CrossEntropyLoss())\n"
            "    if task == 'multilabel':\n"
            "        return Keep(nn.BCEWithLogitsLoss())\n"
            "    if task == 'regression':\n"
            "        return Keep(nn.MSELoss())\n"
            "    raise ValueError(task)\n"
        ),
    ),
    Mistake(
        name="ignore-index-zero",
        message="ignore_index=0 leaves every sample of class 0 out of the loss (a batch of class 0 only gives nan): the default CrossEntropyLoss() counts every class.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "def make_loss_fn(task):\n"
            "    if task == 'multiclass':\n"
            "        return nn.CrossEntropyLoss(ignore_index=0)\n"
            "    if task == 'multilabel':\n"
            "        return nn.BCEWithLogitsLoss()\n"
            "    if task == 'regression':\n"
            "        return nn.MSELoss()\n"
            "    raise ValueError(task)\n"
        ),
    ),
]
MISTAKES["train_one_epoch"] += [
    Mistake(
        name="fork-rng-around-epoch",
        message="torch.random.fork_rng() around the loop puts the global random state back afterwards: every epoch then draws the same dropout masks, as reseeding would. Leave the random state to the caller.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    total, n = 0.0, 0\n"
            "    with torch.random.fork_rng(devices=[]):\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            optimizer.step()\n"
            "            if scheduler is not None:\n"
            "                scheduler.step()\n"
            "            total += loss.item() * len(x)\n"
            "            n += len(x)\n"
            "    return total / n\n"
        ),
    ),
    Mistake(
        name="restores-rng-state",
        message="Saving torch.get_rng_state() and setting it back at the end rewinds the random state: the next epoch repeats this epoch's dropout masks. Leave the random state to the caller.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    state = torch.get_rng_state()\n"
            "    model.train()\n"
            "    total, n = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "        n += len(x)\n"
            "    torch.set_rng_state(state)\n"
            "    return total / n\n"
        ),
    ),
    Mistake(
        name="loss-reduction-left-none",
        message="Setting loss_fn.reduction = 'none' changes the caller's loss function for good: their next evaluation gets a vector of losses. Use the loss as it is given (it is already a mean).",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    loss_fn.reduction = 'none'\n"
            "    total, n = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        per = loss_fn(model(x), y)\n"
            "        loss = per.mean()\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "        n += len(x)\n"
            "    return total / n\n"
        ),
    ),
    Mistake(
        name="clips-unasked",
        message="clip_grad_norm_ is not one of the steps asked for: it changes every step whose gradient norm is above the limit. Do forward, loss, zero_grad, backward and step, nothing more.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    total, n = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "        n += len(x)\n"
            "    return total / n\n"
        ),
    ),
    Mistake(
        name="inputs-cast-float32",
        message="x.to(device, torch.float32) also changes the dtype: a float64 (or half-precision) model then meets float32 batches and fails. Move the batches with x.to(device) only.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    total, n = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device, torch.float32), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "        n += len(x)\n"
            "    return total / n\n"
        ),
    ),
]
MISTAKES["evaluate"] += [
    Mistake(
        name="loss-reduction-left-sum",
        message="Setting loss_fn.reduction = 'sum' changes the caller's loss function for good: their next training epoch sums instead of averaging. Multiply the mean by len(x) instead.",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was = model.training\n"
            "    model.eval()\n"
            "    loss_fn.reduction = 'sum'\n"
            "    total, hits, n = 0.0, 0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y).item()\n"
            "            hits += (logits.argmax(1) == y).sum().item()\n"
            "            n += len(x)\n"
            "    model.train(was)\n"
            "    return total / n, hits / n\n"
        ),
    ),
    Mistake(
        name="divides-by-dataset-length",
        message="len(loader.dataset) needs a loader with a dataset; a stream of batches has none. Count the samples as the loop sees them: n += len(x).",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was = model.training\n"
            "    model.eval()\n"
            "    total, hits = 0.0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y).item() * len(x)\n"
            "            hits += (logits.argmax(1) == y).sum().item()\n"
            "    model.train(was)\n"
            "    n = len(loader.dataset)\n"
            "    return total / n, hits / n\n"
        ),
    ),
    Mistake(
        name="accuracy-as-tensor",
        message="The accuracy comes back as a tensor: call .item() (or float()) so that evaluate returns two Python floats.",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was = model.training\n"
            "    model.eval()\n"
            "    total, hits, n = 0.0, 0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y).item() * len(x)\n"
            "            hits += (logits.argmax(1) == y).sum()\n"
            "            n += len(x)\n"
            "    model.train(was)\n"
            "    return total / n, hits / n\n"
        ),
    ),
]
MISTAKES["make_warmup_cosine"] += [
    Mistake(
        name="table-without-clamp",
        message="A table of factors up to total_steps runs out after it: table[step] raises IndexError once training goes on. Compute the factor from step, with progress clamped to 1.",
        code=(
            "import math\n"
            "import torch\n"
            "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
            "    table = []\n"
            "    for s in range(total_steps + 1):\n"
            "        if s < warmup_steps:\n"
            "            table.append(s / warmup_steps)\n"
            "        else:\n"
            "            p = min(1, (s - warmup_steps) / max(1, total_steps - warmup_steps))\n"
            "            table.append(0.5 * (1 + math.cos(math.pi * p)))\n"
            "    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: table[s])\n"
        ),
    ),
    Mistake(
        name="one-lambda-list-for-first-group",
        message="LambdaLR with a list of functions needs one per parameter group; [f] fails on an optimizer with two groups. Pass the function itself: LambdaLR(optimizer, f).",
        code=(
            "import math\n"
            "import torch\n"
            "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
            "    def f(step):\n"
            "        if step < warmup_steps:\n"
            "            return step / warmup_steps\n"
            "        p = min(1, (step - warmup_steps) / max(1, total_steps - warmup_steps))\n"
            "        return 0.5 * (1 + math.cos(math.pi * p))\n"
            "    return torch.optim.lr_scheduler.LambdaLR(optimizer, [f])\n"
        ),
    ),
    Mistake(
        name="progress-integer-division",
        message="// is integer division: progress stays 0 until total_steps and then jumps to 1, so the cosine never decays. Use / for progress.",
        code=(
            "import math\n"
            "import torch\n"
            "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
            "    def f(step):\n"
            "        if step < warmup_steps:\n"
            "            return step / warmup_steps\n"
            "        p = min(1, (step - warmup_steps) // max(1, total_steps - warmup_steps))\n"
            "        return 0.5 * (1 + math.cos(math.pi * p))\n"
            "    return torch.optim.lr_scheduler.LambdaLR(optimizer, f)\n"
        ),
    ),
]
MISTAKES["EarlyStopping"] += [
    Mistake(
        name="half-precision-copy",
        message="A half-precision copy (.half()) loses digits: restore_best then loads weights that differ from the best epoch's. Keep the copy in the tensors' own dtype: v.detach().clone().",
        code=(
            "import math, copy, torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.best_state = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.best_state = {k: v.detach().clone().half() if v.is_floating_point() else v.detach().clone() for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.best_state is not None:\n"
            "            model.load_state_dict(self.best_state)\n"
        ),
    ),
    Mistake(
        name="restore-puts-eval",
        message="restore_best only loads weights: calling model.eval() there changes the caller's mode, and their next epoch trains with dropout off.",
        code=(
            "import math, copy, torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.best_state = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.best_state is not None:\n"
            "            model.load_state_dict(self.best_state)\n"
            "        model.eval()\n"
        ),
    ),
    Mistake(
        name="step-zeroes-grads",
        message="model.zero_grad() inside step clears the caller's gradients: a stopper only reads the model.",
        code=(
            "import math, copy, torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.best_state = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        model.zero_grad()\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.best_state is not None:\n"
            "            model.load_state_dict(self.best_state)\n"
        ),
    ),
    Mistake(
        name="best-starts-huge-number",
        message="best_loss starts at math.inf, not at a large number: with 1e9 a loss above it (an exploding run) is never an improvement.",
        code=(
            "import math, copy, torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.best_state = math.inf, 0, None\n"
            "        self.best_loss = 1e9\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.best_state is not None:\n"
            "            model.load_state_dict(self.best_state)\n"
        ),
    ),
    Mistake(
        name="restore-resets-best",
        message="restore_best loads the best weights and changes nothing else: resetting best_loss to inf loses what the caller may print, and a second restore_best loads nothing.",
        code=(
            "import math, copy, torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.best_state = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.best_state is not None:\n"
            "            model.load_state_dict(self.best_state)\n"
            "        self.best_state, self.best_loss, self.bad = None, math.inf, 0\n"
        ),
    ),
]
MISTAKES["save_checkpoint"] += [
    Mistake(
        name="half-precision-weights",
        message="Saving the weights in half precision loses digits: the resumed model is not the one saved. Save model.state_dict() as it is.",
        code=(
            "import torch, os\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    torch.save({'model': {k: v.half() if v.is_floating_point() else v for k, v in model.state_dict().items()},\n"
            "                'optimizer': optimizer.state_dict(), 'scheduler': scheduler.state_dict(), 'epoch': epoch}, path)\n"
        ),
    ),
    Mistake(
        name="backup-file-beside",
        message="A second copy at path + '.bak' is a file the caller did not ask for: write exactly the path given, and nothing else.",
        code=(
            "import torch, os\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    bundle = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "              'scheduler': scheduler.state_dict(), 'epoch': epoch}\n"
            "    torch.save(bundle, path)\n"
            "    torch.save(bundle, path + '.bak')\n"
        ),
    ),
    Mistake(
        name="epoch-as-float",
        message="float(epoch) saves 1.0, not the int 1: range(start, num_epochs) then fails on resume. Save epoch as it is passed.",
        code=(
            "import torch, os\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': float(epoch)}, path)\n"
        ),
    ),
    Mistake(
        name="optimizer-state-without-param-groups",
        message="The optimizer's state_dict() has two parts, 'state' and 'param_groups' (the rates and settings): without the groups it cannot be loaded. Save optimizer.state_dict() whole.",
        code=(
            "import torch, os\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': {'state': optimizer.state_dict()['state'], 'param_groups': []},\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': epoch}, path)\n"
        ),
    ),
]
MISTAKES["load_checkpoint"] += [
    Mistake(
        name="no-map-location",
        message="Without map_location, torch.load puts every tensor back on the device it was saved from: a checkpoint saved on a GPU fails on a machine without one. Pass map_location=device.",
        code=(
            "import torch, os\n"
            "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
            "    ckpt = torch.load(path, weights_only=True)\n"
            "    model.load_state_dict(ckpt['model'])\n"
            "    optimizer.load_state_dict(ckpt['optimizer'])\n"
            "    scheduler.load_state_dict(ckpt['scheduler'])\n"
            "    return ckpt['epoch']\n"
        ),
    ),
    Mistake(
        name="deletes-the-checkpoint",
        message="os.remove(path) after loading deletes the caller's checkpoint: if the resumed run crashes too, there is nothing to resume from. Loading only reads the file.",
        code=(
            "import torch, os\n"
            "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
            "    ckpt = torch.load(path, map_location=device, weights_only=True)\n"
            "    os.remove(path)\n"
            "    model.load_state_dict(ckpt['model'])\n"
            "    optimizer.load_state_dict(ckpt['optimizer'])\n"
            "    scheduler.load_state_dict(ckpt['scheduler'])\n"
            "    return ckpt['epoch']\n"
        ),
    ),
    Mistake(
        name="steps-scheduler-after-loading",
        message="scheduler.step() after loading moves the schedule one step on: the resumed run uses the next step's learning rate. load_state_dict already puts it where it was.",
        code=(
            "import torch, os\n"
            "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
            "    ckpt = torch.load(path, map_location=device, weights_only=True)\n"
            "    model.load_state_dict(ckpt['model'])\n"
            "    optimizer.load_state_dict(ckpt['optimizer'])\n"
            "    scheduler.load_state_dict(ckpt['scheduler'])\n"
            "    scheduler.step()\n"
            "    return ckpt['epoch']\n"
        ),
    ),
]
MISTAKES["DigitsCNN"] += [
    Mistake(
        name="conv-times-zero",
        message="0 * self.conv(x).sum() runs the convolution but uses none of it: the logits do not depend on it, and its weights get no gradient. Feed the convolution's output into the layers after it.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "class DigitsCNN(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.conv = nn.Conv2d(1, 4, 3, padding=1)\n"
            "        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))\n"
            "    def forward(self, x):\n"
            "        return self.net(x) + 0 * self.conv(x).sum()\n"
        ),
    ),
    Mistake(
        name="clamped-logits",
        message="A clamp after the last layer caps the logits: confident predictions all end at the same value. Return the last Linear layer's output as it is.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "class DigitsCNN(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
            "                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))\n"
            "        self.head = nn.Linear(32 * 2 * 2, 10)\n"
            "    def forward(self, x):\n"
            "        return self.head(self.features(x).flatten(1)).clamp(-8, 8)\n"
        ),
    ),
    Mistake(
        name="dropout-always-on",
        message="F.dropout(x, p, training=True) drops activations in eval mode too, so evaluation becomes random. Use nn.Dropout, or training=self.training.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "class DigitsCNN(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
            "                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))\n"
            "        self.head = nn.Linear(32 * 2 * 2, 10)\n"
            "    def forward(self, x):\n"
            "        return self.head(F.dropout(self.features(x).flatten(1), 0.1, training=True))\n"
        ),
    ),
]
MISTAKES["train_logged"] += [
    Mistake(
        name="step-from-scheduler",
        message="scheduler.last_epoch is where the schedule is, not this run's step: a resumed schedule starts past 0. Keep a counter of your own, from 0.",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "            lr = optimizer.param_groups[0]['lr']\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "            writer.add_scalar('train/loss', loss.item(), scheduler.last_epoch - 1)\n"
            "            writer.add_scalar('train/lr', lr, scheduler.last_epoch - 1)\n"
            "            writer.add_scalar('train/grad_norm', float(norm), scheduler.last_epoch - 1)\n"
            "    writer.flush()\n"
            "    return scheduler.last_epoch\n"
        ),
    ),
    Mistake(
        name="lr-of-last-group",
        message="param_groups[-1] is the last group; log the first one's rate, optimizer.param_groups[0]['lr'], as the text asks (groups may have different rates).",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    step = 0\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "            lr = optimizer.param_groups[-1]['lr']\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "            writer.add_scalar('train/loss', loss.item(), step)\n"
            "            writer.add_scalar('train/lr', lr, step)\n"
            "            writer.add_scalar('train/grad_norm', float(norm), step)\n"
            "            step += 1\n"
            "    writer.flush()\n"
            "    return step\n"
        ),
    ),
    Mistake(
        name="graph-logged-first",
        message="writer.add_graph traces the model with one more forward pass and logs more than the three scalars asked for. Log only train/loss, train/lr and train/grad_norm.",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    step = 0\n"
            "    x0, _ = next(iter(loader))\n"
            "    writer.add_graph(model, x0.to(device))\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "            lr = optimizer.param_groups[0]['lr']\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "            writer.add_scalar('train/loss', loss.item(), step)\n"
            "            writer.add_scalar('train/lr', lr, step)\n"
            "            writer.add_scalar('train/grad_norm', float(norm), step)\n"
            "            step += 1\n"
            "    writer.flush()\n"
            "    return step\n"
        ),
    ),
    Mistake(
        name="batches-cached",
        message="A list of the loader's batches made once repeats the first epoch's order in every epoch (and holds every batch in memory): iterate the loader afresh each epoch.",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    step = 0\n"
            "    batches = [(x.to(device), y.to(device)) for x, y in loader]\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in batches:\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "            lr = optimizer.param_groups[0]['lr']\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "            writer.add_scalar('train/loss', loss.item(), step)\n"
            "            writer.add_scalar('train/lr', lr, step)\n"
            "            writer.add_scalar('train/grad_norm', float(norm), step)\n"
            "            step += 1\n"
            "    writer.flush()\n"
            "    return step\n"
        ),
    ),
    Mistake(
        name="grad-norm-inf",
        message="norm_type='inf' clips by the largest gradient entry, not the overall norm: both the clipping and the logged norm differ. Use clip_grad_norm_(model.parameters(), max_norm).",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    step = 0\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, norm_type='inf')\n"
            "            lr = optimizer.param_groups[0]['lr']\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "            writer.add_scalar('train/loss', loss.item(), step)\n"
            "            writer.add_scalar('train/lr', lr, step)\n"
            "            writer.add_scalar('train/grad_norm', float(norm), step)\n"
            "            step += 1\n"
            "    writer.flush()\n"
            "    return step\n"
        ),
    ),
]


# Red team, round 3, second wave: the mode set by assigning .training, a factor zeroed too early.
MISTAKES["evaluate"] += [
    Mistake(
        name="eval-by-assigning-flag",
        message="model.training = False sets the flag of the top module only: its dropout layers stay in train mode. Call model.eval(), and restore with model.train(was_training).",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was = model.training\n"
            "    model.training = False\n"
            "    total, hits, n = 0.0, 0, 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y).item() * len(x)\n"
            "            hits += (logits.argmax(1) == y).sum().item()\n"
            "            n += len(x)\n"
            "    model.training = was\n"
            "    return total / n, hits / n\n"
        ),
    ),
]
MISTAKES["make_warmup_cosine"] += [
    Mistake(
        name="zero-from-total-steps-on",
        message="Returning 0 from step >= total_steps on gives 0 at step 0 when there is no schedule at all (warmup_steps = total_steps = 0), and at the last warm-up step: the factor is 0 only after the cosine has reached its end.",
        code=(
            "import math\n"
            "import torch\n"
            "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
            "    def f(step):\n"
            "        if step >= total_steps:\n"
            "            return 0.0\n"
            "        if step < warmup_steps:\n"
            "            return step / warmup_steps\n"
            "        p = (step - warmup_steps) / max(1, total_steps - warmup_steps)\n"
            "        return 0.5 * (1 + math.cos(math.pi * p))\n"
            "    return torch.optim.lr_scheduler.LambdaLR(optimizer, f)\n"
        ),
    ),
]
MISTAKES["train_one_epoch"] += [
    Mistake(
        name="train-by-assigning-flag",
        message="model.training = True sets the flag of the top module only: a model that arrives in eval mode keeps its dropout layers off. Call model.train().",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.training = True\n"
            "    total, n = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "        n += len(x)\n"
            "    return total / n\n"
        ),
    ),
]

MISTAKES["train_one_epoch"] += [
    Mistake(
        name="zero-grad-after-step",
        message="optimizer.zero_grad() after optimizer.step() leaves the first batch to add its "
        "gradient to whatever .grad held when the model arrived (the caller's gradients): call "
        "it in every batch before loss.backward().",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    total, n = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        optimizer.zero_grad()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        total += loss.item() * len(x)\n"
            "        n += len(x)\n"
            "    return total / n\n"
        ),
    ),
]

MISTAKES["save_checkpoint"] += [
    Mistake(
        name="scheduler-step-only",
        message="A dict holding only the scheduler's last_epoch is not its state: "
        "scheduler.load_state_dict() needs every entry of scheduler.state_dict(). Save "
        "scheduler.state_dict() itself.",
        code=(
            "import torch\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': {'last_epoch': scheduler.last_epoch}, 'epoch': epoch}, path)\n"
        ),
    ),
]

MISTAKES["train_logged"] += []

MISTAKES["EarlyStopping"] += [
    Mistake(
        name="restore-forgets-the-copy",
        message="restore_best must keep the stored copy: setting it to None after loading makes "
        "a later restore_best (after more training) do nothing. Load it and leave it stored.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad_epochs = val_loss, 0\n"
            f"            self.best_state = {_CLONE}\n"
            "        else:\n"
            "            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
            restore="if self.best_state is not None:\n"
            "            model.load_state_dict(self.best_state)\n"
            "            self.best_state = None",
        ),
    ),
]

MISTAKES["load_checkpoint"] += [
    Mistake(
        name="scheduler-last-epoch-only",
        message="Setting scheduler.last_epoch restores only part of the scheduler: its step "
        "count and last rates stay the fresh ones, so get_last_lr() reports a rate not in use. "
        "Call scheduler.load_state_dict(checkpoint['scheduler']).",
        code=(
            "import torch\n"
            "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
            "    ck = torch.load(path, map_location=device, weights_only=True)\n"
            "    model.load_state_dict(ck['model'])\n"
            "    optimizer.load_state_dict(ck['optimizer'])\n"
            "    scheduler.last_epoch = ck['scheduler']['last_epoch']\n"
            "    return ck['epoch']\n"
        ),
    ),
]

MISTAKES["DigitsCNN"] += [
    Mistake(
        name="normalises-by-batch-statistics",
        message="A mean and standard deviation over the whole batch make each image's logits "
        "depend on the other images in its batch: normalise each image by itself, or not at "
        "all.",
        code=_CNN_BODY.format(end="", after="").replace(
            "        return self.net(x)",
            "        return self.net((x - x.mean()) / (x.std() + 1e-5))",
        ),
    ),
]

# Red-team round (06_training): wrong answers written from the exercise texts alone.
MISTAKES["train_one_epoch"] += [
    Mistake(
        name="clips-gradients-of-its-own",
        message="train_one_epoch does the five steps and nothing in between: a clip_grad_norm_ "
        "of your own cuts large gradients (here, on large targets) and changes every step the "
        "caller asked for.",
        code=_TRAIN_HEAD + "    model.train()\n"
        "    total, n = 0.0, 0\n"
        "    for x, y in loader:\n"
        "        x, y = x.to(device), y.to(device)\n"
        "        loss = loss_fn(model(x), y)\n"
        "        optimizer.zero_grad()\n"
        "        loss.backward()\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)\n"
        "        optimizer.step()\n"
        "        if scheduler is not None:\n"
        "            scheduler.step()\n"
        "        total += loss.item() * len(x)\n"
        "        n += len(x)\n"
        "    return total / n\n",
    ),
]

MISTAKES["EarlyStopping"] += [
    Mistake(
        name="copy-kept-in-float32",
        message="A copy made with v.float() keeps a float64 model's weights to about 7 digits "
        "only: store v.detach().clone(), in the model's own dtype.",
        code=_stopper(
            "",
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss = val_loss\n"
            "            self.best_state = {k: v.detach().float().clone() if v.is_floating_point()"
            " else v.clone() for k, v in model.state_dict().items()}\n"
            "            self.bad_epochs = 0\n"
            "        else:\n"
            "            self.bad_epochs += 1\n"
            "        return self.bad_epochs >= self.patience\n",
        ),
    ),
]

MISTAKES["save_checkpoint"] += [
    Mistake(
        name="moves-model-to-cpu",
        message="model.cpu() moves the caller's model itself, not a copy: a model trained on a "
        "GPU is left on the CPU. Save model.state_dict() as it is; map_location moves the "
        "tensors when they are loaded.",
        code=(
            "import torch\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    model.cpu()\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
            "                'scheduler': scheduler.state_dict(), 'epoch': epoch}, path)\n"
        ),
    ),
]

MISTAKES["DigitsCNN"] += [
    Mistake(
        name="cpu-before-the-head",
        message="h.cpu() in forward moves the features to the CPU while the last layer's weights "
        "stay on the GPU: the layer mixes devices. Keep every tensor on x's device.",
        code=(
            "from torch import nn\n"
            "class DigitsCNN(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.features = nn.Sequential(\n"
            "            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
            "            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))\n"
            "        self.head = nn.Linear(128, 10)\n"
            "    def forward(self, x):\n"
            "        h = self.features(x).reshape(len(x), -1)\n"
            "        return self.head(h.cpu()).to(x.device)\n"
        ),
    ),
]
