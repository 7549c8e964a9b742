"""Shared fixtures: where the public test data lives, and how its absence is handled.

The data directory is ``$COPTER_DATA`` if set, else ``../shared/data`` relative to the repository root
(computed from this file's location, not the working directory). Tests that need it skip with a reason
when it is absent, unless ``COPTER_REQUIRE_DATA=1`` (set by ``.ci/run``) turns the skip into a failure.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def data_dir() -> Path:
    env = os.environ.get("COPTER_DATA")
    return Path(env) if env else (REPO.parent / "shared" / "data")


def require_data(sub: str = "") -> Path:
    """Return ``data_dir()/sub``; skip (or fail under COPTER_REQUIRE_DATA=1) when it is missing."""
    path = data_dir() / sub
    if not path.exists():
        msg = f"shared test data not found at {path} (set COPTER_DATA)"
        if os.environ.get("COPTER_REQUIRE_DATA") == "1":
            pytest.fail(msg + " and COPTER_REQUIRE_DATA=1", pytrace=False)
        pytest.skip(msg)
    return path


def manifest(sub: str) -> list[dict]:
    """Rows of ``data_dir()/sub/MANIFEST.tsv`` as dicts; [] when the data is absent (tests then skip)."""
    path = data_dir() / sub / "MANIFEST.tsv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def pytest_sessionstart(session):
    """Under COPTER_REQUIRE_DATA=1 a missing data folder fails the run at once: tests parametrized from
    a manifest would otherwise collect nothing and silently pass."""
    if os.environ.get("COPTER_REQUIRE_DATA") == "1" and not (data_dir() / "mps" / "MANIFEST.tsv").exists():
        pytest.exit(f"COPTER_REQUIRE_DATA=1 but the shared test data is missing at {data_dir()}", returncode=1)


@pytest.fixture
def shared_data() -> Path:
    """The shared data directory (skips/fails when absent, see module doc)."""
    return require_data()


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch):
    """No test touches ./copter-state or a user's $COPTER_STATE."""
    monkeypatch.delenv("COPTER_STATE", raising=False)
    monkeypatch.chdir(tmp_path)
