"""Warm kernels: the next submission's kernel starts while one is graded, and sees nothing of it.

One worker (``--jobs 1``) grades three notebooks in order. ``a_planter`` leaves traces in
every place a kernel could keep state (a module's attributes, builtins, ``sys.modules``,
the environment, files in every writable folder, a detached process). ``b_seeker`` runs in
the kernel that was started ahead while ``a_planter`` ran, and looks for every trace.
``c_both`` plants and seeks in one notebook: the seeker must find everything there, or the
test would prove nothing.
"""

import json
from pathlib import Path

import nbformat
import pytest

from autograder.grading import samples, sandbox
from autograder.grading.run import GradeOptions, grade
from tests.grading import attacks

pytestmark = [
    pytest.mark.lesson,
    pytest.mark.xdist_group("grading"),
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed"),
]
LESSON = "00_welcome"
MARKER = "warm-kernel-plant"  # in the detached process's command line
TRACES = [
    "module attribute",
    "builtins",
    "sys.modules",
    "environment",
    "file in /tmp",
    "file in home",
    "file in cwd",
    "file in /dev/shm",
    "process",
]

# Before the setup cell: when this kernel's process started, and whether torch was imported
# before the notebook asked for it (it is, in a warm kernel).
KERNEL_AGE = """\
import os as _os, sys as _sys, time as _time
_ticks = _os.sysconf("SC_CLK_TCK")
_started = float(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]) / _ticks
_uptime = float(open("/proc/uptime").read().split()[0])
print("KERNEL_STARTED_AT", _time.time() - (_uptime - _started))
print("TORCH_PRELOADED", "torch" in _sys.modules)
"""

PLANT = f"""\
import builtins, os, pathlib, subprocess, sys, time, types
import torch
torch.PLANTED = "a"
builtins.PLANTED = "a"
sys.modules["planted_by_a"] = types.ModuleType("planted_by_a")
os.environ["PLANTED"] = "a"
for folder in ["/tmp", os.path.expanduser("~"), os.getcwd(), "/dev/shm"]:
    pathlib.Path(folder, "planted_by_a").write_text("a")
subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(600)", "{MARKER}"], start_new_session=True
)
print("PLANTED_AT", time.time())
"""

SEEK = f"""\
import builtins, json, os, pathlib, sys, time
import torch
seen = []
if hasattr(torch, "PLANTED"):
    seen.append("module attribute")
if hasattr(builtins, "PLANTED"):
    seen.append("builtins")
if "planted_by_a" in sys.modules:
    seen.append("sys.modules")
if "PLANTED" in os.environ:
    seen.append("environment")
for name, folder in [("/tmp", "/tmp"), ("home", os.path.expanduser("~")),
                     ("cwd", os.getcwd()), ("/dev/shm", "/dev/shm")]:
    if pathlib.Path(folder, "planted_by_a").exists():
        seen.append("file in " + name)
def _planted_process():
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and b"{MARKER}" in pathlib.Path("/proc", entry, "cmdline").read_bytes():
                return True
        except OSError:
            pass
    return False
# Looked for over 2 s: on a loaded machine a process just started may not be listed yet.
for _ in range(20):
    if _planted_process():
        seen.append("process")
        break
    time.sleep(0.1)
print("SEEN", json.dumps(seen))
"""


def _with_cells(*sources: str) -> nbformat.NotebookNode:
    """The solution with extra (ungraded) cells: the first before the setup cell, the rest
    right after it, as a student may add cells anywhere."""
    nb = samples.solution(LESSON)
    setup = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    first, *after = sources
    nb.cells[setup + 1 : setup + 1] = [nbformat.v4.new_code_cell(s) for s in after]
    nb.cells.insert(setup, nbformat.v4.new_code_cell(first))
    return nb


def _printed(out: Path, student: str) -> dict[str, str]:
    """``KEY value`` lines the graded notebook printed, as a dict."""
    path = out / "autograded" / student / LESSON / f"{LESSON}.ipynb"
    nb = json.loads(path.read_text())
    lines = [
        line
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for o in c["outputs"]
        for line in "".join(o.get("text", "")).splitlines()
    ]
    return dict(line.split(" ", 1) for line in lines if line.split(" ", 1)[0].isupper())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("warm")
    subs, out = root / "submissions", root / "out"
    notebooks = {
        "a_planter": _with_cells(KERNEL_AGE, PLANT),
        "b_seeker": _with_cells(KERNEL_AGE, SEEK),
        "c_both": _with_cells(KERNEL_AGE, PLANT, SEEK),
    }
    samples.write_class(subs, LESSON, notebooks)
    opts = GradeOptions(subs, out, [LESSON], jobs=1, timeout_s=60, progress=False)
    results = {r["student"]: r for r in grade(opts)}
    printed = {student: _printed(out, student) for student in notebooks}
    return results, printed


def test_every_notebook_is_graded_in_full(graded):
    results, _ = graded
    for student, result in results.items():
        assert result["status"] == "ok", result
        assert result["score"] == result["max_score"] == 5, (student, result)


def test_the_next_kernel_was_started_while_the_planter_ran(graded):
    _, printed = graded
    assert printed["b_seeker"]["TORCH_PRELOADED"] == "True"  # warm: torch was imported ahead
    # The seeker's kernel already existed when the planter planted: what it must not see
    # was made while it waited.
    assert float(printed["b_seeker"]["KERNEL_STARTED_AT"]) < float(
        printed["a_planter"]["PLANTED_AT"]
    )


def test_the_seeker_finds_every_trace_in_its_own_kernel(graded):
    _, printed = graded
    assert json.loads(printed["c_both"]["SEEN"]) == TRACES


def test_the_next_submission_sees_nothing_of_the_one_before(graded):
    _, printed = graded
    assert json.loads(printed["b_seeker"]["SEEN"]) == []


def test_no_planted_process_outlives_grading(graded):
    assert attacks.processes_with(MARKER) == []


class _Started(Exception):
    pass


@pytest.mark.parametrize("start_next", [True, False])
def test_a_workers_last_submission_starts_no_spare(monkeypatch, start_next):
    """The grade command sends its last submissions (one per worker) with start_next=False:
    no kernel is started after them, where no submission is left to use it."""
    from autograder.grading import preprocessor

    execute = preprocessor.GradingExecute(
        warm_spare=True, sandboxed=True, start_next_spare=start_next
    )

    def start(**_):
        raise _Started

    monkeypatch.setattr(execute, "_new_kernel_manager", start)
    monkeypatch.setattr(preprocessor, "_SPARES", {})
    if start_next:
        with pytest.raises(_Started):
            execute._start_spare()
    else:
        execute._start_spare()
