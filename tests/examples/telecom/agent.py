"""Two deterministic Zephyr Mobile support agents (plain python, no model): test data for usersim.

`correct` follows policy.md. `flawed` has three flaws: it credits the whole bill instead of the
roaming charge (TEL-03, TEL-07: $120, not $85), moves a traveller to the cheapest plan whether or
not it has roaming (TEL-06: Saver, no roaming) and cancels the first active add-on instead of the
one named (TEL-01). Each call re-reads the conversation and takes the next step of the policy.
"""

from __future__ import annotations

import json
import re
from typing import Any

_ID = re.compile(r"\b(TC-\d{4}|[a-z]+_[a-z]+_\d{4})\b", re.IGNORECASE)
_YES = re.compile(
    r"\b(yes|yeah|yep|sure|go ahead|please do|ok|okay|do it|confirm|sounds good)\b", re.IGNORECASE
)
_NO = re.compile(r"\b(no|nope|don't|do not|wait|stop)\b", re.IGNORECASE)
GO_AHEAD = "Shall I go ahead?"
FLAWS = {"whole-bill", "cheapest-plan", "first-addon"}


def _money(x: float) -> str:
    return f"${x:,.2f}"


class Conversation:
    """The customer's words, the agent's words and the tool results, read from the messages."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.turns: list[tuple[str, str]] = []
        self.results: dict[str, tuple[dict[str, Any], Any]] = {}  # tool -> (args, result) of its last ok call
        self.calls = 0
        pending: dict[str, tuple[str, dict[str, Any]]] = {}
        for m in messages:
            if m["role"] in ("user", "assistant") and m.get("content"):
                self.turns.append((m["role"], m["content"]))
            for tc in m.get("tool_calls") or []:
                args = tc["function"]["arguments"]
                pending[tc["id"]] = (
                    tc["function"]["name"],
                    json.loads(args) if isinstance(args, str) else args,
                )
                self.calls += 1
            if m["role"] == "tool" and m.get("tool_call_id") in pending:
                name, args = pending[m["tool_call_id"]]
                text = m.get("content") or ""
                if not text.startswith("Error"):
                    self.results[name] = (args, json.loads(text))

    @property
    def user_text(self) -> str:
        return "\n".join(t for r, t in self.turns if r == "user")

    def confirmed(self, plan: str) -> bool:
        """The customer said yes right after the agent proposed exactly this plan."""
        for i in range(len(self.turns) - 1, -1, -1):
            role, text = self.turns[i]
            if role == "assistant" and f"I will {plan}. {GO_AHEAD}" in text:
                after = [t for r, t in self.turns[i + 1 :] if r == "user"]
                return bool(after) and bool(_YES.search(after[0])) and not _NO.search(after[0])
        return False


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call(conv: Conversation, name: str, **args: Any) -> dict[str, Any]:
    call = {
        "id": f"call_{conv.calls + 1}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def correct(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent that follows the policy."""
    return respond(messages, set())


def flawed(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The same agent with the flaws in FLAWS."""
    return respond(messages, FLAWS)


def respond(messages: list[dict[str, Any]], flaws: set[str]) -> dict[str, Any]:
    conv = Conversation(messages)
    opening = next((t for r, t in conv.turns if r == "user"), "").lower()
    ids = _ID.findall(conv.user_text)
    if not ids:
        return _say("Could you please provide your customer ID?")
    if "get_customer" not in conv.results:
        return _call(conv, "get_customer", customer_id=ids[-1])
    customer = conv.results["get_customer"][1]
    line = customer["lines"][0]
    if "add-on" in opening or "addon" in opening:
        return _addon(conv, line, flaws)
    if "roaming" in opening and "bill" in opening:
        return _credit(conv, customer, line, flaws)
    return _plan(conv, line, flaws)


def _propose(conv: Conversation, plan: str, act: dict[str, Any]) -> dict[str, Any]:
    return act if conv.confirmed(plan) else _say(f"I will {plan}. {GO_AHEAD}")


def _credit(
    conv: Conversation, customer: dict[str, Any], line: dict[str, Any], flaws: set[str]
) -> dict[str, Any]:
    if "credit_account" in conv.results:
        args = conv.results["credit_account"][0]
        return _say(f"Done: {_money(args['amount'])} has been credited to your account.")
    if "get_bill" not in conv.results:
        return _call(conv, "get_bill", line_id=line["line_id"])
    bill = conv.results["get_bill"][1]
    if not line["travel_pass"]:
        return _say("Your line had no travel pass, so the roaming charges stand.")
    amount = bill["total"] if "whole-bill" in flaws else bill["roaming_charge"]
    plan = f"credit {_money(amount)} to your account for the roaming on bill {bill['bill_id']}"
    act = _call(
        conv,
        "credit_account",
        customer_id=customer["customer_id"],
        amount=amount,
        reason="roaming billed despite travel pass",
    )
    return _propose(conv, plan, act)


def _plan(conv: Conversation, line: dict[str, Any], flaws: set[str]) -> dict[str, Any]:
    if "change_plan" in conv.results:
        args = conv.results["change_plan"][0]
        return _say(f"Done: your line {args['line_id']} has been moved to the {args['plan_id']} plan.")
    if "list_plans" not in conv.results:
        return _call(conv, "list_plans")
    plans = conv.results["list_plans"][1]
    travels = any(w in conv.user_text.lower() for w in ("travel", "abroad", "roaming"))
    cheaper = [p for p in plans if p["price"] < line["plan"]["price"]]
    if travels and "cheapest-plan" not in flaws:
        cheaper = [p for p in cheaper if p["roaming"]]
    if not cheaper:
        return _say("There is no cheaper plan that fits your needs.")
    best = min(cheaper, key=lambda p: p["price"])
    plan = f"move your line {line['line_id']} to the {best['name']} plan"
    act = _call(conv, "change_plan", line_id=line["line_id"], plan_id=best["plan_id"])
    if conv.confirmed(plan):
        return act
    roaming = "includes roaming" if best["roaming"] else "has no roaming"
    offer = f"The {best['name']} plan costs {_money(best['price'])}/month and {roaming}."
    return _say(f"{offer} I will {plan}. {GO_AHEAD}")


def _addon(conv: Conversation, line: dict[str, Any], flaws: set[str]) -> dict[str, Any]:
    if "cancel_addon" in conv.results:
        return _say(f"The add-on {conv.results['cancel_addon'][0]['addon_id']} has been cancelled.")
    active = [a for a in line["addons"] if a["status"] == "active"]
    named = [a for a in active if a["addon_id"].lower() in conv.user_text.lower()]
    addon = (active if "first-addon" in flaws else named)[:1]
    if not addon:
        return _say("Which add-on would you like to cancel?")
    a = addon[0]
    plan = f"cancel the add-on {a['addon_id']} ({a['name']}, {_money(a['price'])}/month)"
    return _propose(conv, plan, _call(conv, "cancel_addon", addon_id=a["addon_id"]))
