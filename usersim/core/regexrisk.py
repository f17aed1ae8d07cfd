"""Whether a regex can backtrack catastrophically in Python's `re`, read off Python's parse tree.

Conservative: a pattern is safe only when none of these holds anywhere in it (what makes a
backtracking engine try exponentially or high-polynomially many ways to split the same text):
- a repeat inside a repeat, both of variable length: (a+)+, (\\w+\\s?)*, (?:(?=a*)b)+, (aa?)+,
  (a|aa)+ (which Python parses as a(?:|a));
- a repeat over an alternation whose branches can start with the same character: (a|a?b)+, (?:ab|a?c)*;
- two adjacent open-ended repeats over overlapping characters: \\d+\\d+, .*\\s*x.
Character overlap is decided on the literals and range ends both sides name plus a fixed sample
(ASCII, CJK, full-width forms, Unicode spaces), so two classes that share a character are seen to.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]  # noqa: N812 - the parse tree's opcodes
from typing import Any

# An atom of a first-character set: ("lit", code) | ("range", lo, hi) | ("cat", category) |
# ("not", [atoms]) | ("any",)
Atom = tuple[Any, ...]
_CATEGORY_RE = {
    C.CATEGORY_DIGIT: re.compile(r"\d"),
    C.CATEGORY_NOT_DIGIT: re.compile(r"\D"),
    C.CATEGORY_WORD: re.compile(r"\w"),
    C.CATEGORY_NOT_WORD: re.compile(r"\W"),
    C.CATEGORY_SPACE: re.compile(r"\s"),
    C.CATEGORY_NOT_SPACE: re.compile(r"\S"),
}
_SAMPLE = [
    *range(128),
    0xA0,
    0xE9,
    0x3000,
    0x3001,
    0x3002,
    0x4E00,
    0x4E2D,
    0x9FFF,
    0xFF0C,
    0xFF10,
    0xFF21,
    0x2028,
]
_ZERO_WIDTH = (C.AT, C.ASSERT, C.ASSERT_NOT)
_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)


def risk(parsed: Any) -> str | None:
    """What makes the pattern unsafe (a short description with the offending piece), or None."""
    return _walk(list(parsed), inside_repeat=False)


def _variable(av: Any) -> bool:
    lo, hi, _ = av
    return bool(hi != lo)


def _open(av: Any) -> bool:
    return bool(av[1] == C.MAXREPEAT)


def _walk(items: list[Any], inside_repeat: bool) -> str | None:
    for k, (op, av) in enumerate(items):
        if op in _REPEATS and op != C.POSSESSIVE_REPEAT:
            lo, hi, sub = av
            if inside_repeat and _variable(av):
                return "a repeat inside a repeat"
            if hi > 1 and (why := _walk(list(sub), inside_repeat=True)):
                return why
            if hi > 1 and _overlapping_branches(list(sub)):
                return "a repeated alternation whose branches can start with the same character"
            if _open(av) and (nxt := _next_repeat(items, k)) is not None:
                if _overlap(_first(list(sub)), _first(list(nxt[2]))):
                    return "two adjacent open-ended repeats over overlapping characters"
        elif op == C.SUBPATTERN and (why := _walk(list(av[3]), inside_repeat)):
            return why
        elif op == C.BRANCH:
            # Python's parser factors (a|aa) into a(?:|a): an empty branch inside a repeat is an
            # optional piece, as ambiguous as a? there
            if inside_repeat and any(_nullable(list(alt)) for alt in av[1]):
                return "an optional alternative inside a repeat"
            for alt in av[1]:
                if why := _walk(list(alt), inside_repeat):
                    return why
        elif op in (C.ASSERT, C.ASSERT_NOT) and (why := _walk(list(av[1]), inside_repeat)):
            return why
        elif op == C.ATOMIC_GROUP and (why := _walk(list(av), inside_repeat)):
            return why
    return None


def _next_repeat(items: list[Any], k: int) -> Any:
    """The open-ended repeat that follows item k, past zero-width and optional items, or None."""
    for op, av in items[k + 1 :]:
        if op in _ZERO_WIDTH:
            continue
        if op in (C.MAX_REPEAT, C.MIN_REPEAT):
            if _open(av):
                return av
            if av[0] == 0:
                continue
        return None
    return None


def _overlapping_branches(items: list[Any]) -> bool:
    """A BRANCH directly in the repeated body (through groups) with two alternatives that can
    start with the same character."""
    for op, av in items:
        if op == C.SUBPATTERN and _overlapping_branches(list(av[3])):
            return True
        if op == C.BRANCH:
            firsts = [_first(list(alt)) for alt in av[1] if alt]
            for i, a in enumerate(firsts):
                if any(_overlap(a, b) for b in firsts[i + 1 :]):
                    return True
    return False


def _nullable(items: list[Any]) -> bool:
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op in _REPEATS and (av[0] == 0 or _nullable(list(av[2]))):
            continue
        if op == C.SUBPATTERN and _nullable(list(av[3])):
            continue
        if op == C.BRANCH and any(_nullable(list(alt)) for alt in av[1]):
            continue
        return False
    return True


def _first(items: list[Any]) -> list[Atom]:
    """Atoms of the characters a match of `items` can start with (("any",) when unknown)."""
    out: list[Atom] = []
    for op, av in items:
        if op in _ZERO_WIDTH:
            continue
        if op == C.LITERAL:
            return out + [("lit", av)]
        if op == C.NOT_LITERAL:
            return out + [("not", [("lit", av)])]
        if op == C.IN:
            return out + [_class_atom(av)]
        if op == C.CATEGORY:
            return out + [("cat", av)]
        if op in _REPEATS:
            out += _first(list(av[2]))
            if av[0] > 0 and not _nullable(list(av[2])):
                return out
            continue
        if op == C.SUBPATTERN:
            out += _first(list(av[3]))
            if not _nullable(list(av[3])):
                return out
            continue
        if op == C.BRANCH:
            for alt in av[1]:
                out += _first(list(alt))
            if not any(_nullable(list(alt)) for alt in av[1]):
                return out
            continue
        return out + [("any",)]  # ANY, backreferences, anything else: may start with anything
    return out


def _class_atom(items: list[Any]) -> Atom:
    negate = bool(items) and items[0][0] == C.NEGATE
    atoms: list[Atom] = []
    for op, av in items[1:] if negate else items:
        if op == C.LITERAL:
            atoms.append(("lit", av))
        elif op == C.RANGE:
            atoms.append(("range", av[0], av[1]))
        elif op == C.CATEGORY:
            atoms.append(("cat", av))
        else:
            atoms.append(("any",))
    return ("not", atoms) if negate else ("or", atoms)


def _has(atom: Atom, code: int) -> bool:
    kind = atom[0]
    if kind == "lit":
        return bool(code == atom[1])
    if kind == "range":
        return bool(atom[1] <= code <= atom[2])
    if kind == "cat":
        return bool(_CATEGORY_RE[atom[1]].match(chr(code)))
    if kind == "not":
        return not any(_has(a, code) for a in atom[1])
    if kind == "or":
        return any(_has(a, code) for a in atom[1])
    return code != 0x0A  # "any" (a dot)


def _codes(atoms: list[Atom]) -> set[int]:
    """Literals and range ends named in the atoms, with their neighbours."""
    out: set[int] = set()
    for a in atoms:
        if a[0] == "lit":
            out |= {a[1] - 1, a[1], a[1] + 1}
        elif a[0] == "range":
            out |= {a[1] - 1, a[1], a[2], a[2] + 1}
        elif a[0] in ("not", "or"):
            out |= _codes(a[1])
    return {c for c in out if 0 <= c <= 0x10FFFF}


def _overlap(a: list[Atom], b: list[Atom]) -> bool:
    if not a or not b:
        return False
    for code in set(_SAMPLE) | _codes(a) | _codes(b):
        if any(_has(x, code) for x in a) and any(_has(y, code) for y in b):
            return True
    return False
