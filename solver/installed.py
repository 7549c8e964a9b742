"""Installed distributions' versions without ``importlib.metadata`` (issue #15, start-up).

``importlib.metadata`` imports ``email``, ``zipfile``, ``csv`` and friends: 35 ms of a ``copter step`` process on
the 2-core machine (session 23, ``python -X importtime``), spent by the prepare check's stamp, which records the
numba and llvmlite versions. A distribution's version is also the name of its ``<name>-<version>.dist-info``
folder (the packaging spec's "Recording installed projects"), which is what ``importlib.metadata`` finds first
on ``sys.path``. :func:`installed_version` reads that name and falls back to ``importlib.metadata`` whenever the
folder name does not settle it (no folder, two versions in one ``sys.path`` entry, an ``.egg-info``).
"""

from __future__ import annotations

import os
import re
import sys

_NORMALISE = re.compile(r"[-_.]+")


def _normalised(name: str) -> str:
    """The packaging spec's name normalisation with ``_`` (dist-info folder names use it): lower-case, runs of
    ``-``, ``_``, ``.`` -> ``_``."""
    return _NORMALISE.sub("_", name).lower()


def folder_version(name: str, path: list[str] | None = None) -> str | None:
    """The version in the first ``<name>-<version>.dist-info`` folder on ``path`` (default ``sys.path``), in
    ``sys.path`` order, as ``importlib.metadata`` searches; None when none is found or one entry holds two
    versions of it (``importlib.metadata`` would then pick by directory order: the caller asks it instead).

    Args:
        name: the distribution's name, any spelling (``"numba"``, ``"Typer"``).
        path: the folders to search (strings; ``""`` is the current folder).
    """
    want = _normalised(name)
    for entry in sys.path if path is None else path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        found = []
        for folder in names:
            if not folder.endswith(".dist-info"):
                continue
            stem = folder[: -len(".dist-info")]
            dist, sep, version = stem.partition("-")
            if sep and version[:1].isdigit() and _normalised(dist) == want:
                found.append(version)
        if len(found) == 1:
            return found[0]
        if found:
            return None
    return None


def installed_version(name: str) -> str:
    """The installed version of distribution ``name`` (:func:`folder_version`, else ``importlib.metadata``).

    Raises:
        importlib.metadata.PackageNotFoundError: ``name`` is not installed.
    """
    version = folder_version(name)
    if version is not None:
        return version
    from importlib.metadata import version as metadata_version

    return metadata_version(name)
