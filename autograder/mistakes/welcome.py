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
    ],
}
