"""Load copter's kernels from a cache ``copter prepare`` wrote beside a read-only install (a root-owned
``pip install``), for every user of the machine.

numba reads and writes its cache through the first of its locators that can *write* there: beside the module
(``__pycache__``), else ``~/.cache/numba``. So a service account (cron, a pipeline's runner) of a root install
that root had prepared compiled every kernel again into its own home: 1 min 37 s in its first ``copter step``
(helper-232, session 58), the mid-stream compile ``copter prepare`` exists to prevent; with no writable home
(``/nonexistent``, common for service accounts) it had no cache at all (exit 7 since session 58).

:func:`install` inserts a read-only locator right after numba's in-tree one (and one after numba's
``NUMBA_CACHE_DIR`` one): it takes a copter kernel whose cache folder (``__pycache__``, or its folder under
``$NUMBA_CACHE_DIR`` when that is set: wherever the prepare stamp lives) holds an index this user can read but
the user cannot write there, only while the prepare stamp (``solver.prepare.is_prepared``: the same Python,
numba, llvmlite, CPU and sources as when ``copter prepare`` ran) is current, so it only reads what the warm-up
compiled. A kernel compiled all the same (a signature the warm-up did not meet) runs from memory
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


def _locator_classes():
    """The two read-only locators: beside the modules (``__pycache__``, when ``NUMBA_CACHE_DIR`` is unset) and in
    ``NUMBA_CACHE_DIR`` (numba's layout there), each used only where the prepare stamp lives: a stamp read from
    ``NUMBA_CACHE_DIR`` says nothing of the ``__pycache__`` folders, which then hold no kernels (helper-234: every
    command of another user compiled in memory again, 10-30x slower, where exit 7 said what to do)."""
    from numba.core import caching, config

    class ReadOnly:
        """A copter kernel's prepared cache folder that this user can read but not write, while the prepare stamp
        is current; nothing is ever written through it."""

        stamp_in_cache_dir = False

        def ensure_cache_path(self):
            path = self.get_cache_path()
            try:
                has_index = any(name.endswith(".nbi") for name in os.listdir(path))
            except OSError:
                has_index = False
            if not has_index:
                raise OSError(f"{path}: no readable prepared cache")

        @classmethod
        def from_function(cls, py_func, py_file):
            if not (getattr(py_func, "__module__", None) or "").startswith(PACKAGES) or not os.path.exists(py_file):
                return None
            if bool(config.CACHE_DIR) != cls.stamp_in_cache_dir:  # the stamp speaks for the other place
                return None
            self = cls(py_func, py_file)
            if writable(self.get_cache_path()) or not _prepared():  # writable: numba's own locator took it
                return None
            try:
                self.ensure_cache_path()
            except OSError:
                return None
            return self

    class ReadOnlyPreparedLocator(ReadOnly, caching.InTreeCacheLocator):
        """``__pycache__`` beside the module, prepared by the install's owner."""

    class ReadOnlyPreparedCacheDirLocator(ReadOnly, caching.UserProvidedCacheLocator):
        """``$NUMBA_CACHE_DIR``, prepared there by its owner (a container image's shared cache)."""

        stamp_in_cache_dir = True

    return ReadOnlyPreparedCacheDirLocator, ReadOnlyPreparedLocator


def install() -> bool:
    """Insert the read-only locators after numba's ``UserProvidedCacheLocator`` and ``InTreeCacheLocator`` and skip
    numba's save for them (idempotent).

    Returns:
        True when in place; False when numba lacks what it relies on (``CacheImpl._locator_classes`` holding
        ``InTreeCacheLocator`` and ``UserProvidedCacheLocator``), and nothing was changed.
    """
    from numba.core import caching

    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if not isinstance(classes, list) or not {caching.InTreeCacheLocator, caching.UserProvidedCacheLocator} <= set(classes):
        return False
    if any(getattr(c, "copter_read_only", False) for c in classes):
        return True
    cache_dir, in_tree = _locator_classes()
    for cls in (cache_dir, in_tree):
        cls.copter_read_only = True
    current_save = caching.Cache.save_overload

    def save_overload(self, sig, data):
        """numba's ``Cache.save_overload``, except for a kernel found through a read-only locator."""
        if getattr(type(getattr(getattr(self, "_impl", None), "locator", None)), "copter_read_only", False):
            return None
        return current_save(self, sig, data)

    caching.Cache.save_overload = save_overload
    classes.insert(classes.index(caching.UserProvidedCacheLocator) + 1, cache_dir)
    classes.insert(classes.index(caching.InTreeCacheLocator) + 1, in_tree)
    return True
