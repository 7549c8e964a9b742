"""A copter.* metadata key given twice with different values is refused, not resolved by pyarrow's dict (first
wins): hunt 37 solved the same table as max or min by the order of two ``copter.sense`` pairs, and applied a delta
whose ``copter.base_round`` said both 0 and 5 as a delta on round 0."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from copter_cli.app import app
from formats.arrow_metadata import conflicting_keys, metadata_pairs
from formats.io import read_problem
from formats.parquet import read_delta
from solver.model.errors import FormatError
from tests.helpers import snapshot

PROBLEM = pa.table({"kind": ["var", "con", "coef"], "var": ["x", None, "x"], "con": [None, "c", "c"],
                    "value": [1.0, None, 1.0], "upper": [None, 4.0, None]})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.binary(max_size=40), st.binary(max_size=200)), max_size=12))
def test_metadata_pairs_are_every_stored_pair_in_order(pairs):
    schema = pa.schema([("a", pa.int64())]).with_metadata(pa.KeyValueMetadata(pairs) if pairs else None)
    assert metadata_pairs(schema) == pairs


def test_a_schema_without_metadata_has_no_pairs():
    assert metadata_pairs(pa.schema([("a", pa.int64())])) == [] and conflicting_keys(pa.schema([])) == {}


def _write(path, table, pairs):
    pq.write_table(table.replace_schema_metadata(pa.KeyValueMetadata(pairs)), path)


@pytest.mark.parametrize("first,second", [(b"max", b"min"), (b"min", b"max")])
def test_a_sense_given_twice_differently_is_refused_in_either_order(tmp_path, first, second):
    p = tmp_path / "p.parquet"
    _write(p, PROBLEM, [(b"copter.format", b"problem"), (b"copter.sense", first), (b"copter.sense", second)])
    with pytest.raises(FormatError, match=r"gives copter.sense 2 times with different values") as err:
        read_problem(p)
    assert f"'{first.decode()}', '{second.decode()}'" in str(err.value)


def test_a_key_repeated_with_one_value_and_other_keys_repeated_are_read(tmp_path):
    p = tmp_path / "p.parquet"
    _write(p, PROBLEM, [(b"copter.format", b"problem"), (b"copter.sense", b"max"), (b"copter.sense", b"max"),
                        (b"owner", b"a"), (b"owner", b"b")])
    assert read_problem(p).sense == -1


def test_a_delta_with_two_base_rounds_changes_no_state(tmp_path):
    runner = CliRunner()
    _write(tmp_path / "base.parquet", PROBLEM, [(b"copter.format", b"problem")])
    st_dir = tmp_path / "s"
    assert runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(st_dir)]).exit_code == 0
    d = tmp_path / "d.parquet"
    _write(d, pa.table({"kind": ["var"], "var": ["x"], "value": [-1.5]}),
           [(b"copter.base_round", b"0"), (b"copter.base_round", b"5")])
    with pytest.raises(FormatError, match="copter.base_round 2 times"):
        read_delta(d)
    before = snapshot(st_dir)
    res = runner.invoke(app, ["step", str(d), "--state", str(st_dir)])
    assert res.exit_code == 3 and "copter.base_round" in res.output
    assert snapshot(st_dir) == before
