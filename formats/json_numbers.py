"""How copter writes a float in JSON, the one rule of both JSON writers: the CLI's ``--json`` answers
(``copter_cli.output.dumps``) and the stored ``report.json`` (``formats.reports.dumps``). Standard library only
(the CLI's start-up imports it without numpy).
"""

from __future__ import annotations

import math


def json_float(v: float):
    """``v`` as JSON can carry it: nan -> None (null), +-inf -> the strings ``"inf"`` / ``"-inf"`` (JSON has
    neither), and a zero as ``0.0``: ``-0.0`` (a maximisation's dual objective 0 negated, a share or a move of
    0 computed from a negative operand) printed as ``-0.0``, which a reader compares or displays as a
    different number. Any other value unchanged."""
    if math.isnan(v):
        return None
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return 0.0 if v == 0.0 else v
