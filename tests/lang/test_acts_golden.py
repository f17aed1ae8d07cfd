"""The golden readings of lang.acts (tests/lang/golden/<code>_acts.yaml): every agent and user turn
is read as the acts listed, in order, with the slots, actions, values and options given."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.lang.acts import Act, agent_acts, user_acts
from usersim.lang.concepts import ground

GOLDEN = Path(__file__).parent / "golden"


def _cases(section: str) -> list:
    out = []
    for path in sorted(GOLDEN.glob("*_acts.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for i, entry in enumerate(data.get(section) or []):
            out.append(pytest.param(entry, id=f"{path.stem}:{section}:{i}:{entry['text'][:30]}"))
    return out


def _check(acts: list[Act], expected: list[dict], text: str) -> None:
    got = [(a.kind, a.slots, a.action, a.values, a.options, a.sure, a.text) for a in acts]
    assert [a.kind for a in acts] == [e["kind"] for e in expected], (text, got)
    for act, want in zip(acts, expected, strict=True):
        for slot in want.get("slots", []):
            assert slot in act.slots, (text, act.text, act.slots)
        for slot in want.get("not_slots", []):
            assert slot not in act.slots, (text, act.text, act.slots)
        if "action" in want:
            assert want["action"].lower() in act.action.lower(), (text, act.action)
        for value in want.get("values", []):
            assert str(value) in act.values, (text, act.values)
        if "options" in want:
            assert list(act.options) == want["options"], (text, act.options)
        assert act.sure == want.get("sure", True), (text, act.text)
        assert act.cues or act.kind in ("inform", "other", "provide"), (text, "an act without its cue")


@pytest.mark.parametrize("entry", _cases("agent"))
def test_agent_turn(entry):
    _check(agent_acts(entry["text"]), entry["acts"], entry["text"])


@pytest.mark.parametrize("entry", _cases("user"))
def test_user_turn(entry):
    _check(user_acts(entry["text"]), entry["acts"], entry["text"])


@pytest.mark.parametrize("entry", _cases("grounding"))
def test_question_grounded_to_the_persona_field(entry):
    fields = {k: list(v or []) for k, v in entry["fields"].items()}
    assert ground(entry["text"], fields)[:1] == [entry["expect"]], ground(entry["text"], fields)


def test_spans_point_into_the_text():
    text = "Thanks! **Please share your email.**\n- Your card is blocked, anything else?"
    for act in agent_acts(text):
        assert text[act.start : act.end] == act.text
        for cue in act.cues:
            assert text[cue.start : cue.end].lower() == cue.text.lower()
