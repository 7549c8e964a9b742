"""Up to k edge-disjoint shortest (fewest-hop) paths per commodity, as in POP/NCFlow's TE path sets.

For every commodity (s, t) the method repeats k times: breadth-first search from s over the edges not
yet used by this commodity's earlier paths, take the shortest path found (ties broken by edge order:
neighbours are scanned in CSR order and the first discovery wins), remove its edges. This is the
"successive shortest edge-disjoint paths" heuristic used for the path formulation in POP (Narayanan et
al., SOSP'21) and NCFlow (Abuzaid et al., NSDI'21).

:func:`disjoint_paths` runs a numba kernel once per source (all its targets in one call, GIL released so
two sources run in parallel threads); :func:`disjoint_paths_reference` is the plain-Python twin the
tests compare against.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)


def csr_out_edges(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outgoing adjacency in CSR form, edges of a node in increasing edge id.

    Args:
        n: number of nodes; src, dst: (E,) int edge endpoints.
    Returns:
        indptr (n+1,), nbr (E,) head node of each adjacency slot, eid (E,) edge id of each slot.
    """
    order = np.lexsort((np.arange(src.size), src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, dst[order].astype(np.int64), order.astype(np.int64)


@njit(cache=True, nogil=True)
def _paths_from_source(s, targets, k, indptr, nbr, eid, n_edges):  # pragma: no cover - compiled
    n = indptr.size - 1
    T = targets.size
    stamp = np.zeros(n, dtype=np.int64)
    pred_e = np.empty(n, dtype=np.int64)
    pred_v = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    removed = np.zeros(n_edges, dtype=np.bool_)
    npaths = np.zeros(T, dtype=np.int64)
    lens = np.zeros(T * k, dtype=np.int64)
    buf = np.empty(T * k * max(n - 1, 1), dtype=np.int64)
    tmp = np.empty(max(n - 1, 1), dtype=np.int64)
    used = np.empty(k * max(n - 1, 1), dtype=np.int64)
    pos = 0
    cur = 0
    for ti in range(T):
        t = targets[ti]
        n_used = 0
        for p in range(k):
            cur += 1
            stamp[s] = cur
            head = 0
            tail = 1
            queue[0] = s
            found = False
            while head < tail and not found:
                v = queue[head]
                head += 1
                for a in range(indptr[v], indptr[v + 1]):
                    e = eid[a]
                    if removed[e]:
                        continue
                    w = nbr[a]
                    if stamp[w] == cur:
                        continue
                    stamp[w] = cur
                    pred_e[w] = e
                    pred_v[w] = v
                    if w == t:
                        found = True
                        break
                    queue[tail] = w
                    tail += 1
            if not found:
                break
            L = 0
            v = t
            while v != s:
                tmp[L] = pred_e[v]
                L += 1
                v = pred_v[v]
            srt = np.sort(tmp[:L])
            for i in range(L):
                buf[pos + i] = srt[i]
                removed[srt[i]] = True
                used[n_used + i] = srt[i]
            n_used += L
            pos += L
            lens[ti * k + p] = L
            npaths[ti] += 1
        for i in range(n_used):
            removed[used[i]] = False
    return npaths, lens, buf[:pos].copy()


def _collect(per_source, k):
    npaths = np.concatenate([r[0] for r in per_source])
    lens = np.concatenate([r[1] for r in per_source]).reshape(-1, k)
    edges = np.concatenate([r[2] for r in per_source])
    lens = lens[np.arange(k)[None, :] < npaths[:, None]]
    return npaths, lens, edges


def disjoint_paths(n: int, src: np.ndarray, dst: np.ndarray, pairs_src: np.ndarray, pairs_dst: np.ndarray,
                   k: int = 4, threads: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Up to k edge-disjoint fewest-hop paths for every commodity.

    Args:
        n: nodes; src, dst: (E,) directed edges.
        pairs_src, pairs_dst: (K,) commodities, **grouped by source** (all of a source's commodities
            contiguous), no s == t.
        k: maximum paths per commodity.
        threads: worker threads (the kernel releases the GIL).
    Returns:
        npaths (K,) paths found per commodity; lens (P,) edges per path (P = npaths.sum(), commodity
        order then path order); edges (lens.sum(),) edge ids of each path, sorted ascending per path.
    Raises:
        ValueError: commodities not grouped by source.
    """
    indptr, nbr, eid = csr_out_edges(n, np.asarray(src, np.int64), np.asarray(dst, np.int64))
    ps, pt = np.asarray(pairs_src, np.int64), np.asarray(pairs_dst, np.int64)
    if ps.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.r_[0, np.flatnonzero(np.diff(ps)) + 1]
    if np.unique(ps[starts]).size != starts.size:
        raise ValueError("commodities must be grouped by source")
    bounds = list(zip(starts.tolist(), np.r_[starts[1:], ps.size].tolist(), strict=True))

    def run(b):
        lo, hi = b
        return _paths_from_source(int(ps[lo]), pt[lo:hi], int(k), indptr, nbr, eid, int(len(src)))

    if threads > 1 and len(bounds) > 1:
        with ThreadPoolExecutor(threads) as ex:
            per_source = list(ex.map(run, bounds))
    else:
        per_source = [run(b) for b in bounds]
    return _collect(per_source, k)


def disjoint_paths_reference(n, src, dst, pairs_src, pairs_dst, k=4):
    """Plain-Python twin of :func:`disjoint_paths` (same tie-breaking); for tests on small graphs."""
    indptr, nbr, eid = csr_out_edges(n, np.asarray(src, np.int64), np.asarray(dst, np.int64))
    npaths, lens, edges = [], [], []
    for s, t in zip(np.asarray(pairs_src).tolist(), np.asarray(pairs_dst).tolist(), strict=True):
        removed = set()
        count = 0
        for _ in range(k):
            seen = {s: (None, None)}
            q = deque([s])
            while q and t not in seen:
                v = q.popleft()
                for a in range(indptr[v], indptr[v + 1]):
                    e, w = int(eid[a]), int(nbr[a])
                    if e in removed or w in seen:
                        continue
                    seen[w] = (e, v)
                    if w == t:
                        break
                    q.append(w)
            if t not in seen:
                break
            path, v = [], t
            while v != s:
                e, v = seen[v]
                path.append(e)
            path.sort()
            removed.update(path)
            lens.append(len(path))
            edges.extend(path)
            count += 1
        npaths.append(count)
    return np.asarray(npaths, np.int64), np.asarray(lens, np.int64), np.asarray(edges, np.int64)
