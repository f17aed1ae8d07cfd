"""A phrase list compiles into one matcher, and a bad `re:` entry is named in the error (the list is
compiled once; its entries are tried one by one only when that fails)."""

from __future__ import annotations

import re

import pytest

from usersim.lang.phrases import compiled


def test_a_list_matches_any_of_its_phrases_case_insensitively_latin_ones_as_whole_words():
    pat = compiled(("check in", "re:\\d+ 晚", "酒店"))
    assert pat is not None
    assert [m.group(0) for m in pat.finditer("CHECK  IN 3 晚 住酒店 checkinx")] == [
        "CHECK  IN",
        "3 晚",
        "酒店",
    ]
    assert pat.search("recheck in") is None  # a Latin phrase only as a whole word
    assert compiled(()) is None


def test_a_bad_pattern_names_itself_and_the_others_do_not_hide_it():
    with pytest.raises(ValueError, match=re.escape("pattern 're:(unclosed' is not a valid regex")):
        compiled(("fine", "re:(unclosed", "also fine"))
