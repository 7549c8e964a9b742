"""A state file that copter may not read (permission denied, EIO) is a fault of the environment (exit 7, the path
named), never damage: no command falls back to an older round, and ``step`` neither builds on one nor moves the
intact current round into ``abandoned/``; the state is byte-identical afterwards (every file's SHA-256, and
every folder). Damage proper (a missing file, another size or checksum) still falls back (tests/test_damaged_current.py).

The tests may run as root, for whom ``chmod 000`` denies nothing (CAP_DAC_OVERRIDE): the in-process tests make
the open of one path raise the OSError instead (``builtins.open`` and ``io.open``, which the checksum uses, and
``os.open``, which ``formats.regular``'s readers use); as root, a subprocess test also drops the privilege (``setpriv --bounding-set=-all``: root
without capabilities obeys file modes as a user does) and reads a file really denied by its mode. Not
``--reuid=nobody``: the solver's numba kernels are cached under the checkout, which nobody may not write (numba
then refuses ``cache=True``, or compiles every kernel again with another NUMBA_CACHE_DIR: minutes).
"""

from __future__ import annotations

import builtins
import errno
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from formats import checkpoint
from formats.checkpoint import StateStore
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.errors import EnvironmentFaultError
from tests.helpers import run_main, small_lp

ROOT = Path(__file__).resolve().parents[1]
_OPEN = io.open  # the real one, for state_digest under the ``deny`` fixture


def state_digest(root: Path) -> dict:
    """Every folder and file under ``root`` (relative path -> SHA-256 of the bytes; None for a folder) and mode."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        mode = p.lstat().st_mode
        if p.is_dir():
            out[rel] = (None, mode)
        else:
            with _OPEN(p, "rb") as f:
                out[rel] = (hashlib.sha256(f.read()).hexdigest(), mode)
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """Rounds 0 and 1 (round 1 changes x3's cost), solved once for the module, and a delta without base_round
    for the next round."""
    tmp = tmp_path_factory.mktemp("template")
    rounds.init(small_lp(), tmp / "st")
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp / "d1.parquet")
    rounds.step(tmp / "d1.parquet", tmp / "st")
    write_delta(Delta.concat([Delta.vars(["x4"], cost=[-3.0])]), tmp / "d2_nobase.parquet")
    return tmp


def two_rounds(template: Path, tmp: Path) -> tuple[Path, Path]:
    """A copy of the template's state in ``tmp`` (state folder, the delta without base_round)."""
    shutil.copytree(template / "st", tmp / "st", symlinks=True)
    shutil.copy(template / "d2_nobase.parquet", tmp / "d2_nobase.parquet")
    checkpoint._RECENT.clear()  # as a new process: round 1 is read from disk, its checksums verified
    return tmp / "st", tmp / "d2_nobase.parquet"


@pytest.fixture
def deny(monkeypatch):
    """``deny(path, code)``: every later open of ``path`` raises OSError(code) naming it, as the OS does for a
    file whose mode refuses the reader (EACCES) or a disk that cannot read it (EIO)."""
    real_open, real_io_open = builtins.open, io.open
    denied: dict[str, int] = {}

    def check(file):
        if isinstance(file, (str, os.PathLike)) and os.path.abspath(os.fspath(file)) in denied:
            code = denied[os.path.abspath(os.fspath(file))]
            raise OSError(code, os.strerror(code), os.fspath(file))

    def fake_open(file, *a, **k):
        check(file)
        return real_open(file, *a, **k)

    def fake_io_open(file, *a, **k):
        check(file)
        return real_io_open(file, *a, **k)

    real_os_open = os.open

    def fake_os_open(file, *a, **k):  # formats.regular's readers open state files with os.open (O_NONBLOCK)
        check(file)
        return real_os_open(file, *a, **k)

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_io_open)
    monkeypatch.setattr(os, "open", fake_os_open)

    def add(path: Path, code: int = errno.EACCES) -> None:
        denied[os.path.abspath(path)] = code

    return add


def fault_of(code: int, out: str, path: Path, name: str = "EACCES") -> dict:
    """The JSON error of an exit-7 read fault naming ``path``."""
    assert code == 7, out
    err = json.loads(out)["error"]
    assert err["kind"] == "environment" and err["errno"] == name, err
    assert err["file"] == str(path) and "cannot read" in err["message"], err
    return err


@pytest.mark.parametrize("name", ["EACCES", "EIO"])
@pytest.mark.parametrize("rel", ["gen-000001/state.arrow", "gen-000001/report.json"])
def test_step_on_an_unreadable_current_round_is_exit_7_and_moves_nothing(capsys, template, tmp_path, deny, rel, name):
    """The hunt's F4: the step built on round 0 (exit 0) and moved the intact round 1 into abandoned/."""
    st, d2 = two_rounds(template, tmp_path)
    before = state_digest(st)
    deny(st / rel, getattr(errno, name))
    code, out, err = run_main(capsys, "step", d2, "--state", st, "--json")
    fault_of(code, out, st / rel, name)
    assert "incomplete" not in err and "abandoned" not in err, err
    assert state_digest(st) == before
    assert not (st / "abandoned").exists() and (st / "CURRENT").read_text() == "1\n"


@pytest.mark.parametrize(("args", "rel"), [
    (("show",), "gen-000001/report.json"),  # was exit 3 "cannot read the report"
    (("show",), "CURRENT"),  # was: CURRENT unreadable, the newest complete generation used (exit 0)
    (("show",), "gen-000001/generation.json"),  # was: round 1 incomplete, round 0 shown (exit 0)
    (("show", "--solution"), "gen-000001/solution.parquet"),
    (("history",), "gen-000001/generation.json"),
    (("export", "-o", "{tmp}/e.parquet"), "gen-000001/problem/cost.arrow"),  # was exit 3 "damaged"
    (("rollback", "--to", "0"), "gen-000001/generation.json"),
])
def test_read_only_and_other_commands_report_an_unreadable_file_as_exit_7(capsys, template, tmp_path, deny, args, rel):
    st, _ = two_rounds(template, tmp_path)
    before = state_digest(st)
    deny(st / rel)
    code, out, err = run_main(capsys, *(a.format(tmp=tmp_path) for a in args), "--state", st, "--json")
    fault_of(code, out, st / rel)
    assert "warning" not in err, err  # no fall-back to round 0
    assert state_digest(st) == before
    assert not (tmp_path / "e.parquet").exists()


def test_step_with_an_unreadable_config_says_cannot_read(capsys, template, tmp_path, deny):
    """The hunt's F8 (b): an unreadable config.json made step say "config.json: cannot write"."""
    st, d2 = two_rounds(template, tmp_path)
    before = state_digest(st)
    deny(st / "config.json")
    code, out, _ = run_main(capsys, "step", d2, "--state", st, "--json")
    err = fault_of(code, out, st / "config.json")
    assert "cannot write" not in err["message"], err
    assert state_digest(st) == before


def test_history_with_an_unreadable_round_log_says_cannot_read(capsys, template, tmp_path, monkeypatch):
    """The hunt's F8 (c): history (it writes nothing) said "log/rounds: cannot write" for an unreadable log folder."""
    st, _ = two_rounds(template, tmp_path)
    folder = st / "log" / "rounds"
    assert folder.is_dir()
    real_iterdir = Path.iterdir

    def iterdir(self):
        if self == folder:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real_iterdir(self)

    before = state_digest(st)
    monkeypatch.setattr(Path, "iterdir", iterdir)
    code, out, _ = run_main(capsys, "history", "--state", st, "--json")
    err = fault_of(code, out, folder)
    assert "cannot write" not in err["message"], err
    assert state_digest(st) == before


def test_store_raises_for_an_unreadable_generation_and_cleanup_keeps_it(template, tmp_path, deny):
    """The library: damage() and current() raise EnvironmentFaultError (no fall-back), and cleanup(), which
    removes incomplete generations, leaves one with an unreadable generation.json where it is."""
    st, _ = two_rounds(template, tmp_path)
    store = StateStore(st)
    before = state_digest(st)
    deny(st / "gen-000001" / "generation.json")
    for call in (lambda: store.damage(1), lambda: store.current(), lambda: store.load(), store.cleanup):
        with pytest.raises(EnvironmentFaultError) as ex:
            call()
        assert ex.value.file == str(st / "gen-000001" / "generation.json") and ex.value.reason == "permission"
    assert state_digest(st) == before


def test_real_damage_still_falls_back_with_a_warning(capsys, template, tmp_path):
    """The other side of the line: a missing file of round 1 is damage; show uses round 0 and warns, as before."""
    st, _ = two_rounds(template, tmp_path)
    (st / "gen-000001" / "report.json").unlink()
    code, out, err = run_main(capsys, "show", "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 0, out
    assert "report.json is missing" in err and "using the newest complete generation, round 0" in err, err


# ---------------------------------------------------------------------------------- a real denied file (root only)

def _setpriv(denied: Path) -> list[str]:
    """The prefix that runs a command without root's capabilities (so ``denied``, mode 000, cannot be read), or
    skip."""
    if os.geteuid() != 0:
        pytest.skip("a non-root run already obeys file modes: the in-process tests cover it")
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    prefix = ["setpriv", "--bounding-set=-all", "--"]
    probe = subprocess.run([*prefix, sys.executable, "-c", "import sys, copter_cli; open(sys.argv[1]).close()",
                            str(denied)], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                           cwd="/", timeout=120)
    if "PermissionError" not in probe.stderr:
        pytest.skip(f"setpriv does not drop CAP_DAC_OVERRIDE here: {probe.returncode} {probe.stderr[-300:]}")
    return prefix


@pytest.mark.parametrize("rel", ["gen-000001/state.arrow", "gen-000001/report.json"])
def test_without_capabilities_a_chmod_000_file_of_the_current_round_is_exit_7(template, tmp_path, rel):
    st, d2 = two_rounds(template, tmp_path)
    (st / rel).chmod(0o000)
    prefix = _setpriv(st / rel)
    before = state_digest(st)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for args in (["step", str(d2)], ["show"]):
        res = subprocess.run([*prefix, sys.executable, "-m", "copter_cli", *args, "--state", str(st), "--json"],
                             capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
        if args[0] == "show" and rel.endswith("state.arrow"):  # show reads no solver state: round 1 as it is
            assert res.returncode == 0 and json.loads(res.stdout)["round"] == 1, res.stdout + res.stderr
        else:
            fault_of(res.returncode, res.stdout, st / rel)
        assert "incomplete" not in res.stderr and "abandoned" not in res.stderr, res.stderr
        assert state_digest(st) == before
    assert not (st / "abandoned").exists() and (st / "CURRENT").read_text() == "1\n"
