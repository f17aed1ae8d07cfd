"""What a failing conversation can be shrunk by, and how a smaller case is built from what is kept.

A `Draft` holds the pieces of one failing conversation that delta debugging may drop, in a fixed
order (so the search is deterministic):

* `turns`: user turns. Static: each exchange of the recorded history (a user message and the
  assistant and tool messages after it) and each live line (`input.message`, `input.script`).
  Organic: the case's scripted lines (`input.message` and its replayed `input.script`).
* `facts` and `events`: the persona's `known_info` and `events`.
* `sentences`: the sentences of user messages that have more than one (usersim.lang.segment, so
  English and Chinese are cut the same way), and of the persona's opening message.
* `noise`: rows and fields of JSON tool results in a static history (top level, and one level
  down: the rows of a list under a key).
* `rows`: records of the case's environment state (the fixture data), except those a check names.

A selection (`Kept`: per dimension, the unit indexes kept) builds a case and persona with `build`;
a selection that cannot make a case (no live line left, a message with no sentence left, a
history whose writes the environment refuses) builds None and is never run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from usersim.cases.schema import Case, CaseInput
from usersim.core.messages import Message
from usersim.lang.segment import sentences
from usersim.personas.schema import Persona

DIMENSIONS = ("turns", "events", "facts", "noise", "rows", "sentences")
# how a dimension's size reads in the provenance line ("9 turns → 3")
NOUNS = {
    "turns": "turns",
    "events": "events",
    "facts": "facts",
    "noise": "tool-result fields",
    "rows": "state rows",
    "sentences": "sentences",
}
OPENING = -1  # the `turn` of the persona's opening message in a sentence unit

Kept = dict[str, frozenset[Any]]


@dataclass
class Turn:
    """One user turn: its text, and (history turns) the messages answering it."""

    text: str
    live: bool  # a line answered live (static: input.message / script; organic: a scripted line)
    after: list[Message] = field(default_factory=list)  # history: assistant and tool messages


@dataclass
class Draft:
    """The reducible pieces of one failing conversation (see the module docstring)."""

    case: Case
    persona: Persona | None
    lead: list[Message]  # history messages before the first user message (kept as they are)
    turns: list[Turn]
    units: dict[str, list[Any]]

    @classmethod
    def of(cls, case: Case, persona: Persona | None, history: list[Message]) -> Draft:
        """The draft of `case` (static: its recorded `history`; organic: its scripted lines)."""
        lead, turns = _split_history(history) if case.mode == "static" else ([], [])
        lines = [case.input.message, *case.input.script] if case.input.message is not None else []
        turns += [Turn(text=t or "", live=True) for t in lines]
        draft = cls(case=case, persona=persona, lead=lead, turns=turns, units={})
        draft.units = {
            "turns": list(range(len(turns))),
            "events": list(range(len(persona.events))) if persona else [],
            "facts": list(range(len(persona.known_info))) if persona else [],
            "noise": [(t, m, *p) for t, turn in enumerate(turns) for m, p in _noise_paths(turn.after)],
            "rows": _state_rows(case),
            "sentences": [(t, s) for t, text in draft.texts() for s in range(_sentence_count(text))],
        }
        return draft

    def texts(self) -> list[tuple[int, str]]:
        """Every user text with more than one sentence: (turn index or OPENING, text)."""
        out = [(t, turn.text) for t, turn in enumerate(self.turns)]
        if self.persona is not None and self.persona.opening_message and self.case.input.message is None:
            out.append((OPENING, self.persona.opening_message))
        return [(t, text) for t, text in out if _sentence_count(text) > 1]

    def everything(self) -> Kept:
        return {d: frozenset(self.units[d]) for d in DIMENSIONS}

    def relevant(self, dim: str, kept: Kept) -> list[Any]:
        """The units of `dim` that still matter under `kept`: a sentence or a tool-result field of a
        dropped turn does not."""
        units = self.units[dim]
        if dim in ("sentences", "noise"):
            return [u for u in units if u[0] == OPENING or u[0] in kept["turns"]]
        return list(units)

    def unused(self, dim: str, record: Any) -> list[Any]:
        """Units of `dim` that left no trace in `record`'s user turns (a fact whose value the user never
        said, a scripted line of an event never said): the search tries dropping them together first.
        Only a hint: the search still runs every reduction it keeps."""
        if record is None:
            return []
        if dim == "rows":  # a record no tool call or result of the conversation ever showed
            seen = "\n".join(
                m.content + json.dumps(m.tool_calls, ensure_ascii=False) for m in record.transcript
            )
            return [u for u in self.units["rows"] if str(u[1]) not in seen]
        if self.persona is None or dim not in ("facts", "events"):
            return []
        said = "\n".join(m.content for m in record.transcript if m.role == "user").casefold()
        if dim == "facts":
            return [i for i, f in enumerate(self.persona.known_info) if f.value.casefold() not in said]
        return [i for i, e in enumerate(self.persona.events) if e.text and e.text.casefold() not in said]

    def sizes(self, kept: Kept) -> dict[str, tuple[int, int]]:
        """Per dimension with anything to drop: (original size, size kept)."""
        full = self.everything()
        return {
            d: (len(self.relevant(d, full)), len([u for u in self.relevant(d, kept) if u in kept[d]]))
            for d in DIMENSIONS
            if self.units[d]
        }

    def build(self, kept: Kept) -> tuple[Case, Persona | None] | None:
        """The case and persona of a selection, or None when it makes no case."""
        texts: dict[int, str] = {}
        for t, text in self.texts():
            picked = [s for s in range(_sentence_count(text)) if (t, s) in kept["sentences"]]
            if not picked:
                return None  # a user message with nothing left to say
            texts[t] = join_sentences(text, picked)
        history = list(self.lead)
        live: list[str] = []
        for t, turn in enumerate(self.turns):
            if t not in kept["turns"]:
                continue
            text = texts.get(t, turn.text)
            if turn.live:
                live.append(text)
                continue
            history.append(Message(role="user", content=text))
            history += [_denoised(m, t, i, kept["noise"]) for i, m in enumerate(turn.after)]
        persona = self._persona(kept, texts.get(OPENING))
        case = _with_rows(self.case, self.units["rows"], kept["rows"])
        if case.mode == "static":
            if not live:
                return None  # nothing left for the agent to answer
            built = _with_history(case, history, live)
            return None if built is None else (built, persona)
        inp = CaseInput(message=live[0], script=live[1:]) if live else CaseInput()
        return case.model_copy(update={"input": inp}), persona

    def _persona(self, kept: Kept, opening: str | None) -> Persona | None:
        p = self.persona
        if p is None:
            return None
        update: dict[str, Any] = {
            "known_info": [f for i, f in enumerate(p.known_info) if i in kept["facts"]],
            "events": [e for i, e in enumerate(p.events) if i in kept["events"]],
        }
        if opening is not None:
            update["opening_message"] = opening
        return p.model_copy(deep=True, update=update)


def join_sentences(text: str, picked: list[int]) -> str:
    """The sentences `picked` of `text`, joined as the text joined them (a space where the original
    had one between sentences, nothing in Chinese)."""
    spans = sentences(text)
    between = text[spans[0].end : spans[1].start] if len(spans) > 1 else ""
    gap = "\n" if "\n" in between else " " if between else ""
    return gap.join(spans[i].text for i in picked)


def _sentence_count(text: str) -> int:
    return len(sentences(text))


def _split_history(history: list[Message]) -> tuple[list[Message], list[Turn]]:
    lead: list[Message] = []
    turns: list[Turn] = []
    for m in history:
        if m.role == "user":
            turns.append(Turn(text=m.content, live=False))
        elif turns:
            turns[-1].after.append(m)
        else:
            lead.append(m)
    return lead, turns


def _json(text: str) -> Any:
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, dict | list) else None


def _children(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return list(value)
    if isinstance(value, list):
        return list(range(len(value)))
    return []


def _noise_paths(after: list[Message]) -> list[tuple[int, tuple[Any, ...]]]:
    """(message index, path) of every droppable piece of the JSON tool results: the top-level fields
    or rows, and the rows of a list one level down (a profile's `accounts`)."""
    out: list[tuple[int, tuple[Any, ...]]] = []
    for i, m in enumerate(after):
        value = _json(m.content) if m.role == "tool" else None
        if value is None:
            continue
        for k in _children(value):
            out.append((i, (k,)))
            child = value[k]
            if isinstance(value, dict) and isinstance(child, list):
                out += [(i, (k, j)) for j in _children(child)]
    return out


def _denoised(m: Message, t: int, i: int, kept: frozenset[Any]) -> Message:
    value = _json(m.content) if m.role == "tool" else None
    if value is None:
        return m
    drop = {u[2:] for u in _all_noise(t, i, value)} - {u[2:] for u in kept if u[:2] == (t, i)}
    if not drop:
        return m
    return m.model_copy(update={"content": json.dumps(_prune(value, (), drop), ensure_ascii=False)})


def _all_noise(t: int, i: int, value: Any) -> list[tuple[Any, ...]]:
    return [(t, i, *p) for _, p in _noise_paths([Message(role="tool", content=json.dumps(value))])]


def _prune(value: Any, path: tuple[Any, ...], drop: set[tuple[Any, ...]]) -> Any:
    if isinstance(value, dict):
        return {k: _prune(v, (*path, k), drop) for k, v in value.items() if (*path, k) not in drop}
    if isinstance(value, list) and len(path) < 2:
        return [_prune(v, (*path, j), drop) for j, v in enumerate(value) if (*path, j) not in drop]
    return value


def tables(case: Case) -> dict[str, list[dict[str, Any]]]:
    """The environment's records (a state file is read at load time, so this is always tables)."""
    state = case.environment.state if case.environment is not None else {}
    return state if isinstance(state, dict) else {}


def _state_rows(case: Case) -> list[tuple[str, Any]]:
    """(table, key value) of every environment record no check names (a check's records stay)."""
    env = case.environment
    if env is None:
        return []
    named = json.dumps(case.judging.checks, ensure_ascii=False, default=str)
    out = []
    for table, rows in tables(case).items():
        key = env.key_of(table)
        out += [
            (table, r[key])
            for r in rows
            if isinstance(r.get(key), str | int) and json.dumps(r[key], ensure_ascii=False) not in named
        ]
    return out


def _with_rows(case: Case, units: list[Any], kept: frozenset[Any]) -> Case:
    """The case with only the kept environment records (and every record a check names)."""
    drop = set(units) - kept
    env = case.environment
    if env is None or not drop:
        return case
    state = {
        table: [r for r in rows if (table, r.get(env.key_of(table))) not in drop]
        for table, rows in tables(case).items()
    }
    return case.model_copy(update={"environment": env.model_copy(update={"state": state})})


def _with_history(case: Case, history: list[Message], live: list[str]) -> Case | None:
    """The static case with this history and these live lines; the history's environment writes are
    replayed on a fresh copy of the environment (None when the environment refuses one now)."""
    from usersim.cases.history import history_writes

    env = case.environment
    if env is not None:
        try:
            writes = history_writes(env, history) if any(m.tool_calls for m in history) else []
        except ValueError:
            return None
        env = env.model_copy()
        env._prelude = writes
    inp = CaseInput(history=history, message=live[0], script=live[1:])
    return case.model_copy(update={"input": inp, "environment": env, "long_context": None})
