"""TE Kdl rounds through the library (issue #17): one cold solve, then warm rounds with every demand +-10%.

    .venv/bin/python bench/bench_kdl.py --phase cold --state /tmp/kdl-state.pkl        # round 0, saved
    .venv/bin/python bench/bench_kdl.py --phase warm --state /tmp/kdl-state.pkl --rounds 2
    NUMBA_NUM_THREADS=1 .venv/bin/python bench/bench_kdl.py --phase warm --state /tmp/kdl-state.pkl --rounds 1

The workload is ``solver.workloads.te.TEScenario`` on the Topology Zoo file ``pop_<topology>.graphml``
(default Kdl: about 570k rows, 1.06M columns, 31M nonzeros; total flow, 4 edge-disjoint paths per pair,
gravity demands); round r >= 1 is ``apply_delta`` of the scenario's delta, which moves every demand by
``d <- max(0, d (1 + 0.1 U(-1, 1)))`` (POP's perturbation). Every round is ``solver.api.solve_problem`` with
``Settings()`` (engine auto, tol 1e-4, no time limit) except ``--threads`` (``Settings.threads``); warm
rounds start from the previous round's state mapped by ``solver.differential.map_state``.

``--phase cold`` solves round 0 and pickles (scenario, round-0 state) to ``--state`` so the warm rounds can
be re-run (e.g. with other thread counts) without paying the cold solve again; ``--phase warm`` loads it.
Per round the script prints and appends to ``bench/results/kdl-<topology>-<UTC>.csv``: engine and its
reason, wall and CPU seconds (this process, all threads) of ``solve_problem`` (and wall of ``map_state``), iterations, status, objective, relative
KKT (max of primal residual, dual residual and gap, original units), numba threads, load average.
The ratio warm/cold (time) is the issue's goal (<= 0.2); the cold seconds come from the pickle.
"""

from __future__ import annotations

import argparse
import csv
import os
import pickle
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

from common import RESULTS, header  # noqa: E402


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topology", default="Kdl", help="Topology Zoo name or GraphML path (default Kdl)")
    ap.add_argument("--phase", choices=("cold", "warm", "all"), default="all", help="(default: %(default)s)")
    # not a fixed name in a world-writable /tmp, which the warm phase would unpickle (helper-238)
    ap.add_argument("--state", default=str(Path.home() / ".cache" / "copter-bench" / "kdl-state.pkl"),
                    help="pickle of (scenario, round-0 state) (default ~/.cache/copter-bench/kdl-state.pkl)")
    ap.add_argument("--rounds", type=int, default=2, help="warm rounds after round 0 (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=None, help="Settings.threads (default: Settings())")
    ap.add_argument("--engine", choices=("auto", "pdhg", "alm"), default="auto",
                    help="Settings.engine (default: %(default)s)")
    ap.add_argument("--verbose", action="store_true", help="Settings.verbose: progress lines on stderr")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-write", action="store_true")
    return ap.parse_args(argv)


def _warm_up() -> None:
    """Load the PDHG and ALM numba kernels (compiled and cached on first use) so no round times compilation."""
    import numpy as np

    from solver.lp.alm import solve_alm
    from solver.lp.dispatch import solve
    from solver.model.problem import Problem
    from solver.model.settings import Settings

    p = Problem.from_arrays(cost=[-1.0, -1.0], col_lower=[0, 0], col_upper=[1, 1], row_lower=[-np.inf],
                            row_upper=[1.5], matrix=np.array([[1.0, 1.0]]))
    solve(p, Settings(presolve="off"))
    solve_alm(p, Settings())


def _load() -> str:
    return " ".join(f"{v:.2f}" for v in os.getloadavg())


def _row(r: int, res, seconds: float, map_seconds: float, cold_seconds: float, cpu: float) -> dict:
    import numba

    kkt = max(res.primal_residual_rel, res.dual_residual_rel, res.gap_rel)
    return {"round": r, "engine": res.engine, "status": res.status.name, "seconds": round(seconds, 3),
            "cpu_seconds": round(cpu, 3),
            "map_seconds": round(map_seconds, 3), "warm_over_cold": round(seconds / cold_seconds, 4) if r else 1.0,
            "iterations": res.iterations, "objective": res.objective, "kkt_rel": kkt,
            "primal_rel": res.primal_residual_rel, "dual_rel": res.dual_residual_rel, "gap_rel": res.gap_rel,
            "warm_started": bool(res.warm_started), "numba_threads": numba.config.NUMBA_NUM_THREADS,
            "loadavg_1_5_15": _load(), "engine_reason": res.engine_reason, "message": res.message}


def _print(row: dict) -> None:
    print(f"round {row['round']}: {row['engine']} {row['status']} {row['seconds']:.1f} s "
          f"(cpu {row['cpu_seconds']:.1f} s, map {row['map_seconds']:.1f} s, warm/cold {row['warm_over_cold']}) it {row['iterations']} "
          f"obj {row['objective']:.9g} kkt {row['kkt_rel']:.2e} threads {row['numba_threads']} "
          f"load {row['loadavg_1_5_15']}\n  reason: {row['engine_reason']}\n  message: {row['message']}",
          flush=True)


def _write(path: Path | None, row: dict, info: dict) -> None:
    if path is None:
        return
    new = not path.exists()
    with open(path, "a", newline="") as f:
        if new:
            for k, v in info.items():
                f.write(f"# {k}: {v}\n")
        w = csv.DictWriter(f, fieldnames=list(row))
        if new:
            w.writeheader()
        w.writerow(row)


def main(argv=None) -> None:
    args = parse(argv)
    info = header(sys.argv if argv is None else ["bench_kdl.py", *argv])
    from solver.api import solve_problem
    from solver.differential import apply_delta, map_state
    from solver.model.settings import Settings

    kw = {"engine": args.engine} | ({} if args.threads is None else {"threads": args.threads}) | ({"verbose": True} if args.verbose else {})
    settings = Settings(**kw)
    info["settings"] = f"Settings() engine {settings.engine} tol {settings.tol} threads {settings.threads}"
    print(f"# {info['settings']}", flush=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = None if args.no_write else RESULTS / f"kdl-{Path(args.topology).stem}-{args.phase}-{stamp}.csv"
    _warm_up()
    if args.phase in ("cold", "all"):
        from bench_te import topology_path

        from examples.te.loader import read_topology
        from solver.workloads.te import TEScenario

        t = time.perf_counter()
        sc = TEScenario(topology=read_topology(topology_path(args.topology)), seed=args.seed)
        p = sc.base()
        print(f"# {args.topology}: {p.n_rows} rows, {p.n_cols} columns, {p.nnz} nonzeros; built in "
              f"{time.perf_counter() - t:.1f} s; load {_load()}", flush=True)
        t, c = time.perf_counter(), time.process_time()
        res = solve_problem(p, settings)
        cold = time.perf_counter() - t
        row = _row(0, res, cold, 0.0, cold, time.process_time() - c)
        _print(row)
        _write(out, row, info)
        Path(args.state).parent.mkdir(parents=True, exist_ok=True)
        with open(args.state, "wb") as f:
            pickle.dump({"scenario": sc, "state": res.state, "cold_seconds": cold, "objective": res.objective,
                         "topology": Path(args.topology).stem}, f, protocol=pickle.HIGHEST_PROTOCOL)
        print(f"# saved {args.state}", flush=True)
        state = res.state
    if args.phase in ("warm", "all"):
        if not Path(args.state).is_file():  # helper-238: a FileNotFoundError traceback
            raise SystemExit(f"error: {args.state} not found: run --phase cold (or all) first, with the same --state")
        with open(args.state, "rb") as f:
            saved = pickle.load(f)
        sc, state, cold = saved["scenario"], saved["state"], saved["cold_seconds"]
        if args.phase == "warm" and out is not None:  # the pickle's topology, not --topology's default Kdl (helper-238)
            out = out.with_name(out.name.replace(f"kdl-{Path(args.topology).stem}-",
                                                 f"kdl-{saved.get('topology', 'unknown')}-", 1))
        p = sc.base()
        print(f"# loaded {args.state}: round-0 cold {cold:.1f} s, {p.n_rows} rows, {p.n_cols} columns, "
              f"{p.nnz} nonzeros; load {_load()}", flush=True)
        for r in range(1, args.rounds + 1):
            q, dinfo = apply_delta(p, sc.next_delta(r, None))
            t = time.perf_counter()
            start = map_state(state, dinfo, q)
            tm = time.perf_counter() - t
            t, c = time.perf_counter(), time.process_time()
            res = solve_problem(q, settings, start)
            row = _row(r, res, time.perf_counter() - t, tm, cold, time.process_time() - c)
            _print(row)
            _write(out, row, info)
            p, state = q, res.state
    if out is not None:
        print(f"# results: {out}")


if __name__ == "__main__":
    main()
