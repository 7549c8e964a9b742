"""The README's "A first stream of your own" block runs as written, one process per command as a user types it
(helper-183: the walk-through a new user found used Cogentco, which needs the shared data; the small ring was only in
``generate.py --help``)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def first_stream_commands() -> list[list[str]]:
    """The ```text block after "**A first stream of your own" in README.md, one argv per line, comments dropped."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("**A first stream of your own"):]
    block = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def test_the_first_stream_block_runs(tmp_path):
    cmds = first_stream_commands()
    assert [c[0] for c in cmds] == ["python"] + ["copter"] * (len(cmds) - 1), cmds
    outs = []
    for argv in cmds:
        if argv[0] == "python":
            argv = [sys.executable, str(REPO / argv[1]), *argv[2:]]
        else:
            argv = [sys.executable, "-m", "copter_cli", *argv[1:]]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (argv, done.stdout[-2000:], done.stderr[-2000:])
        outs.append(done.stdout)
    assert (tmp_path / "st" / "CURRENT").read_text().strip() == "2"
    history = outs[4]
    assert [ln.split()[0] for ln in history.splitlines() if re.match(r"\s+\d+\s", ln)] == ["0", "1", "2"], history
    assert "OPTIMAL" in history
    compare = outs[5]
    assert "highs" in compare and "pop-4" in compare, compare
