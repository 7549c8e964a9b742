"""``--out DIR`` whose output file is the command's own input is refused before any work (exit 2 naming both): ``step
X/solution.parquet --out X`` replaced its delta with the round's solution, ``init X/solution.parquet --out X`` its
base, and in a batch the later delta so replaced failed as "unknown column 'name'", blaming a file copter had
overwritten (helper-170). ``convert``, ``diff -o`` and ``solve -o`` already refused it."""

from __future__ import annotations

import os

import pytest

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp, snapshot


def _delta(path, cost=5.0):
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[cost])], base_round=None), path)


@pytest.fixture
def state(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "base.parquet")
    code, out, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", tmp_path / "st")
    assert code == 0, err
    return tmp_path / "st"


@pytest.mark.parametrize("name", ["solution.parquet", "duals.parquet", "changes.parquet", "report.json"])
def test_step_out_refuses_a_delta_that_is_one_of_its_outputs(tmp_path, capsys, state, name):
    x = tmp_path / "X"
    x.mkdir()
    _delta(x / name)
    before, data = snapshot(state), (x / name).read_bytes()
    code, out, err = run_main(capsys, "step", x / name, "--state", state, "--out", x)
    assert code == 2, err
    assert f"its {name} is the delta {x / name}; writing it would replace the input" in err, err
    assert snapshot(state) == before and (x / name).read_bytes() == data and os.listdir(x) == [name]


def test_a_batch_checks_every_delta_and_a_link_counts(tmp_path, capsys, state):
    x, y = tmp_path / "X", tmp_path / "Y"
    x.mkdir()
    y.mkdir()
    _delta(y / "d1.parquet")
    _delta(y / "later.parquet", 6.0)
    os.symlink(y / "later.parquet", x / "changes.parquet")
    before = snapshot(state)
    code, out, err = run_main(capsys, "step", y / "d1.parquet", x / "changes.parquet", "--state", state, "--out", x)
    assert code == 2 and "its changes.parquet is the delta" in err, err
    assert snapshot(state) == before


def test_init_out_refuses_its_base(tmp_path, capsys):
    x = tmp_path / "X"
    x.mkdir()
    write_problem(small_lp(), x / "solution.parquet")
    code, out, err = run_main(capsys, "init", x / "solution.parquet", "--state", tmp_path / "st", "--out", x)
    assert code == 2 and "its solution.parquet is the base problem" in err, err
    assert not (tmp_path / "st").exists()


def test_other_names_in_the_folder_are_fine(tmp_path, capsys, state):
    x = tmp_path / "X"
    x.mkdir()
    _delta(x / "d1.parquet")
    code, out, err = run_main(capsys, "step", x / "d1.parquet", "--state", state, "--out", x)
    assert code == 0, err
    assert sorted(os.listdir(x)) == ["changes.parquet", "d1.parquet", "duals.parquet", "report.json",
                                     "solution.parquet"]


def test_a_missing_input_is_the_readers_error(tmp_path, capsys, state):
    x = tmp_path / "X"
    x.mkdir()
    code, out, err = run_main(capsys, "step", x / "solution.parquet", "--state", state, "--out", x)
    assert code == 3 and "not found" in err and "replace the input" not in err, err
