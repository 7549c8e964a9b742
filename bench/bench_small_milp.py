"""Small MILPs through the CLI with DEFAULT options, next to HiGHS in the same run (issue #15: a tiny MILP that
HiGHS solves at once must not take 20-40x longer).

Per model (an MPS file of the shared collection, ``$COPTER_DATA/mps/NAME``, or a workload's base problem,
``sia:64`` / ``lb:64x8``, written to Parquet once), ``--repeats`` times:

- copter: ``copter init MODEL --json`` in a fresh process (``COPTER_WORKER=off``), once per ``--checkout``
  (each run with ``PYTHONPATH`` = that checkout, the order rotating per repeat, so that two versions are
  paired under the same load); ``wall`` is spawn to exit, ``round`` the report's ``seconds.total`` (the
  round inside the process: kernel loads from the cache, model, solve, save);
- HiGHS: MIP on the same problem in this process (``solver.baselines.highs``, one thread, its default
  ``mip_rel_gap`` 1e-4), ``highs`` = its solve time.

``--in-process``: instead, per model in this process (kernels loaded by a first, untimed call of each),
``solve_milp`` with the default ``integer_highs_max_nonzeros`` rule forced on (``first``: the limit set to the
model's nonzeros) and off (``stages``: 0), and HiGHS, alternating; the medians and ratios to HiGHS say on which
sizes HiGHS first beats the relaxation stages (the measurement behind the default limit).

Printed per model and checkout: medians of wall / round / HiGHS, ``x_wall`` = wall / HiGHS and ``x_round`` =
round / HiGHS (> 1 = copter slower), copter's status, proven ``gap_rel``, its objective relative to HiGHS's
(``rel``, > 0 = worse), and the MILP steps of its last run (``steps``: ``highs_direct`` when the model went to
HiGHS first). Run every command under ``nice`` on a shared machine; timings of one run are what count.

Usage::

    python bench/bench_small_milp.py --repeats 3
    python bench/bench_small_milp.py --models egout.mps p0033.mps.gz sia:64 --checkout /tmp/old --checkout .
    python bench/bench_small_milp.py --in-process --models sia:64 sia:128 sia:256 lb:64x8 lb:128x16 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import header  # noqa: E402

MODELS = ("p0033.mps.gz", "lseu.mps", "flugpl.mps", "stein27.mps.gz", "bell5.mps", "egout.mps", "gt2.mps",
          "dcmulti.mps", "misc03.mps.gz", "mod008.mps.gz", "p0201.mps.gz", "sp150x300d.mps", "small_mip.mps")


def copter_command() -> list[str]:
    """The installed ``copter`` console script beside this Python, else ``python -m copter_cli``."""
    script = Path(sys.executable).with_name("copter")
    return [str(script)] if script.exists() else [sys.executable, "-m", "copter_cli"]


def model_file(name: str, tmp: Path) -> Path:
    """The file of model ``name``: ``$COPTER_DATA/mps/NAME`` (default ../shared/data), or ``DOMAIN:SCALE``'s
    base problem (seed 1) written to ``tmp``."""
    if ":" in name:
        from formats.io import write_problem
        from solver.workloads import make_scenario

        domain, scale = name.split(":", 1)
        path = tmp / f"{domain}-{scale}.parquet"
        write_problem(make_scenario(domain, scale, seed=1).base(), path)
        return path
    data = Path(os.environ.get("COPTER_DATA", REPO.parent / "shared" / "data"))
    return data / "mps" / name


def run_init(path: Path, checkout: Path, state: Path) -> tuple[dict, float]:
    """``copter init path --json`` in a fresh process importing ``checkout``; (report or {}, wall seconds)."""
    env = {**os.environ, "COPTER_WORKER": "off", "PYTHONPATH": str(checkout)}
    t = time.perf_counter()
    proc = subprocess.run([*copter_command(), "init", str(path), "--state", str(state), "--json"],
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t
    try:
        rep = json.loads(proc.stdout) if proc.stdout.strip() else {}
    except json.JSONDecodeError:
        rep = {}
    if proc.returncode != 0:
        print(f"#  {path.name} ({checkout}): exit {proc.returncode} {proc.stderr.strip()[-300:]}", flush=True)
    return rep, wall


def _steps(rep: dict) -> str:
    mip = rep.get("mip") or {}
    names = [s.get("step", "?") for s in mip.get("steps", []) if s.get("step") not in ("round", "repair", "fill")]
    return ",".join(dict.fromkeys(names)) + f" ({len(mip.get('relaxation_stages', []))} stages)"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="*", default=list(MODELS),
                    help="MPS names or DOMAIN:SCALE (sia:64). (default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=3, help="(default: %(default)s)")
    ap.add_argument("--checkout", action="append", default=None,
                    help="checkout to run copter from (PYTHONPATH; repeat to pair versions; default: this one).")
    ap.add_argument("--in-process", action="store_true",
                    help="solve_milp with HiGHS first forced on / off and HiGHS, in this process.")
    args = ap.parse_args(argv)
    header(sys.argv if argv is None else ["bench/bench_small_milp.py", *argv])
    if args.in_process:
        return in_process(args.models, args.repeats)
    from formats.io import read_problem
    from solver.baselines.highs import solve_highs

    checkouts = [Path(c).resolve() for c in (args.checkout or [str(REPO)])]
    for c in checkouts:  # kernels compiled for that checkout's sources before any timed run (helper-230: the
        # first run of a fresh checkout compiled them inside its wall time, 36-78 s against 1.1 s)
        env = {**os.environ, "COPTER_WORKER": "off", "PYTHONPATH": str(c)}
        done = subprocess.run([*copter_command(), "prepare"], capture_output=True, text=True, env=env)
        print(f"# copter prepare ({c}): exit {done.returncode}", flush=True)
    cols = ["model", "checkout", "cols", "nnz", "wall", "round", "highs", "x_wall", "x_round", "status", "gap_rel",
            "rel", "steps"]
    print("| " + " | ".join(cols) + " |\n|" + "|".join("---" for _ in cols) + "|", flush=True)
    with tempfile.TemporaryDirectory(prefix="copter-bench-small-") as tmpdir:
        tmp = Path(tmpdir)
        for k, name in enumerate(args.models):
            path = model_file(name, tmp)
            problem = read_problem(path)
            walls = {c: [] for c in checkouts}
            rounds = {c: [] for c in checkouts}
            last: dict = {}
            highs = []
            ref = math.nan
            for r in range(args.repeats):
                order = checkouts[r % len(checkouts):] + checkouts[:r % len(checkouts)]
                for c in order:
                    state = tmp / f"state-{k}-{r}-{checkouts.index(c)}"
                    rep, wall = run_init(path, c, state)
                    walls[c].append(wall)
                    rounds[c].append(float((rep.get("seconds") or {}).get("total", math.nan)))
                    last[c] = rep
                b = solve_highs(problem, solver="mip", threads=1)
                highs.append(b.seconds)
                ref = b.objective
            h = statistics.median(highs)
            for c in checkouts:
                rep = last[c]
                obj = rep.get("objective")
                rel = (problem.sense * (obj - ref) / max(1.0, abs(ref))
                       if obj is not None and math.isfinite(ref) else math.nan)
                w, rd = statistics.median(walls[c]), statistics.median(rounds[c])
                row = [name, c.name, problem.n_cols, problem.nnz, f"{w:.3f}", f"{rd:.3f}", f"{h:.4f}", f"{w / h:.1f}",
                       f"{rd / h:.1f}", rep.get("status", "-"), rep.get("gap_rel", "-"), f"{rel:.2g}", _steps(rep)]
                print("| " + " | ".join(str(v) for v in row) + " |", flush=True)


def in_process(models: list[str], repeats: int) -> None:
    """``--in-process``: solve_milp with HiGHS first on / off and HiGHS MIP, per model, in this process."""
    import dataclasses

    from formats.io import read_problem
    from solver.baselines.highs import solve_highs
    from solver.integer import solve_milp
    from solver.model.settings import Settings

    cols = ["model", "cols", "nnz", "ints", "first_s", "stages_s", "highs_s", "first/highs", "stages/highs",
            "first status gap", "stages status gap", "first rel", "stages rel"]
    print("| " + " | ".join(cols) + " |\n|" + "|".join("---" for _ in cols) + "|", flush=True)
    with tempfile.TemporaryDirectory(prefix="copter-bench-small-") as tmpdir:
        for name in models:
            p = read_problem(model_file(name, Path(tmpdir)))
            modes = {"first": dataclasses.replace(Settings(), integer_highs_max_nonzeros=max(1, p.nnz)),
                     "stages": dataclasses.replace(Settings(), integer_highs_max_nonzeros=0)}
            for s in modes.values():  # load every kernel either path uses before timing
                solve_milp(p, s, None)
            times: dict = {k: [] for k in (*modes, "highs")}
            last: dict = {}
            ref = math.nan
            for r in range(repeats):
                for k in (list(modes) if r % 2 == 0 else list(modes)[::-1]):
                    t = time.perf_counter()
                    last[k] = solve_milp(p, modes[k], None)
                    times[k].append(time.perf_counter() - t)
                b = solve_highs(p, solver="mip", threads=1)
                times["highs"].append(b.seconds)
                ref = b.objective
            med = {k: statistics.median(v) for k, v in times.items()}

            rel = {k: (p.sense * (res.objective - ref) / max(1.0, abs(ref)) if res.point_feasible else math.nan)
                   for k, res in last.items()}
            row = [name, p.n_cols, p.nnz, int(p.integrality.sum()), f"{med['first']:.3f}", f"{med['stages']:.3f}",
                   f"{med['highs']:.3f}", f"{med['first'] / med['highs']:.2f}", f"{med['stages'] / med['highs']:.2f}",
                   f"{last['first'].status.name} {last['first'].gap_rel:.2g}",
                   f"{last['stages'].status.name} {last['stages'].gap_rel:.2g}",
                   f"{rel['first']:.2g}", f"{rel['stages']:.2g}"]
            print("| " + " | ".join(str(v) for v in row) + " |", flush=True)


if __name__ == "__main__":
    main()
