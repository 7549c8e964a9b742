"""After a delta drops (or adds) clients: the capacity a part does not use is given back in the same round.

A part's share of a capacity row was sized for its clients' demands (the probe's split, or the updates since).
When a delta drops a client whose part still touches the row through other clients, the part keeps the whole
share while its remaining clients may not use what the dropped one did. With fixed shares
(``--share-update-every 0``, an LP's default above ``--whole-below-nnz``) that capacity stays stranded for good,
and with updates it moves only after a round was solved without it.

Which part can use the freed capacity is not known before the parts are solved: on a 6-client allocation LP at
K = 2 (``tests.helpers.client_allocation``), handing the dropped clients' previous use to the other parts in
proportion to their shares fixed one drop (11% below the new optimum -> 0.0%) but took another from 0.38% to 7.6%
(its part's remaining clients had been squeezed and wanted it back); by the previous shadow prices, or by the
remaining clients' previous use, every case landed in between. So the round reads it off its own first pass: when
a part has no shadow price on a capacity row and uses less than its share while another part's price there is
positive, the unused capacity is stranded; it goes to the priced parts in proportion to their gains y_p b
(:func:`solver.partition.shares.transfer_slack` with nothing kept: the primal resource-directive step of
Geoffrion 1970, which leaves the donor's point feasible and so loses nothing), and the parts are solved once more,
warm; that pass is the round's (unless the pass before it merged better, below), and its shares are the next
round's starting point. ``--whole-below-nnz 0``,
fixed shares, one client dropped (4 clients, K = 2): 20.6% -> 0.84% below the new optimum (seed 2, c0), 8.3% ->
0.34% (seed 1, c1), 20.5% -> 15.0% (seed 1, c3); none of the 31 drops tried got worse.

A share the donor's remaining clients do use, at a lower shadow price than another part's, is not stranded, but
the drop freed it all the same: left alone with c1 after c2 was dropped (3 clients, seed 3, K = 2), c1 took all of
its part's share at a lower price than c0's part paid, and the round ended 17.2% below the new optimum (round 0:
1.9%). So when nothing is stranded, on a capacity row where the dropped clients' part is priced and another
part's price is higher (by more than the update's dead zone), what the dropped clients took there in the previous
round (:func:`dropped_use`) moves to the higher-priced parts, in proportion to their excess price, each receiver at
most doubling its share (its price was measured at its share: moving the whole 0.999 of cap/b to a part holding
0.001 lost more than it gained), and the parts are solved once more. The amount is a guess a price cannot make
exact (the parts' value functions are piecewise linear and coupled through their clients' rows), so the round
keeps the better of the two passes' merged objectives (``shares.passes[].kept``). Stranded capacity comes first
because its move loses nothing: on TE Cogentco (K = 2, 772 of 38,612 commodities dropped) both moves in one pass
merged 0.05% worse than the pass before (so it was kept) and took 12 s against 0.5-0.8 s, where the stranded
capacity alone ends 0.032% below the monolithic round. 156 single drops (3-8 clients, seeds 1-3, K = 2 and 3,
fixed shares, ``--whole-below-nnz 0``): mean loss to the new optimum 11.1% -> 8.3% (K = 2: 6.8% -> 4.1%), 78
better, none worse by more than 1.4e-4 (the parts' ``--tol``); 3 clients seed 3 c2 17.2% -> 3.3%, 4 clients seed 3
c2 18.9% -> 4.9%; 97 of the 156 rounds take the extra pass (17 before). Moving the freed use whole (no cap) gave a
lower mean (8.0%) but left those two at 17.2% / 12.9%; damping it by the price ratio, 9.0-9.2%.
A round whose delta adds clients reads stranded capacity the same way (hunt 37b: a delta dropped every client of
part 1, whose shares went to part 0, 0.999 / 0.001; a valuable client added next went to part 1, the least loaded,
and stayed starved with fixed shares, 71% below the monolithic optimum round after round; now that round merges
at it). When neither move finds anything, gains below :data:`PRICE_NOISE` of the row's largest count as no price:
part 0 left a quarter of capA unused at a dual of 1.2e-4 (the parts' tolerance) against part 1's 220, and nothing
moved. Last, not first: tried first, on 189 single drops (3-8 clients, seeds 1-3, K = 2 and 3) it pre-empted the
priced move 5 times (up to 6 points worse, mean 7.94% -> 7.88%); last, all 189 merge as before.
When none of these moves anything in a round that added clients, a part whose added clients price a capacity row
above other parts (by more than the dead zone) takes share from the lower-priced parts, as much as the added
columns could use by their bounds (:func:`added_use`), which the drop's priced move, capped at doubling a receiver's
share, cannot give a part a drop had emptied (hunt 38: 0.001 of the row; the new client's part stayed 54% below
the monolithic optimum round after round, now 0.036%). What the added columns can use is bounded by their own
rows (a new client's demand row), and a reclaim pass that merges worse than the pass before is tried once more
with half its move (``RECLAIM_HALVINGS``; helper-179: a full move overshot, was dropped round after round, and
the new client stayed 11.9% from the optimum; the half move 1.3%). In-process, 144 rounds adding 1-2 clients
(valued 1x or 2.5x the others) to the 3- to 8-client allocation LPs (seeds 1-3, K = 2 and 3, fixed shares): mean
loss to the monolithic optimum 12.87% -> 5.75%, 115 better, none worse. It comes after the quiet move, since it takes
capacity the donor uses: before it, on hunt 37b's round it took all of a part's share priced at 1.2e-4 and merged
worse than the quiet move, which hands over only what that part left unused.
Rounds without a dropped or added client, MILP rounds (whose extra pass would repeat the parts' integerization) and rounds
whose parts' time is spent are untouched.
"""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem
from solver.partition import shares as sh

#: a row's share moved by at least this (a fraction of its capacity) is worth another pass of the parts
RECLAIM_MIN = 1e-3
PRICE_NOISE = 1e-3  #: a part's gain on a row below this fraction of the row's largest counts as no price (noise)
#: extra passes a round after a drop may take (one: a second one freed nothing more on the 4- to 8-client LPs tried)
RECLAIM_PASSES = 1
#: a reclaim pass whose merge is worse than the pass before is tried again with half its move, this many times
#: (helper-179: the added clients' move, overshooting, was dropped round after round and the new client starved)
RECLAIM_HALVINGS = 1


def reclaimed_shares(problem: Problem, rows: np.ndarray, shares: np.ndarray, present: np.ndarray,
                     gain: np.ndarray, activity: np.ndarray, freed: np.ndarray | None = None,
                     added: np.ndarray | None = None) -> np.ndarray | None:
    """(k, ns) shares with the stranded capacity moved to the priced parts (module docstring), or None when no
    row moves by ``RECLAIM_MIN`` or more.

    Args:
        problem: the round's whole model; rows: (ns,) its shared rows.
        shares, present: (k, ns) the pass's shares and the parts touching each row.
        gain: (k, ns) ``shares.gains`` at the pass's duals; activity: (k, ns) the parts' row activity (NaN: none).
        freed: (k, ns) the dropped clients' previous use of each row in their part (:func:`dropped_use`, in row
            units), None: unknown; where their part is priced lower than another, it moves (:func:`priced_moves`).
        added: (k, ns) the most the columns a delta added could take of each row in their part (:func:`added_use`,
            a fraction of the row), None: unknown; where their part is priced higher than others, share moves to
            it (:func:`added_moves`).
    """
    g = np.where(present, np.nan_to_num(gain), 0.0)
    usage = sh.usage(problem, rows, activity)

    def moves(b: np.ndarray) -> bool:
        m = np.abs(b - shares).sum(axis=0) / 2.0
        return bool(m.size and float(m.max()) >= RECLAIM_MIN)

    back = sh.normalise(sh.transfer_slack(shares, g, present, usage, keep_slack=0.0), present)
    if moves(back):
        return back
    if freed is not None:  # nothing stranded: what the drop freed, where its part is priced lower
        back = sh.normalise(priced_moves(shares, g, present, usage, np.nan_to_num(sh.usage(problem, rows, freed))),
                            present)
        if moves(back):
            return back
    # then a gain below PRICE_NOISE of the row's largest taken as the parts' tolerance, not a price: a part leaving a
    # quarter of its share unused had a dual of 1.2e-4 against 220 in the part that needed it, and nothing moved
    # (hunt 37b). Tried last: first, on 189 single drops, it pre-empted the priced move 5 times (up to 6 points worse)
    quiet = np.where(g > PRICE_NOISE * np.max(np.abs(g), axis=0, initial=0.0)[None, :], g, 0.0)
    back = sh.normalise(sh.transfer_slack(shares, quiet, present, usage, keep_slack=0.0), present)
    if moves(back):
        return back
    # after it, since this move takes capacity a donor uses: first, it took all of a part's share priced at 1.2e-4
    # for a new client (hunt 37b), where the quiet move hands over only what the part left unused, and merged worse
    if added is not None:  # nothing stranded or freed: capacity for added clients priced above their donors
        back = sh.normalise(added_moves(shares, g, present, usage, added), present)
        if moves(back):
            return back
    return None


def dropped_use(old: Problem, prev, col_map: np.ndarray, old_rows: np.ndarray, client_names: np.ndarray,
                k: int) -> np.ndarray | None:
    """(k, ns) what the dropped clients' columns took of each shared row at the previous round's part points,
    by the part that held them: the use a drop freed in its part (0 on rows that are new, -1 in ``old_rows``).
    None when the previous round's grouping or a part's point is unknown. Reads only the dropped columns'
    nonzeros (CSC slices gathered with one ``np.repeat``).

    Args:
        old: the previous round's whole model (n_old columns); prev: its ``PartitionData``.
        col_map: (n,) old column of every new column (-1: added); old_rows: (ns,) old row of each shared row.
        client_names: the round's client names (a previous client not among them was dropped); k: parts.
    """
    n_old = old.n_cols
    cc = prev.col_client
    if cc is None or cc.shape != (n_old,):
        return None
    x = np.zeros(n_old)
    for ps in prev.parts:  # k parts
        st = ps.state
        if ps.cols is not None and ps.cols.size and (st is None or st.x.shape != ps.cols.shape):
            return None
        if st is not None and ps.cols is not None:
            x[ps.cols] = st.x
    # as str: np.isin on object arrays compares every pair (38,612 TE Cogentco clients: 20 s), on str it sorts
    gone = ~np.isin(np.asarray(prev.assignment.client_names, dtype=str), np.asarray(client_names, dtype=str))
    dropped = np.ones(n_old, dtype=bool)
    dropped[col_map[col_map >= 0]] = False
    cols = np.flatnonzero(dropped & (cc >= 0))
    cols = cols[gone[cc[cols]]]
    out = np.zeros((k, old_rows.size))
    ok = np.flatnonzero(old_rows >= 0)
    if cols.size == 0 or ok.size == 0:
        return out
    nz, lens = _entries_of(old.a_indptr, cols)
    pos = np.full(old.n_rows, -1, dtype=np.int64)
    pos[old_rows[ok]] = np.arange(ok.size, dtype=np.int64)
    r = pos[old.a_indices[nz]]
    part = np.repeat(prev.assignment.client_part[cc[cols]], lens)
    val = old.a_data[nz] * np.repeat(x[cols], lens)
    m = r >= 0
    out[:, ok] = np.bincount(part[m] * ok.size + r[m], weights=val[m], minlength=k * ok.size).reshape(k, ok.size)
    return out


def _entries_of(indptr: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the nonzeros of CSC columns ``cols`` (gathered with one ``np.repeat``) and each column's
    count: ((sum of counts,), (cols.size,))."""
    starts = indptr[cols]
    lens = indptr[cols + 1] - starts
    return np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum())), lens


def added_use(problem: Problem, rows: np.ndarray, col_map: np.ndarray, col_part: np.ndarray, k: int) -> np.ndarray:
    """(k, ns) the most the columns a delta added (``col_map`` -1) could take of each shared capacity row, by their
    part, as a fraction of the row's upper bound, at most 1: sum of a_rj u_j over their positive entries, where u_j
    is the column's upper bound tightened by its own rows, and a group of columns under one such row (a new
    client's demand row) takes at most that row's bound times its best ratio a_rj / a_ij (helper-179: with the
    columns' bounds alone, a client of demand 2 whose two columns have bound 3 or none asked for the whole row, the
    move overshot, its pass merged worse and was dropped, and the client stayed starved). An own row counts when
    every entry of it is on an added column with a positive coefficient, a lower bound >= 0, and the row's bounds
    are (-inf or <= 0, finite >= 0). An infinite u_j with no such row counts as the whole row. Reads the added
    columns' nonzeros, and one count of every row's entries.

    Args:
        problem: the round's whole model; rows: (ns,) its shared rows; col_map: (n,) old column of every column
            (-1: added); col_part: (n,) each column's part (-1: global); k: parts.
    """
    ns = rows.size
    out = np.zeros((k, ns))
    cols = np.flatnonzero((np.asarray(col_map) < 0) & (np.asarray(col_part) >= 0))
    if cols.size == 0 or ns == 0:
        return out
    nz, lens = _entries_of(problem.a_indptr, cols)
    jj = np.repeat(np.arange(cols.size), lens)  # each entry's column, as an index into cols
    rr = problem.a_indices[nz].astype(np.int64)
    a = problem.a_data[nz]
    pos = np.full(problem.n_rows, -1, dtype=np.int64)
    pos[rows] = np.arange(ns, dtype=np.int64)
    r = pos[rr]
    rl, ru = problem.row_lower, problem.row_upper
    ok = ((r < 0) & (a > 0) & (problem.col_lower[cols][jj] >= 0) & np.isfinite(ru[rr]) & (ru[rr] >= 0)
          & ~(rl[rr] > 0))
    whole = np.bincount(problem.a_indices, minlength=problem.n_rows)  # a row's entries, all of them added and ok
    own = ok & (np.bincount(rr[ok], minlength=problem.n_rows) == whole)[rr]
    j_own, r_own, a_own = jj[own], rr[own], a[own]
    ub = problem.col_upper[cols].astype(float)
    np.minimum.at(ub, j_own, ru[r_own] / a_own)
    grp = np.full(cols.size, -1, dtype=np.int64)  # each column's first own row, and its coefficient there
    coef = np.ones(cols.size)
    first_col, first_at = np.unique(j_own, return_index=True)
    grp[first_col] = r_own[first_at]
    coef[first_col] = a_own[first_at]
    up = problem.row_upper[rows]
    cap = np.isfinite(up) & (up > 0)
    m = (r >= 0) & (a > 0)
    m[m] = cap[r[m]]
    j, rs, am = jj[m], r[m], a[m]
    use = np.where(np.isfinite(ub[j]), am * np.maximum(ub[j], 0.0), np.inf)  # row units
    part = np.asarray(col_part)[cols][j]
    g = grp[j]
    alone = g < 0
    total = np.zeros(k * ns)
    np.add.at(total, part[alone] * ns + rs[alone], use[alone])
    if (~alone).any():  # a group under one own row: at most its bound times its best ratio
        key = g[~alone] * ns + rs[~alone]
        keys, inv = np.unique(key, return_inverse=True)
        summed = np.zeros(keys.size)
        np.add.at(summed, inv, use[~alone])
        best = np.zeros(keys.size)
        np.maximum.at(best, inv, am[~alone] / coef[j[~alone]])
        bound = problem.row_upper[keys // ns] * best
        gpart = np.zeros(keys.size, dtype=np.int64)
        gpart[inv] = part[~alone]
        np.add.at(total, gpart * ns + keys % ns, np.minimum(summed, bound))
    out[:] = (total.reshape(k, ns) / np.where(cap, up, 1.0)[None, :])
    return np.minimum(np.nan_to_num(out, nan=1.0, posinf=1.0), 1.0)


#: of the share the lower-priced parts hold above the floor, at most this fraction moves to a part with added clients
#: in one pass (the receivers' prices were measured at a sliver of the row; the pass after the move is kept only
#: when its merge is better)
ADDED_TAKE = 1.0


def added_moves(shares: np.ndarray, gain: np.ndarray, present: np.ndarray, usage: np.ndarray,
                added: np.ndarray) -> np.ndarray:
    """(k, ns) shares after moving, on each capacity row, share to a part whose added clients (``added`` > 0) price
    it above other parts (by more than ``DEAD_ZONE`` of the row's largest gain): up to what they could take
    (``added``, less what the part holds unused), at most ``ADDED_TAKE`` of what the lower-priced parts hold above
    ``FLOOR``, taken from them in proportion to that. The drop's priced move (:func:`priced_moves`) lets a receiver at
    most double its share, since its price was measured at that share; a part a drop had emptied (0.001 of the row)
    and that a valuable new client was routed to then stayed starved (hunt 38: 54% below the monolithic optimum
    round after round, the price step growing its share by 8% a round). The added clients' bounds say how much they
    can use.

    Args:
        shares: (k, ns); gain: (k, ns) ``shares.gains`` (0 where absent); present: (k, ns); usage: (k, ns)
            ``shares.usage`` (NaN: not a capacity row); added: (k, ns) :func:`added_use`.
    Returns:
        A new (k, ns) array; columns keep their sums. One loop over the k parts (vectorised over the rows).
    """
    g = np.where(present, gain, 0.0)
    cap = ~np.all(np.isnan(usage), axis=0)
    scale = np.abs(g).max(axis=0) if g.size else np.zeros(g.shape[1])
    unused = np.clip(shares - np.nan_to_num(usage, nan=np.inf), 0.0, None)
    out = shares.copy()
    for p in range(shares.shape[0]):
        lower = present & ((g[p][None, :] - g) > sh.DEAD_ZONE * scale[None, :])
        room = np.where(lower, np.clip(out - sh.FLOOR, 0.0, None), 0.0)
        tot = room.sum(axis=0)
        want = np.clip(added[p] - unused[p], 0.0, None)
        amount = np.where(cap & present[p] & (g[p] > 0) & (want > 0), np.minimum(want, ADDED_TAKE * tot), 0.0)
        take = room * (amount / np.where(tot > 0, tot, 1.0))[None, :]
        out -= take
        out[p] += take.sum(axis=0)
    return out


def priced_moves(shares: np.ndarray, gain: np.ndarray, present: np.ndarray, usage: np.ndarray,
                 freed: np.ndarray) -> np.ndarray:
    """(k, ns) shares after moving, on each capacity row, what the drop freed in a part that is still priced there
    (its remaining clients took it back) to the parts whose price is higher (module docstring).

    A donor d (``freed`` > 0, gain > 0) gives up to ``freed[d]`` (at most its share less ``FLOOR``) to the parts
    whose gain exceeds its own by more than ``DEAD_ZONE`` of the row's largest, in proportion to that excess; no
    receiver takes more than its share before the move (its price was measured at that share: a part holding 0.1%
    of a row and priced there may not use 40% of it). What the receivers do not take stays with the donor.

    Args:
        shares: (k, ns) the shares (after the slack transfer); gain: (k, ns) ``shares.gains`` (0 where absent);
        present: (k, ns) the parts touching each row; usage: (k, ns) ``shares.usage`` (NaN: not a capacity row);
        freed: (k, ns) what the dropped clients took of each row in their part, a fraction of the row.
    Returns:
        A new (k, ns) array; columns keep their sums. One loop over the k parts (vectorised over the rows).
    """
    g = np.where(present, gain, 0.0)
    cap = ~np.all(np.isnan(usage), axis=0)
    scale = np.abs(g).max(axis=0) if g.size else np.zeros(g.shape[1])
    out = shares.copy()
    for d in range(shares.shape[0]):
        excess = np.where(present, g - g[d][None, :], 0.0)
        up = excess > sh.DEAD_ZONE * scale[None, :]
        amount = np.where(cap & present[d] & (g[d] > 0) & up.any(axis=0),
                          np.clip(np.minimum(freed[d], shares[d] - sh.FLOOR), 0.0, None), 0.0)
        w = np.where(up, excess, 0.0)
        wsum = w.sum(axis=0)
        take = np.minimum(w * (amount / np.where(wsum > 0, wsum, 1.0))[None, :], shares)
        out[d] -= take.sum(axis=0)
        out += take
    return out
