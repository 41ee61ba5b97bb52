"""Right answers for 08_deployment's exercises, written differently from the solution."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "safe_load": [
        RightAnswer(
            name="bytes-once-then-load",
            why=(
                "Reads the file's bytes once and loads them from memory with a torch.device "
                "map_location and UnpicklingError imported by name; the text asks only for a "
                "safe, CPU load that reports a refusal as None."
            ),
            code=(
                "import io\n"
                "from pickle import UnpicklingError\n"
                "def safe_load(path):\n"
                "    with open(path, 'rb') as f:\n"
                "        data = f.read()\n"
                "    try:\n"
                "        return torch.load(io.BytesIO(data), map_location=torch.device('cpu'),\n"
                "                          weights_only=True)\n"
                "    except UnpicklingError:\n"
                "        return None\n"
            ),
        ),
        RightAnswer(
            name="open-file-load-once",
            why=(
                "Opens the file itself and gives torch.load the file object, once, catching "
                "the refusal inside the with block: one read, weights_only=True, a missing or "
                "damaged file still raises."
            ),
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    with open(path, 'rb') as f:\n"
                "        try:\n"
                "            obj = torch.load(f, map_location='cpu', weights_only=True)\n"
                "        except pickle.UnpicklingError:\n"
                "            obj = None\n"
                "    return obj\n"
            ),
        ),
        RightAnswer(
            name="map-location-function",
            why="map_location as a function that keeps each storage where torch.load put it (the CPU), and the refusal caught by name: one load, weights_only=True.",
            code=(
                "from pickle import UnpicklingError\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        obj = torch.load(path, map_location=lambda storage, loc: storage, weights_only=True)\n"
                "    except UnpicklingError:\n"
                "        obj = None\n"
                "    return obj\n"
            ),
        ),
        RightAnswer(
            name="mmap-torch-device",
            why=(
                "Memory-maps the file (mmap=True) and names the CPU as a torch.device; still one "
                "weights_only load that reports a refusal as None."
            ),
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        return torch.load(path, map_location=torch.device('cpu'), weights_only=True,\n"
                "                          mmap=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
            ),
        ),
    ],
    "load_checkpoint_cpu": [
        RightAnswer(
            name="returns-incompatible-keys",
            why=(
                "Returns load_state_dict's own result, a named tuple (missing_keys, "
                "unexpected_keys) of two lists: a tuple of the two lists the text asks for. "
                "The map_location is a function that keeps each storage on the CPU."
            ),
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location=lambda storage, location: storage,\n"
                "                       weights_only=True)\n"
                "    return model.load_state_dict(state, strict=False)\n"
            ),
        ),
        RightAnswer(
            name="set-differences-of-state-dict-keys",
            why=(
                "Computes the two lists itself from model.state_dict()'s keys (what "
                "load_state_dict compares) and returns them sorted, as a list of two lists."
            ),
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location=torch.device('cpu'), weights_only=True)\n"
                "    mine = set(model.state_dict())\n"
                "    model.load_state_dict(state, strict=False)\n"
                "    return [sorted(mine - set(state)), sorted(set(state) - mine)]\n"
            ),
        ),
        RightAnswer(
            name="returns-the-named-tuple",
            why="Returns what load_state_dict returns: a named tuple (missing_keys, unexpected_keys), which unpacks into the two lists.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    return model.load_state_dict(torch.load(path, map_location=torch.device('cpu'), weights_only=True), strict=False)\n"
            ),
        ),
        RightAnswer(
            name="copies-matching-tensors-by-hand",
            why=(
                "Copies every matching tensor into the model's own state under no_grad (what "
                "load_state_dict does) and lists the two key differences itself, from the "
                "model's state_dict: parameters and buffers."
            ),
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    own = model.state_dict()\n"
                "    with torch.no_grad():\n"
                "        for key, value in state.items():\n"
                "            if key in own:\n"
                "                own[key].copy_(value)\n"
                "    return [k for k in own if k not in state], [k for k in state if k not in own]\n"
            ),
        ),
    ],
    "strip_module_prefix": [
        RightAnswer(
            name="startswith-slice-ordereddict",
            why=(
                "Slices the prefix off after a startswith test and returns an OrderedDict "
                "(a dict, as state dicts usually are)."
            ),
            code=(
                "from collections import OrderedDict\n"
                "def strip_module_prefix(state_dict):\n"
                "    out = OrderedDict()\n"
                "    for key, value in state_dict.items():\n"
                "        out[key[len('module.'):] if key.startswith('module.') else key] = value\n"
                "    return out\n"
            ),
        ),
        RightAnswer(
            name="anchored-regex",
            why="An anchored, escaped regular expression removes one leading 'module.' only.",
            code=(
                "import re\n"
                "def strip_module_prefix(state_dict):\n"
                "    return {re.sub(r'^module\\.', '', key, count=1): value\n"
                "            for key, value in state_dict.items()}\n"
            ),
        ),
        RightAnswer(
            name="partition-keeps-the-dict-type",
            why="Splits each key at its first '.', drops the head only where it is 'module', and builds a dict of the input's own type.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    out = type(state_dict)() if isinstance(state_dict, dict) else {}\n"
                "    for key in state_dict:\n"
                "        head, sep, rest = key.partition('.')\n"
                "        out[rest if (head == 'module' and sep) else key] = state_dict[key]\n"
                "    return out\n"
            ),
        ),
    ],
    "export_gated": [
        RightAnswer(
            name="where-on-the-batch-gate",
            why=(
                "Selects with torch.where on the one-element gate instead of torch.cond: both "
                "branches are computed and the batch's decision picks one, so the program "
                "matches the model in eval mode on every input. It restores each submodule's "
                "own mode."
            ),
            code=(
                "class ExportableGatedNet(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.where(self.gated.gate(x), self.gated.pos(x), self.gated.neg(x))\n"
                "def export_gated(model, example):\n"
                "    modes = {m: m.training for m in model.modules()}\n"
                "    model.eval()\n"
                "    try:\n"
                "        return torch.export.export(ExportableGatedNet(model), (example,))\n"
                "    finally:\n"
                "        for m, training in modes.items():\n"
                "            m.training = training\n"
            ),
        ),
        RightAnswer(
            name="export-an-eval-copy",
            why=(
                "Exports a deep copy in eval mode, with lambdas as torch.cond's branches, so "
                "the caller's model is never switched at all."
            ),
            code=(
                "import copy\n"
                "class ExportableGatedNet(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.gated.gate(x), lambda t: self.gated.pos(t),\n"
                "                          lambda t: self.gated.neg(t), (x,))\n"
                "def export_gated(model, example):\n"
                "    frozen = copy.deepcopy(model).eval()\n"
                "    return torch.export.export(ExportableGatedNet(frozen), args=(example,))\n"
            ),
        ),
        RightAnswer(
            name="exports-an-eval-copy",
            why="Exports an eval-mode deep copy, so the caller's model is never switched; the branches are lambdas around pos and neg.",
            code=(
                "import copy\n"
                "class _W(nn.Module):\n"
                "    def __init__(self, g):\n"
                "        super().__init__()\n"
                "        self.g = g\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.g.gate(x), lambda t: self.g.pos(t), lambda t: self.g.neg(t), [x])\n"
                "def export_gated(model, example):\n"
                "    frozen = copy.deepcopy(model).eval()\n"
                "    return torch.export.export(_W(frozen), (example,))\n"
            ),
        ),
        RightAnswer(
            name="cond-lambdas-per-module-modes",
            why=(
                "Branches as lambdas over the submodules, exported under no_grad, and every "
                "submodule's own training flag put back in a finally (a stricter restore than "
                "model.train(was_training))."
            ),
            code=(
                "class ExportableGatedNet(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        g = self.gated\n"
                "        return torch.cond(g.gate(x), lambda t: g.pos(t), lambda t: g.neg(t), (x,))\n"
                "def export_gated(model, example):\n"
                "    modes = {m: m.training for m in model.modules()}\n"
                "    model.eval()\n"
                "    try:\n"
                "        with torch.no_grad():\n"
                "            return torch.export.export(ExportableGatedNet(model), (example,))\n"
                "    finally:\n"
                "        for m, training in modes.items():\n"
                "            m.training = training\n"
            ),
        ),
    ],
    "onnx_round_trip": [
        RightAnswer(
            name="numpy-allclose",
            why=(
                "Compares in NumPy with np.allclose(out, expected, rtol, atol), the same rule "
                "|a - b| <= atol + rtol * |b|, and returns a Python bool; restores the mode."
            ),
            code=(
                "import numpy as np\n"
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    with warnings.catch_warnings():\n"
                "        warnings.simplefilter('ignore')\n"
                "        torch.onnx.export(model, (x,), path, dynamo=True)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    feed = {session.get_inputs()[0].name: x.detach().cpu().numpy()}\n"
                "    out = session.run(None, feed)[0]\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).detach().cpu().numpy()\n"
                "    model.train(was_training)\n"
                "    return torch.as_tensor(out), bool(np.allclose(out, expected, rtol=rtol, atol=atol))\n"
            ),
        ),
        RightAnswer(
            name="isclose-all-under-inference-mode",
            why=(
                "torch.isclose(...).all().item() under torch.inference_mode(): the same "
                "comparison, element by element, turned into a bool."
            ),
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    with warnings.catch_warnings():\n"
                "        warnings.simplefilter('ignore')\n"
                "        torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    onnx_out = torch.tensor(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.inference_mode():\n"
                "        expected = model(x).cpu()\n"
                "    return onnx_out, torch.isclose(onnx_out, expected, rtol=rtol, atol=atol).all().item()\n"
            ),
        ),
        RightAnswer(
            name="numpy-assert-allclose",
            why="Compares with numpy.testing.assert_allclose (|a - b| <= atol + rtol * |b|, as torch.allclose) and turns its AssertionError into False.",
            code=(
                "import numpy as np\n"
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.train(False)\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True)\n"
                "    sess = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    feed = {sess.get_inputs()[0].name: x.detach().to('cpu').numpy()}\n"
                "    got = sess.run(None, feed)[0]\n"
                "    with torch.no_grad():\n"
                "        ref = model(x).detach().cpu().numpy()\n"
                "    try:\n"
                "        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)\n"
                "        ok = True\n"
                "    except AssertionError:\n"
                "        ok = False\n"
                "    return torch.as_tensor(got), ok\n"
            ),
        ),
        RightAnswer(
            name="restores-mode-in-finally",
            why=(
                "Notes the caller's mode and puts it back in a finally block after exporting and "
                "computing the reference; the text only asks for eval mode while it works."
            ),
            code=(
                "import onnxruntime as ort\n"
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    try:\n"
                "        torch.onnx.export(model, (x,), path, dynamo=True)\n"
                "        with torch.no_grad():\n"
                "            ref = model(x).cpu()\n"
                "    finally:\n"
                "        model.train(was)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    feed = {session.get_inputs()[0].name: x.detach().cpu().numpy()}\n"
                "    out = torch.from_numpy(session.run(None, feed)[0])\n"
                "    return out, torch.allclose(out, ref, rtol=rtol, atol=atol)\n"
            ),
        ),
    ],
    "quantize_report": [
        RightAnswer(
            name="files-on-disk-and-an-eval-copy",
            why=(
                "Evaluates an eval-mode copy, so the caller's model is never switched; sizes "
                "come from torch.save into temporary files and os.path.getsize (the same "
                "serialised state_dict); accuracies under torch.inference_mode()."
            ),
            code=(
                "import os, tempfile\n"
                "def quantize_report(model, x, y):\n"
                "    fp32 = copy.deepcopy(model).eval()\n"
                "    int8 = quantize_int8(copy.deepcopy(fp32))\n"
                "    folder = tempfile.mkdtemp()\n"
                "    def size(net, name):\n"
                "        path = os.path.join(folder, name)\n"
                "        torch.save(net.state_dict(), path)\n"
                "        return os.path.getsize(path)\n"
                "    def accuracy(net):\n"
                "        with torch.inference_mode():\n"
                "            return (net(x).argmax(1) == y).sum().item() / len(y)\n"
                "    return {'size_fp32': size(fp32, 'fp32.pt'), 'size_int8': size(int8, 'int8.pt'),\n"
                "            'acc_fp32': accuracy(fp32), 'acc_int8': accuracy(int8)}\n"
            ),
        ),
        RightAnswer(
            name="try-finally-restore",
            why=(
                "Restores the mode in a finally block and computes accuracy with "
                "torch.eq(...).float().mean(); the dict is built key by key."
            ),
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    try:\n"
                "        model.eval()\n"
                "        int8_model = quantize_int8(copy.deepcopy(model))\n"
                "        report = {}\n"
                "        for key, net in (('fp32', model), ('int8', int8_model)):\n"
                "            buffer = io.BytesIO()\n"
                "            torch.save(net.state_dict(), buffer)\n"
                "            report['size_' + key] = len(buffer.getvalue())\n"
                "            with torch.no_grad():\n"
                "                report['acc_' + key] = float(torch.eq(net(x).argmax(dim=1), y).float().mean())\n"
                "        return report\n"
                "    finally:\n"
                "        model.train(was_training)\n"
            ),
        ),
        RightAnswer(
            name="built-in-quantize-dynamic",
            why=(
                "Quantises with torch.ao.quantization.quantize_dynamic (the older built-in "
                "API, not inplace, so it returns a new model): the same dynamic int8 "
                "quantisation of the Linear layers, which the text's trade-off is about."
            ),
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    with warnings.catch_warnings():\n"
                "        warnings.simplefilter('ignore')\n"
                "        int8_model = torch.ao.quantization.quantize_dynamic(\n"
                "            model, {nn.Linear}, dtype=torch.qint8)\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    with torch.no_grad():\n"
                "        accs = [(net(x).argmax(dim=1) == y).float().mean().item()\n"
                "                for net in (model, int8_model)]\n"
                "    model.train(was_training)\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': accs[0], 'acc_int8': accs[1]}\n"
            ),
        ),
        RightAnswer(
            name="file-sizes-and-counts",
            why="Sizes from files written with torch.save in a temporary folder, accuracy as a count of correct rows over len(y), both models copies.",
            code=(
                "import copy, os, tempfile\n"
                "def quantize_report(model, x, y):\n"
                "    fp32 = copy.deepcopy(model).eval()\n"
                "    int8 = quantize_int8(copy.deepcopy(fp32))\n"
                "    report = {}\n"
                "    with tempfile.TemporaryDirectory() as tmp:\n"
                "        for tag, net in (('fp32', fp32), ('int8', int8)):\n"
                "            p = os.path.join(tmp, tag + '.pt')\n"
                "            torch.save(net.state_dict(), p)\n"
                "            report['size_' + tag] = os.path.getsize(p)\n"
                "            with torch.no_grad():\n"
                "                correct = (net(x).argmax(dim=-1) == y).sum().item()\n"
                "            report['acc_' + tag] = correct / len(y)\n"
                "    return report\n"
            ),
        ),
    ],
    "measure_latency_ms": [
        RightAnswer(
            name="torch-median-inference-mode",
            why=(
                "torch.median of the timed calls (for an even count it is the lower of the two "
                "middle values, still a median) under torch.inference_mode(), synchronising "
                "when x.is_cuda."
            ),
            code=(
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    with torch.inference_mode():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        if x.is_cuda:\n"
                "            torch.cuda.synchronize()\n"
                "        times = torch.empty(runs, dtype=torch.float64)\n"
                "        for i in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize(x.device)\n"
                "            times[i] = (time.perf_counter() - start) * 1000\n"
                "    return times.median().item()\n"
            ),
        ),
        RightAnswer(
            name="numpy-median-perf-counter-ns",
            why=(
                "Nanosecond clock converted to milliseconds, numpy.median, and a synchronize "
                "whenever CUDA is available (harmless for a CPU input), before every clock "
                "reading."
            ),
            code=(
                "import numpy as np\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    def sync():\n"
                "        if torch.cuda.is_available():\n"
                "            torch.cuda.synchronize()\n"
                "    samples = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            sync()\n"
                "            start = time.perf_counter_ns()\n"
                "            fn(x)\n"
                "            sync()\n"
                "            samples.append((time.perf_counter_ns() - start) / 1e6)\n"
                "    return float(np.median(samples))\n"
            ),
        ),
        RightAnswer(
            name="inference-mode-numpy-median",
            why="Times each call in a small function, synchronizes the input's own device, runs under torch.inference_mode() (which the text's no_grad allows) and takes numpy's median.",
            code=(
                "import numpy as np\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    def once():\n"
                "        t0 = time.perf_counter()\n"
                "        fn(x)\n"
                "        if x.device.type == 'cuda':\n"
                "            torch.cuda.synchronize(x.device)\n"
                "        return (time.perf_counter() - t0) * 1e3\n"
                "    with torch.inference_mode():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        samples = [once() for _ in range(runs)]\n"
                "    return float(np.median(samples))\n"
            ),
        ),
    ],
    "save_for_serving": [
        RightAnswer(
            name="os-path-save-file-dedup",
            why=(
                "os.path and str paths instead of pathlib, the mode restored in a finally, and "
                "safetensors' save_file on a state dict it deduplicates by data pointer and "
                "makes contiguous itself: the text asks for the files, not for save_model."
            ),
            code=(
                "import os\n"
                "from safetensors.torch import save_file\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    os.makedirs(folder, exist_ok=True)\n"
                "    program_path = os.path.join(folder, 'model.pt2')\n"
                "    weights_path = os.path.join(folder, 'weights.safetensors')\n"
                "    mode = model.training\n"
                "    try:\n"
                "        model.eval()\n"
                "        program = torch.export.export(model, (example_input,))\n"
                "    finally:\n"
                "        model.train(mode)\n"
                "    torch.export.save(program, program_path)\n"
                "    state, seen = {}, set()\n"
                "    for name, tensor in model.state_dict().items():\n"
                "        if tensor.data_ptr() in seen:\n"
                "            continue  # a tied name: its tensor is already stored\n"
                "        seen.add(tensor.data_ptr())\n"
                "        state[name] = tensor.detach().contiguous()\n"
                "    save_file(state, weights_path)\n"
                "    return {'program': program_path, 'weights': weights_path}\n"
            ),
        ),
        RightAnswer(
            name="eval-copy-strict-export",
            why=(
                "Exports a deep copy in eval mode (the caller's model is never switched, so "
                "there is no mode to restore) with torch.export.export(..., strict=True), and "
                "writes the weights first with save_model's defaults."
            ),
            code=(
                "import copy\n"
                "import pathlib\n"
                "import safetensors.torch\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    out = pathlib.Path(folder)\n"
                "    out.mkdir(parents=True, exist_ok=True)\n"
                "    weights = out / 'weights.safetensors'\n"
                "    safetensors.torch.save_model(model, weights)\n"
                "    frozen = copy.deepcopy(model).eval()\n"
                "    program = torch.export.export(frozen, (example_input,), strict=True)\n"
                "    torch.export.save(program, out / 'model.pt2')\n"
                "    return {'weights': weights, 'program': out / 'model.pt2'}\n"
            ),
        ),
        RightAnswer(
            name="deepcopy-export-dedup-by-storage",
            why="Exports an eval-mode deep copy (the caller's mode is never switched) and writes the state_dict with save_file, one name per shared tensor and every tensor contiguous.",
            code=(
                "import copy, os\n"
                "from safetensors.torch import save_file\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    os.makedirs(folder, exist_ok=True)\n"
                "    program_path = os.path.join(folder, 'model.pt2')\n"
                "    weights_path = os.path.join(folder, 'weights.safetensors')\n"
                "    frozen = copy.deepcopy(model).eval()\n"
                "    torch.export.save(torch.export.export(frozen, (example_input,)), program_path)\n"
                "    state, seen = {}, set()\n"
                "    for name, t in model.state_dict().items():\n"
                "        key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), tuple(t.stride()))\n"
                "        if key in seen:\n"
                "            continue\n"
                "        seen.add(key)\n"
                "        state[name] = t.detach().contiguous()\n"
                "    save_file(state, weights_path)\n"
                "    return {'program': program_path, 'weights': weights_path}\n"
            ),
        ),
        RightAnswer(
            name="weights-from-the-program-state",
            why=(
                "Takes the weights from the ExportedProgram's own state_dict (the same names "
                "and tensors: parameters and persistent buffers), one name per shared "
                "storage, made contiguous, and writes them with save_file."
            ),
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_file\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    folder = Path(folder)\n"
                "    folder.mkdir(parents=True, exist_ok=True)\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    try:\n"
                "        program = torch.export.export(model, (example_input,))\n"
                "    finally:\n"
                "        model.train(was_training)\n"
                "    torch.export.save(program, folder / 'model.pt2')\n"
                "    seen, weights = set(), {}\n"
                "    for name, t in program.state_dict.items():\n"
                "        if t.data_ptr() not in seen:\n"
                "            seen.add(t.data_ptr())\n"
                "            weights[name] = t.detach().contiguous()\n"
                "    save_file(weights, str(folder / 'weights.safetensors'))\n"
                "    return {'program': folder / 'model.pt2', 'weights': folder / 'weights.safetensors'}\n"
            ),
        ),
        RightAnswer(
            name="try-finally-metadata-force-contiguous",
            why=(
                "Restores the mode in a finally block right after exporting, and writes the "
                "weights with save_model(force_contiguous=True) and a metadata dict; returns "
                "Paths from dict()."
            ),
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    out = Path(folder)\n"
                "    out.mkdir(parents=True, exist_ok=True)\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    try:\n"
                "        torch.export.save(torch.export.export(model, (example_input,)), out / 'model.pt2')\n"
                "    finally:\n"
                "        model.train(was)\n"
                "    save_model(model, str(out / 'weights.safetensors'), metadata={'format': 'pt'},\n"
                "               force_contiguous=True)\n"
                "    return dict(program=out / 'model.pt2', weights=out / 'weights.safetensors')\n"
            ),
        ),
    ],
}
