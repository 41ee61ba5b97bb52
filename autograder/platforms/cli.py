"""The platforms' commands: ``gradescope``, ``prairielearn`` and ``grade --from canvas|moodle``."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

LMS_HELP = "the submissions are a Canvas or Moodle download (a zip or its folder)"


def add_commands(sub) -> None:
    """Add the ``gradescope`` and ``prairielearn`` subcommands to the CLI's subparsers."""
    from autograder.platforms.gradescope import VISIBILITIES

    gs = sub.add_parser("gradescope", help="write a lesson's Gradescope autograder zip")
    gs.add_argument("lesson")
    gs.add_argument("--out", required=True, help="folder for autograder.zip")
    gs.add_argument(
        "--hidden-visibility",
        default="after_published",
        choices=VISIBILITIES,
        help="when students see what the hidden checks found (default after_published)",
    )
    gs.set_defaults(func=cmd_gradescope)

    pl = sub.add_parser("prairielearn", help="write a PrairieLearn question's grading files")
    pl.add_argument("lesson")
    pl.add_argument("--out", required=True, help="the question's folder")
    pl.set_defaults(func=cmd_prairielearn)


def add_lms_options(grade_parser: argparse.ArgumentParser) -> None:
    """The grade command's LMS options."""
    grade_parser.add_argument("--from", dest="lms", choices=("canvas", "moodle"), help=LMS_HELP)
    grade_parser.add_argument(
        "--canvas-gradebook", help="a Canvas gradebook export (CSV) to fill with this lesson"
    )
    grade_parser.add_argument(
        "--canvas-column", help="the gradebook column to fill (default: the one naming the lesson)"
    )
    grade_parser.add_argument(
        "--moodle-worksheet", help="a Moodle offline grading worksheet (CSV) to fill"
    )


def cmd_gradescope(args: argparse.Namespace) -> int:
    from autograder.platforms.gradescope import build_zip

    try:
        path = build_zip(args.lesson, Path(args.out), args.hidden_visibility)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(
        f"Wrote {path}: upload it as the assignment's autograder (docs/platforms.md, 'Gradescope')."
    )
    return 0


def cmd_prairielearn(args: argparse.Namespace) -> int:
    from autograder.platforms.prairielearn import write_question_files

    try:
        paths = write_question_files(args.lesson, Path(args.out))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print("Wrote " + ", ".join(str(p) for p in paths))
    return 0


def lms_problem(args: argparse.Namespace) -> str | None:
    """Why the LMS options cannot be used as given, or None."""
    if (args.canvas_gradebook or args.canvas_column) and args.lms != "canvas":
        return "--canvas-gradebook and --canvas-column need --from canvas"
    if args.moodle_worksheet and args.lms != "moodle":
        return "--moodle-worksheet needs --from moodle"
    if args.lms and len(args.assignment or []) != 1:
        return f"--from {args.lms} grades one lesson: give it with --assignment LESSON"
    for name in ("canvas_gradebook", "moodle_worksheet"):
        value = getattr(args, name)
        if value and not Path(value).is_file():
            return f"--{name.replace('_', '-')} {value}: no such file"
    return None


def grade_from_lms(args: argparse.Namespace, grade_command) -> int:
    """Stage the download in nbgrader's layout, run the grade command on it, write LMS files."""
    from autograder.grading.run import saved_results
    from autograder.grading.status import GRADER_ERRORS_EXIT
    from autograder.platforms import lms

    problem = lms_problem(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    lesson = args.assignment[0]
    staging = Path(tempfile.mkdtemp(prefix=f"{args.lms}-"))
    try:
        try:
            collected = lms.stage(Path(args.submissions), args.lms, lesson, staging)
        except lms.LmsError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(lms.report(collected))
        download = args.submissions
        args.submissions = str(staging)
        status = grade_command(args)
        args.submissions = download
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    if status not in (0, GRADER_ERRORS_EXIT):  # grader errors: the exports leave those cells empty
        return status
    out = Path(args.out)
    (out / "lms").mkdir(parents=True, exist_ok=True)
    (out / "lms" / "matched.json").write_text(_json(collected.to_dict()))
    archive = lms.write_feedback(collected, out)
    print(f"Feedback for upload to {args.lms}: {archive}")
    results = saved_results(out)
    try:
        if args.canvas_gradebook:
            outcome = lms.fill_canvas_gradebook(
                Path(args.canvas_gradebook),
                results,
                lesson,
                out / "lms" / "canvas_import.csv",
                args.canvas_column,
            )
            _print_outcome(outcome, "Canvas")
        if args.moodle_worksheet:
            outcome = lms.fill_moodle_worksheet(
                Path(args.moodle_worksheet), results, lesson, out / "lms" / "moodle_worksheet.csv"
            )
            _print_outcome(outcome, "Moodle")
    except lms.LmsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return status


def _print_outcome(outcome, lms_name: str) -> None:
    print(f"Wrote {outcome.path} ({outcome.filled} grades) for {lms_name}'s import.")
    if outcome.not_graded:
        print(
            f"  left empty, the grader failed on them (see grades.csv): "
            f"{', '.join(outcome.not_graded)}"
        )
    if outcome.not_in_gradebook:
        print(f"  graded but not in the gradebook: {', '.join(outcome.not_in_gradebook)}")
    if outcome.no_grade:
        print(f"  in the gradebook without a graded submission: {', '.join(outcome.no_grade)}")


def _json(data) -> str:
    import json

    return json.dumps(data, indent=1)
