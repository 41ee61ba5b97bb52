"""The course on a Colab-like machine: only Colab's packages, the setup cell installs the rest.

Every student notebook, with its answers filled in from the solutions, runs top to bottom in
a kernel of a fresh virtual environment holding only what Colab provides. The setup cell
installs ``tutorial_lib`` from a wheel of this checkout (the way it installs the tagged
release on Colab), pins the course version, and leaves torch alone. Nothing of the grader's
side (nbgrader, JupyterLab, ``autograder``, nbclient, nbformat) is there.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from nbclient import NotebookClient

import tutorial_lib
from autograder import authoring, course
from autograder.execute import CellError, errors
from autograder.nbgrader_settings import CELL_TIMEOUT_S
from tests.clients import colab
from tests.clients.filled import filled

pytestmark = [pytest.mark.clients, pytest.mark.xdist_group("clients-colab")]

LESSONS = course.lessons()
PROBE_TAG = "COLAB-PROBE "
PROBE = f"""\
import importlib.util, json, sys
import torch, tutorial_lib
print({PROBE_TAG!r} + json.dumps({{
    "absent": {{m: importlib.util.find_spec(m) is None for m in {colab.ABSENT_MODULES!r}}},
    "imported": sorted(m for m in {colab.ABSENT_MODULES!r} if m in sys.modules),
    "course_version": COURSE_VERSION,
    "tutorial_lib": [tutorial_lib.__version__, tutorial_lib.__file__],
    "torch": [torch.__version__, torch.__file__],
    "python": sys.executable,
}}))
"""


@dataclass
class Environment:
    venv: Path
    wheel: Path
    kernels: Path
    setup_s: float
    cached: bool


@dataclass
class Run:
    errors: list[CellError]
    never_ran: list[int]
    probe: dict
    before: dict[str, str]
    after: dict[str, str]
    torch_before: tuple[str, str]
    torch_after: tuple[str, str]  # right after the setup cell
    torch_end: tuple[str, str]  # after the whole notebook
    seconds: float
    setup_output: str = field(default="")


@pytest.fixture(scope="module")
def environment(tmp_path_factory) -> Iterator[Environment]:
    started = time.perf_counter()
    work = tmp_path_factory.mktemp("colab")
    venv, cached, throwaway = colab.colab_venv()
    wheel = colab.build_wheel(work / "wheel")
    kernels = colab.kernel_dir(venv, work / "kernels")
    env = Environment(venv, wheel, kernels, time.perf_counter() - started, cached)
    print(f"colab-like venv {'reused' if cached else 'built'} + wheel: {env.setup_s:.0f} s")
    yield env
    if throwaway:
        shutil.rmtree(venv.parent, ignore_errors=True)


RUNS: dict[str, Run] = {}


def run_lesson(environment: Environment, lesson: str) -> Run:
    """Run the filled-in student notebook once in a Colab-like kernel (cached per lesson).

    Cells run one by one, as a learner runs them, so the installed packages can be compared
    right before and right after the setup cell.
    """
    if lesson in RUNS:
        return RUNS[lesson]
    venv = environment.venv
    colab.uninstall_course(venv)  # each lesson's setup cell installs it, as on a new runtime
    before, torch_before = colab.snapshot(venv)
    nb = filled(lesson)
    nb.cells.append(nbformat.v4.new_code_cell(PROBE))
    setup_index = next(
        i for i, c in enumerate(nb.cells) if c.source.strip() == authoring.SETUP_SOURCE.strip()
    )
    km = AsyncKernelManager(
        kernel_name=colab.KERNEL_NAME,
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(environment.kernels)]),
    )
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"colab-{lesson}-") as cwd:
        client = NotebookClient(
            nb,
            km=km,
            timeout=CELL_TIMEOUT_S,
            allow_errors=True,
            resources={"metadata": {"path": cwd}},
        )
        client.reset_execution_trackers()
        env = colab.kernel_environment(venv, environment.wheel)
        with client.setup_kernel(env=env, cwd=cwd):
            for index, cell in enumerate(nb.cells):
                client.execute_cell(cell, index)
                if index == setup_index:
                    after, torch_after_setup = colab.snapshot(venv)
    seconds = time.perf_counter() - started
    torch_end = colab.snapshot(venv)[1]
    probe = {}
    for out in nb.cells[-1].get("outputs", []):
        for line in out.get("text", "").splitlines():
            if line.startswith(PROBE_TAG):
                probe = json.loads(line[len(PROBE_TAG) :])
    RUNS[lesson] = Run(
        errors=errors(nb),
        never_ran=[
            i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.execution_count is None
        ],
        probe=probe,
        before=before,
        after=after,
        torch_before=torch_before,
        torch_after=torch_after_setup,
        torch_end=torch_end,
        seconds=seconds,
        setup_output="".join(o.get("text", "") for o in nb.cells[setup_index].get("outputs", [])),
    )
    print(f"{lesson}: {seconds:.0f} s in the Colab-like kernel")
    return RUNS[lesson]


@pytest.mark.parametrize("lesson", LESSONS)
def test_filled_notebook_passes_its_visible_tests_on_colab(environment, lesson):
    run = run_lesson(environment, lesson)
    failures = [f"cell {e.index}: {e.ename}: {e.evalue}" for e in run.errors]
    assert not failures, "errors in the Colab-like kernel:\n" + "\n".join(failures)
    assert not run.never_ran, f"cells that never ran: {run.never_ran}"
    assert run.probe, "the probe cell printed nothing"
    assert run.probe["python"].startswith(str(environment.venv)), run.probe["python"]


@pytest.mark.parametrize("lesson", LESSONS)
def test_setup_cell_installs_the_pinned_course_and_leaves_torch_alone(environment, lesson):
    run = run_lesson(environment, lesson)
    assert colab.DIST_NAME not in run.before, "tutorial_lib was preinstalled"
    added = {k: v for k, v in run.after.items() if run.before.get(k) != v}
    removed = sorted(set(run.before) - set(run.after))
    assert added == {colab.DIST_NAME: tutorial_lib.__version__}, f"the setup cell installed {added}"
    assert not removed, f"the setup cell removed {removed}"
    assert run.torch_after == run.torch_before, "the setup cell touched torch"
    assert run.torch_end == run.torch_before, "the notebook touched torch"
    version, file = run.probe["torch"]
    assert file == run.torch_before[1], f"the kernel imported torch from {file}"
    assert version.split("+")[0] == run.torch_before[0], f"the kernel's torch is {version}"
    assert run.probe["course_version"] == tutorial_lib.__version__
    assert f"tutorial_lib {tutorial_lib.__version__}" in run.setup_output, run.setup_output
    assert run.probe["tutorial_lib"][0] == run.probe["course_version"]
    assert run.probe["tutorial_lib"][1].startswith(str(environment.venv)), (
        f"tutorial_lib came from {run.probe['tutorial_lib'][1]}, not the Colab-like venv"
    )


@pytest.mark.parametrize("lesson", LESSONS)
def test_no_notebook_needs_the_grader_side(environment, lesson):
    run = run_lesson(environment, lesson)
    assert run.probe["imported"] == [], f"the notebook imported {run.probe['imported']}"
    for name in ("nbgrader", "jupyterlab", "nbclient", "nbformat"):
        assert run.probe["absent"][name], f"{name} is installed in the Colab-like venv"


def test_course_wheel_carries_no_grader(environment):
    """On Colab the setup cell installs this project's wheel: it should bring only tutorial_lib."""
    import zipfile

    names = zipfile.ZipFile(environment.wheel).namelist()
    packages = sorted(
        {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    )
    assert packages == ["tutorial_lib"], f"the course wheel installs {packages} on Colab"
