"""The console script turns numpy's huge-page advice off unless the user chose otherwise
(copter_cli.entry.no_numpy_hugepage_advice: with THP defrag ``madvise`` the first touch of a marked array stalled
in compaction, a TE Kdl part's 62 MB scaled matrix 0.35 s instead of 0.04 s). Checked in real subprocesses by
asking numpy, and in a process the console script's process starts, as a partition worker is."""

from __future__ import annotations

from tests.helpers import after_console_entry

PROBE = r"""
assert "numpy" not in sys.modules, "main imported numpy before choosing its huge-page advice"
import numpy
print(numpy._core.multiarray._get_madvise_hugepage())
"""

CHILD = r"""
import subprocess
out = subprocess.run([sys.executable, "-c", "import numpy; print(numpy._core.multiarray._get_madvise_hugepage())"],
                     capture_output=True, text=True, check=True)
print(out.stdout.strip())
"""


def _advice(extra_env: dict, probe: str = PROBE) -> str:
    return after_console_entry(probe, ("NUMPY_MADVISE_HUGEPAGE",), extra_env)


def test_the_console_script_turns_numpys_hugepage_advice_off():
    assert _advice({}) == "False"


def test_the_processes_it_starts_inherit_the_choice():
    assert _advice({}, CHILD) == "False"


def test_a_users_own_choice_is_kept():
    assert _advice({"NUMPY_MADVISE_HUGEPAGE": "1"}) == "True"
    assert _advice({"NUMPY_MADVISE_HUGEPAGE": "0"}) == "False"
