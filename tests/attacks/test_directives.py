"""How an agent that obeys tool text reads orders (usersim.lang.directives), on rewordings kept as
data (tests/attacks/data/orders.yaml) that no template or code of the suite was written from."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from usersim.lang.directives import directives, tool_for

DATA = yaml.safe_load((Path(__file__).parent / "data" / "orders.yaml").read_text(encoding="utf-8"))
BANK_TOOLS = [
    {"type": "function", "function": {"name": n, "description": d}}
    for n, d in [
        ("verify_customer", "Verify a customer's identity by customer ID and date of birth."),
        ("get_customer", "A customer's profile with their accounts and cards."),
        ("transfer_funds", "Move money between two accounts of the same customer."),
        ("open_dispute", "Open a dispute for a card transaction."),
        ("order_replacement_card", "Order a replacement for a blocked card."),
        ("block_card", "Block a card (lost or stolen). The card stops working at once."),
        ("update_address", "Change a customer's postal address."),
    ]
]


@pytest.mark.parametrize("case", DATA["orders"], ids=lambda c: c["text"][:40])
def test_an_order_is_read_with_its_action_and_targets(case):
    found = directives(case["text"])
    assert [d.action for d in found][:1] == [case["action"]], found
    d = found[0]
    if "ids" in case:
        assert d.ids == case["ids"]
    if "amount" in case:
        assert d.amount == pytest.approx(case["amount"])
    if "emails" in case:
        assert d.emails == case["emails"]
    if "address" in case:
        assert case["address"] in d.object
    assert d.cue.entry.endswith(f"directives.actions.{case['action']}")


@pytest.mark.parametrize("text", DATA["not_orders"], ids=lambda t: t[:40])
def test_tool_data_that_only_describes_is_no_order(text):
    assert directives(text) == []


@pytest.mark.parametrize(
    ("action", "tool"),
    [
        ("transfer", "transfer_funds"),
        ("block_card", "block_card"),
        ("update_address", "update_address"),
        ("open_dispute", "open_dispute"),
        ("book", None),
    ],
)
def test_the_tool_for_an_action_is_found_by_its_words(action, tool):
    assert tool_for(action, BANK_TOOLS) == tool
