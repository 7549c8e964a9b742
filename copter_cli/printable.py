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
import unicodedata

from solver.model.invisible import DEFAULT_IGNORABLE, marks_escaped

#: C0 and C1 control characters (tab, newline, NEL U+0085 included), DEL, and the Unicode line and
#: paragraph separators: what a terminal or a line-based tool takes for a line break or a control; and the characters
#: that print as nothing (Unicode's Default_Ignorable_Code_Point, :mod:`solver.model.invisible`: the zero-width ones,
#: with which two names print alike, the soft hyphen, the variation selectors, the Hangul fillers, and the
#: bidirectional controls, with which a name reorders what a terminal shows after it: a U+202E name printed a table
#: row backwards, helper-203)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]|" + DEFAULT_IGNORABLE)


#: the spaces other than U+0020 (Unicode's space separators: no-break, en, em, thin, ideographic ...): each prints as a
#: space, so a name holding one looks like the name with U+0020 there
_OTHER_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")


def _escape(m: re.Match) -> str:
    """'\\n', '\\x85', '\\u2028' as Python writes them in a string literal; a character Python's repr keeps as it is
    (it counts U+034F, U+FE0F, U+3164 as printable, though they print as nothing) as ``\\uXXXX`` / ``\\UXXXXXXXX``."""
    ch = m.group()
    shown = repr(ch)[1:-1]
    if shown != ch:
        return shown
    return f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}"


def _repr(name: str) -> str:
    """``repr(name)`` with the characters it keeps but that print as nothing escaped as well (:func:`_escape`)."""
    return _UNPRINTABLE.sub(_escape, repr(name))


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
    printed alike, helper-209; Python's repr escapes it), or a name that is not in Unicode's NFC form, quoted with its
    combining marks escaped (``'e\\u0301/2'``: it printed like the NFC name ``é/1``'s client, helper-212)."""
    shown = printable(name)
    if not name.isascii() and not unicodedata.is_normalized("NFC", name):
        return "'" + marks_escaped(_repr(name)[1:-1]) + "'"
    if (not name or name[0] in "'\"" or name != name.strip() or any(c in name for c in separators)
            or shown is not name or "\\" in name or name in reserved or _OTHER_SPACES.search(name)):
        return _repr(name)  # an escaped name is quoted too: a literal backslash-u200b would print like U+200B
    return shown
