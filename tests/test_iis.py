"""An infeasible round names a conflicting set of rows and bounds (issue #16): HiGHS's IIS
(``solver.highs_bridge.find_iis``) in the report's ``iis`` and its message. The sets are checked by solving
the subsystem they name with HiGHS: it must be infeasible on its own."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import read_problem, write_problem
from solver import rounds
from solver.api import solve_problem
from solver.highs_bridge import describe_iis, find_iis, is_infeasible, new_highs, pass_problem
from solver.model.problem import Problem
from solver.model.settings import Settings
from tests.helpers import infeasible_delta, require_data, small_lp


def _hand_made(integrality=None) -> Problem:
    """cap: x0 + x1 <= 1, need: x0 >= 2 (both rows conflict with x1 >= 0); other: x2 <= 5 is innocent."""
    A = sp.csc_array(np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    return Problem.from_arrays(cost=[1.0, 1.0, 1.0], col_lower=[0.0, 0.0, 0.0], col_upper=[10.0, 10.0, 10.0],
                               row_lower=[-np.inf, 2.0, -np.inf], row_upper=[1.0, np.inf, 5.0], matrix=A,
                               col_names=["x0", "x1", "x2"], row_names=["cap", "need", "other"],
                               integrality=integrality)


def _subsystem_is_infeasible(p: Problem, iis: dict) -> bool:
    """Keep only the named rows (their named side) and the named column bounds (every other column free);
    HiGHS must find that LP infeasible."""
    rpos = {n: i for i, n in enumerate(p.row_names.tolist())}
    cpos = {n: j for j, n in enumerate(p.col_names.tolist())}
    rows = np.array([rpos[e["name"]] for e in iis["rows"]], dtype=np.int64)
    side = np.array([e["bound"] for e in iis["rows"]], dtype=object)
    rl = np.where(np.isin(side, ["lower", "boxed"]), p.row_lower[rows], -np.inf)
    ru = np.where(np.isin(side, ["upper", "boxed"]), p.row_upper[rows], np.inf)
    cl, cu = np.full(p.n_cols, -np.inf), np.full(p.n_cols, np.inf)
    for e in iis["columns"]:
        j = cpos[e["name"]]
        if e["bound"] in ("lower", "boxed"):
            cl[j] = p.col_lower[j]
        if e["bound"] in ("upper", "boxed"):
            cu[j] = p.col_upper[j]
    A = sp.csc_array((p.a_data, p.a_indices, p.a_indptr), shape=(p.n_rows, p.n_cols)).tocsr()[rows].tocsc()
    sub = Problem.from_arrays(cost=np.zeros(p.n_cols), col_lower=cl, col_upper=cu, row_lower=rl, row_upper=ru,
                              matrix=A)
    h = new_highs()
    assert pass_problem(h, sub)
    h.run()
    return is_infeasible(h)


def test_hand_made_lp_names_exactly_the_conflicting_rows_and_bound():
    iis = find_iis(_hand_made())
    assert iis["found"] and iis["status"] == "irreducible"
    assert [(e["name"], e["bound"]) for e in iis["rows"]] == [("cap", "upper"), ("need", "lower")]
    assert [(e["name"], e["bound"]) for e in iis["columns"]] == [("x1", "lower")]
    assert iis["n_rows"] == 2 and iis["n_columns"] == 1
    assert describe_iis(iis) == ("conflicting rows and bounds (irreducible): row cap <= 1, row need >= 2, "
                                 "column x1 >= 0")
    assert _subsystem_is_infeasible(_hand_made(), iis)


def test_names_the_sentence_would_make_ambiguous_are_quoted():
    """helper-203: "row cap,1 <= 10, column -x >= 0" read as two rows; a name with a separator, a space, a quote or a
    comparison sign is quoted, a plain one (``-x`` included) is not."""
    iis = {"found": True, "status": "irreducible", "n_rows": 3, "n_columns": 1,
           "rows": [{"name": "cap,1", "bound": "upper", "lower": -np.inf, "upper": 10.0},
                    {"name": "my row", "bound": "lower", "lower": 2.0, "upper": np.inf},
                    {"name": "a>=b", "bound": "both", "lower": 1.0, "upper": 3.0}],
           "columns": [{"name": "-x", "bound": "lower", "lower": 0.0, "upper": np.inf}]}
    assert describe_iis(iis) == ("conflicting rows and bounds (irreducible): row 'cap,1' <= 10, row 'my row' >= 2, "
                                 "1 <= row 'a>=b' <= 3, column -x >= 0")


def test_a_milp_gets_the_iis_of_its_relaxation_or_says_integrality_conflicts():
    iis = find_iis(_hand_made([True, False, False]))
    assert iis["found"] and {e["name"] for e in iis["rows"]} == {"cap", "need"}
    odd = Problem.from_arrays(cost=[1.0], col_lower=[0.0], col_upper=[10.0], row_lower=[1.0], row_upper=[1.0],
                              matrix=sp.csc_array(np.array([[2.0]])), integrality=[True])  # 2 x = 1, x integer
    iis = find_iis(odd)
    assert not iis["found"] and iis["status"] == "feasible" and iis["rows"] == []
    assert "integrality" in describe_iis(iis, is_mip=True)


@pytest.mark.parametrize(("name", "max_rows"), [("woodinfe", 1), ("box1", 20)])
def test_shared_infeasible_models_get_a_small_set_that_is_infeasible_alone(name, max_rows):
    p = read_problem(require_data(f"mps/{name}.mps"))
    iis = find_iis(p, time_limit_seconds=30.0)
    assert iis["found"] and iis["status"] == "irreducible", iis["status"]
    assert 1 <= iis["n_rows"] <= max_rows < p.n_rows
    assert _subsystem_is_infeasible(p, iis)
    if name == "woodinfe":  # the netlib model's documented conflict: DWASE >= 0 against DWASE1 >= 5
        assert [(e["name"], e["bound"]) for e in iis["rows"]] == [("DWASE", "lower")]
        assert [(e["name"], e["bound"]) for e in iis["columns"]] == [("DWASE1", "lower")]


def test_a_model_highs_cannot_reduce_says_so_instead_of_naming_a_wrong_set():
    p = read_problem(require_data("mps/klein1.mps"))
    iis = find_iis(p, time_limit_seconds=30.0)
    if iis["found"]:  # a later HiGHS may succeed: then the set must hold
        assert _subsystem_is_infeasible(p, iis)
    else:
        assert iis["rows"] == [] and "no conflicting set" in describe_iis(iis)


def test_solve_problem_attaches_the_iis_and_names_it_in_the_message():
    res = solve_problem(_hand_made(), Settings())
    assert res.status.name == "PRIMAL_INFEASIBLE"
    assert res.iis["found"] and "row cap <= 1" in res.message and "row need >= 2" in res.message
    assert res.seconds["iis"] >= 0
    off = solve_problem(_hand_made(), Settings(iis_seconds=0.0))
    assert off.iis is None and "conflicting" not in off.message


def test_an_infeasible_step_reports_the_new_row_and_the_bound_it_fights(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", state_dir=st)
    rep = rounds.step(infeasible_delta(), state_dir=st)
    assert rep["status"] == "PRIMAL_INFEASIBLE" and rep["accepted"] is False
    iis = rep["iis"]
    assert iis["found"] and [(e["name"], e["bound"]) for e in iis["rows"]] == [("force", "lower")]
    assert [(e["name"], e["bound"]) for e in iis["columns"]] == [("x0", "upper")]
    assert "row force >= 5" in rep["message"] and "column x0 <= 1" in rep["message"]


def test_cli_solve_json_carries_iis_and_the_message(tmp_path):
    write_problem(_hand_made(), tmp_path / "p.parquet")
    res = CliRunner().invoke(app, ["solve", str(tmp_path / "p.parquet"), "--json"])
    assert res.exit_code == 4, res.output
    out = json.loads(res.stdout)
    assert out["iis"]["found"] and {e["name"] for e in out["iis"]["rows"]} == {"cap", "need"}
    assert "row cap <= 1" in out["message"]


def test_a_set_not_reduced_says_so_in_words_not_the_status_name():
    iis = {"found": True, "status": "time_limit", "rows": [{"name": "cap", "bound": "upper", "lower": -np.inf,
                                                            "upper": 1.0}], "columns": [], "n_rows": 1, "n_columns": 0}
    text = describe_iis(iis)
    assert "(time_limit)" not in text and "the search stopped at its time budget, --iis-seconds" in text
    assert "not reduced to a minimal set" in describe_iis({**iis, "status": "reducible"})


def test_iis_seconds_is_an_option_stored_by_init_and_its_time_is_reported_apart(tmp_path):
    """User trial 37: an infeasible TE round spent 10 of its 10.5 s in the IIS search, hidden in ``solve``, with
    no option to bound it. ``--iis-seconds`` (stored by init, per step) bounds it; ``seconds.iis`` shows it."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    delta = tmp_path / "bad.parquet"
    from formats.parquet import write_delta
    write_delta(infeasible_delta(), delta)
    st = str(tmp_path / "st")
    runner = CliRunner()
    res = runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", st, "--iis-seconds", "0"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["step", str(delta), "--state", st, "--json"])
    assert res.exit_code == 4, res.output
    out = json.loads(res.stdout)
    assert out.get("iis") is None and "iis" not in out["seconds"] and "conflicting" not in out["message"]
    res = runner.invoke(app, ["step", str(delta), "--state", st, "--json", "--iis-seconds", "5"])
    assert res.exit_code == 4, res.output
    out = json.loads(res.stdout)
    assert out["iis"]["found"] and "row force >= 5" in out["message"]
    assert 0 <= out["seconds"]["iis"] <= out["seconds"]["solve"] + out["seconds"]["integerize"]
    res = runner.invoke(app, ["step", str(delta), "--state", st, "--iis-seconds", "-1"])
    assert res.exit_code == 2 and "--iis-seconds" in res.output


def test_a_budget_spent_before_the_search_names_the_budget_not_an_error():
    """box1 (shared data, infeasible): a budget of 1e-6 s ends HiGHS's LP solve at its time limit before the IIS
    search; that was "IIS status error" (hunt 37), now the budget is named."""
    p = read_problem(require_data("mps/box1.mps"))
    iis = find_iis(p, 1e-6)
    assert not iis["found"] and iis["status"] == "time_limit"
    text = describe_iis(iis, budget="--iis-seconds")
    assert "error" not in text and text.endswith("within its time budget, --iis-seconds")
    assert find_iis(p, 10.0)["found"]  # the same model with a real budget has a set: the budget is the cause
