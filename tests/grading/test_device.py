"""Scores do not depend on the device the kernels run on.

Where the machine has a GPU, the grade command shows it to the sandboxed kernels: only the
NVIDIA device nodes, with the memory cap on private memory, since CUDA cannot start under an
address-space cap (``sandbox.memory_limit``). These tests grade the same class both ways
and compare. On a machine without a GPU the "GPU" run still takes the GPU path's sandbox
(no device nodes to show, the other memory cap), and the one check that needs CUDA itself
is skipped, saying so.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grading import samples, sandbox
from autograder.grading.run import GradeOptions, grade

pytestmark = [
    pytest.mark.lesson,
    pytest.mark.xdist_group("grading"),
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed"),
]
LESSON = "00_welcome"
NO_GPU = "no GPU on this machine: CUDA inside the sandbox is only checked where there is one"


def _in_sandbox(scratch: Path, code: str, gpu: bool) -> subprocess.CompletedProcess:
    """Run ``python -c code`` in the kernel's sandbox, with its memory cap, instead of a kernel."""
    argv = [*sandbox.sandbox_argv(scratch, [], 6144, gpu=gpu), sys.executable, "-c", code]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300)


def test_the_gpu_sandbox_shows_only_gpu_nodes_and_caps_private_memory(monkeypatch, tmp_path):
    monkeypatch.setattr(sandbox, "gpu_device_nodes", lambda: ["/dev/nvidia0", "/dev/nvidiactl"])
    gpu = sandbox.sandbox_argv(tmp_path, [], 6144, gpu=True)
    cpu = sandbox.sandbox_argv(tmp_path, [], 6144, gpu=False)
    assert gpu[1] == f"--data={6144 * 1024 * 1024}" and cpu[1] == f"--as={6144 * 1024 * 1024}"
    bound = [gpu[i + 1] for i, arg in enumerate(gpu) if arg == "--dev-bind"]
    assert bound == ["/dev/nvidia0", "/dev/nvidiactl"]  # not the machine's whole /dev
    assert "--dev-bind" not in cpu


def test_torch_runs_and_a_memory_bomb_fails_under_the_gpu_paths_cap(tmp_path):
    code = (
        "import torch\n"
        "print(float((torch.ones(64, 64) @ torch.ones(64, 64)).sum()))\n"
        "try:\n"
        "    hog = bytearray(8 * 1024**3)\n"
        "    print('allocated')\n"
        "except MemoryError:\n"
        "    print('MemoryError')\n"
    )
    result = _in_sandbox(tmp_path, code, gpu=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["262144.0", "MemoryError"]


@pytest.mark.skipif(not sandbox.gpu_visible(), reason=NO_GPU)
def test_a_sandboxed_kernel_computes_on_the_gpu(tmp_path):
    code = "import torch\nprint(float(torch.ones(8, device='cuda').sum()))\n"
    result = _in_sandbox(tmp_path, code, gpu=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "8.0"


def test_scores_do_not_depend_on_the_device(tmp_path):
    # What the two paths' sandboxes do differently is the memory cap (and the device nodes,
    # none here): a right answer, a partial one and a memory bomb. A kernel that dies and a
    # blank notebook meet the same sandbox either way (test_grade_behaviour grades them).
    demo = samples.demo_class(LESSON)
    right, partial = demo["right"], demo["partial"]
    bomb = samples.replace_answer(right, "value_and_grad", "hog = bytearray(8 * 1024**3)\n")
    notebooks = {"right": right, "partial": partial, "memory_bomb": bomb}
    subs = samples.write_class(tmp_path / "submissions", LESSON, notebooks)
    runs = {}
    for gpu in (False, True):
        opts = GradeOptions(
            subs, tmp_path / f"out-gpu-{gpu}", [LESSON], jobs=2, gpu=gpu, progress=False
        )
        runs[gpu] = {
            r["student"]: (r["status"], {t["exercise"]: t["score"] for t in r["tests"]})
            for r in grade(opts)
        }
    assert runs[True] == runs[False]
    assert runs[False]["memory_bomb"][0] == "memory"
    assert runs[False]["right"][0] == "ok"
    assert sum(runs[False]["right"][1].values()) > sum(runs[False]["partial"][1].values())
