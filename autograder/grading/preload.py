"""Imported once by the local worker pool's fork server (``run._worker_pool``).

Every grading worker is a fork of that server, so it starts with nbgrader, torch and every
lesson's checks already imported (about 3.5 s of CPU, ``python -X importtime``) and the
feedback templates compiled (0.6 s): a machine pays for them once, not once per worker.
Importing this module is the preparation.
"""

from autograder import course
from autograder.grading.worker import compile_feedback_templates, import_for_grading

import_for_grading(course.lessons())
compile_feedback_templates()
