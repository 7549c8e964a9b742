"""The example generators' ``--out`` and options (helper-238, session 59): a stream written into a folder of an earlier,
longer one left that stream's deltas beside the new base, and ``copter step out/delta_*.parquet`` took them as
rounds of the new stream without a word; negative counts, a file as ``--out`` and impossible option values ended
in Python tracebacks (or, ``--rounds -2``, a base alone and exit 0)."""

from __future__ import annotations

import pytest

from examples.lb import generate as lb_generate
from examples.sia import generate as sia_generate
from examples.te import generate as te_generate
from formats.io import read_delta


def test_a_shorter_stream_removes_the_deltas_and_base_an_earlier_one_left(tmp_path, capsys):
    out = tmp_path / "out"
    assert te_generate.main(["--out", str(out), "--scale", "4", "--rounds", "3"]) == 0
    (out / "notes.txt").write_text("mine")  # not a generator's file name: left alone
    assert te_generate.main(["--out", str(out), "--scale", "4", "--rounds", "1", "--seed", "5", "--mps"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["base.mps", "delta_0001.parquet", "notes.txt"]
    err = capsys.readouterr().err
    assert "removed 3 file(s) of an earlier stream" in err and "delta_0003.parquet" in err
    assert read_delta(out / "delta_0001.parquet").base_round == 0


@pytest.mark.parametrize("main,args,words", [
    (te_generate.main, ["--rounds", "-2"], "argument --rounds: -2 is below 0"),
    (te_generate.main, ["--seed", "-1"], "argument --seed: -1 is below 0"),
    (te_generate.main, ["--paths", "0"], "argument --paths: 0 is below 1"),
    (te_generate.main, ["--rounds", "x"], "argument --rounds: 'x' is not a whole number"),
    (sia_generate.main, ["--jobs", "-3"], "argument --jobs: -3 is below 1"),
    (lb_generate.main, ["--mem", "-5"], "argument --mem: -5 is below 1"),
])
def test_an_impossible_option_value_is_exit_2_naming_it(tmp_path, capsys, main, args, words):
    with pytest.raises(SystemExit) as e:
        main(["--out", str(tmp_path / "out"), *args])
    err = capsys.readouterr().err
    assert e.value.code == 2 and words in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


def test_a_file_as_out_is_exit_2_naming_it(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("x")
    with pytest.raises(SystemExit) as e:
        te_generate.main(["--out", str(f), "--scale", "4", "--rounds", "1"])
    assert e.value.code == 2 and f"--out {f} is a file, not a folder" in capsys.readouterr().err
    assert f.read_text() == "x"
