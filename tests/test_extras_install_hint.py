"""The install hint of an optional extra names the extra's own requirements, never ``copter[...]``: copter is
installed from a checkout, and ``pip install 'copter[plot]'`` in an environment without it would ask the package
index for an unrelated project of that name (helper-166, session 35)."""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from solver import extras

REPO = Path(__file__).resolve().parents[1]


def _pyproject_extras() -> dict[str, list[str]]:
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["optional-dependencies"]


@pytest.mark.parametrize("extra, package", [("plot", "matplotlib"), ("ray", "ray")])
def test_the_hint_installs_the_extras_requirements(extra, package):
    hint = extras.install_hint(extra, package)
    assert "copter[" not in hint, hint
    assert hint.startswith(f"pip install '{package}"), hint
    assert f"pip install '.[{extra}]'" in hint, hint
    try:
        metadata.requires(extras.DIST)
    except metadata.PackageNotFoundError:
        pytest.skip("copter is not installed here: no metadata to read the extra from")
    assert extras.extra_requirements(extra) == [r.replace(" ", "") for r in _pyproject_extras()[extra]]


def test_requirement_markers_are_parsed(monkeypatch):
    reqs = ["numpy>=1.26", 'matplotlib >= 3.8 ; extra == "plot"', "ray>=2.60; extra == 'ray'",
            'pytest>=8; extra == "test"', 'a-b[c]>=1; extra == "plot"']
    monkeypatch.setattr(metadata, "requires", lambda dist: reqs)
    assert extras.extra_requirements("plot") == ["matplotlib>=3.8", "a-b[c]>=1"]
    assert extras.extra_requirements("ray") == ["ray>=2.60"]
    assert extras.extra_requirements("none") == []
    assert extras.install_hint("plot", "matplotlib").startswith("pip install 'matplotlib>=3.8' 'a-b[c]>=1' (")


def test_without_metadata_the_hint_names_the_package(monkeypatch):
    def missing(dist):
        raise metadata.PackageNotFoundError(dist)

    monkeypatch.setattr(metadata, "requires", missing)
    assert extras.extra_requirements("plot") == []
    assert extras.install_hint("plot", "matplotlib") == (
        "pip install 'matplotlib' (copter's optional extra \"plot\"; from a checkout: pip install '.[plot]')")


def test_command_and_note_apart(monkeypatch):
    monkeypatch.setattr(metadata, "requires", lambda dist: ['matplotlib>=3.8; extra == "plot"'])
    assert extras.install_command("plot", "matplotlib") == "pip install 'matplotlib>=3.8'"
    assert extras.install_note("plot") == "copter's optional extra \"plot\"; from a checkout: pip install '.[plot]'"
    assert extras.install_hint("plot", "matplotlib") == (
        "pip install 'matplotlib>=3.8' (copter's optional extra \"plot\"; from a checkout: pip install '.[plot]')")


def test_help_text_names_the_extra_and_the_checkout_install():
    assert extras.needs("ray", "Ray") == "needs Ray, the optional extra ray: pip install '.[ray]' from a checkout"
