"""The diff of two problems: the delta that turns one into the other (:func:`diff`)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from solver.differential.apply import apply_delta
from solver.differential.kinds import DROP, KIND_TABLE, PHASES, UPSERT, Kind
from solver.differential.names import lookup
from solver.model.delta import SCHEMA, Delta
from solver.model.problem import Problem

# where each entity's names live in a Problem: (names, name -> position dict method)
_NAMES = {"var": ("col_names", "col_index"), "con": ("row_names", "row_index")}


def _kept_prefix(old_names: np.ndarray, new_names: np.ndarray, old_index: dict) -> tuple[np.ndarray, int]:
    """Old positions of ``new_names`` (-1 new) and the length of the longest prefix of ``new_names``
    that are old names in strictly increasing old position (the entities a delta can keep)."""
    pos = lookup(old_index, pa.array(new_names.tolist(), pa.string())) if len(new_names) else \
        np.zeros(0, np.int64)
    if not pos.size:
        return pos, 0
    bad = pos < 0
    bad[1:] |= pos[1:] <= pos[:-1]
    first = np.flatnonzero(bad)
    return pos, int(first[0]) if first.size else int(pos.size)


def recreated(old: Problem, new: Problem) -> dict[str, int]:
    """``{"var": n, "con": m}``: how many survivors (names in both) :func:`diff` recreates to give ``new``'s
    order, those after the kept prefix (:func:`_kept_prefix`). A recreated entity is a new one to the next
    round: it starts cold and ``changes.parquet`` lists it removed and added."""
    out = {}
    for entity in ("var", "con"):
        names_attr, index_method = _NAMES[entity]
        pos, keep = _kept_prefix(getattr(old, names_attr), getattr(new, names_attr), getattr(old, index_method)())
        out[entity] = int((pos >= 0).sum()) - keep
    return out


def recreate_cause(old: Problem, new: Problem) -> str:
    """Why :func:`diff` recreates survivors, for its warning: the first entity of ``new`` (variables first) that
    ends the kept prefix (:func:`_kept_prefix`), a new name or an old one out of OLD's order (a reordered dump
    with no new name recreates too); "" when nothing is recreated."""
    for entity, word in (("var", "variable"), ("con", "constraint")):
        names_attr, index_method = _NAMES[entity]
        names = getattr(new, names_attr)
        pos, keep = _kept_prefix(getattr(old, names_attr), names, getattr(old, index_method)())
        if int((pos >= 0).sum()) == keep:
            continue
        if pos[keep] < 0:
            return f"NEW's new {word} {names[keep]!r} comes before them"
        return (f"NEW's {word} {names[keep]!r} comes after {names[keep - 1]!r}, which follows it in OLD: "
                "NEW reorders entities of OLD")
    return ""


def _survivors_first(old: Problem, new: Problem) -> Problem:
    """``new`` with its columns and rows in the order a delta that keeps every survivor gives: the survivors in
    their old relative order, then the new names in ``new``'s order (the same model, entities permuted)."""
    perm = {}
    for entity in ("var", "con"):
        names_attr, index_method = _NAMES[entity]
        pos, _ = _kept_prefix(getattr(old, names_attr), getattr(new, names_attr), getattr(old, index_method)())
        surv = np.flatnonzero(pos >= 0)
        perm[entity] = np.concatenate([surv[np.argsort(pos[surv], kind="stable")], np.flatnonzero(pos < 0)])
    c, r = perm["var"], perm["con"]
    return Problem.from_arrays(cost=new.cost[c], col_lower=new.col_lower[c], col_upper=new.col_upper[c],
                               row_lower=new.row_lower[r], row_upper=new.row_upper[r],
                               matrix=new.matrix()[r, :][:, c], col_names=new.col_names[c],
                               row_names=new.row_names[r], integrality=new.integrality[c], sense=new.sense,
                               offset=new.offset, name=new.name)


def diff(old: Problem, new: Problem, by_name: bool = False) -> Delta:
    """The delta that turns ``old`` into ``new``: ``apply_delta(old, diff(old, new))`` equals ``new``.

    Names in ``old`` only are dropped; names in ``new`` only are added in ``new``'s order; survivors
    get ``var``/``con`` rows with only the fields that changed, and ``coef`` rows for entries that were
    set, changed (new value) or removed (value 0). Sense and offset go to the delta's metadata.

    Order: a delta appends new entities after the survivors, which keep their old relative order. So
    only the longest prefix of ``new``'s order made of survivors in their old relative order can be
    kept; every later survivor is *recreated* (dropped and re-added with its full data and its
    coefficients), so the result still equals ``new`` exactly (names, order, values, bitwise, except that a
    ``-0.0`` comes back as ``0.0``: the formats read and store both as ``0.0``).
    With ``by_name`` every survivor is kept (no drop and re-add: the next round starts it warm and
    ``changes.parquet`` does not list it removed and added): the result equals ``new`` up to the order of
    columns and rows (survivors in their old order, then ``new``'s new names in its order).

    Returns:
        Delta with rows in phase order (drop_con, drop_var, var, con, coef); ``format="delta"``.
    Raises:
        ValidationError: if ``new`` cannot be expressed (e.g. an empty box ``lower > upper``, which
            deltas refuse).
    """
    if by_name:
        new = _survivors_first(old, new)
    by_kind: dict[str, list[pa.Table]] = {k.name: [] for k in KIND_TABLE}
    for entity in ("con", "var"):
        names_attr, index_method = _NAMES[entity]
        o_names, n_names = getattr(old, names_attr), getattr(new, names_attr)
        pos, L = _kept_prefix(o_names, n_names, getattr(old, index_method)())
        keep_old = np.zeros(o_names.shape[0], dtype=bool)
        keep_old[pos[:L]] = True
        drops = o_names[~keep_old]
        if drops.size:
            by_kind[DROP[entity].name].append(Delta.from_columns(DROP[entity].name, **{entity: drops}).table)
        by_kind[UPSERT[entity].name] += _upserts(old, new, UPSERT[entity], n_names, pos, L)
    sense = None if new.sense == old.sense else new.sense
    offset = None if new.offset == old.offset else new.offset
    mid, info = apply_delta(old, Delta(table=_in_phase_order(by_kind)), strict=False)
    # coefficients: compare mid (same index space as new) with new
    coef = _coef_diff(mid, new)
    if coef is not None:
        by_kind["coef"].append(coef)
    empty = _empty_added(new, info)
    if empty is not None:
        by_kind["coef"].append(empty)
    return Delta(table=_in_phase_order(by_kind), sense=sense, offset=offset)


def _in_phase_order(by_kind: dict[str, list[pa.Table]]) -> pa.Table:
    tables = [t for k in PHASES for t in by_kind[k.name]]
    return pa.concat_tables(tables) if tables else SCHEMA.empty_table()


def _upserts(old: Problem, new: Problem, kind: Kind, names: np.ndarray, pos: np.ndarray, L: int) -> list:
    """``kind`` rows (``var`` or ``con``) for one side: the kept survivors ``names[:L]`` (old positions
    ``pos[:L]``) with only their changed fields (others null), then every later entity in full."""
    if not names.shape[0]:
        return []
    surv, nj = pos[:L], np.arange(L)
    ch = {t.column: getattr(new, t.attr)[nj] != getattr(old, t.attr)[surv] for t in kind.targets}
    sel = np.flatnonzero(np.logical_or.reduce(list(ch.values())))
    tables = []
    if sel.size:
        cols = {t.column: pa.array(getattr(new, t.attr)[sel], mask=~ch[t.column][sel]) for t in kind.targets}
        tables.append(Delta.from_columns(kind.name, **{kind.side: names[sel]}, **cols).table)
    if L < names.shape[0]:
        s = slice(L, None)
        cols = {t.column: getattr(new, t.attr)[s] for t in kind.targets}
        tables.append(Delta.from_columns(kind.name, **{kind.side: names[s]}, **cols).table)
    return tables


def _empty_added(new: Problem, info) -> pa.Table | None:
    """``coef`` rows of value 0 for the entities the delta adds (or recreates) that have no entry in ``new``:
    a delta refuses a new entity no ``coef`` row names (``intent.check_new_entities``: a misspelled name), and
    a 0 on the first entity of the other side states the empty one on purpose (it sets no entry). None when
    there is none, or when the other side of ``new`` is empty (then nothing is needed)."""
    n, m = new.n_cols, new.n_rows
    if not n or not m:
        return None
    col_nnz = np.diff(new.a_indptr)
    row_nnz = np.bincount(new.a_indices, minlength=m)
    cols = np.flatnonzero((info.col_map < 0) & (col_nnz == 0))
    rows = np.flatnonzero((info.row_map < 0) & (row_nnz == 0))
    if not cols.size and not rows.size:
        return None
    keys = np.unique(np.concatenate([cols.astype(np.int64) * m, rows.astype(np.int64)]))  # col * m + row
    return Delta.coefs(var=new.col_names[keys // m], con=new.row_names[keys % m], value=np.zeros(keys.size)).table


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
