"""Content checksums in generation.json (formats/checksum.py, docs/statuses-and-exit-codes.md "A damaged current round"): a file whose
bytes changed but whose size did not is damage exactly like a file of another size. Commands that read the
arrays (step, export, compare, show --solution) verify the files they read and fall back to the newest
complete generation with a warning naming the file, or exit 3 when none is left; show/history/rollback read no
array and hash nothing; a generation written before checksums existed keeps the size check only."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from formats import checkpoint
from formats.checkpoint import StateStore
from formats.checksum import file_crc32
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import run_main, small_lp

FILE = "problem/a_data.arrow"


def _delta(base_round: int, name: str, cost: float) -> Delta:
    return Delta.concat([Delta.vars([name], cost=[cost])], base_round=base_round)


def _flip(path: Path) -> None:
    """Invert one byte in the middle of ``path`` in place (same size, same inode)."""
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.seek(size // 2)
        b = f.read(1)
        f.seek(size // 2)
        f.write(bytes([b[0] ^ 0xFF]))
    assert path.stat().st_size == size


def _snapshot(st: Path) -> dict:
    return {str(p.relative_to(st)): p.read_bytes() for p in sorted(st.rglob("*")) if p.is_file()
            and p.name != ".lock" and "rounds" not in p.name}


@pytest.fixture
def state(tmp_path) -> Path:
    """Rounds 0-2 (cost-only deltas: the matrix files are hard links shared by every generation)."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st, Settings())
    for i, (name, cost) in enumerate((("x3", 5.0), ("x4", 6.0))):
        write_delta(_delta(i, name, cost), tmp_path / f"d{i + 1}.parquet")
        rounds.step(tmp_path / f"d{i + 1}.parquet", st)
    checkpoint._RECENT.clear()  # as a new process: this one's in-memory copy of round 2 is not reused
    return st


def test_a_shared_file_keeps_the_checksum_first_recorded(state):
    ino = {r: os.stat(state / f"gen-00000{r}" / FILE).st_ino for r in (0, 1, 2)}
    assert len(set(ino.values())) == 1, "cost-only rounds share the matrix file"
    mans = [StateStore(state).manifest(r) for r in (0, 1, 2)]
    assert {m["crc32"][FILE] for m in mans} == {file_crc32(state / "gen-000000" / FILE)}
    assert set(mans[2]["crc32"]) == set(mans[2]["files"])  # every file has its checksum


@pytest.fixture
def damaged(state) -> Path:
    """Round 2's own copy of a_data.arrow (link broken) with one byte flipped: rounds 0 and 1 are intact."""
    path = state / "gen-000002" / FILE
    tmp = path.with_suffix(".copy")
    shutil.copyfile(path, tmp)
    os.replace(tmp, path)
    _flip(path)
    assert StateStore(state).damage(2) == ""  # the sizes match: show/history/rollback see nothing
    assert FILE in StateStore(state).damage(2, verify=True)
    return state


def test_export_of_a_same_size_damaged_round_warns_and_uses_the_fallback(damaged, tmp_path, capsys):
    before = _snapshot(damaged)
    code, out, err = run_main(capsys, "export", "-o", tmp_path / "x.mps", "--state", damaged, "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["round"] == 1
    warning = res["warnings"][0]
    assert "CURRENT names round 2" in warning and FILE in warning and "CRC-32" in warning
    assert "using the newest complete generation, round 1" in warning
    assert "warning: CURRENT names round 2" in err and FILE in err
    code, out, err = run_main(capsys, "export", "-o", tmp_path / "y.mps", "--round", "2", "--state", damaged, "--json")
    assert code == 3 and FILE in json.loads(out)["error"]["message"]
    assert _snapshot(damaged) == before


def test_step_refuses_a_delta_for_the_same_size_damaged_round(damaged, tmp_path, capsys):
    before = _snapshot(damaged)
    d = tmp_path / "d3.parquet"
    write_delta(_delta(2, "x5", 7.0), d)
    code, out, err = run_main(capsys, "step", d, "--state", damaged, "--json")
    assert code == 3, err
    msg = json.loads(out)["error"]["message"]
    assert "current round is 1 (CURRENT names round 2" in msg and FILE in msg
    assert _snapshot(damaged) == before and not (damaged / "gen-000003").exists()


def test_damage_shared_by_every_generation_is_exit_3_naming_the_file(state, tmp_path, capsys):
    _flip(state / "gen-000002" / FILE)  # the one inode every generation links
    before = _snapshot(state)
    code, out, _ = run_main(capsys, "export", "-o", tmp_path / "x.mps", "--state", state, "--json")
    assert code == 3 and FILE in json.loads(out)["error"]["message"]
    d = tmp_path / "d3.parquet"
    write_delta(_delta(2, "x5", 7.0), d)
    code, out, _ = run_main(capsys, "step", d, "--state", state, "--json")
    assert code == 3 and FILE in json.loads(out)["error"]["message"]
    assert _snapshot(state) == before


def test_show_solution_and_compare_verify_what_they_read(state, capsys):
    path = state / "gen-000002" / "solution.parquet"
    _flip(path)
    code, out, err = run_main(capsys, "show", "--solution", "--state", state, "--json")
    assert code == 0 and json.loads(out)["round"] == 1 and "solution.parquet has CRC-32" in err
    code, out, err = run_main(capsys, "compare", "--baseline", "highs", "--state", state, "--json")
    assert code == 0, err
    assert json.loads(out)["round"] == 1 and "solution.parquet has CRC-32" in err
    code, out, _ = run_main(capsys, "show", "--solution", "--round", "2", "--state", state, "--json")
    assert code == 3 and "solution.parquet" in json.loads(out)["error"]["message"]


def test_show_history_rollback_hash_no_array(damaged, monkeypatch, capsys):
    """They hash no array of a generation; ``show`` hashes the report it prints (a few kB: a same-size edit of its
    objective was printed, hunt 50)."""
    real = checkpoint.file_crc32
    hashed = []

    def report_only(path):
        if Path(path).name != "report.json":
            raise AssertionError(f"hashed {path}")
        hashed.append(Path(path).parent.name)
        return real(path)

    monkeypatch.setattr(checkpoint, "file_crc32", report_only)
    for args in (("show",), ("history",), ("rollback",)):
        code, out, err = run_main(capsys, *args, "--state", damaged, "--json")
        assert code == 0 and "warning" not in err, (args, err)
    assert "gen-000002" in hashed


def test_a_manifest_without_checksums_loads_with_the_size_check_only(state, tmp_path, capsys):
    for r in (0, 1, 2):
        man_path = state / f"gen-00000{r}" / "generation.json"
        man = json.loads(man_path.read_text())
        del man["crc32"]
        man_path.write_text(json.dumps(man))
    code, out, err = run_main(capsys, "export", "-o", tmp_path / "x.mps", "--state", state, "--json")
    assert code == 0 and json.loads(out)["round"] == 2 and "warning" not in err
    d = tmp_path / "d3.parquet"
    write_delta(_delta(2, "x5", 7.0), d)
    code, out, err = run_main(capsys, "step", d, "--state", state, "--json")
    assert code == 0 and json.loads(out)["round"] == 3, err
    man = StateStore(state).manifest(3)
    assert set(man["crc32"]) == set(man["files"])  # the new round records checksums (hashed: none to copy)
    assert man["crc32"][FILE] == file_crc32(state / "gen-000003" / FILE)
    assert StateStore(state).damage(2, verify=True) == ""  # no checksums recorded: sizes only


def test_step_and_compare_verify_the_allocation_and_duals_they_read(state, tmp_path, capsys):
    """step reads the current round's solution.parquet (the previous allocation, for changes.parquet);
    compare reads duals.parquet (copter's dual residual and gap): a same-size damage to either is seen."""
    _flip(state / "gen-000002" / "duals.parquet")
    code, out, err = run_main(capsys, "compare", "--baseline", "highs", "--state", state, "--json")
    assert code == 0, err
    assert json.loads(out)["round"] == 1 and "duals.parquet has CRC-32" in err
    _flip(state / "gen-000002" / "duals.parquet")  # restored
    _flip(state / "gen-000002" / "solution.parquet")
    before = _snapshot(state)
    d = tmp_path / "d3.parquet"
    write_delta(_delta(2, "x5", 7.0), d)
    code, out, _ = run_main(capsys, "step", d, "--state", state, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and "solution.parquet" in msg and "current round is 1" in msg
    assert _snapshot(state) == before and not (state / "gen-000003").exists()
