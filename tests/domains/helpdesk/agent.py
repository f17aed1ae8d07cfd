"""Contoso helpdesk agents for tests: the same policy asked in different words, and a flawed one.

    usersim run tests/domains/helpdesk/cases --agent python:tests.domains.helpdesk.agent:plain

`plain`, `casual` and `imperative` follow the policy with differently worded questions (a
question mark, a casual question, a request without one); `flawed` never asks which laptop (it
repairs the last one on file) and ships the replacement to the office on file without asking.
Stateless: each call re-reads the conversation.
"""

from __future__ import annotations

import re
from typing import Any

from tests.domains.chat import answer as _answer
from tests.domains.chat import call as _call
from tests.domains.chat import read as _read
from tests.domains.chat import say as _say

WORDING = {
    "plain": {
        "id": "What is your employee ID?",
        "laptop": "You have a ThinkPad X1 Carbon and a MacBook Pro 14. Which laptop has the cracked screen?",
        "address": "Where should we deliver the replacement laptop?",
        "phone": "What phone number can the technician call you back on?",
        "confirm": "I will open a repair ticket for your {model} and ship a replacement to {address}. Shall I go ahead?",
        "done": "Done: ticket {ticket} is open for your {model} and the replacement ships to {address}; it arrives {arrives}.",
    },
    "casual": {
        "id": "What's your staff ID?",
        "laptop": "Which laptop are you using, the ThinkPad or the MacBook?",
        "address": "Where should we deliver it?",
        "phone": "Can I get a callback number?",
        "confirm": "So: a repair ticket for the {model}, replacement to {address}. OK to proceed?",
        "done": "All set, ticket {ticket} is open for the {model}, and your replacement ships to {address} (arrives {arrives}).",
    },
    "imperative": {
        "id": "Please share your employee number so I can look you up.",
        "laptop": "Tell me which of your two laptops is broken, the ThinkPad X1 Carbon or the MacBook Pro 14",
        "address": "Let me know the address the replacement should go to",
        "phone": "I also need a number our technician can reach you at",
        "confirm": "Before I submit anything: repair ticket for the {model}, replacement delivered to {address}. Do I have your go-ahead?",
        "done": "Confirmed: ticket {ticket} is open for the {model}, and the replacement is on its way to {address}, arriving {arrives}.",
    },
}
_ID = re.compile(r"\bE-\d{4}\b", re.IGNORECASE)
_PHONE = re.compile(r"\+?\d[\d ()-]{7,}\d")
_ADDRESS = re.compile(r"Building \d+, Floor \d+", re.IGNORECASE)
_YES = re.compile(r"\b(yes|yeah|yep|sure|go ahead|please do|ok|okay|proceed|do it|confirm)\b", re.IGNORECASE)
_NO = re.compile(r"\b(no|nope|don't|do not|wait|stop|not)\b", re.IGNORECASE)


def respond(messages: list[dict[str, Any]], words: dict[str, str], flawed: bool = False) -> dict[str, Any]:
    turns, results = _read(messages)
    said = "\n".join(t for r, t in turns if r == "user")
    ids = _ID.findall(said)
    if not ids:
        return _say(words["id"])
    employee = results.get("lookup_employee")
    if employee is None:
        return _call(messages, "lookup_employee", employee_id=ids[-1].upper())
    laptops = employee["laptops"]
    laptop = laptops[-1] if flawed else None  # flawed: the last laptop on file, never asked
    if laptop is None:
        reply = (_answer(turns, words["laptop"]) or "").lower()
        laptop = next(
            (lp for lp in laptops if any(w.lower() in reply for w in lp["model"].split()[:1])), None
        )
        if laptop is None:
            return _say(words["laptop"])
    address = "Building 1, Floor 1" if flawed else None  # flawed: the head office, never asked
    if address is None:
        found = _ADDRESS.findall(_answer(turns, words["address"]) or "")
        if not found:
            return _say(words["address"])
        address = found[-1]
    phones = _PHONE.findall(_answer(turns, words["phone"]) or "")
    if not phones:
        return _say(words["phone"])
    plan = words["confirm"].format(model=laptop["model"], address=address)
    reply = _answer(turns, plan)
    if "open_ticket" not in results:
        if reply is None or not _YES.search(reply) or _NO.search(reply):
            return _say(plan)
        return _call(
            messages,
            "open_ticket",
            employee_id=employee["employee_id"],
            laptop_id=laptop["laptop_id"],
            issue="cracked screen",
            callback_phone=phones[-1],
        )
    if "ship_replacement" not in results:
        return _call(
            messages,
            "ship_replacement",
            employee_id=employee["employee_id"],
            laptop_id=laptop["laptop_id"],
            deliver_to=address,
        )
    ship = results["ship_replacement"]
    return _say(
        words["done"].format(
            ticket=results["open_ticket"]["ticket_id"],
            model=laptop["model"],
            address=address,
            arrives=ship["arrives"],
        )
    )


def plain(messages, tools):
    return respond(messages, WORDING["plain"])


def casual(messages, tools):
    return respond(messages, WORDING["casual"])


def imperative(messages, tools):
    return respond(messages, WORDING["imperative"])


def flawed(messages, tools):
    return respond(messages, WORDING["plain"], flawed=True)
