"""nbgrader's Execute step as the grade command runs it: ``GradingExecute``.

What it adds to nbgrader's own Execute:

- the kernel is confined: jupyter_client starts it through the course's provisioner
  (``provisioner.py``: bubblewrap, a control group, nothing of the grader's), and everything
  it started is gone before the next kernel starts;
- a whole-submission time budget (``submission_timeout``) on top of the per-cell timeout:
  once it is spent, the running cell is interrupted and the cells after it are not run;
- a kernel that dies (``os._exit``, a segfault, the out-of-memory killer) costs only the
  cell that killed it: the cell gets an error, a new kernel starts, the cells that had run
  cleanly are replayed quietly, and grading goes on;
- with ``warm_spare``, the next submission's kernel is started while this one runs, and
  imports torch and the course helpers (``sandbox.PRELOAD``) before its notebook arrives:
  an ordinary sandboxed kernel of its own, used once, by one submission;
- an output budget: at most ``MAX_CELLS`` code cells and ``MAX_NOTEBOOK_OUTPUT`` characters
  of output are kept (errors always are: they decide a test cell);
- the hidden checks never run in the kernel: after each test cell the grader runs the
  cell's hidden check in its own process (``autograder.judge``), reaching the learner's
  answer only through probes whose results come back as data (``autograder.boundary``).
  A check that fails adds an error to the test cell, so nbgrader's own scoring gives the
  cell zero; the verdict is also stored in the cell's metadata for the grade command.
  Inside the kernel, ``autograder.hidden.<topic>`` is a stand-in whose checks do nothing.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
import time
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec
from nbclient.exceptions import DeadKernelError
from nbclient.util import run_sync
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output
from nbgrader.preprocessors import Execute
from nbgrader.utils import is_grade
from traitlets import Bool, Dict, Integer, List, Unicode

from autograder import boundary, judge, learner_messages, misconceptions, wire
from autograder.grading import provisioner, sandbox
from autograder.nbgrader_ext import HIDDEN_REGION

KERNEL_DIED = "KernelDied"
SUBMISSION_TIMEOUT = "SubmissionTimeout"
OUT_OF_MEMORY = "SubmissionOutOfMemory"  # the sandbox's processes together passed --memory
TOO_MANY_CELLS = "TooManyCells"
HIDDEN_CHECK_FAILED = "HiddenCheckFailed"
# What the grader keeps of a notebook's output: a cell that prints gigabytes, or a thousand
# cells that each print just under the cell's share, must not fill the grader's memory, the
# feedback files or OUT. Past either budget, outputs are dropped (a note says so once);
# errors are always kept, since they decide whether a test cell passed.
MAX_CELL_OUTPUT = 1_000_000  # characters per cell
MAX_NOTEBOOK_OUTPUT = 10_000_000  # characters per notebook, all cells together
# Code cells run per notebook: a lesson has under 100; past this, cells are not run.
MAX_CELLS = 400
OUTPUT_CUT = f"\n[the grader kept the first {MAX_CELL_OUTPUT:,} characters of this cell's output]\n"
NOTEBOOK_OUTPUT_CUT = (
    f"\n[the notebook's output passed {MAX_NOTEBOOK_OUTPUT:,} characters: the grader keeps "
    "no more of it, errors excepted]\n"
)
VERDICT_KEY = "trusted_verdict"  # in a test cell's metadata: what the grader's check decided

# In the kernel, a test cell's `from autograder.hidden.<topic> import check_x; check_x(x)`
# finds this: the real check runs in the grader, and nothing of it is in the kernel.
STAND_IN_SOURCE = '''\
def _run_by_the_grader(*args, **kwargs):
    """This hidden check runs in the grader's own process, not in this kernel."""


def __getattr__(name):
    if name.startswith("check_"):
        return _run_by_the_grader
    raise AttributeError(name)
'''

# Every kernel manager and client a grading worker made stays referenced until the worker
# process ends. Collecting one mid-grading runs zmq's Context.term, which can block forever
# on a socket a dead kernel left open (seen here: the next submission hung). A worker grades
# many submissions, so the list grows by a few small objects per notebook.
_KEEP_ALIVE: list[object] = []

# Kernels started ahead for the next submission, one per kind of sandbox (its settings).
_SPARES: dict[tuple, object] = {}


def discard_spares() -> None:
    """Stop the kernels started ahead that no submission will use (their folders go too)."""
    while _SPARES:
        km = _SPARES.popitem()[1]
        with contextlib.suppress(RuntimeError):  # "No kernel is running!": it died already
            run_sync(km.shutdown_kernel)(now=True)


def install_hidden_code(modules: dict[str, str]) -> str:
    """Code that makes the given modules (name -> source) importable in the kernel, from memory.

    An import hook serves them, so they may import each other in any order; nothing is
    written to a disk the kernel can read.
    """
    return f"""\
import sys as _sys, importlib.abc as _abc
class _FromGrader(_abc.MetaPathFinder, _abc.Loader):
    sources = {modules!r}
    def find_spec(self, name, path=None, target=None):
        import importlib.util
        if name in self.sources:
            return importlib.util.spec_from_loader(name, self, is_package=True)
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        source = self.sources[module.__name__]
        exec(compile(source, "<from the grader: " + module.__name__ + ">", "exec"), module.__dict__)
for _name in [n for n in _sys.modules if n in _FromGrader.sources]:
    del _sys.modules[_name]
_sys.meta_path[:] = [_FromGrader()] + [
    f for f in _sys.meta_path if type(f).__name__ != "_FromGrader"
]
del _sys, _abc, _FromGrader
"""


class GradingExecute(Execute):
    """nbgrader's Execute, sandboxed, surviving kernel deaths, with hidden checks injected."""

    sandboxed = Bool(True, help="Run the kernel under bubblewrap.").tag(config=True)
    memory_mb = Integer(sandbox.MEMORY_MB, help="Memory of the kernel, in MiB.").tag(config=True)
    disk_mb = Integer(sandbox.DISK_MB, help="Size of the kernel's writable /tmp, in MiB.").tag(
        config=True
    )
    submission_timeout = Integer(
        0, help="Wall-clock seconds for the whole notebook (0: no budget)."
    ).tag(config=True)
    hide = List(Unicode(), help="Extra folders the kernel must not see.").tag(config=True)
    gpu = Bool(False, help="Let the sandboxed kernel see GPU devices.").tag(config=True)
    run_as_uid = Integer(
        None,
        allow_none=True,
        help="Without the sandbox: run the kernel as this user (a root grader, in a container).",
    ).tag(config=True)
    lesson = Unicode("", help="The lesson graded (its solution names misconceptions).").tag(
        config=True
    )
    checks = Dict(
        help="Test cell grade_id -> [exercise, topic, check name, [argument names]]."
    ).tag(config=True)
    warm_spare = Bool(
        False, help="Start the next submission's kernel, imported and idle, while this one runs."
    ).tag(config=True)
    start_next_spare = Bool(
        True, help="With warm_spare: start one after this kernel (not for a worker's last)."
    ).tag(config=True)
    # nbclient waits this long for a cell's last output after its reply, then fails the whole
    # notebook; 4 s (its default) was seen running out on a loaded machine after a fork bomb.
    iopub_timeout = Integer(30).tag(config=True)

    def create_kernel_manager(self):
        """A started spare of this kind when there is one, else a new manager to start."""
        km = _SPARES.pop(self._spare_key(), None) if self._warm() else None
        if km is not None:
            if run_sync(km.is_alive)():
                return km
            run_sync(km.cleanup_resources)()  # it died waiting (the machine's OOM killer...)
        return self._new_kernel_manager()

    def _warm(self) -> bool:
        """Spares for sandboxed kernels: they need nothing of the notebook to start."""
        return self.warm_spare and self.sandboxed

    def _spare_key(self) -> tuple:
        """What a spare kernel must share with this submission's: its sandbox's settings."""
        return (self.memory_mb, self.disk_mb, self.gpu, tuple(self.hide))

    def _start_spare(self) -> None:
        """Start, without waiting for it, the kernel the next submission will use."""
        if not (self._warm() and self.start_next_spare) or self._spare_key() in _SPARES:
            return
        current = self.km  # nbclient's create_kernel_manager sets self.km: keep this one's
        try:
            km = self._new_kernel_manager(preload=sandbox.PRELOAD)
        finally:
            self.km = current
        run_sync(km.start_kernel)(extra_arguments=self.extra_arguments)
        _SPARES[self._spare_key()] = km

    def _new_kernel_manager(self, preload: tuple[str, ...] = ()):
        """A kernel manager, not started, for this submission's kind of kernel. A confined
        one's kernelspec names the course's provisioner, which does the confining."""
        km = super().create_kernel_manager()
        _KEEP_ALIVE.append(km)
        if not self.sandboxed and self.run_as_uid is None:
            if not self.gpu:  # no sandbox to leave the GPU out: hide it from CUDA instead
                km.kernel_spec.env = {**km.kernel_spec.env, "CUDA_VISIBLE_DEVICES": ""}
            return km
        # Interrupt by message: a signal would reach bubblewrap or env, not the kernel.
        km._kernel_spec = KernelSpec(
            argv=sandbox.kernel_command(),
            display_name="sandbox",
            language="python",
            interrupt_mode="message",
            metadata=provisioner.spec_metadata(
                sandboxed=self.sandboxed,
                run_as_uid=self.run_as_uid,
                memory_mb=self.memory_mb,
                disk_mb=self.disk_mb,
                gpu=self.gpu,
                hide=list(self.hide),
                preload=list(preload),
            ),
        )
        return km

    def preprocess(self, nb, resources=None, km=None):
        self._replay: list[int] = []
        self._output_used: dict[str, int] = {}
        self._notebook_output = 0
        self._cells_run = 0
        # The learner's language (the notebook's metadata names it; English otherwise): the
        # hidden checks' verdicts here, and the visible checks in the kernel, speak it.
        self._language = learner_messages.notebook_language(nb)
        budget = self.submission_timeout
        self._deadline = time.monotonic() + budget if budget > 0 else float("inf")
        with learner_messages.speaking(self._language):
            nb, resources = super().preprocess(nb, resources, km)
            _fail_unchecked(nb, set(self.checks))
        scratch = Path(self.resources.get("metadata", {}).get("path") or ".")
        _remove_links(scratch)
        return nb, resources

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if self._remaining() <= 0:  # the submission's budget is spent: not run at all
            cell.outputs = [_budget_output(self.submission_timeout, ran=False)]
            return cell, resources
        self._cells_run += 1
        if self._cells_run > MAX_CELLS:
            cell.outputs = [_too_many_cells_output()]
            return cell, resources
        kills = self._out_of_memory_kills()
        graded = is_grade(cell)
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        modules = self._kernel_modules() if graded else {}
        try:
            if modules:
                self._quietly(install_hidden_code(modules))
            cell, resources = super().preprocess_cell(cell, resources, index)
            if graded and grade_id in self.checks:
                self._judge(cell, grade_id)
        except DeadKernelError:
            oom = self._out_of_memory_kills() > kills
            cell.outputs.append(_out_of_memory_output(self.memory_mb) if oom else _died_output())
            self._restart_and_replay()
            return cell, resources
        if self._out_of_memory_kills() > kills:  # a process of the sandbox, not the kernel
            cell.outputs.append(_out_of_memory_output(self.memory_mb))
        if self._remaining() <= 0 and _interrupted(cell):  # the budget, not the cell's limit
            cell.outputs.insert(0, _budget_output(self.submission_timeout, ran=True))
        if not graded and not any(o.output_type == "error" for o in cell.outputs):
            self._replay.append(index)
        return cell, resources

    def _remaining(self) -> float:
        """Seconds left of the submission's budget (infinite without one)."""
        return self._deadline - time.monotonic()

    def _get_timeout(self, cell):
        """The per-cell timeout, cut short where the submission's budget ends sooner."""
        timeout = super()._get_timeout(cell)
        remaining = self._remaining()
        if remaining == float("inf"):
            return timeout
        left = max(1, int(remaining + 0.999))
        return left if timeout is None else min(timeout, left)

    def _out_of_memory_kills(self) -> int:
        """Processes of this kernel's sandbox that the out-of-memory killer has ended."""
        confined = self._provisioner()
        group = confined.group if confined is not None else None
        return group.out_of_memory_kills() if group is not None else 0

    def output(self, outs, msg, display_id, cell_index):
        """Keep at most ``MAX_CELL_OUTPUT`` characters of output per cell and
        ``MAX_NOTEBOOK_OUTPUT`` per notebook; drop the rest, but never an error."""
        content = msg.get("content", {})
        if msg.get("msg_type") == "error":  # it decides the cell's score: kept, shortened
            content["traceback"] = [line[:10_000] for line in content.get("traceback", [])[-50:]]
            content["evalue"] = str(content.get("evalue", ""))[:10_000]
            return super().output(outs, msg, display_id, cell_index)
        size = len(str(content))
        execution = msg.get("parent_header", {}).get("msg_id", "")  # one per cell run
        used = self._output_used.get(execution, 0)
        self._output_used[execution] = used + size
        before = self._notebook_output
        self._notebook_output += size
        if used + size <= MAX_CELL_OUTPUT and self._notebook_output <= MAX_NOTEBOOK_OUTPUT:
            return super().output(outs, msg, display_id, cell_index)
        if before <= MAX_NOTEBOOK_OUTPUT < self._notebook_output:  # the notebook's: once
            text = NOTEBOOK_OUTPUT_CUT
        elif used <= MAX_CELL_OUTPUT < used + size:  # the cell's: once per cell
            text = OUTPUT_CUT
        else:
            return None
        note = new_output("stream", name="stdout", text=text)
        outs.append(note)
        return note

    def _kernel_modules(self) -> dict[str, str]:
        """What the kernel holds while a test cell runs: the probes, and a stand-in for the
        hidden checks (which run here, in the grader)."""
        topics = {topic for _, topic, _, _ in self.checks.values()}
        return judge.kernel_modules(topics, STAND_IN_SOURCE)

    def _judge(self, cell, grade_id: str) -> None:
        """Run the test cell's hidden check here; a failure becomes an error in the cell."""
        exercise, topic, check, args = self.checks[grade_id]
        spec = judge.CheckSpec(grade_id, exercise, topic, check, tuple(args))
        deadline = min(time.monotonic() + self.timeout, self._deadline)
        verdict = judge.run_check(spec, _KernelChannel(self, deadline=deadline))
        record = {
            "passed": verdict.passed,
            "message": verdict.message,
            "seconds": round(verdict.seconds, 2),
        }
        # An exercise not answered yet is no catalogued mistake: nothing to match it with.
        if not verdict.passed and verdict.answered and self.lesson:
            named = misconceptions.name_misconception(
                self.lesson, spec, verdict.calls, _visible_tests(cell)
            )
            if named is not None:
                record["misconception"] = {"name": named.name, "message": named.message}
        cell.metadata[VERDICT_KEY] = record
        if verdict.passed:
            return
        if not any(o.output_type == "error" for o in cell.outputs):
            cell.outputs.append(_verdict_output(record))
        elif "misconception" in record:  # the visible tests failed already: add the hint
            hint = learner_messages.common_mistake(record["misconception"]["message"]) + "\n"
            cell.outputs.append(new_output("stream", name="stdout", text=hint))

    def _quietly(self, source: str):
        """Run code in the kernel without recording anything in the notebook; return its cell."""
        # nbclient stores the executed cell at the index given: put the real cell back.
        saved = self.nb.cells[0]
        try:
            return self.execute_cell(new_code_cell(source), 0, store_history=False)
        finally:
            self.nb.cells[0] = saved

    def _restart_and_replay(self) -> None:
        """Start a fresh kernel and re-run the cells that had run cleanly, outputs discarded."""
        self.log.warning("The kernel died; restarting it and replaying %d cells", len(self._replay))
        self._fresh_kernel()
        for index in list(self._replay):
            if self._remaining() <= 0:
                break
            try:
                self._quietly(self.nb.cells[index].source)
            except DeadKernelError:  # the replay itself crashes: stop replaying, keep grading
                self._fresh_kernel()
                break

    def start_new_kernel_client(self):
        try:
            kc = super().start_new_kernel_client()
        except RuntimeError as err:  # "Kernel died before replying": bubblewrap may say why
            why = self._provisioner().errors() if self._provisioner() else ""
            raise RuntimeError(f"{err}: {why}" if why else str(err)) from None
        _KEEP_ALIVE.append(kc)
        if getattr(self, "_language", learner_messages.ENGLISH) != learner_messages.ENGLISH:
            # A kernel started ahead of its notebook cannot have it in its environment.
            self._quietly(learner_messages.kernel_setup(self._language))
        # This kernel is ready: the next one starts now, on a core this notebook leaves idle.
        self._start_spare()
        return kc

    def _provisioner(self) -> provisioner.SandboxProvisioner | None:
        """The course's provisioner of the current kernel (None for a plain kernel)."""
        found = getattr(self.km, "provisioner", None)
        return found if isinstance(found, provisioner.SandboxProvisioner) else None

    def inside_path(self, name: str) -> tuple[str, Path]:
        """A file the kernel writes: its path in the kernel, and where the grader reads it."""
        confined = self._provisioner()
        if confined is not None and confined.first_process is not None:  # in its sandbox
            inside = f"{sandbox.SCRATCH}/{name}"
            return inside, Path(confined.outside_path(inside))
        if confined is not None:  # a kernel run as a user of its own, in its own folder
            return str(confined.folder / name), confined.folder / name
        scratch = Path(self.resources.get("metadata", {}).get("path") or ".").resolve()
        return str(scratch / name), scratch / name

    def _fresh_kernel(self) -> None:
        self._cleanup_kernel()
        self.km = self.create_kernel_manager()
        if not self.km.has_kernel:  # a spare has started already
            self.start_new_kernel()
        self.start_new_kernel_client()


class _KernelChannel:
    """Runs a probe in the sandboxed kernel; the result comes back through a file, as data."""

    def __init__(self, execute: GradingExecute, deadline: float):
        self.execute, self.deadline = execute, deadline

    def run(self, probe_module: str, probe_name: str, name: str, case_json: str) -> str:
        remaining = self.deadline - time.monotonic()
        if remaining < 1:
            raise boundary.AnswerUnreachable(
                f"the hidden check ran out of time ({self.execute.timeout} s) before it could "
                "finish running the answer"
            )
        inside, result = self.execute.inside_path(f".probe-{secrets.token_hex(8)}.json")
        code = (
            "from autograder.boundary import serve as _serve\n"
            f"_serve({probe_module!r}, {probe_name!r}, {name!r}, {case_json!r}, {inside!r})\n"
            "del _serve\n"
        )
        saved_timeout = self.execute.timeout
        self.execute.timeout = max(1, int(remaining))
        try:
            cell = self.execute._quietly(code)
        except DeadKernelError:
            self.execute._restart_and_replay()
            raise boundary.AnswerUnreachable(
                "the kernel died while the hidden check ran the answer (a crash, os._exit or "
                "running out of memory)"
            ) from None
        finally:
            self.execute.timeout = saved_timeout
        envelope = _read_result(result)
        if envelope is None:
            errors = [o for o in cell.outputs if o.output_type == "error"]
            timed_out = any(o.ename in ("CellTimeoutError", "KeyboardInterrupt") for o in errors)
            why = "no result within the time limit" if timed_out else "no result came back"
            if errors and not timed_out:
                why += f" ({errors[-1].ename}: {str(errors[-1].evalue)[:200]})"
            raise boundary.AnswerUnreachable(f"the hidden check could not run the answer: {why}")
        return envelope


def _visible_tests(cell) -> misconceptions.Visible:
    """The test cell's visible tests and how they ended for the learner (its first error)."""
    errors = [o for o in cell.outputs if o.output_type == "error"]
    ending = misconceptions.error_signature(errors[0].ename, errors[0].evalue) if errors else None
    return misconceptions.Visible(HIDDEN_REGION.sub("", cell.source), ending)


def _read_result(path: Path) -> str | None:
    """The probe's result file, if it is a plain file of sane size; removed once read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > wire.MAX_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(wire.MAX_BYTES + 1)
    finally:
        os.close(fd)
        path.unlink(missing_ok=True)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _verdict_output(record: dict) -> NotebookNode:
    text = record["message"]
    if "misconception" in record:
        text += "\n\n" + learner_messages.common_mistake(record["misconception"]["message"])
    return new_output(
        "error",
        ename=HIDDEN_CHECK_FAILED,
        evalue=text,
        traceback=[f"{HIDDEN_CHECK_FAILED}: {text}"],
    )


def _fail_unchecked(nb: NotebookNode, test_ids: set[str]) -> None:
    """Fail closed: a test cell whose hidden check never ran (the kernel died first) earns 0."""
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or grade_id not in test_ids or VERDICT_KEY in cell.metadata:
            continue
        record = {"passed": False, "message": "the hidden check did not run for this cell"}
        cell.metadata[VERDICT_KEY] = record
        if not any(o.output_type == "error" for o in cell.outputs):
            cell.outputs.append(_verdict_output(record))


def _remove_links(scratch: Path) -> None:
    """Delete links and special files the student's code left in its scratch folder.

    nbgrader then chmods every file there as the grader's user, following links: a link
    to /etc/passwd would have the grader change that file's permissions.
    """
    for path in sorted(scratch.rglob("*"), reverse=True):
        try:
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                path.unlink()
        except OSError:
            pass  # gone already, or not ours to remove: nothing follows it


def _interrupted(cell) -> bool:
    """True when the grader interrupted the cell (its time ran out)."""
    return any(
        o.output_type == "error" and o.ename in ("CellTimeoutError", "KeyboardInterrupt")
        for o in cell.outputs
    )


def _budget_output(seconds: int, ran: bool) -> NotebookNode:
    when = "ran out while this cell ran" if ran else "had run out before this cell"
    text = (
        f"The submission's time budget ({seconds} s for the whole notebook, "
        f"--submission-timeout) {when}; this cell earns nothing."
    )
    return new_output(
        "error", ename=SUBMISSION_TIMEOUT, evalue=text, traceback=[f"{SUBMISSION_TIMEOUT}: {text}"]
    )


def _error_output(ename: str, text: str) -> NotebookNode:
    return new_output("error", ename=ename, evalue=text, traceback=[f"{ename}: {text}"])


def _too_many_cells_output() -> NotebookNode:
    text = (
        f"The notebook has more than {MAX_CELLS} code cells; the grader runs only the first "
        f"{MAX_CELLS}. This cell was not run and earns nothing."
    )
    return _error_output(TOO_MANY_CELLS, text)


def _out_of_memory_output(memory_mb: int) -> NotebookNode:
    text = (
        f"This cell's processes together passed the memory limit ({memory_mb} MiB for the "
        "kernel and every process it started, --memory): the system ended one of them."
    )
    return _error_output(OUT_OF_MEMORY, text)


def _died_output() -> NotebookNode:
    text = (
        "The kernel died while running this cell (a crash, os._exit, or running out of "
        "memory). It was restarted and grading went on; this cell earns nothing."
    )
    return new_output("error", ename=KERNEL_DIED, evalue=text, traceback=[f"{KERNEL_DIED}: {text}"])
