"""A Parquet dataset folder given as a delta (Spark writes ``delta.parquet/part-*.parquet``) says how to join it.

It said only "is a directory, not a delta file"; exit 3 and the state untouched as before (session 21's delta hunt).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from tests.helpers import small_lp_state, snapshot


def test_a_dataset_folder_gets_the_join_hint(tmp_path):
    st, _ = small_lp_state(tmp_path)
    folder = tmp_path / "delta.parquet"
    folder.mkdir()
    for k in range(2):
        pq.write_table(pa.table({"kind": ["var"], "var": [f"x{k + 1}"], "value": [1.0]}),
                       folder / f"part-0000{k}.snappy.parquet")
    (folder / "_SUCCESS").touch()
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", str(folder), "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and "is a directory" in err["message"], res.output
    assert "holds 2 Parquet file(s) (part-00000.snappy.parquet, ...)" in err["message"]
    assert "pyarrow.parquet.read_table(FOLDER)" in err["message"]
    assert snapshot(st) == before


def test_an_empty_folder_keeps_the_plain_message(tmp_path):
    st, _ = small_lp_state(tmp_path)
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(app, ["step", str(tmp_path / "empty"), "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and err["message"].endswith("is a directory, not a delta file")


def test_a_folder_given_as_a_model_is_named_a_directory(tmp_path):
    # init / solve / convert / diff said "cannot tell the format of 'DIR' from its extension" (exit 2), where step
    # said "is a directory" (helper-160): the examples' output folder is an easy mistake for its base file
    folder = tmp_path / "out"
    folder.mkdir()
    pq.write_table(pa.table({"kind": ["var"], "var": ["x"]}), folder / "base.parquet")
    for args in (["init", folder, "--state", tmp_path / "st"], ["solve", folder], ["convert", folder, tmp_path / "o.mps"],
                 ["diff", folder, tmp_path / "new.parquet", "-o", tmp_path / "d.parquet"]):
        res = CliRunner().invoke(app, [*map(str, args), "--json"])
        err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
        assert res.exit_code == BAD_INPUT and "is a directory, not a model file" in err["message"], (args, res.output)
        assert f"it holds a stream's base: {folder / 'base.parquet'}" in err["message"], err  # its base, named
    assert not (tmp_path / "st").exists()


def test_a_streams_folder_gets_the_batch_hint(tmp_path):
    """A generator's folder (base.parquet, delta_0001.parquet, ...) is a round stream, not a dataset to join:
    the hint names the batch step (a user's trial, session 36)."""
    st, d = small_lp_state(tmp_path)
    folder = tmp_path / "stream"
    folder.mkdir()
    (folder / "base.parquet").write_bytes(b"")
    for k in (1, 2):
        (folder / f"delta_000{k}.parquet").write_bytes(d.read_bytes())
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", str(folder), "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT, res.output
    assert err["message"].endswith(f"it holds 2 delta file(s) (delta_0001.parquet, ...): `copter step "
                                   f"{folder}/delta*.parquet` applies them in order, one round each"), err
    assert "join them" not in err["message"]
    assert snapshot(st) == before


def test_a_streams_folder_given_as_a_model_names_its_base(tmp_path):
    folder = tmp_path / "stream"
    folder.mkdir()
    for name in ("base.parquet", "delta_0001.parquet"):
        (folder / name).write_bytes(b"")
    for args in (["init", str(folder), "--state", str(tmp_path / "st")], ["solve", str(folder)]):
        res = CliRunner().invoke(app, [*args, "--json"])
        err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
        assert res.exit_code == BAD_INPUT, res.output
        assert err["message"].endswith(f"it holds a stream's base: {folder / 'base.parquet'}"), err
        assert "copter step" not in err["message"]
