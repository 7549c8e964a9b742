"""The commit journal of a state directory (:class:`CommitJournal`, a part of :class:`formats.checkpoint.StateStore`).

A commit writes ``STATE/.commit-NNNNNN.json`` (round, generation id, the ``abandoned/`` batch it moves rounds into,
what CURRENT said before, and its writer: pid, host, boot, process start) before its first move and its rename;
CURRENT naming the round closes it (``StateStore.set_current``). The next writer's lock undoes a commit a kill or a
power loss left unfinished (:meth:`CommitJournal.recover_commit`): the rounds it moved aside come back, its own round
(solved, never reported) goes into a new ``abandoned/`` batch, and that writer says so once
(:meth:`CommitJournal.recovery_warnings`). Until then readers leave that round out (``StateStore.generations``,
``lineage``, the current round's fall-back) and warn (:meth:`CommitJournal.pending_warning`), unless its writer still
runs. Without it, a step killed between its rename and CURRENT after a rollback left its never-reported round where
the undone one had been: history called it undone and ``rollback --to`` made it current (helper-194; the hunts of
helper-195 to helper-199 shaped the rest). docs/DESIGN.md, "Manifest and lineage"."""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

from formats.faults import as_environment_fault, is_environment_fault
from formats.fsync import fsync_path
from formats.generation import gen_name, gen_round, unlink_quietly
from formats.regular import read_regular_text
from solver.model.errors import CopterError, StateError

COMMIT_JOURNAL = ".commit-"  #: ``.commit-NNNNNN.json``: a commit under way (:meth:`StateStore.open_commit`)
JOURNAL_RE = re.compile(r"\.commit-[0-9]{6,}\.json", re.ASCII)
_RECOVERED: dict[str, list[tuple[int, Path | None, bool]]] = {}  # realpath -> commits undone, not yet said


def _key(root: Path) -> str:
    return os.path.realpath(root)


def _boot_id() -> str | None:
    """This boot's id (Linux: ``/proc/sys/kernel/random/boot_id``), None elsewhere."""
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot (Linux: field 22 of ``/proc/<pid>/stat``), or None."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            data = f.read()
        return int(data[data.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _writer_identity() -> dict:
    """What names this process as a commit's writer (:func:`_writer_alive`): pid, host, and on Linux the boot and
    the process's start, so that a pid reused after a reboot or by another process is not taken for the writer."""
    pid = os.getpid()
    return {"pid": pid, "host": os.uname().nodename, "boot": _boot_id(), "start": _process_start(pid)}


def _writer_alive(doc: dict) -> bool:
    """Whether the process that wrote a commit journal still runs (then the commit is under way): the same host,
    boot, pid and process start time (helper-197: a pid alone, reused after a power loss, silenced the warning)."""
    try:
        if doc.get("host") != os.uname().nodename or doc.get("boot") != _boot_id():
            return False
        pid = int(doc["pid"])
        if doc.get("start") is not None and _process_start(pid) != doc.get("start"):
            return False
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process (its start time matched)
        return True
    except (KeyError, TypeError, ValueError, OverflowError, OSError):
        return False
    return True


class CommitJournal:
    """The commit journal of :class:`formats.checkpoint.StateStore` (its ``root``, ``manifest``, ``names_current``,
    ``_current_text``, ``_abandoned_batch``; module docstring)."""

    root: Path

    def _journal(self, round_: int) -> Path:
        return self.root / f"{COMMIT_JOURNAL}{round_:06d}.json"

    def _journals(self) -> list[Path]:
        """The commit journals on disk (:meth:`open_commit`), oldest round first; [] when none or unreadable."""
        try:
            return sorted(p for p in self.root.iterdir() if JOURNAL_RE.fullmatch(p.name))
        except OSError:
            return []

    def open_commit(self, round_: int, gen_id: str, batch: Path | None) -> None:
        """Record, before the first of its moves and its rename, that a commit of round ``round_`` (generation id
        ``gen_id``, written by this process on this host) moves the generations >= ``round_`` into the abandoned
        batch ``batch``: a writer killed before CURRENT names the round leaves this journal, and the next writer's
        lock undoes the commit (:meth:`recover_commit`). Without it, a step killed between the rename and CURRENT
        after a rollback left its unreported round in the undone round's place: history called it undone, and
        ``rollback --to`` made it current (helper-194)."""
        from formats.checkpoint import _write_text_atomic  # the state's own atomic write (CURRENT's)

        before = self._current_text()
        _write_text_atomic(self._journal(round_), json.dumps({
            "round": round_, "id": gen_id, "batch": "" if batch is None else batch.name,
            # what CURRENT said before: a commit replacing a damaged round that CURRENT names is finished only once
            # the journal goes, not when CURRENT names its round (it did all along: helper-197)
            "current_before": None if before is None else before.strip(), **_writer_identity()}))

    def close_commit(self, round_: int) -> None:
        """The commit of ``round_`` is over (CURRENT names it, or its writer undid it): its journal goes."""
        unlink_quietly(self._journal(round_))

    def _finished(self, doc: dict) -> bool:
        """Whether the commit of journal ``doc`` is finished: CURRENT names its round, with its generation in place,
        and CURRENT did not name that round before the commit began (then only the journal's removal tells, and a
        journal still there is an unfinished commit)."""
        round_ = int(doc["round"])
        return (self.names_current(round_) and (self.manifest(round_) or {}).get("id") == str(doc["id"])
                and doc.get("current_before") != str(round_))

    def _unfinished(self) -> list[dict]:
        """The readable journals of commits that are not finished (CURRENT does not name their round with their
        generation), each as its JSON object; a reader's view (nothing is changed)."""
        out = []
        for j in self._journals():
            try:
                doc = json.loads(read_regular_text(j))
                finished = self._finished(doc)  # int(doc["round"]), doc["id"]: a garbled journal is skipped
            except (OSError, ValueError, KeyError, TypeError, OverflowError, AttributeError):
                continue
            if not finished:
                out.append(doc)
        return out

    def pending_ids(self) -> set[str]:
        """The generation ids of unfinished commits (their journals): no reader counts their rounds
        (``StateStore.generations``)."""
        return {str(doc["id"]) for doc in self._unfinished()}

    def pending_warning(self) -> str | None:
        """For a reader (it may not undo anything): the commits a killed writer left unfinished, as one warning, or
        None. A commit whose writer is still running (its pid alive on this host: a reader beside a writer, which is
        no damage, helper-196) is not one. Until the next writer's lock undoes them their rounds are no rounds of the
        state and the rounds they moved aside are in ``abandoned/``."""
        from formats.checkpoint import ABANDONED_RE

        docs = [doc for doc in self._unfinished() if not _writer_alive(doc)]
        if not docs:
            return None
        aside = []  # the batches that still hold rounds it moved (helper-199: said of an empty or missing one)
        for doc in docs:
            batch = str(doc.get("batch") or "")
            dest = self.root / "abandoned" / batch
            if batch and ABANDONED_RE.fullmatch(batch) and dest.is_dir() and any(
                    gen_round(e.name) is not None for e in dest.iterdir()):
                aside.append(str(dest))
        moved = (f", and the rounds of a rollback's branch it moved aside are in {', '.join(aside)}" if aside else "")
        return (f"a command on this state ended before its commit of round {', '.join(str(d['round']) for d in docs)} "
                f"finished (killed, or a power loss): that round was never made current and is no round of this "
                f"state{moved}, until the next command that writes to the state (step, rollback, init) undoes the "
                "commit")

    def pending_round(self, round_: int) -> bool:
        """True when generation folder ``round_`` holds the round of an unfinished commit."""
        if not self._journals():  # the usual case: one directory listing, no manifest read
            return False
        gen_id = (self.manifest(round_) or {}).get("id")
        return gen_id is not None and gen_id in self.pending_ids()

    def recover_commit(self) -> list[int]:
        """Undo the commits a killed writer left unfinished (under the lock, so no writer runs; :meth:`open_commit`):
        a commit whose round CURRENT does not name with the journal's id is undone: its generation, if renamed into
        place, is kept in a new ``abandoned/`` batch (a solved round, never reported), and what it moved into its
        abandoned batch comes back. A finished one only loses its journal. What was undone is said by
        :meth:`recovery_warnings`.

        Returns:
            The rounds whose commits were undone.
        Raises:
            StateError: a folder or FIFO where a journal goes (not copter's: exit 3 naming it).
        """
        from formats.checkpoint import ABANDONED_RE, FAILED_RE
        from formats.regular import NotRegularFile

        undone = []
        for j in self._journals():
            try:
                doc = json.loads(read_regular_text(j))
                round_, gen_id, batch = int(doc["round"]), str(doc["id"]), str(doc["batch"])
                if round_ < 0:
                    raise ValueError(round_)
            except NotRegularFile as err:  # a folder or a FIFO in its place: not copter's, and not to be removed
                raise StateError(f"{err.strerror}, where copter keeps the journal of a commit under way; remove it",
                                 file=str(j)) from None
            except (ValueError, KeyError, TypeError, OverflowError, AttributeError):  # garbled: not copter's
                unlink_quietly(j)
                continue
            final = self.root / gen_name(round_)
            placed = (self.manifest(round_) or {}).get("id") == gen_id
            if self._finished(doc) or (not placed and not batch):
                # finished (CURRENT names its round: :meth:`_finished`), or nothing of it in place and nothing moved
                unlink_quietly(j)
                continue
            kept = None
            if placed:  # never reported: kept aside as the next step would (it is a solved round), out of the way
                kept = self._abandoned_batch()
                os.rename(final, kept / final.name)
                fsync_path(kept, directory=True)
            dest = self.root / "abandoned" / batch
            restored = False
            if batch and ABANDONED_RE.fullmatch(batch) and dest.is_dir():
                for entry in sorted(dest.iterdir()):
                    # only what a commit moves there: generation folders and failed-round records (helper-199: a
                    # user's file named gen-000009 in the batch was moved into the state)
                    if gen_round(entry.name) is not None:
                        back = self.root / entry.name
                    elif entry.name.startswith("failed-") and FAILED_RE.fullmatch(entry.name.removeprefix("failed-")):
                        back = self.root / "failed" / entry.name.removeprefix("failed-")
                    else:
                        continue
                    if entry.is_dir() and not entry.is_symlink() and not os.path.lexists(back):
                        back.parent.mkdir(exist_ok=True)  # failed/ itself may have gone with its last record
                        os.rename(entry, back)
                        restored = True
                with contextlib.suppress(OSError):
                    dest.rmdir()
            if kept is not None or restored:  # something was undone: said by the writer (recorded before the
                undone.append(round_)        # folder's fsync, which may fail: its error says it too, helper-199)
                _RECOVERED.setdefault(_key(self.root), []).append((round_, kept, restored))
            fsync_path(self.root, directory=True)
            unlink_quietly(j)
        return undone

    def _after_lock(self) -> None:
        """Under a newly taken writer lock: undo the commits a killed writer left unfinished (:meth:`recover_commit`).

        Raises:
            EnvironmentFaultError: the machine refused a move (read-only file system, permission: exit 7).
            StateError: a folder or FIFO where a journal goes.
        """
        if not self._journals():
            return
        try:
            self.recover_commit()
        except OSError as err:
            if is_environment_fault(err):
                raise as_environment_fault(err, self.root, "undo an interrupted commit") from err
            raise

    @contextlib.contextmanager
    def recovery_said(self):
        """Around a writer's work: its error says what its lock undid first (:meth:`recover_commit`) when no report
        said it ("the state directory is unchanged", or a rollback's exit 2 alone, was false after the undo moved
        folders: helper-196, helper-198)."""
        try:
            yield
        except CopterError as err:
            said = self.recovery_warnings()
            if said:
                err.message += " (before that, " + "; ".join(said) + ")"
            raise

    @property
    def recovered(self) -> list[tuple[int, Path | None, bool]]:
        """(round, the abandoned batch its generation was kept in or None, a rollback's branch restored) of every
        unfinished commit :meth:`recover_commit` undid in this process on this state, not yet said."""
        return _RECOVERED.get(_key(self.root), [])

    def recovery_warnings(self, consume: bool = True) -> list[str]:
        """What :meth:`recover_commit` undid in this process on this state, as warnings, each given once (the first
        report, error or output that asks: a batch's first round, a no-op, a refused delta; helper-196); with
        ``consume`` False they stay to be given (a report that may not be printed: its round may still fail)."""
        out = []
        done = _RECOVERED.pop(_key(self.root), []) if consume else list(self.recovered)
        for round_, kept, restored in done:
            what = (f"its round {round_} was never made current" if kept is None else
                    f"its round {round_}, never made current, was moved into {kept.parent} (which keeps its newest "
                    "batches, as many as the state's --keep)")
            back = "; the rounds it had moved aside (a rollback's branch) are back in place" if restored else ""
            out.append(f"a command on this state ended before its commit finished (killed, or a power loss): {what}"
                       f"{back}; the state is as it was before that command")
        return out
