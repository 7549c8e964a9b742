"""Where a ``copter step`` process's extra seconds go (issue #15 point 3): the same round cut into its parts.

``bench/bench_startup.py`` measures the whole: a ``copter step`` process against the same round in-process.
This script names the parts. A stream (``--domain sia|te``, ``--scale``; or ``--stream DIR`` with base.parquet
and delta_0001.parquet, e.g. from ``examples/te/generate.py``) gets a state initialised from its base
(``--engine`` stored as init's option); then ``--repeats`` fresh processes each (``--child``):

1. read their own start time (``/proc/self/stat``): the interpreter's start-up before this script runs;
2. import, timed in groups, what a step process imports (the list: one ``python -X importtime -m copter_cli
   step`` run on a copy of the state before the repeats): typer with the CLI app, numpy, numba with llvmlite
   and ``solver.kernel_cache``, pyarrow with compute and Parquet, filelock, highspy, then every other module
   of that list (copter's own and what they import); the collector paused after the CLI app as
   ``copter_cli.solving_stack`` pauses it (frozen, then on again);
3. the prepare check (``copter_cli.cmd_prepare.ensure_prepared``: the stamp, no compilation when current);
4. the round: ``copter step DELTA --state COPY --json`` through ``copter_cli.entry.run_app`` in this process,
   with numba's first call of every kernel timed (``Dispatcher._compile_for_args``: type resolution, the
   cache index and data read, the library's unserialisation, of which LLVM's parse of the kernel's bitcode
   kept for linking is timed alone);
5. the same round again on a fresh copy in the same, now warm, process: what the round costs in-process.

Printed: per part the median wall and CPU seconds (``time.process_time``) over the repeats, the kernels loaded,
and the sum "extra" = parts 1-3 + (round 4 - round 5). A ``copter step`` process also prints its JSON answer and
exits (``copter_cli.process_exit``: milliseconds), not timed here. No assertions. Usage:
``python bench/bench_step_parts.py [--domain sia] [--scale 128] [--engine auto] [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

GROUPS = [("typer + copter_cli.app", ["copter_cli.app"]), ("numpy", ["numpy"]),
          ("numba + llvmlite", ["numba", "solver.kernel_cache"]),
          ("pyarrow (compute, parquet)", ["pyarrow", "pyarrow.compute", "pyarrow.parquet"]),
          ("filelock", ["filelock"]), ("highspy", ["highspy"])]  #: import groups, in this order
ROUND_PHASES = ("load", "apply", "solve", "integerize", "save")


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(a: tuple[float, float]) -> list[float]:
    b = _clock()
    return [b[0] - a[0], b[1] - a[1]]


def _process_age() -> float:
    """Seconds since this process started (Linux: ``/proc/self/stat`` against ``/proc/uptime``)."""
    with open("/proc/self/stat") as f:
        start = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        up = float(f.read().split()[0])
    return up - start / os.sysconf("SC_CLK_TCK")


def child(snapshot: str, delta: str, modules_file: str) -> dict:
    """One fresh process: the parts of a step (see the module docstring); returns them as a dict."""
    out: dict = {"interpreter": [_process_age(), time.process_time()]}
    import gc
    import importlib

    from copter_cli import entry
    from formats import no_pandas

    entry.console_environment()  # as the console script (before numpy loads)

    entry.CONSOLE[0] = True
    entry.install()
    no_pandas.keep_pandas_out()
    entry.skip_numba_extras()
    for i, (name, mods) in enumerate(GROUPS):
        if i == 1:
            gc.disable()  # as copter_cli.solving_stack, after the CLI app
        a = _clock()
        for m in mods:
            importlib.import_module(m)
        out["import " + name] = _since(a)
    a = _clock()
    for m in json.loads(Path(modules_file).read_text()):
        if m not in sys.modules:
            try:
                importlib.import_module(m)
            except Exception:  # noqa: BLE001 - a module only a failing path imports: not part of a round
                pass
    out["import the rest (copter's own modules, ...)"] = _since(a)
    gc.freeze()
    gc.enable()

    import llvmlite.binding as ll
    from numba.core import codegen, dispatcher

    first = {"n": 0, "wall": 0.0, "cpu": 0.0, "parse_cpu": 0.0}
    compile_for_args, parse_bitcode = dispatcher.Dispatcher._compile_for_args, ll.parse_bitcode

    def timed_first_call(self, *args, **kw):
        a = _clock()
        try:
            return compile_for_args(self, *args, **kw)
        finally:
            d = _since(a)
            first["n"] += 1
            first["wall"] += d[0]
            first["cpu"] += d[1]

    def timed_parse(*args, **kw):
        c = time.process_time()
        try:
            return parse_bitcode(*args, **kw)
        finally:
            first["parse_cpu"] += time.process_time() - c

    dispatcher.Dispatcher._compile_for_args = timed_first_call
    codegen.ll.parse_bitcode = timed_parse
    from copter_cli.cmd_prepare import ensure_prepared

    a = _clock()
    out["prepare skipped"] = ensure_prepared()["skipped"]
    out["prepare check"] = _since(a)

    def one(tag: str) -> dict:
        import contextlib
        import io

        st = Path(tempfile.mkdtemp(prefix=f"copter-step-parts-{tag}-"))
        shutil.rmtree(st)
        shutil.copytree(snapshot, st)
        for k in first:
            first[k] = 0 if k == "n" else 0.0
        sys.argv = ["copter", "step", delta, "--state", str(st), "--json"]
        buf = io.StringIO()
        a = _clock()
        with contextlib.redirect_stdout(buf):
            try:
                entry.run_app()
            except SystemExit:
                pass
        took = _since(a)
        shutil.rmtree(st, ignore_errors=True)
        rep = json.loads(buf.getvalue().strip().splitlines()[-1])
        return {"round": took, "kernels": dict(first), "engine": rep.get("engine"),
                "iterations": rep.get("iterations"), "status": rep.get("status"),
                "phases": {k: float((rep.get("seconds") or {}).get(k) or 0.0) for k in ROUND_PHASES}}

    out["cold"] = one("cold")
    out["warm"] = one("warm")
    return out


def module_list(snapshot: Path, delta: Path, folder: Path) -> Path:
    """The modules one ``copter step`` process imports, in import order (``-X importtime``), as a JSON file."""
    st = folder / "importtime-state"
    shutil.copytree(snapshot, st)
    env = dict(os.environ, COPTER_WORKER="off", PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "copter_cli", "step", str(delta), "--state",
                           str(st), "--json"], capture_output=True, text=True, env=env, cwd=folder)
    if proc.returncode != 0:
        raise SystemExit(f"copter step failed: {proc.stderr[-2000:]}")
    names = [ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines()
             if ln.startswith("import time:") and ln.count("|") == 2]
    path = folder / "modules.json"
    path.write_text(json.dumps([n for n in names if n != "package"]))
    return path


def make_stream(args, folder: Path) -> tuple[Path, Path]:
    """A state initialised from the stream's base (``--engine`` stored) and the first delta."""
    from solver import rounds
    from solver.model.settings import Settings

    if args.stream:
        base, delta = args.stream / "base.parquet", args.stream / "delta_0001.parquet"
    else:
        from bench_startup import write_stream

        base, delta = write_stream(args.domain, args.scale, 1, folder)[:2]
    snapshot = folder / "snapshot"
    rounds.init(base, state_dir=snapshot, settings=Settings(engine=args.engine))
    return snapshot, delta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain", default="sia", choices=("sia", "te"), help="workload scenario (default sia)")
    ap.add_argument("--scale", type=int, default=128, help="Sia GPUs or TE ring nodes (default 128)")
    ap.add_argument("--stream", type=Path, help="a folder with base.parquet and delta_0001.parquet instead")
    ap.add_argument("--engine", default="auto", choices=("auto", "pdhg", "alm"),
                    help="init's --engine (default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=5, help="fresh processes (default 5)")
    ap.add_argument("--child", nargs=3, metavar=("SNAPSHOT", "DELTA", "MODULES"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        sys.stdout.flush()
        os._exit(0)  # as the console script: no interpreter teardown
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:  # as bench_startup: an installed copter has .pyc files
        print("PYTHONDONTWRITEBYTECODE is unset for the processes measured")
    from solver.prepare import prepare

    print(f"command: {' '.join(sys.argv)}\npython {sys.version.split()[0]}, {os.cpu_count()} CPUs; load average "
          f"{os.getloadavg()[0]:.1f}")
    prepare(force=False)
    with tempfile.TemporaryDirectory(prefix="copter-step-parts-") as tmp:
        folder = Path(tmp)
        snapshot, delta = make_stream(args, folder)
        modules = module_list(snapshot, delta, folder)
        env = dict(os.environ, COPTER_WORKER="off", PYTHONPATH=str(REPO))
        runs = []
        for _ in range(args.repeats):
            prepare(force=False)  # another edit of solver/ or formats/ meanwhile: warm up here, not in the child
            proc = subprocess.run([sys.executable, __file__, "--child", str(snapshot), str(delta), str(modules)],
                                  capture_output=True, text=True, env=env)
            if proc.returncode != 0:
                raise SystemExit(proc.stderr[-2000:])
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    report(runs, args)


def report(runs: list[dict], args) -> None:
    """The table of medians."""
    med = statistics.median
    src = str(args.stream) if args.stream else f"{args.domain} {args.scale}"
    cold, warm = runs[0]["cold"], runs[0]["warm"]
    print(f"\n{src}, engine {args.engine} (ran: {cold['engine']}, {cold['iterations']} iterations, {cold['status']}; "
          f"warm re-run {warm['engine']}, {warm['iterations']}); medians of {len(runs)} fresh processes"
          + ("" if all(r["prepare skipped"] for r in runs) else "; a prepare check ran the warm-up (stamp stale)"))
    print(f"{'part':<48} {'wall s':>8} {'CPU s':>8}")
    parts = ["interpreter"] + ["import " + g for g, _ in GROUPS] + ["import the rest (copter's own modules, ...)",
                                                                   "prepare check"]
    total = [0.0, 0.0]
    for p in parts:
        w, c = med(r[p][0] for r in runs), med(r[p][1] for r in runs)
        total[0] += w
        total[1] += c
        print(f"{p:<48} {w:>8.3f} {c:>8.3f}")
    for tag, label in (("cold", "the round in the fresh process"), ("warm", "the same round again (in-process)")):
        w, c = med(r[tag]["round"][0] for r in runs), med(r[tag]["round"][1] for r in runs)
        print(f"{label:<48} {w:>8.3f} {c:>8.3f}   phases: " + " ".join(
            f"{k} {med(r[tag]['phases'][k] for r in runs):.3f}" for k in ROUND_PHASES))
    k = [r["cold"]["kernels"] for r in runs]
    print(f"{'  of which kernels first called (n = ' + str(k[0]['n']) + ')':<48} {med(x['wall'] for x in k):>8.3f} "
          f"{med(x['cpu'] for x in k):>8.3f}   (LLVM bitcode parse {med(x['parse_cpu'] for x in k):.3f} s CPU)")
    dw = med(r["cold"]["round"][0] - r["warm"]["round"][0] for r in runs)
    dc = med(r["cold"]["round"][1] - r["warm"]["round"][1] for r in runs)
    print(f"{'  first-round extra (fresh - warm)':<48} {dw:>8.3f} {dc:>8.3f}")
    print(f"{'extra of a step process (parts above + first-round extra)':<48} {total[0] + dw:>8.3f} {total[1] + dc:>8.3f}")


if __name__ == "__main__":
    main()
