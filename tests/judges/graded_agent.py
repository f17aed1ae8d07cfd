"""A scripted agent for the graded-score tests (`python:tests.judges.graded_agent:respond`): the
replies of each case come from the JSON file named by USERSIM_GRADED_REPLIES, keyed by the tag
`#<key>` the case's first message carries; reply k answers the k-th live user turn."""

from __future__ import annotations

import json
import os
import re


def respond(messages: list[dict], tools: list[dict]) -> dict:
    table = json.loads(open(os.environ["USERSIM_GRADED_REPLIES"], encoding="utf-8").read())
    first = next(m["content"] for m in messages if m["role"] == "user")
    key = re.search(r"#(g\d+)", first).group(1)
    entry = table[key]
    users = [m for m in messages if m["role"] == "user"]
    k = len(users) - entry["history_users"] - 1
    return {"role": "assistant", "content": entry["say"][min(k, len(entry["say"]) - 1)]}
