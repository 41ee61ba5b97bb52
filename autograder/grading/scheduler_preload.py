"""``dask scheduler --preload autograder.grading.scheduler_preload``: the grader's modules,
imported as the scheduler starts.

A Dask scheduler unpickles each task it is sent, and so imports the task's function's module
(``cluster.grade_remote``) with all it imports: nbgrader, torch. Without this, the first
grading run a scheduler sees waits for that, about 4 s of CPU on two cores (measured: the
first run of two 00_welcome submissions took 9.0 s, the next ones 4.2 s). No ``dask_setup``:
the scheduler runs nothing of the grader's, it only needs the names.
"""

import autograder.grading.cluster  # noqa: F401
