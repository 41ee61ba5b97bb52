"""Plausible wrong answers for 00_welcome's exercises."""

from autograder.mistakes import Mistake

MISTAKES = {
    "pick_device": [
        Mistake(
            name="returns-string",
            message="Return a torch.device, not its name: torch.device('cuda'), not 'cuda'.",
            code=(
                "def pick_device(cuda_available, mps_available):\n"
                "    if cuda_available:\n        return 'cuda'\n"
                "    if mps_available:\n        return 'mps'\n"
                "    return 'cpu'\n"
            ),
        ),
        Mistake(
            name="hard-coded-cuda",
            message="Never hard-code 'cuda': the course must run where there is no GPU.",
            code="import torch\ndef pick_device(cuda_available, mps_available):\n    return torch.device('cuda')\n",
        ),
        Mistake(
            name="ignores-mps",
            message="Apple-silicon Macs have an MPS device: check it before falling back to the CPU.",
            code=(
                "import torch\ndef pick_device(cuda_available, mps_available):\n"
                "    return torch.device('cuda' if cuda_available else 'cpu')\n"
            ),
        ),
        Mistake(
            name="mps-before-cuda",
            message="CUDA comes first: on a machine with both (a Mac with an eGPU, a test that "
            "says both are available) test cuda_available before mps_available.",
            code=(
                "import torch\ndef pick_device(cuda_available, mps_available):\n"
                "    if mps_available:\n        return torch.device('mps')\n"
                "    if cuda_available:\n        return torch.device('cuda')\n"
                "    return torch.device('cpu')\n"
            ),
        ),
        Mistake(
            name="asks-torch-about-mps",
            message="Decide from the arguments you are given: torch.backends.mps.is_available() "
            "describes this machine, not the one the caller asks about.",
            code=(
                "import torch\ndef pick_device(cuda_available, mps_available):\n"
                "    if cuda_available:\n        return torch.device('cuda')\n"
                "    if torch.backends.mps.is_available():\n        return torch.device('mps')\n"
                "    return torch.device('cpu')\n"
            ),
        ),
        Mistake(
            name="also-asks-torch-about-cuda",
            message="Decide from the arguments only: cuda_available or torch.cuda.is_available() "
            "picks CUDA on every GPU machine, even when the caller says CUDA is not available.",
            code=(
                "import torch\ndef pick_device(cuda_available, mps_available):\n"
                "    if cuda_available or torch.cuda.is_available():\n"
                "        return torch.device('cuda')\n"
                "    if mps_available:\n        return torch.device('mps')\n"
                "    return torch.device('cpu')\n"
            ),
        ),
        Mistake(
            name="table-misses-both",
            message="A table of the cases you thought of forgets (True, True): with both "
            "available, CUDA comes first, not the CPU.",
            code=(
                "import torch\ndef pick_device(cuda_available, mps_available):\n"
                "    names = {(True, False): 'cuda', (False, True): 'mps'}\n"
                "    return torch.device(names.get((cuda_available, mps_available), 'cpu'))\n"
            ),
        ),
        Mistake(
            name="also-asks-torch-about-mps",
            message="Decide from the arguments only: mps_available or "
            "torch.backends.mps.is_available() picks MPS on every Mac, even when the caller "
            "says it is not available.",
            code=(
                "import torch\ndef pick_device(cuda_available, mps_available):\n"
                "    if cuda_available:\n        return torch.device('cuda')\n"
                "    if mps_available or torch.backends.mps.is_available():\n"
                "        return torch.device('mps')\n"
                "    return torch.device('cpu')\n"
            ),
        ),
        Mistake(
            name="falls-back-to-the-setup-device",
            message="The setup cell's device describes the machine the notebook runs on (cuda "
            "on a GPU machine), not the flags you are given: with neither flag set, return "
            "torch.device('cpu').",
            code=(
                "import torch\ndef pick_device(cuda_available, mps_available):\n"
                "    if cuda_available:\n        return torch.device('cuda')\n"
                "    if mps_available:\n        return torch.device('mps')\n"
                "    return device  # the setup cell's choice\n"
            ),
        ),
    ],
    "halve_until_small": [
        Mistake(
            name="rebuilds-tensor",
            message="torch.tensor(x.tolist()) makes a new leaf with no history: the gradient cannot flow back to x.",
            code=(
                "import torch\ndef halve_until_small(x, limit):\n"
                "    while x.norm() > limit:\n"
                "        x = torch.tensor(x.tolist(), device=x.device) / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="in-place-on-leaf",
            message="x /= 2 changes a leaf that requires grad in place, which autograd forbids; write x = x / 2.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    while x.norm() > limit:\n"
                "        x /= 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="greater-or-equal",
            message="Stop as soon as the norm is at most the limit: use > in the loop condition, not >=.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    while x.norm() >= limit:\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="if-not-while",
            message="One halving is not always enough: loop while the condition holds.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    if x.norm() > limit:\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="squared-norm",
            message="(x ** 2).sum() is the squared norm: compare x.norm() (its square root) with "
            "the limit, or the loop halves too often.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    while (x ** 2).sum() > limit:\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="float32-working-copy",
            message="x.float() turns a float64 x into float32: keep x's dtype (x / 2 does).",
            code=(
                "def halve_until_small(x, limit):\n"
                "    x = x.float()\n"
                "    while x.norm() > limit:\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="log2-count-goes-negative",
            message="ceil(log2(norm / limit)) is negative when x is already small, and then "
            "x / 2**k doubles it: no halving at all is the answer there.",
            code=(
                "import math\n"
                "def halve_until_small(x, limit):\n"
                "    k = math.ceil(math.log2(x.norm().item() / limit))\n"
                "    return x / 2 ** k\n"
            ),
        ),
        Mistake(
            name="in-place-unless-leaf",
            message="x /= 2 on a tensor that is not a leaf still writes into the caller's "
            "tensor: its values change under them. Write x = x / 2.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    if x.requires_grad and x.is_leaf:\n"
                "        x = x * 1  # autograd refuses in-place changes to a leaf\n"
                "    while x.norm() > limit:\n"
                "        x /= 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="loop-under-no-grad",
            message="Under torch.no_grad() the halvings are not recorded: the result has no "
            "history, and out.sum().backward() cannot reach x. Halve outside no_grad.",
            code=(
                "import torch\n"
                "def halve_until_small(x, limit):\n"
                "    with torch.no_grad():\n"
                "        while x.norm() > limit:\n"
                "            x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="capped-loop",
            message="A fixed number of tries stops too early on a large x: keep halving while "
            "the norm is over the limit, however many halvings that takes.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    for _ in range(20):  # enough for any sensible input\n"
                "        if x.norm() <= limit:\n"
                "            break\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="norm-in-float32",
            message="The norm of a float64 x taken in float32 rounds a norm just over the "
            "limit down to it, and the last halving is skipped: compare x.norm() in x's own "
            "dtype.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    while x.float().norm() > limit:\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="l1-norm",
            message="x.abs().sum() is the L1 norm: the text asks for the Euclidean norm, x.norm().",
            code=(
                "def halve_until_small(x, limit):\n"
                "    while x.abs().sum() > limit:\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="detached-copy-when-small",
            message="When x is already small, x.detach().clone() cuts it from the graph: return "
            "x itself (or a computation from it) so its gradient, 1, still reaches it.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    if x.norm() <= limit:\n"
                "        return x.detach().clone()  # a copy, so the caller's x is safe\n"
                "    while x.norm() > limit:\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="in-place-when-plain",
            message="x.div_(2) on an x without requires_grad still writes into the caller's "
            "tensor: build a new one, x = x / 2, whether or not it asks for gradients.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    while x.norm() > limit:\n"
                "        if x.requires_grad:\n"
                "            x = x / 2\n"
                "        else:\n"
                "            x.div_(2)  # no autograd here, so in place is fine\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="float32-halving-factor",
            message="torch.tensor([0.5]) is a float32 tensor made on the CPU: it turns a half "
            "x into float32 (and fails on a GPU). Multiply by the number 0.5 instead.",
            code=(
                "import torch\ndef halve_until_small(x, limit):\n"
                "    half = torch.tensor([0.5])\n"
                "    while x.norm() > limit:\n"
                "        x = x * half\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="switches-on-callers-grad",
            message="x.requires_grad_(True) on an x that came without gradients changes the "
            "caller's tensor: the text says such an x works the same, so leave its flag alone.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    if not x.requires_grad:\n"
                "        x.requires_grad_(True)  # so the result stays in the graph\n"
                "    while x.norm() > limit:\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="halves-made-on-cpu",
            message="torch.ones(len(x)) is made on the CPU: on a GPU, x times it fails. x / 2 "
            "needs no tensor of halves (or make it with torch.full_like(x, 0.5)).",
            code=(
                "import torch\n"
                "def halve_until_small(x, limit):\n"
                "    halves = torch.ones(len(x), dtype=x.dtype) / 2\n"
                "    while x.norm() > limit:\n"
                "        x = x * halves\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="reseeds-python-random",
            message="random.seed inside a function resets Python's global generator for the whole process: the caller's later random choices repeat. Leave global generators alone; use random.Random(seed) of your own if you need one.",
            code=(
                "import random\n"
                "def halve_until_small(x, limit):\n"
                "    random.seed(0)\n"
                "    norm, k = float(x.norm()), 0\n"
                "    while norm > limit:\n"
                "        norm /= 2\n"
                "        k += 1\n"
                "    return x * 0.5 ** k if k else x\n"
            ),
        ),
        Mistake(
            name="in-place-when-not-a-leaf",
            message="A clone only for a leaf, then x.div_(2): on an x that is the result of other "
            "operations (not a leaf) autograd allows the in-place halving, and it writes into "
            "the caller's tensor. Write x = x / 2, a new tensor at each halving.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    if x.is_leaf:\n"
                "        x = x.clone()  # autograd refuses in-place changes to a leaf\n"
                "    while x.norm() > limit:\n"
                "        x.div_(2)\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="capped-at-60",
            message="A loop capped at 60 halvings stops early on an x 2**61 times over the limit: "
            "keep halving while the norm is over the limit, however many halvings that takes.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    for _ in range(60):  # a safety cap\n"
                "        if not x.norm() > limit:\n"
                "            break\n"
                "        x = x / 2\n"
                "    return x\n"
            ),
        ),
    ],
    "value_and_grad": [
        Mistake(
            name="mutates-input",
            message="requires_grad_ on the caller's tensor changes it for them: work on x.detach().clone().",
            code=(
                "def value_and_grad(f, x):\n"
                "    x.requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    return y.item(), x.grad\n"
            ),
        ),
        Mistake(
            name="returns-tensor-value",
            message="Return the value as a Python float with .item(), not as a tensor.",
            code=(
                "def value_and_grad(f, x):\n"
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    return y, x.grad\n"
            ),
        ),
        Mistake(
            name="no-backward",
            message="x.grad stays None until you call backward() on the output.",
            code=(
                "def value_and_grad(f, x):\n"
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    y = f(x)\n"
                "    return y.item(), x.grad\n"
            ),
        ),
        Mistake(
            name="clone-without-detach",
            message="x.clone() keeps x's history: when the caller's x requires grad, backward() "
            "runs into it and fills their .grad, and your copy's .grad stays None. Use "
            "x.detach().clone().",
            code=(
                "def value_and_grad(f, x):\n"
                "    x = x.clone().requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    return y.item(), x.grad\n"
            ),
        ),
        Mistake(
            name="borrows-the-callers-grad",
            message="Switching requires_grad on the caller's x and back is not side-effect free: "
            "a .grad it already had gets your gradient added and then thrown away.",
            code=(
                "def value_and_grad(f, x):\n"
                "    was = x.requires_grad\n"
                "    x.requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    grad = x.grad.clone()\n"
                "    x.grad = None\n"
                "    x.requires_grad_(was)\n"
                "    return y.item(), grad\n"
            ),
        ),
        Mistake(
            name="float32-working-copy",
            message=".float() turns a float64 x into float32: the value loses digits and the "
            "gradient has the wrong dtype. x.detach().clone() keeps the dtype.",
            code=(
                "def value_and_grad(f, x):\n"
                "    x = x.detach().float().requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    return y.item(), x.grad\n"
            ),
        ),
        Mistake(
            name="flattened-copy",
            message="The gradient must have x's shape: a flattened copy gives a flat gradient.",
            code=(
                "def value_and_grad(f, x):\n"
                "    x = x.detach().clone().reshape(-1).requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    return y.item(), x.grad\n"
            ),
        ),
        Mistake(
            name="leaves-grad-on-plain-x",
            message="Switching requires_grad on the caller's x and back still leaves the "
            "gradient in x.grad: the caller finds a .grad it never asked for. Differentiate a "
            "copy, x.detach().clone().requires_grad_(True).",
            code=(
                "def value_and_grad(f, x):\n"
                "    was = x.requires_grad\n"
                "    x.requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    grad = x.grad.clone()\n"
                "    x.requires_grad_(was)\n"
                "    return y.item(), grad\n"
            ),
        ),
        Mistake(
            name="reuses-a-leaf-across-calls",
            message="A leaf kept between calls keeps its .grad too: gradients add up from one "
            "call to the next. Make a fresh copy at every call: x.detach().clone().",
            code=(
                "import torch\n"
                "_leaf = None\n"
                "def value_and_grad(f, x):\n"
                "    global _leaf\n"
                "    if _leaf is None or _leaf.shape != x.shape:\n"
                "        _leaf = torch.zeros_like(x, requires_grad=True)\n"
                "    with torch.no_grad():\n"
                "        _leaf.copy_(x)\n"
                "    y = f(_leaf)\n"
                "    y.backward()\n"
                "    return y.item(), _leaf.grad\n"
            ),
        ),
        Mistake(
            name="squeezed-grad",
            message="squeeze() drops the axes of size 1: the gradient must keep x's shape, "
            "(1, 3) as (1, 3).",
            code=(
                "def value_and_grad(f, x):\n"
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    return y.item(), x.grad.squeeze()\n"
            ),
        ),
        Mistake(
            name="grad-mode-left-off",
            message="torch.set_grad_enabled(False) at the end switches gradients off for the "
            "caller's code too: leave the caller's grad mode as it was (use "
            "`with torch.enable_grad():` if you need it on).",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    torch.set_grad_enabled(True)\n"
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    y = f(x)\n"
                "    y.backward()\n"
                "    torch.set_grad_enabled(False)  # tidy up\n"
                "    return y.item(), x.grad\n"
            ),
        ),
        Mistake(
            name="finite-differences",
            message="Central differences only approximate the gradient, and the text asks "
            "autograd for it: make the copy require grad and call backward() on f's value.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    x = x.detach().clone()\n"
                "    xd, h = x.double(), 1e-5  # float64 for precise differences\n"
                "    slopes = []\n"
                "    for i in range(x.numel()):\n"
                "        e = torch.zeros(x.numel(), dtype=xd.dtype, device=x.device)\n"
                "        e[i] = h\n"
                "        e = e.reshape(x.shape)\n"
                "        slopes.append((f(xd + e) - f(xd - e)) / (2 * h))\n"
                "    grad = torch.stack(slopes).reshape(x.shape)\n"
                "    return f(x).item(), grad.to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="flat-view",
            message="x.view(-1) fails on a non-contiguous x (a transposed one, say): f takes x "
            "as it is, with its own shape; use reshape if you ever need to flatten.",
            code=(
                "def value_and_grad(f, x):\n"
                "    leaf = x.detach().clone().requires_grad_(True)\n"
                "    y = f(leaf.view(-1))  # f only needs the numbers\n"
                "    y.backward()\n"
                "    return y.item(), leaf.grad\n"
            ),
        ),
        Mistake(
            name="clears-callers-grad",
            message="x.grad = None on the caller's tensor throws away a gradient they had: "
            "your copy's .grad starts empty anyway, so leave theirs alone.",
            code=(
                "def value_and_grad(f, x):\n"
                "    if x.grad is not None:\n"
                "        x.grad = None  # start clean\n"
                "    leaf = x.detach().clone().requires_grad_(True)\n"
                "    y = f(leaf)\n"
                "    y.backward()\n"
                "    return y.item(), leaf.grad\n"
            ),
        ),
        Mistake(
            name="deepcopy-keeps-grad",
            message="copy.deepcopy(x) copies the caller's .grad too (and refuses a tensor that "
            "is the result of an operation): the copy's gradient starts from theirs. "
            "x.detach().clone() copies the values only.",
            code=(
                "import copy\n"
                "def value_and_grad(f, x):\n"
                "    leaf = copy.deepcopy(x).requires_grad_(True)\n"
                "    y = f(leaf)\n"
                "    y.backward()\n"
                "    return y.item(), leaf.grad\n"
            ),
        ),
        Mistake(
            name="copy-rebuilt-on-cpu",
            message="torch.tensor(x.tolist()) rebuilds the copy on the CPU whatever x's device: "
            "the gradient comes back on the CPU. x.detach().clone() keeps x's device.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    leaf = torch.tensor(x.tolist(), dtype=x.dtype, requires_grad=True)\n"
                "    y = f(leaf)\n"
                "    y.backward()\n"
                "    return y.item(), leaf.grad\n"
            ),
        ),
        Mistake(
            name="float32-copy-cast-back",
            message="A float32 copy of a float64 x, with the gradient cast back to float64: the "
            "dtype is right, but the value and gradient carry float32's rounding (off by about "
            "1e-8). x.detach().clone() keeps x's dtype.",
            code=(
                "def value_and_grad(f, x):\n"
                "    leaf = x.detach().float().clone().requires_grad_(True)\n"
                "    y = f(leaf)\n"
                "    y.backward()\n"
                "    return y.item(), leaf.grad.to(x.dtype)\n"
            ),
        ),
        Mistake(
            name="value-through-float32",
            message="float(y.float()) rounds a float64 value to float32 before it becomes a Python "
            "float: y.item() (or float(y)) keeps every digit.",
            code=(
                "def value_and_grad(f, x):\n"
                "    leaf = x.detach().clone().requires_grad_(True)\n"
                "    y = f(leaf)\n"
                "    y.backward()\n"
                "    return float(y.float()), leaf.grad\n"
            ),
        ),
        Mistake(
            name="grad-with-create-graph",
            message="create_graph=True returns a gradient that requires grad: it keeps f's graph "
            "alive as long as the caller holds it, and every later use of it records operations. "
            "torch.autograd.grad(y, leaf) without create_graph, or leaf.grad, is plain numbers.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    leaf = x.detach().clone().requires_grad_(True)\n"
                "    y = f(leaf)\n"
                "    (grad,) = torch.autograd.grad(y, leaf, create_graph=True)\n"
                "    return y.item(), grad\n"
            ),
        ),
    ],
}
