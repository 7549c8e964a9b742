"""How a number written as text must look for copter to read it: the one rule of the delta files' ``copter.*``
metadata (:func:`formats.parquet.read_delta`) and of the command line's numeric options
(:mod:`copter_cli.option_values`). Standard library only (the CLI's start-up imports it without numpy).

Python's ``int()`` and ``float()`` take spellings nobody writes on purpose and that another reader of the same
text would refuse or read otherwise: digit-group underscores (``1_000``), surrounding white space (``" 5 "``)
and the digits of other scripts (fullwidth ``１０``, Arabic-Indic ``٣``). Copter reads ASCII digits only.
"""

from __future__ import annotations

import re

#: ASCII digits, no sign (a round number, a count)
DIGITS = re.compile(r"[0-9]+", re.ASCII)
#: an optionally signed integer in ASCII digits
INTEGER = re.compile(r"[+-]?[0-9]+", re.ASCII)
#: an optionally signed ASCII decimal with an optional exponent: ``-1.5e3``, ``.5``, ``5.``
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
#: the non-finite words ``float()`` takes (``inf``, ``-Infinity``, ``nan``), any case, nothing around them
NON_FINITE = re.compile(r"[+-]?(?:inf|infinity|nan)", re.ASCII | re.IGNORECASE)

#: most significant digits of a round number copter reads (``copter.base_round``; int64 holds every 18-digit number)
ROUND_DIGITS = 18
#: the largest round number copter reads: what ``copter diff --base-round`` may record
MAX_ROUND = 10 ** ROUND_DIGITS - 1

#: why a value that Python converts is refused anyway (appended to the message naming the value)
PLAIN_ONLY = "written in ASCII digits (no '_', spaces or other scripts' digits)"


def plain_integer(text: str) -> bool:
    """``text`` is an optionally signed integer written in ASCII digits, nothing around it."""
    return INTEGER.fullmatch(text) is not None


def plain_float(text: str) -> bool:
    """``text`` is an ASCII decimal (:data:`DECIMAL`) or one of ``float()``'s non-finite words
    (:data:`NON_FINITE`; whether the value is allowed is the caller's range check), nothing around it."""
    return DECIMAL.fullmatch(text) is not None or NON_FINITE.fullmatch(text) is not None
