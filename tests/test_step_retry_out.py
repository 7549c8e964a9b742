"""A retried ``copter step DELTA --out DIR`` (a no-op re-apply) copies the round that delta produced into DIR.

A user hunt: a cron job runs ``copter step delta.parquet --out ./round-out`` and its tools read ``round-out``.
When the first run stored the round but never wrote ``--out`` (killed after CURRENT moved, or the copy failed:
exit 7, "round 1 is stored and current, but copying its outputs to --out ... failed"), running the same command
again was a no-op (exit 0) that copied nothing: ``round-out`` kept round 0's files (or none) without a word.
"""

from __future__ import annotations

import json

from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


def _state(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    deltas = []
    for k, cost in enumerate((5.0, 0.2), start=1):
        d = tmp_path / f"d{k}.parquet"
        write_delta(Delta.concat([Delta.vars(["x3"], cost=[cost])], base_round=k - 1), d)
        deltas.append(d)
    return st, deltas


def _out_round(out) -> int:
    return json.loads((out / "report.json").read_text())["round"]


def test_retry_with_out_copies_the_round_the_delta_produced(tmp_path, capsys):
    st, (d1, _) = _state(tmp_path)
    rounds.step(d1, st)  # the round is stored; its --out copy never happened (a kill, a failed copy)
    out = tmp_path / "out"
    code, stdout, _ = run_main(capsys, "step", d1, "--state", st, "--out", out, "--json")
    assert code == 0, stdout
    rep = json.loads(stdout)
    assert rep["no_op"] is True and rep["round"] == 1
    assert _out_round(out) == 1
    for name in ("solution.parquet", "duals.parquet", "changes.parquet"):
        assert (out / name).read_bytes() == (st / "gen-000001" / name).read_bytes(), name


def test_retry_replaces_an_older_rounds_copy(tmp_path, capsys):
    st, (d1, _) = _state(tmp_path)
    out = tmp_path / "out"
    rounds.init(tmp_path / "base.parquet", tmp_path / "other", out_dir=out)  # round 0's files in out
    rounds.step(d1, st)
    code, stdout, _ = run_main(capsys, "step", d1, "--state", st, "--out", out)
    assert code == 0, stdout
    assert _out_round(out) == 1


def test_batch_run_again_leaves_the_last_rounds_outputs(tmp_path, capsys):
    st, deltas = _state(tmp_path)
    rounds.step_many(deltas, st)
    out = tmp_path / "out"
    code, stdout, _ = run_main(capsys, "step", *deltas, "--state", st, "--out", out, "--json")
    assert code == 0, stdout
    assert [r["no_op"] for r in json.loads(stdout)["rounds"]] == [True, True]
    assert _out_round(out) == 2
    assert (out / "solution.parquet").read_bytes() == (st / "gen-000002" / "solution.parquet").read_bytes()


def test_retry_of_a_pruned_round_says_nothing_was_copied(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st, keep=1)
    d1, d2 = tmp_path / "d1.parquet", tmp_path / "d2.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d1)
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[0.2])], base_round=1), d2)
    rounds.step_many([d1, d2], st)  # keep 1: round 1 is pruned
    out = tmp_path / "out"
    code, stdout, stderr = run_main(capsys, "step", d1, "--state", st, "--out", out, "--json")
    assert code == 0, stdout
    rep = json.loads(stdout)
    assert rep["no_op"] is True and rep["round"] == 1
    assert any("round 1 is no longer kept: nothing copied to --out" in w for w in rep["warnings"])
    assert not (out / "report.json").exists()


def test_the_first_runs_report_copy_is_the_stored_report_as_a_retrys_is(tmp_path, capsys):
    """helper-236: the first run's ``--out`` report.json carried the answer's ``current_round``, which the stored
    report.json (and so a no-op re-run's copy) leaves out (docs/formats.md)."""
    st, (d1, _) = _state(tmp_path)
    first, again = tmp_path / "first", tmp_path / "again"
    for out in (first, again):
        code, stdout, _ = run_main(capsys, "step", d1, "--state", st, "--out", out, "--json")
        assert code == 0, stdout
    assert json.loads(stdout)["no_op"] is True and "current_round" in json.loads(stdout)  # the answer keeps it
    stored = (st / "gen-000001" / "report.json").read_bytes()
    assert (first / "report.json").read_bytes() == stored == (again / "report.json").read_bytes()
