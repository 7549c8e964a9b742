"""Replacing an output file without following what is at its name.

Every file copter writes outside the state directory (``solve -o``, ``export -o``, ``convert``, ``diff -o``,
the files inside ``--out DIR``) is written to a new temporary file in the destination's folder (created
with ``O_CREAT | O_EXCL``: never an existing file or link) and then renamed over the destination with
``os.replace``. A symbolic link planted at the destination is therefore replaced by the file; its target
is never opened or written. Readers never see a half-written file, and a failed write leaves the
destination as it was (the temporary file is removed).
"""

from __future__ import annotations

import errno
import os
import stat
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from formats import undo
from formats.faults import as_environment_fault, io_fault, naming
from formats.fsync import fsync_path

SPECIAL_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                 (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


def special_kind(path: str | os.PathLike) -> str | None:
    """What ``path`` is when it exists as (or is a symbolic link to) a device, FIFO or socket (``/dev/null``,
    ``/dev/stdout``), which :func:`replacing` must not replace with a regular file; None for anything else (a
    regular file, a folder, a dangling link, nothing). ``os.stat`` only: nothing is opened."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return next((kind for test, kind in SPECIAL_KINDS if test(mode)), None)


def new_temp(path: Path, suffix: str) -> Path:
    """Create an empty new file next to ``path`` (mode 0666 minus the umask, like ``open(..., "w")``).

    Raises:
        EnvironmentFaultError: the folder exists but creating a file in it gives ENOENT (a pseudo file system
            such as /proc, or the folder removed meanwhile), naming ``path``.
        OSError: any other failure (``formats.faults`` turns environment errors into EnvironmentFaultError).
    """
    for _ in range(100):
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp{suffix}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
        except FileExistsError:
            continue
        except FileNotFoundError as err:  # the commands checked the folder exists: it takes no new files
            fault = as_environment_fault(err, path, destination=True)
            fault.message += (f"; its folder {path.parent} accepts no new file (a pseudo file system such as /proc, "
                              "or the folder was removed meanwhile)")
            raise fault from err
        os.close(fd)
        return tmp
    raise FileExistsError(f"no free temporary name next to {path}")


@contextmanager
def replacing(path: str | os.PathLike, suffix: str = "", sync: bool = True,
              sync_folder: bool | None = None) -> Iterator[Path]:
    """Yield a new temporary file next to ``path``; when the block ends without an exception, fsync it and
    ``os.replace`` it onto ``path`` (then fsync the folder when ``sync``). On any exception the temporary
    file is removed and ``path`` is untouched.

    Args:
        path: the destination file.
        suffix: end of the temporary name (e.g. ``".mps.gz"`` for writers that choose by extension).
        sync: fsync the file (and, unless ``sync_folder`` says otherwise, the folder after the rename).
        sync_folder: fsync the folder after the rename (default: ``sync``; False inside a generation being
            written, whose commit fsyncs the folder once).
    Raises:
        OSError: creating, writing or renaming failed (``formats.faults`` turns environment errors into
        ``EnvironmentFaultError``).
    """
    path = Path(path)
    kind = special_kind(path)
    if kind is not None:  # the rename would put a regular file in place of /dev/null (the commands refuse it first)
        raise OSError(errno.EINVAL, f"is {kind}, not a file: a new file renamed over it would replace it", str(path))
    io_fault("create", path)
    with undo.region():  # an interrupt here unwinds (the temporary file is removed)
        tmp = new_temp(path, suffix)
        try:
            with naming(path):  # pyarrow's write errors name no file: the destination is the one meant
                yield tmp
            if sync:
                fsync_path(tmp)
            io_fault("rename", path)
            os.replace(tmp, path)
        except BaseException:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
            raise
    if sync if sync_folder is None else sync_folder:
        fsync_path(path.parent if str(path.parent) else Path("."), directory=True)


def copy_file(src: str | os.PathLike, dst: str | os.PathLike) -> None:
    """Copy ``src`` to ``dst`` through :func:`replacing` (a link at ``dst`` is replaced, not followed).

    Raises:
        OSError: reading ``src`` or writing next to ``dst`` failed.
    """
    import shutil

    with replacing(dst) as tmp, open(src, "rb") as fin, open(tmp, "wb") as fout:
        shutil.copyfileobj(fin, fout, 1 << 20)


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` through :func:`replacing`."""
    with replacing(path) as tmp, open(tmp, "w") as f:
        f.write(text)


__all__ = ["copy_file", "replacing", "write_text"]
