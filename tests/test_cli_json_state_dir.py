"""The JSON of ``init``, ``step`` and ``show`` names the state directory (``state_dir``, absolute), which the
reports' ``*_path`` fields are relative to; ``report.json`` leaves it out (a moved state stays whole)."""

from __future__ import annotations

import json
import os

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


def test_init_step_batch_and_show_name_the_state_dir_and_their_paths_resolve_under_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative --state, as a cron job in its own folder gives it
    write_problem(small_lp(), "base.parquet")
    for i in (1, 2, 3):
        write_delta(Delta.concat([Delta.vars([f"x{i + 3}"], cost=[5.0 + i])], base_round=i - 1), f"d{i}.parquet")
    want = str(tmp_path.resolve() / "st")
    code, js, _ = run_main(capsys, "init", "base.parquet", "--state", "st", "--json")
    assert code == 0 and json.loads(js)["state_dir"] == want
    code, js, _ = run_main(capsys, "step", "d1.parquet", "--state", "st", "--json")
    one = json.loads(js)
    assert code == 0 and one["state_dir"] == want
    assert os.path.isfile(os.path.join(one["state_dir"], one["solution_path"]))
    code, js, _ = run_main(capsys, "step", "d2.parquet", "d3.parquet", "--state", "st", "--json")
    batch = json.loads(js)
    assert code == 0 and batch["state_dir"] == want and [r["round"] for r in batch["rounds"]] == [2, 3]
    assert all(os.path.isfile(os.path.join(want, r["duals_path"])) for r in batch["rounds"])
    monkeypatch.setenv("COPTER_STATE", "st")
    code, js, _ = run_main(capsys, "show", "--json")
    assert code == 0 and json.loads(js)["state_dir"] == want
    code, js, _ = run_main(capsys, "show", "--solution", "--changes", "--json")  # helper-179: it had none
    assert code == 0 and json.loads(js)["state_dir"] == want
    stored = json.loads((tmp_path / "st" / one["solution_path"]).parent.joinpath("report.json").read_text())
    assert "state_dir" not in stored and stored["solution_path"] == one["solution_path"]
