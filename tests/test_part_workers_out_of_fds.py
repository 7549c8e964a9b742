"""Part workers that cannot start because the command ran out of file descriptors (``ulimit -n``): exit 7 naming the
worker start and the limit, not the state folder ("TP: cannot write: Too many open files"), and the forkserver's
EOFError of the fork request the command left half-sent is not printed (9 lines before copter's one; helper-170)."""

from __future__ import annotations

import errno
import multiprocessing.reduction as reduction
import os

import pytest

from solver.model.errors import EnvironmentFaultError
from solver.partition import executor
from solver.partition.forkserver_lifeline import quiet_when_owner_left


def _square(x):
    return x * x


def _pool_fails(monkeypatch, code: int, words: str) -> None:
    def fail(*a, **k):
        raise OSError(code, words)

    monkeypatch.setattr(executor, "_pool", fail)


def test_emfile_while_the_workers_start_is_an_environment_fault_naming_them(monkeypatch):
    _pool_fails(monkeypatch, errno.EMFILE, "Too many open files")
    with pytest.raises(EnvironmentFaultError) as e:
        executor.map_parts(_square, [(1,), (2,)], "process", 2)
    err = e.value
    assert str(err).startswith("cannot start the part workers: Too many open files (this process's open-file "
                               "limit, ulimit -n, is "), str(err)
    assert "--executor inline" in str(err) and err.file is None
    assert (err.reason, err.errno_name) == ("open_files", "EMFILE")


def test_other_os_errors_pass_unchanged(monkeypatch):
    _pool_fails(monkeypatch, errno.EACCES, "Permission denied")
    with pytest.raises(OSError) as e:
        executor.map_parts(_square, [(1,), (2,)], "process", 2)
    assert not isinstance(e.value, EnvironmentFaultError) and e.value.errno == errno.EACCES


def test_the_forkservers_eoferror_of_a_half_sent_request_is_quiet():
    seen = []

    def hook(*args):
        seen.append(args[0])

    def half_sent():
        try:
            reduction.recvfds(_ClosedSocket(), 1)
        except EOFError as exc:
            return exc
        raise AssertionError("no EOFError")

    exc = half_sent()
    quiet_when_owner_left(EOFError, exc, exc.__traceback__, _server=os.getpid(), _hook=hook)
    assert seen == []
    other = EOFError("elsewhere")
    quiet_when_owner_left(EOFError, other, None, _server=os.getpid(), _hook=hook)  # not from a request: printed
    assert seen == [EOFError]


class _ClosedSocket:
    """What recvfds reads from a socket whose other end closed: nothing."""

    def recvmsg(self, *a):
        return b"", [], 0, None


def test_any_os_error_while_the_parts_run_ends_the_pool(monkeypatch):
    """The pool ends (its workers killed) on an OSError as on every other error: the clause for EMFILE once re-raised
    other OSErrors past the one that ends it, and the process's exit then waited for the pool's thread. (An EIO: a
    refused, reset or broken connection while the workers start is the forkserver's death, retried once, since
    session 49.)"""
    real = executor._submit_all

    def submit_then_fail(pool, *a, **k):
        real(pool, *a, **k)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(executor, "_submit_all", submit_then_fail)
    with pytest.raises(OSError, match="Input/output error"):
        executor.map_parts(_square, [(1,), (2,)], "process", 2)
    assert 2 not in executor._POOLS
