"""Plausible wrong answers for 05_training's exercises."""

from autograder.mistakes import Mistake

_TRAIN_HEAD = "import torch\ndef train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
_EVAL_HEAD = "import torch\ndef evaluate(model, loader, loss_fn, device):\n"
_SCHED_HEAD = (
    "import math\nimport torch\n"
    "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
    "    def factor(step):\n"
)
_SCHED_TAIL = "    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)\n"


def _stopper(
    init_extra: str, step_body: str, restore: str = "model.load_state_dict(self.best_state)"
) -> str:
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
