"""Right answers unlike the solution for 07_debugging's exercises (each must pass)."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "overfit_one_batch": [
        RightAnswer(
            name="while-loop-model-zero-grad",
            why="A while loop, model.zero_grad() instead of optimizer.zero_grad(), float(loss) "
            "instead of .item(), and an explicit model.train(): the text asks for one Adam, "
            "zeroed gradients and Python floats, not for these exact calls.",
            code="import torch\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    model.train()\n"
            "    optimizer = torch.optim.Adam(params=list(model.parameters()), lr=lr)\n"
            "    losses = []\n"
            "    while len(losses) < num_steps:\n"
            "        model.zero_grad(set_to_none=False)\n"
            "        loss = loss_fn(model(x), y)\n"
            "        loss.backward()\n"
            "        losses.append(float(loss.detach()))\n"
            "        optimizer.step()\n"
            "    return losses\n",
        ),
        RightAnswer(
            name="adam-closure",
            why="optimizer.step(closure): Adam calls the closure (zero_grad, forward, backward) and "
            "returns its loss, the loss before that step's update, as the text asks.",
            code="import torch\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    def closure():\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        loss.backward()\n"
            "        return loss\n"
            "    return [optimizer.step(closure).item() for _ in range(num_steps)]\n",
        ),
    ],
    "clipped_step": [
        RightAnswer(
            name="manual-total-norm",
            why="Computes the total norm and the clipping factor by hand, as clip_grad_norm_ does "
            "(max_norm / (norm + 1e-6), capped at 1), and returns float(norm): the same update "
            "and value.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    model.zero_grad()\n"
            "    loss.backward()\n"
            "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "    total = torch.linalg.vector_norm(\n"
            "        torch.stack([torch.linalg.vector_norm(g) for g in grads]))\n"
            "    factor = torch.clamp(max_norm / (total + 1e-6), max=1.0)\n"
            "    with torch.no_grad():\n"
            "        for g in grads:\n"
            "            g.mul_(factor)\n"
            "    optimizer.step()\n"
            "    return float(total)\n",
        ),
    ],
    "grad_norms": [
        RightAnswer(
            name="linalg-ordered-dict",
            why="torch.linalg.vector_norm over all entries and an OrderedDict built in a loop: "
            "the text asks for a dict of floats in named_parameters order.",
            code="import collections, torch\n"
            "def grad_norms(model):\n"
            "    out = collections.OrderedDict()\n"
            "    for name, p in model.named_parameters():\n"
            "        if p.grad is None:\n"
            "            continue\n"
            "        out[name] = torch.linalg.vector_norm(p.grad).item()\n"
            "    return out\n",
        ),
        RightAnswer(
            name="numpy-norm",
            why="The norm via NumPy on a CPU copy: np.linalg.norm of the flattened gradient is the "
            "same L2 norm, in the gradient's dtype.",
            code="import numpy as np\n"
            "def grad_norms(model):\n"
            "    return {name: float(np.linalg.norm(p.grad.detach().cpu().numpy().ravel()))\n"
            "            for name, p in model.named_parameters() if p.grad is not None}\n",
        ),
    ],
    "diagnose_gradients": [
        RightAnswer(
            name="torch-and-division",
            why="Tests with torch.isfinite on a float64 tensor and compares the ratio first / "
            "largest (guarding a zero largest) instead of multiplying: the same tests in the same "
            "order.",
            code="import torch\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    t = torch.tensor(list(norms.values()), dtype=torch.float64)\n"
            "    if not bool(torch.isfinite(t).all()) or bool((t > explode_norm).any()):\n"
            "        return 'exploding'\n"
            "    largest = float(t.max())\n"
            "    first = float(t[0])\n"
            "    if largest == 0 or first / largest <= vanish_ratio:\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
        RightAnswer(
            name="numpy-next-iter",
            why="NumPy's isfinite and max over an array, the first norm taken with next(iter(...)): "
            "the same three tests in the same order.",
            code="import numpy as np\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = np.array(list(norms.values()), dtype=np.float64)\n"
            "    if not np.isfinite(values).all() or (values > explode_norm).any():\n"
            "        return 'exploding'\n"
            "    if next(iter(norms.values())) <= vanish_ratio * values.max():\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
    ],
    "first_nonfinite_module": [
        RightAnswer(
            name="global-module-hook",
            why="One global forward hook (register_module_forward_hook) with a module -> name "
            "table instead of a hook per module, removed in finally; it fires in the same order.",
            code="import torch\n"
            "from torch.nn.modules.module import register_module_forward_hook\n"
            "def first_nonfinite_module(model, x):\n"
            "    names = {id(m): n for n, m in model.named_modules() if n}\n"
            "    found = []\n"
            "    def hook(module, inputs, output):\n"
            "        name = names.get(id(module))\n"
            "        if name is None or found:\n"
            "            return\n"
            "        outs = output if isinstance(output, (tuple, list)) else [output]\n"
            "        if not all(bool(torch.isfinite(o).all()) for o in outs):\n"
            "            found.append(name)\n"
            "    handle = register_module_forward_hook(hook)\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        handle.remove()\n"
            "    return found[0] if found else None\n",
        ),
        RightAnswer(
            name="exit-stack-restores-mode",
            why="Handles kept in a contextlib.ExitStack, the model switched to eval() for the "
            "look and its mode restored afterwards, NaN/inf tested with isnan | isinf: the text "
            "asks for hooks removed and the first culprit, which this gives.",
            code="import contextlib, torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    culprit = None\n"
            "    def make_hook(name):\n"
            "        def hook(module, inputs, output):\n"
            "            nonlocal culprit\n"
            "            outs = list(output) if isinstance(output, (tuple, list)) else [output]\n"
            "            if culprit is None and any(\n"
            "                    bool((torch.isnan(o) | torch.isinf(o)).any()) for o in outs):\n"
            "                culprit = name\n"
            "        return hook\n"
            "    modes = {m: m.training for m in model.modules()}\n"
            "    with contextlib.ExitStack() as stack:\n"
            "        for name, module in model.named_modules():\n"
            "            if name:\n"
            "                stack.callback(module.register_forward_hook(make_hook(name)).remove)\n"
            "        model.eval()\n"
            "        try:\n"
            "            with torch.no_grad():\n"
            "                model(x)\n"
            "        finally:\n"
            "            for m, mode in modes.items():\n"
            "                m.train(mode)\n"
            "    return culprit\n",
        ),
    ],
    "accumulated_step": [
        RightAnswer(
            name="sum-losses-divide-grads",
            why="Slices with range() and backpropagates each piece's loss times its size, then "
            "divides the summed gradients by N before the step: mathematically the same step "
            "as scaling each loss by len(x_chunk) / len(x).",
            code="import torch\n"
            "def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    optimizer.zero_grad()\n"
            "    n = x.shape[0]\n"
            "    total = 0.0\n"
            "    for start in range(0, n, micro_batch):\n"
            "        xc, yc = x[start:start + micro_batch], y[start:start + micro_batch]\n"
            "        loss = loss_fn(model(xc), yc) * xc.shape[0]\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    with torch.no_grad():\n"
            "        for p in model.parameters():\n"
            "            if p.grad is not None:\n"
            "                p.grad.div_(n)\n"
            "    optimizer.step()\n"
            "    return total / n\n",
        ),
    ],
    "autocast_step": [
        RightAnswer(
            name="amp-autocast-copied-checkpoint",
            why="torch.amp.autocast, the dtype chosen with x.is_cuda, a truthiness test for "
            "resume, set_to_none zeroing, float() returns and a deep-copied checkpoint (a "
            "snapshot, safe to keep while training goes on).",
            code="import copy, torch\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    if resume:\n"
            "        for key, obj in (('model', model), ('optimizer', optimizer), "
            "('scaler', scaler)):\n"
            "            obj.load_state_dict(resume[key])\n"
            "    low = torch.float16 if x.is_cuda else torch.bfloat16\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            "    with torch.amp.autocast(device_type=x.device.type, dtype=low):\n"
            "        logits = model(x)\n"
            "    loss = loss_fn(logits.float(), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_norm)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    snapshot = copy.deepcopy({'model': model.state_dict(), "
            "'optimizer': optimizer.state_dict(), 'scaler': scaler.state_dict()})\n"
            "    return {'loss': float(loss.detach()), 'grad_norm': float(total), "
            "'checkpoint': snapshot}\n",
        ),
        RightAnswer(
            name="default-dtype-backward-inside",
            why="torch.autocast(x.device.type) without a dtype (each device type's default is "
            "the one the text asks for), the backward pass inside the autocast block, and a "
            "norm measured by hand on the unscaled gradients before clipping.",
            code="import torch\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    if resume is not None:\n"
            "        model.load_state_dict(resume['model'])\n"
            "        optimizer.load_state_dict(resume['optimizer'])\n"
            "        scaler.load_state_dict(resume['scaler'])\n"
            "    model.zero_grad()\n"
            "    with torch.autocast(x.device.type):\n"
            "        loss = loss_fn(model(x), y)\n"
            "        scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "    norm = torch.linalg.vector_norm(torch.stack([g.norm() for g in grads]))\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    return dict(loss=loss.item(), grad_norm=norm.item(), checkpoint=dict(\n"
            "        model=model.state_dict(), optimizer=optimizer.state_dict(),\n"
            "        scaler=scaler.state_dict()))\n",
        ),
    ],
    "per_sample_grad_norms": [
        RightAnswer(
            name="loop-autograd-grad",
            why="The loop the text checks against: one torch.autograd.grad per example over the "
            "trainable parameters (it never touches .grad), norms stacked.",
            code="import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    params = [p for p in model.parameters() if p.requires_grad]\n"
            "    norms = []\n"
            "    for i in range(len(x)):\n"
            "        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])\n"
            "        grads = torch.autograd.grad(loss, params, allow_unused=True)\n"
            "        flat = [g.flatten() for g in grads if g is not None]\n"
            "        norms.append(torch.cat(flat).norm())\n"
            "    return torch.stack(norms)\n",
        ),
        RightAnswer(
            name="loop-zero-grad-backward",
            why="A loop with model.zero_grad() before each example's backward, None gradients "
            "(frozen, unused) skipped, squared norms summed per parameter.",
            code="import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    out = []\n"
            "    for x_one, y_one in zip(x, y):\n"
            "        model.zero_grad()\n"
            "        loss_fn(model(x_one[None]), y_one[None]).backward()\n"
            "        sq = sum(p.grad.pow(2).sum() for p in model.parameters() if p.grad is not None)\n"
            "        out.append(sq.sqrt())\n"
            "    model.zero_grad()\n"
            "    return torch.stack(out)\n",
        ),
        RightAnswer(
            name="func-tuple-of-params",
            why="torch.func with the parameters as a tuple (argnums=0), the example kept 1-d "
            "until the call, squared norms summed over parameters.",
            code="import torch\n"
            "from torch.func import functional_call, grad, vmap\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    names = [n for n, p in model.named_parameters() if p.requires_grad]\n"
            "    values = tuple(p.detach() for n, p in model.named_parameters() if p.requires_grad)\n"
            "    def loss_of(values, xi, yi):\n"
            "        out = functional_call(model, dict(zip(names, values)), xi[None])\n"
            "        return loss_fn(out, yi[None])\n"
            "    grads = vmap(grad(loss_of), in_dims=(None, 0, 0))(values, x, y)\n"
            "    return torch.stack([g.reshape(len(x), -1).pow(2).sum(1) for g in grads]).sum(0).sqrt()\n",
        ),
    ],
    "set_seed": [
        RightAnswer(
            name="one-liners-and-cuda-all",
            why="torch.random.manual_seed, an explicit torch.cuda.manual_seed_all, seed & "
            "0xFFFFFFFF for NumPy (the same as seed % 2**32) and the generator seeded in one "
            "expression (manual_seed returns the generator).",
            code="import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed & 0xFFFFFFFF)\n"
            "    torch.random.manual_seed(seed)\n"
            "    torch.cuda.manual_seed_all(seed)\n"
            "    return torch.Generator(device='cpu').manual_seed(seed)\n",
        ),
        RightAnswer(
            name="numpy-seed-sequence-deterministic",
            why="Seeds NumPy's global generator through np.random.seed with a 32-bit reduction of "
            "the seed by SeedSequence, also switches cuDNN to deterministic kernels: the global "
            "generators still repeat for a seed and change with it.",
            code="import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(int(np.random.SeedSequence(seed).generate_state(1)[0]))\n"
            "    torch.manual_seed(seed)\n"
            "    torch.backends.cudnn.benchmark = False\n"
            "    generator = torch.Generator()\n"
            "    generator.manual_seed(seed)\n"
            "    return generator\n",
        ),
    ],
}

# Device red team (issue #27): right answers that keep the norms on x's device in unusual ways.
RIGHT_ANSWERS["per_sample_grad_norms"] += [
    RightAnswer(
        name="new-zeros-filled-by-index",
        why="Fills a buffer made with x.new_zeros(n, dtype=the parameters' dtype) (on x's device) one example at a time, the squares summed in float64 and cast back on assignment: the same norms where x lives.",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    params = [p for p in model.parameters() if p.requires_grad]\n"
            "    out = x.new_zeros(len(x), dtype=params[0].dtype)\n"
            "    for i in range(len(x)):\n"
            "        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])\n"
            "        grads = torch.autograd.grad(loss, params, allow_unused=True)\n"
            "        sq = sum((g.double() ** 2).sum() for g in grads if g is not None)\n"
            "        out[i] = sq.sqrt()\n"
            "    return out\n"
        ),
    ),
    RightAnswer(
        name="func-cpu-index-zeros-like",
        why="torch.func as in the lesson, the running sum started with torch.zeros_like of a gradient slice (on its device) and the result read through a CPU index tensor (a GPU accepts CPU indices).",
        code=(
            "import torch\n"
            "from torch.func import functional_call, grad, vmap\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}\n"
            "    def one(p, xi, yi):\n"
            "        return loss_fn(functional_call(model, p, xi.unsqueeze(0)), yi.unsqueeze(0))\n"
            "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
            "    total = torch.zeros_like(next(iter(grads.values())).flatten(1)[:, 0])\n"
            "    for g in grads.values():\n"
            "        total = total + g.flatten(1).pow(2).sum(1)\n"
            "    order = torch.arange(len(x))  # CPU indices\n"
            "    return total.sqrt()[order]\n"
        ),
    ),
]

# Red-team round 3 (issue #27): one fresh right answer per exercise, written unlike the solution.
RIGHT_ANSWERS["overfit_one_batch"] += [
    RightAnswer(
        name="grads-set-to-none-tolist",
        why="Gradients cleared by p.grad = None, and the loss read with .detach().cpu().tolist(), which gives a Python float for a 0-d tensor.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    opt = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    out = []\n"
            "    for step in range(num_steps):\n"
            "        for p in model.parameters():\n"
            "            p.grad = None\n"
            "        l = loss_fn(model(x), y)\n"
            "        out.append(l.detach().cpu().tolist())\n"
            "        l.backward()\n"
            "        opt.step()\n"
            "    return out\n"
        ),
    ),
]
RIGHT_ANSWERS["clipped_step"] += [
    RightAnswer(
        name="get-total-norm-then-clip-with-norm",
        why="The two halves of clip_grad_norm_: nn.utils.get_total_norm, then nn.utils.clip_grads_with_norm_ with that norm.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    params = list(model.parameters())\n"
            "    total = nn.utils.get_total_norm([p.grad for p in params if p.grad is not None])\n"
            "    nn.utils.clip_grads_with_norm_(params, max_norm, total)\n"
            "    optimizer.step()\n"
            "    return float(total)\n"
        ),
    ),
    RightAnswer(
        name="zero-grad-set-to-none-false",
        why="optimizer.zero_grad(set_to_none=False) fills zeros instead of None: an unused parameter keeps a zero gradient, which SGD applies as no change.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad(set_to_none=False)\n"
            "    loss.backward()\n"
            "    n = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    return n.item()\n"
        ),
    ),
]
RIGHT_ANSWERS["grad_norms"] += [
    RightAnswer(
        name="square-sum-sqrt",
        why="The L2 norm written out (square, sum, sqrt) in the gradient's own dtype, in a plain loop.",
        code=(
            "import torch, math\n"
            "def grad_norms(model):\n"
            "    out = {}\n"
            "    for n, p in model.named_parameters():\n"
            "        if p.grad is None:\n"
            "            continue\n"
            "        out[n] = p.grad.square().sum().sqrt().item()\n"
            "    return out\n"
        ),
    ),
]
RIGHT_ANSWERS["diagnose_gradients"] += [
    RightAnswer(
        name="negated-comparisons",
        why="not (v <= explode_norm) is True for NaN as well as for norms above it; the vanishing test written as not (first > ratio * largest).",
        code=(
            "import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    vals = list(norms.values())\n"
            "    if any(not (math.isfinite(v) and v <= explode_norm) for v in vals):\n"
            "        return 'exploding'\n"
            "    return 'vanishing' if not (vals[0] > vanish_ratio * max(vals)) else 'healthy'\n"
        ),
    ),
]
RIGHT_ANSWERS["first_nonfinite_module"] += [
    RightAnswer(
        name="exit-stack-one-hook",
        why="One hook for every module (its name looked up by id), each handle's remove registered on a contextlib.ExitStack, and the first culprit only kept.",
        code=(
            "import contextlib\n"
            "import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    found = []\n"
            "    names = {id(m): n for n, m in model.named_modules() if n}\n"
            "    def hook(m, args, out):\n"
            "        if found:\n"
            "            return\n"
            "        leaves = list(out) if isinstance(out, (tuple, list)) else [out]\n"
            "        if any(torch.is_tensor(t) and not bool(torch.isfinite(t).all()) for t in leaves):\n"
            "            found.append(names[id(m)])\n"
            "    with contextlib.ExitStack() as stack:\n"
            "        for n, m in model.named_modules():\n"
            "            if n:\n"
            "                stack.callback(m.register_forward_hook(hook).remove)\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    return found[0] if found else None\n"
        ),
    ),
]
RIGHT_ANSWERS["accumulated_step"] += [
    RightAnswer(
        name="while-slices",
        why="A while loop over slices x[start:stop], gradients cleared by p.grad = None, each piece's loss scaled by its row share.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    for p in model.parameters():\n"
            "        p.grad = None\n"
            "    n, start, total = x.shape[0], 0, 0.0\n"
            "    while start < n:\n"
            "        stop = min(start + micro_batch, n)\n"
            "        part = loss_fn(model(x[start:stop]), y[start:stop])\n"
            "        share = (stop - start) / n\n"
            "        (part * share).backward()\n"
            "        total += part.item() * share\n"
            "        start = stop\n"
            "    optimizer.step()\n"
            "    return total\n"
        ),
    ),
]
RIGHT_ANSWERS["autocast_step"] += [
    RightAnswer(
        name="autocast-default-dtype",
        why="torch.autocast(x.device.type) without dtype: its defaults are bfloat16 on the CPU and float16 on CUDA, what the text asks for.",
        code=(
            "import torch, copy\n"
            "from torch import nn\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    if resume is not None:\n"
            "        model.load_state_dict(resume['model'])\n"
            "        optimizer.load_state_dict(resume['optimizer'])\n"
            "        scaler.load_state_dict(resume['scaler'])\n"
            "    optimizer.zero_grad()\n"
            "    with torch.autocast(x.device.type):\n"
            "        out = model(x)\n"
            "        loss = loss_fn(out, y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    ck = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'scaler': scaler.state_dict()}\n"
            "    return {'loss': loss.item(), 'grad_norm': norm.item(), 'checkpoint': ck}\n"
        ),
    ),
]
RIGHT_ANSWERS["set_seed"] += [
    RightAnswer(
        name="generator-from-global-state",
        why="A new torch.Generator given the global generator's state just after torch.manual_seed(seed): the same numbers as one seeded with seed, and a separate generator.",
        code=(
            "import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed & 0xFFFFFFFF)\n"
            "    torch.manual_seed(seed)\n"
            "    g = torch.Generator()\n"
            "    g.set_state(torch.get_rng_state())\n"
            "    return g\n"
        ),
    ),
]
RIGHT_ANSWERS["per_sample_grad_norms"] += [
    RightAnswer(
        name="loop-norm-of-norms",
        why="A loop of torch.autograd.grad per example, the total norm taken as the norm of the parameters' norms (the same value).",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    params = [p for p in model.parameters() if p.requires_grad]\n"
            "    out = []\n"
            "    for i in range(x.shape[0]):\n"
            "        l = loss_fn(model(x[i:i+1]), y[i:i+1])\n"
            "        gs = torch.autograd.grad(l, params, allow_unused=True)\n"
            "        out.append(torch.linalg.vector_norm(torch.stack([g.norm() for g in gs if g is not None])))\n"
            "    return torch.stack(out)\n"
        ),
    ),
]
RIGHT_ANSWERS["overfit_one_batch"] += [
    RightAnswer(
        name="detect-anomaly-context",
        why="The loop inside with torch.autograd.detect_anomaly(check_nan=True): slower, but the context manager switches anomaly detection off again on the way out, so no global setting is left changed.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    with torch.autograd.detect_anomaly(check_nan=True):\n"
            "        for _ in range(num_steps):\n"
            "            optimizer.zero_grad()\n"
            "            loss = loss_fn(model(x), y)\n"
            "            losses.append(loss.item())\n"
            "            loss.backward()\n"
            "            optimizer.step()\n"
            "    return losses\n"
        ),
    ),
]


# red team, round 2
RIGHT_ANSWERS["first_nonfinite_module"] += [
    RightAnswer(
        name="global-hook-raise",
        why="One global module forward hook (register_module_forward_hook), filtered to the model's submodules, that raises a private exception at the first non-finite output to stop the forward pass early; its handle removed in finally.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\nclass _Found(Exception):\n    pass\ndef first_nonfinite_module(model, x):\n    names = {m: n for n, m in model.named_modules() if n}\n    def hook(m, i, o):\n        if m not in names:\n            return\n        outs = o if isinstance(o, (tuple, list)) else (o,)\n        for t in outs:\n            if isinstance(t, torch.Tensor) and not bool(torch.isfinite(t).all()):\n                raise _Found(names[m])\n    handle = torch.nn.modules.module.register_module_forward_hook(hook)\n    try:\n        with torch.no_grad():\n            model(x)\n    except _Found as f:\n        return f.args[0]\n    finally:\n        handle.remove()\n    return None\n",
    ),
]
RIGHT_ANSWERS["clipped_step"] += [
    RightAnswer(
        name="manual-clip",
        why="The total norm and the clip coefficient computed by hand (vector_norm of the per-parameter norms, clamp(max_norm / (norm + 1e-6), max=1)), as clip_grad_norm_ does.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef clipped_step(model, optimizer, loss, max_norm):\n    optimizer.zero_grad()\n    loss.backward()\n    grads = [p.grad for p in model.parameters() if p.grad is not None]\n    if grads:\n        total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))\n    else:\n        total = torch.tensor(0.0)\n    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)\n    for g in grads:\n        g.mul_(coef.to(g.dtype).to(g.device))\n    optimizer.step()\n    return total.item()\n",
    ),
]
RIGHT_ANSWERS["per_sample_grad_norms"] += [
    RightAnswer(
        name="loop-autograd-grad-summed-squares",
        why="A loop of torch.autograd.grad over the trainable parameters: it never touches .grad, and the norms keep the parameters' dtype.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef per_sample_grad_norms(model, loss_fn, x, y):\n    params = [p for p in model.parameters() if p.requires_grad]\n    rows = []\n    for i in range(x.shape[0]):\n        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])\n        gs = torch.autograd.grad(loss, params, allow_unused=True)\n        sq = sum(g.pow(2).sum() for g in gs if g is not None)\n        rows.append(torch.as_tensor(sq, dtype=params[0].dtype, device=x.device).sqrt())\n    return torch.stack(rows) if rows else torch.zeros(0, dtype=params[0].dtype, device=x.device)\n",
    ),
]
RIGHT_ANSWERS["accumulated_step"] += [
    RightAnswer(
        name="range-slices",
        why="Consecutive slices x[start:start + micro_batch] (the same pieces as x.split), model.zero_grad(set_to_none=True) and shape[0] for the share.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n    model.zero_grad(set_to_none=True)\n    n = x.shape[0]\n    total = 0.0\n    for start in range(0, n, micro_batch):\n        xc, yc = x[start:start + micro_batch], y[start:start + micro_batch]\n        part = loss_fn(model(xc), yc) * xc.shape[0] / n\n        part.backward()\n        total += part.item()\n    optimizer.step()\n    return total\n",
    ),
]
RIGHT_ANSWERS["first_nonfinite_module"] += [
    RightAnswer(
        name="inference-mode",
        why="torch.inference_mode() instead of torch.no_grad(): it records no graph either (and is stricter), so the forward pass keeps nothing for backward.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef first_nonfinite_module(model, x):\n    found = []\n    handles = []\n    def mk(name):\n        def hook(m, i, o):\n            outs = o if isinstance(o, (tuple, list)) else (o,)\n            if not found and any(not torch.isfinite(t).all() for t in outs):\n                found.append(name)\n        return hook\n    try:\n        for name, m in model.named_modules():\n            if name:\n                handles.append(m.register_forward_hook(mk(name)))\n        with torch.inference_mode():\n            model(x)\n    finally:\n        for h in handles:\n            h.remove()\n    return found[0] if found else None\n",
    ),
]

# ----------------------------------------------------------------------------- red-team round 3

RIGHT_ANSWERS["overfit_one_batch"] += [
    RightAnswer(
        name="adam-trainable-while",
        why="Adam over the parameters that require grad only and a while loop: frozen parameters never get a gradient, so Adam would skip them anyway.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n    import torch\n    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)\n    losses = []\n    step = 0\n    while step < num_steps:\n        opt.zero_grad(set_to_none=False)\n        loss = loss_fn(model(x), y)\n        losses.append(loss.item())\n        loss.backward()\n        opt.step()\n        step += 1\n    return losses\n",
    ),
]
RIGHT_ANSWERS["clipped_step"] += [
    RightAnswer(
        name="manual-total-norm-clip",
        why="The total norm by hand (a norm of the per-parameter norms), then every gradient scaled by min(1, max_norm / (norm + 1e-6)) in place: what clip_grad_norm_ does.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef clipped_step(model, optimizer, loss, max_norm):\n    import torch\n    optimizer.zero_grad()\n    loss.backward()\n    grads = [p.grad for p in model.parameters() if p.grad is not None]\n    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))\n    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)\n    with torch.no_grad():\n        for g in grads:\n            g.mul_(coef)\n    optimizer.step()\n    return total.item()\n",
    ),
]
RIGHT_ANSWERS["first_nonfinite_module"] += [
    RightAnswer(
        name="raise-to-stop",
        why="The hook raises a private exception at the first non-finite output, which stops the forward pass early; the handles are removed in finally and the name comes from the exception.",
        code='import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef first_nonfinite_module(model, x):\n    import torch\n    class Found(Exception):\n        pass\n    def hook(name):\n        def f(m, i, o):\n            outs = o if isinstance(o, (tuple, list)) else (o,)\n            if any(not torch.isfinite(t).all() for t in outs):\n                raise Found(name)\n        return f\n    hs = [m.register_forward_hook(hook(n)) for n, m in model.named_modules() if n != ""]\n    try:\n        with torch.no_grad():\n            model(x)\n    except Found as e:\n        return e.args[0]\n    finally:\n        for h in hs:\n            h.remove()\n    return None\n',
    ),
]
RIGHT_ANSWERS["accumulated_step"] += [
    RightAnswer(
        name="while-slices-shape0",
        why="A while loop over consecutive slices and xc.shape[0] / n as the share: the same pieces and scaling as x.split.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n    optimizer.zero_grad()\n    n = len(x)\n    total = 0.0\n    start = 0\n    while start < n:\n        xc, yc = x[start:start + micro_batch], y[start:start + micro_batch]\n        loss = loss_fn(model(xc), yc) * xc.shape[0] / n\n        loss.backward()\n        total += loss.item()\n        start += micro_batch\n    optimizer.step()\n    return total\n",
    ),
]
RIGHT_ANSWERS["autocast_step"] += [
    RightAnswer(
        name="deepcopy-checkpoint",
        why="A deep copy of the three state_dicts as the checkpoint (a snapshot, not live tensors), dtype from a dict keyed by device type, and `if resume:` for the resume.",
        code='import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n    import copy, torch\n    if resume:\n        model.load_state_dict(resume["model"])\n        optimizer.load_state_dict(resume["optimizer"])\n        scaler.load_state_dict(resume["scaler"])\n    optimizer.zero_grad(set_to_none=True)\n    low = {"cpu": torch.bfloat16, "cuda": torch.float16}.get(x.device.type, torch.bfloat16)\n    with torch.autocast(x.device.type, dtype=low):\n        out = model(x)\n        loss = loss_fn(out, y)\n    scaler.scale(loss).backward()\n    scaler.unscale_(optimizer)\n    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n    scaler.step(optimizer)\n    scaler.update()\n    ckpt = copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()})\n    return {"loss": float(loss), "grad_norm": norm.item(), "checkpoint": ckpt}\n',
    ),
]
RIGHT_ANSWERS["set_seed"] += [
    RightAnswer(
        name="generator-first-other-order",
        why="The generator is made first and the global seeds set in another order, torch.random.manual_seed for torch: the order does not matter as nothing is drawn in between.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef set_seed(seed):\n    import random, numpy as np, torch\n    g = torch.Generator().manual_seed(seed)\n    torch.random.manual_seed(seed)\n    np.random.seed(seed % (2 ** 32))\n    random.seed(seed)\n    return g\n",
    ),
]
RIGHT_ANSWERS["per_sample_grad_norms"] += [
    RightAnswer(
        name="vmap-frozen-passed-norm-of-norms",
        why="vmap(grad(...)) over the trainable parameters with the frozen ones passed to functional_call too, and the total as the norm of the per-parameter norms (the same number).",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef per_sample_grad_norms(model, loss_fn, x, y):\n    import torch\n    from torch.func import functional_call, grad, vmap\n    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}\n    frozen = {n: p for n, p in model.named_parameters() if not p.requires_grad}\n    def f(params, xo, yo):\n        return loss_fn(functional_call(model, {**frozen, **params}, (xo.unsqueeze(0),)), yo.unsqueeze(0))\n    g = vmap(grad(f), in_dims=(None, 0, 0))(params, x, y)\n    return torch.stack([torch.linalg.vector_norm(v.flatten(1), dim=1) for v in g.values()], 1).norm(dim=1)\n",
    ),
]
