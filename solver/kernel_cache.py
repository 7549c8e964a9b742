"""Load copter's numba kernels from the on-disk cache without setting up numba's compiler (issue #15).

numba's ``Cache.load_overload`` calls ``target_context.refresh()`` before it reads a cached kernel. The
refresh imports and registers every implementation numba can compile (``numba.np.linalg`` and
``arraymath``, which import ``scipy.linalg``; ``numba.typed``; the random and polynomial modules; the
third-party extensions), once per process: the largest single item of a ``copter step`` process (cProfile,
issue #15). Skipping it cut the 15 kernel loads of a Sia 128 round from 1.23 to 0.54 s at load average 7 and
from 1.74 to 0.71 s at 8 (medians of 8 interleaved processes each). Loading machine code needs none of it: a
cached kernel links against numba's runtime (NRT), numba's C helpers and the C math functions. numba
installs the helpers and the math functions when it creates its CPU target; the runtime is started here
(:func:`start_runtime`: ``rtsys.initialize``'s registration of the C helpers, its compiled NRT module
deferred to the first compilation, which is the only code that needs it); a parallel kernel's cache entry
starts the threading layer itself (its ``reload_init``). A compilation is unaffected: numba's compiler
(``CompilerBase.__init__``) refreshes both contexts itself, so a kernel missing from the cache compiles as
before, and every load after that finds the contexts refreshed.

:func:`install` replaces ``numba.core.caching.Cache.load_overload`` by one that skips the refresh for
functions defined in copter's packages (:data:`PACKAGES`) and calls numba's own for every other function,
so a library user's kernels keep numba's behaviour. Every kernel module calls it on import. It installs
nothing for a numba version it was not checked against (:data:`CHECKED_NUMBA`): loads then run as numba
does them, only slower; ``tests/test_kernel_cache.py`` fails on such a version, to have it checked.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

PACKAGES = ("solver.", "formats.")  #: module prefixes of the kernels loaded without the refresh
CHECKED_NUMBA = ((0, 68),)  #: numba (major, minor) versions whose cache loader this was checked against


def install() -> bool:
    """Make copter's kernels load from numba's cache without numba's compiler set-up (idempotent).

    Returns:
        True when the lean loader is in place (now or from an earlier call); False when the installed
        numba is not one of :data:`CHECKED_NUMBA` or lacks the private methods used
        (``Cache._load_overload``, ``Cache._guard_against_spurious_io_errors``), and nothing was changed.
    """
    import numba
    from numba.core import caching

    current = caching.Cache.load_overload
    if getattr(current, "copter_lean", False):
        return True
    version = tuple(int(p) for p in numba.__version__.split(".")[:2] if p.isdigit())
    if version not in CHECKED_NUMBA or not all(
            hasattr(caching.Cache, a) for a in ("_load_overload", "_guard_against_spurious_io_errors")):
        return False
    from solver import kernel_cache_read_only

    kernel_cache_read_only.install()  # a read-only install's prepared cache serves every user

    def load_overload(self, sig, target_context):
        """numba's ``Cache.load_overload`` without ``target_context.refresh()`` for copter's kernels."""
        module = getattr(getattr(self, "_py_func", None), "__module__", None) or ""
        if not module.startswith(PACKAGES):
            return current(self, sig, target_context)
        start_runtime(target_context)  # the runtime cached code links against (a no-op once started)
        with self._guard_against_spurious_io_errors(), _numba_modules_not_imported(), _bitcode_parsed_on_demand():
            return self._load_overload(sig, target_context)

    load_overload.copter_lean = True
    load_overload.numba_load_overload = current
    caching.Cache.load_overload = load_overload
    return True


def start_runtime(target_context) -> None:
    """numba's ``rtsys.initialize`` without compiling its LLVM module of NRT functions until a compilation
    asks for it (``rtsys.library``).

    ``rtsys.initialize`` registers the runtime's C helpers (``NRT_MemInfo_alloc`` ...) with LLVM's symbol
    table, which a cached kernel's machine code calls, and compiles ``nrtdynmod``'s small module
    (``NRT_incref``, ``NRT_decref``, the atomics: 30-55 ms of CPU per process at load 6, numba caches it
    nowhere). That module is linked into every kernel when the kernel is compiled (``CPUContext.post_lowering``
    adds ``rtsys.library`` as a linking library), so a kernel loaded from the cache carries its own copy and
    never resolves those names at run time. Here the helpers are registered as numba does, and the module
    is compiled on first access of ``rtsys.library`` (numba's compiler, and the recursion stubs of
    ``RuntimeLinker``, are its only readers) by making ``rtsys`` an instance of a subclass whose ``library``
    compiles it then.
    """
    from numba.core.runtime import rtsys

    if rtsys._init:
        return
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        if rtsys._init:
            return
        import llvmlite.binding as ll
        from numba.core import config
        from numba.core.runtime import _nrt_python as _nrt

        if config.NRT_STATS:
            _nrt.memsys_enable_stats()
        for py_name, c_address in _nrt.c_helpers.items():  # as _Runtime.initialize names them
            ll.add_symbol(py_name if py_name.startswith("_") else "NRT_" + py_name, c_address)
        rtsys._deferred_context = target_context
        rtsys.__class__ = _runtime_class(type(rtsys))
        rtsys._init = True


@contextlib.contextmanager
def _numba_modules_not_imported() -> Iterator[None]:
    """While a copter kernel's cache entry is unpickled, its referenced environments of numba's own
    implementation modules are rebuilt without importing those modules (:func:`_rebuild_env`).

    numba pickles each environment a kernel's machine code refers to (one per function it inlined: the
    implementations of ``np.empty``, ``np.sum`` ... in ``numba.np.arrayobj`` and ``numba.np.arraymath``) as
    ``numba.core.environment._rebuild_env(module name, constants, name)``, which imports the module to use
    its ``__dict__`` as the environment's globals. Importing ``numba.np.arraymath`` (which imports
    ``numba.np.linalg``) and ``numba.np.arrayobj`` cost 0.3-0.4 s of CPU in every ``copter step`` process
    (issue #15), and nopython code never reads those globals: only object-mode lowering
    (``numba.core.pylowering``) does, and numba's implementations are nopython functions. The environment's
    constants, which the code does read, are restored as numba restores them. The replacement is in place
    only for the unpickling (which runs under numba's compiler lock, held by ``Dispatcher.compile``).
    """
    from numba.core import environment

    numba_rebuild = environment._rebuild_env
    environment._rebuild_env = functools.partial(_rebuild_env, numba_rebuild)
    try:
        yield
    finally:
        environment._rebuild_env = numba_rebuild


def _rebuild_env(numba_rebuild, modname, consts, env_name):
    """numba's ``_rebuild_env`` (``numba_rebuild``), except for an environment of a numba module that is not
    imported: its globals are then ``{"__name__": modname}`` (what ``Environment.can_cache`` and
    ``__reduce__`` read) instead of the module's, so the module is not imported."""
    import sys

    from numba.core.environment import Environment, lookup_environment

    env = lookup_environment(env_name)
    if env is not None:
        return env
    if not modname or modname in sys.modules or not modname.startswith("numba."):
        return numba_rebuild(modname, consts, env_name)
    env = Environment({"__name__": modname})
    env.consts[:] = consts
    env.env_name = env_name
    Environment._memo[env_name] = env
    return env


@contextlib.contextmanager
def _bitcode_parsed_on_demand() -> Iterator[None]:
    """While a copter kernel's cache entry is unpickled, its code library is rebuilt without parsing the LLVM
    bitcode stored beside the machine code (:func:`_unserialize`).

    numba caches a kernel as its object code plus the bitcode of its module prepared for linking into other
    libraries (``CPUCodeLibrary.serialize_using_object_code``); loading parses that bitcode
    (``llvmlite.binding.parse_bitcode``) and walks its functions and globals to record their names as
    defined (``JitEngine._load_defined_symbols``). Running the machine code needs neither: half the CPU of a
    kernel's first call in a ``copter step`` process (bench/bench_step_parts.py, Sia 128: 0.025 of 0.055 s
    for 16 kernels; Sia 1,024 with the ALM: 0.024 of 0.054 s for 21). Only a compilation that links the
    loaded library into new code (``_get_module_for_linking``), and lookups of names the library defines,
    read them: the library's class then parses on first use (:func:`_lazy_library_class`). The replacement
    is in place only for the unpickling (under numba's compiler lock, as :func:`_numba_modules_not_imported`).
    """
    from numba.core import codegen

    numba_unserialize = codegen.CPUCodeLibrary.__dict__["_unserialize"]
    codegen.CPUCodeLibrary._unserialize = classmethod(functools.partial(_unserialize, numba_unserialize.__func__))
    try:
        yield
    finally:
        codegen.CPUCodeLibrary._unserialize = numba_unserialize


def _unserialize(numba_unserialize, cls, codegen, state):
    """numba's ``CPUCodeLibrary._unserialize`` (``numba_unserialize``), except that a library cached as
    object code keeps its linking bitcode unparsed (:func:`_lazy_library_class`)."""
    name, kind, data = state
    if kind != "object":
        return numba_unserialize(cls, codegen, state)
    object_code, shared_bitcode = data
    self = codegen.create_library(name)
    assert isinstance(self, cls)
    self.enable_object_caching()
    self._set_compiled_object(object_code)
    self.__class__ = _lazy_library_class(type(self))
    self._copter_bitcode = shared_bitcode
    self._finalize_final_module()
    return self


@functools.cache
def _lazy_library_class(base: type) -> type:
    """numba's code library class (``base``, ``JITCodeLibrary``) for a library loaded by :func:`_unserialize`:
    ``_shared_module`` (the linking module) is parsed from the kept bitcode on first access, and its defined
    names then recorded as numba records them at load; ``get_pointer_to_function`` of a name not yet recorded
    asks LLVM's execution engine for the address first (the library's machine code is loaded, so the names
    it defines resolve; a name nobody defines gives 0, as numba's answer) and parses only when it is 0."""

    class LazyBitcodeLibrary(base):
        @property
        def _shared_module(self):
            bitcode = self.__dict__.pop("_copter_bitcode", None)
            if bitcode is not None:
                import llvmlite.binding as ll

                module = ll.parse_bitcode(bitcode)
                self._codegen._engine._load_defined_symbols(module)
                self.__dict__["_copter_shared_module"] = module
            return self.__dict__.get("_copter_shared_module")

        @_shared_module.setter
        def _shared_module(self, value):
            self.__dict__["_copter_shared_module"] = value

        def get_pointer_to_function(self, name):
            self._ensure_finalized()
            engine = self._codegen._engine
            if engine.is_symbol_defined(name):
                return engine.get_function_address(name)
            if "_copter_bitcode" in self.__dict__:
                address = engine.get_function_address(name)
                if address:
                    engine._defined_symbols.add(name)
                    return address
                self._shared_module  # noqa: B018 - parse now: the names numba would have recorded at load
            return super().get_pointer_to_function(name)

    return LazyBitcodeLibrary


@functools.cache
def _runtime_class(base: type) -> type:
    """numba's runtime class (``numba.core.runtime.nrt._Runtime``, ``base``) whose ``library`` compiles the
    NRT module on first access (one class per base)."""

    class LazyLibraryRuntime(base):
        @property
        def library(self):
            """The NRT functions' code library, compiled now if :func:`start_runtime` deferred it."""
            self._init_guard()
            if getattr(self, "_library", None) is None:
                from numba.core.compiler_lock import global_compiler_lock
                from numba.core.runtime import nrtdynmod

                with global_compiler_lock:
                    if getattr(self, "_library", None) is None:
                        self._library = nrtdynmod.compile_nrt_functions(self._deferred_context)
            return self._library

    return LazyLibraryRuntime
