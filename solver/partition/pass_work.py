"""What each part of a partitioned LP round ran over all of the round's passes.

An LP round can solve its parts more than once (``--partition-passes``, a share-reclaim pass after clients were dropped
or added, its halved retry): each pass starts warm from the pass before, and the pass kept is often one whose parts
found their warm point already within tol and ran no engine (0 iterations, the engine choice's label). The round then
reported "pdhg, 0 iterations" for parts whose ALM ran 16-35 Newton steps in the first pass (helper-189, session 48:
TE ring 240, K = 2, a delta dropping two clients). :class:`PassWork` adds every pass's iterations per part and keeps the
engine of each part's busiest pass, and :meth:`PassWork.apply` puts them on the kept pass's results before the merge,
so the report's per-part ``iterations`` / ``engine`` and the round's (the busiest part's, docs/usage.md "Partitioned
rounds") say what ran.
"""

from __future__ import annotations

from dataclasses import replace

from solver.model.result import SolveResult


class PassWork:
    """Per part (k of them): the iterations of every pass so far, and the engine of the pass that ran the most.

    Attributes:
        passes: the passes added. total: (k,) iterations summed over them. busiest: (k,) (iterations, engine,
            engine_reason) of each part's pass with the most iterations (a later pass on ties), or None.
    """

    def __init__(self, k: int):
        self.passes = 0
        self.total = [0] * k
        self.busiest: list[tuple[int, str, str] | None] = [None] * k

    def add(self, results: list[SolveResult | None]) -> None:
        """Count one pass's (k,) results (None: a part not solved in it)."""
        self.passes += 1
        for p, res in enumerate(results):
            if res is None:
                continue
            it = int(res.iterations)
            self.total[p] += it
            if self.busiest[p] is None or it >= self.busiest[p][0]:
                self.busiest[p] = (it, res.engine or "", res.engine_reason or "")

    def apply(self, results: list[SolveResult | None]) -> list[SolveResult | None]:
        """The kept pass's (k,) results with each part's iterations summed over the passes and, where the kept pass's
        solve ran no iteration while an earlier pass's did, that pass's engine (its reason saying so). Unchanged
        after a single pass."""
        if self.passes <= 1:
            return results
        out = list(results)
        for p, res in enumerate(results):
            if res is None or self.busiest[p] is None:
                continue
            changes = {"iterations": max(self.total[p], int(res.iterations))}
            it, engine, reason = self.busiest[p]
            if int(res.iterations) == 0 and it > 0 and engine:
                changes["engine"] = engine
                changes["engine_reason"] = (f"{reason}; {it} iterations in an earlier pass of this round, the kept pass "
                                            f"ran none ({res.engine_reason or 'its warm point within tol'})")
            out[p] = replace(res, **changes)
        return out
