"""WAN traffic engineering in the path formulation (POP, SOSP'21; NCFlow, NSDI'21; Teal, SIGCOMM'23).

Network: directed links e with capacity ``cap[e]``; commodities = every ordered node pair (s, t) with
demand ``d[s, t]``; each commodity routes over up to 4 edge-disjoint fewest-hop paths
(:mod:`solver.workloads.paths`); variable ``f[k, p] >= 0`` is the flow on path p of commodity k.

- total flow (default)::

      maximize  sum f
      s.t.      link/<u>-<v>:  sum_{paths through e} f <= cap[e]
                d<s>-<t>/cap:  sum_p f[k, p] <= d[k]

- max concurrent flow (``objective="concurrent"``)::

      maximize  alpha
      s.t.      link/<u>-<v>:  sum_{paths through e} f <= cap[e]
                d<s>-<t>/dem:  sum_p f[k, p] - d[k] alpha >= 0

Rounds: each demand drifts by ``d <- max(0, d * (1 + 0.1 U(-1, 1)))`` (POP's perturbation), or follows a
given sequence of traffic matrices (B4's real matrices); a delta sets the changed row bounds (total
flow) or the ``alpha`` coefficients (concurrent flow). The structure never changes, so the previous
solution is not needed.

Built-in default (no data files): a ring of n nodes with n/2 random chords (both directions, capacity
1000 per link) and a gravity traffic matrix ``tm[u, v] = total * out(u)/sum(out) * in(v)/(sum(in) - in(u))``
(POP's gravity model with link capacities as node weights), scaled so that the total demand is
``load`` times what the links could carry at the mean first-path length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from solver.model.delta import Delta
from solver.model.errors import UsageError, ValidationError
from solver.model.problem import Problem
from solver.workloads.common import Scenario, changed, csc_problem, join_names
from solver.workloads.paths import disjoint_paths

DEFAULT_CAPACITY = 1000.0


@dataclass
class Topology:
    """A directed network.

    Attributes:
        labels: (n,) node labels used in names (str, no '/' or '-').
        src, dst: (E,) int endpoints of each directed link (no self-loops, no duplicate pairs).
        cap: (E,) float link capacities.
        name: topology name.
    """

    labels: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    cap: np.ndarray
    name: str = ""

    @property
    def n(self) -> int:
        return int(self.labels.shape[0])


def make_topology(labels, src, dst, cap=None, *, undirected: bool = False, name: str = "") -> Topology:
    """Canonical topology: optional reverse edges, self-loops and duplicate (u, v) dropped (first kept),
    restricted to the largest strongly connected component, nodes renumbered in label order of appearance.

    Args:
        labels: (n,) node labels; src, dst: (E,) int endpoints into labels; cap: (E,) or None (1000).
        undirected: add the reverse of every edge (same capacity).
    Raises:
        ValidationError: a label containing '/' or '-' (they separate name parts), a non-positive
            or non-finite capacity, an endpoint out of range, or no link at all.
    """
    labels = np.asarray([str(x) for x in np.asarray(labels).tolist()], dtype=object)
    n = labels.size
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    cap = np.full(src.size, DEFAULT_CAPACITY) if cap is None else np.asarray(cap, dtype=float)
    if src.size == 0:
        raise ValidationError(f"topology {name!r} has no links")
    if src.min() < 0 or dst.min() < 0 or max(src.max(), dst.max()) >= n:
        raise ValidationError(f"topology {name!r}: link endpoint out of range")
    if not np.all(np.isfinite(cap)) or (cap <= 0).any():
        raise ValidationError(f"topology {name!r}: link capacities must be positive and finite")
    bad = [s for s in labels.tolist() if "/" in s or "-" in s]
    if bad:
        raise ValidationError(f"topology {name!r}: node label contains '/' or '-'", entity=bad[0])
    if undirected:
        src, dst, cap = np.r_[src, dst], np.r_[dst, src], np.r_[cap, cap]
    ok = src != dst
    src, dst, cap = src[ok], dst[ok], cap[ok]
    _, first = np.unique(src * n + dst, return_index=True)
    first = np.sort(first)
    src, dst, cap = src[first], dst[first], cap[first]
    g = sp.csr_array((np.ones(src.size), (src, dst)), shape=(n, n))
    _, comp = connected_components(g, directed=True, connection="strong")
    big = np.argmax(np.bincount(comp))
    keep_node = comp == big
    new_id = np.cumsum(keep_node) - 1
    ok = keep_node[src] & keep_node[dst]
    return Topology(labels=labels[keep_node], src=new_id[src[ok]], dst=new_id[dst[ok]], cap=cap[ok], name=name)


def ring_with_chords(n: int, seed: int = 0) -> Topology:
    """The synthetic default network: a bidirectional ring of n nodes plus n/2 random bidirectional
    chords, capacity 1000 per directed link.

    Raises:
        UsageError: n < 3.
    """
    if n < 3:
        raise UsageError(f"a TE ring needs at least 3 nodes, got {n}")
    rng = np.random.default_rng(seed)
    a = np.arange(n)
    ca = rng.integers(0, n, n // 2)
    cb = (ca + rng.integers(2, max(3, n - 1), n // 2)) % n
    return make_topology(a, np.r_[a, ca], np.r_[(a + 1) % n, cb], undirected=True, name=f"ring{n}")


def gravity_matrix(topo: Topology, total: float) -> np.ndarray:
    """(n, n) gravity traffic matrix with zero diagonal (POP's formula; module docstring)."""
    out_cap = np.bincount(topo.src, weights=topo.cap, minlength=topo.n)
    in_cap = np.bincount(topo.dst, weights=topo.cap, minlength=topo.n)
    tm = total * (out_cap / out_cap.sum())[:, None] * (in_cap[None, :] / (in_cap.sum() - in_cap[:, None]))
    np.fill_diagonal(tm, 0.0)
    return tm


class TEScenario(Scenario):
    """Traffic-engineering rounds over a fixed path set (module docstring). Deterministic for ``seed``.

    Args:
        topology: a :class:`Topology` (default: :func:`ring_with_chords` of ``nodes`` nodes).
        nodes: size of the synthetic ring (scale knob) when no topology is given.
        demands: (n, n) initial traffic matrix, or a sequence of them (round r uses matrix r mod len);
            default: gravity matrix at ``load``.
        objective: ``"total"`` (max total flow) or ``"concurrent"`` (max concurrent flow).
        paths: maximum edge-disjoint paths per commodity.
        perturb: relative demand drift per round (0.1 = POP's +-10%) when no sequence is given.
        seed: RNG seed.
    Raises:
        UsageError: unknown objective. ValidationError: a traffic matrix of the wrong shape or with
            negative/non-finite entries.
    """

    domain = "te"

    def __init__(self, topology: Topology | None = None, nodes: int = 24, demands=None,
                 objective: str = "total", paths: int = 4, perturb: float = 0.1, load: float = 1.5,
                 seed: int = 0, threads: int = 2):
        super().__init__()
        if objective not in ("total", "concurrent"):
            raise UsageError(f"TE objective must be 'total' or 'concurrent', got {objective!r}")
        self.objective = objective
        self.rng = np.random.default_rng(seed)
        self.topo = topology if topology is not None else ring_with_chords(int(nodes), seed)
        n = self.topo.n
        ss, tt = np.nonzero(~np.eye(n, dtype=bool))  # all ordered pairs, grouped by source
        self.k_src, self.k_dst = ss, tt
        self.npaths, self.lens, self.edges = disjoint_paths(n, self.topo.src, self.topo.dst, ss, tt,
                                                             k=paths, threads=threads)
        self.perturb = float(perturb)
        self.sequence = None
        if demands is None:
            first = self.lens[np.r_[0, np.cumsum(self.npaths)[:-1]][self.npaths > 0]]
            hops = float(first.mean()) if first.size else 1.0
            self.d = gravity_matrix(self.topo, load * self.topo.cap.sum() / hops)[ss, tt]
        else:
            mats = [demands] if np.ndim(demands) == 2 else list(demands)
            self.sequence = [self._check_tm(m) for m in mats]
            self.d = self.sequence[0]
        self._names = None
        self.k_names = join_names("d", self.topo.labels[ss], "-", self.topo.labels[tt])

    def _check_tm(self, tm) -> np.ndarray:
        tm = np.asarray(tm, dtype=float)
        n = self.topo.n
        if tm.shape != (n, n):
            raise ValidationError(f"traffic matrix has shape {tm.shape}, the topology has {n} nodes")
        if not np.all(np.isfinite(tm)) or (tm < 0).any():
            raise ValidationError("traffic matrix has a negative or non-finite entry")
        return tm[self.k_src, self.k_dst]

    def current_col_names(self) -> np.ndarray:
        if self._names is None:
            kk = np.repeat(np.arange(self.npaths.size), self.npaths)
            first = np.r_[0, np.cumsum(self.npaths)[:-1]]
            pidx = np.arange(kk.size) - first[kk]
            names = join_names(self.k_names[kk], "/p", pidx)
            self._names = names if self.objective == "total" else np.r_[names, np.array(["alpha"], dtype=object)]
        return self._names

    def problem(self) -> Problem:
        """The LP of the current round: columns commodity-major (then ``alpha``), rows links then commodities."""
        E, K = self.topo.src.size, self.npaths.size
        P = int(self.npaths.sum())
        kk = np.repeat(np.arange(K), self.npaths)
        indptr = np.zeros(P + 1, dtype=np.int64)
        np.cumsum(self.lens + 1, out=indptr[1:])
        nnz = int(indptr[-1])
        indices = np.empty(nnz, dtype=np.int64)
        last = indptr[1:] - 1
        is_edge = np.ones(nnz, dtype=bool)
        is_edge[last] = False
        indices[is_edge] = self.edges
        indices[last] = E + kk
        data = np.ones(nnz)
        link_names = join_names("link/", self.topo.labels[self.topo.src], "-", self.topo.labels[self.topo.dst])
        total = self.objective == "total"
        row_names = np.r_[link_names, join_names(self.k_names, "/cap" if total else "/dem")]
        if total:
            cost, rl, ru = np.ones(P), np.full(E + K, -np.inf), np.r_[self.topo.cap, self.d]
        else:
            # alpha's column: -d[k] in every commodity row with positive demand
            pos = np.flatnonzero(self.d > 0)
            indptr = np.r_[indptr, nnz + pos.size]
            indices = np.r_[indices, E + pos]
            data = np.r_[data, -self.d[pos]]
            cost = np.r_[np.zeros(P), 1.0]
            rl = np.r_[np.full(E, -np.inf), np.zeros(K)]
            ru = np.r_[self.topo.cap, np.full(K, np.inf)]
        n = cost.size
        return csc_problem(cost=cost, col_lower=np.zeros(n), col_upper=np.full(n, np.inf),
                           integrality=np.zeros(n, bool), row_lower=rl, row_upper=ru, indptr=indptr,
                           indices=indices, data=data, col_names=self.current_col_names(), row_names=row_names,
                           sense=-1, name=f"te-{self.topo.name}-{self.objective}-round{self.round}")

    def _advance(self, x) -> Delta:
        old = self.d
        if self.sequence is not None:
            new = self.sequence[(self.round + 1) % len(self.sequence)]
        else:
            new = np.maximum(0.0, old * (1.0 + self.perturb * self.rng.uniform(-1.0, 1.0, old.size)))
        self.d = new
        chg = np.flatnonzero(changed(old, new))
        if self.objective == "total":
            return Delta.concat([Delta.cons(join_names(self.k_names[chg], "/cap"), upper=new[chg])])
        return Delta.concat([Delta.coefs(np.full(chg.size, "alpha", dtype=object),
                                         join_names(self.k_names[chg], "/dem"), -new[chg])])
