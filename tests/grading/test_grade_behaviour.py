"""The grade command on a class of fixture submissions, each misbehaving in one way.

One grading run serves every test here (it is the slow part); each fixture is built at
run time from 00_welcome's own notebooks, so none can drift from the lesson.
"""

import json
import os
import re
import shutil
import socket
import tempfile
import textwrap
from pathlib import Path

import nbformat
import pytest

from autograder import course
from autograder.grading import samples, sandbox
from autograder.grading.report import write_all
from autograder.grading.run import GradeOptions, UsageError, grade

pytestmark = [
    pytest.mark.lesson,
    pytest.mark.xdist_group("grading"),
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed"),
]
LESSON = "00_welcome"
FULL = {"pick_device": 1.0, "halve_until_small": 2.0, "value_and_grad": 2.0}


def _cell(nb, grade_id):
    return next(
        i
        for i, c in enumerate(nb.cells)
        if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id
    )


def _edited_test(nb):
    nb = samples.with_first_mistake(LESSON, nb, "pick_device")
    nb.cells[_cell(nb, "test_pick_device")].source = "pass  # all good, promise"
    return nb


def _deleted_test(nb):
    del nb.cells[_cell(nb, "test_value_and_grad")]
    return nb


def _duplicated(nb):
    i = _cell(nb, "halve_until_small")
    nb.cells.insert(i + 1, nbformat.from_dict(json.loads(json.dumps(nb.cells[i]))))
    return nb


def _split(nb):
    i = _cell(nb, "value_and_grad")
    extra = nbformat.v4.new_code_cell("HELPER_CONSTANT = 1.0  # a cell the student added")
    nb.cells.insert(i, extra)
    return nb


def _reordered(nb):
    a, t = _cell(nb, "pick_device"), _cell(nb, "test_pick_device")
    block = nb.cells[a : t + 1]
    del nb.cells[a : t + 1]
    nb.cells[-1:-1] = block  # the first exercise moved to the end
    return nb


def _answer(grade_id, code):
    return lambda nb: samples.replace_answer(nb, grade_id, code)


def _probe_code(paths: dict[str, str], port: int) -> str:
    """A cell that tries to read, write and connect where it must not, and reports."""
    return textwrap.dedent(
        f"""
        import json, os, socket
        report = {{}}
        for name, path in {paths!r}.items():
            try:
                with open(path, "rb") as f:
                    f.read(1)
                report[name] = "LEAKED"
            except OSError as err:
                report[name] = "blocked"
        with open("/tmp/pwned-by-student", "w") as f:  # the sandbox's own /tmp: allowed
            f.write("x")
        writes = {{"write_repo": "{course.ROOT}/pwned", "write_root": "/pwned", "write_etc": "/etc/pwned"}}
        for name, path in writes.items():
            try:
                with open(path, "w") as f:
                    f.write("x")
                report[name] = "LEAKED"
            except OSError:
                report[name] = "blocked"
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
            report["network"] = "LEAKED"
        except OSError:
            report["network"] = "blocked"
        report["root"] = "LEAKED" if os.getuid() == 0 else "blocked"
        print("PROBE" + json.dumps(report))
        """
    )


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    subs, out = root / "submissions", root / "out"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    secrets = {
        "solutions": str(course.solution_notebook(LESSON)),
        "hidden_source": str(course.ROOT / "autograder" / "hidden" / "welcome.py"),
        "gradebook": str(out / "gradebook.db"),
        "other_student": str(subs / "right" / LESSON / f"{LESSON}.ipynb"),
        "out_results": str(out / "nbgrader_config.py"),
    }
    # A copy of the course somewhere the old, hide-a-list sandbox left visible (it found the
    # developer's checkout under /work): the sandbox now shows only what it lists.
    if os.access("/var", os.W_OK):
        elsewhere = Path(tempfile.mkdtemp(prefix="course-copy-", dir="/var"))
        (elsewhere / "welcome.py").write_text("# hidden checks\n")
        secrets["another_checkout"] = str(elsewhere / "welcome.py")

    def snoop(nb):
        i = _cell(nb, "pick_device")
        nb.cells.insert(i, nbformat.v4.new_code_cell(_probe_code(secrets, port)))
        return nb

    right = samples.solution(LESSON)
    builders = {
        "right": lambda nb: nb,
        "infinite_loop": _answer(
            "halve_until_small", "def halve_until_small(x, limit):\n    while True:\n        pass\n"
        ),
        "os_exit": _answer("pick_device", "import os\nos._exit(3)\n"),
        "segfault": _answer("halve_until_small", "import ctypes\nctypes.string_at(0)\n"),
        "memory_bomb": _answer("value_and_grad", "hog = bytearray(8 * 1024**3)\n"),
        "warnings": _answer(
            "pick_device",
            "import sys, warnings\n"
            "def pick_device(cuda_available, mps_available):\n"
            "    warnings.warn('a warning from a correct answer')\n"
            "    print('progress', file=sys.stderr)\n"
            "    return torch.device('cuda' if cuda_available else 'mps' if mps_available else 'cpu')\n",
        ),
        "edited_test": _edited_test,
        "deleted_test": _deleted_test,
        "duplicated": _duplicated,
        "split": _split,
        "reordered": _reordered,
        "snoop": snoop,
        # Fits the ignores-mps mistake on the hidden check's first input, but its visible
        # error says otherwise: it must get no hint.
        "always_cpu": _answer(
            "pick_device",
            "import torch\ndef pick_device(cuda_available, mps_available):\n"
            "    return torch.device('cpu')\n",
        ),
    }
    notebooks = {name: build(samples.solution(LESSON)) for name, build in builders.items()}
    notebooks["blank"] = samples.blank(LESSON)
    samples.write_class(subs, LESSON, notebooks)
    misplaced = subs / "misplaced" / "00-welcome" / "00-welcome.ipynb"  # a hyphen for the _
    misplaced.parent.mkdir(parents=True)
    nbformat.write(right, str(misplaced))
    (subs / "__MACOSX" / LESSON).mkdir(parents=True)  # a Mac zip's leftovers: not a student
    (subs / "invalid_json" / LESSON).mkdir(parents=True)
    (subs / "invalid_json" / LESSON / f"{LESSON}.ipynb").write_text('{"cells": [')
    (subs / "not_a_notebook" / LESSON).mkdir(parents=True)
    (subs / "not_a_notebook" / LESSON / "answers.py").write_text("print('hello')\n")
    (subs / "empty_folder" / LESSON).mkdir(parents=True)
    other = next((lesson for lesson in course.lessons() if lesson != LESSON), None)
    if other:
        (subs / "other_lesson" / LESSON).mkdir(parents=True)
        nbformat.write(
            samples.solution(other), str(subs / "other_lesson" / LESSON / f"{LESSON}.ipynb")
        )
    assert right  # built from the real solution
    opts = GradeOptions(subs, out, [LESSON], jobs=2, timeout_s=20, memory_mb=4096, progress=False)
    results = grade(opts)
    write_all(results, out)
    listener.close()
    if "another_checkout" in secrets:
        shutil.rmtree(Path(secrets["another_checkout"]).parent)
    return {r["student"]: r for r in results}, out, subs, opts


def scores(result):
    return {t["exercise"]: t["score"] for t in result["tests"]}


def test_every_submission_gets_a_row(graded):
    results, out, _, _ = graded
    rows = (out / "grades.csv").read_text().splitlines()
    assert rows[0] == (
        "student_id,assignment,score,max_score,status,"
        "pick_device,halve_until_small,value_and_grad,message"
    )
    assert len(rows) == 1 + len(results)
    assert "__MACOSX" not in results


def test_exercise_columns_do_not_depend_on_what_was_graded():
    from autograder.grading.report import column

    assert column(LESSON, "pick_device") == "pick_device"
    # an exercise name two lessons share is told apart by its lesson, in every run
    shared = [lesson for lesson in course.lessons() if "save_checkpoint" in _exercise_ids(lesson)]
    assert [column(lesson, "save_checkpoint") for lesson in shared] == [
        f"{lesson}:save_checkpoint" for lesson in shared
    ]


def _exercise_ids(lesson):
    from autograder import notebook

    return {e.grade_id for e in notebook.exercises(samples.solution(lesson))}


def test_right_and_blank(graded):
    results, *_ = graded
    assert scores(results["right"]) == FULL and results["right"]["status"] == "ok"
    assert results["blank"]["score"] == 0


def test_an_infinite_loop_costs_only_its_exercise(graded):
    r = graded[0]["infinite_loop"]
    assert scores(r) == {**FULL, "halve_until_small": 0.0}
    assert r["status"] == "timeout"


@pytest.mark.parametrize(
    ("student", "lost"), [("os_exit", "pick_device"), ("segfault", "halve_until_small")]
)
def test_a_dying_kernel_costs_only_its_exercise(graded, student, lost):
    r = graded[0][student]
    assert scores(r) == {**FULL, lost: 0.0}
    assert r["status"] == "crashed"
    assert r["message"].startswith(f"the kernel died in the cell {lost}")


def test_a_memory_bomb_hits_the_limit_and_costs_only_its_exercise(graded):
    r = graded[0]["memory_bomb"]
    assert scores(r) == {**FULL, "value_and_grad": 0.0}
    assert r["status"] == "memory"


def test_warnings_cost_nothing(graded):
    assert scores(graded[0]["warnings"]) == FULL


def test_edited_tests_are_restored(graded):
    r = graded[0]["edited_test"]
    assert scores(r) == {**FULL, "pick_device": 0.0}  # the real test ran and caught the mistake


@pytest.mark.parametrize("student", ["deleted_test", "duplicated", "split", "reordered"])
def test_restructured_notebooks_are_still_graded(graded, student):
    assert scores(graded[0][student]) == FULL


@pytest.mark.parametrize(
    ("student", "status"),
    [("invalid_json", "invalid"), ("not_a_notebook", "invalid"), ("empty_folder", "missing")],
)
def test_unusable_submissions_get_a_clear_status(graded, student, status):
    r = graded[0][student]
    assert r["status"] == status and r["score"] == 0 and r["message"]


def test_a_misplaced_notebook_is_named(graded):
    r = graded[0]["misplaced"]
    assert r["status"] == "missing"
    assert "00-welcome/00-welcome.ipynb" in r["message"]
    assert f"misplaced/{LESSON}/{LESSON}.ipynb" in r["message"]


def test_a_notebook_for_another_lesson_is_recognised(graded):
    if "other_lesson" not in graded[0]:
        pytest.skip("needs a second lesson in solutions/")
    r = graded[0]["other_lesson"]
    assert r["status"] == "wrong-assignment" and "notebook of" in r["message"]


def test_student_code_is_isolated(graded):
    results, out, _, _ = graded
    text = (out / "autograded" / "snoop" / LESSON / f"{LESSON}.ipynb").read_text()
    report = json.loads(text.split("PROBE")[1].split("\\n")[0].replace('\\"', '"'))
    assert report and set(report.values()) == {"blocked"}, report
    assert not Path("/tmp/pwned-by-student").exists()
    assert not (course.ROOT / "pwned").exists()
    assert scores(results["snoop"]) == FULL


@pytest.mark.parametrize("student", ["right", "edited_test", "always_cpu"])
def test_feedback_has_results_but_no_hidden_test_source(graded, student):
    _, out, _, _ = graded
    html = (out / "feedback" / student / LESSON / f"{LESSON}.html").read_text()
    assert "hidden tests ran here" in html
    # not in the cells, and not in the lines a failing test's traceback quotes either
    assert "BEGIN HIDDEN TESTS" not in html and "check_pick_device" not in html


def test_a_hint_never_contradicts_the_visible_error(graded):
    results, out, _, _ = graded
    test = next(t for t in results["always_cpu"]["tests"] if t["exercise"] == "pick_device")
    assert not test["passed"] and re.search("CUDA (is )?available", test["message"]), test
    assert test["misconception"] == ""
    html = (out / "feedback" / "always_cpu" / LESSON / f"{LESSON}.html").read_text()
    assert "This looks like a common mistake" not in html


def test_feedback_names_the_catalogued_mistake(graded):
    results, out, _, _ = graded
    from autograder.mistakes import catalogue

    mistake = catalogue("welcome")["pick_device"][0]  # what edited_test answers with
    test = next(t for t in results["edited_test"]["tests"] if t["exercise"] == "pick_device")
    assert test["misconception"] == mistake.message
    html = (out / "feedback" / "edited_test" / LESSON / f"{LESSON}.html").read_text()
    assert "This looks like a common mistake" in html


def test_autograded_notebooks_keep_every_cell(graded):
    _, out, subs, _ = graded
    graded_nb = nbformat.read(str(out / "autograded" / "right" / LESSON / f"{LESSON}.ipynb"), 4)
    submitted = nbformat.read(str(subs / "right" / LESSON / f"{LESSON}.ipynb"), 4)
    assert [c.source for c in graded_nb.cells] == [c.source for c in submitted.cells]


def test_results_land_in_the_gradebook(graded):
    from nbgrader.api import Gradebook

    _, out, _, _ = graded
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gradebook:
        assert gradebook.find_submission(LESSON, "right").score == 5.0
        assert gradebook.find_submission(LESSON, "blank").score == 0.0
        # autograded, so nothing waits for manual grading in formgrader
        flagged = [
            s.student.id
            for s in gradebook.find_assignment(LESSON).submissions
            if s.needs_manual_grade
        ]
        assert flagged == []


def test_report_and_json(graded):
    results, out, _, _ = graded
    assert "<img src='data:image/png;base64," in (out / "report.html").read_text()
    data = json.loads((out / "results.json").read_text())
    assert {d["student"] for d in data} == set(results)
    assert all("passed" in t and "message" in t for d in data for t in d["tests"])


def test_a_rerun_keeps_graded_work_and_grades_the_rest(graded):
    results, out, subs, opts = graded
    folder = out / "results" / LESSON
    before = {p.stem: p.stat().st_mtime_ns for p in folder.glob("*.json")}
    (folder / "right.json").unlink()  # as if the run had been interrupted before this one
    nbformat.write(samples.solution(LESSON), str(subs / "blank" / LESSON / f"{LESSON}.ipynb"))
    late = subs / "empty_folder" / LESSON / "late.ipynb"  # handed in after the first run
    nbformat.write(samples.solution(LESSON), str(late))
    again = {r["student"]: r for r in grade(opts)}
    assert scores(again["right"]) == FULL  # resumed
    assert scores(again["blank"]) == FULL  # changed since: graded again
    assert scores(again["empty_folder"]) == FULL and again["empty_folder"]["status"] == "ok"
    after = {p.stem: p.stat().st_mtime_ns for p in folder.glob("*.json")}
    kept = {s for s, r in results.items() if r["status"] in ("ok", "timeout", "crashed", "memory")}
    kept -= {"right", "blank"}
    assert kept and all(after[s] == before[s] for s in kept)  # graded and unchanged: kept
    assert after["invalid_json"] != before["invalid_json"]  # not gradable: looked at again


def test_instructor_mistakes_are_errors(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        grade(GradeOptions(tmp_path / "nope", tmp_path / "out"))
    (tmp_path / "a_file.ipynb").write_text("{}")
    with pytest.raises(UsageError, match="is not a folder"):
        grade(GradeOptions(tmp_path / "a_file.ipynb", tmp_path / "out"))
    (tmp_path / "subs").mkdir()
    with pytest.raises(UsageError, match="no submissions found"):
        grade(GradeOptions(tmp_path / "subs", tmp_path / "out"))
    with pytest.raises(UsageError, match="must not be inside --out"):
        grade(GradeOptions(tmp_path / "subs", tmp_path))
    (tmp_path / "subs" / LESSON / "alice").mkdir(parents=True)  # <lesson>/<student>: flipped
    with pytest.raises(UsageError, match="named like a lesson"):
        grade(GradeOptions(tmp_path / "subs", tmp_path / "out", [LESSON]))
    with pytest.raises(UsageError, match="unknown assignment"):
        grade(GradeOptions(tmp_path / "subs", tmp_path / "out", ["99_nothing"]))
    with pytest.raises(UsageError, match="--jobs"):
        grade(GradeOptions(tmp_path / "subs", tmp_path / "out", jobs=0))
    with pytest.raises(UsageError, match="--memory"):
        grade(GradeOptions(tmp_path / "subs", tmp_path / "out", memory_mb=100))
    with pytest.raises(UsageError, match="--disk"):
        grade(GradeOptions(tmp_path / "subs", tmp_path / "out", disk_mb=1))
    with pytest.raises(UsageError, match="--submission-timeout"):
        grade(GradeOptions(tmp_path / "subs", tmp_path / "out", submission_timeout_s=0))
    import fcntl

    (tmp_path / "busy").mkdir()
    with open(tmp_path / "busy" / ".grade.lock", "w") as lock:  # a run already going
        fcntl.flock(lock, fcntl.LOCK_EX)
        with pytest.raises(UsageError, match="another grade run"):
            grade(GradeOptions(tmp_path / "subs", tmp_path / "busy"))


def test_cli_exit_codes(tmp_path, capsys):
    from autograder.__main__ import main

    assert main(["grade", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert os.path.exists(tmp_path) and not (tmp_path / "o").exists()
    (tmp_path / "class" / "grades.csv").parent.mkdir()
    (tmp_path / "class" / "grades.csv").write_text("a real class's grades\n")
    assert main(["grade-demo", "--out", str(tmp_path / "class")]) == 2  # never over a class
    assert "not empty" in capsys.readouterr().err
    assert (tmp_path / "class" / "grades.csv").read_text() == "a real class's grades\n"
