"""``highs-warm``'s simplex bases kept in the state directory for ``copter compare``:
``STATE/baselines/highs-warm/round-NNNNNN.parquet``, the :data:`KEEP_BASES` written last kept."""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from formats.checkpoint import StateStore
from formats.generation import Generation
from solver.baselines.highs_warm import StoredBasis
from solver.model.problem import Problem

BASIS_DIR = Path("baselines") / "highs-warm"
KEEP_BASES = 3


def basis_path(root: Path, round_: int) -> Path:
    """Where the basis of ``round_`` is kept under the state directory ``root``."""
    return root / BASIS_DIR / f"round-{round_:06d}.parquet"


def save_basis(root: Path, basis: StoredBasis) -> None:
    """Write ``basis`` atomically (temp file + os.replace) and keep only the :data:`KEEP_BASES` written last.

    Raises:
        OSError: the folder or file cannot be written.
    """
    folder = root / BASIS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    final = basis_path(root, basis.round)
    tmp = folder / f".tmp-{uuid.uuid4().hex}.parquet"
    pq.write_table(basis.to_table(), tmp)
    os.replace(tmp, final)
    for old in sorted(folder.glob("round-*.parquet"), key=_written)[:-KEEP_BASES]:
        old.unlink(missing_ok=True)


def _written(path: Path) -> tuple[int, str]:
    """Sort key of the prune: when the basis was written, then its name. By write time, not round number: after
    a rollback the abandoned branch's higher rounds would otherwise outrank, and delete, the basis just written
    for the live round (so every compare there solved the round below cold again)."""
    try:
        return path.stat().st_mtime_ns, path.name
    except OSError:
        return 0, path.name


def load_basis(root: Path, round_: int) -> StoredBasis | None:
    """The stored basis of ``round_``, or None when absent or unreadable."""
    try:
        return StoredBasis.from_table(pq.read_table(basis_path(root, round_)))
    except (OSError, pa.ArrowException, KeyError, ValueError):
        return None


class StateBases:
    """The ``solver.baselines.registry.BasisKeeper`` of a state directory: bases in its ``baselines/``
    folder, earlier problems from its kept generations.

    The bases outlive a rollback (nothing but compare touches them), so each one is stamped with the ``id`` of
    the generation it was computed on, and :meth:`load` returns only the basis of the live branch's round: the
    current generation's own ``id``, or its ``parent_id`` for the round below (known even when that round was
    pruned). A basis of another branch (a round a rollback abandoned, then made again from another delta), or
    one without a stamp, is not used: highs-warm then solves the live round cold first, as with none."""

    def __init__(self, store: StateStore, current: Generation | None = None):
        self.store = store
        self.current = current  # the generation compared (None: bases are not checked against a branch)
        self.warnings: list[str] = []  # bases that could not be kept (compare adds them to its warnings)

    def _generation_id(self, round_: int) -> str | None:
        """The ``id`` of the live branch's generation of ``round_``, None when unknown (no current generation,
        a round other than the current one and the one below, or a state written before generations had ids)."""
        cur = self.current
        if cur is None:
            return None
        if round_ == cur.round:
            return cur.manifest.get("id")
        if round_ == cur.round - 1:
            return cur.manifest.get("parent_id")
        return None

    def load(self, round_: int) -> StoredBasis | None:
        basis = load_basis(self.store.root, round_)
        expected = self._generation_id(round_)
        if basis is not None and expected is not None and basis.generation_id != expected:
            return None  # another branch's round (or an unstamped basis): not this problem's start
        return basis

    def save(self, basis: StoredBasis) -> None:
        """Keep ``basis`` (:func:`save_basis`); when the state cannot be written (read-only, full), a warning
        instead: the comparison of this round stands, the next one hot-starts from a cold solve."""
        if basis.generation_id is None:
            basis = dataclasses.replace(basis, generation_id=self._generation_id(basis.round))
        try:
            save_basis(self.store.root, basis)
        except OSError as err:
            self.warnings.append(f"highs-warm's basis of round {basis.round} not kept in "
                                 f"{self.store.root / BASIS_DIR}: {err.strerror or err}")

    def problem(self, round_: int) -> Problem | None:
        if round_ not in self.store.generations():
            return None
        if self.current is not None and round_ not in self.store.lineage(self.current.round):
            return None  # kept on disk, but of another branch
        return self.store.load(round_, with_state=False).problem
