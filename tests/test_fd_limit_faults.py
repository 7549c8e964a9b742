"""Too many open files (EMFILE, ``ulimit -n``; ENFILE for the whole system) is a fault of the environment like a
permission denied: exit 7 naming the path, no fall-back to an older round, nothing changed. A loaded generation's
numeric arrays are copy-on-write views of their files and each holds a descriptor while it lives
(``formats/checkpoint_arrays.private_view``), so a process can now run out of them where it did not before:
``ulimit -n 14; copter step d.parquet`` said ``generation gen-000001 is damaged: [Errno 24] Too many open files``
(exit 3, blaming the state), and the same error from the checksum pass made the current round "incomplete", so a
step built on the round before it and moved the current one into ``abandoned/``."""

from __future__ import annotations

import errno
import json
import os

import pytest

from formats.checkpoint import StateStore
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.errors import EnvironmentFaultError
from solver.model.settings import Settings
from tests.helpers import run_main, small_lp


@pytest.fixture
def state(tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), st, Settings())
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d1.parquet")
    rounds.step(tmp_path / "d1.parquet", st)
    write_delta(Delta.concat([Delta.vars(["x4"], cost=[6.0])], base_round=1), tmp_path / "d2.parquet")
    assert (st / "CURRENT").read_text() == "1\n"
    return st


def _listing(st):
    return sorted(os.path.relpath(os.path.join(d, f), st) for d, _, fs in os.walk(st) for f in fs)


def _emfile(*args, **kwargs):
    raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))


@pytest.mark.parametrize("code", [errno.EMFILE, errno.ENFILE], ids=["EMFILE", "ENFILE"])
def test_running_out_of_descriptors_while_checking_is_no_damage(state, monkeypatch, code):
    def crc(path):
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr("formats.checkpoint.file_crc32", crc)
    with pytest.raises(EnvironmentFaultError) as e:
        StateStore(state, reuse=False).current(verify=True)
    assert os.strerror(code) in str(e.value) and "gen-000001" in str(e.value), str(e.value)


@pytest.mark.parametrize("args", [("step", "{d2}"), ("export", "-o", "{x}")], ids=["step", "export"])
def test_running_out_of_descriptors_while_loading_is_exit_7(state, tmp_path, monkeypatch, capsys, args):
    before = _listing(state)
    monkeypatch.setattr("formats.checkpoint._RECENT", {})  # load from disk, not this process's last round
    monkeypatch.setattr("formats.checkpoint_arrays.private_view", _emfile)
    argv = [a.format(d2=tmp_path / "d2.parquet", x=tmp_path / "x.mps") for a in args]
    code, out, err = run_main(capsys, *argv, "--state", str(state), "--json")
    assert code == 7, (code, out, err)
    e = json.loads(out)["error"]
    assert e["kind"] == "environment" and "Too many open files" in e["message"] and "damaged" not in e["message"], e
    assert "gen-000001" in (e.get("file") or ""), e
    assert _listing(state) == before and (state / "CURRENT").read_text() == "1\n"


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts this process's descriptors in /proc/self/fd")
def test_a_process_driving_many_states_keeps_a_bounded_number_of_them_loaded(state, tmp_path):
    # solver.rounds driving one state after another kept every state's last generation in memory, each holding
    # its arrays' views and so ~5-10 descriptors: ~200 states (ulimit -n 1024) and every later load was EMFILE
    import shutil

    from formats import checkpoint

    def fds() -> int:
        return len(os.listdir("/proc/self/fd"))

    checkpoint._RECENT.clear()
    before = fds()
    n = 3 * checkpoint.RECENT_STATES
    for i in range(n):
        st = tmp_path / f"s{i}"
        shutil.copytree(state, st)  # a state this process never held: its round 1 is loaded from its files
        rounds.step(tmp_path / "d2.parquet", st)
    assert len(checkpoint._RECENT) == checkpoint.RECENT_STATES
    grown = fds() - before
    assert grown <= 12 * checkpoint.RECENT_STATES, f"{grown} descriptors held after {n} states"
    # the most recent state's round is still reused: its next step loads nothing from disk
    write_delta(Delta.concat([Delta.vars(["x5"], cost=[7.0])], base_round=2), tmp_path / "d3.parquet")
    assert os.path.realpath(tmp_path / f"s{n - 1}") in checkpoint._RECENT
    rep = rounds.step(tmp_path / "d3.parquet", tmp_path / f"s{n - 1}")
    assert rep["round"] == 3
