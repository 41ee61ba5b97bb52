"""A template kernel: torch imported once per worker, each submission's kernel forked from it.

Importing torch costs about 3 s of CPU (``python -X importtime``), more than a light lesson's
cells. A kernel started ahead (``execute``'s spare) hides that time from one job, but the
CPU is still spent once per submission, on the core the other job needs. Here it is spent
once per worker.

How a kernel is made, keeping every guarantee of the bubblewrap sandbox (``sandbox.py``):

1. The grader starts the sandbox as always, with ``PLACEHOLDER`` as its command instead of
   the kernel: bubblewrap builds the namespaces, mounts, /tmp and limits, as for any kernel.
   The placeholder is the first process of the sandbox's PID namespace.
2. The template (this file's text, run by ``BOOTSTRAP``, outside any sandbox and trusted:
   it never runs student code) forks. The child joins the sandbox's namespaces with
   ``setns`` on the placeholder's pidfd (user, mount, PID, IPC, network, UTS, cgroup) and
   forks again, so its own child is a process of the sandbox.
3. That process forks the kernel and waits for it, as bubblewrap's init would: it is the
   kernel's parent, and keeps no capability.
4. The kernel gives up what joining gave it (the grader's user, every capability), takes
   the sandbox's limits (processes, memory) and working folder, closes every file the
   template had open, and starts ipykernel with the grader's connection file. Its
   environment is the template's: the sandbox's (``sandbox.kernel_env``), set at its start.
5. When the kernel exits, its parent does, then the placeholder; bubblewrap ends, and the
   namespace takes every process left with it, as for a kernel bubblewrap started itself.

The template holds nothing of any submission: it imports modules, forks, and reads only
its requests (a process id, a connection file's path, limits). Nothing of the grader's own
code is imported into it (it runs as ``python -c``, from this file's text), so a kernel finds
no ``autograder`` module in memory.

Everything below ``# --- in the template ---`` runs in the template; the class ``Template``
at the end is the grader's handle on it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

KERNEL_SCRATCH = "/tmp"  # the sandbox's writable folder (sandbox.SCRATCH), seen from inside

# The sandbox's command: the first process of its PID namespace (bubblewrap's --as-pid-1),
# which no signal from inside can kill, and which reaps orphans as an init does. It waits
# for the process the template forks into the namespace (the kernel's parent), and exits
# when that does: bubblewrap ends, and with the namespace's first process every process
# left in it. The grader ends it by killing it (``sandbox.Sandbox.wait_gone``); if the
# grader dies, the template's children die with it (parent-death signals), and so does
# this. Run as ``python -I -S``: no site, nothing imported but built-ins.
PLACEHOLDER = """\
import os, select, signal, time
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
until = time.monotonic() + 120
while True:
    joined = [int(p) for p in os.listdir("/proc") if p.isdigit() and p != "1"]
    if joined:
        break
    if time.monotonic() > until:
        raise SystemExit("no kernel joined the sandbox")
    time.sleep(0.002)
select.select([os.pidfd_open(min(joined))], [], [])
"""

# The template's command line, which its kernels inherit (they are forks): a short loader
# that reads this file's text from stdin, and a name a person reading `ps` understands.
TITLE = "autograder-kernel-template"
BOOTSTRAP = (
    "import json, sys; _start = json.loads(sys.stdin.readline()); _g = {'__name__': 'template'}; "
    "exec(compile(_start['source'], 'kernel-template', 'exec'), _g); "
    "_g['serve'](tuple(_start['preload']), _start.get('listen'))"
)


# What ipykernel imports as it starts (its debugger, debugpy, IPython's history and
# completion), found by listing a forked kernel's new modules: imported once, here, they
# cost a kernel nothing.
KERNEL_MODULES = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.debugger",
    "IPython.core.debugger",
    "IPython.core.completerlib",
    "IPython.extensions.storemagic",
    "sqlite3",
)


# --- in the template ---

_CLONE = {  # namespace name in /proc/<pid>/ns -> its CLONE_NEW* flag
    "user": 0x10000000,
    "mnt": 0x00020000,
    "pid": 0x20000000,
    "ipc": 0x08000000,
    "net": 0x40000000,
    "uts": 0x04000000,
    "cgroup": 0x02000000,
}
_PR_SET_PDEATHSIG = 1
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_CAP_VERSION_3 = 0x20080522


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = tuple((n, ctypes.c_uint32) for n in ("effective", "permitted", "inheritable"))


def _join(pid: int) -> None:
    """Join every namespace of process ``pid`` that differs from this process's own."""
    libc = _libc()
    flags = 0
    for name, flag in _CLONE.items():
        theirs = os.stat(f"/proc/{pid}/ns/{name}").st_ino
        if theirs != os.stat(f"/proc/self/ns/{name}").st_ino:
            flags |= flag
    fd = os.pidfd_open(pid)
    try:
        _check(libc.setns(fd, flags), "setns")
    finally:
        os.close(fd)


_KEYCTL = {"x86_64": 250, "aarch64": 219}  # keyctl's system call number, per architecture
_KEYCTL_JOIN_SESSION_KEYRING = 1


def _new_session_keyring() -> None:
    """Join a new, empty session keyring (as ``provisioner.new_session_keyring`` does)."""
    number = _KEYCTL.get(os.uname().machine)
    if number is not None:
        _libc().syscall(number, _KEYCTL_JOIN_SESSION_KEYRING, None)


def _drop_capabilities(uid: int | None = None) -> None:
    """Give up every capability, now and after any exec (the bounding set, no_new_privs);
    with ``uid`` (a root grader: the kernel's user of its own, ``sandbox.student_uid``),
    become that user too."""
    libc = _libc()
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):  # while CAP_SETPCAP is still held
        _check(libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0), "dropping the bounding set")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    empty = (_CapData * 2)()  # capabilities 0-31 and 32-63: none effective, permitted or inherited
    _check(libc.capset(ctypes.byref(_CapHeader(_CAP_VERSION_3, 0)), empty), "capset")
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")


def _report(report: int, **what) -> None:
    os.write(report, (json.dumps(what) + "\n").encode())


def _in_child(run, request: dict, report: int) -> None:
    """In a process just forked: run ``run``, report what it raised, and never return (the
    template's loop must not go on in a copy of itself)."""
    try:
        run(request, report)
    except BaseException as err:
        _report(report, error=f"{type(err).__name__}: {err}")
    os._exit(1)


def _become_kernel(request: dict, report: int) -> None:
    """The sandbox's kernel: set up as bubblewrap would have set it up, then run ipykernel."""
    import resource
    import signal

    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.setsid()
    _drop_capabilities(request.get("uid"))
    for name, limit in request["limits"].items():
        resource.setrlimit(getattr(resource, name), (limit, limit))
    for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    for folder in request.get("folders", []):  # paths cached at import (matplotlib's)
        os.makedirs(folder, exist_ok=True)
    os.chdir(request["cwd"])
    null = os.open("/dev/null", os.O_RDWR)
    # The kernel's output goes over its sockets. Not the template's replies (stdout), nor a
    # file of the grader's (stderr): a submission's writes must stay in the sandbox.
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, report)
    os.closerange(report + 1, 1 << 16)  # nothing the template had open stays reachable
    if "numpy" in sys.modules:  # a fresh kernel seeds NumPy from the OS: not the template's
        sys.modules["numpy"].random.seed()
    _report(report, ok=True)
    os.close(report)
    sys.argv = ["ipykernel_launcher", *request["argv"]]
    from ipykernel import kernelapp

    try:
        kernelapp.launch_new_instance(argv=request["argv"])
    finally:
        os._exit(0)


def _parent_of_kernel(request: dict, report: int) -> None:
    """The kernel's parent, inside the sandbox: fork the kernel, then wait for it.

    As bubblewrap's own init is, it is the process a kernel sees as its parent, and no
    signal of the kernel's reaches it: as root it keeps user 0, without any capability.
    (Without it the kernel's parent would be outside, ``os.getppid()`` 0, and a kill of
    that would be a kill of the kernel's own process group.)
    """
    import signal

    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    kernel = os.fork()
    if kernel == 0:
        _in_child(_become_kernel, request, report)
    os.close(report)
    _drop_capabilities()
    os.waitpid(kernel, 0)
    os._exit(0)


def _join_and_fork(request: dict, report: int) -> None:
    """The template's child: join the sandbox; its child is a process of the sandbox."""
    import signal

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # Of the template's files, only the report pipe goes into the sandbox (the kernel's
    # parent holds nothing of it: the request socket, a shared template's listener).
    os.closerange(3, report)
    os.closerange(report + 1, 1 << 16)
    try:
        # The sandbox's control group, from here on for every process it starts (written
        # while /sys/fs/cgroup is still the machine's), and a session keyring of its own,
        # not the template's.
        for procs in request.get("cgroup", []):
            with open(procs, "w") as f:
                f.write("0")
        _new_session_keyring()
        _join(request["pid"])
        inside = os.fork()  # in the sandbox's PID namespace: setns changed our children's
    except Exception as err:
        _report(report, error=f"{type(err).__name__}: {err}")
        os._exit(1)
    if inside == 0:
        _in_child(_parent_of_kernel, request, report)
    _report(report, pid=inside)  # as the grader sees it: this process is outside the sandbox
    os.close(report)
    os.waitpid(inside, 0)
    os._exit(0)


def serve(preload: tuple[str, ...], listen: str | None = None) -> None:
    """The template's loop: import, then one kernel per request line, from stdin or, with
    ``listen`` (a Unix socket's path), from every process that connects there."""
    import signal

    listener = None
    if listen:  # bound before the imports: a worker may connect (and wait) at once
        import socket

        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(listen)
        listener.listen(64)
    if sys.path and sys.path[0] in ("", "."):
        del sys.path[0]
    for name in (*preload, *KERNEL_MODULES):
        # One that fails is left for the notebook to import, and fail on, where the learner sees.
        with contextlib.suppress(Exception):
            __import__(name)
    # It ends with its grader: when the grader's end of stdin closes, the loop below ends.
    # (Not PR_SET_PDEATHSIG: that follows the thread that started it, and a Dask worker
    # may start it from a thread that ends.)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the system
    out = os.fdopen(os.dup(1), "w", buffering=1)
    print(json.dumps({"ready": os.getpid()}), file=out)
    if listener is None:
        _answer(sys.stdin, out)
    else:
        _serve_connections(listener)


def _answer(requests, out) -> None:
    """Fork one kernel per request line until ``requests`` ends; a reply line for each."""
    for line in requests:
        request = json.loads(line)
        read, write = os.pipe()
        if os.fork() == 0:
            os.close(read)
            _join_and_fork(request, write)
        os.close(write)
        with os.fdopen(read, "r") as replies:
            reply = {}
            for part in replies:
                reply.update(json.loads(part))
        if "error" not in reply and not reply.get("ok"):
            reply["error"] = "the kernel process ended before it started ipykernel"
        print(json.dumps(reply), file=out, flush=True)


def _serve_connections(listener) -> None:
    """A template shared by a machine's workers: each connection is answered by a fork of
    the template (imports shared, nothing else), so one worker's requests never wait on
    another's. It ends when stdin closes, and its forks with it (parent-death signal)."""
    import select
    import signal

    while True:
        readable, _, _ = select.select([0, listener], [], [])
        if 0 in readable and not os.read(0, 4096):
            return
        if listener not in readable:
            continue
        connection, _ = listener.accept()
        if os.fork() == 0:
            try:
                _libc().prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                listener.close()
                os.close(0)
                with contextlib.suppress(OSError):  # the worker went away
                    _answer(connection.makefile("r"), connection.makefile("w"))
            finally:
                os._exit(0)  # never back into the template's loop
        connection.close()


# --- in the grader ---


class TemplateDied(RuntimeError):
    """The template process is gone (killed, out of memory): a new one can be started."""


class _Kernels:
    """What the grader asks of a template, whoever started it: ``fork_into`` makes a kernel."""

    cwd: str
    folders: list[str]

    def _exchange(self, line: str) -> str:
        """Send one request line, return its reply line ("" when the template is gone)."""
        raise NotImplementedError

    def fork_into(
        self,
        placeholder: int,
        argv: list[str],
        limits: dict,
        uid: int | None,
        cgroup: list[str] = (),
    ) -> int:
        """Fork a kernel into the sandbox whose placeholder is ``placeholder``; return the
        process id, as the grader sees it, of the kernel's parent there. ``cgroup``: the
        ``cgroup.procs`` files of the sandbox's control group, which the kernel joins."""
        request = {
            "pid": placeholder,
            "argv": argv,
            "limits": limits,
            "uid": uid,
            "cgroup": list(cgroup),
            "cwd": self.cwd,
            "folders": self.folders,
        }
        line = self._exchange(json.dumps(request) + "\n")
        if not line:
            raise TemplateDied("the kernel template died")
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"the kernel could not join its sandbox: {reply['error']}")
        return reply["pid"]


class Template(_Kernels):
    """The grader's handle on one template process it started. With ``shared``, the
    template also answers every process that connects to its socket (``handle()``, for
    ``SharedTemplate``): a machine's workers then share one template's imports."""

    def __init__(
        self,
        env: dict[str, str],
        preload: tuple[str, ...],
        shared: bool = False,
    ):
        import threading

        self.lock = threading.Lock()  # one request at a time over the pipes
        # Private (0700): only the grader's user reaches the socket; no sandbox sees it
        # (each has a /tmp of its own, and no network namespace of the machine's). Always in
        # /tmp, whatever TMPDIR says: the kernel makes ``folders`` again at the same paths
        # inside its sandbox, where /tmp is the one writable place (a TMPDIR of
        # /scratch/... made every kernel fail to start).
        self.folder = Path(tempfile.mkdtemp(prefix="gz-", dir=KERNEL_SCRATCH))
        # Paths the template's imports remember (matplotlib's config folder) are made again
        # inside each sandbox's /tmp, so the kernel finds them where the template had them.
        self.folders = [str(self.folder / ".matplotlib")]
        self.env = {**env, "MPLCONFIGDIR": self.folders[0]}
        self.cwd = self.env["HOME"]
        self.address = str(self.folder / "template.sock") if shared else None
        self.process = subprocess.Popen(
            [sys.executable, "-c", BOOTSTRAP, TITLE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # the kernels' environment only: nothing of the grader's reaches them
            env=self.env,
            cwd=self.folder,
            text=True,
        )
        start = {"source": Path(__file__).read_text(), "preload": list(preload)}
        if shared:
            start["listen"] = self.address
        self.process.stdin.write(json.dumps(start) + "\n")
        self.process.stdin.flush()
        self._ready = False

    def handle(self) -> dict:
        """What a process needs to use this (shared) template: plain data, to pass on."""
        return {"address": self.address, "cwd": self.cwd, "folders": self.folders}

    def _wait_ready(self) -> None:
        if self._ready:
            return
        line = self.process.stdout.readline()
        if not line:
            raise TemplateDied("the kernel template exited before it was ready")
        self._ready = "ready" in json.loads(line)

    def wait_ready(self) -> None:
        with self.lock:
            self._wait_ready()

    def alive(self) -> bool:
        return self.process.poll() is None

    def _exchange(self, line: str) -> str:
        if self.address:
            raise RuntimeError("a shared template answers on its socket: use SharedTemplate")
        with self.lock:
            self._wait_ready()
            try:
                self.process.stdin.write(line)
                self.process.stdin.flush()
            except BrokenPipeError:
                raise TemplateDied("the kernel template died") from None
            return self.process.stdout.readline()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


class SharedTemplate(_Kernels):
    """A worker's connection to a template another process started (``Template(shared=True)``,
    its ``handle()``). The connection is made at the first request; until the template has
    bound its socket (its first milliseconds) the connect is tried again."""

    CONNECT_S = 30

    def __init__(self, handle: dict):
        import threading

        self.lock = threading.Lock()
        self.address, self.cwd, self.folders = handle["address"], handle["cwd"], handle["folders"]
        self._socket = None
        self._lines = None
        self._dead = False

    def _connect(self) -> None:
        import socket
        import time

        deadline = time.monotonic() + self.CONNECT_S
        while True:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(self.address)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                sock.close()
                if time.monotonic() > deadline:
                    raise TemplateDied(f"no kernel template answers at {self.address}") from None
                time.sleep(0.02)
        self._socket, self._lines = sock, sock.makefile("r")

    def alive(self) -> bool:
        return not self._dead

    def _exchange(self, line: str) -> str:
        with self.lock:
            try:
                if self._socket is None:
                    self._connect()
                self._socket.sendall(line.encode())
                reply = self._lines.readline()
            except TemplateDied:
                self._dead = True
                raise
            except OSError:
                reply = ""
            self._dead = self._dead or not reply
            return reply

    def stop(self) -> None:
        self._dead = True
        if self._socket is not None:
            self._lines.close()
            self._socket.close()
