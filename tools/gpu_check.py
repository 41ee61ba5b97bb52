"""Run every lesson's solution, visible and hidden checks, and mistake catalogue on this machine's GPU.

For a lent GPU machine that has torch but no Jupyter or nbgrader: it executes each solution
notebook's code cells in one namespace (as a kernel would), then swaps every catalogued
mistake into that namespace and runs the exercise's test cell, exactly like the test
suite's mistake runner. Prints one line per lesson; exit status 1 if anything is wrong.

    PYTHONPATH=. python tools/gpu_check.py [LESSON ...]
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cells(lesson: str) -> list[dict]:
    nb = json.loads((ROOT / "solutions" / lesson / f"{lesson}.ipynb").read_text())
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def compiled(code: str, filename: str):
    """Compile like IPython does: keep the source in linecache so inspect.getsource works."""
    import linecache

    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    return compile(code, filename, "exec")


def check_lesson(lesson: str) -> dict:
    """Run inside a child process: one lesson, one namespace."""
    import matplotlib

    matplotlib.use("Agg")
    from autograder.mistakes import catalogue

    topic = lesson.split("_", 1)[1]
    mistakes = catalogue(topic)
    ns: dict = {"__name__": "__main__", "display": lambda *a, **k: None}
    code_cells = cells(lesson)
    start = time.perf_counter()
    sink = io.StringIO()
    for i, cell in enumerate(code_cells):
        try:
            with contextlib.redirect_stdout(sink):
                exec(compiled(source(cell), f"<{lesson} cell {i}>"), ns)
        except Exception as err:
            return {"lesson": lesson, "error": f"solution cell {i}: {type(err).__name__}: {err}"}
    seconds = time.perf_counter() - start
    missed, caught = [], 0
    for i, cell in enumerate(code_cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not (meta.get("solution") and not meta.get("grade")):
            continue
        grade_id = meta["grade_id"]
        test = next(
            c for c in code_cells[i + 1 :] if c.get("metadata", {}).get("nbgrader", {}).get("grade")
        )
        for mistake in mistakes.get(grade_id, []):
            try:
                with contextlib.redirect_stdout(sink):
                    exec(mistake.code, ns)
                    exec(source(test), ns)
                missed.append(f"{grade_id}/{mistake.name}")
            except Exception:
                caught += 1
        try:
            with contextlib.redirect_stdout(sink):
                exec(source(cell), ns)
                exec(source(test), ns)
        except Exception as err:
            missed.append(f"{grade_id}: solution fails after restore: {err}")
    import torch

    return {
        "lesson": lesson,
        "device": str(ns.get("device")),
        "torch": torch.__version__,
        "seconds": round(seconds, 1),
        "caught": caught,
        "missed": missed,
    }


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--child":
        print("RESULT" + json.dumps(check_lesson(argv[1])))
        return 0
    lessons = argv or sorted(p.name for p in (ROOT / "solutions").iterdir() if p.is_dir())
    bad = False
    for lesson in lessons:
        proc = subprocess.run(
            [sys.executable, __file__, "--child", lesson],
            capture_output=True,
            text=True,
            timeout=600,
        )
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")), None)
        result = json.loads(line[6:]) if line else {"lesson": lesson, "error": proc.stderr[-800:]}
        bad = bad or "error" in result or bool(result.get("missed"))
        print(json.dumps(result), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
