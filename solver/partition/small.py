"""Which LP rounds are small enough to be solved whole as well as partitioned (numpy-free: the CLI reads the
default of ``--whole-below-nnz`` from here)."""

from __future__ import annotations

SMALL_LP_NNZ = 200_000  #: default ``--whole-below-nnz``: an LP round's whole model with at most this many
#: nonzeros is also solved whole (``solver.partition.fallback.compare_small_lp``). TE ring 24 (7,654 nonzeros)
#: solves whole in 0.07-0.35 s, about what its partitioned round's setup, parts and merge take, and its K = 4 / 8
#: merges were 3.4-4.5% / 6.9-9.0% below the monolithic optimum; TE Cogentco (956k nonzeros; K = 4 within
#: 0.2-0.35%) and Kdl (30.9M) stay partitioned only


def small_lp(problem, limit: int = SMALL_LP_NNZ) -> bool:
    """``problem`` is an LP whose whole model has at most ``limit`` nonzeros (``limit`` 0: none is)."""
    return not problem.is_mip and limit > 0 and int(problem.nnz) <= limit
