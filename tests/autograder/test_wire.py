"""The data boundary: what crosses from a student's kernel, and what is refused."""

import collections
import json
import math

import pytest
import torch

from autograder import boundary, wire
from autograder.probes import welcome as welcome_probes


def test_plain_values_round_trip():
    value = {
        "a": (1, 2.5, None, True, "text"),
        "b": [torch.device("cpu"), torch.float16, torch.Size([2, 3])],
        3: "int key",
        "big": 2**70,
        "inf": -math.inf,
    }
    assert wire.roundtrip(value) == value


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.bool]
)
def test_tensors_round_trip_as_plain_tensors(dtype):
    t = (torch.arange(6).reshape(2, 3) % 2).to(dtype)
    back = wire.roundtrip(t.t())  # non-contiguous goes in, values come out
    assert type(back) is torch.Tensor and back.dtype == dtype and torch.equal(back, t.t())


def test_requires_grad_crosses_but_no_graph():
    x = torch.ones(2, requires_grad=True)
    back = wire.roundtrip(x * 2)
    assert back.requires_grad and back.grad_fn is None and back.is_leaf


def test_subclasses_of_plain_types_cross_as_plain_values():
    point = collections.namedtuple("Point", "x y")(1, 2)
    assert wire.roundtrip([collections.OrderedDict(a=1), point]) == [{"a": 1}, (1, 2)]


def test_objects_that_are_not_data_become_their_type_name():
    back = wire.roundtrip({"model": torch.nn.Linear(2, 2)})
    assert back["model"] == wire.Unsendable("torch.nn.modules.linear.Linear")


def test_a_lying_class_attribute_does_not_make_an_object_a_device():
    class Liar:
        @property
        def __class__(self):
            return torch.device

        def __str__(self):
            return "cuda"

    assert isinstance(Liar(), torch.device)  # the lie works on isinstance...
    assert isinstance(wire.roundtrip(Liar()), wire.Unsendable)  # ...not on the wire


def test_a_tensor_subclass_sends_its_data_not_its_story():
    class Liar(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", "") in ("detach", "cpu", "contiguous", "numpy"):
                return torch.zeros(3)
            return super().__torch_function__(func, types, args, kwargs or {})

    back = wire.roundtrip(torch.tensor([1.0, 2.0, 3.0]).as_subclass(Liar))
    assert type(back) is torch.Tensor and back.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        json.dumps({"__pickle__": "gASVAAAA"}),
        json.dumps({"__tensor__": {"dtype": "float32", "shape": [4], "data": "AAAA"}}),
        json.dumps({"__tensor__": {"dtype": "object", "shape": [1], "data": ""}}),
        json.dumps({"a": 1, "b": 2}),
        "[" * 5000 + "]" * 5000,
    ],
)
def test_malformed_results_are_refused(text):
    with pytest.raises(wire.WireError):
        wire.decode(text)


def test_oversized_results_are_refused_before_parsing():
    with pytest.raises(wire.WireError, match="at most"):
        wire.decode(" " * (wire.MAX_BYTES + 1))


class _Echo:
    """A channel that hands back a fixed envelope, as a tampered kernel might."""

    def __init__(self, envelope):
        self.envelope = envelope

    def run(self, probe_module, probe_name, name, case_json):
        return self.envelope


def test_observe_fails_closed_on_anything_but_a_value():
    for envelope, error in [
        ("garbage", boundary.AnswerUnreachable),
        (wire.encode({"missing": "f"}), boundary.AnswerUnreachable),
        (wire.encode({"raised": ["ValueError", "bad"]}), boundary.AnswerRaised),
        (wire.encode({"unexpected": 1}), boundary.AnswerUnreachable),
    ]:
        with pytest.raises(error):
            boundary.observe(boundary.call, boundary.Remote("f", _Echo(envelope)), {"args": []})
    with pytest.raises(NotImplementedError):
        remote = boundary.Remote("f", _Echo(wire.encode({"raised": ["NotImplementedError", ""]})))
        boundary.observe(boundary.call, remote, {"args": []})


def test_only_probes_may_cross_to_the_kernel():
    remote = boundary.Remote("f", _Echo(wire.encode({"value": 1})))
    assert boundary.observe(welcome_probes.probe_value_and_grad, remote, {}) == 1
    with pytest.raises(TypeError, match="not a probe"):
        boundary.observe(lambda f, case: f(), remote, {})
    with pytest.raises(TypeError, match="through observe"):
        remote()


def test_local_and_remote_observation_see_the_same_data():
    from autograder.judge import InProcessChannel

    def halve(x, limit):
        return x / 2

    case = {"x": torch.tensor([3.0, 4.0]), "limit": 1.0}
    here = boundary.observe(welcome_probes.probe_halve_until_small, halve, case)
    there = boundary.observe(
        welcome_probes.probe_halve_until_small,
        boundary.Remote("halve", InProcessChannel({"halve": halve})),
        case,
    )
    assert here.keys() == there.keys() and all(
        torch.equal(here[k], there[k]) for k in ("out", "grad")
    )
