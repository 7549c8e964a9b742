"""A partitioned round on a small model: its parts run in this process instead of worker processes whose start
costs more than the parts (``partition.inline_below_nnz``, stored by ``init`` without ``--executor``), and a small
MILP whose merge is above its target gap is compared with a whole solve at once, without the parts' RENS, price
re-split and re-solve passes (``solver.partition.small.small_milp``). LB 64 x 8, K = 2, a user's trial: 5-7 s
per step against 0.3-0.6 s monolithic, every round ending on the whole solve's point after those passes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from formats.io import write_delta, write_problem
from solver.api import solve_problem
from solver.model.settings import Settings
from solver.partition import executor
from solver.partition import round as pround
from solver.partition.round import pass_name
from solver.partition.small import INLINE_BELOW_NNZ, SMALL_MILP_NNZ, parts_inline, small_milp
from solver.rounds import loop
from solver.rounds.partitioned import config_of
from solver.workloads import make_scenario
from tests.helpers import cli_json, edit_json


def _lb(seed: int = 0):
    return make_scenario("lb", "64x8", seed=seed)


def test_a_small_model_runs_its_parts_in_this_process_unless_the_executor_was_chosen():
    cfg = pround.PartitionConfig(k=2, executor="process", inline_below_nnz=INLINE_BELOW_NNZ)
    lb, lb128, te = _lb().base(), make_scenario("lb", "128x16", seed=0).base(), make_scenario("te", 16, seed=4).base()
    assert lb.nnz < lb128.nnz <= INLINE_BELOW_NNZ and not te.is_mip and te.nnz <= INLINE_BELOW_NNZ
    assert cfg.round_executor(lb) == cfg.round_executor(lb128) == cfg.round_executor(te) == "inline"
    assert replace(cfg, inline_below_nnz=te.nnz - 1).round_executor(te) == "process"
    assert parts_inline(INLINE_BELOW_NNZ, INLINE_BELOW_NNZ) and not parts_inline(INLINE_BELOW_NNZ + 1,
                                                                                 INLINE_BELOW_NNZ)
    assert pround.PartitionConfig(k=2, executor="process").round_executor(lb) == "process"  # 0: never
    assert replace(cfg, executor="ray").round_executor(lb) == "ray"
    stored = {"k": 2, "executor": "process", "inline_below_nnz": INLINE_BELOW_NNZ}
    assert config_of(stored, file="config.json").inline_below_nnz == INLINE_BELOW_NNZ
    assert config_of(stored, "process", file="config.json").inline_below_nnz == 0  # step --executor process
    old = {"k": 2, "executor": "process"}  # a state from before the key: init's default
    assert config_of(old, file="config.json").inline_below_nnz == INLINE_BELOW_NNZ


def test_which_milps_are_small():
    lb = _lb().base()
    assert lb.is_mip and lb.nnz <= SMALL_MILP_NNZ and small_milp(lb)
    assert not small_milp(lb, 0)  # --whole-below-nnz 0: never
    assert not small_milp(make_scenario("lb", "256x32", seed=0).base())  # 40,960 nonzeros
    assert not small_milp(make_scenario("te", 16, seed=4).base())  # an LP


def test_a_small_milp_round_starts_no_workers_and_goes_from_its_merge_to_the_whole_solve():
    executor.shutdown()
    problem = _lb().base()
    st = Settings()
    cfg = pround.PartitionConfig(k=2, executor="process", inline_below_nnz=INLINE_BELOW_NNZ)
    out = pround.solve_round(problem, st, cfg)
    rep = out.report
    assert not executor.workers_ready("process", 2), "a worker pool was started for a small model"
    assert rep["executor"] == "inline" and "small model" in rep["executor_reason"]
    assert "pool_start" not in rep["seconds"]["phases"]
    fb = rep["fallback"]
    assert fb["reason"] == "small" and fb["merged_gap_rel"] > st.mip_gap_tol
    passes = [pass_name(p) for p in rep["shares"]["passes"]]
    assert passes == ["probe", 0], passes  # no RENS, price or re-solve pass
    assert "improvement" not in rep
    assert out.result.point_feasible and out.result.status.is_success
    mono = solve_problem(problem, st, None)
    assert problem.sense * (out.result.objective - mono.objective) <= 1e-9  # the monolithic round's point or better
    assert [p["warm_started"] for p in rep["parts"]] == [False, False]
    assert all(s.state is not None for s in out.data.parts)  # the parts' states: the next round's warm starts


def test_a_merge_proven_within_the_target_takes_no_further_pass_nor_a_whole_solve():
    problem = _lb().base()
    st = Settings(mip_gap_tol=1e6)  # any feasible merge of this model is within it
    out = pround.solve_round(problem, st, pround.PartitionConfig(k=2, executor="inline"))
    rep = out.report
    assert rep["gap_rel"] <= st.mip_gap_tol and out.result.status.name == "OPTIMAL"
    assert [pass_name(p) for p in rep["shares"]["passes"]] == ["probe", 0]
    assert "fallback" not in rep and "improvement" not in rep


def test_whole_below_nnz_0_keeps_the_parts_improvement_passes():
    """``--whole-below-nnz 0`` (never solved whole) leaves a small MILP's merge to the parts' RENS step."""
    problem = _lb().base()
    out = pround.solve_round(problem, Settings(), pround.PartitionConfig(k=2, executor="inline", whole_below_nnz=0))
    passes = [pass_name(p) for p in out.report["shares"]["passes"]]
    assert "improve-rens" in passes, passes
    assert (out.report.get("fallback") or {}).get("reason") != "small"


def test_init_stores_the_inline_limit_only_without_executor_and_a_step_runs_small_parts_in_process(tmp_path,
                                                                                                 monkeypatch):
    sc = _lb()
    write_problem(sc.base(), tmp_path / "base.parquet")
    delta = tmp_path / "d1.parquet"
    write_delta(sc.next_delta(1), delta)
    st, chosen = tmp_path / "st", tmp_path / "chosen"
    assert cli_json("init", tmp_path / "base.parquet", "--state", st, "--partitions", "2", "--json")[0] == 0
    assert cli_json("init", tmp_path / "base.parquet", "--state", chosen, "--partitions", "2", "--executor",
                    "inline", "--json")[0] == 0
    stored = json.loads((st / "config.json").read_text())["partition"]
    assert stored["executor"] == "process" and stored["inline_below_nnz"] == INLINE_BELOW_NNZ
    assert json.loads((chosen / "config.json").read_text())["partition"]["inline_below_nnz"] == 0
    started: list = []
    monkeypatch.setattr(executor, "prestart", lambda k, workers=None: started.append(k))
    code, out = cli_json("step", delta, "--state", st, "--json")
    assert code == 0, out
    rep = json.loads(out)
    assert rep["partitions"]["executor"] == "inline" and "executor_reason" in rep["partitions"]
    assert started == [], "the forkserver was started for a small model's step"
    # the current round's model is small: no forkserver; a state whose limit is 0 (or a large model) gets one
    assert loop._current_nnz(loop.StateStore(st)) == sc.base().nnz
    edit_json(st / "config.json", lambda c: c["partition"].update(inline_below_nnz=0))
    loop._prestart_parts(json.loads((st / "config.json").read_text())["partition"], None, Settings(),
                         loop.StateStore(st))
    assert started == [2]


@pytest.mark.parametrize("rounds", [2])
def test_the_small_path_gives_the_same_objectives_as_the_monolithic_rounds(tmp_path, rounds):
    """Rounds of the LB stream, K = 2 (inline, whole solve at once) against monolithic steps: the same objectives."""
    from solver import rounds as api

    sc = _lb(seed=1)
    part, mono = tmp_path / "part", tmp_path / "mono"
    base = sc.base()
    api.init(base, part, partition={"k": 2, "executor": "process", "inline_below_nnz": INLINE_BELOW_NNZ})
    api.init(base, mono)
    for i in range(1, rounds + 1):
        d = tmp_path / f"d{i}.parquet"
        write_delta(sc.next_delta(i), d)
        a, b = api.step(d, part), api.step(d, mono)
        assert a["status"] == b["status"] == "OPTIMAL"
        assert a["objective"] == pytest.approx(b["objective"], abs=1e-6)
        assert a["partitions"]["executor"] == "inline"
