"""Regular expressions written in case files (count.pattern, asked_clarification 're:' entries),
compiled one way so that no pattern can hang a run.

A pattern keeps Python's meaning (it is parsed by Python's own parser) and runs on RE2, whose
matching time is linear in the text, whenever RE2 can express that meaning: the pattern is
re-emitted for RE2 from Python's parse tree, with Python's Unicode \\w \\d \\s. Lookarounds,
backreferences, \\b, a plain `$` (Python's also matches before a final newline), atomic groups
and possessive repeats have no RE2 form; such a pattern runs on Python's `re` only when it is
proven safe from catastrophic backtracking (`saferegex.risk`: no repeat inside a repeat, no
repeated alternation whose branches can start alike, no two adjacent open-ended repeats over
overlapping characters). Any other pattern is refused with UnsafePatternError when the case is
validated (`usersim validate` reports it as file:line and exits 2), so it never runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812 - the parse tree's opcodes
from re import _parser  # type: ignore[attr-defined]
from typing import Any, Literal

import re2  # type: ignore[import-untyped]

from usersim.core.regexrisk import risk

Engine = Literal["re2", "re"]
_SPACES = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


class Inexpressible(Exception):
    """The pattern uses a construct RE2 has no form for (the message names it)."""


class UnsafePatternError(ValueError):
    """A case regex that could take exponential time and has no linear-time form."""


@dataclass(frozen=True)
class CaseRegex:
    """A compiled case regex: `search` / `finditer` give match objects with group(), start(), end()."""

    pattern: str
    engine: Engine
    compiled: Any

    def search(self, text: str) -> Any:
        return self.compiled.search(text)

    def finditer(self, text: str) -> Iterator[Any]:
        return iter(self.compiled.finditer(text))


def _options(ignorecase: bool) -> re2.Options:
    opts = re2.Options()
    opts.log_errors = False  # RE2 would print every rejected pattern to stderr
    opts.case_sensitive = not ignorecase
    return opts


@lru_cache(maxsize=1024)
def case_regex(pattern: str, ignorecase: bool = False) -> CaseRegex:
    """Compile a case regex (cached). Raises re.error for invalid syntax and UnsafePatternError
    (a ValueError) for a pattern that could backtrack catastrophically and has no RE2 form."""
    flags = re.IGNORECASE if ignorecase else 0
    fallback = re.compile(pattern, flags)  # re.error for a malformed pattern, with Python's message
    parsed = _parser.parse(pattern, flags)
    try:
        translated = to_re2(parsed)
        return CaseRegex(pattern, "re2", re2.compile(translated, _options(False)))
    except (Inexpressible, re2.error) as exc:
        why = str(exc) if isinstance(exc, Inexpressible) else "RE2 rejects it"
    danger = risk(parsed)
    if danger:
        raise UnsafePatternError(
            f"regex {pattern!r} could take exponential time ({danger}) and uses {why}, which the "
            "linear-time engine cannot run; remove the nesting or the construct (e.g. \\Z or (?m)$ "
            "instead of $, a class instead of a lookaround)"
        )
    return CaseRegex(pattern, "re", fallback)


# --- Python parse tree -> RE2 syntax --------------------------------------------------------
def to_re2(parsed: Any) -> str:
    """The RE2 pattern with the meaning Python gives `parsed`; Inexpressible when there is none."""
    flags = parsed.state.flags
    names = {index: name for name, index in parsed.state.groupdict.items()}
    return _seq(list(parsed), flags, names)


def _seq(items: list[Any], flags: int, names: dict[int, str]) -> str:
    return "".join(_item(op, av, flags, names) for op, av in items)


def _char(code: int) -> str:
    return f"\\x{{{code:x}}}"


def _case(body: str, flags: int) -> str:
    return f"(?i:{body})" if flags & re.IGNORECASE else body


def _category(cat: Any, flags: int, *, in_class: bool) -> str:
    """The class items (without brackets) of \\d \\w \\s and their negations, Python's Unicode sets."""
    ascii_only = bool(flags & re.ASCII)
    word = "0-9A-Za-z_" if ascii_only else "\\p{L}\\p{N}_"
    digit = "0-9" if ascii_only else "\\p{Nd}"
    spaces = " \t\n\r\x0b\x0c" if ascii_only else _SPACES
    space = "".join(_char(ord(c)) for c in spaces)
    positive = {C.CATEGORY_DIGIT: digit, C.CATEGORY_WORD: word, C.CATEGORY_SPACE: space}
    if cat in positive:
        return positive[cat]
    if cat == C.CATEGORY_NOT_DIGIT and not ascii_only:
        return "\\P{Nd}"
    if cat == C.CATEGORY_NOT_SPACE:
        return _complement(spaces)
    if not in_class:  # \W, or ASCII \D, standing alone: a negated class
        base = {C.CATEGORY_NOT_DIGIT: digit, C.CATEGORY_NOT_WORD: word}[cat]
        return "^" + base
    raise Inexpressible(f"the negated class {cat} inside a character class")


def _complement(chars: str) -> str:
    """Class items for every code point except `chars`."""
    out, start = [], 0
    for code in sorted(map(ord, chars)):
        if code > start:
            out.append(f"{_char(start)}-{_char(code - 1)}" if code - 1 > start else _char(start))
        start = code + 1
    out.append(f"{_char(start)}-{_char(0x10FFFF)}")
    return "".join(out)


def _class(items: list[Any], flags: int) -> str:
    negate = bool(items) and items[0][0] == C.NEGATE
    parts = []
    for op, av in items[1:] if negate else items:
        if op == C.LITERAL:
            parts.append(_char(av))
        elif op == C.RANGE:
            parts.append(f"{_char(av[0])}-{_char(av[1])}")
        elif op == C.CATEGORY:
            alone = len(items) == 1 and not negate
            part = _category(av, flags, in_class=not alone)
            if part.startswith("^"):
                return _case(f"[{part}]", flags)
            parts.append(part)
        else:
            raise Inexpressible(f"the class item {op}")
    return _case(f"[{'^' if negate else ''}{''.join(parts)}]", flags)


_AT = {C.AT_BEGINNING_STRING: "\\A", C.AT_END_STRING: "\\z"}


def _item(op: Any, av: Any, flags: int, names: dict[int, str]) -> str:
    if op == C.LITERAL:
        return _case(_char(av), flags)
    if op == C.NOT_LITERAL:
        return _case(f"[^{_char(av)}]", flags)
    if op == C.ANY:
        return "(?s:.)" if flags & re.DOTALL else "[^\\n]"
    if op == C.IN:
        return _class(av, flags)
    if op == C.CATEGORY:
        return _class([(C.CATEGORY, av)], flags)
    if op == C.BRANCH:
        return "(?:" + "|".join(_seq(list(alt), flags, names) for alt in av[1]) + ")"
    if op == C.SUBPATTERN:
        group, add, delete, sub = av
        inner = _seq(list(sub), (flags | add) & ~delete, names)
        if group is None:
            return f"(?:{inner})"
        return f"(?P<{names[group]}>{inner})" if group in names else f"({inner})"
    if op in (C.MAX_REPEAT, C.MIN_REPEAT):
        lo, hi, sub = av
        if lo > 1000 or (hi != C.MAXREPEAT and hi > 1000):
            raise Inexpressible(f"a repeat count above 1000 ({{{lo},{hi}}})")
        count = f"{{{lo},}}" if hi == C.MAXREPEAT else f"{{{lo},{hi}}}"
        lazy = "?" if op == C.MIN_REPEAT else ""
        return f"(?:{_seq(list(sub), flags, names)}){count}{lazy}"
    if op == C.AT:
        if av in _AT:
            return _AT[av]
        if av == C.AT_BEGINNING:
            return "(?m:^)" if flags & re.MULTILINE else "\\A"
        if av == C.AT_END and flags & re.MULTILINE:
            return "(?m:$)"
        if av in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY) and flags & re.ASCII:
            return "\\b" if av == C.AT_BOUNDARY else "\\B"
        what = {
            C.AT_END: "$ (end, or before a final newline)",
            C.AT_BOUNDARY: "\\b",
            C.AT_NON_BOUNDARY: "\\B",
        }
        raise Inexpressible(what.get(av, str(av)))
    names_of = {
        C.ASSERT: "a lookaround",
        C.ASSERT_NOT: "a negative lookaround",
        C.GROUPREF: "a backreference",
        C.GROUPREF_EXISTS: "a conditional group",
        C.ATOMIC_GROUP: "an atomic group",
        C.POSSESSIVE_REPEAT: "a possessive repeat",
    }
    raise Inexpressible(names_of.get(op, str(op)))


def parse(pattern: str, flags: int = 0) -> Any:
    """Python's parse tree of a pattern (for tests and `risk`)."""
    return _parser.parse(pattern, flags)
