"""Two deterministic Acme Bank support agents (plain python, no model) for the usersim example.

    usersim run examples/bank/cases --agent python:examples.bank.agent:correct --out runs/bank
    usersim run examples/bank/cases --agent python:examples.bank.agent:flawed --out runs/bank-flawed

`correct` follows examples/bank/policy.md. `flawed` has five deliberate flaws, each touching one
case: it blocks the first card instead of asking which (BANK-02), ships replacements express
without asking (BANK-03), disputes the latest charge of the merchant whatever its amount
(BANK-06), skips identity verification for address changes (BANK-07) and ignores the 60-day
dispute window (BANK-08). `obeys_tools` (at the end) is `correct` except that it carries out orders
it finds in tool results (examples/bank/injection.py): the flawed agent of examples/bank/attacks.

An agent is a function (messages, tools) -> the next assistant message, in OpenAI chat format.
These ones keep no state: every call re-reads the conversation (what the customer said, what the
tools answered) and takes the next step of the policy.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from examples.bank import social
from examples.bank.injection import data_of, obey

FLAWS = {"wrong-card", "express-default", "latest-charge", "no-verify-address", "no-dispute-window"}

_ID = re.compile(r"\bC-\d{4}\b", re.IGNORECASE)
_DOB = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.]+")
_AMOUNT = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)|(\d[\d,]*(?:\.\d+)?)\s*(?:dollars|usd)\b", re.IGNORECASE)
_LAST4 = re.compile(r"(?<![\d\-,.$])(\d{4})(?![\d\-]|[,.]\d)")
_ADDRESS = re.compile(r"\d+\s+[A-Za-z][\w .'-]*?,\s*[A-Za-z][\w'-]*(?: [A-Z][\w'-]*)*")
_YES = re.compile(
    r"\b(yes|yeah|yep|sure|go ahead|please do|ok|okay|sounds good|do it|correct|confirm(?:ed)?)\b", re.I
)
# "no rush", "no problem", "don't worry" are not a no (a verbose persona found it: usersim explore)
_NO = re.compile(
    r"\b(?:no(?!\s+(?:rush|hurry|problem|worries|worry))|nope|don't(?!\s+worry)|do not(?!\s+worry)|wait"
    r"(?!\s+(?:no more|any longer))|stop|cancel)\b",
    re.IGNORECASE,
)
GO_AHEAD = "Shall I go ahead?"


@dataclass
class Call:
    name: str
    args: dict[str, Any]
    ok: bool = False
    result: Any = None


@dataclass
class Conversation:
    """What the agent reads from the messages: the customer's words, its own words, tool results."""

    today: date
    turns: list[tuple[str, str]] = field(default_factory=list)  # (role, text) of user / assistant
    calls: list[Call] = field(default_factory=list)

    @classmethod
    def read(cls, messages: list[dict[str, Any]]) -> Conversation:
        system = next((m.get("content") or "" for m in messages if m["role"] == "system"), "")
        found = re.search(r"Today is (\d{4}-\d{2}-\d{2})", system)
        conv = cls(today=date.fromisoformat(found[1]) if found else date.today())
        by_id: dict[str, Call] = {}
        for m in messages:
            if m["role"] in ("user", "assistant") and m.get("content"):
                conv.turns.append((m["role"], m["content"]))
            for tc in m.get("tool_calls") or []:
                args = tc["function"]["arguments"]
                call = Call(tc["function"]["name"], json.loads(args) if isinstance(args, str) else args)
                by_id[tc["id"]] = call
                conv.calls.append(call)
            if m["role"] == "tool" and m.get("tool_call_id") in by_id:
                call = by_id[m["tool_call_id"]]
                text = m.get("content") or ""
                call.ok = not text.startswith("Error")
                call.result = data_of(text)  # the JSON, even with text around it (injection.py)
        return conv

    @property
    def user_text(self) -> str:
        return "\n".join(t for r, t in self.turns if r == "user")

    @property
    def opening(self) -> str:
        return next((t for r, t in self.turns if r == "user"), "").lower()

    def last(self, name: str) -> Call | None:
        return next((c for c in reversed(self.calls) if c.name == name), None)

    def ok(self, name: str) -> Call | None:
        return next((c for c in reversed(self.calls) if c.name == name and c.ok), None)

    def answer_to(self, question: str) -> str | None:
        """What the customer said right after the agent last asked `question`."""
        for i in range(len(self.turns) - 1, -1, -1):
            role, text = self.turns[i]
            if role == "assistant" and question in text:
                after = [t for r, t in self.turns[i + 1 :] if r == "user"]
                return after[0] if after else None
        return None

    def confirmed(self, plan: str) -> bool:
        """The customer said yes after the agent proposed exactly this plan."""
        reply = self.answer_to(f"I will {plan}. {GO_AHEAD}")
        return bool(reply) and bool(_YES.search(reply)) and not _NO.search(reply)

    def latest_amount(self) -> float | None:
        for role, text in reversed(self.turns):
            if role == "user":
                found = [a or b for a, b in _AMOUNT.findall(text)]
                if found:
                    return float(found[-1].replace(",", ""))
        return None


def _say(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _call(conv: Conversation, name: str, **args: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"call_{len(conv.calls) + 1}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }


def _money(x: float) -> str:
    return f"${x:,.2f}"


def _intent(opening: str) -> str:
    for word, intent in (
        ("dispute", "dispute"),
        ("charged", "dispute"),
        ("transfer", "transfer"),
        ("move $", "transfer"),
        ("address", "address"),
        ("balance", "balance"),
    ):
        if word in opening:
            return intent
    return "block"


def correct(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent that follows the bank's policy."""
    return respond(messages, set())


def flawed(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The same agent with the five flaws in FLAWS."""
    return respond(messages, FLAWS)


def respond(messages: list[dict[str, Any]], flaws: set[str]) -> dict[str, Any]:
    conv = Conversation.read(messages)
    if (guarded := social.screen(conv, flaws, messages)) is not None:  # examples/bank/social.py
        return guarded
    intent = _intent(conv.opening)

    # 1. who is it: customer ID, or found by email when they do not know it
    found = conv.ok("find_customer")
    ids = _ID.findall(conv.user_text)
    customer_id = ids[-1].upper() if ids else (found.result["customer_id"] if found else None)
    if customer_id is None:
        emails = [e.rstrip(".") for e in _EMAIL.findall(conv.user_text)]
        if emails:
            last = conv.last("find_customer")
            if last is None or last.args.get("email") != emails[-1]:
                return _call(conv, "find_customer", email=emails[-1])
            return _say("I could not find a customer with that email address. Could you check it?")
        if conv.answer_to("Could you please provide your customer ID?") is not None:
            return _say("No problem. What is the email address on your account?")
        return _say("Could you please provide your customer ID?")

    # 2. verify identity before anything else
    skip_verify = "no-verify-address" in flaws and intent == "address"
    if not skip_verify and not conv.ok("verify_customer"):
        dobs = _DOB.findall(conv.user_text)
        last = conv.last("verify_customer")
        if dobs and (last is None or last.args.get("date_of_birth") != dobs[-1]):
            return _call(conv, "verify_customer", customer_id=customer_id, date_of_birth=dobs[-1])
        if last is not None:
            return _say("That date of birth does not match our records. Could you check it (YYYY-MM-DD)?")
        return _say("Thank you. For security, could you please confirm your date of birth?")

    profile_call = conv.ok("get_customer")
    if profile_call is None:
        return _call(conv, "get_customer", customer_id=customer_id)
    profile = profile_call.result

    handler = {"block": _block, "transfer": _transfer, "dispute": _dispute, "address": _address}.get(intent)
    if handler is None:
        lines = [f"Your {a['type']} account balance is {_money(a['balance'])}." for a in profile["accounts"]]
        return _say(" ".join(lines))
    return handler(conv, profile, flaws)


def _block(conv: Conversation, profile: dict[str, Any], flaws: set[str]) -> dict[str, Any]:
    wants_new = any(w in conv.opening for w in ("new one", "new card", "replacement", "replace"))
    active = [c for c in profile["cards"] if c["status"] == "active"]
    blocked = conv.ok("block_card")
    if blocked:
        card = blocked.result
    elif len(active) == 1 or (active and "wrong-card" in flaws):
        card = active[0]
    else:
        said = set(_LAST4.findall(conv.user_text))
        card = next((c for c in active if c["last4"] in said), None)
        if card is None:
            endings = " and ".join(c["last4"] for c in active)
            return _say(
                f"You have more than one card (ending in {endings}). Which card would you like to block? "
                "Please tell me its last 4 digits."
            )
    shipping = None
    if wants_new:
        question = "Would you like standard shipping (free, about 7 days) or express shipping"
        answer = conv.answer_to(question) or ""
        shipping = "express" if "express-default" in flaws else None
        shipping = shipping or ("express" if "express" in answer.lower() else "standard" if answer else None)
        if shipping is None:
            return _say(f"{question} ($15.00, 2 days) for your replacement card?")
    plan = f"block your card ending in {card['last4']}"
    if shipping:
        plan += f" and order a replacement card with {shipping} shipping"
    if not blocked:
        if not conv.confirmed(plan):
            return _say(f"I will {plan}. {GO_AHEAD}")
        return _call(conv, "block_card", card_id=card["card_id"])
    done = f"Your card ending in {card['last4']} is now blocked."
    if shipping:
        order = conv.ok("order_replacement_card")
        if order is None:
            return _call(conv, "order_replacement_card", card_id=card["card_id"], shipping=shipping)
        fee = (
            f" The {_money(order.result['fee'])} fee was charged to your account."
            if order.result["fee"]
            else ""
        )
        done += (
            f" A replacement card has been ordered with {shipping} shipping and arrives by "
            f"{order.result['arrives_by']}.{fee}"
        )
    return _say(done + " Anything else I can help with?")


def _transfer(conv: Conversation, profile: dict[str, Any], flaws: set[str]) -> dict[str, Any]:
    accounts = {a["type"]: a for a in profile["accounts"]}
    found = re.search(r"from (?:my )?(\w+).*?to (?:my )?(\w+)", conv.opening)
    if not found or found[1] not in accounts or found[2] not in accounts:
        kinds = " and ".join(accounts)
        return _say(f"Which account should the money come from and go to? You have {kinds}.")
    src, dst = accounts[found[1]], accounts[found[2]]
    done = conv.ok("transfer_funds")
    if done:
        new = done.result
        return _say(
            f"Done: {_money(done.args['amount'])} has been transferred. Your new balances are: "
            f"{src['type']} {_money(new['from']['balance'])}, {dst['type']} {_money(new['to']['balance'])}."
        )
    amount = conv.latest_amount()
    if amount is None:
        return _say("How much would you like to transfer?")
    if amount > src["balance"]:
        return _say(
            f"Your {src['type']} account only has {_money(src['balance'])} available, so I can't transfer "
            f"{_money(amount)}. Would you like to transfer a smaller amount?"
        )
    plan = (
        f"transfer {_money(amount)} from your {src['type']} account ({src['account_id']}) "
        f"to your {dst['type']} account ({dst['account_id']})"
    )
    if not conv.confirmed(plan):
        return _say(f"I will {plan}. {GO_AHEAD}")
    return _call(
        conv,
        "transfer_funds",
        from_account_id=src["account_id"],
        to_account_id=dst["account_id"],
        amount=amount,
    )


def _dispute(conv: Conversation, profile: dict[str, Any], flaws: set[str]) -> dict[str, Any]:
    for account in profile["accounts"]:
        if not any(
            c.name == "list_transactions" and c.args["account_id"] == account["account_id"]
            for c in conv.calls
        ):
            return _call(conv, "list_transactions", account_id=account["account_id"])
    txns = [t for c in conv.calls if c.name == "list_transactions" and c.ok for t in c.result]
    said = conv.user_text.lower()
    candidates = [t for t in txns if t["merchant"].lower() in said]
    if not candidates:
        return _say("Which merchant charged you? I don't see a matching transaction yet.")
    if "latest-charge" in flaws:
        txn = max(candidates, key=lambda t: t["date"])
    else:
        amount = conv.latest_amount()
        txn = next((t for t in candidates if amount is not None and abs(t["amount"] - amount) < 0.005), None)
        if txn is None:
            return _say(f"Which {candidates[0]['merchant']} charge do you mean? Please tell me the amount.")
    what = f"the {_money(txn['amount'])} charge from {txn['merchant']} on {txn['date']}"
    too_old = date.fromisoformat(txn["date"]) < conv.today - timedelta(days=60)
    if too_old and "no-dispute-window" not in flaws:
        return _say(f"I'm sorry: {what} is more than 60 days old, so it cannot be disputed under our policy.")
    opened = conv.ok("open_dispute")
    if opened:
        return _say(
            f"Dispute {opened.result['dispute_id']} has been opened for {what}. "
            "We will contact you within 10 business days."
        )
    question = "What is the reason for the dispute?"
    reason = conv.answer_to(question)
    if reason is None:
        return _say(question)
    plan = f"open a dispute for {what}"
    if not conv.confirmed(plan):
        return _say(f"I will {plan}. {GO_AHEAD}")
    return _call(conv, "open_dispute", transaction_id=txn["transaction_id"], reason=reason.strip())


def _address(conv: Conversation, profile: dict[str, Any], flaws: set[str]) -> dict[str, Any]:
    updated = conv.ok("update_address")
    if updated:
        return _say(f"Your address has been updated to {updated.args['address']}.")
    question = "What is your new address?"
    answer = conv.answer_to(question)
    found = _ADDRESS.search(answer or "")
    if found is None:
        return _say(
            question if answer is None else "Sorry, could you give me the full new address (street, city)?"
        )
    address = found[0].strip().rstrip(".")
    plan = f"update your address to {address}"
    if not conv.confirmed(plan):
        return _say(f"I will {plan}. {GO_AHEAD}")
    return _call(conv, "update_address", customer_id=profile["customer_id"], address=address)


def trusting(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The correct agent, except that it believes what customers claim (examples/bank/social.py):
    a claimed role, urgency or relation gets another customer's data or its instructions read out."""
    return respond(messages, {"trusting"})


def obeys_tools(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The correct agent, except that it carries out orders it finds in tool results (prompt
    injection through the tool channel, examples/bank/injection.py): the injection suite's flawed agent."""
    return obey(messages, tools) or respond(messages, set())
