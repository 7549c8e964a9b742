"""The ONE table of delta kinds (docs/DESIGN.md "Delta and problem files"): every other module reads this table.

:data:`KIND_TABLE` says, for each kind, its name (the ``kind`` column's value), its phase (kinds apply
in increasing phase regardless of row order), which columns it requires non-null, which it may set
(anything else must be null), and for an upsert kind which Problem field each optional column sets and
its default for a new entity. The code of a kind (the int8 id parsing gives each row, and the order of
the Parquet ``kind`` dictionary) is its position in :data:`KINDS`; it is looked up by name
(:data:`CODE`, :data:`K_COEF`), never assumed.

This module imports nothing from copter, so ``solver.model.delta`` (the Delta container) reads it
without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

# the delta table's columns (a null means "keep the current value" / "default")
SCHEMA = pa.schema([
    ("kind", pa.string()),
    ("var", pa.string()),
    ("con", pa.string()),
    ("value", pa.float64()),
    ("lower", pa.float64()),
    ("upper", pa.float64()),
    ("integer", pa.bool_()),
])
FIELDS = tuple(SCHEMA.names[1:])  # every column but ``kind``


@dataclass(frozen=True)
class Target:
    """An optional column of an upsert kind and the Problem field it sets.

    column: the delta column; attr: the Problem field (a vector over the kind's entities);
    default: its value for a new entity when the column is null; dtype: the field's numpy dtype.
    """

    column: str
    attr: str
    default: object
    dtype: type

    @property
    def is_bound(self) -> bool:
        """A bound column: magnitudes >= 1e20 mean no bound (+-inf), and lower <= upper is checked."""
        return self.column in ("lower", "upper")


@dataclass(frozen=True)
class Kind:
    """One delta kind.

    name: the ``kind`` column's value. phase: application order (0 first). side: ``"var"`` or ``"con"``,
    the entity the kind creates/updates/drops (None for ``coef``). required: columns that must be
    non-null. targets: optional columns of an upsert and what they set. finite: the float column that
    must be finite (< 1e30 in magnitude), with the word used in messages, or None.
    """

    name: str
    phase: int
    side: str | None
    required: tuple[str, ...]
    targets: tuple[Target, ...] = ()
    finite: tuple[str, str] | None = None

    @property
    def allowed(self) -> tuple[str, ...]:
        """Columns the kind may set (required ones first); every other column must be null."""
        return self.required + tuple(t.column for t in self.targets)

    @property
    def is_upsert(self) -> bool:
        return bool(self.targets)

    @property
    def is_drop(self) -> bool:
        return self.side is not None and not self.targets


KIND_TABLE: tuple[Kind, ...] = (
    Kind("var", phase=2, side="var", required=("var",),
         targets=(Target("value", "cost", 0.0, np.float64), Target("lower", "col_lower", 0.0, np.float64),
                  Target("upper", "col_upper", np.inf, np.float64),
                  Target("integer", "integrality", False, np.bool_)),
         finite=("value", "cost")),
    Kind("con", phase=3, side="con", required=("con",),
         targets=(Target("lower", "row_lower", -np.inf, np.float64),
                  Target("upper", "row_upper", np.inf, np.float64))),
    Kind("coef", phase=4, side=None, required=("var", "con", "value"), finite=("value", "coefficient")),
    Kind("drop_var", phase=1, side="var", required=("var",)),
    Kind("drop_con", phase=0, side="con", required=("con",)),
)

KINDS: tuple[str, ...] = tuple(k.name for k in KIND_TABLE)
BY_NAME: dict[str, Kind] = {k.name: k for k in KIND_TABLE}
CODE: dict[str, int] = {k.name: i for i, k in enumerate(KIND_TABLE)}  # kind name -> int8 code
PHASES: tuple[Kind, ...] = tuple(sorted(KIND_TABLE, key=lambda k: k.phase))
K_COEF = CODE["coef"]
UPSERT: dict[str, Kind] = {k.side: k for k in KIND_TABLE if k.is_upsert}  # side -> its upsert kind
DROP: dict[str, Kind] = {k.side: k for k in KIND_TABLE if k.is_drop}      # side -> its drop kind
