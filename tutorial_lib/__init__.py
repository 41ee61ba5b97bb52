"""Helpers the course notebooks import: devices, checks with teaching messages, plots, data, seeds.

Nothing here imports nbgrader, Jupyter or the ``autograder`` package: on Colab this is all
a learner has.
"""

__version__ = "0.3.0"

from tutorial_lib.checks import (
    CallError,
    CheckError,
    assert_close,
    call,
    check_device,
    check_dtype,
    check_gradcheck,
    check_shape,
    check_type,
    same_device,
)
from tutorial_lib.device import environment_report, get_device
from tutorial_lib.i18n import tr
from tutorial_lib.seed import make_generator, seed_everything, seed_worker

__all__ = [
    "CallError",
    "CheckError",
    "__version__",
    "assert_close",
    "call",
    "check_device",
    "check_dtype",
    "check_gradcheck",
    "check_shape",
    "check_type",
    "environment_report",
    "get_device",
    "make_generator",
    "same_device",
    "seed_everything",
    "seed_worker",
    "tr",
]
