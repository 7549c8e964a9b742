"""A numeric option out of its range is copter's usage error, like a negative ``--time-limit``: exit 2 with the one
line ``error (usage, exit 2): --wait must be >= 0 ...`` naming the option (JSON with ``--json``), not click's
"Usage: ... Invalid value for '--wait': -1.0 is not in the range x>=0.0." box, which typer's ``min=`` printed
(and which named no bound above 1 for ``--partition-passes``, whose range is 1-50). ``--help`` still states
each range."""

from __future__ import annotations

import json

import pytest

from formats.io import write_problem
from solver.partition.limits import MAX_PASSES
from tests.helpers import run_main, small_lp

CASES = [
    (["step", "x.parquet", "--state", "{st}", "--wait", "-1"], "--wait", ">= 0"),
    (["rollback", "--state", "{st}", "--wait", "-0.5"], "--wait", ">= 0"),
    (["init", "{base}", "--state", "{st}", "--wait", "-1"], "--wait", ">= 0"),
    (["init", "{base}", "--state", "{st}", "--partitions", "0"], "--partitions", ">= 1"),
    (["init", "{base}", "--state", "{st}", "--partitions", "2", "--partition-passes", "0"], "--partition-passes",
     f"between 1 and {MAX_PASSES}"),
    (["init", "{base}", "--state", "{st}", "--partitions", "2", "--share-update-every", "-1"],
     "--share-update-every", ">= 0"),
    (["init", "{base}", "--state", "{st}", "--partitions", "2", "--whole-below-nnz", "-1"], "--whole-below-nnz",
     ">= 0"),
    (["worker", "start", "--idle-timeout", "-1"], "--idle-timeout", ">= 0"),
    (["worker", "start", "--timeout", "-1"], "--timeout", ">= 0"),
    (["worker", "stop", "--timeout", "-1"], "--timeout", ">= 0"),
    # demo --seed -1 was exit 1 (numpy's generator refused it); diff --base-round -1 wrote a delta every step refused
    (["demo", "--rounds", "0", "--dir", "{st}", "--seed", "-1"], "--seed", ">= 0"),
    (["diff", "{base}", "{base}", "-o", "{st}", "--base-round", "-1"], "--base-round",
     "between 0 and 999999999999999999"),
    # a round of 19+ digits: diff wrote it (exit 0) and every step refused the delta (exit 3, "at most 18")
    (["diff", "{base}", "{base}", "-o", "{st}", "--base-round", "1" + "0" * 18], "--base-round",
     "between 0 and 999999999999999999"),
]


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("args,flag,bound", CASES, ids=[" ".join(c[0][:1] + c[0][-2:]) for c in CASES])
def test_an_out_of_range_value_is_copters_usage_error(tmp_path, capsys, args, flag, bound, json_out):
    base = tmp_path / "b.parquet"
    write_problem(small_lp(), base)
    st = tmp_path / "st"
    argv = [a.format(st=st, base=base) for a in args] + (["--json"] if json_out else [])
    code, out, err = run_main(capsys, *argv)
    assert code == 2, (code, out, err)
    assert "Invalid value" not in err and "Usage:" not in err, err
    line = err.strip()
    assert line.startswith("error (usage, exit 2): ") and "\n" not in line, err
    assert flag in line and f"must be {bound}" in line, line
    if json_out:
        assert json.loads(out)["error"] == {"code": 2, "kind": "usage", "message": line.split(": ", 1)[1]}
    assert not st.exists()  # nothing was started: the check comes first


@pytest.mark.parametrize("args,flag,shown", [
    (["init"], "--partition-passes", f"[1<=x<={MAX_PASSES}]"),
    (["init"], "--whole-below-nnz", "[x>=0]"),
    (["init"], "--wait", "[x>=0]"),
    (["step"], "--wait", "[x>=0]"),
    (["worker", "start"], "--idle-timeout", "[x>=0]"),
])
def test_help_states_the_range(capsys, args, flag, shown):
    code, out, _ = run_main(capsys, *args, "--help")
    assert code == 0
    text = " ".join(out.split())
    after = text[text.index(flag):]
    assert shown in after[:400], after[:400]
