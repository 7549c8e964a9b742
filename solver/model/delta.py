"""The delta: one long-format table of changes (docs/DESIGN.md "Delta and problem files"), in memory.

A problem file is a delta applied to the empty problem. The table has the columns below; ``None``
(Arrow null) means "keep the current value" for an existing entity and "default" for a new one.

| column  | Arrow type | meaning                                                          |
|---------|-----------|------------------------------------------------------------------|
| kind    | string    | one of ``KINDS`` (``solver/differential/kinds.py``)              |
| var     | string    | variable name (``var``, ``coef``, ``drop_var``)                  |
| con     | string    | constraint name (``con``, ``coef``, ``drop_con``)                |
| value   | float64   | cost for ``var``; coefficient for ``coef`` (0 removes the entry) |
| lower   | float64   | lower bound for ``var`` / ``con``                                |
| upper   | float64   | upper bound for ``var`` / ``con``                                |
| integer | bool      | integrality for ``var``                                          |

This module only builds and holds deltas; validation and application live in
``solver/differential/`` and reading/writing Parquet in ``formats/``.

Python API for pipelines (arrays or pandas Series in, one Delta out)::

    d = Delta.concat([
        Delta.vars(["x1", "x2"], cost=[1.0, 2.0], upper=[10, None]),
        Delta.cons(["cap"], upper=[5.0]),
        Delta.coefs(var=["x1", "x2"], con=["cap", "cap"], value=[1.0, 1.0]),
        Delta.drop_vars(["old"]),
    ], base_round=3)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from solver.differential.kinds import KINDS, SCHEMA  # the one table of kinds and columns

__all__ = ["KINDS", "SCHEMA", "Delta"]


def _col(values, n: int, typ: pa.DataType) -> pa.Array:
    """Arrow array of length n from None / scalar / sequence / numpy / pandas (None or pandas NA -> null).

    NaN in a numpy/list float input is kept as NaN (an error caught by validation), never turned into
    null: pass None to mean "unchanged". A pandas Series follows pandas' own convention (NaN, None and
    NA are missing values), so it gives the same delta as ``DataFrame.to_parquet`` would.
    """
    if values is None:
        return pa.nulls(n, type=typ)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.Array):
        arr = values
    elif hasattr(values, "to_numpy") and hasattr(values, "isna"):  # pandas Series
        # pandas semantics, exactly as DataFrame.to_parquet writes it: NaN/None/NA are missing -> null
        arr = pa.Array.from_pandas(values, type=typ)
    elif np.isscalar(values):
        arr = pa.array([values] * n, type=typ)
    else:
        if isinstance(values, np.ndarray) and values.dtype != object:
            arr = pa.array(values, type=typ) if typ != pa.string() else pa.array(values.astype(str), type=typ)
        else:
            arr = pa.array(list(values), type=typ, from_pandas=False)
    if arr.type != typ:
        arr = arr.cast(typ)
    if len(arr) != n:
        raise ValueError(f"column has length {len(arr)}, expected {n}")
    return arr


def sense_value(sense) -> int | None:
    """+1 / -1 / None for a delta's ``sense``: +1, -1 (any integer type, not bool), ``"min"`` / ``"max"`` (any
    case) or None.

    Raises:
        ValueError: anything else, naming it.
    """
    if sense is None:
        return None
    if isinstance(sense, str):
        word = sense.strip().lower()
        if word in ("min", "max"):
            return 1 if word == "min" else -1
    elif not isinstance(sense, (bool, np.bool_)) and isinstance(sense, (int, np.integer)) and int(sense) in (1, -1):
        return int(sense)
    raise ValueError(f"a delta's sense must be +1 or \"min\" (minimise), -1 or \"max\" (maximise), or None (keep "
                     f"the problem's), got {sense!r}")


@dataclass(eq=False)
class Delta:
    """A set of changes to a problem.

    Attributes:
        table: pyarrow Table with exactly the columns of :data:`SCHEMA` (nulls allowed), rows in
            file order.
        sense: +1 (minimise) / -1 (maximise) to set the objective sense, None to keep it; ``"min"`` / ``"max"``
            (as the file format spells it, any case) are taken as +1 / -1.
        offset: new objective constant, None to keep it.
        base_round: the round this delta applies to (produces base_round + 1), None if unchecked.
        format: ``"delta"`` or ``"problem"`` (a full problem = delta on the empty problem).
        meta: any other key-value metadata read from / written to the file.
        source: path of the file the delta was read from (for error messages), or None.
        unmarked: read from a file without ``copter.format`` (pandas or pyarrow wrote it, or dropped copter's
            metadata), so a missing ``copter.sense`` says nothing of the model's sense.
    """

    table: pa.Table
    sense: int | None = None
    offset: float | None = None
    base_round: int | None = None
    format: str = "delta"
    meta: dict = field(default_factory=dict)
    source: str | None = None
    unmarked: bool = False

    def __post_init__(self) -> None:
        """Normalise ``sense`` to +1 / -1 / None.

        Raises:
            ValueError: any other ``sense`` (a writer once stored everything but the integer 1 as "max": a
                ``sense="min"`` delta became a maximisation without a word).
        """
        self.sense = sense_value(self.sense)

    def __len__(self) -> int:
        return self.table.num_rows

    @classmethod
    def from_columns(cls, kind, var=None, con=None, value=None, lower=None, upper=None, integer=None,
                     **meta) -> Delta:
        """Build a delta from parallel columns (sequences, numpy arrays, pandas Series or scalars).

        Args:
            kind: (k,) kinds, or one kind string for all rows.
            var, con: (k,) names or None.
            value, lower, upper: (k,) float or None (None/null = unchanged or default).
            integer: (k,) bool or None.
            **meta: ``sense``, ``offset``, ``base_round``, ``format`` as on the dataclass.
        Returns:
            Delta with a table of k rows (not yet validated: see ``solver.differential.validate``).
        """
        lens = [len(c) for c in (var, con, value, lower, upper, integer)
                if c is not None and not np.isscalar(c)]
        if not isinstance(kind, str):
            lens.append(len(kind))
        if not lens:
            raise ValueError("cannot infer the number of rows: pass at least one sequence")
        n = lens[0]
        table = pa.Table.from_arrays(
            [_col(kind, n, pa.string()), _col(var, n, pa.string()), _col(con, n, pa.string()),
             _col(value, n, pa.float64()), _col(lower, n, pa.float64()), _col(upper, n, pa.float64()),
             _col(integer, n, pa.bool_())], schema=SCHEMA)
        return cls(table=table, **meta)

    @classmethod
    def from_frame(cls, frame, **meta) -> Delta:
        """Build a delta from a pandas DataFrame with a ``kind`` column and any of ``var``, ``con``,
        ``value``, ``lower``, ``upper``, ``integer`` (missing values -> null, as in Parquet)."""
        cols = {c: frame[c] for c in SCHEMA.names if c in frame.columns}
        if "kind" not in cols:
            raise ValueError("the frame needs a 'kind' column")
        if len(frame) == 0:
            return cls.empty(**meta)
        return cls.from_columns(**cols, **meta)

    @classmethod
    def empty(cls, **meta) -> Delta:
        """A delta that changes nothing."""
        return cls(table=SCHEMA.empty_table(), **meta)

    @classmethod
    def vars(cls, names: Sequence[str], cost=None, lower=None, upper=None, integer=None) -> Delta:
        """Upsert variables: (k,) names with optional (k,) cost/lower/upper/integer (None = keep/default)."""
        return cls.from_columns("var", var=names, value=cost, lower=lower, upper=upper, integer=integer)

    @classmethod
    def cons(cls, names: Sequence[str], lower=None, upper=None) -> Delta:
        """Upsert constraints: (k,) names with optional (k,) lower/upper row bounds."""
        return cls.from_columns("con", con=names, lower=lower, upper=upper)

    @classmethod
    def coefs(cls, var: Sequence[str], con: Sequence[str], value) -> Delta:
        """Set coefficients A[con, var] = value for (k,) triples (value 0 removes the entry)."""
        return cls.from_columns("coef", var=var, con=con, value=value)

    @classmethod
    def drop_vars(cls, names: Sequence[str]) -> Delta:
        """Drop variables (and their coefficients) by name."""
        return cls.from_columns("drop_var", var=names)

    @classmethod
    def drop_cons(cls, names: Sequence[str]) -> Delta:
        """Drop constraints (and their coefficients) by name."""
        return cls.from_columns("drop_con", con=names)

    @classmethod
    def concat(cls, parts: Sequence[Delta], **meta) -> Delta:
        """Concatenate deltas row-wise; metadata from ``meta`` (the parts' metadata is ignored)."""
        tables = [p.table for p in parts if p.table.num_rows] or [SCHEMA.empty_table()]
        return cls(table=pa.concat_tables(tables), **meta)
