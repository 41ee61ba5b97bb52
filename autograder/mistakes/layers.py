"""Plausible wrong answers for 04_layers' exercises."""

from autograder.mistakes import Mistake

_CONV = """import math
def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):
    span = {span}
{check}    return {formula}
"""
_FITS = "    if size + 2 * padding < span:\n        raise ValueError('the kernel does not fit')\n"


def _conv(span="dilation * (kernel_size - 1) + 1", check=_FITS, formula=None):
    formula = formula or "(size + 2 * padding - span) // stride + 1"
    return _CONV.format(span=span, check=check, formula=formula)


_BN = """def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):
    dims = {dims}
    shape = [1, -1] + [1] * (x.ndim - 2)
    if training{eval_too}:
        mean = x.mean(dim=dims)
        var = x.var(dim=dims, correction={correction})
        n = x.numel() // x.shape[1]
{update}
    else:
        mean, var = running_mean, running_var
        new_mean, new_var = running_mean.clone(), running_var.clone()
    y = (x - mean.view(shape)) / {denominator}
    {affine}
    return y, new_mean, new_var
"""
_BN_UPDATE = (
    "        new_mean = (1 - momentum) * running_mean + momentum * mean.detach()\n"
    "        new_var = (1 - momentum) * running_var + momentum * x.var(dim=dims).detach()"
)
_BN_AFFINE = (
    "if weight is not None:\n        y = y * weight.view(shape)\n"
    "    if bias is not None:\n        y = y + bias.view(shape)"
)


def _bn(**parts):
    defaults = {
        "dims": "[d for d in range(x.ndim) if d != 1]",
        "eval_too": "",
        "correction": 0,
        "update": _BN_UPDATE,
        "denominator": "torch.sqrt(var.view(shape) + eps)",
        "affine": _BN_AFFINE,
    }
    return _BN.format(**(defaults | parts))


_ENCODER = """def encoder_layer_forward(layer, x):
    attn = layer.self_attn
    b, t, c = x.shape
    h = {heads}

    def self_attention(z):
        q, k, v = F.linear(z, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)
        q, k, v = (y.reshape(b, t, h, c // h).transpose(1, 2) for y in (q, k, v))
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt({scale}), dim=-1)
        return attn.out_proj((weights @ v).transpose(1, 2).reshape(b, t, c))

    def feed_forward(z):
        return layer.linear2({activation}(layer.linear1(z)))

{prelude}    if {pre_norm}:
        x = x + self_attention(layer.norm1(x))
        return x + feed_forward(layer.norm2(x))
    x = layer.norm1({attn_residual}self_attention(x))
    return {final}
"""


_ENCODER_ATTENTION = """        q, k, v = F.linear(z, attn.in_proj_weight, attn.in_proj_bias).chunk(3, dim=-1)
        q, k, v = (y.reshape(b, t, h, c // h).transpose(1, 2) for y in (q, k, v))
        weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt({scale}), dim=-1)
        return attn.out_proj((weights @ v).transpose(1, 2).reshape(b, t, c))
""".format(scale="c // h")


def _encoder(**parts):
    defaults = {
        "heads": "attn.num_heads",
        "scale": "c // h",
        "activation": "layer.activation",
        "prelude": "",
        "pre_norm": "layer.norm_first",
        "attn_residual": "x + ",
        "final": "layer.norm2(x + feed_forward(x))",
    }
    return _ENCODER.format(**(defaults | parts))


MISTAKES = {
    "conv_output_size": [
        Mistake(
            name="true-division",
            message="Sizes are ints: (size + 2*padding - span) / stride is a float. Floor it "
            "with // before adding 1.",
            code=_conv(formula="(size + 2 * padding - span) / stride + 1"),
        ),
        Mistake(
            name="rounded-not-floored",
            message="A position that only partly fits is no output: floor the division "
            "(// stride), do not round it.",
            code=_conv(formula="round((size + 2 * padding - span) / stride) + 1"),
        ),
        Mistake(
            name="dilation-ignored",
            message="A kernel of k taps spread `dilation` apart spans dilation*(k - 1) + 1 "
            "input positions, not k.",
            code=_conv(span="kernel_size"),
        ),
        Mistake(
            name="padding-on-one-side",
            message="padding adds zeros at both ends of the axis: size + 2 * padding.",
            code=_conv(check="", formula="(size + padding - span) // stride + 1"),
        ),
        Mistake(
            name="no-error-when-the-kernel-does-not-fit",
            message="When the dilated kernel is wider than the padded input there is no output "
            "position at all: raise ValueError instead of returning 0 or a negative size.",
            code=_conv(check=""),
        ),
        Mistake(
            name="fit-checked-without-padding",
            message="The kernel has to fit in the padded input: compare its span with "
            "size + 2 * padding, not with size.",
            code=_conv(
                check="    if size < span:\n        raise ValueError('the kernel does not fit')\n"
            ),
        ),
        Mistake(
            name="returns-a-tensor",
            message="Sizes are Python ints: torch.div(..., rounding_mode='floor') returns a tensor; use // on ints.",
            code="def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):\n    span = dilation * (kernel_size - 1) + 1\n    if size + 2 * padding < span:\n        raise ValueError('the kernel does not fit')\n    return torch.div(torch.tensor(size + 2 * padding - span), stride, rounding_mode='floor') + 1\n",
        ),
        Mistake(
            name="fit-checked-after-truncating",
            message="int() truncates towards zero: a negative (size + 2*padding - span) / stride "
            "above -1 becomes 0 and the size 1. Check that the span fits before dividing.",
            code=(
                "def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):\n"
                "    out = int((size + 2 * padding - dilation * (kernel_size - 1) - 1) / stride) + 1\n"
                "    if out < 1:\n"
                "        raise ValueError('the kernel does not fit')\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="exact-fit-rejected",
            message="A kernel that spans exactly the padded input fits once: raise only when "
            "its span is larger.",
            code=_conv(
                check="    if size + 2 * padding <= span:\n        raise ValueError('too big')\n"
            ),
        ),
        Mistake(
            name="fit-checked-without-dilation",
            message="The dilated kernel spans dilation*(k - 1) + 1 positions: check that span, "
            "not kernel_size.",
            code=_conv(
                check="    if size + 2 * padding < kernel_size:\n        raise ValueError('too big')\n"
            ),
        ),
        Mistake(
            name="assert-instead-of-value-error",
            message="An assert raises AssertionError (and disappears under python -O): raise ValueError "
            "when the kernel does not fit.",
            code=(
                "def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):\n"
                "    span = dilation * (kernel_size - 1) + 1\n"
                '    assert size + 2 * padding >= span, "the kernel does not fit"\n'
                "    return (size + 2 * padding - span) // stride + 1\n"
            ),
        ),
        Mistake(
            name="numpy-integer",
            message="np.floor_divide returns a NumPy int64, not a Python int: use // on the ints "
            "themselves.",
            code=(
                "import numpy as np\n"
                "def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):\n"
                "    span = dilation * (kernel_size - 1) + 1\n"
                "    if size + 2 * padding < span:\n"
                '        raise ValueError("the kernel does not fit")\n'
                "    return np.floor_divide(size + 2 * padding - span, stride) + 1\n"
            ),
        ),
        Mistake(
            name="zero-outputs-allowed",
            message="An output of 0 positions means the kernel does not fit: raise ValueError when the "
            "count is below 1, not only when it is negative.",
            code=(
                "def conv_output_size(size, kernel_size, stride=1, padding=0, dilation=1):\n"
                "    out = (size + 2 * padding - dilation * (kernel_size - 1) - 1) // stride + 1\n"
                "    if out < 0:\n"
                '        raise ValueError(f"the kernel does not fit in {size} positions")\n'
                "    return out\n"
            ),
        ),
        Mistake(
            name="stride-wider-than-input-refused",
            message="A stride wider than the padded input still gives one output position (the "
            "first window): raise ValueError only when the dilated kernel does not fit.",
            code=_conv(
                check="    if size + 2 * padding < span or stride > size + 2 * padding:\n"
                "        raise ValueError('the stride is wider than the input')\n"
            ),
        ),
        Mistake(
            name="padding-wider-than-half-the-kernel-refused",
            message="A convolution takes any padding (pooling layers are the ones that refuse "
            "more than half the kernel): raise ValueError only when the dilated kernel does "
            "not fit.",
            code=_conv(
                check="    if size + 2 * padding < span or padding > kernel_size // 2:\n"
                "        raise ValueError('padding should be at most half the kernel size')\n"
            ),
        ),
    ],
    "receptive_field": [
        Mistake(
            name="strides-ignored",
            message="After a stride-s layer, one step of the next layer covers s input "
            "positions: multiply each (kernel_size - 1) by the product of the earlier strides.",
            code=("def receptive_field(layers):\n    return 1 + sum(k - 1 for k, s in layers)\n"),
        ),
        Mistake(
            name="own-stride-counted",
            message="A layer's own stride does not widen its own field; it only makes the "
            "layers after it step further. Add (k - 1) * jump first, then multiply jump by s.",
            code=(
                "def receptive_field(layers):\n"
                "    field, jump = 1, 1\n"
                "    for k, s in layers:\n"
                "        jump *= s\n"
                "        field += (k - 1) * jump\n"
                "    return field\n"
            ),
        ),
        Mistake(
            name="only-the-previous-stride",
            message="The step of a layer is the product of ALL the strides before it, not just "
            "the previous layer's: two stride-2 layers make the next one step 4 inputs.",
            code=(
                "def receptive_field(layers):\n"
                "    field, previous = 1, 1\n"
                "    for k, s in layers:\n"
                "        field += (k - 1) * previous\n"
                "        previous = s\n"
                "    return field\n"
            ),
        ),
        Mistake(
            name="pops-the-callers-list",
            message="Popping the layers empties the caller's list: iterate over it instead.",
            code=(
                "def receptive_field(layers):\n"
                "    field, jump = 1, 1\n"
                "    while layers:\n"
                "        k, s = layers.pop(0)\n"
                "        field += (k - 1) * jump\n"
                "        jump *= s\n"
                "    return field\n"
            ),
        ),
        Mistake(
            name="stride-times-kernel",
            message="Each layer adds (kernel_size - 1) positions times the step of its input, "
            "the product of the earlier strides; its own stride does not enter.",
            code=(
                "def receptive_field(layers):\n    return 1 + sum((k - 1) * s for k, s in layers)\n"
            ),
        ),
        Mistake(
            name="empty-stack-gives-zero",
            message="An empty stack is the input itself: one output position reads one input position, so its field is 1, not 0.",
            code="def receptive_field(layers):\n    if not layers:\n        return 0\n    field, jump = 1, 1\n    for k, s in layers:\n        field += (k - 1) * jump\n        jump *= s\n    return field\n",
        ),
        Mistake(
            name="reverses-the-callers-list",
            message="layers.reverse() turns the caller's list around: walk it with reversed(layers) instead.",
            code="def receptive_field(layers):\n    layers.reverse()\n    field = 1\n    for k, s in layers:\n        field = (field - 1) * s + k\n    return field\n",
        ),
        Mistake(
            name="sentinel-appended-to-the-empty-list",
            message="Appending a (1, 1) layer to an empty list changes the caller's list: return 1 for an "
            "empty stack instead.",
            code=(
                "def receptive_field(layers):\n"
                "    if not layers:\n"
                "        layers.append((1, 1))\n"
                "    field, jump = 1, 1\n"
                "    for k, s in layers:\n"
                "        field += (k - 1) * jump\n"
                "        jump *= s\n"
                "    return field\n"
            ),
        ),
        Mistake(
            name="float-jump",
            message="A jump that starts as 1.0 makes the field a float: keep it an int (start at 1).",
            code=(
                "def receptive_field(layers):\n"
                "    field, jump = 1, 1.0\n"
                "    for k, s in layers:\n"
                "        field += (k - 1) * jump\n"
                "        jump *= s\n"
                "    return int(field) if field == 1 else field\n"
            ),
        ),
        Mistake(
            name="strides-capped-at-two",
            message="Every earlier stride multiplies the jump in full, a stride of 3 included.",
            code=(
                "def receptive_field(layers):\n"
                "    field, jump = 1, 1\n"
                "    for k, s in layers:\n"
                "        field += (k - 1) * jump\n"
                "        jump *= min(s, 2)\n"
                "    return field\n"
            ),
        ),
    ],
    "batch_norm": [
        Mistake(
            name="unbiased-variance-to-normalise",
            message="BatchNorm normalises with the batch's biased variance (correction=0, divide "
            "by the count); only the running variance is updated with the unbiased one.",
            code=_bn(correction=1),
        ),
        Mistake(
            name="momentum-reversed",
            message="momentum is the weight of the NEW batch statistic: running = "
            "(1 - momentum) * running + momentum * batch.",
            code=_bn(
                update="        new_mean = momentum * running_mean + (1 - momentum) * mean\n"
                "        new_var = momentum * running_var + (1 - momentum) * x.var(dim=dims)"
            ),
        ),
        Mistake(
            name="statistics-over-the-batch-axis-only",
            message="For (N, C, H, W) inputs a channel's statistics run over N, H and W: every "
            "axis but axis 1, not axis 0 alone.",
            code=_bn(dims="[0]"),
        ),
        Mistake(
            name="batch-statistics-in-eval-mode",
            message="In evaluation BatchNorm uses its running statistics, not the batch's: that "
            "is what makes a prediction independent of its batch-mates.",
            code=_bn(eval_too=" or True"),
        ),
        Mistake(
            name="running-statistics-updated-in-place",
            message="The function changed the caller's running_mean/running_var in place. "
            "Return new tensors and leave the arguments as they were.",
            code=_bn(
                update="        running_mean.mul_(1 - momentum).add_(momentum * mean.detach())\n"
                "        running_var.mul_(1 - momentum).add_(momentum * x.var(dim=dims).detach())\n"
                "        new_mean, new_var = running_mean, running_var"
            ),
        ),
        Mistake(
            name="eps-outside-the-square-root",
            message="eps goes inside the square root: (x - mean) / sqrt(var + eps). With the "
            "default eps the difference hides; with a large eps it does not.",
            code=_bn(denominator="(torch.sqrt(var.view(shape)) + eps)"),
        ),
        Mistake(
            name="weight-and-bias-assumed",
            message="weight and bias may be None (a BatchNorm without affine=True): apply each "
            "only when it is given.",
            code=_bn(affine="y = y * weight.view(shape) + bias.view(shape)"),
        ),
        Mistake(
            name="float32-working-copy",
            message="Keep the input's dtype: a float32 copy of float64 inputs loses precision "
            "and returns the wrong dtype.",
            code=_bn(dims="[d for d in range(x.ndim) if d != 1]\n    x = x.float()"),
        ),
        Mistake(
            name="library-batch-norm",
            message="The exercise is BatchNorm by hand: F.batch_norm (here on copies of the "
            "running statistics) is what you check against, not what you call.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training,\n"
                "               momentum=0.1, eps=1e-5):\n"
                "    mean, var = running_mean.clone(), running_var.clone()\n"
                "    y = F.batch_norm(x, mean, var, weight, bias, training, momentum, eps)\n"
                "    return y, mean, var\n"
            ),
        ),
        Mistake(
            name="batch-norm-layer",
            message="An nn.BatchNorm layer is F.batch_norm inside: the exercise asks for the "
            "statistics and the normalisation written out.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training,\n"
                "               momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    layer = torch.nn.BatchNorm1d(c, eps=eps, momentum=momentum,\n"
                "                                 affine=weight is not None).to(x)\n"
                "    with torch.no_grad():\n"
                "        layer.running_mean.copy_(running_mean)\n"
                "        layer.running_var.copy_(running_var)\n"
                "        if weight is not None:\n"
                "            layer.weight.copy_(weight)\n"
                "            layer.bias.copy_(bias)\n"
                "    layer.train(training)\n"
                "    flat = x.reshape(x.shape[0], c, -1) if x.ndim > 2 else x\n"
                "    y = layer(flat).reshape(x.shape)\n"
                "    return y, layer.running_mean.clone(), layer.running_var.clone()\n"
            ),
        ),
        Mistake(
            name="running-statistics-not-detached",
            message="The running statistics are buffers: update them from the detached batch "
            "statistics, so they carry no graph.",
            code=_bn(update=_BN_UPDATE.replace(".detach()", "")),
        ),
        Mistake(
            name="running-variance-biased",
            message="The running variance is updated with the unbiased batch variance "
            "(divide by the count minus one).",
            code=_bn(update=_BN_UPDATE.replace("x.var(dim=dims)", "var")),
        ),
        Mistake(
            name="eval-returns-the-callers-tensors",
            message="Return new running statistics in eval mode too (clones), never the "
            "caller's own tensors.",
            code=_bn().replace(
                "running_mean.clone(), running_var.clone()", "running_mean, running_var"
            ),
        ),
        Mistake(
            name="instance-norm-on-the-channels",
            message="F.instance_norm on x reshaped to (1, C, everything else) is F.batch_norm under another"
            " name (it even updates the running statistics): the exercise is BatchNorm by hand.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    flat = x.transpose(0, 1).reshape(1, c, -1)\n"
                "    y = F.instance_norm(flat, new_mean, new_var, weight, bias, use_input_stats=training,\n"
                "                        momentum=momentum, eps=eps)\n"
                "    return y.reshape(c, x.shape[0], *x.shape[2:]).transpose(0, 1), new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="instance-norm-layer",
            message="nn.InstanceNorm1d with track_running_stats is a library normalisation (F.instance_norm"
            " inside), not BatchNorm written out.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    norm = nn.InstanceNorm1d(c, eps=eps, momentum=momentum, affine=False, track_running_stats=True).to(x)\n"
                "    norm.running_mean.copy_(running_mean); norm.running_var.copy_(running_var)\n"
                "    norm.train(training)\n"
                "    y = norm(x.transpose(0, 1).reshape(1, c, -1)).reshape(c, x.shape[0], *x.shape[2:]).transpose(0, 1)\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, norm.running_mean.clone(), norm.running_var.clone()\n"
            ),
        ),
        Mistake(
            name="group-norm-in-training",
            message="F.group_norm with one group per channel, on x reshaped to (1, C, everything else), "
            "normalises for you: write the mean and the biased variance out.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if training:\n"
                "        flat = x.transpose(0, 1).reshape(1, c, -1)\n"
                "        y = F.group_norm(flat, c, None, None, eps).reshape(c, x.shape[0], *x.shape[2:]).transpose(0, 1)\n"
                "        mean = x.mean(dims).detach()\n"
                "        var = x.var(dims).detach()\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean\n"
                "        new_var = (1 - momentum) * running_var + momentum * var\n"
                "    else:\n"
                "        y = (x - running_mean.view(shape)) / torch.sqrt(running_var.view(shape) + eps)\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="layer-norm-per-channel",
            message="F.layer_norm over each channel's values is a library normalisation: write the mean and"
            " the biased variance out.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if training:\n"
                "        flat = x.transpose(0, 1).reshape(1, c, -1)\n"
                "        y = F.layer_norm(flat[0], flat.shape[-1:], None, None, eps).reshape(c, x.shape[0], *x.shape[2:]).transpose(0, 1)\n"
                "        mean = x.mean(dims).detach()\n"
                "        var = x.var(dims).detach()\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean\n"
                "        new_var = (1 - momentum) * running_var + momentum * var\n"
                "    else:\n"
                "        y = (x - running_mean.view(shape)) / torch.sqrt(running_var.view(shape) + eps)\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="private-native-batch-norm",
            message="torch._native_batch_norm_legit is F.batch_norm's kernel: the exercise is BatchNorm by "
            "hand.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = torch._native_batch_norm_legit(x, weight, bias, new_mean, new_var, training, momentum, eps)[0]\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="private-batch-norm-impl-index",
            message="torch._batch_norm_impl_index is F.batch_norm's kernel: the exercise is BatchNorm by "
            "hand.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = torch._batch_norm_impl_index(x, weight, bias, new_mean, new_var, training, momentum, eps, False)[0]\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="aten-batch-norm-operator",
            message="torch.ops.aten.batch_norm is F.batch_norm reached as an operator: the exercise is "
            "BatchNorm by hand.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = torch.ops.aten.batch_norm(x, weight, bias, new_mean, new_var, training, momentum, eps, False)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="aten-native-batch-norm-overload",
            message="torch.ops.aten.native_batch_norm.default is F.batch_norm's kernel reached as an "
            "operator: the exercise is BatchNorm by hand.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = torch.ops.aten.native_batch_norm.default(x, weight, bias, new_mean, new_var, training, momentum, eps)[0]\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="bias-assumed-with-the-weight",
            message="weight and bias may each be None on its own: add the bias under its own test.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if training:\n"
                "        mean = x.mean(dim=dims)\n"
                "        var = x.var(dim=dims, correction=0)\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean.detach()\n"
                "        new_var = (1 - momentum) * running_var + momentum * x.var(dim=dims).detach()\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape) + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="weight-assumed-with-the-bias",
            message="weight and bias may each be None on its own: scale under weight's own test, shift "
            "under bias's.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if training:\n"
                "        mean = x.mean(dim=dims)\n"
                "        var = x.var(dim=dims, correction=0)\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean.detach()\n"
                "        new_var = (1 - momentum) * running_var + momentum * x.var(dim=dims).detach()\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)\n"
                "    if bias is not None:\n"
                "        y = y * weight.view(shape) + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="batch-statistics-under-no-grad",
            message="The batch mean and variance are part of y's computation: computed under "
            "torch.no_grad(), x gets the wrong gradient. Detach only what updates the running "
            "statistics.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if training:\n"
                "        with torch.no_grad():\n"
                "            mean = x.mean(dim=dims)\n"
                "            var = x.var(dim=dims, correction=0)\n"
                "            new_mean = (1 - momentum) * running_mean + momentum * mean\n"
                "            new_var = (1 - momentum) * running_var + momentum * x.var(dim=dims)\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="unbiased-count-from-the-batch-axis",
            message="The count behind the unbiased variance is every value of a channel, N * H * W, not N.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if training:\n"
                "        mean = x.mean(dim=dims)\n"
                "        var = x.var(dim=dims, correction=0)\n"
                "        n = x.shape[0]\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean.detach()\n"
                "        new_var = (1 - momentum) * running_var + momentum * (var * n / max(n - 1, 1)).detach()\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="default-dtype-switched",
            message="torch.set_default_dtype changes the whole process and stays switched: compute in x's "
            "dtype without it.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    torch.set_default_dtype(x.dtype)\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if training:\n"
                "        mean = x.mean(dim=dims)\n"
                "        var = x.var(dim=dims, correction=0)\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean.detach()\n"
                "        new_var = (1 - momentum) * running_var + momentum * x.var(dim=dims).detach()\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="eval-returns-detached-views",
            message="running_mean.detach() and running_var[:] share the caller's memory: return clones.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if training:\n"
                "        mean = x.mean(dim=dims)\n"
                "        var = x.var(dim=dims, correction=0)\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean.detach()\n"
                "        new_var = (1 - momentum) * running_var + momentum * x.var(dim=dims).detach()\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.detach(), running_var[:]\n"
                "    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="scripted-batch-norm-layer",
            message="An nn.BatchNorm1d compiled by torch.jit.script still runs F.batch_norm's kernel: the "
            "exercise is BatchNorm by hand.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    layer = torch.nn.BatchNorm1d(c, eps=eps, momentum=momentum, affine=False).to(x)\n"
                "    layer.running_mean.copy_(running_mean)\n"
                "    layer.running_var.copy_(running_var)\n"
                "    layer.train(training)\n"
                "    scripted = torch.jit.script(layer)\n"
                "    y = scripted(x.reshape(x.shape[0], c, -1) if x.ndim > 2 else x).reshape(x.shape)\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, scripted.running_mean.clone(), scripted.running_var.clone()\n"
            ),
        ),
        Mistake(
            name="library-running-statistics",
            message="torch.batch_norm_update_stats is the library's BatchNorm updating the running "
            "statistics for you: move them by momentum yourself, with the unbiased batch variance.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    if training:\n"
                "        mean = x.mean(dim=dims)\n"
                "        var = x.var(dim=dims, correction=0)\n"
                "        torch.batch_norm_update_stats(x.detach(), new_mean, new_var, momentum)\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)\n"
                "    if weight is not None:\n"
                "        y = y * weight.view(shape)\n"
                "    if bias is not None:\n"
                "        y = y + bias.view(shape)\n"
                "    return y, new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="rms-norm-of-the-centred-channels",
            message="F.rms_norm of each channel's centred values divides by sqrt(var + eps) for you: a "
            "library normalisation, not BatchNorm by hand.",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    per_channel = x.transpose(0, 1).reshape(c, -1)\n"
                "    n = per_channel.shape[1]\n"
                "    if training:\n"
                "        mean = per_channel.mean(1)\n"
                "        y = F.rms_norm(per_channel - mean[:, None], (n,), eps=eps)\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean.detach()\n"
                "        new_var = (1 - momentum) * running_var + momentum * per_channel.var(1).detach()\n"
                "    else:\n"
                "        y = (per_channel - running_mean[:, None]) / torch.sqrt(running_var[:, None] + eps)\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    if weight is not None:\n"
                "        y = y * weight[:, None]\n"
                "    if bias is not None:\n"
                "        y = y + bias[:, None]\n"
                "    return y.reshape(c, x.shape[0], *x.shape[2:]).transpose(0, 1), new_mean, new_var\n"
            ),
        ),
        Mistake(
            name="default-weight-made-on-the-cpu",
            message="torch.ones(c) for a missing weight lands on the CPU: on a GPU it then meets x and "
            "raises. Skip the scale when weight is None (or make it with device=x.device).",
            code=(
                "def batch_norm(x, running_mean, running_var, weight, bias, training, momentum=0.1, eps=1e-5):\n"
                "    c = x.shape[1]\n"
                "    dims = [d for d in range(x.ndim) if d != 1]\n"
                "    shape = [1, -1] + [1] * (x.ndim - 2)\n"
                "    if weight is None:\n"
                "        weight = torch.ones(c, dtype=x.dtype)\n"
                "    if bias is None:\n"
                "        bias = torch.zeros(c, dtype=x.dtype)\n"
                "    if training:\n"
                "        mean = x.mean(dim=dims)\n"
                "        var = x.var(dim=dims, correction=0)\n"
                "        new_mean = (1 - momentum) * running_mean + momentum * mean.detach()\n"
                "        new_var = (1 - momentum) * running_var + momentum * x.var(dim=dims).detach()\n"
                "    else:\n"
                "        mean, var = running_mean, running_var\n"
                "        new_mean, new_var = running_mean.clone(), running_var.clone()\n"
                "    y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + eps)\n"
                "    return y * weight.view(shape) + bias.view(shape), new_mean, new_var\n"
            ),
        ),
    ],
    "mean_embedding": [
        Mistake(
            name="padding-counted",
            message="The mean must run over the non-pad tokens only: divide the sum of the kept "
            "vectors by how many tokens are not pad_id.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    return embedding(tokens).mean(dim=1)\n"
            ),
        ),
        Mistake(
            name="nan-for-a-row-of-only-padding",
            message="A sequence of only padding has a count of zero and comes out as NaN: clamp "
            "the count to at least 1 so it comes out as zeros.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    keep = (tokens != pad_id).unsqueeze(-1)\n"
                "    return (embedding(tokens) * keep).sum(1) / keep.sum(1)\n"
            ),
        ),
        Mistake(
            name="table-padding-idx-instead-of-pad-id",
            message="Use the pad_id you are given: a table may have no padding_idx, or another "
            "one than the padding of these sequences.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    keep = (tokens != embedding.padding_idx).unsqueeze(-1)\n"
                "    return (embedding(tokens) * keep).sum(1) / keep.sum(1).clamp(min=1)\n"
            ),
        ),
        Mistake(
            name="cut-off-from-the-table",
            message="Computed without gradients (torch.no_grad, .detach(), .data), the table "
            "never learns from this loss: look the vectors up with embedding(tokens).",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    with torch.no_grad():\n"
                "        keep = (tokens != pad_id).unsqueeze(-1)\n"
                "        return (embedding(tokens) * keep).sum(1) / keep.sum(1).clamp(min=1)\n"
            ),
        ),
        Mistake(
            name="pads-sent-to-row-zero-in-place",
            message="Overwriting the pads with id 0 changes the caller's tokens and adds row 0 of "
            "the table, which is only zero when padding_idx happens to be 0: mask instead.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    count = (tokens != pad_id).sum(1, keepdim=True).clamp(min=1)\n"
                "    tokens[tokens == pad_id] = 0\n"
                "    return embedding(tokens).sum(1) / count\n"
            ),
        ),
        Mistake(
            name="nan-replaced-after-dividing",
            message="Replacing the NaN of an all-pad row after dividing (torch.where, "
            "nan_to_num) fixes the values but still sends NaN gradients back: clamp the count "
            "to at least 1 before dividing.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    keep = (tokens != pad_id).unsqueeze(-1)\n"
                "    count = keep.sum(1)\n"
                "    mean = (embedding(tokens) * keep).sum(1) / count\n"
                "    return torch.where(count > 0, mean, torch.zeros_like(mean))\n"
            ),
        ),
        Mistake(
            name="viewed-tokens",
            message="tokens.view(-1) needs contiguous memory, and a slice or a transpose of a batch is not: use embedding(tokens) directly (or .reshape).",
            code="def mean_embedding(tokens, embedding, pad_id):\n    b, t = tokens.shape\n    vectors = embedding(tokens.view(-1)).view(b, t, -1)\n    keep = (tokens != pad_id).unsqueeze(-1)\n    return (vectors * keep).sum(1) / keep.sum(1).clamp(min=1)\n",
        ),
        Mistake(
            name="count-made-on-the-cpu",
            message="A tensor made with torch.zeros/torch.tensor lands on the CPU: make it on tokens.device (or derive it from tokens), or a GPU batch fails.",
            code="def mean_embedding(tokens, embedding, pad_id):\n    keep = (tokens != pad_id).unsqueeze(-1)\n    total = torch.zeros(tokens.shape[0], embedding.embedding_dim)\n    total = total + (embedding(tokens) * keep).sum(1)\n    return total / keep.sum(1).clamp(min=1)\n",
        ),
        Mistake(
            name="squeezed",
            message="squeeze() also drops a batch axis of size 1: the result is always (B, dim).",
            code="def mean_embedding(tokens, embedding, pad_id):\n    keep = (tokens != pad_id).unsqueeze(-1)\n    return ((embedding(tokens) * keep).sum(1) / keep.sum(1).clamp(min=1)).squeeze()\n",
        ),
        Mistake(
            name="nan-mean-of-only-pads",
            message="A row of only pads has no mean: its NaN must become zeros (clamp the count).",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    vectors = embedding(tokens)\n"
                "    keep = (tokens != pad_id).unsqueeze(-1)\n"
                "    return vectors.masked_fill(~keep, float('nan')).nanmean(1)\n"
            ),
        ),
        Mistake(
            name="count-floored-with-a-cpu-tensor",
            message="torch.maximum(count, torch.ones(1)) meets a CPU tensor of one element: on a GPU it raises (only 0-d CPU tensors mix with GPU ones). Clamp with a number: count.clamp(min=1).",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    keep = (tokens != pad_id).unsqueeze(-1)\n"
                "    count = keep.sum(1)\n"
                "    return (embedding(tokens) * keep).sum(1) / torch.maximum(count, torch.ones(1, dtype=count.dtype))\n"
            ),
        ),
        Mistake(
            name="mask-made-on-the-cpu",
            message="torch.ones(tokens.shape) is made on the CPU, so the mask and the vectors sit on two devices on a GPU. Build the mask from tokens itself: (tokens != pad_id).",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    vecs = embedding(tokens)\n"
                "    keep = torch.ones(tokens.shape).masked_fill(tokens == pad_id, 0.0).unsqueeze(-1)\n"
                "    return (vecs * keep).sum(1) / keep.sum(1).clamp(min=1)\n"
            ),
        ),
        Mistake(
            name="mask-rebuilt-from-tolist",
            message="torch.tensor(mask.tolist()) reads the mask back and rebuilds it on the CPU: on a GPU it then meets the GPU's vectors and raises. Keep the mask a tensor: (tokens != pad_id).unsqueeze(-1).",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    keep = torch.tensor((tokens != pad_id).tolist(), dtype=torch.float32).unsqueeze(-1)\n"
                "    return (embedding(tokens) * keep).sum(1) / keep.sum(1).clamp(min=1)\n"
            ),
        ),
        Mistake(
            name="pad-row-zeroed-in-the-table",
            message="Zeroing the table's pad row changes the caller's embedding (and its training): mask "
            "the pads out of the sum instead.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    with torch.no_grad():\n"
                "        embedding.weight[pad_id] = 0\n"
                "    keep = (tokens != pad_id).sum(1, keepdim=True).clamp(min=1)\n"
                "    return embedding(tokens).sum(1) / keep\n"
            ),
        ),
        Mistake(
            name="float64-mask",
            message="A float64 mask makes the result float64: keep the table's dtype (a bool mask, or "
            ".to(vectors.dtype)).",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    keep = (tokens != pad_id).double().unsqueeze(-1)\n"
                "    return (embedding(tokens) * keep).sum(1) / keep.sum(1).clamp(min=1)\n"
            ),
        ),
        Mistake(
            name="requires-grad-forced-on-the-table",
            message="requires_grad_(True) and train() change the caller's table: a frozen or evaluating "
            "table stays as the caller left it; gradients reach a trainable one without that.",
            code=(
                "def mean_embedding(tokens, embedding, pad_id):\n"
                "    embedding.weight.requires_grad_(True)\n"
                "    embedding.train()\n"
                "    keep = (tokens != pad_id).unsqueeze(-1)\n"
                "    return (embedding(tokens) * keep).sum(1) / keep.sum(1).clamp(min=1)\n"
            ),
        ),
    ],
    "causal_mask": [
        Mistake(
            name="triangle-at-the-top-left",
            message="With cached keys (t_k > t_q) the queries are the LAST t_q positions: "
            "shift the triangle with tril(diagonal=t_k - t_q), as is_causal=True does not.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril()\n"
            ),
        ),
        Mistake(
            name="future-allowed",
            message="triu keeps the future and hides the past: a query may see keys j <= i, "
            "the LOWER triangle (tril).",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).triu()\n"
            ),
        ),
        Mistake(
            name="diagonal-hidden",
            message="A position may see itself: keep the diagonal (tril(diagonal=0) for a "
            "square mask).",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(-1)\n"
            ),
        ),
        Mistake(
            name="additive-float-mask",
            message="The exercise asks for bools, True where a key may be seen; an additive mask "
            "of 0 and -inf is another convention.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    return torch.full((t_q, t_k), float('-inf'), device=device).triu(1)\n"
            ),
        ),
        Mistake(
            name="device-ignored",
            message="Make the mask on the device you are given (device=device): a CPU mask "
            "next to GPU scores fails in masked_fill.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    return torch.ones(t_q, t_k, dtype=torch.bool).tril(diagonal=t_k - t_q)\n"
            ),
        ),
        Mistake(
            name="offset-sign-flipped",
            message="Query i sits at position t_k - t_q + i, so it sees keys up to "
            "i + (t_k - t_q): diagonal=t_k - t_q, not t_q - t_k.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    ones = torch.ones(t_q, t_k, dtype=torch.bool, device=device)\n"
                "    return ones.tril(diagonal=t_q - t_k)\n"
            ),
        ),
        Mistake(
            name="positions-made-on-the-cpu",
            message="torch.arange without device= makes CPU positions: compare positions made on the device you are given.",
            code="def causal_mask(t_q, t_k, device=None):\n    query_at = torch.arange(t_k - t_q, t_k, device=device).unsqueeze(1)\n    return torch.arange(t_k).unsqueeze(0) <= query_at\n",
        ),
        Mistake(
            name="square-mask-cut",
            message="Cutting a (t_q, t_q) triangle loses the cached keys: the mask is (t_q, t_k).",
            code="def causal_mask(t_q, t_k, device=None):\n    return torch.ones(t_q, t_q, dtype=torch.bool, device=device).tril()\n",
        ),
        Mistake(
            name="one-query-fast-path-on-the-cpu",
            message="The one-query row is made without device=: it lands on the CPU.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    if t_q == 1:\n"
                "        return torch.ones(1, t_k, dtype=torch.bool)\n"
                "    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(t_k - t_q)\n"
            ),
        ),
        Mistake(
            name="triangle-cut-from-a-square-on-the-cpu",
            message="The square triangle is made without device=, then moved only when a device is given.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    full = torch.ones(t_k, t_k, dtype=torch.bool).tril()\n"
                "    return full[t_k - t_q:] if device is None else full[t_k - t_q:].to('cpu')\n"
            ),
        ),
        Mistake(
            name="square-case-made-on-the-cpu",
            message="The square case (t_q == t_k) is built without device=: it must land on device like every other case. One expression handles both: torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(t_k - t_q).",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    if t_q == t_k:\n"
                "        return torch.ones(t_q, t_k, dtype=torch.bool).tril()\n"
                "    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(t_k - t_q)\n"
            ),
        ),
        Mistake(
            name="leaves-autograd-off",
            message="torch.set_grad_enabled(False) switches autograd off for the whole process after you return: a mask needs no gradient mode; use a with block if you switch one.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    torch.set_grad_enabled(False)\n"
                "    return torch.ones(t_q, t_k, dtype=torch.bool, device=device).tril(t_k - t_q)\n"
            ),
        ),
        Mistake(
            name="future-made-on-the-cpu",
            message="The triangle of future keys is made without device=, and masked_fill on a GPU tensor refuses a CPU mask: make it with device=device too.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    base = torch.ones(t_q, t_k, dtype=torch.bool, device=device)\n"
                "    upper = torch.ones(t_q, t_k, dtype=torch.bool).triu(t_k - t_q + 1)\n"
                "    return base.masked_fill(upper, False)\n"
            ),
        ),
        Mistake(
            name="default-device-left-set",
            message="torch.set_default_device changes the whole process and stays switched: pass "
            "device=device to torch.ones instead.",
            code=(
                "def causal_mask(t_q, t_k, device=None):\n"
                "    torch.set_default_device(device)\n"
                "    return torch.ones(t_q, t_k, dtype=torch.bool).tril(t_k - t_q)\n"
            ),
        ),
    ],
    "attention": [
        Mistake(
            name="no-scaling",
            message="Divide the scores by sqrt(D) before the softmax, or wide heads saturate it.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1)\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="scaled-by-d-not-its-root",
            message="The scale is sqrt(D): dividing by D shrinks the scores too much and the "
            "weights come out too flat.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / q.shape[-1]\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="softmax-over-the-queries",
            message="Each query's weights over the KEYS sum to one: softmax over the last axis "
            "of the (T_q, T_k) scores, not dim=-2.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-2) @ v\n"
            ),
        ),
        Mistake(
            name="mask-after-the-softmax",
            message="Mask the scores with -inf BEFORE the softmax; zeroing the weights after it "
            "leaves rows that no longer sum to one.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    weights = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).softmax(-1)\n"
                "    if mask is not None:\n"
                "        weights = weights * mask\n"
                "    return weights @ v\n"
            ),
        ),
        Mistake(
            name="scaled-by-the-value-width",
            message="The scale is the width of q and k (their dot product's length), which need "
            "not equal v's: use q.shape[-1].",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="float32-working-copy",
            message="Keep the inputs' dtype: float64 inputs computed in float32 lose precision "
            "and come back as float32.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    q, k, v = q.float(), k.float(), v.float()\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="library-sdpa",
            message="The exercise is attention by hand: F.scaled_dot_product_attention is what "
            "you check against, not what you call.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)\n"
            ),
        ),
        Mistake(
            name="computed-in-float32-cast-back",
            message="Compute in the inputs' dtype: float64 inputs computed in float32 and cast "
            "back are only good to about 1e-7.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    dtype = q.dtype\n"
                "    q, k, v = q.float(), k.float(), v.float()\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return (scores.softmax(-1) @ v).to(dtype)\n"
            ),
        ),
        Mistake(
            name="masked-with-zero",
            message="A score of 0 is not 'hidden': exp(0) still gets weight. Fill hidden "
            "scores with -inf.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, 0.0)\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="three-axes-only",
            message="q may have any number of leading batch axes: k.transpose(-2, -1), not an "
            "einsum written for (B, T, D).",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = torch.einsum('bqd,bkd->bqk', q, k) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="float32-scale",
            message="torch.tensor(d, dtype=torch.float32).sqrt() is a float32 root: float64 "
            "scores divided by it are off by about 1e-8. Use math.sqrt.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scale = torch.sqrt(torch.tensor(q.shape[-1], dtype=torch.float32))\n"
                "    scores = q @ k.transpose(-2, -1) / scale\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="masked-with-minus-1e9",
            message="-1e9 does not fit in float16: fill hidden scores with float('-inf').",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, -1e9)\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="float32-log-mask-added",
            message="log(mask.float()) is a float32 tensor: added to float16 scores it makes "
            "them float32. Use scores.masked_fill(~mask, float('-inf')).",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores + torch.log(mask.float())\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="default-mask-made-on-the-cpu",
            message="Without a mask the answer builds an all-True one without device=: masked_fill on a GPU tensor refuses a CPU mask. With no mask, skip masking instead.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    if mask is None:\n"
                "        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool)\n"
                "    scores = q @ k.mT / math.sqrt(q.shape[-1])\n"
                "    return scores.masked_fill(~mask, float('-inf')).softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="scale-as-a-one-element-cpu-tensor",
            message="torch.tensor([D]).sqrt() is a CPU tensor of one element, which a GPU tensor refuses to meet (only 0-d ones may): divide by the number math.sqrt(q.shape[-1]).",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scale = torch.tensor([q.shape[-1]], dtype=q.dtype).sqrt()\n"
                "    scores = q @ k.mT / scale\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="reseeds-global-generator",
            message="torch.manual_seed inside a function resets the caller's random numbers: every dropout mask, shuffle and initialisation after the call repeats the same draws. Seed once at the top of a script (or pass a torch.Generator) and leave the global generator alone.",
            code=(
                "import torch\n"
                "def attention(q, k, v, mask=None):\n"
                "    torch.manual_seed(0)\n"
                "    scores = torch.matmul(q, k.mT) / q.size(-1) ** 0.5\n"
                "    if mask is not None:\n"
                "        bias = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)\n"
                "        scores = scores + bias.masked_fill(~mask, float('-inf'))\n"
                "    return torch.matmul(F.softmax(scores, dim=-1), v)\n"
            ),
        ),
        Mistake(
            name="aten-sdpa-operator",
            message="torch.ops.aten.scaled_dot_product_attention is F.scaled_dot_product_attention reached "
            "as an operator: the exercise is attention by hand.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    return torch.ops.aten.scaled_dot_product_attention(q, k, v, mask)\n"
            ),
        ),
        Mistake(
            name="aten-sdpa-default-overload",
            message="torch.ops.aten.scaled_dot_product_attention.default is the library's attention under "
            "another name: the exercise is attention by hand.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    return torch.ops.aten.scaled_dot_product_attention.default(q, k, v, attn_mask=mask)\n"
            ),
        ),
        Mistake(
            name="private-sdpa-math",
            message="torch._scaled_dot_product_attention_math is F.scaled_dot_product_attention's own "
            "fallback: the exercise is attention by hand.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    bias = None\n"
                "    if mask is not None:\n"
                "        bias = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, float('-inf'))\n"
                "    return torch._scaled_dot_product_attention_math(q, k, v, attn_mask=bias)[0]\n"
            ),
        ),
        Mistake(
            name="aten-sdpa-math-operator",
            message="torch.ops.aten._scaled_dot_product_attention_math is the library's attention reached "
            "as an operator: the exercise is attention by hand.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    bias = None\n"
                "    if mask is not None:\n"
                "        bias = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, float('-inf'))\n"
                "    return torch.ops.aten._scaled_dot_product_attention_math.default(q, k, v, attn_mask=bias)[0]\n"
            ),
        ),
        Mistake(
            name="flash-kernel-for-the-cpu",
            message="torch._scaled_dot_product_flash_attention_for_cpu is one of "
            "F.scaled_dot_product_attention's kernels: the exercise is attention by hand.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    shape = q.shape[:-2]\n"
                "    q4, k4, v4 = (t.reshape(-1, 1, *t.shape[-2:]) for t in (q, k, v))\n"
                "    m = None\n"
                "    if mask is not None:\n"
                "        m = torch.zeros(mask.shape, dtype=q.dtype, device=q.device).masked_fill(~mask, float('-inf'))\n"
                "        m = m.expand(*shape, q.shape[-2], k.shape[-2]).reshape(-1, 1, q.shape[-2], k.shape[-2])\n"
                "    out = torch._scaled_dot_product_flash_attention_for_cpu(q4, k4, v4, attn_mask=m)[0]\n"
                "    return out.reshape(*shape, q.shape[-2], v.shape[-1])\n"
            ),
        ),
        Mistake(
            name="mask-inverted-in-place",
            message="mask.logical_not_() inverts the caller's mask: use ~mask, a new tensor.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(mask.logical_not_(), float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="weights-under-no-grad",
            message="The attention weights depend on q and k: computed under torch.no_grad(), no gradient "
            "reaches them.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    with torch.no_grad():\n"
                "        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "        if mask is not None:\n"
                "            scores = scores.masked_fill(~mask, float('-inf'))\n"
                "        weights = scores.softmax(-1)\n"
                "    return weights @ v\n"
            ),
        ),
        Mistake(
            name="inverted-mask-cached-by-shape",
            message="Two masks of the same shape need not be equal: a cache keyed by the shape reuses the "
            "first mask for every later one.",
            code=(
                "_hidden = {}\n"
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        key = tuple(mask.shape)\n"
                "        if key not in _hidden:\n"
                "            _hidden[key] = ~mask\n"
                "        scores = scores.masked_fill(_hidden[key], float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="softmax-in-float32",
            message="Compute in the inputs' dtype: a float32 softmax of float16 scores returns float32.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.float().softmax(-1) @ v.float()\n"
            ),
        ),
        Mistake(
            name="minus-inf-as-a-float32-tensor",
            message="torch.tensor(float('-inf')) is float32: torch.where then promotes float16 scores to "
            "float32. Fill with masked_fill and the Python float.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = torch.where(mask, scores, torch.tensor(float('-inf'), device=q.device).expand(scores.shape))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="softmax-without-its-maximum",
            message="exp(scores) / exp(scores).sum(-1) overflows to inf (or underflows to 0 / 0) "
            "once scores reach about 90: use torch.softmax, or subtract each row's maximum "
            "before exp.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    e = scores.exp()\n"
                "    return e / e.sum(-1, keepdim=True) @ v\n"
            ),
        ),
        Mistake(
            name="exp-then-mask-without-maximum",
            message="Masking by multiplying exp(scores) by the mask is right, but exp of large "
            "scores overflows: subtract each row's maximum first (torch.softmax does).",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    w = torch.exp(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]))\n"
                "    if mask is not None:\n"
                "        w = w * mask\n"
                "    return w / w.sum(-1, keepdim=True) @ v\n"
            ),
        ),
        Mistake(
            name="mask-as-an-index",
            message="A mask broadcastable to the scores (a padding mask of shape (..., 1, T_k)) "
            "cannot index them: fill with scores.masked_fill(~mask, float('-inf')), which "
            "broadcasts.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.clone()\n"
                "        scores[..., ~mask] = float('-inf')\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="mask-expanded-by-prepending",
            message="The mask need only broadcast against the scores: masked_fill broadcasts it "
            "as it is; prepending the scores' batch axes to a mask that has some of them "
            "already gives a wrong shape.",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        if mask.dim() != scores.dim():\n"
                "            mask = mask.expand(scores.shape[:-2] + mask.shape)\n"
                "        scores = scores.masked_fill(~mask, float('-inf'))\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
        Mistake(
            name="masked-with-minus-1e4",
            message="A finite fill such as -1e4 is not -inf: where the scores themselves are "
            "below it (about -20000, say), the hidden keys outscore the visible ones and take "
            "their weight. Fill hidden scores with float('-inf').",
            code=(
                "def attention(q, k, v, mask=None):\n"
                "    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
                "    if mask is not None:\n"
                "        scores = scores.masked_fill(~mask, -1e4)\n"
                "    return scores.softmax(-1) @ v\n"
            ),
        ),
    ],
    "split_heads": [
        Mistake(
            name="viewed-heads-first",
            message="Memory order is (B, T, C): view as (B, T, H, D) and then swap T and H. "
            "Viewing straight as (B, H, T, D) cuts the sequence into heads.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    return x.reshape(b, n_heads, t, c // n_heads)\n"
            ),
        ),
        Mistake(
            name="interleaved-channels",
            message="Head j holds the contiguous channels j*D to (j+1)*D, not every H-th "
            "channel: reshape to (B, T, H, D), with H before D.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    return x.reshape(b, t, c // n_heads, n_heads).permute(0, 3, 1, 2)\n"
            ),
        ),
        Mistake(
            name="squeezed",
            message="squeeze() also drops a batch, sequence or head axis of size 1: the result "
            "must always be 4-D (B, H, T, D).",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    return x.reshape(b, t, n_heads, c // n_heads).transpose(1, 2).squeeze()\n"
            ),
        ),
        Mistake(
            name="no-divisibility-check",
            message="Check that C is divisible by n_heads first and raise ValueError; reshape's "
            "RuntimeError does not say what is wrong.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    return x.reshape(b, t, n_heads, -1).transpose(1, 2)\n"
            ),
        ),
        Mistake(
            name="remainder-dropped",
            message="Cutting off the channels that do not fit silently throws data away: raise "
            "ValueError when C is not divisible by n_heads.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    d = c // n_heads\n"
                "    return x[..., : n_heads * d].reshape(b, t, n_heads, d).transpose(1, 2)\n"
            ),
        ),
        Mistake(
            name="error-names-no-numbers",
            message="The ValueError must name both numbers, C and n_heads.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                "        raise ValueError('the width must be divisible by the head count')\n"
                "    return x.reshape(b, t, n_heads, c // n_heads).transpose(1, 2)\n"
            ),
        ),
        Mistake(
            name="viewed-with-minus-one",
            message="x.view(b, t, n_heads, -1) fails on a non-contiguous x and on an empty one.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                "        raise ValueError(f'{c} channels, {n_heads} heads')\n"
                "    return x.view(b, t, n_heads, -1).transpose(1, 2)\n"
            ),
        ),
        Mistake(
            name="heads-copied-into-a-cpu-tensor",
            message="torch.empty(b, n_heads, t, d) is made on the CPU: the heads end up there whatever device x is on. Reshape and transpose x itself (or pass device=x.device).",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                '        raise ValueError(f"{c} channels, {n_heads} heads")\n'
                "    d = c // n_heads\n"
                "    out = torch.empty(b, n_heads, t, d, dtype=x.dtype)\n"
                "    for h in range(n_heads):\n"
                "        out[:, h] = x[..., h * d:(h + 1) * d]\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="gather-with-cpu-indices",
            message="torch.gather on a GPU tensor refuses CPU indices: make them with device=x.device, or reshape to (B, T, H, D) and transpose, which needs no indices.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                '        raise ValueError(f"{c} channels, {n_heads} heads")\n'
                "    d = c // n_heads\n"
                "    idx = torch.arange(c).view(1, 1, n_heads, d).expand(b, t, n_heads, d)\n"
                "    return torch.gather(x.unsqueeze(2).expand(b, t, n_heads, c), 3, idx).transpose(1, 2)\n"
            ),
        ),
        Mistake(
            name="assert-instead-of-value-error",
            message="An assert raises AssertionError: raise ValueError naming both numbers.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                '    assert c % n_heads == 0, f"{c} channels cannot be split into {n_heads} heads"\n'
                "    return x.reshape(b, t, n_heads, c // n_heads).transpose(1, 2)\n"
            ),
        ),
        Mistake(
            name="detached",
            message="x.detach() cuts the heads off the graph: reshape and transpose x itself.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                '        raise ValueError(f"{c} channels cannot be split into {n_heads} heads")\n'
                "    return x.detach().reshape(b, t, n_heads, c // n_heads).transpose(1, 2)\n"
            ),
        ),
        Mistake(
            name="as-strided-assumes-contiguous",
            message="as_strided with strides computed for a contiguous x reads the wrong values of a "
            "transposed or sliced x: reshape, then transpose.",
            code=(
                "def split_heads(x, n_heads):\n"
                "    b, t, c = x.shape\n"
                "    if c % n_heads:\n"
                '        raise ValueError(f"{c} channels cannot be split into {n_heads} heads")\n'
                "    d = c // n_heads\n"
                "    return x.as_strided((b, n_heads, t, d), (t * c, d, c, 1), x.storage_offset())\n"
            ),
        ),
    ],
    "encoder_layer_forward": [
        Mistake(
            name="always-post-norm",
            message="Honour layer.norm_first: a pre-norm layer computes x + attn(norm1(x)), then "
            "x + ff(norm2(x)).",
            code=_encoder(pre_norm="False"),
        ),
        Mistake(
            name="always-relu",
            message="Use layer.activation in the feed-forward: the layer may have been built "
            "with activation='gelu'.",
            code=_encoder(activation="torch.relu"),
        ),
        Mistake(
            name="one-head",
            message="Split q, k and v into layer.self_attn.num_heads heads of C / H channels "
            "each; one head over all C channels attends differently.",
            code=_encoder(heads="1"),
        ),
        Mistake(
            name="no-residual-around-attention",
            message="Each half is wrapped in a residual connection: norm1(x + attn(x)).",
            code=_encoder(attn_residual=""),
        ),
        Mistake(
            name="mode-changed",
            message="Do not call layer.eval() (or train()) inside: the caller owns the mode.",
            code=_encoder(prelude="    layer.eval()\n"),
        ),
        Mistake(
            name="projection-weights-through-data",
            message="attn.in_proj_weight.data gives the right values but no gradient: the "
            "layer's attention projections would never train. Use the parameter itself.",
            code=_encoder().replace(
                "attn.in_proj_weight, attn.in_proj_bias",
                "attn.in_proj_weight.data, attn.in_proj_bias",
            ),
        ),
        Mistake(
            name="calls-the-layer",
            message="layer(x) is what you are asked to rebuild from the layer's parts, not "
            "what you return.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    with torch.no_grad():\n"
                "        return layer(x)\n"
            ),
        ),
        Mistake(
            name="calls-self-attn",
            message="Compute the attention from in_proj_weight, the heads and out_proj; "
            "layer.self_attn(...) does it for you.",
            code=_encoder().replace(_ENCODER_ATTENTION, "        return attn(z, z, z)[0]\n"),
        ),
        Mistake(
            name="scaled-by-the-full-width",
            message="Each head's scores are scaled by sqrt(C / H), the width of one head, not "
            "sqrt(C).",
            code=_encoder(scale="c"),
        ),
        Mistake(
            name="attention-weights-detached",
            message="The attention weights are part of the computation: detaching them stops "
            "the gradient that flows back through q and k to x.",
            code=_encoder().replace(
                "math.sqrt(c // h), dim=-1)", "math.sqrt(c // h), dim=-1).detach()"
            ),
        ),
        Mistake(
            name="viewed-input",
            message="z.view(b * t, c) needs contiguous memory, which a caller's slice or "
            "transpose of x does not have: F.linear takes (B, T, C) as it is (or use .reshape).",
            code=_encoder().replace("F.linear(z,", "F.linear(z.view(b * t, c),"),
        ),
        Mistake(
            name="heads-merged-onto-the-cpu",
            message="torch.zeros(b, t, c) without device= lands on the CPU: adding it to the "
            "heads of a layer on a GPU fails. Merge the heads with transpose and reshape.",
            code=_encoder().replace(
                "return attn.out_proj((weights @ v).transpose(1, 2).reshape(b, t, c))",
                "merged = torch.zeros(b, t, c) + (weights @ v).transpose(1, 2).reshape(b, t, c)\n"
                "        return attn.out_proj(merged)",
            ),
        ),
        Mistake(
            name="layer-norm-default-eps",
            message="F.layer_norm's default eps is 1e-5; the layer's norms have their own "
            "(layer.norm1.eps): call layer.norm1 itself.",
            code=_encoder(
                prelude="    def n1(z):\n"
                "        return F.layer_norm(z, (c,), layer.norm1.weight, layer.norm1.bias)\n\n"
                "    def n2(z):\n"
                "        return F.layer_norm(z, (c,), layer.norm2.weight, layer.norm2.bias)\n\n"
            )
            .replace("= layer.norm1(", "= n1(")
            .replace("(layer.norm1(x))", "(n1(x))")
            .replace("(layer.norm2(x))", "(n2(x))")
            .replace("return layer.norm2(", "return n2("),
        ),
        Mistake(
            name="activation-from-the-fast-path-flag",
            message="Use layer.activation itself: activation_relu_or_gelu is 0 for any "
            "activation other than relu and gelu.",
            code=_encoder(activation="(F.gelu if layer.activation_relu_or_gelu == 2 else F.relu)"),
        ),
        Mistake(
            name="fresh-layer-norms",
            message="nn.LayerNorm(C) made inside the function has fresh weights (ones and zeros) on the CPU, not the layer's trained norm1 and norm2: use layer.norm1 and layer.norm2.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    b, t, c = x.shape\n"
                "    h = sa.num_heads\n"
                "    def attend(z):\n"
                "        q, k, v = (p.reshape(b, t, h, -1).transpose(1, 2) for p in F.linear(z, sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1))\n"
                "        return sa.out_proj(attention(q, k, v).transpose(1, 2).reshape(b, t, c))\n"
                "    norm1 = nn.LayerNorm(c, eps=layer.norm1.eps)\n"
                "    norm2 = nn.LayerNorm(c, eps=layer.norm2.eps)\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(norm1(x))\n"
                "        return x + ff(norm2(x))\n"
                "    x = norm1(x + attend(x))\n"
                "    return norm2(x + ff(x))\n"
            ),
        ),
        Mistake(
            name="heads-gathered-in-a-cpu-tensor",
            message="torch.zeros(b, t, c) is made on the CPU: the heads are copied into it, and out_proj's GPU weights then meet a CPU input. Make it with device=x.device (x.new_zeros), or merge the heads with transpose and reshape.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    b, t, c = x.shape\n"
                "    h = sa.num_heads\n"
                "    d = c // h\n"
                "    def attend(z):\n"
                "        q, k, v = F.linear(z, sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1)\n"
                "        out = torch.zeros(b, t, c, dtype=z.dtype)\n"
                "        for i in range(h):\n"
                "            s = slice(i * d, (i + 1) * d)\n"
                "            out[..., s] = attention(q[..., s], k[..., s], v[..., s])\n"
                "        return sa.out_proj(out)\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        return x + ff(layer.norm2(x))\n"
                "    x = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(x + ff(x))\n"
            ),
        ),
        Mistake(
            name="native-multi-head-attention-kernel",
            message="torch._native_multi_head_attention is self_attn's own kernel: compute the attention "
            "from in_proj_weight, the heads and out_proj.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    def attend(z):\n"
                "        return torch._native_multi_head_attention(z, z, z, sa.embed_dim, sa.num_heads, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias, need_weights=False)[0]\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        return x + ff(layer.norm2(x))\n"
                "    x = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(x + ff(x))\n"
            ),
        ),
        Mistake(
            name="aten-native-multi-head-attention",
            message="torch.ops.aten._native_multi_head_attention is self_attn's own kernel (and has no "
            "gradient): compute the attention yourself.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    def attend(z):\n"
                "        return torch.ops.aten._native_multi_head_attention(z, z, z, sa.embed_dim, sa.num_heads, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias, need_weights=False)[0]\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        return x + ff(layer.norm2(x))\n"
                "    x = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(x + ff(x))\n"
            ),
        ),
        Mistake(
            name="fused-encoder-layer-kernel",
            message="torch._transformer_encoder_layer_fwd is layer(x)'s fast path: it is what you rebuild, "
            "not what you call.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    act = layer.activation\n"
                "    return torch._transformer_encoder_layer_fwd(\n"
                "        x, sa.embed_dim, sa.num_heads, sa.in_proj_weight, sa.in_proj_bias,\n"
                "        sa.out_proj.weight, sa.out_proj.bias, act is F.gelu, layer.norm_first,\n"
                "        layer.norm1.eps, layer.norm1.weight, layer.norm1.bias, layer.norm2.weight, layer.norm2.bias,\n"
                "        layer.linear1.weight, layer.linear1.bias, layer.linear2.weight, layer.linear2.bias, None)\n"
            ),
        ),
        Mistake(
            name="private-sa-block",
            message="layer._sa_block calls layer.self_attn: compute the attention from its parts.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    if layer.norm_first:\n"
                "        x = x + layer._sa_block(layer.norm1(x), None, None)\n"
                "        return x + layer._ff_block(layer.norm2(x))\n"
                "    x = layer.norm1(x + layer._sa_block(x, None, None))\n"
                "    return layer.norm2(x + layer._ff_block(x))\n"
            ),
        ),
        Mistake(
            name="calls-a-copy-of-the-layer",
            message="A copy of the layer is still the layer: layer(x) is what you rebuild from its parts.",
            code=(
                "import copy\n"
                "def encoder_layer_forward(layer, x):\n"
                "    return copy.deepcopy(layer)(x)\n"
            ),
        ),
        Mistake(
            name="functional-call-of-the-layer",
            message="torch.func.functional_call(layer, ...) runs layer.forward: compute the layer from its "
            "parts.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    return torch.func.functional_call(layer, dict(layer.named_parameters()), (x,))\n"
            ),
        ),
        Mistake(
            name="fresh-multihead-attention",
            message="A new nn.MultiheadAttention with the layer's weights is self_attn again: compute the "
            "attention from in_proj_weight, the heads and out_proj.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    mha = nn.MultiheadAttention(sa.embed_dim, sa.num_heads, batch_first=True).to(x)\n"
                "    mha.load_state_dict(sa.state_dict())\n"
                "    mha.in_proj_weight = sa.in_proj_weight; mha.in_proj_bias = sa.in_proj_bias\n"
                "    mha.out_proj = sa.out_proj\n"
                "    attend = lambda z: mha(z, z, z, need_weights=False)[0]\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        return x + ff(layer.norm2(x))\n"
                "    x = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(x + ff(x))\n"
            ),
        ),
        Mistake(
            name="submodules-switched-to-eval",
            message="Calling eval() on the layer's submodules changes the caller's mode too: leave every "
            "mode as it is.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    b, t, c = x.shape\n"
                "    h = sa.num_heads\n"
                "    for m in (layer.linear1, layer.linear2, layer.norm1, layer.norm2, sa.out_proj):\n"
                "        m.eval()\n"
                "    def attend(z):\n"
                "        q, k, v = (p.reshape(b, t, h, -1).transpose(1, 2) for p in F.linear(z, sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1))\n"
                "        return sa.out_proj(attention(q, k, v).transpose(1, 2).reshape(b, t, c))\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        return x + ff(layer.norm2(x))\n"
                "    x = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(x + ff(x))\n"
            ),
        ),
        Mistake(
            name="mode-restored-on-the-layer-only",
            message="layer.training = was puts back the layer's own flag, not its submodules': layer.eval()"
            " switched them all.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    b, t, c = x.shape\n"
                "    h = sa.num_heads\n"
                "    was = layer.training\n"
                "    layer.eval()\n"
                "    def attend(z):\n"
                "        q, k, v = (p.reshape(b, t, h, -1).transpose(1, 2) for p in F.linear(z, sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1))\n"
                "        return sa.out_proj(attention(q, k, v).transpose(1, 2).reshape(b, t, c))\n"
                "    ff = lambda z: layer.linear2(layer.activation(layer.linear1(z)))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        out = x + ff(layer.norm2(x))\n"
                "    else:\n"
                "        x = layer.norm1(x + attend(x))\n"
                "        out = layer.norm2(x + ff(x))\n"
                "    layer.training = was\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="forward-hook-left",
            message="A forward hook registered on linear1 stays on the caller's layer after the call: apply"
            " layer.activation in your own code.",
            code=(
                "def encoder_layer_forward(layer, x):\n"
                "    sa = layer.self_attn\n"
                "    b, t, c = x.shape\n"
                "    h = sa.num_heads\n"
                "    layer.linear1.register_forward_hook(lambda m, i, o: layer.activation(o))\n"
                "    def attend(z):\n"
                "        q, k, v = (p.reshape(b, t, h, -1).transpose(1, 2) for p in F.linear(z, sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1))\n"
                "        return sa.out_proj(attention(q, k, v).transpose(1, 2).reshape(b, t, c))\n"
                "    ff = lambda z: layer.linear2(layer.linear1(z))\n"
                "    if layer.norm_first:\n"
                "        x = x + attend(layer.norm1(x))\n"
                "        return x + ff(layer.norm2(x))\n"
                "    x = layer.norm1(x + attend(x))\n"
                "    return layer.norm2(x + ff(x))\n"
            ),
        ),
        Mistake(
            name="scripted-layer",
            message="torch.jit.script(layer) is the layer compiled: calling it is layer(x), what you "
            "rebuild from its parts.",
            code=("def encoder_layer_forward(layer, x):\n    return torch.jit.script(layer)(x)\n"),
        ),
    ],
}

MISTAKES["encoder_layer_forward"].append(
    Mistake(
        name="library-attention-on-the-heads",
        message="F.scaled_dot_product_attention is the library's attention: the text asks for the attention over the heads in your own code (matrix products, or your attention from Exercise 6).",
        code=(
            "def encoder_layer_forward(layer, x):\n"
            "    sa = layer.self_attn\n"
            "    h = sa.num_heads\n"
            "    def heads(z):  # (B, T, C) -> (B, H, T, D)\n"
            "        return z.unflatten(-1, (h, -1)).transpose(1, 2)\n"
            "    def attend(z):\n"
            "        q, k, v = map(heads, F.linear(z, sa.in_proj_weight, sa.in_proj_bias).chunk(3, -1))\n"
            "        out = F.scaled_dot_product_attention(q, k, v)\n"
            "        return sa.out_proj(out.transpose(1, 2).flatten(2))\n"
            "    def ff(z):\n"
            "        return layer.linear2(layer.activation(layer.linear1(z)))\n"
            "    if layer.norm_first:\n"
            "        x = x + attend(layer.norm1(x))\n"
            "        return x + ff(layer.norm2(x))\n"
            "    x = layer.norm1(x + attend(x))\n"
            "    return layer.norm2(x + ff(x))\n"
        ),
    )
)
