"""The console script gives pyarrow the C library's allocator unless the user chose one
(copter_cli.entry.arrow_system_allocator: the wheels' mimalloc stalled at random in a fresh process, making a
Sia 10,240 step's ``apply`` 0.09 s or 0.3-0.7 s). Checked in real subprocesses by asking pyarrow's default pool."""

from __future__ import annotations

from tests.helpers import after_console_entry

PROBE = r"""
assert "pyarrow" not in sys.modules, "main imported pyarrow before choosing its allocator"
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
"""


def _backend(extra_env: dict) -> str:
    return after_console_entry(PROBE, ("ARROW_DEFAULT_MEMORY_POOL",), extra_env)


def test_the_console_script_gives_pyarrow_the_system_allocator():
    assert _backend({}) == "system"


def test_a_users_own_arrow_allocator_is_kept():
    assert _backend({"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}) in ("jemalloc", "system")  # system: no jemalloc build
    assert _backend({"ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}) == "mimalloc"
