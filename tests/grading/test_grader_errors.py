"""A grader failure is never a student's zero.

The grade command runs here as an instructor runs it (a subprocess, with the environment
changed), and a failing sandbox is a stand-in ``bwrap`` on PATH: it passes the plain
"does bubblewrap start" check but refuses to start kernels, after the first ``ALLOW`` of
them. Then:

- temporary folders anywhere (TMPDIR, XDG_RUNTIME_DIR, HOME) grade as usual;
- kernels that cannot start at all stop the run before anyone is graded (status 2);
- kernels that fail after that give ``grader-error`` rows: no score (not 0), no gradebook
  points, empty LMS cells, one retry, exit status 3 and a summary line;
- Gradescope's and PrairieLearn's runs end as failed jobs, with no results.json.
"""

import csv
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autograder import course
from autograder.grading import cluster, samples, sandbox
from autograder.grading.run import GradeOptions, UsageError
from autograder.grading.status import GRADER_ERRORS_EXIT, Status
from autograder.grading.worker import grader_error
from autograder.platforms import gradescope, lms, prairielearn

pytestmark = [
    pytest.mark.lesson,
    pytest.mark.xdist_group("grading"),
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed"),
]
LESSON = "00_welcome"


@pytest.fixture(scope="module")
def submissions(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("grader-errors")
    return samples.write_class(
        root / "subs", LESSON, {"right": samples.solution(LESSON), "blank": samples.blank(LESSON)}
    )


def _failing_bwrap(folder: Path, allow: int) -> tuple[dict, Path]:
    """An environment whose ``bwrap`` starts plain commands but no kernel after ``allow``."""
    real = Path(subprocess.check_output(["which", "bwrap"], text=True).strip())
    counter = folder / "kernels-started"
    fake = folder / "bin" / "bwrap"
    fake.parent.mkdir(parents=True, exist_ok=True)
    fake.write_text(
        textwrap.dedent(
            f"""\
            #!/bin/bash
            # The checks that bubblewrap starts run `true`; anything else is a kernel's sandbox.
            # Builtins only: a child process here would be taken for the sandbox's init.
            if [ "${{@: -1}}" != true ]; then
                n=0; [ -f {counter} ] && read -r n < {counter}; n=$((n + 1)); echo $n > {counter}
                if [ $n -gt {allow} ]; then echo "bwrap: forced failure" >&2; exit 1; fi
            fi
            exec {real} "$@"
            """
        )
    )
    fake.chmod(0o755)
    return {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}, counter


def _grade(subs: Path, out: Path, env: dict, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "autograder", "grade", str(subs), "--out", str(out)]
    argv += ["--assignment", LESSON, "--jobs", "1", "--memory", "4096", *extra]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)


def _rows(out: Path) -> dict[str, dict]:
    with (out / "grades.csv").open() as f:
        return {r["student_id"]: r for r in csv.DictReader(f)}


def test_temporary_folders_anywhere_grade_the_same(submissions, tmp_path):
    usual = _grade(submissions, tmp_path / "usual", dict(os.environ))
    assert usual.returncode == 0, usual.stderr[-2000:]
    elsewhere = {"TMPDIR": "scratch", "XDG_RUNTIME_DIR": "runtime", "HOME": "home"}
    env = dict(os.environ)
    for name, folder in elsewhere.items():  # a cluster's scratch space, not /tmp
        (tmp_path / folder).mkdir()
        env[name] = str(tmp_path / folder)
    moved = _grade(submissions, tmp_path / "moved", env)
    assert moved.returncode == 0, moved.stderr[-2000:]
    scores = {s: (r["score"], r["status"]) for s, r in _rows(tmp_path / "usual").items()}
    assert scores == {"right": ("5", "ok"), "blank": ("0", "ok")}
    assert {s: (r["score"], r["status"]) for s, r in _rows(tmp_path / "moved").items()} == scores
    # Nothing of a kernel stays in the temporary folder: no connection file, no key.
    assert not list((tmp_path / "scratch").glob("gk-*"))


def test_kernels_that_cannot_start_stop_the_run_before_anyone_is_graded(submissions, tmp_path):
    env, _ = _failing_bwrap(tmp_path, allow=0)
    done = _grade(submissions, tmp_path / "out", env)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "kernels cannot start here, so nobody was graded" in done.stderr
    assert "forced failure" in done.stderr  # the reason, as the sandbox gave it
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_a_grader_error_is_no_score_anywhere(submissions, tmp_path):
    env, counter = _failing_bwrap(tmp_path, allow=1)  # the up-front check's kernel starts
    out = tmp_path / "out"
    done = _grade(submissions, out, env, "--no-warm")
    assert done.returncode == GRADER_ERRORS_EXIT, done.stderr[-2000:]
    assert "2 submission(s) could not be graded (grader-error" in done.stderr
    rows = _rows(out)
    for student in ("right", "blank"):
        assert rows[student]["status"] == Status.GRADER_ERROR
        assert rows[student]["score"] == ""  # empty, never 0
        assert "the sandbox did not start its kernel" in rows[student]["message"]
    # Each submission was tried twice: one kernel for the check, then two per submission.
    assert int(counter.read_text()) == 1 + 2 * 2
    with sqlite3.connect(out / "gradebook.db") as db:
        assert db.execute("SELECT count(*) FROM submitted_notebook").fetchone() == (0,)
    assert not (out / "feedback" / "right").exists()  # no feedback that shows a zero
    assert [r["score"] for r in _saved(out)] == [None, None]


def test_lms_files_leave_a_grader_errors_cell_empty(tmp_path):
    failed = grader_error("17", LESSON, "the sandbox did not start its kernel").to_dict()
    canvas = tmp_path / "canvas.csv"
    canvas.write_text(
        f"Student,ID,SIS User ID,Section,{LESSON} (123)\n"
        "    Points Possible,,,,10\nSome One,17,,A,7\n"
    )
    filled = lms.fill_canvas_gradebook(canvas, [failed], LESSON, tmp_path / "import.csv")
    assert filled.filled == 0 and filled.not_graded == ["17"]
    written = list(csv.reader((tmp_path / "import.csv").open()))
    assert written[2][-1] == ""  # neither 0 nor the 7 Canvas had
    moodle = tmp_path / "moodle.csv"
    moodle.write_text("Identifier,Full name,Grade,Maximum Grade\nParticipant 17,Some One,7,10\n")
    filled = lms.fill_moodle_worksheet(moodle, [failed], LESSON, tmp_path / "sheet.csv")
    assert filled.filled == 0 and filled.not_graded == ["17"]
    assert next(csv.DictReader((tmp_path / "sheet.csv").open()))["Grade"] == ""


def _saved(out: Path) -> list[dict]:
    import json

    return [json.loads(p.read_text()) for p in sorted((out / "results").glob("*/*.json"))]


@pytest.mark.parametrize("platform", ["gradescope", "prairielearn"])
def test_platforms_end_a_failed_grading_as_a_failed_job(platform, tmp_path, monkeypatch):
    env, _ = _failing_bwrap(tmp_path, allow=0)
    monkeypatch.setenv("PATH", env["PATH"])
    inbox = "submission" if platform == "gradescope" else "student"
    (tmp_path / inbox).mkdir()
    (tmp_path / inbox / f"{LESSON}.ipynb").write_bytes(
        course.solution_notebook(LESSON).read_bytes()
    )
    stale = tmp_path / "results" / "results.json"
    stale.parent.mkdir()
    stale.write_text('{"score": 0}')  # an earlier job's: it must not stand for this one
    module = gradescope if platform == "gradescope" else prairielearn
    assert module.main(["run", "--lesson", LESSON, "--root", str(tmp_path)]) == 1
    assert not stale.exists()


def test_a_cluster_worker_that_cannot_start_kernels_is_refused_by_name():
    class Pool:
        class client:
            @staticmethod
            def run(function, *args, on_error="raise"):
                assert function is cluster.kernel_check_here
                return {
                    "tcp://10.0.0.6:4000": None,
                    "tcp://10.0.0.7:4000": "RuntimeError: the sandbox did not start its kernel",
                    "tcp://10.0.0.8:4000": OSError("no space left on device"),
                }

    with pytest.raises(UsageError) as refused:
        cluster.check_kernels(Pool, GradeOptions(Path("."), Path("out")), None)
    message = str(refused.value)
    assert "10.0.0.6" not in message and "nobody was graded" in message
    assert "tcp://10.0.0.7:4000: RuntimeError: the sandbox did not start its kernel" in message
    assert "tcp://10.0.0.8:4000" in message and "no space left on device" in message
