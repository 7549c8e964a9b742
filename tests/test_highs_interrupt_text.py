"""A HiGHS MIP run that copter's own callback interrupts is not reported in HiGHS's words "Interrupted by user"
(adversary finding, session 16: a round stopped by its --integer-fallback-seconds budget said
"(Interrupted by user, 60.1 s)"; no user interrupted anything): the deadline reads as a time limit, a stall
watch's interrupt names the stall (``solver.integer.fallback``)."""

from __future__ import annotations

import highspy
import numpy as np

from solver import highs_bridge as hb


def _knapsack(h: highspy.Highs, n: int = 60, seed: int = 0) -> None:
    """A 0/1 knapsack HiGHS cannot close at its root (so MIP callbacks run)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(20, 60, n).astype(float)
    v = w + rng.integers(-5, 5, n)
    for j in range(n):
        h.addVar(0.0, 1.0)
        h.changeColCost(j, -float(v[j]))
        h.changeColIntegrality(j, highspy.HighsVarType.kInteger)
    h.addRow(-highspy.kHighsInf, float(w.sum() / 2 + 0.5), n, np.arange(n, dtype=np.int32), w)


def test_an_interrupt_raised_by_copter_reads_as_its_deadline():
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    _knapsack(h)
    h.cbMipInterrupt.subscribe(lambda event: event.interrupt())
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kInterrupt
    assert hb.status_text(h) == hb.INTERRUPT_TEXT
    assert "Interrupted by user" not in hb.status_text(h)


def test_other_statuses_keep_highs_words():
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    _knapsack(h, n=8)
    h.run()
    assert hb.status_text(h) == "Optimal"
