"""An MPS file HiGHS could not write completely is an environment fault (exit 7) naming the destination,
and the destination keeps what it held: HiGHS writes through C stdio and returned OK for a file cut
mid-line by the file size limit (``ulimit -f``), so ``export``/``convert`` reported "wrote ..." with exit 0
and ``prepare`` blamed the cut file as bad input (exit 3).

The limit is real: ``RLIMIT_FSIZE`` set in the child (Python ignores SIGXFSZ, so writes past it get EFBIG).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from formats.io import write_problem
from solver import rounds
from tests.helpers import small_lp, snapshot

LIMIT = 1000  # bytes: less than small_lp's MPS file, more than the Parquet reads need


def _limited(*args) -> subprocess.CompletedProcess:
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    # no bytecode caches under the limit: CPython's atomic .pyc write ignores a short write, so a module compiled
    # first in this child left a 1,000-byte .pyc ("marshal data too short") that broke every later import of it
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args), "--json"], preexec_fn=limit,
                          capture_output=True, text=True, timeout=300, env=env)


def _check_refused(res: subprocess.CompletedProcess, dest: Path, before: bytes | None) -> None:
    assert res.returncode == 7, (res.returncode, res.stdout, res.stderr)
    err = json.loads(res.stdout)["error"]
    assert err["kind"] == "environment" and err["file"] == str(dest), err
    if before is None:
        assert not dest.exists()
    else:
        assert dest.read_bytes() == before
    assert not [p for p in dest.parent.iterdir() if p.name.startswith(f".{dest.name}.")]  # no temp left


@pytest.mark.parametrize("name", ["out.mps", "out.mps.gz"])
def test_export_mps_over_file_size_limit_is_exit_7(tmp_path, name):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    full = tmp_path / "full.mps"
    write_problem(small_lp(), full)
    assert full.stat().st_size > LIMIT  # the limit cuts the MPS file
    before = snapshot(st)
    dest = tmp_path / name
    _check_refused(_limited("export", "--state", st, "-o", dest), dest, None)
    assert snapshot(st) == before


def test_convert_mps_over_file_size_limit_keeps_destination(tmp_path):
    src = tmp_path / "p.parquet"
    write_problem(small_lp(), src)
    dest = tmp_path / "p.mps"
    dest.write_bytes(b"old content\n")
    _check_refused(_limited("convert", src, dest), dest, b"old content\n")


def test_short_file_without_os_error_is_still_exit_7(tmp_path):
    """A cut file whose further write succeeds (space freed since) is still an environment fault, not a
    success and not bad input."""
    from formats.written import check_complete
    from solver.model.errors import EnvironmentFaultError

    tmp = tmp_path / "t.mps"
    tmp.write_bytes(b"NAME x\nROWS\n N  obj\nCOLU")
    with pytest.raises(EnvironmentFaultError, match="incomplete") as exc:
        check_complete(tmp, tmp_path / "dest.mps", b"ENDATA\n", "HiGHS's MPS")
    assert exc.value.file == str(tmp_path / "dest.mps")
    ok = tmp_path / "ok.mps"
    ok.write_bytes(b"NAME x\nENDATA\n")
    check_complete(ok, ok, b"ENDATA\n", "HiGHS's MPS")  # a complete file passes


def test_prepare_whose_scratch_mps_is_cut_is_exit_7_naming_the_write(tmp_path):
    """``prepare`` writes its scratch base as MPS first: a cut file was read back and blamed as bad input
    (exit 3 "format"); the write is the fault."""
    res = _limited("prepare", "--force")
    assert res.returncode == 7, (res.returncode, res.stdout, res.stderr)
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert err["kind"] == "environment" and err["file"].endswith("base.mps"), err
