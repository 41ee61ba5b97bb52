"""torch.compile's precompiled C++ header, built once per machine and shown to every kernel.

On the CPU, inductor compiles each generated kernel against one large prefix header
(``torch/csrc/inductor/cpp_prefix.h``), which it first precompiles into a ``.gch`` of about
150 MB under ``$TMPDIR/torchinductor_$USER/precompiled_headers``. A sandbox's ``/tmp`` is
new for every submission, so every kernel that compiles built it again: about 11 s of
10_scaling's gelu_mix cell (15 s in a sandbox, 4 s with the header present) and 150 MB of
its ``--disk``.

The header depends only on torch's own headers, the compiler and its flags, never on a
notebook. So the grader builds it once per machine and torch version, outside any sandbox,
and binds its files read-only into each sandbox where inductor looks for them; the folder
around them stays writable (inductor's lock files, a header for other flags). A kernel whose
flags differ (another instruction set, a notebook's own compiler settings) finds no file of
that name and builds its own, as before: the seed saves time, it never decides anything.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder import course

# Building the seed costs about 25 s once (a Python, torch and inductor start, then the
# header); a kernel that builds the header itself, about 11 s. A run builds it from its third
# kernel that compiles on: never for a class of one (a Gradescope container), always for a class.
WORTH_IT_FROM = 3
# Where inductor looks, inside the sandbox: tempfile.gettempdir() (TMPDIR, the sandbox's /tmp)
# and getpass.getuser() (LOGNAME, "student"), as sandbox.kernel_env sets them.
KERNEL_USER = "student"
BUILD_TIMEOUT_S = 300
DONE = "complete"  # written last: a half-built seed (an interrupted build) is never used

# Compiles a trivial function on the CPU: inductor precompiles its prefix header on the way.
# vec_isa_ok as the lessons set it, so the header's flags are the lessons' own.
BUILD = """\
import torch
import torch._inductor.config as inductor_config
inductor_config.cpp.vec_isa_ok = True
torch.compile(lambda x: x * torch.sigmoid(x) + 1)(torch.ones(8))
"""


def seed_root() -> Path:
    """This machine's seed for this torch: in the grader's cache folder, outside any sandbox."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    torch_version = importlib.metadata.version("torch")  # not `import torch`: seconds
    return cache / "pytorch-course" / f"inductor-headers-{torch_version}"


def header_dir(root: Path) -> Path:
    return root / f"torchinductor_{KERNEL_USER}" / "precompiled_headers"


def seed_files(root: Path | None = None) -> list[Path]:
    """The finished seed's header files (``.h`` and ``.gch``), or none if it is not built."""
    root = seed_root() if root is None else root
    if not (root / DONE).is_file():
        return []
    try:
        return sorted(p for p in header_dir(root).iterdir() if p.is_file())
    except OSError:  # removed since it was built
        return []


@functools.cache
def compiles(lesson: str) -> bool:
    """True when the lesson's notebook calls torch.compile (so its kernels need the header)."""
    return "torch.compile(" in course.solution_notebook(lesson).read_text()


def ensure_built_for(lessons: list[str]) -> list[Path]:
    """The seed, built first if these kernels (a lesson per submission) make it worth it."""
    if sum(compiles(lesson) for lesson in lessons) >= WORTH_IT_FROM:
        return ensure_built()
    return seed_files()


def ensure_built(root: Path | None = None) -> list[Path]:
    """Build the seed if this machine has none for this torch (once: concurrent graders wait
    for the first); return its files, or none where it cannot be built (no C++ compiler)."""
    root = seed_root() if root is None else root
    try:
        if not seed_files(root):
            root.mkdir(parents=True, exist_ok=True)
            with open(root.parent / f"{root.name}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not seed_files(root):
                    _build(root)
        return seed_files(root)
    except OSError:  # no writable cache folder: kernels build their own header, as before
        return []


def _build(root: Path) -> None:
    shutil.rmtree(header_dir(root).parent, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="inductor-seed-") as scratch:
        env = {
            **os.environ,
            "TMPDIR": str(root),  # the header goes to root/torchinductor_student/...
            "USER": KERNEL_USER,
            "LOGNAME": KERNEL_USER,
            "TORCHINDUCTOR_CACHE_DIR": scratch,  # the compiled function itself: thrown away
            "OMP_NUM_THREADS": "1",
        }
        with contextlib.suppress(subprocess.SubprocessError, OSError):
            done = subprocess.run(
                [sys.executable, "-c", BUILD],
                env=env,
                capture_output=True,
                timeout=BUILD_TIMEOUT_S,
            )
            if done.returncode == 0 and any(header_dir(root).glob("*.gch")):
                (root / DONE).write_text("")


def bwrap_args(files: list[Path], scratch: str) -> list[str]:
    """bubblewrap options that show the seed's files, read-only, in a writable folder where
    inductor looks for them inside the sandbox (``scratch`` is the sandbox's /tmp)."""
    if not files:
        return []
    inside = f"{scratch}/torchinductor_{KERNEL_USER}/precompiled_headers"
    argv = ["--perms", "1777", "--dir", f"{scratch}/torchinductor_{KERNEL_USER}"]
    argv += ["--perms", "1777", "--dir", inside]
    for path in files:
        argv += ["--ro-bind", str(path), f"{inside}/{path.name}"]
    return argv
