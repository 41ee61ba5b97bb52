"""autograder.execute: running code in a live kernel without touching the notebook."""

import copy

import nbformat

from autograder.execute import KernelSession


def test_running_scratch_code_leaves_the_notebooks_cells_as_they_were(tmp_path):
    """mistake_check swaps each mistake in with run_source; the solution notebook it holds
    must keep its own first cell (nbclient stores an executed cell at the index it is given)."""
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("x = 1")]
    )
    before = copy.deepcopy(nb.cells)
    with KernelSession(nb, str(tmp_path), timeout=60).started() as session:
        assert session.run_source("y = 2") is None
        assert session.run_source("assert y == 2") is None  # the kernel kept its state
        assert session.run_source("1 / 0").startswith("ZeroDivisionError")
    assert nb.cells == before
