"""``copter history`` shows each method's newest compare row; each ``copter compare`` run measured its
``objective_diff_rel`` against its own best. Two runs (``--baseline highs``, then ``--baseline pop``) used to
show copter's 0.0 from the second run beside HiGHS's better objective from the first on a maximisation (the
trial's Sia round 4: copter 160.63 and highs 161.01, both "0.0"). Now a row whose run's best is not the best of
the rows shown is measured against that best, so the diffs agree with the objectives beside them."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

import pytest

from formats.checkpoint import StateStore
from formats.io import write_problem
from solver.rounds.log import log_compare
from solver.rounds.log_history import COMPARE_FIELDS, CSV_METHODS, flat, history
from tests.helpers import REPO, cli_json, four_client_allocation


def _row(name, objective, diff, status="OPTIMAL", violates=False):
    return {"name": name, "status": status, "objective": objective, "objective_diff_rel": diff, "seconds": 1.0,
            "time_ratio": 1.0, "hit_limit": False, "violates_tol": violates, "max_violation_rel": 0.0}


@pytest.fixture
def state(tmp_path):
    write_problem(four_client_allocation(), tmp_path / "base.parquet")  # a maximisation, as the trial's Sia
    st = tmp_path / "st"
    code, out = cli_json("init", tmp_path / "base.parquet", "--state", st, "--json")
    assert code == 0, out
    return st


def _compare_runs(st):
    store = StateStore(st)
    gid = store.manifest(0)["id"]
    # what the two compare runs logged: each diff against its own run's best
    with store.lock():
        log_compare(store, {"round": 0, "copter": _row("copter", 160.6286, 2.3465e-3),
                            "baselines": [_row("highs", 161.0064, 0.0)]}, gid)
    with store.lock():
        log_compare(store, {"round": 0, "copter": _row("copter", 160.6286, 0.0),
                            "baselines": [_row("pop-2", 150.0, 0.0661)]}, gid)


def test_history_measures_every_shown_method_against_the_best_shown(state):
    _compare_runs(state)
    cmp = history(state)[-1]["compare"]
    assert set(cmp) == {"copter", "highs", "pop-2"}
    assert cmp["highs"]["objective_diff_rel"] == 0.0
    assert cmp["copter"]["objective_diff_rel"] == pytest.approx((161.0064 - 160.6286) / 161.0064)
    assert cmp["pop-2"]["objective_diff_rel"] == pytest.approx((161.0064 - 150.0) / 161.0064)
    for fields in cmp.values():  # the better objective, the smaller diff (maximisation)
        for other in cmp.values():
            if fields["objective"] > other["objective"]:
                assert fields["objective_diff_rel"] < other["objective_diff_rel"]
    row = flat(history(state)[-1])  # --csv's columns (the report page reads the same rows)
    assert row["compare_copter_objective_diff_rel"] == cmp["copter"]["objective_diff_rel"]
    # the console script, which keeps numpy out of copter history's process
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "history", "--csv", "--state", str(state)], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    last = list(csv.DictReader(io.StringIO(proc.stdout)))[-1]
    assert float(last["compare_copter_objective_diff_rel"]) == pytest.approx(cmp["copter"]["objective_diff_rel"])
    assert float(last["compare_highs_objective_diff_rel"]) == 0.0


def test_one_compare_run_is_shown_as_logged(state):
    store = StateStore(state)
    with store.lock():
        log_compare(store, {"round": 0, "copter": _row("copter", 160.6286, 2.3465e-3),
                            "baselines": [_row("highs", 161.0064, 0.0)]}, store.manifest(0)["id"])
    cmp = history(state)[-1]["compare"]
    assert cmp["copter"]["objective_diff_rel"] == 2.3465e-3 and cmp["highs"]["objective_diff_rel"] == 0.0


def test_a_violating_row_is_never_the_best_and_the_sense_is_inferred_without_the_generation():
    """Compare's ranking: a row with violates_tol (or one ranked below a feasible point: a negative diff) is
    never the best; with no generation to read the sense from, the logged diffs give it."""
    from solver.rounds.log_history import _consistent

    def logged(method, objective, diff, violates=False):
        return {"method": method, "status": "OPTIMAL", "objective": objective, "objective_diff_rel": diff,
                "seconds": 1.0, "time_ratio": 1.0, "pop_seconds": None, "hit_limit": False,
                "violates_tol": violates, "max_violation_rel": 0.0}
    run1 = [logged("copter", 10.0, 0.1), logged("highs", 9.0, 0.0), logged("bad", 5.0, -0.4444, violates=True)]
    run2 = [logged("copter", 10.0, 0.0), logged("pop-2", 12.0, 0.2)]
    by_run = {1: run1, 2: run2}
    newest = {r["method"]: (run, dict(r)) for run, rows in by_run.items() for r in rows}
    for f in newest.values():
        f[1].pop("method")
    shown = _consistent(newest, by_run, None)  # a minimisation, inferred
    assert shown["highs"]["objective_diff_rel"] == 0.0
    assert shown["copter"]["objective_diff_rel"] == pytest.approx(1 / 9)
    assert shown["pop-2"]["objective_diff_rel"] == pytest.approx(3 / 9)
    assert shown["bad"]["objective_diff_rel"] == -0.4444  # its run's best is the best shown: as logged


def test_a_point_one_run_ranked_below_a_proven_optimum_is_not_the_best_of_a_later_run_without_it(state):
    """helper-213: ``compare -b highs`` ranked copter's point, 4.1e-5 past HiGHS's proven optimum (within its
    tolerance), below it; a later ``compare -b pop`` made copter that run's best (diff 0), and history then showed
    HiGHS's proven optimum as 4.1e-5 worse than copter's point. The point stays ranked below it."""
    store = StateStore(state)
    gid = store.manifest(0)["id"]
    with store.lock():  # a maximisation: copter 161.0130 past highs' 161.0064
        log_compare(store, {"round": 0, "copter": _row("copter", 161.0130, -4.1e-5),
                            "baselines": [_row("highs", 161.0064, 0.0)]}, gid)
    with store.lock():
        log_compare(store, {"round": 0, "copter": _row("copter", 161.0130, 0.0),
                            "baselines": [_row("pop-2", 150.0, 0.0684)]}, gid)
    cmp = history(state)[-1]["compare"]
    assert cmp["highs"]["objective_diff_rel"] == 0.0
    assert cmp["copter"]["objective_diff_rel"] < 0
    assert cmp["pop-2"]["objective_diff_rel"] == pytest.approx((161.0064 - 150.0) / 161.0064)


def test_rebased_diffs_keep_rounding_apart_objectives_equal():
    """Run 1 logged copter and HiGHS 1.49e-15 apart as equal (compare's objective_rounding); run 2 logged copter
    and POP. The re-based diff brought the 1.49e-15 back (helper-206); it stays 0.0, and a real difference counts."""
    from solver.rounds.log_history import _consistent

    def logged(method, objective, diff):
        return {"method": method, "status": "OPTIMAL", "objective": objective, "objective_diff_rel": diff,
                "seconds": 1.0, "time_ratio": 1.0, "pop_seconds": None, "hit_limit": False,
                "violates_tol": False, "max_violation_rel": 0.0}
    same = 3360.0 * (1 + 1.49e-15)
    by_run = {1: [logged("copter", same, 0.0), logged("highs", 3360.0, 0.0)],
              2: [logged("copter", same, 0.0), logged("pop-2", 3400.0, 40 / same)]}
    newest = {r["method"]: (run, dict(r)) for run, rows in by_run.items() for r in rows}
    for f in newest.values():
        f[1].pop("method")
    shown = _consistent(newest, by_run, 1)
    assert shown["copter"]["objective_diff_rel"] == 0.0 and shown["highs"]["objective_diff_rel"] == 0.0
    assert shown["pop-2"]["objective_diff_rel"] == pytest.approx(40 / 3360)


def test_two_runs_in_one_millisecond_of_the_log_stay_two_runs(state, monkeypatch):
    # the log's clock has millisecond resolution: two compare runs logged within one millisecond (a fast machine)
    # were taken for one run, and copter kept its own run's 0.0 beside HiGHS's better objective
    from datetime import UTC, datetime

    from solver.rounds import log as rlog

    now = datetime(2026, 12, 4, 12, 0, 0, 123000, tzinfo=UTC)
    monkeypatch.setattr(rlog, "_utc", lambda text=None: now)
    _compare_runs(state)
    cmp = history(state)[-1]["compare"]
    assert cmp["copter"]["objective_diff_rel"] == pytest.approx((161.0064 - 160.6286) / 161.0064)
    assert cmp["highs"]["objective_diff_rel"] == 0.0


def test_history_csv_keeps_its_columns_with_last(state, tmp_path, capsys):
    """``history --csv --last 1`` had only the shown rows' columns: 35 on a round without a compare, 62 with one,
    so a file a cron job appends to each round shifted its columns. The header is the whole log's."""
    from formats.io import write_delta
    from solver.model.delta import Delta
    from tests.helpers import run_main

    _compare_runs(state)  # round 0 compared
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["c0/a"], cost=[1.5])]), d)
    code, out, err = run_main(capsys, "step", d, "--state", state)
    assert code == 0, (out, err)
    headers = []
    for last in ([], ["--last", "1"], ["--last", "2"]):
        code, out, err = run_main(capsys, "history", "--csv", "--state", state, *last)
        assert code == 0, err
        rows = list(csv.reader(io.StringIO(out)))
        headers.append(rows[0])
        assert len(rows) - 1 == (int(last[1]) if last else 2)
    assert headers[0] == headers[1] == headers[2] and "compare_highs_objective" in headers[1], headers
    newest = list(csv.DictReader(io.StringIO(out)))[-1]
    assert newest["round"] == "1" and newest["compare_highs_objective"] == ""


def test_history_csv_appended_each_round_keeps_its_columns_across_compares(state, tmp_path, capsys):
    """A cron job appending ``history --csv --last 1`` each round, with ``compare`` between rounds: the header's
    columns grew at the first compare of a method (35, 53, 62 fields on the lines of one file), inserted in the
    middle (helper-160), and a first POP part count added columns at the end (user trial 38). Now the header is
    the same before and after compares, POP's in the fixed ``compare_pop_k`` / ``compare_pop_*`` columns."""
    from formats.io import write_delta
    from solver.model.delta import Delta
    from tests.helpers import run_main

    def header():
        code, out, err = run_main(capsys, "history", "--csv", "--last", "1", "--state", state)
        assert code == 0, err
        return next(csv.reader(io.StringIO(out)))

    before = header()
    _compare_runs(state)  # copter, highs and pop-2 rows
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["c0/a"], cost=[1.5])]), d)
    assert run_main(capsys, "step", d, "--state", state)[0] == 0
    after = header()
    assert after == before, (before, after)
    assert "compare_highs_warm_status" in before and "compare_copter_objective" in before
    # every header is a plain identifier: SQL takes it unquoted (``compare_highs-simplex_status`` parsed as a
    # subtraction, helper-203), as does pandas' attribute access
    assert all(c.isidentifier() for c in before), [c for c in before if not c.isidentifier()]
    import sqlite3

    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE h (" + ", ".join(f'"{c}"' for c in before) + ")")  # as sqlite's .import --csv makes it
    for c in before:
        db.execute(f"SELECT {c} FROM h")
    assert before[-len(COMPARE_FIELDS) - 1:] == ["compare_pop_k", *(f"compare_pop_{f}" for f in COMPARE_FIELDS)]
    assert not any(c.startswith("compare_pop-") for c in before)


def test_the_csv_shows_the_rounds_newest_pop_row_whatever_its_part_count(state, capsys):
    """Round 0 compared with pop-2, pop-4, then pop-2 again: its CSV row holds the last pop-2's figures (the newest
    run) under the fixed POP columns, with its part count; the JSON keeps both part counts."""
    from tests.helpers import run_main

    store = StateStore(state)
    gid = store.manifest(0)["id"]
    for k, obj in ((2, 150.0), (4, 140.0), (2, 155.0)):
        with store.lock():
            log_compare(store, {"round": 0, "copter": _row("copter", 160.6286, 0.0),
                                "baselines": [_row(f"pop-{k}", obj, 0.05)]}, gid)
    assert {"pop-2", "pop-4"} <= set(history(state)[-1]["compare"])
    code, out, err = run_main(capsys, "history", "--csv", "--state", state)
    assert code == 0, err
    row = list(csv.DictReader(io.StringIO(out)))[-1]
    assert row["compare_pop_k"] == "2" and float(row["compare_pop_objective"]) == 155.0


def test_the_csv_methods_are_copter_and_every_highs_baseline():
    from solver.baselines.registry import REGISTRY

    assert CSV_METHODS == ("copter", *REGISTRY)
