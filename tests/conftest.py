"""Shared fixtures: where the public test data lives, and how its absence is handled (the data-path
helpers themselves are in ``tests/helpers.py``, which test modules import; no test module imports this one).

The data directory is ``$COPTER_DATA`` if set, else ``../shared/data`` relative to the repository root
(computed from this file's location, not the working directory). Tests that need it skip with a reason
when it is absent, unless ``COPTER_REQUIRE_DATA=1`` (set by ``.ci/run``) turns the skip into a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import data_dir, require_data


def pytest_configure(config):
    """No command a test runs in a subprocess reaches a long-running worker (``copter worker start``) by
    accident, the user's or a test's: ``COPTER_WORKER=off`` for every process started from here, and a
    worker folder that does not exist. tests/test_worker.py sets its own for the commands it routes."""
    import tempfile

    os.environ["COPTER_WORKER"] = "off"
    os.environ["COPTER_WORKER_DIR"] = os.path.join(tempfile.gettempdir(), f"copter-tests-no-worker-{os.getpid()}")


def pytest_sessionstart(session):
    """Under COPTER_REQUIRE_DATA=1 a missing data folder fails the run at once: tests parametrized from
    a manifest would otherwise collect nothing and silently pass."""
    if os.environ.get("COPTER_REQUIRE_DATA") == "1" and not (data_dir() / "mps" / "MANIFEST.tsv").exists():
        pytest.exit(f"COPTER_REQUIRE_DATA=1 but the shared test data is missing at {data_dir()}", returncode=1)


@pytest.fixture(scope="session", autouse=True)
def kernels_prepared(request) -> dict:
    """The solver kernels are prepared once, before the first test: without it (a fresh clone, ``pip install
    '.[test]'``, no ``copter prepare``: no compile stamp for this tree) the first test whose command solves ran
    the whole warm-up inside itself, and a test that interrupts or kills a step at a fixed moment
    (tests/test_sigint.py, the crash tests) could land in the warm-up instead of the round.

    ``copter prepare`` runs in a child process (numba's threading layer stays out of the test process, which
    forks worker processes) and only when the stamp is not current (``solver.prepare.is_prepared``: stat
    calls, no numba import), so an already prepared tree costs milliseconds. The stamp can still go stale
    during the session (a test compiling a kernel for a new signature rewrites its cache index); the warm-up
    then runs again inside a later command, which is why it ignores fault injection and an interrupt there
    names the user's state (``solver.prepare``, ``formats.undo.scratch``).

    Returns:
        {"ran": whether ``copter prepare`` ran, "seconds": its wall time}.
    """
    import subprocess
    import sys
    import time

    from solver.prepare import is_prepared

    if is_prepared():
        return {"ran": False, "seconds": 0.0}
    t0 = time.perf_counter()
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for k in ("COPTER_FAULT_INJECT", "COPTER_FAULT_ERRNO", "COPTER_FAULT_TRACE"):
        env.pop(k, None)
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "prepare"], env=env, cwd=root,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.exit(f"copter prepare failed before the tests (exit {proc.returncode}): {proc.stderr[-2000:]}",
                    returncode=1)
    return {"ran": True, "seconds": time.perf_counter() - t0}


@pytest.fixture
def shared_data() -> Path:
    """The shared data directory (skips/fails when absent, see module doc)."""
    return require_data()


@pytest.fixture(scope="session")
def ray_cluster():
    """One local Ray cluster (2 CPUs) for every Ray test of the session (``ray.init`` costs seconds); a test
    module that uses it skips first when Ray is not importable (see ``tests/test_partition_ray.py``)."""
    import ray

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch):
    """No test touches ./copter-state or a user's $COPTER_STATE."""
    monkeypatch.delenv("COPTER_STATE", raising=False)
    monkeypatch.chdir(tmp_path)
