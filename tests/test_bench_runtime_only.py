"""The bench scripts run from a runtime-only install (no test extras: no pandas, no pytest; no plot, no ray).
bench_te/sia/lb ran every round and then died on ``import pandas`` in their summary, leaving no results file;
bench_show_solution died at ``--help`` on ``import pytest`` (through tests.helpers) (helper-230). Each script runs
here in a process where those packages cannot be imported."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (REPO / "bench").glob("bench_*.py"))
#: installed by a sitecustomize.py: ``import pandas`` (and the other extras) fails as on a runtime-only install
BLOCK = '''import sys
class _Extras:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.split(".")[0] in ("pandas", "pytest", "matplotlib", "ray"):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked: runtime-only install)", name=name)
sys.meta_path.insert(0, _Extras())
'''


def _run(tmp_path: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCK)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{site}:{REPO}", "COPTER_WORKER": "off", "HOME": str(tmp_path)}
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, *args]
    return subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)


HELP_ALL = """
import contextlib, io, runpy, sys
bench = sys.argv[1] + "/bench"
sys.path.insert(0, bench)
failed = []
for script in sys.argv[2:]:
    sys.argv = [script, "--help"]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(bench + "/" + script, run_name="__main__")
    except SystemExit as ex:
        if ex.code not in (0, None) or "usage:" not in out.getvalue():
            failed.append(f"{script}: exit {ex.code}")
    except BaseException as ex:
        failed.append(f"{script}: {type(ex).__name__}: {ex}")
    else:
        failed.append(f"{script}: --help did not exit")
print("\\n".join(failed))
"""


def test_help_of_every_bench_script(tmp_path):
    """Each script's --help, in one process (each script runs as __main__ in turn; one interpreter start)."""
    p = _run(tmp_path, str(REPO), *SCRIPTS, code=HELP_ALL)
    assert p.returncode == 0 and p.stdout.strip() == "", (p.stdout[-3000:], p.stderr[-3000:])


def test_the_summary_and_results_files_need_no_pandas(tmp_path):
    rows = [{"round": r, "method": m, "status": "OPTIMAL", "seconds": s, "objective": 1.0, "gap_rel": g,
             "max_row_violation": 0.0, "max_row_violation_rel": 0.0, "hit_limit": False, "churn": 3,
             **({"pop_seconds": 0.5} if m == "pop-4" else {})}
            for r in (0, 1, 2) for m, s, g in (("copter-warm", 0.2 * (r + 1), 1e-5), ("highs", 0.4, 0.0),
                                               ("pop-4", 0.6, None))]
    code = f'''
import json, sys
sys.path.insert(0, {str(REPO / "bench")!r})
import common
common.RESULTS = __import__("pathlib").Path({str(tmp_path / "results")!r})
rows = json.loads(sys.argv[1])
print(json.dumps(common.summarize(rows)))
common.print_summary(rows, "t")
common.write_results("t", rows, {{"command": "test"}})
assert "pandas" not in sys.modules
'''
    p = _run(tmp_path, json.dumps(rows), code=code)
    assert p.returncode == 0, p.stderr[-3000:]
    table = {r["method"]: r for r in json.loads(p.stdout.splitlines()[0])}
    assert table["copter-warm"]["median_s"] == pytest.approx(0.5)  # rounds 1 and 2: 0.4, 0.6
    assert table["copter-warm"]["x_highs"] == pytest.approx(1.25) and table["highs"]["x_highs"] == 1.0
    assert math.isnan(table["pop-4"]["median_gap_rel"]) and table["pop-4"]["median_pop_s"] == 0.5
    assert table["highs"]["rounds"] == 2 and table["highs"]["limit_hits"] == 0
    assert "copter-warm" in p.stdout and "x_highs" in p.stdout
    files = sorted((tmp_path / "results").iterdir())
    assert [f.suffix for f in files] == [".csv", ".parquet"]
    import pyarrow.parquet as pq

    t = pq.read_table(files[1])
    assert t.num_rows == 9 and t.schema.metadata[b"bench.command"] == b"test"
    assert files[0].read_text().startswith("# command: test\n")
