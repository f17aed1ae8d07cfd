"""A user's resource folder adds quantity and date words without code (USERSIM_LANG_PATH)."""

from __future__ import annotations

from datetime import date

import pytest

from usersim.lang import dates, quantity
from usersim.lang.resources import resources


@pytest.fixture
def user_words(tmp_path, monkeypatch):
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "money.yaml").write_text(
        "codes: {比索: PHP}\nper_units: {床位: bed}\n", encoding="utf-8"
    )
    (tmp_path / "zh" / "units.yaml").write_text("duration_cues:\n  commute: [直升机]\n", encoding="utf-8")
    (tmp_path / "zh" / "dates.yaml").write_text("holidays: {黄金周: national_day}\n", encoding="utf-8")
    monkeypatch.setenv("USERSIM_LANG_PATH", str(tmp_path))
    resources.cache_clear()
    yield
    monkeypatch.delenv("USERSIM_LANG_PATH")
    resources.cache_clear()


def test_words_from_a_user_folder_are_read(user_words):
    (q,) = quantity.money("青旅 500 比索/床位")
    assert (q.value, q.currency, q.per) == (500, "PHP", "bed")
    (d,) = quantity.durations("乘直升机大约 15 分钟上山")
    assert d.measures == "commute" and d.estimate is not None
    assert dates.resolve("黄金周", date(2026, 4, 7)).range == (date(2026, 10, 1), date(2026, 10, 7))


def test_without_the_folder_those_words_mean_nothing():
    resources.cache_clear()
    (q,) = quantity.quantities("青旅 500 比索/床位")
    assert q.kind == "number" and q.currency is None
    assert quantity.durations("乘直升机大约 15 分钟上山")[0].measures is None
    assert dates.resolve("黄金周", date(2026, 4, 7)) is None
