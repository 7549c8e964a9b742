"""Faults of the environment (issue #16 item 2): exit code 7, the path in the message, ``kind``
``environment`` in the JSON error, and the state directory unchanged.

* Every write of a round, one at a time: ``COPTER_FAULT_ERRNO=ENOSPC@k`` (``formats.faults``) makes the
  k-th write point raise ``OSError(ENOSPC)`` (also EROFS, EACCES: the tests run as root, where chmod does
  not deny). The write points are first listed with ``COPTER_FAULT_TRACE`` on a copy of the state, so a new
  write in the code is covered without editing this file. A fault before CURRENT names the new round
  leaves the state byte-identical; a fault after it (folder sync, ``--out``, pruning, the round log) says
  the round is stored and current (or only warns). Either way the next step works.
* A real read-only tmpfs and a real full tmpfs (skipped when ``mount`` is not permitted here).
* An unusable ``.lock`` (a folder, a dangling symbolic link).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from formats.faults import reset_io_faults
from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import infeasible_delta, run_main, small_lp, snapshot


def cost_delta(base_round: int, cost: float = 5.0) -> Delta:
    return Delta.concat([Delta.vars(["x3"], cost=[cost])], base_round=base_round)


# ------------------------------------------------------------------------------------------ scenarios

def _plain(tmp: Path) -> tuple[Path, list]:
    """Round 0 kept alone (keep 1: the step prunes it), a cost delta, --out."""
    st = tmp / "st"
    rounds.init(small_lp(), st, keep=1)
    d = tmp / "d1.parquet"
    write_delta(cost_delta(0), d)
    return st, ["step", d, "--state", st, "--json", "--out", tmp / "out"]


def _branch(tmp: Path) -> tuple[Path, list]:
    """Rounds 0, 1, rolled back to 0: the step moves round 1 into abandoned/ before its own rename."""
    st = tmp / "st"
    rounds.init(small_lp(), st)
    d = tmp / "d1.parquet"
    write_delta(cost_delta(0), d)
    rounds.step(d, st)
    rounds.rollback(st, 0)
    d2 = tmp / "d2.parquet"
    write_delta(cost_delta(0, 7.0), d2)
    return st, ["step", d2, "--state", st, "--json"]


def _failed(tmp: Path) -> tuple[Path, list]:
    """An infeasible round: only its failed/ record is written (CURRENT stays)."""
    st = tmp / "st"
    rounds.init(small_lp(), st)
    d = tmp / "bad.parquet"
    write_delta(infeasible_delta(), d)
    return st, ["step", d, "--state", st, "--json"]


def _rollback(tmp: Path) -> tuple[Path, list]:
    st = tmp / "st"
    rounds.init(small_lp(), st)
    d = tmp / "d1.parquet"
    write_delta(cost_delta(0), d)
    rounds.step(d, st)
    return st, ["rollback", "--to", "0", "--state", st, "--json"]


SCENARIOS = {"step": _plain, "step_after_rollback": _branch, "failed_round": _failed, "rollback": _rollback}


def _write_points(capsys, tmp: Path, template: Path, args: list, monkeypatch) -> tuple[list[str], int]:
    """Run the command once on a copy of the state with COPTER_FAULT_TRACE; return its write points and
    its exit code (0, or 4 for the infeasible round)."""
    st = _fresh(template, tmp / "trace")
    trace = tmp / "trace.txt"
    monkeypatch.setenv("COPTER_FAULT_TRACE", str(trace))
    reset_io_faults()
    code, _, _ = run_main(capsys, *_retarget(args, template, st))
    monkeypatch.delenv("COPTER_FAULT_TRACE")
    assert code in (0, 4), "the command must succeed (or fail its round) without a fault"
    return trace.read_text().splitlines(), code


def _fresh(template: Path, where: Path) -> Path:
    """A copy of the state directory (hard links kept out: every file copied)."""
    if where.exists():
        shutil.rmtree(where)
    where.mkdir(parents=True)
    shutil.copytree(template, where / "st", symlinks=True)
    return where / "st"


def _retarget(args: list, template: Path, st: Path) -> list:
    out = []
    for a in args:
        if a == template:
            out.append(st)
        elif isinstance(a, Path) and a.name == "out":
            out.append(st.parent / "out")
        else:
            out.append(a)
    return out


def _check_fault(code: int, js: str, before: dict, st: Path, point: str, name: str, normal: int) -> str:
    """Assert what a command that hit an injected fault must do; return what happened."""
    if code == normal:  # a fault the round survives (pruning, the round log): a warning, the round is stored
        rep = json.loads(js)
        assert rep.get("warnings"), point
        return "warned"
    assert code == 7, (point, code, js)
    obj = json.loads(js)
    err = obj["error"]
    assert err["code"] == 7 and err["kind"] == "environment" and err["errno"] == name, (point, err)
    assert err["file"] and err["file"] in err["message"], (point, err)
    if err.get("round_stored"):
        assert "stored and current" in err["message"] or "nevertheless names round" in err["message"], err
        return "stored"
    assert "round_stored" not in obj  # an error object, not a report with an --out error
    assert snapshot(st) == before, f"state changed by a fault at {point}"
    assert "unchanged" in err["message"] or "lock" in err["message"] or err["message"], point
    return "unchanged"


# ENOSPC hits every write point of a step; the other errnos of a step take every third point each, at offsets 0, 1
# and 2, so every point also meets one of them (which errno it is changes only the error's wording: the suite's time)
STEP_STRIDE = {"EROFS": 0, "EACCES": 1, "EDQUOT": 2}


@pytest.mark.parametrize(("scenario", "name"), [
    ("step", "ENOSPC"), ("step", "EROFS"), ("step", "EACCES"), ("step", "EDQUOT"),
    ("step_after_rollback", "ENOSPC"), ("failed_round", "ENOSPC"), ("rollback", "EROFS"),
])
def test_a_fault_at_every_write_point(capsys, tmp_path, monkeypatch, scenario, name):
    template, args = SCENARIOS[scenario](tmp_path)
    points, normal = _write_points(capsys, tmp_path, template, args, monkeypatch)
    assert len(points) >= 3, points
    seen = set()
    offset = STEP_STRIDE.get(name) if scenario == "step" else None
    for k, line in enumerate(points, start=1):
        if offset is not None and (k - 1) % 3 != offset:
            continue
        st = _fresh(template, tmp_path / "run")
        before = snapshot(st)
        monkeypatch.setenv("COPTER_FAULT_ERRNO", f"{name}@{k}")
        reset_io_faults()
        code, js, _ = run_main(capsys, *_retarget(args, template, st))
        monkeypatch.delenv("COPTER_FAULT_ERRNO")
        seen.add(_check_fault(code, js, before, st, line, name, normal))
        assert not [p.name for p in st.iterdir() if p.name.startswith((".tmp-", ".trash-", ".CURRENT."))], line
        # the next command works on whatever the fault left
        code, js, _ = run_main(capsys, *_retarget(args, template, st))
        assert code in (0, 4) and "error" not in json.loads(js), (line, js)
    assert "unchanged" in seen  # most write points come before CURRENT


def test_a_step_whose_state_folder_fsync_fails_after_current_says_the_round_is_stored(capsys, tmp_path,
                                                                                         monkeypatch):
    template, args = _plain(tmp_path)
    points, _ = _write_points(capsys, tmp_path, template, args, monkeypatch)
    k = next(i for i, line in enumerate(points, 1) if line.split("\t")[1] == "rename"
             and line.endswith("CURRENT")) + 1  # the fsync of the folder right after CURRENT's rename
    assert points[k - 1].split("\t")[1] == "fsync"
    st = _fresh(template, tmp_path / "run")
    monkeypatch.setenv("COPTER_FAULT_ERRNO", f"EIO@{k}")
    reset_io_faults()
    code, js, _ = run_main(capsys, *_retarget(args, template, st))
    err = json.loads(js)["error"]
    assert code == 7 and err["round_stored"] is True and "round 1 is nevertheless stored and current" in err["message"]
    assert (st / "CURRENT").read_text() == "1\n"


def test_out_failing_with_a_machine_fault_after_the_round_is_stored_exits_7(capsys, tmp_path, monkeypatch):
    template, args = _plain(tmp_path)
    points, _ = _write_points(capsys, tmp_path, template, args, monkeypatch)
    k = next(i for i, line in enumerate(points, 1) if "/out/" in line)
    st = _fresh(template, tmp_path / "run")
    monkeypatch.setenv("COPTER_FAULT_ERRNO", f"ENOSPC@{k}")
    reset_io_faults()
    code, js, _ = run_main(capsys, *_retarget(args, template, st))
    rep = json.loads(js)
    assert code == 7 and rep["round"] == 1 and rep["status"] == "OPTIMAL"  # the report, plus the error
    assert rep["error"]["kind"] == "environment" and rep["error"]["round_stored"] is True
    assert "round 1 is stored and current" in rep["error"]["message"] and "/out" in rep["error"]["message"]
    assert (st / "CURRENT").read_text() == "1\n"


def test_init_that_cannot_write_leaves_no_state(capsys, tmp_path, monkeypatch):
    write_problem(small_lp(), tmp_path / "base.parquet")
    monkeypatch.setenv("COPTER_FAULT_ERRNO", "ENOSPC@3")
    reset_io_faults()
    code, js, _ = run_main(capsys, "init", tmp_path / "base.parquet", "--state", tmp_path / "st", "--json")
    monkeypatch.delenv("COPTER_FAULT_ERRNO")
    err = json.loads(js)["error"]
    assert code == 7 and err["kind"] == "environment" and err["reason"] == "no_space"
    assert not (tmp_path / "st").exists()
    code, _, _ = run_main(capsys, "init", tmp_path / "base.parquet", "--state", tmp_path / "st", "--json")
    assert code == 0


# ------------------------------------------------------------------------------------------ .lock

def test_lock_path_that_is_a_folder_exits_7_naming_it(capsys, tmp_path):
    st, args = _plain(tmp_path)
    (st / ".lock").unlink()
    (st / ".lock").mkdir()
    before = snapshot(st)
    code, js, _ = run_main(capsys, *args)
    err = json.loads(js)["error"]
    assert code == 7 and err["kind"] == "environment" and err["reason"] == "lock"
    assert err["file"] == str(st / ".lock") and "a folder" in err["message"] and str(st / ".lock") in err["message"]
    assert snapshot(st) == before
    (st / ".lock").rmdir()
    assert run_main(capsys, *args)[0] == 0


def test_lock_path_that_is_a_dangling_symlink_exits_7_and_creates_nothing(capsys, tmp_path):
    st, args = _plain(tmp_path)
    target = tmp_path / "elsewhere" / "lockfile"
    target.parent.mkdir()
    (st / ".lock").unlink()
    (st / ".lock").symlink_to(target)
    before = snapshot(st)
    for cmd in (args, ["rollback", "--state", st, "--json"]):
        code, js, _ = run_main(capsys, *cmd)
        err = json.loads(js)["error"]
        assert code == 7 and err["reason"] == "lock" and "symbolic link" in err["message"], err
        assert str(target) in err["message"]
    assert not target.exists() and snapshot(st) == before


def test_wait_with_an_unusable_lock_path_fails_at_once_with_7(capsys, tmp_path):
    st, args = _plain(tmp_path)
    (st / ".lock").unlink()
    (st / ".lock").mkdir()
    code, _, _ = run_main(capsys, *args, "--wait", "30")
    assert code == 7


# ------------------------------------------------------------------------------------------ real mounts

def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True)


@pytest.fixture
def tmpfs(tmp_path):
    """A 2 MiB tmpfs at tmp_path/mnt (skips when mounting is not permitted)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    try:
        _mount("-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt))
    except (subprocess.CalledProcessError, OSError) as e:
        pytest.skip(f"cannot mount a tmpfs here: {getattr(e, 'stderr', e)!r}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_read_only_state_gives_7_and_stays_unchanged(capsys, tmp_path, tmpfs):
    st = tmpfs / "st"
    rounds.init(small_lp(), st)
    d = tmp_path / "d1.parquet"
    write_delta(cost_delta(0), d)
    before = snapshot(st)
    _mount("-o", "remount,ro", str(tmpfs))
    for cmd in (["step", d, "--state", st, "--json"], ["rollback", "--to", "0", "--state", st, "--json"],
                ["init", tmp_path / "d1.parquet", "--state", tmpfs / "new", "--json"]):
        code, js, _ = run_main(capsys, *cmd)
        err = json.loads(js)["error"]
        assert code == 7 and err["kind"] == "environment" and err["errno"] == "EROFS", (cmd, err)
        assert err["file"] and err["file"] in err["message"]
    code, js, _ = run_main(capsys, "show", "--state", st, "--json")  # readers still work
    assert code == 0 and json.loads(js)["round"] == 0
    assert snapshot(st) == before
    _mount("-o", "remount,rw", str(tmpfs))
    code, js, _ = run_main(capsys, "step", d, "--state", st, "--json")
    assert code == 0 and json.loads(js)["round"] == 1


def test_full_disk_at_several_fill_levels_gives_7_or_a_stored_round(capsys, tmp_path, tmpfs):
    st = tmpfs / "st"
    rounds.init(small_lp(n=400, m=150), st, keep=2)
    outcomes = []
    for level, free_kib in enumerate((0, 4, 8, 16, 32, 64, 128, 512)):
        cur = int((st / "CURRENT").read_text())
        d = tmp_path / f"d{level}.parquet"
        write_delta(cost_delta(cur, 5.0 + level), d)
        filler = tmpfs / "filler"
        with open(filler, "wb", buffering=0) as f:  # fill the disk, then give back free_kib
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError as e:
                assert e.errno == errno.ENOSPC
        os.truncate(filler, max(0, filler.stat().st_size - free_kib * 1024))
        before = snapshot(st)
        code, js, _ = run_main(capsys, "step", d, "--state", st, "--json")
        obj = json.loads(js)
        if code == 7:
            assert obj["error"]["errno"] == "ENOSPC" and obj["error"]["file"] in obj["error"]["message"]
            if not obj["error"].get("round_stored"):
                assert snapshot(st) == before
        else:
            assert code == 0 and obj["round"] == cur + 1
        outcomes.append(code)
        filler.unlink()
        code, js, _ = run_main(capsys, "step", d, "--state", st, "--json")  # space again: it goes on
        assert code == 0, js
    assert 7 in outcomes


# ------------------------------------------------------------------------------------------ outputs

@pytest.mark.parametrize("command", ["solve", "export", "convert", "diff"])
def test_an_output_the_disk_cannot_hold_exits_7_naming_it_and_leaves_no_temp_file(capsys, tmp_path, monkeypatch,
                                                                                    command):
    base = tmp_path / "base.parquet"
    write_problem(small_lp(), base)
    st = tmp_path / "st"
    rounds.init(base, st)
    new = tmp_path / "new.parquet"
    write_problem(small_lp(seed=1), new)
    outdir = tmp_path / "outputs"
    outdir.mkdir()
    out = outdir / ("x.parquet" if command != "export" else "x.mps.gz")
    args = {"solve": ["solve", base, "-o", out], "export": ["export", "-o", out, "--state", st],
            "convert": ["convert", base, out], "diff": ["diff", base, new, "-o", out]}[command]
    monkeypatch.setenv("COPTER_FAULT_ERRNO", "ENOSPC@2")  # 1: the temporary file's creation, 2: its fsync
    reset_io_faults()
    code, js, _ = run_main(capsys, *args, "--json")
    err = json.loads(js)["error"]
    assert code == 7 and err["kind"] == "environment" and err["errno"] == "ENOSPC", err
    assert err["file"] == str(out) and str(out) in err["message"]
    assert list(outdir.iterdir()) == []  # no half-written file, no temporary file


def test_outputs_on_a_read_only_mount_exit_7_before_any_work(capsys, tmp_path, tmpfs):
    base = tmp_path / "base.parquet"
    write_problem(small_lp(), base)
    st = tmp_path / "st"
    rounds.init(base, st)
    d = tmp_path / "d1.parquet"
    write_delta(cost_delta(0), d)
    _mount("-o", "remount,ro", str(tmpfs))
    before = snapshot(st)
    for cmd in (["solve", base, "-o", tmpfs / "x.parquet"], ["export", "-o", tmpfs / "x.mps", "--state", st],
                ["step", d, "--state", st, "--out", tmpfs / "out"]):
        code, js, _ = run_main(capsys, *cmd, "--json")
        err = json.loads(js)["error"]
        assert code == 7 and err["reason"] == "read_only" and "read-only file system" in err["message"], err
    assert snapshot(st) == before  # the step refused its --out before any work
