"""``copter report --png`` naming the page, a folder under it, or a folder under a file is exit 2 naming --png, nothing
written (hunt 37b: each was an exit-1 FileExistsError / NotADirectoryError after the page had been written)."""

from __future__ import annotations

import json
import os

import pytest

from solver import rounds
from tests.helpers import cli_json, small_lp

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")


@pytest.mark.parametrize("args,words", [
    (["-o", "p.html", "--png", "p.html"], "--png p.html: is the -o page p.html"),
    (["-o", "p.html", "--png", "p.html/png"], "--png p.html/png: lies under the -o page p.html"),
    (["-o", "p.html", "--png", "afile/png"], "--png afile/png: afile is a file, not a folder"),
    (["-o", "afile/p.html"], "-o afile/p.html: folder afile is a file, not a folder"),
])
def test_a_png_folder_that_cannot_be_made_is_refused_before_the_page(tmp_path, monkeypatch, args, words):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    work = tmp_path / "work"
    work.mkdir()
    (work / "afile").write_text("mine")
    monkeypatch.chdir(work)
    code, out = cli_json("report", "--state", st, *args, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage" and words in error["message"], out
    assert sorted(os.listdir(work)) == ["afile"] and (work / "afile").read_text() == "mine"
