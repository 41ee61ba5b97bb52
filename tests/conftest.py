"""Shared test settings: a non-interactive plotting back-end and one torch thread."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OMP_NUM_THREADS", "1")
