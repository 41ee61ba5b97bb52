"""``call``: what a learner reads when their own function raises inside a test."""

import subprocess
import sys
import textwrap

import pytest
import torch

import tutorial_lib
from tutorial_lib.checks import CallError, CheckError, call, describe_arg, error_kind

HINTS = {
    "shape": "Add the missing axis with unsqueeze(-1) so that the sizes broadcast.",
    "dtype": "Cast with .float().",
    "any": "Run your function on the example above and read the error.",
}


def add_rows(x, row):
    return x + row  # a (2, 3) plus a (2,) does not broadcast


def project(x, weight):
    return torch.nn.functional.linear(x, weight)  # raises deep inside torch


def failure(fn, *args, **kwargs) -> str:
    with pytest.raises(CallError) as info:
        call(fn, *args, **kwargs)
    return str(info.value)


def test_is_exported_and_fails_a_test_like_the_other_checks():
    assert tutorial_lib.call is call
    assert issubclass(CallError, CheckError) and issubclass(CallError, AssertionError)


def test_a_passing_call_returns_the_value():
    assert call(lambda a, b=1: a + b, 2, b=3) == 5
    out = call(add_rows, torch.zeros(2, 3), torch.ones(3), hints=HINTS)
    assert torch.equal(out, torch.ones(2, 3))


def test_a_shape_error_names_the_call_the_error_and_the_shape_hint():
    msg = failure(add_rows, torch.zeros(2, 3), torch.ones(2), hints=HINTS)
    assert msg.startswith(
        "add_rows(tensor(2, 3) float32 cpu, tensor(2,) float32 cpu) raised RuntimeError:"
    )
    assert "must match the size of tensor b (2)" in msg
    assert msg.endswith("Hint: " + HINTS["shape"])
    assert HINTS["dtype"] not in msg and HINTS["any"] not in msg


def test_mat1_and_mat2_is_a_shape_error():
    msg = failure(project, torch.zeros(5, 128), torch.zeros(10, 512), hints=HINTS)
    assert "mat1 and mat2" in msg and "Hint: " + HINTS["shape"] in msg


def test_only_the_learners_frames_are_kept():
    msg = failure(project, torch.zeros(5, 128), torch.zeros(10, 512))
    frames = msg.split("last line last):\n")[1].splitlines()
    assert len(frames) == 1, msg  # torch's functional.py and this library's call are dropped
    assert (
        "test_call.py" in frames[0] and "in project: return torch.nn.functional.linear" in frames[0]
    )
    assert "site-packages" not in msg and "checks.py" not in msg


def test_the_original_traceback_is_not_chained():
    with pytest.raises(CallError) as info:
        call(add_rows, torch.zeros(2, 3), torch.ones(2))
    assert info.value.__suppress_context__ and info.value.__cause__ is None


def test_not_implemented_error_passes_through_unchanged():
    def blank(x):
        raise NotImplementedError("replace this line with your code")

    with pytest.raises(NotImplementedError, match="replace this line") as info:
        call(blank, torch.zeros(1), hints=HINTS)
    assert type(info.value) is NotImplementedError


def test_a_not_implemented_error_from_inside_torch_is_reported_like_any_error():
    class NoForward(torch.nn.Module):
        pass

    def features(x):
        return NoForward()(x)

    msg = failure(features, torch.zeros(2), hints="Write forward.")
    assert "features(tensor(2,) float32 cpu) raised NotImplementedError" in msg
    assert "return NoForward()(x)" in msg and "Write forward." in msg


def test_one_string_hint_is_shown_for_any_error_and_any_is_the_fallback():
    def look_up(items, i):
        return items[i]

    msg = failure(look_up, [1, 2, 3], 7, hints="Indices start at 0.")
    assert "look_up(list len 3, 7) raised IndexError: list index out of range" in msg
    assert msg.endswith("Hint: Indices start at 0.")
    assert failure(look_up, [1], 7, hints=HINTS).endswith("Hint: " + HINTS["any"])
    assert "Hint" not in failure(look_up, [1], 7)


def test_arguments_are_described_by_kind():
    assert describe_arg(torch.zeros(4, dtype=torch.int64)) == "tensor(4,) int64 cpu"
    assert describe_arg((1, 2)) == "tuple len 2"
    assert describe_arg(torch.nn.Linear(2, 3)) == "Linear"
    assert describe_arg(2.5) == "2.5"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1",
            "shape",
        ),
        ("mat1 and mat2 shapes cannot be multiplied (5x128 and 512x10)", "shape"),
        ("expected scalar type Float but found Long", "dtype"),
        ("mat1 and mat2 must have the same dtype, but got Long and Float", "dtype"),
        ("Expected all tensors to be on the same device, but found at least two devices", "device"),
        ("index 5 is out of bounds for dimension 0 with size 3", "index"),
        ("a leaf Variable that requires grad is being used in an in-place operation.", "inplace"),
        ("element 0 of tensors does not require grad and does not have a grad_fn", "grad"),
        ("something else went wrong", None),
    ],
)
def test_errors_are_sorted_into_hint_kinds(text, kind):
    assert error_kind("RuntimeError", text) == kind


def test_in_a_notebook_cell_frames_are_named_as_ipython_names_them():
    # A fresh interpreter: IPython's shell is process-wide, and nothing may reach stderr.
    script = textwrap.dedent(
        """
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.run_cell("import torch\\nfrom tutorial_lib import call", store_history=True)
        shell.run_cell("def scale(x, w):\\n    return x @ w", store_history=True)
        shell.run_cell(
            "try:\\n    call(scale, torch.zeros(2, 3), torch.zeros(4, 5))\\n"
            "except AssertionError as e:\\n    print(e)"
        )
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert (
        "scale(tensor(2, 3) float32 cpu, tensor(4, 5) float32 cpu) raised RuntimeError"
        in done.stdout
    )
    assert "Cell In[2], line 2, in scale: return x @ w" in done.stdout
    assert done.stderr == ""
