"""The stateful commands end to end: exit codes, messages naming the culprit, byte-identical state on bad
input, busy lock, concurrent steps, and crash safety under SIGKILL."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.checkpoint import StateStore
from formats.io import read_problem, write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import infeasible_delta, small_lp, snapshot

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def cli(*args: str):
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


def copter_proc(*args: str, extra_env: dict | None = None) -> subprocess.Popen:
    """`python -m copter_cli ARGS` in a subprocess (the real entry point, its own process and lock)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), **(extra_env or {}))
    return subprocess.Popen([sys.executable, "-m", "copter_cli", *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture
def st(tmp_path) -> Path:
    write_problem(small_lp(), tmp_path / "base.parquet")
    code, out, _ = cli("init", tmp_path / "base.parquet", "--state", tmp_path / "st", "--json")
    assert code == 0, out
    assert json.loads(out)["round"] == 0
    return tmp_path / "st"


def delta_file(path: Path, delta: Delta) -> Path:
    write_delta(delta, path)
    return path


def cost_delta(base_round=0, name="x3", cost=5.0) -> Delta:
    return Delta.concat([Delta.vars([name], cost=[cost])], base_round=base_round)


def test_init_step_show_history_json(st, tmp_path):
    d = delta_file(tmp_path / "d1.parquet", cost_delta())
    code, out, _ = cli("step", d, "--state", st, "--json", "--out", tmp_path / "out")
    rep = json.loads(out)
    assert code == 0 and rep["round"] == 1 and rep["solution_path"] == "gen-000001/solution.parquet"
    assert (tmp_path / "out" / "solution.parquet").exists()
    code, out, _ = cli("show", "--state", st, "--json")
    assert code == 0 and json.loads(out)["delta_sha256"] == rep["delta_sha256"]
    code, out, _ = cli("history", "--state", st, "--json")
    assert code == 0 and [r["round"] for r in json.loads(out)["rounds"]] == [0, 1]


def test_state_defaults_to_copter_state_env(tmp_path, monkeypatch):
    write_problem(small_lp(), tmp_path / "base.parquet")
    monkeypatch.setenv("COPTER_STATE", str(tmp_path / "envstate"))
    assert cli("init", tmp_path / "base.parquet")[0] == 0
    assert (tmp_path / "envstate" / "CURRENT").exists()


def test_reapplying_a_delta_file_exits_zero_and_says_so(st, tmp_path):
    d = delta_file(tmp_path / "d1.parquet", cost_delta())
    assert cli("step", d, "--state", st)[0] == 0
    before = snapshot(st)
    code, out, _ = cli("step", d, "--state", st, "--json")
    assert code == 0 and json.loads(out)["no_op"] and "already produced round 1" in json.loads(out)["message"]
    assert snapshot(st) == before


def _bad_files(tmp: Path) -> list[tuple[Path, str]]:
    good = delta_file(tmp / "good.parquet", cost_delta())
    garbage = tmp / "garbage.parquet"
    garbage.write_bytes(b"this is not parquet at all\n" * 10)
    truncated = tmp / "truncated.parquet"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    return [
        (garbage, "garbage.parquet"),
        (truncated, "truncated.parquet"),
        (delta_file(tmp / "unknown.parquet", Delta.concat([Delta.coefs(var=["ghost"], con=["cap0"], value=[1.0])],
                                                          base_round=0)), "ghost"),
        (delta_file(tmp / "nan.parquet", Delta.concat([Delta.vars(["x1"], cost=np.array([np.nan]))], base_round=0)),
         "NaN"),
        (delta_file(tmp / "box.parquet", Delta.concat([Delta.vars(["x2"], lower=[3.0], upper=[1.0])], base_round=0)),
         "x2"),
        (delta_file(tmp / "round.parquet", cost_delta(base_round=7)), "round 7"),
        (tmp / "missing.parquet", "missing.parquet"),
    ]


def test_every_bad_input_exits_3_names_the_culprit_and_leaves_state_byte_identical(st, tmp_path):
    before = snapshot(st)
    for path, culprit in _bad_files(tmp_path):
        code, out, err = cli("step", path, "--state", st, "--json")
        assert code == 3, (path.name, out, err)
        msg = json.loads(out)["error"]["message"]
        assert culprit in msg, (path.name, msg)
        assert "Traceback" not in err
        assert snapshot(st) == before, path.name


def test_infeasible_round_exits_4_and_keeps_current_unless_accepted(st, tmp_path):
    d = delta_file(tmp_path / "inf.parquet", infeasible_delta())
    code, out, _ = cli("step", d, "--state", st, "--json", "--out", tmp_path / "out")
    assert code == 4 and json.loads(out)["accepted"] is False
    assert (st / "CURRENT").read_text() == "0\n"
    assert json.loads((tmp_path / "out" / "report.json").read_text())["status"] == "PRIMAL_INFEASIBLE"
    code, out, _ = cli("show", "--state", st, "--json")
    assert json.loads(out)["last_failed"]["status"] == "PRIMAL_INFEASIBLE"
    code, out, _ = cli("step", d, "--state", st, "--accept-failed", "--json")
    assert code == 4 and json.loads(out)["accepted"] is True
    assert (st / "CURRENT").read_text() == "1\n"


def test_rollback_and_export_round_trip(st, tmp_path):
    cli("step", delta_file(tmp_path / "d1.parquet", cost_delta()), "--state", st)
    code, out, _ = cli("rollback", "--state", st, "--json")
    res = json.loads(out)
    assert code == 0 and (res["round"], res["previous_round"], res["later_rounds"]) == (0, 1, [1])
    assert res["message"].startswith("CURRENT moved from round 1 to round 0; later round(s) 1 stay until the next "
                                     "step, which moves them into") and "abandoned" in res["message"]
    assert cli("rollback", "--state", st, "--to", "42")[0] == 2
    for name in ("cur.mps", "cur.parquet"):
        code, out, _ = cli("export", "--state", st, "-o", tmp_path / name, "--json")
        assert code == 0
        back = read_problem(tmp_path / name)
        orig = StateStore(st).load(with_state=False).problem
        assert back.n_cols == orig.n_cols and np.allclose(back.cost, orig.cost)


def test_commands_on_a_missing_state_exit_3(tmp_path):
    for args in (("show",), ("history",), ("export",), ("rollback",)):
        code, _, err = cli(*args, "--state", tmp_path / "nope")
        assert code == 3 and "not an initialised" in " ".join(err.split())


def test_missing_state_message_names_the_folder_once(tmp_path):
    """The error's file prefix names the folder: the message did too ("nope: nope is not an initialised ..."),
    for a missing folder and for one an init that failed left behind (only failed/ in it)."""
    (tmp_path / "failedinit" / "failed").mkdir(parents=True)
    for name in ("nope", "failedinit"):
        state = tmp_path / name
        for args in (("show",), ("history",), ("step", tmp_path / "d.parquet")):
            code, _, err = cli(*args, "--state", state)
            err = " ".join(err.split())
            assert code == 3 and f"{state}: not an initialised copter state directory" in err, (args, err)
            assert err.count(str(state)) == 2, err  # the prefix and the `copter init BASE --state` hint


def test_step_with_config_json_missing_or_damaged_exits_3_and_leaves_state_byte_identical(tmp_path):
    """config.json holds the options init stored (here --tol 1e-7); without it a step must not solve at the
    defaults: exit 3 naming the file, nothing written."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    code, out, _ = cli("init", tmp_path / "base.parquet", "--state", st, "--tol", "1e-7", "--json")
    assert code == 0, out
    config = st / "config.json"
    good = config.read_text()
    assert json.loads(good)["settings"]["tol"] == 1e-7
    d = delta_file(tmp_path / "d1.parquet", cost_delta())
    for damage in ("missing", "not json", "a list"):
        if damage == "missing":
            config.unlink()
        else:
            config.write_text("{\"keep\": 5," if damage == "not json" else "[1, 2]")
        before = snapshot(st)
        code, out, err = cli("step", d, "--state", st, "--json")
        assert code == 3, (damage, out, err)
        error = json.loads(out)["error"]
        assert "config.json" in error["message"] and error.get("file") == str(config), (damage, error)
        assert ("missing" if damage == "missing" else "damaged") in error["message"], damage
        assert snapshot(st) == before, damage
    config.write_text(good)
    code, out, err = cli("step", d, "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 1, err


def test_second_step_while_the_lock_is_held_exits_6_at_once(st, tmp_path):
    d = delta_file(tmp_path / "d1.parquet", cost_delta())
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time, filelock; l = filelock.FileLock(sys.argv[1]); l.acquire(); "
         "print('held', flush=True); time.sleep(60)", str(st / ".lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = snapshot(st)
        t = time.perf_counter()
        code, out, _ = cli("step", d, "--state", st, "--json")
        assert code == 6 and json.loads(out)["error"]["kind"] == "busy"
        assert time.perf_counter() - t < 5.0
        assert snapshot(st) == before
    finally:
        holder.kill()
        holder.wait()


def test_concurrent_steps_apply_the_delta_exactly_once(st, tmp_path):
    d = delta_file(tmp_path / "d1.parquet", cost_delta())
    procs = [copter_proc("step", d, "--state", st, "--json") for _ in range(4)]
    outs = [(p.wait(timeout=120), p.stdout.read()) for p in procs]
    applied = [json.loads(o) for c, o in outs if c == 0 and not json.loads(o).get("no_op")]
    assert len(applied) == 1 and applied[0]["round"] == 1
    assert all(c in (0, 6) for c, _ in outs), outs
    assert StateStore(st).generations() == [0, 1] and (st / "CURRENT").read_text() == "1\n"


# ------------------------------------------------------------------------------------ crash safety
def _expected(st: Path, tmp_path: Path, d: Path):
    """Reference: the state after an uninterrupted step (round 1) and before it (round 0)."""
    ref = tmp_path / "ref"
    shutil.copytree(st, ref)
    rounds.step(d, ref)
    s = StateStore(ref)
    return s.load(0, with_state=False).problem, s.load(1, with_state=False).problem


def _check_whole_round(root: Path, p0, p1) -> int:
    """The state loads, is round 0 or 1, and every part of it belongs to that same round."""
    store = StateStore(root, reuse=False)
    g = store.load()
    assert g.warning is None, g.warning
    assert g.round in (0, 1)
    assert g.problem.equals(p0 if g.round == 0 else p1)
    assert g.report["round"] == g.round and g.manifest["round"] == g.round
    assert pq.read_table(root / g.report["solution_path"]).num_rows == g.problem.n_cols
    assert g.state is not None and g.state.x.shape == (g.problem.n_cols,)
    return g.round


COMMIT_POINTS = ("before_manifest", "before_rename", "after_rename", "before_current", "after_current")


def _crash_delta(tmp_path: Path) -> Path:
    return delta_file(tmp_path / "d1.parquet", Delta.concat([
        Delta.vars(["x3", "xn"], cost=[5.0, 1.0], upper=[None, 2.0]),
        Delta.coefs(var=["xn"], con=["cap1"], value=[2.0])], base_round=0))


def test_step_killed_at_each_commit_point_leaves_previous_or_next_round(st, tmp_path):
    """`copter step` processes SIGKILLed (fault injection) at each point of the commit protocol."""
    d = _crash_delta(tmp_path)
    p0, p1 = _expected(st, tmp_path, d)
    roots = {pt: tmp_path / f"crash-{pt}" for pt in COMMIT_POINTS}
    procs = {}
    for pt, root in roots.items():
        shutil.copytree(st, root)
        procs[pt] = copter_proc("step", d, "--state", root, extra_env={"COPTER_FAULT_INJECT": pt})
    for pt, proc in procs.items():
        assert proc.wait(timeout=120) == -signal.SIGKILL, (pt, proc.stderr.read())
        root = roots[pt]
        assert _check_whole_round(root, p0, p1) == (1 if pt == "after_current" else 0), pt
        rep = rounds.step(d, root)  # the next writer cleans up and finishes (or no-ops) the round
        assert rep["round"] == 1 and _check_whole_round(root, p0, p1) == 1
        assert not [p for p in os.listdir(root) if p.startswith((".tmp-", ".trash-"))]


def test_step_killed_at_random_moments_never_leaves_a_mix(st, tmp_path):
    """24 SIGKILLs at random delays over the whole step, in forked children of this process (already
    imported and compiled, so each trial takes a fraction of a second and the kills land inside the
    step, not in interpreter start-up)."""
    d = _crash_delta(tmp_path)
    p0, p1 = _expected(st, tmp_path, d)

    def run_child(root: Path, delay: float | None) -> float:
        t = time.perf_counter()
        pid = os.fork()
        if pid == 0:  # child: one step, no pytest machinery on the way out
            try:
                rounds.step(d, root)
            finally:
                os._exit(0)
        if delay is not None:
            time.sleep(delay)
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return time.perf_counter() - t

    probe = tmp_path / "probe"
    shutil.copytree(st, probe)
    full = run_child(probe, None)
    rng = random.Random(1234)
    seen = set()
    for trial in range(24):
        root = tmp_path / f"t{trial}"
        shutil.copytree(st, root)
        run_child(root, rng.uniform(0.0, 1.1 * full))
        seen.add(_check_whole_round(root, p0, p1))
        rounds.step(d, root)
        assert _check_whole_round(root, p0, p1) == 1
    assert seen <= {0, 1}


def test_sigint_during_step_exits_130_and_leaves_state_unchanged(st, tmp_path):
    d = delta_file(tmp_path / "d1.parquet", cost_delta())
    before = snapshot(st)
    proc = copter_proc("step", d, "--state", st, extra_env={"COPTER_FAULT_INJECT": "sigint_during_save"})
    assert proc.wait(timeout=120) == 130, proc.stderr.read()
    after = snapshot(st)
    assert after == before


def test_history_table_has_phase_columns(st, tmp_path):
    cli("step", delta_file(tmp_path / "d1.parquet", cost_delta()), "--state", st)
    code, out, _ = cli("history", "--state", st)
    assert code == 0 and "solve" in out and "OPTIMAL" in out  # the table is the answer: stdout


def test_parquet_written_by_pandas_is_accepted(st, tmp_path):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"kind": ["var"], "var": ["x4"], "con": [None], "value": [2.5], "lower": [None],
                       "upper": [None], "integer": [None]})
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), b"copter.base_round": b"0"})
    pq.write_table(table, tmp_path / "pd.parquet")
    code, out, err = cli("step", tmp_path / "pd.parquet", "--state", st, "--json")
    assert code == 0, err



def test_step_after_rollback_killed_mid_commit_never_recovers_the_abandoned_branch(st, tmp_path):
    """Rounds 1, 2; rollback to 1; a new round 2 is SIGKILLed at each commit point after the old branch is
    moved aside. Whatever survives, CURRENT is round 1, and recovery from an unreadable CURRENT never lands
    on the old round 2; the next step completes the new round 2."""
    old = [rounds.step(cost_delta(base_round=r, cost=5.0 + r), st)["delta_sha256"] for r in (0, 1)]
    rounds.rollback(st, to=1)
    d = delta_file(tmp_path / "new2.parquet", cost_delta(base_round=1, name="x4", cost=9.0))
    roots = {pt: tmp_path / f"crash-{pt}" for pt in ("after_abandon", "after_rename", "before_current")}
    procs = {}
    for pt, root in roots.items():
        shutil.copytree(st, root)
        procs[pt] = copter_proc("step", d, "--state", root, extra_env={"COPTER_FAULT_INJECT": pt})
    for pt, proc in procs.items():
        assert proc.wait(timeout=120) == -signal.SIGKILL, (pt, proc.stderr.read())
        root = roots[pt]
        assert (root / "CURRENT").read_text() == "1\n", pt
        assert [r["round"] for r in rounds.history(root)] in ([0, 1], [0, 1, 2]), pt
        assert all(r["delta_sha256"] != old[1] for r in rounds.history(root)), pt
        (root / "CURRENT").write_text("garbage")
        assert rounds.show(root)["delta_sha256"] != old[1], pt
        (root / "CURRENT").write_text("1\n")
        rep = rounds.step(d, root)
        assert rep["round"] == 2 and rounds.show(root)["delta_sha256"] == rep["delta_sha256"] not in old, pt


def test_a_round_that_is_not_kept_is_a_usage_error_in_show_rollback_and_export(st, tmp_path):
    for args in (("show", "--round", "42"), ("rollback", "--to", "42"),
                 ("export", "--round", "42", "-o", tmp_path / "r42.mps")):
        code, out, _ = cli(*args, "--state", st, "--json")
        err = json.loads(out)["error"]
        assert (code, err["code"], err["kind"]) == (2, 2, "usage"), args
        assert "round 42 is not kept" in err["message"] and "kept rounds: 0" in err["message"]
    assert not (tmp_path / "r42.mps").exists()


def test_a_damaged_round_asked_for_by_number_is_bad_input(st, tmp_path):
    cli("step", delta_file(tmp_path / "d1.parquet", cost_delta()), "--state", st)
    with open(st / "gen-000001" / "solution.parquet", "ab") as f:
        f.write(b"x")  # size no longer matches generation.json
    for args in (("show", "--round", "1"), ("rollback", "--to", "1"), ("export", "--round", "1")):
        code, out, _ = cli(*args, "--state", st, "--json")
        err = json.loads(out)["error"]
        assert (code, err["kind"]) == (3, "state") and "round 1 is damaged" in err["message"], args


def test_show_round_prints_that_kept_rounds_report(st, tmp_path):
    cli("step", delta_file(tmp_path / "d1.parquet", cost_delta()), "--state", st)
    code, out, _ = cli("show", "--round", "0", "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 0
    assert json.loads(cli("show", "--state", st, "--json")[1])["round"] == 1


def test_history_shows_no_objective_for_a_failed_round(st, tmp_path):
    d = delta_file(tmp_path / "inf.parquet", infeasible_delta())
    assert cli("step", d, "--state", st, "--iteration-limit", "20000")[0] == 4
    rows = json.loads(cli("history", "--state", st, "--json")[1])["rounds"]
    failed = [r for r in rows if r["kind"] == "failed"]
    assert [r["status"] for r in failed] == ["PRIMAL_INFEASIBLE"] and failed[0]["objective"] is None
    assert rows[0]["objective"] is not None  # the OPTIMAL round 0 keeps its objective
    _, out, _ = cli("history", "--state", st)
    line = next(x for x in out.splitlines() if "PRIMAL_INFEASIBLE" in x)
    assert line.split("PRIMAL_INFEASIBLE")[1].split()[0] == "-"


def test_an_infeasible_rounds_report_has_no_objective_either(st, tmp_path):
    # the step's --json and the failed record's report.json gave the last iterate's objective (adlittle: -1.3e12)
    # while history said null (helper-160); `solve` on the same model says so too
    d = delta_file(tmp_path / "inf.parquet", infeasible_delta())
    code, out, _ = cli("step", d, "--state", st, "--iteration-limit", "20000", "--json")
    rep = json.loads(out)
    assert code == 4 and rep["status"] == "PRIMAL_INFEASIBLE" and rep["objective"] is None, rep
    assert rep["dual_objective"] is None  # the last iterate's, as meaningless (helper-162: gas11 unbounded, -7.85e9)
    stored = [json.loads(p.read_text()) for p in (Path(st) / "failed").glob("*/report.json")]
    assert stored and all(r["objective"] is None and r["dual_objective"] is None for r in stored), stored


def test_export_to_an_unusable_path_is_a_usage_error_before_any_work(st, tmp_path):
    for target, needle in ((tmp_path / "missing" / "x.mps", "does not exist"), (tmp_path, "is a folder")):
        code, out, _ = cli("export", "--state", st, "-o", target, "--json")
        err = json.loads(out)["error"]
        assert (code, err["kind"]) == (2, "usage") and needle in err["message"] and "-o" in err["message"]


def test_init_on_an_initialised_state_names_the_directory_once(st, tmp_path):
    code, out, _ = cli("init", tmp_path / "base.parquet", "--state", st, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and msg.count(str(st)) == 1 and "already an initialised state directory" in msg


def test_init_with_a_missing_base_leaves_no_state_folder_behind(tmp_path):
    code, out, _ = cli("init", tmp_path / "nothere.mps", "--state", tmp_path / "new", "--json")
    assert code == 3 and json.loads(out)["error"]["kind"] in ("input", "format")
    assert not (tmp_path / "new").exists()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "keep.txt").write_text("a user's file")
    assert cli("init", tmp_path / "nothere.mps", "--state", tmp_path / "mine")[0] == 3
    assert (tmp_path / "mine" / "keep.txt").read_text() == "a user's file"  # a folder it did not create stays


def test_export_writes_a_name_line_other_tools_read(tmp_path):
    st = tmp_path / "mystate"
    rounds.init(small_lp().replace(name=""), st)  # a base without a model name
    code, _, _ = cli("export", "--state", st, "-o", tmp_path / "r.mps")
    first = (tmp_path / "r.mps").read_text().splitlines()[0].split()
    assert code == 0 and first == ["NAME", "mystate-round-0"]
    from formats.mps import write_mps

    write_mps(small_lp().replace(name="my model"), tmp_path / "n.mps")
    assert (tmp_path / "n.mps").read_text().splitlines()[0].split() == ["NAME", "my_model"]
    write_mps(small_lp().replace(name=""), tmp_path / "e.mps")
    assert (tmp_path / "e.mps").read_text().splitlines()[0].split() == ["NAME", "copter"]
