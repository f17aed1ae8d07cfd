"""Text checks on the agent's replies: keywords, count."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.normalize import find_keyword
from usersim.judges.checks.registry import Outcome, check_registry

ScopeName = Literal["final", "assistant", "first"]
_LIST_ITEM = re.compile(
    r"^\s*(?:\d{1,2}\s*[.、)）]|[（(]\d{1,2}[)）]|[①-⑳]|[-•*·]\s|#{1,4}\s*\d)", re.MULTILINE
)


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


def _find(word: str, text: str, synonyms: dict[str, list[str]]) -> str | None:
    """The spelling of `word` (or a synonym) found in text, case-insensitively."""
    for w in [word, *synonyms.get(word, [])]:
        if find_keyword(w, text):  # numbers compare by value: "1628" = "$1,628.00", "4" != "14"
            return w
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
    forbidden = [(w, _find(w, text, syn)) for w in params.none]
    forbidden = [(w, s) for w, s in forbidden if s]
    if forbidden:
        problems.append(
            "forbidden present: " + ", ".join(s if s == w else f"{s} (= {w})" for w, s in forbidden)
        )
    elif params.none:
        found.append("none of " + ", ".join(params.none) + " present")
    evidence = texts[-1][0]
    if forbidden:  # point at the reply that said the forbidden word
        evidence = next((i for i, t in texts if any(find_keyword(s, t) for _, s in forbidden)), evidence)
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
                re.compile(v)
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
    if params.pattern is None:
        items = [line.strip() for line in text.splitlines() if _LIST_ITEM.match(line)]
        what = "list items"
    else:
        items = list(dict.fromkeys(m.group(0) for m in re.finditer(params.pattern, text)))
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
    verb = "" if ok else "; required "
    return Outcome(ok, f"{found}{verb}{'' if ok else ', '.join(bounds)}", evidence_turn=texts[-1][0])
