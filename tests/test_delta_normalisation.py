"""Names that are the same text in two Unicode normalisations (NFC 'café' vs NFD 'cafe' + U+0301) print alike but
are different names. A delta from a tool that normalises differently (an adversarial hunt: macOS file names, some
CSV paths) added a visually identical second variable without a word, or was refused with "did you mean
'café/x'?" where both names looked the same. Now such a new entity is refused naming the normalisation, and the
suggestion says what differs."""

from __future__ import annotations

import hashlib
import unicodedata

import pytest

from solver import rounds
from solver.model.delta import Delta
from solver.model.errors import ValidationError

NFC = unicodedata.normalize("NFC", "café/x")
NFD = unicodedata.normalize("NFD", "café/x")


def _base() -> Delta:
    return Delta.concat([Delta.vars([NFC, "b/x"], cost=[-1.0, -2.0], upper=[10, 10]), Delta.cons(["cap"], upper=[12.0]),
                         Delta.coefs(var=[NFC, "b/x"], con=["cap", "cap"], value=[1.0, 1.0])])


@pytest.fixture
def state(tmp_path):
    from formats.parquet import delta_to_problem

    st = tmp_path / "st"
    rounds.init(delta_to_problem(_base()), st)
    return st


def _digest(folder) -> dict:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_new_name_that_is_an_existing_ones_text_in_nfd_is_refused(state):
    before = _digest(state)
    d = Delta.concat([Delta.vars([NFD], cost=[-5.0]), Delta.coefs(var=[NFD], con=["cap"], value=[1.0])])
    with pytest.raises(ValidationError, match="another Unicode normalisation") as err:
        rounds.step(d, state)
    assert repr(NFD) in str(err.value) and repr(NFC) in str(err.value)
    assert _digest(state) == before


def test_two_new_names_of_the_same_text_are_refused(state):
    a, b = unicodedata.normalize("NFC", "zoë/y"), unicodedata.normalize("NFD", "zoë/y")
    d = Delta.concat([Delta.vars([a, b], cost=[-1.0, -1.0]), Delta.coefs(var=[a, b], con=["cap", "cap"],
                                                                         value=[1.0, 1.0])])
    with pytest.raises(ValidationError, match="another Unicode normalisation"):
        rounds.step(d, state)


def test_the_suggestion_for_an_unknown_name_says_it_differs_in_normalisation(state):
    with pytest.raises(ValidationError, match="same text in another Unicode normalisation: this name is NFD"):
        rounds.step(Delta.vars([NFD], cost=[-5.0]), state)


def test_new_non_ascii_names_without_a_twin_and_a_renormalised_re_add_are_accepted(state):
    d = Delta.concat([Delta.vars(["naïve/z"], cost=[-1.0], upper=[1.0]),
                      Delta.coefs(var=["naïve/z"], con=["cap"], value=[1.0])])
    assert rounds.step(d, state)["status"] == "OPTIMAL"
    # the NFC name dropped and its NFD twin added in one delta: no second one
    d = Delta.concat([Delta.drop_vars([NFC]), Delta.vars([NFD], cost=[-1.0], upper=[10.0]),
                      Delta.coefs(var=[NFD], con=["cap"], value=[1.0])])
    assert rounds.step(d, state)["status"] == "OPTIMAL"


@pytest.mark.parametrize("hidden", ["\u200b", "\ufeff", "\u00ad", "\u2060", "\u200e"])
def test_a_new_name_that_differs_only_by_an_invisible_character_is_refused(state, hidden):
    """helper-188: a constraint 'R09' + U+200B was added beside 'R09' without a word (copied text carries them)."""
    before = _digest(state)
    twin = "ca" + hidden + "p"
    with pytest.raises(ValidationError, match="only by invisible characters") as err:
        rounds.step(Delta.concat([Delta.cons([twin], upper=[5.0]),
                                  Delta.coefs(var=["b/x"], con=[twin], value=[1.0])]), state)
    assert f"U+{ord(hidden):04X}" in str(err.value) and "'cap'" in str(err.value)
    assert _digest(state) == before
    # and against another new name of the same delta, a non-ASCII one too
    with pytest.raises(ValidationError, match="only by invisible characters"):
        names = ["zoë", "zo" + hidden + "ë"]
        rounds.step(Delta.concat([Delta.cons(names, upper=[1.0, 1.0]),
                                  Delta.coefs(var=["b/x", "b/x"], con=names, value=[1.0, 1.0])]), state)


def test_visible_non_ascii_names_are_untouched_by_the_invisible_rule(state):
    d = Delta.concat([Delta.cons(["cap\u00e9"], upper=[5.0]), Delta.coefs(var=["b/x"], con=["cap\u00e9"], value=[1.0])])
    assert rounds.step(d, state)["status"] == "OPTIMAL"
