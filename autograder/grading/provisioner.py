"""The grading kernel's jupyter_client provisioner: everything around the kernel's process.

jupyter_client starts every kernel through a provisioner named by the kernelspec
(``metadata.kernel_provisioner``), found among the ``jupyter_client.kernel_provisioners``
entry points; pyproject.toml registers this one as ``grading-sandbox``. nbclient, nbgrader
and every grading route then start confined kernels the ordinary way: the kernelspec's argv
is a plain ipykernel, and this class owns the rest.

- **Its folder.** The grader's own folder for the kernel (``/tmp/gk-*``), holding the
  connection file with its key, readable by the kernel's user and removed at cleanup.
- **Its argv.** The plain kernel command wrapped in bubblewrap (``sandbox.sandbox_argv``)
  or, where bubblewrap cannot run, in a user of its own (``sandbox.unprivileged_argv``).
- **Its control group** (``cgroups.py``): memory, processes and CPU share for all of the
  sandbox's processes together, joined before the command runs, so every process the
  submission starts is born inside it.
- **No keys.** A fresh, empty session keyring, so nothing the grader's session holds is
  reachable; under bubblewrap the keyring system calls are refused outright
  (``sandbox.keyring_filter``), so no key a kernel made outlives it.
- **Its standard streams**: stdin and stdout are ``/dev/null`` (the kernel speaks over its
  sockets); stderr is a pipe the grader drains, keeping only its start, so that bubblewrap's
  reason for not starting can be told; nothing a kernel writes reaches the grader.
- **Where its files are.** bubblewrap reports the sandbox's first process (``--info-fd``);
  the sandbox's ``/tmp`` (the kernel's Unix sockets, the probes' result files) is reached
  through that process's ``/proc/<pid>/root``.
- **Its end.** At cleanup every process of the sandbox is killed and waited for, and the
  group and the folder are removed: nothing of the kernel stays on the machine.

Only the course checkout has ``autograder``: jupyter_client loads a provisioner only for a
kernelspec that names it, so a student's install never touches this entry point.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import platform
import select
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from jupyter_client.provisioning import LocalProvisioner
from traitlets import Bool, Integer, List, Unicode

from autograder.grading import cgroups, sandbox

NAME = "grading-sandbox"  # the entry point's name, as kernelspecs name it
ERRORS_KEPT = 4096  # bytes of the sandbox's stderr the grader keeps
START_TIMEOUT_S = 30  # for bubblewrap to report its sandbox's first process

# keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): a new anonymous session keyring. Its system
# call number depends on the architecture; where it is unknown the step is skipped.
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
_KEYCTL_JOIN_SESSION_KEYRING = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if os.name == "posix" else None  # not on Windows


def new_session_keyring() -> None:
    """Give the calling process (and its children) an empty session keyring of its own."""
    if _KEYCTL is not None and _LIBC is not None:
        _LIBC.syscall(_KEYCTL, _KEYCTL_JOIN_SESSION_KEYRING, None)


def spec_metadata(**config) -> dict:
    """The kernelspec metadata that makes jupyter_client start a kernel with this class;
    ``config`` sets its traits (``memory_mb=6144, sandboxed=True``...)."""
    return {"kernel_provisioner": {"provisioner_name": NAME, "config": config}}


class SandboxProvisioner(LocalProvisioner):
    """A local kernel, confined, in a control group of its own, with nothing of the grader's
    around it."""

    sandboxed = Bool(True, help="Under bubblewrap; False: as the user run_as_uid.").tag(config=True)
    run_as_uid = Integer(None, allow_none=True, help="The kernel's user without bubblewrap.").tag(
        config=True
    )
    memory_mb = Integer(0, help="Memory of all the sandbox's processes together.").tag(config=True)
    disk_mb = Integer(sandbox.DISK_MB, help="Size of the sandbox's writable /tmp.").tag(config=True)
    gpu = Bool(False, help="Show the GPU's device nodes to the kernel.").tag(config=True)
    hide = List(Unicode(), help="Folders the kernel must not see.").tag(config=True)
    preload = List(Unicode(), help="Modules the kernel imports before its first cell.").tag(
        config=True
    )

    folder: Path | None = None
    uid: int | None = None
    group: cgroups.Group | None = None
    first_process: int | None = None  # the sandbox's first process (its init), as seen here
    _first_fd: int | None = None  # a pidfd of it: waited on at cleanup
    _errors: bytearray | None = None
    _info: tuple[int, int] | None = None  # the pipe of bubblewrap's --info-fd
    _seccomp: int | None = None  # where bubblewrap reads its --seccomp program
    _options: int | None = None  # where bubblewrap reads its options (--args)

    async def pre_launch(self, **kwargs):
        """Make the kernel's folder and connection file; wrap the kernel's argv."""
        km = self.parent
        # A sandboxed kernel sees it read-only at the same path.
        self.folder = Path(tempfile.mkdtemp(prefix="gk-"))
        if self.sandboxed:
            self.uid = sandbox.student_uid() if sandbox.as_root() else None
            km.transport = "ipc"  # no TCP inside --unshare-net: Unix sockets in its /tmp
            km.ip = sandbox.KERNEL_IP
        else:
            self.uid = self.run_as_uid
            kwargs["cwd"] = str(self.folder)  # its home: nothing of the grader's
            os.chmod(self.folder, 0o700)
        if self.uid is not None:  # the kernel's user must read its connection file
            os.chown(self.folder, self.uid, self.uid)
        km.connection_file = str(self.folder / "kernel.json")
        kwargs = await super().pre_launch(**kwargs)  # writes the connection file
        os.chmod(km.connection_file, 0o644)  # jupyter_client writes it for its own user only
        kernel = [*kwargs["cmd"], *_preload_options(self.preload), COPY_EVERY_MESSAGE]
        if not self.sandboxed:
            prefix = sandbox.unprivileged_argv(self.folder, self.uid, self.memory_mb, self.gpu)
        else:
            self._info = os.pipe()  # bubblewrap reports its first process's id there
            self._seccomp = _readable(sandbox.keyring_filter())
            prefix = sandbox.sandbox_argv(
                self.folder,
                [Path(p) for p in self.hide],
                self.memory_mb,
                self.gpu,
                self.disk_mb,
                uid=self.uid,
                info_fd=self._info[1],
                seccomp_fd=self._seccomp,
            )
            # Its options from a file, so that no command line inside shows them.
            head, options, command = sandbox.split_options(prefix)
            self._options = _readable(b"".join(o.encode() + b"\0" for o in options))
            prefix = [*head, "--args", str(self._options), *command]
        kwargs["cmd"] = [*prefix, *kernel]
        return kwargs

    async def launch_kernel(self, cmd: list[str], **kwargs):
        if self.group is None and self.memory_mb and cgroups.unavailable() is None:
            # A name no other kernel of any grader on this machine has, with its owner's
            # process id: the groups of an owner that was killed hard are removed here.
            _remove_orphan_groups()
            name = cgroups.owned_name("kernel")
            self.group = cgroups.Group.create(name, self.memory_mb * 1024 * 1024, sandbox.PROCESSES)
        group = self.group

        def in_the_child() -> None:  # between fork and exec: system calls only
            if group is not None:
                group.join()
            new_session_keyring()

        info_read, info_write = self._info or (None, None)
        passed = [fd for fd in (info_write, self._seccomp, self._options) if fd is not None]
        kwargs.update(
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=in_the_child,
            pass_fds=passed,
        )
        try:
            info = await super().launch_kernel(cmd, **kwargs)
        except BaseException:
            if info_read is not None:
                os.close(info_read)
            raise
        finally:
            for fd in passed:  # the sandbox's now
                os.close(fd)
        self._errors = bytearray()
        # A descriptor of its own: jupyter_client closes the pipe's file object when the
        # kernel ends, which would wait for a reader blocked on it.
        reader = os.dup(self.process.stderr.fileno())
        self._drainer = threading.Thread(target=self._drain, args=(reader,), daemon=True)
        self._drainer.start()
        if info_read is not None:
            self._find_first_process(info_read)
        return info

    async def post_launch(self, **kwargs) -> None:
        """Connect the grader to the kernel's sockets where it reaches them: through the
        sandbox's root. (jupyter_client connected its control socket to the path the kernel
        was given, which is inside the sandbox.)"""
        await super().post_launch(**kwargs)
        km = self.parent
        if self.first_process is not None:
            km._close_control_socket()
            km.ip = self.outside_path(sandbox.KERNEL_IP)
            km._connect_control_socket()  # interrupts go through it

    def _find_first_process(self, info_read: int) -> None:
        """Read bubblewrap's report of the sandbox's first process; keep a pidfd of it."""
        data = b""
        try:
            while select.select([info_read], [], [], START_TIMEOUT_S)[0]:
                chunk = os.read(info_read, 4096)
                if not chunk:
                    break
                data += chunk
        finally:
            os.close(info_read)
        try:
            self.first_process = int(json.loads(data)["child-pid"])
            self._first_fd = os.pidfd_open(self.first_process)
        except (ValueError, KeyError, ProcessLookupError):
            self.process.wait(5)  # bubblewrap has exited: its stderr says why,
            self._drainer.join(5)  # once the drain has read it (on a busy machine, later)
            why = self.errors() or f"exit status {self.process.poll()}"
            raise RuntimeError(f"the sandbox did not start its kernel: {why}") from None

    def outside_path(self, inside: str) -> str:
        """The path, as the grader reaches it, of a path inside the sandbox."""
        return f"/proc/{self.first_process}/root{inside}"

    def _drain(self, reader: int) -> None:
        """Read the sandbox's stderr to its end, keeping the first ``ERRORS_KEPT`` bytes."""
        try:
            while chunk := os.read(reader, 65536):
                room = ERRORS_KEPT - len(self._errors)
                if room > 0:
                    self._errors += chunk[:room]
        finally:
            os.close(reader)

    def errors(self) -> str:
        """The start of what the sandbox wrote to stderr (bubblewrap's reason, if it failed)."""
        return bytes(self._errors or b"").decode(errors="replace").strip()

    async def cleanup(self, restart: bool = False) -> None:
        await super().cleanup(restart=restart)
        self._wait_gone()
        if self.group is not None:
            self.group.kill_all()
            if not restart:
                if not self.group.remove():
                    self.log.warning(
                        "a kernel's control group could not be removed: %s",
                        ", ".join(map(str, self.group.folders)),
                    )
                self.group = None
        if self.folder is not None and not restart:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _wait_gone(self, timeout: float = 10.0) -> None:
        """Wait until the sandbox's first process has exited, killing it if it lingers.

        It dies with bubblewrap (``--die-with-parent``) and takes its PID namespace with it:
        once it has gone, nothing the submission started is left.
        """
        fd, self._first_fd = self._first_fd, None
        if fd is None:
            return
        try:
            for _ in range(2):
                if select.select([fd], [], [], timeout)[0]:
                    return
                signal.pidfd_send_signal(fd, signal.SIGKILL)
        except ProcessLookupError:
            return
        finally:
            os.close(fd)


# Past jupyter_client's copy_threshold (64 KiB), a message is sent without copying, which needs
# pyzmq's helper thread; a kernel whose processes have used up the sandbox's pid limit cannot
# start it, and its next large output reached the grader cut ("Invalid Signature"). Copying
# every message costs a copy of each large output and needs no thread.
COPY_EVERY_MESSAGE = f"--Session.copy_threshold={2**62}"


@functools.cache
def _remove_orphan_groups() -> None:
    """Once per process: a grader killed hard left its kernels' groups (empty) behind."""
    cgroups.remove_orphans("kernel")


def _readable(data: bytes | None) -> int | None:
    """A file descriptor from which ``data`` can be read to its end: a file in memory."""
    if data is None:
        return None
    fd = os.memfd_create("for-bubblewrap")
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _preload_options(modules: list[str]) -> list[str]:
    """ipykernel options that import ``modules`` as the kernel starts, before it answers:
    a kernel started ahead of its notebook has them ready. The names are deleted again, so
    the notebook's namespace starts empty; its own ``import torch`` finds the module loaded.
    """
    if not modules:
        return []
    names = sorted({m.split(".")[0] for m in modules})
    lines = [f"import {', '.join(modules)}", f"del {', '.join(names)}"]
    return [f"--IPKernelApp.exec_lines={line}" for line in lines]
