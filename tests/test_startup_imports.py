"""Start-up that fits cron (issue #15): the commands that do not solve import no numerical stack.

Structural, not timed: each command runs as ``python -X importtime -m copter_cli ...`` in a fresh process
and the modules it imported (the importtime lines on stderr) must not include numpy, scipy, numba,
llvmlite, highspy or pyarrow (which imports numpy). The timings live in ``bench/bench_startup.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("numpy", "scipy", "numba", "llvmlite", "highspy", "pyarrow")


def _imported(args: list[str], cwd: Path, full: bool = False) -> tuple[int, set[str]]:
    """(exit code, top-level names of every module imported; with ``full`` the full module names) of
    ``python -X importtime -m copter_cli ARGS``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "copter_cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)
    names = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "package":  # the header line
                names.add(name if full else name.split(".")[0])
    assert names, proc.stderr[-2000:]
    return proc.returncode, names


@pytest.fixture(scope="module")
def state(tmp_path_factory) -> Path:
    """A state with two rounds (so rollback has an earlier round to go to)."""
    from solver import rounds
    from solver.model.delta import Delta
    from tests.helpers import small_lp

    st = tmp_path_factory.mktemp("startup") / "state"
    rounds.init(small_lp(), state_dir=st)
    rounds.step(Delta.concat([Delta.vars(["x0"], cost=[0.5])], base_round=0), state_dir=st)
    return st


def test_help_and_version_import_no_numerical_stack(tmp_path):
    for args in (["--help"], ["version"], ["version", "--json"], ["--version"]):
        code, names = _imported(args, tmp_path)
        assert code == 0, args
        assert not names & set(HEAVY), (args, sorted(names & set(HEAVY)))


def test_show_rollback_import_no_numerical_stack(state, tmp_path):
    for args in (["show"], ["show", "--json"], ["show", "--round", "0"], ["rollback", "--json"],
                 ["rollback", "--to", "1"]):
        code, names = _imported([*args, "--state", str(state)], tmp_path)
        assert code == 0, args
        assert not names & set(HEAVY), (args, sorted(names & set(HEAVY)))


def test_history_imports_only_what_reading_the_round_log_needs(state, tmp_path):
    """history reads the round log (``formats.round_log``: Arrow IPC, issue #19) with pyarrow alone: numpy is
    kept out (``copter_cli.entry.keep_numpy_out``; importtime lists the refused attempt as ``numpy``, a real
    import would list its submodules), so are pyarrow.compute (a timestamp ``cast`` imported it), numba,
    scipy and HiGHS; rich only for the human table."""
    for args in (["history"], ["history", "--json"], ["history", "--csv"], ["history", "--last", "1"]):
        code, names = _imported([*args, "--state", str(state)], tmp_path, full=True)
        assert code == 0, args
        assert "pyarrow" in names, args
        heavy = {n for n in names if n.split(".")[0] in set(HEAVY) - {"pyarrow", "numpy"} or n.startswith("numpy.")}
        assert not heavy, (args, sorted(heavy))
        assert "pyarrow.compute" not in names and "pyarrow._compute" not in names, args
        assert ("rich.console" in names) == (args[-1] not in ("--json", "--csv")), args


def test_history_reads_the_same_rows_without_numpy(state, tmp_path):
    """The rows ``copter history --json`` prints in its own process (numpy kept out) are the library's, with
    the round log and for a state written before it existed (rows rebuilt from the report.json files)."""
    import shutil

    from solver import rounds

    old = tmp_path / "no-log"
    shutil.copytree(state, old, symlinks=True)
    shutil.rmtree(old / "log")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for st in (state, old):
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "history", "--state", str(st), "--json"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        rows = json.loads(proc.stdout)["rounds"]
        assert [r["round"] for r in rows] == [0, 1], st
        assert rows == json.loads(json.dumps(rounds.history(st))), st


def test_the_check_sees_a_heavy_import(state, tmp_path):
    """The same check on a command that solves (``copter solve --help`` stays light; ``export`` writes MPS
    through HiGHS) finds the heavy modules: the assertion above can fail."""
    out = tmp_path / "x.mps"
    code, names = _imported(["export", "--state", str(state), "-o", str(out)], tmp_path)
    assert code == 0 and out.exists()
    assert {"numpy", "highspy"} <= names


def test_a_round_imports_neither_pandas_nor_scipy(state, tmp_path):
    """``copter step`` solves, so numpy/numba/pyarrow are expected; pandas (pulled in by pyarrow's shim on a
    string-array conversion when it is installed, 0.5-1 s) is not, and the round still succeeds with pandas
    kept out. The refused attempt itself is listed by importtime as ``pandas``; a real import would list its
    submodules. Neither is scipy nor PyYAML, which numba's own import loads only for a version check and
    for a ``.numba_config.yaml`` (``copter_cli.entry.skip_numba_extras``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from solver.prepare import prepare

    prepare(force=False)  # a stale stamp would make the step run the warm-up, which imports what rounds do not
    delta = tmp_path / "d.parquet"
    table = pa.table({"kind": ["var"], "var": ["x0"], "value": [0.75]})
    pq.write_table(table.replace_schema_metadata({"copter.format": "delta", "copter.version": "1"}), delta)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "copter_cli", "step", str(delta), "--state",
                           str(state), "--json"], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "import time:" in proc.stderr
    assert "pandas.core" not in proc.stderr
    # numba's optional imports (copter_cli.entry.skip_numba_extras) stay out too; the refused attempts are
    # listed as `scipy` and `yaml`
    names = {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines() if ln.startswith("import time:")}
    assert "numba.core.config" in names
    assert not {n for n in names if n.startswith(("scipy.", "yaml."))}, sorted(names)


def test_a_round_imports_no_executor_pool_or_numba_implementations(state, tmp_path):
    """A monolithic ``copter step`` with default options imports none of (issue #15, ~0.1-0.4 s of CPU per
    process): ``multiprocessing`` and ``concurrent.futures`` (``solver.partition.executor``, which checking an
    absent ``--executor`` does not need), and numba's implementation modules whose environments cached kernels name
    (``numba.np.arraymath``, ``numba.np.linalg``, ``numba.np.arrayobj``: ``solver.kernel_cache``), nor HiGHS (a
    warm PDHG round skips presolve: ``solver.lp.presolve`` imports ``solver.highs_bridge`` on first use)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from solver.prepare import prepare

    prepare(force=False)  # a stale stamp would make the step run the warm-up, which imports what rounds do not
    delta = tmp_path / "d.parquet"
    table = pa.table({"kind": ["var"], "var": ["x0"], "value": [0.25]})
    pq.write_table(table.replace_schema_metadata({"copter.format": "delta", "copter.version": "1"}), delta)
    st = tmp_path / "state"
    shutil.copytree(state, st)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "copter_cli", "step", str(delta), "--state",
                           str(st), "--json"], cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=str(ROOT), COPTER_WORKER="off"),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = {ln.rsplit("|", 1)[1].strip() for ln in proc.stderr.splitlines() if ln.startswith("import time:")}
    assert "numba.core.config" in names and "solver.lp.kernels" in names  # it did load kernels
    unwanted = {"multiprocessing", "concurrent.futures", "numba.np.arraymath",
                "numba.np.linalg", "numba.np.arrayobj", "highspy"}
    assert not names & unwanted, sorted(names & unwanted)


def test_pyarrow_converts_with_pandas_kept_out():
    """The finder is what pyarrow's pandas shim reads as "not installed" (a None in sys.modules made it
    read None.__version__ and every step exit 1)."""
    code = ("from formats.no_pandas import keep_pandas_out; keep_pandas_out()\n"
            "import pyarrow as pa; a = pa.array(['x', 'y']); print(a.to_numpy(zero_copy_only=False).tolist())")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-1500:]
    assert out.stdout.strip() == "['x', 'y']"


def test_plain_commands_do_not_import_rich(state, tmp_path):
    """A command that prints one plain line (or JSON) writes it without rich (``copter_cli.output.say``);
    ``show`` prints a rich table."""
    for args in (["--help"], ["version"], ["version", "--json"], ["--version"], ["rollback", "--state", str(state)],
                 ["rollback", "--state", str(state), "--json"], ["show", "--state", str(state), "--json"],
                 ["show", "--solution", "--state", str(state), "--json"],
                 ["show", "--solution", "--changes", "--state", str(state), "--json"]):
        code, names = _imported(args, tmp_path, full=True)
        assert code == 0, args
        assert not {"rich", "rich.console"} & names, (args, sorted(names))
    for args in (["show", "--state", str(state)], ["show", "--solution", "--changes", "--state", str(state)]):
        code, names = _imported(args, tmp_path, full=True)
        assert code == 0 and "rich.table" in names, args


def test_a_command_imports_only_its_own_command_module(state, tmp_path):
    """``copter show`` imports cmd_state alone, ``version`` no command module, ``--help`` and an unknown
    command all of them (their command list and suggestions are the whole app's)."""
    from copter_cli.app import COMMAND_MODULES

    every = {f"copter_cli.{m}" for m in COMMAND_MODULES}
    for args, want in ((["show", "--state", str(state), "--json"], {"copter_cli.cmd_state"}), (["version"], set()),
                       (["--version", "show"], {"copter_cli.cmd_state"}), (["worker", "--help"],
                                                                          {"copter_cli.cmd_worker"}),
                       (["--version"], set()), (["--help"], every), (["versoin"], every), ([], every)):
        code, names = _imported(args, tmp_path, full=True)
        assert code in (0, 2), args
        assert {n for n in names if n.startswith("copter_cli.cmd_")} == want, args


def test_the_command_table_is_what_the_modules_register():
    """``copter_cli.app.COMMAND_MODULES`` names every cmd_*.py module and exactly the commands its
    ``register`` adds (a command missing from it would not be found when named alone)."""
    import importlib

    import typer
    import typer.main

    from copter_cli.app import COMMAND_MODULES, OWN_COMMANDS

    files = {p.stem for p in (ROOT / "copter_cli").glob("cmd_*.py")}
    assert set(COMMAND_MODULES) == files
    for module, names in COMMAND_MODULES.items():
        app = typer.Typer()
        app.callback()(lambda: None)
        importlib.import_module(f"copter_cli.{module}").register(app)
        assert tuple(typer.main.get_command(app).commands) == names, module
        assert not set(names) & set(OWN_COMMANDS)


def test_a_lean_app_prints_the_same_help_and_errors_as_the_whole_app():
    """For every command, the app built for it alone and the whole app give the same output and exit code
    for its --help, a bad option and a missing value (the root's --help builds the whole app)."""
    from typer.testing import CliRunner

    from copter_cli.app import COMMAND_MODULES, OWN_COMMANDS, build, command_name

    whole = build()
    runner = CliRunner()
    names = [*OWN_COMMANDS, *(n for names in COMMAND_MODULES.values() for n in names)]
    for name in names:
        lean = build(name)
        for args in ([name, "--help"], [name, "--no-such-option"], [name, "--json", "--no-such-option"],
                     [name, "--state"]):
            a, b = runner.invoke(lean, args), runner.invoke(whole, args)
            assert (a.exit_code, a.output) == (b.exit_code, b.output), args
    assert set(typer_commands(build("show"))) == {"version", *COMMAND_MODULES["cmd_state"]}
    assert set(typer_commands(build("version"))) == {"version"}
    assert set(typer_commands(build("nonesuch"))) == set(names)
    for args in (["--version"], ["--version", "--no-such-option"], ["--version", "--json"], ["--help", "--version"],
                 ["--help", "show"], ["--help", "--version", "step"]):
        a, b = runner.invoke(build(command_name(args)), args), runner.invoke(whole, args)
        assert (a.exit_code, a.output) == (b.exit_code, b.output), args


def typer_commands(app) -> list[str]:
    import typer.main

    return list(typer.main.get_command(app).commands)


SAY_TEXTS = ["round 1: wrote /tmp/x.mps (3 variables, 2 constraints, 4 nonzeros)", "", "x" * 300, "a\nb", "é 漢 😀",
             "[bold]not markup[/bold] [yellow]", "a:smile:b", "tab\there", "cr\rlf", "bell\x07", "trailing ",
             "trailing \nline", "ratio 1:2 and 3 : 4", "::", "\x1b[31mred", "ends with newline\n"]


@pytest.mark.parametrize("terminal", [False, True])
def test_say_prints_what_rich_prints(monkeypatch, capsys, terminal):
    """``say`` without rich (the console not built yet) prints byte for byte what rich's console printed
    for the same text, and hands what rich would change (emoji codes, tabs, control characters, trailing
    whitespace) to rich."""
    import io

    from rich.console import Console

    from copter_cli import output

    fast = 0
    for text in SAY_TEXTS:
        lazy = output.LazyConsole(**output.CONSOLE_OPTIONS, force_terminal=terminal)
        monkeypatch.setattr(output, "console", lazy)
        output.say(text)
        got = capsys.readouterr().err
        buf = io.StringIO()
        opts = {k: v for k, v in output.CONSOLE_OPTIONS.items() if k != "stderr"}
        Console(file=buf, force_terminal=terminal, **opts).print(text, markup=False, highlight=False)
        assert got == buf.getvalue(), repr(text)
        fast += not lazy.built
    assert 5 <= fast < len(SAY_TEXTS)  # both ways were taken


def test_the_lazy_console_builds_on_first_use_and_again_after_init(monkeypatch, capsys):
    """The worker's child calls ``console.__init__`` again for its client's stderr: the next use builds a
    new rich Console (for the stderr and variables of that moment)."""
    from copter_cli import output

    lazy = output.LazyConsole(**output.CONSOLE_OPTIONS)
    assert not lazy.built
    lazy.print("x", markup=False)
    first = lazy.get()
    assert lazy.built and capsys.readouterr().err == "x\n"
    lazy.__init__(**output.CONSOLE_OPTIONS)
    assert not lazy.built and lazy.get() is not first


def test_export_imports_only_what_writing_mps_needs(state, tmp_path):
    """``export -o x.mps`` loads the round (pyarrow's IPC, numpy) and writes through HiGHS; the MPS reader's
    numba kernel, scipy and pyarrow's Parquet and compute modules (formats.parquet, the round outputs) stay
    out."""
    out = tmp_path / "x.mps"
    code, names = _imported(["export", "--state", str(state), "-o", str(out)], tmp_path, full=True)
    assert code == 0 and out.exists()
    assert {"numpy", "pyarrow", "highspy"} <= names
    assert not {"numba", "scipy", "pyarrow.parquet", "pyarrow.compute", "formats.parquet"} & names, sorted(names)


def test_numba_extras_are_refused_only_to_numba(tmp_path):
    """``skip_numba_extras`` refuses yaml to ``numba.core.config`` and scipy to ``numba`` alone: another importer
    gets them, and a ``.numba_config.yaml`` in the working directory is still read by numba."""
    code = ("import sys\nfrom copter_cli.entry import skip_numba_extras; skip_numba_extras()\nimport numba\n"
            "from numba.core import config\nprint('scipy' in sys.modules, 'yaml' in sys.modules, config.DEBUGINFO_DEFAULT)\n"
            "import scipy\ntry:\n    import yaml\nexcept ImportError:\n    yaml = None\n"
            "print(scipy.__name__, yaml.__name__ if yaml else 'no-yaml')")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_DEBUGINFO", None)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-1500:]
    has_yaml = importlib.util.find_spec("yaml") is not None  # PyYAML is no dependency (Ray brings it)
    assert out.stdout.split() == ["False", "False", "0", "scipy", "yaml" if has_yaml else "no-yaml"]
    if not has_yaml:
        return  # without PyYAML numba reads no .numba_config.yaml at all
    (tmp_path / ".numba_config.yaml").write_text("debuginfo: 1\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-1500:]
    assert out.stdout.split()[1:3] == ["True", "1"]
