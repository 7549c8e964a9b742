"""The characters a name may hold that print as nothing (Unicode's Default_Ignorable_Code_Point property), and the
combining marks that make two names print alike (:func:`marks_escaped`).

Two names that differ only by such characters print alike, so copter refuses the second as a look-alike
(``solver.differential.intent.check_normalisation_twins``) and the human output's tables escape them
(``copter_cli.printable``). The set is the property's as Unicode's DerivedCoreProperties.txt lists it (Unicode 15;
UAX #44): the soft hyphen, the combining grapheme joiner, the Arabic letter mark, the Hangul fillers, the Khmer
inherent vowels, the Mongolian variation selectors and vowel separator, the zero-width space, non-joiner and joiner,
the direction marks, embeddings, overrides and isolates, the word joiner and invisible operators, the variation
selectors, the byte-order mark, the musical beam and phrase format characters, the shorthand format controls, the
tags, and the code points the property reserves. A hand-made list missed the Arabic letter mark and the direction
isolates (U+061C, U+2066-U+2069) while the tables escaped them (session 54, helper-212).
Standard library only: the CLI's human output imports it.
"""

from __future__ import annotations

import re

#: a regular-expression character class (Python's ``re`` and pyarrow's RE2 read it alike: literal characters)
DEFAULT_IGNORABLE = ("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
                     "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
                     "\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")

INVISIBLE = re.compile(DEFAULT_IGNORABLE)


def marks_escaped(text: str) -> str:
    """``text`` with every combining mark (Unicode category M) written as ``\\uXXXX``: a name in NFD
    (``cafe`` + U+0301) then reads apart from its NFC twin (``café``), which prints alike (the look-alike refusal's
    message, the human output's tables)."""
    import unicodedata

    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch).startswith("M") else ch for ch in text)
