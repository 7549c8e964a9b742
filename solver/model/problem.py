"""copter's in-memory LP/MILP in HiGHS's canonical form.

    minimize (sense=+1) or maximize (sense=-1)   cost @ x + offset
    subject to   row_lower <= A x <= row_upper,   col_lower <= x <= col_upper,
                 x[j] integer where integrality[j].

Invariants (checked by :meth:`Problem.check`): A is stored column-wise (CSC) with row indices strictly
increasing inside every column (sorted, no duplicates) and no explicit zeros; names are unique strings;
infinite bounds are ``+-inf`` (a bound of magnitude >= 1e20, ``INF_BOUND``, is normalised to inf by every reader
and by :meth:`Problem.from_arrays`); costs and coefficients are finite (below 1e30, ``INF_VALUE``), and none is
at most 1e-9 in magnitude (HiGHS's zero). These canonical arrays
make two equal problems byte-identical, which is what
``copter diff`` and the checkpoint's array sharing rely on.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from solver.model.errors import ValidationError

if TYPE_CHECKING:  # scipy is imported where it is used (0.2-0.7 s a process otherwise)
    import scipy.sparse as sp

INF_BOUND = 1e20  # a bound of magnitude >= this means no bound: HiGHS's infinite_bound, CPLEX's CPX_INFBOUND, Gurobi's
# and Xpress's infinity for bounds; an MPS file writes 'no bound' as 1e20, 1e30 or inf, and all of them are infinite
INF_VALUE = 1e30  # a cost, coefficient or objective offset of magnitude >= this is infinite, which copter refuses
# (a cost has no 'no cost' meaning; HiGHS's infinite_cost would fix the column at a bound)
# a coefficient of magnitude <= this is zero to HiGHS (its ``small_matrix_value``; the MPS reader drops it):
# copter refuses one (Parquet, deltas, from_arrays): PDHG's scaling would blow its column factor up to inf
# (1e-300 next to 1e29 made theta_c 0 and a division by zero), and HiGHS presolve would solve without it
SMALL_COEF = 1e-9
# a nonzero cost, bound or offset of magnitude below this (the smallest normal float64, 2.2e-308: below it a float is
# subnormal) is refused on every way in (Parquet, deltas, from_arrays), as the MPS reader refuses a number below 1e-308
# (``formats.mps_numbers.TINY_EXPONENT``: HiGHS's parse gives a subnormal with fewer digits, or 0): a Parquet problem
# holding 5e-324 was stored, then ``export``/``convert`` wrote an MPS file copter refused to read back (helper-186,
# session 46). Every normal float is written by the MPS writer at 1e-308 or more, so it reads back.
TINY_VALUE = float(np.finfo(np.float64).tiny)


def tiny_nonzero(arr):
    """Boolean mask of ``arr``'s (an array, or one float: one bool) nonzero entries below ``TINY_VALUE`` in magnitude
    (subnormal floats)."""
    return (arr != 0) & (np.abs(arr) < TINY_VALUE)


def tiny_sentence(v: float) -> str:
    """Why a value :func:`tiny_nonzero` flags is refused, with the remedy."""
    return (f"{v!r} is nonzero but below 2.2e-308 in magnitude (a subnormal float, which an MPS file cannot carry: "
            "copter's MPS reader refuses it, so export and convert could not write the model back); write 0 or "
            "rescale")


def normalize_infinite(bounds: np.ndarray) -> np.ndarray:
    """Return float64 ``bounds`` with every value of magnitude >= 1e20 (``INF_BOUND``) replaced by +-inf.

    Args:
        bounds: array of any shape, float.
    Returns:
        A new float64 array of the same shape.
    """
    b = np.array(bounds, dtype=np.float64, copy=True)
    b[b >= INF_BOUND] = np.inf
    b[b <= -INF_BOUND] = -np.inf
    return b


def _names(a) -> np.ndarray:
    arr = np.asarray(a, dtype=object)
    if arr.ndim != 1:
        arr = arr.reshape(-1)
    return arr


@dataclass(eq=False)
class Problem:
    """An LP/MILP with named variables (columns) and constraints (rows).

    Shapes: n = number of columns, m = number of rows, nnz = number of stored coefficients.

    Attributes:
        col_names: (n,) object array of str, unique.
        row_names: (m,) object array of str, unique.
        cost: (n,) float64 objective coefficients.
        col_lower, col_upper: (n,) float64 variable bounds (may be +-inf).
        row_lower, row_upper: (m,) float64 row bounds (may be +-inf; equal for an equality row).
        integrality: (n,) bool, True for integer variables.
        a_indptr: (n+1,) int64 CSC column starts.
        a_indices: (nnz,) int32 row index of each coefficient, strictly increasing within a column.
        a_data: (nnz,) float64 nonzero coefficients.
        sense: +1 to minimise, -1 to maximise.
        offset: objective constant (added to cost @ x).
        name: free-form model name.
    """

    col_names: np.ndarray
    row_names: np.ndarray
    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    integrality: np.ndarray
    a_indptr: np.ndarray
    a_indices: np.ndarray
    a_data: np.ndarray
    sense: int = 1
    offset: float = 0.0
    name: str = ""
    _row_index: dict | None = field(default=None, repr=False)
    _col_index: dict | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ construction
    @classmethod
    def empty(cls) -> Problem:
        """The problem with no rows and no columns (what a problem file is applied to)."""
        z = np.zeros(0, dtype=np.float64)
        return cls(col_names=np.zeros(0, dtype=object), row_names=np.zeros(0, dtype=object),
                   cost=z.copy(), col_lower=z.copy(), col_upper=z.copy(), row_lower=z.copy(),
                   row_upper=z.copy(), integrality=np.zeros(0, dtype=bool),
                   a_indptr=np.zeros(1, dtype=np.int64), a_indices=np.zeros(0, dtype=np.int32),
                   a_data=z.copy())

    @classmethod
    def from_arrays(cls, *, cost, col_lower, col_upper, row_lower, row_upper, matrix,
                    col_names=None, row_names=None, integrality=None, sense: int = 1,
                    offset: float = 0.0, name: str = "") -> Problem:
        """Build a canonical problem from dense/sparse arrays.

        Args:
            cost, col_lower, col_upper: (n,) array-likes.
            row_lower, row_upper: (m,) array-likes.
            matrix: (m, n) scipy sparse matrix/array or dense array.
            col_names, row_names: optional sequences of unique str; default ``x0..``, ``r0..``.
            integrality: optional (n,) bool array-like.
            sense: +1 minimise, -1 maximise.
        Returns:
            A Problem satisfying the class invariants (bounds normalised, matrix canonical).
        Raises:
            ValidationError: on shape mismatch, NaN, infinite cost/coefficient, duplicate names.
        """
        import scipy.sparse as sp
        cost = np.asarray(cost, dtype=np.float64).reshape(-1)
        n = cost.shape[0]
        A = sp.csc_array(matrix) if not sp.issparse(matrix) else sp.csc_array(matrix)
        row_lower = normalize_infinite(np.asarray(row_lower, dtype=np.float64).reshape(-1))
        m = row_lower.shape[0]
        if A.shape != (m, n):
            raise ValidationError(f"matrix has shape {A.shape}, expected ({m}, {n})")
        A.sum_duplicates()
        A.eliminate_zeros()
        A.sort_indices()
        p = cls(
            col_names=_names(col_names if col_names is not None else [f"x{j}" for j in range(n)]),
            row_names=_names(row_names if row_names is not None else [f"r{i}" for i in range(m)]),
            cost=cost.copy(),
            col_lower=normalize_infinite(col_lower).reshape(-1),
            col_upper=normalize_infinite(col_upper).reshape(-1),
            row_lower=row_lower,
            row_upper=normalize_infinite(row_upper).reshape(-1),
            integrality=(np.zeros(n, dtype=bool) if integrality is None
                         else np.asarray(integrality, dtype=bool).reshape(-1).copy()),
            a_indptr=A.indptr.astype(np.int64),
            a_indices=A.indices.astype(np.int32),
            a_data=A.data.astype(np.float64),
            sense=int(sense), offset=float(offset), name=name,
        )
        p.check()
        return p

    # ------------------------------------------------------------------ sizes and views
    @property
    def n_cols(self) -> int:
        return int(self.cost.shape[0])

    @property
    def n_rows(self) -> int:
        return int(self.row_lower.shape[0])

    @property
    def nnz(self) -> int:
        return int(self.a_data.shape[0])

    @property
    def is_mip(self) -> bool:
        return bool(self.integrality.any())

    def matrix(self) -> sp.csc_array:
        """A as a scipy CSC array of shape (m, n) sharing this problem's arrays (no copy)."""
        import scipy.sparse as sp
        return sp.csc_array((self.a_data, self.a_indices, self.a_indptr), shape=(self.n_rows, self.n_cols))

    def col_index(self) -> dict:
        """Name -> column position (built once, cached; invalidated by :meth:`replace`)."""
        if self._col_index is None:
            self._col_index = {s: i for i, s in enumerate(self.col_names.tolist())}
        return self._col_index

    def row_index(self) -> dict:
        """Name -> row position (built once, cached)."""
        if self._row_index is None:
            self._row_index = {s: i for i, s in enumerate(self.row_names.tolist())}
        return self._row_index

    def __getstate__(self) -> dict:
        """What pickling keeps (a problem sent to a child process: a HiGHS baseline under its deadline,
        ``solver.baselines.guard``; POP's parts): every attribute except the per-process Arrow copies of the
        names (``_arrow_names``, ``solver.differential.names.attach_arrow_names``), which hold memory-mapped
        checkpoint arrays, or a closure that builds them from a patched generation; a closure cannot be
        pickled (``copter compare`` failed with exit 1 from round 2 of a stream on), and the arrays would be
        copied whole. The child resolves names from ``col_names`` / ``row_names``."""
        state = self.__dict__.copy()
        state.pop("_arrow_names", None)
        return state

    def replace(self, **changes) -> Problem:
        """A shallow copy with some fields replaced (arrays not named are shared, not copied)."""
        changes.setdefault("_row_index", None if "row_names" in changes else self._row_index)
        changes.setdefault("_col_index", None if "col_names" in changes else self._col_index)
        return replace(self, **changes)

    def copy(self) -> Problem:
        """A deep copy (every array copied)."""
        return Problem(**{k: (v.copy() if isinstance(v, np.ndarray) else v)
                          for k, v in self.__dict__.items() if not k.startswith("_")})

    def objective(self, x: np.ndarray) -> float:
        """Objective ``cost @ x + offset`` of the (n,) point x, in the problem's own sense."""
        return float(self.cost @ x + self.offset)

    def row_activity(self, x: np.ndarray) -> np.ndarray:
        """(m,) row activities A x of the (n,) point x (float64).

        The CSC product kernel ``solver.lp.kernels.spmv_csc``: the same sums in the same order as scipy's
        ``matrix() @ x``, bitwise, without importing scipy (0.2-0.7 s a process, issue #15)."""
        from solver.lp import kernels

        out = np.empty(self.n_rows)
        kernels.spmv_csc(*self._csc(), np.ascontiguousarray(x, dtype=np.float64), out)
        return out

    def rmatvec(self, y: np.ndarray, absolute: bool = False) -> np.ndarray:
        """(n,) A' y of the (m,) row vector y (float64); ``absolute``: |A|' y (coefficients' magnitudes).

        The kernel ``solver.lp.kernels.spmv_csc_t`` (the CSC of A is the CSR of A'): bitwise scipy's
        ``matrix().T @ y`` (``abs(matrix()).T @ y``), without importing scipy."""
        from solver.lp import kernels

        cp, ci, cv = self._csc()
        out = np.empty(self.n_cols)
        kernels.spmv_csc_t(cp, ci, np.abs(cv) if absolute else cv, np.ascontiguousarray(y, dtype=np.float64), out)
        return out

    def _csc(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The CSC arrays with the kernels' types (int64, int32, float64, contiguous; no copy when they are)."""
        return (np.ascontiguousarray(self.a_indptr, dtype=np.int64),
                np.ascontiguousarray(self.a_indices, dtype=np.int32),
                np.ascontiguousarray(self.a_data, dtype=np.float64))

    # ------------------------------------------------------------------ checking
    def check(self) -> None:
        """Verify the class invariants.

        Raises:
            ValidationError: naming the first offending entity (NaN, infinite cost or coefficient,
                lower bound +inf or upper bound -inf, shape mismatch, duplicate name, unsorted/duplicate/zero CSC entries).
        """
        n, m = self.n_cols, self.n_rows
        for nm, arr, size in (("col_names", self.col_names, n), ("col_lower", self.col_lower, n),
                              ("col_upper", self.col_upper, n), ("integrality", self.integrality, n),
                              ("row_names", self.row_names, m), ("row_upper", self.row_upper, m)):
            if arr.shape != (size,):
                raise ValidationError(f"{nm} has shape {arr.shape}, expected ({size},)")
        if self.a_indptr.shape != (n + 1,) or self.a_indptr[0] != 0 or self.a_indptr[-1] != self.nnz:
            raise ValidationError("matrix column pointers do not match the number of columns/nonzeros")
        if self.sense not in (1, -1):
            raise ValidationError(f"sense must be +1 (min) or -1 (max), got {self.sense}")
        # a magnitude >= INF_VALUE means infinity, which a cost, the offset or a coefficient cannot be: the MPS
        # reader refuses them, and so does every other way in (Parquet, deltas)
        if not abs(self.offset) < INF_VALUE:
            raise ValidationError(f"objective offset is not finite: {self.offset} (magnitudes >= 1e30 mean infinity)")
        bad = np.flatnonzero(~(np.abs(self.cost) < INF_VALUE))
        if bad.size:
            raise ValidationError(f"cost is not finite ({self.cost[bad[0]]}; magnitudes >= 1e30 mean infinity)",
                                  entity=str(self.col_names[bad[0]]))
        if tiny_nonzero(self.offset):
            raise ValidationError(f"objective offset {tiny_sentence(self.offset)}")
        for nm, arr, names, wrong in (("cost", self.cost, self.col_names, None),
                                      ("lower bound", self.col_lower, self.col_names, np.inf),
                                      ("upper bound", self.col_upper, self.col_names, -np.inf),
                                      ("row lower bound", self.row_lower, self.row_names, np.inf),
                                      ("row upper bound", self.row_upper, self.row_names, -np.inf)):
            bad = np.flatnonzero(tiny_nonzero(arr))
            if bad.size:
                raise ValidationError(f"{nm} {tiny_sentence(float(arr[bad[0]]))}", entity=str(names[bad[0]]))
            if wrong is None:  # the cost: finite, checked above
                continue
            bad = np.flatnonzero(np.isnan(arr))
            if bad.size:
                raise ValidationError(f"{nm} is NaN", entity=str(names[bad[0]]))
            bad = np.flatnonzero(arr == wrong)  # no finite point; PDHG would compute inf - inf
            if bad.size:
                raise ValidationError(f"{nm} is {wrong:+}", entity=str(names[bad[0]]))
        mag = np.abs(self.a_data)
        bad = np.flatnonzero(~((mag < INF_VALUE) & (mag > SMALL_COEF)))
        if bad.size:
            col = int(np.searchsorted(self.a_indptr, bad[0], side="right") - 1)
            v = self.a_data[bad[0]]
            why = ("is not finite (magnitudes >= 1e30 mean infinity)" if not abs(v) < INF_VALUE else
                   "is zero" if v == 0 else "is at most 1e-9 in magnitude, which HiGHS treats as zero "
                   "(small_matrix_value): leave the entry out or rescale the row or column")
            raise ValidationError(f"coefficient {v} {why}",
                                  entity=f"{self.row_names[self.a_indices[bad[0]]]}/{self.col_names[col]}")
        if self.nnz:
            if self.a_indices.min() < 0 or self.a_indices.max() >= m:
                raise ValidationError("matrix row index out of range")
            d = np.diff(self.a_indices.astype(np.int64))
            starts = np.zeros(self.nnz, dtype=bool)
            starts[self.a_indptr[:-1][np.diff(self.a_indptr) > 0]] = True
            if np.any((d <= 0) & ~starts[1:]):
                raise ValidationError("matrix row indices are not strictly increasing within a column")
        for nm, names in (("variable", self.col_names), ("constraint", self.row_names)):
            if names.size:
                u, c = np.unique(names.astype(str), return_counts=True)
                if (c > 1).any():
                    raise ValidationError(f"duplicate {nm} name", entity=str(u[np.argmax(c > 1)]))

    def equals(self, other: Problem) -> bool:
        """True when both problems have identical names, data and metadata: arrays compared by value
        (``np.array_equal``: -0.0 equals 0.0, dtypes are not compared; a Problem holds no NaN)."""
        if (self.sense, self.offset) != (other.sense, other.offset):
            return False
        for k in ("col_names", "row_names", "cost", "col_lower", "col_upper", "row_lower", "row_upper",
                  "integrality", "a_indptr", "a_indices", "a_data"):
            a, b = getattr(self, k), getattr(other, k)
            if a.shape != b.shape or not np.array_equal(a, b):
                return False
        return True
