"""The three workload domains of the COpter paper as scenario generators (base problem + per-round deltas).

- ``sia``: GPU cluster scheduling in Sia's MILP formulation (:mod:`solver.workloads.sia`);
- ``te``: WAN traffic engineering, path formulation (:mod:`solver.workloads.te`);
- ``lb``: POP's shard load-balancing MILP (:mod:`solver.workloads.lb`).

All ship with built-in synthetic defaults (no data files), so ``copter demo`` works after a plain
install; ``examples/<domain>/`` adds loaders for the real public data. Names follow the POP client
convention documented in :mod:`solver.workloads.common`.
"""

from __future__ import annotations

from solver.model.errors import UsageError
from solver.workloads.common import Scenario, parse_scale

DOMAINS = ("sia", "te", "lb")
#: :func:`make_scenario`'s sizes when none is given: small enough for init + a few steps in well under a second
#: on 2 cores (the tests' and the examples' default)
DEFAULT_SCALES = {"sia": 128, "te": 24, "lb": (128, 16)}
#: ``copter demo``'s sizes when ``--scale`` is not given: Sia at 1,024 GPUs, where a round's solve takes 0.1-0.3 s
#: and the warm start's saving shows above the timer's noise (at 128 GPUs a round took 5-30 ms, and its
#: warm / cold ratio ranged 0.2-2.5x from one run to the next: a user's trial read it as warm starts not paying);
#: the whole default demo still takes a few seconds once the kernels are compiled
DEMO_SCALES = {**DEFAULT_SCALES, "sia": 1024}


def check_domain(domain: str) -> None:
    """Raises UsageError naming the choices when ``domain`` is not one of :data:`DOMAINS`."""
    if domain not in DOMAINS:
        raise UsageError(f"unknown domain {domain!r}; choose one of {', '.join(DOMAINS)}")


def make_scenario(domain: str, scale=None, seed: int = 0, **options) -> Scenario:
    """Build a synthetic scenario.

    Args:
        domain: ``sia`` | ``te`` | ``lb``.
        scale: Sia: total GPUs (int or "1024"); TE: ring nodes (int); LB: "1024x128" or (N, S).
            None = the default size (``DEFAULT_SCALES``; ``copter demo`` passes its own, ``DEMO_SCALES``).
        seed: RNG seed (same seed, same stream).
        **options: passed to the scenario class (e.g. ``form="min"`` for Sia, ``objective="concurrent"``
            for TE).
    Raises:
        UsageError: unknown domain or malformed scale.
    """
    check_domain(domain)
    s = parse_scale(scale, DEFAULT_SCALES[domain]) if not isinstance(scale, (int, tuple)) else scale
    if domain == "sia":
        from solver.workloads.sia import SiaScenario

        if not isinstance(s, int):
            raise UsageError(f"Sia scale is a number of GPUs (e.g. 1024), got {scale!r}")
        return SiaScenario(total_gpus=s, seed=seed, **options)
    if domain == "te":
        from solver.workloads.te import TEScenario

        if not isinstance(s, int):
            raise UsageError(f"TE scale is a number of ring nodes (e.g. 24), got {scale!r}; "
                             "real topologies: examples/te/generate.py")
        return TEScenario(nodes=s, seed=seed, **options)
    from solver.workloads.lb import LBScenario

    n, m = LBScenario.parse_scale(s)
    return LBScenario(shards=n, servers=m, seed=seed, **options)
