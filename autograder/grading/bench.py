"""How much the grade command costs: per-submission overhead and the speed-up of parallel jobs.

A script, not a test: it prints a table for a person to read.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from autograder import course
from autograder.execute import run_notebook
from autograder.grading.run import GradeOptions, grade
from autograder.grading.samples import solution, write_class


def _grade_seconds(submissions: Path, out: Path, lesson: str, jobs: int) -> float:
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    grade(GradeOptions(submissions, out, [lesson], jobs=jobs, force=True, progress=False))
    return time.perf_counter() - start


def bench_grade(lesson: str = "00_welcome", n: int = 20) -> str:
    """Plain nbclient seconds vs grading seconds per submission; --jobs 2 vs --jobs 1 on n."""
    plain = min(run_notebook(course.solution_notebook(lesson))[1] for _ in range(2))
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        root = Path(tmp)
        one = write_class(root / "one", lesson, {"s000": solution(lesson)})
        per_submission = _grade_seconds(one, root / "out1", lesson, jobs=1)
        many = write_class(root / "many", lesson, {f"s{i:03d}": solution(lesson) for i in range(n)})
        jobs1 = _grade_seconds(many, root / "out-j1", lesson, jobs=1)
        jobs2 = _grade_seconds(many, root / "out-j2", lesson, jobs=2)
    rows = [
        ("plain nbclient run of the solution (s)", f"{plain:.1f}", "fresh kernel, one thread"),
        ("grade, a class of one, --jobs 1 (s)", f"{per_submission:.1f}", "with the fixed costs"),
        (f"grade {n} submissions, --jobs 1 (s)", f"{jobs1:.1f}", f"{jobs1 / n:.1f} s each"),
        ("per submission: grade / plain", f"{jobs1 / n / plain:.2f}x", "target <= 1.0x"),
        (f"grade {n} submissions, --jobs 2 (s)", f"{jobs2:.1f}", f"{jobs2 / n:.1f} s each"),
        ("speed-up of --jobs 2", f"{jobs1 / jobs2:.2f}x", "target >= 1.8x"),
    ]
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"{a:<{width}}  {b:>8}  {c}" for a, b, c in rows)
