"""Right answers for 00_welcome unlike the solution (see autograder/right_answers/__init__.py)."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "pick_device": [
        RightAnswer(
            name="cuda-index-0",
            why="torch.device('cuda:0') is the default CUDA device, the same one as "
            "torch.device('cuda'); the text asks for CUDA, not for an index-free name.",
            code=(
                "import torch\n"
                "def pick_device(cuda_available, mps_available):\n"
                "    if cuda_available:\n"
                "        return torch.device('cuda:0')\n"
                "    if mps_available:\n"
                "        return torch.device('mps', 0)\n"
                "    return torch.device('cpu')\n"
            ),
        ),
        RightAnswer(
            name="first-available-in-a-list",
            why="Walks an ordered list of (available, name) pairs instead of an if chain; the "
            "same preference, returned as a torch.device.",
            code=(
                "import torch\n"
                "def pick_device(cuda_available, mps_available):\n"
                "    order = [(cuda_available, 'cuda'), (mps_available, 'mps'), (True, 'cpu')]\n"
                "    return next(torch.device(name) for ok, name in order if ok)\n"
            ),
        ),
        RightAnswer(
            name="match-statement",
            why="A match on the pair of flags instead of an if chain: CUDA whenever it is "
            "available, else MPS, else the CPU.",
            code=(
                "import torch\n"
                "def pick_device(cuda_available, mps_available):\n"
                "    match (cuda_available, mps_available):\n"
                "        case (True, _):\n"
                "            return torch.device('cuda')\n"
                "        case (_, True):\n"
                "            return torch.device('mps')\n"
                "        case _:\n"
                "            return torch.device('cpu')\n"
            ),
        ),
        RightAnswer(
            name="local-variable-named-device",
            why="A local variable named device (the setup cell has a global of that name) holding the "
            "name, then torch.device of it: the flags decide, not the machine.",
            code=(
                "import torch\n"
                "def pick_device(cuda_available, mps_available):\n"
                "    device = 'cuda' if cuda_available else 'mps' if mps_available else 'cpu'\n"
                "    return torch.device(device)\n"
            ),
        ),
    ],
    "halve_until_small": [
        RightAnswer(
            name="count-then-scale",
            why="Counts the halvings on a Python float (halving is exact in binary, so the "
            "count is the loop's) and scales x once by 0.5 ** k: one operation in the graph "
            "with the same value and gradient.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    norm, k = float(x.norm()), 0\n"
                "    while norm > limit:\n"
                "        norm /= 2\n"
                "        k += 1\n"
                "    return x * 0.5 ** k if k else x\n"
            ),
        ),
        RightAnswer(
            name="clone-then-in-place",
            why="Halves a private clone in place: in-place changes are allowed on a non-leaf, "
            "the caller's x is never written, and the clone keeps x's history.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    x = x.clone()\n"
                "    while x.norm() > limit:\n"
                "        x.mul_(0.5)\n"
                "    return x\n"
            ),
        ),
        RightAnswer(
            name="recursive-vector-norm",
            why="Recursion instead of a loop, and torch.linalg.vector_norm instead of x.norm(): "
            "the same Euclidean norm and the same halvings.",
            code=(
                "import torch\n"
                "def halve_until_small(x, limit):\n"
                "    if torch.linalg.vector_norm(x) <= limit:\n"
                "        return x\n"
                "    return halve_until_small(x / 2, limit)\n"
            ),
        ),
        RightAnswer(
            name="scale-factor",
            why="Takes the norm once and halves a Python scale factor (norm * scale is exact, "
            "a power of two), then returns x * scale: one operation in the graph, x's dtype "
            "and device kept, and x * 1.0 (a new tensor with x's values) when no halving is due.",
            code=(
                "def halve_until_small(x, limit):\n"
                "    norm, scale = x.norm(), 1.0\n"
                "    while norm * scale > limit:\n"
                "        scale /= 2\n"
                "    return x * scale\n"
            ),
        ),
        RightAnswer(
            name="count-then-divide-by-a-power-of-two",
            why="Counts the halvings on a Python float and divides by the int 2 ** k once. (A draw "
            "needing 63 or more halvings would overflow that int's conversion, which is why the "
            "grader stops at 62.)",
            code=(
                "def halve_until_small(x, limit):\n"
                "    norm, k = x.norm().item(), 0\n"
                "    while norm > limit:\n"
                "        norm, k = norm / 2, k + 1\n"
                "    return x / 2 ** k\n"
            ),
        ),
        RightAnswer(
            name="factor-counted-without-grad",
            why="Counts the halvings on a copy under torch.no_grad(), then multiplies x once by a "
            "0-d tensor of 0.5 ** k: a 0-d CPU tensor neither changes x's dtype nor its device.",
            code=(
                "import torch\n"
                "def halve_until_small(x, limit):\n"
                "    k = 0\n"
                "    with torch.no_grad():\n"
                "        y = x.clone()\n"
                "        while y.norm() > limit:\n"
                "            y = y / 2\n"
                "            k += 1\n"
                "    return x * torch.tensor(0.5**k)\n"
            ),
        ),
    ],
    "value_and_grad": [
        RightAnswer(
            name="autograd-grad",
            why="torch.autograd.grad returns the gradient instead of filling .grad; the copy "
            "is still a fresh leaf, so the caller's x is untouched.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    leaf = x.detach().clone().requires_grad_(True)\n"
                "    y = f(leaf)\n"
                "    (grad,) = torch.autograd.grad(y, leaf)\n"
                "    return float(y), grad\n"
            ),
        ),
        RightAnswer(
            name="torch-func-grad-and-value",
            why="torch.func.grad_and_value differentiates f without touching any .grad; it "
            "returns (grad, value) with value a tensor, turned into a float here.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    grad, value = torch.func.grad_and_value(f)(x.detach())\n"
                "    return value.item(), grad\n"
            ),
        ),
        RightAnswer(
            name="detach-without-clone",
            why="x.detach() is a new tensor object sharing memory (f does not write to it, so "
            "no copy is needed); requires_grad_ on it leaves the caller's x as it was.",
            code=(
                "def value_and_grad(f, x):\n"
                "    leaf = x.detach().requires_grad_(True)\n"
                "    y = f(leaf)\n"
                "    y.backward()\n"
                "    return y.item(), leaf.grad\n"
            ),
        ),
        RightAnswer(
            name="functional-vjp",
            why="torch.autograd.functional.vjp returns f's output and its vector-Jacobian "
            "product, the gradient for a scalar f; it differentiates its own copy, so no "
            ".grad and no requires_grad flag of the caller changes.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    value, grad = torch.autograd.functional.vjp(f, x.detach().clone())\n"
                "    return float(value), grad\n"
            ),
        ),
        RightAnswer(
            name="forward-mode-jacfwd",
            why="torch.func.jacfwd differentiates f in forward mode: the same exact gradient "
            "(the Jacobian of a scalar f has x's shape), no .grad touched, no finite "
            "differences; the value is f at a plain copy.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    x = x.detach().clone()\n"
                "    return f(x).item(), torch.func.jacfwd(f)(x)\n"
            ),
        ),
        RightAnswer(
            name="enable-grad-and-autograd-grad",
            why="torch.enable_grad() so that it works even inside a caller's no_grad block, a fresh "
            "leaf, and torch.autograd.grad, which fills no .grad.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    with torch.enable_grad():\n"
                "        leaf = x.detach().clone().requires_grad_(True)\n"
                "        y = f(leaf)\n"
                "        (grad,) = torch.autograd.grad(y, leaf)\n"
                "    return float(y.detach()), grad\n"
            ),
        ),
        RightAnswer(
            name="empty-like-copy-and-sum",
            why="A fresh leaf made with torch.empty_like(x).copy_(x.detach()) (x's dtype, device and "
            "shape), f's one-element result summed to a 0-d tensor, and float() of it.",
            code=(
                "import torch\n"
                "def value_and_grad(f, x):\n"
                "    leaf = torch.empty_like(x).copy_(x.detach()).requires_grad_()\n"
                "    y = f(leaf).sum()\n"
                "    y.backward()\n"
                "    return float(y.detach()), leaf.grad\n"
            ),
        ),
    ],
}
