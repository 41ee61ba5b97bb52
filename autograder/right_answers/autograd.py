"""Right answers for 02_autograd's exercises, written unlike the solution."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "mse_grads": [
        RightAnswer(
            name="elementwise-means",
            why="Sums of elementwise products instead of a matrix product: (2 r * x).mean(0) is "
            "(2 / N) x.T @ r, reshaped to (F, 1); the text asks only for the values and shapes.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    r = x @ w + b - y  # (N, 1)\n"
                "    grad_w = (2 * r * x).mean(dim=0).unsqueeze(1)  # (F,) -> (F, 1)\n"
                "    grad_b = 2 * r.mean(dim=0)  # (1,)\n"
                "    return grad_w, grad_b\n"
            ),
        ),
        RightAnswer(
            name="einsum-addmm",
            why="torch.addmm builds the residual and einsum contracts over the rows instead of "
            "x.T @ r: the same numbers, shapes and dtype.",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = torch.addmm(b - y, x, w)  # (N, 1): b - y + x @ w\n"
                "    return torch.einsum('nf,no->fo', x, r) * (2 / n), r.sum(0) * (2 / n)\n"
            ),
        ),
    ],
    "fit_linear": [
        RightAnswer(
            name="grad-none-before-backward",
            why="Clears the gradients with .grad = None at the start of each step instead of "
            "zero_() after the update; every update still uses only its own gradient.",
            code=(
                "import torch\n"
                "def fit_linear(x, y, lr, num_steps):\n"
                "    w = torch.zeros((x.shape[1], 1), dtype=x.dtype, device=x.device).requires_grad_()\n"
                "    b = x.new_zeros(1).requires_grad_()\n"
                "    losses = []\n"
                "    for _ in range(num_steps):\n"
                "        w.grad = b.grad = None\n"
                "        loss = torch.mean((x @ w + b - y) ** 2)\n"
                "        loss.backward()\n"
                "        losses.append(float(loss))\n"
                "        with torch.no_grad():\n"
                "            w.sub_(lr * w.grad)\n"
                "            b.sub_(lr * b.grad)\n"
                "    return w.detach(), b.detach(), losses\n"
            ),
        ),
        RightAnswer(
            name="autograd-grad",
            why="torch.autograd.grad returns the gradients instead of filling .grad, so there "
            "is nothing to zero; the updates and losses are the same.",
            code=(
                "import torch\n"
                "def fit_linear(x, y, lr, num_steps):\n"
                "    w = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    losses = []\n"
                "    for _ in range(num_steps):\n"
                "        loss = torch.nn.functional.mse_loss(x @ w + b, y)\n"
                "        losses.append(loss.item())\n"
                "        gw, gb = torch.autograd.grad(loss, [w, b])\n"
                "        with torch.no_grad():\n"
                "            w -= lr * gw\n"
                "            b -= lr * gb\n"
                "    return w, b, losses\n"
            ),
        ),
    ],
    "accumulated_grad": [
        RightAnswer(
            name="autograd-grad-sum",
            why="Sums the weighted micro-batch gradients from torch.autograd.grad itself "
            "instead of letting backward() add into w.grad; the returned gradient is the same.",
            code=(
                "import torch\n"
                "def accumulated_grad(loss_fn, w, x, y, micro_size):\n"
                "    w.grad = None\n"
                "    total = torch.zeros_like(w)\n"
                "    for start in range(0, len(x), micro_size):\n"
                "        xb, yb = x[start:start + micro_size], y[start:start + micro_size]\n"
                "        (g,) = torch.autograd.grad(loss_fn(w, xb, yb), w)\n"
                "        total += g * (xb.shape[0] / x.shape[0])\n"
                "    return total\n"
            ),
        ),
        RightAnswer(
            name="zero-then-clone",
            why="Zeroes an existing .grad in place instead of setting it to None, and returns a "
            "copy of w.grad; both are what the text asks.",
            code=(
                "def accumulated_grad(loss_fn, w, x, y, micro_size):\n"
                "    if w.grad is not None:\n"
                "        w.grad.zero_()\n"
                "    n = len(x)\n"
                "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
                "        loss_fn(w, xb, yb).mul(len(xb) / n).backward()\n"
                "    return w.grad.clone()\n"
            ),
        ),
    ],
    "round_ste": [
        RightAnswer(
            name="custom-function",
            why="An autograd.Function whose backward is the identity, instead of the detach "
            "trick: same values, same gradient.",
            code=(
                "import torch\n"
                "class _RoundSTE(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x):\n"
                "        return torch.round(x)\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        return grad_output\n"
                "def round_ste(x):\n"
                "    return _RoundSTE.apply(x)\n"
            ),
        ),
        RightAnswer(
            name="minus-detached-x",
            why="round(x) as a constant plus (x - x.detach()), which is zero in value and has "
            "derivative 1.",
            code="def round_ste(x):\n    return x.round().detach() + (x - x.detach())\n",
        ),
    ],
    "HuberFunction": [
        RightAnswer(
            name="huber-loss-forward-where-backward",
            why="Forward with F.huber_loss against zeros (reduction='none'), backward with "
            "torch.where and sign instead of clamp: the same function and derivative.",
            code=(
                "import torch\n"
                "import torch.nn.functional as F\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        return F.huber_loss(x, torch.zeros_like(x), reduction='none', delta=delta)\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        d = ctx.delta\n"
                "        local = torch.where(x.abs() <= d, x, d * torch.sign(x))\n"
                "        return local * grad_output, None\n"
            ),
        ),
    ],
    "second_derivative": [
        RightAnswer(
            name="torch-func",
            why="torch.func.grad twice, vectorised over the elements with vmap: another API; it "
            "returns zeros by itself when a derivative does not depend on x.",
            code=(
                "import torch\n"
                "from torch.func import grad, vmap\n"
                "def second_derivative(f, x):\n"
                "    flat = x.detach().reshape(-1)\n"
                "    return vmap(grad(grad(f)))(flat).reshape(x.shape)\n"
            ),
        ),
        RightAnswer(
            name="backward-into-clone",
            why="The second differentiation uses backward() on a private clone and returns its "
            ".grad; the caller's x is untouched.",
            code=(
                "import torch\n"
                "def second_derivative(f, x):\n"
                "    t = x.detach().clone().requires_grad_(True)\n"
                "    out = f(t).sum()\n"
                "    if out.grad_fn is None:\n"
                "        return torch.zeros_like(t).detach()\n"
                "    (df,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if df.grad_fn is None:\n"
                "        return torch.zeros_like(t).detach()\n"
                "    df.sum().backward()\n"
                "    return t.grad\n"
            ),
        ),
    ],
    "hvp": [
        RightAnswer(
            name="functional-hvp",
            why="torch.autograd.functional.hvp does the double backward itself (and gives zeros "
            "for a linear or constant f).",
            code=(
                "import torch\n"
                "def hvp(f, x, v):\n"
                "    return torch.autograd.functional.hvp(f, x.detach().clone(), v)[1]\n"
            ),
        ),
        RightAnswer(
            name="grad-outputs-v",
            why="Passes v as grad_outputs (a vector-Jacobian product of the gradient, which is "
            "H^T v = H v) instead of differentiating (g * v).sum().",
            code=(
                "import torch\n"
                "def hvp(f, x, v):\n"
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    out = f(x)\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (g,) = torch.autograd.grad(out, x, create_graph=True)\n"
                "    if g.grad_fn is None:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (hv,) = torch.autograd.grad(g, x, grad_outputs=v)\n"
                "    return hv\n"
            ),
        ),
    ],
}
