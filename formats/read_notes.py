"""Warnings of reading an input file: a convention applied or a value dropped that changes the model read
(``formats.mps``: a negative ``UP`` bound giving lower -inf, matrix values HiGHS takes for 0, an ``IMPORTANCES``
trailer ignored).

:func:`note` prints one as a ``warning:`` line on stderr, or, inside :func:`collect`, keeps it for the caller:
``copter init`` stores its base's notes in round 0's ``warnings`` (the report, ``--json``, ``copter show``), so a
JSON consumer sees how the base was read, and the CLI prints them once with the round's other warnings.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

_STACK: list[list[str]] = []  #: the lists of the open collect() blocks, innermost last


def note(text: str) -> None:
    """Report ``text`` (no ``warning:`` prefix): keep it in the innermost :func:`collect` list, else print it
    on stderr as ``warning: text``."""
    if _STACK:
        _STACK[-1].append(text)
    else:
        print(f"warning: {text}", file=sys.stderr)


@contextmanager
def collect() -> Iterator[list[str]]:
    """Keep the :func:`note` texts of the block in the yielded list instead of printing them."""
    kept: list[str] = []
    _STACK.append(kept)
    try:
        yield kept
    finally:
        _STACK.remove(kept)
