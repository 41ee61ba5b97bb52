"""The nbgrader settings of this course, shared by ``nbgrader_config.py`` and the grader."""

from __future__ import annotations

# Seconds one cell may run while grading. The slowest solution cells (10_scaling's two
# DDP processes, 11_gpt's training) take well under 30 s on an idle 2-core CPU with one
# thread (`make bench`); four times that leaves room for a slower answer on a busy
# machine, and an infinite loop still costs only two minutes.
CELL_TIMEOUT_S = 120
# How every kernel that runs a notebook for the course's tools ends (nbgrader's Execute, the
# grade command, the mistake runner, make bench): at once. Its state is thrown away, and a
# graceful end waits while Python tears torch down, 1.3 s and more of CPU that a parallel
# job could use; nbclient gives up and signals it after 2.5 s anyway. A learner never waits
# for it, so timings that include it say nothing about a lesson.
KERNEL_SHUTDOWN = "immediate"
# A lesson runs in at most 90 s on a 2-core CPU (CONTRIBUTING.md; the slowest measures 13 s);
# the grade command gives a whole submission five times that before it is stopped.
LESSON_MAX_S = 90
SUBMISSION_TIMEOUT_S = 5 * LESSON_MAX_S


def configure(c) -> None:
    """Apply the course's grading settings to an nbgrader/traitlets config object ``c``."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        ClearOutput,
        Execute,
        GetGrades,
        LimitOutput,
        OverwriteCells,
        OverwriteKernelspec,
        SaveAutoGrades,
    )

    from autograder.nbgrader_ext import DeduplicateIdsCleanly, HideHiddenTests, StderrToStdout

    c.CourseDirectory.course_id = "pytorch-course"
    c.Execute.timeout = CELL_TIMEOUT_S
    c.Execute.interrupt_on_timeout = True
    c.Execute.shutdown_kernel = KERNEL_SHUTDOWN
    # A student who deleted a test cell still gets it back, and graded.
    c.OverwriteCells.add_missing_cells = True
    # nbgrader's own lists, with DeduplicateIdsCleanly for DeduplicateIds and
    # StderrToStdout where IgnorePattern was.
    c.Autograde.sanitize_preprocessors = [
        ClearOutput,
        DeduplicateIdsCleanly,
        OverwriteKernelspec,
        OverwriteCells,
        CheckCellMetadata,
    ]
    c.Autograde.autograde_preprocessors = [
        Execute,
        StderrToStdout,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveAutoGrades,
        AssignLatePenalties,
        CheckCellMetadata,
    ]
    # Feedback shows each test's result and message, never the hidden tests' source.
    c.GenerateFeedback.preprocessors = [GetGrades, HideHiddenTests, CSSHTMLHeaderPreprocessor]
