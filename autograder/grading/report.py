"""The instructor's outputs: grades.csv, results.json and report.html (with pictures)."""

from __future__ import annotations

import base64
import csv
import functools
import html
import io
import json
import math
from collections import Counter
from pathlib import Path

from autograder import course
from autograder.grading.status import Status

FIXED_COLUMNS = ["student_id", "assignment", "score", "max_score", "status"]


def score_text(result: dict) -> str:
    """The row's score as written in files: empty for a grader error (no score, not 0)."""
    return "" if result["score"] is None else f"{result['score']:g}"


@functools.cache
def _names_in_several_lessons() -> frozenset[str]:
    """Exercise names that more than one lesson uses (their columns name the lesson too)."""
    seen = Counter(ex.grade_id for lesson in course.lessons() for ex in course.exercises(lesson))
    return frozenset(name for name, n in seen.items() if n > 1)


def column(assignment: str, exercise: str) -> str:
    """An exercise's column: its name, or ``lesson:name`` where several lessons use the name.

    The same whatever was graded in a run, so a spreadsheet reading grades.csv keeps working.
    """
    return f"{assignment}:{exercise}" if exercise in _names_in_several_lessons() else exercise


def exercise_columns(results: list[dict]) -> list[str]:
    """One column per exercise of the lessons in ``results``, in lesson then notebook order."""
    columns = []
    for a in sorted({r["assignment"] for r in results}):
        names = next((r["tests"] for r in results if r["assignment"] == a and r["tests"]), [])
        columns += [column(a, t["exercise"]) for t in names]
    return columns


def write_csv(results: list[dict], path: Path) -> None:
    """grades.csv: the fixed columns, the points per exercise, then why a row went wrong."""
    columns = exercise_columns(results)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(FIXED_COLUMNS + columns + ["message"])
        for r in results:
            points = {column(r["assignment"], t["exercise"]): t["score"] for t in r["tests"]}
            row = [
                r["student"],
                r["assignment"],
                score_text(r),
                f"{r['max_score']:g}",
                r["status"],
            ]
            row += [f"{points[c]:g}" if c in points else "" for c in columns]
            writer.writerow([*row, r.get("message", "")])


def write_json(results: list[dict], path: Path) -> None:
    path.write_text(json.dumps(results, indent=1))


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode()


def write_html(results: list[dict], path: Path) -> None:
    """Score histogram, pass rate per exercise, most frequent failure messages per exercise."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    parts = [
        "<html><head><meta charset='utf-8'><title>Grading report</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:auto}"
        "td,th{border:1px solid #ccc;padding:2px 6px}table{border-collapse:collapse}</style>",
        "</head><body><h1>Grading report</h1>",
    ]
    statuses = Counter(r["status"] for r in results)
    parts.append(
        "<p>" + ", ".join(f"{html.escape(k)}: {v}" for k, v in sorted(statuses.items())) + "</p>"
    )
    for assignment in sorted({r["assignment"] for r in results}):
        rows = [r for r in results if r["assignment"] == assignment]
        parts.append(f"<h2>{html.escape(assignment)}</h2>")
        graded = [r for r in rows if r["tests"]]  # missing or invalid work is listed, not plotted
        if len(graded) < len(rows):
            parts.append(
                f"<p>{len(rows) - len(graded)} of {len(rows)} not graded (see status).</p>"
            )
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.5))
        top = math.ceil(rows[0]["max_score"])
        ax1.hist(
            [r["score"] for r in graded], bins=[k - 0.5 for k in range(top + 2)]
        )  # one bar a point
        ax1.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax1.set(title="Scores", xlabel=f"score (max {rows[0]['max_score']:g})", ylabel="students")
        names = [t["exercise"] for t in graded[0]["tests"]] if graded else []
        rates = [
            sum(r["tests"][i]["passed"] for r in graded) / len(graded) for i in range(len(names))
        ]
        ax2.bar(range(len(names)), rates)
        ax2.set_xticks(range(len(names)), names, rotation=45, ha="right")
        ax2.set(title="Pass rate per exercise", ylim=(0, 1))
        fig.tight_layout()
        parts.append(f"<img src='data:image/png;base64,{_png(fig)}'>")
        plt.close(fig)
        parts.append(
            "<h3>Most frequent failure messages</h3><table><tr><th>exercise</th><th>students</th><th>message</th></tr>"
        )
        for i, name in enumerate(names):
            counts = Counter(
                r["tests"][i]["message"] for r in graded if not r["tests"][i]["passed"]
            )
            for message, n in counts.most_common(3):
                parts.append(
                    f"<tr><td>{html.escape(name)}</td><td>{n}</td><td>{html.escape(message[:300])}</td></tr>"
                )
        parts.append("</table>")
    parts.append("</body></html>")
    path.write_text("\n".join(parts))


def write_all(results: list[dict], out: Path) -> None:
    write_csv(results, out / "grades.csv")
    write_json(results, out / "results.json")
    write_html(results, out / "report.html")


def table(results: list[dict]) -> str:
    """A plain-text table for the terminal."""
    lines = [f"{'student':<16}{'assignment':<16}{'score':>8}  status"]
    for r in results:
        score = score_text(r) or "-"
        lines.append(
            f"{r['student']:<16}{r['assignment']:<16}{score:>4}/{r['max_score']:<3g}  {r['status']}"
        )
    return "\n".join(lines)


def grader_errors(results: list[dict]) -> str:
    """One line naming how many submissions the grader could not grade, and why; "" if none."""
    failed = [r for r in results if r["status"] == Status.GRADER_ERROR]
    if not failed:
        return ""
    reasons = Counter(r.get("message", "")[:200] for r in failed)
    why = "; ".join(f"{n} x {reason}" for reason, n in reasons.most_common(3))
    return (
        f"{len(failed)} submission(s) could not be graded (grader-error: no score was written "
        f"for them, not even a 0; run the same command again to retry them): {why}"
    )
