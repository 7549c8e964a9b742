"""A valid bound on the MILP optimum from any (possibly inexact) dual point of the LP relaxation.

Lagrangian bound (the "dual objective with reduced costs clipped against the bounds" of PDLP,
Applegate et al. 2021, section 3.4, and of HiGHS's dual objective): in minimisation form, for any y
whose sign matches a finite row bound (y_i > 0 only if row_lower_i is finite, y_i < 0 only if
row_upper_i is finite),

    L(y) = sum_i [y_i > 0] y_i rl_i + [y_i < 0] y_i ru_i + min_{l <= x <= u} (c - A'y)' x

is a lower bound on the LP optimum, hence on the MILP optimum; the inner minimum takes x_j = l_j where
the reduced cost z_j > 0 and u_j where z_j < 0. Components of y whose sign points at an infinite row
bound are projected to 0 first (this keeps L valid; it only loosens it). Integer columns use their bounds
rounded inward, which every integer point satisfies. When some z_j needs an infinite bound, no finite
bound follows from this y: the result is -inf (+inf for a maximisation).

:func:`choice_lagrangian_bound` keeps the choice rows (``structure.py``: at most / exactly one binary of
the row is 1) inside the inner minimum instead of dualizing them (Lagrangian relaxation of the coupling
rows only; Geoffrion 1974, "Lagrangean relaxation for integer programming"; Fisher 1981): the inner
problem then picks, per choice row, the member with the most negative reduced cost (or none), which is
exact for integer points and at least as tight as dualizing the row with ANY dual value. Its bound
depends only on the duals of the other rows (Sia: 7 GPU-capacity rows instead of 3,000 job rows), which
a first-order method gets right long before the per-job duals (Sia 10,240 after 128 PDHG iterations:
gap 7.0% -> 2.7% for the same rounded point).
"""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem

EPS = np.finfo(np.float64).eps


#: sweeps of :func:`implied_bounds` always made (unless nothing changes): the fixed count it had before #15
IMPLIED_MIN_SWEEPS = 3
#: sweeps at most: each is one vectorized pass over the nonzeros (about 20 (nnz,) temporaries), so the cap keeps
#: the whole at most this many passes; a bound that a chain of rows carries from column to column needs one sweep
#: per link (dcmulti: 5 sweeps bound its 473 unbounded columns, 3 left 190 of them infinite and the round's
#: Lagrangian bound -inf)
IMPLIED_MAX_SWEEPS = 64
#: after ``IMPLIED_MIN_SWEEPS``, a sweep counts as progress only when it makes a bound finite or moves one by more
#: than this relative to max(1, |bound|) (a geometric creep, x <= y/2 + 1 and y <= x/2 + 1, otherwise runs to the cap)
IMPLIED_MIN_MOVE = 1e-3


def implied_bounds(problem: Problem, lower: np.ndarray, upper: np.ndarray, max_sweeps: int = IMPLIED_MAX_SWEEPS):
    """(n,) bounds valid for every point satisfying the rows and ``lower``/``upper`` (vectorized), swept to a
    fixed point.

    Each sweep computes, per row, the minimum and maximum activity (finite part and count of infinite
    terms) and, per nonzero, the bound the row implies on its column given the other columns' bounds;
    results are intersected with the current bounds (never loosened) and loosened by 1e-9 relative. Sweeps
    stop when one changes nothing, or (after ``IMPLIED_MIN_SWEEPS``) when one makes no bound finite and moves
    none by more than ``IMPLIED_MIN_MOVE`` relative, or after ``max_sweeps``.

    Args:
        problem: the model (n columns, m rows, nnz nonzeros).
        lower, upper: (n,) float column bounds (+-inf allowed).
        max_sweeps: the cap on sweeps (each O(nnz) numpy work, no Python loop over nonzeros).
    Returns:
        (lo, up): fresh (n,) float64 arrays with lower <= lo and up <= upper (elementwise).
    """
    lo = lower.astype(np.float64, copy=True)
    up = upper.astype(np.float64, copy=True)
    m = problem.n_rows
    if problem.nnz == 0 or m == 0:
        return lo, up
    col = np.repeat(np.arange(problem.n_cols), np.diff(problem.a_indptr))
    row = problem.a_indices
    a = problem.a_data
    rl, ru = problem.row_lower[row], problem.row_upper[row]
    for sweep in range(max_sweeps):
        mn = np.where(a > 0, a * lo[col], a * up[col])
        mx = np.where(a > 0, a * up[col], a * lo[col])
        mni, mxi = ~np.isfinite(mn), ~np.isfinite(mx)
        fmin = np.bincount(row, weights=np.where(mni, 0.0, mn), minlength=m)
        fmax = np.bincount(row, weights=np.where(mxi, 0.0, mx), minlength=m)
        nmin = np.bincount(row, weights=mni.astype(float), minlength=m)
        nmax = np.bincount(row, weights=mxi.astype(float), minlength=m)
        # activity of the other columns: min/max, finite only when no other term is infinite
        omin = np.where(nmin[row] - mni == 0, fmin[row] - np.where(mni, 0.0, mn), -np.inf)
        omax = np.where(nmax[row] - mxi == 0, fmax[row] - np.where(mxi, 0.0, mx), np.inf)
        # rounding error of those sums (cancellation: 0.3 + 1e11 - 1e11 loses 3e-6): (row length + 2) eps
        # times the row's sum of magnitudes, divided by |a| like the bound itself
        cnt = np.bincount(row, minlength=m)[row] + 2.0
        smin = np.bincount(row, weights=np.where(mni, 0.0, np.abs(mn)), minlength=m)[row]
        smax = np.bincount(row, weights=np.where(mxi, 0.0, np.abs(mx)), minlength=m)[row]
        with np.errstate(invalid="ignore", over="ignore"):
            hi_val = (ru - omin) / a   # from a x_j <= ru - omin: upper if a > 0, lower if a < 0
            lo_val = (rl - omax) / a   # from a x_j >= rl - omax: lower if a > 0, upper if a < 0
            hi_err = cnt * EPS * (smin + np.where(np.isfinite(ru), np.abs(ru), 0.0)) / np.abs(a)
            lo_err = cnt * EPS * (smax + np.where(np.isfinite(rl), np.abs(rl), 0.0)) / np.abs(a)
        new_up = np.where(a > 0, hi_val + hi_err, lo_val + lo_err)  # loosened outward either way
        new_lo = np.where(a > 0, lo_val - lo_err, hi_val - hi_err)
        new_up = np.where(np.isnan(new_up), np.inf, new_up)
        new_lo = np.where(np.isnan(new_lo), -np.inf, new_lo)
        new_up = new_up + 1e-9 * np.maximum(1.0, np.abs(new_up))
        new_lo = new_lo - 1e-9 * np.maximum(1.0, np.abs(new_lo))
        cu = np.full(problem.n_cols, np.inf)
        cl = np.full(problem.n_cols, -np.inf)
        np.minimum.at(cu, col, new_up)
        np.maximum.at(cl, col, new_lo)
        nlo, nup = np.maximum(lo, cl), np.minimum(up, cu)
        if np.array_equal(nlo, lo) and np.array_equal(nup, up):
            break
        nlo, nup = np.minimum(nlo, nup), np.maximum(nup, nlo)
        progress = sweep + 1 < IMPLIED_MIN_SWEEPS or _bounds_progress(lo, up, nlo, nup)
        lo, up = nlo, nup
        if not progress:
            break
    return lo, up


def _bounds_progress(lo: np.ndarray, up: np.ndarray, nlo: np.ndarray, nup: np.ndarray) -> bool:
    """A sweep from (lo, up) to (nlo, nup) ((n,) each, never looser) made a bound finite or moved one by more
    than ``IMPLIED_MIN_MOVE`` relative to max(1, |bound|)."""
    if np.any(np.isfinite(nlo) & ~np.isfinite(lo)) or np.any(np.isfinite(nup) & ~np.isfinite(up)):
        return True
    with np.errstate(invalid="ignore"):  # inf - inf where a bound stays infinite: NaN, not a move
        move_lo = np.nan_to_num(nlo - lo, nan=0.0) > IMPLIED_MIN_MOVE * np.maximum(1.0, np.abs(nlo))
        move_up = np.nan_to_num(up - nup, nan=0.0) > IMPLIED_MIN_MOVE * np.maximum(1.0, np.abs(nup))
    return bool(np.any(move_lo) or np.any(move_up))


def _implied_box(problem: Problem, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) ((n,) each) with their infinite entries replaced by :func:`implied_bounds` (the same arrays
    when every bound is finite): the box that :func:`_box_term` falls back to, computed once."""
    if np.all(np.isfinite(lower)) and np.all(np.isfinite(upper)):
        return lower, upper
    ilo, iup = implied_bounds(problem, lower, upper)
    return np.where(np.isfinite(lower), lower, ilo), np.where(np.isfinite(upper), upper, iup)


def lagrangian_bound(problem: Problem, y: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> float:
    """Bound on the optimum of ``problem`` (its own sense, offset included) from row duals ``y``.

    Args:
        problem: the model (n columns, m rows).
        y: (m,) row duals in HiGHS's sign convention for the problem's own sense (reduced cost = c - A'y).
        lower, upper: (n,) column bounds valid for every feasible point (e.g. integer bounds rounded inward).
    Returns:
        A lower bound (minimisation) / upper bound (maximisation) on the optimum; +-inf when none follows.
    """
    s = problem.sense
    z, row_term, zmag, row_mag = _dualized_terms(problem, y)
    if not np.all(np.isfinite(z)):
        return -s * np.inf  # duals so large that A'y overflows: no bound from them
    col_term, x = _box_term(problem, z, lower, upper, with_point=True)
    if x is None:
        return -s * np.inf
    value = row_term + col_term - _allowance(problem, row_mag + _col_mag(z, x, lower, upper, zmag))
    return s * value + problem.offset


def _row_part(problem: Problem, y: np.ndarray, zero_rows: np.ndarray | None = None):
    """Minimisation-form duals ym (m,) of ``y``, the Lagrangian's row term and the sum of its terms' magnitudes.

    Duals whose sign points at an infinite row bound are projected to 0, as are the rows ``zero_rows`` (kept
    in the inner problem, not dualized); NaN and infinite duals count as 0.
    """
    ym = problem.sense * np.nan_to_num(np.asarray(y, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    rl, ru = problem.row_lower, problem.row_upper
    ym = np.where(((ym > 0) & ~np.isfinite(rl)) | ((ym < 0) & ~np.isfinite(ru)), 0.0, ym)
    if zero_rows is not None:
        ym[zero_rows] = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        bterm = (np.where(ym > 0, ym * np.where(np.isfinite(rl), rl, 0.0), 0.0)
                 + np.where(ym < 0, ym * np.where(np.isfinite(ru), ru, 0.0), 0.0))
    return ym, float(np.sum(bterm)), float(np.sum(np.abs(bterm)))


def _dualized_terms(problem: Problem, y: np.ndarray, keep_rows: np.ndarray | None = None):
    """Minimisation-form reduced costs z (n,) and row term of the Lagrangian at duals ``y`` (m,).

    Duals are taken as :func:`_row_part` does (``keep_rows`` are kept in the inner problem, not dualized);
    reduced costs within the floating-point error of computing them are 0 (their sign is noise). Returns
    (z, row_term, zmag, row_mag): zmag (n,) = |c| + |A|'|y|, the scale of each z_j's rounding error, and
    row_mag the sum of the row term's magnitudes (for :func:`_allowance`).
    """
    ym, row_term, row_mag = _row_part(problem, y, keep_rows)
    c = problem.sense * problem.cost
    with np.errstate(over="ignore", invalid="ignore"):
        z = c - problem.rmatvec(ym)
        zmag = np.abs(c) + problem.rmatvec(np.abs(ym), absolute=True)
        z = np.where(np.abs(z) <= 64 * EPS * zmag, 0.0, z)
    return z, row_term, zmag, row_mag


def _col_mag(z: np.ndarray, x: np.ndarray, lower: np.ndarray, upper: np.ndarray, zmag: np.ndarray) -> float:
    """Scale of the rounding error of sum z_j x_j: zmag_j |x_j|, and zmag_j max(|l_j|, |u_j|) (finite
    bounds) where z_j was set to 0 as noise (its true sign could pick either bound)."""
    with np.errstate(invalid="ignore", over="ignore"):
        box = np.maximum(np.where(np.isfinite(lower), np.abs(lower), 0.0),
                         np.where(np.isfinite(upper), np.abs(upper), 0.0))
        return float(np.sum(zmag * np.where(z == 0.0, box, np.abs(x))))


def _allowance(problem: Problem, mag: float) -> float:
    """Worst-case rounding error of a Lagrangian value whose terms sum to ``mag`` in magnitude: (64 + n + m)
    eps mag (the reduced costs' noise threshold plus the summation of n + m terms). Subtracted from the
    minimisation-form value so that the bound stays valid in floating point: with coefficients or duals
    of 1e11 the plain sums were 6e-7 too tight (a max problem's bound 4.4999994 for an optimum of 4.5)."""
    return (64.0 + problem.n_cols + problem.n_rows) * EPS * mag


def _box_term(problem: Problem, z: np.ndarray, lower: np.ndarray, upper: np.ndarray, with_point: bool = False,
              implied: bool = True):
    """min over lower <= x <= upper of z'x (minimisation form); -inf when some z_j needs an infinite bound
    that the rows do not imply either (``implied_bounds``; not tried with ``implied=False``, for a box that
    already holds them). With ``with_point``: (value, x) with x (n,) a minimiser (0 clipped into the bounds
    where z_j = 0), or (-inf, None)."""
    need_lo = z > 0
    need_up = z < 0
    if implied and (np.any(need_lo & ~np.isfinite(lower)) or np.any(need_up & ~np.isfinite(upper))):
        lower, upper = _implied_box(problem, lower, upper)
    if np.any(need_lo & ~np.isfinite(lower)) or np.any(need_up & ~np.isfinite(upper)):
        return (-np.inf, None) if with_point else -np.inf
    value = float(np.sum(np.where(need_lo, z * np.where(need_lo, lower, 0.0), 0.0))
                  + np.sum(np.where(need_up, z * np.where(need_up, upper, 0.0), 0.0)))
    if not with_point:
        return value
    return value, np.where(need_lo, lower, np.where(need_up, upper, np.clip(0.0, lower, upper)))


def choice_lagrangian_bound(problem: Problem, y: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                            choice_rows: np.ndarray, choice_kind: np.ndarray, csr_indptr: np.ndarray,
                            csr_indices: np.ndarray) -> float:
    """Bound on the MILP optimum of ``problem`` with its choice rows kept in the inner problem.

    Args:
        problem: the MILP (n columns, m rows), its own sense.
        y: (m,) row duals (HiGHS's sign convention for the problem's sense); choice rows' entries are unused.
        lower, upper: (n,) bounds valid for every integer point (integer bounds rounded inward).
        choice_rows, choice_kind: (k,) choice row indices and kinds (``structure.LE1``/``EQ1``), as found by
            ``structure.detect_structure``; rows sharing a column with another choice row, or with two
            members fixed at 1, or (EQ1) with no member allowed to be 1, are dualized instead.
        csr_indptr, csr_indices: CSR pattern of A ((m+1,), (nnz,)).
    Returns:
        A lower (minimisation) / upper (maximisation) bound on the MILP optimum, never weaker than
        :func:`lagrangian_bound` at the same ``y`` with any choice-row duals; +-inf when none follows.
    """
    lag = ChoiceLagrangian(problem, lower, upper, choice_rows, choice_kind, csr_indptr, csr_indices)
    return lag.evaluate(y)[0]


class ChoiceLagrangian:
    """The Lagrangian relaxation of every row except the (usable) choice rows, which stay in the inner problem.

    The membership of the kept choice rows is computed once (``__init__``, O(nnz of the choice rows)), so
    that :meth:`evaluate` is one numba pass over the matrix (``lagrangian_kernel.choice_inner``): the dual
    ascent of ``solver.integer.ascent`` evaluates it a few dozen times per stage. :meth:`evaluate_ref` is
    its plain-numpy twin (and the fallback when a reduced cost needs a bound that only the rows imply).

    Attributes:
        dualized: (m,) bool, rows whose duals enter the bound (every row but the kept choice rows).
        rows_k: (k,) int64, the kept choice rows.
        box_lower, box_upper: (n,) the inner problem's bounds: ``lower``/``upper`` with infinite entries replaced
            by the rows' implied bounds (``implied_bounds``, swept once at construction).
    """

    def __init__(self, problem: Problem, lower: np.ndarray, upper: np.ndarray, choice_rows: np.ndarray,
                 choice_kind: np.ndarray, csr_indptr: np.ndarray, csr_indices: np.ndarray):
        """Arguments as in :func:`choice_lagrangian_bound` (without ``y``)."""
        from solver.integer.structure import EQ1

        self.problem = problem
        self.lower = np.asarray(lower, dtype=np.float64)
        self.upper = np.asarray(upper, dtype=np.float64)
        n, m = problem.n_cols, problem.n_rows
        order = np.argsort(np.asarray(choice_rows, dtype=np.int64), kind="stable")
        rows = np.asarray(choice_rows, dtype=np.int64)[order]
        kinds = np.asarray(choice_kind)[order]
        self.dualized = np.ones(m, dtype=bool)
        self.other = np.ones(n, dtype=bool)
        self.rows_k = rows[:0]
        self.free_ptr = np.zeros(1, dtype=np.int64)
        self.free_mem = np.zeros(0, dtype=np.int64)
        self.forced_col = np.zeros(0, dtype=np.int64)
        self.eq1 = np.zeros(0, dtype=bool)
        if rows.size:
            cnt = csr_indptr[rows + 1] - csr_indptr[rows]
            rid = np.repeat(np.arange(rows.size), cnt)
            pos = np.arange(cnt.sum()) + np.repeat(csr_indptr[rows] - np.cumsum(cnt) + cnt, cnt)
            mem = csr_indices[pos].astype(np.int64)
            # keep a row only when its members are in no other choice row, at most one is forced to 1 and,
            # for "exactly one", some member may be 1
            shared = np.bincount(mem, minlength=n)[mem] > 1
            forced = self.lower[mem] >= 0.5
            free = (self.upper[mem] >= 0.5) & ~forced
            k = rows.size
            bad = (np.bincount(rid, weights=shared, minlength=k) > 0) | (np.bincount(rid, weights=forced,
                                                                                      minlength=k) > 1)
            bad |= (kinds == EQ1) & (np.bincount(rid, weights=free | forced, minlength=k) == 0)
            keep_mem = ~bad[rid]
            self.rows_k = rows[~bad]
            if self.rows_k.size:
                kk = self.rows_k.size
                self.dualized[self.rows_k] = False
                rid_k = (np.cumsum(~bad) - 1)[rid[keep_mem]]
                mem_k = mem[keep_mem]
                self.eq1 = kinds[~bad] == EQ1
                forced_k, free_k = forced[keep_mem], free[keep_mem]
                self.forced_col = np.full(kk, -1, dtype=np.int64)
                self.forced_col[rid_k[forced_k]] = mem_k[forced_k]
                self.free_mem = mem_k[free_k]
                self.free_ptr = np.concatenate(([0], np.cumsum(np.bincount(rid_k[free_k], minlength=kk))))
                self.other[mem_k] = False
        self.c_min = problem.sense * problem.cost
        self._z, self._x, self._act = np.empty(n), np.empty(n), np.empty(m)
        # the inner problem's box: infinite bounds replaced by the rows' implied ones, swept once here instead of
        # at every evaluation (dcmulti: 473 columns without an upper bound sent each one to the numpy path)
        self.box_lower, self.box_upper = _implied_box(problem, self.lower, self.upper)

    def evaluate(self, y: np.ndarray) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """The bound at row duals ``y`` (m,), the inner problem's minimiser and its row activities.

        Returns:
            (bound, x, act): the bound in the problem's sense, offset included (+-inf when none follows);
            x (n,) an inner minimiser (kept choice rows: their best member, the first in row order among
            equals, or none; other columns: the bound their reduced cost points at, 0 clipped into the
            bounds where it is 0) and act = A x (m,); both None when the bound is infinite. x and act are
            work arrays that the next call overwrites.
        """
        from solver.integer.lagrangian_kernel import choice_inner

        p = self.problem
        ym, row_term, row_mag = _row_part(p, y, self.rows_k)
        value, mag, ok = choice_inner(p.a_indptr, p.a_indices, p.a_data, self.c_min, ym, self.box_lower, self.box_upper,
                                      self.other, self.free_ptr, self.free_mem, self.forced_col, self.eq1,
                                      self._z, self._x, self._act)
        if not ok:  # a reduced cost needs a bound that even the rows do not imply, or is not finite (huge
            return self.evaluate_ref(y)  # duals): the numpy path says which (-inf either way)
        value = row_term + value - _allowance(p, row_mag + mag)
        return p.sense * value + p.offset, self._x, self._act

    def reduced_costs(self, y: np.ndarray) -> np.ndarray:
        """(n,) minimisation-form reduced costs c - A'y at row duals ``y`` (m,), the kept choice rows' duals
        taken as 0 and values within rounding noise set to 0 (a fresh array)."""
        self.evaluate(y)
        return self.last_reduced_costs()

    def last_reduced_costs(self) -> np.ndarray:
        """(n,) the reduced costs of the last :meth:`evaluate` (as :meth:`reduced_costs` at its duals; a fresh
        array), so a caller that needs the bound, its minimiser and the reduced costs pays one evaluation."""
        return self._z.copy()  # the kernel's first pass sets every entry, whatever its result

    def evaluate_ref(self, y: np.ndarray) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """Plain-numpy twin of :meth:`evaluate` (same results; fresh arrays)."""
        p = self.problem
        s = p.sense
        z, row_term, zmag, row_mag = _dualized_terms(p, y, keep_rows=self.rows_k)
        if not np.all(np.isfinite(z)):
            return -s * np.inf, None, None  # duals so large that A'y overflows: no bound from them
        kk = self.rows_k.size
        x_kept = np.zeros(p.n_cols)
        has_forced = self.forced_col >= 0
        choice_term = float(np.sum(z[self.forced_col[has_forced]]))
        x_kept[self.forced_col[has_forced]] = 1.0
        best = np.full(kk, np.inf)
        nonempty = np.diff(self.free_ptr) > 0
        if self.free_mem.size:
            zf = z[self.free_mem]
            best[nonempty] = np.minimum.reduceat(zf, self.free_ptr[:-1][nonempty])
        best = np.where(self.eq1, best, np.minimum(best, 0.0))
        take = ~has_forced
        choice_term += float(np.sum(best[take]))
        choice_mag = float(np.sum(zmag[self.forced_col[has_forced]]))
        if self.free_mem.size:  # the first member attaining each row's minimum, where one is taken
            free_rid = np.repeat(np.arange(kk), np.diff(self.free_ptr))
            b = best[free_rid]
            hit = (zf == b) & take[free_rid] & ~((b == 0.0) & ~self.eq1[free_rid])
            idx = np.flatnonzero(hit)
            first = idx[np.flatnonzero(np.diff(free_rid[idx], prepend=-1))]
            x_kept[self.free_mem[first]] = 1.0
            choice_mag += float(np.sum(zmag[self.free_mem[first]]))
        zo = np.where(self.other, z, 0.0)
        col_term, x = _box_term(p, zo, self.box_lower, self.box_upper, with_point=True, implied=False)
        if x is None:
            return -s * np.inf, None, None
        mag = row_mag + choice_mag + _col_mag(zo, x, self.box_lower, self.box_upper, np.where(self.other, zmag, 0.0))
        bound = s * (row_term + choice_term + col_term - _allowance(p, mag)) + p.offset
        if not np.isfinite(bound):
            return bound, None, None
        x = np.where(self.other, x, x_kept)
        return bound, x, p.row_activity(x)
