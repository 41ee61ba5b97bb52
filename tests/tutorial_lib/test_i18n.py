"""Messages in the learner's language: the gettext catalogue and how the language is chosen."""

import ast
import os
import re
from pathlib import Path

import pytest
import torch

from autograder import course, learner_messages, notebook
from autograder.grading.status import Status
from autograder.mistakes import catalogue
from tutorial_lib import checks, i18n

ROOT = Path(__file__).resolve().parents[2]
MARKED = [
    ROOT / "tutorial_lib" / "checks.py",
    ROOT / "autograder" / "learner_messages.py",
    ROOT / "autograder" / "boundary.py",
    ROOT / "autograder" / "contracts.py",
]
PLACEHOLDER = re.compile(r"\{(\w*)[^}]*\}")


def _literals_marked(tree: ast.AST, names: tuple[str, ...]) -> set[str]:
    """The string literals passed as the first argument of a call to one of ``names``."""
    return {
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in names
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    }


def lesson_messages(lesson: str) -> set[str]:
    """What a lesson's own ``.po`` must translate: ``tr()`` in its code cells, ``_()`` and
    ``N_()`` in its hidden checks, and every message of its catalogue of mistakes."""
    found: set[str] = set()
    for cell in notebook.read(course.solution_notebook(lesson)).cells:
        if cell.cell_type == "code":
            # IPython's magics and shell lines are not Python: left out of the parse.
            code = "\n".join(
                "" if line.lstrip().startswith(("%", "!")) else line
                for line in cell.source.splitlines()
            )
            found |= _literals_marked(ast.parse(code), ("tr",))
    hidden = ROOT / "autograder" / "hidden" / f"{course.topic(lesson)}.py"
    if hidden.is_file():
        found |= _literals_marked(ast.parse(hidden.read_text()), ("_", "N_"))
    mistakes = catalogue(course.topic(lesson))
    return found | {m.message for listed in mistakes.values() for m in listed}


def marked_messages() -> set[str]:
    """Every literal passed to ``_()`` in the marked modules, the default check names and
    the status words: what the catalogues must translate."""
    found = set(checks._DEFAULT_WHATS) | {str(s) for s in Status}
    for path in MARKED:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "_"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                found.add(node.args[0].value)
    return found


@pytest.fixture
def english(monkeypatch):
    for name in (i18n.ENV, "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)


def failure(check, *args, **kwargs) -> str:
    with pytest.raises(checks.CheckError) as caught:
        check(*args, **kwargs)
    return str(caught.value)


@pytest.mark.parametrize("lang", i18n.available()[1:])
def test_every_marked_message_is_translated_with_the_same_placeholders(lang):
    path = i18n.LOCALE_DIR / lang / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
    entries = i18n.read_po(path.read_text("utf-8"))
    missing = sorted(marked_messages() - set(entries))
    assert not missing, f"{path.name} has no {lang} entry for:\n" + "\n".join(map(repr, missing))
    wrong = _placeholders_differ(entries)
    assert not wrong, f"placeholders differ between msgid and msgstr: {wrong}"


def _placeholders_differ(entries: dict[str, str]) -> list[str]:
    return [
        msgid
        for msgid, msgstr in entries.items()
        if msgid
        and sorted(PLACEHOLDER.findall(msgid)) != sorted(PLACEHOLDER.findall(msgstr))
        and "{article}" not in msgid  # English grammar only: Chinese has no articles
    ]


@pytest.mark.parametrize("lang", i18n.available()[1:])
@pytest.mark.parametrize("lesson", course.lessons())
def test_each_lessons_messages_are_translated(lesson, lang):
    """Its test cells' ``tr()`` messages, its hidden checks' and its mistakes' hints: each
    has an entry in ``locale/<lang>/lessons/<lesson>.po`` (or the course's catalogue)."""
    path = i18n.LOCALE_DIR / lang / "lessons" / f"{lesson}.po"
    own = i18n.read_po(path.read_text("utf-8"), path.name) if path.is_file() else {}
    shared = i18n.LOCALE_DIR / lang / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"
    known = {**i18n.read_po(shared.read_text("utf-8")), **own}
    missing = sorted(lesson_messages(lesson) - set(known))
    assert not missing, f"{path} has no {lang} entry for:\n" + "\n".join(map(repr, missing))
    wrong = _placeholders_differ(own)
    assert not wrong, f"{path.name}: placeholders differ between msgid and msgstr: {wrong}"
    # And nothing else: an entry whose message the lesson no longer uses is dead weight a
    # translator would keep revising (contracts replaced many hand-written messages).
    stale = sorted(set(own) - lesson_messages(lesson) - {""})
    assert not stale, f"{path} translates messages its lesson no longer uses:\n" + "\n".join(
        map(repr, stale)
    )


def test_chinese_messages_where_the_environment_asks(english, monkeypatch):
    x = torch.zeros(2, 3)
    shape_en = failure(checks.check_shape, x, (3, 2), names="N C")
    assert shape_en.startswith("result has shape (2, 3), expected (3, 2) as (N, C)")
    monkeypatch.setenv(i18n.ENV, "zh_CN.UTF-8")
    assert failure(checks.check_shape, x, (3, 2), names="N C").startswith(
        "结果的形状是 (2, 3)，应为 (3, 2)"
    )
    assert "与期望值" in failure(checks.assert_close, torch.ones(3), torch.zeros(3))
    message = checks.call_failure_message("f(1)", "ValueError", "bad", ["Cell In[3], line 1"])
    assert message.splitlines()[:2] == [
        "f(1) 抛出了 ValueError：bad",
        "你的代码中出错的位置（按调用顺序，最后一行是最内层）：",
    ]
    # A name the test gives is code: it stays as written.
    assert failure(checks.check_dtype, x, torch.int64, what="to_ids(x)").startswith("to_ids(x)的")


def test_the_language_set_in_the_process_wins_and_ends_with_its_block(english, monkeypatch):
    monkeypatch.setenv(i18n.ENV, "zh")
    with i18n.language("en"):
        assert failure(checks.check_type, None, torch.Tensor).startswith("result should be a")
    assert failure(checks.check_type, None, torch.Tensor).startswith("结果应该是 Tensor")


def test_a_jupyterlab_notebook_under_zh_speaks_chinese(english, monkeypatch):
    monkeypatch.setenv(
        "JPY_SESSION_NAME", "/home/me/course/notebooks/zh/01_tensors/01_tensors.ipynb"
    )
    assert i18n.current() == "zh"
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/me/course/notebooks/01_tensors/zh.ipynb")
    assert i18n.current() == "en"  # only a folder named after a catalogue counts
    monkeypatch.setenv("JPY_SESSION_NAME", "/home/zh/course/notebooks/01_tensors/01_tensors.ipynb")
    assert i18n.current() == "en"  # a home folder that happens to be called zh does not


def test_an_unknown_language_falls_back_to_english(english, monkeypatch):
    monkeypatch.setenv(i18n.ENV, "xx")
    assert failure(checks.check_type, None, torch.Tensor).startswith("result should be a")


def test_po_reading_skips_fuzzy_and_empty_entries_and_compiles_for_gettext():
    entries = i18n.read_po(
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n\n'
        '#, fuzzy\nmsgid "old"\nmsgstr "旧"\n\n'
        'msgid "todo"\nmsgstr ""\n\n'
        'msgid ""\n"two "\n"lines"\nmsgstr "两" "行"\n'
    )
    assert entries == {"": "Content-Type: text/plain; charset=UTF-8\n", "two lines": "两行"}
    import gettext
    import io

    compiled = gettext.GNUTranslations(io.BytesIO(i18n.compile_po(entries)))
    assert compiled.gettext("two lines") == "两行"
    assert compiled.gettext("old") == "old"


def test_the_kernel_setup_code_switches_a_kernels_messages(english):
    try:
        exec(learner_messages.kernel_setup("zh"), {})
        assert os.environ[i18n.ENV] == "zh"
        assert failure(checks.check_type, None, torch.Tensor).startswith("结果应该是")
    finally:
        os.environ.pop(i18n.ENV, None)


def test_the_graders_own_feedback_follows_the_notebooks_language(english):
    zh = {"metadata": {"language": "zh"}}
    assert learner_messages.notebook_language(zh) == "zh"
    assert learner_messages.notebook_language({"metadata": {"language": 3}}) == "en"
    for odd in ("/etc/x", "../../zh", "xx", "zh'); import os; ('"):
        assert learner_messages.notebook_language({"metadata": {"language": odd}}) == "en"
    assert i18n.normalise("/etc/x") == "en"
    assert learner_messages.notebook_language({"metadata": {}}) == "en"
    with learner_messages.speaking("zh"):
        assert learner_messages.summary(3, 4, Status.TIMEOUT) == "3 / 4 分（超时）。"
        assert learner_messages.kernel_died().startswith("运行这个单元格时内核退出了")
    assert learner_messages.summary(3, 4, Status.TIMEOUT) == "3 / 4 points (timeout)."
    assert learner_messages.output_cut(1_000_000) == (
        "\n[the grader kept the first 1,000,000 characters of this cell's output]\n"
    )


def test_set_language_lasts_beyond_the_cell_that_called_it(english):
    try:
        i18n.set_language("zh-Hans")
        assert os.environ[i18n.ENV] == "zh"  # what later cells and child processes read
        assert failure(checks.check_type, None, torch.Tensor).startswith("结果应该是")
        i18n.set_language(None)
        assert failure(checks.check_type, None, torch.Tensor).startswith("result should be")
    finally:
        os.environ.pop(i18n.ENV, None)


def test_the_catalogues_go_into_the_wheel_colab_installs():
    """Without package data, pip installs tutorial_lib without locale/ and Colab's
    learners silently get English messages."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"].get("package-data", {}).get("tutorial_lib", [])
    packaged = [p for pattern in data for p in (ROOT / "tutorial_lib").glob(pattern)]
    for lang in i18n.available()[1:]:
        missing = set(i18n.catalogue_files(lang)) - set(packaged)
        assert not missing, f"package-data leaves out {sorted(missing)}"


@pytest.mark.parametrize("lang", i18n.available()[1:])
def test_no_two_catalogue_files_translate_one_message_differently(lang):
    """The course's and the lessons' files are merged into one catalogue: a message two of
    them translate differently would get whichever file is read last."""
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for path in i18n.catalogue_files(lang):
        for msgid, msgstr in i18n.read_po(path.read_text("utf-8"), path.name).items():
            if msgid and msgid in seen and seen[msgid][1] != msgstr:
                clashes.append(f"{msgid!r}: {seen[msgid][0]} and {path.name}")
            seen.setdefault(msgid, (path.name, msgstr))
    assert not clashes, "translated differently in two files:\n" + "\n".join(clashes)
