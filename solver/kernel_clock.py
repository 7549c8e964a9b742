"""Seconds a process spends on its numba kernels' first calls: loading each one from numba's cache (or, on an
install whose cache misses it, compiling it) the first time it is called with a signature.

A kernel loads lazily at its first call (``solver/kernel_cache.py``), so in a fresh ``copter step`` process
the round's solve timer used to include the loads of every kernel the round reached: on a 5-row LP the warm
rounds reported ``seconds.solve`` 0.11-0.16 s against 0.001 s for round 0 and 0.02 s through the worker
(user trial 18), a start-up cost of the process read as solver time. The round loop reads :func:`seconds`
before and after its solve and reports the difference as its own phase, ``seconds.kernels``
(``solver.rounds.commit.phase_seconds``).

:func:`install` wraps numba's ``Dispatcher._compile_for_args``, the path a call takes only when no compiled
overload matches its argument types (a kernel's first call per signature), for the functions of copter's
packages; every later call goes through numba's C dispatcher untouched. Nested first calls (a compilation
that types a callee) are counted once.
"""

from __future__ import annotations

import time

PACKAGES = ("solver.", "formats.")  #: module prefixes of the kernels timed (copter's own)
_TOTAL = [0.0]  # cumulative seconds of copter kernels' first calls in this process
_DEPTH = [0]  # nesting of timed first calls (the outermost one is counted)


def install() -> bool:
    """Time copter kernels' first calls from now on (idempotent). Returns False, timing nothing, when the
    installed numba lacks ``Dispatcher._compile_for_args`` (the kernels then load inside their callers'
    phases, as before)."""
    from numba.core import dispatcher

    current = getattr(dispatcher.Dispatcher, "_compile_for_args", None)
    if current is None:
        return False
    if getattr(current, "copter_timed", False):
        return True

    def _compile_for_args(self, *args, **kws):
        module = getattr(getattr(self, "py_func", None), "__module__", None) or ""
        if not module.startswith(PACKAGES) or _DEPTH[0]:
            return current(self, *args, **kws)
        _DEPTH[0] += 1
        t = time.perf_counter()
        try:
            return current(self, *args, **kws)
        finally:
            _TOTAL[0] += time.perf_counter() - t
            _DEPTH[0] -= 1

    _compile_for_args.copter_timed = True
    dispatcher.Dispatcher._compile_for_args = _compile_for_args
    return True


def seconds() -> float:
    """Cumulative wall seconds of copter kernels' first calls in this process since timing started
    (:func:`install`, done here on first use): read before and after a phase, the difference is what that
    phase spent loading (or compiling) kernels."""
    install()
    return _TOTAL[0]
