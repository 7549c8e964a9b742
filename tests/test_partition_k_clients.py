"""``--partitions K`` against the number of clients: init refuses more parts than the base has clients (exit 2
naming the option and both numbers, nothing written; 100,000 parts of 51 clients made 99,949 EMPTY parts, an
80 MB state and a step that hung), while a step whose delta drops clients below K keeps going with EMPTY parts
that cost nothing to solve."""

from __future__ import annotations

from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import client_allocation, run_main


def test_init_refuses_more_parts_than_clients(tmp_path, capsys):
    base = tmp_path / "base.parquet"
    write_problem(client_allocation(n_clients=5), base)
    code, _, err = run_main(capsys, "init", base, "--partitions", "6", "--executor", "inline",
                            "--state", tmp_path / "st")
    assert code == 2, err
    assert "--partitions 6" in err and "5 clients" in err
    assert not (tmp_path / "st").exists()
    code, _, err = run_main(capsys, "init", base, "--partitions", "5", "--executor", "inline",
                            "--state", tmp_path / "st")
    assert code == 0, err


def test_step_dropping_clients_below_k_leaves_empty_parts(tmp_path):
    state = tmp_path / "st"
    rounds.init(client_allocation(n_clients=3), state, partition={"k": 3, "executor": "inline"})
    drop = Delta.drop_vars([f"c{i}/{r}" for i in (1, 2) for r in ("a", "b")])
    path = tmp_path / "d1.parquet"
    write_delta(drop, path)
    report = rounds.step(path, state)
    assert report["status"] in ("OPTIMAL", "FEASIBLE"), report.get("message")
    parts = report["partitions"]["parts"]
    assert len(parts) == 3
    empty = [p for p in parts if p["status"] == "EMPTY"]
    assert len(empty) == 2 and all(p["seconds"] == 0.0 and p["iterations"] == 0 for p in empty)


def test_merge_message_counts_the_parts_it_merged(tmp_path):
    """A round with EMPTY parts merged only the others: its message said "3 parts merged" with one part solved."""
    state = tmp_path / "st"
    rounds.init(client_allocation(n_clients=3), state,
                partition={"k": 3, "executor": "inline", "whole_below_nnz": 0})
    drop = Delta.drop_vars([f"c{i}/{r}" for i in (1, 2) for r in ("a", "b")])
    path = tmp_path / "d1.parquet"
    write_delta(drop, path)
    report = rounds.step(path, state)
    assert report["status"] in ("OPTIMAL", "FEASIBLE"), report.get("message")
    assert report["message"].startswith("1 of 3 parts merged (2 EMPTY); "), report["message"]
