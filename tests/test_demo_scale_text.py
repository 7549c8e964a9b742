"""``copter demo --scale`` reads its numbers by the rule of every numeric option (``formats/number_text.py``): ASCII
digits, nothing around them. ``--scale ２４`` (fullwidth), ``--scale " 24"`` and ``--scale ６４x８`` ran the
24-node ring and the 64 x 8 balancer (exit 0) where ``--top １０`` and ``--k " 5"`` are usage errors."""

from __future__ import annotations

import pytest

from solver.model.errors import UsageError
from solver.workloads import make_scenario
from solver.workloads.common import parse_scale
from tests.helpers import run_main


@pytest.mark.parametrize("text", ["２４", " 24", "24 ", "٢٤", "2_4"])
def test_a_number_copter_does_not_read_is_no_scale(text):
    assert parse_scale(text, None) == text  # not a number: the domain refuses it, naming it
    with pytest.raises(UsageError):
        make_scenario("te", text, seed=0)


@pytest.mark.parametrize(("domain", "text"), [("te", "２４"), ("sia", " 128"), ("lb", "６４x８"), ("lb", "64x 8")])
def test_demo_refuses_it_with_a_usage_error(capsys, domain, text):
    code, out, err = run_main(capsys, "demo", "--domain", domain, "--rounds", "0", "--scale", text)
    assert code == 2 and "scale" in err and repr(text) in err, (code, out, err)


def test_ascii_scales_still_read():
    assert parse_scale("24", None) == 24 and parse_scale("1024x128", None) == (1024, 128)
    assert parse_scale("64X8", None) == (64, 8) and parse_scale("0024", None) == 24
