"""No module of the CLI (``copter_cli``), of the LP engine (``solver/lp``) or of partitioned rounds
(``solver/partition``) imports another module's private name (``from solver.lp.pdhg import _PROGRESS``): what a
module shares it names publicly and documents (``solver.lp.pdhg.current_progress_callback``). Structural: the
import statements are read, nothing is run."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("copter_cli", "solver/lp", "solver/partition")  #: folders whose modules are checked
OWN = ("copter_cli", "solver", "formats")  #: packages whose private names count


def _private_imports(path: Path, root: Path = ROOT) -> list[str]:
    """``module.name`` for every private name ``path`` (below ``root``) imports from another of copter's
    modules."""
    module = ".".join(path.relative_to(root).with_suffix("").parts)
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module != module \
                and node.module.split(".")[0] in OWN:
            found += [f"{node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_") and not a.name.startswith("__")]
    return found


def test_no_module_imports_another_modules_private_name():
    files = [p for folder in CHECKED for p in sorted((ROOT / folder).rglob("*.py"))]
    assert len(files) > 20
    found = {str(p.relative_to(ROOT)): names for p in files if (names := _private_imports(p))}
    assert found == {}, found


def test_the_check_sees_a_private_import(tmp_path):
    """The reading above finds such an import (the assertion can fail)."""
    pkg = tmp_path / "copter_cli"
    pkg.mkdir()
    (pkg / "x.py").write_text("from solver.lp.pdhg import _PROGRESS, progress_callback\n")
    assert _private_imports(pkg / "x.py", tmp_path) == ["solver.lp.pdhg._PROGRESS"]
