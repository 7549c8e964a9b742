"""The differential problem representation: apply a :class:`~solver.model.delta.Delta` to a Problem by name.

Semantics (docs/DESIGN.md "Delta and problem files", the single reference for deltas and problem files):

* Phases apply in a fixed order regardless of row order: ``drop_con``, ``drop_var``, ``var``, ``con``,
  ``coef``. Dropping an entity drops its coefficients; dropping and re-adding a name in one delta
  creates a *new* entity (appended, no coefficients) and ``coef`` rows naming it apply to it.
* ``var``/``con`` rows are upserts: a null field keeps the current value of an existing entity and takes
  the default of a new one (variable ``[0, +inf)``, cost 0, continuous; constraint ``(-inf, +inf)``).
* Surviving entities keep their relative order; new ones are appended in file-row order.
* ``coef`` sets ``A[con, var] = value``; value 0 removes the entry (a no-op if there is none).
* Bounds of magnitude >= 1e30 mean infinity. The whole delta is rejected (``ValidationError`` naming the
  0-based table rows and the entity; the input problem is never modified) for: an unknown kind; a
  missing required field or a field that kind must leave null; ``nan`` anywhere; an infinite (>= 1e30)
  cost or coefficient; an empty name; the same key twice in one phase; an unknown name in ``coef`` or
  ``drop_*``; a ``coef`` naming an entity that is dropped and not re-added; a lower bound of +inf, an
  upper bound of -inf, or ``lower > upper`` after the upsert (only upserted entities are checked: an
  empty box read from MPS is an infeasible model, not an error, until a delta touches it; HiGHS's MPS
  reader itself refuses a lower bound >= 1e20 or an upper bound <= -1e20); a non-finite objective
  offset.

Cost. Inside the delta, names become integer ids with one vectorised hash (``dictionary_encode``; a
dictionary-encoded Parquet column is hashed through its dictionary only, and a repeat-free
dictionary's indices are the ids, zero-copy), so duplicate checks and coef -> new-entity resolution
are integer operations. Names not created by the delta are looked up once per distinct name in the
problem's cached name -> position dict (``Problem.col_index``): O(k) for a delta of k rows once the
dict exists. Measured at 1M names (2 busy cores): building the dict 0.77 s once per process, then
6 ms per 10k lookups; ``pyarrow.compute.index_in`` costs 0.3-0.4 s *per call* (it hashes the value
set each time) plus 0.7 s to turn an object name array into Arrow, so the cached dict wins for
round-to-round deltas. Cost/bound-only deltas touch no matrix array (the new Problem shares
``a_indptr``/``a_indices``/``a_data`` with the old one); value-only coefficient changes copy ``a_data``
once and share the rest; structural changes (drops, inserted/removed entries) rebuild the CSC arrays
in one vectorised linear pass (mask, remap, merge), timed separately in :class:`ApplyInfo`. Entry
lookup for coefficient changes is a per-column binary search (numba, ``differential_kernels``), so
it does not scan the matrix either.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from solver.model.delta import KINDS, SCHEMA, Delta
from solver.model.errors import StateError, ValidationError
from solver.model.problem import INF_BOUND, Problem
from solver.model.state import SolverState

K_VAR, K_CON, K_COEF, K_DROP_VAR, K_DROP_CON = range(5)
_FIELDS = ("var", "con", "value", "lower", "upper", "integer")
# fields each kind requires / allows (anything else must be null)
_REQUIRED = {K_VAR: ("var",), K_CON: ("con",), K_COEF: ("var", "con", "value"),
             K_DROP_VAR: ("var",), K_DROP_CON: ("con",)}
_ALLOWED = {K_VAR: ("var", "value", "lower", "upper", "integer"), K_CON: ("con", "lower", "upper"),
            K_COEF: ("var", "con", "value"), K_DROP_VAR: ("var",), K_DROP_CON: ("con",)}
COL_FIELDS = ("col_names", "cost", "col_lower", "col_upper", "integrality")
ROW_FIELDS = ("row_names", "row_lower", "row_upper")
MATRIX_FIELDS = ("a_indptr", "a_indices", "a_data")


@dataclass(eq=False)
class ApplyInfo:
    """What :func:`apply_delta` changed, for warm-start mapping, reports and checkpoint sharing.

    Attributes:
        col_map: (n_new,) int64, old column position of each new column, -1 for an added one.
        row_map: (m_new,) int64, old row position of each new row, -1 for an added one.
        old_n_cols, old_n_rows: sizes of the problem the delta was applied to.
        vars_added, vars_removed, cons_added, cons_removed: object arrays of names (a dropped and
            re-added name appears in both).
        vars_updated, cons_updated: number of existing entities an upsert row touched.
        coefs_changed: number of ``coef`` rows that changed the matrix (set, changed or removed an entry).
        changed_fields: names of Problem fields whose array is not shared with the old problem
            (``"sense"``/``"offset"`` when those changed); every other array is the same object.
        seconds_linear: seconds spent in the linear pass over the matrix (0 when untouched).
        seconds_other: all other seconds of the apply (parsing, validation, lookups, vectors).
    """

    col_map: np.ndarray
    row_map: np.ndarray
    old_n_cols: int
    old_n_rows: int
    vars_added: np.ndarray
    vars_removed: np.ndarray
    cons_added: np.ndarray
    cons_removed: np.ndarray
    vars_updated: int = 0
    cons_updated: int = 0
    coefs_changed: int = 0
    changed_fields: frozenset = field(default_factory=frozenset)
    seconds_linear: float = 0.0
    seconds_other: float = 0.0
    col_lower: np.ndarray | None = field(default=None, repr=False)
    col_upper: np.ndarray | None = field(default=None, repr=False)

    @property
    def matrix_changed(self) -> bool:
        return bool(self.changed_fields & set(MATRIX_FIELDS))


# ---------------------------------------------------------------------------------------------- parsing
def _plain(arr) -> pa.Array:
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
    the name (checked non-null in :func:`_parse`).
    """
    if pa.types.is_dictionary(arr.type):
        d = pc.dictionary_encode(arr.dictionary)
        idx = arr.indices
        buf = idx.buffers()[1]
        raw = (np.frombuffer(buf, dtype=idx.type.to_pandas_dtype(), count=idx.offset + len(idx))[idx.offset:]
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


def _fail(msg: str, rows, delta: Delta, entity=None):
    rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
    raise ValidationError(f"{msg} at delta {_rows_text(rows)}", file=delta.source,
                          line=int(rows[0]) if rows.size else None,
                          entity=None if entity is None else str(entity))


class _KindRows:
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
class _Parsed:
    n: int
    kind: np.ndarray           # (k,) int8 kind code
    rows: _KindRows            # rows[k] = sorted table rows of kind k
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

    def at(self, arr: np.ndarray | None, k: int) -> np.ndarray | None:
        """``arr`` restricted to the rows of kind k (a view when they are contiguous); None stays None."""
        if arr is None:
            return None
        sp_ = self.spans[k]
        return arr[sp_] if sp_ is not None else arr[self.rows[k]]

    def name(self, is_col: bool, row: int) -> str:
        code = (self.var_codes if is_col else self.con_codes)[row]
        return (self.var_uniq if is_col else self.con_uniq)[int(code)].as_py()


_REQ = np.array([[f in _REQUIRED[k] for f in _FIELDS] for k in range(len(KINDS))])
_ALW = np.array([[f in _ALLOWED[k] for f in _FIELDS] for k in range(len(KINDS))])


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


def _parse(delta: Delta) -> _Parsed:
    """Normalise the delta's table and check per-row rules that need no problem (kinds, fields, NaN)."""
    t = delta.table
    n = t.num_rows
    cols = {}
    for name in ("kind",) + _FIELDS:
        if name in t.column_names:
            cols[name] = _plain(t.column(name))
        elif name == "kind":
            if n:
                raise ValidationError("delta has no 'kind' column", file=delta.source)
            cols[name] = pa.nulls(0, pa.string())
        else:
            cols[name] = pa.nulls(n, SCHEMA.field(name).type)
    kind = _as_string(cols["kind"])
    codes = _kind_codes(kind)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        shown = kind.take(pa.array(bad[:1])).to_pylist()[0]
        _fail(f"unknown kind {shown!r} (expected one of {', '.join(KINDS)})", bad, delta)
    bounds = np.zeros(len(KINDS) + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=len(KINDS)), out=bounds[1:])
    if n < 2 or np.all(codes[1:] >= codes[:-1]):
        rows = _KindRows(None, bounds)  # already grouped by kind (what problem files look like)
        spans = [slice(int(bounds[k]), int(bounds[k + 1])) for k in range(len(KINDS))]
    else:
        rows = _KindRows(np.argsort(codes, kind="stable"), bounds)  # radix sort of int8
        spans = []
        for k in range(len(KINDS)):
            r = rows[k]
            spans.append(slice(int(r[0]), int(r[-1]) + 1) if r.size and r[-1] - r[0] + 1 == r.size else
                         (slice(0, 0) if not r.size else None))
    var, con = _as_string(cols["var"]), _as_string(cols["con"])
    value, value_ok = _floats(cols["value"])
    lower, lower_ok = _floats(cols["lower"])
    upper, upper_ok = _floats(cols["upper"])
    integer, integer_ok = _bools(cols["integer"])
    valid = {"var": _valid(var), "con": _valid(con), "value": value_ok, "lower": lower_ok,
             "upper": upper_ok, "integer": integer_ok}
    present = [k for k in range(len(KINDS)) if rows.size(k)]

    def at(arr, k):
        return arr[spans[k]] if spans[k] is not None else arr[rows[k]]

    for f in _FIELDS:
        v = valid[f]
        for k in present:
            if f in _REQUIRED[k]:
                if v is not None:
                    vk = at(v, k)
                    if not vk.all():
                        _fail(f"kind {KINDS[k]!r} needs a non-null {f!r}", rows[k][~vk], delta)
            elif f not in _ALLOWED[k]:
                if v is None:
                    _fail(f"kind {KINDS[k]!r} must leave {f!r} null", rows[k], delta)
                vk = at(v, k)
                if vk.any():
                    _fail(f"kind {KINDS[k]!r} must leave {f!r} null", rows[k][vk], delta)
    # NaN / infinite checks only where the field may be non-null (null slots hold arbitrary bits)
    for nm, vals, ok, kinds in (("value", value, value_ok, (K_VAR, K_COEF)),
                                ("lower", lower, lower_ok, (K_VAR, K_CON)),
                                ("upper", upper, upper_ok, (K_VAR, K_CON))):
        for k in kinds:
            if not rows.size(k):
                continue
            vk, okk = at(vals, k), (None if ok is None else at(ok, k))
            nan = np.isnan(vk)
            if nan.any() and okk is not None:
                nan &= okk
            if nan.any():
                _fail(f"{nm} is NaN (use null to mean 'unchanged')", rows[k][nan], delta)
            if nm == "value":
                big = ~(np.abs(vk) < INF_BOUND)
                if big.any() and okk is not None:
                    big &= okk
                if big.any():
                    what = "cost" if k == K_VAR else "coefficient"
                    _fail(f"{what} {vk[big][0]} is infinite (|value| >= 1e30)", rows[k][big], delta)
    var_codes, var_uniq = _encode(var)
    con_codes, con_uniq = _encode(con)
    for nm, codes_, uniq, ok in (("var", var_codes, var_uniq, valid["var"]), ("con", con_codes, con_uniq,
                                                                           valid["con"])):
        if len(uniq) and pc.any(pc.equal(uniq, "")).as_py():  # one comparison per distinct name
            empty = np.isin(codes_, np.flatnonzero(pc.equal(uniq, "").to_numpy(zero_copy_only=False)))
            if ok is not None:
                empty &= ok
            if empty.any():
                _fail(f"{nm} name is empty (names identify entities across rounds and must be non-empty)",
                      np.flatnonzero(empty), delta, entity="")
    return _Parsed(n, codes, rows, var_codes, var_uniq, con_codes, con_uniq, value, value_ok, lower,
                   lower_ok, upper, upper_ok, integer, integer_ok, spans)


def _check_infinite_box(lower: np.ndarray, upper: np.ndarray, rows: np.ndarray, p: _Parsed, is_var: bool,
                        delta: Delta) -> None:
    """Reject a lower bound of +inf or an upper bound of -inf on the upserted entities.

    ``lower``/``upper``: (k,) the bounds after the upsert (|value| >= 1e30 already mapped to +-inf) of
    the entities upserted at delta rows ``rows`` (k,). Such a box holds no finite point, and the PDHG
    iteration turns it into inf - inf = NaN (NUMERICAL_ERROR) instead of an infeasibility verdict, so it
    is a validation error naming the entity and the delta row.
    """
    for side, arr, value in (("lower", lower, np.inf), ("upper", upper, -np.inf)):
        bad = np.flatnonzero(arr == value)
        if bad.size:
            nm = p.name(is_var, int(rows[bad[0]]))
            what = "variable" if is_var else "constraint"
            sign = "+" if value > 0 else "-"
            _fail(f"{what} {nm!r}: {side} bound is {sign}inf (|value| >= 1e30 means infinity; no finite "
                  f"point satisfies it)", rows[bad], delta, entity=nm)


def _inf(arr: np.ndarray) -> np.ndarray:
    """Bounds with every magnitude >= 1e30 as +-inf (copy only when something changes)."""
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


def _check_unique(p: _Parsed, is_col: bool, k: int, what: str, delta: Delta) -> np.ndarray:
    """Codes of the names of the rows of kind k; reject a name that appears twice among them."""
    rows = p.rows[k]
    codes = p.at(p.var_codes if is_col else p.con_codes, k)
    i = _first_duplicate(codes)
    if i >= 0:
        nm = p.name(is_col, int(rows[i]))
        _fail(f"{what} {nm!r} appears twice in one phase", rows[codes == codes[i]], delta, entity=nm)
    return codes


def _lookup(index, names: pa.Array) -> np.ndarray:
    """Positions of ``names`` (-1 when absent) in ``index``: a name -> position dict (O(len(names))
    once built) or an Arrow array of the problem's names (one vectorised ``index_in``)."""
    if index is None or len(names) == 0 or (isinstance(index, dict) and not index):
        return np.full(len(names), -1, dtype=np.int64)
    if isinstance(index, pa.Array):
        if names.type != index.type:
            names = names.cast(index.type)
        return pc.index_in(names, value_set=index).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    get = index.get
    return np.fromiter((get(s, -1) for s in names.to_pylist()), dtype=np.int64, count=len(names))


def attach_arrow_names(problem: Problem, col_names: pa.Array | None, row_names: pa.Array | None) -> None:
    """Give ``problem`` Arrow copies of its names (e.g. memory-mapped from a checkpoint).

    Until the problem's name -> position dict exists, :func:`apply_delta` then resolves names with one
    ``pyarrow.compute.index_in`` per phase (~0.3 s at 1M names) instead of building that dict in Python
    (~0.8 s at 1M names, once per process). The arrays must equal ``problem.col_names``/``row_names``.
    """
    problem.__dict__["_arrow_names"] = (col_names, row_names)


def _name_index(problem: Problem, is_col: bool):
    """The fastest available name -> position resolver for one side of ``problem``."""
    n = problem.n_cols if is_col else problem.n_rows
    if not n:
        return {}
    cached = problem._col_index if is_col else problem._row_index
    if cached is not None:
        return cached
    arrow = problem.__dict__.get("_arrow_names")
    if arrow is not None and arrow[0 if is_col else 1] is not None and len(arrow[0 if is_col else 1]) == n:
        return arrow[0 if is_col else 1]
    return problem.col_index() if is_col else problem.row_index()


# ---------------------------------------------------------------------------------------------- matrix
def find_entries_numpy(indptr: np.ndarray, indices: np.ndarray, cols: np.ndarray, rows: np.ndarray,
                       n_rows: int) -> np.ndarray:
    """Reference twin of :func:`find_entries`: O(nnz) via global sorted keys ``col * m + row``."""
    counts = np.diff(indptr)
    keys = np.repeat(np.arange(counts.size, dtype=np.int64), counts) * max(n_rows, 1) + indices
    q = cols.astype(np.int64) * max(n_rows, 1) + rows
    pos = np.searchsorted(keys, q)
    pos_c = np.minimum(pos, max(keys.size - 1, 0))
    hit = (keys.size > 0) & (pos < keys.size) & (keys[pos_c] == q) & (cols >= 0) & (rows >= 0) \
        if keys.size else np.zeros(q.shape, dtype=bool)
    return np.where(hit, pos, -1).astype(np.int64)


def find_entries(indptr: np.ndarray, indices: np.ndarray, cols: np.ndarray, rows: np.ndarray,
                 n_rows: int) -> np.ndarray:
    """Storage position of each entry ``A[rows[t], cols[t]]`` in the CSC arrays, -1 when absent.

    Binary search inside each column's slice: O(k log(nnz per column)) for k queries, the matrix is not
    scanned. Args: indptr (n+1,) int64, indices (nnz,) int32 sorted per column, cols/rows (k,) int64
    (negative = absent). Returns (k,) int64. Numba kernel; twin: :func:`find_entries_numpy`.
    """
    if not cols.size or not indices.size:
        return np.full(cols.shape[0], -1, dtype=np.int64)
    from solver.differential.kernels import find_entries_kernel  # lazy: numba import costs ~0.5 s

    return find_entries_kernel(np.ascontiguousarray(indptr, dtype=np.int64), indices,
                                np.ascontiguousarray(cols, dtype=np.int64),
                                np.ascontiguousarray(rows, dtype=np.int64))


def _assemble(problem: Problem, col_keep, row_keep, old_to_new_col, old_to_new_row, n_new, m_new,
              c_cols_old, c_rows_old, c_cols_new, c_rows_new, c_vals, keys_sorted=False):
    """Build the new CSC arrays. Returns (indptr, indices, data, n_changed, changed_fields)."""
    indptr, indices, data = problem.a_indptr, problem.a_indices, problem.a_data
    n_old = problem.n_cols
    structural_drop = (col_keep is not None) or (row_keep is not None)
    k = c_vals.size
    if indices.size == 0 or (col_keep is not None and not col_keep.any()) or \
            (row_keep is not None and not row_keep.any()):
        # no old entry survives (e.g. a problem file applied to the empty problem): inserts only
        nz = c_vals != 0
        ic, ir, iv = (c_cols_new, c_rows_new, c_vals) if nz.all() else \
            (c_cols_new[nz], c_rows_new[nz], c_vals[nz])
        if not keys_sorted and ic.size > 1:
            order = np.argsort(ic * max(m_new, 1) + ir, kind="stable")
            ic, ir, iv = ic[order], ir[order], iv[order]
        new_indptr = np.zeros(n_new + 1, dtype=np.int64)
        np.cumsum(np.bincount(ic, minlength=n_new), out=new_indptr[1:])
        changed = {"a_indptr", "a_indices", "a_data"} if (indices.size or ic.size or n_new != n_old) else set()
        return new_indptr, ir.astype(np.int32), np.ascontiguousarray(iv, dtype=np.float64), \
            int(ic.size), changed
    pos = (find_entries(indptr, indices, c_cols_old, c_rows_old, problem.n_rows) if k
           else np.zeros(0, np.int64))
    found = pos >= 0
    upd = found & (c_vals != 0)
    if upd.any():
        upd &= data[np.where(found, pos, 0)] != c_vals  # unchanged values are not changes
    dele = found & (c_vals == 0)
    ins = ~found & (c_vals != 0)
    n_changed = int(upd.sum() + dele.sum() + ins.sum())
    changed = set()
    if not structural_drop and not dele.any() and not ins.any():
        if upd.any():
            data = data.copy()
            data[pos[upd]] = c_vals[upd]
            changed.add("a_data")
        if n_new != n_old:
            indptr = np.concatenate([indptr, np.full(n_new - n_old, indptr[-1], dtype=np.int64)])
            changed.add("a_indptr")
        return indptr, indices, data, n_changed, changed
    # general path: one pass over the matrix (numba merge; numpy twin: merge_csc_numpy)
    chg = upd | dele
    chg_pos, chg_val = pos[chg], np.where(dele[chg], 0.0, c_vals[chg])
    if chg_pos.size > 1:
        o = np.argsort(chg_pos)
        chg_pos, chg_val = chg_pos[o], chg_val[o]
    ic, ir, iv = c_cols_new[ins], c_rows_new[ins], c_vals[ins]
    if ic.size > 1 and not (keys_sorted and ins.all()):
        ikeys = ic * max(m_new, 1) + ir
        if not np.all(ikeys[1:] > ikeys[:-1]):
            o = np.argsort(ikeys, kind="stable")
            ic, ir, iv = ic[o], ir[o], iv[o]
    n_surv = n_old if col_keep is None else int(col_keep.sum())
    col_map = np.concatenate([np.arange(n_old, dtype=np.int64) if col_keep is None
                              else np.flatnonzero(col_keep).astype(np.int64),
                              np.full(n_new - n_surv, -1, dtype=np.int64)])
    row_map = np.arange(problem.n_rows, dtype=np.int64) if row_keep is None else old_to_new_row
    new_indptr, new_indices, new_data = merge_csc(indptr, indices, data, col_map, row_map, chg_pos, chg_val,
                                                  ic, ir, iv)
    return new_indptr, new_indices, new_data, n_changed, {"a_indptr", "a_indices", "a_data"}


def merge_csc_numpy(indptr, indices, data, col_map, row_map, chg_pos, chg_val, ins_col, ins_row, ins_val):
    """Reference twin of :func:`merge_csc` in plain numpy (several vectorised passes)."""
    n_old, n_new = indptr.size - 1, col_map.size
    old_to_new = np.full(n_old, -1, dtype=np.int64)
    live = col_map >= 0
    old_to_new[col_map[live]] = np.flatnonzero(live)
    ecol = np.repeat(np.arange(n_old, dtype=np.int64), np.diff(indptr))
    vals = data.copy()
    vals[chg_pos] = chg_val
    keep = (vals != 0) & (old_to_new[ecol] >= 0) & (row_map[indices] >= 0)
    new_cols = old_to_new[ecol[keep]]
    new_rows = row_map[indices[keep]].astype(np.int64)
    vals = vals[keep]
    m = int(max(row_map.max(initial=-1), ins_row.max(initial=-1))) + 1 if (row_map.size or ins_row.size) else 1
    at = np.searchsorted(new_cols * m + new_rows, ins_col.astype(np.int64) * m + ins_row)
    new_cols = np.insert(new_cols, at, ins_col)
    new_rows = np.insert(new_rows, at, ins_row)
    vals = np.insert(vals, at, ins_val)
    new_indptr = np.zeros(n_new + 1, dtype=np.int64)
    np.cumsum(np.bincount(new_cols, minlength=n_new), out=new_indptr[1:])
    return new_indptr, new_rows.astype(np.int32), vals.astype(np.float64)


def merge_csc(indptr, indices, data, col_map, row_map, chg_pos, chg_val, ins_col, ins_row, ins_val):
    """New CSC arrays from the old ones in ONE pass: keep the columns ``col_map`` names, remap rows,
    apply value changes, drop removed entries, merge inserted entries.

    Args:
        indptr (n_old+1,) int64, indices (nnz,) int32, data (nnz,) float64: the old matrix.
        col_map: (n_new,) int64 old column of each new column (-1 = new, empty), survivors increasing.
        row_map: (m_old,) int64 new row of each old row (-1 = dropped), increasing where >= 0.
        chg_pos, chg_val: (c,) sorted old entry positions and their new values (0 removes the entry).
        ins_col, ins_row, ins_val: (i,) entries to insert, sorted by (new column, new row), absent
            from the old matrix.
    Returns:
        (indptr (n_new+1,) int64, indices int32, data float64), canonical (rows sorted per column).
    Numba kernel (``differential_kernels.merge_csc_kernel``); twin: :func:`merge_csc_numpy`.
    """
    from solver.differential.kernels import merge_csc_kernel

    ptr, idx, val, t = merge_csc_kernel(
        indptr.astype(np.int64, copy=False), indices, data, col_map.astype(np.int64, copy=False),
        row_map.astype(np.int64, copy=False), np.ascontiguousarray(chg_pos, dtype=np.int64),
        np.ascontiguousarray(chg_val, dtype=np.float64), np.ascontiguousarray(ins_col, dtype=np.int64),
        np.ascontiguousarray(ins_row, dtype=np.int64), np.ascontiguousarray(ins_val, dtype=np.float64))
    if t < 0.75 * idx.size:  # many entries removed: do not keep the spare capacity alive
        return ptr, idx[:t].copy(), val[:t].copy()
    return ptr, idx[:t], val[:t]


# ---------------------------------------------------------------------------------------------- apply
def _side(problem: Problem, p: _Parsed, delta: Delta, is_col: bool):
    """Drops and upserts of one side (columns or rows). Returns a dict describing the new side."""
    k_drop, k_up = (K_DROP_VAR, K_VAR) if is_col else (K_DROP_CON, K_CON)
    uniq = p.var_uniq if is_col else p.con_uniq
    what = "variable" if is_col else "constraint"
    old_names = problem.col_names if is_col else problem.row_names
    n_old = old_names.shape[0]
    index = _name_index(problem, is_col)

    drop_rows = p.rows[k_drop]
    keep = None
    removed = np.zeros(0, dtype=object)
    if drop_rows.size:
        dcodes = _check_unique(p, is_col, k_drop, f"drop_{'var' if is_col else 'con'} name", delta)
        dpos = _lookup(index, uniq.take(pa.array(dcodes)))
        unknown = np.flatnonzero(dpos < 0)
        if unknown.size:
            nm = p.name(is_col, int(drop_rows[unknown[0]]))
            _fail(f"cannot drop unknown {what} {nm!r}", drop_rows[unknown], delta, entity=nm)
        keep = np.ones(n_old, dtype=bool)
        keep[dpos] = False
        removed = old_names[np.sort(dpos)]
    if keep is not None:
        old_to_new = np.where(keep, np.cumsum(keep) - 1, -1).astype(np.int64)
        n_surv = int(keep.sum())
    else:
        old_to_new = None
        n_surv = n_old

    up_rows = p.rows[k_up]
    ucodes = _check_unique(p, is_col, k_up, what, delta) if up_rows.size else np.zeros(0, np.int64)
    upos = _lookup(index, uniq.take(pa.array(ucodes))) if (n_old and ucodes.size) else \
        np.full(ucodes.size, -1, dtype=np.int64)
    if keep is not None and upos.size:
        upos = np.where(upos >= 0, old_to_new[np.maximum(upos, 0)], -1)  # dropped + re-added = new
    is_new = upos < 0
    n_add = int(is_new.sum())
    n_new = n_surv + n_add
    newpos = upos.copy()
    newpos[is_new] = n_surv + np.arange(n_add)
    if n_add:
        added = uniq.take(pa.array(ucodes[is_new])).to_numpy(zero_copy_only=False)
    else:
        added = np.zeros(0, dtype=object)
    # name code -> new position, for every name upserted in this delta (new or existing)
    code_pos = np.full(len(uniq), -1, dtype=np.int64)
    code_pos[ucodes] = newpos
    return dict(keep=keep, old_to_new=old_to_new, n_surv=n_surv, n_new=n_new, up_rows=up_rows,
                newpos=newpos, is_new=is_new, n_add=n_add, code_pos=code_pos, code_old=None,
                added=np.asarray(added, dtype=object), removed=np.asarray(removed, dtype=object),
                index=index, drop_rows=drop_rows, ucodes=ucodes)


def _vector(old: np.ndarray, keep, n_add: int, default, dtype, up_pos, vals, ok):
    """New (n_new,) vector: survivors of ``old``, ``n_add`` defaults appended, then upserted values.

    Returns (array, changed) where changed is False when ``old`` is returned untouched (shared).
    """
    arr = old if keep is None else old[keep]
    changed = keep is not None
    if n_add:
        arr = np.concatenate([arr, np.full(n_add, default, dtype=dtype)])
        changed = True
    if ok is None or ok.all():
        pos, v = up_pos, vals
    elif ok.any():
        pos, v = up_pos[ok], vals[ok]
    else:
        pos = None
    if pos is not None and pos.size:
        diff = arr[pos] != v
        if diff.any():
            if not changed:
                arr = arr.copy()
                changed = True
            arr[pos[diff]] = v[diff]
    return arr, changed


def apply_delta(problem: Problem, delta: Delta) -> tuple[Problem, ApplyInfo]:
    """Apply ``delta`` to ``problem`` and return the new problem and what changed.

    Args:
        problem: the current problem (never modified; unchanged arrays are shared with the result).
        delta: the changes (any accepted column encoding, see ``formats/parquet.py``).
    Returns:
        (new_problem, info): see :class:`ApplyInfo`. Time is O(k) in the delta size k for cost, bound
        and value-only coefficient changes (plus one copy of ``a_data`` for the latter), and one
        vectorised linear pass over the matrix for structural changes.
    Raises:
        ValidationError: the whole delta is rejected (see the module docstring for the rules); the
            message names the delta's 0-based row(s) and the entity.
    """
    t0 = time.perf_counter()
    p = _parse(delta)
    if delta.offset is not None and not np.isfinite(delta.offset):
        raise ValidationError(f"objective offset {delta.offset} is not finite", file=delta.source)
    if delta.sense not in (None, 1, -1):
        raise ValidationError(f"sense must be +1 or -1, got {delta.sense}", file=delta.source)
    cs = _side(problem, p, delta, True)
    rs = _side(problem, p, delta, False)
    changed: set[str] = set()

    # ---- columns
    r, K = cs["up_rows"], K_VAR
    cost, ch = _vector(problem.cost, cs["keep"], cs["n_add"], 0.0, np.float64, cs["newpos"],
                       p.at(p.value, K), p.at(p.value_ok, K))
    col_lower, ch_l = _vector(problem.col_lower, cs["keep"], cs["n_add"], 0.0, np.float64, cs["newpos"],
                              _inf(p.at(p.lower, K)), p.at(p.lower_ok, K))
    col_upper, ch_u = _vector(problem.col_upper, cs["keep"], cs["n_add"], np.inf, np.float64,
                              cs["newpos"], _inf(p.at(p.upper, K)), p.at(p.upper_ok, K))
    integ, ch_i = _vector(problem.integrality, cs["keep"], cs["n_add"], False, bool, cs["newpos"],
                          p.at(p.integer, K), p.at(p.integer_ok, K))
    for f, c in (("cost", ch), ("col_lower", ch_l), ("col_upper", ch_u), ("integrality", ch_i)):
        if c:
            changed.add(f)
    if r.size:
        _check_infinite_box(col_lower[cs["newpos"]], col_upper[cs["newpos"]], r, p, True, delta)
    bad = np.flatnonzero(col_lower[cs["newpos"]] > col_upper[cs["newpos"]]) if r.size else np.zeros(0, int)
    if bad.size:
        nm = p.name(True, int(r[bad[0]]))
        _fail(f"variable {nm!r} has lower bound {col_lower[cs['newpos'][bad[0]]]} > upper bound "
              f"{col_upper[cs['newpos'][bad[0]]]} after the upsert", r[bad], delta, entity=nm)
    # ---- rows
    r, K = rs["up_rows"], K_CON
    row_lower, ch_l = _vector(problem.row_lower, rs["keep"], rs["n_add"], -np.inf, np.float64,
                              rs["newpos"], _inf(p.at(p.lower, K)), p.at(p.lower_ok, K))
    row_upper, ch_u = _vector(problem.row_upper, rs["keep"], rs["n_add"], np.inf, np.float64,
                              rs["newpos"], _inf(p.at(p.upper, K)), p.at(p.upper_ok, K))
    for f, c in (("row_lower", ch_l), ("row_upper", ch_u)):
        if c:
            changed.add(f)
    if r.size:
        _check_infinite_box(row_lower[rs["newpos"]], row_upper[rs["newpos"]], r, p, False, delta)
    bad = np.flatnonzero(row_lower[rs["newpos"]] > row_upper[rs["newpos"]]) if r.size else np.zeros(0, int)
    if bad.size:
        nm = p.name(False, int(r[bad[0]]))
        _fail(f"constraint {nm!r} has lower bound {row_lower[rs['newpos'][bad[0]]]} > upper bound "
              f"{row_upper[rs['newpos'][bad[0]]]} after the upsert", r[bad], delta, entity=nm)

    # ---- names
    def names(old, side):
        arr = old if side["keep"] is None else old[side["keep"]]
        if side["n_add"]:
            arr = np.concatenate([arr, side["added"]])
        return arr

    col_names, row_names = names(problem.col_names, cs), names(problem.row_names, rs)
    if cs["keep"] is not None or cs["n_add"]:
        changed.add("col_names")
    if rs["keep"] is not None or rs["n_add"]:
        changed.add("row_names")

    # ---- coefficients: resolve names to (old position, new position)
    kc = p.rows.size(K_COEF)
    c_cols_old, c_cols_new = _resolve_coef(problem, p, delta, cs, True)
    c_rows_old, c_rows_new = _resolve_coef(problem, p, delta, rs, False)
    c_vals = p.at(p.value, K_COEF)
    keys_sorted = True
    if kc > 1:
        keys = c_cols_new * max(rs["n_new"], 1) + c_rows_new
        keys_sorted = bool(np.all(keys[1:] > keys[:-1]))
        if not keys_sorted:
            order = np.argsort(keys, kind="stable")
            dup = np.flatnonzero(keys[order][1:] == keys[order][:-1])
            if dup.size:
                i = order[dup[0]]
                crow = p.rows[K_COEF]
                same = crow[keys == keys[i]]
                vn, cn = p.name(True, int(crow[i])), p.name(False, int(crow[i]))
                _fail(f"coefficient ({cn!r}, {vn!r}) appears twice", same, delta, entity=f"{cn}/{vn}")
    t1 = time.perf_counter()
    indptr, indices, data, n_changed, mchanged = _assemble(
        problem, cs["keep"], rs["keep"], cs["old_to_new"], rs["old_to_new"], cs["n_new"], rs["n_new"],
        c_cols_old, c_rows_old, c_cols_new, c_rows_new, c_vals, keys_sorted)
    t2 = time.perf_counter()
    changed |= mchanged
    sense = problem.sense if delta.sense is None else int(delta.sense)
    offset = problem.offset if delta.offset is None else float(delta.offset)
    if sense != problem.sense:
        changed.add("sense")
    if offset != problem.offset:
        changed.add("offset")
    new = problem.replace(col_names=col_names, row_names=row_names, cost=cost, col_lower=col_lower,
                          col_upper=col_upper, row_lower=row_lower, row_upper=row_upper, integrality=integ,
                          a_indptr=indptr, a_indices=indices, a_data=data, sense=sense, offset=offset)
    new._col_index = _next_index(problem._col_index, cs, col_names)
    new._row_index = _next_index(problem._row_index, rs, row_names)
    arrow = problem.__dict__.get("_arrow_names")
    if arrow is not None:  # still valid for a side whose names did not change
        attach_arrow_names(new, None if "col_names" in changed else arrow[0],
                           None if "row_names" in changed else arrow[1])
    info = ApplyInfo(
        col_map=_map(cs, problem.n_cols), row_map=_map(rs, problem.n_rows), old_n_cols=problem.n_cols,
        old_n_rows=problem.n_rows, vars_added=cs["added"], vars_removed=cs["removed"],
        cons_added=rs["added"], cons_removed=rs["removed"],
        vars_updated=int((~cs["is_new"]).sum()), cons_updated=int((~rs["is_new"]).sum()),
        coefs_changed=n_changed, changed_fields=frozenset(changed), seconds_linear=t2 - t1,
        col_lower=col_lower, col_upper=col_upper)
    info.seconds_other = time.perf_counter() - t0 - info.seconds_linear
    return new, info


def _next_index(old_index, side, names):
    """Carry the name -> position dict forward when no entity was dropped (else rebuilt lazily)."""
    if old_index is None or side["keep"] is not None:
        return None
    if not side["n_add"]:
        return old_index
    if len(old_index) < 4 * side["n_add"]:
        return None  # cheaper to rebuild on demand
    idx = dict(old_index)
    base = len(names) - side["n_add"]
    idx.update(zip(side["added"].tolist(), range(base, len(names)), strict=True))
    return idx


def _map(side, n_old: int) -> np.ndarray:
    keep = side["keep"]
    surv = np.arange(n_old, dtype=np.int64) if keep is None else np.flatnonzero(keep).astype(np.int64)
    return np.concatenate([surv, np.full(side["n_add"], -1, dtype=np.int64)])


def _resolve_coef(problem, p: _Parsed, delta, side, is_col):
    """(old_pos, new_pos) int64 arrays for the coef rows' var (is_col) or con names.

    Names upserted by this delta resolve through integer codes; the others are looked up once per
    distinct name in the problem's cached dict. ``old_pos`` is -1 for an entity created by this
    delta, and None when no entity of this side survives (nothing to search in the old matrix).
    """
    k = p.rows.size(K_COEF)
    if not k:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    codes = p.at(p.var_codes if is_col else p.con_codes, K_COEF)
    what = "variable" if is_col else "constraint"
    n_surv = side["n_surv"]
    code_pos = side["code_pos"]
    if code_pos.size and np.array_equal(code_pos, np.arange(code_pos.size)):
        new_pos = codes.astype(np.int64)  # names in dictionary order = positions: no gather
    else:
        new_pos = code_pos[codes]
    old_pos = np.full(k, -1, dtype=np.int64) if n_surv else None
    upd = (new_pos >= 0) & (new_pos < n_surv) if n_surv else None  # existing entity upserted here
    if upd is not None and upd.any():
        old_pos[upd] = new_pos[upd] if side["keep"] is None else np.flatnonzero(side["keep"])[new_pos[upd]]
    # not upserted here: must exist and survive (skip the scan when every name was upserted)
    rest = np.flatnonzero(new_pos < 0) if (code_pos < 0).any() else np.zeros(0, np.int64)
    if rest.size:
        crow = p.rows[K_COEF]
        ucode, inv = np.unique(codes[rest], return_inverse=True)
        uniq = p.var_uniq if is_col else p.con_uniq
        opos = _lookup(side["index"], uniq.take(pa.array(ucode)))[inv]
        unknown = opos < 0
        if unknown.any():
            nm = p.name(is_col, int(crow[rest[np.flatnonzero(unknown)[0]]]))
            _fail(f"coef names unknown {what} {nm!r}", crow[rest[unknown]], delta, entity=nm)
        npos = opos if side["keep"] is None else side["old_to_new"][opos]
        gone = npos < 0
        if gone.any():
            nm = p.name(is_col, int(crow[rest[np.flatnonzero(gone)[0]]]))
            _fail(f"coef names {what} {nm!r}, which this delta drops (and does not re-add)",
                  crow[rest[gone]], delta, entity=nm)
        new_pos[rest] = npos
        if old_pos is not None:
            old_pos[rest] = opos
    return old_pos, new_pos


def validate_delta(problem: Problem, delta: Delta) -> None:
    """Raise ``ValidationError`` if ``delta`` cannot be applied to ``problem`` (see module docstring).

    Same cost as :func:`apply_delta` (validation is part of applying; nothing is kept).
    """
    apply_delta(problem, delta)


# ---------------------------------------------------------------------------------------------- state
def map_state(state: SolverState, info: ApplyInfo, problem: Problem | None = None) -> SolverState:
    """Map a solver state onto the index space produced by :func:`apply_delta`.

    Surviving variables keep their value, new variables start at 0 projected onto their bounds; every
    value is then projected onto the (possibly changed) bounds of the new problem. Surviving rows keep
    their dual, new rows start at dual 0. ``step_size``/``primal_weight``/``iterations`` are kept
    (whether to reuse them is the solver's decision). ``integer_x`` is mapped like ``x``.

    Args:
        state: state computed for the problem the delta was applied to: x (n_old,), y (m_old,).
        info: the ApplyInfo of that apply.
        problem: the new problem (optional; bounds are taken from ``info`` when omitted).
    Returns:
        A new SolverState with x (n_new,), y (m_new,).
    Raises:
        StateError: when the state's lengths do not match the problem the delta was applied to.
    """
    if state.x.shape != (info.old_n_cols,) or state.y.shape != (info.old_n_rows,):
        raise StateError(f"solver state has x of length {state.x.shape[0]} and y of length "
                         f"{state.y.shape[0]}, but the problem had {info.old_n_cols} variables and "
                         f"{info.old_n_rows} constraints; warm start impossible")
    lo = problem.col_lower if problem is not None else info.col_lower
    up = problem.col_upper if problem is not None else info.col_upper

    def mx(x):
        out = np.where(info.col_map >= 0, x[np.maximum(info.col_map, 0)] if x.size else 0.0, 0.0)
        if lo is not None:
            out = np.minimum(np.maximum(out, lo), up)
        return out.astype(np.float64)

    y = np.where(info.row_map >= 0, state.y[np.maximum(info.row_map, 0)] if state.y.size else 0.0, 0.0)
    ix = None
    if state.integer_x is not None and state.integer_x.shape == (info.old_n_cols,):
        ix = mx(state.integer_x)
    return SolverState(x=mx(state.x), y=y.astype(np.float64), step_size=state.step_size,
                       primal_weight=state.primal_weight, iterations=state.iterations, integer_x=ix)


# ---------------------------------------------------------------------------------------------- diff
def _kept_prefix(old_names: np.ndarray, new_names: np.ndarray, old_index: dict) -> tuple[np.ndarray, int]:
    """Old positions of ``new_names`` (-1 new) and the length of the longest prefix of ``new_names``
    that are old names in strictly increasing old position (the entities a delta can keep)."""
    pos = _lookup(old_index, pa.array(new_names.tolist(), pa.string())) if len(new_names) else \
        np.zeros(0, np.int64)
    if not pos.size:
        return pos, 0
    bad = pos < 0
    bad[1:] |= pos[1:] <= pos[:-1]
    first = np.flatnonzero(bad)
    return pos, int(first[0]) if first.size else int(pos.size)


def diff(old: Problem, new: Problem) -> Delta:
    """The delta that turns ``old`` into ``new``: ``apply_delta(old, diff(old, new))`` equals ``new``.

    Names in ``old`` only are dropped; names in ``new`` only are added in ``new``'s order; survivors
    get ``var``/``con`` rows with only the fields that changed, and ``coef`` rows for entries that were
    set, changed (new value) or removed (value 0). Sense and offset go to the delta's metadata.

    Order: a delta appends new entities after the survivors, which keep their old relative order. So
    only the longest prefix of ``new``'s order made of survivors in their old relative order can be
    kept; every later survivor is *recreated* (dropped and re-added with its full data and its
    coefficients), so the result still equals ``new`` exactly (names, order, values, bitwise).

    Returns:
        Delta with rows in phase order (drop_con, drop_var, var, con, coef); ``format="delta"``.
    Raises:
        ValidationError: if ``new`` cannot be expressed (e.g. an empty box ``lower > upper``, which
            deltas refuse).
    """
    parts = []
    for is_col in (False, True):
        o_names = old.col_names if is_col else old.row_names
        n_names = new.col_names if is_col else new.row_names
        o_index = old.col_index() if is_col else old.row_index()
        pos, L = _kept_prefix(o_names, n_names, o_index)
        keep_old = np.zeros(o_names.shape[0], dtype=bool)
        keep_old[pos[:L]] = True
        drops = o_names[~keep_old]
        parts.append((is_col, drops, pos, L))
    drop_con = parts[0][1]
    drop_var = parts[1][1]
    tables = []
    if drop_con.size:
        tables.append(Delta.drop_cons(drop_con).table)
    if drop_var.size:
        tables.append(Delta.drop_vars(drop_var).table)
    # variables: survivors in the prefix with changed fields, then all later ones fully
    _, _, pos, L = parts[1]
    if new.n_cols:
        surv = pos[:L]
        nj = np.arange(L)
        fields = {}
        anych = np.zeros(L, dtype=bool)
        for f_new, f_old, key in ((new.cost, old.cost, "cost"), (new.col_lower, old.col_lower, "lower"),
                                  (new.col_upper, old.col_upper, "upper"),
                                  (new.integrality, old.integrality, "integer")):
            ch = f_new[nj] != f_old[surv]
            fields[key] = ch
            anych |= ch
        sel = np.flatnonzero(anych)
        if sel.size:
            def masked(arr, ch):
                return pa.array(arr[sel], mask=~ch[sel])
            tables.append(Delta.vars(new.col_names[sel], cost=masked(new.cost, fields["cost"]),
                                     lower=masked(new.col_lower, fields["lower"]),
                                     upper=masked(new.col_upper, fields["upper"]),
                                     integer=masked(new.integrality, fields["integer"])).table)
        if L < new.n_cols:
            s = slice(L, None)
            tables.append(Delta.vars(new.col_names[s], cost=new.cost[s], lower=new.col_lower[s],
                                     upper=new.col_upper[s], integer=new.integrality[s]).table)
    _, _, pos, L = parts[0]
    if new.n_rows:
        surv = pos[:L]
        nj = np.arange(L)
        chl = new.row_lower[nj] != old.row_lower[surv]
        chu = new.row_upper[nj] != old.row_upper[surv]
        sel = np.flatnonzero(chl | chu)
        if sel.size:
            tables.append(Delta.cons(new.row_names[sel], lower=pa.array(new.row_lower[sel], mask=~chl[sel]),
                                     upper=pa.array(new.row_upper[sel], mask=~chu[sel])).table)
        if L < new.n_rows:
            s = slice(L, None)
            tables.append(Delta.cons(new.row_names[s], lower=new.row_lower[s], upper=new.row_upper[s]).table)
    sense = None if new.sense == old.sense else new.sense
    offset = None if new.offset == old.offset else new.offset
    structure = Delta(table=pa.concat_tables(tables) if tables else SCHEMA.empty_table())
    mid, _ = apply_delta(old, structure)
    # coefficients: compare mid (same index space as new) with new
    coef = _coef_diff(mid, new)
    if coef is not None:
        tables.append(coef)
    table = pa.concat_tables(tables) if tables else SCHEMA.empty_table()
    return Delta(table=table, sense=sense, offset=offset)


def _coef_diff(mid: Problem, new: Problem) -> pa.Table | None:
    m = max(new.n_rows, 1)

    def keys(pr):
        c = np.repeat(np.arange(pr.n_cols, dtype=np.int64), np.diff(pr.a_indptr))
        return c * m + pr.a_indices, pr.a_data

    km, vm = keys(mid)
    kn, vn = keys(new)
    if km.shape == kn.shape and np.array_equal(km, kn) and np.array_equal(vm, vn):
        return None
    # entries of new that are absent from mid or differ; entries of mid absent from new (value 0)
    at = np.searchsorted(km, kn)
    atc = np.minimum(at, max(km.size - 1, 0))
    present = (at < km.size) & (km[atc] == kn) if km.size else np.zeros(kn.size, dtype=bool)
    set_sel = ~present | (vm[atc] != vn) if km.size else np.ones(kn.size, dtype=bool)
    at2 = np.searchsorted(kn, km)
    at2c = np.minimum(at2, max(kn.size - 1, 0))
    gone = ~((at2 < kn.size) & (kn[at2c] == km)) if kn.size else np.ones(km.size, dtype=bool)
    k_all = np.concatenate([kn[set_sel], km[gone]])
    v_all = np.concatenate([vn[set_sel], np.zeros(int(gone.sum()))])
    if not k_all.size:
        return None
    cols, rows = k_all // m, k_all % m
    return Delta.coefs(var=new.col_names[cols], con=new.row_names[rows], value=v_all).table
