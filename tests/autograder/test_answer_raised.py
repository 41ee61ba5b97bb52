"""When a probe's call of the student's code raises, the hidden check's message helps as
``tutorial_lib.checks.call`` does in a visible test: the error, the student's own frames and
the call as the probe made it."""

import pytest
import torch

from autograder import boundary, wire
from autograder.judge import InProcessChannel


def scale_rows(x, w):
    return x @ w  # (2, 3) @ (2, 3) does not multiply


def reshaped(x, w):
    x = x.reshape(-1)
    return x @ w


def raised(student, case, what="scale_rows(x of shape (2, 3))") -> boundary.AnswerRaised:
    with pytest.raises(boundary.AnswerRaised) as info:
        boundary.observe(boundary.call, student, case, what)
    return info.value


CASE = {"args": [torch.zeros(2, 3), torch.zeros(2, 3)]}


@pytest.mark.parametrize("remote", [False, True], ids=["in the kernel", "across the boundary"])
def test_the_message_names_the_error_the_learners_frames_and_the_call(remote):
    student = boundary.Remote("scale_rows", InProcessChannel({"scale_rows": scale_rows}))
    err = raised(student if remote else scale_rows, CASE)
    lines = str(err).splitlines()
    assert lines[0] == (
        "scale_rows(x of shape (2, 3)) raised RuntimeError: mat1 and mat2 shapes cannot be "
        "multiplied (2x3 and 2x3)"
    )
    assert lines[1] == "Your code, where it raised (last line last):"
    assert len(lines) == 4, str(err)  # one frame: boundary.py's probe and torch are dropped
    assert lines[2].endswith("in scale_rows: return x @ w  # (2, 3) @ (2, 3) does not multiply")
    assert (
        lines[3] == "Called as scale_rows(x=tensor(2, 3) float32 cpu, w=tensor(2, 3) float32 cpu)"
    )
    assert err.type_name == "RuntimeError" and err.message.startswith("mat1 and mat2")


def test_a_check_can_still_append_its_hint_to_the_last_line():
    err = raised(scale_rows, CASE)
    assert f"{err}. Transpose w.".endswith("float32 cpu). Transpose w.")


def test_an_argument_the_answer_assigned_to_is_not_described():
    err = raised(reshaped, CASE, "reshaped(...)")
    assert "Called as reshaped(x=..., w=tensor(2, 3) float32 cpu)" in str(err)


def test_an_old_style_envelope_still_reads_as_one_line():
    class Echo:
        def run(self, *_):
            return wire.encode({"raised": ["ValueError", "bad"]})

    with pytest.raises(boundary.AnswerRaised) as info:
        boundary.observe(boundary.call, boundary.Remote("f", Echo()), {"args": []}, "f()")
    assert str(info.value) == "f() raised ValueError: bad"


def test_the_stub_still_passes_through_as_not_implemented():
    def stub(x, w):
        raise NotImplementedError

    with pytest.raises(NotImplementedError):
        boundary.observe(boundary.call, stub, CASE)


class NoForward(torch.nn.Module):
    """A module whose forward was never written: torch raises NotImplementedError inside."""


def through_a_module_without_forward(x, w):
    return NoForward()(x)


@pytest.mark.parametrize("remote", [False, True], ids=["in the kernel", "across the boundary"])
def test_a_not_implemented_error_raised_inside_torch_is_an_error_not_the_stub(remote):
    # "not answered yet" would send the learner looking for a stub that is not there
    answer = through_a_module_without_forward
    channel = InProcessChannel({"through_a_module_without_forward": answer})
    student = boundary.Remote("through_a_module_without_forward", channel) if remote else answer
    err = raised(student, CASE, "through_a_module_without_forward(...)")
    assert err.type_name == "NotImplementedError"
    assert "forward" in err.message and "return NoForward()(x)" in str(err)


def test_a_checks_hint_for_the_error_comes_last_as_calls_does():
    err = raised(scale_rows, CASE)
    text = err.with_hint(" Multiply by w.T. ")
    assert text.startswith(str(err)) and text.endswith("\nHint: Multiply by w.T.")
