"""asked_clarification: did the agent ask (enough, the right) questions before acting?"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from usersim.core.saferegex import case_regex
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.registry import Outcome, check_registry

_SENTENCE_END = re.compile(r"(?<=[。！？?!；;])|\n")
_LIST_ITEM = re.compile(r"^\s*(?:\d{1,2}[.、)）:]|[（(]\d{1,2}[)）]|[①-⑩]|[-•*·]\s)\s*(.+)$")
_REQUEST_CUE = re.compile(
    r"(请问|请告诉|告诉我|麻烦|需要(?:确认|了解|知道)|想(?:确认|了解)|能否|可以告诉|以下信息|哪些信息|方便说)"
)
_WH_WORD = re.compile(
    r"(哪|什么|几|多少|多久|多长|怎么|如何|是否|吗|呢|when|where|what|which|how)", re.IGNORECASE
)
_A_NOT_A = re.compile(r"(有没有|是不是|要不要|能不能|可不可以|需不需要|会不会)")
_JOINERS = re.compile(r"(?:以及|还有|或者|和|及|与|、)")


def is_question(sentence: str) -> bool:
    """？/? sentences, 吗/呢 sentences and 请问… requests."""
    s = sentence.strip()
    if not s:
        return False
    core = s.rstrip("。！!～~ ")
    if core.endswith(("?", "？", "吗", "呢", "么")) or s.startswith("请问"):
        return True
    return bool(_A_NOT_A.search(core))


def _items_in(sentence: str) -> list[str]:
    """Asked items of one question: 出发地、目的地和时间 -> three items; clauses with a question
    word each count; otherwise the sentence is one question."""
    body = sentence.strip().rstrip("?？。!！")
    if "、" in body:
        head, _, tail = body.rpartition("、")
        parts = [p for p in re.split(r"、", head) if p.strip()] + [
            p for p in _JOINERS.split(tail) if p.strip()
        ]
        if len(parts) >= 2:
            return [p.strip() for p in parts]
    clauses = [c for c in re.split(r"[，,]", body) if c.strip()]
    asked = [c.strip() for c in clauses if _WH_WORD.search(c)]
    return asked if len(asked) >= 2 else [body]


def extract_questions(text: str) -> list[str]:
    """Distinct questions asked in a reply, in order. List items count one each after a request
    line ("请告诉我以下信息："); after a question line they are that question's options, and count
    only when they are questions themselves ("- 预算大概多少？")."""
    questions: list[str] = []
    request_open = False  # the previous line asked for several things ("请告诉我：")
    for line in text.splitlines():
        item = _LIST_ITEM.match(line)
        if item and request_open:
            questions.append(item.group(1).strip().rstrip("?？；;。"))
            continue
        if item:
            line = item.group(1)
        request_open = False
        sentences = [x.strip() for x in _SENTENCE_END.split(line) if x.strip()]
        for k, s in enumerate(sentences):
            if s.endswith((":", "：")) and (_REQUEST_CUE.search(s) or _WH_WORD.search(s)):
                request_open = True
            elif item and k < len(sentences) - 1:
                # inside a list item only the closing sentence can be asked of the user: an earlier
                # "？" is a quoted title ("- 端午去厦门太贵？错峰攻略：…")
                continue
            elif is_question(s):
                questions.extend(_items_in(s))
    seen: set[str] = set()
    distinct = []
    for q in questions:
        key = re.sub(r"\W", "", q).casefold()
        if key and key not in seen:
            seen.add(key)
            distinct.append(q)
    return distinct


class AskedClarificationParams(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)  # YAML `- 798` is a keyword too

    min_questions: int = Field(default=1, ge=0, description="At least this many distinct questions.")
    max_questions: int | None = Field(default=None, ge=0, description="At most this many (None = no limit).")
    before_tools: list[str] | None = Field(
        default=None,
        description="Questions must come before any of these tools is called (None = any time in the first turn).",
    )
    about: list[list[str]] = Field(
        default_factory=list,
        description="Groups of synonyms; each group must appear in some question. An entry 're:PATTERN' is "
        "a regular expression (e.g. 're:[\\u4e00-\\u9fff]进$' for 「曼谷进、普吉岛出？」).",
    )

    @field_validator("about")
    @classmethod
    def _regexes(cls, v: list[list[str]]) -> list[list[str]]:
        for i, group in enumerate(v):
            for w in group:
                if w.startswith("re:"):
                    try:
                        case_regex(w[3:], True)  # UnsafePatternError (a ValueError) when pathological
                    except re.error as exc:
                        raise ValueError(f"about.{i}: '{w}' is not a valid regex: {exc}") from None
        return v


def _asks(word: str, question: str) -> bool:
    """Whether a question mentions an `about` synonym (plain text case-insensitively, or 're:' regex)."""
    if word.startswith("re:"):
        return case_regex(word[3:], True).search(question) is not None
    return word.casefold() in question.casefold()


def _shown(group: list[str]) -> list[str]:
    return [w for w in group if not w.startswith("re:")][:3] or group[:1]


@check_registry.register("asked_clarification", AskedClarificationParams)
def asked_clarification(params: AskedClarificationParams, ctx: CheckContext) -> Outcome:
    """The first live assistant turn asks enough distinct questions (about the listed topics) before acting."""
    live = ctx.live()
    first_user_seen = False
    texts: list[tuple[int, str]] = []
    blocked_by: str | None = None
    for i, m in live:
        if m.role == "user":
            if first_user_seen and texts:
                break  # the first live turn ends at the next user message that follows a reply
            first_user_seen = True
            continue
        if m.role != "assistant":
            continue
        called = [tc.name for tc in m.tool_calls if params.before_tools and tc.name in params.before_tools]
        if called:
            blocked_by = called[0]
            break
        if m.content.strip():
            texts.append((i, m.content))
    questions = [q for _, t in texts for q in extract_questions(t)]
    n = len(questions)
    evidence = texts[0][0] if texts else None
    shown = "; ".join(f"“{q}”" for q in questions[:8]) + (" …" if n > 8 else "")
    found = f"{n} distinct question(s)" + (f": {shown}" if n else "")
    tool_note = f" before {blocked_by} was called" if blocked_by else ""
    problems = []
    if n < params.min_questions:
        problems.append(f"needed at least {params.min_questions}")
    if params.max_questions is not None and n > params.max_questions:
        problems.append(f"more than the maximum {params.max_questions}")
    missing = [g for g in params.about if not any(_asks(w, q) for q in questions for w in g)]
    asked_groups = [g for g in params.about if g not in missing]
    if missing:
        problems.append("did not ask about " + ", ".join("/".join(_shown(g)) for g in missing))
    about_note = ""
    if asked_groups:
        about_note = "; asked about " + ", ".join("/".join(_shown(g)) for g in asked_groups)
    if blocked_by and n < max(params.min_questions, 1):
        problems.insert(0, f"{blocked_by} was called before asking")
    if problems:
        return Outcome(
            False,
            f"first turn asked {found}{tool_note} — {'; '.join(problems)}{about_note}",
            evidence_turn=evidence,
        )
    return Outcome(True, f"first turn asked {found}{tool_note}{about_note}", evidence_turn=evidence)
