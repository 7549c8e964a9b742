"""How a state's rounds are partitioned: :class:`PartitionConfig` (config.json's ``"partition"``) and the
share update cadence when none is given (:func:`default_update_every`). Used by :mod:`solver.partition.round`."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields

from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.partition.executor import check_executor, ray_address_target, ray_initialized
from solver.partition.limits import MAX_PASSES
from solver.partition.small import SMALL_LP_NNZ, parts_inline, small_lp


@dataclass
class PartitionConfig:
    """How a state's rounds are partitioned (stored in config.json under ``"partition"``).

    Attributes:
        k: number of parts (1 = monolithic rounds, the partition code is not used).
        client_regex, shared_rows_regex: client grouping overrides (:mod:`solver.partition.clients`).
        executor: ``process`` (default), ``ray`` or ``inline`` (:mod:`solver.partition.executor`).
        ray_address: Ray cluster to join (None: ``$RAY_ADDRESS``, else a local cluster).
        seed: seed of the initial random client split.
        passes: share updates + re-solves within one round (1 .. :data:`MAX_PASSES`; a spent ``--time-limit``
            makes the pass that spent it the round's last).
        workers: local worker processes (None: min(k, CPU count)).
        probe: a fresh split (round 0, or a cold start) first solves every part with the whole of each
            shared row and splits capacity rows in proportion to those demands (:func:`solver.partition.round._probe`).
        update_every: move the shares after every round (1), every n-th round, or never (0: the probe's
            shares stay, like POP's fixed ones). A share move changes the bounds of the parts' shared rows,
            which costs their next warm solve nearly as many iterations as a cold one (TE); fixed shares
            leave the parts only the delta's changes. None (the default): :func:`default_update_every`.
        whole_below_nnz: an LP round whose whole model has at most this many nonzeros is also solved whole after
            the merge and the better point kept, the next round's shares taken from it when it is the whole
            solve's (:func:`solver.partition.fallback.compare_small_lp`; 0: never). A MILP round with at most
            ``min(whole_below_nnz, SMALL_MILP_NNZ)`` goes from a merge above its target gap straight to a whole solve
            (:func:`solver.partition.small.small_milp`).
        inline_below_nnz: a round whose whole model has at most this many nonzeros runs its parts in this
            process when ``executor`` is ``process`` (0: never, the default here; ``copter init`` stores
            :data:`solver.partition.small.INLINE_BELOW_NNZ` unless given ``--executor``, and a ``step`` given
            ``--executor`` runs on it whatever the size): starting the workers costs more than such parts' solve.
    """

    k: int = 1
    client_regex: str | None = None
    shared_rows_regex: str | None = None
    executor: str = "process"
    ray_address: str | None = None
    seed: int = 0
    passes: int = 1
    workers: int | None = None
    probe: bool = True
    update_every: int | None = None
    whole_below_nnz: int = SMALL_LP_NNZ
    inline_below_nnz: int = 0

    def check(self) -> None:
        """Raise UsageError for k < 1, passes outside 1 .. :data:`MAX_PASSES`, an unknown executor, ``ray``
        without Ray, or ``ray`` with a ``ray_address`` (else ``$RAY_ADDRESS``) not of a Ray address's form."""
        if self.k < 1:
            raise UsageError(f"--partitions must be at least 1, got {self.k}")
        if not 1 <= self.passes <= MAX_PASSES:
            raise UsageError(f"--partition-passes must be between 1 and {MAX_PASSES}, got {self.passes}")
        if self.update_every is not None and self.update_every < 0:
            raise UsageError(f"--share-update-every must be >= 0, got {self.update_every}")
        if self.whole_below_nnz < 0:
            raise UsageError(f"--whole-below-nnz must be >= 0, got {self.whole_below_nnz}")
        if self.inline_below_nnz < 0:
            raise UsageError(f"inline_below_nnz must be >= 0, got {self.inline_below_nnz}")
        check_executor(self.executor)
        if self.executor == "ray":
            # a malformed --ray-address, or $RAY_ADDRESS that Ray would join without one: exit 2 before any work
            # (the variable was found only when the round joined Ray, after its set-up); a process already on
            # Ray joins no address
            ray_address_target(self.ray_address if self.ray_address is not None or ray_initialized()
                               else os.environ.get("RAY_ADDRESS"))

    def round_executor(self, problem: Problem) -> str:
        """The executor a round of ``problem`` (its whole model) runs its parts on: ``inline`` for a small one
        (:attr:`inline_below_nnz`, :func:`solver.partition.small.parts_inline`) when ``executor`` is ``process``,
        else ``executor``."""
        small = parts_inline(problem.nnz, self.inline_below_nnz)
        return "inline" if self.executor == "process" and small else self.executor

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict | None) -> PartitionConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (d or {}).items() if k in known})


def default_update_every(problem: Problem, whole_below_nnz: int = SMALL_LP_NNZ) -> int:
    """The share update cadence when none is given: never (0, the probe's shares stay) for an LP above
    ``whole_below_nnz`` nonzeros, after every round (1) otherwise (a MILP; an LP solved whole each round, whose
    next shares then come from the whole optimum).

    Why: on the large TE LPs the price step moved the shares away from the probe's split. TE Kdl K = 4
    (``bench/bench_partitions.py te --topology Kdl --rounds 1 --ks 4``, every demand +-10% in round 1): 0.79%
    below the monolithic round 1 with a share update after round 0 (session 11), 0.038% with fixed shares
    (session 12; own Lagrangian gap 4.19% -> 1.23%); TE Cogentco K = 4 rounds 1-4: 0.22-0.34% with updates,
    0.38-0.42% fixed (both within 0.5%, fixed in 0.4x the time on 4 cores). The MILP rounds (Sia) were
    measured with updates.
    """
    return 1 if problem.is_mip or small_lp(problem, whole_below_nnz) else 0
