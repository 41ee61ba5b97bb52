import pytest

from autograder import authoring, notebook


def lesson_cells():
    return [
        authoring.md("# Title"),
        authoring.answer(
            "f", "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION"
        ),
        authoring.md("between"),
        authoring.tests("test_f", "assert f() == 1", points=2),
        authoring.answer(
            "g", "def g():\n    ### BEGIN SOLUTION\n    return 2\n    ### END SOLUTION"
        ),
        authoring.tests("test_g", "assert g() == 2"),
    ]


def test_exercises_pair_each_answer_with_the_next_test_cell():
    nb = authoring.build(lesson_cells())
    found = notebook.exercises(nb)
    assert [(e.grade_id, e.test_id, e.answer_index, e.test_index, e.points) for e in found] == [
        ("f", "test_f", 1, 3, 2.0),
        ("g", "test_g", 4, 5, 1.0),
    ]


def test_an_answer_without_its_test_cell_is_an_error():
    cells = lesson_cells()
    del cells[3]
    with pytest.raises(ValueError, match="'f' is not followed by its test cell"):
        notebook.exercises(authoring.build(cells))


def test_strip_outputs_keeps_nbgrader_metadata():
    nb = authoring.build(lesson_cells())
    nb.cells[1].outputs = [{"output_type": "stream", "name": "stdout", "text": "hi"}]
    nb.cells[1].execution_count = 3
    assert notebook.has_outputs(nb)
    assert notebook.strip_outputs(nb)
    assert not notebook.has_outputs(nb)
    assert nb.cells[1].metadata["nbgrader"]["grade_id"] == "f"


def test_authoring_refuses_cells_the_grader_could_not_use():
    with pytest.raises(ValueError, match="BEGIN SOLUTION"):
        authoring.answer("f", "def f(): pass")
    with pytest.raises(ValueError, match="test_"):
        authoring.tests("f", "assert True")
