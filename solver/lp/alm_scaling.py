"""Scaling for the ALM engine: PDHG's diagonal scaling, with the matrix part kept between rounds.

The factors are ``solver.lp.scaling``'s (Ruiz equilibration, then Pock-Chambolle, then HPR-LP's
theta_b / theta_c; same passes, same results as ``scale_lp_csc``). The Ruiz and Pock-Chambolle factors
depend on A alone, and a round whose delta changes only costs and bounds yields a Problem that SHARES
its matrix arrays with the previous one (``solver.differential``: "cost/bound-only deltas touch no
matrix array"). The last matrix's factors and scaled values are therefore cached, keyed by the identity
of the three CSC arrays (the cache holds them, so an identity cannot be recycled), and a warm round on
an unchanged matrix pays only the O(n + m) bound/objective part (Cogentco TE: 0.4 s -> ~0.01 s). The
CSR copy PDHG needs is not built.

Across processes (one ``copter step`` process per round) the factors travel in the checkpoint's solver state
(``solver.model.state.MatrixScaling``): the round loop seeds the cache (:func:`seed`) with the previous round's
factors when the delta left the matrix unchanged (``solver.differential.ApplyInfo.matrix_changed``), and
stores :func:`factors_of` the round's matrix with its state (TE Kdl, 31M nonzeros: ~1 s of Ruiz and
Pock-Chambolle sweeps a process become one sweep). The coupling rows of the ALM's Newton systems
(``solver.lp.alm_schur``), which depend on A's pattern alone, travel with them (:func:`coupling_rows_of`): the
greedy choice of the assignment rows (TE Kdl 0.35 s a process) becomes one checked pass. The scaled values are always built from A's own values and
the final factors (:func:`scaled_values`, one sweep; the passes work on a scratch copy), so computed and carried
factors give bitwise the same scaled matrix, and a round comes out the same whichever way it started.
"""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
from numba import njit

from solver import kernel_cache
from solver.lp.kernels import kernel_array
from solver.lp.scaling import ScaledLP, combined_bound_norm, pock_chambolle_pass, ruiz_passes
from solver.model.state import MatrixScaling

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)

_CACHE: dict = {}
_LOCK = threading.Lock()


@njit(cache=True)
def scaled_values(cp, ci, cv, d1, d2, out):
    """The values of D1 A D2 into ``out`` (nnz,): out[p] = cv[p] * (d1[i] * d2[j]) for entry p = (i, j) of the
    CSC arrays cp (n+1,), ci (nnz,), cv (nnz,) float64; d1 (m,), d2 (n,). ``out`` may be a scratch array of the
    same length (it is only written); returns it. One sweep over the nonzeros."""
    for j in range(cp.shape[0] - 1):
        f = d2[j]
        for p in range(cp[j], cp[j + 1]):
            out[p] = cv[p] * (d1[ci[p]] * f)
    return out


def scaled_values_ref(cp, ci, cv, d1, d2):
    """numpy twin of :func:`scaled_values` (the same products in the same order: bitwise the same)."""
    return cv * (d1[ci] * np.repeat(d2, np.diff(cp)))


def _key(m: int, ruiz_iterations: int, pock_chambolle_alpha) -> tuple:
    return (int(m), int(ruiz_iterations), None if pock_chambolle_alpha is None else float(pock_chambolle_alpha))


def _same(hit, key, cp, ci, cv) -> bool:
    return hit is not None and hit[0] == key and hit[1][0] is cp and hit[1][1] is ci and hit[1][2] is cv


def matrix_factors(cp, ci, cv, m: int, ruiz_iterations: int, pock_chambolle_alpha):
    """(cp int64, ci int32, scaled cv, d1 (m,), d2 (n,)) for the CSC arrays (cp (n+1,), ci, cv (nnz,)).

    Cached for the last matrix seen (identity of cp, ci, cv plus m and the options), or taken from factors
    :func:`seed` put there; the returned arrays are shared with the cache and must not be modified.
    """
    key = _key(m, ruiz_iterations, pock_chambolle_alpha)
    with _LOCK:
        hit = _CACHE.get("last")
        if _same(hit, key, cp, ci, cv) and hit[2][2] is not None:
            return hit[2]
    # one copy of a read-only (memory-mapped) array rather than a compile of another kernel signature
    cp64, ci32, cv64 = kernel_array(cp, np.int64), kernel_array(ci, np.int32), kernel_array(cv, np.float64)
    if _same(hit, key, cp, ci, cv):  # seeded: factors carried from the previous round's state
        d1, d2 = hit[2][3], hit[2][4]
        cvs = scaled_values(cp64, ci32, cv64, d1, d2, np.empty_like(cv64))
    else:
        n = cp.shape[0] - 1
        d1, d2 = np.ones(m), np.ones(n)
        cvs = cv64.copy()  # the passes' scratch copy, then overwritten by the scaled values
        if cvs.size and ruiz_iterations > 0:
            ruiz_passes(cp64, ci32, cvs, m, d1, d2, int(ruiz_iterations))
        if pock_chambolle_alpha is not None and cvs.size:
            pock_chambolle_pass(cp64, ci32, cvs, m, float(pock_chambolle_alpha), d1, d2)
        scaled_values(cp64, ci32, cv64, d1, d2, cvs)
    out = (cp64, ci32, cvs, d1, d2)
    with _LOCK:
        _CACHE["last"] = (key, (cp, ci, cv), out)
        rows = _CACHE.get("coupling")
        if rows is not None and not (rows[0] is cp and rows[1] is ci and rows[2] is cv):
            del _CACHE["coupling"]  # another matrix's: the cache keeps one matrix alive, not two
    return out


def forget() -> None:
    """Drop the kept factors and coupling rows (what a new process starts without)."""
    with _LOCK:
        _CACHE.clear()


_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True)
def fnv1a_words(words, h):
    """64-bit FNV-1a over the (k,) uint64 ``words``, one word at a time, from the state ``h`` (uint64): h = (h xor w)
    x the FNV prime, modulo 2^64 (Fowler, Noll & Vo; here over 8-byte words, not bytes). Returns the new state.
    Twin: :func:`fnv1a_words_ref`."""
    for w in words:
        h = (h ^ w) * _FNV_PRIME
    return h


def fnv1a_words_ref(words, h) -> int:
    """Plain-Python twin of :func:`fnv1a_words` (Python ints reduced modulo 2^64)."""
    h, prime = int(h), int(_FNV_PRIME)
    for w in np.asarray(words, dtype=np.uint64).tolist():
        h = ((h ^ int(w)) * prime) & 0xFFFFFFFFFFFFFFFF
    return h


def matrix_crc(cp, ci, cv) -> int:
    """A 32-bit checksum of the bytes of the CSC arrays cp (n+1,), ci (nnz,), cv (nnz,) as stored, their dtypes and
    lengths included (the stored field keeps its name ``matrix_crc``): 64-bit FNV-1a over their 8-byte words
    (:func:`fnv1a_words`; a last partial word zero-padded), seeded with zlib's CRC-32 of the dtypes and shapes,
    folded to 32 bits. One pass over ~12 bytes a nonzero, without zlib's CRC-32 over the arrays: TE Kdl's parts
    (7.7M nonzeros, 92 MB) 0.07 s -> ~0.02 s (session 48). It decides whether a part's carried scaling belongs to
    its matrix, not a defence against crafted input: a collision (2^-32) would only scale the part with another
    matrix's factors. Raises nothing."""
    import zlib

    head = zlib.crc32(repr((cp.dtype.str, cp.shape, ci.dtype.str, ci.shape, cv.dtype.str, cv.shape)).encode())
    h = np.uint64(int(_FNV_OFFSET) ^ head)
    for a in (cp, ci, cv):
        raw = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
        full = raw.size - raw.size % 8
        h = fnv1a_words(raw[:full].view(np.uint64), np.uint64(h))
        if full < raw.size:
            tail = np.zeros(8, dtype=np.uint8)
            tail[:raw.size - full] = raw[full:]
            h = fnv1a_words(tail.view(np.uint64), np.uint64(h))
    h = int(h)
    return (h ^ (h >> 32)) & 0xFFFFFFFF


def seed(cp, ci, cv, m: int, scaling: MatrixScaling, crc: int | None = None) -> bool:
    """Let :func:`matrix_factors` take ``scaling``'s factors for the CSC arrays (cp (n+1,), ci, cv (nnz,)) with m
    rows instead of computing them (the scaled values are built at the first use). ``scaling`` must have been
    computed for this very matrix: when it records a ``matrix_crc`` (a part's), the arrays must have that checksum;
    without one the caller vouches for it (the round loop: the previous round's state, and a delta that left the
    matrix unchanged). Ignored, returning False, when the cache already holds these arrays, when the factors do
    not fit (shapes (m,) and (n,)), when one is not a finite positive number, or when the checksum differs.
    ``crc``: the arrays' :func:`matrix_crc` when the caller has it (else computed here when needed). Raises
    nothing."""
    n = cp.shape[0] - 1
    d1 = np.asarray(scaling.row_factors, dtype=np.float64)
    d2 = np.asarray(scaling.col_factors, dtype=np.float64)
    if d1.shape != (m,) or d2.shape != (n,):
        return False
    with np.errstate(invalid="ignore"):
        if not (np.all(d1 > 0) and np.all(d2 > 0) and np.isfinite(d1).all() and np.isfinite(d2).all()):
            return False
    key = _key(m, scaling.ruiz_iterations, scaling.pock_chambolle_alpha)
    with _LOCK:
        hit = _CACHE.get("last")
        if hit is not None and hit[1][0] is cp and hit[1][1] is ci and hit[1][2] is cv:
            return False
    if scaling.matrix_crc is not None and (matrix_crc(cp, ci, cv) if crc is None else crc) != scaling.matrix_crc:
        return False
    with _LOCK:
        _CACHE["last"] = (key, (cp, ci, cv), (None, None, None, d1.copy(), d2.copy()))
        rows = scaling.coupling_rows
        if rows is not None:
            _CACHE["coupling"] = (cp, ci, cv, np.asarray(rows, dtype=np.int64))
        else:
            _CACHE.pop("coupling", None)
    return True


def factors_of(cp, ci, cv, m: int, crc: int | None = None) -> MatrixScaling | None:
    """The factors the cache holds for these very CSC arrays with m rows (computed or seeded), as a
    :class:`~solver.model.state.MatrixScaling` to store with the round's state (``crc``: the arrays'
    :func:`matrix_crc`, recorded with them, or None), with the coupling rows known for them
    (:func:`coupling_rows_of`); None when it holds another matrix's."""
    with _LOCK:
        hit = _CACHE.get("last")
        if hit is None or hit[0][0] != m or not (hit[1][0] is cp and hit[1][1] is ci and hit[1][2] is cv):
            return None
        key, out = hit[0], hit[2]
    return MatrixScaling(ruiz_iterations=key[1], pock_chambolle_alpha=key[2], row_factors=out[3],
                         col_factors=out[4], matrix_crc=crc, coupling_rows=coupling_rows_of(cp, ci, cv))


def coupling_rows_of(cp, ci, cv) -> np.ndarray | None:
    """The coupling rows (m2,) int64 of ``solver.lp.alm_schur`` known for these very CSC arrays (seeded from the
    previous round's state with its factors, or noted by the ALM run that chose them, :func:`note_coupling_rows`),
    else None. The ALM hands them to ``alm_schur.schur_system``, which checks that they fit."""
    with _LOCK:
        hit = _CACHE.get("coupling")
    if hit is None or not (hit[0] is cp and hit[1] is ci and hit[2] is cv):
        return None
    return hit[3]


def note_coupling_rows(cp, ci, cv, coupling: np.ndarray) -> None:
    """Record the coupling rows (m2,) chosen for these CSC arrays (the ones :func:`matrix_factors` was given), for
    :func:`factors_of` to store with the round's state: the next process rebuilds the Newton systems' block
    structure in one pass instead of choosing the assignment rows again (TE Kdl: 0.35 s a step process; a
    partitioned round's part 0.09 s)."""
    with _LOCK:
        _CACHE["coupling"] = (cp, ci, cv, np.asarray(coupling, dtype=np.int64))


def with_scaling(state, problem):
    """``state`` (a SolverState or None) with the factors this process holds for ``problem``'s matrix
    (:func:`factors_of`), else unchanged."""
    if state is None:
        return state
    found = factors_of(problem.a_indptr, problem.a_indices, problem.a_data, problem.n_rows)
    return state if found is None else replace(state, scaling=found)


def scale_for_alm(c, lc, uc, lv, uv, cp, ci, cv, m: int, *, ruiz_iterations: int = 10,
                  pock_chambolle_alpha: float | None = 1.0, bound_objective_scaling: bool = True) -> ScaledLP:
    """The ScaledLP of ``solver.lp.scaling.scale_lp_csc`` (same factors) with ``csr = None``.

    Args: as ``scale_lp_csc``: c, lv, uv (n,); lc, uc (m,); cp (n+1,), ci, cv (nnz,) the CSC of A
    (not modified). Returns: ScaledLP (its csc arrays may be shared with the cache: read-only).
    """
    cp64, ci32, cvs, d1, d2 = matrix_factors(cp, ci, cv, m, ruiz_iterations, pock_chambolle_alpha)
    cs = c * d2
    lcs, ucs = lc * d1, uc * d1
    lvs, uvs = lv / d2, uv / d2
    tb = tc = 1.0
    if bound_objective_scaling:
        tb = 1.0 / (1.0 + combined_bound_norm(lcs, ucs, lc, uc))
        tc = 1.0 / (1.0 + float(np.sqrt(np.sum(cs * cs))))
    return ScaledLP(c=cs * tc, lc=lcs * tb, uc=ucs * tb, lv=lvs * tb, uv=uvs * tb, csr=None,
                    csc=(cp64, ci32, cvs), d1=d1, d2=d2, theta_b=tb, theta_c=tc)
