"""Every route in grades a notebook as ``python -m autograder grade`` does.

One class (right, partial, broken, blank and an attack on 00_welcome) is graded in
nbgrader's layout; then the same notebooks go through Gradescope's ``run_autograder`` (in
Gradescope's layout: a temporary folder bound at /autograder with bubblewrap), PrairieLearn's
entry point (bound at /grade), and a Canvas and a Moodle download. Every route must give the
same score, and the platforms' results.json must validate against their schemas.

Gradescope and PrairieLearn grade each notebook in a run of its own (about 35 s each on a
busy CI machine), so they get the notebooks that take a different path through the route:
the blank one scores as the partial one does, zero on its failed tests, and is left to the
grade command and the LMS downloads.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import nbformat
import pytest

from autograder import course
from autograder.__main__ import main
from autograder.grading import samples, sandbox
from autograder.grading.run import GradeOptions, grade
from autograder.platforms import prairielearn
from tests.grading import attacks
from tests.platforms.downloads import (
    Upload,
    canvas_export,
    canvas_zip,
    moodle_folder,
    moodle_worksheet,
)

pytestmark = [
    pytest.mark.lesson,
    pytest.mark.xdist_group("platforms"),
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed"),
]
LESSON = "00_welcome"
HERE = Path(__file__).parent
NAMES = ["right", "partial", "broken", "blank", "attack"]
PER_RUN_NAMES = [n for n in NAMES if n != "blank"]  # one route run each


def _schema(name: str) -> dict:
    return json.loads((HERE / f"{name}_results.schema.json").read_text())


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("notebooks")
    nbs = samples.demo_class(LESSON) | {"attack": attacks.build(attacks.ATTACKS[0])}
    paths = {}
    for name in NAMES:
        paths[name] = folder / f"{name}.ipynb"
        nbformat.write(nbs[name], str(paths[name]))
    return paths


@pytest.fixture(scope="module")
def reference(notebooks, tmp_path_factory) -> dict[str, dict]:
    """The grade command's rows for the class in nbgrader's layout."""
    root = tmp_path_factory.mktemp("reference")
    for name, path in notebooks.items():
        (root / "subs" / name / LESSON).mkdir(parents=True)
        shutil.copy(path, root / "subs" / name / LESSON / f"{LESSON}.ipynb")
    opts = GradeOptions(root / "subs", root / "out", [LESSON], jobs=2, progress=False)
    rows = {r["student"]: r for r in grade(opts)}
    assert rows["right"]["score"] == rows["right"]["max_score"] > rows["partial"]["score"] > 0
    assert rows["blank"]["score"] == 0
    return rows


def _bound_at(mount: str, folder: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """Run argv with ``folder`` bound at ``mount``, the rest of the machine as it is."""
    created = not Path(mount).exists()
    try:
        return subprocess.run(
            ["bwrap", "--dev-bind", "/", "/", "--bind", str(folder), mount, *argv],
            capture_output=True,
            text=True,
            timeout=600,
            env=os.environ | {"AUTOGRADER_PYTHON": sys.executable},
        )
    finally:
        if created:
            with _quiet():
                os.rmdir(mount)  # bwrap made the empty mount point on this machine's root


class _quiet:
    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is not None and issubclass(kind, OSError)


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gradescope-zip")
    assert main(["gradescope", LESSON, "--out", str(out)]) == 0
    return out / "autograder.zip"


def _unpacked(archive: Path, into: Path) -> Path:
    with zipfile.ZipFile(archive) as z:
        z.extractall(into)
        for info in z.infolist():  # zipfile does not restore the executable bits
            if info.external_attr >> 16 & 0o111:
                (into / info.filename).chmod(0o755)
    return into


def test_the_gradescope_zip_holds_setup_run_and_the_course(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as z:
        names = set(z.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
    assert {"setup.sh", "run_autograder", "constraints.txt", "pyproject.toml"} <= names
    assert f"solutions/{LESSON}/{LESSON}.ipynb" in names
    assert "autograder/platforms/gradescope.py" in names and "tutorial_lib/checks.py" in names
    assert not any(n.startswith(("notebooks/", "tests/")) for n in names)
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    # What setup.sh installs is proven from an empty venv in test_install.py.


@pytest.fixture(scope="module")
def gradescope_results(autograder_zip, notebooks, tmp_path_factory) -> dict[str, dict]:
    found = {}
    for name in [*PER_RUN_NAMES, "nothing", "not-a-notebook"]:
        root = tmp_path_factory.mktemp(f"gs-{name}")
        _unpacked(autograder_zip, root / "source")
        (root / "submission").mkdir()
        if name == "not-a-notebook":
            (root / "submission" / f"{LESSON}.ipynb").write_text("{ not json")
        elif name != "nothing":
            shutil.copy(notebooks[name], root / "submission" / f"Copy of {LESSON}.ipynb")
        done = _bound_at("/autograder", root, ["bash", "/autograder/source/run_autograder"])
        assert done.returncode == 0, done.stderr[-3000:]
        found[name] = json.loads((root / "results" / "results.json").read_text())
    return found


def test_gradescope_results_validate_and_score_as_the_grade_command(gradescope_results, reference):
    schema = _schema("gradescope")
    exercises = [ex.grade_id for ex in course.exercises(LESSON)]
    for name, data in gradescope_results.items():
        jsonschema.validate(data, schema)
        scored = [t for t in data["tests"] if t["max_score"] > 0]
        assert [t["name"] for t in scored] == exercises, name
        if name in reference:
            assert data["score"] == reference[name]["score"], name
            assert sum(t["score"] for t in scored) == data["score"]
    assert gradescope_results["right"]["score"] == 5
    assert gradescope_results["right"]["extra_data"] == {"containment": "bubblewrap"}
    assert "ran in a bubblewrap sandbox" in gradescope_results["right"]["output"]
    assert gradescope_results["nothing"]["extra_data"] == {"containment": None}  # nothing ran
    partial = gradescope_results["partial"]
    failed = next(t for t in partial["tests"] if t["status"] == "failed")
    assert failed["visibility"] == "visible" and failed["output"]
    for name in ("nothing", "not-a-notebook"):
        data = gradescope_results[name]
        assert data["score"] == 0 and data["output"].strip(), data
    assert "no notebook was submitted" in gradescope_results["nothing"]["output"]
    assert "not valid notebook JSON" in gradescope_results["not-a-notebook"]["output"]


@pytest.fixture(scope="module")
def prairielearn_results(notebooks, tmp_path_factory) -> dict[str, dict]:
    question = tmp_path_factory.mktemp("pl-question")
    prairielearn.write_question_files(LESSON, question)
    found = {}
    for name in [*PER_RUN_NAMES, "nothing"]:
        root = tmp_path_factory.mktemp(f"pl-{name}")
        shutil.copytree(question / "tests", root / "tests")
        (root / "student").mkdir()
        if name != "nothing":
            shutil.copy(notebooks[name], root / "student" / f"{LESSON}.ipynb")
        done = _bound_at("/grade", root, ["bash", "/grade/tests/run.sh"])
        assert done.returncode == 0, done.stderr[-3000:]
        found[name] = json.loads((root / "results" / "results.json").read_text())
    return found


def test_prairielearn_results_validate_and_score_as_the_grade_command(
    prairielearn_results, reference
):
    schema = _schema("prairielearn")
    for name, data in prairielearn_results.items():
        jsonschema.validate(data, schema)
        if name in reference:
            row = reference[name]
            assert data["gradable"] is True
            assert data["score"] == pytest.approx(row["score"] / row["max_score"]), name
            assert sum(t["points"] for t in data["tests"]) == row["score"]
    assert "ran in a bubblewrap sandbox" in prairielearn_results["right"]["message"]
    nothing = prairielearn_results["nothing"]
    assert nothing["gradable"] is False and nothing["format_errors"]


def test_the_prairielearn_question_files(tmp_path):
    files = prairielearn.write_question_files(LESSON, tmp_path)
    info = json.loads((tmp_path / "info.json").read_text())
    assert info["gradingMethod"] == "External"
    assert info["externalGradingOptions"]["entrypoint"] == "/grade/tests/run.sh"
    assert os.access(tmp_path / "tests" / "run.sh", os.X_OK)
    assert any(p.name == "Dockerfile" for p in files)


# The LMS routes stage a download and fill a gradebook around the grade command's own run:
# three notebooks whose scores differ show that, each under a name Canvas or Moodle gives
# (the crash and the attack are graded by that same run, proven on the routes above).
LMS_NAMES = ["right", "partial", "blank"]


def _uploads(notebooks) -> list[Upload]:
    users = {"right": "201", "partial": "202", "blank": "203"}
    names = {
        "right": f"{LESSON}.ipynb",
        "partial": f"{LESSON} (1).ipynb",
        "blank": f"Copy of {LESSON}.ipynb",
    }
    return [
        Upload(users[n], f"student{n}", names[n], notebooks[n].read_bytes(), late=n == "blank")
        for n in LMS_NAMES
    ]


def test_a_canvas_download_grades_as_the_nbgrader_layout(notebooks, reference, tmp_path):
    uploads = _uploads(notebooks)
    download = canvas_zip(
        tmp_path / "submissions.zip", uploads, strays={"stray.txt": b"x", "__MACOSX/._a": b""}
    )
    export = canvas_export(
        tmp_path / "export.csv", LESSON, [(u.name, u.user) for u in uploads] + [("late", "299")], 10
    )
    out = tmp_path / "out"
    argv = ["grade", str(download), "--out", str(out), "--assignment", LESSON, "--jobs", "2"]
    assert main([*argv, "--from", "canvas", "--canvas-gradebook", str(export)]) == 0
    by_user = {u.user: n for u, n in zip(uploads, LMS_NAMES, strict=True)}
    with (out / "grades.csv").open(newline="") as f:
        scores = {by_user[r["student_id"]]: float(r["score"]) for r in csv.DictReader(f)}
    assert scores == {n: reference[n]["score"] for n in LMS_NAMES}
    matched = json.loads((out / "lms" / "matched.json").read_text())
    assert {f["student"]: f["late"] for f in matched["found"]}["203"] is True
    assert any("stray.txt" in u for u in matched["unmatched"])
    with (out / "lms" / "canvas_import.csv").open(newline="") as f:
        rows = {r["ID"]: r[f"{LESSON} (202)"] for r in csv.DictReader(f) if r["ID"]}
    for u, n in zip(uploads, LMS_NAMES, strict=True):
        assert float(rows[u.user]) == pytest.approx(reference[n]["score"] * 10 / 5)
    assert rows["299"] == ""
    with zipfile.ZipFile(out / "lms" / "feedback.zip") as z:
        names = set(z.namelist())
    assert f"studentright_201_900_{LESSON}_feedback.html" in names
    # The same download again: every grade is kept, nothing is graded twice.
    assert main([*argv, "--from", "canvas"]) == 0


def test_a_moodle_download_grades_as_the_nbgrader_layout(notebooks, reference, tmp_path):
    uploads = _uploads(notebooks)
    download = moodle_folder(tmp_path / "download", uploads)
    sheet = moodle_worksheet(tmp_path / "worksheet.csv", [(u.name, u.user) for u in uploads], 100)
    out = tmp_path / "out"
    argv = ["grade", str(download), "--out", str(out), "--assignment", LESSON, "--jobs", "2"]
    assert main([*argv, "--from", "moodle", "--moodle-worksheet", str(sheet)]) == 0
    by_user = {u.user: n for u, n in zip(uploads, LMS_NAMES, strict=True)}
    with (out / "lms" / "moodle_worksheet.csv").open(newline="") as f:
        rows = {r["Identifier"].split()[-1]: r for r in csv.DictReader(f)}
    for user, n in by_user.items():
        assert float(rows[user]["Grade"]) == pytest.approx(reference[n]["score"] * 100 / 5)
    with zipfile.ZipFile(out / "lms" / "feedback.zip") as z:
        names = set(z.namelist())
    assert f"studentright_201_assignsubmission_file_/{LESSON}_feedback.html" in names


def test_lms_option_mistakes_exit_2(tmp_path, capsys):
    base = ["grade", str(tmp_path), "--out", str(tmp_path / "o")]
    assert main([*base, "--from", "canvas"]) == 2
    assert "give it with --assignment" in capsys.readouterr().err
    assert main([*base, "--assignment", LESSON, "--moodle-worksheet", "w.csv"]) == 2
    assert "--moodle-worksheet needs --from moodle" in capsys.readouterr().err
