"""Scaling for the ALM engine: PDHG's diagonal scaling, with the matrix part kept between rounds.

The factors are ``solver.lp.scaling``'s (Ruiz equilibration, then Pock-Chambolle, then HPR-LP's
theta_b / theta_c; same passes, same results as ``scale_lp_csc``). The Ruiz and Pock-Chambolle factors
depend on A alone, and a round whose delta changes only costs and bounds yields a Problem that SHARES
its matrix arrays with the previous one (``solver.differential``: "cost/bound-only deltas touch no
matrix array"). The last matrix's factors and scaled values are therefore cached, keyed by the identity
of the three CSC arrays (the cache holds them, so an identity cannot be recycled), and a warm round on
an unchanged matrix pays only the O(n + m) bound/objective part (Cogentco TE: 0.4 s -> ~0.01 s). The
CSR copy PDHG needs is not built.
"""

from __future__ import annotations

import threading

import numpy as np

from solver.lp.scaling import ScaledLP, combined_bound_norm, pock_chambolle_pass, ruiz_passes

_CACHE: dict = {}
_LOCK = threading.Lock()


def matrix_factors(cp, ci, cv, m: int, ruiz_iterations: int, pock_chambolle_alpha):
    """(cp int64, ci int32, scaled cv, d1 (m,), d2 (n,)) for the CSC arrays (cp (n+1,), ci, cv (nnz,)).

    Cached for the last matrix seen (identity of cp, ci, cv plus m and the options); the returned arrays
    are shared with the cache and must not be modified.
    """
    key = (m, int(ruiz_iterations), pock_chambolle_alpha)
    with _LOCK:
        hit = _CACHE.get("last")
        if hit is not None and hit[0] == key and hit[1][0] is cp and hit[1][1] is ci and hit[1][2] is cv:
            return hit[2]
    n = cp.shape[0] - 1
    d1, d2 = np.ones(m), np.ones(n)
    cp64 = np.ascontiguousarray(cp, dtype=np.int64)
    ci32 = np.ascontiguousarray(ci, dtype=np.int32)
    cvs = np.array(cv, dtype=np.float64)
    if cvs.size and ruiz_iterations > 0:
        ruiz_passes(cp64, ci32, cvs, m, d1, d2, int(ruiz_iterations))
    if pock_chambolle_alpha is not None and cvs.size:
        pock_chambolle_pass(cp64, ci32, cvs, m, float(pock_chambolle_alpha), d1, d2)
    out = (cp64, ci32, cvs, d1, d2)
    with _LOCK:
        _CACHE["last"] = (key, (cp, ci, cv), out)
    return out


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
