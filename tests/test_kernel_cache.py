"""``solver.kernel_cache``: copter's kernels load from numba's cache without numba's compiler set-up
(issue #15), give the results they gave when compiled, and other functions keep numba's own loader.

Each phase runs in a new process against a private cache (``NUMBA_CACHE_DIR`` = a temporary folder): the
first compiles ``solver.lp.kernels.spmv_csc`` and a kernel of a module outside copter's packages, the
second loads both from the cache. ``numba.np.arraymath`` is one of the modules numba's context refresh
imports, so its absence after a load shows the refresh was skipped; ``rtsys._library`` is the runtime's
compiled NRT module, deferred until a compilation needs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent

USER_KERNEL = textwrap.dedent('''
    from numba import njit


    @njit(cache=True)
    def twice_sum(x):
        s = 0.0
        for v in x:
            s += 2.0 * v
        return s
''')

PHASE = textwrap.dedent('''
    import json, sys
    import numpy as np
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            func = ev.data["dispatcher"].py_func
            if not func.__module__.startswith("numba"):  # not numba's own helpers (np.ones compiles some)
                compiled.append(func.__name__)

        def on_end(self, ev):
            pass

    from numba import njit
    from numba.core.runtime import rtsys

    from solver.lp import kernels

    def fresh(n):  # compiled in this process (no cache): its code links the runtime's own functions
        return np.ones(n) * 2.0

    cp = np.array([0, 2, 3, 5], dtype=np.int64)
    ci = np.array([0, 2, 1, 0, 2], dtype=np.int32)
    cv = np.array([1.5, -2.0, 0.25, 3.0, 1e-3])
    x = np.array([0.1, -7.0, 2.0])
    out = np.empty(3)
    with event.install_listener("numba:compile", Listener()):
        kernels.spmv_csc(cp, ci, cv, x, out)
        after_copter = "numba.np.arraymath" in sys.modules
        nrt_after_copter = rtsys.__dict__.get("_library") is not None
        import user_kernel
        total = user_kernel.twice_sum(x)
        fresh_total = float(njit(fresh)(4).sum())
    print(json.dumps({"out": out.tolist(), "total": total, "compiled": compiled,
                      "refreshed_after_copter_kernel": after_copter,
                      "refreshed_after_user_kernel": "numba.np.arraymath" in sys.modules,
                      "nrt_compiled_after_copter_kernel": nrt_after_copter, "fresh_total": fresh_total,
                      "nrt_compiled_at_end": rtsys.__dict__.get("_library") is not None}))
''')


def _phase(tmp: Path, cache: Path) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", PHASE], cwd=tmp, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_lean_loader_is_installed_for_the_installed_numba():
    """Importing a kernel module installs it; a second install is a no-op. Fails on a numba version the
    loader was not checked against (then add it to CHECKED_NUMBA after checking numba's Cache)."""
    from numba.core import caching

    from solver import kernel_cache
    from solver.lp import kernels  # noqa: F401 - installs on import

    assert getattr(caching.Cache.load_overload, "copter_lean", False)
    before = caching.Cache.load_overload
    assert kernel_cache.install() is True
    assert caching.Cache.load_overload is before


def test_cached_kernel_loads_without_compiler_setup_and_gives_the_compiled_result(tmp_path):
    """Second process: copter's kernel comes from the cache (no compilation) without numba's context
    refresh and without compiling the runtime's NRT module (``kernel_cache.start_runtime``), and gives
    bitwise the first process's result (and its numpy twin's); the user's kernel also comes from the cache,
    through numba's own loader (which refreshes); a kernel compiled afterwards in the same process gets the
    NRT module compiled then and runs."""
    from solver.lp.kernels_ref import spmv_csc_ref

    (tmp_path / "user_kernel.py").write_text(USER_KERNEL)
    cache = tmp_path / "numba-cache"
    first = _phase(tmp_path, cache)
    assert sorted(first["compiled"]) == ["fresh", "spmv_csc", "twice_sum"]
    second = _phase(tmp_path, cache)
    assert second["compiled"] == ["fresh"]
    assert not second["refreshed_after_copter_kernel"]
    assert not second["nrt_compiled_after_copter_kernel"]
    assert first["fresh_total"] == second["fresh_total"] == 8.0
    assert first["nrt_compiled_at_end"] and second["nrt_compiled_at_end"]
    assert second["refreshed_after_user_kernel"]
    assert second["out"] == first["out"]
    assert second["total"] == first["total"]
    ref = np.empty(3)
    spmv_csc_ref(np.array([0, 2, 3, 5]), np.array([0, 2, 1, 0, 2], dtype=np.int32),
                 np.array([1.5, -2.0, 0.25, 3.0, 1e-3]), np.array([0.1, -7.0, 2.0]), ref)
    assert np.allclose(second["out"], ref, rtol=0, atol=1e-12)


NUMBA_ENV_PHASE = textwrap.dedent('''
    import json, sys
    import numpy as np
    from numba import njit
    from numba.core import event

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            func = ev.data["dispatcher"].py_func
            if not func.__module__.startswith("numba"):
                compiled.append(func.__name__)

        def on_end(self, ev):
            pass

    from solver.lp import kernels

    def norm_of_zeros_plus(v):  # compiled here: np.zeros and np.sum, whose environments the load rebuilt
        w = np.zeros(v.shape[0]) + v
        return np.sqrt(np.sum(w * w))

    rp = np.array([0, 2, 3], dtype=np.int64); ri = np.array([0, 2, 1], dtype=np.int32)
    rv = np.array([1.5, -2.0, 0.25])
    cp = np.array([0, 1, 2, 3], dtype=np.int64); ci = np.array([0, 1, 0], dtype=np.int32)
    cv = np.array([1.5, 0.25, -2.0])
    v = np.array([0.3, -1.0, 2.0])
    with event.install_listener("numba:compile", Listener()):
        est, it = kernels.power_iteration(rp, ri, rv, cp, ci, cv, v.copy(), 50, 1e-12)
        loaded = {m: m in sys.modules for m in ("numba.np.arraymath", "numba.np.arrayobj", "numba.np.linalg")}
        fresh = float(njit(norm_of_zeros_plus)(v))
    print(json.dumps({"est": est, "it": it, "compiled": compiled, "imported_by_the_load": loaded,
                      "fresh": fresh}))
''')


def test_cached_kernel_rebuilds_numba_environments_without_importing_their_modules(tmp_path):
    """``power_iteration`` inlines numba's ``np.zeros`` (``numba.np.arrayobj``) and ``np.sum``
    (``numba.np.arraymath``, which imports ``numba.np.linalg``); its cache entry names their environments.
    Loaded from the cache, the kernel gives the compiled result (and its numpy twin's) without importing
    those modules (``kernel_cache._rebuild_env``: 0.3-0.4 s of CPU per ``copter step`` process), and a
    function compiled afterwards that uses the same implementations compiles and runs."""
    from solver.lp.kernels_ref import power_iteration_ref

    first, second = _two_processes(tmp_path, NUMBA_ENV_PHASE)
    assert {"norm_of_zeros_plus", "power_iteration"} <= set(first["compiled"])  # and spmv_csr, which it calls
    assert second["compiled"] == ["norm_of_zeros_plus"]
    assert second["imported_by_the_load"] == {"numba.np.arraymath": False, "numba.np.arrayobj": False,
                                              "numba.np.linalg": False}
    assert (second["est"], second["it"]) == (first["est"], first["it"])
    v = np.array([0.3, -1.0, 2.0])
    assert second["fresh"] == first["fresh"] == float(np.sqrt(np.sum(v * v)))
    est_ref, it_ref = power_iteration_ref(np.array([0, 2, 3]), np.array([0, 2, 1], dtype=np.int32),
                                          np.array([1.5, -2.0, 0.25]), np.array([0, 1, 2, 3]),
                                          np.array([0, 1, 0], dtype=np.int32), np.array([1.5, 0.25, -2.0]),
                                          v.copy(), 50, 1e-12)
    assert it_ref == second["it"]
    assert np.isclose(est_ref, second["est"], rtol=1e-12, atol=0)


LINKING_PHASE = textwrap.dedent('''
    import json
    import llvmlite.binding as ll
    import numpy as np
    from numba import njit
    from numba.core import event

    compiled, parsed = [], []

    class Listener(event.Listener):
        def on_start(self, ev):
            func = ev.data["dispatcher"].py_func
            if not func.__module__.startswith("numba"):
                compiled.append(func.__name__)

        def on_end(self, ev):
            pass

    numba_parse = ll.parse_bitcode

    def counting_parse(bitcode, *args, **kw):
        parsed.append(len(bitcode))
        return numba_parse(bitcode, *args, **kw)

    ll.parse_bitcode = counting_parse
    from solver.lp import kernels

    def caller(cp, ci, cv, x, out):  # compiled here: it links spmv_csc's library into its own code
        kernels.spmv_csc(cp, ci, cv, x, out)
        return out.sum()

    cp = np.array([0, 2, 3, 5], dtype=np.int64)
    ci = np.array([0, 2, 1, 0, 2], dtype=np.int32)
    cv = np.array([1.5, -2.0, 0.25, 3.0, 1e-3])
    x = np.array([0.1, -7.0, 2.0])
    out = np.empty(3)
    with event.install_listener("numba:compile", Listener()):
        kernels.spmv_csc(cp, ci, cv, x, out)
        parsed_by_the_load = len(parsed)
        library = kernels.spmv_csc.overloads[kernels.spmv_csc.signatures[0]].library
        out2 = np.empty(3)
        total = float(njit(caller)(cp, ci, cv, x, out2))
    linking = library._get_module_for_linking()
    print(json.dumps({"out": out.tolist(), "total": total, "out2": out2.tolist(), "compiled": compiled,
                      "parsed_by_the_load": parsed_by_the_load, "parsed_after_linking": len(parsed),
                      "linking_functions": sum(1 for f in linking.functions if not f.is_declaration)}))
''')


def test_cached_kernel_loads_without_parsing_its_bitcode_and_links_into_new_code(tmp_path):
    """A copter kernel loaded from the cache leaves the LLVM bitcode kept for linking unparsed
    (``kernel_cache._bitcode_parsed_on_demand``: half the CPU of a kernel's first call) and runs; a function
    compiled afterwards that calls it links its library (the bitcode parsed then) and gives the same result."""
    first, second = _two_processes(tmp_path, LINKING_PHASE)
    assert sorted(first["compiled"]) == ["caller", "spmv_csc"]
    assert second["compiled"] == ["caller"]
    assert second["parsed_by_the_load"] == 0
    assert second["parsed_after_linking"] >= 1 and second["linking_functions"] >= 1
    assert second["out"] == second["out2"] == first["out"]
    assert second["total"] == first["total"] == float(np.sum(first["out"]))


def _two_processes(tmp_path, phase: str) -> tuple[dict, dict]:
    """``phase`` run in two fresh interpreters sharing one empty numba cache under ``tmp_path``: the first
    compiles and fills it, the second loads from it; each prints its JSON facts on its last line."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    runs = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", phase], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    return runs[0], runs[1]
