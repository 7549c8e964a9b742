"""The example generators' ``--help`` states every default (helper-241, session 60: ``--scale``, ``--form``,
``--paths`` and ``--objective`` did not, so a user ran the generator bare to learn them)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import options_without_stated_default

REPO = Path(__file__).resolve().parents[1]


def test_every_example_option_with_a_default_states_it_in_its_help():
    assert options_without_stated_default(sorted((REPO / "examples").rglob("*.py"))) == []
