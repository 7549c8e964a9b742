"""Work a partitioned round does in a thread of its own process while the part workers run: the whole model's
:class:`solver.partition.improve.WholeBound` built during the parts' solves (:class:`WholeBoundBuild`), an LP
round's implied column upper bounds and assignment rows, which the merge's Lagrangian bound needs
(:class:`ImpliedUpperBuild`), and
the merge's dual ascent continued during RENS (:class:`AscentThread`). Used by :mod:`solver.partition.round`."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from solver.lp.termination import row_absmax
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.partition.bound import AssignmentRows, assignment_rows_of, implied_upper
from solver.partition.improve import WholeBound
from solver.partition.merge import Merged, ran

ASCENT_CHUNK = 4  #: evaluations between two looks at the stop flag of the ascent that runs during RENS


class AscentThread:
    """The merge's dual ascent continued in a thread of this process while the workers run RENS (this process only
    waits for them then): the same run (``resume``), in chunks of :data:`ASCENT_CHUNK` evaluations, until it proves
    the merged point's gap, uses the rest of the round's budget (``integer_dual_ascent_steps``) or :meth:`stop`.
    The merge after RENS continues from where it stopped (:meth:`merged`)."""

    def __init__(self, wb: WholeBound, mg: Merged, settings: Settings):
        import threading

        self.wb, self.mg = wb, mg
        used = ran(mg)
        self.budget = max(0, int(settings.integer_dual_ascent_steps) - used)
        self.tol = float(settings.mip_gap_tol)
        self.state, self.y, self.bound = mg.ascent_state, mg.y_bound, mg.rep.get("bound")
        self.evaluations, self.seconds, self.error = 0, 0.0, None
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="copter-dual-ascent", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        t = time.perf_counter()
        try:
            objective = float(self.mg.result.objective)
            while not self._stop.is_set() and self.evaluations < self.budget and not self.state.done:
                n = min(ASCENT_CHUNK, self.budget - self.evaluations)
                bound, y, info = self.wb.ascend(None, objective, self.tol, n, resume=self.state)
                self.state, self.evaluations = info["state"], self.evaluations + int(info["steps"])
                if np.isfinite(bound):
                    self.bound, self.y = float(bound), np.asarray(y, dtype=np.float64)
                if int(info["steps"]) < n:  # proven (or no step can improve)
                    break
        except BaseException as err:  # re-raised in the caller's thread by stop()
            self.error = err
        self.seconds = time.perf_counter() - t

    def stop(self) -> None:
        """Stop after the current chunk and wait for it; re-raise what the ascent raised."""
        self._stop.set()
        if self.thread.ident is not None:
            self.thread.join()
        if self.error is not None:
            raise self.error

    def merged(self) -> Merged:
        """The merge before RENS with its ascent state, bound and duals moved to where this run stopped."""
        return replace(self.mg, ascent_state=self.state, y_bound=self.y, rep={**self.mg.rep, "bound": self.bound})


class _Build:
    """A value computed by :meth:`_compute` in a thread of this process (:meth:`start`, once) or, when no thread
    ran, at :meth:`result`; what the computation raised is re-raised by :meth:`result` in the caller's thread."""

    name = "copter-build"  #: the thread's name
    #: the thread's nice increment over the process's (on Linux a thread is a task of its own, so only it is
    #: lowered); 0 = the process's priority
    nice = 0

    def __init__(self):
        self.value, self.error, self.seconds = None, None, 0.0
        self.thread = threading.Thread(target=self._build, name=self.name, daemon=True)

    def _compute(self):
        raise NotImplementedError

    def start(self) -> None:
        """Start the thread (once; later calls do nothing)."""
        if self.thread.ident is None:
            self.thread.start()

    @property
    def in_thread(self) -> bool:
        """True when the thread ran (its :attr:`seconds` overlapped the parts')."""
        return self.thread.ident is not None

    def _build(self) -> None:
        t = time.perf_counter()
        if self.nice and self.in_thread and hasattr(os, "setpriority"):
            try:  # on Linux a thread is a task of its own: only this thread yields to the part workers
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), os.getpriority(os.PRIO_PROCESS, 0)
                               + self.nice)
            except OSError:
                pass
        try:
            self.value = self._compute()
        except BaseException as err:  # re-raised in the caller's thread by result()
            self.error = err
        self.seconds = time.perf_counter() - t

    def result(self):
        """The value (waits for the thread; computes it here when the thread never started). Raises what the
        computation raised."""
        if self.in_thread:
            self.thread.join()
        elif self.value is None and self.error is None:
            self._build()
        if self.error is not None:
            raise self.error
        return self.value


class BoundInputs(NamedTuple):
    """What an LP merge's Lagrangian bound needs of the model alone (:class:`ImpliedUpperBuild`)."""

    up: np.ndarray  #: (n,) implied column upper bounds (``solver.partition.bound.implied_upper``)
    arows: AssignmentRows | None  #: the assignment rows (``solver.partition.bound.assignment_rows_of``; None: too many columns)
    seconds_up: float  #: the time each took
    seconds_rows: float
    seconds_row_scale: float = 0.0  #: the time ``solver.lp.termination.row_absmax`` took (kept in its cache)


class ImpliedUpperBuild(_Build):
    """The :class:`BoundInputs` of ``problem``: its (n,) implied column upper bounds
    (:func:`solver.partition.bound.implied_upper`, two passes over the matrix) and its assignment rows
    (:func:`solver.partition.bound.assignment_rows_of`, one transpose of the pattern), which depend on the model
    only, not on the parts' points, one after the other in a thread that ``solver.partition.executor.run_parts``
    starts (:meth:`start`) once the parts are submitted, so that it does not compete with their packing. An LP
    round's merge needs them for its Lagrangian bound: on TE Kdl (31M nonzeros) the implied bounds were
    0.18-0.20 s of the merge's 0.43 s ``bound_start`` (session 28), the assignment rows take 0.24-0.32 s.

    Last, the model's row scales (``solver.lp.termination.row_absmax``, one pass over the entries, cached while the
    matrix lives), which the merge's re-check of the merged point (``original_kkt``'s per-row test) reads: TE Kdl
    0.07-0.09 s of its ``recheck`` phase (session 48), now a cache hit."""

    name = "copter-implied-upper"
    #: the thread yields to the part workers it runs beside (0.5-0.7 s of CPU on TE Kdl) and takes the cores they
    #: leave idle (the last parts' tails): Kdl K = 4 round 5 on 2 cores, alternated step processes, slowest part
    #: median 2.83 -> 2.57 s, time on K cores 4.43 -> 4.11 s, the thread always done before the merge needed it
    nice = 10

    def __init__(self, problem: Problem, coupling: np.ndarray | None = None):
        super().__init__()
        self.problem = problem
        self.coupling = coupling  # the previous round's choice for the same matrix (assignment_rows_of), or None
        self.reported = False  # its thread's seconds are in a round's phases

    def _compute(self) -> BoundInputs:
        t = time.perf_counter()
        up = implied_upper(self.problem)
        t2 = time.perf_counter()
        arows = assignment_rows_of(self.problem, self.coupling)
        t3 = time.perf_counter()
        p = self.problem
        row_absmax(p.a_indices, p.a_data, p.n_rows)  # kept in termination's cache for the merge's re-check
        return BoundInputs(up, arows, t2 - t, t3 - t2, time.perf_counter() - t3)

    def take(self, ph) -> BoundInputs:
        """:meth:`result`, its wait added to ``ph`` (a ``Phases``) as ``implied_upper_wait`` and, the first time, the
        thread's own seconds as ``implied_upper_in_thread`` and ``assignment_rows_in_thread`` (overlapped with the
        parts: off the critical path)."""
        t = time.perf_counter()
        got = self.result()
        ph.add("implied_upper_wait", time.perf_counter() - t)
        if self.in_thread and not self.reported:
            ph.add("implied_upper_in_thread", got.seconds_up)
            ph.add("assignment_rows_in_thread", got.seconds_rows)
            ph.add("row_scale_in_thread", got.seconds_row_scale)
            self.reported = True
        return got


class WholeBoundBuild(_Build):
    """The whole model's :class:`WholeBound` (O(nnz): structure + CSR), built in a thread of this process while
    the parts run in their workers (this process only waits for them then; ``background``), else at
    :meth:`result`."""

    name = "copter-whole-bound"

    def __init__(self, problem: Problem, background: bool):
        super().__init__()
        self.problem = problem
        if background:
            self.start()

    def _compute(self) -> WholeBound:
        return WholeBound(self.problem)
