"""Probes for 04_data (see autograder/probes/__init__.py).

The answers here return objects that are not data (datasets, loaders, samplers,
transforms), so the probes use them the way the checks did (index, iterate, apply) and
return what came out. Random draws that an answer might take from torch's global
generator are made under a seed named in the case, and the caller's global state is put
back afterwards, so that a replay of the same case gives the same data.
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import tempfile
from pathlib import Path

import torch
from torch.utils.data import DataLoader, Dataset, Sampler, TensorDataset


def type_name(obj: object) -> str:
    return type(obj).__name__


def container(result: object) -> dict:
    """The type of ``result`` and, for a tuple or list, its length."""
    is_seq = isinstance(result, (tuple, list))
    return {"type": type_name(result), "len": len(result) if is_seq else None}


@contextlib.contextmanager
def seeded_global_rng(seed: int):
    """Seed torch's global CPU generator for the block; restore the caller's state after."""
    with torch.random.fork_rng(devices=[]):
        torch.default_generator.manual_seed(seed)
        yield


class CountingTransform:
    """A transform that adds 1 and counts how often it was called."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x + 1


# ---------------------------------------------------------------- TensorPairDataset


def probe_TensorPairDataset(TensorPairDataset, case: dict) -> dict:
    """len(ds) and the items ds[0], ds[1], ... (as many as x has rows, at most len(ds))."""
    x, y = case["x"], case["y"]
    ds = TensorPairDataset(x, y)
    length = len(ds)
    return {"len": length, "items": [ds[i] for i in range(min(len(x), length))]}


def probe_TensorPairDataset_transform(TensorPairDataset, case: dict) -> dict:
    """Transform calls made by __init__, the items read at case["reads"], calls made in all."""
    transform = CountingTransform()
    ds = TensorPairDataset(case["x"], case["y"], transform=transform)
    calls_in_init = transform.calls
    items = [ds[i] for i in case["reads"]]
    return {"calls_in_init": calls_in_init, "items": items, "calls": transform.calls}


def probe_TensorPairDataset_mismatch(TensorPairDataset, case: dict) -> dict:
    """Whether building from x with nx rows and y with ny rows raises ValueError."""
    try:
        TensorPairDataset(torch.zeros(case["nx"], 2), torch.zeros(case["ny"]))
    except ValueError as err:
        return {"raised_value_error": True, "message": str(err)[:300]}
    return {"raised_value_error": False}


# ---------------------------------------------------------------- DigitFolder


def _write_item(path: Path, x: torch.Tensor, y: int) -> None:
    torch.save({"x": x, "y": torch.tensor(y)}, path)


def probe_DigitFolder(DigitFolder, case: dict) -> dict:
    """A fresh folder of .pt files (written in reverse order, plus two other files).

    Builds the dataset, then rewrites every .pt file with case["new_xs"], case["new_ys"],
    and only then reads the items: len(ds) and ds[i] as they came out.
    """
    xs, ys = case["xs"], case["ys"]
    n = len(xs)
    folder = Path(tempfile.mkdtemp(prefix="digitfolder-probe-"))
    try:
        names = [f"item_{i:03d}.pt" for i in range(n)]
        for i in reversed(range(n)):  # written in reverse order: only sorting restores it
            _write_item(folder / names[i], xs[i], ys[i])
        (folder / "notes.txt").write_text("not a sample\n")
        (folder / "labels.csv").write_text("i,y\n")
        ds = DigitFolder(str(folder))
        length = len(ds)
        for i in range(n):  # change every file after __init__
            _write_item(folder / names[i], case["new_xs"][i], case["new_ys"][i])
        return {"len": length, "items": [ds[i] for i in range(min(n, length))]}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def probe_DigitFolder_transform(DigitFolder, case: dict) -> dict:
    """Files t_i.pt from case["xs"], case["ys"]; a counting transform; ds[case["read"]]."""
    folder = Path(tempfile.mkdtemp(prefix="digitfolder-probe-"))
    try:
        for i, (x, y) in enumerate(zip(case["xs"], case["ys"], strict=True)):
            _write_item(folder / f"t_{i}.pt", x, y)
        transform = CountingTransform()
        ds = DigitFolder(str(folder), transform=transform)
        calls_in_init = transform.calls
        return {"calls_in_init": calls_in_init, "item": ds[case["read"]]}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------- split_dataset


class Indexed(Dataset):
    """Item i is the integer i, so a subset reveals which indices it holds."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return i


def _indices(subset: object) -> list[int] | str:
    """The items of a subset of an Indexed dataset, or why it cannot be read as a dataset."""
    try:
        return [int(subset[i]) for i in range(len(subset))]
    except TypeError as err:
        return f"TypeError: {err}"


def probe_split_dataset(split_dataset, case: dict) -> dict:
    """split_dataset(Indexed(n), frac, seed) under a seeded global RNG.

    Returns whether the call changed the global random state, the result's type and length,
    and for a pair the indices each part holds (or a TypeError's message).
    """
    with seeded_global_rng(case["global_seed"]):
        before = torch.get_rng_state()
        result = split_dataset(Indexed(case["n"]), case["frac"], case["seed"])
        rng_changed = not torch.equal(before, torch.get_rng_state())
    seen = {"rng_changed": rng_changed, **container(result)}
    if seen["len"] == 2:
        seen["parts"] = [_indices(part) for part in result]
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


def probe_make_loaders(make_loaders, case: dict) -> dict:
    """make_loaders(TensorDataset(arange(n_train)), TensorDataset(arange(100, 100 + n_val)), ...).

    Under a seeded global RNG: the result's type and length; per loader whether it is a
    DataLoader and its num_workers; then (only for two DataLoaders without workers) one
    validation epoch and two training epochs, as item lists and batch sizes.
    """
    train_set = TensorDataset(torch.arange(case["n_train"]))
    val_set = TensorDataset(torch.arange(100, 100 + case["n_val"]))
    with seeded_global_rng(case["global_seed"]):
        result = make_loaders(train_set, val_set, case["batch_size"], case["seed"])
        seen = container(result)
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


# ---------------------------------------------------------------- channel_stats


def stats_batches(case: dict) -> list[tuple]:
    """The (x, y) batches of a channel_stats case; x is permuted when the case says so."""
    batches = []
    for b in case["batches"]:
        x = b["x"] if b.get("permute") is None else b["x"].permute(*b["permute"])
        batches.append((x, b["y"]))
    return batches


def probe_channel_stats(channel_stats, case: dict) -> dict:
    """What channel_stats returned for the case's batches."""
    return {"result": channel_stats(stats_batches(case))}


# ---------------------------------------------------------------- make_transforms


def probe_make_transforms(make_transforms, case: dict) -> dict:
    """make_transforms(mean, std), then the transforms applied under a seeded global RNG.

    Per image in case["images"]: eval_tf twice, train_tf twelve times, and train_tf five
    times on case["zeros"] of the same size; finally eval_tf(case["batch"]).
    """
    with seeded_global_rng(case["global_seed"]):
        result = make_transforms(case["mean"], case["std"])
        seen = container(result)
        if seen["len"] != 2:
            return seen
        train_tf, eval_tf = result
        seen["images"] = [
            {
                "eval": eval_tf(img),
                "eval_again": eval_tf(img),
                "train": [train_tf(img) for _ in range(12)],
                "train_zeros": [train_tf(zeros) for _ in range(5)],
            }
            for img, zeros in zip(case["images"], case["zeros"], strict=True)
        ]
        seen["batch"] = eval_tf(case["batch"])
    return seen


# ---------------------------------------------------------------- balanced_sampler


def probe_balanced_sampler(balanced_sampler, case: dict) -> dict:
    """balanced_sampler(labels, num_samples, seed) under a seeded global RNG: its type and,
    for a Sampler, the indices it draws (at most 10 * num_samples + 100 of them)."""
    num_samples = case["num_samples"]
    with seeded_global_rng(case["global_seed"]):
        sampler = balanced_sampler(case["labels"], num_samples, case["seed"])
        seen = {"type": type_name(sampler), "is_sampler": isinstance(sampler, Sampler)}
        if not seen["is_sampler"]:
            return seen
        cap = 10 * num_samples + 100
        try:
            seen["draws"] = [int(i) for i in itertools.islice(sampler, cap + 1)]
        except TypeError as err:
            seen["not_iterable"] = str(err)[:300]
        seen["cap"] = cap
    return seen
