"""The sandboxed kernel's jupyter_client provisioner: what happens around its process.

jupyter_client starts every kernel through a provisioner named by the kernelspec
(``metadata.kernel_provisioner``), found among the ``jupyter_client.kernel_provisioners``
entry points; pyproject.toml registers this one as ``grading-sandbox``. nbclient, nbgrader
and every grading route then start sandboxed kernels the ordinary way. The argv (bubblewrap
and its options) is the kernelspec's, built by ``sandbox.py``; this class adds what an argv
cannot say:

- the sandbox's own control group (``cgroups.py``): memory, processes and CPU share for all
  of its processes together, joined before bubblewrap runs, so every process the
  submission starts is born inside it;
- a fresh, empty session keyring, so nothing the grader's session holds is reachable;
- standard streams of its own: stdin and stdout are ``/dev/null`` (the kernel speaks over
  its sockets); stderr is a pipe the grader drains, keeping only its first few lines, so
  that bubblewrap's reason for not starting can be told; nothing a kernel writes reaches
  the grader's terminal, log or files;
- at cleanup, every process of the group killed and reaped, the group and the kernel's
  folder (its connection file and key) removed: nothing of the kernel stays behind.

Only the course checkout has ``autograder``: jupyter_client loads a provisioner only for a
kernelspec that names it, so a student's install never touches this entry point.
"""

from __future__ import annotations

import ctypes
import os
import platform
import secrets
import shutil
import subprocess
import threading
from pathlib import Path

from jupyter_client.provisioning import LocalProvisioner
from traitlets import Integer, Unicode

from autograder.grading import cgroups

NAME = "grading-sandbox"  # the entry point's name, as kernelspecs name it
ERRORS_KEPT = 4096  # bytes of the sandbox's stderr the grader keeps

# keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL): a new anonymous session keyring. Its system
# call number depends on the architecture; where it is unknown the step is skipped.
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(platform.machine())
_KEYCTL_JOIN_SESSION_KEYRING = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if os.name == "posix" else None  # not on Windows


def new_session_keyring() -> None:
    """Give the calling process (and its children) an empty session keyring of its own."""
    if _KEYCTL is not None and _LIBC is not None:
        _LIBC.syscall(_KEYCTL, _KEYCTL_JOIN_SESSION_KEYRING, None)


def spec_metadata(memory_bytes: int, processes: int, folder: Path) -> dict:
    """The kernelspec metadata that makes jupyter_client start a kernel with this class."""
    config = {"memory_bytes": memory_bytes, "processes": processes, "folder": str(folder)}
    return {"kernel_provisioner": {"provisioner_name": NAME, "config": config}}


class SandboxProvisioner(LocalProvisioner):
    """A local kernel in a control group of its own, with nothing of the grader's around it."""

    memory_bytes = Integer(0, help="Memory of all the sandbox's processes together.").tag(
        config=True
    )
    processes = Integer(0, help="Processes and threads of the sandbox together.").tag(config=True)
    folder = Unicode("", help="The grader's folder for this kernel, removed at cleanup.").tag(
        config=True
    )

    group: cgroups.Group | None = None
    _errors: bytearray | None = None

    async def launch_kernel(self, cmd: list[str], **kwargs):
        if self.group is None and self.memory_bytes and cgroups.unavailable() is None:
            # A name no other kernel of any grader on this machine has.
            name = f"kernel-{secrets.token_hex(6)}"
            self.group = cgroups.Group.create(name, self.memory_bytes, self.processes)
        group = self.group

        def in_the_child() -> None:  # between fork and exec: system calls only
            if group is not None:
                group.join()
            new_session_keyring()

        kwargs.update(
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=in_the_child,
        )
        info = await super().launch_kernel(cmd, **kwargs)
        self._errors = bytearray()
        # A descriptor of its own: jupyter_client closes the pipe's file object when the
        # kernel ends, which would wait for a reader blocked on it.
        reader = os.dup(self.process.stderr.fileno())
        threading.Thread(target=self._drain, args=(reader,), daemon=True).start()
        return info

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
        if self.group is not None:
            self.group.kill_all()
            if not restart:
                self.group.remove()
                self.group = None
        if self.folder and not restart:
            shutil.rmtree(self.folder, ignore_errors=True)
