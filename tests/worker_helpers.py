"""The long-running worker's test harness (tests/test_worker.py, tests/test_worker_limits.py): a worker in its own
private folder and how to run commands through it or in-process, in real processes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import kill_own_workers, small_lp

REPO = Path(__file__).resolve().parents[1]
ROUTED = "running in the worker"


def worker_env(folder: str, **extra) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=folder, COPTER_WORKER_DEBUG="1", **extra)
    env.pop("COPTER_WORKER", None)  # tests/conftest.py turns the worker off for everything else
    for k in ("COPTER_FAULT_INJECT", "COPTER_FAULT_ERRNO", "COPTER_STATE"):
        env.pop(k, None)
    return env


class Worker:
    """A worker in its own folder, and how to run commands through it (or in-process)."""

    def __init__(self, folder: str):
        self.folder, self.env, self.pids = folder, worker_env(folder), set()

    def cli(self, *args, off: bool = False, stdin=None, env: dict | None = None, executable: str | None = None,
            cwd: Path | None = None, timeout: float = 600) -> tuple[int, str, str, bool]:
        """(exit code, stdout, stderr without the worker's debug lines, whether the worker ran it)."""
        e = dict(self.env, **(env or {}))
        if off:
            e["COPTER_WORKER"] = "off"
        kw = {"input": stdin} if isinstance(stdin, bytes) else {"stdin": stdin or subprocess.DEVNULL}
        proc = subprocess.run([executable or sys.executable, "-m", "copter_cli", *map(str, args)], env=e, cwd=cwd,
                              capture_output=True, timeout=timeout, **kw)
        out, err = proc.stdout.decode(), proc.stderr.decode()
        lines = err.splitlines(keepends=True)
        debug = [ln for ln in lines if ln.startswith("copter worker: ")]
        return (proc.returncode, out, "".join(ln for ln in lines if ln not in debug),
                any(ROUTED in ln for ln in debug))

    def start(self, *extra) -> dict:
        code, out, err, _ = self.cli("worker", "start", "--json", *extra)
        assert code == 0, (out, err)
        res = json.loads(out)
        self.pids.add(res["pid"])
        return res

    def status(self) -> dict:
        code, out, err, _ = self.cli("worker", "status", "--json")
        assert code == 0, err
        return json.loads(out)

    def ensure(self) -> None:
        """A running worker whose sources are the current ones (else start one)."""
        st = self.status()
        if not st["running"] or st["stale"]:
            self.start()

    def shutdown(self) -> None:
        """Stop it; kill a worker this test started that is still alive (checked by its command line, never a
        reused pid); remove the folder."""
        try:
            self.cli("worker", "stop", "--timeout", "30", timeout=120)
        finally:
            kill_own_workers(self.pids)
            shutil.rmtree(self.folder, ignore_errors=True)


def lp_stream(folder: Path) -> tuple[Path, Path]:
    base, delta = folder / "base.parquet", folder / "d1.parquet"
    write_problem(small_lp(), base)
    write_delta(Delta.concat([Delta.vars(["x3", "xn"], cost=[5.0, 1.0], upper=[None, 2.0]),
                              Delta.coefs(var=["xn"], con=["cap1"], value=[2.0])], base_round=0), delta)
    return base, delta


def init_state(worker: Worker, base: Path, st: Path) -> None:
    code, out, err, _ = worker.cli("init", base, "--state", st, "--json", off=True)
    assert code == 0, err




@contextlib.contextmanager
def running_worker(prefix: str):
    """A started :class:`Worker` in a new private folder under /tmp (a Unix socket path holds 107 bytes), shut
    down afterwards (killed if it does not stop)."""
    w = Worker(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    try:
        w.start()
        yield w
    finally:
        w.shutdown()
