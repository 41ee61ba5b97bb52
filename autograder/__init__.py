"""The instructor side of the course: release student notebooks, grade them, check the grader.

Submodules:
- ``course``: where lessons live and how they are named.
- ``notebook``: reading exercises (answer and test cells) out of a notebook.
- ``release``: regenerate ``notebooks/`` from ``solutions/`` with nbgrader.
- ``execute``: run a notebook in a fresh kernel.
- ``nbgrader_course``: real nbgrader autograding in a scratch course directory.
- ``mistakes``: catalogues of plausible wrong answers, and the check that each one fails.
- ``hidden``: the hidden checks the graded test cells call.
- ``bench``: the timing table per lesson.
"""
