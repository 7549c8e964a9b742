"""config.json's validation: its keys (:data:`CONFIG_KEYS`, :data:`CONFIG_REQUIRED`), its ``format``
(:data:`STATE_FORMAT`), and the errors for an unknown key (with the known key it most likely meant,
:func:`closest_key`) or a null value; :func:`check_config_values` refuses what a command would use wrongly.
:meth:`formats.checkpoint.StateStore.config` calls it on every read; ``solver.rounds.partitioned`` names an unknown
``partition`` key with :func:`unknown_key_error`. Imports nothing heavy (the settings are imported where used)."""

from __future__ import annotations

from pathlib import Path

from solver.model.errors import StateError

CONFIG_KEYS = ("format", "version", "keep", "settings", "partition")  #: config.json's top-level keys
#: the keys every config.json holds since the first copter (``solver.rounds.loop``'s init writes them with ``keep``):
#: one missing is damage (a config.json replaced by ``{}`` solved every round at the default settings)
CONFIG_REQUIRED = ("format", "version", "settings")
STATE_FORMAT = "copter-state"  #: config.json's ``format``


#: spellings of a known key that no string similarity finds (``"tolerance"`` for ``"tol"``: difflib's ratio 0.5,
#: below its 0.6 cutoff), the words the README and the option names use
KEY_ALIASES = {"tolerance": "tol", "timeout": "time_limit_seconds", "seconds": "time_limit_seconds",
               "iterations": "iteration_limit", "max_iterations": "iteration_limit", "partitions": "k",
               "parts": "k", "partition_passes": "passes", "share_update_every": "update_every"}


def closest_key(key: str, known) -> str | None:
    """The known key a mistyped ``key`` most likely meant, or None: the same key in another case or with ``-``
    for ``_`` (``"Tol"``, ``"time-limit-seconds"``), an alias (:data:`KEY_ALIASES`: ``"tolerance"`` -> ``"tol"``),
    a close spelling (difflib), else a known key of 3 or more characters that ``key`` starts with or that starts
    with ``key`` (``"tol_rel"`` -> ``"tol"``)."""
    import difflib

    known = list(known)
    norm = key.strip().lower().replace("-", "_")
    for cand in (norm, KEY_ALIASES.get(norm)):
        if cand in known:
            return cand
    close = difflib.get_close_matches(norm, known, n=1)
    if close:
        return close[0]
    prefix = sorted((k for k in known if min(len(k), len(norm)) >= 3 and (norm.startswith(k) or k.startswith(norm))),
                    key=len, reverse=True)
    return prefix[0] if prefix else None


def unknown_key_error(key: str, section: str | None, known, path) -> StateError:
    """The error for a key config.json holds that copter does not know (a typo such as ``"tolerance"``
    would otherwise be ignored and the round solved at the default): names the file, the key, a close
    known key if any, and the known keys (``entity``: ``key`` or ``section.key``)."""
    where = f" in {section}" if section else ""
    close = closest_key(str(key), known)
    hint = f" (did you mean {close!r}?)" if close else ""
    return StateError(f"config.json is damaged: unknown key {key!r}{where}{hint}; known keys{where}: "
                      f"{', '.join(sorted(known))} (fix or remove the key, restore the file from a backup, or init "
                      "a new state)", file=str(path), entity=f"{section}.{key}" if section else str(key))


def null_value_error(entity: str, path) -> StateError:
    """The error for a null config.json holds where copter never writes one (``"tol": null``): names the file
    and the key (``entity``: ``key`` or ``section.key``)."""
    return StateError(f"config.json is damaged: {entity} is null, which copter never writes there (a null is not "
                      "the default: set the value, restore the file from a backup, or init a new state)",
                      file=str(path), entity=entity)


def check_config_values(body: dict, path: Path) -> None:
    """Refuse config.json values a command would use wrongly: a key that is none of :data:`CONFIG_KEYS`,
    ``keep`` (a positive integer), ``settings`` (an object of ``Settings`` fields, each a value ``Settings``
    accepts) and ``partition`` (an object; its keys are checked by the commands that use it,
    ``solver.rounds.partitioned.config_of``, which import the partition code). The state layout's
    ``version`` is 1 and copter has no other: an unknown key is a typo, never a newer copter's. A null where
    copter never writes one (any top-level key, a setting that is never None) is refused too: it used to mean
    the default without a word; so is a missing ``format`` (or one other than ``copter-state``), ``version``
    or ``settings`` (:data:`CONFIG_REQUIRED`). A single setting missing from ``settings`` stays accepted (its
    default): a state written by an older copter lacks the settings added since.

    Raises:
        StateError: naming ``path`` and the key (``entity``: ``keep``, ``settings.<field>`` or the unknown key).
    """
    from dataclasses import fields

    from solver.model.errors import SettingsError
    from solver.model.settings import FLOORED, MIN_RELATIVE_TOL, OPTIONAL, Settings
    from solver.rounds.config import settings_from_json

    for key in body:
        if key not in CONFIG_KEYS:
            raise unknown_key_error(key, None, CONFIG_KEYS, path)
        if body[key] is None:
            raise null_value_error(key, path)
    for key in CONFIG_REQUIRED:
        if key not in body:
            raise StateError(f"config.json is damaged: {key!r} is missing (init writes format, version, keep and "
                             "settings; restore the file from a backup, or init a new state)", file=str(path),
                             entity=key)
    if body["format"] != STATE_FORMAT:
        raise StateError(f"config.json is damaged: format is {body['format']!r}, not {STATE_FORMAT!r} (restore the "
                         "file from a backup, or init a new state)", file=str(path), entity="format")
    part = body.get("partition")
    if part is not None and not isinstance(part, dict):
        raise StateError(f"config.json is damaged: partition is a JSON {type(part).__name__}, not an object",
                         file=str(path), entity="partition")
    keep = body.get("keep")
    if "keep" in body and (isinstance(keep, bool) or not isinstance(keep, int) or keep < 1):
        raise StateError(f"config.json is damaged: keep {keep!r} is not a positive integer (the number of "
                         "rounds kept; restore the file from a backup, or init a new state)", file=str(path),
                         entity="keep")
    stored = body.get("settings")
    if stored is None:
        return
    if not isinstance(stored, dict):
        raise StateError(f"config.json is damaged: settings is a JSON {type(stored).__name__}, not an object",
                         file=str(path), entity="settings")
    known = [f.name for f in fields(Settings)]
    for key in stored:
        if key not in known:
            raise unknown_key_error(key, "settings", known, path)
        if stored[key] is None and key not in OPTIONAL:
            raise null_value_error(f"settings.{key}", path)
    for key in FLOORED:  # as the CLI's options (copter_cli.solver_options): a smaller one cannot be met
        v = stored.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool) and 0 < v < MIN_RELATIVE_TOL:
            raise StateError(f"config.json is damaged: settings.{key} {v!r} is below {MIN_RELATIVE_TOL:g} (the "
                             "residuals of a double-precision solve cannot meet a smaller relative tolerance: the "
                             "options refuse it too; restore the file from a backup, or init a new state)",
                             file=str(path), entity=f"settings.{key}")
    try:
        settings_from_json(stored)
    except SettingsError as err:
        raise StateError(f"config.json is damaged: {err} (restore the file from a backup, or init a new "
                         "state)", file=str(path),
                         entity=f"settings.{err.field}") from None
