"""Installed versions of copter and its libraries for ``copter version`` / ``--version``, read from the
distributions' metadata without importing ``importlib.metadata`` (email, zipfile and csv: ~30 ms of a
0.3 s start-up, issue #15) when the plain case allows it."""

from __future__ import annotations

import os
import re
import sys


def _normalized(name: str) -> str:
    """A distribution name compared as the packaging specification says (runs of ``-_.`` equal, any case)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def installed_version(name: str) -> str:
    """The version of the installed distribution ``name`` (e.g. ``"numpy"`` -> ``"2.4.6"``).

    The first ``sys.path`` folder holding a ``NAME-VERSION.dist-info`` or ``NAME.egg-info`` of that
    distribution wins, as in ``importlib.metadata.version`` (an editable checkout on the path has its
    ``.egg-info``); the version is the ``Version`` header of its ``METADATA`` (``PKG-INFO``). Anything else (no
    such entry, a zip on the path, several candidates in one folder, no readable header) is answered by
    ``importlib.metadata.version`` itself.

    Raises:
        importlib.metadata.PackageNotFoundError: ``name`` is not installed.
    """
    want = _normalized(name)
    for entry in sys.path:
        names = _listing(entry or ".")
        found = [n for n in names if n.endswith((".dist-info", ".egg-info"))
                 and _normalized(n.rsplit(".", 1)[0].split("-", 1)[0]) == want]
        if not found:
            continue
        if len(found) == 1:
            path = os.path.join(entry or ".", found[0])
            if os.path.isdir(path):  # an .egg-info file (old setuptools) is the metadata itself
                path = os.path.join(path, "METADATA" if found[0].endswith(".dist-info") else "PKG-INFO")
            version = _metadata_version(path)
            if version is not None:
                return version
        break
    from importlib.metadata import version

    return version(name)


_LISTINGS: dict[str, list[str]] = {}  #: a folder's names, listed once per process


def _listing(folder: str) -> list[str]:
    """The names in ``folder`` (none when it is not a readable folder, e.g. a zip on ``sys.path``)."""
    if folder not in _LISTINGS:
        try:
            _LISTINGS[folder] = os.listdir(folder)
        except OSError:
            _LISTINGS[folder] = []
    return _LISTINGS[folder]


def _metadata_version(path: str) -> str | None:
    """The ``Version`` header of a core-metadata file (headers end at the first empty line), else None."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    return None
                if line.lower().startswith("version:"):
                    return line.split(":", 1)[1].strip() or None
    except (OSError, UnicodeDecodeError):
        return None
    return None
