"""Gradescope's setup.sh and PrairieLearn's Dockerfile install what grading imports.

Proven from an empty venv (no ``--system-site-packages``), in two steps, because installing
for real would unpack torch and its CUDA libraries (gigabytes, minutes):

1. **Resolution.** The autograder zip's own ``setup.sh`` runs its pip line into an empty
   venv with ``--dry-run --report``: pip resolves the course's extras against
   ``constraints.txt`` from nothing, as on a fresh Gradescope image.
2. **Imports.** A second empty venv gets exactly the packages pip resolved, each linked
   from ``.venv`` where the very same version is installed (nothing to download or unpack),
   and the course unpacked from the zip on its path as ``setup.sh`` puts it. Its Python
   imports every module the grading routes import, at start or later. A module that no
   extra brings (the ``nbformat`` that was missing) fails there.
"""

import ast
import importlib.metadata
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder import course
from autograder.platforms import gradescope, prairielearn

pytestmark = [
    # Slow (about 40 s, mostly pip resolving): kept out of `make test-fast`, and on a worker
    # of its own in `make test`, beside the lesson tests.
    pytest.mark.lesson,
    pytest.mark.xdist_group("install"),
]
LESSON = "00_welcome"
EXTRAS = ".[deploy,grader]"
# What grading loads, as modules of this checkout. Left out: the Dask route (--scheduler,
# distributed) and the benchmarks (`bench`, `bench-grade`: one module, and bench-grade
# times the Dask route); both need the dev extra.
ENTRY_POINTS = [
    "autograder.__main__",
    "autograder.platforms.gradescope",
    "autograder.platforms.prairielearn",
    "autograder.grading.worker",  # what each spawned grading worker imports
]
NOT_GRADING = {
    "autograder.grading.cluster",
    "autograder.grading.scheduler_preload",
    "autograder.bench",
    "autograder.dask_local",
}


def test_setup_sh_the_dockerfile_and_make_install_name_the_same_extras():
    assert f'-e "{EXTRAS}"' in gradescope.SETUP_SH
    assert f'-e "{EXTRAS}"' in prairielearn.DOCKERFILE
    makefile = (course.ROOT / "Makefile").read_text()
    assert '-e ".[dev,deploy,grader]"' in makefile


def imported_modules(entry_points: list[str]) -> set[str]:
    """Every module the entry points import, directly or through the course's own modules,
    at the top or inside a function (``from a.b import c``: ``a.b``, and ``a.b.c`` when it
    is one of the course's modules)."""
    found: set[str] = set()
    todo = list(entry_points)
    while todo:
        name = todo.pop()
        path = _own_module(name)
        if name in found or name in NOT_GRADING or path is None:
            continue
        found.add(name)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                named, maybe = [a.name for a in node.names], []
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                named, maybe = [node.module], [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            for module in named + maybe:
                top = module.split(".")[0]
                if top in ("autograder", "tutorial_lib"):
                    todo.append(module)
                elif module in named and top not in sys.stdlib_module_names | {"__future__"}:
                    found.add(module)
    return found


def _own_module(name: str) -> Path | None:
    """The course's source file of module ``name`` (None: not one of the course's modules)."""
    if name.split(".")[0] not in ("autograder", "tutorial_lib"):
        return None
    base = course.ROOT / name.replace(".", "/")
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def _site_packages(venv: Path) -> Path:
    found = list((venv / "lib").glob("python*/site-packages"))
    assert len(found) == 1, found
    return found[0]


def _link_installed(packages: list[dict], venv: Path) -> None:
    """Link each resolved package's files from .venv into ``venv``; the versions must match."""
    site = _site_packages(venv)
    stale = []
    for item in packages:
        name, version = item["metadata"]["name"], item["metadata"]["version"]
        if name == "pytorch-course":
            continue  # the course itself: on the path through the .pth, as setup.sh does
        try:
            installed = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            stale.append(f"{name} (not in .venv)")
            continue
        if installed.version != version:
            stale.append(f"{name} {installed.version} in .venv, {version} resolved")
            continue
        files = installed.files or []
        for top in {Path(f).parts[0] for f in files if not str(f).startswith("..")}:
            source = Path(installed.locate_file(top))
            if source.exists() and not (site / top).exists():
                (site / top).symlink_to(source)
        # Data files outside site-packages, one by one (nbconvert's templates in share/).
        for f in files:
            source = Path(os.path.normpath(installed.locate_file(f)))
            if str(f).startswith("..") and source.is_relative_to(sys.prefix):
                relative = source.relative_to(sys.prefix)
                if relative.parts[0] != "bin" and source.exists():
                    target = venv / relative
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if not target.exists():
                        target.symlink_to(source)
    assert not stale, f".venv does not hold what constraints.txt pins (make install): {stale}"


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gradescope-source")
    with zipfile.ZipFile(gradescope.build_zip(LESSON, folder / "zip")) as z:
        z.extractall(folder / "source")
    return folder / "source"


@pytest.fixture(scope="module")
def resolved(unpacked, tmp_path_factory) -> list[dict]:
    """What setup.sh's pip line installs into an empty venv: pip's report, ``install``."""
    folder = tmp_path_factory.mktemp("empty-venv")
    report = folder / "report.json"
    done = subprocess.run(
        ["bash", str(unpacked / "setup.sh")],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ
        | {
            "SKIP_APT": "1",
            "AUTOGRADER_VENV": str(folder / "venv"),  # setup.sh creates it: empty
            "PIP_ARGS": f"--dry-run --quiet --report {report}",
        },
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(report.read_text())["install"]


def test_setup_sh_resolves_the_grader_into_an_empty_venv(resolved):
    names = {item["metadata"]["name"].lower().replace("_", "-") for item in resolved}
    for needed in ("pytorch-course", "nbgrader", "nbformat", "nbclient", "ipykernel", "torch"):
        assert needed in names, sorted(names)


def test_the_resolved_packages_import_every_grading_module(resolved, unpacked, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    _link_installed(resolved, venv)
    site = _site_packages(venv)
    (site / "pytorch_course_checkout.pth").write_text(f"{unpacked}\n")  # as setup.sh
    modules = sorted(imported_modules(ENTRY_POINTS))
    assert {"nbformat", "nbgrader", "nbclient", "autograder.grading.run"} <= set(modules)
    script = (
        "import importlib, importlib.util, json, sys\n"
        "for name in json.loads(sys.argv[1]):\n"
        "    importlib.import_module(name)\n"
        "assert importlib.util.find_spec('ipykernel_launcher'), 'no kernel to start'\n"
        "print(importlib.import_module('autograder').__file__)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c", script, json.dumps(modules)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == str(unpacked / "autograder" / "__init__.py")
