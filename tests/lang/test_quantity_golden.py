"""Golden files of the quantity and date layer (tests/lang/golden/<code>_quantity.yaml): many
spellings of one amount, duration, measure or date, each read to the same normalised value."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
import yaml

from usersim.lang import dates, quantity

GOLDEN = Path(__file__).parent / "golden"
FILES = {
    code: yaml.safe_load((GOLDEN / f"{code}_quantity.yaml").read_text(encoding="utf-8"))
    for code in ("zh", "en")
}


def cases(section: str):
    out = []
    for code, data in FILES.items():
        for group in data.get(section) or []:
            for text in group["spellings"]:
                out.append(pytest.param(data["today"], group, text, id=f"{code}:{text}"))
    return out


def plain(section: str):
    return [
        pytest.param(t, id=f"{code}:{t}") for code, data in FILES.items() for t in data.get(section) or []
    ]


def one(found: list, text: str):
    assert len(found) == 1, f"{text!r}: {found}"
    return found[0]


@pytest.mark.parametrize("today, want, text", cases("money"))
def test_money_spellings_read_as_one_amount(today, want, text):
    q = one(quantity.money(text), text)
    assert (q.value, q.currency, q.per) == (want["value"], want["currency"], want["per"]), q


@pytest.mark.parametrize("today, want, text", cases("ranges"))
def test_money_ranges_keep_both_ends(today, want, text):
    q = one(quantity.money(text), text)
    assert (q.value, q.high, q.currency) == (want["value"], want["high"], want["currency"]), q


@pytest.mark.parametrize("today, want, text", cases("numbers"))
def test_numbers_read_the_same_whatever_the_script(today, want, text):
    q = quantity.parse(text)
    assert q is not None and q.value == want["value"], q


@pytest.mark.parametrize("today, want, text", cases("measures"))
def test_measures_normalise_to_the_base_unit(today, want, text):
    q = one(quantity.measures(text, want["dimension"]), text)
    assert q.value == pytest.approx(want["value"], abs=1e-3), q


@pytest.mark.parametrize("today, want, text", cases("durations"))
def test_durations_are_minutes(today, want, text):
    q = one(quantity.durations(text), text)
    assert q.value == want["minutes"], q


@pytest.mark.parametrize("today, want, text", cases("duration_ranges"))
def test_duration_ranges(today, want, text):
    q = one(quantity.durations(text), text)
    assert (q.value, q.high) == (want["minutes"], want["high"]), q


@pytest.mark.parametrize("today, want, text", cases("measures_of"))
def test_a_duration_knows_what_it_measures_when_the_text_says(today, want, text):
    q = one(quantity.durations(text), text)
    assert q.measures == want["measures"], (q.measures, [c.describe() for c in q.measure_cues])
    if want["measures"]:
        assert (
            q.measure_cues
            and q.measure_cues[0].entry.endswith(f"duration_cues.{want['measures']}")
            or any("commute_patterns" in c.entry for c in q.measure_cues)
        )


@pytest.mark.parametrize("today, want, text", cases("estimates"))
def test_estimate_words_attach_to_their_number(today, want, text):
    q = one(quantity.durations(text), text)
    assert (q.estimate is not None) == want["estimate"], q.estimate


@pytest.mark.parametrize("text", plain("no_money"))
def test_numbers_that_are_no_money(text):
    assert quantity.money(text) == []
    assert all(q.kind != "duration" or q.unit != "minute" for q in quantity.quantities(text)), (
        quantity.quantities(text)
    )


@pytest.mark.parametrize("today, want, text", cases("dates"))
def test_date_spellings_resolve_to_the_same_days(today, want, text):
    d = dates.resolve(text, today)
    assert d is not None, text
    assert (d.first, d.last) == (want["first"], want["last"]), d
    assert d.day == want.get("day", want["first"]) and d.fuzzy == want.get("fuzzy", False), d


@pytest.mark.parametrize("text", plain("no_dates"))
def test_words_that_are_no_dates(text):
    assert dates.find_dates(text, date(2026, 4, 7)) == []
