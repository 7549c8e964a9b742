"""An MPS ``-0`` (a bound ``LO bnd y -0``, ``FX``, a cost, an RHS) is read as 0.0, as a Parquet model or delta is.
The state kept -0.0, its export was read back as 0.0, so ``diff`` took a fresh export for a file "edited since"
(its problem digest differed) and recorded no base round, which also switched off the wrong-base check
(helper-227)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from formats.mps import read_mps
from tests.helpers import run_main

BASE = "NAME t\nROWS\n N obj\n G g1\nCOLUMNS\n x obj 1 g1 1\n y obj {cost} g1 1\nRHS\n rhs g1 {rhs}\nBOUNDS\n{bound}ENDATA\n"


@pytest.mark.parametrize(("cost", "rhs", "bound"), [
    ("2", "1", " LO bnd y -0\n"), ("2", "1", " FX bnd y -0\n"), ("-0", "1", ""), ("2", "-0.0", " LI bnd x -0\n")])
def test_negative_zeros_are_read_as_zero_and_an_export_is_its_own_base(tmp_path, capsys, cost, rhs, bound):
    path = tmp_path / "a.mps"
    path.write_text(BASE.format(cost=cost, rhs=rhs, bound=bound))
    p = read_mps(path)
    for f in ("cost", "col_lower", "col_upper", "row_lower", "row_upper"):
        v = getattr(p, f)
        assert not np.signbit(v[v == 0.0]).any(), f
    st, e = tmp_path / "st", tmp_path / "e.parquet"
    assert run_main(capsys, "init", path, "--state", st)[0] == 0
    assert run_main(capsys, "export", "-o", e, "--state", st)[0] == 0
    code, out, err = run_main(capsys, "diff", e, e, "-o", tmp_path / "d.parquet", "--json")
    assert code == 0 and json.loads(out)["base_round"] == 0, (out, err)
    assert "edited since" not in err
