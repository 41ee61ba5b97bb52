"""nbgrader preprocessors this course adds to autograding."""

from __future__ import annotations

import re

from nbgrader.preprocessors import DeduplicateIds, NbGraderPreprocessor
from nbgrader.utils import is_grade, is_locked, is_solution


class StderrToStdout(NbGraderPreprocessor):
    """Relabel stderr output of graded cells as stdout, so only a raised error fails a test.

    nbgrader scores a test cell 0 when it wrote anything to stderr. Correct code often does:
    a PyTorch ``UserWarning``, a progress bar, a deprecation notice. The text stays visible
    in the feedback; it just no longer decides the grade.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and is_grade(cell):
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream" and output.get("name") == "stderr":
                    output["name"] = "stdout"
        return cell, resources


HIDDEN_REGION = re.compile(
    r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[ \t]*\n?",
    re.DOTALL | re.MULTILINE,
)
HIDDEN_NOTE = "# (hidden tests ran here; their results are in this cell's output)\n"


class HideHiddenTests(NbGraderPreprocessor):
    """Replace hidden-test regions in feedback with a note: students see results, not the tests."""

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and "### BEGIN HIDDEN TESTS" in cell.source:
            cell.source = HIDDEN_REGION.sub(HIDDEN_NOTE, cell.source)
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    output["traceback"] = [_without_hidden_lines(t) for t in output["traceback"]]
        return cell, resources


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _without_hidden_lines(frame: str) -> str:
    """One traceback entry without the hidden region's lines, which IPython quotes as context."""
    kept, hidden = [], False
    for line in frame.split("\n"):
        plain = ANSI.sub("", line)
        if "### BEGIN HIDDEN TESTS" in plain:
            hidden = True
            kept.append(HIDDEN_NOTE.rstrip("\n"))
        if not hidden:
            kept.append(line)
        if "### END HIDDEN TESTS" in plain:
            hidden = False
    return "\n".join(kept)


class DeduplicateIdsCleanly(DeduplicateIds):
    """nbgrader's DeduplicateIds, but an earlier duplicate loses its nbgrader metadata entirely.

    nbgrader leaves ``"nbgrader": {}`` on the earlier copy of a duplicated cell, and a later
    step then fails with ``KeyError: 'grade_id'``: one copied cell cost the student the
    whole notebook. The last copy keeps the metadata (and is graded, restored from the
    source if it is a test); earlier copies run as ordinary code cells.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        if not (is_grade(cell) or is_solution(cell) or is_locked(cell)):
            return cell, resources
        grade_id = cell.metadata.nbgrader.get("grade_id")
        if grade_id in self.grade_ids:
            self.log.warning("Cell with id '%s' exists multiple times!", grade_id)
            del cell.metadata["nbgrader"]
        else:
            self.grade_ids.add(grade_id)
        return cell, resources
