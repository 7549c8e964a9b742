"""The relative gap leaves the model's objective constant out of its denominator (``solver.lp.termination.
relative_gap``): a constant moves no optimal point, but counted it loosened every LP test by its own size.

hunt 56: a two-column swap whose MPS carries ``RHS obj -1e5`` (objective constant 1e5) kept round 0's vertex after a
delta that swapped the costs, OPTIMAL after 0 iterations ("the warm start already meets tol: returned unchanged"),
objective 100,002 where the optimum is 100,001; the same model without the constant moved to the new vertex. Here
each engine and the warm path end at the right vertex whatever the constant, cold and warm, from MPS and Parquet."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from formats.io import write_delta
from solver import rounds
from solver.lp.original_kkt import original_kkt
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import run_main

SWAP = """NAME swap
ROWS
 N obj
 E r
COLUMNS
 x1 obj 1 r 1
 x2 obj 2 r 1
RHS
 rhs r 1
 rhs obj {rhs}
BOUNDS
 UP b x1 1
 UP b x2 1
ENDATA
"""


@pytest.mark.parametrize("constant", [0.0, 1e5, -1e5, 1e9])
@pytest.mark.parametrize("engine", ["auto", "pdhg", "alm"])
def test_a_warm_round_leaves_the_old_vertex_whatever_the_constant(tmp_path, capsys, constant, engine):
    base = tmp_path / "swap.mps"
    base.write_text(SWAP.format(rhs=-constant))  # MPS: the objective row's RHS is minus the constant
    st = tmp_path / "st"
    code, out, _ = run_main(capsys, "init", base, "--state", st, "--engine", engine, "--json")
    assert code == 0 and json.loads(out)["objective"] == pytest.approx(1.0 + constant, abs=1e-4), out
    d = Delta.vars(["x1", "x2"], cost=[2.0, 1.0])
    d.base_round = 0
    write_delta(d, tmp_path / "swap.parquet")
    code, out, _ = run_main(capsys, "step", tmp_path / "swap.parquet", "--state", st, "--engine", engine, "--json")
    rep = json.loads(out)
    assert code == 0 and rep["status"] == "OPTIMAL", out
    # the variable part of the objective: 1 (x2 = 1), not round 0's 2 (x1 = 1)
    assert rep["objective"] - constant == pytest.approx(1.0, abs=1e-3), rep
    sol = pq.read_table(st / rep["solution_path"]).to_pydict()
    values = dict(zip(sol["name"], sol["value"], strict=True))
    assert values["x2"] == pytest.approx(1.0, abs=1e-3) and values["x1"] == pytest.approx(0.0, abs=1e-3), values


def test_the_gap_of_a_wrong_vertex_does_not_shrink_with_the_constant():
    """original_kkt's gap at round 0's vertex of the swapped model: the same with any constant (it was 1e-5 / 1.0
    with a constant of 1e5 against 0.33 without one)."""
    from solver.differential.apply import apply_delta
    from solver.model.problem import Problem

    gaps = []
    for constant in (0.0, 1e5, 1e12):
        p, _ = apply_delta(Problem.empty(), Delta.concat([
            Delta.vars(["x1", "x2"], cost=[2.0, 1.0], lower=[0.0, 0.0], upper=[1.0, 1.0]),
            Delta.cons(["r"], lower=[1.0], upper=[1.0]),
            Delta.coefs(var=["x1", "x2"], con=["r", "r"], value=[1.0, 1.0])]))
        p.offset = constant
        kkt = original_kkt(p, np.array([1.0, 0.0]), np.array([1.0]), 1e-4)[0]  # round 0's vertex and dual
        assert kkt.objective_constant == constant
        gaps.append(kkt.gap_rel)
    assert gaps[0] > 1e-2 and gaps == pytest.approx([gaps[0]] * 3, rel=1e-9), gaps


def test_relative_gap_is_shift_invariant():
    from solver.lp.termination import objective_scale, relative_gap

    rng = np.random.default_rng(0)
    for _ in range(200):
        p, d, c = rng.normal(size=3) * 10.0 ** rng.integers(-3, 9, size=3)
        assert relative_gap(p + c, d + c, c) == pytest.approx(relative_gap(p, d), rel=1e-6, abs=1e-12)
        assert objective_scale(p + c, d + c, c) == pytest.approx(1.0 + abs(p) + abs(d), rel=1e-6)


def test_a_parquet_objective_offset_is_a_constant_too(tmp_path):
    """The same swap from Parquet's ``copter.objective_offset``, through the library."""
    from formats.io import write_problem
    from solver.differential.apply import apply_delta
    from solver.model.problem import Problem

    p, _ = apply_delta(Problem.empty(), Delta.concat([
        Delta.vars(["x1", "x2"], cost=[1.0, 2.0], lower=[0.0, 0.0], upper=[1.0, 1.0]),
        Delta.cons(["r"], lower=[1.0], upper=[1.0]),
        Delta.coefs(var=["x1", "x2"], con=["r", "r"], value=[1.0, 1.0])]))
    p.offset = 12_345.0
    write_problem(p, tmp_path / "base.parquet")
    rounds.init(tmp_path / "base.parquet", tmp_path / "st")
    rep = rounds.step(Delta.vars(["x1", "x2"], cost=[2.0, 1.0]), tmp_path / "st", Settings())
    assert rep["status"] == "OPTIMAL" and rep["objective"] == pytest.approx(12_346.0, abs=1e-3), rep
