"""Run notebooks in fresh kernels, the way a learner's "Restart and run all" does."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError
from nbformat import NotebookNode

from autograder.nbgrader_settings import CELL_TIMEOUT_S, KERNEL_SHUTDOWN


def kernel_env() -> dict[str, str]:
    """The environment for a kernel: one math thread unless the caller chose otherwise.

    Two kernels on a 2-core machine, each with torch's default thread pool, fight for the
    cores and can run a tiny model many times slower than one thread each.
    """
    env = dict(os.environ)
    # Tools nbgrader and kernels call by name (alembic, jupyter) live beside this python.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", env["OMP_NUM_THREADS"])
    env.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # no debugger warning on stderr
    return env


@dataclass
class CellError:
    """An error a cell raised while a notebook ran."""

    index: int
    ename: str
    evalue: str


def errors(nb: NotebookNode) -> list[CellError]:
    """Every error output in an executed notebook, with its cell index."""
    found = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if out.get("output_type") == "error":
                found.append(CellError(i, out.get("ename", ""), out.get("evalue", "")))
    return found


def run_notebook(
    path: Path, allow_errors: bool = False, timeout: int = CELL_TIMEOUT_S
) -> tuple[NotebookNode, float]:
    """Execute a copy of the notebook top to bottom in a fresh kernel in a scratch folder.

    Returns the executed notebook and the wall seconds it took (kernel start included, not
    the kernel's teardown: ``KERNEL_SHUTDOWN``).
    Raises ``CellExecutionError`` on the first error unless ``allow_errors``.
    """
    nb = nbformat.read(str(path), as_version=4)
    with tempfile.TemporaryDirectory(prefix="run-") as cwd:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=allow_errors,
            shutdown_kernel=KERNEL_SHUTDOWN,
            resources={"metadata": {"path": cwd}},
        )
        start = time.perf_counter()
        with _env(kernel_env()):
            client.execute()
        return nb, time.perf_counter() - start


@contextmanager
def _env(env: dict[str, str]) -> Iterator[None]:
    """Temporarily replace os.environ: the kernel manager copies it into the kernel."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


class KernelSession:
    """One live kernel in which cells can be run one by one (the mistake checks use it)."""

    def __init__(self, nb: NotebookNode, cwd: str, timeout: int = CELL_TIMEOUT_S) -> None:
        self.nb = nb
        self.client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            allow_errors=False,
            interrupt_on_timeout=True,  # a looping mistake must not take the kernel with it
            shutdown_kernel=KERNEL_SHUTDOWN,
            resources={"metadata": {"path": cwd}},
        )

    @contextmanager
    def started(self) -> Iterator[KernelSession]:
        """Start the kernel for the duration of the ``with`` block."""
        with _env(kernel_env()), self.client.setup_kernel():
            yield self

    def run_cell(self, index: int) -> None:
        """Run the notebook's own cell ``index``; raises ``CellExecutionError`` on error."""
        self.client.execute_cell(self.nb.cells[index], index)

    def run_source(self, source: str) -> str | None:
        """Run arbitrary code; return None on success or the error's one-line summary.

        nbclient stores an executed cell at the index it is given, so the code runs as a
        scratch cell after the notebook's last one, taken out again afterwards: given an
        index of the notebook's own, it would overwrite that cell.
        """
        cell = nbformat.v4.new_code_cell(source)
        self.nb.cells.append(cell)
        try:
            self.client.execute_cell(cell, len(self.nb.cells) - 1)
        except CellTimeoutError:
            return f"CellTimeoutError: no result within {self.client.timeout} s"
        except CellExecutionError as err:
            return f"{err.ename}: {err.evalue}"
        finally:
            self.nb.cells.pop()
        return None
