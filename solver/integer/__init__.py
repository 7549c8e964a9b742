"""MILP rounds without branch-and-cut: LP relaxation + integerization heuristics + a proven gap bound.

Entry point: :func:`solve_milp` (``pipeline.py``; its module docstring describes the stages and the report).

Files:

- ``pipeline.py``: ``solve_milp``, one function per stage (relaxation stages, round/repair/fill,
  fix-and-resolve, dual ascent, RENS, dive, fill with exact continuous values, HiGHS fallback, verdict);
- ``options.py``: the integer settings, checked once per call; ``report.py``: the round's SolveResult;
- ``structure.py``: choice rows, capacity rows, variable upper bounds, general integers;
- ``relaxation.py``: the warm LP relaxation and its tolerance ladder;
- ``rounding.py``: round / repair / fill over the numba kernels ``kernels.py`` (numpy twins ``kernels_ref.py``);
- ``resolve.py``: integers fixed, continuous part re-solved warm and finished exactly by HiGHS simplex;
- ``check.py``: the exact feasibility check of a point; ``incumbent.py``: the previous round's point, mapped
  by name and checked exactly, as the round's first incumbent;
- ``bound.py``, ``lagrangian_kernel.py``, ``ascent.py``: the Lagrangian bound and its dual ascent;
- ``submip.py``: RENS and the Lagrangian core; ``dive.py``: relax-and-fix dive;
- ``fallback.py``: HiGHS MIP, time-limited and seeded (through ``solver.highs_bridge``).
"""

__all__ = ["solve_milp"]


def __getattr__(name: str):
    """``solve_milp`` on first use (PEP 562): importing a light submodule (``incumbent``, ``check``, ``gap``)
    does not import the pipeline and numba with it; a step that maps the previous integer point charged
    that import (0.35 s) to its ``apply`` seconds."""
    if name == "solve_milp":
        from solver.integer.pipeline import solve_milp

        return solve_milp
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
