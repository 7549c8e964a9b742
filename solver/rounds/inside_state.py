"""Refuse an output path that lies inside a copter state directory (any state, not only the command's own).

A file written there replaces or adds to what the state's checksums cover: ``copter export -o
s/gen-000000/solution.parquet`` exited 0 and left every later command with ``no complete generation``
(exit 3). Every command that writes a file or folder the user names calls :func:`refuse_inside_state`
before any work (through ``solver.rounds.outputs.check_output_file`` / ``check_out_dir`` or directly), so
the refusal is one usage error (exit 2) naming the option and the state, with nothing written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from formats.state_config import STATE_FORMAT
from solver.model.errors import UsageError

_CONFIG_MAX_BYTES = 1 << 20  #: a bigger config.json is no state's (copter writes a few hundred bytes)


def is_state_dir(folder: Path) -> bool:
    """Whether ``folder`` is a copter state directory: it holds ``CURRENT``, or a ``config.json`` whose
    ``format`` is ``copter-state`` (a state whose CURRENT is lost still counts)."""
    if os.path.lexists(folder / "CURRENT"):
        return True
    config = folder / "config.json"
    try:
        if not config.is_file() or config.stat().st_size > _CONFIG_MAX_BYTES:
            return False
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # unreadable or not JSON (UnicodeDecodeError is a ValueError): someone else's
        return False
    return isinstance(data, dict) and data.get("format") == STATE_FORMAT


def enclosing_state(path, parents_only: bool = False) -> Path | None:
    """The state directory that is ``path`` or one of its parents (``parents_only``: one of its parents),
    symbolic links resolved (a path that does not exist yet is resolved as far as it exists); None when there
    is none."""
    real = Path(os.path.realpath(path))
    for folder in real.parents if parents_only else (real, *real.parents):
        if folder.is_dir() and is_state_dir(folder):
            return folder
    return None


def refuse_inside_state(path, option: str, parents_only: bool = False) -> None:
    """Refuse ``path`` (what ``option`` names: ``-o``, ``--png``, ``DST``, ...) when it lies inside a copter
    state directory (``parents_only``: when one of its parents is one; ``init --state`` may name a state
    directory itself, but a state inside another would be deleted with the generation it lies in).

    Raises:
        UsageError: the message names the option, the path and the state directory (exit code 2).
    """
    state = enclosing_state(path, parents_only)
    if state is not None:
        raise UsageError(f"{option} {path}: is inside the copter state directory {state}; writing there would "
                         "damage the state: choose a path outside it")
