"""Restart controller: the primal weight keeps adapting in the situations PDHG meets in practice."""

import math

from solver.restart import RestartController
from solver.settings import Settings


def test_primal_weight_adapts_when_the_iterate_is_exactly_primal_feasible():
    # load-balancing LPs sit at a primal residual of ~1e-20 for thousands of iterations while the dual
    # lags; a residual-ratio safeguard used to reset w to its start value at every restart
    ctrl = RestartController(Settings(), 2.41)
    w = ctrl.update_weight(dx_norm=1e-3, dy_norm=1.0, rel_primal=1e-20, rel_dual=0.088)
    assert w != 2.41
    # e = log(w dx / dy) < 0 -> w grows toward dy/dx
    assert w > 2.41


def test_primal_weight_resets_to_the_best_seen_value_when_a_displacement_vanishes():
    ctrl = RestartController(Settings(), 1.0)
    w1 = ctrl.update_weight(dx_norm=0.5, dy_norm=1.0, rel_primal=1e-3, rel_dual=1e-3)
    ctrl.update_weight(dx_norm=0.1, dy_norm=1.0, rel_primal=1e-2, rel_dual=1e-5)
    assert ctrl.update_weight(dx_norm=0.0, dy_norm=1.0, rel_primal=1e-3, rel_dual=1e-3) == w1
    assert math.isfinite(w1) and w1 > 0
