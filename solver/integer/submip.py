"""RENS: the sub-MIP that the LP relaxation's point spans, solved by HiGHS within a time budget.

Relaxation Enforced Neighborhood Search (Berthold, "RENS: the optimal rounding", Math. Prog. Comp. 6,
2014): every integer column whose LP value is integral is fixed at that value, every other integer
column keeps only the two integers around its LP value (``floor``/``ceil``, inside its bounds);
continuous columns keep their bounds. The sub-MIP contains exactly the roundings of the LP point, so it
is usually tiny next to the MILP (LB 1024 x 128: about 3,000 of 131,072 binaries stay free) and
branch-and-cut on it is cheap, while it still chooses *jointly* which of the fractional columns to
round up, which independent rounding cannot (the load-balancing case: a heavy shard's load must be
split over several servers, and which servers get a piece depends on all the other shards).

The LP point of a first-order method is only approximately integral: a value within ``eps`` of an
integer counts as integral. ``eps`` runs down a ladder (``EPS_LADDER``: 1e-4, then 0 = only exact
integers are fixed); the next, larger neighbourhood is tried only when HiGHS proves the smaller one
infeasible. HiGHS's point is returned with integer columns rounded to integers; the caller completes
and re-checks the continuous part exactly (``fix_and_resolve``).

HiGHS gets the sub-MIP with the fixed columns substituted out (:func:`without_fixed_columns`: their
activity moves into the row bounds), not the full model with equal bounds: its MIP presolve spent 0.75 s
of a 1.9 s RENS call on Sia 10,240 only to remove the 225,000 fixed of 231,000 columns, which takes a
vectorized gather here. It also stops at ``mip_rel_gap`` (the caller passes half of its own gap target):
proving the sub-MIP optimal to HiGHS's default 1e-4 cost the other half of that call.
"""

from __future__ import annotations

import time

import numpy as np

from solver.integer.check import check_point
from solver.integer.resolve import column_arrays
from solver.model.problem import Problem

EPS_LADDER = (1e-4, 0.0)  #: integrality tolerances of the successive neighbourhoods (largest first)
CORE_PER_ROW = 3  #: members per choice row that the Lagrangian core keeps free (smallest reduced costs)
CORE_MIN_EXTRA = 1000  #: integer columns outside choice rows that the core frees at least (cheapest to move)
CORE_FACTOR = 4  #: ... and at least this many times the integers RENS left free there


def rens_bounds(problem: Problem, x_lp: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Column bounds of the RENS sub-MIP around ``x_lp``.

    Args:
        problem: the MILP (n columns); its bounds on integer columns are assumed integral (rounded inward).
        x_lp: (n,) LP relaxation point.
        eps: an integer column within ``eps`` of an integer k is fixed at k.
    Returns:
        (lower, upper): (n,) float arrays; integer columns restricted to [floor, ceil] of their LP value
        (or fixed), clipped into their own bounds; continuous columns unchanged.
    """
    it = problem.integrality
    lo = problem.col_lower.copy()
    hi = problem.col_upper.copy()
    v = np.asarray(x_lp, dtype=np.float64)[it]
    # a non-finite value: its lower bound, else its upper bound, else 0 (never an infinite "integer")
    fallback = np.where(np.isfinite(lo[it]), lo[it], np.where(np.isfinite(hi[it]), hi[it], 0.0))
    v = np.clip(np.where(np.isfinite(v), v, fallback), lo[it], hi[it])
    k = np.round(v)
    near = np.abs(v - k) <= eps
    f = np.where(near, k, np.floor(v))
    c = np.where(near, k, np.ceil(v))
    lo[it] = np.maximum(lo[it], f)
    hi[it] = np.minimum(hi[it], c)
    return lo, hi


def core_bounds(problem: Problem, x_lp: np.ndarray, lag, y: np.ndarray,
                per_row: int = CORE_PER_ROW) -> tuple[np.ndarray, np.ndarray]:
    """Column bounds of the Lagrangian core: the neighbourhood tried when RENS's are all infeasible.

    The "core problem" of Lagrangian heuristics (Balas & Zemel 1980 for knapsacks; Caprara, Fischetti &
    Toth 1999 for set covering): the integer columns that the reduced costs at good duals ``y`` rate as
    cheap to move are freed on top of RENS's widest neighbourhood (``rens_bounds`` with eps 0):

    - in every kept choice row (``lag``, a ``bound.ChoiceLagrangian``), the ``per_row`` members with the
      smallest reduced costs (and every member with a positive LP value) are free, the others fixed at 0;
    - every other integer column fixed by RENS is ranked by the reduced cost of leaving its value (z_j at
      its lower bound, -z_j at its upper bound), and the ``max(CORE_MIN_EXTRA, CORE_FACTOR * k)`` cheapest
      are freed (k = integers RENS left free). Load balancing, cold round 8 at 1024 x 128: RENS's 132 free
      binaries admit no point, the core's 1,132 give a 1-move point in 0.8 s (the HiGHS fallback had 1,056
      moves at its 120 s limit).

    Args:
        problem: the MILP (n columns).
        x_lp: (n,) LP relaxation point.
        lag: the round's ``ChoiceLagrangian`` (it may keep no choice rows).
        y: (m,) row duals (problem's sign convention) that give the reduced costs.
        per_row: members kept free per choice row.
    Returns:
        (lower, upper): (n,) float arrays.
    """
    lo, hi = rens_bounds(problem, x_lp, 0.0)
    it = problem.integrality
    z = lag.reduced_costs(y)
    own_lo, own_hi = lag.lower, lag.upper
    mem = lag.free_mem
    in_rows = np.zeros(problem.n_cols, dtype=bool)
    if mem.size:
        in_rows[mem] = True
        lo[mem], hi[mem] = own_lo[mem], own_hi[mem]
        rid = np.repeat(np.arange(lag.free_ptr.size - 1), np.diff(lag.free_ptr))
        order = np.lexsort((z[mem], rid))  # by row, then by reduced cost
        rank = np.empty(mem.size, dtype=np.int64)
        rank[order] = np.arange(mem.size) - lag.free_ptr[:-1][rid[order]]
        xv = np.nan_to_num(np.asarray(x_lp, dtype=np.float64)[mem], nan=0.0)
        out = ~((rank < per_row) | (xv > 0.0))
        hi[mem[out]] = np.maximum(lo[mem[out]], 0.0)  # free members have lower bound 0: fixed at 0
    k = int(np.count_nonzero(it & ~in_rows & (hi > lo)))
    cand = np.flatnonzero(it & ~in_rows & (hi == lo) & (own_hi > own_lo))
    if cand.size:
        at_lower = lo[cand] <= own_lo[cand]
        leave = np.where(at_lower, z[cand], -z[cand])  # reduced cost of moving off the fixed value
        pick = cand[np.argsort(leave, kind="stable")[:max(CORE_MIN_EXTRA, CORE_FACTOR * k)]]
        lo[pick], hi[pick] = own_lo[pick], own_hi[pick]
    return lo, hi


def without_fixed_columns(problem: Problem, lower: np.ndarray, upper: np.ndarray) -> tuple[Problem, np.ndarray]:
    """``problem`` with bounds ``lower``/``upper`` and every column with lower == upper substituted out.

    Args:
        problem: the model (n columns, m rows).
        lower, upper: (n,) column bounds of the restricted model (finite where equal).
    Returns:
        (sub, keep): ``sub`` has the columns ``keep`` ((k,) int64 indices of the columns with lower < upper)
        and all m rows, whose bounds are shifted by the fixed columns' activity; its objective offset holds
        their cost. A point x_sub of ``sub`` is the point x of the restricted model with x[keep] = x_sub
        and x = lower elsewhere, with the same objective and row activities.
    """
    fixed = lower == upper
    keep = np.flatnonzero(~fixed)
    fix = np.flatnonzero(fixed)
    m = problem.n_rows
    fptr, find, fdat = column_arrays(problem, fix)
    act = (np.bincount(find, weights=fdat * np.repeat(lower[fix], np.diff(fptr)), minlength=m) if fdat.size
           else np.zeros(m))
    kptr, kind, kdat = column_arrays(problem, keep)
    sub = Problem(col_names=problem.col_names[keep], row_names=problem.row_names, cost=problem.cost[keep],
                  col_lower=lower[keep].copy(), col_upper=upper[keep].copy(), row_lower=problem.row_lower - act,
                  row_upper=problem.row_upper - act, integrality=problem.integrality[keep].copy(),
                  a_indptr=kptr, a_indices=kind, a_data=kdat, sense=problem.sense,
                  offset=problem.offset + float(problem.cost[fix] @ lower[fix]))
    return sub, keep


def presolve_pays(problem: Problem, st) -> bool:
    """Whether RENS's sub-MIPs of ``problem`` go to HiGHS with its MIP presolve (``st``: its
    ``structure.Structure``). False only for a pure binary model whose every row with a nonzero is a choice
    or a capacity row (Sia's jobs and GPU types): there the presolve removes a few duplicate rows and probes
    cliques, and the sub-MIP's root LP and HiGHS's heuristics end it at the root either way. Measured with
    HiGHS 1.16, one thread, the sub-MIPs of real rounds: Sia 10,240 (9,013 free binaries) 0.25-0.31 s with
    presolve against 0.11 s without, Sia 1,024 (1,202-4,029) 0.022-0.383 s against 0.015-0.334 s, the same
    points. Load balancing (continuous copies, VUB rows) keeps it: without, its sub-MIPs took 1.3-10x longer
    or stopped at the budget with worse points."""
    if not bool(st.binary.all()) or st.vub_rows.size:
        return True
    covered = np.zeros(problem.n_rows, dtype=bool)
    covered[st.choice_rows] = True
    covered[st.capacity_rows] = True
    return not bool(np.all(covered | (np.diff(st.csr_indptr) == 0)))


def rens(problem: Problem, x_lp: np.ndarray, seconds: float, mip_rel_gap: float | None = None,
         core=None, seed: np.ndarray | None = None, threads: int | None = None,
         presolve: bool = True, objective_target: float | None = None) -> tuple[np.ndarray | None, dict]:
    """Solve the RENS sub-MIP around ``x_lp`` with HiGHS; neighbourhoods of ``EPS_LADDER`` in turn.

    Args:
        problem: the MILP (n columns).
        x_lp: (n,) LP relaxation point (any accuracy; values are clipped into the bounds).
        seconds: wall budget for all attempts together (seconds); nothing runs when it is not > 0.
        mip_rel_gap: HiGHS's relative gap at which the sub-MIP stops (None: HiGHS's default, 1e-4).
        core: a callable returning (lower, upper) of a wider neighbourhood (``core_bounds``), called and
            tried last, only when HiGHS proved every RENS neighbourhood infeasible; its attempt is reported
            with ``neighbourhood`` "core" and ``eps`` null (the others: "rens" and their eps; one type a key, so
            a JSON reader such as pyarrow takes the reports).
        seed: (n,) a feasible point (the round's incumbent) handed to HiGHS as its start in every
            neighbourhood whose bounds hold all its integer values (attempt's ``seeded``); None: no start.
        threads: HiGHS's thread count (``fallback.highs_mip``; None: HiGHS's default).
        presolve: HiGHS's MIP presolve on the sub-MIPs (:func:`presolve_pays` decides it for the pipeline).
        objective_target: HiGHS stops a sub-MIP at its first point at least this good (objective units, the
            full model's objective: the fixed columns' cost is the sub-MIP's offset; ``fallback.highs_mip``);
            None: only ``mip_rel_gap`` and the budget stop it.
    Returns:
        x: (n,) HiGHS's best point of the first feasible neighbourhood, integer columns rounded to
        integers, or None.
        info: {"attempts": [{"eps", "neighbourhood", "free_integers", "highs_status", "seconds", "seeded"}...], "highs_status" of the
        last attempt, "free_integers" of the last attempt}.
    """
    from solver.integer.fallback import highs_mip

    t0 = time.perf_counter()
    attempts: list = []
    info = {"attempts": attempts, "highs_status": "not run", "free_integers": 0}
    it = problem.integrality
    last_free = -1
    ladder = [(eps, None) for eps in EPS_LADDER] + ([("core", core)] if core is not None else [])
    for eps, bounds in ladder:
        left = seconds - (time.perf_counter() - t0)
        if not left > 0:
            break
        lo, hi = rens_bounds(problem, x_lp, eps) if bounds is None else bounds()
        free = int(np.count_nonzero(it & (hi > lo)))
        if free == last_free:
            continue  # the same neighbourhood again (no value was within (0, eps] of an integer)
        last_free = free
        sub, keep = without_fixed_columns(problem, lo, hi)
        x = None
        if keep.size == 0:  # nothing free: the point is decided (HiGHS would call the model "Empty")
            t1 = time.perf_counter()
            ok = check_point(problem, lo)["ok"]
            x = lo.copy() if ok else None
            hinfo = {"highs_status": "Optimal" if ok else "Infeasible", "seconds": time.perf_counter() - t1}
        else:
            inside = seed is not None and bool(np.all((seed[it] >= lo[it]) & (seed[it] <= hi[it])))
            x_sub, hinfo = highs_mip(sub, left, seed[keep] if inside else None, mip_rel_gap=mip_rel_gap,
                                    threads=threads, presolve=presolve, objective_target=objective_target)
            if x_sub is not None:
                x = lo.copy()
                x[keep] = x_sub
        attempts.append({"eps": None if eps == "core" else eps, "neighbourhood": "core" if eps == "core" else "rens",
                         "free_integers": free, "highs_status": hinfo["highs_status"],
                         "seconds": hinfo["seconds"], "seeded": bool(hinfo.get("seeded", False))})
        info["highs_status"], info["free_integers"] = hinfo["highs_status"], free
        if x is not None:
            return x, info
        if hinfo["highs_status"] != "Infeasible":
            break  # out of time or trouble: a larger neighbourhood would not do better
    return None, info
