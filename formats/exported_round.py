"""The round a Parquet problem file was exported from: schema metadata ``copter.round`` (the key every round
output carries too, ``solver.rounds.outputs.ROUND_KEY``) and ``copter.problem_sha256``, the digest of the
problem exported (:func:`problem_digest`).

``copter export -o FILE.parquet`` writes both; ``copter diff OLD NEW`` reads them from OLD and records
``copter.base_round`` = that round in the delta when ``--base-round`` is not given, so a delta diffed against an
export applies to the round it came from without a warning. Honest only while OLD is that export: a file
edited since (pyarrow keeps schema metadata through ``read_table``/``write_table``) no longer has the digest it
names, and then nothing is filled in (:func:`verified_round` says why). Only ``export`` writes the keys: a
problem from elsewhere (``convert``, a generator, a state's own ``problem.parquet``) has none. An MPS file has
no place for them (an MPS export records no round). ``copter.round`` follows ``copter.base_round``'s digits rule
(ASCII ``[0-9]+``, at most 18 significant digits).
"""

from __future__ import annotations

import hashlib
import os
import re

KEY = "copter.round"
DIGEST_KEY = "copter.problem_sha256"
# what ``copter diff`` copies from such an OLD into its delta, beside ``copter.base_round``: the digest of the
# round's problem, so ``copter step`` refuses the delta on a round of that number but another content (the
# same round number made again on another branch after a rollback; ``solver.rounds.loop._check_base_round``)
BASE_DIGEST_KEY = "copter.base_problem_sha256"
_DIGITS = 18


def problem_digest(problem) -> str:
    """Hex SHA-256 of a Problem's content: sense, offset, the (n,) and (m,) arrays, the CSC matrix and the names
    (NUL-separated: a name holds no control character). A Parquet problem file read back gives the same Problem
    arrays, so the digest of the problem read equals the one written. Cost: one pass over the arrays' bytes."""
    import numpy as np

    h = hashlib.sha256(repr((int(problem.sense), float(problem.offset), problem.n_cols, problem.n_rows)).encode())
    for name in ("cost", "col_lower", "col_upper", "row_lower", "row_upper"):
        h.update(np.ascontiguousarray(getattr(problem, name), dtype=np.float64).tobytes())
    h.update(np.ascontiguousarray(problem.integrality, dtype=bool).tobytes())
    h.update(np.ascontiguousarray(problem.a_indptr, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(problem.a_indices, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(problem.a_data, dtype=np.float64).tobytes())
    for names in (problem.col_names, problem.row_names):
        h.update("\0".join(names.tolist()).encode("utf-8", "surrogatepass"))
        h.update(b"\1")
    return h.hexdigest()


def round_metadata(round_: int, problem) -> dict[str, str]:
    """The schema metadata an export of kept round ``round_`` (whose problem is ``problem``) carries."""
    return {KEY: str(int(round_)), DIGEST_KEY: problem_digest(problem)}


def verified_round(path: str | os.PathLike, problem) -> tuple[int | None, str | None, str | None]:
    """(the round Parquet file ``path`` records, a reason it cannot be used or None, the problem's digest when
    verified or None). ``problem``: the file's problem, already read whole (its read errors are then the reader's;
    here only the footer is read again). ``(None, None, None)``: no ``copter.round`` (not an export);
    ``(N, None, digest)``: an export of round N, unchanged (``digest`` = :func:`problem_digest` of ``problem``,
    computed once here for the caller to record); ``(N, reason, None)``: it names round N but its content is not
    what export wrote (edited since), or it has no digest.

    Raises:
        FormatError: ``copter.round`` holds something other than a round number (ASCII digits 0-9, at most
            18 significant), naming the file and the key.
    """
    import pyarrow.parquet as pq

    from solver.model.errors import FormatError

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(KEY.encode())
    if raw is None:
        return None, None, None
    text = raw.decode("utf-8", "replace")
    digits = text.lstrip("0") or "0"
    if not re.fullmatch(r"[0-9]+", text, re.ASCII) or len(digits) > _DIGITS:
        raise FormatError(f"{KEY} {text[:24]!r} is not a round number (ASCII digits 0-9, at most {_DIGITS} "
                          "significant)", file=str(path), entity=KEY)
    round_ = int(digits)
    digest = meta.get(DIGEST_KEY.encode(), b"").decode("ascii", "replace")
    if not digest:
        return round_, f"it has no {DIGEST_KEY} to show it is still that export", None
    if digest != problem_digest(problem):
        return round_, (f"its content is no longer what `copter export` wrote ({DIGEST_KEY} differs: edited "
                        "since)"), None
    return round_, None, digest
