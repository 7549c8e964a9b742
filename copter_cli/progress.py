"""The live progress line of long solves (``copter solve``, ``init``, ``step``, ``demo``).

Once a solve has run for :data:`DELAY` seconds (``$COPTER_PROGRESS_DELAY`` overrides it; ``inf`` turns the
line off), one line on stderr is redrawn in place about four times a second: the seconds elapsed and the
time limit with what is left of it, PDHG iterations, relative primal and dual residuals and gap, and the
primal objective (from the LP core's ``solver.lp.pdhg.progress_callback``, called at every termination
check, also inside MILP relaxations and presolve's polish). A partitioned round's parts run in worker
processes: its line shows the parts done out of K and the measures of the slowest running part
(``solver.partition.progress_board``). The line is erased when the solve ends (the summary follows on a clean line).

Only when stderr is a terminal (``isatty``; ``TERM=dumb`` counts as none) and ``--verbose`` is off (its log
lines would interleave): a pipe or a log file receives no progress bytes at all.
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from contextlib import ExitStack

DELAY = 2.0  #: seconds a solve runs before the line appears
INTERVAL = 0.25  #: seconds between redraws
ERASE = "\r\x1b[K"  #: carriage return + erase to the end of the line
_LIVE: list[SolveProgress] = []  #: the lines drawing now (entered, enabled), for :func:`silence`


_WARNED: set[str] = set()  #: the ``$COPTER_PROGRESS_DELAY`` values already refused in this process


def _delay() -> float:
    """``$COPTER_PROGRESS_DELAY`` in seconds (an ASCII decimal >= 0 or ``inf``), else :data:`DELAY`; a value
    that is not one gets one ``warning:`` line on stderr naming it (the line then appears after DELAY), so a
    typo such as ``1_0`` or ``-1`` is never read as something else in silence."""
    from formats.number_text import plain_float

    raw = os.environ.get("COPTER_PROGRESS_DELAY")
    if raw is None:
        return DELAY
    v = float(raw) if plain_float(raw) else math.nan
    if v >= 0:
        return v
    if raw not in _WARNED:
        _WARNED.add(raw)
        sys.stderr.write(f"warning: COPTER_PROGRESS_DELAY={raw!r} is not a number of seconds >= 0 (ASCII digits, or "
                         f"'inf' for never); the progress line appears after {DELAY:g} s\n")
    return DELAY


def _width(stream) -> int:
    """Columns of the terminal: ``$COLUMNS`` when set, else the terminal's size, else 80 (a terminal that
    reports no size, like a fresh pty)."""
    try:
        cols = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        cols = 0
    if cols <= 0:
        try:
            cols = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            cols = 0
    return cols if cols > 0 else 80


def is_terminal(stream) -> bool:
    """True when ``stream`` is a terminal that understands carriage return and erase-line."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
    return bool(tty) and os.environ.get("TERM") != "dumb"


def format_line(info: dict | None, elapsed: float, time_limit: float, left: float | None) -> str:
    """The progress line's text, most important first (a narrow terminal cuts the end): seconds and time
    limit, iterations, relative primal and dual residuals, relative gap, primal objective. A partitioned
    round (``info`` with ``parts``) shows the parts done out of K, then those measures of its slowest running
    part (the one furthest from converging).

    Args:
        info: the latest ``progress_callback`` dict (iteration, primal_objective, primal_residual_rel,
            dual_residual_rel, gap_rel, ...) or None before the first termination check.
        elapsed: seconds since the solve started.
        time_limit: the ``--time-limit`` in seconds (inf: none).
        left: seconds left of it (None when unknown).
    """
    head = f"solving {elapsed:.1f} s"
    if math.isfinite(time_limit):
        head += f" (limit {time_limit:g} s" + ("" if left is None else f", {max(left, 0.0):.1f} s left") + ")"
    parts = [head]
    if info is not None and "parts" in info:  # a partitioned round (solver.partition.progress_board.summary)
        parts.append(f"parts done {int(info['parts_done'])}/{int(info['parts'])}")
        if "part" in info:
            parts.append(f"slowest part {int(info['part'])}:")
    if info is not None and "iteration" in info:
        parts += [f"iter {int(info['iteration']):,}", f"primal res {info['primal_residual_rel']:.1e}",
                  f"dual res {info['dual_residual_rel']:.1e}", f"gap {info['gap_rel']:.1e}",
                  f"obj {info['primal_objective']:.8g}"]
    return "  ".join(parts)


class SolveProgress:
    """A context manager: within it, solves report to a live line on ``stream`` (stderr) when that is a
    terminal; otherwise it does nothing.

    Args:
        time_limit: seconds of ``--time-limit`` shown on the line (inf: none shown).
        enabled: False turns it off (e.g. ``--verbose``); it is also off when ``stream`` is no terminal.
        stream: where the line goes (default ``sys.stderr``).
        delay: seconds before the line appears (default :data:`DELAY` or ``$COPTER_PROGRESS_DELAY``).
    """

    def __init__(self, time_limit: float = math.inf, enabled: bool = True, stream=None,
                 delay: float | None = None):
        self.stream = sys.stderr if stream is None else stream
        self.time_limit = time_limit
        self.delay = _delay() if delay is None else delay
        self.enabled = enabled and is_terminal(self.stream) and math.isfinite(self.delay)
        self.info: dict | None = None
        self.shown = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._stack = ExitStack()
        self._t0 = 0.0
        self._last = -math.inf

    def __call__(self, info: dict) -> None:
        """The LP core's progress callback: keep the newest measures, redraw when due (never when off)."""
        if not self.enabled:
            return
        first = self.info is None
        self.info = info
        now = time.monotonic()
        if first or now - self._last >= INTERVAL:  # the first measures replace "solving N s" at once
            self._draw(now)

    def _left(self, now: float) -> float | None:
        if not math.isfinite(self.time_limit):
            return None
        from solver import clock

        used = clock.elapsed() or (now - self._t0)  # the command clock (0.0 when none is registered)
        return self.time_limit - used

    def _draw(self, now: float) -> None:
        elapsed = now - self._t0
        if elapsed < self.delay:
            return
        line = format_line(self.info, elapsed, self.time_limit, self._left(now))
        line = line[: max(_width(self.stream) - 1, 10)]  # never wrap: a wrapped line cannot be redrawn in place
        with self._lock:
            if self._stop.is_set():
                return
            self._last = now
            try:
                self.stream.write(ERASE + line)
                self.stream.flush()
            except (OSError, ValueError):
                return
            self.shown = True

    def _tick(self) -> None:
        """The redraw thread: keeps the seconds moving between termination checks (and through phases
        without any, such as loading or saving a round); skips a redraw the callback has just made."""
        while not self._stop.wait(INTERVAL / 2):
            now = time.monotonic()
            if now - self._last >= INTERVAL:
                self._draw(now)

    def __enter__(self) -> SolveProgress:
        self._t0 = time.monotonic()
        if not self.enabled:
            return self
        from solver.lp.pdhg import progress_callback

        self._stack.enter_context(progress_callback(self))
        self._thread = threading.Thread(target=self._tick, name="copter-progress", daemon=True)
        self._thread.start()
        _LIVE.append(self)
        return self

    def __exit__(self, *exc) -> None:
        if not self.enabled:
            return
        if self in _LIVE:
            _LIVE.remove(self)
        with self._lock:
            self._stop.set()
            if self.shown:
                _erase(self.stream)
        if self._thread is not None:
            self._thread.join()
        self._stack.close()


def silence() -> None:
    """Stop every live progress line from redrawing and erase the one shown, without taking its lock or
    waiting for its thread: an interrupt's handler (``copter step`` with several deltas printing the stored
    rounds' reports, ``formats.undo.on_interrupt_report``) calls it before it prints, so no line is redrawn
    between the reports or left in front of them."""
    for live in list(_LIVE):
        live._stop.set()
        if live.shown:
            _erase(live.stream)


def _erase(stream) -> None:
    """Erase the progress line shown on ``stream`` (a closed or broken stream is left alone)."""
    try:
        stream.write(ERASE)
        stream.flush()
    except (OSError, ValueError):
        pass
