"""Right answers for 05_data's exercises, written unlike the solution (see __init__.py)."""

from autograder.right_answers import RightAnswer

RIGHT_ANSWERS = {
    "TensorPairDataset": [
        RightAnswer(
            name="subclass-of-TensorDataset",
            why="Builds on TensorDataset (which indexes every tensor and takes its length from "
            "the first one) and checks sizes with x.shape[0] != y.shape[0] before it, since "
            "TensorDataset itself would raise AssertionError, not ValueError.",
            code=(
                "import torch\n"
                "from torch.utils.data import TensorDataset\n"
                "\n"
                "class TensorPairDataset(TensorDataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if x.shape[0] != y.shape[0]:\n"
                "            raise ValueError(f'{x.shape[0]} samples but {y.shape[0]} labels')\n"
                "        super().__init__(x, y)\n"
                "        self.transform = transform\n"
                "\n"
                "    def __getitem__(self, i):\n"
                "        x, y = super().__getitem__(i)\n"
                "        return (x if self.transform is None else self.transform(x)), y\n"
            ),
        ),
        RightAnswer(
            name="size-and-callable-check",
            why="Uses x.size(0) for the length, stores the count once, and tests the transform "
            "with callable() instead of `is not None`: the same behaviour for every transform "
            "the text allows.",
            code=(
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "\n"
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        self.n = x.size(0)\n"
                "        if y.size(0) != self.n:\n"
                "            raise ValueError('x and y need the same number of samples')\n"
                "        self.x, self.y = x, y\n"
                "        self.transform = transform\n"
                "\n"
                "    def __len__(self):\n"
                "        return self.n\n"
                "\n"
                "    def __getitem__(self, i):\n"
                "        data = self.x[i]\n"
                "        if callable(self.transform):\n"
                "            data = self.transform(data)\n"
                "        return data, self.y[i]\n"
            ),
        ),
        RightAnswer(
            name="cpu-0d-index",
            why="Indexes x and y with torch.as_tensor(i), a 0-d CPU index: indexing accepts CPU "
            "indices on any device.",
            code=(
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if x.shape[0] != y.shape[0]:\n"
                '            raise ValueError("x and y differ in length")\n'
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return self.x.shape[0]\n"
                "    def __getitem__(self, i):\n"
                "        k = torch.as_tensor(i)  # a 0-d CPU index: indexing accepts it on any device\n"
                "        xi = self.x[k]\n"
                "        if self.transform is not None:\n"
                "            xi = self.transform(xi)\n"
                "        return xi, self.y[k]\n"
            ),
        ),
        RightAnswer(
            name="narrow-both",
            why="torch.narrow(x, 0, i, 1)[0] and the same for y: views of x[i] and y[i], on their"
            " device.",
            code=(
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "class TensorPairDataset(Dataset):\n"
                "    def __init__(self, x, y, transform=None):\n"
                "        if len(x) != len(y):\n"
                '            raise ValueError(f"{len(x)} samples but {len(y)} labels")\n'
                "        self.x, self.y, self.transform = x, y, transform\n"
                "    def __len__(self):\n"
                "        return len(self.x)\n"
                "    def __getitem__(self, i):\n"
                "        xi = torch.narrow(self.x, 0, i, 1)[0]\n"
                "        return (xi if self.transform is None else self.transform(xi)), torch.narrow(self.y, 0, i, 1)[0]\n"
            ),
        ),
    ],
    "DigitFolder": [
        RightAnswer(
            name="os-listdir-and-int-label",
            why="os.listdir and os.path.join on os.fspath(folder) (str or Path), torch.load "
            "with weights_only=True and map_location='cpu', and the label as a Python int: "
            "the text asks for the label, and int(y) is the same number.",
            code=(
                "import os\n"
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        folder = os.fspath(folder)\n"
                "        names = sorted(n for n in os.listdir(folder) if n.endswith('.pt'))\n"
                "        self.paths = [os.path.join(folder, n) for n in names]\n"
                "        self.transform = transform\n"
                "\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i], weights_only=True, map_location='cpu')\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, int(item['y'])\n"
            ),
        ),
        RightAnswer(
            name="glob-sorted",
            why="glob.glob(folder/*.pt) sorted, which keeps only names ending in .pt; the "
            "files are still opened in __getitem__ only.",
            code=(
                "import glob\n"
                "import os\n"
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.paths = sorted(glob.glob(os.path.join(str(folder), '*.pt')))\n"
                "        self.transform = transform\n"
                "\n"
                "    def __len__(self):\n"
                "        return len(self.paths)\n"
                "\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.paths[i])\n"
                "        x, y = item['x'], item['y']\n"
                "        if self.transform:\n"
                "            x = self.transform(x)\n"
                "        return x, y\n"
            ),
        ),
        RightAnswer(
            name="glob-names-mmap-load",
            why="Keeps the folder and the sorted names from Path.glob('*.pt'), and loads with "
            "mmap=True and map_location='cpu' (the tensor maps the file instead of copying "
            "it); the label comes back as a Python int.",
            code=(
                "from pathlib import Path\n"
                "import torch\n"
                "from torch.utils.data import Dataset\n"
                "\n"
                "class DigitFolder(Dataset):\n"
                "    def __init__(self, folder, transform=None):\n"
                "        self.folder = Path(folder)\n"
                "        self.names = sorted(p.name for p in self.folder.glob('*.pt'))\n"
                "        self.transform = transform\n"
                "\n"
                "    def __len__(self):\n"
                "        return len(self.names)\n"
                "\n"
                "    def __getitem__(self, i):\n"
                "        item = torch.load(self.folder / self.names[i], map_location='cpu', mmap=True)\n"
                "        x = item['x'] if self.transform is None else self.transform(item['x'])\n"
                "        return x, item['y'].item()\n"
            ),
        ),
    ],
    "split_dataset": [
        RightAnswer(
            name="randperm-and-subsets",
            why="A seeded torch.randperm cut into two Subsets, returned as a list: the text asks "
            "for two datasets and a private generator, not for random_split.",
            code=(
                "import math\n"
                "import torch\n"
                "from torch.utils.data import Subset\n"
                "\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    g = torch.Generator()\n"
                "    g.manual_seed(seed)\n"
                "    perm = torch.randperm(len(dataset), generator=g).tolist()\n"
                "    return [Subset(dataset, perm[n_val:]), Subset(dataset, perm[:n_val])]\n"
            ),
        ),
        RightAnswer(
            name="fractions-to-random-split",
            why="random_split accepts fractions; with two parts it gives the validation part "
            "floor(n * val_fraction) items (the remainder goes to the first part).",
            code=(
                "import torch\n"
                "from torch.utils.data import random_split\n"
                "\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    train_set, val_set = random_split(\n"
                "        dataset, [1 - val_fraction, val_fraction], generator=g\n"
                "    )\n"
                "    return train_set, val_set\n"
            ),
        ),
        RightAnswer(
            name="fork-rng-then-manual-seed",
            why="Seeds the global generator only inside torch.random.fork_rng, which puts the "
            "caller's global state back afterwards: the global stream is left as it was.",
            code=(
                "import math\n"
                "import torch\n"
                "from torch.utils.data import random_split\n"
                "\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n_val = math.floor(len(dataset) * val_fraction)\n"
                "    with torch.random.fork_rng(devices=[]):\n"
                "        torch.manual_seed(seed)\n"
                "        parts = random_split(dataset, [len(dataset) - n_val, n_val])\n"
                "    return parts[0], parts[1]\n"
            ),
        ),
        RightAnswer(
            name="numpy-private-generator",
            why="A private NumPy Generator seeded with the seed: repeatable, seed-dependent and "
            "leaves torch's global state alone, which is what the text asks of the generator.",
            code=(
                "import numpy as np\n"
                "from torch.utils.data import Subset\n"
                "\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    n = len(dataset)\n"
                "    n_val = int(n * val_fraction)\n"
                "    perm = np.random.default_rng(seed).permutation(n)\n"
                "    return Subset(dataset, perm[n_val:].tolist()), Subset(dataset, perm[:n_val].tolist())\n"
            ),
        ),
        RightAnswer(
            name="python-random-instance",
            why="A private random.Random(seed) shuffles a list of indices (neither torch's nor "
            "Python's global stream is touched); int() floors a positive product like "
            "math.floor.",
            code=(
                "import random\n"
                "from torch.utils.data import Subset\n"
                "\n"
                "def split_dataset(dataset, val_fraction, seed):\n"
                "    indices = list(range(len(dataset)))\n"
                "    random.Random(seed).shuffle(indices)\n"
                "    n_val = int(len(dataset) * val_fraction)\n"
                "    return Subset(dataset, indices[n_val:]), Subset(dataset, indices[:n_val])\n"
            ),
        ),
    ],
    "make_loaders": [
        RightAnswer(
            name="explicit-samplers",
            why="A RandomSampler with the seeded generator and a SequentialSampler are what "
            "shuffle=True/False build inside DataLoader; the pair is returned as a list.",
            code=(
                "import torch\n"
                "from torch.utils.data import DataLoader, RandomSampler, SequentialSampler\n"
                "\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    g = torch.Generator()\n"
                "    g.manual_seed(seed)\n"
                "    train_loader = DataLoader(\n"
                "        train_set, batch_size=batch_size, sampler=RandomSampler(train_set, generator=g)\n"
                "    )\n"
                "    val_loader = DataLoader(val_set, batch_size=batch_size, sampler=SequentialSampler(val_set))\n"
                "    return [train_loader, val_loader]\n"
            ),
        ),
        RightAnswer(
            name="batch-sampler",
            why="A BatchSampler over a seeded RandomSampler, every flag spelled out for the "
            "validation loader: the same batches as shuffle=True with batch_size.",
            code=(
                "import torch\n"
                "from torch.utils.data import BatchSampler, DataLoader, RandomSampler\n"
                "\n"
                "def make_loaders(train_set, val_set, batch_size, seed):\n"
                "    g = torch.Generator().manual_seed(seed)\n"
                "    batches = BatchSampler(RandomSampler(train_set, generator=g), batch_size, drop_last=False)\n"
                "    train_loader = DataLoader(train_set, batch_sampler=batches, num_workers=0)\n"
                "    val_loader = DataLoader(val_set, batch_size=batch_size, shuffle=False,\n"
                "                            num_workers=0, drop_last=False, pin_memory=False)\n"
                "    return train_loader, val_loader\n"
            ),
        ),
    ],
    "channel_stats": [
        RightAnswer(
            name="merge-batch-moments",
            why="Chan's parallel formula: each batch's own mean and population variance (in "
            "float64), merged with the count and the shift between means. Equivalent to the "
            "pooled sums, and more stable.",
            code=(
                "import torch\n"
                "\n"
                "def channel_stats(loader):\n"
                "    n, mean, m2 = 0, None, None\n"
                "    for x, _ in loader:\n"
                "        x = x.to(torch.float64)\n"
                "        k = x.shape[0] * x.shape[2] * x.shape[3]\n"
                "        b_mean = x.mean(dim=(0, 2, 3))\n"
                "        b_m2 = ((x - b_mean.view(1, -1, 1, 1)) ** 2).sum(dim=(0, 2, 3))\n"
                "        if mean is None:\n"
                "            n, mean, m2 = k, b_mean, b_m2\n"
                "            continue\n"
                "        delta = b_mean - mean\n"
                "        total = n + k\n"
                "        mean = mean + delta * k / total\n"
                "        m2 = m2 + b_m2 + delta**2 * n * k / total\n"
                "        n = total\n"
                "    return mean.to(torch.float32), (m2 / n).sqrt().to(torch.float32)\n"
            ),
        ),
    ],
    "make_transforms": [
        RightAnswer(
            name="torchvision-v1-rotation",
            why="The older torchvision.transforms API (it works on tensors too), with a random "
            "rotation as the geometric augmentation: the text asks for one that keeps the "
            "size, RandomAffine is only an example.",
            code=(
                "from torchvision import transforms as T\n"
                "\n"
                "def make_transforms(mean, std):\n"
                "    normalize = T.Normalize(mean, std)\n"
                "    return T.Compose([T.RandomRotation(20), normalize]), normalize\n"
            ),
        ),
        RightAnswer(
            name="plain-functions",
            why="Two plain functions: normalisation written with tensors moved to the image's "
            "device, and a padded random crop of the image's own size (fill 0) before it.",
            code=(
                "import torch\n"
                "from torchvision.transforms import v2\n"
                "\n"
                "def make_transforms(mean, std):\n"
                "    m = torch.tensor(mean).view(-1, 1, 1)\n"
                "    s = torch.tensor(std).view(-1, 1, 1)\n"
                "\n"
                "    def eval_tf(img):\n"
                "        return (img - m.to(img.device, img.dtype)) / s.to(img.device, img.dtype)\n"
                "\n"
                "    def train_tf(img):\n"
                "        crop = v2.RandomCrop(size=tuple(img.shape[-2:]), padding=2)\n"
                "        return eval_tf(crop(img))\n"
                "\n"
                "    return train_tf, eval_tf\n"
            ),
        ),
        RightAnswer(
            name="resized-crop-after-bilinear-rotation",
            why="Two geometric augmentations chained, a bilinear rotation and a random resized "
            "crop back to the image's own size, then Normalize: interpolation blends pixels "
            "near the edges, but a region of one value keeps that value.",
            code=(
                "from torchvision.transforms import v2\n"
                "\n"
                "def make_transforms(mean, std):\n"
                "    normalize = v2.Normalize(mean, std)\n"
                "    rotate = v2.RandomRotation(10, interpolation=v2.InterpolationMode.BILINEAR)\n"
                "\n"
                "    def train_tf(img):\n"
                "        crop = v2.RandomResizedCrop(tuple(img.shape[-2:]), scale=(0.7, 1.0))\n"
                "        return normalize(crop(rotate(img)))\n"
                "\n"
                "    return train_tf, normalize\n"
            ),
        ),
    ],
    "pad_collate": [
        RightAnswer(
            name="full-then-copy",
            why="A tensor filled with pad_value in the sequences' dtype and device, each item "
            "copied into its row; lengths and labels with dtype=torch.long; a list returned.",
            code=(
                "import torch\n"
                "\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    seqs = [seq for seq, _ in batch]\n"
                "    lengths = torch.tensor([len(seq) for seq in seqs], dtype=torch.long)\n"
                "    first = seqs[0]\n"
                "    padded = torch.full((len(seqs), int(lengths.max()), first.shape[1]), pad_value,\n"
                "                        dtype=first.dtype, device=first.device)\n"
                "    for i, seq in enumerate(seqs):\n"
                "        padded[i, : len(seq)] = seq\n"
                "    labels = torch.as_tensor([int(label) for _, label in batch], dtype=torch.long)\n"
                "    return [padded, lengths, labels]\n"
            ),
        ),
        RightAnswer(
            name="functional-pad-and-stack",
            why="torch.nn.functional.pad on the time axis of each item, then stack: the same "
            "(B, L_max, F) tensor as pad_sequence.",
            code=(
                "import torch\n"
                "import torch.nn.functional as F\n"
                "\n"
                "def pad_collate(batch, pad_value=0.0):\n"
                "    longest = max(seq.shape[0] for seq, _ in batch)\n"
                "    rows = [F.pad(seq, (0, 0, 0, longest - seq.shape[0]), value=pad_value) for seq, _ in batch]\n"
                "    lengths = torch.tensor([seq.shape[0] for seq, _ in batch])\n"
                "    labels = torch.tensor([int(label) for _, label in batch])\n"
                "    return torch.stack(rows), lengths, labels\n"
            ),
        ),
    ],
    "balanced_sampler": [
        RightAnswer(
            name="unique-inverse-counts",
            why="torch.unique with return_inverse and return_counts gives each sample's class "
            "count whatever the ids are; float32 weights are as good as float64.",
            code=(
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    _, inverse, counts = torch.unique(labels, return_inverse=True, return_counts=True)\n"
                "    weights = 1.0 / counts[inverse].float()\n"
                "    g = torch.Generator()\n"
                "    g.manual_seed(seed)\n"
                "    return WeightedRandomSampler(weights, num_samples, replacement=True, generator=g)\n"
            ),
        ),
        RightAnswer(
            name="counter-weights-list",
            why="Class counts from collections.Counter and the weights as a Python list, which "
            "WeightedRandomSampler accepts as readily as a tensor.",
            code=(
                "from collections import Counter\n"
                "import torch\n"
                "from torch.utils.data import WeightedRandomSampler\n"
                "\n"
                "def balanced_sampler(labels, num_samples, seed):\n"
                "    ids = labels.tolist()\n"
                "    counts = Counter(ids)\n"
                "    weights = [1.0 / counts[c] for c in ids]\n"
                "    return WeightedRandomSampler(\n"
                "        weights, num_samples=num_samples, replacement=True,\n"
                "        generator=torch.Generator().manual_seed(seed),\n"
                "    )\n"
            ),
        ),
    ],
    "confusion_matrix": [
        RightAnswer(
            name="python-loop",
            why="One += 1 per sample over Python ints: slow on a million samples, but right, "
            "and the result is on the CPU, which the exercise allows.",
            code=(
                "import torch\n"
                "\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    cm = torch.zeros(num_classes, num_classes, dtype=torch.int64)\n"
                "    for t, p in zip(targets.tolist(), preds.tolist()):\n"
                "        cm[t, p] += 1\n"
                "    return cm\n"
            ),
        ),
        RightAnswer(
            name="one-hot-matmul",
            why="one_hot(targets).T @ one_hot(preds) counts every (true, predicted) pair; the "
            "product is taken in float (integer matmul does not exist on every device) and "
            "rounded back to int64, exact for counts below 2**24.",
            code=(
                "import torch\n"
                "import torch.nn.functional as F\n"
                "\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    t = F.one_hot(targets.long(), num_classes).float()  # (N, C)\n"
                "    p = F.one_hot(preds.long(), num_classes).float()  # (N, C)\n"
                "    return (t.T @ p).round().long()\n"
            ),
        ),
        RightAnswer(
            name="index-put-accumulate",
            why="index_put_ with accumulate=True adds every repeated (true, predicted) pair, "
            "unlike cm[t, p] += 1.",
            code=(
                "import torch\n"
                "\n"
                "def confusion_matrix(preds, targets, num_classes):\n"
                "    cm = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=preds.device)\n"
                "    ones = torch.ones(preds.shape[0], dtype=torch.int64, device=preds.device)\n"
                "    return cm.index_put_((targets.long(), preds.long()), ones, accumulate=True)\n"
            ),
        ),
    ],
    "precision_recall": [
        RightAnswer(
            name="where-guarded-float64",
            why="torch.where picks 0 where a sum is 0 (the nan computed there is discarded); "
            "float64 results are as good as float32.",
            code=(
                "import torch\n"
                "\n"
                "def precision_recall(cm):\n"
                "    tp = torch.diagonal(cm).double()\n"
                "    col, row = cm.sum(0).double(), cm.sum(1).double()\n"
                "    precision = torch.where(col > 0, tp / col, torch.zeros_like(tp))\n"
                "    recall = torch.where(row > 0, tp / row, torch.zeros_like(tp))\n"
                "    return precision, recall\n"
            ),
        ),
        RightAnswer(
            name="nan-to-num",
            why="Divides naively and then replaces the nan of every 0 / 0 by 0; a tuple built "
            "from a list comprehension over the two axes.",
            code=(
                "import torch\n"
                "\n"
                "def precision_recall(cm):\n"
                "    tp = cm.diag().float()\n"
                "    return tuple(torch.nan_to_num(tp / cm.sum(dim=d), nan=0.0) for d in (0, 1))\n"
            ),
        ),
    ],
}

RIGHT_ANSWERS["split_dataset"] += [
    RightAnswer(
        name="random-split-by-fractions",
        why=(
            "random_split with the fractions [1 - f, f]: it floors each part and gives the one "
            "item left over to the first, so validation holds floor(N * f) items."
        ),
        code=(
            "from torch.utils.data import random_split\n"
            "def split_dataset(dataset, val_fraction, seed):\n"
            "    g = torch.Generator().manual_seed(seed)\n"
            "    train_set, val_set = random_split(dataset, [1 - val_fraction, val_fraction], generator=g)\n"
            "    return train_set, val_set\n"
        ),
    ),
]

# Written from the exercise texts alone (red team): styles the catalogue above had not tried.
RIGHT_ANSWERS["TensorPairDataset"] += [
    RightAnswer(
        name="identity-default-and-list-item",
        why="Stores an identity function when no transform is given and returns the item as a "
        "list [data, label], which the default collate function takes like a tuple.",
        code=(
            "import torch\n"
            "from torch.utils.data import Dataset\n"
            "class TensorPairDataset(Dataset):\n"
            "    def __init__(self, x, y, transform=None):\n"
            "        if x.size(0) != y.size(0):\n"
            "            raise ValueError(f'{x.size(0)} samples but {y.size(0)} labels')\n"
            "        self.x, self.y = x, y\n"
            "        self.transform = transform if transform is not None else (lambda t: t)\n"
            "    def __len__(self):\n"
            "        return self.x.size(0)\n"
            "    def __getitem__(self, i):\n"
            "        return [self.transform(self.x[i]), self.y[i]]\n"
        ),
    ),
]
RIGHT_ANSWERS["channel_stats"] += [
    RightAnswer(
        name="stacked-per-batch-sums",
        why="Keeps each batch's (C,) sums in lists and adds them up with torch.stack at the "
        "end: only per-batch statistics are joined, never the batches themselves.",
        code=(
            "import torch\n"
            "def channel_stats(loader):\n"
            "    counts, sums, squares = [], [], []\n"
            "    for x, _ in loader:\n"
            "        x = x.double()\n"
            "        counts.append(x.shape[0] * x.shape[2] * x.shape[3])\n"
            "        sums.append(x.sum(dim=(0, 2, 3)))\n"
            "        squares.append((x**2).sum(dim=(0, 2, 3)))\n"
            "    n = sum(counts)\n"
            "    mean = torch.stack(sums).sum(0) / n\n"
            "    var = (torch.stack(squares).sum(0) / n - mean**2).clamp(min=0)\n"
            "    return mean.float(), var.sqrt().float()\n"
        ),
    ),
]
RIGHT_ANSWERS["make_transforms"] += [
    RightAnswer(
        name="random-perspective",
        why="RandomPerspective is geometric too: it moves pixels, keeps the size and fills "
        "only what it uncovers at the border, before Normalize.",
        code=(
            "from torchvision.transforms import v2\n"
            "def make_transforms(mean, std):\n"
            "    normalize = v2.Normalize(mean, std)\n"
            "    warp = v2.RandomPerspective(distortion_scale=0.3, p=1.0)\n"
            "    return v2.Compose([warp, normalize]), normalize\n"
        ),
    ),
]
RIGHT_ANSWERS["confusion_matrix"] += [
    RightAnswer(
        name="labels-to-cpu-first",
        why="Moves the labels to the CPU first and counts there with index_put_: the text lets "
        "the result live on the CPU, and CPU labels may index a CPU tensor.",
        code=(
            "import torch\n"
            "def confusion_matrix(preds, targets, num_classes):\n"
            "    t, p = targets.cpu().long(), preds.cpu().long()\n"
            "    cm = torch.zeros(num_classes, num_classes, dtype=torch.int64)\n"
            "    cm.index_put_((t, p), torch.ones_like(t), accumulate=True)\n"
            "    return cm\n"
        ),
    ),
]
RIGHT_ANSWERS["precision_recall"] += [
    RightAnswer(
        name="float32-where-as-list",
        why="Float32 ratios guarded with torch.where, returned as a list [precision, recall]: "
        "the text allows float32 and any pair.",
        code=(
            "import torch\n"
            "def precision_recall(cm):\n"
            "    cmf = cm.float()\n"
            "    tp = cmf.diagonal()\n"
            "    col, row = cmf.sum(0), cmf.sum(1)\n"
            "    precision = torch.where(col == 0, torch.zeros_like(tp), tp / col)\n"
            "    recall = torch.where(row == 0, torch.zeros_like(tp), tp / row)\n"
            "    return [precision, recall]\n"
        ),
    ),
]
RIGHT_ANSWERS["DigitFolder"] += [
    RightAnswer(
        name="scandir-files-only",
        why="os.scandir with is_file() (a subfolder is never a sample) and full paths sorted: "
        "the names differ only after the common folder, so the order is the names' order; "
        "weights_only=True loads the tensors as they are.",
        code=(
            "import os\n"
            "import torch\n"
            "from torch.utils.data import Dataset\n"
            "class DigitFolder(Dataset):\n"
            "    def __init__(self, folder, transform=None):\n"
            "        with os.scandir(folder) as entries:\n"
            "            self.paths = sorted(\n"
            "                e.path for e in entries if e.is_file() and e.name.endswith('.pt')\n"
            "            )\n"
            "        self.transform = transform\n"
            "    def __len__(self):\n"
            "        return len(self.paths)\n"
            "    def __getitem__(self, i):\n"
            "        item = torch.load(self.paths[i], weights_only=True)\n"
            "        x = item['x']\n"
            "        return (self.transform(x) if self.transform else x), item['y']\n"
        ),
    ),
]
RIGHT_ANSWERS["make_transforms"] += [
    RightAnswer(
        name="cpu-round-trip",
        why="The augmentation runs on a CPU copy and the result goes back to img.device "
        "before Normalize: slower on a GPU, but every result stays where the image is.",
        code=(
            "from torchvision.transforms import v2\n"
            "def make_transforms(mean, std):\n"
            "    augment = v2.RandomAffine(degrees=15, translate=(0.1, 0.1))\n"
            "    normalize = v2.Normalize(mean, std)\n"
            "    def train_tf(img):\n"
            "        return normalize(augment(img.cpu()).to(img.device))\n"
            "    return train_tf, normalize\n"
        ),
    ),
    RightAnswer(
        name="functional-affine-per-call",
        why="The functional API with a random angle and shift drawn from torch's global "
        "generator at each call, then the functional normalize.",
        code=(
            "import torch\n"
            "import torchvision.transforms.v2.functional as TF\n"
            "def make_transforms(mean, std):\n"
            "    def eval_tf(img):\n"
            "        return TF.normalize(img, mean, std)\n"
            "    def train_tf(img):\n"
            "        angle = float(torch.empty(()).uniform_(-15, 15))\n"
            "        tx, ty = [int(v) for v in torch.randint(-1, 2, (2,))]\n"
            "        moved = TF.affine(img, angle=angle, translate=[tx, ty], scale=1.0, shear=[0.0, 0.0])\n"
            "        return eval_tf(moved)\n"
            "    return train_tf, eval_tf\n"
        ),
    ),
]
RIGHT_ANSWERS["pad_collate"] += [
    RightAnswer(
        name="zero-pad-then-where",
        why="Zero padding first, then torch.where with a mask from the lengths puts pad_value "
        "(made in the sequences' dtype) after each item: nans in the data and a pad value "
        "such as 0.1 come through exactly.",
        code=(
            "import torch\n"
            "def pad_collate(batch, pad_value=0.0):\n"
            "    seqs = [s for s, _ in batch]\n"
            "    lengths = torch.tensor([s.shape[0] for s in seqs])\n"
            "    L = int(lengths.max())\n"
            "    padded = torch.stack(\n"
            "        [torch.cat([s, s.new_zeros(L - s.shape[0], s.shape[1])]) for s in seqs]\n"
            "    )\n"
            "    mask = (torch.arange(L) < lengths[:, None])[..., None].to(padded.device)\n"
            "    padded = torch.where(mask, padded, padded.new_tensor(pad_value))\n"
            "    labels = torch.tensor([int(label) for _, label in batch], dtype=torch.int64)\n"
            "    return padded, lengths, labels\n"
        ),
    ),
]
RIGHT_ANSWERS["balanced_sampler"] += [
    RightAnswer(
        name="unique-searchsorted",
        why="Counts from torch.unique, looked up for each sample with searchsorted in the "
        "sorted ids: one weight per sample, whatever the ids are.",
        code=(
            "import torch\n"
            "from torch.utils.data import WeightedRandomSampler\n"
            "def balanced_sampler(labels, num_samples, seed):\n"
            "    ids, counts = torch.unique(labels, sorted=True, return_counts=True)\n"
            "    weights = 1.0 / counts[torch.searchsorted(ids, labels)].double()\n"
            "    return WeightedRandomSampler(\n"
            "        weights, num_samples=num_samples, replacement=True,\n"
            "        generator=torch.Generator().manual_seed(seed),\n"
            "    )\n"
        ),
    ),
]
RIGHT_ANSWERS["split_dataset"] += [
    RightAnswer(
        name="argsort-of-private-uniforms",
        why="A random order from argsort of seeded uniforms (a private generator), then "
        "Subsets: the same seed, the same split.",
        code=(
            "import math\n"
            "import torch\n"
            "from torch.utils.data import Subset\n"
            "def split_dataset(dataset, val_fraction, seed):\n"
            "    g = torch.Generator().manual_seed(seed)\n"
            "    order = torch.rand(len(dataset), generator=g).argsort().tolist()\n"
            "    n_val = math.floor(len(dataset) * val_fraction)\n"
            "    return Subset(dataset, order[n_val:]), Subset(dataset, order[:n_val])\n"
        ),
    ),
]
RIGHT_ANSWERS["confusion_matrix"] += [
    RightAnswer(
        name="scatter-add-flat",
        why="scatter_add_ of ones into a flat int64 tensor on the inputs' device, viewed as "
        "(C, C).",
        code=(
            "import torch\n"
            "def confusion_matrix(preds, targets, num_classes):\n"
            "    c = num_classes\n"
            "    flat = torch.zeros(c * c, dtype=torch.int64, device=preds.device)\n"
            "    idx = targets.long() * c + preds.long()\n"
            "    flat.scatter_add_(0, idx, torch.ones_like(idx))\n"
            "    return flat.view(c, c)\n"
        ),
    ),
]
