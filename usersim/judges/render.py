"""Transcripts rendered for LLM judges and review exports: indexed lines and tool calls.

`render_transcript` clips per message (review exports, drift). `render_for_judge` renders the
whole transcript within a token budget instead: nothing is clipped while it fits; when it does
not, filler goes first (replayed history, then tool results no reply relies on, then user
messages), and tool results a reply relies on (items named in the answer) and the assistant's
own replies are kept whole unless nothing else is left to shorten. Every shortened message
carries a visible marker and is listed in `Rendered.shortened`.

Counting tokens needs the tokenizer (tiktoken's encoding: about 0.25 s of CPU and 40 MB to load),
so `render_in_full` first bounds a prompt by its UTF-8 bytes: a byte-level BPE token is at least
one byte, so a prompt whose bytes fit the room needs no count and is rendered in full, uncounted.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from usersim.core.messages import Message

MIN_KEEP_TOKENS = 24  # a shortened message keeps at least this much (head and tail)
MARKER = "…[shortened by usersim: {cut} of {total} tokens left out]…"


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_transcript(transcript: list[Message], history_len: int = 0, *, limit: int = 1500) -> str:
    """One block per message: `[i] ROLE: text`; [i] is the index a judge cites as evidence_turn."""
    lines = []
    for i, m in enumerate(transcript):
        tag = " (replayed history)" if i < history_len else ""
        if m.role == "tool":
            err = " ERROR" if m.is_error else ""
            lines.append(f"[{i}] TOOL RESULT {m.name or ''}{err}{tag}: {_clip(m.content, limit // 2)}")
            continue
        if m.content.strip():
            lines.append(f"[{i}] {m.role.upper()}{tag}: {_clip(m.content, limit)}")
        for tc in m.tool_calls:
            args = json.dumps(tc.arguments, ensure_ascii=False)
            lines.append(f"[{i}] ASSISTANT CALLS {tc.name}({_clip(args, 400)}){tag}")
    return "\n".join(lines)


class Shortened(BaseModel):
    """One message the judge saw shortened."""

    model_config = ConfigDict(extra="forbid")

    turn: int = Field(description="Transcript index of the message.")
    kind: str = Field(description="history / tool_result / user / assistant.")
    tokens: int = Field(description="Tokens of the message in full.")
    kept: int = Field(description="Tokens the judge saw.")


class Rendered(BaseModel):
    """A transcript rendered for a judge, with what was left out."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The rendered transcript.")
    tokens: int | None = Field(description="Tokens of `text`; None when the prompt fit uncounted.")
    budget: int | None = Field(description="Tokens the transcript was allowed; None when uncounted.")
    full_tokens: int | None = Field(
        description="Tokens of the transcript rendered in full; None when uncounted."
    )
    shortened: list[Shortened] = Field(default_factory=list, description="Messages shortened to fit.")
    room_tokens: int | None = Field(
        default=None, description="Tokens the whole prompt was allowed, when it fit by its bytes uncounted."
    )

    @property
    def left_out(self) -> int:
        return sum(s.tokens - s.kept for s in self.shortened)

    def summary(self) -> dict[str, Any]:
        """What goes into a verdict's details."""
        if self.tokens is None:
            return {"counted": False, "room_tokens": self.room_tokens, "bytes": len(self.text.encode())}
        return {
            "budget_tokens": self.budget,
            "tokens": self.tokens,
            "full_tokens": self.full_tokens,
            "left_out_tokens": self.left_out,
            "shortened_messages": len(self.shortened),
            "shortened": [s.model_dump() for s in self.shortened[:50]],  # the first 50
        }

    def notice(self) -> str:
        """The line the prompt carries when something was shortened."""
        if not self.shortened:
            return ""
        turns = ", ".join(f"[{s.turn}]" for s in self.shortened[:40])
        more = f" and {len(self.shortened) - 40} more" if len(self.shortened) > 40 else ""
        return (
            f"NOTE: to fit your context, {len(self.shortened)} message(s) were shortened ({turns}{more}); "
            f"about {self.left_out} tokens are left out where a message shows '…[shortened by usersim …]…'. "
            "Do not treat left-out text as missing from the conversation; judge from what is shown."
        )


def _tokens(text: str) -> int:
    # remembered per text (cases.tokens.text_tokens, bounded): every judge renders the same messages
    from usersim.cases.tokens import text_tokens

    return text_tokens(text) if text else 0


def _block(i: int, m: Message, tag: str) -> str:
    if m.role == "tool":
        err = " ERROR" if m.is_error else ""
        return f"[{i}] TOOL RESULT {m.name or ''}{err}{tag}: {m.content.strip()}"
    lines = [f"[{i}] {m.role.upper()}{tag}: {m.content.strip()}"] if m.content.strip() else []
    for tc in m.tool_calls:
        args = json.dumps(tc.arguments, ensure_ascii=False)
        lines.append(f"[{i}] ASSISTANT CALLS {tc.name}({args}){tag}")
    return "\n".join(lines) or f"[{i}] {m.role.upper()}{tag}: (empty)"


_ITEM = re.compile(r"[\w\u4e00-\u9fff][\w\u4e00-\u9fff.\-/ ]{1,40}[\w\u4e00-\u9fff]|\d{2,}")


def _items(value: Any) -> set[str]:
    """The values a tool result offers (strings, numbers), from JSON or from plain text."""
    out: set[str] = set()
    if isinstance(value, dict):
        for v in value.values():
            out |= _items(v)
    elif isinstance(value, list):
        for v in value:
            out |= _items(v)
    elif isinstance(value, bool) or value is None:
        pass
    elif isinstance(value, (int, float)):
        text = f"{value:g}" if isinstance(value, float) else str(value)
        if len(text) >= 2:
            out.add(text)
    elif isinstance(value, str):
        v = value.strip()
        if 2 <= len(v) <= 60:
            out.add(v)
    return out


def relied_on(transcript: list[Message], index: int) -> bool:
    """A tool result a later assistant reply relies on: one of its items (a name, a price, a flight
    number ...) appears in an assistant reply after it."""
    m = transcript[index]
    try:
        items = _items(json.loads(m.content))
    except (ValueError, TypeError):
        items = {x.strip() for x in _ITEM.findall(m.content)}
    items = {x for x in items if len(x) >= 3 or x.isdigit()}
    if not items:
        return False
    later = " ".join(t.content for t in transcript[index + 1 :] if t.role == "assistant" and t.content)
    return any(x in later for x in items)


def _shorten(text: str, keep: int, total: int) -> str:
    """Head and tail of `text` in about `keep` tokens, with a marker for what is left out."""
    keep = max(MIN_KEEP_TOKENS, keep)
    ratio = len(text) / max(1, total)  # chars per token for this text
    head = int(keep * ratio * 0.7)
    tail = int(keep * ratio * 0.25)
    marker = MARKER.format(cut=max(0, total - keep), total=total)
    return text[:head].rstrip() + marker + (text[-tail:].lstrip() if tail > 0 else "")


def render_for_judge(transcript: list[Message], history_len: int = 0, *, budget: int) -> Rendered:
    """The transcript within `budget` tokens (see the module doc for what is shortened first)."""
    blocks: list[dict[str, Any]] = []
    for i, m in enumerate(transcript):
        tag = " (replayed history)" if i < history_len else ""
        text = _block(i, m, tag)
        if i < history_len:
            tier, kind = 0, "history"
        elif m.role == "tool":
            keep = relied_on(transcript, i)
            tier, kind = (3 if keep else 1), "tool_result"
        elif m.role in ("user", "system"):
            tier, kind = 2, "user"
        else:
            tier, kind = 4, "assistant"
        blocks.append({"turn": i, "text": text, "tokens": _tokens(text) + 1, "tier": tier, "kind": kind})
    full = sum(b["tokens"] for b in blocks)
    shortened: list[Shortened] = []
    excess = full - budget
    for tier in range(5):
        if excess <= 0:
            break
        group = [b for b in blocks if b["tier"] == tier and b["tokens"] > MIN_KEEP_TOKENS + 16]
        if not group:
            continue
        # Water-filling: the largest cap per message that removes `excess` tokens from this tier.
        sizes = sorted(b["tokens"] for b in group)
        have = sum(sizes)
        target = max(0, have - excess)
        cap = _cap(sizes, target)
        for b in group:
            if b["tokens"] <= cap:
                continue
            keep = max(MIN_KEEP_TOKENS, cap - 16)  # the marker costs ~16 tokens
            new = _shorten(b["text"], keep, b["tokens"])
            new_tokens = _tokens(new) + 1
            if new_tokens >= b["tokens"]:
                continue
            excess -= b["tokens"] - new_tokens
            shortened.append(Shortened(turn=b["turn"], kind=b["kind"], tokens=b["tokens"], kept=new_tokens))
            b["text"], b["tokens"] = new, new_tokens
    text = "\n".join(b["text"] for b in blocks)
    shortened.sort(key=lambda s: s.turn)
    return Rendered(text=text, tokens=_tokens(text), budget=budget, full_tokens=full, shortened=shortened)


def render_in_full(
    transcript: list[Message], history_len: int, *, room: int, build: Any
) -> tuple[str, Rendered] | None:
    """(prompt, Rendered) with the transcript whole when `build(text, notice)`'s prompt fits `room`
    tokens by its UTF-8 bytes alone (no token is shorter than a byte); None when it may not."""
    text = "\n".join(
        _block(i, m, " (replayed history)" if i < history_len else "") for i, m in enumerate(transcript)
    )
    prompt = build(text, "")
    if len(prompt.encode()) > room:
        return None
    return prompt, Rendered(text=text, tokens=None, budget=None, full_tokens=None, room_tokens=room)


def _cap(sizes: list[int], target: int) -> int:
    """The largest c with sum(min(s, c)) <= target (sizes ascending)."""
    n = len(sizes)
    spent = 0
    for k, s in enumerate(sizes):
        rest = n - k
        if spent + s * rest > target:
            return max(MIN_KEEP_TOKENS, (target - spent) // rest)
        spent += s
    return sizes[-1] if sizes else 0
