"""The bubblewrap sandbox a student's kernel runs in: its own processes, disk and files.

Inside, nothing of the machine's file system is visible unless listed: the system folders
(``/usr``, ``/etc``, ``/sys``...), Python and ``tutorial_lib``, all read-only. The only
writable place is ``/tmp`` (the kernel's working folder, home and temporary folder), a
tmpfs of ``disk_mb``: a submission that writes without end gets "No space left on device"
in its cell, and whatever it wrote vanishes with the sandbox. The graded notebook itself
stays outside; the kernel gets no copy of it.

The kernel has its own PID namespace: ``/proc`` lists only the sandbox's processes and it
can signal nothing outside. Its first process is bubblewrap's init; when the kernel exits
or is killed, that init exits and the kernel (the operating system's) kills every process
left in the namespace, detached ones included (``setsid``, double forks). A process limit
(``RLIMIT_NPROC``) caps a fork bomb. No network; no capabilities; an unprivileged user.

Two ways to get an unprivileged user, depending on who runs the grader:

- **as root** (CI, containers): bubblewrap sets up the namespaces as root, then the kernel
  runs as a numeric user of its own (``student_uid``), new for every kernel: nothing tied
  to a user (its keyring, its process count) carries over from one submission to the next,
  and one job's fork bomb cannot starve the other job.
- **as anyone else**: a user namespace (``--unshare-user``), as bubblewrap usually works;
  the limit then counts the processes of that namespace. Machines that forbid
  unprivileged user namespaces cannot run it; ``check`` says so before grading starts.

The grader talks to the kernel over Unix sockets that the kernel creates in its own /tmp;
from outside they are reached through ``/proc/<first process>/root`` (the provisioner's
``outside_path``), so the kernel needs no writable folder of the machine's at all.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import secrets
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder import course
from autograder.grading import inductor_headers

# What a kernel may see of the machine, read-only. Anything else (/work, /opt, /home, /root,
# /tmp, /srv, /mnt...) is absent: default deny, so a copy of the course elsewhere on the
# machine cannot leak the hidden checks.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/sys")
NOBODY = "65534"
SHM_BYTES = 512 * 1024 * 1024
SCRATCH = "/tmp"  # inside the sandbox: the kernel's only writable folder (a tmpfs)
KERNEL_IP = f"{SCRATCH}/.kernel"  # the kernel's Unix sockets: /tmp/.kernel-<port>
DISK_MB = 1024  # the tmpfs's size: checkpoints, exports and caches of every lesson fit
# Memory of a kernel and everything it starts (--memory): torch, a lesson's models and
# DataLoader workers fit with room to spare.
MEMORY_MB = 6144
# Tasks (processes and threads) per submission. The lessons' heaviest cells (DataLoader
# workers, torchrun's two processes with their threads) use about 70; a fork bomb stops here.
PROCESSES = 256
# As root, each kernel runs as a user of its own, drawn from [UID_BASE, UID_BASE + UID_SPAN):
# far above the users a system hands out (rootless containers' ranges included), below the
# 32-bit limit.
UID_BASE = 3_000_000_000
UID_SPAN = 1_000_000_000
BWRAP = "bwrap"


def available() -> bool:
    """True when bubblewrap is installed."""
    return shutil.which(BWRAP) is not None


def as_root() -> bool:
    """True when the grader runs as root: the kernel then gets a user of its own."""
    return os.geteuid() == 0


def student_uid() -> int:
    """A user for one kernel of a root grader: drawn afresh for every kernel, from a range of
    about a billion ids that no system hands out, so no two kernels of a run share one."""
    return UID_BASE + secrets.randbelow(UID_SPAN)


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


# The keyring system calls (add_key, request_key, keyctl) per architecture, with its seccomp
# audit number. Inside the sandbox they fail with ENOSYS, as on a system built without keys:
# a key a kernel made would outlive it (Linux keeps a user's keyrings after its last process
# ends: /proc/key-users), and it could reach no key of the grader's anyway.
KEYRING_CALLS = {"x86_64": (0xC000003E, (248, 249, 250)), "aarch64": (0xC00000B7, (217, 218, 219))}


def keyring_filter() -> bytes | None:
    """A seccomp program (classic BPF, for bubblewrap's ``--seccomp``) that refuses the
    keyring system calls and allows everything else; None on an architecture not listed."""
    found = KEYRING_CALLS.get(platform.machine())
    if found is None:
        return None
    arch, calls = found
    load, equal, at_least, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ/JGE, BPF_RET
    allow, enosys = 0x7FFF0000, 0x00050000 | 38  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO|ENOSYS
    refused = [(equal, number) for number in calls]
    if platform.machine() == "x86_64":  # the x32 ABI's numbers (bit 30 set): refused too
        refused.insert(0, (at_least, 0x40000000))
    n = len(refused)
    program = [(load, 0, 0, 4), (equal, 1, 0, arch), (ret, 0, 0, allow), (load, 0, 0, 0)]
    program += [(code, n - i, 0, k) for i, (code, k) in enumerate(refused)]  # -> the last
    program += [(ret, 0, 0, allow), (ret, 0, 0, enosys)]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def gpu_visible() -> bool:
    """True when the machine has an NVIDIA GPU (found without importing torch here)."""
    return shutil.which("nvidia-smi") is not None and Path("/dev/nvidia0").exists()


def _tutorial_lib_dir() -> Path:
    """Found without importing it: importing tutorial_lib would import torch in the grader."""
    return Path(importlib.util.find_spec("tutorial_lib").origin).resolve().parent


def _under_bound(path: Path) -> bool:
    """True when ``path`` lies inside a folder the sandbox shows (so it must be covered)."""
    resolved = path.resolve()
    shown = [Path(p).resolve() for p in SYSTEM_PATHS if os.path.exists(p)] + _python_paths()
    return any(resolved == s or s in resolved.parents for s in shown)


def _python_paths() -> list[Path]:
    """What the kernel's interpreter needs to run: the venv and the base installation."""
    paths = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(), Path(sys.prefix)}
    return sorted(paths)


def _parent_folders(paths: list[Path]) -> list[str]:
    """Create, traversable by anyone, the folders above the bound paths that bwrap would
    otherwise create for root only (``/root/.pyenv/...`` above a pyenv Python)."""
    argv, made = [], {Path("/"), Path(SCRATCH)}
    given = [Path(p) for p in (*SYSTEM_PATHS, "/dev", "/proc")]  # mounted: nothing to create
    for path in paths:
        for parent in reversed(Path(path).parents):
            if parent in made or any(parent == g or g in parent.parents for g in given):
                continue
            made.add(parent)
            argv += ["--perms", "0755", "--dir", str(parent)]
    return argv


def _user_files(folder: Path, uid: int) -> list[str]:
    """``/etc/passwd`` and ``/etc/group`` with the kernel's own user in them, bound over
    the machine's: libraries that look the current user up (``pwd.getpwuid``) find it."""
    entries = {
        "passwd": f"student:x:{uid}:{uid}:student:{SCRATCH}:/usr/sbin/nologin\n",
        "group": f"student:x:{uid}:\n",
    }
    argv = []
    for name, line in entries.items():
        try:
            system = Path("/etc", name).read_text()
        except OSError:
            system = ""
        path = folder / name
        path.write_text(system.rstrip("\n") + "\n" + line if system else line)
        argv += ["--ro-bind", str(path), f"/etc/{name}"]
    return argv


# The kernel's environment is this list and nothing else (bubblewrap's --clearenv): the
# grader's own variables (tokens, a Dask nanny's MALLOC_TRIM_THRESHOLD_, which made
# 10_scaling's cells 2 to 4 s slower, paths of the instructor's machine) never reach a
# submission. These few pass through when the grader has them, each for a reason:
PASSED_THROUGH = (
    "LANG",  # the locale: text encodings of files the lessons write and read
    "LC_ALL",
    "TZ",  # timestamps in printed output
    "CUDA_VISIBLE_DEVICES",  # which GPUs a --gpu grader lends its kernels
    "CUDA_DEVICE_ORDER",
    "COURSE_LANG",  # the learner's language for tutorial_lib's messages
)


def allowed_env(tutorial_lib_dir: Path | None = None, scratch: str = SCRATCH) -> dict[str, str]:
    """The whole environment of a kernel (sandboxed, or run as a user of its own).

    ``scratch`` is its only writable folder: home, temporary files and caches all go there.
    """
    if tutorial_lib_dir is None:
        tutorial_lib_dir = _tutorial_lib_dir()
    env = {k: os.environ[k] for k in PASSED_THROUGH if k in os.environ}
    return {
        **env,
        # The venv's scripts first (torchrun), then the system's.
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": env.get("LANG", "C.UTF-8"),
        "HOME": scratch,
        "USER": "student",  # not the grader's name: torch builds cache paths from it
        "LOGNAME": "student",
        "TMPDIR": scratch,
        "XDG_CACHE_HOME": f"{scratch}/.cache",
        "TORCHINDUCTOR_CACHE_DIR": f"{scratch}/.cache/torchinductor",
        "MPLCONFIGDIR": f"{scratch}/.matplotlib",
        "IPYTHONDIR": f"{scratch}/.ipython",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",  # glibc reserves address space per thread arena
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        # The tutorial_lib the grader found, whatever the kernel would have inherited: a
        # grader run from another copy of the course (Gradescope's zip) grades with its own.
        "PYTHONPATH": str(tutorial_lib_dir.parent),
        # ipykernel sets this at start unless set; a preloaded matplotlib reads it on import.
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        # The kernel's parent is the namespace's init, pid 1, which never goes away:
        # ipykernel then polls no parent (with the grader's pid it would see pid 1 and
        # quit). --die-with-parent does that poller's job.
        "JPY_PARENT_PID": "1",
    }


def sandbox_argv(
    folder: Path,
    hide: list[Path],
    memory_mb: int,
    gpu: bool = False,
    disk_mb: int = DISK_MB,
    processes: int = PROCESSES,
    uid: int | None = None,
    info_fd: int | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The argv prefix that runs a command in the sandbox (append the command's argv).

    ``folder`` is the grader's own short folder for this kernel (its connection file): the
    kernel sees it read-only, at the same path. ``uid``: a root grader's user for this
    kernel (``student_uid()``, drawn when not given). ``info_fd``: a file descriptor on which
    bubblewrap reports the id of the sandbox's first process (its init). ``seccomp_fd``: one
    from which it reads ``keyring_filter()``.
    """
    argv = ["prlimit", f"{memory_limit(gpu)}={memory_mb * 1024 * 1024}", "--", BWRAP]
    if info_fd is not None:
        argv += ["--info-fd", str(info_fd)]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    for path in SYSTEM_PATHS:
        if os.path.islink(path):  # merged /usr: /lib -> usr/lib
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    root = as_root()
    if uid is None:
        uid = student_uid() if root else int(NOBODY)
    if root:
        argv += _user_files(folder, uid)
    argv += ["--proc", "/proc"]  # of the new PID namespace: the sandbox's processes only
    argv += ["--dev", "/dev"]  # a minimal /dev: null, zero, random, tty...
    if gpu:  # and the GPU's device nodes, nothing else of the machine's /dev
        for node in gpu_device_nodes():
            argv += ["--dev-bind", node, node]
    # A private, writable /dev/shm: DataLoader workers pass batches through shared memory
    # (without it a lesson's num_workers=2 demo hangs); private, so kernels cannot meet there.
    # Its size is capped: a tmpfs holds memory that the address-space limit does not count.
    argv += ["--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    # The only writable folder: working folder, home, temporary files, the kernel's sockets.
    argv += ["--perms", "1777", "--size", str(disk_mb * 1024 * 1024), "--tmpfs", SCRATCH]
    # torch.compile's precompiled header, built once per machine (inductor_headers.py).
    argv += inductor_headers.bwrap_args(inductor_headers.seed_files(), SCRATCH)
    tutorial_lib_dir = _tutorial_lib_dir()
    bound = [*_python_paths(), tutorial_lib_dir]
    argv += _parent_folders([*bound, folder])
    for path in bound:
        argv += ["--ro-bind", str(path), str(path)]
    # Folders that must stay unseen even if they sit under a path bound above: covered by
    # an empty tmpfs, made read-only once everything is bound.
    covered = [str(p) for p in [course.ROOT, *hide] if Path(p).exists() and _under_bound(Path(p))]
    for path in covered:
        argv += ["--tmpfs", path]
    argv += ["--ro-bind", str(folder), str(folder), "--chdir", SCRATCH]
    for path in covered:
        argv += ["--remount-ro", path]
    # bwrap's new root is a tmpfs: read-only, or a student could fill memory through it.
    argv += ["--remount-ro", "/"]
    argv += ["--unshare-pid"]
    argv += ["--unshare-net", "--unshare-ipc", "--unshare-uts"]
    argv += ["--unshare-cgroup-try", "--die-with-parent", "--new-session"]
    if not root:
        argv += ["--unshare-user", "--uid", NOBODY, "--gid", NOBODY, "--cap-drop", "ALL"]
    argv += ["--clearenv"]
    for key, value in allowed_env(tutorial_lib_dir).items():
        argv += ["--setenv", key, value]
    argv += ["--"]
    if root:  # namespaces set up as root; the kernel itself is an unprivileged user
        argv += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        argv += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    argv += ["prlimit", f"--nproc={processes}:{processes}", "--"]
    return argv


# What a kernel started ahead of its notebook (a spare, ``preprocessor``) imports before the
# notebook arrives: what every lesson's setup cell imports, the bulk of a kernel's start-up
# (torch alone is seconds), and torchvision, which 00_welcome's environment report, 05_data
# and 09_transfer import (1.5 s here, 70% of 00_welcome's own cells; it adds 0.3 GB to each
# kernel's address space, inside --memory). Only the modules are loaded; the notebook's
# namespace stays empty, and its own `import torch` finds the module ready.
PRELOAD = (
    "torch",
    "numpy",
    "matplotlib.pyplot",
    "tutorial_lib",
    "torchvision",
)


# ipykernel's options for every grading kernel. Not capturing C-level output (file
# descriptors 1 and 2 through a pipe and a thread): nothing graded needs it, and with it each
# process a kernel forks (DataLoader workers, a fork bomb) restarts that machinery, which
# under the process limit turned a refused fork into a hung cell. (ipykernel skips it by
# itself under pytest, so this also makes kernels in tests behave as in a class's grading.)
IPYKERNEL_OPTIONS = ("--IPKernelApp.capture_fd_output=False",)


def kernel_command() -> list[str]:
    """A grading kernel's own command (jupyter's ``{connection_file}`` placeholder in it),
    which the provisioner runs inside the sandbox."""
    return [
        sys.executable,
        "-m",
        "ipykernel_launcher",
        "-f",
        "{connection_file}",
        *IPYKERNEL_OPTIONS,
    ]


def split_options(argv: list[str]) -> tuple[list[str], list[str], list[str]]:
    """``argv`` (from ``sandbox_argv``) in three: up to bubblewrap itself, bubblewrap's
    options, and from the ``--`` that ends them on (the command). The provisioner passes the
    options through a file (``--args``): bubblewrap's command line is the one thing of the
    grader's a sandboxed process can read (``/proc/1/cmdline``, its init), and it would
    show every folder the grader hides, by name.
    """
    start = argv.index(BWRAP) + 1
    end = argv.index("--", start)
    return argv[:start], argv[start:end], argv[end:]


def unprivileged_argv(
    folder: Path, uid: int, memory_mb: int, gpu: bool = False, processes: int = PROCESSES
) -> list[str]:
    """The argv prefix of a kernel run without bubblewrap, where it cannot start, by a root
    grader: as a user of
    its own (``uid``), with no capability and no way to gain one, the allow-listed
    environment only, and ``folder`` (owned by ``uid``) as its home and temporary folder.

    Used in the platforms' containers (Gradescope, PrairieLearn); what it cannot hide (the
    machine's files readable by anyone) the platform route makes unreadable to ``uid``.
    """
    env = {**allowed_env(scratch=str(folder)), "JPY_PARENT_PID": str(os.getpid())}
    argv = ["env", "-i", *(f"{key}={value}" for key, value in env.items())]
    argv += ["prlimit", f"{memory_limit(gpu)}={memory_mb * 1024 * 1024}"]
    argv += [f"--nproc={processes}:{processes}", "--"]
    argv += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    argv += ["--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]
    return argv


def check(memory_mb: int, gpu: bool = False, disk_mb: int = DISK_MB) -> str | None:
    """Start the sandbox once with a trivial command: None if it works, else bwrap's words.

    Where it cannot start (no user namespaces for this user, an old bubblewrap), grading
    would have to run student code unconfined: the grade command stops instead.
    """
    with tempfile.TemporaryDirectory(prefix="gk-") as tmp:
        argv = [*sandbox_argv(Path(tmp), [], memory_mb, gpu, disk_mb), "true"]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as err:
            return str(err)
    if done.returncode == 0:
        return None
    return (done.stderr or done.stdout).strip() or f"exit status {done.returncode}"
