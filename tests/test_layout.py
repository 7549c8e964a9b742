"""docs/DESIGN.md stays true: every entry of the layout tree at its top exists, every Python package
folder under copter_cli/, formats/ and solver/ is listed there, and every section a file cites as
``docs/DESIGN.md "Section"`` exists; and no test module imports another test module or conftest."""

from __future__ import annotations

import ast
import re

from tests.helpers import REPO

ROOTS = ("copter_cli", "formats", "solver")
DESIGN = REPO / "docs/DESIGN.md"
#: where citations of the design document are looked for
CITING = ("copter_cli", "formats", "solver", "tests", "bench", "examples", "README.md")


def layout_entries(text: str) -> list[str]:
    """Paths of the first fenced block after the ``## Layout`` heading: one entry per line, nesting by
    indentation (two spaces a level), a trailing ``/`` for a folder, a description after the name."""
    section = text.split("\n## Layout\n", 1)[1]
    block = re.search(r"```[a-z]*\n(.*?)\n```", section, re.S)
    assert block, "docs/DESIGN.md: no fenced tree under '## Layout'"
    stack: list[str] = []
    paths = []
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        assert indent % 2 == 0, f"odd indentation in the layout tree: {line!r}"
        depth = indent // 2
        assert depth <= len(stack), f"the layout tree skips a level at {line!r}"
        name = line.split()[0]
        stack[depth:] = [name.rstrip("/")] if name.endswith("/") else []
        paths.append("/".join(stack[:depth] + [name]))
    return paths


def test_layout_tree_parses_nesting_and_descriptions():
    text = "x\n## Layout\n\n```text\na/   the a\n  b/  sub\n  f.py  file\nc.toml  top\n```\n"
    assert layout_entries(text) == ["a/", "a/b/", "a/f.py", "c.toml"]


def test_every_entry_of_the_layout_tree_exists():
    entries = layout_entries(DESIGN.read_text())
    missing = [e for e in entries if not (REPO / e).exists() or e.endswith("/") != (REPO / e).is_dir()]
    assert not missing, f"docs/DESIGN.md lists paths that do not exist: {missing}"


def test_every_package_folder_is_in_the_layout_tree():
    listed = {e.rstrip("/") for e in layout_entries(DESIGN.read_text()) if e.endswith("/")}
    packages = {
        str(d.relative_to(REPO))
        for root in ROOTS
        for d in [REPO / root, *(REPO / root).rglob("*")]
        if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py"))
    }
    assert packages, "no package folders found"
    unlisted = sorted(packages - listed)
    assert not unlisted, f"package folders missing from the docs/DESIGN.md layout tree: {unlisted}"


def cited_sections(text: str) -> list[str]:
    """Section names cited as ``docs/DESIGN.md "Section"`` in ``text``."""
    return re.findall(r'docs/DESIGN\.md "([^"]+)"', text)


def test_every_cited_design_section_exists():
    headings = set(re.findall(r"^## (.+)$", DESIGN.read_text(), re.M))
    files = [p for c in CITING for p in ([REPO / c] if (REPO / c).is_file() else (REPO / c).rglob("*"))
             if p.suffix in (".py", ".md") and "__pycache__" not in p.parts and p.name != "test_layout.py"]
    cites = {(str(p.relative_to(REPO)), s) for p in files for s in cited_sections(p.read_text())}
    assert len(cites) >= 10, "the citations of docs/DESIGN.md were not found"
    missing = sorted((f, s) for f, s in cites if s not in headings)
    assert not missing, f"citations of docs/DESIGN.md sections that do not exist: {missing}"
    assert cited_sections('see docs/DESIGN.md "Checkpoint" and docs/DESIGN.md "LP core"') == ["Checkpoint", "LP core"]


def test_no_test_module_imports_another_test_module_or_conftest():
    """Shared helpers live in tests/helpers.py and fixtures in conftest.py: importing a test module from
    another imports it twice under pytest (as ``test_x`` and ``tests.test_x``) and ties their fates."""
    bad = []
    for path in sorted((REPO / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                last = name.removeprefix("tests.")
                if last == "conftest" or last.startswith("test_"):
                    bad.append(f"{path.name}:{node.lineno} imports {name}")
    assert not bad, f"import helpers from tests.helpers instead: {bad}"
