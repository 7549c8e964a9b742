"""An example generator whose data is not found says so in one line (user trial 18: ``examples/sia/generate.py``
without ``COPTER_DATA`` printed a Python traceback): ``error:`` naming the missing file and what
``$COPTER_DATA`` is, exit code 3 (bad input), nothing written."""

from __future__ import annotations

from examples.sia import generate as sia_generate
from examples.te import generate as te_generate


def test_sia_without_its_data_is_one_error_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COPTER_DATA", str(tmp_path / "nowhere"))
    code = sia_generate.main(["--out", str(tmp_path / "out"), "--gavel", "--scale", "64"])
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "simulation_throughputs_isolated_flat.csv" in err and f"$COPTER_DATA is {tmp_path / 'nowhere'}" in err
    assert not (tmp_path / "out").exists()


def test_te_without_its_data_alike(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COPTER_DATA", str(tmp_path / "nowhere"))
    code = te_generate.main(["--out", str(tmp_path / "out"), "--topology", "B4.json"])
    assert code == 3 and capsys.readouterr().err.startswith("error: ")
