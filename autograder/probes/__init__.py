"""Probes, one module per lesson topic: the half of a hidden check that touches the answer.

A probe is ``probe_<name>(answer, case) -> data``. It builds the inputs the case describes
(seeded, so the grader can build identical ones), runs the learner's function or class,
and returns what it saw: return values, tensors, flags, a model's weights afterwards.
Probes are sent to the learner's kernel when the grader runs them, so they must hold no
reference answers and no expected values; those stay in ``autograder/hidden/<topic>.py``.
See ``autograder/boundary.py``.
"""
