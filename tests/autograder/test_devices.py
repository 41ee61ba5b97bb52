"""probes/devices.py: another device on a CPU-only grader, refusing what a GPU refuses."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from autograder.probes.devices import (
    MIXED,
    OneDevice,
    Placed,
    StandIn,
    describe,
    on_meta,
    stand_in,
)


def meta(*shape: int) -> torch.Tensor:
    return torch.zeros(*shape, device="meta")


@pytest.mark.parametrize(
    "call",
    [
        lambda: meta(3, 4) @ torch.zeros(4, 2),  # meta's own matmul accepts this
        lambda: F.linear(meta(3, 4), torch.zeros(2, 4)),
        lambda: F.embedding(torch.tensor([0, 1]), meta(3, 4)),
        lambda: meta(3, 4).index_select(0, torch.tensor([0, 1])),
        lambda: meta(3, 4).mul_(torch.ones(3, 4)),
        lambda: torch.zeros(()).add_(meta(())),  # a CPU scalar as the target: a GPU refuses
        lambda: torch.zeros(()).__iadd__(meta(()).sum()),  # total += loss
        lambda: torch.eye(3)[torch.tensor([0, 2], device="meta")],  # a CPU table, device labels
        lambda: torch.zeros(3, 3).index_put_((meta(2).long(), meta(2).long()), torch.ones(2)),
    ],
)
def test_one_device_refuses_what_meta_lets_through(call):
    with OneDevice() as mode, pytest.raises(RuntimeError, match="same device"):
        call()
    assert mode.mixed


@pytest.mark.parametrize(
    "call",
    [
        lambda: meta(3, 4)[torch.tensor([0, 2])],  # CPU indices: a GPU takes them
        lambda: meta(3, 4).copy_(torch.ones(3, 4)),
        lambda: meta(3, 4) * torch.tensor(2.0),  # a 0-d CPU tensor is a scalar
        lambda: torch.ones(3, 4).to(meta(1).device) + meta(3, 4),
        lambda: meta(3, 4).expand_as(torch.ones(3, 4)),
    ],
)
def test_one_device_allows_what_a_gpu_allows(call):
    with OneDevice() as mode:
        call()
    assert not mode.mixed


def test_a_stand_in_keeps_values_and_refuses_plain_tensors():
    x = stand_in(torch.tensor([3.0, 4.0]))
    with Placed():
        assert x.norm().item() == 5.0  # meta could not say this
        assert isinstance(x / 2, StandIn)
        assert isinstance(torch.zeros(2, device=x.device) + x, StandIn)  # placed
        assert isinstance(torch.zeros_like(x) + x.new_ones(2), StandIn)
        with pytest.raises(RuntimeError, match=MIXED[:20]):
            torch.zeros(2) + x  # made without device=
        rebuilt = torch.tensor(x.tolist())  # values read back: a CPU tensor
    assert describe((x, rebuilt)) == [
        {"device": "meta", "dtype": torch.float32, "shape": [2]},
        {"device": "cpu", "dtype": torch.float32, "shape": [2]},
    ]


def test_torch_func_transforms_are_noted_not_judged():
    x = stand_in(torch.tensor([1.0, 2.0]))
    with Placed() as placed:
        torch.func.grad(lambda t: (t**2).sum())(x)
    assert placed.transformed


def test_a_stand_in_leaf_gets_its_gradient_and_cpu_leaves_the_device():
    x = stand_in(torch.tensor([1.0, 2.0]))
    with Placed():
        w = torch.ones(2, device=x.device, requires_grad=True)  # placed, and still a leaf
        (w * x).sum().backward()
        assert isinstance(w, StandIn) and w.grad.tolist() == [1.0, 2.0]
        moved = x.cpu()  # the same memory here; on a GPU a CPU copy
    assert type(moved) is torch.Tensor


def _caught(x):  # mixes, then hides the error
    try:
        return x @ torch.ones(4, 2)
    except RuntimeError:
        return x[:, :2]


def test_on_meta_says_mixed_inconclusive_or_the_result():
    assert "device_mix" in on_meta(lambda: meta(3, 4) @ torch.ones(4, 2))
    assert "device_mix" in on_meta(lambda: _caught(meta(3, 4)))  # caught: still mixed
    assert "inconclusive" in on_meta(lambda: meta(3).sum().item())  # meta holds no value
    assert on_meta(lambda: meta(3, 4).sum(0))["result"].device.type == "meta"
