"""Delta rows a writer cannot have meant are refused, not applied silently wrong (user trial, session 18;
``solver/differential/intent.py``).

* A misspelled name in a ``var``/``con`` row added an empty column or row: ``{kind: con, con: cap_A100,
  upper: 4}`` (the row is ``cap_a100``) went through ``copter step`` with exit 0, 5 -> 6 rows, the capacity
  change lost. A new entity that no ``coef`` row names is now exit 3 naming it and the closest names; a
  ``coef`` row of value 0 adds one without coefficients on purpose.
* pandas' ``to_parquet`` writes NaN as null ("unchanged"): ``value: [np.nan]`` on an existing variable kept
  its cost with exit 0. A ``var``/``con`` row on an existing entity that sets nothing is now exit 3.
* A CSV file given as a delta got "not a readable Parquet file" with no hint; error lines said the row and
  the entity twice (``row 0: 'x': variable 'x': ... at delta row 0``).
* A name with a space added by a delta (valid; MPS export refuses it later) now warns at step time.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.io import read_delta, write_delta, write_problem
from formats.parquet import read_problem_parquet, write_problem_parquet
from solver.differential import apply_delta
from solver.differential.diff import diff
from solver.differential.intent import close_names
from solver.model.delta import Delta
from solver.model.errors import FormatError, ValidationError
from solver.model.problem import Problem
from tests.helpers import small_lp, snapshot


def _alloc() -> Problem:
    """The trial's model: 3 jobs x 2 GPU types, capacity rows cap_a100/cap_v100, one row per job."""
    jobs, gpus = ["jobA", "jobB", "jobC"], ["a100", "v100"]
    cols = [f"{j}/{g}" for j in jobs for g in gpus]
    rows = ["cap_a100", "cap_v100"] + [f"one_{j}" for j in jobs]
    a = np.zeros((5, 6))
    for k, _ in enumerate(cols):
        a[k % 2, k] = 4.0
        a[2 + k // 2, k] = 1.0
    return Problem.from_arrays(cost=[3, 2, 2.5, 1.5, 4, 2.2], col_lower=np.zeros(6), col_upper=np.ones(6),
                               row_lower=np.full(5, -np.inf), row_upper=[8, 8, 1, 1, 1], matrix=a,
                               col_names=cols, row_names=rows, sense=-1)


@pytest.mark.parametrize("delta,entity,near", [
    (Delta.cons(["cap_A100"], upper=[4.0]), "cap_A100", "'cap_a100'"),
    (Delta.vars(["jobA/V100"], upper=[0.5]), "jobA/V100", "'jobA/v100'"),
    (Delta.vars(["jobA/V100"], cost=[9.0]), "jobA/V100", "'jobA/v100'"),
], ids=["con-bounds", "var-bounds", "var-cost"])
def test_a_misspelled_upsert_is_refused_naming_the_entity_and_the_closest_name(delta, entity, near):
    p = _alloc()
    before = p.copy()
    with pytest.raises(ValidationError) as e:
        apply_delta(p, Delta.concat([Delta.vars(["jobB/a100"], cost=[1.0]), delta]))
    assert e.value.entity == entity and e.value.row == 1
    assert "named by no coef row" in e.value.message and f"did you mean {near}" in e.value.message
    assert "value 0" in e.value.message  # how to add an empty one on purpose
    assert p.equals(before)


def test_several_lone_new_entities_are_counted_and_the_first_named():
    with pytest.raises(ValidationError, match=r"new variables 'q1' \(row 0\), 'q2' \(row 1\) \(2 distinct names\) "
                                              r"are named by no coef row.* at delta rows 0, 1") as e:
        apply_delta(_alloc(), Delta.vars(["q1", "q2"], cost=[1.0, 2.0]))
    assert e.value.entity == "q1"


def test_a_new_client_with_coefficients_is_added():
    d = Delta.concat([Delta.vars(["jobD/a100", "jobD/v100"], cost=[5.0, 3.0], upper=[1.0, 1.0]),
                      Delta.cons(["one_jobD"], upper=[1.0]),
                      Delta.coefs(["jobD/a100", "jobD/v100", "jobD/a100"], ["one_jobD", "one_jobD", "cap_a100"],
                                  [1.0, 1.0, 6.0])])
    q, info = apply_delta(_alloc(), d)
    assert (q.n_cols, q.n_rows, q.nnz) == (8, 6, 15) and info.warnings == []


def test_a_coef_of_value_0_adds_an_entity_without_coefficients_on_purpose():
    d = Delta.concat([Delta.vars(["spare"], cost=[1.0], upper=[1.0]), Delta.cons(["later"], upper=[3.0]),
                      Delta.coefs(["spare", "jobA/a100"], ["cap_a100", "later"], [0.0, 0.0])])
    q, _ = apply_delta(_alloc(), d)
    assert q.col_names[-1] == "spare" and q.row_names[-1] == "later" and q.nnz == _alloc().nnz


def test_a_new_column_needs_no_coef_when_the_result_has_no_rows():
    p = Problem.from_arrays(cost=[1.0], col_lower=[0], col_upper=[1], row_lower=[], row_upper=[],
                            matrix=np.zeros((0, 1)), col_names=["x"], row_names=[])
    q, _ = apply_delta(p, Delta.vars(["y"], cost=[2.0], upper=[1.0]))
    assert q.col_names.tolist() == ["x", "y"]


def test_a_problem_file_may_hold_empty_rows_and_columns(tmp_path):
    """A problem is built from nothing (as MPS files may hold empty columns): the rule is a delta's."""
    p = _alloc()
    q = apply_delta(p, Delta.concat([Delta.vars(["lone"], cost=[1.0], upper=[2.0]), Delta.cons(["free"], upper=[1.0])]),
                    strict=False)[0]
    write_problem_parquet(q, tmp_path / "q.parquet")
    assert read_problem_parquet(tmp_path / "q.parquet").equals(q.replace(name="q"))
    assert apply_delta(Problem.empty(), Delta.vars(["a"], cost=[1.0]))[0].n_cols == 1  # from the empty problem


def test_diff_states_empty_new_entities_with_a_coef_of_0_so_its_delta_applies():
    old = _alloc()
    new = apply_delta(old, Delta.concat([
        Delta.vars(["lone", "jobD/a100"], cost=[1.0, 5.0], upper=[2.0, 1.0]), Delta.cons(["free"], upper=[1.0]),
        Delta.coefs(["jobD/a100"], ["cap_a100"], [6.0])]), strict=False)[0]
    for by_name in (False, True):
        d = diff(old, new, by_name=by_name)
        assert apply_delta(old, d)[0].equals(new)  # new's order: survivors, then new names
    # survivors recreated to give NEW's order (here an empty column first) are new entities too
    order = np.r_[new.n_cols - 2, np.arange(new.n_cols - 2), new.n_cols - 1]
    moved = Problem.from_arrays(cost=new.cost[order], col_lower=new.col_lower[order],
                                col_upper=new.col_upper[order], row_lower=new.row_lower, row_upper=new.row_upper,
                                matrix=new.matrix()[:, order], col_names=new.col_names[order],
                                row_names=new.row_names, sense=new.sense)
    assert apply_delta(new, diff(new, moved))[0].equals(moved)


@pytest.mark.parametrize("delta", [Delta.vars(["jobA/v100"]), Delta.cons(["cap_a100"]),
                                   Delta.from_frame(pd.DataFrame({"kind": ["var"], "var": ["jobA/v100"],
                                                                  "value": [np.nan]}))],
                         ids=["var", "con", "pandas-nan"])
def test_an_upsert_of_an_existing_entity_that_sets_nothing_is_refused(delta):
    with pytest.raises(ValidationError, match="changes nothing.*to_parquet writes NaN as null") as e:
        apply_delta(_alloc(), Delta.concat([Delta.vars(["jobB/a100"], cost=[1.0]), delta]))
    assert e.value.row == 1 and e.value.entity in ("jobA/v100", "cap_a100")


def test_a_pandas_nan_written_by_to_parquet_is_refused_not_read_as_unchanged(tmp_path):
    """pandas' metadata cannot tell a NaN-turned-null from a meant null (tested: both are null, the
    column's metadata says float64 either way); the all-null row is what shows it."""
    df = pd.DataFrame({"kind": ["var"], "var": ["jobA/v100"], "value": [np.nan]})
    df.to_parquet(tmp_path / "d.parquet")
    with pytest.raises(ValidationError, match="changes nothing") as e:
        apply_delta(_alloc(), read_delta(tmp_path / "d.parquet"))
    assert e.value.row == 0 and e.value.entity == "jobA/v100"


def test_a_new_entity_may_leave_every_field_at_its_default():
    d = Delta.concat([Delta.vars(["fresh"]), Delta.coefs(["fresh"], ["cap_a100"], [1.0])])
    q, _ = apply_delta(_alloc(), d)
    assert q.cost[-1] == 0.0 and q.col_upper[-1] == np.inf


def test_close_names_folds_case_first_and_scales_past_the_difflib_limit():
    names = np.array([f"job{i}/gpu{i % 7}" for i in range(50_000)], dtype=object)
    assert close_names("JOB4321/gpu2", names)[0] == "job4321/gpu2"
    assert "job4321/gpu2" in close_names("job4321/gpu_2", names)
    assert close_names("zzzz", np.array(["a", "b"], dtype=object)) == []


def test_close_names_suggest_a_name_that_has_a_digit_where_a_letter_looks_like_it():
    """helper-200: the row '...010' typed with a letter O was not suggested (difflib ranked '...210' above it)."""
    names = np.array([f"...{i:03d}" for i in range(300)], dtype=object)
    assert close_names("...O10", names)[0] == "...010"
    assert close_names("cap_l00", np.array(["cap_100", "cap_200", "cap_l01"], dtype=object))[0] == "cap_100"
    assert close_names("rowI2", np.array(["row12", "row2"], dtype=object))[0] == "row12"


def test_an_added_name_with_a_space_warns_once():
    d = Delta.concat([Delta.vars(["job E/a100"], cost=[1.0]), Delta.coefs(["job E/a100"], ["cap_a100"], [1.0])])
    q, info = apply_delta(_alloc(), d)
    assert len(info.warnings) == 1 and "'job E/a100' contains a space" in info.warnings[0]
    d2 = Delta.concat([Delta.vars(["job F/a100"], cost=[1.0]), Delta.coefs(["job F/a100"], ["cap_a100"], [1.0])])
    assert apply_delta(q, d2)[1].warnings == []  # the state already holds such names: said once


def test_a_single_row_error_names_its_row_once_and_several_rows_are_listed():
    with pytest.raises(ValidationError) as e:
        apply_delta(_alloc(), Delta.vars(["jobA/a100"], cost=[np.nan]))
    assert str(e.value) == "row 0: variable 'jobA/a100': value is NaN (use null to mean 'unchanged')"
    with pytest.raises(ValidationError, match="at delta rows 0, 1"):
        apply_delta(_alloc(), Delta.vars(["jobA/a100", "jobB/a100"], cost=[np.nan, np.nan]))


def test_a_csv_file_given_as_a_delta_gets_a_hint(tmp_path):
    for name in ("d.csv", "d.parquet"):
        (tmp_path / name).write_text("kind,var,value\nvar,jobA/a100,1\n")
        with pytest.raises(FormatError, match="looks like a CSV/text table.*to_parquet"):
            read_delta(tmp_path / name)
    (tmp_path / "t.parquet").write_bytes(b"PAR1\x00\x01")
    with pytest.raises(FormatError) as e:
        read_delta(tmp_path / "t.parquet")
    assert "CSV" not in str(e.value)


# ------------------------------------------------------------------------------------------ CLI


def _state(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    assert CliRunner().invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(st)]).exit_code == 0
    return st


def _step(st, path, *extra):
    return CliRunner().invoke(app, ["step", str(path), "--state", str(st), *extra])


def test_cli_step_refuses_a_misspelled_con_row_and_keeps_the_state(tmp_path):
    st = _state(tmp_path)
    write_delta(Delta.concat([Delta.cons(["Cap3"], upper=[4.0])], base_round=0), tmp_path / "t.parquet")
    before = snapshot(st)
    res = _step(st, tmp_path / "t.parquet")
    assert res.exit_code == BAD_INPUT and "Traceback" not in res.output
    assert "row 0: new constraint 'Cap3' is named by no coef row" in res.stderr and "did you mean 'cap3'" in res.stderr
    res = _step(st, tmp_path / "t.parquet", "--json")
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and err["entity"] == "Cap3" and err["row"] == 0
    assert snapshot(st) == before


def test_cli_step_refuses_a_pandas_nan_and_a_csv_and_keeps_the_state(tmp_path):
    st = _state(tmp_path)
    pd.DataFrame({"kind": ["var"], "var": ["x3"], "value": [np.nan]}).to_parquet(tmp_path / "nan.parquet")
    (tmp_path / "d.csv").write_text("kind,var,value\nvar,x3,1\n")
    before = snapshot(st)
    res = _step(st, tmp_path / "nan.parquet")
    assert res.exit_code == BAD_INPUT and "variable 'x3': this var row changes nothing" in res.stderr
    res = _step(st, tmp_path / "d.csv")
    assert res.exit_code == BAD_INPUT and "looks like a CSV/text table" in res.stderr
    assert snapshot(st) == before


def test_cli_step_warns_about_an_added_name_with_a_space(tmp_path):
    st = _state(tmp_path)
    write_delta(Delta.concat([Delta.vars(["new x"], cost=[1.0], upper=[1.0]), Delta.coefs(["new x"], ["cap0"], [1.0])],
                             base_round=0), tmp_path / "s.parquet")
    res = _step(st, tmp_path / "s.parquet", "--json")
    assert res.exit_code == 0, res.output
    assert any("'new x' contains a space" in w for w in json.loads(res.stdout)["warnings"])
    assert "warning: new variable name 'new x' contains a space" in res.stderr


def test_cli_diff_then_step_with_an_empty_new_column(tmp_path):
    old = small_lp()
    new = apply_delta(old, Delta.vars(["idle"], cost=[0.5], upper=[1.0]), strict=False)[0]
    write_problem(old, tmp_path / "old.parquet")
    write_problem(new, tmp_path / "new.parquet")
    st = _state(tmp_path)
    res = CliRunner().invoke(app, ["diff", str(tmp_path / "old.parquet"), str(tmp_path / "new.parquet"), "-o",
                                   str(tmp_path / "d.parquet"), "--base-round", "0"])
    assert res.exit_code == 0, res.output
    res = _step(st, tmp_path / "d.parquet", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["n_cols"] == new.n_cols


def test_cli_init_warns_about_a_base_name_with_a_space(tmp_path):
    p = small_lp()
    cols = p.col_names.copy()
    cols[2] = "job A/gpu"
    spaced = Problem.from_arrays(cost=p.cost, col_lower=p.col_lower, col_upper=p.col_upper, row_lower=p.row_lower,
                                 row_upper=p.row_upper, matrix=p.matrix(), col_names=cols, row_names=p.row_names)
    write_problem(spaced, tmp_path / "base.parquet")
    res = CliRunner().invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(tmp_path / "st"), "--json"])
    assert res.exit_code == 0, res.output
    assert [w for w in json.loads(res.stdout)["warnings"] if "'job A/gpu' contains a space" in w]
    assert "warning: variable name 'job A/gpu' contains a space" in res.stderr
    write_problem(p, tmp_path / "plain.parquet")
    res = CliRunner().invoke(app, ["init", str(tmp_path / "plain.parquet"), "--state", str(tmp_path / "st2"), "--json"])
    assert res.exit_code == 0 and "warnings" not in json.loads(res.stdout)
