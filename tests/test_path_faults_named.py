"""Paths and folders the machine cannot use are named for what they are, with a documented exit code and nothing
changed (helper-232, session 58). Before: a removed working directory ended most commands "internal error:
FileNotFoundError" (exit 1) and ``show --state ../st`` called a sound state damaged; a service account without a
writable kernel cache ended "internal error: RuntimeError: cannot cache function" (exit 1); a delta that is a
symbolic-link loop ended exit 1, other inputs said "file not found", a state that is a loop was "config.json is
damaged", and an ``--out`` loop failed only after the round was stored."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from formats.faults import kernel_cache_fault
from formats.path_words import folder_words, missing_words
from tests.helpers import READ_ONLY_TREE, REPO, cli_json, small_lp_state, snapshot


def test_missing_words_say_what_the_path_is(tmp_path):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    (tmp_path / "dangling").symlink_to("nowhere.parquet")
    (tmp_path / "afile").write_text("x")
    assert missing_words(tmp_path / "a") == "is a symbolic-link loop (too many levels of symbolic links)"
    assert missing_words(tmp_path / "dangling") == "is a symbolic link to nowhere.parquet, which does not exist"
    assert missing_words(tmp_path / "afile" / "x") == f"passes through a file, not a folder ({tmp_path / 'afile'})"
    assert missing_words(tmp_path / "none.parquet", "delta file") == "delta file not found"
    assert missing_words(tmp_path / "afile") is None and missing_words(tmp_path) is None
    assert folder_words(tmp_path / "afile") == "is a file, not a folder"
    assert folder_words(tmp_path / "a") == "is a symbolic-link loop (too many levels of symbolic links)"
    assert folder_words(tmp_path / "none") == "does not exist"


def _error(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])["error"]


def test_link_loops_and_files_in_a_path_are_named_and_change_nothing(tmp_path):
    st, delta = small_lp_state(tmp_path)
    before = snapshot(st)
    loop, dangling, afile = tmp_path / "loop.parquet", tmp_path / "dangling.parquet", tmp_path / "afile"
    loop.symlink_to(tmp_path / "loop2.parquet")
    (tmp_path / "loop2.parquet").symlink_to(loop)
    dangling.symlink_to(tmp_path / "gone.parquet")
    afile.write_text("x")
    st_loop = tmp_path / "stloop"
    st_loop.symlink_to(tmp_path / "stloop2")
    (tmp_path / "stloop2").symlink_to(st_loop)
    base = tmp_path / "base.parquet"
    cases = [  # (argv, exit code, words)
        (["step", loop, "--state", st], 3, "is a symbolic-link loop"),  # was exit 1 (OSError in the delta's hash)
        (["solve", loop], 3, "is a symbolic-link loop"),  # was "file not found"
        (["solve", dangling], 3, f"is a symbolic link to {tmp_path / 'gone.parquet'}, which does not exist"),
        (["convert", loop, tmp_path / "x.mps"], 3, "is a symbolic-link loop"),
        (["show", "--state", st_loop], 3, "is a symbolic-link loop"),  # was "config.json is damaged"
        (["init", base, "--state", afile / "sub"], 3, f"passes through a file, not a folder ({afile})"),
        (["export", "--state", st, "-o", afile / "x.parquet"], 2, f"folder {afile} is a file, not a folder"),
        (["step", delta, "--state", st, "--out", st_loop], 2, "--out"),  # was refused after the round was stored
    ]
    for argv, code, words in cases:
        got, out = cli_json(*argv, "--json")
        err = _error(out)
        assert (got, err["code"]) == (code, code), (argv, out)
        assert words in err["message"] and "damaged" not in err["message"], (argv, err)
    assert snapshot(st) == before
    assert not (afile.parent / "x.mps").exists()


def test_a_removed_working_directory_is_an_environment_fault(tmp_path):
    """Relative and absolute state paths alike: exit 7 naming the folder, the state unchanged."""
    st, delta = small_lp_state(tmp_path)
    before = snapshot(st)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    for argv in (["show", "--state", "../st"], ["step", str(delta), "--state", str(st)]):
        script = ('mkdir gone && cd gone && rmdir ../gone && exec "$0" -m copter_cli "$@" --json')
        proc = subprocess.run(["bash", "-c", script, sys.executable, *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 7, (argv, proc.stderr[-2000:])
        err = _error(proc.stdout)
        assert err["reason"] == "working_directory" and err["file"] == str(tmp_path / "gone"), err
        assert "no longer exists" in err["message"] and "Traceback" not in proc.stderr, proc.stderr
    assert snapshot(st) == before


def test_numba_without_a_cache_folder_is_an_environment_fault():
    err = RuntimeError("cannot cache function 'find_entries_kernel': no locator available for file "
                       "'/opt/copter/solver/differential/kernels.py'")
    fault = kernel_cache_fault(err)
    assert fault is not None and fault.reason == "kernel_cache", fault
    assert fault.file == "/opt/copter/solver/differential/__pycache__"
    assert "NUMBA_CACHE_DIR" in str(fault) and "copter prepare" in str(fault)
    assert kernel_cache_fault(RuntimeError("something else")) is None
    assert kernel_cache_fault(ValueError("no locator available for file 'x.py'")) is None


NO_CACHE = READ_ONLY_TREE + r'''
from copter_cli.app import main
main(["solve", sys.argv[2], "--json"])
'''


def test_a_service_account_without_a_writable_cache_gets_exit_7(tmp_path):
    """A read-only tree (played: numba's in-tree locator refused for this checkout), an unwritable NUMBA_CACHE_DIR
    and an unwritable user cache (XDG_CACHE_HOME under /proc, where not even root creates a folder): numba has no
    folder to keep the kernels in. Checked once as a real non-root user (session 58's note)."""
    from formats.io import write_problem
    from tests.helpers import small_lp

    model = tmp_path / "m.parquet"
    write_problem(small_lp(), model)
    env = {**os.environ, "COPTER_WORKER": "off", "PYTHONPATH": str(REPO), "NUMBA_CACHE_DIR": "/proc/copter-no-cache",
           "XDG_CACHE_HOME": "/proc/copter-no-cache", "HOME": "/proc/copter-no-home"}
    proc = subprocess.run([sys.executable, "-c", NO_CACHE, str(REPO), str(model)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 7, proc.stderr[-2000:]
    err = _error(proc.stdout)
    assert err["reason"] == "kernel_cache" and "NUMBA_CACHE_DIR=/proc/copter-no-cache" in err["message"], err


def test_step_and_compare_on_a_missing_state_exit_3_before_any_compile(tmp_path, monkeypatch, capsys):
    """helper-234: ``copter step`` on a mistyped --state compiled every kernel first (76 s on a stale install), then
    said the state does not exist."""
    from copter_cli import cmd_prepare
    from tests.helpers import run_main

    def no_compile():
        raise AssertionError("compiled before the state was checked")

    monkeypatch.setattr(cmd_prepare, "ensure_prepared", no_compile)
    delta = tmp_path / "d.parquet"
    delta.write_bytes(b"")
    for argv in (["step", delta, "--state", tmp_path / "nostate"], ["compare", "--state", tmp_path / "nostate"]):
        code, out, _ = run_main(capsys, *argv, "--json")
        assert code == 3 and "not an initialised copter state" in _error(out)["message"], (argv, out)


def test_a_generator_without_a_kernel_cache_says_one_line_and_exits_7():
    """The example generators import the workloads at their top: numba's "no locator available" there was a
    traceback and exit 1 (helper-234); now copter's exit-7 line, as the CLI says it."""
    import examples.data as data

    err = RuntimeError("cannot cache function 'f': no locator available for file '/opt/copter/solver/x.py'")
    calls = []
    hook = data._one_line_faults(lambda *a: calls.append(a))
    hook(RuntimeError, ValueError("other"), None)
    assert calls and calls[0][1].args == ("other",)  # anything else goes to the previous hook
    import os as _os

    exits = []
    real_exit = _os._exit
    try:
        _os._exit = exits.append
        hook(RuntimeError, err, None)
    finally:
        _os._exit = real_exit
    assert exits == [7]
