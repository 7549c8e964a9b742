"""The exact step on the assignment rows' duals of a partitioned LP round's Lagrangian bound (issue #18;
``solver.partition.bound.assignment_step``, kernel ``bound_kernels.assignment_duals``, twin in ``bound_ref``):
the kernel agrees with its numpy twin, each row's dual maximises its 1-D concave term exactly (the best of all
its breakpoints, and HiGHS's optimum of the row's continuous knapsack), the step's bound stays below the LP
optimum and never below the candidates' best, and a partitioned TE round reports it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.partition import bound_kernels as K
from solver.partition import bound_ref as R
from solver.partition.bound import assignment_rows_of, assignment_step, best_bound, implied_upper


def _merged(rep: dict, key: str):
    """The merged point's ``bound``, ``bound_candidate`` or ``gap_rel``: the report's own, or the fallback's
    ``merged_*`` when the round kept a whole solve's point (this small TE model is also solved whole)."""
    fb = rep.get("fallback") or {}
    if fb.get("kept") == "whole":
        assert rep[key] is None
        return fb["merged_" + key]
    return rep[key]

def _rows_case(m: int, n: int, seed: int):
    """Random disjoint rows: (rp, rc, coef, rows, r0, lo, up, rl, ru, y) as ``assignment_duals`` takes them, with
    both signs of a_ij, infinite column and row bounds on either side, and columns in no row."""
    rng = np.random.default_rng(seed)
    col_row = rng.integers(-1, m, n)
    order = np.argsort(col_row, kind="stable")
    rp = np.r_[0, np.cumsum(np.bincount(col_row[col_row >= 0], minlength=m))].astype(np.int64)
    rc = order[col_row[order] >= 0].astype(np.int32)
    coef = np.where(col_row >= 0, rng.choice([-1.0, 1.0], n) * rng.uniform(0.2, 3, n), 0.0)
    r0 = rng.standard_normal(n)
    lo = np.where(rng.random(n) < 0.2, -np.inf, rng.uniform(-1, 1, n))
    lo[rng.random(n) < 0.4] = 0.0
    up = np.where(rng.random(n) < 0.2, np.inf, np.where(np.isfinite(lo), lo, 0.0) + rng.uniform(0, 3, n))
    fixed = np.isfinite(lo) & (rng.random(n) < 0.1)
    up[fixed] = lo[fixed]
    rl = np.where(rng.random(m) < 0.3, -np.inf, rng.uniform(-3, 1, m))
    ru = np.where(rng.random(m) < 0.3, np.inf, np.where(np.isfinite(rl), rl, 0.0) + rng.uniform(0, 3, m))
    eq = np.isfinite(rl) & (rng.random(m) < 0.2)
    ru[eq] = rl[eq]
    y = rng.standard_normal(m)
    y = np.where(y > 0, np.where(np.isfinite(rl), y, 0.0), np.where(np.isfinite(ru), y, 0.0))
    return rp, rc, coef, np.arange(m, dtype=np.int64), r0, lo, up, rl, ru, y


def _g(t: float, cols, coef, r0, lo, up, rl_i, ru_i) -> float:
    """One row's term of L at dual t (``bound_kernels.assignment_duals``), -inf where a side is unbounded; a
    reduced cost within rounding of 0 (t on the column's own breakpoint) counts as 0."""
    total = rl_i * t if t > 0 else (ru_i * t if t < 0 else 0.0)
    for j in cols:
        s = r0[j] - coef[j] * t
        s = 0.0 if abs(s) <= 1e-12 * (abs(r0[j]) + abs(coef[j] * t)) else s
        total += s * lo[j] if s > 0 else (s * up[j] if s < 0 else 0.0)
    return -np.inf if np.isnan(total) else total


shapes = st.tuples(st.integers(1, 8), st.integers(0, 90), st.integers(0, 2**31 - 1))  # rows over INSERTION_MAX too


@settings(max_examples=150, deadline=None)
@given(shapes)
def test_the_kernel_matches_its_twin(shape):
    args = _rows_case(*shape)
    y_k, n_k = K.assignment_duals(*args)
    y_r, n_r = R.assignment_duals_ref(*args)
    assert n_k == n_r
    np.testing.assert_allclose(y_k, y_r, rtol=1e-9, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(shapes)
def test_each_dual_is_the_best_breakpoint_and_the_rows_knapsack_optimum(shape):
    from solver.baselines.highs import solve_highs
    from solver.model.status import Status

    rp, rc, coef, rows, r0, lo, up, rl, ru, y = _rows_case(*shape)
    y_new, _ = K.assignment_duals(rp, rc, coef, rows, r0, lo, up, rl, ru, y)
    for i in rows:
        solved = K.assignment_duals(rp, rc, coef, rows[i:i + 1], r0, lo, up, rl, ru, y)[1] == 1
        cols = [j for j in rc[rp[i]:rp[i + 1]] if coef[j] != 0]
        g = [_g(t, cols, coef, r0, lo, up, rl[i], ru[i]) for t in [0.0] + [r0[j] / coef[j] for j in cols]]
        best = max(g)
        got = _g(y_new[i], cols, coef, r0, lo, up, rl[i], ru[i])
        if solved:  # the best breakpoint (or 0): a concave piecewise-linear maximum is at a kink
            assert got == pytest.approx(best, rel=1e-9, abs=1e-9)
        if not cols:
            continue
        knap = Problem.from_arrays(cost=r0[cols], col_lower=lo[cols], col_upper=up[cols], row_lower=rl[i:i + 1],
                                   row_upper=ru[i:i + 1], matrix=sp.csc_array(coef[cols][None, :]))
        res = solve_highs(knap, solver="simplex")
        free = any(lo[j] == -np.inf and up[j] == np.inf for j in cols)  # L finite only where r_j is exactly 0
        if res.status == Status.OPTIMAL and not free:  # LP duality: max_t g(t) = the knapsack's minimum, attained
            assert solved
        if res.status == Status.OPTIMAL and solved:
            assert got == pytest.approx(res.objective, rel=1e-7, abs=1e-7)


def test_unbounded_or_empty_rows_keep_their_dual():
    """A row whose term has no finite maximiser keeps its dual: a column with up = inf and a_ij > 0 under a row
    with ru = inf leaves no upper end to g's increase, and a free row (both sides infinite) has only t = 0."""
    rp = np.array([0, 1, 2, 2], dtype=np.int64)
    rc = np.array([0, 1], dtype=np.int32)
    coef = np.array([-1.0, 1.0])
    r0 = np.array([1.0, 1.0])
    lo, up = np.zeros(2), np.full(2, np.inf)
    rl = np.array([1.0, -np.inf, -np.inf])
    ru = np.array([np.inf, np.inf, np.inf])
    y = np.array([0.5, 0.0, 0.0])
    for fn in (K.assignment_duals, R.assignment_duals_ref):
        y_new, solved = fn(rp, rc, coef, np.arange(3, dtype=np.int64), r0, lo, up, rl, ru, y)
        # row 0: g(t) = t + min((1 + t) * 0, (1 + t) * inf): t -> +inf grows without bound (x_0 free above)
        assert y_new[0] == 0.5
        assert y_new[1] == 0.0 and y_new[2] == 0.0 and solved == 2  # the free rows: t = 0, their only point


def _random_lp(seed: int, sense: int) -> Problem:
    """A small LP with disjoint "demand" rows (sum of a group's columns within [rl, ru]) and coupling
    "capacity" rows, the columns >= 0 with some upper bounds infinite (the implied ones apply)."""
    rng = np.random.default_rng(seed)
    groups, per, caps = 6, 4, 5
    n = groups * per
    dem = sp.csc_array((rng.uniform(0.5, 2, n), (np.repeat(np.arange(groups), per), np.arange(n))),
                       shape=(groups, n))
    cap = sp.random_array((caps, n), density=0.5, format="csc", rng=rng, data_sampler=lambda size: rng.uniform(0.2, 2, size))
    A = sp.vstack([dem, cap]).tocsc()
    rl = np.r_[np.where(rng.random(groups) < 0.5, rng.uniform(0.5, 1, groups), -np.inf), np.full(caps, -np.inf)]
    ru = np.r_[rng.uniform(1, 3, groups), rng.uniform(2, 6, caps)]
    return Problem.from_arrays(cost=sense * -rng.uniform(0.5, 2, n), col_lower=np.zeros(n),
                               col_upper=np.where(rng.random(n) < 0.5, np.inf, rng.uniform(1, 3, n)),
                               row_lower=rl, row_upper=ru, matrix=A, sense=sense)


@pytest.mark.parametrize("sense", [1, -1])
@pytest.mark.parametrize("seed", range(8))
def test_the_step_bounds_a_random_lp_and_never_loses_to_the_candidates(seed, sense):
    from solver.baselines.highs import solve_highs

    p = _random_lp(seed, sense)
    opt = solve_highs(p, solver="simplex").objective
    rng = np.random.default_rng(100 + seed)
    arows = assignment_rows_of(p)
    assert arows.rows.size >= 6  # the demand rows at least
    shared = np.arange(6, p.n_rows, dtype=np.int64)
    up = implied_upper(p)
    tight = 1e-9 * (1 + abs(opt))
    for _ in range(10):
        y = sense * -np.abs(rng.standard_normal(p.n_rows))  # <= rows: duals <= 0 (minimisation form)
        duals = y[shared][None, :] * rng.uniform(0.5, 1.5, (3, shared.size))
        old, _, ysh, _ = best_bound(p, y, shared, duals, np.full((3, shared.size), 1 / 3), up)
        y[shared] = ysh
        new, y_new, solved = assignment_step(p, y, arows, up)
        assert solved > 0 and new is not None
        assert sense * (opt - new) >= -tight  # a valid bound
        assert old is None or sense * (new - old) >= -tight  # never worse than the candidates'
        again, _, _ = assignment_step(p, y_new, arows, up)
        assert sense * (again - new) >= -tight and sense * (again - new) <= 1e-7 * (1 + abs(new))  # a fixed point


@pytest.mark.parametrize("sense", [1, -1])
@pytest.mark.parametrize("seed", range(6))
def test_evaluate_disjoint_is_evaluate_bitwise(seed, sense):
    """On the assignment rows, the O(n) evaluation gives the float the pass over the matrix gives, for any duals
    (the step's, others, NaN), infinite upper bounds included (no implied ones: some candidates are -inf)."""
    from solver.partition.bound import LagrangianBound

    p = _random_lp(seed, sense)
    arows = assignment_rows_of(p)
    rng = np.random.default_rng(seed)
    for up in (implied_upper(p), p.col_upper):
        lb = LagrangianBound(p, rng.standard_normal(p.n_rows), arows.rows, up)
        for _ in range(5):
            ys = rng.standard_normal(arows.rows.size) * rng.choice([0.1, 1.0, 10.0])
            ys[rng.random(ys.size) < 0.2] = np.nan
            want = lb.evaluate(ys)
            got = lb.evaluate_disjoint(ys, arows.row_of_col, arows.coef)
            assert np.float64(got).tobytes() == np.float64(want).tobytes()


@pytest.fixture(scope="module")
def te():
    from solver.workloads import make_scenario

    p = make_scenario("te", 16, seed=4).base()
    return dataclasses.replace(p, integrality=np.zeros(p.n_cols, dtype=p.integrality.dtype))


def _merge_inputs(problem, monkeypatch, executor="inline"):
    """Run a K = 2 partitioned round on ``problem``, capturing what its merge passed to ``best_bound`` (the merged
    duals, the shared rows, the parts' duals and shares, the implied upper bounds)."""
    from solver.partition import merge
    from solver.partition import round as pround

    seen = []
    real = merge.best_bound

    def spy(*args, **kw):
        seen.append(args)
        return real(*args, **kw)

    monkeypatch.setattr(merge, "best_bound", spy)
    out = pround.solve_round(problem, Settings(tol=1e-6), pround.PartitionConfig(k=2, executor=executor,
                                                                                workers=2, update_every=0))
    return out, seen


def test_on_a_partitioned_te_round_the_step_is_safe_and_tighter(te, monkeypatch):
    from solver.baselines.highs import solve_highs

    opt = solve_highs(te, solver="simplex").objective
    out, seen = _merge_inputs(te, monkeypatch)
    assert seen
    p, y, rows_sh, duals, eff, up = seen[-1]
    old, _, ysh, r_full = best_bound(p, y, rows_sh, duals, eff, up, keep_reduced=True)
    y = y.copy()
    y[rows_sh] = ysh
    arows = assignment_rows_of(p)
    new, y_new, solved = assignment_step(p, y, arows, up)
    sense = float(p.sense)
    assert solved > 0
    assert sense * (opt - new) >= -1e-9 * (1 + abs(opt))
    assert sense * (new - old) > 0  # strictly tighter on TE: the demand rows' duals were a part's
    # the merge starts the step from the candidates' reduced costs (no pass of its own): the same up to rounding
    fast, y_fast, solved_fast = assignment_step(p, y, arows, up, r_full)
    assert solved_fast == solved and fast == pytest.approx(new, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(y_fast, y_new, rtol=1e-9, atol=1e-12)
    assert _merged(out.report, "bound") == fast  # the round reports it
    assert _merged(out.report, "bound_candidate").endswith("+assignment_exact")


@pytest.mark.parametrize("executor", ["inline", "process"])
def test_a_partitioned_lp_round_reports_the_tighter_bound_and_its_phase(te, monkeypatch, executor):
    from solver.partition import merge
    from solver.partition import round as pround

    cfg = dict(k=2, update_every=0, executor=executor, workers=2)
    with_step = pround.solve_round(te, Settings(tol=1e-6), pround.PartitionConfig(**cfg))
    monkeypatch.setattr(merge, "assignment_step", lambda problem, y, arows, up=None, r_full=None: (None, y, 0))
    without = pround.solve_round(te, Settings(tol=1e-6), pround.PartitionConfig(**cfg))
    rep, rep0 = with_step.report, without.report
    bound, bound0 = _merged(rep, "bound"), _merged(rep0, "bound")
    assert bound0 is not None and bound is not None
    sense = float(te.sense)
    assert sense * (bound - bound0) > 0
    assert 0 <= _merged(rep, "gap_rel") < _merged(rep0, "gap_rel")
    assert _merged(rep, "bound_candidate") == _merged(rep0, "bound_candidate") + "+assignment_exact"
    phases = rep["seconds"]["phases"]
    assert phases["bound_assignment"] > 0
    if executor == "process":  # the rows came from the thread that computed the implied bounds
        assert phases["assignment_rows_in_thread"] > 0 and "assignment_rows" not in phases
    else:
        assert phases["assignment_rows"] > 0


@pytest.mark.parametrize("executor", ["inline", "process"])
def test_a_model_too_large_for_the_assignment_rows_keeps_the_candidates_bound(te, monkeypatch, executor):
    """Above ``MAX_ASSIGNMENT_COLS`` columns (int32 column indices) the step is skipped, in the merge and in the
    thread: the round reports the candidates' bound instead of failing."""
    from solver.partition import bound
    from solver.partition import round as pround

    cfg = pround.PartitionConfig(k=2, update_every=0, executor=executor, workers=2)
    monkeypatch.setattr(bound, "MAX_ASSIGNMENT_COLS", te.n_cols)  # this model is "too large"
    out = pround.solve_round(te, Settings(tol=1e-6), cfg)
    assert out.result.status.name in ("OPTIMAL", "FEASIBLE")
    assert _merged(out.report, "bound") is not None
    assert not _merged(out.report, "bound_candidate").endswith("+assignment_exact")
    assert "bound_assignment" not in out.report["seconds"]["phases"]


def test_the_round_reports_the_steps_duals_which_are_no_less_dual_feasible(te, monkeypatch):
    """When the step wins, the round's duals are its duals: their dual residual is no larger than the parts'
    merged duals' (TE Kdl K = 4: 1.19e-2 -> 5e-17), and their dual objective is the reported bound."""
    from solver.partition import merge
    from solver.partition import round as pround

    # whole_below_nnz 0: no whole solve of this small model replaces the merged point and duals
    cfg = pround.PartitionConfig(k=2, update_every=0, executor="inline", whole_below_nnz=0)
    with_step = pround.solve_round(te, Settings(tol=1e-6), cfg)
    monkeypatch.setattr(merge, "assignment_step", lambda problem, y, arows, up=None, r_full=None: (None, y, 0))
    without = pround.solve_round(te, Settings(tol=1e-6), cfg)
    assert with_step.report["bound_candidate"].endswith("+assignment_exact")
    r, r0 = with_step.result, without.result
    assert r.dual_residual_rel <= r0.dual_residual_rel
    assert not np.array_equal(r.y, r0.y)
    np.testing.assert_array_equal(r.x, r0.x)  # the point is the parts' either way
    assert r.dual_objective == with_step.report["bound"]
