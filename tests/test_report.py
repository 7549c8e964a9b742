"""``copter report`` (issue #19): one self-contained HTML page whose numbers are the round log's, charts as
PNG with --png, typed errors before any work, and exit 8 naming ``pip install 'copter[plot]'`` when
matplotlib cannot be imported (tested in a subprocess where it is made unimportable)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import REPO, infeasible_delta, small_lp
from tests.report_helpers import assert_page_numbers_are_the_logs, table_rows

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")

runner = CliRunner()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def cli(*args):
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    """Round 0, three warm rounds, a failed (infeasible) round, and a compare with HiGHS on the current one."""
    root = tmp_path_factory.mktemp("report") / "st"
    rounds.init(small_lp(), root)
    for i in range(3):
        rounds.step(Delta.vars([f"x{i}"], cost=[3.0 + i]), root)
    rounds.step(infeasible_delta(), root, Settings(tol=1e-6, iteration_limit=20000), force=True)
    rounds.compare(root, ["highs"])
    return root


def test_the_page_is_self_contained_and_its_numbers_are_the_logs(state, tmp_path):
    out = tmp_path / "r.html"
    code, stdout, _ = cli("report", "--state", state, "-o", out, "--png", tmp_path / "png", "--json")
    res = json.loads(stdout)
    assert code == 0 and res["output"] == str(out) and res["rounds"] == 5 and res["failed"] == 1
    page = out.read_text()
    assert "<script" not in page and "<link" not in page and "<img" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)  # nothing to fetch
    assert not re.search(r"url\(\s*['\"]?(https?:|//)", page)
    assert page.count("<svg") >= 4 and all(f'id="chart-{n}"' in page for n in
                                           ("round-time", "objective", "iterations", "churn"))
    history = rounds.history(state)
    assert_page_numbers_are_the_logs(table_rows(page), history)
    assert "PRIMAL_INFEASIBLE" in page and "CURRENT stays at round 3" in page  # the failed round and why
    cmp = table_rows(page, "compare")
    assert {(r["round"], r["method"]) for r in cmp} == {("3", "copter"), ("3", "highs")}
    highs = next(r for r in cmp if r["method"] == "highs")
    assert float(highs["seconds"]) == history[3]["compare"]["highs"]["seconds"]
    pngs = sorted(os.listdir(tmp_path / "png"))
    assert pngs == ["churn.png", "iterations.png", "objective.png", "round-time.png"] == \
        sorted(os.path.basename(p) for p in res["png"])
    for name in pngs:
        data = (tmp_path / "png" / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000, name


def test_last_limits_the_page_to_the_newest_rounds(state, tmp_path):
    out = tmp_path / "r.html"
    assert cli("report", "--state", state, "-o", out, "--last", "2")[0] == 0
    assert_page_numbers_are_the_logs(table_rows(out.read_text()), rounds.history(state, 2))
    assert [r["round"] for r in table_rows(out.read_text())] == ["3", "4"]


def test_unusable_paths_and_a_missing_state_are_refused_before_any_work(state, tmp_path):
    (tmp_path / "afile").write_text("x")
    for args, code_, kind in (
        (("-o", tmp_path), 2, "usage"),
        (("-o", tmp_path / "missing" / "r.html"), 2, "usage"),
        (("-o", tmp_path / "r.html", "--png", tmp_path / "afile"), 2, "usage"),
        (("-o", tmp_path / "r.html", "--last", "0"), 2, "usage"),
    ):
        code, out, _ = cli("report", "--state", state, *args, "--json")
        assert (code, json.loads(out)["error"]["kind"]) == (code_, kind), args
    code, out, _ = cli("report", "--state", tmp_path / "nostate", "-o", tmp_path / "r.html", "--json")
    assert code == 3 and json.loads(out)["error"]["kind"] == "state"
    assert not (tmp_path / "r.html").exists()


def test_without_matplotlib_report_exits_8_naming_the_extra(state, tmp_path):
    """matplotlib made unimportable in a fresh process (sys.modules entry None): exit 8, the message names
    matplotlib's pip install (and the extra, ``.[plot]`` from a checkout), nothing is written; history still works without it."""
    code = ("import sys; sys.modules['matplotlib'] = None\n"
            "from copter_cli.app import main\n"
            "main(sys.argv[1:])\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = tmp_path / "r.html"
    for json_flag in ([], ["--json"]):
        proc = subprocess.run([sys.executable, "-c", code, "report", "--state", str(state), "-o", str(out),
                               *json_flag], env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 8, proc.stderr
        assert "pip install 'matplotlib" in proc.stderr and "pip install '.[plot]'" in proc.stderr, proc.stderr
        assert "copter[plot]" not in proc.stderr, proc.stderr
        if json_flag:
            err = json.loads(proc.stdout)["error"]
            assert (err["code"], err["kind"], err["package"]) == (8, "missing_dependency", "matplotlib")
    assert not out.exists()
    # no state is exit 3 without matplotlib too (it was exit 8: the missing extra was checked first; helper-160)
    proc = subprocess.run([sys.executable, "-c", code, "report", "--state", str(tmp_path / "none"), "-o", str(out),
                           "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3 and json.loads(proc.stdout)["error"]["kind"] == "state", proc.stderr
    proc = subprocess.run([sys.executable, "-c", code, "history", "--state", str(state), "--json"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and len(json.loads(proc.stdout)["rounds"]) == 5


def test_a_state_written_before_the_round_log_gets_a_report_of_its_kept_rounds(state, tmp_path):
    import shutil

    old = tmp_path / "old"
    shutil.copytree(state, old)
    shutil.rmtree(old / "log")
    out = tmp_path / "old.html"
    code, stdout, _ = cli("report", "--state", old, "-o", out, "--json")
    assert code == 0 and json.loads(stdout)["rounds"] == 5  # keep 5: rounds 0-3 and the failed record
    page = table_rows(out.read_text())
    assert_page_numbers_are_the_logs(page, rounds.history(old))
    assert [r["kind"] for r in page] == ["generation"] * 4 + ["failed"]


def test_two_failed_attempts_get_distinct_labels_and_the_gap_panel_has_decade_labels_only(tmp_path):
    from matplotlib.ticker import NullFormatter

    from solver.rounds.report import charts, page

    root = tmp_path / "st"
    rounds.init(small_lp(), root)
    rounds.step(Delta.vars(["x1"], cost=[3.0]), root)
    for _ in range(2):  # two failed attempts at round 2, then round 2
        assert not rounds.step(infeasible_delta(), root, force=True)["accepted"]
    rounds.step(Delta.vars(["x2"], cost=[4.0]), root)
    rows = rounds.history(root)
    assert charts.slot_labels(rows) == ["0", "1", "2\u27171", "2\u27172", "2"]
    fig = charts.objective(rows)
    top, gap = fig.axes
    assert [t.get_text() for t in gap.get_xticklabels()] == ["0", "1", "2\u27171", "2\u27172", "2"]
    assert gap.get_yscale() == "log" and isinstance(gap.yaxis.get_minor_formatter(), NullFormatter)
    # the churn caption states the rule the code applies (README: tol x max(1, |old|, |new|)), not 1e-6
    assert "max(1, |old|, |new|)" in page.CAPTIONS["churn"] and "1e-6" not in page.CAPTIONS["churn"]
    assert "1e-6" not in charts.churn.__doc__


def test_the_gap_caption_states_the_formula_each_kind_of_round_is_plotted_with(state):
    """The caption gave the LP rounds' formula for every round, half a MILP round's gap (helper-236: Sia 512, the
    page's gap 3.357e-05 where its caption's formula gave 1.677e-05)."""
    from solver.integer.gap import gap_rel
    from solver.rounds.report import page

    cap = page.CAPTIONS["objective"]
    assert "|objective - bound| / |objective|" in cap and "|objective - bound| / (1 + |objective| + |bound|)" in cap
    lp = [r for r in rounds.history(state) if r["gap_rel"] is not None]
    assert lp and all(r["gap_rel"] == pytest.approx(abs(r["objective"] - r["lp_bound"])
                                                    / (1 + abs(r["objective"]) + abs(r["lp_bound"])), abs=1e-15)
                      for r in lp)
    assert gap_rel(1, 103.0, 100.0) == pytest.approx(3.0 / 103.0)  # a MILP round's (solver.integer.gap)


def test_a_milp_round_without_a_finite_bound_gets_its_page_and_charts(tmp_path):
    """hunt 56: an integer column kept >= 0 only by its cost (the documented case of a MILP round without a finite
    bound: lp_bound -inf, gap_rel inf) made ``copter report`` exit 1 for the whole state, nothing written."""
    import numpy as np

    rng = np.random.default_rng(3)
    n_clients, n_servers = 30, 6
    xs = [f"c{i}/x{j}" for i in range(n_clients) for j in range(n_servers)]
    outs = [f"c{i}/o" for i in range(n_clients)]
    var, con = [], []
    for i in range(n_clients):
        for j in range(n_servers):
            var += [f"c{i}/x{j}"] * 2
            con += [f"d{i}", f"cap{j}"]
        var.append(f"c{i}/o")
        con.append(f"d{i}")
    base = Delta.concat([
        Delta.vars(xs + outs, cost=list(rng.uniform(1, 10, len(xs))) + [100.0] * n_clients,
                   upper=[1.0] * len(xs) + [None] * n_clients, integer=[True] * (len(xs) + n_clients)),
        Delta.cons([f"d{i}" for i in range(n_clients)] + [f"cap{j}" for j in range(n_servers)],
                   lower=[1.0] * n_clients + [None] * n_servers, upper=[None] * n_clients + [4.0] * n_servers),
        Delta.coefs(var=var, con=con, value=[1.0] * len(var))])
    from solver.differential.apply import apply_delta
    from solver.model.problem import Problem

    st = tmp_path / "st"
    rep = rounds.init(apply_delta(Problem.empty(), base)[0], st, Settings(engine="pdhg", integer_fallback="none"))
    assert rep["lp_bound"] == -np.inf and rep["gap_rel"] == np.inf, rep  # the case under test
    code, out, err = cli("report", "--state", st, "-o", tmp_path / "r.html", "--png", tmp_path / "png", "--json")
    assert code == 0, (out, err)
    assert json.loads(out)["rounds"] == 1 and (tmp_path / "r.html").stat().st_size > 0
    assert sorted(p.name for p in (tmp_path / "png").iterdir()) == sorted(
        ["round-time.png", "objective.png", "iterations.png", "churn.png"])


def test_a_page_that_cannot_be_written_takes_the_png_folder_it_made_away(state, tmp_path, monkeypatch, capsys):
    """hunt 56: the page's write failing (a read-only file system, here an injected EROFS at the command's first
    write) left the new, empty ``--png`` folder (and its new parents) behind; a folder that was there stays."""
    from formats.faults import reset_io_faults
    from tests.helpers import run_main

    for png, there, left in ((tmp_path / "new" / "deeper" / "png", tmp_path, []),
                             (tmp_path / "old", tmp_path / "old", ["old"])):
        there.mkdir(exist_ok=True)
        monkeypatch.setenv("COPTER_FAULT_ERRNO", "EROFS@1")
        reset_io_faults()
        code, out, _ = run_main(capsys, "report", "--state", state, "-o", tmp_path / "r.html", "--png", png, "--json")
        monkeypatch.delenv("COPTER_FAULT_ERRNO")
        reset_io_faults()
        err = json.loads(out)["error"]
        assert code == 7 and err["errno"] == "EROFS" and "r.html" in err["file"], out
        assert not (tmp_path / "r.html").exists() and there.is_dir()
        assert sorted(p.name for p in tmp_path.iterdir()) == left, list(tmp_path.iterdir())
