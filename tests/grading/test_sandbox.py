"""The sandbox itself, without a kernel: what a process inside sees and may do.

One short run of ``python -c`` inside the sandbox checks each rule; the attack corpus
(``test_attacks.py``) checks the same rules through the grade command.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder.grading import sandbox
from autograder.grading.run import GradeOptions, UsageError, grade

pytestmark = pytest.mark.skipif(
    not sandbox.available(), reason="bubblewrap (bwrap) is not installed"
)
MARKER = f"sandbox-test-leftover-{os.getpid()}"


def test_the_sandbox_starts_here():
    assert sandbox.check(4096) is None


def test_inside_the_sandbox(tmp_path):
    outside = subprocess.Popen(["sleep", "600"])
    code = textwrap.dedent(
        f"""
        import errno, json, os, resource, signal, subprocess, sys
        report = {{"pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}}
        try:
            os.kill({outside.pid}, signal.SIGKILL)
            report["signal"] = "sent"
        except ProcessLookupError:
            report["signal"] = "no such process"
        report["uid"] = os.getuid()
        report["cwd"] = os.getcwd()
        report["nproc"] = resource.getrlimit(resource.RLIMIT_NPROC)
        report["writable"] = [p for p in ("/", "/usr", "{tmp_path}", "/etc") if os.access(p, os.W_OK)]
        try:
            with open("big.bin", "wb") as f:
                for _ in range(128):
                    f.write(b"x" * (1 << 20))
            report["disk"] = "wrote 128 MiB"
        except OSError as err:
            report["disk"] = errno.errorcode[err.errno]
        subprocess.Popen(["sleep", "600", "{MARKER}"], start_new_session=True)
        print(json.dumps(report))
        """
    )
    argv = sandbox.sandbox_argv(tmp_path, [], 4096, disk_mb=64)
    try:
        done = subprocess.run([*argv, sys.executable, "-c", code], capture_output=True, text=True)
        alive = outside.poll() is None
    finally:
        outside.kill()
        outside.wait()
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["pids"] == [1, 2, 3] or report["pids"] == [1, 2], report  # init, python (, ls)
    assert report["signal"] == "no such process" and alive
    assert report["uid"] != 0 and report["cwd"] == sandbox.SCRATCH
    assert report["nproc"] == [sandbox.PROCESSES, sandbox.PROCESSES]
    assert report["writable"] == []
    assert report["disk"] == "ENOSPC"
    leftovers = []
    for entry in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            if MARKER.encode() in Path("/proc", entry, "cmdline").read_bytes():
                leftovers.append(entry)
        except OSError:
            pass
    assert leftovers == []  # the detached sleep went with the sandbox


def _fake_bwrap(tmp_path: Path) -> Path:
    """A bwrap that fails as it does where user namespaces are not allowed."""
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the "
        "kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    return fake


def test_without_user_namespaces_the_grade_command_says_so_and_stops(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "BWRAP", str(_fake_bwrap(tmp_path)))
    monkeypatch.setattr(sandbox, "as_root", lambda: False)
    (tmp_path / "subs").mkdir()
    with pytest.raises(UsageError) as caught:
        grade(GradeOptions(tmp_path / "subs", tmp_path / "out", progress=False))
    message = str(caught.value)
    assert "cannot start here" in message and "user namespaces" in message
    assert "--no-sandbox" in message
    assert not (tmp_path / "out").exists()  # nothing graded, nothing written


def test_the_kernel_gets_no_writable_folder_of_the_machine(tmp_path):
    argv = sandbox.sandbox_argv(tmp_path, [], 4096)
    writable = [argv[i + 1] for i, a in enumerate(argv) if a in ("--bind", "--dev-bind")]
    assert writable == []  # only tmpfs mounts are writable
    assert "--unshare-pid" in argv and "--die-with-parent" in argv
    assert argv[argv.index("--tmpfs", argv.index("/dev/shm")) + 1] == sandbox.SCRATCH


# What a grader's environment may hold that no kernel may see: a token, and what Dask's
# nanny sets for its workers (glibc's trim threshold made a kernel slower there).
GRADERS_OWN = {"GRADER_SECRET_TOKEN": "s3cret", "MALLOC_TRIM_THRESHOLD_": "65536"}
SEE_ENV = "import json, os; print(json.dumps(dict(os.environ)))"


def test_a_kernel_gets_only_the_allow_listed_environment(tmp_path, monkeypatch):
    for key, value in GRADERS_OWN.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("LANG", "C.UTF-8")  # passed through on purpose
    argv = sandbox.sandbox_argv(tmp_path, [], 4096, disk_mb=64)
    done = subprocess.run([*argv, sys.executable, "-c", SEE_ENV], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout)
    assert set(seen) <= set(sandbox.allowed_env()) | {"PWD", "SHLVL", "_"}, sorted(seen)
    assert not set(GRADERS_OWN) & set(seen)
    assert seen["LANG"] == "C.UTF-8"
