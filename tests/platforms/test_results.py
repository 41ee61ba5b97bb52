"""The platforms' results.json from a grade row, without a kernel: visibility and schemas."""

import json
from pathlib import Path

import jsonschema
from nbformat.v4 import new_code_cell, new_output

from autograder import course
from autograder.grading.preprocessor import HIDDEN_CHECK_FAILED
from autograder.grading.worker import _caught_by
from autograder.platforms import gradescope, prairielearn

LESSON = "00_welcome"
HERE = Path(__file__).parent


def _row(caught_by: str) -> dict:
    tests = []
    for i, ex in enumerate(course.exercises(LESSON)):
        failed = i == 0
        tests.append(
            {
                "exercise": ex.grade_id,
                "test_id": ex.test_id,
                "score": 0.0 if failed else ex.points,
                "max_score": ex.points,
                "passed": not failed,
                "message": "the hidden check's own words" if failed else "",
                "misconception": "",
                "caught_by": caught_by if failed else "",
            }
        )
    score = sum(t["score"] for t in tests)
    return {"score": score, "max_score": 5.0, "status": "ok", "message": "", "tests": tests}


def test_hidden_findings_get_their_own_test_shown_as_the_instructor_chose():
    data = gradescope.results(_row("hidden"), LESSON, 3.0, "after_published")
    jsonschema.validate(data, json.loads((HERE / "gradescope_results.schema.json").read_text()))
    first, detail = data["tests"][0], data["tests"][1]
    assert first["visibility"] == "visible" and "hidden checks" in first["output"]
    assert "the hidden check's own words" not in first["output"]
    assert detail["visibility"] == "after_published" and detail["max_score"] == 0
    assert detail["output"].startswith("the hidden check's own words")
    assert data["score"] == sum(t["score"] for t in data["tests"])


def test_a_visible_failure_shows_its_message_at_once():
    data = gradescope.results(_row("visible"), LESSON, 3.0, "hidden")
    assert len(data["tests"]) == len(course.exercises(LESSON))
    assert data["tests"][0]["output"] == "the hidden check's own words"


def test_prairielearn_scores_are_fractions():
    data = prairielearn.results(_row("hidden"), LESSON)
    jsonschema.validate(data, json.loads((HERE / "prairielearn_results.schema.json").read_text()))
    assert data["gradable"] and data["score"] == 4 / 5
    missing = prairielearn.results({"status": "missing", "message": "no files", "score": 0}, LESSON)
    assert missing["gradable"] is False and missing["format_errors"] == ["no files"]


def test_the_grader_tells_which_checks_failed_a_cell():
    cell = new_code_cell("check()")
    assert _caught_by(cell) == "visible"  # no error recorded: not passed, so not hidden
    cell.outputs = [new_output("error", ename=HIDDEN_CHECK_FAILED, evalue="x", traceback=[])]
    assert _caught_by(cell) == "hidden"
    cell.outputs.insert(0, new_output("error", ename="AssertionError", evalue="", traceback=[]))
    assert _caught_by(cell) == "visible"
