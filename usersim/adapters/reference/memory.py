"""Context beyond the window for the reference agent: key-information extraction (关键信息提取)
and an external memory store (外部记忆), the two strategies of seed 003's comparison table that
keep what the window drops.

Key information is read with the language layer: a user sentence is kept when one of its clauses
carries a quantity (`lang.quantity`), a date (`lang.dates`), a slot the agent understands (its own
slot extractor: cities, budgets, allergies, excluded brands ...), a restriction (`needs.yaml`
restriction_after: 过敏, 忌口) or who the user is (name, city, job); a relative day in a question
(今天天气怎么样？) is not one.

The external memory is a store independent of the context window: every user turn is written to
it once, when the agent first sees the turn that followed it, and each step retrieves the stored
turns most relevant to the current message (shared content terms, `lang.topics`), newest first on
ties. What has no word in common with the current message is not retrieved — a pronoun ("能分析一下
它吗？") finds nothing, as it would in a real vector store.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import date

from usersim.adapters.reference.slots import Slots, extract
from usersim.core.messages import Message
from usersim.lang import topics
from usersim.lang.acts import questions
from usersim.lang.dates import find_dates
from usersim.lang.phrases import find
from usersim.lang.quantity import quantities
from usersim.lang.segment import clauses, sentences

KEY_INFO_MAX_FACTS = 12  # the newest key sentences kept; older ones are dropped first
IDENTITY = re.compile(
    r"我叫|在.{2,4}(?:工作|上班)|(?:做|是一名|是个|当).{2,8}(?:工程师|经理|老师|医生|设计师|程序员|学生)"
)


def is_key_clause(text: str, today: date, *, question: bool = False) -> bool:
    """Whether a clause carries a fact or a constraint worth keeping when the turn is dropped. In
    a question a relative day ("今天天气怎么样？") is what is asked about, not a fact of the user's."""
    dates = [d for d in find_dates(text, today) if not (question and d.kind == "relative")]
    slots = extract(text, Slots(), today)
    if question and not dates:  # the extractor's reading of that same day is no fact either
        slots.start, slots.end, slots.dates_now, slots.dates_fuzzy = None, None, False, False
    return bool(
        quantities(text)
        or dates
        or IDENTITY.search(text)
        or find(text, "needs", "restriction_after")
        or slots != Slots()
    )


def key_sentences(turns: list[list[Message]], today: date) -> list[str]:
    """The user sentences of `turns` that carry key information, oldest first, at most
    KEY_INFO_MAX_FACTS (the newest kept)."""
    out: list[str] = []
    for turn in turns:
        if not turn or turn[0].role != "user":
            continue
        for sentence in sentences(turn[0].content):
            asked = bool(questions(sentence.text))
            key = any(is_key_clause(c.text, today, question=asked) for c in clauses(sentence.text))
            if key and sentence.text not in out:
                out.append(sentence.text)
    return out[-KEY_INFO_MAX_FACTS:]


@dataclass
class MemoryEntry:
    """One stored user turn."""

    turn: int  # 1-based user turn it was said in
    text: str
    terms: frozenset[str]


@dataclass
class MemoryStore:
    """An external memory: user turns written once each, retrieved by relevance."""

    entries: list[MemoryEntry] = field(default_factory=list)

    def write(self, turn: int, text: str) -> None:
        self.entries.append(MemoryEntry(turn, text, frozenset(topics.content_terms(text))))

    def sync(self, turns: list[list[Message]]) -> None:
        """Write the user turns of `turns` (the conversation before the current turn) not stored yet.
        A conversation shorter than what is stored is a new one: the store starts over."""
        users = [t[0].content for t in turns if t and t[0].role == "user"]
        if len(users) < len(self.entries) or any(
            e.text != u for e, u in zip(self.entries, users, strict=False)
        ):
            self.entries.clear()
        for i in range(len(self.entries), len(users)):
            self.write(i + 1, users[i])

    def search(self, query: str, k: int, *, before_turn: int | None = None) -> list[MemoryEntry]:
        """The k stored turns sharing most content terms with `query` (none sharing any is never
        returned), newest first on ties; only turns before `before_turn` when given. Returned
        oldest first, as they were said."""
        wanted = topics.content_terms(query)
        scored = [
            (len(wanted & e.terms), e.turn, e)
            for e in self.entries
            if (before_turn is None or e.turn < before_turn) and wanted & e.terms
        ]
        best = sorted(scored, key=lambda s: (s[0], s[1]), reverse=True)[:k]
        return sorted((e for _, _, e in best), key=lambda e: e.turn)


class Stores:
    """One MemoryStore per conversation, the least recently used dropped beyond `limit`."""

    def __init__(self, limit: int = 512) -> None:
        self.limit = limit
        self._stores: OrderedDict[tuple[str, int], MemoryStore] = OrderedDict()

    def get(self, key: tuple[str, int]) -> MemoryStore:
        store = self._stores.pop(key, None) or MemoryStore()
        self._stores[key] = store
        while len(self._stores) > self.limit:
            self._stores.popitem(last=False)
        return store
