import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from tutorial_lib.seed import make_generator, seed_everything, seed_worker


def draw():
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def test_seed_everything_repeats_python_numpy_and_torch():
    seed_everything(123)
    first = draw()
    seed_everything(123)
    assert draw() == first
    seed_everything(124)
    assert draw() != first


def test_make_generator_is_seeded():
    assert torch.equal(
        torch.randperm(10, generator=make_generator(3)),
        torch.randperm(10, generator=make_generator(3)),
    )


class NumpyNoise(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return float(np.random.rand())


def test_seed_worker_makes_numpy_in_workers_repeat():
    def run():
        loader = DataLoader(
            NumpyNoise(),
            batch_size=2,
            num_workers=2,
            worker_init_fn=seed_worker,
            generator=make_generator(0),
        )
        return [b.tolist() for b in loader]

    first = run()
    assert run() == first
    assert first[0] != first[1]  # the two workers draw different numbers
