"""A real Dask cluster on this machine, started as docs/dask.md starts one (its Dask
settings, the scheduler's and the workers' preloads): for ``make bench-grade`` and the tests
of the Dask route. Not part of the grader."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.grading.cluster import CONFIG_DIR


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask(*args: str, log) -> subprocess.Popen:
    """``dask ARGS`` from this interpreter's environment, in a process group of its own."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    env["DASK_CONFIG"] = str(CONFIG_DIR)  # as docs/dask.md starts a cluster
    dask = Path(sys.executable).parent / "dask"
    return subprocess.Popen(
        [str(dask), *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )


def stop(proc: subprocess.Popen) -> None:
    """End a process started by ``_dask`` and everything in its group: politely, then not."""
    for sig, wait_s in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


@contextlib.contextmanager
def local_cluster(workers: int = 2, start_timeout_s: int = 120):
    """A real ``dask scheduler`` and ``workers`` ``dask worker`` processes on this machine,
    started as docs/dask.md starts them (with the preload); yields the address and the
    workers' processes once every worker has joined (warm: the preload ran before it did),
    as a running cluster's are."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    logs = Path(tempfile.mkdtemp(prefix="dask-logs-"))
    procs: list[subprocess.Popen] = []
    try:
        with open(logs / "scheduler.log", "w") as log:
            procs.append(
                _dask(
                    "scheduler",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--no-dashboard",
                    "--preload",
                    "autograder.grading.scheduler_preload",
                    log=log,
                )
            )
        for i in range(workers):
            with open(logs / f"worker{i}.log", "w") as log:
                procs.append(
                    _dask(
                        "worker", address, "--nworkers", "1", "--nthreads", "1",
                        "--no-dashboard", "--host", "127.0.0.1", "--local-directory", str(logs),
                        "--preload", "autograder.grading.cluster", log=log,
                    )
                )  # fmt: skip
        deadline = time.monotonic() + start_timeout_s
        while True:
            try:
                with Client(address, timeout=5, set_as_default=False) as client:
                    client.wait_for_workers(workers, timeout=max(1, deadline - time.monotonic()))
                break
            except OSError:  # the scheduler is not listening yet
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield address, procs[1:]
    finally:
        for proc in reversed(procs):
            stop(proc)
        shutil.rmtree(logs, ignore_errors=True)
