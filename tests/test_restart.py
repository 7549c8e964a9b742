"""Restart controller: the primal weight keeps adapting in the situations PDHG meets in practice."""

import math

import numpy as np
import pytest

from solver.lp.restart import RestartController
from solver.model.settings import Settings


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


def test_primal_weight_does_not_run_away_once_the_dual_has_converged():
    # found by hypothesis (test_random_feasible_boxed_lps_match_highs): on HiGHS's 3x4 presolved LP the dual
    # displacement fell to round-off, ||dy|| / ||dx|| drove w from 0.18 to the 1e-10 clamp and the primal
    # residual rose from 4e-8 to 5e-6: ITERATION_LIMIT at tol 1e-8 (the unpresolved LP: 454 iterations)
    import scipy.sparse as sp

    from solver.lp.dispatch import solve
    from solver.model.problem import Problem
    from solver.model.settings import Settings
    from solver.model.status import Status

    A = sp.csc_matrix((np.array([-1.32588247, 1.5756829, -0.61150734, -1.82326357, 0.75931228, 1.32771564,
                                 -1.38445146, -2.47578111, 0.72749886]),
                       np.array([0, 3, 0, 3, 0, 1, 0, 1, 2]), np.array([0, 2, 4, 6, 9])), shape=(4, 4))
    p = Problem.from_arrays(cost=[-0.38751072, 1.5186178, -0.36793462, -0.77660416],
                            col_lower=[-0.14582885, -0.82062568, -1.74220996, -1.0346537],
                            col_upper=[0.49999025, 1.01563134, -0.40385886, 1.47793916],
                            row_lower=[-0.23453174, -np.inf, -1.00374549, -np.inf],
                            row_upper=[np.inf, 0.36379311, np.inf, 0.65258111], matrix=A, offset=-1.5623479496360861)
    r = solve(p, Settings(tol=1e-8, iteration_limit=20_000))
    assert r.status == Status.OPTIMAL, r.message
    assert r.objective == pytest.approx(-2.3261807299212744, rel=1e-7)
    # a presolved solve reports no weight (it belongs to the reduced LP); the direct solve's must stay sane too
    direct = solve(p, Settings(tol=1e-8, iteration_limit=20_000, presolve="off"))
    assert direct.status == Status.OPTIMAL, direct.message
    assert 1e-6 < direct.state.primal_weight < 1e6


def test_weight_feeding_a_dual_divergence_is_reset_to_the_best_epochs_weight():
    # found by a presolve fuzz: on this badly scaled LP (|a| from 7e-7 to 3e6) HiGHS presolve leaves a 6x7
    # LP on which w went 9.9 -> 1e10 in five restarts while the relative dual residual grew 0.1 -> 1e8
    # (large w, large dual steps, larger ||dy||, larger w): ITERATION_LIMIT, where the unpresolved LP
    # takes ~2,900 iterations
    from solver.highs_bridge import new_highs, to_highs_lp
    from solver.lp.dispatch import solve
    from solver.model.problem import Problem
    from solver.model.settings import Settings
    from solver.model.status import Status

    inf = np.inf
    A = [[0, 0, 0, 0, 0, 0, 0, 15.609713471613071, -0.0010178596809486023, 0, 0],
         [0, 0, 0, 0, 0, 0, 0, -204125.6442337395, 0, 0, 0],
         [0, 0, 21621.13234732768, 0, 6.15356925220782e-05, 0, 0, 0, 0, 2106.1842833949377, -16397.405087023093],
         [0, -4.969042389815331e-05, -2954051.854698511, -2.4361700483182444e-05, 110.89214157097285, 0,
          3.074631426880794, 0, 0, 10462.447774513368, -140.2141989143415],
         [0.00021424796678102374, -1971.162885972371, 83.45902311725632, 282.2351574334917, 2.9364107260834944e-05,
          -0.6394531945426198, 0, 182.28972769727062, 0.018734621541192986, 1715.8408867960952,
          -7.922431566274964e-05],
         [0, 0, 0, 0, 0.021037664721245495, 0, 0, 0, 0, 0, -16.820947609796455],
         [0.0009672132612541722, -28638.60721127252, 145.55049898737042, -1417.0077232314156, 0,
          27.834157004183105, -124567.6240056953, 225.34904798956052, -15.675900815715067, 10.0,
          0.00020878533800326542],
         [0, 0, 0, 0, 0, 0.2569045312325801, 0, -250972.93103973728, 0, 0, 0],
         [-0.022894503523176856, 0.029311098592290873, 0.5498113472095008, -1.912881707225435e-05,
          -0.0036321856338490657, -4.3307304586002804e-06, 7.306267669691113e-07, 24.666582339017744,
          -16.054060412371783, 0, -96.00056614325271],
         [0, 0, -21.638710805387895, 0, 0, 0, 0, 0, -158018.1150406168, 0, 0]]
    p = Problem.from_arrays(
        cost=[1202.1397068207104, -0.00036793699414897676, -0.014604219183277882, 26.708333353446857,
              -10.177309469725289, -0.47552638236428824, 0.0006589536343585948, 1022.1055477131995,
              1.2005179535039792, -0.011262195187653248, 0.0],
        matrix=np.array(A, dtype=float),
        row_lower=[-inf, -407419.91564921936, -43359.91499989833, -inf, -inf, -49.11483297943201, -inf,
                   -500923.9884945494, -210.22907987559773, 169114.22505002614],
        row_upper=[31.15694031107917, -407419.91564921936, -43359.91499989833, -657823.6189843294,
                   -1870.0105547890785, -48.18480954111451, -261311.65788287373, -500923.9884945494,
                   -208.55058264135613, 169115.0536493286],
        col_lower=[0.8313894733374553, -0.5001543494672513, -inf, -inf, -1.681524093388009, -inf,
                   1.8454859727843966, -inf, -3.230840430974967, -2.945149922106545, -0.05682948512424124],
        col_upper=[2.7988398732416258, 1.2021534902257884, inf, 3.857634939565102, 2.015284100776778,
                   -0.8784625554291585, 1.8454859727843966, 2.2048023730944633, inf, inf, 3.8152884587874407])
    r = solve(p, Settings(tol=1e-4, iteration_limit=100_000))
    assert r.status == Status.OPTIMAL, r.message
    h = new_highs()
    h.passModel(to_highs_lp(p, with_names=False))
    h.run()
    opt = h.getInfo().objective_function_value
    assert abs(r.objective - opt) <= 1e-3 * (1.0 + abs(opt)), (r.objective, opt)
