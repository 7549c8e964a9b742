"""The modules every round needs, imported at once with Python's cyclic garbage collector paused (issue #15).

A ``copter step`` process imports ~600 modules (numpy, numba with llvmlite, pyarrow, copter's own): about half
a million long-lived objects. While they are created the collector runs its generations over them again and
again (a full collection of that heap costs ~15 ms), and during the round every full collection scans them
once more. :func:`load`, called by ``copter init`` and ``copter step`` once the kernels are known to be
prepared, imports them with the collector off, then moves everything alive to the permanent generation
(``gc.freeze``: never scanned again; freed by reference counting as before) and turns the collector back on,
so the round's own garbage is collected as usual. Sia 128, one round, median of 12 alternated processes at
load average 1.4-1.9: 0.378 -> 0.353 s and 0.450 -> 0.413 s of CPU per step process, the same rounds.

Only in the console script's process and the worker's child (``copter_cli.entry.CONSOLE``), which end after
the command: a library user's process, or a test calling the app in-process, is left alone.
"""

from __future__ import annotations

import gc


def load() -> bool:
    """Import ``solver.lp.dispatch`` (numpy, numba, the LP kernels' modules) and ``solver.rounds.loop``
    (pyarrow with compute and Parquet, ``formats``, the round's modules) with the collector paused, then
    ``gc.freeze()`` and re-enable it (also when an import fails: the error propagates).

    Returns:
        True when this call paused and froze (console process, collector on); False when it did nothing (an
        in-process caller, or the collector was already off: then it stays off).
    """
    from copter_cli import entry

    if not entry.CONSOLE[0] or not gc.isenabled():
        return False
    gc.disable()
    try:
        import solver.lp.dispatch  # noqa: F401
        import solver.rounds.loop  # noqa: F401
    finally:
        gc.freeze()
        gc.enable()
    return True
