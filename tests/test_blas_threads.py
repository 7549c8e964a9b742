"""The console script runs numpy's BLAS on one thread unless the user chose otherwise (copter_cli.entry.
single_threaded_blas: OpenBLAS's threads contended with numba's and made level-1 products 17x slower under
load). Checked in real subprocesses, by asking the loaded OpenBLAS library itself."""

from __future__ import annotations

import pytest

from tests.helpers import after_console_entry

PROBE = r"""
import ctypes, glob, os
assert "numpy" not in sys.modules, "main imported numpy before setting the BLAS threads"
import numpy
libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__), os.pardir, "numpy.libs", "*openblas*"))
for lib in libs:
    dll = ctypes.CDLL(lib)
    for name in ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_", "openblas_get_num_threads"):
        if hasattr(dll, name):
            print(getattr(dll, name)())
            sys.exit(0)
print("no-openblas")
"""


def _threads(extra_env: dict) -> str:
    out = after_console_entry(PROBE, ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), extra_env)
    if out == "no-openblas":
        pytest.skip("numpy is not linked against an OpenBLAS this probe can query")
    return out


def test_the_console_script_sets_one_blas_thread_before_numpy_loads():
    assert _threads({}) == "1"


def test_a_users_own_blas_thread_count_is_kept():
    assert _threads({"OPENBLAS_NUM_THREADS": "2"}) == "2"
