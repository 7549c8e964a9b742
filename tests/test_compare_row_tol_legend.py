"""compare's legend states the per-row tolerance the ranking uses (``solver.lp.termination.row_tolerance``:
100 x tol, at most sqrt(tol)): at ``--feasibility-tol 1e-2`` it said "a row off by more than 1.0e+00" while rows
off by more than 0.1 were flagged."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from copter_cli.cmd_compare import print_table
from solver.lp.termination import row_tolerance


def _result(tol: float) -> dict:
    row = {"objective": 1.0, "objective_diff_rel": 0.0, "primal_residual_rel": 1e-6, "max_row_violation": 0.0,
           "max_row_violation_rel": 0.0, "integrality_violation": 0.0, "seconds": 0.1, "time_ratio": 1.0}
    return {"round": 1, "n_rows": 1, "n_cols": 1, "nnz": 1, "feasibility_tol": tol,
            "feasibility_ruler": "primal_residual_rel", "copter": {**row, "name": "copter", "status": "OPTIMAL"},
            "baselines": [{**row, "name": "highs", "status": "OPTIMAL"}]}


@pytest.mark.parametrize("tol", [1e-2, 1e-4, 1e-6])
def test_the_legend_states_the_row_tolerance_in_use(tol):
    buf = io.StringIO()
    print_table(_result(tol), Console(file=buf, width=400, color_system=None), False)
    text = " ".join(buf.getvalue().split())
    assert f"a row off by more than {row_tolerance(tol):.1e} relative" in text, text


@pytest.mark.parametrize("ruler,shown", [("primal_residual_rel", "8.20e-03"), ("max_violation_rel", "1.19e-02")])
def test_row_viol_rel_is_the_measure_the_flag_holds_the_row_to(ruler, shown):
    """User trial 37: an OPTIMAL LP row showed 1.19e-02 (divided by max(1, |bound|)), above the 1e-2 an LP OPTIMAL
    promises, while its per-row measure (max(1, |bound|, the row's largest |coefficient|)) was 8.2e-3."""
    res = _result(1e-4)
    res["feasibility_ruler"] = ruler
    res["copter"].update(max_row_violation_rel=1.19e-2, worst_row_violation_rel=8.2e-3)
    buf = io.StringIO()
    print_table(res, Console(file=buf, width=400, color_system=None), False)
    copter_line = next(line for line in buf.getvalue().splitlines() if "copter" in line and "OPTIMAL" in line)
    assert shown in copter_line
    divisor = "the row's largest |coefficient|" if ruler == "primal_residual_rel" else "max(1, |bound|))"
    assert divisor in " ".join(buf.getvalue().split())
