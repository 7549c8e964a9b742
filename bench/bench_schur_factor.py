"""The ALM's dense Schur solve at the orders of large coupling sets: the double factor (``alm_schur.factor_upper``,
LAPACK ``dpotrf``, then ``upper_cholesky_solve``) against the single factor refined in double
(``alm_schur.refined_single_solve``: ``spotrf``, ``spotrs``, ``dsymv``), on the same systems, alternated.

Systems: S = B B' / k + 1e-3 I (k x k, B k x 3k Gaussian), whose condition number (about 1e2-1e3) is what TE Kdl's
order-1,790 Schur complements let float32 refine in 2-3 steps; ``--cond C`` builds S with log-spaced eigenvalues
over [1, C] instead, to see where the single factor starts to refuse (then the double factor runs after it, which
the "refused" column counts; each refusal costs its attempt). One BLAS thread, as the CLI and its part workers set
it (``copter_cli.entry.console_environment``).

Session 45 on the 2-core machine (medians of 15): order 1,790 72.8 / 51.6 ms -> 44.8 / 30.2 ms (two runs, the
instance's speed moved between them): 0.6x.

Run: ``.venv/bin/python bench/bench_schur_factor.py [--orders 500 1000 1790 3000] [--repeat 9] [--cond C]``
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # one BLAS thread, before numpy loads

import numpy as np  # noqa: E402

from solver.lp import alm_schur as K  # noqa: E402


def system(k: int, cond: float | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(S (k, k) symmetric positive definite, t (k,)) as the module docstring says."""
    rng = np.random.default_rng(seed)
    if cond is None:
        B = rng.standard_normal((k, 3 * k))
        S = B @ B.T / k + 1e-3 * np.eye(k)
    else:
        Q, _ = np.linalg.qr(rng.standard_normal((k, k)))
        S = (Q * np.logspace(0, np.log10(cond), k)) @ Q.T
    return np.ascontiguousarray(S), rng.standard_normal(k)


def time_order(k: int, cond: float | None, repeat: int) -> dict:
    """Median seconds of both solves at order k (alternated), the refusals, and the worse relative residual."""
    S0, t = system(k, cond, k)
    S, S32, out = np.empty((k, k)), np.zeros((k, k), np.float32), np.empty(k)
    double, single, refused, resid = [], [], 0, 0.0
    for _ in range(repeat):
        S[:] = S0
        a = time.perf_counter()
        U = K.factor_upper(S)
        K.upper_cholesky_solve(U, t, out)
        double.append(time.perf_counter() - a)
        resid = max(resid, float(np.linalg.norm(S0 @ out - t) / np.linalg.norm(t)))
        S[:] = S0
        S32[:] = S0
        a = time.perf_counter()
        if not K.refined_single_solve(S, S32, t, out):
            refused += 1
            U = K.factor_upper(S)
            K.upper_cholesky_solve(U, t, out)
        single.append(time.perf_counter() - a)
        resid = max(resid, float(np.linalg.norm(S0 @ out - t) / np.linalg.norm(t)))
    return {"double": float(np.median(double)), "single": float(np.median(single)), "refused": refused,
            "resid": resid}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--orders", type=int, nargs="+", default=[500, 1000, 1790, 3000],
                    help="(default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=9, help="(default: %(default)s)")
    ap.add_argument("--cond", type=float, default=None)
    args = ap.parse_args()
    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))  # pastes back (an empty argument quoted)
    print("versions:", ", ".join(f"{k} {version(k)}" for k in ("copter", "numpy", "scipy")),
          f"python {platform.python_version()}, {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}")
    print(f"{'order':>6} {'double ms':>10} {'single ms':>10} {'ratio':>6} {'refused':>8} {'max rel. residual':>18}")
    for k in args.orders:
        r = time_order(k, args.cond, args.repeat)
        print(f"{k:>6} {r['double'] * 1e3:>10.1f} {r['single'] * 1e3:>10.1f} {r['single'] / r['double']:>6.2f} "
              f"{r['refused']:>8} {r['resid']:>18.1e}", flush=True)


if __name__ == "__main__":
    main()
