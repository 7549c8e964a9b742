"""What a solve leaves behind for the next round's warm start."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np


@dataclass(eq=False)
class MatrixScaling:
    """The diagonal scaling of a constraint matrix A (m x n), carried between rounds while A is unchanged.

    ``solver.lp.scaling``'s Ruiz equilibration and Pock-Chambolle pass depend on A alone, so a round whose delta
    leaves the matrix alone can start from the previous round's factors instead of recomputing them (TE Kdl: 10
    Ruiz sweeps and one Pock-Chambolle sweep over 31M nonzeros, ~1 s a process). ``solver.lp.alm_scaling`` builds
    the scaled values D1 A D2 from these factors the same way whether they were computed or carried, so a round
    comes out bitwise the same either way.

    Attributes:
        ruiz_iterations: the Ruiz passes the factors were computed with.
        pock_chambolle_alpha: the Pock-Chambolle exponent (None: no such pass).
        row_factors: (m,) float64 D1, > 0 (1 on an empty row).
        col_factors: (n,) float64 D2, > 0 (1 on an empty column).
        matrix_crc: the 32-bit checksum of the CSC arrays they were computed for (``solver.lp.alm_scaling.matrix_crc``;
            zlib's CRC-32 before session 48: such a state's parts compute their factors once again), or
            None. A partitioned round's parts record it: their matrices are rebuilt every round, and a part's
            worker takes the factors only for a matrix of that checksum. The monolithic round needs none (the
            delta says whether the matrix changed).
        coupling_rows: (m2,) int64, the rows the ALM's Newton systems keep in their Schur complement
            (``solver.lp.alm_schur``: every other row is an assignment row), chosen for this matrix's pattern; or
            None (not chosen: no ALM run, or an older state). Carried with the factors, checked before use.
    """

    ruiz_iterations: int
    pock_chambolle_alpha: float | None
    row_factors: np.ndarray
    col_factors: np.ndarray
    matrix_crc: int | None = None
    coupling_rows: np.ndarray | None = None

    def options_json(self) -> str:
        """The options and the checksum as the JSON text a store keeps beside the two factor columns
        (``formats.generation``'s state.arrow, ``solver.partition.store``'s parts.arrow)."""
        return json.dumps({"ruiz_iterations": int(self.ruiz_iterations),
                           "pock_chambolle_alpha": self.pock_chambolle_alpha, "matrix_crc": self.matrix_crc})

    @classmethod
    def from_stored(cls, text: str | None, row_factors, col_factors, coupling_rows=None) -> MatrixScaling | None:
        """The scaling a store kept: :meth:`options_json`'s ``text`` (None or empty: none was stored), the
        factors (m,), (n,) and the coupling rows (m2,) int64 or None (an older store has none; rows outside
        [0, m) are dropped as unknown, never trusted: ``solver.lp.alm_schur`` checks a choice before use).

        Raises:
            ValueError: the text is not such a JSON object, or the factors are missing (the store's loader
                reports the file as damaged).
            KeyError: an option is missing.
        """
        if not text:
            return None
        opts = json.loads(text)
        if row_factors is None or col_factors is None:
            raise ValueError("scaling options stored without their factors")
        alpha, crc = opts["pock_chambolle_alpha"], opts.get("matrix_crc")
        return cls(ruiz_iterations=int(opts["ruiz_iterations"]),
                   pock_chambolle_alpha=None if alpha is None else float(alpha), row_factors=row_factors,
                   col_factors=col_factors, matrix_crc=None if crc is None else int(crc),
                   coupling_rows=_coupling(coupling_rows, len(row_factors)))


def _coupling(rows, m: int) -> np.ndarray | None:
    """Stored coupling rows as (m2,) int64, or None when absent or not row indices of an (m,)-row matrix."""
    if rows is None:
        return None
    rows = np.asarray(rows, dtype=np.int64)
    if rows.ndim != 1 or (rows.size and (rows.min() < 0 or rows.max() >= m)):
        return None
    return rows


@dataclass(eq=False)
class SolverState:
    """Warm-start data carried between rounds, in the problem's original (unscaled) units.

    Attributes:
        x: (n,) float64 primal iterate (column order of the problem it was computed for).
        y: (m,) float64 dual iterate (row duals, HiGHS sign convention: reduced cost = c - A'y,
           y >= 0 at an active row lower bound, for a minimisation).
        step_size: PDHG step eta of the last solve (scaled space), or nan if unknown.
        primal_weight: PDHG primal weight w of the last solve, or nan if unknown.
        iterations: iterations the solve that produced this state took.
        integer_x: (n,) float64 last integer allocation (MILP) used for tie-breaking, or None.
        engine: the engine record of the solve that produced this state (``solver.lp.engine_choice.
            EngineRecord.to_dict()``: engine, reason, converged, lost, cold_seconds, skip_alm, cold_passes, passes,
            alm_passes, pdhg_warm_passes),
            read by the next round's engine choice; None when unknown (an older state, a point built by a heuristic).
        proven_bound: a valid bound on the objective of THIS model (MILP), or nan: set by the round loop only
            when the round's model is unchanged from the previous round (an empty delta), to that round's proven
            bound, which then still holds (``solver.integer.pipeline`` starts from it: a time-limited unchanged
            round that keeps the previous point keeps its OPTIMAL). Not stored in a checkpoint.
        scaling: the :class:`MatrixScaling` of the matrix of the problem this state was computed for, or None
            (stored in the checkpoint; the round loop hands it to the next round when its delta leaves the
            matrix unchanged, ``solver.lp.alm_scaling.seed``).
    """

    x: np.ndarray
    y: np.ndarray
    step_size: float = float("nan")
    primal_weight: float = float("nan")
    iterations: int = 0
    integer_x: np.ndarray | None = None
    engine: dict | None = None
    proven_bound: float = float("nan")
    scaling: MatrixScaling | None = None
