"""A small partitioned LP round is also solved whole and keeps the better point (``--whole-below-nnz``,
``solver.partition.fallback.compare_small_lp``): the probe's first split of the shared capacity rows (every part
alone wants all of each row) left TE ring 24's K = 4 merge 5.7% below the monolithic optimum, and the parts' dual
bound is too loose to tell. The next round's shares come from the whole point, so the parts' own merge gets closer,
and the next round's whole solve starts from the previous round's point."""

from __future__ import annotations

import pytest

from solver import rounds
from solver.api import solve_problem
from solver.model.errors import UsageError
from solver.model.settings import Settings
from solver.partition.round import PartitionConfig, solve_round
from solver.workloads import make_scenario
from tests.helpers import run_main


def _gap(problem, objective: float, reference: float) -> float:
    """> 0: ``objective`` worse than ``reference`` in the problem's sense, relative."""
    return problem.sense * (objective - reference) / max(1.0, abs(reference))


@pytest.mark.parametrize("k", [4, 16])
def test_a_small_lp_round_is_within_a_hundredth_percent_of_the_monolithic_optimum(k):
    p = make_scenario("te", 24, seed=0).base()
    mono = solve_problem(p, Settings(tol=1e-7)).objective
    out = solve_round(p, Settings(), PartitionConfig(k=k, executor="inline"))
    fb = out.report["fallback"]
    assert fb["reason"] == "small" and fb["kept"] == "whole" and fb["nnz"] == p.nnz
    assert _gap(p, fb["merged_objective"], mono) > 0.01  # the parts' own merge: the probe's split is far off
    assert abs(_gap(p, out.result.objective, mono)) < 1e-4
    assert out.result.status.name == "OPTIMAL" and out.result.point_feasible


def test_the_next_rounds_shares_come_from_the_whole_point_and_bring_the_merge_closer(tmp_path):
    sc = make_scenario("te", 24, seed=0)
    state = tmp_path / "st"
    r0 = rounds.init(sc.base(), state, partition={"k": 4, "executor": "inline"})
    assert r0["partitions"]["fallback"]["shares_from"] == "whole"
    r1 = rounds.step(sc.next_delta(1), state)
    # round 0's whole solve is cold; a step's starts from the previous round's point, as a monolithic step does
    assert not r0["partitions"]["fallback"]["warm_started"] and r1["partitions"]["fallback"]["warm_started"]
    problem = sc.base()  # its sense
    merged0 = r0["partitions"]["fallback"]["merged_objective"]  # the probe's shares
    merged1 = r1["partitions"]["fallback"]["merged_objective"]  # round 0's whole point's shares, one delta later
    assert _gap(problem, merged1, r1["objective"]) < 0.5 * _gap(problem, merged0, r0["objective"])


def test_above_the_limit_or_with_0_the_round_is_the_parts_alone():
    p = make_scenario("te", 16, seed=0).base()
    for limit in (0, p.nnz - 1):
        out = solve_round(p, Settings(), PartitionConfig(k=4, executor="inline", whole_below_nnz=limit))
        # above a positive limit only a merge more than LP_FAR_GAP from its bound is solved whole (this round 0's
        # probe split on a 16-node ring is; tests/test_partition_lp_far.py), with 0 none is
        fb = out.report.get("fallback")
        assert fb is None or (limit > 0 and fb["reason"] == "far"), fb
    out = solve_round(p, Settings(), PartitionConfig(k=4, executor="inline", whole_below_nnz=p.nnz))
    assert out.report["fallback"]["reason"] == "small"


def test_a_negative_limit_is_a_usage_error_naming_the_option(tmp_path, capsys):
    with pytest.raises(UsageError, match="--whole-below-nnz"):
        PartitionConfig(k=2, whole_below_nnz=-1).check()
    from formats.io import write_problem

    base = tmp_path / "base.parquet"
    write_problem(make_scenario("te", 16, seed=4).base(), base)
    code, _, err = run_main(capsys, "init", base, "--state", tmp_path / "st", "--partitions", "2",
                            "--whole-below-nnz", "-1")
    assert code == 2 and "--whole-below-nnz" in err
    assert not (tmp_path / "st").exists()
