"""``copter report -o r.png`` is exit 2 pointing at ``--png``, nothing written: it wrote the HTML page into
``r.png`` without a word, a file an image viewer then fails to open."""

from __future__ import annotations

import json
import os

import pytest

from solver import rounds
from tests.helpers import cli_json, small_lp

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")


@pytest.mark.parametrize("name", ["r.png", "charts.PDF", "r.svg"])
def test_an_image_name_is_refused_and_nothing_is_written(tmp_path, monkeypatch, name):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, out = cli_json("report", "--state", st, "-o", name, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage", out
    assert f"-o {name}" in error["message"] and "--png" in error["message"], error
    assert os.listdir(work) == []


def test_an_html_name_in_any_case_is_written(tmp_path, monkeypatch):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    monkeypatch.chdir(tmp_path)
    code, out = cli_json("report", "--state", st, "-o", "R.HTML", "--json")
    assert code == 0, out
    assert (tmp_path / "R.HTML").read_text().lstrip().lower().startswith("<!doctype html")
