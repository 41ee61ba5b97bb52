"""Submitted files are read without following links, and no message quotes their bytes.

A notebook that is a symbolic link to the solution would score full marks if followed; one
that links to a system file would put its first line into the feedback (nbformat's own
errors quote what they could not parse). Each route is tried: the class route's intake,
the single-notebook routes (Gradescope, PrairieLearn) and an LMS folder download.
"""

import os
from pathlib import Path

import pytest

from autograder import course
from autograder.grading import files
from autograder.grading.status import Status
from autograder.grading.submissions import discover
from autograder.platforms import lms
from autograder.platforms.single import find_notebook

LESSON = "00_welcome"
SECRET = "root:x:0:0:a line that must never reach a student\n"


@pytest.fixture
def secret(tmp_path) -> Path:
    path = tmp_path / "elsewhere" / "passwd"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


def _student(root: Path, name: str) -> Path:
    folder = root / name / LESSON
    folder.mkdir(parents=True)
    return folder


def test_the_class_route_refuses_links_and_quotes_nothing(tmp_path, secret):
    subs = tmp_path / "subs"
    os.symlink(course.solution_notebook(LESSON), _student(subs, "to_solution") / f"{LESSON}.ipynb")
    os.symlink(secret, _student(subs, "to_system_file") / f"{LESSON}.ipynb")
    os.symlink(secret, _student(subs, "renamed_link") / "mine.ipynb")
    (_student(subs, "not_json") / f"{LESSON}.ipynb").write_text(SECRET)  # a real file
    real = _student(subs, "real_folder")
    (real / f"{LESSON}.ipynb").write_bytes(course.solution_notebook(LESSON).read_bytes())
    os.symlink(real.parent, subs / "folder_link")  # a whole student folder that points away
    found = {s.student: s for s in discover(subs, [LESSON])}
    assert found["real_folder"].status == Status.OK
    for student in ("to_solution", "to_system_file", "renamed_link", "not_json", "folder_link"):
        row = found[student]
        assert row.status == Status.INVALID and row.path is None, student
        assert "root:x" not in row.message and "never reach" not in row.message, row.message
    assert "symbolic link" in found["to_solution"].message
    assert "folder_link/ is a symbolic link" in found["folder_link"].message


def test_a_link_is_never_read(tmp_path, secret):
    link = tmp_path / "link.ipynb"
    os.symlink(secret, link)
    with pytest.raises(files.NotAFile, match="symbolic link"):
        files.read_bytes(link)
    assert files.linked(link, tmp_path) == link


def test_the_single_notebook_routes_skip_links(tmp_path, secret):
    inbox = tmp_path / "submission"
    inbox.mkdir()
    os.symlink(course.solution_notebook(LESSON), inbox / f"{LESSON}.ipynb")
    notebook, note = find_notebook(inbox, LESSON)
    assert notebook is None and "symbolic link" in note and f"{LESSON}.ipynb" in note
    (inbox / "my_work.ipynb").write_text("{}")
    notebook, note = find_notebook(inbox, LESSON)
    assert notebook == inbox / "my_work.ipynb"  # the real file is graded, never the link
    assert f"{LESSON}.ipynb (a symbolic link)" in note


def test_an_lms_folder_download_lists_links_without_reading_them(tmp_path, secret):
    download = tmp_path / "canvas"
    download.mkdir()
    good = download / f"ann_101_9001_{LESSON}.ipynb"
    good.write_bytes(course.solution_notebook(LESSON).read_bytes())
    os.symlink(secret, download / f"bob_102_9002_{LESSON}.ipynb")
    collected, contents = lms.collect(download, lms.CANVAS, LESSON)
    assert [f.student for f in collected.found] == ["101"]
    assert set(contents) == {"101"}
    assert any("bob_102" in u and "symbolic link" in u for u in collected.unmatched)
    assert SECRET.strip() not in repr(collected.to_dict())
