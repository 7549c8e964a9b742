"""A nonzero cost, bound or offset below 2.2e-308 in magnitude (a subnormal float) is refused on every way in, as the
MPS reader refuses it: a Parquet problem holding 5e-324 was accepted, and ``convert``/``export`` then wrote an MPS
file that copter's own reader refused (helper-186, session 46). An empty ``copter.format`` is refused like every
other empty copter.* key (it was read as absent)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from solver.model.errors import ValidationError
from solver.model.problem import TINY_VALUE, Problem, tiny_nonzero
from tests.helpers import run_main, small_lp_state, snapshot

SUBNORMALS = (5e-324, -1e-310, 1e-308)


def _problem_file(path, value, field):
    cols = {"kind": ["var", "con", "coef"], "var": ["x", None, "x"], "con": [None, "c", "c"],
            "value": [1.0, None, 1.0], "lower": [None, 1.0, None], "upper": [3.0, None, None]}
    row = 1 if field == "lower" else 0
    cols[field][row] = value
    pq.write_table(pa.table(cols).replace_schema_metadata({"copter.format": "problem"}), path)


@pytest.mark.parametrize("field", ["value", "upper", "lower"])
@pytest.mark.parametrize("value", SUBNORMALS)
def test_a_parquet_problem_with_a_subnormal_is_refused(tmp_path, capsys, field, value):
    src = tmp_path / "sub.parquet"
    _problem_file(src, value, field)
    code, out, err = run_main(capsys, "convert", src, tmp_path / "sub.mps")
    assert code == 3 and "below 2.2e-308" in err and repr(value) in err, err
    assert not (tmp_path / "sub.mps").exists()


def test_the_smallest_normal_magnitudes_pass_and_round_trip_through_mps(tmp_path, capsys):
    src = tmp_path / "ok.parquet"
    _problem_file(src, TINY_VALUE, "value")  # 2.2250738585072014e-308: written at 1e-308 or more
    assert run_main(capsys, "convert", src, tmp_path / "ok.mps")[0] == 0
    assert run_main(capsys, "convert", tmp_path / "ok.mps", tmp_path / "back.parquet")[0] == 0


@pytest.mark.parametrize("field", ["value", "upper"])
def test_a_delta_with_a_subnormal_changes_nothing(tmp_path, capsys, field):
    st, _ = small_lp_state(tmp_path)
    d = tmp_path / "d.parquet"
    cols = {"kind": ["var"], "var": ["x3"], "value": [None], "upper": [None]}
    cols[field] = [5e-324]
    pq.write_table(pa.table({**cols, "value": pa.array(cols["value"], pa.float64()),
                             "upper": pa.array(cols["upper"], pa.float64())}), d)
    before = snapshot(st)
    code, _, err = run_main(capsys, "step", d, "--state", st)
    assert code == 3 and "below 2.2e-308" in err and "x3" in err, err
    assert snapshot(st) == before


def _step_with_metadata(tmp_path, capsys, meta: dict) -> str:
    """Step a one-cost delta carrying ``meta`` on a small state: exit 3 and the state unchanged; the error text."""
    st, _ = small_lp_state(tmp_path)
    d = tmp_path / "m.parquet"
    pq.write_table(pa.table({"kind": ["var"], "var": ["x3"], "value": [5.0]}).replace_schema_metadata(meta), d)
    before = snapshot(st)
    code, _, err = run_main(capsys, "step", d, "--state", st)
    assert code == 3 and snapshot(st) == before, err
    return err


def test_a_subnormal_offset_is_refused(tmp_path, capsys):
    err = _step_with_metadata(tmp_path, capsys, {"copter.objective_offset": "5e-324"})
    assert "objective offset" in err and "below 2.2e-308" in err, err


@pytest.mark.parametrize("text", ["1e-400", "2e-324", "-0.0001e-330"])
def test_an_offset_that_parses_to_zero_is_refused_not_read_as_zero(tmp_path, capsys, text):
    """helper-235: 1e-310 was refused, 1e-400 and 2e-324 (which float() takes for 0) passed without a word."""
    err = _step_with_metadata(tmp_path, capsys, {"copter.objective_offset": text})
    assert "copter.objective_offset" in err and "below 2.2e-308" in err, err


@pytest.mark.parametrize("text", ["0", "-0.0", "0e-400", "0.000"])
def test_an_offset_of_zero_still_reads(tmp_path, text):
    from formats.io import read_delta

    d = tmp_path / "z.parquet"
    pq.write_table(pa.table({"kind": ["var"], "var": ["x3"], "value": [5.0]}).replace_schema_metadata(
        {"copter.format": "delta", "copter.version": "1", "copter.objective_offset": text}), d)
    assert read_delta(d).offset == 0.0


def test_from_arrays_refuses_a_subnormal_bound():
    with pytest.raises(ValidationError, match="row upper bound .*below 2.2e-308") as ex:
        Problem.from_arrays(cost=[1.0], matrix=np.array([[1.0]]), row_lower=[-np.inf], row_upper=[1e-320],
                            col_lower=[0.0], col_upper=[1.0])
    assert "r0" in str(ex.value) or ex.value.entity


def test_tiny_nonzero_is_exactly_the_nonzero_subnormal_range():
    a = np.array([0.0, -0.0, 5e-324, -5e-324, np.nextafter(TINY_VALUE, 0), TINY_VALUE, -TINY_VALUE, 1.0, np.inf])
    assert tiny_nonzero(a).tolist() == [False, False, True, True, True, False, False, False, False]


def test_an_empty_format_key_is_refused(tmp_path, capsys):
    assert "copter.format is ''" in _step_with_metadata(tmp_path, capsys, {"copter.format": ""})
