"""A round's ``seconds.kernels``: the solve's first calls of numba kernels, its own phase (user trial 18). A fresh
``copter step`` process loads each kernel from numba's cache at its first call, and that load was counted as
``seconds.solve``: a 5-row LP's warm rounds read 0.11-0.16 s of solve against 0.001 s for round 0 and 0.02 s
through the worker. ``solver.kernel_clock`` times the first calls; ``solve_phases`` takes them out of solve."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from formats.io import write_problem
from formats.parquet import write_delta
from solver.model.delta import Delta
from solver.rounds import commit
from tests.helpers import small_lp

REPO = Path(__file__).resolve().parents[1]


def _fresh(code: str) -> dict:
    """The JSON last printed by ``code`` run in a fresh interpreter (no kernel loaded yet)."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True,
                         cwd=REPO)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_kernels_first_call_is_timed_and_later_calls_are_not():
    got = _fresh("""
        import json
        import numpy as np
        from solver import kernel_clock
        from solver.lp.original_kkt import original_kkt
        from tests.helpers import small_lp
        p = small_lp()
        x, y = np.zeros(p.n_cols), np.zeros(p.n_rows)
        a = kernel_clock.seconds()
        original_kkt(p, x, y, 1e-4)  # kkt_pass's first call in this process: loaded from the cache
        b = kernel_clock.seconds()
        original_kkt(p, x + 1.0, y, 1e-4)
        print(json.dumps({"first": b - a, "again": kernel_clock.seconds() - b}))
    """)
    assert got["first"] > 0.0 and got["again"] == 0.0


def test_a_step_in_a_fresh_process_reports_its_kernel_loads_apart_from_solve(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    from solver import rounds

    rounds.init(tmp_path / "base.parquet", state_dir=tmp_path / "st")
    p = small_lp()
    write_delta(Delta.concat([Delta.vars([p.col_names[0]], cost=[p.cost[0] + 0.5])], base_round=0),
                tmp_path / "d1.parquet")
    write_delta(Delta.concat([Delta.vars([p.col_names[0]], cost=[p.cost[0] + 0.7])], base_round=1),
                tmp_path / "d2.parquet")
    got = _fresh(f"""
        import json
        from solver import rounds
        a = rounds.step({str(tmp_path / 'd1.parquet')!r}, state_dir={str(tmp_path / 'st')!r})["seconds"]
        b = rounds.step({str(tmp_path / 'd2.parquet')!r}, state_dir={str(tmp_path / 'st')!r})["seconds"]
        print(json.dumps([a, b]))
    """)
    first, second = got
    assert first["kernels"] > 0.0  # this process's first solve loads the kernels: its own phase, not solve
    assert second["kernels"] == 0.0  # the same kind of round again: every kernel already loaded
    assert set(first) >= {"load", "apply", "kernels", "solve", "integerize", "save", "total"}


@pytest.mark.parametrize(("integ", "kern", "want"), [
    (0.0, 0.3, (0.7, 0.0, 0.3)),  # LP: all out of solve
    (0.5, 0.2, (0.3, 0.5, 0.2)),  # MILP: out of solve first
    (0.9, 0.4, (0.0, 0.6, 0.4)),  # more than solve holds: the rest out of integerize
])
def test_solve_phases_take_the_kernel_seconds_out_of_solve_first(monkeypatch, integ, kern, want):
    from types import SimpleNamespace

    from solver import kernel_clock

    monkeypatch.setattr(kernel_clock, "seconds", lambda: 10.0 + kern)
    result = SimpleNamespace(seconds={"integerize": integ}, mip=None)
    seconds = {}
    commit.solve_phases(seconds, result, 1.0, 10.0)
    got = (seconds["solve"], seconds["integerize"], seconds["kernels"])
    assert got == pytest.approx(want) and sum(got) == pytest.approx(1.0)
