"""nbgrader's Execute step as the grade command runs it.

Three changes to nbgrader's own Execute:

- the kernel runs in the bubblewrap sandbox (``sandbox.kernel_argv``) over Unix sockets;
- a kernel that dies (``os._exit``, a segfault, the out-of-memory killer) costs only the
  cell that killed it: the cell gets an error, a new kernel starts, the cells that had run
  cleanly are replayed quietly, and grading goes on;
- the hidden checks are not on any disk the kernel can see: their source is handed to the
  kernel just before each test cell and removed right after it.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from jupyter_client.kernelspec import KernelSpec
from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output
from nbgrader.preprocessors import Execute
from nbgrader.utils import is_grade
from traitlets import Bool, Dict, Integer, List, Unicode

from autograder.grading import sandbox

KERNEL_DIED = "KernelDied"

# Every kernel manager and client a grading worker made stays referenced until the worker
# process ends. Collecting one mid-grading runs zmq's Context.term, which can block forever
# on a socket a dead kernel left open (seen here: the next submission hung). A worker grades
# many submissions, so the list grows by a few small objects per notebook.
_KEEP_ALIVE: list[object] = []

_REMOVE_HIDDEN = """\
import sys as _sys
for _name in [n for n in _sys.modules if n == "autograder" or n.startswith("autograder.")]:
    del _sys.modules[_name]
_ns = get_ipython().user_ns
for _name in [k for k, v in _ns.items() if str(getattr(v, "__module__", "")).startswith("autograder")]:
    del _ns[_name]
del _sys, _ns, _name
"""


def install_hidden_code(modules: dict[str, str]) -> str:
    """Code that puts the given modules (name -> source) into ``sys.modules``, from memory."""
    return f"""\
import sys as _sys, types as _types
for _name, _source in {modules!r}.items():
    _module = _types.ModuleType(_name)
    _module.__path__ = []  # every level may be a package
    _sys.modules[_name] = _module
    exec(compile(_source, "<hidden check " + _name + ">", "exec"), _module.__dict__)
del _sys, _types, _name, _source, _module
"""


class GradingExecute(Execute):
    """nbgrader's Execute, sandboxed, surviving kernel deaths, with hidden checks injected."""

    sandboxed = Bool(True, help="Run the kernel under bubblewrap.").tag(config=True)
    memory_mb = Integer(6144, help="Address-space limit of the kernel, in MiB.").tag(config=True)
    hide = List(Unicode(), help="Extra folders the kernel must not see.").tag(config=True)
    gpu = Bool(False, help="Let the sandboxed kernel see GPU devices.").tag(config=True)
    hidden_modules = Dict(help="Module name -> source handed to the kernel for test cells.").tag(
        config=True
    )

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        _KEEP_ALIVE.append(km)
        scratch = Path(self.resources.get("metadata", {}).get("path") or ".").resolve()
        if self.sandboxed:
            sockets = Path(tempfile.mkdtemp(prefix="gk-"))  # short: Unix socket paths are capped
            self._socket_dirs.append(sockets)
            argv = sandbox.kernel_argv(
                scratch, [Path(p) for p in self.hide], self.memory_mb, self.gpu, sockets
            )
            # interrupt by message: a signal would reach bubblewrap, not the kernel inside it
            km._kernel_spec = KernelSpec(
                argv=argv, display_name="sandbox", language="python", interrupt_mode="message"
            )
            km.transport = "ipc"  # no TCP inside --unshare-net: Unix sockets instead
            km.ip = str(sockets / "k")
            km.connection_file = str(sockets / "kernel.json")
        return km

    def preprocess(self, nb, resources=None, km=None):
        self._replay: list[int] = []
        self._socket_dirs: list[Path] = []
        try:
            return super().preprocess(nb, resources, km)
        finally:
            for folder in self._socket_dirs:
                shutil.rmtree(folder, ignore_errors=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        graded = is_grade(cell)
        try:
            if graded and self.hidden_modules:
                self._quietly(install_hidden_code(dict(self.hidden_modules)))
            cell, resources = super().preprocess_cell(cell, resources, index)
            if graded and self.hidden_modules:
                self._quietly(_REMOVE_HIDDEN)
        except DeadKernelError:
            cell.outputs.append(_died_output())
            self._restart_and_replay()
            return cell, resources
        if not graded and not any(o.output_type == "error" for o in cell.outputs):
            self._replay.append(index)
        return cell, resources

    def _quietly(self, source: str) -> None:
        """Run code in the kernel without recording anything in the notebook."""
        self.execute_cell(new_code_cell(source), 0, store_history=False)

    def _restart_and_replay(self) -> None:
        """Start a fresh kernel and re-run the cells that had run cleanly, outputs discarded."""
        self.log.warning("The kernel died; restarting it and replaying %d cells", len(self._replay))
        self._fresh_kernel()
        for index in list(self._replay):
            try:
                self._quietly(self.nb.cells[index].source)
            except DeadKernelError:  # the replay itself crashes: stop replaying, keep grading
                self._fresh_kernel()
                break

    def start_new_kernel_client(self):
        kc = super().start_new_kernel_client()
        _KEEP_ALIVE.append(kc)
        return kc

    def _fresh_kernel(self) -> None:
        self._cleanup_kernel()
        self.km = self.create_kernel_manager()
        self.start_new_kernel()
        self.start_new_kernel_client()


def _died_output() -> NotebookNode:
    text = (
        "The kernel died while running this cell (a crash, os._exit, or running out of "
        "memory). It was restarted and grading went on; this cell earns nothing."
    )
    return new_output("error", ename=KERNEL_DIED, evalue=text, traceback=[f"{KERNEL_DIED}: {text}"])
