"""How fast the share update of partitioned rounds (issue #18) closes the merged point's loss, pass by pass.

    .venv/bin/python bench/bench_share_update.py --topology Cogentco --ks 2,4,8 --passes 8 --rules old,new
    .venv/bin/python bench/bench_share_update.py --ring 48 --ks 4 --passes 8            # no data needed
    .venv/bin/python bench/bench_share_update.py --sia 1024 --ks 4 --passes 4

Round 0 of one scenario (``solver.workloads``), in this process (``inline`` executor, one part after another):
the monolithic optimum (``solver.api.solve_problem``) is the reference; then per K and per rule the round's own
steps (``solver.partition.round``: ``_setup``, the probe's demand split, parts built and solved warm from the
pass before) are repeated ``--passes`` times, the shares moved between passes by the rule
(``solver.partition.shares.update`` with ``rule=``). Per pass: the merged point's loss to the monolithic optimum
``sense * (mono - merged) / max(1, |mono|)`` (> 0 = worse; the merge of the parts' points is feasible on the
whole model since every row's shares sum to 1), the best loss so far (a round keeps its better pass), the
slowest part's seconds, the parts' iterations and the share moved. Pass 0 is the probe's shares (the bench
schedule ``--round0-passes N`` on ASN2k is N of these passes). The loss is a work count, not a time: rules
compare by passes. Results: ``bench/results/share-update-<label>-<UTC>.csv``.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()

from common import RESULTS, header  # noqa: E402


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topology", default=None, help="TE topology (Cogentco, ...; see bench_partitions.py)")
    ap.add_argument("--ring", type=int, default=None, help="TE synthetic ring of this many nodes")
    ap.add_argument("--sia", type=int, default=None, help="Sia cluster of this many GPUs (a MILP)")
    ap.add_argument("--lb", type=int, default=None, help="LB with this many shards (a MILP)")
    ap.add_argument("--ks", default="2,4,8", help="(default: %(default)s)")
    ap.add_argument("--passes", type=int, default=8, help="(default: %(default)s)")
    ap.add_argument("--rules", default="old,new",
                    help="share update rules (comma list): old (the rule before session 18: Rprop price step + half the slack), s18 (session 18's: the price step once the slack's mean move is dry), new (shares.update as a round with passes calls it: also once the merge stalled), stall<x> (new with the stall threshold x), rowdry (always stalled), slack (no price step on capacity rows), mix (price step on rows without slack from the first update), mixflat (mix without step growth)"
                         " (default: %(default)s)")
    ap.add_argument("--tol", type=float, default=1e-4, help="(default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-write", action="store_true")
    return ap.parse_args(argv)


def scenario(args):
    if args.sia is not None:
        from solver.workloads.sia import SiaScenario

        return SiaScenario(total_gpus=args.sia, seed=args.seed), f"sia-{args.sia}"
    if args.lb is not None:
        from solver.workloads.lb import LBScenario

        return LBScenario(shards=args.lb, seed=args.seed), f"lb-{args.lb}"
    from bench_partitions import scenario as te_scenario

    ns = argparse.Namespace(domain="te", topology=args.topology, ring=args.ring, seed=args.seed)
    sc, label = te_scenario(ns)
    return sc, label.replace(str(Path(args.topology or "x").parent) + "/", "").replace(".json", "")


def run_rule(problem, settings, k: int, rule: str, passes: int, ref: float, seed: int) -> list[dict]:
    """Per-pass rows of one K and one rule (module docstring)."""
    import numpy as np

    from solver.partition import shares as sh
    from solver.partition.config import PartitionConfig
    from solver.partition.executor import run_parts
    from solver.partition.improve import cheap_part_settings
    from solver.partition.round import _merged_objective, _part_duals, _probe, _setup
    from solver.partition.split import build_part_problems

    if problem.is_mip:  # as a partitioned round: the MILP parts stop at their first integer point
        settings = cheap_part_settings(settings)
    cfg = PartitionConfig(k=k, executor="inline", passes=passes, seed=seed)
    r = _setup(problem, cfg, None, None, None)
    t = time.perf_counter()
    r.shares, warms, _ = _probe(problem, r.grouping, r.col_part, k, r.present, r.rows_sh, r.spos, r.shares,
                                settings, cfg, None, "inline")
    probe_s = time.perf_counter() - t
    shares, steps, last = r.shares, r.steps, r.last
    rows, best, prev_obj = [], math.inf, math.nan
    for p in range(passes):
        eff = sh.integral_allocations(problem, r.rows_sh, shares)
        parts = build_part_problems(problem, r.grouping, r.col_part, k, eff, name="part")
        idx = [q for q in range(k) if bool((~r.grouping.global_cols[parts[q].cols]).any())]
        t = time.perf_counter()
        outs = run_parts([(parts[q].problem, settings, warms[q]) for q in idx], "inline")
        wall = time.perf_counter() - t
        results = [None] * k
        for q, o in zip(idx, outs, strict=True):
            results[q] = o["result"]
        obj = _merged_objective(problem, r, parts, results, idx)
        loss = problem.sense * (obj - ref) / max(1.0, abs(ref))
        best = min(best, loss)
        duals = _part_duals(parts, [None if x is None else x.y for x in results], r.spos, k, r.ns)
        act = _part_duals(parts, [None if x is None else x.row_activity for x in results], r.spos, k, r.ns)
        gain = sh.gains(problem, r.rows_sh, duals)
        old = shares
        use = sh.usage(problem, r.rows_sh, act)
        if rule == "old":  # the rule before session 18: slack transfer (half kept) and Rprop's price step
            shares, steps, last = sh.update(shares, gain, r.present, steps, last, use, keep_slack=0.5,
                                            price_on_capacity=True)
        elif rule == "new":  # solver.partition.shares.update as a round with passes calls it
            imp = problem.sense * (prev_obj - obj) if math.isfinite(prev_obj) else math.inf
            shares, steps, last = sh.update(shares, gain, r.present, steps, last, use,
                                            stalled=imp <= sh.STALL * max(1.0, abs(obj)))
        elif rule == "s18":  # session 18's rule: the price step waits for the slack transfer's mean move to be dry
            shares, steps, last = sh.update(shares, gain, r.present, steps, last, use)
        elif rule == "slack":  # the slack transfer alone on capacity rows
            shares, steps, last = sh.update(shares, gain, r.present, steps, last, use, price_when_dry=False)
        elif rule.startswith("stall"):  # stall1e-3: as new, the passes' stall threshold given
            imp = problem.sense * (prev_obj - obj) / max(1.0, abs(obj)) if math.isfinite(prev_obj) else math.inf
            shares, steps, last = sh.update(shares, gain, r.present, steps, last, use,
                                            stalled=imp <= float(rule[5:]))
        elif rule == "rowdry":  # the price step on every row without slack moved from the first update (always stalled)
            shares, steps, last = sh.update(shares, gain, r.present, steps, last, use, stalled=True)
        elif rule.startswith("mix"):
            shares, steps, last = sh.update(shares, gain, r.present, steps, last, use, price_on_tight=True,
                                            grow=1.0 if rule == "mixflat" else None)
        else:
            raise SystemExit(f"unknown rule {rule!r}: old, s18, new, slack, mix, mixflat, rowdry, stall<x>")
        rows.append({"k": k, "rule": rule, "pass": p, "loss": loss, "best_loss": best, "objective": obj,
                     "slowest_part_s": max(o["seconds"] for o in outs), "parts_wall_s": wall,
                     "probe_s": probe_s if p == 0 else 0.0,
                     "iterations": sum(int(results[q].iterations) for q in idx),
                     "moved_next": float(np.abs(shares - old).sum() / max(r.ns, 1) / 2.0)})
        print(f"K={k} {rule:7s} pass {p}: loss {100 * loss:7.3f}% best {100 * best:7.3f}%  slowest part "
              f"{rows[-1]['slowest_part_s']:.2f} s  iters {rows[-1]['iterations']}  moved {rows[-1]['moved_next']:.4f}",
              flush=True)
        warms = [None if x is None else x.state for x in results]
        prev_obj = obj
    return rows


def main(argv=None) -> None:
    args = parse(argv)
    header(sys.argv if argv is None else ["bench_share_update.py", *argv])
    from solver.api import solve_problem
    from solver.model.settings import Settings

    sc, label = scenario(args)
    problem = sc.base()
    settings = Settings(tol=args.tol, threads=1)
    t = time.perf_counter()
    mono = solve_problem(problem, settings)
    ref = float((mono.mip or {}).get("lp_bound", mono.objective) if problem.is_mip else mono.objective)
    print(f"# {label}: {problem.n_cols} columns, {problem.n_rows} rows, {problem.nnz} nonzeros; monolithic "
          f"{mono.status.name} {mono.objective:.6g} (reference {ref:.6g}) in {time.perf_counter() - t:.1f} s",
          flush=True)
    rows = []
    for k in [int(x) for x in args.ks.split(",") if x]:
        for rule in [x for x in args.rules.split(",") if x]:
            rows += run_rule(problem, settings, k, rule, args.passes, ref, args.seed)
    if not args.no_write and rows:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"share-update-{label}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.csv"
        with path.open("w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print(f"# results: {path}")


if __name__ == "__main__":
    main()
