"""A step stopped by the file-size limit (``ulimit -f``) names the file it was writing, not the state folder:
pyarrow's write errors carry no file name, and the command's fallback was the state's root (helper-164:
"/w/flt/sp: cannot write: ... File too large")."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import pytest

from formats.faults import naming
from tests.helpers import REPO, small_lp_state, snapshot


def test_naming_fills_only_a_missing_file_name(tmp_path):
    with pytest.raises(OSError) as got:
        with naming(tmp_path / "a.arrow"):
            raise OSError(27, "File too large")
    assert got.value.filename == str(tmp_path / "a.arrow")
    with pytest.raises(OSError) as got:
        with naming(tmp_path / "a.arrow"):
            raise OSError(2, "No such file", "/elsewhere/b")
    assert got.value.filename == "/elsewhere/b"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE")
def test_a_step_over_the_file_size_limit_names_the_file(tmp_path):
    st, d = small_lp_state(tmp_path)
    before = snapshot(st)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    p = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(d), "--state", str(st), "--json"], env=env,
                       capture_output=True, text=True, timeout=300, preexec_fn=limit)
    assert p.returncode == 7, p.stderr
    message = json.loads(p.stdout)["error"]["message"]
    named = message.split(": cannot write", 1)[0]
    assert named != str(st) and named.startswith(str(st) + os.sep) and named.endswith((".arrow", ".parquet",
                                                                                      ".json")), message
    assert "was not stored" in message
    assert snapshot(st) == before
