"""The part workers never import pandas (``formats.no_pandas`` in their forkserver): pyarrow's pandas shim
imported it, whenever it was installed, when a worker turned a part's shipped names (Arrow strings,
``solver.partition.shipping``) back into an object array; 0.27 s a worker before its first TE Kdl part."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    from solver.partition import executor

    def probe(names):
        return {"pandas": "pandas" in sys.modules, "names": names[:2].tolist(), "n": int(names.shape[0])}

    if __name__ == "__main__":
        names = np.array([f"client{i}/x" for i in range(5000)], dtype=object)  # shipped as Arrow strings
        outs = executor.map_parts(probe, [(names,), (names[::-1].copy(),)], "process", 2,
                                  preload=(executor.WARM_MODULE,))
        print(json.dumps({"workers": outs, "here": "pandas" in sys.modules}))
""")


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed: nothing to keep out")
def test_part_workers_do_not_import_pandas(tmp_path):
    script = tmp_path / "probe_workers.py"  # a file: the forkserver imports the function from its __main__
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["here"]  # the library user's own process shipped the names with pyarrow, and pandas came with it
    assert [w["names"] for w in out["workers"]] == [["client0/x", "client1/x"], ["client4999/x", "client4998/x"]]
    assert [w["n"] for w in out["workers"]] == [5000, 5000]
    assert not any(w["pandas"] for w in out["workers"]), out
