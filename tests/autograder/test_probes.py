"""Probes are sent to the student's kernel: they must hold no answers and no checks."""

import ast

import pytest

from autograder import course

PROBES = sorted((course.ROOT / "autograder" / "probes").glob("*.py"))


@pytest.mark.parametrize("path", PROBES, ids=lambda p: p.name)
def test_a_probe_module_imports_no_hidden_check_and_no_reference(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert not (node.module or "").startswith(
                ("autograder.hidden", "autograder.mistakes", "autograder.right_answers")
            )
            assert not (node.module or "").startswith(
                ("autograder.judge", "autograder.misconceptions", "autograder.check_harness")
            )
        if isinstance(node, ast.Import):
            assert not any(a.name.startswith("autograder.hidden") for a in node.names)
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            assert not node.name.startswith(("_ref", "ref_", "expected")), node.name


def test_every_lesson_topic_has_its_probes():
    for lesson in course.lessons():
        assert (course.ROOT / "autograder" / "probes" / f"{course.topic(lesson)}.py").is_file()
