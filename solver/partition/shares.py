"""Shares of the shared rows per part, and how they move between rounds toward the highest shadow prices.

This is a *resource-directive* decomposition (Geoffrion, "Primal resource-directive approaches for
optimizing nonlinear decomposable systems", Operations Research 18(3), 1970; Kornai & Liptak, "Two-level
planning", Econometrica 33(1), 1965; Silverman, "Primal decomposition of mathematical programs by resource
allocation", Operations Research 20(1), 1972): the master problem chooses each part's share s_p of every
shared row (shares of a row sum to 1), each part solves its sub-problem with the row's bounds times s_p,
and the master's objective ``sum_p v_p(s_p b)`` has, by LP sensitivity, the gradient ``y_p * b`` in s_p,
where y_p is the row's dual (shadow price) in part p. POP (Narayanan et al., SOSP 2021) keeps s_p = 1/k.

Update rule. On a *capacity* row (a finite upper bound > 0 and no positive lower bound, its use by each part
known: :func:`usage`) the primal resource-directive step of Geoffrion 1970 moves shares first: the *unused* part
of the share of a part with no price (its row activity below its allocation) moves, but for ``KEEP_SLACK`` of it,
to the parts with a positive gain in proportion to their gains (:func:`transfer_slack`). The donor's point stays
feasible, so it loses nothing, and a receiver's value cannot fall with more capacity: the merged objective of the
next pass is at least this one's (up to the parts' tolerances), a feasible-direction method on the master
(Geoffrion 1970, s. 3; Silverman 1972). Capacity that a receiver cannot use comes back as its slack the pass after.

While slack moves (more than ``DRY`` of a row's capacity per shared row on average), no price step is taken
between *priced* parts of a capacity row. A part's dual y_p is one supergradient of its concave, piecewise linear
v_p: ``y_p b`` bounds the gain from more share from above and the loss from less from below, and on a degenerate
vertex (a TE link whose path is also cut elsewhere) the true right slope can be 0. Measured round 0 pass by pass
(``bench/bench_share_update.py``, loss to the monolithic optimum after 1 / 3 / 5 updates, the best pass so far):
TE UsCarrier (Teal's capacities) K = 8, the sign step below with the slack transfer (half kept; the rule before
session 18) 1.81 / 1.39 / 1.19%, the slack transfer alone 1.35 / 0.83 / 0.60%; TE Cogentco K = 8 0.50 / 0.37 /
0.37% against 0.39 / 0.14 / 0.08%. Once the slack has run out, the rows without slack take the price step below
between their priced parts (three clients on two links, no slack after the probe: the slack transfer alone stays
25% below the optimum, the price step reaches it); a step that makes the merge worse is not kept, since a round
with several passes keeps its best merged pass (``solver.partition.round``). Tried and not kept: the price step on
every row without slack from the first update on (UsCarrier / Cogentco K = 8 after four updates 0.67 / 0.14%,
slack alone 0.67 / 0.11%; Cogentco K = 4 after one 0.26% against 0.16%), and a diagonal secant (quasi-Newton) step
to equal prices within a trust region that went back to the best pass (Barzilai & Borwein 1988; Conn, Gould &
Toint 2000): it lost its first step from the probe's shares on every proxy (UsCarrier K = 4: 0.90 -> 1.08-1.79%)
and ended between the two rules.

The mean move can stay above ``DRY`` while the merge no longer gains: a donor keeps ``KEEP_SLACK`` of its slack, so
its slack moves on in ever smaller amounts, and a receiver whose price is a degenerate dual (more capacity does not
raise its flow) holds what it got unused and, priced, never gives it back. The rows without slack then never take
the price step however far apart their parts' prices are. On TE ASN2k K = 4 (six round-0 passes, session 18) the
merge stayed 3.03% below the monolithic optimum (0.755% with the rule before) while the slowest part per pass fell
417 -> 0.9 s; on TE ring 24 K = 4 (``bench/bench_share_update.py --ring 24``) the slack moved 4.5e-4 of a row per
row on average at the eighth update, the merge had gained 0.03% over the last three passes and stayed 4.13% below,
its rows with two or more priced parts 58 of 72 with the gains 71% apart (median), and 21 of its 210 priced
(part, row) entries held unused share (up to 36% of the row). So a round with passes compares each pass's merged
objective with the pass before's: a gain of at most ``STALL`` (relative) means the slack transfer has stalled, and
the update (``stalled``) lets every row whose own slack moved at most ``DRY`` take the price step among its priced
parts, whatever the other rows' slack does (ring 24 K = 4 / 8 after seven updates: 4.13 / 5.30% -> 3.46 / 5.30%).
A round without passes (a warm round's single update) keeps the rule above. Measured against session 18's rule on
the proxies, best loss after 1 / 3 / 5 updates: Cogentco K = 4 0.16 / 0.053 / 0.049% -> 0.16 / 0.075 / 0.075%,
K = 8 0.39 / 0.14 / 0.082% -> 0.39 / 0.14 / 0.11%; UsCarrier K = 4 0.59 / 0.31 / 0.24% -> 0.59 / 0.31 / 0.31%, K = 8
1.35 / 0.83 / 0.60% -> 1.35 / 0.83 / 0.60%: where the slack still pays, a price step it takes after a slow pass
costs the slack's later passes. Tried and not kept: the mean move's ``DRY`` raised to 1e-3 (ring 24 K = 4 still
4.13% after seven updates), the priced parts that hold unused share giving it away like the unpriced ones (4.17%),
and the per-row test from the first update on, without the stall (ring 24 K = 4 / 8 2.43 / 5.12%, but Cogentco
K = 4 / 8 0.13 / 0.14% and UsCarrier 0.32 / 0.65% after five).

On the other shared rows (usage unknown: a lower bound, an equality) the parts' prices move the shares by sign
steps with per-entry adaptive lengths (the Rprop rule of Riedmiller & Braun, "A direct adaptive method for faster
backpropagation learning: the RPROP algorithm", ICNN 1993, applied multiplicatively on the simplex of a row's
shares):

    g_p  = -sense * y_p * b_act                (gain of one more unit of share; b_act the bound y_p prices)
    M    = the movers: parts touching the row (on a capacity row: none while slack moves, then the priced parts
           of the rows without slack, above)
    g    = sum_M s_p g_p / sum_M s_p            (the gain of the movers' current split)
    z_p  = sign(g_p - g) on M, 0 within DEAD_ZONE * G  (G: the row's largest |g_p|)
    d_p <- d_p * GROW if z_p equals the last z_p, d_p * SHRINK if it flipped (in [D_MIN, D_MAX])
    s_p <- s_p * exp(z_p * d_p) on M, rescaled to the movers' own total; s_p >= floor on the parts that
           touch the row, 0 on the others, renormalised to sum 1

A price says which way to move but not how far: a step that keeps its direction grows, one that overshot (the
prices crossed) is halved. Steps and last signs are kept per (part, row) in the state with the shares. A row whose
prices agree in every part (the resource-directive optimality condition: equal marginal values) does not move.
(An unpriced part of a capacity row already held its share under the earlier rule: on TE Kdl the sign step that
also shrank those parts made the partitioned round 0.88% worse than the monolithic one after every demand moved
+-10%; it had been 0.044% with the probe's shares.) Parts that do not touch a row get no share of it (POP gives
them 1/k, which is lost capacity). A round with several passes keeps its best merged pass
(``solver.partition.round``).

For a MILP a row with an integral bound and integer coefficients on integer columns gets integral
allocations (largest remainder, :func:`integral_allocations`), so no part's rounding wastes capacity.
"""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem

D0 = 0.05         #: first step length (log-share) of a (part, row)
D_MIN, D_MAX = 1e-3, 0.7  #: step length bounds
GROW, SHRINK = 1.5, 0.5   #: step length factors after a kept / a flipped direction
DEAD_ZONE = 0.1  #: price differences below this fraction of the row's largest gain count as equal
FLOOR = 1e-3      #: smallest share of a part that touches a row
PRICE_FLOOR = 1.0  #: a row's price scale is at least this fraction of the largest gain of any row
DRY = 1e-4  #: the slack transfer moving at most this mean share per row lets the price step work on the rows without slack
STALL = 1e-3  #: a pass whose merged objective gained at most this fraction of it on the pass before: the passes stalled
KEEP_SLACK = 0.25  #: fraction of a part's unused share it keeps when the slack moves to priced parts (its use may
#: grow when its other rows get more; 0.5 closed 2.04% -> 0.73% in five passes on TE UsCarrier K = 8, 0.25 -> 0.60%)


def presence(problem: Problem, col_part: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """(k, rows.size) bool: part p has a nonzero of row ``rows[i]`` on one of its own (non-global) columns.
    One numba pass (``solver.partition.clients_kernels.presence``; its numpy formulation, the twin in
    ``clients_ref``, made six nnz-sized temporaries: ~2 s of a TE Kdl partitioned round's set-up)."""
    from solver.partition.clients_kernels import presence as kernel

    pos = np.full(problem.n_rows, -1, dtype=np.int64)
    pos[rows] = np.arange(rows.size, dtype=np.int64)
    return kernel(problem.a_indptr, problem.a_indices, problem.a_data, np.asarray(col_part, dtype=np.int64), pos,
                  int(k), int(rows.size)).astype(bool)


def normalise(shares: np.ndarray, present: np.ndarray, floor: float = FLOOR) -> np.ndarray:
    """(k, ns) shares with ``floor`` or more on present parts before the columns are renormalised to sum to 1
    (so at least floor / (1 + k floor) after it), 0 elsewhere (a row nobody touches gets 1/k)."""
    k = shares.shape[0]
    s = np.where(present, np.maximum(np.nan_to_num(shares, nan=0.0), floor), 0.0)
    tot = s.sum(axis=0)
    none = tot <= 0
    s[:, none] = 1.0 / k
    tot[none] = 1.0
    return s / tot


def carry(prev_rows: np.ndarray, prev_shares: np.ndarray, row_map: np.ndarray, old_n_rows: int,
          rows: np.ndarray, default: np.ndarray) -> np.ndarray:
    """The new round's (k, rows.size) shares: a shared row that was shared before keeps its shares.

    Args:
        prev_rows: (ns_old,) previous round's shared rows (old row indices); prev_shares: (k, ns_old).
        row_map: (m_new,) old row of every new row, -1 for an added one (``ApplyInfo.row_map``).
        old_n_rows: the previous round's row count.
        rows: (ns,) the new round's shared rows; default: (k, ns) shares for rows not shared before.
    """
    inv = np.full(old_n_rows, -1, dtype=np.int64)
    inv[prev_rows] = np.arange(prev_rows.size, dtype=np.int64)
    old = row_map[rows]
    pos = np.where(old >= 0, inv[np.maximum(old, 0)] if old_n_rows else -1, -1)
    out = default.copy()
    hit = pos >= 0
    out[:, hit] = prev_shares[:, pos[hit]]
    return out


def gains(problem: Problem, rows: np.ndarray, duals: np.ndarray) -> np.ndarray:
    """(k, ns) gain of one more unit of share per part: ``-sense * y_p * b_act`` (module docstring).

    Args:
        duals: (k, ns) the rows' duals in each part (problem's sense, HiGHS convention), NaN where a
            part does not hold the row.
    """
    sense = float(problem.sense)
    y = np.nan_to_num(duals, nan=0.0)
    lo, up = problem.row_lower[rows], problem.row_upper[rows]
    upper_active = sense * y < 0  # in minimisation form a priced upper bound has y <= 0
    b = np.where(upper_active, up, lo)
    b = np.where(np.isfinite(b), b, 0.0)
    return -sense * y * b


def update(shares: np.ndarray, gain: np.ndarray, present: np.ndarray, steps: np.ndarray, last: np.ndarray,
           usage: np.ndarray | None = None, floor: float | None = None,
           keep_slack: float | None = None, price_on_capacity: bool = False, price_on_tight: bool = False,
           grow: float | None = None, price_when_dry: bool = True,
           stalled: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One share update of the (k, ns) shares toward the parts with the highest gains (module docstring).

    Args:
        shares: (k, ns) current shares; gain: (k, ns) :func:`gains`; present: (k, ns) parts touching a row.
        steps: (k, ns) current step lengths (``D0`` for new entries); last: (k, ns) last directions (0: none).
        usage: (k, ns) fraction of each capacity row's bound a part's point uses (NaN where unknown; None:
            skip the slack transfer).
        floor, keep_slack: defaults ``FLOOR``, ``KEEP_SLACK``.
        price_on_capacity: take the price step on capacity rows among their priced parts whatever the slack (the
            rule before session 18, for ``bench/bench_share_update.py``'s comparison; with ``keep_slack=0.5`` it is
            that rule); price_on_tight: on the rows without slack from the first update on; price_when_dry: on the
            rows without slack once the slack transfer moved at most ``DRY`` per row (the default); grow: the step
            length factor after a kept direction (default ``GROW``); stalled: the round's last pass gained at most
            ``STALL`` on the one before (``solver.partition.round``): every row whose own slack transfer moved at most
            ``DRY`` takes the price step among its priced parts, whatever the other rows' slack does.
    Returns:
        (shares, steps, last): the new (k, ns) shares, step lengths and directions.
    """
    floor = FLOOR if floor is None else floor
    keep_slack = KEEP_SLACK if keep_slack is None else keep_slack
    g = np.where(present, gain, 0.0)
    s = shares.copy() if usage is None else transfer_slack(shares, g, present, usage, keep_slack)
    # on a capacity row (its usage known) the slack transfer moves shares first: an unpriced part's price 0 is the
    # value of MORE capacity only (losing capacity below its use costs it flow, the left slope of its value
    # function), and a priced part's dual bounds its gain from more capacity from above and its loss from less
    # from below, so a trade between priced parts is a gamble that lost on TE while slack moved; once the slack
    # has run out, the priced parts of the rows without slack trade by the price step (module docstring)
    known = ~np.isnan(usage) if usage is not None else np.zeros_like(present)
    slack_moved = np.abs(s - shares).sum(axis=0)
    dry = slack_moved.sum() / 2.0 <= DRY * max(slack_moved.size, 1)  # the slack transfer has (nearly) run out
    tight = ~(slack_moved > 0)[None, :] if (price_on_tight or (price_when_dry and dry)) else False
    if stalled:  # the passes stopped gaining: every row whose own slack moved at most DRY takes the price step
        tight = ~(slack_moved / 2.0 > DRY)[None, :]
    hold = present & known & (~(g > 0) if price_on_capacity else ~((g > 0) & tight))
    movers = present & ~hold
    ms = np.where(movers, s, 0.0)
    mass = ms.sum(axis=0)
    scale = np.abs(g).max(axis=0) if g.size else np.zeros(g.shape[1])
    diff = g - (ms * g).sum(axis=0) / np.where(mass > 0, mass, 1.0)
    z = np.where(movers & (np.abs(diff) > DEAD_ZONE * scale), np.sign(diff), 0.0)
    d = np.where(z * last > 0, steps * (GROW if grow is None else grow), np.where(z * last < 0, steps * SHRINK, steps))
    d = np.clip(np.nan_to_num(d, nan=D0), D_MIN, D_MAX)
    stepped = ms * np.exp(z * d)
    tot = stepped.sum(axis=0)
    stepped *= np.where(tot > 0, mass / np.where(tot > 0, tot, 1.0), 0.0)  # the movers trade their own mass
    new = normalise(np.where(hold, s, stepped), present, floor)
    return new, d, np.where(z != 0, z, last)


def transfer_slack(shares: np.ndarray, gain: np.ndarray, present: np.ndarray, usage: np.ndarray,
                   keep_slack: float = KEEP_SLACK) -> np.ndarray:
    """(k, ns) shares after the slack transfer of :func:`update` (module docstring): on each row, the unused part
    (usage below share) of every present part without a positive gain, less the fraction ``keep_slack`` it keeps,
    goes to the parts with a positive gain in proportion to their gains; rows without such a donor or receiver
    keep their shares. ``gain``: (k, ns) :func:`gains` (0 where a part is absent); ``usage``: (k, ns)
    :func:`usage` (NaN: unknown, the whole share counts as used). Columns keep their sums; a new array."""
    s = shares.copy()
    pos_gain = gain > 0
    u = np.where(np.isnan(usage), s, np.clip(usage, 0.0, None))
    slack = np.where(present & ~pos_gain, np.maximum(s - u, 0.0), 0.0) * (1.0 - keep_slack)
    pool = slack.sum(axis=0)
    wsum = np.where(pos_gain, gain, 0.0).sum(axis=0)
    move = (pool > 0) & (wsum > 0)
    return np.where(move[None, :], s - slack + np.where(pos_gain, gain, 0.0) * (pool / np.where(move, wsum, 1.0)), s)


def integral_allocations(problem: Problem, rows: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """Shares whose allocations ``s_p * b`` are integers summing to b, for the rows where that is exact.

    Eligible: a MILP row with exactly one finite bound b (integral), whose nonzeros are integers on
    integer columns. Allocation = floor(s_p b) plus one unit for the largest remainders (Hamilton's
    method) until the units sum to b; a part that does not touch the row (share 0) gets none.
    Other rows keep their shares. Returns a new (k, ns) array.
    """
    if not problem.is_mip or rows.size == 0:
        return shares
    lo, up = problem.row_lower[rows], problem.row_upper[rows]
    one_sided = np.isfinite(lo) ^ np.isfinite(up)
    b = np.where(np.isfinite(up), up, lo)
    ok = one_sided & np.isfinite(b) & (b == np.round(b)) & (np.abs(b) > 0)
    pos = np.full(problem.n_rows, -1, dtype=np.int64)
    pos[rows] = np.arange(rows.size, dtype=np.int64)
    nnz_col = np.repeat(np.arange(problem.n_cols), np.diff(problem.a_indptr))
    r = pos[problem.a_indices]
    bad = (r >= 0) & ((problem.a_data != np.round(problem.a_data)) | (problem.integrality[nnz_col] == 0))
    ok[np.unique(r[bad])] = False
    if not ok.any():
        return shares
    s = shares[:, ok]
    bb = np.abs(b[ok])
    alloc = s * bb
    fl = np.floor(alloc + 1e-9)
    rem = np.round(bb - fl.sum(axis=0)).astype(np.int64)
    frac = np.where(s > 0, alloc - fl, -np.inf)
    order = np.argsort(-frac, axis=0, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(s.shape[0])[:, None].repeat(s.shape[1], axis=1), axis=0)
    fl += (rank < rem[None, :]) & np.isfinite(frac)
    out = shares.copy()
    out[:, ok] = fl / bb
    return out


def usage(problem: Problem, rows: np.ndarray, activity: np.ndarray) -> np.ndarray:
    """(k, ns) fraction of a capacity row's upper bound each part's activity uses (NaN for other rows:
    a finite lower bound, or an upper bound <= 0, or a part without the row)."""
    lo, up = problem.row_lower[rows], problem.row_upper[rows]
    cap = np.isfinite(up) & (up > 0) & ~(np.isfinite(lo) & (lo > 0))
    return np.where(cap[None, :], activity / np.where(cap, up, 1.0)[None, :], np.nan)
