"""A Ray round whose part task dies twice ends with copter's error line as stderr's last line and no terminal colour
codes when stderr is not a terminal: Ray's "(raylet) A worker died ..." lines came wrapped in ANSI colour codes and
some arrived after the error line, which a script reads as the last (helper-185, session 46)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import REPO, require_ray
from tests.partition_helpers import partitioned_te_state

require_ray()


def test_the_error_line_is_last_and_uncoloured(tmp_path):
    state, delta = partitioned_te_state(tmp_path)
    env = {**os.environ, "COPTER_FAULT_KILL_PART": "0", "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    for key in ("RAY_ADDRESS", "RAY_COLOR_PREFIX"):
        env.pop(key, None)
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state),
                           "--executor", "ray"], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 5, proc.stderr[-3000:]
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines and lines[-1].startswith("error (round_failed, exit 5)"), proc.stderr[-3000:]
    assert "\x1b[" not in proc.stderr, proc.stderr[-3000:]
