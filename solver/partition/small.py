"""Which rounds are small: an LP round small enough to be solved whole as well as partitioned, a MILP round small
enough to go from a merge above its target gap straight to a whole solve, and a round whose parts run in this
process rather than in worker processes it would start (numpy-free: the CLI reads the defaults from here)."""

from __future__ import annotations

SMALL_LP_NNZ = 200_000  #: default ``--whole-below-nnz``: an LP round's whole model with at most this many
#: nonzeros is also solved whole (``solver.partition.fallback.compare_small_lp``). TE ring 24 (7,654 nonzeros)
#: solves whole in 0.07-0.35 s, about what its partitioned round's setup, parts and merge take, and its K = 4 / 8
#: merges were 3.4-4.5% / 6.9-9.0% below the monolithic optimum; TE Cogentco (956k nonzeros; K = 4 within
#: 0.2-0.35%) and Kdl (30.9M) stay partitioned only

SMALL_MILP_NNZ = 20_000  #: a MILP round's whole model with at most this many nonzeros (and at most
#: ``--whole-below-nnz``) whose merged point is above ``--mip-gap`` is compared with a whole solve at once, without
#: the parts' RENS steps, price re-split pass and re-solves (``solver.partition.round``). LB 64 x 8 (2,560
#: nonzeros), K = 2: those took 0.3-5.8 s per round (the price pass up to its 2 s floor, a re-solve up to 3.3 s) and
#: never reached the target (the merge 100% from the Lagrangian bound, the shard moves' objective being a few
#: units), after which the whole solve (0.1-0.8 s) was kept in every round

INLINE_BELOW_NNZ = 20_000  #: default of config.json's ``partition.inline_below_nnz`` when ``init`` is given no
#: ``--executor``: a round whose whole model has at most this many nonzeros solves its parts in this process, one
#: after another, instead of starting worker processes, whose start (the forkserver loading the solver and its
#: kernels) took 0.7-1.9 s on LB 64 x 8 (2,560 nonzeros, MILP; parts 0.1-0.3 s each) and the TE demo (LP, 7,654
#: nonzeros, solved whole in 0.07-0.35 s), 1.2-2.9 s on LB 128 x 16 (10,240 nonzeros; parts 0.4-4 s each), whose
#: K = 2 steps took 2.8-6.0 s inline against 5.1-8.2 s on the workers (5 of 6 rounds faster; 2 cores at load 2)


def small_lp(problem, limit: int = SMALL_LP_NNZ) -> bool:
    """``problem`` is an LP whose whole model has at most ``limit`` nonzeros (``limit`` 0: none is)."""
    return not problem.is_mip and limit > 0 and int(problem.nnz) <= limit


def small_milp(problem, limit: int = SMALL_LP_NNZ) -> bool:
    """``problem`` is a MILP whose whole model has at most ``min(limit, SMALL_MILP_NNZ)`` nonzeros (``limit``:
    ``--whole-below-nnz``, 0: none is)."""
    return bool(problem.is_mip) and limit > 0 and int(problem.nnz) <= min(limit, SMALL_MILP_NNZ)


def parts_inline(nnz: int, limit: int) -> bool:
    """A round whose whole model has ``nnz`` nonzeros runs its parts in this process (``limit``: config.json's
    ``partition.inline_below_nnz``, 0: never)."""
    return limit > 0 and int(nnz) <= limit
