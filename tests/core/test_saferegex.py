"""Case regexes run on RE2 with Python's meaning, on `re` only when proven safe, and a pattern that
could hang is refused (issue #22). Patterns and texts are data under tests/core/data/."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import yaml

from usersim.core.regexrisk import risk
from usersim.core.saferegex import UnsafePatternError, case_regex, parse

DATA = Path(__file__).parent / "data"
PATTERNS = yaml.safe_load((DATA / "case_regexes.yaml").read_text(encoding="utf-8"))
TEXTS = yaml.safe_load((DATA / "regex_texts.yaml").read_text(encoding="utf-8"))
LIBRARY = Path(__file__).resolve().parents[2] / "usersim" / "cases"


@pytest.mark.parametrize("row", PATTERNS, ids=[r["pattern"] for r in PATTERNS])
def test_engine_or_refusal(row):
    if row["engine"] == "refused":
        with pytest.raises(UnsafePatternError) as exc:
            case_regex(row["pattern"])
        assert row["why"] in str(exc.value) and repr(row["pattern"]) in str(exc.value)
    else:
        assert case_regex(row["pattern"]).engine == row["engine"]


def _library_patterns() -> list[tuple[str, bool]]:
    """Every count.pattern, asked_clarification 're:' entry and graded new/old 're:' marker of the
    seed library."""
    found: list[tuple[str, bool]] = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "pattern" and isinstance(v, str):
                    found.append((v, False))
                if k in ("new", "old") and isinstance(v, list):  # graded markers: a string or alternatives
                    alts = [a for m in v for a in (m if isinstance(m, list) else [m])]
                    found.extend((a[3:], False) for a in alts if isinstance(a, str) and a.startswith("re:"))
                if k == "about" and isinstance(v, list):
                    found.extend(
                        (w[3:], True) for g in v for w in g if isinstance(w, str) and w.startswith("re:")
                    )
                walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)

    for path in sorted(LIBRARY.rglob("*.yaml")):
        walk(yaml.safe_load(path.read_text(encoding="utf-8")))
    return found


def test_every_library_pattern_runs():
    patterns = _library_patterns()
    assert len(patterns) >= 15  # the library's case regexes (C1-SF-07 now uses the estimates check)
    engines = {case_regex(p, ic).engine for p, ic in patterns}
    assert engines == {"re2", "re"}


@pytest.mark.parametrize("text", TEXTS)
def test_re2_gives_the_matches_python_gives(text):
    rows = [(r["pattern"], False) for r in PATTERNS if r["engine"] == "re2"] + _library_patterns()
    checked = 0
    for pattern, ignorecase in rows:
        compiled = case_regex(pattern, ignorecase)
        if compiled.engine != "re2" or risk(parse(pattern)):  # Python itself would hang on some texts
            continue
        flags = re.IGNORECASE if ignorecase else 0
        want = [(m.start(), m.end()) for m in re.finditer(pattern, text, flags)]
        got = [(m.start(), m.end()) for m in compiled.finditer(text)]
        assert got == want, pattern
        checked += 1
    assert checked >= 10


def test_unicode_classes_keep_python_meaning():
    for pattern, text, want in [
        (r"\w+", "中文_字", "中文_字"),
        (r"\d+", "٣٤5", "٣٤5"),
        (r"a\sb", "a\u3000b", "a\u3000b"),
        (r"[\S]+", "x\u3000y", "x"),
        (r"[^\s]+", "\u3000yz", "yz"),
        (r"(?a)\w+", "ab中", "ab"),
    ]:
        compiled = case_regex(pattern)
        assert compiled.engine == "re2" and compiled.search(text).group(0) == want, pattern


def test_a_pattern_that_hangs_python_runs_in_linear_time_on_re2():
    compiled = case_regex(r"(a+)+\Z")  # Python's re takes seconds at 24 characters, doubling per character
    assert compiled.engine == "re2"
    start = time.perf_counter()
    assert compiled.search("a" * 50_000 + "b") is None
    assert compiled.search("a" * 50_000).group(0) == "a" * 50_000
    assert time.perf_counter() - start < 1.0


def test_malformed_pattern_is_a_re_error_with_pythons_message():
    with pytest.raises(re.error) as exc:
        case_regex("(unclosed")
    assert "missing )" in str(exc.value)


def test_ignorecase_matches_either_case():
    assert case_regex("PARIS", True).search("to paris") is not None
    assert case_regex("PARIS").search("to paris") is None
