"""The load-balancing scenario's ``--scale`` is SHARDSxSERVERS, both numbers, in ``copter demo --domain lb`` and
``examples/lb/generate.py`` alike: a lone number is exit 2 naming the accepted form and the pair it used to mean.
``demo --domain lb --scale 16`` silently ran 16 shards on 16 // 8 = 2 servers, a rule no help text stated."""

from __future__ import annotations

import json

import pytest

from examples.lb import generate as lb_generate
from tests.helpers import run_main


@pytest.mark.parametrize("scale,meant", [("16", "16x2"), ("1024", "1024x128")])
def test_demo_refuses_a_lone_number(capsys, scale, meant):
    code, out, _ = run_main(capsys, "demo", "--domain", "lb", "--scale", scale, "--rounds", "0", "--json")
    error = json.loads(out)["error"]
    assert code == 2 and "SHARDSxSERVERS" in error["message"] and f"e.g. {meant}" in error["message"], error


def test_generate_refuses_a_lone_number_too(tmp_path, capsys):
    assert lb_generate.main(["--out", str(tmp_path / "lb"), "--rounds", "1", "--scale", "16"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: load-balancing --scale is SHARDSxSERVERS") and "16x2" in err, err
    assert not (tmp_path / "lb").exists()


def test_both_numbers_still_run(capsys):
    code, out, _ = run_main(capsys, "demo", "--domain", "lb", "--scale", "16x2", "--rounds", "0", "--json")
    assert code == 0 and json.loads(out)["scale"] == "16x2", out
