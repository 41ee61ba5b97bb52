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
        RightAnswer(
            name="cpu-0d-float64-scale",
            why="The factor 2 / N as a 0-d float64 CPU tensor: a 0-d tensor is a scalar, which a "
            "GPU lets meet its tensors, and it keeps x's dtype (0-d tensors do not promote).",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    scale = torch.tensor(2.0 / n, dtype=torch.float64)  # 0-d CPU: a scalar on any device\n"
                "    r = x @ w + b - y\n"
                "    return scale * (x.T @ r), scale * r.sum(dim=0)\n"
            ),
        ),
        RightAnswer(
            name="new-ones-row-as-tensor-scale",
            why="grad_b as a row of ones (x.new_ones) times r and the factor as "
            "torch.as_tensor(..., device=x.device): every tensor it makes lives where x does.",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = torch.addcmul(b - y, torch.ones_like(y), x @ w)\n"
                "    ones = x.new_ones(1, n)\n"
                "    k = torch.as_tensor(2.0 / n, dtype=x.dtype, device=x.device)\n"
                "    return k * (r.T @ x).T, k * (ones @ r).reshape(1)\n"
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
        RightAnswer(
            name="to-x-and-new-full",
            why="w made on the CPU then moved with .to(x) (x's dtype and device), b with "
            "x.new_full, lr as a 0-d float64 CPU tensor (a scalar on any device): the same "
            "updates.",
            code=(
                "import torch\n"
                "def fit_linear(x, y, lr, num_steps):\n"
                "    w = torch.zeros(x.shape[1], 1).to(x).requires_grad_()\n"
                "    b = x.new_full((1,), 0.0, requires_grad=True)\n"
                "    step = torch.tensor(lr, dtype=torch.float64)  # 0-d CPU: a scalar on any device\n"
                "    losses = []\n"
                "    for _ in range(num_steps):\n"
                "        loss = (x @ w + b - y).pow(2).mean()\n"
                "        losses.append(loss.item())\n"
                "        loss.backward()\n"
                "        with torch.no_grad():\n"
                "            w.sub_(step * w.grad)\n"
                "            b.sub_(step * b.grad)\n"
                "        w.grad.zero_()\n"
                "        b.grad.zero_()\n"
                "    return w, b, losses\n"
            ),
        ),
        RightAnswer(
            name="set-grad-enabled-restored",
            why="The update between torch.set_grad_enabled(False) and the caller's setting put "
            "back, instead of a with torch.no_grad() block; w and b from zeros_like of x's "
            "slices.",
            code=(
                "import torch\n"
                "def fit_linear(x, y, lr, num_steps):\n"
                "    w = torch.zeros_like(x[:1].T).requires_grad_(True)\n"
                "    b = torch.zeros_like(x[0, :1]).requires_grad_(True) if x.shape[0] else torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    losses = []\n"
                "    for _ in range(num_steps):\n"
                "        err = x @ w + b - y\n"
                "        loss = (err * err).sum() / err.numel()\n"
                "        losses.append(float(loss))\n"
                "        loss.backward()\n"
                "        was = torch.is_grad_enabled()\n"
                "        torch.set_grad_enabled(False)\n"
                "        w.add_(w.grad, alpha=-lr)\n"
                "        b.add_(b.grad, alpha=-lr)\n"
                "        torch.set_grad_enabled(was)\n"
                "        w.grad = None\n"
                "        b.grad = None\n"
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
        RightAnswer(
            name="empty-like-copy-target",
            why="The rounded values copied into torch.empty_like(x) (x's dtype and device), then "
            "x plus the detached difference: the same values and gradient.",
            code=(
                "import torch\n"
                "def round_ste(x):\n"
                "    target = torch.empty_like(x).copy_(torch.round(x.detach()))\n"
                "    return x + (target - x.detach())\n"
            ),
        ),
        RightAnswer(
            name="cpu-0d-int-factor",
            why="Multiplies the correction by a 0-d int8 CPU tensor equal to 1: a 0-d tensor is a"
            " scalar on any device and does not change x's dtype.",
            code=(
                "import torch\n"
                "def round_ste(x):\n"
                "    one = torch.tensor(1, dtype=torch.int8)  # 0-d CPU: a scalar on any device, keeps x's dtype\n"
                "    return x + (x.detach().round() - x.detach()) * one\n"
            ),
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
        RightAnswer(
            name="cpu-0d-delta-sign",
            why="backward multiplies sign(x) by delta as a 0-d float64 CPU tensor (a scalar on "
            "any device, x's dtype kept) outside the kink; forward with torch.where and Python "
            "numbers.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        a = x.abs()\n"
                "        return torch.where(a <= delta, 0.5 * x * x, delta * (a - 0.5 * delta))\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        d = torch.tensor(ctx.delta, dtype=torch.float64)  # 0-d CPU: a scalar on any device\n"
                "        local = torch.where(x.abs() <= ctx.delta, x, d * torch.sign(x))\n"
                "        return local * grad_output, None\n"
            ),
        ),
        RightAnswer(
            name="new-tensor-bounds",
            why="backward bounds x with torch.maximum and torch.minimum against "
            "x.new_tensor(+-delta), 0-d tensors on x's device: the same derivative as clamp.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        small = x.abs() <= delta\n"
                "        quad = 0.5 * x.pow(2)\n"
                "        lin = delta * x.abs() - 0.5 * delta * delta\n"
                "        return torch.where(small, quad, lin)\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        lo, hi = x.new_tensor(-ctx.delta), x.new_tensor(ctx.delta)\n"
                "        return torch.minimum(torch.maximum(x, lo), hi) * grad_output, None\n"
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
        RightAnswer(
            name="vmap-func-hessian",
            why="torch.func.hessian of f at each element, vectorised with vmap: an elementwise "
            "f's second derivative, with zeros where it does not depend on x.",
            code=(
                "import torch\n"
                "from torch.func import hessian, vmap\n"
                "def second_derivative(f, x):\n"
                "    flat = x.detach().reshape(-1)\n"
                "    return vmap(hessian(f))(flat).reshape(x.shape)\n"
            ),
        ),
        RightAnswer(
            name="new-zeros-grad-outputs",
            why="grad_outputs given as torch.ones_like(out) and torch.ones(...).to(df) instead of"
            " summing, and the zeros from x.new_zeros: all on x's device.",
            code=(
                "import torch\n"
                "def second_derivative(f, x):\n"
                "    t = x.detach().clone().requires_grad_(True)\n"
                "    out = f(t)\n"
                "    zero = x.new_zeros(x.shape)\n"
                "    if not out.requires_grad:\n"
                "        return zero\n"
                "    (df,) = torch.autograd.grad(out, t, grad_outputs=torch.ones_like(out), create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return zero\n"
                "    (d2,) = torch.autograd.grad(df, t, grad_outputs=torch.ones(df.shape).to(df), allow_unused=True)\n"
                "    return zero if d2 is None else d2\n"
            ),
        ),
        RightAnswer(
            name="where-python-scalar-zeros",
            why="The zero cases through torch.where with a Python number and torch.full_like: "
            "tensors of x's shape, dtype and device.",
            code=(
                "import torch\n"
                "def second_derivative(f, x):\n"
                "    t = x.detach().clone().requires_grad_(True)\n"
                "    out = f(t).sum()\n"
                "    if out.grad_fn is None:\n"
                "        return torch.where(torch.ones_like(t, dtype=torch.bool), 0.0, t).detach()\n"
                "    (df,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if df.grad_fn is None:\n"
                "        return torch.full_like(t, 0.0).detach()\n"
                "    return torch.autograd.grad(df.sum(), t)[0]\n"
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
        RightAnswer(
            name="jvp-of-func-grad",
            why="Forward-over-reverse: torch.func.jvp of torch.func.grad(f) along v gives H @ v "
            "without forming H.",
            code=(
                "import torch\n"
                "from torch.func import grad, jvp\n"
                "def hvp(f, x, v):\n"
                "    return jvp(grad(f), (x.detach(),), (v.detach(),))[1]\n"
            ),
        ),
        RightAnswer(
            name="to-x-and-dot",
            why="The zeros from x.new_zeros and torch.zeros(...).to(x), and g . v with torch.dot "
            "on v.to(g): every tensor on x's device.",
            code=(
                "import torch\n"
                "def hvp(f, x, v):\n"
                "    t = x.detach().clone().requires_grad_(True)\n"
                "    out = f(t)\n"
                "    if out.grad_fn is None:\n"
                "        return x.new_zeros(x.shape[0])\n"
                "    (g,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if g.grad_fn is None:\n"
                "        return torch.zeros(len(x)).to(x)\n"
                "    w = v.to(g).detach()\n"
                "    (hv,) = torch.autograd.grad(torch.dot(g, w), t)\n"
                "    return hv\n"
            ),
        ),
        RightAnswer(
            name="cpu-index-rows",
            why="Indexes g and v with a CPU torch.arange (indexing accepts CPU indices on any "
            "device) before the dot product.",
            code=(
                "import torch\n"
                "def hvp(f, x, v):\n"
                "    t = x.detach().clone().requires_grad_(True)\n"
                "    out = f(t)\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (g,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if not g.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    idx = torch.arange(x.shape[0])  # CPU indices: fine for indexing on any device\n"
                "    (hv,) = torch.autograd.grad((g[idx] * v[idx]).sum(), t)\n"
                "    return hv\n"
            ),
        ),
    ],
}

# Red-team round 2: right answers in other styles.
RIGHT_ANSWERS["accumulated_grad"] += [
    RightAnswer(
        name="row-weighted-then-divide",
        why="Weights each micro-batch loss by its row count, backward() on that, and divides the "
        "accumulated w.grad by N once at the end: the same scaling, done in two steps.",
        code=(
            "def accumulated_grad(loss_fn, w, x, y, micro_size):\n"
            "    w.grad = None\n"
            "    for s in range(0, x.shape[0], micro_size):\n"
            "        xb, yb = x[s:s + micro_size], y[s:s + micro_size]\n"
            "        (loss_fn(w, xb, yb) * xb.shape[0]).backward()\n"
            "    w.grad /= x.shape[0]\n"
            "    return w.grad\n"
        ),
    ),
]

RIGHT_ANSWERS["HuberFunction"] += [
    RightAnswer(
        name="needs-input-grad-and-where",
        why="backward returns a gradient only where ctx.needs_input_grad asks for one, and "
        "builds the derivative with torch.where and sign instead of clamp.",
        code=(
            "import torch\n"
            "class HuberFunction(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, delta):\n"
            "        ctx.save_for_backward(x)\n"
            "        ctx.delta = delta\n"
            "        a = x.abs()\n"
            "        return torch.where(a <= delta, 0.5 * x * x, delta * a - 0.5 * delta * delta)\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad_output):\n"
            "        (x,) = ctx.saved_tensors\n"
            "        d = ctx.delta\n"
            "        if not ctx.needs_input_grad[0]:\n"
            "            return None, None\n"
            "        return grad_output * torch.where(x.abs() <= d, x, d * x.sign()), None\n"
        ),
    ),
]

RIGHT_ANSWERS["hvp"] += [
    RightAnswer(
        name="functional-vhp",
        why="torch.autograd.functional.vhp gives v @ H, which is H @ v because a Hessian is "
        "symmetric; it differentiates twice and forms no Hessian.",
        code=(
            "import torch\n"
            "def hvp(f, x, v):\n"
            "    return torch.autograd.functional.vhp(f, x.detach(), v)[1]\n"
        ),
    ),
]

RIGHT_ANSWERS["fit_linear"] += [
    RightAnswer(
        name="imported-backward-mse-loss",
        why="F.mse_loss for the loss, torch.autograd.backward imported under another name "
        "instead of loss.backward(), x.new_zeros for the leaves and .grad = None to clear: the "
        "same descent.",
        code=(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "from torch.autograd import backward as run_backward\n"
            "def fit_linear(x, y, lr, num_steps):\n"
            "    w = x.new_zeros(x.shape[1], 1).requires_grad_()\n"
            "    b = x.new_zeros(1).requires_grad_()\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        loss = F.mse_loss(x @ w + b, y)\n"
            "        losses.append(loss.item())\n"
            "        run_backward(loss)\n"
            "        with torch.no_grad():\n"
            "            w.sub_(lr * w.grad)\n"
            "            b.sub_(lr * b.grad)\n"
            "        w.grad = None\n"
            "        b.grad = None\n"
            "    return w, b, losses\n"
        ),
    ),
]

RIGHT_ANSWERS["hvp"] += [
    RightAnswer(
        name="forward-over-reverse-dual",
        why="Forward-mode AD through the gradient (a dual x with tangent v): the tangent of g "
        "is H @ v, with no second backward pass and no Hessian.",
        code=(
            "import torch\n"
            "import torch.autograd.forward_ad as fwAD\n"
            "def hvp(f, x, v):\n"
            "    t = x.detach().clone().requires_grad_(True)\n"
            "    with fwAD.dual_level():\n"
            "        y = f(fwAD.make_dual(t, v.to(x.dtype)))\n"
            "        if not y.requires_grad:\n"
            "            return torch.zeros_like(x)\n"
            "        (g,) = torch.autograd.grad(y, t, create_graph=True, allow_unused=True)\n"
            "        tangent = None if g is None else fwAD.unpack_dual(g).tangent\n"
            "    return torch.zeros_like(x) if tangent is None else tangent.detach()\n"
        ),
    ),
]

# Red-team round 3: right answers in other styles.
RIGHT_ANSWERS["fit_linear"] += [
    RightAnswer(
        name="squeezed-predictions",
        why="Predictions and targets squeezed to (N,) (the bias broadcasts), w kept (F, 1); the "
        "loss is the same mean of squares.",
        code=(
            "import torch\n"
            "def fit_linear(x, y, lr, num_steps):\n"
            "    w = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    target = y.reshape(-1)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        loss = ((x @ w).reshape(-1) + b - target).pow(2).mean()\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        with torch.no_grad():\n"
            "            for p in (w, b):\n"
            "                p -= lr * p.grad\n"
            "                p.grad.zero_()\n"
            "    return w, b, losses\n"
        ),
    ),
]

RIGHT_ANSWERS["accumulated_grad"] += [
    RightAnswer(
        name="slices-and-caller-grad-restored",
        why="Micro-batches by slicing x[i:i + micro_size] instead of split; the gradient is "
        "returned and the caller's earlier .grad put back (the text allows either).",
        code=(
            "import torch\n"
            "def accumulated_grad(loss_fn, w, x, y, micro_size):\n"
            "    old = w.grad\n"
            "    w.grad = None\n"
            "    n = x.shape[0]\n"
            "    for i in range(0, n, micro_size):\n"
            "        xb, yb = x[i:i + micro_size], y[i:i + micro_size]\n"
            "        loss_fn(w, xb, yb).mul(xb.shape[0] / n).backward()\n"
            "    g = w.grad\n"
            "    w.grad = old\n"
            "    return g\n"
        ),
    ),
]

RIGHT_ANSWERS["round_ste"] += [
    RightAnswer(
        name="correction-under-no-grad",
        why="The correction computed inside a with torch.no_grad(): block instead of "
        ".detach(): a constant to autograd all the same, and the caller's mode is put back.",
        code=(
            "import torch\n"
            "def round_ste(x):\n"
            "    with torch.no_grad():\n"
            "        correction = torch.round(x) - x\n"
            "    return x + correction\n"
        ),
    ),
]

RIGHT_ANSWERS["HuberFunction"] += [
    RightAnswer(
        name="clamped-magnitude",
        why="forward from q = min(|x|, delta): 0.5 q**2 + delta (|x| - q), one expression for "
        "both parts; backward through torch.clamp with min= and max=.",
        code=(
            "import torch\n"
            "class HuberFunction(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, delta):\n"
            "        ctx.save_for_backward(x)\n"
            "        ctx.delta = delta\n"
            "        a = x.abs()\n"
            "        q = torch.clamp(a, max=delta)\n"
            "        return 0.5 * q * q + delta * (a - q)\n"
            "\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad_output):\n"
            "        (x,) = ctx.saved_tensors\n"
            "        return grad_output * torch.clamp(x, min=-ctx.delta, max=ctx.delta), None\n"
        ),
    ),
]

RIGHT_ANSWERS["second_derivative"] += [
    RightAnswer(
        name="try-except-zeros",
        why="Both differentiations in one try block; the RuntimeError autograd raises where a "
        "derivative has no graph becomes zeros. x.detach() shares memory but requires_grad_ "
        "flags only the new tensor.",
        code=(
            "import torch\n"
            "def second_derivative(f, x):\n"
            "    t = x.detach().requires_grad_()\n"
            "    try:\n"
            "        (d1,) = torch.autograd.grad(f(t).sum(), [t], create_graph=True)\n"
            "        (d2,) = torch.autograd.grad(d1.sum(), [t])\n"
            "    except RuntimeError:\n"
            "        return torch.zeros_like(x)\n"
            "    return d2\n"
        ),
    ),
]

RIGHT_ANSWERS["fit_linear"] += [
    RightAnswer(
        name="torch-func-grad",
        why="The gradients from torch.func.grad of the loss with respect to (w, b) instead of "
        "backward(): autograd all the same, nothing to zero; the in-place update under no_grad.",
        code=(
            "import torch\n"
            "from torch.func import grad\n"
            "def fit_linear(x, y, lr, num_steps):\n"
            "    w = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    def mse(w_, b_):\n"
            "        return ((x @ w_ + b_ - y) ** 2).mean()\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        losses.append(mse(w, b).item())\n"
            "        grad_w, grad_b = grad(mse, argnums=(0, 1))(w, b)\n"
            "        with torch.no_grad():\n"
            "            w -= lr * grad_w\n"
            "            b -= lr * grad_b\n"
            "    return w, b, losses\n"
        ),
    ),
]
