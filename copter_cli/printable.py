"""Names as human output shows them: one line each, whatever they hold.

A name may hold any character but NUL-free text is all copter asks of it, so ``a\\u2028b`` or ``nel\\x85`` is a
valid variable name. JSON escapes such characters; a rich table printed them raw, and a line separator
(U+2028/U+2029, NEL U+0085, a newline) or another control character split one table row over lines or
moved the cursor, which breaks ``grep``/``awk`` over the output; a bidirectional override (U+202E) reversed what
followed it on the line. :func:`printable` writes them the way
Python's ``repr`` does (``\\n``, ``\\x85``, ``\\u2028``); every other character, a backslash included, is kept.
Only human output uses it: ``--json`` carries the names exactly.
"""

from __future__ import annotations

import re

#: C0 and C1 control characters (tab, newline, NEL U+0085 included), DEL, and the Unicode line and
#: paragraph separators: what a terminal or a line-based tool takes for a line break or a control; and the
#: bidirectional controls (marks, embeddings, overrides, isolates: U+061C, U+200E-F, U+202A-E, U+2066-9), with
#: which a name reorders what a terminal shows after it (a U+202E name printed a table row backwards: helper-203);
#: and the zero-width characters (U+200B-D, U+2060, U+FEFF), with which two names print alike
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]")


#: the spaces other than U+0020 (Unicode's space separators: no-break, en, em, thin, ideographic ...): each prints as a
#: space, so a name holding one looks like the name with U+0020 there
_OTHER_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")


def _escape(m: re.Match) -> str:
    return repr(m.group())[1:-1]  # '\n', '\x85', '\u2028' as Python writes them in a string literal


def printable(name: str) -> str:
    """``name`` with every control character and line/paragraph separator written as its Python escape
    (``'a\\u2028b'`` -> ``a\\u2028b`` as six visible characters); unchanged (the same object) when it has none."""
    return _UNPRINTABLE.sub(_escape, name) if _UNPRINTABLE.search(name) else name


def name_cell(name: str, separators: str = "", reserved: tuple[str, ...] = ()) -> str:
    """``name`` as a table cell shows it: :func:`printable`, or quoted as Python's ``repr`` writes it when the cell
    alone would not tell it from another name: empty, a leading or trailing space (``'a '`` and ``a`` printed alike,
    helper-203), a leading quote (it would read as a quoted name), or a character of ``separators`` (a cell that
    lists several names, ``"a 1, b 2"``, passes ``", "``: a name holding them would split there), a name that
    :func:`printable` escapes or that holds a backslash (``a\\u200bb`` and ``a`` U+200B ``b`` printed alike), or one
    of ``reserved`` (the table's own labels, ``(no client)``), or a space other than U+0020 (``a\\xa0b`` and ``a b``
    printed alike, helper-209; Python's repr escapes it)."""
    shown = printable(name)
    if (not name or name[0] in "'\"" or name != name.strip() or any(c in name for c in separators)
            or shown is not name or "\\" in name or name in reserved or _OTHER_SPACES.search(name)):
        return repr(name)  # an escaped name is quoted too: a literal backslash-u200b would print like U+200B
    return shown
