"""solver.installed: versions from dist-info folder names, as importlib.metadata reads them (issue #15)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

from solver.installed import folder_version, installed_version

REPO = Path(__file__).resolve().parents[1]
DEPENDENCIES = ("copter", "numba", "llvmlite", "numpy", "highspy", "pyarrow", "typer", "rich", "filelock", "scipy")


@pytest.mark.parametrize("name", DEPENDENCIES)
def test_installed_version_agrees_with_importlib_metadata(name):
    assert installed_version(name) == importlib.metadata.version(name)


def _dist(folder: Path, stem: str) -> None:
    (folder / f"{stem}.dist-info").mkdir(parents=True)


def test_folder_version_normalises_names_and_follows_path_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _dist(a, "my_dist-2.0")
    _dist(b, "my_dist-1.0")
    _dist(a, "my_dist_extra-9.0")  # another distribution whose name starts like it
    assert folder_version("My.Dist", [str(a), str(b)]) == "2.0"
    assert folder_version("my-dist", [str(b), str(a)]) == "1.0"
    assert folder_version("my-dist-extra", [str(a)]) == "9.0"
    assert folder_version("my", [str(a), str(b)]) is None
    assert folder_version("my_dist", [str(tmp_path / "missing"), str(b)]) == "1.0"


def test_two_versions_in_one_folder_are_left_to_importlib_metadata(tmp_path):
    _dist(tmp_path, "twice-1.0")
    _dist(tmp_path, "twice-1.1")
    assert folder_version("twice", [str(tmp_path)]) is None


def test_a_missing_distribution_raises_package_not_found():
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        installed_version("no-such-distribution-copter-test")


def test_the_prepare_check_does_not_import_importlib_metadata():
    """The stamp check a ``copter step`` runs records numba's and llvmlite's versions; reading them through
    ``importlib.metadata`` cost 35 ms of the step process's start-up."""
    code = ("import sys, json; from solver import prepare; prepare.is_prepared(); key = prepare._environment_key(); "
            "print(json.dumps(['importlib.metadata' in sys.modules, key['numba'], key['llvmlite']]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    imported, numba_version, llvmlite_version = json.loads(out.stdout)
    assert not imported
    assert [numba_version, llvmlite_version] == [importlib.metadata.version("numba"),
                                                 importlib.metadata.version("llvmlite")]
