"""Conversion between copter's :class:`~solver.model.problem.Problem` and highspy's model objects.

Used by the MPS reader/writer (``formats/mps.py``), the HiGHS baselines and tests that cross-check
against HiGHS. Vectorised: no Python loops over nonzeros (highspy returns the matrix as Python lists,
converted once with numpy).
"""

from __future__ import annotations

import highspy
import numpy as np

from solver.model.problem import INF_BOUND, Problem, normalize_infinite

_banner_shown = False


def _construct_quietly() -> highspy.Highs:
    """Construct a Highs instance; the first one in a process is built with file descriptor 1 pointed at
    /dev/null, because HiGHS prints its banner on C stdout then (before any option can be set), which
    would corrupt ``--json`` output."""
    global _banner_shown
    if _banner_shown:
        return highspy.Highs()
    import ctypes
    import os
    import sys

    sys.stdout.flush()
    saved, devnull = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        h = highspy.Highs()
        try:
            ctypes.CDLL(None).fflush(None)
        except (OSError, AttributeError):  # no C runtime handle (e.g. Windows): banner may show
            pass
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)
        _banner_shown = True
    return h


_scheduler_threads: int | None = None  # thread count HiGHS's global scheduler was last (re)built with


def configure_threads(h: highspy.Highs, threads: int | None) -> None:
    """Set HiGHS's ``threads`` option on ``h``, rebuilding the process-global scheduler when needed.

    HiGHS's first ``run()`` in a process fixes its thread scheduler; a later ``run()`` asking for another
    count fails (model status kNotset) unless ``Highs.resetGlobalScheduler(True)`` is called first
    (REFERENCES.md section 5).

    Args:
        h: the instance about to run.
        threads: thread count, or None to leave HiGHS's default (which reuses the running scheduler).
    """
    global _scheduler_threads
    if threads is None:
        return
    threads = int(threads)
    if threads != _scheduler_threads:
        highspy.Highs.resetGlobalScheduler(True)
        _scheduler_threads = threads
    h.setOptionValue("threads", threads)


def new_highs(threads: int | None = None, time_limit_seconds: float | None = None) -> highspy.Highs:
    """A silent Highs instance (no banner, no log) with optional thread count (see
    :func:`configure_threads`) and time limit in seconds."""
    h = _construct_quietly()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("log_to_console", False)
    # copter's convention: |bound| >= 1e30 is infinite (solver.model.problem.INF_BOUND). HiGHS's default cut is
    # 1e20, so a bound of 5e20 was finite for PDHG but infinite for HiGHS presolve and the baselines.
    h.setOptionValue("infinite_bound", INF_BOUND)
    configure_threads(h, threads)
    if time_limit_seconds is not None and np.isfinite(time_limit_seconds):
        h.setOptionValue("time_limit", float(time_limit_seconds))
    return h


def to_highs_lp(problem: Problem, *, with_names: bool = True, relax: bool = False) -> highspy.HighsLp:
    """Build a ``highspy.HighsLp`` (column-wise matrix) holding ``problem``.

    Args:
        problem: the model to convert.
        with_names: copy column/row names (needed for MPS writing; skip for speed in baselines).
        relax: drop integrality (LP relaxation).
    Returns:
        A HighsLp ready for ``Highs.passModel``.
    """
    lp = highspy.HighsLp()
    lp.num_col_ = problem.n_cols
    lp.num_row_ = problem.n_rows
    lp.col_cost_ = np.ascontiguousarray(problem.cost, dtype=np.float64)
    lp.col_lower_ = np.ascontiguousarray(problem.col_lower, dtype=np.float64)
    lp.col_upper_ = np.ascontiguousarray(problem.col_upper, dtype=np.float64)
    lp.row_lower_ = np.ascontiguousarray(problem.row_lower, dtype=np.float64)
    lp.row_upper_ = np.ascontiguousarray(problem.row_upper, dtype=np.float64)
    lp.offset_ = float(problem.offset)
    lp.sense_ = highspy.ObjSense.kMaximize if problem.sense == -1 else highspy.ObjSense.kMinimize
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.num_col_ = problem.n_cols
    lp.a_matrix_.num_row_ = problem.n_rows
    lp.a_matrix_.start_ = np.ascontiguousarray(problem.a_indptr, dtype=np.int32)
    lp.a_matrix_.index_ = np.ascontiguousarray(problem.a_indices, dtype=np.int32)
    lp.a_matrix_.value_ = np.ascontiguousarray(problem.a_data, dtype=np.float64)
    if problem.is_mip and not relax:
        lp.integrality_ = [highspy.HighsVarType.kInteger if b else highspy.HighsVarType.kContinuous
                           for b in problem.integrality.tolist()]
    if with_names:
        lp.col_names_ = [str(s) for s in problem.col_names.tolist()]
        lp.row_names_ = [str(s) for s in problem.row_names.tolist()]
    return lp


def from_highs_lp(lp: highspy.HighsLp, name: str = "") -> Problem:
    """Build a canonical Problem from a column-wise ``highspy.HighsLp`` (call ``ensureColwise`` first).

    Duplicate entries are summed, explicit zeros dropped, rows sorted within columns; bounds of
    magnitude >= 1e30 become +-inf; missing names become ``C{j}`` / ``R{i}`` as HiGHS writes them.
    Does not validate beyond :meth:`Problem.check` (the MPS reader adds its own checks).
    """
    import scipy.sparse as sp

    n, m = int(lp.num_col_), int(lp.num_row_)
    start = np.asarray(lp.a_matrix_.start_, dtype=np.int64)
    index = np.asarray(lp.a_matrix_.index_, dtype=np.int32)
    value = np.asarray(lp.a_matrix_.value_, dtype=np.float64)
    if start.size == 0:
        start = np.zeros(n + 1, dtype=np.int64)
    nnz = int(start[-1])
    A = sp.csc_array((value[:nnz], index[:nnz], start), shape=(m, n))
    integ = lp.integrality_  # every attribute access converts the whole vector: read each once
    integrality = (np.zeros(n, dtype=bool) if len(integ) == 0
                   else np.fromiter((int(t) == 1 for t in integ), dtype=bool, count=n))
    col_names, row_names = lp.col_names_, lp.row_names_
    col_names = col_names if len(col_names) == n else [f"C{j}" for j in range(n)]
    row_names = row_names if len(row_names) == m else [f"R{i}" for i in range(m)]
    return Problem.from_arrays(
        cost=np.asarray(lp.col_cost_, dtype=np.float64), col_lower=normalize_infinite(lp.col_lower_),
        col_upper=normalize_infinite(lp.col_upper_), row_lower=normalize_infinite(lp.row_lower_),
        row_upper=normalize_infinite(lp.row_upper_), matrix=A, col_names=col_names, row_names=row_names,
        integrality=integrality, sense=-1 if lp.sense_ == highspy.ObjSense.kMaximize else 1,
        offset=float(lp.offset_), name=name or str(lp.model_name_))
