"""Parquet long format: round trips, what other writers produce (pandas, dictionary, large_string,
null-typed columns), metadata, NaN vs null, and the error paths."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formats.io import read_delta, read_problem, write_delta, write_problem
from formats.parquet import problem_to_delta
from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.errors import FormatError, InputError, UsageError, ValidationError
from solver.model.problem import Problem
from tests.helpers import problem_and_delta, random_problem


def _base() -> Problem:
    return Problem.from_arrays(cost=[1.0, 2.0], col_lower=[0, 0], col_upper=[4, 4], row_lower=[1],
                               row_upper=[3], matrix=np.array([[1.0, 1.0]]), col_names=["a", "b"],
                               row_names=["r"])


@settings(max_examples=40, deadline=None)
@given(problem_and_delta())
def test_delta_parquet_round_trip_is_exact_including_metadata(tmp_path_factory, pd_):
    _, d = pd_
    d.base_round = 7
    path = tmp_path_factory.mktemp("d") / "d.parquet"
    write_delta(d, path)
    back = read_delta(path)
    assert back.table.cast(d.table.schema).equals(d.table)
    assert (back.sense, back.offset, back.base_round, back.format) == (d.sense, d.offset, 7, "delta")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 12), st.integers(0, 9))
def test_problem_parquet_round_trip_is_exact(tmp_path_factory, seed, n, m):
    p = random_problem(np.random.default_rng(seed), n, m)
    path = tmp_path_factory.mktemp("p") / "p.parquet"
    write_problem(p, path)
    q = read_problem(path)
    assert q.equals(p)
    assert pq.read_metadata(path).metadata[b"copter.format"] == b"problem"


def test_pandas_written_delta_with_null_typed_categorical_and_missing_columns_applies(tmp_path):
    df = pd.DataFrame({"kind": pd.Categorical(["var", "var", "coef"]), "var": ["a", "c", "c"],
                       "con": [None, None, "r"], "value": [5.0, None, 2.0], "upper": [None, None, None]})
    df.to_parquet(tmp_path / "d.parquet")  # no lower/integer columns; 'upper' is Arrow type null
    raw = pq.read_table(tmp_path / "d.parquet")
    assert pa.types.is_null(raw.schema.field("upper").type) and pa.types.is_dictionary(raw.schema.field("kind").type)
    q, _ = apply_delta(_base(), read_delta(tmp_path / "d.parquet"))
    assert q.col_names.tolist() == ["a", "b", "c"] and q.cost.tolist() == [5.0, 2.0, 0.0]
    assert q.col_upper.tolist() == [4.0, 4.0, np.inf] and q.matrix().toarray().tolist() == [[1, 1, 2]]


def test_large_string_and_dictionary_name_columns_are_normalized(tmp_path):
    t = pa.table({"kind": pa.array(["con", "coef"], pa.large_string()),
                  "var": pa.array([None, "b"], pa.large_string()),
                  "con": pa.array(["r", "r"]).dictionary_encode(),
                  "value": pa.array([None, 7.0]), "lower": pa.array([0.5, None], pa.float32()),
                  "integer": pa.array([None, None], pa.null())})
    pq.write_table(t, tmp_path / "d.parquet")
    q, _ = apply_delta(_base(), read_delta(tmp_path / "d.parquet"))
    assert q.row_lower.tolist() == [0.5] and q.matrix().toarray().tolist() == [[1, 7]]


def test_null_means_unchanged_but_nan_is_an_error_naming_the_row(tmp_path):
    t = pa.table({"kind": ["var", "var"], "var": ["a", "b"], "value": pa.array([None, np.nan])})
    pq.write_table(t, tmp_path / "d.parquet")
    with pytest.raises(ValidationError, match="NaN") as e:
        apply_delta(_base(), read_delta(tmp_path / "d.parquet"))
    assert e.value.row == 1 and e.value.file.endswith("d.parquet")


def test_zero_row_file_is_a_no_change_delta(tmp_path):
    pd.DataFrame({"kind": pd.Series([], dtype=object)}).to_parquet(tmp_path / "d.parquet")
    d = read_delta(tmp_path / "d.parquet")
    q, info = apply_delta(_base(), d)
    assert len(d) == 0 and q.equals(_base()) and not info.changed_fields


def test_metadata_sets_sense_offset_and_base_round_and_bad_metadata_is_refused(tmp_path):
    t = pa.table({"kind": ["var"], "var": ["a"]})
    meta = {b"copter.format": b"delta", b"copter.version": b"1", b"copter.sense": b"max",
            b"copter.objective_offset": b"2.5", b"copter.base_round": b"3"}
    pq.write_table(t.replace_schema_metadata(meta), tmp_path / "d.parquet")
    d = read_delta(tmp_path / "d.parquet")
    assert (d.sense, d.offset, d.base_round) == (-1, 2.5, 3)
    for key, val, msg in ((b"copter.version", b"2", "version"), (b"copter.sense", b"up", "sense"),
                          (b"copter.objective_offset", b"nan", "offset"), (b"copter.base_round", b"x", "base_round")):
        pq.write_table(t.replace_schema_metadata({**meta, key: val}), tmp_path / "bad.parquet")
        with pytest.raises(FormatError, match=msg):
            read_delta(tmp_path / "bad.parquet")


@pytest.mark.parametrize("key,near", [(b"copter.offset", "copter.objective_offset"), (b"copter.Sense", "copter.sense"),
                                      (b"COPTER.base-round", "copter.base_round"), (b"copter.colour", None)])
def test_an_unknown_copter_metadata_key_is_refused_naming_it(tmp_path, key, near):
    # a misspelt key was kept in Delta.meta and the delta applied without it, exit 0 (helper-161)
    t = pa.table({"kind": ["var"], "var": ["a"]})
    pq.write_table(t.replace_schema_metadata({b"copter.format": b"delta", key: b"1"}), tmp_path / "d.parquet")
    with pytest.raises(FormatError, match="unknown metadata key") as e:
        read_delta(tmp_path / "d.parquet")
    assert e.value.entity == key.decode() and (near is None or f"did you mean {near!r}" in str(e.value)), e.value


def test_every_copter_key_the_code_names_is_read_or_passed():
    # a key copter writes but the reader did not know would make copter refuse its own files
    import re
    from pathlib import Path

    from formats.parquet import _INTERPRETED, PASSED_KEYS

    root = Path(__file__).resolve().parents[1]
    named = {m for d in ("formats", "solver", "copter_cli") for f in (root / d).rglob("*.py")
             for m in re.findall(r"[\"']copter\.([A-Za-z_0-9]+)[\"']", f.read_text())}
    assert named and {f"copter.{k}" for k in named} <= set(_INTERPRETED) | set(PASSED_KEYS), named


def test_copters_own_passed_keys_and_other_prefixes_are_kept(tmp_path):
    t = pa.table({"kind": ["var"], "var": ["a"]})
    meta = {b"copter.format": b"problem", b"copter.round": b"4", b"copter.name": b"m", b"team.owner": b"x"}
    pq.write_table(t.replace_schema_metadata(meta), tmp_path / "p.parquet")
    from formats.parquet import read_delta as read_any

    d = read_any(tmp_path / "p.parquet", expect=None)
    assert {"copter.round": "4", "copter.name": "m", "team.owner": "x"}.items() <= d.meta.items()


def test_not_parquet_truncated_and_missing_files_are_input_errors_naming_the_file(tmp_path):
    write_delta(Delta.vars(["a"], cost=[1.0]), tmp_path / "ok.parquet")
    data = (tmp_path / "ok.parquet").read_bytes()
    (tmp_path / "trunc.parquet").write_bytes(data[: len(data) // 2])
    for name in ("trunc.parquet",):
        with pytest.raises(FormatError, match="Parquet") as e:
            read_delta(tmp_path / name)
        assert e.value.file.endswith(name)
    with pytest.raises(InputError, match="not found"):
        read_delta(tmp_path / "missing.parquet")
    pq.write_table(pa.table({"value": [1.0]}), tmp_path / "nokind.parquet")
    with pytest.raises(FormatError, match="kind"):
        read_delta(tmp_path / "nokind.parquet")
    pq.write_table(pa.table({"kind": ["var"], "var": ["a"], "value": ["text"]}), tmp_path / "type.parquet")
    with pytest.raises(FormatError, match="'value'"):
        read_delta(tmp_path / "type.parquet")


def test_problem_file_with_empty_box_is_a_validation_error_naming_the_entity(tmp_path):
    d = Delta.vars(["a"], lower=[3.0], upper=[1.0])
    d.format = "problem"
    write_delta(d, tmp_path / "p.parquet")
    with pytest.raises(ValidationError, match="lower bound 3.0 > upper bound 1.0") as e:
        read_problem(tmp_path / "p.parquet")
    assert e.value.entity == "a" and e.value.row == 0


def test_problem_files_are_dictionary_encoded_and_keep_sense_and_offset(tmp_path):
    p = random_problem(np.random.default_rng(0), 30, 10).replace(sense=-1, offset=-0.1)
    d = problem_to_delta(p)
    assert pa.types.is_dictionary(d.table.schema.field("var").type)
    write_problem(p, tmp_path / "p.parquet")
    q = read_problem(tmp_path / "p.parquet")
    assert q.equals(p) and q.sense == -1 and q.offset == -0.1


def test_unknown_extension_is_a_usage_error():
    with pytest.raises(UsageError, match="extension"):
        read_problem("model.lp")


@settings(max_examples=20, deadline=None)
@given(problem_and_delta(), st.booleans())
def test_pandas_round_trip_of_any_valid_delta_applies_identically(tmp_path_factory, pd_, categorical):
    p, d = pd_
    try:
        expected, _ = apply_delta(p, d)
    except ValidationError:
        return
    df = d.table.to_pandas()  # float nulls become NaN here; pandas writes them back as nulls
    if categorical:
        df["kind"] = df["kind"].astype("category")
        df["var"] = df["var"].astype("category")
    path = tmp_path_factory.mktemp("pd") / "d.parquet"
    df.to_parquet(path)
    back = read_delta(path)
    back.sense, back.offset = d.sense, d.offset
    got, _ = apply_delta(p, back)
    assert got.equals(expected)


def test_delta_from_a_pandas_frame_treats_missing_values_like_to_parquet_does(tmp_path):
    df = pd.DataFrame({"kind": ["var", "var", "con", "coef"], "var": ["a", "z", None, "z"],
                       "con": [None, None, "r", "r"], "value": [np.nan, 3.0, np.nan, 1.0],
                       "upper": [9.0, np.nan, 2.5, np.nan]})
    d = Delta.from_frame(df)
    df.to_parquet(tmp_path / "d.parquet")
    q1, _ = apply_delta(_base(), d)
    q2, _ = apply_delta(_base(), read_delta(tmp_path / "d.parquet"))
    assert q1.equals(q2) and q1.cost.tolist() == [1.0, 2.0, 3.0] and q1.col_upper.tolist() == [9.0, 4.0, np.inf]
    with pytest.raises(ValidationError, match="NaN"):  # numpy NaN stays an error
        apply_delta(_base(), Delta.vars(["a"], cost=np.array([np.nan])))


def test_integer_column_typed_int_accepts_0_1_and_null_but_refuses_2_naming_the_row(tmp_path):
    base = {"kind": ["var", "var", "var"], "var": ["a", "b", "c"]}
    pq.write_table(pa.table({**base, "integer": pa.array([1, 0, None], pa.int64())}), tmp_path / "ok.parquet")
    assert read_delta(tmp_path / "ok.parquet").table.column("integer").to_pylist() == [True, False, None]
    pq.write_table(pa.table({**base, "integer": pa.array([1, None, 2], pa.int8())}), tmp_path / "bad.parquet")
    with pytest.raises(ValidationError, match="holds 2") as e:
        read_delta(tmp_path / "bad.parquet")
    assert e.value.row == 2 and e.value.file == str(tmp_path / "bad.parquet")
    from typer.testing import CliRunner

    from copter_cli.app import app

    res = CliRunner().invoke(app, ["convert", str(tmp_path / "bad.parquet"), str(tmp_path / "o.mps")])
    assert res.exit_code == 3 and "bad.parquet: row 2:" in res.output and "Traceback" not in res.output


def test_step_with_a_misspelt_copter_key_exits_3_and_leaves_the_state(tmp_path):
    import json

    from tests.helpers import cli_json, small_lp_state, snapshot

    st, _ = small_lp_state(tmp_path)
    t = pa.table({"kind": ["var"], "var": ["x1"], "value": [0.5]})
    pq.write_table(t.replace_schema_metadata({b"copter.format": b"delta", b"copter.offset": b"100"}),
                   tmp_path / "typo.parquet")
    before = snapshot(st)
    code, out = cli_json("step", tmp_path / "typo.parquet", "--state", st, "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["kind"] == "format" and "'copter.offset'" in err["message"], out
    assert "did you mean 'copter.objective_offset'" in err["message"]
    assert snapshot(st) == before


@pytest.mark.parametrize("typ", [pa.int64(), pa.uint64()])
def test_64_bit_integer_numbers_are_read_exactly_and_one_float64_cannot_hold_is_refused_naming_its_row(tmp_path, typ):
    # helper-212: 2^60 (which float64 holds) was refused by pyarrow's safe cast, naming no row; the README promises
    # integers read exactly and only one float64 cannot hold refused
    base = {"kind": ["var", "var", "var"], "var": ["a", "b", "c"]}
    big = [2 ** 60, None, 2 ** 53] if typ == pa.int64() else [2 ** 63 + 2 ** 40, None, 7]
    pq.write_table(pa.table({**base, "upper": pa.array(big, typ)}), tmp_path / "ok.parquet")
    got = read_delta(tmp_path / "ok.parquet").table.column("upper").to_pylist()
    assert got == [float(v) if v is not None else None for v in big] and got[0] == big[0]
    for bad in ([1, 2 ** 53 + 1, None], [1, 2, 2 ** 63 - 1] if typ == pa.int64() else [1, 2, 2 ** 64 - 1]):
        pq.write_table(pa.table({**base, "upper": pa.array(bad, typ)}), tmp_path / "bad.parquet")
        row = 1 if bad[1] > 2 else 2
        with pytest.raises(ValidationError, match=f"holds the integer {bad[row]}, which float64 cannot hold") as e:
            read_delta(tmp_path / "bad.parquet")
        assert e.value.row == row and e.value.entity == base["var"][row]
