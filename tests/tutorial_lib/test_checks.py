"""The checks' messages are part of the product: these tests pin what a learner reads."""

import pytest
import torch

from tutorial_lib.checks import (
    CheckError,
    assert_close,
    check_device,
    check_dtype,
    check_gradcheck,
    check_no_hooks_left,
    check_shape,
    check_type,
)


def message(fn, *args, **kwargs) -> str:
    with pytest.raises(CheckError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_check_error_is_an_assertion_error():
    assert issubclass(CheckError, AssertionError)


def test_passing_checks_return_none():
    x = torch.zeros(2, 3)
    assert check_shape(x, (2, 3)) is None
    assert check_dtype(x, torch.float32) is None
    assert check_device(x, "cpu") is None
    assert assert_close(x, torch.zeros(2, 3)) is None


def test_type_message_names_both_types_and_hints_the_fix():
    msg = message(check_type, "cuda", torch.device, "pick_device()")
    assert "pick_device() should be a device, got str" in msg
    assert "torch.device('cuda')" in msg


def test_type_message_uses_the_right_article():
    assert "should be an int, got str" in message(check_type, "3", int)


def test_type_message_for_none_suggests_return():
    assert "forget a `return`" in message(check_type, None, torch.Tensor)


def test_type_message_for_numpy_suggests_from_numpy():
    import numpy as np

    assert "torch.from_numpy" in message(check_type, np.zeros(2), torch.Tensor)


def test_shape_message_names_the_differing_dimensions_and_spots_a_swap():
    msg = message(check_shape, torch.zeros(2, 5, 3, 7), (2, 3, 5, 7), names="N C H W")
    assert "has shape (2, 5, 3, 7), expected (2, 3, 5, 7) as (N, C, H, W)" in msg
    assert "C is 5, expected 3" in msg and "H is 3, expected 5" in msg
    assert "N is" not in msg  # only differing dimensions are named
    assert "C and H are swapped" in msg


def test_shape_message_for_wrong_rank_mentions_keepdim():
    msg = message(check_shape, torch.zeros(4, 1), (4,))
    assert "2 dimensions, expected 1" in msg and "keepdim" in msg


def test_shape_message_for_same_numel_suggests_reshape():
    msg = message(check_shape, torch.zeros(6, 2), (3, 4))
    assert "reshape or view" in msg


def test_shape_wildcard_accepts_any_size():
    check_shape(torch.zeros(7, 3), (None, 3))
    assert "(*, 4)" in message(check_shape, torch.zeros(7, 3), (None, 4))


def test_shape_rejects_names_of_wrong_length():
    with pytest.raises(ValueError):
        check_shape(torch.zeros(2), (2,), names="N C")


def test_dtype_message_explains_torch_Tensor_constructor():
    msg = message(check_dtype, torch.Tensor([1, 2]), torch.int64)
    assert "dtype torch.float32, expected torch.int64" in msg
    assert "torch.tensor(" in msg
    divided = message(check_dtype, torch.tensor([4, 2]) / 2, torch.int64)
    assert "true division (/)" in divided  # not only the constructor that was not used


def test_dtype_message_for_an_empty_tensor_asks_for_an_explicit_dtype():
    msg = message(check_dtype, torch.tensor([]), torch.int64)
    assert "dtype=torch.int64" in msg and "torch.Tensor" not in msg


def test_relative_error_is_left_out_where_expected_is_zero():
    msg = message(assert_close, torch.tensor([0.5, 0.0]), torch.zeros(2))
    assert "Max abs error 0.5 (allowed" in msg and "rel error" not in msg


def test_device_message_suggests_to_device():
    msg = message(check_device, torch.zeros(1), torch.device("meta"))
    assert "is on cpu, expected meta" in msg and ".to(device)" in msg


def test_same_device_compares_what_devices_resolve_to(monkeypatch):
    from tutorial_lib.checks import same_device

    assert same_device(torch.device("cpu"), "cpu:0")
    assert same_device("meta", torch.device("meta"))
    assert not same_device("cpu", "meta")
    # "cuda" is the current CUDA device; without CUDA here it can only be device 0
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert same_device(torch.device("cuda"), torch.device("cuda:0"))
    assert not same_device("cuda", "cuda:1")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    assert same_device("cuda", "cuda:1")
    assert not same_device("cuda", "cuda:0")


def test_check_device_accepts_an_index_qualified_name():
    check_device(torch.zeros(1), "cpu:0")
    check_device(torch.zeros(1), torch.device("cpu", 0))


def test_value_message_reports_count_first_index_and_errors():
    expected = torch.zeros(2, 3)
    actual = expected.clone()
    actual[1, 2] = 0.5
    actual[0, 1] = -0.25
    msg = message(assert_close, actual, expected, what="f(x)")
    assert "f(x) differs from the expected values at 2 of 6 positions" in msg
    assert "First at index (0, 1): got -0.25, expected 0" in msg
    assert "Max abs error 0.5" in msg
    assert "atol=1e-05" in msg


def test_values_within_tolerance_pass_and_dtype_sets_tolerance():
    x = torch.ones(3)
    assert_close(x + 1e-7, x)
    half = torch.ones(3, dtype=torch.float16)
    assert_close(half + 5e-4, half)  # fine for float16, not for float32
    with pytest.raises(CheckError):
        assert_close(x + 5e-4, x)


def test_nan_must_match_nan():
    assert_close(torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]))
    msg = message(assert_close, torch.tensor([float("nan")]), torch.tensor([1.0]))
    assert "got nan" in msg


def test_assert_close_checks_shape_and_dtype_before_values():
    assert "shape" in message(assert_close, torch.zeros(3), torch.zeros(4))
    assert "dtype" in message(assert_close, torch.zeros(3, dtype=torch.int64), torch.zeros(3))


def test_assert_close_accepts_python_numbers_as_expected():
    assert_close(torch.tensor([1.0, 2.0]), [1.0, 2.0])
    assert_close(torch.tensor(3), 3)


def test_gradcheck_passes_a_correct_function_and_explains_a_wrong_one():
    class WrongSquare(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**2

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return 2 * x  # forgets grad_output

    x = torch.randn(4)
    check_gradcheck(lambda t: t**2, x)
    msg = message(check_gradcheck, lambda t: WrongSquare.apply(t).sum() * 3, x, what="WrongSquare")
    assert "WrongSquare disagrees with finite differences" in msg
    assert ", Did" not in msg and ". Did backward multiply by grad_output" in msg


def test_leftover_hooks_are_named():
    net = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    check_no_hooks_left(net)
    net[1].register_forward_hook(lambda m, i, o: None)
    msg = message(check_no_hooks_left, net, "capture(net)")
    assert "capture(net) left forward hooks on ['1']" in msg and "handle.remove()" in msg


def test_check_type_names_the_type_a_stand_in_stands_for():
    class StandIn:  # what autograder.wire hands back for an object that is not data
        type_name = "numpy.ndarray"

    with pytest.raises(CheckError, match=r"got ndarray\. Convert with torch.from_numpy"):
        check_type(StandIn(), torch.Tensor, "the answer")
