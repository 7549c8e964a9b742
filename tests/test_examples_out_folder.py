"""The example generators' ``--out`` and options (helper-238, session 59): a stream written into a folder of an earlier,
longer one left that stream's deltas beside the new base, and ``copter step out/delta_*.parquet`` took them as
rounds of the new stream without a word (now refused before anything is written; never deleted: a user's own); negative counts, a file as ``--out`` and impossible option values ended
in Python tracebacks (or, ``--rounds -2``, a base alone and exit 0)."""

from __future__ import annotations

import pytest

from examples.lb import generate as lb_generate
from examples.sia import generate as sia_generate
from examples.te import generate as te_generate
from formats.io import read_delta


def test_a_folder_holding_another_streams_files_is_refused_and_left_as_it_was(tmp_path, capsys):
    out = tmp_path / "out"
    assert te_generate.main(["--out", str(out), "--scale", "4", "--rounds", "3"]) == 0
    (out / "notes.txt").write_text("mine")  # not a generator's file name
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for args, named in ((["--rounds", "1", "--seed", "5"], "(delta_0002.parquet, delta_0003.parquet)"),
                        (["--rounds", "3", "--mps"], "(base.parquet)")):
        with pytest.raises(SystemExit) as e:
            te_generate.main(["--out", str(out), "--scale", "4", *args])
        err = capsys.readouterr().err
        assert e.value.code == 2 and f"holds files of another stream {named}" in err, err
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # nothing written, nothing deleted


def test_the_same_or_a_longer_stream_overwrites_its_own_files(tmp_path):
    out = tmp_path / "out"
    assert te_generate.main(["--out", str(out), "--scale", "4", "--rounds", "2"]) == 0
    assert te_generate.main(["--out", str(out), "--scale", "4", "--rounds", "3", "--seed", "5"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["base.parquet", "delta_0001.parquet", "delta_0002.parquet",
                                                     "delta_0003.parquet"]
    assert read_delta(out / "delta_0003.parquet").base_round == 2


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
