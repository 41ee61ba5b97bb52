"""Plausible wrong answers for 02_autograd's exercises."""

from autograder.mistakes import Mistake

_HUBER_BACKWARD = (
    "    @staticmethod\n"
    "    def backward(ctx, grad_output):\n"
    "        (x,) = ctx.saved_tensors\n"
    "        return grad_output * x.clamp(-ctx.delta, ctx.delta), None\n"
)

_HUBER_FORWARD = (
    "    @staticmethod\n"
    "    def forward(ctx, x, delta):\n"
    "        ctx.save_for_backward(x)\n"
    "        ctx.delta = delta\n"
    "        return torch.where(x.abs() <= delta, 0.5 * x**2, delta * (x.abs() - 0.5 * delta))\n"
)


def _fit_linear(update: str, zero: str = "        w.grad.zero_()\n        b.grad.zero_()\n") -> str:
    return (
        "import torch\n"
        "def fit_linear(x, y, lr, num_steps):\n"
        "    w = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
        "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
        "    losses = []\n"
        "    for _ in range(num_steps):\n"
        "        loss = ((x @ w + b - y) ** 2).mean()\n"
        "        losses.append(loss.item())\n"
        "        loss.backward()\n" + update + zero + "    return w, b, losses\n"
    )


_NO_GRAD_UPDATE = (
    "        with torch.no_grad():\n            w -= lr * w.grad\n            b -= lr * b.grad\n"
)


def _accumulated(body: str) -> str:
    return (
        "def accumulated_grad(loss_fn, w, x, y, micro_size):\n"
        "    n = x.shape[0]\n" + body + "    return w.grad\n"
    )


def _second(body: str) -> str:
    return "import torch\ndef second_derivative(f, x):\n" + body


def _hvp(body: str) -> str:
    return "import torch\ndef hvp(f, x, v):\n" + body


MISTAKES = {
    "mse_grads": [
        Mistake(
            name="missing-factor-two",
            message="The derivative of r**2 is 2*r: the factor 2 belongs in both gradients.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    r = x @ w + b - y\n"
                "    n = x.shape[0]\n"
                "    return x.T @ r / n, r.sum(dim=0) / n\n"
            ),
        ),
        Mistake(
            name="forgets-mean",
            message="The loss is a mean over N rows: every gradient carries a factor 1/N.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    r = x @ w + b - y\n"
                "    return 2 * x.T @ r, 2 * r.sum(dim=0)\n"
            ),
        ),
        Mistake(
            name="bias-grad-scalar",
            message="r.sum() is a 0-d tensor; the bias gradient needs b's shape (1,): r.sum(dim=0).",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    r = x @ w + b - y\n"
                "    n = x.shape[0]\n"
                "    return 2 * x.T @ r / n, 2 * r.sum() / n\n"
            ),
        ),
        Mistake(
            name="uses-autograd",
            message="The exercise asks for the gradient by hand: under torch.no_grad() autograd "
            "records nothing, so backward() has no graph to walk.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    w = w.clone().requires_grad_(True)\n"
                "    b = b.clone().requires_grad_(True)\n"
                "    ((x @ w + b - y) ** 2).mean().backward()\n"
                "    return w.grad, b.grad\n"
            ),
        ),
        Mistake(
            name="float32-working-copy",
            message="Casting to float32 returns float32 gradients for float64 inputs: compute in "
            "the inputs' dtype.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    x, y, w, b = x.float(), y.float(), w.float(), b.float()\n"
                "    n = x.shape[0]\n"
                "    r = x @ w + b - y\n"
                "    return 2 / n * x.T @ r, 2 / n * r.sum(dim=0)\n"
            ),
        ),
        Mistake(
            name="float32-copy-cast-back",
            message="A float32 working copy cast back to float64 has the right dtype but only "
            "float32's seven digits: compute in the inputs' dtype.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    dtype = x.dtype\n"
                "    x, y, w, b = x.float(), y.float(), w.float(), b.float()\n"
                "    n = x.shape[0]\n"
                "    r = x @ w + b - y\n"
                "    return (2 / n * x.T @ r).to(dtype), (2 / n * r.sum(dim=0)).to(dtype)\n"
            ),
        ),
        Mistake(
            name="autograd-under-enable-grad",
            message="The gradients are to be worked out by hand; switching recording back on "
            "with torch.enable_grad() and asking autograd is not that.",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    with torch.enable_grad():\n"
                "        w = w.detach().clone().requires_grad_(True)\n"
                "        b = b.detach().clone().requires_grad_(True)\n"
                "        loss = ((x @ w + b - y) ** 2).mean()\n"
                "        return torch.autograd.grad(loss, (w, b))\n"
            ),
        ),
        Mistake(
            name="residual-in-y",
            message="y.sub_(...) overwrites the caller's targets: build the residual as a new "
            "tensor.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = y.sub_(x @ w + b).neg_()  # saves a tensor, overwrites y\n"
                "    return 2 / n * x.T @ r, 2 / n * r.sum(dim=0)\n"
            ),
        ),
        Mistake(
            name="flat-view-of-x",
            message="x.view(-1) needs contiguous memory; a transposed or sliced x has none. Use "
            "x.reshape, or no flattening at all: (2 / N) * x.T @ r.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    n, f = x.shape\n"
                "    x = x.view(-1).view(n, f)  # one flat buffer\n"
                "    r = x @ w + b - y\n"
                "    return 2 / n * x.T @ r, 2 / n * r.sum(dim=0)\n"
            ),
        ),
        Mistake(
            name="squeezed-residual",
            message="r.squeeze() drops every axis of size 1: with one row the residual becomes "
            "0-d and x.T @ r fails. Keep r of shape (N, 1).",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = (x @ w + b - y).squeeze()\n"
                "    return (2 / n * x.T @ r).unsqueeze(1), (2 / n * r.sum()).reshape(1)\n"
            ),
        ),
        Mistake(
            name="bias-grad-made-on-cpu",
            message="torch.full((1,), ...) lands on the CPU whatever x's device: build grad_b "
            "from r (r.sum(dim=0)) so it lives where the inputs do.",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = x @ w + b - y\n"
                "    grad_b = torch.full((1,), 2.0 / n, dtype=x.dtype) * r.sum()\n"
                "    return 2 / n * x.T @ r, grad_b\n"
            ),
        ),
        Mistake(
            name="stores-grads-on-callers-tensors",
            message="Writing w.grad and b.grad changes the caller's tensors: return new tensors "
            "and leave w and b (and their .grad) as they were.",
            code=(
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = x @ w + b - y\n"
                "    w.grad = 2 / n * x.T @ r\n"
                "    b.grad = 2 / n * r.sum(dim=0)\n"
                "    return w.grad, b.grad\n"
            ),
        ),
        Mistake(
            name="bias-grad-through-item",
            message="torch.tensor([... .item()]) is a new float32 CPU tensor: build grad_b from r "
            "(r.sum(dim=0)) so it keeps the inputs' dtype and device.",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = x @ w + b - y\n"
                "    return 2 / n * x.T @ r, torch.tensor([2 / n * r.sum().item()])\n"
            ),
        ),
        Mistake(
            name="ones-row-on-cpu-in-matmul",
            message="torch.ones(1, N, dtype=x.dtype) lands on the CPU: on a GPU, ones @ r fails. Use "
            "r.sum(dim=0), or x.new_ones(1, N).",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = x @ w + b - y\n"
                "    ones = torch.ones(1, n, dtype=x.dtype)\n"
                "    return 2 / n * x.T @ r, (2 / n * ones @ r).reshape(1)\n"
            ),
        ),
        Mistake(
            name="cpu-arange-in-index-select",
            message="x.index_select(0, torch.arange(N)) gives a GPU index_select a CPU index, which "
            "it refuses; it also copies x for nothing. Use x itself: (2 / N) * x.T @ r.",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = x @ w + b - y\n"
                "    rows = x.index_select(0, torch.arange(n))  # all rows, in order\n"
                "    return 2 / n * rows.T @ r, 2 / n * r.sum(dim=0)\n"
            ),
        ),
        Mistake(
            name="one-row-branch-zeros-on-cpu",
            message="The one-row branch adds torch.zeros(1) made on the CPU to a result on x's "
            "device: on a GPU that fails. No branch is needed: the formulas hold for N = 1.",
            code=(
                "import torch\n"
                "def mse_grads(x, y, w, b):\n"
                "    n = x.shape[0]\n"
                "    r = x @ w + b - y\n"
                "    if n == 1:  # a single sample: its own gradient\n"
                "        return 2 * x.T * r, torch.zeros(1, dtype=x.dtype) + 2 * r.reshape(1)\n"
                "    return 2 / n * x.T @ r, 2 / n * r.sum(dim=0)\n"
            ),
        ),
    ],
    "fit_linear": [
        Mistake(
            name="no-zeroing",
            message="backward() adds into .grad: zero w.grad and b.grad after every update, or "
            "each step uses the sum of all past gradients.",
            code=_fit_linear(_NO_GRAD_UPDATE, zero=""),
        ),
        Mistake(
            name="update-outside-no-grad",
            message="An in-place update of a leaf that requires grad must happen inside "
            "torch.no_grad(), or autograd raises a RuntimeError.",
            code=_fit_linear("        w -= lr * w.grad\n        b -= lr * b.grad\n"),
        ),
        Mistake(
            name="rebinds-name",
            message="w = w - lr * w.grad makes a new, non-leaf tensor: its .grad stays None. "
            "Update in place (w -= ...) inside torch.no_grad().",
            code=_fit_linear(
                "        w = w - lr * w.grad\n        b = b - lr * b.grad\n",
                zero="",
            ),
        ),
        Mistake(
            name="rebinds-under-no-grad",
            message="Rebinding inside no_grad gives a tensor that no longer requires grad, so "
            "the next backward() leaves w.grad None. Update in place: w -= lr * w.grad.",
            code=_fit_linear(
                "        with torch.no_grad():\n"
                "            w = w - lr * w.grad\n"
                "            b = b - lr * b.grad\n",
                zero="",
            ),
        ),
        Mistake(
            name="loss-tensor-in-list",
            message="Store loss.item(): a loss tensor keeps its whole graph alive in the list.",
            code=_fit_linear(_NO_GRAD_UPDATE).replace("loss.item()", "loss"),
        ),
        Mistake(
            name="loss-after-update",
            message="Record the loss before the update: it is the value backward() differentiated.",
            code=_fit_linear(_NO_GRAD_UPDATE)
            .replace("        losses.append(loss.item())\n", "")
            .replace(
                "        w.grad.zero_()\n",
                "        losses.append(((x @ w + b - y) ** 2).mean().item())\n"
                "        w.grad.zero_()\n",
            ),
        ),
        Mistake(
            name="ignores-lr",
            message="The step size is the lr argument; a fixed 0.1 only matches when lr is 0.1.",
            code=_fit_linear(_NO_GRAD_UPDATE.replace("lr *", "0.1 *")),
        ),
        Mistake(
            name="float32-parameters",
            message="torch.zeros(...) without dtype= is float32: for float64 data create w and b "
            "with dtype=x.dtype.",
            code=_fit_linear(_NO_GRAD_UPDATE).replace("dtype=x.dtype, ", ""),
        ),
        Mistake(
            name="w-shape-transposed",
            message="w has shape (F, 1), not (1, F); with one feature the two look alike.",
            code=_fit_linear(_NO_GRAD_UPDATE)
            .replace("torch.zeros(x.shape[1], 1,", "torch.zeros(1, x.shape[1],")
            .replace("x @ w + b", "x @ w.T + b"),
        ),
        Mistake(
            name="reseeds-global-rng",
            message="torch.manual_seed inside a helper resets the caller's random stream; zeros "
            "need no seed.",
            code=_fit_linear(_NO_GRAD_UPDATE).replace(
                "    w = torch.zeros(",
                "    torch.manual_seed(0)  # reproducible\n    w = torch.zeros(",
            ),
        ),
        Mistake(
            name="returns-inside-loop",
            message="A return inside the loop never runs when num_steps is 0: return (w, b, "
            "losses) after the loop, the zeros and an empty list when there were no steps.",
            code=_fit_linear(_NO_GRAD_UPDATE).replace(
                "    return w, b, losses\n",
                "        if len(losses) == num_steps:\n            return w, b, losses\n",
            ),
        ),
        Mistake(
            name="uses-torch-optim",
            message="The exercise asks for gradient descent written by hand, no torch.optim: "
            "update w and b in place inside torch.no_grad() and zero their gradients yourself.",
            code=(
                "import torch\n"
                "def fit_linear(x, y, lr, num_steps):\n"
                "    w = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    opt = torch.optim.SGD([w, b], lr=lr)\n"
                "    losses = []\n"
                "    for _ in range(num_steps):\n"
                "        opt.zero_grad()\n"
                "        loss = ((x @ w + b - y) ** 2).mean()\n"
                "        losses.append(loss.item())\n"
                "        loss.backward()\n"
                "        opt.step()\n"
                "    return w, b, losses\n"
            ),
        ),
        Mistake(
            name="requires-grad-before-to",
            message="torch.zeros(..., requires_grad=True).to(x) is a copy, not a leaf, when x is "
            "float64 or on a GPU: its .grad stays None. Create the leaves with dtype= and device=.",
            code=_fit_linear(_NO_GRAD_UPDATE)
            .replace(
                "torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)",
                "torch.zeros(x.shape[1], 1, requires_grad=True).to(x)",
            )
            .replace(
                "torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)",
                "torch.zeros(1, requires_grad=True).to(x)",
            ),
        ),
        Mistake(
            name="leaves-made-on-cpu",
            message="torch.zeros(..., dtype=x.dtype) without device= lands on the CPU: on a GPU, "
            "x @ w fails. Create w and b with device=x.device.",
            code=_fit_linear(_NO_GRAD_UPDATE)
            .replace(
                "torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)",
                "torch.zeros(x.shape[1], 1, dtype=x.dtype, requires_grad=True)",
            )
            .replace(
                "torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)",
                "torch.zeros(1, dtype=x.dtype, requires_grad=True)",
            ),
        ),
        Mistake(
            name="no-steps-zeros-on-cpu",
            message="With num_steps=0 it returns torch.zeros(...) without device=x.device: on a GPU "
            "the caller gets CPU parameters. Make w and b once, with device=x.device, before "
            "the loop, and return them.",
            code=(
                "import torch\n"
                "def fit_linear(x, y, lr, num_steps):\n"
                "    f = x.shape[1]\n"
                "    if num_steps == 0:  # nothing to fit\n"
                "        return torch.zeros(f, 1, dtype=x.dtype), torch.zeros(1, dtype=x.dtype), []\n"
                "    w = torch.zeros(f, 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    losses = []\n"
                "    for _ in range(num_steps):\n"
                "        loss = ((x @ w + b - y) ** 2).mean()\n"
                "        losses.append(loss.item())\n"
                "        loss.backward()\n"
                "        with torch.no_grad():\n"
                "            w -= lr * w.grad\n"
                "            b -= lr * b.grad\n"
                "        w.grad.zero_()\n"
                "        b.grad.zero_()\n"
                "    return w, b, losses\n"
            ),
        ),
        Mistake(
            name="grad-mode-left-off",
            message="torch.set_grad_enabled(False) before the update and never switched back at the "
            "end: the caller's later code runs without autograd. Update inside a with "
            "torch.no_grad(): block.",
            code=(
                "import torch\n"
                "def fit_linear(x, y, lr, num_steps):\n"
                "    w = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
                "    losses = []\n"
                "    for _ in range(num_steps):\n"
                "        torch.set_grad_enabled(True)\n"
                "        loss = ((x @ w + b - y) ** 2).mean()\n"
                "        losses.append(loss.item())\n"
                "        loss.backward()\n"
                "        torch.set_grad_enabled(False)  # the update must not be recorded\n"
                "        w -= lr * w.grad\n"
                "        b -= lr * b.grad\n"
                "        w.grad.zero_()\n"
                "        b.grad.zero_()\n"
                "    return w, b, losses\n"
            ),
        ),
        Mistake(
            name="step-size-tensor-on-cpu",
            message="torch.tensor([lr]) is made on the CPU: on a GPU, lr_t * w.grad fails. lr is "
            "a Python float: multiply by it directly.",
            code=_fit_linear(
                "        with torch.no_grad():\n"
                "            step = torch.tensor([lr], dtype=x.dtype)\n"
                "            w -= step * w.grad\n"
                "            b -= step * b.grad\n"
            ),
        ),
    ],
    "accumulated_grad": [
        Mistake(
            name="no-division",
            message="Each micro-batch loss is a mean over its own rows; summing their gradients "
            "gives k times the full-batch gradient. Scale each loss by len(xb) / N.",
            code=_accumulated(
                "    w.grad = None\n"
                "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
                "        loss_fn(w, xb, yb).backward()\n"
            ),
        ),
        Mistake(
            name="divide-by-count",
            message="Dividing by the number of micro-batches is only right when they are all the "
            "same size; with a shorter last one, scale by len(xb) / N.",
            code=_accumulated(
                "    w.grad = None\n"
                "    chunks = list(zip(x.split(micro_size), y.split(micro_size)))\n"
                "    for xb, yb in chunks:\n"
                "        (loss_fn(w, xb, yb) / len(chunks)).backward()\n"
            ),
        ),
        Mistake(
            name="zero-inside-loop",
            message="Clearing .grad inside the loop throws away every micro-batch but the last. "
            "Clear it once, before the loop.",
            code=_accumulated(
                "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
                "        w.grad = None\n"
                "        (loss_fn(w, xb, yb) * len(xb) / n).backward()\n"
            ),
        ),
        Mistake(
            name="no-initial-clear",
            message="w.grad may hold an old gradient: clear it before accumulating.",
            code=_accumulated(
                "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
                "        (loss_fn(w, xb, yb) * len(xb) / n).backward()\n"
            ),
        ),
        Mistake(
            name="full-batch-at-once",
            message="The point is to never run the whole batch at once: call loss_fn on each "
            "micro-batch.",
            code=_accumulated("    w.grad = None\n    loss_fn(w, x, y).backward()\n"),
        ),
        Mistake(
            name="one-backward-for-all-pieces",
            message="Summing the micro-batch losses and calling backward() once keeps every "
            "micro-batch's graph alive until the end, as much memory as the full batch: call "
            "backward() on each scaled loss inside the loop.",
            code=_accumulated(
                "    w.grad = None\n"
                "    total = 0\n"
                "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
                "        total = total + loss_fn(w, xb, yb) * len(xb) / n\n"
                "    total.backward()\n"
            ),
        ),
        Mistake(
            name="chunk-not-split",
            message="x.chunk(micro_size) makes micro_size pieces; x.split(micro_size) makes pieces "
            "of micro_size rows.",
            code=_accumulated(
                "    w.grad = None\n"
                "    for xb, yb in zip(x.chunk(micro_size), y.chunk(micro_size)):\n"
                "        (loss_fn(w, xb, yb) * len(xb) / n).backward()\n"
            ),
        ),
        Mistake(
            name="float32-accumulator",
            message="torch.zeros(w.shape) is float32: accumulating float64 gradients into it "
            "loses their dtype. Use torch.zeros_like(w) or let w.grad accumulate.",
            code=(
                "import torch\n"
                "def accumulated_grad(loss_fn, w, x, y, micro_size):\n"
                "    n = x.shape[0]\n"
                "    w.grad = None\n"
                "    total = torch.zeros(w.shape, device=w.device)\n"
                "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
                "        (g,) = torch.autograd.grad(loss_fn(w, xb, yb) * len(xb) / n, w)\n"
                "        total += g\n"
                "    return total\n"
            ),
        ),
        Mistake(
            name="drops-the-remainder",
            message="range(n // micro_size) leaves out the rows after the last full micro-batch "
            "(all of them when micro_size > N): .split(micro_size) keeps the shorter last piece.",
            code=(
                "def accumulated_grad(loss_fn, w, x, y, micro_size):\n"
                "    n = x.shape[0]\n"
                "    w.grad = None\n"
                "    for i in range(max(n // micro_size, 1)):\n"
                "        xb = x[i * micro_size:(i + 1) * micro_size]\n"
                "        yb = y[i * micro_size:(i + 1) * micro_size]\n"
                "        (loss_fn(w, xb, yb) * len(xb) / n).backward()\n"
                "    return w.grad\n"
            ),
        ),
        Mistake(
            name="all-forwards-first",
            message="Running every micro-batch's forward before the first backward() keeps all "
            "their graphs alive at once: call backward() right after each micro-batch's loss.",
            code=_accumulated(
                "    w.grad = None\n"
                "    losses = [loss_fn(w, xb, yb) * len(xb) / n\n"
                "              for xb, yb in zip(x.split(micro_size), y.split(micro_size))]\n"
                "    for loss in losses:\n"
                "        loss.backward()\n"
            ),
        ),
        Mistake(
            name="chunk-by-count",
            message="x.chunk(k) with k = ceil(N / micro_size) can make pieces of other sizes "
            "(N = 6, micro_size = 4: 3 + 3 rows): x.split(micro_size) makes micro_size rows each.",
            code=_accumulated(
                "    w.grad = None\n"
                "    k = -(-n // micro_size)\n"
                "    for xb, yb in zip(x.chunk(k), y.chunk(k)):\n"
                "        (loss_fn(w, xb, yb) * len(xb) / n).backward()\n"
            ),
        ),
    ],
    "round_ste": [
        Mistake(
            name="plain-round",
            message="round has a zero derivative almost everywhere: the gradient never reaches x.",
            code="def round_ste(x):\n    return x.round()\n",
        ),
        Mistake(
            name="detach-wrong-tensor",
            message="Detaching x instead of the correction leaves -x in the graph: the gradient "
            "comes out as -1 times the upstream. Detach (x.round() - x).",
            code="def round_ste(x):\n    return x.detach() + (x.round() - x)\n",
        ),
        Mistake(
            name="detach-everything",
            message="Detaching the whole result cuts it from the graph: no gradient at all.",
            code="def round_ste(x):\n    return (x + (x.round() - x)).detach()\n",
        ),
        Mistake(
            name="rounds-half-up",
            message="floor(x + 0.5) rounds halves up; torch.round rounds them to the even "
            "neighbour (2.5 -> 2). Use x.round().",
            code=(
                "import torch\n"
                "def round_ste(x):\n"
                "    return x + (torch.floor(x + 0.5) - x).detach()\n"
            ),
        ),
        Mistake(
            name="rounds-caller-in-place",
            message="Rounding x in place changes the caller's tensor: return a new one, "
            "x + (x.round() - x).detach().",
            code=(
                "import torch\n"
                "def round_ste(x):\n"
                "    with torch.no_grad():\n"
                "        x.copy_(x.round())  # values rounded, x stays in the graph\n"
                "    return x\n"
            ),
        ),
        Mistake(
            name="float32-correction",
            message="A float32 correction makes a float16 x come back as float32: keep x's dtype "
            "(x + (x.round() - x).detach()).",
            code="def round_ste(x):\n    return x + (x.round() - x).detach().float()\n",
        ),
        Mistake(
            name="stacks-elements",
            message="torch.stack of no elements raises: an empty x must give an empty result. "
            "Work on the whole tensor: x + (x.round() - x).detach().",
            code=(
                "import torch\n"
                "def round_ste(x):\n"
                "    parts = [(t.round() - t).detach() for t in x.flatten()]\n"
                "    return x + torch.stack(parts).reshape(x.shape)\n"
            ),
        ),
        Mistake(
            name="flat-view",
            message="x.view(-1) needs contiguous memory; a transposed x has none. There is no "
            "need to flatten: x + (x.round() - x).detach().",
            code=(
                "def round_ste(x):\n"
                "    flat = x.view(-1)\n"
                "    return (flat + (flat.round() - flat).detach()).view(x.shape)\n"
            ),
        ),
        Mistake(
            name="rounds-detached-alias-in-place",
            message="x.detach() shares x's memory: round_() on it rounds the caller's x. Use the "
            "out-of-place x.round().",
            code=(
                "def round_ste(x):\n"
                "    correction = x.detach().round_() - x.detach()\n"
                "    return x + correction\n"
            ),
        ),
        Mistake(
            name="sets-requires-grad-on-caller",
            message="x.requires_grad_() changes the caller's tensor; the result requires grad "
            "exactly when x does: x + (x.round() - x).detach().",
            code=(
                "def round_ste(x):\n"
                "    if not x.requires_grad:\n"
                "        x.requires_grad_(True)\n"
                "    return x + (x.round() - x).detach()\n"
            ),
        ),
        Mistake(
            name="correction-rebuilt-from-list",
            message="torch.tensor(c.tolist()) rebuilds the correction on the CPU (and an empty x of "
            "shape (0, 1) comes back of shape (0,)): keep it a tensor, x + (x.round() - "
            "x).detach().",
            code=(
                "import torch\n"
                "def round_ste(x):\n"
                "    c = x.detach().round() - x.detach()\n"
                "    return x + torch.tensor(c.tolist(), dtype=x.dtype)\n"
            ),
        ),
        Mistake(
            name="empty-input-zeros-on-cpu",
            message="For an empty x it returns torch.zeros(x.shape, dtype=x.dtype), made on the CPU "
            "and without a graph: no special case is needed, x + (x.round() - x).detach() "
            "handles it.",
            code=(
                "import torch\n"
                "def round_ste(x):\n"
                "    if x.numel() == 0:  # nothing to round\n"
                "        return torch.zeros(x.shape, dtype=x.dtype)\n"
                "    return x + (torch.round(x) - x).detach()\n"
            ),
        ),
    ],
    "HuberFunction": [
        Mistake(
            name="forgets-grad-output",
            message="backward must return grad_output times the local derivative (the chain "
            "rule); without it the gradient is only right when grad_output is all ones.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return x.clamp(-ctx.delta, ctx.delta), None\n"
            ),
        ),
        Mistake(
            name="one-gradient-for-two-inputs",
            message="forward took (x, delta): backward must return two values, the gradient for "
            "x and None for delta.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return grad_output * x.clamp(-ctx.delta, ctx.delta)\n"
            ),
        ),
        Mistake(
            name="quadratic-derivative-everywhere",
            message="Outside [-delta, delta] the Huber function is linear: its slope is "
            "delta * sign(x), i.e. clamp x to [-delta, delta].",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return grad_output * x, None\n"
            ),
        ),
        Mistake(
            name="forward-reduces",
            message="Return the elementwise values, shape of x; the reduction belongs to the caller.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        out = torch.where(x.abs() <= delta, 0.5 * x**2, delta * (x.abs() - 0.5 * delta))\n"
                "        return out.mean()\n\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return grad_output * x.clamp(-ctx.delta, ctx.delta) / x.numel(), None\n"
            ),
        ),
        Mistake(
            name="backward-fixed-delta",
            message="backward must clamp to [-delta, delta] with the delta forward saved "
            "(ctx.delta), not to [-1, 1].",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return grad_output * x.clamp(-1.0, 1.0), None\n"
            ),
        ),
        Mistake(
            name="clamp-after-grad-output",
            message="Clamp the local derivative, then multiply by grad_output: "
            "grad_output * x.clamp(-delta, delta), not (grad_output * x).clamp(...).",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return (grad_output * x).clamp(-ctx.delta, ctx.delta), None\n"
            ),
        ),
        Mistake(
            name="linear-part-half-not-half-delta",
            message="The linear part is delta * (|x| - 0.5 * delta); with delta = 1 a missing "
            "factor delta does not show.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        return torch.where(x.abs() <= delta, 0.5 * x**2, delta * (x.abs() - 0.5))\n\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return grad_output * x.clamp(-ctx.delta, ctx.delta), None\n"
            ),
        ),
        Mistake(
            name="backward-changes-grad-output",
            message="grad_output.mul_(...) overwrites the gradient autograd handed in, which it "
            "may pass on to other parts of the graph: return a new tensor, grad_output * ...",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return grad_output.mul_(x.clamp(-ctx.delta, ctx.delta)), None\n"
            ),
        ),
        Mistake(
            name="forward-in-float32",
            message="forward computes in float32 whatever x's dtype: a float16 or float64 x "
            "must give a result of its own dtype.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        a = x.float().abs()\n"
                "        return torch.where(a <= delta, 0.5 * a**2, delta * (a - 0.5 * delta))\n"
                + _HUBER_BACKWARD
            ),
        ),
        Mistake(
            name="delta-tensor-on-the-cpu",
            message="torch.full(x.shape, delta) is made on the CPU: on a GPU it cannot meet x. "
            "Pass device=x.device (or use torch.full_like(x, delta)).",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        d = torch.full(x.shape, delta, dtype=x.dtype)\n"
                "        return torch.where(x.abs() <= d, 0.5 * x**2, d * (x.abs() - 0.5 * d))\n"
                + _HUBER_BACKWARD
            ),
        ),
        Mistake(
            name="x-kept-on-ctx",
            message="Save x with ctx.save_for_backward(x), not as ctx.x: saved tensors are checked "
            "for in-place changes and do not leak the graph.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.x = x\n"
                "        ctx.delta = delta\n"
                "        return torch.where(x.abs() <= delta, 0.5 * x**2, delta * (x.abs() - 0.5 * delta))\n\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        return grad_output * ctx.x.clamp(-ctx.delta, ctx.delta), None\n"
            ),
        ),
        Mistake(
            name="clamps-saved-x-in-place",
            message="x.clamp_() in backward overwrites the saved x, which is the caller's tensor: "
            "use the out-of-place x.clamp(-delta, delta).",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        return grad_output * x.clamp_(-ctx.delta, ctx.delta), None\n"
            ),
        ),
        Mistake(
            name="backward-bounds-on-cpu",
            message="backward builds its bounds with torch.full(..., dtype=x.dtype), on the CPU: on a"
            " GPU the backward pass fails. Use x.clamp(-ctx.delta, ctx.delta) with Python "
            "numbers.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        return torch.where(x.abs() <= delta, 0.5 * x ** 2, delta * (x.abs() - 0.5 * delta))\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        bound = torch.full(x.shape[-1:], ctx.delta, dtype=x.dtype)  # one bound per feature\n"
                "        return torch.maximum(torch.minimum(x, bound), -bound) * grad_output, None\n"
            ),
        ),
        Mistake(
            name="backward-ones-on-cpu",
            message="backward multiplies by torch.ones(x.shape) made on the CPU: on a GPU the "
            "backward pass fails. The derivative is x.clamp(-ctx.delta, ctx.delta), no extra "
            "tensor.",
            code=(
                "import torch\n"
                "class HuberFunction(torch.autograd.Function):\n"
                "    @staticmethod\n"
                "    def forward(ctx, x, delta):\n"
                "        ctx.save_for_backward(x)\n"
                "        ctx.delta = delta\n"
                "        return torch.where(x.abs() <= delta, 0.5 * x ** 2, delta * (x.abs() - 0.5 * delta))\n"
                "    @staticmethod\n"
                "    def backward(ctx, grad_output):\n"
                "        (x,) = ctx.saved_tensors\n"
                "        inside = (x.abs() <= ctx.delta).to(x.dtype)\n"
                "        sign = torch.sign(x) * torch.ones(x.shape, dtype=x.dtype)\n"
                "        return (inside * x + (1 - inside) * ctx.delta * sign) * grad_output, None\n"
            ),
        ),
    ],
    "second_derivative": [
        Mistake(
            name="no-create-graph",
            message="Without create_graph=True the first derivative is a constant and cannot be "
            "differentiated again.",
            code=_second(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (df,) = torch.autograd.grad(f(x).sum(), x)\n"
                "    (d2f,) = torch.autograd.grad(df.sum(), x)\n"
                "    return d2f\n"
            ),
        ),
        Mistake(
            name="first-derivative",
            message="That is f'; differentiate the result once more for f''.",
            code=_second(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (df,) = torch.autograd.grad(f(x).sum(), x)\n"
                "    return df\n"
            ),
        ),
        Mistake(
            name="linear-case-crashes",
            message="For a linear f the first derivative has no graph: return zeros instead of "
            "differentiating it again.",
            code=_second(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (df,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)\n"
                "    (d2f,) = torch.autograd.grad(df.sum(), x)\n"
                "    return d2f\n"
            ),
        ),
        Mistake(
            name="mutates-input",
            message="requires_grad_ on the caller's x changes it for them: work on a detached clone.",
            code=_second(
                "    x.requires_grad_(True)\n"
                "    (df,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (d2f,) = torch.autograd.grad(df.sum(), x)\n"
                "    return d2f\n"
            ),
        ),
        Mistake(
            name="constant-f-crashes",
            message="When f ignores x, f(x) has no graph and the first torch.autograd.grad "
            "fails: check f(x).requires_grad and return zeros.",
            code=_second(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (df,) = torch.autograd.grad(f(x).sum(), x, create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (d2f,) = torch.autograd.grad(df.sum(), x)\n"
                "    return d2f\n"
            ),
        ),
        Mistake(
            name="hessian-diagonal-1d-only",
            message="The diagonal of the full Hessian is f'' only for a 1-D x; for other shapes "
            "differentiate twice with torch.autograd.grad.",
            code=_second(
                "    return torch.autograd.functional.hessian(lambda t: f(t).sum(), x).diagonal()\n"
            ),
        ),
        Mistake(
            name="float32-copy",
            message="x.float() loses float64's precision and dtype: work on "
            "x.detach().clone().requires_grad_(True).",
            code=_second(
                "    x = x.detach().float().requires_grad_(True)\n"
                "    out = f(x).sum()\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (df,) = torch.autograd.grad(out, x, create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (d2f,) = torch.autograd.grad(df.sum(), x)\n"
                "    return d2f\n"
            ),
        ),
        Mistake(
            name="backward-into-callers-leaf",
            message="When the caller's x already requires grad, differentiating it directly "
            "fills its .grad: work on x.detach().clone().requires_grad_(True).",
            code=_second(
                "    t = x if x.requires_grad else x.detach().clone().requires_grad_(True)\n"
                "    out = f(t).sum()\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (df,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    df.sum().backward()\n"
                "    return t.grad.detach().clone()\n"
            ),
        ),
        Mistake(
            name="zeros-on-cpu",
            message="torch.zeros(x.shape, dtype=x.dtype) lands on the CPU whatever x's device: "
            "return torch.zeros_like(x).",
            code=_second(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    out = f(x).sum()\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros(x.shape, dtype=x.dtype)\n"
                "    (df,) = torch.autograd.grad(out, x, create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros(x.shape, dtype=x.dtype)\n"
                "    (d2f,) = torch.autograd.grad(df.sum(), x)\n"
                "    return d2f\n"
            ),
        ),
        Mistake(
            name="flat-view",
            message="x.view(-1) needs contiguous memory; a transposed x has none. "
            "torch.autograd.grad keeps x's shape: there is no need to flatten.",
            code=_second(
                "    t = x.detach().view(-1).clone().requires_grad_(True)\n"
                "    out = f(t).sum()\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (df,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (d2f,) = torch.autograd.grad(df.sum(), t)\n"
                "    return d2f.view(x.shape)\n"
            ),
        ),
        Mistake(
            name="zeros-float32",
            message="torch.zeros(x.shape) is float32 whatever x is: return torch.zeros_like(x).",
            code=_second(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    out = f(x).sum()\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros(x.shape)\n"
                "    (df,) = torch.autograd.grad(out, x, create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros(x.shape)\n"
                "    (d2f,) = torch.autograd.grad(df.sum(), x)\n"
                "    return d2f\n"
            ),
        ),
        Mistake(
            name="grad-outputs-on-cpu",
            message="torch.ones(x.shape) is a float32 CPU tensor: grad_outputs must match x's "
            "dtype and device (torch.ones_like(x)), or reduce with .sum().",
            code=_second(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    out = f(x)\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (df,) = torch.autograd.grad(out, x, torch.ones(x.shape), create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (d2f,) = torch.autograd.grad(df, x, torch.ones(x.shape))\n"
                "    return d2f\n"
            ),
        ),
        Mistake(
            name="linear-case-zeros-on-cpu",
            message="For a linear f it returns torch.zeros(x.shape, dtype=x.dtype), made on the CPU: "
            "return torch.zeros_like(x).",
            code=(
                "import torch\n"
                "def second_derivative(f, x):\n"
                "    t = x.detach().clone().requires_grad_(True)\n"
                "    out = f(t).sum()\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (df,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if not df.requires_grad:  # linear f: the second derivative is 0\n"
                "        return torch.zeros(tuple(x.shape), dtype=x.dtype)\n"
                "    return torch.autograd.grad(df.sum(), t)[0]\n"
            ),
        ),
        Mistake(
            name="result-rebuilt-from-list",
            message="torch.tensor(d2.tolist()) rebuilds the result on the CPU: return the gradient "
            "tensor itself.",
            code=(
                "import torch\n"
                "def second_derivative(f, x):\n"
                "    t = x.detach().clone().requires_grad_(True)\n"
                "    out = f(t).sum()\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (df,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if not df.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    d2 = torch.autograd.grad(df.sum(), t)[0]\n"
                "    return torch.tensor(d2.tolist(), dtype=x.dtype)\n"
            ),
        ),
        Mistake(
            name="nan-mask-made-on-cpu",
            message="torch.isnan(d2.cpu()) is a mask on the CPU: on a GPU, masked_fill refuses it. "
            "torch.nan_to_num(d2) (or a mask from d2 itself) stays on d2's device.",
            code=(
                "import torch\n"
                "def second_derivative(f, x):\n"
                "    t = x.detach().clone().requires_grad_(True)\n"
                "    out = f(t).sum()\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (d1,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if not d1.requires_grad:\n"
                "        return torch.zeros_like(x)\n"
                "    (d2,) = torch.autograd.grad(d1.sum(), t)\n"
                "    return d2.masked_fill(torch.isnan(d2.detach().cpu()), 0.0)\n"
            ),
        ),
    ],
    "hvp": [
        Mistake(
            name="multiply-after",
            message="grad(g.sum()) * v ignores the mixed second derivatives: differentiate "
            "(g * v).sum() instead.",
            code=_hvp(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (g,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
                "    if not g.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (h,) = torch.autograd.grad(g.sum(), x)\n"
                "    return h * v\n"
            ),
        ),
        Mistake(
            name="no-create-graph",
            message="Without create_graph=True the gradient g has no graph to differentiate.",
            code=_hvp(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (g,) = torch.autograd.grad(f(x), x)\n"
                "    (hv,) = torch.autograd.grad((g * v).sum(), x)\n"
                "    return hv\n"
            ),
        ),
        Mistake(
            name="gradient-times-v",
            message="g * v is first-order only; the Hessian needs a second differentiation.",
            code=_hvp(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (g,) = torch.autograd.grad(f(x), x)\n"
                "    return g * v\n"
            ),
        ),
        Mistake(
            name="linear-case-crashes",
            message="For a linear f the gradient has no graph: return zeros instead of "
            "differentiating it again.",
            code=_hvp(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (g,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
                "    (hv,) = torch.autograd.grad((g * v).sum(), x)\n"
                "    return hv\n"
            ),
        ),
        Mistake(
            name="constant-f-crashes",
            message="When f ignores x, f(x) has no graph and the first torch.autograd.grad "
            "fails: check f(x).requires_grad and return zeros.",
            code=_hvp(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    (g,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
                "    if not g.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (hv,) = torch.autograd.grad((g * v).sum(), x)\n"
                "    return hv\n"
            ),
        ),
        Mistake(
            name="zeros-float32",
            message="torch.zeros(x.shape) is float32 whatever x is: return torch.zeros_like(x).",
            code=_hvp(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    out = f(x)\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros(x.shape)\n"
                "    (g,) = torch.autograd.grad(out, x, create_graph=True)\n"
                "    if not g.requires_grad:\n"
                "        return torch.zeros(x.shape)\n"
                "    (hv,) = torch.autograd.grad((g * v).sum(), x)\n"
                "    return hv\n"
            ),
        ),
        Mistake(
            name="full-hessian",
            message="The text asks for H @ v without forming the Hessian (D * D numbers): "
            "differentiate (g * v).sum() instead of calling torch.autograd.functional.hessian.",
            code=(
                "import torch\n"
                "def hvp(f, x, v):\n"
                "    return torch.autograd.functional.hessian(f, x.detach()) @ v\n"
            ),
        ),
        Mistake(
            name="jacobian-of-gradient",
            message="The Jacobian of the gradient is the whole Hessian: the text asks for H @ v "
            "without forming it. Differentiate (g * v).sum() once more instead.",
            code=_hvp(
                "    def gradient(t):\n"
                "        t = t.detach().requires_grad_(True) if not t.requires_grad else t\n"
                "        out = f(t)\n"
                "        if not out.requires_grad:\n"
                "            return torch.zeros_like(t)\n"
                "        return torch.autograd.grad(out, t, create_graph=True)[0]\n"
                "    return torch.autograd.functional.jacobian(gradient, x.detach()) @ v\n"
            ),
        ),
        Mistake(
            name="backward-into-callers-leaf",
            message="When the caller's x already requires grad, differentiating it directly "
            "fills its .grad: work on x.detach().clone().requires_grad_(True).",
            code=_hvp(
                "    t = x if x.requires_grad else x.detach().clone().requires_grad_(True)\n"
                "    out = f(t)\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (g,) = torch.autograd.grad(out, t, create_graph=True)\n"
                "    if not g.requires_grad:\n"
                "        return torch.zeros_like(x).detach()\n"
                "    (g * v).sum().backward()\n"
                "    return t.grad.detach().clone()\n"
            ),
        ),
        Mistake(
            name="zeros-on-cpu",
            message="torch.zeros(x.shape, dtype=x.dtype) lands on the CPU whatever x's device: "
            "return torch.zeros_like(x).",
            code=_hvp(
                "    x = x.detach().clone().requires_grad_(True)\n"
                "    out = f(x)\n"
                "    if not out.requires_grad:\n"
                "        return torch.zeros(x.shape, dtype=x.dtype)\n"
                "    (g,) = torch.autograd.grad(out, x, create_graph=True)\n"
                "    if not g.requires_grad:\n"
                "        return torch.zeros(x.shape, dtype=x.dtype)\n"
                "    (hv,) = torch.autograd.grad((g * v).sum(), x)\n"
                "    return hv\n"
            ),
        ),
        Mistake(
            name="requires-grad-on-caller-then-off",
            message="requires_grad_(False) at the end does not restore a caller's x that required "
            "grad: work on x.detach().clone().requires_grad_(True).",
            code=_hvp(
                "    x.requires_grad_(True)\n"
                "    out = f(x)\n"
                "    hv = torch.zeros_like(x)\n"
                "    if out.requires_grad:\n"
                "        (g,) = torch.autograd.grad(out, x, create_graph=True)\n"
                "        if g.requires_grad:\n"
                "            (hv,) = torch.autograd.grad((g * v).sum(), x)\n"
                "    x.requires_grad_(False)\n"
                "    return hv\n"
            ),
        ),
        Mistake(
            name="finite-difference-of-gradient",
            message="A finite difference of the gradient only approximates H @ v (badly in "
            "float32): differentiate (g * v).sum() exactly, with create_graph=True.",
            code=_hvp(
                "    def grad_at(t):\n"
                "        t = t.detach().clone().requires_grad_(True)\n"
                "        out = f(t)\n"
                "        if not out.requires_grad:\n"
                "            return torch.zeros_like(t)\n"
                "        return torch.autograd.grad(out, t)[0]\n"
                "    eps = 1e-4\n"
                "    return (grad_at(x + eps * v) - grad_at(x - eps * v)) / (2 * eps)\n"
            ),
        ),
        Mistake(
            name="torch-func-hessian",
            message="torch.func.hessian forms the whole Hessian (D * D numbers): the text asks "
            "for H @ v without it. Differentiate (g * v).sum() once more instead.",
            code=(
                "import torch\n"
                "def hvp(f, x, v):\n"
                "    return torch.func.hessian(f)(x.detach()) @ v\n"
            ),
        ),
        Mistake(
            name="cpu-index-in-index-select",
            message="g.index_select(0, torch.arange(D)) gives a GPU index_select a CPU index, which "
            "it refuses: use (g * v).sum() directly.",
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
                "    order = torch.arange(x.shape[0])\n"
                "    gv = g.index_select(0, order) @ v.index_select(0, order)\n"
                "    return torch.autograd.grad(gv, t)[0]\n"
            ),
        ),
        Mistake(
            name="cpu-index-in-scatter",
            message="scatter with a CPU torch.arange index fails on a GPU, and copies the result for "
            "nothing: return the gradient itself.",
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
                "    hv = torch.autograd.grad((g * v).sum(), t)[0]\n"
                "    idx = torch.arange(x.shape[0])\n"
                "    return torch.zeros_like(hv).scatter(0, idx, hv)\n"
            ),
        ),
        Mistake(
            name="reseeds-global-generator",
            message="torch.manual_seed inside a function resets the caller's random numbers: every dropout mask, shuffle and initialisation after the call repeats the same draws. Seed once at the top of a script (or pass a torch.Generator) and leave the global generator alone.",
            code=(
                "import torch\n"
                "def hvp(f, x, v):\n"
                "    torch.manual_seed(0)\n"
                "    return torch.autograd.functional.hvp(f, x.detach().clone(), v)[1]\n"
            ),
        ),
    ],
}

MISTAKES["hvp"] += [
    Mistake(
        name="hessian-row-by-row",
        message="The Hessian was formed one row per differentiation (D backward passes and D * D numbers) and then multiplied by v: the text asks for H @ v without forming H, in two differentiations: grad((g * v).sum(), x).",
        code=(
            "def hvp(f, x, v):\n"
            "    t = x.detach().clone().requires_grad_(True)\n"
            "    y = f(t)\n"
            "    if not y.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    (g,) = torch.autograd.grad(y, t, create_graph=True)\n"
            "    if not g.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    rows = [torch.autograd.grad(g[i], t, retain_graph=True)[0] for i in range(g.shape[0])]\n"
            "    return torch.stack(rows) @ v\n"
        ),
    ),
]

# Red-team round 2: holes found by answers written from the text alone.
MISTAKES["accumulated_grad"] += [
    Mistake(
        name="stale-grad-subtracted",
        message="The stale .grad was kept and subtracted from the result instead of cleared: the "
        "returned gradient is right, but w.grad is left holding the old gradient plus the new "
        "one, and the caller reads w.grad. Clear it first (w.grad = None).",
        code=(
            "import torch\n"
            "def accumulated_grad(loss_fn, w, x, y, micro_size):\n"
            "    old = w.grad.clone() if w.grad is not None else torch.zeros_like(w)\n"
            "    n = x.shape[0]\n"
            "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
            "        (loss_fn(w, xb, yb) * len(xb) / n).backward()\n"
            "    return w.grad - old\n"
        ),
    ),
]

MISTAKES["fit_linear"] += [
    Mistake(
        name="gradients-by-hand",
        message="The gradients were worked out by hand under torch.no_grad() and backward() was "
        "never called: the exercise is gradient descent with autograd (loss.backward(), then "
        "update from w.grad and b.grad).",
        code=(
            "import torch\n"
            "def fit_linear(x, y, lr, num_steps):\n"
            "    n, f = x.shape\n"
            "    w = torch.zeros(f, 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        with torch.no_grad():\n"
            "            r = x @ w + b - y\n"
            "            losses.append((r**2).mean().item())\n"
            "            w -= lr * (2 / n) * x.T @ r\n"
            "            b -= lr * (2 / n) * r.sum(0)\n"
            "    return w, b, losses\n"
        ),
    ),
]

_HUBER_WHERE = (
    "        return torch.where(x.abs() <= delta, 0.5 * x**2, delta * (x.abs() - 0.5 * delta))\n"
)

MISTAKES["HuberFunction"] += [
    Mistake(
        name="saves-a-copy-of-x",
        message="forward saved x.clone() instead of x: twice the memory, and autograd can no "
        "longer tell when the caller's x is changed in place. Save x itself.",
        code=(
            "import torch\n"
            "class HuberFunction(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, delta):\n"
            "        ctx.save_for_backward(x.clone())\n"
            "        ctx.delta = delta\n" + _HUBER_WHERE + "\n" + _HUBER_BACKWARD
        ),
    ),
    Mistake(
        name="x-saved-and-kept-on-ctx",
        message="x was saved with save_for_backward but backward reads it from ctx.x, an "
        "attribute: no check for in-place changes, and x stays alive as long as the graph. "
        "Read it from ctx.saved_tensors.",
        code=(
            "import torch\n"
            "class HuberFunction(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, delta):\n"
            "        ctx.save_for_backward(x)\n"
            "        ctx.x = x\n"
            "        ctx.delta = delta\n" + _HUBER_WHERE + "\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad_output):\n"
            "        return grad_output * ctx.x.clamp(-ctx.delta, ctx.delta), None\n"
        ),
    ),
    Mistake(
        name="delta-saved-as-tensor",
        message="delta was turned into a tensor and saved with save_for_backward instead of "
        "kept as ctx.delta, as the text asks: a Python float goes on ctx as an attribute.",
        code=(
            "import torch\n"
            "class HuberFunction(torch.autograd.Function):\n"
            "    @staticmethod\n"
            "    def forward(ctx, x, delta):\n"
            "        ctx.save_for_backward(x, torch.tensor(delta))\n" + _HUBER_WHERE + "\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad_output):\n"
            "        x, d = ctx.saved_tensors\n"
            "        return grad_output * torch.minimum(torch.maximum(x, -d), d), None\n"
        ),
    ),
    Mistake(
        name="backward-in-float32",
        message="backward computes the gradient in float32 (.float()) and autograd casts it back "
        "to float64: off by about 1e-8. Compute in the dtype of x and grad_output.",
        code=(
            "import torch\n"
            "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad_output):\n"
            "        (x,) = ctx.saved_tensors\n"
            "        return grad_output.float() * x.float().clamp(-ctx.delta, ctx.delta), None\n"
        ),
    ),
    Mistake(
        name="anomaly-switched-on-in-backward",
        message="backward switches anomaly detection on for the rest of the session (a debugging "
        "line left in): every later backward pass of the caller runs slowly. Remove it, or use "
        "`with torch.autograd.set_detect_anomaly(True):` while you debug.",
        code=(
            "import torch\n"
            "class HuberFunction(torch.autograd.Function):\n" + _HUBER_FORWARD + "\n"
            "    @staticmethod\n"
            "    def backward(ctx, grad_output):\n"
            "        torch.autograd.set_detect_anomaly(True)\n"
            "        (x,) = ctx.saved_tensors\n"
            "        return grad_output * x.clamp(-ctx.delta, ctx.delta), None\n"
        ),
    ),
]

MISTAKES["hvp"] += [
    Mistake(
        name="hessian-batched-with-vmap",
        message="The Hessian was formed in one batched call (vmap over the rows of an identity, "
        "D * D numbers) and then multiplied by v: the text asks for H @ v without forming H: "
        "grad((g * v).sum(), x).",
        code=(
            "import torch\n"
            "from torch.func import vmap\n"
            "def hvp(f, x, v):\n"
            "    t = x.detach().clone().requires_grad_(True)\n"
            "    y = f(t)\n"
            "    if not y.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    (g,) = torch.autograd.grad(y, t, create_graph=True)\n"
            "    if not g.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    eye = torch.eye(len(x), dtype=x.dtype, device=x.device)\n"
            "    rows = vmap(lambda e: torch.autograd.grad(g, t, e, retain_graph=True)[0])(eye)\n"
            "    return rows @ v\n"
        ),
    ),
]

MISTAKES["round_ste"] += [
    Mistake(
        name="rounds-a-float32-copy",
        message="The rounding is done on a float32 copy and cast back: a float64 value just "
        "beside a tie (1.5 - 1e-9) becomes the tie in float32 and rounds the wrong way. Round x "
        "in its own dtype: x + (x.round() - x).detach().",
        code=(
            "def round_ste(x):\n"
            "    r = x.detach().float().round().to(x.dtype)\n"
            "    return x + (r - x).detach()\n"
        ),
    ),
]

MISTAKES["mse_grads"] += [
    Mistake(
        name="float64-working-copy",
        message="The gradients are computed on float64 copies and cast back: the text asks you "
        "to compute in the inputs' dtype. Leave x, y, w and b as they are.",
        code=(
            "def mse_grads(x, y, w, b):\n"
            "    xd, yd, wd, bd = x.double(), y.double(), w.double(), b.double()\n"
            "    r = xd @ wd + bd - yd\n"
            "    n = x.shape[0]\n"
            "    return ((2 / n) * xd.T @ r).to(x.dtype), ((2 / n) * r.sum(dim=0)).to(x.dtype)\n"
        ),
    ),
]

MISTAKES["hvp"] += [
    Mistake(
        name="float32-copy-of-v",
        message="v is multiplied in as a float32 copy (v.float()): in float64 the result is only "
        "close to H @ v. Compute in x's dtype: (g * v).sum().",
        code=(
            "def hvp(f, x, v):\n"
            "    t = x.detach().clone().requires_grad_(True)\n"
            "    y = f(t)\n"
            "    if not y.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    (g,) = torch.autograd.grad(y, t, create_graph=True)\n"
            "    if not g.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    return torch.autograd.grad((g * v.float()).sum(), t)[0]\n"
        ),
    ),
]

# Red-team round 3: holes found by answers written from the text alone.
MISTAKES["fit_linear"] += [
    Mistake(
        name="stops-early-when-converged",
        message="The loop stopped once the loss was tiny, so fewer than num_steps losses came "
        "back: the text asks for num_steps steps and one loss per step, whatever the loss. Run "
        "every step.",
        code=(
            "import torch\n"
            "def fit_linear(x, y, lr, num_steps):\n"
            "    w = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        loss = ((x @ w + b - y) ** 2).mean()\n"
            "        losses.append(loss.item())\n"
            "        if loss.item() < 1e-10:  # converged\n"
            "            break\n"
            "        loss.backward()\n"
            "        with torch.no_grad():\n"
            "            w -= lr * w.grad\n"
            "            b -= lr * b.grad\n"
            "        w.grad.zero_()\n"
            "        b.grad.zero_()\n"
            "    return w, b, losses\n"
        ),
    ),
    Mistake(
        name="loss-read-in-float32",
        message="Each loss was read through a float32 copy (loss.float().item()): for float64 "
        "inputs it is only close to the loss. Append loss.item(), which keeps the loss's dtype.",
        code=_fit_linear(_NO_GRAD_UPDATE).replace("loss.item()", "loss.detach().float().item()"),
    ),
    Mistake(
        name="grad-mode-switched-on-at-end",
        message="torch.set_grad_enabled(False) for the update and torch.set_grad_enabled(True) "
        "at the end: called inside the caller's torch.no_grad() block, it switches autograd on "
        "for the rest of that block. Update inside a with torch.no_grad(): block, which puts "
        "back what it found.",
        code=(
            "import torch\n"
            "def fit_linear(x, y, lr, num_steps):\n"
            "    w = torch.zeros(x.shape[1], 1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    b = torch.zeros(1, dtype=x.dtype, device=x.device, requires_grad=True)\n"
            "    losses = []\n"
            "    for _ in range(num_steps):\n"
            "        torch.set_grad_enabled(True)\n"
            "        loss = ((x @ w + b - y) ** 2).mean()\n"
            "        losses.append(loss.item())\n"
            "        loss.backward()\n"
            "        torch.set_grad_enabled(False)\n"
            "        w -= lr * w.grad\n"
            "        b -= lr * b.grad\n"
            "        w.grad.zero_()\n"
            "        b.grad.zero_()\n"
            "    torch.set_grad_enabled(True)\n"
            "    return w, b, losses\n"
        ),
    ),
]

MISTAKES["accumulated_grad"] += [
    Mistake(
        name="grad-zeros-made-on-cpu",
        message="w.grad was cleared with torch.zeros(w.shape, dtype=w.dtype), which lands on the "
        "CPU: on a GPU, backward() cannot add into it. Clear it with w.grad = None (or "
        "torch.zeros_like(w)).",
        code=_accumulated(
            "    w.grad = torch.zeros(w.shape, dtype=w.dtype)\n"
            "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
            "        (loss_fn(w, xb, yb) * (len(xb) / n)).backward()\n"
        ),
    ),
    Mistake(
        name="scale-tensor-on-cpu",
        message="The scale torch.tensor([len(xb) / n]) is a one-element tensor on the CPU: on a "
        "GPU, multiplying the loss by it fails. len(xb) / n is a Python number: multiply by it "
        "directly.",
        code=_accumulated(
            "    w.grad = None\n"
            "    for xb, yb in zip(x.split(micro_size), y.split(micro_size)):\n"
            "        scale = torch.tensor([len(xb) / n], dtype=x.dtype)\n"
            "        (loss_fn(w, xb, yb) * scale).sum().backward()\n"
        ),
    ),
]

MISTAKES["round_ste"] += [
    Mistake(
        name="grad-mode-switched-on-at-end",
        message="The correction was computed between torch.set_grad_enabled(False) and "
        "torch.set_grad_enabled(True): called inside the caller's torch.no_grad() block (quantised "
        "inference), it switches autograd on for the rest of that block. Use .detach() (or a with "
        "torch.no_grad(): block, which puts back what it found).",
        code=(
            "import torch\n"
            "def round_ste(x):\n"
            "    torch.set_grad_enabled(False)\n"
            "    correction = x.round() - x\n"
            "    torch.set_grad_enabled(True)\n"
            "    return x + correction\n"
        ),
    ),
    Mistake(
        name="rounds-through-int64",
        message="The rounded values went through .long() and back: beyond int64 (about 9.2e18) "
        "they overflow, where torch.round leaves a whole number as it is. Round in x's own "
        "dtype: x + (x.round() - x).detach().",
        code=(
            "import torch\n"
            "def round_ste(x):\n"
            "    return x + (x.round().long().to(x.dtype) - x).detach()\n"
        ),
    ),
]

_SECOND_BODY = (
    "    y = f(t)\n"
    "    if not y.requires_grad:\n"
    "        return torch.zeros_like(x)\n"
    "    (g,) = torch.autograd.grad(y.sum(), t, create_graph=True)\n"
    "    if not g.requires_grad:\n"
    "        return torch.zeros_like(x)\n"
)

MISTAKES["second_derivative"] += [
    Mistake(
        name="callers-grad-cleared",
        message="When the caller's x is a leaf that requires grad, the answer differentiates x "
        "itself with backward() and then sets x.grad = None: a gradient the caller had there is "
        "gone. Work on x.detach().clone().requires_grad_(True) and use torch.autograd.grad.",
        code=(
            "import torch\n"
            "def second_derivative(f, x):\n"
            "    t = x if x.requires_grad else x.detach().clone().requires_grad_(True)\n"
            "    y = f(t)\n"
            "    if not y.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    y.sum().backward(create_graph=True)\n"
            "    g = t.grad\n"
            "    t.grad = None\n"
            "    if not g.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    return torch.autograd.grad(g.sum(), t)[0]\n"
        ),
    ),
    Mistake(
        name="last-grad-keeps-graph",
        message="The second torch.autograd.grad also has create_graph=True: the result requires "
        "grad and keeps both graphs alive as long as the caller holds it. Only the first call "
        "needs create_graph=True.",
        code=(
            "import torch\n"
            "def second_derivative(f, x):\n"
            "    t = x.detach().clone().requires_grad_(True)\n"
            + _SECOND_BODY
            + "    return torch.autograd.grad(g.sum(), t, create_graph=True)[0]\n"
        ),
    ),
]

MISTAKES["hvp"] += [
    Mistake(
        name="last-grad-keeps-graph",
        message="The second torch.autograd.grad also has create_graph=True: the result requires "
        "grad and keeps both graphs alive as long as the caller holds it. Only the first call "
        "needs create_graph=True.",
        code=(
            "import torch\n"
            "def hvp(f, x, v):\n"
            "    t = x.detach().clone().requires_grad_(True)\n"
            "    y = f(t)\n"
            "    if not y.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    (g,) = torch.autograd.grad(y, t, create_graph=True)\n"
            "    if not g.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    return torch.autograd.grad((g * v).sum(), t, create_graph=True)[0]\n"
        ),
    ),
    Mistake(
        name="callers-grad-cleared",
        message="When the caller's x is a leaf that requires grad, the answer runs backward() "
        "into x itself and then sets x.grad = None: a gradient the caller had there is gone. Work "
        "on x.detach().clone().requires_grad_(True) and use torch.autograd.grad.",
        code=(
            "import torch\n"
            "def hvp(f, x, v):\n"
            "    t = x if x.requires_grad else x.detach().clone().requires_grad_(True)\n"
            "    y = f(t)\n"
            "    if not y.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    (g,) = torch.autograd.grad(y, t, create_graph=True)\n"
            "    if not g.requires_grad:\n"
            "        return torch.zeros_like(x)\n"
            "    (g * v).sum().backward()\n"
            "    hv = t.grad.detach().clone()\n"
            "    t.grad = None\n"
            "    return hv\n"
        ),
    ),
]

MISTAKES["mse_grads"] += [
    Mistake(
        name="forward-mode-dual-numbers",
        message="The gradients came from forward-mode autograd (dual numbers, one tangent per "
        "parameter entry), which works under torch.no_grad() but is still autograd: the text "
        "asks for them by hand. grad_w = (2 / N) * x.T @ r, grad_b = (2 / N) * r.sum(dim=0).",
        code=(
            "import torch\n"
            "import torch.autograd.forward_ad as fwAD\n"
            "def mse_grads(x, y, w, b):\n"
            "    def loss(w_, b_):\n"
            "        return ((x @ w_ + b_ - y) ** 2).mean()\n"
            "    grad_w = torch.zeros_like(w)\n"
            "    with fwAD.dual_level():\n"
            "        for i in range(w.shape[0]):\n"
            "            t = torch.zeros_like(w)\n"
            "            t[i, 0] = 1\n"
            "            grad_w[i, 0] = fwAD.unpack_dual(loss(fwAD.make_dual(w, t), b)).tangent\n"
            "        dual_b = fwAD.make_dual(b, torch.ones_like(b))\n"
            "        grad_b = fwAD.unpack_dual(loss(w, dual_b)).tangent.reshape(1)\n"
            "    return grad_w, grad_b\n"
        ),
    ),
]
