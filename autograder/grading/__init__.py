"""``python -m autograder grade``: grade a whole class's submissions through nbgrader.

- ``submissions``: find and validate ``SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb``.
- ``sandbox``: the bubblewrap command a student's kernel runs under.
- ``provisioner``: jupyter_client's provisioner for that kernel: its folder, argv, control
  group (``cgroups``), keyring, streams and clean-up.
- ``preprocessor``: nbgrader's Execute step, confined, surviving kernel deaths, with each
  hidden check run in the grader's process (``autograder.judge``).
- ``worker``: grade one submission in a scratch nbgrader course.
- ``gradebook``: the class's nbgrader course (OUT) and its gradebook.
- ``run``: the whole class: jobs, resume, gradebook, feedback.
- ``report``: grades.csv, results.json and report.html.
- ``bench``: what grading costs, as a printed table.
"""

import sys

# nbformat validates notebooks with jsonschema, which imports the optional rfc3987_syntax to
# check "iri" formats; that module builds a parser at import, about 1 s of every grading
# process's start-up (measured with python -X importtime). nbformat's schemas use no formats
# at all, so the grader goes without it.
sys.modules.setdefault("rfc3987_syntax", None)
