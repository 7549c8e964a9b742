"""An LP merge far from its bound (a part starved of capacity after its clients were replaced) is compared with a
whole solve, and the whole point's shares carry the next rounds (solver.partition.after_merge.lp_far;
helper-188, session 47: TE ring 24, K = 2, fixed shares, 18% below the optimum round after round)."""

from __future__ import annotations

import numpy as np
import pyarrow.ipc as ipc
import scipy.sparse as sp

from formats.checkpoint import StateStore
from solver import rounds
from solver.api import solve_problem
from solver.model.delta import Delta
from solver.model.settings import Settings
from solver.partition.fallback import LP_FAR_GAP
from solver.workloads import make_scenario


def _clients_of(state, round_: int, part: int) -> list[str]:
    t = ipc.open_file(str(state / f"gen-{round_:06d}" / "partition" / "clients.arrow")).read_all()
    return [n for n, p in zip(t.column("name").to_pylist(), t.column("part").to_pylist(), strict=True) if p == part]


def _client(name: str) -> str:
    return name.split("/", 1)[0]


def _replace_clients(problem, victims: set[str], copies: int) -> Delta:
    """``copies`` copies of every client in ``victims`` under new names (n<copy><client>/...), with their own rows
    and their columns' entries in the shared rows, as a delta adding them."""
    a = sp.csc_matrix((problem.a_data, problem.a_indices, problem.a_indptr), shape=(problem.n_rows, problem.n_cols))
    rows = {str(n): i for i, n in enumerate(problem.row_names)}
    cols = [j for j, n in enumerate(problem.col_names) if _client(str(n)) in victims]
    own_rows = sorted(i for n, i in rows.items() if _client(n) in victims and "/" in n)
    pieces = []
    for c in range(copies):
        def new(n: str, c: int = c) -> str:  # the copy's name of a client's row or column
            return f"n{c}{n}"

        pieces.append(Delta.cons([new(str(problem.row_names[i])) for i in own_rows],
                                 lower=[problem.row_lower[i] if np.isfinite(problem.row_lower[i]) else None
                                        for i in own_rows],
                                 upper=[problem.row_upper[i] if np.isfinite(problem.row_upper[i]) else None
                                        for i in own_rows]))
        pieces.append(Delta.vars([new(str(problem.col_names[j])) for j in cols],
                                 cost=[float(problem.cost[j]) for j in cols],
                                 lower=[float(problem.col_lower[j]) for j in cols],
                                 upper=[float(problem.col_upper[j]) if np.isfinite(problem.col_upper[j]) else None
                                        for j in cols]))
        var, con, val = [], [], []
        for j in cols:
            for q in range(a.indptr[j], a.indptr[j + 1]):
                rn = str(problem.row_names[a.indices[q]])
                var.append(new(str(problem.col_names[j])))
                con.append(new(rn) if _client(rn) in victims and "/" in rn else rn)
                val.append(float(a.data[q]))
        pieces.append(Delta.coefs(var, con, val))
    return Delta.concat(pieces)


def test_a_starved_part_is_solved_whole_once_and_its_shares_carry_the_next_rounds(tmp_path):
    k = 2
    sc = make_scenario("te", 24, seed=0)
    st = tmp_path / "st"
    # fixed shares (update_every 0), and the LP above whole_below_nnz, as a large LP's defaults: only lp_far can act
    rounds.init(sc.base(), st, partition={"k": k, "executor": "inline", "whole_below_nnz": 1, "update_every": 0})
    rounds.step(sc.next_delta(1), st)
    victims = set(_clients_of(st, 1, 0))
    base = StateStore(st).load().problem
    drop = Delta.concat([Delta.drop_vars([str(n) for n in base.col_names if _client(str(n)) in victims]),
                         Delta.drop_cons([str(n) for n in base.row_names if _client(str(n)) in victims and "/" in str(n)])])
    rounds.step(drop, st)
    rep = rounds.step(_replace_clients(base, victims, 2), st)  # the new clients: most go to the emptied part
    opt = solve_problem(StateStore(st).load().problem, Settings(tol=1e-7)).objective
    fb = rep["partitions"].get("fallback") or {}
    assert fb.get("reason") == "far" and fb.get("kept") == "whole", rep["partitions"]
    assert fb["merged_objective"] < opt * (1 - LP_FAR_GAP / 2)  # the merge was starved (max problem)
    assert "from its Lagrangian bound (more than 10%" in rep["message"]
    assert abs(rep["objective"] - opt) <= 1e-3 * abs(opt)
    # the next round merges near the optimum from the whole point's shares, without a whole solve
    now = StateStore(st).load().problem
    j = int(np.flatnonzero(now.cost != 0)[0])
    rep = rounds.step(Delta.vars([str(now.col_names[j])], cost=[float(now.cost[j]) * 1.01]), st)
    opt = solve_problem(StateStore(st).load().problem, Settings(tol=1e-7)).objective
    assert "fallback" not in rep["partitions"], rep["partitions"].get("fallback")
    assert rep["status"] in ("OPTIMAL", "FEASIBLE") and abs(rep["objective"] - opt) <= 1e-3 * abs(opt)


def test_whole_below_nnz_0_still_means_no_whole_solve(tmp_path):
    """--whole-below-nnz 0 turns every whole solve off but a failed part's: a far merge stays the round's."""
    from solver.partition.round import PartitionConfig, solve_round

    p = make_scenario("te", 16, seed=0).base()
    far = solve_round(p, Settings(), PartitionConfig(k=4, executor="inline", whole_below_nnz=1))
    assert far.report["fallback"]["reason"] == "far"
    out = solve_round(p, Settings(), PartitionConfig(k=4, executor="inline", whole_below_nnz=0))
    assert "fallback" not in out.report and out.report["gap_rel"] > LP_FAR_GAP
