"""Output defects a fresh-install user found: the demo table cut values at 80 columns, demo --json gave a
null scale and claimed the kernels were compiled before when that run compiled them, show --changes did not
match the report's changed_variables, and `prepare --force` / `worker start` were silent for seconds."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from rich.console import Console

from copter_cli import cmd_demo
from copter_cli.output import LazyConsole
from copter_cli.output import console as shared_console
from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


@pytest.fixture
def terminal80():
    """The shared console, on stderr and (printing an answer) on stdout, as an 80-column terminal writing into a
    buffer."""
    buf = StringIO()
    saved = shared_console.__dict__["_console"], shared_console.__dict__["_answer"]
    term = Console(file=buf, width=80, force_terminal=True, no_color=True, highlight=False, soft_wrap=True)
    answer = LazyConsole()
    answer.__dict__["_console"] = term
    shared_console.__dict__["_console"], shared_console.__dict__["_answer"] = term, answer
    yield buf
    shared_console.__dict__["_console"], shared_console.__dict__["_answer"] = saved


def _report(r: int) -> dict:
    return {"round": r, "status": "OPTIMAL", "objective": 156.25566123, "iterations": 12345, "engine": "pdhg",
            "delta_rows": 1234, "seconds": {"total": 0.862, "solve": 0.703, "integerize": 0.0},
            "cold_solve": None if r == 0 else {"seconds": 0.012, "engine": "alm"}}


def test_demo_table_drops_columns_with_a_note_instead_of_cutting_values(terminal80):
    cmd_demo._table([_report(0), _report(1)], 2.5, {"skipped": True})
    text = terminal80.getvalue()
    assert "…" not in text
    assert "OPTIMAL" in text and "156.25566" in text and "0.862" in text
    assert "note: column(s)" in text and "not shown at 80 columns" in text


def test_demo_total_says_what_this_run_compiled():
    assert "compiled before" in cmd_demo._compiled_note({"skipped": True})
    cold = cmd_demo._compiled_note({"skipped": False, "compiled": 40, "seconds": 250.0})
    assert "this run compiled the kernels first" in cold and "compiled before" not in cold
    assert "this run loaded" in cmd_demo._compiled_note({"skipped": False, "compiled": 0, "seconds": 3.0})


@pytest.mark.parametrize(("domain", "scale", "want"), [("lb", None, "128x16"), ("sia", None, "1024"),
                                                        ("te", None, "24"), ("lb", "64x8", "64x8")])
def test_demo_scale_is_the_one_used(domain, scale, want):
    assert cmd_demo.scale_text(domain, scale) == want


def test_demo_json_reports_the_default_scale(capsys):
    code, out, _ = run_main(capsys, "demo", "--domain", "lb", "--rounds", "0", "--json")
    assert code == 0 and json.loads(out)["scale"] == "128x16"


def test_the_default_demo_runs_sia_at_1024_gpus(capsys):
    """The demo's own size (``solver.workloads.DEMO_SCALES``), not ``make_scenario``'s small default: at 128 GPUs
    a round took milliseconds and its warm / cold ratio was noise (a user's trial, session 35)."""
    from solver.workloads import make_scenario

    code, out, _ = run_main(capsys, "demo", "--rounds", "0", "--json")
    got = json.loads(out)
    base = make_scenario("sia", 1024).base()
    assert code == 0 and got["scale"] == "1024" and got["domain"] == "sia"
    assert (got["rounds"][0]["n_cols"], got["rounds"][0]["n_rows"]) == (base.n_cols, base.n_rows)
    assert make_scenario("sia").base().n_cols != base.n_cols  # the library's default stays the small one


def test_show_changes_counts_agree_with_the_reports_changed_variables(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "b.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "b.parquet", st)
    d = Delta.concat([Delta.vars(["x3"], cost=[50.0]), Delta.vars(["new"], cost=[9.0], upper=[1.0]),
                      Delta.coefs(var=["new"], con=["cap0"], value=[1.0])], base_round=0)
    write_delta(d, tmp_path / "d.parquet")
    rep = rounds.step(tmp_path / "d.parquet", st)
    ch = rounds.show_solution(st, changes=True)["changes"]
    assert ch["vars_added"] == 1
    assert ch["changed_variables"] == rep["changed_variables"]
    code, out, _ = run_main(capsys, "show", "--state", st, "--changes")
    assert code == 0 and f"{rep['changed_variables']} changed variables (the report's changed_variables)" in out


def test_prepare_force_says_what_it_does_before_the_warm_up(capsys, monkeypatch):
    import solver.prepare as sp

    seen = []
    monkeypatch.setattr(sp, "prepare", lambda progress=None, force=True, **_: seen.append(capsys.readouterr().err) or
                        {"skipped": False, "kernels": 1, "compiled": 0, "seconds": 0.1, "stamp": "s"})
    code, _, _ = run_main(capsys, "prepare", "--force")
    assert code == 0 and "warming up the solver kernels" in seen[0]


def test_worker_start_says_it_is_starting(monkeypatch, tmp_path):
    from copter_cli import worker_control

    calls = iter([None, {"running": True, "pid": 1}])
    monkeypatch.setattr(worker_control.wc, "call", lambda *a, **k: next(calls))
    monkeypatch.setattr(worker_control.wc, "paths", lambda: {"dir": str(tmp_path), "socket": str(tmp_path / "s"),
                                                             "log": str(tmp_path / "log"),
                                                             "lock": str(tmp_path / "lock")})
    monkeypatch.setattr(worker_control, "ensure_folder", lambda folder: None)
    monkeypatch.setattr(worker_control, "lock_held", lambda path: False)

    class Proc:
        def poll(self):
            return None

    monkeypatch.setattr(worker_control.subprocess, "Popen", lambda *a, **k: Proc())
    said = []
    res = worker_control.start(0, 5, lambda: None, said.append)
    assert res["running"] and said and "starting the worker" in said[0]
