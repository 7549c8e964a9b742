"""After a delta drops clients: the capacity their part can no longer use is given back in the same round.

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
warm; that pass is the round's, and its shares are the next round's starting point. ``--whole-below-nnz 0``,
fixed shares, one client dropped (4 clients, K = 2): 20.6% -> 0.84% below the new optimum (seed 2, c0), 8.3% ->
0.34% (seed 1, c1), 20.5% -> 15.0% (seed 1, c3); none of the 31 drops tried got worse. What it does not move is a
share the donor's remaining clients do use, at a lower shadow price than another part's (e.g. 3 clients, seed 3,
c2: 17%, round 0 1.9%): that is the share update's sign step (``--share-update-every``), not stranded capacity.
Rounds without a dropped client, MILP rounds (whose extra pass would repeat the parts' integerization) and rounds
whose parts' time is spent are untouched.
"""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem
from solver.partition import shares as sh

#: a row's share moved by at least this (a fraction of its capacity) is worth another pass of the parts
RECLAIM_MIN = 1e-3
#: extra passes a round after a drop may take (one: a second one freed nothing more on the 4- to 8-client LPs tried)
RECLAIM_PASSES = 1


def reclaimed_shares(problem: Problem, rows: np.ndarray, shares: np.ndarray, present: np.ndarray,
                     gain: np.ndarray, activity: np.ndarray) -> np.ndarray | None:
    """(k, ns) shares with the stranded capacity moved to the priced parts (module docstring), or None when no
    row moves by ``RECLAIM_MIN`` or more.

    Args:
        problem: the round's whole model; rows: (ns,) its shared rows.
        shares, present: (k, ns) the pass's shares and the parts touching each row.
        gain: (k, ns) ``shares.gains`` at the pass's duals; activity: (k, ns) the parts' row activity (NaN: none).
    """
    g = np.where(present, np.nan_to_num(gain), 0.0)
    back = sh.normalise(sh.transfer_slack(shares, g, present, sh.usage(problem, rows, activity), keep_slack=0.0),
                        present)
    moved = np.abs(back - shares).sum(axis=0) / 2.0
    return back if moved.size and float(moved.max()) >= RECLAIM_MIN else None
