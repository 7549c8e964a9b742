"""The checkpoint store: a state directory of round generations (docs/DESIGN.md "Checkpoint").

Layout::

    STATE/
      CURRENT               the current round number ("3\\n"), replaced atomically
      .lock                 filelock lock, held for the whole of init/step/rollback
      config.json           state-wide settings (keep, solver settings), written at init
      gen-000003/
        generation.json     manifest, written last: round, delta_sha256, status, every file with its size
                            ("files") and its content checksum ("crc32", formats/checksum.py)
        problem/meta.json   sense, offset, name, round, sizes, and how each array is stored
        problem/*.arrow     Arrow IPC arrays (see formats/checkpoint_arrays.py: base + optional patch)
        state.arrow         solver state: x, y, step_size, primal_weight, iterations, integer_x, engine, and the
                            matrix's scaling factors (row_scale, col_scale, scaling, coupling_rows:
                            solver.model.state.MatrixScaling)
        report.json, solution.parquet, duals.parquet, changes.parquet
      failed/round-000004-<utc>/report.json   rounds that failed and were not accepted (CURRENT unchanged)
      abandoned/<utc>-<id>/gen-000003, ...     a branch left by ``rollback``, moved aside by the next commit

Lineage: every generation.json carries an ``id`` and its ``parent_id`` (the generation it was derived
from). A step after ``rollback --to N`` creates round N+1 on a new branch; *before* the new generation is
renamed into place (and long before CURRENT names it), every generation >= N+1 of the old branch (and
every failed-round record > N+1) is moved into ``abandoned/``, so "the newest complete generation" is
always on the live branch, whatever point a crash interrupts. :meth:`StateStore.lineage` additionally
follows the ``parent_id`` links through CURRENT, so history and rollback never offer a round of another
branch even if one were left on disk.

Atomic protocol: a generation is written completely in ``.tmp-gen-*`` (every file fsynced, then the
folder), renamed to ``gen-NNNNNN``, the state folder fsynced; only then is ``CURRENT`` replaced (temp file,
fsync, ``os.replace``, fsync of the folder). A crash at any point leaves the previous round current. On
load ``CURRENT`` is validated; when it is garbled or missing or names a generation whose manifest is missing or
whose files do not match it, the newest complete generation before the round it names is used (a later one only
when none before it is complete: later rounds are there only when a rollback undid them) and
:attr:`Generation.warning` says so. A
file the machine will not let copter read (permission denied, EIO: :func:`formats.faults.is_environment_fault`)
is no damage: :func:`read_fault` (exit code 7, naming it), with no fall-back, nothing moved or removed.

Sharing: unchanged arrays are hard links to the previous generation's files (``os.link``), changed ones a
small patch against their base while the cumulative change stays under 1/8 of the array; a generation is
therefore self-contained (deleting any other one never breaks it) and a round's save cost grows with the
change, not with the problem size.

Locking: one ``filelock.FileLock`` object per state directory per process (a module registry), acquired
with timeout 0 (or ``wait`` seconds): a second writer raises :class:`~solver.model.errors.StateBusyError`
(exit code 6). A ``.lock`` that is a folder or a symbolic link, or a lock file the machine will not create,
raises :class:`~solver.model.errors.EnvironmentFaultError` (exit code 7).

Faults of the machine (``formats.faults``): every write goes through an injection point (``io_fault``); a
writer that fails before CURRENT names its round undoes everything (:meth:`GenerationWriter.abort`: the
temporary or renamed generation removed, what ``abandon_from`` moved put back), so the directory is as it
was. Links: copter follows no symbolic link inside the directory (:meth:`StateStore.check_links`: exit 3
naming it; a linked file inside a generation makes it incomplete); CURRENT and config.json are replaced
through ``O_EXCL`` temporary files, never written in place.

This module holds :class:`StateStore` (CURRENT, config.json, the generations' lineage, loading, pruning,
failed-round records); its lock and link checks are in :mod:`formats.state_lock` (which it inherits). One
generation's files and their writer (:class:`Generation`, :class:`GenerationWriter`) are in
:mod:`formats.generation`, config.json's validation in :mod:`formats.state_config`, the crash tests' kill points
(:func:`fault_point`) in :mod:`formats.faults`; the names are importable from here too.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from formats import undo
from formats.checksum import ALGORITHM as CHECKSUM
from formats.checksum import file_crc32, files_crc32
from formats.commit_journal import COMMIT_JOURNAL, CommitJournal
from formats.faults import (
    as_environment_fault,
    environment_faults,
    fault_point,
    io_fault,
    is_environment_fault,
)
from formats.fsync import fsync_path
from formats.generation import FORMAT_VERSION as GENERATION_VERSION
from formats.generation import (
    PROBLEM_FIELDS,
    Generation,
    GenerationWriter,
    check_structure,
    gen_name,
    gen_round,
    load_state_arrays,
    unlink_quietly,
    write_json,
)
from formats.regular import read_regular_text, what_it_is
from formats.state_config import (
    CONFIG_KEYS,
    CONFIG_REQUIRED,
    KEY_ALIASES,
    STATE_FORMAT,
    check_config_values,
    closest_key,
    null_value_error,
    unknown_key_error,
)
from formats.state_lock import StateLocking
from solver.model.errors import EnvironmentFaultError, StateError

if TYPE_CHECKING:  # numpy, pyarrow, filelock and the arrays are imported where used: show/history/rollback
    from collections.abc import Callable

    Verify = bool | Callable[[str], bool]  # StateStore.damage: which files' content checksums to check

STATE_VERSION = 1  # config.json's "version": the state directory's layout (a newer one is refused, exit 3)
DEFAULT_KEEP = 5
_CURRENT_RE = re.compile(r"[0-9]+\n?", re.ASCII)

_RECENT: dict[str, tuple[tuple, Generation]] = {}  # realpath -> (generation.json identity, generation), oldest first
RECENT_STATES = 8
"""How many state directories' last generations a process keeps (:meth:`StateStore._remember`), the one stored least
recently dropped first: a loaded generation's arrays are views of its files holding a descriptor each
(``formats.checkpoint_arrays.private_view``), and a program driving one state after another kept them all
(~200 states used up ``ulimit -n`` 1024)."""


def forget_recent() -> None:
    """Drop the generations this process kept (the next read of a state loads it from disk, as a new process)."""
    _RECENT.clear()


def _remove_empty(*folders: Path | None) -> None:
    """rmdir each folder given, in order, when it is empty (best effort: a failure leaves it)."""
    for folder in folders:
        if folder is not None:
            with contextlib.suppress(OSError):
                folder.rmdir()


CURRENT_MOVED_RETRIES = 5  #: re-reads of CURRENT when it moved on while a reader read the round it named


def read_fault(err: OSError, path) -> EnvironmentFaultError:
    """The error for a state file the machine will not let copter read (exit code 7): an ``OSError`` of
    :func:`formats.faults.is_environment_fault` (permission denied, an I/O error, ...), named by its path.

    Such a file is never taken for damage: damage (a file missing, of the wrong size or checksum, not JSON) makes
    the previous generation current with a warning, and the next step moves the newer rounds into ``abandoned/``;
    a round that is only unreadable for now (``chmod``, another user's umask, a flaky mount) must not be lost
    that way. The command stops instead, before it writes anything. An I/O error (EIO) is treated the same:
    it may pass, and a round that is really lost can be given up by moving its folder out of the state
    directory (copter then falls back as for a missing generation).
    """
    fault = as_environment_fault(err, path, "read")
    fault.message += "; a state file copter may not read is not damage: nothing was changed, no older round used"
    return fault


def _write_text_atomic(path: Path, text: str, replaced=None) -> None:
    """Replace ``path`` by a file holding ``text``: a new temp file (``O_EXCL``: never a planted link) in
    the same folder, fsync, ``os.replace`` (replaces a link at ``path`` itself, never its target), fsync
    of the folder. On failure before the replace the temp file is removed and ``path`` is untouched.
    ``replaced()`` (when given) runs right after the replace, before the folder's fsync, which may still fail."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
    with undo.region():  # an interrupt here unwinds (the temp file is removed)
        try:
            io_fault("text", tmp)
            with open(tmp, "x") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            io_fault("rename", path)
            os.replace(tmp, path)
        except BaseException:
            unlink_quietly(tmp)
            raise
    if replaced is not None:
        replaced()
    fsync_path(path.parent, directory=True)


class StateStore(CommitJournal, StateLocking):
    """A state directory (see module docstring). Cheap to construct; touches nothing until used.

    Args:
        root: the state directory path.
        reuse: let :meth:`load` return the generation this process itself committed last (same files
            on disk, checked by the identity of its generation.json) instead of reading it back.
    """

    def __init__(self, root: str | os.PathLike, reuse: bool = True):
        self.root = Path(root)
        self.reuse = reuse

    # ------------------------------------------------------------------ locking: StateLocking (formats.state_lock)

    # ------------------------------------------------------------------ config
    @property
    def initialised(self) -> bool:
        """True when the folder holds a CURRENT file or at least one generation."""
        return (self.root / "CURRENT").exists() or bool(self.generations())

    def write_config(self, config: dict) -> None:
        """Replace config.json atomically."""
        from formats.reports import dumps

        _write_text_atomic(self.root / "config.json", dumps(config) + "\n")

    def check_version(self) -> None:
        """Refuse a state directory written by a newer copter (config.json ``version`` above
        :data:`STATE_VERSION`) or whose version is not a positive integer; version 1 is the first, so there
        is no older layout to migrate. An absent config.json is left to the commands that need it.

        Raises:
            StateError: naming config.json, its version and the one this copter reads (exit 3); a config.json
                that is not a JSON object (:meth:`config`).
            EnvironmentFaultError: config.json cannot be read (permission, I/O error: exit 7).
        """
        body = self.config()
        if "version" not in body:
            return
        v = body["version"]
        path = str(self.root / "config.json")
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise StateError(f"config.json is damaged: state format version {json.dumps(v)} is not a positive integer "
                             f"(this copter reads version {STATE_VERSION})", file=path)
        if v > STATE_VERSION:
            raise StateError(f"state format version {v} is newer than this copter reads (version "
                             f"{STATE_VERSION}): the state was written by a newer copter; upgrade copter",
                             file=path)

    def config(self, required: bool = False) -> dict:
        """config.json content: the options init stored for later rounds (written before round 0, so every
        initialised state has one).

        Args:
            required: raise instead of returning {} when the file is absent (``step``: solving with the
                defaults instead of the stored options would be silently wrong).
        Returns:
            The JSON object; {} when absent and not ``required``.
        Raises:
            StateError: config.json is not JSON, not a JSON object, or (``required``) missing (exit 3); a
                stored setting or ``keep`` copter refuses (``"tol": -5``), naming config.json and the key
                (entity ``settings.tol``): never blamed on an option the user did not give, nor a round
                solved at a value ``Settings`` refuses. Whether required or not: a config.json that is
                there but damaged fails the read-only commands too, as a bad value always did.
            EnvironmentFaultError: the file cannot be read (permission, I/O error: exit 7, :func:`read_fault`).
        """
        path = self.root / "config.json"
        try:
            body = json.loads(read_regular_text(path))
        except (FileNotFoundError, NotADirectoryError):  # the state path is a file: said by the state's own check
            if not required or not self.root.is_dir():
                return {}
            raise StateError("config.json is missing from the state directory: it holds the options init "
                             "stored for later rounds (restore it from a backup, or init a new state)",
                             file=str(path)) from None
        except OSError as err:
            if is_environment_fault(err):
                raise read_fault(err, path) from err
            from formats.path_words import missing_words

            unusable = missing_words(self.root, "state directory")  # a link loop is the path's, not damage (helper-232)
            if unusable is not None:
                raise StateError(unusable, file=str(self.root)) from None
            raise StateError(f"config.json is damaged (cannot be read: {err.strerror or err})",
                             file=str(path)) from None
        except ValueError as err:
            raise StateError(f"config.json is damaged (not JSON: {err})", file=str(path)) from None
        except RecursionError:  # json's parser recurses per nesting level: [[[[...]]]] is damage, not a bug
            raise StateError("config.json is damaged (not JSON copter reads: nested too deeply)",
                             file=str(path)) from None
        if not isinstance(body, dict):
            raise StateError(f"config.json is damaged (a JSON {type(body).__name__}, not an object)",
                             file=str(path))
        check_config_values(body, path)
        return body

    def config_missing(self) -> str | None:
        """The warning of a read-only command on an initialised state whose config.json is missing (``step`` and
        ``rollback`` refuse such a state, :meth:`config` with ``required``), or None. Such a command goes on, with
        the defaults where it needs a stored option (``show --solution``'s zero tolerance, ``compare``'s
        tolerance and grouping), and says so (helper-211: ``show --solution`` of a state initialised with ``--tol
        0.5`` listed the values above 1e-4 without a word)."""
        path = self.root / "config.json"
        if os.path.lexists(path) or not self.root.is_dir():
            return None
        if not (os.path.lexists(self.root / "CURRENT") or self.generations()):
            return None  # not initialised: the command says so itself
        return ("config.json is missing from the state directory (it holds the options init stored: tolerance, "
                "keep, partition): this command used the defaults where it needed them, and `copter step` and "
                "`rollback` refuse the state until config.json is restored from a backup")

    # ------------------------------------------------------------------ generations
    def generations(self) -> list[int]:
        """Round numbers of every *complete* generation, ascending, but the round of an unfinished commit (a
        journal, :meth:`open_commit`: never made current)."""
        if not self.root.is_dir():
            return []
        rounds = []
        for p in self.root.iterdir():
            r = gen_round(p.name)
            if r is not None and self.is_complete(r):
                rounds.append(r)
        pending = self.pending_ids()  # an unfinished commit's round is no round of the state (helper-196: a killed
        if pending:                   # init's round 0 was shown as current and refused a second init)
            rounds = [r for r in rounds if (self.manifest(r) or {}).get("id") not in pending]
        return sorted(rounds)

    def manifest(self, round_: int) -> dict | None:
        """generation.json of a round, or None when missing or damaged (not a JSON object).

        Raises:
            EnvironmentFaultError: the file cannot be read (permission, I/O error: :func:`read_fault`).
        """
        return self._manifest(round_)[0]

    def _manifest(self, round_: int) -> tuple[dict | None, str]:
        """(generation.json of a round, "") or (None, what is wrong with it: missing, not JSON, ...);
        raises :func:`read_fault`'s error for a file the machine will not let copter read."""
        path = self.root / gen_name(round_) / "generation.json"
        try:
            man = json.loads(read_regular_text(path))
        except FileNotFoundError:
            return None, "generation.json is missing"
        except OSError as err:
            if is_environment_fault(err):
                raise read_fault(err, path) from err
            return None, f"generation.json cannot be read ({err.strerror or err})"
        except ValueError as err:
            return None, f"generation.json is not JSON ({err})"
        except RecursionError:
            return None, "generation.json is not JSON copter reads (nested too deeply)"
        if not isinstance(man, dict):
            return None, f"generation.json is a JSON {type(man).__name__}, not an object"
        return man, ""

    def is_complete(self, round_: int) -> bool:
        """True when the generation's manifest is readable and every file it lists exists with its size,
        as a regular file (a symbolic link in a generation makes it incomplete: never followed)."""
        return self.damage(round_) == ""

    def lineage(self, current: int) -> list[int]:
        """Kept rounds on the live branch through ``current``, ascending.

        Walks down from ``current`` while each generation's ``parent_id`` is the ``id`` of the round
        below, and up while the round above names this one as parent (rounds kept for a roll-forward
        after a rollback). A generation without ids (older format) counts as linked.
        """
        gens = set(self.generations())
        if current not in gens:
            return sorted(gens)
        mans = {r: self.manifest(r) or {} for r in gens}  # gens: no unfinished commit's round (generations)

        def linked(lo: int, hi: int) -> bool:
            parent, own = mans[hi].get("parent_id"), mans[lo].get("id")
            return parent is None or own is None or parent == own

        out = [current]
        r = current
        while r - 1 in gens and linked(r - 1, r):
            r -= 1
            out.append(r)
        r = current
        while r + 1 in gens and linked(r, r + 1):
            r += 1
            out.append(r)
        return sorted(out)

    # ------------------------------------------------------------------ the commit journal: CommitJournal
    # (formats.commit_journal)

    def abandon_from(self, round_: int, moves: list | None = None, before_moves=None) -> list[int]:
        """Move every generation >= ``round_`` and every failed-round record > ``round_`` into
        ``abandoned/<utc with ns>-<id>/`` (one atomic rename each; newest first, so an interrupted move never
        leaves a gap below a kept round). Call under the lock, before a new generation ``round_`` is
        renamed into place; CURRENT must name a round < ``round_``. ``moves`` (when given) receives each
        ``(from, to)`` pair, so a writer that fails later can move them back; ``before_moves(batch)`` (when given)
        is called with the new batch folder before the first move (the commit's journal, :meth:`open_commit`).

        Returns:
            The generation rounds moved.
        """
        gens = [r for r in self.gen_entries() if r >= round_]
        fails = [p for p in self.failures() if _failed_round(p) > round_]
        if not gens and not fails:
            return []
        new_parent = not (self.root / "abandoned").is_dir()
        dest = self._abandoned_batch()
        moved = 0
        try:
            if before_moves is not None:
                before_moves(dest)
            pairs = [(self.root / gen_name(r), dest / gen_name(r)) for r in sorted(gens, reverse=True)]
            pairs += [(p, dest / f"failed-{p.name}") for p in fails]
            for src, dst in pairs:
                io_fault("rename", dst)
                os.rename(src, dst)
                moved += 1
                if moves is not None:
                    moves.append((src, dst))
            fsync_path(dest, directory=True)
            fsync_path(self.root, directory=True)
        except BaseException:
            if not moved:  # nothing in it: the batch goes (an empty one counted toward --keep: helper-196)
                _remove_empty(dest, self.root / "abandoned" if new_parent else None)
            raise
        return sorted(gens)

    def foreign_entries(self) -> list[str]:
        """The top-level entries of this folder that are not copter's, sorted (hidden ones and ``lost+found`` aside):
        a name copter writes counts by its name, and ``config.json``, ``log/``, ``failed/`` and ``abandoned/`` by
        what they hold: a state's config, the round log's tables of segments, failed-round records, set-aside
        batches (review 38 and helper-179: a user's ``config.json`` was overwritten by init, a user's
        ``log/rounds/app.log`` got the round log beside it). [] for a missing or unreadable folder."""
        from formats.state_lock import is_own_name

        try:
            names = sorted(os.listdir(self.root)) if self.root.is_dir() else []
        except OSError:
            return []
        return [n for n in names if not (n.startswith(".") or n == "lost+found"
                                         or (is_own_name(n) and self._holds_only_copters(n)))]

    def _holds_only_copters(self, name: str) -> bool:
        """Whether the top-level entry ``name`` (one of copter's names) holds what copter writes there."""
        from formats.round_log import DAMAGED_PREFIX, FILE_RE, LOG_DIR, TABLES
        from formats.state_config import STATE_FORMAT

        path = self.root / name
        try:
            if name == "config.json":
                return json.loads(read_regular_text(path)).get("format") == STATE_FORMAT
            if name not in (LOG_DIR, "failed", "abandoned"):
                return True
            inside = [n for n in os.listdir(path) if not n.startswith(".")]
            if name == LOG_DIR:
                return set(inside) <= set(TABLES) and all(
                    FILE_RE.match(f.removeprefix(DAMAGED_PREFIX)) for t in inside for f in os.listdir(path / t)
                    if not f.startswith("."))
            pattern = FAILED_RE if name == "failed" else ABANDONED_RE
            return all(pattern.fullmatch(n) and (path / n).is_dir() for n in inside)
        except (OSError, ValueError, AttributeError):
            return False

    def abandoned_generation(self, round_: int) -> Path | None:
        """The newest ``abandoned/<batch>/gen-<round_>`` folder (:meth:`abandon_from` moved it there), or None."""
        try:
            batches = sorted((p for p in (self.root / "abandoned").iterdir() if not p.name.startswith(".")),
                             reverse=True)  # batch names sort by time (:meth:`_abandoned_batch`)
        except OSError:  # no abandoned/ (or unreadable): nothing to name
            return None
        return next((b / gen_name(round_) for b in batches if (b / gen_name(round_)).is_dir()), None)

    def _abandoned_batch(self) -> Path:
        """A new folder ``abandoned/<utc with ns>-<id>/`` (the name sorts by time: prune keeps the newest batches)."""
        ns = time.time_ns()
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(ns // 10**9)) + f".{ns % 10**9:09d}Z"
        parent = self.root / "abandoned"
        new_parent = not parent.is_dir()
        dest = parent / f"{stamp}-{uuid.uuid4().hex[:8]}"
        io_fault("mkdir", dest)
        dest.mkdir(parents=True)
        try:
            fsync_path(parent, directory=True)  # the batch's entry, before anything is renamed into it (review 38)
            if new_parent:
                fsync_path(self.root, directory=True)
        except BaseException:  # the state as it was: no empty batch left (helper-196)
            _remove_empty(dest, parent if new_parent else None)
            raise
        return dest

    def set_aside_failures(self, records: list[Path]) -> None:
        """Move failed-round records (folders of :meth:`failures`) into ``abandoned/<utc>-<id>/failed-<name>``, one
        atomic rename each: ``init`` sets aside the failed round 0s of another base problem, which are not this
        state's history. Nothing the state reads depends on them, so an interrupted move leaves nothing to repair."""
        if not records:
            return
        dest = self._abandoned_batch()
        for p in records:
            io_fault("rename", dest / f"failed-{p.name}")
            os.rename(p, dest / f"failed-{p.name}")
        fsync_path(dest, directory=True)
        fsync_path(self.root / "failed", directory=True)

    def gen_folders(self) -> list[int]:
        """Round numbers of every ``gen-*`` folder, complete or not."""
        return [r for r, p in self._gen_paths() if p.is_dir()]

    def gen_entries(self) -> list[int]:
        """Round numbers of every entry named ``gen-*``: :meth:`gen_folders` and a file (or other non-folder) of such a
        name, which a commit of its round moves into ``abandoned/`` like a damaged folder (it was replaced and
        removed without a word: helper-211)."""
        return [r for r, _ in self._gen_paths()]

    def _gen_paths(self) -> list[tuple[int, Path]]:
        """(round, path) of every entry named ``gen-*``; [] without the folder."""
        if not self.root.is_dir():
            return []
        return [(r, p) for p in self.root.iterdir() if (r := gen_round(p.name)) is not None]

    def current(self, verify: Verify = False) -> tuple[int, str | None]:
        """The round to load and a warning when CURRENT was not usable.

        Args:
            verify: which files' content checksums to check as well (see :meth:`damage`); False (show,
                history, rollback: they read no array) checks sizes only. A generation this process
                committed itself and still holds in memory (:meth:`_recent`) is not re-read.
        Raises:
            StateError: no complete generation at all (not initialised, or every one damaged).
            EnvironmentFaultError: a file or folder of the state the machine will not let copter read
                (:func:`read_fault`): never a reason to fall back to an older round.
        """
        with environment_faults(self.root, "read"):  # e.g. the state folder's listing: "cannot read", exit 7
            for _ in range(CURRENT_MOVED_RETRIES):
                before = self._current_text()
                r, why = self._current(verify)
                if why is None or self._current_text() == before:
                    return r, why
                # CURRENT moved on while we read: a writer stored a round and pruned the one we had read (a
                # reader beside `step --keep 1`, or a batch catching up). Not damage: read CURRENT again.
            return r, why

    def _current_text(self) -> str | None:
        """CURRENT's text as it is now (None when it cannot be read): a reader compares it before and after."""
        try:
            return read_regular_text(self.root / "CURRENT")
        except (OSError, ValueError):
            return None

    def _current(self, verify: Verify) -> tuple[int, str | None]:
        self.check_links()
        self.check_version()
        text = None
        r = None
        damaged: dict[int, str] = {}  # each generation's damage as found below, said again in the error (no re-hash)
        try:
            text = read_regular_text(self.root / "CURRENT")
            if not _CURRENT_RE.fullmatch(text):  # what set_current writes; int() took "+0", " 0", "٠"
                raise ValueError(text)
            r = int(text)
            why = damaged[r] = self.damage(r, self._verify_of(r, verify))
            pending = not why and self.pending_round(r)
            if not why and not pending:
                return r, None
            folder = self.root / gen_name(r)
            # an unfinished commit's round (CURRENT named its damaged predecessor all along) is no round: the
            # readers printed and exported it as current (helper-198)
            why = (f"CURRENT names round {r}, whose generation is that of an unfinished commit" if pending else
                   f"CURRENT names round {r}, whose generation is incomplete ({why})"
                   if folder.is_dir() and not folder.is_symlink() else
                   f"CURRENT names round {r}, whose generation is missing")
        except FileNotFoundError:
            why = "CURRENT is missing"
        except OSError as err:
            if is_environment_fault(err):  # CURRENT may name a round below the newest (after a rollback)
                raise read_fault(err, self.root / "CURRENT") from err
            why = f"CURRENT is unreadable ({text!r})"
        except ValueError:
            why = f"CURRENT is unreadable ({text!r})"
        # newest first, the rounds before the one CURRENT names ahead of those after it: rounds after it are there
        # only when a rollback undid them, and falling forward onto one would undo the rollback
        newest = self.generations()[::-1]
        for g in [g for g in newest if r is None or g < r] + [g for g in newest if r is not None and g > r]:
            damaged[g] = self.damage(g, self._verify_of(g, verify))
            if not damaged[g]:  # sizes already match: only the candidate is hashed
                if r is not None and g > r:
                    return g, (f"{why}, and no round before it is complete; using the newest complete generation, "
                               f"round {g}, which a rollback to round {r} had undone")
                return g, f"{why}; using the newest complete generation, round {g}"
        folders = sorted(g for g in self.gen_folders() if not self.pending_round(g))  # an unfinished commit's
        # round is no round, and no damage either: a killed init leaves only it (helper-196)
        if folders:
            # the round CURRENT names first (the one a user rolled back to, not the newest: helper-190's damaged
            # file, shared by every round through hard links, was reported as the newest round's after a rollback)
            last = folders[-1]

            def said(g: int) -> str:
                return damaged.get(g) or self.damage(g, verify)

            if r is not None and r in folders:
                head = f"{gen_name(r)} is damaged ({said(r)}), the round CURRENT names"
                if r != last:
                    head += f"; so is every other generation, the newest {gen_name(last)} ({said(last)})"
                elif len(folders) > 1:
                    head += "; so is every other generation"
            else:
                head = f"{gen_name(last)} is damaged ({said(last)}), and so is every other; {why}"
            raise StateError(f"no complete generation: {head}", file=str(self.root))
        if self.root.exists() and not self.root.is_dir():  # as the writers say (formats/state_lock.py)
            raise StateError("is a file, not a state directory", file=str(self.root))
        err = self.not_initialised()
        pending = self.pending_warning()
        if pending:
            err.message += f"; {pending}"
        raise err

    def _verify_of(self, round_: int, verify: Verify) -> Verify:
        """``verify``, or False for the generation this process committed and still holds (_recent)."""
        return verify if verify and self._recent(round_) is None else False

    def damage(self, round_: int, verify: Verify = False) -> str:
        """Why a generation is not complete: its manifest is missing or damaged (not JSON, another round's),
        or the first file that is missing or whose size differs from generation.json, or (``verify``) whose
        content differs from the CRC-32 generation.json records ("" when it is complete).

        A file the machine will not let copter read (permission denied, EIO) is no damage: it raises
        EnvironmentFaultError (:func:`read_fault`, exit code 7), so that no caller falls back to an older
        round, moves the round into ``abandoned/`` or removes it (:meth:`cleanup`).

        Args:
            verify: False: sizes only (cheap; no file is read). True: every file's checksum. A callable
                ``rel -> bool``: the checksums of the files it accepts (those the caller will read). A
                generation written before checksums were recorded has sizes checked only.
        """
        man, why = self._manifest(round_)
        if man is None:
            return why
        said = man.get("round")
        if said != round_ or isinstance(said, bool | float):  # JSON true or 1.0 is not the integer 1 (helper-211)
            shown = json.dumps(said) if isinstance(said, bool) else repr(said)  # JSON's true, not Python's True
            return (f"generation.json says round {shown}, but it is in the folder of round {round_} "
                    f"({gen_name(round_)})")
        if why := self._version_damage(round_, man):
            return why
        if not isinstance(man.get("files"), dict):
            return "generation.json lists no files (its \"files\" is missing or not an object)"
        folder = self.root / gen_name(round_)
        for sub in (folder, folder / "problem"):
            try:
                if sub.is_symlink():
                    return f"{sub.name} is a symbolic link"
            except OSError as err:
                if is_environment_fault(err):
                    raise read_fault(err, sub) from err
                raise
        for rel, size in man["files"].items():
            try:
                st_ = os.lstat(folder / rel)
            except OSError as err:  # a folder without search permission: EACCES, not a missing file
                if is_environment_fault(err):
                    raise read_fault(err, folder / rel) from err
                return f"{rel} is missing"
            if not stat.S_ISREG(st_.st_mode):  # what it is: a FIFO read as "(a symbolic link?)" (helper-174)
                return f"{rel} is {what_it_is(st_.st_mode)}, not a regular file"
            if st_.st_size != size:
                return f"{rel} has {st_.st_size} bytes, generation.json says {size}"
        sums = man.get(CHECKSUM) if verify else None
        if not isinstance(sums, dict):
            return ""
        rels = [rel for rel in man["files"] if rel in sums and (verify is True or verify(rel))]
        # hashed side by side (files_crc32), judged in the manifest's order as one by one: the first failure counts
        got_all = files_crc32([folder / rel for rel in rels], [man["files"][rel] for rel in rels], file_crc32)
        for rel, got in zip(rels, got_all, strict=True):
            if isinstance(got, OSError):
                if is_environment_fault(got):  # permission denied, EIO: not damage, never a fall-back
                    raise read_fault(got, folder / rel) from got
                return f"{rel} cannot be read ({got.strerror or got})"
            if got != sums[rel]:
                return (f"{rel} has CRC-32 {got}, generation.json says {sums[rel]} (same size, "
                        "different content)")
        return ""

    def _version_damage(self, round_: int, man: dict) -> str:
        """"" when generation.json's ``version`` is one this copter reads (or absent), why it is damaged when it is
        no positive integer; raises for a newer one, which is no damage: such a round is never fallen back from,
        moved or removed (:meth:`cleanup` removes incomplete generations).

        Raises:
            StateError: the version is above :data:`formats.generation.FORMAT_VERSION` (exit 3, upgrade copter).
        """
        if "version" not in man:
            return ""
        v = man["version"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            return f"generation.json's format version {json.dumps(v)} is not a positive integer"
        if v > GENERATION_VERSION:
            raise StateError(f"round {round_}'s generation format version {v} is newer than this copter reads "
                             f"(version {GENERATION_VERSION}): the round was written by a newer copter; upgrade "
                             "copter", file=str(self.root / gen_name(round_) / "generation.json"))
        return ""

    def load(self, round_: int | None = None, with_state: bool = True, read: tuple[str, ...] = ()) -> Generation:
        """Load a generation (default: the current one), verifying the content checksums of the files it
        reads (problem/*, report.json, state.arrow and partition/* when ``with_state``, and ``read``: other files of the
        generation the caller will read, e.g. ``("solution.parquet",)``). A current round whose files fail
        the check is damaged like one of the wrong size: the newest complete generation is used instead
        and :attr:`Generation.warning` says so.

        Raises:
            StateError: not initialised, or the requested generation is incomplete/damaged.
            EnvironmentFaultError: a file of the generation cannot be read (permission, I/O error: exit 7,
                :func:`read_fault`; the current round is then *not* replaced by an older one).
        """
        if round_ is not None:
            return self._load(round_, with_state, read)
        return self.while_current_moves(lambda: self._load(None, with_state, read))

    def while_current_moves(self, read_current):
        """``read_current()`` (a reader of the current round), called again when it raised StateError while
        CURRENT moved on: a writer stored newer rounds and pruned the one it was reading (a reader beside
        ``step --keep 1``, or a batch catching up), which is no damage. A StateError with CURRENT unchanged is
        raised as it is."""
        for _ in range(CURRENT_MOVED_RETRIES):
            before = self._current_text()
            try:
                return read_current()
            except StateError:
                if self._current_text() == before:
                    raise
        return read_current()

    def _load(self, round_: int | None, with_state: bool, read: tuple[str, ...]) -> Generation:
        import pyarrow as pa

        from formats.checkpoint_arrays import StoredArray, load_array, stored_names
        from solver.differential.names import attach_arrow_names
        from solver.model.problem import Problem

        def reads(rel: str) -> bool:
            return rel.startswith("problem/") or rel == "report.json" or rel in read or (
                with_state and (rel == "state.arrow" or rel.startswith("partition/")))  # the parts' states

        warning = None
        if round_ is None:
            round_, warning = self.current(verify=reads)
        elif why := self.damage(round_, self._verify_of(round_, reads)):
            raise StateError(f"round {round_} is not a complete generation in {self.root} ({why}; "
                             f"kept: {self.generations()})", file=str(self.root))
        folder = self.root / gen_name(round_)
        hit = self._recent(round_)
        if hit is not None:
            return Generation(round=round_, path=folder, problem=hit.problem,
                              state=hit.state if with_state else None, report=hit.report, manifest=hit.manifest,
                              stored=hit.stored, bases=hit.bases, warning=warning)
        try:
            meta = json.loads(read_regular_text(folder / "problem" / "meta.json"))
            stored = {f: StoredArray.from_json(meta["arrays"][f]) for f in PROBLEM_FIELDS}
            values, bases = {}, {}
            for f in PROBLEM_FIELDS:
                values[f], bases[f] = load_array(str(folder / "problem"), f, stored[f])
            check_structure(values, meta)
            _normalize_old_bounds(values)
            problem = Problem(**values, sense=int(meta["sense"]), offset=float(meta["offset"]),
                              name=str(meta.get("name", "")))
            attach_arrow_names(problem, stored_names(str(folder / "problem"), "col_names", stored["col_names"]),
                               stored_names(str(folder / "problem"), "row_names", stored["row_names"]))
            state = None
            if with_state and (folder / "state.arrow").exists():
                state = load_state_arrays(folder / "state.arrow")
                if state.x.shape[0] != problem.n_cols or state.y.shape[0] != problem.n_rows:
                    state = None
            report = json.loads(read_regular_text(folder / "report.json"))
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as err:
            if is_environment_fault(err):  # pyarrow's PermissionError names no file: the folder is named
                raise read_fault(err, folder) from err
            raise StateError(f"generation {folder.name} is damaged: {err}", file=str(folder)) from err
        return Generation(round=round_, path=folder, problem=problem, state=state, report=report,
                          manifest=self.manifest(round_) or {}, stored=stored, bases=bases, warning=warning)

    # ------------------------------------------------------------------ in-process reuse
    def _identity(self, round_: int) -> tuple | None:
        try:
            st = (self.root / gen_name(round_) / "generation.json").stat()
        except OSError:
            return None
        return (round_, st.st_ino, st.st_mtime_ns, st.st_size)

    def _remember(self, gen: Generation) -> None:
        """Keep the generation this process just wrote, so the next round in the same process skips the
        reload (and keeps the problem's name -> position dicts)."""
        ident = self._identity(gen.round)
        if ident is not None:
            key = os.path.realpath(self.root)
            _RECENT.pop(key, None)  # to the end: the most recently used
            _RECENT[key] = (ident, gen)
            while len(_RECENT) > RECENT_STATES:
                del _RECENT[next(iter(_RECENT))]

    def _recent(self, round_: int) -> Generation | None:
        """The generation this process wrote for ``round_``, if its files on disk are still those."""
        entry = _RECENT.get(os.path.realpath(self.root)) if self.reuse else None
        if entry is None or entry[0][0] != round_ or self._identity(round_) != entry[0]:
            return None
        return entry[1]

    def begin(self, round_: int) -> GenerationWriter:
        """Start writing generation ``round_`` in a temporary folder."""
        return GenerationWriter(self, round_)

    def set_current(self, round_: int) -> None:
        """Atomically make ``round_`` current (temp file + fsync + os.replace + fsync of the folder)."""
        fault_point("before_current")
        # the round's commit, if one is open, is over once CURRENT names it (open_commit), also when the folder's
        # fsync then fails: the round is "nevertheless stored and current", and a journal left behind had the next
        # writer undo it when CURRENT had named that round before (helper-198)
        _write_text_atomic(self.root / "CURRENT", f"{round_}\n", replaced=lambda: self.close_commit(round_))
        fault_point("after_current")

    def names_current(self, round_: int) -> bool:
        """True when the CURRENT file on disk names ``round_`` (False when it is missing or unreadable)."""
        try:
            return read_regular_text(self.root / "CURRENT").strip() == str(round_)
        except (OSError, ValueError):
            return False

    def applied_in(self, sha256: str, up_to: int) -> int | None:
        """Round (<= ``up_to``) of a kept generation produced by the delta with this SHA-256, or None."""
        for r in reversed(self.generations()):
            if r <= up_to and (self.manifest(r) or {}).get("delta_sha256") == sha256:
                return r
        return None

    def prune(self, keep: int, current: int) -> list[int]:
        """Delete generations beyond the newest ``keep`` (never the current one) and stale temp folders.

        Returns:
            The rounds removed.
        """
        gens = self.generations()
        keep_set = set(gens[-max(1, keep):]) | {current}
        removed = []
        for r in gens:
            if r not in keep_set:
                trash = self.root / f".trash-{gen_name(r)}-{uuid.uuid4().hex[:8]}"
                io_fault("rename", trash)
                os.rename(self.root / gen_name(r), trash)
                removed.append(r)
        self.cleanup()
        ab = self.root / "abandoned"
        if ab.is_dir():
            for old in sorted(p for p in ab.iterdir() if not p.name.startswith("."))[:-max(1, keep)]:
                shutil.rmtree(old, ignore_errors=True)
        return removed

    def cleanup(self) -> None:
        """Remove temporary and trash folders left by interrupted writers (call under the lock)."""
        if not self.root.is_dir():
            return
        for p in self.root.iterdir():
            if p.name.startswith((".tmp-", ".trash-")) and p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            elif p.name.startswith((".CURRENT.", f".{COMMIT_JOURNAL}")) and p.name.endswith(".tmp"):
                p.unlink(missing_ok=True)
            elif (r := gen_round(p.name)) is not None and p.is_dir() and not self.is_complete(r):
                shutil.rmtree(p, ignore_errors=True)
        failed = self.root / "failed"
        if failed.is_dir():
            for p in failed.iterdir():
                if p.name.startswith(".tmp-"):
                    shutil.rmtree(p, ignore_errors=True)

    # ------------------------------------------------------------------ failed rounds
    def record_failure(self, round_: int, report: dict, keep: int = DEFAULT_KEEP) -> Path:
        """Store the report of a round that failed and was not accepted, as ``failed/round-N-<utc>/``.

        Returns:
            The record's folder. Only the newest ``keep`` records are kept.
        """
        base = self.root / "failed"
        if not base.is_dir():
            io_fault("mkdir", base)
        base.mkdir(exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        name = f"round-{round_:06d}-{stamp}-{uuid.uuid4().hex[:6]}"
        tmp = base / f".tmp-{name}"
        with undo.region():  # an interrupt here unwinds (the record is removed)
            try:
                io_fault("mkdir", tmp)
                tmp.mkdir()
                write_json(tmp / "report.json", report)
                fsync_path(tmp, directory=True)
                io_fault("rename", base / name)
                os.rename(tmp, base / name)
                fsync_path(base, directory=True)
            except BaseException:  # nothing of the record stays (CURRENT never depended on it)
                shutil.rmtree(tmp, ignore_errors=True)
                shutil.rmtree(base / name, ignore_errors=True)
                raise
        for old in self.failures()[:-max(1, keep)]:
            shutil.rmtree(old, ignore_errors=True)
        return base / name

    def not_initialised(self) -> StateError:
        """The error for a folder that holds no initialised state: run init; when an ``init`` left its failed
        round 0 there (it initialises nothing, docs/statuses-and-exit-codes.md "Exit codes"), the message names that
        record's report and status, which ``show`` and ``history`` cannot read without a state."""
        why = f"run `copter init BASE --state {self.root}`"
        inside = next((up for up in list(self.root.parents)[:3]
                       if (up / "CURRENT").is_file() and (up / "config.json").is_file()), None)
        if inside is not None:  # a round's folder given as the state (hunt 56: it was told to init there)
            rnd = re.fullmatch(r"gen-0*(\d+)", self.root.name)
            return StateError(f"a folder inside the state {inside}, not a state itself: give `--state {inside}`"
                              + (f" (and `--round {rnd.group(1)}` for that round, where the command takes it)"
                                 if rnd else ""), file=str(self.root))
        try:
            records = self.failures() if self.root.is_dir() else []
        except OSError:  # an unreadable failed/: the plain advice
            records = []
        for rec in reversed(records):
            rep = load_failure(rec)
            if rep.get("round") == 0:
                why = (f"its round 0 ended {rep.get('status') or 'without a status'} and initialised nothing; "
                       f"that report is {rec / 'report.json'}; run `copter init BASE --state {self.root}` "
                       "again once the base or the options are fixed, or with --accept-failed")
                break
        return StateError(f"not an initialised copter state directory ({why})", file=str(self.root))

    def failures(self) -> list[Path]:
        """Failed-round record folders, oldest first by when they were written (:func:`_failure_written`), not by
        name: a name starts with its round, so after a rollback the undone branch's higher rounds outranked the
        record just written, which ``record_failure``'s pruning then deleted at once (its report named a missing
        folder) and ``show`` called an older failure the newest (helper-233)."""
        base = self.root / "failed"
        if not base.is_dir():
            return []
        return sorted((p for p in base.iterdir() if p.name.startswith("round-") and (p / "report.json").exists()),
                      key=_failure_written)


#: a failed-round record's folder under ``failed/`` (:meth:`StateStore.record_failure`): round-NNNNNN-<utc>-<id>
FAILED_RE = re.compile(r"round-[0-9]{6,}-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}", re.ASCII)
#: a batch folder under ``abandoned/`` (:meth:`StateStore._abandoned_batch`): <utc with ns>-<id>
ABANDONED_RE = re.compile(r"[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[0-9a-f]{8}", re.ASCII)


def _failure_written(path: Path) -> tuple:
    """Sort key of a failed-round record by write time: the UTC second in its name (``round-N-<utc>-<id>``), then
    its report.json's modification time in ns (records of one second: a batch's retries through the worker), then
    the name."""
    parts = path.name.split("-")
    try:
        ns = (path / "report.json").stat().st_mtime_ns
    except OSError:
        ns = 0
    return (parts[2] if len(parts) > 2 else "", ns, path.name)


def _failed_round(path: Path) -> int:
    """Round number of a failed-round record folder ``round-NNNNNN-<utc>-<id>`` (-1 when unparsable)."""
    try:
        return int(path.name.split("-")[1])
    except (IndexError, ValueError):
        return -1


def load_failure(path: Path) -> dict:
    """The report of a failed-round record ({} when unreadable)."""
    try:
        return json.loads(read_regular_text(path / "report.json"))
    except (OSError, ValueError):
        return {}


def __getattr__(name: str):
    """``to_numpy`` (re-exported from ``formats.checkpoint_arrays``) is resolved on first use, so that importing
    this module does not import numpy and pyarrow."""
    if name == "to_numpy":
        from formats.checkpoint_arrays import to_numpy

        return to_numpy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: defined in formats.generation (a generation), formats.state_config (config.json's validation) and
#: formats.faults (the crash tests' kill points), importable from here as before the split
__all__ = ["CONFIG_KEYS", "CONFIG_REQUIRED", "DEFAULT_KEEP", "Generation", "GenerationWriter", "KEY_ALIASES",
           "PROBLEM_FIELDS", "STATE_FORMAT", "STATE_VERSION", "StateStore", "closest_key", "fault_point", "gen_name",
           "load_failure", "null_value_error", "unknown_key_error", "write_json"]


def _normalize_old_bounds(values: dict) -> None:
    """Read a stored bound of magnitude >= 1e20 as no bound (``solver.model.problem.INF_BOUND``), in place.

    Every reader has normalised such bounds to +-inf since the rule was adopted, but a state written before
    it may hold a finite 1e20: HiGHS (presolve, baselines) reads that as infinite and PDHG would not, so one
    model would be two. Arrays without such a value are left as loaded (no copy).

    Args:
        values: field -> array of the stored problem; ``col_lower``, ``col_upper``, ``row_lower`` and
            ``row_upper`` ((n,) and (m,) float64) are checked.
    """
    import numpy as np

    from solver.model.errors import ValidationError
    from solver.model.problem import INF_BOUND, normalize_infinite

    for f in ("col_lower", "col_upper", "row_lower", "row_upper"):
        v = values[f]
        if v.size and bool(np.any(np.abs(v[np.isfinite(v)]) >= INF_BOUND)):
            values[f] = normalize_infinite(v)
            wrong = np.flatnonzero(values[f] == (np.inf if f.endswith("lower") else -np.inf))
            if wrong.size:  # a lower bound >= 1e20 (upper <= -1e20): no finite point, as every reader refuses
                kind, names = ("column", values.get("col_names")) if f.startswith("col") else (
                    "row", values.get("row_names"))
                name = str(names[wrong[0]]) if names is not None and len(names) > wrong[0] else f"#{int(wrong[0])}"
                side = "lower" if f.endswith("lower") else "upper"
                inf = "+inf" if side == "lower" else "-inf"
                raise ValidationError(
                    f"{kind} {name}: its stored {side} bound {float(v[wrong[0]]):g} reads as {inf} (a bound of "
                    f"magnitude >= 1e20 means no bound), which leaves no finite point; the state was written by a "
                    f"copter before that rule: re-initialise it from a model with a finite bound", entity=name)
