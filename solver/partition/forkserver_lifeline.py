"""Imported by the multiprocessing forkserver only (``set_forkserver_preload``, ``solver.partition.executor``):
the forkserver gets SIGKILL from the kernel when the process that started it dies
(:func:`solver.partition.lifeline.set_parent_death_signal`). Import it nowhere else: the import has that effect
on the importing process."""

from solver.partition.lifeline import set_parent_death_signal

set_parent_death_signal()
