"""torch.compile's precompiled C++ header, built once per machine and shown to every kernel.

On the CPU, inductor compiles each generated kernel against one large prefix header
(``torch/csrc/inductor/cpp_prefix.h``), which it first precompiles into a ``.gch`` of about
150 MB under ``$TMPDIR/torchinductor_$USER/precompiled_headers``. A sandbox's ``/tmp`` is
new for every submission, so every kernel that compiles built it again: about 11 s of
10_scaling's gelu_mix cell (15 s in a sandbox, 4 s with the header present) and 150 MB of
its ``--disk``.

The header depends only on torch's own headers, the compiler and its flags, never on a
notebook. Its file name is a hash of those, and the flags name torch's and Python's include
folders by their absolute paths: the same torch installed in another folder (a second clone,
a new virtual environment) looks for another name. So the grader builds it once per machine
and torch installation (version, folders, compiler), outside any sandbox,
and binds its files read-only into each sandbox where inductor looks for them; the folder
around them stays writable (inductor's lock files, a header for other flags). A kernel whose
flags differ (another instruction set, a notebook's own compiler settings) finds no file of
that name and builds its own, as before: the seed saves time, it never decides anything.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from autograder import course

# Building the seed costs about 25 s once (a Python, torch and inductor start, then the
# header); a kernel that builds the header itself, about 11 s. A run builds it from its third
# kernel that compiles on: never for a class of one (a Gradescope container), always for a class.
WORTH_IT_FROM = 3
# Where inductor looks, inside the sandbox: tempfile.gettempdir() (TMPDIR, the sandbox's /tmp)
# and getpass.getuser() (LOGNAME, "student"), as sandbox.allowed_env sets them.
KERNEL_USER = "student"
BUILD_TIMEOUT_S = 300
DONE = "complete"  # written last: a half-built seed (an interrupted build) is never used
FOR = "installation.txt"  # installation(), one part a line: lets a later build prune the seed

# Compiles a trivial function on the CPU: inductor precompiles its prefix header on the way.
# vec_isa_ok as the lessons set it, so the header's flags are the lessons' own.
BUILD = """\
import torch
import torch._inductor.config as inductor_config
inductor_config.cpp.vec_isa_ok = True
torch.compile(lambda x: x * torch.sigmoid(x) + 1)(torch.ones(8))
"""


def seed_root() -> Path:
    """This machine's seed for this torch installation: in the grader's cache folder, outside
    any sandbox."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "pytorch-course" / f"inductor-headers-{installation_key()}"


@functools.cache
def installation() -> tuple[str, ...]:
    """Everything the header's name depends on besides the flags: torch's version, where torch
    and Python's headers are (the flags name them by absolute path), the compiler's version."""
    spec = importlib.util.find_spec("torch")  # finds the folder without importing torch
    return (
        importlib.metadata.version("torch"),  # not `import torch`: seconds
        os.path.dirname(spec.origin) if spec and spec.origin else "",  # as torch.__file__ has it
        sysconfig.get_paths()["include"],
        _compiler_version(),
    )


def installation_key() -> str:
    """``<torch version>-<hash of installation()>``. Keyed on the version alone, a seed built
    for one clone was bound, under a name no kernel asks for, into another clone's sandboxes,
    whose kernels then built their own 150 MB header in /tmp again."""
    parts = installation()
    return f"{parts[0]}-{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:12]}"


def _compiler_version() -> str:
    """The first line of the C++ compiler's --version, as inductor picks the compiler (CXX,
    else g++); empty where there is none (then no seed can be built anyway)."""
    compiler = os.environ.get("CXX") or "g++"
    try:
        done = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return (done.stdout.splitlines() or [""])[0]


def header_dir(root: Path) -> Path:
    return root / f"torchinductor_{KERNEL_USER}" / "precompiled_headers"


def lock_path(root: Path) -> Path:
    """Held while the seed is built; beside it, so removing the seed's folder cannot race it."""
    return root.parent / f"{root.name}.lock"


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
            with open(lock_path(root), "w") as lock:
                import fcntl  # POSIX only: imported here so Windows can import this module

                fcntl.flock(lock, fcntl.LOCK_EX)
                if not seed_files(root):
                    _build(root)
        return seed_files(root)
    except OSError:  # no writable cache folder: kernels build their own header, as before
        return []


def _build(root: Path) -> None:
    shutil.rmtree(header_dir(root).parent, ignore_errors=True)
    _prune_seeds_of_removed_installations(root.parent)
    (root / FOR).write_text("\n".join(installation()) + "\n")
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


def _prune_seeds_of_removed_installations(cache: Path) -> None:
    """Remove the seeds (150 MB each) of torch installations that are gone: a deleted clone
    or virtual environment. Seeds of installations still there, and of ones that do not say
    which they are for, are left alone."""
    for other in cache.glob("inductor-headers-*"):
        try:
            torch_dir = (other / FOR).read_text().splitlines()[1]
        except (OSError, IndexError):
            continue
        if torch_dir and not Path(torch_dir).exists():
            shutil.rmtree(other, ignore_errors=True)
            lock_path(other).unlink(missing_ok=True)


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
