"""A CSV table or an MPS model piped into `copter step -` gets the hint a file of that kind gets.

`df.to_csv(sys.stdout)` (or `cat base.mps`) piped into `copter step -` said only `-: not a readable Parquet file
(Parquet magic bytes not found in footer...)`, where `copter step d.csv` adds how to write the table as Parquet and
`copter step base.mps` which command makes a delta: the hints looked at a file's name and first bytes, and skipped
standard input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats import parquet
from tests.helpers import small_lp_state, snapshot

BAD_INPUT = 3


@pytest.fixture
def state(tmp_path):
    return small_lp_state(tmp_path)[0]


@pytest.mark.parametrize(("data", "hint"), [
    (b"kind,var,value\nvar,x0,1.5\n", "it looks like a CSV/text table"),
    (b"NAME t\nROWS\n N obj\nCOLUMNS\nENDATA\n", "it looks like an MPS model"),
], ids=["csv", "mps"])
def test_stdin_gets_the_hint(state, monkeypatch, data, hint):
    monkeypatch.setattr(parquet, "_STDIN_BYTES", [data])
    before = snapshot(state)
    res = CliRunner().invoke(app, ["step", "-", "--state", str(state), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and "not a readable Parquet file" in err["message"], res.output
    assert hint in err["message"], err["message"]
    assert snapshot(state) == before


def test_binary_garbage_on_stdin_gets_no_hint(state, monkeypatch):
    monkeypatch.setattr(parquet, "_STDIN_BYTES", [bytes(range(256))])
    res = CliRunner().invoke(app, ["step", "-", "--state", str(state), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and "looks like" not in err["message"], err["message"]


def test_empty_stdin_says_nothing_was_piped(state, monkeypatch):
    """`generate-delta | copter step -` whose generator failed and wrote nothing said "-: not a readable Parquet
    file (Parquet file size is 0 bytes)"; it now says standard input is empty. Exit 3, state untouched."""
    monkeypatch.setattr(parquet, "_STDIN_BYTES", [b""])
    before = snapshot(state)
    res = CliRunner().invoke(app, ["step", "-", "--state", str(state), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and "standard input is empty" in err["message"], err["message"]
    assert err["kind"] == "format" and err["file"] == "-"
    assert snapshot(state) == before
