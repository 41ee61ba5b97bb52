"""The course in JupyterLab, in a real browser: Debian's Chromium driven by Selenium.

A learner's path: open each student notebook, run every cell from the Run menu (going on
past each exercise's error, as a learner does; see ``going_on_past_errors``), and see only
``NotImplementedError``; then a lesson with its answers filled in shows every visible test
passing. The instructor's
nbgrader formgrader loads too. Screenshots go to ``artifacts/clients/``.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import nbformat
import pytest

from autograder import course, notebook
from autograder.execute import errors
from tests.clients.conftest import copy_notebooks
from tests.clients.filled import filled
from tests.clients.lab import NotebookPage, chromium, going_on_past_errors, lab_server

pytestmark = [pytest.mark.clients, pytest.mark.xdist_group("clients-browser")]

LESSONS = course.lessons()
# The lesson whose answers a learner fills in: the first with several exercises.
FILLED_LESSON = "01_tensors" if "01_tensors" in LESSONS else (LESSONS[0] if LESSONS else None)
RUN_TIMEOUT_S = 600


def executed_everywhere(nb) -> list[int]:
    """Code cells that never ran (a Run All that stopped early leaves them blank)."""
    return [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and cell.source.strip() and cell.execution_count is None
    ]


def run_in_page(lab, relpath: str, shot: Path) -> tuple[nbformat.NotebookNode, NotebookPage]:
    """Open a notebook, run all of it, save it; screenshot the first error (or the end)."""
    server, driver, root = lab
    page = NotebookPage(driver, server, relpath)
    going_on_past_errors(root / relpath)
    try:
        page.open()
        page.run_through(root / relpath, timeout=RUN_TIMEOUT_S)
        nb = notebook.read(root / relpath)
        found = errors(nb)
        if found:
            page.scroll_to_cell(max(found[0].index - 1, 0))  # the answer cell above it
            time.sleep(0.5)
        page.screenshot(shot)
    except Exception:
        page.screenshot(shot.with_name(shot.stem + "-failed.png"))
        raise
    finally:
        server.shutdown_kernels()
    return nb, page


@pytest.mark.parametrize("lesson", LESSONS)
def test_student_notebook_in_jupyterlab_fails_only_with_not_implemented(lab, artifacts, lesson):
    started = time.perf_counter()
    relpath = f"notebooks/{lesson}/{lesson}.ipynb"
    nb, page = run_in_page(lab, relpath, artifacts / f"browser-{lesson}-student.png")
    found = errors(nb)
    other = [
        f"cell {e.index}: {e.ename}: {e.evalue}" for e in found if e.ename != "NotImplementedError"
    ]
    assert not other, "errors besides NotImplementedError in JupyterLab:\n" + "\n".join(other)
    assert found, "no NotImplementedError: are the exercises stubbed?"
    assert not executed_everywhere(nb), f"cells never ran: {executed_everywhere(nb)}"
    shown = page.error_names_shown()
    assert shown and set(shown) == {"NotImplementedError"}, f"the page shows: {shown}"
    exercises = notebook.exercises(nb)
    failing_tests = {e.index for e in found}
    untested = [ex.test_id for ex in exercises if ex.test_index not in failing_tests]
    assert not untested, f"test cells that did not stop at NotImplementedError: {untested}"
    print(f"{lesson}: {time.perf_counter() - started:.0f} s in the browser")


@pytest.mark.skipif(FILLED_LESSON is None, reason="no lessons")
def test_filled_answers_pass_the_visible_tests_in_jupyterlab(lab, artifacts):
    root = lab[2]
    relpath = f"filled/{FILLED_LESSON}.ipynb"
    (root / "filled").mkdir(exist_ok=True)
    nbformat.write(filled(FILLED_LESSON), str(root / relpath))
    nb, page = run_in_page(lab, relpath, artifacts / f"browser-{FILLED_LESSON}-filled.png")
    failures = [f"cell {e.index}: {e.ename}: {e.evalue}" for e in errors(nb)]
    assert not failures, "visible tests failed in JupyterLab:\n" + "\n".join(failures)
    assert not executed_everywhere(nb), f"cells never ran: {executed_everywhere(nb)}"
    assert page.error_names_shown() == []
    if page.scroll_to_first_figure():
        time.sleep(0.5)
        page.screenshot(artifacts / f"browser-{FILLED_LESSON}-filled-figure.png")


def test_formgrader_loads(browser_installed, artifacts, tmp_path):
    """The instructor's view (``make lab-instructor``): formgrader listing the lessons."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(course.ROOT / "nbgrader_config.py", root)
    shutil.copytree(course.SOLUTIONS, root / "solutions")
    copy_notebooks(root / "notebooks")
    with (
        lab_server(root, artifacts / "formgrader.log", "lab-instructor") as server,
        chromium() as driver,
    ):
        driver.get(server.url("formgrader"))
        wait = WebDriverWait(driver, 60)
        try:
            wait.until(lambda d: "Manage Assignments" in d.find_element(By.TAG_NAME, "body").text)
            wait.until(lambda d: LESSONS[0] in d.find_element(By.TAG_NAME, "body").text)
        finally:
            driver.save_screenshot(str(artifacts / "browser-formgrader.png"))
        body = driver.find_element(By.TAG_NAME, "body").text
        missing = [lesson for lesson in LESSONS if lesson not in body]
        assert not missing, f"formgrader does not list: {missing}"
        # And from inside JupyterLab: the Nbgrader menu opens the formgrader panel.
        driver.get(server.url("lab?reset"))
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#jp-MainMenu .lm-MenuBar-item"))
        # The instructor tools the student lab turns off are here (test_student_lab.py).
        tabs = driver.execute_script(
            "return [...document.querySelectorAll('.lm-TabBar-tab')].map(e => e.title)"
        )
        assert any("Create Assignment" in t for t in tabs), f"no Create Assignment panel: {tabs}"
        page = NotebookPage(driver, server, "")
        page.command("Nbgrader", "nbgrader:open-formgrader")
        frame = wait.until(
            lambda d: next(
                iter(d.find_elements(By.CSS_SELECTOR, "iframe[src*='formgrader']")), None
            )
        )
        driver.switch_to.frame(frame)
        try:
            wait.until(lambda d: LESSONS[0] in d.find_element(By.TAG_NAME, "body").text)
        finally:
            driver.switch_to.default_content()
            driver.save_screenshot(str(artifacts / "browser-formgrader-in-lab.png"))
