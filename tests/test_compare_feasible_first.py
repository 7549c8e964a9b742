"""``copter compare`` ranks by feasibility first at a common tolerance (user trial 18): an LP point within its
OPTIMAL contract (rows within 100 x tol) but off a row beyond what HiGHS's exact points meet, whose objective
beats HiGHS's only by what that violation buys (copter's duals x the violations, plus its duality gap), is not
the best: forplan's copter point -664.5126 with row 'LTSY R' off by 3.0e-3 was ranked above HiGHS's optimum
-664.2190 ("4.42e-04 worse"). A lead larger than the violation buys (over POP's partitioned point) stands."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from solver import rounds
from solver.rounds import comparison
from solver.rounds.comparison import COMMON_TOL, _derive
from tests.helpers import two_jobs

runner = CliRunner()


@pytest.fixture
def slightly_off_state(tmp_path, monkeypatch):
    """Round 0 of max x1 + x2, cap: x1 + x2 <= 4, read back as (2.0002, 2.0002): cap off by 4e-4 (1e-4 relative,
    within the per-row 1e-2; primal residual 8e-5 <= 1e-4), objective 4.0004 against the optimum 4."""
    from formats.io import write_problem

    write_problem(two_jobs(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", state_dir=st)
    monkeypatch.setattr(comparison, "copter_point", lambda gen, problem: np.array([2.0002, 2.0002]))
    return st


def test_a_lead_bought_by_a_row_violation_ranks_the_feasible_point_best(slightly_off_state):
    res = rounds.compare(slightly_off_state, ["highs"])
    cop, highs = res["copter"], res["baselines"][0]
    assert res["common_feasibility_tol"] == COMMON_TOL
    assert cop["violates_tol"] is False  # within its contract ...
    assert cop["feasible_at_common_tol"] is False and highs["feasible_at_common_tol"] is True
    assert cop["worst_row"] == "cap" and cop["worst_row_violation_rel"] == pytest.approx(1e-4)
    assert cop["violation_buys"] == pytest.approx(4e-4, rel=1e-2)  # cap's dual 1 x 4e-4
    # ... but its lead 4e-4 is what the violation buys: HiGHS's exact point is the best
    assert cop["ranked_below_feasible"] is True and cop["feasible_best"] == "highs"
    assert cop["lead_over_feasible"] == pytest.approx(4e-4)
    assert highs["objective_diff_rel"] == 0.0 and cop["objective_diff_rel"] == pytest.approx(-1e-4)
    assert highs["ranked_below_feasible"] is False


def test_cli_names_the_row_and_its_violation(slightly_off_state):
    out = runner.invoke(app, ["compare", "-b", "highs", "--state", str(slightly_off_state)],
                        env={"COLUMNS": "250"}).stdout
    note = " ".join(out.split())
    assert "copter: objective better than highs's by 0.0004 while row 'cap' is off by 1.00e-04" in note
    js = json.loads(runner.invoke(app, ["compare", "-b", "highs", "--state", str(slightly_off_state),
                                        "--json"]).stdout)
    assert js["baselines"][0]["objective_diff_rel"] == 0.0 and js["copter"]["ranked_below_feasible"] is True


def _row(name, obj, common, buys, gap=None):
    return {"name": name, "status": "OPTIMAL", "objective": obj, "violates_tol": False, "seconds": 1.0,
            "feasible_at_common_tol": common, "violation_buys": buys, "_gap_abs": gap, "_scale": 1.0}


def test_a_lead_beyond_what_the_violation_buys_keeps_its_rank():
    # min: copter 90 off a row (buys 0.5, gap 0.1) against POP's feasible 100: the lead 10 is copter's own
    copter, pop = _row("copter", 90.0, False, 0.5, 0.1), _row("pop-4", 100.0, True, 0.0)
    _derive(copter, [pop], 1, 1e-4)
    assert copter["ranked_below_feasible"] is False and copter["objective_diff_rel"] == 0.0
    assert pop["objective_diff_rel"] == pytest.approx(10 / 90)
    # the same point 0.55 ahead: within 0.5 + 0.1, the feasible point ranks best
    copter, highs = _row("copter", 99.45, False, 0.5, 0.1), _row("highs", 100.0, True, 0.0)
    _derive(copter, [highs], 1, 1e-4)
    assert copter["ranked_below_feasible"] is True and highs["objective_diff_rel"] == 0.0
    assert copter["lead_allowance"] == pytest.approx(0.6) and "_gap_abs" not in copter
    # no duals to price the violation (unknown buys): the feasible point ranks best; maximisation alike
    copter, highs = _row("copter", 100.5, False, None), _row("highs", 100.0, True, 0.0)
    _derive(copter, [highs], -1, 1e-4)
    assert copter["ranked_below_feasible"] is True and math.isinf(copter["lead_allowance"])
    assert highs["objective_diff_rel"] == 0.0


def test_a_lead_over_highs_proven_optimum_is_the_violations_whatever_the_duals_price():
    """helper-187: e226's warm OPTIMAL -11.3390 beat HiGHS's optimum -11.3087 by 0.030 while copter's duals priced its
    violations at 0.012: ranked best, HiGHS's exact optimum shown 2.7e-3 worse. No feasible point beats the LP's
    proven optimum, so such a lead ranks below it; over POP's (not proven) point it keeps its rank."""
    from copter_cli.cmd_compare import ranking_note

    copter, highs = _row("copter", -11.3390, False, 0.0106, 0.0014), _row("highs", -11.3087, True, 0.0)
    highs["highs_status"] = "Optimal"
    _derive(copter, [highs], 1, 1e-4)
    assert copter["ranked_below_feasible"] is True and copter["feasible_best_proven"] is True
    assert highs["objective_diff_rel"] == 0.0 and copter["objective_diff_rel"] < 0
    note = ranking_note({**copter, "worst_row": "...269", "worst_row_violation_rel": 2.8e-3}, 1e-6)
    assert "less than the lead" in note and "proven optimum" in note
    # HiGHS stopped at a limit (not proven): the lead beyond what the violations buy is copter's own, as over POP
    copter, highs = _row("copter", -11.3390, False, 0.0106, 0.0014), _row("highs", -11.3087, True, 0.0)
    highs["highs_status"] = "Time limit reached"
    _derive(copter, [highs], 1, 1e-4)
    assert copter["ranked_below_feasible"] is False and copter["objective_diff_rel"] == 0.0


def test_without_a_feasible_point_at_the_common_tolerance_nothing_changes():
    copter, pdlp = _row("copter", 99.0, False, 0.5), _row("highs-pdlp", 100.0, False, 0.4)
    _derive(copter, [pdlp], 1, 1e-4)
    assert copter["objective_diff_rel"] == 0.0 and not copter["ranked_below_feasible"]


def test_the_note_claims_the_optimal_contract_only_for_an_optimal_point():
    """A partitioned round's merged point is FEASIBLE: the note said "within its OPTIMAL's per-row tolerance" of it
    all the same (helper-183)."""
    from copter_cli.cmd_compare import ranking_note

    row = {"name": "copter", "ranked_below_feasible": True, "violation_buys": 0.39, "lead_allowance": 2191.0,
           "feasible_best": "pop-4", "lead_over_feasible": 806.0, "worst_row": "d20-22/cap",
           "worst_row_violation_rel": 2.6e-4}
    optimal = ranking_note({**row, "status": "OPTIMAL"}, 1e-6)
    feasible = ranking_note({**row, "status": "FEASIBLE"}, 1e-6)
    assert "within its OPTIMAL's per-row tolerance" in optimal
    assert "OPTIMAL" not in feasible and "(its status FEASIBLE, beyond the common 1e-06" in feasible
