"""What the grader itself tells a learner, in the language of the learner's notebook.

The grader's generic feedback (a kernel that died, a spent time budget, a hidden check that
could not run, the summary line of a platform) is written here once, through
``tutorial_lib.i18n``'s gettext catalogue, so that a Chinese notebook's feedback is in
Chinese. The check messages themselves come from ``tutorial_lib.checks``: the hidden checks
run in the grader's process (inside ``speaking(lang)``), the visible tests in the learner's
kernel (told the language by ``kernel_setup``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from nbformat import NotebookNode

from autograder.translations import LANGUAGE_KEY
from tutorial_lib.i18n import ENGLISH, ENV, _, available, language, normalise


def notebook_language(nb: NotebookNode) -> str:
    """The language a notebook names in its metadata (``"zh"``), English when it names none.

    The metadata is the learner's to edit: anything unknown just means English messages.
    """
    value = nb.get("metadata", {}).get(LANGUAGE_KEY)
    lang = normalise(value if isinstance(value, str) else None)
    return lang if lang in available() else ENGLISH


@contextlib.contextmanager
def speaking(lang: str) -> Iterator[None]:
    """Messages made inside (the hidden checks', these functions') are in ``lang``."""
    with language(lang):
        yield


def kernel_setup(lang: str) -> str:
    """Code that, run quietly in a learner's kernel, makes its check messages ``lang``.

    The grader's kernels may be started before their submission is read (a spare kernel),
    so their environment cannot carry the language: it is set from inside, before the
    notebook's first cell (and again in a kernel restarted after a crash).
    """
    return f"__import__('os').environ[{ENV!r}] = {normalise(lang)!r}\n"


def not_answered() -> str:
    return _("not answered yet: the answer still raises NotImplementedError")


def could_not_judge(error: BaseException) -> str:
    return _("the hidden check could not judge the answer ({error_type}: {error})").format(
        error_type=type(error).__name__, error=error
    )


def check_did_not_run() -> str:
    return _("the hidden check did not run for this cell")


def common_mistake(message: str) -> str:
    """The hint for an answer that behaves like a catalogued mistake; ``message`` is the
    catalogue's English text (the lesson's ``.po`` translates it)."""
    return _("This looks like a common mistake: {message}").format(message=_(message))


def budget_spent(seconds: int, ran: bool) -> str:
    if ran:
        text = _(
            "The submission's time budget ({seconds} s for the whole notebook, "
            "--submission-timeout) ran out while this cell ran; this cell earns nothing."
        )
    else:
        text = _(
            "The submission's time budget ({seconds} s for the whole notebook, "
            "--submission-timeout) had run out before this cell; this cell earns nothing."
        )
    return text.format(seconds=seconds)


def kernel_died() -> str:
    return _(
        "The kernel died while running this cell (a crash, os._exit, or running out of "
        "memory). It was restarted and grading went on; this cell earns nothing."
    )


def output_cut(count: int) -> str:
    text = _("[the grader kept the first {count} characters of this cell's output]")
    return "\n" + text.format(count=f"{count:,}") + "\n"


def all_passed() -> str:
    return _("All checks passed.")


def only_hidden_failed() -> str:
    return _("The visible checks passed; the hidden checks, on other inputs, did not.")


def not_graded(why: str) -> str:
    return _("not graded: {why}").format(why=why)


def status_word(status: str) -> str:
    """A row's status (``ok``, ``timeout``...) as the learner reads it."""
    return _(str(status))


def summary(score: float, max_score: float, status: str) -> str:
    return _("{score} / {max_score} points ({status}).").format(
        score=f"{score:g}", max_score=f"{max_score:g}", status=status_word(status)
    )
