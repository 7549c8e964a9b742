"""What invalidates numba's on-disk kernel cache, as docs/usage.md "The kernel cache" states: the content of the
kernel's source file (numba 0.68 keys its index on a SHA-256 of the file), not its modification time.

A throw-away module with one ``@njit(cache=True)`` kernel, each run a fresh process against its own
``NUMBA_CACHE_DIR``, counting numba's ``numba:compile`` events.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

RUN = r"""
from numba.core import event

count = [0]


class Counter(event.Listener):
    def on_start(self, ev):
        count[0] += 1

    def on_end(self, ev):
        pass


with event.install_listener("numba:compile", Counter()):
    import kernel_mod

    value = kernel_mod.add_one(1)
print(count[0], value)
"""


def _compilations(folder: Path) -> tuple[int, int]:
    """(numba compilations, add_one(1)) of a fresh process."""
    # no .pyc: Python's own bytecode cache keys on mtime and size, so the same-size edit below with the
    # mtime put back would run the stale bytecode (that is Python's import, not numba's cache under test)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / "cache"), PYTHONPATH=str(folder),
               PYTHONDONTWRITEBYTECODE="1")
    proc = subprocess.run([sys.executable, "-c", RUN], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    count, value = proc.stdout.split()[-2:]
    return int(count), int(value)


def test_touch_keeps_the_cache_and_a_content_change_invalidates_it(tmp_path):
    src = tmp_path / "kernel_mod.py"
    src.write_text("from numba import njit\n\n\n@njit(cache=True)\ndef add_one(x):\n    return x + 1\n")
    assert _compilations(tmp_path) == (1, 2)  # first run compiles
    assert _compilations(tmp_path) == (0, 2)  # then loads
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns + 10**10, st.st_mtime_ns + 10**10))  # `touch`: a new mtime, same bytes
    assert _compilations(tmp_path) == (0, 2)
    touched = src.stat()
    src.write_text(src.read_text().replace("x + 1", "x + 2"))  # same size, and the mtime put back
    os.utime(src, ns=(touched.st_atime_ns, touched.st_mtime_ns))
    assert src.stat().st_size == touched.st_size
    assert _compilations(tmp_path) == (1, 3)  # the content decides, not mtime and size
    assert _compilations(tmp_path) == (0, 3)
