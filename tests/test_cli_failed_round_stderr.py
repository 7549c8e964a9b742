"""A round that fails (exit 4: infeasible or unbounded; exit 5: a limit, numerical trouble, a part's worker that died
twice) says why on stderr, in one line naming the round and the cause (``error (round_failed, exit 5): round 1 ended
ITERATION_LIMIT: ...``), as every other failing command does: its reason was printed only on stdout, inside the
report (the answer), so ``copter step D > report.txt`` showed nothing on the terminal or in cron's error mail. The
answer stays on stdout: the report table (without the reason a second time) or, with ``--json``, the report object."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import REPO, infeasible_delta, run_main, small_lp, small_lp_state
from tests.partition_helpers import partitioned_te_state

LIMIT = ("--iteration-limit", "1", "--tol", "1e-9")  #: one PDHG/ALM iteration cannot reach 1e-9 from this start


def _far_delta(path):
    """A delta on round 0 of ``small_lp`` that changes every cost (one iteration cannot re-solve it)."""
    write_delta(Delta.concat([Delta.vars([f"x{i}" for i in range(30)], cost=list(np.linspace(-3, 7, 30)))],
                             base_round=0), path)
    return path


def _error_line(err: str) -> str:
    """The one ``error (...)`` line of stderr (asserting there is exactly one)."""
    lines = [ln for ln in err.splitlines() if ln.startswith("error (")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("case,code,status", [("limit", 5, "ITERATION_LIMIT"), ("infeasible", 4, "PRIMAL_INFEASIBLE")])
def test_a_failed_step_says_why_on_stderr(tmp_path, capsys, case, code, status, json_out):
    st, _ = small_lp_state(tmp_path)
    if case == "limit":
        args = (_far_delta(tmp_path / "far.parquet"), *LIMIT)
    else:
        write_delta(infeasible_delta(), tmp_path / "inf.parquet")
        args = (tmp_path / "inf.parquet",)
    got, out, err = run_main(capsys, "step", *args, "--state", st, *(["--json"] if json_out else []))
    assert got == code, (out, err)
    line = _error_line(err)
    assert line.startswith(f"error (round_failed, exit {code}): round 1 ended {status}: "), line
    assert "CURRENT stays at round 0" in line
    if json_out:
        report = json.loads(out)
        assert report["status"] == status and report["message"] == line.split(": ", 1)[1]
    else:
        assert status in out and "copter round 1" in out  # the answer: the report's table
        assert "CURRENT stays" not in out  # the reason once, on stderr


def test_a_failed_init_says_why_on_stderr(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "base.parquet")
    got, out, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", tmp_path / "st", *LIMIT)
    assert got == 5, (out, err)
    assert _error_line(err).startswith("error (round_failed, exit 5): round 0 ended ITERATION_LIMIT: ")
    assert "copter round 0" in out


def test_a_batch_stopped_by_a_failed_round_says_which_on_stderr(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path)
    far = _far_delta(tmp_path / "far.parquet")
    got, out, err = run_main(capsys, "step", far, far, "--state", st, *LIMIT, "--json")
    assert got == 5, (out, err)
    assert json.loads(out)["stopped_at"] == 1
    line = _error_line(err)
    assert line.startswith("error (round_failed, exit 5): round 1 ended ITERATION_LIMIT: ")
    # the line named the round but not that the rest of the batch never ran (helper-133's later-round sweep)
    assert line.endswith(f"CURRENT stays at round 0 (use --accept-failed to advance) [delta 1 of 2: {far}; "
                         "delta 2 not applied]"), line


def test_a_batch_stopped_by_a_failed_round_says_which_deltas_were_not_applied(tmp_path, capsys):
    st, ok = small_lp_state(tmp_path)
    inf, more = tmp_path / "inf.parquet", tmp_path / "more.parquet"
    write_delta(Delta.concat([infeasible_delta()]), inf)  # no base_round: for whichever round is current
    write_delta(Delta.concat([Delta.vars(["x4"], cost=[3.0])]), more)
    got, out, err = run_main(capsys, "step", ok, inf, more, more, "--state", st)
    assert got == 4, (out, err)
    assert _error_line(err).endswith(f"[delta 2 of 4: {inf}; deltas 3-4 not applied]"), err
    got, out, err = run_main(capsys, "step", inf, "--state", st)  # the batch's last (or only) delta: nothing left
    assert got == 4 and _error_line(err).endswith("(use --accept-failed to advance)"), err
    got, out, err = run_main(capsys, "step", inf, more, "--state", st, "--accept-failed", "--json")  # it goes on
    assert got == 4 and "not applied" not in err, err
    assert [r["round"] for r in json.loads(out)["rounds"]] == [2, 3]
    assert json.loads(out)["stopped_at"] is None  # was 1: the batch did not stop there


def test_a_partitioned_round_whose_worker_died_twice_says_why_on_stderr(tmp_path):
    state, delta = partitioned_te_state(tmp_path)
    env = {**os.environ, "COPTER_FAULT_KILL_PART": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state),
                           "--executor", "process"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 5, proc.stderr
    line = _error_line(proc.stderr)
    assert line.startswith("error (round_failed, exit 5): round 1 ended NUMERICAL_ERROR: ") and "died" in line, line
    assert "NUMERICAL_ERROR" in proc.stdout


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_a_failed_out_copy_says_why_on_stderr_in_both_modes(tmp_path, capsys, json_out, monkeypatch):
    """The rule holds for the other non-zero exit of a round report: a stored round whose ``--out`` copy failed
    (exit 2 here) printed its error line only without ``--json``."""
    from formats import atomic

    st, delta = small_lp_state(tmp_path)
    out = tmp_path / "out"
    real_copy = atomic.copy_file

    def copy_after_a_folder_appeared(src, dst, *a, **kw):  # made after the --out check: the copy cannot write there
        if Path(dst).name == "solution.parquet":
            Path(dst).mkdir(exist_ok=True)
        return real_copy(src, dst, *a, **kw)

    monkeypatch.setattr(atomic, "copy_file", copy_after_a_folder_appeared)
    got, stdout, err = run_main(capsys, "step", delta, "--state", st, "--out", out, *(["--json"] if json_out else []))
    assert got == 2, (stdout, err)
    line = _error_line(err)
    assert line.startswith("error (usage, exit 2): round 1 is stored and current"), line
    if json_out:
        assert json.loads(stdout)["error"]["message"] == line.split(": ", 1)[1]


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_a_failed_solve_says_why_on_stderr(tmp_path, capsys, json_out):
    """``copter solve`` (no state) follows the same rule: its summary is the answer, the reason an error line."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    got, out, err = run_main(capsys, "solve", tmp_path / "base.parquet", *LIMIT, *(["--json"] if json_out else []))
    assert got == 5, (out, err)
    line = _error_line(err)
    assert line.startswith("error (solve_failed, exit 5): base.parquet ended ITERATION_LIMIT: iteration limit 1 "), line
    if json_out:
        assert json.loads(out)["status"] == "ITERATION_LIMIT"
    else:
        assert "Model status        : ITERATION_LIMIT" in out


def test_an_accepted_failed_round_says_it_was_stored(tmp_path, capsys):
    """``--accept-failed`` stores the failed round as current (its exit code still follows its status): the error
    line says so, the report's message being the solver's alone."""
    st, _ = small_lp_state(tmp_path)
    got, out, err = run_main(capsys, "step", _far_delta(tmp_path / "far.parquet"), "--state", st, *LIMIT,
                             "--accept-failed")
    assert got == 5, (out, err)
    assert _error_line(err).startswith("error (round_failed, exit 5): round 1 ended ITERATION_LIMIT and was stored "
                                       "as current (--accept-failed): iteration limit 1 reached")
    assert (st / "CURRENT").read_text() == "1\n"


def test_an_accepted_failed_round_a_later_round_replaced_does_not_say_current(tmp_path, capsys):
    """In a batch under ``--accept-failed``, a failed round followed by a stored one said "stored as current"
    although the later round is current (helper-151's partitioned sweep): it says which is."""
    st, _ = small_lp_state(tmp_path)
    inf, more = tmp_path / "inf.parquet", tmp_path / "more.parquet"
    write_delta(Delta.concat([infeasible_delta()]), inf)
    write_delta(Delta.concat([Delta.cons(["force"], lower=[0.0])]), more)  # round 2 is feasible again
    got, out, err = run_main(capsys, "step", inf, more, "--state", st, "--accept-failed")
    assert got == 4, (out, err)
    line = _error_line(err)
    assert line.startswith("error (round_failed, exit 4): round 1 ended ") and "as current" not in line, line
    assert "and was stored (a later round of this batch is current) (--accept-failed)" in line, line
    assert (st / "CURRENT").read_text() == "2\n"


def test_a_retried_accepted_failed_round_exits_as_the_first_run(tmp_path, capsys):
    """Running again a delta whose round failed and was stored by ``--accept-failed`` is a no-op; it exited 0, so a
    cron job retrying after a crash saw success for a round that exited 4 (helper-153's output audit)."""
    st, _ = small_lp_state(tmp_path)
    inf = tmp_path / "inf.parquet"
    write_delta(Delta.concat([infeasible_delta()]), inf)
    first, _, _ = run_main(capsys, "step", inf, "--state", st, "--accept-failed")
    again, out, err = run_main(capsys, "step", inf, "--state", st, "--json")
    report = json.loads(out)
    assert first == again == 4 and report["no_op"] and report["status"] == "PRIMAL_INFEASIBLE", (again, out, err)
    assert _error_line(err).startswith("error (round_failed, exit 4): round 1 ended PRIMAL_INFEASIBLE"), err
    ok = tmp_path / "ok.parquet"
    write_delta(Delta.concat([Delta.cons(["force"], lower=[0.0])]), ok)
    assert run_main(capsys, "step", ok, "--state", st)[0] == 0
    assert run_main(capsys, "step", ok, "--state", st)[0] == 0  # a succeeded round's re-apply stays 0


def test_a_single_step_report_names_its_delta_file(tmp_path, capsys):
    """A batch's reports named their ``delta``; a single step's did not, so a rounds.jsonl of cron's single steps
    could not say which file made a round (helper-153's output audit)."""
    st, delta = small_lp_state(tmp_path)
    code, out, err = run_main(capsys, "step", delta, "--state", st, "--json")
    assert code == 0 and json.loads(out)["delta"] == str(delta), (out, err)
