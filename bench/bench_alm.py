"""Warm rounds of the proximal ALM engine against PDHG and hot-started HiGHS simplex, in one run.

For each workload, rounds 0..R are built with ``solver.differential.apply_delta`` from the scenario's
deltas (TE: every demand drifts by +-10%, POP's perturbation; Sia and LB: their round deltas); round 0 is
solved cold by PDHG (``solver.lp.dispatch.solve``, what a first round runs today); then every round r >= 1 is
solved

- ``pdhg cold``: ``dispatch.solve`` from scratch (presolve auto);
- ``pdhg warm``: ``dispatch.solve`` warm-started from the previous PDHG warm round's state (map_state);
- ``alm warm``: ``solve_alm`` warm-started from the previous ALM round's state (round 1: from PDHG's round 0);
- ``alm cold``: ``solve_alm`` from scratch (only on the first ``--alm-cold-rounds`` rounds: slow);
- ``auto warm``: ``dispatch.solve`` with ``Settings.engine = "auto"`` warm-started from the previous auto round's
  state (``solver.lp.engine_choice`` picks the engine; its record rides in the state);
- ``highs hot``: HiGHS dual simplex hot-started from the previous round's basis by in-place edits
  (``solver.baselines.highs_warm.WarmHighs``; round 0 by IPM + crossover), on the LP relaxation;

all at the same relative tolerance (copter: relative KKT ``--tol`` in original units; HiGHS: its own
simplex tolerances). Times are wall seconds of the solve call (for copter: scaling, iterations and the
original-space KKT; for HiGHS: the edits plus ``run()``). Printed per round, then per workload the
median ratios: alm warm / pdhg cold, alm warm / alm cold, pdhg warm / pdhg cold, alm warm / highs hot.
Goals (issue #17): TE Cogentco alm warm / cold <= 0.2 and faster than highs hot.

Measured 2026-12-01 (tol 1e-4, 3 rounds; the 2-core machine shared with other sessions, so wall times
are noisy: HiGHS's hot start took 2-5 s here against 0.58 s on a quiet machine; ratios within one run):

    workload (rows x cols, nnz)        alm warm s  alm w / pdhg c  alm w / alm c  pdhg w / c  alm w / highs hot
    TE Cogentco (39,098 x 66,861, 956k)   1.0-2.0     0.070            0.014          0.255       0.41 (0.19-0.97)
    TE ring 24 (624 x 1,440)              0.13-0.17   0.84             0.64           0.57        5.6
    Sia 1,024 GPUs (507 x 38,500)         0.44-1.03   0.075            0.59           1.04        4.0
    LB 256x32 (8,512 x 16,384)            5.3-13      1.9              1.4            0.86        3.3

With the auto column (same day, 3 rounds, load average ~12): TE Cogentco auto warm 1.09-1.47 s = 0.053 of PDHG
cold (21.8-26.2 s here) and 0.34 of hot-started HiGHS (2.5-5.3 s here); PDHG warm 0.22 of cold.

Cogentco: every warm round is one outer step (7-8 Newton steps, 54-100 CG iterations) from a start at
relative KKT 5e-4; the ALM's own cold solve is slow (142 s: CG work explodes once eta >= 256), so rounds
should start cold with PDHG. Sia starts far (KKT 0.1-0.26 after a round's arrivals): 6-8 outer steps.
LB defeats the Newton solves (line-search zigzags, 21-43 outer steps): PDHG is the engine there.

Run: ``.venv/bin/python bench/bench_alm.py [--workloads te-cogentco te-ring sia lb] [--rounds 3]
[--tol 1e-4] [--cap 300] [--alm-cold-rounds 1]``
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shlex
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads
import numpy as np  # noqa: E402

from solver.baselines.highs_warm import WarmHighs  # noqa: E402
from solver.differential import apply_delta, map_state  # noqa: E402
from solver.lp.alm import solve_alm  # noqa: E402
from solver.lp.dispatch import solve  # noqa: E402
from solver.model.problem import Problem  # noqa: E402
from solver.model.settings import Settings  # noqa: E402
from solver.workloads import make_scenario  # noqa: E402

WORKLOADS = ("te-cogentco", "te-ring", "sia", "lb")


def scenario(name: str, seed: int):
    """(label, Scenario) for a workload name."""
    if name == "te-cogentco":
        from examples.te.loader import read_topology
        from solver.workloads.te import TEScenario

        data = Path(os.environ.get("COPTER_DATA") or REPO.parent / "shared" / "data")
        return "TE Cogentco", TEScenario(topology=read_topology(data / "topologies" / "pop_Cogentco.graphml"),
                                         seed=seed)
    if name == "te-ring":
        return "TE ring 24", make_scenario("te", None, seed=seed)
    if name == "sia":
        return "Sia 1024 GPUs", make_scenario("sia", 1024, seed=seed)
    if name == "lb":
        return "LB 256x32", make_scenario("lb", (256, 32), seed=seed)
    raise SystemExit(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}")


def relax(p: Problem) -> Problem:
    """The LP relaxation (Sia and LB rounds are MILPs; every engine here solves their LP)."""
    return p.replace(integrality=np.zeros(p.n_cols, dtype=bool)) if p.is_mip else p


def timed(fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t


def warm_up() -> None:
    """Load every numba kernel (compiled and cached on first use) so no round times compilation."""
    p = Problem.from_arrays(cost=[-1.0, -1.0], col_lower=[0, 0], col_upper=[1, 1], row_lower=[-np.inf],
                            row_upper=[1.5], matrix=np.array([[1.0, 1.0]]))
    solve(p, Settings(presolve="off"))
    solve_alm(p, Settings())


def run(label: str, sc, args) -> list[dict]:
    s = Settings(tol=args.tol, time_limit_seconds=args.cap, engine="pdhg")
    sa = Settings(tol=args.tol, time_limit_seconds=args.cap, engine="auto")
    p = sc.base()
    print(f"\n{label}: {p.n_rows} rows, {p.n_cols} columns, {p.nnz} nonzeros", flush=True)
    hw = WarmHighs(solver="simplex", cold_solver="ipm", threads=1)
    h0 = hw.solve(relax(p), time_limit_seconds=args.cap)
    r0, t0 = timed(solve, p, s)
    print(f"  round 0: pdhg cold {r0.status.name} {t0:.2f} s ({r0.iterations} it); highs ipm cold "
          f"{h0.status.name} {h0.seconds:.2f} s", flush=True)
    pdhg_state, alm_state, auto_state = r0.state, r0.state, r0.state
    rows = []
    hdr = (f"  {'round':>5} {'pdhg cold':>10} {'pdhg warm':>10} {'alm cold':>10} {'alm warm':>10} {'highs hot':>10}"
           f" {'auto warm':>10} {'alm/pdhgc':>9} {'alm w/c':>8} {'pdhg w/c':>8} {'alm/highs':>9} {'auto/pdhgc':>10}"
           f" {'auto/highs':>10}  alm warm detail; auto's engine")
    print(hdr, flush=True)
    for r in range(1, args.rounds + 1):
        q, info = apply_delta(p, sc.next_delta(r, None))
        cold, tc = timed(solve, q, s)
        pw, tpw = timed(solve, q, s, warm_start=map_state(pdhg_state, info, q))
        aw, taw = timed(solve_alm, q, s, warm_start=map_state(alm_state, info, q))
        au, tau = timed(solve, q, sa, warm_start=map_state(auto_state, info, q))
        ac, tac = (None, math.nan)
        if r <= args.alm_cold_rounds:
            ac, tac = timed(solve_alm, q, s)
        hh = hw.solve(relax(q), time_limit_seconds=args.cap, info=info)
        ref = hh.objective if math.isfinite(hh.objective) else cold.objective
        row = {"round": r, "pdhg_cold": tc, "pdhg_warm": tpw, "alm_cold": tac, "alm_warm": taw,
               "highs_hot": hh.seconds, "auto_warm": tau, "statuses": (cold.status.name, pw.status.name, aw.status.name,
                                                     ac.status.name if ac else "-", hh.status.name,
                                                     au.status.name),
               "alm_obj_rel": abs(aw.objective - ref) / (1 + abs(ref))}
        rows.append(row)
        tail = aw.message.split("(")[-1].rstrip(")") if "(" in aw.message else aw.message
        flag = "" if all(x in ("OPTIMAL", "-") for x in row["statuses"]) else f"  statuses {row['statuses']}"
        acs = f"{tac:9.2f}s" if ac else f"{'-':>10}"
        acr = f"{taw / tac:8.3f}" if ac else f"{'-':>8}"
        print(f"  {r:5d} {tc:9.2f}s {tpw:9.2f}s {acs} {taw:9.2f}s {hh.seconds:9.2f}s "
              f"{tau:9.2f}s {taw / tc:9.3f} {acr} {tpw / tc:8.3f} {taw / hh.seconds:9.3f} {tau / tc:10.3f} "
              f"{tau / hh.seconds:10.3f}  {aw.status.name} {tail}; obj vs highs {row['alm_obj_rel']:.1e}; auto: "
              f"{au.engine} ({au.engine_reason[:90]}){flag}", flush=True)
        p, pdhg_state, alm_state, auto_state = q, pw.state, aw.state, au.state
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS,
                    help="(default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=3, help="(default: %(default)s)")
    ap.add_argument("--tol", type=float, default=1e-4, help="(default: %(default)s)")
    ap.add_argument("--cap", type=float, default=300.0,
                    help="time limit per solve, seconds (default: %(default)s)")
    ap.add_argument("--alm-cold-rounds", type=int, default=1,
                    help="rounds on which the ALM also runs cold (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))  # pastes back (an empty argument quoted)
    print("versions:", ", ".join(f"{k} {version(k)}" for k in ("copter", "numba", "numpy", "highspy")),
          f"python {platform.python_version()}, {os.cpu_count()} cpus")
    print(f"tol {args.tol:g}, cap {args.cap:g} s, {args.rounds} rounds; times are wall seconds of one solve")
    warm_up()
    summary = []
    for w in args.workloads:
        label, sc = scenario(w, args.seed)
        rows = run(label, sc, args)

        def med(key_a, key_b, rows=rows):
            v = [r[key_a] / r[key_b] for r in rows if math.isfinite(r[key_a]) and math.isfinite(r[key_b])]
            return statistics.median(v) if v else math.nan

        summary.append((label, med("alm_warm", "pdhg_cold"), med("alm_warm", "alm_cold"),
                        med("pdhg_warm", "pdhg_cold"), med("alm_warm", "highs_hot"),
                        statistics.median(r["alm_warm"] for r in rows), statistics.median(r["highs_hot"] for r in rows),
                        med("auto_warm", "pdhg_cold"), med("auto_warm", "highs_hot")))
    print("\nsummary (median over rounds; goals: TE Cogentco alm warm/cold <= 0.2, alm warm < highs hot)")
    print(f"  {'workload':16s} {'alm w/pdhg c':>12} {'alm w/alm c':>11} {'pdhg w/c':>9} {'alm w/highs':>11} "
          f"{'alm warm s':>10} {'highs hot s':>11} {'auto w/pdhg c':>13} {'auto w/highs':>12}")
    for label, a, b, c, d, e, f, g, h in summary:
        print(f"  {label:16s} {a:12.3f} {b:11.3f} {c:9.3f} {d:11.3f} {e:10.3f} {f:11.3f} {g:13.3f} {h:12.3f}")


if __name__ == "__main__":
    main()
