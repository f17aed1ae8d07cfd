"""Slot detection reads the language layer at call time: a resource folder added after import
(lang.add_resource_dir, a domain's lang/ folder) reaches it, and removing it takes it back."""

from __future__ import annotations

from pathlib import Path

from usersim.lang.resources import add_resource_dir, remove_resource_dir
from usersim.simulator.slots import asked_slots, known_slots


def test_a_builtin_slot_added_later_is_detected_and_removed_again(tmp_path: Path) -> None:
    question = "Which loyalty tier are you on?"
    assert "loyalty_tier" not in known_slots()
    assert "loyalty_tier" not in asked_slots(question)
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "acts.yaml").write_text(
        'builtin_slots:\n  loyalty_tier: "re:loyalty (tier|level)"\n', encoding="utf-8"
    )
    add_resource_dir(tmp_path)
    try:
        assert "loyalty_tier" in known_slots()
        assert asked_slots(question) == ["loyalty_tier"]
    finally:
        remove_resource_dir(tmp_path)
    assert "loyalty_tier" not in asked_slots(question)
