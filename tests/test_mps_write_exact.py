"""MPS writing keeps the model exactly where HiGHS 1.16's writer did not (session 33's hunt, helper-161;
``formats.mps_write_fixes``): an empty zero-cost column's integrality (markers), a ranged row's lower bound
(u - (u - l) != l: [1.8, 5] -> 1.7999999999999998, [0.3, 1e15] -> 0.25, [-2.333, 3.25e18] -> 0), and an empty box
[0, u < 0] (read back as [-inf, u] by the negative-UP rule). Property test: random models written and read back,
by copter's reader and by HiGHS's own; the fix's vectorised choices checked against plain loops."""

from __future__ import annotations

import highspy
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.io import write_problem
from formats.mps import read_mps, write_mps
from formats.mps_write_fixes import empty_marker_columns, ranged_row_forms
from solver.model.errors import ValidationError
from solver.model.problem import Problem

VALUES = [0.0, 0.1, 0.3, 1.8, -2.333, 5.0, 7.5, 1e3, -1e6, 1e15, 3.25e18, -3.25e18, 1 / 3, -0.7]


def _problem(draw_rows, draw_cols, seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    m, n = draw_rows, draw_cols
    dense = np.where(rng.random((m, n)) < 0.4, rng.choice([1.0, -2.0, 0.5, 3.0], (m, n)), 0.0)
    dense[:, rng.random(n) < 0.3] = 0.0  # empty columns
    cost = np.where(rng.random(n) < 0.5, 0.0, rng.choice([-1.0, 2.0, 0.25], n))
    integer = rng.random(n) < 0.5
    lo = rng.choice([0.0, -1.0, -np.inf, 0.0], n)
    up = np.where(rng.random(n) < 0.2, rng.choice([-2.0, -0.5], n), rng.choice([10.0, np.inf, 3.0], n))
    up = np.where((lo == -1.0) & (up < -1.0), -1.0, up)  # keep lo <= up unless lo is 0 (the empty box case)
    a, b = rng.choice(VALUES, m), rng.choice(VALUES, m)
    rl, ru = np.minimum(a, b), np.maximum(a, b)
    kind = rng.integers(0, 4, m)
    rl = np.where(kind == 1, -np.inf, rl)
    ru = np.where(kind == 2, np.inf, ru)
    ru = np.where(kind == 3, rl, ru)
    return Problem.from_arrays(cost=cost, col_lower=lo, col_upper=up, row_lower=rl, row_upper=ru,
                               matrix=sp.csc_array(dense), integrality=integer,
                               col_names=[f"c{j}" for j in range(n)], row_names=[f"r{i}" for i in range(m)])


def _highs_read(path):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    return h.getLp()


def _expected_bounds(p: Problem):
    lo, up = p.col_lower.copy(), p.col_upper.copy()
    it = p.integrality.astype(bool)
    lo[it], up[it] = np.ceil(lo[it]), np.floor(up[it])  # written rounded inward (write_mps's docstring)
    return lo, up


@given(st.integers(1, 6), st.integers(1, 8), st.integers(0, 2**31))
@settings(max_examples=150, deadline=None)
def test_written_mps_reads_back_as_the_same_model(tmp_path_factory, m, n, seed):
    p = _problem(m, n, seed)
    path = tmp_path_factory.mktemp("w") / "m.mps"
    write_mps(p, path)
    rl, ru = p.row_lower.copy(), p.row_upper.copy()
    rows, form, r, exact = ranged_row_forms(rl, ru)
    for i, f, v in zip(rows[~exact], form[~exact], r[~exact], strict=True):  # bounds no MPS range holds exactly
        assert min(abs(rl[i] + v - ru[i]), abs(ru[i] - v - rl[i])) <= np.spacing(v)  # moved by an ulp at most
        rl[i], ru[i] = (rl[i], rl[i] + v) if f == 1 else (ru[i] - v, ru[i])
    lo, up = _expected_bounds(p)
    lp = _highs_read(path)  # HiGHS's reader: the file itself says the model
    it = [lp.integrality_[j] == highspy.HighsVarType.kInteger for j in range(n)] if len(lp.integrality_) else [False] * n
    assert it == p.integrality.astype(bool).tolist()
    assert np.array_equal(np.asarray(lp.row_lower_), np.where(np.isinf(rl), -highspy.kHighsInf, rl))
    assert np.array_equal(np.asarray(lp.row_upper_), np.where(np.isinf(ru), highspy.kHighsInf, ru))
    q = read_mps(path)  # copter's reader, with its negative-UP rule
    assert q.integrality.tolist() == p.integrality.tolist()
    assert np.array_equal(q.col_lower, lo) and np.array_equal(q.col_upper, up)
    assert np.array_equal(q.row_lower, rl) and np.array_equal(q.row_upper, ru)
    assert np.array_equal(q.cost, p.cost) and np.array_equal(q.a_data, p.a_data)


@pytest.mark.parametrize("lo,u", [(1.8, 5.0), (0.3, 1e15), (-2.333, 3.25e18), (-3.25e18, 2.333), (-5.0, -1.8)])
def test_ranged_rows_round_trip_exactly(tmp_path, lo, u):
    p = Problem.from_arrays(cost=[1.0], col_lower=[0.0], col_upper=[1.0], row_lower=[lo], row_upper=[u],
                            matrix=np.ones((1, 1)))
    write_mps(p, tmp_path / "r.mps")
    q = read_mps(tmp_path / "r.mps")
    assert (q.row_lower[0], q.row_upper[0]) == (lo, u)


def test_ranged_row_forms_match_a_plain_loop():
    rng = np.random.default_rng(11)
    lo = rng.choice(VALUES, 400) * rng.choice([1.0, 1e-3, 7.0], 400)
    up = lo + np.abs(rng.choice(VALUES, 400))
    rows, form, r, exact = ranged_row_forms(lo, up)
    assert rows.size > 20 and exact.all()  # the values make many rows HiGHS's L form does not hold
    for k, i in enumerate(rows.tolist()):  # each row's range reads back exactly in the form chosen
        a, b = float(lo[i]), float(up[i])
        assert b - (b - a) != a  # HiGHS's own range was not exact
        assert form[k] in (0, 1) and r[k] > 0
        assert (b - r[k] == a) if form[k] == 0 else (a + r[k] == b)
    exact = np.isfinite(lo) & (lo < up) & (up - (up - lo) == lo)
    assert not np.isin(np.flatnonzero(exact), rows).any()  # rows HiGHS writes exactly are left alone


def test_a_ranged_row_no_range_holds_exactly_moves_least_and_is_named(tmp_path):
    # bounds of opposite signs whose range (1.07e8) has a coarser ulp (1.5e-8) than the lower bound's (7.5e-9): no
    # range near u - l gives u - R == l or l + R == u (found by a random search)
    import json

    from tests.helpers import cli_json

    lo, up = -37225003.02445897, 69341088.17787246
    p = Problem.from_arrays(cost=[1.0], col_lower=[-1.0], col_upper=[1.0], row_lower=[lo], row_upper=[up],
                            matrix=np.ones((1, 1)), row_names=["mix"])
    write_problem(p, tmp_path / "x.parquet")
    code, out = cli_json("convert", tmp_path / "x.parquet", tmp_path / "x.mps", "--json")
    warnings = json.loads(out)["warnings"]  # in --json too, naming the row, not a temporary file
    assert code == 0 and len(warnings) == 1, warnings
    assert "1 ranged row(s)" in warnings[0] and f"'mix' [{lo!r}, {up!r}]" in warnings[0] and "np.float64" not in warnings[0]
    assert ".tmp" not in warnings[0]
    q = read_mps(tmp_path / "x.mps")
    moved = abs(q.row_lower[0] - lo) + abs(q.row_upper[0] - up)
    assert 0 < moved <= np.spacing(up - lo)
    assert f"[{float(q.row_lower[0])!r}, {float(q.row_upper[0])!r}]" in warnings[0]  # the bounds it says are the ones read back


def test_an_empty_column_named_like_highs_marker_lines_keeps_its_integrality(tmp_path):
    # HiGHS names its marker lines MARK0000, MARK0001, ...: the fix wrapped the marker line instead of the column
    # and wrote a file neither reader could read (helper-162)
    p = Problem.from_arrays(cost=[1.0, 1.0, 0.0], col_lower=[0.0] * 3, col_upper=[5.0] * 3, row_lower=[0.0],
                            row_upper=[10.0], matrix=np.array([[1.0, 1.0, 0.0]]), col_names=["a", "b", "MARK0001"],
                            row_names=["r"], integrality=[True, False, True])
    write_mps(p, tmp_path / "m.mps")
    assert read_mps(tmp_path / "m.mps").integrality.tolist() == [True, False, True]
    assert _highs_read(tmp_path / "m.mps").num_col_ == 3


def test_a_row_with_lower_above_upper_is_refused(tmp_path):
    # HiGHS wrote L with a negative range, read back as the feasible row [1, 3] (the Python API only: copter's readers
    # refuse such a row)
    p = Problem.from_arrays(cost=[1.0], col_lower=[0.0], col_upper=[9.0], row_lower=[0.0], row_upper=[3.0],
                            matrix=np.ones((1, 1)), row_names=["bad"])
    p.row_lower[0] = 5.0
    with pytest.raises(ValidationError, match="'bad' has lower bound 5.0 > upper bound 3.0"):
        write_mps(p, tmp_path / "b.mps")
    assert not (tmp_path / "b.mps").exists()


def test_empty_marker_columns_matches_a_plain_loop():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 12))
        integer, empty = rng.random(n) < 0.5, rng.random(n) < 0.4
        state, want = False, []
        for j in range(n):  # HiGHS's writer: only a column it writes entries for moves the marker state
            if empty[j]:
                if integer[j] != state:
                    want.append(j)
            else:
                state = bool(integer[j])
        assert empty_marker_columns(integer, empty).tolist() == want


def test_an_empty_box_with_a_negative_upper_bound_stays_empty(tmp_path):
    p = Problem.from_arrays(cost=[1.0, 1.0], col_lower=[0.0, 0.0], col_upper=[-2.0, -1.0], row_lower=[-10.0],
                            row_upper=[np.inf], matrix=np.ones((1, 2)), integrality=[False, True])
    write_mps(p, tmp_path / "b.mps")
    q = read_mps(tmp_path / "b.mps")
    assert q.col_lower.tolist() == [0.0, 0.0] and q.col_upper.tolist() == [-2.0, -1.0]
