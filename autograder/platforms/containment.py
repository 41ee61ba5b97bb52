"""Where a platform's student code runs, and what it can reach there.

Gradescope and PrairieLearn start a container per submission and run the grader in it as
root. Student code must never run as root, nor beside what decides the grade. Before
grading, one of two containments is chosen, and the results say which:

- **bubblewrap**, where it can start: the kernel is sandboxed as on the class route.
- **an unprivileged user**, where it cannot (Docker's default seccomp profile refuses the
  user namespaces it needs) and the grader is root: the kernel runs as a numeric user of
  its own (``kernel_uid``), which owns no file here. While it runs, the course (its
  solutions and ``autograder/``, with the hidden checks and the mistake catalogue) and the
  platform's folders (the results, the submission) are owner-only, so that user can read
  none of them; only the Python environment and ``tutorial_lib`` stay readable. Every
  process of that user is ended (``end_processes``) before the results are written, so
  nothing the notebook left behind can rewrite them; then the modes are put back.

A grader that is not root and cannot start bubblewrap would run student code as itself,
able to write its own results: it refuses (the job fails, with the reason) instead.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autograder import course
from autograder.grading import sandbox
from autograder.grading.status import NOT_GRADABLE, Status
from autograder.platforms.single import GraderFailed, grade_or_fail, not_gradable, pick_notebook

BUBBLEWRAP = "bubblewrap"
UNPRIVILEGED_USER = "unprivileged user"

# The kernel's user: this plus the grader's process id. A number no system hands out, so it
# owns no file and no process before grading starts; just above the range the class route's
# sandboxed kernels draw from (sandbox.UID_BASE, UID_SPAN), so no grader on the same machine
# (the test suite's) ever ends another's kernels; below the 32-bit limit for any pid.
UID_BASE = sandbox.UID_BASE + sandbox.UID_SPAN
# How long the processes a notebook left get to die after SIGKILL before the job fails.
END_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Containment:
    kind: str  # BUBBLEWRAP or UNPRIVILEGED_USER
    uid: int | None = None  # the kernel's user, for UNPRIVILEGED_USER

    def grade_options(self) -> dict:
        """What ``single.grade_notebook`` needs to run the kernel this way."""
        if self.kind == BUBBLEWRAP:
            return {"sandboxed": True}
        return {"sandboxed": False, "run_as_uid": self.uid}

    def describe(self) -> str:
        """One sentence for the student and the instructor: where the code ran."""
        if self.kind == BUBBLEWRAP:
            return "Your notebook ran in a bubblewrap sandbox."
        return (
            f"Your notebook ran as an unprivileged user of its own (uid {self.uid}): "
            "bubblewrap cannot start in this container."
        )


def sandbox_starts() -> bool:
    """Whether bubblewrap is installed and can make its namespaces here (not in every container)."""
    if not sandbox.available():
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def kernel_uid() -> int:
    return UID_BASE + os.getpid()


def decide() -> Containment:
    """The containment this machine allows; ``GraderFailed`` where it allows none."""
    if sandbox_starts():
        return Containment(BUBBLEWRAP)
    if not sandbox.as_root():
        raise GraderFailed(
            f"bubblewrap cannot start here and the grader runs as user {os.geteuid()}, not "
            "root, so student code would run as the grader itself, able to rewrite its "
            "results: nothing was graded. Run the grader as root (as Gradescope's and "
            "PrairieLearn's containers do), or where bubblewrap can start"
        )
    if shutil.which("setpriv") is None:
        raise GraderFailed(
            "bubblewrap cannot start here, and setpriv (util-linux), which starts the kernel "
            "as an unprivileged user instead, is not installed: install util-linux"
        )
    return Containment(UNPRIVILEGED_USER, kernel_uid())


@contextlib.contextmanager
def contained(platform_root: Path) -> Iterator[Containment]:
    """Decide the containment and keep it for the grading inside the ``with`` block.

    With an unprivileged user: the secrets are owner-only from the start of the block until
    every process of that user has ended, which is before the block is left, whether the
    grading finished or failed.
    """
    how = decide()
    if how.kind == BUBBLEWRAP:
        yield how
        return
    (platform_root / "results").mkdir(mode=0o700, parents=True, exist_ok=True)
    end_processes(how.uid)  # also proves this machine lets root become that user
    with traversable(readable_paths()), owner_only(secrets(platform_root)):
        try:
            yield how
        finally:
            end_processes(how.uid)


def readable_paths() -> list[Path]:
    """What the kernel's user must still read: the Python it runs and ``tutorial_lib``."""
    return [
        Path(sys.prefix).resolve(),
        Path(sys.base_prefix).resolve(),
        sandbox._tutorial_lib_dir(),
    ]


def secrets(platform_root: Path) -> list[Path]:
    """Everything in the platform's folder and the course's that the kernel must not read.

    Each entry of those two folders, except what ``readable_paths`` needs and the folders
    on the way to it (their other entries are judged in turn); symbolic links are left (a
    mode change would follow them).
    """
    keep = readable_paths()
    tops = [platform_root.resolve(), course.ROOT.resolve()]
    needed = [*keep, *tops]
    hidden = []
    for top in dict.fromkeys(tops):
        if not top.is_dir():
            continue
        for entry in sorted(top.iterdir()):
            if entry.is_symlink():
                continue
            if any(entry == path or entry in path.parents for path in needed):
                continue
            hidden.append(entry)
    return hidden


@contextlib.contextmanager
def traversable(paths: list[Path]) -> Iterator[None]:
    """Let anyone pass through the folders above ``paths`` (a 0700 ``/autograder`` would
    hide the venv and ``tutorial_lib`` from the kernel); the modes are given back after."""
    modes: dict[Path, int] = {}
    try:
        for path in paths:
            for folder in reversed(path.parents):
                mode = folder.stat().st_mode & 0o7777
                if folder not in modes and mode & 0o001 == 0:
                    modes[folder] = mode
                    os.chmod(folder, mode | 0o011)
        yield
    finally:
        for folder, mode in modes.items():
            with contextlib.suppress(FileNotFoundError):
                os.chmod(folder, mode)


@contextlib.contextmanager
def owner_only(paths: list[Path]) -> Iterator[None]:
    """Take every permission of group and others from ``paths`` (files, or folders, whose
    content is then closed too), and give them back afterwards."""
    modes: dict[Path, int] = {}
    try:
        for path in paths:
            mode = path.stat().st_mode & 0o7777
            modes[path] = mode
            os.chmod(path, mode & ~0o077)
        yield
    finally:
        for path, mode in modes.items():
            with contextlib.suppress(FileNotFoundError):
                os.chmod(path, mode)


def end_processes(uid: int, timeout_s: float = END_TIMEOUT_S) -> None:
    """End every process of ``uid`` (detached ones, double forks, ``setsid`` included).

    The killer is a fork of this process that became ``uid`` itself: ``kill(-1)`` from there
    reaches exactly that user's processes, wherever they are, and never the killer.
    ``GraderFailed`` when it cannot become ``uid``, or when a process of ``uid`` still lives
    after ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        if not _kill_all_as(uid):
            raise GraderFailed(
                f"the grader could not become the kernel's user {uid} to end its processes; "
                "a container whose user namespace maps only a few users cannot run this "
                "grader without bubblewrap"
            )
        left = processes_of(uid)
        if not left:
            return
        if time.monotonic() > deadline:
            raise GraderFailed(
                f"{len(left)} process(es) of the kernel's user {uid} were still running "
                f"{timeout_s:g} s after being killed (pids {', '.join(map(str, left[:5]))}), "
                "so no results were written"
            )
        time.sleep(0.05)


def _kill_all_as(uid: int) -> bool:
    """SIGKILL every process of ``uid`` from a child that became ``uid``; False if it could
    not. A fork, not a new program: the user may be unable to run this machine's Python
    (under a closed /root), and the child makes system calls only."""
    pid = os.fork()
    if pid == 0:  # the child: no exception may leave here
        became = False
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            became = True
            # kill(-1) raises once it finds nothing to signal; processes that are dead but
            # not yet reaped it finds every time, hence the bound (processes_of skips them).
            for _ in range(200):
                os.kill(-1, signal.SIGKILL)
        except BaseException:  # ProcessLookupError: none left; anything else: say so
            pass
        finally:
            os._exit(0 if became else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


def processes_of(uid: int) -> list[int]:
    """Process ids with a live task (thread) whose real, effective or saved user is ``uid``.

    Zombies are dead (nothing runs in them) and are not counted; a thread group whose
    first thread has exited still counts while another thread of it lives.
    """
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        with contextlib.suppress(OSError):  # gone meanwhile
            for task in (proc / "task").iterdir():
                if _live_task_of(task / "status", uid):
                    found.append(int(proc.name))
                    break
    return found


def _live_task_of(status: Path, uid: int) -> bool:
    fields = dict(line.split(":", 1) for line in status.read_text().splitlines() if ":" in line)
    state = fields.get("State", "").split()
    uids = fields.get("Uid", "").split()[:3]
    return bool(state) and state[0] not in ("Z", "X") and str(uid) in uids


def grade_submission(inbox: Path, lesson: str, root: Path) -> tuple[dict, str, Containment | None]:
    """Grade the notebook in a platform's ``inbox``, contained; its row, the note for the
    student and the containment (None: nothing of the submission ran).

    ``GraderFailed`` when the grader, not the submission, failed: no results then.
    """
    picked = pick_notebook(inbox, lesson)
    if picked.invalid:  # links are never read, so nothing runs
        return not_gradable(lesson, Status.INVALID, picked.note), "", None
    # The scratch folder goes last: after every process of the kernel's user has ended.
    with (
        tempfile.TemporaryDirectory(prefix="platform-", ignore_cleanup_errors=True) as work,
        contained(root) as how,
    ):
        row = grade_or_fail(picked.notebook, lesson, Path(work), **how.grade_options())
    ran = row["status"] not in NOT_GRADABLE  # nothing submitted, not a notebook: nothing ran
    return row, picked.note, how if ran else None
