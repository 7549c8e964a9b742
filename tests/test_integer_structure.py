"""Structure detection (solver.integer.structure) on hand-made matrices."""

from __future__ import annotations

import numpy as np

from solver.integer.structure import EQ1, LE1, detect_structure
from solver.model.problem import Problem

INF = np.inf


def _problem(A, rl, ru, lo, up, integ):
    A = np.asarray(A, dtype=float)
    return Problem.from_arrays(cost=np.zeros(A.shape[1]), col_lower=lo, col_upper=up, row_lower=rl,
                               row_upper=ru, matrix=A, integrality=integ)


def test_choice_rows_le1_eq1_and_scaled_are_found_and_others_are_not():
    # columns: b0 b1 b2 (binary), g (general int 0..5), c (continuous)
    A = [[1, 1, 1, 0, 0],     # sum b <= 1          -> LE1
         [2, 2, 0, 0, 0],     # 2 b0 + 2 b1 == 2    -> EQ1 (scaled)
         [-1, 0, -1, 0, 0],   # -b0 - b2 >= -1      -> LE1 (negative factor)
         [1, 2, 0, 0, 0],     # unequal coefficients -> not a choice row
         [1, 1, 1, 0, 0],     # sum b <= 2          -> not a choice row (two may be 1)
         [1, 0, 0, 1, 0],     # b0 + g <= 1         -> not (g not binary)
         [1, 1, 0, 0, 1]]     # has a continuous    -> not
    rl = [-INF, 2, -1, -INF, -INF, -INF, -INF]
    ru = [1, 2, INF, 2, 2, 1, 1]
    p = _problem(A, rl, ru, [0, 0, 0, 0, 0], [1, 1, 1, 5, 1], [1, 1, 1, 1, 0])
    st = detect_structure(p)
    assert st.choice_rows.tolist() == [0, 1, 2]
    assert st.choice_kind.tolist() == [LE1, EQ1, LE1]
    assert st.in_choice.tolist() == [True, True, True, False, False]
    assert st.binary.tolist() == [True, True, True, False, False]
    assert st.general.tolist() == [False, False, False, True, False]


def test_capacity_rows_need_one_sign_a_finite_bound_and_an_integer():
    A = [[2, 4, 0, 0],        # knapsack <= 6                 -> capacity
         [-2, -4, 0, 0],      # -2x0 - 4x1 >= -6 (same, negated) -> capacity
         [1, -1, 0, 0],       # mixed signs                   -> not
         [0, 0, 1, 1],        # only continuous               -> not
         [3, 1, 0, 0],        # >= 1 lower bound binding      -> not
         [1, 1, 0, 0]]        # no finite upper               -> not
    rl = [-INF, -6, -INF, -INF, 1, 0]
    ru = [6, INF, 0, 5, 10, INF]
    p = _problem(A, rl, ru, [0, 0, 0, 0], [1, 3, 1, 1], [1, 1, 0, 0])
    st = detect_structure(p)
    assert st.capacity_rows.tolist() == [0, 1]


def test_variable_upper_bounds_link_a_binary_parent_to_its_child_in_both_sign_forms():
    # cols: r0 r1 (continuous in [0,1]), x0 x1 (binary), g (general)
    A = [[1, 0, -1, 0, 0],    # r0 - x0 <= 0       -> VUB (x0 -> r0, ratio 1)
         [0, -2, 0, 4, 0],    # -2 r1 + 4 x1 >= 0  -> VUB (x1 -> r1, ratio 2)
         [1, 0, 0, 0, -1],    # r0 - g <= 0, g not binary -> not
         [1, 0, 1, 0, 0]]     # r0 + x0 <= 0 -> not (same signs)
    rl = [-INF, 0, -INF, -INF]
    ru = [0, INF, 0, 0]
    p = _problem(A, rl, ru, [0, 0, 0, 0, 0], [1, 1, 1, 1, 4], [0, 0, 1, 1, 1])
    st = detect_structure(p)
    assert st.vub_rows.tolist() == [0, 1]
    assert st.vub_parent.tolist() == [2, 3]
    assert st.vub_child.tolist() == [0, 1]
    assert np.allclose(st.vub_ratio, [1.0, 2.0])


def test_integer_bounds_are_rounded_inward_and_empty_integer_ranges_are_flagged():
    A = [[1, 1, 1]]
    p = _problem(A, [-INF], [10], [0.2, -1.5, 0.3], [2.7, 0.9, 0.6], [1, 1, 1])
    st = detect_structure(p)
    assert st.lower.tolist() == [1.0, -1.0, 1.0]
    assert st.upper.tolist() == [2.0, 0.0, 0.0]
    assert st.integer_infeasible_bounds.tolist() == [False, False, True]
    assert st.binary.tolist() == [False, False, False]  # [1,2] and [-1,0] are not 0/1 columns
