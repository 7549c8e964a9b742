"""The writer lock of a state directory and the checks made under it (:mod:`formats.checkpoint`, module docstring
"Locking" and "Links"): :class:`StateLocking` is the part of :class:`formats.checkpoint.StateStore` that takes the
lock (one ``filelock.FileLock`` per directory per process, :data:`_LOCKS`), refuses a ``.lock`` that is not a file,
and refuses a symbolic link (or a non-file ``CURRENT`` / ``config.json``) where copter reads or writes
(:meth:`StateLocking.check_links`). ``StateStore`` inherits it; filelock is imported when the lock is taken."""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from formats.faults import as_environment_fault, is_environment_fault
from formats.generation import GEN_RE
from formats.regular import what_it_is
from solver.model.errors import EnvironmentFaultError, StateBusyError, StateError

if TYPE_CHECKING:
    from filelock import FileLock

_LOCKS: dict[str, FileLock] = {}
_OWN_FILES = ("CURRENT", "config.json")
"""Names in the state folder that copter reads and replaces as regular files."""
_OWN_FOLDERS = ("abandoned", "failed")
"""Names in the state folder that copter creates as folders when first needed (a file of that name is refused)."""


class StateLocking:
    """The lock and link checks of :class:`formats.checkpoint.StateStore` (its ``root``: the state directory)."""

    root: Path
    #: seconds the last :meth:`lock` of this object spent waiting for the lock itself (the acquire: another
    #: writer's hold), without the lock library's import and the folder's checks; a round reports it as ``wait``
    lock_wait: float = 0.0
    #: (st_dev, st_ino) of the state folder when this object last took the lock (:meth:`moved_fault`)
    folder_id: tuple[int, int] | None = None

    @contextmanager
    def lock(self, create: bool = False, wait: float = 0.0) -> Iterator[None]:
        """Hold the state's writer lock (one FileLock object per directory per process, re-entrant); the
        seconds spent acquiring it are :attr:`lock_wait`.

        Args:
            create: create the state folder when missing (``init``); otherwise a missing folder, or one
                without ``CURRENT``, ``config.json`` or a ``gen-*`` entry, raises StateError (nothing is
                created, not even ``.lock``).
            wait: seconds to wait for another writer to release the lock (0: one attempt).
        Raises:
            StateBusyError: another writer still holds the lock after ``wait`` seconds.
            EnvironmentFaultError: ``.lock`` is a folder, a symbolic link or another non-file (reason
                ``"lock"``), or the lock file or the folder cannot be created or opened (permission,
                read-only file system, disk full).
            StateError: the path is a file, the folder is missing (without ``create``), or a name copter
                uses inside it is a symbolic link (:meth:`check_links`).
        """
        from filelock import FileLock, Timeout

        if self.root.exists() and not self.root.is_dir():
            raise StateError("is a file, not a state directory", file=str(self.root))
        if create:
            from formats.path_words import missing_words

            unusable = missing_words(self.root, "state directory")  # a link loop, a file in the path (helper-232)
            if unusable is not None and not unusable.endswith("not found"):
                raise StateError(f"cannot create the state directory: the path {unusable}", file=str(self.root))
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                if is_environment_fault(err):
                    raise as_environment_fault(err, self.root, "create the state directory") from err
                if _refuses_new_entries(self.root, err):
                    fault = as_environment_fault(err, self.root, "create the state directory")
                    fault.message += "; its file system accepts no new folder (a pseudo file system such as /proc)"
                    raise fault from err
                raise StateError(f"cannot create the state directory: {err.strerror or err}",
                                 file=str(self.root)) from err
        key = os.path.realpath(self.root)
        lk = _LOCKS.get(key)
        if not create and not (lk is not None and lk.is_locked) and (
                not self.root.is_dir() or not self._has_state_names()):
            # refused before the lock file is created: a folder that is not a state gets no .lock (a lock
            # this process already holds, e.g. init's, is re-entered as before)
            raise self.not_initialised()  # StateStore's (formats.checkpoint)
        if lk is None:
            lk = _LOCKS[key] = FileLock(os.path.join(key, ".lock"), timeout=0)
        self._check_lock_path()
        t_acquire = time.perf_counter()
        try:
            lk.acquire(timeout=-1 if wait == float("inf") else max(0.0, float(wait)))  # filelock: -1 = forever
        except Timeout:
            waited = f" (waited {round(wait, 3):g} s)" if wait > 0 else ""
            raise StateBusyError(f"state directory {self.root} is busy: another copter writer holds "
                                 f"{self.root / '.lock'}{waited}; retry later or use --wait SECONDS") from None
        except OSError as err:
            self._check_lock_path()
            from formats.faults import REASONS

            raise EnvironmentFaultError(f"cannot lock: {err.strerror or err}",
                                        file=str(self.root / ".lock"), reason=REASONS.get(err.errno, "lock"),
                                        errno_name=_errno_name(err)) from err
        self.lock_wait = time.perf_counter() - t_acquire
        try:
            self.folder_id = _folder_id(self.root)
            self.check_links()
            self._after_lock()
            yield
        finally:
            lk.release()

    def moved_fault(self) -> EnvironmentFaultError | None:
        """The fault of a state folder moved or removed since this object took the lock (its path is gone, or names
        another folder now), or None (also before any lock). A ``mv`` or ``rm -rf`` of the folder while a step
        solved ended "internal error: FileNotFoundError" (exit 1) at the save, which re-created an empty folder at the
        old path (helper-240, session 60); the round's writer asks this before it writes and when a write fails."""
        if self.folder_id is None:
            return None
        now = _folder_id(self.root)
        if now == self.folder_id:
            return None
        what = "is gone" if now is None else "names another folder now"
        return EnvironmentFaultError(f"the state directory was moved or removed while this command ran (the path {what});"
                                     " nothing was stored in it, and the round was not stored", file=str(self.root),
                                     reason="state_moved")

    def _after_lock(self) -> None:
        """Work every writer does first under the lock (``formats.checkpoint.StateStore``: undo a commit a killed
        writer left unfinished); nothing here."""

    def _has_state_names(self) -> bool:
        """True when the folder holds ``CURRENT``, ``config.json`` or a ``gen-*`` entry (one directory scan,
        nothing read): what every initialised state has. A folder without any is refused by the commands
        that write to a state before they create its ``.lock``; one with them is checked under the lock."""
        try:
            with os.scandir(self.root) as it:
                return any(e.name in _OWN_FILES or GEN_RE.match(e.name) for e in it)
        except OSError:
            return True  # unreadable: the lock and the commands report it as before

    def _check_lock_path(self) -> None:
        """Refuse a ``.lock`` that is not a regular file (a folder, a dangling or any symbolic link).

        Raises:
            EnvironmentFaultError: reason ``"lock"``, naming the path and what it is.
        """
        path = self.root / ".lock"
        try:
            st_ = os.lstat(path)
        except FileNotFoundError:
            return
        except OSError as err:
            raise EnvironmentFaultError(f"cannot use the lock file: {err.strerror or err}", file=str(path),
                                        reason="lock", errno_name=_errno_name(err)) from err
        if stat.S_ISREG(st_.st_mode):
            return
        what = (f"a symbolic link to {os.readlink(path)}" if stat.S_ISLNK(st_.st_mode) else
                "a folder" if stat.S_ISDIR(st_.st_mode) else "not a regular file")
        raise EnvironmentFaultError(f"cannot lock: it is {what}, not a lock file; remove it (copter creates it "
                                    "again)", file=str(path), reason="lock")

    def check_links(self) -> None:
        """Refuse a symbolic link where copter reads or writes inside the state directory: ``CURRENT``,
        ``config.json``, ``abandoned``, ``failed`` and the records in it, ``gen-*`` and copter's temporary
        names. copter never follows a link out of the state (a symlinked ``abandoned/`` would receive
        generations elsewhere). The state directory itself may be a link (``--state`` names it).

        ``CURRENT`` and ``config.json`` must also be regular files: a folder there (or a FIFO, which would
        block the read) is refused the same way, before a command writes anything (a step used to solve and
        store its generation, then fail replacing a ``CURRENT`` folder: an exit-1 traceback). ``abandoned``
        and ``failed`` must be folders when present: a file there made the step that needed the folder end
        with exit 1 after solving (helper-156), its failed round's record lost.

        Raises:
            StateError: naming the link and its target, or the non-file and what it is (exit code 3);
                nothing is changed.
        """
        for folder in (self.root, self.root / "failed"):
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for e in entries:
                if e.is_symlink() and (folder != self.root or is_own_name(e.name)):
                    raise StateError(f"is a symbolic link (to {os.readlink(e.path)}); copter never "
                                     "follows a link inside a state directory: replace it by the real file "
                                     "or folder, or remove it", file=e.path)
                if folder == self.root and e.name in _OWN_FILES and not e.is_file(follow_symlinks=False):
                    what = what_it_is(e.stat(follow_symlinks=False).st_mode)  # "a pipe (FIFO)", "a folder", ...
                    raise StateError(f"is {what}, not copter's {e.name} file: replace it by the real file, or "
                                     "remove it", file=e.path)
                if folder == self.root and e.name in _OWN_FOLDERS and not e.is_dir(follow_symlinks=False):
                    raise StateError(f"is not a folder, but copter keeps its {e.name} rounds in a folder of that "
                                     "name: move it away or remove it", file=e.path)


def is_own_name(name: str) -> bool:
    """A name copter reads or writes at the top of a state directory (``.lock`` is checked by the lock)."""
    return (name in ("CURRENT", "config.json", "abandoned", "failed", "log") or bool(GEN_RE.match(name))
            or name.startswith((".tmp-", ".trash-", ".CURRENT.", ".config.json.")))


def _errno_name(err: OSError) -> str | None:
    import errno

    return errno.errorcode.get(err.errno) if err.errno is not None else None


def _refuses_new_entries(path: Path, err: OSError) -> bool:
    """``err`` (from creating ``path`` and its missing parents) is ENOENT although the nearest existing ancestor is a
    directory: that file system accepts no new entries (``/proc``, ``/sys``'s siblings), an environment fault like
    ``/sys``'s EACCES, not a mistyped path (helper-188: ``--state /proc/x`` was exit 3, ``/sys/x`` exit 7)."""
    if err.errno != errno.ENOENT:
        return False
    parent = Path(os.path.abspath(path)).parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent.is_dir()


def _folder_id(path: Path) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the folder at ``path`` (links followed), or None when there is none."""
    try:
        st_ = os.stat(path)
    except OSError:
        return None
    return (st_.st_dev, st_.st_ino) if stat.S_ISDIR(st_.st_mode) else None
