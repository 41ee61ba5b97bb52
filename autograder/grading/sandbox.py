"""The bubblewrap sandbox a student's kernel runs in.

Inside: the whole file system read-only, with the course repository, the submissions, the
grader's output, /tmp, /root and /home hidden under empty read-only tmpfs; Python and
``tutorial_lib`` bound back read-only; one writable scratch folder holding only the
student's notebook; no network; no capabilities; an unprivileged user even when the grader
is root; an address-space limit so a memory bomb fails inside its cell.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

from autograder import course

HIDDEN_ROOTS = ("/tmp", "/root", "/home", "/var/tmp", "/srv", "/mnt")
NOBODY = "65534"


def available() -> bool:
    """True when bubblewrap is installed."""
    return shutil.which("bwrap") is not None


def _python_paths() -> list[Path]:
    """What the kernel's interpreter needs to run: the venv and the base installation."""
    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.prefix)}
    return sorted(paths)


def kernel_argv(
    scratch: Path, hide: list[Path], memory_mb: int, gpu: bool = False, sockets: Path | None = None
) -> list[str]:
    """The argv (with jupyter's ``{connection_file}`` placeholder) of a sandboxed ipykernel.

    ``scratch`` is the kernel's writable working folder; ``sockets`` a second writable
    folder with a short path for the kernel's Unix sockets (a socket path must fit in
    about 100 bytes, which a scratch folder deep in the output tree may not).
    """
    hidden = [Path(p) for p in HIDDEN_ROOTS] + [course.ROOT, *hide]
    argv = ["prlimit", f"--as={memory_mb * 1024 * 1024}", "--", "bwrap"]
    argv += ["--ro-bind", "/", "/", "--proc", "/proc"]
    argv += ["--dev-bind", "/dev", "/dev"] if gpu else ["--dev", "/dev"]
    # A private, writable /dev/shm: DataLoader workers pass batches through shared memory
    # (without it a lesson's num_workers=2 demo hangs); private, so kernels cannot meet there.
    argv += ["--perms", "1777", "--tmpfs", "/dev/shm"]
    for path in hidden:
        if Path(path).exists():
            argv += ["--tmpfs", str(path)]
    # Found without importing it: importing tutorial_lib would import torch in the grader.
    tutorial_lib_dir = Path(importlib.util.find_spec("tutorial_lib").origin).resolve().parent
    keep = [*_python_paths(), tutorial_lib_dir]
    for path in keep:
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--bind", str(scratch), str(scratch), "--chdir", str(scratch)]
    if sockets is not None:
        argv += ["--bind", str(sockets), str(sockets)]
    for path in hidden:  # the empty tmpfs layers stay read-only once everything is bound
        if Path(path).exists():
            argv += ["--remount-ro", str(path)]
    argv += ["--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-user"]
    argv += ["--uid", NOBODY, "--gid", NOBODY, "--cap-drop", "ALL"]
    argv += ["--die-with-parent", "--new-session"]
    env = {
        "HOME": str(scratch),
        "USER": "nobody",  # not the grader's name: torch builds cache paths from it
        "LOGNAME": "nobody",
        # /tmp is read-only in here. Short, because multiprocessing puts Unix sockets there
        # (DataLoader workers pass tensors through them) and a socket path must fit in 108
        # bytes: deep in OUT, a scratch path did not, and the workers hung.
        "TMPDIR": str(sockets if sockets is not None else scratch / ".tmp"),
        "XDG_CACHE_HOME": str(scratch / ".cache"),
        "TORCHINDUCTOR_CACHE_DIR": str(scratch / ".cache" / "torchinductor"),
        "MPLCONFIGDIR": str(scratch / ".matplotlib"),
        "IPYTHONDIR": str(scratch / ".ipython"),
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",  # glibc reserves address space per thread arena
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    for key, value in env.items():
        argv += ["--setenv", key, value]
    argv += ["--", sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    return argv
