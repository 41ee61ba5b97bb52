"""Canvas and Moodle downloads matched file by file, and their gradebooks filled (no kernel)."""

import csv
import json
import struct
import zipfile

import pytest

from autograder.platforms import lms
from tests.platforms.downloads import (
    Upload,
    canvas_export,
    canvas_zip,
    moodle_folder,
    moodle_worksheet,
)

LESSON = "00_welcome"
NB = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def test_canvas_names_late_flags_renames_resubmissions_and_strays(tmp_path):
    download = canvas_zip(
        tmp_path / "submissions.zip",
        [
            Upload("101", "adaada", f"{LESSON}.ipynb", NB),
            Upload("102", "turingalan", f"{LESSON} (2).ipynb", NB, late=True),
            Upload("103", "hopperg", f"Copy of {LESSON}.ipynb", NB),
            Upload("104", "liskovb", f"{LESSON}.ipynb", b"old", submission="1"),
            Upload("104", "liskovb", f"{LESSON}-1.ipynb", NB, submission="2"),
            Upload("105", "knuthd", "notes.pdf", b"%PDF"),
        ],
        strays={"__MACOSX/._x": b"", "README.txt": b"hello"},
    )
    collected = lms.stage(download, lms.CANVAS, LESSON, tmp_path / "staged")
    found = {f.student: f for f in collected.found}
    assert sorted(found) == ["101", "102", "103", "104"]
    assert found["102"].late and not found["101"].late
    assert found["102"].renamed == f"{LESSON} (2).ipynb"
    assert found["103"].renamed == f"Copy of {LESSON}.ipynb"
    assert found["101"].renamed == ""
    # Two uploads from 104, both named after the lesson: the later resubmission (-1) wins.
    assert found["104"].filename == f"{LESSON}-1.ipynb"
    assert (tmp_path / "staged" / "104" / LESSON / f"{LESSON}.ipynb").read_bytes() == NB
    assert any("notes.pdf" in e and "105" in e for e in collected.extra)
    assert any(e.startswith("README.txt") for e in collected.unmatched)
    assert not any("__MACOSX" in e for e in collected.unmatched)
    text = lms.report(collected)
    assert "late (1): 102" in text and "README.txt" in text and "notes.pdf" in text


@pytest.mark.parametrize("folders", [True, False])
def test_moodle_participant_folders_and_flat_names(tmp_path, folders):
    download = moodle_folder(
        tmp_path / "download",
        [
            Upload("5001", "Grace Hopper", f"{LESSON}.ipynb", NB),
            Upload("5002", "Alan Turing", "my work.ipynb", NB),
            Upload("5003", "Ada Lovelace", "scan.png", b"png"),
        ],
        folders=folders,
    )
    (download / "index.html").write_text("not a submission")
    collected = lms.stage(download, lms.MOODLE, LESSON, tmp_path / "staged")
    found = {f.student: f for f in collected.found}
    assert sorted(found) == ["5001", "5002"]
    assert found["5002"].renamed == "my work.ipynb" and found["5002"].late is None
    assert found["5001"].prefix == "Grace Hopper_5001_assignsubmission_file_"
    assert any("scan.png" in e for e in collected.extra)
    assert any(e.startswith("index.html") for e in collected.unmatched)


def test_a_download_of_the_other_lms_or_of_nothing_is_refused(tmp_path):
    download = moodle_folder(tmp_path / "d", [Upload("1", "A B", f"{LESSON}.ipynb", NB)])
    with pytest.raises(lms.LmsError, match="no canvas submission"):
        lms.collect(download, lms.CANVAS, LESSON)
    (tmp_path / "empty").mkdir()
    with pytest.raises(lms.LmsError, match="holds no files"):
        lms.collect(tmp_path / "empty", lms.MOODLE, LESSON)
    with pytest.raises(lms.LmsError, match="neither a folder nor a zip"):
        (tmp_path / "x.txt").write_text("x")
        lms.collect(tmp_path / "x.txt", lms.MOODLE, LESSON)
    # An unsafe path is one refused entry (nothing is extracted by its name); alone in the
    # zip, nothing is left to grade, and the error lists it.
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("../evil_1_2_x.ipynb", NB)
    with pytest.raises(lms.LmsError, match=r"1 were refused\n  \.\./evil_1_2_x.*'\.\.'"):
        lms.collect(bad, lms.CANVAS, LESSON)
    # A zip whose end record points at a central directory that is not there.
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 1, 1, 46, 0, 0)
    (tmp_path / "damaged.zip").write_bytes(bytes(46) + end)
    with pytest.raises(lms.LmsError, match="damaged zip file"):
        lms.collect(tmp_path / "damaged.zip", lms.CANVAS, LESSON)


def _result(student, score, max_score=5.0, status="ok"):
    return {
        "student": student,
        "assignment": LESSON,
        "score": score,
        "max_score": max_score,
        "status": status,
        "message": "",
        "tests": [{"exercise": "pick_device", "passed": False, "message": "wrong device"}],
    }


def test_canvas_gradebook_round_trip(tmp_path):
    export = canvas_export(
        tmp_path / "export.csv", LESSON, [("Ada", "101"), ("Alan", "102"), ("Grace", "103")], 10
    )
    results = [_result("101", 5.0), _result("102", 2.5), _result("999", 1.0)]
    outcome = lms.fill_canvas_gradebook(export, results, LESSON, tmp_path / "import.csv")
    with (tmp_path / "import.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"{LESSON} (202)"]
    assert rows[1][0].strip() == "Points Possible" and rows[1][-1] == "10"
    grades = {r[1]: r[-1] for r in rows[2:]}
    assert grades == {"101": "10", "102": "5", "103": ""}  # scaled to 10 points possible
    assert outcome.filled == 2 and outcome.not_in_gradebook == ["999"]
    assert outcome.no_grade == ["Grace (103)"]
    # Read back as an export again: the same grades come out (the file round-trips).
    again = lms.fill_canvas_gradebook(
        tmp_path / "import.csv", results, LESSON, tmp_path / "again.csv"
    )
    assert again.filled == 2
    assert (tmp_path / "again.csv").read_text() == (tmp_path / "import.csv").read_text()


def test_canvas_gradebook_needs_one_column_for_the_lesson(tmp_path):
    export = canvas_export(tmp_path / "e.csv", "01_tensors", [("Ada", "101")], 10)
    with pytest.raises(lms.LmsError, match="0 columns name 00_welcome"):
        lms.fill_canvas_gradebook(export, [], LESSON, tmp_path / "o.csv")
    (tmp_path / "not.csv").write_text("a,b\n1,2\n")
    with pytest.raises(lms.LmsError, match="not a Canvas gradebook"):
        lms.fill_canvas_gradebook(tmp_path / "not.csv", [], LESSON, tmp_path / "o.csv")


def test_moodle_worksheet_round_trip(tmp_path):
    sheet = moodle_worksheet(tmp_path / "w.csv", [("Ada L", "5001"), ("Alan T", "5002")], 100)
    outcome = lms.fill_moodle_worksheet(sheet, [_result("5001", 4.0)], LESSON, tmp_path / "o.csv")
    with (tmp_path / "o.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["Grade"] == "80.00" and "wrong device" in rows[0]["Feedback comments"]
    assert rows[1]["Grade"] == "" and outcome.no_grade == ["Alan T (Participant 5002)"]
    assert rows[0]["Last modified (submission)"] == "Monday, 30 November 2026, 9:00 AM"
