"""The real-data loaders of examples/ on the shared public files (skipped without the data)."""

from __future__ import annotations

import numpy as np
import pytest

from examples.sia.loader import interpolate, load_trace, read_gavel_throughputs, read_workload
from examples.te.loader import (
    read_graphml,
    read_json_topology,
    read_tm,
    read_topology,
    tm_for_topology,
    tm_sequence,
)
from solver.differential import apply_delta
from solver.highs_bridge import new_highs, to_highs_lp
from solver.model.errors import FormatError, ValidationError
from solver.workloads.sia import CONFIG_GPUS, SiaScenario
from solver.workloads.te import TEScenario
from tests.helpers import require_data


def test_sia_workload_and_profiles_load_and_drive_a_scenario():
    d = require_data("traces/sia")
    w = read_workload(d / "workloads/newtrace/workload-1.csv")
    assert w["time"].size > 100 and (np.diff(w["time"]) >= 0).all()
    arrivals, gp = load_trace(d / "workloads/newtrace/workload-1.csv", d / "throughput_profiles")
    assert set(gp.apps) == set(w["application"].tolist())
    assert gp.tput.shape == (len(gp.apps), 5, CONFIG_GPUS.size) and (gp.tput > 0).any(axis=2).all()
    s = SiaScenario(total_gpus=64, goodput=gp, arrivals=arrivals, jobs=8, seed=0)
    p = s.base()
    assert p.n_rows == len(s.types) + 8
    for r in range(1, 4):
        p, _ = apply_delta(p, s.next_delta(r))
        assert p.equals(s.problem())
    h = new_highs(threads=1, time_limit_seconds=30)
    h.passModel(to_highs_lp(p, with_names=False))
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"


def test_gavel_throughputs_become_a_goodput_table_that_scenarios_accept():
    f = require_data("traces/gavel") / "simulation_throughputs_isolated_flat.csv"
    gp = read_gavel_throughputs(f)
    assert gp.types == ("K80", "P100", "V100") and len(gp.apps) == gp.tput.shape[0] > 10
    assert (gp.tput[:, :, 0] > 0).all()  # every job type measured on 1 GPU of every type
    s = SiaScenario(total_gpus=96, goodput=gp, seed=1)
    p = s.base()
    p, _ = apply_delta(p, s.next_delta(1))
    assert p.equals(s.problem())


def test_profile_interpolation_is_monotone_and_exact_on_measured_points():
    t = interpolate({1: 10.0, 2: 19.0, 4: 30.0})
    assert t[0] == pytest.approx(10.0) and t[1] == pytest.approx(19.0) and t[2] == pytest.approx(30.0)
    assert (np.diff(t) >= -1e-9).all()
    assert np.array_equal(interpolate({}), np.zeros(CONFIG_GPUS.size))


def test_bad_workload_csv_is_a_validation_error_naming_the_line(tmp_path):
    f = tmp_path / "w.csv"
    f.write_text("name,time,application,num_replicas,batch_size\na,1,cifar10,2,64\nb,-5,cifar10,2,64\n")
    with pytest.raises(ValidationError) as err:
        read_workload(f)
    assert err.value.line == 3
    g = tmp_path / "x.csv"
    g.write_text("a,b\n1,2\n")
    with pytest.raises(FormatError):
        read_workload(g)


def test_cogentco_graphml_has_pops_sizes():
    d = require_data("topologies")
    topo = read_graphml(d / "pop_Cogentco.graphml")
    # POP (REFERENCES section 3): 197 nodes, 486 directed edges, 38,612 commodity pairs
    assert topo.n == 197 and topo.src.size == 486 and topo.n * (topo.n - 1) == 38612
    assert (topo.cap == 1000.0).all()


def test_teal_json_keeps_its_capacities_and_directions():
    d = require_data("topologies")
    topo = read_json_topology(d / "teal_Kdl.json")
    assert topo.n == 754 and topo.src.size == 1790 and len(set(topo.cap.tolist())) > 1


def test_b4_real_matrices_replay_as_rounds():
    d = require_data("topologies")
    topo = read_topology(d / "teal_B4.json")
    files = tm_sequence(d / "tm/teal_B4_real")
    assert len(files) == 36 and "_0_" in files[0].name and "_35_" in files[-1].name
    mats = [tm_for_topology(read_tm(f), topo) for f in files[:4]]
    s = TEScenario(topology=topo, demands=mats)
    p = s.base()
    for r in range(1, 4):
        p, _ = apply_delta(p, s.next_delta(r))
        assert p.equals(s.problem())
    caps = p.row_upper[topo.src.size:]
    assert np.allclose(caps, mats[3][s.k_src, s.k_dst])


def test_bad_topology_and_matrix_files_are_format_errors(tmp_path):
    bad = tmp_path / "bad.graphml"
    bad.write_text("<graphml><oops")
    with pytest.raises(FormatError):
        read_graphml(bad)
    js = tmp_path / "bad.json"
    js.write_text('{"nodes": []}')
    with pytest.raises(FormatError):
        read_json_topology(js)
    tm = tmp_path / "tm.csv"
    tm.write_text("1,2,3\n4,5,6\n")
    with pytest.raises(FormatError):
        read_tm(tm)
    tm.write_text("1,-2\n4,5\n")
    with pytest.raises(ValidationError):
        read_tm(tm)
