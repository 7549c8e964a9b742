"""The differential problem representation: apply a :class:`~solver.model.delta.Delta` to a Problem by name.

Files (one section each; this package re-exports their public API):

* ``kinds.py``   the ONE table of delta kinds (name, phase, required/allowed columns, the Problem field
  and default of each upsert column) and the table schema; everything below reads it.
* ``parse.py``   normalise a delta table and check the per-row rules (kinds, fields, NaN, infinite
  cost/coefficient, empty names, sense/offset).
* ``names.py``   name -> position lookup against a problem (cached dict or Arrow ``index_in``).
* ``apply.py``   :func:`apply_delta` and :class:`ApplyInfo`, one step per phase.
* ``intent.py``  rows a delta's writer cannot have meant (a new entity no ``coef`` row names, an upsert
  that sets nothing), refused with the closest names; the warning about added names with spaces.
* ``matrix.py``  the CSC side: entry lookup, the one-pass merge, and their numpy twins.
* ``kernels.py`` the numba kernels behind ``matrix.py`` (imported lazily).
* ``map.py``     :func:`map_state`: the previous iterate onto the new index space.
* ``diff.py``    ``diff``: the delta between two problems. Import it as ``from solver.differential.diff
  import diff``: it is not re-exported here, because a function named like its own submodule is shadowed
  by the submodule once anything has imported ``solver.differential.diff`` (a worker that has run one
  ``copter diff`` had ``from solver.differential import diff`` return the module).


Semantics (docs/DESIGN.md "Delta and problem files", the single reference for deltas and problem files):

* Phases apply in a fixed order regardless of row order: ``drop_con``, ``drop_var``, ``var``, ``con``,
  ``coef``. Dropping an entity drops its coefficients; dropping and re-adding a name in one delta
  creates a *new* entity (appended, no coefficients) and ``coef`` rows naming it apply to it.
* ``var``/``con`` rows are upserts: a null field keeps the current value of an existing entity and takes
  the default of a new one (variable ``[0, +inf)``, cost 0, continuous; constraint ``(-inf, +inf)``).
* Surviving entities keep their relative order; new ones are appended in file-row order.
* ``coef`` sets ``A[con, var] = value``; value 0 removes the entry (a no-op if there is none).
* Bounds of magnitude >= 1e20 mean no bound (+-inf; ``solver.model.problem.INF_BOUND``, HiGHS's
  ``infinite_bound``). The whole delta is rejected (``ValidationError`` naming the
  0-based table rows and the entity; the input problem is never modified) for: an unknown kind; a
  missing required field or a field that kind must leave null; ``nan`` anywhere; an infinite (>= 1e30)
  cost or coefficient; a nonzero coefficient of magnitude <= 1e-9 (HiGHS's zero, ``small_matrix_value``:
  PDHG's scaling cannot equilibrate it); an empty name; the same key twice in one phase; an unknown name in ``coef`` or
  ``drop_*``; a ``coef`` naming an entity that is dropped and not re-added; a lower bound of +inf, an
  upper bound of -inf, or ``lower > upper`` after the upsert (only upserted entities are checked: an
  empty box read from MPS is an infeasible model, not an error, until a delta touches it; HiGHS's MPS
  reader itself refuses a lower bound >= 1e20 or an upper bound <= -1e20); a non-finite objective
  offset. A *delta* (``format="delta"``) applied to a problem that has entities is also refused for: a new
  entity that no ``coef`` row names (it would be added empty: a misspelled name; a ``coef`` of value 0
  states an empty one on purpose; exempt when the other side of the result is empty) and a ``var``/``con``
  row on an existing entity that sets no field (``intent.py``; ``apply_delta(..., strict=False)`` skips
  both, as ``diff`` does for its intermediate step).

Cost. Inside the delta, names become integer ids with one vectorised hash (``dictionary_encode``; a
dictionary-encoded Parquet column is hashed through its dictionary only, and a repeat-free
dictionary's indices are the ids, zero-copy), so duplicate checks and coef -> new-entity resolution
are integer operations. Names not created by the delta are looked up once per distinct name in the
problem's cached name -> position dict (``Problem.col_index``): O(k) for a delta of k rows once the
dict exists. Measured at 1M names (2 busy cores): building the dict 0.77 s once per process, then
6 ms per 10k lookups; ``pyarrow.compute.index_in`` costs 0.3-0.4 s *per call* (it hashes the value
set each time) plus 0.7 s to turn an object name array into Arrow, so the cached dict wins for
round-to-round deltas in one process. A problem loaded from a checkpoint carries the generation's
memory-mapped Arrow names (no conversion): a step process resolves against them with ``index_in``
and builds no dict (Sia 10,240 GPUs, 259k names: 0.04 s instead of 0.13 s). Cost/bound-only deltas
touch no matrix array (the new Problem shares
``a_indptr``/``a_indices``/``a_data`` with the old one); value-only coefficient changes copy ``a_data``
once and share the rest; structural changes (drops, inserted/removed entries) rebuild the CSC arrays
in one vectorised linear pass (mask, remap, merge), timed separately in :class:`ApplyInfo`. Entry
lookup for coefficient changes is a per-column binary search (numba, ``kernels.py``), so
it does not scan the matrix either.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

# public name -> submodule. Loaded on first use (PEP 562): ``solver.model.delta`` imports ``kinds`` at
# its own import, and ``diff`` imports ``solver.model.delta``, so eager imports here would be a cycle.
_EXPORTS = {
    "ApplyInfo": "apply", "apply_delta": "apply", "validate_delta": "apply",
    "COL_FIELDS": "apply", "ROW_FIELDS": "apply", "MATRIX_FIELDS": "apply",
    "map_state": "map",
    "attach_arrow_names": "names",
    "find_entries": "matrix", "find_entries_numpy": "matrix", "merge_csc": "matrix",
    "merge_csc_numpy": "matrix",
    "KIND_TABLE": "kinds", "KINDS": "kinds", "SCHEMA": "kinds", "Kind": "kinds", "Target": "kinds",
}
__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # for type checkers and IDEs only
    from solver.differential.apply import (  # noqa: F401
        COL_FIELDS,
        MATRIX_FIELDS,
        ROW_FIELDS,
        ApplyInfo,
        apply_delta,
        validate_delta,
    )
    from solver.differential.kinds import KIND_TABLE, KINDS, SCHEMA, Kind, Target  # noqa: F401
    from solver.differential.map import map_state  # noqa: F401
    from solver.differential.matrix import (  # noqa: F401
        find_entries,
        find_entries_numpy,
        merge_csc,
        merge_csc_numpy,
    )
    from solver.differential.names import attach_arrow_names  # noqa: F401


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
