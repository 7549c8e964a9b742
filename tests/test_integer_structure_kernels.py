"""The structure detection's per-row pass (``solver.integer.structure_kernels.row_stats``) against its numpy twin
(``structure_ref.row_stats_ref``), bitwise, on random sparse rows with infinite and NaN-producing bounds, zero
and negative coefficients, empty rows; and the detected structure of generated Sia and LB models unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from solver.integer.structure import detect_structure
from solver.integer.structure_kernels import row_stats
from solver.integer.structure_ref import row_stats_ref


def _random_rows(seed: int):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 40)), int(rng.integers(1, 60))
    dense = rng.choice([0.0, 0.0, 1.0, -1.0, 2.5, -0.5, 0.0], size=(m, n)) * (rng.random((m, n)) < 0.4)
    dense[rng.integers(0, m)] = 0.0  # an empty row
    rptr = np.concatenate(([0], np.cumsum((dense != 0).sum(axis=1)))).astype(np.int64)
    rows, cols = np.nonzero(dense)
    rcol, rval = cols.astype(np.int64), dense[rows, cols].astype(np.float64)
    if rval.size:  # an explicit zero coefficient (0 * inf is NaN: counted as 0)
        rval[rng.integers(0, rval.size)] = 0.0
    lo = rng.choice([0.0, -1.0, -np.inf, 2.0], size=n)
    up = np.maximum(lo, rng.choice([1.0, 3.0, np.inf, 0.0], size=n))
    is_int = rng.random(n) < 0.6
    binary = is_int & (lo >= 0) & (up <= 1)
    return rptr, rcol, rval, binary, is_int, lo, up


@pytest.mark.parametrize("seed", range(60))
def test_row_stats_equals_its_numpy_twin_bitwise(seed):
    args = _random_rows(seed)
    for got, want in zip(row_stats(*args), row_stats_ref(*args), strict=True):
        np.testing.assert_array_equal(got, want)


def test_row_stats_of_no_rows():
    args = (np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(3, bool), np.zeros(3, bool),
            np.zeros(3), np.ones(3))
    assert all(a.size == 0 for a in row_stats(*args))


@pytest.mark.parametrize("make", ["sia", "lb"])
def test_detect_structure_with_the_kernel_equals_it_with_the_twin(make, monkeypatch):
    import dataclasses

    import solver.integer.structure as structure

    if make == "sia":
        from solver.workloads.sia import SiaScenario

        p = SiaScenario(total_gpus=256, seed=4).base()
    else:
        from solver.workloads import make_scenario

        p = make_scenario("lb", "64x8", seed=4).base()
    got = detect_structure(p)
    monkeypatch.setattr(structure, "row_stats", row_stats_ref)
    want = structure.detect_structure(p)
    for f in dataclasses.fields(got):
        np.testing.assert_array_equal(getattr(got, f.name), getattr(want, f.name), err_msg=f.name)
    assert got.capacity_rows.size > 0 and (got.choice_rows.size > 0 if make == "sia" else got.vub_rows.size > 0)
