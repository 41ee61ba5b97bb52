"""``grade --scheduler``: a class graded through a real Dask scheduler and two real workers on
this machine scores exactly as the local run does, even when a worker is killed mid-run.

One local run serves as the reference for every test here; the cluster is started once, with
the commands docs/dask.md gives, and always stopped at the end.
"""

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from autograder import course, dask_local
from autograder.grading import cluster, samples, sandbox
from autograder.grading.run import GradeOptions, UsageError, grade
from tests.grading import attacks

pytestmark = [
    pytest.mark.lesson,
    pytest.mark.xdist_group("grading"),
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed"),
]
LESSON = "00_welcome"


def _class() -> dict:
    right = samples.solution(LESSON)
    loop = "def halve_until_small(x, limit):\n    while True:\n        pass\n"
    return {
        "right": right,
        "partial": samples.with_first_mistake(LESSON, right, "pick_device"),
        "crashing": samples.replace_answer(right, "pick_device", "import os\nos._exit(3)\n"),
        "looping": samples.replace_answer(right, "halve_until_small", loop),
        "attack": attacks.build(attacks.ATTACKS[0]),  # an input transformer that skips checks
    }


def _options(subs: Path, out: Path, scheduler: str | None = None) -> GradeOptions:
    return GradeOptions(
        subs,
        out,
        [LESSON],
        jobs=2,
        timeout_s=15,
        memory_mb=4096,
        progress=False,
        force=True,
        scheduler=scheduler,
    )


def _scores(results: list[dict]) -> dict:
    """Per student: status, score and each exercise's score; what must not depend on where."""
    return {
        r["student"]: (r["status"], r["score"], {t["exercise"]: t["score"] for t in r["tests"]})
        for r in results
    }


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    root = tmp_path_factory.mktemp("cluster-class")
    subs = samples.write_class(root / "submissions", LESSON, _class())
    results = grade(_options(subs, root / "local"))
    scores = _scores(results)
    # The class is what it claims: a right answer, a partial one, a crash, a loop, an attack.
    assert scores["right"][0] == "ok" and scores["right"][1] == 5.0
    assert scores["crashing"][0] == "crashed" and scores["looping"][0] == "timeout"
    assert scores["partial"][1] < 5.0 and scores["attack"][1] == 0.0
    return root, subs, scores


@pytest.fixture(scope="module")
def dask_cluster():
    with dask_local.local_cluster(workers=2) as (address, workers):
        yield address, workers


def _bwrap_children(pid: int) -> list[int]:
    """The sandboxes (bwrap processes) whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :]
        if name == "bwrap" and int(rest.split()[1]) == pid:
            found.append(int(entry))
    return found


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path("/proc", str(pid), "stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_the_cluster_grades_as_the_local_run(local, dask_cluster):
    root, subs, expected = local
    address, _ = dask_cluster
    out = root / "dask"
    opts = _options(subs, out, address)
    assert _scores(grade(opts)) == expected
    # OUT is the same nbgrader course a local run writes: copies, feedback, gradebook.
    for student in expected:
        assert (out / "autograded" / student / LESSON / f"{LESSON}.ipynb").is_file()
        assert (
            "hidden tests ran here"
            in (out / "feedback" / student / LESSON / f"{LESSON}.html").read_text()
        )
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gradebook:
        assert gradebook.find_submission(LESSON, "right").score == 5.0
        assert gradebook.find_submission(LESSON, "crashing").score == expected["crashing"][1]
    # Resume: a re-run without --force keeps every grade and sends nothing to the cluster.
    saved = {p: p.stat().st_mtime_ns for p in (out / "results" / LESSON).glob("*.json")}
    opts.force = False
    assert _scores(grade(opts)) == expected
    assert {p: p.stat().st_mtime_ns for p in saved} == saved


def test_a_worker_killed_mid_submission_costs_a_retry_not_a_grade(local, dask_cluster):
    from distributed import Client

    root, subs, expected = local
    address, _ = dask_cluster
    done: dict = {}
    run = threading.Thread(
        target=lambda: done.update(results=grade(_options(subs, root / "killed", address)))
    )
    with Client(address, set_as_default=False) as client:
        run.start()
        victim, sandboxes = None, []
        deadline = time.monotonic() + 300
        while victim is None and run.is_alive() and time.monotonic() < deadline:
            pids = client.run(os.getpid)
            for worker, keys in client.processing().items():
                kernels = _bwrap_children(pids[worker]) if keys and worker in pids else []
                if kernels:  # grading a submission: its kernel is up
                    victim, sandboxes = pids[worker], kernels
                    break
            time.sleep(0.2)
        assert victim is not None, "no worker was seen grading"
        os.kill(victim, signal.SIGKILL)
        run.join(600)
    assert not run.is_alive()
    assert _scores(done["results"]) == expected  # every row, each as the local run scored it
    # The dead worker's sandboxed kernels went with it (bwrap --die-with-parent).
    deadline = time.monotonic() + 20
    while any(_running(p) for p in sandboxes) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not [p for p in sandboxes if _running(p)]


class _Cluster:
    """Stands in for a Dask client whose workers report what ``found`` says."""

    def __init__(self, found: dict) -> None:
        self.found = found

    def run(self, function, *args, on_error="raise"):
        return self.found


def test_a_worker_of_another_version_is_refused_by_name():
    mine = cluster.fingerprint()
    opts = GradeOptions(Path("."), Path("out"), sandboxed=True)
    same = {"tcp://10.0.0.6:4000": {**mine, "sandbox": None}}
    assert cluster.check_workers(_Cluster(same), opts)["sources"] == mine["sources"]
    other = {
        **same,
        "tcp://10.0.0.7:4000": {**mine, "torch": "2.0.0", "sources": "0" * 64, "sandbox": None},
        "tcp://10.0.0.8:4000": {**mine, "sandbox": "bwrap: No permissions to create namespace"},
        "tcp://10.0.0.9:4000": ModuleNotFoundError("No module named 'autograder'"),
    }
    with pytest.raises(UsageError) as refused:
        cluster.check_workers(_Cluster(other), opts)
    message = str(refused.value)
    assert "10.0.0.6" not in message
    assert f"worker tcp://10.0.0.7:4000 ({mine['host']}): course sources 0000" in message
    assert f"torch 2.0.0 (here {mine['torch']})" in message
    assert "tcp://10.0.0.8:4000" in message and "No permissions to create namespace" in message
    assert "tcp://10.0.0.9:4000" in message and "No module named 'autograder'" in message


def test_a_scheduler_that_does_not_answer_is_a_usage_error(tmp_path):
    subs = samples.write_class(tmp_path / "subs", LESSON, {"right": samples.solution(LESSON)})
    nobody = f"tcp://127.0.0.1:{dask_local._free_port()}"
    start = time.monotonic()
    with pytest.raises(UsageError, match=f"no Dask scheduler answers at {nobody}"):
        grade(_options(subs, tmp_path / "out", nobody))
    assert time.monotonic() - start < 30


def test_a_worker_checks_its_kernel_with_the_settings_it_grades_with(monkeypatch, tmp_path):
    """The kernel that the connect's check starts ahead on a worker is its first submission's
    only if both have the same sandbox settings (a spare is kept per settings). When they
    differed, that kernel sat unused while the first submissions ran in cold kernels, torch
    imported in their first cell, and a busy machine timed them out (seen in CI)."""
    from autograder.grading.worker import Settings

    state = cluster._WorkerState()  # a worker's, its folder in this test's
    state.base = str(tmp_path)
    monkeypatch.setattr(cluster, "_STATE", state)
    seen = {}
    monkeypatch.setattr(cluster, "kernel_check", lambda settings: seen.update(check=settings))
    monkeypatch.setattr(cluster, "grade_one", lambda *args: seen.update(grade=args[-1]) or {})
    # As the main machine sends them: its own OUT and submissions hidden, the GPU undecided.
    sent = Settings(timeout_s=15, memory_mb=4096, sandboxed=True, hide=["/main/out", "/main/in"])
    cluster.kernel_check_here(sent, None)
    notebook = course.solution_notebook(LESSON).read_bytes()
    cluster.grade_remote("student", LESSON, notebook, sent, None)
    assert seen["check"] == seen["grade"]
    assert "/main/out" not in seen["grade"].hide  # the worker hides its own folder instead
