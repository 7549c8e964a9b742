"""``copter show --solution [--changes]`` on a million variables (issue #19): how long the allocation at a
glance takes when a round's solution has ``--n`` variables.

A small state is initialised (a tiny LP); its current generation's ``solution.parquet`` and
``changes.parquet`` are then replaced by synthetic ones of ``--n`` variables named ``jobC/gpuG`` (``--clients``
distinct clients, 60% zeros; 20% of the variables moved, the rest added) carrying the generation's
``copter.round`` (the manifest's file sizes updated). Printed, ``--repeats`` times each: the library call (``solver.rounds.show_solution``, with
and without changes; reading the files included) and the whole command (``python -m copter_cli show
--solution --changes --json`` as a new process, imports included), min / median / max seconds. No
assertions: this script prints. Usage: ``python bench/bench_show_solution.py [--n 1000000]
[--clients 100000] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from formats.checksum import file_crc32  # noqa: E402
from solver import rounds  # noqa: E402
from solver.model.problem import Problem  # noqa: E402
from solver.rounds.outputs import with_round  # noqa: E402


def base_model() -> Problem:
    """A one-row LP for round 0, whose outputs are then replaced by the synthetic tables (not tests.helpers, which
    imports pytest: the script failed at --help on a runtime-only install)."""
    return Problem.from_arrays(cost=np.array([1.0, 2.0]), col_lower=np.zeros(2), col_upper=np.ones(2),
                               row_lower=np.array([-np.inf]), row_upper=np.array([1.0]),
                               matrix=np.array([[1.0, 1.0]]), sense=-1, row_names=["cap"], col_names=["x", "y"])


def synthetic(n: int, clients: int, seed: int = 0) -> tuple[pa.Table, pa.Table]:
    """(solution table, changes table) of ``n`` variables named ``jobC/gpuG``."""
    rng = np.random.default_rng(seed)
    client = rng.integers(0, clients, n).astype(str)
    names = pa.array(np.char.add(np.char.add("job", client), np.char.add("/gpu", (np.arange(n) % 7).astype(str))),
                     type=pa.string())
    value = np.where(rng.random(n) < 0.6, 0.0, rng.random(n))
    sol = pa.table({"name": names, "value": value, "reduced_cost": np.zeros(n)})
    kind = pa.array(np.where(rng.random(n) < 0.2, "value_changed", "var_added"), type=pa.string())
    ch = pa.table({"kind": kind, "name": names, "old_value": pa.array(value[::-1].copy()),
                   "new_value": pa.array(value)})
    return sol, ch


def timed(fn, repeats: int) -> str:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return f"min {min(times):.3f} s  median {statistics.median(times):.3f} s  max {max(times):.3f} s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000, help="(default: %(default)s)")
    ap.add_argument("--clients", type=int, default=100_000, help="(default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=3, help="(default: %(default)s)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        st = Path(tmp) / "st"
        rep = rounds.init(base_model(), state_dir=st)
        gen = st / f"gen-{rep['round']:06d}"
        sol, ch = synthetic(a.n, a.clients)
        manifest = json.loads((gen / "generation.json").read_text())
        for name, table in (("solution.parquet", sol), ("changes.parquet", ch)):
            pq.write_table(with_round(table, rep["round"]), gen / name)
            manifest["files"][name] = (gen / name).stat().st_size  # the store checks sizes and checksums
            manifest["crc32"][name] = file_crc32(gen / name)
        (gen / "generation.json").write_text(json.dumps(manifest))
        res = rounds.show_solution(st, changes=True)
        print(f"{a.n:,} variables, {res['n_nonzero']:,} nonzero, {res['n_clients']:,} client groups, "
              f"{res['changes']['vars_moved']:,} moved")
        print("library, allocation only :", timed(lambda: rounds.show_solution(st), a.repeats))
        print("library, with --changes  :", timed(lambda: rounds.show_solution(st, changes=True), a.repeats))
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        cmd = [sys.executable, "-m", "copter_cli", "show", "--solution", "--changes", "--state", str(st), "--json"]
        print("copter show --solution --changes --json (new process):",
              timed(lambda: subprocess.run(cmd, env=env, check=True, capture_output=True), a.repeats))


if __name__ == "__main__":
    main()
