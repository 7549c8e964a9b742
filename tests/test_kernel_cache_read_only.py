"""A read-only install that ``copter prepare`` prepared serves every user from its cache (session 58): numba reads
and writes through the first locator that can write, so a service account of a root install compiled every
kernel again into its own home (1 min 37 s in its first ``copter step``, helper-232), or, with no writable home,
had no cache at all. ``solver.kernel_cache_read_only`` reads the prepared ``__pycache__`` while the stamp is
current and writes nothing there.

The process below plays the read-only tree as root (numba's in-tree locator refused for this tree, and
``writable`` saying no), with an empty HOME: every kernel the command loads comes through the read-only locator,
nothing is written in HOME or in the tree, and a kernel compiled for a signature the warm-up never met runs
without being saved. Checked once with a real non-root user on a root-owned install (session 58's note)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.helpers import READ_ONLY_TREE, REPO, small_lp

SCRIPT = READ_ONLY_TREE + r'''
import json
from solver.prepare import is_prepared
assert is_prepared(), "the tree is not prepared (conftest prepares it)"
from copter_cli.app import main
try:
    main(["solve", sys.argv[2], "--json"])
except SystemExit as ex:
    assert not ex.code, ex.code
from solver.prepare import kernels
import numpy as np
from solver.lp.kernels import row_violation_scan
f32 = np.ones(3, dtype=np.float32)
worst, at = row_violation_scan(f32 * 2.5, f32 * 2, f32 * 3, np.zeros(0, dtype=np.float32))  # a signature never prepared
loaded = {}
for name, d in kernels().items():
    impl = getattr(getattr(d, "_cache", None), "_impl", None)
    if impl is not None and d.signatures:
        loaded[name] = type(impl.locator).__name__
print(json.dumps({"loaded": loaded, "worst": float(worst), "at": int(at),
                  "new_signatures": len(row_violation_scan.signatures)}))
'''


def _cache_files(root) -> dict:
    return {os.path.join(d, f): os.stat(os.path.join(d, f)).st_mtime_ns for d, _, fs in os.walk(root)
            for f in fs if f.endswith((".nbi", ".nbc"))}


def test_a_prepared_read_only_tree_serves_its_kernels_and_writes_nothing(tmp_path):
    from formats.io import write_problem

    model = tmp_path / "m.parquet"
    write_problem(small_lp(), model)
    home = tmp_path / "home"
    home.mkdir()
    before = _cache_files(REPO / "solver") | _cache_files(REPO / "formats")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=str(REPO), COPTER_WORKER="off")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(REPO), str(model)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["loaded"] and set(got["loaded"].values()) == {"ReadOnlyPreparedLocator"}, got["loaded"]
    assert (got["worst"], got["at"]) == (0.0, -1) and got["new_signatures"] >= 2, got
    assert not any(home.rglob("*")), sorted(map(str, home.rglob("*")))[:10]
    assert _cache_files(REPO / "solver") | _cache_files(REPO / "formats") == before


def test_each_read_only_locator_serves_only_where_the_stamp_lives(monkeypatch):
    """A stamp read from ``$NUMBA_CACHE_DIR`` says nothing of ``__pycache__``, which then holds no kernels:
    the in-tree locator took them all the same and every command of another user compiled in memory again,
    10-30x slower (helper-234, session 58). Each locator now serves only the place of the stamp."""
    from numba.core import caching, config

    from solver import kernel_cache_read_only as ro
    from solver.lp import kernels

    cache_dir, in_tree = (c for c in caching.CacheImpl._locator_classes if getattr(c, "copter_read_only", False))
    assert issubclass(cache_dir, caching.UserProvidedCacheLocator) and issubclass(in_tree, caching.InTreeCacheLocator)
    func = kernels.row_violation_scan.py_func
    monkeypatch.setattr(ro, "writable", lambda path: False)
    monkeypatch.setattr(ro, "_prepared", lambda: True)
    monkeypatch.setattr(config, "CACHE_DIR", "")
    assert in_tree.from_function(func, kernels.__file__) is not None  # the prepared tree of this checkout
    assert cache_dir.from_function(func, kernels.__file__) is None
    monkeypatch.setattr(config, "CACHE_DIR", "/nonexistent-copter-cache")
    assert in_tree.from_function(func, kernels.__file__) is None
    assert cache_dir.from_function(func, kernels.__file__) is None  # no index there
    monkeypatch.setattr(ro, "_prepared", lambda: False)
    monkeypatch.setattr(config, "CACHE_DIR", "")
    assert in_tree.from_function(func, kernels.__file__) is None  # a stale stamp: numba's own order
