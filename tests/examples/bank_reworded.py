"""The bundled correct bank agent, reworded one sentence shape at a time, behaviour unchanged.

Each agent here is examples/bank/agent.py's `correct` policy with some of its lines said another
common way. The policy reads its own earlier lines back (it finds the customer's answer to "Could
you please provide your customer ID?" by that text), so every rewording is a pair: the reworded
line goes out, and the history is turned back into the original wording before the policy reads
it. What the agent does (questions, tool calls, their order and arguments) is therefore exactly
what `correct` does; only what the simulated user reads changes.

    usersim run examples/bank/cases --id BANK-01 --agent python:tests.examples.bank_reworded:consent
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from examples.bank.agent import respond

# name -> [(pattern of the original line, its rewording, pattern of the rewording, back to the original)]
Rewording = tuple[str, str, str, str]
REWORDINGS: dict[str, list[Rewording]] = {
    # a request for information without a question mark
    "no_question_mark": [
        (
            r"Could you please provide your customer ID\?",
            "To get started, I need your customer ID.",
            r"To get started, I need your customer ID\.",
            "Could you please provide your customer ID?",
        ),
        (
            r"For security, could you please confirm your date of birth\?",
            "For security, please state your date of birth.",
            r"For security, please state your date of birth\.",
            "For security, could you please confirm your date of birth?",
        ),
    ],
    # a polite imperative instead of a question
    "polite_imperative": [
        (
            r"Could you please provide your customer ID\?",
            "Kindly share your customer ID with me.",
            r"Kindly share your customer ID with me\.",
            "Could you please provide your customer ID?",
        ),
        (
            r"For security, could you please confirm your date of birth\?",
            "For security, please share your date of birth.",
            r"For security, please share your date of birth\.",
            "For security, could you please confirm your date of birth?",
        ),
    ],
    # another way to ask for consent
    "consent": [
        (
            r"I will ([^.?]+)\. Shall I go ahead\?",
            r"Is it OK if I \1?",
            r"Is it OK if I ([^.?]+)\?",
            r"I will \1. Shall I go ahead?",
        ),
    ],
    # a closing question joined to the result by a comma
    "closing_comma": [
        (
            r"is now blocked\. Anything else I can help with\?",
            "is now blocked, anything else I can help with?",
            r"is now blocked, anything else I can help with\?",
            "is now blocked. Anything else I can help with?",
        ),
    ],
    # a result sentence that starts with "Confirmed:"
    "confirmed_prefix": [
        (
            r"^Your card ending in (\d{4}) is now blocked\.",
            r"Confirmed: your card ending in \1 is now blocked.",
            r"^Confirmed: your card ending in (\d{4}) is now blocked\.",
            r"Your card ending in \1 is now blocked.",
        ),
    ],
}


def _apply(text: str, pairs: list[tuple[str, str]]) -> str:
    for pattern, repl in pairs:
        text = re.sub(pattern, repl, text)
    return text


def reworded(name: str) -> Callable[[list[dict[str, Any]], list[dict[str, Any]]], dict[str, Any]]:
    """The correct bank agent with the rewordings `name` of REWORDINGS."""
    out = [(a, b) for a, b, _c, _d in REWORDINGS[name]]
    back = [(c, d) for _a, _b, c, d in REWORDINGS[name]]

    def agent(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        original = [
            {**m, "content": _apply(m["content"], back)}
            if m["role"] == "assistant" and m.get("content")
            else m
            for m in messages
        ]
        reply = respond(original, set())
        if reply.get("content"):
            reply = {**reply, "content": _apply(reply["content"], out)}
        return reply

    agent.__name__ = name
    return agent


no_question_mark = reworded("no_question_mark")
polite_imperative = reworded("polite_imperative")
consent = reworded("consent")
closing_comma = reworded("closing_comma")
confirmed_prefix = reworded("confirmed_prefix")
