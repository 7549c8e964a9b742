"""``copter compare -b highs -b pop --executor ray --ray-address A`` with A not of a Ray address's form
(``host:port``, ``ray://host:port``, ``auto``, ``local``) is exit 2 naming ``--ray-address`` and A before any
baseline runs, nothing logged. It ran the HiGHS rows first and failed only when POP's row started (the form
is checked where Ray is joined). The library's ``rounds.compare`` refuses it the same way
(``solver.rounds.compare_options.refuse_ignored``). No Ray cluster is needed: the form is checked before
``ray.init`` (nor Ray installed: before the executor is)."""

from __future__ import annotations

import json

import pytest

from formats.io import write_problem
from solver import rounds
from solver.baselines import registry
from solver.model.errors import UsageError
from tests.helpers import client_allocation, edit_json, require_ray, run_main, small_lp_state, snapshot


def _never(problem, ctx):
    raise AssertionError("a baseline ran before the malformed --ray-address was refused")


@pytest.fixture
def no_highs(monkeypatch):
    monkeypatch.setitem(registry.REGISTRY, "highs", registry.Baseline("highs", "must not run", _never))


def _ray_state(tmp_path):
    """A partitioned state whose init stored --executor ray (made inline, then edited: no Ray needed)."""
    write_problem(client_allocation(n_clients=4), tmp_path / "alloc.parquet")
    st = tmp_path / "part"
    rounds.init(tmp_path / "alloc.parquet", st, partition={"k": 2, "executor": "inline"})
    edit_json(st / "config.json", lambda c: c["partition"].update(executor="ray"))
    return st


@pytest.mark.parametrize(("executor", "state"), [
    (["--executor", "ray"], lambda tmp_path: small_lp_state(tmp_path)[0]),
    ([], _ray_state),  # the state's executor is ray
])
# a port in other digits: '²' was exit 1 (int() refused what str.isdigit() passed), '６３７９' probed 6379 and handed
# Ray the fullwidth text
@pytest.mark.parametrize("address", ["nocolon", "ray://", "10.0.0.5:99999", "10.0.0.5:\u00b2", "10.0.0.5:\uff16\uff13\uff17\uff19"])
def test_a_malformed_address_is_refused_before_any_row_runs(tmp_path, capsys, no_highs, executor, state, address):
    st = state(tmp_path)
    before = snapshot(st)
    code, out, err = run_main(capsys, "compare", "--state", st, "-b", "highs", "-b", "pop", "--k", "2", *executor,
                              "--ray-address", address, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage", (out, err)
    assert error["message"].startswith("--ray-address") and repr(address) in error["message"], error
    with pytest.raises(UsageError, match="--ray-address") as raised:
        rounds.compare(st, ["highs", "pop"], ks=[2], pop_executor=executor[1] if executor else None,
                       ray_address=address, progress=_never)
    assert str(raised.value.message) == error["message"]
    assert snapshot(st) == before  # nothing ran, no log row


@pytest.mark.parametrize("args", [[], ["--executor", "ray"], ["--executor", "process"]])
@pytest.mark.parametrize(("key", "value"), [("ray_address", "nocolon"), ("executor", "typo")])
def test_a_damaged_stored_value_pop_reads_is_the_state_s_damage(tmp_path, capsys, no_highs, args, key, value):
    """The state's ``partition.ray_address`` (read by POP on Ray without ``--ray-address``) or ``executor``:
    exit 3 naming config.json and the key before any row runs, as ``step`` reports them
    (``tests/test_config_partition_values.py``). The address was blamed on ``--ray-address`` (exit 2) when POP's
    row started, after HiGHS's; the executor was ``unknown executor 'typo'`` (exit 2) naming no file."""
    st = _ray_state(tmp_path)
    config = st / "config.json"
    edit_json(config, lambda c: c["partition"].update({key: value}))
    before = snapshot(st)
    code, out, err = run_main(capsys, "compare", "--state", st, "-b", "highs", "-b", "pop-2", *args, "--json")
    error = json.loads(out)["error"]
    assert code == 3 and error["file"] == str(config) and error["entity"] == f"partition.{key}", (out, err)
    assert f"config.json is damaged: partition.{key}" in error["message"] and repr(value) in error["message"]
    assert snapshot(st) == before


def test_a_damaged_partition_value_does_not_stop_a_compare_without_pop(tmp_path, capsys):
    """HiGHS's rows do not read the partition entry: they run."""
    st = _ray_state(tmp_path)
    edit_json(st / "config.json", lambda c: c["partition"].update(ray_address="nocolon"))
    code, out, err = run_main(capsys, "compare", "--state", st, "-b", "highs", "--json")
    assert code == 0, (out, err)


def test_a_malformed_ray_address_variable_is_refused_before_any_row_runs(tmp_path):
    """``$RAY_ADDRESS``, which Ray joins when neither ``--ray-address`` nor the state gives an address (with Ray
    installed: without it ``--executor ray`` is refused first, naming the extra). In its own process: in the
    suite's, an earlier Ray test has initialised Ray, which then joins no address (the test was skipped there)."""
    import os
    import subprocess
    import sys

    from tests.helpers import REPO

    require_ray()
    st, _ = small_lp_state(tmp_path)
    before = snapshot(st)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off", "RAY_ADDRESS": "nocolon"}
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "compare", "--state", str(st), "-b", "highs", "-b",
                           "pop-2", "--executor", "ray", "--json"], env=env, capture_output=True, text=True,
                          timeout=300)
    out = json.loads(proc.stdout)
    error = out["error"]
    assert proc.returncode == 2 and "$RAY_ADDRESS" in error["message"] and "'nocolon'" in error["message"], \
        (proc.stdout, proc.stderr[-2000:])
    assert set(out) == {"error"}  # no row ran
    assert snapshot(st) == before
