"""The scenario interface shared by the three workload domains, and vectorized building blocks.

A :class:`Scenario` produces a **base problem** (round 0) and then, round after round, the **delta**
that turns round ``r - 1`` into round ``r`` (``Delta.base_round = r - 1``), in the semantics of
docs/DESIGN.md "Delta and problem files": dropped entities disappear, new entities are appended in delta-row order. Every scenario
keeps its columns and rows in exactly that order, so ``apply_delta(problem(r-1), delta(r))`` equals the
scenario's own rebuild ``problem(r)`` (the workload tests check this).

Rounds can depend on the previous allocation (Sia: job progress and restart factors; load balancing:
the previous placement). ``next_delta(round, previous_solution)`` takes that allocation as an (n,)
array in the column order of the previous round's problem, a ``{name: value}`` dict, or a
``(names, values)`` pair; when it is None the scenario simulates its own allocation (a cheap
vectorized greedy), so a whole stream can be generated offline and written to files.

Naming convention (the POP baseline and the compare tooling rely on it)
-----------------------------------------------------------------------
- Every variable name is ``<client>/<rest>`` where ``<client>`` is the POP client the variable belongs
  to: Sia, the job (``j17/V100/4`` = job 17 on 4 V100 GPUs); TE, the commodity (``d12-45/p2`` = path 2
  of the demand from node 12 to node 45); LB, the shard (``s17/r/3`` = fraction of shard 17 served by
  server 3, ``s17/x/3`` = shard 17 stored on server 3).
- A constraint that belongs to one client is named ``<client>/<rest>`` too: ``j17/one`` (one
  configuration per job), ``d12-45/cap`` (demand cap) or ``d12-45/dem`` (max-concurrent-flow demand
  row), ``s17/assign`` (shard fully served), ``s17/vub/3`` (``r <= x`` on server 3).
- A shared-resource row has a name without a client prefix that starts with a resource word and a
  slash: ``gpus/V100`` (GPU capacity per type), ``link/12-45`` (link capacity), ``load/3`` (server 3's
  load within +-5% of the mean; one ranged row), ``mem/3`` (server 3's memory).
- A variable without a slash is global (shared by every client): only ``alpha``, the concurrent-flow
  fraction of the TE max-concurrent-flow variant.
The client of any name is therefore ``name.split("/", 1)[0]`` whenever that prefix is a client id
(``j<int>``, ``d<src>-<dst>``, ``s<int>``); :func:`client_of` implements exactly that.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import scipy.sparse as sp

from solver.model.delta import Delta
from solver.model.errors import UsageError, ValidationError
from solver.model.problem import Problem

ROUND_SECONDS = 60.0  # simulated time between two rounds (Sia, POP)
RESOURCE_WORDS = ("gpus", "link", "load", "mem")
_CLIENT_RE = re.compile(r"^(j\d+|d[^/]+-[^/]+|s\d+)/")


def client_of(names) -> np.ndarray:
    """The POP client of each name (see the module docstring), or "" for shared rows/variables.

    Args:
        names: (k,) sequence of variable or constraint names.
    Returns:
        (k,) object array of client ids (``j17``, ``d12-45``, ``s17``) or "".
    """
    arr = pa.array(np.asarray(names, dtype=object).tolist(), type=pa.string())
    prefix = pc.extract_regex(arr, r"^(?P<c>j\d+|d[^/]+-[^/]+|s\d+)/")
    out = pc.fill_null(pc.struct_field(prefix, [0]), "")
    return np.asarray(out.to_numpy(zero_copy_only=False), dtype=object)


def join_names(*parts) -> np.ndarray:
    """Element-wise string concatenation of scalars and (k,) arrays, vectorized (no Python loop).

    Example: ``join_names("j", ids, "/", types, "/", gpus)`` -> ``["j0/V100/4", ...]``.

    Returns:
        (k,) object array of str.
    """
    arrays = []
    n = None
    for p in parts:
        if isinstance(p, str):
            arrays.append(p)
        else:
            a = np.asarray(p)
            n = a.shape[0] if n is None else n
            arrays.append(pa.array(a.astype(str) if a.dtype != object else a.tolist(), type=pa.string()))
    if n is None:
        return np.asarray(["".join(parts)], dtype=object)
    out = pc.binary_join_element_wise(*arrays, "")
    return np.asarray(out.to_numpy(zero_copy_only=False), dtype=object)


def csc_problem(*, cost, col_lower, col_upper, integrality, row_lower, row_upper, indptr, indices,
                data, col_names, row_names, sense: int, offset: float = 0.0, name: str = "") -> Problem:
    """Build a Problem directly from CSC arrays that are already canonical (rows sorted per column).

    Faster than :meth:`Problem.from_arrays` (no duplicate summing); still runs :meth:`Problem.check`.

    Args:
        cost, col_lower, col_upper: (n,) float; integrality: (n,) bool.
        row_lower, row_upper: (m,) float.
        indptr: (n+1,) int; indices: (nnz,) int row indices; data: (nnz,) float nonzeros.
        col_names, row_names: (n,), (m,) unique str.
    Raises:
        ValidationError: if the arrays break the Problem invariants.
    """
    p = Problem(col_names=np.asarray(col_names, dtype=object), row_names=np.asarray(row_names, dtype=object),
                cost=np.asarray(cost, dtype=np.float64), col_lower=np.asarray(col_lower, dtype=np.float64),
                col_upper=np.asarray(col_upper, dtype=np.float64),
                row_lower=np.asarray(row_lower, dtype=np.float64),
                row_upper=np.asarray(row_upper, dtype=np.float64),
                integrality=np.asarray(integrality, dtype=bool),
                a_indptr=np.asarray(indptr, dtype=np.int64), a_indices=np.asarray(indices, dtype=np.int32),
                a_data=np.asarray(data, dtype=np.float64), sense=int(sense), offset=float(offset), name=name)
    p.check()
    return p


def coo_problem(*, rows, cols, vals, n_rows, n_cols, **kw) -> Problem:
    """Like :func:`csc_problem` but from (nnz,) COO triples (no duplicates expected; summed if any)."""
    A = sp.csc_array((np.asarray(vals, dtype=np.float64), (rows, cols)), shape=(n_rows, n_cols))
    A.sum_duplicates()
    A.sort_indices()
    return csc_problem(indptr=A.indptr, indices=A.indices, data=A.data, **kw)


def align_solution(previous_solution, names: np.ndarray) -> np.ndarray | None:
    """Map a previous round's solution onto ``names`` (missing names -> 0).

    Args:
        previous_solution: None; an (n,) array in the order of ``names``; a ``{name: value}`` dict;
            a ``(names, values)`` pair; or a pyarrow Table with ``name`` and ``value`` columns (the
            ``solution.parquet`` layout).
        names: (n,) the previous round's column names.
    Returns:
        (n,) float64 values, or None when ``previous_solution`` is None.
    Raises:
        ValidationError: an array whose length is not n, or a non-finite value.
    """
    if previous_solution is None:
        return None
    n = len(names)
    if isinstance(previous_solution, pa.Table):
        src_names = previous_solution.column("name")
        src_vals = previous_solution.column("value").to_numpy()
    elif isinstance(previous_solution, dict):
        src_names = pa.array(list(previous_solution.keys()), type=pa.string())
        src_vals = np.fromiter(previous_solution.values(), dtype=np.float64, count=len(previous_solution))
    elif isinstance(previous_solution, tuple) and len(previous_solution) == 2:
        src_names = pa.array(np.asarray(previous_solution[0], dtype=object).tolist(), type=pa.string())
        src_vals = np.asarray(previous_solution[1], dtype=np.float64)
    else:
        x = np.asarray(previous_solution, dtype=np.float64).reshape(-1)
        if x.shape[0] != n:
            raise ValidationError(f"previous solution has {x.shape[0]} values, the previous round has {n} "
                                  "variables (pass a {name: value} dict when the orders differ)")
        if not np.all(np.isfinite(x)):
            raise ValidationError("previous solution contains a non-finite value")
        return x
    src_vals = np.asarray(src_vals, dtype=np.float64)
    if not np.all(np.isfinite(src_vals)):
        raise ValidationError("previous solution contains a non-finite value")
    if isinstance(src_names, pa.ChunkedArray):
        src_names = src_names.combine_chunks()
    value_set = src_names.cast(pa.string())
    if pc.count_distinct(value_set).as_py() != len(value_set):
        raise ValidationError("previous solution names a variable twice")
    pos = pc.index_in(pa.array(np.asarray(names, dtype=object).tolist(), type=pa.string()),
                      value_set=value_set)
    pos = pos.fill_null(-1).to_numpy().astype(np.int64)
    out = np.zeros(n, dtype=np.float64)
    hit = pos >= 0
    idx = pos[hit]
    out[hit] = src_vals[idx]
    return out


class Scenario(ABC):
    """A round-based workload: a base problem and a stream of deltas, deterministic for a seed.

    Subclasses set ``domain`` and implement :meth:`problem` (the full problem of the current round,
    rebuilt from the scenario's own state) and :meth:`_advance` (simulate one round and return the
    delta). ``round`` is the round the scenario currently describes (0 after construction).
    """

    domain: str = ""

    def __init__(self) -> None:
        self.round = 0
        self._base: Problem | None = None
        self._col_names: np.ndarray | None = None

    def base(self) -> Problem:
        """The round-0 problem (built once and cached).

        Raises:
            UsageError: when the scenario has already advanced past round 0 without building it.
        """
        if self._base is None:
            if self.round != 0:
                raise UsageError("base() must be called before the first next_delta()")
            self._base = self.problem()
            self._col_names = self._base.col_names
        return self._base

    @abstractmethod
    def problem(self) -> Problem:
        """The full problem of the current round (columns/rows in delta-application order)."""

    @abstractmethod
    def _advance(self, previous_solution: np.ndarray | None) -> Delta:
        """Move the scenario's state one round forward; return the delta (without metadata)."""

    def next_delta(self, round: int, previous_solution=None) -> Delta:
        """The delta producing round ``round`` from round ``round - 1`` (``base_round = round - 1``).

        Args:
            round: the round to produce; must be the scenario's current round + 1.
            previous_solution: the allocation chosen at round ``round - 1`` (see :func:`align_solution`),
                or None to let the scenario simulate one.
        Returns:
            Delta with ``base_round = round - 1``.
        Raises:
            UsageError: rounds requested out of order.
            ValidationError: a previous solution of the wrong length or with non-finite values.
        """
        if round != self.round + 1:
            raise UsageError(f"next_delta({round}) called at round {self.round}: rounds must be consecutive")
        if self._col_names is None:
            self._col_names = self.problem().col_names
        x = align_solution(previous_solution, self._col_names)
        delta = self._advance(x)
        self.round = round
        delta.base_round = round - 1
        self._col_names = self.current_col_names()
        return delta

    @abstractmethod
    def current_col_names(self) -> np.ndarray:
        """(n,) names of the current round's columns, in problem order (cheap: no full rebuild)."""

    def stream(self, rounds: int, solutions=None):
        """Yield ``(0, base problem)`` then ``(r, delta)`` for r = 1..rounds.

        Args:
            rounds: number of deltas.
            solutions: optional callable ``round -> previous_solution`` (None = simulate).
        """
        yield 0, self.base()
        for r in range(1, rounds + 1):
            yield r, self.next_delta(r, None if solutions is None else solutions(r - 1))


def changed(old: np.ndarray, new: np.ndarray, rtol: float = 1e-12) -> np.ndarray:
    """Boolean mask of entries whose value changed beyond a relative tolerance (shapes equal)."""
    return np.abs(new - old) > rtol * np.maximum(1.0, np.abs(old))


def parse_scale(text: str | None, default):
    """Parse a scale knob: ``"1024"`` -> 1024, ``"1024x128"`` -> (1024, 128), other text unchanged.

    Raises:
        UsageError: on an empty or malformed numeric scale.
    """
    if text is None or text == "":
        return default
    # ASCII digits, nothing around them: the rule of every numeric option (formats/number_text.py); \d and strip()
    # read "２４", "٢٤" and " 24" as 24, which the domain now refuses naming the text
    # (formats/number_text.py's DIGITS: the numerical core imports nothing from formats, tests/test_rounds_readme.py)
    t = str(text).lower()
    if re.fullmatch(r"[0-9]+", t, re.ASCII):
        return int(t)
    m = re.fullmatch(r"([0-9]+)x([0-9]+)", t, re.ASCII)
    if m:
        return int(m.group(1)), int(m.group(2))
    return str(text)
