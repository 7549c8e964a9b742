"""HiGHS hot-started from the previous round: the strongest classical baseline for continual LPs.

Two ways, both keyed by entity NAMES (positions may move between rounds):

- :class:`WarmHighs` keeps one Highs instance alive across rounds (a long-running bench). Each round
  the new problem is compared with the instance's model by name and only the differences are applied
  through highspy edits (``deleteCols/deleteRows``, ``changeColsCost``, ``changeColsBounds``,
  ``changeRowsBounds``, ``changeColsIntegrality``, ``changeCoeff``, ``addRows``, ``addCols``); HiGHS
  keeps its basis and factorization through these edits, so the next ``run()`` is a hot start.
- :class:`StoredBasis` + :func:`solve_from_basis` serve ``copter compare``, where every round is a new
  process: the simplex basis (``getBasis`` column/row statuses) is kept by name as an Arrow table, mapped
  onto the next round's problem (new columns nonbasic at a finite bound, new rows basic slack) and
  passed to a fresh instance with ``setBasis`` as an *alien* basis, which HiGHS repairs if the number of
  basic variables no longer matches the number of rows.

For a MILP a basis is of little use; the previous round's integer point is handed to HiGHS instead
(``setSolution``, by name), as an incumbent to start the branch-and-bound from.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from solver.baselines.highs import apply_solver_options, check_solver, collect, refused, run_highs
from solver.baselines.result import BaselineResult
from solver.highs_bridge import (
    BASIS_BASIC,
    BASIS_LOWER,
    BASIS_UPPER,
    BASIS_ZERO,
    Highs,
    change_sense,
    configure_threads,
    get_basis,
    is_error,
    new_highs,
    pass_model,
    read_point,
    set_basis,
    set_partial_solution,
    to_highs_lp,
)
from solver.model.problem import Problem

LOWER, BASIC, UPPER, ZERO = BASIS_LOWER, BASIS_BASIC, BASIS_UPPER, BASIS_ZERO  #: HiGHS basis status codes


# ----------------------------------------------------------------------------- problem reordering
def permute(problem: Problem, col_order: np.ndarray, row_order: np.ndarray) -> Problem:
    """``problem`` with columns in ``col_order`` and rows in ``row_order`` (index arrays). O(nnz)."""
    A = problem.matrix()[:, col_order][row_order, :].tocsc()
    A.sort_indices()
    return Problem(col_names=problem.col_names[col_order], row_names=problem.row_names[row_order],
                   cost=problem.cost[col_order], col_lower=problem.col_lower[col_order],
                   col_upper=problem.col_upper[col_order], row_lower=problem.row_lower[row_order],
                   row_upper=problem.row_upper[row_order], integrality=problem.integrality[col_order],
                   a_indptr=A.indptr.astype(np.int64), a_indices=A.indices.astype(np.int32),
                   a_data=A.data.astype(np.float64), sense=problem.sense, offset=problem.offset,
                   name=problem.name)


def positions(old_names, new_names) -> np.ndarray:
    """(len(new_names),) int64 position of each new name among ``old_names`` (unique), -1 when absent
    (Arrow's hash lookup; no pandas at run time)."""
    def arrow(names):
        return names if isinstance(names, (pa.Array, pa.ChunkedArray)) else pa.array(names, type=pa.string())

    pos = pc.index_in(arrow(new_names), value_set=arrow(old_names))
    return pos.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _i32(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.int32)


def _f64(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64)


def _changed_coefficients(A0, A1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, cols, new values) of every entry where CSC matrices A0 and A1 (same shape) differ."""
    D = (A1 - A0).tocoo()
    nz = D.data != 0
    r, c = D.row[nz].astype(np.int64), D.col[nz].astype(np.int64)
    A1 = A1.tocsc()
    A1.sort_indices()
    m = A1.shape[0]
    keys = np.repeat(np.arange(A1.shape[1], dtype=np.int64), np.diff(A1.indptr)) * m + A1.indices
    want = c * m + r
    if keys.size == 0:
        return r, c, np.zeros(want.size)
    pos = np.minimum(np.searchsorted(keys, want), keys.size - 1)
    vals = np.where(keys[pos] == want, A1.data[pos], 0.0)  # absent in A1: the entry was removed
    return r, c, vals


# ----------------------------------------------------------------------------- (a) long-running instance
class WarmHighs:
    """A Highs instance kept across rounds; each round's problem is applied as edits (hot start).

    ``cold_solver`` is used for the first (cold) solve only: ``ipm`` (with HiGHS's default crossover, which
    ends at a basis) is much faster than cold simplex on large degenerate LPs and still leaves a basis
    for the simplex hot starts of the later rounds.

    Usage::

        w = WarmHighs(solver="simplex", cold_solver="ipm", threads=1)
        r0 = w.solve(problem_round0)            # cold
        r1 = w.solve(problem_round1)            # edits by name + hot-started run
    """

    def __init__(self, *, solver: str = "simplex", cold_solver: str | None = None, threads: int | None = None,
                 kkt_tolerance: float = 1e-4, name: str = "highs-warm"):
        self.solver = check_solver(solver)
        self.cold_solver = check_solver(cold_solver) if cold_solver is not None else self.solver
        self.threads = threads
        self.kkt_tolerance = kkt_tolerance
        self.name = name
        self.h: Highs | None = None
        self.model: Problem | None = None  # the instance's model, in the instance's column/row order
        self.edits: dict = {}

    def solve(self, problem: Problem, *, time_limit_seconds: float = math.inf, info=None) -> BaselineResult:
        """Solve ``problem`` (n columns, m rows), hot-started from the previous call's instance.

        ``info`` (optional): the ``solver.differential.ApplyInfo`` of the delta that produced ``problem``
        from the previously solved one; its ``col_map``/``row_map`` then replace the name lookups (valid
        because a delta keeps survivors in order and appends new entities, as this instance does).

        Returns a BaselineResult whose x is in ``problem``'s own column order. ``seconds`` is the wall time
        of the edits (finding the differences by name and applying them) plus ``run()``; ``extra`` has
        ``edit_seconds``, ``run_seconds`` and the edit counts. The first call is a cold solve.
        """
        start = time.perf_counter()
        if self.h is not None:
            configure_threads(self.h, self.threads)
            try:
                order = self._apply(problem, info)
            except EditRefused:  # the instance no longer holds a known model: rebuilt cold, which says why
                self.h = None
        if self.h is None:
            self.h = new_highs()
            configure_threads(self.h, self.threads)
            reason = pass_model(self.h, to_highs_lp(problem, with_names=False), problem)
            if reason is not None:  # the next call starts cold again
                self.h = None
                return refused(self.name, problem, time.perf_counter() - start, reason, {"cold": True})
            self.model = problem
            order = np.arange(problem.n_cols)
            self.edits = {"cold": True}
        is_mip = problem.is_mip
        which = self.cold_solver if self.edits.get("cold") else self.solver
        used = apply_solver_options(self.h, which, is_mip=is_mip, kkt_tolerance=self.kkt_tolerance)
        edit_seconds = time.perf_counter() - start
        ran, run_seconds = run_highs(self.h, is_mip=is_mip, time_limit_seconds=time_limit_seconds)
        seconds = time.perf_counter() - start
        inst = collect(self.h, self.model, self.name, seconds, ran=ran, is_mip=is_mip, solver_used=used,
                       extra={"edit_seconds": edit_seconds, "run_seconds": run_seconds, **self.edits})
        if inst.x is not None:  # back to the caller's column order (violations are order-independent)
            x = np.empty(problem.n_cols, dtype=np.float64)
            x[order] = inst.x
            inst.x = x
        return inst

    def _apply(self, new: Problem, info=None) -> np.ndarray:
        """Edit the instance from ``self.model`` to ``new``; returns ``new``'s column index per instance column."""
        h, old = self.h, self.model
        if info is not None and info.old_n_cols == old.n_cols and info.old_n_rows == old.n_rows:
            ci, ri = np.asarray(info.col_map), np.asarray(info.row_map)  # (n1,), (m1,) old position or -1
        else:
            ci, ri = positions(old.col_names, new.col_names), positions(old.row_names, new.row_names)
        old_r, new_of_r, drop_r = _delete_unmatched(h, ri, old.n_rows, h.deleteRows)  # rows first, as ever
        old_c, new_of_c, drop_c = _delete_unmatched(h, ci, old.n_cols, h.deleteCols)
        changed = _change_kept(h, old, new, old_c, old_r, new_of_c, new_of_r)
        add_c, add_r = _add_new(h, new, ci, ri, new_of_c, new_of_r)
        if new.sense != old.sense:
            change_sense(h, new.sense)
        if new.offset != old.offset:
            h.changeObjectiveOffset(float(new.offset))
        col_order = np.concatenate([new_of_c, add_c])
        self.model = permute(new, col_order, np.concatenate([new_of_r, add_r]))
        self.edits = {"cold": False, "dropped_cols": int(drop_c), "dropped_rows": int(drop_r),
                      "added_cols": int(add_c.size), "added_rows": int(add_r.size), **changed}
        return col_order


def _kept(index: np.ndarray, n_old: int):
    """For a name match ``index`` (new entity -> old position or -1): (kept old positions (k,), the new index
    of each kept instance entity (k,), the old positions to drop)."""
    keep = np.zeros(n_old, dtype=bool)
    keep[index[index >= 0]] = True
    pos = np.cumsum(keep) - 1  # instance position after deletion, for kept old entities
    old_k = np.flatnonzero(keep)
    new_of = np.empty(old_k.size, dtype=np.int64)
    sel = np.flatnonzero(index >= 0)
    new_of[pos[index[sel]]] = sel
    return old_k, new_of, np.flatnonzero(~keep)


def _delete_unmatched(h, index: np.ndarray, n_old: int, delete):
    """Delete the instance's entities no new one matches (``delete`` = ``h.deleteCols`` / ``h.deleteRows``);
    returns (kept old positions, their new indices, how many were dropped)."""
    old_k, new_of, drop = _kept(index, n_old)
    if drop.size:
        delete(int(drop.size), _i32(drop))
    return old_k, new_of, drop.size


class EditRefused(Exception):
    """HiGHS refused an edit of the instance (a coefficient of magnitude >= its ``large_matrix_value``, 1e15):
    the instance then holds neither the old model nor the new one."""


def _done(status) -> None:
    """Raise :class:`EditRefused` when an edit call's HighsStatus is an error."""
    if is_error(status):
        raise EditRefused


def _change_kept(h, old: Problem, new: Problem, old_c, old_r, new_of_c, new_of_r) -> dict:
    """Apply the changed costs, bounds, integrality and coefficients of the kept entities; returns the counts."""
    idx = np.arange(old_c.size)
    ch = np.flatnonzero(old.cost[old_c] != new.cost[new_of_c])
    if ch.size:
        _done(h.changeColsCost(int(ch.size), _i32(idx[ch]), _f64(new.cost[new_of_c[ch]])))
    cb = np.flatnonzero((old.col_lower[old_c] != new.col_lower[new_of_c])
                        | (old.col_upper[old_c] != new.col_upper[new_of_c]))
    if cb.size:
        _done(h.changeColsBounds(int(cb.size), _i32(cb), _f64(new.col_lower[new_of_c[cb]]),
                                 _f64(new.col_upper[new_of_c[cb]])))
    ci_ch = np.flatnonzero(old.integrality[old_c] != new.integrality[new_of_c])
    if ci_ch.size:
        h.changeColsIntegrality(int(ci_ch.size), _i32(ci_ch),
                                np.ascontiguousarray(new.integrality[new_of_c[ci_ch]], dtype=np.uint8))
    rb = np.flatnonzero((old.row_lower[old_r] != new.row_lower[new_of_r])
                        | (old.row_upper[old_r] != new.row_upper[new_of_r]))
    if rb.size:
        _done(h.changeRowsBounds(int(rb.size), _i32(rb), _f64(new.row_lower[new_of_r[rb]]),
                                 _f64(new.row_upper[new_of_r[rb]])))
    r, c, v = _changed_coefficients(old.matrix()[:, old_c][old_r, :], new.matrix()[:, new_of_c][new_of_r, :])
    for rr, cc, vv in zip(r.tolist(), c.tolist(), v.tolist(), strict=True):  # one call per changed entry
        _done(h.changeCoeff(rr, cc, vv))
    return {"changed_costs": int(ch.size), "changed_col_bounds": int(cb.size), "changed_row_bounds": int(rb.size),
            "changed_coefficients": int(r.size)}


def _add_new(h, new: Problem, ci, ri, new_of_c, new_of_r):
    """Append the new rows (coefficients on kept columns) then the new columns (on every row); returns
    (new column indices, new row indices) in the order appended."""
    n_k, m_k = new_of_c.size, new_of_r.size
    A_new = new.matrix()
    add_r, add_c = np.flatnonzero(ri < 0), np.flatnonzero(ci < 0)
    inst_of_new_r = np.full(new.n_rows, -1, dtype=np.int64)
    inst_of_new_r[new_of_r] = np.arange(m_k)
    inst_of_new_r[add_r] = m_k + np.arange(add_r.size)
    if add_r.size:  # new rows with their coefficients on kept columns
        R = A_new[add_r, :][:, new_of_c].tocsr()
        _done(h.addRows(int(add_r.size), _f64(new.row_lower[add_r]), _f64(new.row_upper[add_r]), int(R.nnz),
                        _i32(R.indptr[:-1]), _i32(R.indices), _f64(R.data)))
    if add_c.size:  # new columns with their coefficients on every row (instance positions)
        C = A_new[:, add_c].tocsc()
        _done(h.addCols(int(add_c.size), _f64(new.cost[add_c]), _f64(new.col_lower[add_c]),
                        _f64(new.col_upper[add_c]), int(C.nnz), _i32(C.indptr[:-1]),
                        _i32(inst_of_new_r[C.indices]), _f64(C.data)))
        integ = np.flatnonzero(new.integrality[add_c])
        if integ.size:
            h.changeColsIntegrality(int(integ.size), _i32(n_k + integ), np.ones(integ.size, dtype=np.uint8))
    return add_c, add_r


# ----------------------------------------------------------------------------- (b) basis by name
@dataclass(eq=False)
class StoredBasis:
    """A simplex basis (and point) by name, to warm-start a later round in another process.

    Attributes:
        col_names, row_names: (n,), (m,) object arrays of names.
        col_status, row_status: (n,), (m,) int8 HiGHS basis status codes (kLower=0, kBasic=1, kUpper=2,
            kZero=3, kNonbasic=4).
        col_value: (n,) float64 primal values (used as a MILP start).
        round: the round the basis was computed for (-1 if unknown).
        generation_id: the ``id`` of that round's generation (``generation.json``) when a state keeps the basis
            (:mod:`solver.rounds.basis_store`), so a round of another branch never uses it; None if unknown.
    """

    col_names: np.ndarray
    col_status: np.ndarray
    row_names: np.ndarray
    row_status: np.ndarray
    col_value: np.ndarray
    round: int = -1
    generation_id: str | None = None

    def to_table(self) -> pa.Table:
        """Arrow table with columns ``kind`` (col/row), ``name``, ``status`` (int8), ``value`` (float64);
        schema metadata ``copter.round`` (and ``copter.generation_id`` when known)."""
        n, m = self.col_names.size, self.row_names.size
        t = pa.table({
            "kind": pa.array(np.r_[np.full(n, "col", dtype=object), np.full(m, "row", dtype=object)], pa.string()),
            "name": pa.array(np.r_[self.col_names, self.row_names], pa.string()),
            "status": pa.array(np.r_[self.col_status, self.row_status].astype(np.int8), pa.int8()),
            "value": pa.array(np.r_[self.col_value, np.full(m, np.nan)], pa.float64()),
        })
        meta = {"copter.round": str(self.round)}
        if self.generation_id is not None:
            meta["copter.generation_id"] = self.generation_id
        return t.replace_schema_metadata(meta)

    @classmethod
    def from_table(cls, t: pa.Table) -> StoredBasis:
        """Inverse of :meth:`to_table`."""
        kind = t.column("kind").to_numpy(zero_copy_only=False)
        is_col = kind == "col"
        name = t.column("name").to_numpy(zero_copy_only=False).astype(object)
        status = t.column("status").to_numpy().astype(np.int8)
        value = t.column("value").to_numpy()
        meta = t.schema.metadata or {}
        gid = meta.get(b"copter.generation_id")
        return cls(col_names=name[is_col], col_status=status[is_col], row_names=name[~is_col],
                   row_status=status[~is_col], col_value=value[is_col],
                   round=int(meta.get(b"copter.round", b"-1")), generation_id=None if gid is None else gid.decode())

    @classmethod
    def from_highs(cls, h: Highs, problem: Problem, round: int = -1) -> StoredBasis | None:
        """The basis and point of a solved instance holding ``problem`` (None without a valid basis or point)."""
        n, m = problem.n_cols, problem.n_rows
        basis = get_basis(h, n, m)
        x = read_point(h, n, is_mip=False)
        if basis is None and x is None:
            return None
        cs, rs = basis if basis is not None else (np.full(n, -1, np.int8), np.full(m, -1, np.int8))
        x = x if x is not None else np.full(n, np.nan)
        return cls(col_names=problem.col_names, col_status=cs, row_names=problem.row_names, row_status=rs,
                   col_value=x, round=round)

    @property
    def has_basis(self) -> bool:
        return bool((self.col_status >= 0).all() and (self.row_status >= 0).all())


def _nonbasic_at_bound(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Status of a nonbasic entity at its finite bound: kLower, else kUpper, else kZero (free)."""
    return np.where(np.isfinite(lower), LOWER, np.where(np.isfinite(upper), UPPER, ZERO)).astype(np.int8)


def _fix_nonbasic(status: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Replace statuses that name an infinite bound (bounds may have changed) by a valid nonbasic one."""
    bad = ((status == LOWER) & ~np.isfinite(lower)) | ((status == UPPER) & ~np.isfinite(upper)) | \
          ((status == ZERO) & (np.isfinite(lower) | np.isfinite(upper)))
    return np.where(bad, _nonbasic_at_bound(lower, upper), status).astype(np.int8)


def map_basis(stored: StoredBasis, problem: Problem) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Map ``stored`` onto ``problem`` by name.

    Returns:
        (col_status (n,), row_status (m,), col_value (n,)): known entities keep their status (made
        consistent with the current bounds); new columns are nonbasic at a finite bound (value: the bound
        nearest 0), new rows basic. The number of basic entities may differ from m: HiGHS repairs that
        when the basis is passed as alien.
    """
    ci, ri = positions(stored.col_names, problem.col_names), positions(stored.row_names, problem.row_names)
    default_c = _nonbasic_at_bound(problem.col_lower, problem.col_upper)
    cs = np.where(ci >= 0, stored.col_status[np.maximum(ci, 0)], default_c)
    rs = np.where(ri >= 0, stored.row_status[np.maximum(ri, 0)], BASIC).astype(np.int8)
    cs = _fix_nonbasic(cs.astype(np.int8), problem.col_lower, problem.col_upper)
    rs = _fix_nonbasic(rs, problem.row_lower, problem.row_upper)
    start = np.clip(0.0, problem.col_lower, problem.col_upper)
    x = np.where(ci >= 0, stored.col_value[np.maximum(ci, 0)], start)
    x = np.clip(np.where(np.isnan(x), start, x), problem.col_lower, problem.col_upper)
    return cs, rs, x


def solve_from_basis(problem: Problem, stored: StoredBasis | None, *, solver: str = "simplex",
                     time_limit_seconds: float = math.inf, threads: int | None = None,
                     kkt_tolerance: float = 1e-4, round: int = -1,
                     name: str = "highs-warm") -> tuple[BaselineResult, StoredBasis | None]:
    """Solve ``problem`` in a fresh instance, hot-started from ``stored`` (mapped by name).

    LP: the mapped basis is set as an alien basis (``setBasis``); if HiGHS refuses it the solve runs
    cold and the message says so. MILP: the stored point is offered as a start (``setSolution``).
    ``stored=None`` is a cold solve.

    Returns:
        (result, basis of this solve for the next round, or None).
    """
    check_solver(solver)
    start = time.perf_counter()
    h = new_highs()
    configure_threads(h, threads)
    used = apply_solver_options(h, solver, is_mip=problem.is_mip, kkt_tolerance=kkt_tolerance)
    reason = pass_model(h, to_highs_lp(problem, with_names=False), problem)
    if reason is not None:
        return refused(name, problem, time.perf_counter() - start, reason, {"solver": used}), stored
    how = "cold (no stored basis)"
    if stored is not None:
        cs, rs, x0 = map_basis(stored, problem)
        if problem.is_mip:
            ok = set_partial_solution(h, np.arange(problem.n_cols), x0)
            how = f"start point from round {stored.round}" if ok else how
        elif stored.has_basis:
            how = (f"basis from round {stored.round}" if set_basis(h, cs, rs)
                   else "cold (HiGHS refused the mapped basis)")
    setup = time.perf_counter() - start
    ran, run_seconds = run_highs(h, is_mip=problem.is_mip, time_limit_seconds=time_limit_seconds)
    seconds = time.perf_counter() - start
    res = collect(h, problem, name, seconds, ran=ran, is_mip=problem.is_mip, solver_used=used,
                  extra={"setup_seconds": setup, "run_seconds": run_seconds, "warm_from": how})
    res.message += f"; {how}"
    return res, (StoredBasis.from_highs(h, problem, round) if ran else None)


def solve_from_basis_bounded(problem: Problem, stored: StoredBasis | None, *, time_limit_seconds: float = math.inf,
                             grace_seconds: float = 10.0, **kw) -> tuple[BaselineResult, StoredBasis | None]:
    """:func:`solve_from_basis` under a hard wall limit for a MILP with a finite time limit (child process
    killed at ``time_limit_seconds + grace_seconds``, see :mod:`solver.baselines.guard`); LPs run here.

    A killed solve returns (TIME_LIMIT result without a point, ``stored`` unchanged).
    """
    if not (problem.is_mip and math.isfinite(time_limit_seconds)):
        return solve_from_basis(problem, stored, time_limit_seconds=time_limit_seconds, **kw)
    from solver.baselines.guard import run_with_deadline
    from solver.baselines.result import make_result
    from solver.model.status import Status

    kw["time_limit_seconds"] = time_limit_seconds
    outcome, value, seconds = run_with_deadline(solve_from_basis, (problem, stored), kw,
                                                wall_seconds=time_limit_seconds + grace_seconds)
    name = kw.get("name", "highs-warm")
    if outcome == "ok":
        value[0].extra["hard_limit"] = True
        return value
    if outcome == "killed":
        return make_result(name, problem, Status.TIME_LIMIT, None, seconds, hit_limit=True,
                           message=f"HiGHS killed at the wall deadline ({time_limit_seconds:g} s + "
                                   f"{grace_seconds:g} s grace)", extra={"hard_limit": True}), stored
    return make_result(name, problem, Status.NUMERICAL_ERROR, None, seconds,
                       message=f"HiGHS child process failed: {value}", extra={"hard_limit": True}), stored
