from datetime import date

import pytest

from usersim.judges.checks.normalize import is_quantity, normalize_place, parse_quantity, resolve_date

TODAY = date(2026, 4, 7)  # a Tuesday (seed 002's current date)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("下周五", (date(2026, 4, 17), date(2026, 4, 17))),
        ("明天", (date(2026, 4, 8), date(2026, 4, 8))),
        ("后天", (date(2026, 4, 9), date(2026, 4, 9))),
        ("6 月中旬", (date(2026, 6, 10), date(2026, 6, 20))),
        ("国庆", (date(2026, 10, 1), date(2026, 10, 7))),
        ("5 月 10 号", (date(2026, 5, 10), date(2026, 5, 10))),
        ("五月十号", (date(2026, 5, 10), date(2026, 5, 10))),
        ("7月初", (date(2026, 7, 1), date(2026, 7, 10))),
        ("2026-06-15", (date(2026, 6, 15), date(2026, 6, 15))),
        ("3 月 20 号", (date(2027, 3, 20), date(2027, 3, 20))),  # already past this year -> next year
    ],
)
def test_relative_dates_resolve_against_current_date(text, expected):
    assert resolve_date(text, TODAY) == expected


def test_non_dates_are_not_dates():
    assert resolve_date("上海", TODAY) is None
    assert resolve_date("明天", None) is None  # relative words need the case's current date


@pytest.mark.parametrize(
    "text, value",
    [
        ("8000", 8000),
        ("8千", 8000),
        ("8k", 8000),
        ("1.5kg", 1.5),
        ("1.5 公斤", 1.5),
        ("1500g", 1.5),
        ("两个人", 2),
        ("2人", 2),
        ("2 位", 2),
        ("two", 2),
        ("1.5万", 15000),
        ("一万五", 15000),
        ("一百零五", 105),
        ("¥1,980", 1980),
    ],
)
def test_numbers_with_units(text, value):
    assert parse_quantity(text)[0] == value


def test_quantity_detection_rejects_codes_and_prose():
    assert is_quantity("两个人") and is_quantity("8千")
    assert not is_quantity("MU531") and not is_quantity("上海")


@pytest.mark.parametrize("alias", ["上海", "Shanghai", "PVG", "浦东"])
def test_place_aliases(alias):
    assert normalize_place(alias) == "上海"
    assert normalize_place("大阪") != normalize_place(alias)


def test_a_bare_iso_day_resolves_as_the_date_reader_reads_it():
    """resolve_date answers a whole YYYY-MM-DD itself (validating date matchers builds no date
    lexicon): the same range lang.dates gives, for valid days, edge days and padded text, with
    and without a today; anything that is not one calendar day goes to the reader."""
    from datetime import date, timedelta

    from usersim.judges.checks.normalize import resolve_date
    from usersim.lang import dates

    today = date(2026, 4, 7)
    texts = [(date(2024, 1, 1) + timedelta(days=k * 37)).isoformat() for k in range(40)]
    texts += ["2024-02-29", "2026-12-31", "0001-01-01", "9999-12-31", " 2026-06-15 ", "2026-06-15\n"]
    for text in texts:
        for when in (today, None):
            found = dates.resolve(text.strip(), when or date.today())
            assert found is not None and found.kind == "iso", text
            assert resolve_date(text, when) == found.range, (text, when)
    for text in ["2026-02-30", "2025-02-29", "2026-13-01", "2026-6-15", "2026-06-15 到 2026-06-20"]:
        for when in (today, None):
            found = dates.resolve(text.strip(), when or date.today())
            expect = (
                None
                if found is None
                or (
                    when is None
                    and found.kind not in ("iso", "day", "range", "month", "month_part", "holiday")
                )
                else found.range
            )
            assert resolve_date(text, when) == expect, (text, when)
