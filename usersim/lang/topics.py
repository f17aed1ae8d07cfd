"""Topic reading of a turn (`data/<code>/topics.yaml`): its content terms, whether it refers back
to the current topic, announces a topic switch or goes back to an earlier topic.

Content terms are what two turns share when they are about the same thing: for text in a CJK
script the two-character pieces of the runs left between function words, for Latin text the
words that are not function words, and numbers everywhere. The drift judge compares them between
the user's instruction and each reply; the reference agent's external memory ranks stored turns
by them.
"""

from __future__ import annotations

import functools
import re

from usersim.lang.phrases import codes_for, find, finditer
from usersim.lang.resources import Cue, language_codes, resources

_CJK = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-']*|\d+(?:\.\d+)?")
_OTHER = re.compile(r"[^\w]|_")


@functools.lru_cache(maxsize=8)
def _function_words(_key: tuple[str, ...]) -> tuple[re.Pattern[str], frozenset[str]]:
    """(a splitter on the CJK function words, the Latin function words) of every language."""
    cjk: set[str] = set()
    latin: set[str] = set()
    for code in language_codes():
        for w in resources(code).words("topics", "function_words"):
            (cjk if _CJK.search(w) else latin).add(w.casefold())
    # longest first, so 能不能 is removed before 能
    alternatives = "|".join(re.escape(w) for w in sorted(cjk, key=len, reverse=True))
    splitter = re.compile(f"(?:{alternatives}|\\s|[^\\w])" if alternatives else r"(?:\s|[^\w])")
    return splitter, frozenset(latin)


def _key() -> tuple[str, ...]:
    return tuple(f"{c}:{id(resources(c))}" for c in language_codes())


def content_terms(text: str) -> set[str]:
    """The content terms of `text`, lower-cased: CJK two-character pieces between function words,
    Latin words that are not function words, numbers."""
    splitter, latin_stop = _function_words(_key())
    out = {w.casefold() for w in _LATIN_WORD.findall(text or "") if w.casefold() not in latin_stop}
    for seg in splitter.split(text or ""):
        seg = "".join(ch for ch in seg if _CJK.match(ch))
        if len(seg) >= 2:
            out.update(seg[i : i + 2] for i in range(len(seg) - 1))
    return out


def continues(text: str) -> Cue | None:
    """The word by which a turn refers back to what was being discussed (这些 / 刚才 / it), if any."""
    return find(text, "topics", "continues", codes_for(text))


def announces_switch(text: str) -> Cue | None:
    """The phrase by which the user says outright that the topic changes (换个话题), if any."""
    return find(text, "topics", "explicit_switch", codes_for(text))


def switch_opener(text: str) -> Cue | None:
    """A turn-initial opener that introduces a new subject (对了，… / by the way, …), if any."""
    return find(text, "topics", "switch_openers", codes_for(text))


def returns_to_earlier(text: str) -> Cue | None:
    """The phrase by which the user goes back to an earlier topic (回到刚才的… / back to …), if any."""
    return find(text, "topics", "returns", codes_for(text))


def without_announcements(text: str) -> str:
    """`text` with its switch announcements blanked (their words are not the new topic)."""
    out = list(text)
    for cue in finditer(text, "topics", "explicit_switch", codes_for(text)):
        out[cue.start : cue.end] = " " * (cue.end - cue.start)
    return "".join(out)
