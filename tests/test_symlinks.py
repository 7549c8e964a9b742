"""No output follows a symbolic link at its destination, and nothing under a state directory is followed
outside it (issue #16 item 3).

Outputs (``solve -o``, ``export -o``, ``convert``, ``diff -o``, the files in ``--out DIR``) are written to a
temporary file in the same folder and renamed over the destination: a planted link is replaced by the
file and its target outside stays byte-identical. Inside the state, a symlinked ``CURRENT``,
``config.json``, ``abandoned/``, ``failed/`` (or a record in it) or ``gen-*`` is refused with exit 3 naming
it; a symlinked file inside a generation makes that generation incomplete (never read).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import infeasible_delta, run_main, small_lp, snapshot

SECRET = b"outside the output folder: must stay as it is\n"


@pytest.fixture
def outside(tmp_path) -> Path:
    """A folder outside every output folder, holding a file a planted link points to."""
    d = tmp_path / "outside"
    d.mkdir()
    (d / "victim").write_bytes(SECRET)
    return d


def plant(link: Path, outside: Path) -> Path:
    """A symbolic link at ``link`` to the victim file (returned)."""
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(outside / "victim")
    return outside / "victim"


def assert_replaced(link: Path, victim: Path) -> None:
    assert victim.read_bytes() == SECRET, "the link's target was written through"
    assert link.is_file() and not link.is_symlink() and link.stat().st_size > 0


@pytest.fixture
def base(tmp_path) -> Path:
    p = tmp_path / "base.parquet"
    write_problem(small_lp(), p)
    return p


@pytest.fixture
def st(tmp_path, base) -> Path:
    rounds.init(base, tmp_path / "st")
    return tmp_path / "st"


# ------------------------------------------------------------------------------------------ outputs

def test_solve_output_and_its_duals_replace_planted_links(capsys, tmp_path, base, outside):
    out = tmp_path / "res" / "x.parquet"
    victim = plant(out, outside)
    plant(tmp_path / "res" / "x.duals.parquet", outside)
    code, js, _ = run_main(capsys, "solve", base, "-o", out, "--json")
    assert code == 0, js
    assert_replaced(out, victim)
    assert_replaced(tmp_path / "res" / "x.duals.parquet", victim)


@pytest.mark.parametrize("name", ["r.mps", "r.mps.gz", "r.parquet"])
def test_export_replaces_a_planted_link(capsys, tmp_path, st, outside, name):
    out = tmp_path / "exp" / name
    victim = plant(out, outside)
    code, js, _ = run_main(capsys, "export", "-o", out, "--state", st, "--json")
    assert code == 0, js
    assert_replaced(out, victim)
    assert json.loads(js)["output"] == str(out)


@pytest.mark.parametrize("name", ["c.mps", "c.mps.gz", "c.parquet"])
def test_convert_replaces_a_planted_link(capsys, tmp_path, base, outside, name):
    out = tmp_path / "conv" / name
    victim = plant(out, outside)
    code, js, _ = run_main(capsys, "convert", base, out, "--json")
    assert code == 0, js
    assert_replaced(out, victim)


def test_diff_output_replaces_a_planted_link(capsys, tmp_path, base, outside):
    new = tmp_path / "new.parquet"
    write_problem(small_lp(seed=1), new)
    out = tmp_path / "dd" / "delta.parquet"
    victim = plant(out, outside)
    code, js, _ = run_main(capsys, "diff", base, new, "-o", out, "--json")
    assert code == 0, js
    assert_replaced(out, victim)


def test_files_inside_out_replace_planted_links(capsys, tmp_path, st, outside):
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    out = tmp_path / "out"
    names = ("solution.parquet", "duals.parquet", "changes.parquet", "report.json")
    victim = None
    for n in names:
        victim = plant(out / n, outside)
    code, js, _ = run_main(capsys, "step", d, "--state", st, "--out", out, "--json")
    assert code == 0, js
    for n in names:
        assert_replaced(out / n, victim)
    assert json.loads((out / "report.json").read_text())["round"] == 1


def test_a_failed_write_leaves_the_destination_as_it_was(capsys, tmp_path, st):
    # an MPS export that cannot hold a name writes nothing: the old file at the destination stays
    out = tmp_path / "keep.mps"
    out.write_bytes(b"old content\n")
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["has space"], cost=[1.0], upper=[1.0]),
                              Delta.coefs(["has space"], ["cap0"], [1.0])], base_round=0), d)
    assert run_main(capsys, "step", d, "--state", st, "--json")[0] == 0
    code, _, _ = run_main(capsys, "export", "-o", out, "--state", st, "--json")
    assert code == 3 and out.read_bytes() == b"old content\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".keep.mps")] == []


# ------------------------------------------------------------------------------------------ the state

def _branch(tmp_path: Path, st: Path) -> Path:
    """Round 1 stored and rolled back: the next step moves it into abandoned/."""
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    rounds.step(d, st)
    rounds.rollback(st, 0)
    d2 = tmp_path / "d2.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[7.0])], base_round=0), d2)
    return d2


def test_a_symlinked_abandoned_folder_is_refused_naming_it(capsys, tmp_path, st):
    d2 = _branch(tmp_path, st)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (st / "abandoned").symlink_to(elsewhere)
    before = snapshot(st)
    code, js, _ = run_main(capsys, "step", d2, "--state", st, "--json")
    err = json.loads(js)["error"]
    assert code == 3 and err["file"] == str(st / "abandoned") and "symbolic link" in err["message"]
    assert list(elsewhere.iterdir()) == [] and snapshot(st) == before  # no generation moved out
    (st / "abandoned").unlink()
    code, js, _ = run_main(capsys, "step", d2, "--state", st, "--json")
    assert code == 0 and (st / "abandoned").is_dir() and not (st / "abandoned").is_symlink()


@pytest.mark.parametrize("name", ["failed", "gen-000002", "CURRENT", "config.json"])
def test_symlinked_names_in_the_state_are_refused_by_every_command(capsys, tmp_path, st, name):
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    rounds.step(d, st)
    elsewhere = tmp_path / "elsewhere"
    if name in ("CURRENT", "config.json"):
        elsewhere.write_bytes((st / name).read_bytes())
        (st / name).unlink()
    else:
        elsewhere.mkdir()
    (st / name).symlink_to(elsewhere)
    outside_before = snapshot(tmp_path / "elsewhere") if elsewhere.is_dir() else elsewhere.read_bytes()
    before = snapshot(st)
    d2 = tmp_path / "d2.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[6.0])], base_round=1), d2)
    for cmd in (["step", d2], ["show"], ["history"], ["rollback"], ["export", "-o", tmp_path / "e.mps"]):
        code, js, _ = run_main(capsys, *cmd, "--state", st, "--json")
        err = json.loads(js)["error"]
        assert code == 3 and err["file"] == str(st / name) and "symbolic link" in err["message"], (cmd, err)
    assert snapshot(st) == before
    after = snapshot(tmp_path / "elsewhere") if elsewhere.is_dir() else elsewhere.read_bytes()
    assert after == outside_before


def test_a_symlinked_failed_record_is_refused(capsys, tmp_path, st):
    bad = tmp_path / "bad.parquet"
    write_delta(infeasible_delta(), bad)
    rounds.step(bad, st)
    rec = next((st / "failed").iterdir())
    moved = tmp_path / "rec"
    rec.rename(moved)
    rec.symlink_to(moved)
    code, js, _ = run_main(capsys, "show", "--state", st, "--json")
    assert code == 3 and json.loads(js)["error"]["file"] == str(rec)


def test_a_symlinked_array_file_makes_its_generation_incomplete(capsys, tmp_path, st, outside):
    f = st / "gen-000000" / "problem" / "cost.arrow"
    copy = outside / "cost.arrow"
    copy.write_bytes(f.read_bytes())
    f.unlink()
    f.symlink_to(copy)
    before = copy.read_bytes()
    code, js, _ = run_main(capsys, "show", "--state", st, "--json")
    code2, js2, _ = run_main(capsys, "export", "-o", tmp_path / "e.mps", "--state", st, "--json")
    assert code2 == 3 and "problem/cost.arrow is a symbolic link, not a regular file" in json.loads(js2)["error"]["message"]
    assert copy.read_bytes() == before
