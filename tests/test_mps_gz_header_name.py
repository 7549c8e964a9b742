"""The gzip header of a written ``.mps.gz`` names the file the user asked for, not a temporary file.

``copter export -o now.mps.gz`` writes through temporary files renamed into place (``formats.atomic``); the gzip
header's FNAME field (``gzip -lN``, ``gunzip -N``) recorded the innermost temporary name
(``..now.mps.gz.1353-a15439bd.tmp.mps.gz.1353-369b0a73.tmp.mps``), so ``gunzip -N`` restored a file of that name.
"""

from __future__ import annotations

import gzip

from formats.io import write_problem
from formats.mps import read_mps, write_mps
from tests.helpers import cli_json, small_lp, small_lp_state

_FNAME = 0x08  # RFC 1952 FLG bit: an original file name follows the 10-byte header


def _header_name(path) -> bytes | None:
    """The FNAME field of a single-member gzip file without FEXTRA (what Python's gzip writes), or None."""
    raw = path.read_bytes()
    assert raw[:2] == b"\x1f\x8b" and not raw[3] & 0x04
    if not raw[3] & _FNAME:
        return None
    return raw[10:raw.index(b"\x00", 10)]


def test_export_names_the_output_in_the_gzip_header(tmp_path):
    st, _ = small_lp_state(tmp_path)
    out = tmp_path / "now.mps.gz"
    code, text = cli_json("export", "--state", st, "-o", out, "--json")
    assert code == 0, text
    assert _header_name(out) == b"now.mps"
    with gzip.open(out, "rt") as f:  # still a plain gzip file holding the model
        assert "ENDATA" in f.read()
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp" in p.name) == []  # no temporary file left


def test_write_problem_upper_case_suffix_and_direct_write(tmp_path):
    p = small_lp()
    write_problem(p, tmp_path / "Model.MPS.GZ")
    assert _header_name(tmp_path / "Model.MPS.GZ") == b"Model.MPS"
    write_mps(p, tmp_path / "direct.mps.gz")  # no caller's name: the file's own
    assert _header_name(tmp_path / "direct.mps.gz") == b"direct.mps"
    assert read_mps(tmp_path / "direct.mps.gz").n_cols == p.n_cols
