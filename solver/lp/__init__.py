"""The LP core: restarted reflected Halpern PDHG (r2HPDHG) with its scaling, restarts, termination,
infeasibility certificates, trivial checks and HiGHS presolve; the entry point is ``dispatch.solve``.

Files (one line each):
    dispatch.py        the public cold/warm LP solve entry: engine (PDHG / ALM), HiGHS presolve vs direct PDHG
    engine_choice.py   which engine runs a solve (warm vs cold KKT error, last round's outcome, --engine)
    pdhg.py            one direct PDHG solve: trivial reductions, scaling, the iteration loop, the result
    presolve.py        HiGHS presolve -> PDHG on the reduced LP -> postsolve -> original-space check/polish
    kernels.py         numba kernels: sparse products, the PDHG passes, power iteration, check measures
    kernels_ref.py     plain-numpy twins of kernels.py, compared by the tests (never on the solve path)
    scaling.py         Ruiz + Pock-Chambolle + bound/objective scaling (numba passes with numpy twins)
    restart.py         fixed-point residual restarts and the PID primal-weight update
    termination.py     relative KKT residuals and gap in original units; tightened targets
    infeasibility.py   ray certificates of primal/dual infeasibility; HiGHS's proof on a suspicion
    trivial.py         empty boxes, empty rows and columns, decided before iterating
    original_kkt.py    relative KKT measures on the original LP (after postsolve), numba pass + twin
    alm.py             proximal augmented Lagrangian engine (issue #17): warm rounds that start close
    alm_newton.py      semismooth Newton + CG inner solver of alm.py
    alm_kernels.py     numba kernels of alm.py / alm_newton.py
    alm_kernels_ref.py plain-numpy twins of alm_kernels.py, compared by the tests
    alm_schur.py       Newton directions by block elimination: assignment rows, Schur complement, Cholesky
    alm_schur_ref.py   plain-numpy twins of alm_schur.py's kernels, compared by the tests
"""
