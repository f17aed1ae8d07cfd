"""A persona drafted from a conversation has the user's ask as its goal, not the greeting it
opened with, and the whole ask when it is spread over two turns (rewordings as data:
tests/personas/data/ask_openings.yaml); a choice the user made among the options offered and a date they
volunteered are facts named for what they are (tests/personas/data/draft_choices.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim import lang
from usersim.core.messages import Message
from usersim.personas.draft import ask

ROWS = yaml.safe_load((Path(__file__).parent / "data/ask_openings.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("row", ROWS, ids=[r["goal"][:30] for r in ROWS])
def test_the_goal_is_the_ask_without_the_greeting(row):
    zh = lang.detect(" ".join(row["user"])) == "zh"
    messages = []
    for text in row["user"]:
        messages.append(Message(role="user", content=text))
        messages.append(
            Message(role="assistant", content="请问还有什么？" if zh else "Could you tell me more?")
        )
    assert ask(messages, "zh" if zh else "en") == row["goal"]


CHOICES = yaml.safe_load((Path(__file__).parent / "data/draft_choices.yaml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("row", CHOICES, ids=[r["user"][:30] for r in CHOICES])
def test_a_choice_the_user_made_and_a_date_they_volunteered_are_facts_named_for_what_they_are(row):
    from usersim.cases.importers.conversation import Conversation
    from usersim.personas.draft import draft_persona

    zh = lang.detect(row["agent"]) == "zh"
    messages = [
        Message(role="user", content="你好，我需要帮忙。" if zh else "Hi, I need some help."),
        Message(role="assistant", content=row["agent"]),
        Message(role="user", content=row["user"]),
        Message(role="assistant", content="好的。" if zh else "Done."),
    ]
    persona = draft_persona(Conversation(id="c", source="c.jsonl:1", messages=messages))
    facts = {f["slot"]: f["value"] for f in persona["known_info"]}
    assert {k: facts.get(k) for k in row["facts"]} == row["facts"], facts
    assert not set(row.get("not_slots") or []) & set(facts), facts
