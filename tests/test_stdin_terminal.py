"""``copter step -`` with standard input on a terminal is a usage error at once (exit 2), not a silent wait.

Typed without a pipe, ``copter step -`` waited for end-of-file without a word until Ctrl-D, then read the typed text
as Parquet. Found by session 21's delta hunt. One real process on a pseudo-terminal whose input already holds a Ctrl-D
(end-of-file), so the old code read an empty delta instead of waiting and the test never hangs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from copter_cli.exit_codes import USAGE
from tests.helpers import small_lp_state, snapshot


def test_step_dash_on_a_terminal_is_a_usage_error(tmp_path):
    st, _ = small_lp_state(tmp_path)
    before = snapshot(st)
    master, slave = os.openpty()
    os.write(master, b"\x04")  # Ctrl-D: the terminal's end-of-file
    copter = Path(sys.executable).with_name("copter")
    try:
        res = subprocess.run([str(copter), "step", "-", "--state", str(st), "--json"], stdin=slave,
                             capture_output=True, timeout=600)
    finally:
        os.close(slave)
        os.close(master)
    err = json.loads(res.stdout.decode().strip().splitlines()[-1])["error"]
    assert res.returncode == USAGE, res.stderr.decode()
    assert err["file"] == "-" and "standard input is a terminal" in err["message"]
    assert snapshot(st) == before
