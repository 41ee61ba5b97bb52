"""Grade the attack corpus twice and print a table: plain nbgrader vs the grade command.

Plain nbgrader runs the hidden checks inside the student's kernel, unsandboxed, as
``nbgrader autograde`` does; the grade command computes verdicts in its own process. A
script for a person to read (it takes several minutes: plain nbgrader grades one
notebook at a time and waits out the slow answer's per-cell timeout).

    .venv/bin/python tools/attack_report.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.grading import samples  # noqa: E402
from autograder.grading.run import GradeOptions, grade  # noqa: E402
from autograder.nbgrader_course import AutogradeError, autograde  # noqa: E402
from tests.grading import attacks  # noqa: E402


def main() -> int:
    notebooks = attacks.corpus()
    sentinel = Path(attacks.SENTINEL)
    sentinel.write_text("left alone?")
    try:
        ours, plain = _grade_both(notebooks)
    finally:
        sentinel.unlink(missing_ok=True)
    what = {a.name: a.what for a in attacks.ATTACKS}
    print(f"{'submission':<22} {'plain nbgrader':<26} {'grade command':<14} attack")
    for student in notebooks:
        r = ours[student]
        ours_text = f"{r['score']:g}/{r['max_score']:g} {r['status']}"
        print(
            f"{student:<22} {plain[student]:<26} {ours_text:<14} {what.get(student, 'honest answers')}"
        )
    return 0


def _grade_both(notebooks: dict) -> tuple[dict, dict]:
    """The grade command's results and plain nbgrader's scores, per submission."""
    with tempfile.TemporaryDirectory(prefix="attack-report-") as tmp:
        root = Path(tmp)
        subs = samples.write_class(root / "subs", attacks.LESSON, notebooks)
        ours = {
            r["student"]: r
            for r in grade(GradeOptions(subs, root / "out", [attacks.LESSON], jobs=2, timeout_s=20))
        }
        plain = {}
        for student in notebooks:  # one at a time: one nbgrader failure must not hide the rest
            path = subs / student / attacks.LESSON / f"{attacks.LESSON}.ipynb"
            try:
                grades = autograde(attacks.LESSON, {student: path}, root / "plain" / student)
                plain[student] = f"{sum(g.score for g in grades[student]):g}/5"
            except AutogradeError:
                plain[student] = "nbgrader failed"
    return ours, plain


if __name__ == "__main__":
    sys.exit(main())
