"""``copter init`` given a partition option without ``--partitions K`` (K >= 2) refuses it (exit 2 naming the
option, nothing written). The options were dropped without a word: ``init base --partition-passes 3`` or
``--client-regex ...`` made a monolithic state, and every later step ran monolithic, when the operator had only
forgotten ``--partitions``."""

from __future__ import annotations

import json

import pytest

from formats.io import write_problem
from tests.helpers import client_allocation, run_main

OPTIONS = [("--partition-passes", "3"), ("--share-update-every", "2"), ("--whole-below-nnz", "0"),
           ("--client-regex", "^(?P<client>c\\d+)"), ("--shared-rows-regex", "^cap/"), ("--executor", "inline"),
           ("--ray-address", "127.0.0.1:6379")]


@pytest.fixture
def base(tmp_path):
    path = tmp_path / "base.parquet"
    write_problem(client_allocation(n_clients=4), path)
    return path


@pytest.mark.parametrize("partitions", [[], ["--partitions", "1"]])
@pytest.mark.parametrize("option,value", OPTIONS)
def test_a_partition_option_without_partitions_is_refused(base, tmp_path, capsys, option, value, partitions):
    code, out, _ = run_main(capsys, "init", base, "--state", tmp_path / "st", option, value, *partitions, "--json")
    error = json.loads(out)["error"]
    assert code == 2, out
    assert option in error["message"] and "--partitions" in error["message"], error
    # what the command line had: no --partitions, or --partitions 1 (helper-158: "has no --partitions K" for the latter)
    said = "has --partitions 1 (one part" if partitions else "has no --partitions K (K >= 2)"
    assert said in error["message"], error
    assert ("give --partitions K with K >= 2" if partitions else "add --partitions K") in error["message"], error
    assert "the rounds would be monolithic and it would be ignored;" in error["message"], error  # helper-189 #3
    assert not (tmp_path / "st").exists()


def test_the_options_with_partitions_are_stored(base, tmp_path, capsys):
    code, out, _ = run_main(capsys, "init", base, "--state", tmp_path / "st", "--partitions", "2",
                            "--executor", "inline", "--partition-passes", "2", "--whole-below-nnz", "0", "--json")
    assert code == 0, out
    stored = json.loads((tmp_path / "st" / "config.json").read_text())["partition"]
    assert stored["passes"] == 2 and stored["whole_below_nnz"] == 0 and stored["executor"] == "inline"


def test_a_monolithic_init_without_them_still_works(base, tmp_path, capsys):
    code, out, _ = run_main(capsys, "init", base, "--state", tmp_path / "st", "--json")
    assert code == 0, out
    assert "partition" not in json.loads((tmp_path / "st" / "config.json").read_text())
