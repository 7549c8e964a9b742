"""``copter export -o FILE.parquet`` records the round it exported (schema metadata ``copter.round``), and
``copter diff OLD NEW`` without ``--base-round`` records that round as the delta's ``copter.base_round`` when OLD
is such an export: the export -> edit -> diff -> step loop needs no ``--base-round`` and its step no longer warns
that the delta has no base round. Only an export carries the key (a ``convert``ed copy or an MPS export does not:
nothing is filled in then), and only while OLD is still that export: a copy edited with pyarrow keeps the schema
metadata but not the digest of its content (``copter.problem_sha256``), and then nothing is filled in, with a
warning. ``--base-round`` still wins, with a warning when it contradicts OLD's round."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from formats.io import read_delta, read_problem, write_problem
from tests.helpers import run_main, small_lp_state


def _state_at_round_1(tmp_path, capsys):
    st, d1 = small_lp_state(tmp_path)
    code, out, _ = run_main(capsys, "step", d1, "--state", st, "--json")
    assert code == 0, out
    return st


def _edited(src, dst):
    """NEW: the problem of ``src`` with one cost changed, written as a producer would (no copter.round)."""
    p = read_problem(src)
    cost = p.cost.copy()
    cost[5] += 1.0
    write_problem(p.replace(cost=cost), dst)


def test_diff_against_an_export_records_its_round_and_the_step_applies_without_warning(tmp_path, capsys):
    st = _state_at_round_1(tmp_path, capsys)
    code, out, _ = run_main(capsys, "export", "--state", st, "-o", tmp_path / "r1.parquet")
    assert code == 0 and "copter.round 1" in out, out
    _edited(tmp_path / "r1.parquet", tmp_path / "new.parquet")
    code, out, _ = run_main(capsys, "diff", tmp_path / "r1.parquet", tmp_path / "new.parquet", "-o",
                            tmp_path / "d2.parquet", "--json")
    res = json.loads(out)
    assert code == 0 and res["base_round"] == 1 and res["base_round_from"] == "OLD" and "warnings" not in res, out
    assert read_delta(tmp_path / "d2.parquet").base_round == 1
    code, out, err = run_main(capsys, "step", tmp_path / "d2.parquet", "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 2, out
    assert "base_round" not in err and "warnings" not in json.loads(out), (out, err)


def test_a_kept_older_round_exported_gives_that_round(tmp_path, capsys):
    st = _state_at_round_1(tmp_path, capsys)
    run_main(capsys, "export", "--state", st, "--round", "0", "-o", tmp_path / "r0.parquet")
    _edited(tmp_path / "r0.parquet", tmp_path / "new.parquet")
    code, out, _ = run_main(capsys, "diff", tmp_path / "r0.parquet", tmp_path / "new.parquet", "-o",
                            tmp_path / "d.parquet")
    assert code == 0 and "copter.base_round 0: OLD is round 0's export" in out, out
    assert read_delta(tmp_path / "d.parquet").base_round == 0


def test_no_round_without_an_export_mps_or_converted(tmp_path, capsys):
    st = _state_at_round_1(tmp_path, capsys)
    code, out, _ = run_main(capsys, "export", "--state", st, "-o", tmp_path / "r1.mps")
    assert code == 0 and "--base-round 1" in out, out  # MPS holds no round: the export says what to give diff
    run_main(capsys, "export", "--state", st, "-o", tmp_path / "r1.parquet")
    run_main(capsys, "convert", tmp_path / "r1.parquet", tmp_path / "copy.parquet")
    _edited(tmp_path / "r1.parquet", tmp_path / "new.parquet")
    for old in ("r1.mps", "copy.parquet"):
        code, out, _ = run_main(capsys, "diff", tmp_path / old, tmp_path / "new.parquet", "-o", tmp_path / "d.parquet",
                                "--json")
        res = json.loads(out)
        assert code == 0 and res["base_round"] is None and res["base_round_from"] is None, (old, out)
        assert read_delta(tmp_path / "d.parquet").base_round is None


def test_base_round_given_wins_and_a_contradiction_warns(tmp_path, capsys):
    st = _state_at_round_1(tmp_path, capsys)
    run_main(capsys, "export", "--state", st, "-o", tmp_path / "r1.parquet")
    _edited(tmp_path / "r1.parquet", tmp_path / "new.parquet")
    code, out, err = run_main(capsys, "diff", tmp_path / "r1.parquet", tmp_path / "new.parquet", "-o",
                              tmp_path / "d.parquet", "--base-round", "4", "--json")
    res = json.loads(out)
    assert code == 0 and res["base_round"] == 4 and res["base_round_from"] == "--base-round", out
    (w,) = res["warnings"]
    assert "export of round 1" in w and "--base-round 4" in w and f"warning: {w}" in err, w
    assert read_delta(tmp_path / "d.parquet").base_round == 4


def test_a_damaged_round_key_is_a_format_error(tmp_path, capsys):
    st = _state_at_round_1(tmp_path, capsys)
    run_main(capsys, "export", "--state", st, "-o", tmp_path / "r1.parquet")
    _edited(tmp_path / "r1.parquet", tmp_path / "new.parquet")
    table = pq.read_table(tmp_path / "r1.parquet")
    meta = {**table.schema.metadata, b"copter.round": b"one"}
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "bad.parquet")
    code, out, _ = run_main(capsys, "diff", tmp_path / "bad.parquet", tmp_path / "new.parquet", "-o",
                            tmp_path / "d.parquet", "--json")
    error = json.loads(out)["error"]
    assert code == 3 and "copter.round" in error["message"] and "bad.parquet" in error["file"], out
    assert not (tmp_path / "d.parquet").exists()


def test_an_export_edited_since_fills_in_nothing_and_says_why(tmp_path, capsys):
    """pyarrow's read_table/write_table keep the schema metadata: the edited file still says copter.round 1, but
    it is not round 1's model any more (the next cycle's OLD, say), so claiming round 1 would be wrong."""
    import pyarrow as pa
    import pyarrow.compute as pc

    st = _state_at_round_1(tmp_path, capsys)
    run_main(capsys, "export", "--state", st, "-o", tmp_path / "r1.parquet")
    table = pq.read_table(tmp_path / "r1.parquet")
    value = table.column("value")
    edited = table.set_column(3, "value", pc.if_else(pc.equal(pa.array(range(len(table))), 0),
                                                     pc.add(value, 1.0), value))
    assert edited.schema.metadata[b"copter.round"] == b"1"  # what makes the check necessary
    pq.write_table(edited, tmp_path / "edited.parquet")
    no_digest = table.replace_schema_metadata({k: v for k, v in table.schema.metadata.items()
                                               if k != b"copter.problem_sha256"})
    pq.write_table(no_digest, tmp_path / "nodigest.parquet")
    _edited(tmp_path / "r1.parquet", tmp_path / "new.parquet")
    for old, why in (("edited.parquet", "edited since"), ("nodigest.parquet", "no copter.problem_sha256")):
        code, out, err = run_main(capsys, "diff", tmp_path / old, tmp_path / "new.parquet", "-o",
                                  tmp_path / "d.parquet", "--json")
        res = json.loads(out)
        assert code == 0 and res["base_round"] is None and res["base_round_from"] is None, out
        (w,) = res["warnings"]
        assert "names round 1" in w and why in w and "--base-round" in w and f"warning: {w}" in err, w
        assert read_delta(tmp_path / "d.parquet").base_round is None


def test_the_digest_survives_the_parquet_round_trip_of_generated_streams(tmp_path):
    """diff can only vouch for an export whose problem, read back, has the digest export wrote: checked on the
    three scenarios' rounds (LP and MILP, entities added and dropped by their deltas)."""
    from formats.exported_round import problem_digest
    from solver.differential import apply_delta
    from solver.workloads import make_scenario

    for domain, scale in (("sia", 64), ("te", 8), ("lb", (32, 4))):
        sc = make_scenario(domain, scale, seed=1)
        p = sc.base()
        for r in range(1, 3):
            p, _ = apply_delta(p, sc.next_delta(r, None))
            write_problem(p, tmp_path / "x.parquet")
            assert problem_digest(read_problem(tmp_path / "x.parquet")) == problem_digest(p), (domain, r)


def test_a_delta_diffed_against_another_branchs_export_of_the_round_is_refused(tmp_path, capsys):
    """After ``rollback`` a new branch makes round 1 again from another delta; a delta diffed against the OLD
    branch's export of round 1 matched ``copter.base_round`` 1 and was applied to a problem it was not made from
    (found by helper-133's sweep of later rounds). ``copter diff`` now also records the export's problem digest
    (``copter.base_problem_sha256``) and ``step`` refuses it (exit 3, state untouched) unless ``--force``."""
    from formats.io import write_delta
    from solver.model.delta import Delta
    from tests.helpers import snapshot

    st = _state_at_round_1(tmp_path, capsys)
    code, out, _ = run_main(capsys, "export", "--state", st, "-o", tmp_path / "r1.parquet")
    assert code == 0, out
    _edited(tmp_path / "r1.parquet", tmp_path / "new.parquet")
    code, out, _ = run_main(capsys, "diff", tmp_path / "r1.parquet", tmp_path / "new.parquet", "-o",
                            tmp_path / "d2.parquet")
    assert code == 0, out
    assert read_delta(tmp_path / "d2.parquet").meta["copter.base_problem_sha256"]
    write_delta(Delta.concat([Delta.vars(["x7"], cost=[4.0])], base_round=0), tmp_path / "other.parquet")
    for args in (("rollback", "--to", "0"), ("step", tmp_path / "other.parquet")):  # round 1 of branch B
        code, out, _ = run_main(capsys, *args, "--state", st)
        assert code == 0, out
    before = snapshot(st)
    code, out, err = run_main(capsys, "step", tmp_path / "d2.parquet", "--state", st, "--json")
    assert code == 3, (out, err)
    error = json.loads(out)["error"]
    assert error["kind"] == "round_mismatch" and "copter.base_problem_sha256" in error["message"], error
    assert "round 1 holds another problem" in error["message"], error
    assert snapshot(st) == before
    code, out, err = run_main(capsys, "step", tmp_path / "d2.parquet", "--state", st, "--force", "--json")
    assert code == 0, (out, err)
    assert any("applied with --force" in w and "another problem" in w for w in json.loads(out)["warnings"]), out
