"""The attack corpus (tests/grading/attacks.py), graded in one run: no attack earns a point.

An attack's score per exercise may never exceed what the honest answers it starts from
earn; the honest wrong answers earn nothing, so neither may the attacks.
"""

import json
from pathlib import Path

import pytest

from autograder.grading import samples, sandbox
from autograder.grading.run import GradeOptions, grade
from tests.grading import attacks

pytestmark = [
    pytest.mark.lesson,
    pytest.mark.xdist_group("grading"),
    pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed"),
]
LESSON = attacks.LESSON


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    sentinel = Path(attacks.SENTINEL)
    sentinel.write_text("the grader must leave this file alone")
    sentinel.chmod(0o600)
    root = tmp_path_factory.mktemp("attacks")
    subs, out = root / "submissions", root / "out"
    samples.write_class(subs, LESSON, attacks.corpus())
    opts = GradeOptions(subs, out, [LESSON], jobs=2, timeout_s=20, memory_mb=4096, progress=False)
    results = {r["student"]: r for r in grade(opts)}
    yield results, out
    sentinel.unlink()


def scores(result):
    return {t["exercise"]: t["score"] for t in result["tests"]}


def test_the_corpus_is_big_enough():
    assert len(attacks.ATTACKS) >= 20
    assert len({a.name for a in attacks.ATTACKS}) == len(attacks.ATTACKS)


def test_the_honest_baselines_score_as_expected(graded):
    results, _ = graded
    assert results["honest_wrong"]["score"] == 0  # else the corpus would prove nothing
    assert results["honest_right"]["score"] == results["honest_right"]["max_score"] == 5


@pytest.mark.parametrize("attack", attacks.ATTACKS, ids=lambda a: a.name)
def test_no_attack_earns_more_than_its_honest_answers(graded, attack):
    results, _ = graded
    honest = scores(results[f"honest_{attack.base}"])
    got = scores(results[attack.name])
    assert set(got) == set(honest), got
    gained = {ex: got[ex] for ex in got if got[ex] > honest[ex]}
    assert not gained, f"{attack.name} ({attack.what}) earned {gained}: {results[attack.name]}"


def test_killing_the_kernel_mid_check_costs_only_that_exercise(graded):
    results, _ = graded
    got = scores(results["kill_during_probe"])
    assert got == {**scores(results["honest_right"]), "pick_device": 0.0}
    message = next(
        t["message"]
        for t in results["kill_during_probe"]["tests"]
        if t["exercise"] == "pick_device"
    )
    assert "kernel died" in message


def test_links_left_by_student_code_are_not_followed(graded):
    results, _ = graded
    assert results["fake_result_files"]["status"] == "ok", results["fake_result_files"]["message"]
    assert Path(attacks.SENTINEL).stat().st_mode & 0o777 == 0o600


def test_a_slow_answer_times_out(graded):
    results, _ = graded
    assert results["slow_answer"]["status"] == "timeout"


def test_huge_output_is_cut(graded):
    _, out = graded
    path = out / "autograded" / "huge_output" / LESSON / f"{LESSON}.ipynb"
    assert path.stat().st_size < 10_000_000
    assert "the grader kept the first" in path.read_text()


def test_the_hidden_checks_are_nowhere_to_be_found(graded):
    _, out = graded
    nb = json.loads(
        (out / "autograded" / "read_hidden_checks" / LESSON / f"{LESSON}.ipynb").read_text()
    )
    printed = "".join(
        "".join(o.get("text", ""))
        for c in nb["cells"]
        if c["cell_type"] == "code"
        for o in c["outputs"]
    )
    assert "found on disk: []" in printed
