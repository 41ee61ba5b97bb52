# The course's commands. CI runs `make test` (see .ci/run); everything installs itself.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Two test workers on a 2-core machine: each kernel gets one math thread, or they thrash.
JOBS ?= 2
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
export PYDEVD_DISABLE_FILE_VALIDATION := 1

.DEFAULT_GOAL := help
.PHONY: help install lab lab-instructor test test-fast lint format release release-check bench verify constraints clean grade-demo bench-grade test-clients

help: ## Show the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	@tools/install-system-packages.sh bubblewrap chromium chromium-driver
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e ".[dev,deploy,grader]"
	@# The instructor side (autograder/) is not in the wheel students get: put this checkout
	@# on .venv's path so nbgrader, its kernels and the tests import it from here.
	$(PY) -c "import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()['purelib'], 'pytorch_course_checkout.pth').write_text('$(CURDIR)\n')"
	@touch $(STAMP)

install: $(STAMP) ## Create or update .venv with the pinned, tested packages

# The lab's settings are Jupyter's own configuration, committed in jupyter/ and put in front
# of JUPYTER_CONFIG_PATH, so a person's ~/.jupyter (theme, shortcuts) still applies:
# jupyter/common silences JupyterLab's news and update checks (no "get notified about
# official Jupyter news?" pop-up); jupyter/student also turns nbgrader's instructor tools off
# and keeps its Validate button (jupyter/README.md). $(1): folders put before common/.
# Jupyter refuses to run as root (containers, CI) unless told it is on purpose.
LAB_CONFIG_PATH = $(1)$(CURDIR)/jupyter/common$${JUPYTER_CONFIG_PATH:+:$$JUPYTER_CONFIG_PATH}
LAB_AS_ROOT = $$([ "$$(id -u)" = 0 ] && echo --allow-root)

lab: $(STAMP) ## Open the course (notebooks/) in JupyterLab as a student sees it
	JUPYTER_CONFIG_PATH="$(call LAB_CONFIG_PATH,$(CURDIR)/jupyter/student:)" \
	  $(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks $(LAB_AS_ROOT)

lab-instructor: $(STAMP) ## JupyterLab on the whole course with nbgrader's tools (formgrader)
	JUPYTER_CONFIG_PATH="$(call LAB_CONFIG_PATH)" \
	  $(VENV)/bin/jupyter lab --ServerApp.root_dir=. $(LAB_AS_ROOT)

test: $(STAMP) lint release-check ## Run every check CI runs (lint, release check, all tests)
	$(PY) -m pytest -n $(JOBS) --dist loadgroup --no-loadscope-reorder -m "not clients and not alone" --durations=15
	@# Timing-sensitive tests (the CPU contest's short per-cell limit) with the machine to themselves.
	$(PY) -m pytest -m alone --durations=5
	@# The client tests run after everything else, on their own: the Colab-like venv's
	@# install in one worker, JupyterLab in Chromium in the other (one xdist group each).
	$(PY) -m pytest -n $(JOBS) --dist loadgroup -m clients tests/clients --durations=10

test-fast: $(STAMP) ## Tests that run no notebook and no client (seconds)
	$(PY) -m pytest -m "not lesson and not clients"

test-clients: $(STAMP) ## Only the real-client tests: JupyterLab in Chromium, a Colab-like venv
	$(PY) -m pytest -n $(JOBS) --dist loadgroup -m clients tests/clients --durations=10

lint: $(STAMP) ## ruff lint and format check of all Python (notebooks excluded)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(STAMP) ## Apply ruff's formatting and safe fixes
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

release: $(STAMP) ## Regenerate notebooks/ from solutions/ (and strip solution outputs)
	$(PY) -m autograder release

release-check: $(STAMP) ## Fail if notebooks/ is stale or solutions/ keep outputs
	$(PY) -m autograder release --check

bench: $(STAMP) ## Time every lesson (solution and student versions) and print a table
	$(PY) -m autograder bench

verify: $(STAMP) ## Check one lesson's mistakes and nbgrader scores: make verify LESSON=01_tensors
	$(PY) -m autograder verify $(LESSON)

constraints: ## Re-pin constraints.txt from the current .venv (after changing dependencies)
	{ sed -n '1,2p' constraints.txt; $(VENV)/bin/pip freeze --exclude-editable | grep -v '^-e' | grep -vi '^pytorch-course'; } > constraints.txt.new
	mv constraints.txt.new constraints.txt

clean: ## Remove caches and build leftovers, the Colab-like venv included (keeps .venv)
	rm -rf .pytest_cache .ruff_cache build dist *.egg-info artifacts

grade-demo: $(STAMP) ## Grade bundled sample submissions (right, partial, broken, blank)
	$(PY) -m autograder grade-demo

bench-grade: $(STAMP) ## Time the grade command: overhead per submission, --jobs 2 speed-up
	$(PY) -m autograder bench-grade
