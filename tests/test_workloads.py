"""The workload generators: sizes as the formulas predict, POP naming, deltas that reproduce each round,
HiGHS-feasible rounds, determinism, and the error paths."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.differential import apply_delta
from solver.highs_bridge import new_highs, to_highs_lp
from solver.model.delta import Delta
from solver.model.errors import UsageError, ValidationError
from solver.workloads import make_scenario
from solver.workloads.common import align_solution, client_of, join_names, parse_scale
from solver.workloads.lb import LBScenario, line_placement
from solver.workloads.paths import disjoint_paths, disjoint_paths_reference
from solver.workloads.sia import CONFIG_GPUS, GPUS_PER_NODE, SiaScenario, fine_configs, split_nodes
from solver.workloads.te import TEScenario, gravity_matrix, make_topology, ring_with_chords

VAR_RE = {
    "sia": re.compile(r"^j\d+/[A-Za-z0-9]+/\d+$"),
    "te": re.compile(r"^(d[^/-]+-[^/-]+/p\d+|alpha)$"),
    "lb": re.compile(r"^s\d+/[rx]/\d+$"),
}
ROW_RE = {
    "sia": re.compile(r"^(j\d+/one|gpus/[A-Za-z0-9]+)$"),
    "te": re.compile(r"^(d[^/-]+-[^/-]+/(cap|dem)|link/[^/-]+-[^/-]+)$"),
    "lb": re.compile(r"^(s\d+/(assign|vub/\d+)|load/\d+|mem/\d+)$"),
}

SMALL = [
    ("sia", dict(scale=64)),
    ("sia", dict(scale=128, form="min")),
    ("te", dict(scale=10)),
    ("te", dict(scale=9, objective="concurrent")),
    ("lb", dict(scale=(32, 4))),
]


def _scenario(domain, kw, seed=0):
    kw = dict(kw)
    return make_scenario(domain, kw.pop("scale"), seed=seed, **kw)


def _highs_ok(problem, seconds=30.0):
    h = new_highs(threads=1, time_limit_seconds=seconds)
    h.passModel(to_highs_lp(problem, with_names=False))
    h.run()
    return h.modelStatusToString(h.getModelStatus()), h.getSolution().col_value


@pytest.mark.parametrize("domain,kw", SMALL)
def test_every_delta_applied_to_the_previous_round_gives_the_scenarios_own_rebuild(domain, kw):
    s = _scenario(domain, kw)
    p = s.base()
    for r in range(1, 5):
        d = s.next_delta(r)
        assert d.base_round == r - 1
        p, _ = apply_delta(p, d)
        assert p.equals(s.problem()), f"round {r}: delta-applied problem differs from the rebuild"


@pytest.mark.parametrize("domain,kw", SMALL)
def test_names_follow_the_pop_client_convention(domain, kw):
    s = _scenario(domain, kw)
    s.base()
    s.next_delta(1)
    p = s.problem()
    assert all(VAR_RE[domain].match(n) for n in p.col_names.tolist())
    assert all(ROW_RE[domain].match(n) for n in p.row_names.tolist())
    clients = client_of(p.col_names)
    assert (clients[p.col_names != "alpha"] != "").all()
    shared = client_of(p.row_names) == ""
    assert all(n.split("/")[0] in ("gpus", "link", "load", "mem") for n in p.row_names[shared].tolist())


@pytest.mark.parametrize("domain,kw", SMALL)
def test_every_round_is_feasible_for_highs(domain, kw):
    s = _scenario(domain, kw)
    p = s.base()
    status, _ = _highs_ok(p)
    assert status == "Optimal"
    for r in range(1, 4):
        s.next_delta(r)
        status, _ = _highs_ok(s.problem())
        assert status == "Optimal", f"round {r}: {status}"


@pytest.mark.parametrize("domain,kw", SMALL)
def test_same_seed_same_stream_and_other_seed_differs(domain, kw):
    a, b, c = _scenario(domain, kw, 5), _scenario(domain, kw, 5), _scenario(domain, kw, 6)
    assert a.base().equals(b.base())
    differs = not a.base().equals(c.base())
    for r in range(1, 4):
        da, db, dc = a.next_delta(r), b.next_delta(r), c.next_delta(r)
        assert da.table.equals(db.table) and da.offset == db.offset
        differs |= not da.table.equals(dc.table)
    assert differs


# ---------------------------------------------------------------------------------------------- Sia
def test_sia_sizes_match_the_formulation():
    s = SiaScenario(total_gpus=10240, jobs=3, seed=1)
    p = s.base()
    # 7 types of 1,463 or so GPUs each: every one of the 11 configurations fits -> 77 per job
    assert s.cfg_type.size == 7 * CONFIG_GPUS.size == 77
    assert p.n_cols == 3 * 77 and p.n_rows == 7 + 3 and p.nnz == 2 * p.n_cols
    assert s.caps.sum() == 10240 and (s.caps % GPUS_PER_NODE == 0).all()
    assert p.is_mip and (p.col_upper == 1).all() and (p.col_lower == 0).all()


def test_sia_fine_configurations_give_497_per_job_on_a_large_cluster():
    cfg = fine_configs(512)
    assert cfg.size == 8 + 63 and (cfg[8:] % GPUS_PER_NODE == 0).all()
    s = SiaScenario(total_gpus=10240, jobs=2, seed=0, config_gpus=cfg)
    p = s.base()
    assert p.n_cols == 2 * 7 * cfg.size and p.nnz == 2 * p.n_cols
    p, _ = apply_delta(p, s.next_delta(1))
    assert p.equals(s.problem())
    with pytest.raises(UsageError):
        fine_configs(100)
    with pytest.raises(UsageError):
        SiaScenario(total_gpus=64, config_gpus=np.array([1, 2, 12]))


def test_sia_small_cluster_drops_configurations_larger_than_a_type():
    s = SiaScenario(total_gpus=64, seed=0)
    gpus = np.array([int(n.rsplit("/", 1)[1]) for n in s.base().col_names.tolist()])
    types = np.array([n.split("/")[1] for n in s.base().col_names.tolist()])
    caps = dict(zip(s.types, s.caps, strict=True))
    assert all(g <= caps[t] for g, t in zip(gpus, types, strict=True))


def test_split_nodes_uses_whole_nodes_and_every_gpu():
    caps = split_nodes(1000, ("a", "b", "c"))
    assert caps.sum() == 1000 // 8 * 8 and (caps % 8 == 0).all()
    with pytest.raises(UsageError):
        split_nodes(4, ("a",))


def test_sia_objective_counts_unallocated_jobs_in_both_forms():
    for form, sense, sign in (("max", -1, -1.0), ("min", 1, 1.0)):
        s = SiaScenario(total_gpus=64, form=form, seed=2)
        p = s.base()
        assert p.sense == sense
        jobs = int((np.char.endswith(p.row_names.astype(str), "/one")).sum())
        assert p.objective(np.zeros(p.n_cols)) == pytest.approx(sign * 1.1 * jobs)


def test_sia_costs_follow_restart_factor_and_goodput():
    s = SiaScenario(total_gpus=128, seed=3)
    s.base()
    s.next_delta(1)
    s.next_delta(2)
    j = s.jobs
    age = s.time - j.arrival
    S = s.gp.restart_seconds[j.app]
    running = np.flatnonzero((j.cur >= 0) & (age >= S))
    assert running.size
    i = running[0]
    rf = max(max(age[i] - j.restarts[i] * S[i], 0.0) / (age[i] + S[i]), 1e-4)
    valid = np.flatnonzero(s._mask[i])
    other = valid[valid != j.cur[i]][0]
    assert s._cost[i, other] == pytest.approx(max(rf * s._G[i, other], 1e-4) ** 0.5 + 1.1)
    assert s._cost[i, j.cur[i]] == pytest.approx(s._G[i, j.cur[i]] ** 0.5 + 1.1)
    assert s._G[i, valid].min() == pytest.approx(1.0)  # normalized to the slowest configuration


def test_sia_allocation_from_a_previous_solution_sets_current_configs():
    s = SiaScenario(total_gpus=64, seed=4)
    p = s.base()
    status, x = _highs_ok(p)
    assert status == "Optimal"
    x = np.round(np.asarray(x))
    alloc = s.allocation(x)
    chosen = set(p.col_names[x > 0.5].tolist())
    picked = {f"j{jid}/{s.cfg_label[c]}" for jid, c in zip(s.jobs.id, alloc, strict=True) if c >= 0}
    assert picked == chosen
    d_arr = s.next_delta(1, x)
    t = SiaScenario(total_gpus=64, seed=4)
    t.base()
    d_dict = t.next_delta(1, dict(zip(p.col_names.tolist(), x.tolist(), strict=True)))
    assert d_arr.table.equals(d_dict.table)


def test_sia_greedy_allocation_respects_capacity():
    s = SiaScenario(total_gpus=256, seed=5)
    alloc = s._greedy(s._value)
    run = alloc >= 0
    used = np.bincount(s.cfg_type[alloc[run]], weights=s.cfg_gpus[alloc[run]], minlength=len(s.types))
    assert (used <= s.caps).all() and run.any()


def test_sia_rejects_unknown_form():
    with pytest.raises(UsageError):
        SiaScenario(total_gpus=64, form="avg")


# ---------------------------------------------------------------------------------------------- TE
@pytest.mark.parametrize("seed", range(4))
def test_numba_paths_match_the_python_reference(seed):
    topo = ring_with_chords(9 + seed, seed)
    ss, tt = np.nonzero(~np.eye(topo.n, dtype=bool))
    fast = disjoint_paths(topo.n, topo.src, topo.dst, ss, tt, k=4, threads=2)
    ref = disjoint_paths_reference(topo.n, topo.src, topo.dst, ss, tt, k=4)
    for a, b in zip(fast, ref, strict=True):
        np.testing.assert_array_equal(a, b)


def test_paths_are_edge_disjoint_and_connect_source_to_target():
    topo = ring_with_chords(12, 7)
    ss, tt = np.nonzero(~np.eye(topo.n, dtype=bool))
    npaths, lens, edges = disjoint_paths(topo.n, topo.src, topo.dst, ss, tt, k=4)
    assert (npaths >= 1).all() and (npaths <= 4).all()
    starts = np.r_[0, np.cumsum(lens)]
    p = 0
    for k in range(ss.size):
        used = []
        for _ in range(npaths[k]):
            e = edges[starts[p]:starts[p + 1]]
            used.extend(e.tolist())
            # the edge multiset forms a walk s -> t: out-degree - in-degree = +1 at s, -1 at t, else 0
            bal = np.bincount(topo.src[e], minlength=topo.n) - np.bincount(topo.dst[e], minlength=topo.n)
            expect = np.zeros(topo.n, dtype=int)
            expect[ss[k]], expect[tt[k]] = 1, -1
            np.testing.assert_array_equal(bal, expect)
            p += 1
        assert len(used) == len(set(used))


def test_te_sizes_match_the_formulation():
    s = TEScenario(nodes=12, seed=3)
    p = s.base()
    E, K, P = s.topo.src.size, s.topo.n * (s.topo.n - 1), int(s.npaths.sum())
    assert p.n_rows == E + K and p.n_cols == P and p.nnz == int(s.lens.sum()) + P
    assert (p.row_upper[:E] == 1000.0).all() and p.sense == -1


def test_te_perturbation_stays_within_ten_percent_and_nonnegative():
    s = TEScenario(nodes=10, seed=1)
    s.base()
    d0 = s.d.copy()
    s.next_delta(1)
    ratio = s.d[d0 > 0] / d0[d0 > 0]
    assert (ratio >= 0.9 - 1e-12).all() and (ratio <= 1.1 + 1e-12).all() and (s.d >= 0).all()


def test_te_sequence_of_matrices_replays_in_order():
    topo = ring_with_chords(6, 0)
    mats = [np.full((6, 6), float(k + 1)) for k in range(3)]
    s = TEScenario(topology=topo, demands=mats)
    p = s.base()
    for r in range(1, 4):
        p, _ = apply_delta(p, s.next_delta(r))
        caps = p.row_upper[np.char.endswith(p.row_names.astype(str), "/cap")]
        assert np.allclose(caps, (r % 3) + 1)


def test_gravity_matrix_follows_pops_formula():
    topo = make_topology(np.arange(3), [0, 1, 2], [1, 2, 0], [1.0, 2.0, 3.0], undirected=True)
    tm = gravity_matrix(topo, 60.0)
    out_cap = np.bincount(topo.src, weights=topo.cap, minlength=3)
    in_cap = np.bincount(topo.dst, weights=topo.cap, minlength=3)
    assert tm[0, 1] == pytest.approx(60.0 * out_cap[0] / out_cap.sum() * in_cap[1] / (in_cap.sum() - in_cap[0]))
    assert np.all(np.diag(tm) == 0)


def test_make_topology_keeps_the_largest_strongly_connected_component():
    # a 3-cycle plus a node with only an outgoing link
    topo = make_topology(["a", "b", "c", "d"], [0, 1, 2, 3], [1, 2, 0, 0])
    assert topo.n == 3 and topo.src.size == 3


def test_te_rejects_bad_inputs():
    with pytest.raises(ValidationError):
        make_topology(["a-b", "c"], [0], [1], undirected=True)
    with pytest.raises(ValidationError):
        make_topology(["a", "b"], [0], [1], [-5.0], undirected=True)
    with pytest.raises(ValidationError):
        TEScenario(topology=ring_with_chords(5), demands=np.ones((4, 4)))
    with pytest.raises(ValidationError):
        TEScenario(topology=ring_with_chords(5), demands=-np.ones((5, 5)))
    with pytest.raises(UsageError):
        TEScenario(nodes=8, objective="fairness")
    with pytest.raises(UsageError):
        ring_with_chords(2)


# ---------------------------------------------------------------------------------------------- LB
def test_lb_sizes_match_pops_benchmark_formulas():
    N, S = 64, 8
    p = LBScenario(N, S, seed=0).base()
    assert p.n_cols == 2 * N * S and p.n_rows == 2 * S + N * (S + 1) and p.nnz == 5 * N * S
    assert int(p.integrality.sum()) == N * S


def test_lb_initial_costs_follow_pops_placement_and_band_is_five_percent():
    s = LBScenario(32, 4, seed=1)
    p = s.base()
    x_cost = p.cost.reshape(32, 8)[:, 4:]
    expected = np.ones((32, 4))
    expected[np.arange(32), np.arange(32) % 4] = 0
    np.testing.assert_array_equal(x_cost, expected)
    L = s.load.sum() / 4
    np.testing.assert_allclose(p.row_lower[:4], 0.95 * L)
    np.testing.assert_allclose(p.row_upper[:4], 1.05 * L)


def test_lb_previous_solution_becomes_the_placement():
    s = LBScenario(32, 4, seed=2)
    p = s.base()
    status, x = _highs_ok(p)
    assert status == "Optimal"
    x = np.asarray(x)
    s.next_delta(1, x)
    v = x.reshape(32, 8)
    np.testing.assert_array_equal(s.placed, (v[:, 4:] > 0.5) | (v[:, :4] > 1e-6))


def test_lb_simulated_placement_balances_and_fits_memory():
    s = LBScenario(1024, 128, seed=3)
    for _ in range(3):
        placed = s.simulate_placement()
        assert placed.any(axis=1).all()
        assert placed.sum(axis=0).max() <= s.mem_cap
        s.load = s.load[::-1].copy()  # another load profile


def test_line_placement_gives_every_server_the_mean_load():
    rng = np.random.default_rng(0)
    load = rng.uniform(1, 100, 50)
    r = line_placement(load, rng.permutation(50), 7)
    np.testing.assert_allclose(r.sum(axis=1), 1.0)
    np.testing.assert_allclose(load @ r, load.sum() / 7)


def test_lb_rejects_bad_scale():
    with pytest.raises(UsageError):
        LBScenario(4, 8)
    with pytest.raises(UsageError):
        LBScenario.parse_scale("big")


# ---------------------------------------------------------------------------------------------- common
def test_rounds_must_be_consecutive():
    s = make_scenario("te", 6)
    s.base()
    with pytest.raises(UsageError):
        s.next_delta(2)


def test_previous_solution_of_wrong_length_or_nan_is_rejected():
    s = make_scenario("sia", 64)
    n = s.base().n_cols
    with pytest.raises(ValidationError):
        s.next_delta(1, np.zeros(n + 1))
    with pytest.raises(ValidationError):
        s.next_delta(1, np.full(n, np.nan))


def test_align_solution_accepts_dict_pairs_and_tables():
    names = np.array(["a/x", "b/x", "c/x"], dtype=object)
    want = np.array([1.0, 0.0, 3.0])
    assert np.array_equal(align_solution({"c/x": 3.0, "a/x": 1.0}, names), want)
    assert np.array_equal(align_solution((["c/x", "a/x"], [3.0, 1.0]), names), want)
    table = pa.table({"name": ["a/x", "c/x"], "value": [1.0, 3.0]})
    assert np.array_equal(align_solution(table, names), want)
    with pytest.raises(ValidationError):
        align_solution((["a/x", "a/x"], [1.0, 2.0]), names)


def test_join_names_and_client_of():
    names = join_names("j", np.array([3, 17]), "/", np.array(["V100", "T4"], dtype=object), "/", np.array([4, 8]))
    assert names.tolist() == ["j3/V100/4", "j17/T4/8"]
    got = client_of(["j3/V100/4", "d1-2/p0", "s5/r/1", "gpus/V100", "link/1-2", "alpha", "load/3"])
    assert got.tolist() == ["j3", "d1-2", "s5", "", "", "", ""]


def test_make_scenario_and_scale_parsing_errors():
    assert parse_scale("1024x128", None) == (1024, 128) and parse_scale("64", None) == 64
    with pytest.raises(UsageError):
        make_scenario("weather")
    with pytest.raises(UsageError):
        make_scenario("sia", "lots")
    with pytest.raises(UsageError):
        make_scenario("te", "Cogentco")


def test_delta_is_a_plain_delta_object():
    s = make_scenario("lb", (16, 2))
    s.base()
    d = s.next_delta(1)
    assert isinstance(d, Delta) and set(d.table.column("kind").to_pylist()) <= {"var", "con", "coef"}


# ---------------------------------------------------------------------------------------------- properties
@settings(max_examples=25, deadline=None)
@given(st.integers(3, 9), st.integers(0, 10_000), st.integers(1, 4))
def test_numba_paths_equal_the_reference_on_random_graphs(n, seed, k):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(n, 3 * n))
    topo = make_topology(np.arange(n), rng.integers(0, n, m), rng.integers(0, n, m), undirected=bool(seed % 2))
    ss, tt = np.nonzero(~np.eye(topo.n, dtype=bool))
    fast = disjoint_paths(topo.n, topo.src, topo.dst, ss, tt, k=k, threads=1)
    ref = disjoint_paths_reference(topo.n, topo.src, topo.dst, ss, tt, k=k)
    for a, b in zip(fast, ref, strict=True):
        np.testing.assert_array_equal(a, b)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.integers(0, 10_000))
def test_line_placement_serves_every_shard_and_equalizes_servers(servers, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(servers, 6 * servers))
    load = np.round(rng.pareto(1.0, n) * 100 + 1)
    r = line_placement(load, rng.permutation(n), servers)
    assert (r >= 0).all()
    np.testing.assert_allclose(r.sum(axis=1), 1.0, rtol=1e-9)
    np.testing.assert_allclose(load @ r, load.sum() / servers, rtol=1e-9)
