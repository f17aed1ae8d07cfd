"""Text checks on the agent's replies: keywords, count.

Both read the replies through the language layer: a keyword mention counts only as it stands
("cannot be refunded" is no mention of refunded, "不再去环球影城" is no mention of 环球影城), items
are the reply's Markdown items (lists, emoji/bold/heading numbering, table rows or columns) minus
those it names only to exclude or reject. When the reading is unsure and the verdict hangs on it,
the check is unjudged with reason "uncertain: ..." — never a confident fail.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from usersim.core.registry import did_you_mean
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.registry import Outcome, check_registry
from usersim.judges.checks.vacuity import Problems, matches_empty, never_fails, never_passes

# the language layer is imported by the checks when they run: validating a case's params reads no
# text (mentions, polarity, layout and segment are ~25 ms of imports)
if TYPE_CHECKING:
    from usersim.cases.schema import Case
    from usersim.judges.checks.mentions import Mention
    from usersim.lang.layout import Item
    from usersim.lang.polarity import Reader, Reading

ScopeName = Literal["final", "assistant", "first"]


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

    def case_problems(self, case: Case) -> Problems:
        """A blank keyword (found nowhere: it forbids nothing, and cannot be met), synonyms of a
        word the check never reads, and a word both required and forbidden."""
        out: Problems = []
        for name in ("any", "all", "none"):
            for i, w in enumerate(getattr(self, name)):
                if not w.strip():
                    what = "forbids nothing" if name == "none" else "can never be found"
                    out.append(((name, i), f"a blank keyword {what}; write the word or remove it"))
        words = {w.strip().casefold(): w for w in [*self.any, *self.all, *self.none] if w.strip()}
        for key, spellings in self.synonyms.items():
            if key.strip().casefold() not in words:
                out.append(
                    (
                        ("synonyms", key),
                        f"synonyms of '{key}' are never used: '{key}' is not in any / all / none."
                        f"{did_you_mean(key, set(words.values()))}",
                    )
                )
            for j, alt in enumerate(spellings):
                if not str(alt).strip():
                    out.append((("synonyms", key, j), "a blank synonym can never be found; remove it"))
        required = {w.strip().casefold() for w in self.all if w.strip()}
        if len(self.any) == 1 and self.any[0].strip():
            required.add(self.any[0].strip().casefold())
        for i, w in enumerate(self.none):
            if w.strip().casefold() in required:
                why = f"'{w}' is both required (any / all) and forbidden (none)"
                out.append((("none", i), never_passes("keywords", why, "Keep it in one list")))
        return out


def _as(word: str, m: Mention | None) -> str:
    """A keyword as found: itself, or with the lexicon or place spelling that matched ("驾车 (as
    驱车)", "杭州 (as Hangzhou)")."""
    return f"{word} (as {m.spelling})" if m is not None and m.via.startswith(("lexicon.", "places")) else word


def _said(m: Mention) -> str:
    return m.spelling if m.spelling == m.word else f"{m.spelling} (= {m.word})"


@check_registry.register("keywords", KeywordsParams)
def keywords(params: KeywordsParams, ctx: CheckContext) -> Outcome:
    """Keywords present (any / all) and absent (none) in the scoped replies."""
    from usersim.judges.checks.mentions import Texts, cues_of, forbidden, presence

    texts = ctx.texts(params.scope)
    if not texts:
        return Outcome(False, f"no assistant reply in scope '{params.scope}'")
    replies = Texts(texts)
    syn = params.synonyms
    found, problems, doubts, cues = [], [], [], []
    if params.any:
        read = [(w, *presence(replies.mentions(w, syn))) for w in params.any]
        hits = [(w, m) for w, p, m in read if p == "present"]
        unsure = [(w, m) for w, p, m in read if p == "doubtful"]
        if hits:
            found.append("found " + ", ".join(_as(w, m) for w, m in hits))
            cues += [c for _, m in hits[:1] for c in cues_of(m)]
        elif unsure:
            doubts.append("only unsure mentions of " + ", ".join(w for w, _ in unsure))
            cues += [c for _, m in unsure for c in cues_of(m)]
        else:
            negated = [(w, m) for w, _, m in read if m is not None]
            problems.append("none of " + ", ".join(params.any) + " present")
            if negated:
                problems[-1] += " (only negated: " + ", ".join(_said(m) for _, m in negated if m) + ")"
                cues += [c for _, m in negated for c in cues_of(m)]
    read_all = [(w, *presence(replies.mentions(w, syn))) for w in params.all]
    missing = [(w, m) for w, p, m in read_all if p == "absent"]
    present_all = [w for w, p, _ in read_all if p == "present"]
    unsure_all = [(w, m) for w, p, m in read_all if p == "doubtful"]
    if present_all:
        found.append("found all-of " + ", ".join(_as(w, m) for w, p, m in read_all if p == "present"))
        cues += [c for w, p, m in read_all if p == "present" for c in cues_of(m) if m and m.via]
    if missing:
        problems.append("missing " + ", ".join(w for w, _ in missing))
        cues += [c for _, m in missing for c in cues_of(m)]
    if unsure_all:
        doubts.append("only unsure mentions of " + ", ".join(w for w, _ in unsure_all))
        cues += [c for _, m in unsure_all for c in cues_of(m)]
    read_none = [(w, *forbidden(replies.mentions(w, syn))) for w in params.none]
    bad = [(w, m) for w, p, m in read_none if p == "present" and m]
    unsure_none = [(w, m) for w, p, m in read_none if p == "doubtful"]
    negated = [w for w, p, m in read_none if p == "absent" and m]
    if bad:  # several `none` words may find the same span (第1天 and Day 1 both find 第一天): shown once
        spans: dict[tuple[int, int, int], Mention] = {}
        for _, m in bad:  # the word that is its own spelling names it best
            k = (m.reply, m.start, m.end)
            if k not in spans or (m.spelling == m.word and spans[k].spelling != spans[k].word):
                spans[k] = m
        problems.append("forbidden present: " + ", ".join(_said(m) for m in spans.values()))
        cues += [c for _, m in bad for c in cues_of(m)]
    elif params.none and not unsure_none:
        found.append("none of " + ", ".join(params.none) + " present")
    if unsure_none:
        doubts.append("unsure whether these stand or are negated: " + ", ".join(w for w, _ in unsure_none))
        cues += [c for _, m in unsure_none for c in cues_of(m)]
    if negated:
        found.append("only negated mentions of " + ", ".join(negated) + " (not counted)")
        cues += [c for w, p, m in read_none if p == "absent" and m for c in cues_of(m)]
    evidence = bad[0][1].reply if bad else texts[-1][0]  # the reply that said it
    where = f"in {params.scope} reply" if params.scope != "assistant" else "in the assistant replies"
    shown = list(dict.fromkeys(c.describe() for c in cues)) or None
    if problems:
        return Outcome(False, f"{where}: " + "; ".join(problems + found), evidence_turn=evidence, cues=shown)
    if doubts:
        return Outcome.unsure(f"{where}: " + "; ".join(doubts + found), cues=shown, evidence_turn=evidence)
    return Outcome(True, f"{where}: " + "; ".join(found), evidence_turn=evidence, cues=shown)


class CountParams(_Params):
    pattern: str | None = Field(
        default=None,
        description="Regex whose distinct matches are counted, for what is truly a text pattern "
        "(None = the items the reply recommends, read from its structure).",
    )
    catalog: str | None = Field(
        default=None,
        description="Sandbox catalog (products | hotels | ...): count the distinct catalog items the "
        "reply recommends (read as the constraint check reads them), with its listed items that "
        "name none.",
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
                from usersim.core.saferegex import case_regex  # (re2: imported for a pattern only)

                case_regex(v)  # re.error when malformed; UnsafePatternError (a ValueError) when pathological
            except re.error as exc:
                raise ValueError(f"pattern is not a valid regex: {exc}") from None
        return v

    @field_validator("catalog")
    @classmethod
    def _known_catalog(cls, v: str | None) -> str | None:
        if v is None:
            return v
        try:
            from usersim.sandbox.catalog import CATALOGS
        except ImportError:  # no sandbox in this build: the lookup reports it when the check runs
            return v
        if v not in CATALOGS:
            raise ValueError(
                f"unknown catalog '{v}'.{did_you_mean(v, set(CATALOGS))} Catalogs: {', '.join(CATALOGS)}"
            )
        return v

    @model_validator(mode="after")
    def _bound(self) -> CountParams:
        if self.min is None and self.max is None and self.exactly is None:
            raise ValueError("give min, max or exactly")
        if self.pattern is not None and self.catalog is not None:
            raise ValueError("give pattern or catalog, not both")
        return self

    def case_problems(self, case: Case) -> Problems:
        """Bounds every count meets (at least 0 alone) or none can (min above max), and a pattern
        that matches the empty string (found in every reply)."""
        out: Problems = []
        if self.exactly is None and self.max is None and self.min == 0:
            out.append(
                (
                    ("min",),
                    never_fails(
                        "count", "every reply has at least 0 items", "Give min >= 1, a max or exactly"
                    ),
                )
            )
        lo = max(x for x in (self.min, self.exactly, 0) if x is not None)
        hi = min((x for x in (self.max, self.exactly) if x is not None), default=None)
        if hi is not None and lo > hi:
            out.append(((), never_passes("count", f"no count is {self.bounds()}", "Fix the bounds")))
        if self.pattern is not None and matches_empty(self.pattern):
            out.append(
                (
                    ("pattern",),
                    f"/{self.pattern}/ matches the empty string, so it is found in every reply; "
                    "write what the pattern must contain (e.g. + instead of *)",
                )
            )
        return out

    def ok(self, n: int) -> bool:
        return (
            (self.exactly is None or n == self.exactly)
            and (self.min is None or n >= self.min)
            and (self.max is None or n <= self.max)
        )

    def bounds(self) -> str:
        parts = [f"exactly {self.exactly}"] if self.exactly is not None else []
        parts += [f"at least {self.min}"] if self.min is not None else []
        parts += [f"at most {self.max}"] if self.max is not None else []
        return ", ".join(parts)


def list_items(text: str) -> list[Item]:
    """The items a reply lists (lang.layout): numbered / bulleted / emoji-numbered lines and item
    headings (details nested under an item are not items), or the table's rows — or its columns in
    a comparison table — whichever is larger (the same items shown twice count once)."""
    from usersim.lang.polarity import Reader

    return Reader(text).layout.items


def _shown(it: Item) -> str:
    from usersim.lang.segment import reading

    text = it.label.text if it.kind == "column" else it.span.text
    return re.sub(r"\s+", " ", reading(text)).strip()[:30]  # "**1. vivo**" shows as "1. vivo"


def _items(reader: Reader) -> tuple[str, list[tuple[str, Reading]]]:
    items = reader.layout.items
    kinds = {i.kind for i in items}
    what = "table columns" if "column" in kinds else "table rows" if "row" in kinds else "list items"
    return what, [(_shown(i), reader.item(i)) for i in items]


def _catalog_items(reader: Reader, catalog: str) -> tuple[str, list[tuple[str, Reading]]]:
    """The distinct things the reply recommends: the catalog items it names, read as the
    constraint check reads them (recommended when some mention surely stands, set aside when every
    mention is excluded, rejected, compared against or asked about, else doubtful), and its listed
    items that name no catalog item, read as items. A doubtful catalog item named in a listed item
    by an open hypothetical or question ("5. 一加Ace 3V（如果预算够的话）") is listed, so counted."""
    from usersim.judges.checks.constraint import _as_dict, _key, _label, _lookup, read_items
    from usersim.lang.polarity import Reading

    rec, excluded, doubtful = read_items(catalog, reader.text)
    listed: list[tuple[str, Reading]] = []
    in_items: set[str] = set()
    for it in reader.layout.items:
        text = it.label.text if it.kind == "column" else it.span.text
        named = [_key(_as_dict(i)) for i in _lookup(catalog, text)]
        if named:
            in_items.update(named)
        else:
            listed.append((_shown(it), reader.item(it)))
    sure = Reading("recommended", "confident")
    out = [(_label(i), sure) for i in rec]
    out += [(_label(i), Reading("excluded", "confident")) for i in excluded]
    for i, r in doubtful:
        if not (r.negative or r.polarity == "compared") and _key(i) in in_items:
            out.append((_label(i), Reading(r.polarity, "confident", r.cues)))
        else:
            out.append((_label(i), Reading(r.polarity if r.negative else "excluded", "conflicting", r.cues)))
    seen = {s for s, _ in out}
    out += [(s, r) for s, r in listed if s not in seen]
    return f"recommended {catalog} items", out


def _matches(reader: Reader, pattern: str) -> list[tuple[str, Reading]]:
    """Distinct matches of the pattern, each read where it starts (its item's reading on a list
    line or table row); a match spanning lines is not read."""
    from usersim.core.saferegex import case_regex
    from usersim.lang.polarity import Reading

    out: dict[str, Reading] = {}
    lines = [it for it in reader.layout.listed + reader.layout.table if it.kind != "column"]
    for m in case_regex(pattern).finditer(reader.text):  # a case regex: linear time (core.saferegex)
        got = m.group(0)
        if "\n" in got.strip():
            reading = Reading("neutral", "none")
        else:
            item = next((it for it in lines if it.span.start <= m.start() < it.span.end), None)
            reading = reader.item(item) if item else reader.at(m.start(), max(m.end(), m.start() + 1))
        prev = out.get(got)
        if prev is None or (prev.negative and not reading.negative):
            out[got] = reading
    return list(out.items())


@check_registry.register("count", CountParams)
def count(params: CountParams, ctx: CheckContext) -> Outcome:
    """Count what the scoped replies recommend against min / max / exactly: their listed items
    (lang.layout), or with `catalog` the distinct catalog items they recommend plus listed items
    naming none, or distinct `pattern` matches. Items set aside (excluded, rejected, compared
    against, asked about) are not counted; an unsure role that decides the count is inconclusive."""
    texts = ctx.texts(params.scope)
    if not texts:
        return Outcome(False, f"no assistant reply in scope '{params.scope}'")
    from usersim.lang.polarity import Reader

    reader = Reader("\n".join(t for _, t in texts))
    if params.catalog is not None:
        try:
            what, read = _catalog_items(reader, params.catalog)
        except ImportError:
            return Outcome(
                None, "cannot look up catalog items: sandbox.catalog is not available in this build"
            )
    elif params.pattern is None:
        what, read = _items(reader)
    else:
        what, read = f"distinct matches of /{params.pattern}/", _matches(reader, params.pattern)
    # set aside (excluded, rejected, negated, compared against, a question about what the user
    # meant): not counted; a negative or comparing reading that is unsure may decide the count
    aside = [r.negative or r.polarity == "compared" or r.aside for _, r in read]
    counted = [s for (s, _), a in zip(read, aside) if not a]
    skipped = [(s, r) for (s, r), a in zip(read, aside) if a and r.set_aside]
    unsure = [(s, r) for (s, r), a in zip(read, aside) if a and not r.set_aside]
    n = len(counted)
    shown = ", ".join(i for i in counted[:6]) + (" …" if n > 6 else "")
    found = f"{n} {what}" + (f" ({shown})" if n else "")
    if skipped:
        found += (
            f"; {len(skipped)} excluded/rejected not counted (" + ", ".join(s for s, _ in skipped[:4]) + ")"
        )
    cues = list(dict.fromkeys(c.describe() for _, r in skipped + unsure for c in r.cues)) or None
    evidence = texts[-1][0]
    ok, ok_all = params.ok(n), params.ok(n + len(unsure))
    if unsure and ok != ok_all:
        doubt = ", ".join(s for s, _ in unsure[:4])
        return Outcome.unsure(
            f"{found}; unsure whether {len(unsure)} more are excluded ({doubt}); required {params.bounds()}",
            cues=cues,
            evidence_turn=evidence,
        )
    if unsure:
        found += f"; {len(unsure)} unsure (either way {'within' if ok else 'outside'} bounds)"
    return Outcome(
        ok, found if ok else f"{found}; required {params.bounds()}", evidence_turn=evidence, cues=cues
    )
