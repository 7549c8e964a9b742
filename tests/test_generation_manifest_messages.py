"""What is wrong with a damaged generation.json is said, not "missing or unreadable" for every case (the hunt's
F8 (d): a generation.json whose round disagrees with its folder was reported as missing or unreadable). The
damaged round is still left for the previous one with the warning, as for any damage."""

from __future__ import annotations

import json
import shutil

import pytest

from formats import checkpoint
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("manifest")
    rounds.init(small_lp(), tmp / "st")
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp / "d1.parquet")
    rounds.step(tmp / "d1.parquet", tmp / "st")
    return tmp / "st"


def _round(body: dict, value):
    body["round"] = value
    return json.dumps(body)


def _files(body: dict, _):
    del body["files"]
    return json.dumps(body)


@pytest.mark.parametrize(("edit", "words"), [
    (lambda b: _round(b, 7), "generation.json says round 7, but it is in the folder of round 1 (gen-000001)"),
    (lambda b: _round(b, "1"), "generation.json says round '1', but it is in the folder of round 1"),
    # helper-211: JSON true was taken for round 1 (Python's True == 1), while "1" was refused
    (lambda b: _round(b, True), "generation.json says round true, but it is in the folder of round 1"),
    (lambda b: _round(b, 1.0), "generation.json says round 1.0, but it is in the folder of round 1"),
    (lambda b: json.dumps(b)[:-5], "generation.json is not JSON ("),
    (lambda b: json.dumps([b]), "generation.json is a JSON list, not an object"),
    (lambda b: _files(b, None), 'generation.json lists no files (its "files" is missing or not an object)'),
    (None, "generation.json is missing"),
])
def test_a_damaged_generation_json_says_what_is_wrong(capsys, template, tmp_path, edit, words):
    st = tmp_path / "st"
    shutil.copytree(template, st, symlinks=True)
    checkpoint._RECENT.clear()
    man = st / "gen-000001" / "generation.json"
    if edit is None:
        man.unlink()
    else:
        man.write_text(edit(json.loads(man.read_text())))
    code, out, err = run_main(capsys, "show", "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 0, out
    assert f"CURRENT names round 1, whose generation is incomplete ({words}" in err, err
    assert "missing or unreadable" not in err, err
