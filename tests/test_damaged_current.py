"""A damaged or missing current generation (docs/statuses-and-exit-codes.md "A damaged current round"): every command uses the newest
complete generation and says so the same way in every mode: a ``warning:`` line on stderr and, with
``--json``, the text in the answer's ``warnings``; exit codes unchanged. ``step`` refuses a delta for the
damaged round naming the fallback, and builds the next round on the fallback one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from formats.checkpoint import StateStore
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import run_main, small_lp

FELL_BACK = "using the newest complete generation, round 1"


def _delta(base_round: int, name: str, cost: float) -> Delta:
    return Delta.concat([Delta.vars([name], cost=[cost])], base_round=base_round)


@pytest.fixture(params=["copied", "missing"])
def damaged(request, tmp_path) -> Path:
    """A state with rounds 0-2 whose current round 2 is damaged (round 1's solution.parquet copied over its
    own, one byte longer so the sizes differ whatever the values) or missing (its folder removed)."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st, Settings())
    for i, (name, cost) in enumerate((("x3", 5.0), ("x4", 6.0))):
        write_delta(_delta(i, name, cost), tmp_path / f"d{i + 1}.parquet")
        rounds.step(tmp_path / f"d{i + 1}.parquet", st)
    assert (st / "CURRENT").read_text() == "2\n"
    if request.param == "copied":
        sol = st / "gen-000002" / "solution.parquet"
        shutil.copyfile(st / "gen-000001" / "solution.parquet", sol)
        with open(sol, "ab") as f:
            f.write(b"\0")
        assert "solution.parquet has" in StateStore(st).damage(2)
    else:
        shutil.rmtree(st / "gen-000002")
    return st


def _warned(err: str, kind: str) -> bool:
    lines = [ln for ln in err.splitlines() if ln.startswith("warning: CURRENT names round 2")]
    return len(lines) == 1 and FELL_BACK in lines[0] and kind in lines[0]


def _kind(st: Path) -> str:
    return "incomplete (solution.parquet has" if (st / "gen-000002").exists() else "missing"


@pytest.mark.parametrize("args", [("show",), ("show", "--solution"), ("export", "-o", "x.mps"), ("history",),
                                  ("rollback",)])
def test_json_answer_and_stderr_carry_the_fallback_warning(damaged, capsys, args):
    code, out, err = run_main(capsys, *args, "--state", damaged, "--json")
    assert code == 0, err
    res = json.loads(out)
    assert len(res["warnings"]) == 1 and FELL_BACK in res["warnings"][0] and _kind(damaged) in res["warnings"][0]
    assert _warned(err, _kind(damaged)), err
    if args[0] == "history":
        assert [r["round"] for r in res["rounds"]] == [0, 1] and res["rounds"][-1]["current"]
    elif args[0] == "rollback":
        assert res["previous_round"] == 1 and res["round"] == 0
    else:
        assert res["round"] == 1


@pytest.mark.parametrize("args", [("show",), ("show", "--solution"), ("export", "-o", "x.mps"), ("history",),
                                  ("history", "--csv"), ("rollback",)])
def test_human_output_carries_the_same_warning(damaged, capsys, args):
    code, out, err = run_main(capsys, *args, "--state", damaged)
    assert code == 0, err
    assert _warned(err, _kind(damaged)), err
    assert out != "" and "warning" not in out  # the answer on stdout, the warning (news) on stderr only


def test_a_healthy_state_has_no_warnings(tmp_path, capsys):
    st = tmp_path / "st"
    rounds.init(small_lp(), st, Settings())
    for args in (("show",), ("export", "-o", "x.mps"), ("history",)):
        code, out, err = run_main(capsys, *args, "--state", st, "--json")
        assert code == 0 and "warnings" not in json.loads(out) and "warning" not in err


def test_step_refuses_a_delta_for_the_damaged_round_naming_the_fallback(damaged, tmp_path, capsys):
    d = tmp_path / "d3.parquet"
    write_delta(_delta(2, "x5", 7.0), d)
    code, out, err = run_main(capsys, "step", d, "--state", damaged, "--json")
    assert code == 3
    msg = json.loads(out)["error"]["message"]
    assert "current round is 1 (CURRENT names round 2" in msg and FELL_BACK in msg
    assert (damaged / "CURRENT").read_text() == "2\n"


def test_step_on_the_fallback_round_makes_round_2_and_moves_the_damaged_one_aside(damaged, tmp_path, capsys):
    d = tmp_path / "d2b.parquet"
    write_delta(_delta(1, "x5", 7.0), d)
    had_damaged = (damaged / "gen-000002").exists()
    code, out, err = run_main(capsys, "step", d, "--state", damaged, "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["round"] == 2 and any(FELL_BACK in w for w in rep["warnings"])
    assert _warned(err, "incomplete" if had_damaged else "missing")
    assert StateStore(damaged).current() == (2, None)
    assert bool(list((damaged / "abandoned").glob("*/gen-000002"))) == had_damaged
    code, out, _ = run_main(capsys, "show", "--state", damaged, "--json")
    assert code == 0 and json.loads(out)["round"] == 2  # its report keeps the warning of the step that made it


def test_reapplying_the_fallback_rounds_delta_is_a_no_op_with_the_warning(damaged, tmp_path, capsys):
    d = tmp_path / "d1.parquet"  # the delta that made round 1 (the fixture's)
    code, out, err = run_main(capsys, "step", d, "--state", damaged, "--json")
    rep = json.loads(out)
    assert code == 0 and rep["no_op"] and rep["current_round"] == 1 and FELL_BACK in rep["warnings"][0]
    assert _warned(err, _kind(damaged))
    code, _, err = run_main(capsys, "step", d, "--state", damaged)
    assert code == 0 and _warned(err, _kind(damaged))


@pytest.mark.parametrize("json_out", [True, False])
def test_compare_carries_the_fallback_warning(damaged, capsys, json_out):
    code, out, err = run_main(capsys, "compare", "--baseline", "highs", "--state", damaged,
                              *(["--json"] if json_out else []))
    assert code == 0, err
    if json_out:
        res = json.loads(out)
        assert res["round"] == 1 and FELL_BACK in res["warnings"][0]
    assert _warned(err, _kind(damaged)), err
