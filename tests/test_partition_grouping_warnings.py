"""``init --partitions K`` says when the base's names group badly (helper-185, session 46; both were silent): a
``--shared-rows-regex`` that matches no row name (a typo shares nothing and is stored for every round), and a
``--client-regex`` (or the default convention) that leaves most variables without a client, which every part then
holds (the merged TE point was 28% below the optimum, exit 0)."""

from __future__ import annotations

import json

from formats.io import write_problem
from solver.partition.clients import grouping_warnings
from solver.workloads import make_scenario
from tests.helpers import run_main


def _te_base(tmp_path):
    base = tmp_path / "base.parquet"
    write_problem(make_scenario("te", 16, seed=4).base(), base)
    return base


def test_a_shared_rows_regex_matching_nothing_is_a_warning(tmp_path, capsys):
    code, out, err = run_main(capsys, "init", _te_base(tmp_path), "--state", tmp_path / "st", "--partitions", "2",
                              "--shared-rows-regex", "^zzz", "--json")
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    assert any("--shared-rows-regex '^zzz' matches no row name" in w for w in warnings), warnings


def test_a_client_regex_leaving_most_variables_global_is_a_warning(tmp_path, capsys):
    code, out, err = run_main(capsys, "init", _te_base(tmp_path), "--state", tmp_path / "st", "--partitions", "2",
                              "--client-regex", r"^(?P<client>d1\d)-", "--json")
    assert code == 0, err
    said = [w for w in json.loads(out)["warnings"] if "have no client" in w]
    assert len(said) == 1 and "--client-regex '^(?P<client>d1\\d)-' finds no client" in said[0], said


def test_a_good_grouping_says_nothing():
    problem = make_scenario("te", 16, seed=4).base()
    assert grouping_warnings(problem) == []
    some_row = str(problem.row_names[0])
    assert grouping_warnings(problem, shared_rows_regex="^" + some_row.split("/")[0]) == []


def test_the_default_convention_names_the_missing_prefix():
    problem = make_scenario("te", 16, seed=4).base()
    problem.col_names = problem.col_names.astype(str).astype(object)
    problem.col_names[:] = [n.replace("/", "_") for n in problem.col_names[: problem.n_cols - 2]] + \
        list(problem.col_names[problem.n_cols - 2:])
    said = grouping_warnings(problem)
    assert len(said) == 1 and "carry no '<client>/' prefix" in said[0] and "--client-regex" in said[0], said
