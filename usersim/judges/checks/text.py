"""Text checks on the agent's replies: keywords, count."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from usersim.core.saferegex import case_regex
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.mentions import EXCLUSION, Negations, has_keyword
from usersim.judges.checks.normalize import is_quantity
from usersim.judges.checks.registry import Outcome, check_registry

ScopeName = Literal["final", "assistant", "first"]
_LIST_ITEM = re.compile(
    r"^\s*(?:\d{1,2}\s*[.、)）]|[（(]\d{1,2}[)）]|[①-⑳]|[-•*·]\s|#{1,4}\s*\d)", re.MULTILINE
)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


def list_items(text: str) -> list[tuple[int, str]]:
    """(line number, line) of the reply's items: numbered and bulleted list lines, and markdown
    table body rows (not the header row above the |---| rule, not the rule). When a reply has both a
    table and a list, the larger of the two is taken (the same items shown twice count once)."""
    lines = text.splitlines()
    rules = {n for n, ln in enumerate(lines) if _TABLE_RULE.match(ln) and "-" in ln and "|" in ln}
    headers = {n - 1 for n in rules}
    rows = [
        (n, ln.strip())
        for n, ln in enumerate(lines)
        if _TABLE_ROW.match(ln) and n not in rules and n not in headers
    ]
    listed = [(n, ln.strip()) for n, ln in enumerate(lines) if _LIST_ITEM.match(ln) and n not in rules]
    listed = [(n, ln) for n, ln in listed if not _TABLE_ROW.match(ln)]
    return rows if len(rows) > len(listed) else listed


_LINE_EXCLUSION = tuple(m for m in EXCLUSION if m not in ("不是", "而非", "并非"))


def _excluded(line: str, line_no: int, neg: Negations) -> bool:
    """A list line or table row naming an item only to exclude it ("- OPPO A3（已剔除）",
    "| OPPO A3 | 1499 | ❌ 排除 |", lines under "已排除：")."""
    if line_no in neg.section_lines:
        return True
    body = re.sub(r"^\s*(?:\d{1,2}\s*[.、)）]|[（(]\d{1,2}[)）]|[①-⑳]|[-•*·])\s*", "", line)
    if _TABLE_ROW.match(body):
        cells = [c.strip() for c in body.strip().strip("|").split("|")]
        first = Negations(cells[0], _LINE_EXCLUSION) if cells and cells[0] else None
        return (first is not None and first.negated(0, 1)) or any(
            c and Negations(c, _LINE_EXCLUSION).marker_only(c) for c in cells[1:]
        )
    return bool(body.strip()) and Negations(body, _LINE_EXCLUSION).negated(0, 1)


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)  # YAML `- 798` is a keyword too


class KeywordsParams(_Params):
    any: list[str] = Field(default_factory=list, description="At least one of these must appear.")
    all: list[str] = Field(default_factory=list, description="Every one of these must appear.")
    none: list[str] = Field(default_factory=list, description="None of these may appear.")
    scope: ScopeName = Field(default="final", description="final | assistant | first.")
    synonyms: dict[str, list[str]] = Field(
        default_factory=dict, description="word -> other spellings that count as the word."
    )

    @model_validator(mode="after")
    def _something(self) -> KeywordsParams:
        if not (self.any or self.all or self.none):
            raise ValueError("give at least one of any / all / none")
        return self


def _numeric(word: str) -> bool:
    return bool(re.search(r"\d", word)) and is_quantity(word.strip())


def _has(word: str, text: str) -> bool:
    """Whether `word` occurs in text: numbers by value; words ignoring case and whitespace."""
    return has_keyword(word, text)


def _find(word: str, text: str, synonyms: dict[str, list[str]]) -> str | None:
    """The spelling of `word` (or a synonym) found in text."""
    for w in [word, *synonyms.get(word, [])]:
        if _has(w, text):
            return w
    return None


def _find_affirmed(
    word: str, texts: list[tuple[int, str]], synonyms: dict[str, list[str]]
) -> tuple[str, int] | None:
    """(spelling, reply index) of a mention of `word` (or a synonym) that is not negated:
    "不再去环球影城" and "不是…蟹道乐" name a word without saying it happens. Numbers are never
    read as negated."""
    for i, t in texts:
        neg: Negations | None = None
        for w in [word, *synonyms.get(word, [])]:
            if not _has(w, t):
                continue
            if _numeric(w):
                return w, i
            neg = neg or Negations(t)
            if neg.affirmed(w):
                return w, i
    return None


@check_registry.register("keywords", KeywordsParams)
def keywords(params: KeywordsParams, ctx: CheckContext) -> Outcome:
    """Keywords present (any / all) and absent (none) in the scoped replies."""
    texts = ctx.texts(params.scope)
    if not texts:
        return Outcome(False, f"no assistant reply in scope '{params.scope}'")
    text = "\n".join(t for _, t in texts)
    syn = params.synonyms
    found, problems = [], []
    if params.any:
        hits = [w for w in params.any if _find(w, text, syn)]
        if hits:
            found.append("found " + ", ".join(hits))
        else:
            problems.append("none of " + ", ".join(params.any) + " present")
    missing = [w for w in params.all if not _find(w, text, syn)]
    present_all = [w for w in params.all if w not in missing]
    if present_all:
        found.append("found all-of " + ", ".join(present_all))
    if missing:
        problems.append("missing " + ", ".join(missing))
    hits = [(w, _find_affirmed(w, texts, syn)) for w in params.none]
    forbidden = [(w, h[0], h[1]) for w, h in hits if h]
    negated = [w for w, h in hits if not h and _find(w, text, syn)]
    if forbidden:
        problems.append(
            "forbidden present: " + ", ".join(s if s == w else f"{s} (= {w})" for w, s, _ in forbidden)
        )
    elif params.none:
        found.append("none of " + ", ".join(params.none) + " present")
    if negated:
        found.append("only negated mentions of " + ", ".join(negated) + " (not counted)")
    evidence = forbidden[0][2] if forbidden else texts[-1][0]  # the reply that said it
    where = f"in {params.scope} reply" if params.scope != "assistant" else "in the assistant replies"
    summary = "; ".join(problems + found)
    return Outcome(not problems, f"{where}: {summary}", evidence_turn=evidence)


class CountParams(_Params):
    pattern: str | None = Field(
        default=None, description="Regex whose distinct matches are counted (None = list items)."
    )
    min: int | None = Field(default=None, ge=0, description="At least this many.")
    max: int | None = Field(default=None, ge=0, description="At most this many.")
    exactly: int | None = Field(default=None, ge=0, description="Exactly this many.")
    scope: ScopeName = Field(default="final", description="final | assistant | first.")

    @field_validator("pattern")
    @classmethod
    def _regex(cls, v: str | None) -> str | None:
        if v is not None:
            try:
                case_regex(v)  # re.error when malformed; UnsafePatternError (a ValueError) when pathological
            except re.error as exc:
                raise ValueError(f"pattern is not a valid regex: {exc}") from None
        return v

    @model_validator(mode="after")
    def _bound(self) -> CountParams:
        if self.min is None and self.max is None and self.exactly is None:
            raise ValueError("give min, max or exactly")
        return self


@check_registry.register("count", CountParams)
def count(params: CountParams, ctx: CheckContext) -> Outcome:
    """Count list items (or distinct regex matches) in the scoped replies against min / max / exactly."""
    texts = ctx.texts(params.scope)
    if not texts:
        return Outcome(False, f"no assistant reply in scope '{params.scope}'")
    text = "\n".join(t for _, t in texts)
    neg = Negations(text, EXCLUSION)
    line_of = [0]
    for m in re.finditer("\n", text):
        line_of.append(m.end())
    lines = text.splitlines()
    skipped: list[str] = []
    if params.pattern is None:
        items = []
        for n, line in list_items(text):
            (skipped if _excluded(line, n, neg) else items).append(line)
        rows = [i for i in items + skipped if _TABLE_ROW.match(i)]
        what = "table rows" if rows else "list items"
    else:
        items = []
        for m in case_regex(params.pattern).finditer(text):
            got = m.group(0)
            n = sum(1 for s in line_of if s <= m.start()) - 1
            single = "\n" not in got.strip()
            if single and n < len(lines) and _excluded(lines[n], n, neg):
                skipped.append(got)
            elif got not in items:
                items.append(got)
        what = f"distinct matches of /{params.pattern}/"
    n = len(items)
    bounds = []
    ok = True
    if params.exactly is not None:
        bounds.append(f"exactly {params.exactly}")
        ok &= n == params.exactly
    if params.min is not None:
        bounds.append(f"at least {params.min}")
        ok &= n >= params.min
    if params.max is not None:
        bounds.append(f"at most {params.max}")
        ok &= n <= params.max
    shown = ", ".join(i[:30] for i in items[:6]) + (" …" if n > 6 else "")
    found = f"{n} {what}" + (f" ({shown})" if n else "")
    if skipped:
        found += (
            f"; {len(skipped)} excluded/rejected not counted (" + ", ".join(i[:30] for i in skipped[:4]) + ")"
        )
    verb = "" if ok else "; required "
    return Outcome(ok, f"{found}{verb}{'' if ok else ', '.join(bounds)}", evidence_turn=texts[-1][0])
