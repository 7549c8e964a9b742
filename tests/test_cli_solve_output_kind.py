"""``copter solve -o`` writes the solution as Parquet, so a name of another format is refused before solving, exit 2
naming -o, nothing written: ``-o sol.mps`` wrote Parquet under the .mps name (``export -o`` also tells the format
by the extension and refuses one it does not know)."""

from __future__ import annotations

import json

import pytest

from formats.io import write_problem
from tests.helpers import run_main, small_lp


@pytest.mark.parametrize("name", ["sol.mps", "sol.MPS.gz", "sol.csv", "sol"])
def test_solve_output_of_another_format_is_exit_2_naming_o(capsys, tmp_path, name):
    write_problem(small_lp(), tmp_path / "base.parquet")
    code, out, err = run_main(capsys, "solve", tmp_path / "base.parquet", "-o", tmp_path / name, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage" and error["message"] == f"{tmp_path / name}: -o writes the solution as Parquet: name it .parquet or .pq (MPS holds models, not solutions; `copter convert PROBLEM model.mps` writes the model)"
    assert err.count("\n") == 1 and "name it .parquet or .pq" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.parquet"]


@pytest.mark.parametrize("name", ["sol.parquet", "sol.pq"])
def test_solve_output_parquet_is_written(capsys, tmp_path, name):
    write_problem(small_lp(), tmp_path / "base.parquet")
    code, out, _ = run_main(capsys, "solve", tmp_path / "base.parquet", "-o", tmp_path / name, "--json")
    assert code == 0 and json.loads(out)["solution_path"] == str(tmp_path / name)
    assert (tmp_path / name).read_bytes()[:4] == b"PAR1"
