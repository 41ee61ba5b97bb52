"""The bubblewrap sandbox a student's kernel runs in.

Inside, nothing of the machine's file system is visible unless listed: the system folders
(``/usr``, ``/etc``, ``/sys``...), Python and ``tutorial_lib``, all read-only; one writable
scratch folder holding only the student's notebook; a short writable folder for the
kernel's sockets. So the course repository, the submissions, the grader's output, other
checkouts of the course, home folders and /tmp simply do not exist in there. No network;
no capabilities; an unprivileged user even when the grader is root; a memory limit
(``memory_limit``) so a memory bomb fails inside its cell.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

from autograder import course

# What a kernel may see of the machine, read-only. Anything else (/work, /opt, /home, /root,
# /tmp, /srv, /mnt...) is absent: default deny, so a copy of the course elsewhere on the
# machine cannot leak the hidden checks.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/sys")
NOBODY = "65534"
SHM_BYTES = 512 * 1024 * 1024


def available() -> bool:
    """True when bubblewrap is installed."""
    return shutil.which("bwrap") is not None


def memory_limit(gpu: bool) -> str:
    """The ``prlimit`` option that caps a kernel's memory.

    On the CPU, the address space (``--as``): it counts every mapping, shared ones too.
    CUDA reserves far more address space than it uses (a mapping of the GPU's and the host's
    memory), so under an address-space cap of a few GB it fails to start; with a GPU the cap
    is on private writable memory (``--data``), which holds tensors, Python objects and
    arrays alike but not shared mappings.
    """
    return "--data" if gpu else "--as"


def gpu_device_nodes() -> list[str]:
    """The NVIDIA device nodes a CUDA kernel needs (``/dev/nvidia0``, ``/dev/nvidiactl``...)."""
    return sorted(str(p) for p in Path("/dev").glob("nvidia*"))


def _under_bound(path: Path) -> bool:
    """True when ``path`` lies inside a folder the sandbox shows (so it must be covered)."""
    resolved = path.resolve()
    shown = [Path(p).resolve() for p in SYSTEM_PATHS if os.path.exists(p)] + _python_paths()
    return any(resolved == s or s in resolved.parents for s in shown)


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
    argv = ["prlimit", f"{memory_limit(gpu)}={memory_mb * 1024 * 1024}", "--", "bwrap"]
    for path in SYSTEM_PATHS:
        if os.path.islink(path):  # merged /usr: /lib -> usr/lib
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += ["--proc", "/proc"]
    argv += ["--dev", "/dev"]  # a minimal /dev: null, zero, random, tty...
    if gpu:  # and the GPU's device nodes, nothing else of the machine's /dev
        for node in gpu_device_nodes():
            argv += ["--dev-bind", node, node]
    # A private, writable /dev/shm: DataLoader workers pass batches through shared memory
    # (without it a lesson's num_workers=2 demo hangs); private, so kernels cannot meet there.
    # Its size is capped: a tmpfs holds memory that the address-space limit does not count.
    argv += ["--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    # Found without importing it: importing tutorial_lib would import torch in the grader.
    tutorial_lib_dir = Path(importlib.util.find_spec("tutorial_lib").origin).resolve().parent
    for path in [*_python_paths(), tutorial_lib_dir]:
        argv += ["--ro-bind", str(path), str(path)]
    # Folders that must stay unseen even if they sit under a path bound above: covered by
    # an empty tmpfs, made read-only once the writable folders are bound.
    covered = [str(p) for p in [course.ROOT, *hide] if Path(p).exists() and _under_bound(Path(p))]
    for path in covered:
        argv += ["--tmpfs", path]
    argv += ["--bind", str(scratch), str(scratch), "--chdir", str(scratch)]
    if sockets is not None:
        argv += ["--bind", str(sockets), str(sockets)]
    for path in covered:
        argv += ["--remount-ro", path]
    # bwrap's new root is a tmpfs: read-only, or a student could fill memory through it.
    argv += ["--remount-ro", "/"]
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
