"""Plausible wrong answers for 05_data's exercises."""

from autograder.mistakes import Mistake

_IMPORTS = "import torch\nfrom torch.utils.data import Dataset\n"

MISTAKES = {
    "TensorPairDataset": [
        Mistake(
            name="len-counts-features",
            message="len(dataset) is the number of samples, x.shape[0], not the size of one sample.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n            raise ValueError('lengths differ')\n"
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n        return self.x.shape[-1]\n"
                "    def __getitem__(self, i):\n"
                "        x = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
                "        return x, self.y[i]\n"
            ),
        ),
        Mistake(
            name="transform-in-init",
            message="Transforming all of x once in __init__ freezes a random augmentation: "
            "apply the transform in __getitem__, per item and per access.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n            raise ValueError('lengths differ')\n"
                "        self.x = x if transform is None else transform(x)\n"
                "        self.y = y\n"
                "    def __len__(self):\n        return len(self.x)\n"
                "    def __getitem__(self, i):\n        return self.x[i], self.y[i]\n"
            ),
        ),
        Mistake(
            name="no-length-check",
            message="Check that x and y have the same number of samples and raise ValueError if not.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        x = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
                "        return x, self.y[i]\n"
            ),
        ),
        Mistake(
            name="transform-on-whole-x",
            message="The transform got all of x and the item was cut from its output: call "
            "transform(self.x[i]) on one item. A random augmentation of the whole tensor is "
            "one draw shared by every item, and each read pays for the whole data set.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                "            raise ValueError('lengths differ')\n"
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        if self.transform is None:\n"
                "            return self.x[i], self.y[i]\n"
                "        return self.transform(self.x)[i], self.y[i]\n"
            ),
        ),
        Mistake(
            name="transform-on-label-too",
            message="The transform is for the data only: return (transform(x[i]), y[i]); a label "
            "passed through an augmentation is no longer the label.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                "            raise ValueError('lengths differ')\n"
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        if self.transform is None:\n"
                "            return self.x[i], self.y[i]\n"
                "        return self.transform(self.x[i]), self.transform(self.y[i])\n"
            ),
        ),
        Mistake(
            name="writes-transform-back",
            message="Writing the transformed item back into self.x changes the caller's tensor and "
            "compounds the transform at every read: keep the result in a new variable.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                "            raise ValueError('lengths differ')\n"
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        if self.transform is not None:\n"
                "            self.x[i] = self.transform(self.x[i])\n"
                "        return self.x[i], self.y[i]\n"
            ),
        ),
        Mistake(
            name="casts-to-float32",
            message="Return x[i] as it is: converting x to float32 rounds float64 data and turns "
            "integer data into floats the caller did not ask for.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                "            raise ValueError('lengths differ')\n"
                "        self.x, self.y, self.transform = x.float(), y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        x = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
                "        return x, self.y[i]\n"
            ),
        ),
        Mistake(
            name="caches-transformed-items",
            message="Caching transformed items freezes a random augmentation after the first read: "
            "call the transform at every __getitem__.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                "            raise ValueError('lengths differ')\n"
                "        self.x, self.y, self.transform = x, y, transform\n"
                "        self.cache = {}\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        if i not in self.cache:\n"
                "            x = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
                "            self.cache[i] = (x, self.y[i])\n"
                "        return self.cache[i]\n"
            ),
        ),
        Mistake(
            name="copies-x-detached",
            message="torch.tensor(x) copies x and cuts it from the autograd graph: keep the "
            "caller's tensor and return x[i] as it is.",
            code=_IMPORTS
            + (
                "import warnings\n"
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                "            raise ValueError('lengths differ')\n"
                "        with warnings.catch_warnings():\n"
                "            warnings.simplefilter('ignore')\n"
                "            self.x = torch.tensor(x, dtype=x.dtype, device=x.device)\n"
                "        self.y, self.transform = y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        x = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
                "        return x, self.y[i]\n"
            ),
        ),
        Mistake(
            name="flattens-x-with-view",
            message="x may be a non-contiguous view, where .view fails: use .reshape, or "
            "better, index x as it is.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                "            raise ValueError('lengths differ')\n"
                "        self.shape = x.shape[1:]\n"
                "        self.x = x.view(len(x), self.shape.numel())  # one row per sample\n"
                "        self.y, self.transform = y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        x = self.x[i].view(self.shape)\n"
                "        return (x if self.transform is None else self.transform(x)), self.y[i]\n"
            ),
        ),
        Mistake(
            name="length-check-one-way",
            message="Raise ValueError whenever the counts differ, in both directions: more labels "
            "than samples is as broken as fewer.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) > len(y):\n"
                "            raise ValueError('more samples than labels')\n"
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        x = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
                "        return x, self.y[i]\n"
            ),
        ),
        Mistake(
            name="stores-numpy-arrays",
            message="x.numpy() turns every item into a NumPy array (and fails on a tensor that "
            "needs grad or lives on a GPU): keep the tensor and return x[i].",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                "            raise ValueError('lengths differ')\n"
                "        self.x, self.y, self.transform = x.numpy(), y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        x = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
                "        return x, self.y[i]\n"
            ),
        ),
        Mistake(
            name="rejects-empty-dataset",
            message="An empty dataset (N = 0) is still a dataset, with len 0: raise ValueError only "
            "when x and y have different numbers of samples.",
            code=_IMPORTS
            + (
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) == 0 or len(x) != len(y):\n"
                "            raise ValueError('need the same, non-zero number of samples')\n"
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        x = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
                "        return x, self.y[i]\n"
            ),
        ),
        Mistake(
            name="data-rebuilt-from-list",
            message="torch.tensor(x[i].tolist()) rebuilds the item on the CPU (and an item of shape "
            "(0, 0) comes back of shape (0,)): return x[i] as it is.",
            code=(
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                '            raise ValueError("x and y differ in length")\n'
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        xi = torch.tensor(self.x[i].tolist(), dtype=self.x.dtype)  # a fresh copy of the item\n"
                "        if self.transform is not None:\n"
                "            xi = self.transform(xi)\n"
                "        return xi, self.y[i]\n"
            ),
        ),
        Mistake(
            name="cpu-index-in-index-select",
            message="index_select with torch.tensor([i]), a CPU index, fails on a GPU: return x[i] "
            "and y[i].",
            code=(
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                '            raise ValueError("x and y differ in length")\n'
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        at = torch.tensor([i])\n"
                "        xi = self.x.index_select(0, at)[0]\n"
                "        if self.transform is not None:\n"
                "            xi = self.transform(xi)\n"
                "        return xi, self.y.index_select(0, at)[0]\n"
            ),
        ),
        Mistake(
            name="transform-on-cpu-copy",
            message="transform(x[i].cpu()) moves the item to the CPU: dataset[i] is (transform(x[i]),"
            " y[i]), where x is.",
            code=(
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                '            raise ValueError("x and y differ in length")\n'
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        xi = self.x[i]\n"
                "        if self.transform is not None:\n"
                "            xi = self.transform(xi.cpu())  # transforms work on CPU tensors\n"
                "        return xi, self.y[i]\n"
            ),
        ),
    ],
    "DigitFolder": [
        Mistake(
            name="reads-every-file-in-init",
            message="Reading every file in __init__ is slow, holds the whole data set in memory "
            "and goes stale: keep the paths in __init__, torch.load in __getitem__.",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        paths = sorted(p for p in Path(folder).iterdir() if p.suffix == '.pt')\n"
                "        self.items = [torch.load(p) for p in paths]\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n        return len(self.items)\n"
                "    def __getitem__(self, i):\n"
                "        x = self.items[i]['x']\n"
                "        if self.transform is not None:\n            x = self.transform(x)\n"
                "        return x, self.items[i]['y']\n"
            ),
        ),
        Mistake(
            name="counts-every-file",
            message="Keep only the names that end in .pt: README.txt is not a sample.",
            code=_IMPORTS
            + (
                "import os\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(os.path.join(folder, n) for n in os.listdir(folder))\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="ignores-transform",
            message="When a transform is given, return (transform(x), y).",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(p for p in Path(folder).iterdir() if p.suffix == '.pt')\n"
                "    def __len__(self):\n        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        return item['x'], item['y']\n"
            ),
        ),
        Mistake(
            name="caches-loaded-files",
            message="A cache in __getitem__ returns what a file held at its first read: call "
            "torch.load every time, so a changed file is seen the next time it is read.",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(p for p in Path(folder).iterdir() if p.suffix == '.pt')\n"
                "        self.transform = transform\n"
                "        self.cache = {}\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        if i not in self.cache:\n"
                "            self.cache[i] = torch.load(self.paths[i])\n"
                "        item = self.cache[i]\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="swallows-unreadable-files",
            message="A file that cannot be read must raise: returning None (or another item) for a "
            "truncated file hides a broken data set until training fails far away.",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(p for p in Path(folder).iterdir() if p.suffix == '.pt')\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        try:\n"
                "            item = torch.load(self.paths[i])\n"
                "        except Exception:\n"
                "            return None\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="pt-anywhere-in-name",
            message="Keep the names that END in .pt (p.suffix == '.pt'): 'old.pt.bak' contains .pt "
            "but is not a sample.",
            code=_IMPORTS
            + (
                "import os\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(os.path.join(folder, n) for n in os.listdir(folder) if '.pt' in n)\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="transform-on-label-too",
            message="The transform changes the data only; the label comes back as the file holds it.",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(p for p in Path(folder).iterdir() if p.suffix == '.pt')\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        if self.transform is None:\n"
                "            return item['x'], item['y']\n"
                "        return self.transform(item['x']), self.transform(item['y'])\n"
            ),
        ),
        Mistake(
            name="casts-to-float32",
            message="Return the tensor the file holds as it is: .float() rounds float64 data.",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(p for p in Path(folder).iterdir() if p.suffix == '.pt')\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'].float()\n"
                "        if self.transform is not None:\n"
                "            x = self.transform(x)\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="unsorted-paths",
            message="Path.iterdir and os.listdir return names in no particular order: sort them, so "
            "item i is the i-th name in sorted order.",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = [p for p in Path(folder).iterdir() if p.suffix == '.pt']\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="str-folder-only",
            message="folder may be a str or a pathlib.Path: join with os.path.join or Path(folder) "
            "/ name, not folder + '/' + name (a Path cannot be added to a str).",
            code=_IMPORTS
            + (
                "import os\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        names = sorted(n for n in os.listdir(folder) if n.endswith('.pt'))\n"
                "        self.paths = [folder + '/' + n for n in names]\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="natural-sort-by-number",
            message="Sort by name, as the text asks: a 'natural' sort by the number in the name "
            "puts item_10.pt after item_9.pt, while sorted() puts it after item_1.pt.",
            code=_IMPORTS
            + (
                "import re\n"
                "from pathlib import Path\n"
                "def _key(p):\n"
                "    return [int(t) if t.isdigit() else t for t in re.split(r'(\\d+)', p.name)]\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        paths = [p for p in Path(folder).iterdir() if p.suffix == '.pt']\n"
                "        self.paths = sorted(paths, key=_key)\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="peeks-at-first-file-in-init",
            message="__init__ must not open any file, not even one to check the format: on a "
            "network disk that is a read before the first batch, and a file that is still being "
            "written breaks building the dataset. Read files in __getitem__ only.",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(p for p in Path(folder).iterdir() if p.suffix == '.pt')\n"
                "        if self.paths and 'x' not in torch.load(self.paths[0]):\n"
                "            raise ValueError('not a digit file')\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="recursive-glob",
            message="rglob('*.pt') also collects the .pt files of subfolders (a backup, an "
            "archive): keep the files of the folder itself, Path(folder).glob('*.pt').",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(Path(folder).rglob('*.pt'))\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="lists-folder-at-every-access",
            message="List the files once, in __init__: listing the folder again in __len__ and "
            "__getitem__ makes the length and the meaning of index i change whenever a file is "
            "added, in the middle of an epoch.",
            code=_IMPORTS
            + (
                "import os\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.folder, self.transform = os.fspath(folder), transform\n"
                "    def _paths(self):\n"
                "        names = sorted(n for n in os.listdir(self.folder) if n.endswith('.pt'))\n"
                "        return [os.path.join(self.folder, n) for n in names]\n"
                "    def __len__(self):\n"
                "        return len(self._paths())\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self._paths()[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="sorted-by-modification-time",
            message="Sort by name, not by modification time: the files are written in no "
            "particular order, and a file rewritten later moves to the end.",
            code=_IMPORTS
            + (
                "import os\n"
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        paths = [p for p in Path(folder).iterdir() if p.suffix == '.pt']\n"
                "        self.paths = sorted(paths, key=os.path.getmtime)\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y']\n"
            ),
        ),
        Mistake(
            name="label-as-float",
            message="Return the label as the file holds it, an int64 tensor (or the same int): "
            ".float() turns a class id into a float, which cross_entropy refuses as a target.",
            code=_IMPORTS
            + (
                "from pathlib import Path\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(p for p in Path(folder).iterdir() if p.suffix == '.pt')\n"
                "        self.transform = transform\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y'].float()\n"
            ),
        ),
    ],
    "split_dataset": [
        Mistake(
            name="no-generator",
            message="Without a seeded generator random_split draws a new split every run: "
            "pass generator=torch.Generator().manual_seed(seed).",
            code=(
                "import math\nfrom torch.utils.data import random_split\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    return tuple(random_split(dataset, [len(dataset) - n_val, n_val]))\n"
            ),
        ),
        Mistake(
            name="global-manual-seed",
            message="torch.manual_seed in a helper resets the global random stream for everything "
            "after it; seed a private torch.Generator instead.",
            code=(
                "import math, torch\nfrom torch.utils.data import random_split\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    torch.manual_seed(seed)\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    return tuple(random_split(dataset, [len(dataset) - n_val, n_val]))\n"
            ),
        ),
        Mistake(
            name="last-block-unshuffled",
            message="Data is often stored sorted: shuffle before cutting, or the validation set "
            "is not a fair sample.",
            code=(
                "import math\nfrom torch.utils.data import Subset\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    n_train = len(dataset) - n_val\n"
                "    return Subset(dataset, range(n_train)), Subset(dataset, range(n_train, len(dataset)))\n"
            ),
        ),
        Mistake(
            name="generator-is-global-seed",
            message="generator=torch.manual_seed(seed) reseeds torch's global generator (and returns "
            "it): every later random draw of the program restarts. Use "
            "torch.Generator().manual_seed(seed).",
            code=(
                "import math, torch\n"
                "from torch.utils.data import random_split\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    return tuple(random_split(dataset, [len(dataset) - n_val, n_val], generator=torch.manual_seed(seed)))\n"
            ),
        ),
        Mistake(
            name="rounds-val-size",
            message="The validation set holds floor(n * val_fraction) items: round() gives one more "
            "when the fraction part is .5 or above.",
            code=(
                "import torch\n"
                "from torch.utils.data import random_split\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = round(len(dataset) * val_fraction)\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    return tuple(random_split(dataset, [len(dataset) - n_val, n_val], generator=g))\n"
            ),
        ),
        Mistake(
            name="negative-slice-for-val",
            message="perm[-n_val:] is the WHOLE list when n_val is 0: slice from the front, "
            "perm[:n_val] and perm[n_val:].",
            code=(
                "import math, torch\n"
                "from torch.utils.data import Subset\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    perm = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed)).tolist()\n"
                "    return Subset(dataset, perm[:len(dataset) - n_val]), Subset(dataset, perm[-n_val:])\n"
            ),
        ),
        Mistake(
            name="returns-index-lists",
            message="Return two datasets (Subset(dataset, indices)), not the lists of indices.",
            code=(
                "import math, torch\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    perm = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed)).tolist()\n"
                "    return perm[n_val:], perm[:n_val]\n"
            ),
        ),
        Mistake(
            name="seed-ignored",
            message="A generator seeded with a constant gives the same split for every seed: seed it "
            "with the seed argument.",
            code=(
                "import math, torch\n"
                "from torch.utils.data import random_split\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    g = torch.Generator().manual_seed(0)\n"
                "    return tuple(random_split(dataset, [len(dataset) - n_val, n_val], generator=g))\n"
            ),
        ),
        Mistake(
            name="random-contiguous-block",
            message="A block of consecutive items at a random place is still a block: when the data "
            "is sorted it is one class or one period. Shuffle all the indices, then cut.",
            code=(
                "import math, torch\n"
                "from torch.utils.data import Subset\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n = len(dataset)\n"
                "    n_val = math.floor(n * val_fraction)\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    start = int(torch.randint(0, n - n_val + 1, (1,), generator=g))\n"
                "    val = list(range(start, start + n_val))\n"
                "    train = [i for i in range(n) if not start <= i < start + n_val]\n"
                "    return Subset(dataset, train), Subset(dataset, val)\n"
            ),
        ),
        Mistake(
            name="sorted-parts",
            message="The text asks for the items in a random order: sorting each part's indices "
            "hands back a sorted training set (and a dataset sorted by class or date stays "
            "sorted inside each part). Keep the shuffled order, as random_split does.",
            code=(
                "import math\n"
                "import torch\n"
                "from torch.utils.data import Subset\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n = len(dataset)\n"
                "    n_val = math.floor(n * val_fraction)\n"
                "    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))\n"
                "    val_idx = sorted(perm[:n_val].tolist())\n"
                "    train_idx = sorted(perm[n_val:].tolist())\n"
                "    return Subset(dataset, train_idx), Subset(dataset, val_idx)\n"
            ),
        ),
        Mistake(
            name="train-size-from-complement",
            message="n_train = int(n * (1 - val_fraction)) floors the TRAINING size, so the "
            "validation part gets the rounding (ceil): compute n_val = floor(n * val_fraction) "
            "first and give training the rest.",
            code=(
                "import torch\n"
                "from torch.utils.data import random_split\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_train = int(len(dataset) * (1 - val_fraction))\n"
                "    n_val = len(dataset) - n_train\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    return tuple(random_split(dataset, [n_train, n_val], generator=g))\n"
            ),
        ),
        Mistake(
            name="floor-with-epsilon",
            message="floor(n * val_fraction) is the float product floored, as the text writes it: "
            "adding an epsilon first turns 100 * 0.29 = 28.999... into 29.",
            code=(
                "import math\n"
                "import torch\n"
                "from torch.utils.data import random_split\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction + 1e-9)\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    return tuple(random_split(dataset, [len(dataset) - n_val, n_val], generator=g))\n"
            ),
        ),
        Mistake(
            name="materialises-items",
            message="Lists of the items read every item during the split: every file of a lazy "
            "dataset is loaded, and a random augmentation is drawn once and frozen. Return "
            "Subset(dataset, indices), which reads an item only when it is asked for.",
            code=(
                "import math\n"
                "import torch\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n = len(dataset)\n"
                "    n_val = math.floor(n * val_fraction)\n"
                "    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()\n"
                "    items = [dataset[i] for i in perm]\n"
                "    return items[n_val:], items[:n_val]\n"
            ),
        ),
    ],
    "make_loaders": [
        Mistake(
            name="shuffles-validation",
            message="Never shuffle the validation loader: the metric does not change, but the "
            "order no longer matches labels or files kept in dataset order.",
            code=(
                "import torch\nfrom torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    return (DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=g),\n"
                "            DataLoader(val_set, batch_size=batch_size, shuffle=True, generator=g))\n"
            ),
        ),
        Mistake(
            name="train-unseeded",
            message="shuffle=True without a generator gives a different order every run: pass "
            "generator=torch.Generator().manual_seed(seed).",
            code=(
                "from torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    return (DataLoader(train_set, batch_size=batch_size, shuffle=True),\n"
                "            DataLoader(val_set, batch_size=batch_size))\n"
            ),
        ),
        Mistake(
            name="train-not-shuffled",
            message="Shuffle the training loader so that every epoch mixes the batches differently.",
            code=(
                "from torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    return (DataLoader(train_set, batch_size=batch_size),\n"
                "            DataLoader(val_set, batch_size=batch_size))\n"
            ),
        ),
        Mistake(
            name="validation-drops-last",
            message="drop_last=True on the validation loader leaves items unscored.",
            code=(
                "import torch\nfrom torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    return (DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=g),\n"
                "            DataLoader(val_set, batch_size=batch_size, drop_last=True))\n"
            ),
        ),
        Mistake(
            name="generator-is-global-seed",
            message="generator=torch.manual_seed(seed) reseeds torch's global generator (and returns "
            "it): use a private torch.Generator().manual_seed(seed).",
            code=(
                "import torch\n"
                "from torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    return (DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=torch.manual_seed(seed)),\n"
                "            DataLoader(val_set, batch_size=batch_size))\n"
            ),
        ),
        Mistake(
            name="seed-ignored",
            message="A generator seeded with a constant gives the same order for every seed: seed it "
            "with the seed argument.",
            code=(
                "import torch\n"
                "from torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    g = torch.Generator().manual_seed(0)\n"
                "    return (DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=g),\n"
                "            DataLoader(val_set, batch_size=batch_size))\n"
            ),
        ),
        Mistake(
            name="train-batch-size-default",
            message="Pass batch_size to the training loader too: DataLoader's default is 1.",
            code=(
                "import torch\n"
                "from torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    return (DataLoader(train_set, shuffle=True, generator=g),\n"
                "            DataLoader(val_set, batch_size=batch_size))\n"
            ),
        ),
        Mistake(
            name="fixed-permutation",
            message="A permutation drawn once and given as the sampler repeats every epoch: "
            "shuffle=True draws a new order each epoch.",
            code=(
                "import torch\n"
                "from torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    order = torch.randperm(len(train_set), generator=torch.Generator().manual_seed(seed)).tolist()\n"
                "    return (DataLoader(train_set, batch_size=batch_size, sampler=order),\n"
                "            DataLoader(val_set, batch_size=batch_size))\n"
            ),
        ),
        Mistake(
            name="generator-shared-with-validation",
            message="The validation loader got the training loader's generator: every pass over "
            "the validation data draws a seed from it, so the training order then depends on "
            "how often you validated. Give the generator to the training loader only.",
            code=(
                "import torch\n"
                "from torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    train = DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=g)\n"
                "    val = DataLoader(val_set, batch_size=batch_size, shuffle=False, generator=g)\n"
                "    return train, val\n"
            ),
        ),
        Mistake(
            name="module-level-generator",
            message="One generator made at import and reseeded at every call is shared by every "
            "pair of loaders: building a second pair reseeds the first one's stream. Make a new "
            "torch.Generator().manual_seed(seed) inside make_loaders.",
            code=(
                "import torch\n"
                "from torch.utils.data import DataLoader\n"
                "_GENERATOR = torch.Generator()\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    _GENERATOR.manual_seed(seed)\n"
                "    train = DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=_GENERATOR)\n"
                "    return train, DataLoader(val_set, batch_size=batch_size)\n"
            ),
        ),
        Mistake(
            name="validation-batch-doubled",
            message="Both loaders use batch_size, as the text asks: doubling it for validation "
            "(no gradients, so more fits) is a tuning choice the exercise does not make.",
            code=(
                "import torch\n"
                "from torch.utils.data import DataLoader\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    train = DataLoader(train_set, batch_size=batch_size, shuffle=True, generator=g)\n"
                "    return train, DataLoader(val_set, batch_size=2 * batch_size)\n"
            ),
        ),
    ],
    "channel_stats": [
        Mistake(
            name="averages-batch-stds",
            message="The average of per-batch stds misses the spread between batch means: keep "
            "running sums of x and x**2 and a count, then std = sqrt(E[x^2] - E[x]^2).",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, stds = 0, 0.0, []\n"
                "    for x, _ in loader:\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.double().sum(dim=(0, 2, 3))\n"
                "        stds.append(x.std(dim=(0, 2, 3), correction=0))\n"
                "    return (s1 / n).float(), torch.stack(stds).mean(0)\n"
            ),
        ),
        Mistake(
            name="averages-batch-variances",
            message="Averaging per-batch variances (weighted or not) still ignores how far the "
            "batch means lie apart; pool sums of x and x**2 instead.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, v = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        k = x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        n += k\n"
                "        s1 = s1 + x.double().sum(dim=(0, 2, 3))\n"
                "        v = v + k * x.double().var(dim=(0, 2, 3), correction=0)\n"
                "    return (s1 / n).float(), (v / n).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="unweighted-batch-means",
            message="An unweighted average of batch means over-weights a small last batch: "
            "sum all values and divide by the total count.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2, means = 0, 0.0, 0.0, []\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3))\n"
                "        means.append(x.mean(dim=(0, 2, 3)))\n"
                "    mean = torch.stack(means).mean(0)\n"
                "    return mean.float(), (s2 / n - (s1 / n) ** 2).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="reduces-wrong-dims",
            message="Reduce over N, H and W (dims 0, 2, 3) and keep C: one number per channel.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0]\n"
                "        s1 = s1 + x.sum(dim=0)\n"
                "        s2 = s2 + (x ** 2).sum(dim=0)\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="float32-sums",
            message="Accumulate in float64: with values far from zero, E[x**2] - E[x]**2 subtracts "
            "two nearly equal float32 numbers and loses most digits.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3))\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).clamp_min(0).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="squares-in-place",
            message="x.double() returns x itself when it is already float64, so x.pow_(2) squares the"
            " caller's data: use x ** 2.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + x.pow_(2).sum(dim=(0, 2, 3))\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).clamp_min(0).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="count-h-times-h",
            message="Each channel of a batch holds B * H * W values: H * H is right only for square "
            "images.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[2]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3))\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).clamp_min(0).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="sample-std",
            message="Normalize wants the population std (divide by n), not the sample std (n - 1).",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3))\n"
                "    mean = s1 / n\n"
                "    return mean.float(), ((s2 - n * mean ** 2) / (n - 1)).clamp_min(0).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="flattens-with-view",
            message="x.view needs contiguous memory, and a batch may be a permuted view: "
            "reduce over dims (0, 2, 3) directly, or flatten with .reshape / .flatten.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double().view(x.shape[0], x.shape[1], -1)  # (B, C, H*W)\n"
                "        n += x.shape[0] * x.shape[2]\n"
                "        s1 = s1 + x.sum(dim=(0, 2))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2))\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).clamp_min(0).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="squeezes-channel-axis",
            message="squeeze() drops every size-1 axis, the channel axis too when C = 1: "
            "reduce without keepdim (or squeeze only the axes you kept) so the result is (C,).",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3), keepdim=True)\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3), keepdim=True)\n"
                "    mean = s1 / n\n"
                "    std = (s2 / n - mean ** 2).clamp_min(0).sqrt()\n"
                "    return mean.squeeze().float(), std.squeeze().float()\n"
            ),
        ),
        Mistake(
            name="returns-float64",
            message="The float64 sums are for accuracy only: return mean and std as float32 "
            "(.float()), as Normalize and the text expect.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3))\n"
                "    mean = s1 / n\n"
                "    return mean, (s2 / n - mean ** 2).clamp_min(0).sqrt()\n"
            ),
        ),
        Mistake(
            name="float32-final-subtraction",
            message="The sums are float64, but E[x**2] - E[x]**2 is then taken in float32, where "
            "the subtraction of two nearly equal numbers loses the spread: finish in float64 and "
            "convert only the results.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3))\n"
                "    mean = (s1 / n).float()\n"
                "    var = (s2 / n).float() - mean ** 2\n"
                "    return mean, var.clamp(min=0).sqrt()\n"
            ),
        ),
        Mistake(
            name="batch-sums-in-float32",
            message="Each batch is summed in float32 and only the running totals are float64: the "
            "rounding happens inside the batch sums already. Convert x to float64 before "
            "summing (x.double().sum(...)).",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3)).double()\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3)).double()\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).clamp(min=0).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="count-from-first-batch-size",
            message="Count the values of every batch: the last batch is often smaller, so "
            "number of batches * first batch size overcounts.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    k, b0, s1, s2 = 0, None, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        b0 = x.shape[0] * x.shape[2] * x.shape[3] if b0 is None else b0\n"
                "        k += 1\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3))\n"
                "    n = k * b0\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).clamp(min=0).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="accumulators-on-cpu",
            message="torch.zeros(C) is made on the CPU: with batches on a GPU, adding to it mixes "
            "devices. Start the sums from 0 (a Python number) or make them with device=x.device.",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, None, None\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        if s1 is None:\n"
                "            s1 = torch.zeros(x.shape[1], dtype=torch.float64)\n"
                "            s2 = torch.zeros(x.shape[1], dtype=torch.float64)\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 += x.sum(dim=(0, 2, 3))\n"
                "        s2 += (x ** 2).sum(dim=(0, 2, 3))\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).clamp(min=0).sqrt().float()\n"
            ),
        ),
        Mistake(
            name="no-clamp-before-sqrt",
            message="For a channel that holds one value everywhere, s2 / n - mean**2 can round to a "
            "tiny negative number, and its sqrt is nan: clamp the variance at 0 first "
            "(var.clamp(min=0)).",
            code=(
                "import torch\n"
                "def channel_stats(loader):\n"
                "    n, s1, s2 = 0, 0.0, 0.0\n"
                "    for x, _ in loader:\n"
                "        x = x.double()\n"
                "        n += x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        s1 = s1 + x.sum(dim=(0, 2, 3))\n"
                "        s2 = s2 + (x ** 2).sum(dim=(0, 2, 3))\n"
                "    mean = s1 / n\n"
                "    return mean.float(), (s2 / n - mean ** 2).sqrt().float()\n"
            ),
        ),
    ],
    "make_transforms": [
        Mistake(
            name="augments-eval",
            message="Validation and test data get deterministic transforms only; random "
            "augmentation there makes the metric a random number.",
            code=(
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    tf = v2.Compose([v2.RandomAffine(degrees=15, translate=(0.1, 0.1)),\n"
                "                     v2.Normalize(mean, std)])\n"
                "    return tf, tf\n"
            ),
        ),
        Mistake(
            name="train-not-normalised",
            message="The training data must be normalised exactly like the evaluation data, "
            "after the augmentation.",
            code=(
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    return (v2.RandomAffine(degrees=15, translate=(0.1, 0.1)),\n"
                "            v2.Normalize(mean, std))\n"
            ),
        ),
        Mistake(
            name="normalises-before-augmenting",
            message="Normalise last: geometric transforms fill uncovered pixels with 0, which is "
            "black for raw pixels but not for normalised ones.",
            code=(
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    normalize = v2.Normalize(mean, std)\n"
                "    return (v2.Compose([normalize, v2.RandomAffine(degrees=15, translate=(0.1, 0.1))]),\n"
                "            normalize)\n"
            ),
        ),
        Mistake(
            name="no-augmentation",
            message="train_tf should include a random augmentation such as v2.RandomAffine.",
            code=(
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    return v2.Normalize(mean, std), v2.Normalize(mean, std)\n"
            ),
        ),
        Mistake(
            name="reseeds-global-rng",
            message="torch.manual_seed inside make_transforms resets torch's global random stream for"
            " the whole program; leave it alone.",
            code=(
                "import torch\n"
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    torch.manual_seed(0)\n"
                "    normalize = v2.Normalize(mean=mean, std=std)\n"
                "    return v2.Compose([v2.RandomAffine(degrees=15, translate=(0.1, 0.1)), normalize]), normalize\n"
            ),
        ),
        Mistake(
            name="crop-size-hard-coded",
            message="RandomResizedCrop(8) makes every image 8x8: the augmentation must keep each "
            "image's own size.",
            code=(
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    normalize = v2.Normalize(mean=mean, std=std)\n"
                "    return v2.Compose([v2.RandomResizedCrop(8, scale=(0.8, 1.0)), normalize]), normalize\n"
            ),
        ),
        Mistake(
            name="first-channel-stats",
            message="Normalise each channel with its own mean and std: pass the whole lists to "
            "v2.Normalize.",
            code=(
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    normalize = v2.Normalize(mean=[mean[0]] * len(mean), std=[std[0]] * len(std))\n"
                "    return v2.Compose([v2.RandomAffine(degrees=15, translate=(0.1, 0.1)), normalize]), normalize\n"
            ),
        ),
        Mistake(
            name="returns-swapped",
            message="Return (train_tf, eval_tf) in that order: the augmenting one first.",
            code=(
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    normalize = v2.Normalize(mean=mean, std=std)\n"
                "    return normalize, v2.Compose([v2.RandomAffine(degrees=15, translate=(0.1, 0.1)), normalize])\n"
            ),
        ),
        Mistake(
            name="normalises-with-cpu-tensors",
            message="torch.tensor(mean) lives on the CPU: an image on the GPU cannot be "
            "normalised with it. Move it to img.device (or use v2.Normalize).",
            code=(
                "import torch\n"
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    m = torch.tensor(mean).view(-1, 1, 1)\n"
                "    s = torch.tensor(std).view(-1, 1, 1)\n"
                "    def eval_tf(img):\n"
                "        return (img - m) / s\n"
                "    augment = v2.RandomAffine(degrees=15, translate=(0.1, 0.1))\n"
                "    def train_tf(img):\n"
                "        return eval_tf(augment(img))\n"
                "    return train_tf, eval_tf\n"
            ),
        ),
        Mistake(
            name="photometric-jitter",
            message="The text asks for a GEOMETRIC augmentation (RandomAffine, RandomRotation, a "
            "crop): ColorJitter changes the pixel values themselves, so even a flat image comes "
            "out different. Move the image, then normalise.",
            code=(
                "from torchvision.transforms import v2\n"
                "def make_transforms(mean, std):\n"
                "    norm = v2.Normalize(mean, std)\n"
                "    return v2.Compose([v2.ColorJitter(brightness=0.3), norm]), norm\n"
            ),
        ),
    ],
    "pad_collate": [
        Mistake(
            name="lengths-from-nonzero-rows",
            message="Real data contains zeros: take each length from the item (seq.shape[0]) "
            "before padding, never by counting non-zero rows afterwards.",
            code=(
                "import torch\nfrom torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    padded = pad_sequence([s for s, _ in batch], batch_first=True, padding_value=pad_value)\n"
                "    lengths = (padded != pad_value).any(dim=2).sum(dim=1)\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="ignores-pad-value",
            message="Pad with pad_value: the right fill depends on what comes next (0 for sums, "
            "-inf for a max).",
            code=(
                "import torch\nfrom torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    padded = pad_sequence(seqs, batch_first=True)\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="lengths-all-max",
            message="lengths holds each item's own length, not the padded length L_max.",
            code=(
                "import torch\nfrom torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    padded = pad_sequence([s for s, _ in batch], batch_first=True, padding_value=pad_value)\n"
                "    lengths = torch.full((len(batch),), padded.shape[1])\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="time-first",
            message="pad_sequence returns (L_max, B, F) unless batch_first=True.",
            code=(
                "import torch\nfrom torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    padded = pad_sequence(seqs, padding_value=pad_value)\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="float32-padding",
            message="Build the padded tensor with the sequences' dtype: torch.full(...) without "
            "dtype= makes float32.",
            code=(
                "import torch\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    padded = torch.full((len(seqs), int(lengths.max()), seqs[0].shape[1]), pad_value,\n"
                "                        device=seqs[0].device)\n"
                "    for i, s in enumerate(seqs):\n"
                "        padded[i, : len(s)] = s\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="sorts-by-length",
            message="Sorting the items by length reorders the batch: row i no longer belongs to the "
            "caller's item i (nor to anything kept in the batch's order). Keep the order; "
            "pack_padded_sequence(..., enforce_sorted=False) needs no sorting.",
            code=(
                "import torch\n"
                "from torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    batch = sorted(batch, key=lambda item: item[0].shape[0], reverse=True)\n"
                "    seqs = [s for s, _ in batch]\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    padded = pad_sequence(seqs, batch_first=True, padding_value=pad_value)\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="sorts-caller-list",
            message="batch.sort(...) sorts the caller's list in place and reorders the batch: leave "
            "the list as it was given.",
            code=(
                "import torch\n"
                "from torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    batch.sort(key=lambda item: item[0].shape[0], reverse=True)\n"
                "    seqs = [s for s, _ in batch]\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    padded = pad_sequence(seqs, batch_first=True, padding_value=pad_value)\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="mask-times-pad-value",
            message="0 * -inf is nan: padding built as mask * pad_value turns real values into nan "
            "for pad_value=-inf. Fill a new tensor with pad_value, then copy the items in.",
            code=(
                "import torch\n"
                "from torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    padded = pad_sequence(seqs, batch_first=True)\n"
                "    pad = torch.arange(padded.shape[1], device=padded.device)[None, :] >= lengths.to(padded.device)[:, None]\n"
                "    padded = padded + pad[..., None].to(padded.dtype) * pad_value\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="float32-working-copy",
            message="Build the padded tensor in the sequences' own dtype: a float32 working copy "
            "rounds float64 values even if you convert back at the end.",
            code=(
                "import torch\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    padded = torch.full((len(seqs), int(lengths.max()), seqs[0].shape[1]), pad_value,\n"
                "                        device=seqs[0].device)\n"
                "    for i, s in enumerate(seqs):\n"
                "        padded[i, : len(s)] = s\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded.to(seqs[0].dtype), lengths, labels\n"
            ),
        ),
        Mistake(
            name="labels-keep-item-dtype",
            message="labels must be int64 whatever the items hold: stacking 0-d int32 tensors keeps "
            "int32; build them with torch.tensor([int(y) for _, y in batch]).",
            code=(
                "import torch\n"
                "from torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    padded = pad_sequence(seqs, batch_first=True, padding_value=pad_value)\n"
                "    labels = torch.stack([torch.as_tensor(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="copies-rows-through-view",
            message="seq.view(-1) needs contiguous memory, and an item may be a non-contiguous "
            "view: copy it with padded[i, :len(seq)] = seq (or flatten with .reshape).",
            code=(
                "import torch\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    f = seqs[0].shape[1]\n"
                "    padded = torch.full((len(seqs), int(lengths.max()), f), pad_value, dtype=seqs[0].dtype)\n"
                "    for i, s in enumerate(seqs):\n"
                "        padded[i].view(-1)[: s.numel()] = s.view(-1)\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="pads-callers-items",
            message="batch[i] = (padded_seq, label) replaces the caller's items: build your own "
            "list of padded rows and leave the batch as it was.",
            code=(
                "import torch\n"
                "import torch.nn.functional as F\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    lengths = torch.tensor([s.shape[0] for s, _ in batch])\n"
                "    longest = int(lengths.max())\n"
                "    for i, (s, y) in enumerate(batch):\n"
                "        batch[i] = (F.pad(s, (0, 0, 0, longest - s.shape[0]), value=pad_value), y)\n"
                "    padded = torch.stack([s for s, _ in batch])\n"
                "    labels = torch.tensor([int(y) for _, y in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="lengths-int32",
            message="lengths must be int64 (what pack_padded_sequence and indexing expect): "
            "torch.tensor([...]) of Python ints is int64 already, no dtype=torch.int32.",
            code=(
                "import torch\n"
                "from torch.nn.utils.rnn import pad_sequence\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    padded = pad_sequence(seqs, batch_first=True, padding_value=pad_value)\n"
                "    lengths = torch.tensor([len(s) for s in seqs], dtype=torch.int32)\n"
                "    labels = torch.tensor([int(l) for _, l in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
        Mistake(
            name="max-length-from-first-item",
            message="L_max is the longest item of the batch, not the first one: max(seq.shape[0]).",
            code=(
                "import torch\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [s for s, _ in batch]\n"
                "    L = seqs[0].shape[0]\n"
                "    padded = torch.full((len(seqs), L, seqs[0].shape[1]), pad_value, dtype=seqs[0].dtype)\n"
                "    for i, s in enumerate(seqs):\n"
                "        padded[i, : min(L, len(s))] = s[:L]\n"
                "    lengths = torch.tensor([len(s) for s in seqs])\n"
                "    labels = torch.tensor([int(l) for _, l in batch])\n"
                "    return padded, lengths, labels\n"
            ),
        ),
    ],
    "balanced_sampler": [
        Mistake(
            name="weights-per-class",
            message="WeightedRandomSampler needs one weight per sample (shape (N,)), not one per "
            "class: weights = (1 / counts)[labels].",
            code=(
                "import torch\nfrom torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / torch.bincount(labels).double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True,\n"
                "                                 generator=torch.Generator().manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="weights-are-counts",
            message="Weight each sample by the inverse of its class count; the count itself makes "
            "common classes even more common.",
            code=(
                "import torch\nfrom torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = torch.bincount(labels)[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True,\n"
                "                                 generator=torch.Generator().manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="without-replacement",
            message="Sample with replacement: a class of 5 samples must be drawn more than 5 times.",
            code=(
                "import torch\nfrom torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / torch.bincount(labels)[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=False,\n"
                "                                 generator=torch.Generator().manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="unseeded",
            message="Pass generator=torch.Generator().manual_seed(seed) so that runs repeat.",
            code=(
                "import torch\nfrom torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / torch.bincount(labels)[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True)\n"
            ),
        ),
        Mistake(
            name="generator-is-global-seed",
            message="generator=torch.manual_seed(seed) reseeds torch's global generator (and returns "
            "it): use a private torch.Generator().manual_seed(seed).",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / torch.bincount(labels)[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True,\n"
                "                                 generator=torch.manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="unique-counts-by-label",
            message="torch.unique's counts are in the order of the sorted unique ids, not indexed by "
            "the id: with ids that are not 0..K-1, index them with return_inverse, or use "
            "bincount(labels)[labels].",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    _, counts = torch.unique(labels, return_counts=True)\n"
                "    weights = 1.0 / counts[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True,\n"
                "                                 generator=torch.Generator().manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="remaps-labels-in-place",
            message="labels -= labels.min() changes the caller's labels tensor: compute from it out "
            "of place.",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    labels -= labels.min()\n"
                "    weights = 1.0 / torch.bincount(labels)[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True,\n"
                "                                 generator=torch.Generator().manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="seed-ignored",
            message="A generator seeded with a constant draws the same indices for every seed: seed "
            "it with the seed argument.",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / torch.bincount(labels)[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True,\n"
                "                                 generator=torch.Generator().manual_seed(0))\n"
            ),
        ),
        Mistake(
            name="smoothed-weights",
            message="The weight of a sample is exactly 1 / (count of its class): 1 / (count + 1) "
            "still favours the large classes, most of all when the small ones are very small.",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / (torch.bincount(labels)[labels].double() + 1)\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True,\n"
                "                                 generator=torch.Generator().manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="num-samples-is-len-labels",
            message="Draw num_samples indices, the argument: len(labels) is only the usual choice "
            "of the caller.",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / torch.bincount(labels)[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples=len(labels), replacement=True,\n"
                "                                 generator=torch.Generator().manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="module-level-generator",
            message="One generator made at import and reseeded at every call is shared by every "
            "sampler: a second sampler reseeds the first one's stream, so two samplers with the "
            "same seed draw different indices. Make torch.Generator().manual_seed(seed) inside.",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "_GENERATOR = torch.Generator()\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / torch.bincount(labels)[labels].double()\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True,\n"
                "                                 generator=_GENERATOR.manual_seed(seed))\n"
            ),
        ),
        Mistake(
            name="seed-zero-unseeded",
            message="`if seed` is False for seed=0, which then draws from the global generator: "
            "always pass generator=torch.Generator().manual_seed(seed).",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    weights = 1.0 / torch.bincount(labels)[labels].double()\n"
                "    g = torch.Generator().manual_seed(seed) if seed else None\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True, generator=g)\n"
            ),
        ),
    ],
    "confusion_matrix": [
        Mistake(
            name="rows-are-predictions",
            message="Rows are the true class and columns the predicted class: index with "
            "targets * C + preds, not preds * C + targets (that gives the transpose).",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    c = num_classes\n"
                "    return torch.bincount(preds * c + targets, minlength=c * c).view(c, c)\n"
            ),
        ),
        Mistake(
            name="bincount-without-minlength",
            message="torch.bincount is only as long as the largest value plus one: pass "
            "minlength=C * C so that classes that never occur keep their row and column.",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    c = num_classes\n"
                "    return torch.bincount(targets * c + preds).view(c, c)\n"
            ),
        ),
        Mistake(
            name="size-from-largest-label",
            message="The matrix has num_classes rows and columns, whatever labels this batch "
            "holds: a class absent from the batch still gets its row and column.",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    c = int(max(preds.max(), targets.max())) + 1\n"
                "    return torch.bincount(targets * c + preds, minlength=c * c).view(c, c)\n"
            ),
        ),
        Mistake(
            name="index-add-does-not-accumulate",
            message="cm[targets, preds] += 1 adds 1 once per cell however often a pair repeats: "
            "use bincount, or index_put_(..., accumulate=True).",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    cm = torch.zeros(num_classes, num_classes, dtype=torch.int64)\n"
                "    cm[targets.long(), preds.long()] += 1\n"
                "    return cm\n"
            ),
        ),
        Mistake(
            name="one-hot-of-int32",
            message="F.one_hot only takes int64 labels: convert int32 labels with .long() first.",
            code=(
                "import torch\n"
                "import torch.nn.functional as F\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    t = F.one_hot(targets, num_classes)  # (N, C)\n"
                "    p = F.one_hot(preds, num_classes)  # (N, C)\n"
                "    return t.T @ p\n"
            ),
        ),
        Mistake(
            name="float-counts",
            message="Counts are integers: torch.zeros(C, C) is float32; ask for dtype=torch.int64.",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    cm = torch.zeros(num_classes, num_classes, device=preds.device)\n"
                "    ones = torch.ones(len(preds), device=preds.device)\n"
                "    return cm.index_put_((targets.long(), preds.long()), ones, accumulate=True)\n"
            ),
        ),
        Mistake(
            name="offset-computed-in-place",
            message="idx = targets is the caller's tensor, not a copy: idx *= C changes their "
            "labels. Compute targets * C + preds out of place.",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    idx = targets\n"
                "    idx *= num_classes\n"
                "    idx += preds\n"
                "    c2 = num_classes * num_classes\n"
                "    return torch.bincount(idx, minlength=c2).view(num_classes, num_classes)\n"
            ),
        ),
        Mistake(
            name="validates-with-max",
            message="torch.max of an empty tensor raises: N may be 0, so check the labels "
            "only when there are some (or not at all: the text promises they are in range).",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    if int(torch.cat([preds, targets]).max()) >= num_classes:\n"
                "        raise ValueError('a label is out of range')\n"
                "    c = num_classes\n"
                "    pair = targets.long() * c + preds.long()\n"
                "    return torch.bincount(pair, minlength=c * c).view(c, c)\n"
            ),
        ),
        Mistake(
            name="long-alias-in-place",
            message="targets.long() returns targets itself when it is int64 already, so idx *= C "
            "changes the caller's labels: compute targets.long() * C + preds out of place.",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    idx = targets.long()\n"
                "    idx *= num_classes\n"
                "    idx += preds.long()\n"
                "    c2 = num_classes * num_classes\n"
                "    return torch.bincount(idx, minlength=c2).view(num_classes, num_classes)\n"
            ),
        ),
        Mistake(
            name="ones-like-int32-labels",
            message="torch.ones_like(targets) has the labels' dtype: int32 labels then cannot be "
            "accumulated into an int64 matrix. Make the ones int64.",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    cm = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=preds.device)\n"
                "    return cm.index_put_((targets.long(), preds.long()), torch.ones_like(targets),\n"
                "                         accumulate=True)\n"
            ),
        ),
        Mistake(
            name="arange-without-device",
            message="torch.arange(C) is made on the CPU: with labels on a GPU the comparison "
            "mixes devices. Pass device=targets.device.",
            code=(
                "import torch\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    classes = torch.arange(num_classes)\n"
                "    t = (targets[:, None] == classes).long()\n"
                "    p = (preds[:, None] == classes).long()\n"
                "    return t.T @ p\n"
            ),
        ),
    ],
    "precision_recall": [
        Mistake(
            name="precision-recall-swapped",
            message="Precision divides the diagonal by the column sums (what was predicted as c), "
            "recall by the row sums (what truly is c): rows are the true class.",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    tp = cm.diag().float()\n"
                "    precision = tp / cm.sum(dim=1).clamp(min=1)\n"
                "    recall = tp / cm.sum(dim=0).clamp(min=1)\n"
                "    return precision, recall\n"
            ),
        ),
        Mistake(
            name="nan-from-zero-division",
            message="A class never predicted has column sum 0, so its precision is 0 / 0 = nan: "
            "give it 0 (scikit-learn's zero_division=0).",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    tp = cm.diag().float()\n"
                "    return tp / cm.sum(dim=0), tp / cm.sum(dim=1)\n"
            ),
        ),
        Mistake(
            name="floor-division",
            message="// floors the ratio to 0 or 1 and keeps an integer dtype: divide with /.",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    tp = cm.diag()\n"
                "    return tp // cm.sum(dim=0).clamp(min=1), tp // cm.sum(dim=1).clamp(min=1)\n"
            ),
        ),
        Mistake(
            name="recall-nan-for-absent-class",
            message="A class that never occurs has row sum 0, so its recall is 0 / 0 = nan: "
            "guard the row sums as well as the column sums.",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    tp = cm.diag().float()\n"
                "    predicted = cm.sum(dim=0)\n"
                "    precision = torch.where(predicted > 0, tp / predicted, 0.0)\n"
                "    return precision, tp / cm.sum(dim=1)\n"
            ),
        ),
        Mistake(
            name="macro-averaged",
            message="Return one precision and one recall per class, shape (C,): the macro "
            "average (their mean) is the caller's next step.",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    tp = cm.diag().float()\n"
                "    precision = tp / cm.sum(dim=0).clamp(min=1)\n"
                "    recall = tp / cm.sum(dim=1).clamp(min=1)\n"
                "    return precision.mean(), recall.mean()\n"
            ),
        ),
        Mistake(
            name="smoothed-ratio",
            message="(tp + eps) / (sum + eps) avoids nan but gives a never-predicted class "
            "precision 1 (eps / eps); its precision is 0.",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    eps = 1e-9\n"
                "    tp = cm.diag().double()\n"
                "    return (tp + eps) / (cm.sum(dim=0) + eps), (tp + eps) / (cm.sum(dim=1) + eps)\n"
            ),
        ),
        Mistake(
            name="zeros-made-on-cpu",
            message="torch.zeros(C) is made on the CPU: on a GPU, torch.where then mixes devices. "
            "Use torch.zeros_like(tp), or a plain 0.0.",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    tp = cm.diag().float()\n"
                "    col, row = cm.sum(dim=0), cm.sum(dim=1)\n"
                "    zero = torch.zeros(cm.shape[0])\n"
                "    precision = torch.where(col > 0, tp / col, zero)\n"
                "    recall = torch.where(row > 0, tp / row, zero)\n"
                "    return precision, recall\n"
            ),
        ),
        Mistake(
            name="diagonal-by-flat-view",
            message="cm.view(-1) needs contiguous memory, and cm may be a transposed view: take "
            "the diagonal with cm.diag() (or cm.reshape(-1)[:: C + 1]).",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    c = cm.shape[0]\n"
                "    tp = cm.view(-1)[:: c + 1].float()\n"
                "    precision = tp / cm.sum(dim=0).clamp(min=1)\n"
                "    recall = tp / cm.sum(dim=1).clamp(min=1)\n"
                "    return precision, recall\n"
            ),
        ),
        Mistake(
            name="keepdim-then-squeeze",
            message="squeeze() drops every size-1 dimension: with one class the result becomes "
            "a 0-d tensor instead of shape (1,). Reduce without keepdim (or squeeze(0)).",
            code=(
                "import torch\n"
                "def precision_recall(cm):\n"
                "    tp = cm.diag()[None].double()\n"
                "    col = cm.sum(dim=0, keepdim=True)\n"
                "    row = cm.sum(dim=1, keepdim=True).T\n"
                "    precision = torch.where(col > 0, tp / col, 0.0).squeeze()\n"
                "    recall = torch.where(row > 0, tp / row, 0.0).squeeze()\n"
                "    return precision, recall\n"
            ),
        ),
    ],
}

# Found by writing fresh wrong answers from the exercise texts alone (red team).
MISTAKES["TensorPairDataset"] += [
    Mistake(
        name="seeds-global-rng-per-item",
        message="torch.manual_seed(i) in __getitem__ freezes the augmentation (item i gets the "
        "same 'random' version every epoch) and resets the caller's global generator: apply "
        "the transform as it is, and let it draw new parameters at every read.",
        code=_IMPORTS
        + (
            "class TensorPairDataset(Dataset):\n"
            "    def __init__(self, x, y, transform=None):\n"
            "        if len(x) != len(y):\n            raise ValueError('lengths differ')\n"
            "        self.x, self.y, self.transform = x, y, transform\n"
            "    def __len__(self):\n        return len(self.x)\n"
            "    def __getitem__(self, i):\n"
            "        xi = self.x[i]\n"
            "        if self.transform is not None:\n"
            "            torch.manual_seed(i)  # the same augmentation of item i every time\n"
            "            xi = self.transform(xi)\n"
            "        return xi, self.y[i]\n"
        ),
    ),
    Mistake(
        name="labels-cast-to-long",
        message="dataset[i] returns y[i] as it is stored: y.long() changes int32 labels' dtype "
        "and truncates float targets (0.5 becomes 0).",
        code=_IMPORTS
        + (
            "class TensorPairDataset(Dataset):\n"
            "    def __init__(self, x, y, transform=None):\n"
            "        if len(x) != len(y):\n            raise ValueError('lengths differ')\n"
            "        self.x, self.y, self.transform = x, y.long(), transform\n"
            "    def __len__(self):\n        return len(self.x)\n"
            "    def __getitem__(self, i):\n"
            "        xi = self.x[i] if self.transform is None else self.transform(self.x[i])\n"
            "        return xi, self.y[i]\n"
        ),
    ),
]
MISTAKES["DigitFolder"] += [
    Mistake(
        name="cache-keyed-on-mtime",
        message="A cache that trusts the file's modification time and size misses a file "
        "rewritten within the same clock tick (or restored with its old time): open the file "
        "with torch.load at every access, no caching.",
        code=(
            "import os\n"
            "from pathlib import Path\n"
            "import torch\n"
            "from torch.utils.data import Dataset\n"
            "class DigitFolder(Dataset):\n"
            "    def __init__(self, folder, transform=None):\n"
            "        self.paths = sorted(Path(folder).glob('*.pt'))\n"
            "        self.transform, self.cache = transform, {}\n"
            "    def __len__(self):\n        return len(self.paths)\n"
            "    def __getitem__(self, i):\n"
            "        st = os.stat(self.paths[i])\n"
            "        key = (st.st_mtime_ns, st.st_size)\n"
            "        if i not in self.cache or self.cache[i][0] != key:\n"
            "            self.cache[i] = (key, torch.load(self.paths[i]))\n"
            "        item = self.cache[i][1]\n"
            "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
            "        return x, item['y']\n"
        ),
    ),
    Mistake(
        name="rewraps-load-error-as-indexerror",
        message="Let torch.load's error through as it is: an IndexError instead even ends a "
        "loop over the dataset at the broken file without a word.",
        code=(
            "from pathlib import Path\n"
            "import torch\n"
            "from torch.utils.data import Dataset\n"
            "class DigitFolder(Dataset):\n"
            "    def __init__(self, folder, transform=None):\n"
            "        self.paths = sorted(Path(folder).glob('*.pt'))\n"
            "        self.transform = transform\n"
            "    def __len__(self):\n        return len(self.paths)\n"
            "    def __getitem__(self, i):\n"
            "        try:\n"
            "            item = torch.load(self.paths[i])\n"
            "        except Exception as err:\n"
            "            raise IndexError(f'item {i} cannot be read') from err\n"
            "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
            "        return x, item['y']\n"
        ),
    ),
]
MISTAKES["channel_stats"] += [
    Mistake(
        name="concatenates-batches",
        message="The statistics must be streamed without concatenating: torch.cat of every "
        "batch needs the whole data set in memory. Keep running sums per channel.",
        code=(
            "import torch\n"
            "def channel_stats(loader):\n"
            "    x = torch.cat([batch[0] for batch in loader]).double()\n"
            "    mean = x.mean(dim=(0, 2, 3))\n"
            "    std = x.std(dim=(0, 2, 3), correction=0)\n"
            "    return mean.float(), std.float()\n"
        ),
    ),
]
MISTAKES["make_transforms"] += [
    Mistake(
        name="random-erasing-not-geometric",
        message="RandomErasing blanks a rectangle inside the image: it is not a geometric "
        "augmentation. Use one that moves pixels, such as v2.RandomAffine.",
        code=(
            "from torchvision.transforms import v2\n"
            "def make_transforms(mean, std):\n"
            "    normalize = v2.Normalize(mean, std)\n"
            "    return v2.Compose([v2.RandomErasing(p=1.0, value=0), normalize]), normalize\n"
        ),
    ),
]
MISTAKES["confusion_matrix"] += [
    Mistake(
        name="cpu-counts-indexed-by-labels",
        message="torch.zeros(C, C) lives on the CPU, and a GPU refuses to index a CPU tensor "
        "with GPU labels: pass device=targets.device, or count with torch.bincount.",
        code=(
            "import torch\n"
            "def confusion_matrix(preds, targets, num_classes):\n"
            "    cm = torch.zeros(num_classes, num_classes, dtype=torch.int64)\n"
            "    ones = torch.ones(len(targets), dtype=torch.int64)\n"
            "    cm.index_put_((targets.long(), preds.long()), ones, accumulate=True)\n"
            "    return cm\n"
        ),
    ),
]
MISTAKES["DigitFolder"] += [
    Mistake(
        name="label-cast-to-int64",
        message="Return the label as the file holds it: .long() turns an int32 or uint8 label "
        "into int64, which the text rules out (no dtype conversion).",
        code=(
            "import torch\n"
            "from pathlib import Path\n"
            "from torch.utils.data import Dataset\n"
            "class DigitFolder(Dataset):\n"
            "    def __init__(self, folder, transform=None):\n"
            "        self.paths = sorted(p for p in Path(folder).iterdir() if p.name.endswith('.pt'))\n"
            "        self.transform = transform\n"
            "    def __len__(self):\n"
            "        return len(self.paths)\n"
            "    def __getitem__(self, i):\n"
            "        item = torch.load(self.paths[i])\n"
            "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
            "        return x, torch.as_tensor(item['y']).long()\n"
        ),
    ),
    Mistake(
        name="case-insensitive-suffix",
        message="Only names that end in '.pt' are samples: lowering the name first also counts "
        "SCAN.PT. Match the suffix exactly.",
        code=(
            "import torch\n"
            "from pathlib import Path\n"
            "from torch.utils.data import Dataset\n"
            "class DigitFolder(Dataset):\n"
            "    def __init__(self, folder, transform=None):\n"
            "        self.paths = sorted(\n"
            "            p for p in Path(folder).iterdir()\n"
            "            if p.is_file() and p.name.lower().endswith('.pt')\n"
            "        )\n"
            "        self.transform = transform\n"
            "    def __len__(self):\n"
            "        return len(self.paths)\n"
            "    def __getitem__(self, i):\n"
            "        item = torch.load(self.paths[i])\n"
            "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
            "        return x, item['y']\n"
        ),
    ),
]
MISTAKES["channel_stats"] += [
    Mistake(
        name="numpy-sums",
        message="x.numpy() works on CPU tensors only: on batches on a GPU it raises. Keep the "
        "running sums in torch (x.double().sum(dim=(0, 2, 3))).",
        code=(
            "import numpy as np\n"
            "import torch\n"
            "def channel_stats(loader):\n"
            "    n, s1, s2 = 0, 0.0, 0.0\n"
            "    for x, _ in loader:\n"
            "        a = x.detach().numpy().astype(np.float64)\n"
            "        s1 = s1 + a.sum(axis=(0, 2, 3))\n"
            "        s2 = s2 + (a * a).sum(axis=(0, 2, 3))\n"
            "        n += a.shape[0] * a.shape[2] * a.shape[3]\n"
            "    mean = s1 / n\n"
            "    std = np.sqrt(np.maximum(s2 / n - mean**2, 0))\n"
            "    return torch.from_numpy(mean).float(), torch.from_numpy(std).float()\n"
        ),
    ),
]
MISTAKES["make_transforms"] += [
    Mistake(
        name="image-moved-to-cpu",
        message="img.cpu() takes an image off its GPU, and the result stays on the CPU: make "
        "mean and std with device=img.device (or use v2.Normalize) and keep the image where "
        "it is.",
        code=(
            "import torch\n"
            "from torchvision.transforms import v2\n"
            "def make_transforms(mean, std):\n"
            "    m = torch.tensor(mean).view(-1, 1, 1)\n"
            "    s = torch.tensor(std).view(-1, 1, 1)\n"
            "    augment = v2.RandomAffine(degrees=15, translate=(0.1, 0.1))\n"
            "    def eval_tf(img):\n"
            "        return (img.cpu() - m) / s\n"
            "    def train_tf(img):\n"
            "        return eval_tf(augment(img))\n"
            "    return train_tf, eval_tf\n"
        ),
    ),
    Mistake(
        name="per-channel-augmentation",
        message="Each channel got its own random move, so the channels of one image no longer "
        "line up: apply the augmentation to the whole (C, H, W) image at once.",
        code=(
            "import torch\n"
            "from torchvision.transforms import v2\n"
            "def make_transforms(mean, std):\n"
            "    augment = v2.RandomAffine(degrees=15, translate=(0.1, 0.1))\n"
            "    normalize = v2.Normalize(mean, std)\n"
            "    def train_tf(img):\n"
            "        moved = [augment(img[c : c + 1]) for c in range(img.shape[0])]\n"
            "        return normalize(torch.cat(moved))\n"
            "    return train_tf, normalize\n"
        ),
    ),
]
MISTAKES["pad_collate"] += [
    Mistake(
        name="pad-value-filled-in-float32",
        message="torch.full(..., pad_value) is float32: cast to float64 afterwards, a pad value "
        "such as 0.1 comes out rounded. Fill in the sequences' dtype (dtype=seq.dtype, or "
        "pad_sequence).",
        code=(
            "import torch\n"
            "def pad_collate(batch, pad_value=0.0):\n"
            "    seqs = [s for s, _ in batch]\n"
            "    L = max(s.shape[0] for s in seqs)\n"
            "    padded = torch.full((len(seqs), L, seqs[0].shape[1]), pad_value).to(seqs[0])\n"
            "    for i, s in enumerate(seqs):\n"
            "        padded[i, : s.shape[0]] = s\n"
            "    lengths = torch.tensor([s.shape[0] for s in seqs])\n"
            "    labels = torch.tensor([int(label) for _, label in batch])\n"
            "    return padded, lengths, labels\n"
        ),
    ),
    Mistake(
        name="nan-sentinel-padding",
        message="Filling with nan and replacing every nan by pad_value also replaces the nans "
        "that are in the data (missing values): fill the padding positions only.",
        code=(
            "import torch\n"
            "def pad_collate(batch, pad_value=0.0):\n"
            "    seqs = [s for s, _ in batch]\n"
            "    L = max(s.shape[0] for s in seqs)\n"
            "    padded = seqs[0].new_full((len(seqs), L, seqs[0].shape[1]), float('nan'))\n"
            "    for i, s in enumerate(seqs):\n"
            "        padded[i, : s.shape[0]] = s\n"
            "    padded = torch.nan_to_num(padded, nan=pad_value, posinf=float('inf'),\n"
            "                              neginf=float('-inf'))\n"
            "    lengths = torch.tensor([s.shape[0] for s in seqs])\n"
            "    labels = torch.tensor([int(label) for _, label in batch])\n"
            "    return padded, lengths, labels\n"
        ),
    ),
]
MISTAKES["channel_stats"] += [
    Mistake(
        name="reads-the-loader-twice",
        message="channel_stats iterates the loader twice (the mean first, then the squared "
        "deviations): the loader is any iterable, and a stream gives nothing the second time. "
        "Keep n, s1 and s2 in one pass.",
        code=(
            "import torch\n"
            "\n"
            "def channel_stats(loader):\n"
            "    total, count = 0, 0\n"
            "    for x, _ in loader:\n"
            "        v = x.transpose(0, 1).reshape(x.shape[1], -1).double()  # (C, B*H*W)\n"
            "        total = total + v.sum(dim=1)\n"
            "        count += v.shape[1]\n"
            "    mean = total / count\n"
            "    squares = 0\n"
            "    for x, _ in loader:\n"
            "        v = x.transpose(0, 1).reshape(x.shape[1], -1).double()\n"
            "        squares = squares + ((v - mean[:, None]) ** 2).sum(dim=1)\n"
            "    return mean.float(), torch.sqrt(squares / count).float()\n"
        ),
    ),
]
