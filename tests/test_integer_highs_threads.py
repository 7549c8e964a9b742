"""The HiGHS runs of a MILP round (HiGHS first's simplex and MIP, the fallback, the improvement, RENS) use
``Settings.threads`` HiGHS threads (default 1; None = HiGHS's default).

Before, they ran with HiGHS's default, 2 threads on the 2-core machine, whose idle workers spin on a busy core:
mod008's HiGHS MIP took 2.0-2.8 s there against 1.2-1.8 s with one thread, which made mod008 slower with HiGHS
first than through the relaxation stages (docs/performance.md "Small MILPs")."""

from __future__ import annotations

import pytest

from formats.io import read_problem
from solver.integer import solve_milp
from solver.model.settings import Settings
from tests.helpers import require_data


def _record(monkeypatch, relaxation: bool = True) -> list:
    """Record the ``threads`` of the Highs instances of the HiGHS MIP runs (``fallback.highs_mip``: HiGHS first,
    the fallback, the improvement, RENS) and, with ``relaxation``, of every other one (HiGHS first's simplex;
    the relaxation stages' LP presolve is the LP core's, with HiGHS's default)."""
    from solver import highs_bridge
    from solver.integer import fallback

    seen: list = []
    real = highs_bridge.new_highs

    def new_highs(threads=None, time_limit_seconds=None):
        seen.append(threads)
        return real(threads, time_limit_seconds)

    monkeypatch.setattr(fallback, "new_highs", new_highs)
    if relaxation:
        monkeypatch.setattr(highs_bridge, "new_highs", new_highs)  # relaxation.py imports it at call time
    return seen


@pytest.mark.parametrize("threads", [1, None])
def test_highs_first_runs_highs_with_the_settings_threads(monkeypatch, threads):
    p = read_problem(require_data("mps") / "p0033.mps.gz")  # (the MPS reader's own Highs is not the round's)
    seen = _record(monkeypatch)
    res = solve_milp(p, Settings(threads=threads), None)
    assert res.mip["steps"][0]["reason"].startswith("small model: HiGHS first")
    assert len(seen) >= 2 and set(seen) == {threads}  # the relaxation's simplex and the MIP


def test_rens_and_the_improvement_run_highs_with_the_settings_threads(monkeypatch):
    p = read_problem(require_data("mps") / "mod008.mps.gz")
    seen = _record(monkeypatch, relaxation=False)
    res = solve_milp(p, Settings(integer_highs_max_nonzeros=0), None)  # the relaxation stages
    ran = {s["step"] for s in res.mip["steps"]}
    assert {"rens", "fallback"} <= ran  # RENS's sub-MIP, then HiGHS seeded with its point
    assert len(seen) >= 2 and set(seen) == {1}
