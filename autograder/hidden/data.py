"""Hidden checks for 04_data."""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

import torch

from tutorial_lib.checks import CheckError, assert_close, check_dtype, check_shape, check_type
from tutorial_lib.device import get_device


def _gen(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _pair(item: object, what: str) -> tuple:
    """An item must be a (data, label) pair: a tuple or list of two."""
    check_type(item, (tuple, list), what)
    if len(item) != 2:
        raise CheckError(f"{what} should be a (data, label) pair, got {len(item)} items.")
    return tuple(item)


class _CountingTransform:
    """A transform that adds 1 and counts how often it was called."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x + 1


# ---------------------------------------------------------------- TensorPairDataset


def check_TensorPairDataset(TensorPairDataset) -> None:
    """Length, items, the transform (applied per access to x only), and the length check."""
    device = get_device()
    g = _gen(0)
    for shape in [(1, 3), (5, 2), (7, 1, 4, 4), (4,)]:
        n = shape[0]
        x = torch.randn(shape, generator=g).to(device)
        y = torch.randint(0, 3, (n,), generator=g).to(device)
        ds = TensorPairDataset(x, y)
        what = f"TensorPairDataset(x of shape {shape}, y of shape ({n},))"
        if len(ds) != n:
            raise CheckError(
                f"len({what}) is {len(ds)}, expected {n}: the length is the number of samples, "
                "x.shape[0], not the number of features."
            )
        for i in range(n):
            xi, yi = _pair(ds[i], f"{what}[{i}]")
            assert_close(xi, x[i], what=f"the data of {what}[{i}]")
            assert_close(yi, y[i], what=f"the label of {what}[{i}]")
    x = torch.randn(6, 3, generator=g).to(device)
    y = torch.arange(6, device=device)
    transform = _CountingTransform()
    ds = TensorPairDataset(x, y, transform=transform)
    if transform.calls:
        raise CheckError(
            f"TensorPairDataset called the transform {transform.calls} times in __init__. "
            "Apply it in __getitem__, one item at a time, so a random augmentation differs "
            "every time an item is read."
        )
    for i in (0, 5, 0):
        xi, yi = _pair(ds[i], f"TensorPairDataset(..., transform)[{i}]")
        assert_close(xi, x[i] + 1, what=f"the data of item {i} with a transform that adds 1")
        assert_close(yi, y[i], what=f"the label of item {i} (the transform is for x only)")
    if transform.calls != 3:
        raise CheckError(
            f"reading three items called the transform {transform.calls} times, expected 3: "
            "call it once per __getitem__."
        )
    for nx, ny in [(5, 4), (1, 2)]:
        try:
            TensorPairDataset(torch.zeros(nx, 2), torch.zeros(ny))
        except ValueError:
            continue
        raise CheckError(
            f"TensorPairDataset(x with {nx} rows, y with {ny} rows) should raise ValueError: "
            "mismatched lengths mean some samples have no label."
        )


# ---------------------------------------------------------------- DigitFolder


def _write_item(path: Path, x: torch.Tensor, y: int) -> None:
    torch.save({"x": x, "y": torch.tensor(y)}, path)


def check_DigitFolder(DigitFolder) -> None:
    """Sorted .pt files only, read lazily: files changed after __init__ show their new contents."""
    g = _gen(1)
    root = Path(tempfile.mkdtemp(prefix="digitfolder-check-"))
    try:
        for n, shape in [(1, (1, 8, 8)), (6, (3, 4, 5)), (11, (2,))]:
            folder = root / f"case_{n}"
            folder.mkdir()
            xs = [torch.randn(shape, generator=g) for _ in range(n)]
            ys = [int(v) for v in torch.randint(0, 10, (n,), generator=g)]
            names = [f"item_{i:03d}.pt" for i in range(n)]
            for i in reversed(range(n)):  # written in reverse order: only sorting restores it
                _write_item(folder / names[i], xs[i], ys[i])
            (folder / "notes.txt").write_text("not a sample\n")
            (folder / "labels.csv").write_text("i,y\n")
            ds = DigitFolder(str(folder))
            what = f"DigitFolder over {n} .pt files (and two other files)"
            if len(ds) != n:
                raise CheckError(
                    f"len({what}) is {len(ds)}, expected {n}. Keep only the file names that "
                    "end in '.pt'."
                )
            # Change every file after __init__: a lazy dataset must see the new contents.
            new_xs = [x * -2 + 1 for x in xs]
            new_ys = [(y + 3) % 10 for y in ys]
            for i in range(n):
                _write_item(folder / names[i], new_xs[i], new_ys[i])
            for i in range(n):
                xi, yi = _pair(ds[i], f"{what}[{i}]")
                check_type(xi, torch.Tensor, f"the data of {what}[{i}]")
                if xi.shape == new_xs[i].shape and torch.equal(xi, xs[i]):
                    raise CheckError(
                        f"{what}[{i}] returned what the file held when the dataset was built, "
                        "not what it holds now: the files were read in __init__. Keep only "
                        "the paths in __init__ and call torch.load in __getitem__."
                    )
                expected = next((j for j in range(n) if torch.equal(xi, new_xs[j])), None)
                if expected is not None and expected != i:
                    raise CheckError(
                        f"{what}[{i}] returned the contents of {names[expected]}, expected "
                        f"{names[i]}: sort the file names so that item i is the i-th name in "
                        "sorted order (os.listdir returns them in no particular order)."
                    )
                assert_close(xi, new_xs[i], what=f"the data of {what}[{i}]")
                if int(torch.as_tensor(yi)) != new_ys[i]:
                    raise CheckError(f"the label of {what}[{i}] is {yi}, expected {new_ys[i]}.")
        folder = root / "transform"
        folder.mkdir()
        for i in range(3):
            _write_item(folder / f"t_{i}.pt", torch.full((1, 2, 2), float(i)), i)
        transform = _CountingTransform()
        ds = DigitFolder(str(folder), transform=transform)
        if transform.calls:
            raise CheckError(
                "DigitFolder called the transform in __init__; call it in __getitem__."
            )
        xi, yi = _pair(ds[2], "DigitFolder(..., transform)[2]")
        assert_close(xi, torch.full((1, 2, 2), 3.0), what="item 2 with a transform that adds 1")
        if int(torch.as_tensor(yi)) != 2:
            raise CheckError("the transform must change only the data, not the label.")
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------- split_dataset


class _Indexed(torch.utils.data.Dataset):
    """Item i is the integer i, so a subset reveals which indices it holds."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> int:
        return i


def _indices(subset: object, what: str) -> list[int]:
    try:
        return [int(subset[i]) for i in range(len(subset))]
    except TypeError as err:
        raise CheckError(f"{what} should be a dataset (len and indexing work), got {err}") from None


def check_split_dataset(split_dataset) -> None:
    """Sizes, disjoint and complete, random, repeatable per seed, and no change to the global RNG."""
    for n, frac, seed in [
        (100, 0.2, 0),
        (10, 0.25, 3),
        (37, 0.5, 11),
        (1000, 0.1, 5),
        (3, 0.34, 1),
    ]:
        what = f"split_dataset(dataset of {n}, val_fraction={frac}, seed={seed})"
        state = torch.get_rng_state()
        result = split_dataset(_Indexed(n), frac, seed)
        if not torch.equal(state, torch.get_rng_state()):
            raise CheckError(
                f"{what} changed torch's global random state. Seed a private generator, "
                "torch.Generator().manual_seed(seed), and pass it to random_split; "
                "torch.manual_seed inside a helper silently resets every later random draw."
            )
        check_type(result, (tuple, list), what)
        if len(result) != 2:
            raise CheckError(f"{what} should return (train, val), got {len(result)} items.")
        train = _indices(result[0], f"the training part of {what}")
        val = _indices(result[1], f"the validation part of {what}")
        n_val = math.floor(n * frac)
        if len(val) != n_val or len(train) != n - n_val:
            raise CheckError(
                f"{what} gave {len(train)} training and {len(val)} validation items, expected "
                f"{n - n_val} and {n_val} (the validation size is floor(n * val_fraction))."
            )
        if sorted(train + val) != list(range(n)):
            raise CheckError(
                f"{what}: the two parts must be disjoint and together cover every item."
            )
        if n >= 37 and (val == list(range(n_val)) or val == list(range(n - n_val, n))):
            raise CheckError(
                f"{what} took a contiguous block as the validation set. Data files are often "
                "sorted (by class, by date): shuffle the indices, e.g. with random_split."
            )
        again = split_dataset(_Indexed(n), frac, seed)
        if _indices(again[1], "the validation part") != val:
            raise CheckError(
                f"calling {what} twice gave two different validation sets. Pass "
                "generator=torch.Generator().manual_seed(seed) to random_split."
            )
    a = _indices(split_dataset(_Indexed(200), 0.3, 0)[1], "val")
    b = _indices(split_dataset(_Indexed(200), 0.3, 1)[1], "val")
    if a == b:
        raise CheckError("seeds 0 and 1 gave the same split: the seed argument must be used.")


# ---------------------------------------------------------------- make_loaders


def _order(loader: object, what: str) -> tuple[list[int], list[int]]:
    """The items a loader yields over an epoch, in order, and the batch sizes."""
    items, sizes = [], []
    for batch in loader:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        check_type(x, torch.Tensor, f"a batch from {what}")
        items += [int(v) for v in x.reshape(-1)]
        sizes.append(x.shape[0])
    return items, sizes


def check_make_loaders(make_loaders) -> None:
    """Validation in order and complete; training shuffled, complete and repeatable per seed."""
    from torch.utils.data import DataLoader, TensorDataset

    for n_train, n_val, batch_size, seed in [(50, 23, 8, 0), (40, 10, 16, 1), (30, 1, 4, 2)]:
        train_set = TensorDataset(torch.arange(n_train))
        val_set = TensorDataset(torch.arange(100, 100 + n_val))
        what = f"make_loaders(train of {n_train}, val of {n_val}, batch_size={batch_size})"
        result = make_loaders(train_set, val_set, batch_size, seed)
        check_type(result, (tuple, list), what)
        if len(result) != 2:
            raise CheckError(f"{what} should return (train_loader, val_loader).")
        train_loader, val_loader = result
        check_type(train_loader, DataLoader, f"the training loader of {what}")
        check_type(val_loader, DataLoader, f"the validation loader of {what}")
        if train_loader.num_workers or val_loader.num_workers:
            raise CheckError(f"{what}: use num_workers=0 here (workers come later in the lesson).")
        val_items, val_sizes = _order(val_loader, f"the validation loader of {what}")
        expected_val = list(range(100, 100 + n_val))
        if sorted(val_items) != expected_val:
            raise CheckError(
                f"the validation loader of {what} yielded {len(val_items)} of {n_val} items: "
                "every validation item must be scored, so do not drop the last batch."
            )
        if val_items != expected_val:
            raise CheckError(
                f"the validation loader of {what} yields the items in a shuffled order. "
                "Shuffling validation data changes nothing in the metric but breaks any "
                "comparison with labels or predictions kept in dataset order: shuffle=False."
            )
        if max(val_sizes) > batch_size or (n_val > batch_size and val_sizes[0] != batch_size):
            raise CheckError(f"the validation batches have sizes {val_sizes}; use batch_size.")
        first, sizes = _order(train_loader, f"the training loader of {what}")
        second, _ = _order(train_loader, f"the training loader of {what}")
        if sorted(first) != list(range(n_train)):
            raise CheckError(
                f"one epoch of the training loader of {what} yielded {len(first)} of "
                f"{n_train} items; every training item should be used each epoch."
            )
        if first == list(range(n_train)):
            raise CheckError(
                f"the training loader of {what} yields the items in dataset order: "
                "shuffle=True, so that batches differ from epoch to epoch."
            )
        if first == second:
            raise CheckError("two epochs of the training loader had the same order: shuffle=True.")
        if max(sizes) > batch_size:
            raise CheckError(f"training batches have sizes {sizes}, larger than {batch_size}.")
        rerun = make_loaders(train_set, val_set, batch_size, seed)[0]
        if _order(rerun, "the training loader")[0] != first:
            raise CheckError(
                f"calling {what} twice with seed={seed} gave two different training orders. "
                "Pass generator=torch.Generator().manual_seed(seed) to the training DataLoader."
            )


# ---------------------------------------------------------------- channel_stats


def _reference_stats(batches: list) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.cat([b[0] for b in batches]).double()  # (N, C, H, W)
    mean = x.mean(dim=(0, 2, 3))
    std = x.std(dim=(0, 2, 3), correction=0)
    return mean.float(), std.float()


def check_channel_stats(channel_stats) -> None:
    """Pooled mean and (population) std per channel; uneven, size-1 and shifted batches."""
    device = get_device()
    g = _gen(2)
    cases = []
    for c, hw, sizes in [(3, 4, [8, 8, 8, 3]), (1, 1, [5, 1, 7]), (2, 3, [4]), (3, 2, [6, 2, 1])]:
        batches = []
        for b, size in enumerate(sizes):
            # Each batch has its own offset, like a file sorted by class.
            offset = 3.0 * b - 2.0
            x = torch.randn(size, c, hw, hw, generator=g) * (1 + b) + offset
            batches.append((x, torch.zeros(size, dtype=torch.int64)))
        cases.append((f"C={c}, H=W={hw}, batch sizes {sizes}", batches))
    x = torch.rand(4, 3, 5, 5, generator=g)
    cases.append(("a non-contiguous batch (permuted from NHWC)", [(x.permute(0, 3, 1, 2), None)]))
    for label, batches in cases:
        on_device = [(b[0].to(device), b[1]) for b in batches]
        result = channel_stats(on_device)
        what = f"channel_stats on {label}"
        check_type(result, (tuple, list), what)
        if len(result) != 2:
            raise CheckError(f"{what} should return (mean, std), got {len(result)} items.")
        mean, std = result
        exp_mean, exp_std = _reference_stats(batches)
        c = exp_mean.shape[0]
        check_shape(mean, (c,), names="C", what=f"the mean from {what}")
        check_shape(std, (c,), names="C", what=f"the std from {what}")
        check_dtype(mean, torch.float32, f"the mean from {what}")
        check_dtype(std, torch.float32, f"the std from {what}")
        assert_close(mean.cpu(), exp_mean, rtol=1e-5, atol=1e-5, what=f"the mean from {what}")
        hint = (
            " The std of the whole data set is not the average of the batches' stds (nor of "
            "their variances): keep running sums of x and x**2 per channel and a count, then "
            "std = sqrt(E[x**2] - E[x]**2)."
        )
        try:
            assert_close(std.cpu(), exp_std, rtol=1e-4, atol=1e-5, what=f"the std from {what}")
        except CheckError as err:
            raise CheckError(f"{err}{hint}") from None


# ---------------------------------------------------------------- make_transforms


def check_make_transforms(make_transforms) -> None:
    """Eval: deterministic normalisation only. Train: random geometry, then normalisation."""
    device = get_device()
    g = _gen(3)
    for mean, std in [([0.3], [0.2]), ([0.5, 0.4, 0.1], [0.25, 0.5, 2.0])]:
        c = len(mean)
        result = make_transforms(mean, std)
        what = f"make_transforms(mean={mean}, std={std})"
        check_type(result, (tuple, list), what)
        if len(result) != 2:
            raise CheckError(f"{what} should return (train_tf, eval_tf).")
        train_tf, eval_tf = result
        m = torch.tensor(mean, device=device).view(c, 1, 1)
        s = torch.tensor(std, device=device).view(c, 1, 1)
        for hw in (8, 12):
            img = torch.rand(c, hw, hw, generator=g).to(device)
            expected = (img - m) / s
            out = eval_tf(img)
            assert_close(
                out,
                expected,
                rtol=1e-5,
                atol=1e-5,
                what=f"eval_tf of a ({c}, {hw}, {hw}) image; expected (image - mean) / std",
            )
            if not torch.equal(eval_tf(img), out):
                raise CheckError(
                    "eval_tf gave two different results for the same image: validation and "
                    "test data get no random augmentation, or the metric changes run to run."
                )
            outs = [train_tf(img) for _ in range(12)]
            for o in outs:
                check_shape(o, (c, hw, hw), names="C H W", what="train_tf(image)")
            if all(torch.equal(o, outs[0]) for o in outs):
                raise CheckError(
                    "train_tf gave the same result 12 times for one image: it should apply a "
                    "random augmentation (e.g. v2.RandomAffine) before normalising."
                )
            zeros = torch.zeros(c, hw, hw, device=device)
            for _ in range(5):  # several draws: one may happen to move nothing
                assert_close(
                    train_tf(zeros),
                    ((zeros - m) / s),
                    rtol=1e-5,
                    atol=1e-5,
                    what=(
                        "train_tf of an all-zero image (moving zeros around leaves zeros, so "
                        "after normalisation every pixel should be -mean/std; normalise after "
                        "the geometric augmentation, whose fill value 0 is meant for raw pixels)"
                    ),
                )
        batch = torch.rand(5, c, 8, 8, generator=g).to(device)
        assert_close(eval_tf(batch), (batch - m) / s, rtol=1e-5, atol=1e-5, what="eval_tf(batch)")


# ---------------------------------------------------------------- pad_collate


def check_pad_collate(pad_collate) -> None:
    """Padded values, lengths (even with genuine zeros at the end), labels, pad value, dtypes."""
    device = get_device()
    g = _gen(4)
    cases = []
    for lengths, f, dtype in [
        ([3, 1, 5], 2, torch.float32),
        ([1], 1, torch.float32),
        ([4, 4], 3, torch.float64),
        ([2, 6, 1, 3], 1, torch.float32),
    ]:
        seqs = [torch.randn(n, f, generator=g, dtype=dtype) for n in lengths]
        cases.append((seqs, [int(v) for v in torch.randint(0, 5, (len(seqs),), generator=g)]))
    zero_tail = [torch.tensor([[1.0], [2.0], [0.0], [0.0]]), torch.tensor([[0.0], [3.0]])]
    cases.append((zero_tail, [1, 0]))  # genuine zeros are data, not padding
    for seqs, labels in cases:
        for pad_value in (0.0, -1.0, 7.5):
            lengths = [s.shape[0] for s in seqs]
            for as_tensor in (False, True):
                batch = [
                    (s.to(device), torch.tensor(lab) if as_tensor else lab)
                    for s, lab in zip(seqs, labels, strict=True)
                ]
                what = f"pad_collate(batch of lengths {lengths}, pad_value={pad_value}" + (
                    ", labels as tensors)" if as_tensor else ")"
                )
                result = pad_collate(batch, pad_value=pad_value)
                check_type(result, (tuple, list), what)
                if len(result) != 3:
                    raise CheckError(f"{what} should return (padded, lengths, labels).")
                padded, lens, labs = result
                b, lmax, f = len(seqs), max(lengths), seqs[0].shape[1]
                check_shape(padded, (b, lmax, f), names="B L_max F", what=f"padded from {what}")
                expected = torch.full((b, lmax, f), pad_value, dtype=seqs[0].dtype, device=device)
                for i, s in enumerate(seqs):
                    expected[i, : s.shape[0]] = s
                check_type(lens, torch.Tensor, f"lengths from {what}")
                check_dtype(lens, torch.int64, f"lengths from {what}")
                got_lens = [int(v) for v in lens.reshape(-1)]
                if got_lens != lengths:
                    raise CheckError(
                        f"lengths from {what} are {got_lens}, expected {lengths}. Take each "
                        "length from the item itself (seq.shape[0]) before padding; counting "
                        "non-zero rows fails when the data holds real zeros."
                    )
                check_dtype(
                    padded, seqs[0].dtype, f"padded from {what} (keep the sequences' dtype)"
                )
                try:
                    assert_close(padded, expected, what=f"padded from {what}")
                except CheckError as err:
                    raise CheckError(
                        f"{err} Real values go first in each row; the rest is pad_value."
                    ) from None
                check_type(labs, torch.Tensor, f"labels from {what}")
                check_dtype(labs, torch.int64, f"labels from {what}")
                assert_close(
                    labs.reshape(-1).cpu(), torch.tensor(labels), what=f"labels from {what}"
                )


# ---------------------------------------------------------------- balanced_sampler


def _draws(sampler: object, what: str) -> list[int]:
    try:
        return [int(i) for i in sampler]
    except TypeError as err:
        raise CheckError(f"{what} should be a sampler you can iterate over: {err}") from None


def check_balanced_sampler(balanced_sampler) -> None:
    """Every class drawn about equally often, one weight per sample, repeatable per seed."""
    from torch.utils.data import Sampler

    g = _gen(5)
    cases = [
        ([0] * 200 + [1] * 20 + [2] * 5, 3000, 0.05),
        ([0] * 900 + [1] * 90 + [2] * 10, 600, 0.07),
        ([5] * 30 + [2] * 300, 2000, 0.05),  # class ids need not start at 0
        ([1] * 8 + [0] * 2 + [3] * 50, 2000, 0.05),
    ]
    for values, num_samples, tol in cases:
        labels = torch.tensor(values)[torch.randperm(len(values), generator=g)]
        classes = sorted(set(values))
        what = (
            f"balanced_sampler(labels with counts "
            f"{ {c: values.count(c) for c in classes} }, num_samples={num_samples})"
        )
        sampler = balanced_sampler(labels, num_samples, 0)
        check_type(sampler, Sampler, what)
        draws = _draws(sampler, what)
        if len(draws) != num_samples:
            raise CheckError(f"{what} drew {len(draws)} indices, expected {num_samples}.")
        if max(draws) < len(classes) < len(values):
            raise CheckError(
                f"{what} only ever drew indices below {len(classes)}: WeightedRandomSampler "
                "got one weight per class. It needs one weight per sample: weights = "
                "(1 / class_counts)[labels], of shape (N,)."
            )
        if min(draws) < 0 or max(draws) >= len(values):
            raise CheckError(f"{what} drew indices outside range({len(values)}).")
        drawn = labels[torch.tensor(draws)]
        shares = {c: float((drawn == c).float().mean()) for c in classes}
        target = 1 / len(classes)
        worst = max(classes, key=lambda c: abs(shares[c] - target))
        if abs(shares[worst] - target) > tol:
            pretty = ", ".join(f"{c}: {s:.2f}" for c, s in shares.items())
            raise CheckError(
                f"{what} drew the classes in shares {{{pretty}}}; each should be about "
                f"{target:.2f}. Weight every sample by 1 / (count of its class), and sample "
                "with replacement so a small class can be drawn more often than its size."
            )
        if _draws(balanced_sampler(labels, num_samples, 0), what) != draws:
            raise CheckError(
                f"two samplers made by {what} with seed=0 drew different indices: pass "
                "generator=torch.Generator().manual_seed(seed) to WeightedRandomSampler."
            )
    labels = torch.tensor([0] * 50 + [1] * 10)
    if _draws(balanced_sampler(labels, 100, 0), "s") == _draws(
        balanced_sampler(labels, 100, 1), "s"
    ):
        raise CheckError("seeds 0 and 1 gave the same draws: the seed argument must be used.")
