"""Grade a class: validate, grade in parallel jobs, merge into the gradebook, write feedback.

``OUT`` is itself an nbgrader course (``source/``, ``submitted/``, ``autograded/``,
``feedback/``, ``gradebook.db``, ``nbgrader_config.py``), so formgrader can open it for
manual review. Each finished submission is saved at once in ``OUT/results/``; a re-run
keeps those whose notebook has not changed (unless ``force``), so an interrupted run
resumes without losing grades.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import os
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from autograder import course
from autograder.grading import cgroups, inductor_headers, sandbox
from autograder.grading.gradebook import ClassGradebook, course_template, prepare_course
from autograder.grading.status import GRADED, Status, UsageError, has_score
from autograder.grading.submissions import discover, max_points
from autograder.grading.worker import (
    Result,
    Settings,
    grade_one,
    grader_error,
    kernel_check,
    warm_up,
)
from autograder.nbgrader_settings import CELL_TIMEOUT_S, SUBMISSION_TIMEOUT_S

MIN_MEMORY_MB = 4096  # this CUDA build of torch maps 3.2 GB of addresses, torchvision 0.3 GB
MIN_DISK_MB = 64


@dataclass
class GradeOptions:
    submissions: Path
    out: Path
    assignments: list[str] | None = None
    jobs: int = os.cpu_count() or 1
    timeout_s: int = CELL_TIMEOUT_S
    memory_mb: int = sandbox.MEMORY_MB
    disk_mb: int = sandbox.DISK_MB
    submission_timeout_s: int = SUBMISSION_TIMEOUT_S
    force: bool = False
    sandboxed: bool = True
    progress: bool = True
    gpu: bool | None = None  # None: kernels use a GPU when the machine has one
    # A Dask scheduler's address (tcp://HOST:8786): grade on its workers instead of here.
    scheduler: str | None = None
    # Start each worker's next kernel while it grades (sandboxed kernels; worker.Settings).
    warm: bool = True
    # Without the sandbox (bubblewrap cannot start in a platform's container), a root
    # grader runs each kernel as this user instead of as itself.
    run_as_uid: int | None = None


def validate(opts: GradeOptions) -> None:
    """Raise ``UsageError`` with a clear message for every mistake in the options."""
    if not opts.submissions.exists():
        raise UsageError(f"submissions folder {opts.submissions} does not exist")
    if not opts.submissions.is_dir():
        raise UsageError(
            f"{opts.submissions} is not a folder: give the folder that holds "
            "<student>/<assignment>/<notebook>.ipynb"
        )
    if opts.assignments:
        unknown = sorted(set(opts.assignments) - set(course.lessons()))
        if unknown:
            raise UsageError(
                f"unknown assignment {', '.join(unknown)}; known: {', '.join(course.lessons())}"
            )
    if opts.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if opts.timeout_s < 1:
        raise UsageError("--timeout must be at least 1 second")
    if opts.memory_mb < MIN_MEMORY_MB:
        raise UsageError(
            f"--memory must be at least {MIN_MEMORY_MB} MiB: torch needs that to import"
        )
    if opts.disk_mb < MIN_DISK_MB:
        raise UsageError(f"--disk must be at least {MIN_DISK_MB} MiB")
    if opts.submission_timeout_s < 1:
        raise UsageError("--submission-timeout must be at least 1 second")
    if opts.run_as_uid is not None and (opts.sandboxed or not sandbox.as_root()):
        raise UsageError(
            "run_as_uid is for a root grader without the sandbox (a platform's container)"
        )
    # On a cluster, student code runs on the workers: their sandboxes are checked at connect.
    if opts.sandboxed and not opts.scheduler and not sandbox.available():
        raise UsageError(
            "bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt-get install "
            "bubblewrap) or pass --no-sandbox to grade trusted submissions without isolation"
        )
    if opts.sandboxed and not opts.scheduler:
        _check_containment(opts)
    out, subs = opts.out.resolve(), opts.submissions.resolve()
    if out == subs or subs in out.parents:
        raise UsageError("--out must not be inside the submissions folder")
    if out in subs.parents:
        raise UsageError(
            "the submissions folder must not be inside --out: the grade command writes "
            "OUT/submitted itself; grade a copy of the submissions into another folder"
        )


def _check_containment(opts: GradeOptions) -> None:
    """Stop, saying why, where the sandbox cannot start: never grade unconfined by accident."""
    gpu = sandbox.gpu_visible() if opts.gpu is None else opts.gpu
    trouble = sandbox.check(opts.memory_mb, gpu, opts.disk_mb)
    if trouble is None:
        return
    hint = ""
    if not sandbox.as_root():
        hint = (
            " It needs user namespaces, which this machine refuses to this user (see "
            "sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, or on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns); or run the grader as root."
        )
    raise UsageError(
        f"the sandbox cannot start here, so student code would run unconfined: {trouble}."
        f"{hint} Pass --no-sandbox only to grade trusted notebooks without isolation."
    )


def _say_which_limits(progress: bool) -> None:
    """Per-submission limits come from control groups; where there are none, say so."""
    why_not = cgroups.unavailable()
    if why_not is not None:
        print(
            f"warning: {why_not}; each kernel process gets the --memory and process limits "
            "on its own, and submissions share the CPU unevenly",
            file=sys.stderr,
        )
    elif progress:
        print(
            "limits per submission: a control group each (memory, processes, CPU share)",
            file=sys.stderr,
        )


def saved_results(out: Path) -> list[dict]:
    """Every result saved in ``OUT/results``, from this run and earlier ones: the class's record."""
    paths = sorted((out / "results").glob("*/*.json"))
    return [json.loads(p.read_text()) for p in paths]


def _result_path(out: Path, student: str, assignment: str) -> Path:
    return out / "results" / assignment / f"{student}.json"


def _save_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)  # atomic: an interrupted run never leaves half a result


def grade(opts: GradeOptions) -> list[dict]:
    """Grade every submission; return one result dict per (student, assignment)."""
    validate(opts)
    out = opts.out.resolve()
    with _only_run_on(out):
        return _grade(opts, out)


@contextlib.contextmanager
def _only_run_on(out: Path):
    """Refuse a second grade run on the same OUT while one is going (they would clash)."""
    import fcntl

    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".grade.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"another grade run is using {out}; wait for it to finish") from None
        yield


def _grade(opts: GradeOptions, out: Path) -> list[dict]:
    subs = _discover(opts)
    assignments = sorted({s.assignment for s in subs})
    results: dict[tuple[str, str], dict] = {}
    todo, unusable = [], []
    for s in subs:
        earlier = None if opts.force else _graded_earlier(out, s)
        if earlier is not None:
            results[s.student, s.assignment] = earlier
        elif s.status != Status.OK:
            unusable.append(s)  # looked at again on every run: it may have been fixed
        else:
            todo.append(s)
    if results and opts.progress:
        print(
            f"graded before and unchanged, kept: {len(results)} (--force grades them again)",
            file=sys.stderr,
        )
    os.environ.update({"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})  # one per job
    if todo and not opts.scheduler and (opts.sandboxed or opts.run_as_uid is not None):
        _say_which_limits(opts.progress)
    # The workers start first and import nbgrader and torch while this process prepares the
    # course: the fixed costs overlap.
    with _worker_pool(opts, todo, assignments) as pool:
        if opts.sandboxed and not opts.scheduler:  # before any kernel starts (cluster: its own)
            inductor_headers.ensure_built_for([s.assignment for s in todo])
        prepare_course(out, assignments)
        gradebook = ClassGradebook(out)
        for s in unusable:
            result = Result(s.student, s.assignment, s.status, message=s.message)
            result.max_score = max_points(s.assignment)
            results[s.student, s.assignment] = _finish(out, result.to_dict(), None, gradebook)
        if todo:
            # A cluster's workers build their own, from the same solutions (cluster.py).
            templates = {} if opts.scheduler else {a: course_template(out, a) for a in assignments}
            settings = Settings(
                timeout_s=opts.timeout_s,
                memory_mb=opts.memory_mb,
                disk_mb=opts.disk_mb,
                submission_timeout_s=opts.submission_timeout_s,
                sandboxed=opts.sandboxed,
                hide=[str(out), str(opts.submissions.resolve())],
                gpu=sandbox.gpu_visible() if opts.gpu is None else opts.gpu,
                run_as_uid=None if opts.sandboxed else opts.run_as_uid,
                # A kernel started ahead is wasted where no worker grades a second notebook.
                warm=opts.warm and (bool(opts.scheduler) or len(todo) > opts.jobs),
            )
            _check_kernels_start(pool, settings, opts)
            _run_jobs(pool, out, todo, templates, settings, opts, results, gradebook)
        gradebook.close()
    ordered = [results[s.student, s.assignment] for s in subs]
    shutil.rmtree(out / ".work", ignore_errors=True)
    return ordered


def _discover(opts: GradeOptions) -> list:
    """The submissions, or a ``UsageError`` when the folder is not laid out as expected."""
    root = opts.submissions.resolve()
    expected = f"{root}/<student>/<assignment>/<notebook>.ipynb"
    subs = discover(root, opts.assignments)
    if not subs:
        raise UsageError(f"no submissions found in {root}: expected {expected}")
    misplaced = sorted({s.student for s in subs} & set(course.lessons()))
    if misplaced:
        raise UsageError(
            f"{root} has a folder named like a lesson ({', '.join(misplaced)}) where student "
            f"folders belong: expected {expected}"
        )
    return subs


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _graded_earlier(out: Path, s) -> dict | None:
    """The saved result of this very notebook, if it was graded; None means grade it now.

    Only graded results are kept: a submission that was missing, invalid or hit a grader
    error is looked at again, and a notebook that changed since is graded again.
    """
    saved = _result_path(out, s.student, s.assignment)
    if s.status != Status.OK or not saved.is_file():
        return None
    data = json.loads(saved.read_text())
    if data.get("status") not in GRADED or data.get("sha256") != _digest(s.path):
        return None
    return data


@contextlib.contextmanager
def _worker_pool(opts: GradeOptions, todo: list, assignments: list[str]):
    """A pool of ``jobs`` worker processes (fewer for a small batch), started ready to grade;
    or, with a scheduler, the Dask cluster's workers behind the same executor interface."""
    if not todo:
        yield None
        return
    if opts.scheduler:
        from autograder.grading import cluster  # imports distributed: only when asked for

        with cluster.executor(opts, assignments) as pool:
            yield pool
        return
    workers = min(opts.jobs, len(todo))
    # Workers start from nothing (spawn: no state of this process, which may hold threads)
    # and each imports what grading needs once; they are reused across submissions, while
    # the kernels themselves are fresh per submission.
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=warm_up,
        # this process's environment now (OMP_NUM_THREADS set above)
        initargs=(assignments, dict(os.environ)),
    ) as pool:
        yield pool


def _check_kernels_start(pool, settings: Settings, opts: GradeOptions) -> None:
    """Start one kernel where the submissions will be graded, before grading anyone: a grader
    that cannot (its sandbox, its temporary folders) stops here with the reason (a
    ``UsageError``, status 2) rather than writing a row of grader errors for every student."""
    if opts.scheduler:
        from autograder.grading import cluster

        cluster.check_kernels(pool, settings, opts.gpu)
        return
    trouble = pool.submit(kernel_check, settings).result()
    if trouble:
        raise UsageError(f"kernels cannot start here, so nobody was graded: {trouble}")


def _run_jobs(pool, out, todo, templates, settings, opts, results, gradebook) -> None:
    """Send every submission to the pool; record each result as it comes back. A submission
    the grader failed on (``grader-error``) is sent once more: a transient failure (a worker
    that died, a busy machine) should not leave a student without a grade."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from tqdm.auto import tqdm

    remote = None
    if opts.scheduler:
        from autograder.grading import cluster as remote

    # The submissions sent last, one per worker: no next submission for their spare kernels.
    last = {(s.student, s.assignment) for s in todo[-opts.jobs :]} if not remote else set()

    def send(s):
        if remote:
            return remote.submit(pool, s.student, s.assignment, s.path, settings, opts.gpu)
        work = out / ".work" / s.assignment / s.student
        return pool.submit(
            grade_one,
            s.student,
            s.assignment,
            str(s.path),
            str(templates[s.assignment]),
            str(work),
            replace(settings, start_next=(s.student, s.assignment) not in last),
        )

    pending = {send(s): (s, 0) for s in todo}
    bar = tqdm(total=len(pending), desc="grading", unit="nb", disable=not opts.progress)
    while pending:
        done, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in done:
            s, tries = pending.pop(future)
            try:
                data = future.result()
                if remote:  # the files came back as bytes: write them where a local job would
                    data = remote.unpack(data, out / ".work" / s.assignment / s.student)
            except Exception as err:  # a worker that broke must not lose the batch
                why = f"the grading worker failed: {type(err).__name__}: {err}"
                data = grader_error(s.student, s.assignment, why).to_dict()
            if data["status"] == Status.GRADER_ERROR and tries == 0:
                pending[send(s)] = (s, 1)  # once more, in a fresh kernel
                continue
            results[s.student, s.assignment] = _finish(out, data, s.path, gradebook)
            bar.update(1)
    bar.close()


def _finish(out: Path, data: dict, submitted: Path | None, gradebook: ClassGradebook) -> dict:
    """Record one result: gradebook, autograded copy, feedback, and the saved JSON."""
    autograded = data.pop("autograded", None)
    feedback = data.pop("feedback", None)
    if submitted:
        data["sha256"] = _digest(submitted)  # what was graded: a changed notebook is re-graded
    # A grader error's notebook and feedback would show a zero the student did not earn.
    if autograded and submitted and has_score(data["status"]):
        student, assignment = data["student"], data["assignment"]
        copies = {
            autograded: out / "autograded" / student / assignment / f"{assignment}.ipynb",
            submitted: out / "submitted" / student / assignment / f"{assignment}.ipynb",
        }
        if feedback:
            copies[feedback] = out / "feedback" / student / assignment / f"{assignment}.html"
        else:
            data["message"] = (
                data.get("message", "") + " (no feedback could be generated)"
            ).strip()
        for source, dest in copies.items():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, dest)
        gradebook.record(data)
    _save_json(_result_path(out, data["student"], data["assignment"]), data)
    return data
