"""An infeasibility ray must be more than rounding noise on the iterate it is the difference of.

Found by fuzzing small LPs warm-started after a cost change against HiGHS: round 0 (x1's cost -6.7) puts x1 at its
bound 1e6; round 1 sets the cost to 3, so PDHG warm walks x1 down by a few units an iteration while the duals stay
where they were. The dual "ray" yh - y0 of a check was then 1e-13 against duals of 80, rounding noise, with no sign
violation at all (every column it touches boxed or with r >= 0), so its ratio was 0 and the run ended
PRIMAL_INFEASIBLE 'a dual ray certifies that no feasible point exists' after 387 iterations, where HiGHS's optimum is
37.36 (the same LP cold: OPTIMAL). A ray (dual or primal) now counts only when its largest entry is above
``RAY_SIGNIFICANCE`` (1e-9) times the largest entry of the iterates it is the difference of.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from solver.model.problem import Problem
from tests.helpers import highs_solution, run_main

A = np.array([[-0.43, 0, 0, 0, -2.06, -1.19], [0, -1.05, -0.37, 1.35, -1.05, 0], [0.48, 0, -0.13, 0, -0.8, 3.09],
              [0.31, 0, 0.45, 0, 0.58, -0.47]])


def _lp(c1: float) -> Problem:
    return Problem.from_arrays(cost=[-2.09e-3, c1, 490.0, 6.0, 2.7e-4, 126.0], matrix=A,
                               row_lower=[-9.08, -np.inf, -1.43, 1.47], row_upper=[-9.08, np.inf, -1.43, np.inf],
                               col_lower=[0, 0, 0, 0, 3.9, 0], col_upper=[5.85, 1e6, np.inf, np.inf, 3.9, np.inf],
                               col_names=[f"x{j}" for j in range(6)], row_names=[f"r{i}" for i in range(4)])


def test_a_warm_pdhg_round_is_not_certified_infeasible_by_rounding_noise():
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings

    assert highs_solution(_lp(3.0))[0] == "kOptimal"
    r0 = solve(_lp(-6.7), Settings(engine="pdhg"))
    assert r0.status.name == "OPTIMAL" and r0.x[1] == pytest.approx(1e6)
    r1 = solve(_lp(3.0), Settings(engine="pdhg", iteration_limit=3000), warm_start=r0.state)
    assert r1.status.name not in ("PRIMAL_INFEASIBLE", "DUAL_INFEASIBLE"), r1.message


def test_through_the_cli(tmp_path, capsys):
    """init (--engine pdhg) and a step setting x1's cost to 3: before, exit 5 PRIMAL_INFEASIBLE after 387
    iterations; now no infeasibility verdict (this warm run does not finish within 3,000 iterations). Parquet: MPS
    has no free rows (r1 would become an N row and x1 an empty column)."""
    from formats.io import write_delta, write_problem
    from solver.model.delta import Delta

    write_problem(_lp(-6.7), tmp_path / "lp.parquet")
    state = tmp_path / "st"
    code, out, _ = run_main(capsys, "init", tmp_path / "lp.parquet", "--state", state, "--json", "--engine", "pdhg")
    assert code == 0, out
    write_delta(Delta.concat([Delta.vars(["x1"], cost=[3.0])]), tmp_path / "d1.parquet")
    code, out, _ = run_main(capsys, "step", tmp_path / "d1.parquet", "--state", state, "--json",
                            "--iteration-limit", "3000")
    rep = json.loads(out.strip().splitlines()[0])
    assert rep["status"] not in ("PRIMAL_INFEASIBLE", "DUAL_INFEASIBLE"), rep


def test_the_ray_ratios_refuse_a_noise_level_ray_and_keep_a_real_one():
    from solver.lp.infeasibility import dual_infeasibility_ratio, primal_infeasibility_ratio
    from solver.lp.termination import OrigLP

    # min 0 s.t. x >= 1, x <= 0 as two rows: y = (1, -1) * t is a real dual ray (objective 1 per unit)
    inf = np.inf
    lp = OrigLP(c=np.zeros(1), lc=np.array([1.0, -inf]), uc=np.array([inf, 0.0]), lv=np.array([-inf]),
                uv=np.array([inf]), b_norm=1.0, c_norm=0.0, offset=0.0)
    dy = np.array([1.0, -1.0])
    assert primal_infeasibility_ratio(lp, dy, np.array([0.0])) == 0.0
    assert primal_infeasibility_ratio(lp, dy, np.array([0.0]), iterate_size=1e3) == 0.0
    assert primal_infeasibility_ratio(lp, 1e-13 * dy, np.array([0.0]), iterate_size=80.0) == np.inf
    import scipy.sparse as sp

    lp2 = OrigLP(c=np.array([-1.0]), lc=np.array([-inf]), uc=np.array([inf]), lv=np.array([0.0]), uv=np.array([inf]),
                 b_norm=0.0, c_norm=1.0, offset=0.0)  # min -x, x >= 0, one free row: the ray dx = 1
    a = sp.csc_array(np.array([[1.0]]))
    assert dual_infeasibility_ratio(lp2, a, np.array([1.0]), iterate_size=10.0) == 0.0
    assert dual_infeasibility_ratio(lp2, a, np.array([1e-12]), iterate_size=1e6) == np.inf
