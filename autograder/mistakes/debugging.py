"""Plausible wrong answers for 06_debugging's exercises."""

from autograder.mistakes import Mistake

_OVERFIT_HEAD = (
    "import torch\ndef overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
)

MISTAKES = {
    "overfit_one_batch": [
        Mistake(
            name="keeps-loss-tensors",
            message="Appending the loss tensor keeps every step's autograd graph alive (a memory "
            "leak); store loss.item().",
            code=_OVERFIT_HEAD + "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return losses\n",
        ),
        Mistake(
            name="no-zero-grad",
            message="Without zero_grad every step adds its gradient to all the earlier ones.",
            code=_OVERFIT_HEAD + "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return losses\n",
        ),
        Mistake(
            name="optimizer-inside-loop",
            message="A new Adam every step forgets its running averages; build it once.",
            code=_OVERFIT_HEAD + "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return losses\n",
        ),
    ],
    "clipped_step": [
        Mistake(
            name="clip-after-step",
            message="Clipping after optimizer.step() is too late: the step already used the "
            "unclipped gradients.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm).item()\n",
        ),
        Mistake(
            name="norm-after-clipping",
            message="Report the norm clip_grad_norm_ returns (before clipping), not the norm of "
            "the clipped gradients.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    norm = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))\n"
            "    optimizer.step()\n"
            "    return norm.item()\n",
        ),
        Mistake(
            name="clip-by-value",
            message="clip_grad_value_ clamps every entry and changes the gradient's direction; "
            "the task asks for clipping by the total norm.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    norm = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))\n"
            "    torch.nn.utils.clip_grad_value_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    return norm.item()\n",
        ),
        Mistake(
            name="no-zero-grad",
            message="Gradients left over from an earlier step are added to the new ones; zero "
            "them before backward().",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    loss.backward()\n"
            "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    return norm.item()\n",
        ),
    ],
    "grad_norms": [
        Mistake(
            name="weight-norm",
            message="p.norm() is the size of the weights; the gradient is p.grad.",
            code="def grad_norms(model):\n"
            "    return {n: p.norm().item() for n, p in model.named_parameters()"
            " if p.grad is not None}\n",
        ),
        Mistake(
            name="mean-abs-not-norm",
            message="The mean absolute value shrinks with the layer's size; use the L2 norm.",
            code="def grad_norms(model):\n"
            "    return {n: p.grad.abs().mean().item() for n, p in model.named_parameters()"
            " if p.grad is not None}\n",
        ),
        Mistake(
            name="none-grad-crash",
            message="Frozen or unused parameters have p.grad None; skip them.",
            code="def grad_norms(model):\n"
            "    return {n: p.grad.norm().item() for n, p in model.named_parameters()}\n",
        ),
        Mistake(
            name="zero-for-none",
            message="A parameter with no gradient is not one with a zero gradient; leave it out.",
            code="def grad_norms(model):\n"
            "    return {n: (p.grad.norm().item() if p.grad is not None else 0.0)"
            " for n, p in model.named_parameters()}\n",
        ),
    ],
    "diagnose_gradients": [
        Mistake(
            name="ignores-nan",
            message="max() and comparisons are False for NaN: test math.isfinite on every norm.",
            code="def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = list(norms.values())\n"
            "    if max(values) > explode_norm:\n"
            "        return 'exploding'\n"
            "    if values[0] <= vanish_ratio * max(values):\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
        Mistake(
            name="absolute-threshold",
            message="Vanishing is about the input side being tiny *relative to* the output "
            "side, not about a fixed small number.",
            code="import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = list(norms.values())\n"
            "    if any(not math.isfinite(v) for v in values) or max(values) > explode_norm:\n"
            "        return 'exploding'\n"
            "    if values[0] < vanish_ratio:\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
        Mistake(
            name="last-layer",
            message="Vanishing gradients die out towards the input: look at the first entry, not "
            "the last.",
            code="import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = list(norms.values())\n"
            "    if any(not math.isfinite(v) for v in values) or max(values) > explode_norm:\n"
            "        return 'exploding'\n"
            "    if values[-1] <= vanish_ratio * max(values):\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
    ],
    "first_nonfinite_module": [
        Mistake(
            name="checks-only-final-output",
            message="Checking only the model's output misses NaN/inf that a later layer squashes "
            "back to finite numbers, and cannot say where it started; hook every submodule.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    with torch.no_grad():\n"
            "        out = model(x)\n"
            "    if torch.isfinite(out).all():\n"
            "        return None\n"
            "    return list(dict(model.named_modules()))[-1]\n",
        ),
        Mistake(
            name="isnan-misses-inf",
            message="torch.isnan ignores inf; overflow shows up as inf first. Use torch.isfinite.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    fired = []\n"
            "    def make_hook(name):\n"
            "        def hook(module, inputs, output):\n"
            "            outs = output if isinstance(output, (tuple, list)) else (output,)\n"
            "            if any(torch.isnan(o).any() for o in outs):\n"
            "                fired.append(name)\n"
            "        return hook\n"
            "    handles = [m.register_forward_hook(make_hook(n))"
            " for n, m in model.named_modules() if n]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in handles:\n"
            "            h.remove()\n"
            "    return fired[0] if fired else None\n",
        ),
        Mistake(
            name="hooks-left-behind",
            message="Hooks stay on the model until removed; keep the handles and remove them.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    fired = []\n"
            "    def make_hook(name):\n"
            "        def hook(module, inputs, output):\n"
            "            outs = output if isinstance(output, (tuple, list)) else (output,)\n"
            "            if any(not torch.isfinite(o).all() for o in outs):\n"
            "                fired.append(name)\n"
            "        return hook\n"
            "    for n, m in model.named_modules():\n"
            "        if n:\n"
            "            m.register_forward_hook(make_hook(n))\n"
            "    with torch.no_grad():\n"
            "        model(x)\n"
            "    return fired[0] if fired else None\n",
        ),
        Mistake(
            name="registration-order",
            message="named_modules() lists modules in the order __init__ created them; the "
            "first bad one is the first whose hook fires during the forward pass.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    bad = set()\n"
            "    def make_hook(name):\n"
            "        def hook(module, inputs, output):\n"
            "            outs = output if isinstance(output, (tuple, list)) else (output,)\n"
            "            if any(not torch.isfinite(o).all() for o in outs):\n"
            "                bad.add(name)\n"
            "        return hook\n"
            "    handles = [m.register_forward_hook(make_hook(n))"
            " for n, m in model.named_modules() if n]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in handles:\n"
            "            h.remove()\n"
            "    return next((n for n, _ in model.named_modules() if n in bad), None)\n",
        ),
        Mistake(
            name="tensor-outputs-only",
            message="Some modules return tuples; check every tensor in them.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    fired = []\n"
            "    def make_hook(name):\n"
            "        def hook(module, inputs, output):\n"
            "            if isinstance(output, torch.Tensor) and not torch.isfinite(output).all():\n"
            "                fired.append(name)\n"
            "        return hook\n"
            "    handles = [m.register_forward_hook(make_hook(n))"
            " for n, m in model.named_modules() if n]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in handles:\n"
            "            h.remove()\n"
            "    return fired[0] if fired else None\n",
        ),
    ],
    "accumulated_step": [
        Mistake(
            name="no-loss-scaling",
            message="Each micro-batch loss is already a mean; without scaling the accumulated "
            "gradient is about N / micro_batch times too big.",
            code="def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc)\n"
            "        loss.backward()\n"
            "        total += loss.item() * len(xc) / len(x)\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
        Mistake(
            name="divide-by-chunk-count",
            message="Dividing by the number of micro-batches is wrong when the last one is "
            "smaller; weight by len(x_chunk) / len(x).",
            code="def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    optimizer.zero_grad()\n"
            "    chunks = list(zip(x.split(micro_batch), y.split(micro_batch)))\n"
            "    total = 0.0\n"
            "    for xc, yc in chunks:\n"
            "        loss = loss_fn(model(xc), yc) / len(chunks)\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
        Mistake(
            name="step-every-micro-batch",
            message="Stepping after every micro-batch is ordinary small-batch training; step once.",
            code="def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        total += loss.item()\n"
            "    return total\n",
        ),
        Mistake(
            name="zero-grad-in-loop",
            message="zero_grad inside the loop throws away every micro-batch but the last.",
            code="def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
    ],
    "autocast_step": [
        Mistake(
            name="no-autocast",
            message="Without torch.autocast the step runs in float32: no mixed precision at all.",
            code="def autocast_step(model, optimizer, loss_fn, x, y, scaler=None):\n"
            "    optimizer.zero_grad()\n"
            "    loss = loss_fn(model(x), y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n",
        ),
        Mistake(
            name="model-cast-to-bfloat16",
            message="Casting the model keeps the weights in bfloat16 for good; autocast casts "
            "inside each operation and leaves float32 master weights.",
            code="import torch\n"
            "def autocast_step(model, optimizer, loss_fn, x, y, scaler=None):\n"
            "    model.to(torch.bfloat16)\n"
            "    optimizer.zero_grad()\n"
            "    loss = loss_fn(model(x.to(torch.bfloat16)), y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n",
        ),
        Mistake(
            name="hard-coded-cuda",
            message="torch.autocast('cuda') does nothing on a CPU tensor (it warns and disables "
            "itself); use x.device.type.",
            code="import torch, warnings\n"
            "def autocast_step(model, optimizer, loss_fn, x, y, scaler=None):\n"
            "    optimizer.zero_grad()\n"
            "    with warnings.catch_warnings():\n"
            "        warnings.simplefilter('ignore')\n"
            "        with torch.autocast('cuda', dtype=torch.float16):\n"
            "            loss = loss_fn(model(x), y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n",
        ),
        Mistake(
            name="scaler-without-scaler-step",
            message="optimizer.step() after scaler.scale(loss).backward() applies gradients "
            "that are still multiplied by the scale; use scaler.step(optimizer).",
            code="import torch\n"
            "def autocast_step(model, optimizer, loss_fn, x, y, scaler=None):\n"
            "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
            "    optimizer.zero_grad()\n"
            "    with torch.autocast(x.device.type, dtype=dtype):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    if scaler is None:\n"
            "        loss.backward()\n"
            "    else:\n"
            "        scaler.scale(loss).backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n",
        ),
        Mistake(
            name="no-scaler-update",
            message="Without scaler.update() the scale never adapts (it never backs off after "
            "an overflow, never grows).",
            code="import torch\n"
            "def autocast_step(model, optimizer, loss_fn, x, y, scaler=None):\n"
            "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
            "    optimizer.zero_grad()\n"
            "    with torch.autocast(x.device.type, dtype=dtype):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    if scaler is None:\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    else:\n"
            "        scaler.scale(loss).backward()\n"
            "        scaler.step(optimizer)\n"
            "    return loss.item()\n",
        ),
    ],
    "set_seed": [
        Mistake(
            name="seeds-only-torch",
            message="torch.manual_seed leaves Python's random and NumPy unseeded; shuffles and "
            "augmentations written with them change from run to run.",
            code="import torch\n"
            "def set_seed(seed):\n"
            "    torch.manual_seed(seed)\n"
            "    generator = torch.Generator()\n"
            "    generator.manual_seed(seed)\n"
            "    return generator\n",
        ),
        Mistake(
            name="forgets-numpy",
            message="NumPy has its own global generator; seed it with np.random.seed.",
            code="import random, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    torch.manual_seed(seed)\n"
            "    generator = torch.Generator()\n"
            "    generator.manual_seed(seed)\n"
            "    return generator\n",
        ),
        Mistake(
            name="unseeded-generator",
            message="A fresh torch.Generator() always starts from the same default seed, "
            "whatever seed you were given; call manual_seed(seed) on it.",
            code="import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed % 2**32)\n"
            "    torch.manual_seed(seed)\n"
            "    return torch.Generator()\n",
        ),
        Mistake(
            name="numpy-seed-too-big",
            message="np.random.seed only accepts seeds below 2**32; use seed % 2**32.",
            code="import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed)\n"
            "    torch.manual_seed(seed)\n"
            "    generator = torch.Generator()\n"
            "    generator.manual_seed(seed)\n"
            "    return generator\n",
        ),
    ],
}
