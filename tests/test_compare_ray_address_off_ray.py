"""``copter compare -b pop --ray-address A`` when POP's parts do not run on Ray (``--executor process|inline``,
``--pop-workers 0``, or no ``--executor`` on a state whose executor is not ``ray``) is refused: exit 2 naming
``--ray-address`` and the executor in use, nothing run, nothing logged. The address was accepted and never read
(exit 0, the parts run on local workers), as ``step --ray-address`` off Ray was
(``tests/test_step_ray_address_off_ray.py``). The library's ``rounds.compare`` raises the same UsageError, same
message: one check (``solver.rounds.compare_options``), with the state's executor checked in
``solver.rounds.comparison.pop_executor_of``, which both go through."""

from __future__ import annotations

import json

import pytest

from formats.io import write_problem
from solver import rounds
from solver.model.errors import UsageError
from solver.rounds.compare_options import ignored_options
from tests.helpers import client_allocation, edit_json, run_main, small_lp_state, snapshot

ADDRESS = "127.0.0.1:6379"


@pytest.mark.parametrize(("cli", "kwargs", "used"), [
    (["--executor", "process"], {"pop_executor": "process"}, "--executor process"),
    (["--executor", "inline"], {"pop_executor": "inline"}, "--executor inline"),
    (["--pop-workers", "0"], {"pop_workers": 0}, "--pop-workers 0"),
    ([], {}, "process"),  # a monolithic state: POP's default executor
])
def test_an_address_pop_does_not_read_is_refused(tmp_path, capsys, cli, kwargs, used):
    st, _ = small_lp_state(tmp_path)
    before = snapshot(st)
    code, out, err = run_main(capsys, "compare", "--state", st, "-b", "pop", "--k", "2", *cli,
                              "--ray-address", ADDRESS, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage", (out, err)
    assert error["message"].startswith("--ray-address applies to --executor ray only"), error
    assert used in error["message"] and "--executor ray" in error["message"], error
    with pytest.raises(UsageError) as raised:
        rounds.compare(st, ["pop"], ks=[2], ray_address=ADDRESS, **kwargs)
    assert str(raised.value.message) == error["message"]  # one check, one message
    assert snapshot(st) == before  # nothing ran, no log row


@pytest.mark.parametrize("stored", ["inline", "process"])
def test_the_executor_a_partitioned_state_stored_is_named(tmp_path, capsys, stored):
    write_problem(client_allocation(n_clients=4), tmp_path / "alloc.parquet")
    st = tmp_path / "part"
    rounds.init(tmp_path / "alloc.parquet", st, partition={"k": 2, "executor": "inline"})
    edit_json(st / "config.json", lambda c: c["partition"].update(executor=stored))
    before = snapshot(st)
    code, out, _ = run_main(capsys, "compare", "--state", st, "-b", "pop-2", "--ray-address", ADDRESS, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 2 and "--ray-address" in msg and repr(stored) in msg and str(st) in msg, out
    assert snapshot(st) == before


@pytest.mark.parametrize(("executor", "pop_workers"), [("ray", None), (None, None), (None, 2), ("ray", 2)])
def test_an_address_a_ray_run_may_read_passes_the_shared_check(executor, pop_workers):
    """``--executor ray``, or none given (the state's executor decides, after the state is read)."""
    assert ignored_options({"ray_address", "pop_executor"} if executor else {"ray_address"}, ["pop"],
                           executor=executor, pop_workers=pop_workers) is None


def test_the_options_no_baseline_reads_are_named_first():
    """``-b highs --executor process --ray-address A``: neither is read by any baseline; that error wins."""
    msg = ignored_options({"ray_address", "pop_executor"}, ["highs"], executor="process")
    assert msg.startswith("--executor, --ray-address apply to none of this compare's baselines"), msg
