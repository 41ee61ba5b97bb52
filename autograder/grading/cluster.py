"""Grade on the workers of a Dask cluster: ``grade SUBMISSIONS --out OUT --scheduler ADDRESS``.

The main process keeps everything the local run keeps (OUT, the class gradebook, resume);
only the grading itself moves. A task carries one notebook as bytes, its assignment and the
grading settings; the worker builds the assignment's scratch course once (as the main
process builds OUT's), grades the notebook with ``worker.grade_one`` in a folder of its own
and sends back the result data plus the autograded notebook and the feedback as bytes. The
main process writes those where a local job would have left them, so ``run._finish`` does
not know where a submission was graded.

Workers are checked at connect: a worker whose course sources, course version or torch
differ from this machine's, or whose sandbox cannot start, is refused by name.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.metadata
import importlib.util
import os
import platform
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from distributed.diagnostics.plugin import WorkerPlugin

from autograder import course
from autograder.grading import cgroups, inductor_headers, sandbox
from autograder.grading.gradebook import course_template, prepare_course
from autograder.grading.status import UsageError
from autograder.grading.worker import (
    Settings,
    compile_feedback_templates,
    grade_one,
    import_for_grading,
    kernel_check,
)

CONNECT_TIMEOUT_S = 5  # a scheduler that does not answer in this long is taken as absent
WORKERS_TIMEOUT_S = 30  # how long a scheduler with no worker yet is given for one to join
# A task that raised (its worker's disk, say) runs once more. A worker that dies mid-task is
# another matter: the scheduler reschedules its task by itself (its allowed-failures).
RETRIES = 1
# What a worker must share with this machine for its grades to be the same: what is compared.
COMPARED = {"version": "course version", "sources": "course sources", "torch": "torch"}
# The sources whose digest stands for the course: the grader, the helpers the kernels import
# and the solutions the worker builds its scratch course from.
SOURCE_DIRS = ("autograder", "tutorial_lib", "solutions")
SOURCE_SUFFIXES = (".py", ".ipynb")
# The grading cluster's Dask settings (DASK_CONFIG=this folder for the scheduler and workers):
# Dask's dashboard-minded polling, slowed down, leaves the CPU to the kernels.
CONFIG_DIR = Path(__file__).with_name("dask_config")


def sources_digest() -> str:
    """One digest of every course source file (path and content): two checkouts that differ
    anywhere in them differ here."""
    digest = hashlib.sha256()
    for folder in SOURCE_DIRS:
        files = sorted(
            p
            for p in (course.ROOT / folder).rglob("*")
            if p.suffix in SOURCE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts
        )
        for path in files:
            digest.update(str(path.relative_to(course.ROOT)).encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _course_version() -> str:
    """``tutorial_lib.__version__``, read from its source: importing it would import torch."""
    origin = importlib.util.find_spec("tutorial_lib").origin
    for node in ast.parse(Path(origin).read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            return str(ast.literal_eval(node.value))
    return "unknown"


def fingerprint(
    memory_mb: int = 0, disk_mb: int = 0, gpu: bool | None = None, sandboxed: bool = False
) -> dict:
    """What this machine grades with; with ``sandboxed``, also whether its sandbox starts
    (None when it does, else why not)."""
    sources = sources_digest()
    _STATE.sources = sources  # on a worker: what its tasks compare with the grading machine's
    trouble = None
    if sandboxed:
        if not sandbox.available():
            trouble = "bubblewrap (bwrap) is not installed"
        else:
            trouble = sandbox.check(
                memory_mb, sandbox.gpu_visible() if gpu is None else gpu, disk_mb
            )
    return {
        "version": _course_version(),
        "sources": sources,
        "torch": importlib.metadata.version("torch"),
        "host": platform.node(),
        "sandbox": trouble,
        # None where each sandbox gets a control group, else why not (per-process limits)
        "cgroups": cgroups.unavailable() if sandboxed else None,
    }


def connect(address: str):
    """A client of the scheduler at ``address`` that has at least one worker, or a UsageError."""
    from distributed import Client

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as err:
        raise UsageError(
            f"no Dask scheduler answers at {address} (waited {CONNECT_TIMEOUT_S} s: {err}); "
            "start one with `dask scheduler` and give its address, tcp://HOST:8786"
        ) from None
    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT_S)
    except TimeoutError:
        client.close()
        raise UsageError(
            f"the Dask scheduler at {address} has no workers (waited {WORKERS_TIMEOUT_S} s); "
            f"start them with `dask worker {address} --nworkers 1 --nthreads 1`"
        ) from None
    return client


def check_workers(client, opts) -> dict:
    """Refuse, naming each worker and what differs, a cluster that would not grade as this
    machine does; return this machine's fingerprint."""
    for attempt in range(2):
        mine = fingerprint()
        theirs = client.run(
            fingerprint, opts.memory_mb, opts.disk_mb, opts.gpu, opts.sandboxed, on_error="return"
        )
        # A checkout being saved while the two were read differs only for that moment: a
        # second look, a moment later, tells an edit in progress from another version.
        if attempt or all(
            isinstance(f, BaseException) or f["sources"] == mine["sources"] for f in theirs.values()
        ):
            break
        time.sleep(2)
    problems = []
    for address, found in sorted(theirs.items()):
        if isinstance(found, BaseException):  # the course is not installed there, say
            problems.append(f"worker {address}: cannot run the course's code: {found!r}")
            continue
        differences = [
            f"{what} {found[key]} (here {mine[key]})"
            for key, what in COMPARED.items()
            if found[key] != mine[key]
        ]
        if found["sandbox"]:
            differences.append(f"its sandbox cannot start: {found['sandbox']}")
        if found["cgroups"]:  # it grades, as a local run without control groups does
            print(
                f"warning: worker {address} ({found['host']}): {found['cgroups']}; its kernels "
                "get the --memory and process limits per process",
                file=sys.stderr,
            )
        if differences:
            problems.append(f"worker {address} ({found['host']}): " + "; ".join(differences))
    if problems:
        raise UsageError(
            "refusing to grade on this cluster: every worker needs this checkout's course "
            "(same sources), the same torch and a working bubblewrap.\n  " + "\n  ".join(problems)
        )
    return mine


@contextlib.contextmanager
def executor(opts, assignments: list[str]):
    """A ``concurrent.futures`` executor whose tasks run on the cluster's checked workers."""
    client = connect(opts.scheduler)
    try:
        mine = check_workers(client, opts)
        # Workers import and build their scratch courses now, while this process prepares
        # OUT; a worker that joins later gets the same set-up when it registers.
        plugin = WarmUp(assignments, mine["sources"])
        client.register_plugin(plugin, name="autograder-grading")
        pool = client.get_executor(retries=RETRIES, pure=False)
        pool.client = client  # check_kernels asks every worker, not one
        try:
            yield pool
        finally:
            pool.shutdown(wait=False)  # cancels what has not run: Ctrl-C must not wait
    finally:
        client.close()


def check_kernels(pool, settings: Settings, gpu: bool | None) -> None:
    """Refuse, naming each, workers that cannot start a kernel as grading will (their sandbox,
    their temporary folders): checked once per worker before anyone is graded."""
    found = pool.client.run(kernel_check_here, settings, gpu, on_error="return")
    problems = [
        f"worker {address}: {why!r}"
        if isinstance(why, BaseException)
        else f"worker {address}: {why}"
        for address, why in sorted(found.items())
        if why is not None
    ]
    if problems:
        raise UsageError(
            "refusing to grade on this cluster: these workers cannot start a kernel, so "
            "nobody was graded.\n  " + "\n  ".join(problems)
        )


def submit(pool, student: str, assignment: str, path: Path, settings: Settings, gpu):
    """Send one notebook, as bytes, to the cluster; ``gpu`` None lets each worker decide."""
    return pool.submit(grade_remote, student, assignment, path.read_bytes(), settings, gpu)


def unpack(data: dict, work: Path) -> dict:
    """Write a remote result's files under ``work`` (OUT/.work/...) and put their paths where
    a local job's result has them, so the main process records both alike."""
    work.mkdir(parents=True, exist_ok=True)
    for key, name in (("autograded", "autograded.ipynb"), ("feedback", "feedback.html")):
        blob = data.get(key)
        if blob is not None:
            (work / name).write_bytes(blob)
            data[key] = str(work / name)
    log = data.pop("log", None)
    if log is not None:
        (work / "nbgrader.log").write_bytes(log)
    return data


# ---- on a worker ------------------------------------------------------------------------


class _WorkerState:
    """What one worker process keeps between tasks: its folder, its scratch courses."""

    def __init__(self) -> None:
        self.lock = threading.Lock()  # one builder of templates at a time
        self.root: Path | None = None
        # Inside the Dask worker's own scratch space: when a killed worker's successor
        # starts, Dask purges the dead one's folder, this one included.
        self.base: str | None = None
        self.templates: dict[str, Path] = {}
        self.expected: str | None = None  # the main process's sources digest
        self.sources: str | None = None  # this worker's, taken at the connect's check

    def folder(self) -> Path:
        if self.root is None:
            self.root = Path(tempfile.mkdtemp(prefix="ag-dask-", dir=self.base))
        return self.root


_STATE = _WorkerState()


class WarmUp(WorkerPlugin):
    """Set each worker up at connect: one torch thread, the imports, the scratch courses.

    In a thread of its own: ``setup`` runs on the worker's event loop, which must stay free
    to answer the scheduler. Not ``worker.warm_up``: that installs a signal handler and an
    exit hook for the local pool's processes, and a Dask task runs outside the main thread.
    """

    def __init__(self, assignments: list[str], expected: str) -> None:
        self.assignments = list(assignments)
        self.expected = expected

    def setup(self, worker) -> None:
        # Grading runs the hidden checks in this process: one thread, as a local job has.
        os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
        with _STATE.lock:
            # A new grading run: the checkout may have changed since the last, so the
            # scratch courses are made again (the digest was taken by the connect's check).
            _STATE.templates.clear()
            _STATE.expected = self.expected
            _STATE.base = getattr(worker, "local_directory", None)
        threading.Thread(
            target=_warm,
            args=(self.assignments,),
            name="autograder-warm-up",
            daemon=True,
        ).start()

    def teardown(self, worker) -> None:
        from autograder.grading import preprocessor

        # The kernels started ahead for this run's next submissions.
        done = threading.Thread(target=preprocessor.discard_spares, daemon=True)
        done.start()
        done.join(10)
        # Also called when the next grading run registers its own set-up: start afresh.
        with _STATE.lock:
            if _STATE.root is not None:
                shutil.rmtree(_STATE.root, ignore_errors=True)
            _STATE.root = None
            _STATE.templates.clear()


def _warm(assignments: list[str]) -> None:
    import_for_grading(assignments)
    for assignment in assignments:
        _template_for(assignment)


def dask_setup(worker) -> None:
    """``dask worker ... --preload autograder.grading.cluster``: a worker warms up as it
    starts, not when a grading run reaches it: it imports what grading needs (about 3.5 s)
    before it registers. Without the preload, each run's ``WarmUp`` does it at connect.
    """
    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    import_for_grading(course.lessons())
    compile_feedback_templates()
    inductor_headers.ensure_built()  # once per machine and torch installation


def _own_sources() -> str:
    with _STATE.lock:
        if _STATE.sources is None:
            _STATE.sources = sources_digest()
        return _STATE.sources


def _template_for(assignment: str) -> Path:
    """The assignment's scratch course on this worker, built once per grading run with the
    same functions that build OUT's."""
    with _STATE.lock:
        template = _STATE.templates.get(assignment)
        if template is None:
            scratch = _STATE.folder() / "course"
            prepare_course(scratch, [assignment])
            template = course_template(scratch, assignment)
            _STATE.templates[assignment] = template
        return template


def settings_here(settings: Settings, gpu: bool | None) -> Settings:
    """The grading settings as this worker applies them: the main machine's OUT and
    submissions are not here, so the kernel is kept from this worker's own folder (scratch
    courses, every job's files) instead; and its own GPU, unless the run decided."""
    return replace(
        settings,
        # One folder for every job: a kernel started ahead for the next job, or by the
        # connect's kernel check, has the same sandbox, so that job can use it.
        hide=[str(_STATE.folder())],
        gpu=sandbox.gpu_visible() if gpu is None else gpu,
    )


def kernel_check_here(settings: Settings, gpu: bool | None) -> str | None:
    """``kernel_check`` with the settings this worker grades with: the kernel it starts ahead
    is then the one its first submission runs in, not a spare no job can use (its sandbox
    hid other folders), which left that submission a cold kernel (torch imported in its
    first cell, its cells near a short --timeout on a busy machine) and cost a kernel's start."""
    return kernel_check(settings_here(settings, gpu))


def grade_remote(
    student: str, assignment: str, notebook: bytes, settings: Settings, gpu: bool | None
) -> dict:
    """The cluster's task: grade one notebook given as bytes; return ``grade_one``'s dict with
    the autograded notebook, the feedback and nbgrader's log as bytes instead of paths."""
    # A worker that joined after the connect-time check is checked here, before it grades.
    if _STATE.expected is not None and _own_sources() != _STATE.expected:
        raise RuntimeError(
            f"worker on {platform.node()} has other course sources than the grading machine; "
            "install the same checkout there"
        )
    import_for_grading([assignment])
    template = _template_for(assignment)
    root = _STATE.folder()
    (root / "jobs").mkdir(exist_ok=True)
    job = Path(tempfile.mkdtemp(prefix="job-", dir=root / "jobs"))
    try:
        submitted = job / f"{assignment}.ipynb"
        submitted.write_bytes(notebook)
        here = settings_here(settings, gpu)
        data = grade_one(student, assignment, str(submitted), str(template), str(job / "w"), here)
        for key in ("autograded", "feedback"):
            data[key] = Path(data[key]).read_bytes() if data.get(key) else None
        log = job / "w" / "nbgrader.log"
        data["log"] = log.read_bytes() if log.is_file() else None
        return data
    finally:
        shutil.rmtree(job, ignore_errors=True)
