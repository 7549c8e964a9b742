"""The integer pipeline's settings, read and checked once per ``solve_milp`` call (UsageError names the field)."""

from __future__ import annotations

import math

from solver.model.errors import UsageError
from solver.model.settings import Settings


def fallback_mode(settings: Settings) -> str:
    """``settings.integer_fallback`` lower-cased: ``"highs"`` or ``"none"``.

    Raises:
        UsageError: any other value.
    """
    mode = str(getattr(settings, "integer_fallback", "highs")).lower()
    if mode not in ("highs", "none"):
        raise UsageError(f"integer_fallback must be 'highs' or 'none', got {mode!r}")
    return mode


def submip_seconds(settings: Settings) -> float:
    """``settings.integer_submip_seconds`` as a float >= 0 (0 = RENS off).

    Raises:
        UsageError: a negative or NaN value.
    """
    v = float(getattr(settings, "integer_submip_seconds", 0.0) or 0.0)
    if math.isnan(v) or v < 0:
        raise UsageError(f"integer_submip_seconds must be >= 0 seconds, got {v!r}")
    return v


def ascent_steps(settings: Settings) -> int:
    """``settings.integer_dual_ascent_steps`` as an int >= 0 (0 = no dual ascent); UsageError otherwise."""
    return nonnegative_int(settings, "integer_dual_ascent_steps")


def round_every(settings: Settings) -> int:
    """``settings.relaxation_round_iterations`` as an int >= 0 (0 = stages end only at their tolerance);
    UsageError otherwise."""
    return nonnegative_int(settings, "relaxation_round_iterations")


def improve_max_integers(settings: Settings) -> int:
    """``settings.integer_improve_max_integers`` as an int >= 0 (0 = no size-rule improvement); UsageError
    otherwise."""
    return nonnegative_int(settings, "integer_improve_max_integers")


def highs_max_nonzeros(settings: Settings) -> int:
    """``settings.integer_highs_max_nonzeros`` as an int >= 0 (0 = never HiGHS first); UsageError otherwise."""
    return nonnegative_int(settings, "integer_highs_max_nonzeros")


def nonnegative_int(settings: Settings, field: str) -> int:
    """Settings field ``field`` as an int >= 0 (None/0 = 0).

    Raises:
        UsageError: a negative, fractional or boolean value (naming ``field``).
    """
    v = getattr(settings, field, 0) or 0
    if isinstance(v, bool) or not float(v).is_integer() or v < 0:
        raise UsageError(f"{field} must be a non-negative integer, got {v!r}")
    return int(v)
