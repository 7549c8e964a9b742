"""A free-format COLUMNS entry of exactly 0 that repeats another entry of its column and row is refused
(``formats.mps_zero_entries``): HiGHS drops the 0 before it looks for a repeat, so ``x c1 1`` then ``x c1 0`` read
as 1 and ``x obj 0`` then ``x obj 5`` as 5 without a word, where ``1e-12`` for the 0, or a Parquet model, was
refused (helper-235, session 59). An entry of 0 alone still reads (as no entry)."""

from __future__ import annotations

import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError

HEAD = "NAME z\nROWS\n N obj\n L c1\n L c2\nCOLUMNS\n"  # COLUMNS data from line 7
TAIL = "RHS\n rhs c1 4 c2 5\nENDATA\n"

CASES = {
    "coefficient then 0": (" x obj 1 c1 1\n x c1 0\n", 8, "'x' two entries in row 'c1' (lines 7 and 8: 1 and 0)"),
    "0 then coefficient": (" x c1 0.0\n x obj 1 c1 2\n", 8, "row 'c1' (lines 7 and 8: 0.0 and 2)"),
    "cost then 0": (" x obj -1 c1 1\n x obj -0\n", 8, "row 'obj' (lines 7 and 8: -1 and -0)"),
    "0 cost then cost": (" x obj 0e3\n x obj 5\n", 8, "row 'obj'"),
    "on one line": (" x c1 1 c1 0\n", 7, "(line 7: 1 and 0)"),
    "two zeros": (" x obj 1\n x c2 0 c1 3\n x c2 0D0\n", 9, "row 'c2' (lines 8 and 9: 0 and 0D0)"),
    "after comments in the block": (" y obj 1\n x c1 2\n* a note\n x c2 1\n x c1 0\n", 11, "row 'c1' (lines 8 and 11"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_repeated_entry_of_zero_is_refused_naming_both_lines(tmp_path, case):
    body, line, words = CASES[case]
    p = tmp_path / "m.mps"
    p.write_text(HEAD + body + TAIL)
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == line and e.value.entity == "x" and words in str(e.value), str(e.value)


def test_entries_of_zero_without_a_repeat_still_read(tmp_path):
    p = tmp_path / "m.mps"
    # x's 0 in c2 and y's 0 cost stand alone; y's c1 entry is another column's row, not a repeat
    p.write_text(HEAD + " x obj 1 c1 1\n x c2 0\n y obj 0 c1 0\n y c2 2\n" + TAIL)
    problem = read_mps(p)
    assert problem.cost.tolist() == [1.0, 0.0]
    assert problem.matrix().toarray().tolist() == [[1.0, 0.0], [0.0, 2.0]]


def test_a_column_whose_name_is_repeated_in_another_block_is_not_taken_for_this_one(tmp_path):
    """Only the zero line's own block of consecutive lines is read: an earlier column block with the same rows
    belongs to another column (a split column is refused on its own, by HiGHS's warning)."""
    p = tmp_path / "m.mps"
    p.write_text(HEAD + " y obj 1 c1 1\n x obj 2 c1 0\n" + TAIL)
    problem = read_mps(p)
    assert problem.cost.tolist() == [1.0, 2.0]


def test_init_and_solve_of_such_a_file_exit_3_and_no_state_is_made_or_changed(tmp_path, capsys):
    from tests.helpers import run_main, snapshot

    bad = tmp_path / "dup.mps"
    bad.write_text(HEAD + " x obj 1 c1 1\n x c1 0\n" + TAIL)
    code, _, err = run_main(capsys, "init", bad, "--state", tmp_path / "st")
    assert code == 3 and "two entries in row 'c1'" in err and not (tmp_path / "st").exists(), err
    good = tmp_path / "good.mps"
    good.write_text(HEAD + " x obj 1 c1 1\n" + TAIL)
    assert run_main(capsys, "init", good, "--state", tmp_path / "st2")[0] == 0
    before = snapshot(tmp_path / "st2")
    code, _, err = run_main(capsys, "solve", bad)
    assert code == 3 and "dup.mps:8" in err, err
    assert snapshot(tmp_path / "st2") == before
