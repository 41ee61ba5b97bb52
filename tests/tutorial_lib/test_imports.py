"""On Colab tutorial_lib is all a learner has: it must import without the instructor tools."""

import subprocess
import sys
import textwrap

BLOCKED = ["nbgrader", "jupyterlab", "jupyter_server", "nbclient", "nbformat", "autograder"]


def test_tutorial_lib_imports_without_instructor_packages():
    code = textwrap.dedent(
        f"""
        import importlib.abc, sys

        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {BLOCKED!r}:
                    raise ImportError(f"blocked for this test: {{name}}")
                return None

        sys.meta_path.insert(0, Block())
        import tutorial_lib
        from tutorial_lib import checks, data, device, plots, seed
        print("ok", tutorial_lib.__version__)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ok")
