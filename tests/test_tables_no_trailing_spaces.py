"""Tables printed off a terminal (a pipe, a log) carry no trailing spaces: rich pads the last column's cells and a
centred title to the table's width, which ``diff``, ``grep 'OPTIMAL$'`` and whitespace checks trip over (a user's
trial, session 35). ``copter_cli.output.TrimmedLines`` strips them line by line."""

from __future__ import annotations

import io
import os
import subprocess
import sys

from tests.helpers import REPO, small_lp_state


def cli(*args) -> tuple[int, str, str]:
    """A ``copter`` process with stdout and stderr piped (off a terminal)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    p = subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], env=env, capture_output=True,
                       text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def test_trimmed_lines_strips_each_line_and_keeps_the_rest():
    from copter_cli.output import TrimmedLines

    buf = io.StringIO()
    f = TrimmedLines(buf)
    assert f.write("a  \nb") == 5
    assert buf.getvalue() == "a\n"  # "b" waits for its newline
    f.write("  c   \n\n   \nd  ")
    f.flush()
    assert buf.getvalue() == "a\nb  c\n\n\nd"
    assert f.getvalue() == buf.getvalue()  # everything else is the file's


def test_show_and_history_tables_in_a_pipe_have_no_trailing_spaces(tmp_path):
    st, d = small_lp_state(tmp_path)
    assert cli("step", d, "--state", st)[0] == 0
    for args in (["show"], ["history"], ["show", "--solution"]):
        code, out, err = cli(*args, "--state", st)
        assert code == 0, err
        lines = out.splitlines()
        assert len(lines) > 3 and any(line.strip() for line in lines), out
        assert [line for line in lines if line != line.rstrip(" ")] == [], (args, out)


def test_a_partial_line_flushed_keeps_its_spaces_when_it_goes_on():
    from copter_cli.output import TrimmedLines

    buf = io.StringIO()
    f = TrimmedLines(buf)
    f.write("status:   ")
    f.flush()
    assert buf.getvalue() == "status:"
    f.write("OPTIMAL   \nnext  ")
    f.flush()
    assert buf.getvalue() == "status:   OPTIMAL\nnext"
    f.write("\n")
    assert buf.getvalue() == "status:   OPTIMAL\nnext\n"
