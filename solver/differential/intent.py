"""Delta rows a writer cannot have meant, refused before they are applied silently wrong (docs/DESIGN.md
"Delta and problem files").

Two rules, both for a *delta* applied to a problem that has entities (a problem file builds a model from
nothing and may hold empty rows and columns, as MPS files do):

* :func:`check_no_op_upserts`: a ``var``/``con`` row on an existing entity whose every field is null
  changes nothing. Null means "unchanged", and pandas' ``to_parquet`` writes a NaN as null, so
  ``DataFrame({'kind': ['var'], 'var': ['x'], 'value': [np.nan]})`` arrives as such a row; it is refused
  naming the row, not read as "keep the old cost".
* :func:`check_new_entities`: a new variable or constraint that no ``coef`` row of the delta names would
  be added empty (a row constraining nothing, a column in no row): what a misspelled name in a ``var``/
  ``con`` row does (``cap_A100`` for ``cap_a100`` added a sixth row and lost the capacity change). It is
  refused naming the entity and the closest existing names (:func:`close_names`). A ``coef`` row of
  value 0 naming it states an intended empty entity (0 sets no entry). Exempt: the other side of the
  result is empty (no row to name a new column with).

Cost: one pass over the ``coef`` rows' positions and the upsert rows' validity masks (numpy); the
suggestions run only on the error path.
"""

from __future__ import annotations

import difflib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from solver.differential.kinds import CODE, UPSERT
from solver.differential.parse import Parsed, fail
from solver.model import invisible

_DIFFLIB_ALL = 20_000
"""Up to this many names, :func:`close_names` compares with every one (difflib: ~0.3 s at 20k names)."""
_NEIGHBOURS = 2_000
"""Above it, the names within this many places of the misspelling in sorted (case-folded) order."""


def close_names(name: str, names: np.ndarray, limit: int = 3) -> list[str]:
    """Up to ``limit`` existing names closest to ``name``: those equal to it but for letter case first, then those
    equal but for letters that look like digits (O and 0, l or I and 1: :data:`_LOOK_ALIKE`), then
    :func:`difflib.get_close_matches` (ratio >= 0.6).

    Args:
        name: the unknown name; names: (n,) object array of the side's names.
    Returns:
        The suggestions, best first (empty when none is close). Above ``_DIFFLIB_ALL`` names only the
        ``2 * _NEIGHBOURS`` names around ``name`` in sorted case-folded order are compared (a typo after the
        first characters; one of a large model's first characters may go unsuggested). Error path only.
    """
    if not names.size:
        return []
    if names.size <= _DIFFLIB_ALL:
        cands = names.tolist()
    else:
        low = pc.utf8_lower(pa.array(names.tolist(), pa.string()))
        order = pc.sort_indices(low).to_numpy()
        at = int(np.searchsorted(low.take(pa.array(order)).to_numpy(zero_copy_only=False), name.lower()))
        cands = names[order[max(0, at - _NEIGHBOURS):at + _NEIGHBOURS]].tolist()
    folded = name.casefold()
    same_text = [c for c in cands if _nfc(c) == _nfc(name)]  # the same text, another Unicode normalisation
    same_case = [c for c in cands if c.casefold() == folded]
    look = folded.translate(_LOOK_ALIKE)
    look_alike = [c for c in cands if c.casefold().translate(_LOOK_ALIKE) == look]
    out = list(dict.fromkeys(same_text + same_case + look_alike
                             + difflib.get_close_matches(name, cands, n=limit, cutoff=0.6)))
    return out[:limit]


_LOOK_ALIKE = str.maketrans({"o": "0", "l": "1", "i": "1"})
"""Letters read as digits (after case folding): a name equal to the unknown one but for them is suggested before
difflib's ranking, which scored '...010' no closer to '...O10' than '...210' and left it out (helper-200)."""


def _nfc(name: str) -> str:
    import unicodedata

    return unicodedata.normalize("NFC", name)


def suggestion(name: str, near: list[str], who: str = "") -> str:
    """``"; did you mean 'x'? (names are case-sensitive)"`` for the suggestions ``near`` of the unknown ``name``
    ("" without any); when one is the same text in another Unicode normalisation (NFC vs NFD: they print alike) the
    parenthesis says so, since nothing else would show the difference."""
    if not near:
        return ""
    why = "names are case-sensitive"
    twin = next((c for c in near if c != name and _nfc(c) == _nfc(name)), None)
    if twin is not None:
        import unicodedata

        forms = [f for f in ("NFC", "NFD") if unicodedata.is_normalized(f, name)] or ["neither NFC nor NFD"]
        why = (f"{twin!r} is the same text in another Unicode normalisation: this name is {forms[0]}; names are "
               "compared code point by code point, so write them in one normalisation, e.g. NFC")
    return f"; did you mean{who} {' or '.join(repr(s) for s in near)}? ({why})"


def check_no_op_upserts(p: Parsed, delta, side: dict, is_col: bool) -> None:
    """Refuse ``var``/``con`` rows on existing entities that set no field.

    Args:
        p: the parsed delta; side: ``apply._side``'s dict for that side (``up_rows``, ``is_new`` (k,) aligned).
    Raises:
        ValidationError: naming the first such row and its entity (the other rows listed).
    """
    kind = UPSERT["var" if is_col else "con"]
    k = CODE[kind.name]
    rows = side["up_rows"]
    if not rows.size:
        return
    unset = ~side["is_new"]
    for t in kind.targets:
        ok = p.at(getattr(p, t.column + "_ok"), k)
        if ok is None:
            return  # every row sets this field
        unset &= ~ok
    bad = np.flatnonzero(unset)
    if not bad.size:
        return
    nm = p.name(is_col, int(rows[bad[0]]))
    fields = ", ".join(t.column for t in kind.targets)
    what = "variable" if is_col else "constraint"
    fail(f"{what} {nm!r}: this {kind.name} row changes nothing ({fields} are all null, and null means "
         "'unchanged'); pandas' to_parquet writes NaN as null: set a field, or leave the row out",
         rows[bad], delta, entity=nm)


def near_hint(name: str, names: np.ndarray) -> str:
    """``"; did you mean 'x'? (names are case-sensitive)"`` for the existing ``names`` closest to the unknown
    ``name`` (:func:`close_names`), or "" when none is close. Error path only."""
    return suggestion(name, close_names(name, names))


def check_new_entities(problem, p: Parsed, delta, side: dict, coef_pos: np.ndarray, other_n: int,
                       is_col: bool) -> None:
    """Refuse new entities of one side that no ``coef`` row names.

    Args:
        problem: the problem before the delta (for suggestions); side: ``apply._side``'s dict;
        coef_pos: (c,) new positions of the ``coef`` rows' entities of this side; other_n: the other
        side's size after the delta (0 exempts: nothing to name a new entity with); is_col: columns.
    Raises:
        ValidationError: naming the first such entity, its ``var``/``con`` row, the closest existing names
            and how to add an entity without coefficients on purpose; the others counted.
    """
    n_add, n_surv = side["n_add"], side["n_surv"]
    if not n_add or not other_n:
        return
    named = np.zeros(n_add, dtype=bool)
    named[coef_pos[coef_pos >= n_surv] - n_surv] = True
    if named.all():
        return
    from solver.differential.apply import unknown_names

    lone = np.flatnonzero(~named)
    rows = side["up_rows"][side["is_new"]][lone]
    codes = side["ucodes"][side["is_new"]][lone]
    what = "variable" if is_col else "constraint"
    text, nm = unknown_names(p, is_col, f"new {what}", rows, codes)
    old_names = problem.col_names if is_col else problem.row_names
    one = lone.size == 1
    who = "" if one else f" for {nm!r}"
    if side["keep"] is not None and bool(np.any(old_names == nm)):  # not a misspelling: its own drop row
        # drops apply before upserts, so the name is new again; suggesting it (or its neighbours) misled
        hint = (f"; this delta drops {what} {nm!r} (a drop_{'var' if is_col else 'con'} row) before its "
                f"{'var' if is_col else 'con'} row adds it anew")
    else:
        near = close_names(nm, old_names)
        hint = suggestion(nm, near, who) if near else f"; no existing name is close{who}"
    holds = ("is in no constraint" if one else "are in no constraint") if is_col else \
        ("constrains nothing" if one else "constrain nothing")
    partner = "constraint" if is_col else "variable"
    fail(f"{text} {'is' if one else 'are'} named by no coef row of this delta: "
         f"{'it' if one else 'they'} would be added empty and {holds}{hint}. "
         f"Correct the name to change an existing {what}; to add one, give its coefficients as coef rows "
         f"(a coef row of value 0 on any {partner} adds it without coefficients on purpose)",
         rows, delta, entity=nm)


def unwritable_names(problem, vars_added: np.ndarray, cons_added: np.ndarray) -> list[str]:
    """Warnings for added names holding a space (a delta refuses control characters and empty names, the
    rest of what free-format MPS cannot hold): such a name is valid, as in a fixed-format MPS file that
    ``copter init`` reads, but ``copter export`` to MPS refuses it from this round on. Said once: nothing
    when ``problem`` already holds such a name of that side (its export already needs Parquet).

    Args:
        problem: the problem before the delta; vars_added, cons_added: (k,) object arrays of added names.
    Returns:
        Zero to two warning strings (vectorised: one substring scan of the added names, and of the old
        names only when an added one has a space).
    """
    out = []
    for what, added, old in (("variable", vars_added, problem.col_names),
                             ("constraint", cons_added, problem.row_names)):
        first = _spaced(added)
        if first.size and not (old.size and _spaced(old).size):
            out.append(_space_warning(f"new {what}", added, first, "from this round on"))
    return out


def base_unwritable_names(problem) -> list[str]:
    """``copter init``'s warnings for a base problem whose names hold a space (a fixed-format MPS file or a
    Parquet problem may hold them): zero to two strings, as :func:`unwritable_names` words them."""
    out = []
    for what, names in (("variable", problem.col_names), ("constraint", problem.row_names)):
        first = _spaced(names)
        if first.size:
            out.append(_space_warning(what, names, first, "for every round of this state"))
    return out


def _spaced(names: np.ndarray) -> np.ndarray:
    """(j,) positions of the names holding a space (one vectorised substring scan)."""
    if not names.size:
        return np.zeros(0, dtype=np.int64)
    hit = pc.match_substring(pa.array(names.tolist(), pa.string()), " ").to_numpy(zero_copy_only=False)
    return np.flatnonzero(hit)


def _space_warning(what: str, names: np.ndarray, first: np.ndarray, when: str) -> str:
    more = f" (and {first.size - 1} more)" if first.size > 1 else ""
    return (f"{what} name {str(names[first[0]])!r}{more} contains a space: valid in copter and in Parquet, but "
            f"`copter export` to MPS refuses it {when} (free-format MPS splits fields on spaces); export to "
            ".parquet keeps names exactly")


def check_normalisation_twins(problem, p: Parsed, delta, side: dict, is_col: bool) -> None:
    """Refuse a new entity whose name is the same text as an existing (kept) or another new name of its side in
    another Unicode normalisation (NFC vs NFD: they print alike, so a second, visually identical variable or
    constraint would be added without a word; a tool that normalises differently, e.g. file names from macOS,
    writes such names), or differs from it only by :data:`INVISIBLE` characters. Run for deltas and for problem
    files alike (a problem file is a delta applied to the empty problem: two such names in one file were both
    kept, helper-209). Only a delta with a non-ASCII name pays for the check (one ASCII test of its name columns,
    then pyarrow's ``utf8_normalize`` over this side's new names).

    Raises:
        ValidationError: naming the new entity, its row and its twin.
    """
    added = side["added"]
    if not added.size or _all_ascii(delta, "var" if is_col else "con"):
        return
    new = pa.array(added, pa.string(), from_pandas=False)
    wide = pc.invert(pc.string_is_ascii(new))
    if not pc.any(wide).as_py():
        return
    index = side["index"]  # the side's names as Arrow when the lookup had them (a loaded checkpoint's), else built
    old = index if isinstance(index, pa.Array) else \
        pa.array((problem.col_names if is_col else problem.row_names).tolist(), pa.string())
    if side["keep"] is not None:
        old = old.filter(pa.array(side["keep"]))
    at = np.flatnonzero(wide.to_numpy(zero_copy_only=False))
    new_wide = new.take(pa.array(at))
    invisible = pc.any(pc.match_substring_regex(new_wide, INVISIBLE.pattern)).as_py()
    if not invisible:
        old = old.filter(pc.invert(pc.string_is_ascii(old)))  # an ASCII name is no other non-ASCII name's twin
    new_nfc = _visible(pc.utf8_normalize(new_wide, form="NFC"))
    old_nfc = _visible(pc.utf8_normalize(old, form="NFC"))
    hit = pc.index_in(new_nfc, value_set=old_nfc).fill_null(-1).to_numpy(zero_copy_only=False)
    twin_of = {}  # position in ``added`` -> its twin's name
    k = np.flatnonzero(hit >= 0)
    if k.size:  # the first new name that is an existing one's text
        twin_of[int(at[k[0]])] = old[int(hit[k[0]])].as_py()
    pair = first_twin(new)  # new names among themselves ('Q' and 'Q' + U+200B, both new, were both added: helper-209)
    if pair is not None:
        twin_of.setdefault(pair[0], str(added[pair[1]]))
    if not twin_of:
        return
    pos = min(twin_of)
    nm, twin = str(added[pos]), twin_of[pos]
    row = side["up_rows"][side["is_new"]][pos]
    fail(twin_message("variable" if is_col else "constraint", nm, twin, "new "), np.array([row]), delta, entity=nm)


def twin_message(what: str, nm: str, twin: str, new: str = "") -> str:
    """Why ``nm`` is refused beside ``twin`` (a :func:`first_twin` pair): invisible characters, or another Unicode
    normalisation. ``what``: "variable" or "constraint"; ``new``: "new " for a delta's entity."""
    hidden = sorted({f"U+{ord(ch):04X}" for ch in nm + twin if INVISIBLE.match(ch)})
    if hidden:
        return (f"{new}{what} {nm!r} differs from {what} {twin!r} only by invisible characters ({', '.join(hidden)}: "
                "they print alike but are different names, so it would be added as a second one): remove them")
    return (f"{new}{what} {_marks_shown(nm)} is the same text as {what} {_marks_shown(twin)} in another Unicode "
            "normalisation (they print alike but are different names, so it would be added as a second one): write "
            "the names in one normalisation, e.g. NFC")


def first_twin(names: np.ndarray | pa.Array) -> tuple[int, int] | None:
    """The first name of ``names`` (shape (n,), str, or an Arrow string array; distinct) that is an earlier one's text in another Unicode
    normalisation or differs from it only by :data:`INVISIBLE` characters, as ``(its index, the earlier one's)``;
    None when there is none. The rule :func:`check_normalisation_twins` applies to a delta, for the names of one
    side of a whole model (the MPS reader: a Parquet model with such a pair was refused, the same model in MPS
    read, and ``convert``/``export`` then wrote a Parquet file copter refuses, helper-227). All-ASCII names cost
    one vectorised test.
    """
    if not len(names):
        return None
    if isinstance(names, pa.Array):
        arr = names
    else:
        names = np.asarray(names)
        if names.dtype.kind == "U":  # fixed-width UTF-32: ASCII when no code unit is above 127 (one pass, no strings)
            if int(names.view(np.uint32).max(initial=0)) < 128:
                return None
            names = names.astype(object)
        arr = pa.array(names, pa.string(), from_pandas=False)
    wide = pc.invert(pc.string_is_ascii(arr))
    if not pc.any(wide).as_py():
        return None
    invisible = pc.any(pc.match_substring_regex(arr.filter(wide), INVISIBLE.pattern)).as_py()
    at = np.arange(len(arr)) if invisible else np.flatnonzero(wide.to_numpy(zero_copy_only=False))
    pool = arr if invisible else arr.take(pa.array(at))
    codes = pc.dictionary_encode(_visible(pc.utf8_normalize(pool, form="NFC"))).indices.to_numpy(
        zero_copy_only=False)  # numbered by first appearance
    seen = np.maximum.accumulate(np.concatenate([[-1], codes[:-1]]))
    again = np.flatnonzero(codes <= seen)
    if not again.size:
        return None
    i = int(again[0])
    return int(at[i]), int(at[int(np.argmax(codes == codes[i]))])


def _all_ascii(delta, column: str) -> bool:
    """Whether every name in ``delta``'s ``column`` (``var`` or ``con``: a side's new names are among them) is ASCII:
    one vectorised test, before any name is turned into Arrow again."""
    if column not in delta.table.column_names:  # a delta read with it absent
        return True
    names = delta.table.column(column)
    # a dictionary-encoded column (pandas' category): its dictionaries hold every name it uses
    parts = [c.dictionary for c in names.chunks] if pa.types.is_dictionary(names.type) else [names]
    for part in parts:
        try:
            if part.null_count < len(part) and not pc.all(pc.string_is_ascii(part)).as_py():
                return False
        except pa.ArrowNotImplementedError:  # another encoding: the full check decides
            return False
    return True


def _marks_shown(name: str) -> str:
    """``repr(name)`` with combining marks escaped (``'cafe\\u0301'``): the two names of a normalisation refusal
    printed alike ('café' and 'café')."""
    return "'" + invisible.marks_escaped(repr(name)[1:-1]) + "'"


#: characters that print as nothing (Unicode's Default_Ignorable_Code_Point, :mod:`solver.model.invisible`), which
#: names pick up from copied text: a constraint 'R09' + U+200B was added beside 'R09' without a word (helper-188)
INVISIBLE = invisible.INVISIBLE


def _visible(names: pa.Array) -> pa.Array:
    """``names`` without the :data:`INVISIBLE` characters (pyarrow's regex replace: one pass)."""
    return pc.replace_substring_regex(names, pattern=INVISIBLE.pattern, replacement="")
