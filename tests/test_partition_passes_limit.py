"""``--partition-passes`` has an upper bound (:data:`solver.partition.limits.MAX_PASSES`) refused with exit 2 naming
the option, and a spent ``--time-limit`` ends the passes: ``init --partitions 2 --partition-passes
99999999999999999999`` was accepted and ran for ever (300 s+; the hunter), each pass's parts stopped by the limit
at once but the next pass started all the same."""

from __future__ import annotations

import math

import pytest

from formats.io import write_problem
from solver.model.errors import UsageError
from solver.model.settings import Settings
from solver.partition import round as pround
from solver.partition import shares as sh
from solver.partition.round import pass_name
from solver.workloads import make_scenario
from tests.helpers import client_allocation, run_main


def _schedule_passes() -> int:
    """Passes in which a (part, row) step, growing from D0 by GROW up to D_MAX, carries a share from FLOOR to 1,
    plus the flips that halve D_MAX down to D_MIN (MAX_PASSES's reason, from the share update's constants)."""
    cross, moved, d = 0, 0.0, sh.D0
    while moved < math.log(1.0 / sh.FLOOR):
        moved, d, cross = moved + d, min(d * sh.GROW, sh.D_MAX), cross + 1
    return cross + math.ceil(math.log(sh.D_MAX / sh.D_MIN) / math.log(1.0 / sh.SHRINK))


def test_the_bound_is_twice_the_share_schedule():
    assert _schedule_passes() == 25 and pround.MAX_PASSES == 2 * _schedule_passes()


@pytest.mark.parametrize("passes", [0, pround.MAX_PASSES + 1, 99999999999999999999])
def test_passes_outside_the_range_are_refused_naming_the_option(passes):
    with pytest.raises(UsageError, match=f"--partition-passes must be between 1 and {pround.MAX_PASSES}"):
        pround.PartitionConfig(k=2, passes=passes).check()


def test_the_largest_count_is_accepted():
    pround.PartitionConfig(k=2, passes=pround.MAX_PASSES).check()


def test_cli_init_refuses_too_many_passes_and_writes_nothing(tmp_path, capsys):
    base = tmp_path / "base.parquet"
    write_problem(client_allocation(n_clients=4), base)
    code, _, err = run_main(capsys, "init", base, "--partitions", "2", "--executor", "inline",
                            "--partition-passes", str(pround.MAX_PASSES + 1), "--state", tmp_path / "st")
    assert code == 2 and "--partition-passes" in err and str(pround.MAX_PASSES) in err, err
    assert not (tmp_path / "st").exists()


@pytest.mark.parametrize("problem", ["lp", "milp"])
def test_a_spent_time_limit_ends_the_passes(problem):
    p = client_allocation(n_clients=6) if problem == "lp" else make_scenario("sia", 32, seed=0).base()
    cfg = pround.PartitionConfig(k=2, executor="inline", passes=pround.MAX_PASSES)
    out = pround.solve_round(p, Settings(time_limit_seconds=1e-3), cfg)  # spent by the end of the first pass
    passes = [pass_name(q) for q in out.report["shares"]["passes"]]
    assert [q for q in passes if isinstance(q, int)] == [0], passes  # was 0 .. 49
    assert out.data is not None
