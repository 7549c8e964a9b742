"""Helpers shared by several test modules (fixtures stay in ``conftest.py``; no test module imports
another test module).

* Data paths: ``data_dir``, ``require_data``, ``manifest``. The data directory is ``$COPTER_DATA`` if
  set, else ``../shared/data`` relative to the repository root (computed from this file's location, not
  the working directory). ``require_data`` skips with a reason when it is absent, unless
  ``COPTER_REQUIRE_DATA=1`` (set by ``.ci/run``) turns the skip into a failure.
* Problems: ``small_lp`` (a bounded, feasible LP in a state round), ``random_problem`` and the
  hypothesis strategy ``problem_and_delta`` (random problems and valid deltas), ``lp`` (a dense
  hand-made LP), ``infeasible_delta`` (a delta that makes ``small_lp`` infeasible).
* Checks: ``independent_kkt`` / ``assert_certified_optimal`` (relative KKT recomputed from the raw
  arrays), ``assert_exactly_feasible`` (the MILP acceptance rule, docs/DESIGN.md "Integerization"),
  ``highs_solution`` / ``highs_mip_objective`` (HiGHS as the reference), ``snapshot`` (byte-identical
  state directories before and after a refused command).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
import scipy.sparse as sp
from hypothesis import strategies as st

from solver.highs_bridge import new_highs, to_highs_lp
from solver.model.delta import Delta
from solver.model.problem import Problem
from solver.model.status import Status

REPO = Path(__file__).resolve().parents[1]

# ------------------------------------------------------------------------------------------ data paths


def data_dir() -> Path:
    """``$COPTER_DATA`` if set, else ``<repo>/../shared/data``."""
    env = os.environ.get("COPTER_DATA")
    return Path(env) if env else (REPO.parent / "shared" / "data")


def require_data(sub: str = "") -> Path:
    """Return ``data_dir()/sub``; skip (or fail under COPTER_REQUIRE_DATA=1) when it is missing."""
    path = data_dir() / sub
    if not path.exists():
        msg = f"shared test data not found at {path} (set COPTER_DATA)"
        if os.environ.get("COPTER_REQUIRE_DATA") == "1":
            pytest.fail(msg + " and COPTER_REQUIRE_DATA=1", pytrace=False)
        pytest.skip(msg)
    return path


def manifest(sub: str) -> list[dict]:
    """Rows of ``data_dir()/sub/MANIFEST.tsv`` as dicts; [] when the data is absent (tests then skip)."""
    path = data_dir() / sub / "MANIFEST.tsv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


# ------------------------------------------------------------------------------------------ problems


def small_lp(n=30, m=12, seed=0) -> Problem:
    """max sum(c x) s.t. A x <= b, 0 <= x <= 1 (always feasible and bounded)."""
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=0.3, random_state=seed, format="csc") + sp.eye(m, n, format="csc")
    return Problem.from_arrays(cost=rng.random(n) + 0.1, col_lower=np.zeros(n), col_upper=np.ones(n),
                               row_lower=np.full(m, -np.inf), row_upper=rng.random(m) + 1.0, matrix=A,
                               sense=-1, row_names=[f"cap{i}" for i in range(m)],
                               col_names=[f"x{j}" for j in range(n)])


def infeasible_delta() -> Delta:
    """A delta on round 0 of ``small_lp`` that makes it infeasible."""
    # x0 <= 1 by its bounds, and a new row forces x0 >= 5
    return Delta.concat([Delta.cons(["force"], lower=[5.0]), Delta.coefs(var=["x0"], con=["force"], value=[1.0])],
                        base_round=0)


def snapshot(root: Path) -> dict:
    """Every file under root with its bytes (for byte-identical before/after checks)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def client_allocation(n_clients: int = 24, seed: int = 3) -> Problem:
    """An LP with POP's naming convention: clients c{i} with variables c{i}/a, c{i}/b and a demand row each,
    shared capacities cap/a, cap/b (coefficients drawn from ``seed``); maximise weighted use."""
    rng = np.random.default_rng(seed)
    n = 2 * n_clients
    cols = [f"c{i}/{r}" for i in range(n_clients) for r in ("a", "b")]
    rows = [f"c{i}/demand" for i in range(n_clients)] + ["cap/a", "cap/b"]
    r = np.r_[np.repeat(np.arange(n_clients), 2), n_clients + np.arange(n) % 2]
    c = np.r_[np.arange(n), np.arange(n)]
    v = np.r_[np.ones(n), rng.uniform(0.5, 2.0, n)]
    A = sp.csc_array((v, (r, c)), shape=(n_clients + 2, n))
    return Problem.from_arrays(cost=rng.uniform(1.0, 2.0, n), col_lower=np.zeros(n), col_upper=np.full(n, 3.0),
                               row_lower=np.full(n_clients + 2, -np.inf),
                               row_upper=np.r_[rng.uniform(1.0, 4.0, n_clients), 0.6 * n_clients, 0.5 * n_clients],
                               matrix=A, col_names=cols, row_names=rows, sense=-1)


def lp(cost, A, rl, ru, cl, cu, sense=1, offset=0.0):
    """A problem from dense arrays (A as a nested list, m x n)."""
    return Problem.from_arrays(cost=cost, matrix=np.array(A, dtype=float).reshape(len(rl), len(cost)),
                               row_lower=rl, row_upper=ru, col_lower=cl, col_upper=cu, sense=sense,
                               offset=offset)


def random_problem(rng: np.random.Generator, n: int, m: int, density: float = 0.3, prefix: str = "") -> Problem:
    """A random n-column, m-row problem with mixed bounds, integrality, sense and offset."""
    A = sp.random(m, n, density=density, random_state=rng, data_rvs=lambda k: rng.integers(1, 5, k) * 0.5)
    lo = rng.choice([0.0, -1.0, -np.inf], n)
    return Problem.from_arrays(
        cost=rng.normal(size=n).round(2), col_lower=lo, col_upper=np.maximum(lo, 0) + rng.choice([1.0, 3.0, np.inf], n),
        row_lower=rng.choice([-np.inf, 0.0, 1.0], m), row_upper=rng.choice([np.inf, 2.0], m), matrix=A,
        col_names=[f"{prefix}x{j}" for j in range(n)], row_names=[f"{prefix}r{i}" for i in range(m)],
        integrality=rng.random(n) < 0.3, sense=int(rng.choice([1, -1])), offset=float(rng.integers(-3, 3)))


@st.composite
def problem_and_delta(draw):
    """A random problem and a delta on it mixing every kind, in shuffled row order (it may be invalid:
    bounds can cross)."""
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    n, m = draw(st.integers(0, 8)), draw(st.integers(0, 6))
    p = random_problem(rng, n, m)
    cols, rows = list(p.col_names), list(p.row_names)
    drop_v = [c for c in cols if rng.random() < 0.2]
    drop_c = [r for r in rows if rng.random() < 0.2]
    readd_v = [c for c in drop_v if rng.random() < 0.5]
    new_v = [f"nx{k}" for k in range(draw(st.integers(0, 3)))]
    new_c = [f"nr{k}" for k in range(draw(st.integers(0, 3)))]
    upd_v = [c for c in cols if c not in drop_v and rng.random() < 0.3] + readd_v + new_v
    rng.shuffle(upd_v)
    live_v = [c for c in cols if c not in drop_v] + readd_v + new_v
    upd_c = [r for r in rows if r not in drop_c and rng.random() < 0.3] + new_c
    live_c = [r for r in rows if r not in drop_c] + new_c

    def maybe(vals, pnull=0.4):
        return [None if rng.random() < pnull else v for v in vals]

    lo = rng.choice([-2.0, 0.0, -np.inf], len(upd_v))
    parts = ([Delta.drop_cons(drop_c)] if drop_c else []) + ([Delta.drop_vars(drop_v)] if drop_v else [])
    if upd_v:
        parts.append(Delta.vars(upd_v, cost=maybe(rng.normal(size=len(upd_v)).round(1).tolist()),
                                lower=maybe(lo.tolist()), upper=maybe((np.maximum(lo, -2) + 5).tolist()),
                                integer=maybe((rng.random(len(upd_v)) < 0.5).tolist())))
    if upd_c:
        clo = rng.choice([-1.0, -np.inf], len(upd_c))
        parts.append(Delta.cons(upd_c, lower=maybe(clo.tolist()), upper=maybe((np.maximum(clo, -1) + 4).tolist())))
    pairs = {(v, c) for v in live_v for c in live_c if rng.random() < 0.3}
    if pairs:
        pv, pcn = zip(*sorted(pairs), strict=True)
        vals = rng.choice([0.0, 1.0, -2.5, 3.0], len(pv))
        parts.append(Delta.coefs(list(pv), list(pcn), vals))
    order = rng.permutation(sum(len(x) for x in parts)) if parts else []
    d = Delta.concat(parts) if parts else Delta.empty()
    if len(d):
        d = Delta(table=d.table.take(pa.array(order)))
    if rng.random() < 0.3:
        d.sense = -p.sense
    if rng.random() < 0.3:
        d.offset = 1.5
    return p, d


# ------------------------------------------------------------------------------------------ checks


def independent_kkt(p: Problem, x: np.ndarray, y: np.ndarray) -> dict:
    """Relative primal/dual residual and gap of (x, y) recomputed from the problem's raw arrays.

    Reduced costs are r = c - A'y projected onto the signs the column bounds allow (PDLP/cuPDLPx
    definitions, minimisation form; y is in the problem's sense, HiGHS convention).
    """
    A = p.matrix().toarray()
    cm, ym = p.sense * p.cost, p.sense * np.asarray(y)
    ax = A @ x
    lc, uc, lv, uv = p.row_lower, p.row_upper, p.col_lower, p.col_upper
    fin = lambda v: np.where(np.isfinite(v), v, 0.0)  # noqa: E731
    eq = lc == uc
    bnorm = np.sqrt(np.sum(fin(lc) ** 2) + np.sum(fin(np.where(eq, 0.0, uc)) ** 2))
    pres = np.linalg.norm(ax - np.clip(ax, lc, uc)) / (1 + bnorm)
    r = cm - A.T @ ym
    r_ok = np.where(np.isfinite(lv), np.maximum(r, 0), 0) + np.where(np.isfinite(uv), np.minimum(r, 0), 0)
    dres = np.linalg.norm(r - r_ok) / (1 + np.linalg.norm(p.cost))
    pobj = cm @ x + p.sense * p.offset
    dobj = (fin(lc) @ np.maximum(ym, 0) + fin(uc) @ np.minimum(ym, 0) + fin(lv) @ np.maximum(r_ok, 0)
            + fin(uv) @ np.minimum(r_ok, 0) + p.sense * p.offset)
    sign_ok = bool(np.all(ym[~np.isfinite(lc)] <= 0) and np.all(ym[~np.isfinite(uc)] >= 0))
    return {"primal": pres, "dual": dres, "gap": abs(pobj - dobj) / (1 + abs(pobj) + abs(dobj)),
            "in_bounds": bool(np.all(x >= lv) and np.all(x <= uv)), "dual_signs_ok": sign_ok,
            "reduced_cost": p.cost - A.T @ y, "activity": ax}


def assert_certified_optimal(p: Problem, res, tol: float) -> None:
    """OPTIMAL, and the point really satisfies the relative KKT conditions (recomputed here)."""
    assert res.status == Status.OPTIMAL, res.message
    k = independent_kkt(p, res.x, res.y)
    assert k["in_bounds"] and k["dual_signs_ok"]
    assert k["primal"] <= tol * (1 + 1e-9)
    assert k["dual"] <= tol * (1 + 1e-9)
    assert k["gap"] <= 10 * tol  # r here is proj(c - A'y), not the solver's prox-step reduced cost
    np.testing.assert_allclose(res.reduced_cost, k["reduced_cost"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.row_activity, k["activity"], rtol=1e-9, atol=1e-9)
    assert np.isclose(res.objective, p.cost @ res.x + p.offset, rtol=1e-12, atol=1e-12)


def assert_exactly_feasible(p: Problem, x: np.ndarray) -> None:
    """Bounds and integrality with no tolerance; rows to 1e-9 * max(1, |bound|)."""
    x = np.asarray(x, dtype=np.float64)
    assert x.shape == (p.n_cols,)
    assert np.all(np.isfinite(x))
    assert np.all(x >= p.col_lower), "a lower bound is violated"
    assert np.all(x <= p.col_upper), "an upper bound is violated"
    xi = x[p.integrality]
    assert np.all(xi == np.floor(xi)), "an integer column is fractional"
    act = p.matrix() @ x
    fl, fu = np.isfinite(p.row_lower), np.isfinite(p.row_upper)
    assert np.all(act[fl] >= p.row_lower[fl] - 1e-9 * np.maximum(1, np.abs(p.row_lower[fl])))
    assert np.all(act[fu] <= p.row_upper[fu] + 1e-9 * np.maximum(1, np.abs(p.row_upper[fu])))


def highs_solution(p: Problem):
    """HiGHS on the LP relaxation: (model status name, objective, row duals)."""
    h = new_highs()
    h.passModel(to_highs_lp(p, with_names=False, relax=True))
    h.run()
    sol = h.getSolution()
    return (h.getModelStatus().name if hasattr(h.getModelStatus(), "name") else str(h.getModelStatus()),
            h.getInfo().objective_function_value, np.array(sol.row_dual))


def highs_mip_objective(p: Problem, seconds: float = 60.0) -> float:
    """HiGHS MIP's optimal objective (asserts HiGHS proves optimality within ``seconds``)."""
    h = new_highs(time_limit_seconds=seconds)
    h.passModel(to_highs_lp(p, with_names=False))
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    return float(h.getInfo().objective_function_value)


def run_main(capsys, *args) -> tuple[int, str, str]:
    """copter_cli.app.main (the console script's command runner) in-process: (exit code, stdout, stderr)."""
    from copter_cli.app import main

    with pytest.raises(SystemExit) as ex:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return ex.value.code if isinstance(ex.value.code, int) else 0, out, err


def require_ray():
    """Import Ray for a test module, or skip the module with a reason; with ``COPTER_REQUIRE_RAY=1`` (CI
    installs the ``ray`` extra and sets it) a missing Ray is an ImportError instead. Returns the module."""
    try:
        import ray
    except ImportError:
        if os.environ.get("COPTER_REQUIRE_RAY") == "1":
            raise
        pytest.skip("Ray is not installed (pip install '.[ray]'); COPTER_REQUIRE_RAY=1 makes this an error",
                    allow_module_level=True)
    return ray


def te_warm_round(tol: float):
    """A TE ring round for engine tests: (problem of round 1, round 0's state at ``tol`` mapped onto it)."""
    from solver.differential import apply_delta, map_state
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings
    from solver.workloads.te import TEScenario

    sc = TEScenario(nodes=16, seed=1)
    p = sc.base()
    r0 = solve(p, Settings(tol=tol))
    q, info = apply_delta(p, sc.next_delta(1, None))
    return q, map_state(r0.state, info, q)


def te_stream_state(tmp_path: Path, n_rounds: int, seed: int = 1) -> tuple[Path, list[Path]]:
    """A TE ring (6 nodes) state ``tmp_path/st`` with rounds 0..n_rounds stepped from its delta files
    (``tmp_path/d<r>.parquet``, returned in order)."""
    from formats.io import write_delta
    from solver import rounds
    from solver.workloads import make_scenario

    sc = make_scenario("te", 6, seed=seed)
    st_dir = tmp_path / "st"
    rounds.init(sc.base(), st_dir)
    deltas = []
    for r in range(1, n_rounds + 1):
        d = tmp_path / f"d{r}.parquet"
        write_delta(sc.next_delta(r), d)
        deltas.append(d)
        rounds.step(d, st_dir)
    return st_dir, deltas


def runner_error(res) -> dict:
    """The ``error`` object of a typer ``CliRunner`` result's last JSON line on stdout (``--json``), after
    checking that no traceback was printed."""
    import json

    assert "Traceback" not in res.output, res.output
    return json.loads(res.stdout.strip().splitlines()[-1])["error"]


def cli_json(*args) -> tuple[int, str]:
    """``copter ARGS`` in-process (typer's CliRunner): (exit code, stdout)."""
    from typer.testing import CliRunner

    from copter_cli.app import app

    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout


#: (file name, argv with {base}, {st}, {dest}) of every command that writes one output file named by the user
OUTPUT_COMMANDS = [
    ("x.parquet", ["solve", "{base}", "-o", "{dest}"]),
    ("x.mps", ["export", "--state", "{st}", "-o", "{dest}"]),
    ("x.parquet", ["convert", "{base}", "{dest}"]),
    ("x.parquet", ["diff", "{base}", "{base}", "-o", "{dest}"]),
    ("x.html", ["report", "--state", "{st}", "-o", "{dest}"]),
]


def output_command_inputs(tmp_path: Path, command: list) -> tuple[Path, Path]:
    """(state, base file) for one of :data:`OUTPUT_COMMANDS`: a small LP's state and the LP as Parquet; skips
    ``report`` without its extra (matplotlib)."""
    from formats.io import write_problem

    if command[0] == "report":
        pytest.importorskip("matplotlib")
    st, _ = small_lp_state(tmp_path)
    base = tmp_path / "base.parquet"
    write_problem(small_lp(), base)
    return st, base


def small_lp_state(tmp_path: Path, *init_args) -> tuple[Path, Path]:
    """A state made by ``copter init`` of :func:`small_lp` (``init_args`` added), and a one-cost delta file for
    its next round: (state folder, delta path)."""
    from formats.io import write_delta, write_problem

    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    code, out = cli_json("init", tmp_path / "base.parquet", "--state", st, *init_args, "--json")
    assert code == 0, out
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    return st, d


def edit_json(path: Path, fn) -> None:
    """Read the JSON file ``path``, let ``fn`` change the parsed object in place, write it back (a hand edit of
    a state's config.json in the tests of damaged configs)."""
    import json

    body = json.loads(Path(path).read_text())
    fn(body)
    Path(path).write_text(json.dumps(body))


def packing(n: int, m: int, seed: int, tightness: float = 0.25, density: float = 0.6) -> Problem:
    """max c'x, A x <= tightness * (row sums of A), x binary; A (m, n) integers 1..49 at ``density``, c the
    column's mean weight plus 1..29 (correlated: the hard kind)."""
    rng = np.random.default_rng(seed)
    A = rng.integers(1, 50, size=(m, n)).astype(float) * (rng.random((m, n)) < density)
    c = np.round(A.sum(axis=0) / m + rng.integers(1, 30, n))
    return Problem.from_arrays(cost=c, col_lower=np.zeros(n), col_upper=np.ones(n), row_lower=np.full(m, -np.inf),
                               row_upper=np.floor(tightness * A.sum(axis=1)), matrix=sp.csc_array(A),
                               col_names=[f"x{j:03d}" for j in range(n)], row_names=[f"r{i:02d}" for i in range(m)],
                               sense=-1, integrality=np.ones(n, dtype=bool))


def assignment_milp(n_items: int, n_bins: int, seed: int = 0, weight_high: int = 5, cost_high: int = 10,
                    slack: float | None = None, sense: int = 1) -> Problem:
    """Each item in exactly one bin (choice rows, = 1), bin capacities (capacity rows, <= the mean load plus
    ``slack``, default the heaviest item), an integer cost per placement in [1, cost_high); weights in
    [1, weight_high). ``sense`` 1 minimises the cost, -1 maximises it."""
    rng = np.random.default_rng(seed)
    n = n_items * n_bins
    w = rng.integers(1, weight_high, n_items).astype(float)
    a = np.zeros((n_items + n_bins, n))
    for i in range(n_items):
        a[i, i * n_bins:(i + 1) * n_bins] = 1.0
        for b in range(n_bins):
            a[n_items + b, i * n_bins + b] = w[i]
    cap = np.full(n_bins, w.sum() / n_bins + (w.max() if slack is None else slack))
    p = Problem.from_arrays(cost=rng.integers(1, cost_high, n).astype(float), col_lower=np.zeros(n),
                            col_upper=np.ones(n), row_lower=np.r_[np.ones(n_items), np.full(n_bins, -np.inf)],
                            row_upper=np.r_[np.ones(n_items), cap], matrix=a, integrality=np.ones(n, bool))
    return p if sense == 1 else p.replace(sense=sense)


def binary_knapsack(n: int = 20) -> Problem:
    """A 0/1 knapsack of ``n`` items (seed 3), one capacity row at a third of the weights, maximised: a tiny MILP
    that goes to HiGHS first (under ``integer_highs_max_nonzeros``)."""
    rng = np.random.default_rng(3)
    w = rng.integers(5, 30, n).astype(float)
    return Problem.from_arrays(cost=rng.integers(5, 40, n).astype(float), col_lower=np.zeros(n),
                               col_upper=np.ones(n), row_lower=[-np.inf], row_upper=[w.sum() / 3],
                               matrix=w[None, :], integrality=np.ones(n, bool), sense=-1)


def two_jobs() -> Problem:
    """max x1 + x2 s.t. cap: x1 + x2 <= 4, 0 <= x <= 10 (optimum 4)."""
    A = sp.csc_array(np.array([[1.0, 1.0]]))
    return Problem.from_arrays(cost=[1.0, 1.0], col_lower=[0.0, 0.0], col_upper=[10.0, 10.0],
                               row_lower=[-np.inf], row_upper=[4.0], matrix=A, col_names=["j1", "j2"],
                               row_names=["cap"], sense=-1)


def four_client_allocation() -> Problem:
    """4 clients x 2 resources: max weighted use, per-client demand rows, shared capacities."""
    cols = [f"c{i}/{r}" for i in range(4) for r in ("a", "b")]
    rows = [f"c{i}/demand" for i in range(4)] + ["cap/a", "cap/b"]
    r = [i for i in range(4) for _ in range(2)] + [4 + (j % 2) for j in range(8)]
    c = list(range(8)) * 2
    A = sp.csc_array((np.ones(16), (r, c)), shape=(6, 8))
    return Problem.from_arrays(cost=[1.0, 1.2, 1.1, 0.9, 1.3, 1.0, 0.8, 1.4], col_lower=np.zeros(8),
                               col_upper=np.full(8, 3.0), row_lower=np.full(6, -np.inf),
                               row_upper=[2.0, 3.0, 2.5, 1.5, 4.0, 3.0], matrix=A, col_names=cols, row_names=rows,
                               sense=-1)


def kill_own_workers(pids) -> None:
    """SIGKILL each worker server a test started (``pids``) that is still alive, checked by its command line so that
    a reused pid is never killed."""
    import signal

    for pid in pids:
        try:
            alive = b"copter_cli.worker_server" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            alive = False
        if alive:
            os.kill(pid, signal.SIGKILL)


_LOCK_HOLDER = """
import sys, time
from filelock import FileLock
lk = FileLock(sys.argv[1])
lk.acquire()
print("held", flush=True)
time.sleep(float(sys.argv[2]))
print("releasing", flush=True)
lk.release()
"""


def hold_lock(lock: Path, seconds: float):
    """Another process holding the state's lock file ``lock`` for ``seconds`` (a ``subprocess.Popen``; returns once
    it holds it; its stdout says "releasing" right before it lets go). The caller kills and waits for it."""
    import subprocess
    import sys

    p = subprocess.Popen([sys.executable, "-c", _LOCK_HOLDER, str(lock), str(seconds)], stdout=subprocess.PIPE,
                         text=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert p.stdout.readline().strip() == "held"
    return p



ENTRY_PRELUDE = r"""
import sys
sys.argv = ["copter", "version"]
from copter_cli import entry, process_exit, worker_client
worker_client.run_or_return = lambda: None  # no worker, no command: only what main does first
entry.run_app = lambda: None
process_exit.exit_now = lambda code: None  # and main returns here instead of ending the process
entry.main()
"""


def after_console_entry(probe: str, drop_env: tuple[str, ...], extra_env: dict) -> str:
    """Run ``copter_cli.entry.main``'s set-up (no command, no worker) in a new Python process, then ``probe``; the
    last line it printed. ``drop_env``: variables removed from this process's environment first (the user's own
    settings the test replaces with ``extra_env``)."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in drop_env}
    env.update(PYTHONPATH=str(REPO), COPTER_WORKER="off", **extra_env)
    res = subprocess.run([sys.executable, "-c", ENTRY_PRELUDE + probe], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip().splitlines()[-1]


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then closed): an address where no Ray cluster answers, or a free
    port for one to start on."""
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


#: the start of a ``python -c`` script (argv[1]: the checkout) that plays this checkout as a read-only install seen
#: by another user, as root (for whom every folder is writable): numba's in-tree locator refuses the checkout's
#: ``__pycache__`` and copter's read-only locator is told it cannot write there
READ_ONLY_TREE = r'''
import os, sys
repo = os.path.realpath(sys.argv[1])
from numba.core import caching
in_tree = caching.InTreeCacheLocator.ensure_cache_path


def refuse_this_tree(self):  # a root-owned install, seen by another user
    if os.path.realpath(self.get_cache_path()).startswith(repo):
        raise PermissionError(13, "read-only tree (test)", self.get_cache_path())
    return in_tree(self)


caching.InTreeCacheLocator.ensure_cache_path = refuse_this_tree
from solver import kernel_cache_read_only as ro
ro.writable = lambda path: not os.path.realpath(path).startswith(repo)
'''


def options_without_stated_default(paths) -> list[str]:
    """``file:line`` of every argparse ``add_argument`` in the Python files ``paths`` whose default is neither None nor
    False (and that is not a flag) while its help does not say "default" (``%(default)s`` or words): what a
    ``--help`` reader cannot learn without running the script bare (bench scripts, example generators)."""
    import ast

    missing = []
    for path in paths:
        src = Path(path).read_text()
        for node in ast.walk(ast.parse(src)):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            d, act = kw.get("default"), kw.get("action")
            if d is None or (isinstance(d, ast.Constant) and d.value in (None, False)):
                continue
            if isinstance(act, ast.Constant) and act.value in ("store_true", "store_false"):
                continue
            help_src = ast.get_source_segment(src, kw["help"]) if "help" in kw else ""
            if "default" not in help_src.lower():
                missing.append(f"{Path(path).name}:{node.lineno}")
    return missing
