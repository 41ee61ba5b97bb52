"""Correct answers to 06_training's exercises, written unlike the solution."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "make_loss_fn": [
        RightAnswer(
            name="dict-of-factories-soft-margin",
            why="MultiLabelSoftMarginLoss is the mean over samples and labels of the same "
            "stable log-sigmoid terms as BCEWithLogitsLoss; a dict of classes with the KeyError "
            "turned into ValueError meets 'any other name raises ValueError'.",
            code=(
                "from torch import nn\n"
                "_LOSSES = {'multiclass': nn.CrossEntropyLoss, 'multilabel': nn.MultiLabelSoftMarginLoss,\n"
                "           'regression': nn.MSELoss}\n"
                "def make_loss_fn(task):\n"
                "    try:\n"
                "        return _LOSSES[task]()\n"
                "    except (KeyError, TypeError):\n"
                "        raise ValueError(f'unknown task {task!r}') from None\n"
            ),
        ),
        RightAnswer(
            name="hand-written-stable-modules",
            why="Modules of its own built on the stable functional forms (log_softmax + "
            "nll_loss, binary_cross_entropy_with_logits, a squared difference), a match "
            "statement and a ValueError subclass: the text asks for a loss module with the "
            "mean reduction, not for the built-in classes.",
            code=(
                "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"
                "class UnknownTask(ValueError):\n    pass\n"
                "class MulticlassLoss(nn.Module):\n"
                "    def forward(self, logits, y):\n"
                "        return F.nll_loss(F.log_softmax(logits, dim=1), y)\n"
                "class MultilabelLoss(nn.Module):\n"
                "    def forward(self, logits, y):\n"
                "        return F.binary_cross_entropy_with_logits(logits, y)\n"
                "class SquaredError(nn.Module):\n"
                "    def forward(self, pred, y):\n"
                "        return (pred - y).pow(2).mean()\n"
                "def make_loss_fn(task):\n"
                "    match task:\n"
                "        case 'multiclass':\n            return MulticlassLoss()\n"
                "        case 'multilabel':\n            return MultilabelLoss()\n"
                "        case 'regression':\n            return SquaredError()\n"
                "    raise UnknownTask(task)\n"
            ),
        ),
    ],
    "train_one_epoch": [
        RightAnswer(
            name="tensor-total-counted-samples",
            why="Accumulates the weighted losses as a detached tensor (one .item() at the end, "
            "no sync per batch on a GPU) and counts the samples the loop sees; "
            "model.zero_grad() before the forward clears the same gradients as "
            "optimizer.zero_grad().",
            code=(
                "import torch\n"
                "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
                "    model.train()\n"
                "    total = torch.zeros((), device=device, dtype=torch.float64)\n"
                "    seen = 0\n"
                "    for x, y in loader:\n"
                "        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)\n"
                "        model.zero_grad(set_to_none=True)\n"
                "        loss = loss_fn(model(x), y)\n"
                "        loss.backward()\n"
                "        optimizer.step()\n"
                "        if scheduler:\n"
                "            scheduler.step()\n"
                "        total += loss.detach().double() * y.shape[0]\n"
                "        seen += y.shape[0]\n"
                "    return float(total) / seen\n"
            ),
        ),
        RightAnswer(
            name="enumerate-and-set-to-none",
            why="Counts samples with x.size(0), clears gradients by setting p.grad = None, "
            "and returns a numpy float (a float subclass): all allowed by the text.",
            code=(
                "import numpy as np\n"
                "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
                "    model.train(True)\n"
                "    sums, seen = [], 0\n"
                "    for _, (x, y) in enumerate(loader):\n"
                "        x = x.to(device)\n"
                "        y = y.to(device)\n"
                "        out = model(x)\n"
                "        loss = loss_fn(out, y)\n"
                "        for p in model.parameters():\n"
                "            p.grad = None\n"
                "        loss.backward()\n"
                "        optimizer.step()\n"
                "        if scheduler is not None:\n"
                "            scheduler.step()\n"
                "        sums.append(loss.item() * x.size(0))\n"
                "        seen += x.size(0)\n"
                "    return np.float64(sum(sums) / seen)\n"
            ),
        ),
    ],
    "evaluate": [
        RightAnswer(
            name="inference-mode-whole-set",
            why="torch.inference_mode() also records no graph; concatenating every batch's "
            "logits and computing the mean loss once equals the size-weighted mean for a "
            "mean-reduced loss; restoring each submodule's own mode restores the caller's "
            "mode too.",
            code=(
                "import torch\n"
                "def evaluate(model, loader, loss_fn, device):\n"
                "    modes = {m: m.training for m in model.modules()}\n"
                "    model.eval()\n"
                "    all_logits, all_y = [], []\n"
                "    with torch.inference_mode():\n"
                "        for x, y in loader:\n"
                "            all_logits.append(model(x.to(device)))\n"
                "            all_y.append(y.to(device))\n"
                "        logits, y = torch.cat(all_logits), torch.cat(all_y)\n"
                "        loss = loss_fn(logits, y).item()\n"
                "        acc = (logits.argmax(dim=1) == y).float().mean().item()\n"
                "    for m, training in modes.items():\n"
                "        m.training = training\n"
                "    return loss, acc\n"
            ),
        ),
        RightAnswer(
            name="namedtuple-and-try-finally",
            why="Returns a namedtuple (a tuple) and restores the mode in a finally block; "
            "torch.max(...).indices is the argmax.",
            code=(
                "from collections import namedtuple\n"
                "import torch\n"
                "Result = namedtuple('Result', 'loss accuracy')\n"
                "def evaluate(model, loader, loss_fn, device):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    try:\n"
                "        total, hits, n = 0.0, 0, 0\n"
                "        for x, y in loader:\n"
                "            x, y = x.to(device), y.to(device)\n"
                "            with torch.no_grad():\n"
                "                logits = model(x)\n"
                "                total += float(loss_fn(logits, y)) * y.numel()\n"
                "            hits += int((torch.max(logits, dim=1).indices == y).sum())\n"
                "            n += y.numel()\n"
                "    finally:\n"
                "        model.train(was_training)\n"
                "    return Result(total / n, hits / n)\n"
            ),
        ),
    ],
    "make_warmup_cosine": [
        RightAnswer(
            name="callable-class-branchless",
            why="A callable object instead of a closure, and the warm-up written as "
            "min(1, step / warmup) guarded for warmup_steps == 0: the same factor.",
            code=(
                "import math\nimport torch\n"
                "class WarmupCosine:\n"
                "    def __init__(self, warmup, total):\n"
                "        self.warmup, self.total = warmup, total\n"
                "    def __call__(self, step):\n"
                "        if self.warmup > 0 and step < self.warmup:\n"
                "            return step / self.warmup\n"
                "        span = max(1, self.total - self.warmup)\n"
                "        progress = max(0.0, min(1.0, (step - self.warmup) / span))\n"
                "        return (1 + math.cos(math.pi * progress)) / 2\n"
                "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
                "    return torch.optim.lr_scheduler.LambdaLR(optimizer, WarmupCosine(warmup_steps, total_steps))\n"
            ),
        ),
        RightAnswer(
            name="one-lambda-per-group",
            why="LambdaLR also takes a list with one function per parameter group; each is the "
            "same factor, and a step past total_steps returns 0 explicitly.",
            code=(
                "import math\n"
                "from torch.optim.lr_scheduler import LambdaLR\n"
                "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
                "    def factor(step):\n"
                "        if step >= max(total_steps, warmup_steps + 1):\n"
                "            return 0.0\n"
                "        if step < warmup_steps:\n"
                "            return step / warmup_steps\n"
                "        t = (step - warmup_steps) / max(1, total_steps - warmup_steps)\n"
                "        return 0.5 + 0.5 * math.cos(math.pi * t)\n"
                "    return LambdaLR(optimizer, [factor] * len(optimizer.param_groups))\n"
            ),
        ),
    ],
    "EarlyStopping": [
        RightAnswer(
            name="deepcopy-and-difference-test",
            why="copy.deepcopy of the state_dict is a copy too; best_loss - val_loss > "
            "min_delta is the same strict test (False for NaN), and a counter with another "
            "name is fine.",
            code=(
                "import copy\nimport math\n"
                "class EarlyStopping:\n"
                "    def __init__(self, patience, min_delta=0.0):\n"
                "        self.patience, self.min_delta = patience, min_delta\n"
                "        self.best_loss = math.inf\n"
                "        self.waited = 0\n"
                "        self._best = None\n"
                "    def step(self, val_loss, model):\n"
                "        if self.best_loss - val_loss > self.min_delta:\n"
                "            self.best_loss = val_loss\n"
                "            self.waited = 0\n"
                "            self._best = copy.deepcopy(model.state_dict())\n"
                "        else:\n"
                "            self.waited += 1\n"
                "        return self.waited >= self.patience\n"
                "    def restore_best(self, model):\n"
                "        if self._best:\n"
                "            model.load_state_dict(self._best)\n"
            ),
        ),
        RightAnswer(
            name="keeps-a-model-copy-on-cpu",
            why="Keeps CPU copies of the tensors (load_state_dict copies them back onto the "
            "model's device), checks NaN explicitly and stores the stop decision as a bool.",
            code=(
                "import math\n"
                "class EarlyStopping:\n"
                "    def __init__(self, patience: int, min_delta: float = 0.0):\n"
                "        self.patience = patience\n"
                "        self.min_delta = min_delta\n"
                "        self.best_loss = math.inf\n"
                "        self.bad = 0\n"
                "        self.snapshot = {}\n"
                "    def step(self, val_loss, model):\n"
                "        improved = not math.isnan(val_loss) and val_loss < self.best_loss - self.min_delta\n"
                "        if improved:\n"
                "            self.best_loss = val_loss\n"
                "            self.snapshot = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}\n"
                "            self.bad = 0\n"
                "        else:\n"
                "            self.bad += 1\n"
                "        return bool(self.bad >= self.patience)\n"
                "    def restore_best(self, model):\n"
                "        if not self.snapshot:\n"
                "            return\n"
                "        model.load_state_dict(self.snapshot)\n"
            ),
        ),
    ],
    "save_checkpoint": [
        RightAnswer(
            name="atomic-write-cpu-copies",
            why="Writes to a temporary file and renames it onto path (a crash mid-write "
            "leaves no half file), with the model's tensors copied to the CPU: the file holds "
            "the same four entries and loads anywhere.",
            code=(
                "import os\nimport torch\n"
                "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
                "    bundle = {\n"
                "        'model': {k: v.detach().cpu() for k, v in model.state_dict().items()},\n"
                "        'optimizer': optimizer.state_dict(),\n"
                "        'scheduler': scheduler.state_dict(),\n"
                "        'epoch': int(epoch),\n"
                "    }\n"
                "    tmp = str(path) + '.tmp'\n"
                "    torch.save(bundle, tmp)\n"
                "    os.replace(tmp, path)\n"
            ),
        ),
        RightAnswer(
            name="file-handle-unwraps-module",
            why="Saves through an open file handle, and unwraps a DataParallel/DDP-style "
            "wrapper with getattr(model, 'module', model) (a plain model has no .module).",
            code=(
                "import torch\n"
                "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
                "    inner = getattr(model, 'module', model)\n"
                "    state = dict(model=inner.state_dict(), optimizer=optimizer.state_dict(),\n"
                "                 scheduler=scheduler.state_dict(), epoch=epoch)\n"
                "    with open(path, 'wb') as f:\n"
                "        torch.save(state, f)\n"
                "    return None\n"
            ),
        ),
    ],
    "load_checkpoint": [
        RightAnswer(
            name="map-location-cpu-default-weights-only",
            why="Loads to the CPU and lets load_state_dict copy into the model's device (the "
            "optimizer moves its state to its parameters' device itself); weights_only is "
            "True by default in this torch; strict=True written out.",
            code=(
                "import torch\n"
                "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
                "    checkpoint = torch.load(path, map_location='cpu')\n"
                "    model.load_state_dict(checkpoint['model'], strict=True)\n"
                "    optimizer.load_state_dict(checkpoint['optimizer'])\n"
                "    scheduler.load_state_dict(checkpoint['scheduler'])\n"
                "    return int(checkpoint['epoch'])\n"
            ),
        ),
        RightAnswer(
            name="file-handle-loop-over-objects",
            why="Reads through an open file handle with torch.device(device) and restores the "
            "three objects in a loop over their keys.",
            code=(
                "import torch\n"
                "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
                "    with open(path, 'rb') as f:\n"
                "        checkpoint = torch.load(f, map_location=torch.device(device), weights_only=True)\n"
                "    for key, obj in (('model', model), ('optimizer', optimizer), ('scheduler', scheduler)):\n"
                "        obj.load_state_dict(checkpoint[key])\n"
                "    epoch = checkpoint['epoch']\n"
                "    return epoch\n"
            ),
        ),
    ],
    "DigitsCNN": [
        RightAnswer(
            name="functional-forward",
            why="Layers as attributes and a forward written with F.relu, F.max_pool2d and "
            "x.flatten(1): the same network without nn.Sequential.",
            code=(
                "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)\n"
                "        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)\n"
                "        self.fc = nn.Linear(32 * 2 * 2, 10)\n"
                "    def forward(self, x):\n"
                "        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # (N, 16, 4, 4)\n"
                "        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # (N, 32, 2, 2)\n"
                "        return self.fc(x.flatten(1))\n"
            ),
        ),
        RightAnswer(
            name="lazy-linear-head",
            why="nn.LazyLinear works out its in_features from the first batch, so the "
            "flattened size need not be computed by hand; the parameters exist (and train) "
            "once a forward pass has run.",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.features = nn.Sequential(\n"
                "            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
                "            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))\n"
                "        self.classifier = nn.LazyLinear(10)\n"
                "    def forward(self, x):\n"
                "        return self.classifier(self.features(x).reshape(x.shape[0], -1))\n"
            ),
        ),
        RightAnswer(
            name="batchnorm-dropout-avgpool",
            why="Batch norm, dropout and an adaptive average pool to 2x2 before the head: "
            "another design within the limits that ends in a Linear layer.",
            code=(
                "from torch import nn\n"
                "class DigitsCNN(nn.Module):\n"
                "    def __init__(self):\n"
                "        super().__init__()\n"
                "        self.body = nn.Sequential(\n"
                "            nn.Conv2d(1, 24, 3, padding=1, bias=False), nn.BatchNorm2d(24), nn.ReLU(),\n"
                "            nn.Conv2d(24, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),\n"
                "            nn.AdaptiveAvgPool2d(2))\n"
                "        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(128, 10))\n"
                "    def forward(self, x):\n"
                "        return self.head(self.body(x))\n"
            ),
        ),
    ],
}

RIGHT_ANSWERS["train_logged"] = [
    RightAnswer(
        name="hand-clipped-get-last-lr-close-free",
        why="The norm computed and the gradients scaled by hand (the same formula as "
        "clip_grad_norm_), the rate from scheduler.get_last_lr() before stepping, the step "
        "from the epoch and the batch index, and the loss tensor handed to add_scalar (which "
        "detaches it itself): the text asks for the values, not for these calls.",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device,\n"
            "                 num_epochs, max_norm):\n"
            "    model.train()\n"
            "    per_epoch = len(loader)\n"
            "    for epoch in range(num_epochs):\n"
            "        for i, (x, y) in enumerate(loader):\n"
            "            step = epoch * per_epoch + i\n"
            "            optimizer.zero_grad(set_to_none=True)\n"
            "            loss = loss_fn(model(x.to(device)), y.to(device))\n"
            "            loss.backward()\n"
            "            grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "            norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads))\n"
            "            scale = min(1.0, max_norm / (float(norm) + 1e-6))\n"
            "            with torch.no_grad():\n"
            "                for g in grads:\n"
            "                    g.mul_(scale)\n"
            "            rate = scheduler.get_last_lr()[0]\n"
            "            writer.add_scalar('train/lr', rate, global_step=step)\n"
            "            writer.add_scalar('train/grad_norm', norm, global_step=step)\n"
            "            writer.add_scalar('train/loss', loss, global_step=step)\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "    writer.flush()\n"
            "    return num_epochs * per_epoch\n"
        ),
    ),
    RightAnswer(
        name="get-total-norm-itertools-extra-tag",
        why="torch.nn.utils.get_total_norm and clip_grads_with_norm_ split what "
        "clip_grad_norm_ does in two; the learning rate is read after optimizer.step() but "
        "before scheduler.step() (still this step's); the counter comes from itertools.count; "
        "an extra tag (the epoch) is logged too, which the text does not forbid.",
        code=(
            "import itertools\n"
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device,\n"
            "                 num_epochs, max_norm):\n"
            "    model.train()\n"
            "    counter = itertools.count()\n"
            "    step = 0\n"
            "    for epoch in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            output = model(x)\n"
            "            optimizer.zero_grad()\n"
            "            loss = loss_fn(output, y)\n"
            "            loss.backward()\n"
            "            params = list(model.parameters())\n"
            "            total = torch.nn.utils.get_total_norm([p.grad for p in params])\n"
            "            torch.nn.utils.clip_grads_with_norm_(params, max_norm, total)\n"
            "            optimizer.step()\n"
            "            step = next(counter)\n"
            "            writer.add_scalar('train/lr', optimizer.param_groups[0]['lr'], step)\n"
            "            scheduler.step()\n"
            "            writer.add_scalar('train/loss', float(loss), step)\n"
            "            writer.add_scalar('train/grad_norm', total.item(), step)\n"
            "            writer.add_scalar('train/epoch', epoch, step)\n"
            "    writer.flush()\n"
            "    return step + 1\n"
        ),
    ),
]

# Device red team (issue #27): right answers that handle devices in unusual ways a GPU accepts.
RIGHT_ANSWERS["train_one_epoch"] += [
    RightAnswer(
        name="weights-as-tensor-on-device",
        why="Keeps each batch's detached loss and weighs them with the batch sizes as a tensor made with torch.as_tensor(..., device=the losses' device): one dot product and one .item() at the end, the same weighted mean, and nothing on the CPU meets the device's tensors.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    losses, sizes = [], []\n"
            "    for x, y in loader:\n"
            "        x, y = (t.to(device, non_blocking=True) for t in (x, y))\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        losses.append(loss.detach())\n"
            "        sizes.append(len(x))\n"
            "    w = torch.as_tensor(sizes, dtype=losses[0].dtype, device=losses[0].device)\n"
            "    return (torch.stack(losses) @ w / w.sum()).item()\n"
        ),
    ),
    RightAnswer(
        name="cpu-0d-count-new-tensor",
        why="Counts with 0-d CPU tensors (torch.tensor(len(x))): a 0-d CPU tensor is a scalar that a GPU accepts in arithmetic with its own tensors; y follows x with y.to(x.device).",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    total, count = None, torch.tensor(0)\n"
            "    for x, y in loader:\n"
            "        x = x.to(device)\n"
            "        y = y.to(x.device)\n"
            "        out = model(x)\n"
            "        loss = loss_fn(out, y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler:\n"
            "            scheduler.step()\n"
            "        n = torch.tensor(len(x))  # a 0-d CPU tensor: a scalar on any device\n"
            "        part = loss.detach() * n\n"
            "        total = part if total is None else total + part\n"
            "        count += n\n"
            "    return float(total / count)\n"
        ),
    ),
]
RIGHT_ANSWERS["evaluate"] += [
    RightAnswer(
        name="where-scalars-cpu-arange-index",
        why="Reads each sample's own logit with a CPU index tensor (logits[torch.arange(n), y]: a GPU accepts CPU indices), counts hits with torch.where and Python scalars, and weighs the loss with y.new_tensor(len(y)) (on y's device).",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was = model.training\n"
            "    model.eval()\n"
            "    total = correct = None\n"
            "    count = 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            own = logits[torch.arange(len(y)), y]  # CPU row indices, device labels\n"
            "            hit = torch.where(own >= logits.max(dim=1).values, 1, 0).sum()\n"
            "            part = loss_fn(logits, y) * y.new_tensor(len(y))\n"
            "            total = part if total is None else total + part\n"
            "            correct = hit if correct is None else correct + hit\n"
            "            count += len(y)\n"
            "    model.train(was)\n"
            "    return total.item() / count, correct.item() / count\n"
        ),
    ),
    RightAnswer(
        name="zeros-like-accumulators",
        why="Accumulates loss and hits in 0-d tensors made with device=device and torch.zeros_like, read back once with .item(); restores each submodule's own mode.",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    modes = [m.training for m in model.modules()]\n"
            "    model.eval()\n"
            "    total = torch.zeros((), dtype=torch.float64, device=device)\n"
            "    hits = torch.zeros_like(total, dtype=torch.long)\n"
            "    n = 0\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            logits = model(x)\n"
            "            total += loss_fn(logits, y).double() * len(y)\n"
            "            hits += logits.argmax(1).eq(y).sum()\n"
            "            n += len(y)\n"
            "    for m, t in zip(model.modules(), modes):\n"
            "        m.training = t\n"
            "    return total.item() / n, hits.item() / n\n"
        ),
    ),
]
RIGHT_ANSWERS["EarlyStopping"] += [
    RightAnswer(
        name="empty-like-copy",
        why="Copies the state with torch.empty_like(v).copy_(v) (on v's device) and keeps min_delta as a 0-d CPU tensor read with float(): the same strict test and a real copy.",
        code=(
            "import math\n"
            "import torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience = patience\n"
            "        self.min_delta = torch.tensor(float(min_delta))  # a 0-d CPU tensor\n"
            "        self.best_loss = math.inf\n"
            "        self.count = 0\n"
            "        self.saved = None\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - float(self.min_delta):\n"
            "            self.best_loss = val_loss\n"
            "            self.count = 0\n"
            "            self.saved = {k: torch.empty_like(v).copy_(v) for k, v in model.state_dict().items()}\n"
            "        else:\n"
            "            self.count += 1\n"
            "        return self.count >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.saved is not None:\n"
            "            model.load_state_dict(self.saved)\n"
        ),
    ),
    RightAnswer(
        name="deepcopy-module",
        why="Keeps a deep copy of the whole model at its best epoch (its tensors stay on the model's device) and restores from its state_dict: a copy of every parameter and buffer.",
        code=(
            "import copy\n"
            "import math\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss = math.inf\n"
            "        self.bad = 0\n"
            "        self.best_model = None\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.best_model = copy.deepcopy(model)\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.best_model is not None:\n"
            "            model.load_state_dict(self.best_model.state_dict())\n"
        ),
    ),
]
RIGHT_ANSWERS["train_logged"] += [
    RightAnswer(
        name="hand-clip-0d-cpu-max",
        why="Clips by hand with max_norm as a 0-d CPU tensor (a scalar a GPU accepts next to its own tensors) and torch.clamp; the norm is the one before clipping, as clip_grad_norm_ returns it.",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    limit = torch.tensor(float(max_norm))  # 0-d CPU: a scalar on any device\n"
            "    step = 0\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "            norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))\n"
            "            scale = torch.clamp(limit / (norm + 1e-6), max=1.0)\n"
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
    RightAnswer(
        name="where-python-scalars",
        why="Sums the squared gradients into a tensor made with device=x.device and picks the clipping coefficient with torch.where on Python scalars: clip_grad_norm_'s formula, on the gradients' device.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    params = list(model.parameters())\n"
            "    step = 0\n"
            "    for _ in range(num_epochs):\n"
            "        for x, y in loader:\n"
            "            x = x.to(device)\n"
            "            y = y.to(x.device)\n"
            "            loss = loss_fn(model(x), y)\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            sq = torch.zeros((), device=x.device)\n"
            "            for p in params:\n"
            "                if p.grad is not None:\n"
            "                    sq = sq + p.grad.pow(2).sum()\n"
            "            norm = sq.sqrt()\n"
            "            coef = torch.where(norm > max_norm, max_norm / (norm + 1e-6), 1.0)\n"
            "            with torch.no_grad():\n"
            "                for p in params:\n"
            "                    if p.grad is not None:\n"
            "                        p.grad.mul_(coef)\n"
            "            lr = optimizer.param_groups[0]['lr']\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            "            for tag, v in (('train/loss', loss.item()), ('train/lr', lr), ('train/grad_norm', norm.item())):\n"
            "                writer.add_scalar(tag, v, step)\n"
            "            step += 1\n"
            "    writer.flush()\n"
            "    return step\n"
        ),
    ),
]


# Red team, round 3 (issue #27): right answers written differently from the solution.
RIGHT_ANSWERS.setdefault("make_loss_fn", []).append(
    RightAnswer(
        name="multilabel-soft-margin",
        why="Looks the class up in a dict after testing membership (ValueError for the rest) and uses nn.MultiLabelSoftMarginLoss for multi-label targets: the mean over labels of the same stable log-sigmoid terms, so for (N, C) targets it equals BCEWithLogitsLoss's mean.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "\n"
            "_LOSSES = {'multiclass': nn.CrossEntropyLoss, 'multilabel': nn.MultiLabelSoftMarginLoss, 'regression': nn.MSELoss}\n"
            "def make_loss_fn(task):\n"
            "    if task not in _LOSSES:\n"
            "        raise ValueError(f'unknown task {task!r}')\n"
            "    return _LOSSES[task]()\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("train_one_epoch", []).append(
    RightAnswer(
        name="sum-reduction-copy",
        why="zero_grad(set_to_none=True) before the forward, `if scheduler:` (a LambdaLR is truthy), float(loss.detach()) for the number and x.shape[0] for the batch size: the same steps in the same order.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    total, n = 0.0, 0\n"
            "    for x, y in loader:\n"
            "        x, y = x.to(device), y.to(device)\n"
            "        optimizer.zero_grad(set_to_none=True)\n"
            "        out = model(x)\n"
            "        loss = loss_fn(out, y)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler:\n"
            "            scheduler.step()\n"
            "        b = x.shape[0]\n"
            "        total, n = total + float(loss.detach()) * b, n + b\n"
            "    return float(total / n)\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("evaluate", []).append(
    RightAnswer(
        name="per-module-modes-fork-rng",
        why="Remembers every submodule's own mode and puts each back in a finally block, runs under torch.inference_mode() inside torch.random.fork_rng() (eval mode draws nothing, so the random state is untouched either way), and counts with y.shape[0].",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    modes = {m: m.training for m in model.modules()}\n"
            "    model.eval()\n"
            "    total, hits, n = 0.0, 0, 0\n"
            "    try:\n"
            "        with torch.random.fork_rng(devices=[]), torch.inference_mode():\n"
            "            for x, y in loader:\n"
            "                x, y = x.to(device), y.to(device)\n"
            "                logits = model(x)\n"
            "                total += loss_fn(logits, y).item() * y.shape[0]\n"
            "                hits += (logits.argmax(dim=1) == y).sum().item()\n"
            "                n += y.shape[0]\n"
            "    finally:\n"
            "        for m, t in modes.items():\n"
            "            m.training = t\n"
            "    return total / n, hits / n\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("make_warmup_cosine", []).append(
    RightAnswer(
        name="cosine-as-sin-squared",
        why="Writes 0.5 * (1 + cos(pi * p)) as cos(pi * p / 2) ** 2 (the same number), clamps progress to [0, 1], and passes one function per parameter group as a list.",
        code=(
            "import math\n"
            "import torch\n"
            "def make_warmup_cosine(optimizer, warmup_steps, total_steps):\n"
            "    span = max(1, total_steps - warmup_steps)\n"
            "    def f(step):\n"
            "        if warmup_steps and step < warmup_steps:\n"
            "            return step / warmup_steps\n"
            "        p = min(1.0, max(0.0, (step - warmup_steps) / span))\n"
            "        return math.cos(math.pi * p / 2) ** 2\n"
            "    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=[f] * len(optimizer.param_groups))\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("EarlyStopping", []).append(
    RightAnswer(
        name="deepcopy-of-model",
        why="copy.deepcopy(model.state_dict()) for the copy, an early return on improvement, and restore_best copying the stored values into the live tensors under no_grad instead of load_state_dict.",
        code=(
            "import math, copy, torch\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self.best_state = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self.best_state = copy.deepcopy(model.state_dict())\n"
            "            return False\n"
            "        self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.best_state is None:\n"
            "            return\n"
            "        with torch.no_grad():\n"
            "            for k, v in model.state_dict().items():\n"
            "                v.copy_(self.best_state[k])\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("save_checkpoint", []).append(
    RightAnswer(
        name="atomic-write-cpu-model",
        why="Writes to path + '.tmp' through an open file and renames it onto path with os.replace (no half-written checkpoint if the process dies), with the model's tensors moved to the CPU (torch.load's map_location puts them back): the file at path holds the four entries.",
        code=(
            "import torch, os\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    tmp = path + '.tmp'\n"
            "    bundle = dict(model={k: v.detach().cpu() for k, v in model.state_dict().items()},\n"
            "                  optimizer=optimizer.state_dict(), scheduler=scheduler.state_dict(), epoch=int(epoch))\n"
            "    with open(tmp, 'wb') as f:\n"
            "        torch.save(bundle, f)\n"
            "    os.replace(tmp, path)\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("load_checkpoint", []).append(
    RightAnswer(
        name="strips-wrapper-prefix",
        why="Reads through an open file, strips a torch.compile '_orig_mod.' prefix (none here) before a strict load, restores the scheduler before the optimizer and returns int(epoch).",
        code=(
            "import torch, os\n"
            "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
            "    with open(path, 'rb') as f:\n"
            "        ckpt = torch.load(f, map_location=device, weights_only=True)\n"
            "    state = {k.removeprefix('_orig_mod.'): v for k, v in ckpt['model'].items()}\n"
            "    model.load_state_dict(state, strict=True)\n"
            "    scheduler.load_state_dict(ckpt['scheduler'])\n"
            "    optimizer.load_state_dict(ckpt['optimizer'])\n"
            "    return int(ckpt['epoch'])\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("DigitsCNN", []).append(
    RightAnswer(
        name="batchnorm-avgpool",
        why="Convolutions without bias followed by BatchNorm2d, average pooling instead of max pooling (8x8 to 2x2), torch.flatten(h, start_dim=1) and one Linear layer: raw logits, under both budgets.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "class DigitsCNN(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.body = nn.Sequential(\n"
            "            nn.Conv2d(1, 24, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(24), nn.ReLU(),\n"
            "            nn.AvgPool2d(2),\n"
            "            nn.Conv2d(24, 48, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(48), nn.ReLU(),\n"
            "            nn.AvgPool2d(2),\n"
            "        )\n"
            "        self.out = nn.Linear(48 * 4, 10)\n"
            "    def forward(self, x):\n"
            "        h = self.body(x)\n"
            "        return self.out(torch.flatten(h, start_dim=1))\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("train_logged", []).append(
    RightAnswer(
        name="get-last-lr-and-step-count",
        why="Reads the rate with scheduler.get_last_lr()[0] before scheduler.step() (the same as param_groups[0]['lr']), unpacks each batch with a generator, logs the three scalars in a loop with global_step=n and counts with its own n.",
        code=(
            "import torch\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    n = 0\n"
            "    for epoch in range(num_epochs):\n"
            "        for batch in loader:\n"
            "            x, y = (t.to(device) for t in batch)\n"
            "            out = model(x)\n"
            "            loss = loss_fn(out, y)\n"
            "            optimizer.zero_grad(set_to_none=True)\n"
            "            loss.backward()\n"
            "            total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)\n"
            "            lr = scheduler.get_last_lr()[0]\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            '            for tag, value in (("train/loss", loss.item()), ("train/lr", lr), ("train/grad_norm", total.item())):\n'
            "                writer.add_scalar(tag, value, global_step=n)\n"
            "            n += 1\n"
            "    writer.flush()\n"
            "    return n\n"
        ),
    )
)

RIGHT_ANSWERS["train_one_epoch"].append(
    RightAnswer(
        name="running-mean-by-size",
        why="Updates a running mean by each batch's share, mean += (loss - mean) * b / seen: the "
        "same weighted mean per sample as total / count, with the model run once per batch.",
        code=(
            "import torch\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None):\n"
            "    model.train()\n"
            "    mean, seen = 0.0, 0\n"
            "    for batch in loader:\n"
            "        x, y = (t.to(device) for t in batch)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        seen += len(x)\n"
            "        mean += (loss.item() - mean) * len(x) / seen\n"
            "    return float(mean)\n"
        ),
    )
)
RIGHT_ANSWERS["evaluate"].append(
    RightAnswer(
        name="per-module-modes-restored-in-finally",
        why="Remembers every submodule's mode and puts each back in a finally block, under "
        "torch.inference_mode(): for a model in one mode the same as model.train(was_training).",
        code=(
            "import torch\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    modes = {m: m.training for m in model.modules()}\n"
            "    model.eval()\n"
            "    total, correct, n = 0.0, 0, 0\n"
            "    try:\n"
            "        with torch.inference_mode():\n"
            "            for x, y in loader:\n"
            "                x, y = x.to(device), y.to(device)\n"
            "                logits = model(x)\n"
            "                total += loss_fn(logits, y).item() * y.shape[0]\n"
            "                correct += int((logits.argmax(1) == y).sum())\n"
            "                n += y.shape[0]\n"
            "    finally:\n"
            "        for m, mode in modes.items():\n"
            "            m.training = mode\n"
            "    return float(total / n), float(correct / n)\n"
        ),
    )
)
RIGHT_ANSWERS["EarlyStopping"].append(
    RightAnswer(
        name="deepcopy-of-the-model",
        why="Keeps a deep copy of the whole model at its best epoch (parameters and buffers, "
        "copied) and loads its state_dict() back into the caller's model.",
        code=(
            "import copy, math\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss, self.bad, self._snap = math.inf, 0, None\n"
            "    def step(self, val_loss, model):\n"
            "        if val_loss < self.best_loss - self.min_delta:\n"
            "            self.best_loss, self.bad = val_loss, 0\n"
            "            self._snap = copy.deepcopy(model)\n"
            "        else:\n"
            "            self.bad += 1\n"
            "        return self.bad >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self._snap is not None:\n"
            "            model.load_state_dict(self._snap.state_dict())\n"
        ),
    )
)
RIGHT_ANSWERS["save_checkpoint"].append(
    RightAnswer(
        name="cpu-copies-written-atomically",
        why="Saves CPU copies of the weights, writes to a temporary file beside the path and "
        "renames it onto the path with os.replace: one file, exactly at the path given.",
        code=(
            "import os, torch\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    bundle = {\n"
            "        'model': {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},\n"
            "        'optimizer': optimizer.state_dict(),\n"
            "        'scheduler': scheduler.state_dict(),\n"
            "        'epoch': int(epoch),\n"
            "    }\n"
            "    tmp = str(path) + '.tmp'\n"
            "    torch.save(bundle, tmp)\n"
            "    os.replace(tmp, path)\n"
        ),
    )
)

# Red-team round (06_training): right answers in other styles.
RIGHT_ANSWERS.setdefault("make_loss_fn", []).append(
    RightAnswer(
        name="functional-losses-in-a-wrapper-module",
        why="A small nn.Module of its own wrapping F.cross_entropy, F.binary_cross_entropy_with_logits or F.mse_loss: a loss module with the mean reduction, as asked.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "def make_loss_fn(task: str) -> nn.Module:\n"
            "    class Wrap(nn.Module):\n"
            "        def __init__(self, fn):\n"
            "            super().__init__()\n"
            "            self.fn = fn\n"
            "        def forward(self, a, b):\n"
            "            return self.fn(a, b)\n"
            '    fns = {"multiclass": F.cross_entropy, "multilabel": F.binary_cross_entropy_with_logits, "regression": F.mse_loss}\n'
            "    if task not in fns:\n"
            '        raise ValueError(f"unknown task {task!r}")\n'
            "    return Wrap(fns[task])\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("train_one_epoch", []).append(
    RightAnswer(
        name="while-next-set-to-none-false",
        why="Iterates with next() until StopIteration, zeroes with set_to_none=False and adds float(loss.detach()) * x.size(0): the same five steps and the same weighted mean.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "def train_one_epoch(model, loader, loss_fn, optimizer, device, scheduler=None) -> float:\n"
            "    model.train(True)\n"
            "    total = 0.0\n"
            "    seen = 0\n"
            "    it = iter(loader)\n"
            "    while True:\n"
            "        try:\n"
            "            x, y = next(it)\n"
            "        except StopIteration:\n"
            "            break\n"
            "        x = x.to(device, non_blocking=True)\n"
            "        y = y.to(device, non_blocking=True)\n"
            "        optimizer.zero_grad(set_to_none=False)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        if scheduler is not None:\n"
            "            scheduler.step()\n"
            "        b = x.size(0)\n"
            "        total += float(loss.detach()) * b\n"
            "        seen += b\n"
            "    return total / seen\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("evaluate", []).append(
    RightAnswer(
        name="inference-mode-try-finally",
        why="Runs under torch.inference_mode() and restores the mode in a finally block; argmax over dim=-1 is dim=1 for (B, C) logits.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    was_training = model.training\n"
            "    model.eval()\n"
            "    try:\n"
            "        with torch.inference_mode():\n"
            "            loss_sum = 0.0\n"
            "            hits = 0\n"
            "            count = 0\n"
            "            for batch in loader:\n"
            "                x, y = batch[0].to(device), batch[1].to(device)\n"
            "                out = model(x)\n"
            "                loss_sum += float(loss_fn(out, y)) * x.shape[0]\n"
            "                hits += int((out.argmax(-1) == y).sum())\n"
            "                count += x.shape[0]\n"
            "    finally:\n"
            "        model.train(was_training)\n"
            "    return loss_sum / count, hits / count\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("evaluate", []).append(
    RightAnswer(
        name="max-indices-joined",
        why="logits.max(dim=1).indices is the first maximal index, as argmax is, ties included; predictions joined with torch.cat and the accuracy taken as one mean.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "def evaluate(model, loader, loss_fn, device):\n"
            "    import torch\n"
            "    was_training = model.training\n"
            "    model.eval()\n"
            "    losses, preds, labels = [], [], []\n"
            "    with torch.no_grad():\n"
            "        for x, y in loader:\n"
            "            x, y = x.to(device), y.to(device)\n"
            "            out = model(x)\n"
            "            losses.append(loss_fn(out, y).item() * len(x))\n"
            "            preds.append(out.max(dim=1).indices)\n"
            "            labels.append(y)\n"
            "    model.train(was_training)\n"
            "    preds, labels = torch.cat(preds), torch.cat(labels)\n"
            "    return sum(losses) / len(labels), (preds == labels).double().mean().item()\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("make_warmup_cosine", []).append(
    RightAnswer(
        name="one-lambda-per-group-list",
        why="LambdaLR takes a list of factor functions, one per parameter group; each is a function of step alone.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "def make_warmup_cosine(optimizer, warmup_steps: int, total_steps: int):\n"
            "    from torch.optim.lr_scheduler import LambdaLR\n"
            "    def factor(step: int) -> float:\n"
            "        if warmup_steps and step < warmup_steps:\n"
            "            return float(step) / float(warmup_steps)\n"
            "        span = max(1, total_steps - warmup_steps)\n"
            "        progress = min(1.0, (step - warmup_steps) / span)\n"
            "        return 0.5 * (1.0 + math.cos(math.pi * progress))\n"
            "    return LambdaLR(optimizer, lr_lambda=[factor] * len(optimizer.param_groups))\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("EarlyStopping", []).append(
    RightAnswer(
        name="cpu-copies-in-a-dict",
        why="Copies each tensor to the CPU with .to('cpu', copy=True); load_state_dict copies them back into the model's own tensors on its device.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "class EarlyStopping:\n"
            "    def __init__(self, patience, min_delta=0.0):\n"
            "        self.patience, self.min_delta = patience, min_delta\n"
            "        self.best_loss = math.inf\n"
            "        self.wait = 0\n"
            "        self.snapshot = {}\n"
            "    def step(self, val_loss, model):\n"
            "        improved = val_loss < self.best_loss - self.min_delta\n"
            "        if improved:\n"
            "            self.best_loss = val_loss\n"
            '            self.snapshot = {name: t.detach().to("cpu", copy=True) for name, t in model.state_dict().items()}\n'
            "            self.wait = 0\n"
            "        else:\n"
            "            self.wait += 1\n"
            "        return self.wait >= self.patience\n"
            "    def restore_best(self, model):\n"
            "        if self.snapshot:\n"
            "            model.load_state_dict(self.snapshot)\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("save_checkpoint", []).append(
    RightAnswer(
        name="deepcopy-moved-not-the-model",
        why="Moves a deep copy of the model to the CPU, never the caller's model, and saves that copy's state_dict.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "def save_checkpoint(path, model, optimizer, scheduler, epoch):\n"
            "    import copy\n"
            "    snapshot = copy.deepcopy(model).cpu().state_dict()\n"
            '    torch.save({"model": snapshot, "optimizer": optimizer.state_dict(),\n'
            '                "scheduler": scheduler.state_dict(), "epoch": epoch}, path)\n'
        ),
    )
)
RIGHT_ANSWERS.setdefault("load_checkpoint", []).append(
    RightAnswer(
        name="loop-over-three-objects",
        why="One loop calls load_state_dict on model, optimizer and scheduler with their entries: strict, into the objects given.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "def load_checkpoint(path, model, optimizer, scheduler, device):\n"
            "    bundle = torch.load(path, map_location=torch.device(device), weights_only=True)\n"
            '    for name, obj in (("model", model), ("optimizer", optimizer), ("scheduler", scheduler)):\n'
            "        obj.load_state_dict(bundle[name])\n"
            '    return bundle["epoch"]\n'
        ),
    )
)
RIGHT_ANSWERS.setdefault("train_logged", []).append(
    RightAnswer(
        name="get-last-lr-and-global-step-keyword",
        why="scheduler.get_last_lr()[0], read before scheduler.step(), is the rate the step used; add_scalar with global_step= as a keyword.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "def train_logged(model, loader, loss_fn, optimizer, scheduler, writer, device, num_epochs, max_norm):\n"
            "    model.train()\n"
            "    global_step = 0\n"
            "    for epoch in range(num_epochs):\n"
            "        for batch in loader:\n"
            "            x, y = batch\n"
            "            x = x.to(device)\n"
            "            y = y.to(device)\n"
            "            optimizer.zero_grad(set_to_none=True)\n"
            "            logits = model(x)\n"
            "            loss = loss_fn(logits, y)\n"
            "            loss.backward()\n"
            "            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)\n"
            "            current_lr = scheduler.get_last_lr()[0]\n"
            "            optimizer.step()\n"
            "            scheduler.step()\n"
            '            for tag, value in (("train/loss", loss.item()), ("train/lr", current_lr), ("train/grad_norm", norm.item())):\n'
            "                writer.add_scalar(tag, value, global_step=global_step)\n"
            "            global_step += 1\n"
            "    writer.flush()\n"
            "    return int(global_step)\n"
        ),
    )
)
RIGHT_ANSWERS.setdefault("DigitsCNN", []).append(
    RightAnswer(
        name="cpu-round-trip-comes-back",
        why="Moves the features to the CPU and straight back to x's device before the last layer: slow, but every layer meets its inputs on its own device.",
        code=(
            "import math\n"
            "import os\n"
            "import torch\n"
            "from torch import nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.tensorboard import SummaryWriter\n"
            "class DigitsCNN(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),\n"
            "                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))\n"
            "        self.head = nn.Linear(128, 10)\n"
            "    def forward(self, x):\n"
            "        h = self.features(x).reshape(len(x), -1)\n"
            "        return self.head(h.cpu().to(x.device))\n"
        ),
    )
)
