"""Plausible wrong answers for 08_deployment's exercises."""

from autograder.mistakes import Mistake

# save_for_serving: the parts most wrong answers share (imports, an eval-mode export that
# restores the caller's mode), so that each mistake below differs from the solution in one
# place only.
_SERVE_HEAD = (
    "from pathlib import Path\n"
    "from safetensors.torch import save_file, save_model\n"
    "def save_for_serving(model, example_input, folder):\n"
    "    folder = Path(folder)\n"
    "    folder.mkdir(parents=True, exist_ok=True)\n"
)
_SERVE_EXPORT = (
    "    was_training = model.training\n"
    "    model.eval()\n"
    "    program = torch.export.export(model, (example_input,))\n"
    "    model.train(was_training)\n"
    "    torch.export.save(program, folder / 'model.pt2')\n"
)
_SERVE_RETURN = (
    "    return {'program': folder / 'model.pt2', 'weights': folder / 'weights.safetensors'}\n"
)
_SERVE_WEIGHTS = "    save_model(model, str(folder / 'weights.safetensors'))\n"

MISTAKES = {
    "safe_load": [
        Mistake(
            name="weights-only-false",
            message="weights_only=False lets the file run code while it loads: keep weights_only=True.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        return torch.load(path, map_location='cpu', weights_only=False)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="inspect-after-unsafe-load",
            message="Checking the type after an unsafe load is too late: the code already ran.",
            code=(
                "def safe_load(path):\n"
                "    obj = torch.load(path, map_location='cpu', weights_only=False)\n"
                "    return obj if isinstance(obj, dict) else None\n"
            ),
        ),
        Mistake(
            name="refusal-not-caught",
            message="torch.load(weights_only=True) raises pickle.UnpicklingError on a refused file: catch it and return None.",
            code=(
                "def safe_load(path):\n"
                "    return torch.load(path, map_location='cpu', weights_only=True)\n"
            ),
        ),
        Mistake(
            name="broad-except-no-map-location",
            message="A bare `except Exception` hides the real error (here: a GPU checkpoint without map_location).",
            code=(
                "def safe_load(path):\n"
                "    try:\n"
                "        return torch.load(path, weights_only=True)\n"
                "    except Exception:\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="catches-runtime-errors-too",
            message="A truncated or missing file is broken, not unsafe: catch only pickle.UnpicklingError and let other errors reach the caller.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        return torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except (pickle.UnpicklingError, RuntimeError, OSError):\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="check-then-unsafe-load",
            message="Load once: a safe check followed by a second, unsafe load reads a file that may have changed in between.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
                "    return torch.load(path, map_location='cpu', weights_only=False)\n"
            ),
        ),
        Mistake(
            name="loads-twice-safely",
            message="Load once: even with weights_only=True both times, a check load followed by "
            "a second load reads a file that may have changed in between (and an unsafe "
            "replacement then raises instead of giving None).",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
                "    return torch.load(path, map_location='cpu', weights_only=True)\n"
            ),
        ),
        Mistake(
            name="inspect-globals-then-load",
            message="get_unsafe_globals_in_checkpoint reads the file, and torch.load reads it "
            "again: the file can change between the two, so the check says nothing about what "
            "is loaded. Load once with weights_only=True and catch pickle.UnpicklingError.",
            code=(
                "def safe_load(path):\n"
                "    if torch.serialization.get_unsafe_globals_in_checkpoint(path):\n"
                "        return None\n"
                "    return torch.load(path, map_location='cpu', weights_only=True)\n"
            ),
        ),
        Mistake(
            name="dicts-only",
            message="Return whatever plain data the file holds (a tensor, a list), not only dicts.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        obj = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
                "    return obj if isinstance(obj, dict) else None\n"
            ),
        ),
        Mistake(
            name="float32-copy",
            message="Return the tensors as saved: converting them to float32 loses int64 counters and float64 precision.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        obj = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
                "    def convert(value):\n"
                "        if isinstance(value, torch.Tensor):\n"
                "            return value.float()\n"
                "        if isinstance(value, dict):\n"
                "            return {k: convert(v) for k, v in value.items()}\n"
                "        return value\n"
                "    return convert(obj)\n"
            ),
        ),
        Mistake(
            name="no-map-location-narrow-except",
            message="A checkpoint saved on a GPU loads onto the GPU unless map_location='cpu' says otherwise.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        return torch.load(path, weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="missing-file-is-none",
            message="A missing file is not an unsafe one: let the error reach the caller instead of returning None.",
            code=(
                "import os, pickle\n"
                "def safe_load(path):\n"
                "    if not os.path.exists(path):\n"
                "        return None\n"
                "    try:\n"
                "        return torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="assumes-a-state-dict",
            message="The file may hold a single tensor or a list: return what torch.load gave, without assuming a dict.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        obj = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
                "    return {k: v.cpu() for k, v in obj.items()}\n"
            ),
        ),
        Mistake(
            name="loads-onto-the-gpu-when-there-is-one",
            message="Load onto the CPU, as the text says, not onto whatever accelerator the machine has.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    where = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n"
                "    try:\n"
                "        return torch.load(path, map_location=where, weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="empty-container-is-none",
            message="An empty state_dict or list is still plain data: return what the file holds, and None only when torch.load refuses it.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        obj = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
                "    if isinstance(obj, (dict, list, tuple)) and not obj:\n"
                "        return None\n"
                "    return obj\n"
            ),
        ),
        Mistake(
            name="default-device-instead-of-map-location",
            message="torch.set_default_device('cpu') decides where new tensors go, not where a file's tensors load (and it changes the whole program): pass map_location='cpu' to torch.load.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    torch.set_default_device('cpu')\n"
                "    try:\n"
                "        return torch.load(path, weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="allows-extra-classes",
            message="add_safe_globals trusts those classes for every later torch.load in the program: load with weights_only=True and nothing else.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    torch.serialization.add_safe_globals([set, frozenset])\n"
                "    try:\n"
                "        return torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="empty-file-is-none",
            message="An empty or cut-short file raises EOFError: it is broken, not unsafe, so let that error reach the caller; catch only pickle.UnpicklingError.",
            code=(
                "import pickle\n"
                "def safe_load(path):\n"
                "    try:\n"
                "        return torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except (pickle.UnpicklingError, EOFError, ValueError):\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="warnings-silenced-for-good",
            message="warnings.filterwarnings('ignore') silences every later warning of the program: put it in a `with warnings.catch_warnings():` block, or leave the warnings alone.",
            code=(
                "import pickle, warnings\n"
                "def safe_load(path):\n"
                "    warnings.filterwarnings('ignore')\n"
                "    try:\n"
                "        return torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except pickle.UnpicklingError:\n"
                "        return None\n"
            ),
        ),
        Mistake(
            name="filters-errors-by-message",
            message="Catch pickle.UnpicklingError by its type, not every exception picked by the words in its message: a missing file whose name holds those words would come back as None.",
            code=(
                "def safe_load(path):\n"
                "    try:\n"
                "        return torch.load(path, map_location='cpu', weights_only=True)\n"
                "    except Exception as err:\n"
                "        if 'weights_only' in str(err) or 'Unsupported' in str(err):\n"
                "            return None\n"
                "        raise\n"
            ),
        ),
    ],
    "load_checkpoint_cpu": [
        Mistake(
            name="strict-load",
            message="The default strict=True raises on any mismatch; pass strict=False and report the keys.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    model.load_state_dict(state)\n"
                "    return [], []\n"
            ),
        ),
        Mistake(
            name="no-map-location",
            message="A checkpoint saved on a GPU loads onto the GPU unless map_location says otherwise.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return result.missing_keys, result.unexpected_keys\n"
            ),
        ),
        Mistake(
            name="swapped-lists",
            message="Missing keys are the model's names the checkpoint lacks; unexpected keys are the checkpoint's extras.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return result.unexpected_keys, result.missing_keys\n"
            ),
        ),
        Mistake(
            name="reports-without-loading",
            message="Comparing key names is half the job: load_state_dict(strict=False) copies the matching tensors.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    mine = set(model.state_dict())\n"
                "    return sorted(mine - set(state)), sorted(set(state) - mine)\n"
            ),
        ),
        Mistake(
            name="named-parameters-keys",
            message="A state_dict holds buffers next to parameters: compare with model.state_dict()'s keys, not named_parameters().",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    model.load_state_dict(state, strict=False)\n"
                "    mine = {name for name, _ in model.named_parameters()}\n"
                "    return sorted(mine - set(state)), sorted(set(state) - mine)\n"
            ),
        ),
        Mistake(
            name="counts-non-persistent-buffers",
            message="A non-persistent buffer is not in the state_dict, so no checkpoint can miss it: compare with model.state_dict()'s keys.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    model.load_state_dict(state, strict=False)\n"
                "    mine = {n for n, _ in model.named_parameters()} | {n for n, _ in model.named_buffers()}\n"
                "    return sorted(mine - set(state)), sorted(set(state) - mine)\n"
            ),
        ),
        Mistake(
            name="leaves-model-in-eval",
            message="Loading weights does not change the model's mode: leave model.train()/eval() to the caller.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    model.eval()  # ready for inference\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="weights-only-false",
            message="Keep weights_only=True: a checkpoint from elsewhere can run code when it is unpickled.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=False)\n"
                "    state = {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="copies-parameters-only",
            message="A state_dict holds buffers too (BatchNorm's running statistics): load it with load_state_dict(strict=False) rather than copying the parameters by hand.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    model_keys = list(model.state_dict())\n"
                "    with torch.no_grad():\n"
                "        for name, p in model.named_parameters():\n"
                "            if name in state:\n"
                "                p.copy_(state[name])\n"
                "    missing = [k for k in model_keys if k not in state]\n"
                "    unexpected = [k for k in state if k not in model_keys]\n"
                "    return missing, unexpected\n"
            ),
        ),
        Mistake(
            name="always-back-to-train",
            message="Leave the mode alone: model.train() at the end switches a model that came in eval mode to training.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    model.eval()\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    model.train()\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="filters-to-model-keys",
            message="Filtering the checkpoint to the model's keys hides the unexpected ones: load it as it is and report both lists.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    own = model.state_dict()\n"
                "    state = {k: v for k, v in state.items() if k in own}\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="returns-sets",
            message="Return two lists of key names, not sets.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    mine = set(model.state_dict())\n"
                "    model.load_state_dict(state, strict=False)\n"
                "    return mine - set(state), set(state) - mine\n"
            ),
        ),
        Mistake(
            name="assign-replaces-parameters",
            message="load_state_dict(..., assign=True) replaces the model's parameters instead of copying into them.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False, assign=True)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="grad-off-for-good",
            message="torch.set_grad_enabled(False) switches autograd off for the caller's later code too: load_state_dict needs no switch at all.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    torch.set_grad_enabled(False)\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="freezes-parameters",
            message="Loading weights leaves requires_grad alone: model.requires_grad_(False) freezes the caller's model for its next training step.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    model.requires_grad_(False)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="reseeds-the-generator",
            message="Loading a checkpoint draws no random numbers: torch.manual_seed inside it changes every later random number of the caller.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    torch.manual_seed(0)\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="zero-grad-first",
            message="Leave the model otherwise as you found it: model.zero_grad() throws away the caller's gradients.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    model.zero_grad()\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="strips-module-prefix-too",
            message="Report the checkpoint's keys as they are: renaming them first (removing 'module.') loads tensors the caller did not ask for and hides the mismatch.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    state = {k.removeprefix('module.'): v for k, v in state.items()}\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="float32-state",
            message="Load the tensors as they are: .float() rounds a float64 checkpoint before load_state_dict copies it into the model.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    state = {k: v.float() for k, v in state.items()}\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
        Mistake(
            name="unfreezes-frozen-layers",
            message="requires_grad_(True) at the end switches on every parameter, also the ones the caller froze: load_state_dict leaves the flags alone, so leave them alone too.",
            code=(
                "def load_checkpoint_cpu(path, model):\n"
                "    state = torch.load(path, map_location='cpu', weights_only=True)\n"
                "    model.requires_grad_(False)\n"
                "    result = model.load_state_dict(state, strict=False)\n"
                "    model.requires_grad_(True)\n"
                "    return list(result.missing_keys), list(result.unexpected_keys)\n"
            ),
        ),
    ],
    "strip_module_prefix": [
        Mistake(
            name="replace-anywhere",
            message="str.replace('module.', '') also edits names like 'attn_module.weight'; remove the prefix only.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k.replace('module.', ''): v for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="lstrip-characters",
            message="str.lstrip('module.') strips the characters m, o, d, u, l, e and '.', not the word.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k.lstrip('module.'): v for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="slice-every-key",
            message="key[7:] also cuts keys that never had the prefix: check startswith first (or use removeprefix).",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k[len('module.'):]: v for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="first-key-decides",
            message="Decide per key, not from the first key: checkpoints can mix prefixed and plain names.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    if not next(iter(state_dict), '').startswith('module.'):\n"
                "        return dict(state_dict)\n"
                "    return {k[len('module.'):]: v for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="renames-in-place",
            message="Return a new dict; renaming the caller's keys in place changes their checkpoint.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    for k in list(state_dict):\n"
                "        state_dict[k.removeprefix('module.')] = state_dict.pop(k)\n"
                "    return state_dict\n"
            ),
        ),
        Mistake(
            name="strips-every-prefix",
            message="Remove one leading 'module.': 'module.module.fc.weight' becomes 'module.fc.weight'.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    out = {}\n"
                "    for key, value in state_dict.items():\n"
                "        while key.startswith('module.'):\n"
                "            key = key[len('module.'):]\n"
                "        out[key] = value\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="regex-unescaped-dot",
            message="In a regular expression '.' matches any character: r'^module.' also eats 'modules' and 'module_'; escape it (r'^module\\.').",
            code=(
                "import re\n"
                "def strip_module_prefix(state_dict):\n"
                "    return {re.sub('^module.', '', k): v for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="contiguous-copies",
            message="Keep the values as they are: contiguous() copies a transposed tensor, so the caller's tensor is no longer the one returned.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k.removeprefix('module.'): v.contiguous() for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="strip-any-wrapper-prefix",
            message="Only 'module.' goes: '_orig_mod.module.fc.weight' does not start with it, so it stays as it is.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    out = {}\n"
                "    for key, value in state_dict.items():\n"
                "        key = key.removeprefix('_orig_mod.')\n"
                "        out[key.removeprefix('module.')] = value\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="returns-input-when-nothing-to-strip",
            message="Return a new dict even when no key has the prefix: the caller's checkpoint must not be the object you hand back.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    if not any(k.startswith('module.') for k in state_dict):\n"
                "        return state_dict\n"
                "    return {k.removeprefix('module.'): v for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="unzip-items",
            message="zip(*state_dict.items()) has nothing to unpack for an empty state_dict: loop over the items instead.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    keys, values = zip(*state_dict.items())\n"
                "    return dict(zip((k.removeprefix('module.') for k in keys), values))\n"
            ),
        ),
        Mistake(
            name="float-values",
            message="Keep the values as they are: .float() turns float16 weights and int64 counters into float32 copies.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k.removeprefix('module.'): v.float() for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="detach-values",
            message="Keep the values as they are: .detach() returns another tensor object (a Parameter stops being one).",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k.removeprefix('module.'): v.detach() for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="sorted-keys",
            message="Keep the input's order: sorting the keys reorders the state_dict.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k.removeprefix('module.'): state_dict[k] for k in sorted(state_dict)}\n"
            ),
        ),
        Mistake(
            name="consume-prefix-on-a-copy",
            message="consume_prefix_in_state_dict_if_present renames in place by popping and re-adding: the renamed keys move to the end.",
            code=(
                "from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present\n"
                "def strip_module_prefix(state_dict):\n"
                "    out = dict(state_dict)\n"
                "    consume_prefix_in_state_dict_if_present(out, 'module.')\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="prefix-without-dot",
            message="startswith('module') also matches 'modules.' and 'module_norm.': test for 'module.' with its dot (str.removeprefix('module.')).",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {(k[7:] if k.startswith('module') else k): v for k, v in state_dict.items()}\n"
            ),
        ),
        Mistake(
            name="tensors-only",
            message="Keep every entry: a module's extra state is a value of the state_dict too, and it need not be a tensor.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k.removeprefix('module.'): v for k, v in state_dict.items() if isinstance(v, torch.Tensor)}\n"
            ),
        ),
        Mistake(
            name="cpu-values",
            message="Keep the values as they are: .cpu() copies a GPU tensor and fails on a meta one.",
            code=(
                "def strip_module_prefix(state_dict):\n"
                "    return {k.removeprefix('module.'): (v.cpu() if isinstance(v, torch.Tensor) else v) for k, v in state_dict.items()}\n"
            ),
        ),
    ],
    "export_gated": [
        Mistake(
            name="trace-data-dependent-branch",
            message="torch.jit.trace records only the branch the example took; the other branch is lost.",
            code=(
                "def export_gated(model, example):\n"
                "    model.eval()\n"
                "    return torch.jit.trace(model, example)\n"
            ),
        ),
        Mistake(
            name="export-in-train-mode",
            message="Call model.eval() before exporting: the graph otherwise keeps Dropout active.",
            code=(
                "class _Wrapper(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.gated.gate(x), self.gated.pos, self.gated.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    return torch.export.export(_Wrapper(model), (example,))\n"
            ),
        ),
        Mistake(
            name="export-python-if",
            message="torch.export cannot follow a Python if on a tensor's value; write the branch with torch.cond.",
            code=(
                "def export_gated(model, example):\n"
                "    return torch.export.export(model.eval(), (example,))\n"
            ),
        ),
        Mistake(
            name="legacy-torchscript",
            message="torch.jit.script keeps the branch but is the legacy path; return torch.export's ExportedProgram.",
            code=(
                "import warnings\n"
                "def export_gated(model, example):\n"
                "    with warnings.catch_warnings():\n"
                "        warnings.simplefilter('ignore')\n"
                "        return torch.jit.script(model.eval())\n"
            ),
        ),
        Mistake(
            name="leaves-model-in-eval",
            message="Restore the mode you found: note model.training, export in eval mode, then model.train(was_training).",
            code=(
                "class _Wrapper(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.gated.gate(x), self.gated.pos, self.gated.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    model.eval()\n"
                "    return torch.export.export(_Wrapper(model), (example,))\n"
            ),
        ),
        Mistake(
            name="always-back-to-train",
            message="Restore the mode the model had: model.train() at the end switches a model that came in eval mode to training.",
            code=(
                "class _Wrapper(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.gated.gate(x), self.gated.pos, self.gated.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    model.eval()\n"
                "    program = torch.export.export(_Wrapper(model), (example,))\n"
                "    model.train()\n"
                "    return program\n"
            ),
        ),
        Mistake(
            name="gate-from-first-entry",
            message="Use model.gate(x), the whole batch's mean: one entry's sign is not the batch's decision.",
            code=(
                "class _Wrapper(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.cond(x[0, 0] > 0, self.gated.pos, self.gated.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(_Wrapper(model), (example,))\n"
                "    model.train(was_training)\n"
                "    return program\n"
            ),
        ),
        Mistake(
            name="per-row-where",
            message="GatedNet sends the whole batch one way, decided by the batch's mean: a per-row torch.where is another model.",
            code=(
                "class _Wrapper(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        rows = x.mean(dim=1, keepdim=True) > 0\n"
                "        return torch.where(rows, self.gated.pos(x), self.gated.neg(x))\n"
                "def export_gated(model, example):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(_Wrapper(model), (example,))\n"
                "    model.train(was_training)\n"
                "    return program\n"
            ),
        ),
        Mistake(
            name="dynamic-batch-dim",
            message="A dynamic batch dimension cannot be exported from an example with one row (export specialises sizes 0 and 1): leave out dynamic_shapes, the text asks only for inputs of example's shape.",
            code=(
                "class _Wrapper(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.gated.gate(x), self.gated.pos, self.gated.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    batch = torch.export.Dim('batch')\n"
                "    try:\n"
                "        return torch.export.export(_Wrapper(model), (example,),\n"
                "                                   dynamic_shapes={'x': {0: batch}})\n"
                "    finally:\n"
                "        model.train(was_training)\n"
            ),
        ),
        Mistake(
            name="restores-root-flag-only",
            message="model.training = was_training sets the flag of the root only; its submodules stay in eval mode: use model.train(was_training).",
            code=(
                "class _Wrapper(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.gated.gate(x), self.gated.pos, self.gated.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(_Wrapper(model), (example,))\n"
                "    model.training = was_training\n"
                "    return program\n"
            ),
        ),
        Mistake(
            name="mean-gate-by-hand",
            message="Decide with model.gate(x): a copy of its rule by hand is another model as soon as the gate differs.",
            code=(
                "class _Wrapper(nn.Module):\n"
                "    def __init__(self, gated):\n"
                "        super().__init__()\n"
                "        self.gated = gated\n"
                "    def forward(self, x):\n"
                "        return torch.cond(x.mean() > 0, self.gated.pos, self.gated.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(_Wrapper(model), (example,))\n"
                "    model.train(was_training)\n"
                "    return program\n"
            ),
        ),
        Mistake(
            name="reseeds-the-generator",
            message="Exporting in eval mode draws no random numbers: torch.manual_seed inside export_gated changes every later random number of the caller.",
            code=(
                "class _W(nn.Module):\n"
                "    def __init__(self, g):\n"
                "        super().__init__()\n"
                "        self.g = g\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.g.gate(x), self.g.pos, self.g.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    torch.manual_seed(0)\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    try:\n"
                "        return torch.export.export(_W(model), (example,))\n"
                "    finally:\n"
                "        model.train(was)\n"
            ),
        ),
        Mistake(
            name="grad-off-for-good",
            message="torch.set_grad_enabled(False) stays switched for the caller's later code: export needs no switch (or use a `with torch.no_grad():` block).",
            code=(
                "class _W(nn.Module):\n"
                "    def __init__(self, g):\n"
                "        super().__init__()\n"
                "        self.g = g\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.g.gate(x), self.g.pos, self.g.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    torch.set_grad_enabled(False)\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(_W(model), (example,))\n"
                "    model.train(was)\n"
                "    return program\n"
            ),
        ),
        Mistake(
            name="freezes-parameters",
            message="Exporting reads the model: requires_grad_(False) freezes the caller's parameters for good.",
            code=(
                "class _W(nn.Module):\n"
                "    def __init__(self, g):\n"
                "        super().__init__()\n"
                "        self.g = g\n"
                "    def forward(self, x):\n"
                "        return torch.cond(self.g.gate(x), self.g.pos, self.g.neg, (x,))\n"
                "def export_gated(model, example):\n"
                "    was = model.training\n"
                "    model.eval().requires_grad_(False)\n"
                "    program = torch.export.export(_W(model), (example,))\n"
                "    model.train(was)\n"
                "    return program\n"
            ),
        ),
    ],
    "onnx_round_trip": [
        Mistake(
            name="exact-equality",
            message="Two runtimes never agree bit for bit: compare within a tolerance, not with torch.equal.",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, torch.equal(out, expected)\n"
            ),
        ),
        Mistake(
            name="train-mode",
            message="Without model.eval() the PyTorch side runs Dropout and batch statistics: the comparison fails.",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, torch.allclose(out, expected, rtol=rtol, atol=atol)\n"
            ),
        ),
        Mistake(
            name="ignores-tolerance-arguments",
            message="Pass rtol and atol on to torch.allclose; its own defaults are not the caller's tolerance.",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, torch.allclose(out, expected)\n"
            ),
        ),
        Mistake(
            name="returns-numpy",
            message="ONNX Runtime returns NumPy arrays: convert with torch.from_numpy.",
            code=(
                "import numpy as np\n"
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = session.run(None, {name: x.detach().cpu().numpy()})[0]\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu().numpy()\n"
                "    return out, bool(np.allclose(out, expected, rtol=rtol, atol=atol))\n"
            ),
        ),
        Mistake(
            name="swapped-tolerances",
            message="rtol is the relative tolerance and atol the absolute one: passing them the other way round judges large outputs wrongly.",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, torch.allclose(out, expected, rtol=atol, atol=rtol)\n"
            ),
        ),
        Mistake(
            name="absolute-gap-only",
            message="Compare with |a - b| <= atol + rtol * |b|: an absolute gap alone ignores rtol, which large outputs need.",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, (out - expected).abs().max().item() <= atol\n"
            ),
        ),
        Mistake(
            name="numpy-without-detach",
            message="x.numpy() refuses a tensor that requires grad (and one on a GPU): hand ONNX Runtime x.detach().cpu().numpy().",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, torch.allclose(out, expected, rtol=rtol, atol=atol)\n"
            ),
        ),
        Mistake(
            name="matches-as-tensor",
            message="matches should be a bool: (...).all() gives a one-element tensor; use torch.allclose or .item().",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, ((out - expected).abs() <= atol + rtol * expected.abs()).all()\n"
            ),
        ),
        Mistake(
            name="argmax-agreement",
            message="Same predicted classes is not the same outputs: compare the outputs themselves within rtol and atol.",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, bool((out.argmax(1) == expected.argmax(1)).all())\n"
            ),
        ),
        Mistake(
            name="grad-off-for-good",
            message="torch.set_grad_enabled(False) stays switched for the caller's later code: compute the reference under `with torch.no_grad():`.",
            code=(
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    torch.set_grad_enabled(False)\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, torch.allclose(out, expected, rtol=rtol, atol=atol)\n"
            ),
        ),
        Mistake(
            name="warnings-silenced-for-good",
            message="warnings.simplefilter('ignore') silences every later warning of the program: put it in a `with warnings.catch_warnings():` block.",
            code=(
                "import warnings\n"
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    warnings.simplefilter('ignore')\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True, verbose=False)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    name = session.get_inputs()[0].name\n"
                "    out = torch.from_numpy(session.run(None, {name: x.detach().cpu().numpy()})[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    return out, torch.allclose(out, expected, rtol=rtol, atol=atol)\n"
            ),
        ),
        Mistake(
            name="tolerance-scaled-by-largest-output",
            message="Compare each element within atol + rtol * |its own expected value| (torch.allclose): a tolerance scaled by the largest output lets the small outputs drift.",
            code=(
                "import onnxruntime as ort\n"
                "def onnx_round_trip(model, x, path, rtol=1e-4, atol=1e-5):\n"
                "    model.eval()\n"
                "    torch.onnx.export(model, (x,), path, dynamo=True)\n"
                "    session = ort.InferenceSession(path, providers=['CPUExecutionProvider'])\n"
                "    feed = {session.get_inputs()[0].name: x.detach().cpu().numpy()}\n"
                "    onnx_out = torch.from_numpy(session.run(None, feed)[0])\n"
                "    with torch.no_grad():\n"
                "        expected = model(x).cpu()\n"
                "    gap = (onnx_out - expected).abs().max().item()\n"
                "    return onnx_out, gap <= atol + rtol * expected.abs().max().item()\n"
            ),
        ),
    ],
    "quantize_report": [
        Mistake(
            name="quantises-callers-model",
            message="Quantise a copy (copy.deepcopy): the caller's float32 model must survive.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    model.eval()\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    def accuracy(net):\n"
                "        with torch.no_grad():\n"
                "            return (net(x).argmax(dim=1) == y).float().mean().item()\n"
                "    size_fp32, acc_fp32 = nbytes(model), accuracy(model)\n"
                "    int8_model = quantize_int8(model)\n"
                "    return {'size_fp32': size_fp32, 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': acc_fp32, 'acc_int8': accuracy(int8_model)}\n"
            ),
        ),
        Mistake(
            name="counts-parameters",
            message="numel() * element_size() does not see quantised weights; serialise the state_dict and count bytes.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        return sum(p.numel() * p.element_size() for p in net.parameters())\n"
                "    def accuracy(net):\n"
                "        with torch.no_grad():\n"
                "            return (net(x).argmax(dim=1) == y).float().mean().item()\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': accuracy(model), 'acc_int8': accuracy(int8_model)}\n"
            ),
        ),
        Mistake(
            name="half-not-int8",
            message="model.half() halves the size; int8 quantisation quarters it.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    model.eval()\n"
                "    small = copy.deepcopy(model).half()\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    with torch.no_grad():\n"
                "        acc = (model(x).argmax(dim=1) == y).float().mean().item()\n"
                "        acc_small = (small(x.half()).argmax(dim=1) == y).float().mean().item()\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(small),\n"
                "            'acc_fp32': acc, 'acc_int8': acc_small}\n"
            ),
        ),
        Mistake(
            name="train-mode-accuracy",
            message="Evaluate in eval mode: in training mode Dropout changes the predictions at random.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    def accuracy(net):\n"
                "        with torch.no_grad():\n"
                "            return (net(x).argmax(dim=1) == y).float().mean().item()\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': accuracy(model), 'acc_int8': accuracy(int8_model)}\n"
            ),
        ),
        Mistake(
            name="int8-accuracy-on-fp32-model",
            message="acc_int8 is the quantised copy's accuracy: evaluating the float32 model twice hides what int8 costs.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    with torch.no_grad():\n"
                "        acc = (model(x).argmax(dim=1) == y).float().mean().item()\n"
                "    model.train(was_training)\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': acc, 'acc_int8': acc}\n"
            ),
        ),
        Mistake(
            name="leaves-model-in-eval",
            message="Give the model back in the mode it came in: note model.training and call model.train(was_training) at the end.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    def accuracy(net):\n"
                "        with torch.no_grad():\n"
                "            return (net(x).argmax(dim=1) == y).float().mean().item()\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': accuracy(model), 'acc_int8': accuracy(int8_model)}\n"
            ),
        ),
        Mistake(
            name="copy-before-eval",
            message="A copy made before model.eval() is still in training mode: evaluate the int8 copy in eval mode too.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    model.eval()\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    def accuracy(net):\n"
                "        with torch.no_grad():\n"
                "            return (net(x).argmax(dim=1) == y).float().mean().item()\n"
                "    report = {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "              'acc_fp32': accuracy(model), 'acc_int8': accuracy(int8_model)}\n"
                "    model.train(was_training)\n"
                "    return report\n"
            ),
        ),
        Mistake(
            name="autograd-on",
            message="Measure accuracy under torch.no_grad(): no graph is needed to count right answers.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    def accuracy(net):\n"
                "        return (net(x).argmax(dim=1) == y).float().mean().item()\n"
                "    report = {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "              'acc_fp32': accuracy(model), 'acc_int8': accuracy(int8_model)}\n"
                "    model.train(was_training)\n"
                "    return report\n"
            ),
        ),
        Mistake(
            name="accuracy-as-tensor",
            message="An accuracy is a Python float: .item() turns the one-element tensor into one.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    def accuracy(net):\n"
                "        with torch.no_grad():\n"
                "            return (net(x).argmax(dim=1) == y).float().mean()\n"
                "    report = {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "              'acc_fp32': accuracy(model), 'acc_int8': accuracy(int8_model)}\n"
                "    model.train(was_training)\n"
                "    return report\n"
            ),
        ),
        Mistake(
            name="accuracy-over-fixed-batch",
            message="Divide by the number of rows of x (len(y)), not by a fixed batch size: the last or only batch may be smaller.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    def accuracy(net):\n"
                "        with torch.no_grad():\n"
                "            return (net(x).argmax(dim=1) == y).sum().item() / max(len(y), 20)\n"
                "    report = {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "              'acc_fp32': accuracy(model), 'acc_int8': accuracy(int8_model)}\n"
                "    model.train(was_training)\n"
                "    return report\n"
            ),
        ),
        Mistake(
            name="sizes-in-kib",
            message="Report bytes (ints), not KiB.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def kib(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes / 1024\n"
                "    with torch.no_grad():\n"
                "        acc = [(net(x).argmax(dim=1) == y).float().mean().item() for net in (model, int8_model)]\n"
                "    model.train(was_training)\n"
                "    return {'size_fp32': kib(model), 'size_int8': kib(int8_model),\n"
                "            'acc_fp32': acc[0], 'acc_int8': acc[1]}\n"
            ),
        ),
        Mistake(
            name="whole-model-pickle-size",
            message="Measure the serialised state_dict: torch.save(model) pickles the object, class references and all.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net, buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    with torch.no_grad():\n"
                "        acc = [(net(x).argmax(dim=1) == y).float().mean().item() for net in (model, int8_model)]\n"
                "    model.train(was_training)\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': acc[0], 'acc_int8': acc[1]}\n"
            ),
        ),
        Mistake(
            name="correct-count-not-fraction",
            message="Accuracy is a fraction: divide the number of correct rows by the number of rows.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    with torch.no_grad():\n"
                "        acc = [(net(x).argmax(dim=1) == y).sum().item() for net in (model, int8_model)]\n"
                "    model.train(was_training)\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': acc[0], 'acc_int8': acc[1]}\n"
            ),
        ),
        Mistake(
            name="accuracy-with-autograd",
            message="Measure the accuracies under torch.no_grad(): no graph is needed.",
            code=(
                "def quantize_report(model, x, y):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    int8_model = quantize_int8(copy.deepcopy(model))\n"
                "    def nbytes(net):\n"
                "        buffer = io.BytesIO()\n"
                "        torch.save(net.state_dict(), buffer)\n"
                "        return buffer.getbuffer().nbytes\n"
                "    acc = [(net(x).argmax(dim=1) == y).float().mean().item() for net in (model, int8_model)]\n"
                "    model.train(was_training)\n"
                "    return {'size_fp32': nbytes(model), 'size_int8': nbytes(int8_model),\n"
                "            'acc_fp32': acc[0], 'acc_int8': acc[1]}\n"
            ),
        ),
        Mistake(
            name="shallow-copy",
            message="copy.copy shares the layers with the caller's model, so quantising the copy quantises the original: use copy.deepcopy.",
            code=(
                "import copy\n"
                "def _nbytes(net):\n"
                "    buffer = io.BytesIO()\n"
                "    torch.save(net.state_dict(), buffer)\n"
                "    return buffer.getbuffer().nbytes\n"
                "def quantize_report(model, x, y):\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    int8 = quantize_int8(copy.copy(model))\n"
                "    with torch.no_grad():\n"
                "        a32 = (model(x).argmax(1) == y).float().mean().item()\n"
                "        a8 = (int8(x).argmax(1) == y).float().mean().item()\n"
                "    out = {'size_fp32': _nbytes(model), 'size_int8': _nbytes(int8), 'acc_fp32': a32, 'acc_int8': a8}\n"
                "    model.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="mean-of-batch-accuracies",
            message="The mean of per-batch accuracies weighs a short last batch like a full one: count the correct rows over all of x and divide by N.",
            code=(
                "import copy\n"
                "def _nbytes(net):\n"
                "    buffer = io.BytesIO()\n"
                "    torch.save(net.state_dict(), buffer)\n"
                "    return buffer.getbuffer().nbytes\n"
                "def quantize_report(model, x, y):\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    int8 = quantize_int8(copy.deepcopy(model))\n"
                "    def acc(net):\n"
                "        accs = []\n"
                "        with torch.no_grad():\n"
                "            for i in range(0, len(x), 64):\n"
                "                accs.append((net(x[i:i+64]).argmax(1) == y[i:i+64]).float().mean().item())\n"
                "        return sum(accs) / len(accs)\n"
                "    out = {'size_fp32': _nbytes(model), 'size_int8': _nbytes(int8), 'acc_fp32': acc(model), 'acc_int8': acc(int8)}\n"
                "    model.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="rounded-accuracy",
            message="Return the accuracy as it is: rounding to two decimals is a report's job, not the measurement's.",
            code=(
                "import copy\n"
                "def _nbytes(net):\n"
                "    buffer = io.BytesIO()\n"
                "    torch.save(net.state_dict(), buffer)\n"
                "    return buffer.getbuffer().nbytes\n"
                "def quantize_report(model, x, y):\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    int8 = quantize_int8(copy.deepcopy(model))\n"
                "    with torch.no_grad():\n"
                "        a32 = (model(x).argmax(1) == y).float().mean().item()\n"
                "        a8 = (int8(x).argmax(1) == y).float().mean().item()\n"
                "    out = {'size_fp32': _nbytes(model), 'size_int8': _nbytes(int8), 'acc_fp32': round(a32, 2), 'acc_int8': round(a8, 2)}\n"
                "    model.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="grad-off-for-good",
            message="torch.set_grad_enabled(False) stays switched for the caller's later code: evaluate under `with torch.no_grad():`.",
            code=(
                "import copy\n"
                "def _nbytes(net):\n"
                "    buffer = io.BytesIO()\n"
                "    torch.save(net.state_dict(), buffer)\n"
                "    return buffer.getbuffer().nbytes\n"
                "def quantize_report(model, x, y):\n"
                "    torch.set_grad_enabled(False)\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    int8 = quantize_int8(copy.deepcopy(model))\n"
                "    a32 = (model(x).argmax(1) == y).float().mean().item()\n"
                "    a8 = (int8(x).argmax(1) == y).float().mean().item()\n"
                "    out = {'size_fp32': _nbytes(model), 'size_int8': _nbytes(int8), 'acc_fp32': a32, 'acc_int8': a8}\n"
                "    model.train(was)\n"
                "    return out\n"
            ),
        ),
        Mistake(
            name="reseeds-the-generator",
            message="The report draws no random numbers: torch.manual_seed inside it changes every later random number of the caller.",
            code=(
                "import copy\n"
                "def _nbytes(net):\n"
                "    buffer = io.BytesIO()\n"
                "    torch.save(net.state_dict(), buffer)\n"
                "    return buffer.getbuffer().nbytes\n"
                "def quantize_report(model, x, y):\n"
                "    torch.manual_seed(0)\n"
                "    was = model.training\n"
                "    model.eval()\n"
                "    int8 = quantize_int8(copy.deepcopy(model))\n"
                "    with torch.no_grad():\n"
                "        a32 = (model(x).argmax(1) == y).float().mean().item()\n"
                "        a8 = (int8(x).argmax(1) == y).float().mean().item()\n"
                "    out = {'size_fp32': _nbytes(model), 'size_int8': _nbytes(int8), 'acc_fp32': a32, 'acc_int8': a8}\n"
                "    model.train(was)\n"
                "    return out\n"
            ),
        ),
    ],
    "measure_latency_ms": [
        Mistake(
            name="no-warm-up",
            message="The first calls pay one-off costs: run `warmup` untimed calls before timing.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup + runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="mean-not-median",
            message="One hiccup drags the mean up; the median is what a typical call sees.",
            code=(
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        start = time.perf_counter()\n"
                "        for _ in range(runs):\n"
                "            fn(x)\n"
                "    return (time.perf_counter() - start) * 1000 / runs\n"
            ),
        ),
        Mistake(
            name="minimum-not-median",
            message="The minimum is the luckiest call; report the median.",
            code=(
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return min(times)\n"
            ),
        ),
        Mistake(
            name="autograd-on",
            message="Time inference as inference: under torch.no_grad() no graph is recorded.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    for _ in range(warmup):\n"
                "        fn(x)\n"
                "    times = []\n"
                "    for _ in range(runs):\n"
                "        start = time.perf_counter()\n"
                "        fn(x)\n"
                "        times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="seconds-not-milliseconds",
            message="Return milliseconds: multiply perf_counter's seconds by 1000.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            times.append(time.perf_counter() - start)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="warm-up-with-autograd",
            message="Make every call under torch.no_grad(), the warm-up calls included.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    for _ in range(warmup):\n"
                "        fn(x)\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="autograd-switched-off-for-good",
            message="torch.set_grad_enabled(False) stays off after the function returns: use `with torch.no_grad():`.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    torch.set_grad_enabled(False)\n"
                "    for _ in range(warmup):\n"
                "        fn(x)\n"
                "    times = []\n"
                "    for _ in range(runs):\n"
                "        start = time.perf_counter()\n"
                "        fn(x)\n"
                "        times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="no-cuda-synchronize",
            message="On a GPU fn(x) returns before the work has run: call torch.cuda.synchronize() before reading the clock.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="synchronize-before-the-call",
            message="Synchronize after fn(x), before the clock is read: a synchronize before the call leaves the call's own work unfinished.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    on_gpu = x.device.type == 'cuda'\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            if on_gpu:\n"
                "                torch.cuda.synchronize()\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="fixed-default-counts",
            message="Use the defaults the exercise gives (warmup=5, runs=20): other defaults time another experiment.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=3, runs=10):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.device.type == 'cuda':\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="trimmed-mean",
            message="A mean without the fastest and slowest call is still a mean: two hiccups drag it up. Report the median.",
            code=(
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    times.sort()\n"
                "    kept = times[1:-1] if len(times) > 2 else times\n"
                "    return sum(kept) / len(kept)\n"
            ),
        ),
        Mistake(
            name="device-equals-cuda",
            message="x.device == torch.device('cuda') is False for cuda:0 (the index differs): test x.device.type == 'cuda' or x.is_cuda.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    on_gpu = x.device == torch.device('cuda')\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if on_gpu:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="detached-input",
            message="Call fn with x itself, as the text says, not a detached copy of it.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    x = x.detach()\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="process-time-clock",
            message="time.process_time() counts this process's CPU time, not the wall-clock time a caller waits: use time.perf_counter().",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.process_time()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.process_time() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="stops-when-stable",
            message="Make all `runs` timed calls: stopping once a few calls agree times fewer calls than asked (and the median of three is no median of twenty).",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "            if len(times) >= 3 and max(times[-3:]) - min(times[-3:]) < 0.01 * times[-1]:\n"
                "                break\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="synchronize-after-the-clock",
            message="Synchronize before reading the clock, not after: otherwise the clock stops while the GPU is still working.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            elapsed = time.perf_counter() - start\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append(elapsed * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="gc-disabled-for-good",
            message="gc.disable() without gc.enable() leaves Python's garbage collector off for the rest of the program: turn it back on in a finally block.",
            code=(
                "import gc, statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    gc.disable()\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="one-thread-for-good",
            message="torch.set_num_threads(1) stays for the caller's later code: measure with the threads the caller has, or put the count back.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    torch.set_num_threads(1)\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="cudnn-benchmark-left-on",
            message="torch.backends.cudnn.benchmark = True stays switched for the whole program: note the old value and put it back.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    torch.backends.cudnn.benchmark = True\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="reseeds-the-generator",
            message="Timing draws no random numbers: torch.manual_seed inside the helper changes every later random number of the caller.",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    torch.manual_seed(0)\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            start = time.perf_counter()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.perf_counter() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
        Mistake(
            name="wall-clock-time",
            message="time.time() is the wall clock: it can jump and may tick coarsely. Time each call with time.perf_counter().",
            code=(
                "import statistics\n"
                "def measure_latency_ms(fn, x, warmup=5, runs=20):\n"
                "    times = []\n"
                "    with torch.no_grad():\n"
                "        for _ in range(warmup):\n"
                "            fn(x)\n"
                "        for _ in range(runs):\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            start = time.time()\n"
                "            fn(x)\n"
                "            if x.is_cuda:\n"
                "                torch.cuda.synchronize()\n"
                "            times.append((time.time() - start) * 1000)\n"
                "    return float(statistics.median(times))\n"
            ),
        ),
    ],
    "save_for_serving": [
        Mistake(
            name="export-in-train-mode",
            message="Call model.eval() before torch.export.export: a program captured in training mode keeps Dropout on and BatchNorm on batch statistics.",
            code=(
                _SERVE_HEAD
                + "    torch.export.save(torch.export.export(model, (example_input,)), folder / 'model.pt2')\n"
                + _SERVE_WEIGHTS
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="leaves-model-in-eval",
            message="Restore the caller's mode: note model.training, export in eval mode, then model.train(was_training).",
            code=(
                _SERVE_HEAD
                + "    model.eval()\n"
                + "    torch.export.save(torch.export.export(model, (example_input,)), folder / 'model.pt2')\n"
                + _SERVE_WEIGHTS
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="always-back-to-train",
            message="Restore the mode the model had: model.train() at the end puts a model that came in eval mode into training mode.",
            code=(
                _SERVE_HEAD
                + "    model.eval()\n"
                + "    program = torch.export.export(model, (example_input,))\n"
                + "    model.train()\n"
                + "    torch.export.save(program, folder / 'model.pt2')\n"
                + _SERVE_WEIGHTS
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="save-file-tied-weights",
            message="save_file refuses tensors that share memory (tied weights): use save_model, which keeps one name per shared tensor.",
            code=(
                _SERVE_HEAD
                + _SERVE_EXPORT
                + "    state = {name: t.contiguous() for name, t in model.state_dict().items()}\n"
                + "    save_file(state, str(folder / 'weights.safetensors'))\n"
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="dedup-not-contiguous",
            message="Dropping the tied duplicates is half of it: safetensors also refuses a non-contiguous tensor; save t.contiguous() (save_model does both).",
            code=(
                _SERVE_HEAD
                + _SERVE_EXPORT
                + "    state, seen = {}, set()\n"
                + "    for name, t in model.state_dict().items():\n"
                + "        if t.data_ptr() not in seen:\n"
                + "            seen.add(t.data_ptr())\n"
                + "            state[name] = t\n"
                + "    save_file(state, str(folder / 'weights.safetensors'))\n"
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="clone-shared-tensors",
            message="Cloning the tied tensors only hides the sharing: the file holds them twice and load_model refuses it; keep one name per shared tensor (save_model).",
            code=(
                _SERVE_HEAD
                + _SERVE_EXPORT
                + "    state = {name: t.clone().contiguous() for name, t in model.state_dict().items()}\n"
                + "    save_file(state, str(folder / 'weights.safetensors'))\n"
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="parameters-only",
            message="Save the whole state_dict: BatchNorm's running statistics are buffers, not parameters.",
            code=(
                _SERVE_HEAD
                + _SERVE_EXPORT
                + "    state = {name: p.detach().contiguous() for name, p in model.named_parameters()}\n"
                + "    save_file(state, str(folder / 'weights.safetensors'))\n"
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="pickle-named-safetensors",
            message="torch.save writes a pickle whatever the file is called: write weights.safetensors with safetensors' save_model.",
            code=(
                _SERVE_HEAD
                + _SERVE_EXPORT
                + "    torch.save(model.state_dict(), folder / 'weights.safetensors')\n"
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="torch-save-program",
            message="torch.save pickles the ExportedProgram object; torch.export.load reads only what torch.export.save writes.",
            code=(
                _SERVE_HEAD
                + "    was_training = model.training\n"
                + "    model.eval()\n"
                + "    program = torch.export.export(model, (example_input,))\n"
                + "    model.train(was_training)\n"
                + "    torch.save(program, folder / 'model.pt2')\n"
                + _SERVE_WEIGHTS
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="returns-program-unsaved",
            message="Write the program to folder / 'model.pt2' with torch.export.save and return that path, not the in-memory ExportedProgram.",
            code=(
                _SERVE_HEAD
                + "    was_training = model.training\n"
                + "    model.eval()\n"
                + "    program = torch.export.export(model, (example_input,))\n"
                + "    model.train(was_training)\n"
                + _SERVE_WEIGHTS
                + "    return {'program': program, 'weights': folder / 'weights.safetensors'}\n"
            ),
        ),
        Mistake(
            name="files-in-working-directory",
            message="Build each path from folder (Path(folder) / 'model.pt2'): a bare file name lands in the current directory.",
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(model, (example_input,))\n"
                "    model.train(was_training)\n"
                "    torch.export.save(program, 'model.pt2')\n"
                "    save_model(model, 'weights.safetensors')\n"
                "    return {'program': Path('model.pt2'), 'weights': Path('weights.safetensors')}\n"
            ),
        ),
        Mistake(
            name="folder-not-created",
            message="folder may not exist yet: create it first with Path(folder).mkdir(parents=True, exist_ok=True).",
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    folder = Path(folder)\n" + _SERVE_EXPORT + _SERVE_WEIGHTS + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="str-concatenated-path",
            message="folder may be a str or a Path: join with os.path.join or Path(folder) / name, not string concatenation.",
            code=(
                "import os\n"
                "from safetensors.torch import save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    os.makedirs(folder, exist_ok=True)\n"
                "    program_path = folder + '/model.pt2'\n"
                "    weights_path = folder + '/weights.safetensors'\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    torch.export.save(torch.export.export(model, (example_input,)), program_path)\n"
                "    model.train(was_training)\n"
                "    save_model(model, weights_path)\n"
                "    return {'program': program_path, 'weights': weights_path}\n"
            ),
        ),
        Mistake(
            name="mkdir-without-parents",
            message="folder's parents may not exist either: mkdir(parents=True, exist_ok=True).",
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    folder = Path(folder)\n"
                "    folder.mkdir(exist_ok=True)\n" + _SERVE_EXPORT + _SERVE_WEIGHTS + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="restores-root-flag-only",
            message="model.training = was_training sets the root's flag only: its submodules stay in eval mode; use model.train(was_training).",
            code=(
                _SERVE_HEAD
                + "    was_training = model.training\n"
                + "    model.eval()\n"
                + "    program = torch.export.export(model, (example_input,))\n"
                + "    model.training = was_training\n"
                + "    torch.export.save(program, folder / 'model.pt2')\n"
                + _SERVE_WEIGHTS
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="exports-one-row",
            message="Export on example_input itself: a program exported from one row accepts only batches of one.",
            code=(
                _SERVE_HEAD
                + "    was_training = model.training\n"
                + "    model.eval()\n"
                + "    program = torch.export.export(model, (example_input[:1],))\n"
                + "    model.train(was_training)\n"
                + "    torch.export.save(program, folder / 'model.pt2')\n"
                + _SERVE_WEIGHTS
                + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="half-weights",
            message="model.half() converts the caller's model in place and ships rounded weights: save the state_dict as it is.",
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_file, save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    folder = Path(folder)\n"
                "    folder.mkdir(parents=True, exist_ok=True)\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(model, (example_input,))\n"
                "    model.train(was_training)\n"
                "    torch.export.save(program, folder / 'model.pt2')\n"
                "    save_model(model.half(), str(folder / 'weights.safetensors'))\n"
                "    return {'program': folder / 'model.pt2', 'weights': folder / 'weights.safetensors'}\n"
            ),
        ),
        Mistake(
            name="freezes-parameters",
            message="Exporting and saving read the model: requires_grad_(False) freezes the caller's parameters for good.",
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_file, save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    folder = Path(folder)\n"
                "    folder.mkdir(parents=True, exist_ok=True)\n"
                "    was_training = model.training\n"
                "    model.eval().requires_grad_(False)\n"
                "    program = torch.export.export(model, (example_input,))\n"
                "    model.train(was_training)\n"
                "    torch.export.save(program, folder / 'model.pt2')\n"
                "    save_model(model, str(folder / 'weights.safetensors'))\n"
                "    return {'program': folder / 'model.pt2', 'weights': folder / 'weights.safetensors'}\n"
            ),
        ),
        Mistake(
            name="non-persistent-buffers-saved",
            message="named_buffers() also lists buffers registered with persistent=False, which the state_dict leaves out: save model.state_dict() (save_model does), or a strict load_model refuses the file.",
            code=(
                _SERVE_HEAD + _SERVE_EXPORT + "    seen, out = set(), {}\n"
                "    for name, t in [*model.named_parameters(), *model.named_buffers()]:\n"
                "        if t.data_ptr() not in seen:\n"
                "            seen.add(t.data_ptr())\n"
                "            out[name] = t.detach().contiguous()\n"
                "    save_file(out, str(folder / 'weights.safetensors'))\n" + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="half-in-place-for-size",
            message="model.half() converts the caller's model in place (and the weights lose precision): convert a copy if you must, and ship the weights as they are.",
            code=(
                _SERVE_HEAD
                + _SERVE_EXPORT
                + "    save_model(model.half(), str(folder / 'weights.safetensors'), force_contiguous=True)\n"
                "    model.float()\n" + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="smoke-test-in-training-mode",
            message="A forward pass in training mode updates BatchNorm's running statistics: the caller's model changes. Check the export in eval mode, or not at all.",
            code=(
                _SERVE_HEAD + _SERVE_EXPORT + _SERVE_WEIGHTS + "    with torch.no_grad():\n"
                "        model(example_input)  # does it still run?\n" + _SERVE_RETURN
            ),
        ),
        Mistake(
            name="zero-grad",
            message="Exporting and saving read the model: model.zero_grad() throws away the caller's gradients.",
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_file, save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    folder = Path(folder)\n"
                "    folder.mkdir(parents=True, exist_ok=True)\n"
                "    model.zero_grad()\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(model, (example_input,))\n"
                "    model.train(was_training)\n"
                "    torch.export.save(program, folder / 'model.pt2')\n"
                "    save_model(model, str(folder / 'weights.safetensors'))\n"
                "    return {'program': folder / 'model.pt2', 'weights': folder / 'weights.safetensors'}\n"
            ),
        ),
        Mistake(
            name="reseeds-the-generator",
            message="Exporting and saving draw no random numbers: torch.manual_seed inside changes every later random number of the caller.",
            code=(
                "from pathlib import Path\n"
                "from safetensors.torch import save_file, save_model\n"
                "def save_for_serving(model, example_input, folder):\n"
                "    folder = Path(folder)\n"
                "    folder.mkdir(parents=True, exist_ok=True)\n"
                "    torch.manual_seed(0)\n"
                "    was_training = model.training\n"
                "    model.eval()\n"
                "    program = torch.export.export(model, (example_input,))\n"
                "    model.train(was_training)\n"
                "    torch.export.save(program, folder / 'model.pt2')\n"
                "    save_model(model, str(folder / 'weights.safetensors'))\n"
                "    return {'program': folder / 'model.pt2', 'weights': folder / 'weights.safetensors'}\n"
            ),
        ),
    ],
}
