"""One hierarchy of typed errors for the whole library.

The CLI maps each class to an exit code (``copter_cli/exit_codes.py``); the library never exits.
Every error carries the culprit where known: ``file``, ``line`` (1-based line of a text file: MPS, CSV) or
``row`` (0-based row index of a Parquet table, as pyarrow and pandas number rows), and ``entity`` (a variable or
constraint name). The text reads ``file:12: ...`` for a line and ``file: row 0: ...`` for a row, then the entity
as ``'x17': `` unless the message already names it (``file: row 0: variable 'x17': ...``: said once).
"""

from __future__ import annotations


class CopterError(Exception):
    """Base of every error copter raises on purpose.

    Attributes:
        kind: short machine-readable name (``"validation"``, ``"format"``, ...), printed in ``--json``.
        file: path of the offending file, or None.
        line: 1-based line number of the culprit in a text file (MPS, CSV), or None.
        row: 0-based row index of the culprit in a Parquet table (``table.slice(row, 1)``, pandas'
            ``df.iloc[row]``), or None; printed as ``row N`` (a row index was printed as ``file:0``, read as a line).
        entity: name of the offending variable/constraint, or None.
        entity_named: True when the message names the entity in another form (a coefficient's
            ``coefficient ('c', 'x1')`` for the entity ``c/x1``): the text does not repeat it.
    """

    kind = "error"

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 entity: str | None = None, row: int | None = None, entity_named: bool = False):
        super().__init__(message)
        self.message = message
        self.file = None if file is None else str(file)
        self.line = line
        self.row = row
        self.entity = entity
        self.entity_named = entity_named

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(self.file if self.line is None else f"{self.file}:{self.line}")
        elif self.line is not None:
            where.append(f"line {self.line}")
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.entity is not None and not self.entity_named and repr(self.entity) not in self.message:  # once
            where.append(repr(self.entity))
        return (": ".join(where) + ": " if where else "") + self.message

    context: dict | None = None  #: extra JSON fields a caller attached (e.g. which delta of several)

    def to_dict(self) -> dict:
        d = {"kind": self.kind, "message": str(self)}
        for k in ("file", "line", "row", "entity"):
            v = getattr(self, k)
            if v is not None:
                d[k] = v
        d.update(self.context or {})
        return d


class InputError(CopterError):
    """Bad input of any kind (exit code 3): nothing was changed."""

    kind = "input"


class FormatError(InputError):
    """A file that cannot be read as what it claims to be (not Parquet, not MPS, truncated)."""

    kind = "format"


class ValidationError(InputError):
    """A readable file whose content breaks a rule (NaN, unknown name, lower > upper, duplicate key)."""

    kind = "validation"


class UnsupportedError(InputError):
    """A valid model copter does not handle (quadratic, SOS, indicator, semi-continuous sections)."""

    kind = "unsupported"


class RoundMismatchError(InputError):
    """A delta whose ``copter.base_round`` is not the state's current round."""

    kind = "round_mismatch"


class StateError(InputError):
    """A state directory that is missing, not initialised, or unreadable."""

    kind = "state"


class StateBusyError(CopterError):
    """Another writer holds the state directory's lock (exit code 6); retry later."""

    kind = "busy"


class EnvironmentFaultError(CopterError):
    """The machine refused a file operation (exit code 7): permission denied, read-only file system, disk
    full or over quota, an I/O error, too many open files, or a lock path that cannot be used. ``file`` names the path; the
    state directory is left as it was (a round is stored completely or not at all).

    Attributes:
        reason: ``"permission"``, ``"read_only"``, ``"no_space"``, ``"io"``, ``"open_files"`` (EMFILE, ENFILE:
            ``ulimit -n``), ``"memory"`` (a MemoryError: the model larger than the machine's memory), ``"lock"``,
            ``"working_directory"`` (the command's working directory was removed), ``"state_moved"`` (the state
            directory was moved or removed while a round ran) or ``"kernel_cache"`` (no folder numba can keep the
            compiled kernels in is writable).
        errno_name: the OS error's symbolic name (``"ENOSPC"``), or None.
    """

    kind = "environment"

    def __init__(self, message: str, *, file: str | None = None, reason: str = "io",
                 errno_name: str | None = None):
        super().__init__(message, file=file)
        self.reason = reason
        self.errno_name = errno_name

    def to_dict(self) -> dict:
        d = super().to_dict()
        d["reason"] = self.reason
        if self.errno_name:
            d["errno"] = self.errno_name
        return d


class MissingDependencyError(CopterError):
    """An optional extra that a command needs is not installed (exit code 8), e.g. matplotlib for
    ``copter report``: the message names the ``pip install`` that fixes it (``solver.extras.install_hint``).

    Attributes:
        package: the missing package's import name.
    """

    kind = "missing_dependency"

    def __init__(self, message: str, *, package: str):
        super().__init__(message)
        self.package = package

    def to_dict(self) -> dict:
        return {**super().to_dict(), "package": self.package}


class PartWorkerError(CopterError):
    """The worker process or Ray task solving one part of a split problem died (killed, out of memory) on
    its retry too (exit code 5: no usable point). A partitioned round records it as a failed round
    (``solver.partition.round``); ``copter compare`` fails its POP baseline with it; nothing is stored.

    Attributes:
        part: index of the part whose worker died, or None when unknown.
    """

    kind = "worker_died"

    def __init__(self, message: str, part: int | None = None):
        super().__init__(message)
        self.part = part

    def to_dict(self) -> dict:
        return {**super().to_dict(), "part": self.part}


class UsageError(CopterError):
    """Options that contradict each other or name something that does not exist (exit code 2)."""

    kind = "usage"


class NotApplicableError(UsageError):
    """A method that does not apply to this model, e.g. POP on a model whose variable names carry no
    ``<client>/`` prefix (exit code 2 alone; ``copter compare`` turns it into a ``NOT_APPLICABLE`` row and
    runs the other baselines)."""


class SettingsError(UsageError, ValueError):
    """A :class:`solver.model.settings.Settings` value out of its range, raised on construction so library
    users get the CLI's checks (exit code 2; the CLI checks its flags first, with messages naming them).

    Attributes:
        field: the offending Settings field's name (``field`` in the JSON error).
    """

    kind = "settings"

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field

    def to_dict(self) -> dict:
        return {**super().to_dict(), "field": self.field}
