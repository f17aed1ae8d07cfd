"""Markdown items of a reply: list lines, table rows or columns, their marks and lead-ins.

An item is what an agent lists: a numbered, bulleted or emoji-numbered line (1. / - / 1️⃣ / ① /
**1.** / "### 1."), an item heading, a table body row, or, in a comparison table whose first
header cell is empty or an attribute word ("| | 华为 | 小米 |", "| 参数 | A | B |"), a column.
Details nested under an item (bullets under "### 1. 华为") are not items of their own. A lead-in
line ("已排除：", "Not recommended:", "### 超出预算") governs the items up to the next lead-in or
paragraph; `Section` ties them together so polarity can read the lead-in for its items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from usersim.lang.resources import language_codes, resources
from usersim.lang.segment import Span, lines, reading

ItemKind = Literal["numbered", "bullet", "heading", "row", "column"]

_NUM = r"(?:\d{1,2}\s*[.、)）](?!\d)|\d{1,2}\s*[:：](?!\d)|[（(]\d{1,2}[)）]|[①-⑳]|[0-9]\ufe0f?\u20e3|\U0001f51f|第[一二三四五六七八九十\d]{1,3}[款个名项家站]?[：:、.])"
_NUMBERED = re.compile(rf"^[ \t]*{_NUM}[ \t]*(?=\S)")
_BULLET = re.compile(r"^[ \t]*(?:[-•*·+▪◦●○][ \t]+|[➤▶►👉🔹🔸🔺▫️◆◇🥇🥈🥉]\ufe0f?[ \t]*)(?=\S)")
_MARK_BULLET = re.compile(r"^[ \t]*([✅❌✔☑✓✗✘🚫⛔❎])\ufe0f?[ \t]*(?=\S)")
_HEADING = re.compile(r"^[ \t]*(#{1,6})[ \t]+(?=\S)")
_BOLD_LINE = re.compile(r"^[ \t]*\*\*[^*\n]+\*\*[ \t]*[：:]?[ \t]*$")
_INLINE = re.compile(r"[①-⑳]|[0-9]\ufe0f?\u20e3")  # markers that number items inside one line
_BOLD_LEAD = re.compile(r"^[ \t]*\*\*([^*\n]+)\*\*[ \t]*(?=[·:：\-—–|(（/]|[ \t]+\S)")
_TABLE = re.compile(r"^\s*\|.*\|\s*$")
_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_LABEL_END = re.compile(r"\s[-–—]\s|[：:（(—–|，,;；。]|\s{2,}")


@dataclass(frozen=True)
class Item:
    """One listed item. `label` is its name part (first naming cell, heading text, text before the
    first separator); `cells` the table cells of a row or column (label excluded); `verdict` the
    cell that judges the whole item (a verdict column/row, or the only marked one), if any."""

    kind: ItemKind
    span: Span
    label: Span
    line: int
    cells: tuple[Span, ...] = ()
    verdict: Span | None = None
    top: bool = True  # False: a detail nested under another item
    grid: bool = False  # a table row among rows with ✅/❌ in several columns (feature marks)


@dataclass
class Section:
    """A lead-in line (or None for the reply's opening) and the items it governs."""

    lead: Span | None
    items: list[Item] = field(default_factory=list)


@dataclass
class Layout:
    """The items of a reply: list items (top-level and nested), table items and sections."""

    listed: list[Item]
    table: list[Item]
    sections: list[Section]

    @property
    def items(self) -> list[Item]:
        """The items the reply lists, once: the table's or the top-level list's, the larger (a
        table and a list of the same items count once)."""
        top = [i for i in self.listed if i.top]
        return self.table if len(self.table) > len(top) else top

    def section_of(self, item: Item) -> Section | None:
        return next((s for s in self.sections if item in s.items), None)


def marks(kind: str) -> str:
    """The mark characters of a kind (excluded | recommended), from every language's segment.yaml."""
    return "".join(
        dict.fromkeys(
            m for c in language_codes() for m in resources(c).get("segment", "marks", {}).get(kind, [])
        )
    )


def _any_mark() -> str:
    return marks("excluded") + marks("recommended")


def _words(key: str) -> set[str]:
    return {w.casefold() for c in language_codes() for w in resources(c).words("segment", key)}


def _strip(s: str) -> str:
    return reading(s).strip().strip("：:").strip()


def is_title(text: str) -> bool:
    """A heading that titles a section ("### 推荐方案", "**Not recommended**") rather than an item."""
    raw = reading(text).strip()
    if raw.endswith(("：", ":")):
        return True
    t = raw.strip("：:").strip().casefold()
    if re.search(r"\d", t) or not any(w and w in t for w in _words("title_words")):
        return False  # "### vivo Y200（推荐）" names an item
    return not re.search(r"[A-Za-z]", t) or len(t.split()) <= 4


def _label(text: str, base: int) -> Span:
    body = reading(text)
    lead = len(body) - len(body.lstrip())
    m = _LABEL_END.search(body, lead + 1)
    end = m.start() if m else len(body.rstrip())
    keep = len(body[lead:end].rstrip())  # markup around the name ("**vivo Y200**") is not part of it
    piece = text[lead : lead + keep]
    return Span(base + lead, base + lead + keep, piece)


_BARE = re.compile(r"^[ \t]*(\d{1,2})[ \t]+(?=[^\d\s])")


def _bare_runs(all_lines: list[Span]) -> set[int]:
    """Lines numbered without punctuation ("1 vivo Y200") that form a run 1, 2, 3 ...: items only
    then, so "3 天行程" alone is a sentence, not an item."""
    out: set[int] = set()
    run: list[int] = []
    for n, ln in enumerate(all_lines):
        m = _BARE.match(ln.text)
        if m and int(m.group(1)) == len(run) + 1:
            run.append(n)
            continue
        if not ln.text.strip() and run:
            continue
        if len(run) >= 2:
            out.update(run)
        run = [n] if m and m.group(1) == "1" else []
    if len(run) >= 2:
        out.update(run)
    return out


def _list_item(ln: Span, n: int, bare: bool = False) -> tuple[Item, int] | None:
    """The list item on a line and its rank (lower ranks are parents), or None."""
    raw, src = ln.text, reading(ln.text)
    indent = len(raw) - len(raw.lstrip())
    head = _HEADING.match(raw)
    if head:
        rest = raw[head.end() :]
        num = _NUMBERED.match(reading(rest))
        body_at = head.end() + (num.end() if num else 0)
        rank = len(head.group(1))
        kind: ItemKind = "heading"
    elif _BOLD_LINE.match(raw):
        num = _NUMBERED.match(src)
        body_at = num.end() if num else len(raw) - len(raw.lstrip())
        rank, kind = 7, "heading"
    else:
        num = _NUMBERED.match(src) or (_BARE.match(src) if bare else None)
        bul = None if num else (_BULLET.match(raw) or _MARK_BULLET.match(raw))
        if not (num or bul):
            return None
        body_at = (num or bul).end()  # type: ignore[union-attr]
        rank = 10 if num else 20
        kind = "numbered" if num else "bullet"
    if kind == "heading" and not num and is_title(raw):
        return None
    body = raw[body_at:]
    span = Span(ln.start + indent, ln.end, raw.strip())
    label = _label(body, ln.start + body_at)
    lead_mark = _MARK_BULLET.match(raw) if kind == "bullet" else None
    mark = _mark_span(label) if kind != "heading" else None
    if lead_mark:  # "✅ vivo Y200" / "❌ OPPO A3": the mark is the line's bullet and its verdict
        mark = Span(ln.start + lead_mark.start(1), ln.start + lead_mark.end(1), lead_mark.group(1))
    return Item(kind, span, label, n, verdict=mark), rank + (indent // 2) * 100 + (
        0 if num or kind != "heading" else 1
    )


def _mark_span(label: Span) -> Span | None:
    t = label.text.lstrip()
    return Span(label.start, label.end, label.text) if t[:1] in _any_mark() else None


def _cells(ln: Span) -> list[Span]:
    out, pos = [], ln.text.index("|") + 1
    parts = ln.text[pos:].rstrip().rstrip("|").split("|")
    for p in parts:
        lead = len(p) - len(p.lstrip())
        out.append(Span(ln.start + pos + lead, ln.start + pos + lead + len(p.strip()), p.strip()))
        pos += len(p) + 1
    return out


def _marked(cell: Span) -> bool:
    return any(ch in cell.text for ch in _any_mark())


def _is_name(cell: Span) -> bool:
    t = _strip(cell.text)
    return bool(t) and not re.fullmatch(r"[#\d\s.\-–—]*", t) and not all(ch in _any_mark() + " " for ch in t)


def _attribute(cell: Span) -> bool:
    t = _strip(cell.text).casefold()
    return bool(t) and any(
        t == w or t.startswith(w) for w in _words("attribute_words") | _words("verdict_headers")
    )


def _by_columns(header: list[Span], body: list[tuple[int, list[Span]]]) -> bool:
    """Whether a table's items are its columns: the first header cell is empty or an attribute
    header ("| | 华为 | 小米 |", "| 参数 | A | B |"), or its first column lists attributes (价格, 重量,
    Price) while the other header cells do not."""
    if len(header) < 3:
        return False
    first = _strip(header[0].text).casefold()
    if not first or first in _words("attribute_headers") - {"型号", "产品", "model", "product"}:
        return True
    col1 = [r[0] for _, r in body if r]
    if not col1:
        return False
    down = sum(_attribute(c) for c in col1) / len(col1)
    across = sum(_attribute(c) for c in header[1:]) / len(header[1:])
    return down >= 0.5 and across < 0.5


def _table(rows: list[tuple[int, Span]]) -> list[Item]:
    """Items of one table: (line number, line) of its header, rule and body lines."""
    header = _cells(rows[0][1])
    body = [(n, _cells(ln)) for n, ln in rows[2:]]
    verdicts = _words("verdict_headers")
    if _by_columns(header, body):
        # items are columns: the header's other cells name them, each body row is an attribute
        vrow = [r for _, r in body if r and _strip(r[0].text).casefold() in verdicts]
        marked = [r for _, r in body if any(_marked(c) for c in r[1:])]
        judge = vrow[0] if vrow else (marked[0] if len(marked) == 1 else None)
        out = []
        for j, h in enumerate(header[1:], start=1):
            cells = tuple(r[j] for _, r in body if j < len(r))
            verdict = judge[j] if judge is not None and j < len(judge) else (h if _marked(h) else None)
            out.append(Item("column", h, h, rows[0][0], cells, verdict))
        return out
    vcol = next((j for j, h in enumerate(header) if _strip(h.text).casefold() in verdicts), None)
    mark_cols = {j for _, r in body for j, c in enumerate(r) if _marked(c)}
    if vcol is None and len(mark_cols) == 1:
        vcol = next(iter(mark_cols))
    grid = vcol is None and len(mark_cols) > 1
    out = []
    for n, cells in body:
        ln = next(s for m, s in rows if m == n)
        named = [c for c in cells if _is_name(c)]
        label = named[0] if named else (cells[0] if cells else ln)
        others = tuple(c for c in cells if c is not label)
        verdict = cells[vcol] if vcol is not None and vcol < len(cells) and cells[vcol] is not label else None
        out.append(Item("row", Span(ln.start, ln.end, ln.text.strip()), label, n, others, verdict, grid=grid))
    return out


def layout(text: str) -> Layout:
    """The Markdown layout of `text`: its list items, table items and lead-in sections."""
    all_lines = lines(text)
    listed: list[Item] = []
    table: list[Item] = []
    sections: list[Section] = [Section(None)]
    ranks: list[int] = []  # ranks of the items since the last lead-in (for nesting)
    bare = _bare_runs(all_lines)
    bold_leads: list[Item] = []  # "**Name** · detail" lines: items only when there are several
    n = 0
    while n < len(all_lines):
        ln = all_lines[n]
        if _TABLE.match(ln.text) and n + 1 < len(all_lines) and _RULE.match(all_lines[n + 1].text):
            rows = [(n, ln), (n + 1, all_lines[n + 1])]
            m = n + 2
            while m < len(all_lines) and _TABLE.match(all_lines[m].text):
                rows.append((m, all_lines[m]))
                m += 1
            got = _table(rows)
            table.extend(got)
            sections[-1].items.extend(got)
            n = m
            continue
        found = _list_item(ln, n, n in bare)
        stripped = reading(ln.text).strip()
        inline = list(_INLINE.finditer(ln.text))
        if len(inline) >= 2 and not _TABLE.match(ln.text):
            for k, m in enumerate(inline):  # "推荐：① A ② B ③ C" lists its items on one line
                end = inline[k + 1].start() if k + 1 < len(inline) else len(ln.text)
                piece = ln.text[m.end() : end]
                label = _label(piece, ln.start + m.end())
                item = Item(
                    "numbered",
                    Span(ln.start + m.start(), ln.start + end, ln.text[m.start() : end].strip()),
                    label,
                    n,
                )
                listed.append(item)
                sections[-1].items.append(item)
            n += 1
            continue
        if found is None and _BOLD_LEAD.match(ln.text) and not is_title(_BOLD_LEAD.match(ln.text).group(1)):  # type: ignore[union-attr]
            bold = _BOLD_LEAD.match(ln.text)
            assert bold is not None
            label = Span(ln.start + bold.start(1), ln.start + bold.end(1), bold.group(1))
            found = (Item("bullet", Span(ln.start, ln.end, ln.text.strip()), label, n), 15)
            bold_leads.append(found[0])
        if found:
            item, rank = found
            top = not any(r < rank for r in ranks)
            ranks.append(rank)
            item = Item(item.kind, item.span, item.label, item.line, item.cells, item.verdict, top)
            listed.append(item)
            sections[-1].items.append(item)
        elif stripped and (
            stripped.endswith(("：", ":")) or _HEADING.match(ln.text) or _BOLD_LINE.match(ln.text)
        ):
            sections.append(Section(Span(ln.start, ln.end, ln.text.strip())))
            ranks = []
        elif stripped and sections[-1].lead is not None and sections[-1].items:
            sections.append(Section(None))  # a paragraph after the list ends the lead-in's reach
            ranks = []
        n += 1
    if len(bold_leads) == 1:
        lone = bold_leads[0].span
        listed = [i for i in listed if i.span != lone]
        for sec in sections:
            sec.items = [i for i in sec.items if i.span != lone]
    _promote_headings(listed)
    return Layout(listed, table, sections)


def _promote_headings(listed: list[Item]) -> None:
    """A lone unnumbered item heading over a list is a title after all: its bullets are the items."""
    heads = [i for i, it in enumerate(listed) if it.kind == "heading"]
    if len(heads) != 1 or heads[0] == len(listed) - 1 or _NUMBERED.match(_strip(listed[heads[0]].span.text)):
        return
    for i in range(heads[0], len(listed)):
        it = listed[i]
        listed[i] = Item(it.kind, it.span, it.label, it.line, it.cells, it.verdict, it.kind != "heading")
