"""Right answers for 09_transfer's exercises, unlike the solution (see autograder/right_answers)."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "replace_head": [
        RightAnswer(
            name="to-old-weight-keeps-bias-setting",
            why=(
                "Builds the layer then moves it with .to(old.weight) (device and dtype of that "
                "tensor), keeps a bias-free head bias-free, and registers it with add_module: the "
                "text asks for an nn.Linear with in_features inputs on the old head's device and "
                "dtype, which this is."
            ),
            code=(
                "from torch import nn\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = getattr(model, head_attr)\n"
                "    new = nn.Linear(old.weight.shape[1], num_classes, bias=old.bias is not None)\n"
                "    model.add_module(head_attr, new.to(old.weight))\n"
                "    return model\n"
            ),
        ),
        RightAnswer(
            name="to-device-and-dtype-keywords",
            why="Module.to(device=..., dtype=...) after building on the CPU: same result.",
            code=(
                "import torch\n"
                "def replace_head(model, num_classes, head_attr='head'):\n"
                "    old = getattr(model, head_attr)\n"
                "    new = torch.nn.Linear(old.in_features, num_classes)\n"
                "    setattr(model, head_attr, new.to(device=old.weight.device, dtype=old.weight.dtype))\n"
                "    return model\n"
            ),
        ),
    ],
    "freeze_backbone": [
        RightAnswer(
            name="top-level-name-match",
            why=(
                "Compares the first part of each parameter's name with head_attr: exactly the "
                "parameters of getattr(model, head_attr) (root parameters have no dot)."
            ),
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    for name, p in model.named_parameters():\n"
                "        p.requires_grad_(name.split('.')[0] == head_attr)\n"
                "    return model\n"
            ),
        ),
        RightAnswer(
            name="identity-set",
            why="Decides per parameter by identity with the head's parameters, one pass, setting the flag.",
            code=(
                "def freeze_backbone(model, head_attr='head'):\n"
                "    head = {id(p) for p in getattr(model, head_attr).parameters()}\n"
                "    for p in model.parameters():\n"
                "        p.requires_grad = id(p) in head\n"
                "    return model\n"
            ),
        ),
    ],
    "make_optimizer": [
        RightAnswer(
            name="prefix-with-dot-and-extra-keys",
            why=(
                "Splits named_parameters by the prefix head_attr + '.', names its groups (extra "
                "keys are allowed in a param group) and passes a default lr and weight_decay that "
                "the groups override or that the text leaves open."
            ),
            code=(
                "import torch\n"
                "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
                "    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]\n"
                "    head = [p for n, p in trainable if n.startswith(head_attr + '.')]\n"
                "    body = [p for n, p in trainable if not n.startswith(head_attr + '.')]\n"
                "    groups = []\n"
                "    if body:\n"
                "        groups.append({'params': body, 'lr': backbone_lr, 'name': 'backbone'})\n"
                "    groups.append({'params': head, 'lr': head_lr, 'name': 'head'})\n"
                "    return torch.optim.AdamW(groups, lr=head_lr, weight_decay=0.01)\n"
            ),
        ),
    ],
    "extract_features": [
        RightAnswer(
            name="inference-mode-split",
            why=(
                "torch.inference_mode() instead of no_grad, torch.split for the batches, and the "
                "mode restored in a finally block: the same features, no graph."
            ),
            code=(
                "import torch\n"
                "def extract_features(backbone, x, mean, std, batch_size=128):\n"
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
        RightAnswer(
            name="normalise-once-then-batch",
            why="Normalises all of x once (out of place) and then batches: the same numbers.",
            code=(
                "import torch\n"
                "@torch.no_grad()\n"
                "def extract_features(backbone, x, mean, std, batch_size=128):\n"
                "    mode = backbone.training\n"
                "    backbone.train(False)\n"
                "    z = (x - mean) / std\n"
                "    out = [backbone(z[i:i + batch_size]) for i in range(0, z.shape[0], batch_size)]\n"
                "    backbone.train(mode)\n"
                "    return torch.cat(out, dim=0)\n"
            ),
        ),
    ],
    "fine_tune": [
        RightAnswer(
            name="groups-by-hand-with-eval-logging",
            why=(
                "Builds the new head and the two AdamW groups inline, and measures the training "
                "loss in eval mode under no_grad after every step (then back to train): logging "
                "forwards are not training steps."
            ),
            code=(
                "import copy\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
                "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
                "    model = copy.deepcopy(pretrained)\n"
                "    old = model.head\n"
                "    model.head = nn.Linear(old.in_features, num_classes).to(old.weight.device)\n"
                "    head_ids = {id(p) for p in model.head.parameters()}\n"
                "    body = [p for p in model.parameters() if id(p) not in head_ids and p.requires_grad]\n"
                "    optimizer = torch.optim.AdamW([{'params': body, 'lr': backbone_lr},\n"
                "                                   {'params': list(model.head.parameters()), 'lr': head_lr}])\n"
                "    history = []\n"
                "    for epoch in range(num_epochs):\n"
                "        model.train()\n"
                "        optimizer.zero_grad(set_to_none=True)\n"
                "        F.cross_entropy(model(x), y).backward()\n"
                "        optimizer.step()\n"
                "        model.eval()\n"
                "        with torch.no_grad():\n"
                "            history.append(F.cross_entropy(model(x), y).item())\n"
                "    return model.eval()\n"
            ),
        ),
    ],
}

RIGHT_ANSWERS["LoRALinear"] = [
    RightAnswer(
        name="normal-init-and-f-linear",
        why=(
            "Freezes the base parameter by parameter, draws A from a normal distribution with "
            "std 1 / r, builds A and B with new_empty / new_zeros (the base weight's device and "
            "dtype), keeps alpha and r and computes the scaling in forward, and runs the low-rank "
            "path with F.linear: the text asks for none of these particular choices."
        ),
        code=(
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        for p in base.parameters():\n"
            "            p.requires_grad = False\n"
            "        self.base, self.r, self.alpha = base, r, alpha\n"
            "        w = base.weight\n"
            "        self.lora_A = nn.Parameter(w.new_empty(r, w.shape[1]).normal_(std=1 / r))\n"
            "        self.lora_B = nn.Parameter(w.new_zeros(w.shape[0], r))\n"
            "        self.scaling = float(alpha) / r\n"
            "    def forward(self, x):\n"
            "        low = F.linear(F.linear(x, self.lora_A), self.lora_B)\n"
            "        return self.base(x) + (self.alpha / self.r) * low\n"
        ),
    ),
]

RIGHT_ANSWERS["merge_lora"] = [
    RightAnswer(
        name="deepcopy-and-addmm",
        why=(
            "Copies the base (bias or not, device, dtype and its frozen flags come along) and "
            "writes torch.addmm(W, B, A, alpha=scaling) into the copy's weight: a new layer with "
            "the merged weight, the adapter untouched."
        ),
        code=(
            "import copy\nimport torch\n"
            "def merge_lora(layer):\n"
            "    merged = copy.deepcopy(layer.base)\n"
            "    with torch.no_grad():\n"
            "        merged.weight.copy_(torch.addmm(layer.base.weight, layer.lora_B, layer.lora_A,\n"
            "                                        alpha=layer.scaling))\n"
            "    return merged\n"
        ),
    ),
]

RIGHT_ANSWERS["replace_head"] += [
    RightAnswer(
        name="new-head-in-old-mode",
        why=(
            "Puts the new head in the old head's train/eval mode: the text leaves the new "
            "head's mode open (an nn.Linear computes the same in both)."
        ),
        code=(
            "from torch import nn\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    old = getattr(model, head_attr)\n"
            "    new = nn.Linear(old.in_features, num_classes, device=old.weight.device,\n"
            "                    dtype=old.weight.dtype)\n"
            "    setattr(model, head_attr, new.train(old.training))\n"
            "    return model\n"
        ),
    ),
]

RIGHT_ANSWERS["fine_tune"] += [
    RightAnswer(
        name="adamw-without-weight-decay",
        why=(
            "Exercise 3 leaves weight decay open, so an AdamW with the two groups and "
            "weight_decay=0 is the optimizer the text asks for."
        ),
        code=(
            "import copy\nimport torch\nimport torch.nn.functional as F\n"
            "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
            "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
            "    ids = {id(p) for p in model.head.parameters()}\n"
            "    body = [p for p in model.parameters() if p.requires_grad and id(p) not in ids]\n"
            "    optimizer = torch.optim.AdamW([{'params': body, 'lr': backbone_lr},\n"
            "                                   {'params': list(model.head.parameters()), 'lr': head_lr}],\n"
            "                                  weight_decay=0.0)\n"
            "    model.train()\n"
            "    for _ in range(num_epochs):\n"
            "        loss = F.cross_entropy(model(x), y)\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return model.eval()\n"
        ),
    ),
]

# Device red team (issue #27): right answers that handle devices in unusual ways a GPU accepts.
RIGHT_ANSWERS["extract_features"] += [
    RightAnswer(
        name="as-tensor-cpu-index-batches",
        why="Turns mean and std into tensors with torch.as_tensor(..., device=x.device, dtype=x.dtype) and batches x with CPU index tensors (x[idx]: a GPU accepts CPU indices): the same features on x's device.",
        code=(
            "import torch\n"
            "def extract_features(backbone, x, mean, std, batch_size=128):\n"
            "    mode = backbone.training\n"
            "    backbone.eval()\n"
            "    m = torch.as_tensor(mean, dtype=x.dtype, device=x.device)\n"
            "    s = torch.as_tensor(std, dtype=x.dtype, device=x.device)\n"
            "    parts = []\n"
            "    with torch.no_grad():\n"
            "        for idx in torch.arange(len(x)).split(batch_size):  # CPU indices into x\n"
            "            parts.append(backbone((x[idx] - m) / s))\n"
            "    backbone.train(mode)\n"
            "    return torch.cat(parts)\n"
        ),
    ),
    RightAnswer(
        name="buffer-module-to-x",
        why="Keeps mean and std as buffers of a small module moved with .to(x) (x's device and dtype), under inference_mode: the same normalisation, the mode restored in a finally block.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "class _Normalise(nn.Module):\n"
            "    def __init__(self, mean, std):\n"
            "        super().__init__()\n"
            "        self.register_buffer('mean', torch.as_tensor(mean, dtype=torch.float32))\n"
            "        self.register_buffer('std', torch.as_tensor(std, dtype=torch.float32))\n"
            "    def forward(self, x):\n"
            "        return (x - self.mean) / self.std\n"
            "def extract_features(backbone, x, mean, std, batch_size=128):\n"
            "    norm = _Normalise(mean, std).to(x)  # x's device and dtype\n"
            "    was = backbone.training\n"
            "    backbone.train(False)\n"
            "    try:\n"
            "        with torch.inference_mode():\n"
            "            feats = [backbone(norm(x[i:i + batch_size])) for i in range(0, len(x), batch_size)]\n"
            "    finally:\n"
            "        backbone.train(was)\n"
            "    return torch.cat(feats, 0)\n"
        ),
    ),
]
RIGHT_ANSWERS["fine_tune"] += [
    RightAnswer(
        name="head-to-tensor-one-hot-target",
        why="Moves the new head with .to(old.weight) (the old head's device and dtype at once) and trains on one-hot probabilities made from y on its own device: cross-entropy with one-hot targets equals it with class ids.",
        code=(
            "import copy\n"
            "import torch\n"
            "import torch.nn.functional as F\n"
            "from torch import nn\n"
            "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
            "    model = copy.deepcopy(pretrained)\n"
            "    old = model.head\n"
            "    model.head = nn.Linear(old.in_features, num_classes).to(old.weight)  # its device and dtype\n"
            "    head_ids = {id(p) for p in model.head.parameters()}\n"
            "    body = [p for p in model.parameters() if p.requires_grad and id(p) not in head_ids]\n"
            "    groups = ([{'params': body, 'lr': backbone_lr}] if body else []) + [\n"
            "        {'params': list(model.head.parameters()), 'lr': head_lr}]\n"
            "    optimizer = torch.optim.AdamW(groups)\n"
            "    target = F.one_hot(y, num_classes)\n"
            "    model.train()\n"
            "    for _ in range(num_epochs):\n"
            "        logits = model(x)\n"
            "        loss = F.cross_entropy(logits, target.to(logits.dtype))\n"
            "        optimizer.zero_grad()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return model.eval()\n"
        ),
    ),
    RightAnswer(
        name="device-context-head",
        why="Builds the new head inside `with torch.device(x.device):`, which puts every tensor made in the block on x's device; set(model.head.parameters()) tells the groups apart.",
        code=(
            "import copy\n"
            "import torch\n"
            "import torch.nn.functional as F\n"
            "from torch import nn\n"
            "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
            "    model = copy.deepcopy(pretrained)\n"
            "    with torch.device(x.device):\n"
            "        model.head = nn.Linear(model.head.in_features, num_classes)\n"
            "    head = set(model.head.parameters())\n"
            "    optimizer = torch.optim.AdamW([\n"
            "        {'params': [p for p in model.parameters() if p.requires_grad and p not in head], 'lr': backbone_lr},\n"
            "        {'params': list(head), 'lr': head_lr}])\n"
            "    model.train()\n"
            "    for _ in range(num_epochs):\n"
            "        optimizer.zero_grad()\n"
            "        F.cross_entropy(model(x), y).backward()\n"
            "        optimizer.step()\n"
            "    return model.eval()\n"
        ),
    ),
]
RIGHT_ANSWERS["LoRALinear"] += [
    RightAnswer(
        name="to-weight-and-einsum",
        why="Makes A on the CPU and moves it with .to(base.weight) (its device and dtype), B with torch.zeros_like of a column of the weight, and runs the low-rank path with einsum: the same layer.",
        code=(
            "import math\n"
            "import torch\n"
            "from torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        a = torch.empty(r, base.in_features).to(w)  # made on the CPU, then moved to w's device and dtype\n"
            "        nn.init.kaiming_uniform_(a, a=math.sqrt(5))\n"
            "        self.lora_A = nn.Parameter(a)\n"
            "        self.lora_B = nn.Parameter(torch.zeros_like(w[:, :1]).expand(-1, r).clone())\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        low = torch.einsum('...i,ri->...r', x, self.lora_A)\n"
            "        return self.base(x) + self.scaling * torch.einsum('...r,or->...o', low, self.lora_B)\n"
        ),
    ),
    RightAnswer(
        name="linear-weight-and-mT-chain",
        why="Takes A from a fresh nn.Linear(in, r) made with device= and dtype= (the same kaiming init), B from torch.zeros with device= and dtype=, and chains matmul / mul / add with .mT.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        for p in base.parameters():\n"
            "            p.requires_grad_(False)\n"
            "        self.base = base\n"
            "        w = base.weight\n"
            "        down = nn.Linear(base.in_features, r, bias=False, device=w.device, dtype=w.dtype)\n"
            "        self.lora_A = nn.Parameter(down.weight.detach())\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, device=w.device, dtype=w.dtype))\n"
            "        self.scaling = float(alpha / r)\n"
            "    def forward(self, x):\n"
            "        return x.matmul(self.lora_A.mT).matmul(self.lora_B.mT).mul(self.scaling).add(self.base(x))\n"
        ),
    ),
]
RIGHT_ANSWERS["freeze_backbone"] += [
    RightAnswer(
        name="every-module-but-the-head",
        why=(
            "Freezes the own parameters of every module but the head (the root's cls_token "
            "included, the head's inner layers too), then makes the whole head trainable."
        ),
        code=(
            "def freeze_backbone(model, head_attr='head'):\n"
            "    head = getattr(model, head_attr)\n"
            "    for module in model.modules():\n"
            "        if module is not head:\n"
            "            for p in module.parameters(recurse=False):\n"
            "                p.requires_grad_(False)\n"
            "    head.requires_grad_(True)\n"
            "    return model\n"
        ),
    ),
]
RIGHT_ANSWERS["merge_lora"] += [
    RightAnswer(
        name="load-state-dict-frozen",
        why=(
            "Builds the nn.Linear with device= and dtype=, loads the merged weight (and a clone "
            "of the bias) through load_state_dict, and returns it frozen: the text leaves "
            "requires_grad open."
        ),
        code=(
            "import torch\nfrom torch import nn\n"
            "def merge_lora(layer):\n"
            "    b = layer.base\n"
            "    new = nn.Linear(b.in_features, b.out_features, bias=b.bias is not None,\n"
            "                    device=b.weight.device, dtype=b.weight.dtype)\n"
            "    with torch.no_grad():\n"
            "        state = {'weight': b.weight + layer.scaling * (layer.lora_B @ layer.lora_A)}\n"
            "        if b.bias is not None:\n"
            "            state['bias'] = b.bias.clone()\n"
            "    new.load_state_dict(state)\n"
            "    return new.requires_grad_(False)\n"
        ),
    ),
    RightAnswer(
        name="new-parameters-from-a-graph",
        why=(
            "Assigns nn.Parameter(...) of a weight computed with autograd on: nn.Parameter makes "
            "a new leaf, so nothing of the adapter's graph or storage is kept."
        ),
        code=(
            "from torch import nn\n"
            "def merge_lora(layer):\n"
            "    b = layer.base\n"
            "    new = nn.Linear(b.in_features, b.out_features, bias=b.bias is not None,\n"
            "                    device=b.weight.device, dtype=b.weight.dtype)\n"
            "    new.weight = nn.Parameter(b.weight + layer.scaling * layer.lora_B @ layer.lora_A)\n"
            "    if b.bias is not None:\n"
            "        new.bias = nn.Parameter(b.bias.clone())\n"
            "    return new\n"
        ),
    ),
]
RIGHT_ANSWERS["make_optimizer"] += [
    RightAnswer(
        name="head-lr-as-default",
        why=(
            "Leaves lr out of the head group and passes head_lr as the optimizer's default: the "
            "group then has lr=head_lr, as asked."
        ),
        code=(
            "import torch\n"
            "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
            "    head = getattr(model, head_attr)\n"
            "    ids = set(map(id, head.parameters()))\n"
            "    body = [p for p in model.parameters() if id(p) not in ids and p.requires_grad]\n"
            "    groups = [dict(params=body, lr=backbone_lr)] if len(body) > 0 else []\n"
            "    groups.append(dict(params=[p for p in head.parameters() if p.requires_grad]))\n"
            "    return torch.optim.AdamW(groups, lr=head_lr, weight_decay=0.0)\n"
        ),
    ),
]
RIGHT_ANSWERS["LoRALinear"] += [
    RightAnswer(
        name="einsum-and-scaled-input",
        why=(
            "Freezes the base parameter by parameter, draws A with randn scaled by 1/sqrt(in) "
            "(the text asks for random, kaiming only as an example), and computes the update "
            "with einsum on the scaled input: einsum contracts x with A first, so no (out, in) "
            "matrix is made."
        ),
        code=(
            "import math\nimport torch\nfrom torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        for p in base.parameters():\n"
            "            p.requires_grad = False\n"
            "        self.base = base\n"
            "        w = base.weight\n"
            "        a = torch.randn(r, base.in_features, device=w.device, dtype=w.dtype)\n"
            "        self.register_parameter('lora_A', nn.Parameter(a / math.sqrt(base.in_features)))\n"
            "        self.register_parameter('lora_B', nn.Parameter(w.new_zeros(base.out_features, r)))\n"
            "        self.scaling = float(alpha) / r\n"
            "    def forward(self, x):\n"
            "        return self.base(x) + torch.einsum('...i,ri,or->...o', self.scaling * x,\n"
            "                                           self.lora_A, self.lora_B)\n"
        ),
    ),
]
RIGHT_ANSWERS["replace_head"] += [
    RightAnswer(
        name="get-submodule-and-weight-shape",
        why=(
            "Finds the head with get_submodule, reads in_features from weight.shape[1] and "
            "registers the new layer with add_module: the same fresh nn.Linear on the old "
            "head's device and dtype."
        ),
        code=(
            "from torch import nn\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    old = model.get_submodule(head_attr)\n"
            "    w = old.weight\n"
            "    model.add_module(head_attr, nn.Linear(w.shape[1], num_classes, bias=old.bias is not None,\n"
            "                                          device=w.device, dtype=w.dtype))\n"
            "    return model\n"
        ),
    ),
]
RIGHT_ANSWERS["fine_tune"] += [
    RightAnswer(
        name="unfrozen-copy-with-eval-logging",
        why=(
            "Makes every parameter of the copy trainable (the text: every layer trains), puts "
            "the model in train mode at the start of each epoch and logs the loss in eval mode "
            "under no_grad after each step: extra forwards for logging are allowed."
        ),
        code=(
            "import copy\nimport torch\nimport torch.nn.functional as F\n"
            "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
            "    model = replace_head(copy.deepcopy(pretrained), num_classes)\n"
            "    model.requires_grad_(True)\n"
            "    optimizer = make_optimizer(model, backbone_lr, head_lr)\n"
            "    losses = []\n"
            "    for _ in range(num_epochs):\n"
            "        model.train()\n"
            "        loss = F.cross_entropy(model(x), y)\n"
            "        optimizer.zero_grad(set_to_none=False)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        model.eval()\n"
            "        with torch.no_grad():\n"
            "            losses.append(F.cross_entropy(model(x), y).item())\n"
            "    return model.eval()\n"
        ),
    ),
]

# Sixth red-team round: other styles, written from the texts alone.
RIGHT_ANSWERS["replace_head"] += [
    RightAnswer(
        name="modules-dict-and-weight-shape",
        why=(
            "Reads and replaces the head through model._modules (what setattr does for a "
            "module), in_features from the weight's shape, device and dtype from the weight."
        ),
        code=(
            "import torch\n"
            "def replace_head(model, num_classes, head_attr='head'):\n"
            "    w = model._modules[head_attr].weight\n"
            "    model._modules[head_attr] = torch.nn.Linear(w.shape[1], num_classes, device=w.device, dtype=w.dtype)\n"
            "    return model\n"
        ),
    ),
]
RIGHT_ANSWERS["freeze_backbone"] += [
    RightAnswer(
        name="per-module-own-parameters",
        why=(
            "Visits every module's own parameters once and sets the flag by whether the module is "
            "inside the head (the root's cls_token included): the text's split, by module."
        ),
        code=(
            "def freeze_backbone(model, head_attr='head'):\n"
            "    inside = set(getattr(model, head_attr).modules())\n"
            "    for module in model.modules():\n"
            "        for p in module.parameters(recurse=False):\n"
            "            p.requires_grad = module in inside\n"
            "    return model\n"
        ),
    ),
]
RIGHT_ANSWERS["make_optimizer"] += [
    RightAnswer(
        name="filter-and-default-lr",
        why=(
            "filter() over model.parameters() minus the head's ids, the head group first built "
            "alone and replaced when a backbone group exists: the same two groups in order."
        ),
        code=(
            "import torch\n"
            "def make_optimizer(model, backbone_lr, head_lr, head_attr='head'):\n"
            "    head_module = getattr(model, head_attr)\n"
            "    head = [p for p in head_module.parameters() if p.requires_grad]\n"
            "    ids = set(map(id, head_module.parameters()))\n"
            "    body = list(filter(lambda p: p.requires_grad and id(p) not in ids, model.parameters()))\n"
            "    if not body:\n"
            "        return torch.optim.AdamW([{'params': head, 'lr': head_lr}])\n"
            "    return torch.optim.AdamW([{'params': body, 'lr': backbone_lr},\n"
            "                              {'params': head}], lr=head_lr)\n"
        ),
    ),
]
RIGHT_ANSWERS["extract_features"] += [
    RightAnswer(
        name="preallocated-output-finally",
        why=(
            "Allocates the (N, F) result once the first batch gives F (on the features' device "
            "and dtype) and writes each batch into it; the mode comes back in a finally block."
        ),
        code=(
            "import torch\n"
            "def extract_features(backbone, x, mean, std, batch_size=128):\n"
            "    was = backbone.training\n"
            "    backbone.eval()\n"
            "    out = None\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            for i in range(0, x.shape[0], batch_size):\n"
            "                f = backbone((x[i:i + batch_size] - mean) / std)\n"
            "                if out is None:\n"
            "                    out = torch.empty((x.shape[0], *f.shape[1:]), dtype=f.dtype, device=f.device)\n"
            "                out[i:i + f.shape[0]] = f\n"
            "    finally:\n"
            "        backbone.train(was)\n"
            "    return out\n"
        ),
    ),
    RightAnswer(
        name="every-module-mode-restored",
        why=(
            "Notes every submodule's mode and puts each back (more than the text asks: a "
            "backbone with mixed modes comes back mixed), inference_mode, sub/div out of place, "
            "a clone so that the result is an ordinary tensor."
        ),
        code=(
            "import torch\n"
            "def extract_features(backbone, x, mean, std, batch_size=128):\n"
            "    modes = {m: m.training for m in backbone.modules()}\n"
            "    backbone.eval()\n"
            "    with torch.inference_mode():\n"
            "        feats = [backbone(b.sub(mean).div(std)) for b in x.split(batch_size)]\n"
            "    for m, training in modes.items():\n"
            "        m.training = training\n"
            "    return torch.cat(feats).clone()\n"
        ),
    ),
]
RIGHT_ANSWERS["fine_tune"] += [
    RightAnswer(
        name="while-loop-zeroed-grads",
        why=(
            "A while loop counting num_epochs steps, gradients zeroed to zeros "
            "(set_to_none=False) before each backward, the head replaced with old.weight's "
            "device and dtype: the same training."
        ),
        code=(
            "import copy\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
            "def fine_tune(pretrained, x, y, num_classes, num_epochs=60, backbone_lr=1e-3, head_lr=1e-2):\n"
            "    model = copy.deepcopy(pretrained)\n"
            "    old = model.head\n"
            "    model.head = nn.Linear(old.in_features, num_classes).to(old.weight)\n"
            "    ids = {id(p) for p in model.head.parameters()}\n"
            "    body = [p for p in model.parameters() if id(p) not in ids]\n"
            "    opt = torch.optim.AdamW([{'params': body, 'lr': backbone_lr},\n"
            "                             {'params': list(model.head.parameters()), 'lr': head_lr}])\n"
            "    model.train()\n"
            "    step = 0\n"
            "    while step < num_epochs:\n"
            "        opt.zero_grad(set_to_none=False)\n"
            "        F.cross_entropy(model(x), y).backward()\n"
            "        opt.step()\n"
            "        step += 1\n"
            "    model.eval()\n"
            "    return model\n"
        ),
    ),
]
RIGHT_ANSWERS["LoRALinear"] += [
    RightAnswer(
        name="in-place-add-to-base-output",
        why=(
            "Adds the scaled update into base(x)'s output in place (a fresh tensor, which "
            "autograd allows: linear's backward does not need its output)."
        ),
        code=(
            "import math\nimport torch\nfrom torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        A = torch.empty(r, base.in_features, device=w.device, dtype=w.dtype)\n"
            "        self.lora_A = nn.Parameter(nn.init.kaiming_uniform_(A, a=math.sqrt(5)))\n"
            "        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, device=w.device, dtype=w.dtype))\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        out = self.base(x)\n"
            "        out += self.scaling * (x @ self.lora_A.T) @ self.lora_B.T\n"
            "        return out\n"
        ),
    ),
    RightAnswer(
        name="randn-over-r-and-f-linear-twice",
        why=(
            "A is torch.randn / r (random, from the global generator: the text's kaiming init is "
            "an example), B from new_zeros, the base frozen parameter by parameter, and the "
            "forward as two F.linear calls through the r numbers."
        ),
        code=(
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        self.base = base\n"
            "        for p in base.parameters():\n"
            "            p.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        self.lora_A = nn.Parameter(torch.randn(r, base.in_features, device=w.device, dtype=w.dtype) / r)\n"
            "        self.lora_B = nn.Parameter(w.new_zeros((base.out_features, r)))\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        return self.base(x) + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scaling\n"
        ),
    ),
]
RIGHT_ANSWERS["merge_lora"] += [
    RightAnswer(
        name="deepcopy-adapter-return-its-base",
        why=(
            "Deep-copies the whole adapter, merges into the copy's base in place and returns that "
            "base: a new nn.Linear (frozen, which the text leaves open), the adapter untouched."
        ),
        code=(
            "import copy\nimport torch\n"
            "def merge_lora(layer):\n"
            "    twin = copy.deepcopy(layer)\n"
            "    with torch.no_grad():\n"
            "        twin.base.weight += twin.scaling * twin.lora_B @ twin.lora_A\n"
            "    return twin.base\n"
        ),
    ),
    RightAnswer(
        name="addmm-into-new-layer-frozen",
        why=(
            "torch.addmm(W, B, A, alpha=scaling) copied into a new layer moved with .to(weight), "
            "returned with requires_grad off (up to the answer)."
        ),
        code=(
            "import torch\nfrom torch import nn\n"
            "def merge_lora(layer):\n"
            "    base = layer.base\n"
            "    m = nn.Linear(base.in_features, base.out_features, bias=base.bias is not None).to(base.weight)\n"
            "    with torch.no_grad():\n"
            "        m.weight.copy_(torch.addmm(base.weight, layer.lora_B, layer.lora_A, alpha=layer.scaling))\n"
            "        if base.bias is not None:\n"
            "            m.bias.copy_(base.bias)\n"
            "    return m.requires_grad_(False)\n"
        ),
    ),
]
RIGHT_ANSWERS["LoRALinear"] += [
    RightAnswer(
        name="lora-b-registered-before-lora-a",
        why=(
            "Registers lora_B before lora_A: the text names both, not their order, so the "
            "grader fills each parameter from its name (Contract fill='by name')."
        ),
        code=(
            "import math\nimport torch\nfrom torch import nn\n"
            "class LoRALinear(nn.Module):\n"
            "    def __init__(self, base, r, alpha):\n"
            "        super().__init__()\n"
            "        self.base = base.requires_grad_(False)\n"
            "        w = base.weight\n"
            "        self.lora_B = nn.Parameter(torch.zeros(w.shape[0], r, device=w.device, dtype=w.dtype))\n"
            "        a = torch.empty(r, w.shape[1], device=w.device, dtype=w.dtype)\n"
            "        nn.init.kaiming_uniform_(a, a=math.sqrt(5))\n"
            "        self.lora_A = nn.Parameter(a)\n"
            "        self.scaling = alpha / r\n"
            "    def forward(self, x):\n"
            "        return self.base(x) + self.scaling * (x @ self.lora_A.T) @ self.lora_B.T\n"
        ),
    ),
]
