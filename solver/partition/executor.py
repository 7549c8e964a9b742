"""Running the parts of a partitioned round: local processes (default), Ray tasks, or this process.

Executors (``copter init/step --executor``):

- ``process``: a ``concurrent.futures.ProcessPoolExecutor`` of ``min(k, cpu_count)`` workers, kept for the
  life of this process (a library caller or ``step_many`` pays the workers' start-up once). Start method
  ``forkserver`` where available (never plain ``fork`` after HiGHS or numba threads exist), else ``spawn``.
- ``ray``: one Ray task per part (``@ray.remote(max_retries=1)``). ``ray.init()`` joins the cluster at
  ``ray_address`` or ``$RAY_ADDRESS`` when given, else starts a local one (seconds of start-up; a
  long-running ``ray start --head`` avoids paying them every round). Ray is an optional extra
  (``pip install 'copter[ray]'``); without it this executor is a UsageError (exit code 2) naming the extra.
- ``inline``: the parts one after another in this process (tests, debugging, a machine with one core).

A worker that dies (killed, out of memory) is retried once on a fresh pool (Ray: its own task retry); if it
dies again :class:`PartWorkerError` is raised and the caller fails the round without storing anything.

Fault injection (tests): ``COPTER_FAULT_KILL_PART=<p>`` makes the worker solving part p kill itself with
SIGKILL (every attempt), as a crashed machine would.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from solver.model.errors import UsageError

EXECUTORS = ("process", "ray", "inline")
FAULT_ENV = "COPTER_FAULT_KILL_PART"
_POOLS: dict[int, ProcessPoolExecutor] = {}


class PartWorkerError(RuntimeError):
    """The worker solving a part died (twice); the round cannot be completed."""

    def __init__(self, message: str, part: int | None = None):
        super().__init__(message)
        self.part = part


def solve_part(index: int, problem, settings, warm, kill: bool = False) -> dict:
    """Worker: solve one part (``solver.api.solve_problem``) and return ``{"index", "result", "seconds",
    "max_rss_mb"}`` (seconds: wall time of the solve in the worker; max_rss_mb: the worker's peak RSS)."""
    if kill:
        os.kill(os.getpid(), signal.SIGKILL)
    import resource

    from solver.api import solve_problem

    t = time.perf_counter()
    result = solve_problem(problem, settings, warm)
    seconds = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes
    return {"index": index, "result": result, "seconds": seconds, "max_rss_mb": rss}


def kill_flags(k: int) -> list[bool]:
    """Which parts' workers kill themselves (``COPTER_FAULT_KILL_PART``)."""
    raw = os.environ.get(FAULT_ENV, "").strip()
    return [raw != "" and raw == str(p) for p in range(k)]


def check_executor(name: str) -> None:
    """Raise UsageError for an unknown executor name, or for ``ray`` when Ray is not importable."""
    if name not in EXECUTORS:
        raise UsageError(f"unknown executor {name!r}; choose {', '.join(EXECUTORS)}")
    if name == "ray":
        _import_ray()


def _import_ray():
    try:
        import ray
    except ImportError as err:
        raise UsageError("--executor ray needs Ray, which is not installed: pip install 'copter[ray]' "
                         f"(the optional extra 'ray'; {err})") from err
    return ray


def _pool(workers: int, fresh: bool = False) -> ProcessPoolExecutor:
    pool = _POOLS.get(workers)
    if pool is not None and not fresh:
        return pool
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
    _POOLS[workers] = pool
    return pool


def shutdown() -> None:
    """Shut down the kept process pools (the interpreter does it at exit too)."""
    for pool in _POOLS.values():
        pool.shutdown(wait=False, cancel_futures=True)
    _POOLS.clear()


def run_parts(tasks: list[tuple], executor: str = "process", workers: int | None = None,
              ray_address: str | None = None) -> list[dict]:
    """Solve the parts: ``tasks`` is a list of ``(problem, settings, warm_state)``; returns the
    :func:`solve_part` dicts in task order.

    Raises:
        UsageError: unknown executor, or ``ray`` without Ray installed.
        PartWorkerError: a worker died on its retry too.
    """
    check_executor(executor)
    kill = kill_flags(len(tasks))
    if executor == "inline":
        return [solve_part(i, *t, kill=kill[i]) for i, t in enumerate(tasks)]
    if executor == "ray":
        return _run_ray(tasks, kill, ray_address)
    n = max(1, min(len(tasks), workers or os.cpu_count() or 1))
    for attempt in range(2):
        pool = _pool(n)
        try:  # a pool broken earlier (a worker killed by SIGINT, say) already fails at submit
            futures = [pool.submit(solve_part, i, *t, kill=kill[i]) for i, t in enumerate(tasks)]
            return [f.result() for f in futures]
        except BrokenProcessPool as err:
            dead = next((i for i, f in enumerate(futures) if kill[i]), None)
            broken = _POOLS.pop(n, None)
            if broken is not None:
                broken.shutdown(wait=False, cancel_futures=True)
            if attempt == 1:
                which = "a part" if dead is None else f"part {dead}"
                raise PartWorkerError(f"the worker process solving {which} died twice ({err})", dead) from err
    raise AssertionError("unreachable")


def _run_ray(tasks: list[tuple], kill: list[bool], address: str | None) -> list[dict]:
    ray = _import_ray()
    if not ray.is_initialized():
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        address = address or os.environ.get("RAY_ADDRESS") or None
        kw = {} if address else {"num_cpus": os.cpu_count() or 1}
        ray.init(address=address, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False, **kw)
    remote = ray.remote(max_retries=1, num_cpus=1)(solve_part)
    refs = [remote.remote(i, *t, kill=kill[i]) for i, t in enumerate(tasks)]
    out = []
    for i, ref in enumerate(refs):
        try:
            out.append(ray.get(ref))
        except ray.exceptions.RayError as err:  # WorkerCrashedError after its retry, a failed task, a lost node
            for r in refs[i + 1:]:
                ray.cancel(r, force=True)
            raise PartWorkerError(f"the Ray task solving part {i} failed: {type(err).__name__}", i) from err
    return out
