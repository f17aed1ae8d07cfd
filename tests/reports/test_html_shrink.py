"""The report's shrunk-cases section: what it shows per shrunk record, escaped, and nothing without one."""

from __future__ import annotations

from tests.reports.factory import record
from usersim.reports.html_shrink import shrink_section


def _entry(**over):
    return {
        "record": "CASE-1|r0",
        "check": 'final_state {"expect": {}}',
        "against": "python:good:agent",
        "case_file": "reg/CASE-1-MIN-abc123.yaml",
        "sizes": {"turns": [9, 3], "facts": [12, 2]},
        "shrunk": "9 turns → 3, 12 facts → 2",
        "runs_used": 41,
        "budget": 100,
        "complete": True,
        "conversation": [
            {"role": "user", "content": "<b>hi</b>", "tools": [], "history": True},
            {"role": "assistant", "content": "", "tools": ["block_card"], "history": False},
        ],
    } | over


def test_each_shrunk_record_links_its_original_and_shows_sizes_and_conversation():
    html = shrink_section([record("CASE-1")], {"shrinks": [_entry()]})
    assert 'id="shrunk"' in html and "Shrunk cases (1)" in html
    assert '<a href="#r0">CASE-1|r0</a>' in html  # the original's transcript further down
    assert '<td>user turns</td><td class="num">9</td><td class="num">3</td>' in html
    assert '<td>persona facts</td><td class="num">12</td><td class="num">2</td>' in html
    assert "python:good:agent" in html and "9 turns → 3, 12 facts → 2" in html
    assert "&lt;b&gt;hi&lt;/b&gt;" in html and "<b>hi</b>" not in html  # escaped
    assert "→ block_card" in html and "(history)" in html
    assert "partial" not in html


def test_a_partial_shrink_says_so_and_no_shrink_adds_nothing():
    html = shrink_section([], {"shrinks": [_entry(complete=False, record="GONE|r0")]})
    assert "partial: the budget of 100 runs ran out" in html
    assert "GONE|r0" in html and 'href="#' not in html  # a record not in this run is not linked
    assert shrink_section([record("CASE-1")], {}) == ""
