"""A random transportation LP: the classic network LP on which hot-started simplex shines and warm-started
first-order methods are measured (REFERENCES.md section 4's 20k-variable prototype)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from solver.model.problem import Problem


def transportation(n_src: int, n_dst: int, seed: int = 0) -> Problem:
    """Supplies (rows ``<=``) and demands (rows ``>=``), costs U(1, 10), ``n_src * n_dst`` columns.

    Total supply is 1.2x total demand, so the LP is feasible and bounded.

    Returns:
        Problem with ``n_src + n_dst`` rows, ``n_src * n_dst`` columns and ``2 * n_src * n_dst`` nonzeros.
    """
    rng = np.random.default_rng(seed)
    n = n_src * n_dst
    src, dst = np.repeat(np.arange(n_src), n_dst), np.tile(np.arange(n_dst), n_src)
    A = sp.csc_array((np.ones(2 * n), (np.concatenate([src, n_src + dst]), np.tile(np.arange(n), 2))),
                     shape=(n_src + n_dst, n))
    demand = rng.uniform(5, 15, n_dst)
    supply = rng.uniform(0.5, 1.5, n_src)
    supply *= 1.2 * demand.sum() / supply.sum()
    return Problem.from_arrays(cost=rng.uniform(1, 10, n), matrix=A,
                               row_lower=np.concatenate([np.full(n_src, -np.inf), demand]),
                               row_upper=np.concatenate([supply, np.full(n_dst, np.inf)]),
                               col_lower=np.zeros(n), col_upper=np.full(n, np.inf))
