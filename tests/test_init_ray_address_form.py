"""``copter init --partitions K --ray-address A`` checks A's form whatever the executor: one that is not
``host:port``, ``ray://host:port``, ``auto`` or ``local`` is exit 2 naming ``--ray-address`` and the value,
nothing written. With ``--executor ray`` it was checked; with ``process`` (the default) or ``inline`` it was
stored unchecked, and the mistake surfaced only at a later ``step --executor ray``, which reads the stored
address (init's address is kept for such a step, so it is not refused as unread, unlike ``step --ray-address``
off Ray: ``tests/test_step_ray_address_off_ray.py``). The library's ``rounds.init`` refuses it the same way."""

from __future__ import annotations

import json

import pytest

from formats.io import write_problem
from solver import rounds
from solver.model.errors import UsageError
from tests.helpers import client_allocation, run_main, snapshot


@pytest.fixture
def base(tmp_path):
    path = tmp_path / "base.parquet"
    write_problem(client_allocation(n_clients=4), path)
    return path


@pytest.mark.parametrize("executor", [[], ["--executor", "process"], ["--executor", "inline"]])
@pytest.mark.parametrize("address", ["nocolon", "host:port", "ray://", "10.0.0.5:99999"])
def test_a_malformed_address_is_refused_whatever_the_executor(base, tmp_path, capsys, executor, address):
    st = tmp_path / "st"
    code, out, _ = run_main(capsys, "init", base, "--state", st, "--partitions", "2", *executor,
                            "--ray-address", address, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage", out
    assert "--ray-address" in error["message"] and repr(address) in error["message"], error
    assert not st.exists()  # nothing written, not even the folder


def test_an_existing_empty_folder_stays_empty_and_the_library_refuses_too(base, tmp_path, capsys):
    st = tmp_path / "st"
    st.mkdir()
    code, out, _ = run_main(capsys, "init", base, "--state", st, "--partitions", "2", "--executor", "inline",
                            "--ray-address", "nocolon", "--json")
    assert code == 2 and "--ray-address" in json.loads(out)["error"]["message"], out
    with pytest.raises(UsageError, match="--ray-address"):
        rounds.init(base, st, partition={"k": 2, "executor": "inline", "ray_address": "host:port"})
    assert snapshot(st) == {} and list(st.iterdir()) == []


@pytest.mark.parametrize("address", ["127.0.0.1:6379", "ray://head:10001", "auto"])
def test_a_well_formed_address_is_stored_for_a_later_ray_step(base, tmp_path, capsys, address):
    st = tmp_path / "st"
    code, out, _ = run_main(capsys, "init", base, "--state", st, "--partitions", "2", "--executor", "inline",
                            "--ray-address", address, "--json")
    assert code == 0, out
    stored = json.loads((st / "config.json").read_text())["partition"]
    assert stored["executor"] == "inline" and stored["ray_address"] == address
