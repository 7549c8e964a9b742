"""The round loop as a library: what ``copter init/step/show/history/rollback/export/compare`` (and the demo
and the benchmarks) call. The CLI only parses options, prints and maps errors and reports to exit codes
(``copter_cli.exit_codes``); everything here raises typed errors (``solver.model.errors``) and returns
report dicts.

A state directory (``formats.checkpoint``) holds one generation per kept round (problem, solver state,
solution/duals/changes Parquet, report.json) and ``CURRENT``. A round (:func:`step`) = load the current
generation -> read + validate the delta -> apply it (``solver.differential.apply_delta``) -> map the
previous iterate onto the new index space (``solver.differential.map_state``) -> solve warm
(``solver.api.solve_problem``) -> save a new generation -> advance ``CURRENT``. Every phase is timed
(seconds) into the report.

Failure behaviour:

* bad input (unreadable delta, validation error, wrong ``copter.base_round``): a typed error is raised
  and the state directory is not touched;
* the same delta file again (same SHA-256 as a kept generation up to the current round): a no-op, the
  report says so (``"no_op": true``); checked before ``copter.base_round``;
* a round whose status is not OPTIMAL/FEASIBLE: without ``accept_failed`` its report is stored under
  ``failed/round-N-<utc>/report.json`` (:func:`show` and :func:`history` list it) and ``CURRENT`` stays
  where it was (``"accepted": false``); with ``accept_failed`` the round is saved and made current;
* :func:`init` stores round 0 only when it is OPTIMAL/FEASIBLE (or ``accept_failed``): a failed round 0
  leaves its report under ``failed/`` and no config.json, CURRENT or generation, so ``init`` can run again;
* KeyboardInterrupt (SIGINT) before ``CURRENT`` is replaced: the temporary generation is removed and the
  interrupt propagates (state unchanged); once the replacement has started it is finished
  (``formats.undo`` marks these regions for the CLI's handler, which ends the process at once elsewhere);
* a write the machine refuses (permission, read-only file system, disk full, unusable ``.lock``):
  ``EnvironmentFaultError`` naming the path; before ``CURRENT`` names the round it is undone completely;
* a symbolic link where copter reads or writes inside the state: ``StateError`` naming it, nothing done.

Example (the README's "Driving rounds from Python")::

    from solver import rounds

    report = rounds.init("base.mps", state_dir="state")
    for path in ["delta_0001.parquet", "delta_0002.parquet"]:
        report = rounds.step(path, state_dir="state")
        print(report["round"], report["status"], report["objective"], report["seconds"]["solve"])
"""

from __future__ import annotations

import math

from formats.checkpoint import DEFAULT_KEEP
from solver.model.settings import Settings
from solver.rounds import inspect as _inspect
from solver.rounds.config import default_state_dir, settings_from_json, settings_to_json
from solver.rounds.inspect import require_round

# show/history/rollback read JSON and CURRENT only: the modules that import numpy, pyarrow, scipy, numba or
# HiGHS (the loop, hashing, outputs) are imported on first use, so those commands start fast (issue #15)
_LAZY = {"delta_sha256": "solver.rounds.hashing", "file_sha256": "solver.rounds.hashing",
         "OUTPUT_FILES": "solver.rounds.outputs", "check_out_dir": "solver.rounds.outputs",
         "check_output_file": "solver.rounds.outputs"}


def __getattr__(name: str):
    """The re-exported names of :data:`_LAZY`, imported from their module on first use."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["DEFAULT_KEEP", "OUTPUT_FILES", "check_out_dir", "check_output_file", "compare", "default_state_dir",
           "delta_sha256", "export", "file_sha256", "history", "init", "require_round", "rollback",
           "settings_from_json", "settings_to_json", "show", "show_solution", "step", "step_many"]


def init(base, state_dir=None, settings: Settings | None = None, keep: int = DEFAULT_KEEP, out_dir=None,
         wait: float = 0.0, partition: dict | None = None, accept_failed: bool = False,
         milp_options: tuple[str, ...] = ()) -> dict:
    """Create a state directory from a base problem and solve round 0 (cold).

    Args:
        base: path of an MPS/Parquet problem file, or a ``solver.model.problem.Problem``.
        state_dir: state directory (default :func:`default_state_dir`: ``$COPTER_STATE`` or
            ``./copter-state``); created if missing (and removed again if ``init`` fails before storing).
        settings: solver settings, stored in config.json and used by later steps (defaults when None).
        keep: number of generations to keep (>= 1).
        out_dir: optional folder that receives copies of the round's outputs and report.json.
        wait: seconds to wait for another writer's lock (0: StateBusyError at once).
        partition: partitioned rounds (issue #18): ``{"k": K, "client_regex", "shared_rows_regex",
            "executor", "ray_address", "seed", "passes", "workers"}`` (``solver.partition.config.PartitionConfig``),
            stored in config.json; None or k = 1: monolithic rounds. The report then has ``partitions``.
        accept_failed: store round 0 and make it current even when its status is not OPTIMAL/FEASIBLE
            (a later delta can then fix the model).
        milp_options: the MILP-only flags given on the command line (``--mip-gap``, ...): when the base has no
            integer column, round 0's report warns that they have no effect on it yet (they are stored and
            apply once a delta adds integer columns; ``solver.rounds.unread_options``).
    Returns:
        The round-0 report (also written to ``gen-000000/report.json``; ``formats.reports.round_report``):
        round, status, objective, iterations, warm_started, seconds {load, apply, solve, integerize, save,
        total}, solution_path/duals_path/changes_path (relative to the state directory), base_sha256,
        accepted, current_round (0; only in this answer, not in report.json), ... A round 0 whose status is not
        OPTIMAL/FEASIBLE is not stored (unless
        ``accept_failed``): the report has ``"accepted": false``, ``"current_round": null`` and
        ``failure_record`` (its ``failed/round-000000-...`` folder); the folder stays uninitialised.
    Raises:
        UsageError: keep < 1, or ``out_dir`` is unusable (checked first, see :func:`check_out_dir`).
        StateError: the directory is already initialised. StateBusyError: another writer holds the lock.
        FormatError, ValidationError (InputError subclasses): the base file is unreadable or invalid.
        EnvironmentFaultError: the machine refused a write (see :func:`step`).
    """
    from solver.rounds import loop as _loop

    return _loop.init(base, state_dir, settings, keep, out_dir, wait, partition, accept_failed, milp_options)


def step(delta, state_dir=None, settings: Settings | None = None, force: bool = False,
         accept_failed: bool = False, out_dir=None, wait: float = 0.0, executor: str | None = None,
         ray_address: str | None = None, milp_options: tuple[str, ...] = ()) -> dict:
    """Apply one delta to the current round, solve warm, and store the next round.

    Args:
        delta: path of a delta Parquet file, or a ``solver.model.delta.Delta``.
        state_dir: state directory (default :func:`default_state_dir`).
        settings: solver settings (default: those stored by :func:`init`).
        force: apply even when the delta's ``copter.base_round`` is not the current round.
        accept_failed: store and advance to a round whose status is not OPTIMAL/FEASIBLE.
        out_dir: optional folder that receives copies of the round's outputs and report.json (each file
            renamed over its name: a symbolic link there is replaced, never written through).
        wait: seconds to wait for another writer's lock (0: StateBusyError at once).
        executor, ray_address: for a partitioned state, override the stored executor (``process``,
            ``ray``, ``inline``) and Ray address for this round (``solver.partition.executor``); on a
            monolithic state, which never reads them, either one is a UsageError, and so is ``ray_address``
            when the round's executor (``executor``, else the stored one) is not ``ray``.
        milp_options: the MILP-only flags given on the command line (``--mip-gap``, ...): when the round's
            model (after the delta) has no integer column, its report warns that they have no effect.
    Returns:
        The round report (as for :func:`init`, current_round the new round, plus delta_sha256, previous_round,
        changed_variables,
        seconds["apply_linear"], warnings, abandoned_rounds when a rolled-back branch was moved aside);
        for a re-applied delta ``{"round": K, "no_op": true, "current_round": N, "status", "objective",
        "delta_sha256", "message"}`` (K: the kept round it produced; no warnings, no timings); ``"accepted": false``
        plus ``"failure_record"`` and ``"current_round"`` for a failed round left out of the state.
    Raises:
        StateError: not initialised / damaged, or config.json (the options init stored) missing or damaged.
        StateBusyError: another writer holds the lock.
        FormatError, ValidationError: the delta is unreadable or invalid (state untouched).
        RoundMismatchError: ``copter.base_round`` differs from the current round and not ``force``.
        UsageError: ``executor`` or ``ray_address`` given for a monolithic state, or ``ray_address`` for a
            round whose executor is not ``ray`` (nothing applied), or
            ``out_dir`` is unusable (checked before anything else; nothing changes). A copy to
            ``out_dir`` that fails after the round is stored does not raise: the report gets a warning and
            ``out_error`` (``solver.rounds.outputs.copy_out``; the CLI exits 7 or 2 for it).
        EnvironmentFaultError: the machine refused a write (permission, read-only file system, disk full,
            unusable ``.lock``): the message names the path and says whether the round was stored; before
            CURRENT names it, everything the round wrote is undone (the state is unchanged).
    """
    from solver.rounds import loop as _loop

    return _loop.step(delta, state_dir, settings, force, accept_failed, out_dir, wait, executor, ray_address,
                      milp_options=milp_options)


def step_many(deltas, state_dir=None, settings: Settings | None = None, force: bool = False,
              accept_failed: bool = False, out_dir=None, wait: float = 0.0, executor: str | None = None,
              ray_address: str | None = None, on_round=None, milp_options: tuple[str, ...] = ()) -> list[dict]:
    """Apply several deltas in order (catching up after downtime), each its own round stored atomically
    by :func:`step`, under one hold of the writer lock (no other writer interleaves).

    Args:
        deltas: paths of delta Parquet files (or ``Delta`` objects), oldest first; each delta's
            ``copter.base_round`` must be the round the previous one produced (or ``force``).
        state_dir, settings, force, accept_failed, out_dir, wait, executor, ray_address, milp_options: as for
            :func:`step` (``out_dir`` receives
            each round's outputs in turn: at the end it holds those of the last round).
        on_round: optional ``callable(report)`` called with each delta's report (as returned below) as soon
            as its round is done: a caller interrupted later still has them (``copter step`` prints them
            with the interrupted error).
    Returns:
        One report per delta applied, in order, each with ``delta`` (its path) and ``delta_index``
        (1-based). The batch stops after a round that failed and was not accepted (``"accepted": false``)
        or whose ``--out`` copy failed (``out_error``): that report is the last one. A re-applied delta is
        a no-op report and the batch goes on (running the same batch twice is harmless).
    Raises:
        Whatever :func:`step` raises for the first delta that fails; the rounds before it stay stored. The
        error's message ends with ``[delta K of N: PATH; round(s) ... stored before it]`` and its
        ``context`` holds delta, delta_index, deltas and stored_rounds (printed in the CLI's JSON error);
        its ``reports`` attribute holds the reports of the deltas before it (as this function would have
        returned them) and ``current_round`` the state's current round after them (None when unknown).
    """
    from solver.rounds import loop as _loop

    return _loop.step_many(deltas, state_dir, settings, force, accept_failed, out_dir, wait, executor, ray_address,
                           on_round, milp_options)


def show(state_dir=None, round_: int | None = None, warnings: list[str] | None = None) -> dict:
    """The current round's report (its ``report.json``, whose ``warnings`` are those of the step that made
    the round), plus ``last_failed`` (the newest failed-round report) when a later round failed and was not
    accepted. With ``round_``: that kept round's report (no ``last_failed``).

    The warning when CURRENT was unusable (a fact about the state now, not about the round) goes into
    ``warnings`` when a list is given (as :func:`history`), else it is appended to the report's ``warnings``.

    Raises:
        StateError: not initialised, or the round is damaged. UsageError: ``round_`` is not kept.
    """
    return _inspect.show(state_dir, round_, warnings)


def show_solution(state_dir=None, round_: int | None = None, *, top: int = 10, entries: int = 3,
                  changes: bool = False, client_regex: str | None = None, zero_tol: float | None = None) -> dict:
    """The current (or a kept) round's allocation at a glance: its nonzero variables grouped by client and,
    with ``changes``, the biggest moves since the previous round (``copter show --solution``).

    Args:
        round_: a kept round instead of the current one.
        top: number of clients (largest ``|sum|`` first) and of moves returned.
        entries: per client, the number of its largest variables returned.
        changes: also read the round's changes.parquet (moves and added/removed counts).
        client_regex: regex override of the client part of a name (as ``copter compare --pop-client-regex``;
            default: the state's stored ``partition.client_regex`` (``init --client-regex``), else the text
            before the first ``/``; names without one form one group, ``client`` None).
        zero_tol: a variable is nonzero when ``|value| > zero_tol``; None = the state's ``tol``
            (config.json, default 1e-4), the accuracy the rounds are solved to.
    Returns:
        {"round", "status", "objective", "n_variables", "n_nonzero", "sum", "n_clients", "zero_tol",
        "client_regex", "clients": [{"client", "nonzero", "sum", "share", "top": [{"name", "value"}]}],
        "clients_omitted"} (:func:`solver.rounds.allocation.allocation`), with ``changes`` also
        "changes": {"previous_round", "vars_added", "vars_removed", "vars_moved", "cons_added",
        "cons_removed", "moves": [{"name", "kind", "old", "new", "delta"}], "moves_omitted"}
        (:func:`solver.rounds.allocation.moves`); "warnings" when CURRENT was unusable (the round shown is the
        newest complete one) or the client regex matched no nonzero variable's name.
    Raises:
        UsageError: ``round_`` is not kept, ``top`` < 1, ``entries`` < 0, or a bad ``client_regex``.
        StateError: not initialised, or the round's report or output files are unreadable, or a file's
            ``copter.round`` metadata names another round.
    """
    return _inspect.show_solution(state_dir, round_, top=top, entries=entries, changes=changes,
                                  client_regex=client_regex, zero_tol=zero_tol)


def history(state_dir=None, last: int | None = None, warnings: list[str] | None = None) -> list[dict]:
    """One row per round of the live branch from the round log (``STATE/log/``, which outlives pruning),
    oldest first: stored rounds and failed rounds, completed from the generations and failed records on
    disk (a state written before the log existed: the kept generations on CURRENT's lineage and the
    failed-round records). See :mod:`solver.rounds.log_history` and :mod:`solver.rounds.log`.

    Args:
        last: only the newest ``last`` rows.
        warnings: a list that gets the warning when CURRENT was unusable (names a damaged or missing
            generation, or is missing or unreadable) and the rows are those of the newest complete generation.
    Returns:
        Rows with keys round, kind (``"generation"`` or ``"failed"``), current (bool), kept (its generation
        is still on disk), status, objective, lp_bound, gap_rel (these three None unless OPTIMAL/FEASIBLE), iterations,
        warm_started, engine, seconds {load, apply, solve, integerize, save, total}, changed_variables,
        vars_added/vars_removed/cons_added/cons_removed, n_cols/n_rows/nnz, delta_sha256, accepted,
        generation_id, parent_id, record_id, message, recovered, utc (ISO 8601), and compare
        ({method: {status, objective, objective_diff_rel, seconds, time_ratio, pop_seconds, hit_limit}}
        of the newest ``copter compare`` of that round, {} when none ran).
    Raises:
        StateError: not initialised.
    """
    from solver.rounds.log_history import history as _history

    return _history(state_dir, last, warnings)


def rollback(state_dir=None, to: int | None = None, wait: float = 0.0) -> dict:
    """Make an earlier kept round current (default: the newest kept round before the current one).

    Later generations stay on disk (``to`` can move forward to them again) until the next :func:`step`
    starts a new branch: it moves them into ``abandoned/`` before its round becomes visible. Only rounds on
    CURRENT's lineage can be chosen.

    Returns:
        {"round": new current, "previous_round": old current, "later_rounds": kept rounds after the new
        current one, "message": ...}, plus ``warnings`` when CURRENT was unusable (``previous_round`` is then
        the newest complete generation). A ``to`` that CURRENT already names writes nothing: the message
        says it is already current and ``"unchanged": true``.
    Raises:
        UsageError: the requested round is not kept (the message lists the kept rounds), or there is no
        earlier round. StateError: not initialised or the round is damaged. StateBusyError: another writer
        holds the lock (after ``wait`` seconds). EnvironmentFaultError: CURRENT cannot be replaced
        (read-only file system, permission, disk full; CURRENT unchanged) or ``.lock`` is unusable.
    """
    return _inspect.rollback(state_dir, to, wait)


def export(state_dir=None, output=None, round_: int | None = None) -> dict:
    """Write the current (or a kept) round's problem as MPS or Parquet (by the output's extension). A Parquet
    file records the round in its schema metadata ``copter.round`` (``formats.exported_round``), which
    ``copter diff`` reads as the delta's ``copter.base_round``; an MPS file records none. Either file names the
    model ``<base name>-round-N`` (the MPS ``NAME`` line, Parquet's ``copter.name``; the state folder's name when
    the base has none).

    Args:
        output: file to write (default ``round-NNNNNN.mps`` in the working directory).
    Returns:
        {"round", "output" (the file written), "n_cols", "n_rows", "nnz"}, plus ``warnings`` when CURRENT was
        unusable and the newest complete generation was exported instead.
    Raises:
        UsageError: ``round_`` is not kept (see :func:`require_round`), or ``output`` is a folder, in a
        missing folder or not writable. StateError: not initialised, or the round is damaged.
    """
    return _inspect.export(state_dir, output, round_)


def compare(state_dir, baselines: list[str], *, ks: list[int] | None = None, highs_solver: str = "choose",
            time_limit_seconds: float = math.inf, threads: int | None = None, seed: int | None = None,
            pop_client_regex: str | None = None, pop_shared_rows_regex: str | None = None,
            pop_workers: int | None = None, pop_scaling: str = "auto", feasibility_tol: float | None = None,
            pop_executor: str | None = None, ray_address: str | None = None, progress=None) -> dict:
    """Run baselines (``solver.baselines.registry``) on the current round of ``state_dir``.

    Args:
        state_dir: an initialised state directory (None: :func:`default_state_dir`).
        baselines: registry names (``highs``, ``highs-simplex|ipm|pdlp``, ``highs-warm``, ``pop`` or
            ``pop-<k>``), order kept, duplicates removed; ``pop`` gives one ``pop-<k>`` row per k of ``ks``.
        ks: POP part counts (default [4]).
        highs_solver: HiGHS solver of ``highs`` and of POP's parts (``choose|simplex|ipm|pdlp|mip``);
            ``highs-warm`` always uses simplex (a basis hot start needs it; MIP for integer problems).
        time_limit_seconds: per-baseline time limit in seconds (POP: per part).
        threads: HiGHS threads for highs/highs-warm (None = HiGHS default).
        seed: POP split seed (default: the round number).
        pop_client_regex, pop_shared_rows_regex: POP grouping overrides (default: the state's stored
            ``partition`` regexes, ``init --client-regex`` / ``--shared-rows-regex``, else POP's defaults).
        pop_workers: POP worker processes (default: CPU count; 0: parts in this process).
        pop_scaling: POP's share of shared rows per part, ``auto`` or ``uniform`` (solver.baselines.pop).
        pop_executor: where POP's parts run, ``process``, ``ray`` or ``inline`` (``solver.partition.executor``;
            None = the state's partition executor when it is partitioned, else ``process``; ``pop_workers=0``
            means ``inline``). POP rows record it as ``executor``.
        ray_address: Ray cluster for ``ray`` (None: the state's, else ``$RAY_ADDRESS``, else a local one).
        feasibility_tol: the tolerance of ``violates_tol``: an LP point's relative primal residual (the engine's
            OPTIMAL criterion) and column bounds, a MILP point's max row/bound violation relative to max(1, |bound|)
            and integrality; None = the state's solve tolerance ``tol`` (config.json). A row that violates it is
            never the best.
        progress: optional callable(str) told which baseline starts.
    Returns:
        ``{"round", "n_cols", "n_rows", "nnz", "feasibility_tol", "feasibility_ruler", "common_feasibility_tol",
        "copter": {...},
        "baselines": [{...}, ...]}``; every row has name, status, objective, objective_diff_rel, seconds,
        time_ratio, max_row_violation, max_row_violation_rel, max_bound_violation, integrality_violation,
        max_violation_rel, primal_residual_rel, dual_residual_rel, duality_gap_rel, violates_tol,
        worst_row, worst_row_violation_rel, feasible_at_common_tol, violation_buys, ranked_below_feasible
        (with lead_over_feasible, lead_allowance, feasible_best when true), hit_limit, message
        (:mod:`solver.rounds.comparison` defines them; POP rows add the POP time fields); ``warnings`` when
        CURRENT was unusable (the newest complete generation was compared), the round log was not written
        (another writer holds the lock, or the state is read-only) or highs-warm's basis was not kept.
    Raises:
        UsageError: unknown baseline or solver, a POP-only parameter (``ks``, ``seed``, ``pop_*``,
            ``ray_address``) without a POP baseline, ``ks`` beside ``pop-<k>`` alone, ``highs_solver`` without
            ``highs`` or POP, ``threads`` without a ``highs*`` baseline (any of them given a value other than its
            default; :mod:`solver.rounds.compare_options`, the CLI's check), ``ray_address`` when POP's parts
            do not run on Ray (``pop_executor`` process/inline, ``pop_workers=0``, or none given and the
            state's executor is not ``ray``) or is not of a Ray address's form (``host:port``, ``ray://host:port``,
            ``auto``, ``local``; checked before any row runs), k < 1, a time limit <= 0, threads < 1, pop_workers < 0, bad
            regex, a feasibility_tol that is not positive and finite, an unknown pop_executor or ``ray``
            without Ray installed (naming the ``ray`` extra). StateError: not initialised/damaged,
            or the current round has no solved report. PartWorkerError: a POP part's worker died twice
            (exit code 5); nothing is logged.
    """
    from solver.rounds.comparison import run_compare  # imports HiGHS: only when comparing

    return run_compare(state_dir, baselines, ks=ks, highs_solver=highs_solver,
                       time_limit_seconds=time_limit_seconds, threads=threads, seed=seed,
                       pop_client_regex=pop_client_regex, pop_shared_rows_regex=pop_shared_rows_regex,
                       pop_workers=pop_workers, pop_scaling=pop_scaling, feasibility_tol=feasibility_tol,
                       pop_executor=pop_executor, ray_address=ray_address, progress=progress)
