"""Shared set-up of the partitioned-round tests: a small partitioned TE state with one delta written, and a
fresh split of a model into parts with the settings the parts' first integer points are solved with."""

from __future__ import annotations

from pathlib import Path

from formats.io import write_delta
from solver import rounds
from solver.model.settings import Settings
from solver.partition import round as pround
from solver.partition import shares as sh
from solver.partition.improve import cheap_part_settings
from solver.partition.split import build_part_problems
from solver.workloads import make_scenario


def partitioned_te_state(tmp_path: Path) -> tuple[Path, Path]:
    """(state, delta): a TE-16 state initialised with 2 parts (inline), and round 1's delta written beside it."""
    sc = make_scenario("te", 16, seed=4)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition={"k": 2, "executor": "inline"})
    delta = tmp_path / "d1.parquet"
    write_delta(sc.next_delta(1), delta)
    return state, delta


def fresh_split(problem, k: int):
    """(setup, effective allocations, parts, part settings) of a fresh K-part split of ``problem`` with
    integral shares."""
    r = pround._setup(problem, pround.PartitionConfig(k=k, executor="inline"), None, None, None)
    eff = sh.integral_allocations(problem, r.rows_sh, r.shares)
    parts = build_part_problems(problem, r.grouping, r.col_part, k, eff, name="part")
    pround._integral_bounds(parts)
    return r, eff, parts, cheap_part_settings(Settings())
