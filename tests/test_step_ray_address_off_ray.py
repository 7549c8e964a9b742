"""``copter step --ray-address A`` on a partitioned state whose round does not run on Ray (the state stored
``--executor process`` or ``inline``, and no ``--executor ray`` is given; or ``--executor process|inline`` is
given) is refused: exit 2 naming ``--ray-address`` and the executor in use, nothing applied. The address was
accepted and never read (exit 0), so a cron line ``step --ray-address head:6379 ...`` ran every round on local
workers while its author believed the cluster ran them. A monolithic state refuses it too
(``tests/test_step_executor_on_monolithic.py``); init's ``--ray-address`` stays accepted with another executor:
it is stored, and a later ``step --executor ray`` reads it."""

from __future__ import annotations

import json

import pytest

from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from solver.model.errors import UsageError
from solver.rounds.unread_options import refuse_ray_address_off_ray
from tests.helpers import client_allocation, edit_json, run_main, snapshot


def _partitioned_state(tmp_path, stored: str):
    base = client_allocation(n_clients=4)
    write_problem(base, tmp_path / "alloc.parquet")
    st = tmp_path / "part"
    rounds.init(tmp_path / "alloc.parquet", st, partition={"k": 2, "executor": "inline"})
    if stored != "inline":  # what init --executor process stores; no worker starts before the refusal
        edit_json(st / "config.json", lambda c: c["partition"].update(executor=stored))
    delta = tmp_path / "p1.parquet"
    write_delta(Delta.concat([Delta.vars([base.col_names[0]], cost=[2.0])], base_round=0), delta)
    return st, delta


@pytest.mark.parametrize(("stored", "args", "used"), [
    ("inline", (), "inline"), ("process", (), "process"),
    ("inline", ("--executor", "process"), "process"), ("inline", ("--executor", "inline"), "inline"),
])
def test_ray_address_where_the_round_does_not_run_on_ray_is_refused(tmp_path, capsys, stored, args, used):
    st, delta = _partitioned_state(tmp_path, stored)
    before = snapshot(st)
    code, out, _ = run_main(capsys, "step", delta, "--state", st, *args, "--ray-address", "127.0.0.1:6379",
                            "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage", out
    assert "--ray-address" in error["message"] and used in error["message"], error
    assert "--executor ray" in error["message"], error  # the way to use it
    assert snapshot(st) == before  # nothing applied


def test_a_batch_and_the_library_are_refused_before_the_first_delta(tmp_path, capsys):
    st, delta = _partitioned_state(tmp_path, "inline")
    before = snapshot(st)
    code, out, _ = run_main(capsys, "step", delta, delta, "--state", st, "--ray-address", "auto", "--json")
    assert code == 2 and "--ray-address" in json.loads(out)["error"]["message"], out
    with pytest.raises(UsageError, match="--ray-address"):
        rounds.step(delta, st, ray_address="127.0.0.1:6379")
    assert snapshot(st) == before


@pytest.mark.parametrize(("partition", "executor"), [
    ({"k": 2, "executor": "ray"}, None), ({"k": 2, "executor": "inline"}, "ray"), ({"k": 2}, "ray"),
    ({"k": 2, "executor": "typo"}, None),  # a damaged stored value: config_of names config.json instead
    (None, None), ({"k": 1}, None),  # monolithic: refuse_executor_on_monolithic's
])
def test_an_address_a_ray_round_reads_passes(partition, executor):
    refuse_ray_address_off_ray(partition, executor, "127.0.0.1:6379", "st")


def test_no_address_passes_and_the_stored_one_stays_for_later_ray_rounds(tmp_path, capsys):
    """init's --ray-address with another executor is stored (a later step --executor ray reads it); a step
    without --ray-address runs on the stored executor as before."""
    refuse_ray_address_off_ray({"k": 2, "executor": "process"}, None, None, "st")
    st, delta = _partitioned_state(tmp_path, "inline")
    edit_json(st / "config.json", lambda c: c["partition"].update(ray_address="127.0.0.1:6379"))
    code, out, _ = run_main(capsys, "step", delta, "--state", st, "--json")
    assert code == 0 and json.loads(out)["partitions"]["executor"] == "inline", out


def test_a_malformed_address_is_refused_on_a_no_op_re_apply_too(tmp_path, capsys):
    # helper-214: on a re-applied delta (nothing to do) `--executor ray --ray-address 'not an address'` exited 0,
    # where a real round refuses its form (exit 2) and the same no-op without --executor ray was refused
    st, delta = _partitioned_state(tmp_path, "inline")
    code, out, _ = run_main(capsys, "step", delta, "--state", st, "--json")
    assert code == 0, out
    before = snapshot(st)
    code, out, err = run_main(capsys, "step", delta, "--state", st, "--executor", "ray", "--ray-address",
                              "not an address", "--json")
    assert code == 2, (out, err)
    assert "is not a Ray cluster address" in json.loads(out)["error"]["message"]
    assert snapshot(st) == before
