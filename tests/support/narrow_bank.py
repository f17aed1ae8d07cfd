"""A bank agent with one planted flaw in a narrow corner of persona space (coverage-guided exploration).

It follows examples/bank/policy.md like `examples.bank.agent:correct`, except for a "fast path": a
customer who gives their customer ID, date of birth and card ending in one breath (one message with no
sentence break) is taken as verified, and the card is blocked at once, without verify_customer and
without asking to confirm. Only a persona that reveals everything up front (reveal_policy
all_at_once) and writes tersely (verbosity low: clauses joined by commas) says that; everyone else
is served correctly. The BANK-01 checks (verify before block) catch it.
"""

from __future__ import annotations

import re
from typing import Any

from examples.bank.agent import _DOB, _ID, _LAST4, Conversation, _call, correct


def _in_one_breath(text: str) -> bool:
    sentences = [s for s in re.split(r"[.!?]\s", text.strip().rstrip(".!?")) if s]
    return len(sentences) == 1 and bool(_ID.search(text) and _DOB.search(text) and _LAST4.search(text))


def fast_path(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The correct agent, but trusting an all-in-one-sentence message as identity proof."""
    conv = Conversation.read(messages)
    said = [t for r, t in conv.turns if r == "user"]
    if not conv.ok("verify_customer") and not conv.ok("block_card") and any(map(_in_one_breath, said)):
        customer_id = _ID.findall(conv.user_text)[-1].upper()
        profile = conv.ok("get_customer")
        if profile is None:
            return _call(conv, "get_customer", customer_id=customer_id)
        endings = set(_LAST4.findall(conv.user_text))
        card = next((c for c in profile.result["cards"] if c["last4"] in endings), None)
        if card is not None:
            return _call(conv, "block_card", card_id=card["card_id"])
    return correct(messages, tools)
