"""The hot-started HiGHS baseline agrees with a cold HiGHS solve round after round (issue #16, item 6; a
public HiGHS report, ERGO-Code/HiGHS#3294, describes hot-started re-solves returning a wrong objective).

A seeded stream of LP rounds made with copter's own delta algebra: cost, bound and coefficient changes,
added and dropped variables and constraints, an infeasible round and the round that repairs it. Every hot
start path is checked against a fresh cold solve of the same round: the long-lived instance edited by name
(``WarmHighs`` without ``info``) and by index (with the delta's ``ApplyInfo``), the stored basis mapped by
name through its Arrow table (what ``copter compare`` keeps), and the registry entry ``highs-warm`` with its
memory. Statuses must be equal, objectives equal within 1e-7 relative to max(1, |objective|).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver.baselines import registry, solve_highs
from solver.baselines.highs_warm import StoredBasis, WarmHighs, solve_from_basis
from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.problem import Problem
from solver.model.status import Status

ROUNDS = 14


def _base(rng) -> Problem:
    """max c x s.t. cap rows A x <= b (A >= 0), demand rows x_i + x_j >= d, 0 <= x <= u: 40 x 24."""
    n, m_cap, m_dem = 40, 16, 8
    A = sp.random(m_cap, n, density=0.25, random_state=rng, format="lil")
    A[np.arange(m_cap), np.arange(m_cap)] = 1.0
    D = sp.lil_array((m_dem, n))
    for r in range(m_dem):
        D[r, rng.choice(n, 2, replace=False)] = 1.0
    M = sp.vstack([A.tocsr(), D.tocsr()]).tocsc()
    return Problem.from_arrays(cost=rng.uniform(0.5, 2.0, n), col_lower=np.zeros(n), col_upper=rng.uniform(1, 3, n),
                               row_lower=np.r_[np.full(m_cap, -np.inf), rng.uniform(0.2, 1.0, m_dem)],
                               row_upper=np.r_[rng.uniform(2, 6, m_cap), np.full(m_dem, np.inf)], matrix=M,
                               col_names=[f"x{j}" for j in range(n)],
                               row_names=[f"cap{i}" for i in range(m_cap)] + [f"dem{i}" for i in range(m_dem)],
                               sense=-1)


def _delta(rng, p: Problem, k: int) -> tuple[Delta, str]:
    """Round k's delta (a structural change in most rounds) and what it does; every entity is touched by
    one kind of change at most (a delta may not upsert a name twice in one phase)."""
    if k == 6:  # infeasible: a new row asks more of x0 than its upper bound allows
        return Delta.concat([Delta.cons(["impossible"], lower=[float(p.col_upper[0]) + 5.0]),
                             Delta.coefs(["x0"], ["impossible"], [1.0])]), "infeasible row"
    if k == 7:
        return Delta.drop_cons(["impossible"]), "repair"
    cols = [c for c in rng.permutation(p.col_names.tolist()) if c != "x0"]
    caps = list(rng.permutation([r for r in p.row_names.tolist() if r.startswith("cap")]))
    A = p.matrix().tocsr()
    dem = set(p.col_names[A[np.flatnonzero(np.char.startswith(p.row_names.astype(str), "dem"))].indices])
    cost_v, bound_v, row_v = cols[:4], cols[4:7], cols[9:14]
    drop_v = [c for c in cols[7:] if c not in dem and c not in row_v][:2]  # a demand row never loses its columns
    drop_r, bound_r, keep_r = caps[:1], caps[1:4], caps[4:]
    parts, what = [Delta.vars(cost_v, cost=rng.uniform(0.5, 2.5, 4))], ["costs"]  # always some cost changes
    if k % 2 == 0:
        new = [f"y{k}_{i}" for i in range(3)]
        parts += [Delta.vars(new, cost=rng.uniform(0.5, 2.5, 3), upper=rng.uniform(1, 3, 3)),
                  Delta.coefs([v for v in new for _ in range(2)], [c for i in range(3) for c in keep_r[2 * i:2 * i + 2]],
                              rng.uniform(0.2, 1.0, 6))]
        what.append("add vars")
    if k % 3 == 0:
        parts.append(Delta.drop_vars(drop_v))
        what.append("drop vars")
    if k % 4 == 1:
        name = f"lim{k}"
        parts += [Delta.cons([name], upper=[rng.uniform(1.0, 3.0)]), Delta.coefs(row_v, [name] * 5, np.ones(5))]
        what.append("add row")
    if k % 5 == 2:
        parts.append(Delta.drop_cons(drop_r))
        what.append("drop row")
    if k % 2 == 1:
        parts += [Delta.cons(bound_r, upper=rng.uniform(1.5, 6.0, 3)),
                  Delta.vars(bound_v, upper=rng.uniform(0.5, 3.0, 3))]
        what.append("bounds")
    if k % 3 == 1:  # change existing coefficients (nonzeros of the matrix) of surviving rows
        A = A.tocoo()
        ok = np.flatnonzero(np.isin(p.row_names[A.row], keep_r))
        sel = rng.choice(ok, 3, replace=False)
        parts.append(Delta.coefs(p.col_names[A.col[sel]].tolist(), p.row_names[A.row[sel]].tolist(),
                                 rng.uniform(0.3, 1.5, 3)))
        what.append("coefficients")
    return Delta.concat(parts), "+".join(what)


def _stream(seed: int):
    rng = np.random.default_rng(seed)
    p = _base(rng)
    yield 0, p, None, "base"
    for k in range(1, ROUNDS):
        d, what = _delta(rng, p, k)
        p, info = apply_delta(p, d)
        yield k, p, info, what


def _same(hot, cold, where: str) -> None:
    assert hot.status == cold.status, f"{where}: hot {hot.status.name} vs cold {cold.status.name}"
    if cold.status == Status.OPTIMAL:
        scale = max(1.0, abs(cold.objective))
        assert abs(hot.objective - cold.objective) <= 1e-7 * scale, \
            f"{where}: hot {hot.objective!r} vs cold {cold.objective!r}"
        assert hot.max_row_violation_rel <= 1e-6 and hot.max_bound_violation <= 1e-6, where


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_hot_start_path_equals_a_cold_solve_over_a_structural_stream(seed):
    by_name, by_index = WarmHighs(solver="simplex"), WarmHighs(solver="simplex")
    ctx = registry.BaselineContext()
    stored = None
    kinds = set()
    statuses = []
    for k, p, info, what in _stream(seed):
        kinds.update(what.split("+"))
        cold = solve_highs(p, solver="simplex")
        statuses.append(cold.status)
        where = f"seed {seed} round {k} ({what})"
        _same(by_name.solve(p), cold, f"{where}, instance by name")
        _same(by_index.solve(p, info=info), cold, f"{where}, instance by index")
        hot, basis = solve_from_basis(p, stored, round=k)
        _same(hot, cold, f"{where}, stored basis")
        if basis is not None:
            stored = StoredBasis.from_table(basis.to_table())  # as compare keeps it between processes
        ctx.round, ctx.info = k, info
        _same(registry.get("highs-warm").run(p, ctx), cold, f"{where}, registry highs-warm")
    # the stream really had what it claims: structure changes, an infeasible round, hot (not cold) solves
    assert {"add vars", "drop vars", "add row", "drop row", "coefficients", "infeasible row"} <= kinds
    assert Status.PRIMAL_INFEASIBLE in statuses and statuses.count(Status.OPTIMAL) >= ROUNDS - 1
    assert by_name.edits.get("cold") is False and by_index.edits.get("cold") is False
