"""A Ray driver whose connection to the cluster breaks while the parts run (``BrokenPipeError`` out of Ray's calls)
ended "internal error: OSError: Broken pipe" (exit 1, helper-240, session 60); it is exit 7 (reason ``io``) saying the
cluster's connection broke and that nothing was stored. A part's own OSError (Ray's ``RayTaskError``) stays its own.
Tested on a stand-in for Ray's module (no cluster needed)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from solver.model.errors import EnvironmentFaultError
from solver.partition import executor


class _TaskError(Exception):
    pass


class _BrokenRemote:
    def __init__(self, exc):
        self.exc = exc

    def remote(self, *a, **k):
        raise self.exc


def _fake_ray(exc):
    return SimpleNamespace(is_initialized=lambda: True, remote=lambda **kw: (lambda f: _BrokenRemote(exc)),
                           exceptions=SimpleNamespace(RayTaskError=_TaskError, RayError=Exception),
                           _private=None)


def test_a_broken_pipe_to_the_cluster_is_exit_7(monkeypatch):
    monkeypatch.setattr(executor, "_import_ray", lambda: _fake_ray(BrokenPipeError(32, "Broken pipe")))
    with pytest.raises(EnvironmentFaultError, match="connection to the Ray cluster broke mid-round .*Broken pipe.*"
                                                    "nothing was stored") as e:
        executor._run_ray(print, [(1,)], [False], None)
    assert e.value.reason == "io"


def test_a_parts_own_oserror_is_not_called_a_broken_cluster(monkeypatch):
    class PartOSError(_TaskError, OSError):
        pass

    monkeypatch.setattr(executor, "_import_ray", lambda: _fake_ray(PartOSError(28, "No space left on device")))
    with pytest.raises(PartOSError):
        executor._run_ray(print, [(1,)], [False], None)
