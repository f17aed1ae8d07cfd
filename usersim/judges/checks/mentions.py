"""Which mentions in a reply are negated or excluded ("我排除了 MacBook Air", "不再去环球影城",
"Redmi Note 13 和 OPPO A3 已剔除"), and keyword matching that ignores whitespace and case.

A reply is cut into clauses (by line, sentence and comma punctuation; a bracketed aside is a clause
of its own). A mention is negated when, in its clause, a negation marker comes before it, or comes
after it with no recommending word (推荐 / 建议 / 首选 ...) before the mention; a clause that is only a
marker ("…，排除。") negates the clause before it; a heading or lead-in line carrying a marker
("已排除：") negates the list that follows it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Exclusion markers: the item is mentioned but not recommended.
EXCLUSION = (
    "排除",
    "剔除",
    "不推荐",
    "不建议",
    "不考虑",
    "不予考虑",
    "已去掉",
    "去掉",
    "去除",
    "删掉",
    "删除",
    "移除",
    "拿掉",
    "划掉",
    "淘汰",
    "放弃",
    "不选",
    "没选",
    "未选",
    "不符合",
    "不满足",
    "不适合",
    "不合适",
    "超预算",
    "超出预算",
    "超重",
    "不列入",
    "不纳入",
    "不在推荐",
    "未推荐",
    "没有推荐",
    "没推荐",
    "换掉",
    "替换掉",
    "而非",
    "并非",
    "不是",
    "除外",
    "❌",
    "✗",
    "✘",
)
# Further negations: the word is mentioned but said not to happen ("不再去环球影城").
NEGATION = EXCLUSION + (
    "不再",
    "不去",
    "不要",
    "别去",
    "取消",
    "避开",
    "避免",
    "不含",
    "不包含",
    "不包括",
    "没有",
    "没去",
    "无需",
    "不用",
    "不会",
    "不能",
    "替代",
    "代替",
    "改成",
    "改为",
    "换成",
)
# Negations that only reach forward ("不要去环球影城"); after a mention they usually say something
# else about it ("环球影城不会让你失望"), so they do not negate what comes before them.
FORWARD_ONLY = (
    "不是",
    "并非",
    "不会",
    "不能",
    "不用",
    "无需",
    "避免",
    "没有",
    "不要",
    "不含",
    "不包含",
    "不包括",
    "别去",
    "避开",
)
# Idioms that contain a marker but recommend ("不要错过寿司", "好吃没有之一").
_IDIOMS = ("不要错过", "不容错过", "别错过", "不可错过", "不能错过", "不得不", "不可不", "没有之一", "没有比")
_POSITIVE = ("推荐", "建议", "首选", "优先", "选择", "选", "可以考虑", "考虑", "入手", "买")

_CUTS = set("。！!？?；;，,：:\n|")
_OPEN = set("（(【[")
_CLOSE = set(")）】]")
_JOIN = set("，,（(【[)）】]")
_LIST_LINE = re.compile(r"^\s*(?:\d{1,2}\s*[.、)）]|[（(]\d{1,2}[)）]|[①-⑳]|[-•*·]\s|\|)")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|\*\*[^*]+\*\*\s*[：:]?\s*$)")
_FILLER = re.compile(r"[\s了已都也就直接则均全部掉*_~`>#\-—·、的这些该款个]+")


def squash(text: str) -> str:
    """Text for matching: case folded, all whitespace removed ("华为 MateBook" == "华为MateBook")."""
    return re.sub(r"\s+", "", text).casefold()


def has_keyword(word: str, text: str) -> bool:
    """Whether a keyword occurs in text: numbers by value (normalize.find_keyword: "1628" finds
    "$1,628.00", "4" never finds "14"), words ignoring case and whitespace ("华为 MateBook" finds
    "华为MateBook 14 2024")."""
    from usersim.judges.checks.normalize import find_keyword, is_quantity

    if find_keyword(word, text):
        return True
    numeric = bool(re.search(r"\d", word)) and is_quantity(word.strip())
    return not numeric and bool(squash(word)) and squash(word) in squash(text)


def find_all(word: str, text: str) -> list[int]:
    """Start offsets (in `text`) of `word`, ignoring whitespace and case in both."""
    needle = squash(word)
    if not needle:
        return []
    kept = [(i, ch) for i, ch in enumerate(text) if not ch.isspace()]
    hay = "".join(ch for _, ch in kept).casefold()
    out, start = [], hay.find(needle)
    while start != -1:
        out.append(kept[start][0])
        start = hay.find(needle, start + 1)
    return out


@dataclass(frozen=True)
class _Clause:
    start: int
    end: int
    line: int
    aside: bool  # inside brackets
    joined: bool  # joined to the clause before by a comma or bracket (same sentence)
    after_colon: bool  # follows a "：" lead-in on the same line


def _clauses(text: str) -> list[_Clause]:
    """Clause spans of `text`, cut at line, sentence and comma punctuation and at brackets."""
    out: list[_Clause] = []
    line = 0
    start = 0
    depth = 0
    sep = "\n"
    for i, ch in enumerate(text + "\n"):
        if ch in _CUTS or ch in _OPEN or ch in _CLOSE:
            seg = text[start:i]
            if seg.strip():
                lead = len(seg) - len(seg.lstrip())
                out.append(_Clause(start + lead, i, line, depth > 0, sep in _JOIN, sep in "：:"))
            if ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth = max(0, depth - 1)
            if ch == "\n":
                line += 1
                depth = 0
            sep = ch if seg.strip() or ch not in _CLOSE else sep
            start = i + 1
    return out


def _markers_in(segment: str, markers: tuple[str, ...]) -> list[tuple[int, int]]:
    """(start, end) of marker hits in a segment, longest first, not overlapping; markers inside a
    recommending idiom (不要错过) are not hits."""
    taken = [False] * len(segment)
    for idiom in _IDIOMS:
        i = segment.find(idiom)
        while i != -1:
            taken[i : i + len(idiom)] = [True] * len(idiom)
            i = segment.find(idiom, i + 1)
    hits = []
    for mk in sorted(markers, key=len, reverse=True):
        i = segment.find(mk)
        while i != -1:
            if not any(taken[i : i + len(mk)]):
                taken[i : i + len(mk)] = [True] * len(mk)
                hits.append((i, i + len(mk)))
            i = segment.find(mk, i + 1)
    return sorted(hits)


def _positive_before(segment: str, upto: int, markers: list[tuple[int, int]]) -> bool:
    masked = list(segment[:upto])
    for a, b in markers:
        for i in range(a, min(b, upto)):
            masked[i] = " "
    head = "".join(masked)
    return any(p in head for p in _POSITIVE)


def _excluded_lines(text: str, markers: tuple[str, ...]) -> set[int]:
    """Lines under a lead-in carrying a marker ("已排除：", "### 不推荐"), up to the next blank line,
    heading or lead-in."""
    out: set[int] = set()
    open_section = False
    for n, line in enumerate(text.splitlines()):
        s = line.strip()
        lead_in = s.endswith((":", "：")) or bool(_HEADING.match(line))
        if not s:
            open_section = False
            continue
        if lead_in:
            open_section = bool(_markers_in(s, markers)) and not _LIST_LINE.match(line)
            continue
        if open_section and _LIST_LINE.match(line):
            out.add(n)
        else:
            open_section = False
    return out


class Negations:
    """Negation context of one text: `negated(offset)` tells whether a mention there is negated."""

    def __init__(self, text: str, markers: tuple[str, ...] = NEGATION) -> None:
        self.text = text
        self.markers = markers
        self.clauses = _clauses(text)
        self.section_lines = _excluded_lines(text, markers)
        self._marker_only = [self._is_marker_only(c) for c in self.clauses]

    def _is_marker_only(self, c: _Clause, text: str | None = None) -> bool:
        seg = (self.text if text is None else text)[c.start : c.end]
        hits = _markers_in(seg, self.markers)
        if not hits:
            return False
        rest = "".join(ch for i, ch in enumerate(seg) if not any(a <= i < b for a, b in hits))
        return not _FILLER.sub("", rest)

    def marker_only(self, segment: str) -> bool:
        """Whether a piece of text says nothing but a marker ("已排除", "❌ 不推荐")."""
        return self._is_marker_only(_Clause(0, len(segment), 0, False, False, False), segment)

    def negated(self, offset: int, length: int = 1) -> bool:
        idx = next((i for i, c in enumerate(self.clauses) if c.start <= offset < c.end), None)
        if idx is None:
            return False
        c = self.clauses[idx]
        if c.line in self.section_lines:
            return True
        seg = self.text[c.start : c.end]
        rel = offset - c.start
        hits = _markers_in(seg, self.markers)
        if any(b <= rel for a, b in hits):
            return True
        after = [(a, b) for a, b in hits if a >= rel + length and seg[a:b] not in FORWARD_ONLY]
        if after and not _positive_before(seg, rel, hits):
            return True
        if idx > 0 and c.after_colon and self.clauses[idx - 1].line == c.line and self._marker_only[idx - 1]:
            return True  # "不推荐：MacBook Air"
        # a clause that only says "排除" / "不考虑" (maybe after a bracketed aside) negates this one
        for nxt in self.clauses[idx + 1 :]:
            if nxt.line != c.line or not nxt.joined:
                break
            if self._marker_only[self.clauses.index(nxt)]:
                return True
            if not nxt.aside:
                break
        return False

    def affirmed(self, word: str) -> list[int]:
        """Offsets of the mentions of `word` (whitespace/case-insensitive) that are not negated."""
        return [i for i in find_all(word, self.text) if not self.negated(i, len(word))]
