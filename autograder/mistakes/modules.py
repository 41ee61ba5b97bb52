"""Plausible wrong answers for 03_modules' exercises."""

from autograder.mistakes import Mistake

_IMPORTS = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"

MISTAKES = {
    "MLP": [
        Mistake(
            name="python-list",
            message="Layers in a plain Python list are not registered: the model has no parameters. Use nn.ModuleList.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.layers = []\n"
                "        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):\n"
                "            self.layers.append(nn.Linear(a, b))\n"
                "            if i < len(sizes) - 2:\n"
                "                self.layers.append(activation())\n"
                "    def forward(self, x):\n"
                "        for layer in self.layers:\n"
                "            x = layer(x)\n"
                "        return x\n"
            ),
        ),
        Mistake(
            name="activation-after-last",
            message="The last layer's output (the logits) must not go through the activation.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        self.layers = nn.ModuleList(layers)\n"
                "    def forward(self, x):\n"
                "        for layer in self.layers:\n"
                "            x = layer(x)\n"
                "        return x\n"
            ),
        ),
        Mistake(
            name="ignores-activation",
            message="Use the activation class you are given (activation()), not a hard-coded ReLU.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))\n"
                "    def forward(self, x):\n"
                "        for layer in self.linears[:-1]:\n"
                "            x = torch.relu(layer(x))\n"
                "        return self.linears[-1](x)\n"
            ),
        ),
        Mistake(
            name="layers-created-in-forward",
            message="Layers built in forward get new random weights every call and are never trained: build them in __init__.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.sizes, self.activation = sizes, activation\n"
                "    def forward(self, x):\n"
                "        pairs = list(zip(self.sizes[:-1], self.sizes[1:]))\n"
                "        for i, (a, b) in enumerate(pairs):\n"
                "            x = nn.Linear(a, b).to(x.device, x.dtype)(x)\n"
                "            if i < len(pairs) - 1:\n"
                "                x = self.activation()(x)\n"
                "        return x\n"
            ),
        ),
        Mistake(
            name="fixed-two-layers",
            message="The depth comes from sizes: one Linear per consecutive pair, not a fixed number.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(sizes[0], sizes[1])\n"
                "        self.act = activation()\n"
                "        self.fc2 = nn.Linear(sizes[1], sizes[-1])\n"
                "    def forward(self, x):\n"
                "        return self.fc2(self.act(self.fc1(x)))\n"
            ),
        ),
        Mistake(
            name="empty-batch-zeros-on-cpu",
            message="An empty batch returns torch.zeros(0, out) made on the CPU: on a GPU the caller "
            "gets a CPU tensor. No special case is needed: the layers handle N = 0.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        self.net = nn.Sequential(*layers[:-1])\n"
                "        self.out_features = sizes[-1]\n"
                "    def forward(self, x):\n"
                "        if x.shape[0] == 0:  # no samples: no need to run the layers\n"
                "            return torch.zeros(0, self.out_features, dtype=x.dtype)\n"
                "        return self.net(x)\n"
            ),
        ),
    ],
    "ResidualBlock": [
        Mistake(
            name="parameters-created-in-forward",
            message="Layers created inside forward are re-drawn on every call and never registered or trained.",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.dim, self.hidden = dim, hidden\n"
                "    def forward(self, x):\n"
                "        fc1 = nn.Linear(self.dim, self.hidden).to(x.device)\n"
                "        fc2 = nn.Linear(self.hidden, self.dim).to(x.device)\n"
                "        return x + fc2(F.relu(fc1(x)))\n"
            ),
        ),
        Mistake(
            name="parameter-created-in-forward",
            message="An nn.Parameter made in forward is a new, unregistered tensor on every call.",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        gate = nn.Parameter(torch.randn(x.shape[-1], device=x.device))\n"
                "        return x + gate * self.fc2(F.relu(self.fc1(x)))\n"
            ),
        ),
        Mistake(
            name="no-skip",
            message="A residual block adds its input back: return x + fc2(relu(fc1(x))).",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        return self.fc2(F.relu(self.fc1(x)))\n"
            ),
        ),
        Mistake(
            name="relu-after-sum",
            message="No activation after the sum: the block must be the identity when fc2 is zero.",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        return F.relu(x + self.fc2(F.relu(self.fc1(x))))\n"
            ),
        ),
        Mistake(
            name="layers-in-list",
            message="Layers in a plain Python list are not registered (no state_dict keys, not trained).",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.layers = [nn.Linear(dim, hidden), nn.Linear(hidden, dim)]\n"
                "    def forward(self, x):\n"
                "        return x + self.layers[1](F.relu(self.layers[0](x)))\n"
            ),
        ),
        Mistake(
            name="plain-attribute-gate",
            message="self.gate = torch.ones(dim) is a plain attribute: .to(device) does not move it, "
            "and forward fails on a GPU. Leave it out, or register it as a buffer.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "        self.gate = torch.ones(dim)  # a plain attribute: .to() leaves it on the CPU\n"
                "    def forward(self, x):\n"
                "        return x + self.fc2(torch.relu(self.fc1(x))) * self.gate.to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="empty-skip-adds-cpu-zeros",
            message="For an empty x it adds torch.zeros(dim) made on the CPU: on a GPU that fails. No"
            " special case is needed: the layers handle an empty x.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        if x.numel() == 0:  # nothing to transform: the skip alone\n"
                "            return x + torch.zeros(x.shape[-1], dtype=x.dtype)\n"
                "        return x + self.fc2(torch.relu(self.fc1(x)))\n"
            ),
        ),
        Mistake(
            name="reseeds-in-forward",
            message="torch.manual_seed inside a function resets the caller's random numbers: every dropout mask, shuffle and initialisation after the call repeats the same draws. Seed once at the top of a script (or pass a torch.Generator) and leave the global generator alone.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "import torch.nn.functional as F\n"
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.act = nn.ReLU(inplace=True)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        torch.manual_seed(0)\n"
                "        residual = self.fc2(self.act(self.fc1(x)))\n"
                "        return x + residual\n"
            ),
        ),
    ],
    "count_trainable_parameters": [
        Mistake(
            name="counts-tensors",
            message="len(list(model.parameters())) counts tensors; sum p.numel() to count elements.",
            code=(
                "def count_trainable_parameters(model):\n"
                "    return len([p for p in model.parameters() if p.requires_grad])\n"
            ),
        ),
        Mistake(
            name="counts-frozen",
            message="Only parameters with requires_grad=True are trainable.",
            code=(
                "def count_trainable_parameters(model):\n"
                "    return sum(p.numel() for p in model.parameters())\n"
            ),
        ),
        Mistake(
            name="sums-state-dict",
            message="state_dict() also holds buffers and lists a shared weight under each of its names.",
            code=(
                "def count_trainable_parameters(model):\n"
                "    return sum(t.numel() for t in model.state_dict().values())\n"
            ),
        ),
        Mistake(
            name="double-counts-shared",
            message="Walking modules() counts a tied weight once per module that holds it; model.parameters() lists it once.",
            code=(
                "def count_trainable_parameters(model):\n"
                "    return sum(p.numel() for m in model.modules()\n"
                "               for p in m.parameters(recurse=False) if p.requires_grad)\n"
            ),
        ),
        Mistake(
            name="returns-tensor",
            message="Return a Python int, not a tensor.",
            code=(
                "import torch\n"
                "def count_trainable_parameters(model):\n"
                "    return torch.tensor(sum(p.numel() for p in model.parameters() if p.requires_grad))\n"
            ),
        ),
        Mistake(
            name="frozen-for-counting",
            message="Counting must not change the model: requires_grad_(False) on the way freezes "
            "the caller's parameters (and the next count finds none). Only read p.requires_grad.",
            code=(
                "def count_trainable_parameters(model):\n"
                "    total = 0\n"
                "    for p in model.parameters():\n"
                "        if p.requires_grad:\n"
                "            total += p.numel()\n"
                "            p.requires_grad_(False)  # counted: do not count it twice\n"
                "    return total\n"
            ),
        ),
        Mistake(
            name="concatenated-parameters",
            message="torch.cat of no tensors raises: a model without (trainable) parameters "
            "gives 0. Sum p.numel() instead of concatenating.",
            code=(
                "import torch\n"
                "def count_trainable_parameters(model):\n"
                "    trainable = [p.flatten() for p in model.parameters() if p.requires_grad]\n"
                "    return torch.cat(trainable).numel()\n"
            ),
        ),
    ],
    "RunningMean": [
        Mistake(
            name="plain-attribute",
            message="A plain tensor attribute is neither saved by state_dict() nor moved by .to(): use register_buffer.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.running_mean = torch.zeros(num_features)\n"
                "    def forward(self, x):\n"
                "        if self.training and x.shape[0] > 0:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * x.mean(0)\n"
                "        return x - self.running_mean\n"
            ),
        ),
        Mistake(
            name="parameter-not-buffer",
            message="The running mean is not learned: an nn.Parameter would be trained by the optimizer.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.running_mean = nn.Parameter(torch.zeros(num_features), requires_grad=False)\n"
                "    def forward(self, x):\n"
                "        if self.training and x.shape[0] > 0:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))\n"
                "        return x - self.running_mean\n"
            ),
        ),
        Mistake(
            name="keeps-graph",
            message="Update the buffer under torch.no_grad(): otherwise it carries the autograd history of every batch.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training and x.shape[0] > 0:\n"
                "            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * x.mean(0)\n"
                "        return x - self.running_mean\n"
            ),
        ),
        Mistake(
            name="updates-in-eval",
            message="In eval mode the running statistic must stay fixed: check self.training.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if x.shape[0] > 0:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))\n"
                "        return x - self.running_mean\n"
            ),
        ),
        Mistake(
            name="nan-on-empty-batch",
            message="The mean of an empty batch is NaN: skip the update when N == 0.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))\n"
                "        return x - self.running_mean\n"
            ),
        ),
        Mistake(
            name="momentum-swapped",
            message="momentum is the weight of the new batch: (1 - momentum) * old + momentum * batch mean.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training and x.shape[0] > 0:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.mul_(self.momentum).add_((1 - self.momentum) * x.mean(0))\n"
                "        return x - self.running_mean\n"
            ),
        ),
        Mistake(
            name="empty-batch-empty-on-cpu",
            message="For an empty batch it returns torch.empty(x.shape) made on the CPU: skip only "
            "the update, and still return x - running_mean.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                '        self.register_buffer("running_mean", torch.zeros(num_features))\n'
                "    def forward(self, x):\n"
                "        if x.shape[0] == 0:  # an empty batch: nothing to normalise\n"
                "            return torch.empty(x.shape, dtype=x.dtype)\n"
                "        if self.training:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(dim=0))\n"
                "        return x - self.running_mean\n"
            ),
        ),
        Mistake(
            name="momentum-vector-plain-attribute",
            message="The momentum kept as a tensor in a plain attribute stays on the CPU when the "
            "model moves: keep momentum a Python float.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                '        self.register_buffer("running_mean", torch.zeros(num_features))\n'
                "        self.momentum = torch.full((num_features,), momentum)  # per feature, a plain attribute\n"
                "    def forward(self, x):\n"
                "        if self.training and x.shape[0] > 0:\n"
                "            with torch.no_grad():\n"
                "                m = self.momentum.to(x.dtype)\n"
                "                self.running_mean.mul_(1 - m).add_(m * x.mean(dim=0))\n"
                "        return x - self.running_mean\n"
            ),
        ),
        Mistake(
            name="grad-switched-back-on",
            message="torch.set_grad_enabled(True) after the update switches autograd on for a caller "
            "who had it off (inside torch.no_grad()): update in a with torch.no_grad(): "
            "block.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                '        self.register_buffer("running_mean", torch.zeros(num_features))\n'
                "    def forward(self, x):\n"
                "        if self.training and x.shape[0] > 0:\n"
                "            torch.set_grad_enabled(False)  # the update records no history\n"
                "            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(dim=0))\n"
                "            torch.set_grad_enabled(True)\n"
                "        return x - self.running_mean\n"
            ),
        ),
    ],
    "capture_activations": [
        Mistake(
            name="calls-forward-directly",
            message="model.forward(x) skips __call__, so the model's own hooks never run: call model(x).",
            code=(
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(module, inputs, output, name=name):\n"
                "            acts[name] = output.detach().clone()\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model.forward(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="hooks-not-removed",
            message="Remove the hooks with handle.remove(); otherwise they run on every later forward pass.",
            code=(
                "def capture_activations(model, x, names):\n"
                "    acts = {}\n"
                "    for name in names:\n"
                "        def hook(module, inputs, output, name=name):\n"
                "            acts[name] = output.detach().clone()\n"
                "        model.get_submodule(name).register_forward_hook(hook)\n"
                "    model(x)\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="no-detach",
            message="A stored output that still requires grad keeps the whole graph alive: store output.detach().clone().",
            code=(
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(module, inputs, output, name=name):\n"
                "            acts[name] = output.clone()\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="no-clone",
            message="A later in-place layer overwrites a tensor you only detached: store output.detach().clone().",
            code=(
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(module, inputs, output, name=name):\n"
                "            acts[name] = output.detach()\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="stores-input",
            message="The hook gets (module, inputs, output): store the output, not inputs[0].",
            code=(
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(module, inputs, output, name=name):\n"
                "            acts[name] = inputs[0].detach().clone()\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="shared-dict",
            message="A dict kept between calls returns stale entries: start from an empty dict on every call.",
            code=(
                "ACTIVATIONS = {}\n"
                "def capture_activations(model, x, names):\n"
                "    handles = []\n"
                "    for name in names:\n"
                "        def hook(module, inputs, output, name=name):\n"
                "            ACTIVATIONS[name] = output.detach().clone()\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return ACTIVATIONS\n"
            ),
        ),
        Mistake(
            name="late-binding-name",
            message="A closure reads the loop variable when it runs, not when it was made: bind it (name=name).",
            code=(
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(module, inputs, output):\n"
                "            acts[name] = output.detach().clone()\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
    ],
    "init_weights": [
        Mistake(
            name="any-module-with-weight",
            message="Kaiming init needs a matrix: a LayerNorm weight is 1-D. Test the module's type.",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if hasattr(module, 'weight'):\n"
                "        nn.init.kaiming_normal_(module.weight, nonlinearity='relu')\n"
                "    if getattr(module, 'bias', None) is not None:\n"
                "        nn.init.zeros_(module.bias)\n"
            ),
        ),
        Mistake(
            name="forgets-bias",
            message="Set the Linear bias to zero as well.",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                "        nn.init.kaiming_normal_(module.weight, nonlinearity='relu')\n"
                "    elif isinstance(module, nn.LayerNorm):\n"
                "        nn.init.ones_(module.weight)\n"
                "        nn.init.zeros_(module.bias)\n"
            ),
        ),
        Mistake(
            name="fan-out",
            message="mode='fan_out' scales by the number of outputs; the task asks for fan_in (the default).",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                "        nn.init.kaiming_normal_(module.weight, mode='fan_out', nonlinearity='relu')\n"
                "        nn.init.zeros_(module.bias)\n"
                "    elif isinstance(module, nn.LayerNorm):\n"
                "        nn.init.ones_(module.weight)\n"
                "        nn.init.zeros_(module.bias)\n"
            ),
        ),
        Mistake(
            name="uniform",
            message="kaiming_uniform_ has the right spread but the wrong shape; use kaiming_normal_.",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                "        nn.init.kaiming_uniform_(module.weight, nonlinearity='relu')\n"
                "        nn.init.zeros_(module.bias)\n"
                "    elif isinstance(module, nn.LayerNorm):\n"
                "        nn.init.ones_(module.weight)\n"
                "        nn.init.zeros_(module.bias)\n"
            ),
        ),
        Mistake(
            name="forgets-layernorm",
            message="Reset LayerNorm too: weight ones, bias zeros.",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                "        nn.init.kaiming_normal_(module.weight, nonlinearity='relu')\n"
                "        nn.init.zeros_(module.bias)\n"
            ),
        ),
    ],
    "EncoderClassifier": [
        Mistake(
            name="calls-forward-directly",
            message="self.encoder.forward(x) skips __call__ and every hook on the encoder: call self.encoder(x).",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "    def forward(self, x):\n"
                "        return self.head.forward(self.encoder.forward(x))\n"
                "    def swap_head(self, new_head):\n"
                "        old, self.head = self.head, new_head\n"
                "        return old\n"
            ),
        ),
        Mistake(
            name="parts-in-list",
            message="Parts kept in a Python list are not registered: no parameters, no state_dict, no .to().",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.parts = [encoder, head]\n"
                "    def forward(self, x):\n"
                "        return self.parts[1](self.parts[0](x))\n"
                "    def swap_head(self, new_head):\n"
                "        old, self.parts[1] = self.parts[1], new_head\n"
                "        return old\n"
            ),
        ),
        Mistake(
            name="new-head-other-name",
            message="Replace self.head itself; a head stored under another name is never used by forward.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "    def forward(self, x):\n"
                "        return self.head(self.encoder(x))\n"
                "    def swap_head(self, new_head):\n"
                "        self.new_head = new_head\n"
                "        return self.head\n"
            ),
        ),
        Mistake(
            name="returns-new-head",
            message="swap_head returns the head it replaced, so the caller can keep or reuse it.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "    def forward(self, x):\n"
                "        return self.head(self.encoder(x))\n"
                "    def swap_head(self, new_head):\n"
                "        self.head = new_head\n"
                "        return self.head\n"
            ),
        ),
        Mistake(
            name="super-init-last",
            message="Call super().__init__() before assigning submodules.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "        super().__init__()\n"
                "    def forward(self, x):\n"
                "        return self.head(self.encoder(x))\n"
                "    def swap_head(self, new_head):\n"
                "        old, self.head = self.head, new_head\n"
                "        return old\n"
            ),
        ),
        Mistake(
            name="plain-attribute-temperature",
            message="self.temperature = torch.ones(1) is a plain attribute: .to(device) leaves it on "
            "the CPU and forward fails on a GPU. Return self.head(self.encoder(x)).",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "        self.temperature = torch.ones(1)  # a plain attribute: .to(device) leaves it behind\n"
                "    def forward(self, x):\n"
                "        out = self.head(self.encoder(x))\n"
                "        return out / self.temperature.to(out.dtype)\n"
                "    def swap_head(self, new_head):\n"
                "        old = self.head\n"
                "        self.head = new_head\n"
                "        return old\n"
            ),
        ),
        Mistake(
            name="empty-batch-zeros-on-cpu",
            message="An empty batch returns torch.zeros(...) made on the CPU, and skips the parts and"
            " their hooks: call self.head(self.encoder(x)) for every x.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "    def forward(self, x):\n"
                "        if x.shape[0] == 0:  # no samples: skip the parts\n"
                "            return torch.zeros(0, self.head.out_features, dtype=x.dtype)\n"
                "        return self.head(self.encoder(x))\n"
                "    def swap_head(self, new_head):\n"
                "        old = self.head\n"
                "        self.head = new_head\n"
                "        return old\n"
            ),
        ),
        Mistake(
            name="cpu-mask-in-masked-fill",
            message="masked_fill with a mask made by torch.ones(..., dtype=torch.bool) on the CPU "
            "fails on a GPU: there is nothing to mask, return self.head(self.encoder(x)).",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "    def forward(self, x):\n"
                "        h = self.encoder(x)\n"
                "        keep = torch.ones(h.shape[-1], dtype=torch.bool)  # every feature kept\n"
                "        return self.head(h.masked_fill(~keep, 0.0))\n"
                "    def swap_head(self, new_head):\n"
                "        old = self.head\n"
                "        self.head = new_head\n"
                "        return old\n"
            ),
        ),
    ],
    "freeze_except": [
        Mistake(
            name="clears-grad",
            message="Clearing .grad is not freezing: backward computes it again. Use requires_grad_(False).",
            code=(
                "def freeze_except(model, trainable):\n"
                "    prefixes = tuple(t + '.' for t in trainable)\n"
                "    kept = []\n"
                "    for name, p in model.named_parameters():\n"
                "        if name.startswith(prefixes):\n"
                "            kept.append(name)\n"
                "        else:\n"
                "            p.grad = None\n"
                "    return kept\n"
            ),
        ),
        Mistake(
            name="bare-startswith",
            message="'1' must not match '10.weight': compare against prefix + '.'.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    kept = []\n"
                "    for name, p in model.named_parameters():\n"
                "        train = any(name.startswith(t) for t in trainable)\n"
                "        p.requires_grad_(train)\n"
                "        if train:\n"
                "            kept.append(name)\n"
                "    return kept\n"
            ),
        ),
        Mistake(
            name="never-unfreezes",
            message="Set requires_grad_(True) on the trainable ones: an earlier call may have frozen them.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    prefixes = tuple(t + '.' for t in trainable)\n"
                "    kept = []\n"
                "    for name, p in model.named_parameters():\n"
                "        if name.startswith(prefixes):\n"
                "            kept.append(name)\n"
                "        else:\n"
                "            p.requires_grad_(False)\n"
                "    return kept\n"
            ),
        ),
        Mistake(
            name="module-attribute",
            message="module.requires_grad = False only sets a Python attribute; call module.requires_grad_(False).",
            code=(
                "def freeze_except(model, trainable):\n"
                "    keep = set(trainable)\n"
                "    for name, child in model.named_children():\n"
                "        if name not in keep:\n"
                "            child.requires_grad = False\n"
                "    return [n for n, p in model.named_parameters() if p.requires_grad]\n"
            ),
        ),
        Mistake(
            name="eval-is-not-freezing",
            message="eval() switches layer behaviour (dropout, batchnorm); it does not stop gradients.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    prefixes = tuple(t + '.' for t in trainable)\n"
                "    for name, m in model.named_modules():\n"
                "        if name and not (name + '.').startswith(prefixes):\n"
                "            m.eval()\n"
                "    return [n for n, p in model.named_parameters() if n.startswith(prefixes)]\n"
            ),
        ),
    ],
}


def _class(name: str, body: str) -> str:
    return _IMPORTS + f"class {name}(nn.Module):\n" + body


_MLP_FORWARD = "    def forward(self, x):\n        for layer in self.layers:\n            x = layer(x)\n        return x\n"
_RES_INIT = (
    "    def __init__(self, dim, hidden):\n"
    "        super().__init__()\n"
    "        self.fc1 = nn.Linear(dim, hidden)\n"
    "        self.fc2 = nn.Linear(hidden, dim)\n"
)
_CAPTURE = (
    "def capture_activations(model, x, names):\n"
    "    acts, handles = {}, []\n"
    "    for name in names:\n"
    "        def hook(module, inputs, output, name=name):\n"
    "            {store}\n"
    "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
    "{run}"
    "    return acts\n"
)
_RUN_FINALLY = (
    "    try:\n        model(x)\n    finally:\n        for h in handles:\n            h.remove()\n"
)


def _capture(store: str = "acts[name] = output.detach().clone()", run: str = _RUN_FINALLY) -> str:
    return _CAPTURE.replace("{store}", store).replace("{run}", run)


_ENCODER = (
    "    def __init__(self, encoder, head):\n"
    "        super().__init__()\n"
    "        self.encoder = encoder\n"
    "        self.head = head\n"
    "    def forward(self, x):\n"
    "        {forward}\n"
    "    def swap_head(self, new_head):\n"
    "        old, self.head = self.head, new_head\n"
    "        return old\n"
)


def _encoder(forward: str) -> str:
    return _class("EncoderClassifier", _ENCODER.replace("{forward}", forward))


def _freeze(test: str) -> str:
    return (
        "def freeze_except(model, trainable):\n"
        "    kept = []\n"
        "    for name, p in model.named_parameters():\n"
        f"        train = {test}\n"
        "        p.requires_grad_(train)\n"
        "        if train:\n"
        "            kept.append(name)\n"
        "    return kept\n"
    )


_INIT_LINEAR = (
    "    if isinstance(module, nn.Linear):\n"
    "        nn.init.kaiming_normal_(module.weight, nonlinearity='relu')\n"
    "        if module.bias is not None:\n"
    "            nn.init.zeros_(module.bias)\n"
)
_INIT_NORM = (
    "    elif isinstance(module, nn.LayerNorm) and module.weight is not None:\n"
    "        nn.init.ones_(module.weight)\n"
    "        nn.init.zeros_(module.bias)\n"
)

_MORE = {
    "MLP": [
        Mistake(
            name="shared-activation-instance",
            message="One activation instance after every layer shares its parameters (a PReLU's "
            "slope) between them: create a fresh activation() per hidden layer.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        act = activation()\n"
                "        layers = []\n"
                "        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):\n"
                "            layers.append(nn.Linear(a, b))\n"
                "            if i < len(sizes) - 2:\n"
                "                layers.append(act)\n"
                "        self.layers = nn.ModuleList(layers)\n" + _MLP_FORWARD,
            ),
        ),
        Mistake(
            name="activation-before-linear",
            message="The activation goes after each hidden Linear, not before it: "
            "Linear, act, Linear, act, ..., Linear.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        pairs = list(zip(sizes[:-1], sizes[1:]))\n"
                "        layers = []\n"
                "        for i, (a, b) in enumerate(pairs):\n"
                "            if i < len(pairs) - 1:\n"
                "                layers.append(activation())\n"
                "            layers.append(nn.Linear(a, b))\n"
                "        self.layers = nn.ModuleList(layers)\n" + _MLP_FORWARD,
            ),
        ),
        Mistake(
            name="registers-activation-uses-relu",
            message="An activation module that is registered but never called changes nothing: "
            "call the activation you were given between the layers.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))\n"
                "        self.act = activation()\n"
                "    def forward(self, x):\n"
                "        for layer in self.linears[:-1]:\n"
                "            x = torch.relu(layer(x))\n"
                "        return self.linears[-1](x)\n",
            ),
        ),
        Mistake(
            name="pops-sizes",
            message="sizes.pop() empties the caller's list: read sizes, do not modify it.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        n_out = sizes.pop()\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        layers.append(nn.Linear(sizes[-1], n_out))\n"
                "        self.layers = nn.ModuleList(layers)\n" + _MLP_FORWARD,
            ),
        ),
        Mistake(
            name="casts-input-to-float32",
            message="x.float() turns a float16 or float64 input (and a model moved with "
            ".half() or .double()) back to float32: use x as it comes.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        self.layers = nn.Sequential(*layers[:-1])\n"
                "    def forward(self, x):\n"
                "        return self.layers(x.float())\n",
            ),
        ),
        Mistake(
            name="rows-one-by-one",
            message="Running the layers row by row and stacking fails on an empty batch (and is "
            "slow): the layers take the whole (N, sizes[0]) batch at once.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        self.layers = nn.Sequential(*layers[:-1])\n"
                "    def forward(self, x):\n"
                "        return torch.stack([self.layers(row) for row in x])\n",
            ),
        ),
        Mistake(
            name="forward-under-no-grad",
            message="forward under torch.no_grad() returns outputs without a graph: no loss "
            "computed from them can train the model.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        self.layers = nn.Sequential(*layers[:-1])\n"
                "    def forward(self, x):\n"
                "        with torch.no_grad():\n"
                "            return self.layers(x)\n",
            ),
        ),
        Mistake(
            name="activation-created-in-forward",
            message="An activation created in forward is never registered: a PReLU's slope is "
            "not trained, saved or moved. Create activation() per hidden layer in __init__.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))\n"
                "        self.activation = activation\n"
                "    def forward(self, x):\n"
                "        for layer in self.linears[:-1]:\n"
                "            x = self.activation()(layer(x))\n"
                "        return self.linears[-1](x)\n",
            ),
        ),
    ],
    "ResidualBlock": [
        Mistake(
            name="in-place-skip",
            message="x += ... overwrites the caller's tensor (and fails on a leaf that requires "
            "grad): return x + fc2(relu(fc1(x))), a new tensor.",
            code=_class(
                "ResidualBlock",
                _RES_INIT + "    def forward(self, x):\n"
                "        out = self.fc2(F.relu(self.fc1(x)))\n"
                "        x += out\n"
                "        return x\n",
            ),
        ),
        Mistake(
            name="ignores-hidden",
            message="fc1 maps dim -> hidden and fc2 hidden -> dim; Linear(dim, dim) twice ignores "
            "the hidden width.",
            code=_class(
                "ResidualBlock",
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, dim)\n"
                "        self.fc2 = nn.Linear(dim, dim)\n"
                "    def forward(self, x):\n"
                "        return x + self.fc2(F.relu(self.fc1(x)))\n",
            ),
        ),
        Mistake(
            name="relu-after-fc2",
            message="The ReLU sits between fc1 and fc2: x + fc2(relu(fc1(x))), not "
            "x + relu(fc2(fc1(x))).",
            code=_class(
                "ResidualBlock",
                _RES_INIT + "    def forward(self, x):\n"
                "        return x + F.relu(self.fc2(self.fc1(x)))\n",
            ),
        ),
        Mistake(
            name="detached-skip",
            message="Detaching x on the skip path cuts the gradient that the skip connection is "
            "there to carry: return x + ..., not x.detach() + ...",
            code=_class(
                "ResidualBlock",
                _RES_INIT + "    def forward(self, x):\n"
                "        return x.detach() + self.fc2(F.relu(self.fc1(x)))\n",
            ),
        ),
        Mistake(
            name="relu-against-cpu-zeros",
            message="torch.zeros(n) is float32 on the CPU whatever x is: compare with 0 "
            "(torch.relu, clamp(min=0)) or make the zeros like the tensor (torch.zeros_like).",
            code=_class(
                "ResidualBlock",
                _RES_INIT + "    def forward(self, x):\n"
                "        h = self.fc1(x)\n"
                "        h = torch.maximum(h, torch.zeros(h.shape[-1]))\n"
                "        return x + self.fc2(h)\n",
            ),
        ),
        Mistake(
            name="flattens-with-view",
            message="x.view(-1, dim) needs contiguous memory (a transposed or sliced x has "
            "none), and nn.Linear already works on the last axis: pass x as it is.",
            code=_class(
                "ResidualBlock",
                _RES_INIT + "    def forward(self, x):\n"
                "        flat = x.view(-1, x.shape[-1])\n"
                "        out = flat + self.fc2(F.relu(self.fc1(flat)))\n"
                "        return out.view(x.shape)\n",
            ),
        ),
    ],
    "count_trainable_parameters": [
        Mistake(
            name="leaf-modules-only",
            message="Walking the leaf modules misses parameters registered on a module that has "
            "children (a cls_token on the model): sum over model.parameters().",
            code=(
                "def count_trainable_parameters(model):\n"
                "    return sum(p.numel() for m in model.modules() if not list(m.children())\n"
                "               for p in m.parameters() if p.requires_grad)\n"
            ),
        ),
        Mistake(
            name="weight-and-bias-per-module",
            message="Not every parameter is a layer's .weight or .bias, and the two can be frozen "
            "separately: look at each parameter in model.parameters().",
            code=(
                "def count_trainable_parameters(model):\n"
                "    total = 0\n"
                "    for m in model.modules():\n"
                "        w = getattr(m, 'weight', None)\n"
                "        if w is not None and w.requires_grad:\n"
                "            total += w.numel()\n"
                "            if getattr(m, 'bias', None) is not None:\n"
                "                total += m.bias.numel()\n"
                "    return total\n"
            ),
        ),
    ],
    "RunningMean": [
        Mistake(
            name="eval-returns-x",
            message="In eval mode the running mean is still subtracted (it is only not updated): "
            "return x - running_mean.",
            code=_class(
                "RunningMean",
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if not self.training:\n"
                "            return x\n"
                "        if x.shape[0] > 0:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))\n"
                "        return x - self.running_mean\n",
            ),
        ),
        Mistake(
            name="empty-batch-nan-to-zero",
            message="Turning the empty batch's NaN mean into zeros still updates the running mean "
            "(towards zero): skip the update when N == 0.",
            code=_class(
                "RunningMean",
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training:\n"
                "            with torch.no_grad():\n"
                "                mean = torch.nan_to_num(x.mean(0))\n"
                "                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * mean)\n"
                "        return x - self.running_mean\n",
            ),
        ),
        Mistake(
            name="float64-buffer",
            message="The text asks for a float32 buffer, torch.zeros(num_features): a float64 one "
            "turns every float32 output into float64.",
            code=_class(
                "RunningMean",
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features, dtype=torch.float64))\n"
                "    def forward(self, x):\n"
                "        if self.training and len(x):\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.lerp_(x.mean(0).double(), self.momentum)\n"
                "        return x - self.running_mean\n",
            ),
        ),
        Mistake(
            name="mean-via-item",
            message="A mean rebuilt from .item() values is a new float32 CPU tensor: the buffer "
            "loses the input's dtype and device. Take x.mean(dim=0) under torch.no_grad().",
            code=_class(
                "RunningMean",
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training and len(x):\n"
                "            mean = torch.tensor([col.mean().item() for col in x.T])\n"
                "            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mean\n"
                "        return x - self.running_mean\n",
            ),
        ),
        Mistake(
            name="subtracts-in-place",
            message="x -= running_mean overwrites the caller's batch: return x - running_mean, "
            "a new tensor.",
            code=_class(
                "RunningMean",
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training and len(x):\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.lerp_(x.mean(0), self.momentum)\n"
                "        x -= self.running_mean\n"
                "        return x\n",
            ),
        ),
    ],
    "capture_activations": [
        Mistake(
            name="clears-all-hooks",
            message="_forward_hooks.clear() also removes the hooks the caller had registered: "
            "remove only your own handles.",
            code=_capture(
                run="    model(x)\n"
                "    for name in names:\n"
                "        model.get_submodule(name)._forward_hooks.clear()\n"
            ),
        ),
        Mistake(
            name="keeps-first-call",
            message="A module that runs twice in one pass: the exercise keeps its last output; "
            "let the second call overwrite the entry.",
            code=_capture(
                store="if name not in acts:\n                acts[name] = output.detach().clone()"
            ),
        ),
        Mistake(
            name="tuple-output-crashes",
            message="A module may return a tuple of tensors: store a tuple of detached copies "
            "(tuple(t.detach().clone() for t in output)).",
            code=_capture(),
        ),
        Mistake(
            name="skips-tuple-outputs",
            message="A module whose output is a tuple still gets an entry: a tuple of its "
            "tensors' detached copies.",
            code=_capture(
                store="if isinstance(output, torch.Tensor):\n"
                "                acts[name] = output.detach().clone()"
            ).replace("def capture_activations", "import torch\ndef capture_activations", 1),
        ),
        Mistake(
            name="no-finally",
            message="When model(x) raises, hooks removed after it are never removed: put the "
            "removal in a finally: block.",
            code=_capture(run="    model(x)\n    for h in handles:\n        h.remove()\n"),
        ),
        Mistake(
            name="freezes-caller-model",
            message="model.requires_grad_(False) changes the caller's model: detach in the hook "
            "instead (or run under torch.no_grad()).",
            code=_capture(run="    model.requires_grad_(False)\n" + _RUN_FINALLY),
        ),
        Mistake(
            name="leaves-eval-mode",
            message="model.eval() changes the caller's model (and what dropout or batch norm "
            "compute): capture in the mode the model is in.",
            code=_capture(run="    model.eval()\n" + _RUN_FINALLY),
        ),
    ],
    "init_weights": [
        Mistake(
            name="crashes-on-bias-false",
            message="nn.Linear(..., bias=False) has bias None: zero the bias only if it exists.",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                "        nn.init.kaiming_normal_(module.weight, nonlinearity='relu')\n"
                "        nn.init.zeros_(module.bias)\n" + _INIT_NORM
            ),
        ),
        Mistake(
            name="resets-every-1d-weight",
            message="A 1-D weight is not always a LayerNorm's (BatchNorm has one too): test "
            "isinstance(module, nn.LayerNorm).",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                + _INIT_LINEAR
                + "    elif getattr(module, 'weight', None) is not None and module.weight.dim() == 1:\n"
                "        nn.init.ones_(module.weight)\n"
                "        nn.init.zeros_(module.bias)\n"
            ),
        ),
        Mistake(
            name="every-2d-weight-is-linear",
            message="An Embedding also has a 2-D weight: test isinstance(module, nn.Linear), not "
            "the weight's shape.",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    weight = getattr(module, 'weight', None)\n"
                "    if isinstance(weight, nn.Parameter) and weight.dim() == 2:\n"
                "        nn.init.kaiming_normal_(weight, nonlinearity='relu')\n"
                "        if getattr(module, 'bias', None) is not None:\n"
                "            nn.init.zeros_(module.bias)\n" + _INIT_NORM
            ),
        ),
        Mistake(
            name="reseeds-inside",
            message="torch.manual_seed inside init_weights makes layers of one shape identical "
            "and resets the caller's random stream: leave seeding to the caller.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                "        torch.manual_seed(0)  # reproducible\n"
                "        nn.init.kaiming_normal_(module.weight, nonlinearity='relu')\n"
                "        if module.bias is not None:\n"
                "            nn.init.zeros_(module.bias)\n" + _INIT_NORM
            ),
        ),
        Mistake(
            name="new-tensors-into-data",
            message="torch.randn(...) and torch.zeros(...) are float32 on the CPU: assigned to "
            ".data they turn a float64 (or GPU) layer into a float32 CPU one. Fill the "
            "parameters in place with nn.init.",
            code=(
                "import math\n"
                "import torch\n"
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                "        std = math.sqrt(2.0 / module.in_features)\n"
                "        module.weight.data = torch.randn(module.out_features, module.in_features) * std\n"
                "        if module.bias is not None:\n"
                "            module.bias.data = torch.zeros(module.out_features)\n"
                "    elif isinstance(module, nn.LayerNorm):\n"
                "        if module.weight is not None:\n"
                "            module.weight.data = torch.ones(module.normalized_shape)\n"
                "        if module.bias is not None:\n"
                "            module.bias.data = torch.zeros(module.normalized_shape)\n"
            ),
        ),
    ],
    "EncoderClassifier": [
        Mistake(
            name="head-forward-directly",
            message="self.head.forward(...) skips __call__ and the head's hooks: call "
            "self.head(...).",
            code=_encoder("return self.head.forward(self.encoder(x))"),
        ),
        Mistake(
            name="encoder-under-no-grad",
            message="Running the encoder under torch.no_grad() freezes it for every caller: "
            "freezing is requires_grad_(False), the caller's choice.",
            code=_encoder(
                "with torch.no_grad():\n            features = self.encoder(x)\n"
                "        return self.head(features)"
            ),
        ),
        Mistake(
            name="detaches-features",
            message="Detaching the encoder's output stops every gradient at the head: the "
            "encoder never trains.",
            code=_encoder("return self.head(self.encoder(x).detach())"),
        ),
        Mistake(
            name="copies-parts",
            message="A deep copy of the encoder is another module: the caller's encoder (and "
            "its hooks) is not the one trained. Assign the given modules.",
            code=_IMPORTS
            + "import copy\n"
            + "class EncoderClassifier(nn.Module):\n"
            + _ENCODER.replace("{forward}", "return self.head(self.encoder(x))").replace(
                "self.encoder = encoder", "self.encoder = copy.deepcopy(encoder)"
            ),
        ),
        Mistake(
            name="features-to-float32",
            message="Casting the features with .float() breaks a model in float64 or half "
            "precision: pass the encoder's output to the head as it is.",
            code=_encoder("return self.head(self.encoder(x).float())"),
        ),
        Mistake(
            name="encoder-set-to-eval",
            message="encoder.eval() in __init__ changes the caller's module (its dropout and "
            "batch norm stop training): modes are the caller's choice, model.train() / .eval().",
            code=_encoder("return self.head(self.encoder(x))").replace(
                "self.encoder = encoder", "self.encoder = encoder.eval()"
            ),
        ),
        Mistake(
            name="flattens-with-view",
            message="x.view(x.size(0), -1) cannot reshape an empty batch (-1 is ambiguous with "
            "0 rows): give the encoder x as it comes.",
            code=_encoder("return self.head(self.encoder(x.view(x.size(0), -1)))"),
        ),
    ],
    "freeze_except": [
        Mistake(
            name="root-name-not-handled",
            message="'' names the model itself: every parameter is inside it, though '' + '.' "
            "is no prefix of any name.",
            code=_freeze("name.startswith(tuple(t + '.' for t in trainable))"),
        ),
        Mistake(
            name="children-only",
            message="Only the top-level children get set: nested names ('encoder.2') and the "
            "model's own parameters are missed.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    for name, child in model.named_children():\n"
                "        child.requires_grad_(name in trainable)\n"
                "    return [n for n, p in model.named_parameters() if p.requires_grad]\n"
            ),
        ),
        Mistake(
            name="first-component-only",
            message="Comparing only the first part of the name ('encoder' of 'encoder.2.weight') "
            "misses nested module names like 'encoder.2'.",
            code=_freeze("name.split('.')[0] in trainable"),
        ),
        Mistake(
            name="direct-parent-only",
            message="A module covers everything nested inside it, not only its own parameters: "
            "'encoder' covers 'encoder.2.weight'.",
            code=_freeze("name.rsplit('.', 1)[0] in trainable"),
        ),
        Mistake(
            name="removes-root-name",
            message="trainable.remove('') changes the caller's list: read trainable, do not "
            "modify it.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    everything = '' in trainable\n"
                "    if everything:\n"
                "        trainable.remove('')\n"
                "    prefixes = tuple(t + '.' for t in trainable)\n"
                "    kept = []\n"
                "    for name, p in model.named_parameters():\n"
                "        train = everything or name.startswith(prefixes)\n"
                "        p.requires_grad_(train)\n"
                "        if train:\n"
                "            kept.append(name)\n"
                "    return kept\n"
            ),
        ),
    ],
}
for _key, _extra in _MORE.items():
    MISTAKES[_key] = [*MISTAKES[_key], *_extra]

_MLP_SEQ_INIT = (
    "    def __init__(self, sizes, activation=nn.ReLU):\n"
    "        super().__init__()\n"
    "        layers = []\n"
    "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
    "            layers += [nn.Linear(a, b), activation()]\n"
    "        self.layers = nn.Sequential(*layers[:-1])\n"
    "        self.in_features = sizes[0]\n"
)
_RUNNING_INIT = (
    "    def __init__(self, num_features, momentum=0.1):\n"
    "        super().__init__()\n"
    "        self.momentum = momentum\n"
    "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
)
_REVIEW = {
    "MLP": [
        Mistake(
            name="squeezes-output",
            message="squeeze() drops every size-1 dimension: a batch of one or sizes[-1] == 1 "
            "loses the (N, sizes[-1]) shape. Return the last layer's output as it is.",
            code=_class(
                "MLP",
                _MLP_SEQ_INIT
                + "    def forward(self, x):\n        return self.layers(x).squeeze()\n",
            ),
        ),
    ],
    "ResidualBlock": [
        Mistake(
            name="addmm-two-dims-only",
            message="torch.addmm takes matrices only: an input (N, L, dim) fails. Call the layers, "
            "self.fc1(x), which accept any leading dimensions.",
            code=_class(
                "ResidualBlock",
                _RES_INIT + "    def forward(self, x):\n"
                "        h = torch.relu(torch.addmm(self.fc1.bias, x, self.fc1.weight.t()))\n"
                "        return x + torch.addmm(self.fc2.bias, h, self.fc2.weight.t())\n",
            ),
        ),
        Mistake(
            name="sets-requires-grad-on-x",
            message="x.requires_grad_() changes the caller's tensor: leave x as it was.",
            code=_class(
                "ResidualBlock",
                _RES_INIT + "    def forward(self, x):\n"
                "        if not x.requires_grad and x.is_leaf:\n"
                "            x.requires_grad_()\n"
                "        return x + self.fc2(F.relu(self.fc1(x)))\n",
            ),
        ),
    ],
    "count_trainable_parameters": [
        Mistake(
            name="dedup-by-value",
            message="Two different parameters can hold equal values (two zero biases): count "
            "each parameter object once (model.parameters() already does), not each value.",
            code=(
                "import torch\n"
                "def count_trainable_parameters(model):\n"
                "    seen = []\n"
                "    for p in model.parameters():\n"
                "        if p.requires_grad and not any(q.shape == p.shape and torch.equal(q, p) for q in seen):\n"
                "            seen.append(p)\n"
                "    return sum(p.numel() for p in seen)\n"
            ),
        ),
        Mistake(
            name="numel-from-two-dims",
            message="A parameter can have any number of dimensions (0-d, 4-d convolutions): "
            "use p.numel().",
            code=(
                "def count_trainable_parameters(model):\n"
                "    total = 0\n"
                "    for p in model.parameters():\n"
                "        if p.requires_grad:\n"
                "            total += p.shape[0] * (p.shape[1] if p.dim() > 1 else 1)\n"
                "    return total\n"
            ),
        ),
    ],
    "RunningMean": [
        Mistake(
            name="skips-batch-of-one",
            message="A batch of one row has a mean too (only BatchNorm's variance needs two): "
            "update for every non-empty batch.",
            code=_class(
                "RunningMean",
                _RUNNING_INIT + "    def forward(self, x):\n"
                "        if self.training and x.shape[0] > 1:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(dim=0))\n"
                "        return x - self.running_mean\n",
            ),
        ),
        Mistake(
            name="keepdim-buffer",
            message="mean(dim=0, keepdim=True) reshapes the buffer to (1, F): running_mean "
            "keeps its shape (F,).",
            code=_class(
                "RunningMean",
                _RUNNING_INIT + "    def forward(self, x):\n"
                "        if self.training and len(x):\n"
                "            with torch.no_grad():\n"
                "                self.running_mean = (1 - self.momentum) * self.running_mean"
                " + self.momentum * x.mean(dim=0, keepdim=True)\n"
                "        return x - self.running_mean\n",
            ),
        ),
    ],
    "capture_activations": [
        Mistake(
            name="restores-top-mode-only",
            message="model.train(was_training) sets every submodule to the model's mode: a "
            "caller's model with some parts in eval mode is changed. Do not change modes.",
            code=_capture(
                run="    was_training = model.training\n"
                "    model.eval()\n"
                "    try:\n        model(x)\n    finally:\n"
                "        model.train(was_training)\n"
                "        for h in handles:\n            h.remove()\n"
            ),
        ),
        Mistake(
            name="unfreezes-on-restore",
            message="model.requires_grad_(True) afterwards unfreezes parameters the caller had "
            "frozen: leave requires_grad alone (detach in the hook).",
            code=_capture(
                run="    model.requires_grad_(False)\n"
                "    try:\n        model(x)\n    finally:\n"
                "        model.requires_grad_(True)\n"
                "        for h in handles:\n            h.remove()\n"
            ),
        ),
    ],
    "init_weights": [
        Mistake(
            name="layernorm-bias-false",
            message="nn.LayerNorm(..., bias=False) has a weight but bias None: check each of "
            "them for None.",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                + _INIT_LINEAR
                + "    elif isinstance(module, nn.LayerNorm) and module.elementwise_affine:\n"
                "        nn.init.ones_(module.weight)\n"
                "        nn.init.zeros_(module.bias)\n"
            ),
        ),
        Mistake(
            name="replaces-parameters",
            message="Assigning a new nn.Parameter replaces the caller's parameter (an optimizer "
            "still holds the old one, a frozen weight trains again): fill it in place with nn.init.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                "        w = torch.empty_like(module.weight)\n"
                "        nn.init.kaiming_normal_(w, nonlinearity='relu')\n"
                "        module.weight = nn.Parameter(w)\n"
                "        if module.bias is not None:\n"
                "            module.bias = nn.Parameter(torch.zeros_like(module.bias))\n"
                "    elif isinstance(module, nn.LayerNorm):\n"
                "        if module.weight is not None:\n"
                "            nn.init.ones_(module.weight)\n"
                "        if module.bias is not None:\n"
                "            nn.init.zeros_(module.bias)\n"
            ),
        ),
    ],
    "EncoderClassifier": [
        Mistake(
            name="head-to-encoder-device",
            message="next(encoder.parameters()) fails for an encoder without parameters "
            "(nn.Flatten()): store the parts as they are given.",
            code=_encoder("return self.head(self.encoder(x))").replace(
                "self.head = head", "self.head = head.to(next(encoder.parameters()).device)"
            ),
        ),
        Mistake(
            name="swap-reads-head-weight",
            message="Not every head has a .weight (an nn.Sequential, nn.Identity): swap_head "
            "replaces the head with new_head as it is.",
            code=_encoder("return self.head(self.encoder(x))").replace(
                "old, self.head = self.head, new_head",
                "old, self.head = self.head, new_head.to(self.head.weight.device, self.head.weight.dtype)",
            ),
        ),
    ],
    "freeze_except": [
        Mistake(
            name="names-per-trainable-module",
            message="Names collected module by module follow the order of trainable (and repeat "
            "for nested names): return them in model.named_parameters() order, once each.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    model.requires_grad_(False)\n"
                "    names = []\n"
                "    for t in trainable:\n"
                "        sub = model.get_submodule(t)\n"
                "        sub.requires_grad_(True)\n"
                "        names += [n for n, _ in sub.named_parameters(prefix=t)]\n"
                "    return names\n"
            ),
        ),
        Mistake(
            name="substring-match",
            message="'0.' also occurs inside '10.weight': a module covers the names that start "
            "with its name + '.', not every name that contains it.",
            code=_freeze("'' in trainable or any(t + '.' in name for t in trainable)"),
        ),
    ],
}
for _key, _extra in _REVIEW.items():
    MISTAKES[_key] = [*MISTAKES[_key], *_extra]

_MLP_BODY = (
    "    def __init__(self, sizes, activation=nn.ReLU):\n"
    "        super().__init__()\n"
    "{seed}"
    "        layers = []\n"
    "        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):\n"
    "            layers.append(nn.Linear(a, b))\n"
    "            if i < len(sizes) - 2:\n"
    "                layers.append(activation())\n"
    "        self.layers = nn.Sequential(*layers)\n"
)
_RES_FORWARD = "    def forward(self, x):\n        return x + self.fc2(F.relu(self.fc1(x)))\n"
_RUNNING_UPDATE = (
    "    def forward(self, x):\n"
    "        if self.training and len(x) > 0:\n"
    "            with torch.no_grad():\n"
    "                self.running_mean.mul_(1 - self.momentum).add_(self.momentum * {mean})\n"
    "        return x - self.running_mean\n"
)
_SWAP = (
    "    def __init__(self, encoder, head):\n"
    "        super().__init__()\n"
    "        self.encoder = encoder\n"
    "        self.head = head\n"
    "    def forward(self, x):\n"
    "        return self.head(self.encoder(x))\n"
    "    def swap_head(self, new_head):\n"
    "        old = self.head\n"
    "        self.head = new_head\n"
    "        {extra}\n"
    "        return old\n"
)
_NO_GRAD_IN_EVAL = "with torch.set_grad_enabled(self.training and torch.is_grad_enabled()):"
_REDTEAM = {
    "MLP": [
        Mistake(
            name="seed-in-init",
            message="torch.manual_seed in __init__ reseeds the caller's global generator: every "
            "random number drawn after building the model changes. Seed once in the script, "
            "never inside a class.",
            code=_class("MLP", _MLP_BODY.replace("{seed}", "        torch.manual_seed(0)\n"))
            + "    def forward(self, x):\n        return self.layers(x)\n",
        ),
        Mistake(
            name="no-grad-in-eval",
            message="forward runs under torch.no_grad() in eval mode: the output has no graph, "
            "so no gradient reaches x or the weights. Leave autograd to the caller in every "
            "mode.",
            code=_class("MLP", _MLP_BODY.replace("{seed}", ""))
            + (
                "    def forward(self, x):\n"
                "        if not self.training:\n"
                "            with torch.no_grad():\n"
                "                return self.layers(x)\n"
                "        return self.layers(x)\n"
            ),
        ),
        Mistake(
            name="activations-registered-but-made-in-forward",
            message="The registered activations are never used: forward calls activation() "
            "anew, so a PReLU's registered slope gets no gradient and never trains. Use the "
            "registered instances in forward.",
            code=_class(
                "MLP",
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.activation = activation\n"
                "        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))\n"
                "        self.acts = nn.ModuleList(activation() for _ in range(len(sizes) - 2))\n"
                "    def forward(self, x):\n"
                "        for layer in self.linears[:-1]:\n"
                "            x = self.activation()(layer(x))\n"
                "        return self.linears[-1](x)\n",
            ),
        ),
    ],
    "ResidualBlock": [
        Mistake(
            name="no-grad-in-eval",
            message="Turning autograd off in eval mode (torch.set_grad_enabled(self.training)) "
            "leaves the output without a graph: a model in eval mode still needs gradients "
            "(saliency, fine-tuning with frozen statistics). Leave autograd to the caller.",
            code=_class(
                "ResidualBlock",
                _RES_INIT
                + "    def forward(self, x):\n"
                + f"        {_NO_GRAD_IN_EVAL}\n"
                + "            return x + self.fc2(F.relu(self.fc1(x)))\n",
            ),
        ),
        Mistake(
            name="seed-in-init",
            message="torch.manual_seed in __init__ reseeds the caller's global generator: every "
            "random number drawn after building the model changes. Seed once in the script, "
            "never inside a class.",
            code=_class(
                "ResidualBlock",
                _RES_INIT.replace(
                    "        super().__init__()\n",
                    "        super().__init__()\n        torch.manual_seed(42)\n",
                )
                + _RES_FORWARD,
            ),
        ),
    ],
    "count_trainable_parameters": [
        Mistake(
            name="product-of-shape",
            message="functools.reduce(operator.mul, p.shape) fails on a 0-d Parameter (shape (), "
            "one element): use p.numel(), or math.prod(p.shape), whose start is 1.",
            code=(
                "import functools, operator\n"
                "def count_trainable_parameters(model):\n"
                "    return sum(functools.reduce(operator.mul, p.shape) for p in model.parameters() if p.requires_grad)\n"
            ),
        ),
        Mistake(
            name="zero-grad-while-counting",
            message="model.zero_grad() clears the gradients the caller accumulated: counting "
            "reads the model and changes nothing.",
            code=(
                "def count_trainable_parameters(model):\n"
                "    n = sum(p.numel() for p in model.parameters() if p.requires_grad)\n"
                "    model.zero_grad()\n"
                "    return n\n"
            ),
        ),
    ],
    "RunningMean": [
        Mistake(
            name="grad-mode-as-training",
            message="Whether autograd is on is not the mode: a caller may refresh the "
            "statistics under torch.no_grad() in training mode. Update when self.training is "
            "True.",
            code=_class(
                "RunningMean",
                _RUNNING_INIT
                + _RUNNING_UPDATE.replace("{mean}", "x.mean(dim=0)").replace(
                    "if self.training and len(x) > 0:",
                    "if self.training and len(x) > 0 and torch.is_grad_enabled():",
                ),
            ),
        ),
        Mistake(
            name="nanmean",
            message="x.nanmean(dim=0) skips NaN where the text's x.mean(dim=0) propagates it: "
            "use the mean the text gives.",
            code=_class(
                "RunningMean", _RUNNING_INIT + _RUNNING_UPDATE.replace("{mean}", "x.nanmean(dim=0)")
            ),
        ),
        Mistake(
            name="detached-in-eval",
            message="In eval mode x - running_mean must still pass gradients back to x: only "
            "the update goes under torch.no_grad().",
            code=_class(
                "RunningMean",
                _RUNNING_INIT
                + (
                    "    def forward(self, x):\n"
                    "        if not self.training:\n"
                    "            with torch.no_grad():\n"
                    "                return x - self.running_mean\n"
                    "        if len(x) > 0:\n"
                    "            with torch.no_grad():\n"
                    "                self.running_mean.lerp_(x.mean(dim=0), self.momentum)\n"
                    "        return x - self.running_mean\n"
                ),
            ),
        ),
    ],
    "init_weights": [
        Mistake(
            name="every-2d-weight",
            message="Kaiming init for every module with a matrix weight also redraws an "
            "nn.Embedding's (and a convolution's): initialise nn.Linear and nn.LayerNorm only, "
            "by type.",
            code=_IMPORTS
            + (
                "def init_weights(module):\n"
                "    w, b = getattr(module, 'weight', None), getattr(module, 'bias', None)\n"
                "    if isinstance(module, nn.LayerNorm):\n"
                "        if w is not None:\n"
                "            nn.init.ones_(w)\n"
                "        if b is not None:\n"
                "            nn.init.zeros_(b)\n"
                "    elif isinstance(w, torch.Tensor) and w.dim() >= 2:\n"
                "        nn.init.kaiming_normal_(w, nonlinearity='relu')\n"
                "        if b is not None:\n"
                "            nn.init.zeros_(b)\n"
            ),
        ),
    ],
    "EncoderClassifier": [
        Mistake(
            name="encoder-runs-twice",
            message="The encoder runs twice per forward pass (its hooks too, and the cost): "
            "compute features = self.encoder(x) once and give them to the head.",
            code=_encoder(
                "feats = self.encoder(x)\n"
                "        assert feats.shape[0] == x.shape[0]\n"
                "        return self.head(self.encoder(x))"
            ),
        ),
        Mistake(
            name="swap-freezes-old-head",
            message="swap_head froze the head it returns: the caller may train it again. "
            "Replace self.head and return the old one, changing nothing else.",
            code=_class("EncoderClassifier", _SWAP.replace("{extra}", "old.requires_grad_(False)")),
        ),
        Mistake(
            name="swap-zero-grad",
            message="self.zero_grad() in swap_head throws away the gradients the caller "
            "accumulated in the encoder: swap_head only replaces the head.",
            code=_class("EncoderClassifier", _SWAP.replace("{extra}", "self.zero_grad()")),
        ),
        Mistake(
            name="swap-unfreezes-new-head",
            message="new_head.requires_grad_(True) unfreezes what the caller froze in the new "
            "head: swap_head takes the module as it is.",
            code=_class(
                "EncoderClassifier", _SWAP.replace("{extra}", "new_head.requires_grad_(True)")
            ),
        ),
        Mistake(
            name="features-detached-in-eval",
            message="Detaching the features in eval mode cuts the path back to x (and the "
            "encoder): a model in eval mode still needs gradients. Return "
            "self.head(self.encoder(x)) in every mode.",
            code=_encoder(
                "feats = self.encoder(x)\n"
                "        if not self.training:\n"
                "            feats = feats.detach()\n"
                "        return self.head(feats)"
            ),
        ),
        Mistake(
            name="no-grad-in-eval",
            message="Turning autograd off in eval mode leaves the output without a graph: a "
            "model in eval mode still needs gradients. Leave autograd to the caller.",
            code=_class(
                "EncoderClassifier",
                _ENCODER.replace(
                    "        {forward}\n",
                    f"        {_NO_GRAD_IN_EVAL}\n            return self.head(self.encoder(x))\n",
                ),
            ),
        ),
    ],
    "freeze_except": [
        Mistake(
            name="names-with-duplicates",
            message="named_parameters(remove_duplicate=False) lists a tied weight under each of "
            "its names: return the names model.named_parameters() lists, each once.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    names = []\n"
                "    for name, p in model.named_parameters(remove_duplicate=False):\n"
                "        ok = any(t == '' or name.startswith(t + '.') for t in trainable)\n"
                "        p.requires_grad_(ok)\n"
                "        if ok:\n"
                "            names.append(name)\n"
                "    return names\n"
            ),
        ),
        Mistake(
            name="returns-tuple",
            message="Return the names as a list, as the text asks, not a tuple.",
            code=_freeze(
                "'' in trainable or name.startswith(tuple(t + '.' for t in trainable))"
            ).replace("    return kept\n", "    return tuple(kept)\n"),
        ),
        Mistake(
            name="buffers-require-grad",
            message="Buffers are not parameters: making BatchNorm's running statistics require "
            "grad is a change nobody asked for. Set requires_grad on named_parameters() only.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    def inside(name):\n"
                "        return any(t == '' or name.startswith(t + '.') for t in trainable)\n"
                "    names = []\n"
                "    for name, p in model.named_parameters():\n"
                "        p.requires_grad_(inside(name))\n"
                "        if inside(name):\n"
                "            names.append(name)\n"
                "    for name, b in model.named_buffers():\n"
                "        if b.is_floating_point():\n"
                "            b.requires_grad_(inside(name))\n"
                "    return names\n"
            ),
        ),
    ],
}
for _key, _extra in _REDTEAM.items():
    MISTAKES[_key] = [*MISTAKES[_key], *_extra]

# Red-team round (fresh answers from the text): autograd left on whatever x is, the
# caller's modes and flags, copies that stay on the output's device and dtype.
_ROUND3 = {
    "MLP": [
        Mistake(
            name="no-grad-unless-x-requires-grad",
            message="forward turned autograd off when x does not require grad, the usual training call: the weights then get no gradient and never train. Leave autograd alone in forward.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):\n"
                "            layers.append(nn.Linear(a, b))\n"
                "            if i < len(sizes) - 2:\n"
                "                layers.append(activation())\n"
                "        self.net = nn.Sequential(*layers)\n"
                "\n"
                "    def forward(self, x):\n"
                "        if not x.requires_grad:\n"
                "            with torch.no_grad():\n"
                "                return self.net(x)\n"
                "        return self.net(x)\n"
            ),
        ),
        Mistake(
            name="weights-detached-unless-x-requires-grad",
            message="forward used detached weights when x does not require grad: in an ordinary training step the weights get no gradient. Use the layers as they are.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))\n"
                "        self.acts = nn.ModuleList(activation() for _ in range(len(sizes) - 2))\n"
                "\n"
                "    def forward(self, x):\n"
                "        for i, layer in enumerate(self.layers):\n"
                "            w, b = layer.weight, layer.bias\n"
                "            if not x.requires_grad:\n"
                "                w, b = w.detach(), b.detach()\n"
                "            x = F.linear(x, w, b)\n"
                "            if i < len(self.acts):\n"
                "                x = self.acts[i](x)\n"
                "        return x\n"
            ),
        ),
        Mistake(
            name="functional-relu-for-default",
            message="For the default nn.ReLU the model holds no activation module (F.relu in forward): the text asks for a fresh activation() after every hidden layer, registered, so that modules() and hooks find them.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))\n"
                "        self.use_functional = activation is nn.ReLU\n"
                "        self.acts = nn.ModuleList([] if self.use_functional else [activation() for _ in range(len(sizes) - 2)])\n"
                "\n"
                "    def forward(self, x):\n"
                "        for i, layer in enumerate(self.layers[:-1]):\n"
                "            x = F.relu(layer(x)) if self.use_functional else self.acts[i](layer(x))\n"
                "        return self.layers[-1](x)\n"
            ),
        ),
    ],
    "ResidualBlock": [
        Mistake(
            name="grad-mode-follows-x",
            message="torch.set_grad_enabled(x.requires_grad) in forward: on an ordinary batch (x without requires_grad) fc1 and fc2 get no gradient and never train. Leave autograd alone in forward.",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "\n"
                "    def forward(self, x):\n"
                "        with torch.set_grad_enabled(x.requires_grad):\n"
                "            return x + self.fc2(F.relu(self.fc1(x)))\n"
            ),
        ),
    ],
    "EncoderClassifier": [
        Mistake(
            name="grad-mode-follows-x",
            message="forward switched autograd off when x does not require grad: in an ordinary training step neither the encoder nor the head gets a gradient. Leave autograd alone in forward.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "\n"
                "    def forward(self, x):\n"
                "        with torch.set_grad_enabled(x.requires_grad):\n"
                "            return self.head(self.encoder(x))\n"
                "\n"
                "    def swap_head(self, new_head):\n"
                "        old, self.head = self.head, new_head\n"
                "        return old\n"
            ),
        ),
        Mistake(
            name="flattens-sequence-features",
            message="forward flattened the encoder's features: with a sequence axis, (N, L, hidden), the head gets (N, L * hidden) and fails. Give the head the features as the encoder returns them.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "\n"
                "    def forward(self, x):\n"
                "        return self.head(self.encoder(x).flatten(1))\n"
                "\n"
                "    def swap_head(self, new_head):\n"
                "        old, self.head = self.head, new_head\n"
                "        return old\n"
            ),
        ),
        Mistake(
            name="swap-reads-encoder-parameter",
            message="swap_head read a parameter of the encoder (to move the new head): an encoder without parameters makes it raise StopIteration. swap_head only assigns self.head = new_head and returns the old one.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "\n"
                "    def forward(self, x):\n"
                "        return self.head(self.encoder(x))\n"
                "\n"
                "    def swap_head(self, new_head):\n"
                "        old = self.head\n"
                "        self.head = new_head.to(next(self.encoder.parameters()).device)\n"
                "        return old\n"
            ),
        ),
    ],
    "capture_activations": [
        Mistake(
            name="eval-then-train-was",
            message="model.eval() and then model.train(was) does not put the caller's modes back when a submodule was in the other mode, and the text says to leave the mode alone: no eval() at all.",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    for name in names:\n"
                "        def hook(m, i, o, name=name):\n"
                "            acts[name] = o.detach().clone() if isinstance(o, torch.Tensor) else tuple(t.detach().clone() for t in o)\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "        model.train(was)\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="requires-grad-true-after",
            message="Setting requires_grad_(True) on every parameter afterwards unfreezes what the caller had frozen. Leave requires_grad alone: the hooks detach what they store.",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for p in model.parameters():\n"
                "        p.requires_grad_(False)\n"
                "    for name in names:\n"
                "        def hook(m, i, o, name=name):\n"
                "            acts[name] = o.detach().clone() if isinstance(o, torch.Tensor) else tuple(t.detach().clone() for t in o)\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "        for p in model.parameters():\n"
                "            p.requires_grad_(True)\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="swallows-model-error",
            message="An except that swallows model(x)'s error hides it from the caller. Remove the hooks in finally: and let the error propagate.",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(m, i, o, name=name):\n"
                "            acts[name] = o.detach().clone() if isinstance(o, torch.Tensor) else tuple(t.detach().clone() for t in o)\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    except Exception:\n"
                "        pass\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="stores-on-cpu",
            message="The hook moved the activations to the CPU: store output.detach().clone(), which stays on the output's device.",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(m, i, o, name=name):\n"
                "            acts[name] = o.detach().cpu().clone() if isinstance(o, torch.Tensor) else tuple(t.detach().cpu().clone() for t in o)\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="stores-float32",
            message="The hook cast the activations to float32: store output.detach().clone() in the output's own dtype.",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(m, i, o, name=name):\n"
                "            acts[name] = o.detach().float().clone() if isinstance(o, torch.Tensor) else tuple(t.detach().float().clone() for t in o)\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
        Mistake(
            name="tuple-without-copies",
            message="For a tuple output the hook stored detached views, not copies: a later in-place operation on them changes what you stored. Store tuple(t.detach().clone() for t in output).",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(m, i, o, name=name):\n"
                "            acts[name] = o.detach().clone() if isinstance(o, torch.Tensor) else [t.detach() for t in o]\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
    ],
}
for _key, _extra in _ROUND3.items():
    MISTAKES[_key] = [*MISTAKES[_key], *_extra]

# Red-team round: memory that grows with each call, new tensors off the module's device.
_ROUND3B = {
    "MLP": [
        Mistake(
            name="keeps-every-output",
            message="forward appended every output to a list on the model: each output holds its graph, so memory grows with every batch. Return the output without keeping it.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):\n"
                "            layers.append(nn.Linear(a, b))\n"
                "            if i < len(sizes) - 2:\n"
                "                layers.append(activation())\n"
                "        self.net = nn.Sequential(*layers)\n"
                "        self.history = []\n"
                "\n"
                "    def forward(self, x):\n"
                "        out = self.net(x)\n"
                "        self.history.append(out)\n"
                "        return out\n"
            ),
        ),
    ],
    "init_weights": [
        Mistake(
            name="new-cpu-tensors-into-data",
            message="bias.data = torch.zeros(n) makes a new tensor on the CPU: on a GPU model the bias then lives on another device than the weight. Initialise in place (nn.init.zeros_, ones_), which keeps the device and dtype.",
            code=_IMPORTS
            + (
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                '        nn.init.kaiming_normal_(module.weight, nonlinearity="relu")\n'
                "        if module.bias is not None:\n"
                "            module.bias.data = torch.zeros(module.out_features, dtype=module.bias.dtype)\n"
                "    elif isinstance(module, nn.LayerNorm):\n"
                "        if module.weight is not None:\n"
                "            module.weight.data = torch.ones_like(module.weight)\n"
                "        if module.bias is not None:\n"
                "            module.bias.data = torch.zeros_like(module.bias)\n"
            ),
        ),
    ],
}
for _key, _extra in _ROUND3B.items():
    MISTAKES[_key] = [*MISTAKES[_key], *_extra]
