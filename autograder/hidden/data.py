"""Hidden checks for 04_data.

Every answer is reached through the probes in ``autograder/probes/data.py``: they build
the inputs named in the case, use the learner's dataset, loader, sampler or transforms,
and return what came out as data. The expected values are computed here.
"""

from __future__ import annotations

import math

import torch

from autograder import wire
from autograder.boundary import AnswerRaised, call, observe
from autograder.probes import data as probes
from tutorial_lib.checks import CheckError, assert_close, check_dtype, check_shape, check_type
from tutorial_lib.device import get_device


def _gen(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _wrong_type(type_name: str, wanted: str, what: str) -> CheckError:
    """The error check_type would give, for an object known only by its type's name."""
    hint = " Did you forget a `return`?" if type_name == "NoneType" else ""
    article = "an" if wanted[:1].lower() in "aeiou" else "a"
    return CheckError(f"{what} should be {article} {wanted}, got {type_name}.{hint}")


def _assert_close(actual: object, expected: object, what: str, **kwargs) -> None:
    """assert_close, naming the real type of an object that could not cross as data."""
    if isinstance(actual, wire.Unsendable):
        check_type(actual, torch.Tensor, what)
    assert_close(actual, expected, what=what, **kwargs)


def _check_pair_result(seen: dict, what: str, message: str) -> None:
    """The probe's container() summary must describe a tuple or list of two."""
    if seen["len"] is None:
        raise _wrong_type(seen["type"], "tuple or list", what)
    if seen["len"] != 2:
        raise CheckError(message.format(n=seen["len"]))


def _pair(item: object, what: str) -> tuple:
    """An item must be a (data, label) pair: a tuple or list of two."""
    check_type(item, (tuple, list), what)
    if len(item) != 2:
        raise CheckError(f"{what} should be a (data, label) pair, got {len(item)} items.")
    return tuple(item)


def _label(y: object, what: str) -> int:
    """A label as an int (a Python number or a one-element tensor)."""
    try:
        return int(torch.as_tensor(y))
    except (TypeError, ValueError, RuntimeError):
        raise CheckError(
            f"{what} should be a number or a one-element tensor, got {wire.type_name(y)}."
        ) from None


# ---------------------------------------------------------------- TensorPairDataset


def check_TensorPairDataset(TensorPairDataset) -> None:
    """Length, items, the transform (applied per access to x only), and the length check."""
    device = get_device()
    g = _gen(0)
    for shape in [(1, 3), (5, 2), (7, 1, 4, 4), (4,)]:
        n = shape[0]
        x = torch.randn(shape, generator=g).to(device)
        y = torch.randint(0, 3, (n,), generator=g).to(device)
        what = f"TensorPairDataset(x of shape {shape}, y of shape ({n},))"
        seen = observe(probes.probe_TensorPairDataset, TensorPairDataset, {"x": x, "y": y}, what)
        if seen["len"] != n:
            raise CheckError(
                f"len({what}) is {seen['len']}, expected {n}: the length is the number of "
                "samples, x.shape[0], not the number of features."
            )
        for i, item in enumerate(seen["items"]):
            xi, yi = _pair(item, f"{what}[{i}]")
            _assert_close(xi, x[i], what=f"the data of {what}[{i}]")
            _assert_close(yi, y[i], what=f"the label of {what}[{i}]")
    x = torch.randn(6, 3, generator=g).to(device)
    y = torch.arange(6, device=device)
    reads = [0, 5, 0]
    what = "TensorPairDataset(x, y, transform=a transform that adds 1)"
    seen = observe(
        probes.probe_TensorPairDataset_transform,
        TensorPairDataset,
        {"x": x, "y": y, "reads": reads},
        what,
    )
    if seen["calls_in_init"]:
        raise CheckError(
            f"TensorPairDataset called the transform {seen['calls_in_init']} times in __init__. "
            "Apply it in __getitem__, one item at a time, so a random augmentation differs "
            "every time an item is read."
        )
    for i, item in zip(reads, seen["items"], strict=True):
        xi, yi = _pair(item, f"TensorPairDataset(..., transform)[{i}]")
        _assert_close(xi, x[i] + 1, what=f"the data of item {i} with a transform that adds 1")
        _assert_close(yi, y[i], what=f"the label of item {i} (the transform is for x only)")
    if seen["calls"] != len(reads):
        raise CheckError(
            f"reading three items called the transform {seen['calls']} times, expected 3: "
            "call it once per __getitem__."
        )
    for nx, ny in [(5, 4), (1, 2)]:
        what = f"TensorPairDataset(x with {nx} rows, y with {ny} rows)"
        seen = observe(
            probes.probe_TensorPairDataset_mismatch, TensorPairDataset, {"nx": nx, "ny": ny}, what
        )
        if not seen["raised_value_error"]:
            raise CheckError(
                f"{what} should raise ValueError: mismatched lengths mean some samples have "
                "no label."
            )


# ---------------------------------------------------------------- DigitFolder


def check_DigitFolder(DigitFolder) -> None:
    """Sorted .pt files only, read lazily: files changed after __init__ show their new contents."""
    g = _gen(1)
    for n, shape in [(1, (1, 8, 8)), (6, (3, 4, 5)), (11, (2,))]:
        xs = [torch.randn(shape, generator=g) for _ in range(n)]
        ys = [int(v) for v in torch.randint(0, 10, (n,), generator=g)]
        names = [f"item_{i:03d}.pt" for i in range(n)]
        # Every file is changed after __init__: a lazy dataset must see the new contents.
        new_xs = [x * -2 + 1 for x in xs]
        new_ys = [(y + 3) % 10 for y in ys]
        what = f"DigitFolder over {n} .pt files (and two other files)"
        case = {"xs": xs, "ys": ys, "new_xs": new_xs, "new_ys": new_ys}
        seen = observe(probes.probe_DigitFolder, DigitFolder, case, what)
        if seen["len"] != n:
            raise CheckError(
                f"len({what}) is {seen['len']}, expected {n}. Keep only the file names that "
                "end in '.pt'."
            )
        for i, item in enumerate(seen["items"]):
            xi, yi = _pair(item, f"{what}[{i}]")
            check_type(xi, torch.Tensor, f"the data of {what}[{i}]")
            if xi.shape == new_xs[i].shape and torch.equal(xi.cpu(), xs[i]):
                raise CheckError(
                    f"{what}[{i}] returned what the file held when the dataset was built, "
                    "not what it holds now: the files were read in __init__. Keep only "
                    "the paths in __init__ and call torch.load in __getitem__."
                )
            expected = next(
                (
                    j
                    for j in range(n)
                    if xi.shape == new_xs[j].shape and torch.equal(xi.cpu(), new_xs[j])
                ),
                None,
            )
            if expected is not None and expected != i:
                raise CheckError(
                    f"{what}[{i}] returned the contents of {names[expected]}, expected "
                    f"{names[i]}: sort the file names so that item i is the i-th name in "
                    "sorted order (os.listdir returns them in no particular order)."
                )
            _assert_close(xi, new_xs[i], what=f"the data of {what}[{i}]")
            label = _label(yi, f"the label of {what}[{i}]")
            if label != new_ys[i]:
                raise CheckError(f"the label of {what}[{i}] is {label}, expected {new_ys[i]}.")
    what = "DigitFolder(folder of 3 files, transform=a transform that adds 1)"
    case = {"xs": [torch.full((1, 2, 2), float(i)) for i in range(3)], "ys": [0, 1, 2], "read": 2}
    seen = observe(probes.probe_DigitFolder_transform, DigitFolder, case, what)
    if seen["calls_in_init"]:
        raise CheckError("DigitFolder called the transform in __init__; call it in __getitem__.")
    xi, yi = _pair(seen["item"], "DigitFolder(..., transform)[2]")
    _assert_close(xi, torch.full((1, 2, 2), 3.0), what="item 2 with a transform that adds 1")
    if _label(yi, "the label of DigitFolder(..., transform)[2]") != 2:
        raise CheckError("the transform must change only the data, not the label.")


# ---------------------------------------------------------------- split_dataset


def _split_indices(seen: dict, what: str) -> tuple[list[int], list[int]]:
    """(train, val) index lists from probe_split_dataset, after the checks on the result's form."""
    _check_pair_result(seen, what, f"{what} should return (train, val), got {{n}} items.")
    parts = []
    for label, part in zip(("training", "validation"), seen["parts"], strict=True):
        if isinstance(part, str):
            raise CheckError(
                f"the {label} part of {what} should be a dataset (len and indexing work), "
                f"got {part}"
            )
        parts.append(part)
    return parts[0], parts[1]


def check_split_dataset(split_dataset) -> None:
    """Sizes, disjoint and complete, random, repeatable per seed, and no change to the global RNG."""
    for k, (n, frac, seed) in enumerate(
        [(100, 0.2, 0), (10, 0.25, 3), (37, 0.5, 11), (1000, 0.1, 5), (3, 0.34, 1)]
    ):
        what = f"split_dataset(dataset of {n}, val_fraction={frac}, seed={seed})"
        case = {"n": n, "frac": frac, "seed": seed, "global_seed": 100 + k}
        seen = observe(probes.probe_split_dataset, split_dataset, case, what)
        if seen["rng_changed"]:
            raise CheckError(
                f"{what} changed torch's global random state. Seed a private generator, "
                "torch.Generator().manual_seed(seed), and pass it to random_split; "
                "torch.manual_seed inside a helper silently resets every later random draw."
            )
        train, val = _split_indices(seen, what)
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
        # Called again, with the global random stream elsewhere: only the seed may matter.
        again = observe(
            probes.probe_split_dataset, split_dataset, {**case, "global_seed": 200 + k}, what
        )
        if _split_indices(again, what)[1] != val:
            raise CheckError(
                f"calling {what} twice gave two different validation sets. Pass "
                "generator=torch.Generator().manual_seed(seed) to random_split."
            )
    vals = []
    for seed in (0, 1):
        what = f"split_dataset(dataset of 200, val_fraction=0.3, seed={seed})"
        case = {"n": 200, "frac": 0.3, "seed": seed, "global_seed": 300}
        vals.append(
            _split_indices(observe(probes.probe_split_dataset, split_dataset, case, what), what)[1]
        )
    if vals[0] == vals[1]:
        raise CheckError("seeds 0 and 1 gave the same split: the seed argument must be used.")


# ---------------------------------------------------------------- make_loaders


def _epoch(epoch: dict, what: str) -> tuple[list[int], list[int]]:
    """(items, batch sizes) of one epoch from the probe."""
    if "not_tensor" in epoch:
        raise _wrong_type(epoch["not_tensor"], "Tensor", f"a batch from {what}")
    return epoch["items"], epoch["sizes"]


def check_make_loaders(make_loaders) -> None:
    """Validation in order and complete; training shuffled, complete and repeatable per seed."""
    for k, (n_train, n_val, batch_size, seed) in enumerate(
        [(50, 23, 8, 0), (40, 10, 16, 1), (30, 1, 4, 2)]
    ):
        what = f"make_loaders(train of {n_train}, val of {n_val}, batch_size={batch_size})"
        case = {
            "n_train": n_train,
            "n_val": n_val,
            "batch_size": batch_size,
            "seed": seed,
            "global_seed": 100 + k,
        }
        seen = observe(probes.probe_make_loaders, make_loaders, case, what)
        _check_pair_result(seen, what, f"{what} should return (train_loader, val_loader).")
        for label, info in zip(("training", "validation"), seen["loaders"], strict=True):
            if not info["is_loader"]:
                raise _wrong_type(info["type"], "DataLoader", f"the {label} loader of {what}")
        if any(info["num_workers"] for info in seen["loaders"]):
            raise CheckError(f"{what}: use num_workers=0 here (workers come later in the lesson).")
        val_items, val_sizes = _epoch(seen["val_epoch"], f"the validation loader of {what}")
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
        train_what = f"the training loader of {what}"
        first, sizes = _epoch(seen["train_epochs"][0], train_what)
        second, _ = _epoch(seen["train_epochs"][1], train_what)
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
        # Built again, with the global random stream elsewhere: only the seed may matter.
        rerun = observe(
            probes.probe_make_loaders, make_loaders, {**case, "global_seed": 200 + k}, what
        )
        rerun_first = (rerun.get("train_epochs") or [{"items": None}])[0]
        if rerun_first.get("items") != first:
            raise CheckError(
                f"calling {what} twice with seed={seed} gave two different training orders. "
                "Pass generator=torch.Generator().manual_seed(seed) to the training DataLoader."
            )


# ---------------------------------------------------------------- channel_stats


def _reference_stats(batches: list) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.cat([b[0].cpu() for b in batches]).double()  # (N, C, H, W)
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
            batches.append({"x": x.to(device), "y": torch.zeros(size, dtype=torch.int64)})
        cases.append((f"C={c}, H=W={hw}, batch sizes {sizes}", {"batches": batches}))
    # Sent in NHWC; the probe permutes it to (N, C, H, W), a non-contiguous view.
    x = torch.rand(4, 5, 5, 3, generator=g)
    batch = {"x": x.to(device), "y": None, "permute": [0, 3, 1, 2]}
    cases.append(("a non-contiguous batch (permuted from NHWC)", {"batches": [batch]}))
    for label, case in cases:
        what = f"channel_stats on {label}"
        result = observe(probes.probe_channel_stats, channel_stats, case, what)["result"]
        check_type(result, (tuple, list), what)
        if len(result) != 2:
            raise CheckError(f"{what} should return (mean, std), got {len(result)} items.")
        mean, std = result
        exp_mean, exp_std = _reference_stats(probes.stats_batches(case))
        c = exp_mean.shape[0]
        for name, value in (("mean", mean), ("std", std)):
            check_type(value, torch.Tensor, f"the {name} from {what}")
            check_shape(value, (c,), names="C", what=f"the {name} from {what}")
            check_dtype(value, torch.float32, f"the {name} from {what}")
        _assert_close(mean.cpu(), exp_mean, rtol=1e-5, atol=1e-5, what=f"the mean from {what}")
        hint = (
            " The std of the whole data set is not the average of the batches' stds (nor of "
            "their variances): keep running sums of x and x**2 per channel and a count, then "
            "std = sqrt(E[x**2] - E[x]**2)."
        )
        try:
            _assert_close(std.cpu(), exp_std, rtol=1e-4, atol=1e-5, what=f"the std from {what}")
        except CheckError as err:
            raise CheckError(f"{err}{hint}") from None


# ---------------------------------------------------------------- make_transforms


def check_make_transforms(make_transforms) -> None:
    """Eval: deterministic normalisation only. Train: random geometry, then normalisation."""
    device = get_device()
    g = _gen(3)
    for k, (mean, std) in enumerate([([0.3], [0.2]), ([0.5, 0.4, 0.1], [0.25, 0.5, 2.0])]):
        c = len(mean)
        sizes = (8, 12)
        images = [torch.rand(c, hw, hw, generator=g).to(device) for hw in sizes]
        zeros = [torch.zeros(c, hw, hw, device=device) for hw in sizes]
        batch = torch.rand(5, c, 8, 8, generator=g).to(device)
        what = f"make_transforms(mean={mean}, std={std})"
        case = {
            "mean": mean,
            "std": std,
            "images": images,
            "zeros": zeros,
            "batch": batch,
            "global_seed": 100 + k,
        }
        seen = observe(probes.probe_make_transforms, make_transforms, case, what)
        _check_pair_result(seen, what, f"{what} should return (train_tf, eval_tf).")
        m = torch.tensor(mean, device=device).view(c, 1, 1)
        s = torch.tensor(std, device=device).view(c, 1, 1)
        for hw, img, zero, outs in zip(sizes, images, zeros, seen["images"], strict=True):
            expected = (img - m) / s
            _assert_close(
                outs["eval"],
                expected,
                rtol=1e-5,
                atol=1e-5,
                what=f"eval_tf of a ({c}, {hw}, {hw}) image; expected (image - mean) / std",
            )
            again = outs["eval_again"]
            if not (isinstance(again, torch.Tensor) and torch.equal(again, outs["eval"])):
                raise CheckError(
                    "eval_tf gave two different results for the same image: validation and "
                    "test data get no random augmentation, or the metric changes run to run."
                )
            train = outs["train"]
            for o in train:
                check_type(o, torch.Tensor, "train_tf(image)")
                check_shape(o, (c, hw, hw), names="C H W", what="train_tf(image)")
            if all(torch.equal(o, train[0]) for o in train):
                raise CheckError(
                    "train_tf gave the same result 12 times for one image: it should apply a "
                    "random augmentation (e.g. v2.RandomAffine) before normalising."
                )
            for o in outs["train_zeros"]:  # several draws: one may happen to move nothing
                _assert_close(
                    o,
                    (zero - m) / s,
                    rtol=1e-5,
                    atol=1e-5,
                    what=(
                        "train_tf of an all-zero image (moving zeros around leaves zeros, so "
                        "after normalisation every pixel should be -mean/std; normalise after "
                        "the geometric augmentation, whose fill value 0 is meant for raw pixels)"
                    ),
                )
        _assert_close(seen["batch"], (batch - m) / s, rtol=1e-5, atol=1e-5, what="eval_tf(batch)")


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
                case = {"args": [batch], "kwargs": {"pad_value": pad_value}}
                result = observe(call, pad_collate, case, what)["result"]
                check_type(result, (tuple, list), what)
                if len(result) != 3:
                    raise CheckError(f"{what} should return (padded, lengths, labels).")
                padded, lens, labs = result
                b, lmax, f = len(seqs), max(lengths), seqs[0].shape[1]
                check_type(padded, torch.Tensor, f"padded from {what}")
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
                    _assert_close(padded, expected, what=f"padded from {what}")
                except CheckError as err:
                    raise CheckError(
                        f"{err} Real values go first in each row; the rest is pad_value."
                    ) from None
                check_type(labs, torch.Tensor, f"labels from {what}")
                check_dtype(labs, torch.int64, f"labels from {what}")
                _assert_close(
                    labs.reshape(-1).cpu(), torch.tensor(labels), what=f"labels from {what}"
                )


# ---------------------------------------------------------------- balanced_sampler


def _draws(balanced_sampler, case: dict, what: str) -> list[int]:
    """The indices the learner's sampler drew for ``case``, after the type checks."""
    try:
        seen = observe(probes.probe_balanced_sampler, balanced_sampler, case, what)
    except AnswerRaised as err:
        if "without replacement" in err.message:
            raise CheckError(
                f"{err}. Sample with replacement (replacement=True): a small class must be "
                "drawn more often than it has samples."
            ) from None
        raise
    if not seen["is_sampler"]:
        raise _wrong_type(seen["type"], "Sampler", what)
    if "not_iterable" in seen:
        raise CheckError(f"{what} should be a sampler you can iterate over: {seen['not_iterable']}")
    if len(seen["draws"]) > seen["cap"]:
        raise CheckError(f"{what} drew more than {seen['cap']} indices; it should stop.")
    return seen["draws"]


def check_balanced_sampler(balanced_sampler) -> None:
    """Every class drawn about equally often, one weight per sample, repeatable per seed."""
    g = _gen(5)
    cases = [
        ([0] * 200 + [1] * 20 + [2] * 5, 3000, 0.05),
        ([0] * 900 + [1] * 90 + [2] * 10, 600, 0.07),
        ([5] * 30 + [2] * 300, 2000, 0.05),  # class ids need not start at 0
        ([1] * 8 + [0] * 2 + [3] * 50, 2000, 0.05),
    ]
    for k, (values, num_samples, tol) in enumerate(cases):
        labels = torch.tensor(values)[torch.randperm(len(values), generator=g)]
        classes = sorted(set(values))
        what = (
            f"balanced_sampler(labels with counts "
            f"{ {c: values.count(c) for c in classes} }, num_samples={num_samples})"
        )
        case = {"labels": labels, "num_samples": num_samples, "seed": 0, "global_seed": 100 + k}
        draws = _draws(balanced_sampler, case, what)
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
        # Built again, with the global random stream elsewhere: only the seed may matter.
        again = _draws(balanced_sampler, {**case, "global_seed": 200 + k}, what)
        if again != draws:
            raise CheckError(
                f"two samplers made by {what} with seed=0 drew different indices: pass "
                "generator=torch.Generator().manual_seed(seed) to WeightedRandomSampler."
            )
    labels = torch.tensor([0] * 50 + [1] * 10)
    by_seed = []
    for seed in (0, 1):
        what = (
            f"balanced_sampler(labels with counts {{0: 50, 1: 10}}, num_samples=100, seed={seed})"
        )
        case = {"labels": labels, "num_samples": 100, "seed": seed, "global_seed": 300}
        by_seed.append(_draws(balanced_sampler, case, what))
    if by_seed[0] == by_seed[1]:
        raise CheckError("seeds 0 and 1 gave the same draws: the seed argument must be used.")
