"""The round a Parquet problem file was exported from: schema metadata ``copter.round`` (the key every round
output carries too, ``solver.rounds.outputs.ROUND_KEY``).

``copter export -o FILE.parquet`` writes it (the kept round whose problem it holds); ``copter diff OLD NEW``
reads it from OLD to record ``copter.base_round`` = that round in the delta when ``--base-round`` is not
given, so a delta diffed against an export applies to the round it came from without a warning. Only
``export`` writes the key: a problem from elsewhere (``convert``, a generator, a state's own
``problem.parquet``) has none, and then nothing is filled in. An MPS file has no place for it (an MPS export
records no round). Same digits rule as ``copter.base_round`` (ASCII ``[0-9]+``, at most 18 significant
digits).
"""

from __future__ import annotations

import os
import re

KEY = "copter.round"
_DIGITS = 18


def round_metadata(round_: int) -> dict[str, str]:
    """The schema metadata an export of kept round ``round_`` carries (``{"copter.round": "7"}``)."""
    return {KEY: str(int(round_))}


def exported_round(path: str | os.PathLike) -> int | None:
    """The round recorded in Parquet file ``path``'s ``copter.round`` metadata, None when it has none.

    Reads the file's footer only (``pyarrow.parquet.read_schema``); call it on a file already read whole
    (its errors are then the reader's).

    Raises:
        FormatError: the key holds something other than a round number (ASCII digits 0-9, at most 18
            significant), naming the file and the key.
    """
    import pyarrow.parquet as pq

    from solver.model.errors import FormatError

    raw = (pq.read_schema(path).metadata or {}).get(KEY.encode())
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    digits = text.lstrip("0") or "0"
    if not re.fullmatch(r"[0-9]+", text, re.ASCII) or len(digits) > _DIGITS:
        raise FormatError(f"{KEY} {text[:24]!r} is not a round number (ASCII digits 0-9, at most {_DIGITS} "
                          "significant)", file=str(path), entity=KEY)
    return int(digits)
