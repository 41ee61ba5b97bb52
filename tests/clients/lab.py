"""A real JupyterLab on the loopback address, driven through Debian's Chromium with Selenium.

Nothing here downloads a browser or a driver: the paths to Debian's ``chromium`` and
``chromedriver`` are given explicitly, so Selenium Manager never runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from autograder import course
from autograder.execute import kernel_env

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# The flags this machine's closed network needs (no background requests, no sandbox as root).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1440,1000",
]
# A test-only setting, for a deterministic page: every cell in the DOM, also when scrolled
# out of view. Everything else (no news, which nbgrader tools) comes from the course's own
# jupyter/ folders, as `make lab` and `make lab-instructor` give them (``make_lab_config``).
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}
START_TIMEOUT_S = 120


def make_lab_config(target: str) -> list[Path]:
    """The folders ``make <target>`` puts in front of ``JUPYTER_CONFIG_PATH``, from its recipe.

    Read from ``make -n`` (the stamp counted as done, so nothing installs), so the tests
    start JupyterLab exactly as the Makefile does, whatever the Makefile says.
    """
    stamp = Path(os.environ.get("VENV", ".venv")) / ".installed"
    recipe = subprocess.run(
        ["make", "--no-print-directory", "-n", "-o", str(stamp), target],
        cwd=course.ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    found = re.search(r'JUPYTER_CONFIG_PATH="([^"$]*)', recipe)
    if not found:
        raise RuntimeError(f"`make {target}` sets no JUPYTER_CONFIG_PATH:\n{recipe}")
    return [Path(folder) for folder in found.group(1).split(os.pathsep) if folder]


def going_on_past_errors(path: Path) -> None:
    """Tag every code cell of the notebook at ``path`` ``raises-exception``.

    For such a cell JupyterLab sends ``stop_on_error: false``, so one Run All runs every
    cell in order, as a learner gets by running each cell in turn; only the tag differs
    from the notebook under test.
    """
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            tags = cell.metadata.setdefault("tags", [])
            if "raises-exception" not in tags:
                tags.append("raises-exception")
    nbformat.write(nb, str(path))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LabServer:
    """``jupyter lab`` from this environment, on 127.0.0.1 with a random token.

    ``config_path`` is the course's configuration (``make_lab_config``); the rest of the
    Jupyter configuration is a fresh user's (an empty, private ``JUPYTER_CONFIG_DIR``).
    """

    def __init__(self, root_dir: Path, log_path: Path, config_path: list[Path]) -> None:
        self.root_dir = root_dir
        self.log_path = log_path
        self.config_path = config_path
        self.port = free_port()
        self.token = secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self._home = Path(tempfile.mkdtemp(prefix="lab-home-"))
        self._proc: subprocess.Popen | None = None

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def start(self) -> None:
        settings = self._home / "settings"
        for name, value in LAB_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(value))
        env = kernel_env()
        env.pop("MPLBACKEND", None)  # kernels show figures inline, as for a learner
        env.update(
            JUPYTER_CONFIG_DIR=str(self._home / "config"),
            JUPYTER_CONFIG_PATH=os.pathsep.join(str(folder) for folder in self.config_path),
            JUPYTER_RUNTIME_DIR=str(self._home / "runtime"),
            JUPYTERLAB_WORKSPACES_DIR=str(self._home / "workspaces"),
            IPYTHONDIR=str(self._home / "ipython"),
        )
        jupyter = Path(sys.executable).parent / "jupyter"
        args = [
            str(jupyter),
            "lab",
            "--no-browser",
            "--allow-root",
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={self.port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={self.token}",
            f"--ServerApp.root_dir={self.root_dir}",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={self._home / 'workspaces'}",
        ]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("w")
        self._proc = subprocess.Popen(
            args, cwd=self.root_dir, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited early; see {self.log_path}")
            try:
                self.api("api/status")
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.5)
        raise RuntimeError(f"jupyter lab did not answer within {START_TIMEOUT_S} s")

    def api(self, path: str):
        with urllib.request.urlopen(self.url(path), timeout=10) as response:
            return json.load(response)

    def kernels_idle(self) -> bool:
        return all(k.get("execution_state") == "idle" for k in self.api("api/kernels"))

    def shutdown_kernels(self) -> None:
        for kernel in self.api("api/kernels"):
            request = urllib.request.Request(
                self.url(f"api/kernels/{kernel['id']}"), method="DELETE"
            )
            with contextlib.suppress(urllib.error.HTTPError):
                urllib.request.urlopen(request, timeout=30).close()

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        shutil.rmtree(self._home, ignore_errors=True)


@contextmanager
def lab_server(root_dir: Path, log_path: Path, target: str = "lab") -> Iterator[LabServer]:
    """A JupyterLab configured as ``make <target>`` configures it."""
    server = LabServer(root_dir, log_path, make_lab_config(target))
    try:
        server.start()
        yield server
    finally:
        server.stop()


@contextmanager
def chromium() -> Iterator:
    """A headless Debian Chromium under Selenium, with a fresh profile."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # belt and braces: Selenium Manager stays off
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# --- driving a notebook page ---------------------------------------------------------------

# Only the notebook in the visible tab.
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
SCOPE = f"const CELLS = '{PANEL} .jp-Cell';\n"

BUSY_JS = (
    SCOPE
    + """
const prompts = [...document.querySelectorAll(CELLS + ' .jp-InputPrompt')];
return prompts.some(p => p.textContent.includes('*'));
"""
)

ERRORS_SHOWN_JS = (
    SCOPE
    + """
const shown = document.querySelectorAll(
  CELLS + ' .jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]');
const names = [];
for (const out of shown) {
  const match = out.textContent.match(/^\\s*(\\w+(Error|Exception|Interrupt|Exit))\\b/m);
  if (match && out.textContent.includes('Traceback')) names.push(match[1]);
}
return names;
"""
)


class NotebookPage:
    """One notebook open in JupyterLab's notebook panel."""

    def __init__(self, driver, server: LabServer, relpath: str) -> None:
        self.driver = driver
        self.server = server
        self.relpath = relpath

    def open(self, timeout: float = 120) -> None:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec
        from selenium.webdriver.support.ui import WebDriverWait

        # ?reset: a clean workspace, so only this notebook is open.
        self.driver.get(self.server.url(f"lab/tree/{self.relpath}?reset"))
        wait = WebDriverWait(self.driver, timeout)
        wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, f"{PANEL} .jp-Cell")))
        # The kernel has started once the server reports it idle.
        wait.until(lambda d: self._kernel_ready())

    def _kernel_ready(self) -> bool:
        try:
            kernels = self.server.api("api/kernels")
        except OSError:
            return False
        return bool(kernels) and all(k.get("execution_state") == "idle" for k in kernels)

    def command(self, menu: str, command_id: str, tries: int = 3) -> None:
        """Click a main-menu item, as a person would: ``Run`` then the item for ``command_id``."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        selector = f'.lm-Menu-item[data-command="{command_id}"]'
        seen: list[str] = []
        for _ in range(tries):
            self.driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)  # close menus
            items = self.driver.find_elements(By.CSS_SELECTOR, "#jp-MainMenu .lm-MenuBar-item")
            next(i for i in items if i.text.strip() == menu).click()
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                entries = [
                    e
                    for e in self.driver.find_elements(By.CSS_SELECTOR, selector)
                    if e.is_displayed()
                ]
                if entries:
                    entries[0].click()
                    return
                time.sleep(0.2)
            seen = self.driver.execute_script(
                "return [...document.querySelectorAll('.lm-Menu-item')].map(e => e.dataset.command)"
            )
        raise RuntimeError(f"no {command_id!r} in the {menu} menu; it shows {seen}")

    def wait_idle(self, timeout: float, poll_s: float = 0.3) -> None:
        """Wait until no cell shows ``[*]`` and the kernel has been idle for three polls."""
        deadline = time.monotonic() + timeout
        calm = 0
        time.sleep(poll_s)
        while calm < 3:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.relpath}: still running after {timeout:.0f} s")
            busy = self.driver.execute_script(BUSY_JS) or not self.server.kernels_idle()
            calm = 0 if busy else calm + 1
            time.sleep(poll_s)

    def save(self, path: Path, timeout: float = 30) -> None:
        """File > Save Notebook, then wait until the file on disk has changed."""
        before = path.stat().st_mtime_ns
        self.command("File", "docmanager:save")
        deadline = time.monotonic() + timeout
        while path.stat().st_mtime_ns == before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path.name} was not saved within {timeout:.0f} s")
            time.sleep(0.2)
        time.sleep(0.2)  # the contents API writes atomically, but let it settle

    def run_through(self, path: Path, timeout: float) -> None:
        """Run All once, wait until the kernel is idle, save; outputs are read from the file.

        The notebook's cells must be tagged by ``going_on_past_errors`` first: with plain
        cells, Run All stops at the first error (ipykernel aborts the queued cells), and a
        driver that then runs the rest in rounds meets a race. The browser sends a Run All's
        requests over a second or more on a busy machine; those arriving after the abort run
        anyway, out of order (seen here: a cell then used a variable set far below it).
        """
        import nbformat

        self.command("Run", "runmenu:run-all")
        self.wait_idle(timeout)
        self.save(path)
        nb = nbformat.read(str(path), as_version=4)
        order = [c.execution_count for c in nb.cells if c.cell_type == "code" and c.execution_count]
        if order != sorted(order):
            raise RuntimeError(f"{self.relpath}: cells ran out of order: {order}")

    def error_names_shown(self) -> list[str]:
        """The exception names in the tracebacks the page shows."""
        return self.driver.execute_script(ERRORS_SHOWN_JS)

    def scroll_to_first_figure(self) -> bool:
        """Scroll so that the first figure output is in view; False when there is none."""
        return self.driver.execute_script(
            SCOPE + "const img = document.querySelector(CELLS + ' .jp-RenderedImage');"
            "if (!img) return false;"
            "img.closest('.jp-Cell').scrollIntoView({block: 'start'}); return true;"
        )

    def scroll_to_cell(self, index: int) -> None:
        self.driver.execute_script(
            SCOPE + "document.querySelectorAll(CELLS)[arguments[0]]"
            ".scrollIntoView({block: 'start'});",
            index,
        )

    def screenshot(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))
