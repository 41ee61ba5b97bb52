"""Routes in and out of the grader for the places instructors already grade.

- :mod:`~autograder.platforms.lms`: a Canvas or Moodle submissions download in, their
  gradebook (Canvas's CSV, Moodle's offline grading worksheet) and feedback files out;
- :mod:`~autograder.platforms.gradescope`: the autograder zip (``setup.sh``,
  ``run_autograder``) and the ``results.json`` Gradescope reads;
- :mod:`~autograder.platforms.prairielearn`: the external grader's entry point, from
  ``/grade/student`` to ``/grade/results/results.json``.

Each route stages the notebooks in nbgrader's layout and calls the same
:func:`autograder.grading.run.grade`, so a notebook scores the same whichever way it came.
"""
