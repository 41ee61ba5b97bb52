"""The grader's modules form layers: no two of ``autograder/grading/`` import each other.

Read from the source (every ``import``, at module level or inside a function), so the test
costs nothing and catches a cycle that only a lazy import hides.
"""

import ast
from pathlib import Path

import autograder.grading

PACKAGE = "autograder.grading"
FOLDER = Path(autograder.grading.__file__).parent


def _imports(path: Path) -> set[str]:
    """The modules of this package that the file at ``path`` imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE:  # from autograder.grading import sandbox, ...
                found |= {f"{PACKAGE}.{alias.name}" for alias in node.names}
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith(PACKAGE + ".")}
    return found


def _graph() -> dict[str, set[str]]:
    return {f"{PACKAGE}.{p.stem}": _imports(p) for p in FOLDER.glob("*.py")}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle, as the modules on it (found by a depth-first search)."""
    cycles, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycles.append([*path[path.index(module) :], module])
            return
        if module in done:
            return
        for imported in sorted(graph.get(module, ())):
            visit(imported, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])
    return cycles


def test_no_two_grading_modules_import_each_other():
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
