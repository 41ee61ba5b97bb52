"""Command line: ``python -m autograder {release,translate,bench,verify,grade} ...``."""

from __future__ import annotations

import argparse
import os
import sys

from autograder import course
from autograder.grading.sandbox import DISK_MB, MEMORY_MB
from autograder.nbgrader_settings import CELL_TIMEOUT_S, LESSON_MAX_S, SUBMISSION_TIMEOUT_S
from autograder.platforms.cli import add_commands as add_platform_commands
from autograder.platforms.cli import add_lms_options


def _known_lessons(names: list[str]) -> list[str]:
    unknown = sorted(set(names) - set(course.lessons()))
    if unknown:
        raise SystemExit(
            f"error: no such lesson: {', '.join(unknown)}. Lessons: {', '.join(course.lessons())}"
        )
    return names


def cmd_release(args: argparse.Namespace) -> int:
    from autograder.release import release

    problems = release(_known_lessons(args.lessons) or None, check=args.check)
    if args.check:
        if problems:
            print("Student notebooks are out of date with solutions/:")
            print("\n".join(f"  {p}" for p in problems))
            print("Run `make release` (python -m autograder release) and commit the result.")
            return 1
        print(f"notebooks/ is up to date ({len(args.lessons or course.lessons())} lessons).")
        return 0
    print(f"Released {len(args.lessons or course.lessons())} lessons into notebooks/.")
    if problems:  # only translations can be left behind: their notebooks are not written
        print("Not released, translations to finish first:")
        print("\n".join(f"  {p}" for p in problems))
        return 1
    return 0


def cmd_translate(args: argparse.Namespace) -> int:
    from autograder import notebook, translations

    if args.lang not in translations.LANGUAGES:
        raise SystemExit(
            f"error: no edition {args.lang!r}. Editions: {', '.join(translations.LANGUAGES)}"
        )
    left_total = 0
    for lesson in _known_lessons(args.lessons) or course.lessons():
        nb = notebook.read(course.solution_notebook(lesson))
        try:
            if args.list:
                path = translations.translation_file(args.lang, lesson)
                blocks = translations.read(args.lang, lesson) if path.is_file() else {}
                left = translations.todo(nb, blocks)
            else:
                path, left = translations.refresh(args.lang, lesson, nb)
        except translations.TranslationError as err:  # nothing was written: fix it first
            print(f"error: {err}", file=sys.stderr)
            return 2
        left_total += len(left)
        shown = translations.shown_path(path)
        if not left:
            print(f"{shown}: done ({len(translations.markdown_cells(nb))} cells)")
            continue
        print(f"{shown}: {len(left)} cells to translate")
        for item in left:
            note = {
                "missing": "new cell, English text written in",
                "stale": "English changed; English text written in (the old translation is "
                "in git: git log -p " + str(shown) + ")",
                "English": "still the English text",
            }[item.why]
            print(f"  {item.cell_id}: {note}")
    if left_total:
        print(
            "Replace the English text under each listed header (keep the header line), then "
            "run `python -m autograder release LESSON` and `release --check`."
        )
    return 1 if left_total else 0


def cmd_bench(args: argparse.Namespace) -> int:
    from autograder.bench import bench_lesson, format_table

    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    rows = []
    for lesson in _known_lessons(args.lessons) or course.lessons():
        print(f"running {lesson} ...", file=sys.stderr, flush=True)
        rows.append(bench_lesson(lesson))
    print(f"Fresh kernel per notebook, OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}, CPU:")
    print(format_table(rows))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    from autograder.release import release
    from autograder.verify import verify

    failed = False
    for lesson in _known_lessons(args.lessons) or course.lessons():
        release([lesson])
        problems = verify(lesson)
        for p in problems:
            print(f"PROBLEM {lesson}: {p}")
        failed = failed or bool(problems)
    return 1 if failed else 0


def cmd_trusted(args: argparse.Namespace) -> int:
    from autograder.check_harness import check_lesson

    failed = False
    for lesson in _known_lessons(args.lessons) or course.lessons():
        report = check_lesson(lesson, only=args.exercise)
        print(
            f"{lesson}: {report.exercises} exercises, {report.mistakes} mistakes failed, "
            f"{report.recognised} named as themselves or a twin, "
            f"{report.right_answers} right answers checked, {report.seconds:.1f} s"
        )
        for problem in report.failures:
            print(f"  PROBLEM {problem}")
        failed = failed or bool(report.failures)
    return 1 if failed else 0


def cmd_grade(args: argparse.Namespace) -> int:
    from pathlib import Path

    from autograder.platforms.cli import grade_from_lms

    lms_asked = args.lms or args.canvas_gradebook or args.canvas_column or args.moodle_worksheet
    if lms_asked and not getattr(args, "staged", False):
        args.staged = True  # grade_from_lms stages the download, then calls this again
        return grade_from_lms(args, cmd_grade)

    from autograder.grading.report import grader_errors, table, write_all
    from autograder.grading.run import GradeOptions, UsageError, grade, saved_results
    from autograder.grading.status import GRADER_ERRORS_EXIT

    opts = GradeOptions(
        submissions=Path(args.submissions),
        out=Path(args.out),
        assignments=args.assignment or None,
        jobs=args.jobs,
        timeout_s=args.timeout,
        memory_mb=args.memory,
        disk_mb=args.disk,
        submission_timeout_s=args.submission_timeout,
        force=args.force,
        sandboxed=not args.no_sandbox,
        gpu=False if args.no_gpu else None,
        scheduler=args.scheduler,
        warm=not args.no_warm,
    )
    try:
        results = grade(opts)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        saved = saved_results(opts.out)
        if saved:
            write_all(saved, opts.out)
        print(
            f"\ninterrupted; results saved in {opts.out}: {len(saved)}. Run the same "
            "command again to grade the rest.",
            file=sys.stderr,
        )
        return 130
    # The files hold every result in OUT, from earlier runs too (other lessons, sections).
    write_all(saved_results(opts.out), opts.out)
    print(table(results))
    print(f"Wrote {opts.out / 'grades.csv'}, results.json, report.html and feedback/.")
    failed = grader_errors(results)
    if failed:  # said last, where an instructor looks, and in the exit status scripts see
        print(f"error: {failed}", file=sys.stderr)
        return GRADER_ERRORS_EXIT
    return 0


def cmd_grade_demo(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from autograder.grading.samples import demo_class, write_class

    if args.out and Path(args.out).exists() and any(Path(args.out).iterdir()):
        print(f"error: {args.out} is not empty; the demo grades into a new folder", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="grade-demo-"))
    submissions = write_class(root / "submissions", args.lesson, demo_class(args.lesson))
    out = Path(args.out) if args.out else root / "out"
    print(f"Sample submissions in {submissions}; grading into {out}")
    return main(
        ["grade", str(submissions), "--out", str(out), "--assignment", args.lesson, "--force"]
    )


def cmd_bench_grade(args: argparse.Namespace) -> int:
    from autograder.bench import bench_grade

    print(f"Grading benchmark on {args.lesson} ({args.n} submissions for the jobs comparison):")
    print(bench_grade(args.lesson, args.n))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    rel = sub.add_parser("release", help="regenerate notebooks/ from solutions/")
    rel.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    rel.add_argument("--check", action="store_true", help="fail if notebooks/ is stale")
    rel.set_defaults(func=cmd_release)

    tra = sub.add_parser(
        "translate",
        help="refresh translations/LANG/LESSON.md and list the cells a translator must do",
    )
    tra.add_argument("lang", help="edition, e.g. zh")
    tra.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    tra.add_argument("--list", action="store_true", help="only list the cells; write nothing")
    tra.set_defaults(func=cmd_translate)

    ben = sub.add_parser("bench", help="time every lesson's notebooks and print a table")
    ben.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    ben.add_argument(
        "--threads", type=int, default=1, help="torch threads per kernel (default 1, as in CI)"
    )
    ben.set_defaults(func=cmd_bench)

    ver = sub.add_parser("verify", help="release a lesson, run its mistakes and nbgrader, report")
    ver.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    ver.set_defaults(func=cmd_verify)

    tru = sub.add_parser(
        "trusted",
        help="run hidden checks across the data boundary, in-process: solution passes, mistakes fail",
    )
    tru.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    tru.add_argument("--exercise", help="only this exercise (its answer grade_id)")
    tru.set_defaults(func=cmd_trusted)

    gra = sub.add_parser("grade", help="grade a class's submissions through nbgrader")
    gra.add_argument(
        "submissions", help="folder laid out as <student>/<assignment>/<notebook>.ipynb"
    )
    gra.add_argument("--out", required=True, help="output folder (an nbgrader course)")
    gra.add_argument("--assignment", action="append", help="grade only this lesson (repeatable)")
    gra.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="parallel jobs (default: cores)"
    )
    gra.add_argument(
        "--timeout",
        type=int,
        default=CELL_TIMEOUT_S,
        help=f"seconds per cell (default {CELL_TIMEOUT_S})",
    )
    gra.add_argument(
        "--memory",
        type=int,
        default=MEMORY_MB,
        help=f"MiB per submission (default {MEMORY_MB}, at least 4096): all its processes "
        "together, where a control group can be made, and each process's address space "
        "(its private memory with a GPU)",
    )
    gra.add_argument(
        "--disk",
        type=int,
        default=DISK_MB,
        help=f"MiB of writable disk per kernel (default {DISK_MB}): its /tmp, a tmpfs",
    )
    gra.add_argument(
        "--submission-timeout",
        type=int,
        default=SUBMISSION_TIMEOUT_S,
        help=f"seconds for a whole notebook (default {SUBMISSION_TIMEOUT_S}: five times the "
        f"{LESSON_MAX_S} s a lesson may take)",
    )
    gra.add_argument(
        "--no-gpu", action="store_true", help="kernels use the CPU even where a GPU is present"
    )
    gra.add_argument("--force", action="store_true", help="re-grade what is already graded")
    gra.add_argument("--no-sandbox", action="store_true", help="trusted code only: no bubblewrap")
    gra.add_argument(
        "--no-warm",
        action="store_true",
        help="start each kernel from nothing when its submission comes up: no spare kernel "
        "started ahead (slower; for comparison)",
    )
    gra.add_argument(
        "--scheduler",
        metavar="tcp://HOST:8786",
        help="grade on the workers of this Dask scheduler instead of here (--jobs is then "
        "the cluster's: one submission per worker)",
    )
    add_lms_options(gra)
    gra.set_defaults(func=cmd_grade)
    add_platform_commands(sub)

    demo = sub.add_parser("grade-demo", help="grade bundled sample submissions and print the table")
    demo.add_argument(
        "--lesson", default="00_welcome", help="lesson the samples answer (default 00_welcome)"
    )
    demo.add_argument("--out", help="output folder (default: a temporary one)")
    demo.set_defaults(func=cmd_grade_demo)

    bg = sub.add_parser("bench-grade", help="time the grade command against plain execution")
    bg.add_argument("--lesson", default="00_welcome")
    bg.add_argument("-n", type=int, default=8, help="submissions for the --jobs comparison")
    bg.set_defaults(func=cmd_bench_grade)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
