"""Probes, one module per lesson topic: the half of a hidden check that touches the answer.

A probe is ``probe_<name>(answer, case) -> data``. It builds the inputs the case describes
(seeded, so the grader can build identical ones), runs the learner's function or class,
and returns what it saw: return values, tensors, flags, a model's weights afterwards.
Probes are sent to the learner's kernel when the grader runs them, so they must hold no
reference answers and no expected values; those stay in ``autograder/hidden/<topic>.py``.
See ``autograder/boundary.py``.
"""

import torch


def seed_cpu(seed: int) -> None:
    """Seed torch's CPU generator, the one every module and tensor a probe builds draws from.

    Not ``torch.manual_seed``, for two reasons. It seeds every CUDA device as well, which
    inside ``torch.random.fork_rng(devices=[])`` changes the caller's CUDA stream for good.
    And on a build for accelerators that have not started (any CPU-only grader with
    PyTorch's CUDA wheel) it queues that seeding with a formatted copy of the call stack for
    each kind of accelerator: a millisecond or more in a kernel's deep stack, where a
    lesson's probes seed over a thousand times.

    Only for what is built and run on the CPU (the contracts' probes, builders that make a
    module there). A probe that runs on the case's device, a GPU where the grader has one,
    draws its dropout masks from that device's generator: it seeds with torch.manual_seed.
    """
    torch.default_generator.manual_seed(seed)
