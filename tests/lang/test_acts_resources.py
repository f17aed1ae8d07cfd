"""The acts lexicon is data: a user's resource folder adds a concept (or synonyms) without code,
and asked_clarification's `about: concept:NAME` validates against the lexicon in force."""

from __future__ import annotations

import pytest

from usersim.judges.checks import check_registry
from usersim.lang import resources
from usersim.lang.acts import agent_acts
from usersim.lang.concepts import ground


@pytest.fixture
def telecom_words(tmp_path, monkeypatch):
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "acts.yaml").write_text(
        "concepts:\n"
        "  data_allowance:\n"
        "    words: ['re:how (many|much) (gb|gigabytes|data)', data allowance, data plan]\n"
        "    fields: [data, gb, allowance]\n"
        "confirmations: ['re:want to switch\\b']\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("USERSIM_LANG_PATH", str(tmp_path))
    resources.cache_clear()
    yield
    monkeypatch.delenv("USERSIM_LANG_PATH")
    resources.cache_clear()


def test_a_user_folder_adds_a_concept_and_a_consent_phrase(telecom_words):
    (act,) = agent_acts("How much data do you use each month?")
    assert act.kind == "request" and "data_allowance" in act.slots
    assert any(c.entry == "en/acts.concepts.data_allowance" for c in [*act.slot_cues])
    assert ground("How many GB do you need?", {"min_data_gb": ["minimum data"], "budget": []}) == [
        "min_data_gb"
    ]
    (consent,) = agent_acts("You want to switch to the 10 GB plan")
    assert consent.kind == "confirm_request" and consent.values == ("10",)


def test_without_the_folder_the_concept_is_unknown_to_checks():
    spec = check_registry.get("asked_clarification")
    with pytest.raises(ValueError, match="unknown concept 'data_allowance'"):
        spec.validate({"about": ["concept:data_allowance"]})
    with pytest.raises(ValueError, match="Did you mean .entry_city."):
        spec.validate({"about": [["concept:entry_cty"]]})


def test_with_the_folder_the_concept_validates(telecom_words):
    spec = check_registry.get("asked_clarification")
    params = spec.validate({"about": ["concept:data_allowance"], "not_about": [["concept:budget"]]})
    assert params.about == [["concept:data_allowance"]]
