"""The progress line of a partitioned round: its parts run in worker processes, whose LP core's progress the
command's process never heard (the line showed only "solving 8.5 s"); now the workers write their measures
on a shared board and the waiting process reports parts done / K and the slowest running part's measures."""

from __future__ import annotations

import math

from copter_cli.progress import format_line
from solver.lp.pdhg import progress_callback
from solver.model.settings import Settings
from solver.partition.executor import run_parts
from solver.workloads import make_scenario


def test_running_parts_report_their_progress_to_the_waiting_process():
    p = make_scenario("te", 96, seed=9).base()  # 22,332 columns
    # a tolerance it cannot reach and an iteration budget (no time limit: a command clock left registered by an
    # earlier test would end a timed solve at once): thousands of iterations, several board reads
    settings = Settings(tol=1e-14, threads=1, presolve="off", iteration_limit=4000, time_limit_seconds=math.inf)
    seen: list[dict] = []
    with progress_callback(seen.append):
        outs = run_parts([(p, settings, None), (p, settings, None)], "process", 2)
    assert len(outs) == 2
    assert seen, "no progress report"
    assert all(s["parts"] == 2 and 0 <= s["parts_done"] < 2 for s in seen)
    measured = [s for s in seen if "part" in s]
    assert measured, "no running part reported its measures"
    last = measured[-1]
    assert last["part"] in (0, 1) and last["iteration"] > 0 and last["primal_residual_rel"] >= 0
    line = format_line(last, 3.0, float("inf"), None)
    assert "parts done" in line and f"slowest part {last['part']}" in line and "iter" in line and "gap" in line


def test_progress_line_before_any_part_reported():
    assert format_line({"parts": 4, "parts_done": 0}, 2.5, float("inf"), None) == "solving 2.5 s  parts done 0/4"
