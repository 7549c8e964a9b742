"""Start-up that fits cron (issue #15): the commands that do not solve import no numerical stack.

Structural, not timed: each command runs as ``python -X importtime -m copter_cli ...`` in a fresh process
and the modules it imported (the importtime lines on stderr) must not include numpy, scipy, numba,
llvmlite, highspy or pyarrow (which imports numpy). The timings live in ``bench/bench_startup.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "scipy", "numba", "llvmlite", "highspy", "pyarrow")


def _imported(args: list[str], cwd: Path) -> tuple[int, set[str]]:
    """(exit code, top-level names of every module imported) of ``python -X importtime -m copter_cli ARGS``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "copter_cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                names.add(name.split(".")[0])
    assert names, proc.stderr[-2000:]
    return proc.returncode, names


@pytest.fixture(scope="module")
def state(tmp_path_factory) -> Path:
    """A state with two rounds (so rollback has an earlier round to go to)."""
    from solver import rounds
    from solver.model.delta import Delta
    from tests.helpers import small_lp

    st = tmp_path_factory.mktemp("startup") / "state"
    rounds.init(small_lp(), state_dir=st)
    rounds.step(Delta.concat([Delta.vars(["x0"], cost=[0.5])], base_round=0), state_dir=st)
    return st


def test_help_and_version_import_no_numerical_stack(tmp_path):
    for args in (["--help"], ["version"], ["version", "--json"], ["--version"]):
        code, names = _imported(args, tmp_path)
        assert code == 0, args
        assert not names & set(HEAVY), (args, sorted(names & set(HEAVY)))


def test_show_rollback_import_no_numerical_stack(state, tmp_path):
    for args in (["show"], ["show", "--json"], ["show", "--round", "0"], ["rollback", "--json"],
                 ["rollback", "--to", "1"]):
        code, names = _imported([*args, "--state", str(state)], tmp_path)
        assert code == 0, args
        assert not names & set(HEAVY), (args, sorted(names & set(HEAVY)))


def test_history_imports_only_what_reading_the_round_log_needs(state, tmp_path):
    """history reads the round log (``formats.round_log``: Arrow IPC, issue #19), so pyarrow (which imports
    numpy) is allowed; numba, scipy and HiGHS are not."""
    for args in (["history"], ["history", "--json"]):
        code, names = _imported([*args, "--state", str(state)], tmp_path)
        assert code == 0, args
        heavy = set(HEAVY) - {"pyarrow", "numpy"}
        assert not names & heavy, (args, sorted(names & heavy))


def test_the_check_sees_a_heavy_import(state, tmp_path):
    """The same check on a command that solves (``copter solve --help`` stays light; ``export`` writes MPS
    through HiGHS) finds the heavy modules: the assertion above can fail."""
    out = tmp_path / "x.mps"
    code, names = _imported(["export", "--state", str(state), "-o", str(out)], tmp_path)
    assert code == 0 and out.exists()
    assert {"numpy", "highspy"} <= names


def test_a_round_imports_neither_pandas_nor_scipy(state, tmp_path):
    """``copter step`` solves, so numpy/numba/pyarrow (and scipy, which numba imports itself) are expected;
    pandas (pulled in by pyarrow's shim on a string-array conversion when it is installed, 0.5-1 s) is not,
    and the round still succeeds with pandas kept out. The refused attempt itself is listed by importtime
    as ``pandas``; a real import would list its submodules."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    delta = tmp_path / "d.parquet"
    table = pa.table({"kind": ["var"], "var": ["x0"], "value": [0.75]})
    pq.write_table(table.replace_schema_metadata({"copter.format": "delta", "copter.version": "1"}), delta)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "copter_cli", "step", str(delta), "--state",
                           str(state), "--json"], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "import time:" in proc.stderr
    assert "pandas.core" not in proc.stderr


def test_pyarrow_converts_with_pandas_kept_out():
    """The finder is what pyarrow's pandas shim reads as "not installed" (a None in sys.modules made it
    read None.__version__ and every step exit 1)."""
    code = ("from copter_cli.entry import keep_pandas_out; keep_pandas_out()\n"
            "import pyarrow as pa; a = pa.array(['x', 'y']); print(a.to_numpy(zero_copy_only=False).tolist())")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1500:]
    assert out.stdout.strip() == "['x', 'y']"
