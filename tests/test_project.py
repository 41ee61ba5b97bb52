"""Project wiring: dependency lists agree, the pinned set is the tested one, CI runs the README's command."""

import re
from pathlib import Path

import tomllib
import yaml

import tutorial_lib
from autograder import authoring

ROOT = Path(__file__).resolve().parent.parent


def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def declared() -> set[str]:
    project = pyproject()["project"]
    extras = project["optional-dependencies"]
    return set(project["dependencies"]) | {d for group in extras.values() for d in group}


def conda_pip_requirements() -> set[str]:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return {r for r in pip if not r.startswith("-e")}


def name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def pins() -> dict[str, str]:
    lines = (ROOT / "constraints.txt").read_text().splitlines()
    return {name(line): line.split("==")[1] for line in lines if "==" in line}


def test_environment_yml_and_pyproject_declare_the_same_dependencies():
    assert conda_pip_requirements() == declared()


def test_every_declared_dependency_is_pinned_in_constraints():
    pinned = pins()
    missing = sorted(name(r) for r in declared() if name(r) not in pinned)
    assert not missing, f"add to constraints.txt (make constraints): {missing}"


def test_the_tested_torch_pair_is_pinned():
    assert pins()["torch"] == "2.14.1" and pins()["torchvision"] == "0.29.1"


def test_ranges_stay_open_for_current_releases():
    torch_req = next(r for r in pyproject()["project"]["dependencies"] if name(r) == "torch")
    assert torch_req == "torch>=2.5"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    quick_start = readme.split("## Quick start", 1)[1]
    commands = re.findall(r"^make (\w[\w-]*)", quick_start, flags=re.MULTILINE)
    assert commands[:2] == ["lab", "test"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test\b", ci, flags=re.MULTILINE)


def test_setup_cell_pins_the_course_version():
    assert f'COURSE_VERSION = "{tutorial_lib.__version__}"' in authoring.SETUP_SOURCE
    assert "--no-deps" in authoring.SETUP_SOURCE  # so installing the helpers never touches torch


def test_xdist_groups_stay_on_one_worker(tmp_path):
    """`make test` relies on --dist loadgroup keeping a lesson's tests on one worker, and on
    conftest handing the longer groups out before the one-off tests (a lesson's group here,
    collected after them)."""
    import subprocess
    import sys

    (tmp_path / "conftest.py").write_text((Path(__file__).parent / "conftest.py").read_text())
    (tmp_path / "test_groups.py").write_text(
        "import os, pytest\n"
        "@pytest.mark.parametrize('i', range(2))\n"
        "def test_free(i):\n"
        "    pass\n"
        "@pytest.mark.parametrize('i', range(2))\n"
        "@pytest.mark.xdist_group('11_late')\n"
        "def test_late(i):\n"
        "    pass\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "@pytest.mark.xdist_group('one')\n"
        "def test_a(i):\n"
        "    print('WORKER', os.environ['PYTEST_XDIST_WORKER'])\n"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "--no-loadscope-reorder",  # as make test runs it
            "-v",
            "-s",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    lines = [line for line in run.stdout.splitlines() if line.startswith("[gw")]
    workers = {line.split()[0] for line in lines if "test_a[" in line}
    assert len(workers) == 1, run.stdout[-2000:]
    first = {name: next(i for i, line in enumerate(lines) if name in line) for name in
             ("test_late[", "test_free[")}  # fmt: skip
    assert first["test_late["] < first["test_free["], run.stdout[-2000:]


def test_reading_a_notebook_compiles_no_grammars():
    """constraints.txt pins jsonschema below 4.25, whose format-nongpl extra (wanted by
    jupyter-events) adds rfc3987-syntax: importing that compiles 39 lark grammars, 3 s in
    every process that imports nbformat (each grading worker and nbgrader command)."""
    import subprocess
    import sys

    code = "import sys, nbformat; print('rfc3987_syntax' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == "False", run.stdout + run.stderr
