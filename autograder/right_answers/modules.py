"""Right answers for 03_modules' exercises, written unlike the solution."""

from autograder.right_answers import RightAnswer

_IMPORTS = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"

RIGHT_ANSWERS = {
    "MLP": [
        RightAnswer(
            name="sequential",
            why="Keeps the layers in an nn.Sequential (self.net) that writes forward itself; the "
            "text asks for the layers and their order, not for a ModuleList.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        self.net = nn.Sequential(*layers[:-1])  # no activation after the last\n"
                "    def forward(self, x):\n"
                "        return self.net(x)\n"
            ),
        ),
        RightAnswer(
            name="separate-lists",
            why="Linears and activations in two ModuleLists; named_parameters still lists the "
            "Linears first to last, and each hidden layer has its own activation instance.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.linears = nn.ModuleList(\n"
                "            [nn.Linear(sizes[i], sizes[i + 1]) for i in range(len(sizes) - 1)])\n"
                "        self.acts = nn.ModuleList([activation() for _ in range(len(sizes) - 2)])\n"
                "    def forward(self, x):\n"
                "        for linear, act in zip(self.linears, self.acts):\n"
                "            x = act(linear(x))\n"
                "        return self.linears[-1](x)\n"
            ),
        ),
        RightAnswer(
            name="add-module-names",
            why="Registers each layer under its own name with add_module (fc0, act0, ...) "
            "instead of a container, and walks self.children() in forward.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        for i in range(len(sizes) - 1):\n"
                "            self.add_module(f'fc{i}', nn.Linear(sizes[i], sizes[i + 1]))\n"
                "            if i < len(sizes) - 2:\n"
                "                self.add_module(f'act{i}', activation())\n"
                "    def forward(self, x):\n"
                "        for layer in self.children():\n"
                "            x = layer(x)\n"
                "        return x\n"
            ),
        ),
        RightAnswer(
            name="views-input",
            why="x.view(x.shape[0], sizes[0]) asks for the shape x already has, which any "
            "tensor (non-contiguous and empty ones too) can give: a no-op, not a mistake.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        self.layers = nn.Sequential(*layers[:-1])\n"
                "        self.in_features = sizes[0]\n"
                "    def forward(self, x):\n"
                "        return self.layers(x.view(x.shape[0], self.in_features))\n"
            ),
        ),
        RightAnswer(
            name="modulelist-cpu-0d-factor",
            why="Layers in an nn.ModuleList, the output multiplied by a 0-d CPU tensor equal to "
            "1: a 0-d tensor is a scalar on any device and keeps x's dtype.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.layers = nn.ModuleList()\n"
                "        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):\n"
                "            self.layers.append(nn.Linear(a, b))\n"
                "            if i < len(sizes) - 2:\n"
                "                self.layers.append(activation())\n"
                "    def forward(self, x):\n"
                "        for layer in self.layers:\n"
                "            x = layer(x)\n"
                "        return x * torch.tensor(1.0)  # a 0-d CPU tensor: a scalar on any device\n"
            ),
        ),
    ],
    "ResidualBlock": [
        RightAnswer(
            name="relu-module-inplace",
            why="An nn.ReLU(inplace=True) created in __init__ (the text allows an nn.ReLU); in "
            "place on fc1's fresh output, never on x.",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.act = nn.ReLU(inplace=True)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        residual = self.fc2(self.act(self.fc1(x)))\n"
                "        return x + residual\n"
            ),
        ),
        RightAnswer(
            name="torch-add-clamp",
            why="torch.add and clamp(min=0) instead of + and relu: the same function.",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        return torch.add(x, self.fc2(self.fc1(x).clamp(min=0)))\n"
            ),
        ),
        RightAnswer(
            name="nonpersistent-buffer-shift",
            why="Adds a zero shift kept in a non-persistent buffer: .to() moves it with the model"
            " and state_dict() leaves it out.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                '        self.register_buffer("shift", torch.zeros(dim), persistent=False)  # moves with .to()\n'
                "    def forward(self, x):\n"
                "        return torch.add(x, self.fc2(torch.relu(self.fc1(x)))) + self.shift\n"
            ),
        ),
        RightAnswer(
            name="where-python-scalar-relu",
            why="F.linear with fc1's own weights and the ReLU as torch.where with a Python 0.0 "
            "(a scalar, on any device), then the skip with torch.add.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "import torch.nn.functional as F\n"
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        h = F.linear(x, self.fc1.weight, self.fc1.bias)\n"
                "        return torch.add(x, self.fc2(torch.where(h > 0, h, 0.0)))\n"
            ),
        ),
    ],
    "count_trainable_parameters": [
        RightAnswer(
            name="dedupe-over-modules",
            why="Walks every module's own parameters and counts each Parameter once by id; the "
            "same set as model.parameters().",
            code=(
                "def count_trainable_parameters(model):\n"
                "    seen, total = set(), 0\n"
                "    for module in model.modules():\n"
                "        for p in module.parameters(recurse=False):\n"
                "            if p.requires_grad and id(p) not in seen:\n"
                "                seen.add(id(p))\n"
                "                total += p.numel()\n"
                "    return total\n"
            ),
        ),
        RightAnswer(
            name="named-parameters-int",
            why="named_parameters() and an explicit int(); a filter expression of its own.",
            code=(
                "def count_trainable_parameters(model):\n"
                "    trainable = [p for _, p in model.named_parameters() if p.requires_grad]\n"
                "    return int(sum(p.numel() for p in trainable))\n"
            ),
        ),
    ],
    "RunningMean": [
        RightAnswer(
            name="lerp-detached",
            why="lerp_ towards the detached batch mean: running + momentum * (mean - running) "
            "is (1 - momentum) * running + momentum * mean; no autograd history either way.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training and x.numel() > 0:\n"
                "            self.running_mean.lerp_(x.detach().mean(dim=0), self.momentum)\n"
                "        return x - self.running_mean\n"
            ),
        ),
        RightAnswer(
            name="rebind-buffer-under-no-grad",
            why="Assigns a new tensor to the buffer's name under no_grad: nn.Module keeps it "
            "registered as the buffer, so it is saved and moved as before.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training and len(x):\n"
                "            with torch.no_grad():\n"
                "                m = self.momentum\n"
                "                self.running_mean = (1 - m) * self.running_mean + m * x.mean(0)\n"
                "        return x - self.running_mean\n"
            ),
        ),
        RightAnswer(
            name="lerp-new-tensor-momentum",
            why="running_mean.lerp_ towards the batch mean, with the momentum as "
            "running_mean.new_tensor: (1 - m) * mean + m * batch.",
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
                "            m = self.running_mean.new_tensor(self.momentum)\n"
                "            with torch.no_grad():\n"
                "                self.running_mean.lerp_(x.detach().mean(dim=0).to(self.running_mean), m)\n"
                "        return x - self.running_mean\n"
            ),
        ),
        RightAnswer(
            name="cpu-0d-momentum-copy",
            why="1 - momentum as a 0-d float64 CPU tensor (a scalar on any device), the new mean "
            "copied into the buffer from x.detach().",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                '        self.register_buffer("running_mean", torch.zeros(num_features))\n'
                "        self.m = momentum\n"
                "    def forward(self, x):\n"
                "        if self.training and len(x):\n"
                "            keep = torch.tensor(1.0 - self.m, dtype=torch.float64)  # 0-d CPU: a scalar anywhere\n"
                "            new = keep * self.running_mean + self.m * x.detach().mean(0)\n"
                "            self.running_mean.copy_(new)\n"
                "        return x - self.running_mean\n"
            ),
        ),
    ],
    "capture_activations": [
        RightAnswer(
            name="module-dict-and-list-outputs",
            why="Finds the modules with dict(model.named_modules()) instead of get_submodule, "
            "removes the handles with each one's context manager, and stores a list for a "
            "tuple output (the text allows a tuple or a list).",
            code=(
                "import contextlib\n"
                "import torch\n"
                "def capture_activations(model, x, names):\n"
                "    modules = dict(model.named_modules())\n"
                "    acts = {}\n"
                "    def make(name):\n"
                "        def hook(module, inputs, output):\n"
                "            if isinstance(output, torch.Tensor):\n"
                "                acts[name] = output.detach().clone()\n"
                "            else:\n"
                "                acts[name] = [t.detach().clone() for t in output]\n"
                "        return hook\n"
                "    with contextlib.ExitStack() as stack:\n"
                "        for name in names:\n"
                "            stack.enter_context(modules[name].register_forward_hook(make(name)))\n"
                "        model(x)\n"
                "    return acts\n"
            ),
        ),
        RightAnswer(
            name="global-hook-under-no-grad",
            why="One global forward hook (register_module_forward_hook) that looks the module "
            "up by identity, removed in a finally, with the model run under torch.no_grad().",
            code=(
                "import torch\n"
                "from torch.nn.modules.module import register_module_forward_hook\n"
                "def capture_activations(model, x, names):\n"
                "    wanted = {}\n"
                "    for name in names:\n"
                "        wanted.setdefault(id(model.get_submodule(name)), []).append(name)\n"
                "    acts = {}\n"
                "    def hook(module, inputs, output):\n"
                "        for name in wanted.get(id(module), []):\n"
                "            if isinstance(output, (tuple, list)):\n"
                "                acts[name] = tuple(t.detach().clone() for t in output)\n"
                "            else:\n"
                "                acts[name] = output.detach().clone()\n"
                "    handle = register_module_forward_hook(hook)\n"
                "    try:\n"
                "        with torch.no_grad():\n"
                "            model(x)\n"
                "    finally:\n"
                "        handle.remove()\n"
                "    return acts\n"
            ),
        ),
    ],
    "init_weights": [
        RightAnswer(
            name="normal-with-computed-std",
            why="Draws normal_(0, sqrt(2 / in_features)) under no_grad and fills the others by "
            "hand: the same distribution as kaiming_normal_(fan_in, relu).",
            code=(
                "import math\n"
                "import torch\n"
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    with torch.no_grad():\n"
                "        if isinstance(module, nn.Linear):\n"
                "            module.weight.normal_(0.0, math.sqrt(2.0 / module.in_features))\n"
                "            if module.bias is not None:\n"
                "                module.bias.zero_()\n"
                "        elif isinstance(module, nn.LayerNorm):\n"
                "            if module.weight is not None:\n"
                "                module.weight.fill_(1.0)\n"
                "            if module.bias is not None:\n"
                "                module.bias.fill_(0.0)\n"
            ),
        ),
        RightAnswer(
            name="exact-type-and-leaky-default",
            why="type(module) is nn.Linear instead of isinstance, and kaiming_normal_'s default "
            "nonlinearity (leaky_relu with a=0 has ReLU's gain sqrt(2)).",
            code=(
                "from torch import nn\n"
                "def init_weights(module):\n"
                "    if type(module) is nn.Linear:\n"
                "        nn.init.kaiming_normal_(module.weight, a=0, mode='fan_in')\n"
                "        if module.bias is not None:\n"
                "            nn.init.constant_(module.bias, 0.0)\n"
                "    if type(module) is nn.LayerNorm and module.elementwise_affine:\n"
                "        nn.init.constant_(module.weight, 1.0)\n"
                "        if module.bias is not None:\n"
                "            nn.init.constant_(module.bias, 0.0)\n"
            ),
        ),
    ],
    "EncoderClassifier": [
        RightAnswer(
            name="add-module-swap",
            why="Replaces the head with add_module('head', ...) after reading the old one from "
            "_modules; the same registration as attribute assignment.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.add_module('encoder', encoder)\n"
                "        self.add_module('head', head)\n"
                "    def forward(self, x):\n"
                "        features = self.encoder(x)\n"
                "        return self.head(features)\n"
                "    def swap_head(self, new_head):\n"
                "        old = self._modules['head']\n"
                "        self.add_module('head', new_head)\n"
                "        return old\n"
            ),
        ),
        RightAnswer(
            name="setattr-and-extra-attributes",
            why="setattr for the swap, and it keeps a count of swaps as an extra plain "
            "attribute; nothing the text forbids.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder, self.head = encoder, head\n"
                "        self.swaps = 0\n"
                "    def forward(self, x):\n"
                "        return self.head(self.encoder(x))\n"
                "    def swap_head(self, new_head):\n"
                "        old = self.head\n"
                "        setattr(self, 'head', new_head)\n"
                "        self.swaps += 1\n"
                "        return old\n"
            ),
        ),
        RightAnswer(
            name="nonpersistent-buffer-unit",
            why="Multiplies by a non-persistent buffer of ones: .to() moves it with the model, "
            "and state_dict() keeps only encoder. and head. keys.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                '        self.register_buffer("unit", torch.ones(1), persistent=False)  # moves with .to()\n'
                "    def forward(self, x):\n"
                "        return self.head(self.encoder(x)) * self.unit\n"
                "    def swap_head(self, new_head):\n"
                "        old, self.head = self.head, new_head\n"
                "        return old\n"
            ),
        ),
        RightAnswer(
            name="cpu-0d-factor",
            why="Multiplies the head's output by a 0-d CPU tensor equal to 1: a scalar on any "
            "device, keeping the dtype.",
            code=(
                "import torch\n"
                "from torch import nn\n"
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                "        self.encoder = encoder\n"
                "        self.head = head\n"
                "    def forward(self, x):\n"
                "        features = self.encoder(x)\n"
                "        return self.head(features) * torch.tensor(1.0)  # a 0-d CPU tensor: a scalar anywhere\n"
                "    def swap_head(self, new_head):\n"
                "        old = self.head\n"
                "        self.head = new_head\n"
                "        return old\n"
            ),
        ),
        RightAnswer(
            name="empty-batch-new-zeros",
            why="An empty batch answered with out.new_zeros(out.shape), on the output's device, "
            "after running both parts (so the hooks run).",
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
                "        out = self.head(h)\n"
                "        if x.shape[0] == 0:  # nothing to classify: an empty result where x lives\n"
                "            return out.new_zeros(out.shape)\n"
                "        return out\n"
                "    def swap_head(self, new_head):\n"
                "        old = self.head\n"
                "        self.head = new_head\n"
                "        return old\n"
            ),
        ),
    ],
    "freeze_except": [
        RightAnswer(
            name="freeze-all-then-unfreeze-modules",
            why="Freezes the whole model, then unfreezes each named module with "
            "get_submodule(name).requires_grad_(True) ('' is the model itself), and reads the "
            "names back from named_parameters().",
            code=(
                "def freeze_except(model, trainable):\n"
                "    model.requires_grad_(False)\n"
                "    for name in trainable:\n"
                "        model.get_submodule(name).requires_grad_(True)\n"
                "    return [n for n, p in model.named_parameters() if p.requires_grad]\n"
            ),
        ),
        RightAnswer(
            name="attribute-and-equality",
            why="Sets p.requires_grad = ... as an attribute, and tests m == '' or "
            "name.startswith(m + '.') per module name.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    def inside(name):\n"
                "        return any(m == '' or name.startswith(m + '.') for m in trainable)\n"
                "    names = []\n"
                "    for name, p in model.named_parameters():\n"
                "        p.requires_grad = inside(name)\n"
                "        if p.requires_grad:\n"
                "            names.append(name)\n"
                "    return names\n"
            ),
        ),
    ],
}

_REDTEAM = {
    "MLP": [
        RightAnswer(
            name="sequential-subclass",
            why="The class is an nn.Sequential itself: super().__init__(*layers) registers the "
            "layers as children 0, 1, ... and Sequential's forward runs them in order.",
            code=_IMPORTS
            + (
                "class MLP(nn.Sequential):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        layers = []\n"
                "        for a, b in zip(sizes[:-1], sizes[1:]):\n"
                "            layers += [nn.Linear(a, b), activation()]\n"
                "        super().__init__(*layers[:-1])\n"
            ),
        ),
        RightAnswer(
            name="module-dict",
            why="Layers in an nn.ModuleDict keyed fc0, act0, ...: it keeps insertion order, so "
            "forward can run its values() in turn.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.blocks = nn.ModuleDict()\n"
                "        for i in range(len(sizes) - 1):\n"
                "            self.blocks[f'fc{i}'] = nn.Linear(sizes[i], sizes[i + 1])\n"
                "            if i < len(sizes) - 2:\n"
                "                self.blocks[f'act{i}'] = activation()\n"
                "    def forward(self, x):\n"
                "        for layer in self.blocks.values():\n"
                "            x = layer(x)\n"
                "        return x\n"
            ),
        ),
    ],
    "ResidualBlock": [
        RightAnswer(
            name="add-into-branch-output",
            why="out += x adds in place into fc2's fresh output, not into the caller's x; an "
            "in-place ReLU on fc1's output is fine too (Linear's backward needs its input).",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "    def forward(self, x):\n"
                "        out = self.fc2(F.relu(self.fc1(x), inplace=True))\n"
                "        out += x\n"
                "        return out\n"
            ),
        ),
    ],
    "count_trainable_parameters": [
        RightAnswer(
            name="math-prod-ids",
            why="math.prod(p.shape) is 1 for a 0-d Parameter (its start), and a dict keyed by "
            "id(p) over named_parameters(remove_duplicate=False) counts a tied weight once.",
            code=(
                "import math\n"
                "def count_trainable_parameters(model):\n"
                "    sizes = {}\n"
                "    for _, p in model.named_parameters(remove_duplicate=False):\n"
                "        if p.requires_grad:\n"
                "            sizes[id(p)] = math.prod(p.shape)\n"
                "    return sum(sizes.values())\n"
            ),
        ),
    ],
    "RunningMean": [
        RightAnswer(
            name="step-towards-mean",
            why="running_mean += momentum * (mean - running_mean) is the same average, written "
            "as a step towards the batch mean, in place under no_grad.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                "        self.register_buffer('running_mean', torch.zeros(num_features))\n"
                "    def forward(self, x):\n"
                "        if self.training and x.numel() > 0:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean += self.momentum * (x.mean(dim=0) - self.running_mean)\n"
                "        return x.sub(self.running_mean)\n"
            ),
        ),
    ],
    "capture_activations": [
        RightAnswer(
            name="partial-hooks-no-grad-lists",
            why="Hooks made with functools.partial, registered inside the try, model(x) run "
            "under torch.no_grad() (the copies are detached anyway), a tuple output stored as "
            "a list, handles popped as they are removed.",
            code=(
                "import functools\n"
                "import torch\n"
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    def store(name, module, inputs, output):\n"
                "        if isinstance(output, (tuple, list)):\n"
                "            acts[name] = [o.detach().clone() for o in output]\n"
                "        else:\n"
                "            acts[name] = output.detach().clone()\n"
                "    try:\n"
                "        for name in names:\n"
                "            hook = functools.partial(store, name)\n"
                "            handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "        with torch.no_grad():\n"
                "            model(x)\n"
                "    finally:\n"
                "        while handles:\n"
                "            handles.pop().remove()\n"
                "    return acts\n"
            ),
        ),
    ],
    "init_weights": [
        RightAnswer(
            name="match-constant",
            why="A match statement on the module's class; nn.init.constant_ for the zeros and "
            "ones, mode='fan_in' spelled out.",
            code=_IMPORTS
            + (
                "def init_weights(module):\n"
                "    match module:\n"
                "        case nn.Linear():\n"
                "            nn.init.kaiming_normal_(module.weight, mode='fan_in', nonlinearity='relu')\n"
                "            if module.bias is not None:\n"
                "                nn.init.constant_(module.bias, 0.0)\n"
                "        case nn.LayerNorm():\n"
                "            for p, v in ((module.weight, 1.0), (module.bias, 0.0)):\n"
                "                if p is not None:\n"
                "                    nn.init.constant_(p, v)\n"
                "        case _:\n"
                "            pass\n"
            ),
        ),
    ],
    "freeze_except": [
        RightAnswer(
            name="clears-frozen-grads",
            why="Also sets .grad = None on the parameters it freezes, as section 9 advises (an "
            "optimizer then skips them); the contract lets gradients go where the text asks.",
            code=(
                "def freeze_except(model, trainable):\n"
                "    names = []\n"
                "    for name, p in model.named_parameters():\n"
                "        ok = any(t == '' or name.startswith(t + '.') for t in trainable)\n"
                "        p.requires_grad_(ok)\n"
                "        if ok:\n"
                "            names.append(name)\n"
                "        else:\n"
                "            p.grad = None\n"
                "    return names\n"
            ),
        ),
        RightAnswer(
            name="name-parts",
            why="Compares the dotted parts: a parameter is inside m when its name's first "
            "parts are m's parts ('' has none, so it covers everything).",
            code=(
                "def freeze_except(model, trainable):\n"
                "    keep = [t.split('.') if t else [] for t in trainable]\n"
                "    out = []\n"
                "    for name, p in model.named_parameters():\n"
                "        parts = name.split('.')\n"
                "        on = any(parts[: len(k)] == k for k in keep)\n"
                "        p.requires_grad_(on)\n"
                "        if on:\n"
                "            out.append(name)\n"
                "    return out\n"
            ),
        ),
    ],
}
for _key, _extra in _REDTEAM.items():
    RIGHT_ANSWERS[_key] = [*RIGHT_ANSWERS[_key], *_extra]

# Red-team round: other APIs for the same answers.
_ROUND3 = {
    "MLP": [
        RightAnswer(
            name="moduledict-in-order",
            why="Keeps linear layers and activations in one nn.ModuleDict, run in insertion order.",
            code=_IMPORTS
            + (
                "class MLP(nn.Module):\n"
                "    def __init__(self, sizes, activation=nn.ReLU):\n"
                "        super().__init__()\n"
                "        self.blocks = nn.ModuleDict()\n"
                "        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):\n"
                '            self.blocks[f"lin{i}"] = nn.Linear(a, b)\n'
                "            if i < len(sizes) - 2:\n"
                '                self.blocks[f"act{i}"] = activation()\n'
                "\n"
                "    def forward(self, x):\n"
                "        for m in self.blocks.values():\n"
                "            x = m(x)\n"
                "        return x\n"
            ),
        ),
    ],
    "ResidualBlock": [
        RightAnswer(
            name="functional-linear-clamp",
            why="Calls F.linear with fc1's and fc2's parameters, clamp_min(0) for the ReLU and torch.add for the skip.",
            code=_IMPORTS
            + (
                "class ResidualBlock(nn.Module):\n"
                "    def __init__(self, dim, hidden):\n"
                "        super().__init__()\n"
                "        self.fc1 = nn.Linear(dim, hidden)\n"
                "        self.fc2 = nn.Linear(hidden, dim)\n"
                "\n"
                "    def forward(self, x):\n"
                "        h = F.linear(x, self.fc1.weight, self.fc1.bias).clamp_min(0)\n"
                "        return torch.add(x, F.linear(h, self.fc2.weight, self.fc2.bias))\n"
            ),
        ),
    ],
    "count_trainable_parameters": [
        RightAnswer(
            name="dedup-by-data-ptr",
            why="Keys a dict by storage address (data_ptr), another way to count a shared weight once.",
            code=_IMPORTS
            + (
                "def count_trainable_parameters(model):\n"
                "    seen = {}\n"
                "    for p in model.parameters():\n"
                "        if p.requires_grad:\n"
                "            seen[p.data_ptr() if p.numel() else id(p)] = p.numel()\n"
                "    return int(sum(seen.values()))\n"
            ),
        ),
        RightAnswer(
            name="math-prod-of-shape",
            why="math.prod(p.shape) for the element count (1 for a 0-d parameter).",
            code=_IMPORTS
            + (
                "def count_trainable_parameters(model):\n"
                "    import math\n"
                "    return sum(math.prod(p.shape) for p in model.parameters() if p.requires_grad)\n"
            ),
        ),
    ],
    "RunningMean": [
        RightAnswer(
            name="ema-as-delta",
            why="running_mean += momentum * (batch_mean - running_mean) under no_grad: the same EMA written as a step.",
            code=_IMPORTS
            + (
                "class RunningMean(nn.Module):\n"
                "    def __init__(self, num_features, momentum=0.1):\n"
                "        super().__init__()\n"
                "        self.momentum = momentum\n"
                '        self.register_buffer("running_mean", torch.zeros(num_features))\n'
                "\n"
                "    def forward(self, x):\n"
                "        if self.training and x.shape[0] > 0:\n"
                "            with torch.no_grad():\n"
                "                self.running_mean += self.momentum * (x.mean(dim=0) - self.running_mean)\n"
                "        return x - self.running_mean\n"
            ),
        ),
    ],
    "capture_activations": [
        RightAnswer(
            name="global-module-hook",
            why="One global forward hook (register_module_forward_hook) that picks the wanted modules by identity, removed in finally.",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    wanted = {id(model.get_submodule(n)): [] for n in names}\n"
                "    for n in names:\n"
                "        wanted[id(model.get_submodule(n))].append(n)\n"
                "    acts = {}\n"
                "    def hook(m, i, o):\n"
                "        for n in wanted.get(id(m), []):\n"
                "            acts[n] = o.detach().clone() if isinstance(o, torch.Tensor) else tuple(t.detach().clone() for t in o)\n"
                "    h = torch.nn.modules.module.register_module_forward_hook(hook)\n"
                "    try:\n"
                "        model(x)\n"
                "    finally:\n"
                "        h.remove()\n"
                "    return acts\n"
            ),
        ),
        RightAnswer(
            name="root-from-return-value",
            why="Takes the '' entry from what model(x) returns instead of a hook on the model.",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                '        if name == "":\n'
                "            continue\n"
                "        def hook(m, i, o, name=name):\n"
                "            acts[name] = o.detach().clone() if isinstance(o, torch.Tensor) else tuple(t.detach().clone() for t in o)\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        out = model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                '    if "" in names:\n'
                '        acts[""] = out.detach().clone() if isinstance(out, torch.Tensor) else tuple(t.detach().clone() for t in out)\n'
                "    return acts\n"
            ),
        ),
        RightAnswer(
            name="no-grad-clone-only",
            why="Runs model(x) under torch.no_grad() and stores output.clone(): nothing to detach from.",
            code=_IMPORTS
            + (
                "def capture_activations(model, x, names):\n"
                "    acts, handles = {}, []\n"
                "    for name in names:\n"
                "        def hook(m, i, o, name=name):\n"
                "            acts[name] = o.clone() if isinstance(o, torch.Tensor) else tuple(t.clone() for t in o)\n"
                "        handles.append(model.get_submodule(name).register_forward_hook(hook))\n"
                "    try:\n"
                "        with torch.no_grad():\n"
                "            model(x)\n"
                "    finally:\n"
                "        for h in handles:\n"
                "            h.remove()\n"
                "    return acts\n"
            ),
        ),
    ],
    "init_weights": [
        RightAnswer(
            name="match-leaky-relu-a0",
            why="A match statement; kaiming_normal_ with nonlinearity='leaky_relu' and a=0, which is ReLU's gain.",
            code=_IMPORTS
            + (
                "def init_weights(module):\n"
                "    match module:\n"
                "        case nn.Linear():\n"
                '            nn.init.kaiming_normal_(module.weight, a=0, mode="fan_in", nonlinearity="leaky_relu")\n'
                "            if module.bias is not None:\n"
                "                nn.init.constant_(module.bias, 0.0)\n"
                "        case nn.LayerNorm():\n"
                "            for t, v in ((module.weight, 1.0), (module.bias, 0.0)):\n"
                "                if t is not None:\n"
                "                    nn.init.constant_(t, v)\n"
                "        case _:\n"
                "            pass\n"
            ),
        ),
        RightAnswer(
            name="layernorm-reset-parameters",
            why="LayerNorm.reset_parameters() sets ones and zeros (and skips what is None).",
            code=_IMPORTS
            + (
                "def init_weights(module):\n"
                "    if isinstance(module, nn.Linear):\n"
                '        nn.init.kaiming_normal_(module.weight.data, nonlinearity="relu")\n'
                "        if module.bias is not None:\n"
                "            module.bias.data.zero_()\n"
                "    elif isinstance(module, nn.LayerNorm):\n"
                "        module.reset_parameters()\n"
            ),
        ),
    ],
    "EncoderClassifier": [
        RightAnswer(
            name="add-module-and-modules-dict",
            why="add_module in __init__, swap_head through self._modules['head'].",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                '        self.add_module("encoder", encoder)\n'
                '        self.add_module("head", head)\n'
                "\n"
                "    def forward(self, x):\n"
                "        features = self.encoder(x)\n"
                "        return self.head(features)\n"
                "\n"
                "    def swap_head(self, new_head):\n"
                '        old = self._modules["head"]\n'
                '        self._modules["head"] = new_head\n'
                "        return old\n"
            ),
        ),
        RightAnswer(
            name="register-module",
            why="register_module for both parts and for the new head.",
            code=_IMPORTS
            + (
                "class EncoderClassifier(nn.Module):\n"
                "    def __init__(self, encoder, head):\n"
                "        super().__init__()\n"
                '        self.register_module("encoder", encoder)\n'
                '        self.register_module("head", head)\n'
                "\n"
                "    def forward(self, x):\n"
                "        return self.head(self.encoder(x))\n"
                "\n"
                "    def swap_head(self, new_head):\n"
                "        old = self.head\n"
                '        self.register_module("head", new_head)\n'
                "        return old\n"
            ),
        ),
    ],
    "freeze_except": [
        RightAnswer(
            name="split-name-parts",
            why="Compares the dotted name's parts with the module name's parts.",
            code=_IMPORTS
            + (
                "def freeze_except(model, trainable):\n"
                '    wanted = [t.split(".") if t else [] for t in trainable]\n'
                "    result = []\n"
                "    for name, p in model.named_parameters():\n"
                '        parts = name.split(".")\n'
                "        ok = any(parts[: len(w)] == w and len(parts) > len(w) for w in wanted)\n"
                "        p.requires_grad_(ok)\n"
                "        if ok:\n"
                "            result.append(name)\n"
                "    return list(result)\n"
            ),
        ),
    ],
}
for _key, _extra in _ROUND3.items():
    RIGHT_ANSWERS[_key] = [*RIGHT_ANSWERS[_key], *_extra]
