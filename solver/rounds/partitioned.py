"""The round loop's side of partitioned rounds (``copter init --partitions K``, issue #18).

``solver.rounds.loop`` calls :func:`solve_base` (round 0) and :func:`apply_and_solve` (a step) instead of
the monolithic solve when config.json holds ``"partition": {"k": K > 1, ...}``; both return the whole-model
result plus a ``write_extra(folder)`` hook that ``solver.rounds.commit.save_round`` calls inside the
temporary generation folder (the per-part state, ``solver.partition.store``), and the report's
``partitions`` section. Everything else (the generation's files, the report, the lock, atomic commit,
failed-round records, no-op re-apply, rollback) is the monolithic round's.
"""

from __future__ import annotations

import time
from dataclasses import replace

from formats.checkpoint import Generation
from solver.model.delta import Delta
from solver.model.errors import EnvironmentFaultError
from solver.model.problem import Problem
from solver.model.settings import Settings


def config_of(partition: dict | None, executor: str | None = None, ray_address: str | None = None,
              file=None):
    """The PartitionConfig of config.json's ``partition`` entry with per-invocation overrides, or None for
    monolithic rounds (no entry, or k = 1). ``file``: the config.json it was read from (a step), whose
    unknown keys are refused; None: init's options, about to be stored.

    Raises:
        UsageError: a bad executor (or ``ray`` without Ray installed), k < 1, passes < 1; init's ``ray_address``
            (``file`` None) not of a Ray address's form whatever the executor: it is stored for a later
            ``step --executor ray``, which would be the first to find it malformed.
        StateError: ``file`` given and ``partition`` holds a key PartitionConfig does not have (a typo would
            be ignored and the round split with the default), naming the file, the key and the known keys.
    """
    if not partition:
        return None
    from dataclasses import fields

    from solver.partition.round import PartitionConfig

    if file is not None:
        from formats.state_config import unknown_key_error

        known = [f.name for f in fields(PartitionConfig)]
        for key in partition:
            if key not in known:
                raise unknown_key_error(key, "partition", known, file)
        _check_stored(partition, file)
    cfg = PartitionConfig.from_json(partition)
    if file is not None and "inline_below_nnz" not in partition:  # a state from before the key: init's default
        from solver.partition.small import INLINE_BELOW_NNZ

        cfg.inline_below_nnz = INLINE_BELOW_NNZ
    if executor is not None:
        cfg.executor = executor
        cfg.inline_below_nnz = 0  # the command chose where the parts run: there, whatever the model's size
    elif file is not None and cfg.k > 1:  # the state's executor: its error names the state, not an option
        from solver.partition.executor import check_stored_executor

        check_stored_executor(cfg.executor, file)
    if ray_address is not None:
        cfg.ray_address = ray_address
    cfg.check()
    if file is None and cfg.k > 1 and cfg.ray_address is not None:  # cfg.check() did for executor ray
        from solver.partition.executor import ray_address_target

        ray_address_target(cfg.ray_address)
    _check_regexes(cfg)
    return cfg if cfg.k > 1 else None


_STORED_EXECUTORS = ("process", "ray", "inline")
"""What config.json's ``partition.executor`` may hold (``solver.partition.executor.EXECUTORS``, not imported:
checking a stored value needs no multiprocessing); an unknown one was a usage error (exit 2) naming no file."""

_STORED_MIN = {"k": 1, "passes": 1, "update_every": 0, "whole_below_nnz": 0, "inline_below_nnz": 0, "workers": 1}
"""Smallest value config.json's ``partition`` may hold per integer key (what init's options accept)."""


def _check_stored(partition: dict, file) -> None:
    """Refuse a ``partition`` value of config.json that is not of its field's JSON type (``"k": "2"``,
    ``null`` for a field that is never None, a float for an integer) or is out of the range init's options
    accept, a regex that does not compile, or a ``ray_address`` not of a Ray address's form (checked whatever
    the executor, as init checks it: it was blamed on ``--ray-address``, exit 2, at the first round on Ray;
    unread otherwise): a StateError (exit 3) naming config.json and the key, never
    an internal error nor an option the user did not give.

    Raises:
        StateError: ``entity`` ``partition.<key>``.
    """
    import re
    from dataclasses import fields

    from formats.checkpoint import StateError
    from solver.partition.round import MAX_PASSES, PartitionConfig

    kinds = {"int": int, "str": str, "bool": bool, "None": type(None)}
    for f in fields(PartitionConfig):
        if f.name not in partition:
            continue
        v = partition[f.name]
        allowed = [kinds[t.strip()] for t in str(f.type).split("|")]
        why = None
        if not isinstance(v, tuple(allowed)) or (isinstance(v, bool) and bool not in allowed):
            why = f"must be {' or '.join('null' if t is type(None) else t.__name__ for t in allowed)}"
        elif isinstance(v, int) and not isinstance(v, bool) and f.name in _STORED_MIN:
            # init takes any --share-update-every / --whole-below-nnz: only the counts of parts and workers
            # (a C long) and the passes are bounded
            top = {"passes": MAX_PASSES, "k": 2**62, "workers": 2**62}.get(f.name, v)
            if v < _STORED_MIN[f.name]:
                why = f"must be at least {_STORED_MIN[f.name]}"
            elif v > top:
                why = f"must be at most {top}"
        elif f.name == "executor" and isinstance(v, str) and v not in _STORED_EXECUTORS:
            why = f"must be one of {', '.join(_STORED_EXECUTORS)}"
        elif isinstance(v, str) and f.name.endswith("_regex"):
            try:
                re.compile(v)
            except re.error as err:
                why = f"does not compile ({err})"
        elif f.name == "ray_address" and isinstance(v, str) and not _ray_address_form_ok(v):
            why = "must be host:port, ray://host:port, auto, local or null (the forms init's --ray-address takes)"
        if why is not None:
            raise StateError(f"config.json is damaged: partition.{f.name} {why}, got {v!r} (restore the file "
                             "from a backup, or init a new state)", file=str(file), entity=f"partition.{f.name}")


def _ray_address_form_ok(address: str) -> bool:
    """Whether ``address`` is of a Ray address's form (:func:`solver.partition.executor.ray_address_target`,
    which init's ``--ray-address`` passes since e1755e0; a state made before, or a hand-edited config.json, may
    hold another)."""
    from solver.model.errors import UsageError
    from solver.partition.executor import ray_address_target

    try:
        ray_address_target(address)
    except UsageError:
        return False
    return True


def check_stored_for_pop(partition, file) -> None:
    """:func:`_check_stored` on the ``partition`` values a POP baseline reads (``executor``, ``ray_address``:
    ``copter compare`` without ``--executor`` / ``--ray-address`` takes the state's), so a damaged one is exit 3
    naming config.json and the key before any row runs, not an error naming an option the user did not give
    (exit 2) once POP's row starts.

    Raises:
        StateError: as :func:`_check_stored`.
    """
    if isinstance(partition, dict):
        _check_stored({key: partition[key] for key in ("executor", "ray_address") if key in partition}, file)


def _check_regexes(cfg) -> None:
    """Refuse a partition regex that does not compile, naming init's own option (the grouping code, shared
    with POP, names ``--pop-client-regex``), before anything is written."""
    from solver.partition.clients import _compile_check

    for option, pattern in (("--client-regex", cfg.client_regex), ("--shared-rows-regex", cfg.shared_rows_regex)):
        if pattern is not None:
            _compile_check(pattern, option)


def _hook(data):
    if data is None:
        return None

    def write_extra(folder) -> int:
        from solver.partition.store import save

        return save(folder, data)

    return write_extra


def solve_base(problem: Problem, settings: Settings, cfg) -> tuple:
    """Round 0 partitioned (a fresh random client split, POP's initial shares); returns
    (result, write_extra, report_extra)."""
    from solver.partition.round import solve_round

    out = solve_round(problem, settings, cfg)
    return out.result, _hook(out.data), {"partitions": out.report}


def apply_and_solve(gen: Generation, d: Delta, settings: Settings, cfg, seconds: dict, warnings: list[str],
                    stored_address: bool = False) -> tuple:
    """Apply ``d`` to the generation's whole problem, carry its per-part state over, solve the parts; fill
    the apply/solve/integerize seconds; return (problem, ApplyInfo, result, write_extra, report_extra).
    ``stored_address``: ``cfg.ray_address`` is the state's own (config.json), not given to this step.

    A generation without a usable partition folder (damaged, or the state was monolithic) starts the parts
    cold from a fresh split, with a warning.
    """
    from solver import kernel_clock
    from solver.differential import apply_delta
    from solver.partition import store as pstore
    from solver.partition.round import solve_round
    from solver.rounds.commit import solve_phases

    t = time.perf_counter()
    problem, info = apply_delta(gen.problem, d)
    warnings.extend(info.warnings)
    prev = None
    try:
        prev = pstore.load(gen.path)
    except (OSError, ValueError, KeyError) as err:
        warnings.append(f"cold start of the parts: round {gen.round}'s partition state is unreadable ({err})")
    except Exception as err:  # pyarrow.ArrowException and friends: same treatment
        warnings.append(f"cold start of the parts: round {gen.round}'s partition state is unreadable ({err})")
    if prev is None and not any(w.startswith("cold start of the parts") for w in warnings):
        warnings.append(f"cold start of the parts: round {gen.round} stored no partition state")
    from solver.rounds.loop import ray_status

    ray = ray_status(gen)  # its iterates (the whole model's and the parts') ran along a ray: no warm start
    parts_warm = prev is not None and any(ps.state is not None for ps in prev.parts)
    if ray and (parts_warm or gen.state is not None):
        # the parts' iterates as monolithic rounds treat theirs; the parts keep their clients and shares (helper-219:
        # the warning named only a whole solve, which may not run, while the parts started from the failed round's)
        if parts_warm:
            prev = replace(prev, parts=[replace(ps, state=None) for ps in prev.parts])
        warnings.append(f"cold start of the parts and of any whole solve: the previous round ended {ray} (stored with "
                        "--accept-failed), so its iterates were driven along an infeasibility ray and are no start "
                        "for this round")
    whole_warm = None if ray else _whole_warm(gen, info, problem, cfg)
    seconds["apply"] = time.perf_counter() - t
    seconds["apply_linear"] = info.seconds_linear
    k0, t = kernel_clock.seconds(), time.perf_counter()
    try:
        out = solve_round(problem, settings, cfg, prev, info, (gen.problem.n_cols, gen.problem.n_rows), whole_warm,
                          gen.problem)
    except EnvironmentFaultError as err:
        if not stored_address:
            raise
        raise _stored_address_named(err, cfg, gen.path.parent / "config.json") from err
    warnings.extend(out.report.get("worker_retries") or [])
    warnings.extend(_outcome_warnings(prev, out))
    solve_phases(seconds, out.result, time.perf_counter() - t, k0)  # kernels: this process's first calls
    return problem, info, out.result, _hook(out.data), {"partitions": out.report}


def _outcome_warnings(prev, out) -> list[str]:
    """The round's warnings about how its parts divided the model, from the previous round's PartitionData
    (``prev``, None when there was none) and this round's outcome: variables without a client past half of the model
    (:func:`solver.partition.clients.global_growth_warning`), a MILP's whole solve winning for the second round
    running (:func:`solver.partition.fallback.not_paying_warning`)."""
    from solver.partition.clients import global_growth_warning
    from solver.partition.fallback import not_paying_warning

    data = out.data
    if data is None:
        return []
    said = [None if data.col_client is None else global_growth_warning(prev and prev.col_client, data.col_client),
            not_paying_warning(out.report, bool(prev and prev.whole_kept), data.whole_kept)]
    return [w for w in said if w]


def _stored_address_named(err, cfg, config_file):
    """``err`` (an environment fault of a round on the state's own Ray address, ``partition.ray_address`` in
    config.json, given to ``init``) with the way out that the probe offers (give another --ray-address or
    $RAY_ADDRESS) said for that address: $RAY_ADDRESS does not override a stored one (helper-185, session 46).
    ``err`` as is when it is not the probe's."""
    from solver.partition.executor import ANOTHER_ADDRESS

    if cfg.ray_address is None or cfg.executor != "ray" or ANOTHER_ADDRESS not in str(err):
        return err
    said = (f"give this step --ray-address (the address is the state's, partition.ray_address in {config_file}, "
            "stored by init, which $RAY_ADDRESS does not override)")
    return EnvironmentFaultError(str(err).replace(ANOTHER_ADDRESS, said), reason=getattr(err, "reason", "io"))


def _whole_warm(gen: Generation, info, problem: Problem, cfg):
    """The previous round's whole-model state mapped onto ``problem`` (``solver.differential.map_state``), the warm
    start of an LP round's whole solve (``solver.partition.fallback``): mapped now for a small LP
    (``cfg.whole_below_nnz``), whose round always solves whole; for a larger LP a function that maps it when called
    (a merge far from its bound, ``solver.partition.after_merge.lp_far``, is rare, and the mapping is vectors the
    size of the model); None for a MILP, or without a usable state (the whole solve is then cold)."""
    from solver.differential import map_state
    from solver.model.errors import StateError
    from solver.partition.small import small_lp

    if problem.is_mip or gen.state is None:
        return None

    def mapped():
        try:
            return map_state(gen.state, info, problem)
        except StateError:
            return None

    return mapped() if small_lp(problem, cfg.whole_below_nnz) else mapped
