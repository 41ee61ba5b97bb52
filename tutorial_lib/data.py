"""Offline datasets: synthetic ones made from a seed, and the 8x8 digits that scikit-learn ships.

Nothing here reaches the internet unless a caller passes ``download=True`` explicitly.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch


def _generator(seed: int) -> torch.Generator:
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def make_spirals(
    n_per_class: int = 100, n_classes: int = 3, noise: float = 0.2, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Interleaved 2-d spirals: x (N, 2) float32, y (N,) int64; not linearly separable."""
    if n_per_class < 1 or n_classes < 1:
        raise ValueError("make_spirals needs n_per_class >= 1 and n_classes >= 1")
    g = _generator(seed)
    radius = torch.linspace(0.0, 1.0, n_per_class)  # (P,)
    xs, ys = [], []
    for k in range(n_classes):
        angle = torch.linspace(k * 4.0, (k + 1) * 4.0, n_per_class)
        angle = angle + noise * torch.randn(n_per_class, generator=g)
        xs.append(torch.stack([radius * torch.sin(angle), radius * torch.cos(angle)], dim=1))
        ys.append(torch.full((n_per_class,), k, dtype=torch.int64))
    return torch.cat(xs), torch.cat(ys)


def make_blobs(
    n_per_class: int = 100,
    n_classes: int = 2,
    n_features: int = 2,
    spread: float = 1.0,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian clusters around random centres: x (N, F) float32, y (N,) int64."""
    if n_per_class < 1 or n_classes < 1 or n_features < 1:
        raise ValueError("make_blobs needs positive sizes")
    g = _generator(seed)
    centres = 4.0 * torch.randn(n_classes, n_features, generator=g)  # (K, F)
    x = centres.repeat_interleave(n_per_class, dim=0)  # (K*P, F)
    x = x + spread * torch.randn(x.shape, generator=g)
    y = torch.arange(n_classes).repeat_interleave(n_per_class)
    return x, y


def make_sequences(
    n: int = 64, min_len: int = 2, max_len: int = 12, n_features: int = 1, seed: int = 0
) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Variable-length sequences, each (L_i, F), labelled 1 when its sum is positive."""
    if not 1 <= min_len <= max_len:
        raise ValueError("make_sequences needs 1 <= min_len <= max_len")
    g = _generator(seed)
    lengths = torch.randint(min_len, max_len + 1, (n,), generator=g)
    seqs = [torch.randn(int(length), n_features, generator=g) for length in lengths]
    labels = torch.tensor([int(s.sum() > 0) for s in seqs], dtype=torch.int64)
    return seqs, labels


def make_regression(
    n: int = 100, n_features: int = 1, noise: float = 0.1, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A noisy linear problem: x (N, F), y (N, 1), and the true weight (F, 1) and bias (1,)."""
    g = _generator(seed)
    w = torch.randn(n_features, 1, generator=g)
    b = torch.randn(1, generator=g)
    x = torch.randn(n, n_features, generator=g)
    y = x @ w + b + noise * torch.randn(n, 1, generator=g)
    return x, y, w, b


def load_digits() -> tuple[torch.Tensor, torch.Tensor]:
    """The 1,797 handwritten 8x8 digits bundled with scikit-learn: x (N, 1, 8, 8) in [0, 1], y (N,)."""
    from sklearn.datasets import load_digits as sklearn_digits  # ships with the package: offline

    bunch = sklearn_digits()
    x = torch.tensor(bunch.images, dtype=torch.float32).unsqueeze(1) / 16.0  # (N, 1, 8, 8)
    y = torch.tensor(bunch.target, dtype=torch.int64)
    return x, y


def load_torchvision_dataset(
    name: str, root: str | Path = "data", train: bool = True, download: bool = False
):
    """A torchvision dataset (e.g. ``"MNIST"``) if it is on disk or ``download=True``, else ``None``.

    Returns ``None`` with a printed reason when the files are missing or the download fails
    (offline), so a lesson can fall back to the bundled digits.
    """
    from torchvision import datasets, transforms

    cls = getattr(datasets, name, None)
    if cls is None:
        raise ValueError(f"torchvision.datasets has no dataset called {name!r}")
    try:
        return cls(root=str(root), train=train, download=download, transform=transforms.ToTensor())
    except (RuntimeError, OSError) as err:  # missing files, or no network
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"{name} is not available here ({reason}); using the bundled digits instead.")
        return None


def train_val_split(
    n: int, val_fraction: float = 0.2, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Disjoint, seeded index tensors (train, val) covering ``range(n)``."""
    if not 0.0 < val_fraction < 1.0:
        raise ValueError("val_fraction must be between 0 and 1")
    perm = torch.randperm(n, generator=_generator(seed))
    n_val = max(1, math.floor(n * val_fraction))
    return perm[n_val:], perm[:n_val]
