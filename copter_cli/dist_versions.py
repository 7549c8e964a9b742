"""Installed versions of distributions without importing ``importlib.metadata`` (issue #15: its import, with
``email``, ``zipfile`` and ``csv``, is ~0.045 s of CPU of ``copter version`` and ``copter --version``).

:func:`installed_version` finds the first ``NAME-VERSION.dist-info`` (or ``NAME.egg-info``) folder on ``sys.path`` (names compared as
``importlib.metadata`` normalises them: runs of ``-_.`` as one ``_``, lower case) and reads the ``Version:``
header of its ``METADATA`` (an ``.egg-info`` folder's ``PKG-INFO``: an editable checkout on ``PYTHONPATH``).
Anything else (no such folder, two candidates in one folder, no ``Version:`` header) asks
``importlib.metadata``, so the answer, or its ``PackageNotFoundError``, is the same.
"""

from __future__ import annotations

import os
import re
import sys

_SEP = re.compile(r"[-_.]+")


def _normal(name: str) -> str:
    return _SEP.sub("_", name).lower()


def _from_path(name: str) -> str | None:
    """The version read from the first matching dist-info on ``sys.path``; None to ask importlib.metadata."""
    want = _normal(name)
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        hits = [d for d in names if d.lower().endswith((".dist-info", ".egg-info"))
                and _normal(d.rsplit(".", 1)[0].rsplit("-", 1)[0]) == want]
        if not hits:
            continue
        if len(hits) != 1:
            return None
        for meta in ("METADATA", "PKG-INFO"):  # what importlib.metadata reads, in its order
            path = os.path.join(folder, hits[0], meta)
            if os.path.isfile(path):
                return _version_header(path)
        return None
    return None


def _version_header(path: str) -> str | None:
    """The ``Version:`` header of a METADATA / PKG-INFO file; None when it has none or cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():  # the end of the headers
                    return None
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    except (OSError, UnicodeDecodeError):
        return None
    return None


def installed_version(name: str) -> str:
    """``importlib.metadata.version(name)``, read from the dist-info folder when that is unambiguous.

    Raises:
        importlib.metadata.PackageNotFoundError: ``name`` is not installed.
    """
    found = _from_path(name)
    if found is not None:
        return found
    from importlib.metadata import version

    return version(name)


__all__ = ["installed_version"]
