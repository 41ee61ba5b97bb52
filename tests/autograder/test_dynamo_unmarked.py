"""dynamo_unmarked: meta-device checks without torch._dynamo, and nothing left changed.

Each test runs in a fresh interpreter: whether torch._dynamo is loaded is process state.
"""

import subprocess
import sys
import textwrap


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120
    )


def test_meta_kernels_run_without_loading_dynamo_and_are_unmarked_afterwards():
    out = _run(
        """
        import builtins, sys, torch
        from torch._prims_common import wrappers
        from autograder.dynamo_unmarked import dynamo_unmarked
        import autograder.dynamo_unmarked as du

        real_import = builtins.__import__
        with dynamo_unmarked(), dynamo_unmarked():
            y = torch.zeros(2, 3, device="meta") + torch.ones(3, device="meta")
            answered = list(du._answered)
        assert y.shape == (2, 3)
        assert "torch._dynamo" not in sys.modules, "the block imported torch._dynamo"
        assert answered, "no kernel met the stand-in: the test no longer tests anything"
        assert builtins.__import__ is real_import
        assert not any(hasattr(fn, "__dynamo_disable") for fn in answered), "a mark stayed"
        torch.zeros(2, device="meta") + 1  # outside: the wrapper marks for real
        assert "torch._dynamo" in sys.modules
        print("ok")
        """
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_a_compile_inside_the_block_loads_the_real_module_and_warns_nothing():
    out = _run(
        """
        import builtins, sys, torch
        from autograder.dynamo_unmarked import dynamo_unmarked

        real_import = builtins.__import__
        with dynamo_unmarked():
            torch.zeros(2, device="meta") * 2
            f = torch.compile(lambda x: torch.sin(x) * 2 + 1, backend="eager")
            assert torch.allclose(f(torch.ones(2)), torch.sin(torch.ones(2)) * 2 + 1)
            assert builtins.__import__ is real_import, "the stand-in did not step aside"
            import torch._dynamo.exc
            assert sys.modules["torch._dynamo.exc"] is torch._dynamo.exc
        print("ok")
        """
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
    assert out.stderr == "", out.stderr  # a warning in a test cell would cost marks
