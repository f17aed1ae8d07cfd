"""A persona drafted from a conversation has the user's ask as its goal, not the greeting it
opened with, and the whole ask when it is spread over two turns (rewordings as data:
tests/personas/data/ask_openings.yaml)."""

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
