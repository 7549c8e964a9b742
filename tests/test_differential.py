"""apply_delta / diff / map_state: against a naive dict-based reference, property tests, error paths."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pyarrow as pa
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.differential import (
    apply_delta,
    attach_arrow_names,
    find_entries,
    find_entries_numpy,
    map_state,
)
from solver.differential import matrix as matrix_mod
from solver.differential.diff import diff
from solver.model.delta import Delta
from solver.model.errors import StateError, ValidationError
from solver.model.problem import Problem
from solver.model.state import SolverState
from tests.helpers import problem_and_delta, random_problem

# ------------------------------------------------------------------------------------------ helpers


def reference_apply(p: Problem, d: Delta) -> Problem:
    """Naive dict-based implementation of docs/DESIGN.md "Delta and problem files", phase by phase (the spec, slowly)."""
    rows = d.table.to_pylist()
    vars_ = {str(n): [p.cost[j], p.col_lower[j], p.col_upper[j], bool(p.integrality[j])]
             for j, n in enumerate(p.col_names)}
    cons = {str(n): [p.row_lower[i], p.row_upper[i]] for i, n in enumerate(p.row_names)}
    A = p.matrix().tocoo()
    coefs = {(str(p.col_names[j]), str(p.row_names[i])): v for i, j, v in zip(A.row, A.col, A.data, strict=True)}
    for r in rows:
        if r["kind"] == "drop_con":
            del cons[r["con"]]
            coefs = {k: v for k, v in coefs.items() if k[1] != r["con"]}
    for r in rows:
        if r["kind"] == "drop_var":
            del vars_[r["var"]]
            coefs = {k: v for k, v in coefs.items() if k[0] != r["var"]}
    for r in rows:
        if r["kind"] == "var":
            cur = vars_.setdefault(r["var"], [0.0, 0.0, np.inf, False])
            for i, f in enumerate(("value", "lower", "upper", "integer")):
                if r[f] is not None:
                    cur[i] = r[f]
    for r in rows:
        if r["kind"] == "con":
            cur = cons.setdefault(r["con"], [-np.inf, np.inf])
            for i, f in enumerate(("lower", "upper")):
                if r[f] is not None:
                    cur[i] = r[f]
    for r in rows:
        if r["kind"] == "coef":
            if r["value"] == 0:
                coefs.pop((r["var"], r["con"]), None)
            else:
                coefs[(r["var"], r["con"])] = r["value"]
    vn, cn = list(vars_), list(cons)
    vi, ci = {s: j for j, s in enumerate(vn)}, {s: i for i, s in enumerate(cn)}
    keys = list(coefs)
    M = sp.coo_array(([coefs[k] for k in keys], ([ci[k[1]] for k in keys], [vi[k[0]] for k in keys])),
                     shape=(len(cn), len(vn)))
    V = np.array([vars_[s] for s in vn], dtype=object).reshape(-1, 4)
    C = np.array([cons[s] for s in cn], dtype=float).reshape(-1, 2)
    return Problem.from_arrays(
        cost=V[:, 0].astype(float), col_lower=V[:, 1].astype(float), col_upper=V[:, 2].astype(float),
        integrality=V[:, 3].astype(bool), row_lower=C[:, 0], row_upper=C[:, 1], matrix=M, col_names=vn,
        row_names=cn, sense=p.sense if d.sense is None else d.sense,
        offset=p.offset if d.offset is None else d.offset)


def _valid_bounds(p: Problem, d: Delta) -> bool:
    try:
        ref = reference_apply(p, d)
    except ValidationError:
        return False
    return bool(np.all(ref.col_lower <= ref.col_upper) and np.all(ref.row_lower <= ref.row_upper))


# ------------------------------------------------------------------------------------------ properties


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem_and_delta())
def test_apply_matches_the_naive_reference_and_diff_round_trips(pd_):
    p, d = pd_
    if not _valid_bounds(p, d):
        with pytest.raises(ValidationError):
            apply_delta(p, d)
        return
    before = p.copy()
    q, info = apply_delta(p, d, strict=False)  # the reference knows nothing of intent.py's rules
    q.check()
    try:  # strict (a delta's default): the same problem, or refused for a row the writer cannot have meant
        assert apply_delta(p, d)[0].equals(q)
    except ValidationError as e:
        assert "named by no coef row" in e.message or "changes nothing" in e.message, e.message
    p_arrow = p.copy()  # no cached dict: names resolved through Arrow copies instead
    attach_arrow_names(p_arrow, pa.array(p.col_names.tolist(), pa.large_string()),
                       pa.array(p.row_names.tolist(), pa.large_string()))
    assert apply_delta(p_arrow, d, strict=False)[0].equals(q) and p_arrow._col_index is None
    assert p.equals(before), "apply_delta modified its input"
    assert q.equals(reference_apply(p, d))
    assert np.array_equal(q.col_names[info.col_map >= 0], p.col_names[info.col_map[info.col_map >= 0]])
    assert np.array_equal(q.row_names[info.row_map >= 0], p.row_names[info.row_map[info.row_map >= 0]])
    # diff both ways is exact
    back, _ = apply_delta(q, diff(q, p))
    assert back.equals(p)
    fwd, _ = apply_delta(p, diff(p, q))
    assert fwd.equals(q)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(["dup_var", "dup_coef", "unknown_drop", "unknown_coef",
                                                    "nan_cost", "nan_bound", "lower_gt_upper", "dropped_coef",
                                                    "inf_coef", "inf_cost", "dup_drop", "lower_plus_inf",
                                                    "upper_minus_inf", "con_lower_plus_inf", "empty_var_name",
                                                    "empty_con_name_in_coef"]))
def test_invalid_deltas_are_rejected_whole_and_leave_the_problem_unchanged(seed, how):
    rng = np.random.default_rng(seed)
    p = random_problem(rng, 6, 4)
    before = p.copy()
    x, r = str(p.col_names[1]), str(p.row_names[1])
    good = [Delta.vars(["fresh"], cost=[1.0]), Delta.coefs(["fresh"], [r], [2.0])]
    bad = {
        "dup_var": Delta.vars([x, x], cost=[1.0, 2.0]),
        "dup_coef": Delta.coefs([x, x], [r, r], [1.0, 2.0]),
        "dup_drop": Delta.drop_vars([x, x]),
        "unknown_drop": Delta.drop_cons(["nope"]),
        "unknown_coef": Delta.coefs(["nope"], [r], [1.0]),
        "nan_cost": Delta.vars([x], cost=np.array([np.nan])),
        "nan_bound": Delta.cons([r], upper=np.array([np.nan])),
        "lower_gt_upper": Delta.vars([x], lower=[5.0], upper=[1.0]),
        "dropped_coef": Delta.concat([Delta.drop_vars([x]), Delta.coefs([x], [r], [1.0])]),
        "inf_coef": Delta.coefs([x], [r], [np.inf]),
        "inf_cost": Delta.vars([x], cost=[1e30]),
        "lower_plus_inf": Delta.vars([x], lower=[np.inf], upper=[np.inf]),
        "upper_minus_inf": Delta.vars([x], lower=[-1e30], upper=[-1e30]),
        "con_lower_plus_inf": Delta.cons([r], lower=[1e30]),
        "empty_var_name": Delta.vars([""], cost=[1.0]),
        "empty_con_name_in_coef": Delta.coefs([x], [""], [1.0]),
    }[how]
    d = Delta.concat(good + [bad])
    with pytest.raises(ValidationError) as e:
        apply_delta(p, d)
    assert e.value.row is not None and "row" in str(e.value)
    assert p.equals(before)


# ------------------------------------------------------------------------------------------ examples


def test_dropping_and_readding_a_name_creates_a_new_entity_appended_with_only_new_coefficients():
    p = Problem.from_arrays(cost=[1, 2], col_lower=[0, 0], col_upper=[1, 1], row_lower=[0], row_upper=[5],
                            matrix=np.array([[1.0, 2.0]]), col_names=["a", "b"], row_names=["r"])
    d = Delta.concat([Delta.vars(["a"], upper=[9.0]), Delta.drop_vars(["a"]),  # drop phase runs first
                      Delta.coefs(["a"], ["r"], [0.0])])  # 0: re-added without coefficients on purpose
    q, info = apply_delta(p, d)
    assert q.col_names.tolist() == ["b", "a"] and q.col_upper.tolist() == [1.0, 9.0]
    assert q.cost.tolist() == [2.0, 0.0] and q.nnz == 1  # a's coefficient went with the drop
    assert info.col_map.tolist() == [1, -1] and info.vars_added.tolist() == ["a"]


def test_cost_and_bound_only_deltas_share_every_matrix_array():
    p = random_problem(np.random.default_rng(1), 50, 30)
    q, info = apply_delta(p, Delta.concat([Delta.vars(["x3"], cost=[7.0]), Delta.cons(["r2"], upper=[9.0])]))
    assert q.a_data is p.a_data and q.a_indices is p.a_indices and q.a_indptr is p.a_indptr
    assert q.col_lower is p.col_lower and q.row_lower is p.row_lower
    assert info.changed_fields == {"cost", "row_upper"} and info.seconds_linear < 1.0


def test_value_only_coefficient_change_copies_data_and_shares_structure():
    p = random_problem(np.random.default_rng(2), 20, 10, density=0.5)
    A = p.matrix().tocoo()
    j, i = int(A.col[0]), int(A.row[0])
    q, info = apply_delta(p, Delta.coefs([p.col_names[j]], [p.row_names[i]], [123.0]))
    assert q.a_indices is p.a_indices and q.a_indptr is p.a_indptr and q.a_data is not p.a_data
    assert q.matrix()[i, j] == 123.0 and info.coefs_changed == 1 and info.changed_fields == {"a_data"}


def test_coefficient_zero_removes_an_entry_and_setting_the_same_value_is_not_a_change():
    p = Problem.from_arrays(cost=[1, 2], col_lower=[0, 0], col_upper=[1, 1], row_lower=[0], row_upper=[5],
                            matrix=np.array([[1.0, 2.0]]), col_names=["a", "b"], row_names=["r"])
    q, info = apply_delta(p, Delta.coefs(["a", "b"], ["r", "r"], [0.0, 2.0]))
    assert q.nnz == 1 and q.matrix().toarray().tolist() == [[0.0, 2.0]] and info.coefs_changed == 1


def test_empty_delta_returns_an_equal_problem_sharing_all_arrays():
    p = random_problem(np.random.default_rng(3), 5, 3)
    q, info = apply_delta(p, Delta.empty())
    assert q.equals(p) and not info.changed_fields and q.cost is p.cost


def test_sense_and_offset_come_from_the_delta_metadata():
    p = random_problem(np.random.default_rng(4), 3, 2)
    q, info = apply_delta(p, Delta.empty(sense=-p.sense, offset=4.25))
    assert q.sense == -p.sense and q.offset == 4.25 and {"sense", "offset"} <= info.changed_fields


def test_unknown_kind_and_forbidden_fields_are_named():
    p = random_problem(np.random.default_rng(5), 3, 2)
    d = Delta.from_columns(["var", "bogus"], var=["x0", "x1"])
    with pytest.raises(ValidationError, match="row 1: .*unknown kind 'bogus'"):
        apply_delta(p, d)
    d = Delta.from_columns(["con"], con=["r0"], value=[1.0])
    with pytest.raises(ValidationError, match="must leave 'value' null"):
        apply_delta(p, d)
    d = Delta.from_columns(["coef"], var=["x0"], con=["r0"])
    with pytest.raises(ValidationError, match="needs a non-null 'value'"):
        apply_delta(p, d)


def test_huge_bounds_mean_infinity_in_deltas():
    p = random_problem(np.random.default_rng(6), 3, 2)
    q, _ = apply_delta(p, Delta.vars(["x0"], lower=[-1e30], upper=[2e30]))
    assert q.col_lower[0] == -np.inf and q.col_upper[0] == np.inf


@pytest.mark.parametrize("make,side,entity", [
    (lambda: Delta.vars(["x1"], lower=[1e30], upper=[1e30]), "lower bound is \\+inf", "x1"),
    (lambda: Delta.vars(["x1"], lower=[np.inf]), "lower bound is \\+inf", "x1"),
    (lambda: Delta.vars(["new"], lower=[-np.inf], upper=[-np.inf]), "upper bound is -inf", "new"),
    (lambda: Delta.cons(["r0"], lower=[1e31], upper=[np.inf]), "lower bound is \\+inf", "r0"),
    (lambda: Delta.cons(["r9"], upper=[-1e30]), "upper bound is -inf", "r9"),
])
def test_lower_bound_plus_inf_or_upper_bound_minus_inf_is_rejected_naming_entity_and_row(make, side, entity):
    p = random_problem(np.random.default_rng(8), 3, 2)
    d = Delta.concat([Delta.vars(["x0"], cost=[5.0]), make()])
    with pytest.raises(ValidationError, match=side) as e:
        apply_delta(p, d)
    assert e.value.entity == entity and e.value.row == 1 and "row 1" in str(e.value)


def test_diff_recreates_survivors_whose_relative_order_changed():
    p = Problem.from_arrays(cost=[1, 2, 3], col_lower=[0] * 3, col_upper=[1] * 3, row_lower=[0],
                            row_upper=[5], matrix=np.array([[1.0, 2.0, 3.0]]), col_names=["a", "b", "c"],
                            row_names=["r"])
    new = Problem.from_arrays(cost=[3, 1, 2], col_lower=[0] * 3, col_upper=[1] * 3, row_lower=[0],
                              row_upper=[5], matrix=np.array([[3.0, 1.0, 2.0]]), col_names=["c", "a", "b"],
                              row_names=["r"])
    d = diff(p, new)
    q, _ = apply_delta(p, d)
    assert q.equals(new)
    dropped = d.table.filter(pa.compute.equal(d.table["kind"], "drop_var"))["var"].to_pylist()
    assert dropped == ["a", "b"]  # c is the kept prefix; a and b are recreated after it


def test_map_state_keeps_survivors_and_starts_new_entities_at_projected_zero():
    p = Problem.from_arrays(cost=[1, 2], col_lower=[0, 0], col_upper=[4, 4], row_lower=[0, 0],
                            row_upper=[5, 5], matrix=np.array([[1.0, 2.0], [0, 1.0]]), col_names=["a", "b"],
                            row_names=["r", "s"])
    d = Delta.concat([Delta.drop_vars(["a"]), Delta.vars(["c"], lower=[2.0], upper=[3.0]),
                      Delta.drop_cons(["r"]), Delta.cons(["t"], upper=[1.0])])
    q, info = apply_delta(p, d, strict=False)  # c and t stay empty
    s = map_state(SolverState(x=np.array([1.5, 2.5]), y=np.array([-1.0, 3.0]), step_size=0.1,
                              primal_weight=2.0, integer_x=np.array([1.0, 2.0])), info)
    assert s.x.tolist() == [2.5, 2.0] and s.y.tolist() == [3.0, 0.0]
    assert s.integer_x.tolist() == [2.0, 2.0] and s.step_size == 0.1 and s.primal_weight == 2.0
    with pytest.raises(StateError, match="warm start impossible"):
        map_state(SolverState(x=np.zeros(3), y=np.zeros(2)), info)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_find_entries_kernel_matches_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    p = random_problem(rng, int(rng.integers(1, 30)), int(rng.integers(1, 30)), density=0.3)
    k = 50
    cols = rng.integers(-1, p.n_cols + 1, k)
    rows = rng.integers(-1, p.n_rows, k)
    cols = np.where(cols >= p.n_cols, -1, cols)
    with mock.patch.object(matrix_mod, "SMALL_NNZ", -1):  # the kernel even for these small matrices
        a = find_entries(p.a_indptr, p.a_indices, cols, rows, p.n_rows)
    b = find_entries_numpy(p.a_indptr, p.a_indices, cols, rows, p.n_rows)
    assert np.array_equal(a, b)
    hit = a >= 0
    assert np.all(p.a_indices[a[hit]] == rows[hit])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_merge_csc_kernel_matches_numpy_twin(seed):
    from solver.differential import merge_csc, merge_csc_numpy

    rng = np.random.default_rng(seed)
    p = random_problem(rng, int(rng.integers(1, 25)), int(rng.integers(1, 25)), density=0.4)
    keep_c = rng.random(p.n_cols) < 0.8
    n_add = int(rng.integers(0, 4))
    col_map = np.concatenate([np.flatnonzero(keep_c), np.full(n_add, -1)]).astype(np.int64)
    keep_r = rng.random(p.n_rows) < 0.8
    row_map = np.where(keep_r, np.cumsum(keep_r) - 1, -1).astype(np.int64)
    chg_pos = np.unique(rng.integers(0, max(p.nnz, 1), int(rng.integers(0, 6)))) if p.nnz else np.zeros(0, np.int64)
    chg_val = rng.choice([0.0, 4.5, -1.0], chg_pos.size)
    # inserts: new positions not present among surviving entries
    A = p.matrix().toarray()
    dense = np.zeros((int(keep_r.sum()), col_map.size))
    for jn, jo in enumerate(col_map):
        if jo >= 0:
            dense[:, jn] = A[keep_r, jo]
    free = np.argwhere(dense.T == 0)  # (col, row) sorted by col then row
    pick = np.sort(rng.choice(len(free), min(len(free), int(rng.integers(0, 5))), replace=False)) if len(free) else []
    ins = free[pick] if len(free) else np.zeros((0, 2), dtype=np.int64)
    ins_val = rng.choice([1.0, 2.0], len(ins))
    args = (p.a_indptr, p.a_indices, p.a_data, col_map, row_map, chg_pos, chg_val,
            ins[:, 0].astype(np.int64), ins[:, 1].astype(np.int64), ins_val)
    with mock.patch.object(matrix_mod, "SMALL_NNZ", -1):  # the kernel even for these small matrices
        a = merge_csc(*args)
    b = merge_csc_numpy(*args)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)


def test_problem_check_refuses_lower_plus_inf_and_upper_minus_inf_naming_the_entity():
    kw = dict(cost=[1.0, 1.0], col_lower=[0.0, 0.0], col_upper=[1.0, 1.0], row_lower=[0.0], row_upper=[1.0],
              matrix=np.array([[1.0, 1.0]]), col_names=["a", "b"], row_names=["r"])
    for field, value, entity in (("col_lower", [0.0, np.inf], "b"), ("col_upper", [-np.inf, 1.0], "a"),
                                 ("row_lower", [np.inf], "r"), ("row_upper", [-1e30], "r")):
        with pytest.raises(ValidationError, match="bound is [+-]inf") as e:
            Problem.from_arrays(**{**kw, field: value})
        assert e.value.entity == entity
