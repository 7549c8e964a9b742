"""``highs-warm``'s simplex bases kept in the state directory for ``copter compare``:
``STATE/baselines/highs-warm/round-NNNNNN.parquet``, the newest :data:`KEEP_BASES` kept."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from formats.checkpoint import StateStore
from solver.baselines.highs_warm import StoredBasis
from solver.model.problem import Problem

BASIS_DIR = Path("baselines") / "highs-warm"
KEEP_BASES = 3


def basis_path(root: Path, round_: int) -> Path:
    """Where the basis of ``round_`` is kept under the state directory ``root``."""
    return root / BASIS_DIR / f"round-{round_:06d}.parquet"


def save_basis(root: Path, basis: StoredBasis) -> None:
    """Write ``basis`` atomically (temp file + os.replace) and keep only the newest :data:`KEEP_BASES`.

    Raises:
        OSError: the folder or file cannot be written.
    """
    folder = root / BASIS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    final = basis_path(root, basis.round)
    tmp = folder / f".tmp-{uuid.uuid4().hex}.parquet"
    pq.write_table(basis.to_table(), tmp)
    os.replace(tmp, final)
    for old in sorted(folder.glob("round-*.parquet"))[:-KEEP_BASES]:
        old.unlink(missing_ok=True)


def load_basis(root: Path, round_: int) -> StoredBasis | None:
    """The stored basis of ``round_``, or None when absent or unreadable."""
    try:
        return StoredBasis.from_table(pq.read_table(basis_path(root, round_)))
    except (OSError, pa.ArrowException, KeyError, ValueError):
        return None


class StateBases:
    """The ``solver.baselines.registry.BasisKeeper`` of a state directory: bases in its ``baselines/``
    folder, earlier problems from its kept generations."""

    def __init__(self, store: StateStore):
        self.store = store
        self.warnings: list[str] = []  # bases that could not be kept (compare adds them to its warnings)

    def load(self, round_: int) -> StoredBasis | None:
        return load_basis(self.store.root, round_)

    def save(self, basis: StoredBasis) -> None:
        """Keep ``basis`` (:func:`save_basis`); when the state cannot be written (read-only, full), a warning
        instead: the comparison of this round stands, the next one hot-starts from a cold solve."""
        try:
            save_basis(self.store.root, basis)
        except OSError as err:
            self.warnings.append(f"highs-warm's basis of round {basis.round} not kept in "
                                 f"{self.store.root / BASIS_DIR}: {err.strerror or err}")

    def problem(self, round_: int) -> Problem | None:
        if round_ not in self.store.generations():
            return None
        return self.store.load(round_, with_state=False).problem
