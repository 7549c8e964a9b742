"""Where the public data lives for the examples: ``$COPTER_DATA``, else ``../shared/data`` beside the repository."""

from __future__ import annotations

import os
from pathlib import Path

from solver.errors import InputError

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    """The data directory (it may not exist: callers report that with :func:`require`)."""
    env = os.environ.get("COPTER_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def require(sub: str) -> Path:
    """``data_dir() / sub``.

    Raises:
        InputError: the path does not exist (names it and says how to point at the data).
    """
    p = data_dir() / sub
    if not p.exists():
        raise InputError(f"data not found at {p}; set COPTER_DATA to the shared data folder", file=str(p))
    return p
