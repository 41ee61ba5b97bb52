"""Probes for 05_data (see autograder/probes/__init__.py).

The answers here return objects that are not data (datasets, loaders, samplers,
transforms), so the probes use them the way the checks did (index, iterate, apply) and
return what came out. Random draws that an answer might take from torch's global
generator are made under a seed named in the case, and the caller's global state is put
back afterwards, so that a replay of the same case gives the same data. Side effects are
observed here and returned as flags: whether the answer changed torch's global random
state, the caller's tensors or the caller's list. Warnings an answer raises are silenced
(nbgrader scores any stderr output as a failure).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode
from torch.utils.data import DataLoader, Dataset, Sampler, TensorDataset

from autograder.probes import devices
from autograder.probes.contract import other_strides


def type_name(obj: object) -> str:
    return type(obj).__name__


def container(result: object) -> dict:
    """The type of ``result`` and, for a tuple or list, its length."""
    is_seq = isinstance(result, (tuple, list))
    return {"type": type_name(result), "len": len(result) if is_seq else None}


@contextlib.contextmanager
def quiet():
    """Silence the warnings an answer raises (they would reach stderr)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@contextlib.contextmanager
def seeded_global_rng(seed: int):
    """Seed torch's global CPU generator for the block; restore the caller's state after."""
    with torch.random.fork_rng(devices=[]), quiet():
        torch.default_generator.manual_seed(seed)
        yield


def same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same shape, dtype and values (NaNs equal to NaNs)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.is_floating_point:
        return bool(((a == b) | (torch.isnan(a) & torch.isnan(b))).all())
    return torch.equal(a, b)


class CountingTransform(list):
    """A transform that adds 1, and records (in itself, a list, so that a contract's
    ``mutates`` sends the record back as data) the shape of every tensor it was called on.
    Always truthy, even before its first call (``if self.transform:`` must apply it)."""

    @property
    def shapes(self) -> list[list[int]]:
        return list(self)

    @property
    def calls(self) -> int:
        return len(self)

    def __bool__(self) -> bool:
        return True

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        self.append(list(x.shape))
        return x + 1


def build_add_one(spec: dict) -> CountingTransform:
    """The transform of a dataset contract: adds 1 (and counts its calls)."""
    return CountingTransform()


# ---------------------------------------------------------------- TensorPairDataset


def probe_TensorPairDataset_transform(TensorPairDataset, case: dict) -> dict:
    """How many times the transform was called while the items at case["reads"] were read."""
    transform = CountingTransform()
    with quiet():
        ds = TensorPairDataset(case["x"], case["y"], transform=transform)
        for i in case["reads"]:
            ds[i]
    return {"calls": transform.calls, "moved": _item_moved(TensorPairDataset, case)}


def _item_moved(TensorPairDataset, case: dict) -> str | None:
    """Where dataset[1] took x[1], with x on ``meta`` (standing in for a GPU; y stays on the
    CPU, so a label read as a number still works): the device the transform got, or the
    data came back on, when not x's; ``"cpu"`` when the answer tried to copy x's values out
    (``.cpu()``, ``.tolist()``), which the contract's device family cannot tell from an
    answer that needs values. None where it stayed, or where the answer failed otherwise."""
    got: list[str] = []

    def transform(t):
        got.append(t.device.type if isinstance(t, torch.Tensor) else type_name(t))
        return t

    x = torch.empty(case["x"].shape, device="meta")
    try:
        with quiet():
            item = TensorPairDataset(x, case["y"], transform=transform)[1]
    except NotImplementedError as err:
        return "cpu" if "copy out of meta" in str(err) else None
    except Exception:  # the contract reports the answer's own errors
        return None
    data = item[0] if isinstance(item, (tuple, list)) and item else None
    moved = [d for d in got if d != "meta"]
    if not moved and isinstance(data, torch.Tensor) and data.device.type != "meta":
        moved = [data.device.type]
    return moved[0] if moved else None


def probe_TensorPairDataset_mismatch(TensorPairDataset, case: dict) -> dict:
    """Whether building from x with nx rows and y with ny rows raises ValueError."""
    try:
        with quiet():
            TensorPairDataset(torch.zeros(case["nx"], 2), torch.zeros(case["ny"]))
    except ValueError as err:
        return {"raised_value_error": True, "message": str(err)[:300]}
    return {"raised_value_error": False}


# ---------------------------------------------------------------- DigitFolder


def _write_item(path: Path, x: torch.Tensor, y: int, y_dtype: torch.dtype = torch.int64) -> None:
    """Write a sample file as a new file that replaces the old one: an answer that loads with
    mmap=True keeps its view of the old file instead of seeing it change under it."""
    partial = path.with_name(path.name + ".partial")
    torch.save({"x": x, "y": torch.tensor(y, dtype=y_dtype)}, partial)
    partial.replace(path)


_FOLDERS: list[Path] = []  # the last folders the builder wrote; the rest are removed


@atexit.register
def _remove_folders() -> None:
    for folder in _FOLDERS:
        shutil.rmtree(folder, ignore_errors=True)


def build_digit_folder(spec: dict) -> str | Path:
    """The folder of a DigitFolder contract, written from its spec: ``n`` files
    ``item_000.pt``... holding {"x": tensor of ``shape`` and ``dtype``, "y": 0-d tensor of
    ``y_dtype`` (int64 by default)},
    (``item_0.pt``, ``item_5.pt``... when ``plain_names``), written in a seeded order that is
    not sorted, plus ``others`` files that are not samples (some in a subfolder).
    Returns the folder as a str, or a Path when ``as_path``; the same spec gives the same
    contents (so the grader's copy holds what the kernel's does)."""
    g = torch.Generator().manual_seed(spec["seed"])
    n, shape, dtype = spec["n"], tuple(spec["shape"]), getattr(torch, spec["dtype"])
    xs = [(torch.randn(shape, generator=g, dtype=torch.float64) * 20).to(dtype) for _ in range(n)]
    ys = [int(v) for v in torch.randint(0, 10, (n,), generator=g)]
    folder = Path(tempfile.mkdtemp(prefix="digitfolder-contract-"))
    _FOLDERS.append(folder)
    while len(_FOLDERS) > 8:  # a folder is read only by the call it was built for
        shutil.rmtree(_FOLDERS.pop(0), ignore_errors=True)
    order = torch.randperm(n, generator=g).tolist()
    if n >= 2 and order == sorted(order):
        order.reverse()
    for i in order:  # not in sorted order: only sorting restores it
        _write_item(
            folder / digit_file_name(i, spec.get("plain_names", False)),
            xs[i],
            ys[i],
            getattr(torch, spec.get("y_dtype", "int64")),
        )
    _write_others(folder, spec["others"])
    return folder if spec["as_path"] else str(folder)


def digit_file_name(i: int, plain: bool) -> str:
    """The name of sample file i: item_000.pt, ... (zero-padded: the order of the numbers is
    the order of the names), or, ``plain``, item_0.pt, item_5.pt, item_10.pt, ... whose sorted
    names (item_0, item_10, item_15, item_5) are not in the order of their numbers."""
    return f"item_{5 * i}.pt" if plain else f"item_{i:03d}.pt"


def _write_others(folder: Path, others: list[str]) -> None:
    """Files that are not samples; a name with a '/' is a file in a subfolder."""
    for other in others:
        (folder / other).parent.mkdir(parents=True, exist_ok=True)
        (folder / other).write_text("not a sample\n")


def _snapshot(item: object) -> object:
    """An item as it was when read: tensors copied, so later changes to files do not show."""
    if isinstance(item, torch.Tensor):
        return item.clone()
    if isinstance(item, (tuple, list)):
        return type(item)(_snapshot(v) for v in item) if type(item) in (tuple, list) else item
    return item


def _read(ds: object, i: int) -> object:
    """ds[i] as it was when read, or what it raised as {"raised": [type name, message]}."""
    try:
        return _snapshot(ds[i])
    except Exception as err:  # a file that cannot be read must raise; report how
        return {"raised": [type_name(err), str(err)[:300]]}


def probe_DigitFolder(DigitFolder, case: dict) -> dict:
    """A fresh folder of .pt files named case["names"], written in case["write_order"], plus
    files that are not samples (case["others"]).

    Builds the dataset (from a str, or a Path when case["as_path"]), then rewrites every .pt
    file with case["new_xs"], case["new_ys"], and only then reads the items: len(ds) and
    ds[i]. Then, if the case says so, rewrites file 0 once more (case["third_x"]) and reads
    item 0 again ("reread"), and truncates file case["truncate"] and reads it ("truncated").
    """
    xs, ys, names = case["xs"], case["ys"], case["names"]
    n = len(xs)
    folder = Path(tempfile.mkdtemp(prefix="digitfolder-probe-"))
    try:
        for i in case["write_order"]:  # not in sorted order: only sorting restores it
            _write_item(folder / names[i], xs[i], ys[i])
        _write_others(folder, case["others"])
        with quiet():
            ds = DigitFolder(folder if case["as_path"] else str(folder))
            length = len(ds)
            for i in range(n):  # change every file after __init__
                _write_item(folder / names[i], case["new_xs"][i], case["new_ys"][i])
            seen = {"len": length, "items": [_snapshot(ds[i]) for i in range(min(n, length))]}
            if case.get("third_x") is not None and length >= 1:
                # The same size and, put back, the same modification time as the version read
                # before: a cache keyed on os.stat (mtime, size) cannot tell the change either.
                before = (folder / names[0]).stat()
                _write_item(folder / names[0], case["third_x"], case["new_ys"][0])
                os.utime(folder / names[0], ns=(before.st_atime_ns, before.st_mtime_ns))
                seen["reread"] = _snapshot(ds[0])
            k = case.get("truncate")
            if k is not None and length > k:
                data = (folder / names[k]).read_bytes()
                partial = folder / (names[k] + ".partial")
                partial.write_bytes(data[: len(data) // 3])
                partial.replace(folder / names[k])
                seen["truncated"] = _read(ds, k)
        return seen
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def probe_DigitFolder_transform(DigitFolder, case: dict) -> dict:
    """Files t_i.pt from case["xs"], case["ys"]; a counting transform; ds[case["read"]] read
    twice; how many times the transform was called."""
    folder = Path(tempfile.mkdtemp(prefix="digitfolder-probe-"))
    try:
        for i, (x, y) in enumerate(zip(case["xs"], case["ys"], strict=True)):
            _write_item(folder / f"t_{i}.pt", x, y)
        transform = CountingTransform()
        with quiet():
            ds = DigitFolder(str(folder), transform=transform)
            ds[case["read"]], ds[case["read"]]
        return {"calls": transform.calls}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def probe_DigitFolder_listing(DigitFolder, case: dict) -> dict:
    """Files case["names"] that hold no tensor yet (bytes torch.load cannot read) when the
    dataset is built; then their real contents (case["xs"], case["ys"]) are written, and a
    new sample file case["extra"] that sorts first appears. Returns whether __init__ raised
    (it opened a file), else len(ds) and every item read after that."""
    folder = Path(tempfile.mkdtemp(prefix="digitfolder-probe-"))
    try:
        for name in case["names"]:
            (folder / name).write_bytes(b"not written yet: the contents come after __init__\n")
        with quiet():
            try:
                ds = DigitFolder(folder if case["as_path"] else str(folder))
            except Exception as err:  # it opened a file that was not ready
                message = str(err).splitlines()[0][:120] if str(err) else ""
                return {"init_raised": [type_name(err), message]}
            for name, x, y in zip(case["names"], case["xs"], case["ys"], strict=True):
                _write_item(folder / name, x, y)
            _write_item(folder / case["extra"], case["extra_x"], 0)
            length = len(ds)
            items = [_read(ds, i) for i in range(min(length, len(case["names"])))]
        return {"len": length, "items": items}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------- split_dataset


class Indexed(Dataset):
    """Item i is the integer offset + i, so a subset reveals which items it holds (and a
    list of indices is told apart from a dataset of items)."""

    def __init__(self, n: int, offset: int) -> None:
        self.n, self.offset = n, offset
        self.reads = 0  # items read so far

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        self.reads += 1
        if not -self.n <= i < self.n:
            raise IndexError(f"index {i} out of range for {self.n} items")
        return self.offset + int(i) % self.n


def _items(subset: object) -> list[int] | str:
    """The items of a subset of an Indexed dataset, or why it cannot be read as a dataset."""
    try:
        return [int(subset[i]) for i in range(len(subset))]
    except TypeError as err:
        return f"TypeError: {err}"


def build_indexed(spec: dict) -> Indexed:
    """A contract's dataset argument: ``n`` items, item i being ``offset`` + i."""
    return Indexed(spec["n"], spec["offset"])


def split_view(result: object) -> dict:
    """split_dataset's result as data: each part's length, and every item of both parts,
    sorted (which items go where is the seed's, and any shuffle of them is right)."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return {"result": type_name(result)}
    parts = [_items(part) for part in result]
    if any(isinstance(p, str) for p in parts):
        return {"parts": [p if isinstance(p, str) else "a dataset" for p in parts]}
    return {"sizes": [len(p) for p in parts], "items": sorted(parts[0] + parts[1])}


def probe_split_dataset(split_dataset, case: dict) -> dict:
    """split_dataset(Indexed(n, offset), frac, seed) under a seeded global RNG.

    Returns whether the call changed the global random state, how many items it read, the
    result's type and length, and for a pair the items each part holds (or a TypeError's
    message).
    """
    with seeded_global_rng(case["global_seed"]):
        before = torch.get_rng_state()
        dataset = Indexed(case["n"], case["offset"])
        result = split_dataset(dataset, case["frac"], case["seed"])
        rng_changed = not torch.equal(before, torch.get_rng_state())
        seen = {"rng_changed": rng_changed, "reads": dataset.reads, **container(result)}
        if seen["len"] == 2:
            seen["parts"] = [_items(part) for part in result]
    return seen


# ---------------------------------------------------------------- make_loaders


def _epoch(loader: object) -> dict:
    """The items a loader yields over one epoch, in order, and the batch sizes."""
    items, sizes = [], []
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        if not isinstance(x, torch.Tensor):
            return {"not_tensor": type_name(x)}
        items += [int(v) for v in x.reshape(-1)]
        sizes.append(int(x.shape[0]) if x.dim() else 1)
    return {"items": items, "sizes": sizes}


def build_range_dataset(spec: dict) -> TensorDataset:
    """A contract's dataset argument: the items start, start + 1, ..., start + n - 1."""
    return TensorDataset(torch.arange(spec["start"], spec["start"] + spec["n"]))


def loaders_view(result: object) -> dict:
    """make_loaders's result as data: for each loader, one epoch's batch sizes and items
    (the training items sorted: their order is the generator's), and its num_workers."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        return {"result": type_name(result)}
    views = []
    for loader, in_order in zip(result, (False, True), strict=True):
        if not isinstance(loader, DataLoader) or loader.num_workers:
            views.append(type_name(loader) if not isinstance(loader, DataLoader) else "workers")
            continue
        epoch = _epoch(loader)
        if "items" in epoch and not in_order:
            epoch["items"] = sorted(epoch["items"])
        views.append(epoch)
    return {"train": views[0], "val": views[1]}


def probe_make_loaders(make_loaders, case: dict) -> dict:
    """make_loaders(TensorDataset(arange(n_train)), TensorDataset(arange(100, 100 + n_val)), ...).

    Under a seeded global RNG: whether the call itself changed the global random state; the
    result's type and length; per loader whether it is a DataLoader and its num_workers;
    then (only for two DataLoaders without workers) one validation epoch and two training
    epochs, as item lists and batch sizes.
    """
    train_set = TensorDataset(torch.arange(case["n_train"]))
    val_set = TensorDataset(torch.arange(100, 100 + case["n_val"]))
    with seeded_global_rng(case["global_seed"]):
        before = torch.get_rng_state()
        result = make_loaders(train_set, val_set, case["batch_size"], case["seed"])
        rng_changed = not torch.equal(before, torch.get_rng_state())
        seen = {"rng_changed": rng_changed, **container(result)}
        if seen["len"] != 2:
            return seen
        seen["loaders"] = [
            {
                "type": type_name(loader),
                "is_loader": isinstance(loader, DataLoader),
                "num_workers": loader.num_workers if isinstance(loader, DataLoader) else None,
            }
            for loader in result
        ]
        if all(info["is_loader"] and info["num_workers"] == 0 for info in seen["loaders"]):
            train_loader, val_loader = result
            seen["val_epoch"] = _epoch(val_loader)
            seen["train_epochs"] = [_epoch(train_loader), _epoch(train_loader)]
    return seen


def probe_make_loaders_independent(make_loaders, case: dict) -> dict:
    """Two pairs of loaders from two calls with the same seed, both built before either is
    used; then one epoch of the first pair's validation loader, one of its training loader,
    and one of the second pair's training loader (which must match the first's)."""
    with seeded_global_rng(case["global_seed"]):
        pairs = [
            make_loaders(
                TensorDataset(torch.arange(case["n_train"])),
                TensorDataset(torch.arange(100, 100 + case["n_val"])),
                case["batch_size"],
                case["seed"],
            )
            for _call in range(2)
        ]
        _epoch(pairs[0][1])
        return {"first": _epoch(pairs[0][0]), "second": _epoch(pairs[1][0])}


# ---------------------------------------------------------------- channel_stats


def stats_batches(case: dict) -> list:
    """The (x, y) batches of a channel_stats case; x is permuted when the case says so, and
    a batch is a list [x, y] (as a DataLoader yields it) when the case says so."""
    batches = []
    for b in case["batches"]:
        x = b["x"] if b.get("permute") is None else b["x"].permute(*b["permute"])
        batches.append([x, b["y"]] if b.get("as_list") else (x, b["y"]))
    return batches


def build_stats_batches(spec: dict) -> list:
    """The loader of a channel_stats contract, built from its spec: batches (x, y) (lists
    [x, y] when ``as_list``) of ``sizes``, x (B, C, H, W) in ``dtype``, each batch with its own
    offset and spread (all near ``base`` when given). ``layout``: "nchw" (contiguous),
    "nhwc" (permuted from NHWC) or "strided" (the contract engine's other strides), the last
    two non-contiguous views."""
    g = torch.Generator().manual_seed(spec["seed"])
    c, h, w, base = spec["c"], spec["h"], spec["w"], spec["base"]
    batches = []
    for b, size in enumerate(spec["sizes"]):
        offset = 3.0 * b - 2.0 if base is None else base + 0.5 * b
        spread = 1.0 + b if base is None else 1.0
        nhwc = spec["layout"] == "nhwc"
        shape = (size, h, w, c) if nhwc else (size, c, h, w)
        x = torch.randn(shape, generator=g, dtype=torch.float64) * spread + offset
        x = x.to(getattr(torch, spec["dtype"]))
        x = x.permute(0, 3, 1, 2) if nhwc else x
        x = other_strides(x) if spec["layout"] == "strided" else x
        y = torch.zeros(size, dtype=torch.int64)
        batches.append([x, y] if spec["as_list"] else (x, y))
    return batches


def probe_channel_stats(channel_stats, case: dict) -> dict:
    """What channel_stats returned for the case's batches and whether it changed them."""
    batches = stats_batches(case)
    before = [b[0].clone() for b in batches]
    with quiet():
        result = channel_stats(batches)
    changed = not all(same_tensor(b[0], x) for b, x in zip(batches, before, strict=True))
    return {"result": result, "inputs_changed": changed}


def probe_channel_stats_meta(channel_stats, case: dict) -> dict:
    """channel_stats on batches of case["shapes"] on PyTorch's meta device (a GPU's stand-in
    on a CPU-only grader): PyTorch's words for a mix of devices, or the devices of the
    tensors it returned (a CPU tensor that absorbed meta ones in place says it made one on
    the CPU: a += of a GPU tensor into it raises)."""
    batches = [(torch.zeros(shape, device="meta"), None) for shape in case["shapes"]]
    with quiet():
        seen = devices.on_meta(lambda: channel_stats(batches))
    if "numpy" in seen.get("inconclusive", "") and "TypeError" in seen["inconclusive"]:
        return {"numpy": seen["inconclusive"]}  # x.numpy() of a GPU tensor raises the same
    if "result" not in seen:
        return seen
    result = seen["result"]
    parts = result if isinstance(result, (tuple, list)) else [result]
    return {"devices": [str(t.device) for t in parts if isinstance(t, torch.Tensor)]}


# ---------------------------------------------------------------- make_transforms


def probe_make_transforms(make_transforms, case: dict) -> dict:
    """make_transforms(mean, std), then the transforms applied under a seeded global RNG.

    Whether building them changed the global random state; per image in case["images"]:
    eval_tf twice, train_tf twelve times, and train_tf five times on case["zeros"] and on
    case["flats"] (images of one value per channel) of the same size; and whether any of
    that changed the images it was given.
    """
    with seeded_global_rng(case["global_seed"]):
        before = torch.get_rng_state()
        result = make_transforms(list(case["mean"]), list(case["std"]))
        rng_changed = not torch.equal(before, torch.get_rng_state())
        seen = {"rng_changed": rng_changed, **container(result)}
        if seen["len"] != 2:
            return seen
        train_tf, eval_tf = result
        seen["images"] = []
        for img, zeros, flat in zip(case["images"], case["zeros"], case["flats"], strict=True):
            img_before, zeros_before = img.clone(), zeros.clone()
            first = eval_tf(img)
            eval_changed = not same_tensor(img, img_before)
            outs = {
                "eval": first,
                "eval_again": eval_tf(img_before.clone()),
                "eval_changed_input": eval_changed,
                "train": [train_tf(img_before.clone()) for _ in range(11)],
            }
            last = train_tf(img)
            outs["train"].append(last)
            outs["train_changed_input"] = not eval_changed and not same_tensor(img, img_before)
            outs["train_zeros"] = [train_tf(zeros) for _ in range(5)]
            outs["train_zeros_changed_input"] = not same_tensor(zeros, zeros_before)
            outs["train_flat"] = [train_tf(flat.clone()) for _ in range(5)]
            if "twins" in case:
                twin = case["twins"][len(seen["images"])]
                outs["train_twins"] = [train_tf(twin.clone()) for _ in range(5)]
            seen["images"].append(outs)
    return seen


class _MovesToCpu(TorchFunctionMode):
    """While active, ``.cpu()`` or ``.to("cpu")`` of a meta tensor gives a CPU tensor of its
    shape and dtype (zeros: meta holds no values) instead of raising "Cannot copy out of meta
    tensor", so that a transform that moves the image to the CPU runs on, and its result shows
    where it ends up (back on the image's device, or on the CPU)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        src = args[0] if args else None
        if isinstance(src, torch.Tensor) and src.device.type == "meta":
            target = None
            if func is torch.Tensor.cpu:
                target = torch.device("cpu")
            elif func is torch.Tensor.to:
                where = kwargs.get("device", args[1] if len(args) > 1 else None)
                if isinstance(where, torch.Tensor):
                    where = where.device
                if isinstance(where, (str, torch.device)):
                    target = torch.device(where)
            if target is not None and target.type == "cpu":
                dtype = kwargs.get(
                    "dtype", next((a for a in args[1:] if isinstance(a, torch.dtype)), src.dtype)
                )
                return torch.zeros(src.shape, dtype=dtype)
        return func(*args, **kwargs)


def _moving_to_cpu(transform, img: torch.Tensor):
    with _MovesToCpu():
        return transform(img)


def _on_meta_outcome(transform, img: torch.Tensor) -> dict:
    """transform(img) for an image on the meta device: where the result lives, or PyTorch's
    words for a mix of devices, or "inconclusive" when the transform needs values. A move to
    the CPU (``img.cpu()``) runs on, with zeros for the image's values, so that a result left
    on the CPU shows."""
    seen = devices.on_meta(lambda: _moving_to_cpu(transform, img))
    if "result" not in seen:
        return seen
    out = seen["result"]
    return {"device": str(out.device) if isinstance(out, torch.Tensor) else type_name(out)}


def probe_make_transforms_meta(make_transforms, case: dict) -> dict:
    """make_transforms(mean, std), then eval_tf and train_tf on a (C, H, W) image on PyTorch's
    meta device (a GPU's stand-in on a CPU-only grader): what each did with it."""
    with seeded_global_rng(0):
        result = make_transforms(list(case["mean"]), list(case["std"]))
        seen = container(result)
        if seen["len"] != 2:
            return seen
        img = torch.zeros(case["shape"], device="meta")
        for name, transform in zip(("train_tf", "eval_tf"), result, strict=True):
            seen[name] = _on_meta_outcome(transform, img)
    return seen


# ---------------------------------------------------------------- pad_collate


def build_pad_batch(spec: dict) -> list:
    """The batch of a pad_collate contract, built from its spec: items (seq, label), seq
    (L_i, F) in ``dtype`` (a transposed, non-contiguous view when ``transposed``; its last
    step all zeros when ``zero_tail``), label an int or a 0-d tensor of ``label_dtype``."""
    g = torch.Generator().manual_seed(spec["seed"])
    dtype, f = getattr(torch, spec["dtype"]), spec["f"]
    batch = []
    for n in spec["lengths"]:
        seq = torch.randn(n, f, generator=g, dtype=torch.float64).to(dtype)
        if spec["zero_tail"]:
            seq[-1] = 0.0  # real data that equals the default padding
        if spec.get("nan_step") and not batch:
            seq[0, 0] = float("nan")  # a missing value: data, copied as it is
        seq = other_strides(seq) if spec["transposed"] else seq
        label = int(torch.randint(0, 5, (), generator=g))
        if spec["label_dtype"]:
            label = torch.tensor(label, dtype=getattr(torch, spec["label_dtype"]))
        batch.append((seq, label))
    return batch


def probe_pad_collate(pad_collate, case: dict) -> dict:
    """pad_collate(batch) or pad_collate(batch, pad_value=...) on the case's items.

    Items are (seq, label): seq transposed from case["seqs"] (stored as (F, L_i)) when the
    case says so, a non-contiguous view; labels as Python ints or 0-d tensors of
    case["label_dtype"]. Returns the result and whether the call reordered or changed the
    caller's list or its sequences.
    """
    seqs = [s.t() if case.get("transposed") else s for s in case["seqs"]]
    dtype = case.get("label_dtype")
    labels = [
        lab if dtype is None else torch.tensor(lab, dtype=getattr(torch, dtype))
        for lab in case["labels"]
    ]
    batch = list(zip(seqs, labels, strict=True))
    before = list(batch)
    clones = [s.clone() for s in seqs]
    with quiet():
        if case.get("pad_value") is None:
            result = pad_collate(batch)
        else:
            result = pad_collate(batch, pad_value=case["pad_value"])
    reordered = len(batch) != len(before) or any(
        a is not b for a, b in zip(batch, before, strict=False)
    )
    changed = not all(same_tensor(s, c) for s, c in zip(seqs, clones, strict=True))
    return {"result": result, "batch_reordered": reordered, "seqs_changed": changed}


# ---------------------------------------------------------------- balanced_sampler


def probe_balanced_sampler(balanced_sampler, case: dict) -> dict:
    """balanced_sampler(labels, num_samples, seed) under a seeded global RNG: its type, for a
    Sampler the indices it draws (at most 10 * num_samples + 100 of them), and whether
    building and drawing changed the global random state. (Its weights, num_samples and
    replacement are read by the contract engine.)"""
    num_samples = case["num_samples"]
    with seeded_global_rng(case["global_seed"]):
        before = torch.get_rng_state()
        sampler = balanced_sampler(case["labels"], num_samples, case["seed"])
        seen = {"type": type_name(sampler), "is_sampler": isinstance(sampler, Sampler)}
        if seen["is_sampler"]:
            cap = 10 * num_samples + 100
            try:
                seen["draws"] = [int(i) for i in itertools.islice(sampler, cap + 1)]
            except TypeError as err:
                seen["not_iterable"] = str(err)[:300]
            seen["cap"] = cap
        seen["rng_changed"] = not torch.equal(before, torch.get_rng_state())
    return seen


def probe_balanced_sampler_twins(balanced_sampler, case: dict) -> dict:
    """Two samplers from two calls with the same seed, both built before either is used;
    then num_samples draws from the first and from the second (which must match)."""
    with seeded_global_rng(case["global_seed"]):
        samplers = [
            balanced_sampler(case["labels"].clone(), case["num_samples"], case["seed"])
            for _call in range(2)
        ]
        return {
            "draws": [[int(i) for i in itertools.islice(s, case["num_samples"])] for s in samplers]
        }


# ---------------------------------------------------------------- confusion_matrix


def _int_view(t: torch.Tensor, case: dict) -> torch.Tensor:
    """The case's labels in its dtype; every second element (a strided view) when it says so."""
    t = t.to(getattr(torch, case["dtype"]))
    return t[::2] if case.get("strided") else t


def probe_confusion_matrix(confusion_matrix, case: dict) -> dict:
    """confusion_matrix(preds, targets, num_classes) on the case's labels (int32 or int64, a
    strided view when the case says so); the result, and whether the call changed them."""
    preds, targets = _int_view(case["preds"], case), _int_view(case["targets"], case)
    before = preds.clone(), targets.clone()
    with quiet():
        result = confusion_matrix(preds, targets, case["num_classes"])
    changed = not (same_tensor(preds, before[0]) and same_tensor(targets, before[1]))
    return {"result": result, "inputs_changed": changed}


# What indexes a tensor with index tensors: a GPU refuses indices on the GPU into a CPU tensor.
# Indexing and index_put read only their indices here (a GPU copies device values into a CPU
# tensor's slice); index_add and scatter refuse any device tensor beside a CPU target.
_INDEXING = {
    torch.Tensor.__getitem__,
    torch.Tensor.__setitem__,
    torch.Tensor.index_put_,
    torch.Tensor.index_put,
    torch.index_put,
}
_INDEXING_ANY = {
    torch.Tensor.index_add_,
    torch.Tensor.index_add,
    torch.index_add,
    torch.Tensor.scatter_add_,
    torch.Tensor.scatter_add,
    torch.scatter_add,
    torch.Tensor.scatter_,
    torch.Tensor.scatter,
    torch.scatter,
}


class _CpuIndexedByDevice(TorchFunctionMode):
    """Notes the calls that index a CPU tensor (not 0-d) with index tensors on ``meta`` (a
    GPU's stand-in): ``cpu_cm.index_put_((targets, preds), ...)`` with the labels on a GPU
    raises there ("indices should be either on cpu or on the same device as the indexed
    tensor"), which ``meta``'s kernels do not check."""

    def __init__(self):
        super().__init__()
        self.calls: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        target = args[0] if args else None
        if func in _INDEXING:
            others = devices.tensors_in(args[1:2] or kwargs.get("indices"))
        elif func in _INDEXING_ANY:
            others = devices.tensors_in((args[1:], kwargs))
        else:
            others = []
        if (
            isinstance(target, torch.Tensor)
            and target.device.type == "cpu"
            and target.dim() > 0
            and any(t.device.type == "meta" for t in others)
        ):
            self.calls.append(getattr(func, "__name__", str(func)))
        return func(*args, **kwargs)


def probe_confusion_matrix_indexing(confusion_matrix, case: dict) -> dict:
    """confusion_matrix on the case's labels moved to ``meta`` (a GPU's stand-in): the names
    of the calls that indexed a CPU tensor with them ("cpu_indexed"), which a GPU refuses."""
    preds, targets = case["preds"].to("meta"), case["targets"].to("meta")
    watch = _CpuIndexedByDevice()
    with quiet(), watch:
        devices.on_meta(lambda: confusion_matrix(preds, targets, case["num_classes"]))
    return {"cpu_indexed": sorted(set(watch.calls))}


# ---------------------------------------------------------------- precision_recall


def probe_precision_recall(precision_recall, case: dict) -> dict:
    """precision_recall(cm) on the case's matrix (cm.t() of what was sent, a non-contiguous
    view, when the case says so); the result, and whether the call changed cm."""
    cm = case["cm"].t() if case.get("transposed") else case["cm"]
    before = cm.clone()
    with quiet():
        result = precision_recall(cm)
    return {"result": result, "cm_changed": not same_tensor(cm, before)}
