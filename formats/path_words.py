"""Why a path cannot be used, in a user's words: "not found" was said for a symbolic-link loop, and "folder ... does
not exist" for a folder path that is a file (helper-232). Standard library only: the CLI's output checks use it."""

from __future__ import annotations

import errno
import os


def missing_words(path: str | os.PathLike, what: str = "file") -> str | None:
    """Why ``path`` cannot be opened, or None when it can be reached (``os.stat`` follows its links).

    Returns:
        ``"<what> not found"``; ``"is a symbolic link to T, which does not exist"``; ``"is a symbolic-link loop
        (too many levels of symbolic links)"``; ``"passes through a file, not a folder (P)"``; or None when
        the path exists, or ``os.stat`` failed for another reason (permission, I/O), which the caller's own
        open names.
    """
    try:
        os.stat(path)
        return None
    except OSError as err:
        code = err.errno
    if code == errno.ELOOP:
        return "is a symbolic-link loop (too many levels of symbolic links)"
    if code == errno.ENOTDIR:
        blocker = _file_in_path(path)
        return "passes through a file, not a folder" + (f" ({blocker})" if blocker else "")
    if code != errno.ENOENT:
        return None
    if os.path.islink(path):
        return f"is a symbolic link to {os.readlink(path)}, which does not exist"
    return f"{what} not found"


def folder_words(folder: str | os.PathLike) -> str:
    """What is wrong with ``folder`` as an output's folder, for one that is not a folder: ``"is a file, not a
    folder"``, the words of :func:`missing_words`, or ``"does not exist"``."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        return "is a file, not a folder"
    words = missing_words(folder, "folder")
    return "does not exist" if words is None or words == "folder not found" else words


def _file_in_path(path: str | os.PathLike) -> str | None:
    """The first ancestor of ``path`` that exists and is not a folder (for ENOTDIR), or None."""
    parts = os.fspath(path).split(os.sep)
    for i in range(1, len(parts)):
        head = os.sep.join(parts[:i]) or os.sep
        if os.path.exists(head) and not os.path.isdir(head):
            return head
    return None
