"""``solver.prepare`` (issue #15): the kernel registry, no compilation after prepare, the stamp, and
``--time-limit`` counted from process start.

The no-compilation test runs in a fresh process (kernels compiled by earlier tests in this process would
hide a gap): ``prepare()``, then numba's ``numba:compile`` listener is installed and a set of rounds that
differs from the warm-up (other sizes, seeds, deltas; files through the CLI) must neither compile nor add
a signature to any registered kernel (a signature loaded from the disk cache is not a compilation, but it
would be one on a machine whose cache only holds what prepare compiled).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from solver import prepare as prep

ROOT = Path(__file__).resolve().parent.parent

# the rounds run after prepare(); prints {"compiled": [...], "new_signatures": {...}, "statuses": [...]}
AFTER_PREPARE = r'''
import json, sys, tempfile
from pathlib import Path
from numba.core import event

from solver import prepare as prep
from solver import rounds
from solver.api import solve_problem
from solver.model.delta import Delta
from solver.model.settings import Settings
from solver.workloads import make_scenario
from tests.helpers import infeasible_delta, small_lp
from formats.io import write_delta, write_problem
from copter_cli.app import main

prep.prepare()
registry = prep.kernels()
before = {name: set(d.signatures) for name, d in registry.items()}
compiled = []


class Recorder(event.Listener):
    def on_start(self, ev):
        compiled.append(str(ev.data.get("dispatcher", "?")))

    def on_end(self, ev):
        pass


statuses = []


def cli(*args):
    try:
        main([str(a) for a in args])
    except SystemExit as ex:
        statuses.append((args[0], ex.code))


with event.install_listener("numba:compile", Recorder()), tempfile.TemporaryDirectory() as tmp:
    tmp = Path(tmp)
    # LP through the CLI: Parquet and MPS bases, warm steps, an infeasible round, presolve on/off
    lp = small_lp(n=40, m=15, seed=3)
    write_problem(lp, tmp / "lp.parquet")
    write_problem(lp, tmp / "lp.mps")
    cli("init", tmp / "lp.parquet", "--state", tmp / "s1", "--json")
    write_delta(infeasible_delta(), tmp / "inf.parquet")
    cli("step", tmp / "inf.parquet", "--state", tmp / "s1", "--json")
    cli("init", tmp / "lp.mps", "--state", tmp / "s2", "--presolve", "off", "--json")
    d = Delta.concat([Delta.vars(["extra"], cost=[0.5], upper=[3.0]),
                      Delta.coefs(var=["extra", "x1", "x2"], con=["cap0", "cap1", "cap2"], value=[1.0, 0.0, 2.5])],
                     base_round=0)
    write_delta(d, tmp / "d1.parquet")
    cli("step", tmp / "d1.parquet", "--state", tmp / "s2", "--presolve", "on", "--json")
    cli("solve", tmp / "lp.mps", "--json")
    # TE / Sia / LB streams of other sizes and seeds than the warm-up's
    # (the MILP ones through the relaxation stages: models this small go to HiGHS first by default)
    stages = Settings(integer_highs_max_nonzeros=0)
    for domain, scale, n in (("te", 9, 3), ("sia", 48, 3), ("lb", (24, 6), 2)):
        sc = make_scenario(domain, scale, seed=7)
        st = tmp / domain
        s = None if domain == "te" else stages
        statuses.append((domain, rounds.init(sc.base(), state_dir=st, settings=s)["status"]))
        for r in range(1, n + 1):
            prep.forget_process_caches()  # one process per round: what the state carries (factors, coupling rows)
            statuses.append((domain, rounds.step(sc.next_delta(r), state_dir=st, settings=s,
                                                 accept_failed=True)["status"]))
    # a partitioned LP stream (K = 3, another ring than the warm-up's K = 2)
    sc = make_scenario("te", 8, seed=5)
    statuses.append(("te-k3", rounds.init(sc.base(), state_dir=tmp / "k3",
                                          partition={"k": 3, "executor": "inline"})["status"]))
    statuses.append(("te-k3", rounds.step(sc.next_delta(1), state_dir=tmp / "k3")["status"]))
    # a MILP through the improvement steps (RENS, dive, HiGHS fallback), cold and warm
    sia = make_scenario("sia", 24, seed=11).base()
    tight = Settings(integer_submip_gap=0.0, integer_fallback_gap=0.0, mip_gap_tol=1e-9, integer_highs_max_nonzeros=0)
    res = solve_problem(sia, tight)
    statuses.append(("milp", res.status.name))
    statuses.append(("milp-warm", solve_problem(sia, tight, res.state).status.name))
    # the ALM engine (issue #17) cold and warm on another LP
    from solver.lp.alm import solve_alm

    lp2 = small_lp(n=50, m=20, seed=9)
    statuses.append(("alm", solve_alm(lp2, None, solve_alm(lp2).state).status.name))
    # ... and a sparse LP with many coupling rows, whose Newton directions come from CG (no dense factor)
    import numpy as np, scipy.sparse as sps
    from solver.model.problem import Problem
    rng = np.random.default_rng(3)
    A = sps.random(600, 1200, density=4.0 / 600, random_state=3, format="csc") + sps.eye(600, 1200, format="csc")
    lp3 = Problem.from_arrays(cost=rng.random(1200) + 0.1, col_lower=np.zeros(1200), col_upper=np.ones(1200),
                              row_lower=np.full(600, -np.inf), row_upper=rng.random(600) + 1.0, matrix=A, sense=-1)
    cg = solve_alm(lp3)
    assert " 0 CG iterations" not in cg.message, cg.message  # the CG path was taken
    statuses.append(("alm-cg", cg.status.name))

after = {name: set(d.signatures) for name, d in registry.items()}
new = {name: [str(s) for s in after[name] - before[name]] for name in registry if after[name] - before[name]}
print(json.dumps({"compiled": compiled, "new_signatures": new, "statuses": statuses}))
'''


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_registry_holds_every_njit_kernel_of_the_packages():
    """The module walk finds every ``@njit`` function defined in solver/ and formats/ (counted in the
    source text independently), including the ALM engine's kernels, and nothing else."""
    reg = prep.kernels()
    pattern = re.compile(r"^@(?:numba\.)?njit\b[^\n]*\n(?:@[^\n]*\n)*def (\w+)", re.M)
    expected = set()
    for pkg in prep.PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            expected |= {f"{module}.{name}" for name in pattern.findall(path.read_text())}
    assert expected, "no @njit kernel found in the sources"
    assert set(reg) == expected
    assert {"solver.lp.kernels.run_block", "solver.differential.kernels.merge_csc_kernel",
            "solver.integer.kernels.decide_pass", "formats.mps_numbers.scan_section"} <= set(reg)
    from numba.core.dispatcher import Dispatcher

    assert all(isinstance(d, Dispatcher) for d in reg.values())


@pytest.mark.slow
def test_rounds_after_prepare_compile_nothing():
    """After prepare(), LP (cold/warm, presolve on/off, infeasible, MPS and Parquet, structural delta),
    TE/Sia/LB streams, a MILP through RENS/dive/fallback and the ALM engine (direct and CG) compile no kernel and add no
    signature."""
    proc = subprocess.run([sys.executable, "-c", AFTER_PREPARE], cwd=ROOT, env=_env(), capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["compiled"] == [], out
    assert out["new_signatures"] == {}, out
    # the rounds really ran: every CLI command exited 0 but the infeasible step (a failed round: its code)
    cli_codes = [code for name, code in out["statuses"] if name in ("init", "step", "solve")]
    assert len(cli_codes) == 5 and cli_codes.count(0) == 4, out["statuses"]
    assert len(out["statuses"]) == 5 + 4 + 4 + 3 + 2 + 2 + 1 + 1


REACHED = r'''
import json
from solver.prepare import kernels, prepare

prepare()
print(json.dumps(sorted(name for name, d in kernels().items() if d.signatures)))
'''


def test_prepare_reaches_what_only_a_new_step_process_runs():
    """A step process rebuilds the ALM's block structure from the coupling rows its state carries
    (``alm_schur.assignment_rows_given``), which rounds in one process never do: the warm-up steps once as a new
    process would, or the first carried round of a fresh install compiled the kernel mid-stream (1.4 s, review)."""
    proc = subprocess.run([sys.executable, "-c", REACHED], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "solver.lp.alm_schur.assignment_rows_given" in set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_stamp_records_what_the_cache_depends_on(tmp_path, monkeypatch):
    """is_prepared() holds right after a stamp is written and fails when a recorded fact changes: a
    version, a source file's stat, a numba index file."""
    stamp = tmp_path / "stamp.json"
    monkeypatch.setattr(prep, "stamp_path", lambda: stamp)
    assert not prep.is_prepared()  # no stamp yet
    reg = prep.kernels()
    for d in reg.values():  # make sure at least one index file exists (a call loads or compiles it)
        if d.signatures:
            break
    else:
        from solver.lp.kernels import clip

        clip(1.0, 0.0, 2.0)
    assert prep._write_stamp(reg) == stamp
    assert prep.is_prepared()
    body = json.loads(stamp.read_text())
    assert body["index"], "the stamp records numba index files"
    assert any(k.startswith("solver/lp/") for k in body["key"]["sources"])
    for change in ("numba", "source", "index"):
        changed = json.loads(json.dumps(body))
        if change == "numba":
            changed["key"]["numba"] = "0.0.0"
        elif change == "source":
            first = next(iter(changed["key"]["sources"]))
            changed["key"]["sources"][first][0] += 1
        else:
            first = next(iter(changed["index"]))
            changed["index"][first][1] += 1
        stamp.write_text(json.dumps(changed))
        assert not prep.is_prepared(), change
    stamp.write_text(json.dumps(body))
    assert prep.is_prepared()
    assert prep.prepare(force=False)["skipped"] is True


def test_versions_in_the_stamp_come_from_the_dist_info_folders_without_importlib_metadata(monkeypatch, tmp_path):
    """The stamp's numba/llvmlite versions are read from their ``<name>-<version>.dist-info`` folders (the
    import of importlib.metadata cost 12-24 ms a solving command); the same strings as importlib.metadata, which
    is still the answer when that folder is missing or not alone."""
    from importlib.metadata import version

    for name in ("numba", "llvmlite"):
        assert prep._dist_version(name) == version(name)
    site = tmp_path / "site"
    (site / "numba").mkdir(parents=True)
    (site / "numba" / "__init__.py").write_text("")
    import importlib.util
    from types import SimpleNamespace

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: SimpleNamespace(origin=str(site / name / "__init__.py")))
    assert prep._dist_version("numba") == version("numba")  # no dist-info folder: importlib.metadata
    (site / "numba-9.9.9.dist-info").mkdir()
    assert prep._dist_version("numba") == "9.9.9"
    (site / "numba-9.9.8.dist-info").mkdir()
    assert prep._dist_version("numba") == version("numba")  # two of them: not guessed


def _init_with_time_limit(tmp_path, limit: str, env: dict) -> tuple[int, dict, str]:
    from formats.io import write_problem
    from tests.helpers import small_lp

    base = tmp_path / "base.parquet"
    write_problem(small_lp(n=60, m=25, seed=5), base)
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "init", str(base), "--state", str(tmp_path / "st"),
                           "--time-limit", limit, "--json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=3600)
    return proc.returncode, json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def test_time_limit_counts_from_process_start(tmp_path):
    """--time-limit is the wall time of the whole command: a limit shorter than the interpreter's start-up
    and imports leaves the solve nothing, and round 0 reports TIME_LIMIT (exit 4 of the status table),
    instead of solving to optimality as it would if the limit started with the solve."""
    from copter_cli.exit_codes import for_status
    from solver.model.status import Status

    prep.prepare(force=False)
    code, report, _ = _init_with_time_limit(tmp_path, "0.05", _env())
    assert report["status"] == "TIME_LIMIT", report
    assert code == for_status(Status.TIME_LIMIT)
