"""What the reference agent sees: the context strategies of seed 003's comparison table
(full / window-N / summary / key-info / external-memory, each combinable with profile injection).

A user turn is the user message plus everything that followed it. `window-N` keeps the last N
turns; `summary` keeps the last N turns verbatim (default 4) and replaces older ones by a
deterministic extractive summary (the user sentences that carry facts, at most 8, newest kept);
`key-info` keeps the last N turns verbatim (default 1: only the current one) and of everything
older only the sentences that carry key information (memory.key_sentences); `external-memory`
keeps a window (default 2 turns) and retrieves the K stored turns most relevant to the current
message from a store written per turn (memory.MemoryStore, default K = 3). What a strategy carries
from outside its window (summary, key facts, retrieved turns) is read as earlier user messages.
Profile injection extracts user facts from the whole conversation into a profile that is
prepended to whatever context remains. `ignore-history` (a flaw) keeps only the current turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from usersim.adapters.reference.dates import parse_today
from usersim.adapters.reference.memory import IDENTITY, MemoryStore, key_sentences
from usersim.adapters.reference.skills import parse_skills
from usersim.adapters.reference.slots import Slots, extract, profile_of
from usersim.core.messages import Message

DEFAULT_TODAY = date(2026, 4, 7)  # the seeds' "当前日期" when a case states none
SUMMARY_KEEP_TURNS = 4
KEY_INFO_KEEP_TURNS = 1
EXTERNAL_MEMORY_K = 3
EXTERNAL_MEMORY_WINDOW = 2
SUMMARY_MAX_SENTENCES = 8
_FACT_CUE = re.compile(
    r"\d|过敏|不吃|不要|预算|出发|去|人|天|kg|公斤|喜欢|偏好|品牌|用途|住|不耐受|以内|之内|左右|机票|酒店|买"
)


@dataclass
class ContextConfig:
    """The context strategy of one reference agent."""

    window: int | None = None
    summary: int | None = None  # verbatim turns kept when summarising
    key_info: int | None = None  # verbatim turns kept beside the extracted key information
    external_memory: int | None = None  # turns retrieved from the store per step
    profile: bool = False
    ignore_history: bool = False


@dataclass
class View:
    """The context the agent reasons over for one step."""

    today: date
    memory: list[str]
    turns: list[list[Message]]  # visible turns, oldest first; the last one is the current turn
    summary: list[str] = field(default_factory=list)  # carried from outside the window
    profile: Slots | None = None
    images: list[str] = field(default_factory=list)  # captions of images attached to this turn
    skills: list[str] = field(default_factory=list)  # skills listed in the system prompt
    system: list[Message] = field(default_factory=list)  # the system messages as sent

    def tokens(self) -> int:
        """Prompt tokens of this view: what a model behind this strategy would be sent (system
        messages, the carried lines and profile, the visible turns) — the strategy's token cost."""
        from usersim.cases.tokens import count_tokens

        carried = "\n".join(self.memory + self.summary)
        if self.profile is not None:
            carried += "\n" + ", ".join(f"{k}={v}" for k, v in vars(self.profile).items() if v)
        extra = [Message(role="system", content=carried)] if carried.strip() else []
        return count_tokens(self.system + extra + [m for t in self.turns for m in t])

    @property
    def current(self) -> list[Message]:
        return self.turns[-1] if self.turns else []

    @property
    def user_text(self) -> str:
        return self.current[0].content if self.current and self.current[0].role == "user" else ""

    def visible_user_messages(self) -> list[str]:
        """What the user said as far as this view knows: lines carried from outside the window
        (summary, key facts, retrieved memory), then the visible turns."""
        return self.summary + [t[0].content for t in self.turns if t and t[0].role == "user"]

    def times_asked(self) -> dict[str, int]:
        """How many of our earlier replies asked about each slot."""
        from usersim.adapters.reference.intents import asked_slots

        counts: dict[str, int] = {}
        for turn in self.turns[:-1]:
            for m in turn:
                if m.role == "assistant" and m.content:
                    for slot in asked_slots(m.content):
                        counts[slot] = counts.get(slot, 0) + 1
        return counts

    def assistant_texts(self) -> list[str]:
        return [m.content for t in self.turns for m in t if m.role == "assistant" and m.content]

    def loaded_skills(self) -> set[str]:
        return {
            str(c.arguments.get("name"))
            for t in self.turns[:-1]
            for m in t
            if m.role == "assistant"
            for c in m.tool_calls
            if c.name == "load_skill"
        }

    def previous_assistant_text(self) -> str:
        """Our last text reply before the current turn (to know what we asked)."""
        for turn in reversed(self.turns[:-1]):
            for m in reversed(turn):
                if m.role == "assistant" and m.content:
                    return m.content
        return ""


def split_turns(messages: list[Message]) -> tuple[list[Message], list[list[Message]]]:
    """(system messages, user turns)."""
    system = [m for m in messages if m.role == "system"]
    turns: list[list[Message]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "user" or not turns:
            turns.append([m])
        else:
            turns[-1].append(m)
    return system, turns


def parse_memory(system_text: str) -> list[str]:
    """Memory entries from the system prompt: the lines under a 记忆 / memory heading."""
    out: list[str] = []
    in_memory = False
    for line in system_text.splitlines():
        stripped = line.strip()
        bullet = stripped.startswith(("-", "*", "•"))
        if not bullet and re.search(r"记忆|memory|关于用户|用户信息", stripped, re.IGNORECASE):
            in_memory = True
            inline = re.split(r"[:：]", stripped, maxsplit=1)
            if len(inline) == 2 and inline[1].strip():
                out.append(inline[1].strip())
            continue
        if in_memory and bullet:
            out.append(stripped.lstrip("-*• ").strip())
        elif in_memory:
            in_memory = False  # a blank line or the next section ends the memory block
    return out


def parse_images(system_text: str) -> list[str]:
    """Image captions the sandbox puts in the system prompt ("[图片: ...]" lines)."""
    return [
        m.strip()
        for m in re.findall(r"\[(?:图片|image)[:：]\s*(.+?)\]\s*$", system_text, re.MULTILINE | re.IGNORECASE)
    ]


def extractive_summary(turns: list[list[Message]]) -> list[str]:
    """User sentences from older turns that carry facts (deterministic; newest kept when too many)."""
    sentences: list[str] = []
    for turn in turns:
        if not turn or turn[0].role != "user":
            continue
        for s in re.split(r"(?<=[。！？!?；;\n])", turn[0].content):
            s = s.strip()
            if s and _FACT_CUE.search(s):
                sentences.append(s)
    return sentences[-SUMMARY_MAX_SENTENCES:]


def build_view(messages: list[Message], cfg: ContextConfig, store: MemoryStore | None = None) -> View:
    """Apply the context strategy to the conversation the harness sent. `store` is the
    conversation's external memory (a fresh one, filled from the transcript, when not given)."""
    system, turns = split_turns(messages)
    system_text = "\n".join(m.content for m in system)
    today = parse_today(system_text) or DEFAULT_TODAY
    memory = parse_memory(system_text)
    images = parse_images(system_text)
    skills = parse_skills(system_text)
    if cfg.ignore_history:
        return View(today, memory, turns[-1:], images=images, skills=skills, system=system)
    profile = None
    if cfg.profile:
        profile = profile_of(slots_from(turns, today, memory=memory))
        # who the user is (name, city, job) is kept in the profile too, like a memory entry
        memory = memory + [
            s
            for t in turns[:-1]
            if t and t[0].role == "user"
            for s in re.split(r"[，,。！!]", t[0].content)
            if IDENTITY.search(s)
        ]
    kept, summary = turns, []
    if cfg.window is not None:
        kept = turns[-cfg.window :] if cfg.window > 0 else turns[-1:]
    elif cfg.summary is not None:
        kept = turns[-cfg.summary :]
        summary = extractive_summary(turns[: -cfg.summary])
    elif cfg.key_info is not None:
        kept = turns[-cfg.key_info :]
        summary = key_sentences(turns[: -cfg.key_info], today)
    if cfg.external_memory is not None:
        if cfg.window is None and cfg.summary is None and cfg.key_info is None:
            kept = turns[-EXTERNAL_MEMORY_WINDOW:]
        store = store if store is not None else MemoryStore()
        store.sync(turns[:-1])  # each earlier turn written once
        current = turns[-1][0].content if turns and turns[-1] and turns[-1][0].role == "user" else ""
        dropped = turns[: len(turns) - len(kept)]
        first_kept = sum(1 for t in dropped if t and t[0].role == "user") + 1
        recalled = [e.text for e in store.search(current, cfg.external_memory, before_turn=first_kept)]
        summary = summary + [t for t in recalled if t not in summary]
    return View(
        today, memory, kept, summary=summary, profile=profile, images=images, skills=skills, system=system
    )


def slots_from(
    turns: list[list[Message]],
    today: date,
    *,
    memory: list[str] = (),
    summary: list[str] = (),  # type: ignore[assignment]
    base: Slots | None = None,
) -> Slots:
    """Slots from memory, summary and the user messages of the given turns, in order."""
    from usersim.adapters.reference.intents import asked_slots

    slots = Slots()
    for line in [*memory, *summary]:
        extract(line, slots, today)
    previous_reply = ""
    for turn in turns:
        if turn and turn[0].role == "user":
            extract(turn[0].content, slots, today, asked=asked_slots(previous_reply))
        replies = [m.content for m in turn if m.role == "assistant" and m.content]
        previous_reply = replies[-1] if replies else previous_reply
    return slots.merged_over(base) if base is not None else slots


def view_slots(view: View) -> Slots:
    """All slots the agent knows in this view (profile first, then what is visible)."""
    slots = slots_from(view.turns, view.today, memory=view.memory, summary=view.summary, base=view.profile)
    for caption in view.images:  # what the user shows is part of what they say this turn
        extract(caption, slots, view.today)
    return slots
