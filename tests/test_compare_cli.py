"""``copter compare`` end to end on a tiny state directory built with ``copter init`` / ``copter step``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from formats.parquet import write_delta
from solver.model.delta import Delta
from solver.model.problem import Problem
from tests.helpers import four_client_allocation

runner = CliRunner()
FIELDS = ("name", "status", "objective", "seconds", "max_row_violation", "time_ratio")




@pytest.fixture(scope="module")
def state_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cmp")
    write_problem(four_client_allocation(), d / "base.parquet")
    res = runner.invoke(app, ["init", str(d / "base.parquet"), "--state", str(d / "st"), "--json"])
    assert res.exit_code == 0, res.output
    return d


def _compare(*args):
    res = runner.invoke(app, ["compare", *args, "--json"])
    return res, (json.loads(res.stdout) if res.stdout.strip() else None)


def test_compare_highs_json_reports_each_baseline_with_the_contract_fields(state_dir):
    res, out = _compare("--baseline", "highs", "--state", str(state_dir / "st"))
    assert res.exit_code == 0, res.output
    assert [b["name"] for b in out["baselines"]] == ["highs"]
    b = out["baselines"][0]
    for f in FIELDS:
        assert f in b and f in out["copter"]
    assert b["status"] == "OPTIMAL" and b["max_row_violation"] <= 1e-9
    assert b["time_ratio"] == pytest.approx(b["seconds"] / out["copter"]["seconds"])
    assert b["objective_diff_rel"] == 0.0  # HiGHS's optimum is the best row
    assert out["copter"]["objective_diff_rel"] >= 0.0


def test_compare_runs_pop_for_every_k_and_highs_warm(state_dir):
    res, out = _compare("-b", "highs-warm", "-b", "pop", "--k", "2", "--k", "4", "--pop-workers", "0",
                        "--state", str(state_dir / "st"))
    assert res.exit_code == 0, res.output
    names = [b["name"] for b in out["baselines"]]
    assert names == ["highs-warm", "pop-2", "pop-4"]
    for b in out["baselines"]:
        assert b["status"] in ("OPTIMAL", "FEASIBLE") and b["max_row_violation_rel"] <= 1e-6


def test_highs_warm_after_a_step_starts_from_the_previous_rounds_basis(tmp_path):
    write_problem(four_client_allocation(), tmp_path / "base.parquet")
    st = str(tmp_path / "st")
    assert runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", st]).exit_code == 0
    d = Delta.concat([Delta.vars(["c4/a"], cost=[2.0], upper=[1.0]), Delta.coefs(["c4/a"], ["cap/a"], [1.0]),
                      Delta.drop_vars(["c3/b"])], base_round=0)
    write_delta(d, tmp_path / "d1.parquet")
    assert runner.invoke(app, ["step", str(tmp_path / "d1.parquet"), "--state", st]).exit_code == 0
    res, out = _compare("-b", "highs-warm", "-b", "highs", "--state", st)
    assert res.exit_code == 0, res.output
    warm, cold = out["baselines"]
    assert "basis from round 0" in warm["message"] and "untimed" in warm["message"]
    assert warm["objective"] == pytest.approx(cold["objective"], rel=1e-9)
    assert (tmp_path / "st" / "baselines" / "highs-warm" / "round-000001.parquet").exists()


def test_any_registry_name_is_a_baseline_and_pop_k_needs_no_k_option(state_dir):
    res, out = _compare("-b", "highs-ipm", "-b", "pop-3", "-b", "highs-ipm", "--pop-workers", "0",
                        "--state", str(state_dir / "st"))
    assert res.exit_code == 0, res.output
    assert [b["name"] for b in out["baselines"]] == ["highs-ipm", "pop-3"]
    assert out["baselines"][0]["status"] == "OPTIMAL" and out["baselines"][0]["objective_diff_rel"] == 0.0


def test_unknown_baseline_is_a_usage_error(state_dir):
    res, out = _compare("-b", "gurobi", "--state", str(state_dir / "st"))
    assert res.exit_code == 2 and out["error"]["kind"] == "usage"


def test_pop_with_no_parts_names_the_baseline_not_an_option_never_given(state_dir):
    """helper-200: ``--baseline pop-0`` said "--k must be at least 1, got 0" without any --k given."""
    res, out = _compare("-b", "pop-0", "--state", str(state_dir / "st"))
    assert res.exit_code == 2 and out["error"]["kind"] == "usage"
    assert out["error"]["message"].startswith("baseline pop-0: POP needs at least 1 part"), out["error"]["message"]
    assert "--k" not in out["error"]["message"]


def test_compare_on_a_missing_state_directory_is_bad_input(tmp_path):
    res, out = _compare("-b", "highs", "--state", str(tmp_path / "nothing"))
    assert res.exit_code == 3 and out["error"]["kind"] == "state"


def _pop_infeasible() -> Problem:
    """Two clients share 'cover: c0/x + c1/x >= 4'; c1/x <= 0, so POP-2's part holding c1 must cover 2 alone
    and is infeasible, while the full problem (c0/x = 4) is not."""
    A = sp.csc_array(np.array([[1.0, 1.0]]))
    return Problem.from_arrays(cost=[1.0, 0.5], col_lower=[0.0, 0.0], col_upper=[10.0, 0.0], row_lower=[4.0],
                               row_upper=[np.inf], matrix=A, col_names=["c0/x", "c1/x"], row_names=["cover"])


def test_an_infeasible_pop_row_has_no_objective_or_diff_and_is_never_the_best(tmp_path):
    write_problem(_pop_infeasible(), tmp_path / "base.parquet")
    st = str(tmp_path / "st")
    assert runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", st]).exit_code == 0
    res, out = _compare("-b", "pop", "--k", "2", "--pop-workers", "0", "-b", "highs", "--state", st)
    assert res.exit_code == 0, res.output
    pop, highs = out["baselines"]
    assert pop["status"] not in ("OPTIMAL", "FEASIBLE"), pop
    assert pop["objective"] is None and pop["objective_diff_rel"] is None
    assert highs["objective"] == pytest.approx(4.0) and highs["objective_diff_rel"] == 0.0
    assert out["copter"]["objective_diff_rel"] >= 0.0
    table = runner.invoke(app, ["compare", "-b", "pop", "--k", "2", "--pop-workers", "0", "--state", st]).stdout
    line = next(x for x in table.splitlines() if "pop-2" in x and "│" in x)
    cells = [c.strip() for c in line.split("│")[1:-1]]
    assert cells[2] == "-" and cells[3] == "-", cells  # objective, obj. diff rel


def test_every_row_times_the_same_way_and_pop_adds_its_own_measure(state_dir):
    res, out = _compare("-b", "highs", "-b", "pop", "--k", "2", "--pop-workers", "0", "--state",
                        str(state_dir / "st"))
    assert res.exit_code == 0, res.output
    cop = out["copter"]
    assert cop["seconds"] >= cop["solve_seconds"] > 0 and cop["round_seconds"] >= cop["seconds"]
    for r in [cop, *out["baselines"]]:
        assert r["seconds"] > 0 and r["time_ratio"] == pytest.approx(r["seconds"] / cop["seconds"])
    highs, pop = out["baselines"]
    assert "pop_seconds" not in highs and "pop_seconds" not in cop
    assert pop["pop_seconds"] == pytest.approx(pop["setup_seconds"] + pop["max_part_seconds"])
    assert pop["pop_seconds"] <= pop["seconds"] + 1e-9
    assert pop["pop_time_ratio"] == pytest.approx(pop["pop_seconds"] / cop["seconds"])


@pytest.mark.parametrize(("args", "needle"), [
    (["--time-limit", "0"], "--time-limit must be positive"),
    (["--time-limit", "-5"], "--time-limit must be positive"),
    (["--threads", "0"], "--threads must be between 1 and 1024"),
    (["--threads", "2147483648"], "--threads must be between 1 and 1024, got 2147483648"),
    (["-b", "pop", "--pop-workers", "-1"], "--pop-workers must be >= 0"),
])
def test_a_limit_or_thread_count_that_cannot_work_is_a_usage_error(state_dir, args, needle):
    res, out = _compare(*args, "--state", str(state_dir / "st"))
    assert res.exit_code == 2 and out["error"]["kind"] == "usage" and needle in out["error"]["message"]


def test_the_compare_library_runs_without_pandas(state_dir, tmp_path):
    """pandas is only a test extra: solver.rounds.compare (HiGHS, hot-started HiGHS, POP) must not need it."""
    import shutil

    st = tmp_path / "st"
    shutil.copytree(state_dir / "st", st)
    code = textwrap.dedent(f"""
        import importlib.abc
        import sys

        class NoPandas(importlib.abc.MetaPathFinder):  # any `import pandas` now fails as if uninstalled
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] == "pandas":
                    raise ModuleNotFoundError(f"No module named {{name!r}}")

        sys.meta_path.insert(0, NoPandas())
        try:
            import pandas  # noqa: F401
            raise SystemExit("the pandas block does not work")
        except ModuleNotFoundError:
            pass
        from solver import rounds
        res = rounds.compare({str(st)!r}, ["highs", "highs-warm", "pop"], ks=[2], pop_workers=0)
        assert [b["name"] for b in res["baselines"]] == ["highs", "highs-warm", "pop-2"], res
        assert all(b["status"] in ("OPTIMAL", "FEASIBLE") for b in res["baselines"]), res
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_pop_on_a_model_without_client_names_is_a_not_applicable_row_and_highs_still_runs(tmp_path):
    p = four_client_allocation()
    p = p.replace(col_names=np.array([f"x{j}" for j in range(p.n_cols)], dtype=object))  # no "<client>/"
    write_problem(p, tmp_path / "base.parquet")
    st = str(tmp_path / "st")
    assert runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", st]).exit_code == 0
    res, out = _compare("-b", "pop", "-b", "highs", "--pop-workers", "0", "--state", st)
    assert res.exit_code == 0, res.output
    pop, highs = out["baselines"]
    assert pop["name"] == "pop-4" and pop["status"] == "NOT_APPLICABLE" and pop["objective"] is None
    assert pop["seconds"] is None and "--pop-client-regex" in pop["message"]
    assert highs["status"] == "OPTIMAL" and highs["objective_diff_rel"] == 0.0
    # an explicit regex that groups the columns makes POP applicable again
    res, out = _compare("-b", "pop", "--pop-client-regex", r"^x\d", "--pop-workers", "0", "--state", st)
    assert res.exit_code == 0 and out["baselines"][0]["status"] in ("OPTIMAL", "FEASIBLE"), res.output
