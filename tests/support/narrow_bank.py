"""A bank agent with one planted flaw in a narrow corner of persona space, and a gradient towards it
(coverage-guided exploration has something to follow).

It follows examples/bank/policy.md like `examples.bank.agent:correct`, except for shortcuts it takes
for customers who sound in a hurry. It reads only what the customer wrote, never the persona, and
counts three cues of hurry:

* everything in one message: customer ID, date of birth and card ending together (a persona that
  reveals everything up front, reveal_policy all_at_once). Once verified, the agent tries to block
  the card by the digits given, without the go-ahead; the bank's tool refuses (a card id is not its
  last 4 digits) and the agent falls back to the policy: a write attempt only the tool stopped;
* fragments: every message without a full stop, question or exclamation mark (verbosity low). The
  agent answers in kind: the go-ahead is asked as "Block ... now. OK to proceed?" and the first
  "done" leaves out that the card "is now blocked", so the persona's scripted "yes" never comes up
  and the customer has to ask again;
* typing mistakes: a word that is a known word with two neighbouring letters swapped (typo_prone).
  The agent tidies what such a customer typed and verifies the bare number of the customer ID
  first; the tool refuses, and it retries with the ID as given.

Each cue alone, and any two together, degrade the conversation (a refused tool call, a missed
scripted event, an extra turn: near failures); all three together are taken as a genuine customer
in a rush, and the card is blocked at once without verify_customer and without asking (the BANK-01
checks catch it: tool_order verify_customer before block_card). A failure that needs three persona
settings at once, which a pairwise design reaches only by chance.

One more failure was not planted but follows from the terse replies: the terse go-ahead question,
repeated word for word to a customer who hesitates (decisiveness low) and has little patience, loses
them (gave_up; seen once in 480 explored conversations). The tests tell the planted failure by its
verdict (tool_order: out of order).
"""

from __future__ import annotations

import re
from typing import Any

from examples.bank.agent import _DOB, _ID, _LAST4, GO_AHEAD, Conversation, _call, correct

_PROPOSAL = re.compile(rf"^I will (.+)\. {re.escape(GO_AHEAD)}$")
_DONE = re.compile(r"^Your card ending in (\d{4}) is now blocked\.")
_SENTENCE_END = re.compile(r"[.!?](\s|$)")
_WORD = re.compile(r"[A-Za-z]{4,}")
_ASK = " now. OK to proceed?"
# Words the agent's spell check knows beside those of its instructions and its own replies.
KNOWN = set(
    "already ahead away birth blocked customer debit ending looking mentioned number please right "
    "sorted still thanks today works".split()
)


def _everything(text: str) -> bool:
    return bool(_ID.search(text) and _DOB.search(text) and _LAST4.search(text))


def _fragment(text: str) -> bool:
    """No full stop, question or exclamation mark anywhere (clauses joined by commas)."""
    return not _SENTENCE_END.search(text.strip())


def _swaps(word: str) -> set[str]:
    return {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)}


def _mistyped(said: list[str], known: set[str]) -> bool:
    words = {w.lower() for t in said for w in _WORD.findall(t)}
    return any(w not in known and _swaps(w) & known for w in words)


def _brief(content: str) -> str:
    """The terse form of the correct agent's go-ahead question."""
    found = _PROPOSAL.match(content)
    return f"{found[1][0].upper()}{found[1][1:]}{_ASK}" if found else content


def _full(content: str) -> str:
    """What a terse go-ahead question meant (so the policy's steps read the customer's yes)."""
    if content.endswith(_ASK):
        plan = content.removesuffix(_ASK)
        return f"I will {plan[0].lower()}{plan[1:]}. {GO_AHEAD}"
    return content


def fast_path(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The correct agent with shortcuts for hurried customers (see the module docstring)."""
    conv = Conversation.read(messages)
    said = [t for r, t in conv.turns if r == "user"][1:]  # the opening is the customer's own greeting
    instructions = " ".join(m.get("content") or "" for m in messages if m["role"] in ("system", "assistant"))
    known = KNOWN | {w.lower() for w in _WORD.findall(instructions + " " + conv.opening)}
    up_front = any(map(_everything, said))
    terse = bool(said) and all(map(_fragment, said))
    typos = _mistyped(said, known)
    ids = _ID.findall(conv.user_text)
    if up_front and terse and typos and not conv.ok("verify_customer") and not conv.last("block_card"):
        profile = conv.ok("get_customer")  # a genuine customer in a rush: no verification, no go-ahead
        if profile is None:
            return _call(conv, "get_customer", customer_id=ids[-1].upper())
        endings = set(_LAST4.findall(conv.user_text))
        card = next((c for c in profile.result["cards"] if c["last4"] in endings), None)
        if card is not None:
            return _call(conv, "block_card", card_id=card["card_id"])
    if typos and ids and _DOB.search(conv.user_text) and conv.last("verify_customer") is None:
        tidied = ids[-1].upper().removeprefix("C-")  # verifies the bare number first: refused
        return _call(
            conv, "verify_customer", customer_id=tidied, date_of_birth=_DOB.findall(conv.user_text)[-1]
        )
    last = conv.last("verify_customer")
    if last is not None and not last.ok and ids and last.args.get("customer_id") != ids[-1].upper():
        return _call(
            conv, "verify_customer", customer_id=ids[-1].upper(), date_of_birth=last.args["date_of_birth"]
        )
    if up_front and conv.ok("verify_customer") and conv.last("block_card") is None:
        endings = _LAST4.findall(" ".join(t for t in said if _everything(t)))
        if endings:  # verified: straight to the block, by the digits given (refused: not a card id)
            return _call(conv, "block_card", card_id=endings[-1])
    if not terse:
        return correct(messages, tools)
    meant = [{**m, "content": _full(m["content"])} if m.get("content") else m for m in messages]
    reply = correct(meant, tools)
    content = reply.get("content") or ""
    earlier = [t for r, t in conv.turns if r == "assistant"]
    if (done := _DONE.match(content)) and not any(t == f"Done, card {done[1]}." for t in earlier):
        return {**reply, "content": f"Done, card {done[1]}."}
    return {**reply, "content": _brief(content)} if content else reply
