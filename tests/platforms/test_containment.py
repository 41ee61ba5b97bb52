"""Gradescope and PrairieLearn where bubblewrap cannot start: student code never as root.

Their containers usually refuse the user namespaces bubblewrap needs. A stand-in ``bwrap``
that always fails stands for that here. The routes then run the kernel as an unprivileged
user of its own (``autograder.platforms.containment``); an all-wrong notebook that tries to
read the solution, the hidden checks and the results, and leaves a process behind to
rewrite ``results.json``, must score 0, leave the grader's results as written and no
process of that user running. One grading run per platform serves every assertion.

The cheaper tests need no notebook: ending a user's processes, closing the secrets and
giving them back, refusing to grade unconfined, and a submitted link on each route.
"""

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
import zipfile
from pathlib import Path

import jsonschema
import nbformat
import pytest

from autograder import course
from autograder.grading import samples, sandbox
from autograder.platforms import containment, gradescope, prairielearn
from tests.grading.attacks import WRONG

LESSON = "00_welcome"
HERE = Path(__file__).parent
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="only root can run code as another user")


def _schema(name: str) -> dict:
    return json.loads((HERE / f"{name}_results.schema.json").read_text())


def _wait_for(condition, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


@ROOT_ONLY
def test_every_process_of_the_kernels_user_is_ended():
    uid = containment.kernel_uid()  # this test process's: no grader here uses it
    # Detached three ways (a new session, a double fork, a plain child), and a parent that
    # dies first and stays a zombie until this test reaps it: kill(-1) keeps finding it.
    script = "setsid sleep 300 & (sleep 300 &); sleep 300 & exec sleep 300"
    leader = subprocess.Popen(
        ["sh", "-c", script], user=uid, group=uid, extra_groups=[], cwd="/", env={}
    )
    try:
        assert _wait_for(lambda: len(containment.processes_of(uid)) >= 4)
        start = time.monotonic()
        containment.end_processes(uid, timeout_s=5)
        assert time.monotonic() - start < 5
        assert containment.processes_of(uid) == []
        assert leader.wait(timeout=5) == -9
    finally:
        leader.kill()


def test_the_secrets_are_closed_to_others_and_given_back(tmp_path):
    root = tmp_path / "autograder"
    for folder in ("results", "submission", "venv"):
        (root / folder).mkdir(parents=True)
    (root / "run_autograder").write_text("")
    (root / "link").symlink_to("/etc/hostname")
    hidden = containment.secrets(root)
    assert {root / "results", root / "submission", root / "run_autograder"} <= set(hidden)
    assert root / "link" not in hidden  # a mode change would follow it
    # The course: everything but tutorial_lib and the Python environment.
    assert course.ROOT / "solutions" in hidden and course.ROOT / "autograder" in hidden
    assert not any(p.name == "tutorial_lib" or p == Path(sys.prefix) for p in hidden)
    files = [root / "results", root / "run_autograder"]
    before = {p: p.stat().st_mode for p in files}
    with containment.owner_only(files):
        assert all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in files)
    assert {p: p.stat().st_mode for p in files} == before
    closed = tmp_path / "a" / "b"
    closed.mkdir(parents=True)
    (tmp_path / "a").chmod(0o700)
    with containment.traversable([closed / "venv"]):
        assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o711
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700


@pytest.mark.parametrize("platform", ["gradescope", "prairielearn"])
def test_without_bubblewrap_a_grader_that_is_not_root_refuses(
    platform, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(containment, "sandbox_starts", lambda: False)
    monkeypatch.setattr(sandbox, "as_root", lambda: False)
    inbox = tmp_path / ("submission" if platform == "gradescope" else "student")
    inbox.mkdir()
    shutil.copy(course.solution_notebook(LESSON), inbox / f"{LESSON}.ipynb")
    module = gradescope if platform == "gradescope" else prairielearn
    assert module.main(["run", "--lesson", LESSON, "--root", str(tmp_path)]) == 1
    assert not (tmp_path / "results" / "results.json").exists()
    assert "not root, so student code would run as the grader itself" in capsys.readouterr().err


SECRET = "first line of a file the student must never see"


@pytest.mark.parametrize("platform", ["gradescope", "prairielearn"])
@pytest.mark.parametrize("target", ["solution", "system file"])
def test_a_submitted_link_is_invalid_and_never_read(platform, target, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    pointee = course.solution_notebook(LESSON) if target == "solution" else secret
    inbox = tmp_path / ("submission" if platform == "gradescope" else "student")
    inbox.mkdir()
    (inbox / f"{LESSON}.ipynb").symlink_to(pointee)
    if platform == "gradescope":
        data = gradescope.run(LESSON, tmp_path, "hidden")
        jsonschema.validate(data, _schema("gradescope"))
        assert data["score"] == 0 and "(invalid)" in data["output"]
        said = data["output"] + json.dumps(data["tests"])
    else:
        data = prairielearn.run(LESSON, tmp_path)
        jsonschema.validate(data, _schema("prairielearn"))
        assert data["gradable"] is False and data["score"] == 0
        said = data["message"] + json.dumps(data["format_errors"])
    assert f"{LESSON}.ipynb" in said and "symbolic link" in said
    assert SECRET not in said and str(pointee) not in said and "BEGIN SOLUTION" not in said
    assert json.loads((tmp_path / "results" / "results.json").read_text()) == data


# The attacker, in a cell before the first answer. It reports what it could read (as the
# outcome of each try) into REPORT_FOLDER, a folder open to anyone, and leaves a process that tries
# to overwrite both platforms' results.json with full marks for a minute, touching
# HEARTBEAT each time. Each answer then runs the solution's answer cells, if it could read
# a solution anywhere; else the wrong answers stand.
ATTACK = """\
import json, os, pathlib, subprocess, sys
import tutorial_lib

_report = "REPORT_FOLDER"
_bases = {"/autograder/source", "/opt/course/source", str(pathlib.Path(tutorial_lib.__file__).parents[1])}
_bases |= {p for p in sys.path if p and os.path.isdir(p)}
_secrets = ["solutions/00_welcome/00_welcome.ipynb", "autograder/hidden/welcome.py",
            "autograder/mistakes/welcome.py", "autograder/platforms/containment.py"]
_tries = [os.path.join(b, s) for b in sorted(_bases) for s in _secrets]
_tries += ["/autograder/results", "/grade/results", "/autograder/submission", "/grade/student"]

def _try(path):
    try:
        if os.path.isdir(path) or path.endswith("results"):
            os.listdir(path)
        else:
            with open(path, "rb") as f:
                f.read(16)
        return "read"
    except OSError as err:
        return type(err).__name__

def _steal(into):
    for path in _tries:
        if path.endswith(".ipynb"):
            try:
                cells = json.load(open(path))["cells"]
            except (OSError, ValueError):
                continue
            for cell in cells:
                if cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                    exec("".join(cell["source"]), into)

_writer = '''
import json, pathlib, time
end = time.time() + 60
full = {"score": 100.0, "gradable": True, "tests": []}
while time.time() < end:
    pathlib.Path("REPORT_FOLDER/heartbeat").touch()
    for path in ("/autograder/results/results.json", "/grade/results/results.json"):
        try:
            pathlib.Path(path).write_text(json.dumps(full))
        except OSError:
            pass
    time.sleep(0.05)
'''
# A new session, its parent gone at once: nothing links it to the kernel any more.
subprocess.Popen(["sh", "-c", 'setsid "$0" -c "$1" >/dev/null 2>&1 &', sys.executable, _writer])
pathlib.Path(_report, "report.json").write_text(
    json.dumps({"uid": os.getuid(), "tries": {p: _try(p) for p in _tries}})
)
"""


def _attacker(report: Path) -> nbformat.NotebookNode:
    nb = samples.solution(LESSON)
    for grade_id, code in WRONG.items():
        nb = samples.replace_answer(nb, grade_id, code + "\n_steal(globals())\n")
    first = next(
        i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution")
    )
    nb.cells.insert(first, nbformat.v4.new_code_cell(ATTACK.replace("REPORT_FOLDER", str(report))))
    return nb


def _failing_bwrap(folder: Path) -> str:
    """A PATH whose ``bwrap`` fails as in a container that refuses user namespaces."""
    fake = folder / "bin" / "bwrap"
    fake.parent.mkdir(parents=True)
    fake.write_text(
        textwrap.dedent(
            """\
            #!/bin/sh
            echo "bwrap: No permissions to create new namespace" >&2
            exit 1
            """
        )
    )
    fake.chmod(0o755)
    return f"{fake.parent}:{os.environ['PATH']}"


def _opened_ancestors(path: Path) -> list[str]:
    """bwrap arguments that make the folders above ``path`` passable for anyone, in the
    container only (this machine's Python lies under a 0700 /root, Gradescope's in /usr)."""
    argv = []
    parts = path.resolve().parts
    for depth in range(1, len(parts) - 1):
        folder = Path(*parts[:depth])
        if folder.stat().st_mode & 0o001 == 0:
            below = folder / parts[depth]
            argv += ["--perms", "0755", "--tmpfs", str(folder), "--bind", str(below), str(below)]
    return argv


def _in_container(
    binds: dict[str, Path], argv: list[str], path: str
) -> subprocess.CompletedProcess:
    """Run ``argv`` as a platform would: its folders bound where the platform has them, the
    rest of this machine as it is, except this checkout's secrets (the kernel's Python finds
    the checkout through .venv) and a closed /root. The real bwrap makes it; inside, PATH
    leads to the failing one."""
    outer = [shutil.which("bwrap", path=os.environ["PATH"]), "--dev-bind", "/", "/"]
    outer += _opened_ancestors(Path(sys.base_prefix))
    for mount, folder in binds.items():
        outer += ["--bind", str(folder), mount]
    for secret in ("solutions", "autograder"):
        outer += ["--tmpfs", str(course.ROOT / secret)]
    env = {**os.environ, "PATH": path, "AUTOGRADER_PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [*outer, *argv], capture_output=True, text=True, timeout=600, env=env, cwd="/"
    )


def _unpacked_course(archive: Path, into: Path) -> Path:
    with zipfile.ZipFile(archive) as z:
        z.extractall(into)
        for info in z.infolist():
            if info.external_attr >> 16 & 0o111:
                (into / info.filename).chmod(0o755)
    return into


@pytest.fixture(scope="module")
def attacked(tmp_path_factory, request) -> dict[str, dict]:
    """Each platform's run on the attacker: its results, the attacker's report, the kernel's
    user, the processes of that user left when the job ended, and the time it ended."""
    base = tmp_path_factory.mktemp("no-bwrap")
    path = _failing_bwrap(base)
    archive = gradescope.build_zip(LESSON, base / "zip")
    found = {}
    for platform in ("gradescope", "prairielearn"):
        report = Path(tempfile.mkdtemp(prefix=f"attack-report-{platform}-", dir="/tmp"))
        request.addfinalizer(lambda folder=report: shutil.rmtree(folder, ignore_errors=True))
        report.chmod(0o1777)  # the kernel's user writes here: its only way out, for the test
        root = base / platform
        root.mkdir(mode=0o755)
        if platform == "gradescope":
            _unpacked_course(archive, root / "source")
            (root / "submission").mkdir()
            nbformat.write(_attacker(report), str(root / "submission" / f"{LESSON}.ipynb"))
            (root / "results").mkdir()
            binds = {"/autograder": root}
            argv = ["bash", "/autograder/source/run_autograder"]
        else:  # the course in the image, the question's files at /grade
            source = _unpacked_course(archive, base / "pl-course")
            prairielearn.write_question_files(LESSON, root)
            (root / "student").mkdir()
            (root / "results").mkdir()
            nbformat.write(_attacker(report), str(root / "student" / f"{LESSON}.ipynb"))
            binds = {"/grade": root, "/opt/course/source": source}
            argv = ["env", "PYTHONPATH=/opt/course/source", "bash", "/grade/tests/run.sh"]
        done = _in_container(binds, argv, path)
        ended = time.time()
        results = root / "results" / "results.json"
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        data = json.loads(results.read_text())
        said = json.dumps(data)
        uid = int(re.search(r"uid (\d+)", said).group(1))
        found[platform] = {
            "results": data,
            "written": results.read_text(),
            "path": results,
            "uid": uid,
            "left": containment.processes_of(uid),
            "ended": ended,
            "report": json.loads((report / "report.json").read_text()),
            "heartbeat": report / "heartbeat",
            "root": root,
        }
    yield found
    for run in found.values():
        containment.end_processes(run["uid"])  # only if a test failed: never leave them


@pytest.mark.lesson
@pytest.mark.xdist_group("platforms")
@ROOT_ONLY
@pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) makes the container")
@pytest.mark.parametrize("platform", ["gradescope", "prairielearn"])
def test_without_bubblewrap_the_attacker_scores_0_and_leaves_nothing(attacked, platform):
    run = attacked[platform]
    data = run["results"]
    # It ran, as a user of its own: not root, not the grader.
    assert run["report"]["uid"] == run["uid"] != 0
    # Nothing of the course, the solution, the hidden checks or the results could be read.
    tries = run["report"]["tries"]
    assert "read" not in tries.values(), {p: o for p, o in tries.items() if o == "read"}
    inbox = "/autograder/submission" if platform == "gradescope" else "/grade/student"
    results = "/autograder/results" if platform == "gradescope" else "/grade/results"
    course_there = "/autograder/source" if platform == "gradescope" else "/opt/course/source"
    for path in (
        f"{course_there}/solutions/{LESSON}/{LESSON}.ipynb",
        f"{course_there}/autograder/hidden/welcome.py",
        results,
        inbox,
    ):
        assert tries[path] == "PermissionError", (path, tries[path])
    # Graded 0, and it says how the notebook was contained.
    if platform == "gradescope":
        jsonschema.validate(data, _schema("gradescope"))
        assert data["score"] == 0
        assert data["extra_data"]["containment"] == containment.UNPRIVILEGED_USER
        assert "unprivileged user of its own" in data["output"]
    else:
        jsonschema.validate(data, _schema("prairielearn"))
        assert data["gradable"] is True and data["score"] == 0
        assert "unprivileged user of its own" in data["message"]
    # Its leftover process had run, and had ended before the results were written.
    assert run["heartbeat"].exists()
    assert run["left"] == []
    time.sleep(0.5)
    assert run["heartbeat"].stat().st_mtime <= run["ended"]
    assert run["path"].read_text() == run["written"] and run["path"].stat().st_uid == 0
    # The folders were given back their modes once every process of that user had ended.
    assert stat.S_IMODE((run["root"] / "results").stat().st_mode) == 0o755
