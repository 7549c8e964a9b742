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
    # the two names printed alike ('café/x' twice, helper-209): the combining mark is shown escaped
    assert "new variable 'cafe\\u0301/x' is the same text as variable 'café/x'" in str(err.value), str(err.value)
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


# helper-212: the Arabic letter mark and the direction isolates (U+061C, U+2066-9), the combining grapheme joiner, a
# variation selector, the Hangul filler and a tag character passed the hand-made list: Unicode's
# Default_Ignorable_Code_Point now decides (solver.model.invisible)
@pytest.mark.parametrize("hidden", ["\u200b", "\ufeff", "\u00ad", "\u2060", "\u200e", "\u061c", "\u2066", "\u2069",
                                    "\u034f", "\ufe0f", "\u3164", "\U000e0041"])
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


def test_two_new_names_one_of_them_ascii_that_differ_by_an_invisible_character_are_refused(state):
    """'Q' + U+200B and 'Q', both new in one delta, were both added (helper-209): the ASCII one was never compared."""
    before = _digest(state)
    for names in (["Q\u200b", "Q"], ["Q", "Q\u200b"]):
        d = Delta.concat([Delta.vars(names, cost=[-1.0, -1.0]), Delta.coefs(var=names, con=["cap", "cap"],
                                                                              value=[1.0, 1.0])])
        with pytest.raises(ValidationError, match="only by invisible characters \\(U\\+200B") as err:
            rounds.step(d, state)
        assert "row 1" in str(err.value), str(err.value)  # the later of the two
    assert _digest(state) == before


@pytest.mark.parametrize("names", [["R09", "R09\u200b"], [NFC, NFD], ["\u00adx", "x"]])
def test_a_problem_file_with_two_names_that_print_alike_is_refused(tmp_path, names):
    """A problem file is a delta applied to the empty problem: its twins were both kept (helper-209), through
    ``read_problem`` (init, solve, convert) as through the library."""
    from formats.io import read_problem, write_delta
    from formats.parquet import delta_to_problem

    d = Delta.concat([Delta.vars(names, cost=[1.0, 1.0], upper=[10.0, 10.0]), Delta.cons(["c"], lower=[1.0]),
                      Delta.coefs(var=names, con=["c", "c"], value=[1.0, 1.0])], format="problem")
    with pytest.raises(ValidationError, match="they print alike"):
        delta_to_problem(d)
    write_delta(d, tmp_path / "p.parquet")
    with pytest.raises(ValidationError, match="they print alike"):
        read_problem(tmp_path / "p.parquet")


def test_a_problem_file_with_distinct_non_ascii_and_categorical_names_is_read(tmp_path):
    """The check's ASCII shortcut reads dictionary-encoded name columns (pandas' category) too."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from formats.io import read_problem

    names = ["zoë/x", "zoe/x", "Q", "Q2"]
    table = pa.table({"kind": ["var"] * 4 + ["con"] + ["coef"] * 4, "var": names + [None] + names,
                      "con": [None] * 4 + ["c"] + ["c"] * 4, "value": [1.0] * 4 + [None] + [1.0] * 4,
                      "lower": [0.0] * 4 + [1.0] + [None] * 4, "upper": [10.0] * 4 + [None] * 5})
    table = table.set_column(1, "var", table.column("var").dictionary_encode())
    pq.write_table(table, tmp_path / "p.parquet")
    assert read_problem(tmp_path / "p.parquet").col_names.tolist() == names
    twins = table.set_column(1, "var", pa.array(["Q", "Q\u200b", "a", "b", None, "Q", "Q\u200b", "a", "b"])
                             .dictionary_encode())
    pq.write_table(twins, tmp_path / "twins.parquet")
    with pytest.raises(ValidationError, match="only by invisible characters"):
        read_problem(tmp_path / "twins.parquet")
