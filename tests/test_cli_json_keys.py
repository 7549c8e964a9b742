"""Every command's ``--json`` output names the same thing the same way: problem sizes are
``n_rows``/``n_cols``/``nnz``, a file written is ``output``; no command uses the old ``rows``/``cols``/
``nonzeros``/``path`` spellings."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from tests.helpers import small_lp

runner = CliRunner()
SIZE_KEYS = {"n_rows", "n_cols", "nnz"}
OLD_KEYS = {"rows", "cols", "nonzeros", "integer_cols", "path"}


def _json(*args) -> dict:
    res = runner.invoke(app, [*map(str, args), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_every_json_output_with_a_problem_size_uses_n_rows_n_cols_nnz(tmp_path):
    p = small_lp()
    write_problem(p, tmp_path / "a.parquet")
    write_problem(small_lp(seed=1), tmp_path / "b.parquet")
    st = tmp_path / "st"
    outs = {
        "convert": _json("convert", tmp_path / "a.parquet", tmp_path / "a.mps"),
        "solve": _json("solve", tmp_path / "a.parquet"),
        "init": _json("init", tmp_path / "a.parquet", "--state", st),
        "show": _json("show", "--state", st),
        "export": _json("export", "--state", st, "-o", tmp_path / "now.parquet"),
        "compare": _json("compare", "--baseline", "highs", "--state", st),
    }
    for name, out in outs.items():
        assert SIZE_KEYS <= set(out), name
        assert (out["n_rows"], out["n_cols"], out["nnz"]) == (p.n_rows, p.n_cols, p.nnz), name
        assert not OLD_KEYS & set(out), (name, OLD_KEYS & set(out))
    assert outs["convert"]["output"] == str(tmp_path / "a.mps")
    assert outs["export"]["output"] == str(tmp_path / "now.parquet")


def test_diff_json_counts_delta_rows_and_names_its_output(tmp_path):
    write_problem(small_lp(), tmp_path / "a.parquet")
    write_problem(small_lp(seed=1), tmp_path / "b.parquet")
    out = _json("diff", tmp_path / "a.parquet", tmp_path / "b.parquet", "-o", tmp_path / "d.parquet")
    assert out["delta_rows"] == sum(out["counts"].values()) > 0
    assert out["output"] == str(tmp_path / "d.parquet") and not OLD_KEYS & set(out)
    assert set(out["seconds"]) == {"read", "diff", "write"}


def test_solve_json_seconds_account_for_writing_the_output(tmp_path):
    write_problem(small_lp(), tmp_path / "a.parquet")
    sec = _json("solve", tmp_path / "a.parquet", "-o", tmp_path / "sol.parquet")["seconds"]
    assert sec["write"] > 0
    assert sec["load"] + sec["solve"] + sec["write"] <= sec["total"] + 1e-6


def test_diff_works_after_its_submodule_was_imported(tmp_path):
    """A worker that ran one ``copter diff`` (or preloaded it) has ``solver.differential.diff`` imported:
    the package attribute ``diff`` is then the submodule, and importing the function from the package
    gave "'module' object is not callable" (exit 1) on every later ``copter diff``."""
    import importlib

    importlib.import_module("solver.differential.diff")
    write_problem(small_lp(), tmp_path / "a.parquet")
    write_problem(small_lp(seed=1), tmp_path / "b.parquet")
    out = _json("diff", tmp_path / "a.parquet", tmp_path / "b.parquet", "-o", tmp_path / "d.parquet")
    assert out["delta_rows"] > 0
