"""Plausible wrong answers for 07_debugging's exercises."""

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
        Mistake(
            name="reseeds-global-generator",
            message="torch.manual_seed inside a function resets the caller's random numbers: every dropout mask, shuffle and initialisation after the call repeats the same draws. Seed once at the top of a script (or pass a torch.Generator) and leave the global generator alone.",
            code=(
                "import collections, torch\n"
                "def grad_norms(model):\n"
                "    torch.manual_seed(0)\n"
                "    out = collections.OrderedDict()\n"
                "    for name, p in model.named_parameters():\n"
                "        if p.grad is None:\n"
                "            continue\n"
                "        out[name] = torch.linalg.vector_norm(p.grad).item()\n"
                "    return out\n"
            ),
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

# ----------------------------------------------------------------------------- more mistakes
# Each passes or fails the visible asserts as noted; the hidden check must catch all of them.

_OVERFIT_LOOP = (
    "    losses = []\n"
    "    for _ in range(num_steps):\n"
    "        optimizer.zero_grad()\n"
    "        loss = loss_fn(model(x), y)\n"
    "        losses.append(loss.item())\n"
    "        loss.backward()\n"
    "        optimizer.step()\n"
)

_FINDER_HOOK = (
    "    fired = []\n"
    "    def make_hook(name):\n"
    "        def hook(module, inputs, output):\n"
    "            outs = output if isinstance(output, (tuple, list)) else (output,)\n"
    "            if any(not torch.isfinite(o).all() for o in outs):\n"
    "                fired.append(name)\n"
    "        return hook\n"
)

_ACCUM_HEAD = "def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"

_MORE = {
    "overfit_one_batch": [
        Mistake(
            name="clips-gradients",
            message="Train exactly as the text says: zero, forward, loss, backward, step. A "
            "clip_grad_norm_ inside changes every step once the gradients are large, and the "
            "test is whether the model can fit the batch as it stands.",
            code=_OVERFIT_HEAD + "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)\n"
            "        optimizer.step()\n"
            "    return losses\n",
        ),
        Mistake(
            name="ignores-lr",  # passes the visible asserts (they use lr=1e-2)
            message="The learning rate is an argument: build Adam with lr=lr, not a fixed number.",
            code=_OVERFIT_HEAD
            + "    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)\n"
            + _OVERFIT_LOOP
            + "    return losses\n",
        ),
        Mistake(
            name="wrong-defaults",  # passes the visible asserts (they pass both arguments)
            message="The signature's defaults are part of the task: num_steps=100, lr=1e-2.",
            code="import torch\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=10, lr=1e-3):\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            + _OVERFIT_LOOP
            + "    return losses\n",
        ),
        Mistake(
            name="reseeds-global-rng",  # passes the visible asserts
            message="A training helper that calls torch.manual_seed resets the caller's random "
            "state: every later draw of the caller's run repeats. Leave seeding to the caller.",
            code=_OVERFIT_HEAD + "    torch.manual_seed(0)  # 'for reproducibility'\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            + _OVERFIT_LOOP
            + "    return losses\n",
        ),
        Mistake(
            name="leaves-eval-mode",  # passes the visible asserts
            message="model.eval() at the end leaves the caller's model in eval mode (dropout off, "
            "BatchNorm frozen) for its next training step.",
            code=_OVERFIT_HEAD
            + "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            + _OVERFIT_LOOP
            + "    model.eval()  # 'done training'\n"
            "    return losses\n",
        ),
        Mistake(
            name="standardises-x-in-place",  # passes the visible asserts
            message="Standardising x in place (x -= ..., x /= ...) changes the caller's batch; "
            "leave the inputs as they came, or work on a copy.",
            code=_OVERFIT_HEAD + "    if x.is_floating_point():\n"
            "        x -= x.mean(0)  # 'normalise the inputs first'\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            + _OVERFIT_LOOP
            + "    return losses\n",
        ),
        Mistake(
            name="casts-batch-to-float32",  # passes the visible asserts (float32 there)
            message="x.float() turns a float64 batch into float32, which a float64 model cannot "
            "take; use the batch in the dtype it came in.",
            code=_OVERFIT_HEAD + "    x = x.float()\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            + _OVERFIT_LOOP
            + "    return losses\n",
        ),
        Mistake(
            name="adam-with-weight-decay",  # passes the visible asserts
            message="Adam's settings other than lr stay at their defaults; weight_decay changes "
            "every update.",
            code=_OVERFIT_HEAD
            + "    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-2)\n"
            + _OVERFIT_LOOP
            + "    return losses\n",
        ),
    ],
    "clipped_step": [
        Mistake(
            name="hard-coded-max-norm",  # passes the visible asserts (they use max_norm=1.0)
            message="max_norm is an argument; clip with the value you were given.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    optimizer.step()\n"
            "    return norm.item()\n",
        ),
        Mistake(
            name="always-rescales",  # passes the visible asserts (their norm is above max_norm)
            message="Clipping only scales down: a gradient whose norm is already below max_norm "
            "must be left alone, not stretched to length max_norm.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
            "    norm = torch.stack([g.norm() for g in grads]).norm()\n"
            "    for g in grads:\n"
            "        g.mul_(max_norm / norm)\n"
            "    optimizer.step()\n"
            "    return norm.item()\n",
        ),
        Mistake(
            name="clips-each-parameter",  # passes the visible asserts (one parameter there)
            message="Clipping every parameter separately changes the gradient's direction; clip "
            "all of them together, by their total norm.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    norms = [torch.nn.utils.clip_grad_norm_(p, max_norm)"
            " for p in model.parameters() if p.grad is not None]\n"
            "    optimizer.step()\n"
            "    return torch.stack(norms).norm().item()\n",
        ),
        Mistake(
            name="sum-of-norms",  # passes the visible asserts (one parameter there)
            message="The total norm is the square root of the sum of squares of all entries, not "
            "the sum of the per-parameter norms; return what clip_grad_norm_ returns.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    total = sum(p.grad.norm().item() for p in model.parameters()"
            " if p.grad is not None)\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
        Mistake(
            name="none-grad-crash",  # passes the visible asserts (one parameter, used, there)
            message="A frozen or unused parameter has no gradient (p.grad is None); measure "
            "only the gradients that exist, as clip_grad_norm_ does.",
            code="import torch\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    total = sum(p.grad.pow(2).sum() for p in model.parameters()).sqrt()\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    return total.item()\n",
        ),
    ],
    "grad_norms": [
        Mistake(
            name="skips-frozen-only",  # passes the visible asserts (only a frozen layer there)
            message="A parameter can require grad and still have no gradient (one the forward "
            "pass never used); test p.grad is None, not p.requires_grad.",
            code="def grad_norms(model):\n"
            "    return {n: p.grad.norm().item() for n, p in model.named_parameters()"
            " if p.requires_grad}\n",
        ),
        Mistake(
            name="zeroes-after-reading",  # passes the visible asserts
            message="grad_norms must only read the gradients; zeroing them wipes what the next "
            "optimizer.step() (or clipping) needs.",
            code="def grad_norms(model):\n"
            "    norms = {n: p.grad.norm().item() for n, p in model.named_parameters()"
            " if p.grad is not None}\n"
            "    model.zero_grad()\n"
            "    return norms\n",
        ),
        Mistake(
            name="float32-norm",  # passes the visible asserts (float32 there)
            message="p.grad.float() makes a float32 copy of a float64 gradient: the norm keeps "
            "only about 7 digits. Take the norm in the gradient's own dtype.",
            code="def grad_norms(model):\n"
            "    return {n: p.grad.float().norm().item() for n, p in model.named_parameters()"
            " if p.grad is not None}\n",
        ),
        Mistake(
            name="layers-weight-and-bias-only",  # passes the visible asserts
            message="Looking only at each module's .weight and .bias misses parameters registered "
            "elsewhere (a cls_token on the model itself); use model.named_parameters().",
            code="import torch\n"
            "def grad_norms(model):\n"
            "    norms = {}\n"
            "    for name, module in model.named_modules():\n"
            "        for attr in ('weight', 'bias'):\n"
            "            p = getattr(module, attr, None)\n"
            "            if isinstance(p, torch.nn.Parameter) and p.grad is not None:\n"
            "                norms[f'{name}.{attr}' if name else attr] = p.grad.norm().item()\n"
            "    return norms\n",
        ),
    ],
    "diagnose_gradients": [
        Mistake(
            name="ignores-explode-norm",  # passes the visible asserts (default explode_norm)
            message="explode_norm is an argument; compare with it, not with 1e3.",
            code="import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = list(norms.values())\n"
            "    if any(not math.isfinite(v) for v in values) or max(values) > 1e3:\n"
            "        return 'exploding'\n"
            "    if values[0] <= vanish_ratio * max(values):\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
        Mistake(
            name="smallest-not-first",  # passes the visible asserts
            message="Vanishing is about the input side: compare the first norm with the largest, "
            "not the smallest (a small middle layer is not the input side).",
            code="import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = list(norms.values())\n"
            "    if any(not math.isfinite(v) for v in values) or max(values) > explode_norm:\n"
            "        return 'exploding'\n"
            "    if min(values) <= vanish_ratio * max(values):\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
        Mistake(
            name="ratio-to-last",  # passes the visible asserts (their last norm is the largest)
            message="Compare the first norm with the largest one, which need not be the last.",
            code="import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = list(norms.values())\n"
            "    if any(not math.isfinite(v) for v in values) or max(values) > explode_norm:\n"
            "        return 'exploding'\n"
            "    if values[0] <= vanish_ratio * values[-1]:\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
        Mistake(
            name="strict-inequalities",  # passes the visible asserts (no value on a boundary)
            message="'at most vanish_ratio times' includes equality (<=), and 'above explode_norm' "
            "excludes it (>): a norm equal to explode_norm is not exploding.",
            code="import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = list(norms.values())\n"
            "    if any(not math.isfinite(v) for v in values) or max(values) >= explode_norm:\n"
            "        return 'exploding'\n"
            "    if values[0] < vanish_ratio * max(values):\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
        Mistake(
            name="first-by-sorted-name",  # passes the visible asserts (their names sort in order)
            message="The dict's order is the model's order, input side first; sorting the names "
            "picks another 'first' layer.",
            code="import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    values = [norms[k] for k in sorted(norms)]\n"
            "    if any(not math.isfinite(v) for v in values) or max(values) > explode_norm:\n"
            "        return 'exploding'\n"
            "    if values[0] <= vanish_ratio * max(values):\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n",
        ),
    ],
    "first_nonfinite_module": [
        Mistake(
            name="hooks-leaves-only",  # passes the visible asserts (a flat model there)
            message="A container's own forward can make the NaN (a torch.log it calls itself) "
            "while all its children's outputs are finite; hook every module, not only leaves.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            + _FINDER_HOOK
            + "    handles = [m.register_forward_hook(make_hook(n))"
            " for n, m in model.named_modules() if n and not list(m.children())]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in handles:\n"
            "            h.remove()\n"
            "    return fired[0] if fired else None\n",
        ),
        Mistake(
            name="top-level-children-only",  # passes the visible asserts (a flat model there)
            message="named_children() gives only the top-level modules; the culprit may be nested "
            "inside one. Use named_modules().",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            + _FINDER_HOOK
            + "    handles = [m.register_forward_hook(make_hook(n))"
            " for n, m in model.named_children()]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in handles:\n"
            "            h.remove()\n"
            "    return fired[0] if fired else None\n",
        ),
        Mistake(
            name="clears-all-hooks",  # passes the visible asserts (no hooks of the caller there)
            message="Clearing every module's _forward_hooks also deletes the caller's own hooks; "
            "remove only yours, through their handles.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            + _FINDER_HOOK
            + "    for n, m in model.named_modules():\n"
            "        if n:\n"
            "            m.register_forward_hook(make_hook(n))\n"
            "    with torch.no_grad():\n"
            "        model(x)\n"
            "    for m in model.modules():\n"
            "        m._forward_hooks.clear()\n"
            "    return fired[0] if fired else None\n",
        ),
        Mistake(
            name="isinf-misses-nan",  # passes the visible asserts (log(0) = -inf there)
            message="torch.isinf misses NaN (log of a negative number, 0/0); torch.isfinite "
            "catches both.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    fired = []\n"
            "    def make_hook(name):\n"
            "        def hook(module, inputs, output):\n"
            "            outs = output if isinstance(output, (tuple, list)) else (output,)\n"
            "            if any(torch.isinf(o).any() for o in outs):\n"
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
            name="no-finally",  # passes the visible asserts (their forward passes never raise)
            message="Without try/finally, a forward pass that raises leaves every hook on the "
            "model; remove them in a finally: block.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            + _FINDER_HOOK
            + "    handles = [m.register_forward_hook(make_hook(n))"
            " for n, m in model.named_modules() if n]\n"
            "    with torch.no_grad():\n"
            "        model(x)\n"
            "    for h in handles:\n"
            "        h.remove()\n"
            "    return fired[0] if fired else None\n",
        ),
        Mistake(
            name="leaves-eval-mode",  # passes the visible asserts
            message="model.eval() without restoring the mode leaves the caller's model in eval "
            "mode; put back what you found (model.train(was_training)).",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            + _FINDER_HOOK
            + "    handles = [m.register_forward_hook(make_hook(n))"
            " for n, m in model.named_modules() if n]\n"
            "    model.eval()\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in handles:\n"
            "            h.remove()\n"
            "    return fired[0] if fired else None\n",
        ),
        Mistake(
            name="keeps-last-culprit",  # passes the visible asserts (one culprit there)
            message="Overwriting the culprit at every non-finite output gives the last module to "
            "see NaN/inf, which only inherited it; keep the first.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    culprit = None\n"
            "    def make_hook(name):\n"
            "        def hook(module, inputs, output):\n"
            "            nonlocal culprit\n"
            "            outs = output if isinstance(output, (tuple, list)) else (output,)\n"
            "            if any(not torch.isfinite(o).all() for o in outs):\n"
            "                culprit = name\n"
            "        return hook\n"
            "    handles = [m.register_forward_hook(make_hook(n))"
            " for n, m in model.named_modules() if n]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in handles:\n"
            "            h.remove()\n"
            "    return culprit\n",
        ),
        Mistake(
            name="returns-the-module",  # fails the visible asserts
            message="Return the module's name (the string named_modules() gives), not the module.",
            code="import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    fired = []\n"
            "    def make_hook(module, inputs, output):\n"
            "        outs = output if isinstance(output, (tuple, list)) else (output,)\n"
            "        if any(not torch.isfinite(o).all() for o in outs):\n"
            "            fired.append(module)\n"
            "    handles = [m.register_forward_hook(make_hook)"
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
            name="no-zero-grad",  # passes the visible asserts (their model has no old gradients)
            message="Gradients left in .grad from an earlier step are added to the accumulated "
            "ones; zero them once before the loop.",
            code=_ACCUM_HEAD + "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
        Mistake(
            name="zero-grad-after-step",  # passes the visible asserts
            message="Zeroing after the step leaves the caller's old gradients in the sum of this "
            "step; zero before the first backward().",
            code=_ACCUM_HEAD + "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    optimizer.zero_grad()\n"
            "    return total\n",
        ),
        Mistake(
            name="float32-accumulator",  # passes the visible asserts (float32 there)
            message="A torch.zeros(()) accumulator is float32: a float64 loss summed into it keeps "
            "only about 7 digits. Add Python floats (loss.item()).",
            code="import torch\n" + _ACCUM_HEAD + "    optimizer.zero_grad()\n"
            "    total = torch.zeros((), device=x.device)\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.detach()\n"
            "    optimizer.step()\n"
            "    return total.item()\n",
        ),
        Mistake(
            name="chunk-count-not-size",  # passes the visible asserts (any partition gives the step)
            message="x.chunk(micro_batch) makes micro_batch pieces, not pieces of micro_batch rows: "
            "with micro_batch=1 the whole batch goes through at once. Use x.split(micro_batch).",
            code=_ACCUM_HEAD + "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.chunk(micro_batch), y.chunk(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
        Mistake(
            name="scale-by-micro-batch",
            message="The last piece may be smaller than micro_batch: scale by its own size, "
            "len(x_chunk) / len(x), not micro_batch / len(x).",
            code=_ACCUM_HEAD + "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc) * (micro_batch / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
        Mistake(
            name="sum-losses-one-backward",  # passes the visible asserts (the same step)
            message="Adding up the pieces' losses and calling backward() once gives the right "
            "step, but every piece's graph (its activations) stays in memory until that one "
            "backward(): the memory of the whole batch, which accumulation exists to avoid. "
            "Call backward() on each piece's scaled loss inside the loop.",
            code=_ACCUM_HEAD + "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        total = total + loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "    total.backward()\n"
            "    optimizer.step()\n"
            "    return total.item()\n",
        ),
        Mistake(
            name="concatenated-outputs",  # passes the visible asserts (the same step)
            message="Running the pieces one by one and concatenating their outputs into one "
            "loss keeps every piece's graph alive until the single backward(): no memory is "
            "saved. Backward each piece's scaled loss before the next forward pass.",
            code="import torch\n" + _ACCUM_HEAD + "    optimizer.zero_grad()\n"
            "    out = torch.cat([model(xc) for xc in x.split(micro_batch)])\n"
            "    loss = loss_fn(out, y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    return loss.item()\n",
        ),
        Mistake(
            name="float32-share-tensor",  # passes the visible asserts (float32 there)
            message="torch.tensor(len(xc) / len(x)) is a float32 number: multiplying a float64 "
            "loss by it rounds the share to 7 digits. Multiply by the Python float.",
            code="import torch\n" + _ACCUM_HEAD + "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        share = torch.tensor(len(xc) / len(x), device=x.device)\n"
            "        loss = loss_fn(model(xc), yc) * share\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
        Mistake(
            name="drops-short-last-piece",  # fails the visible asserts (N=10, pieces of 4)
            message="range(len(x) // micro_batch) leaves out the last, shorter piece (and every "
            "row when micro_batch > N); x.split(micro_batch) keeps it.",
            code=_ACCUM_HEAD + "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for i in range(len(x) // micro_batch):\n"
            "        xc = x[i * micro_batch:(i + 1) * micro_batch]\n"
            "        yc = y[i * micro_batch:(i + 1) * micro_batch]\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n",
        ),
    ],
    "set_seed": [
        Mistake(
            name="returns-global-generator",  # passes the visible asserts
            message="torch.manual_seed(seed) returns torch's global generator; a DataLoader using "
            "it moves the global random state. Return a new torch.Generator seeded with seed.",
            code="import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed % 2**32)\n"
            "    return torch.manual_seed(seed)\n",
        ),
        Mistake(
            name="fixed-generator-seed",  # passes the visible asserts (they only use seed 0)
            message="The returned generator must be seeded with seed, not a constant: otherwise "
            "every seed gives the same shuffle order.",
            code="import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed % 2**32)\n"
            "    torch.manual_seed(seed)\n"
            "    return torch.Generator().manual_seed(0)\n",
        ),
        Mistake(
            name="generator-seed-drawn-from-torch",  # passes the visible asserts
            message="Drawing the generator's seed from torch consumes the global generator right "
            "after seeding it, so torch's numbers are no longer those of seed; seed the "
            "generator with seed itself.",
            code="import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed % 2**32)\n"
            "    torch.manual_seed(seed)\n"
            "    return torch.Generator().manual_seed(int(torch.randint(0, 2**31, ())))\n",
        ),
        Mistake(
            name="numpy-default-rng",
            message="np.random.default_rng(seed) makes a new generator and leaves NumPy's global "
            "one (np.random.rand, np.random.shuffle) unseeded; call np.random.seed.",
            code="import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.default_rng(seed)\n"
            "    torch.manual_seed(seed)\n"
            "    generator = torch.Generator()\n"
            "    generator.manual_seed(seed)\n"
            "    return generator\n",
        ),
    ],
}

_MORE["clipped_step"].append(
    Mistake(
        name="float32-norm",  # passes the visible asserts (float32 there)
        message="A norm summed in float32 keeps about 7 digits of a float64 model's gradient "
        "norm; return what clip_grad_norm_ returns.",
        code="import torch\n"
        "def clipped_step(model, optimizer, loss, max_norm):\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    grads = [p.grad for p in model.parameters() if p.grad is not None]\n"
        "    total = torch.sqrt(sum((g.float() ** 2).sum() for g in grads))\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    optimizer.step()\n"
        "    return total.item()\n",
    )
)
_MORE["grad_norms"].append(
    Mistake(
        name="skips-zero-gradients",  # passes the visible asserts (no zero gradient there)
        message="A gradient of exactly zero (a dead ReLU) is still a gradient: keep its 0.0; "
        "leave out only the None ones.",
        code="def grad_norms(model):\n"
        "    return {n: p.grad.norm().item() for n, p in model.named_parameters()"
        " if p.grad is not None and p.grad.abs().sum() > 0}\n",
    )
)
_MORE["diagnose_gradients"].append(
    Mistake(
        name="isnan-only",  # passes the visible asserts (NaN there, and inf > explode_norm)
        message="math.isnan misses inf, which only looks exploding while it is above explode_norm; "
        "test math.isfinite.",
        code="import math\n"
        "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
        "    values = list(norms.values())\n"
        "    if any(math.isnan(v) for v in values) or max(values) > explode_norm:\n"
        "        return 'exploding'\n"
        "    if values[0] <= vanish_ratio * max(values):\n"
        "        return 'vanishing'\n"
        "    return 'healthy'\n",
    )
)

for _exercise, _mistakes in _MORE.items():
    MISTAKES[_exercise].extend(_mistakes)


# ----------------------------------------------------------------------------- autocast_step
# (the whole mixed-precision sequence: autocast, scale, backward, unscale_, clip, step, update,
# the scaler's state in the checkpoint)

_AC_HEAD = (
    "import torch\n"
    "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
)
_AC_RESUME = (
    "    if resume is not None:\n"
    "        model.load_state_dict(resume['model'])\n"
    "        optimizer.load_state_dict(resume['optimizer'])\n"
    "        scaler.load_state_dict(resume['scaler'])\n"
)
_AC_FORWARD = (
    "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
    "    optimizer.zero_grad()\n"
    "    with torch.autocast(device_type=x.device.type, dtype=dtype):\n"
    "        loss = loss_fn(model(x), y)\n"
)
_AC_RETURN = (
    "    checkpoint = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
    "                  'scaler': scaler.state_dict()}\n"
    "    return {'loss': loss.item(), 'grad_norm': norm.item(), 'checkpoint': checkpoint}\n"
)
_AC_TAIL = (
    "    scaler.scale(loss).backward()\n"
    "    scaler.unscale_(optimizer)\n"
    "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
    "    scaler.step(optimizer)\n"
    "    scaler.update()\n" + _AC_RETURN
)

_AUTOCAST_MISTAKES = [
    Mistake(
        name="clips-scaled-gradients",
        message="After scaler.scale(loss).backward() every gradient is multiplied by the scale: "
        "clip_grad_norm_ then measures a norm thousands of times too large and clips nearly "
        "every step. Call scaler.unscale_(optimizer) between the backward pass and the clipping.",
        code=_AC_HEAD + _AC_RESUME + _AC_FORWARD + "    scaler.scale(loss).backward()\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n" + _AC_RETURN,
    ),
    Mistake(
        name="unscale-after-clipping",
        message="scaler.unscale_ after clip_grad_norm_ comes too late: the clipping measured the "
        "scaled gradients. Unscale first, then clip.",
        code=_AC_HEAD + _AC_RESUME + _AC_FORWARD + "    scaler.scale(loss).backward()\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    scaler.unscale_(optimizer)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n" + _AC_RETURN,
    ),
    Mistake(
        name="no-scaler-update",
        message="Without scaler.update() the scale never adapts: it never backs off after an "
        "overflow and never grows. Call it after scaler.step(optimizer).",
        code=_AC_HEAD + _AC_RESUME + _AC_FORWARD + "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    scaler.step(optimizer)\n" + _AC_RETURN,
    ),
    Mistake(
        name="checkpoint-without-scaler",
        message="The scaler has state (its scale and growth counter): a checkpoint without "
        "scaler.state_dict() resumes from the initial scale. Save it with the model's and the "
        "optimizer's.",
        code=_AC_HEAD + _AC_RESUME + _AC_FORWARD + "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "    checkpoint = {'model': model.state_dict(), 'optimizer': optimizer.state_dict()}\n"
        "    return {'loss': loss.item(), 'grad_norm': norm.item(), 'checkpoint': checkpoint}\n",
    ),
    Mistake(
        name="resume-ignores-scaler",
        message="Resuming loads the model and the optimizer but not the scaler: the run starts "
        "again from the initial scale. Call scaler.load_state_dict(resume['scaler']) too.",
        code=_AC_HEAD + "    if resume is not None:\n"
        "        model.load_state_dict(resume['model'])\n"
        "        optimizer.load_state_dict(resume['optimizer'])\n" + _AC_FORWARD + _AC_TAIL,
    ),
    Mistake(
        name="resume-ignores-optimizer",  # passes the visible asserts (plain SGD there)
        message="Resuming without optimizer.load_state_dict loses the momentum buffers (and "
        "Adam's moments): the first resumed steps differ from the run that was interrupted.",
        code=_AC_HEAD + "    if resume is not None:\n"
        "        model.load_state_dict(resume['model'])\n"
        "        scaler.load_state_dict(resume['scaler'])\n" + _AC_FORWARD + _AC_TAIL,
    ),
    Mistake(
        name="unscale-then-optimizer-step",  # passes the visible asserts (no overflow there)
        message="optimizer.step() after scaler.unscale_ applies gradients that overflowed to "
        "inf/NaN; scaler.step(optimizer) skips such a step.",
        code=_AC_HEAD + _AC_RESUME + _AC_FORWARD + "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    optimizer.step()\n"
        "    scaler.update()\n" + _AC_RETURN,
    ),
    Mistake(
        name="clip-after-step",
        message="Clipping after scaler.step is too late: the step already used the unclipped "
        "gradients. Clip between unscale_ and step.",
        code=_AC_HEAD + _AC_RESUME + _AC_FORWARD + "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    scaler.step(optimizer)\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    scaler.update()\n" + _AC_RETURN,
    ),
    Mistake(
        name="no-autocast",
        message="Without torch.autocast the step runs in float32: no mixed precision at all.",
        code=_AC_HEAD + _AC_RESUME + "    optimizer.zero_grad()\n"
        "    loss = loss_fn(model(x), y)\n" + _AC_TAIL,
    ),
    Mistake(
        name="model-cast-to-bfloat16",
        message="Casting the model keeps the weights in bfloat16 for good; autocast casts "
        "inside each operation and leaves float32 master weights.",
        code=_AC_HEAD + _AC_RESUME + "    model.to(torch.bfloat16)\n"
        "    optimizer.zero_grad()\n"
        "    loss = loss_fn(model(x.to(torch.bfloat16)), y)\n" + _AC_TAIL,
    ),
    Mistake(
        name="hard-coded-cpu",  # passes the visible asserts on a CPU
        message="torch.autocast('cpu') ignores where x lives: on a GPU it does nothing for "
        "CUDA tensors. Take the device type from x.device.type.",
        code=_AC_HEAD + _AC_RESUME + "    optimizer.zero_grad()\n"
        "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "        loss = loss_fn(model(x), y)\n" + _AC_TAIL,
    ),
    Mistake(
        name="dtype-from-cuda-available",  # passes the visible asserts on a CPU
        message="torch.cuda.is_available() describes the machine, not x: a CPU tensor on a GPU "
        "machine would get float16. Choose the dtype from x.device.type.",
        code=_AC_HEAD
        + _AC_RESUME
        + "    dtype = torch.float16 if torch.cuda.is_available() else torch.bfloat16\n"
        "    optimizer.zero_grad()\n"
        "    with torch.autocast(device_type=x.device.type, dtype=dtype):\n"
        "        loss = loss_fn(model(x), y)\n" + _AC_TAIL,
    ),
    Mistake(
        name="no-zero-grad",  # passes the visible asserts (their model has no old gradients)
        message="Old gradients in .grad are added to the new ones; call optimizer.zero_grad() "
        "first.",
        code=_AC_HEAD
        + _AC_RESUME
        + "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
        "    with torch.autocast(device_type=x.device.type, dtype=dtype):\n"
        "        loss = loss_fn(model(x), y)\n" + _AC_TAIL,
    ),
    Mistake(
        name="hard-coded-max-norm",
        message="max_norm is an argument: clip with the value you were given, not a constant.",
        code=_AC_HEAD + _AC_RESUME + _AC_FORWARD + "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n" + _AC_RETURN,
    ),
    Mistake(
        name="returns-scaled-loss",  # fails the visible asserts
        message="scaler.scale(loss) is the loss times the scale factor (2**10 here); return the "
        "loss itself, loss.item().",
        code=_AC_HEAD + _AC_RESUME + _AC_FORWARD + "    scaled = scaler.scale(loss)\n"
        "    scaled.backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        "    checkpoint = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(),\n"
        "                  'scaler': scaler.state_dict()}\n"
        "    return {'loss': scaled.item(), 'grad_norm': norm.item(), 'checkpoint': checkpoint}\n",
    ),
]

# ----------------------------------------------------------------------------- per_sample_grad_norms

_PSG_HEAD = "import torch\ndef per_sample_grad_norms(model, loss_fn, x, y):\n"
_PSG_FUNC = (
    "    from torch.func import functional_call, grad, vmap\n"
    "    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}\n"
    "    def one(params, x_one, y_one):\n"
    "        return loss_fn(functional_call(model, params, (x_one.unsqueeze(0),)),"
    " y_one.unsqueeze(0))\n"
)

_PER_SAMPLE_MISTAKES = [
    Mistake(
        name="loop-without-zero-grad",
        message="backward() adds to .grad: in a loop over the examples, entry i then holds the "
        "gradients of examples 0..i together. Zero the gradients before each example (or use "
        "torch.func, which never touches .grad).",
        code=_PSG_HEAD + "    norms = []\n"
        "    for i in range(len(x)):\n"
        "        loss_fn(model(x[i:i + 1]), y[i:i + 1]).backward()\n"
        "        grads = [p.grad.flatten() for p in model.parameters() if p.grad is not None]\n"
        "        norms.append(torch.cat(grads).norm())\n"
        "    return torch.stack(norms)\n",
    ),
    Mistake(
        name="sum-of-parameter-norms",
        message="Adding every parameter's own norm is not the norm over all of them: take the "
        "square root of the sum of squares (concatenate the flattened gradients, then .norm()).",
        code=_PSG_HEAD
        + _PSG_FUNC
        + "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
        "    return sum(g.flatten(1).norm(dim=1) for g in grads.values())\n",
    ),
    Mistake(
        name="batch-gradient-repeated",
        message="One backward pass of the batch's mean loss gives the batch's gradient, the "
        "same for every example; per-example gradients need one gradient per example.",
        code=_PSG_HEAD + "    model.zero_grad()\n"
        "    loss_fn(model(x), y).backward()\n"
        "    grads = [p.grad.flatten() for p in model.parameters() if p.grad is not None]\n"
        "    return torch.cat(grads).norm().repeat(len(x))\n",
    ),
    Mistake(
        name="gradient-of-the-input",
        message="grad(f) differentiates with respect to f's first argument: with "
        "argnums=1 (or x first) you get the gradient of the input, not of the parameters.",
        code=_PSG_HEAD
        + _PSG_FUNC
        + "    grads = vmap(grad(one, argnums=1), in_dims=(None, 0, 0))(params, x, y)\n"
        "    return grads.flatten(1).norm(dim=1)\n",
    ),
    Mistake(
        name="share-of-batch-mean",
        message="Each example's loss divided by the batch size is its share of the batch mean, "
        "not its own loss: the norms come out N times too small.",
        code=_PSG_HEAD
        + _PSG_FUNC
        + "    scaled = lambda params, x_one, y_one: one(params, x_one, y_one) / len(x)\n"
        "    grads = vmap(grad(scaled), in_dims=(None, 0, 0))(params, x, y)\n"
        "    return torch.cat([g.flatten(1) for g in grads.values()], dim=1).norm(dim=1)\n",
    ),
    Mistake(
        name="no-batch-axis-inside-vmap",
        message="Inside vmap each example has lost its batch axis: nn.Flatten then flattens the "
        "wrong axes and the loss sees a target without a batch. Add it back with "
        "x_one.unsqueeze(0) and y_one.unsqueeze(0).",
        code=_PSG_HEAD + "    from torch.func import functional_call, grad, vmap\n"
        "    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}\n"
        "    def one(params, x_one, y_one):\n"
        "        return loss_fn(functional_call(model, params, (x_one,)), y_one)\n"
        "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
        "    return torch.cat([g.flatten(1) for g in grads.values()], dim=1).norm(dim=1)\n",
    ),
    Mistake(
        name="includes-frozen-parameters",  # passes the visible asserts (nothing frozen there)
        message="Frozen parameters (requires_grad=False) are never updated; their gradients do "
        "not belong in the norm. Keep only the parameters with p.requires_grad.",
        code=_PSG_HEAD + "    from torch.func import functional_call, grad, vmap\n"
        "    params = {n: p.detach() for n, p in model.named_parameters()}\n"
        "    def one(params, x_one, y_one):\n"
        "        return loss_fn(functional_call(model, params, (x_one.unsqueeze(0),)),"
        " y_one.unsqueeze(0))\n"
        "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
        "    return torch.cat([g.flatten(1) for g in grads.values()], dim=1).norm(dim=1)\n",
    ),
    Mistake(
        name="eval-not-restored",  # passes the visible asserts (their model has no dropout)
        message="model.eval() for the per-example pass is fine, but the caller's model must come "
        "back in the mode it had: note model.training first and call model.train(was_training) "
        "before returning.",
        code=_PSG_HEAD
        + "    model.eval()\n"
        + _PSG_FUNC
        + "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
        "    return torch.cat([g.flatten(1) for g in grads.values()], dim=1).norm(dim=1)\n",
    ),
    Mistake(
        name="float32-norms",  # passes the visible asserts (float32 there)
        message="A .float() before the norm throws away a float64 model's precision; keep the "
        "gradients' dtype.",
        code=_PSG_HEAD
        + _PSG_FUNC
        + "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
        "    flat = torch.cat([g.flatten(1).float() for g in grads.values()], dim=1)\n"
        "    return flat.norm(dim=1).to(x.dtype)\n",
    ),
]

MISTAKES["autocast_step"] = _AUTOCAST_MISTAKES
MISTAKES["per_sample_grad_norms"] = _PER_SAMPLE_MISTAKES

# ----------------------------------------------------------------------------- red-team round 2
_MORE_OVERFIT_LOOP_BODY = "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
MISTAKES["overfit_one_batch"] += [
    Mistake(
        name="stops-when-memorised",  # passes the visible asserts (their loss stays above 1e-3)
        message="Return one loss per step, num_steps of them: stopping once the loss is small "
        "returns fewer entries than asked (and trains less).",
        code=_OVERFIT_HEAD + _MORE_OVERFIT_LOOP_BODY + "    losses = []\n"
        "    for _ in range(num_steps):\n"
        "        optimizer.zero_grad()\n"
        "        loss = loss_fn(model(x), y)\n"
        "        losses.append(loss.item())\n"
        "        if loss.item() < 1e-3:\n"
        "            break\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "    return losses\n",
    ),
    Mistake(
        name="zero-grad-at-end-of-step",  # passes the visible asserts (no old gradients there)
        message="Zeroing after the step lets the caller's old .grad into the first update; "
        "zero the gradients before each backward().",
        code=_OVERFIT_HEAD + _MORE_OVERFIT_LOOP_BODY + "    losses = []\n"
        "    for _ in range(num_steps):\n"
        "        loss = loss_fn(model(x), y)\n"
        "        losses.append(loss.item())\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        optimizer.zero_grad()\n"
        "    return losses\n",
    ),
    Mistake(
        name="items-taken-at-the-end",  # passes the visible asserts
        message="Storing the loss tensors and calling .item() only at the end keeps every step's "
        "graph alive during the loop; store loss.item() at once.",
        code=_OVERFIT_HEAD + _MORE_OVERFIT_LOOP_BODY + "    losses = []\n"
        "    for _ in range(num_steps):\n"
        "        optimizer.zero_grad()\n"
        "        loss = loss_fn(model(x), y)\n"
        "        losses.append(loss)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "    return [l.item() for l in losses]\n",
    ),
    Mistake(
        name="float32-list",  # passes the visible asserts (float32 there)
        message="torch.tensor(losses) is float32: a float64 model's losses lose their digits; "
        "return the Python floats of loss.item().",
        code=_OVERFIT_HEAD
        + _MORE_OVERFIT_LOOP_BODY
        + _OVERFIT_LOOP
        + "    return torch.tensor(losses).tolist()\n",
    ),
    Mistake(
        name="records-eval-mode-loss",  # passes the visible asserts (no dropout there)
        message="The recorded loss must be the one the step trains on (training mode); an extra "
        "eval-mode forward pass records another number and costs a forward pass per step.",
        code=_OVERFIT_HEAD + _MORE_OVERFIT_LOOP_BODY + "    losses = []\n"
        "    for _ in range(num_steps):\n"
        "        model.eval()\n"
        "        with torch.no_grad():\n"
        "            losses.append(loss_fn(model(x), y).item())\n"
        "        model.train()\n"
        "        optimizer.zero_grad()\n"
        "        loss_fn(model(x), y).backward()\n"
        "        optimizer.step()\n"
        "    return losses\n",
    ),
]
MISTAKES["clipped_step"] += [
    Mistake(
        name="retains-graph",  # passes the visible asserts
        message="retain_graph=True keeps the whole forward pass's activations alive after the "
        "step; call loss.backward() plainly.",
        code="import torch\n"
        "def clipped_step(model, optimizer, loss, max_norm):\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward(retain_graph=True)\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    optimizer.step()\n"
        "    return norm.item()\n",
    ),
    Mistake(
        name="sets-train-mode",  # passes the visible asserts (their model is in training mode)
        message="model.train() in the step changes the caller's mode (an eval-mode model comes "
        "back training); the step only zeroes, backpropagates, clips and steps.",
        code="import torch\n"
        "def clipped_step(model, optimizer, loss, max_norm):\n"
        "    model.train()\n"
        "    optimizer.zero_grad()\n"
        "    loss.backward()\n"
        "    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
        "    optimizer.step()\n"
        "    return norm.item()\n",
    ),
]
MISTAKES["grad_norms"] += [
    Mistake(
        name="walks-modules-tied-twice",  # passes the visible asserts (nothing tied there)
        message="Walking named_modules() and each module's own parameters lists a tied (shared) "
        "parameter once per module; named_parameters() lists it once.",
        code="def grad_norms(model):\n"
        "    out = {}\n"
        "    for prefix, m in model.named_modules():\n"
        "        for n, p in m.named_parameters(recurse=False):\n"
        "            if p.grad is not None:\n"
        "                out[f'{prefix}.{n}' if prefix else n] = p.grad.norm().item()\n"
        "    return out\n",
    ),
    Mistake(
        name="squares-grad-in-place",  # passes the visible asserts (norms read once)
        message="g *= g squares the caller's gradient in place; only read the gradients.",
        code="def grad_norms(model):\n"
        "    out = {}\n"
        "    for n, p in model.named_parameters():\n"
        "        if p.grad is not None:\n"
        "            g = p.grad\n"
        "            g *= g\n"
        "            out[n] = g.sum().sqrt().item()\n"
        "    return out\n",
    ),
]
MISTAKES["diagnose_gradients"] += [
    Mistake(
        name="float32-tensor",  # passes the visible asserts
        message="torch.tensor(list(norms.values())) is float32: a finite norm beyond float32's "
        "range (1e60, say) becomes inf and reads as exploding; compare the Python floats.",
        code="import torch\n"
        "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
        "    t = torch.tensor(list(norms.values()))\n"
        "    if not torch.isfinite(t).all() or (t > explode_norm).any():\n"
        "        return 'exploding'\n"
        "    if t[0] <= vanish_ratio * t.max():\n"
        "        return 'vanishing'\n"
        "    return 'healthy'\n",
    ),
    Mistake(
        name="max-of-the-others",  # passes the visible asserts (two layers there)
        message="The largest norm is taken over all of them, the first included; with one "
        "layer there are no others.",
        code="import math\n"
        "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
        "    values = list(norms.values())\n"
        "    if any(not math.isfinite(v) or v > explode_norm for v in values):\n"
        "        return 'exploding'\n"
        "    if values[0] <= vanish_ratio * max(values[1:]):\n"
        "        return 'vanishing'\n"
        "    return 'healthy'\n",
    ),
    Mistake(
        name="ratio-by-division",  # passes the visible asserts (no zero norms there)
        message="first / largest divides by zero when every norm is 0; compare first <= "
        "vanish_ratio * largest.",
        code="import math\n"
        "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
        "    values = list(norms.values())\n"
        "    if any(not math.isfinite(v) or v > explode_norm for v in values):\n"
        "        return 'exploding'\n"
        "    if values[0] / max(values) <= vanish_ratio:\n"
        "        return 'vanishing'\n"
        "    return 'healthy'\n",
    ),
]
MISTAKES["first_nonfinite_module"] += [
    Mistake(
        name="early-exit-on-finite-output",  # passes the visible asserts
        message="A finite output does not mean every module's output was finite (tanh(inf) = "
        "1), and the extra forward pass runs the model twice; hook first, run once.",
        code="import torch\n"
        "def first_nonfinite_module(model, x):\n"
        "    with torch.no_grad():\n"
        "        if torch.isfinite(model(x)).all():\n"
        "            return None\n"
        + _FINDER_HOOK
        + "    handles = [m.register_forward_hook(make_hook(n))"
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
        name="first-tensor-of-tuple",  # passes the visible asserts (tensor outputs there)
        message="A tuple output can carry NaN/inf in any element; check every tensor in it.",
        code="import torch\n"
        "def first_nonfinite_module(model, x):\n"
        "    fired = []\n"
        "    def make_hook(name):\n"
        "        def hook(module, inputs, output):\n"
        "            out = output[0] if isinstance(output, (tuple, list)) else output\n"
        "            if not torch.isfinite(out).all():\n"
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
        name="restores-train-unconditionally",  # passes the visible asserts (training mode there)
        message="model.train() at the end puts an eval-mode model into training mode; note "
        "model.training first and restore that.",
        code="import torch\n"
        "def first_nonfinite_module(model, x):\n"
        + _FINDER_HOOK
        + "    handles = [m.register_forward_hook(make_hook(n))"
        " for n, m in model.named_modules() if n]\n"
        "    model.eval()\n"
        "    try:\n"
        "        with torch.no_grad():\n"
        "            model(x)\n"
        "    finally:\n"
        "        for h in handles:\n"
        "            h.remove()\n"
        "        model.train()\n"
        "    return fired[0] if fired else None\n",
    ),
]
MISTAKES["accumulated_step"] += [
    Mistake(
        name="extra-full-batch-forward",  # passes the visible asserts
        message="A second forward pass over the whole batch for the returned loss needs the "
        "memory accumulation avoids (and runs the model again); add up the pieces' scaled "
        "losses.",
        code="import torch\n" + _ACCUM_HEAD + "    optimizer.zero_grad()\n"
        "    with torch.no_grad():\n"
        "        total = loss_fn(model(x), y).item()\n"
        "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
        "        (loss_fn(model(xc), yc) * (len(xc) / len(x))).backward()\n"
        "    optimizer.step()\n"
        "    return total\n",
    ),
    Mistake(
        name="sets-loss-reduction-sum",  # passes the visible asserts
        message="Setting loss_fn.reduction changes the caller's loss function for good; scale "
        "each piece's mean loss by len(x_chunk) / len(x).",
        code=_ACCUM_HEAD + "    optimizer.zero_grad()\n"
        "    loss_fn.reduction = 'sum'\n"
        "    total = 0.0\n"
        "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
        "        loss = loss_fn(model(xc), yc) / len(x)\n"
        "        loss.backward()\n"
        "        total += loss.item()\n"
        "    optimizer.step()\n"
        "    return total\n",
    ),
    Mistake(
        name="zeroes-again-after-step",  # passes the visible asserts
        message="Zeroing again after the step throws away the gradients the caller may log or "
        "clip; zero once, before the first backward().",
        code=_ACCUM_HEAD + "    optimizer.zero_grad()\n"
        "    total = 0.0\n"
        "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
        "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
        "        loss.backward()\n"
        "        total += loss.item()\n"
        "    optimizer.step()\n"
        "    optimizer.zero_grad()\n"
        "    return total\n",
    ),
]
MISTAKES["set_seed"] += [
    Mistake(
        name="modulo-for-every-library",  # passes the visible asserts (2**40 only must not raise)
        message="Only NumPy needs seed % 2**32; random and torch take the whole seed, so seeds "
        "2**32 apart must not give the same run.",
        code="import random, numpy as np, torch\n"
        "def set_seed(seed):\n"
        "    seed = seed % 2**32\n"
        "    random.seed(seed)\n"
        "    np.random.seed(seed)\n"
        "    torch.manual_seed(seed)\n"
        "    return torch.Generator().manual_seed(seed)\n",
    ),
    Mistake(
        name="numpy-seed-clamped",  # passes the visible asserts
        message="min(seed, 2**32 - 1) gives NumPy the same seed for every large seed; use "
        "seed % 2**32.",
        code="import random, numpy as np, torch\n"
        "def set_seed(seed):\n"
        "    random.seed(seed)\n"
        "    np.random.seed(min(seed, 2**32 - 1))\n"
        "    torch.manual_seed(seed)\n"
        "    return torch.Generator().manual_seed(seed)\n",
    ),
]
MISTAKES["per_sample_grad_norms"] += [
    Mistake(
        name="norms-in-x-dtype",  # passes the visible asserts (float32 x there)
        message="Return the parameters' dtype: x may be integer ids (an embedding) or another "
        "float type than the weights.",
        code=_PSG_HEAD + "    out = torch.zeros(len(x), dtype=x.dtype, device=x.device)\n"
        "    params = [p for p in model.parameters() if p.requires_grad]\n"
        "    for i in range(len(x)):\n"
        "        grads = torch.autograd.grad(loss_fn(model(x[i:i + 1]), y[i:i + 1]), params,"
        " allow_unused=True)\n"
        "        out[i] = torch.sqrt(sum((g ** 2).sum() for g in grads if g is not None))\n"
        "    return out\n",
    ),
    Mistake(
        name="params-not-detached",  # passes the visible asserts
        message="Passing the live parameters to torch.func keeps a graph back to them: the "
        "norms require grad and hold every example's activations; detach the parameters.",
        code=_PSG_HEAD + "    from torch.func import functional_call, grad, vmap\n"
        "    params = {n: p for n, p in model.named_parameters() if p.requires_grad}\n"
        "    def one(params, x_one, y_one):\n"
        "        return loss_fn(functional_call(model, params, (x_one.unsqueeze(0),)),"
        " y_one.unsqueeze(0))\n"
        "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
        "    return torch.cat([g.flatten(1) for g in grads.values()], dim=1).norm(dim=1)\n",
    ),
    Mistake(
        name="squeeze-batch-of-one",  # passes the visible asserts (N > 1 there)
        message="squeeze() also drops the batch axis when N is 1: return shape (N,).",
        code=_PSG_HEAD
        + _PSG_FUNC
        + "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
        "    flat = torch.cat([g.flatten(1) for g in grads.values()], dim=1)\n"
        "    return flat.norm(dim=1, keepdim=True).squeeze()\n",
    ),
    Mistake(
        name="restores-train-unconditionally",  # passes the visible asserts (training mode there)
        message="model.train() at the end puts an eval-mode model into training mode; restore "
        "the mode the model had (model.train(was_training)).",
        code=_PSG_HEAD
        + "    model.eval()\n"
        + _PSG_FUNC
        + "    grads = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
        "    model.train()\n"
        "    return torch.cat([g.flatten(1) for g in grads.values()], dim=1).norm(dim=1)\n",
    ),
]

# Device red team (issue #27): norms collected on the CPU.
MISTAKES["per_sample_grad_norms"] += [
    Mistake(
        name="rebuilt-from-items",
        message="torch.tensor([... .item() ...]) rebuilds the norms on the CPU: with x on a GPU they come back on another device (and each .item() waits for the GPU). torch.stack the norm tensors instead.",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    params = [p for p in model.parameters() if p.requires_grad]\n"
            "    norms = []\n"
            "    for i in range(len(x)):\n"
            "        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])\n"
            "        grads = torch.autograd.grad(loss, params, allow_unused=True)\n"
            "        norms.append(torch.cat([g.flatten() for g in grads if g is not None]).norm().item())\n"
            "    return torch.tensor(norms, dtype=params[0].dtype)\n"
        ),
    ),
    Mistake(
        name="cpu-buffer-filled",
        message="torch.empty(n) without device= collects the norms on the CPU: with x on a GPU they come back on another device. Make the buffer with x.new_empty(n, dtype=...) or torch.stack the norms.",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    params = [p for p in model.parameters() if p.requires_grad]\n"
            "    out = torch.empty(len(x), dtype=params[0].dtype)\n"
            "    for i in range(len(x)):\n"
            "        loss = loss_fn(model(x[i:i + 1]), y[i:i + 1])\n"
            "        grads = torch.autograd.grad(loss, params, allow_unused=True)\n"
            "        out[i] = torch.cat([g.flatten() for g in grads if g is not None]).norm()\n"
            "    return out\n"
        ),
    ),
]

# ----------------------------------------------------------------------------- red-team round 3
# Fresh wrong answers written from the student notebook's texts (issue #27): global switches
# left on, frozen parameters holding a .grad, modules that run twice, the model's own forward,
# eval-mode callers of training steps, shared streams between the seeded generators.
MISTAKES["overfit_one_batch"] += [
    Mistake(
        name="anomaly-detection-left-on",  # passes the visible asserts
        message="torch.autograd.set_detect_anomaly(True) stays on after the function returns: every later backward pass of the caller runs several times slower. Use the context manager, or leave it off.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    torch.autograd.set_detect_anomaly(True)\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return losses\n"
        ),
    ),
    Mistake(
        name="deterministic-algorithms-left-on",  # passes the visible asserts
        message="torch.use_deterministic_algorithms(True) is a global switch that stays on after the call (some later operations then raise); it is the caller's business.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    torch.use_deterministic_algorithms(True)\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return losses\n"
        ),
    ),
    Mistake(
        name="records-with-second-forward",  # passes the visible asserts (no BatchNorm there)
        message="A second forward pass per step to record the loss runs the model twice: BatchNorm's running statistics move twice as often as in one training step.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        with torch.no_grad():\n"
            "            losses.append(loss_fn(model(x), y).item())\n"
            "        loss_fn(model(x), y).backward()\n"
            "        optimizer.step()\n"
            "    return losses\n"
        ),
    ),
    Mistake(
        name="unfreezes-parameters",  # passes the visible asserts (nothing frozen there)
        message="model.requires_grad_(True) unfreezes the caller's frozen layers and trains them too.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    model.requires_grad_(True)\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return losses\n"
        ),
    ),
    Mistake(
        name="clips-for-safety",  # passes the visible asserts
        message="Clipping the gradients to 1.0 is not in the task: the steps differ from plain Adam's whenever the gradient norm is above 1.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "        optimizer.step()\n"
            "    return losses\n"
        ),
    ),
    Mistake(
        name="adamw-default-weight-decay",  # passes the visible asserts
        message="AdamW's default weight_decay=0.01 shrinks the weights every step: the task asks for torch.optim.Adam with its defaults.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return losses\n"
        ),
    ),
]
MISTAKES["clipped_step"] += [
    Mistake(
        name="anomaly-detection-left-on",  # passes the visible asserts
        message="torch.autograd.set_detect_anomaly(True) stays on after the step: every later backward pass of the caller runs several times slower.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    torch.autograd.set_detect_anomaly(True)\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    n = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    return n.item()\n"
        ),
    ),
    Mistake(
        name="backward-create-graph",  # passes the visible asserts
        message="loss.backward(create_graph=True) builds a graph of the gradients themselves and keeps the loss's graph alive after the step.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward(create_graph=True)\n"
            "    n = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    return n.item()\n"
        ),
    ),
    Mistake(
        name="zero-grad-after-step",  # passes the visible asserts
        message="A second zero_grad() after the step throws away the clipped gradients the caller may want to log or inspect; zero them only before backward().",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    n = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    optimizer.step()\n"
            "    optimizer.zero_grad()\n"
            "    return n.item()\n"
        ),
    ),
    Mistake(
        name="exhausted-parameters-generator",  # fails the visible asserts (nothing is clipped)
        message="model.parameters() is a generator: measuring the norm consumes it, and clip_grad_norm_ then gets nothing to clip. Use list(model.parameters()).",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def clipped_step(model, optimizer, loss, max_norm):\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    params = model.parameters()\n"
            "    norm = nn.utils.get_total_norm([p.grad for p in params if p.grad is not None])\n"
            "    nn.utils.clip_grad_norm_(params, max_norm)\n"
            "    optimizer.step()\n"
            "    return norm.item()\n"
        ),
    ),
]
MISTAKES["grad_norms"] += [
    Mistake(
        name="skips-frozen-with-grad",  # passes the visible asserts (their frozen layer has no .grad)
        message="Testing p.requires_grad drops a frozen parameter that still holds a .grad from before it was frozen; test p.grad is None.",
        code=(
            "import torch, math\n"
            "def grad_norms(model):\n"
            "    return {n: p.grad.norm().item() for n, p in model.named_parameters() if p.requires_grad and p.grad is not None}\n"
        ),
    ),
    Mistake(
        name="remove-duplicate-false",  # passes the visible asserts (nothing tied there)
        message="named_parameters(remove_duplicate=False) lists a tied parameter under both names; one parameter has one gradient.",
        code=(
            "import torch, math\n"
            "def grad_norms(model):\n"
            "    return {n: p.grad.norm().item() for n, p in model.named_parameters(remove_duplicate=False) if p.grad is not None}\n"
        ),
    ),
    Mistake(
        name="sorted-names",  # passes the visible asserts (their names sort in model order)
        message="Sorting by name loses the model's order (input side first), which diagnose_gradients relies on.",
        code=(
            "import torch, math\n"
            "def grad_norms(model):\n"
            "    return dict(sorted((n, p.grad.norm().item()) for n, p in model.named_parameters() if p.grad is not None))\n"
        ),
    ),
]
MISTAKES["diagnose_gradients"] += [
    Mistake(
        name="vanishing-tested-first",  # passes the visible asserts
        message="Testing 'vanishing' before 'exploding' calls a profile with a huge norm elsewhere vanishing; the text fixes the order.",
        code=(
            "import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    vals = list(norms.values())\n"
            "    first, largest = vals[0], max(vals)\n"
            "    if first <= vanish_ratio * largest:\n"
            "        return 'vanishing'\n"
            "    if any(not math.isfinite(v) or v > explode_norm for v in vals):\n"
            "        return 'exploding'\n"
            "    return 'healthy'\n"
        ),
    ),
    Mistake(
        name="all-zero-healthy",  # passes the visible asserts (no zero norms there)
        message="All-zero norms are at most vanish_ratio times the largest (0 <= 0): 'vanishing', not 'healthy'.",
        code=(
            "import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    vals = list(norms.values())\n"
            "    first, largest = vals[0], max(vals)\n"
            "    if any(not math.isfinite(v) or v > explode_norm for v in vals):\n"
            "        return 'exploding'\n"
            "    if largest > 0 and first <= vanish_ratio * largest:\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n"
        ),
    ),
    Mistake(
        name="total-norm-explodes",  # passes the visible asserts
        message="Comparing the total norm of all layers with explode_norm calls several moderate layers exploding; the rule is any one norm above it.",
        code=(
            "import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    vals = list(norms.values())\n"
            "    first, largest = vals[0], max(vals)\n"
            "    total = math.sqrt(sum(v * v for v in vals))\n"
            "    if not math.isfinite(total) or total > explode_norm:\n"
            "        return 'exploding'\n"
            "    if first <= vanish_ratio * largest:\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n"
        ),
    ),
    Mistake(
        name="ratio-to-mean",  # passes the visible asserts
        message="The first norm is compared with vanish_ratio times the largest norm, not the mean.",
        code=(
            "import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    vals = list(norms.values())\n"
            "    first, largest = vals[0], max(vals)\n"
            "    if any(not math.isfinite(v) or v > explode_norm for v in vals):\n"
            "        return 'exploding'\n"
            "    if first <= vanish_ratio * sum(vals) / len(vals):\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n"
        ),
    ),
    Mistake(
        name="rounds-norms",  # passes the visible asserts
        message="round(v, 6) turns uniformly small norms into zeros, which then look vanishing.",
        code=(
            "import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    vals = [round(v, 6) if math.isfinite(v) else v for v in norms.values()]\n"
            "    first, largest = vals[0], max(vals)\n"
            "    if any(not math.isfinite(v) or v > explode_norm for v in vals):\n"
            "        return 'exploding'\n"
            "    if first <= vanish_ratio * largest:\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n"
        ),
    ),
]
MISTAKES["first_nonfinite_module"] += [
    Mistake(
        name="hooks-the-model-itself",  # passes the visible asserts
        message="named_modules() starts with the model itself (name ''): hooking it returns '' when only the model's own forward makes the NaN.",
        code=(
            "import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    culprits = []\n"
            "    def make(name):\n"
            "        def hook(m, i, out):\n"
            "            outs = out if isinstance(out, (tuple, list)) else (out,)\n"
            "            if any(isinstance(o, torch.Tensor) and not torch.isfinite(o).all() for o in outs):\n"
            "                culprits.append(name)\n"
            "        return hook\n"
            "    hs = [m.register_forward_hook(make(n)) for n, m in model.named_modules()]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in hs:\n"
            "            h.remove()\n"
            "    return culprits[0] if culprits else None\n"
        ),
    ),
    Mistake(
        name="swallows-error-returns-none",  # passes the visible asserts (their forward passes never raise)
        message="except Exception: return None hides the error and answers 'all finite' for a forward pass that never finished.",
        code=(
            "import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    culprits = []\n"
            "    def make(name):\n"
            "        def hook(m, i, out):\n"
            "            outs = out if isinstance(out, (tuple, list)) else (out,)\n"
            "            if any(isinstance(o, torch.Tensor) and not torch.isfinite(o).all() for o in outs):\n"
            "                culprits.append(name)\n"
            "        return hook\n"
            "    hs = [m.register_forward_hook(make(n)) for n, m in model.named_modules() if n]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    except Exception:\n"
            "        return None\n"
            "    finally:\n"
            "        for h in hs:\n"
            "            h.remove()\n"
            "    return culprits[0] if culprits else None\n"
        ),
    ),
    Mistake(
        name="anomaly-detection-left-on",  # passes the visible asserts
        message="torch.autograd.set_detect_anomaly(True) stays on after the call: every later backward pass of the caller runs several times slower.",
        code=(
            "import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    culprits = []\n"
            "    def make(name):\n"
            "        def hook(m, i, out):\n"
            "            outs = out if isinstance(out, (tuple, list)) else (out,)\n"
            "            if any(isinstance(o, torch.Tensor) and not torch.isfinite(o).all() for o in outs):\n"
            "                culprits.append(name)\n"
            "        return hook\n"
            "    torch.autograd.set_detect_anomaly(True)\n"
            "    hs = [m.register_forward_hook(make(n)) for n, m in model.named_modules() if n]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in hs:\n"
            "            h.remove()\n"
            "    return culprits[0] if culprits else None\n"
        ),
    ),
    Mistake(
        name="outputs-by-name-dict",  # passes the visible asserts (no module runs twice there)
        message="A dict of outputs by name keeps the last output of a module that runs twice (a shared ReLU) at the place of its first: the order of firing is lost.",
        code=(
            "import torch\n"
            "def first_nonfinite_module(model, x):\n"
            "    outputs = {}\n"
            "    def make(name):\n"
            "        def hook(m, i, out):\n"
            "            outputs[name] = out\n"
            "        return hook\n"
            "    hs = [m.register_forward_hook(make(n)) for n, m in model.named_modules() if n]\n"
            "    try:\n"
            "        with torch.no_grad():\n"
            "            model(x)\n"
            "    finally:\n"
            "        for h in hs:\n"
            "            h.remove()\n"
            "    for name, out in outputs.items():\n"
            "        outs = out if isinstance(out, (tuple, list)) else (out,)\n"
            "        if any(not torch.isfinite(o).all() for o in outs):\n"
            "            return name\n"
            "    return None\n"
        ),
    ),
]
MISTAKES["accumulated_step"] += [
    Mistake(
        name="clips-for-safety",  # passes the visible asserts (their norm is below 1)
        message="Clipping before the step is not in the task: the accumulated step no longer equals the whole-batch step.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
            "    optimizer.step()\n"
            "    return total\n"
        ),
    ),
    Mistake(
        name="anomaly-detection-left-on",  # passes the visible asserts
        message="torch.autograd.set_detect_anomaly(True) stays on after the step: every later backward pass of the caller runs several times slower.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    torch.autograd.set_detect_anomaly(True)\n"
            "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n"
        ),
    ),
    Mistake(
        name="all-forwards-first",  # passes the visible asserts
        message="Running every piece's forward pass before the first backward() keeps all the pieces' graphs alive at once: the memory of the whole batch.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    optimizer.zero_grad()\n"
            "    losses = [loss_fn(model(xc), yc) * (len(xc) / len(x)) for xc, yc in zip(x.split(micro_batch), y.split(micro_batch))]\n"
            "    for l in losses:\n"
            "        l.backward()\n"
            "    optimizer.step()\n"
            "    return sum(l.item() for l in losses)\n"
        ),
    ),
    Mistake(
        name="forces-train-mode",  # passes the visible asserts (their model is in training mode)
        message="model.train() inside changes the caller's mode (a model in eval mode for frozen BatchNorm statistics).",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
            "    model.train()\n"
            "    optimizer.zero_grad()\n"
            "    total = 0.0\n"
            "    for xc, yc in zip(x.split(micro_batch), y.split(micro_batch)):\n"
            "        loss = loss_fn(model(xc), yc) * (len(xc) / len(x))\n"
            "        loss.backward()\n"
            "        total += loss.item()\n"
            "    optimizer.step()\n"
            "    return total\n"
        ),
    ),
]
MISTAKES["autocast_step"] += [
    Mistake(
        name="anomaly-detection-left-on",  # passes the visible asserts
        message="torch.autograd.set_detect_anomaly(True) stays on after the step: every later backward pass of the caller runs several times slower.",
        code=(
            "import torch, copy\n"
            "from torch import nn\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    torch.autograd.set_detect_anomaly(True)\n"
            "    if resume is not None:\n"
            "        model.load_state_dict(resume['model'])\n"
            "        optimizer.load_state_dict(resume['optimizer'])\n"
            "        scaler.load_state_dict(resume['scaler'])\n"
            "    optimizer.zero_grad()\n"
            "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
            "    with torch.autocast(device_type=x.device.type, dtype=dtype):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    ck = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'scaler': scaler.state_dict()}\n"
            "    return {'loss': loss.item(), 'grad_norm': norm.item(), 'checkpoint': ck}\n"
        ),
    ),
    Mistake(
        name="resume-after-forward",  # fails the visible asserts (their resumed step differs)
        message="Loading the checkpoint after the forward pass computes the loss, and the gradients, with the weights from before the restart.",
        code=(
            "import torch, copy\n"
            "from torch import nn\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    optimizer.zero_grad()\n"
            "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
            "    with torch.autocast(device_type=x.device.type, dtype=dtype):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    if resume is not None:\n"
            "        model.load_state_dict(resume['model'])\n"
            "        optimizer.load_state_dict(resume['optimizer'])\n"
            "        scaler.load_state_dict(resume['scaler'])\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    ck = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'scaler': scaler.state_dict()}\n"
            "    return {'loss': loss.item(), 'grad_norm': norm.item(), 'checkpoint': ck}\n"
        ),
    ),
    Mistake(
        name="zero-grad-at-end-not-start",  # passes the visible asserts (no old gradients there)
        message="zero_grad() at the end instead of the start adds the stale gradients to this step's and throws the clipped ones away.",
        code=(
            "import torch, copy\n"
            "from torch import nn\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    if resume is not None:\n"
            "        model.load_state_dict(resume['model'])\n"
            "        optimizer.load_state_dict(resume['optimizer'])\n"
            "        scaler.load_state_dict(resume['scaler'])\n"
            "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
            "    with torch.autocast(device_type=x.device.type, dtype=dtype):\n"
            "        loss = loss_fn(model(x), y)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)\n"
            "    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n"
            "    scaler.step(optimizer)\n"
            "    scaler.update()\n"
            "    optimizer.zero_grad()\n"
            "    ck = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'scaler': scaler.state_dict()}\n"
            "    return {'loss': loss.item(), 'grad_norm': norm.item(), 'checkpoint': ck}\n"
        ),
    ),
    Mistake(
        name="forces-train-mode",  # passes the visible asserts (their model is in training mode)
        message="model.train() inside changes the caller's mode (a model in eval mode for frozen BatchNorm statistics).",
        code=(
            "import torch, copy\n"
            "from torch import nn\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    if resume is not None:\n"
            "        model.load_state_dict(resume['model'])\n"
            "        optimizer.load_state_dict(resume['optimizer'])\n"
            "        scaler.load_state_dict(resume['scaler'])\n"
            "    model.train()\n"
            "    optimizer.zero_grad()\n"
            "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
            "    with torch.autocast(device_type=x.device.type, dtype=dtype):\n"
            "        loss = loss_fn(model(x), y)\n"
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
MISTAKES["set_seed"] += [
    Mistake(
        name="numpy-seed-from-python-draw",  # passes the visible asserts
        message="Seeding NumPy with a number drawn from Python's random moves Python's stream: after set_seed it no longer starts where random.seed(seed) starts.",
        code=(
            "import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(random.randrange(2**32))\n"
            "    torch.manual_seed(seed)\n"
            "    return torch.Generator().manual_seed(seed)\n"
        ),
    ),
    Mistake(
        name="python-seeded-with-string",  # passes the visible asserts
        message="random.seed(str(seed)) hashes the string: another sequence than random.seed(seed).",
        code=(
            "import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(str(seed))\n"
            "    np.random.seed(seed % 2**32)\n"
            "    torch.manual_seed(seed)\n"
            "    return torch.Generator().manual_seed(seed)\n"
        ),
    ),
    Mistake(
        name="generator-seed-drawn-from-numpy",  # passes the visible asserts
        message="Seeding the returned generator with a number drawn from NumPy moves NumPy's stream, and the generator is not seeded with seed.",
        code=(
            "import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed % 2**32)\n"
            "    torch.manual_seed(seed)\n"
            "    return torch.Generator().manual_seed(int(np.random.randint(2**31)))\n"
        ),
    ),
    Mistake(
        name="seeds-cuda-only",  # fails the visible asserts
        message="torch.cuda.manual_seed_all seeds only the CUDA generators; torch.manual_seed seeds the CPU one (and CUDA's).",
        code=(
            "import random, numpy as np, torch\n"
            "def set_seed(seed):\n"
            "    random.seed(seed)\n"
            "    np.random.seed(seed % 2**32)\n"
            "    torch.cuda.manual_seed_all(seed)\n"
            "    return torch.Generator().manual_seed(seed)\n"
        ),
    ),
]
MISTAKES["per_sample_grad_norms"] += [
    Mistake(
        name="float64-norms",  # passes the visible asserts (they compare values only)
        message="Norms computed and returned in float64 for float32 parameters: return the parameters' dtype.",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    from torch.func import functional_call, grad, vmap\n"
            "    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}\n"
            "    def one(params, x_one, y_one):\n"
            "        return loss_fn(functional_call(model, params, (x_one.unsqueeze(0),)), y_one.unsqueeze(0))\n"
            "    g = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
            "    return torch.sqrt(sum(v.flatten(1).double().pow(2).sum(1) for v in g.values()))\n"
        ),
    ),
    Mistake(
        name="zero-grad-after-each",  # passes the visible asserts (no old gradients there)
        message="Zeroing after each example's backward() instead of before: the first example's norm includes the caller's old .grad.",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    out = []\n"
            "    for i in range(len(x)):\n"
            "        loss_fn(model(x[i:i+1]), y[i:i+1]).backward()\n"
            "        out.append(torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters() if p.grad is not None and p.requires_grad)))\n"
            "        model.zero_grad()\n"
            "    return torch.stack(out).detach()\n"
        ),
    ),
    Mistake(
        name="params-detached-in-place",  # passes the visible asserts
        message="p.detach_() detaches the caller's parameters in place: they stop requiring grad. Use p.detach().",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    from torch.func import functional_call, grad, vmap\n"
            "    params = {n: p.detach_() for n, p in model.named_parameters() if p.requires_grad}\n"
            "    def one(params, x_one, y_one):\n"
            "        return loss_fn(functional_call(model, params, (x_one.unsqueeze(0),)), y_one.unsqueeze(0))\n"
            "    g = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
            "    return torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in g.values()))\n"
        ),
    ),
    Mistake(
        name="loss-reduction-sum",  # passes the visible asserts (their targets have one column)
        message="Setting loss_fn.reduction = 'sum' changes the caller's loss function and each example's loss (summed over D targets, not averaged).",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    loss_fn.reduction = 'sum'\n"
            "    from torch.func import functional_call, grad, vmap\n"
            "    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}\n"
            "    def one(params, x_one, y_one):\n"
            "        return loss_fn(functional_call(model, params, (x_one.unsqueeze(0),)), y_one.unsqueeze(0))\n"
            "    g = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)\n"
            "    return torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in g.values()))\n"
        ),
    ),
]
MISTAKES["overfit_one_batch"] += [
    Mistake(
        name="keeps-best-weights",  # passes the visible asserts (they read only the losses)
        message="Loading the weights of the lowest recorded loss at the end undoes the last steps: the model must end where num_steps updates took it.",
        code=(
            "import copy\n"
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses, best, best_state = [], float('inf'), None\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        if loss.item() < best:\n"
            "            best, best_state = loss.item(), copy.deepcopy(model.state_dict())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    if best_state is not None:\n"
            "        model.load_state_dict(best_state)\n"
            "    return losses\n"
        ),
    ),
]
MISTAKES["overfit_one_batch"] += [
    Mistake(
        name="x-requires-grad",  # passes the visible asserts
        message="x.requires_grad_() changes the caller's batch: every later use of x builds a graph back to it.",
        code=(
            "import torch\n"
            "from torch import nn\n"
            "def overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n"
            "    x.requires_grad_(x.is_floating_point())\n"
            "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        optimizer.zero_grad()\n"
            "        loss = loss_fn(model(x), y)\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "    return losses\n"
        ),
    ),
]
MISTAKES["diagnose_gradients"] += [
    Mistake(
        name="isfinite-of-max",  # passes the visible asserts (their NaN comes first)
        message="max() with a NaN depends on where the NaN is (max([1.0, nan]) is 1.0): test math.isfinite on every norm.",
        code=(
            "import math\n"
            "def diagnose_gradients(norms, vanish_ratio=1e-3, explode_norm=1e3):\n"
            "    vals = list(norms.values())\n"
            "    first, largest = vals[0], max(vals)\n"
            "    if not math.isfinite(largest) or largest > explode_norm:\n"
            "        return 'exploding'\n"
            "    if first <= vanish_ratio * largest:\n"
            "        return 'vanishing'\n"
            "    return 'healthy'\n"
        ),
    ),
]
MISTAKES["autocast_step"] += [
    Mistake(
        name="device-type-from-model",  # passes the visible asserts (model and x on one device there)
        message="The device type comes from x, as the text says, not from the model's parameters.",
        code=(
            "import torch, copy\n"
            "from torch import nn\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    if resume is not None:\n"
            "        model.load_state_dict(resume['model'])\n"
            "        optimizer.load_state_dict(resume['optimizer'])\n"
            "        scaler.load_state_dict(resume['scaler'])\n"
            "    optimizer.zero_grad()\n"
            "    dev = next(model.parameters()).device.type\n"
            "    dtype = torch.float16 if dev == 'cuda' else torch.bfloat16\n"
            "    with torch.autocast(device_type=dev, dtype=dtype):\n"
            "        loss = loss_fn(model(x), y)\n"
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
MISTAKES["autocast_step"] += [
    Mistake(
        name="loss-outside-autocast",  # passes the visible asserts (within their tolerance)
        message="The loss outside autocast runs on the low-precision logits in low precision; inside autocast cross_entropy runs in float32.",
        code=(
            "import torch, copy\n"
            "from torch import nn\n"
            "def autocast_step(model, optimizer, scaler, loss_fn, x, y, max_norm, resume=None):\n"
            "    if resume is not None:\n"
            "        model.load_state_dict(resume['model'])\n"
            "        optimizer.load_state_dict(resume['optimizer'])\n"
            "        scaler.load_state_dict(resume['scaler'])\n"
            "    optimizer.zero_grad()\n"
            "    dtype = torch.float16 if x.device.type == 'cuda' else torch.bfloat16\n"
            "    with torch.autocast(device_type=x.device.type, dtype=dtype):\n"
            "        out = model(x)\n"
            "    loss = loss_fn(out, y)\n"
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
MISTAKES["per_sample_grad_norms"] += [
    Mistake(
        name="loop-create-graph",  # passes the visible asserts
        message="torch.autograd.grad(..., create_graph=True) returns gradients with a graph: the norms keep every example's activations alive.",
        code=(
            "import torch\n"
            "def per_sample_grad_norms(model, loss_fn, x, y):\n"
            "    params = [p for p in model.parameters() if p.requires_grad]\n"
            "    out = []\n"
            "    for i in range(len(x)):\n"
            "        l = loss_fn(model(x[i:i+1]), y[i:i+1])\n"
            "        gs = torch.autograd.grad(l, params, allow_unused=True, create_graph=True)\n"
            "        out.append(torch.cat([g.flatten() for g in gs if g is not None]).norm())\n"
            "    return torch.stack(out)\n"
        ),
    ),
]


# ----------------------------------------------------------------------------- red team, round 2
MISTAKES["grad_norms"] += [
    Mistake(
        name="float64-norm",
        message="The text asks for the norm in the gradient's own dtype: a float32 gradient of about 1e20 has a float32 norm of inf, which .double() (or Python floats) hides.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef grad_norms(model):\n    return {n: p.grad.double().norm().item() for n, p in model.named_parameters() if p.grad is not None}\n",
    ),
    Mistake(
        name="python-float-norm",
        message="Summing squares as Python floats is a float64 norm, not p.grad.norm() in the gradient's own dtype: a float32 norm of inf comes out finite.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef grad_norms(model):\n    out = {}\n    for n, p in model.named_parameters():\n        if p.grad is None:\n            continue\n        out[n] = math.sqrt(sum(v * v for v in p.grad.flatten().tolist()))\n    return out\n",
    ),
    Mistake(
        name="clip-to-read-norm",
        message="clip_grad_norm_ with a huge max_norm still multiplies the gradients in place; with an inf entry it turns them into NaN. Only read .grad: p.grad.norm().",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef grad_norms(model):\n    out = {}\n    for n, p in model.named_parameters():\n        if p.grad is not None:\n            out[n] = float(nn.utils.clip_grad_norm_([p], max_norm=1e30))\n    return out\n",
    ),
]
MISTAKES["first_nonfinite_module"] += [
    Mistake(
        name="eval-restore-root-only",
        message="model.train(was) after model.eval() resets every submodule to the root's mode: a layer the caller froze in eval mode comes back in training mode. Leave the mode alone (or restore each module's own flag).",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef first_nonfinite_module(model, x):\n    was = model.training\n    model.eval()\n    found = []\n    handles = []\n    def mk(name):\n        def hook(m, i, o):\n            outs = o if isinstance(o, (tuple, list)) else (o,)\n            if not found and any(isinstance(t, torch.Tensor) and not torch.isfinite(t).all() for t in outs):\n                found.append(name)\n        return hook\n    try:\n        for name, m in model.named_modules():\n            if name:\n                handles.append(m.register_forward_hook(mk(name)))\n        with torch.no_grad():\n            model(x)\n    finally:\n        for h in handles:\n            h.remove()\n        model.train(was)\n    return found[0] if found else None\n",
    ),
    Mistake(
        name="isfinite-of-sum",
        message="torch.isfinite(t.sum()) flags large finite outputs whose sum overflows; test every element: torch.isfinite(t).all().",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef first_nonfinite_module(model, x):\n    found = []\n    handles = []\n    def mk(name):\n        def hook(m, i, o):\n            outs = o if isinstance(o, (tuple, list)) else (o,)\n            if not found and any(not torch.isfinite(t.sum()) for t in outs):\n                found.append(name)\n        return hook\n    try:\n        for name, m in model.named_modules():\n            if name:\n                handles.append(m.register_forward_hook(mk(name)))\n        with torch.no_grad():\n            model(x)\n    finally:\n        for h in handles:\n            h.remove()\n    return found[0] if found else None\n",
    ),
    Mistake(
        name="abs-max-check",
        message="t.abs().max() raises on an empty output; torch.isfinite(t).all() handles every shape.",
        code='import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef first_nonfinite_module(model, x):\n    found = []\n    handles = []\n    def mk(name):\n        def hook(m, i, o):\n            outs = o if isinstance(o, (tuple, list)) else (o,)\n            for t in outs:\n                bad = torch.isnan(t).any() or t.abs().max() == float("inf")\n                if bad and not found:\n                    found.append(name)\n        return hook\n    try:\n        for name, m in model.named_modules():\n            if name:\n                handles.append(m.register_forward_hook(mk(name)))\n        with torch.no_grad():\n            model(x)\n    finally:\n        for h in handles:\n            h.remove()\n    return found[0] if found else None\n',
    ),
    Mistake(
        name="no-no-grad",
        message="The forward pass must run under torch.no_grad(): with autograd recording it keeps activations for a backward pass that never comes.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef first_nonfinite_module(model, x):\n    found = []\n    handles = []\n    def mk(name):\n        def hook(m, i, o):\n            outs = o if isinstance(o, (tuple, list)) else (o,)\n            if not found and any(not torch.isfinite(t).all() for t in outs):\n                found.append(name)\n        return hook\n    for name, m in model.named_modules():\n        if name:\n            handles.append(m.register_forward_hook(mk(name)))\n    try:\n        model(x)\n    finally:\n        for h in handles:\n            h.remove()\n    return found[0] if found else None\n",
    ),
]
MISTAKES["per_sample_grad_norms"] += [
    Mistake(
        name="eval-restore-root-only",
        message="model.train(was) after model.eval() resets every submodule to the root's mode: a layer the caller froze in eval mode comes back in training mode. Leave the mode alone (or restore each module's own flag).",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef per_sample_grad_norms(model, loss_fn, x, y):\n    from torch.func import functional_call, grad, vmap\n    was = model.training\n    model.eval()\n    params = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}\n    def f(params, xo, yo):\n        return loss_fn(functional_call(model, params, (xo.unsqueeze(0),)), yo.unsqueeze(0))\n    try:\n        g = vmap(grad(f), in_dims=(None, 0, 0))(params, x, y)\n    finally:\n        model.train(was)\n    return torch.sqrt(sum(v.flatten(1).pow(2).sum(1) for v in g.values()))\n",
    ),
]

# ----------------------------------------------------------------------------- red-team round 3

MISTAKES["overfit_one_batch"] += [
    Mistake(
        name="tied-weight-listed-twice",
        message="Collecting the parameters module by module lists a weight shared by two layers (tied) twice, so Adam updates it twice per step. Build the optimizer from model.parameters(), which lists every parameter once.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef overfit_one_batch(model, x, y, loss_fn, num_steps=100, lr=1e-2):\n    import torch\n    params = [p for m in model.modules() for p in m.parameters(recurse=False)]\n    opt = torch.optim.Adam(params, lr=lr)\n    losses = []\n    for _ in range(num_steps):\n        opt.zero_grad()\n        loss = loss_fn(model(x), y)\n        losses.append(loss.item())\n        loss.backward()\n        opt.step()\n    return losses\n",
    ),
]
MISTAKES["first_nonfinite_module"] += [
    Mistake(
        name="float32-cast-check",
        message="Casting the outputs to float32 before the test turns finite float64 values beyond float32's range (about 3.4e38) into inf. Test each tensor in its own dtype: torch.isfinite(t).all().",
        code='import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef first_nonfinite_module(model, x):\n    import torch\n    found = []\n    def hook(name):\n        def f(m, i, o):\n            outs = o if isinstance(o, (tuple, list)) else (o,)\n            if not found and any((t.float().abs() == float("inf")).any() or t.float().isnan().any() for t in outs):\n                found.append(name)\n        return f\n    hs = [m.register_forward_hook(hook(n)) for n, m in model.named_modules() if n]\n    try:\n        with torch.no_grad():\n            model(x)\n    finally:\n        for h in hs:\n            h.remove()\n    return found[0] if found else None\n',
    ),
    Mistake(
        name="flags-nonfinite-inputs",
        message="Only a module's output counts: a module whose input holds inf but whose output is finite (a ReLU turns -inf into 0) did not make a non-finite value. Test the outputs only.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef first_nonfinite_module(model, x):\n    import torch\n    found = []\n    def hook(name):\n        def f(m, i, o):\n            outs = list(o) if isinstance(o, (tuple, list)) else [o]\n            outs += [t for t in i if isinstance(t, torch.Tensor)]\n            if not found and any(not torch.isfinite(t).all() for t in outs):\n                found.append(name)\n        return f\n    hs = [m.register_forward_hook(hook(n)) for n, m in model.named_modules() if n]\n    try:\n        with torch.no_grad():\n            model(x)\n    finally:\n        for h in hs:\n            h.remove()\n    return found[0] if found else None\n",
    ),
]
MISTAKES["set_seed"] += [
    Mistake(
        name="cpu-generator-only",
        message="torch.random.default_generator.manual_seed(seed) seeds the CPU generator only: on a GPU every CUDA draw (dropout, torch.randn(..., device='cuda')) still differs between runs. torch.manual_seed(seed) seeds the CPU and all CUDA devices.",
        code="import math\nimport random\n\nimport numpy as np\nimport torch\nfrom torch import nn\ndef set_seed(seed):\n    import random, numpy as np, torch\n    random.seed(seed); np.random.seed(seed % 2**32)\n    torch.random.default_generator.manual_seed(seed)\n    return torch.Generator().manual_seed(seed)\n",
    ),
]

# ----------------------------------------------------------------------------- round 7, decided
# Two former right answers that the text rules out: it clips "all of model.parameters()" and
# splits with x.split(micro_batch). The checks now draw an optimizer over the last layer only,
# and judge the pieces' sizes.

MISTAKES["clipped_step"] += [
    Mistake(
        name="clips-only-the-optimizers-parameters",
        message="Clipping the parameters the optimizer holds (its param_groups) leaves out those it does not step: the text clips all of model.parameters(), and the norm it returns covers every parameter's gradient. Pass model.parameters() to clip_grad_norm_.",
        code="import torch\n"
        "def clipped_step(model, optimizer, loss, max_norm):\n"
        "    optimizer.zero_grad(set_to_none=True)\n"
        "    loss.backward()\n"
        "    params = [p for group in optimizer.param_groups for p in group['params']]\n"
        "    norm = torch.nn.utils.clip_grad_norm_(params, max_norm=max_norm, norm_type=2.0)\n"
        "    optimizer.step()\n"
        "    return norm.item()\n",
    ),
]
MISTAKES["accumulated_step"] += [
    Mistake(
        name="tensor-split-even-pieces",
        message="Pieces of other sizes than x.split(micro_batch) (torch.tensor_split's even ones, x.chunk) change each micro-batch: with a layer that looks at the whole piece (BatchNorm) the step differs. Split into consecutive pieces of micro_batch rows, the last one smaller.",
        code="import math, torch\n"
        "def accumulated_step(model, optimizer, loss_fn, x, y, micro_batch):\n"
        "    optimizer.zero_grad()\n"
        "    pieces = math.ceil(len(x) / micro_batch)\n"
        "    total = 0.0\n"
        "    for xc, yc in zip(torch.tensor_split(x, pieces), torch.tensor_split(y, pieces)):\n"
        "        share = loss_fn(model(xc), yc) * (xc.shape[0] / x.shape[0])\n"
        "        share.backward()\n"
        "        total += share.item()\n"
        "    optimizer.step()\n"
        "    return total\n",
    ),
]
