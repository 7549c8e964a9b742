"""HiGHS's fixed-format MPS parser (a file whose names hold spaces) never returned on a blank line, anywhere in
the file (highspy 1.16; found by an adversarial hunt, a cron job would hang for good). copter hands HiGHS a copy
without blank lines and refuses a fixed-format file that has one (exit 3, naming the line); a free-format file
with blank lines reads as without them. Read in a child process with a timeout, so that a hang fails the test
instead of the suite."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import REPO

LINES = ["NAME          t", "OBJSENSE", "  MAX", "ROWS", " N  obj", " L  c1", "COLUMNS",
         "    x         obj       1              c1        1",
         "    y z       obj       2              c1        1", "RHS", "    RHS       c1        10",
         "BOUNDS", " UP BND       y z       4", "ENDATA"]

READ = r"""
import json, sys
from formats.mps import read_mps
from solver.model.errors import FormatError
out = []
for path in sys.argv[1:]:
    try:
        p = read_mps(path)
    except FormatError as err:
        out.append(["refused", err.line, str(err)])
        continue
    out.append([p.sense, list(p.col_names), list(p.row_names), p.cost.tolist(), p.row_upper.tolist(),
                p.col_upper.tolist(), p.a_data.tolist()])
print(json.dumps(out))
"""


def _read(paths):
    proc = subprocess.run([sys.executable, "-c", READ, *map(str, paths)], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _variants(tmp_path, lines):
    paths, where = [tmp_path / "none.mps"], [None]
    paths[0].write_text("\n".join(lines) + "\n")
    for pos in range(1, len(lines)):  # a blank line (empty, spaces, a tab, CR) before line pos
        blank = ("", "   ", "\t", "\r")[pos % 4]
        p = tmp_path / f"blank{pos}.mps"
        p.write_text("\n".join(lines[:pos] + [blank] + lines[pos:]) + "\n")
        paths.append(p)
        where.append(pos + 1)
    return paths, where


def test_a_blank_line_in_a_fixed_format_file_is_refused_naming_it_not_a_hang(tmp_path):
    paths, where = _variants(tmp_path, LINES)
    models = _read(paths)
    assert models[0] == [-1, ["x", "y z"], ["c1"], [1.0, 2.0], [10.0], [float("inf"), 4.0], [1.0, 1.0]]
    for m, line in zip(models[1:], where[1:], strict=True):
        assert m[0] == "refused" and m[1] == line and "blank line" in m[2], m


def test_a_blank_line_in_a_free_format_file_reads_as_without_it(tmp_path):
    free = [ln.replace("y z", "yz") for ln in LINES]
    models = _read(_variants(tmp_path, free)[0])
    assert models[0][1] == ["x", "yz"] and all(m == models[0] for m in models[1:]), models
