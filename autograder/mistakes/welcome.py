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
    ],
}
