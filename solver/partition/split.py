"""Splitting a problem into parts by client, with per-part shares of the shared rows (POP's construction).

Shared by the POP baseline (``solver.baselines.pop``: Narayanan et al., "Solving Large-Scale Granular
Resource Allocation Problems Efficiently with POP", SOSP 2021) and copter's partitioned rounds
(``solver.partition.round``). Client grouping and shared-row detection: :mod:`solver.partition.clients`.

Part p of a split holds its clients' columns plus every global column, its clients' rows, every global row
(unscaled) and every shared row with its finite bounds times the part's *share* of that row, each row
restricted to the part's columns; rows without a nonzero in the part are left out. Shares are a
``(k, n_shared)`` array over the shared rows in row order (``np.flatnonzero(grouping.shared)``); a
column of shares sums to 1, so parts that satisfy their rows give a combined point that satisfies the
full row.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.partition.clients import GLOBAL, SHARED, ClientGrouping

SCALINGS = ("auto", "uniform")
BUILD_THREADS_MIN_NNZ = 1_000_000  #: a model at least this large builds its parts in threads (one per core, at most k;
#: TE Kdl, 30.9M nonzeros, K = 4: the part kernels took 1.5 s of set-up one after another, the machine loaded)


@dataclass(eq=False)
class Part:
    """One part of a split.

    Attributes:
        cols: (n_p,) int64 full-problem column of each part column (sorted).
        rows: (m_p,) int64 full-problem row of each part row (sorted).
        problem: the part's sub-problem (full problem's names; shared rows' bounds scaled by the share).
    """

    cols: np.ndarray
    rows: np.ndarray
    problem: Problem


def split_clients(n_clients: int, k: int, seed: int | None) -> np.ndarray:
    """(n_clients,) part id in ``0..k-1`` of every client: a uniformly random, size-balanced split."""
    rng = np.random.default_rng(seed)
    part = np.empty(n_clients, dtype=np.int64)
    part[rng.permutation(n_clients)] = np.arange(n_clients, dtype=np.int64) % k
    return part


def column_parts(grouping: ClientGrouping, client_part: np.ndarray) -> np.ndarray:
    """(n,) part of every column from the (n_clients,) part of every client; -1 for global columns."""
    col_part = np.full(grouping.col_client.shape[0], -1, dtype=np.int64)
    own = grouping.col_client >= 0
    col_part[own] = client_part[grouping.col_client[own]]
    return col_part


def shared_rows(grouping: ClientGrouping) -> np.ndarray:
    """(n_shared,) int64 indices of the shared rows, in row order (the columns of a shares array)."""
    return np.flatnonzero(grouping.row_client == SHARED)


def part_row_mass(problem: Problem, col_part: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """(k, rows.size) sum of ``|a_ij|`` over each part's own (non-global) columns j, for the given rows."""
    pos = np.full(problem.n_rows, -1, dtype=np.int64)
    pos[rows] = np.arange(rows.size, dtype=np.int64)
    nnz_part = np.repeat(col_part, np.diff(problem.a_indptr))
    r = pos[problem.a_indices]
    sel = (r >= 0) & (nnz_part >= 0)
    flat = np.bincount(nnz_part[sel] * rows.size + r[sel], weights=np.abs(problem.a_data[sel]),
                       minlength=k * rows.size)
    return flat.reshape(k, rows.size)


def pop_shares(problem: Problem, grouping: ClientGrouping, col_part: np.ndarray, k: int,
               shared_scaling: str = "auto") -> np.ndarray:
    """POP's (k, n_shared) shares of the shared rows.

    ``"uniform"``: 1/k everywhere. ``"auto"``: 1/k for one-sided rows; for a row with two finite bounds
    (a band or an equality) the part's share of the row's coefficient mass ``sum |a_ij|`` over its own
    columns (1/k when the row has no mass outside global columns); see ``solver.baselines.pop``.

    Raises:
        UsageError: unknown ``shared_scaling``.
    """
    if shared_scaling not in SCALINGS:
        raise UsageError(f"unknown POP shared-row scaling {shared_scaling!r}; choose {' or '.join(SCALINGS)}")
    rows = shared_rows(grouping)
    shares = np.full((k, rows.size), 1.0 / k)
    if shared_scaling == "uniform" or rows.size == 0:
        return shares
    band = np.isfinite(problem.row_lower[rows]) & np.isfinite(problem.row_upper[rows])
    if band.any():
        mass = part_row_mass(problem, col_part, rows[band], k)
        total = mass.sum(axis=0)
        ok = total > 0
        sub = shares[:, band]
        sub[:, ok] = mass[:, ok] / total[ok]
        shares[:, band] = sub
    return shares


def build_part_problems(problem: Problem, grouping: ClientGrouping, col_part: np.ndarray, k: int,
                        shares: np.ndarray, name: str = "part") -> list[Part]:
    """The k parts of ``problem`` (module docstring).

    Args:
        problem: the full problem (n columns, m rows).
        grouping: its client grouping.
        col_part: (n,) part of every column, -1 for global columns.
        k: number of parts.
        shares: (k, n_shared) share of every shared row (:func:`shared_rows` order) per part.
        name: sub-problem names are ``f"{problem.name}#{name}{p}"``.
    Returns:
        k Parts (a part may be empty). O(k (nnz_global + m) + nnz): two passes per part over its columns'
        nonzeros (``solver.partition.split_kernels.part_pattern``, ``part_fill``), the part's entries and its cost,
        column bounds, integrality and row bounds written into ``solver.partition.shipping.shared_empty`` arrays
        (shipped to a part worker without a copy; plain arrays for a small part).
    """
    from solver.partition.shipping import shared_empty
    from solver.partition.split_kernels import part_fill, part_pattern

    rc = grouping.row_client
    shared = rc == SHARED
    everywhere = shared | (rc == GLOBAL)
    spos = np.full(problem.n_rows, -1, dtype=np.int64)
    spos[shared_rows(grouping)] = np.arange(int(shared.sum()), dtype=np.int64)
    client_part = np.full(grouping.n_clients, -1, dtype=np.int64)
    if grouping.n_clients:
        client_part[grouping.col_client[grouping.col_client >= 0]] = col_part[grouping.col_client >= 0]
    row_part = np.where(rc >= 0, client_part[np.maximum(rc, 0)] if grouping.n_clients else -1, -1).astype(
        np.int64, copy=False)
    glob = np.flatnonzero(col_part < 0)
    cp, ci, cv = problem._csc()  # the kernels' types, no copy when they are (as solver.integer.structure)

    def build(p: int) -> Part:
        cols = np.union1d(np.flatnonzero(col_part == p), glob) if glob.size else np.flatnonzero(col_part == p)
        # the kept nonzeros (global columns touch other parts' rows), their rows renumbered in order: two kernel
        # passes, the entries written straight into memory a part worker maps (solver.partition.shipping)
        cols64 = cols.astype(np.int64, copy=False)
        sub_ptr, rows, new_row = part_pattern(cp, ci, cols64, everywhere, row_part, p, problem.n_rows)
        nnz_p, n_p = int(sub_ptr[-1]), int(cols.shape[0])
        sp = spos[rows]
        scale = np.where(sp >= 0, shares[p, np.maximum(sp, 0)] if shares.size else 1.0, 1.0)
        row_lower, row_upper = _scaled(problem.row_lower[rows], scale), _scaled(problem.row_upper[rows], scale)
        # the entries, and the column and row vectors, in one memory file a part worker maps: pack then writes
        # none of them (a Kdl part's vectors were 11 of the 28 MB it still wrote, into fresh pages: session 42)
        column_vectors = (problem.cost, problem.col_lower, problem.col_upper, problem.integrality)
        sub_idx, sub_data, *col_out, rl_out, ru_out = shared_empty(
            [(nnz_p, np.int32), (nnz_p, np.float64)] + [(n_p, v.dtype) for v in column_vectors]
            + [(rows.shape[0], row_lower.dtype), (rows.shape[0], row_upper.dtype)])
        part_fill(cp, ci, cv, cols64, everywhere, row_part, p, new_row, sub_idx, sub_data)
        for v, out in zip(column_vectors, col_out, strict=True):
            np.take(v, cols, out=out, mode="clip")  # cols are valid; "raise" would gather into a buffer first
        np.copyto(rl_out, row_lower)
        np.copyto(ru_out, row_upper)
        cost, col_lower, col_upper, integrality = col_out
        sub = Problem(
            col_names=problem.col_names[cols], row_names=problem.row_names[rows], cost=cost,
            col_lower=col_lower, col_upper=col_upper, row_lower=rl_out, row_upper=ru_out,
            integrality=integrality, a_indptr=sub_ptr, a_indices=sub_idx,
            a_data=sub_data, sense=problem.sense, offset=0.0, name=f"{problem.name}#{name}{p}")
        return Part(cols=cols, rows=rows, problem=sub)

    threads = min(k, os.cpu_count() or 1)
    if threads > 1 and problem.nnz >= BUILD_THREADS_MIN_NNZ:  # the kernel releases the GIL: parts side by side
        with ThreadPoolExecutor(threads) as ex:
            return list(ex.map(build, range(k)))
    return [build(p) for p in range(k)]


def _scaled(bounds: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Row bounds times their part's share; an infinite bound stays infinite (-inf * a share of 0 was NaN)."""
    fin = np.isfinite(bounds)
    return np.where(fin, np.where(fin, bounds, 0.0) * scale, bounds)


def combine_points(problem: Problem, parts: list, points: list[np.ndarray],
                   global_cols: np.ndarray) -> tuple[np.ndarray, int]:
    """Concatenate the parts' (n_p,) points into one (n,) point; return it and the part whose global
    values it took (-1 without global columns).

    ``parts`` holds Parts or ``(cols, sub_problem)`` pairs. Client columns take their part's value. Global
    columns (``global_cols``: (n,) bool) get one part's values as a whole: the candidate whose full point
    has the smallest max relative row violation, ties broken by the objective (e.g. the concurrent-flow
    fraction ``alpha`` becomes the smallest over the parts, which keeps every demand row feasible).
    k extra mat-vecs when globals exist.
    """
    from solver.baselines.result import point_quality

    x = np.zeros(problem.n_cols, dtype=np.float64)
    candidates = []
    for part, xp in zip(parts, points, strict=True):
        cols = part.cols if isinstance(part, Part) else part[0]
        own = ~global_cols[cols]
        x[cols[own]] = xp[own]
        candidates.append(xp[~own])
    chosen = -1
    if global_cols.any() and candidates:
        gcols = np.flatnonzero(global_cols)
        best_key = None
        for i, cand in enumerate(candidates):
            x[gcols] = cand
            q = point_quality(problem, x)
            key = (q.max_row_violation_rel, -problem.sense * q.objective)
            if best_key is None or key < best_key:
                chosen, best_key = i, key
        x[gcols] = candidates[chosen]
    return x, chosen
