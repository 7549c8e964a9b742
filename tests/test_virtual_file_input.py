"""A virtual file (/proc, /sys) given as a delta or a model: its size reads 0, its content is made anew at each read.
``copter step /proc/self/status`` said "the delta file changed while copter read it (another program is still
writing or replaced it)" (helper-194); it is now a format error naming what the file is, exit 3, state unchanged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from formats.io import check_regular_file
from solver import rounds
from solver.model.errors import FormatError
from tests.helpers import small_lp, snapshot

STATUS = Path("/proc/self/status")

pytestmark = pytest.mark.skipif(not STATUS.exists() or os.stat(STATUS).st_size != 0,
                                reason="needs Linux's /proc (a size-0 file with content)")


def test_a_virtual_file_is_refused_as_what_it_is():
    with pytest.raises(FormatError, match="reports a size of 0 yet has content: a virtual file") as e:
        check_regular_file(STATUS, "delta file")
    assert e.value.file == str(STATUS)


def test_an_empty_regular_file_is_left_to_the_reader(tmp_path):
    empty = tmp_path / "d.parquet"
    empty.write_bytes(b"")
    check_regular_file(empty, "delta file")  # no error here: the Parquet reader says it is not Parquet


def test_step_on_a_virtual_file_is_exit_3_and_changes_nothing(tmp_path):
    from typer.testing import CliRunner

    from copter_cli.app import app

    st = tmp_path / "s"
    rounds.init(small_lp(), st)
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", str(STATUS), "--state", str(st), "--json"])
    assert res.exit_code == 3, res.output
    assert "virtual file" in res.output and "changed while copter read it" not in res.output
    assert snapshot(st) == before
