"""Values an MPS file holds that other readers take for infinity.

A bound of magnitude >= 1e20 is no bound for copter as for HiGHS (``infinite_bound``) and other readers
(``solver.model.problem.INF_BOUND``): every reader makes it +-inf. A cost is finite up to 1e30
(``INF_VALUE``; copter's HiGHS instances set ``infinite_cost`` to it), while HiGHS's default ``infinite_cost``
and other MPS readers take a cost of magnitude >= 1e20 for infinite: a cost in [1e20, 1e30) written to MPS is
read back elsewhere as another model. So can a finite bound in that range that a state written before copter
read such bounds as infinite still holds (read back, by copter too, as no bound).
:func:`highs_default_infinity_warning` names the first such value so ``copter export`` and ``copter convert``
can say so (:func:`written_warnings`), as :func:`free_rows_warning` does for constraints MPS cannot hold (free
rows, read back as nothing).
"""

from __future__ import annotations

import numpy as np

from solver.model.problem import INF_VALUE, Problem

OTHER_READERS_INF = 1e20  #: HiGHS's default infinite_bound / infinite_cost (and CPLEX's 1e20)


def _big(arr: np.ndarray) -> np.ndarray:
    """Positions of the finite values of magnitude in [1e20, 1e30) (one pass over ``arr``)."""
    mag = np.abs(arr)
    return np.flatnonzero((mag >= OTHER_READERS_INF) & (mag < INF_VALUE))


def highs_default_infinity_warning(problem: Problem) -> str | None:
    """A one-line warning naming the first finite value of magnitude in [1e20, 1e30) in ``problem``
    (a column bound, a row bound, then a cost) and how many there are, or None when there is none."""
    first, count = None, 0
    for what, arr, names in (("lower bound of variable", problem.col_lower, problem.col_names),
                             ("upper bound of variable", problem.col_upper, problem.col_names),
                             ("lower bound of constraint", problem.row_lower, problem.row_names),
                             ("upper bound of constraint", problem.row_upper, problem.row_names),
                             ("cost of variable", problem.cost, problem.col_names)):
        big = _big(arr)
        if not big.size:
            continue
        count += big.size
        if first is None:
            first = f"the {what} {str(names[big[0]])!r} is {arr[big[0]]:g}"
    if first is None:
        return None
    more = f" ({count} such values)" if count > 1 else ""
    return (f"{first}{more}: finite in this model, but HiGHS's default infinite_cost and infinite_bound (1e20) and "
            "other MPS readers read a magnitude >= 1e20 as infinite (copter too, for a bound), so they would see a "
            "different model; rescale, or write a bound meant as 'no bound' as inf")


def free_rows_warning(problem: Problem) -> str | None:
    """A one-line warning naming the first constraint with neither bound (a free row) and how many there are, or
    None: MPS holds a free row only as an extra ``N`` row, which HiGHS's reader (so copter's) drops with its
    coefficients, so the file read back has fewer constraints (a delta naming one is then refused)."""
    free = np.flatnonzero(np.isneginf(problem.row_lower) & np.isposinf(problem.row_upper))
    if not free.size:
        return None
    return (f"{free.size} constraint(s) with no bound on either side, the first {str(problem.row_names[free[0]])!r}, "
            "are written as extra N rows, which MPS readers (HiGHS, so copter) drop with their coefficients: the "
            "file read back lacks them; write .parquet to keep them")


def rounded_integer_bounds_warning(problem: Problem) -> str | None:
    """A one-line warning naming the first integer column with a fractional finite bound and how many there are, or
    None: ``formats.mps.write_mps`` writes such bounds rounded inward (the same integer points; MPS readers
    reject or change fractional integer bounds), so the file's LP relaxation is tighter than the model's, and its
    ``lp_bound`` and a ``diff`` against the model differ (an integer x in [0.5, 3.7] read back as [1, 3] without a
    word, helper-209); an integer column with no integer in its box is written as an empty one."""
    it = problem.integrality.astype(bool)
    if not it.any():
        return None
    lo, up = problem.col_lower, problem.col_upper
    frac = it & ((np.isfinite(lo) & (np.ceil(lo) != lo)) | (np.isfinite(up) & (np.floor(up) != up)))
    cols = np.flatnonzero(frac)
    if not cols.size:
        return None
    j = int(cols[0])
    more = f" ({cols.size} such variables)" if cols.size > 1 else ""
    return (f"integer variable {str(problem.col_names[j])!r} has the bounds [{_num(lo[j])}, {_num(up[j])}]{more}: "
            f"written rounded inward, [{_num(np.ceil(lo[j]))}, {_num(np.floor(up[j]))}]: the same integer points, but "
            "the file's LP relaxation (its lp_bound) is tighter than the model's")


def _num(v: float) -> str:
    """``v`` as the shortest text that reads back as it (``3.7``, an integral value without ``.0``, ``inf``)."""
    v = float(v)
    return f"{v:.0f}" if np.isfinite(v) and v.is_integer() and abs(v) < 1e15 else repr(v)


def written_warnings(problem: Problem, path) -> list[str]:
    """The warnings of writing ``problem`` to ``path`` (``export``, ``convert``) when ``path`` is an MPS file:
    :func:`highs_default_infinity_warning`, :func:`free_rows_warning`,
    ``formats.mps_write_fixes.inexact_ranges_warning`` and :func:`rounded_integer_bounds_warning`; else none."""
    from formats.io import kind_of

    if kind_of(path) != "mps":
        return []
    from formats.mps_write_fixes import inexact_ranges_warning

    return [w for w in (highs_default_infinity_warning(problem), free_rows_warning(problem),
                        inexact_ranges_warning(problem.row_names, problem.row_lower, problem.row_upper),
                        rounded_integer_bounds_warning(problem)) if w]
