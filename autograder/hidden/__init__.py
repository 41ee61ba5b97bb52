"""Hidden checks, one module per lesson topic, one ``check_<name>(student_obj)`` per exercise.

They use seeded random inputs of several sizes and edge cases, run on
``tutorial_lib.get_device()``, compare with a reference or a property within a tolerance,
and raise ``AssertionError`` (``CheckError``) with a message a learner can act on. They
touch the student's object only by calling it and reading plain results, and they never
write to stderr.
"""

import os

# Importing Hypothesis runs every installed package's "hypothesis" entry point; in the
# course's environment that is trio's, which imports pytest: 0.16 s of each kernel's first
# hidden check (measured with python -X importtime). The contracts use no plugin.
os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
