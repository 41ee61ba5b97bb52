"""Command line: ``python -m autograder {release,bench,verify} ...``."""

from __future__ import annotations

import argparse
import os
import sys

from autograder import course


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
    return 0


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    rel = sub.add_parser("release", help="regenerate notebooks/ from solutions/")
    rel.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    rel.add_argument("--check", action="store_true", help="fail if notebooks/ is stale")
    rel.set_defaults(func=cmd_release)

    ben = sub.add_parser("bench", help="time every lesson's notebooks and print a table")
    ben.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    ben.add_argument(
        "--threads", type=int, default=1, help="torch threads per kernel (default 1, as in CI)"
    )
    ben.set_defaults(func=cmd_bench)

    ver = sub.add_parser("verify", help="release a lesson, run its mistakes and nbgrader, report")
    ver.add_argument("lessons", nargs="*", help="lesson folders (default: all)")
    ver.set_defaults(func=cmd_verify)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
