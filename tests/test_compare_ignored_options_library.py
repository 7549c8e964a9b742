"""``solver.rounds.compare`` refuses a parameter that none of the chosen baselines reads, as ``copter compare``
does (``tests/test_compare_ignored_options.py``): UsageError with the command line's message, nothing run,
nothing logged. ``compare(st, ["highs"], ks=[16])`` ran HiGHS alone and returned, ``ks`` dropped: only the
command line checked. The check is one (``solver.rounds.compare_options``), shared by both."""

from __future__ import annotations

import json

import pytest

from solver import rounds
from solver.model.errors import UsageError
from solver.rounds.compare_options import given_parameters
from tests.helpers import run_main, small_lp_state, snapshot


@pytest.mark.parametrize(("baselines", "kwargs", "cli"), [
    (["highs"], {"ks": [16]}, ["-b", "highs", "--k", "16"]),
    (["highs"], {"seed": 3, "pop_workers": 0}, ["-b", "highs", "--seed", "3", "--pop-workers", "0"]),
    (["highs-warm"], {"pop_executor": "inline", "pop_scaling": "uniform"},
     ["-b", "highs-warm", "--executor", "inline", "--pop-scaling", "uniform"]),
    (["highs"], {"ray_address": "127.0.0.1:6379"}, ["-b", "highs", "--ray-address", "127.0.0.1:6379"]),
    (["pop-2"], {"ks": [3]}, ["-b", "pop-2", "--k", "3"]),
    (["highs-ipm"], {"highs_solver": "simplex"}, ["-b", "highs-ipm", "--highs-solver", "simplex"]),
    (["pop-2"], {"threads": 2}, ["-b", "pop-2", "--threads", "2"]),
])
def test_the_library_refuses_what_the_command_line_refuses(tmp_path, capsys, baselines, kwargs, cli):
    st, _ = small_lp_state(tmp_path)
    before = snapshot(st)
    with pytest.raises(UsageError) as err:
        rounds.compare(st, baselines, **kwargs)
    assert snapshot(st) == before  # nothing ran, no log row
    code, out, _ = run_main(capsys, "compare", "--state", st, *cli, "--json")
    assert code == 2 and json.loads(out)["error"]["message"] == str(err.value.message), (out, err.value)


def test_a_mistyped_baseline_is_named_first(tmp_path):
    st, _ = small_lp_state(tmp_path)
    with pytest.raises(UsageError, match="^unknown baseline pops"):
        rounds.compare(st, ["pops"], ks=[2])


def test_defaults_are_not_given():
    assert given_parameters(ks=None, highs_solver="choose", pop_scaling="auto", threads=None, seed=None) == set()
    assert given_parameters(ks=[4], highs_solver="ipm", pop_scaling="uniform", seed=0) == {
        "ks", "highs_solver", "pop_scaling", "seed"}


def test_parameters_a_baseline_reads_still_run(tmp_path):
    st, _ = small_lp_state(tmp_path)
    res = rounds.compare(st, ["highs"], highs_solver="simplex", threads=1)
    assert [b["name"] for b in res["baselines"]] == ["highs"]
