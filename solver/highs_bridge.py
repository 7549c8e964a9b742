"""The one bridge between copter and HiGHS (highspy): every other module talks to HiGHS through it.

- construction: :func:`new_highs` (silent, ``infinite_bound`` and ``infinite_cost`` 1e30 = copter's
  INF_BOUND, threads, time limit), :func:`configure_threads` (HiGHS's process-global scheduler), :func:`set_time_budget` (HiGHS's
  ``time_limit`` is cumulative per instance: a budget is set on top of ``getRunTime()``);
- models: :func:`to_highs_lp` / :func:`from_highs_lp` (Problem <-> ``HighsLp``), :func:`pass_model` (and
  why HiGHS refused one), :func:`pass_problem` (straight from a Problem's arrays), :func:`change_sense`;
- running: :func:`run` (a per-call time budget, and a wall deadline through the MIP interrupt callback);
- reading back: :func:`status_of` (HiGHS model status -> copter :class:`~solver.model.status.Status`),
  :func:`status_text`, :func:`is_optimal`, :func:`is_infeasible`, :func:`read_point`,
  :func:`read_duals`, :func:`objective_value`, :func:`mip_info`, :func:`run_info`, the basis (:func:`get_basis`, :func:`set_basis`) and start points
  (:func:`set_solution`, :func:`set_partial_solution`);
- presolve/postsolve handles for ``solver.lp.presolve``: :data:`PresolveStatus`, :func:`new_solution`,
  :func:`postsolve`, :func:`colwise_arrays`, :func:`is_maximize`;
- infeasible models: :func:`find_iis` (HiGHS's irreducible infeasible subset: the rows and bounds that
  conflict).

HiGHS facts handled here: REFERENCES.md section 5 (measured on highspy 1.16). Vectorised: no Python loops
over nonzeros (highspy returns the matrix as Python lists, converted once with numpy).
"""

from __future__ import annotations

import math
import re
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import highspy
import numpy as np

from solver.model.problem import INF_BOUND, INF_VALUE, Problem, normalize_infinite
from solver.model.status import Status

Highs = highspy.Highs  #: the instance type (for annotations elsewhere)
HighsLp = highspy.HighsLp
PresolveStatus = highspy.HighsPresolveStatus  #: ``getModelPresolveStatus()`` values
_MS = highspy.HighsModelStatus
_BS = highspy.HighsBasisStatus
#: HiGHS basis status codes (``getBasis`` col/row statuses as ints)
BASIS_LOWER, BASIS_BASIC, BASIS_UPPER, BASIS_ZERO = int(_BS.kLower), int(_BS.kBasic), int(_BS.kUpper), int(_BS.kZero)
_BASIS_ENUM = np.empty(5, dtype=object)
for _s in (_BS.kLower, _BS.kBasic, _BS.kUpper, _BS.kZero, _BS.kNonbasic):
    _BASIS_ENUM[int(_s)] = _s
#: HiGHS model statuses that end a run with a verdict, and the limits (a MIP with an incumbent is FEASIBLE)
MODEL_STATUSES = {_MS.kOptimal: Status.OPTIMAL, _MS.kModelEmpty: Status.OPTIMAL,
                  _MS.kInfeasible: Status.PRIMAL_INFEASIBLE, _MS.kUnbounded: Status.DUAL_INFEASIBLE,
                  _MS.kUnboundedOrInfeasible: Status.INFEASIBLE_OR_UNBOUNDED}
LIMIT_STATUSES = {_MS.kTimeLimit: Status.TIME_LIMIT, _MS.kInterrupt: Status.TIME_LIMIT,
                  _MS.kIterationLimit: Status.ITERATION_LIMIT, _MS.kSolutionLimit: Status.ITERATION_LIMIT}

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
    # copter's convention: |bound| >= 1e20 is no bound (solver.model.problem.INF_BOUND), HiGHS's own default, and
    # every reader makes such a bound +-inf before HiGHS sees it
    h.setOptionValue("infinite_bound", INF_BOUND)
    # a cost is finite up to 1e30 (INF_VALUE): HiGHS's infinite_cost is 1e20, and a cost of 5e20 made its presolve
    # fail and its solvers report objective -inf as Optimal, while copter's cost was finite
    h.setOptionValue("infinite_cost", INF_VALUE)
    configure_threads(h, threads)
    if time_limit_seconds is not None and np.isfinite(time_limit_seconds):
        h.setOptionValue("time_limit", float(time_limit_seconds))
    return h


def set_time_budget(h: highspy.Highs, seconds: float) -> None:
    """Let the next ``run()``/``presolve()`` of ``h`` take at most ``seconds`` (inf = no limit).

    HiGHS's ``time_limit`` is cumulative per instance (REFERENCES.md section 5), so the limit is set to
    ``getRunTime() + seconds``; on a fresh instance that is simply the budget.
    """
    budget = float(seconds)
    h.setOptionValue("time_limit", float(h.getRunTime()) + max(budget, 0.0) if math.isfinite(budget)
                     else math.inf)


#: the signals whose Python handlers :func:`interruptible` defers while HiGHS runs (copter's CLI handles all three)
DEFERRED_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextmanager
def interruptible(h: highspy.Highs) -> Iterator[None]:
    """Let a signal stop ``h.run()`` at once instead of after HiGHS returns.

    Python runs a signal's handler only between bytecodes of the main thread, and HiGHS runs in C++: a Ctrl-C
    or a scheduler's SIGTERM during ``copter compare --baseline highs`` on TE Cogentco took effect 95-122 s
    later, when HiGHS finished. HiGHS calls back into Python at its interrupt points (every simplex and IPM
    iteration, every MIP node), and a pending handler runs there. Inside this block the Python handlers of
    :data:`DEFERRED_SIGNALS` are swapped for one that only notes the signal; the subscribed callbacks then ask
    HiGHS to stop (model status kInterrupt), and once ``run()`` has returned the noted signal goes to the handler
    it was meant for (the CLI's: exit 130 / 143 / 129 with the state untouched, or KeyboardInterrupt inside an
    undo region; a library caller's default SIGINT handler: KeyboardInterrupt). The handler never runs inside
    HiGHS's call stack, so no exception crosses C++. Measured on a 2,000 x 4,000 random LP (simplex, 3.8 s):
    SIGINT after 1 s ended the run in 1.00 s (before: 3.89 s); the callbacks (9,020) cost no measurable time.
    Outside the main thread, or where a signal has no Python handler (SIG_DFL, SIG_IGN), nothing is changed.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum, frame) -> None:
        noted.append(signum)

    def ask_to_stop(event) -> None:
        if noted:
            event.interrupt()

    previous = {}
    for signum in DEFERRED_SIGNALS:
        handler = signal.getsignal(signum)
        if callable(handler):
            previous[signum] = handler
            signal.signal(signum, note)
    hooks = (h.cbSimplexInterrupt, h.cbIpmInterrupt, h.cbMipInterrupt)
    for hook in hooks:
        hook.subscribe(ask_to_stop)
    try:
        yield
    finally:
        for hook in hooks:
            hook.unsubscribe(ask_to_stop)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if noted:
            previous[noted[0]](noted[0], None)


def run(h: highspy.Highs, *, is_mip: bool = False, time_limit_seconds: float = math.inf) -> tuple[bool, float]:
    """Run ``h`` under a per-call time budget (seconds); returns (run ok, wall seconds of ``run()``).

    Sets the budget with :func:`set_time_budget`. HiGHS's MIP clock has been seen to restart after a model
    change, so for a MIP with a finite budget a wall-clock deadline is also enforced through the
    ``cbMipInterrupt`` callback (model status kInterrupt at the deadline). A signal stops the run at once
    (:func:`interruptible`).
    """
    budget = float(time_limit_seconds)
    set_time_budget(h, budget)
    start = time.perf_counter()
    deadline = start + budget

    def _interrupt(event) -> None:
        if time.perf_counter() >= deadline:
            event.interrupt()

    watch = is_mip and math.isfinite(budget)
    if watch:
        h.cbMipInterrupt.subscribe(_interrupt)
    try:
        with interruptible(h):
            status = h.run()
    finally:
        if watch:
            h.cbMipInterrupt.unsubscribe(_interrupt)
    return not is_error(status), time.perf_counter() - start


def is_error(status: highspy.HighsStatus) -> bool:
    """True for a ``HighsStatus`` of kError (the call failed; kWarning and kOk are accepted)."""
    return status == highspy.HighsStatus.kError


#: what copter's own MIP interrupt means (:func:`run`'s wall-clock deadline): HiGHS calls it "Interrupted by user"
INTERRUPT_TEXT = "Time limit reached (copter's deadline)"


def status_text(h: highspy.Highs) -> str:
    """HiGHS's own words for the model status of ``h`` ("Optimal", "Infeasible", "Time limit reached", ...);
    kInterrupt, which only copter's callbacks raise (no user presses Ctrl-C inside HiGHS), is
    :data:`INTERRUPT_TEXT` (a stall watch that interrupts names itself: ``solver.integer.fallback``)."""
    ms = h.getModelStatus()
    return INTERRUPT_TEXT if ms == _MS.kInterrupt else h.modelStatusToString(ms)


def is_optimal(h: highspy.Highs) -> bool:
    """The last run of ``h`` ended optimal (an empty model counts as optimal)."""
    return h.getModelStatus() in (_MS.kOptimal, _MS.kModelEmpty)


def is_infeasible(h: highspy.Highs) -> bool:
    """The last run of ``h`` proved the model (primal) infeasible."""
    return h.getModelStatus() == _MS.kInfeasible


def status_of(h: highspy.Highs, *, is_mip: bool, has_point: bool) -> tuple[Status, str | None]:
    """copter's Status for the model status of ``h`` after a run, and which limit stopped it.

    Returns:
        (status, limit): ``limit`` is ``"time"`` or ``"iteration"`` when a limit (or the wall deadline's
        interrupt) stopped HiGHS, else None. A MIP stopped at a limit with an incumbent (``has_point``) is
        FEASIBLE; a status HiGHS gives no verdict with is NUMERICAL_ERROR, and so is "Empty" without a point
        (:func:`read_point` gives one only for a model with no columns): HiGHS also says "Empty" after it
        refused the model (:func:`pass_model`), which must never read as OPTIMAL.
    """
    ms = h.getModelStatus()
    if ms == _MS.kModelEmpty and not has_point:
        return Status.NUMERICAL_ERROR, None
    if ms in LIMIT_STATUSES:
        limit = "time" if ms in (_MS.kTimeLimit, _MS.kInterrupt) else "iteration"
        return (Status.FEASIBLE if (is_mip and has_point) else LIMIT_STATUSES[ms]), limit
    return MODEL_STATUSES.get(ms, Status.NUMERICAL_ERROR), None


def read_point(h: highspy.Highs, n: int, *, is_mip: bool) -> np.ndarray | None:
    """(n,) copy of the primal point ``h`` holds after a run, or None: none valid, of another length, or
    (``is_mip``) no incumbent (``primal_solution_status`` below feasible)."""
    if n == 0 and h.getModelStatus() == _MS.kModelEmpty and h.getNumCol() == 0:
        return np.zeros(0)  # a model without columns: HiGHS reports no solution, the empty point is optimal
    sol = h.getSolution()
    if not sol.value_valid or (is_mip and int(h.getInfo().primal_solution_status) < 2):
        return None
    x = np.asarray(sol.col_value, dtype=np.float64).copy()
    return x if x.shape == (n,) else None


def read_duals(h: highspy.Highs, m: int) -> np.ndarray | None:
    """(m,) copy of the row duals ``h`` holds after an LP run (HiGHS's sign convention), or None: none valid
    or of another length."""
    sol = h.getSolution()
    if not sol.dual_valid:
        return None
    y = np.asarray(sol.row_dual, dtype=np.float64).copy()
    return y if y.shape == (m,) else None


def objective_value(h: highspy.Highs) -> float:
    """HiGHS's objective value of its last solution (problem's sense, offset included)."""
    return float(h.getInfo().objective_function_value)


def mip_info(h: highspy.Highs) -> dict:
    """Branch-and-cut figures after a MIP run: ``mip_dual_bound`` (the proven bound, problem's sense) and
    ``mip_gap`` (HiGHS's relative gap)."""
    info = h.getInfo()
    return {"mip_dual_bound": float(info.mip_dual_bound), "mip_gap": float(info.mip_gap)}


def run_info(h: highspy.Highs) -> dict:
    """Iteration counts of the last run: ``simplex``, ``ipm``, ``pdlp``."""
    info = h.getInfo()
    return {"simplex": int(info.simplex_iteration_count), "ipm": int(info.ipm_iteration_count),
            "pdlp": int(info.pdlp_iteration_count)}


def set_solution(h: highspy.Highs, x: np.ndarray) -> bool:
    """Offer the full (n,) primal point ``x`` as a start (simplex start or MIP incumbent); False if refused."""
    sol = highspy.HighsSolution()
    sol.col_value = np.asarray(x, dtype=np.float64).tolist()
    sol.value_valid = True
    return not is_error(h.setSolution(sol))


def set_partial_solution(h: highspy.Highs, index: np.ndarray, values: np.ndarray) -> bool:
    """Offer the values ``values`` (k,) of the columns ``index`` (k,) as a (partial) MIP start; HiGHS
    completes it by solving the LP over the rest. False if HiGHS refused it."""
    index = np.ascontiguousarray(index, dtype=np.int32)
    return not is_error(h.setSolution(int(index.size), index, np.ascontiguousarray(values, dtype=np.float64)))


def get_basis(h: highspy.Highs, n: int, m: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The basis of ``h`` as int8 status codes ((n,), (m,); BASIS_* values), or None when it has none."""
    b = h.getBasis()
    if not b.valid:
        return None
    return (np.fromiter(map(int, b.col_status), dtype=np.int8, count=n),
            np.fromiter(map(int, b.row_status), dtype=np.int8, count=m))


def set_basis(h: highspy.Highs, col_status: np.ndarray, row_status: np.ndarray) -> bool:
    """Hand ``h`` an *alien* basis (int status codes (n,), (m,)), which HiGHS repairs when the number of
    basic entities does not match the rows; False if refused."""
    b = highspy.HighsBasis()
    b.col_status = _BASIS_ENUM[np.asarray(col_status, dtype=np.int64)].tolist()
    b.row_status = _BASIS_ENUM[np.asarray(row_status, dtype=np.int64)].tolist()
    b.valid = True
    b.alien = True
    return not is_error(h.setBasis(b))


def change_sense(h: highspy.Highs, sense: int) -> None:
    """Set the objective sense of the model in ``h`` (copter's convention: -1 maximize, 1 minimize)."""
    h.changeObjectiveSense(_sense(sense))


def _sense(sense: int) -> highspy.ObjSense:
    return highspy.ObjSense.kMaximize if sense == -1 else highspy.ObjSense.kMinimize


def is_maximize(lp: highspy.HighsLp) -> bool:
    """The HighsLp maximizes."""
    return lp.sense_ == highspy.ObjSense.kMaximize


def pass_problem(h: highspy.Highs, problem: Problem) -> bool:
    """Pass ``problem``'s LP (integrality dropped) to ``h`` straight from its arrays: the same model as
    ``passModel(to_highs_lp(problem, relax=True))`` without building a HighsLp (about 40 us less per
    solve on afiro). Returns False when HiGHS refused it (the caller may retry through a HighsLp)."""
    n = problem.n_cols
    return not is_error(h.passModel(n, problem.n_rows, problem.nnz, int(highspy.MatrixFormat.kColwise),
                                    int(_sense(problem.sense)), float(problem.offset), problem.cost,
                                    problem.col_lower, problem.col_upper, problem.row_lower, problem.row_upper,
                                    problem.a_indptr[:n].astype(np.int32), problem.a_indices, problem.a_data,
                                    np.zeros(n, dtype=np.int32)))  # kContinuous everywhere (an empty one refused)


def pass_model(h: highspy.Highs, lp: highspy.HighsLp, problem: Problem | None = None) -> str | None:
    """Hand ``lp`` to ``h`` (``passModel``); None when HiGHS took it, else why HiGHS refused it, one line.

    The reason is HiGHS's own ERROR log line (it refuses any matrix value of magnitude >= its
    ``large_matrix_value``, 1e15, although copter takes every finite |v| < 1e30), captured by passing the
    model once more with HiGHS's log routed to a callback; that line names no entity, so the largest
    coefficient of ``problem`` (the model ``lp`` holds) follows with its row and column.
    After a refusal ``h`` holds an empty model: running it says "Empty", never a verdict on ``problem``.
    """
    if not is_error(h.passModel(lp)):
        return None
    said: list[str] = []

    def _log(event) -> None:
        said.append(str(event.message))

    h.setOptionValue("output_flag", True)  # log_to_console stays off: the lines reach only the callback
    h.cbLogging.subscribe(_log)
    try:
        h.passModel(lp)
    finally:
        h.cbLogging.unsubscribe(_log)
        h.setOptionValue("output_flag", False)
    lines = [" ".join(t.split()[1:]) for t in said if t.lstrip().startswith("ERROR")]
    reason = "; ".join(lines) or "passModel returned an error without a log line"
    big = largest_coefficient(problem) if problem is not None else None
    return reason if big is None else f"{reason}; largest |coefficient| {big[0]:.6g}: row {big[1]}, column {big[2]}"


def largest_coefficient(problem: Problem) -> tuple[float, str, str] | None:
    """(|value|, row name, column name) of ``problem``'s matrix entry of largest magnitude, or None for a
    model without nonzeros."""
    nnz = problem.nnz
    if nnz == 0:
        return None
    values = np.abs(problem.a_data[:nnz])
    k = int(np.argmax(values))
    col = int(np.searchsorted(problem.a_indptr[:problem.n_cols + 1], k, side="right") - 1)
    return float(values[k]), str(problem.row_names[int(problem.a_indices[k])]), str(problem.col_names[col])


def colwise_arrays(lp: highspy.HighsLp, transpose) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSC arrays (start int64, index int32, value float64) of ``lp``'s matrix; a row-wise matrix is
    converted with ``transpose(start, index, value, n)`` (CSR -> CSC, rows sorted) and stored back
    column-wise into ``lp`` (so that a later :func:`from_highs_lp` reads it right)."""
    m, n = int(lp.num_row_), int(lp.num_col_)
    mat = lp.a_matrix_
    start = np.asarray(mat.start_, dtype=np.int64)
    index = np.asarray(mat.index_, dtype=np.int32)
    value = np.asarray(mat.value_, dtype=np.float64)
    if mat.format_ == highspy.MatrixFormat.kRowwise:
        # the CSR arrays of A are the CSC arrays of A': transposing them gives A's CSC, rows sorted
        nnz = int(start[-1]) if start.size else 0
        start, index, value = transpose(start if start.size else np.zeros(m + 1, dtype=np.int64),
                                        index[:nnz], value[:nnz], n)
        mat.format_ = highspy.MatrixFormat.kColwise
        mat.start_ = start.astype(np.int32)
        mat.index_ = index
        mat.value_ = value
    return start, index, value


def new_solution(col_value, col_dual, row_value, row_dual) -> highspy.HighsSolution:
    """A HighsSolution with values and duals marked valid (postsolve's input); arguments None = not set."""
    sol = highspy.HighsSolution()
    if col_value is not None:
        sol.col_value = col_value
        sol.col_dual = col_dual
        sol.row_value = row_value
        sol.row_dual = row_dual
    sol.value_valid = True
    sol.dual_valid = True
    return sol


def postsolve(h: highspy.Highs, sol: highspy.HighsSolution) -> bool:
    """HiGHS postsolve of a reduced solution on the presolved ``h``; False on error (the result is then
    ``h.getSolution()``)."""
    return not is_error(h.postsolve(sol))


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
    lp.sense_ = _sense(problem.sense)
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
    magnitude >= 1e20 (``INF_BOUND``) become +-inf; missing names become ``C{j}`` / ``R{i}`` as HiGHS writes them.
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
        integrality=integrality, sense=-1 if is_maximize(lp) else 1,
        offset=float(lp.offset_), name=name or str(lp.model_name_))


#: HiGHS's ``IisModelStatus`` by value (highspy binds no such enum; HighsIis.h: -1 feasible, 0 unknown,
#: 1 time limit, 2 reducible, 3 irreducible)
IIS_STATUS = {-1: "feasible", 0: "unknown", 1: "time_limit", 2: "reducible", 3: "irreducible"}
#: ``IisBoundStatus`` values naming the side of a row/column bound that takes part in the conflict
IIS_BOUND = {int(highspy.IisBoundStatus.kIisBoundStatusLower): "lower",
             int(highspy.IisBoundStatus.kIisBoundStatusUpper): "upper",
             int(highspy.IisBoundStatus.kIisBoundStatusBoxed): "boxed"}
IIS_MAX_LISTED = 1000  #: rows / bounds listed at most in the result (counts are always complete)
#: a finite bound beyond this is left out of HiGHS's first IIS search (:func:`find_iis`): HiGHS 1.16's search
#: answers "unknown" on an infeasible LP with column bounds of 1e18 or 9.99e19 that finds the set with 1e15 or inf
IIS_FAR_BOUND = 1e15


def _iis_entries(names: np.ndarray, index: np.ndarray, bound: np.ndarray, lower: np.ndarray,
                 upper: np.ndarray) -> list[dict]:
    """[{"name", "bound" (lower|upper|boxed), "lower", "upper"}] of the entries whose bound takes part."""
    keep = np.isin(bound, list(IIS_BOUND))
    index, bound = index[keep][:IIS_MAX_LISTED], bound[keep][:IIS_MAX_LISTED]
    lo, hi = lower[index], upper[index]
    return [{"name": str(nm), "bound": IIS_BOUND[int(b)], "lower": float(a), "upper": float(c)}
            for nm, b, a, c in zip(names[index].tolist(), bound.tolist(), lo.tolist(), hi.tolist(), strict=True)]


def find_iis(problem: Problem, time_limit_seconds: float = 10.0, threads: int | None = None) -> dict:
    """A conflicting set of rows and bounds of an infeasible ``problem``: HiGHS's IIS (``Highs.getIis``,
    highspy >= 1.16) with ``iis_strategy`` = from-LP + irreducible (the rows of the infeasibility proof of
    HiGHS's own LP solve, then a deletion filter that drops every row and bound whose removal keeps the
    subsystem infeasible; the classical elastic/deletion-filter IIS, Chinneck 2008, "Feasibility and
    Infeasibility in Optimization", ch. 6). A MILP's integrality is dropped: the set explains an
    infeasible LP relaxation.

    Args:
        problem: the model (n columns, m rows).
        time_limit_seconds: wall budget of HiGHS's LP solve and of the IIS search (each; ``iis_time_limit``).
            A search stopped by it returns the (infeasible, maybe reducible) set found so far. A model with a
            finite bound beyond :data:`IIS_FAR_BOUND` is searched first without those bounds (HiGHS's search
            gave up on 9.99e19 column bounds), then, when that finds no set, as it is within what is left.
        threads: HiGHS threads (None = its default).
    Returns:
        ``{"found": bool, "status": "irreducible" | "reducible" | "time_limit" | "feasible" (the LP
        relaxation is feasible: for a MILP, integrality itself is in conflict) | "unknown" | "error",
        "rows": [{"name", "bound": "lower" | "upper" | "boxed", "lower", "upper"}] (the row's side that
        takes part, and the row's bounds), "columns": [the same for column bounds], "n_rows", "n_columns"
        (complete counts; the lists stop at :data:`IIS_MAX_LISTED`), "seconds"}``. ``found`` is True when
        HiGHS returned a valid, non-empty set (status irreducible, reducible or time_limit); status time_limit
        with ``found`` False: the budget ran out before HiGHS had any set (in its LP solve). Columns that
        only appear in the set's rows (their bounds free to move) are not listed.
    """
    t = time.perf_counter()
    budget = max(float(time_limit_seconds), 0.0)
    relaxed = _without_far_bounds(problem)
    if relaxed is not None:  # a set without the far bounds conflicts in the model with them too
        out = _highs_iis(relaxed, problem, budget, threads)
        if out["found"]:
            out["seconds"] = time.perf_counter() - t
            return out
        budget = max(budget - (time.perf_counter() - t), 0.0)  # the two searches share the budget
    out = _highs_iis(problem, problem, budget, threads)
    out["seconds"] = time.perf_counter() - t
    return out


def _without_far_bounds(problem: Problem) -> Problem | None:
    """``problem`` with every finite bound of magnitude above :data:`IIS_FAR_BOUND` made infinite, or None when it
    has none. Relaxing bounds keeps an infeasible subsystem infeasible, so an IIS of the relaxed model (which holds
    none of them: they are gone) is one of the model: the first search of :func:`find_iis`."""
    sides = {}
    for name, inf in (("col_lower", -math.inf), ("col_upper", math.inf), ("row_lower", -math.inf),
                      ("row_upper", math.inf)):
        v = getattr(problem, name)
        far = np.isfinite(v) & (np.abs(v) > IIS_FAR_BOUND)
        if far.any():
            sides[name] = np.where(far, inf, v)
    return problem.replace(**sides) if sides else None


def _highs_iis(model: Problem, problem: Problem, time_limit_seconds: float, threads: int | None) -> dict:
    """HiGHS's IIS of ``model`` (``problem`` or it with far bounds relaxed), its entries named and bounded by
    ``problem`` (same indices): :func:`find_iis`'s result without ``seconds``."""
    out = {"found": False, "status": "error", "rows": [], "columns": [], "n_rows": 0, "n_columns": 0}
    h = new_highs(threads)
    if pass_problem(h, model):
        budget = max(float(time_limit_seconds), 0.0)
        set_time_budget(h, budget)
        h.setOptionValue("iis_time_limit", budget if math.isfinite(budget) else math.inf)
        h.setOptionValue("iis_strategy", int(highspy.IisStrategy.kIisStrategyFromLp)
                         | int(highspy.IisStrategy.kIisStrategyIrreducible))
        status, iis = h.getIis()
        out["status"] = "error" if is_error(status) else IIS_STATUS.get(int(iis.status_), "unknown")
        if out["status"] == "error" and h.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
            out["status"] = "time_limit"  # the budget ran out in the LP solve before the search (hunt 37: 1e-6)
        rows = np.asarray(iis.row_index_, dtype=np.int64)
        row_bound = np.asarray(iis.row_bound_, dtype=np.int64)
        cols = np.asarray(iis.col_index_, dtype=np.int64)
        col_bound = np.asarray(iis.col_bound_, dtype=np.int64)
        if rows.shape == row_bound.shape and cols.shape == col_bound.shape:
            out["n_rows"] = int(np.isin(row_bound, list(IIS_BOUND)).sum())
            out["n_columns"] = int(np.isin(col_bound, list(IIS_BOUND)).sum())
            out["rows"] = _iis_entries(problem.row_names, rows, row_bound, problem.row_lower, problem.row_upper)
            out["columns"] = _iis_entries(problem.col_names, cols, col_bound, problem.col_lower, problem.col_upper)
        out["found"] = (bool(iis.valid_) and out["status"] in ("irreducible", "reducible", "time_limit")
                        and out["n_rows"] + out["n_columns"] > 0)
        if not out["found"]:
            out.update(rows=[], columns=[], n_rows=0, n_columns=0)
    return out


def _iis_side(e: dict, what: str) -> str:
    name = _iis_name(str(e["name"]))
    if e["bound"] == "lower":
        return f"{what} {name} >= {e['lower']:.6g}"
    if e["bound"] == "upper":
        return f"{what} {name} <= {e['upper']:.6g}"
    return f"{e['lower']:.6g} <= {what} {name} <= {e['upper']:.6g}"


_PLAIN_NAME = re.compile(r"[^\s,'\"<>=]+")


def _iis_name(name: str) -> str:
    """A name as the IIS sentence shows it: as is when it is plain, quoted (Python's ``repr``) when it is empty or
    holds a space, a comma, a quote or a comparison sign, which the sentence's own separators and operators would
    make ambiguous (helper-203: "row cap,1 <= 10, column -x >= 0")."""
    return name if _PLAIN_NAME.fullmatch(name) else repr(name)


IIS_STATUS_WORDS = {  # the message's words for find_iis's status (the JSON keeps the status itself)
    "time_limit": "not reduced to a minimal set: the search stopped at its time budget, {budget}",
    "reducible": "not reduced to a minimal set",
}


def describe_iis(iis: dict, is_mip: bool = False, limit: int = 6, budget: str = "--iis-seconds") -> str:
    """One sentence naming the conflicting rows and bounds of :func:`find_iis`'s result (at most ``limit``
    of them, then the counts): "conflicting rows and bounds (irreducible): row cap <= 1, row need >= 2,
    column x1 >= 0"; ``is_mip`` words the case of a feasible LP relaxation. A set the search did not reduce to a
    minimal one says so (:data:`IIS_STATUS_WORDS`; user trial 37: "(time_limit)" read as jargon), naming what set
    the budget (``budget``: ``--iis-seconds``, or ``--time-limit`` when what the round had left was less)."""
    if not iis.get("found"):
        if iis.get("status") == "feasible":
            return ("the LP relaxation is feasible: integrality itself conflicts with the rows (no IIS of rows)"
                    if is_mip else "HiGHS finds the LP feasible: no conflicting set of rows and bounds")
        if iis.get("status") == "time_limit":
            return f"HiGHS found no conflicting set of rows and bounds within its time budget, {budget}"
        return f"HiGHS found no conflicting set of rows and bounds (IIS status {iis.get('status')})"
    parts = [_iis_side(e, "row") for e in iis["rows"][:limit]]
    parts += [_iis_side(e, "column") for e in iis["columns"][:max(limit - len(parts), 0)]]
    total = iis["n_rows"] + iis["n_columns"]
    more = f", ... ({iis['n_rows']} rows and {iis['n_columns']} bounds in all)" if total > len(parts) else ""
    status = IIS_STATUS_WORDS.get(iis["status"], iis["status"]).format(budget=budget)
    return f"conflicting rows and bounds ({status}): {', '.join(parts)}{more}"
