"""Where the state lives by default and how ``init`` stores the solver settings for later steps
(``config.json`` of the state directory, written by ``formats.checkpoint.StateStore.write_config``)."""

from __future__ import annotations

import os
from dataclasses import asdict, fields
from pathlib import Path

from solver.model.settings import Settings


def default_state_dir() -> Path:
    """``$COPTER_STATE`` if set and not empty, else ``./copter-state`` (an empty variable counts as unset)."""
    return Path(os.environ.get("COPTER_STATE") or "copter-state")


def state_dir_or_default(state_dir) -> Path:
    """``state_dir`` as a Path, or :func:`default_state_dir` when None."""
    return Path(state_dir) if state_dir is not None else default_state_dir()


def settings_to_json(settings: Settings) -> dict:
    """The settings ``init`` stores in config.json for later steps (``verbose`` is per invocation, not kept)."""
    d = asdict(settings)
    d.pop("verbose", None)
    d.pop("verbose_all", None)
    return d


def settings_from_json(d: dict | None) -> Settings:
    """Settings from config.json (``StateStore.config`` has refused keys ``Settings`` does not have; any left
    here are skipped). A null is passed on, not skipped: ``Settings`` refuses it for a field that is never None
    (SettingsError), it never means the default."""
    known = {f.name for f in fields(Settings)}
    out = {}
    for k, v in (d or {}).items():
        if k not in known:
            continue
        out[k] = float(v) if v in ("inf", "-inf") else v  # strict JSON stores infinities as strings
    return Settings(**out)
