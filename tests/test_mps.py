"""MPS reading/writing: agreement with highspy on the shared instances, round trips, conventions, rejects."""

from __future__ import annotations

import gzip
import math

import highspy
import numpy as np
import pytest
import scipy.sparse as sp

from formats.io import read_problem, write_problem
from formats.mps import read_mps, write_mps
from solver.highs_bridge import new_highs, to_highs_lp
from solver.model.errors import FormatError, InputError, UnsupportedError, ValidationError
from tests.helpers import manifest, require_data

ROWS = [r for r in manifest("mps") if r["kind"] in ("LP", "MILP")]
READABLE = [r for r in ROWS if "BND_SC" not in r["features"]]
IDS = [r["file"] for r in READABLE]


def _highs_read(path):
    h = new_highs()
    assert h.readModel(str(path)) in (highspy.HighsStatus.kOk, highspy.HighsStatus.kWarning)
    h.ensureColwise()
    return h.getLp()


@pytest.mark.data
@pytest.mark.parametrize("row", READABLE, ids=IDS)
def test_every_shared_instance_reads_exactly_as_highspy_reports_it(row):
    path = require_data("mps") / row["file"]
    p = read_mps(path)
    lp = _highs_read(path)
    assert (p.n_rows, p.n_cols) == (int(row["rows"]), int(row["cols"])) == (lp.num_row_, lp.num_col_)
    assert p.col_names.tolist() == list(lp.col_names_) and p.row_names.tolist() == list(lp.row_names_)
    assert np.array_equal(p.cost, np.asarray(lp.col_cost_))
    for mine, theirs in ((p.col_lower, lp.col_lower_), (p.col_upper, lp.col_upper_),
                         (p.row_lower, lp.row_lower_), (p.row_upper, lp.row_upper_)):
        theirs = np.asarray(theirs, dtype=np.float64).copy()
        theirs[theirs >= 1e30], theirs[theirs <= -1e30] = np.inf, -np.inf
        assert np.array_equal(mine, theirs)
    integ = np.asarray([int(t) for t in lp.integrality_], dtype=int) if len(lp.integrality_) else np.zeros(p.n_cols)
    assert np.array_equal(p.integrality, integ == 1)
    assert int(p.integrality.sum()) == int(row["n_int"] or 0)
    A = sp.csc_array((np.asarray(lp.a_matrix_.value_), np.asarray(lp.a_matrix_.index_),
                      np.asarray(lp.a_matrix_.start_)), shape=(lp.num_row_, lp.num_col_))
    assert (abs(A - p.matrix()) > 0).nnz == 0 and p.nnz == A.nnz
    assert p.offset == lp.offset_ and p.sense == (-1 if lp.sense_ == highspy.ObjSense.kMaximize else 1)


def _solve(problem, time_limit=30.0):
    h = new_highs(threads=1, time_limit_seconds=time_limit)
    h.passModel(to_highs_lp(problem, with_names=False))
    h.run()
    return h.getModelStatus(), h.getInfo().objective_function_value


@pytest.mark.data
@pytest.mark.parametrize("row", READABLE, ids=IDS)
def test_mps_to_parquet_to_mps_round_trip_keeps_the_highs_optimum(row, tmp_path):
    p = read_mps(require_data("mps") / row["file"])
    write_problem(p, tmp_path / "p.parquet")
    q = read_problem(tmp_path / "p.parquet")
    assert q.equals(p)  # Parquet is exact
    if any(" " in str(n) for n in np.concatenate([p.col_names, p.row_names])):  # forplan: fixed format
        with pytest.raises(ValidationError, match="MPS cannot hold"):  # free format would rename them
            write_problem(q, tmp_path / "p.mps.gz")
        r = q
    else:
        write_problem(q, tmp_path / "p.mps.gz")
        r = read_problem(tmp_path / "p.mps.gz")
    status, obj = _solve(r)
    expected = row["expected_status"]
    if expected == "optimal":
        assert status == highspy.HighsModelStatus.kOptimal
        ref = float(row["highs_objective"])
        assert math.isclose(obj, ref, rel_tol=1e-9, abs_tol=1e-9), (obj, ref)
    elif expected == "infeasible":
        assert status == highspy.HighsModelStatus.kInfeasible
    else:
        assert status in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible)


@pytest.mark.data
def test_semi_continuous_instance_is_rejected_clearly():
    with pytest.raises(UnsupportedError, match="semi-continuous") as e:
        read_mps(require_data("mps") / "semi-continuous.mps")
    assert e.value.entity == "x3" and "semi-continuous.mps" in str(e.value)


@pytest.mark.data
def test_objective_row_rhs_is_the_negated_constant():
    p = read_mps(require_data("mps") / "e226.mps")  # RHS on the objective row ...000 is -7.113
    assert p.offset == 7.113


# ------------------------------------------------------------------------------------------ handmade files

BASE = """NAME t
ROWS
 N obj
 L c1
COLUMNS
    x obj {cost} c1 1
    y obj 1 c1 {coef}
RHS
    rhs c1 4
{extra}ENDATA
"""


def _write(tmp_path, text, name="t.mps"):
    path = tmp_path / name
    path.write_text(text)
    return path


def _base(cost="1", coef="1", extra=""):
    return BASE.format(cost=cost, coef=coef, extra=extra)


def test_nan_cost_is_a_validation_error_naming_file_line_and_column(tmp_path):
    with pytest.raises(ValidationError, match="NaN") as e:
        read_mps(_write(tmp_path, _base(cost="nan")))
    assert e.value.line == 6 and e.value.entity == "x" and e.value.file.endswith("t.mps")


def test_infinite_cost_or_coefficient_is_rejected(tmp_path):
    with pytest.raises(ValidationError, match="infinite") as e:
        read_mps(_write(tmp_path, _base(cost="inf")))
    assert e.value.entity == "x" and e.value.line == 6
    with pytest.raises(InputError, match="1e\\+31"):  # HiGHS itself refuses |coefficient| >= 1e15
        read_mps(_write(tmp_path, _base(coef="1e31")))


@pytest.mark.parametrize("section,word", [("QUADOBJ\n    x x 1\n", "quadratic"),
                                          ("SOS\n S1 SOS s1 1\n    s1 x 1\n", "SOS"),
                                          ("INDICATORS\n IF c1 x 1\n", "indicator"),
                                          ("QCMATRIX c1\n    x x 1\n", "quadratic")])
def test_quadratic_sos_and_indicator_sections_are_unsupported(tmp_path, section, word):
    with pytest.raises(UnsupportedError, match=word) as e:
        read_mps(_write(tmp_path, _base(extra=section)))
    assert e.value.line is not None


def test_semi_continuous_bound_is_unsupported(tmp_path):
    with pytest.raises(UnsupportedError, match="semi-continuous"):
        read_mps(_write(tmp_path, _base(extra="BOUNDS\n SC bnd x 5\n")))


def test_negative_up_bound_without_lower_bound_means_lower_minus_infinity(tmp_path):
    p = read_mps(_write(tmp_path, _base(extra="BOUNDS\n UP bnd x -5\n LO bnd y -1\n UP bnd y -0.5\n")))
    assert p.col_lower.tolist() == [-np.inf, -1.0] and p.col_upper.tolist() == [-5.0, -0.5]


def test_empty_box_from_mps_is_accepted_as_an_infeasible_model(tmp_path):
    p = read_mps(_write(tmp_path, _base(extra="BOUNDS\n LO bnd x 3\n UP bnd x 2\n")))
    assert p.col_lower[0] == 3 and p.col_upper[0] == 2


def test_objsense_max_and_huge_bounds_mean_infinity(tmp_path):
    text = _base(extra="BOUNDS\n UP bnd x 1e30\n LO bnd y -1e31\n").replace("ROWS", "OBJSENSE\n    MAX\nROWS")
    p = read_mps(_write(tmp_path, text))
    assert p.sense == -1 and p.col_upper[0] == np.inf and p.col_lower[1] == -np.inf


def test_bad_objsense_value_and_valued_free_bound_are_format_errors(tmp_path):
    with pytest.raises(FormatError, match="OBJSENSE") as e:
        read_mps(_write(tmp_path, _base().replace("ROWS", "OBJSENSE\n    UP\nROWS")))
    assert e.value.line == 3
    with pytest.raises(FormatError, match="FR takes no value"):
        read_mps(_write(tmp_path, _base(extra="BOUNDS\n FR bnd x 3\n")))


def test_row_name_undefined_in_columns_is_rejected_not_ignored(tmp_path):
    with pytest.raises(FormatError, match="not defined"):
        read_mps(_write(tmp_path, _base().replace("y obj 1 c1", "y obj 1 c9")))


def test_missing_and_garbage_files(tmp_path):
    with pytest.raises(InputError, match="not found"):
        read_mps(tmp_path / "nope.mps")
    with pytest.raises(FormatError):
        read_mps(_write(tmp_path, "\x00\x01garbage\n"))


def test_write_gz_is_really_gzip_and_keeps_sense_offset_and_integrality(tmp_path):
    text = _base(extra="").replace("ROWS", "OBJSENSE\n    MAX\nROWS").replace("    rhs c1 4", "    rhs c1 4 obj 2.5")
    text = text.replace("    y obj", "    MARKER 'MARKER' 'INTORG'\n    y obj").replace(
        "RHS\n", "    MARKER 'MARKER' 'INTEND'\nRHS\n")
    p = read_mps(_write(tmp_path, text))
    assert p.integrality.tolist() == [False, True] and p.offset == -2.5 and p.sense == -1
    write_mps(p, tmp_path / "o.mps.gz")
    with gzip.open(tmp_path / "o.mps.gz", "rt") as f:
        assert "ROWS" in f.read()
    q = read_mps(tmp_path / "o.mps.gz")
    assert q.equals(p)


RANGED = """NAME rng
ROWS
 N obj
 E e1
 E e2
 L l1
 G g1
COLUMNS
    x obj 1 e1 1
    x e2 1 l1 1
    x g1 1
    y obj 1 e1 2
RHS
    rhs e1 4 e2 5
    rhs l1 6 g1 7
RANGES
    rng e1 2 e2 -3
    rng l1 1 g1 1
ENDATA
"""


def test_ranges_sign_on_equality_rows_decides_the_side(tmp_path):
    p = read_mps(_write(tmp_path, RANGED))
    assert p.row_lower.tolist() == [4.0, 2.0, 5.0, 7.0] and p.row_upper.tolist() == [6.0, 5.0, 6.0, 8.0]


def test_duplicate_entries_and_bounds_are_rejected_instead_of_silently_keeping_the_first(tmp_path):
    with pytest.raises(FormatError, match="duplicate"):
        read_mps(_write(tmp_path, RANGED.replace("    y obj 1 e1 2\n", "    y obj 1 e1 2\n    y obj 3\n")))
    with pytest.raises(FormatError, match="duplicate upper bound"):
        read_mps(_write(tmp_path, RANGED.replace("ENDATA", "BOUNDS\n UP bnd x 4\n UP bnd x 5\nENDATA")))


def test_written_mps_of_integer_column_with_fractional_bounds_reads_back_with_bounds_rounded_inward(tmp_path):
    # x integer in [0.5, 3.7] is valid in Parquet; its MPS must be readable by copter's own reader (adversarial F10)
    import numpy as _np

    from formats.mps import read_mps as _read
    from formats.mps import write_mps as _write
    from solver.model.problem import Problem as _Problem

    p = _Problem.from_arrays(cost=[1.0, 1.0], matrix=_np.array([[1.0, 1.0]]), row_lower=[2.0], row_upper=[_np.inf],
                             col_lower=[0.5, 0.0], col_upper=[3.7, 10.0], integrality=[True, False])
    _write(p, tmp_path / "p.mps")
    q = _read(tmp_path / "p.mps")
    assert q.col_lower.tolist() == [1.0, 0.0] and q.col_upper.tolist() == [3.0, 10.0]
    assert q.integrality.tolist() == [True, False]


@pytest.mark.parametrize("out", ["b.mps", "b.mps.gz", "b.parquet"])
def test_written_files_get_the_umask_mode_like_any_new_file(tmp_path, out):
    import os
    import stat

    from typer.testing import CliRunner

    from copter_cli.app import app

    src = tmp_path / "a.mps"
    src.write_text("NAME T\nROWS\n N obj\n L c1\nCOLUMNS\n    x obj 1 c1 1\nRHS\n    rhs c1 4\nENDATA\n")
    old = os.umask(0o022)
    try:
        write_problem(read_mps(src), tmp_path / out)
        res = CliRunner().invoke(app, ["convert", str(src), str(tmp_path / ("c_" + out))])
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.output
    for name in (out, "c_" + out):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o644, name
