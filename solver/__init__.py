"""copter's library: the in-memory problem (differential representation), proximal-point LP core,
integerization heuristics, baselines and the round loop.

Import rule (checked by tests/test_rounds_readme.py): the numerical core - ``solver.model``,
``solver.differential``, ``solver.lp``, ``solver.integer``, ``solver.workloads``, ``solver.api`` and
``solver.highs_bridge`` - imports nothing from ``formats`` or ``copter_cli``; ``solver.rounds`` and
``solver.baselines`` may import ``formats`` (the checkpoint store, MPS/Parquet, report writers) but never
``copter_cli``, which only parses arguments, prints and maps errors to exit codes (see docs/DESIGN.md "Layout").
"""
