"""Diagonal preconditioning of an LP for PDHG: Ruiz, Pock-Chambolle, then bound/objective scaling.

Follows PDLP (Applegate et al., arXiv 2106.04756, section 3.3) for Ruiz equilibration and
Pock-Chambolle scaling, and HPR-LP (Chen et al., arXiv 2408.12179) / cuPDLPx for the final scalars
theta_b = 1/(1+||b||_2), theta_c = 1/(1+||c||_2). The scaled LP is

    A~ = D1 A D2,  c~ = theta_c D2 c,  [lc~, uc~] = theta_b D1 [lc, uc],  [lv~, uv~] = theta_b [lv, uv] / D2

and a scaled point maps back as x = D2 x~ / theta_b, y = D1 y~ / theta_c (row duals),
reduced cost r = r~ / (D2 theta_c). Empty rows and columns keep factor 1. The passes are numba kernels
over the CSC arrays (one pass over the nonzeros each), with scipy twins used by tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)

if TYPE_CHECKING:  # scipy is imported where it is used (0.2-0.7 s a process otherwise)
    import scipy.sparse as sp


@dataclass(eq=False)
class ScaledLP:
    """A minimisation LP ``min c'x, lc <= A x <= uc, lv <= x <= uv`` after scaling.

    Attributes:
        c, lv, uv: (n,) scaled cost and variable bounds.
        lc, uc: (m,) scaled row bounds.
        csr: (rp, ri, rv) CSR arrays of A~ (int64, int32, float64).
        csc: (cp, ci, cv) CSC arrays of A~.
        d1: (m,) row factors D1; d2: (n,) column factors D2.
        theta_b, theta_c: bound and objective scalars.
    """

    c: np.ndarray
    lc: np.ndarray
    uc: np.ndarray
    lv: np.ndarray
    uv: np.ndarray
    csr: tuple
    csc: tuple
    d1: np.ndarray
    d2: np.ndarray
    theta_b: float
    theta_c: float

    @property
    def n(self) -> int:
        return int(self.c.shape[0])

    @property
    def m(self) -> int:
        return int(self.lc.shape[0])

    # ---- maps between original and scaled points
    def x_to_orig(self, xs: np.ndarray) -> np.ndarray:
        return xs * self.d2 / self.theta_b

    def y_to_orig(self, ys: np.ndarray) -> np.ndarray:
        return ys * self.d1 / self.theta_c

    def x_to_scaled(self, x: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(x * self.theta_b / self.d2, self.lv), self.uv)

    def y_to_scaled(self, y: np.ndarray) -> np.ndarray:
        """Map row duals to scaled space and project onto their sign constraints
        (y >= 0 when the row has no upper bound, <= 0 when no lower bound, 0 when free)."""
        ys = y * self.theta_c / self.d1
        ys = np.where(np.isfinite(self.uc), ys, np.maximum(ys, 0.0))
        ys = np.where(np.isfinite(self.lc), ys, np.minimum(ys, 0.0))
        return ys


@njit(cache=True)
def apply_inv_sqrt_factors(cp, ci, cv, row_stat, col_stat, d1, d2):
    """Scale rows by 1/sqrt(row_stat) and columns by 1/sqrt(col_stat) (factor 1 where the statistic is 0:
    an empty row or column), in place on the CSC values ``cv``, multiplying the factors into d1 (m,) and
    d2 (n,); ``row_stat`` (m,) is overwritten with the row factors. The common tail of the Ruiz and
    Pock-Chambolle passes, which differ only in the statistic (max |a| vs sum |a|^p)."""
    m = row_stat.shape[0]
    n = cp.shape[0] - 1
    for i in range(m):
        row_stat[i] = 1.0 / np.sqrt(row_stat[i]) if row_stat[i] > 0 else 1.0
        d1[i] *= row_stat[i]
    for j in range(n):
        f = 1.0 / np.sqrt(col_stat[j]) if col_stat[j] > 0 else 1.0
        d2[j] *= f
        for p in range(cp[j], cp[j + 1]):
            cv[p] *= row_stat[ci[p]] * f


@njit(cache=True)
def ruiz_pass(cp, ci, cv, m, d1, d2):
    """One Ruiz pass in place on CSC values ``cv``: rows by 1/sqrt(max_j |a_ij|), columns by
    1/sqrt(max_i |a_ij|) (both from the same matrix), factors multiplied into d1 (m,), d2 (n,)."""
    rmax = np.zeros(m)
    cmax = np.zeros(cp.shape[0] - 1)
    _abs_maxima(cp, ci, cv, rmax, cmax)
    apply_inv_sqrt_factors(cp, ci, cv, rmax, cmax, d1, d2)


@njit(cache=True)
def _abs_maxima(cp, ci, cv, rmax, cmax):
    """Each row's and column's largest |a_ij| into rmax (m,) and cmax (n,) (zeros on entry)."""
    for j in range(cp.shape[0] - 1):
        for p in range(cp[j], cp[j + 1]):
            a = abs(cv[p])
            if a > cmax[j]:
                cmax[j] = a
            if a > rmax[ci[p]]:
                rmax[ci[p]] = a


@njit(cache=True)
def ruiz_passes(cp, ci, cv, m, d1, d2, iterations):
    """``iterations`` Ruiz passes (:func:`ruiz_pass`) in one kernel call, each pass's scaling and the next
    pass's row and column maxima fused into one sweep over the values (``iterations`` + 1 sweeps instead of
    2 x ``iterations``: TE Kdl, 31M nonzeros, 10 passes 1.6 s before). The arithmetic is the same as the loop
    of :func:`ruiz_pass`, so the result is bitwise the same."""
    n = cp.shape[0] - 1
    if iterations <= 0:
        return
    rmax = np.zeros(m)
    nxt = np.zeros(m)
    cmax = np.zeros(n)
    _abs_maxima(cp, ci, cv, rmax, cmax)
    for it in range(iterations):
        last = it == iterations - 1
        for i in range(m):
            rmax[i] = 1.0 / np.sqrt(rmax[i]) if rmax[i] > 0 else 1.0
            d1[i] *= rmax[i]
            nxt[i] = 0.0
        for j in range(n):
            f = 1.0 / np.sqrt(cmax[j]) if cmax[j] > 0 else 1.0
            d2[j] *= f
            cm = 0.0
            for p in range(cp[j], cp[j + 1]):
                cv[p] *= rmax[ci[p]] * f
                if not last:
                    a = abs(cv[p])
                    if a > cm:
                        cm = a
                    if a > nxt[ci[p]]:
                        nxt[ci[p]] = a
            cmax[j] = cm
        rmax, nxt = nxt, rmax


def ruiz_passes_ref(cp, ci, cv, m, d1, d2, iterations):
    """numpy/scipy twin of :func:`ruiz_passes`."""
    for _ in range(iterations):
        ruiz_pass_ref(cp, ci, cv, m, d1, d2)


def ruiz_pass_ref(cp, ci, cv, m, d1, d2):
    """numpy/scipy twin of :func:`ruiz_pass`."""
    import scipy.sparse as sp
    A = abs(sp.csc_array((cv, ci, cp), shape=(m, cp.shape[0] - 1)))
    r = _safe_inv_sqrt(A.max(axis=1).toarray().ravel())
    s = _safe_inv_sqrt(A.max(axis=0).toarray().ravel())
    _apply_factors_ref(cp, ci, cv, r, s, d1, d2)


@njit(cache=True)
def pock_chambolle_pass(cp, ci, cv, m, alpha, d1, d2):
    """Pock-Chambolle scaling in place on CSC values: rows by 1/sqrt(sum_j |a_ij|^(2-alpha)),
    columns by 1/sqrt(sum_i |a_ij|^alpha); factors multiplied into d1, d2."""
    n = cp.shape[0] - 1
    rs = np.zeros(m)
    cs = np.zeros(n)
    if alpha == 1.0:  # the default: |a|^1 is |a| exactly, without two pow calls per nonzero (Kdl: 0.97 s)
        for j in range(n):
            for p in range(cp[j], cp[j + 1]):
                a = abs(cv[p])
                cs[j] += a
                rs[ci[p]] += a
    else:
        for j in range(n):
            for p in range(cp[j], cp[j + 1]):
                a = abs(cv[p])
                cs[j] += a ** alpha
                rs[ci[p]] += a ** (2.0 - alpha)
    apply_inv_sqrt_factors(cp, ci, cv, rs, cs, d1, d2)


def pock_chambolle_pass_ref(cp, ci, cv, m, alpha, d1, d2):
    """numpy/scipy twin of :func:`pock_chambolle_pass`."""
    import scipy.sparse as sp
    A = abs(sp.csc_array((cv, ci, cp), shape=(m, cp.shape[0] - 1)))
    r = _safe_inv_sqrt(np.asarray((A ** (2.0 - alpha)).sum(axis=1)).ravel())
    s = _safe_inv_sqrt(np.asarray((A ** alpha).sum(axis=0)).ravel())
    _apply_factors_ref(cp, ci, cv, r, s, d1, d2)


@njit(cache=True)
def csc_to_csr(cp, ci, cv, m):
    """Transpose CSC arrays (n+1,), (nnz,), (nnz,) of an m-row matrix into CSR arrays (counting sort;
    column indices come out sorted within each row)."""
    n = cp.shape[0] - 1
    nnz = cp[n]
    rp = np.zeros(m + 1, dtype=np.int64)
    for p in range(nnz):
        rp[ci[p] + 1] += 1
    for i in range(m):
        rp[i + 1] += rp[i]
    nxt = rp[:-1].copy()
    ri = np.empty(nnz, dtype=np.int32)
    rv = np.empty(nnz, dtype=np.float64)
    for j in range(n):
        for p in range(cp[j], cp[j + 1]):
            q = nxt[ci[p]]
            ri[q] = j
            rv[q] = cv[p]
            nxt[ci[p]] = q + 1
    return rp, ri, rv


def csc_to_csr_ref(cp, ci, cv, m):
    """scipy twin of :func:`csc_to_csr`."""
    import scipy.sparse as sp
    R = sp.csr_array(sp.csc_array((cv, ci, cp), shape=(m, cp.shape[0] - 1)))
    R.sort_indices()
    return R.indptr.astype(np.int64), R.indices.astype(np.int32), R.data.astype(np.float64)


def _apply_factors_ref(cp, ci, cv, r, s, d1, d2):
    """numpy twin of the scaling step of :func:`apply_inv_sqrt_factors` given the factors r (m,), s (n,)."""
    d1 *= r
    d2 *= s
    cv *= r[ci] * np.repeat(s, np.diff(cp))


def _safe_inv_sqrt(v: np.ndarray) -> np.ndarray:
    out = np.ones_like(v, dtype=np.float64)
    pos = v > 0
    out[pos] = 1.0 / np.sqrt(v[pos])
    return out


# A finite row bound at least this far from 0 is left out of ||b|| (PDLP's ``infinite_constraint_bound_threshold``,
# applied to the norms only: the row keeps its bound). ||b|| is the primal residual's denominator (1 + ||b||,
# ``solver.lp.termination``, ``original_kkt``) and theta_b's (HPR-LP's bound scaling, here and in
# ``alm_scaling``), so one redundant row of e226 (its open bounds written as 9.99e19) x0 <= 1e16 scaled every other
# bound by 1e-16 and the solve stalled (ITERATION_LIMIT at 1,000,000, with and without presolve) where without
# that row it is OPTIMAL in 14,542 iterations; now 13,901. 1e15 is a bound an LP can still bind at in double
# precision (tests/test_far_finite_bounds.py), 1e5-fold below the 1e20 of "no bound"; a row that binds at such a
# bound is out of reach of a relative tolerance on the rest of the rows anyway (docs/DESIGN.md, "LP core").
FAR_ROW_BOUND = 1e15


def combined_bound_norm(lc: np.ndarray, uc: np.ndarray, ref_lc: np.ndarray | None = None,
                        ref_uc: np.ndarray | None = None) -> float:
    """||b||_2 with b the finite entries of lc and uc (m,), an equality row's bound counted once, bounds of
    magnitude >= :data:`FAR_ROW_BOUND` left out. ``ref_lc``, ``ref_uc`` (m,): the bounds whose magnitude decides
    that (default lc, uc; scaled bounds pass their original ones, so a row factor moves no bound across)."""
    rl = lc if ref_lc is None else ref_lc
    ru = uc if ref_uc is None else ref_uc
    eq = lc == uc
    fl = np.isfinite(lc) & (np.abs(rl) < FAR_ROW_BOUND)
    fu = np.isfinite(uc) & ~eq & (np.abs(ru) < FAR_ROW_BOUND)
    return float(np.sqrt(np.sum(lc[fl] ** 2) + np.sum(uc[fu] ** 2)))


def scale_lp(c, lc, uc, lv, uv, A: sp.csc_array, *, ruiz_iterations: int = 10,
             pock_chambolle_alpha: float | None = 1.0, bound_objective_scaling: bool = True) -> ScaledLP:
    """Scale the minimisation LP (c, lc, uc, lv, uv, A) for PDHG.

    Args:
        c, lv, uv: (n,) float64; lc, uc: (m,) float64 (may hold +-inf).
        A: (m, n) scipy CSC array with sorted indices (not modified).
        ruiz_iterations: Ruiz passes d = 1/sqrt(max |a|) on rows and columns together.
        pock_chambolle_alpha: alpha of the Pock-Chambolle pass (row 1/sqrt(sum |a|^(2-alpha)),
            column 1/sqrt(sum |a|^alpha)); None skips it.
        bound_objective_scaling: apply theta_b, theta_c (else both are 1).
    Returns:
        ScaledLP with CSR and CSC copies of the scaled matrix.
    """
    return scale_lp_csc(c, lc, uc, lv, uv, A.indptr, A.indices, A.data, A.shape[0],
                        ruiz_iterations=ruiz_iterations, pock_chambolle_alpha=pock_chambolle_alpha,
                        bound_objective_scaling=bound_objective_scaling)


def scale_lp_csc(c, lc, uc, lv, uv, a_indptr, a_indices, a_data, m: int, *, ruiz_iterations: int = 10,
                 pock_chambolle_alpha: float | None = 1.0, bound_objective_scaling: bool = True) -> ScaledLP:
    """:func:`scale_lp` on the CSC arrays of A (a_indptr (n+1,), a_indices (nnz,), a_data (nnz,), row
    indices sorted within columns; not modified) with m rows: no scipy object on the solve path."""
    n = a_indptr.shape[0] - 1
    d1 = np.ones(m)
    d2 = np.ones(n)
    cp = np.ascontiguousarray(a_indptr, dtype=np.int64)
    ci = np.ascontiguousarray(a_indices, dtype=np.int32)
    cv = np.array(a_data, dtype=np.float64)  # scaled in place
    if cv.size and ruiz_iterations > 0:
        ruiz_passes(cp, ci, cv, m, d1, d2, int(ruiz_iterations))
    if pock_chambolle_alpha is not None and cv.size:
        pock_chambolle_pass(cp, ci, cv, m, float(pock_chambolle_alpha), d1, d2)
    cs = c * d2
    lcs, ucs = lc * d1, uc * d1
    lvs, uvs = lv / d2, uv / d2
    tb = tc = 1.0
    if bound_objective_scaling:
        tb = 1.0 / (1.0 + combined_bound_norm(lcs, ucs, lc, uc))
        tc = 1.0 / (1.0 + float(np.linalg.norm(cs)))
    csr = csc_to_csr(cp, ci, cv, m)
    csc = (cp, ci, cv)
    return ScaledLP(c=cs * tc, lc=lcs * tb, uc=ucs * tb, lv=lvs * tb, uv=uvs * tb, csr=csr, csc=csc,
                    d1=d1, d2=d2, theta_b=tb, theta_c=tc)
