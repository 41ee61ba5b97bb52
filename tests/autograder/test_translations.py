"""The translated editions: built from translations/<lang>/, refused when stale or missing."""

import json
import re

import nbformat
import pytest

from autograder import __main__ as cli
from autograder import course, notebook, release, translations
from tests.autograder.conftest import PROBE

ZH = {"cell-000": "# 探针", "cell-000-intro": "探针课程的说明。"}


@pytest.fixture
def zh_course(probe_course, monkeypatch):
    """The probe course with a second markdown cell and a complete Chinese translation
    (in the scratch course's translations/zh/, beside its solutions/)."""
    path = course.solution_notebook(PROBE)
    nb = notebook.read(path)
    intro = nbformat.v4.new_markdown_cell("A probe lesson, to check the release.")
    intro.id = "cell-000-intro"
    nb.cells.insert(1, intro)
    notebook.write(nb, path)
    write_translation(nb, ZH)
    return probe_course


def write_translation(nb, texts):
    blocks = [
        f"<!-- cell: {cell.id} en: {translations.en_hash(cell.source)} -->\n{texts[cell.id]}\n"
        for cell in translations.markdown_cells(nb)
        if cell.id in texts
    ]
    path = translations.translation_file("zh", PROBE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(blocks), encoding="utf-8")


def zh_notebook():
    return notebook.read(translations.notebooks_dir("zh") / PROBE / f"{PROBE}.ipynb")


def test_the_chinese_edition_has_the_english_code_and_cells(zh_course):
    assert release.release() == []
    english, chinese = notebook.read(course.student_notebook(PROBE)), zh_notebook()
    assert [c.id for c in chinese.cells] == [c.id for c in english.cells]
    for en, zh in zip(english.cells, chinese.cells, strict=True):
        assert zh.metadata == en.metadata  # nbgrader's grade_ids, points, locks
        if en.cell_type == "code":
            assert zh.source == en.source
    assert [c.source for c in translations.markdown_cells(chinese)] == list(ZH.values())
    assert chinese.metadata[translations.LANGUAGE_KEY] == "zh"
    assert translations.LANGUAGE_KEY not in english.metadata
    assert "SECRET-PROBE-CHECK" not in json.dumps(chinese)  # the student version, as English
    assert release.release(check=True) == []


def test_editing_an_english_cell_makes_the_check_name_the_stale_translation(zh_course):
    release.release()
    path = course.solution_notebook(PROBE)
    nb = notebook.read(path)
    nb.cells[1].source = "A probe lesson, edited after it was translated."
    notebook.write(nb, path)
    problems = release.release(check=True)
    assert any(f"zh/{PROBE}.md: cell-000-intro changed in English" in p for p in problems)
    assert f"notebooks/{PROBE}: {PROBE}.ipynb is stale" in problems


def test_a_missing_or_untranslated_cell_fails_the_check(zh_course):
    nb = notebook.read(course.solution_notebook(PROBE))
    write_translation(nb, {"cell-000": "# 探针"})
    assert any("cell-000-intro has no translated block" in p for p in release.release(check=True))
    write_translation(nb, {"cell-000": "# 探针", "cell-000-intro": nb.cells[1].source})
    assert any("cell-000-intro is still the English text" in p for p in release.release(check=True))


def test_a_stale_edition_is_reported_and_an_orphan_edition_removed(zh_course):
    release.release()
    target = translations.notebooks_dir("zh") / PROBE / f"{PROBE}.ipynb"
    target.write_text(target.read_text().replace("探针", "旧的"))
    assert release.release(check=True) == [f"notebooks/zh/{PROBE}: {PROBE}.ipynb is stale"]
    translations.translation_file("zh", PROBE).unlink()
    missing = f"{translations.translation_file('zh', PROBE)}: missing; run "
    assert [p[: len(missing)] for p in release.release(check=True)] == [missing]
    translations.translations_dir("zh").rmdir()  # no Chinese edition at all any more
    assert release.release(check=True) == [
        f"notebooks/zh/{PROBE}: has no translation file; remove it (`make release` does)"
    ]
    release.release()
    assert not target.exists()


def test_the_english_release_leaves_the_editions_folder_alone(zh_course):
    release.release()
    assert release.release(check=True) == []  # notebooks/zh is not an orphan lesson
    assert zh_notebook().cells


def test_translate_lists_and_refreshes_a_stale_cell(zh_course, capsys):
    path = course.solution_notebook(PROBE)
    nb = notebook.read(path)
    nb.cells[1].source = "A new English text."
    notebook.write(nb, path)
    assert cli.main(["translate", "zh", PROBE, "--list"]) == 1
    assert "cell-000-intro: English changed" in capsys.readouterr().out
    assert cli.main(["translate", "zh", PROBE]) == 1
    blocks = translations.read("zh", PROBE)
    assert blocks["cell-000"].text == "# 探针"  # a current translation is kept
    assert blocks["cell-000-intro"].text == "A new English text."
    assert blocks["cell-000-intro"].en_hash == translations.en_hash("A new English text.")


def test_a_cell_of_only_code_and_math_may_stay_as_it_is():
    assert not translations.has_prose("$$\\sigma(x) = 1 / (1 + e^{-x})$$\n\n`torch.sigmoid(x)`")
    assert translations.has_prose("Run the cell below and read the error.")


def test_every_lesson_has_a_complete_chinese_translation():
    """Every lesson exists in Chinese: each translation file is there and up to date."""
    found = []
    for lesson in course.lessons():
        if not translations.translation_file("zh", lesson).is_file():
            found.append(f"translations/zh/{lesson}.md is missing")
            continue
        nb = notebook.read(course.solution_notebook(lesson))
        found += translations.problems("zh", lesson, nb)
    assert found == []


def test_a_file_that_does_not_read_as_blocks_is_named_and_left_alone(zh_course, capsys):
    path = translations.translation_file("zh", PROBE)
    text = "翻译说明\n" + path.read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    assert any("text before the first" in p for p in release.release(check=True))
    assert cli.main(["translate", "zh", PROBE]) == 2
    assert "text before the first" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == text  # nothing overwritten
    header = text.splitlines()[1]
    path.write_text(f"{header}\n一\n{header}\n二\n", encoding="utf-8")
    with pytest.raises(translations.TranslationError, match="translated twice"):
        translations.read("zh", PROBE)


@pytest.mark.lesson
def test_a_hidden_check_judging_a_chinese_submission_says_why_in_chinese():
    """The grader runs hidden checks in its own process, inside ``speaking(lang)`` of the
    submission's language: a wrong answer's verdict is in Chinese, an English one's not."""
    from autograder import judge, learner_messages, misconceptions
    from autograder.mistakes import catalogue

    lesson, exercise = "00_welcome", "pick_device"
    spec = judge.specs(lesson)[f"test_{exercise}"]
    mistake = catalogue(course.topic(lesson))[exercise][0]
    wrong = misconceptions.with_code(misconceptions.solution_namespace(lesson), mistake.code)
    english = judge.run_check(spec, judge.InProcessChannel(wrong))
    with learner_messages.speaking("zh"):
        chinese = judge.run_check(spec, judge.InProcessChannel(wrong))
    assert not english.passed and not chinese.passed
    assert not re.search(r"[\u4e00-\u9fff]", english.message), english.message
    assert re.search(r"[\u4e00-\u9fff]", chinese.message), chinese.message


def test_the_lessons_other_files_go_into_the_chinese_edition_too(zh_course):
    (course.SOLUTIONS / PROBE / "data.csv").write_text("x\n1\n")
    release.release()
    assert (translations.notebooks_dir("zh") / PROBE / "data.csv").read_text() == "x\n1\n"
    assert (course.NOTEBOOKS / PROBE / "data.csv").is_file()
