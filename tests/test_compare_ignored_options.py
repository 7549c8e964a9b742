"""``copter compare`` refuses an option that none of the chosen baselines reads (exit 2 naming it, nothing run,
nothing logged): ``compare --baseline highs --k 16`` ran HiGHS alone and exited 0, the ``--k`` dropped; so did
``--seed``/``--pop-*``/``--executor`` without POP, ``--k`` beside ``pop-3`` (its K is fixed), ``--highs-solver``
with only ``highs-warm``/``highs-ipm`` (they fix their solver) and ``--threads`` with only POP."""

from __future__ import annotations

import json

import pytest

from copter_cli.cmd_compare import ignored_options
from tests.helpers import run_main, small_lp_state, snapshot


@pytest.mark.parametrize(("args", "flags"), [
    (["-b", "highs", "--k", "16"], ["--k"]),
    (["-b", "highs", "--seed", "3", "--pop-workers", "0"], ["--seed", "--pop-workers"]),
    (["-b", "highs-warm", "--executor", "inline", "--pop-scaling", "uniform"], ["--executor", "--pop-scaling"]),
    (["-b", "pop-2", "--k", "3"], ["--k"]),
    (["-b", "highs-warm", "--highs-solver", "ipm"], ["--highs-solver"]),
    (["-b", "highs-ipm", "--highs-solver", "simplex"], ["--highs-solver"]),
    (["-b", "pop-2", "--threads", "2"], ["--threads"]),
    (["--k", "2"], ["--k"]),  # the default baseline is highs
])
def test_an_option_no_baseline_reads_is_a_usage_error(tmp_path, capsys, args, flags):
    st, _ = small_lp_state(tmp_path)
    before = snapshot(st)
    code, out, err = run_main(capsys, "compare", "--state", st, *args, "--json")
    assert code == 2, (out, err)
    msg = json.loads(out)["error"]["message"]
    assert all(f in msg.split(":")[0] for f in flags), msg
    assert "leave" in msg
    assert snapshot(st) == before  # no log row: nothing ran


@pytest.mark.parametrize("given,baselines", [
    ({"k", "seed", "pop_workers", "highs_solver"}, ["pop"]),
    ({"highs_solver", "threads"}, ["highs"]),
    ({"threads"}, ["highs-warm", "pop-2"]),
    ({"seed", "pop_scaling", "executor"}, ["highs", "pop-4"]),
    ({"highs_solver"}, ["pop-2"]),  # POP's parts are solved by --highs-solver
    (set(), ["highs-warm"]),
])
def test_options_a_baseline_reads_pass(given, baselines):
    assert ignored_options(given, baselines) is None


def test_default_values_are_not_given(tmp_path, capsys):
    """Only options typed on the command line count: the defaults (--k 4, --highs-solver choose) do not."""
    st, _ = small_lp_state(tmp_path)
    code, out, err = run_main(capsys, "compare", "--state", st, "-b", "highs-warm", "--json")
    assert code == 0, (out, err)
    assert [b["name"] for b in json.loads(out)["baselines"]] == ["highs-warm"]


def test_a_mistyped_baseline_is_named_before_the_options(tmp_path, capsys):
    """``-b pops --k 2``: the typo is the error, not the --k it leaves unread."""
    st, _ = small_lp_state(tmp_path)
    code, out, _ = run_main(capsys, "compare", "--state", st, "-b", "pops", "--k", "2", "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 2 and msg.startswith("unknown baseline pops"), msg
