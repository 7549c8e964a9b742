"""Preloaded by the multiprocessing forkserver (``set_forkserver_preload``, ``solver.partition.executor``): the
forkserver gets SIGKILL from the kernel when the process that started it dies
(:func:`solver.partition.lifeline.set_parent_death_signal`).

The import does that only inside ``multiprocessing.forkserver.main`` (the forkserver's preload): anything else
that imports every module (``copter worker start``'s server walks the packages, ``solver.prepare`` too) must
not get a parent-death signal, which would kill the server when the command that started it exits."""

import sys

from solver.partition.lifeline import set_parent_death_signal


def _in_forkserver_preload() -> bool:
    """True when this import runs within ``multiprocessing.forkserver.main``."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "main" and frame.f_globals.get("__name__") == "multiprocessing.forkserver":
            return True
        frame = frame.f_back
    return False


FORKSERVER = _in_forkserver_preload()  #: whether this process is the forkserver (its pdeathsig is then set)
if FORKSERVER:
    set_parent_death_signal()
