"""Compile every numba kernel a round can reach before the first round is solved (issue #15).

``copter prepare`` (for images built ahead of time) and every command that solves (``init``, ``step``,
``solve``, ``compare``, ``demo``) call
:func:`prepare`, so a later round never compiles: numba compiles each ``@njit(cache=True)`` kernel on its
first call for each argument-type signature (tens of seconds per kernel family on the 2-core machine) and
writes the machine code to its on-disk cache; every later process only loads it (milliseconds).

Registry: :func:`kernels` walks the ``solver`` and ``formats`` packages, imports each module whose source
uses ``njit`` and collects the numba dispatchers defined in it, so a kernel added anywhere joins the
registry without a hand-kept list. Warm-up: the kernels are compiled by driving the public library over
tiny instances of every path a round takes (:data:`WARM_UP`), so each kernel is compiled for exactly the
argument types (int32/int64 indices, float64, contiguity) real rounds pass it: an MPS base and LP rounds
(TE) cold and warm, with presolve off/on, the ALM engine, the parallel kernels (``threads=2``), a partitioned LP
stream (K = 2: the merged point's bound), an infeasible LP, MILP
rounds with structural deltas (Sia: jobs arrive and leave; LB), a general MILP through the improvement
steps (RENS, dive, HiGHS fallback), and the TE path generator. The delta's matrix kernels are forced on
(``solver.differential.matrix.SMALL_NNZ``: tiny matrices otherwise take their numpy twins) so that a large
round's apply finds them compiled. Arrays a step loads from the checkpoint store are writable (copy-on-write views)
(``formats.checkpoint_arrays.load_array``): numba types a read-only (memory-mapped) array as another
signature, which made real steps compile read-only variants mid-stream. ``tests/test_prepare.py`` checks the
claim in-process (a different and larger set of rounds compiles nothing and adds no kernel signature) and
``tests/test_prepare_cli.py`` through the CLI, one process per command, against a fresh cache.

It also writes the bytecode (``.pyc``) of copter's own modules (:func:`compile_bytecode`): ``pip install .``
does so at install time, but an editable or ``--no-compile`` install under ``PYTHONDONTWRITEBYTECODE=1`` (a
common container setting) never keeps it, and every command then recompiled the ~120 modules a step imports
from source (0.66 s of CPU for all 192 on the 2-core machine).

Where the cache lives: ``$NUMBA_CACHE_DIR`` when set, else ``__pycache__`` beside each kernel's module
(``*.nbi`` index + ``*.nbc`` code), else (read-only install) numba's per-user folder (``~/.cache/numba``).
What invalidates it: a change of the kernel's source file's content (numba 0.68 keys the index on a SHA-256
of the file, mtime and size only decide when to re-hash it, and each entry on a hash of the kernel's bytecode
and closure variables: ``numba.core.caching``; a ``touch`` alone keeps the cache),
another numba/llvmlite or Python version, or another CPU model (the code is compiled for the host CPU).
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

PACKAGES = ("solver", "formats")  #: packages whose modules are searched for kernels
BYTECODE_PACKAGES = ("copter_cli", "solver", "formats")  #: packages whose bytecode prepare writes
#: the crash tests' fault injection (``formats.faults.fault_point``, ``formats.faults.io_fault``): it aims at
#: the command's own round, so the warm-up's scratch rounds run without it (they neither trigger nor count a point)
FAULT_VARIABLES = ("COPTER_FAULT_INJECT", "COPTER_FAULT_ERRNO", "COPTER_FAULT_TRACE")
PROGRESS_MESSAGE = "compiling solver kernels, once per install (up to a minute or two on 2 cores) ..."
SCRATCH_WHAT = "while warming up the solver kernels, before the command's own work"  #: an interrupt's "where"


def kernels() -> dict[str, object]:
    """The registry: every numba dispatcher defined in a module of :data:`PACKAGES`.

    Modules are found with ``pkgutil.walk_packages``; only those whose source text contains ``njit`` are
    imported (importing the baselines or the CLI is not needed to find kernels).
    Returns:
        ``"module.function" -> numba Dispatcher``, sorted by name.
    Raises:
        ImportError: a kernel module cannot be imported.
    """
    from numba.core.dispatcher import Dispatcher

    found: dict[str, object] = {}
    for name in _kernel_modules():
        module = importlib.import_module(name)
        for obj in vars(module).values():  # keyed by the function's own name: an alias is one kernel
            if isinstance(obj, Dispatcher) and getattr(obj.py_func, "__module__", None) == name:
                found[f"{name}.{obj.py_func.__name__}"] = obj
    return dict(sorted(found.items()))


def _kernel_modules() -> list[str]:
    """Names of the modules of :data:`PACKAGES` whose source uses ``njit``."""
    names = []
    for pkg_name in PACKAGES:
        pkg = importlib.import_module(pkg_name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=f"{pkg_name}."):
            spec = importlib.util.find_spec(info.name)
            origin = getattr(spec, "origin", None)
            if origin and origin.endswith(".py") and "njit" in Path(origin).read_text(encoding="utf-8"):
                names.append(info.name)
    return names


def signatures() -> dict[str, int]:
    """Number of compiled (or cache-loaded) signatures of each registered kernel in this process."""
    return {name: len(d.signatures) for name, d in kernels().items()}


def load_cached(skip_parallel: bool = True) -> dict:
    """Load every cached signature of every registered kernel into this process, running none (the
    long-running worker, ``copter_cli.worker_server``, does it once, before it forks a child per command).

    numba loads a kernel from its cache on the first call with each argument-type signature (1.1 s for the
    110 signatures of a prepared install, measured). Here each kernel's cache index is read, and each entry
    made for this CPU and for the kernel's current bytecode is loaded with ``Dispatcher.compile(signature)``
    (numba's own cache lookup; only entries that match are asked for, so nothing is compiled).

    Args:
        skip_parallel: leave ``parallel=True`` kernels to load on first use. Loading one from the cache starts
            numba's threading layer (the parfors reload hook calls ``_launch_threads``), and GNU OpenMP, the
            layer numba picks without TBB, is not fork-safe: a forked child is terminated on its first
            parallel loop ("fork() called from a process already using GNU OpenMP").
    Returns:
        {"kernels": registry size, "loaded": signatures loaded, "stale": index entries for another CPU or
        bytecode (not loaded), "skipped": names of the parallel kernels left out, "seconds": wall time,
        "threading_layer_started": whether numba's threading layer is running now, "error": None or why
        the index could not be read}.
    Uses numba's private cache attributes (``_cache._cache_file._load_index``, ``_cache._index_key``, as in
    numba 0.68); where they differ it loads nothing and says so in "error" (kernels then load on first use).
    """
    from numba.np.ufunc import parallel

    t0 = time.perf_counter()
    out = {"kernels": 0, "loaded": 0, "stale": 0, "skipped": [], "error": None}
    registry = kernels()
    out["kernels"] = len(registry)
    for name, disp in registry.items():
        if skip_parallel and disp.targetoptions.get("parallel"):
            out["skipped"].append(name)
            continue
        try:
            cache = disp._cache
            codegen = disp.targetctx.codegen()
            entries = list(cache._cache_file._load_index())
            current = [sig for sig, magic, code in entries
                       if magic == codegen.magic_tuple() and cache._index_key(sig, codegen)[2] == code]
        except (AttributeError, TypeError, ValueError, OSError) as err:
            out["error"] = f"{name}: {type(err).__name__}: {err}"
            break
        out["stale"] += len(entries) - len(current)
        for sig in current:
            disp.compile(sig)
            out["loaded"] += 1
    out["seconds"] = time.perf_counter() - t0
    out["threading_layer_started"] = bool(parallel._is_initialized)
    return out


class _CompileWatch:
    """numba ``numba:compile`` listener: counts compilations and reports the first one to ``progress``."""

    def __init__(self, progress: Callable[[str], None] | None):
        from numba.core import event

        class Listener(event.Listener):
            def on_start(inner, ev):  # noqa: N805 - the outer object keeps the count
                self.count += 1
                if self.count == 1 and self.progress is not None:
                    self.progress(PROGRESS_MESSAGE)

            def on_end(inner, ev):  # noqa: N805
                pass

        self.progress = progress
        self.count = 0
        self.listener = Listener()


def prepare(progress: Callable[[str], None] | None = None, force: bool = True, bytecode: bool = False) -> dict:
    """Compile (or, with a warm cache, load) every kernel a round can reach, by running :data:`WARM_UP`.

    Args:
        progress: called once with :data:`PROGRESS_MESSAGE` when the first kernel actually needs compiling
            (never with a warm cache), e.g. to print it on stderr.
        force: run the warm-up even when the stamp (:func:`is_prepared`) says nothing changed since the last
            one; the commands that solve pass False, so a warm install costs a few stat calls.
        bytecode: also when the stamp is current, bring the bytecode of copter's modules up to date
            (:func:`compile_bytecode`, which a warm-up always runs): ``copter prepare`` passes True, the
            commands that solve do not (a stat of 192 files per command).
    Returns:
        {"seconds": wall time, "skipped": True when the stamp was current (nothing run), "compiled": number
        of numba compilations (0 = the cache was warm), "kernels": size of the registry, "reached":
        registered kernels with a signature in this process, "stamp": the stamp file or None}.
    Raises:
        CopterError: a warm-up step failed (a bug: the instances are fixed and tiny).
    """
    t0 = time.perf_counter()
    if not force and is_prepared():
        if bytecode:
            compile_bytecode()
        return {"seconds": time.perf_counter() - t0, "skipped": True, "compiled": 0, "kernels": None,
                "reached": None, "stamp": str(stamp_path())}
    from formats import undo

    with undo.scratch(SCRATCH_WHAT), _without_fault_injection():  # scratch rounds: not the user's
        registry, count = _warm_up(progress)
    stamp = _write_stamp(registry)
    compile_bytecode()
    return {"seconds": time.perf_counter() - t0, "skipped": False, "compiled": count,
            "kernels": len(registry), "reached": sum(1 for d in registry.values() if d.signatures),
            "stamp": None if stamp is None else str(stamp)}


def compile_bytecode(folders: list[Path] | None = None) -> bool:
    """Write the ``.pyc`` of every module under ``folders`` (default: the folders of :data:`BYTECODE_PACKAGES`)
    where it is missing or stale, whatever ``PYTHONDONTWRITEBYTECODE`` says (it only stops the writes at import:
    the interpreter still reads the files), into ``__pycache__`` or under ``sys.pycache_prefix``. Best effort:
    an install the user cannot write keeps its state (imports compile from source as before).

    Returns:
        True when every module's bytecode is current.
    """
    import compileall
    import importlib.util

    if folders is None:
        folders = []
        for name in BYTECODE_PACKAGES:
            spec = importlib.util.find_spec(name)
            if spec is not None and spec.submodule_search_locations:
                folders.extend(Path(p) for p in spec.submodule_search_locations)
    ok = True
    for folder in folders:
        try:
            ok = bool(compileall.compile_dir(str(folder), quiet=2, workers=1)) and ok
        except OSError:
            ok = False
    return ok


@contextmanager
def _without_fault_injection() -> Iterator[None]:
    """:data:`FAULT_VARIABLES` out of the environment for the block, put back after (a step that had to warm
    up first was killed in a scratch round: ``COPTER_FAULT_INJECT=after_current`` fired there, and a
    ``COPTER_FAULT_ERRNO=ENOSPC@7`` counted the scratch writes)."""
    import os

    saved = {k: os.environ.pop(k) for k in FAULT_VARIABLES if k in os.environ}
    try:
        yield
    finally:
        os.environ.update(saved)


def _warm_up(progress: Callable[[str], None] | None) -> tuple[dict, int]:
    """Import the registry and run :data:`WARM_UP` in a scratch folder; (the registry, compilations)."""
    from numba.core import event

    registry = kernels()
    watch = _CompileWatch(progress)
    from formats import undo
    from solver.differential import matrix

    small, matrix.SMALL_NNZ = matrix.SMALL_NNZ, -1  # tiny instances, but the kernels large rounds take
    try:
        with event.install_listener("numba:compile", watch.listener), \
                undo.temporary_folder("copter-prepare-") as tmp:  # removed when an interrupt ends at once too
            for step in WARM_UP:
                step(Path(tmp))
    finally:
        matrix.SMALL_NNZ = small
    return registry, watch.count


# ------------------------------------------------------------------------------------------------ stamp
# After a warm-up, a small JSON file records what the compiled code depends on: the versions of Python,
# numba and llvmlite, the CPU, every source file of the solver and formats packages (modification time and
# size: stricter than numba's content hash, so a `touch` re-runs the warm-up, which then only loads; over all
# files, since a non-kernel module decides which kernels run with which argument types) and the numba index
# files the warm-up left. While all of it is unchanged the
# cache holds every kernel a round needs, and init/demo skip the warm-up.

STAMP_NAME = "copter-prepared.json"


def stamp_path() -> Path:
    """Where the stamp lives: ``$NUMBA_CACHE_DIR`` when set, else ``solver/__pycache__`` (beside numba's
    cache of the solver's kernels)."""
    import os

    env = os.environ.get("NUMBA_CACHE_DIR")
    if env:
        return Path(env) / STAMP_NAME
    return Path(__file__).resolve().parent / "__pycache__" / STAMP_NAME


def _environment_key() -> dict:
    """Versions, CPU and the (mtime_ns, size) of every .py file under :data:`PACKAGES`."""
    import os
    import platform
    import sys

    root = Path(__file__).resolve().parent.parent
    sources = {}
    for pkg in PACKAGES:
        for dirpath, dirnames, filenames in os.walk(root / pkg):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for f in filenames:
                if f.endswith(".py"):
                    st = os.stat(os.path.join(dirpath, f))
                    sources[os.path.relpath(os.path.join(dirpath, f), root)] = [st.st_mtime_ns, st.st_size]
    return {"python": sys.version, "numba": _dist_version("numba"), "llvmlite": _dist_version("llvmlite"),
            "machine": platform.machine(), "cpu": _cpu_model(), "sources": dict(sorted(sources.items()))}


def _dist_version(name: str) -> str:
    """The installed version of distribution ``name`` (a package of the same name), from its
    ``<name>-<version>.dist-info`` folder beside the package: ``importlib.metadata`` costs 12-24 ms of imports
    (its email parser) in every solving command. Falls back to ``importlib.metadata`` when the folder is not
    there or not alone (an editable or unusual install)."""
    import importlib.util
    import os

    try:
        spec = importlib.util.find_spec(name)
        site = Path(spec.origin).parent.parent if spec is not None and spec.origin else None
        found = [e for e in os.listdir(site) if e.startswith(name + "-") and e.endswith(".dist-info")] if site else []
    except (OSError, ValueError, ImportError):
        found = []
    if len(found) == 1:
        return found[0][len(name) + 1:-len(".dist-info")]
    from importlib.metadata import version

    return version(name)


def _cpu_model() -> str:
    """The CPU model name and flags (``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    import platform

    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor()
    keep = [ln for ln in text.splitlines() if ln.startswith(("model name", "flags"))]
    return "\n".join(keep[:2])


def _index_files(registry: dict) -> dict:
    """numba's index file of each registered kernel that has one: path -> (mtime_ns, size)."""
    import os

    out = {}
    for d in registry.values():
        path = getattr(getattr(getattr(d, "_cache", None), "_cache_file", None), "_index_path", None)
        if path and os.path.exists(path):
            st = os.stat(path)
            out[path] = [st.st_mtime_ns, st.st_size]
    return dict(sorted(out.items()))


def _write_stamp(registry: dict) -> Path | None:
    """Write the stamp atomically; None when its folder is not writable (then every init warms up)."""
    import json
    import os

    path = stamp_path()
    body = {"key": _environment_key(), "index": _index_files(registry)}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(body))
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        return None
    return path


def is_prepared() -> bool:
    """True when the stamp exists and nothing it records changed (no numba import: a few stat calls)."""
    import json
    import os

    try:
        body = json.loads(stamp_path().read_text())
        if body.get("key") != _environment_key() or not body.get("index"):
            return False
        for path, (mtime, size) in body["index"].items():
            st = os.stat(path)
            if [st.st_mtime_ns, st.st_size] != [mtime, size]:
                return False
    except (OSError, ValueError, TypeError, AttributeError):
        return False
    return True


# ---------------------------------------------------------------------------------------------- warm-up


def _stream(scenario, folder: Path, rounds: int, base_name: str, settings=None) -> None:
    """init + ``rounds`` steps of ``scenario`` through files (base as MPS or Parquet, Parquet deltas), with
    ``settings`` (a Settings; None = the defaults)."""
    from formats.io import write_delta, write_problem
    from solver import rounds as rounds_lib

    folder.mkdir()
    base = folder / base_name
    write_problem(scenario.base(), base)
    rounds_lib.init(base, state_dir=folder / "state", settings=settings)
    for r in range(1, rounds + 1):
        path = folder / f"delta_{r:04d}.parquet"
        write_delta(scenario.next_delta(r), path)
        rounds_lib.step(path, state_dir=folder / "state", settings=settings, accept_failed=True)


def _lp_rounds(tmp: Path) -> None:
    """TE LP (its path generator included): MPS base (the MPS number scanner), cold init, warm steps with
    the engine chosen, then pinned to PDHG and to the ALM (each loads its warm state from the store)."""
    from formats.io import write_delta
    from solver import rounds as rounds_lib
    from solver.model.settings import Settings
    from solver.workloads import make_scenario

    sc = make_scenario("te", 6, seed=1)
    _stream(sc, tmp / "te", 2, "base.mps")
    for r, engine in ((3, "pdhg"), (4, "alm"), (5, "alm")):
        path = tmp / "te" / f"delta_{r:04d}.parquet"
        write_delta(sc.next_delta(r), path)
        if r == 5:  # as the next step process does: the factors and coupling rows read back from the state
            forget_process_caches()
        rounds_lib.step(path, state_dir=tmp / "te" / "state", settings=Settings(engine=engine),
                        accept_failed=True)


def forget_process_caches() -> None:
    """Drop what this process keeps between rounds (the last generation read of each state, the ALM's matrix
    scaling and Newton block structure), so that the next round runs as a new ``copter step`` process does: from
    what the state stores (the warm-up reaches ``alm_schur.assignment_rows_given`` this way; the rounds of one
    process never do)."""
    from formats import checkpoint
    from solver.lp import alm_scaling, alm_schur

    checkpoint.forget_recent()
    alm_scaling.forget()
    alm_schur.forget()


def _partitioned_rounds(tmp: Path) -> None:
    """A partitioned TE LP stream (K = 2, the parts solved in this process: the part workers load the kernels
    warmed here): round 0 and a warm round, for the merged point's Lagrangian bound
    (``solver.partition.bound_kernels``)."""
    from solver import rounds as rounds_lib
    from solver.workloads import make_scenario

    sc = make_scenario("te", 6, seed=2)
    state = tmp / "te-k2"
    rounds_lib.init(sc.base(), state_dir=state, partition={"k": 2, "executor": "inline"})
    rounds_lib.step(sc.next_delta(1), state_dir=state, accept_failed=True)


def _milp_rounds(tmp: Path) -> None:
    """Sia (choice rows, jobs arriving and leaving: structural deltas) and LB MILP rounds, through the relaxation
    stages (these tiny models would go to HiGHS first: ``Settings.integer_highs_max_nonzeros``)."""
    from solver.model.settings import Settings
    from solver.workloads import make_scenario

    stages = Settings(integer_highs_max_nonzeros=0)
    _stream(make_scenario("sia", 16, seed=1), tmp / "sia", 2, "base.parquet", stages)
    _stream(make_scenario("lb", (12, 4), seed=1), tmp / "lb", 1, "base.parquet", stages)


def _lp_variants(tmp: Path) -> None:
    """LPs cold and warm with presolve off and on (one that HiGHS presolve reduces without solving it), the
    parallel kernels (``threads=2``), power iteration (no Pock-Chambolle scaling) and the ALM engine."""
    from solver.api import solve_problem
    from solver.model.settings import Settings
    from solver.workloads import make_scenario

    lp = make_scenario("te", 5, seed=2).base()
    cold = solve_problem(lp, Settings(presolve="off"))
    solve_problem(lp, Settings(presolve="on"), cold.state)
    solve_problem(lp, Settings(presolve="off"), cold.state)
    solve_problem(lp, Settings(presolve="off", threads=2, parallel_min_nnz=0))
    solve_problem(lp, Settings(presolve="off", pock_chambolle_alpha=None))
    solve_problem(_reducible_lp(), Settings(presolve="on"))
    from solver.lp.alm import solve_alm  # the warm engine (issue #17), cold and warm, whatever dispatch picks

    solve_alm(lp, Settings())
    solve_alm(lp, Settings(), cold.state)
    # its CG path (pcg, hessian_vector): where the coupling rows' dense factor would cost more than CG (a sparse
    # LP with many coupling rows, netlib's 25fv47) or fails; a cold `copter solve --engine alm` compiled it
    from solver.lp.alm import ALMParameters

    solve_alm(lp, Settings(), params=ALMParameters(direct_max=0))


def _reducible_lp():
    """4 x 4 LP with a fixed column and a singleton row: HiGHS presolve removes them, PDHG solves the rest."""
    from solver.model.problem import Problem

    return Problem.from_arrays(
        cost=[-1.0, -2.0, -1.0, -1.5], col_lower=[0.0, 0.0, 1.0, 0.0], col_upper=[4.0, 4.0, 1.0, 4.0],
        row_lower=[-1e30, -1e30, -1e30, 1.0], row_upper=[5.0, 3.0, 7.0, 6.0],
        matrix=[[1.0, 1.0, 1.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 2.0, 1.0], [1.0, 1.0, 0.0, 1.0]],
        name="copter-prepare-reducible")


def _structural_deltas(tmp: Path) -> None:
    """Rounds whose deltas insert and remove matrix entries, add and drop variables and constraints (the
    one-pass CSC merge and the entry lookup)."""
    from solver import rounds as rounds_lib
    from solver.model.delta import Delta

    state = tmp / "structural"
    rounds_lib.init(_reducible_lp(), state_dir=state)
    names = _reducible_lp()
    x, r = list(names.col_names), list(names.row_names)
    rounds_lib.step(Delta.concat([
        Delta.vars(["new_x"], cost=[-1.0], upper=[2.0]), Delta.cons(["new_r"], upper=[3.0]),
        Delta.coefs(var=[x[0], "new_x", x[1], x[3]], con=["new_r", r[0], r[2], r[0]], value=[1.0, 1.0, 0.0, 0.5]),
    ], base_round=0), state_dir=state, accept_failed=True)
    rounds_lib.step(Delta.concat([Delta.drop_vars(["new_x"]), Delta.drop_cons([r[1]]),
                                  Delta.coefs(var=[x[2]], con=[r[3]], value=[2.0])], base_round=1),
                    state_dir=state, accept_failed=True)


def _infeasible_lp(tmp: Path) -> None:
    """An infeasible LP, with presolve (HiGHS decides) and without (PDHG's infeasibility certificate)."""
    from solver.api import solve_problem
    from solver.model.settings import Settings

    p = _small_problem(row_lower=[3.0, -1e30], row_upper=[1e30, 1.0], integrality=[0, 0])
    solve_problem(p, Settings(presolve="off"))
    solve_problem(p, Settings(presolve="on"))


def _general_milp(tmp: Path) -> None:
    """A general (non-choice-row) MILP through HiGHS first (the default for so small a model), and through
    rounding, RENS, the dive and the HiGHS fallback."""
    from solver.api import solve_problem
    from solver.model.settings import Settings

    p = _small_problem(row_lower=[-1e30, 2.0], row_upper=[3.5, 1e30], integrality=[1, 1])
    solve_problem(p)
    solve_problem(p, Settings(integer_highs_max_nonzeros=0))
    solve_problem(p, Settings(integer_submip_gap=0.0, integer_fallback_gap=0.0, mip_gap_tol=1e-9,
                              integer_highs_max_nonzeros=0))


def _small_problem(row_lower, row_upper, integrality):
    """2 x 2 problem: minimise -x0 - 2 x1 over 0 <= x <= 10 with rows r0 = r1 = x0 + x1 within the bounds."""
    from solver.model.problem import Problem

    return Problem.from_arrays(cost=[-1.0, -2.0], col_lower=[0.0, 0.0], col_upper=[10.0, 10.0],
                               row_lower=row_lower, row_upper=row_upper, matrix=[[1.0, 1.0], [1.0, 1.0]],
                               integrality=[bool(v) for v in integrality], name="copter-prepare")


WARM_UP = (_lp_rounds, _partitioned_rounds, _milp_rounds, _lp_variants, _structural_deltas, _infeasible_lp,
           _general_milp)
"""The warm-up steps, in order; each takes a scratch folder."""
