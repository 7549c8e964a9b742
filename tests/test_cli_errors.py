"""User mistakes on the command line end with a usage/bad-input exit code and a message naming the culprit,
never exit 1 (internal), and leave the state directory byte-identical; with --json the error is one JSON
object on stdout."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from copter_cli import exit_codes
from formats import checkpoint
from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp, snapshot


@pytest.mark.parametrize(("args", "needle"), [
    (("step", "--json"), "Missing argument"),
    (("solve", "--json"), "Missing argument"),
    (("bogus", "--json"), "No such command 'bogus'"),
    (("step", "x.parquet", "--bogus", "--json"), "No such option: --bogus"),
    (("rollback", "--to", "abc", "--json"), "--to must be an integer, got 'abc'"),
    (("--json",), "No such option: --json"),
])
def test_usage_error_with_json_prints_one_json_error_and_exits_2(capsys, args, needle):
    code, out, _ = run_main(capsys, *args)
    assert code == 2
    err = json.loads(out)["error"]
    assert err["code"] == 2 and err["kind"] == "usage" and needle in err["message"]
    assert len(out.strip().splitlines()) == 1


def test_usage_error_without_json_keeps_human_output_on_stderr(capsys):
    code, out, err = run_main(capsys, "step")
    assert code == 2 and out == "" and "Missing argument" in err


def test_help_with_json_still_prints_help_and_exits_0(capsys):
    code, out, _ = run_main(capsys, "step", "--help", "--json")
    assert code == 0 and "Usage" in out


def test_command_exit_code_passes_through_json_entry_point(capsys, tmp_path):
    code, out, _ = run_main(capsys, "show", "--state", tmp_path / "missing", "--json")
    assert code == 3 and json.loads(out)["error"]["kind"] == "state"
    assert not (tmp_path / "missing").exists()


# ---------------------------------------------------------------------------------------------- F4 / F13
@pytest.fixture
def base(tmp_path) -> Path:
    write_problem(small_lp(), tmp_path / "base.parquet")
    return tmp_path / "base.parquet"


@pytest.fixture
def st(tmp_path, base) -> Path:
    rounds.init(base, tmp_path / "st")
    return tmp_path / "st"


def test_solve_output_into_a_missing_folder_exits_2_naming_the_path_before_solving(capsys, base, tmp_path):
    target = tmp_path / "nope" / "x.parquet"
    code, out, _ = run_main(capsys, "solve", base, "--json", "-o", target)
    err = json.loads(out)["error"]
    assert code == 2 and err["kind"] == "usage" and str(target.parent) in err["message"]
    assert not (tmp_path / "nope").exists()


def test_solve_output_that_is_a_folder_exits_2(capsys, base, tmp_path):
    code, out, _ = run_main(capsys, "solve", base, "--json", "-o", tmp_path)
    assert code == 2 and "is a folder" in json.loads(out)["error"]["message"]


@pytest.mark.parametrize("sub", ["", "sub"])
def test_init_on_a_regular_file_exits_3_and_leaves_the_file(capsys, base, tmp_path, sub):
    f = tmp_path / "afile"
    f.write_text("hi\n")
    target = f / sub if sub else f
    code, out, _ = run_main(capsys, "init", base, "--state", target, "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["kind"] == "state" and str(target) in err["message"]
    assert ("is a file, not a state directory" if not sub else "cannot create") in err["message"]
    assert f.read_text() == "hi\n"


def _overwrite_arrow(path: Path, values: list[int]) -> None:
    """Replace an Arrow IPC array file in place (same inode, so hard links see it) by a valid one."""
    t = pa.ipc.open_file(str(path)).read_all()
    sink = io.BytesIO()
    t2 = pa.table({"v": pa.array(values, t.schema.field("v").type)}).replace_schema_metadata(t.schema.metadata)
    with pa.ipc.new_file(sink, t2.schema) as w:
        w.write_table(t2)
    with open(path, "r+b") as f:
        f.truncate(0)
        f.write(sink.getvalue())


@pytest.mark.parametrize(("field", "make", "needle"), [
    ("a_indices", lambda v: [*v[:-1], 70_000_000], "row index out of range"),
    ("a_indices", lambda v: [-1, *v[1:]], "row index out of range"),
    ("a_indptr", lambda v: [v[0], v[2], v[1], *v[3:]], "column pointers"),
    ("cost", lambda v: v[:-1], "generation.json says"),  # size differs: the manifest catches it
])
@pytest.mark.parametrize("old_manifest", [False, True])
def test_damaged_checkpoint_array_exits_3_naming_generation_and_file(capsys, st, tmp_path, monkeypatch,
                                                                    field, make, needle, old_manifest):
    """A same-size damage is caught by the manifest's CRC-32; in a generation written before checksums
    existed (old_manifest), by the structural check of the loaded arrays."""
    monkeypatch.setattr(checkpoint, "_RECENT", {})  # force a real load, as in a new process
    if old_manifest:
        man = json.loads((st / "gen-000000" / "generation.json").read_text())
        del man["crc32"]
        (st / "gen-000000" / "generation.json").write_text(json.dumps(man))
    elif needle != "generation.json says":
        needle = "has CRC-32"
    path = st / "gen-000000" / "problem" / f"{field}.arrow"
    vals = pa.ipc.open_file(str(path)).read_all().column("v").to_pylist()
    if field == "a_indptr":
        assert vals[1] != vals[2]
    _overwrite_arrow(path, make(vals))
    d = tmp_path / "d.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    before = snapshot(st)
    code, out, _ = run_main(capsys, "step", d, "--state", st, "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["kind"] == "state", err
    assert "gen-000000" in err["message"] and f"{field}.arrow" in err["message"] and needle in err["message"]
    assert snapshot(st) == before


def _delta(tmp_path: Path) -> Path:
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    return d


@pytest.mark.parametrize("kind", ["file", "under_file", "proc"])
def test_step_out_that_cannot_be_a_folder_exits_2_before_any_work(capsys, st, tmp_path, kind):
    afile = tmp_path / "afile"
    afile.write_text("hi\n")
    out = {"file": afile, "under_file": afile / "sub", "proc": Path("/proc/version")}[kind]
    if kind == "proc" and not out.is_file():
        pytest.skip("no /proc/version on this system")
    before = snapshot(st)
    code, js, _ = run_main(capsys, "step", _delta(tmp_path), "--state", st, "--json", "--out", out)
    err = json.loads(js)["error"]
    assert code == 2 and err["kind"] == "usage" and str(out) in err["message"] and "--out" in err["message"]
    assert snapshot(st) == before and afile.read_text() == "hi\n"


def test_init_out_that_is_a_file_exits_2_and_creates_no_state(capsys, base, tmp_path):
    (tmp_path / "afile").write_text("hi\n")
    code, js, _ = run_main(capsys, "init", base, "--state", tmp_path / "new", "--json", "--out", tmp_path / "afile")
    assert code == 2 and json.loads(js)["error"]["kind"] == "usage"
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("name", ["solution.parquet", "report.json"])
def test_a_folder_where_an_out_file_goes_is_refused_before_the_round(capsys, st, tmp_path, name):
    """helper-203: ``--out oo`` with a folder oo/report.json stored the round, then failed its copy (exit 2), leaving
    oo with the new round's Parquet files beside a stale report."""
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)
    delta, before = _delta(tmp_path), snapshot(st)
    code, _, err = run_main(capsys, "step", delta, "--state", st, "--out", out)
    assert code == 2 and f"--out {out}: {out / name} is a folder" in err, err
    assert snapshot(st) == before and sorted(p.name for p in out.iterdir()) == [name]


def test_step_out_dash_is_refused_not_a_folder_named_dash(capsys, st, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    delta, before = _delta(tmp_path), snapshot(st)
    code, _, err = run_main(capsys, "step", delta, "--state", st, "--out", "-")
    assert code == 2 and "--out -: --out names a folder" in err, err
    assert not (tmp_path / "-").exists() and snapshot(st) == before


def test_copy_to_out_failing_after_the_commit_exits_2_and_says_the_round_is_current(capsys, st, tmp_path,
                                                                                     monkeypatch):
    # issue #16: an --out that fails after the round was stored is not exit 0; a reason other than the
    # machine's (here a folder where a file goes, made after the --out check) is a usage error, exit 2 (the
    # machine's: 7, test_env_faults)
    from formats import atomic

    out = tmp_path / "out"
    real_copy = atomic.copy_file

    def copy_after_a_folder_appeared(src, dst, *a, **kw):  # another program makes the folder once copter checked
        if Path(dst).name == "solution.parquet":
            Path(dst).mkdir(exist_ok=True)
        return real_copy(src, dst, *a, **kw)

    monkeypatch.setattr(atomic, "copy_file", copy_after_a_folder_appeared)
    code, js, err = run_main(capsys, "step", _delta(tmp_path), "--state", st, "--json", "--out", out)
    assert err.count("round 1 is stored and current") == 1, err  # the error line, not also a warning line
    rep = json.loads(js)
    assert code == 2 and rep["round"] == 1 and rep["status"] == "OPTIMAL"
    assert rep["error"]["code"] == 2 and rep["error"]["round_stored"] is True
    assert "round 1 is stored and current" in rep["error"]["message"]
    assert any("copying its outputs to --out" in w for w in rep["warnings"])
    assert (st / "CURRENT").read_text() == "1\n"
    d2 = tmp_path / "d2.parquet"
    write_delta(Delta.concat([Delta.vars(["x4"], cost=[6.0])], base_round=1), d2)
    (out / "solution.parquet").rmdir()  # else the --out check refuses it before the round
    code, table, err = run_main(capsys, "step", d2, "--state", st, "--out", out)  # human output
    assert code == 2 and "error (usage, exit 2)" in err and "round 2 is stored and current" in err
    # said once (the warning line repeated the error), naming the folder in the way, not formats.atomic's temp file
    assert err.count("round 2 is stored and current") == 1, err
    assert f"cannot write {out / 'solution.parquet'}: Is a directory" in err and ".tmp" not in err, err
    assert "copter round 2" in table and "error (usage" not in table  # the report on stdout, the error on stderr
    assert (st / "CURRENT").read_text() == "2\n"



def test_demo_dir_that_is_a_file_is_a_usage_error(tmp_path):
    from typer.testing import CliRunner

    from copter_cli.app import app

    f = tmp_path / "afile"
    f.write_text("hi")
    res = CliRunner().invoke(app, ["demo", "--dir", str(f), "--rounds", "1", "--json"])
    assert res.exit_code == 2
    assert "is a file, not a folder" in json.loads(res.stdout)["error"]["message"]


def test_step_given_a_directory_instead_of_a_delta_says_so(tmp_path):
    from typer.testing import CliRunner

    from copter_cli.app import app

    state = tmp_path / "state"
    rounds.init(small_lp(), state_dir=state)
    d = tmp_path / "adir"
    d.mkdir()
    res = CliRunner().invoke(app, ["step", str(d), "--state", str(state), "--json"])
    assert res.exit_code == 3
    assert "is a directory, not a delta file" in json.loads(res.stdout)["error"]["message"]


def _table_after(path: str, heading: str) -> dict[int, str]:
    text = (Path(__file__).resolve().parents[1] / path).read_text().split(heading, 1)[1]
    section = text[text.index("| code | meaning |"):].split("\n\n", 1)[0]
    return {int(c): m for c, m in re.findall(r"^\| (\d+) \| (.+) \|$", section, flags=re.M)}


def test_readme_exit_code_table_is_the_exit_codes_module_table():
    assert _table_after("README.md", "### Exit codes") == exit_codes.TABLE
    assert all("|" not in m for m in exit_codes.TABLE.values())  # a "|" in a cell splits the Markdown row


def test_the_docs_table_of_every_case_is_the_modules_details():
    assert _table_after("docs/statuses-and-exit-codes.md", "### What each code covers") == exit_codes.DETAILS
    assert set(exit_codes.DETAILS) == set(exit_codes.TABLE)


def test_a_missing_delta_and_a_missing_base_are_the_same_kind_exit_3(tmp_path):
    from typer.testing import CliRunner

    from copter_cli.app import app

    state = tmp_path / "state"
    rounds.init(small_lp(), state_dir=state)
    step = CliRunner().invoke(app, ["step", str(tmp_path / "no.parquet"), "--state", str(state), "--json"])
    init = CliRunner().invoke(app, ["init", str(tmp_path / "no.parquet"), "--state", str(tmp_path / "s2"),
                                    "--json"])
    errs = [json.loads(r.stdout)["error"] for r in (step, init)]
    assert step.exit_code == init.exit_code == 3
    assert errs[0]["kind"] == errs[1]["kind"] == "input" and all("not found" in e["message"] for e in errs)


def test_exit_codes_docstring_table_is_the_table():
    """The module's docstring repeated the table by hand and fell behind TABLE (rows 2, 3 and 7 shorter)."""
    rows = {int(c): m for c, m in re.findall(r"^\| (\d+) \| (.+) \|$", exit_codes.__doc__, flags=re.M)}
    assert rows == exit_codes.TABLE
    assert list(rows) == list(exit_codes.TABLE)


@pytest.mark.parametrize("cmd", ["convert", "diff", "export", "solve"])
def test_an_output_that_is_a_folder_is_a_usage_error_in_every_command(capsys, st, tmp_path, cmd):
    """helper-203: ``diff a b -o DIR`` and ``convert SRC DIR`` said "is a directory, not a model file" (exit 3, the
    input's words), where ``export -o DIR`` and ``solve -o DIR`` say "is a folder, not a file" (exit 2)."""
    base = tmp_path / "base.parquet"
    write_problem(small_lp(), base)
    folder = tmp_path / "somedir"
    folder.mkdir()
    args = {"convert": ("convert", base, folder), "diff": ("diff", base, base, "-o", folder),
            "export": ("export", "--state", st, "-o", folder), "solve": ("solve", base, "-o", folder)}[cmd]
    code, _, err = run_main(capsys, *args)
    assert code == 2 and f"{folder}: is a folder, not a file" in err, err
