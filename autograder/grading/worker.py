"""Grade one submission: a scratch nbgrader course, nbgrader's autograde, a plain-data result.

Runs in a worker process; everything it returns is plain data (a dict), so the main process
can save it, merge it into the class gradebook and write feedback.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder import course, judge, notebook
from autograder.grading import sandbox
from autograder.grading.preprocessor import (
    HIDDEN_CHECK_FAILED,
    KERNEL_DIED,
    NOTEBOOK_OUTPUT_CUT,
    OUT_OF_MEMORY,
    SUBMISSION_TIMEOUT,
    TOO_MANY_CELLS,
    VERDICT_KEY,
)
from autograder.grading.status import Status
from autograder.grading.submissions import max_points, read_notebook
from autograder.nbgrader_course import course_config
from autograder.nbgrader_settings import KERNEL_SHUTDOWN

TIMEOUT, CRASHED, MEMORY = Status.TIMEOUT, Status.CRASHED, Status.MEMORY
DISK, PROCESSES, OUTPUT = Status.DISK, Status.PROCESSES, Status.OUTPUT
BUDGET = "budget"  # a kind of trouble, not a status: the submission's budget ran out (timeout)


@dataclass
class Settings:
    timeout_s: int
    memory_mb: int
    sandboxed: bool
    hide: list[str]  # folders the kernel must not see (submissions, output)
    gpu: bool = False
    disk_mb: int = sandbox.DISK_MB  # the kernel's writable /tmp
    submission_timeout_s: int = 0  # the whole notebook's wall-clock budget (0: none)
    # Start the next submission's kernel while this one runs (sandboxed kernels only).
    warm: bool = True
    # False for the submissions sent last, one per worker: no spare is started after them,
    # where no submission is left to use it (it only cost its start and its teardown).
    start_next: bool = True
    # Without the sandbox, a root grader's kernels run as this user (a platform's container).
    run_as_uid: int | None = None


@dataclass
class TestResult:
    exercise: str  # the answer's grade_id, e.g. "to_nchw"
    test_id: str
    score: float
    max_score: float
    passed: bool
    message: str = ""
    misconception: str = ""  # the catalogued mistake this answer behaves like, if any
    caught_by: str = ""  # "visible" or "hidden": which checks failed it ("" when it passed)


@dataclass
class Result:
    student: str
    assignment: str
    status: str
    score: float | None = 0.0  # None: a grader error, no score at all (never a zero)
    max_score: float = 0.0
    message: str = ""
    seconds: float = 0.0
    # The grading worker's own peak memory while it graded this submission, in MiB (None
    # where the system cannot say): however much a notebook prints, it stays bounded.
    grader_peak_mb: int | None = None
    tests: list[TestResult] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def grader_error(student: str, assignment: str, why: str) -> Result:
    """The row of a submission the grader could not grade: no score, the reason, the maximum."""
    return Result(
        student, assignment, Status.GRADER_ERROR, None, max_points(assignment), message=why
    )


def import_for_grading(assignments: list[str]) -> None:
    """Import what grading needs (nbgrader, torch, the lessons' checks) before work arrives."""
    import importlib

    import nbgrader.apps
    import nbgrader.preprocessors  # noqa: F401
    from sqlalchemy.exc import SAWarning

    # nbgrader's own add_submission trips SQLAlchemy's autoflush warning on every
    # submission: harmless, and it would fill the instructor's terminal.
    warnings.filterwarnings("ignore", category=SAWarning, module=r"nbgrader\.")

    import autograder.grading.preprocessor  # noqa: F401

    for assignment in assignments:
        importlib.import_module(f"autograder.hidden.{course.topic(assignment)}")
    _keep_compiled_templates()


def _keep_compiled_templates() -> None:
    """Compile nbconvert's feedback templates once per worker, not once per submission.

    nbgrader makes a new HTML exporter, and with it a new Jinja environment, for every
    feedback file; compiling its templates again was about a third of the feedback's time
    (cProfile of grade_one on 00_welcome). A bytecode cache is Jinja's own way to reuse
    them: it keys each template by name and checks its source's checksum on every load.
    """
    from jinja2 import BytecodeCache
    from nbconvert.exporters.templateexporter import TemplateExporter

    if getattr(TemplateExporter._create_environment, "keeps_compiled", False):
        return

    class InMemory(BytecodeCache):
        def __init__(self):
            self.compiled: dict[str, bytes] = {}

        def load_bytecode(self, bucket) -> None:
            if bucket.key in self.compiled:
                bucket.bytecode_from_string(self.compiled[bucket.key])

        def dump_bytecode(self, bucket) -> None:
            self.compiled[bucket.key] = bucket.bytecode_to_string()

    create, cache = TemplateExporter._create_environment, InMemory()

    def create_with_cache(self):
        environment = create(self)
        environment.bytecode_cache = cache
        return environment

    create_with_cache.keeps_compiled = True
    TemplateExporter._create_environment = create_with_cache


def compile_feedback_templates() -> None:
    """Render one notebook (00_welcome's solution) as nbgrader's feedback does, and throw it
    away: the feedback templates' bytecode (``_keep_compiled_templates``) and the regular
    expressions of nbconvert's filters are then compiled in this process and every fork of
    it. Without this, a worker's first feedback file cost 0.8 s instead of 0.2 s (measured).
    """
    from nbconvert.exporters import HTMLExporter
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory

    _keep_compiled_templates()
    converter = GenerateFeedback(coursedir=CourseDirectory())
    nb = notebook.read(course.solution_notebook(course.lessons()[0]))
    for cell in nb.cells:  # the grade cells as nbgrader's GetGrades leaves them: scored
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            meta["score"] = meta.get("points", 0)
    scores = {"notebook": "warm-up", "score": 0, "max_score": 0, "late_penalty": 0}
    HTMLExporter(config=converter.config).from_notebook_node(nb, {"nbgrader": scores})


def warm_up(assignments: list[str], environ: dict | None = None) -> None:
    """Each local worker's initializer: the grade command's environment (``environ``), the
    imports, and a quick exit (its main thread)."""
    if environ is not None:
        os.environ.clear()
        os.environ.update(environ)
    import_for_grading(assignments)
    atexit.register(_exit_now)
    # A pool's worker leaves through multiprocessing's own exit, which runs its finalizers,
    # not atexit: there, too, no kernel started ahead, nor its folder, may stay behind.
    from multiprocessing.util import Finalize

    from autograder.grading.preprocessor import discard_spares

    Finalize(None, discard_spares, exitpriority=100)
    # Ctrl-C reaches the workers too: the main process says what was saved; a worker just goes.
    signal.signal(signal.SIGINT, lambda *_: _exit_now())


def _exit_now() -> None:
    """End the worker without Python's teardown of torch and nbgrader (about 1 s, measured).

    A worker's results have all gone back through the pool's queue and its kernels are
    already killed; nothing is left to flush but the standard streams. Exit handlers run
    last-registered first: registered after the imports, this one ends the process before
    theirs would start tearing things down.
    """
    preprocessor = sys.modules.get("autograder.grading.preprocessor")
    if preprocessor is not None:  # a kernel started ahead for a submission that never came,
        preprocessor.discard_spares()  # and its folder with the connection key: both go
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def execute_settings(settings: Settings) -> dict:
    """``GradingExecute``'s options for these settings: grading and the kernel check alike."""
    return {
        "timeout": settings.timeout_s,
        "shutdown_kernel": KERNEL_SHUTDOWN,
        "memory_mb": settings.memory_mb,
        "disk_mb": settings.disk_mb,
        "submission_timeout": settings.submission_timeout_s,
        "sandboxed": settings.sandboxed,
        "run_as_uid": settings.run_as_uid,
        "hide": settings.hide,
        "gpu": settings.gpu,
        "warm_spare": settings.warm,
        "start_next_spare": settings.start_next,
    }


def grading_config(root: Path, assignment: str, settings: Settings):
    """The nbgrader config for one scratch course: the course's settings plus the sandbox."""
    from autograder.grading.preprocessor import GradingExecute

    config = course_config(root)
    config.Autograde.autograde_preprocessors = [
        GradingExecute if p.__name__ == "Execute" else p
        for p in config.Autograde.autograde_preprocessors
    ]
    for name, value in execute_settings(settings).items():
        setattr(config.GradingExecute, name, value)
    config.GradingExecute.lesson = assignment
    config.GradingExecute.checks = {
        test_id: [spec.exercise, spec.topic, spec.check, list(spec.args)]
        for test_id, spec in judge.specs(assignment).items()
    }
    return config


def kernel_check(settings: Settings) -> str | None:
    """Start a kernel exactly as grading does and run one line in it: None, or why it cannot.

    Run once before anyone is graded, so that a grader whose kernels cannot start (a sandbox
    that fails, a temporary folder it cannot use) stops with the reason, instead of giving
    every student a row that says it could not grade them.
    """
    import tempfile

    import nbformat

    from autograder.grading.preprocessor import GradingExecute

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    # As grading starts them; the spare it starts is the first submission's kernel.
    options = {**execute_settings(settings), "submission_timeout": 0}
    execute = GradingExecute(**{**options, "timeout": max(60, settings.timeout_s)})
    with tempfile.TemporaryDirectory(prefix="kernel-check-") as cwd:
        try:
            nb, _ = execute.preprocess(nb, {"metadata": {"path": cwd}})
        except Exception as err:  # whatever stopped it is the reason, said once, up front
            return f"{type(err).__name__}: {err}"
    outputs = nb.cells[0].outputs
    if any(o.get("output_type") == "stream" and o.get("text", "").strip() == "42" for o in outputs):
        return None
    errors = [f"{o.ename}: {o.evalue}" for o in outputs if o.get("output_type") == "error"]
    return "the kernel started but did not run a line of code" + (
        f" ({errors[0]})" if errors else ""
    )


def grade_one(
    student: str, assignment: str, notebook_path: str, template: str, work: str, settings: Settings
) -> dict:
    """Autograde one notebook; return ``Result.to_dict()`` plus the autograded notebook's path."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    start = time.perf_counter()
    _reset_peak_memory()
    root = Path(work)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(template, root)  # source/<assignment> and a gradebook that knows it
    target = root / "submitted" / student / assignment / f"{assignment}.ipynb"
    target.parent.mkdir(parents=True)
    nb = read_notebook(Path(notebook_path))  # never through a link
    _trust_only_the_lessons_cells(nb, notebook.read(course.solution_notebook(assignment)))
    notebook.write(nb, target)
    config = grading_config(root, assignment, settings)
    api = NbGraderAPI(CourseDirectory(config=config), config=config)
    outcome = api.autograde(assignment, student, force=True, create=True)
    graded = root / "autograded" / student / assignment / f"{assignment}.ipynb"
    if not outcome["success"] or not graded.is_file():
        log = "\n".join(filter(None, [outcome.get("log"), outcome.get("error")]))
        (root / "nbgrader.log").write_text(log)  # kept for the instructor: OUT/logs/
        errors = [line.strip() for line in log.splitlines() if "Error" in line or "ERROR" in line]
        why = (" | ".join(errors[-4:]) or log[-500:])[-800:]
        result = grader_error(student, assignment, f"nbgrader failed: {why}")
    else:
        result = _result_from(student, assignment, graded)
    feedback = None
    # Feedback is written here, in parallel, from the scratch gradebook's scores.
    if graded.is_file() and api.generate_feedback(assignment, student, force=True)["success"]:
        feedback = root / "feedback" / student / assignment / f"{assignment}.html"
    result.seconds = time.perf_counter() - start
    result.grader_peak_mb = _peak_memory_mb()
    return {
        **result.to_dict(),
        "autograded": str(graded) if graded.is_file() else None,
        "feedback": str(feedback) if feedback and feedback.is_file() else None,
    }


def _reset_peak_memory() -> None:
    """Start this process's peak resident memory (VmHWM) afresh: Linux's clear_refs."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _peak_memory_mb() -> int | None:
    """This process's peak resident memory since the last reset, in MiB (Linux only)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(found[1]) // 1024 if found else None


def _trust_only_the_lessons_cells(nb, source) -> None:
    """Trust the notebook's nbgrader metadata only where it names one of the lesson's own
    cells, of the same type, once; any other claim (an unknown or malformed ``grade_id``, a
    code cell's id on a markdown cell, a second copy) becomes an ordinary cell. The kernel
    named is the lesson's.

    nbgrader trusts that metadata, and an id its gradebook does not know stops it with a
    traceback: without this, a notebook could turn its own zero into a grader error. The
    lesson's cells that are then missing are restored from the source
    (``OverwriteCells.add_missing_cells``), so the notebook is graded on the cells the
    solution defines.
    """
    kinds = {
        notebook.nbgrader_meta(c).get("grade_id"): c.cell_type
        for c in source.cells
        if notebook.nbgrader_meta(c).get("grade_id")
    }
    # The kernel is the lesson's too: an unknown kernelspec name would stop an unsandboxed
    # kernel from starting (sandboxed ones ignore it).
    for key in ("kernelspec", "language_info"):
        nb.metadata.pop(key, None)
        if key in source.metadata:
            nb.metadata[key] = source.metadata[key]
    seen = set()
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader")
        if meta is None:
            continue
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if (
            not isinstance(grade_id, str)
            or kinds.get(grade_id) != cell.cell_type
            or grade_id in seen
        ):
            del cell.metadata["nbgrader"]
        else:
            seen.add(grade_id)


def _result_from(student: str, assignment: str, graded: Path) -> Result:
    """Scores and messages per test cell, read from the autograded notebook."""
    from nbgrader.utils import determine_grade

    nb = notebook.read(graded)
    source = notebook.read(course.solution_notebook(assignment))
    tests = []
    # Any cell may have timed out, crashed the kernel or hit the memory limit.
    trouble = {  # cell index -> the kind of trouble its error shows, if any
        i: kind
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and (kind := _failure(c)[1]) is not None
    }
    problems = set(trouble.values())
    if any(_cut_for_the_notebook(c) for c in nb.cells if c.cell_type == "code"):
        problems.add(OUTPUT)
    by_id = {notebook.nbgrader_meta(c).get("grade_id"): c for c in nb.cells}
    for ex in notebook.exercises(source):
        cell = by_id.get(ex.test_id)
        score, max_score = (0.0, ex.points) if cell is None else determine_grade(cell)
        message, _ = _failure(cell)
        verdict = cell.metadata.get(VERDICT_KEY, {}) if cell is not None else {}
        tests.append(
            TestResult(
                ex.grade_id,
                ex.test_id,
                float(score or 0.0),
                float(max_score),
                score == max_score,
                message,
                misconception=verdict.get("misconception", {}).get("message", ""),
                caught_by="" if score == max_score else _caught_by(cell),
            )
        )
    # The most far-reaching kind of trouble names the status: a spent budget stopped the rest.
    kind = next(
        (k for k in (BUDGET, CRASHED, MEMORY, DISK, PROCESSES, TIMEOUT, OUTPUT) if k in problems),
        None,
    )
    return Result(
        student,
        assignment,
        TIMEOUT if kind == BUDGET else kind or Status.OK,
        score=sum(t.score for t in tests),
        max_score=sum(t.max_score for t in tests),
        message=_where_it_went_wrong(nb, trouble, kind),
        tests=tests,
    )


WHAT_HAPPENED = {
    BUDGET: (
        "the submission ran past its time budget (--submission-timeout) in {where}; "
        "the cells after it were not run"
    ),
    CRASHED: "the kernel died in {where}; it was restarted and the rest was graded",
    MEMORY: "{where} ran out of memory (the --memory limit); the rest was graded",
    DISK: "{where} filled the sandbox's disk (the --disk limit); the rest was graded",
    PROCESSES: "{where} hit the sandbox's limit on processes; the rest was graded",
    TIMEOUT: "{where} ran past the per-cell time limit and was interrupted; the rest was graded",
    OUTPUT: (
        "the notebook passed the grader's output budget (too many cells, or too much printed); "
        "the excess was not run or not kept"
    ),
}


def _cut_for_the_notebook(cell) -> bool:
    """True when the grader dropped this cell's output for the notebook's output budget."""
    return any(o.get("text") == NOTEBOOK_OUTPUT_CUT for o in cell.get("outputs", []))


def _where_it_went_wrong(nb, trouble: dict[int, str], kind: str | None) -> str:
    """For a crash, a timeout, a memory bomb...: which cells it happened in, in words."""
    if kind not in WHAT_HAPPENED:
        return ""
    places = []
    for i, found in trouble.items():
        if found == kind:
            grade_id = notebook.nbgrader_meta(nb.cells[i]).get("grade_id")
            places.append(f"the cell {grade_id}" if grade_id else f"cell {i}")
            if kind == BUDGET:  # the cell it ran out in; the later ones were never run
                break
    return WHAT_HAPPENED[kind].format(where=", ".join(places) or "a cell")


def _caught_by(cell) -> str:
    """ "hidden" when the cell's first error is the hidden check's verdict (the visible
    asserts passed), else "visible"."""
    errors = [o for o in (cell.outputs if cell is not None else []) if o.output_type == "error"]
    return "hidden" if errors and errors[0].get("ename") == HIDDEN_CHECK_FAILED else "visible"


def _failure(cell) -> tuple[str, str | None]:
    """The cell's error as one line, and the kind of trouble it shows (timeout, memory...)."""
    if cell is None:
        return "the test cell was missing and could not be restored", None
    for out in cell.get("outputs", []):
        if out.get("output_type") != "error":
            continue
        ename, evalue = out.get("ename", ""), str(out.get("evalue", "")).strip()
        kind = None
        if ename == KERNEL_DIED:
            kind = CRASHED
        elif ename == SUBMISSION_TIMEOUT:
            kind = BUDGET
        elif ename == TOO_MANY_CELLS:
            kind = OUTPUT
        elif ename == OUT_OF_MEMORY:
            kind = MEMORY
        elif ename in ("CellTimeoutError", "KeyboardInterrupt"):  # the grader interrupted it
            kind = TIMEOUT
            evalue = "no result within the per-cell time limit; the cell was interrupted"
        elif ename == "MemoryError" or "can't allocate memory" in evalue:
            kind = MEMORY
        elif "No space left on device" in evalue or "Disk quota exceeded" in evalue:
            kind = DISK
        elif (ename == "BlockingIOError" and "Resource temporarily unavailable" in evalue) or (
            "can't start new thread" in evalue
        ):  # fork() or a new thread refused: the process limit
            kind = PROCESSES
        return (f"{ename}: {evalue}" if evalue else ename)[:1000], kind
    return "", None
