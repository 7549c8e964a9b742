"""Defects a fresh-install user and a bad-input hunter found in the CLI and the round library: a failed
init, NaN in history, the state format version, CURRENT parsing, --out inside the state, option checks."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import lp, run_main, small_lp, snapshot


def _infeasible_base(tmp_path: Path) -> Path:
    """x0 in [0, 1] and a row x0 >= 5: infeasible (exit 4)."""
    path = tmp_path / "bad.parquet"
    write_problem(lp([1.0], [[1.0]], [5.0], [float("inf")], [0.0], [1.0]), path)
    return path


@pytest.fixture
def st(tmp_path) -> Path:
    write_problem(small_lp(), tmp_path / "base.parquet")
    rounds.init(tmp_path / "base.parquet", tmp_path / "st")
    return tmp_path / "st"


# ------------------------------------------------------------------------------ item 1: failed init


def test_failed_init_initialises_nothing_and_can_run_again(tmp_path, capsys):
    base, state = _infeasible_base(tmp_path), tmp_path / "s"
    code, out, _ = run_main(capsys, "init", base, "--state", state, "--json")
    assert code == 4
    rep = json.loads(out)
    assert rep["accepted"] is False and rep["current_round"] is None
    assert rep["failure_record"].startswith("failed/round-000000-")
    assert (state / rep["failure_record"] / "report.json").is_file()
    assert not (state / "CURRENT").exists() and not (state / "config.json").exists()
    assert not list(state.glob("gen-*"))
    code, _, err = run_main(capsys, "show", "--state", state)
    assert code == 3 and "not an initialised" in err
    # a re-run is not refused as "already initialised": the fixed base initialises the state
    write_problem(small_lp(), tmp_path / "good.parquet")
    code, out, err = run_main(capsys, "init", tmp_path / "good.parquet", "--state", state, "--json")
    assert code == 0, err
    assert json.loads(out)["accepted"] is True and (state / "CURRENT").read_text().strip() == "0"


def test_failed_init_with_accept_failed_is_stored(tmp_path, capsys):
    state = tmp_path / "s"
    code, out, _ = run_main(capsys, "init", _infeasible_base(tmp_path), "--state", state, "--accept-failed",
                            "--json")
    assert code == 4
    rep = json.loads(out)
    assert rep["accepted"] is True and any("--accept-failed" in w for w in rep["warnings"])
    assert (state / "CURRENT").read_text().strip() == "0"


# ------------------------------------------------------------------------------ item 3: NaN in history


def test_history_not_applicable_compare_row_has_no_nan(st, capsys):
    rounds.compare(st, ["pop"], pop_workers=0)  # small_lp's names carry no client: POP is NOT_APPLICABLE
    row = rounds.history(st)[-1]
    assert row["compare"]["pop-4"]["status"] == "NOT_APPLICABLE"
    assert row["compare"]["pop-4"]["time_ratio"] is None
    code, out, _ = run_main(capsys, "history", "--state", st, "--csv")
    assert code == 0 and "nan" not in out.lower()
    from io import StringIO

    from rich.console import Console

    from copter_cli import cmd_state

    buf = StringIO()
    cmd_state._print_history(rounds.history(st), out=Console(file=buf, width=300), terminal=False)
    assert "nan" not in buf.getvalue() and "pop-4 -" in buf.getvalue()


# ------------------------------------------------------------------------------ item 5: state format version


@pytest.mark.parametrize("version", [99, 0, "1"])
def test_config_version_not_read_by_this_copter_is_refused(st, capsys, version):
    cfg = json.loads((st / "config.json").read_text())
    cfg["version"] = version
    (st / "config.json").write_text(json.dumps(cfg))
    for args in (["show"], ["history"], ["step", "missing.parquet"]):
        code, out, _ = run_main(capsys, *args, "--state", st, "--json")
        err = json.loads(out)["error"]
        assert code == 3 and err["file"].endswith("config.json"), args
        assert repr(version) in err["message"] or str(version) in err["message"]
        assert "version 1" in err["message"]


def _set_generation_version(st: Path, version) -> None:
    path = st / "gen-000000" / "generation.json"
    man = json.loads(path.read_text())
    man["version"] = version
    path.write_text(json.dumps(man))


def test_generation_version_newer_than_this_copter_is_refused_and_kept(st, tmp_path, capsys):
    """A round written by a newer copter is no damage: every command refuses it (exit 3, naming its
    generation.json and both versions) and none falls back from it, moves or removes it."""
    _set_generation_version(st, 2)
    d = tmp_path / "d.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    before = snapshot(st)
    for args in (["show"], ["history"], ["export", "-o", str(tmp_path / "e.parquet")], ["step", str(d)],
                 ["rollback", "--to", "0"]):
        code, out, _ = run_main(capsys, *args, "--state", st, "--json")
        err = json.loads(out)["error"]
        assert code == 3, args
        assert err["file"].endswith("gen-000000/generation.json"), args
        assert "version 2" in err["message"] and "version 1" in err["message"] and "upgrade" in err["message"]
        assert snapshot(st) == before, args


@pytest.mark.parametrize("version", [0, "1", True, 1.0, None])
def test_generation_version_not_a_positive_integer_is_damage(st, capsys, version):
    _set_generation_version(st, version)
    code, out, _ = run_main(capsys, "show", "--state", st, "--json")
    assert code == 3
    msg = json.loads(out)["error"]["message"]
    assert "format version" in msg and json.dumps(version) in msg


# ------------------------------------------------------------------------------ item 9: CURRENT parsed strictly


@pytest.mark.parametrize("text", ["+0\n", " 0\n", "\u0660\n", "0 \n"])
def test_current_not_plain_ascii_digits_is_damage(st, capsys, text):
    (st / "CURRENT").write_text(text, encoding="utf-8")
    code, out, err = run_main(capsys, "show", "--state", st, "--json")
    assert code == 0
    assert any("CURRENT is unreadable" in w for w in json.loads(out)["warnings"])
    assert "warning: CURRENT is unreadable" in err


# ------------------------------------------------------------------------------ item 6: --out inside the state


def test_out_inside_the_state_directory_is_refused_before_anything_is_written(st, tmp_path, capsys):
    d = tmp_path / "d.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    (tmp_path / "link").symlink_to(st / "gen-000000")
    before = snapshot(st)
    for out in (st / "gen-000000", st, st / "new" / "deeper", tmp_path / "link"):
        code, stdout, _ = run_main(capsys, "step", d, "--state", st, "--out", out, "--json")
        err = json.loads(stdout)["error"]
        assert code == 2 and "--out" in err["message"] and "inside the state directory" in err["message"]
        assert snapshot(st) == before
    code, _, _ = run_main(capsys, "step", d, "--state", st, "--out", tmp_path / "outside")
    assert code == 0 and (tmp_path / "outside" / "solution.parquet").is_file()


# ------------------------------------------------------------------------------ items 8, 9: options and messages


def test_wait_nan_is_refused(st, capsys):
    for args in (["rollback"], ["step", "x.parquet"]):
        code, _, err = run_main(capsys, *args, "--state", st, "--wait", "nan")
        assert code == 2 and "--wait" in err


@pytest.mark.parametrize("args", [["worker", "start", "--idle-timeout", "nan"], ["worker", "start", "--timeout", "nan"],
                                  ["worker", "stop", "--timeout", "nan"]])
def test_worker_seconds_nan_is_refused(capsys, args):
    code, _, err = run_main(capsys, *args)  # a parse error: no worker is started or stopped
    assert code == 2 and args[2] in err


def test_show_client_regex_reads_as_inits_and_a_bad_one_is_refused(st, capsys):
    # without a named group 'client' the whole match is the client, as for init --client-regex and compare
    # --pop-client-regex (user trial 18: show alone refused '^job[A-Z]'); a regex that does not compile is exit 2
    code, out, _ = run_main(capsys, "show", "--state", st, "--solution", "--client-regex", "abc", "--json")
    assert code == 0, out
    code, out, _ = run_main(capsys, "show", "--state", st, "--solution", "--client-regex", "(", "--json")
    assert code == 2 and "--client-regex" in json.loads(out)["error"]["message"]
    code, _, _ = run_main(capsys, "show", "--state", st, "--solution", "--client-regex", r"^(?P<client>x)")
    assert code == 0


@pytest.mark.parametrize("option", ["--client-regex", "--shared-rows-regex"])
def test_init_partition_regex_error_names_init_option(tmp_path, capsys, option):
    write_problem(small_lp(), tmp_path / "b.parquet")
    code, out, _ = run_main(capsys, "init", tmp_path / "b.parquet", "--state", tmp_path / "s", "--partitions", "2",
                            option, "(", "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 2 and option in msg and "--pop-" not in msg
    assert not (tmp_path / "s").exists()


def test_delta_pipe_and_problem_folder_are_named(st, tmp_path, capsys):
    fifo = tmp_path / "d.parquet"
    os.mkfifo(fifo)
    code, out, _ = run_main(capsys, "step", fifo, "--state", st, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and "pipe" in msg and "not found" not in msg
    (tmp_path / "m.mps").mkdir()
    code, out, _ = run_main(capsys, "solve", tmp_path / "m.mps", "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and "is a directory" in msg and "not found" not in msg
    code, out, _ = run_main(capsys, "solve", tmp_path / "none.mps", "--json")
    assert code == 3 and "not found" in json.loads(out)["error"]["message"]


def test_every_answer_of_init_and_step_names_the_current_round(tmp_path, capsys):
    """helper-226: a round stored by ``--accept-failed`` answered without ``current_round`` (``jq`` null) although
    it was current; a failed round's answer has it. Now every init/step answer has it; report.json does not."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    code, out, _ = run_main(capsys, "init", tmp_path / "base.parquet", "--state", st, "--json")
    assert code == 0 and json.loads(out)["current_round"] == 0
    d = tmp_path / "inf.parquet"
    write_delta(Delta.concat([Delta.cons(["cap0"], lower=[5.0], upper=[5.0]), Delta.vars(["x0"], upper=[0.0])],
                             base_round=0), d)
    code, out, _ = run_main(capsys, "step", d, "--state", st, "--json")
    rep = json.loads(out)
    assert code == 4 and rep["accepted"] is False and rep["current_round"] == 0
    code, out, _ = run_main(capsys, "step", d, "--state", st, "--json", "--accept-failed")
    rep = json.loads(out)
    assert code == 4 and rep["accepted"] is True and rep["current_round"] == 1 == rep["round"]
    assert (st / "CURRENT").read_text().strip() == "1"
    assert "current_round" not in json.loads((st / "gen-000001" / "report.json").read_text())
