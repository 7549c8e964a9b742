"""POP baseline: client/shared-row detection and feasibility of the combined point on the full problem."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver.baselines import solve_highs
from solver.baselines.pop import build_parts, solve_pop, split_clients
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.status import Status
from solver.partition.clients import EMPTY, GLOBAL, SHARED, group_clients


def _allocation(n_clients: int = 8, seed: int = 1) -> Problem:
    """Clients c{i} with variables c{i}/a, c{i}/b; per-client demand rows; shared capacities capA, capB
    (capA also has a lower bound, like a load-balance row); an empty row 'unused'. Maximise weighted use."""
    rng = np.random.default_rng(seed)
    cols = [f"c{i}/{r}" for i in range(n_clients) for r in ("a", "b")]
    rows = [f"c{i}/demand" for i in range(n_clients)] + ["capA", "capB", "unused"]
    trip_r, trip_c, trip_v = [], [], []
    for i in range(n_clients):
        for j, r in ((2 * i, 0), (2 * i + 1, 1)):
            trip_r += [i, n_clients + r]
            trip_c += [j, j]
            trip_v += [1.0, 1.0 + r]
    A = sp.csc_array((trip_v, (trip_r, trip_c)), shape=(len(rows), len(cols)))
    demand = rng.uniform(1.0, 3.0, n_clients)
    return Problem.from_arrays(
        cost=rng.uniform(1.0, 2.0, len(cols)), col_lower=np.zeros(len(cols)), col_upper=np.full(len(cols), 5.0),
        row_lower=np.r_[np.full(n_clients, -np.inf), 0.1 * n_clients, -np.inf, -np.inf],
        row_upper=np.r_[demand, 0.4 * n_clients, 0.3 * n_clients, 1.0], matrix=A, col_names=cols,
        row_names=rows, sense=-1)


def test_default_grouping_reads_clients_from_names_and_shared_rows_from_the_matrix():
    p = _allocation(4)
    g = group_clients(p)
    assert g.n_clients == 4
    assert list(g.client_names[g.col_client]) == ["c0", "c0", "c1", "c1", "c2", "c2", "c3", "c3"]
    assert g.row_client[:4].tolist() == [0, 1, 2, 3]  # demand rows belong to their client
    assert g.row_client[4:].tolist() == [SHARED, SHARED, EMPTY]


def test_regex_overrides_group_clients_and_force_shared_rows():
    A = sp.csc_array(np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 1.0, 0.0],
                               [1.0, 1.0, 0.0, 0.0]]))
    p = Problem.from_arrays(cost=np.ones(4), col_lower=np.zeros(4), col_upper=np.ones(4),
                            row_lower=np.full(4, -np.inf), row_upper=np.ones(4), matrix=A,
                            col_names=["x_job1_gpu", "y_job1_cpu", "x_job2_gpu", "free_var"],
                            row_names=["own1", "mixed", "cap_gpu", "pool_cap"])
    g = group_clients(p, client_regex=r"job(?P<client>\d+)", shared_rows_regex=r"^pool_")
    assert list(g.client_names[g.col_client[:3]]) == ["1", "1", "2"]
    assert g.col_client[3] == GLOBAL  # no match: a global variable
    # 'mixed' touches job2 and the global only -> job2's row; pool_cap is forced shared by its name
    assert g.row_client.tolist() == [0, 1, SHARED, SHARED]


def test_invalid_regex_is_a_usage_error():
    with pytest.raises(UsageError, match="pop-client-regex"):
        group_clients(_allocation(2), client_regex="job(")


def test_problem_without_client_names_is_a_usage_error_not_a_failed_row():
    # names without a '<client>/' prefix: POP cannot split anything and must say how to tell it
    p = Problem.from_arrays(cost=[1.0, 1.0], col_lower=[0, 0], col_upper=[1, 1], row_lower=[1], row_upper=[2],
                            matrix=sp.csc_array(np.array([[1.0, 1.0]])), col_names=["a", "b"])
    with pytest.raises(UsageError, match="no clients"):
        solve_pop(p, k=2, workers=0)


def test_a_client_regex_matching_nothing_is_named():
    # helper-185: with --pop-client-regex given, the message still asked for --pop-client-regex
    with pytest.raises(UsageError) as ex:
        solve_pop(_allocation(4), k=2, workers=0, client_regex="^zzz")
    assert str(ex.value) == "POP found no clients: --pop-client-regex '^zzz' matches no variable name"


def test_parts_get_one_kth_of_every_shared_bound_and_cover_every_column_once():
    p = _allocation(8)
    g = group_clients(p)
    col_part = split_clients(g.n_clients, 4, seed=3)[g.col_client]
    parts = build_parts(p, g, col_part, 4)
    covered = np.sort(np.concatenate([cols for cols, _ in parts]))
    assert np.array_equal(covered, np.arange(p.n_cols))
    for _, sub in parts:
        sub.check()
        cap = np.flatnonzero(sub.row_names == "capA")[0]
        assert sub.row_lower[cap] == pytest.approx(0.1 * 8 / 4) and sub.row_upper[cap] == pytest.approx(0.4 * 8 / 4)
        assert "unused" not in set(sub.row_names)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_pop_point_is_feasible_on_the_full_problem_and_no_better_than_the_optimum(k):
    p = _allocation(8)
    best = solve_highs(p)
    r = solve_pop(p, k=k, seed=7, workers=0)
    assert r.status == Status.FEASIBLE, r.message
    assert r.x.shape == (p.n_cols,)
    assert r.max_row_violation_rel <= 1e-6 and r.max_bound_violation <= 1e-9
    assert r.objective <= best.objective + 1e-7  # maximisation
    if k == 1:
        assert r.objective == pytest.approx(best.objective, rel=1e-9)


def test_pop_in_worker_processes_matches_in_process_run():
    p = _allocation(8)
    seq = solve_pop(p, k=2, seed=5, workers=0)
    par = solve_pop(p, k=2, seed=5, workers=2)
    assert par.status == Status.FEASIBLE
    assert par.objective == pytest.approx(seq.objective, rel=1e-9)
    assert par.extra["pop_seconds"] <= par.seconds + 1e-9


def test_more_parts_than_clients_leaves_empty_parts_out():
    r = solve_pop(_allocation(2), k=4, seed=0, workers=0)
    assert r.status == Status.FEASIBLE and sum(r.extra["part_statuses"].values()) == 2
    # the message says so (helper-158: "POP-200: 105 parts solved" read as K capped at the client count)
    assert "POP-4: 2 parts solved (the other 2 of the 4 parts have no client: more parts than clients)" in r.message


def _concurrent_flow(n_dem: int = 6) -> Problem:
    """max alpha s.t. d{i}/p0 + d{i}/p1 >= dem_i * alpha (row d{i}/dem), shared links link/0, link/1:
    sum of p0 flows <= 4, sum of p1 flows <= 3; alpha <= 10 (global row 'alpha_cap')."""
    rng = np.random.default_rng(2)
    dem = rng.uniform(1.0, 2.0, n_dem)
    cols = [f"d{i}/p{q}" for i in range(n_dem) for q in (0, 1)] + ["alpha"]
    r, c, v = [], [], []
    for i in range(n_dem):
        for q in (0, 1):
            r += [i, n_dem + q]
            c += [2 * i + q] * 2
            v += [1.0, 1.0]
        r.append(i)
        c.append(2 * n_dem)
        v.append(-dem[i])
    r.append(n_dem + 2)
    c.append(2 * n_dem)
    v.append(1.0)
    A = sp.csc_array((v, (r, c)), shape=(n_dem + 3, len(cols)))
    return Problem.from_arrays(cost=np.r_[np.zeros(2 * n_dem), 1.0], col_lower=np.zeros(len(cols)),
                               col_upper=np.full(len(cols), np.inf),
                               row_lower=np.r_[np.zeros(n_dem), -np.inf, -np.inf, -np.inf],
                               row_upper=np.r_[np.full(n_dem, np.inf), 4.0, 3.0, 10.0], matrix=A, col_names=cols,
                               row_names=[f"d{i}/dem" for i in range(n_dem)] + ["link/0", "link/1", "alpha_cap"],
                               sense=-1)


def test_global_variable_is_copied_into_every_part_and_combined_feasibly():
    p = _concurrent_flow()
    g = group_clients(p)
    assert g.col_client[-1] == GLOBAL and g.row_client[-1] == GLOBAL
    assert (g.row_client[:6] >= 0).all()  # demand rows stay with their commodity despite alpha
    r = solve_pop(p, k=3, seed=1, workers=0)
    assert r.status == Status.FEASIBLE, r.message
    assert r.max_row_violation_rel <= 1e-6
    assert r.objective <= solve_highs(p).objective + 1e-7


def _balance(loads=(8.0, 1.0, 1.0, 2.0), servers: int = 2, band: float = 0.1) -> Problem:
    """Load balancing as in POP: r[s, i] = fraction of shard s on server i, sum_i r = 1 (row s{j}/assign),
    server bands L(1 - band) <= sum_s load_s r[s, i] <= L(1 + band) (rows load/i), minimise nothing."""
    N = len(loads)
    cols = [f"s{j}/r/{i}" for j in range(N) for i in range(servers)]
    r, c, v = [], [], []
    for j in range(N):
        for i in range(servers):
            col = j * servers + i
            r += [j, N + i]
            c += [col, col]
            v += [1.0, loads[j]]
    L = sum(loads) / servers
    A = sp.csc_array((v, (r, c)), shape=(N + servers, len(cols)))
    return Problem.from_arrays(cost=np.zeros(len(cols)), col_lower=np.zeros(len(cols)), col_upper=np.ones(len(cols)),
                               row_lower=np.r_[np.ones(N), np.full(servers, L * (1 - band))],
                               row_upper=np.r_[np.ones(N), np.full(servers, L * (1 + band))], matrix=A,
                               col_names=cols, row_names=[f"s{j}/assign" for j in range(N)] +
                               [f"load/{i}" for i in range(servers)])


def test_band_rows_get_the_parts_share_of_coefficient_mass_and_the_shares_sum_to_one():
    p = _balance()
    g = group_clients(p)
    col_part = split_clients(g.n_clients, 2, seed=0)[g.col_client]
    for scaling, check in (("auto", None), ("uniform", 0.5)):
        lows = []
        for _, sub in build_parts(p, g, col_part, 2, scaling):
            i = np.flatnonzero(sub.row_names == "load/0")[0]
            lows.append(sub.row_lower[i])
        if check is None:
            assert sum(lows) == pytest.approx(p.row_lower[p.row_index()["load/0"]])
            assert lows[0] != pytest.approx(lows[1])  # loads 8,1,1,2 never split evenly
        else:
            assert lows == pytest.approx([p.row_lower[p.row_index()["load/0"]] * check] * 2)


def test_pop_on_load_balancing_is_feasible_with_auto_shares_and_not_with_uniform_ones():
    p = _balance()
    auto = solve_pop(p, k=2, seed=0, workers=0)
    assert auto.status == Status.FEASIBLE and auto.max_row_violation_rel <= 1e-6
    uniform = solve_pop(p, k=2, seed=0, workers=0, shared_scaling="uniform")
    assert uniform.status in (Status.PRIMAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED)
    with pytest.raises(UsageError, match="scaling"):
        solve_pop(p, k=2, workers=0, shared_scaling="half")
