"""Load copter's numba kernels from the on-disk cache without setting up numba's compiler (issue #15).

numba's ``Cache.load_overload`` calls ``target_context.refresh()`` before it reads a cached kernel. The
refresh imports and registers every implementation numba can compile (``numba.np.linalg`` and
``arraymath``, which import ``scipy.linalg``; ``numba.typed``; the random and polynomial modules; the
third-party extensions), once per process: the largest single item of a ``copter step`` process (cProfile,
issue #15). Skipping it cut the 15 kernel loads of a Sia 128 round from 1.23 to 0.54 s at load average 7 and
from 1.74 to 0.71 s at 8 (medians of 8 interleaved processes each). Loading machine code needs none of it: a
cached kernel links against numba's runtime (NRT), numba's C helpers and the C math functions. numba
installs the helpers and the math functions when it creates its CPU target; the runtime is started here,
as the refresh does first (``rtsys.initialize``); a parallel kernel's cache entry starts the threading
layer itself (its ``reload_init``). A compilation is unaffected: numba's compiler
(``CompilerBase.__init__``) refreshes both contexts itself, so a kernel missing from the cache compiles as
before, and every load after that finds the contexts refreshed.

:func:`install` replaces ``numba.core.caching.Cache.load_overload`` by one that skips the refresh for
functions defined in copter's packages (:data:`PACKAGES`) and calls numba's own for every other function,
so a library user's kernels keep numba's behaviour. Every kernel module calls it on import. It installs
nothing for a numba version it was not checked against (:data:`CHECKED_NUMBA`): loads then run as numba
does them, only slower; ``tests/test_kernel_cache.py`` fails on such a version, to have it checked.
"""

from __future__ import annotations

PACKAGES = ("solver.", "formats.")  #: module prefixes of the kernels loaded without the refresh
CHECKED_NUMBA = ((0, 68),)  #: numba (major, minor) versions whose cache loader this was checked against


def install() -> bool:
    """Make copter's kernels load from numba's cache without numba's compiler set-up (idempotent).

    Returns:
        True when the lean loader is in place (now or from an earlier call); False when the installed
        numba is not one of :data:`CHECKED_NUMBA` or lacks the private methods used
        (``Cache._load_overload``, ``Cache._guard_against_spurious_io_errors``), and nothing was changed.
    """
    import numba
    from numba.core import caching

    current = caching.Cache.load_overload
    if getattr(current, "copter_lean", False):
        return True
    version = tuple(int(p) for p in numba.__version__.split(".")[:2] if p.isdigit())
    if version not in CHECKED_NUMBA or not all(
            hasattr(caching.Cache, a) for a in ("_load_overload", "_guard_against_spurious_io_errors")):
        return False

    def load_overload(self, sig, target_context):
        """numba's ``Cache.load_overload`` without ``target_context.refresh()`` for copter's kernels."""
        module = getattr(getattr(self, "_py_func", None), "__module__", None) or ""
        if not module.startswith(PACKAGES):
            return current(self, sig, target_context)
        from numba.core.runtime import rtsys

        rtsys.initialize(target_context)  # the runtime cached code links against (a no-op once started)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    load_overload.copter_lean = True
    load_overload.numba_load_overload = current
    caching.Cache.load_overload = load_overload
    return True
