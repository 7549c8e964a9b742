"""The solver options shared by ``copter solve``, ``init`` and ``step``: one definition, one validation.

Every option defaults to None, meaning "not given": ``solve`` and ``init`` then use the default of
:class:`solver.model.settings.Settings` (stated in each help text), ``step`` the settings ``init`` stored in the
state's ``config.json``. ``init`` stores the settings it was given there (``--verbose`` excepted: it is
per invocation); ``step`` applies its options to that one round only.
"""

from __future__ import annotations

import dataclasses
import math

import typer

from solver.model.errors import UsageError
from solver.model.settings import Settings

FALLBACKS = ("highs", "none")
PRESOLVE = ("auto", "on", "off")

TOL = typer.Option(None, "--tol", help="Relative KKT tolerance: primal/dual residual and gap (default 1e-4).")
TIME_LIMIT = typer.Option(None, "--time-limit",
                          help="Time limit of the round's solve (MILP: relaxation + integerization), seconds "
                               "(default: none).")
ITERATION_LIMIT = typer.Option(None, "--iteration-limit", help="Maximum PDHG iterations (default 1,000,000).")
INTEGER_FALLBACK = typer.Option(None, "--integer-fallback",
                                help="MILP: when the integerization heuristics find no integer point, 'highs' runs "
                                     "HiGHS MIP (time-limited) or 'none' reports none (default highs).")
INTEGER_FALLBACK_SECONDS = typer.Option(None, "--integer-fallback-seconds",
                                        help="MILP: time limit of the HiGHS MIP fallback, seconds (default 60).")
INTEGER_FALLBACK_GAP = typer.Option(None, "--integer-fallback-gap",
                                    help="MILP: also run the HiGHS fallback, seeded with the heuristic point, when "
                                         "its relative gap to the LP bound exceeds this (default: never).")
SUBMIP_SECONDS = typer.Option(None, "--submip-seconds",
                              help="MILP: time for RENS, HiGHS on the sub-MIP of the LP point's roundings, when "
                                   "rounding finds no point or one whose gap is above --submip-gap, seconds "
                                   "(default 30; 0 = off).")
SUBMIP_GAP = typer.Option(None, "--submip-gap",
                          help="MILP: also run RENS on a rounded point whose relative gap to the LP bound is above "
                               "this, for at most as long as the relaxation took (default 0.01; inf = never).")
RELAXATION_TOL = typer.Option(None, "--relaxation-tol",
                              help="MILP: tolerance of the first LP relaxation stage, tightened warm towards "
                                   "--tol only while the rounded point's gap needs it (default: --tol).")
RELAXATION_ROUND_ITERATIONS = typer.Option(
    None, "--relaxation-round-iterations",
    help="MILP: also round the relaxation iterate after this many PDHG iterations, doubling (64, 128, ...), "
         "and stop at the first point within --mip-gap of the bound (default 0: only at each stage's tolerance).")
MIP_GAP = typer.Option(None, "--mip-gap",
                       help="MILP: relative gap to the LP bound under which a round is OPTIMAL rather than FEASIBLE "
                            "(default 1e-4).")
PRESOLVE_OPT = typer.Option(None, "--presolve",
                            help="HiGHS presolve around PDHG: auto (cold solves only), on, off (default auto).")
VERBOSE = typer.Option(False, "--verbose", help="Print the solver's iteration log on stderr.")


def _positive(option: str, v: float | None) -> None:
    if v is not None and not (v > 0):  # also refuses nan
        raise UsageError(f"{option} must be positive, got {v}")


def given(**options) -> bool:
    """True when any of the solver options was given (not None / not False)."""
    return any(v is not None and v is not False for v in options.values())


def settings_with(base: Settings | None = None, *, tol: float | None = None, time_limit: float | None = None,
                  iteration_limit: int | None = None, integer_fallback: str | None = None,
                  integer_fallback_seconds: float | None = None, integer_fallback_gap: float | None = None,
                  relaxation_tol: float | None = None, relaxation_round_iterations: int | None = None,
                  mip_gap: float | None = None, presolve: str | None = None, submip_seconds: float | None = None,
                  submip_gap: float | None = None, verbose: bool = False) -> Settings:
    """A copy of ``base`` (default ``Settings()``) with the options that were given.

    Raises:
        UsageError: a non-positive tolerance or time limit, a negative iteration count or gap, an unknown
            ``--integer-fallback`` or ``--presolve`` value; the message names the option.
    """
    _positive("--tol", tol)
    if tol is not None and not tol < 1.0:  # a relative tolerance of 1 or more accepts any point
        raise UsageError(f"--tol must be below 1 (a relative KKT tolerance), got {tol}")
    _positive("--time-limit", time_limit)
    _positive("--integer-fallback-seconds", integer_fallback_seconds)
    _positive("--relaxation-tol", relaxation_tol)
    if relaxation_tol is not None and not relaxation_tol < 1.0:
        raise UsageError(f"--relaxation-tol must be below 1 (a relative KKT tolerance), got {relaxation_tol}")
    if iteration_limit is not None and iteration_limit < 0:
        raise UsageError(f"--iteration-limit must be >= 0, got {iteration_limit}")
    if relaxation_round_iterations is not None and relaxation_round_iterations < 0:
        raise UsageError(f"--relaxation-round-iterations must be >= 0, got {relaxation_round_iterations}")
    if mip_gap is not None and (math.isnan(mip_gap) or mip_gap < 0):
        raise UsageError(f"--mip-gap must be >= 0, got {mip_gap}")
    if integer_fallback_gap is not None and (math.isnan(integer_fallback_gap) or integer_fallback_gap < 0):
        raise UsageError(f"--integer-fallback-gap must be >= 0, got {integer_fallback_gap}")
    if submip_seconds is not None and (math.isnan(submip_seconds) or submip_seconds < 0):
        raise UsageError(f"--submip-seconds must be >= 0, got {submip_seconds}")
    if submip_gap is not None and (math.isnan(submip_gap) or submip_gap < 0):
        raise UsageError(f"--submip-gap must be >= 0, got {submip_gap}")
    if integer_fallback is not None and integer_fallback not in FALLBACKS:
        raise UsageError(f"--integer-fallback must be 'highs' or 'none', got {integer_fallback!r}")
    if presolve is not None and presolve not in PRESOLVE:
        raise UsageError(f"--presolve must be one of {', '.join(PRESOLVE)}, got {presolve!r}")
    changes = {"tol": tol, "time_limit_seconds": time_limit, "iteration_limit": iteration_limit,
               "integer_fallback": integer_fallback, "integer_fallback_seconds": integer_fallback_seconds,
               "integer_fallback_gap": integer_fallback_gap, "relaxation_tol": relaxation_tol,
               "relaxation_round_iterations": relaxation_round_iterations, "mip_gap_tol": mip_gap,
               "presolve": presolve, "integer_submip_seconds": submip_seconds,
               "integer_submip_gap": submip_gap}
    known = {f.name for f in dataclasses.fields(Settings)}
    changes = {k: v for k, v in changes.items() if v is not None and k in known}
    out = dataclasses.replace(base or Settings(), **changes)
    if verbose:
        out.verbose = True
    return out
