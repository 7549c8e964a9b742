"""Names that print alike in an MPS file: the same text in another Unicode normalisation (NFC 'café' and NFD
'cafe' + U+0301), or one name plus invisible characters ('R09' and 'R09' + U+200B). A Parquet model or delta with
such a pair was refused (exit 3 naming both), the same model in MPS was read, and ``convert``/``export`` then wrote
a Parquet file that every command refuses (helper-227). The MPS reader now refuses the pair the same way."""

from __future__ import annotations

import json
import random
import unicodedata

import numpy as np
import pytest

from formats.mps import read_mps
from solver.differential.intent import first_twin
from solver.model.errors import ValidationError
from solver.model.invisible import INVISIBLE
from tests.helpers import run_main

TWIN_COLUMNS = "NAME t\nROWS\n N obj\n G g1\nCOLUMNS\n café obj 1 g1 1\n cafe\u0301 obj 2 g1 1\nRHS\n rhs g1 1\nENDATA\n"
TWIN_ROWS = ("NAME t\nROWS\n N obj\n G R09\n G R09{mark}\nCOLUMNS\n x obj 1 R09 1\n x R09{mark} 1\nRHS\n rhs R09 1\n"
             "ENDATA\n")


@pytest.mark.parametrize(("text", "line", "entity", "words"), [
    (TWIN_COLUMNS, 7, "cafe\u0301", "another Unicode normalisation"),
    (TWIN_ROWS.format(mark="\u200b"), 5, "R09\u200b", "only by invisible characters (U+200B"),
    (TWIN_ROWS.format(mark="\ufe0f"), 5, "R09\ufe0f", "only by invisible characters (U+FE0F"),
])
def test_names_that_print_alike_are_refused_naming_both_and_the_line(tmp_path, capsys, text, line, entity, words):
    path = tmp_path / "twin.mps"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError) as exc:
        read_mps(path)
    assert exc.value.line == line and exc.value.entity == entity and words in exc.value.message
    code, out, _ = run_main(capsys, "convert", path, tmp_path / "twin.parquet", "--json")
    assert code == 3 and json.loads(out)["error"]["line"] == line
    assert not (tmp_path / "twin.parquet").exists()


def test_distinct_non_ascii_names_are_read(tmp_path):
    path = tmp_path / "ok.mps"
    path.write_text("NAME t\nROWS\n N obj\n G Zürich\n G Zurich\nCOLUMNS\n café obj 1 Zürich 1\n cafe obj 2 Zurich 1\n"
                    "RHS\n rhs Zürich 1\nENDATA\n", encoding="utf-8")
    p = read_mps(path)
    assert list(p.col_names) == ["café", "cafe"] and list(p.row_names) == ["Zürich", "Zurich"]


def _first_twin_reference(names: list[str]):
    """Plain Python: the first name whose NFC form without invisible characters an earlier name has."""
    seen: dict[str, int] = {}
    for i, nm in enumerate(names):
        key = INVISIBLE.sub("", unicodedata.normalize("NFC", nm))
        if key in seen:
            return i, seen[key]
        seen[key] = i
    return None


def test_first_twin_matches_its_plain_python_reference():
    rng = random.Random(7)
    alphabet = ["a", "b", "e", "é", "e\u0301", "\u200b", "\ufe0f", "Z", "1"]
    for _ in range(400):
        names = list(dict.fromkeys("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3)))
                                   for _ in range(rng.randint(1, 12))))
        assert first_twin(np.array(names, dtype=object)) == _first_twin_reference(names), names
