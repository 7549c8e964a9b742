"""``show --solution --client-regex R`` whose R matches no nonzero variable's name (a typo, or a pattern written
for another naming) put every variable into one ``(no client)`` group, exit 0, with no word about why: the
result now carries a warning naming the regex, printed as a ``warning:`` line and in the JSON's ``warnings``
(it was a ``note:`` of the human view alone, which ``--json`` dropped)."""

from __future__ import annotations

import json
import shlex

from tests.helpers import run_main, small_lp_state

REGEX = r"job(?P<client>\d+)"


def test_a_regex_matching_nothing_gets_a_warning_in_both_views(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path)
    code, out, err = run_main(capsys, "show", "--solution", "--state", st, "--client-regex", REGEX)
    assert code == 0, err
    lines = [ln for ln in (out + err).splitlines() if "matches the client regex" in ln]
    assert len(lines) == 1 and lines[0].startswith("warning:") and shlex.quote(REGEX) in lines[0], out + err
    assert "(no client)" in lines[0]
    code, out, err = run_main(capsys, "show", "--solution", "--state", st, "--client-regex", REGEX, "--json")
    res = json.loads(out)
    assert code == 0 and len(res["warnings"]) == 1 and shlex.quote(REGEX) in res["warnings"][0], out
    assert all(c["client"] is None for c in res["clients"])


def test_a_matching_regex_or_none_gets_no_warning(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path)
    for args in ([], ["--client-regex", r"x(?P<client>\d)"]):
        code, out, err = run_main(capsys, "show", "--solution", "--state", st, *args)
        assert code == 0 and "client regex" not in out + err, out + err
        code, out, err = run_main(capsys, "show", "--solution", "--state", st, *args, "--json")
        assert code == 0 and "warnings" not in json.loads(out), out
