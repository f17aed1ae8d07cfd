"""A persona drafted from the user's side of a recorded conversation (rule-based, offline).

What is read, all through the language layer (usersim.lang.acts):
- language: `lang.detect` over the user's messages; opening message: the first user message;
- goal: the user's ask (`ask`): the first user messages' sentences without the greetings they
  open with (drafts.yaml `small_talk`), a greeting-only opening skipped and an ask spread over two
  turns joined, up to the first question mark; the opening message is the recorded one with the
  rest of the ask after it (a greeting-only opening says the ask too);
- known_info: the values the user gave. A value answering an agent request is named after the slot
  the request asked for ("What is your customer ID?" -> customer_id); a volunteered date or
  amount after its kind (dates, amount), another volunteered value after a concept in its
  sentence, else after its shape (value_1 ...); an answer naming one of the options a choice
  question offered is a preference fact named after what the options share (shipping: Express);
- goal.required: one `outcome`, delivered when a reply shows what the recording's last reply
  showed the user: codes, amounts and dates the user never said, values the user gave that a tool
  call used and the reply states back, words of the last action's result (blocked);
- events: a request the user answered in words (no value: "The monitor never arrived.") becomes a
  `say` event on the agent's question, so the simulated user answers it the same way;
- unknown_info candidates: agent requests the user's next message did not answer (no value given)
  or answered with "I don't know" (a dont_know act).
The draft is tagged `draft` and says in `notes` what to check; a human finishes it.
"""

from __future__ import annotations

import json
import re
from datetime import date
from typing import Any

from usersim import lang
from usersim.cases.importers.conversation import Conversation
from usersim.cases.importers.drafts import language_of, slug, small_talk, snippet, texts
from usersim.core.messages import Message
from usersim.lang.acts import agent_acts, user_acts
from usersim.lang.dates import find_dates
from usersim.lang.pii import PLACEHOLDER, find_pii
from usersim.lang.quantity import quantities

_EMAIL = re.compile(r"[\w.+\-]+@[\w\-]+(?:\.[\w\-]+)+")
# a personal value's fact is named after its kind (usersim.lang.pii; a placeholder names its kind)
_KIND_SLOT = {"email": "email", "phone": "phone", "card": "card_number", "iban": "iban",
              "address": "address", "name": "name"}  # fmt: skip
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_TODAY = date(2026, 1, 1)  # only the spans of date mentions are used, never the day they resolve to


def _slot_name(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_\u4e00-\u9fff]+", "_", text).strip("_").lower() or "value"


def _values(text: str, act_values: tuple[str, ...]) -> list[str]:
    """The values a user sentence gives: personal values (lang.pii: a phone, a card number, an
    IBAN, an address, or the placeholder --redact-pii put for one), emails, dates (lang.dates) and
    quantities with their unit (lang.quantity: $349.99, 每晚800元) whole, then the codes and
    numbers the acts reading found that are not part of one of those."""
    spans = [(m.start(), m.end()) for m in PLACEHOLDER.finditer(text)]
    spans += [(f.start, f.end) for f in find_pii(text)]
    spans += [(m.start(), m.end()) for m in _EMAIL.finditer(text)]
    spans += [(d.start, d.end) for d in find_dates(text, _TODAY)]
    spans += [(q.start, q.end) for q in quantities(text) if q.dimension not in (None, "count")]
    spans = sorted({s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)})
    found = [text[a:b].strip() for a, b in spans]
    taken = " ".join(found)
    rest = [v for v in act_values if v not in taken and not _fragment(v, taken)]
    at = {v: text.find(v) for v in found + rest}
    return sorted(found + rest, key=lambda v: at[v] if at[v] >= 0 else len(text))  # as said


def _fragment(value: str, taken: str) -> bool:
    """A bare digit group of a value already taken whole (a card's "1111", a phone's "7946")."""
    digits = re.sub(r"\D", "", value)
    return bool(digits) and not re.search(r"[^\d\s\-.()+]", value) and digits in re.sub(r"\D", "", taken)


def _pii_slot(value: str) -> str:
    """The slot a whole personal value is named after: its kind (a placeholder's kind too)."""
    m = PLACEHOLDER.fullmatch(value)
    if m:
        return _KIND_SLOT.get(value.strip("<>").rsplit("_", 1)[0].lower(), "")
    found = find_pii(value)
    if len(found) == 1 and found[0].start == 0 and found[0].end == len(value):
        return _KIND_SLOT.get(found[0].kind, "")
    return ""


def _kind_slot(value: str) -> str:
    """A slot name from what a value is: dates (lang.dates), a duration or an amount (lang.quantity)."""
    if find_dates(value, _TODAY):
        return "dates"
    q = quantities(value)
    if q and q[0].dimension == "duration":
        return "duration"
    if q and q[0].dimension == "money":
        return "amount"
    return ""


def _requests(text: str) -> list[Any]:
    return [a for a in agent_acts(text) if a.kind in ("request", "clarify") and a.sure]


def _facts(messages: list[Message]) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]:
    facts: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []  # requests answered in words: said again when asked again
    unknown: list[str] = []
    seen: set[str] = set()
    asked: list[Any] = []  # the agent's open requests when the user speaks
    shapes = 0
    for m in messages:
        if m.role == "assistant" and m.content.strip():
            asked = _requests(m.content)
            continue
        if m.role != "user":
            continue
        acts = user_acts(m.content)
        given = [(a, v) for a in acts for v in _values(a.text, a.values)]
        if asked and any(a.kind == "dont_know" for a in acts):  # asked, and the user could not say
            unknown += [snippet(q.text, 120) for q in asked if snippet(q.text, 120) not in unknown]
        # a choice the agent offered ("standard shipping or express shipping?") answered by naming
        # one option: a preference fact (slot: what the options share, value: the user's word);
        # the question's own slots are not what the answer is (Friday is no "card")
        choices = [c for q in asked if (c := _choice(q, m.content, lang.detect(m.content)))]
        for slot, value, about in choices:
            if value not in seen:
                seen.add(value)
                facts.append({"slot": _free_slot(slot, facts), "value": value, "description": about})
        slots = [s for q in asked if not (q.kind == "clarify" and choices) for s in q.slots]
        if asked and not given and not choices:  # a request answered in words ("The monitor never arrived.")
            words = [a.text.strip() for a in acts if a.kind in ("other", "provide")]
            if words:
                trigger = snippet(asked[0].text.strip().rstrip("?？"), 80).rstrip("…")
                events.append({"when": {"agent_says": [trigger]}, "kind": "say", "text": " ".join(words)})
        # a personal value is named after its kind (a phone is `phone` whatever was asked); the
        # others take the slots asked, in order, that no personal value took
        kinds = [_pii_slot(v) for _, v in given]
        open_slots = [x for x in slots if x not in kinds]
        n = -1
        for (act, value), kind in zip(given, kinds, strict=True):
            if value in seen:
                continue
            seen.add(value)
            n += 0 if kind else 1
            if kind:
                slot = kind
            elif n < len(open_slots):
                slot = open_slots[n]
            elif _kind_slot(value):  # a volunteered date or amount is one ("lost my card yesterday")
                slot = _kind_slot(value)
            elif act.slots:
                slot = act.slots[0]
            elif _EMAIL.fullmatch(value):
                slot = "email"
            else:
                shapes += 1
                slot = f"value_{shapes}"
            name = _free_slot(slot, facts)
            # described by the question it answered: the simulator recognises the question again by it
            about = asked[min(n, len(asked) - 1)].text if asked else act.text
            facts.append({"slot": name, "value": value, "description": snippet(about, 120)})
        asked = []
    return facts, unknown, events


def _free_slot(slot: str, facts: list[dict[str, Any]]) -> str:
    """`slot` as a fact name no earlier fact has (card, card_2, ...)."""
    name = base = _slot_name(slot)
    k = 1
    while any(f["slot"] == name for f in facts):
        k += 1
        name = f"{base}_{k}"
    return name


def _function_words(language: str) -> set[str]:
    res = lang.resources(language if language in lang.language_codes() else "en")
    return {str(w) for w in res.topic("drafts").get("function_words") or []}


def _tokens(text: str) -> list[str]:
    """Latin words of a text, lower case, in order (Chinese is read by substrings, `_cjk_value`)."""
    return re.findall(r"[a-z]{3,}", text.lower())


def _cjk_value(answer: str, option: str, others: list[str]) -> str:
    """The longest run of Chinese in both the answer and `option` that no other option has."""
    best = ""
    for i in range(len(answer)):
        for j in range(len(answer), i + 1 + len(best), -1):
            piece = answer[i:j]
            if (
                re.fullmatch(r"[\u4e00-\u9fff]+", piece)
                and piece in option
                and not any(piece in o for o in others)
            ):
                best = piece
                break
    return best


def _choice(question: Any, answer: str, language: str) -> tuple[str, str, str] | None:
    """(what the options share, the option's word(s) the answer names, the question) when
    `question` offers options and `answer` names one of them and no other, else None."""
    options = [o for o in getattr(question, "options", ()) or () if o.strip()]
    if question.kind != "clarify" or len(options) < 2:
        return None
    stop = _function_words(language)
    named: list[str] = []
    for i, option in enumerate(options):
        others = [o for j, o in enumerate(options) if j != i]
        other_words = {w for o in others for w in _tokens(o)}
        own = [w for w in _tokens(answer) if w in _tokens(option) and w not in other_words and w not in stop]
        zh = _cjk_value(answer, option, others)
        zh = zh if len(zh) >= 2 and zh not in stop else ""
        if own or zh:
            named.append(own[0] if own else zh)
    if len(named) != 1:
        return None
    value = named[0]
    # what the choice is about: the word every option shares, the first after the named one in
    # its option ("express shipping ($15.00, 2 days)": shipping, not days), for Chinese the pair
    # of characters every option has ("标准配送" / "加急配送": 配送)
    option = next(o for o in options if value.lower() in o.lower())
    shared = [w for w in _tokens(option) if w not in stop and all(w in _tokens(o) for o in options)]
    after = option.lower().find(value.lower()) + len(value)
    later = [w for w in shared if option.lower().find(w, after) >= 0]
    pairs = [
        option[k : k + 2]
        for k in range(len(option) - 1)
        if re.fullmatch(r"[\u4e00-\u9fff]{2}", option[k : k + 2])
        and option[k : k + 2] not in stop
        and all(option[k : k + 2] in o for o in options)
    ]
    slot = (later or shared or pairs or ["choice"])[0]
    at = answer.lower().find(value)
    return slot, answer[at : at + len(value)] if at >= 0 else value, snippet(question.text, 120)


def _goal(opening: str) -> str:
    """The first request: the ask up to its first question (or all of it)."""
    flat = " ".join(opening.split())
    cut = re.search(r"[?？]", flat)
    return flat[: cut.end()] if cut else flat


def _without_small_talk(sentence: str, patterns: list[str]) -> str:
    """`sentence` with the greetings it opens with taken off ("Hi there! I need..." -> "I need...")."""
    rest = sentence.strip()
    for _ in range(3):
        for p in patterns:
            m = re.match(rf"(?i:{p})(?![A-Za-z])[\s,，.。!！?？~～]*", rest)
            if m and m.end():
                rest = rest[m.end() :].strip()
    return rest if re.search(r"[^\W\d_]", rest) else ""  # punctuation alone is nothing left


def ask(messages: list[Message], language: str) -> str:
    """The user's ask (`ask_sentences`) up to its first question."""
    return _goal(" ".join(ask_sentences(messages, language)))


def ask_sentences(messages: list[Message], language: str) -> list[str]:
    """The user's ask: from the first user message on, the sentences that are not small talk,
    over at most two messages: a greeting first and the ask after it, or an ask spread over two
    turns ("I'm calling about my card." / "There's a charge I never made."). It ends at the
    first message that answers with values, or says "I don't know", "yes" or "no"."""
    patterns = small_talk(language)
    parts: list[str] = []
    messages_used = 0
    for m in messages:
        if m.role != "user" or not m.content.strip():
            continue
        acts = user_acts(m.content)
        answers = any(_values(a.text, a.values) for a in acts) or any(
            a.kind in ("dont_know", "confirm", "refuse") for a in acts
        )
        if parts and answers:
            break
        said = [r for r in (_without_small_talk(a.text, patterns) for a in acts) if r]
        if said:
            parts += said
            messages_used += 1
            if messages_used == 2:
                break
    return parts


def persona_id(conv: Conversation) -> str:
    """The drafted persona's id (a persona id is lower case, no dots)."""
    return re.sub(r"[^a-z0-9_\-]+", "-", slug(conv.id).lower()).strip("-_") + "-user"


def draft_note(conv: Conversation) -> str:
    """The review note written at the top of the drafted persona file."""
    return texts(language_of(conv))["persona_draft"]


def deliverables(messages: list[Message]) -> list[str]:
    """What the recording's outcome showed the user: the values (codes, amounts, dates) of the
    agent's last reply that the user never said, as the words that show it delivered; then the
    values the user gave that the agent acted on (a tool call's argument) and the last reply
    states back ("your address is now 1 Sample Street, Springfield"): another agent confirms the
    same action by them, not by the recorded agent's reference numbers."""
    said = " ".join(m.content for m in messages if m.role == "user")
    last = next((m.content for m in reversed(messages) if m.role == "assistant" and m.content.strip()), "")
    acted = " ".join(
        str(v)
        for m in messages
        if m.role == "assistant"
        for tc in m.tool_calls
        for v in tc.arguments.values()
    )
    found: list[str] = []
    echoed: list[str] = []
    for act in user_acts(last):  # the values reading, applied to the reply's sentences
        for v in _values(act.text, act.values):
            if v not in said and v not in found:
                found.append(v)
            elif v in said and v in acted and v not in echoed and len(v) >= 4:
                echoed.append(v)
    return found[:4] + echoed[:2] + _result_words(messages, found + echoed)[:2]


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    return [value] if isinstance(value, str) else []


def _result_words(messages: list[Message], taken: list[str]) -> list[str]:
    """What the last action's result says that the last reply tells the user and no earlier reply
    did: `{"status": "blocked"}` and "Your card ending in 7788 is now blocked." give `blocked` (the
    card's digits were in an earlier reply: another agent says them before acting)."""
    replies = [i for i, m in enumerate(messages) if m.role == "assistant" and m.content.strip()]
    if not replies:
        return []
    last = messages[replies[-1]].content
    earlier = " ".join(messages[i].content for i in replies[:-1]).lower()
    start = max((i for i, m in enumerate(messages[: replies[-1]]) if m.role == "user"), default=-1)
    out: list[str] = []
    for m in messages[start + 1 : replies[-1]]:
        if m.role != "tool":
            continue
        try:
            leaves = _leaves(json.loads(m.content))
        except ValueError:
            continue
        for leaf in leaves:
            word = leaf.strip()
            if not 3 <= len(word) <= 40 or word in out or word in taken or word.lower() in earlier:
                continue
            pattern = rf"(?<![\w-]){re.escape(word)}(?![\w-])" if word.isascii() else re.escape(word)
            if re.search(pattern, last, re.IGNORECASE):
                out.append(word)
    return out


def draft_persona(conv: Conversation) -> dict[str, Any]:
    """Persona data drafted from `conv`'s user side (validates as a Persona)."""
    language = language_of(conv)
    t = texts(language)
    users = [m.content for m in conv.messages if m.role == "user" and m.content.strip()]
    opening = users[0] if users else ""
    facts, unknown, events = _facts(conv.messages)
    goal: dict[str, Any] = {
        "description": ask(conv.messages, language) or t["persona_name"].format(source=conv.id)
    }
    # a greeting-only opening, or an ask spread over two turns: the simulated user opens with the
    # whole ask (an agent may read the request from the first message alone)
    later = [p for p in ask_sentences(conv.messages, language) if p not in opening]
    opening = " ".join([opening.strip(), *later]).strip()
    shown = deliverables(conv.messages)
    if shown:  # the goal is met when a reply shows what the recorded outcome showed
        goal |= {"required": ["outcome"], "deliverable_keywords": {"outcome": shown}}
    return {
        "id": persona_id(conv),
        "name": t["persona_name"].format(source=conv.id),
        "language": language if language in ("zh", "en") else "en",
        "identity": t["persona_identity"].format(source=conv.source),
        "opening_message": opening,
        "goal": goal,
        "known_info": facts,
        "unknown_info": unknown,
        "reveal_policy": "when_asked",
        "events": events,
        "max_turns": max(len(users) + 2, 4),
        "tags": ["imported", "draft"],
    }


def persona_language(data: dict[str, Any]) -> str:
    """The drafted persona's language code (for the organic case beside it)."""
    return str(data.get("language") or lang.detect(str(data.get("opening_message", ""))))
