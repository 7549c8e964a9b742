"""Helpers of the report tests (tests/test_report*.py): read the data attributes of a report page's tables
and check them against ``solver.rounds.history`` rows."""

from __future__ import annotations

from html.parser import HTMLParser


class RowAttrs(HTMLParser):
    """Collects the data-* attributes of every <tr> of a given table id."""

    def __init__(self, table_id: str):
        super().__init__()
        self.table_id, self.inside, self.rows = table_id, False, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.inside = a.get("id") == self.table_id
        elif tag == "tr" and self.inside and "data-round" in a:
            self.rows.append({k[5:]: v for k, v in a.items() if k.startswith("data-")})

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False


def table_rows(html_text: str, table_id: str = "rounds") -> list[dict]:
    p = RowAttrs(table_id)
    p.feed(html_text)
    return p.rows


def _value(row: dict, key: str):
    return row["seconds"][key[8:]] if key.startswith("seconds-") else row[key.replace("-", "_")]


def assert_page_numbers_are_the_logs(rows_in_page: list[dict], history: list[dict]) -> None:
    """Every data attribute of the rounds table equals the history row's value exactly (floats by repr)."""
    assert len(rows_in_page) == len(history)
    for got, want in zip(rows_in_page, history, strict=True):
        assert got["kind"] == want["kind"]
        for key, text in got.items():
            if key == "kind":
                continue
            v = _value(want, key)
            if v is None:
                assert text == "", (key, text)
            elif isinstance(v, bool):
                assert text == ("true" if v else "false"), key
            elif isinstance(v, float):
                assert float(text) == v, (key, text, v)
            else:
                assert text == str(v), (key, text, v)
