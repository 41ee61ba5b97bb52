"""``python -m autograder grade``: grade a whole class's submissions through nbgrader.

- ``submissions``: find and validate ``SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb``.
- ``sandbox``: the bubblewrap command a student's kernel runs under.
- ``execute``: nbgrader's Execute step, sandboxed, surviving kernel deaths, hidden checks
  handed to the kernel only while a test cell runs.
- ``worker``: grade one submission in a scratch nbgrader course.
- ``run``: the whole class: jobs, resume, gradebook, feedback.
- ``report``: grades.csv, results.json and report.html.
"""
