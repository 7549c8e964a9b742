"""Every report a round writes (report.json, ``--json``) gives each key one JSON type, so that a tool reading them
as a table takes them: pyarrow's JSON reader refused a partitioned round 0's report ("pass" was "probe", then 0)
and a MILP report whose RENS tried the core neighbourhood ("eps" 1e-4, then "core") (helper-153's output audit).
Infinity prints as "inf" (README: JSON has no infinity), so a number key may hold that string; null goes with any
type. The test walks the reports of an LP round, a partitioned round 0 and a MILP round through RENS and its core
neighbourhood, and reads each report and their lines together (JSONL, as the README's cron line collects them)
with pyarrow."""

from __future__ import annotations

import json

import pyarrow.json as pj

from formats.io import write_problem
from tests.helpers import cli_json, client_allocation, require_data, small_lp_state


def _types(obj, path: str, out: dict) -> None:
    if isinstance(obj, dict):
        for key, value in obj.items():
            _types(value, f"{path}/{key}", out)
    elif isinstance(obj, list):
        for value in obj:
            _types(value, f"{path}/[]", out)
    elif obj is not None:
        kind = ("number" if isinstance(obj, (int, float)) and not isinstance(obj, bool) or obj in ("inf", "-inf")
                else type(obj).__name__)
        out.setdefault(path, set()).add(kind)


def _cli(*args) -> dict:
    code, out = cli_json(*args, "--json")
    assert code == 0, out
    return json.loads(out)


def _reports(tmp_path):
    st, delta = small_lp_state(tmp_path)
    lp = _cli("step", delta, "--state", st)
    write_problem(client_allocation(), tmp_path / "clients.parquet")
    part = _cli("init", tmp_path / "clients.parquet", "--state", tmp_path / "pst", "--partitions", "2")
    assert part["partitions"]["shares"]["passes"][0]["kind"] == "probe"
    p0201 = require_data("mps/p0201.mps.gz")
    milp = _cli("init", p0201, "--state", tmp_path / "mst", "--engine", "pdhg")
    hoods = [a["neighbourhood"] for s in milp["mip"]["steps"] for a in s.get("attempts", [])]
    assert "rens" in hoods and "core" in hoods, hoods  # the model still reaches both kinds of attempt
    return [("lp step", lp, st / "gen-000001" / "report.json"),
            ("partitioned init", part, tmp_path / "pst" / "gen-000000" / "report.json"),
            ("milp init", milp, tmp_path / "mst" / "gen-000000" / "report.json")]


def test_every_key_has_one_type_and_pyarrow_reads_the_reports(tmp_path):
    reports = _reports(tmp_path)
    types: dict = {}
    for _, rep, _ in reports:
        _types(rep, "", types)
    mixed = {path: kinds for path, kinds in types.items() if len(kinds) > 1}
    assert not mixed, mixed
    for name, _, path in reports:
        table = pj.read_json(path)  # raises ArrowInvalid on a key whose type changes
        assert table.num_rows == 1, name
    lines = tmp_path / "rounds.jsonl"
    lines.write_text("".join(json.dumps(rep) + "\n" for _, rep, _ in reports))
    assert pj.read_json(lines, parse_options=pj.ParseOptions(unexpected_field_behavior="infer")).num_rows == 3
