"""`usersim cases list` serves valid cases from its per-file cache (cases/listing.py) and never
shows a stale row or hides a problem: an edited case, an edited `include:` base, a file broken
after it was cached, a fixed file, a code change, a corrupt cache, the cache turned off."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import usersim
from usersim.cases import listing, loader

REPO = Path(__file__).resolve().parents[2]
GOOD = REPO / "usersim" / "cases" / "b1" / "B1-EI-01.yaml"
BANK = REPO / "examples" / "bank"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "_base.yaml").write_text(
        "dimension: B1\ncategory: EI\ntitle: from the base\ndifficulty: easy\nmode: static\n"
        "tools: [web_search]\n",
        encoding="utf-8",
    )
    (folder / "T-01.yaml").write_text(
        "include: _base.yaml\nid: T-01\ninput:\n  message: 帮我查一下明天的天气\n"
        "judging:\n  pass_criteria: [答复了天气]\n  scoring: {methods: [llm_judge]}\n",
        encoding="utf-8",
    )
    shutil.copy(GOOD, folder / "B1-EI-01.yaml")
    return folder


def _rows(folder: Path, *, check: bool = True) -> tuple[dict[str, dict], str, int]:
    res = usersim("cases", "list", str(folder), "--json", check=check)
    return {r["id"]: r for r in json.loads(res.stdout or "[]")}, res.stderr, res.returncode


def _no_validation(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Record every case the listing validates (load_case) instead of serving from the cache."""
    validated: list[Path] = []
    real = loader.load_case

    def spy(path, root=None):
        validated.append(Path(path))
        return real(path, root)

    monkeypatch.setattr(loader, "load_case", spy)
    return validated


def test_a_second_listing_validates_nothing_and_shows_the_same_rows(suite, monkeypatch):
    first, _, _ = _rows(suite)
    assert set(first) == {"T-01", "B1-EI-01"} and first["T-01"]["title"] == "from the base"
    validated = _no_validation(monkeypatch)
    again, _, _ = _rows(suite)
    assert again == first
    assert validated == []


def test_an_edited_case_and_an_edited_include_base_are_validated_again(suite, monkeypatch):
    _rows(suite)
    validated = _no_validation(monkeypatch)
    text = (suite / "B1-EI-01.yaml").read_text(encoding="utf-8")
    (suite / "B1-EI-01.yaml").write_text(text.replace("title:", "title: edited —", 1), encoding="utf-8")
    rows, _, _ = _rows(suite)
    assert rows["B1-EI-01"]["title"].startswith("edited —")
    assert validated == [suite / "B1-EI-01.yaml"]  # T-01 unchanged: still from the cache
    base = (suite / "_base.yaml").read_text(encoding="utf-8")
    (suite / "_base.yaml").write_text(base.replace("from the base", "the base, edited"), encoding="utf-8")
    rows, _, _ = _rows(suite)
    assert rows["T-01"]["title"] == "the base, edited"


def test_a_file_broken_after_it_was_cached_is_reported_as_validate_reports_it(suite):
    _rows(suite)
    base = (suite / "_base.yaml").read_text(encoding="utf-8")
    (suite / "_base.yaml").write_text(base.replace("mode: static", "mode: sttic"), encoding="utf-8")
    rows, err, code = _rows(suite, check=False)
    assert code == 2 and set(rows) == {"B1-EI-01"}
    expected = usersim("validate", str(suite / "T-01.yaml"), check=False).stdout.strip().splitlines()
    assert expected and all(line in err for line in expected)
    assert "mode" in err and "sttic" in err


def test_a_bad_file_is_validated_every_time_and_listed_once_fixed(suite, monkeypatch):
    good = (suite / "T-01.yaml").read_text(encoding="utf-8")
    (suite / "T-01.yaml").write_text(good.replace("judging:", "judgin:"), encoding="utf-8")
    _, err, code = _rows(suite, check=False)
    assert code == 2 and "judgin" in err
    validated = _no_validation(monkeypatch)
    _, err_again, code = _rows(suite, check=False)
    assert code == 2 and err_again == err
    assert validated == [suite / "T-01.yaml"]  # problems never come from the cache
    (suite / "T-01.yaml").write_text(good, encoding="utf-8")
    rows, _, code = _rows(suite)
    assert code == 0 and "T-01" in rows


def test_duplicate_ids_are_reported_also_when_both_rows_come_from_the_cache(suite):
    _rows(suite)
    shutil.copy(suite / "B1-EI-01.yaml", suite / "copy.yaml")
    _rows(suite, check=False)
    _, err, code = _rows(suite, check=False)  # both files cached now
    assert code == 2 and "duplicate case id 'B1-EI-01'" in err


def test_a_code_change_drops_every_entry(suite, monkeypatch):
    _rows(suite)
    monkeypatch.setattr(listing, "fingerprint", lambda: "another usersim")
    validated = _no_validation(monkeypatch)
    _rows(suite)
    assert sorted(p.name for p in validated) == ["B1-EI-01.yaml", "T-01.yaml"]


def test_a_corrupt_cache_is_ignored_and_rewritten(suite, tmp_path):
    cache = listing.cache_file()
    assert cache is not None
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("{not json", encoding="utf-8")
    rows, _, code = _rows(suite)
    assert code == 0 and set(rows) == {"T-01", "B1-EI-01"}
    assert json.loads(cache.read_text(encoding="utf-8"))["entries"]


def test_the_cache_is_off_with_the_env_var(suite, monkeypatch):
    monkeypatch.setenv("USERSIM_NO_CASE_CACHE", "1")
    assert listing.cache_file() is None
    _rows(suite)
    validated = _no_validation(monkeypatch)
    _rows(suite)
    assert len(validated) == 2


def test_a_case_with_python_tools_is_never_served_from_the_cache(monkeypatch):
    """Its tool module's code (and whatever that imports) decides too: no file hash stands for it."""
    cases = BANK / "cases"
    _rows(cases)
    validated = _no_validation(monkeypatch)
    rows, _, _ = _rows(cases)
    assert "BANK-01" in rows
    assert len(validated) == len(rows) >= 10
