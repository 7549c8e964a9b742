"""Durability helpers of the state directory (no numerical imports: ``copter rollback`` uses them).

:func:`fsync_path` makes a file's bytes (or a folder's renames and links) durable; :func:`link_or_copy`
shares an unchanged array file between generations.
"""

from __future__ import annotations

import os
import shutil

from formats.faults import io_fault


def fsync_path(path: str | os.PathLike, directory: bool = False) -> None:
    """fsync a file (or a directory, to make renames/links inside it durable).

    Raises:
        OSError: the path cannot be opened.
    """
    io_fault("fsync", path)
    fd = os.open(path, os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def link_or_copy(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Hard-link ``src`` to ``dst``; copy (and fsync) where the filesystem does not support links."""
    io_fault("link", dst)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copyfile(src, dst)
        fsync_path(dst)
