"""How the `graded` check reads one reply: where its markers are and how each stands (lang
polarity, grading.superseded), and whether it asks the user something first (lang acts)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from usersim.core.saferegex import case_regex
from usersim.judges.checks.mentions import _numeric, find_all, match_end
from usersim.lang import Cue, quantity
from usersim.lang.acts import QUESTIONS, agent_acts
from usersim.lang.phrases import finditer
from usersim.lang.polarity import Reader

Marker = str | list[str]  # one thing to find; a list: any of these spellings


@dataclass
class Found:
    """How one marker stands in a reply: present (said plainly), asked (only in a question or a
    hypothetical: "Do you want the national figures?"), void (said to no longer hold), doubtful (only
    unsure readings), absent; the first position and the cues that decided it."""

    state: Literal["present", "asked", "void", "doubtful", "absent"]
    text: str = ""
    at: int = -1
    cues: list[Cue] = field(default_factory=list)


def _spans(alt: str, text: str) -> list[tuple[int, int]]:
    if alt.startswith("re:"):
        return [(m.start(), max(m.end(), m.start() + 1)) for m in case_regex(alt[3:]).finditer(text)]
    if _numeric(alt):  # by value, with its scale ("50k" = "50,000", "4.5万" = 45000) and unit kind
        want = quantity.parse(alt.strip())
        if want is None:
            return []
        return [
            (q.start, q.end)
            for q in quantity.quantities(text)
            if abs(q.value - want.value) < 1e-9
            and (want.dimension is None or q.dimension in (None, want.dimension))
        ]
    return [(at, match_end(text, at, alt)) for at in find_all(alt, text)]


def _superseded_near(reader: Reader, start: int) -> list[Cue]:
    """grading.superseded cues in the mention's clause or the clause right after it."""
    idx = next((i for i, c in enumerate(reader.clauses) if c.start <= start < c.end), None)
    if idx is None:
        return []
    out: list[Cue] = []
    for c in reader.clauses[idx : idx + 2]:
        piece = reader.text[c.start : c.end]
        out += [
            Cue(q.entry, q.start + c.start, q.end + c.start, q.text)
            for q in finditer(piece, "grading", "superseded")
        ]
    return out


def read_marker(marker: Marker, text: str, reader: Reader, *, old: bool) -> Found:
    """The marker's best standing in `text`: a plain mention wins over a void or unsure one. An old
    marker is void when negated (lang polarity) or said to no longer hold (grading.superseded); a new
    one only when negated."""
    best = Found("absent")
    rank = {"absent": 0, "void": 1, "asked": 2, "doubtful": 3, "present": 4}
    for alt in [marker] if isinstance(marker, str) else marker:
        for a, b in _spans(alt, text):
            reading = reader.at(a, b) if not _numeric(alt) else None  # a number is never read as negated
            void_cues = _superseded_near(reader, a) if old else []
            if reading is not None and reading.negative and reading.sure:
                got = Found("void", clip(text[a:b]), a, list(reading.cues))
            elif void_cues:
                got = Found("void", clip(text[a:b]), a, void_cues)
            elif reading is not None and reading.polarity in ("asked_about", "hypothetical") and reading.sure:
                got = Found("asked", clip(text[a:b]), a, list(reading.cues))
            elif reading is not None and not reading.sure:
                got = Found("doubtful", clip(text[a:b]), a, list(reading.cues))
            else:
                got = Found("present", clip(text[a:b]), a, list(reading.cues) if reading else [])
            if rank[got.state] > rank[best.state] or (got.state == best.state and 0 <= got.at < best.at):
                best = got
    return best


def clip(text: str, limit: int = 40) -> str:
    """A matched span as shown in a reason: one line, at most `limit` characters."""
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def marker_name(m: Marker) -> str:
    return m if isinstance(m, str) else "/".join(m)


@dataclass
class ReplyReading:
    """What the final reply after the change does with the new and old markers."""

    new: list[tuple[Marker, Found]]
    old: list[tuple[Marker, Found]]

    @property
    def new_state(self) -> str:
        states = {f.state for _, f in self.new}
        if not self.new or states <= {"present"}:
            return "present" if self.new else "absent"
        return "doubtful" if "doubtful" in states and not states & {"absent", "void", "asked"} else "absent"

    @property
    def kept(self) -> list[tuple[Marker, Found]]:
        return [(m, f) for m, f in self.old if f.state == "present"]

    @property
    def doubtful_old(self) -> list[tuple[Marker, Found]]:
        return [(m, f) for m, f in self.old if f.state == "doubtful"]

    @property
    def first_new(self) -> int | None:
        """Where the reply first carries out the new instruction (None: nowhere)."""
        ats = [f.at for _, f in self.new if f.state == "present" and f.at >= 0]
        return min(ats) if ats else None


def read_reply(new: list[Marker], old: list[Marker], text: str) -> ReplyReading:
    """How a reply stands on the new and the old markers."""
    reader = Reader(text)
    return ReplyReading(
        [(m, read_marker(m, text, reader, old=False)) for m in new],
        [(m, read_marker(m, text, reader, old=True)) for m in old],
    )


def questions_in(text: str, before: int | None = None) -> list[Cue]:
    """Cues of a question to the user (request / confirm_request / clarify, lang.acts), only those
    starting before offset `before` when given."""
    out = []
    for act in agent_acts(text):
        if act.kind in QUESTIONS and act.sure and (before is None or act.start < before):
            out += list(act.cues) or [Cue(f"acts.{act.kind}", act.start, act.end, act.text[:40])]
    return out
