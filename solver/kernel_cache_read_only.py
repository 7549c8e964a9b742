"""Load copter's kernels from a cache ``copter prepare`` wrote beside a read-only install (a root-owned
``pip install``), for every user of the machine.

numba reads and writes its cache through the first of its locators that can *write* there: beside the module
(``__pycache__``), else ``~/.cache/numba``. So a service account (cron, a pipeline's runner) of a root install
that root had prepared compiled every kernel again into its own home: 1 min 37 s in its first ``copter step``
(helper-232, session 58), the mid-stream compile ``copter prepare`` exists to prevent; with no writable home
(``/nonexistent``, common for service accounts) it had no cache at all (exit 7 since session 58).

:func:`install` inserts :class:`ReadOnlyPreparedLocator` right after numba's in-tree locator: it takes a copter
kernel whose ``__pycache__`` this user cannot write, only while the prepare stamp (``solver.prepare.is_prepared``:
the same Python, numba, llvmlite, CPU and sources as when ``copter prepare`` ran) is current, so it only reads
what the warm-up compiled. A kernel compiled all the same (a signature the warm-up did not meet) runs from memory
and is not written (numba's save is skipped for this locator, where it would fail with a permission error).
A stale or missing stamp leaves numba's order as it was (the user's own cache).
"""

from __future__ import annotations

import functools
import os

PACKAGES = ("solver.", "formats.")  #: module prefixes of copter's kernels (as solver.kernel_cache)


@functools.lru_cache(maxsize=1)
def _prepared() -> bool:
    """Whether the prepare stamp is current (once per process: about 400 stat calls)."""
    from solver.prepare import is_prepared

    return is_prepared()


def writable(path: str) -> bool:
    """Whether this user can write in ``path`` (``os.access``; a test replaces it to play a read-only tree as
    root, for whom every folder is writable)."""
    return os.access(path, os.W_OK)


def _locator_class():
    from numba.core import caching

    class ReadOnlyPreparedLocator(caching.InTreeCacheLocator):
        """numba's in-tree locator for a copter kernel whose ``__pycache__`` exists, is readable and not
        writable for this user, while the prepare stamp is current; nothing is ever written through it."""

        def ensure_cache_path(self):
            path = self.get_cache_path()
            if not os.path.isdir(path) or not os.access(path, os.R_OK | os.X_OK):
                raise OSError(f"{path}: no readable prepared cache")

        @classmethod
        def from_function(cls, py_func, py_file):
            if not (getattr(py_func, "__module__", None) or "").startswith(PACKAGES) or not os.path.exists(py_file):
                return None
            self = cls(py_func, py_file)
            path = self.get_cache_path()
            if writable(path) or not _prepared():  # writable: numba's own locator took it
                return None
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    return ReadOnlyPreparedLocator


def install() -> bool:
    """Insert the read-only locator after numba's ``InTreeCacheLocator`` and skip numba's save for it
    (idempotent).

    Returns:
        True when in place; False when numba lacks what it relies on (``CacheImpl._locator_classes`` holding
        ``InTreeCacheLocator``, ``Cache.save_overload``), and nothing was changed.
    """
    from numba.core import caching

    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if not isinstance(classes, list) or caching.InTreeCacheLocator not in classes:
        return False
    if any(getattr(c, "copter_read_only", False) for c in classes):
        return True
    locator = _locator_class()
    locator.copter_read_only = True
    current_save = caching.Cache.save_overload

    def save_overload(self, sig, data):
        """numba's ``Cache.save_overload``, except for a kernel found through the read-only locator."""
        if getattr(getattr(self, "_impl", None), "locator", None).__class__ is locator:
            return None
        return current_save(self, sig, data)

    caching.Cache.save_overload = save_overload
    classes.insert(classes.index(caching.InTreeCacheLocator) + 1, locator)
    return True
