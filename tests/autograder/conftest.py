"""A tiny probe lesson in a scratch course, for testing release and grading rules quickly."""

import pytest

from autograder import authoring, course

PROBE = "99_probe"


def probe_cells():
    return [
        authoring.md("# Probe"),
        authoring.code("import sys\nimport warnings"),
        authoring.answer(
            "noisy_double",
            "def noisy_double(x):\n"
            "    ### BEGIN SOLUTION\n"
            "    warnings.warn('correct, but noisy')  # a UserWarning goes to stderr\n"
            "    print('progress...', file=sys.stderr)\n"
            "    return 2 * x\n"
            "    ### END SOLUTION",
        ),
        authoring.tests(
            "test_noisy_double",
            "assert noisy_double(2) == 4\n"
            "### BEGIN HIDDEN TESTS\nassert noisy_double(-1) == -2  # SECRET-PROBE-CHECK\n"
            "### END HIDDEN TESTS",
            points=2,
        ),
        authoring.answer(
            "triple",
            "def triple(x):\n    ### BEGIN SOLUTION\n    return 3 * x\n    ### END SOLUTION",
        ),
        authoring.tests("test_triple", "assert triple(2) == 6", points=1),
    ]


@pytest.fixture
def probe_course(tmp_path, monkeypatch):
    """solutions/ and notebooks/ in tmp_path holding only the probe lesson."""
    solutions, notebooks = tmp_path / "solutions", tmp_path / "notebooks"
    path = solutions / PROBE / f"{PROBE}.ipynb"
    path.parent.mkdir(parents=True)
    import nbformat

    nbformat.write(authoring.build(probe_cells()), str(path))
    monkeypatch.setattr(course, "SOLUTIONS", solutions)
    monkeypatch.setattr(course, "NOTEBOOKS", notebooks)
    return tmp_path
