"""A round's folder (or any folder inside a state) given as ``--state`` (hunt 56): the error names the state it is
in and the option to give, where it told the user to run ``copter init`` there, which init refuses."""

from __future__ import annotations

import json

import pytest

from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


@pytest.mark.parametrize("command", [["show"], ["history"], ["step", "DELTA"]])
def test_a_round_folder_as_the_state_names_the_state_and_the_round(tmp_path, capsys, command):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    rounds.step(Delta.vars(["x1"], cost=[2.5]), st)
    delta = tmp_path / "d.parquet"
    from formats.io import write_delta

    write_delta(Delta.vars(["x2"], cost=[1.5]), delta)
    before = sorted(p.relative_to(st).as_posix() for p in st.rglob("*") if p.name != ".lock")
    for inner, rnd in ((st / "gen-000001", "1"), (st / "gen-000001" / "problem", None)):
        args = [str(delta) if a == "DELTA" else a for a in command]
        code, out, _ = run_main(capsys, *args, "--state", inner, "--json")
        err = json.loads(out)["error"]
        assert code == 3 and err["kind"] == "state", out
        assert f"a folder inside the state {st}" in err["message"] and f"--state {st}`" in err["message"], err
        assert ("--round 1" in err["message"]) == (rnd is not None) and "copter init" not in err["message"], err
    assert sorted(p.relative_to(st).as_posix() for p in st.rglob("*") if p.name != ".lock") == before
