"""Plausible wrong answers for 09_transfer's exercises."""

from autograder.mistakes import Mistake

MISTAKES = {
    "replace_head": [
        Mistake(
            name="hard-coded-in-features",
            message="Read in_features from the old head; 64 is only right for DigitNet.",
            code=(
                "import torch\nfrom torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = getattr(model, head_attr)\n"
                "    setattr(model, head_attr, nn.Linear(64, num_classes).to(old.weight.device))\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="sets-out-features",
            message="Changing head.out_features only edits a number; the weight keeps its shape.",
            code=(
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    getattr(model, head_attr).out_features = num_classes\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="default-dtype-and-device",
            message="A new nn.Linear is float32 on the CPU: create it on the old head's device and dtype.",
            code=(
                "from torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = getattr(model, head_attr)\n"
                "    setattr(model, head_attr, nn.Linear(old.in_features, num_classes))\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="ignores-head-attr",
            message="Use the attribute name you are given (fc in a ResNet), not always model.head.",
            code=(
                "from torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = model.head\n"
                "    model.head = nn.Linear(old.in_features, num_classes, device=old.weight.device,\n"
                "                           dtype=old.weight.dtype)\n"
                "    return model\n"
            ),
        ),
    ],
    "freeze_backbone": [
        Mistake(
            name="freezes-head-too",
            message="Freezing every parameter leaves nothing to train: unfreeze the head.",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    for p in model.parameters():\n"
                "        p.requires_grad = False\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="only-model-backbone",
            message="Freeze everything outside the head, not just the part called backbone.",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    model.backbone.requires_grad_(False)\n"
                "    getattr(model, head_attr).requires_grad_(True)\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="eval-is-not-freeze",
            message="model.eval() changes dropout and batch norm behaviour; it freezes nothing.",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    model.eval()\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="name-prefix-without-dot",
            message="name.startswith('fc') also matches fc_norm: compare with the head's own parameters.",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    for name, p in model.named_parameters():\n"
                "        p.requires_grad = name.startswith(head_attr)\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="head-left-frozen",
            message="A head that was frozen earlier must be made trainable again.",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    head = {id(p) for p in getattr(model, head_attr).parameters()}\n"
                "    for p in model.parameters():\n"
                "        if id(p) not in head:\n"
                "            p.requires_grad = False\n"
                "    return model\n"
            ),
        ),
    ],
    "make_optimizer": [
        Mistake(
            name="all-parameters-one-lr",
            message="model.parameters() gives one learning rate to all and hands frozen parameters over.",
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    return torch.optim.AdamW(model.parameters(), lr=head_lr)\n"
            ),
        ),
        Mistake(
            name="groups-include-frozen",
            message="Right groups, but the frozen parameters went in too: filter on requires_grad.",
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    head = list(getattr(model, head_attr).parameters())\n"
                "    ids = {id(p) for p in head}\n"
                "    body = [p for p in model.parameters() if id(p) not in ids]\n"
                "    return torch.optim.AdamW([{'params': body, 'lr': backbone_lr},\n"
                "                              {'params': head, 'lr': head_lr}])\n"
            ),
        ),
        Mistake(
            name="head-in-both-groups",
            message="model.parameters() as the backbone group also contains the head.",
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    body = [p for p in model.parameters() if p.requires_grad]\n"
                "    head = [p for p in getattr(model, head_attr).parameters() if p.requires_grad]\n"
                "    return torch.optim.AdamW([{'params': body, 'lr': backbone_lr},\n"
                "                              {'params': head, 'lr': head_lr}])\n"
            ),
        ),
        Mistake(
            name="swapped-learning-rates",
            message="The pretrained backbone gets the small learning rate, the fresh head the large one.",
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    ids = {id(p) for p in getattr(model, head_attr).parameters()}\n"
                "    body = [p for p in model.parameters() if p.requires_grad and id(p) not in ids]\n"
                "    head = [p for p in getattr(model, head_attr).parameters() if p.requires_grad]\n"
                "    groups = [{'params': body, 'lr': head_lr}] if body else []\n"
                "    return torch.optim.AdamW(groups + [{'params': head, 'lr': backbone_lr}])\n"
            ),
        ),
    ],
    "extract_features": [
        Mistake(
            name="own-statistics",
            message="Mismatched preprocessing: normalise with the pretraining mean/std, not x's own.",
            code=(
                "import torch\n"
                "def extract_features(backbone, x, mean, std, batch_size=128):\n"
                "    was = backbone.training\n"
                "    backbone.eval()\n"
                "    with torch.no_grad():\n"
                "        x = (x - x.mean()) / x.std()\n"
                "        out = torch.cat([backbone(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])\n"
                "    backbone.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="no-normalisation",
            message="The backbone was trained on normalised inputs: apply (x - mean) / std.",
            code=(
                "import torch\n"
                "def extract_features(backbone, x, mean, std, batch_size=128):\n"
                "    was = backbone.training\n"
                "    backbone.eval()\n"
                "    with torch.no_grad():\n"
                "        out = torch.cat([backbone(x[i:i + batch_size]) for i in range(0, len(x), batch_size)])\n"
                "    backbone.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="train-mode",
            message="Without eval() batch norm uses each batch's statistics and updates its running ones.",
            code=(
                "import torch\n"
                "def extract_features(backbone, x, mean, std, batch_size=128):\n"
                "    with torch.no_grad():\n"
                "        return torch.cat([backbone((x[i:i + batch_size] - mean) / std)\n"
                "                          for i in range(0, len(x), batch_size)])\n"
            ),
        ),
        Mistake(
            name="mode-not-restored",
            message="Put the backbone back in the mode it was in (backbone.train(was_training)).",
            code=(
                "import torch\n"
                "def extract_features(backbone, x, mean, std, batch_size=128):\n"
                "    backbone.eval()\n"
                "    with torch.no_grad():\n"
                "        return torch.cat([backbone((x[i:i + batch_size] - mean) / std)\n"
                "                          for i in range(0, len(x), batch_size)])\n"
            ),
        ),
        Mistake(
            name="records-graph",
            message="Run the backbone under torch.no_grad(): features need no graph.",
            code=(
                "import torch\n"
                "def extract_features(backbone, x, mean, std, batch_size=128):\n"
                "    was = backbone.training\n"
                "    backbone.eval()\n"
                "    out = torch.cat([backbone((x[i:i + batch_size] - mean) / std)\n"
                "                     for i in range(0, len(x), batch_size)])\n"
                "    backbone.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="reseeds-global-generator",
            message="torch.manual_seed inside a function resets the caller's random numbers: every dropout mask, shuffle and initialisation after the call repeats the same draws. Seed once at the top of a script (or pass a torch.Generator) and leave the global generator alone.",
            code=(
                "import torch\n"
                "def extract_features(backbone, x, mean, std, batch_size=128):\n"
                "    torch.manual_seed(0)\n"
                "    was_training = backbone.training\n"
                "    backbone.eval()\n"
                "    try:\n"
                "        with torch.inference_mode():\n"
                "            return torch.cat([backbone((part - mean) / std)\n"
                "                              for part in torch.split(x, batch_size)])\n"
                "    finally:\n"
                "        backbone.train(was_training)\n"
            ),
        ),
    ],
    "fine_tune": [
        Mistake(
            name="trains-pretrained-in-place",
            message="Training the caller's model changes the published weights: deep-copy it first.",
            code=(
                "import torch\nimport torch.nn.functional as F\n"
                "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
                "    model = replace_head(pretrained, num_classes)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
                "    for _ in range(num_epochs):\n"
                "        loss = F.cross_entropy(model(x), y)\n"
                "        optimizer.zero_grad()\n"
                "        loss.backward()\n"
                "        optimizer.step()\n"
                "    return model.eval()\n"
            ),
        ),
        Mistake(
            name="from-scratch",
            message="A new DigitNet throws the pretrained weights away: that is training from scratch.",
            code=(
                "import torch\nimport torch.nn.functional as F\n"
                "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
                "    model = DigitNet(num_classes).to(x.device)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
                "    for _ in range(num_epochs):\n"
                "        loss = F.cross_entropy(model(x), y)\n"
                "        optimizer.zero_grad()\n"
                "        loss.backward()\n"
                "        optimizer.step()\n"
                "    return model.eval()\n"
            ),
        ),
        Mistake(
            name="keeps-old-head",
            message="A new task needs a new head with num_classes outputs.",
            code=(
                "import copy\nimport torch\nimport torch.nn.functional as F\n"
                "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
                "    model = copy.deepcopy(pretrained)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
                "    for _ in range(num_epochs):\n"
                "        loss = F.cross_entropy(model(x), y)\n"
                "        optimizer.zero_grad()\n"
                "        loss.backward()\n"
                "        optimizer.step()\n"
                "    return model.eval()\n"
            ),
        ),
        Mistake(
            name="freezes-head-too",
            message="With the head frozen as well there is nothing to train.",
            code=(
                "import copy\nimport torch\nimport torch.nn.functional as F\n"
                "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
                "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
                "    model.requires_grad_(False)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
                "    for _ in range(num_epochs):\n"
                "        loss = F.cross_entropy(model(x), y)\n"
                "        optimizer.zero_grad()\n"
                "        loss.backward()\n"
                "        optimizer.step()\n"
                "    return model.eval()\n"
            ),
        ),
        Mistake(
            name="no-training",
            message="A fresh head is random: train it (and the backbone) for num_epochs steps.",
            code=(
                "import copy\n"
                "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
                "    return replace_head(copy.deepcopy(pretrained), num_classes).eval()\n"
            ),
        ),
    ],
}

# Wrong answers that pass the visible asserts (DigitNet, CPU, default arguments) and that only
# the hidden check's other inputs and its look at side effects and at the process catch.
_LOOP = (
    "    for _ in range(num_epochs):\n"
    "        loss = F.cross_entropy(model(x), y)\n"
    "        optimizer.zero_grad()\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
)
_FT_HEAD = (
    "import copy\nimport torch\nimport torch.nn.functional as F\n"
    "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
)
_EF_HEAD = "import torch\ndef extract_features(backbone, x, mean, std, batch_size=128):\n"

_MORE = {
    "replace_head": [
        Mistake(
            name="copies-old-rows",
            message="The new head must start from fresh weights, not a copy of the old classes' rows.",
            code=(
                "import torch\nfrom torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = getattr(model, head_attr)\n"
                "    new = nn.Linear(old.in_features, num_classes, device=old.weight.device,\n"
                "                    dtype=old.weight.dtype)\n"
                "    with torch.no_grad():\n"
                "        rows = min(num_classes, old.out_features)\n"
                "        new.weight[:rows] = old.weight[:rows]\n"
                "        if old.bias is not None:\n"
                "            new.bias[:rows] = old.bias[:rows]\n"
                "    setattr(model, head_attr, new)\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="reseeds-global-rng",
            message="torch.manual_seed inside a helper resets the caller's random stream.",
            code=(
                "import torch\nfrom torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = getattr(model, head_attr)\n"
                "    torch.manual_seed(0)  # 'reproducible' new head\n"
                "    setattr(model, head_attr, nn.Linear(old.in_features, num_classes,\n"
                "            device=old.weight.device, dtype=old.weight.dtype))\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="last-child-is-head",
            message="The head is getattr(model, head_attr), not whatever module was registered last.",
            code=(
                "from torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    name, old = list(model.named_children())[-1]\n"
                "    setattr(model, name, nn.Linear(old.in_features, num_classes,\n"
                "            device=old.weight.device, dtype=old.weight.dtype))\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="global-device",
            message="Create the head on the old head's device, not on the notebook's `device`.",
            code=(
                "from torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = getattr(model, head_attr)\n"
                "    new = nn.Linear(old.in_features, num_classes, dtype=old.weight.dtype).to(device)\n"
                "    setattr(model, head_attr, new)\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="dtype-of-first-parameter",
            message="Take device and dtype from the old head, not from the model's first parameter.",
            code=(
                "from torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = getattr(model, head_attr)\n"
                "    first = next(model.parameters())\n"
                "    setattr(model, head_attr, nn.Linear(old.in_features, num_classes,\n"
                "            device=first.device, dtype=first.dtype))\n"
                "    return model\n"
            ),
        ),
    ],
    "freeze_backbone": [
        Mistake(
            name="children-skip-root-params",
            message="model.children() misses parameters of the root module itself (a cls_token).",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    for name, child in model.named_children():\n"
                "        child.requires_grad_(name == head_attr)\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="names-weight-and-bias",
            message="The head may be any module (no bias, a Sequential): use its .parameters().",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    model.requires_grad_(False)\n"
                "    head = getattr(model, head_attr)\n"
                "    head.weight.requires_grad = True\n"
                "    head.bias.requires_grad = True\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="freezes-and-evals-batchnorm",
            message="Putting batch norm layers in eval mode changes the mode; freezing is requires_grad only.",
            code=(
                "from torch import nn\n"
                "def freeze_backbone(model, head_attr='head'):\n"
                "    model.requires_grad_(False)\n"
                "    getattr(model, head_attr).requires_grad_(True)\n"
                "    for m in model.modules():\n"
                "        if isinstance(m, nn.modules.batchnorm._BatchNorm):\n"
                "            m.eval()  # 'freeze' the running statistics too\n"
                "    return model\n"
            ),
        ),
        Mistake(
            name="sets-module-attribute",
            message="module.requires_grad = False sets a plain attribute; call requires_grad_(False).",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    for name, child in model.named_children():\n"
                "        child.requires_grad = name == head_attr\n"
                "    return model\n"
            ),
        ),
    ],
    "make_optimizer": [
        Mistake(
            name="only-model-backbone-group",
            message="Everything trainable outside the head goes in the backbone group, not only model.backbone.",
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    body = [p for p in model.backbone.parameters() if p.requires_grad]\n"
                "    head = [p for p in getattr(model, head_attr).parameters() if p.requires_grad]\n"
                "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
                "    return torch.optim.AdamW(groups + [{'params': head, 'lr': head_lr}])\n"
            ),
        ),
        Mistake(
            name="head-by-name-prefix",
            message="name.startswith(head_attr) also matches fc_norm next to fc: use the head's parameters.",
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]\n"
                "    body = [p for n, p in named if not n.startswith(head_attr)]\n"
                "    head = [p for n, p in named if n.startswith(head_attr)]\n"
                "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
                "    return torch.optim.AdamW(groups + [{'params': head, 'lr': head_lr}])\n"
            ),
        ),
        Mistake(
            name="keeps-empty-group",
            message="With nothing trainable outside the head, leave the backbone group out.",
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    ids = {id(p) for p in getattr(model, head_attr).parameters()}\n"
                "    body = [p for p in model.parameters() if p.requires_grad and id(p) not in ids]\n"
                "    head = [p for p in getattr(model, head_attr).parameters() if p.requires_grad]\n"
                "    return torch.optim.AdamW([{'params': body, 'lr': backbone_lr},\n"
                "                              {'params': head, 'lr': head_lr}])\n"
            ),
        ),
        Mistake(
            name="head-group-unfiltered",
            message="Filter the head's parameters on requires_grad too: a frozen head bias stays out.",
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    head = list(getattr(model, head_attr).parameters())\n"
                "    ids = {id(p) for p in head}\n"
                "    body = [p for p in model.parameters() if p.requires_grad and id(p) not in ids]\n"
                "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
                "    return torch.optim.AdamW(groups + [{'params': head, 'lr': head_lr}])\n"
            ),
        ),
    ],
    "extract_features": [
        Mistake(
            name="ignores-batch-size",
            message="Run the backbone in batches of at most batch_size: all of x at once may not fit.",
            code=_EF_HEAD
            + (
                "    was = backbone.training\n"
                "    backbone.eval()\n"
                "    with torch.no_grad():\n"
                "        out = backbone((x - mean) / std)\n"
                "    backbone.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="detach-not-no-grad",
            message=".detach() afterwards still records the graph: run the backbone under torch.no_grad().",
            code=_EF_HEAD
            + (
                "    was = backbone.training\n"
                "    backbone.eval()\n"
                "    out = torch.cat([backbone((x[i:i + batch_size] - mean) / std).detach()\n"
                "                     for i in range(0, len(x), batch_size)])\n"
                "    backbone.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="seeds-for-reproducibility",
            message="torch.manual_seed inside a helper resets the caller's random stream.",
            code=_EF_HEAD
            + (
                "    torch.manual_seed(0)\n"
                "    was = backbone.training\n"
                "    backbone.eval()\n"
                "    with torch.no_grad():\n"
                "        out = torch.cat([backbone((x[i:i + batch_size] - mean) / std)\n"
                "                         for i in range(0, len(x), batch_size)])\n"
                "    backbone.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="freezes-backbone-for-no-graph",
            message="requires_grad_(False) changes the caller's backbone; torch.no_grad() is what avoids the graph.",
            code=_EF_HEAD
            + (
                "    backbone.requires_grad_(False)  # no gradients, so no graph\n"
                "    was = backbone.training\n"
                "    backbone.eval()\n"
                "    out = torch.cat([backbone((x[i:i + batch_size] - mean) / std)\n"
                "                     for i in range(0, len(x), batch_size)])\n"
                "    backbone.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="always-back-to-train",
            message="Restore the mode the backbone had (train or eval), not always train().",
            code=_EF_HEAD
            + (
                "    backbone.eval()\n"
                "    with torch.no_grad():\n"
                "        out = torch.cat([backbone((x[i:i + batch_size] - mean) / std)\n"
                "                         for i in range(0, len(x), batch_size)])\n"
                "    backbone.train()\n"
                "    return out\n"
            ),
        ),
    ],
    "fine_tune": [
        Mistake(
            name="frozen-backbone",
            message="That is a linear probe: fine-tuning trains the backbone too, with backbone_lr.",
            code=_FT_HEAD
            + (
                "    model = freeze_backbone(replace_head(copy.deepcopy(pretrained), num_classes))\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
            )
            + _LOOP
            + "    return model.eval()\n",
        ),
        Mistake(
            name="no-train-mode",
            message="The copy comes in eval mode: call model.train() before the training steps.",
            code=_FT_HEAD
            + (
                "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            )
            + _LOOP
            + "    return model.eval()\n",
        ),
        Mistake(
            name="ignores-num-epochs",
            message="Train for num_epochs steps, the argument, not a fixed number.",
            code=_FT_HEAD
            + (
                "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
            )
            + _LOOP.replace("range(num_epochs)", "range(60)")
            + "    return model.eval()\n",
        ),
        Mistake(
            name="one-learning-rate",
            message="One learning rate for the whole model ignores backbone_lr: use parameter groups.",
            code=_FT_HEAD
            + (
                "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
                "    optimizer = torch.optim.AdamW(model.parameters(), lr=head_lr)\n"
                "    model.train()\n"
            )
            + _LOOP
            + "    return model.eval()\n",
        ),
        Mistake(
            name="reseeds-global-rng",
            message="torch.manual_seed inside fine_tune resets the caller's random stream.",
            code=_FT_HEAD
            + (
                "    torch.manual_seed(0)\n"
                "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
            )
            + _LOOP
            + "    return model.eval()\n",
        ),
        Mistake(
            name="returns-train-mode",
            message="Return the trained copy in eval mode: model.eval().",
            code=_FT_HEAD
            + (
                "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
            )
            + _LOOP
            + "    return model\n",
        ),
        Mistake(
            name="no-zero-grad",
            message="backward() adds to .grad: call optimizer.zero_grad() at every step.",
            code=_FT_HEAD
            + (
                "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
                "    model.train()\n"
                "    for _ in range(num_epochs):\n"
                "        F.cross_entropy(model(x), y).backward()\n"
                "        optimizer.step()\n"
                "    return model.eval()\n"
            ),
        ),
        Mistake(
            name="trains-mode-of-pretrained",
            message="pretrained.train() changes the caller's model: call train() on the copy.",
            code=_FT_HEAD
            + (
                "    pretrained.train()\n"
                "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
                "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            )
            + _LOOP
            + "    return model.eval()\n",
        ),
    ],
}
for _grade_id, _extra in _MORE.items():
    MISTAKES[_grade_id] = MISTAKES[_grade_id] + _extra

# LoRA (section 10): the first of each list is the most common wrong answer, and the
# exercise's visible asserts catch it with a message that names it.
_LORA_HEAD = (
    "import math\nimport torch\nfrom torch import nn\n"
    "class LoRALinear(nn.Module):\n"
    "    def __init__(self, base, r, alpha):\n"
    "        super().__init__()\n"
)
_LORA_INIT = (
    "        self.base = base.requires_grad_(False)\n"
    "        kw = {'device': base.weight.device, 'dtype': base.weight.dtype}\n"
    "        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, **kw))\n"
    "        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))\n"
    "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, **kw))\n"
    "        self.scaling = alpha / r\n"
)
_LORA_FORWARD = (
    "    def forward(self, x):\n"
    "        return self.base(x) + (x @ self.lora_A.T) @ self.lora_B.T * self.scaling\n"
)
_MERGE_HEAD = "import copy\nimport torch\nfrom torch import nn\ndef merge_lora(layer):\n"

MISTAKES["LoRALinear"] = [
    Mistake(
        name="b-not-zero",
        message=(
            "lora_B starts random like any weight: the adapted model differs from the pretrained "
            "one before training. Start B at zero (A at random) so that B @ A = 0."
        ),
        code=_LORA_HEAD
        + _LORA_INIT.replace(
            "torch.zeros(base.out_features, r, **kw)",
            "torch.randn(base.out_features, r, **kw) * 0.01",
        )
        + _LORA_FORWARD,
    ),
    Mistake(
        name="base-not-frozen",
        message="The base stays trainable: freeze it (base.requires_grad_(False)); only A and B train.",
        code=_LORA_HEAD
        + _LORA_INIT.replace("self.base = base.requires_grad_(False)", "self.base = base")
        + _LORA_FORWARD,
    ),
    Mistake(
        name="no-scaling",
        message="The update is not multiplied by alpha / r: changing r then changes its size.",
        code=_LORA_HEAD + _LORA_INIT + _LORA_FORWARD.replace(" * self.scaling", ""),
    ),
    Mistake(
        name="a-zero-too",
        message=(
            "A and B both start at zero: each one's gradient is multiplied by the other, so "
            "neither ever moves. Only B starts at zero."
        ),
        code=_LORA_HEAD
        + _LORA_INIT.replace(
            "        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))\n",
            "        nn.init.zeros_(self.lora_A)\n",
        )
        + _LORA_FORWARD,
    ),
    Mistake(
        name="swapped-shapes",
        message="lora_A is (r, in_features) and lora_B (out_features, r), not the other way round.",
        code=_LORA_HEAD
        + (
            "        self.base = base.requires_grad_(False)\n"
            "        kw = {'device': base.weight.device, 'dtype': base.weight.dtype}\n"
            "        self.lora_A = nn.Parameter(torch.randn(base.in_features, r, **kw) / r)\n"
            "        self.lora_B = nn.Parameter(torch.zeros(r, base.out_features, **kw))\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        return self.base(x) + x @ self.lora_A @ self.lora_B * self.scaling\n"
        ),
    ),
    Mistake(
        name="default-dtype-and-device",
        message=(
            "A and B are float32 on the CPU whatever the base is: create them with the base "
            "weight's device and dtype."
        ),
        code=_LORA_HEAD
        + (
            "        self.base = base.requires_grad_(False)\n"
            "        self.lora_A = nn.Parameter(torch.empty(r, base.in_features))\n"
            "        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))\n"
            "        self.scaling = alpha / r\n"
        )
        + _LORA_FORWARD,
    ),
    Mistake(
        name="reseeds-global-rng",
        message="torch.manual_seed inside the layer resets the caller's random stream.",
        code=_LORA_HEAD + "        torch.manual_seed(0)\n" + _LORA_INIT + _LORA_FORWARD,
    ),
]

MISTAKES["merge_lora"] = [
    Mistake(
        name="no-scaling",
        message="The merged weight is base.weight + scaling * B @ A; without scaling it is not the adapter's.",
        code=_MERGE_HEAD
        + (
            "    merged = copy.deepcopy(layer.base)\n"
            "    with torch.no_grad():\n"
            "        merged.weight += layer.lora_B @ layer.lora_A\n"
            "    return merged\n"
        ),
    ),
    Mistake(
        name="merged-in-place",
        message=(
            "Adding the update into layer.base.weight in place changes the adapter: it then adds "
            "B @ A a second time (merged twice). Put the sum in a new layer."
        ),
        code=_MERGE_HEAD
        + (
            "    with torch.no_grad():\n"
            "        layer.base.weight += layer.scaling * layer.lora_B @ layer.lora_A\n"
            "    return layer.base\n"
        ),
    ),
    Mistake(
        name="a-times-b",
        message="The update is lora_B @ lora_A, (out, r) @ (r, in); the transposed product is wrong.",
        code=_MERGE_HEAD
        + (
            "    merged = copy.deepcopy(layer.base)\n"
            "    with torch.no_grad():\n"
            "        merged.weight += layer.scaling * (layer.lora_A.T @ layer.lora_B.T)\n"
            "    return merged\n"
        ),
    ),
    Mistake(
        name="always-bias",
        message="A base without bias must stay without one: nn.Linear(...) adds a random bias.",
        code=_MERGE_HEAD
        + (
            "    base = layer.base\n"
            "    merged = nn.Linear(base.in_features, base.out_features,\n"
            "                       device=base.weight.device, dtype=base.weight.dtype)\n"
            "    with torch.no_grad():\n"
            "        merged.weight.copy_(base.weight + layer.scaling * layer.lora_B @ layer.lora_A)\n"
            "        if base.bias is not None:\n"
            "            merged.bias.copy_(base.bias)\n"
            "    return merged\n"
        ),
    ),
    Mistake(
        name="default-dtype",
        message="A new nn.Linear is float32 on the CPU: create it with the base's device and dtype.",
        code=_MERGE_HEAD
        + (
            "    base = layer.base\n"
            "    merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None)\n"
            "    with torch.no_grad():\n"
            "        merged.weight.copy_(base.weight + layer.scaling * layer.lora_B @ layer.lora_A)\n"
            "        if base.bias is not None:\n"
            "            merged.bias.copy_(base.bias)\n"
            "    return merged.to(base.weight.device)\n"
        ),
    ),
    Mistake(
        name="drops-bias",
        message="The merged layer keeps the base's bias: only the weight gets the update.",
        code=_MERGE_HEAD
        + (
            "    base = layer.base\n"
            "    merged = nn.Linear(base.in_features, base.out_features, bias=False,\n"
            "                       device=base.weight.device, dtype=base.weight.dtype)\n"
            "    with torch.no_grad():\n"
            "        merged.weight.copy_(base.weight + layer.scaling * layer.lora_B @ layer.lora_A)\n"
            "    return merged\n"
        ),
    ),
]

# Issue #27: devices and a batch of one.
MISTAKES["extract_features"] += [
    Mistake(
        name="stats-tensor-on-cpu",
        message="torch.as_tensor(mean) makes a CPU tensor from a float: with x on the GPU the "
        "normalisation mixes devices. Pass device=x.device, or let (x - mean) broadcast a float.",
        code=_EF_HEAD
        + (
            "    mean = torch.as_tensor(mean, dtype=x.dtype).reshape(1, -1, 1, 1)\n"
            "    std = torch.as_tensor(std, dtype=x.dtype).reshape(1, -1, 1, 1)\n"
            "    was = backbone.training\n"
            "    backbone.eval()\n"
            "    with torch.no_grad():\n"
            "        out = [backbone((x[i:i + batch_size] - mean) / std)\n"
            "               for i in range(0, len(x), batch_size)]\n"
            "    backbone.train(was)\n"
            "    return torch.cat(out)\n"
        ),
    ),
    Mistake(
        name="squeeze-drops-batch-of-one",
        message=".squeeze() removes every axis of size 1: for a single image the features "
        "lose their batch axis. Return torch.cat(...) as it is, (N, F).",
        code=_EF_HEAD
        + (
            "    was = backbone.training\n"
            "    backbone.eval()\n"
            "    with torch.no_grad():\n"
            "        out = [backbone((x[i:i + batch_size] - mean) / std)\n"
            "               for i in range(0, len(x), batch_size)]\n"
            "    backbone.train(was)\n"
            "    return torch.cat(out).squeeze()\n"
        ),
    ),
]

# Issue #27: side effects on the caller's model (its .grad), and devices.
MISTAKES["freeze_backbone"] += [
    Mistake(
        name="clears-grads",
        message="model.zero_grad() throws away the caller's gradients: freezing only sets requires_grad.",
        code=(
            "def freeze_backbone(model, head_attr='head'):\n"
            "    model.zero_grad()  # a clean start\n"
            "    model.requires_grad_(False)\n"
            "    getattr(model, head_attr).requires_grad_(True)\n"
            "    return model\n"
        ),
    ),
]

MISTAKES["replace_head"] += [
    Mistake(
        name="freezes-the-rest",
        message="replace_head only swaps the head: freezing the rest of the model is another step.",
        code=(
            "from torch import nn\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    old = getattr(model, head_attr)\n"
            "    model.requires_grad_(False)  # only the new head will train\n"
            "    setattr(model, head_attr, nn.Linear(old.in_features, num_classes,\n"
            "            device=old.weight.device, dtype=old.weight.dtype))\n"
            "    return model\n"
        ),
    ),
]

MISTAKES["make_optimizer"] += [
    Mistake(
        name="unfreezes-head",
        message="make_optimizer only reads requires_grad: switching the head back on changes the caller's model.",
        code=(
            "import torch\n"
            "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
            "    head = list(getattr(model, head_attr).requires_grad_(True).parameters())\n"
            "    ids = {id(p) for p in head}\n"
            "    body = [p for p in model.parameters() if p.requires_grad and id(p) not in ids]\n"
            "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
            "    return torch.optim.AdamW(groups + [{'params': head, 'lr': head_lr}])\n"
        ),
    ),
    Mistake(
        name="generator-read-twice",
        message="model.parameters() is a generator: read once, it is empty the second time.",
        code=(
            "import torch\n"
            "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
            "    params = model.parameters()\n"
            "    ids = {id(p) for p in getattr(model, head_attr).parameters()}\n"
            "    body = [p for p in params if p.requires_grad and id(p) not in ids]\n"
            "    head = [p for p in params if p.requires_grad and id(p) in ids]\n"
            "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
            "    return torch.optim.AdamW(groups + [{'params': head, 'lr': head_lr}])\n"
        ),
    ),
]

MISTAKES["fine_tune"] += [
    Mistake(
        name="zero-grad-after-backward",
        message="zero_grad() between backward() and step() wipes the gradients: the step moves nothing.",
        code=_FT_HEAD
        + (
            "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    model.train()\n"
            "    for _ in range(num_epochs):\n"
            "        F.cross_entropy(model(x), y).backward()\n"
            "        optimizer.zero_grad()\n"
            "        optimizer.step()\n"
            "    return model.eval()\n"
        ),
    ),
]

MISTAKES["LoRALinear"] += [
    Mistake(
        name="zeros-without-device",
        message="torch.zeros without device= lands on the CPU: with the layer on the GPU the forward mixes devices.",
        code=_LORA_HEAD
        + _LORA_INIT
        + (
            "    def forward(self, x):\n"
            "        update = torch.zeros(*x.shape[:-1], self.lora_B.shape[0], dtype=x.dtype)\n"
            "        update = update + (x @ self.lora_A.T) @ self.lora_B.T\n"
            "        return self.base(x) + self.scaling * update\n"
        ),
    ),
    Mistake(
        name="a-through-data",
        message="lora_A.data cuts A from the graph: the forward is right, but A never trains.",
        code=_LORA_HEAD
        + _LORA_INIT
        + (
            "    def forward(self, x):\n"
            "        return self.base(x) + (x @ self.lora_A.data.T) @ self.lora_B.T * self.scaling\n"
        ),
    ),
]

MISTAKES["merge_lora"] += [
    Mistake(
        name="replaces-base-weight",
        message="Giving layer.base a new weight changes the adapter: build a new layer for the sum.",
        code=_MERGE_HEAD
        + (
            "    merged = layer.base\n"
            "    merged.weight = nn.Parameter(merged.weight + layer.scaling * layer.lora_B @ layer.lora_A)\n"
            "    return merged\n"
        ),
    ),
]

# Red team (from the exercise text alone): gradients, devices, side effects, inputs of one
# kind, the text's rules, statistics.
MISTAKES["replace_head"] += [
    Mistake(
        name="returns-a-copy",
        message="replace_head changes the model it is given (setattr) and returns it, not a copy.",
        code=(
            "import copy\nfrom torch import nn\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    model = copy.deepcopy(model)  # keep the caller's model safe\n"
            "    old = getattr(model, head_attr)\n"
            "    setattr(model, head_attr, nn.Linear(old.in_features, num_classes,\n"
            "            device=old.weight.device, dtype=old.weight.dtype))\n"
            "    return model\n"
        ),
    ),
    Mistake(
        name="lazy-linear",
        message="nn.LazyLinear draws its weights only at the first call: build nn.Linear(in_features, ...).",
        code=(
            "from torch import nn\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    old = getattr(model, head_attr)\n"
            "    setattr(model, head_attr, nn.LazyLinear(num_classes, device=old.weight.device,\n"
            "                                            dtype=old.weight.dtype))\n"
            "    return model\n"
        ),
    ),
    Mistake(
        name="resets-old-head-in-place",
        message="Resizing and re-initialising the old head object changes it for everyone who holds "
        "it: build a new nn.Linear and setattr it.",
        code=(
            "import torch\nfrom torch import nn\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    head = getattr(model, head_attr)\n"
            "    kw = {'device': head.weight.device, 'dtype': head.weight.dtype}\n"
            "    head.out_features = num_classes\n"
            "    head.weight = nn.Parameter(torch.empty(num_classes, head.in_features, **kw))\n"
            "    if head.bias is not None:\n"
            "        head.bias = nn.Parameter(torch.empty(num_classes, **kw))\n"
            "    head.reset_parameters()\n"
            "    return model\n"
        ),
    ),
    Mistake(
        name="small-normal-init",
        message="The new head keeps the weights nn.Linear draws itself, not a custom N(0, 0.01) init.",
        code=(
            "from torch import nn\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    old = getattr(model, head_attr)\n"
            "    new = nn.Linear(old.in_features, num_classes, device=old.weight.device,\n"
            "                    dtype=old.weight.dtype)\n"
            "    nn.init.normal_(new.weight, std=0.01)\n"
            "    nn.init.zeros_(new.bias)\n"
            "    setattr(model, head_attr, new)\n"
            "    return model\n"
        ),
    ),
]

MISTAKES["freeze_backbone"] += [
    Mistake(
        name="head-children-frozen",
        message="Unfreezing the head first and then freezing every other module's own parameters "
        "freezes the head's sub-layers (a Sequential head).",
        code=(
            "def freeze_backbone(model, head_attr='head'):\n"
            "    head = getattr(model, head_attr)\n"
            "    head.requires_grad_(True)\n"
            "    for m in model.modules():\n"
            "        if m is not head:\n"
            "            for p in m.parameters(recurse=False):\n"
            "                p.requires_grad_(False)\n"
            "    return model\n"
        ),
    ),
    Mistake(
        name="freezes-known-layer-types",
        message="Freezing only Conv/Linear/BatchNorm layers misses other layers (a LayerNorm) and "
        "the root's own parameters.",
        code=(
            "from torch import nn\n"
            "def freeze_backbone(model, head_attr='head'):\n"
            "    kinds = (nn.Conv2d, nn.Linear, nn.BatchNorm1d, nn.BatchNorm2d)\n"
            "    for m in model.modules():\n"
            "        if isinstance(m, kinds):\n"
            "            m.requires_grad_(False)\n"
            "    getattr(model, head_attr).requires_grad_(True)\n"
            "    return model\n"
        ),
    ),
    Mistake(
        name="last-linear-is-head",
        message="The head is getattr(model, head_attr), not the last nn.Linear in the model.",
        code=(
            "from torch import nn\n"
            "def freeze_backbone(model, head_attr='head'):\n"
            "    model.requires_grad_(False)\n"
            "    last = [m for m in model.modules() if isinstance(m, nn.Linear)][-1]\n"
            "    last.requires_grad_(True)\n"
            "    return model\n"
        ),
    ),
]

MISTAKES["make_optimizer"] += [
    Mistake(
        name="duplicates-within-group",
        message="m.parameters() of every module repeats each parameter once per ancestor: the "
        "backbone group lists parameters several times.",
        code=(
            "import torch\n"
            "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
            "    head = getattr(model, head_attr)\n"
            "    ids = {id(p) for p in head.parameters()}\n"
            "    body = []\n"
            "    for m in model.modules():\n"
            "        body += [p for p in m.parameters() if p.requires_grad and id(p) not in ids]\n"
            "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
            "    groups.append({'params': [p for p in head.parameters() if p.requires_grad],\n"
            "                   'lr': head_lr})\n"
            "    return torch.optim.AdamW(groups)\n"
        ),
    ),
    Mistake(
        name="last-child-as-head",
        message="The head is getattr(model, head_attr), not the last child module.",
        code=(
            "import torch\n"
            "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
            "    head = list(model.children())[-1]\n"
            "    ids = {id(p) for p in head.parameters()}\n"
            "    body = [p for p in model.parameters() if p.requires_grad and id(p) not in ids]\n"
            "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
            "    groups.append({'params': [p for p in head.parameters() if p.requires_grad],\n"
            "                   'lr': head_lr})\n"
            "    return torch.optim.AdamW(groups)\n"
        ),
    ),
]

MISTAKES["extract_features"] += [
    Mistake(
        name="normalises-in-place",
        message="sub_/div_ on a slice of x change the caller's images: normalise out of place.",
        code=_EF_HEAD
        + (
            "    was = backbone.training\n"
            "    backbone.eval()\n"
            "    out = []\n"
            "    with torch.no_grad():\n"
            "        for i in range(0, len(x), batch_size):\n"
            "            out.append(backbone(x[i:i + batch_size].sub_(mean).div_(std)))\n"
            "    backbone.train(was)\n"
            "    return torch.cat(out)\n"
        ),
    ),
    Mistake(
        name="stats-as-float",
        message="float(mean) only works for a single number: mean and std may be (C, 1, 1) tensors.",
        code=_EF_HEAD
        + (
            "    mean, std = float(mean), float(std)\n"
            "    was = backbone.training\n"
            "    backbone.eval()\n"
            "    with torch.no_grad():\n"
            "        out = [backbone((x[i:i + batch_size] - mean) / std)\n"
            "               for i in range(0, len(x), batch_size)]\n"
            "    backbone.train(was)\n"
            "    return torch.cat(out)\n"
        ),
    ),
    Mistake(
        name="chunk-not-split",
        message="torch.chunk(x, batch_size) makes batch_size chunks, not chunks of batch_size images.",
        code=_EF_HEAD
        + (
            "    was = backbone.training\n"
            "    backbone.eval()\n"
            "    with torch.no_grad():\n"
            "        out = [backbone((part - mean) / std) for part in torch.chunk(x, batch_size)]\n"
            "    backbone.train(was)\n"
            "    return torch.cat(out)\n"
        ),
    ),
    Mistake(
        name="returns-on-cpu",
        message="Return the features on x's device: .cpu() moves them off the GPU.",
        code=_EF_HEAD
        + (
            "    was = backbone.training\n"
            "    backbone.eval()\n"
            "    with torch.no_grad():\n"
            "        out = [backbone((x[i:i + batch_size] - mean) / std).cpu()\n"
            "               for i in range(0, len(x), batch_size)]\n"
            "    backbone.train(was)\n"
            "    return torch.cat(out)\n"
        ),
    ),
    Mistake(
        name="evals-only-batchnorm",
        message="Only batch norm in eval mode leaves dropout on: call backbone.eval().",
        code="from torch import nn\n"
        + _EF_HEAD
        + (
            "    bns = [m for m in backbone.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]\n"
            "    modes = [m.training for m in bns]\n"
            "    for m in bns:\n"
            "        m.eval()\n"
            "    with torch.no_grad():\n"
            "        out = [backbone((x[i:i + batch_size] - mean) / std)\n"
            "               for i in range(0, len(x), batch_size)]\n"
            "    for m, mode in zip(bns, modes):\n"
            "        m.train(mode)\n"
            "    return torch.cat(out)\n"
        ),
    ),
]

MISTAKES["fine_tune"] += [
    Mistake(
        name="one-step-short",
        message="range(1, num_epochs) runs num_epochs - 1 steps: train for exactly num_epochs.",
        code=_FT_HEAD
        + (
            "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    model.train()\n"
            "    for epoch in range(1, num_epochs):\n"
            "        loss = F.cross_entropy(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return model.eval()\n"
        ),
    ),
    Mistake(
        name="mini-batches",
        message="Each step is one forward of all of x (full batch), not mini-batches of 16.",
        code=_FT_HEAD
        + (
            "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    model.train()\n"
            "    for _ in range(num_epochs):\n"
            "        for i in range(0, len(x), 16):\n"
            "            loss = F.cross_entropy(model(x[i:i + 16]), y[i:i + 16])\n"
            "            optimizer.zero_grad()\n"
            "            loss.backward()\n"
            "            optimizer.step()\n"
            "    return model.eval()\n"
        ),
    ),
    Mistake(
        name="batchnorm-kept-in-eval",
        message="Every layer trains in train() mode: batch norm kept in eval mode is not fine-tuning.",
        code=_FT_HEAD
        + (
            "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    model.train()\n"
            "    for m in model.modules():\n"
            "        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):\n"
            "            m.eval()  # keep the pretrained statistics\n"
            + _LOOP
            + "    return model.eval()\n"
        ),
    ),
    Mistake(
        name="swapped-learning-rates",
        message="make_optimizer(model, backbone_lr, head_lr): the backbone's rate first.",
        code=_FT_HEAD
        + (
            "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
            "    optimizer = make_optimizer(model, head_lr, backbone_lr)\n"
            "    model.train()\n" + _LOOP + "    return model.eval()\n"
        ),
    ),
    Mistake(
        name="head-replaced-before-copy",
        message="replace_head(pretrained, ...) changes the caller's model: copy it first.",
        code=_FT_HEAD
        + (
            "    model = copy.deepcopy(replace_head(pretrained, num_classes))\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    model.train()\n" + _LOOP + "    return model.eval()\n"
        ),
    ),
    Mistake(
        name="logs-in-eval-never-back",
        message="After a logging forward in eval mode, go back to model.train() before the next step.",
        code=_FT_HEAD
        + (
            "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    model.train()\n"
            "    losses = []\n"
            "    for _ in range(num_epochs):\n"
            "        loss = F.cross_entropy(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        model.eval()\n"
            "        with torch.no_grad():\n"
            "            losses.append(F.cross_entropy(model(x), y).item())\n"
            "    return model\n"
        ),
    ),
    Mistake(
        name="head-on-default-device",
        message="The new head must be on the model's device (Exercise 1): nn.Linear alone is on the CPU.",
        code=_FT_HEAD
        + (
            "    model = copy.deepcopy(pretrained)\n"
            "    model.head = torch.nn.Linear(model.head.in_features, num_classes)\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    model.train()\n" + _LOOP + "    return model.eval()\n"
        ),
    ),
]

MISTAKES["LoRALinear"] += [
    Mistake(
        name="integer-division-scaling",
        message="alpha // r rounds the scaling down: it is alpha / r.",
        code=_LORA_HEAD
        + _LORA_INIT.replace("self.scaling = alpha / r", "self.scaling = alpha // r")
        + _LORA_FORWARD,
    ),
    Mistake(
        name="copies-base",
        message="Keep the given layer itself as self.base (and freeze it), not a copy.",
        code="import copy\n"
        + _LORA_HEAD
        + _LORA_INIT.replace(
            "self.base = base.requires_grad_(False)",
            "self.base = copy.deepcopy(base).requires_grad_(False)",
        )
        + _LORA_FORWARD,
    ),
    Mistake(
        name="freezes-weight-and-bias-by-name",
        message="A base without bias has bias None: freeze with base.requires_grad_(False).",
        code=_LORA_HEAD
        + _LORA_INIT.replace(
            "self.base = base.requires_grad_(False)",
            "self.base = base\n"
            "        base.weight.requires_grad = False\n"
            "        base.bias.requires_grad = False",
        )
        + _LORA_FORWARD,
    ),
    Mistake(
        name="base-under-no-grad",
        message="The base is frozen, but the gradient with respect to x still flows through it: "
        "do not run it under torch.no_grad().",
        code=_LORA_HEAD
        + _LORA_INIT
        + (
            "    def forward(self, x):\n"
            "        with torch.no_grad():\n"
            "            out = self.base(x)\n"
            "        return out + (x @ self.lora_A.T) @ self.lora_B.T * self.scaling\n"
        ),
    ),
    Mistake(
        name="parameter-then-to",
        message="nn.Parameter(...).to(dtype) returns a plain tensor when it converts: create the "
        "tensor on the right device and dtype, then wrap it.",
        code=_LORA_HEAD
        + (
            "        self.base = base.requires_grad_(False)\n"
            "        self.lora_A = nn.Parameter(torch.empty(r, base.in_features)).to(base.weight)\n"
            "        with torch.no_grad():\n"
            "            nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r)).to(base.weight)\n"
            "        self.scaling = alpha / r\n"
        )
        + _LORA_FORWARD,
    ),
    Mistake(
        name="lora-dropout",
        message="The forward is base(x) + scaling * (x @ A.T) @ B.T: no dropout on the adapter's path.",
        code=_LORA_HEAD
        + _LORA_INIT
        + "        self.dropout = nn.Dropout(0.1)\n"
        + (
            "    def forward(self, x):\n"
            "        return self.base(x) + (self.dropout(x) @ self.lora_A.T) @ self.lora_B.T * self.scaling\n"
        ),
    ),
]

MISTAKES["merge_lora"] += [
    Mistake(
        name="shares-bias",
        message="The merged layer's bias is a copy of the base's, not the same tensor.",
        code=_MERGE_HEAD
        + (
            "    base = layer.base\n"
            "    merged = nn.Linear(base.in_features, base.out_features, bias=False,\n"
            "                       device=base.weight.device, dtype=base.weight.dtype)\n"
            "    with torch.no_grad():\n"
            "        merged.weight.copy_(base.weight + layer.scaling * layer.lora_B @ layer.lora_A)\n"
            "    merged.bias = base.bias\n"
            "    return merged\n"
        ),
    ),
    Mistake(
        name="no-device",
        message="Create the merged layer on the base's device too, not only its dtype.",
        code=_MERGE_HEAD
        + (
            "    base = layer.base\n"
            "    merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None,\n"
            "                       dtype=base.weight.dtype)\n"
            "    with torch.no_grad():\n"
            "        merged.weight.copy_(base.weight + layer.scaling * layer.lora_B @ layer.lora_A)\n"
            "        if base.bias is not None:\n"
            "            merged.bias.copy_(base.bias)\n"
            "    return merged\n"
        ),
    ),
    Mistake(
        name="zeroes-adapter-after-merge",
        message="Leave the adapter unchanged: zeroing lora_B after the merge changes the layer.",
        code=_MERGE_HEAD
        + (
            "    merged = copy.deepcopy(layer.base)\n"
            "    with torch.no_grad():\n"
            "        merged.weight += layer.scaling * layer.lora_B @ layer.lora_A\n"
            "        layer.lora_B.zero_()  # so that a second merge adds nothing\n"
            "    return merged\n"
        ),
    ),
]

MISTAKES["extract_features"] += [
    Mistake(
        name="grad-mode-left-off",
        message="torch.set_grad_enabled(False) without restoring it switches autograd off for the "
        "caller: use a with torch.no_grad() block.",
        code=_EF_HEAD
        + (
            "    torch.set_grad_enabled(False)\n"
            "    was = backbone.training\n"
            "    backbone.eval()\n"
            "    out = [backbone((x[i:i + batch_size] - mean) / std)\n"
            "           for i in range(0, len(x), batch_size)]\n"
            "    backbone.train(was)\n"
            "    return torch.cat(out)\n"
        ),
    ),
]

MISTAKES["fine_tune"] += [
    Mistake(
        name="optimizer-before-new-head",
        message="An optimizer built before replace_head holds the old head's parameters: the new "
        "head never trains. Replace the head first.",
        code=_FT_HEAD
        + (
            "    model = copy.deepcopy(pretrained)\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    replace_head(model, num_classes)\n"
            "    model.train()\n" + _LOOP + "    return model.eval()\n"
        ),
    ),
]

# Device red team (issue #27): tensors left on the CPU.
MISTAKES["extract_features"] += [
    Mistake(
        name="stats-reshaped-on-cpu",
        message="torch.tensor(mean).reshape(-1, 1, 1) is a (1, 1, 1) CPU tensor, not a scalar: on a GPU subtracting it from x mixes devices. Use the float as it is, or torch.as_tensor(mean, device=x.device).",
        code=(
            "import torch\n"
            "def extract_features(backbone, x, mean, std, batch_size=128):\n"
            "    mode = backbone.training\n"
            "    backbone.eval()\n"
            "    if not torch.is_tensor(mean):  # one float per channel\n"
            "        mean = torch.tensor(mean, dtype=x.dtype).reshape(-1, 1, 1)\n"
            "        std = torch.tensor(std, dtype=x.dtype).reshape(-1, 1, 1)\n"
            "    out = []\n"
            "    with torch.no_grad():\n"
            "        for i in range(0, len(x), batch_size):\n"
            "            out.append(backbone((x[i:i + batch_size] - mean) / std))\n"
            "    backbone.train(mode)\n"
            "    return torch.cat(out)\n"
        ),
    ),
    Mistake(
        name="preallocated-on-cpu",
        message="torch.empty(...) without device= collects the features on the CPU: with the backbone on a GPU, the result comes back on another device than x. Make it with device=x.device, or torch.cat the batches.",
        code=(
            "import torch\n"
            "def extract_features(backbone, x, mean, std, batch_size=128):\n"
            "    mode = backbone.training\n"
            "    backbone.eval()\n"
            "    out = None\n"
            "    with torch.no_grad():\n"
            "        for i in range(0, len(x), batch_size):\n"
            "            f = backbone((x[i:i + batch_size] - mean) / std)\n"
            "            if out is None:\n"
            "                out = torch.empty(len(x), f.shape[1], dtype=f.dtype)\n"
            "            out[i:i + len(f)] = f\n"
            "    backbone.train(mode)\n"
            "    return out\n"
        ),
    ),
]
MISTAKES["fine_tune"] += [
    Mistake(
        name="head-moved-only-on-cuda",
        message="The new head is moved only when x.is_cuda, and then with .cuda() (the current GPU): on any other device (mps, xpu, a second GPU) it is not where x is and the forward mixes devices. Make it with device=old.weight.device.",
        code=(
            "import copy\n"
            "import torch\n"
            "import torch.nn.functional as F\n"
            "from torch import nn\n"
            "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
            "    model = copy.deepcopy(pretrained)\n"
            "    model.head = nn.Linear(model.head.in_features, num_classes)\n"
            "    if x.is_cuda:\n"
            "        model.head = model.head.cuda()\n"
            "    head = set(model.head.parameters())\n"
            "    optimizer = torch.optim.AdamW([\n"
            "        {'params': [p for p in model.parameters() if p.requires_grad and p not in head], 'lr': backbone_lr},\n"
            "        {'params': list(head), 'lr': head_lr}])\n"
            "    model.train()\n"
            "    for _ in range(num_epochs):\n"
            "        loss = F.cross_entropy(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return model.eval()\n"
        ),
    ),
    Mistake(
        name="class-weights-on-cpu",
        message="torch.ones(num_classes) without device= lands on the CPU: on a GPU cross_entropy refuses class weights on another device (and equal weights change nothing: leave them out).",
        code=(
            "import copy\n"
            "import torch\n"
            "import torch.nn.functional as F\n"
            "from torch import nn\n"
            "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
            "    model = copy.deepcopy(pretrained)\n"
            "    old = model.head\n"
            "    model.head = nn.Linear(old.in_features, num_classes, device=old.weight.device, dtype=old.weight.dtype)\n"
            "    head = set(model.head.parameters())\n"
            "    optimizer = torch.optim.AdamW([\n"
            "        {'params': [p for p in model.parameters() if p.requires_grad and p not in head], 'lr': backbone_lr},\n"
            "        {'params': list(head), 'lr': head_lr}])\n"
            "    weight = torch.ones(num_classes)  # every class counts the same\n"
            "    model.train()\n"
            "    for _ in range(num_epochs):\n"
            "        loss = F.cross_entropy(model(x), y, weight=weight)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return model.eval()\n"
        ),
    ),
]
MISTAKES["LoRALinear"] += [
    Mistake(
        name="b-made-on-cpu-dtype-only",
        message="torch.zeros(...).to(dtype) keeps B on the CPU: with the base on a GPU, the forward mixes devices. Create it with device=base.weight.device, dtype=base.weight.dtype.",
        code=(
            "import math\n"
            "import torch\n"
            "from torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, device=w.device, dtype=w.dtype))\n"
            "        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r).to(w.dtype))\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        return self.base(x) + self.scaling * (x @ self.lora_A.T) @ self.lora_B.T\n"
        ),
    ),
    Mistake(
        name="empty-input-shortcut",
        message="The shortcut for an empty x makes its zeros without device=: on a GPU an empty batch comes back on the CPU. Let the forward handle it (or use x.new_zeros).",
        code=(
            "import math\n"
            "import torch\n"
            "from torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, device=w.device, dtype=w.dtype))\n"
            "        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, device=w.device, dtype=w.dtype))\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        if x.numel() == 0:  # nothing to compute\n"
            "            return torch.zeros(*x.shape[:-1], self.base.out_features, dtype=x.dtype)\n"
            "        return self.base(x) + self.scaling * (x @ self.lora_A.T) @ self.lora_B.T\n"
        ),
    ),
]
MISTAKES["replace_head"] += [
    Mistake(
        name="keeps-old-frozen-flag",
        message="The new head copied the old head's requires_grad: after a model frozen whole (or a linear probe), the fresh head is frozen too and nothing can learn. A new nn.Linear is trainable as it comes: leave it so.",
        code=(
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    old = getattr(model, head_attr)\n"
            "    new = nn.Linear(old.in_features, num_classes, device=old.weight.device, dtype=old.weight.dtype)\n"
            "    new.requires_grad_(old.weight.requires_grad)  # 'keep the model as it was'\n"
            "    setattr(model, head_attr, new)\n"
            "    return model\n"
        ),
    ),
]
MISTAKES["merge_lora"] += [
    Mistake(
        name="reseeds-while-merging",
        message=(
            "merge_lora calls torch.manual_seed: merging needs no random numbers, and a reseed "
            "changes every later random number of the caller. Leave seeding to the caller."
        ),
        code=(
            "import copy\nimport torch\n"
            "def merge_lora(layer):\n"
            "    torch.manual_seed(0)  # 'for reproducibility'\n"
            "    merged = copy.deepcopy(layer.base)\n"
            "    with torch.no_grad():\n"
            "        merged.weight += layer.scaling * layer.lora_B @ layer.lora_A\n"
            "    return merged\n"
        ),
    ),
    Mistake(
        name="weight-as-plain-tensor",
        message=(
            "The merged weight was attached as a plain tensor, not as the layer's parameter: it "
            "is missing from parameters() and state_dict(), so saving or loading the layer loses "
            "it. Copy the values into merged.weight under torch.no_grad()."
        ),
        code=(
            "from torch import nn\n"
            "def merge_lora(layer):\n"
            "    base = layer.base\n"
            "    merged = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None,\n"
            "                       device=base.weight.device, dtype=base.weight.dtype)\n"
            "    del merged.weight  # make room for the merged tensor\n"
            "    merged.weight = (base.weight + layer.scaling * layer.lora_B @ layer.lora_A).detach()\n"
            "    if base.bias is not None:\n"
            "        merged.bias.data.copy_(base.bias)\n"
            "    return merged\n"
        ),
    ),
]
MISTAKES["make_optimizer"] += [
    Mistake(
        name="reseeds-while-building",
        message=(
            "make_optimizer calls torch.manual_seed: building an optimizer needs no random "
            "numbers, and a reseed changes every later random number of the caller."
        ),
        code=(
            "import torch\n"
            "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
            "    torch.manual_seed(0)\n"
            "    head = getattr(model, head_attr)\n"
            "    ids = {id(p) for p in head.parameters()}\n"
            "    body = [p for p in model.parameters() if p.requires_grad and id(p) not in ids]\n"
            "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
            "    groups.append({'params': [p for p in head.parameters() if p.requires_grad], 'lr': head_lr})\n"
            "    return torch.optim.AdamW(groups)\n"
        ),
    ),
]
MISTAKES["LoRALinear"] += [
    Mistake(
        name="forward-builds-BA",
        message=(
            "The forward builds lora_B @ lora_A, a matrix as large as the base's weight, at "
            "every call: go through the r numbers first, scaling * (x @ lora_A.T) @ lora_B.T."
        ),
        code=(
            "import math\nimport torch\nfrom torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, device=w.device, dtype=w.dtype))\n"
            "        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, device=w.device, dtype=w.dtype))\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        return self.base(x) + x @ (self.scaling * self.lora_B @ self.lora_A).T\n"
        ),
    ),
    Mistake(
        name="forward-through-merged-weight",
        message=(
            "The forward merges the adapter into a full weight, base.weight + scaling * B @ A, at "
            "every call: that builds an (out, in) matrix each time. Keep merging for deployment "
            "and go through the r numbers in the forward: base(x) + scaling * (x @ lora_A.T) @ "
            "lora_B.T."
        ),
        code=(
            "import math\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, device=w.device, dtype=w.dtype))\n"
            "        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, device=w.device, dtype=w.dtype))\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        weight = self.base.weight + self.scaling * self.lora_B @ self.lora_A\n"
            "        return F.linear(x, weight, self.base.bias)\n"
        ),
    ),
]

# Sixth red-team round: inputs of one kind (a half-precision head, float64 statistics, a
# parameter shared by two modules, a bias-free base) and the caller's random stream.
MISTAKES["replace_head"] += [
    Mistake(
        name="float64-only-dtype-branch",
        message=(
            "Only float64 is carried over: a head kept in float16 or bfloat16 gets a float32 "
            "replacement. Create the new head with dtype=old.weight.dtype, whatever it is."
        ),
        code=(
            "from torch import nn\nimport torch\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    old = getattr(model, head_attr)\n"
            "    new = nn.Linear(old.in_features, num_classes).to(old.weight.device)\n"
            "    if old.weight.dtype == torch.float64:\n"
            "        new = new.double()\n"
            "    setattr(model, head_attr, new)\n"
            "    return model\n"
        ),
    ),
    Mistake(
        name="default-dtype-left-switched",
        message=(
            "torch.set_default_dtype(old.weight.dtype) stays switched for the caller after a "
            "float64 head: every later tensor and layer they make is float64. Pass dtype= to "
            "nn.Linear instead of switching the default."
        ),
        code=(
            "import torch\nfrom torch import nn\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    old = getattr(model, head_attr)\n"
            "    if old.weight.dtype in (torch.float32, torch.float64):\n"
            "        torch.set_default_dtype(old.weight.dtype)\n"
            "    new = nn.Linear(old.in_features, num_classes, device=old.weight.device, dtype=old.weight.dtype)\n"
            "    setattr(model, head_attr, new)\n"
            "    return model\n"
        ),
    ),
]
MISTAKES["make_optimizer"] += [
    Mistake(
        name="modules-loop-lists-shared-weight-twice",
        message=(
            "Collecting each module's own parameters lists a parameter shared by two modules "
            "twice (AdamW then updates it twice per step). Take model.parameters(), which gives "
            "each parameter once, minus the head's (by id)."
        ),
        code=(
            "import torch\n"
            "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
            "    head = getattr(model, head_attr)\n"
            "    inside = set(head.modules())\n"
            "    ids = {id(p) for p in head.parameters()}\n"
            "    body = [p for m in model.modules() if m not in inside\n"
            "            for p in m.parameters(recurse=False) if p.requires_grad and id(p) not in ids]\n"
            "    groups = [{'params': body, 'lr': backbone_lr}] if body else []\n"
            "    groups.append({'params': [p for p in head.parameters() if p.requires_grad], 'lr': head_lr})\n"
            "    return torch.optim.AdamW(groups)\n"
        ),
    ),
]
MISTAKES["LoRALinear"] += [
    Mistake(
        name="a-from-own-seeded-generator",
        message=(
            "lora_A comes from a generator of its own, seeded inside: every layer gets the same A "
            "whatever the caller's seed. Draw it from the global generator "
            "(nn.init.kaiming_uniform_ on the new tensor)."
        ),
        code=(
            _LORA_HEAD + "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        g = torch.Generator().manual_seed(0)\n"
            "        bound = 1 / math.sqrt(base.in_features)\n"
            "        A = torch.empty(r, base.in_features).uniform_(-bound, bound, generator=g)\n"
            "        self.lora_A = nn.Parameter(A.to(w.device, w.dtype))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, device=w.device, dtype=w.dtype))\n"
            "        self.scaling = alpha / r\n" + _LORA_FORWARD
        ),
    ),
    Mistake(
        name="a-one-row-repeated",
        message=(
            "lora_A is one random row repeated r times: B's columns then get the same gradient "
            "and the adapter stays rank 1 whatever r is. Draw every entry of A at random."
        ),
        code=(
            _LORA_HEAD + "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        row = torch.randn(1, base.in_features, device=w.device, dtype=w.dtype)\n"
            "        self.lora_A = nn.Parameter(row.repeat(r, 1) / math.sqrt(base.in_features))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, device=w.device, dtype=w.dtype))\n"
            "        self.scaling = alpha / r\n" + _LORA_FORWARD
        ),
    ),
]
MISTAKES["merge_lora"] += [
    Mistake(
        name="zero-bias-where-base-has-none",
        message=(
            "The merged layer always has a bias (zero when the base has none): it no longer "
            "matches the layer it replaces (a state_dict key more, a bias an optimizer trains). "
            "Use nn.Linear(..., bias=base.bias is not None)."
        ),
        code=(
            _MERGE_HEAD + "    base = layer.base\n"
            "    w = base.weight\n"
            "    m = nn.Linear(base.in_features, base.out_features, device=w.device, dtype=w.dtype)\n"
            "    with torch.no_grad():\n"
            "        m.weight.copy_(w + layer.scaling * layer.lora_B @ layer.lora_A)\n"
            "        if base.bias is not None:\n"
            "            m.bias.copy_(base.bias)\n"
            "        else:\n"
            "            m.bias.zero_()\n"
            "    return m\n"
        ),
    ),
]
