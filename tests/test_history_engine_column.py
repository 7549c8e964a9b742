"""The human outputs name each round's LP engine beside its iteration count, whose unit depends on it (PDHG
iterations, ALM outer steps): ``copter history``'s table has an ``engine`` column (and the ``wait`` phase that
its CSV and JSON carry as ``seconds_wait``), and the round report of ``init``/``step``/``show`` an ``engine``
row. Before, a TE stream's history read "iters 6" and "iters 901" for two warm rounds with nothing saying that
one counted ALM outer steps and the other PDHG iterations; only ``--json``/``--csv`` had the engine."""

from __future__ import annotations

import json
import re

from tests.helpers import run_main, small_lp_state


def _header_and_rows(text: str) -> tuple[list[str], list[list[str]]]:
    lines = text.splitlines()
    i = next(i for i, ln in enumerate(lines) if "round" in ln and "status" in ln)
    cells = [re.split(r"\s{2,}", ln.strip()) for ln in lines[i + 2:] if ln.strip()]
    return re.split(r"\s{2,}", lines[i].strip()), cells


def test_history_table_has_engine_and_wait(tmp_path, capsys):
    st, delta = small_lp_state(tmp_path)
    assert run_main(capsys, "step", delta, "--state", st)[0] == 0
    code, out, _ = run_main(capsys, "history", "--state", st, "--json")
    engines = [r["engine"] for r in json.loads(out)["rounds"]]
    assert code == 0 and all(engines), engines
    code, out, err = run_main(capsys, "history", "--state", st)  # piped: every column
    assert code == 0, err
    header, rows = _header_and_rows(out)
    assert "engine" in header and "wait" in header, header
    assert header.index("engine") == header.index("iters") - 1
    back = len(header) - header.index("engine")  # from the right: the mark column is empty but in one row
    assert [r[-back] for r in rows] == engines
    assert header.index("wait") < header.index("load")
    assert "copter history (times in seconds)" in out  # the phase columns' unit (helper-184: none was said)


def test_round_report_names_its_engine(tmp_path, capsys):
    st, delta = small_lp_state(tmp_path)
    code, out, err = run_main(capsys, "step", delta, "--state", st)
    assert code == 0, err
    engine = [ln.split() for ln in out.splitlines() if ln.split()[:1] == ["engine"]]
    code, js, _ = run_main(capsys, "show", "--state", st, "--json")
    assert engine == [["engine", json.loads(js)["engine"]]], out
    code, shown, _ = run_main(capsys, "show", "--state", st)
    assert [ln.split() for ln in shown.splitlines() if ln.split()[:1] == ["engine"]] == engine
