"""Preloaded by the part workers' multiprocessing forkserver (``solver.partition.executor.run_parts``): the solver
and every cached non-parallel numba kernel (``solver.prepare.load_cached``) are loaded once in the forkserver,
and every worker it forks inherits them; so is ``scipy.linalg.lapack``, which a part with a Schur complement of
order 1,000 or more factors with (``solver.lp.alm_schur.factor_upper``: 0.12 s an import).

Each worker used to import the solver and load the kernels its first part called, inside that part's solve:
on a small TE round (4 parts, 2 workers) parts 0 and 1 took 1.3-1.9 s, parts 2 and 3, on the same workers,
0.01-0.02 s with similar iterations, so ``slowest_part`` was the workers' start-up. Loaded here it happens
before the workers exist, and the round reports it as its ``pool_start`` phase
(:func:`solver.partition.executor.take_pool_start`). Parallel kernels are left out: loading one starts numba's
threading layer, which is not fork-safe.

Only in the forkserver (:data:`solver.partition.forkserver_lifeline.FORKSERVER`, imported before this module in
the preload list): a process that imports every module (``copter worker start``'s server, ``solver.prepare``)
loads nothing here.

pandas is kept out of the forkserver and its workers (:mod:`formats.no_pandas`)."""

from solver.partition import forkserver_lifeline

LOADED = None  #: ``load_cached``'s result in the forkserver, else None
if forkserver_lifeline.FORKSERVER:
    from formats.no_pandas import keep_pandas_out

    keep_pandas_out()  # a worker's first shipped names (Arrow strings) imported pandas: 0.27 s before its first part
    import scipy.linalg.lapack  # noqa: F401 - the ALM's Schur factor of order >= 1,000 (solver.lp.alm_schur)

    import solver.api  # noqa: F401 - what a part's solve imports
    from solver.prepare import load_cached

    LOADED = load_cached()
