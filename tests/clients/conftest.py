"""Real clients: JupyterLab in Debian's Chromium, and a Colab-like virtual environment."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from autograder import course
from tests.clients.lab import CHROMEDRIVER, CHROMIUM, chromium, lab_server

ARTIFACTS = course.ROOT / "artifacts" / "clients"
INSTALL_BROWSER = course.ROOT / "tools" / "install-system-packages.sh"


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots and logs go (gitignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


def _browser_present() -> bool:
    return os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)


@pytest.fixture(scope="session")
def browser_installed() -> None:
    """Debian's Chromium and ChromeDriver, installed by tools/install-system-packages.sh when missing.

    Skips only when they truly cannot be installed here (not root, no apt-get, no registry).
    """
    if _browser_present():
        return
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("the Python package selenium is not installed (pip install selenium)")
    result = subprocess.run(
        ["bash", str(INSTALL_BROWSER), "chromium", "chromium-driver"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if result.returncode != 0 or not _browser_present():
        tail = (result.stdout + result.stderr).strip().splitlines()[-5:]
        pytest.skip(
            f"Chromium could not be installed ({INSTALL_BROWSER.name} exit "
            f"{result.returncode}): " + " | ".join(tail)
        )


def copy_notebooks(dest: Path) -> Path:
    """A copy of notebooks/ (the repository is never touched by a client)."""
    shutil.copytree(course.NOTEBOOKS, dest, ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    return dest


@pytest.fixture(scope="session")
def lab(browser_installed, artifacts, tmp_path_factory):
    """JupyterLab as ``make lab`` starts it, on a copy of notebooks/, and a browser.

    One server and one browser for every test that opens a student notebook.
    """
    root = tmp_path_factory.mktemp("lab-root")
    copy_notebooks(root / "notebooks")
    with lab_server(root, artifacts / "jupyterlab.log") as server, chromium() as driver:
        yield server, driver, root
