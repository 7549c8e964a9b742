"""Shard load balancing, POP's benchmark (Narayanan et al., SOSP'21, section 5), round by round.

N shards, S servers (default 1024 x 128). Shard j has load ``load[j]`` (new Zipf-like loads every round:
``load[j] = round(1e6 / (j + 1) ** z)`` with ``z ~ U[0.25, 0.75]``) and memory 1; every server has memory
``mem_cap`` (16 at the default scale, i.e. twice the mean). Variables per (shard j, server i):
``s<j>/r/<i>`` = r[i, j] in [0, 1], the fraction of shard j's load served by server i, and ``s<j>/x/<i>``
= x[i, j] in {0, 1}, shard j stored on server i. The MILP::

    minimize   sum_{i,j} x[i, j] * [shard j was not on server i last round]    (shards newly placed)
    s.t.       load/<i>:      L - eps <= sum_j load[j] r[i, j] <= L + eps   (L = mean load, eps = L/20)
               mem/<i>:       sum_j mem[j] x[i, j] <= mem_cap
               s<j>/assign:   sum_i r[i, j] = 1
               s<j>/vub/<i>:  r[i, j] - x[i, j] <= 0

Sizes at 1024 x 128: 262,144 columns, 132,352 rows (the +-5% band is one ranged row per server),
655,360 nonzeros, as in POP's benchmark without the optional rows.

Rounds: the previous placement (x > 0.5 or r > 1e-6 of the previous solution, or, when none is given,
a simulated one) sets the costs; new loads change the ``load/<i>`` coefficients and band. Round 0 uses
POP's initial placement j -> server j mod S. The simulated placement lays the shards on a line in the
order of their previous server (heaviest first within a server) and cuts it into S segments of equal
load: every server then carries exactly the mean load, a shard straddling a cut is split between
neighbours, and most shards stay where they were. If a server would hold more than ``mem_cap``
shards, the line is rebuilt from S piles dealt heaviest-first in snake order (about N/S shards each).
"""

from __future__ import annotations

import numpy as np

from solver.model.delta import Delta
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.workloads.common import Scenario, changed, csc_problem, join_names


def zipf_loads(n_shards: int, rng: np.random.Generator) -> np.ndarray:
    """(N,) POP's Zipf-like loads ``round(1e6 / (j + 1) ** z)``, z ~ U[0.25, 0.75] drawn once per call."""
    z = rng.uniform(0.25, 0.75)
    return np.round(1e6 / np.arange(1, n_shards + 1, dtype=float) ** z)


def line_placement(load: np.ndarray, order: np.ndarray, n_servers: int) -> np.ndarray:
    """(N, S) fractions r: shards laid on a line in ``order``, cut into S equal-load segments.

    Args:
        load: (N,) positive loads; order: (N,) permutation of shards; n_servers: S.
    Returns:
        (N, S) float r with every row summing to 1 and every column carrying total/S.
    """
    N = load.size
    L = load.sum() / n_servers
    c = np.cumsum(load[order])
    start = np.r_[0.0, c[:-1]]
    first = np.minimum((start / L).astype(np.int64), n_servers - 1)
    last = np.minimum(np.ceil(c / L - 1e-12).astype(np.int64) - 1, n_servers - 1)
    last = np.maximum(last, first)
    span = last - first + 1
    jj = np.repeat(np.arange(N), span)
    ii = first[jj] + (np.arange(jj.size) - np.repeat(np.cumsum(span) - span, span))
    lo = np.maximum(start[jj], ii * L)
    hi = np.minimum(c[jj], (ii + 1) * L)
    hi[ii == n_servers - 1] = c[jj][ii == n_servers - 1]
    r = np.zeros((N, n_servers))
    np.add.at(r, (order[jj], ii), np.maximum(hi - lo, 0.0) / load[order][jj])
    return r


class LBScenario(Scenario):
    """POP's shard load-balancing rounds (module docstring). Deterministic for ``seed``.

    Args:
        shards, servers: N and S (scale knob ``"1024x128"``).
        mem_cap: memory per server (default 2 * ceil(N / S), i.e. 16 at 1024 x 128).
        band: relative load band around the mean (0.05 = +-5%).
        seed: RNG seed.
    Raises:
        UsageError: fewer than 2 servers or fewer shards than servers.
    """

    domain = "lb"

    def __init__(self, shards: int = 1024, servers: int = 128, mem_cap: int | None = None,
                 band: float = 0.05, seed: int = 0):
        super().__init__()
        if servers < 2 or shards < servers:
            raise UsageError(f"load balancing needs >= 2 servers and at least as many shards ({shards}x{servers})")
        self.N, self.S = int(shards), int(servers)
        self.mem_cap = float(mem_cap if mem_cap is not None else 2 * -(-self.N // self.S))
        self.band = float(band)
        self.rng = np.random.default_rng(seed)
        self.load = zipf_loads(self.N, self.rng)
        self.placed = np.zeros((self.N, self.S), dtype=bool)
        self.placed[np.arange(self.N), np.arange(self.N) % self.S] = True
        jj, ii = np.divmod(np.arange(self.N * 2 * self.S), 2 * self.S)
        kind = np.where(ii < self.S, "/r/", "/x/")
        self._names = join_names("s", jj, kind.astype(object), ii % self.S)

    def current_col_names(self) -> np.ndarray:
        return self._names

    def _band(self) -> tuple[np.ndarray, np.ndarray]:
        L = self.load.sum() / self.S
        return np.full(self.S, L * (1 - self.band)), np.full(self.S, L * (1 + self.band))

    def _cost(self) -> np.ndarray:
        c = np.zeros((self.N, 2 * self.S))
        c[:, self.S:] = ~self.placed
        return c.ravel()

    def problem(self) -> Problem:
        """The MILP of the current round (columns shard-major: r/0..S-1 then x/0..S-1)."""
        N, S = self.N, self.S
        j = np.repeat(np.arange(N), S)
        i = np.tile(np.arange(S), N)
        shard_row = 2 * S + j * (S + 1)
        # r columns: load/i, s<j>/assign, s<j>/vub/i ; x columns: mem/i, s<j>/vub/i
        r_idx = np.stack([i, shard_row, shard_row + 1 + i], axis=1).reshape(N, S * 3)
        x_idx = np.stack([S + i, shard_row + 1 + i], axis=1).reshape(N, S * 2)
        r_val = np.stack([self.load[j], np.ones(N * S), np.ones(N * S)], axis=1).reshape(N, S * 3)
        x_val = np.stack([np.ones(N * S), -np.ones(N * S)], axis=1).reshape(N, S * 2)
        indices = np.concatenate([r_idx, x_idx], axis=1).ravel()
        data = np.concatenate([r_val, x_val], axis=1).ravel()
        per_col = np.tile(np.r_[np.full(S, 3), np.full(S, 2)], N)
        indptr = np.r_[0, np.cumsum(per_col)]
        lo, hi = self._band()
        shard_rows = np.concatenate([join_names("s", np.arange(N), "/assign")[:, None],
                                     join_names("s", j, "/vub/", i).reshape(N, S)], axis=1).ravel()
        row_names = np.r_[join_names("load/", np.arange(S)), join_names("mem/", np.arange(S)), shard_rows]
        is_assign = np.zeros(N * (S + 1), dtype=bool)
        is_assign[:: S + 1] = True
        row_lower = np.r_[lo, np.full(S, -np.inf), np.where(is_assign, 1.0, -np.inf)]
        row_upper = np.r_[hi, np.full(S, self.mem_cap), np.where(is_assign, 1.0, 0.0)]
        n = 2 * N * S
        integ = np.tile(np.r_[np.zeros(S, bool), np.ones(S, bool)], N)
        return csc_problem(cost=self._cost(), col_lower=np.zeros(n), col_upper=np.ones(n), integrality=integ,
                           row_lower=row_lower, row_upper=row_upper, indptr=indptr, indices=indices, data=data,
                           col_names=self._names, row_names=row_names, sense=1,
                           name=f"lb-{N}x{S}-round{self.round}")

    def simulate_placement(self) -> np.ndarray:
        """(N, S) bool placement for the current loads that keeps shards near their previous server."""
        prim = np.argmax(self.placed, axis=1)
        order = np.lexsort((-self.load, prim))
        r = line_placement(self.load, order, self.S)
        if ((r > 0).sum(axis=0) > self.mem_cap).any():
            # deal shards (heaviest first) to S piles in snake order, lay the piles end to end
            by_load = np.argsort(-self.load, kind="stable")
            k = np.arange(self.N)
            rnd, pos = np.divmod(k, self.S)
            pile = np.where(rnd % 2 == 0, pos, self.S - 1 - pos)
            r = line_placement(self.load, by_load[np.lexsort((k, pile))], self.S)
        return r > 1e-9

    def _advance(self, x: np.ndarray | None) -> Delta:
        if x is None:
            placed = self.simulate_placement()
        else:
            v = x.reshape(self.N, 2 * self.S)
            placed = (v[:, self.S:] > 0.5) | (v[:, : self.S] > 1e-6)
        old_cost, old_load, old_band = self._cost(), self.load, self._band()
        self.placed = placed
        self.load = zipf_loads(self.N, self.rng)
        cost = self._cost()
        parts = []
        chg = np.flatnonzero(changed(old_cost, cost))
        if chg.size:
            parts.append(Delta.vars(self._names[chg], cost=cost[chg]))
        lo, hi = self._band()
        if changed(old_band[0], lo).any() or changed(old_band[1], hi).any():
            parts.append(Delta.cons(join_names("load/", np.arange(self.S)), lower=lo, upper=hi))
        lchg = np.flatnonzero(changed(old_load, self.load))
        if lchg.size:
            j = np.repeat(lchg, self.S)
            i = np.tile(np.arange(self.S), lchg.size)
            var = self._names.reshape(self.N, 2 * self.S)[:, : self.S][lchg].ravel()
            parts.append(Delta.coefs(var, join_names("load/", i), self.load[j]))
        return Delta.concat(parts)

    @staticmethod
    def parse_scale(scale) -> tuple[int, int]:
        """``(N, S)`` shards and servers from an (N, S) tuple: ``--scale 1024x128`` as
        ``solver.workloads.common.parse_scale`` reads it.

        Raises:
            UsageError: anything else, a lone number too (``--scale 16``, which meant 16 shards on 16 // 8 = 2
                servers without a word): the message names the accepted form and what the number meant.
        """
        if isinstance(scale, tuple) and len(scale) == 2:
            return int(scale[0]), int(scale[1])
        if isinstance(scale, int):
            raise UsageError(f"load-balancing --scale is SHARDSxSERVERS, both numbers (e.g. 1024x128: 1024 shards on "
                             f"128 servers), got {scale}: give the server count too, e.g. {scale}x"
                             f"{max(2, scale // 8)}")
        raise UsageError(f"load-balancing --scale is SHARDSxSERVERS (e.g. 1024x128: 1024 shards on 128 servers), "
                         f"got {scale!r}")
