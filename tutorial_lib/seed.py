"""Seed every random number generator a training run touches, DataLoader workers included."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int, deterministic: bool = False) -> None:
    """Seed Python, NumPy and torch (all devices); optionally insist on deterministic kernels."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)  # also seeds every CUDA device
    if deterministic:
        # Raises at the first operation that has no deterministic implementation.
        torch.use_deterministic_algorithms(True)
        torch.backends.cudnn.benchmark = False


def seed_worker(worker_id: int) -> None:
    """``worker_init_fn`` for DataLoader: derive NumPy's and Python's seeds from torch's."""
    # torch gives each worker base_seed + worker_id; the other libraries need it passed on.
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def make_generator(seed: int) -> torch.Generator:
    """A seeded CPU generator for ``DataLoader(generator=...)`` or ``random_split``."""
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator
