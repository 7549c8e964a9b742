"""``copter show --solution``: the allocation by client and the biggest moves (solver.rounds.allocation,
compared with a plain-Python twin over the rows), the round number every output file carries
(``copter.round``), and the errors of its options.

Speed is measured, not asserted, by bench/bench_show_solution.py (1M variables).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from copter_cli.app import app
from formats.checksum import file_crc32
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.rounds import allocation as alloc
from solver.rounds.outputs import ROUND_KEY, file_round, with_round

runner = CliRunner()


def cli(*args):
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


# ------------------------------------------------------------------------------ plain-Python twins


def ref_allocation(names, values, top, entries, zero_tol, client_of):
    """Row-by-row grouping: what ``alloc.allocation`` must return."""
    groups: dict = {}
    order: list = []
    for name, v in zip(names, values, strict=True):
        if not abs(v) > zero_tol:
            continue
        c = client_of(name)
        if c not in groups:
            groups[c] = []
            order.append(c)
        groups[c].append((name, v))
    total = sum(v for g in groups.values() for _, v in g)
    # largest |sum| first, ties in order of first appearance among the nonzero entries (dictionary order)
    ranked = sorted(order, key=lambda c: (-abs(sum(v for _, v in groups[c])), order.index(c)))[:top]
    out = []
    for c in ranked:
        s = sum(v for _, v in groups[c])
        best = sorted(enumerate(groups[c]), key=lambda t: (-abs(t[1][1]), t[0]))[:entries]
        out.append({"client": c, "nonzero": len(groups[c]), "sum": s, "top": [nv for _, nv in best]})
    return len(groups), total, out


def slash_client(name):
    return name.split("/", 1)[0] if "/" in name else None


def ref_moves(table: pa.Table, top):
    rows = table.to_pylist()
    counts = defaultdict(int)
    moves = []
    for r in rows:
        counts[r["kind"]] += 1
        if r["kind"] in ("value_changed", "var_added", "var_removed"):
            d = (r["new_value"] or 0.0) - (r["old_value"] or 0.0)
            if d != 0:
                moves.append((r["name"], d))
    moves.sort(key=lambda t: (-abs(t[1]), t[0]))
    return counts, moves


# ------------------------------------------------------------------------------ library against twins


def random_solution(n, n_clients, seed):
    rng = np.random.default_rng(seed)
    client = rng.integers(0, n_clients, n)
    names = [f"c{c}/v{i}" if c else f"glob{i}" for i, c in enumerate(client)]  # client 0: no slash
    values = np.where(rng.random(n) < 0.4, 0.0, np.round(rng.normal(size=n) * 3, 1))
    values[rng.random(n) < 0.05] = 1e-7  # below zero_tol: not allocated
    return names, values


@pytest.mark.parametrize("seed,top,entries", [(0, 5, 3), (1, 50, 0), (2, 1, 10)])
def test_allocation_equals_the_row_by_row_grouping(seed, top, entries):
    names, values = random_solution(3000, 40, seed)
    t = pa.table({"name": names, "value": values})
    got = alloc.allocation(t, top=top, entries=entries, zero_tol=1e-6)
    n_groups, total, ref = ref_allocation(names, values, top, entries, 1e-6, slash_client)
    assert got["n_variables"] == 3000
    assert got["n_nonzero"] == sum(abs(v) > 1e-6 for v in values)
    assert got["n_clients"] == n_groups and got["clients_omitted"] == n_groups - len(ref)
    assert got["sum"] == pytest.approx(total)
    assert [c["client"] for c in got["clients"]] == [c["client"] for c in ref]
    for g, r in zip(got["clients"], ref, strict=True):
        assert g["nonzero"] == r["nonzero"] and g["sum"] == pytest.approx(r["sum"])
        assert [(e["name"], e["value"]) for e in g["top"]] == r["top"]
    assert None in [c["client"] for c in alloc.allocation(t, top=100)["clients"]]  # the no-slash group


def test_shares_are_left_out_when_the_values_have_both_signs():
    t = pa.table({"name": ["a/x", "a/y", "b/x"], "value": [3.0, 2.0, -4.0]})  # total 1: shares 500% / -400%
    assert [c["share"] for c in alloc.allocation(t)["clients"]] == [None, None]
    t = pa.table({"name": ["a/x", "a/y", "b/x"], "value": [3.0, 2.0, 5.0]})
    assert [c["share"] for c in alloc.allocation(t)["clients"]] == [0.5, 0.5]
    t = pa.table({"name": ["a/x", "b/x"], "value": [-3.0, -1.0]})  # all negative: shares of the total still add up
    assert [c["share"] for c in alloc.allocation(t)["clients"]] == [0.75, 0.25]


def test_allocation_with_a_client_regex_and_its_errors():
    names = ["shard1-srv2", "shard1-srv3", "shard2-srv1", "alpha"]
    t = pa.table({"name": names, "value": [1.0, 2.0, 4.0, 0.5]})
    got = alloc.allocation(t, client_regex=r"^(?P<client>shard\d+)-")
    assert [(c["client"], c["nonzero"], c["sum"]) for c in got["clients"]] == [
        ("shard2", 1, 4.0), ("shard1", 2, 3.0), (None, 1, 0.5)]
    assert got["clients"][1]["top"] == [{"name": "shard1-srv3", "value": 2.0}, {"name": "shard1-srv2", "value": 1.0}]
    whole = alloc.allocation(t, client_regex=r"^shard\d+")  # no named group: the whole match, as POP's
    assert [c["client"] for c in whole["clients"]] == ["shard2", "shard1", None]
    with pytest.raises(UsageError, match="--client-regex"):
        alloc.allocation(t, client_regex="(")
    for kw, opt in (({"top": 0}, "--top"), ({"entries": -1}, "--entries"), ({"zero_tol": -1.0}, "--zero-tol"),
                    ({"zero_tol": float("nan")}, "--zero-tol")):
        with pytest.raises(UsageError, match=opt):
            alloc.allocation(t, **kw)


def test_moves_equal_the_row_by_row_twin():
    rng = np.random.default_rng(3)
    n = 500
    kinds = rng.choice(["value_changed", "var_added", "var_removed", "con_added", "con_removed"], n)
    old = np.round(rng.normal(size=n), 2)
    new = np.round(rng.normal(size=n), 2)
    old_a = pa.array([None if k in ("var_added", "con_added", "con_removed") else v for k, v in zip(kinds, old, strict=True)],
                     type=pa.float64())
    new_a = pa.array([None if k in ("var_removed", "con_added", "con_removed") else v for k, v in zip(kinds, new, strict=True)],
                     type=pa.float64())
    t = pa.table({"kind": kinds, "name": [f"e{i:04d}" for i in range(n)], "old_value": old_a, "new_value": new_a})
    got = alloc.moves(t, top=7)
    counts, ref = ref_moves(t, 7)
    assert got["vars_added"] == counts["var_added"] and got["vars_removed"] == counts["var_removed"]
    assert got["vars_moved"] == counts["value_changed"] and got["cons_added"] == counts["con_added"]
    assert got["cons_removed"] == counts["con_removed"]
    assert [(m["name"], m["delta"]) for m in got["moves"]] == [(nm, pytest.approx(d)) for nm, d in ref[:7]]
    assert got["moves_omitted"] == len(ref) - 7
    added = next(m for m in got["moves"] if m["kind"] == "var_added") if any(
        m["kind"] == "var_added" for m in got["moves"]) else None
    if added is not None:
        assert added["old"] is None and added["delta"] == pytest.approx(added["new"])


def test_tied_moves_are_chosen_by_name_so_every_top_is_a_prefix_of_a_larger_one():
    """A MILP's moves are mostly +-1: ``--top 2`` showed moves that ``--top 3`` did not (the selection broke ties
    arbitrarily, the display by name; helper-236)."""
    rng = np.random.default_rng(5)
    n = 400
    names = [f"j{i}/g{i % 7}" for i in rng.permutation(n)]
    old = rng.integers(0, 2, n).astype(float)
    new = np.where(rng.random(n) < 0.5, 1.0 - old, old)
    new[:3] = old[:3] + 2.0  # three larger moves first, then the ties
    t = pa.table({"kind": ["value_changed"] * n, "name": names, "old_value": old, "new_value": new})
    _, ref = ref_moves(t, n)
    for top in (1, 2, 3, 4, 5, 9, 40):
        got = alloc.moves(t, top=top)
        assert [(m["name"], m["delta"]) for m in got["moves"]] == ref[:top], top
        assert got["moves_omitted"] == len(ref) - top


def test_variables_added_or_removed_at_zero_are_counted_not_lost(capsys):
    """+N added beside fewer moves must add up: the ones at value 0 are counted in ``zero_moves`` and named by the
    human view (helper-187: round 0's "+1,440 added" beside 534 moves, 906 at 0 said nowhere)."""
    t = pa.table({"kind": ["var_added", "var_added", "var_removed", "value_changed", "var_added", "con_added"],
                  "name": ["a", "b", "c", "d", "e", "r"],
                  "old_value": pa.array([None, None, 0.0, 1.0, None, None], type=pa.float64()),
                  "new_value": pa.array([0.0, 2.0, None, 3.0, 0.0, None], type=pa.float64())})
    got = alloc.moves(t, top=1)
    assert got["changed_variables"] == 5 and got["zero_moves"] == 3 and got["moves_omitted"] == 1
    assert len(got["moves"]) + got["moves_omitted"] + got["zero_moves"] == got["changed_variables"]
    from copter_cli.allocation_view import _print_moves

    _print_moves(0, {**got, "previous_round": None})
    shown = capsys.readouterr()
    assert "not listed: 3 variable(s) added or removed at value 0" in shown.out + shown.err


# ------------------------------------------------------------------------------ a state end to end


def client_problem() -> Problem:
    """max sum c x over clients j0..j3 (three variables each, 'jk/gpuG') and a global 'alpha', a shared
    capacity row and one row per client."""
    names = [f"j{k}/gpu{g}" for k in range(4) for g in range(3)] + ["alpha"]
    n = len(names)
    rng = np.random.default_rng(5)
    rows = [np.ones(n)] + [np.array([1.0 if nm.startswith(f"j{k}/") else 0.0 for nm in names]) for k in range(4)]
    return Problem.from_arrays(cost=rng.random(n) + 0.1, col_lower=np.zeros(n), col_upper=np.full(n, 2.0),
                               row_lower=np.full(5, -np.inf), row_upper=np.array([7.0, 3.0, 2.0, 2.5, 1.0]),
                               matrix=sp.csc_array(np.vstack(rows)), sense=-1, col_names=names,
                               row_names=["shared"] + [f"cap{k}" for k in range(4)])


@pytest.fixture
def state(tmp_path) -> Path:
    st = tmp_path / "st"
    rounds.init(client_problem(), state_dir=st)
    d = Delta.concat([Delta.vars(["j0/gpu0", "j4/gpu0"], cost=[5.0, 3.0], upper=[None, 1.0]),
                      Delta.coefs(var=["j4/gpu0"], con=["shared"], value=[1.0]),
                      Delta.drop_vars(["j3/gpu2"])], base_round=0)
    write_delta(d, tmp_path / "d1.parquet")
    rep = rounds.step(tmp_path / "d1.parquet", state_dir=st, out_dir=tmp_path / "out")
    assert rep["status"] == "OPTIMAL", rep
    return st


def test_every_output_file_carries_its_round(state):
    for r in (0, 1):
        for name in rounds.OUTPUT_FILES:
            assert file_round(state / f"gen-{r:06d}" / name) == r
            assert pq.read_schema(state / f"gen-{r:06d}" / name).metadata[ROUND_KEY.encode()] == str(r).encode()
    for name in rounds.OUTPUT_FILES:  # the --out copy says which round it holds
        assert file_round(state.parent / "out" / name) == 1


def test_show_solution_json_equals_the_files(state):
    code, out, _ = cli("show", "--solution", "--changes", "--top", "3", "--entries", "2", "--state", state, "--json")
    assert code == 0, out
    got = json.loads(out)
    sol = pq.read_table(state / "gen-000001" / "solution.parquet")
    names, values = sol.column("name").to_pylist(), sol.column("value").to_pylist()
    n_groups, total, ref = ref_allocation(names, values, 3, 2, 1e-4, slash_client)
    assert got["round"] == 1 and got["zero_tol"] == 1e-4 and got["n_clients"] == n_groups
    assert got["sum"] == pytest.approx(total)
    assert [(c["client"], c["nonzero"]) for c in got["clients"]] == [(c["client"], c["nonzero"]) for c in ref]
    assert [[(e["name"], e["value"]) for e in c["top"]] for c in got["clients"]] == [c["top"] for c in ref]
    ch = got["changes"]
    counts, moves = ref_moves(pq.read_table(state / "gen-000001" / "changes.parquet"), 3)
    assert ch["previous_round"] == 0
    assert (ch["vars_added"], ch["vars_removed"]) == (1, 1) == (counts["var_added"], counts["var_removed"])
    assert [m["name"] for m in ch["moves"]] == [nm for nm, _ in moves[:3]]


def test_show_solution_of_a_kept_round_and_the_human_view(state):
    code, out, _ = cli("show", "--solution", "--round", "0", "--state", state, "--json")
    assert code == 0 and json.loads(out)["round"] == 0
    # the answer on stdout (`copter show --solution > file` kept nothing: it was on stderr), nothing on stderr
    code, out, err = cli("show", "--solution", "--changes", "--state", state, "--top", "20")
    assert code == 0 and err == ""
    assert "round 1" in out and "j0" in out and "biggest moves" in out and "since round 0" in out
    assert "biggest moves (delta = new - old; a missing side counts as 0)" in out  # one line, not wrapped (trial 38)
    assert "(no client)" in out  # alpha, or the note that it is zero: only when allocated
    code, out, _ = cli("show", "--solution", "--changes", "--state", state, "--round", "0")
    assert code == 0 and "no previous round" in out


def rewrite(path: Path, table: pa.Table) -> None:
    """Write ``table`` over a generation's file and update the manifest's size and checksum (the store
    checks both)."""
    pq.write_table(table, path)
    manifest_path = path.parent / "generation.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["files"][path.name] = path.stat().st_size
    manifest["crc32"][path.name] = file_crc32(path)
    manifest_path.write_text(json.dumps(manifest))


def test_show_solution_refuses_a_file_of_another_round(state):
    path = state / "gen-000001" / "solution.parquet"
    rewrite(path, with_round(pq.read_table(path), 7))
    code, out, err = cli("show", "--solution", "--state", state, "--json")
    assert code == 3, out
    assert "round 7" in json.loads(out)["error"]["message"] and "solution.parquet" in err


def test_a_file_without_its_round_reads_as_its_folders_and_a_garbled_round_is_a_state_error(state):
    path = state / "gen-000001" / "solution.parquet"
    table = pq.read_table(path)
    rewrite(path, table.replace_schema_metadata(None))  # written before copter.round existed
    assert file_round(path) is None
    code, out, _ = cli("show", "--solution", "--state", state, "--json")
    assert code == 0 and json.loads(out)["round"] == 1
    rewrite(path, table.replace_schema_metadata({ROUND_KEY: "one"}))
    code, out, _ = cli("show", "--solution", "--state", state, "--json")
    assert code == 3 and "is not a round number" in json.loads(out)["error"]["message"]


@pytest.mark.parametrize("args,culprit", [
    (["--solution", "--top", "0"], "--top"), (["--solution", "--entries", "-2"], "--entries"),
    (["--solution", "--client-regex", "("], "--client-regex"), (["--solution", "--round", "9"], "round 9"),
    (["--solution", "--zero-tol", "-1"], "--zero-tol")])
def test_show_solution_usage_errors_exit_2_naming_the_option(state, args, culprit):
    code, out, _ = cli("show", *args, "--state", state, "--json")
    assert code == 2, out
    assert culprit in json.loads(out)["error"]["message"]


def test_allocation_options_imply_solution_and_the_regex_reads_as_inits(state):
    # user trial 18: `show --top 2` was exit 2 (--changes implied --solution, --top did not), and
    # `show --solution --client-regex '^j[0-9]'` was exit 2 (no named group) where init and compare take it
    code, out, _ = cli("show", "--top", "2", "--state", state, "--json")
    assert code == 0, out
    res = json.loads(out)
    assert len(res["clients"]) == 2 and "n_nonzero" in res
    code, out, _ = cli("show", "--client-regex", "^j[0-9]", "--state", state, "--json")
    assert code == 0, out
    whole = {c["client"] for c in json.loads(out)["clients"]}
    code, out, _ = cli("show", "--client-regex", "^(?P<client>j[0-9])", "--state", state, "--json")
    assert whole == {c["client"] for c in json.loads(out)["clients"]} and "j0" in whole


def test_show_solution_on_an_uninitialised_state_is_a_state_error(tmp_path):
    code, out, _ = cli("show", "--solution", "--state", tmp_path / "none", "--json")
    assert code == 3, out


def test_the_human_view_off_a_terminal_keeps_long_names_whole(tmp_path):
    # folded to rich's 80 columns, `show --solution > alloc.txt` split a long name over two lines (helper-160)
    from formats.io import write_problem

    names = [f"tenant-{c:03d}-production-cluster-eu-west/{g}-accelerator-pool-{k}"
             for c in range(3) for g in ("a100", "h100") for k in range(2)]
    n = len(names)
    p = Problem.from_arrays(cost=[-1.0 - 0.01 * i for i in range(n)], col_lower=[0.0] * n, col_upper=[3.0] * n,
                            row_lower=[-np.inf], row_upper=[100.0], matrix=np.ones((1, n)), col_names=names,
                            row_names=["cap"])
    write_problem(p, tmp_path / "long.parquet")
    st = tmp_path / "st"
    assert cli("init", tmp_path / "long.parquet", "--state", st)[0] == 0
    code, out, _ = cli("show", "--solution", "--state", st, "--entries", "4")
    assert code == 0
    assert "tenant-000-production-cluster-eu-west/a100-accelerator-pool-0" in out, out
    assert all(len(line) > 80 for line in out.splitlines() if "tenant-000" in line)
