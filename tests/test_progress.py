"""The live progress line (copter_cli.progress): drawn on a terminal only (a pty here), redrawn in place and
erased at the end; a pipe gets no progress bytes at all; --verbose and a short solve show none. Also the
demo's legend under its table.

``COPTER_PROGRESS_DELAY=0`` shows the line from the first termination check, so the small problems of
these tests reach it; the default (2 s) is tested to show nothing for a solve of milliseconds.
"""

from __future__ import annotations

import fcntl
import io
import math
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from copter_cli.progress import ERASE, SolveProgress, format_line
from formats.io import write_problem
from tests.helpers import small_lp

REPO = Path(__file__).resolve().parents[1]
INFO = {"iteration": 1234, "seconds": 0.5, "primal_objective": 3.5, "dual_objective": 3.4,
        "primal_residual_rel": 1.5e-3, "dual_residual_rel": 2.5e-4, "gap_rel": 3.5e-5}


class FakeTerminal(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_format_line_names_every_measure_most_important_first():
    line = format_line(INFO, 12.34, 60.0, 47.0)
    assert line.startswith("solving 12.3 s (limit 60 s, 47.0 s left)  iter 1,234")
    for part in ("primal res 1.5e-03", "dual res 2.5e-04", "gap 3.5e-05", "obj 3.5"):
        assert part in line, (part, line)
    assert "limit" not in format_line(INFO, 1.0, math.inf, None)
    assert format_line(None, 2.5, math.inf, None) == "solving 2.5 s"


def test_on_a_terminal_the_callback_draws_in_place_and_the_exit_erases(monkeypatch):
    from solver.lp.pdhg import current_progress_callback

    monkeypatch.delenv("COLUMNS", raising=False)

    term = FakeTerminal(True)
    with SolveProgress(60.0, stream=term, delay=0.0) as p:
        assert current_progress_callback() is p  # the LP core reports to it
        p(INFO)
    out = term.getvalue()
    assert out.startswith(ERASE + "solving 0.0 s (limit 60 s")
    assert "iter 1,234" in out
    assert out.endswith(ERASE) and "\n" not in out
    assert all(len(seg) < 80 for seg in out.split(ERASE))  # cut to the width (80 when unknown): never wraps
    assert current_progress_callback() is None
    monkeypatch.setenv("COLUMNS", "40")
    term = FakeTerminal(True)
    with SolveProgress(60.0, stream=term, delay=0.0) as p:
        p(INFO)
    assert term.getvalue().startswith(ERASE + "solving 0.0 s (limit 60 s")
    assert all(len(seg) < 40 for seg in term.getvalue().split(ERASE))


def test_not_a_terminal_or_disabled_or_before_the_delay_writes_nothing():
    from solver.lp.pdhg import current_progress_callback

    for stream, enabled, delay in ((FakeTerminal(False), True, 0.0), (FakeTerminal(True), False, 0.0),
                                   (FakeTerminal(True), True, 3600.0)):
        with SolveProgress(stream=stream, enabled=enabled, delay=delay) as p:
            p(INFO)
        assert stream.getvalue() == ""
        assert current_progress_callback() is None


def test_dumb_terminal_counts_as_none(monkeypatch):
    monkeypatch.setenv("TERM", "dumb")
    assert not SolveProgress(stream=FakeTerminal(True), delay=0.0).enabled


# ------------------------------------------------------------------------------ real processes


def _env(delay: str | None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), TERM="xterm")
    env.pop("COPTER_PROGRESS_DELAY", None)
    env.pop("COLUMNS", None)  # the pty's own size (200 columns) decides
    if delay is not None:
        env["COPTER_PROGRESS_DELAY"] = delay
    return env


def on_pty(args, delay: str | None = "0", stdout_too: bool = False) -> tuple[int, bytes, bytes]:
    """Run ``python -m copter_cli ARGS`` with stderr on a pseudo-terminal and stdout on a pipe (``stdout_too``:
    on the same terminal, as in a shell, the answer and the progress line interleaved in ``err``)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))  # 200 columns: the whole line
    proc = subprocess.Popen([sys.executable, "-m", "copter_cli", *map(str, args)],
                            stdout=slave if stdout_too else subprocess.PIPE, stderr=slave, env=_env(delay))
    os.close(slave)
    err = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end
            break
        if not chunk:
            break
        err += chunk
    out = b"" if stdout_too else proc.stdout.read()
    proc.wait(timeout=600)
    os.close(master)
    return proc.returncode, out, err


def on_pipe(args, delay: str | None = "0") -> tuple[int, bytes, bytes]:
    res = subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], capture_output=True,
                         env=_env(delay), timeout=600)
    return res.returncode, res.stdout, res.stderr


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("progress") / "base.parquet"
    write_problem(small_lp(n=60, m=25), path)
    return path


def _progress_lines(err: bytes) -> list[bytes]:
    return [seg for seg in err.split(ERASE.encode()) if seg.startswith(b"solving ")]


def test_solve_on_a_terminal_shows_the_line_and_erases_it_before_the_summary(base):
    code, _, err = on_pty(["solve", base, "--time-limit", "100"], stdout_too=True)  # the summary: stdout
    assert code == 0, err
    lines = _progress_lines(err)
    assert lines and b"iter " in lines[-1] and b"primal res" in lines[-1] and b"gap" in lines[-1]
    assert b"(limit 100 s, " in lines[-1]
    last = err.rindex(b"solving")
    assert err.index(ERASE.encode(), last) < err.index(b"Model status")  # erased before the summary


def test_solve_on_a_pipe_writes_no_progress_bytes(base):
    code, out, err = on_pipe(["solve", base, "--time-limit", "100"])
    assert code == 0, err
    assert b"\r" not in err and b"\x1b[K" not in err and b"solving" not in err
    assert b"Model status" in out and b"Model status" not in err  # the summary is the answer: stdout


def test_verbose_shows_its_log_and_no_line(base):
    code, _, err = on_pty(["solve", base, "--verbose"])
    assert code == 0 and b"solving" not in err and b"iter" in err  # the verbose log itself


def test_the_delay_is_two_seconds_unless_the_environment_says_otherwise(monkeypatch):
    monkeypatch.delenv("COPTER_PROGRESS_DELAY", raising=False)
    assert SolveProgress(stream=FakeTerminal(True)).delay == 2.0
    for raw, want, on in (("0", 0.0, True), ("0.5", 0.5, True), ("inf", math.inf, False), ("-1", 2.0, True),
                          ("soon", 2.0, True)):
        monkeypatch.setenv("COPTER_PROGRESS_DELAY", raw)
        p = SolveProgress(stream=FakeTerminal(True))
        assert (p.delay, p.enabled) == (want, on), raw


def test_a_delay_that_is_not_a_number_of_seconds_is_named_once_not_read_otherwise(monkeypatch, capsys):
    import copter_cli.progress as P

    monkeypatch.setattr(P, "_WARNED", set())
    for raw in ("1_0", " 5", "５", "-1", "nan", "soon", ""):
        monkeypatch.setenv("COPTER_PROGRESS_DELAY", raw)
        assert SolveProgress(stream=FakeTerminal(True)).delay == 2.0, raw  # not 10, 5 or NaN
        assert SolveProgress(stream=FakeTerminal(True)).delay == 2.0, raw
        err = capsys.readouterr().err
        assert err.count("warning: COPTER_PROGRESS_DELAY=") == 1 and repr(raw) in err, (raw, err)
    monkeypatch.setenv("COPTER_PROGRESS_DELAY", "0.5")
    assert SolveProgress(stream=FakeTerminal(True)).delay == 0.5
    assert capsys.readouterr().err == ""


def test_init_and_step_on_a_terminal_and_on_a_pipe(base, tmp_path):
    from formats.io import write_delta
    from solver.model.delta import Delta

    code, out, err = on_pty(["init", base, "--state", tmp_path / "st", "--json"])
    assert code == 0, err
    assert _progress_lines(err)
    assert err.rindex(ERASE.encode()) > err.rindex(b"solving")  # erased at the end
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d1.parquet")
    code, out, err = on_pipe(["step", tmp_path / "d1.parquet", "--state", tmp_path / "st", "--json"])
    assert code == 0, err
    assert b"\r" not in err and b"solving" not in err


def test_demo_on_a_terminal_shows_progress_then_the_table_with_its_legend_and_next_steps():
    code, out, err = on_pty(["demo", "--domain", "te", "--scale", "5", "--rounds", "1"], stdout_too=True)
    assert code == 0, err
    assert _progress_lines(err)
    text = err.decode()
    assert "vs cold = solve s / cold s" in text and "lower is better" in text
    assert "copter report" in text and "copter show --solution" in text
    code, out, err = on_pipe(["demo", "--domain", "te", "--scale", "5", "--rounds", "1"])
    assert code == 0 and b"\r" not in err and b"solving" not in err and b"vs cold =" in out
