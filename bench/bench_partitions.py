"""Partitioned continual rounds (issue #18) against the monolithic warm round and POP-K, round by round.

    .venv/bin/python bench/bench_partitions.py te --topology Cogentco --rounds 5 --ks 2,4,8
    .venv/bin/python bench/bench_partitions.py sia --gpus 10240 --rounds 5 --ks 2,4,8
    .venv/bin/python bench/bench_partitions.py te --ring 24 --rounds 3 --ks 2,4        # no data needed

One scenario stream (``solver.workloads``); every round's whole problem is solved by

- ``mono``: copter's monolithic round (``solver.api.solve_problem`` warm-started from the previous round's
  state through ``solver.differential.map_state``; round 0 cold). Its objective is the reference, its
  bound (LP: dual objective; MILP: ``mip.lp_bound``) the monolithic bound;
- ``part-K``: copter's partitioned round (``solver.partition.round.solve_round``), the parts warm from their
  own previous iterates, on the executor given (default: a local process pool of min(K, CPUs) workers kept
  across rounds);
- ``pop-K``: POP (``solver.baselines.registry``'s ``pop-K``: HiGHS per part, fixed shares, cold each round),
  its parts on the same executor as the partitioned rounds (``solver.partition.executor``).

Per round and method: ``wall`` (seconds on this machine), ``k_cores`` (POP's measure, the time on K cores:
setup + slowest part + merge; mono: its wall time), ``gap_mono`` = sense * (mono objective - objective) /
max(1, |mono objective|) (> 0 = worse than the monolithic round), ``gap_bound`` (the same against the
monolithic bound), ``own_gap`` (a partitioned round's gap to its own safe Lagrangian bound; the merged point's when a whole
solve's point was kept, ``fallback.merged_gap_rel``),
``part_rss_mb`` (largest worker peak RSS, the memory per part; the worker's Python + numba baseline
included), ``part_nnz`` (largest part), ``rens_parts`` (MILP: parts that got a RENS step because the merged
point's gap to the whole bound was above ``mip_gap_tol``) and ``gap_before_rens``, ``engines`` (each part's LP
engine). The summary prints, over the warm rounds (>= 1): the median
ratio k_cores(part-K) / wall(mono) (goal <= 0.5 for K = 4) and the worst gap_mono (goal <= 0.5% for
K = 4), next to POP-K's. Results: ``bench/results/partitions-<label>-<UTC>.csv``.

On a 2-core machine the K parts of a round run two at a time: ``k_cores`` is what K cores would take (each
part's own solve time is measured in its worker), ``wall`` is what this machine took. On a loaded machine two
parts running at once slow each other down (and the monolithic round runs alone): ``--workers 1`` runs the
parts one after another so that each part's seconds are its own. Under every part-K row the round's own
(serial) time is broken down by phase (``partitions.seconds.phases``; ``*_in_thread`` phases overlap the parts
and are not on the critical path); the CSV has them as ``ph_*`` columns. numpy's BLAS runs on one thread, as
in the ``copter`` console script.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

from common import RESULTS, add_executor_args, check_executor_arg, header  # noqa: E402


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("domain", choices=("te", "sia"))
    ap.add_argument("--topology", default=None, help="TE: Topology Zoo / Teal name (Cogentco, Kdl, ...) or a path")
    ap.add_argument("--ring", type=int, default=None, help="TE: synthetic ring with chords of this many nodes")
    ap.add_argument("--gpus", type=int, default=1024, help="Sia: cluster size in GPUs (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds after the base round (default: %(default)s)")
    ap.add_argument("--ks", default="2,4,8", help="part counts (comma list) (default: %(default)s)")
    ap.add_argument("--no-pop", action="store_true", help="skip POP-K")
    add_executor_args(ap, "the parts of part-K and pop-K")
    ap.add_argument("--workers", type=int, default=None,
                    help="local worker processes of --executor process (default min(K, CPUs)); 1 measures each part "
                         "alone (its seconds free of the other parts' contention on a loaded machine)")
    ap.add_argument("--passes", type=int, default=1,
                    help="share updates + re-solves within a round (default: %(default)s)")
    ap.add_argument("--round0-passes", type=int, default=None,
                    help="--passes for the base round only (default: --passes): several share updates when the "
                         "split is first made, then --passes in the warm rounds (copter init --partition-passes N, "
                         "then copter step without it)")
    ap.add_argument("--update-every", type=int, default=None,
                    help="move the shares after every round (1), every N-th, never (0) (--share-update-every; "
                         "default: copter's, 0 for an LP above --whole-below-nnz, 1 otherwise)")
    ap.add_argument("--tol", type=float, default=1e-4, help="(default: %(default)s)")
    ap.add_argument("--time-limit", type=float, default=600.0,
                    help="per solve / per POP part, seconds (default: %(default)s)")
    ap.add_argument("--pop-time-limit", type=float, default=None,
                    help="per POP part (HiGHS), seconds (default: --time-limit)")
    ap.add_argument("--no-mono", action="store_true",
                    help="skip the monolithic round (a model too large for it here): gaps to mono are not measured "
                         "and the K-core ratios are printed against nothing")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--trace-shares", default=None, metavar="PREFIX",
                    help="print per share update and merged pass what the rule did (slack moved, dry, price rows, "
                         "gain spread, merged objective) and save the update's inputs to PREFIX-update<i>.npz")
    return ap.parse_args(argv)


def trace_shares(prefix: str) -> None:
    """Wrap ``shares.update`` and ``round._merged_objective`` of this process to report each pass (issue #18: why
    the share update stalls on TE ASN2k). Per update: the mean share per row the slack transfer moved, whether
    it counted as dry (<= ``DRY``), rows the slack moved / rows the price step moved, rows with 2+ priced parts,
    their gains' relative spread (max - min over max, median and 90th percentile), and the inputs as npz."""
    import numpy as np

    from solver.partition import round as rnd
    from solver.partition import shares as sh

    orig_update, orig_merged, n = sh.update, rnd._merged_objective, [0]

    def update(shares, gain, present, steps, last, usage=None, **kw):
        out = orig_update(shares, gain, present, steps, last, usage, **kw)
        g = np.where(present, gain, 0.0)
        slack = shares if usage is None else sh.transfer_slack(shares, g, present, usage, sh.KEEP_SLACK)
        moved_rows = np.abs(slack - shares).sum(axis=0) / 2.0
        total_rows = np.abs(out[0] - shares).sum(axis=0) / 2.0
        price_rows = (total_rows > moved_rows + 1e-12)
        pos = (g > 0) & present
        two = pos.sum(axis=0) >= 2
        gmax = np.where(pos, g, -np.inf).max(axis=0)
        gmin = np.where(pos, g, np.inf).min(axis=0)
        spread = np.where(two, (gmax - gmin) / np.where(two, gmax, 1.0), np.nan)
        sp = spread[two]
        use = np.where(np.isnan(usage), np.nan, usage) if usage is not None else np.full_like(shares, np.nan)
        slack_any = (present & ~pos & (np.nan_to_num(shares - use, nan=0.0) > 0)).any(axis=0)
        ns = max(shares.shape[1], 1)
        print(f"# trace update {n[0]}: ns {shares.shape[1]}  slack moved mean {moved_rows.sum() / ns:.3e} "
              f"(DRY {sh.DRY:.0e}: {'dry' if moved_rows.sum() / ns <= sh.DRY else 'not dry'})  total moved mean "
              f"{total_rows.sum() / ns:.3e}  rows slack-moved {int((moved_rows > 0).sum())}  rows price-moved "
              f"{int(price_rows.sum())}  rows with unpriced slack {int(slack_any.sum())}  rows 0/1/2+ priced "
              f"{int((pos.sum(axis=0) == 0).sum())}/{int((pos.sum(axis=0) == 1).sum())}/{int(two.sum())}  "
              f"spread(2+) median {np.median(sp) if sp.size else math.nan:.3f} p90 "
              f"{np.quantile(sp, 0.9) if sp.size else math.nan:.3f}", flush=True)
        np.savez_compressed(f"{prefix}-update{n[0]}.npz", shares=shares, gain=gain, present=present, steps=steps,
                            last=last, usage=usage if usage is not None else np.empty(0), new=out[0])
        n[0] += 1
        return out

    def merged(problem, r, parts, results, solve_idx):
        obj = orig_merged(problem, r, parts, results, solve_idx)
        print(f"# trace merged objective {obj!r} (the pass before update {n[0]})", flush=True)
        return obj

    sh.update, rnd._merged_objective = update, merged


def scenario(args):
    if args.domain == "sia":
        from solver.workloads.sia import SiaScenario

        sc = SiaScenario(total_gpus=args.gpus, seed=args.seed)
        return sc, f"sia-{args.gpus}"
    from solver.workloads.te import TEScenario

    if args.topology is None:
        return TEScenario(nodes=args.ring or 24, seed=args.seed), f"te-ring{args.ring or 24}"
    from bench_te import topology_label, topology_path

    from examples.te.loader import read_topology

    p = topology_path(args.topology)  # a path, a Topology Zoo or Teal name, or a file name in the data set
    return TEScenario(topology=read_topology(p), seed=args.seed), f"te-{topology_label(args.topology)}"


def _own_gap(rep: dict) -> float | None:
    """The merged point's gap to its own bound: the report's ``gap_rel``, or ``fallback.merged_gap_rel`` when the
    round kept a whole solve's point (the report's is null then)."""
    gap = rep.get("gap_rel")
    return gap if gap is not None else (rep.get("fallback") or {}).get("merged_gap_rel")


def _gap(sense: int, obj: float, ref: float) -> float:
    if obj is None or ref is None or not (math.isfinite(obj) and math.isfinite(ref)):
        return math.nan
    return sense * (obj - ref) / max(1.0, abs(ref))


def main(argv=None) -> None:
    args = parse(argv)
    check_executor_arg(args.executor)
    info = header(sys.argv if argv is None else ["bench_partitions.py", *argv])
    if args.trace_shares:
        trace_shares(args.trace_shares)
    from solver.api import solve_problem
    from solver.baselines import registry
    from solver.differential import apply_delta, map_state
    from solver.model.settings import Settings
    from solver.partition.round import PartitionConfig, pass_name, solve_round
    from solver.partition.small import small_lp

    ks = [int(k) for k in args.ks.split(",") if k]
    settings = Settings(tol=args.tol, time_limit_seconds=args.time_limit)
    sc, label = scenario(args)
    t = time.perf_counter()
    problem = sc.base()
    print(f"# {label}: {problem.n_cols} columns, {problem.n_rows} rows, {problem.nnz} nonzeros, "
          f"{'MILP' if problem.is_mip else 'LP'}; built in {time.perf_counter() - t:.1f} s")
    data = {k: None for k in ks}
    whole = {k: None for k in ks}  # each K's previous round state: a small LP's whole solve starts from it
    mono_state, mono_x, info_, old, last_x = None, None, None, None, None
    rows = []
    csv_path: Path | None = None
    for r in range(args.rounds + 1):
        if r > 0:
            delta = sc.next_delta(r, (problem.col_names, mono_x if mono_x is not None else last_x))
            old = problem
            problem, info_ = apply_delta(problem, delta)
            mono_state = map_state(mono_state, info_, problem) if mono_state is not None else None
        sense = problem.sense
        if args.no_mono:
            ref = mono_bound = math.nan
        else:
            t = time.perf_counter()
            mono = solve_problem(problem, settings, mono_state)
            mono_wall = time.perf_counter() - t
            mono_state, mono_x = mono.state, mono.x
            mono_bound = ((mono.mip or {}).get("lp_bound", mono.dual_objective) if problem.is_mip
                          else mono.dual_objective)
            ref = mono.objective
            rows.append({"round": r, "method": "mono", "status": mono.status.name, "objective": ref,
                         "wall": mono_wall, "k_cores": mono_wall, "gap_mono": 0.0,
                         "gap_bound": _gap(sense, ref, mono_bound), "iterations": mono.iterations})
            csv_path = _record(rows, label, info, csv_path, args.no_write)
        for k in ks:
            passes = args.round0_passes if r == 0 and args.round0_passes is not None else args.passes
            cfg = PartitionConfig(k=k, executor=args.executor, passes=passes, seed=args.seed,
                                  update_every=args.update_every, ray_address=args.ray_address, workers=args.workers)
            t = time.perf_counter()
            warm = (map_state(whole[k], info_, problem)
                    if r > 0 and whole[k] is not None and small_lp(problem, cfg.whole_below_nnz) else None)
            out = solve_round(problem, settings, cfg, data[k], info_ if data[k] is not None else None,
                              (old.n_cols, old.n_rows) if r > 0 and data[k] is not None else None, warm)
            wall = time.perf_counter() - t
            data[k] = out.data
            whole[k] = out.result.state
            rep, res = out.report, out.result
            last_x = res.x
            parts = rep.get("parts", [])
            rows.append({"round": r, "method": f"part-{k}", "status": res.status.name, "objective": res.objective,
                         "wall": wall, "k_cores": rep["seconds"].get("on_k_cores", math.nan),
                         "setup": rep["seconds"].get("setup"), "slowest_part": rep["seconds"].get("slowest_part"),
                         "merge": rep["seconds"].get("merge"),
                         **{f"ph_{n}": v for n, v in rep["seconds"].get("phases", {}).items()},
                         "passes": "/".join(f"{pass_name(x)}:{x['slowest_part_seconds']:.3f}"
                                            for x in rep.get("shares", {}).get("passes", [])),
                         "gap_mono": _gap(sense, res.objective, ref),
                         "gap_bound": _gap(sense, res.objective, mono_bound), "own_gap": _own_gap(rep),
                         "part_rss_mb": max((p["max_rss_mb"] or 0.0) for p in parts) if parts else math.nan,
                         "part_nnz": max(p["nnz"] for p in parts) if parts else 0,
                         "iterations": max((p["iterations"] for p in parts), default=0),
                         "share_moved": rep.get("shares", {}).get("moved_next"),
                         "rens_parts": len((rep.get("improvement") or {}).get("parts", [])),
                         "gap_before_rens": (rep.get("improvement") or {}).get("gap_before"),
                         # each RENS step: part, seconds, HiGHS status (a step at its budget vs one that ended)
                         "rens_steps": "/".join(f"{p['part']}:{p['rens_seconds']:.3f}:{p.get('rens_status', '')}"
                                                for p in parts if p.get("rens_seconds") is not None),
                         "rens_budget": (rep.get("improvement") or {}).get("seconds_budget"),
                         "engines": "/".join(p.get("engine") or "-" for p in parts if p["status"] != "EMPTY")})
            csv_path = _record(rows, label, info, csv_path, args.no_write)
            if not args.no_pop:
                pop_limit = args.time_limit if args.pop_time_limit is None else args.pop_time_limit
                ctx = registry.BaselineContext(round=r, time_limit_seconds=pop_limit, seed=args.seed,
                                               pop_executor=args.executor, ray_address=args.ray_address)
                t = time.perf_counter()
                b = registry.get(f"pop-{k}").run(problem, ctx)
                wall = time.perf_counter() - t
                rows.append({"round": r, "method": f"pop-{k}", "status": b.status.name, "objective": b.objective,
                             "wall": wall, "k_cores": b.extra.get("pop_seconds", math.nan),
                             "gap_mono": _gap(sense, b.objective, ref), "gap_bound": _gap(sense, b.objective, mono_bound)})
                csv_path = _record(rows, label, info, csv_path, args.no_write)
    _summary(rows, ks, not args.no_pop)
    if not args.no_write:
        print(f"# results: {_write(label, rows, info, csv_path)}")


def _fmt(v, spec=".3g") -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return format(v, spec)


def _pct(v, spec: str) -> str:
    """A fraction as a percentage, ``-`` when unknown (a part that hit its time limit proves no bound)."""
    return _fmt(None if v is None else 100 * v, spec)


def _record(rows: list[dict], label: str, info: dict, path: Path | None, no_write: bool) -> Path | None:
    """Print the newest row and rewrite the CSV after every result, so a crash later in a long run (Kdl: an
    hour a round) keeps what was measured. Returns the CSV's path (None with ``--no-write``)."""
    _print_round(rows[-1:])
    return None if no_write else _write(label, rows, info, path)


def _print_round(rows: list[dict]) -> None:
    for x in rows:
        print(f"round {x['round']:>2} {x['method']:>8} {x['status']:>15} obj {_fmt(x['objective'], '.8g'):>14} "
              f"wall {_fmt(x['wall'], '.3f'):>8} s  k-cores {_fmt(x['k_cores'], '.3f'):>8} s  "
              f"gap-mono {_pct(x['gap_mono'], '+.3f'):>8}%  gap-bound {_pct(x['gap_bound'], '+.3f'):>8}%"
              + (f"  own-gap {_pct(x['own_gap'], '.3f')}%  rss {_fmt(x['part_rss_mb'], '.0f')} MB  "
                 f"nnz/part {x['part_nnz']}  rens {x['rens_parts']} parts (gap before "
                 f"{_pct(x['gap_before_rens'], '.3f')}%)  engines {x['engines']}"
                 if x["method"].startswith("part") else ""))
        if x["method"].startswith("part"):
            if x.get("rens_steps"):
                print(f"         rens steps (part:seconds:status) {x['rens_steps']} within "
                      f"{_fmt(x.get('rens_budget'), '.3f')} s")
            print(f"         setup {_fmt(x['setup'], '.3f')} s, slowest part per pass {x['passes']}, merge "
                  f"{_fmt(x['merge'], '.3f')} s; phases: "
                  + ", ".join(f"{k[3:]} {v:.3f}" for k, v in x.items() if k.startswith("ph_")))
    sys.stdout.flush()


def _summary(rows: list[dict], ks: list[int], pop: bool) -> None:
    warm = [x for x in rows if x["round"] >= 1]
    mono = {x["round"]: x for x in warm if x["method"] == "mono"}
    if not mono:
        print("# no monolithic rounds (--no-mono): per K the median time on K cores and wall over the warm rounds")
        for k in ks:
            xs = [x for x in warm if x["method"] == f"part-{k}"]
            if xs:
                print(f"  part-{k}: time on {k} cores {statistics.median(x['k_cores'] for x in xs):.3f} s, wall "
                      f"{statistics.median(x['wall'] for x in xs):.3f} s (medians); own gap worst "
                      f"{_pct(max((x['own_gap'] for x in xs if x['own_gap'] is not None), default=None), '.3f')}%")
        return
    print("# summary over the warm rounds (>= 1): median k_cores / mono wall, worst and last gap to mono")
    for k in ks:
        for m in [f"part-{k}"] + ([f"pop-{k}"] if pop else []):
            xs = [x for x in warm if x["method"] == m]
            if not xs:
                continue
            ratio = statistics.median(x["k_cores"] / mono[x["round"]]["wall"] for x in xs)
            worst = max((x["gap_mono"] for x in xs if x["gap_mono"] is not None), default=None)
            print(f"{m:>8}: time on {k} cores / mono warm round = {ratio:.3f} (median), wall / mono = "
                  f"{statistics.median(x['wall'] / mono[x['round']]['wall'] for x in xs):.3f}; gap to mono worst "
                  f"{_pct(worst, '+.3f')}%, last {_pct(xs[-1]['gap_mono'], '+.3f')}%")


def _write(label: str, rows: list[dict], info: dict, path: Path | None = None) -> Path:
    """Write (or rewrite) the results CSV; returns its path (new and time-stamped when ``path`` is None)."""
    import csv
    from datetime import UTC, datetime

    RESULTS.mkdir(parents=True, exist_ok=True)
    path = path or RESULTS / f"partitions-{label}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}.csv"
    keys = sorted({k for x in rows for k in x}, key=lambda k: (k not in ("round", "method"), k))
    with open(path, "w", newline="") as f:
        for k, v in info.items():
            f.write(f"# {k}: {v}\n")
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    return path


if __name__ == "__main__":
    main()
