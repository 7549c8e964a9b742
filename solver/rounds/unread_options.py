"""Options of ``copter init`` / ``copter step`` that the round would not read, said rather than dropped.

* :func:`refuse_executor_on_monolithic`: ``step --executor`` / ``--ray-address`` on a monolithic state (its
  init had no ``--partitions K``; only init makes a state partitioned, so no later round reads them either):
  a usage error (exit 2), nothing applied, as init refuses a partition option without ``--partitions``.
* :func:`refuse_ray_address_off_ray`: ``step --ray-address`` on a partitioned state whose round runs on another
  executor than ``ray`` (the stored one, or ``--executor process|inline``): a usage error (exit 2), nothing
  applied. Unlike init's ``--ray-address``, which is stored and read by any later ``step --executor ray``, a
  step's applies to that command's rounds only, none of which would read it.
* :func:`milp_only_warning`: MILP-only solver options (``--mip-gap``, ``--integer-fallback*``,
  ``--submip-*``, ``--relaxation-*``) given for a round whose model has no integer column: a warning in the
  round's report, as ``copter solve`` gives one. Not an error: a delta may add integer columns later (init's
  options are stored and then apply), and one cron line may serve rounds of both kinds.
"""

from __future__ import annotations

from solver.model.errors import UsageError


def _is_partitioned(partition) -> bool:
    """Whether config.json's ``partition`` entry makes partitioned rounds (k > 1). A damaged entry counts as
    partitioned: :func:`solver.rounds.partitioned.config_of` then names what is wrong with it."""
    if not partition:
        return False
    try:
        return int(partition.get("k", 1)) > 1
    except (AttributeError, TypeError, ValueError):
        return True


def refuse_executor_on_monolithic(partition, executor: str | None, ray_address: str | None, state) -> None:
    """Raise UsageError (exit 2) when ``executor`` or ``ray_address`` is given for a state whose rounds are
    monolithic (``partition``: config.json's entry; none, or k = 1).

    Args:
        partition: the state's config.json ``partition`` entry, or None.
        executor, ray_address: ``copter step``'s ``--executor`` / ``--ray-address`` (None: not given).
        state: the state folder, named in the message.
    Raises:
        UsageError: naming the option(s) and the state; the round is not run (nothing applied).
    """
    given = [f for f, v in (("--executor", executor), ("--ray-address", ray_address)) if v is not None]
    if not given or _is_partitioned(partition):
        return
    one = len(given) == 1
    raise UsageError(f"{', '.join(given)} appl{'ies' if one else 'y'} to partitioned rounds only, and {state} is a "
                     f"monolithic state (its init had no --partitions K of 2 or more): its rounds run in this process and "
                     f"would ignore {'it' if one else 'them'}; leave {'it' if one else 'them'} out (only "
                     f"`copter init --partitions K` makes partitioned rounds); nothing was applied")


def refuse_ray_address_off_ray(partition, executor: str | None, ray_address: str | None, state) -> None:
    """Raise UsageError (exit 2) when ``ray_address`` is given for a partitioned state's round whose executor is
    not ``ray``: ``executor`` when given, else the stored one (config.json's ``partition.executor``, default
    ``process``). A monolithic state is :func:`refuse_executor_on_monolithic`'s; a damaged stored executor is
    left to :func:`solver.rounds.partitioned.config_of`, which names it.

    Args:
        partition: the state's config.json ``partition`` entry, or None.
        executor, ray_address: ``copter step``'s ``--executor`` / ``--ray-address`` (None: not given).
        state: the state folder, named in the message.
    Raises:
        UsageError: naming ``--ray-address``, the executor in use and where it comes from; nothing applied.
    """
    if ray_address is None or not _is_partitioned(partition) or not isinstance(partition, dict):
        return
    used = executor if executor is not None else partition.get("executor", "process")
    if used not in ("process", "inline"):  # ray, or a damaged stored value (config_of names it)
        return
    source = (f"--executor {used}" if executor is not None else
              f"the executor {state} stored (partition.executor {used!r}, chosen or defaulted at copter init)")
    raise UsageError(f"--ray-address applies to --executor ray only, and this step's rounds run on {source}, which "
                     f"would ignore it; give --executor ray with it to run this step's rounds on that cluster, or "
                     f"leave it out (an address for later Ray rounds is init's --ray-address, stored); nothing was "
                     f"applied")


def milp_only_warning(flags, is_mip: bool, model: str, stored: bool | None) -> list[str]:
    """The warning (a list of at most one) that MILP-only options were given for a model without integer
    columns.

    Args:
        flags: the MILP-only flags given on the command line (``copter_cli.solver_options.GivenOptions.milp_only``).
        is_mip: the round's model has an integer column (then no warning).
        model: what the model is, for the message (``"the base base.parquet"``, ``"round 3's model"``).
        stored: the options are stored for later rounds (init), apply to this round only (step: False), or
            None for ``copter solve`` (one solve, no rounds).
    Returns:
        ``[]``, or one sentence saying they have no effect on this round (solve) and whether a later round reads
        them.
    """
    flags = list(flags or ())
    if is_mip or not flags:
        return []
    one = len(flags) == 1
    it = "it" if one else "they"
    head = (f"{', '.join(flags)} appl{'ies' if one else 'y'} to MILPs only and {model} has no integer column: "
            f"{it} ha{'s' if one else 've'} no effect on this {'solve' if stored is None else 'round'}")
    if stored is None:
        return [head]
    later = (f"init stored {'it' if one else 'them'} in the state's settings: {it} appl{'ies' if one else 'y'} to "
             "later rounds once a delta adds integer columns" if stored else
             "a step's solver options apply to the rounds of that command only and are not stored")
    return [f"{head}; {later}"]
