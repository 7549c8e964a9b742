"""The rounding pipeline on integer columns: round (decide) -> repair -> fill.

Given an LP point, every integer column gets a preferred value and an alternative:

- binaries in choice rows: 1 when the LP value exceeds ``CHOICE_MIN`` (tried in order of LP value, so a
  choice row takes its largest LP member that keeps every row satisfiable), else 0;
- binaries that are VUB parents (``r <= x``) of a column with a positive LP value: 1 (keeps the LP's
  continuous point feasible), else nearest;
- other integers: nearest rounding of the LP value (clipped into the inward-rounded bounds), the
  alternative is the other side (x1 + x2 = 3 at (1.5, 1.5) becomes (2, 1), not (2, 2)).

Round = two decide passes (kernels.decide_pass): first the columns moving above their lower bound in
order of confidence ``1 - |x_lp - preferred|`` (ties: previous round's value ``warm_start.integer_x``
first, then better objective), then every other column, least attractive alternative first and forced.
Repair moves columns of violated rows, least valuable first (kernels.repair_pass). Fill moves columns
in their improving direction while every row stays satisfied, largest objective gain first, with
continuous columns pinned at their LP values so the LP's continuous point stays usable, then 1-swaps
inside choice rows (a job moves to a better configuration when capacity allows) and fill once more.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from solver.integer import kernels as K
from solver.integer.structure import Structure, row_reduce
from solver.model.problem import Problem

CHOICE_MIN = 1e-3   #: LP value above which a choice-row binary is a rounding candidate
VUB_MIN = 1e-6      #: relative LP value of a VUB child above which its parent rounds up
VUB_LADDER = (1e-1, 1e-2, 1e-3)  #: sparser VUB thresholds tried first when VUB links exist (vub_thresholds)
TIE_QUANTUM = 1e-3
BULK_LOCK_FREE = True  #: decide lock-free columns of the forced pass at once (_decide_lock_free)  #: LP confidences closer than this count as ties (first-order LP points are inexact)


@dataclass
class RoundingOutcome:
    """Integer values of the pipeline and what each step changed.

    Attributes:
        x: (n,) float64; integer columns hold their decided values, continuous columns their LP values.
        x_before_fill: (n,) the same point before the fill step (used when fill breaks the continuous LP).
        rows_violated: rows still violated after repair (activity bounds; 0 means integer-feasible rows).
        steps: list of {"step", "changed", "seconds"} dicts.
    """

    x: np.ndarray
    x_before_fill: np.ndarray
    rows_violated: int
    steps: list = field(default_factory=list)


def build_model(problem: Problem, st: Structure):
    """The kernels' model tuple M (see ``kernels.py``) for ``problem`` in minimisation form."""
    n = problem.n_cols
    rl, ru = problem.row_lower, problem.row_upper
    mag = np.maximum(np.where(np.isfinite(rl), np.abs(rl), 0.0), np.where(np.isfinite(ru), np.abs(ru), 0.0))
    rtol = 1e-9 * np.maximum(1.0, mag)
    # max_j |a_ij| per row over the structure's CSR copy (one reduceat; np.maximum.at over the CSC indices took
    # 18 ms at Sia 10,240's 487k nonzeros), 0 for an empty row
    amax = row_reduce(np.maximum, np.abs(st.csr_data), st.csr_indptr, 0.0)
    w = 1.0 / np.maximum(1.0, amax)
    # VUB maps, one entry per (parent, child) pair (tightest ratio kept)
    par, chi, rat = st.vub_parent, st.vub_child, st.vub_ratio
    if par.size:
        key = par * n + chi
        o = np.lexsort((rat, key))
        key, par, chi, rat = key[o], par[o], chi[o], rat[o]
        first = np.ones(key.size, dtype=bool)
        first[1:] = key[1:] != key[:-1]
        par, chi, rat = par[first], chi[first], rat[first]
    pptr = np.concatenate(([0], np.cumsum(np.bincount(par, minlength=n)))).astype(np.int64)
    op = np.argsort(par, kind="stable")
    qptr = np.concatenate(([0], np.cumsum(np.bincount(chi, minlength=n)))).astype(np.int64)
    oq = np.argsort(chi, kind="stable")
    return (problem.a_indptr.astype(np.int64), problem.a_indices.astype(np.int64), problem.a_data,
            st.csr_indptr, st.csr_indices, st.csr_data, rl, ru, rtol, w,
            problem.integrality.copy(), st.lower, st.upper, problem.sense * problem.cost,
            pptr, chi[op].astype(np.int64), rat[op], qptr, par[oq].astype(np.int64), rat[oq])


def initial_state(M, dl: np.ndarray, du: np.ndarray):
    """State tuple S for domains [dl, du] (copied; VUB children's upper bounds follow their parents)."""
    dl = dl.astype(np.float64, copy=True)
    du = du.astype(np.float64, copy=True)
    qptr, qpar, qratio = M[17], M[18], M[19]
    if qpar.size:
        chi = np.repeat(np.arange(dl.size), np.diff(qptr))
        cap = np.full(dl.size, np.inf)
        np.minimum.at(cap, chi, qratio * du[qpar])
        du = np.maximum(np.minimum(du, cap), dl)
    m = M[6].shape[0]
    S = (dl, du, np.zeros(m), np.zeros(m, dtype=np.int64), np.zeros(m), np.zeros(m, dtype=np.int64))
    K.init_activity(M, S)
    return S


def scratch(M):
    """Scratch tuple W for the kernels."""
    m = M[6].shape[0]
    pptr = M[14]
    kmax = 1 + (int(np.diff(pptr).max()) if pptr.size > 1 else 0)
    return (np.zeros(m), np.zeros(m, dtype=np.int64), np.zeros(m), np.zeros(m, dtype=np.int64),
            np.zeros(m, dtype=np.int64), np.zeros(m, dtype=bool), np.zeros(kmax, dtype=np.int64),
            np.zeros(kmax), np.zeros(kmax), np.zeros(2, dtype=np.int64))


def targets(problem: Problem, st: Structure, x_lp: np.ndarray, vub_min: float = VUB_MIN,
            free_vub_up: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(n,) preferred and alternative values of the integer columns (module doc); continuous: x_lp.

    ``vub_min``: relative LP value of a VUB child above which its binary parent prefers 1.
    ``free_vub_up``: binary VUB parents whose objective does not get worse when raised (cost <= 0 in
    minimisation form) also prefer 1; their LP value makes them the last to be decided, so they only
    take capacity the others left (raising them can only loosen their children's ``r <= x`` rows).
    """
    it = problem.integrality
    lo, up = st.lower, st.upper
    x = np.clip(x_lp, lo, up)
    pref = np.clip(np.floor(x + 0.5), lo, up)
    other = np.where(pref > x, np.floor(x), np.ceil(x))
    alt = np.clip(other, lo, up)
    b = st.binary
    pref = np.where(b & st.in_choice, (x > CHOICE_MIN).astype(np.float64), pref)
    if st.vub_parent.size:
        child_ub = np.where(np.isfinite(st.upper[st.vub_child]), np.maximum(st.upper[st.vub_child], 1.0), 1.0)
        hot = np.clip(x_lp[st.vub_child], 0, None) > vub_min * child_ub
        up_par = np.zeros(problem.n_cols, dtype=bool)
        up_par[st.vub_parent[hot]] = True
        if free_vub_up:
            free = np.zeros(problem.n_cols, dtype=bool)
            free[st.vub_parent] = True
            up_par |= free & (problem.sense * problem.cost <= 0)
        pref = np.where(b & up_par, 1.0, pref)
    pref = np.clip(pref, lo, up)
    alt = np.where(b, 1.0 - pref, alt)
    alt = np.clip(alt, lo, up)
    pref = np.where(it, pref, x_lp)
    alt = np.where(it, alt, x_lp)
    return pref, alt


def run_rounding(problem: Problem, st: Structure, x_lp: np.ndarray, prev: np.ndarray | None,
                 max_repair_moves: int | None = None, vub_min: float = VUB_MIN,
                 free_vub_up: bool = False) -> RoundingOutcome:
    """Round, repair and fill the integer columns of ``problem`` starting from the LP point ``x_lp``.

    Args:
        problem: the MILP (n columns, m rows).
        st: its :class:`Structure`.
        x_lp: (n,) LP relaxation point (any accuracy; values are clipped into bounds).
        prev: (n,) previous round's integer allocation (NaN where unknown) for tie-breaking, or None.
        max_repair_moves: cap on repair moves (default 10 * integer columns + 1000).
        vub_min, free_vub_up: see :func:`targets`.
    Returns:
        RoundingOutcome (integer columns hold integer values within their inward-rounded bounds).
    """
    it = problem.integrality
    n = problem.n_cols
    M = build_model(problem, st)
    W = scratch(M)
    cost = M[13]
    pref, alt = targets(problem, st, x_lp, vub_min, free_vub_up)
    prev_match = np.zeros(n, dtype=np.float64)
    prev_alt = np.zeros(n, dtype=np.float64)
    if prev is not None and prev.shape == (n,):
        prev_match = (prev == pref).astype(np.float64)
        prev_alt = (prev == alt).astype(np.float64)
    steps = []

    # ---- round: decide pass 1 (up-moving / general), then pass 2 (all others, forced)
    t0 = time.perf_counter()
    S = initial_state(M, st.lower, st.upper)
    lo = st.lower
    cand1 = np.flatnonzero(it & ((pref > lo) | st.general) & (lo != st.upper))
    conf = 1.0 - np.abs(np.clip(x_lp, lo, st.upper) - pref)
    qconf = np.round(conf[cand1] / TIE_QUANTUM)
    o1 = np.lexsort((cost[cand1] * (pref[cand1] - lo[cand1]), -prev_match[cand1], -qconf))
    order1 = cand1[o1].astype(np.int64)
    K.decide_pass(order1, pref, alt, False, M, S, W)
    und = np.flatnonzero(it & (S[0] != S[1]))
    if BULK_LOCK_FREE and und.size:
        und = _decide_lock_free(problem, M, S, und, pref)
    benefit = -cost[und] * (alt[und] - pref[und])
    o2 = np.lexsort((benefit, prev_alt[und]))
    order2 = und[o2].astype(np.int64)
    _, forced = K.decide_pass(order2, pref, alt, True, M, S, W)
    xi = S[0].copy()
    x_lp_c = np.clip(x_lp, lo, st.upper)
    changed = int(np.count_nonzero(it & (xi != x_lp)))
    steps.append({"step": "round", "changed": changed, "forced": int(forced),
                  "seconds": time.perf_counter() - t0})

    # ---- repair
    t0 = time.perf_counter()
    K.init_activity(M, S)  # drop incremental drift before judging violations
    tabu = np.zeros(n, dtype=np.int8)
    cap = max_repair_moves if max_repair_moves is not None else 10 * int(it.sum()) + 1000
    moves, left = K.repair_pass(cap, M, S, W, tabu)
    steps.append({"step": "repair", "changed": int(np.count_nonzero(S[0][it] != xi[it])), "moves": int(moves),
                  "rows_left": int(left), "seconds": time.perf_counter() - t0})
    xi = np.where(it, S[0], x_lp)
    x_before_fill = xi.copy()

    # ---- fill (continuous columns pinned at their LP values)
    t0 = time.perf_counter()
    filled = 0
    if left == 0:
        xi, filled = _fill(M, W, it, xi, x_lp_c, prev_alt, choice_lists(st))
    steps.append({"step": "fill", "changed": int(filled), "seconds": time.perf_counter() - t0})
    return RoundingOutcome(x=xi, x_before_fill=x_before_fill, rows_violated=int(left), steps=steps)


def vub_thresholds(st: Structure) -> tuple[float, ...]:
    """VUB thresholds to round with, sparsest first: ``VUB_LADDER`` then ``VUB_MIN`` when the problem has
    VUB links, else ``(VUB_MIN,)``. A first-order LP point spreads a little of a child's value over many
    parents (load balancing: a shard's load over servers), and rounding every such parent up places far
    more binaries than a vertex would; the continuous re-solve decides whether a sparser choice is
    feasible, and the next threshold is tried only when it is not."""
    return (*VUB_LADDER, VUB_MIN) if st.vub_parent.size else (VUB_MIN,)


def locks(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """(n,) down-locks and up-locks of every column (SCIP's variable locks, Achterberg 2007, section 3.3):
    the number of rows whose violation can grow when the column decreases / increases (a > 0 in a row
    with a finite lower bound counts as a down-lock, with a finite upper bound as an up-lock; a < 0 the
    other way round). One vectorized pass over the CSC arrays."""
    col = np.repeat(np.arange(problem.n_cols), np.diff(problem.a_indptr))
    a = problem.a_data
    fl = np.isfinite(problem.row_lower)[problem.a_indices]
    fu = np.isfinite(problem.row_upper)[problem.a_indices]
    down = ((a > 0) & fl) | ((a < 0) & fu)
    up = ((a > 0) & fu) | ((a < 0) & fl)
    return (np.bincount(col, weights=down, minlength=problem.n_cols).astype(np.int64),
            np.bincount(col, weights=up, minlength=problem.n_cols).astype(np.int64))


def _decide_lock_free(problem: Problem, M, S, und: np.ndarray, pref: np.ndarray) -> np.ndarray:
    """Decide at once the undecided columns ``und`` whose preferred value is the end of their domain in a
    direction without locks (and that have no VUB children): such a move changes only the activity side
    of each row that faces an infinite bound, so no row's violation can grow, whatever the order, and
    ``decide_pass`` would accept it and leave every other decision unchanged. Saves one staged move per
    column (Sia 10,240 GPUs: ~224k of the 231k columns go to 0 this way). Returns the columns left."""
    down, up = locks(problem)
    pptr = M[14]
    dl, du = S[0], S[1]
    v = pref[und]
    leaf = pptr[und + 1] == pptr[und]
    ok = leaf & (((v == dl[und]) & (down[und] == 0)) | ((v == du[und]) & (up[und] == 0)))
    if not ok.any():
        return und
    j = und[ok]
    dl[j] = v[ok]
    du[j] = v[ok]
    K.init_activity(M, S)
    return und[~ok]


def choice_lists(st: Structure) -> tuple[np.ndarray, np.ndarray]:
    """(k+1,) pointers and member columns of the choice rows (from the CSR copy, vectorized)."""
    rptr, rcol = st.csr_indptr, st.csr_indices
    rows = st.choice_rows
    cnt = rptr[rows + 1] - rptr[rows]
    ptr = np.concatenate(([0], np.cumsum(cnt))).astype(np.int64)
    if ptr[-1] == 0:
        return ptr, np.zeros(0, dtype=np.int64)
    pos = np.arange(ptr[-1], dtype=np.int64) + np.repeat(rptr[rows] - ptr[:-1], cnt)
    return ptr, rcol[pos].astype(np.int64)


def _fill(M, W, it, xi, x_cont, prev_alt, choice=None):
    """Fill, then 1-swaps in choice rows (if any), then fill again when a swap freed resources."""
    cost = M[13]
    dl = np.where(it, xi, x_cont)
    Sf = initial_state(M, dl, dl)
    cand = np.flatnonzero(it & (cost != 0))
    of = np.lexsort((-prev_alt[cand], -np.abs(cost[cand])))
    order = cand[of].astype(np.int64)
    filled, _ = K.fill_pass(order, M, Sf, W)
    changed = int(filled)
    if choice is not None and choice[1].size:
        swaps, _ = K.swap_pass(choice[0], choice[1], M, Sf, W)
        changed += int(swaps)
        if swaps:
            more, _ = K.fill_pass(order, M, Sf, W)
            changed += int(more)
    return np.where(it, Sf[0], x_cont), changed


def fill_pinned(problem: Problem, st: Structure, x: np.ndarray, prev: np.ndarray | None) -> tuple[np.ndarray, int]:
    """Fill step on a feasible point ``x`` ((n,)) with its continuous values pinned: every move keeps
    ``x``'s continuous part feasible, so the result stays feasible once the continuous part is re-solved.
    Used after fix_and_resolve, whose simplex (vertex) continuous values free integers an interior LP
    point still used (e.g. copies with r = 0 in load balancing). Returns (new point, columns changed)."""
    it = problem.integrality
    M = build_model(problem, st)
    prev_alt = np.zeros(problem.n_cols)
    if prev is not None and prev.shape == x.shape:
        prev_alt = (np.isfinite(prev) & (prev != x)).astype(np.float64)  # NaN: no previous value
    return _fill(M, scratch(M), it, x, x, prev_alt, choice_lists(st))
