"""A Parquet file of the wrong kind is refused, naming it and its ``copter.format`` (exit 3, nothing changed).

``copter step PROBLEM.parquet`` used to merge a problem file into the state as if it were a delta (a
DUAL_INFEASIBLE round, exit 4), and ``copter init DELTA.parquet`` solved the delta as a base ("unbounded",
exit 4). The metadata decides where present; a file without ``copter.format`` (written by the user's own
pyarrow/pandas) is read by its rows: it keeps working as a delta, and as a problem unless it drops
entities (``drop_var``/``drop_con`` rows) or names a ``copter.base_round``, which only a delta does.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats import parquet
from formats.io import read_delta, read_problem, write_delta, write_problem
from solver.model.delta import Delta
from solver.model.errors import FormatError
from tests.helpers import runner_error, small_lp, small_lp_state, snapshot


def _delta(path, base_round=0):
    d = Delta.concat([Delta.vars(["x0"], cost=[0.5])], base_round=base_round)
    write_delta(d, path)
    return path


def _plain_write(delta: Delta, path, meta: dict | None = None):
    """The table as a user's own tool writes it: no ``copter.*`` metadata (or only ``meta``)."""
    pq.write_table(delta.table.replace_schema_metadata(meta), path)
    return path


@pytest.fixture
def state(tmp_path):
    return small_lp_state(tmp_path)[0]


def test_step_of_a_problem_file_exits_3_naming_its_format_and_keeps_the_state(tmp_path, state):
    base = tmp_path / "base.parquet"
    before = snapshot(state)
    res = CliRunner().invoke(app, ["step", str(base), "--state", str(state), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["kind"] == "format", res.output
    assert err["file"] == str(base)
    assert "copter problem (copter.format=problem), not a delta" in err["message"]
    assert "copter init" in err["message"]
    assert snapshot(state) == before


def test_step_of_a_problem_file_on_stdin_exits_3(tmp_path, state, monkeypatch):
    base = tmp_path / "base.parquet"
    monkeypatch.setattr(parquet, "_STDIN_BYTES", [base.read_bytes()])
    before = snapshot(state)
    res = CliRunner().invoke(app, ["step", "-", "--state", str(state), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT and "copter.format=problem" in err["message"], res.output
    assert snapshot(state) == before


def test_init_of_a_delta_exits_3_and_initialises_nothing(tmp_path):
    d1 = _delta(tmp_path / "d1.parquet")
    s = tmp_path / "S2"
    res = CliRunner().invoke(app, ["init", str(d1), "--state", str(s), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["kind"] == "format", res.output
    assert err["file"] == str(d1)
    assert "copter delta (copter.format=delta), not a problem" in err["message"]
    assert "copter step" in err["message"]
    assert not s.exists() or not (s / "CURRENT").exists() and not (s / "config.json").exists()


def test_init_of_a_delta_into_an_existing_folder_writes_no_state_there(tmp_path):
    d1 = _delta(tmp_path / "d1.parquet")
    other = tmp_path / "S3"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    before = snapshot(other)
    res = CliRunner().invoke(app, ["init", str(d1), "--state", str(other), "--json"])
    assert res.exit_code == BAD_INPUT and "copter.format=delta" in runner_error(res)["message"]
    after = snapshot(other)
    after.pop(".lock", None)  # init takes the folder's lock before it reads the base (as for any bad base)
    assert after == before


@pytest.mark.parametrize("argv", [["solve", "{d}"], ["convert", "{d}", "{out}"], ["diff", "{d}", "{d}", "-o", "{out}"]],
                         ids=["solve", "convert", "diff"])
def test_commands_reading_a_problem_refuse_a_delta(tmp_path, argv):
    d1 = _delta(tmp_path / "d1.parquet")
    out = tmp_path / "out.parquet"
    res = CliRunner().invoke(app, [a.format(d=d1, out=out) for a in argv] + ["--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT and "copter.format=delta" in err["message"], res.output
    assert not out.exists()


def test_files_without_copter_format_keep_working_when_their_rows_fit(tmp_path, state):
    """pandas/pyarrow output: a full problem table initialises a state, a delta table steps it."""
    from formats.parquet import problem_to_delta

    base = _plain_write(problem_to_delta(small_lp()), tmp_path / "plain_base.parquet")
    s = tmp_path / "P"
    res = CliRunner().invoke(app, ["init", str(base), "--state", str(s), "--json"])
    assert res.exit_code == 0, res.output
    d = _plain_write(Delta.vars(["x0"], cost=[0.5]), tmp_path / "plain_d.parquet")
    res = CliRunner().invoke(app, ["step", str(d), "--state", str(state), "--json"])
    assert res.exit_code == 0, res.output


def test_init_of_a_file_without_copter_format_that_drops_entities_exits_3(tmp_path):
    d = Delta.concat([Delta.vars(["x0"], cost=[1.0]), Delta.drop_vars(["old"])])
    path = _plain_write(d, tmp_path / "plain_drop.parquet")
    s = tmp_path / "S4"
    res = CliRunner().invoke(app, ["init", str(path), "--state", str(s), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT and err["kind"] == "format", res.output
    assert "no copter.format" in err["message"] and "drop_var" in err["message"]
    assert "expected a problem" in err["message"] and err["row"] == 1
    assert not s.exists()


def test_init_of_a_problem_that_drops_entities_names_the_drop_row(tmp_path):
    # copter.format=problem with a drop_var row said "row 1: cannot drop unknown variable 'x0'" of a variable the
    # same file defines (drops apply first): the file's contradiction is named instead, as without copter.format
    d = Delta.concat([Delta.vars(["x0"], cost=[1.0]), Delta.drop_vars(["x0"])])
    path = _plain_write(d, tmp_path / "problem_drop.parquet", {b"copter.format": b"problem", b"copter.version": b"1"})
    s = tmp_path / "S5"
    res = CliRunner().invoke(app, ["init", str(path), "--state", str(s), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT and err["kind"] == "format", res.output
    assert "copter.format=problem" in err["message"] and "drop_var" in err["message"], err
    assert "unknown" not in err["message"] and err["row"] == 1
    assert not s.exists()


# ------------------------------------------------------------------------------------------------ unit level


def test_read_delta_refuses_a_problem_and_read_problem_a_delta(tmp_path):
    p = tmp_path / "p.parquet"
    write_problem(small_lp(), p)
    d = _delta(tmp_path / "d.parquet")
    with pytest.raises(FormatError, match=r"copter problem \(copter.format=problem\), not a delta") as e:
        read_delta(p)
    assert e.value.file == str(p)
    with pytest.raises(FormatError, match=r"copter delta \(copter.format=delta\), not a problem") as e:
        read_problem(d)
    assert e.value.file == str(d)
    assert read_delta(p, expect=None).format == "problem"  # either kind when the caller takes both
    assert read_delta(d, expect=None).format == "delta"


def test_the_kind_of_a_file_without_copter_format_follows_its_rows(tmp_path):
    full = _plain_write(Delta.concat([Delta.vars(["x"], cost=[1.0]), Delta.cons(["c"], upper=[1.0]),
                                      Delta.coefs(["x"], ["c"], [1.0])]), tmp_path / "full.parquet")
    assert read_delta(full).format == "delta"
    assert read_problem(full).col_names.tolist() == ["x"]
    drops = _plain_write(Delta.drop_cons(["c"]), tmp_path / "drops.parquet")
    assert read_delta(drops).format == "delta"
    with pytest.raises(FormatError, match="drop_con rows"):
        read_problem(drops)
    based = _plain_write(Delta.vars(["x"], cost=[1.0]), tmp_path / "based.parquet", {"copter.base_round": "3"})
    assert read_delta(based).base_round == 3
    with pytest.raises(FormatError, match="copter.base_round"):
        read_problem(based)


def test_a_dictionary_encoded_kind_column_with_drop_rows_is_found(tmp_path):
    d = Delta.concat([Delta.vars(["x0"], cost=[1.0]), Delta.drop_vars(["old"])])
    t = d.table
    t = t.set_column(0, "kind", pa.array(t.column("kind").to_pylist()).dictionary_encode())
    path = tmp_path / "dict.parquet"
    pq.write_table(t, path)
    with pytest.raises(FormatError, match="drop_var rows") as e:
        read_problem(path)
    assert e.value.row == 1


# ---------------------------------------------------- copter.format=problem with a copter.base_round


def _based_problem(tmp_path):
    """A problem file (copter.format=problem, as ``copter convert`` writes it) that also names a base round."""
    from formats.parquet import _metadata, problem_to_delta

    d = problem_to_delta(small_lp())
    path = tmp_path / "based_problem.parquet"
    pq.write_table(d.table.replace_schema_metadata({**_metadata(d), "copter.base_round": "2"}), path)
    return path


def test_init_of_a_problem_naming_a_base_round_exits_3_and_initialises_nothing(tmp_path):
    path = _based_problem(tmp_path)
    s = tmp_path / "S5"
    res = CliRunner().invoke(app, ["init", str(path), "--state", str(s), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["kind"] == "format", res.output
    assert err["file"] == str(path) and err["entity"] == "copter.base_round"
    assert "copter.format=problem" in err["message"] and "copter.base_round (2)" in err["message"]
    assert not s.exists() or not (s / "CURRENT").exists() and not (s / "config.json").exists()


def test_init_of_a_problem_naming_a_base_round_names_file_and_key_in_human_output(tmp_path):
    path = _based_problem(tmp_path)
    res = CliRunner().invoke(app, ["init", str(path), "--state", str(tmp_path / "S6")])
    assert res.exit_code == BAD_INPUT, res.output
    assert str(path) in res.output and "copter.base_round" in res.output


@pytest.mark.parametrize("argv", [["solve", "{p}"], ["convert", "{p}", "{out}"], ["diff", "{p}", "{q}", "-o", "{out}"],
                                  ["diff", "{q}", "{p}", "-o", "{out}"]],
                         ids=["solve", "convert", "diff-old", "diff-new"])
def test_commands_reading_a_problem_refuse_one_naming_a_base_round(tmp_path, argv):
    p = _based_problem(tmp_path)
    q = tmp_path / "good.parquet"
    write_problem(small_lp(), q)
    out = tmp_path / "out.parquet"
    res = CliRunner().invoke(app, [a.format(p=p, q=q, out=out) for a in argv] + ["--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT and err["entity"] == "copter.base_round", res.output
    assert err["file"] == str(p)
    assert not out.exists()


def test_step_of_a_problem_naming_a_base_round_is_refused_as_a_problem(tmp_path, state):
    """The converse stays: where a delta is expected, any copter.format=problem file is refused as a problem."""
    path = _based_problem(tmp_path)
    before = snapshot(state)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(state), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT and "copter problem (copter.format=problem), not a delta" in err["message"]
    assert snapshot(state) == before


def test_read_refuses_a_problem_naming_a_base_round_wherever_a_problem_may_come(tmp_path):
    path = _based_problem(tmp_path)
    for read in (read_problem, lambda p: read_delta(p, expect=None)):
        with pytest.raises(FormatError, match=r"copter.format=problem but carries a copter.base_round") as e:
            read(path)
        assert e.value.file == str(path) and e.value.entity == "copter.base_round"


@pytest.mark.parametrize("name, text", [("model.mps", "NAME m\nROWS\n N obj\nENDATA\n"),
                                        ("model.txt", "* a comment\nNAME m\nROWS\n N obj\nENDATA\n")])
def test_step_of_an_mps_model_names_the_command_that_makes_a_delta(tmp_path, state, name, text):
    """``copter step base.mps`` said only "not a readable Parquet file": an MPS model (by its name or its first
    bytes) now gets the command that turns it into a delta (``copter diff``), and the state is untouched."""
    mps = tmp_path / name
    mps.write_text(text)
    before = snapshot(state)
    res = CliRunner().invoke(app, ["step", str(mps), "--state", str(state), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["kind"] == "format", res.output
    assert err["file"] == str(mps)
    assert "not a readable Parquet file" in err["message"] and "it looks like an MPS model" in err["message"]
    assert "copter diff OLD NEW" in err["message"]
    assert snapshot(state) == before


def test_a_broken_parquet_file_gets_no_mps_hint(tmp_path, state):
    bad = tmp_path / "d.parquet"
    bad.write_bytes(b"PAR1 not really")
    res = CliRunner().invoke(app, ["step", str(bad), "--state", str(state), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT and "not a readable Parquet file" in err["message"], res.output
    assert "MPS" not in err["message"]
