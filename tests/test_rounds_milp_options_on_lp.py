"""``copter init`` / ``copter step`` given MILP-only options (``--mip-gap``, ``--integer-fallback*``,
``--submip-*``, ``--relaxation-*``) for a round whose model has no integer column warn, in the round's report
(stderr ``warning:``, the JSON's and report.json's ``warnings``), as ``copter solve`` does; exit 0 as before.
They said nothing, so an operator could believe the gap applied. init's warning says the options are stored and
apply once a delta adds integer columns; step's that its options are not stored. A warning, not exit 2: a
stream may gain integer columns through a delta, and the same cron line then serves MILP rounds."""

from __future__ import annotations

import json

from formats.io import write_delta
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp_state


def _warnings(out: str) -> list[str]:
    return json.loads(out).get("warnings") or []


def test_init_warns_and_stores_the_options(tmp_path, capsys):
    from formats.io import write_problem
    from tests.helpers import small_lp

    write_problem(small_lp(), tmp_path / "lp.parquet")
    code, out, err = run_main(capsys, "init", tmp_path / "lp.parquet", "--state", tmp_path / "st", "--mip-gap", "0.1",
                              "--submip-seconds", "0", "--tol", "1e-5", "--json")
    assert code == 0, err
    (w,) = [w for w in _warnings(out) if "MILPs only" in w]
    assert "--submip-seconds, --mip-gap apply to MILPs only" in w and "lp.parquet" in w and "stored" in w, w
    assert "--tol" not in w and f"warning: {w}" in err
    stored = json.loads((tmp_path / "st" / "config.json").read_text())["settings"]
    assert stored["mip_gap_tol"] == 0.1  # kept for later rounds, as the warning says


def test_step_warns_that_its_option_has_no_effect(tmp_path, capsys):
    st, delta = small_lp_state(tmp_path)
    code, out, err = run_main(capsys, "step", delta, "--state", st, "--mip-gap", "0.1", "--json")
    assert code == 0, err
    (w,) = [w for w in _warnings(out) if "MILPs only" in w]
    assert w.startswith("--mip-gap applies to MILPs only and round 1's model has no integer column") and \
        "not stored" in w, w
    assert f"warning: {w}" in err
    assert w in json.loads((st / "gen-000001" / "report.json").read_text())["warnings"]


def test_no_warning_without_them_or_once_a_delta_adds_an_integer_column(tmp_path, capsys):
    st, delta = small_lp_state(tmp_path)
    code, out, err = run_main(capsys, "step", delta, "--state", st, "--tol", "1e-5", "--json")
    assert code == 0 and not [w for w in _warnings(out) if "MILPs only" in w], out
    write_delta(Delta.concat([Delta.vars(["x3"], integer=[True])],
                             base_round=1), tmp_path / "d2.parquet")
    code, out, err = run_main(capsys, "step", tmp_path / "d2.parquet", "--state", st, "--mip-gap", "0.1", "--json")
    assert code == 0 and not [w for w in _warnings(out) if "MILPs only" in w], out
