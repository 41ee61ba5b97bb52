"""Plausible wrong answers for 04_data's exercises."""

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
    ],
}
