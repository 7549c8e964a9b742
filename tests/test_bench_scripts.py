"""The domain bench scripts' files and exit code (helper-238, session 59): an interrupted run wrote results files that
looked whole (its header said 6 rounds beside 2) and exited 0; ``--topology`` given as a path put the path's folders
into the results file name, so the results were lost after every round had run."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def bench(monkeypatch, tmp_path):
    """The bench folder importable as the scripts see it, results written under ``tmp_path``."""
    monkeypatch.syspath_prepend(str(REPO / "bench"))
    import common

    monkeypatch.setattr(common, "RESULTS", tmp_path / "results")
    return common


def test_an_interrupted_run_marks_its_files_and_exits_130(bench, monkeypatch, tmp_path):
    from solver.workloads.sia import SiaScenario

    real = bench.run_rounds

    def two_rounds_then_ctrl_c(scenario, rounds, **kw):
        real(scenario, rounds=1, **kw)  # rounds 0 and 1 finish
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "run_rounds", two_rounds_then_ctrl_c)
    ap = argparse.ArgumentParser()
    bench.add_common_args(ap)
    args = ap.parse_args(["--rounds", "5", "--methods", "copter-warm"])
    old = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as e:
            bench.main("sia-64", SiaScenario(total_gpus=64, seed=1), args, "Sia 64")
    finally:
        signal.signal(signal.SIGTERM, old)
    assert e.value.code == 130
    (csv,) = (tmp_path / "results").glob("sia-64-*.csv")
    header = [ln for ln in csv.read_text().splitlines() if ln.startswith("# ")]
    assert "# interrupted: after 2 of 6 round(s)" in header and "# rounds: 5" in header


@pytest.mark.parametrize("given,label", [("Cogentco", "Cogentco"), ("B4", "B4"),
                                         ("/data/topologies/pop_Colt.graphml", "pop_Colt"),
                                         ("teal_B4.json", "teal_B4"), ("topologies/Kdl", "Kdl")])
def test_a_topology_path_labels_the_results_by_its_file_name(bench, given, label):
    import bench_te

    assert bench_te.topology_label(given) == label


def test_a_method_that_failed_every_round_gets_no_time_ratio(bench):
    """helper-238: POP-16 PRIMAL_INFEASIBLE in every round of an LB run showed x_highs 0.56 in the summary."""
    import math

    rows = [{"round": r, "method": m, "status": s, "seconds": sec}
            for r in (0, 1, 2) for m, s, sec in (("highs", "OPTIMAL", 2.0), ("pop-16", "PRIMAL_INFEASIBLE", 0.5),
                                                 ("copter-warm", "OPTIMAL" if r != 2 else "NUMERICAL_ERROR", 1.0))]
    table = {t["method"]: t for t in bench.summarize(rows)}
    assert math.isnan(table["pop-16"]["median_s"]) and math.isnan(table["pop-16"]["x_highs"])
    assert table["pop-16"]["failed"] == 2 and table["copter-warm"]["failed"] == 1
    assert table["copter-warm"]["x_highs"] == 0.5 and table["highs"]["failed"] == 0


@pytest.mark.parametrize("script,args,words", [("bench_te.py", ["--ring", "2"], "a TE ring needs at least 3 nodes"),
                                               ("bench_sia.py", ["--gpus", "0"], "at least 8 GPUs")])
def test_an_impossible_scenario_is_one_error_line(tmp_path, script, args, words):
    """helper-238: a UsageError from the scenario ended the script in a traceback."""
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(REPO / "bench" / script), *args, "--rounds", "0", "--no-write"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2 and proc.stderr.startswith("error: ") and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_header_names_the_code_and_the_load(bench, capsys):
    """helper-238: a results file said ``copter 0.1.0`` alone, and most scripts recorded no load."""
    import re

    info = bench.header(["bench_x.py"])
    assert info["commit"] == "unknown" or re.fullmatch(r"[0-9a-f]{7,}( \+ edits)?", info["commit"]), info["commit"]
    assert len(info["load"].split()) == 3 and "# code: " in capsys.readouterr().out


@pytest.mark.parametrize("script", ["bench_defaults", "bench_startup"])
def test_the_console_script_runs_this_checkout(bench, monkeypatch, script):
    """helper-238: bench_defaults and bench_startup ran the installed tree's copter beside this checkout's HiGHS side."""
    import importlib
    import os

    mod = importlib.import_module(script)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    mod.run_this_checkout()
    assert os.environ["PYTHONPATH"] == str(REPO)
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")  # a caller's own choice (two checkouts compared) stays
    mod.run_this_checkout()
    assert os.environ["PYTHONPATH"] == "/elsewhere"


def test_bench_kdl_warm_without_its_pickle_is_one_error_line(tmp_path):
    import os
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, str(REPO / "bench" / "bench_kdl.py"), "--phase", "warm", "--state",
                           str(tmp_path / "none.pkl"), "--no-write"], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().endswith("not found: run --phase cold (or all) first, with the same --state")



@pytest.mark.parametrize("kind", ["state", "file", "link", "link_empty", "under_file", "blank", "empty", "new"])
def test_bench_report_refuses_a_kept_state_folder_that_holds_something(bench, tmp_path, kind, capsys):
    """``--keep-state`` copied the built state into the folder it named whatever it held: another copter state got
    100 rounds merged into its generations (helper-238). A folder that holds something, a file or a link is refused;
    an empty folder or a new name is taken."""
    import bench_report

    target = tmp_path / "kept"
    if kind == "state":
        target.mkdir()
        (target / "round-log.jsonl").write_text("{}\n")
    elif kind == "file":
        target.write_text("x")
    elif kind == "link":
        target.symlink_to(tmp_path / "nowhere")
    elif kind == "link_empty":  # helper-242: a link to an empty folder slipped through
        (tmp_path / "emptydir").mkdir()
        target.symlink_to(tmp_path / "emptydir")
    elif kind == "under_file":  # helper-242: built everything, then NotADirectoryError (exit 1)
        (tmp_path / "f").write_text("x")
        target = tmp_path / "f" / "sub"
    elif kind == "blank":  # helper-242: --keep-state "" was ignored
        target = ""
    elif kind == "empty":
        target.mkdir()
    if kind in ("empty", "new"):
        bench_report.refuse_kept_state(str(target))
        return
    with pytest.raises(SystemExit) as e:
        bench_report.refuse_kept_state(str(target))
    assert e.value.code == 2
    why = {"under_file": f"cannot be made: {tmp_path / 'f'} is not a folder",
           "blank": "is empty; name a new folder"}.get(kind, "exists and is not an empty folder; name a new folder")
    assert capsys.readouterr().err.strip().splitlines() == [f"error: --keep-state {target}: {why} (nothing was built)"]


def test_bench_report_checks_the_kept_state_before_it_builds_one(tmp_path):
    """The refusal comes before the state is built: the run ends at once and writes nothing."""
    import subprocess
    import sys

    target = tmp_path / "kept"
    target.mkdir()
    (target / "round-log.jsonl").write_text("{}\n")
    env = {**__import__("os").environ, "BENCH_TMP": str(tmp_path)}
    out = subprocess.run([sys.executable, str(REPO / "bench" / "bench_report.py"), "--keep-state", str(target)],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert out.returncode == 2, out.stderr
    assert "exists and is not an empty folder" in out.stderr and "state:" not in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]
    assert [p.name for p in target.iterdir()] == ["round-log.jsonl"]


def test_every_bench_option_with_a_default_states_it_in_its_help():
    """helper-238 (session 59): many bench options' ``--help`` said nothing of their defaults (``--rounds``, ``--tol``,
    ``--topology``...), so a reader could not tell what a bare run measures. Every ``add_argument`` of bench/ with a
    default other than None/False (and not a flag) says it in its help (``%(default)s`` or words)."""
    from tests.helpers import options_without_stated_default

    assert options_without_stated_default(sorted((REPO / "bench").glob("*.py"))) == []


@pytest.mark.parametrize("script", sorted(p.name for p in (REPO / "bench").glob("bench_*.py")))
def test_every_bench_script_help_runs(script):
    """``--help`` of every bench script exits 0 (a help string with a stray ``%`` would break argparse's expansion)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(REPO / "bench" / script), "--help"], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "usage:" in out.stdout
