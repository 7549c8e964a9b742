"""Faults of the environment: which OS errors they are, the typed error they become, and the injection
point the tests use to raise one at every write of a round.

An ``OSError`` whose errno says the *machine* refused the operation (permission, read-only file system,
disk full or over quota, I/O error, too many open files) becomes :class:`~solver.model.errors.EnvironmentFaultError` (exit code
7) naming the path; any other ``OSError`` is left alone (a bug, or handled where it is raised).

Fault injection (tests only; a no-op unless the variables are set, one ``os.environ`` lookup per write):

* ``COPTER_FAULT_ERRNO=ENOSPC@7`` makes the 7th write point of the process raise
  ``OSError(ENOSPC, ..., path)`` (any errno name; counting starts at 1 and restarts when the value
  changes or :func:`reset_io_faults` is called).
* ``COPTER_FAULT_TRACE=FILE`` appends ``<n>\\t<point>\\t<path>`` for every write point reached, so a test
  can learn how many write points a command has and then fail each one in turn.

The kill points of the crash tests (``COPTER_FAULT_INJECT``) are :func:`fault_point`.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

from solver.model.errors import CopterError, EnvironmentFaultError

REASONS = {
    errno.EACCES: "permission", errno.EPERM: "permission",
    errno.EROFS: "read_only",
    errno.ENOSPC: "no_space", errno.EDQUOT: "no_space", errno.EFBIG: "no_space",
    errno.EIO: "io",
    # the process's or the system's descriptors used up (ulimit -n): a loaded generation's arrays are views of their
    # files holding one each (formats/checkpoint_arrays.private_view); "damaged" blamed the state and fell back
    errno.EMFILE: "open_files", errno.ENFILE: "open_files",
}
"""errno -> ``EnvironmentFaultError.reason`` for the OS errors that are faults of the environment."""

_COUNT = {"spec": None, "n": 0}


def is_environment_fault(err: BaseException) -> bool:
    """True for an ``OSError`` whose errno is one of :data:`REASONS`."""
    return isinstance(err, OSError) and err.errno in REASONS


def as_environment_fault(err: OSError, path=None, action: str = "write",
                         destination: bool = False) -> EnvironmentFaultError:
    """The typed error for an environment ``OSError``: names the path (the error's own filename, else
    ``path``; always ``path`` when ``destination``, e.g. for a temporary file written on its behalf), the
    action and the OS's words; ``str()`` gives e.g. ``/s/gen-000002: cannot write: No space left on device``.
    """
    where = path if destination or err.filename is None else err.filename
    words = err.strerror or str(err)
    name = errno.errorcode.get(err.errno) if err.errno is not None else None
    msg = f"cannot {action}: {words}"  # the path is the error's ``file``, which str() puts first
    return EnvironmentFaultError(msg, file=None if where is None else str(where),
                                 reason=REASONS.get(err.errno, "io"), errno_name=name)


def typed_fault(err: BaseException) -> CopterError | None:
    """The typed error of an exception no library code typed that is the machine's or the user's, not a bug, or None:
    an environment ``OSError`` (:func:`as_environment_fault`, exit 7); a MemoryError (the model, or ``demo --scale
    100000``'s 149 GiB, larger than this machine's memory: exit 7, nothing stored, as every failed command leaves the
    state); a file name longer than the file system takes (ENAMETOOLONG: a name of over 255 bytes, exit 2 naming it).
    helper-213: each was "internal error", exit 1; helper-221: in a batch of deltas, such an error at a later delta
    left out the reports of the rounds stored before it, which ``solver.rounds.loop.step_many`` attaches to typed
    errors only."""
    from solver.model.errors import UsageError

    if is_environment_fault(err):
        return as_environment_fault(err)
    cache = kernel_cache_fault(err)
    if cache is not None:
        return cache
    if isinstance(err, MemoryError):
        return EnvironmentFaultError("out of memory: the model (or what the command was asked to build) does not fit "
                                     "in this machine's memory; nothing was stored", reason="memory")
    if isinstance(err, OSError) and err.errno == errno.ENAMETOOLONG:
        return UsageError("file name too long for the file system (at most 255 bytes a name, 4096 a path): choose a "
                          "shorter one", file=None if err.filename is None else os.fsdecode(err.filename))
    return None


def working_directory_fault() -> EnvironmentFaultError | None:
    """The error for a working directory that no longer exists (removed after the shell entered it: a cleaned
    temporary folder, a replaced release folder), or None when it exists. Every relative path of the command would
    resolve against it; helper-232: most commands then ended "internal error: FileNotFoundError" (exit 1), and
    ``show --state ../st`` called a sound state damaged. The command is refused before it reads anything (exit 7),
    naming the folder as the shell last knew it (``$PWD``)."""
    try:
        os.getcwd()
        return None
    except OSError as err:
        code = err.errno
    if code not in (errno.ENOENT, errno.ESTALE):
        return None  # EACCES on a parent: paths may still resolve; the command's own errors name them
    pwd = os.environ.get("PWD") or None
    return EnvironmentFaultError("the working directory no longer exists (removed after this command's shell entered "
                                 "it), so no relative path can be resolved: cd to an existing folder and run the "
                                 "command again; nothing was done", file=pwd, reason="working_directory",
                                 errno_name=errno.errorcode.get(code))


KERNEL_CACHE_WORDS = "no locator available for file"  #: numba's RuntimeError when no cache folder is writable


def kernel_cache_fault(err: BaseException) -> EnvironmentFaultError | None:
    """The error for numba's "cannot cache function ...: no locator available for file F" (a ``RuntimeError`` at a
    kernel module's import), or None: neither ``$NUMBA_CACHE_DIR``, nor the ``__pycache__`` beside the installed
    module, nor numba's user cache (``~/.cache/numba``: a service account's HOME is often ``/nonexistent``) is
    writable for this user. helper-232: ``step``, ``solve`` and ``compare`` ended "internal error" (exit 1)."""
    if not isinstance(err, RuntimeError) or KERNEL_CACHE_WORDS not in str(err):
        return None
    import re

    found = re.search(r"for file '(.*)'", str(err))
    source = found.group(1) if found else None
    folder = os.path.join(os.path.dirname(source), "__pycache__") if source else None
    env = os.environ.get("NUMBA_CACHE_DIR")
    tried = (f"NUMBA_CACHE_DIR={env}" if env else
             f"{folder or 'the folder beside the installed modules'} and numba's user cache under HOME="
             f"{os.environ.get('HOME', '(unset)')}")
    return EnvironmentFaultError(f"numba cannot keep copter's compiled kernels: no cache folder is writable for this "
                                 f"user ({tried}); set NUMBA_CACHE_DIR to a folder this user can write, then run "
                                 f"`copter prepare` once as this user", file=folder, reason="kernel_cache")


@contextmanager
def environment_faults(path, action: str = "write", destination: bool = False) -> Iterator[None]:
    """Turn an environment ``OSError`` raised inside the block into :class:`EnvironmentFaultError`
    (naming ``path`` when the error names no file, or always with ``destination``); every other exception
    passes unchanged."""
    try:
        yield
    except OSError as err:
        if not is_environment_fault(err):
            raise
        raise as_environment_fault(err, path, action, destination) from err


@contextmanager
def naming(path) -> Iterator[None]:
    """An ``OSError`` raised in the block without a file name (pyarrow's writers, a ``write`` over ``ulimit -f``:
    ``File too large``) gets ``path``, so the error names the file being written, not the state folder the
    command's :func:`environment_faults` falls back to (helper-164)."""
    try:
        yield
    except OSError as err:
        if err.filename is None:
            err.filename = str(path)
        raise


def reset_io_faults() -> None:
    """Restart the write-point count of ``COPTER_FAULT_ERRNO`` (in-process tests)."""
    _COUNT["spec"], _COUNT["n"] = None, 0


def io_fault(point: str, path) -> None:
    """A write point: raise the ``OSError`` that ``$COPTER_FAULT_ERRNO`` asks for when this is the chosen
    write, and record the point under ``$COPTER_FAULT_TRACE``. A no-op when neither is set.

    Args:
        point: what is written (``"array"``, ``"json"``, ``"parquet"``, ``"rename"``, ...).
        path: the file or folder written.
    Raises:
        OSError: the injected fault, with ``filename=path``.
    """
    spec = os.environ.get("COPTER_FAULT_ERRNO")
    trace = os.environ.get("COPTER_FAULT_TRACE")
    if not spec and not trace:
        return
    key = spec or trace
    if _COUNT["spec"] != key:
        _COUNT["spec"], _COUNT["n"] = key, 0
    _COUNT["n"] += 1
    if trace:
        with open(trace, "a") as f:
            f.write(f"{_COUNT['n']}\t{point}\t{path}\n")
    if spec:
        name, _, at = spec.partition("@")
        if int(at or 1) == _COUNT["n"]:
            code = getattr(errno, name)
            raise OSError(code, os.strerror(code), str(path))


_FAULT_HITS: dict[str, int] = {}  #: times each fault point was reached in this process (``NAME@N``)


def fault_point(name: str) -> None:
    """Fault injection for the crash-safety tests: when ``$COPTER_FAULT_INJECT`` equals ``name``, send this
    process SIGKILL (or SIGINT for names starting with ``sigint_``; a ``sigint_X`` point sends SIGTERM instead
    when the variable is ``sigterm_X``). ``NAME@N`` fires only the N-th time the point is reached in the
    process (``sigint_before_solve@2``: in the second round of a ``copter step`` with several deltas). A no-op
    otherwise."""
    raw = os.environ.get("COPTER_FAULT_INJECT")
    if raw is None:
        return
    want, _, nth = raw.partition("@")
    sigterm = name.startswith("sigint_") and want == "sigterm_" + name[len("sigint_"):]
    if not sigterm and want != name:
        return
    if nth:
        _FAULT_HITS[name] = _FAULT_HITS.get(name, 0) + 1
        if str(_FAULT_HITS[name]) != nth:
            return
    if sigterm:
        os.kill(os.getpid(), signal.SIGTERM)
    else:
        os.kill(os.getpid(), signal.SIGINT if name.startswith("sigint_") else signal.SIGKILL)
    time.sleep(5)  # the Python-level SIGINT handler runs here (KeyboardInterrupt), not in a later C call


__all__ = ["REASONS", "as_environment_fault", "environment_faults", "fault_point", "io_fault",
           "is_environment_fault", "reset_io_faults"]
