"""The course's two benchmarks, one section per make target. Scripts, not tests: timings on a
shared 2-core machine vary, so each prints a table for a person to read, nothing asserted.

- ``make bench`` (``python -m autograder bench``): the lesson table, every lesson's solution
  and student notebook timed in fresh kernels beside its exercise counts
  (``bench_lesson``, ``format_table``).
- ``make bench-grade`` (``python -m autograder bench-grade``): the grading table, what the
  grade command costs against a plain nbclient run, side by side for a light lesson and the
  heaviest one (``--jobs 1``, ``--jobs 2``, ``--no-warm``, a local two-worker Dask cluster),
  then the whole course for one student against its solutions in started kernels
  (``bench_grade``).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autograder import course, dask_local, notebook, right_answers
from autograder.execute import KernelSession, errors, run_notebook
from autograder.grading.run import GradeOptions, grade
from autograder.grading.samples import solution, write_class
from autograder.mistakes import catalogue

# ---------------------------------------------------------------------------------------
# make bench: every lesson's notebooks, timed, with its exercise counts
# ---------------------------------------------------------------------------------------


@dataclass
class BenchRow:
    lesson: str
    solution_s: float
    student_s: float
    exercises: int
    points: float
    mistakes: int
    right_answers: int
    solution_errors: int


def bench_lesson(lesson: str) -> BenchRow:
    """Run one lesson's solution and student notebooks and count its exercises."""
    solution_nb, solution_s = run_notebook(course.solution_notebook(lesson), allow_errors=True)
    _, student_s = run_notebook(course.student_notebook(lesson), allow_errors=True)
    exercises = course.exercises(lesson)
    mistakes = catalogue(course.topic(lesson))
    rights = right_answers.catalogue(course.topic(lesson))
    return BenchRow(
        lesson=lesson,
        solution_s=solution_s,
        student_s=student_s,
        exercises=len(exercises),
        points=sum(e.points for e in exercises),
        mistakes=sum(len(mistakes.get(e.grade_id, [])) for e in exercises),
        right_answers=sum(len(rights.get(e.grade_id, [])) for e in exercises),
        solution_errors=len(errors(solution_nb)),
    )


HEADER = ("lesson", "solution s", "student s", "exercises", "points", "mistakes", "right", "errors")


def format_table(rows: list[BenchRow]) -> str:
    """The table ``make bench`` prints: one fixed-width row per lesson, then their total."""
    lines = ["{:<16}{:>12}{:>11}{:>11}{:>8}{:>10}{:>7}{:>8}".format(*HEADER)]
    for r in rows:
        lines.append(
            f"{r.lesson:<16}{r.solution_s:>12.1f}{r.student_s:>11.1f}{r.exercises:>11}"
            f"{r.points:>8g}{r.mistakes:>10}{r.right_answers:>7}{r.solution_errors:>8}"
        )
    lines.append(
        f"{'total':<16}{sum(r.solution_s for r in rows):>12.1f}"
        f"{sum(r.student_s for r in rows):>11.1f}{sum(r.exercises for r in rows):>11}"
        f"{sum(r.points for r in rows):>8g}{sum(r.mistakes for r in rows):>10}"
        f"{sum(r.right_answers for r in rows):>7}"
        f"{sum(r.solution_errors for r in rows):>8}"
    )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# make bench-grade: what the grade command costs
# ---------------------------------------------------------------------------------------

# The lessons whose solutions run longest (README's lesson table): the heavier, measured, is
# the benchmark's second column.
HEAVY = ("08_deployment", "10_scaling", "11_gpt")
DASK_WORKERS = 2


def plain_seconds(lesson: str, runs: int = 2) -> float:
    """The solution's best wall time in a fresh nbclient kernel (kernel start included)."""
    return min(run_notebook(course.solution_notebook(lesson))[1] for _ in range(runs))


def heaviest(candidates: tuple[str, ...] = HEAVY) -> tuple[str, float]:
    """The candidate whose solution runs longest, and that run's seconds."""
    times = {lesson: plain_seconds(lesson, runs=1) for lesson in candidates}
    lesson = max(times, key=times.get)
    return lesson, times[lesson]


def grade_seconds(
    submissions: Path,
    out: Path,
    lessons: list[str],
    jobs: int = 1,
    scheduler: str | None = None,
    warm: bool = True,
) -> float:
    """Wall seconds of one grade run, from nothing in OUT: every fixed cost included."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    opts = GradeOptions(submissions, out, lessons, jobs=jobs, force=True, progress=False)
    opts.scheduler = scheduler
    opts.warm = warm
    grade(opts)
    return time.perf_counter() - start


def dask_seconds(submissions: Path, out: Path, lessons: list[str], runs: int = 1) -> float:
    """The best of ``runs`` grade runs through a fresh local cluster. It is started before
    the clock, warm as a running cluster is (its workers have run their preload,
    ``cluster.dask_setup``); each run's scratch courses are on the clock."""
    with dask_local.local_cluster(DASK_WORKERS) as (address, _):
        return min(grade_seconds(submissions, out, lessons, scheduler=address) for _ in range(runs))


def started_kernel_seconds(lesson: str) -> float:
    """The solution's run time in a kernel already started, with torch imported: the
    notebook's own execution, nothing of the kernel's start-up."""
    nb = notebook.read(course.solution_notebook(lesson))
    with tempfile.TemporaryDirectory(prefix="bench-warm-") as cwd:
        session = KernelSession(nb, cwd)
        with session.started():
            trouble = session.run_source("import torch")
            if trouble:
                raise RuntimeError(f"the kernel could not import torch: {trouble}")
            start = time.perf_counter()
            for i, cell in enumerate(nb.cells):
                if cell.cell_type == "code":
                    session.run_cell(i)
            return time.perf_counter() - start


def lesson_column(
    lesson: str, n: int, root: Path, plain: float | None = None, runs: int = 1
) -> dict:
    """The figures for one lesson: plain run, and n solutions graded three ways; the warm
    runs (the targets') are each the best of ``runs``: this machine's speed varies by 20%
    from one run to the next (measured: --jobs 1 on 00_welcome took 27 to 35 s)."""
    plain = plain_seconds(lesson) if plain is None else min(plain, plain_seconds(lesson, 1))
    subs = write_class(root / lesson, lesson, {f"s{i:03d}": solution(lesson) for i in range(n)})

    def best(out: str, **how) -> float:
        return min(grade_seconds(subs, root / out, [lesson], **how) for _ in range(runs))

    jobs1 = best(f"out-{lesson}-j1", jobs=1)
    jobs2 = best(f"out-{lesson}-j2", jobs=2)
    # Each kernel started from nothing when its submission comes up: no spare started ahead.
    cold1 = grade_seconds(subs, root / f"out-{lesson}-c1", [lesson], jobs=1, warm=False)
    cold2 = grade_seconds(subs, root / f"out-{lesson}-c2", [lesson], jobs=2, warm=False)
    dask = dask_seconds(subs, root / f"out-{lesson}-dask", [lesson], runs)
    return {
        "lesson": lesson,
        "n": n,
        "plain": plain,
        "j1": jobs1,
        "j2": jobs2,
        "c1": cold1,
        "c2": cold2,
        "dask": dask,
    }


def course_row(lessons: list[str], root: Path) -> tuple[float, float, float]:
    """One student handing in every lesson's solution, graded with --jobs 1 and --jobs 2 (the
    default on two cores), and the sum of those solutions' run times in started kernels."""
    subs = root / "course"
    for lesson in lessons:
        write_class(subs, lesson, {"student": solution(lesson)})
    jobs1 = grade_seconds(subs, root / "out-course", lessons, jobs=1)
    jobs2 = grade_seconds(subs, root / "out-course-j2", lessons, jobs=2)
    return jobs1, jobs2, sum(started_kernel_seconds(lesson) for lesson in lessons)


def bench_grade(
    lesson: str = "00_welcome",
    n: int = 8,
    heavy: str | None = None,
    heavy_n: int = 2,
    course_lessons: list[str] | None = None,
) -> str:
    """The table ``make bench-grade`` prints: ``lesson`` with n submissions beside the
    heaviest lesson with heavy_n, then the whole course (or ``course_lessons``) for one
    student."""
    heavy_plain = None
    if heavy is None:
        heavy, heavy_plain = heaviest()
    with tempfile.TemporaryDirectory(prefix="bench-grade-") as tmp:
        root = Path(tmp)
        columns = [
            lesson_column(lesson, n, root, runs=2),
            lesson_column(heavy, heavy_n, root, heavy_plain),
        ]
        lessons = course_lessons or course.lessons()
        course_j1, course_j2, course_warm = course_row(lessons, root)

    def each(key: str):
        return [f"{c[key] / c['n']:.1f}" for c in columns]

    rows = [
        ("", [c["lesson"] for c in columns], ""),
        ("submissions graded", [str(c["n"]) for c in columns], "the solution, n times"),
        ("plain nbclient run of the solution (s)", [f"{c['plain']:.1f}" for c in columns],
         "fresh kernel, one thread"),
        ("grade --jobs 1, per submission (s)", each("j1"), "whole run / n, fixed costs in;"),
        ("", ["best of 2", "one run"], "--jobs 1, --jobs 2 and Dask"),
        ("grade --jobs 2, per submission (s)", each("j2"), ""),
        (f"Dask, {DASK_WORKERS} local workers, per submission (s)", each("dask"), ""),
        ("per submission: grade --jobs 1 / plain", [f"{c['j1'] / c['n'] / c['plain']:.2f}x"
         for c in columns], "target <= 1.0x"),
        ("speed-up of --jobs 2", [f"{c['j1'] / c['j2']:.2f}x" for c in columns],
         "target >= 1.7x"),
        ("--no-warm: grade --jobs 1, per submission (s)", each("c1"), ""),
        ("--no-warm: grade --jobs 2, per submission (s)", each("c2"), ""),
        ("--no-warm: per submission / plain", [f"{c['c1'] / c['n'] / c['plain']:.2f}x"
         for c in columns], ""),
        ("--no-warm: speed-up of --jobs 2", [f"{c['c1'] / c['c2']:.2f}x" for c in columns],
         ""),
        ("--jobs 2: warm / --no-warm", [f"{c['j2'] / c['c2']:.2f}x" for c in columns],
         "what the spare kernels save"),
        ("Dask / --jobs 2", [f"{c['dask'] / c['j2']:.2f}x" for c in columns],
         "target <= 1.15x"),
    ]  # fmt: skip
    width = max(len(r[0]) for r in rows)
    lines = [f"{a:<{width}}  {b[0]:>14}  {b[1]:>14}  {c}" for a, b, c in rows]
    whole = "whole course" if course_lessons is None else f"{len(lessons)} lessons"
    lines += [
        "",
        f"{whole}, one student: its solutions in started kernels {course_warm:.1f} s; "
        f"grade --jobs 1 {course_j1:.1f} s ({course_j1 / course_warm:.2f}x), "
        f"--jobs 2 {course_j2:.1f} s ({course_j2 / course_warm:.2f}x); target <= 1.1x",
    ]
    return "\n".join(lines)
