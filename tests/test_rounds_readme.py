"""The README's "Driving rounds from Python" snippet runs as written, and the import rule of
``solver/__init__.py`` holds (the numerical core imports nothing from formats or copter_cli)."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
from pathlib import Path

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import small_lp

REPO = Path(__file__).resolve().parents[1]
CORE = ("model", "differential", "lp", "integer", "workloads", "api.py", "highs_bridge.py")


def readme_snippet() -> str:
    """The first ```python block after the heading "Driving rounds from Python" in README.md."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("### Driving rounds from Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def _run_snippet() -> list[str]:
    """Run the snippet in this process (its working directory: the caller's); the lines it printed."""
    out = io.StringIO()
    saved = dict(os.environ)  # the snippet's console_environment() sets variables this process's later tests inherit
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(readme_snippet(), "README.md", "exec"), {})
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return out.getvalue().splitlines()


def test_the_readme_pipeline_runs_on_a_small_generated_problem(tmp_path, monkeypatch):
    write_problem(small_lp(), tmp_path / "base.mps")
    write_delta(Delta.concat([Delta.vars(["x1"], cost=[3.0])], base_round=0), tmp_path / "delta_0001.parquet")
    write_delta(Delta.concat([Delta.vars(["x2"], cost=[-2.0])], base_round=1), tmp_path / "delta_0002.parquet")
    monkeypatch.chdir(tmp_path)
    lines = _run_snippet()
    assert [line.split()[:2] for line in lines[:2]] == [["1", "OPTIMAL"], ["2", "OPTIMAL"]], lines
    assert all(float(line.split()[3]) >= 0.0 for line in lines[:2])  # seconds["solve"]
    assert lines[2] == "['OPTIMAL', 'OPTIMAL', 'OPTIMAL']"
    assert (tmp_path / "state" / "CURRENT").read_text().strip() == "2"
    # run again, as its no-op comment says a re-run does (it failed at init: helper-226)
    assert _run_snippet() == ["['OPTIMAL', 'OPTIMAL', 'OPTIMAL']"]
    assert (tmp_path / "state" / "CURRENT").read_text().strip() == "2"


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def _files(*parts: str) -> list[Path]:
    out = []
    for part in parts:
        p = REPO / "solver" / part
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def test_the_numerical_core_imports_nothing_from_formats_or_the_cli():
    bad = [(str(f.relative_to(REPO)), m) for f in _files(*CORE) for m in _imports(f)
           if m.split(".")[0] in ("formats", "copter_cli")]
    assert not bad, bad


def test_rounds_and_baselines_never_import_the_cli():
    bad = [(str(f.relative_to(REPO)), m) for f in _files("rounds", "baselines") for m in _imports(f)
           if m.split(".")[0] == "copter_cli"]
    assert not bad, bad
