"""Apply a delta to a problem: :func:`apply_delta` and :class:`ApplyInfo` (semantics: package docstring).

One named step per phase, in the phase order of :data:`~solver.differential.kinds.KIND_TABLE`:
:func:`_side` resolves the drops (``drop_con``/``drop_var``) and the upserts' positions of one side;
:func:`_upsert` writes the ``var``/``con`` fields the table lists for that kind; :func:`_coef_positions`
resolves the ``coef`` rows; ``matrix.assemble`` builds the CSC arrays; :func:`_objective` and
:func:`_build` finish the new problem. All vectorised (no Python loop over rows or names).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from solver.differential.intent import (
    check_new_entities,
    check_no_op_upserts,
    check_normalisation_twins,
    near_hint,
    unwritable_names,
)
from solver.differential.kinds import CODE, DROP, K_COEF, UPSERT, Kind
from solver.differential.matrix import assemble
from solver.differential.names import attach_arrow_names, lookup, name_index, next_index
from solver.differential.parse import Parsed, check_unique, fail, inf_bounds, parse
from solver.model.problem import Problem

if TYPE_CHECKING:
    from solver.model.delta import Delta

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
        warnings: what the round's report should say about the delta (a strict apply: an added name
            free-format MPS cannot hold, ``intent.unwritable_names``).
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
    warnings: list = field(default_factory=list)

    @property
    def matrix_changed(self) -> bool:
        return bool(self.changed_fields & set(MATRIX_FIELDS))


def apply_delta(problem: Problem, delta: Delta, strict: bool | None = None) -> tuple[Problem, ApplyInfo]:
    """Apply ``delta`` to ``problem`` and return the new problem and what changed.

    Args:
        problem: the current problem (never modified; unchanged arrays are shared with the result).
        delta: the changes (any accepted column encoding, see ``formats/parquet.py``).
        strict: also refuse the rows a writer cannot have meant (``intent.py``: an upsert of an existing
            entity that sets nothing, a new entity no ``coef`` row names) and warn about added names
            free-format MPS cannot hold (``ApplyInfo.warnings``). None (default): when ``delta.format`` is
            ``"delta"`` and ``problem`` has entities, i.e. not for a problem file built from nothing.
    Returns:
        (new_problem, info): see :class:`ApplyInfo`. Time is O(k) in the delta size k for cost, bound
        and value-only coefficient changes (plus one copy of ``a_data`` for the latter), and one
        vectorised linear pass over the matrix for structural changes.
    Raises:
        ValidationError: the whole delta is rejected (see the package docstring for the rules); the
            message names the delta's 0-based row(s) and the entity.
    """
    t0 = time.perf_counter()
    if strict is None:
        strict = delta.format == "delta" and bool(problem.n_cols or problem.n_rows)
    p = parse(delta)
    cs = _side(problem, p, delta, True)    # drop_var, and where each var row goes
    rs = _side(problem, p, delta, False)   # drop_con, and where each con row goes
    if strict:
        check_no_op_upserts(p, delta, cs, True)
        check_no_op_upserts(p, delta, rs, False)
    fields: dict[str, np.ndarray] = {}
    changed: set[str] = set()
    _upsert(problem, p, delta, cs, UPSERT["var"], fields, changed)
    _upsert(problem, p, delta, rs, UPSERT["con"], fields, changed)
    fields["col_names"] = _names(problem.col_names, cs, changed, "col_names")
    fields["row_names"] = _names(problem.row_names, rs, changed, "row_names")
    cols_old, cols_new, rows_old, rows_new, vals, keys_sorted = _coef_positions(problem, p, delta, cs, rs)
    if strict:
        check_new_entities(problem, p, delta, cs, cols_new, rs["n_new"], True)
        check_new_entities(problem, p, delta, rs, rows_new, cs["n_new"], False)
    check_normalisation_twins(problem, p, delta, cs, True)  # problem files too: twins print alike wherever they are
    check_normalisation_twins(problem, p, delta, rs, False)
    t1 = time.perf_counter()
    indptr, indices, data, n_changed, mchanged = assemble(
        problem, cs["keep"], rs["keep"], cs["old_to_new"], rs["old_to_new"], cs["n_new"], rs["n_new"],
        cols_old, rows_old, cols_new, rows_new, vals, keys_sorted)
    t2 = time.perf_counter()
    changed |= mchanged
    fields.update(a_indptr=indptr, a_indices=indices, a_data=data)
    fields["sense"], fields["offset"] = _objective(problem, delta, changed)
    new = _build(problem, fields, cs, rs, changed)
    info = ApplyInfo(
        col_map=_map(cs, problem.n_cols), row_map=_map(rs, problem.n_rows), old_n_cols=problem.n_cols,
        old_n_rows=problem.n_rows, vars_added=cs["added"], vars_removed=cs["removed"],
        cons_added=rs["added"], cons_removed=rs["removed"],
        vars_updated=int((~cs["is_new"]).sum()), cons_updated=int((~rs["is_new"]).sum()),
        coefs_changed=n_changed, changed_fields=frozenset(changed), seconds_linear=t2 - t1,
        col_lower=fields["col_lower"], col_upper=fields["col_upper"],
        warnings=[*unwritable_names(problem, cs["added"], rs["added"]), *_sense_flip(problem, new, delta),
                  *_full_dump(problem, delta, p, cs)]
        if strict else [])
    info.seconds_other = time.perf_counter() - t0 - info.seconds_linear
    return new, info


def _upsert(problem: Problem, p: Parsed, delta: Delta, side: dict, kind: Kind, fields: dict,
            changed: set) -> None:
    """The ``var`` or ``con`` phase: write each of ``kind.targets`` (Problem field, default) into
    ``fields`` and check the upserted boxes. A null keeps the value of an existing entity and gives a
    new one the target's default; bounds of magnitude >= 1e20 become +-inf."""
    k = CODE[kind.name]
    for t in kind.targets:
        vals = p.at(getattr(p, t.column), k)
        arr, ch = _vector(getattr(problem, t.attr), side["keep"], side["n_add"], t.default, t.dtype,
                          side["newpos"], inf_bounds(vals) if t.is_bound else vals,
                          p.at(getattr(p, t.column + "_ok"), k))
        fields[t.attr] = arr
        if ch:
            changed.add(t.attr)
    r = side["up_rows"]
    if not r.size:
        return
    bounds = {t.column: t.attr for t in kind.targets if t.is_bound}
    lower, upper = fields[bounds["lower"]][side["newpos"]], fields[bounds["upper"]][side["newpos"]]
    is_var = kind.side == "var"
    _check_infinite_box(lower, upper, r, p, is_var, delta)
    bad = np.flatnonzero(lower > upper)
    if bad.size:
        nm = p.name(is_var, int(r[bad[0]]))
        fail(f"{'variable' if is_var else 'constraint'} {nm!r} has lower bound {lower[bad[0]]} > upper bound "
             f"{upper[bad[0]]} after the upsert", r[bad], delta, entity=nm)


def _names(old: np.ndarray, side: dict, changed: set, attr: str) -> np.ndarray:
    """Names of the new side: survivors in their order, then the added names in row order."""
    arr = old if side["keep"] is None else old[side["keep"]]
    if side["n_add"]:
        arr = np.concatenate([arr, side["added"]])
    if side["keep"] is not None or side["n_add"]:
        changed.add(attr)
    return arr


def _coef_positions(problem: Problem, p: Parsed, delta: Delta, cs: dict, rs: dict):
    """The ``coef`` phase's names resolved: (cols_old, cols_new, rows_old, rows_new, values, keys_sorted);
    a (con, var) pair named twice is rejected."""
    cols_old, cols_new = _resolve_coef(problem, p, delta, cs, True)
    rows_old, rows_new = _resolve_coef(problem, p, delta, rs, False)
    vals = p.at(p.value, K_COEF)
    keys_sorted = True
    if p.rows.size(K_COEF) > 1:
        keys = cols_new * max(rs["n_new"], 1) + rows_new
        keys_sorted = bool(np.all(keys[1:] > keys[:-1]))
        if not keys_sorted:
            order = np.argsort(keys, kind="stable")
            dup = np.flatnonzero(keys[order][1:] == keys[order][:-1])
            if dup.size:
                i = order[dup[0]]
                crow = p.rows[K_COEF]
                same = crow[keys == keys[i]]
                vn, cn = p.name(True, int(crow[i])), p.name(False, int(crow[i]))
                fail(f"coefficient ({cn!r}, {vn!r}) appears twice", same, delta, entity=f"{cn}/{vn}")
    return cols_old, cols_new, rows_old, rows_new, vals, keys_sorted


def _objective(problem: Problem, delta: Delta, changed: set) -> tuple[int, float]:
    """The new (sense, offset): the delta's when given, else the problem's."""
    sense = problem.sense if delta.sense is None else int(delta.sense)
    offset = problem.offset if delta.offset is None else float(delta.offset)
    if sense != problem.sense:
        changed.add("sense")
    if offset != problem.offset:
        changed.add("offset")
    return sense, offset


def _sense_flip(problem: Problem, new: Problem, delta: Delta) -> list[str]:
    """The warning of a delta that turns the objective's sense (``copter.sense``), [] otherwise: rare on purpose,
    and the mark of a delta derived from a model whose metadata a tool dropped (pandas, pyarrow's
    ``Table.from_pylist``: a maximisation read back as the default minimisation; a user's trial, session 52)."""
    if new.sense == problem.sense:
        return []
    word = {1: "minimisation", -1: "maximisation"}
    src = f"{delta.source}: " if delta.source else ""
    return [f"{src}the delta turns the objective from a {word[problem.sense]} into a {word[new.sense]} (its "
            f"copter.sense={'min' if new.sense == 1 else 'max'}); if that was not meant, roll back (copter rollback) "
            "and write the delta again with the sense kept"]


#: a delta without ``copter.format`` that updates at least this fraction of the variables, but not all of them and
#: dropping none, reads like a full dump of the model: :func:`_full_dump` warns
FULL_DUMP_SHARE = 0.9


def _full_dump(problem: Problem, delta: Delta, p: Parsed, cs: dict) -> list[str]:
    """The warning of a delta that looks like a full dump of the model given to ``step``: written without copter's
    metadata (``Delta.unmarked``: pandas, pyarrow), dropping nothing, naming at least :data:`FULL_DUMP_SHARE` of the
    current variables but not all, with coefficient rows for that share of the matrix (a delta moving most costs
    has none). A delta changes only what it names, so the variables the dump left out keep
    their values; a user meaning the dump as the new model got another one without a word (helper-219: a Sia 64
    model dumped with pandas, some jobs removed, stepped to 74.35 where the dumped model's optimum is 71.71).
    [] otherwise. Cost: one boolean pass over the variables, only when the counts qualify."""
    n, updated = problem.n_cols, int((~cs["is_new"]).sum())
    if not delta.unmarked or cs["keep"] is not None or n < 10 or not FULL_DUMP_SHARE * n <= updated < n:
        return []
    if p.rows.size(K_COEF) < FULL_DUMP_SHARE * updated / n * problem.nnz:  # a dump holds the matrix of what it names
        return []  # a delta that moves most costs or bounds, written by pandas, is no dump
    named = np.zeros(n, dtype=bool)
    named[cs["newpos"][~cs["is_new"]]] = True
    first = problem.col_names[int(np.argmin(named))]
    src = f"{delta.source}: " if delta.source else ""
    return [f"{src}it names {updated:,} of the model's {n:,} variables and drops none, like a full dump of a model, but "
            f"a delta changes only what it names: the {n - updated:,} it leaves out (e.g. {first!r}) keep their "
            "values. If it is the new model, make the delta from it: `copter export -o current.parquet`, then "
            "`copter diff current.parquet NEW.parquet -o delta.parquet` (its drop rows remove what NEW lacks)"]


def _build(problem: Problem, fields: dict, cs: dict, rs: dict, changed: set) -> Problem:
    """The new Problem from ``fields``, carrying the name indexes forward where still valid."""
    new = problem.replace(**fields)
    new._col_index = next_index(problem._col_index, cs, fields["col_names"])
    new._row_index = next_index(problem._row_index, rs, fields["row_names"])
    arrow = problem.__dict__.get("_arrow_names")
    if arrow is not None:  # still valid for a side whose names did not change
        attach_arrow_names(new, None if "col_names" in changed else arrow[0],
                           None if "row_names" in changed else arrow[1])
    return new


def unknown_names(p: Parsed, is_col: bool, what: str, rows: np.ndarray, codes: np.ndarray,
                  limit: int = 3) -> tuple[str, str]:
    """How an error names the unknown names of ``rows`` (their name codes ``codes``, rows ascending):
    ``variable 'x'`` when one name, else the first ``limit`` distinct names with their first rows and the
    count of distinct names (200k rows naming 200k names are not 'x' repeated). Returns (text, first name).
    Cost: one np.unique over the rows, ``limit`` name look-ups."""
    _, first = np.unique(codes, return_index=True)
    first.sort()
    shown = [(p.name(is_col, int(rows[i])), int(rows[i])) for i in first[:limit]]
    if first.size == 1:
        return f"{what} {shown[0][0]!r}", shown[0][0]
    listed = ", ".join(f"{nm!r} (row {r})" for nm, r in shown)
    return (f"{what}s {listed}{', ...' if first.size > limit else ''} ({first.size} distinct names)",
            shown[0][0])


def _side(problem: Problem, p: Parsed, delta: Delta, is_col: bool):
    """Drops and upserts of one side (columns or rows). Returns a dict describing the new side."""
    entity = "var" if is_col else "con"
    k_drop, k_up = CODE[DROP[entity].name], CODE[UPSERT[entity].name]
    uniq = p.var_uniq if is_col else p.con_uniq
    what = "variable" if is_col else "constraint"
    old_names = problem.col_names if is_col else problem.row_names
    n_old = old_names.shape[0]
    index = name_index(problem, is_col)
    # every distinct name of this side in the delta looked up once in the problem (against Arrow names: one hash
    # of the problem's names, not one per phase); the drop, upsert and coef rows index it by their name codes
    old_pos = lookup(index, uniq) if n_old else np.full(len(uniq), -1, dtype=np.int64)

    drop_rows = p.rows[k_drop]
    keep = None
    removed = np.zeros(0, dtype=object)
    if drop_rows.size:
        dcodes = check_unique(p, is_col, k_drop, f"{DROP[entity].name} name", delta)
        dpos = old_pos[np.asarray(dcodes, dtype=np.int64)]
        unknown = np.flatnonzero(dpos < 0)
        if unknown.size:
            text, nm = unknown_names(p, is_col, what, drop_rows[unknown], np.asarray(dcodes)[unknown])
            fail(f"cannot drop unknown {text}{near_hint(nm, old_names)}", drop_rows[unknown], delta, entity=nm)
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
    ucodes = check_unique(p, is_col, k_up, what, delta) if up_rows.size else np.zeros(0, np.int64)
    upos = old_pos[ucodes] if (n_old and ucodes.size) else np.full(ucodes.size, -1, dtype=np.int64)
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
                index=index, old_pos=old_pos, drop_rows=drop_rows, ucodes=ucodes)


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


def _check_infinite_box(lower: np.ndarray, upper: np.ndarray, rows: np.ndarray, p: Parsed, is_var: bool,
                        delta: Delta) -> None:
    """Reject a lower bound of +inf or an upper bound of -inf on the upserted entities.

    ``lower``/``upper``: (k,) the bounds after the upsert (|value| >= 1e20 already mapped to +-inf) of
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
            fail(f"{what} {nm!r}: {side} bound is {sign}inf (|value| >= 1e20 means no bound; no finite "
                  f"point satisfies it)", rows[bad], delta, entity=nm)


def _map(side, n_old: int) -> np.ndarray:
    keep = side["keep"]
    surv = np.arange(n_old, dtype=np.int64) if keep is None else np.flatnonzero(keep).astype(np.int64)
    return np.concatenate([surv, np.full(side["n_add"], -1, dtype=np.int64)])


def _resolve_coef(problem, p: Parsed, delta, side, is_col):
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
        opos = side["old_pos"][ucode][inv]
        unknown = opos < 0
        if unknown.any():
            text, nm = unknown_names(p, is_col, what, crow[rest[unknown]], codes[rest[unknown]])
            fail(f"coef names unknown {text}{near_hint(nm, problem.col_names if is_col else problem.row_names)}",
                 crow[rest[unknown]], delta, entity=nm)
        npos = opos if side["keep"] is None else side["old_to_new"][opos]
        gone = npos < 0
        if gone.any():
            text, nm = unknown_names(p, is_col, what, crow[rest[gone]], codes[rest[gone]])
            fail(f"coef names {text}, which this delta drops (and does not re-add)",
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
