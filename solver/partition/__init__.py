"""Splitting allocation problems into parts by client: the POP baseline's split (``solver.baselines.pop``)
and copter's partitioned continual rounds (``copter init --partitions K``).

Modules:

- :mod:`solver.partition.clients`: which columns belong to which client, which rows are shared resources.
- :mod:`solver.partition.split`: the parts (client columns, owned rows, shared rows scaled by a share).
- :mod:`solver.partition.layout`: the client -> part assignment kept across rounds (routing new clients).
- :mod:`solver.partition.shares`: moving shares toward the parts with the highest shadow prices.
- :mod:`solver.partition.price_split`: shares of the capacity rows from the parts' demands (the probe's, or at prices).
- :mod:`solver.partition.bound`: a safe Lagrangian bound of the whole model from the parts' duals.
- :mod:`solver.partition.executor`: running the parts on local processes or Ray tasks.
- :mod:`solver.partition.lifeline`: part workers (and the forkserver) die with the process that started them.
- :mod:`solver.partition.progress_board`: the running parts' measures for the live progress line.
- :mod:`solver.partition.fallback`: a part infeasible under its shares, a MILP merge far from its bound or a small
  LP (:mod:`solver.partition.small`): the round solved whole.
- :mod:`solver.partition.store`: the per-part solver state in a generation folder.
- :mod:`solver.partition.round`: one partitioned round (split, solve in parallel, merge, check).
  Its pieces: :mod:`solver.partition.config` (``PartitionConfig``), :mod:`solver.partition.deadline` (the time
  budget), :mod:`solver.partition.merge` (the merge and its re-check), :mod:`solver.partition.background` (the
  threads that run beside the workers), :mod:`solver.partition.after_merge` (price re-split, RENS / re-solve,
  whole-solve tests).
- :mod:`solver.partition.phases`: where a round's own (serial) seconds go, for its report.

Nothing is imported here: ``solver.baselines.pop`` imports the split without the round machinery.
"""
