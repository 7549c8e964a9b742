"""What a cron job pays per command (issue #15): ``copter step`` as one process per round against the same
round in-process (``solver.rounds.step``), and the start-up of the commands that do not solve.

Part 1, per scale (default: Sia 128 GPUs "small" and Sia 1,024 GPUs "medium"): the scenario's base and
``--rounds`` deltas are written to files; three states are initialised from the base; then round by round
the same delta file is applied to state A by ``copter step DELTA --state A --json`` (a new process, default
options, ``COPTER_WORKER=off``; timed from spawn to exit), to state B by ``solver.rounds.step`` in this
process (kernels and modules already loaded; timed around the call), and to state C by the same ``copter
step`` with a long-running worker (``copter worker start`` in a private folder before the rounds, ``copter
worker stop`` after; timed from spawn to exit), rotating which goes first. Printed per round: the three
wall times, the extra seconds of each process over the in-process wall and the ratios, per phase (load,
apply, solve, integerize, save, total from each round's report) the medians of all three, and the median CPU
seconds (user + system) of the CLI process and of the in-process round (``time.process_time``). Target: the CLI
adds <= 0.5 s (imports + numba cache load + state load + save). A round the worker refused (its sources
changed meanwhile: it exits, and is started again before the next round) is marked and left out of the
worker's median.

Part 2: ``copter --help``, ``version``, ``show``, ``history``, ``rollback`` (alternating between the two
newest rounds) and ``export -o x.mps`` on the small state (``COPTER_WORKER=off``), each ``--repeats`` times
in a new process:
min / median / max wall seconds, next to ``python -c pass``, and the median CPU seconds (user + system) of
the process, which a busy machine inflates far less than the wall. Target: < 0.3 s each (export writes MPS
through HiGHS, so it imports numpy, pyarrow and highspy by design). ``--state DIR`` runs Part 2 alone, on a
copy of an existing state with at least two kept rounds (e.g. to compare two checkouts: run this script with
``PYTHONPATH`` set to each).

Before timing, and again before every round, ``solver.prepare.prepare`` makes sure no kernel compiles during
the runs: an edit of any file of ``solver/`` or ``formats/`` meanwhile (another session's, in a shared checkout)
makes the stamp stale, and the next ``copter step`` would run the whole warm-up (12-14 s here) before its
round; the bench runs it instead and marks the round. The in-process rounds use one BLAS thread, as the console
script does (``copter_cli.entry.single_threaded_blas``). No assertions:
this script prints; the structural check that those commands import no numerical stack is
tests/test_startup_imports.py. Usage: ``python bench/bench_startup.py [--rounds 4] [--repeats 5]
[--small 128] [--medium 1024] [--no-medium] [--state DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as `python bench/bench_startup.py` from a checkout
    sys.path.insert(0, str(REPO))

PHASES = ("load", "apply", "solve", "integerize", "save", "total")


def run_this_checkout() -> None:
    """The copter processes import this checkout (``PYTHONPATH``, unless it is set already), as the in-process side
    does: the console script beside this Python imported the installed tree, so a clone or worktree was timed with
    another tree's copter (helper-238, session 59)."""
    import os

    os.environ.setdefault("PYTHONPATH", str(REPO))


def copter_command() -> list[str]:
    """The installed ``copter`` console script beside this Python, else ``python -m copter_cli``."""
    script = Path(sys.executable).parent / "copter"
    return [str(script)] if script.exists() else [sys.executable, "-m", "copter_cli"]


def timed(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[float, subprocess.CompletedProcess]:
    """Wall seconds from spawn to exit of ``cmd`` and its completed process (output captured)."""
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t, proc


def cpu_of(run) -> tuple[float, object]:
    """User + system CPU seconds of the child processes ``run()`` waited for, and its result."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, result


def write_stream(domain: str, scale, rounds: int, folder: Path) -> list[Path]:
    """Base problem and ``rounds`` deltas of a workload scenario as files; returns [base, delta 1, ...]."""
    from formats.io import write_delta, write_problem
    from solver.workloads import make_scenario

    sc = make_scenario(domain, scale, seed=0)
    paths = [folder / "base.parquet"]
    write_problem(sc.base(), paths[0])
    for r in range(1, rounds + 1):
        paths.append(folder / f"delta_{r:04d}.parquet")
        write_delta(sc.next_delta(r), paths[-1])
    return paths


class Worker:
    """A long-running worker (``copter worker start``) in a private folder, for the third column."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="cwb-", dir="/tmp")  # short: a socket path holds 107 bytes
        self.env = dict(os.environ, COPTER_WORKER_DIR=self.folder, COPTER_WORKER_DEBUG="1")
        self.env.pop("COPTER_WORKER", None)
        self.starts = []

    def run(self, *args) -> subprocess.CompletedProcess:
        return subprocess.run([*copter_command(), "worker", *args, "--json"], env=self.env, capture_output=True,
                              text=True)

    def ensure(self) -> None:
        """Running with the current sources (else started again)."""
        status = json.loads(self.run("status").stdout)
        if status["running"] and not status["stale"]:
            return
        proc = self.run("start")
        if proc.returncode != 0:
            raise SystemExit(f"copter worker start failed: {proc.stderr}")
        self.starts.append(json.loads(proc.stdout))

    def stop(self) -> None:
        self.run("stop")
        shutil.rmtree(self.folder, ignore_errors=True)


def pair_rounds(paths: list[Path], folder: Path, worker: Worker) -> list[dict]:
    """Init states A, B and C from the base; apply each delta by the CLI to A, in-process to B and by the
    CLI with the worker to C."""
    from solver import rounds

    a, b, c = folder / "state-cli", folder / "state-inproc", folder / "state-worker"
    for st in (a, b, c):
        rounds.init(paths[0], state_dir=st)
    off = dict(os.environ, COPTER_WORKER="off")
    rows = []
    from solver.prepare import prepare

    for r, delta in enumerate(paths[1:], start=1):
        warmed = not prepare(force=False)["skipped"]  # sources edited meanwhile: the warm-up here, not in a round
        def cli(delta=delta):
            cpu, (wall, proc) = cpu_of(lambda: timed([*copter_command(), "step", str(delta), "--state", str(a),
                                                      "--json"], env=off))
            return wall, json.loads(proc.stdout.strip().splitlines()[-1]), True, cpu

        def inproc(delta=delta):
            t, c = time.perf_counter(), time.process_time()
            rep = rounds.step(delta, state_dir=b)
            return time.perf_counter() - t, rep, True, time.process_time() - c

        def through_worker(delta=delta):
            worker.ensure()
            wall, proc = timed([*copter_command(), "step", str(delta), "--state", str(c), "--json"], env=worker.env)
            return (wall, json.loads(proc.stdout.strip().splitlines()[-1]), "running in the worker" in proc.stderr,
                    None)

        runs = {"cli": cli, "inproc": inproc, "worker": through_worker}
        order = ["cli", "inproc", "worker"]
        order = order[r % 3:] + order[:r % 3]
        got = {name: runs[name]() for name in order}
        rows.append({"round": r, **{f"{k}_wall": v[0] for k, v in got.items()},
                     "cli_cpu": got["cli"][3], "inproc_cpu": got["inproc"][3],
                     **{k: v[1].get("seconds") or {} for k, v in got.items()}, "routed": got["worker"][2],
                     "status": tuple(got[k][1].get("status") for k in ("cli", "inproc", "worker")), "warmed": warmed})
    return rows


def print_pairs(title: str, rows: list[dict]) -> None:
    """Per-round table and the medians per phase."""
    print(f"\n{title}")
    print(f"{'round':>5} {'CLI wall s':>11} {'in-proc s':>10} {'worker s':>9} {'CLI extra s':>12} "
          f"{'worker extra s':>15} {'CLI ratio':>10} {'worker ratio':>13}  status (CLI, in-process, worker)")
    for row in rows:
        i = max(row["inproc_wall"], 1e-9)
        mark = "" if row["routed"] else "  (worker refused: ran in-process, not in the median)"
        mark += "  (stamp stale: the bench ran the warm-up before this round)" if row.get("warmed") else ""
        print(f"{row['round']:>5} {row['cli_wall']:>11.3f} {row['inproc_wall']:>10.3f} {row['worker_wall']:>9.3f} "
              f"{row['cli_wall'] - row['inproc_wall']:>12.3f} {row['worker_wall'] - row['inproc_wall']:>15.3f} "
              f"{row['cli_wall'] / i:>10.2f} {row['worker_wall'] / i:>13.2f}  {row['status']}{mark}")
    routed = [r for r in rows if r["routed"]] or rows
    med = {k: statistics.median(r[k] for r in rows) for k in ("cli_wall", "inproc_wall")}
    med["worker_wall"] = statistics.median(r["worker_wall"] for r in routed)
    extra = statistics.median(r["cli_wall"] - r["inproc_wall"] for r in rows)
    wextra = statistics.median(r["worker_wall"] - r["inproc_wall"] for r in routed)
    i = max(med["inproc_wall"], 1e-9)
    print(f"{'median':>5} {med['cli_wall']:>11.3f} {med['inproc_wall']:>10.3f} {med['worker_wall']:>9.3f} "
          f"{extra:>12.3f} {wextra:>15.3f} {med['cli_wall'] / i:>10.2f} {med['worker_wall'] / i:>13.2f}  "
          "(target: extra <= 0.5 s)")
    print(f"  per phase, median seconds from the reports:  {'phase':<11} {'CLI':>8} {'in-proc':>8} {'worker':>8} "
          f"{'CLI ratio':>10} {'worker ratio':>13}")
    for ph in PHASES:
        c = statistics.median(float(r["cli"].get(ph) or 0.0) for r in rows)
        n = statistics.median(float(r["inproc"].get(ph) or 0.0) for r in rows)
        w = statistics.median(float(r["worker"].get(ph) or 0.0) for r in routed)
        nan = float("nan")
        print(f"  {'':<44}{ph:<11} {c:>8.3f} {n:>8.3f} {w:>8.3f} {c / n if n > 0 else nan:>10.2f} "
              f"{w / n if n > 0 else nan:>13.2f}")
    cpu = {k: statistics.median(r[f"{k}_cpu"] for r in rows) for k in ("cli", "inproc")}
    print(f"  CPU seconds (user + system), median: CLI process {cpu['cli']:.3f}, in-process round "
          f"{cpu['inproc']:.3f}, CLI extra {statistics.median(r['cli_cpu'] - r['inproc_cpu'] for r in rows):.3f} "
          "(a busy machine inflates the wall times far more than these)")
    for name, key in (("CLI", "cli"), ("worker", "worker")):
        use = routed if key == "worker" else rows
        outside = statistics.median(r[f"{key}_wall"] - float(r[key].get("total") or 0.0) for r in use)
        print(f"  {name} process outside the round (interpreter, imports, cache load, printing): median "
              f"{outside:.3f} s")


def startup_table(state: Path, repeats: int, folder: Path) -> None:
    """min / median / max wall seconds of the non-solving commands on ``state``."""
    from solver import rounds

    kept = [r["round"] for r in rounds.history(state) if r.get("kind") == "generation"]
    newest, before = kept[-1], kept[-2] if len(kept) > 1 else kept[-1]
    cop = copter_command()
    commands = [("python -c pass", [sys.executable, "-c", "pass"]), ("--help", [*cop, "--help"]),
                ("version", [*cop, "version"]), ("show", [*cop, "show", "--state", str(state)]),
                ("history", [*cop, "history", "--state", str(state)]),
                ("rollback", None), ("export", [*cop, "export", "--state", str(state), "-o", str(folder / "x.mps")])]
    env = dict(os.environ, COPTER_WORKER="off")
    print(f"\nstart-up of commands that do not solve ({repeats} runs each after one warm-up; target < 0.3 s wall; "
          f"load average {os.getloadavg()[0]:.1f})")
    print(f"{'command':<16} {'min s':>7} {'median s':>9} {'max s':>7} {'CPU s':>7}  exit")
    for name, cmd in commands:
        walls, cpus, codes = [], [], set()
        for i in range(repeats + 1):
            c = cmd or [*cop, "rollback", "--state", str(state), "--to", str(before if i % 2 == 0 else newest)]
            cpu, (wall, proc) = cpu_of(lambda c=c: timed(c, cwd=folder, env=env))
            codes.add(proc.returncode)
            if i:
                walls.append(wall)
                cpus.append(cpu)
        print(f"{name:<16} {min(walls):>7.3f} {statistics.median(walls):>9.3f} {max(walls):>7.3f} "
              f"{statistics.median(cpus):>7.3f}  {sorted(codes)}")


def main() -> None:
    run_this_checkout()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4, help="deltas per scale (default 4)")
    ap.add_argument("--repeats", type=int, default=5, help="runs per start-up command (default 5)")
    ap.add_argument("--small", type=int, default=128, help="Sia GPUs of the small state (default 128)")
    ap.add_argument("--medium", type=int, default=1024, help="Sia GPUs of the medium state (default 1024)")
    ap.add_argument("--no-medium", action="store_true", help="only the small state")
    ap.add_argument("--state", type=Path, help="only Part 2, on a copy of this state (two kept rounds or more)")
    args = ap.parse_args()
    from copter_cli.entry import console_environment

    console_environment()  # the in-process rounds as the console script's (before numpy loads)
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:  # else modules without a .pyc compile in every run
        print("PYTHONDONTWRITEBYTECODE is unset for the commands measured: their first run writes the .pyc files an "
              "installed copter has (with it set and no .pyc, copter's own modules compiled from source in every copter "
              "step process: +0.28 s of CPU, Sia 128, median of 5)")
    if args.state is not None:
        print(f"command: {' '.join(sys.argv)}\ncopter CLI: {' '.join(copter_command())}\npython "
              f"{sys.version.split()[0]}, {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
        with tempfile.TemporaryDirectory(prefix="copter-bench-startup-") as tmp:
            shutil.copytree(args.state, Path(tmp) / "state")  # rollback moves CURRENT: never the given state
            startup_table(Path(tmp) / "state", args.repeats, Path(tmp))
        return
    from solver.prepare import prepare

    print(f"command: {' '.join(sys.argv)}\ncopter CLI: {' '.join(copter_command())}\npython {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}")
    res = prepare(progress=lambda m: print(m, file=sys.stderr), force=False)
    print(f"prepare: {'stamp current, skipped' if res['skipped'] else str(res['compiled']) + ' compilation(s)'} "
          f"({res['seconds']:.2f} s)")
    scales = [("small", args.small)] + ([] if args.no_medium else [("medium", args.medium)])
    worker = Worker()
    with tempfile.TemporaryDirectory(prefix="copter-bench-startup-") as tmp:
        try:
            worker.ensure()
            first = worker.starts[0]
            print(f"worker: started in {first['start_seconds']:.1f} s (imports {first['preload_seconds']:.2f} s, "
                  f"{first['kernels_loaded']} kernel signatures loaded in {first['kernel_load_seconds']:.2f} s)")
            for label, gpus in scales:
                folder = Path(tmp) / label
                folder.mkdir()
                paths = write_stream("sia", gpus, args.rounds, folder)
                rows = pair_rounds(paths, folder, worker)
                print_pairs(f"copter step (one process per round, default options) vs solver.rounds.step in-process "
                            f"vs copter step with a running worker: {label} state, Sia {gpus} GPUs, {args.rounds} "
                            "rounds", rows)
                if label == "small":
                    small_state = folder / "state-cli"
                    startup_dir = Path(tmp) / "startup"
                    startup_dir.mkdir()
                    shutil.copytree(small_state, startup_dir / "state")
            if len(worker.starts) > 1:
                print(f"worker: started {len(worker.starts) - 1} more time(s): copter's sources changed meanwhile")
        finally:
            worker.stop()
        startup_table(startup_dir / "state", args.repeats, startup_dir)


if __name__ == "__main__":
    main()
