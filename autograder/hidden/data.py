"""Hidden checks for 05_data.

Every answer is reached through the probes in ``autograder/probes/data.py``: they build
the inputs named in the case, use the learner's dataset, loader, sampler or transforms,
and return what came out as data, with flags for the side effects they watched (torch's
global random state, the caller's tensors and lists). The expected values are computed
here. Each check covers what the exercise's text asks for and nothing it leaves open:
return containers, devices and the exact random draws are the learner's choice.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import torch
from hypothesis import strategies as st
from torch.utils.data import DataLoader, random_split

from autograder import wire
from autograder.boundary import observe
from autograder.contracts import (
    Build,
    Contract,
    Draw,
    Inputs,
    compare_values,
    describe_call,
    device_mix_error,
    stays_on_its_device,
    uses,
)
from autograder.probes import contract as contract_probe
from autograder.probes import data as probes
from tutorial_lib.checks import CheckError, assert_close, check_dtype, check_shape, check_type
from tutorial_lib.device import get_device
from tutorial_lib.i18n import N_, _

GLOBAL_RNG_HINT = N_(
    "It drew from or reseeded the global generator. Create a private one, "
    "torch.Generator().manual_seed(seed), and pass it as generator=...: without one the draws "
    "come from the global stream (a new result every run), and torch.manual_seed(seed) "
    "(also as generator=torch.manual_seed(seed), which returns the global generator) resets "
    "every later random draw of the program."
)


def _changed_global_rng(what: str) -> CheckError:
    """The error for an answer that drew from or reseeded torch's global generator."""
    # GLOBAL_RNG_HINT is looked up when the error is made: the language can change meanwhile.
    return CheckError(
        _("{what} changed torch's global random state. {hint}").format(
            what=what, hint=_(GLOBAL_RNG_HINT)
        )
    )


def _gen(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _wrong_type(type_name: str, wanted: str, what: str) -> CheckError:
    """The error check_type would give, for an object known only by its type's name."""
    hint = _(" Did you forget a `return`?") if type_name == "NoneType" else ""
    article = "an" if wanted[:1].lower() in "aeiou" else "a"
    return CheckError(
        _("{what} should be {article} {wanted}, got {got}.{hint}").format(
            what=what, article=article, wanted=wanted, got=type_name, hint=hint
        )
    )


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
    if isinstance(item, wire.Unsendable) or not isinstance(item, (tuple, list)):
        raise _wrong_type(wire.type_name(item), "(data, label) tuple", what)
    if len(item) != 2:
        raise CheckError(
            _("{what} should be a (data, label) pair, got {n} items.").format(
                what=what, n=len(item)
            )
        )
    return tuple(item)


def _label(y: object, what: str) -> int:
    """A label as an int (a Python number or a one-element tensor)."""
    try:
        return int(torch.as_tensor(y))
    except (TypeError, ValueError, RuntimeError):
        raise CheckError(
            _("{what} should be a number or a one-element tensor, got {got}.").format(
                what=what, got=wire.type_name(y)
            )
        ) from None


def _same_data(xi: object, expected: torch.Tensor, what: str, source: str) -> None:
    """The data of an item: ``expected`` as it is (same dtype and values, on any device)."""
    if isinstance(xi, wire.Unsendable) or not isinstance(xi, torch.Tensor):
        raise _wrong_type(wire.type_name(xi), "Tensor", what)
    if xi.shape == expected.shape and xi.dtype != expected.dtype:
        raise CheckError(
            _(
                "{what} has dtype {got}, but {source} has dtype {expected}: return the "
                "data as it is. A conversion (.float(), torch.tensor(..., dtype=...)) changes what "
                "the caller stored and rounds float64 values to float32."
            ).format(what=what, got=xi.dtype, source=source, expected=expected.dtype)
        )
    _assert_close(xi, expected, what=what, same_device=False)


def _same_label(yi: object, expected: torch.Tensor, what: str) -> None:
    """A label equal to the 0-d tensor ``expected``: a tensor of its dtype, or the same number."""
    if isinstance(yi, torch.Tensor):
        if yi.numel() != 1:
            raise CheckError(
                _("{what} should be one label, got a tensor of shape {shape}.").format(
                    what=what, shape=tuple(yi.shape)
                )
            )
        if yi.dtype != expected.dtype:
            raise CheckError(
                _(
                    "{what} has dtype {got}, but y has dtype {expected}: return y[i] as it is."
                ).format(what=what, got=yi.dtype, expected=expected.dtype)
            )
        value = yi.reshape(()).item()
    elif type(yi) is int or (type(yi) is float and expected.dtype.is_floating_point):
        value = yi
    else:
        raise _wrong_type(wire.type_name(yi), "Tensor (y[i])", what)
    if value != expected.item():
        raise CheckError(
            _("{what} is {value}, expected y[i] = {expected}.").format(
                what=what, value=value, expected=expected.item()
            )
        )


# ---------------------------------------------------------------- TensorPairDataset


class _ReferencePairs:
    """The reference TensorPairDataset: (x[i], y[i]), or (transform(x[i]), y[i])."""

    def __init__(self, x, y, transform=None):
        self.x, self.y, self.transform = x, y, transform

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int):
        item = self.x[i] if self.transform is None else self.transform(self.x[i])
        return item, self.y[i]


def _draw_pairs(d: Draw, n_low: int = 1) -> tuple:
    """x (N, ...) float32 (or int64 in ``values``: any dtype is stored as it is), y (N,)."""
    n = d.size(n_low, 6, empty_ok=n_low == 0)
    features = [d.size(1, 4, empty_ok=True) for _axis in range(d.draw(st.integers(0, 3)))]
    if d.family == "values" and d.draw(st.booleans()):
        x = d.integers(n, *features, low=-50, high=50)
    else:
        x = d.tensor(n, *features)
    y = d.integers(n, low=0, high=3)
    if d.family == "values":  # labels of another dtype (int32 ids, float targets): kept as stored
        kind = d.draw(st.sampled_from(["int64", "int32", "float32"]))
        y = y.to(getattr(torch, kind)) + (0.5 if kind == "float32" else 0)
    return x, y


def _add_one(d: Draw):
    """No transform, or (a Build) one that adds 1; always one in the ``values`` family, the
    one that watches the global random generators (a torch.manual_seed taken only on the
    transform's path must meet a transform there)."""
    if d.family == "values" or d.draw(st.booleans()):
        return Build(probes.build_add_one, {}, _("a transform that adds 1"))
    return None


def _draw_pair_item(d: Draw) -> Inputs:
    x, y = _draw_pairs(d)
    i = d.draw(st.integers(0, x.shape[0] - 1))
    return Inputs((x, y, _add_one(d), i))


def _compare_item(got: object, expected: tuple, what: str, inputs: Inputs) -> None:
    """A (data, label) pair: the data as stored (dtype kept), the label y[i] (a tensor of
    y's dtype, or the same number)."""
    xi, yi = _pair(got, what)
    _same_data(xi, expected[0], _("the data of {what}").format(what=what), "x")
    try:
        _same_label(yi, expected[1], _("the label of {what}").format(what=what))
    except CheckError as err:
        if inputs.args[2] is None:
            raise
        raise CheckError(
            _("{err} The transform is for the data only, never the label.").format(err=err)
        ) from None


def _TRANSFORM_HINT() -> str:
    return _(
        "With a transform, dataset[i] is (transform(x[i]), y[i]), the transform called once "
        "per access on that item's x alone (never in __init__, on all of x, or on the label)."
    )


TENSOR_PAIR_ITEM = Contract(
    "TensorPairDataset",
    _ReferencePairs,
    _draw_pair_item,
    families=("values", "edges", "dtypes", "strides", "device", "grad"),
    compare=_compare_item,
    arg_names=("x", "y", "transform", "i"),
    hint=lambda family, inputs: (
        _TRANSFORM_HINT()
        if inputs.args[2] is not None
        else _("dataset[i] is (x[i], y[i]), each as it is stored.")
    ),
    mutates=(2,),  # the transform's record of its calls, compared with the reference's
    construct=3,
    method="__getitem__",
)

TENSOR_PAIR_LEN = Contract(
    "len(TensorPairDataset)",
    _ReferencePairs,
    lambda d: Inputs(_draw_pairs(d, n_low=0)),
    families=("values", "edges", "strides"),
    arg_names=("x", "y"),
    hint=lambda family, inputs: _(
        "The length is the number of samples, x.shape[0], not the number of features."
    ),
    construct=2,
    method="__len__",
)


@uses(TENSOR_PAIR_LEN, TENSOR_PAIR_ITEM)
def check_TensorPairDataset(TensorPairDataset) -> None:
    """The contracts (length, also 0; items as stored in any dtype, non-contiguous, on any
    device, with their graph; the transform called once, on x[i] only, never in __init__;
    the caller's x and y left alone), then: no caching of transformed items, and mismatched
    lengths raise ValueError."""
    what = _("TensorPairDataset(x of shape (6, 3), y, transform=a transform that adds 1)")
    case = {"x": torch.randn(6, 3, generator=_gen(0)), "y": torch.arange(6), "reads": [0, 5, 0]}
    seen = observe(probes.probe_TensorPairDataset_transform, TensorPairDataset, case, what)
    if seen["calls"] != 3:
        raise CheckError(
            _(
                "reading three items called the transform {calls} times, expected 3: "
                "call it once per __getitem__, every time (no caching of transformed items)."
            ).format(calls=seen["calls"])
        )
    if seen.get("moved"):
        raise CheckError(
            _(
                "With x on another device (here PyTorch's 'meta' device, as a GPU would be), "
                "dataset[1] took x[1] to {device} (.cpu(), .tolist(), torch.tensor(...)): "
                "return x[i] (or transform(x[i])) where it is, without moving or rebuilding it."
            ).format(device=seen["moved"])
        )
    for nx, ny in [(5, 4), (1, 2)]:
        what = _("TensorPairDataset(x with {nx} rows, y with {ny} rows)").format(nx=nx, ny=ny)
        seen = observe(
            probes.probe_TensorPairDataset_mismatch, TensorPairDataset, {"nx": nx, "ny": ny}, what
        )
        if not seen["raised_value_error"]:
            raise CheckError(
                _(
                    "{what} should raise ValueError: mismatched lengths mean some samples have "
                    "no label. Compare len(x) with len(y) in __init__."
                ).format(what=what)
            )


# ---------------------------------------------------------------- DigitFolder

# SCAN.PT: a name ends in ".pt" or it does not; a case-insensitive match counts one file too many.
OTHER_FILES = [
    "notes.txt",
    "labels.csv",
    "old.pt.bak",
    "weights.pth",
    "SCAN.PT",
    "backup/item_000.pt",
]
OTHER_FILES_ONLY = OTHER_FILES[:2]  # no subfolder


def _write_order(n: int, g: torch.Generator) -> list[int]:
    """A seeded order of writing n files that is neither sorted nor reversed (n >= 3)."""
    while True:
        order = torch.randperm(n, generator=g).tolist()
        if n < 3 or order not in (list(range(n)), list(range(n))[::-1]):
            return order


class _ReferenceFolder:
    """The reference DigitFolder: the sorted .pt files, each loaded at every access."""

    def __init__(self, folder, transform=None):
        self.paths = sorted(p for p in Path(folder).iterdir() if p.name.endswith(".pt"))
        self.transform = transform

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int):
        item = torch.load(self.paths[i])
        x = item["x"] if self.transform is None else self.transform(item["x"])
        return x, item["y"]


def _draw_folder(d: Draw, n_low: int = 1) -> Build:
    """A folder (a str or a Path) of n .pt files written in an unsorted order, their x of a
    drawn shape and dtype (kept as stored), and files that are not samples."""
    n = d.size(n_low, 12, empty_ok=n_low == 0)
    shape = [d.size(1, 4) for _axis in range(d.draw(st.integers(1, 3)))]
    spec = {
        "seed": d.draw(st.integers(0, 2**16)),
        "n": n,
        "shape": shape,
        "dtype": d.draw(st.sampled_from(["float32", "float64", "float16", "int64"])),
        "others": d.draw(st.sampled_from([OTHER_FILES, OTHER_FILES_ONLY, []])),
        "as_path": d.draw(st.booleans()),
        "plain_names": d.draw(st.booleans()),
        # The labels' dtype too: "as the file holds them" holds for y as for x.
        "y_dtype": d.draw(st.sampled_from(["int64", "int32", "uint8"])),
    }
    label = _("{folder} of {n} .pt files ({dtype} {shape}) and {others} other files").format(
        folder=_("a pathlib.Path") if spec["as_path"] else _("a str path"),
        n=n,
        dtype=spec["dtype"],
        shape=tuple(shape),
        others=len(spec["others"]),
    )
    if spec["y_dtype"] != "int64":
        label += _(", labels stored as {dtype}").format(dtype=spec["y_dtype"])
    names = [probes.digit_file_name(i, spec["plain_names"]) for i in range(min(n, 3))]
    subfolder = [other for other in spec["others"] if "/" in other]
    label += f" ({', '.join(names + (['...'] if n > 3 else []) + subfolder)})"
    return Build(probes.build_digit_folder, spec, label)


def _FOLDER_SORT_HINT() -> str:
    return _(
        " Sorted by name means sorted(names), character by character: item_10.pt comes "
        "before item_5.pt. A 'natural' sort by the number in the name is another order."
    )


def _FOLDER_SUBFOLDER_HINT() -> str:
    return _(
        " The files of the folder itself only: a subfolder (here backup/) is not searched, "
        "so use Path(folder).glob('*.pt') or os.listdir, not rglob."
    )


def _draw_folder_item(d: Draw) -> Inputs:
    folder = _draw_folder(d)
    i = d.draw(st.integers(0, folder.spec["n"] - 1))
    return Inputs((folder, _add_one(d), i))


def _compare_folder_item(got: object, expected: tuple, what: str, inputs: Inputs) -> None:
    """(x, y): x as the file holds it (dtype kept), y the file's label (a tensor or a number)."""
    xi, yi = _pair(got, what)
    _same_data(xi, expected[0], _("the data of {what}").format(what=what), _("the file's 'x'"))
    converted = yi.dtype if isinstance(yi, torch.Tensor) else type(yi).__name__
    if converted not in (expected[1].dtype, "int"):
        raise CheckError(
            _(
                "the label of {what} is a {got}, but the file's 'y' is a 0-d {expected} tensor: "
                "return it as the file holds it (or the same int), without a conversion such as "
                ".float(), which makes a class id a target cross_entropy refuses."
            ).format(what=what, got=converted, expected=expected[1].dtype)
        )
    label = _label(yi, _("the label of {what}").format(what=what))
    if label != int(expected[1]):
        raise CheckError(
            _("the label of {what} is {label}, expected {y}, the file's 'y'.").format(
                what=what, label=label, y=int(expected[1])
            )
        )


DIGIT_FOLDER_ITEM = Contract(
    "DigitFolder",
    _ReferenceFolder,
    _draw_folder_item,
    # No tensor arguments: the dtypes, strides, device and grad families have nothing to
    # change; the files' dtypes are drawn instead.
    families=("values", "edges"),
    compare=_compare_folder_item,
    arg_names=("folder", "transform", "i"),
    hint=lambda family, inputs: (
        _(
            "Item i is the i-th '.pt' name in sorted order (os.listdir and Path.iterdir return "
            "names in no particular order; other files are ignored), returned as the file holds "
            "it: (x, y), or (transform(x), y), the transform called once per access on x alone."
        )
        + (
            _FOLDER_SORT_HINT()
            if inputs.args[0].spec["plain_names"] and inputs.args[0].spec["n"] >= 3
            else ""
        )
    ),
    mutates=(1,),  # the transform's record of its calls, compared with the reference's
    construct=2,
    method="__getitem__",
)

DIGIT_FOLDER_LEN = Contract(
    "len(DigitFolder)",
    _ReferenceFolder,
    lambda d: Inputs((_draw_folder(d, n_low=0),)),
    families=("values", "edges"),
    arg_names=("folder",),
    hint=lambda family, inputs: (
        _(
            "Count only the files whose name ends in '.pt': p.suffix == '.pt' or "
            "name.endswith('.pt'), not '.pt' in name."
        )
        + (_FOLDER_SUBFOLDER_HINT() if any("/" in o for o in inputs.args[0].spec["others"]) else "")
        + (
            _(" Case matters: SCAN.PT does not end in '.pt', so it is not a sample.")
            if "SCAN.PT" in inputs.args[0].spec["others"]
            else ""
        )
    ),
    construct=1,
    method="__len__",
)


def _truncated_load_errors() -> set[str]:
    """The names of the errors torch.load raises on a truncated sample file, as the probe
    makes one (the first third of its bytes), with the arguments a learner may pass."""
    names = set()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "item.pt"
        torch.save({"x": torch.zeros(3, 4, 5, dtype=torch.float64), "y": torch.tensor(1)}, path)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
        for kwargs in ({}, {"weights_only": True}, {"weights_only": False}, {"mmap": True}):
            try:
                torch.load(path, map_location="cpu", **kwargs)
            except Exception as err:  # the error's type is what is recorded
                names.add(type(err).__name__)
    return names


@uses(DIGIT_FOLDER_LEN, DIGIT_FOLDER_ITEM)
def check_DigitFolder(DigitFolder) -> None:
    """The contracts (the sorted .pt files only, from a str or a Path, also none; items as
    the files hold them, dtype kept, the transform on x only), then what needs files that
    change: read lazily at every access (changed files show their new contents, no caching),
    unreadable files raise, no file opened in __init__ (they are unreadable then), the paths
    listed once (a file added later changes nothing), the transform is called per access and
    never in __init__."""
    g = _gen(1)
    for n, shape, dtype, as_path, truncate in [(6, (3, 4, 5), torch.float64, True, 3)]:
        xs = [torch.randn(shape, generator=g, dtype=dtype) for _ in range(n)]
        ys = [int(v) for v in torch.randint(0, 10, (n,), generator=g)]
        # Every file is changed after __init__: a lazy dataset must see the new contents.
        new_xs = [x * -2 + 1 for x in xs]
        new_ys = [(y + 3) % 10 for y in ys]
        third = torch.randn(shape, generator=g, dtype=dtype) + 5
        folder = _("a pathlib.Path") if as_path else _("a str path")
        what = _("DigitFolder({folder} to {n} .pt files and {others} other files)").format(
            folder=folder, n=n, others=len(OTHER_FILES)
        )
        case = {
            "xs": xs,
            "ys": ys,
            "names": [f"item_{i:03d}.pt" for i in range(n)],
            "write_order": _write_order(n, g),
            "others": OTHER_FILES,
            "as_path": as_path,
            "new_xs": new_xs,
            "new_ys": new_ys,
            "third_x": third,
            "truncate": truncate,
        }
        seen = observe(probes.probe_DigitFolder, DigitFolder, case, what)
        for i, item in enumerate(seen["items"]):
            xi, _label_i = _pair(item, f"{what}[{i}]")
            if isinstance(xi, torch.Tensor) and probes.same_tensor(xi.detach().cpu(), xs[i]):
                raise CheckError(
                    _(
                        "{what} returned what the file held when the dataset was built, not "
                        "what it holds now: the files were read in __init__. Keep only the "
                        "paths in __init__ and call torch.load in __getitem__."
                    ).format(what=f"{what}[{i}]")
                )
        if "reread" in seen:
            xi, _reread_label = _pair(seen["reread"], _("{what}[0], read again").format(what=what))
            if isinstance(xi, torch.Tensor) and torch.equal(xi.detach().cpu(), new_xs[0]):
                raise CheckError(
                    _(
                        "{what}[0], read a second time after its file changed again, returned "
                        "what the file held at the first read: the item was cached. Call "
                        "torch.load in __getitem__ every time, so the data on disk is what you get."
                    ).format(what=what)
                )
        if "truncated" in seen:
            got = seen["truncated"]
            if not (isinstance(got, dict) and "raised" in got):
                raise CheckError(
                    _(
                        "{what}[{i}] returned a {got} for a truncated "
                        "file. A file that cannot be read must raise the error torch.load "
                        "raises: returning None, a placeholder or another item hides a broken "
                        "data set."
                    ).format(what=what, i=truncate, got=wire.type_name(got))
                )
            raised = got["raised"][0]
            if raised not in _truncated_load_errors():
                raise CheckError(
                    _(
                        "{what}[{i}] raised {got} for a truncated file, but torch.load raises "
                        "{expected} there: let its error through as it is. Another type hides "
                        "what went wrong, and an IndexError even ends a loop over the dataset "
                        "early without a word (for x in dataset stops at the first IndexError)."
                    ).format(
                        what=what,
                        i=truncate,
                        got=raised,
                        expected=" / ".join(sorted(_truncated_load_errors())),
                    )
                )
    names = ["d_2.pt", "d_5.pt", "d_7.pt"]
    what = _(
        "DigitFolder(a folder of {n} .pt files {names} that are not readable yet when "
        "the dataset is built)"
    ).format(n=len(names), names=names)
    case = {
        "names": names,
        "xs": [torch.full((1, 2, 2), float(i + 1)) for i in range(len(names))],
        "ys": [1, 2, 3],
        "extra": "d_0.pt",
        "extra_x": torch.full((1, 2, 2), -1.0),
        "as_path": False,
    }
    seen = observe(probes.probe_DigitFolder_listing, DigitFolder, case, what)
    if "init_raised" in seen:
        error, message = seen["init_raised"]
        raise CheckError(
            _(
                "{what} raised {error} in __init__ ({message}): __init__ opened a file. "
                "It must only list the paths; open each file in __getitem__, when the item is "
                "read (not even one file in __init__ to check the format)."
            ).format(what=what, error=error, message=message)
        )
    new_file = _(
        "{what}: after __init__, a new file d_0.pt appeared, and len(dataset) became "
        "{got} (or item 0 became the new file). List the paths once, in __init__, and index "
        "that list: listing the folder again at every access changes the length and the "
        "meaning of index i while the data set is in use."
    )
    if seen["len"] != len(names):
        raise CheckError(new_file.format(what=what, got=seen["len"]))
    for i, item in enumerate(seen["items"]):
        if isinstance(item, dict) and "raised" in item:
            raise CheckError(
                _("{what}[{i}] raised {error}: {message}").format(
                    what=what, i=i, error=item["raised"][0], message=item["raised"][1]
                )
            )
        xi, _yi = _pair(item, f"{what}[{i}]")
        if isinstance(xi, torch.Tensor) and torch.equal(xi.detach().cpu(), case["extra_x"]):
            raise CheckError(new_file.format(what=what, got=seen["len"]))
        _same_data(xi, case["xs"][i], f"{what}[{i}][0]", _("the file's 'x'"))
    what = _("DigitFolder(folder of 3 files, transform=a transform that adds 1)")
    case = {"xs": [torch.full((1, 2, 2), float(i)) for i in range(3)], "ys": [0, 1, 2], "read": 2}
    seen = observe(probes.probe_DigitFolder_transform, DigitFolder, case, what)
    if seen["calls"] != 2:
        raise CheckError(
            _(
                "reading item 2 twice called the transform {calls} times, expected twice: "
                "call transform(x) once per __getitem__, every time (no caching)."
            ).format(calls=seen["calls"])
        )


# ---------------------------------------------------------------- split_dataset

SPLIT_OFFSET = 1000  # item i of the probe's dataset is SPLIT_OFFSET + i


def _split_indices(seen: dict, what: str, n: int) -> tuple[list[int], list[int]]:
    """(train, val) index lists from probe_split_dataset, after the checks on the result's form."""
    # {n} stays a placeholder: _check_pair_result fills it in.
    message = _("{what} should return (train_set, val_set), got {n} items.")
    _check_pair_result(seen, what, message.format(what=what, n="{n}"))
    parts = []
    for label, part in zip((_("training"), _("validation")), seen["parts"], strict=True):
        if isinstance(part, str):
            raise CheckError(
                _(
                    "the {label} part of {what} should be a dataset (len and indexing work), "
                    "got {part}"
                ).format(label=label, what=what, part=part)
            )
        if any(not SPLIT_OFFSET <= v < SPLIT_OFFSET + n for v in part):
            raise CheckError(
                _(
                    "the {label} part of {what} holds {part}..., not items of the dataset "
                    "(which are {first}, {second}, ...): return datasets, e.g. "
                    "Subset(dataset, indices) or what random_split returns, not lists of indices."
                ).format(
                    label=label,
                    what=what,
                    part=part[:5],
                    first=SPLIT_OFFSET,
                    second=SPLIT_OFFSET + 1,
                )
            )
        parts.append([v - SPLIT_OFFSET for v in part])
    return parts[0], parts[1]


def _observe_split(split_dataset, n: int, frac: float, seed: int, global_seed: int) -> tuple:
    what = _("split_dataset(dataset of {n}, val_fraction={frac}, seed={seed})").format(
        n=n, frac=frac, seed=seed
    )
    case = {"n": n, "frac": frac, "seed": seed, "global_seed": global_seed, "offset": SPLIT_OFFSET}
    seen = observe(probes.probe_split_dataset, split_dataset, case, what)
    if seen["rng_changed"]:
        raise _changed_global_rng(what)
    if seen["reads"]:
        raise CheckError(
            _(
                "{what} read {reads} items of the dataset while splitting it. A split only "
                "chooses indices: return Subset(dataset, indices) (as random_split does), which "
                "reads an item when it is asked for. Lists of the items load every file of a "
                "lazy dataset up front and freeze a random augmentation at one draw."
            ).format(what=what, reads=seen["reads"])
        )
    return what, _split_indices(seen, what, n)


def _reference_split(dataset, val_fraction: float, seed: int):
    n_val = math.floor(len(dataset) * val_fraction)
    generator = torch.Generator().manual_seed(seed)
    return random_split(dataset, [len(dataset) - n_val, n_val], generator=generator)


def _draw_split(d: Draw) -> Inputs:
    """Any size (0 and 1 in edges) and any fraction from 0 to 1, the floors that a float
    product rounds (100 * 0.29 is 28.999...) included."""
    n = d.size(0, 60, empty_ok=True) if d.family == "edges" else d.draw(st.integers(1, 200))
    frac = d.draw(st.sampled_from([0.0, 0.1, 0.2, 0.25, 0.29, 0.3, 1 / 3, 0.5, 0.57, 0.9, 1.0]))
    spec = {"n": n, "offset": SPLIT_OFFSET}
    data = Build(probes.build_indexed, spec, _("a dataset of {n} items").format(n=n))
    return Inputs((data, frac, d.draw(st.integers(0, 2**31))))


def _compare_split(got, expected, what: str, inputs: Inputs) -> None:
    """The parts' sizes (floor of N * val_fraction for validation) and their items, all once."""
    if got == expected:
        return
    n, frac = inputs.args[0].spec["n"], inputs.args[1]
    raise CheckError(
        _(
            "{what} gave {got}, expected {expected}: (train_set, val_set), two datasets with "
            "floor({n} * {frac:g}) = {n_val} validation items and the rest for training, "
            "every item of the dataset in exactly one of them."
        ).format(
            what=what,
            got=got,
            expected=expected,
            n=n,
            frac=frac,
            n_val=math.floor(n * frac),
        )
    )


SPLIT_DATASET = Contract(
    "split_dataset",
    _reference_split,
    _draw_split,
    families=("values", "edges"),
    compare=_compare_split,
    view=probes.split_view,
    arg_names=("dataset", "val_fraction", "seed"),
)


# After the cases below, whose messages name the exact slip.
@uses(SPLIT_DATASET, after=True)
def check_split_dataset(split_dataset) -> None:
    """Sizes (floor, also 0 and a float product just below an integer), disjoint and complete,
    datasets of items (no item read while splitting), each part in a random order, repeatable
    per seed, different across seeds, and no change to the global RNG."""
    cases = [
        (100, 0.2, 0),
        (10, 0.25, 3),
        (37, 0.5, 11),
        (1000, 0.1, 5),
        (3, 0.34, 1),
        (9, 0.3, 2),  # 2.7: floor 2, round 3
        (5, 0.1, 4),  # 0.5: no validation item at all
        (29, 0.45, 6),
        (100, 0.29, 7),  # 28.999999999999996: floor 28
    ]
    for k, (n, frac, seed) in enumerate(cases):
        what, (train, val) = _observe_split(split_dataset, n, frac, seed, 100 + k)
        n_val = math.floor(n * frac)
        if (len(train), len(val)) == (n_val, n - n_val) and n_val != n - n_val:
            raise CheckError(
                _(
                    "{what} gave {n_train} training and {n_val} validation items: the two "
                    "parts are swapped. Return (train_set, val_set), in that order."
                ).format(what=what, n_train=len(train), n_val=len(val))
            )
        if len(val) == n_val + 1 and len(train) == n - n_val - 1 and n * frac != n_val + 1:
            raise CheckError(
                _(
                    "{what} gave {n_val} validation items, expected floor({n} * {frac}) = "
                    "floor({product!r}) = {want_val}. In floating point {n} * {frac} is a little "
                    "below {n_val}: floor the product as it is (math.floor(len(dataset) * "
                    "val_fraction)), without adding an epsilon or rounding first."
                ).format(
                    what=what, n_val=len(val), n=n, frac=frac, product=n * frac, want_val=n_val
                )
            )
        if len(val) != n_val or len(train) != n - n_val:
            raise CheckError(
                _(
                    "{what} gave {n_train} training and {n_val} validation items, expected "
                    "{want_train} and {want_val}: the validation size is floor(n * val_fraction) "
                    "= floor({product:g}) (math.floor or int(), not round), the rest is training."
                ).format(
                    what=what,
                    n_train=len(train),
                    n_val=len(val),
                    want_train=n - n_val,
                    want_val=n_val,
                    product=n * frac,
                )
            )
        if sorted(train + val) != list(range(n)):
            raise CheckError(
                _(
                    "{what}: the two parts must be disjoint and together hold every item once; "
                    "split one shuffled list of indices into two slices (careful with [-0:], "
                    "which is the whole list)."
                ).format(what=what)
            )
        ordered = sorted(val)
        if n >= 37 and n_val >= 5 and ordered == list(range(ordered[0], ordered[0] + n_val)):
            raise CheckError(
                _(
                    "{what} took a contiguous block as the validation set. Data files are often "
                    "sorted (by class, by date): shuffle the indices, e.g. with random_split."
                ).format(what=what)
            )
        for label, part in ((_("training"), train), (_("validation"), val)):
            if len(part) >= 8 and part == sorted(part):
                raise CheckError(
                    _(
                        "the {label} part of {what} holds its items in increasing order: "
                        "the text asks for every item in a random order, so keep the shuffled "
                        "order of the permutation (as random_split does) instead of sorting the "
                        "indices of each part."
                    ).format(label=label, what=what)
                )
        # Called again, with the global random stream elsewhere: only the seed may matter.
        _what, (_train, again) = _observe_split(split_dataset, n, frac, seed, 200 + k)
        if again != val:
            raise CheckError(
                _(
                    "calling {what} twice gave two different validation sets. Pass "
                    "generator=torch.Generator().manual_seed(seed) to random_split."
                ).format(what=what)
            )
    vals = [_observe_split(split_dataset, 200, 0.3, seed, 300)[1][1] for seed in (0, 1)]
    if vals[0] == vals[1]:
        raise CheckError(
            _(
                "split_dataset(dataset of 200, 0.3, seed) gave the same split for seeds 0 and 1: "
                "seed the generator with the seed argument, torch.Generator().manual_seed(seed)."
            )
        )


# ---------------------------------------------------------------- make_loaders


def _epoch(epoch: dict, what: str) -> tuple[list[int], list[int]]:
    """(items, batch sizes) of one epoch from the probe."""
    if "not_tensor" in epoch:
        raise _wrong_type(epoch["not_tensor"], "Tensor", _("a batch from {what}").format(what=what))
    return epoch["items"], epoch["sizes"]


def _batch_sizes(n: int, batch_size: int) -> list[int]:
    return [batch_size] * (n // batch_size) + ([n % batch_size] if n % batch_size else [])


def _loaders(make_loaders, case: dict, what: str) -> dict:
    """What probe_make_loaders saw, after the checks on the result's form and side effects."""
    seen = observe(probes.probe_make_loaders, make_loaders, case, what)
    if seen["rng_changed"]:
        raise _changed_global_rng(what)
    _check_pair_result(
        seen, what, _("{what} should return (train_loader, val_loader).").format(what=what)
    )
    for label, info in zip((_("training"), _("validation")), seen["loaders"], strict=True):
        if not info["is_loader"]:
            raise _wrong_type(
                info["type"],
                "DataLoader",
                _("the {label} loader of {what}").format(label=label, what=what),
            )
    if any(info["num_workers"] for info in seen["loaders"]):
        raise CheckError(
            _("{what}: use num_workers=0 here (workers come later in the lesson).").format(
                what=what
            )
        )
    return seen


def _reference_loaders(train_set, val_set, batch_size: int, seed: int):
    train = DataLoader(
        train_set,
        batch_size=batch_size,
        shuffle=True,
        generator=torch.Generator().manual_seed(seed),
    )
    return train, DataLoader(val_set, batch_size=batch_size, shuffle=False)


def _draw_loaders(d: Draw) -> Inputs:
    """Sets of any size (an empty validation set in edges), batch sizes from 1 to past both."""
    n_train, n_val = d.size(1, 40), d.size(0, 30, empty_ok=True)
    train = Build(probes.build_range_dataset, {"start": 0, "n": n_train}, f"train of {n_train}")
    val = Build(probes.build_range_dataset, {"start": 100, "n": n_val}, f"val of {n_val}")
    return Inputs((train, val, d.size(1, 45), d.draw(st.integers(0, 2**31))))


def _compare_loaders(got, expected, what: str, inputs: Inputs) -> None:
    if got != expected:
        raise CheckError(
            _(
                "{what}: one epoch of each loader gave {got}, expected {expected}. Both loaders "
                "use batch_size and keep the last, shorter batch (drop_last=False, "
                "num_workers=0); training sees every item once per epoch, validation every "
                "item in dataset order."
            ).format(what=what, got=got, expected=expected)
        )


MAKE_LOADERS = Contract(
    "make_loaders",
    _reference_loaders,
    _draw_loaders,
    families=("values", "edges"),
    compare=_compare_loaders,
    view=probes.loaders_view,
    arg_names=("train_set", "val_set", "batch_size", "seed"),
)


# After the cases below, whose messages name the exact slip.
@uses(MAKE_LOADERS, after=True)
def check_make_loaders(make_loaders) -> None:
    """Validation in order, complete, batch_size; training shuffled, complete, batch_size,
    repeatable per seed and different across seeds, its generator shared with nothing (not
    the validation loader, not another call); no change to the global RNG."""
    firsts = {}
    for k, (n_train, n_val, batch_size, seed) in enumerate(
        [(50, 23, 8, 0), (40, 10, 16, 1), (30, 1, 4, 2), (40, 10, 16, 7)]
    ):
        what = _(
            "make_loaders(train of {n_train}, val of {n_val}, batch_size={batch_size}, seed={seed})"
        ).format(n_train=n_train, n_val=n_val, batch_size=batch_size, seed=seed)
        case = {
            "n_train": n_train,
            "n_val": n_val,
            "batch_size": batch_size,
            "seed": seed,
            "global_seed": 100 + k,
        }
        seen = _loaders(make_loaders, case, what)
        val_what = _("the validation loader of {what}").format(what=what)
        val_items, val_sizes = _epoch(seen["val_epoch"], val_what)
        expected_val = list(range(100, 100 + n_val))
        if sorted(val_items) != expected_val:
            raise CheckError(
                _(
                    "the validation loader of {what} yielded {got} of {n_val} items: "
                    "every validation item must be scored, so do not drop the last batch."
                ).format(what=what, got=len(val_items), n_val=n_val)
            )
        if val_items != expected_val:
            raise CheckError(
                _(
                    "the validation loader of {what} yields the items in a shuffled order. "
                    "Shuffling validation data changes nothing in the metric but breaks any "
                    "comparison with labels or predictions kept in dataset order: shuffle=False."
                ).format(what=what)
            )
        if val_sizes != _batch_sizes(n_val, batch_size):
            raise CheckError(
                _(
                    "the validation batches of {what} have sizes {got}, expected "
                    "{expected}: pass batch_size to the validation loader "
                    "too."
                ).format(what=what, got=val_sizes, expected=_batch_sizes(n_val, batch_size))
            )
        train_what = _("the training loader of {what}").format(what=what)
        first, sizes = _epoch(seen["train_epochs"][0], train_what)
        second, _sizes = _epoch(seen["train_epochs"][1], train_what)
        if sorted(first) != list(range(n_train)):
            raise CheckError(
                _(
                    "one epoch of the training loader of {what} yielded {got} of "
                    "{n_train} items; every training item should be used each epoch "
                    "(drop_last=False)."
                ).format(what=what, got=len(first), n_train=n_train)
            )
        if first == list(range(n_train)):
            raise CheckError(
                _(
                    "the training loader of {what} yields the items in dataset order: "
                    "shuffle=True, so that batches differ from epoch to epoch."
                ).format(what=what)
            )
        if first == second:
            raise CheckError(
                _(
                    "two epochs of the training loader of {what} had the same order: a fixed "
                    "permutation is not shuffling. Use shuffle=True (with the seeded generator), "
                    "which draws a new order every epoch."
                ).format(what=what)
            )
        if sizes != _batch_sizes(n_train, batch_size):
            raise CheckError(
                _(
                    "the training batches of {what} have sizes {got}, expected "
                    "{expected}: pass batch_size to the training loader "
                    "(DataLoader's default is 1)."
                ).format(what=what, got=sizes, expected=_batch_sizes(n_train, batch_size))
            )
        # Built again, with the global random stream elsewhere: only the seed may matter.
        rerun = _loaders(make_loaders, {**case, "global_seed": 200 + k}, what)
        if _epoch(rerun["train_epochs"][0], train_what)[0] != first:
            raise CheckError(
                _(
                    "calling {what} twice with seed={seed} gave two different training orders. "
                    "Pass generator=torch.Generator().manual_seed(seed) to the training DataLoader."
                ).format(what=what, seed=seed)
            )
        firsts[(n_train, seed)] = first
    # Two pairs built with the same seed, then used: each training loader owns its stream.
    what = _(
        "two calls make_loaders(train of {n_train}, val of {n_val}, batch_size={batch_size}, "
        "seed={seed})"
    ).format(n_train=30, n_val=12, batch_size=4, seed=3)
    case = {"n_train": 30, "n_val": 12, "batch_size": 4, "seed": 3, "global_seed": 300}
    seen = observe(probes.probe_make_loaders_independent, make_loaders, case, what)
    first = _epoch(seen["first"], what)[0]
    if first != _epoch(seen["second"], what)[0]:
        raise CheckError(
            _(
                "{what}, both built before use: one epoch of the first validation loader, then "
                "one of each training loader, and the two training loaders gave different "
                "orders. Their generator is shared: with the validation loader (each pass over "
                "a loader draws a seed from its generator, so validating would change the "
                "training order) or between calls (one generator made at import). Make a new "
                "torch.Generator().manual_seed(seed) in every call, for the training loader "
                "only."
            ).format(what=what)
        )
    if firsts[(40, 1)] == firsts[(40, 7)]:
        raise CheckError(
            _(
                "make_loaders(train of 40, ..., batch_size=16) gave the same training order for "
                "seeds 1 and 7: seed the generator with the seed argument, "
                "torch.Generator().manual_seed(seed)."
            )
        )


# ---------------------------------------------------------------- channel_stats


def _reference_stats(batches: list) -> tuple[torch.Tensor, torch.Tensor]:
    """Two passes in float64, one batch at a time: the largest family compares the biggest
    tensor an answer makes with this one's, a batch (the text: without concatenating)."""
    n, total = 0, 0.0
    for x, *_rest in batches:
        n += x.numel() // x.shape[1]
        total = total + x.double().sum(dim=(0, 2, 3))
    mean = total / n
    squares = 0.0
    for x, *_rest in batches:
        squares = squares + ((x.double() - mean[:, None, None]) ** 2).sum(dim=(0, 2, 3))
    return mean.float(), (squares / n).sqrt().float()


def _draw_stats(d: Draw) -> Inputs:
    """Batches of uneven sizes, each with its own offset (a file sorted by class) or all near
    300 (sums in float32 lose the spread), H != W, tuples or lists; float64 in the dtypes
    family, non-contiguous views in the strides family (permuted from NHWC, or H and W
    transposed in memory). The batches are built
    in the kernel (a Build), so that their dtype and layout reach the answer as they are."""
    spec = {
        "seed": d.draw(st.integers(0, 2**16)),
        "c": d.size(1, 3),
        "h": d.size(1, 4),
        "w": d.size(1, 4),
        "sizes": [d.size(1, 8) for _batch in range(d.size(1, 4))],
        "dtype": "float64" if d.family == "dtypes" else "float32",
        "base": d.draw(st.sampled_from([None, 300.0])),
        "as_list": d.draw(st.booleans()),
        "layout": d.draw(st.sampled_from(["strided", "nhwc"])) if d.family == "strides" else "nchw",
    }
    shapes = [(b, spec["c"], spec["h"], spec["w"]) for b in spec["sizes"]]
    label = f"batches x of shapes {shapes}, {spec['dtype']}" + (
        ", values near 300" if spec["base"] else ""
    )
    return Inputs((Build(probes.build_stats_batches, spec, label),))


def _compare_stats(got: object, expected: tuple, what: str, inputs: Inputs) -> None:
    """(mean, std), float32 (C,) each; the sample std and the usual slips named."""
    if isinstance(got, wire.Unsendable) or not isinstance(got, (tuple, list)):
        raise _wrong_type(wire.type_name(got), "(mean, std) tuple", what)
    if len(got) != 2:
        raise CheckError(
            _("{what} should return (mean, std), got {n} items.").format(what=what, n=len(got))
        )
    (mean, std), (exp_mean, exp_std) = got, expected
    c = exp_mean.shape[0]
    for name, value in (("mean", mean), ("std", std)):
        value_what = _("the {name} from {what}").format(name=name, what=what)
        if isinstance(value, wire.Unsendable) or not isinstance(value, torch.Tensor):
            raise _wrong_type(wire.type_name(value), "Tensor", value_what)
        check_shape(value, (c,), names="C", what=value_what)
        check_dtype(value, torch.float32, value_what)
    hint = _(
        " Count the values of each channel in each batch, B * H * W, and reduce over "
        "dims (0, 2, 3) only."
    )
    try:
        _assert_close(
            mean.cpu(),
            exp_mean,
            rtol=1e-5,
            atol=1e-5,
            what=_("the {name} from {what}").format(name="mean", what=what),
            same_device=False,
        )
    except CheckError as err:
        raise CheckError(f"{err}{hint}") from None
    spec = inputs.args[0].spec
    hint = _(
        " The std of the whole data set is not the average of the batches' stds (nor of "
        "their variances): keep running sums of x and x**2 per channel and a count, then "
        "std = sqrt(E[x**2] - E[x]**2)."
    )
    if spec["base"] is not None:
        hint = _(
            " With values far from zero, E[x**2] - E[x]**2 subtracts two nearly equal "
            "numbers: accumulate the sums in float64 (x.double()), not float32."
        )
    n_values = sum(spec["sizes"]) * spec["h"] * spec["w"]
    got_std = std.detach().cpu().double()
    if n_values == 1:  # n - 1 = 0: the sample std of one value is nan (0 / 0)
        sample_std = bool(torch.isnan(got_std).all())
    else:
        sample = exp_std.double() * math.sqrt(n_values / (n_values - 1))
        sample_std = torch.allclose(got_std, sample, rtol=2e-5, atol=0)
    if sample_std:
        raise CheckError(
            _(
                "the std from {what} is the sample std (dividing by n - 1): Normalize wants "
                "the population std, dividing by n, the number of values per channel "
                "(torch.std(..., correction=0))."
            ).format(what=what)
        )
    try:
        _assert_close(
            std.cpu(),
            exp_std,
            rtol=1e-4,
            atol=1e-5,
            what=_("the {name} from {what}").format(name="std", what=what),
            same_device=False,
        )
    except CheckError as err:
        raise CheckError(f"{err}{hint}") from None


CHANNEL_STATS = Contract(
    "channel_stats",
    _reference_stats,
    _draw_stats,
    # ``once``: "any iterable" and "streaming" in the text: a generator can be read once. No
    # ``device``/``grad``: the text promises neither. The batches are a list the engine cannot
    # snapshot, so the check below watches them for in-place changes.
    families=("values", "edges", "dtypes", "strides", "largest", "once"),
    once_args=(0,),
    compare=_compare_stats,
    arg_names=("loader",),
    hint=lambda family, inputs: (
        _(
            "The batches were joined (torch.cat, torch.stack) into one tensor, which the "
            "text asks you not to do: a data set that does not fit in memory cannot be "
            "joined. Keep running sums per channel and add each batch's to them."
        )
        if family == "largest"
        else _(
            "The loader is any iterable, a stream that can be read only once: keep the "
            "running sums n, s1 and s2 in one pass, not the mean first and the squared "
            "deviations in a second."
        )
        if family == "once"
        else ""
    ),
)


@uses(CHANNEL_STATS)
def check_channel_stats(channel_stats) -> None:
    """The contract (pooled mean and population std per channel: uneven, size-1, shifted,
    float64, H != W, far-from-zero and non-contiguous batches, tuples or lists), then: the
    batches are left unchanged (float64 ones, which x.double() does not copy), a channel of one
    value has std 0 (not nan), and batches on the meta device (a GPU's stand-in) meet no CPU tensor."""
    g = _gen(2)
    batches = [{"x": torch.randn(b, 2, 3, 2, generator=g, dtype=torch.float64)} for b in (3, 2)]
    for b in batches:
        b["x"][:, 0] = 0.3  # a channel of one value: E[x**2] - E[x]**2 rounds below 0
    case = {"batches": [dict(b, y=None, as_list=False) for b in batches]}
    what = _("channel_stats on {label}").format(
        label=_("C={c}, H={h}, W={w}, batch sizes {sizes}, {kind}").format(
            c=2, h=3, w=2, sizes=[3, 2], kind="float64"
        )
    )
    seen = observe(probes.probe_channel_stats, channel_stats, case, what)
    if seen["inputs_changed"]:
        raise CheckError(
            _(
                "{what} changed the batches it read. x.double() returns x itself when it is "
                "already float64, so an in-place operation on it (x.pow_(2), x -= mean) "
                "edits the caller's data: use out-of-place operations (x ** 2)."
            ).format(what=what)
        )
    result = seen["result"]
    if isinstance(result, (tuple, list)) and len(result) == 2:
        std = result[1]
        if isinstance(std, torch.Tensor) and bool(torch.isnan(std.detach().cpu()[:1]).any()):
            raise CheckError(
                _(
                    "the std from {what} is nan for channel 0, which holds the value 0.3 "
                    "everywhere: its variance is 0, but s2 / n - mean**2 rounds to a tiny "
                    "negative number, whose sqrt is nan. Clamp the variance at 0 before the "
                    "sqrt (var.clamp(min=0))."
                ).format(what=what)
            )
    what = _("channel_stats on {label}").format(
        label=_("C={c}, H={h}, W={w}, batch sizes {sizes}, {kind}").format(
            c=2, h=3, w=2, sizes=[3, 2], kind="float32"
        )
    )
    meta = observe(
        probes.probe_channel_stats_meta,
        channel_stats,
        {"shapes": [[3, 2, 3, 2], [2, 2, 3, 2]]},
        what,
    )
    if "numpy" in meta:
        raise CheckError(
            _(
                "{what}, with the batches on another device (here PyTorch's 'meta' device, as a "
                "GPU would be), raised {error}: .numpy() works on CPU tensors only, so on a GPU "
                "it fails. Keep the sums in torch (x.double().sum(dim=(0, 2, 3)))."
            ).format(what=what, error=meta["numpy"])
        )
    cpu = [device for device in meta.get("devices", []) if device != "meta"]
    if "device_mix" in meta or cpu:
        raise CheckError(
            _(
                "{what}, with the batches on another device (here PyTorch's 'meta' device, as a "
                "GPU would be), mixed devices: {error}. A tensor made with torch.zeros(C) lives "
                "on the CPU: start the sums from 0 (a Python number), or make them with "
                "device=x.device."
            ).format(what=what, error=meta.get("device_mix", _("it returned a tensor on the CPU")))
        )


# ---------------------------------------------------------------- make_transforms


def _changed_inside(kept: torch.Tensor) -> bool:
    """Whether some pixels of an (H, W) mask that are not ``kept`` (no longer the flat
    image's value) cannot reach the border through other such pixels (8-neighbours). A
    geometric transform uncovers the complement of a convex region, which always reaches the
    border; an erased rectangle inside the image does not."""
    h, w = kept.shape
    changed = {(i, j) for i in range(h) for j in range(w) if not kept[i, j]}
    todo = [(i, j) for i, j in changed if i in (0, h - 1) or j in (0, w - 1)]
    reached = set(todo)
    while todo:
        i, j = todo.pop()
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                near = (i + di, j + dj)
                if near in changed and near not in reached:
                    reached.add(near)
                    todo.append(near)
    return len(reached) < len(changed)


def check_make_transforms(make_transforms) -> None:
    """Eval: deterministic normalisation only, per channel. Train: random geometry keeping the
    size (any H, W; an image of one value per channel keeps pixels of that value), then
    normalisation. Neither changes its input; building them leaves the global RNG alone."""
    device = get_device()
    g = _gen(3)
    for k, (mean, std) in enumerate([([0.3], [0.2]), ([0.5, 0.4, 0.1], [0.25, 0.5, 2.0])]):
        c = len(mean)
        sizes = [(8, 8), (12, 10)]
        images = [torch.rand(c, h, w, generator=g).to(device) for h, w in sizes]
        zeros = [torch.zeros(c, h, w, device=device) for h, w in sizes]
        levels = torch.tensor([0.8, 0.6, 0.9][:c], device=device).view(c, 1, 1)
        flats = [levels.expand(c, h, w).clone() for h, w in sizes]
        # Every channel the same pattern: one geometric move for the whole image keeps them so.
        twins = [
            torch.rand(1, h, w, generator=g).to(device).expand(c, h, w).clone() for h, w in sizes
        ]
        what = f"make_transforms(mean={mean}, std={std})"
        case = {
            "mean": mean,
            "std": std,
            "images": images,
            "zeros": zeros,
            "flats": flats,
            "twins": twins,
            "global_seed": 100 + k,
        }
        seen = observe(probes.probe_make_transforms, make_transforms, case, what)
        if seen["rng_changed"]:
            raise CheckError(
                _(
                    "{what} changed torch's global random state while building the transforms. "
                    "Leave it alone: torch.manual_seed in here resets every later random draw of "
                    "the program (weight initialisation, shuffling), and the transforms draw their "
                    "random parameters when they are applied anyway."
                ).format(what=what)
            )
        _check_pair_result(
            seen, what, _("{what} should return (train_tf, eval_tf).").format(what=what)
        )
        m = torch.tensor(mean, device=device).view(c, 1, 1)
        s = torch.tensor(std, device=device).view(c, 1, 1)
        for (h, w), img, zero, outs in zip(sizes, images, zeros, seen["images"], strict=True):
            shape = f"({c}, {h}, {w})"
            for key, name in (
                ("eval_changed_input", "eval_tf"),
                ("train_changed_input", "train_tf"),
                ("train_zeros_changed_input", "train_tf"),
            ):
                if outs[key]:
                    raise CheckError(
                        _(
                            "{name} changed the image it was given (a {shape} image of {what}): "
                            "a transform returns a new tensor. Drop inplace=True from Normalize "
                            "and in-place operations such as img.sub_(...)."
                        ).format(name=name, shape=shape, what=what)
                    )
            first, again = outs["eval"], outs["eval_again"]
            if (
                isinstance(first, torch.Tensor)
                and isinstance(again, torch.Tensor)
                and (first.shape != again.shape or not torch.equal(first.cpu(), again.cpu()))
            ):
                raise CheckError(
                    _(
                        "eval_tf gave two different results for the same {shape} image: "
                        "validation and test data get no random augmentation, or the metric "
                        "changes run to run. (Did you return (eval_tf, train_tf) instead of "
                        "(train_tf, eval_tf)?)"
                    ).format(shape=shape)
                )
            _assert_close(
                first,
                (img - m) / s,
                rtol=1e-5,
                atol=1e-5,
                what=_(
                    "eval_tf of a {shape} image; expected (image - mean) / std per channel"
                ).format(shape=shape),
                same_device=False,
            )
            train = outs["train"]
            for o in train:
                if isinstance(o, wire.Unsendable) or not isinstance(o, torch.Tensor):
                    raise _wrong_type(wire.type_name(o), "Tensor", "train_tf(image)")
                check_shape(
                    o,
                    (c, h, w),
                    names="C H W",
                    what=_("train_tf of a {shape} image").format(shape=shape),
                )
            if all(torch.equal(o, train[0]) for o in train):
                raise CheckError(
                    _(
                        "train_tf gave the same result 12 times for one {shape} image: it should "
                        "apply a random augmentation (e.g. v2.RandomAffine) before normalising, "
                        "drawing new random parameters at every call."
                    ).format(shape=shape)
                )
            for o in outs["train_zeros"]:  # several draws: one may happen to move nothing
                check_shape(
                    o,
                    (c, h, w),
                    names="C H W",
                    what=_("train_tf of a {shape} image").format(shape=shape),
                )
                _assert_close(
                    o,
                    (zero - m) / s,
                    rtol=1e-5,
                    atol=1e-5,
                    what=_(
                        "train_tf of an all-zero {shape} image (moving zeros around leaves "
                        "zeros, so after normalisation every pixel should be -mean/std; "
                        "normalise after the geometric augmentation, whose fill value 0 is "
                        "meant for raw pixels)"
                    ).format(shape=shape),
                    same_device=False,
                )
            # A geometric augmentation moves pixels: on an image of one value per channel,
            # every channel keeps pixels of that value (only uncovered ones become 0).
            flat_expected = ((levels - m) / s).flatten()
            for o in outs["train_flat"]:
                check_shape(
                    o,
                    (c, h, w),
                    names="C H W",
                    what=_("train_tf of a {shape} image").format(shape=shape),
                )
                near = (o.detach().to(device).flatten(1) - flat_expected[:, None]).abs() < 1e-4
                if not bool(near.any(dim=1).all()):
                    raise CheckError(
                        _(
                            "train_tf of a {shape} image whose channels each hold one value "
                            "({levels}) changed the values themselves: no pixel of some channel "
                            "is (value - mean) / std any more. The augmentation must be "
                            "geometric (RandomAffine, RandomRotation, a crop...), which only "
                            "moves pixels; ColorJitter or added noise change them."
                        ).format(
                            shape=shape, levels=[round(v, 3) for v in levels.flatten().tolist()]
                        )
                    )
                if _changed_inside(near.all(dim=0).view(h, w).cpu()):
                    raise CheckError(
                        _(
                            "train_tf of a {shape} image whose channels each hold one value "
                            "changed a patch of pixels inside the image, away from its border: "
                            "a geometric augmentation (RandomAffine, RandomRotation, a crop...) "
                            "only moves pixels, and uncovers new ones at the border only. "
                            "RandomErasing, which blanks a rectangle, is not geometric."
                        ).format(shape=shape)
                    )
            for o in outs.get("train_twins", []):
                check_shape(
                    o,
                    (c, h, w),
                    names="C H W",
                    what=_("train_tf of a {shape} image").format(shape=shape),
                )
                raw = o.detach().to(device).double() * s + m  # undo the normalisation
                if bool(((raw - raw[:1]).abs() > 1e-4).any()):
                    raise CheckError(
                        _(
                            "train_tf of a {shape} image whose channels all hold the same "
                            "picture gave channels that no longer match: each channel was moved "
                            "by its own random augmentation. An image's channels belong "
                            "together: apply the augmentation to the whole (C, H, W) image at "
                            "once, so one set of random parameters moves every channel."
                        ).format(shape=shape)
                    )

    # On another device (PyTorch's meta device stands in for a GPU): no CPU tensor mixed in.
    what = "make_transforms(mean=[0.5, 0.4, 0.1], std=[0.25, 0.5, 2.0])"
    case = {"mean": [0.5, 0.4, 0.1], "std": [0.25, 0.5, 2.0], "shape": [3, 8, 6]}
    seen = observe(probes.probe_make_transforms_meta, make_transforms, case, what)
    for name in ("eval_tf", "train_tf"):
        outcome = seen.get(name, {})
        if "device_mix" in outcome or outcome.get("device", "meta") != "meta":
            raise CheckError(
                _(
                    "{name} of {what}, given an image on another device (here PyTorch's 'meta' "
                    "device, as a GPU would be), mixed devices or returned a tensor elsewhere "
                    "({error}). A tensor made with torch.tensor(mean) lives on the CPU: make it "
                    "with device=img.device, or use v2.Normalize, which does."
                ).format(
                    name=name, what=what, error=outcome.get("device_mix", outcome.get("device"))
                )
                + (
                    _(
                        " The result is on the CPU: img.cpu() (or .to('cpu')) moved the image "
                        "off its device. Keep the work, and the result, on img.device."
                    )
                    if outcome.get("device") == "cpu"
                    else ""
                )
            )


# ---------------------------------------------------------------- pad_collate


def _reference_pad_collate(batch: list, pad_value: float = 0.0) -> tuple:
    """A tensor filled with pad_value in the items' dtype, each item copied into its row."""
    seqs = [seq for seq, _label in batch]
    lengths = torch.tensor([seq.shape[0] for seq in seqs], dtype=torch.int64)
    padded = torch.full(
        (len(seqs), max(seq.shape[0] for seq in seqs), seqs[0].shape[1]),
        pad_value,
        dtype=seqs[0].dtype,
    )
    for i, seq in enumerate(seqs):
        padded[i, : seq.shape[0]] = seq
    labels = torch.tensor([int(label) for _seq, label in batch], dtype=torch.int64)
    return padded, lengths, labels


def _draw_pad_collate(d: Draw) -> Inputs:
    """B >= 1 items of lengths >= 1 (all 1 in edges), float32 (float16, bfloat16 or float64
    in the dtypes family), transposed in memory in the strides family, real zeros as the last
    step of every item or not; labels as ints or 0-d int32/int64 tensors; pad_value the
    default, -1, 7.5 or -inf. The batch is built in the kernel (a Build)."""
    spec = {
        "seed": d.draw(st.integers(0, 2**16)),
        "lengths": [d.size(1, 6) for _item in range(d.size(1, 4))],
        "f": d.size(1, 3),
        "dtype": (
            d.draw(st.sampled_from(["float16", "bfloat16", "float64"]))
            if d.family == "dtypes"
            else "float32"
        ),
        "transposed": d.family == "strides",
        "zero_tail": d.draw(st.booleans()),
        # A missing value (nan) in the data is data too: it must come through as it is.
        "nan_step": d.draw(st.booleans()),
        "label_dtype": d.draw(st.sampled_from([None, "int64", "int32"])),
    }
    # 0.1 is not a float32 number: a padding filled in float32 and cast shows in float64.
    pad_value = d.draw(st.sampled_from([None, -1.0, 7.5, float("-inf"), 0.1]))
    extras = [spec["dtype"]]
    if spec["zero_tail"]:
        extras.append("each ending with a step of zeros")
    if spec["nan_step"]:
        extras.append("a nan in the first step of item 0")
    if spec["label_dtype"]:
        extras.append(f"labels as 0-d {spec['label_dtype']} tensors")
    label = f"items of lengths {spec['lengths']}, F={spec['f']}, {', '.join(extras)}"
    kwargs = {} if pad_value is None else {"pad_value": pad_value}
    return Inputs((Build(probes.build_pad_batch, spec, label),), kwargs)


def _first_difference(padded: torch.Tensor, expected: torch.Tensor) -> tuple[int, ...] | None:
    same = (padded == expected) | (torch.isnan(padded) & torch.isnan(expected))
    if bool(same.all()):
        return None
    return tuple(int(i) for i in torch.nonzero(~same)[0].tolist())


def _compare_pad_collate(got: object, expected: tuple, what: str, inputs: Inputs) -> None:
    """padded exactly (any float dtype, -inf padding), lengths from the items in the batch's
    order, labels as int64; each slip named."""
    if isinstance(got, wire.Unsendable) or not isinstance(got, (tuple, list)):
        raise _wrong_type(wire.type_name(got), "(padded, lengths, labels) tuple", what)
    if len(got) != 3:
        raise CheckError(
            _("{what} should return (padded, lengths, labels), got {n} items.").format(
                what=what, n=len(got)
            )
        )
    padded, lens, labs = got
    exp_padded, exp_lengths, exp_labels = expected
    lengths, labels = exp_lengths.tolist(), exp_labels.tolist()
    pad_value = inputs.kwargs.get("pad_value", 0.0)
    if isinstance(padded, wire.Unsendable) or not isinstance(padded, torch.Tensor):
        raise _wrong_type(
            wire.type_name(padded), "Tensor", _("padded from {what}").format(what=what)
        )
    check_shape(
        padded,
        tuple(exp_padded.shape),
        names="B L_max F",
        what=_("padded from {what}").format(what=what),
    )
    if isinstance(lens, wire.Unsendable) or not isinstance(lens, torch.Tensor):
        raise _wrong_type(
            wire.type_name(lens), "Tensor", _("lengths from {what}").format(what=what)
        )
    check_dtype(lens, torch.int64, _("lengths from {what}").format(what=what))
    got_lens = [int(v) for v in lens.reshape(-1)]
    if got_lens != lengths and sorted(got_lens) == sorted(lengths):
        raise CheckError(
            _(
                "lengths from {what} are {got}, expected {expected} in the batch's own "
                "order: the items were reordered (sorted by length?). Row i of padded, "
                "lengths and labels must stay item i of the batch, or the labels and anything "
                "the caller lined up with the items no longer match. Keep the order; "
                "pack_padded_sequence(..., enforce_sorted=False) does not need sorted input."
            ).format(what=what, got=got_lens, expected=lengths)
        )
    if got_lens != lengths:
        raise CheckError(
            _(
                "lengths from {what} are {got}, expected {expected}. Take each "
                "length from the item itself (seq.shape[0]) before padding; counting "
                "non-zero rows fails when the data holds real zeros."
            ).format(what=what, got=got_lens, expected=lengths)
        )
    check_dtype(
        padded,
        exp_padded.dtype,
        _("padded from {what} (keep the sequences' dtype)").format(what=what),
    )
    where = _first_difference(padded.detach().cpu(), exp_padded)
    if where is not None:
        i, t, _feature = where
        value, wanted = float(padded[where]), float(exp_padded[where])
        if t < lengths[i]:
            extra = ""
            if math.isnan(value) and pad_value == float("-inf"):
                extra = _(
                    " (0 * -inf is nan: do not build the padding by multiplying a mask "
                    "with pad_value; fill a new tensor with pad_value and copy the items in)"
                )
            elif exp_padded.dtype != torch.float32:
                extra = _(
                    " (copy the {dtype} values as they are: no float32 working "
                    "copy, which rounds them)"
                ).format(dtype=exp_padded.dtype)
            raise CheckError(
                _(
                    "padded from {what} differs from the items at {where}: got {value!r}, "
                    "expected {wanted!r}, step {t} of item {i}.{extra} Real values go first "
                    "in each row, unchanged; the rest is pad_value."
                ).format(what=what, where=where, value=value, wanted=wanted, t=t, i=i, extra=extra)
            )
        default = (
            _(" (the default, when pad_value is not passed)")
            if "pad_value" not in inputs.kwargs
            else ""
        )
        rounded = ""
        if value != pad_value and abs(value - pad_value) < 1e-6:
            rounded = _(
                " The value is pad_value rounded to float32: fill the padding in the "
                "sequences' dtype (torch.full(..., dtype=seq.dtype), pad_sequence), not in "
                "float32 and then cast."
            )
        raise CheckError(
            _(
                "padded from {what} holds {value!r} at {where}, after the end of item {i} "
                "(length {length}); the padding should be pad_value = {pad_value!r}"
                "{default}. Pass padding_value=pad_value to pad_sequence, or fill with it."
            ).format(
                what=what,
                value=value,
                where=where,
                i=i,
                length=lengths[i],
                pad_value=pad_value,
                default=default,
            )
            + rounded
        )
    if isinstance(labs, wire.Unsendable) or not isinstance(labs, torch.Tensor):
        raise _wrong_type(wire.type_name(labs), "Tensor", _("labels from {what}").format(what=what))
    if labs.dtype != torch.int64:
        raise CheckError(
            _(
                "labels from {what} have dtype {dtype}, expected torch.int64 (what "
                "cross_entropy wants), whatever the items' labels are: e.g. "
                "torch.tensor([int(label) for _, label in batch])."
            ).format(what=what, dtype=labs.dtype)
        )
    got_labels = [int(v) for v in labs.reshape(-1)]
    if got_labels != labels:
        raise CheckError(
            _(
                "labels from {what} are {got}, expected {expected}: label i is "
                "the label of item i, in the batch's order."
            ).format(what=what, got=got_labels, expected=labels)
        )


PAD_COLLATE = Contract(
    "pad_collate",
    _reference_pad_collate,
    _draw_pad_collate,
    # The batch is a list the engine cannot snapshot: the check below watches it. No
    # ``device`` (the engine moves only tensor arguments) and no ``grad`` (the text asks none).
    families=("values", "edges", "dtypes", "strides"),
    compare=_compare_pad_collate,
    arg_names=("batch",),
    examples=16,
)


@uses(PAD_COLLATE)
def check_pad_collate(pad_collate) -> None:
    """The contract (padded values exact, any float dtype, pad value default / -1 / 7.5 / -inf,
    batch order kept, lengths from the items with real zeros at the end, labels from ints or
    0-d integer tensors as int64, B = 1 and length-1 items, non-contiguous items), then: the
    caller's list and sequences are left alone."""
    g = _gen(4)
    case = {
        "seqs": [torch.randn(n, 2, generator=g) for n in (2, 5, 1, 3)],
        "labels": [3, 1, 4, 1],
        "label_dtype": None,
        "pad_value": None,
        "transposed": False,
    }
    what = _("pad_collate(batch of lengths {lengths}{pad}) ({extras})").format(
        lengths=[2, 5, 1, 3], pad="", extras=_("{dtype} sequences").format(dtype="float32")
    )
    seen = observe(probes.probe_pad_collate, pad_collate, case, what)
    if seen["batch_reordered"]:
        raise CheckError(
            _(
                "{what} reordered the caller's list of items (batch.sort(...) sorts it in "
                "place). Keep the batch's order, and leave the list you were given as it was."
            ).format(what=what)
        )
    if seen["seqs_changed"]:
        raise CheckError(
            _(
                "{what} changed the sequences it was given: build the padded tensor as a new "
                "tensor, with no in-place operations on the items."
            ).format(what=what)
        )
    # float64 items and a pad value that float32 cannot hold: the padding comes out exact
    # only when it is filled in the items' dtype.
    seqs = [torch.randn(n, 2, generator=g, dtype=torch.float64) for n in (3, 1)]
    case = {"seqs": seqs, "labels": [0, 1], "label_dtype": None, "pad_value": 0.1}
    what = _("pad_collate(batch of lengths {lengths}{pad}) ({extras})").format(
        lengths=[3, 1], pad=", pad_value=0.1", extras=_("{dtype} sequences").format(dtype="float64")
    )
    seen = observe(probes.probe_pad_collate, pad_collate, case, what)
    batch = list(zip(seqs, case["labels"], strict=True))
    _compare_pad_collate(
        seen["result"],
        _reference_pad_collate(batch, pad_value=0.1),
        what,
        Inputs((batch,), {"pad_value": 0.1}),
    )


# ---------------------------------------------------------------- balanced_sampler


def _draws(balanced_sampler, case: dict, what: str) -> dict:
    """What the probe saw of the learner's sampler for ``case`` (the indices it drew under
    "draws"), after the type and global-RNG checks."""
    seen = observe(probes.probe_balanced_sampler, balanced_sampler, case, what)
    if seen["rng_changed"]:
        raise _changed_global_rng(what)
    if not seen["is_sampler"]:
        raise _wrong_type(seen["type"], "Sampler", what)
    if "not_iterable" in seen:
        raise CheckError(
            _("{what} should be a sampler you can iterate over: {error}").format(
                what=what, error=seen["not_iterable"]
            )
        )
    if len(seen["draws"]) > seen["cap"]:
        raise CheckError(
            _("{what} drew more than {cap} indices; it should stop.").format(
                what=what, cap=seen["cap"]
            )
        )
    return seen


def _reference_sampler(labels: torch.Tensor, num_samples: int, seed: int):
    counts = torch.bincount(labels)
    return torch.utils.data.WeightedRandomSampler(
        1.0 / counts[labels].double(),
        num_samples=num_samples,
        replacement=True,
        generator=torch.Generator().manual_seed(seed),
    )


SAMPLER_ATTRIBUTES = ("weights", "num_samples", "replacement")


def _draw_sampler(d: Draw) -> Inputs:
    """Labels of a few classes with uneven counts, ids not 0..K-1 (some missing), shuffled;
    then which of the sampler's settings is read."""
    ids = d.draw(st.lists(st.integers(0, 9), min_size=1, max_size=4, unique=True))
    values = [c for c in ids for _k in range(d.size(1, 6))]
    order = torch.randperm(len(values), generator=_gen(d.draw(st.integers(0, 2**16))))
    labels = torch.tensor(values)[order]
    num_samples = d.size(1, 50)
    return Inputs((labels, num_samples, 0, d.draw(st.sampled_from(SAMPLER_ATTRIBUTES))))


def _compare_sampler(got: object, expected: object, what: str, inputs: Inputs) -> None:
    """The weights up to a common factor (normalised weights draw the same); the rest equal."""
    if inputs.args[3] != "weights":
        compare_values(got, expected, what, inputs)
        return
    if isinstance(got, wire.Unsendable) or not isinstance(got, torch.Tensor):
        raise _wrong_type(wire.type_name(got), "Tensor", what)
    check_shape(got, tuple(expected.shape), names="N", what=what)
    raw = got.detach().double()
    wrong = ~torch.isclose(raw / raw.sum(), expected / expected.sum(), rtol=1e-4, atol=0)
    if wrong.any():
        i = int(torch.nonzero(wrong)[0])
        count = int((inputs.args[0] == inputs.args[0][i]).sum())
        raise CheckError(
            _(
                "the weights of {what} are not 1 / (count of the sample's class): sample {i} "
                "(class {c}, {count} samples) has weight {weight:.4g}, "
                "while 1 / {count} = {expected:.4g} (up to a factor "
                "shared by all samples). Use weights = 1.0 / torch.bincount(labels)[labels]."
            ).format(
                what=what,
                i=i,
                c=int(inputs.args[0][i]),
                count=count,
                weight=float(raw[i]),
                expected=1 / count,
            )
        )


def _sampler_hint(family: str, inputs: Inputs) -> str:
    return _(
        "WeightedRandomSampler(weights, num_samples=num_samples, replacement=True, "
        "generator=...), with one weight per sample: 1 / (count of its class), "
        "1.0 / torch.bincount(labels)[labels]."
    )


BALANCED_SAMPLER = Contract(
    "balanced_sampler",
    _reference_sampler,
    _draw_sampler,
    # The answer returns a sampler: the engine reads one of its settings (the random draws
    # are judged below). Integer labels: no dtypes or grad; meta cannot count classes.
    families=("values", "edges", "strides"),
    compare=_compare_sampler,
    arg_names=("labels", "num_samples", "seed", _("then the sampler's setting")),
    hint=_sampler_hint,
    construct=3,
    method="__getattribute__",
)


@uses(BALANCED_SAMPLER)
def check_balanced_sampler(balanced_sampler) -> None:
    """The contract (one weight per sample, 1 / count of its class, whatever the class ids;
    num_samples; with replacement; the caller's labels left alone), then the draws:
    num_samples of them, repeatable per seed (also for two samplers built before either is
    used), different across seeds, and the global RNG left alone."""
    labels = torch.tensor([5] * 30 + [2] * 300)[torch.randperm(330, generator=_gen(5))]
    draws = {}
    for seed, global_seed in ((0, 100), (0, 200), (1, 100)):
        what = _(
            "balanced_sampler(labels with counts {{5: 30, 2: 300}}, num_samples=500, seed={seed})"
        ).format(seed=seed)
        case = {"labels": labels, "num_samples": 500, "seed": seed, "global_seed": global_seed}
        draws[seed, global_seed] = _draws(balanced_sampler, case, what)["draws"]
        if len(draws[seed, global_seed]) != 500:
            raise CheckError(
                _(
                    "{what} drew {n} indices, expected num_samples={num_samples} indices in "
                    "range({size}): iterate the WeightedRandomSampler itself."
                ).format(what=what, n=len(draws[seed, global_seed]), num_samples=500, size=330)
            )
    # Built again, with the global random stream elsewhere: only the seed may matter.
    if draws[0, 100] != draws[0, 200]:
        raise CheckError(
            _(
                "two samplers made by {what} with seed=0 drew different indices: pass "
                "generator=torch.Generator().manual_seed(seed) to WeightedRandomSampler."
            ).format(what="balanced_sampler(labels, num_samples=500, seed=0)")
        )
    if draws[0, 100] == draws[1, 100]:
        raise CheckError(
            _(
                "seeds 0 and 1 gave the same draws: seed the generator with the seed argument, "
                "torch.Generator().manual_seed(seed)."
            )
        )
    what = _("two calls balanced_sampler(labels, num_samples=500, seed=0)")
    case = {"labels": labels, "num_samples": 500, "seed": 0, "global_seed": 100}
    first, second = observe(probes.probe_balanced_sampler_twins, balanced_sampler, case, what)[
        "draws"
    ]
    if first != second:
        raise CheckError(
            _(
                "{what}, both built before either was used, drew different indices: they share "
                "one generator (made at import and reseeded at every call?), so the second call "
                "reset the first sampler's stream. Make a new "
                "torch.Generator().manual_seed(seed) in every call."
            ).format(what=what)
        )


# ---------------------------------------------------------------- confusion_matrix


def _reference_confusion(preds: torch.Tensor, targets: torch.Tensor, c: int) -> torch.Tensor:
    """An independent count with NumPy: one += 1 per (true, predicted) pair."""
    import numpy as np

    counts = np.zeros((c, c), dtype=np.int64)
    np.add.at(counts, (targets.cpu().long().numpy(), preds.cpu().long().numpy()), 1)
    return torch.from_numpy(counts)


def _draw_confusion(d: Draw) -> Inputs:
    """N labels (N = 0 in edges) in 0 .. high - 1 with high <= C (absent classes), repeated
    pairs; int64, or int32 in the dtypes family."""
    c = d.size(1, 6)
    high = d.draw(st.integers(1, c))  # labels only 0 .. high - 1: the last classes may be absent
    n = d.size(0 if d.family == "edges" else 1, 40, empty_ok=True)
    preds, targets = d.integers(n, high=high), d.integers(n, high=high)
    if d.family == "dtypes":  # the text allows int32 labels (one_hot, say, wants int64)
        preds, targets = preds.int(), targets.int()
    return Inputs((preds, targets, c))


def _compare_confusion(got: object, expected: torch.Tensor, what: str, inputs: Inputs) -> None:
    """The counts exactly, int64 (C, C), named by the slip they show: transposed, too few."""
    where = _("the result of {what}").format(what=what)
    if isinstance(got, wire.Unsendable) or not isinstance(got, torch.Tensor):
        raise _wrong_type(wire.type_name(got), "Tensor", where)
    c = expected.shape[0]
    check_shape(got, (c, c), names="C C", what=where)
    if got.dtype != torch.int64:
        raise CheckError(
            _(
                "the result of {what} has dtype {dtype}, expected torch.int64: counts are "
                "integers (torch.zeros(C, C) is float32; pass dtype=torch.int64, or use "
                "torch.bincount, which counts in int64)."
            ).format(what=what, dtype=got.dtype)
        )
    got = got.detach().cpu()
    if torch.equal(got, expected):
        return
    if c > 1 and torch.equal(got, expected.t()):
        raise CheckError(
            _(
                "the result of {what} is the transpose of the confusion matrix: rows must be "
                "the TRUE class and columns the PREDICTED class, cm[t, p] = number of samples "
                "of class t predicted as p. Index with targets * num_classes + preds."
            ).format(what=what)
        )
    n = int(inputs.args[0].shape[0])
    if int(got.sum()) != n:
        raise CheckError(
            _(
                "the counts of {what} add up to {total}, but there are {n} samples. "
                "cm[targets, preds] += 1 adds 1 only once per cell, however often a (true, "
                "predicted) pair repeats: count with torch.bincount(targets * C + preds, "
                "minlength=C * C) or cm.index_put_((targets, preds), ones, accumulate=True)."
            ).format(what=what, total=int(got.sum()), n=n)
        )
    t, p = (int(i) for i in torch.nonzero(got != expected)[0].tolist())
    raise CheckError(
        _(
            "cm[{t}, {p}] from {what} is {got}, expected {expected}: "
            "the number of samples of true class {t} that were predicted as class {p}."
        ).format(t=t, p=p, what=what, got=int(got[t, p]), expected=int(expected[t, p]))
    )


def _confusion_hint(family: str, inputs: Inputs) -> str:
    preds, targets, c = inputs.args
    if preds.numel() and int(max(preds.max(), targets.max())) + 1 < c:
        return _(
            "Here num_classes is larger than the largest label + 1: torch.bincount's result is "
            "only as long as the largest value it saw plus one, so pass minlength=num_classes * "
            "num_classes, and take C from num_classes, not from the labels."
        )
    return ""


CONFUSION_MATRIX = Contract(
    "confusion_matrix",
    _reference_confusion,
    _draw_confusion,
    # No ``device``: the text lets the result live on the CPU whatever the inputs' device.
    families=("values", "edges", "dtypes", "strides"),
    compare=_compare_confusion,
    arg_names=("preds", "targets", "num_classes"),
    hint=_confusion_hint,
)


@uses(CONFUSION_MATRIX)
def check_confusion_matrix(confusion_matrix) -> None:
    """The contract: counts equal to an independent NumPy count, int64 (C, C) with rows = true
    class, any num_classes >= the labels, int32 or int64, non-contiguous, N = 0, repeated
    pairs; the caller's tensors left alone), then: on the meta device, no CPU tensor is mixed
    in (the result may still be on the CPU)."""
    preds, targets = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    _check_stays_on_device(confusion_matrix, CONFUSION_MATRIX, (preds, targets, 3), result=False)
    what = describe_call(CONFUSION_MATRIX, Inputs((preds, targets, 3)), "device")
    case = {"preds": preds, "targets": targets, "num_classes": 3}
    seen = observe(probes.probe_confusion_matrix_indexing, confusion_matrix, case, what)
    if seen["cpu_indexed"]:
        raise CheckError(
            _(
                "{what} indexed a CPU tensor with the labels ({calls}): on a GPU that raises "
                "'indices should be either on cpu or on the same device as the indexed tensor'. "
                "A tensor made with torch.zeros(C, C, dtype=torch.int64) lives on the CPU: pass "
                "device=targets.device, or count with torch.bincount, which stays on the "
                "labels' device."
            ).format(what=what, calls=", ".join(seen["cpu_indexed"]))
        )


# ---------------------------------------------------------------- precision_recall


def _reference_precision_recall(cm: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-class precision and recall in NumPy float64; 0 where the denominator is 0."""
    import numpy as np

    counts = cm.cpu().numpy().astype(np.float64)
    tp = np.diag(counts)
    predicted, actual = counts.sum(axis=0), counts.sum(axis=1)
    precision = np.divide(tp, predicted, out=np.zeros_like(tp), where=predicted > 0)
    recall = np.divide(tp, actual, out=np.zeros_like(tp), where=actual > 0)
    return torch.from_numpy(precision), torch.from_numpy(recall)


def _draw_precision_recall(d: Draw) -> Inputs:
    """A (C, C) int64 matrix, small or large counts (all zeros in edges), with classes never
    predicted (a zero column), never occurring (a zero row), or both."""
    c = d.size(1, 6)
    high = d.draw(st.sampled_from([1, 4, 30, 10**6]))  # 1: all zeros (no samples)
    cm = d.integers(c, c, high=high)
    if d.draw(st.booleans()):
        cm[:, d.bools(c)] = 0  # classes never predicted
    if d.draw(st.booleans()):
        cm[d.bools(c)] = 0  # classes that never occur
    return Inputs((cm,))


def _compare_precision_recall(got: object, expected: tuple, what: str, inputs: Inputs) -> None:
    """Two floating (C,) tensors (float32 or float64, the learner's choice) near the
    reference's, 0 and not nan for 0 / 0; a swap and a mean are named."""
    if isinstance(got, wire.Unsendable) or not isinstance(got, (tuple, list)):
        raise _wrong_type(wire.type_name(got), "(precision, recall) tuple", what)
    if len(got) != 2:
        raise CheckError(
            _("{what} should return (precision, recall), got {n} items.").format(
                what=what, n=len(got)
            )
        )
    c = inputs.args[0].shape[0]
    values = {}
    for name, value in zip(("precision", "recall"), got, strict=True):
        where = _("the {name} from {what}").format(name=name, what=what)
        if isinstance(value, wire.Unsendable) or not isinstance(value, torch.Tensor):
            raise _wrong_type(wire.type_name(value), "Tensor", where)
        if value.ndim == 0:
            raise CheckError(
                _(
                    "{where} is one number; it should hold one value per class, shape ({c},). "
                    "Averaging over classes (macro) is a separate step, done by the caller."
                ).format(where=where, c=c)
            )
        check_shape(value, (c,), names="C", what=where)
        if not value.dtype.is_floating_point:
            raise CheckError(
                _(
                    "{where} has dtype {dtype}: precision and recall are fractions. "
                    "Floor division (//) or an integer result rounds them down to 0 or 1: "
                    "divide with / (true division), which gives a float tensor."
                ).format(where=where, dtype=value.dtype)
            )
        values[name] = value.detach().cpu().double()
    for name, value in values.items():
        nan = torch.isnan(value)
        if bool(nan.any()):
            k = int(torch.nonzero(nan)[0])
            which = (
                _("is never predicted (its column sums to 0)")
                if name == "precision"
                else _("never occurs (its row sums to 0)")
            )
            raise CheckError(
                _(
                    "the {name} of class {k} from {what} is nan: class {k} {which}, so "
                    "the ratio is 0 / 0. Give it 0, as scikit-learn does with "
                    "zero_division=0: divide by sums.clamp(min=1), or torch.where(sums > 0, ...)."
                ).format(name=name, k=k, what=what, which=which)
            )
    exp = dict(zip(("precision", "recall"), expected, strict=True))
    close = {k: torch.allclose(values[k], e, rtol=1e-5, atol=1e-6) for k, e in exp.items()}
    if all(close.values()):
        return
    swapped = torch.allclose(
        values["precision"], exp["recall"], rtol=1e-5, atol=1e-6
    ) and torch.allclose(values["recall"], exp["precision"], rtol=1e-5, atol=1e-6)
    if swapped:
        raise CheckError(
            _(
                "{what} returned (recall, precision): precision and recall are swapped. Rows "
                "are the true class and columns the predicted one, so precision (of the samples "
                "predicted as c, how many are c) divides by the column sums, cm.sum(dim=0), and "
                "recall (of the samples of class c, how many were found) by the row sums, "
                "cm.sum(dim=1)."
            ).format(what=what)
        )
    name = "precision" if not close["precision"] else "recall"
    k = int(torch.nonzero(~torch.isclose(values[name], exp[name], rtol=1e-5, atol=1e-6))[0])
    raise CheckError(
        _(
            "the {name} of class {k} from {what} is {got:.6g}, expected "
            "{expected:.6g}: cm[{k}, {k}] divided by the sum of {sums} {k} "
            "(0 when that sum is 0)."
        ).format(
            name=name,
            k=k,
            what=what,
            got=float(values[name][k]),
            expected=float(exp[name][k]),
            sums=_("column") if name == "precision" else _("row"),
        )
    )


PRECISION_RECALL = Contract(
    "precision_recall",
    _reference_precision_recall,
    _draw_precision_recall,
    # No ``device`` here (the engine would compare dtypes on meta with the reference's
    # float64, and the text allows float32): the check below does it, devices only.
    families=("values", "edges", "strides"),
    compare=_compare_precision_recall,
    arg_names=("cm",),
)


@uses(PRECISION_RECALL)
def check_precision_recall(precision_recall) -> None:
    """The contract (per-class precision over columns and recall over rows against NumPy:
    floating (C,), 0 and not nan for 0 / 0, large counts, C = 1, all zeros, non-contiguous,
    cm left alone), then: on the meta device, the results stay on cm's device."""
    _check_stays_on_device(precision_recall, PRECISION_RECALL, (torch.tensor([[3, 1], [0, 0]]),))


def _check_stays_on_device(answer, contract: Contract, args: tuple, result: bool = True) -> None:
    """The answer on ``args`` moved to PyTorch's meta device (a GPU's stand-in on a CPU-only
    grader): it must not mix devices, and (``result``) every tensor it returns must stay there. The
    engine's ``device`` family, without its dtype comparison (the text leaves the float
    dtype open)."""
    what = describe_call(contract, Inputs(args), "device")
    case = {"args": list(args), "kwargs": {}, "family": "device", "rules": []}
    seen = observe(contract_probe.probe_contract, answer, case, what)
    if "device_mix" in seen:
        raise device_mix_error(what, seen["device_mix"])
    if not result:  # the text lets the result live on the CPU
        return
    results = seen.get("result")
    results = results if isinstance(results, (tuple, list)) else [results]
    for got in results:
        if isinstance(got, dict) and "device" in got:
            stays_on_its_device(got, what)
