"""Diagonal preconditioning of an LP for PDHG: Ruiz, Pock-Chambolle, then bound/objective scaling.

Follows PDLP (Applegate et al., arXiv 2106.04756, section 3.3) for Ruiz equilibration and
Pock-Chambolle scaling, and HPR-LP (Chen et al., arXiv 2408.12179) / cuPDLPx for the final scalars
theta_b = 1/(1+||b||_2), theta_c = 1/(1+||c||_2). The scaled LP is

    A~ = D1 A D2,  c~ = theta_c D2 c,  [lc~, uc~] = theta_b D1 [lc, uc],  [lv~, uv~] = theta_b [lv, uv] / D2

and a scaled point maps back as x = D2 x~ / theta_b, y = D1 y~ / theta_c (row duals),
reduced cost r = r~ / (D2 theta_c). Empty rows and columns keep factor 1. Vectorised with scipy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
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


def _abs_matrix(A: sp.csc_array) -> sp.csc_array:
    B = A.copy()
    B.data = np.abs(B.data)
    return B


def _safe_inv_sqrt(v: np.ndarray) -> np.ndarray:
    out = np.ones_like(v)
    pos = v > 0
    out[pos] = 1.0 / np.sqrt(v[pos])
    return out


def combined_bound_norm(lc: np.ndarray, uc: np.ndarray) -> float:
    """||b||_2 with b the finite entries of lc and uc, an equality row's bound counted once."""
    eq = lc == uc
    fl = np.isfinite(lc)
    fu = np.isfinite(uc) & ~eq
    return float(np.sqrt(np.sum(lc[fl] ** 2) + np.sum(uc[fu] ** 2)))


def scale_lp(c, lc, uc, lv, uv, A: sp.csc_array, *, ruiz_iterations: int = 10,
             pock_chambolle_alpha: float | None = 1.0, bound_objective_scaling: bool = True) -> ScaledLP:
    """Scale the minimisation LP (c, lc, uc, lv, uv, A) for PDHG.

    Args:
        c, lv, uv: (n,) float64; lc, uc: (m,) float64 (may hold +-inf).
        A: (m, n) scipy CSC array with canonical indices.
        ruiz_iterations: Ruiz passes d = 1/sqrt(max |a|) on rows and columns together.
        pock_chambolle_alpha: alpha of the Pock-Chambolle pass (row 1/sqrt(sum |a|^(2-alpha)),
            column 1/sqrt(sum |a|^alpha)); None skips it.
        bound_objective_scaling: apply theta_b, theta_c (else both are 1).
    Returns:
        ScaledLP with CSR and CSC copies of the scaled matrix.
    """
    m, n = A.shape
    d1 = np.ones(m)
    d2 = np.ones(n)
    B = _abs_matrix(sp.csc_array(A))
    for _ in range(ruiz_iterations):
        if B.nnz == 0:
            break
        rmax = B.max(axis=1).toarray().ravel() if m else np.zeros(0)
        cmax = B.max(axis=0).toarray().ravel() if n else np.zeros(0)
        r = _safe_inv_sqrt(rmax)
        s = _safe_inv_sqrt(cmax)
        d1 *= r
        d2 *= s
        B = sp.csc_array(sp.diags_array(r) @ B @ sp.diags_array(s))
    if pock_chambolle_alpha is not None and B.nnz:
        al = float(pock_chambolle_alpha)
        Br = B.copy()
        Br.data = Br.data ** (2.0 - al)
        Bc = B.copy()
        Bc.data = Bc.data ** al
        r = _safe_inv_sqrt(np.asarray(Br.sum(axis=1)).ravel())
        s = _safe_inv_sqrt(np.asarray(Bc.sum(axis=0)).ravel())
        d1 *= r
        d2 *= s
    As = sp.csc_array(sp.diags_array(d1) @ sp.csc_array(A) @ sp.diags_array(d2))
    As.sort_indices()
    cs = c * d2
    lcs, ucs = lc * d1, uc * d1
    lvs, uvs = lv / d2, uv / d2
    tb = tc = 1.0
    if bound_objective_scaling:
        tb = 1.0 / (1.0 + combined_bound_norm(lcs, ucs))
        tc = 1.0 / (1.0 + float(np.linalg.norm(cs)))
    Acsr = sp.csr_array(As)
    Acsr.sort_indices()
    csr = (Acsr.indptr.astype(np.int64), Acsr.indices.astype(np.int32), Acsr.data.astype(np.float64))
    csc = (As.indptr.astype(np.int64), As.indices.astype(np.int32), As.data.astype(np.float64))
    return ScaledLP(c=cs * tc, lc=lcs * tb, uc=ucs * tb, lv=lvs * tb, uv=uvs * tb, csr=csr, csc=csc,
                    d1=d1, d2=d2, theta_b=tb, theta_c=tc)
