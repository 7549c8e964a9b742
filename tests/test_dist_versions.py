"""copter_cli.dist_versions gives importlib.metadata's versions (issue #15: ``copter version`` without
importing importlib.metadata), and its error for a package that is not installed."""

from __future__ import annotations

import importlib.metadata as md
import sys

import pytest

from copter_cli import dist_versions
from copter_cli.dist_versions import installed_version


@pytest.mark.parametrize("name", ["copter", "highspy", "numba", "numpy", "pyarrow", "typer", "rich", "llvmlite",
                                  "filelock", "pytest", "PyArrow", "Typing-Extensions", "typing_extensions"])
def test_same_version_as_importlib_metadata(name):
    try:
        want = md.version(name)
    except md.PackageNotFoundError:
        pytest.skip(f"{name} not installed")
    assert installed_version(name) == want


def test_read_from_the_dist_info_folder_not_from_importlib(monkeypatch):
    monkeypatch.setattr(md, "version", lambda name: pytest.fail("asked importlib.metadata"))
    assert dist_versions._from_path("numpy") is not None
    assert installed_version("numpy") == dist_versions._from_path("numpy")


def test_a_package_not_installed_raises_as_importlib_metadata_does():
    with pytest.raises(md.PackageNotFoundError):
        installed_version("no-such-package-copter-test")


def test_egg_info_and_ambiguous_folders(tmp_path, monkeypatch):
    (tmp_path / "fakepkg-1.0.egg-info").mkdir()  # no PKG-INFO: importlib.metadata decides
    (tmp_path / "otherpkg-1.0.dist-info").mkdir()
    (tmp_path / "otherpkg-2.0.dist-info").mkdir()
    (tmp_path / "thirdpkg-3.1.dist-info").mkdir()
    (tmp_path / "thirdpkg-3.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdpkg\n"
                                                                  "Version: 3.1.post2\n\nVersion: 9\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert dist_versions._from_path("fakepkg") is None
    assert dist_versions._from_path("otherpkg") is None
    assert installed_version("thirdpkg") == "3.1.post2" == md.version("thirdpkg")
    (tmp_path / "eggpkg.egg-info").mkdir()  # setuptools' develop layout: no version in the name
    (tmp_path / "eggpkg.egg-info" / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: eggpkg\nVersion: 0.7\n")
    assert dist_versions._from_path("eggpkg") == "0.7" == md.version("eggpkg")
