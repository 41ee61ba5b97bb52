"""One control group per sandbox: limits on all of a submission's processes together.

A per-process limit (``prlimit``) lets a submission that starts three children of 2 GiB
each use 6 GiB under a 4 GiB cap, and lets 250 busy processes take the machine's CPU from
the job beside it. A control group counts every process of the sandbox as one:

- ``memory``: all their memory, shared memory and the sandbox's tmpfs pages included; past
  it the kernel's out-of-memory killer ends a process of that group only;
- ``pids``: processes and threads together;
- ``cpu``: an equal share of the CPU per sandbox, however many processes it runs, so a
  busy submission cannot make another one's cells time out.

We create the groups ourselves under the grader's own group: the grader runs as root in
CI and in containers, where that is allowed (cgroup v1 hierarchies, or a cgroup v2 tree
whose controllers can be enabled below the grader). systemd transient scopes would need a
running systemd and its D-Bus, which containers and CI machines rarely have. Where no
group can be made, ``unavailable()`` says why and grading falls back, saying so, to the
per-process limits alone.
"""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import signal
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "pids", "cpu")
PARENT = "autograder"  # below the grader's own group: one folder for all of its sandboxes
# How long removing a group waits for its last process to finish exiting (Group.remove).
REMOVE_TIMEOUT_S = 30.0


def _v1_mounts() -> dict[str, Path]:
    """Controller name -> where its cgroup v1 hierarchy is mounted."""
    mounts = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            _, where, kind, options, *_ = line.split()
            if kind == "cgroup":
                for option in options.split(","):
                    if option in CONTROLLERS:
                        mounts[option] = Path(where)
    return mounts


def _own_paths() -> dict[str, str]:
    """Hierarchy (controller name, or "" for cgroup v2) -> this process's group in it."""
    paths = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        for name in names.split(",") if names else [""]:
            paths[name] = path
    return paths


def _parents() -> dict[str, Path]:
    """Controller -> the folder in which sandboxes' groups are made (created if missing).

    Raises OSError where that cannot be done.
    """
    own = _own_paths()
    mounts = _v1_mounts()
    if all(c in mounts for c in CONTROLLERS):  # cgroup v1 (or hybrid): one tree per controller
        parents = {c: mounts[c] / own.get(c, "/").lstrip("/") / PARENT for c in CONTROLLERS}
        for folder in parents.values():
            folder.mkdir(exist_ok=True)
        return parents
    # cgroup v2: one tree. A group with processes may not also have groups with
    # controllers below it, so the sandboxes' parent is a sibling of the grader's group.
    here = ROOT / own.get("", "/").lstrip("/")
    available = (here.parent / "cgroup.controllers").read_text().split()
    missing = [c for c in CONTROLLERS if c not in available]
    if missing:
        raise OSError(f"cgroup v2 controllers not delegated here: {', '.join(missing)}")
    parent = here.parent / f"{PARENT}-{here.name}"
    parent.mkdir(exist_ok=True)
    (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in CONTROLLERS))
    return {c: parent for c in CONTROLLERS}


@functools.cache
def unavailable() -> str | None:
    """None when sandboxes get groups of their own here; otherwise why not, in words."""
    try:
        Group.create(f"probe-{os.getpid()}", memory_bytes=1 << 30, processes=8).remove()
    except OSError as err:
        return f"no control group can be made for a sandbox here ({err})"
    return None


class Group:
    """A sandbox's group: one folder per controller (v1), or one folder (v2)."""

    def __init__(self, folders: list[Path]):
        self.folders = folders

    @classmethod
    def create(cls, name: str, memory_bytes: int, processes: int) -> Group:
        parents = _parents()
        folders = sorted({parents[c] / name for c in CONTROLLERS})
        for folder in folders:
            folder.mkdir(exist_ok=True)
        group = cls(folders)
        for setting, value in _settings(memory_bytes, processes).items():
            group._write(setting, value)
        return group

    def _file(self, name: str) -> Path | None:
        for folder in self.folders:
            if (folder / name).exists():
                return folder / name
        return None

    def _write(self, name: str, value: str) -> None:
        path = self._file(name)
        if path is not None:
            path.write_text(value)

    def procs_files(self) -> list[str]:
        """Writing a process id into each of these moves that process into the group."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def join(self) -> None:
        """Move the calling process into the group (its children are born there).

        Safe between fork and exec (``preexec_fn``): system calls only, no imports.
        """
        for path in self.procs_files():
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    def processes(self) -> list[int]:
        pids: set[int] = set()
        for path in self.procs_files():
            with contextlib.suppress(OSError):
                pids |= {int(p) for p in Path(path).read_text().split()}
        return sorted(pids)

    def out_of_memory_kills(self) -> int:
        """How many processes of the group the kernel's OOM killer has ended so far."""
        for name, key in (("memory.events", "oom_kill"), ("memory.oom_control", "oom_kill")):
            path = self._file(name)
            if path is None:
                continue
            with contextlib.suppress(OSError, ValueError):
                for line in path.read_text().splitlines():
                    field, _, value = line.partition(" ")
                    if field == key:
                        return int(value)
        return 0

    def kill_all(self, timeout: float = 10.0) -> bool:
        """End every process in the group; True once none is left."""
        kill = self._file("cgroup.kill")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pids = self.processes()
            if not pids:
                return True
            if kill is not None:
                with contextlib.suppress(OSError):
                    kill.write_text("1")
            _kill(pids)
            time.sleep(0.02)
        return not self.processes()

    def remove(self, timeout: float = REMOVE_TIMEOUT_S) -> bool:
        """Delete the group's folders; True once they are gone.

        A killed process stays in its group until the kernel has finished its exit (freeing
        gigabytes of memory on a busy machine takes seconds), and the folder cannot be
        deleted before. One second of retries once left a group behind in CI, so this waits
        for as long as ``timeout``, ending anything still listed in the group meanwhile.
        """
        deadline = time.monotonic() + timeout
        pause = 0.02
        while True:
            left = []
            for folder in self.folders:
                try:
                    folder.rmdir()
                except FileNotFoundError:
                    pass
                except OSError:  # EBUSY: a process has not finished leaving it
                    left.append(folder)
            self.folders = left
            if not left or time.monotonic() >= deadline:
                return not left
            _kill(self.processes())
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def owned_name(prefix: str) -> str:
    """A group name no other group on this machine has, naming the process that owns it."""
    return f"{prefix}-{os.getpid()}-{secrets.token_hex(6)}"


def remove_orphans(prefix: str) -> list[str]:
    """Remove the empty ``owned_name(prefix)`` groups whose owner has died; return them.

    An owner killed hard (a grading worker ended by a signal, a Dask worker that was lost)
    never removes its kernels' groups: their processes die with the sandbox, their folders
    stay. A live owner's groups are never touched, so graders running side by side can
    each sweep; a group with a process in it stays too.
    """
    removed = []
    with contextlib.suppress(OSError):
        for parent in set(_parents().values()):
            for folder in parent.glob(f"{prefix}-*-*"):
                owner = folder.name.split("-")[-2]
                if not owner.isdigit() or Path("/proc", owner).exists():
                    continue
                with contextlib.suppress(OSError):  # EBUSY: not empty; gone: swept by another
                    folder.rmdir()
                    removed.append(str(folder))
    return removed


def _kill(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _settings(memory_bytes: int, processes: int) -> dict[str, str]:
    """Each control file (v1 and v2 names) -> its value; files absent here are skipped."""
    return {
        # v2
        "memory.max": str(memory_bytes),
        "memory.swap.max": "0",  # the limit must not become swapping
        "pids.max": str(processes),
        "cpu.weight": "100",  # the default: every sandbox the same share
        # v1
        "memory.limit_in_bytes": str(memory_bytes),
        "memory.memsw.limit_in_bytes": str(memory_bytes),  # after memory.limit_in_bytes
        "cpu.shares": "1024",
    }
