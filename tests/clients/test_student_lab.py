"""The lab a student meets: ``make lab`` opens lesson 01 quietly, with a two-line setup cell.

In a real browser, on the JupyterLab the ``lab`` fixture starts with ``make lab``'s
configuration (jupyter/student and jupyter/common): no "get notified about official Jupyter
news?" pop-up, none of nbgrader's instructor tools (Create Assignment, the Nbgrader menu,
formgrader, the course and assignment lists) and nbgrader's Validate button in the
notebook's toolbar. The setup cell shows as one collapsed line, and once run, one line of
versions. ``test_formgrader_loads`` (test_browser.py) shows the same tools in
``make lab-instructor``'s lab, so the checks here can tell them apart.

Why collapsed rather than shorter: on Colab the course helpers are not installed, so the
code that installs them has to be in the notebook itself, before anything imports them.
JupyterLab (and Notebook 7) shows a cell whose ``metadata.jupyter.source_hidden`` is set as
its first line and an ellipsis that opens it; Colab folds code by its own flag
(``cellView: "form"``), so there the cell may show whole, and it runs the same.
"""

from __future__ import annotations

import time
import urllib.error

import pytest

from autograder import course, notebook
from tests.clients.lab import PANEL, NotebookPage

LESSONS = course.lessons()
LESSON = "01_tensors"
SETUP_INDEX = 1  # cell-001: the setup cell every lesson starts with (after its title)
# How long a news question takes to show when it is going to (about a second after the
# page is ready, seen here with the course's configuration left out), with a margin.
NEWS_WAIT_S = 5
SETUP_TIMEOUT_S = 180  # the setup cell imports torch: seconds, more on a loaded machine

STUDENT_VIEW_JS = f"""
const panel = document.querySelector('{PANEL}').closest('.jp-NotebookPanel');
return {{
  menus: [...document.querySelectorAll('#jp-MainMenu .lm-MenuBar-item')]
    .map(e => e.textContent.trim()),
  tabs: [...document.querySelectorAll('.lm-TabBar-tab')]
    .map(e => [e.dataset.id || '', e.title || '', e.textContent.trim()].join(' ')),
  toasts: [...document.querySelectorAll('.jp-toast-message')].map(e => e.textContent.trim()),
  validate: [...panel.querySelectorAll('.jp-Toolbar .validate-button')]
    .map(e => [e.textContent.trim(), !e.querySelector('[disabled]')]),
}};
"""

ACTIVE_CELL_JS = (
    f"return [...document.querySelectorAll('{PANEL} .jp-Cell')]"
    ".findIndex(c => c.classList.contains('jp-mod-active'))"
)

SETUP_CELL_JS = f"""
const cell = document.querySelectorAll('{PANEL} .jp-Cell')[arguments[0]];
const input = cell.querySelector('.jp-Cell-inputWrapper');
const editor = cell.querySelector('.jp-InputArea');
return {{
  placeholder: [...cell.querySelectorAll('.jp-InputPlaceholder')].map(e => e.innerText.trim()),
  editor_shown: !!editor && editor.offsetParent !== null,
  input_lines: input.innerText.trim().split('\\n').filter(l => l.trim()),
  output_lines: [...cell.querySelectorAll('.jp-OutputArea-output')]
    .flatMap(e => e.innerText.trim().split('\\n')).filter(l => l.trim()),
}};
"""


@pytest.fixture(scope="module")
def student_page(lab, artifacts):
    """Lesson 01 open in the student lab (one kernel start for this module's tests)."""
    server, driver, _ = lab
    page = NotebookPage(driver, server, f"notebooks/{LESSON}/{LESSON}.ipynb")
    page.open()
    yield page
    server.shutdown_kernels()


def status_of(server, path: str) -> int:
    """The HTTP status the lab's server answers ``path`` with."""
    try:
        server.api(path)
    except urllib.error.HTTPError as error:
        return error.code
    return 200


@pytest.mark.clients
@pytest.mark.xdist_group("clients-browser")
def test_student_lab_has_no_news_pop_up_no_instructor_tools_and_validate(student_page, artifacts):
    server, driver = student_page.server, student_page.driver
    deadline = time.monotonic() + NEWS_WAIT_S
    while True:  # a pop-up fails at once; its absence counts once it had time to show
        view = driver.execute_script(STUDENT_VIEW_JS)
        if view["toasts"] or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    student_page.screenshot(artifacts / "browser-student-lab.png")
    assert not view["toasts"], f"the student lab shows notifications: {view['toasts']}"
    # What keeps the question away: the course's defaults for the notification settings
    # (the server folds them into the schema; this fresh user has set nothing).
    news = server.api("lab/api/settings/@jupyterlab/apputils-extension:notification")
    defaults = {k: v.get("default") for k, v in news["schema"]["properties"].items()}
    assert defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, defaults
    assert not news["settings"], f"a user setting decides instead: {news['settings']}"

    assert "Nbgrader" not in view["menus"], f"the menu bar shows {view['menus']}"
    instructor_tabs = [
        t for t in view["tabs"] if "nbgrader" in t.lower() or "create assignment" in t.lower()
    ]
    assert not instructor_tabs, f"nbgrader's instructor panels are in the lab: {instructor_tabs}"
    # The server halves are off too: formgrader, the course list, the assignment list.
    for path in ["formgrader", "formgraders", "assignments"]:
        assert status_of(server, path) == 404, f"/{path} answers in the student lab"

    assert view["validate"] == [["Validate", True]], f"Validate buttons: {view['validate']}"
    # Validate's own server half still answers (it asks the version before validating).
    assert status_of(server, "nbgrader_version?version=0") == 200


@pytest.mark.clients
@pytest.mark.xdist_group("clients-browser")
def test_setup_cell_shows_as_two_lines(student_page, artifacts):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = student_page.driver
    before = driver.execute_script(SETUP_CELL_JS, SETUP_INDEX)
    assert not before["editor_shown"], "the setup cell's code is shown, not collapsed"
    assert len(before["placeholder"]) == 1 and before["placeholder"][0].startswith("# Setup"), (
        f"the collapsed setup cell reads {before['placeholder']}"
    )
    # A learner's way through: click the title cell's prompt area, Shift+Enter (which
    # selects the next cell), Shift+Enter again (which runs it). Clicking the collapsed cell
    # itself would open it; the arrow keys skip it.
    prompts = driver.find_elements(By.CSS_SELECTOR, f"{PANEL} .jp-Cell .jp-InputPrompt")
    prompts[SETUP_INDEX - 1].click()
    for _ in range(2):
        before_keys = driver.execute_script(ACTIVE_CELL_JS)
        ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
        deadline = time.monotonic() + 10  # the selection moves on once the cell is sent
        while driver.execute_script(ACTIVE_CELL_JS) == before_keys:
            assert time.monotonic() < deadline, f"Shift+Enter left cell {before_keys} selected"
            time.sleep(0.2)
        if before_keys == SETUP_INDEX - 1:
            assert driver.execute_script(ACTIVE_CELL_JS) == SETUP_INDEX, (
                "the setup cell was skipped"
            )
    # Its prompt is hidden with its code, so wait for what it prints (torch's import).
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    try:
        while not driver.execute_script(SETUP_CELL_JS, SETUP_INDEX)["output_lines"]:
            assert time.monotonic() < deadline, f"no output after {SETUP_TIMEOUT_S} s"
            time.sleep(0.5)
        student_page.wait_idle(timeout=SETUP_TIMEOUT_S)
    finally:
        student_page.scroll_to_cell(0)
        student_page.screenshot(artifacts / "browser-student-setup-cell.png")
    after = driver.execute_script(SETUP_CELL_JS, SETUP_INDEX)
    assert not after["editor_shown"], "running the setup cell opened it"
    assert len(after["output_lines"]) == 1, f"the setup cell printed {after['output_lines']}"
    assert all(word in after["output_lines"][0] for word in ("torch", "tutorial_lib", "device")), (
        after["output_lines"]
    )
    shown = after["input_lines"] + after["output_lines"]
    assert 2 <= len(shown) <= 3, f"the setup cell shows {len(shown)} lines: {shown}"


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_setup_cell_is_collapsed(lesson):
    """Every lesson's setup cell, in solutions/ and in the student notebook, opens collapsed.

    The browser test above opens one lesson; this reads the flag it relies on in all of them.
    """
    for path in (course.solution_notebook(lesson), course.NOTEBOOKS / lesson / f"{lesson}.ipynb"):
        cell = notebook.read(path).cells[SETUP_INDEX]
        assert cell.id == "cell-001" and "get_device()" in cell.source, f"{path}: no setup cell"
        hidden = cell.metadata.get("jupyter", {}).get("source_hidden")
        assert hidden is True, f"{path}: the setup cell's code is not collapsed (source_hidden)"
