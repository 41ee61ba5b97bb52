"""The kernel template (``autograder/grading/zygote.py``): a kernel forked from it into a
sandbox is as confined as one bubblewrap started, and the template holds nothing two
kernels could share.

Each kernel here is made the way the grader makes one (``GradingExecute._fork_kernel``): a
sandbox with the placeholder, the template forked into it, ipykernel reached over its Unix
sockets through the sandbox's /proc root.
"""

import contextlib
import json
import os
import select
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from jupyter_client import BlockingKernelClient
from jupyter_client.connect import write_connection_file

from autograder.grading import sandbox, zygote

pytestmark = [
    pytest.mark.xdist_group("grading"),
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed"),
]
MEMORY_MB = 6144

REPORT = """\
import json, os, resource, sys
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except FileNotFoundError:  # the listing's own, closed already
        pass
import numpy
print(json.dumps({
    "uid": os.getuid(),
    "caps": {k: status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")},
    "no_new_privs": status["NoNewPrivs"].strip(),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "nproc": resource.getrlimit(resource.RLIMIT_NPROC)[0],
    "address_space": resource.getrlimit(resource.RLIMIT_AS)[0],
    "cwd": os.getcwd(),
    "grader_modules": [n for n in sys.modules if n.split(".")[0] == "autograder"],
    "torch_ready": "torch" in sys.modules,
    "std": [fds.get("0"), fds.get("1")],
    "fds": sorted(fds.values()),
    "random": numpy.random.rand(),
    "pid": os.getpid(),
}))
"""


@pytest.fixture(scope="module")
def template():
    made = zygote.Template(sandbox.kernel_env(), sandbox.PRELOAD)
    yield made
    made.stop()


class Kernel:
    """One sandbox, its kernel forked from the template, and a client connected to it."""

    def __init__(self, template: zygote.Template):
        self.folder = Path(tempfile.mkdtemp(prefix="gk-"))
        uid = sandbox.student_uid() if sandbox.as_root() else None
        if uid is not None:
            os.chown(self.folder, uid, uid)
        connection = str(self.folder / "kernel.json")
        write_connection_file(connection, transport="ipc", ip=sandbox.KERNEL_IP)
        os.chmod(connection, 0o644)
        argv = sandbox.placeholder_argv(self.folder, [], MEMORY_MB)
        self.outer = subprocess.Popen(argv)
        self.box = sandbox.Sandbox(self.outer.pid, placeholder=True)
        limits = {"RLIMIT_NPROC": sandbox.PROCESSES, "RLIMIT_AS": MEMORY_MB << 20}
        self.pid = template.fork_into(self.box.kernel, ["-f", connection], limits, uid)
        info = json.loads(Path(connection).read_text())
        info["ip"] = self.box.outside_path(sandbox.KERNEL_IP)
        self.client = BlockingKernelClient()
        self.client.load_connection_info(info)
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)

    def run(self, code: str) -> str:
        """The code's printed output (its error, if it raised)."""
        self.client.execute(code)
        out = []
        while True:
            msg = self.client.get_iopub_msg(timeout=60)
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind == "error":
                out.append(f"{content['ename']}: {content['evalue']}")
            elif kind == "status" and content["execution_state"] == "idle":
                return "".join(out)

    def end(self) -> bool:
        """Kill the sandbox as the grader does; True when every process of it is gone."""
        self.client.stop_channels()
        self.outer.kill()
        self.outer.wait()
        return self.box.wait_gone()


def test_the_template_holds_nothing_two_kernels_could_share(template):
    kernel = Kernel(template)  # the template is ready once it has forked one
    kernel.end()
    pid = template.process.pid
    assert os.listdir(f"/proc/{pid}/task") == [str(pid)], "a forked process keeps one thread"
    maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
    writable_shared = [m for m in maps if m.split()[1][1] == "w" and m.split()[1][3] == "s"]
    assert not writable_shared, f"memory every kernel would share: {writable_shared}"


def test_a_forked_kernel_is_as_confined_as_a_started_one(template):
    first, second = Kernel(template), Kernel(template)
    try:
        reports = [json.loads(k.run(REPORT).strip().splitlines()[-1]) for k in (first, second)]
        pipes = {f"pipe:[{os.fstat(f.fileno()).st_ino}]" for f in (template.process.stdin,)}
    finally:
        gone = [first.end(), second.end()]
    assert gone == [True, True]
    for report in reports:
        assert report["uid"] not in (0, os.getuid()), report["uid"]
        assert set(report["caps"].values()) == {"0000000000000000"}, report["caps"]
        assert report["no_new_privs"] == "1"
        # the placeholder, the kernel's parent, the kernel
        assert report["processes"] == [1, 2, report["pid"]], report["processes"]
        assert report["nproc"] == sandbox.PROCESSES
        assert report["address_space"] == MEMORY_MB << 20
        assert report["cwd"] == sandbox.SCRATCH
        assert report["grader_modules"] == []
        assert report["torch_ready"]
        # stdin is /dev/null; stdout is /dev/null, or the pipe ipykernel makes to capture
        # what C code prints (it skips that when it sees pytest in its environment, which
        # the kernel no longer inherits): the template's pipes are checked just below.
        assert report["std"][0] == "/dev/null"
        assert report["std"][1] == "/dev/null" or report["std"][1].startswith("pipe:")
        assert not pipes & set(report["fds"]), "the template's request pipe"
        # Only ipykernel's own files in the sandbox's /tmp: none the template or grader had.
        files = {f for f in report["fds"] if f.startswith("/")} - {"/dev/null"}
        theirs = [f for f in files if not f.startswith(f"{sandbox.SCRATCH}/.ipython/")]
        assert not theirs, f"files of the machine left open: {theirs}"
    assert reports[0]["random"] != reports[1]["random"], "NumPy seeded once for every kernel"


def test_what_one_kernel_leaves_the_next_does_not_find(template):
    planter = Kernel(template)
    planter.run(
        "import os, subprocess, sys, torch\n"
        "torch.PLANTED = 1\n"
        "open('/tmp/planted', 'w').write('a')\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " start_new_session=True)\n"
    )
    assert planter.end()
    seeker = Kernel(template)
    try:
        seen = seeker.run(
            "import os, torch\n"
            "print(hasattr(torch, 'PLANTED'), os.path.exists('/tmp/planted'),"
            " len([p for p in os.listdir('/proc') if p.isdigit()]))\n"
        )
    finally:
        seeker.end()
    assert seen.split() == ["False", "False", "3"]  # placeholder, parent, kernel


def test_a_dead_template_is_named():
    made = zygote.Template(sandbox.kernel_env(), ())
    made.process.kill()
    made.process.wait()
    with pytest.raises(zygote.TemplateDied):
        made.fork_into(os.getpid(), [], {}, None)
    made.stop()


def test_a_kernel_ends_with_its_template():
    """A grader that dies (its worker killed) leaves no sandbox behind: the template's
    children die with it, and the placeholder with the kernel's parent."""
    made = zygote.Template(sandbox.kernel_env(), ())
    kernel = Kernel(made)
    placeholder = os.pidfd_open(kernel.box.init)  # watched, not killed (as wait_gone would)
    made.process.kill()
    made.process.wait()
    ended = select.select([placeholder], [], [], 10)[0]
    os.close(placeholder)
    assert ended, "the sandbox outlived the template"
    kernel.client.stop_channels()
    kernel.outer.kill()
    kernel.outer.wait()
    made.stop()


def _sockets(pid: int) -> set[str]:
    """The sockets process ``pid`` holds open (``socket:[inode]``), as root reads them."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if link.startswith("socket:"):
                found.add(link)
    return found


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _ends(kernel: Kernel, within_s: float = 10) -> bool:
    """True when the kernel's sandbox ends by itself within ``within_s`` (not killed)."""
    placeholder = os.pidfd_open(kernel.box.init)
    ended = bool(select.select([placeholder], [], [], within_s)[0])
    os.close(placeholder)
    kernel.client.stop_channels()
    kernel.outer.kill()
    kernel.outer.wait()
    return ended


def test_workers_share_one_template_and_each_keeps_its_own_kernels():
    """The local pool's workers fork their kernels from one template (``shared``): each
    worker is answered by a fork of its own, a kernel holds no socket of the template's, and
    a worker that goes takes only its own kernels with it."""
    owner = zygote.Template(sandbox.kernel_env(), sandbox.PRELOAD, shared=True)
    workers = [zygote.SharedTemplate(owner.handle()) for _ in range(2)]
    kernels = [Kernel(w) for w in workers]
    try:
        reports = [json.loads(k.run(REPORT).strip().splitlines()[-1]) for k in kernels]
        answering = _children(owner.process.pid)
        assert len(answering) == 2, f"one fork of the template per worker: {answering}"
        template_side = _sockets(owner.process.pid).union(*map(_sockets, answering))
        for kernel in kernels:
            in_sandbox = [kernel.pid, *_children(kernel.pid)]  # the kernel's parent, the kernel
            assert len(in_sandbox) == 2
            held = set().union(*map(_sockets, in_sandbox))
            assert not held & template_side, "a socket of the template inside the sandbox"
        for report in reports:
            assert report["uid"] not in (0, os.getuid())
            assert set(report["caps"].values()) == {"0000000000000000"}
            assert report["processes"] == [1, 2, report["pid"]]
            assert report["grader_modules"] == [] and report["torch_ready"]
        assert reports[0]["random"] != reports[1]["random"]
        workers[0].stop()  # the first worker ends: its kernels end, the other's run on
        assert _ends(kernels[0]), "a gone worker's kernel outlived it"
        assert kernels[1].run("print(6 * 7)").strip() == "42"
        owner.stop()  # the grader ends: every kernel ends
        assert _ends(kernels[1]), "a kernel outlived the shared template"
    finally:
        owner.stop()
        for kernel in kernels:
            kernel.outer.kill()


def test_a_worker_whose_shared_template_died_forks_from_its_own(monkeypatch):
    from autograder.grading import execute

    owner = zygote.Template(sandbox.kernel_env(), (), shared=True)
    owner.wait_ready()
    execute.stop_template()
    execute.share_template(owner.handle())
    try:
        shared = execute.start_template()
        assert isinstance(shared, zygote.SharedTemplate)
        owner.stop()
        with pytest.raises(zygote.TemplateDied):
            shared.fork_into(os.getpid(), [], {}, None)
        own = execute.start_template()
        assert isinstance(own, zygote.Template) and own.alive()
    finally:
        execute.stop_template()
        owner.stop()


def test_no_shared_template_answering_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr(zygote.SharedTemplate, "CONNECT_S", 0.2)
    handle = {"address": str(tmp_path / "none.sock"), "cwd": "/tmp", "folders": []}
    with pytest.raises(zygote.TemplateDied, match="no kernel template answers"):
        zygote.SharedTemplate(handle).fork_into(os.getpid(), [], {}, None)


def test_a_forked_kernel_gets_only_the_allow_listed_environment(monkeypatch):
    monkeypatch.setenv("GRADER_SECRET_TOKEN", "s3cret")
    monkeypatch.setenv("MALLOC_TRIM_THRESHOLD_", "65536")  # as on a Dask worker
    made = zygote.Template(sandbox.kernel_env(), ())
    kernel = Kernel(made)
    try:
        seen = kernel.run("import os; print(sorted(os.environ))")
    finally:
        kernel.end()
        made.stop()
    assert "GRADER_SECRET_TOKEN" not in seen and "MALLOC_TRIM_THRESHOLD_" not in seen
    assert "PATH" in seen and "HOME" in seen


def test_a_sandbox_is_joined_only_once_bubblewrap_has_built_it():
    """bubblewrap's child builds the sandbox (mounts, new root) before it runs the
    placeholder: a kernel forked into it earlier saw a half-made file system (CI, under
    load: no /proc/sys, no Python extension modules)."""
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for _ in range(10):
            folder = Path(tempfile.mkdtemp(prefix="gk-"))
            outer = subprocess.Popen(sandbox.placeholder_argv(folder, [], MEMORY_MB))
            box = sandbox.Sandbox(outer.pid, placeholder=True)
            seen = Path(f"/proc/{box.kernel}/comm").read_text().strip()
            built = Path(box.outside_path("/proc/sys/kernel/cap_last_cap")).exists()
            outer.kill()
            outer.wait()
            box.wait_gone()
            assert seen != "bwrap" and built, (seen, built)
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
