"""Replies to the seed cases, judged by the case's own rule checks as a run would judge them.

A corpus file (tests/judges/paraphrase/seeds/<CASE-ID>.yaml) holds wordings of a correct and of a
flawed final reply to one library case, written from the case's Pass / Fail lines in many styles
(prose, table, headings, bold, emoji, comparison, exclusion notes, English mixed in):

    case: C2-SR-03
    calls: [{name: search_products, arguments: {query: 手机}}]  # optional: the agent's tool calls
    before: ["..."]          # optional: the agent's replies to the live user turns before the last
    correct:
      - {style: table, reply: "| 型号 | 价格 |\\n|---|---|\\n..."}
    flawed:
      - {style: prose, reply: "...", why: "recommends a Redmi"}

An entry may carry its own `calls` or `before`. The transcript is the case's history, then each
live user turn (input.message, then input.script) answered in turn, the tool calls going with the
last reply. A correct wording passes when every check passes; a flawed one fails when some check
fails (an inconclusive check is neither).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.judges.helpers import state as judge_state
from usersim.cases.loader import load_case
from usersim.cases.schema import Case
from usersim.core.messages import Message, ToolCall
from usersim.judges.checks import CheckContext, evaluate

CASES = Path(__file__).resolve().parents[2] / "usersim" / "cases"
SEEDS = Path(__file__).parent / "paraphrase" / "seeds"
_ids = itertools.count(1)


@dataclass(frozen=True)
class Wording:
    case_id: str
    kind: str  # "correct" | "flawed"
    style: str
    reply: str
    calls: tuple[tuple[str, dict[str, Any]], ...]
    before: tuple[str, ...]
    why: str = ""

    @property
    def id(self) -> str:
        return f"{self.case_id}-{self.kind}-{self.style}"


def case_by_id(case_id: str) -> Case:
    hits = [p for p in CASES.rglob(f"{case_id}.yaml")]
    assert len(hits) == 1, f"case {case_id}: {len(hits)} files"
    return load_case(hits[0])


def corpus() -> list[Wording]:
    out: list[Wording] = []
    for path in sorted(SEEDS.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for kind in ("correct", "flawed"):
            seen: dict[str, int] = {}
            for e in data.get(kind) or []:
                style = e.get("style", "plain")
                seen[style] = seen.get(style, 0) + 1
                calls = e.get("calls", data.get("calls")) or []
                out.append(
                    Wording(
                        data["case"],
                        kind,
                        style if seen[style] == 1 else f"{style}{seen[style]}",
                        e["reply"],
                        tuple((c["name"], dict(c.get("arguments") or {})) for c in calls),
                        tuple(e.get("before", data.get("before")) or ()),
                        e.get("why", ""),
                    )
                )
    return out


def transcript(case: Case, w: Wording) -> tuple[list[Message], int]:
    users = ([case.input.message] if case.input.message else []) + list(case.input.script)
    replies = [*w.before, w.reply]
    assert len(replies) == len(users), (
        f"{w.id}: {len(users)} live user turns, {len(replies)} replies (give `before`)"
    )
    history = list(case.input.history)
    live: list[Message] = []
    for k, (user, reply) in enumerate(zip(users, replies)):
        live.append(Message(role="user", content=user))
        if k == len(users) - 1 and w.calls:
            calls = [ToolCall(id=f"s{next(_ids)}", name=n, arguments=a) for n, a in w.calls]
            live.append(Message(role="assistant", tool_calls=calls))
            live += [Message(role="tool", tool_call_id=c.id, name=c.name, content="{}") for c in calls]
        live.append(Message(role="assistant", content=reply))
    return history + live, len(history)


def judge(w: Wording) -> list[tuple[str, bool | None, str]]:
    """(check, passed, reason) for each of the case's checks on this wording."""
    case = case_by_id(w.case_id)
    messages, history_len = transcript(case, w)
    ctx = CheckContext(messages, case, judge_state(messages, history_len=history_len))
    out = []
    for spec in case.judging.checks:
        o = evaluate(spec, ctx)
        out.append((next(iter(spec)), o.passed, o.reason))
    return out
