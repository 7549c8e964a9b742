"""The example generators' ``--help`` states every default (helper-241, session 60: ``--scale``, ``--form``,
``--paths`` and ``--objective`` did not, so a user ran the generator bare to learn them)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_every_example_option_with_a_default_states_it_in_its_help():
    missing = []
    for path in sorted((REPO / "examples").rglob("*.py")):
        src = path.read_text()
        for node in ast.walk(ast.parse(src)):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument"):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            d, act = kw.get("default"), kw.get("action")
            if d is None or (isinstance(d, ast.Constant) and d.value in (None, False)):
                continue
            if isinstance(act, ast.Constant) and act.value in ("store_true", "store_false"):
                continue
            help_src = ast.get_source_segment(src, kw["help"]) if "help" in kw else ""
            if "default" not in help_src.lower():
                missing.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert missing == []
