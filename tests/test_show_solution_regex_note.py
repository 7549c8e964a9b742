"""``show --solution --client-regex R`` whose R matches no nonzero variable's name (a typo, or a pattern written
for another naming) put every variable into one ``(no client)`` group, exit 0, with no word about why: the
human view now adds a ``note:`` naming the regex (the JSON has ``client_regex`` and ``client: null``)."""

from __future__ import annotations

from tests.helpers import run_main, small_lp_state


def test_a_regex_matching_nothing_gets_a_note(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path)
    code, out, err = run_main(capsys, "show", "--solution", "--state", st, "--client-regex", r"job(?P<client>\d+)")
    assert code == 0, err
    notes = [ln for ln in (out + err).splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and r"'job(?P<client>\d+)'" in notes[0] and "(no client)" in notes[0], out + err


def test_a_matching_regex_or_none_gets_no_note(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path)
    for args in ([], ["--client-regex", r"x(?P<client>\d)"]):
        code, out, err = run_main(capsys, "show", "--solution", "--state", st, *args)
        assert code == 0 and "note:" not in out + err, out + err
