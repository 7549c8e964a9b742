"""An interrupted ``copter demo`` removes its temporary folder and says so. It used to leave
``$TMPDIR/copter-demo-*`` (base, deltas and a whole state) behind on every SIGTERM, SIGINT or SIGHUP outside a
save, and its error said "round 17 is stored and current" of a state nobody could find. With ``--dir`` the
files stay, and the error names the stored round as before."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals")


def demo(tmp_path, *args, fault: str | None = None) -> subprocess.Popen:
    """``python -m copter_cli demo ARGS`` (progress lines on stderr) with ``TMPDIR`` = ``tmp_path / "tmp"`` (the console script's
    signal handlers; no worker)."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp_path / "tmp"),
               COPTER_WORKER_DIR="/nonexistent-copter-worker")
    env.pop("COPTER_FAULT_INJECT", None)
    if fault:
        env["COPTER_FAULT_INJECT"] = fault
    return subprocess.Popen([sys.executable, "-m", "copter_cli", "demo", "--domain", "te", "--scale", "12", *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def after_round(p: subprocess.Popen, n: int, sig: int) -> tuple[str, str]:
    """Send ``sig`` once stderr shows round ``n``'s progress line; the rest of stdout and stderr."""
    seen = []
    for line in p.stderr:
        seen.append(line)
        if line.lstrip().startswith(f"round {n}:"):
            p.send_signal(sig)
            break
    out, err = p.communicate(timeout=300)
    return out, "".join(seen) + err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_demo_removes_its_temporary_folder(tmp_path, sig):
    p = demo(tmp_path, "--rounds", "400")
    out, err = after_round(p, 2, sig)
    assert p.returncode == 128 + sig, (p.returncode, err[-2000:])
    error = err.strip().splitlines()[-1]
    assert error.startswith(f"error (interrupted, exit {128 + sig})"), err[-2000:]
    assert "temporary folder" in error and "is removed" in error and "stored and current" not in error, error
    assert list((tmp_path / "tmp").iterdir()) == [], list((tmp_path / "tmp").iterdir())
    assert "Traceback" not in err, err[-2000:]


def test_a_demo_interrupted_while_a_round_is_saved_removes_its_temporary_folder(tmp_path):
    p = demo(tmp_path, "--rounds", "3", "--json", fault="sigterm_during_save@2")  # round 1's save: unwinds (a region)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 143, (p.returncode, err[-2000:])
    assert "temporary folder" in json.loads(out)["error"]["message"]
    assert list((tmp_path / "tmp").iterdir()) == []


def test_an_interrupted_demo_with_dir_keeps_its_files(tmp_path):
    keep = tmp_path / "keep"
    p = demo(tmp_path, "--rounds", "400", "--dir", str(keep))
    out, err = after_round(p, 2, signal.SIGTERM)
    assert p.returncode == 143, (p.returncode, err[-2000:])
    assert "round" in err.strip().splitlines()[-1] and "stored and current" in err.strip().splitlines()[-1], err
    assert (keep / "base.parquet").exists() and (keep / "state" / "CURRENT").exists()
