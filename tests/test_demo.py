"""``copter demo``: init + warm steps on the built-in scenarios, JSON report shape, error exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from copter_cli import exit_codes
from copter_cli.app import app
from tests.helpers import REPO

runner = CliRunner()


@pytest.mark.parametrize("domain,scale,rounds", [("sia", "64", 2), ("te", "6", 2), ("lb", "16x2", 1)])
def test_demo_json_has_one_successful_report_per_round(domain, scale, rounds, tmp_path):
    res = runner.invoke(app, ["demo", "--domain", domain, "--scale", scale, "--rounds", str(rounds),
                              "--dir", str(tmp_path / "d"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    reps = out["rounds"]
    assert [r["round"] for r in reps] == list(range(rounds + 1))
    assert all(r["status"] in ("OPTIMAL", "FEASIBLE") for r in reps)
    assert all(r["delta_rows"] > 0 for r in reps[1:])
    assert all(r["delta_from"] == f"round {r['round'] - 1} solution" for r in reps[1:])
    assert (tmp_path / "d" / "base.parquet").exists()
    assert (tmp_path / "d" / f"delta_{rounds:04d}.parquet").exists()


def test_demo_prints_a_table_on_stderr_and_removes_its_temporary_folder(tmp_path):
    res = runner.invoke(app, ["demo", "--domain", "te", "--scale", "5", "--rounds", "1"])
    assert res.exit_code == 0, res.output
    assert "round" in res.output and "vs cold" in res.output
    assert not list(tmp_path.glob("copter-demo-*"))


def test_demo_runs_without_the_examples_folder(tmp_path):
    code = ("import sys; sys.modules['examples'] = None\n"
            "from copter_cli.app import main\n"
            "sys.argv = ['copter', 'demo', '--domain', 'te', '--scale', '5', '--rounds', '1', '--json']\n"
            "main()\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert res.returncode == 0, res.stderr
    assert len(json.loads(res.stdout)["rounds"]) == 2


@pytest.mark.parametrize("args", [["--domain", "weather"], ["--rounds", "-1"], ["--domain", "lb", "--scale", "big"]])
def test_demo_usage_errors_exit_2_with_a_json_error(args):
    res = runner.invoke(app, ["demo", *args, "--json"])
    assert res.exit_code == exit_codes.USAGE
    assert json.loads(res.stdout)["error"]["kind"] == "usage"


def test_demo_refuses_a_directory_that_already_holds_a_state(tmp_path):
    d = tmp_path / "d"
    assert runner.invoke(app, ["demo", "--domain", "te", "--scale", "5", "--rounds", "0", "--dir", str(d)]).exit_code == 0
    res = runner.invoke(app, ["demo", "--domain", "te", "--scale", "5", "--rounds", "0", "--dir", str(d), "--json"])
    assert res.exit_code == exit_codes.USAGE


def test_demo_refuses_a_directory_holding_files_it_would_replace(tmp_path):
    """Hunt 37b: a user's own base.parquet and delta_0001.parquet in --dir were replaced without a word."""
    d = tmp_path / "d"
    d.mkdir()
    (d / "base.parquet").write_text("mine")
    (d / "delta_0001.parquet").write_text("mine too")
    res = runner.invoke(app, ["demo", "--domain", "te", "--scale", "5", "--rounds", "1", "--dir", str(d), "--json"])
    error = json.loads(res.stdout)["error"]
    assert res.exit_code == exit_codes.USAGE and "already holds base.parquet (and 1 more)" in error["message"]
    assert sorted(p.name for p in d.iterdir()) == ["base.parquet", "delta_0001.parquet"]
    assert (d / "base.parquet").read_text() == "mine" and (d / "delta_0001.parquet").read_text() == "mine too"
    other = tmp_path / "e"  # a folder with other files of the user's is fine
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert runner.invoke(app, ["demo", "--domain", "te", "--scale", "5", "--rounds", "1", "--dir", str(other)]).exit_code == 0
    assert (other / "notes.txt").read_text() == "mine"


def test_vs_cold_compares_the_warm_solve_with_the_same_round_solved_cold(tmp_path):
    from copter_cli.cmd_demo import LEGEND, vs_cold

    res = runner.invoke(app, ["demo", "--domain", "te", "--scale", "6", "--rounds", "2", "--dir",
                              str(tmp_path / "d"), "--json"])
    assert res.exit_code == 0, res.output
    reps = json.loads(res.stdout)["rounds"]
    assert "cold_solve" not in reps[0]
    for r in reps[1:]:  # every warm round has its own cold yardstick: the same problem from scratch
        cs = r["cold_solve"]
        assert cs["status"] == "OPTIMAL" and cs["seconds"] > 0 and cs["engine"] in ("pdhg", "alm")
        warm, cold, ratio = vs_cold(r)
        assert warm == r["seconds"]["solve"] + r["seconds"]["integerize"] and cold == cs["seconds"]
        assert ratio == warm / cold
    assert vs_cold({"seconds": {"solve": 1.0, "integerize": 0.5}, "cold_solve": {"seconds": 3.0}})[2] == 0.5
    assert vs_cold({"seconds": {"solve": 1.0}})[2] is None  # no cold solve: no ratio, not a made-up one
    text = " ".join(LEGEND)
    assert "ALM outer steps" in text and "counts of different engines do not compare" in text


def test_demo_table_shows_the_engine_and_cold_seconds_and_claims_no_compilation(tmp_path):
    res = runner.invoke(app, ["demo", "--domain", "te", "--scale", "5", "--rounds", "1"])
    assert res.exit_code == 0, res.output
    assert "engine" in res.output and "cold s" in res.output and "vs cold" in res.output
    assert "first-call compilation" not in res.output and "compiled before" in res.output


def test_demo_answer_is_on_stdout_and_its_progress_on_stderr(tmp_path):
    """``copter demo > out.txt``: the table, its legend, the total and the next steps in the file; the scenario
    line and the per-round progress lines on stderr (they were printed on stdout, into the user's pipe)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=str(tmp_path / "no-worker"))
    with open(tmp_path / "answer.txt", "w") as out:
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "demo", "--domain", "te", "--scale", "5",
                               "--rounds", "2"], stdout=out, stderr=subprocess.PIPE, text=True, env=env, timeout=600)
    answer, err = (tmp_path / "answer.txt").read_text(), proc.stderr
    assert proc.returncode == 0, err
    assert "copter demo: te (" in answer and "rounds" in answer and "vs cold" in answer  # the titled table
    assert "lower is better" in answer and answer.count("total ") == 1 and "look closer:" in answer
    assert "files in a temporary folder" not in answer
    assert ": OPTIMAL objective " not in answer, answer  # the per-round progress lines
    assert "copter demo: te (" in err and "files in a temporary folder" in err
    for r in range(3):
        assert f"  round {r}: OPTIMAL objective " in err, err
    assert "vs cold" not in err and "look closer" not in err


def test_the_demos_report_hint_names_the_plot_extra_when_matplotlib_is_missing(monkeypatch, capsys, tmp_path):
    """``copter report`` exits 8 without the plot extra: the demo's last line must not send a user without it there
    unwarned (a new user's trial of the README's runtime-only install)."""
    import importlib.util

    from copter_cli import cmd_demo

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    cmd_demo._next_steps(tmp_path / "state")
    cmd_demo._next_steps(None)
    out = capsys.readouterr().out
    assert out.count("copter report --state") == 2 and out.count("pip install '.[plot]'") == 2, out
    assert "copter[plot]" not in out and out.count("`pip install 'matplotlib") == 2, out
    assert out.count("'`, copter's optional extra") == 2, out  # only the command in backticks: pasteable
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "matplotlib" else real(name, *a))
    cmd_demo._next_steps(tmp_path / "state")
    out = capsys.readouterr().out
    assert "copter report --state" in out and "[plot]" not in out, out


def test_the_legend_explains_every_engine_a_demo_shows(tmp_path):
    """A small Sia demo (64 GPUs: a MILP of at most 3,000 nonzeros, HiGHS first) shows engine "highs" with 0
    iterations; the legend named only pdhg and alm, so the 0 read as no work."""
    from copter_cli.cmd_demo import LEGEND

    res = runner.invoke(app, ["demo", "--scale", "64", "--rounds", "1", "--json"])
    assert res.exit_code == 0, res.output
    engines = {r["engine"] for r in json.loads(res.stdout)["rounds"]}
    legend = " ".join(LEGEND)
    assert engines and all(f"{e}:" in legend for e in engines), (engines, legend)
