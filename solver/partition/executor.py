"""Running the parts of a partitioned round, or POP's parts: local processes (default), Ray tasks, or this process.

:func:`map_parts` calls one picklable module-level function on every part's arguments with the chosen
executor; partitioned rounds (:func:`run_parts`, ``solver.api.solve_problem`` per part) and the POP baseline
(``solver.baselines.pop``, HiGHS per part) both go through it, so both get the same pools, Ray tasks,
retry and fault injection. Executors (``copter init/step --executor``, ``copter compare --executor``):

- ``process``: a ``concurrent.futures.ProcessPoolExecutor`` of ``min(k, cpu_count)`` workers, kept for the
  life of this process (a library caller, ``step_many`` or a bench script pays the workers' start-up once).
  Start method ``forkserver`` where available (never plain ``fork`` after HiGHS or numba threads exist),
  else ``spawn``.
- ``ray``: one Ray task per part (``@ray.remote(max_retries=0)``: copter retries, below). ``ray.init()`` joins the cluster at
  ``ray_address`` or ``$RAY_ADDRESS`` when given, else starts a local one (seconds of start-up; a
  long-running ``ray start --head`` avoids paying them every round). Ray is an optional extra
  (``pip install '.[ray]'`` from a checkout); without it this executor is a MissingDependencyError (exit code 8) naming
  the extra.
- ``inline``: the parts one after another in this process (tests, debugging, a machine with one core).

A worker the forkserver forks after an interrupt (its pid never reached this process, so nothing killed it) finds
the pool's semaphores unlinked and ends without a traceback (:mod:`solver.partition.forkserver_lifeline`).

Workers die with the process that started them, whatever killed it (:mod:`solver.partition.lifeline`); an
interrupted :func:`map_parts` (KeyboardInterrupt, SystemExit) kills its pool's workers before re-raising. Making the
pool and waiting for its parts is a ``formats.undo`` region, so the CLI's SIGINT handler raises KeyboardInterrupt there
instead of ending the process at once with ``os._exit``: the command then exits 130 through the interpreter's
usual exit, whose ``multiprocessing`` finalizers unlink the pool's six semaphores (its call and result queues,
the progress board) and tell the resource tracker so. Ended at once, the tracker found them still registered
and printed "resource_tracker: There appear to be 6 leaked semaphore objects to clean up at shutdown".

A worker that dies (killed, out of memory) is retried once on a fresh pool (Ray: the part's task is submitted
again once, and the round says so as it does for a pool); if it dies again :class:`PartWorkerError` is raised (exit code 5 when it reaches the CLI) and the caller fails the
round, or the baseline, without storing anything.

Fault injection (tests): ``COPTER_FAULT_KILL_PART=<p>`` makes the worker running part p kill itself with
SIGKILL (every attempt), as a crashed machine would.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import logging
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace

from formats import undo
from formats.number_text import DIGITS
from solver.extras import install_hint
from solver.model.errors import EnvironmentFaultError, MissingDependencyError, PartWorkerError, UsageError
from solver.partition import interrupts, lifeline, progress_board, shipping

EXECUTORS = ("process", "ray", "inline")
FAULT_ENV = "COPTER_FAULT_KILL_PART"
_POOLS: dict[int, ProcessPoolExecutor] = {}
_PRESTARTED: set[int] = set()  #: sizes of kept pools :func:`prestart` made that have run no task yet (not ready)
_ON_INTERRUPT: list = []  #: the entered ``formats.undo.on_interrupt(_interrupted)`` while a pool is kept
PROGRESS_INTERVAL = 0.25  #: seconds between two progress reports of running parts
WARM_MODULE = "solver.partition.forkserver_warm"  #: the part workers' forkserver preloads it (the solver, its kernels)


__all__ = ["EXECUTORS", "PartWorkerError", "check_executor", "check_stored_executor", "map_parts", "run_parts",
           "shutdown", "solve_part", "workers_ready"]


def reset_peak_rss() -> None:
    """Reset this process's peak RSS (Linux >= 4.0: ``5`` written to ``/proc/self/clear_refs``), so that
    :func:`peak_rss_mb` measures the task that follows, not an earlier, larger one of the same pooled worker.
    Nothing happens where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_rss_mb() -> float:
    """This process's peak RSS in MiB since :func:`reset_peak_rss` (``VmHWM``), else since it started."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1]) / 1024.0  # kB
    except (OSError, ValueError, IndexError):
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


_FIRST_PART: list[bool] = []  #: in a pool worker: set once its first part has started
_POOL_CREATED: list[float] = [0.0]  #: ``time.time()`` when the newest pool was made (:func:`_pool`)
_POOL_START: list[float] = []  #: per :func:`run_parts` call in which a worker began its first part, the wait (seconds)
_SHIP: list[float] = []  #: per :func:`map_parts` call on a process pool, this process's seconds packing the parts
_RETRIES: list[str] = []  #: a sentence per part worker (or forkserver) that died and whose parts ran again


def _ready_at() -> float | None:
    """In a process-pool worker starting its first part: ``time.time()`` now (the worker is ready: forked,
    initialised, solver imported and kernels loaded by the forkserver's preload,
    :mod:`solver.partition.forkserver_warm`); None on a later part, in this process (``inline``) and in a Ray
    worker (no ``multiprocessing`` parent)."""
    import multiprocessing

    if _FIRST_PART or multiprocessing.parent_process() is None:
        return None
    _FIRST_PART.append(True)
    return time.time()


def take_ship_seconds() -> float:
    """Seconds this process spent packing parts for its pool workers (:mod:`solver.partition.shipping`) since the
    last call, and forget them: a partitioned round reports them as ``ship``, on its critical path."""
    total = sum(_SHIP)
    _SHIP.clear()
    return total


def take_retries() -> list[str]:
    """The sentences of the part workers that died and were run again since the last call (a process pool's
    retry: :func:`map_parts`), and forget them: a round that survived a worker's death reports it as a warning,
    where it was silent (helper-185, session 46: an operator could not tell that workers were crashing)."""
    out = list(_RETRIES)
    _RETRIES.clear()
    return out


def take_pool_start() -> float:
    """Seconds this process waited for new pool workers to start since the last call (summed over the
    :func:`run_parts` calls in which a worker began its first part: from making the pool, or from the call on a
    kept pool, to the last such worker being ready, which its first parts' solve seconds used to include), and
    forget them: a partitioned round reports it as its
    ``pool_start`` phase, apart from its parts' own seconds."""
    total = sum(_POOL_START)
    _POOL_START.clear()
    return total


def solve_part(index: int, problem, settings, warm, command_start: float | None = None) -> dict:
    """Worker: solve one part (``solver.api.solve_problem``) and return ``{"index", "result", "seconds",
    "cpu_seconds", "max_rss_mb", "ready_at"}`` (seconds: wall time of the solve in the worker, its start-up excluded;
    cpu_seconds: the CPU time of this thread meanwhile, which solves the part alone (parts run with one thread):
    below ``seconds`` by the time the part waited for a core;
    max_rss_mb: the worker's peak RSS during this part's solve, the worker's Python and numba baseline
    included; ready_at: ``time.time()`` when a new pool worker began its first part, else None, :func:`_ready_at`).

    ``command_start`` (wall-clock ``time.time()`` seconds of the command's start, or None): the part's
    ``settings.time_limit_seconds`` then counts from that start, not from this call (:mod:`solver.clock`
    registered for the solve, restored after), so a worker's start-up and queueing count against the
    command's ``--time-limit``; wall clock, not monotonic, because a Ray worker may run on another machine."""
    ready = _ready_at()
    from solver import clock
    from solver.api import solve_problem

    reset_peak_rss()
    t = time.perf_counter()
    cpu = time.thread_time()  # the part runs in this thread (threads = 1), whichever executor called it
    saved = clock.command_start()
    if command_start is not None:
        clock.start_command(time.monotonic() - max(time.time() - command_start, 0.0))
    matrix = (problem.a_indptr, problem.a_indices, problem.a_data)
    crc = None  # the part matrix's checksum: one pass, taken once for the seed and the factors stored
    try:
        if warm is not None and warm.scaling is not None:  # the part's matrix scaling of the last round
            from solver.lp import alm_scaling

            crc = alm_scaling.matrix_crc(*matrix)
            alm_scaling.seed(*matrix, problem.n_rows, warm.scaling, crc)
        with progress_board.reporting(index):
            result = solve_problem(problem, settings, warm)
        scaling = sys.modules.get("solver.lp.alm_scaling")
        found = None if scaling is None or result.state is None else scaling.factors_of(*matrix, problem.n_rows)
        if found is not None:  # the next round's worker starts from them, for a matrix of this checksum
            found.matrix_crc = scaling.matrix_crc(*matrix) if crc is None else crc
            result = replace(result, state=replace(result.state, scaling=found))
    finally:
        clock.start_command(saved)
    seconds = time.perf_counter() - t
    return {"index": index, "result": result, "seconds": seconds, "cpu_seconds": time.thread_time() - cpu,
            "max_rss_mb": peak_rss_mb(), "ready_at": ready}


def kill_flags(k: int) -> list[bool]:
    """Which parts' workers kill themselves (``COPTER_FAULT_KILL_PART``)."""
    raw = os.environ.get(FAULT_ENV, "").strip()
    return [raw != "" and raw == str(p) for p in range(k)]


def check_executor(name: str) -> None:
    """Raise UsageError for an unknown executor name, MissingDependencyError for ``ray`` when Ray is not
    importable."""
    if name not in EXECUTORS:
        raise UsageError(f"unknown executor {name!r}; choose {', '.join(EXECUTORS)}")
    if name == "ray":
        _import_ray()


def check_stored_executor(name: str, config_file) -> None:
    """:func:`check_executor` for the executor a state stored (``config_file``'s ``partition.executor``, set by
    ``copter init --executor``) when the command was given none.

    Raises:
        UsageError, MissingDependencyError: as :func:`check_executor`; ``ray`` without Ray says that the
            state chose it, naming ``config_file``, the extra and the per-command way out (``--executor process``), since the operator
            gave no ``--executor`` (a state made where Ray is installed, used where it is not).
    """
    if name != "ray":
        check_executor(name)
        return
    try:
        _import_ray()
    except MissingDependencyError as err:
        raise MissingDependencyError(
            f"this state's partitioned rounds run on Ray ({config_file}: partition.executor 'ray', set by copter init "
            f"--executor ray), and Ray is not installed here: {install_hint('ray', 'ray')}, or give this command "
            f"--executor process (or inline); {err.__cause__}", package="ray") from err


def _import_ray():
    try:
        import ray
    except ImportError as err:
        raise MissingDependencyError(f"--executor ray needs Ray, which is not installed: {install_hint('ray', 'ray')} "
                                     f"({err})", package="ray") from err
    return ray


def ray_initialized() -> bool:
    """Whether Ray is initialised in this process (without importing it): a later round joins no other address."""
    ray = sys.modules.get("ray")
    return bool(ray is not None and getattr(ray, "is_initialized", lambda: False)())


def workers_ready(executor: str, n_tasks: int, workers: int | None = None) -> bool:
    """Whether ``map_parts(..., executor, workers)`` on ``n_tasks`` tasks would start no workers first: always for
    ``inline``; for ``process`` when this process keeps a pool of that size; for ``ray`` when Ray is initialised
    in this process (``ray.init`` not yet called starts or joins a cluster: seconds). A pool :func:`prestart` made
    is not ready until it has run a task: its forkserver may still be loading the solver, and the first fork waits
    for that (seconds that cannot stop at a deadline)."""
    if executor == "inline":
        return True
    if executor == "ray":
        return ray_initialized()
    n = max(1, min(n_tasks, workers or os.cpu_count() or 1))
    return n in _POOLS and n not in _PRESTARTED


def _init_worker(forkserver: bool, board, counter) -> None:
    """A part worker's initializer: it dies with its parent (:mod:`solver.partition.lifeline`) and reports its
    solves' progress on the pool's board (:mod:`solver.partition.progress_board`)."""
    lifeline.worker_init(forkserver)
    progress_board.attach(board, counter)


def _collect(futures: list, pool: ProcessPoolExecutor, check: Callable[[], None] = lambda: None,
             parts: list[int] | None = None, k: int | None = None) -> list:
    """The futures' results in order; meanwhile, when a progress callback is registered (the CLI's progress
    line, ``solver.lp.pdhg.progress_callback``), it gets the parts' progress about four times a second
    (:func:`solver.partition.progress_board.summary`). ``parts``: the part each future solves (default: its
    position), ``k``: the round's part count (default: the futures'); a retry submits only the parts not yet
    finished, and the line still counts every part of the round (it read ``parts done 0/1`` after ``2/3``).

    The wait is in steps of ``PROGRESS_INTERVAL`` seconds, each followed by ``check()``
    (:meth:`solver.partition.interrupts.Noted.check`): an interrupt whose KeyboardInterrupt was dropped in a
    finalizer (:mod:`solver.partition.interrupts`) is raised here instead of waiting for the parts to end."""
    from solver.lp.pdhg import current_progress_callback

    report, board = current_progress_callback(), getattr(pool, "copter_board", None)
    pending = set(futures)
    parts = list(range(len(futures))) if parts is None else parts
    k = len(futures) if k is None else k
    index = {f: parts[i] for i, f in enumerate(futures)}
    gone_since = None  # when a worker was first seen gone with parts still pending
    while pending:
        check()
        _, pending = wait(pending, timeout=PROGRESS_INTERVAL)
        if pending and _worker_gone(pool):
            gone_since = gone_since if gone_since is not None else time.monotonic()
            if time.monotonic() - gone_since >= DEAD_WORKER_GRACE:
                raise BrokenProcessPool("a part worker process died and its pool did not notice (killed while it "
                                        "wrote its result: the pool's reader waits for the rest of that message)")
        if pending and report is not None and board is not None:
            report(progress_board.summary(board, {index[f] for f in pending}, k - len(pending), k))
    check()
    return [f.result() for f in futures]


#: seconds a part worker may be gone, with parts still pending, before the round takes its pool for broken
#: (:func:`_collect`); a pool notices a dead worker itself within milliseconds
DEAD_WORKER_GRACE = 2.0


def _worker_gone(pool: ProcessPoolExecutor) -> bool:
    """True when one of ``pool``'s worker processes has ended. A pool whose worker was killed while it wrote its
    result to the result pipe never noticed: its manager thread waits inside ``recv`` for the rest of that message
    (CPython's ``concurrent.futures`` checks the workers' sentinels only between messages), the other workers
    wait for the dead one's write lock, and ``copter step`` waited forever (helper-207: 3 of 3 such kills). The
    check reads the process table (``/proc/<pid>/stat``), never the workers' ``Popen`` objects, which the manager
    thread polls."""
    try:
        pids = list(getattr(pool, "_processes", None) or {})
    except RuntimeError:  # the manager thread changed the dict meanwhile: the next look
        return False
    for pid in pids:
        try:
            with open(f"/proc/{int(pid)}/stat", "rb") as fh:
                state = fh.read().rsplit(b")", 1)[-1].split()[:1]
        except (OSError, ValueError):
            return True  # no such process: ended and reaped (by the forkserver, its parent)
        if state in ([b"Z"], [b"X"]):  # ended, not yet reaped
            return True
    return False


def _unblock_results(pool: ProcessPoolExecutor) -> None:
    """Close this process's write end of ``pool``'s result pipe, after its workers are killed: the manager thread
    waiting inside ``recv`` for the rest of a dead worker's message then reads end-of-file, takes the pool for
    broken and ends (else it waited forever, and the process's exit with it)."""
    writer = getattr(getattr(pool, "_result_queue", None), "_writer", None)
    try:
        if writer is not None:
            writer.close()
    except OSError:
        pass


def _pool(workers: int, preload: tuple[str, ...] = ()) -> ProcessPoolExecutor:
    """The kept pool of ``workers`` processes, started on first use; ``preload``: modules the forkserver imports
    as well, when this pool starts it (it is shared by every pool of this process)."""
    pool = _POOLS.get(workers)
    if pool is not None:
        return pool
    _POOL_CREATED[0] = time.time()
    forkserver = "forkserver" in mp.get_all_start_methods()
    ctx = mp.get_context("forkserver" if forkserver else "spawn")
    if forkserver and threading.current_thread() is threading.main_thread():
        # the forkserver dies with this process (its pdeathsig fires when the thread that started it ends)
        ctx.set_forkserver_preload(["__main__", lifeline.PRELOAD_MODULE, *preload])
    lifeline.start_resource_tracker()  # before the board's and the pool's semaphores register with it
    board = progress_board.new_board(ctx, workers)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                               initargs=(forkserver, *board))
    pool.copter_board = board[0]
    _POOLS[workers] = pool
    if forkserver:  # the forkserver's socket lies in multiprocessing's temporary folder until the process exits
        undo.multiprocessing_tempdir()
        if threading.current_thread() is threading.main_thread():
            lifeline.start_forkserver()  # now, with SIGINT blocked, rather than at the first worker's start
    if not _ON_INTERRUPT:  # an interrupt that ends the process at once ends the kept pools first
        _ON_INTERRUPT.append(undo.on_interrupt(_interrupted))
        _ON_INTERRUPT[0].__enter__()
    return pool


def prestart(k: int, workers: int | None = None) -> bool:
    """Start the part workers' forkserver now, for a round of ``k`` parts on ``workers`` processes (None: one per
    CPU), so that its preload (the solver and the cached kernels, :mod:`solver.partition.forkserver_warm`: 2.2-3.3 s
    in a TE Kdl step process) runs beside this process's state load and set-up instead of after them. Best effort:
    False, doing nothing, without a forkserver or off the main thread; :func:`run_parts` starts it otherwise.
    The pool is the one :func:`run_parts` then takes (kept by its size)."""
    if "forkserver" not in mp.get_all_start_methods() or threading.current_thread() is not threading.main_thread():
        return False
    n = max(1, min(k, workers or os.cpu_count() or 1))
    with undo.region():
        if n not in _POOLS:
            _PRESTARTED.add(n)  # not ready (workers_ready) until it has run a task
        _pool(n, (WARM_MODULE,))  # starts the forkserver (lifeline.start_forkserver)
    return True


def shutdown() -> None:
    """Shut down the kept process pools (the interpreter does it at exit too)."""
    for workers in list(_POOLS):
        _end_pool(workers)


def _end_pool(workers: int, kill: bool = False, wait: bool = False) -> None:
    """The one way a kept pool ends: drop the pool of ``workers`` processes and shut it down, its queued tasks
    cancelled. ``kill``: SIGKILL its workers first, for an interrupted round (KeyboardInterrupt, SystemExit from a
    signal handler), which must not wait for its parts to finish, neither here nor in the interpreter's exit hook
    (``concurrent.futures`` joins a pool's running work at exit). ``wait``: until its manager thread has ended."""
    _PRESTARTED.discard(workers)
    pool = _POOLS.pop(workers, None)
    if pool is None:
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()) if kill else ():
        try:
            proc.kill()
        except (OSError, ValueError, AttributeError):
            pass
    if kill:
        _unblock_results(pool)
    pool.shutdown(wait=wait, cancel_futures=True)
    if not _POOLS and _ON_INTERRUPT:
        _ON_INTERRUPT.pop().__exit__(None, None, None)


def _interrupted() -> None:
    """``formats.undo`` action while a pool is kept, run by the CLI's SIGINT handler before it ends the process
    at once (an interrupt outside the wait for the parts: the merge, say): kill the pools' workers, wait for
    their manager threads and collect the pools, so that ``multiprocessing``'s finalizers unlink their semaphores
    and unregister them from the resource tracker, which otherwise found them at the exit and warned of "6
    leaked semaphore objects"."""
    for workers in list(_POOLS):
        _end_pool(workers, kill=True, wait=True)
    gc.collect()


def run_parts(tasks: list[tuple], executor: str = "process", workers: int | None = None,
              ray_address: str | None = None, command_start: float | None = None,
              on_submitted: Callable[[], None] | None = None) -> list[dict]:
    """Solve the parts of a partitioned round: ``tasks`` is a list of ``(problem, settings, warm_state)``;
    returns the :func:`solve_part` dicts in task order (:func:`map_parts` with :func:`solve_part`); the longest
    start-up of new workers is kept for :func:`take_pool_start`; the forkserver preloads the solver and its
    cached kernels (:mod:`solver.partition.forkserver_warm`).
    ``command_start`` (``time.time()`` seconds, or None): the parts' time limits count from it
    (:func:`solve_part`), else from each part's own start. ``on_submitted``: called (in this thread) once every
    part is on its way to a worker, before the wait for them (:func:`map_parts`).

    Raises:
        UsageError: unknown executor. MissingDependencyError: ``ray`` without Ray installed.
        PartWorkerError: a worker died on its retry too.
    """
    called = time.time()
    outs = map_parts(solve_part, [(i, *t, command_start) for i, t in enumerate(tasks)], executor, workers,
                     ray_address, preload=(WARM_MODULE,), on_submitted=on_submitted)
    ready = [o["ready_at"] for o in outs if o.get("ready_at") is not None]
    if ready:  # new workers: this call's wait, from making the pool (or from this call, on a kept pool whose
        # worker took no part before) to the last one's start; never the pool's age
        _POOL_START.append(max(max(ready) - max(_POOL_CREATED[0], called), 0.0))
    return outs


def _call(fn, args: tuple, kill: bool):
    """Worker side of :func:`map_parts`: ``fn(*args)``, or SIGKILL this process first (fault injection)."""
    if kill:
        os.kill(os.getpid(), signal.SIGKILL)
    return fn(*args)


HUGEPAGE_VAR = "NUMPY_MADVISE_HUGEPAGE"  #: numpy's switch for its huge-page advice (``copter_cli.entry``)


def _call_ray(fn, args: tuple, kill: bool):
    """Ray side of :func:`map_parts`: :func:`_call` in a worker whose environment lacks ``NUMPY_MADVISE_HUGEPAGE``
    after numpy's huge-page advice is turned off, as the console script turns it off in the processes it starts
    (``copter_cli.entry.no_numpy_hugepage_advice``: the first write of an advised array stalled in compaction, a TE
    Kdl part 1.54 s instead of 1.24 s). A local cluster this process started inherits the console script's
    setting; a worker of a cluster started elsewhere does not, and it keeps its own when it has one."""
    if HUGEPAGE_VAR not in os.environ:
        import numpy

        core = getattr(numpy, "_core", None) or numpy.core  # numpy 2 / numpy 1.26
        core.multiarray._set_madvise_hugepage(False)
    return _call(fn, args, kill)


class _ShipmentLost(Exception):
    """A worker could not open a part's shared memory (:func:`shipping.unpack`): the parts go through the pipe."""


def _call_shipped(fn, shipment: shipping.Shipment, kill: bool):
    """Worker side of :func:`map_parts` with shared memory: :func:`_call` on the unpacked arguments."""
    try:
        args = shipping.unpack(shipment)
    except OSError as err:
        raise _ShipmentLost(str(err)) from err
    return _call(fn, args, kill)


def map_parts(fn, tasks: list[tuple], executor: str = "process", workers: int | None = None,
              ray_address: str | None = None, preload: tuple[str, ...] = (),
              on_submitted: Callable[[], None] | None = None) -> list:
    """``[fn(*task) for task in tasks]`` with the parts run by ``executor`` (module docstring).

    Args:
        fn: a module-level (picklable) function; it runs in a worker process (``process``), a Ray worker
            (``ray``) or this process (``inline``). Its arguments and result must pickle.
        tasks: one argument tuple per part, part p = ``tasks[p]`` (``COPTER_FAULT_KILL_PART`` counts these).
        executor: ``process``, ``ray`` or ``inline``.
        workers: ``process`` pool size (default: the CPU count; never more than ``len(tasks)``).
        ray_address: cluster to join for ``ray`` (default ``$RAY_ADDRESS``, else a local cluster).
        preload: modules a ``process`` pool's forkserver imports before it forks the workers, when this call
            starts it (their imports then cost once, not in every worker).
        on_submitted: called in this thread once every task is submitted (``process``: packed and queued;
            ``ray``: its task created), before the wait for the results; again after a retry's submission.
            Not called by ``inline``, which runs the tasks as it goes (work to overlap with the parts would
            only delay them there).
    Returns:
        The results in task order.
    Raises:
        UsageError: unknown executor. MissingDependencyError: ``ray`` without Ray installed.
        PartWorkerError: a worker died on its retry too (``part`` names it when known). An exception
            raised by ``fn`` itself propagates unchanged.
    """
    check_executor(executor)
    kill = kill_flags(len(tasks))
    if executor == "inline":
        return [_call(fn, t, kill[i]) for i, t in enumerate(tasks)]
    with interrupts.noted() as noted:  # the waits for the parts re-raise an interrupt dropped on the way
        if executor == "ray":
            return _run_ray(fn, tasks, kill, ray_address, on_submitted, noted.check)
        n = max(1, min(len(tasks), workers or os.cpu_count() or 1))
        shipped: list | None = [] if shipping.available() else None
        try:
            return _run_pool(fn, tasks, shipped, kill, n, preload, on_submitted, noted.check)
        finally:
            if shipped:
                shipping.release(shipped)


def _submit_all(pool: ProcessPoolExecutor, fn, tasks: list[tuple], shipped: list | None, kill: list[bool],
                todo: list[int] | None = None) -> list:
    """Submit the parts ``todo`` (ascending indices into ``tasks``; None: every part): through shared memory
    (``shipped``, filled as the parts are packed, each part submitted as soon as it is packed so that its worker
    starts while the next one is packed; a None entry goes by the pipe), or pickled through the pool's pipe
    (``shipped`` None). Returns their futures in ``todo``'s order."""
    futures = []
    for i in range(len(tasks)) if todo is None else todo:
        t = tasks[i]
        while shipped is not None and i >= len(shipped):  # a part not packed yet (and any before it: in order)
            s, seconds = shipping.timed_pack(tasks[len(shipped)])
            shipped.append(s)
            _SHIP.append(seconds)
        s = None if shipped is None else shipped[i]
        futures.append(pool.submit(_call, fn, t, kill[i]) if s is None else pool.submit(_call_shipped, fn, s, kill[i]))
    return futures


def _run_pool(fn, tasks: list[tuple], shipped: list | None, kill: list[bool], n: int, preload: tuple[str, ...],
              on_submitted: Callable[[], None] | None = None, check: Callable[[], None] = lambda: None):
    """:func:`map_parts` on the kept pool of ``n`` workers (:func:`_submit_all`); a worker that dies is retried
    once on a fresh pool; a worker that cannot map a part's shared memory has every part sent again by the pipe.
    ``check``: raises an interrupt dropped on the way (:func:`_collect`).

    A worker's death and the forkserver's are counted apart, each retried once: a forkserver killed mid-round takes
    its workers with it (their parent-death signal: the pool breaks), and under load the retry's first worker start
    can still meet the dying server's socket; one shared count called that "died twice" (a test's flake beside CI,
    session 48)."""
    worker_deaths = server_deaths = 0
    done: dict[int, object] = {}  # the parts a broken pool had finished: kept, not solved again
    while True:
        futures = []
        todo = [i for i in range(len(tasks)) if i not in done]
        starting = True  # workers start (through the forkserver) while the parts are submitted, not after
        try:  # a pool broken earlier (a worker killed by SIGINT, say) already fails at submit
            # the CLI's SIGINT handler raises KeyboardInterrupt here (module docstring), also while the pool and
            # its semaphores are made: ended at once there, the resource tracker found them and warned of a leak
            with undo.region():
                pool = _pool(n, preload)
                board = getattr(pool, "copter_board", None)
                if board is not None:
                    progress_board.clear(board)
                futures = _submit_all(pool, fn, tasks, shipped, kill, todo)
                starting = False
                if on_submitted is not None:
                    on_submitted()
                done.update(zip(todo, _collect(futures, pool, check, todo, len(tasks)), strict=True))
                _PRESTARTED.discard(n)  # its workers have started
                return [done[i] for i in range(len(tasks))]
        except _ShipmentLost:  # a worker could not map the shared memory (/proc restricted): the pipe, same pool
            for f in futures:
                f.cancel()
            while wait(futures, timeout=PROGRESS_INTERVAL).not_done:  # the running ones end; a dropped interrupt
                check()  # is raised here too (_collect)
            shipping.release(shipped)
            shipped.clear()
            shipped = None
        except (OSError, EOFError) as err:  # the pool ends as on any other error (a bare raise skips that clause)
            _end_pool(n, kill=True)
            if isinstance(err, OSError) and err.errno in (errno.EMFILE, errno.ENFILE):
                raise _no_fds_for_workers(err) from err
            if not (starting and _forkserver_gone(err)):
                raise
            # the forkserver that forks the workers died (killed, the OOM killer's pick: it holds the preloaded
            # solver); a worker started through it failed with ConnectionRefusedError, exit 1 (helper-185). The
            # retry starts a new one (multiprocessing relaunches it once it finds the old one exited)
            server_deaths += 1
            if server_deaths == 2:
                raise PartWorkerError(f"the part workers' forkserver process died twice ({err})") from err
            _RETRIES.append(f"the part workers' forkserver process died ({type(err).__name__}) and a new one "
                            "started the parts' workers")
            _forkserver_reaped()
        except BrokenProcessPool as err:
            dead = next((i for i, _ in zip(todo, futures, strict=False) if kill[i]), None)  # futures: the submitted
            _end_pool(n, kill=True)  # a pool that did not notice its dead worker keeps the others waiting: killed
            worker_deaths += 1
            if worker_deaths == 2:  # a pool cannot say which part a death belongs to: two in a round end it
                what = ("part worker processes died twice in this round, the second time on the retry's new "
                        "workers" if dead is None else f"the worker process solving part {dead} died twice")
                raise PartWorkerError(f"{what} ({err})", dead) from err
            # a dead worker breaks the whole pool, and every part it had not finished with it; those it had
            # finished keep their results (they were solved again too, doubling the round's work)
            done.update((i, f.result()) for i, f in zip(todo, futures, strict=False)
                        if f.done() and not f.cancelled() and f.exception() is None)
            again = [i for i in todo if i not in done]
            how = _died_how(futures, err)
            if not again:  # it died after the last part had ended: nothing to solve again
                _RETRIES.append(f"a part worker process died ({how}) after every part had ended; "
                                "nothing was solved again")
                return [done[i] for i in range(len(tasks))]
            which = "a part worker process" if dead is None else f"the worker process solving part {dead}"
            _RETRIES.append(f"{which} died ({how}), which ends its whole pool: the part{'s' if len(again) > 1 else ''} "
                            f"it had not finished ({_listed(again)}) {'were' if len(again) > 1 else 'was'} solved "
                            "again on new workers, the finished ones kept; a worker that keeps dying points at "
                            "memory (the OOM killer) or at something killing processes")
        except BaseException:  # interrupted (SIGINT, a handler's SystemExit): the parts' workers go too
            _end_pool(n, kill=True)
            raise


def _listed(parts: list[int]) -> str:
    """Part indices as words: ``0``, ``0 and 2``, ``0, 1 and 3``."""
    words = [str(i) for i in parts]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _died_how(futures: list, err: BaseException | None = None) -> str:
    """How the pool's broken futures say its worker ended ("terminated abruptly", the exit code or signal when
    ``concurrent.futures`` names it): the first exception's text, shortened; else ``err``'s (the round's own
    finding, :func:`_collect`), else "its pool broke"."""
    for f in futures:
        if f.done() and not f.cancelled() and f.exception() is not None:
            text = str(f.exception()).split(". ")[0]
            return text[:160]
    return str(err).split(". ")[0][:160] if err is not None and str(err) else "its pool broke"


def _forkserver_gone(err: BaseException) -> bool:
    """True when ``err``, raised while the pool started a worker, says that multiprocessing's forkserver is gone: its
    socket refuses (ConnectionRefusedError), the dying server accepted the connection and dropped it as the worker's
    descriptors were sent (BrokenPipeError, ConnectionResetError: session 49, beside CI), or the server died before
    it sent the new worker's pid (EOFError: ``unexpected EOF``). Other OSErrors end the round as before."""
    if isinstance(err, EOFError):  # multiprocessing.popen_forkserver's own words, not a part's EOFError
        return str(err) == "unexpected EOF"
    return isinstance(err, ConnectionRefusedError | BrokenPipeError | ConnectionResetError)


def _forkserver_reaped(seconds: float = 5.0) -> None:
    """Wait until multiprocessing's forkserver process has exited and been reaped (at most ``seconds``), so that the
    next worker start launches a new one: ``ForkServer.ensure_running`` relaunches only a server whose exit its
    ``waitpid(WNOHANG)`` sees; a server killed a moment before still counted as running."""
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    pid = getattr(server, "_forkserver_pid", None)
    if pid is None:
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:  # gone (ProcessLookupError), or not ours to signal
            return
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:  # reaped here: tell multiprocessing, which would waitpid it again
                os.close(server._forkserver_alive_fd)
                server._forkserver_address = server._forkserver_alive_fd = server._forkserver_pid = None
                return
        except ChildProcessError:
            return
        time.sleep(0.05)


def _no_fds_for_workers(err: OSError) -> EnvironmentFaultError:
    """The error for part workers that could not start because the process ran out of file descriptors (EMFILE,
    ``ulimit -n``; ENFILE, the system's table): it named the state folder ("TP: cannot write: Too many open files",
    helper-170), whose files were fine."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    limit = "unlimited" if soft == resource.RLIM_INFINITY else str(soft)
    return EnvironmentFaultError(
        f"cannot start the part workers: {err.strerror or err} (this process's open-file limit, ulimit -n, is "
        f"{limit}): raise the limit, or run the parts in this process with --executor inline",
        reason="open_files", errno_name=errno.errorcode.get(err.errno))


def _quiet_driver_logs(ray) -> None:
    """Stop Ray's driver from printing the cluster's messages from here on (its background thread printed "(raylet)
    A worker died ..." after the command's own error line, which a script reads as the last line; helper-185).
    Nothing happens when a Ray version lacks the switch."""
    mod = getattr(getattr(ray, "_private", None), "worker", None)
    if mod is not None and hasattr(mod, "_worker_logs_enabled"):
        mod._worker_logs_enabled = False


def _driver_messages_to_stderr(ray) -> None:
    """Ray's driver prints the cluster's error messages ("(raylet) A worker died ...") on stdout from a
    background thread, even with ``log_to_driver=False``, where they would corrupt a command's one JSON answer
    (``--json``): route what Ray prints through ``ray._private.worker.print_to_stdstream`` to stderr. Nothing
    happens when a Ray version lacks that function."""
    mod = getattr(getattr(ray, "_private", None), "worker", None)
    emit = getattr(mod, "print_to_stdstream", None)
    if emit is None or getattr(emit, "copter_stderr", False):
        return

    def to_stderr(data, *args, **kw):
        return emit({**data, "is_err": True}, *args, **kw)

    to_stderr.copter_stderr = True
    mod.print_to_stdstream = to_stderr


RAY_CONNECT_SECONDS = 10.0
"""How long a Ray cluster's address may take to accept a TCP connection before the command gives up (exit 7):
``ray.init`` itself retries an address where nothing listens for minutes."""


def ray_address_target(address: str | None) -> tuple[str, int] | None:
    """The (host, port) a Ray address names: ``host:port``, ``ray://host:port`` (Ray Client), ``[v6]:port``;
    None for None, ``""``, ``auto`` and ``local`` (Ray finds or starts the cluster).

    Raises:
        UsageError: any other form, naming ``--ray-address`` (or ``$RAY_ADDRESS``) and the value.
    """
    if not address or address in ("auto", "local"):
        return None
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    # ASCII digits only: "²" passed isdigit() and failed int() (exit 1), "６３７９" probed 6379 and reached Ray as text
    if not sep or not host or not DIGITS.fullmatch(port) or not 0 < int(port) < 65536:
        raise UsageError(f"--ray-address (or $RAY_ADDRESS) {address!r} is not a Ray cluster address: give host:port "
                         f"(e.g. 10.0.0.5:6379, the head node's GCS port), ray://host:port, auto or local")
    return host, int(port)


ANOTHER_ADDRESS = "give another --ray-address or $RAY_ADDRESS"
"""The way out that :func:`probe_ray_address`'s errors offer for an address the command was given; a step on an address
its state stored replaces it (``solver.rounds.partitioned``: $RAY_ADDRESS does not override a stored one)."""


def probe_ray_address(address: str | None, seconds: float = RAY_CONNECT_SECONDS) -> None:
    """Check that something accepts a TCP connection at a Ray address before ``ray.init`` joins it.

    Raises:
        UsageError: the address is malformed (:func:`ray_address_target`).
        EnvironmentFaultError: nothing answers within ``seconds`` (refused, unreachable, unknown host), naming
            the address and the ways out.
    """
    target = ray_address_target(address)
    if target is None:
        return
    import socket

    from solver.model.errors import EnvironmentFaultError

    ways_out = f"start one there (ray start --head), {ANOTHER_ADDRESS}, or run this command with --executor process"
    t0 = time.monotonic()
    try:
        sock = socket.create_connection(target, timeout=seconds)
    except OSError as err:
        why = f"no answer in {seconds:g} s" if isinstance(err, TimeoutError) else (err.strerror or type(err).__name__)
        raise EnvironmentFaultError(f"--executor ray: no Ray cluster answers at {address} ({why}); {ways_out}",
                                    reason="io") from err
    with sock:
        if os.environ.get("RAY_USE_TLS", "0").lower() in ("0", "false", ""):  # with TLS the handshake comes first
            answer = _grpc_answer(sock, max(seconds - (time.monotonic() - t0), 1.0))
            if answer is not None:
                raise EnvironmentFaultError(f"--executor ray: the service at {address} is not a Ray cluster: asked "
                                            f"over gRPC (HTTP/2), as Ray's GCS is, it {answer}; {ways_out}",
                                            reason="io")


def _no_address_target() -> str | None:
    """What ``ray.init`` is given when no address was: the cluster the last ``ray start`` on this machine recorded
    (``/tmp/ray/ray_current_cluster``) when it answers (:func:`probe_ray_address`, 3 s), which ``ray.init()`` would
    join and where it refused the ``num_cpus`` copter passes for a cluster of its own (exit 1, found in session 46);
    ``"local"`` (a new local cluster) when the recorded one no longer answers, where ``ray.init()`` tried its dead GCS
    with no end in sight (a head stopped without ``ray stop`` leaves the record: a step hung 8 minutes); None (Ray
    starts a local cluster) when nothing is recorded or this Ray version has no such lookup."""
    try:
        from ray._private.services import canonicalize_bootstrap_address

        recorded = canonicalize_bootstrap_address(None)
    except Exception:  # noqa: BLE001 - a private helper of Ray's: absent or changed, Ray's own behaviour stands
        return None
    if not recorded:
        return None
    from solver.model.errors import EnvironmentFaultError

    try:
        probe_ray_address(recorded, seconds=3.0)
    except (EnvironmentFaultError, UsageError):
        return "local"
    return recorded


#: HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113, section 3.4): a gRPC server, which Ray's
#: GCS and its Ray Client server are, answers with a SETTINGS frame of its own
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _grpc_answer(sock, seconds: float) -> str | None:
    """None when the peer of the connected ``sock`` answers HTTP/2's connection preface with a SETTINGS frame (frame
    type 4 in its first 9 bytes) within ``seconds``, else what it did instead, as a clause ("answered 'HTTP/1.0 400'",
    "closed the connection", "said nothing in 5 s"). ``ray.init`` given an address where something else listens (an
    HTTP server on the dashboard's port, Redis, a proxy) retried inside Ray's C++ client with no deadline: 12 minutes
    holding the state's lock, --time-limit ignored (helper-185, session 46)."""
    got = b""
    deadline = time.monotonic() + seconds
    try:
        sock.sendall(_H2_PREFACE)
        while len(got) < 9:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            sock.settimeout(left)
            chunk = sock.recv(9 - len(got))
            if not chunk:
                return "closed the connection" if not got else f"answered {got!r} and closed the connection"
            got += chunk
    except TimeoutError:
        pass
    except OSError as err:
        return f"failed while answering ({err.strerror or type(err).__name__})"
    if len(got) < 9:
        return f"said nothing in {seconds:.3g} s" + (f" but {got!r}" if got else "")
    if got[3] != 4:
        try:  # a little more of its answer, to show (an HTTP status line, a Redis error)
            sock.settimeout(0.2)
            got += sock.recv(64)
        except OSError:
            pass
        line = got.split(b"\r\n", 1)[0].split(b"\n", 1)[0][:48]
        shown = line.decode("ascii") if line.isascii() and line.decode().isprintable() else got[:16].hex()
        return f"answered {shown!r}"
    return None


@contextlib.contextmanager
def _own_sigterm():
    """Keep this process's SIGTERM handler across ``ray.init``, which installs its own (``sys.exit(15)``) in the
    driver: a handler set before (the CLI's, ``copter_cli.entry``: exit 143, the interrupted error, the state
    unchanged; or SIG_IGN) is put back when it returns, and a SIGTERM that Ray's handler turned into
    SystemExit(15) meanwhile is handed to it; with the default disposition Ray's handler stays.
    Main thread only (elsewhere no handler can be set; Ray sets none either)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = signal.getsignal(signal.SIGTERM)
    try:
        yield
    except SystemExit as ex:
        if ex.code != signal.SIGTERM or not callable(saved):
            raise
        signal.signal(signal.SIGTERM, saved)
        saved(signal.SIGTERM, None)  # the CLI's handler ends the process (exit 143); another one may return
        raise
    finally:
        if callable(saved) or saved == signal.SIG_IGN:  # a default one (a library user's process): Ray's stays
            signal.signal(signal.SIGTERM, saved)


def _ray_ready(ray, refs: list, check: Callable[[], None], gcs: tuple[str, int] | None = None) -> list:
    """The refs of ``refs`` (Ray ObjectRefs) whose tasks have ended, at least one: ``ray.wait`` in steps of
    ``PROGRESS_INTERVAL`` seconds, each after ``check()`` (an interrupt dropped in a finalizer is raised there instead
    of waiting for the parts, :func:`_collect`). ``gcs``: the cluster's GCS (host, port), checked between the steps
    (:func:`_check_gcs`). Waiting for any part, not for the parts in order, lets a part whose worker died be run
    again while the parts before it still run (a sequential ``ray.get`` reached it only after them)."""
    checked = time.monotonic()
    while True:
        check()
        ready, _ = ray.wait(refs, num_returns=1, timeout=PROGRESS_INTERVAL)
        if ready:
            ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)  # and every other one that has ended
            return ready
        if time.monotonic() - checked >= GCS_CHECK_SECONDS:
            _check_gcs(ray, gcs)
            checked = time.monotonic()


GCS_CHECK_SECONDS = 2.0  #: how often a wait for a Ray part checks that the cluster's GCS still accepts connections


def _gcs_of(ray) -> tuple[str, int] | None:
    """The (host, port) of the joined cluster's GCS, or None when this Ray version does not say."""
    try:
        return ray_address_target(ray.get_runtime_context().gcs_address)
    except Exception:  # noqa: BLE001 - best effort: without it the cluster's loss is Ray's to report
        return None


def _check_gcs(ray, gcs: tuple[str, int] | None) -> None:
    """Raise EnvironmentFaultError (exit 7) when the cluster's GCS refuses connections: the cluster went away
    mid-round (``ray stop``, a crashed head). Ray's driver then waited 60 s and ended the whole process with exit 1,
    nothing on stdout, no error line (helper-185, session 46). A refused connection is the test: a GCS that is slow
    to answer is left to Ray."""
    if gcs is None:
        return
    import socket

    from solver.model.errors import EnvironmentFaultError

    try:
        socket.create_connection(gcs, timeout=2.0).close()
    except (ConnectionRefusedError, ConnectionResetError) as err:
        _quiet_driver_logs(ray)
        raise EnvironmentFaultError(
            f"--executor ray: the Ray cluster went away mid-round (its GCS at {gcs[0]}:{gcs[1]} refuses "
            "connections); nothing was stored: run the step again once the cluster is back, or with --executor "
            "process", reason="io") from err
    except OSError:
        return


def _run_ray(fn, tasks: list[tuple], kill: list[bool], address: str | None,
             on_submitted: Callable[[], None] | None = None, check: Callable[[], None] = lambda: None) -> list:
    ray = _import_ray()
    if not ray.is_initialized():
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        if not sys.stderr.isatty():  # Ray's "(raylet) ..." lines came with colour codes into logs (helper-185)
            os.environ.setdefault("RAY_COLOR_PREFIX", "0")
        address = address or os.environ.get("RAY_ADDRESS") or None
        probe_ray_address(address)  # ray.init retries an address where nothing listens for minutes
        if address is None:
            address = _no_address_target()
        kw = {"num_cpus": os.cpu_count() or 1} if address in (None, "local") else {}  # a cluster of its own
        started = time.perf_counter()
        try:
            with _own_sigterm():
                # logging_level: Ray's INFO lines ("Started a local Ray instance.") are not copter's to print
                ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False,
                         logging_level=logging.WARNING, **kw)
        except ConnectionError as err:  # "auto" and no cluster running, or one that went away: not a bug
            from solver.model.errors import EnvironmentFaultError

            where = address if address not in (None, "local") else "a new local one"
            raise EnvironmentFaultError(f"--executor ray: Ray could not join a cluster at {where}: "
                                        f"{err}; start one (ray start --head), give --ray-address, or run this command "
                                        f"with --executor process", reason="io") from err
        # starting (or joining) the cluster is this round's wait for its workers, as a process pool's start is: the
        # report's pool_start, outside the parts' seconds and on_k_cores (a local cluster: 3-5 s a command)
        _POOL_START.append(time.perf_counter() - started)
    _driver_messages_to_stderr(ray)
    # no retry of Ray's own: it retried a dead worker's task silently, so the round that survived said nothing
    # (helper-201); copter runs a part again once, as for a process pool's worker, and says so
    try:
        return _submit_and_collect(ray, fn, tasks, kill, on_submitted, check)
    except OSError as err:  # the driver's connection to the cluster broke (EPIPE) while the parts ran (helper-240)
        if isinstance(err, ray.exceptions.RayTaskError):  # a part's own OSError (as_instanceof_cause): as raised
            raise
        from solver.model.errors import EnvironmentFaultError

        _quiet_driver_logs(ray)
        raise EnvironmentFaultError(
            f"--executor ray: the connection to the Ray cluster broke mid-round ({err.strerror or err}); nothing was "
            "stored: run the step again once the cluster is back, or with --executor process", reason="io") from err


def _submit_and_collect(ray, fn, tasks: list[tuple], kill: list[bool], on_submitted: Callable[[], None] | None,
                        check: Callable[[], None]) -> list:
    """The parts as Ray tasks on the joined cluster (:func:`_run_ray`): submitted, collected as they end, a part
    whose worker died run again once. Returns the parts' results in order."""
    remote = ray.remote(max_retries=0, num_cpus=1)(_call_ray)
    refs = [remote.remote(fn, t, kill[i]) for i, t in enumerate(tasks)]
    if on_submitted is not None:
        on_submitted()
    gcs = _gcs_of(ray)
    died = _worker_died_errors(ray)
    retried: set[int] = set()
    out: list = [None] * len(refs)
    pending = {ref: i for i, ref in enumerate(refs)}  # a task's ref -> its part
    while pending:
        for ref in sorted(_ray_ready(ray, list(pending), check, gcs), key=pending.__getitem__):
            i = pending.pop(ref)
            try:
                out[i] = ray.get(ref)  # ended: at once
                continue
            except ray.exceptions.RayError as err:
                if isinstance(err, died) and i not in retried:
                    retried.add(i)
                    _RETRIES.append(f"the Ray worker solving part {i} died ({type(err).__name__}) and the part was "
                                    "solved again in a new task; a worker that keeps dying points at memory (the OOM "
                                    "killer, Ray's memory monitor) or at something killing processes")
                    pending[remote.remote(fn, tasks[i], kill[i])] = i  # now, beside the parts still running
                    if on_submitted is not None:
                        on_submitted()
                    continue
                for r in pending:
                    ray.cancel(r, force=True)
                _quiet_driver_logs(ray)  # copter's error line is the command's last: Ray's later lines came after it
                if isinstance(err, ray.exceptions.RayTaskError):  # fn raised: its own exception, as inline/process
                    raise err.as_instanceof_cause() from None
                # a worker that died on the part's retry too, a lost node
                again = " twice" if i in retried else ""
                raise PartWorkerError(f"the Ray task solving part {i} failed{again}: {type(err).__name__}", i) from err
    return out


def _worker_died_errors(ray) -> tuple[type, ...]:
    """The Ray exceptions that mean the process (or node) running a task went away, not that the task raised: a part
    they end is run again once (:func:`_run_ray`)."""
    names = ("WorkerCrashedError", "OutOfMemoryError", "NodeDiedError", "ObjectLostError")  # ObjectLostError: OwnerDied
    return tuple(t for t in (getattr(ray.exceptions, n, None) for n in names) if isinstance(t, type))
