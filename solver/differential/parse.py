"""Parsing and per-row validation of a delta table (no problem needed).

:func:`parse` normalises the table's column encodings (plain / dictionary / chunked / null-typed),
gives every row its kind code and every name an integer id (one vectorised hash), groups the rows by
kind and rejects (``ValidationError`` naming the 0-based table rows) what the rows alone show wrong:
an unknown kind, a missing required column or a column the kind must leave null (both read from
:data:`~solver.differential.kinds.KIND_TABLE`), NaN, an infinite cost or coefficient, an empty name,
a non-finite offset or a sense other than +-1. Every per-row error names the row's entity too (its
``var``/``con`` names: :func:`row_entity`), in the message and the error's ``entity``. Checks that need
the problem (unknown names, duplicates within a phase, ``lower > upper`` after the upsert) run in
``apply.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from solver.differential.kinds import FIELDS, KIND_TABLE, KINDS, SCHEMA
from solver.model.errors import ValidationError
from solver.model.problem import INF_BOUND, INF_VALUE, SMALL_COEF, tiny_nonzero, tiny_sentence


def plain(arr) -> pa.Array:
    """One contiguous Arrow array from a (chunked) column.

    Dictionary chunks that share one dictionary (what the Parquet reader returns for one row group)
    are joined by concatenating their indices; differing dictionaries are unified first.
    """
    if not isinstance(arr, pa.ChunkedArray):
        return arr
    if arr.num_chunks == 1:
        return arr.chunk(0)
    if arr.num_chunks == 0:
        return pa.array([], type=arr.type)
    if pa.types.is_dictionary(arr.type):
        d0 = arr.chunk(0).dictionary
        key = [b.address if b is not None else 0 for b in d0.buffers()]
        if all(len(c.dictionary) == len(d0) and [b.address if b is not None else 0
               for b in c.dictionary.buffers()] == key for c in arr.chunks):
            idx = pa.concat_arrays([c.indices for c in arr.chunks])
            return pa.DictionaryArray.from_arrays(idx, d0)
        arr = pa.Table.from_arrays([arr], names=["c"]).unify_dictionaries().column(0)
    return arr.combine_chunks()


def _as_string(arr: pa.Array) -> pa.Array:
    """Name column as plain or dictionary-of-string; null-typed becomes all-null string."""
    t = arr.type
    if pa.types.is_null(t):
        return pa.nulls(len(arr), pa.string())
    if pa.types.is_dictionary(t):
        if pa.types.is_large_string(t.value_type):
            return pa.DictionaryArray.from_arrays(arr.indices, arr.dictionary.cast(pa.string()))
        if not pa.types.is_string(t.value_type):
            return arr.cast(pa.string())
        return arr
    if pa.types.is_string(t):
        return arr
    return arr.cast(pa.string())


def _encode(arr: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(codes, uniques): an integer id per element, equal strings -> equal ids, and the unique strings
    the ids index. Hash-based and vectorised; a dictionary column is resolved through its dictionary
    (one hash of the dictionary; when it has no repeated string the ids are the stored indices,
    zero-copy). Ids of null elements are arbitrary: callers only use ids of rows whose kind requires
    the name (checked non-null in :func:`parse`).
    """
    if pa.types.is_dictionary(arr.type):
        d = pc.dictionary_encode(arr.dictionary)
        idx = arr.indices
        buf = idx.buffers()[1]
        # the numpy dtype from the Arrow type's width and sign (pyarrow's to_pandas_dtype() imports pandas,
        # 0.5-1 s per process when it is installed)
        code = ("i" if pa.types.is_signed_integer(idx.type) else "u") + str(idx.type.bit_width // 8)
        raw = (np.frombuffer(buf, dtype=np.dtype(code), count=idx.offset + len(idx))[idx.offset:]
               if buf is not None else np.zeros(len(idx), np.int32))
        if len(d.dictionary) == len(arr.dictionary):
            return raw, arr.dictionary  # a dictionary without repeats: its indices are the ids
        canon = d.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        if idx.null_count:
            raw = np.where(idx.is_valid().to_numpy(zero_copy_only=False), raw, 0)
        return (canon[raw] if canon.size else np.zeros(len(arr), np.int64)), d.dictionary
    enc = pc.dictionary_encode(arr)
    codes = enc.indices.fill_null(0).to_numpy(zero_copy_only=False)
    return codes, enc.dictionary


def _floats(arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, valid): a zero-copy float64 view of the data buffer and the validity mask (None when
    nothing is null). Null slots hold arbitrary bits: every use is masked by ``valid``."""
    if pa.types.is_null(arr.type):
        n = len(arr)
        return np.zeros(n), np.zeros(n, dtype=bool)
    if arr.type != pa.float64():
        arr = arr.cast(pa.float64())
    buf = arr.buffers()[1]
    if buf is None:
        vals = np.zeros(len(arr))
    else:
        vals = np.frombuffer(buf, dtype=np.float64, count=arr.offset + len(arr))[arr.offset:]
    if arr.null_count == 0:
        return vals, None
    return vals, arr.is_valid().to_numpy(zero_copy_only=False)


def _bools(arr: pa.Array) -> tuple[np.ndarray, np.ndarray | None]:
    if pa.types.is_null(arr.type):
        n = len(arr)
        return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    if arr.type != pa.bool_():
        arr = arr.cast(pa.bool_())
    valid = None if arr.null_count == 0 else arr.is_valid().to_numpy(zero_copy_only=False)
    return arr.fill_null(False).to_numpy(zero_copy_only=False).astype(bool), valid


def _valid(arr: pa.Array) -> np.ndarray | None:
    if pa.types.is_null(arr.type):
        return np.zeros(len(arr), dtype=bool)
    if arr.null_count == 0:
        return None
    return arr.is_valid().to_numpy(zero_copy_only=False)


def _rows_text(rows: np.ndarray, limit: int = 5) -> str:
    rows = np.asarray(rows)
    s = ", ".join(str(int(r)) for r in rows[:limit])
    return f"row{'s' if rows.size > 1 else ''} {s}{', ...' if rows.size > limit else ''}" + (
        f" ({rows.size} rows)" if rows.size > limit else "")


def row_entity(code: int, var: pa.Array | None, con: pa.Array | None, row: int) -> tuple[str | None, str | None]:
    """(label, entity) naming what table row ``row`` is about, from its names (O(1), errors only).

    Args:
        code: the row's kind code (-1: unknown kind); var, con: the (k,) name columns (None: absent).
    Returns:
        ``("variable 'x1'", "x1")`` for a ``var``/``drop_var`` row, ``("constraint 'c'", "c")`` for a
        ``con``/``drop_con`` row, ``("coefficient ('c', 'x1')", "c/x1")`` for a ``coef`` row (the entity as
        ``apply.py``'s duplicate-coefficient error names it); a row of unknown kind by the names it has;
        only the name a row holds when the other is null; ``(None, None)`` when it holds none.
    """
    side = KIND_TABLE[code].side if code >= 0 else None
    v = var[row].as_py() if var is not None and side != "con" else None
    c = con[row].as_py() if con is not None and side != "var" else None
    if v is not None and c is not None:
        return f"coefficient ({c!r}, {v!r})", f"{c}/{v}"
    if v is not None:
        return f"variable {v!r}", v
    if c is not None:
        return f"constraint {c!r}", c
    return None, None


def fail_row(msg: str, rows, delta, label: str | None, entity: str | None):
    """:func:`fail` with the first row's ``label`` before ``msg`` and its ``entity`` (see :func:`row_entity`)."""
    # the label names the entity (a coef row's in its own form): the error's text does not repeat it
    fail(f"{label}: {msg}" if label else msg, rows, delta, entity=entity, entity_named=label is not None)


def fail(msg: str, rows, delta, entity=None, entity_named: bool = False):
    """Raise ValidationError ``msg`` naming the 0-based delta ``rows`` (the first is the error's ``row``, which
    the error's text puts first: ``d.parquet: row 3: ...``; the message lists the rows only when there are
    several, so one row is named once), the delta's source file and the ``entity`` name."""
    rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
    raise ValidationError(f"{msg} at delta {_rows_text(rows)}" if rows.size > 1 else msg, file=delta.source,
                          row=int(rows[0]) if rows.size else None,
                          entity=None if entity is None else str(entity), entity_named=entity_named)


class KindRows:
    """Table rows of each kind, sorted; built lazily (a problem file's 10M coef rows are one range)."""

    def __init__(self, order: np.ndarray | None, bounds: np.ndarray):
        self.order, self.bounds, self._cache = order, bounds, {}

    def size(self, k: int) -> int:
        return int(self.bounds[k + 1] - self.bounds[k])

    def __getitem__(self, k: int) -> np.ndarray:
        if k not in self._cache:
            a, b = int(self.bounds[k]), int(self.bounds[k + 1])
            self._cache[k] = np.arange(a, b, dtype=np.int64) if self.order is None else self.order[a:b]
        return self._cache[k]


@dataclass
class Parsed:
    """A delta table of k rows as numpy arrays: kind codes, name ids, values and validity masks
    (``*_ok`` is None when nothing is null), and the rows of each kind."""

    n: int
    kind: np.ndarray           # (k,) int8 kind code
    rows: KindRows            # rows[k] = sorted table rows of kind k
    var_codes: np.ndarray      # (k,) integer id of the var name (arbitrary where the name is null)
    var_uniq: pa.Array         # the distinct var names the ids index
    con_codes: np.ndarray
    con_uniq: pa.Array
    value: np.ndarray
    value_ok: np.ndarray | None
    lower: np.ndarray
    lower_ok: np.ndarray | None
    upper: np.ndarray
    upper_ok: np.ndarray | None
    integer: np.ndarray
    integer_ok: np.ndarray | None

    spans: list = None        # spans[k] = slice when the rows of kind k are one contiguous run
    var_names: pa.Array | None = None  # (k,) the var column (plain or dictionary strings), for messages
    con_names: pa.Array | None = None

    def entity(self, row: int) -> tuple[str | None, str | None]:
        """(label, entity) of table row ``row`` for an error message: see :func:`row_entity`."""
        return row_entity(int(self.kind[row]), self.var_names, self.con_names, row)

    def at(self, arr: np.ndarray | None, k: int) -> np.ndarray | None:
        """``arr`` restricted to the rows of kind k (a view when they are contiguous); None stays None."""
        if arr is None:
            return None
        sp_ = self.spans[k]
        return arr[sp_] if sp_ is not None else arr[self.rows[k]]

    def name(self, is_col: bool, row: int) -> str:
        code = (self.var_codes if is_col else self.con_codes)[row]
        return (self.var_uniq if is_col else self.con_uniq)[int(code)].as_py()



def _kind_codes(kind: pa.Array) -> np.ndarray:
    """int8 kind code per row, -1 for an unknown kind or null."""
    kinds = pa.array(KINDS, pa.string())
    if pa.types.is_dictionary(kind.type):
        dmap = pc.index_in(kind.dictionary, value_set=kinds).fill_null(-1).to_numpy(zero_copy_only=False)
        dmap = np.append(dmap.astype(np.int8), np.int8(-1))   # slot -1 for null indices
        idx = kind.indices.fill_null(-1).to_numpy(zero_copy_only=False) if kind.indices.null_count \
            else kind.indices.to_numpy(zero_copy_only=False)
        return dmap[idx]
    return pc.index_in(kind, value_set=kinds).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int8)



def parse(delta) -> Parsed:
    """Normalise ``delta``'s table and check the per-row rules that need no problem (see module doc).

    Args:
        delta: a :class:`~solver.model.delta.Delta` with k table rows.
    Returns:
        :class:`Parsed` (every array (k,)).
    Raises:
        ValidationError: naming the first offending rows (the delta's ``source`` as file).
    """
    cols = _read_columns(delta)
    kind = _as_string(cols["kind"])
    codes = _kind_codes(kind)
    var, con = _as_string(cols["var"]), _as_string(cols["con"])
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        shown = kind.take(pa.array(bad[:1])).to_pylist()[0]
        fail_row(f"unknown kind {shown!r} (expected one of {', '.join(KINDS)})", bad, delta,
                 *row_entity(-1, var, con, int(bad[0])))
    rows, spans = _group_by_kind(codes)
    value, value_ok = _floats(cols["value"])
    lower, lower_ok = _floats(cols["lower"])
    upper, upper_ok = _floats(cols["upper"])
    integer, integer_ok = _bools(cols["integer"])
    valid = {"var": _valid(var), "con": _valid(con), "value": value_ok, "lower": lower_ok,
             "upper": upper_ok, "integer": integer_ok}
    var_codes, var_uniq = _encode(var)
    con_codes, con_uniq = _encode(con)
    p = Parsed(delta.table.num_rows, codes, rows, var_codes, var_uniq, con_codes, con_uniq, value, value_ok,
               lower, lower_ok, upper, upper_ok, integer, integer_ok, spans, var, con)
    _check_fields(p, valid, delta)
    _check_numbers(p, delta)
    _check_names(p, valid, delta)
    check_meta(delta)
    return p


def _read_columns(delta) -> dict[str, pa.Array]:
    """Every schema column as one contiguous Arrow array (a missing column is all-null)."""
    t = delta.table
    n = t.num_rows
    cols = {}
    for name in SCHEMA.names:
        if name in t.column_names:
            cols[name] = plain(t.column(name))
        elif name == "kind":
            if n:
                raise ValidationError("delta has no 'kind' column", file=delta.source)
            cols[name] = pa.nulls(0, pa.string())
        else:
            cols[name] = pa.nulls(n, SCHEMA.field(name).type)
    return cols


def _group_by_kind(codes: np.ndarray) -> tuple[KindRows, list]:
    """The rows of each kind (a radix sort of the int8 codes unless already grouped) and, per kind, the
    slice covering them when they are one contiguous run (else None)."""
    n = codes.size
    bounds = np.zeros(len(KINDS) + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=len(KINDS)), out=bounds[1:])
    if n < 2 or np.all(codes[1:] >= codes[:-1]):
        rows = KindRows(None, bounds)  # already grouped by kind (what problem files look like)
        return rows, [slice(int(bounds[k]), int(bounds[k + 1])) for k in range(len(KINDS))]
    rows = KindRows(np.argsort(codes, kind="stable"), bounds)  # radix sort of int8
    spans = []
    for k in range(len(KINDS)):
        r = rows[k]
        spans.append(slice(int(r[0]), int(r[-1]) + 1) if r.size and r[-1] - r[0] + 1 == r.size else
                     (slice(0, 0) if not r.size else None))
    return rows, spans


def _fail_at(p: Parsed, msg: str, rows: np.ndarray, delta):
    """:func:`fail` naming the entity of the first of ``rows`` (:meth:`Parsed.entity`)."""
    fail_row(msg, rows, delta, *p.entity(int(rows[0])))


def _check_fields(p: Parsed, valid: dict, delta) -> None:
    """Each kind's required columns are non-null and the columns it does not use are null."""
    present = [k for k in range(len(KINDS)) if p.rows.size(k)]
    for f in FIELDS:
        v = valid[f]
        for k in present:
            kind = KIND_TABLE[k]
            if f in kind.required:
                if v is not None:
                    vk = p.at(v, k)
                    if not vk.all():
                        _fail_at(p, f"kind {kind.name!r} needs a non-null {f!r}", p.rows[k][~vk], delta)
            elif f not in kind.allowed:
                if v is None:
                    _fail_at(p, f"kind {kind.name!r} must leave {f!r} null", p.rows[k], delta)
                vk = p.at(v, k)
                if vk.any():
                    _fail_at(p, f"kind {kind.name!r} must leave {f!r} null", p.rows[k][vk], delta)


def _check_numbers(p: Parsed, delta) -> None:
    """No NaN in a float column a kind uses; the kind's ``finite`` column below 1e30 in magnitude; no
    coefficient in (0, 1e-9] in magnitude (HiGHS's zero, ``SMALL_COEF``).

    Only where the field may be non-null (null slots hold arbitrary bits)."""
    for nm in ("value", "lower", "upper"):
        vals, ok = getattr(p, nm), getattr(p, nm + "_ok")
        for k, kind in enumerate(KIND_TABLE):
            if nm not in kind.allowed or not p.rows.size(k):
                continue
            vk, okk = p.at(vals, k), p.at(ok, k)
            nan = np.isnan(vk)
            if nan.any() and okk is not None:
                nan &= okk
            if nan.any():
                # a required column has no null to offer (a coef row's value): keeping the entry is leaving the row out
                hint = ("leave the row out to keep the current value" if nm in kind.required else
                        "use null to mean 'unchanged'")
                _fail_at(p, f"{nm} is NaN ({hint})", p.rows[k][nan], delta)
            tiny = tiny_nonzero(vk)  # a subnormal: refused as the MPS reader refuses it (TINY_VALUE)
            if tiny.any() and okk is not None:
                tiny &= okk
            if tiny.any():
                _fail_at(p, f"{nm} {tiny_sentence(float(vk[tiny][0]))}", p.rows[k][tiny], delta)
            if kind.finite is not None and kind.finite[0] == nm:
                big = ~(np.abs(vk) < INF_VALUE)
                if big.any() and okk is not None:
                    big &= okk
                if big.any():
                    _fail_at(p, f"{kind.finite[1]} {vk[big][0]} is infinite (|value| >= 1e30)", p.rows[k][big],
                             delta)
                if kind.name == "coef":  # 0 removes the entry; a nonzero <= 1e-9 is HiGHS's zero (SMALL_COEF)
                    tiny = (vk != 0) & (np.abs(vk) <= SMALL_COEF)
                    if tiny.any() and okk is not None:
                        tiny &= okk
                    if tiny.any():
                        _fail_at(p, f"coefficient {vk[tiny][0]} is at most 1e-9 in magnitude, which HiGHS treats "
                                 "as zero (small_matrix_value): write 0 to remove the entry or rescale the row "
                                 "or column", p.rows[k][tiny], delta)


def _check_names(p: Parsed, valid: dict, delta) -> None:
    """No empty name (one comparison per distinct name)."""
    for nm, codes_, uniq in (("var", p.var_codes, p.var_uniq), ("con", p.con_codes, p.con_uniq)):
        if len(uniq) and pc.any(pc.equal(uniq, "")).as_py():
            empty = np.isin(codes_, np.flatnonzero(pc.equal(uniq, "").to_numpy(zero_copy_only=False)))
            if valid[nm] is not None:
                empty &= valid[nm]
            if empty.any():
                fail(f"{nm} name is empty (names identify entities across rounds and must be non-empty)",
                     np.flatnonzero(empty), delta, entity="")


def check_meta(delta) -> None:
    """The delta's objective offset is finite and its sense is None, +1 or -1 (else ValidationError)."""
    if delta.offset is not None and not abs(delta.offset) < INF_VALUE:
        raise ValidationError(f"objective offset {delta.offset} is not finite (magnitudes >= 1e30 mean infinity)",
                              file=delta.source)
    if delta.offset is not None and tiny_nonzero(delta.offset):
        raise ValidationError(f"objective offset {tiny_sentence(delta.offset)}", file=delta.source)
    if delta.sense not in (None, 1, -1):
        raise ValidationError(f"sense must be +1 or -1, got {delta.sense}", file=delta.source)


def inf_bounds(arr: np.ndarray) -> np.ndarray:
    """Bounds with every magnitude >= 1e20 (``INF_BOUND``: no bound) as +-inf (copy only when something changes)."""
    if arr.size and not (np.abs(arr) < INF_BOUND).all():
        big = np.abs(arr) >= INF_BOUND
        if big.any():
            arr = arr.copy()
            arr[big] = np.copysign(np.inf, arr[big])
    return arr


def _first_duplicate(codes: np.ndarray) -> int:
    """Index (into ``codes``) of the first element whose code occurs twice, or -1."""
    if codes.size < 2:
        return -1
    cnt = np.bincount(codes[codes >= 0])
    if not cnt.size or cnt.max() < 2:
        return -1
    c = int(np.argmax(cnt > 1))
    return int(np.flatnonzero(codes == c)[0])


def check_unique(p: Parsed, is_col: bool, k: int, what: str, delta) -> np.ndarray:
    """Codes of the names of the rows of kind k; reject a name that appears twice among them."""
    rows = p.rows[k]
    codes = p.at(p.var_codes if is_col else p.con_codes, k)
    i = _first_duplicate(codes)
    if i >= 0:
        nm = p.name(is_col, int(rows[i]))
        fail(f"{what} {nm!r} appears twice in one phase", rows[codes == codes[i]], delta, entity=nm)
    return codes
