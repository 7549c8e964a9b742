"""An output name that is a device, FIFO or socket (or a link to one: ``/dev/null``, ``/dev/stdout``) is refused
before any work, exit 2 naming the option: copter writes a new file next to the destination and renames it over
the name (docs/statuses-and-exit-codes.md "Symbolic links"), which put a regular file in the device's place. Run as root, ``copter
report -o /dev/null`` replaced the system's /dev/null with an HTML page (and ``solve/export/convert/diff`` did
the same to a node with their extension). A ``--out`` folder holding such a node under an output's name is
refused the same way. The node is left as it was."""

from __future__ import annotations

import json
import os
import stat

import pytest

from tests.helpers import OUTPUT_COMMANDS, output_command_inputs, run_main, small_lp_state


def _fifo(path):
    os.mkfifo(path)
    return path


def _is_fifo(path) -> bool:
    return stat.S_ISFIFO(os.lstat(path).st_mode)


@pytest.mark.parametrize("name, command", OUTPUT_COMMANDS)
def test_a_fifo_at_the_output_name_is_refused_and_kept(tmp_path, capsys, name, command):
    st, base = output_command_inputs(tmp_path, command)
    node = _fifo(tmp_path / name)
    link = tmp_path / ("link-" + name)
    link.symlink_to(node)  # /dev/stdout is such a link
    for target in (node, link):
        argv = [a.format(base=base, st=st, dest=target) for a in command]
        code, out, err = run_main(capsys, *argv, "--json")
        error = json.loads(out)["error"]
        assert code == 2 and error["kind"] == "usage" and "FIFO" in error["message"], (argv, code, out, err)
        assert _is_fifo(node) and link.is_symlink()


def test_an_out_folder_holding_a_fifo_under_an_outputs_name_is_refused(tmp_path, capsys):
    st, d = small_lp_state(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    node = _fifo(out_dir / "solution.parquet")
    current = (st / "CURRENT").read_bytes()
    code, out, err = run_main(capsys, "step", d, "--state", st, "--out", out_dir, "--json")
    assert code == 2 and "FIFO" in json.loads(out)["error"]["message"], (code, out, err)
    assert _is_fifo(node) and (st / "CURRENT").read_bytes() == current  # refused before the round


def test_the_png_folder_holding_a_fifo_under_a_charts_name_is_refused(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    st, _ = small_lp_state(tmp_path)
    png = tmp_path / "png"
    png.mkdir()
    node = _fifo(png / "churn.png")
    code, out, err = run_main(capsys, "report", "--state", st, "-o", tmp_path / "r.html", "--png", png, "--json")
    assert code == 2 and "FIFO" in json.loads(out)["error"]["message"], (code, out, err)
    assert _is_fifo(node)
