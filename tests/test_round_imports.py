"""A default round never imports ``scipy.sparse`` (issue #15: 0.15-0.45 s of every ``copter step`` process):
a Sia MILP round and a TE ring LP round run ``copter step`` in a fresh process (``copter_cli.app.main``
in-process, no long-running worker) and list the scipy modules loaded at the end. numba imports the
top-level ``scipy`` package itself (a version check, ~20 ms), so the allowed set is what ``import numba``
loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from formats.io import write_delta
from solver import rounds
from solver.workloads import make_scenario
from tests.helpers import REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}

PROBE = r"""
import json, os, sys
from copter_cli.app import main
code = None
try:
    main(sys.argv[1:])
except SystemExit as ex:
    code = ex.code
finally:
    mods = sorted(m for m in sys.modules if m == "scipy" or m.startswith("scipy."))
    os.write(2, ("\nMODULES " + json.dumps({"code": code, "scipy": mods}) + "\n").encode())
"""


def _scipy_after(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], env=ENV, capture_output=True, text=True,
                          timeout=900)
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, proc.stderr
    return {**json.loads(line[-1][len("MODULES "):]), "stdout": proc.stdout}


@pytest.fixture(scope="module")
def numba_scipy() -> set:
    probe = ("import json, os, sys, numpy, numba\nmods = sorted(m for m in sys.modules if m.startswith('scipy'))\n"
             "os.write(2, ('MODULES ' + json.dumps({'code': 0, 'scipy': mods}) + '\\n').encode())")
    return set(_scipy_after(probe)["scipy"])


@pytest.mark.parametrize("domain, scale, partition", [("sia", 128, None), ("te", None, None), ("te", None, {"k": 2}),
                                                       ("sia", 128, {"k": 2})])
def test_a_default_round_imports_no_scipy_sparse(tmp_path, numba_scipy, domain, scale, partition):
    """Monolithic and partitioned (K = 2, the default executor: the parts in worker processes, the set-up and
    the merge's whole-model re-check in the step process, whose KKT measure imported scipy until session 23)."""
    sc = make_scenario(domain, scale, seed=1)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition=partition)
    delta = tmp_path / "d1.parquet"
    write_delta(sc.next_delta(1), delta)
    out = _scipy_after(PROBE, "step", str(delta), "--state", str(state), "--json")
    assert out["code"] == 0, out
    assert json.loads(out["stdout"])["round"] == 1
    assert "scipy.sparse" not in out["scipy"]
    assert set(out["scipy"]) <= numba_scipy, sorted(set(out["scipy"]) - numba_scipy)
