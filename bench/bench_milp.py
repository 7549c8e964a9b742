"""MILP rounds: copter's integerization (warm LP relaxation + heuristics) against HiGHS MIP and POP.

Workloads (solver.workloads, deterministic for --seed):

- ``sia``: Sia GPU scheduling at each ``--gpus`` size for ``--rounds`` rounds. Per round: copter's integer
  objective vs HiGHS MIP's (cold, fresh instance, ``--highs-limit`` seconds), the relative difference
  (> 0 = copter worse; goal <= 0.5%), copter's own proven gap to its LP bound, and the time ratio
  HiGHS MIP / copter (goal 100x at 10,240 GPUs). HiGHS runs on every ``--highs-every``-th round only
  when it is too slow to run on all of them.
- ``packing``: random binary packing MILPs (the multidimensional knapsack: max c'x, A x <= b, x binary, A
  dense-ish nonnegative, seeded; :class:`PackingScenario`) at each ``--packing`` size COLSxROWS, each round
  moving 20 costs (+-20%) and 5 capacities (+-10%). With 3 rows HiGHS proves the optimum in seconds; with
  20-50 rows HiGHS cannot prove 0.5% in minutes, and copter's improvement step (HiGHS seeded with its point)
  stops when it stalls (``improve_s``, ``stalled``) instead of spending ``--highs-limit``.
- ``lb``: POP's shard load balancing at each ``--lb`` size (e.g. 256x32, 1024x128): shards newly placed
  (the objective, an absolute count) by copter vs HiGHS MIP (its optimum or its incumbent at the time
  limit) and POP-k (HiGHS per part, its parts on ``--executor``: local worker processes by default, Ray
  tasks or inline; ``solver.partition.executor``, the executor of partitioned rounds).

copter's time is the whole ``solve_milp`` (LP relaxation warm-started from the previous round's state
mapped through the delta, rounding, repair, fill, exact clean-up); applying the delta and mapping the
state are shown separately (``apply_s``). Every copter point is re-checked exactly (bounds,
integrality, rows to 1e-9 relative) and the table says so (``exact``).

copter's settings are the defaults of ``Settings`` (since #15: ``mip_gap_tol`` 5e-3, ``relaxation_round_iterations``
128, the HiGHS fallback on) unless given: ``--tol`` (LP core), ``--mip-gap`` (mip_gap_tol: the round stops at
the first rounded point within it of the Lagrangian bound; ``--mip-gap 1e-4`` is the tight behaviour),
``--round-every`` (relaxation_round_iterations: round the relaxation after
128, 256, ... iterations instead of only at the tolerance) and ``--relaxation-tol``; the ``stages``
column counts the relaxation stages a round ran. ``--highs-gap`` sets HiGHS's ``mip_rel_gap`` (default
HiGHS's 1e-4), e.g. ``--highs-gap 5e-3`` with ``--mip-gap 5e-3`` races both solvers to the same proven gap.

Usage::

    python bench/bench_milp.py --workload sia --gpus 1024 10240 --rounds 10
    python bench/bench_milp.py --workload sia --gpus 1024 --rounds 10 --mip-gap 5e-3 --round-every 128
    python bench/bench_milp.py --workload sia --gpus 10240 --rounds 10 --mip-gap 5e-3 --round-every 128 \
        --highs-gap 5e-3 --highs-limit 600 --highs-every 5
    python bench/bench_milp.py --workload sia --gpus 25600 --rounds 3 --highs-every 3
    python bench/bench_milp.py --workload lb --lb 256x32 1024x128 --rounds 3 --highs-limit 120
    python bench/bench_milp.py --workload packing --packing 200x3 200x30 --rounds 4 --highs-limit 60
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from bench.common import add_executor_args, check_executor_arg, header  # noqa: E402
from solver.baselines.highs import solve_highs  # noqa: E402
from solver.differential import apply_delta, map_state  # noqa: E402
from solver.integer import solve_milp  # noqa: E402
from solver.integer.check import check_point  # noqa: E402
from solver.model.delta import Delta  # noqa: E402
from solver.model.problem import Problem  # noqa: E402
from solver.model.settings import Settings  # noqa: E402


def _rel(sense: int, ours: float, ref: float) -> float:
    """sense * (ours - ref) / max(1, |ref|): > 0 means ours is worse."""
    if not (math.isfinite(ours) and math.isfinite(ref)):
        return math.nan
    return sense * (ours - ref) / max(1.0, abs(ref))


def _fmt(v, spec=".4g"):
    if v is None:
        return "-"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else format(v, spec)
    return str(v)


def _table(title: str, cols: list[str], rows: list[dict]) -> None:
    print(f"\n## {title}")
    print("| " + " | ".join(cols) + " |")
    print("|" + "|".join("---" for _ in cols) + "|")
    for r in rows:
        print("| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |")
    sys.stdout.flush()


class PackingScenario:
    """Seeded binary packing rounds (module docstring): ``base()`` is round 0, ``next_delta(r, x)`` round r's
    delta (the allocation ``x`` is not used: the changes are exogenous)."""

    def __init__(self, n: int, m: int, seed: int = 0, tightness: float = 0.25, density: float = 0.6):
        rng = np.random.default_rng(seed)
        a = rng.integers(1, 50, size=(m, n)).astype(float) * (rng.random((m, n)) < density)
        c = np.round(a.sum(axis=0) / m + rng.integers(1, 30, n))
        self.problem = Problem.from_arrays(
            cost=c, col_lower=np.zeros(n), col_upper=np.ones(n), row_lower=np.full(m, -np.inf),
            row_upper=np.floor(tightness * a.sum(axis=1)), matrix=sp.csc_array(a),
            col_names=[f"x{j:05d}" for j in range(n)], row_names=[f"r{i:03d}" for i in range(m)], sense=-1,
            integrality=np.ones(n, dtype=bool))
        self.rng = rng

    def base(self):
        return self.problem

    def next_delta(self, round: int, previous_solution=None) -> Delta:
        p, rng = self.problem, self.rng
        j = rng.choice(p.n_cols, min(20, p.n_cols), replace=False)
        i = rng.choice(p.n_rows, min(5, p.n_rows), replace=False)
        cost = p.cost[j] * rng.uniform(0.8, 1.2, j.size)
        upper = np.floor(p.row_upper[i] * rng.uniform(0.9, 1.1, i.size))
        delta = Delta.concat([Delta.vars([p.col_names[t] for t in j], cost=cost),
                              Delta.cons([p.row_names[t] for t in i], upper=upper)])
        self.problem = apply_delta(p, delta)[0]  # the scenario follows its own stream
        return delta


def run_stream(scenario, rounds: int, settings: Settings, highs_limit: float, highs_every: int,
               pop_k: list[int], label: str, highs_gap: float | None = None, executor: str = "process",
               ray_address: str | None = None) -> list[dict]:
    """Solve ``rounds`` rounds of ``scenario`` with copter (warm) and the baselines; one dict per round.
    POP's parts run on ``executor`` (``solver.partition.executor``; its process pool is kept across rounds)."""
    problem = scenario.base()
    state = None
    rows = []
    applied = math.nan  # the seconds of the delta that made this round's problem (round 0: none)
    for r in range(rounds):
        row = {"workload": label, "round": r, "cols": problem.n_cols, "rows": problem.n_rows, "apply_s": applied}
        t = time.perf_counter()
        res = solve_milp(problem, settings, state)
        row["copter_s"] = time.perf_counter() - t
        chk = check_point(problem, res.x)
        row["copter_obj"] = res.objective if res.point_feasible else math.nan
        row["status"] = res.status.name
        row["source"] = res.mip["source"]
        row["exact"] = bool(chk["ok"]) if res.point_feasible else "-"
        row["gap_to_bound"] = res.mip["gap_rel"]
        row["lp_s"] = res.seconds.get("relaxation", math.nan)
        row["int_s"] = res.seconds.get("integerize", math.nan)
        row["lp_iters"] = res.iterations
        row["lp_status"] = res.mip.get("lp_status", "-")
        row["frac"] = res.mip["fractional_before"]
        row["stages"] = len(res.mip.get("relaxation_stages", [])) or 1
        improve = [s for s in res.mip["steps"] if s["step"] == "fallback" and s.get("reason")]
        row["improve_s"] = sum(s["seconds"] for s in improve) if improve else math.nan
        row["stalled"] = any(s.get("stalled") for s in improve) if improve else "-"
        row["warm"] = state is not None
        if highs_limit > 0 and (r % highs_every == 0 or r == rounds - 1):
            b = solve_highs(problem, solver="mip", time_limit_seconds=highs_limit, threads=1,
                            mip_rel_gap=highs_gap)
            row["highs_obj"] = b.objective
            row["highs_s"] = b.seconds
            row["highs_status"] = b.extra.get("highs_status", b.status.name)
            row["diff_vs_highs"] = _rel(problem.sense, row["copter_obj"], b.objective)
            row["time_ratio"] = b.seconds / row["copter_s"]
        for k in pop_k:
            from solver.baselines.pop import solve_pop

            pb = solve_pop(problem, k=k, seed=r, time_limit_seconds=highs_limit, executor=executor,
                           ray_address=ray_address)
            row[f"pop{k}_obj"] = pb.objective
            row[f"pop{k}_s"] = pb.extra.get("pop_seconds", pb.seconds)
        rows.append(row)
        print("  " + "  ".join(f"{k}={_fmt(v)}" for k, v in row.items()), flush=True)
        if r + 1 < rounds:
            t = time.perf_counter()
            delta = scenario.next_delta(r + 1, res.x if res.point_feasible else None)
            problem, info = apply_delta(problem, delta)
            state = map_state(res.state, info, problem) if res.state is not None else None
            applied = time.perf_counter() - t  # on round r + 1's row, which it made (it sat on round r's)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", choices=("sia", "lb", "packing"), default="sia",
                    help="(default: %(default)s)")
    ap.add_argument("--gpus", type=int, nargs="*", default=[1024, 10240],
                    help="Sia cluster sizes. (default: %(default)s)")
    ap.add_argument("--lb", nargs="*", default=["256x32"],
                    help="LB sizes SHARDSxSERVERS. (default: %(default)s)")
    ap.add_argument("--packing", nargs="*", default=["200x3", "200x30"],
                    help="Packing sizes COLSxROWS. (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=10,
                    help="Rounds in all, round 0 (the base problem) included. (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--highs-limit", type=float, default=120.0,
                    help="HiGHS MIP time limit per round (s); 0 = skip. (default: %(default)s)")
    ap.add_argument("--highs-every", type=int, default=1,
                    help="Run HiGHS on every k-th round (and the last). (default: %(default)s)")
    ap.add_argument("--highs-gap", type=float, default=None,
                    help="HiGHS's mip_rel_gap (default: HiGHS's 1e-4); e.g. copter's --mip-gap for a like-for-like race.")
    ap.add_argument("--pop", type=int, nargs="*", default=[],
                    help="POP-k baselines to run (LB). (default: %(default)s)")
    add_executor_args(ap, "POP's parts")
    ap.add_argument("--fallback", choices=("highs", "none"), default=None,
                    help="copter's integer fallback (default: Settings' default, highs; none = the heuristics alone).")
    ap.add_argument("--tol", type=float, default=None)
    ap.add_argument("--time-limit", type=float, default=math.inf,
                    help="copter's LP core time limit per LP solve (s); the rounding still runs on the last iterate."
                         " (default: %(default)s)")
    ap.add_argument("--relaxation-tol", type=float, default=None,
                    help="tolerance of the first relaxation stage (Settings.relaxation_tol; default: --tol).")
    ap.add_argument("--round-every", type=int, default=None,
                    help="Settings.relaxation_round_iterations: round the relaxation after 128, 256, ... iterations "
                         "(doubling) and stop once within --mip-gap (default: Settings' 128; 0 = only at the tolerance).")
    ap.add_argument("--mip-gap", type=float, default=None,
                    help="copter's mip_gap_tol: the round stops at the first point proven within it (default: "
                         "Settings' 5e-3; 1e-4 = the tight behaviour).")
    ap.add_argument("--dive-max", type=int, default=None, help="copter's relax-and-fix dive re-solves (integer_dive_max).")
    args = ap.parse_args(argv)
    if args.pop:
        check_executor_arg(args.executor)
    header(sys.argv if argv is None else ["bench/bench_milp.py", *argv])
    given = {"tol": args.tol, "integer_fallback": args.fallback, "integer_dive_max": args.dive_max,
             "relaxation_tol": args.relaxation_tol, "mip_gap_tol": args.mip_gap,
             "relaxation_round_iterations": args.round_every}
    # copter's DEFAULT settings unless an option is given (what a user gets without tuning)
    settings = Settings(time_limit_seconds=args.time_limit, integer_fallback_seconds=args.highs_limit,
                        **{k: v for k, v in given.items() if v is not None})
    all_rows = []
    if args.workload == "sia":
        from solver.workloads.sia import SiaScenario

        for g in args.gpus:
            sc = SiaScenario(total_gpus=g, seed=args.seed)
            rows = run_stream(sc, args.rounds, settings, args.highs_limit, args.highs_every, args.pop, f"sia-{g}",
                              highs_gap=args.highs_gap, executor=args.executor, ray_address=args.ray_address)
            all_rows += rows
            _table(f"Sia {g} GPUs, {args.rounds} rounds (maximize; diff_vs_highs > 0 = copter worse)",
                   ["round", "cols", "warm", "copter_obj", "highs_obj", "diff_vs_highs", "gap_to_bound", "exact",
                    "source", "frac", "stages", "lp_iters", "lp_s", "int_s", "copter_s", "highs_s", "time_ratio",
                    "apply_s"],
                   rows)
    elif args.workload == "packing":
        for spec in args.packing:
            n, m = (int(v) for v in spec.lower().split("x"))
            rows = run_stream(PackingScenario(n, m, seed=args.seed), args.rounds, settings, args.highs_limit,
                              args.highs_every, [], f"packing-{spec}", highs_gap=args.highs_gap)
            all_rows += rows
            _table(f"Packing {spec} (binary), {args.rounds} rounds (maximize; diff_vs_highs > 0 = copter worse)",
                   ["round", "status", "copter_obj", "highs_obj", "highs_status", "diff_vs_highs", "gap_to_bound",
                    "exact", "source", "improve_s", "stalled", "lp_s", "int_s", "copter_s", "highs_s", "time_ratio"],
                   rows)
    else:
        from solver.workloads.lb import LBScenario

        for spec in args.lb:
            n, s = (int(v) for v in spec.lower().split("x"))
            sc = LBScenario(n, s, seed=args.seed)
            rows = run_stream(sc, args.rounds, settings, args.highs_limit, args.highs_every, args.pop, f"lb-{spec}",
                              highs_gap=args.highs_gap, executor=args.executor, ray_address=args.ray_address)
            all_rows += rows
            cols = ["round", "cols", "warm", "copter_obj", "highs_obj", "highs_status", *[f"pop{k}_obj" for k in args.pop],
                    "gap_to_bound", "exact", "source", "stages", "lp_iters", "lp_s", "int_s", "copter_s", "highs_s",
                    *[f"pop{k}_s" for k in args.pop], "time_ratio"]
            _table(f"Load balancing {spec}, {args.rounds} rounds (shards newly placed; lower is better)", cols, rows)
    # summary
    good = [r for r in all_rows if isinstance(r.get("diff_vs_highs"), float) and math.isfinite(r["diff_vs_highs"])]
    if good:
        print(f"\n# summary: rounds compared {len(good)}, worst diff_vs_highs {max(r['diff_vs_highs'] for r in good):.3e}, "
              f"median time ratio HiGHS/copter {np.median([r['time_ratio'] for r in good]):.1f}, "
              f"all copter points exact: {all(r['exact'] is True for r in all_rows if r['exact'] != '-')}")


if __name__ == "__main__":
    main()
