"""A Colab-like Python: a fresh virtual environment with only what Colab ships, and a kernel in it.

The course's own helpers are not preinstalled: the notebooks' setup cell installs them, from
a wheel of this checkout (``COURSE_PIP_SOURCE``) instead of the Git tag it uses on Colab.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder import course

# What Colab ships that the course uses (numpy, matplotlib, scikit-learn, tqdm...), at the
# tested versions from constraints.txt. Nothing of Jupyter's server side, nbgrader or nbformat.
COLAB_PACKAGES = [
    "torch",
    "torchvision",
    "numpy",
    "matplotlib",
    "scikit-learn",
    "tqdm",
    "tensorboard",  # 06_training logs a run with SummaryWriter
    "safetensors",  # 08_deployment (Colab ships it; the lesson's first cell installs it elsewhere)
    "ipykernel",
    # Not on Colab: 08_deployment's first cell installs these when missing. They are put in
    # the venv beforehand so the test downloads nothing while notebooks run.
    "onnx",
    "onnxscript",
    "onnxruntime",
    "torchao",
]
# Never installed there: the grader's side of the course.
ABSENT_MODULES = ["nbgrader", "jupyterlab", "autograder", "nbclient", "nbformat"]
DIST_NAME = "pytorch-course"  # the project's distribution, which carries tutorial_lib
KERNEL_NAME = "colab-like"
# Where the fresh environment is kept between runs (gitignored; `make clean` removes it).
# CLIENTS_VENV_DIR=<folder> moves it; CLIENTS_VENV_CACHE=0 builds a throwaway one each run.
CACHE_ROOT = Path(os.environ.get("CLIENTS_VENV_DIR", course.ROOT / "build" / "colab-like"))


def _pins() -> list[str]:
    """``name==version`` for the Colab packages, from constraints.txt (the tested set)."""
    pins = {}
    for line in (course.ROOT / "constraints.txt").read_text().splitlines():
        name, _, version = line.strip().partition("==")
        if version:
            pins[name.lower()] = f"{name}=={version}"
    return [pins.get(name, name) for name in COLAB_PACKAGES]


def _pip(python: Path, *args: str, timeout: float = 1800) -> str:
    result = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tempfile.gettempdir(),  # never the checkout: its egg-info would count as installed
    )
    if result.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def python_of(venv: Path) -> Path:
    return venv.absolute() / "bin" / "python"


def create_venv(venv: Path) -> None:
    """A new venv (no system site-packages) with only the Colab packages, from scratch."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True, timeout=300)
    _pip(python_of(venv), "install", "--quiet", "--no-input", *_pins())


def colab_venv() -> tuple[Path, bool, bool]:
    """The Colab-like venv, cached under ``CACHE_ROOT`` by the pinned versions.

    Returns (path, reused from the cache, throwaway: the caller deletes it).
    """
    key_text = json.dumps([sys.version, _pins()])
    key = hashlib.sha256(key_text.encode()).hexdigest()[:12]
    if os.environ.get("CLIENTS_VENV_CACHE", "1") == "0":
        venv = Path(tempfile.mkdtemp(prefix="colab-like-")) / "venv"
        create_venv(venv)
        return venv, False, True
    venv = CACHE_ROOT / key
    if (venv / ".complete").is_file():
        return venv, True, False
    shutil.rmtree(CACHE_ROOT, ignore_errors=True)  # older keys: 6 GB each
    # Built in a private folder outside the checkout, then moved in: a pip install into the
    # checkout's build/ folder was seen to lose files mid-install under a parallel test run.
    building = Path(tempfile.mkdtemp(prefix="colab-like-build-")) / "venv"
    try:
        create_venv(building)
    except RuntimeError:  # one retry from scratch, as a person would
        create_venv(building)
    (building / ".complete").write_text(key_text)
    CACHE_ROOT.mkdir(parents=True, exist_ok=True)
    shutil.move(str(building), str(venv))  # `python -m` use is relocatable
    shutil.rmtree(building.parent, ignore_errors=True)
    return venv, False, False


def source_tree(dest: Path) -> Path:
    """A copy of this checkout's files (tracked and new, not ignored): what a tag would hold."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=course.ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = course.ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def build_wheel(dest: Path) -> Path:
    """A wheel of this project, built from a clean copy of the source (no stale build/)."""
    src = source_tree(Path(tempfile.mkdtemp(prefix="course-src-")))
    try:
        _pip(Path(sys.executable), "wheel", "--quiet", "--no-deps", "--no-build-isolation",
             "-w", str(dest), str(src))  # fmt: skip
    finally:
        shutil.rmtree(src, ignore_errors=True)
    (wheel,) = dest.glob("pytorch_course-*.whl")
    return wheel


SNAPSHOT = """
import importlib.metadata as md, importlib.util, json
dists = {d.metadata["Name"].lower(): d.version for d in md.distributions()}
print(json.dumps({"dists": dists, "torch_file": importlib.util.find_spec("torch").origin}))
"""


def snapshot(venv: Path) -> tuple[dict[str, str], tuple[str, str]]:
    """What is installed in the venv (name -> version), and torch's (version, file)."""
    out = subprocess.run(
        [str(python_of(venv)), "-I", "-c", SNAPSHOT],  # -I: not this checkout's egg-info
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=tempfile.gettempdir(),
    ).stdout
    data = json.loads(out)
    dists = {name.replace("_", "-"): version for name, version in data["dists"].items()}
    return dists, (dists["torch"], data["torch_file"])


def uninstall_course(venv: Path) -> None:
    """Remove the course wheel, so the next setup cell has to install it again."""
    if DIST_NAME in snapshot(venv)[0]:
        _pip(python_of(venv), "uninstall", "--yes", "--quiet", DIST_NAME)


def kernel_dir(venv: Path, dest: Path) -> Path:
    """A kernelspec folder whose ``colab-like`` kernel runs in ``venv``."""
    spec = dest / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    argv = [str(python_of(venv)), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Colab-like", "language": "python"})
    )
    return dest


def kernel_environment(venv: Path, wheel: Path) -> dict[str, str]:
    """The kernel's environment: the venv first on PATH, nothing pointing back at .venv."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "VIRTUAL_ENV", "MPLBACKEND", "JUPYTER_PATH", "PYTHONHOME"}
    }
    outer_bin = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != outer_bin]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["VIRTUAL_ENV"] = str(venv)
    env["COURSE_PIP_SOURCE"] = str(wheel)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("MKL_NUM_THREADS", env["OMP_NUM_THREADS"])
    env["PYDEVD_DISABLE_FILE_VALIDATION"] = "1"
    return env
