"""``copter report -o -`` (or ``--png -``) is exit 2 saying the page is written to a named file, nothing written: it
wrote the page into a file named ``-`` in the working folder and said ``wrote -``, where a pipeline
(``copter report -o - | mail ...``) expected standard output, which no copter ``-o`` writes."""

from __future__ import annotations

import json
import os

import pytest

from solver import rounds
from tests.helpers import cli_json, small_lp

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")


@pytest.mark.parametrize("args,option", [(["-o", "-"], "-o"), (["-o", "r.html", "--png", "-"], "--png")])
def test_a_dash_is_refused_and_nothing_is_written(tmp_path, monkeypatch, args, option):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, out = cli_json("report", "--state", st, *args, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage", out
    assert f"{option} -" in error["message"] and "standard output" in error["message"], error
    assert os.listdir(work) == []
