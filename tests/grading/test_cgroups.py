"""A sandbox's control group, without a sandbox: made, joined, emptied and removed.

Removal is what a grading run leaves behind if it goes wrong: a group whose last process
is still exiting cannot be deleted yet, and CI once found a kernel's group left over.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.grading import cgroups

pytestmark = pytest.mark.skipif(
    cgroups.unavailable() is not None, reason=str(cgroups.unavailable())
)


def _group(name: str) -> cgroups.Group:
    return cgroups.Group.create(f"test-{name}-{os.getpid()}", memory_bytes=256 << 20, processes=16)


def test_a_group_holds_its_processes_and_is_removed_with_them():
    group = _group("live")
    folders = list(group.folders)
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], preexec_fn=group.join
    )
    try:
        assert group.processes() == [child.pid]
        assert group.remove()  # ends what is still in the group, then deletes it
        assert not any(folder.exists() for folder in folders)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == -signal.SIGKILL


def test_removal_waits_for_a_group_that_is_slow_to_empty(monkeypatch):
    """The kernel refuses to delete a group (EBUSY) until its last process has finished
    exiting; on a busy machine that has taken longer than the one second once allowed."""
    group = _group("slow")
    folders = list(group.folders)
    busy_until = time.monotonic() + 1.5
    real_rmdir = Path.rmdir

    def rmdir(path):
        if time.monotonic() < busy_until:
            raise OSError(16, "Device or resource busy", str(path))
        real_rmdir(path)

    monkeypatch.setattr(Path, "rmdir", rmdir)
    assert group.remove(timeout=10)
    assert not any(folder.exists() for folder in folders)


def test_removal_says_when_it_gave_up(monkeypatch):
    group = _group("stuck")
    folders = list(group.folders)
    real_rmdir = Path.rmdir
    monkeypatch.setattr(Path, "rmdir", lambda path: (_ for _ in ()).throw(OSError(16, "busy")))
    try:
        assert group.remove(timeout=0.2) is False
        assert group.folders == folders  # what is left, for the warning
    finally:
        for folder in folders:
            real_rmdir(folder)


def test_the_empty_groups_of_a_dead_owner_are_removed_and_no_others():
    """A grading worker killed hard never removes its kernels' groups; the next grader does.
    A live owner's empty group (one being made or removed) and a group in use stay."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = cgroups.Group.create(f"test-{dead.pid}-orphan", 256 << 20, 16)
    mine = cgroups.Group.create(cgroups.owned_name("test"), 256 << 20, 16)
    busy = cgroups.Group.create(f"test-{dead.pid}-busy", 256 << 20, 16)
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], preexec_fn=busy.join
    )
    try:
        removed = cgroups.remove_orphans("test")
        assert sorted(removed) == sorted(map(str, orphan.folders))
        assert all(f.exists() for f in [*mine.folders, *busy.folders])
    finally:
        child.kill()
        child.wait()
        assert mine.remove() and busy.remove()
