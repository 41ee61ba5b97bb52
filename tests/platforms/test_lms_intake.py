"""Canvas and Moodle downloads no LMS writes: each bad entry is refused on its own, with why.

Issue 26, class 5: an entry whose name is flagged UTF-8 but is not, a very long user id or
name, the same entry twice, an entry or a download that expands past its cap (a zip of
zeros), a folder download's link. Each used to stop the whole run (nobody graded), take the
command to gigabytes, or keep one copy silently. Now each is listed in ``refused`` (and so
in ``OUT/lms/matched.json``) and every good student is staged and graded.

Most tests here stage only, or stand a stub in for the grade command: no kernel runs. The
one that grades (``lesson``) shares a single run of the smallest lesson across its checks.
"""

import argparse
import contextlib
import csv
import io
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.__main__ import main
from autograder.grading import samples, sandbox
from autograder.grading.submissions import max_points
from autograder.platforms import cli, lms
from tests.platforms.downloads import MIB, RawEntry, Upload, canvas_export, moodle_folder, raw_zip

LESSON = "00_welcome"
NB = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()
LONG_ID = "7" * 300  # a file name is at most 255 bytes
LONG_NAME = "Émilie" * 60  # 420 bytes of UTF-8, no "_" (Canvas's separator)


def _canvas(name: str, user: str, filename: str = f"{LESSON}.ipynb") -> bytes:
    return f"{name}_{user}_900_{filename}".encode()


def _good_entries(notebook: bytes) -> list[RawEntry]:
    """A plain student, one with a long id, one with a long name, one whose header lies big."""
    return [
        RawEntry(_canvas("good", "101"), notebook),
        RawEntry(_canvas("longid", LONG_ID), notebook),
        RawEntry(_canvas(LONG_NAME, "104"), notebook, utf8=True),
        RawEntry(_canvas("modest", "109"), notebook, claims=4_000_000_000),
    ]


def _bad_entries(notebook: bytes) -> list[RawEntry]:
    """One entry per way a zip entry can be bad (``REFUSALS``)."""
    name = f"{LESSON}.ipynb".encode()
    return [
        RawEntry(b"b\xff\xfed_102_900_" + name, notebook, utf8=True),
        RawEntry(_canvas("twice", "105"), notebook),
        RawEntry(_canvas("twice", "105"), b'{"cells": []}'),
        RawEntry(_canvas("bomb", "106"), zeros_mib=2),  # over the tests' 1 MiB cap
        RawEntry(_canvas("liar", "107"), zeros_mib=2, claims=100),
        RawEntry(_canvas("future", "108"), notebook, version=90),
        RawEntry(b"../escape_110_900_" + name, notebook),
    ]


def _attack_zip(path: Path) -> Path:
    return raw_zip(path, _good_entries(NB) + _bad_entries(NB))


# What each bad entry must be refused for, by a part of its path.
REFUSALS = {
    "b\\xff\\xfed_102": "marked UTF-8 but is not",
    "twice_105": "2 entries of this name",
    "bomb_106": "the cap for one notebook",
    "liar_107": "damaged",  # the header claims 100 bytes: zipfile stops there, and the CRC fails
    "future_108": "needs zip version 9.0",
    "escape_110": "'..'",
}
SHORT_ID = lms.fit(LONG_ID, lms.ID_MAX)
GOOD = {"101", SHORT_ID, "104", "109"}


def _refusal(refused: list[str], part: str) -> list[str]:
    return [r for r in refused if part in r]


def test_each_bad_entry_is_refused_with_its_reason_and_the_rest_staged(tmp_path):
    download = _attack_zip(tmp_path / "submissions.zip")
    staged = tmp_path / "staged"
    collected = lms.stage(download, lms.CANVAS, LESSON, staged, entry_cap=MIB)
    assert {f.student for f in collected.found} == GOOD
    for part, reason in REFUSALS.items():
        assert any(reason in r for r in _refusal(collected.refused, part)), (part, collected)
    assert len(_refusal(collected.refused, "twice_105")) == 2  # both copies, neither kept
    for student in GOOD:  # a header claiming 4 GB (109) is not believed either way
        assert (staged / student / LESSON / f"{LESSON}.ipynb").read_bytes() == NB
    assert sorted(p.name for p in staged.iterdir()) == sorted(GOOD)  # refused: nothing left
    text = lms.report(collected)
    assert "refused (7):" in text and "ids too long for a file name, shortened (1)" in text


def test_long_ids_and_names_are_shortened_stably_to_fit_a_file_name(tmp_path):
    collected = lms.stage(_attack_zip(tmp_path / "s.zip"), lms.CANVAS, LESSON, tmp_path / "a")
    found = {f.student: f for f in collected.found}
    assert found[SHORT_ID].full_id == LONG_ID and found["101"].full_id == ""
    assert len(SHORT_ID) <= lms.ID_MAX and SHORT_ID.startswith("777")
    assert found["104"].name == LONG_NAME  # the report keeps it whole; file names do not
    assert len(found["104"].prefix.encode()) < 255 - len(f"{LESSON}_feedback.html")
    assert found["104"].prefix.endswith("_104_900_")  # the ids Canvas matches stay whole
    assert lms.fit(LONG_ID, lms.ID_MAX) == SHORT_ID  # stable: the same folder every run
    assert lms.fit(LONG_ID[:-1] + "8", lms.ID_MAX) != SHORT_ID  # and one per id
    assert lms.fit("Émilie", lms.NAME_MAX) == "Émilie"  # short values are left as they are
    again = lms.stage(_attack_zip(tmp_path / "t.zip"), lms.CANVAS, LESSON, tmp_path / "b")
    assert [f.prefix for f in again.found] == [f.prefix for f in collected.found]


def test_the_total_cap_refuses_what_would_expand_past_it(tmp_path):
    download = raw_zip(
        tmp_path / "s.zip",
        [RawEntry(_canvas(f"s{n}", str(n)), zeros_mib=1) for n in range(201, 206)],
    )
    collected = lms.stage(
        download, lms.CANVAS, LESSON, tmp_path / "staged", entry_cap=2 * MIB, total_cap=3 * MIB
    )
    assert [f.student for f in collected.found] == ["201", "202", "203"]
    assert len(collected.refused) == 2
    assert all("together expand past 3,145,728 bytes" in r for r in collected.refused)
    assert sorted(p.name for p in (tmp_path / "staged").iterdir()) == ["201", "202", "203"]


def test_a_folder_download_refuses_links_pipes_and_files_over_the_cap(tmp_path):
    download = moodle_folder(
        tmp_path / "download",
        [
            Upload("5001", "Grace Hopper", f"{LESSON}.ipynb", NB),
            Upload("5002", "Alan Turing", f"{LESSON}.ipynb", b" " * 2048),
        ],
    )
    pipe = download / "Ada Lovelace_5003_assignsubmission_file_" / f"{LESSON}.ipynb"
    pipe.parent.mkdir()
    os.mkfifo(pipe)  # opened, it would block the run
    linked = download / "Bob Link_5004_assignsubmission_file_"
    linked.symlink_to(download / "Grace Hopper_5001_assignsubmission_file_")
    collected = lms.stage(download, lms.MOODLE, LESSON, tmp_path / "staged", entry_cap=1024)
    assert [f.student for f in collected.found] == ["5001"]
    assert any("5002" in r and "is 2,048 bytes, past 1,024" in r for r in collected.refused)
    assert any("5003" in r and "not a regular file" in r for r in collected.refused)
    assert any("Bob Link" in u and "symbolic link" in u for u in collected.unmatched)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory read from /proc")
def test_an_800_mb_zip_bomb_is_stopped_at_the_cap_in_little_memory(tmp_path):
    """The intake in a process of its own, so its peak memory is its own to measure."""
    download = raw_zip(
        tmp_path / "bomb.zip",
        [
            RawEntry(_canvas("good", "101"), NB),
            RawEntry(_canvas("bomb", "106"), zeros_mib=800),  # 800 MiB of zeros: 0.8 MB zipped
            RawEntry(b"bomb.bin", zeros_mib=800),  # matched to nobody: never expanded
        ],
    )
    assert download.stat().st_size < 2 * MIB
    script = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        from autograder.platforms import lms
        collected = lms.stage(Path({str(download)!r}), "canvas", {LESSON!r}, Path({str(tmp_path / "s")!r}))
        # VmHWM, this process's own peak: ru_maxrss would count the parent it was forked
        # from (pytest, large once a test has graded), as Linux keeps it across exec.
        status = Path("/proc/self/status").read_text()
        peak_kib = int(status.split("VmHWM:")[1].split()[0])
        print(json.dumps({{"peak_mib": peak_kib / 1024, **collected.to_dict()}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    outcome = json.loads(done.stdout)
    assert [f["student"] for f in outcome["found"]] == ["101"]
    assert any("bomb_106" in r and "52,428,800 bytes" in r for r in outcome["refused"])
    assert any(u.startswith("bomb.bin") for u in outcome["unmatched"])
    # Before, the command held every entry expanded (4.5 GB for an 800 MB zip). Now one
    # chunk at a time: Python and the intake's imports are ~20 MiB of this.
    assert outcome["peak_mib"] < 100, outcome["peak_mib"]


def _stub_grade(args: argparse.Namespace) -> int:
    """What the grade command leaves in OUT for each staged student, without a kernel."""
    out = Path(args.out)
    for folder in Path(args.submissions).iterdir():
        student = folder.name
        result = {"student": student, "assignment": LESSON, "score": 5.0, "max_score": 5.0}
        result |= {"status": "ok", "message": "", "tests": []}
        (out / "results" / LESSON).mkdir(parents=True, exist_ok=True)
        (out / "results" / LESSON / f"{student}.json").write_text(json.dumps(result))
        html = out / "feedback" / student / LESSON / f"{LESSON}.html"
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text("<p>feedback</p>")
    return 0


def test_the_lms_route_lists_bad_entries_and_returns_every_good_students_files(tmp_path):
    """matched.json, the feedback zip and the gradebook, with the grade command stubbed."""
    download = _attack_zip(tmp_path / "submissions.zip")
    export = canvas_export(
        tmp_path / "export.csv", LESSON, [("good", "101"), ("longid", LONG_ID), ("e", "104")], 10
    )
    out = tmp_path / "out"
    args = argparse.Namespace(
        submissions=str(download),
        out=str(out),
        assignment=[LESSON],
        lms=lms.CANVAS,
        canvas_gradebook=str(export),
        canvas_column=None,
        moodle_worksheet=None,
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lms, "ENTRY_CAP", MIB)  # the bomb's 2 MiB is over it
        assert cli.grade_from_lms(args, _stub_grade) == 0
    matched = json.loads((out / "lms" / "matched.json").read_text())
    assert {f["student"] for f in matched["found"]} == GOOD
    for part, reason in REFUSALS.items():
        assert any(reason in r for r in _refusal(matched["refused"], part)), part
    with zipfile.ZipFile(out / "lms" / "feedback.zip") as z:
        names = z.namelist()
    assert len(names) == len(GOOD) and all(len(n.encode()) <= 255 for n in names)
    assert f"longid_{SHORT_ID}_900_{LESSON}_feedback.html" in names
    with (out / "lms" / "canvas_import.csv").open() as f:
        rows = {r["ID"]: r[f"{LESSON} (202)"] for r in csv.DictReader(f)}
    assert rows[LONG_ID] == rows["101"] == rows["104"] == "10"  # the long id's row is found


# ---------------------------------------------------------------------------------------
# One real grading run of the smallest lesson, through the command an instructor runs.

FORGED = "120"  # a notebook with a cell that claims to be a graded cell the lesson lacks
GRADED = {"101", SHORT_ID, FORGED}


def _forged_notebook() -> bytes:
    """The right answers, and a test cell worth 100 points under an id the lesson lacks.

    nbgrader trusts the metadata: unchecked, the unknown id stopped it with a traceback, the
    notebook stayed in ``grader-error`` and was graded again on every run.
    """
    nb = samples.solution(LESSON)
    claim = nbformat.v4.new_code_cell("assert True")
    claim.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": "a_cell_the_lesson_does_not_have",
        "points": 100,
        "solution": False,
        "locked": True,
        "schema_version": 3,
    }
    nb.cells.append(claim)
    return nbformat.writes(nb).encode()


@pytest.fixture(scope="module")
def graded_twice(tmp_path_factory) -> dict:
    """The attack download with right answers, graded; then the same command again."""
    root = tmp_path_factory.mktemp("lms-intake")
    right = nbformat.writes(samples.solution(LESSON)).encode()
    # Of the good students, the long id alone: the route's own files for the others are
    # checked above with the grade command stubbed, and each notebook graded costs seconds.
    good = [e for e in _good_entries(right) if e.name.startswith((b"good_", b"longid_"))]
    forged = RawEntry(_canvas("forged", FORGED), _forged_notebook())
    download = raw_zip(root / "submissions.zip", [*good, forged, *_bad_entries(right)])
    out = root / "out"
    argv = ["grade", str(download), "--out", str(out), "--assignment", LESSON, "--jobs", "2"]
    argv += ["--from", "canvas"]
    runs = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lms, "ENTRY_CAP", MIB)  # the bomb's 2 MiB is over it
        for _ in range(2):
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr):
                status = main(argv)
            with (out / "grades.csv").open(newline="") as f:
                rows = {r["student_id"]: r for r in csv.DictReader(f)}
            results = {p.stem: p.read_text() for p in (out / "results" / LESSON).glob("*.json")}
            runs.append({"status": status, "stderr": stderr.getvalue(), "rows": rows})
            runs[-1]["results"] = results
    return {"out": out, "runs": runs, "max": max_points(LESSON)}


@pytest.mark.lesson
@pytest.mark.xdist_group("lms-intake")
@pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed")
def test_every_good_student_is_graded_and_every_bad_entry_listed(graded_twice):
    first = graded_twice["runs"][0]
    assert first["status"] == 0, first["stderr"][-2000:]
    assert set(first["rows"]) == GRADED
    for student, row in first["rows"].items():  # right answers: full marks, long names too
        assert (row["status"], float(row["score"])) == ("ok", graded_twice["max"]), student
    out = graded_twice["out"]
    matched = json.loads((out / "lms" / "matched.json").read_text())
    for part, reason in REFUSALS.items():
        assert any(reason in r for r in _refusal(matched["refused"], part)), part
    with zipfile.ZipFile(out / "lms" / "feedback.zip") as z:
        assert len(z.namelist()) == len(GRADED)


@pytest.mark.lesson
@pytest.mark.xdist_group("lms-intake")
@pytest.mark.skipif(not sandbox.available(), reason="bubblewrap (bwrap) is not installed")
def test_a_claimed_graded_cell_with_an_unknown_id_is_graded_once(graded_twice):
    """Graded on the lesson's own cells (its 100 points ignored), and kept on the next run."""
    first, second = graded_twice["runs"]
    row = first["rows"][FORGED]
    assert row["status"] == "ok" and float(row["max_score"]) == graded_twice["max"]
    assert second["status"] == 0
    assert f"graded before and unchanged, kept: {len(GRADED)}" in second["stderr"]
    assert second["results"][FORGED] == first["results"][FORGED]  # not graded again
