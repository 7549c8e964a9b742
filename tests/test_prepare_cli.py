"""A fresh install's numba cache through the CLI (issue #15 item 2): one compilation, then none.

Each command runs in its own process, as cron runs them, against one fresh numba cache (``NUMBA_CACHE_DIR`` = a
new temporary folder) and an empty bytecode cache. The first command that solves compiles every kernel, says so
on stderr and counts the compilation in its ``--time-limit``; ``copter prepare`` then finds the stamp current;
``copter init`` of an LP (afiro, MPS) and of a MILP (p0033, gzipped MPS) and two ``copter step`` rounds on each,
with deltas that change costs, bounds, a coefficient and the structure (a variable added, then dropped) and pin
each LP engine once, load their arrays from the checkpoint store, so they reach the kernels with the argument
types a real stream has; any kernel signature the warm-up did not compile would add a ``*.nbc`` file (and
rewrite an ``*.nbi`` index) in the cache, which the test forbids.

One test, one cold compilation (a minute or more on 2 cores): three tests each paid their own before (session
53). A cold ``copter prepare`` itself runs in the tests' session set-up on a fresh clone (``tests/conftest.py``)
and in CI's runtime-only smoke (``.ci/smoke-runtime``); every solving command's call of the warm-up is checked
without compiling in ``tests/test_prepare_commands.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import require_data

ROOT = Path(__file__).resolve().parent.parent


def _cache_files(folder: Path) -> dict[str, int]:
    """numba's cache files under ``folder``: relative path -> size (an index grows with each signature)."""
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*")
            if p.suffix in (".nbi", ".nbc")}


def _copter(env: dict, cwd: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=3600)


def _write_deltas(tmp: Path) -> dict[str, Path]:
    from formats.io import write_delta
    from solver.model.delta import Delta

    deltas = {
        # afiro: cost change, a new column with a coefficient, row bounds (structural + coefficient path)
        "lp1": Delta.concat([Delta.vars(["X02"], cost=[-0.5]), Delta.vars(["NEWX"], cost=[-1.0], upper=[3.0]),
                             Delta.cons(["X05", "X17"], upper=[85.0, 85.0]),
                             Delta.coefs(var=["NEWX"], con=["R10"], value=[1.0])]),
        # afiro: the new column dropped again, a cost change
        "lp2": Delta.concat([Delta.drop_vars(["NEWX"]), Delta.vars(["X04"], cost=[-0.1])]),
        # p0033: cost changes, then a bound change
        "milp1": Delta.vars(["C157", "C162"], cost=[266.5, 253.0]),
        "milp2": Delta.vars(["C157"], upper=[0.0]),
    }
    paths = {}
    for name, delta in deltas.items():
        paths[name] = tmp / f"{name}.parquet"
        write_delta(delta, paths[name])
    return paths


@pytest.mark.slow
def test_a_fresh_cache_compiles_once_and_then_no_command_compiles(tmp_path):
    """(module docstring) 1. ``copter init --time-limit 5`` as the first command compiles every kernel first, says
    so, and reports TIME_LIMIT, not a round solved in 5 s, leaving the stamp and the bytecode; 2. ``copter
    prepare`` finds the stamp current, and writes a lost ``.pyc`` again; 3. rounds of an LP and a MILP, and a
    ``copter solve``, compile nothing and say nothing about compiling."""
    from formats.io import write_problem
    from solver import prepare as prep
    from tests.helpers import small_lp

    mps = require_data("mps")
    cache = tmp_path / "numba-cache"
    pyc = tmp_path / "pyc"  # an empty bytecode cache that imports never write to (PYTHONDONTWRITEBYTECODE)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT) + os.pathsep
               + os.environ.get("PYTHONPATH", ""), PYTHONPYCACHEPREFIX=str(pyc), PYTHONDONTWRITEBYTECODE="1")

    # 1. the first command that solves, against the empty cache
    write_problem(small_lp(n=60, m=25, seed=5), tmp_path / "base.parquet")
    first = _copter(env, tmp_path, "init", tmp_path / "base.parquet", "--state", "st0", "--time-limit", "5", "--json")
    assert prep.PROGRESS_MESSAGE in first.stderr, first.stderr[-3000:]
    report = json.loads(first.stdout.strip().splitlines()[-1])
    assert report["status"] == "TIME_LIMIT", report  # the compilation used the 5 s up
    assert (cache / prep.STAMP_NAME).exists()
    prepared = _cache_files(cache)
    assert len(prepared) > 50, sorted(prepared)  # it really compiled (index + code files)
    # ... and wrote the bytecode of copter's own modules, which every later command reads instead of compiling
    for module in ("copter_cli/app", "solver/lp/pdhg", "formats/checkpoint_arrays"):
        assert list(pyc.rglob(f"{module}.cpython-*.pyc")), f"the warm-up wrote no bytecode for {module}.py"

    # 2. copter prepare: the stamp is current (nothing to warm up), and a lost .pyc is written again
    for f in pyc.rglob("pdhg.cpython-*.pyc"):
        f.unlink()
    again = _copter(env, tmp_path, "prepare")
    assert again.returncode == 0 and "prepared already" in again.stdout + again.stderr, again.stderr[-2000:]
    assert list(pyc.rglob("solver/lp/pdhg.cpython-*.pyc")), "copter prepare (stamp current) left a .pyc missing"

    # 3. rounds, one process each: nothing compiles
    d = _write_deltas(tmp_path)
    runs = [
        ("init", mps / "afiro.mps", "--state", "lp"),
        ("step", d["lp1"], "--state", "lp", "--engine", "pdhg"),
        ("step", d["lp2"], "--state", "lp", "--engine", "alm"),
        ("init", mps / "p0033.mps.gz", "--state", "milp"),
        ("step", d["milp1"], "--state", "milp"),
        ("step", d["milp2"], "--state", "milp"),
        ("solve", mps / "afiro.mps"),
    ]
    for args in runs:
        proc = _copter(env, tmp_path, *args, "--time-limit", "60", "--json")
        assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-3000:])
        report = json.loads(proc.stdout.strip().splitlines()[-1])
        assert report["status"] in ("OPTIMAL", "FEASIBLE"), (args, report)
        assert "compiling" not in proc.stderr, (args, proc.stderr[-2000:])
        now = _cache_files(cache)
        added = sorted(set(now) - set(prepared))
        grown = sorted(k for k in prepared if now.get(k) != prepared[k])
        assert not added and not grown, f"{args[:2]} compiled kernels the warm-up had not: new {added}, " \
                                        f"changed index {grown}"
