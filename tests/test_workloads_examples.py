"""The examples' generate.py scripts: the files they write replay to the scenario's own rounds."""

from __future__ import annotations

import pytest

from examples.lb import generate as lb_generate
from examples.sia import generate as sia_generate
from examples.te import generate as te_generate
from formats.io import read_delta, read_problem
from solver.differential import apply_delta
from solver.workloads.lb import LBScenario
from tests.helpers import require_data


def _replay(folder, rounds, base="base.parquet"):
    p = read_problem(folder / base)
    for r in range(1, rounds + 1):
        d = read_delta(folder / f"delta_{r:04d}.parquet")
        assert d.base_round == r - 1
        p, _ = apply_delta(p, d)
    return p


def test_lb_generate_writes_a_stream_equal_to_the_scenario(tmp_path):
    out = tmp_path / "lb"
    assert lb_generate.main(["--out", str(out), "--rounds", "2", "--scale", "32x4", "--seed", "3"]) == 0
    sc = LBScenario(32, 4, seed=3)
    sc.base()
    sc.next_delta(1)
    sc.next_delta(2)
    assert _replay(out, 2).equals(sc.problem())


def test_sia_generate_synthetic_and_mps_base(tmp_path):
    out = tmp_path / "sia"
    assert sia_generate.main(["--out", str(out), "--rounds", "2", "--scale", "64", "--mps"]) == 0
    p = _replay(out, 2, "base.mps")
    assert p.n_cols > 0 and p.is_mip


def test_sia_generate_from_the_real_trace(tmp_path):
    require_data("traces/sia")
    out = tmp_path / "sia"
    assert sia_generate.main(["--out", str(out), "--rounds", "2", "--scale", "64",
                              "--trace", "newtrace/workload-1.csv", "--jobs", "6"]) == 0
    p = _replay(out, 2)
    assert {n.split("/")[1] for n in p.col_names.tolist()} <= {"T4", "V100", "A100", "RTX6000", "RTX2080Ti"}


def test_te_generate_b4_with_real_matrices(tmp_path):
    require_data("topologies")
    out = tmp_path / "te"
    assert te_generate.main(["--out", str(out), "--rounds", "2", "--topology", "teal_B4.json",
                             "--tm", "teal_B4_real"]) == 0
    p = _replay(out, 2)
    assert p.n_rows == 38 + 12 * 11


@pytest.mark.parametrize("args", [["--scale", "2"]])
def test_te_generate_rejects_a_too_small_ring(tmp_path, args, capsys):
    # a usage error: one error line and exit 2 (copter's code), not a traceback
    assert te_generate.main(["--out", str(tmp_path / "x"), *args]) == 2
    assert capsys.readouterr().err.startswith("error: a TE ring needs at least 3 nodes")
