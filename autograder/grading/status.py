"""Every status a (student, assignment) row can have, in one place.

Three families, and what each means for the grade:

- **graded**: the notebook ran and its test cells were scored (perhaps with trouble on the
  way: a cell that timed out, a crash the grader recovered from). The score stands.
- **not gradable**: the student's submission itself cannot be graded (nothing there, not a
  notebook, another lesson's notebook). The score is 0 and the message says why.
- **grader error**: the grader failed (its sandbox, its kernel, a check that broke for a
  reason that is not the answer). No score at all: the gradebook and every export leave
  the student's grade empty, the run retries the submission once and exits non-zero.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    OK = "ok"
    TIMEOUT = "timeout"  # a cell ran past its time limit, or the submission past its budget
    CRASHED = "crashed"  # the kernel died in a cell; it was restarted and the rest graded
    MEMORY = "memory"  # a cell hit the --memory limit
    DISK = "disk"  # a cell filled the sandbox's /tmp (--disk)
    PROCESSES = "processes"  # a cell hit the sandbox's process limit
    OUTPUT = "output-limit"  # too many cells, or too much printed: the excess dropped
    MISSING = "missing"  # no folder, or an empty one
    INVALID = "invalid"  # not a readable notebook
    WRONG_ASSIGNMENT = "wrong-assignment"  # a notebook, but for another lesson
    GRADER_ERROR = "grader-error"  # the grader failed: no score, never a zero

    def __str__(self) -> str:  # "ok", not "Status.OK", in messages and files
        return self.value


GRADED = frozenset(
    {
        Status.OK,
        Status.TIMEOUT,
        Status.CRASHED,
        Status.MEMORY,
        Status.DISK,
        Status.PROCESSES,
        Status.OUTPUT,
    }
)
# The grade command's exit status when some submissions hit a grader error (2: a usage error).
GRADER_ERRORS_EXIT = 3

NOT_GRADABLE = frozenset({Status.MISSING, Status.INVALID, Status.WRONG_ASSIGNMENT})


def has_score(status: str) -> bool:
    """False for a grader error: that row has no score, not a score of 0."""
    return status != Status.GRADER_ERROR


class UsageError(ValueError):
    """The instructor's own mistake: a missing folder, an unknown assignment, a bad option.
    The grade command stops before anyone is graded, with exit status 2."""
