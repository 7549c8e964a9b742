"""``copter compare``: solve the current round with baselines (HiGHS cold, HiGHS hot-started, POP-k) and
print them next to copter's own result: status, objective, relative objective difference to the best,
relative primal residual (the LP engine's norm-wise OPTIMAL criterion), max absolute/relative row violation, integrality violation, seconds, and time ratio baseline / copter.

The work is in :func:`solver.rounds.compare`; this module parses options and prints.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from copter_cli.output import console, emit, run, say_warnings, table_console
from copter_cli.printable import printable
from copter_cli.solver_options import range_help
from copter_cli.state_option import STATE_HELP, refuse_absent_state
from solver.extras import needs

if TYPE_CHECKING:
    from rich.console import Console



def _fmt(v, spec: str = ".6g") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


#: compare's columns: (header, justify, priority); 0 = essential (never dropped), higher = dropped first when
#: the terminal is too narrow (copter_cli.table_fit)
COMPARE_COLUMNS = (("name", "left", 0), ("status", "left", 0), ("objective", "right", 0),
                   ("obj. diff rel", "right", 1), ("primal res. rel", "right", 3), ("row viol.", "right", 6),
                   ("row viol. rel", "right", 4), ("int. viol.", "right", 5), ("seconds", "right", 0),
                   ("x copter", "right", 2), ("POP s", "right", 8), ("POP x copter", "right", 7))


def print_table(res: dict, out: Console | None = None, terminal: bool | None = None) -> list[str]:
    """The comparison as a rich table on stderr (or ``out``), fitted to the terminal: no cell is cut; the
    least important columns are dropped with a note when the width cannot hold them. Returns the dropped
    headers."""
    from copter_cli.table_fit import Column, print_fitted

    cells = []
    # "row viol. rel" is the measure the flag holds each row to: for an LP point the per-row rule of an LP OPTIMAL
    # (relative to max(1, |bound|, the row's largest |coefficient|): worst_row_violation_rel), for a MILP point
    # the exact check's (max(1, |bound|)). User trial 37: the table showed an OPTIMAL LP row at 1.19e-02 by the
    # MILP divisor, above the 1e-2 an LP OPTIMAL promises, where the JSON's own measure said 8.2e-3.
    rel_key = "max_row_violation_rel" if res.get("feasibility_ruler") == "max_violation_rel" else "worst_row_violation_rel"
    for r in [res["copter"], *res["baselines"]]:
        status = str(r.get("status")) + (" (limit hit)" if r.get("hit_limit") and r["name"] != "copter" else "")
        status += " (violates tol)" if r.get("violates_tol") else ""
        cells.append([r["name"], status, _fmt(r.get("objective"), ".10g"), _fmt(r.get("objective_diff_rel"), ".2e"),
                      _fmt(r.get("primal_residual_rel"), ".2e"), _fmt(r.get("max_row_violation"), ".2e"),
                      _fmt(r.get(rel_key), ".2e"), _fmt(r.get("integrality_violation"), ".1e"),
                      _fmt(r.get("seconds"), ".3f"), _fmt(r.get("time_ratio"), ".2f"),
                      _fmt(r.get("pop_seconds"), ".3f"), _fmt(r.get("pop_time_ratio"), ".2f")])
    # the POP columns only when a row has POP's own measure (a run without a POP baseline showed two columns of "-")
    pop = any(r.get("pop_seconds") is not None for r in [res["copter"], *res["baselines"]])
    columns = COMPARE_COLUMNS if pop else COMPARE_COLUMNS[:-2]
    cells = [row[:len(columns)] for row in cells]
    dropped = print_fitted([Column(*c) for c in columns], cells, console=out, terminal=terminal,
                           min_width=180, title=f"round {res['round']}: {res['n_rows']} rows x {res['n_cols']} "
                                                f"cols, {res['nnz']} nonzeros")
    if out is None:
        out = table_console(180)  # the notes under the table
    for r in res["baselines"]:
        if r.get("message"):
            out.print(f"  {r['name']}: {printable(r['message'])}", markup=False)
    for r in [res["copter"], *res["baselines"]]:
        line = ranking_note(r, res.get("common_feasibility_tol"))
        if line:
            out.print(line, markup=False)
    cop, tol = res["copter"], res.get("feasibility_tol", math.nan)
    if cop.get("dual_residual_rel") is not None:
        out.print(f"copter's relative KKT measures (its OPTIMAL criteria, norm-wise): primal residual "
                  f"{_fmt(cop.get('primal_residual_rel'), '.2e')}, dual residual {_fmt(cop['dual_residual_rel'], '.2e')}, "
                  f"duality gap {_fmt(cop.get('duality_gap_rel'), '.2e')}")
    rel_ruler = "max(1, |bound|)"
    if res.get("feasibility_ruler") == "max_violation_rel":
        rule = (f"(violates tol) = an integer point with a row or bound violated by more than {tol:.1e} relative "
                "to max(1, |bound|), or an integer off by more")
    else:
        from solver.lp.termination import row_tolerance

        rel_ruler = "max(1, |bound|, the row's largest |coefficient|), JSON worst_row_violation_rel"

        rule = (f"(violates tol) = primal res. rel (||Ax - proj(Ax)||_2 / (1 + ||b||_2), the LP engine's OPTIMAL "
                f"criterion) above {tol:.1e}, a column bound missed by more relative to max(1, |bound|), or a "
                f"row off by more than {row_tolerance(tol):.1e} relative to max(1, |bound|, its largest "
                f"|coefficient|) (the per-row tolerance "
                "of an LP OPTIMAL: 100 x tol, at most sqrt(tol))")
    out.print("objective and obj. diff rel only for OPTIMAL/FEASIBLE rows: diff = sense * (objective - best) / "
              "|best| (relative at every scale; a best that is 0 within feasibility tol x sum |c_j| (1 + |x_j|) at the best's or the row's point, the smaller: 0 within that or 1e-6, else +-1; 0 = best, > 0 = worse); row viol. = max absolute row violation (rel: divided by "
              f"{rel_ruler}); {rule}: never the best; seconds = wall time on this machine (copter: apply + "
              "solve + integerize of this round; POP: the whole call); x copter = seconds / copter's seconds"
              + ("; POP s = setup + slowest part (POP's own measure: one core per part)." if pop else "."))
    return dropped


def ranking_note(r: dict, common: float | None) -> str:
    """The note under the table for a row ranked below a point feasible at the common tolerance (its lead
    may be bought by its row violations: ``solver.rounds.comparison``), naming the row furthest off; '' for
    any other row."""
    if not r.get("ranked_below_feasible"):
        return ""
    buys, allowance = r.get("violation_buys"), r.get("lead_allowance")
    bought = (f"by copter's duals the violations explain a lead of up to {allowance:.4g} ({buys:.4g} priced rows "
              f"+ {allowance - buys:.2g} duality gap)" if buys is not None and math.isfinite(allowance)
              else "no duals price the violations")
    if r.get("feasible_best_proven") and not (allowance is not None and r["lead_over_feasible"] <= allowance):
        bought = (f"{bought}, less than the lead, but {r['feasible_best']}'s point is the LP's proven optimum, which "
                  "no feasible point beats: the lead is the violations'")
    # an OPTIMAL keeps every row within the per-row tolerance; a FEASIBLE (a partitioned round's merged point) within
    # its own test (solver.partition.merge), which is not that contract
    within = ("within its OPTIMAL's per-row tolerance" if r.get("status") == "OPTIMAL"
              else f"its status {r.get('status')}")
    return (f"{r['name']}: objective better than {r['feasible_best']}'s by {r['lead_over_feasible']:.4g} while "
            f"row {printable(str(r.get('worst_row')))!r} is off by {_fmt(r.get('worst_row_violation_rel'), '.2e')} "
            f"relative ({within}, beyond the common {_fmt(common, '.0e')} HiGHS's points meet); {bought}, so "
            f"{r['feasible_best']}'s feasible point ranks best.")


#: compare's command-line parameters named otherwise in solver.rounds.compare (CLI name -> library name)
_LIBRARY_NAME = {"k": "ks", "executor": "pop_executor"}
#: the command-line parameters solver.rounds.compare_options checks (CLI names)
_CHECKED = ("k", "seed", "pop_client_regex", "pop_shared_rows_regex", "pop_workers", "executor", "ray_address",
            "pop_scaling", "highs_solver", "threads")


def ignored_options(given: set[str], baselines: list[str], executor: str | None = None,
                    pop_workers: int | None = None) -> str | None:
    """The usage error's text when an option given on the command line (``given``: parameter names) is read by
    none of ``baselines``, or ``--ray-address`` by POP's parts on ``executor`` (``--executor``) or
    ``--pop-workers 0``, else None (:func:`solver.rounds.compare_options.ignored_options`, which the library's
    ``compare`` applies too). ``compare --baseline highs --k 16`` ran HiGHS alone and exited 0, the option
    dropped."""
    from solver.rounds.compare_options import ignored_options as check

    return check({_LIBRARY_NAME.get(name, name) for name in given}, baselines, executor, pop_workers)


def register(app: typer.Typer) -> None:
    """Add ``compare`` to the app."""

    @app.command()
    def compare(
        ctx: typer.Context,
        baseline: list[str] = typer.Option(["highs"], "--baseline", "-b", metavar="NAME",
                                           help="highs | highs-simplex | highs-ipm | highs-pdlp | highs-warm | pop | pop-K (repeatable; solver/baselines/registry.py)."),
        k: list[int] = typer.Option([4], "--k", metavar="K", help="POP parts (repeatable: --k 4 --k 16)." + range_help(1)),
        highs_solver: str = typer.Option("choose", "--highs-solver",
                                         help="HiGHS solver: choose | simplex | ipm | pdlp | mip "
                                              "(a problem with integers always uses MIP)."),
        time_limit: float = typer.Option(600.0, "--time-limit", help="Time limit per baseline (POP: per part), s."
                                                                 + range_help(0, low_open=True)),
        threads: int | None = typer.Option(None, "--threads", help="HiGHS threads (default: HiGHS's choice)." + range_help(1, 1024)),
        seed: int | None = typer.Option(None, "--seed", help="POP split seed (default: the round number)." + range_help(0)),
        pop_client_regex: str | None = typer.Option(
            None, "--pop-client-regex",
            help="Regex for the client part of variable names (named group 'client' or the whole match); "
                 "default: the one init --client-regex stored, else the text before the first '/'. "
                 "Unmatched variables are global."),
        pop_shared_rows_regex: str | None = typer.Option(
            None, "--pop-shared-rows-regex",
            help="Regex of row names that are shared resources even if one client uses them (rows "
                 "touching several clients are always shared)."),
        pop_workers: int | None = typer.Option(None, "--pop-workers", help="POP worker processes (default: one per part, at most the CPU count; 0: in this process)."
                                                + range_help(0)),
        executor: str | None = typer.Option(
            None, "--executor",
            help="Where POP's parts run, the executor of partitioned rounds: process (local worker processes), "
                 f"ray (Ray tasks; {needs('ray', 'Ray')}), inline (one after another in this "
                 "process). Default: the state's --executor when it is partitioned, else process."),
        ray_address: str | None = typer.Option(
            None, "--ray-address",
            help="Ray cluster to join with --executor ray (default: the state's, else $RAY_ADDRESS, else a "
                 "local cluster). Refused (exit 2, nothing run) when POP's parts run on another executor, or when it is not "
                 "host:port, ray://host:port, auto or local."),
        pop_scaling: str = typer.Option(
            "auto", "--pop-scaling",
            help="Share of a shared row per POP part: auto (1/k for one-sided rows, the part's share of the "
                 "row's coefficient mass for two-sided band/equality rows) or uniform (1/k everywhere)."),
        feasibility_tol: float | None = typer.Option(
            None, "--feasibility-tol",
            help="Flag (violates_tol, never ranked best) an LP point whose relative primal residual "
                 "||Ax - proj(Ax)||_2 / (1 + ||b||_2) (the engine's OPTIMAL criterion) or column bound violation "
                 "exceeds this, or a row's violation relative to max(1, |bound|, its largest |coefficient|) exceeds "
                 "100x this, at most its "
                 "square root (the per-row tolerance of an LP OPTIMAL), a MILP point whose max row/bound violation relative to max(1, |bound|) or "
                 "integrality does (default: the state's --tol, set by init; 1e-4 unless init was given another)."
                 + range_help(0, math.inf, low_open=True, high_open=True)),
        state: Path | None = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print the comparison as JSON on stdout."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    ) -> None:
        """Run baselines on the current round, next to copter's result.

        Baselines: HiGHS cold, HiGHS hot-started from the previous round, POP-k."""

        def body():
            from solver.baselines import registry

            registry.expand([b for b in baseline if b != "pop"], [])  # a mistyped name first (-b pops --k 2)
            given = {name for name in _CHECKED
                     if getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"}
            ignored = ignored_options(given, baseline, executor, pop_workers)
            if ignored:
                from solver.model.errors import UsageError

                raise UsageError(ignored)
            if ray_address is not None:
                from solver.partition.executor import ray_address_target

                # its form before anything runs or is prepared (the library's compare_options.refuse_ignored too)
                ray_address_target(ray_address)
            from copter_cli.cmd_prepare import ensure_prepared
            from solver import rounds

            st = state if state is not None else rounds.default_state_dir()
            refuse_absent_state(st)
            ensure_prepared()  # as init: kernels compiled (progress line on stderr) first, none mid-comparison
            with console.status("running baselines") as status:
                res = rounds.compare(st, baseline, ks=k if "k" in given else None, highs_solver=highs_solver, time_limit_seconds=time_limit,
                                     threads=threads, seed=seed, pop_client_regex=pop_client_regex,
                                     pop_shared_rows_regex=pop_shared_rows_regex, pop_workers=pop_workers,
                                     pop_scaling=pop_scaling, feasibility_tol=feasibility_tol,
                                     pop_executor=executor, ray_address=ray_address,
                                     progress=lambda b: status.update(f"running {b}"))
            # warnings (CURRENT unusable, round log not written) in every mode
            return emit(res, json_out, lambda r: (print_table(r), say_warnings(r)))

        run(json_out, debug, body)
