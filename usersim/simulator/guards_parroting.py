"""Is a user turn that reads much like the agent's last reply a copy of it, or the user's answer?

An answer confirms or quotes the agent's proposal in the user's voice; a copy re-asks the agent's
question, keeps the agent's address to the user, or adds nothing of its own. Who speaks and what
asks are language resources (usersim/lang/data/<code>/perspective.yaml).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from usersim import lang
from usersim.lang.segment import sentences

OWN_LETTERS = {"zh": 2, "en": 4}  # letters of its own a turn needs to be more than a copy
MATCH = 0.6  # a user sentence this close to an agent sentence echoes it


def _words(code: str, key: str) -> tuple[str, ...]:
    return lang.resources(code).words("perspective", key)


def _count(code: str, key: str, text: str) -> int:
    low = text.lower()
    if code == "zh":
        return sum(low.count(w) for w in _words(code, key))
    return sum(len(re.findall(rf"(?<![\w']){re.escape(w)}(?![\w'])", low)) for w in _words(code, key))


def is_question(code: str, sentence: str) -> bool:
    body = sentence.strip().rstrip("。.!！~～ ")
    if body.endswith(("?", "？")):
        return True
    return any(body.endswith(p) for p in _words(code, "question_end"))


def _best(sentence: str, agent: list[str]) -> tuple[str, float]:
    scored = [(s, SequenceMatcher(None, sentence, s, autojunk=False).ratio()) for s in agent]
    return max(scored, key=lambda x: x[1], default=("", 0.0))


def _own_letters(text: str, agent: str) -> int:
    """Letters of `text` outside the blocks it shares with `agent`."""
    shared = [False] * len(text)
    for block in SequenceMatcher(None, text, agent, autojunk=False).get_matching_blocks():
        for k in range(block.a, block.a + block.size):
            shared[k] = True
    return sum(1 for ch, s in zip(text, shared, strict=True) if not s and ch.isalnum())


def echo(text: str, agent_text: str) -> bool:
    """Whether a user turn close to the agent's reply copies it (True) or answers it (False)."""
    code = lang.detect(text)
    mine = [s.text for s in sentences(text)]
    theirs = [s.text for s in sentences(agent_text)]
    pairs = [(s, *_best(s, theirs)) for s in mine]
    echoed = [(s, a) for s, a, r in pairs if r >= MATCH]
    if any(is_question(code, s) and is_question(code, a) for s, a in echoed):
        return True  # re-asks the agent's question
    if any(is_question(code, a) and not is_question(code, s) for s, a in echoed):
        return False  # the agent asked, the user states it: a confirmation
    if any(_agents_voice(code, s, a) for s, a in echoed):
        return True  # speaks to the user the way the agent does: "your booking ..."
    return _own_letters(text, agent_text) < OWN_LETTERS.get(code, 4)


def _agents_voice(code: str, mine: str, theirs: str) -> bool:
    """A user sentence that keeps the agent sentence's address to the user and adds no "I"/"my"."""
    you = _count(code, "addressee", mine)
    return (
        you > 0
        and you >= _count(code, "addressee", theirs)
        and (_count(code, "speaker", mine) <= _count(code, "speaker", theirs))
    )
