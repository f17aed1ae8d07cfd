"""THE holiday calendar: one data file, official days and peak-travel windows as separate fields,
and the three former copies (judges' date matching, the reference agent, the sandbox clock) agree."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

import pytest

from usersim.adapters.reference.dates import find_dates as reference_dates
from usersim.judges.checks.normalize import resolve_date
from usersim.lang import calendar
from usersim.lang.resources import resources as load_resources
from usersim.sandbox.clock import demand_factor

ROOT = Path(__file__).resolve().parents[2] / "usersim"
TODAY = date(2026, 1, 10)


def test_2026_official_days_follow_the_state_council_schedule():
    official = {hid: calendar.holiday(hid, 2026).official for hid in calendar.holiday_ids()}
    assert official["spring_festival"] == (date(2026, 2, 15), date(2026, 2, 23))
    assert official["national_day"] == (date(2026, 10, 1), date(2026, 10, 7))
    assert official["labour_day"] == (date(2026, 5, 1), date(2026, 5, 5))
    assert official["dragon_boat"] == (date(2026, 6, 19), date(2026, 6, 21))
    assert official["mid_autumn"] == (date(2026, 9, 25), date(2026, 9, 27))
    assert official["new_year"] == (date(2026, 1, 1), date(2026, 1, 3))
    assert official["summer_vacation"] is None  # a school holiday: no official days
    assert calendar.holiday("spring_festival", 2026).day == date(2026, 2, 17)


def test_peak_windows_are_a_separate_field():
    sf = calendar.holiday("spring_festival", 2026)
    assert sf.peak == (date(2026, 2, 14), date(2026, 2, 23)) and sf.peak != sf.official
    nd = calendar.holiday("national_day", 2026)
    assert nd.official[1] == date(2026, 10, 7) and nd.peak[1] == date(2026, 10, 8)
    assert calendar.holiday("summer_vacation", 2026).peak == (date(2026, 7, 1), date(2026, 8, 31))


@pytest.mark.parametrize("word", ["春节", "国庆", "五一", "端午", "中秋", "Spring Festival", "National Day"])
def test_the_three_former_copies_agree_on_the_days(word):
    hid = calendar.holiday_names("zh").get(word) or calendar.holiday_names("en")[word.lower()]
    h = calendar.next_holiday(hid, TODAY)
    assert resolve_date(word, TODAY) == h.official  # judges: date matching
    (ref,) = reference_dates(f"我想{word}出去玩", TODAY)  # the reference agent
    assert (ref.start, ref.end) == h.official
    first, last = h.peak or h.official  # the sandbox prices on the peak window
    assert demand_factor(first) == demand_factor(last) == h.demand > 1.0
    assert demand_factor(last + timedelta(days=1)) == 1.0 or calendar.holidays_on(last + timedelta(days=1))


def test_summer_holiday_is_one_window_everywhere():
    assert resolve_date("暑假", TODAY) == (date(2026, 7, 1), date(2026, 8, 31))
    (ref,) = reference_dates("我想暑假去日本玩", TODAY)
    assert ref.fuzzy and ref.start == date(2026, 7, 15)  # the seeds' trips leave mid-July
    assert demand_factor(date(2026, 7, 1)) == demand_factor(date(2026, 8, 31)) == 1.25
    assert demand_factor(date(2026, 6, 30)) == 1.0


def test_no_module_keeps_its_own_holiday_dates():
    # holiday days live in usersim/lang/data/calendar.yaml only: no Python module spells a day of
    # the 2025-2027 holidays (date(2026, 2, 17), "2026-02-15", (10, 1) ...)
    literal = re.compile(
        r"date\(202[5-7],\s*\d+,\s*\d+\)|\"202[5-7]-\d\d-\d\d\"|\(\(\d+, \d+\), \(\d+, \d+\)"
    )
    names = re.compile("|".join(re.escape(n) for n in calendar.holiday_names("zh")), re.IGNORECASE)
    offenders = [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*.py")
        if literal.search(p.read_text(encoding="utf-8")) and names.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_a_user_calendar_file_adds_a_year_without_code(tmp_path, monkeypatch):
    (tmp_path / "calendar.yaml").write_text(
        "holidays:\n  spring_festival:\n    years:\n      2027: {official: [2027-02-05, 2027-02-11]}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("USERSIM_LANG_PATH", str(tmp_path))
    load_resources.cache_clear()
    try:
        assert resolve_date("春节", date(2026, 4, 7)) == (date(2027, 2, 5), date(2027, 2, 11))
        assert calendar.holiday("spring_festival", 2027).peak == (date(2027, 2, 5), date(2027, 2, 14))
    finally:
        monkeypatch.delenv("USERSIM_LANG_PATH")
        load_resources.cache_clear()
    assert resolve_date("春节", date(2026, 4, 7)) == (
        date(2027, 2, 5),
        date(2027, 2, 14),
    )  # peak only, unpublished
