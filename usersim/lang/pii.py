"""Personal data in text: emails, card numbers, IBANs, phone numbers, street addresses and the names
speakers give, found and replaced by stable placeholders.

Phones are found by `phonenumbers` (libphonenumber's metadata: every national format, not a
regex per country); card numbers (Luhn) and IBANs (check digits) are checked by `python-stdnum`.
The kinds, placeholders, candidate patterns and the patterns no library covers are data:
usersim/lang/data/pii.yaml. A `Redactor` gives one value one placeholder (`<EMAIL_1>`, `<PHONE_2>`)
wherever it appears, so text redacted in several places still agrees. With `surrogates` it gives
a well-formed fictional value of the same kind instead (`user1@example.com`, a Luhn-valid test
card, an IBAN with valid check digits, `1 Sample Street, Springfield`: pii.yaml `surrogates`), so
an agent that checks the shape of what it is told still acts on a redacted conversation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import phonenumbers
from stdnum import iban as stdnum_iban
from stdnum import luhn

from usersim.core.yamlfile import load_trusted
from usersim.lang.resources import DATA

_PLACEHOLDER = re.compile(r"<[A-Z]+_\d+>")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Found:
    """One personal value in a text: its kind, span and the key that identifies the value."""

    kind: str
    start: int
    end: int
    key: str


@lru_cache(maxsize=1)
def rules() -> dict[str, Any]:
    """pii.yaml, with its patterns compiled."""
    data: dict[str, Any] = load_trusted((DATA / "pii.yaml").read_text(encoding="utf-8"))
    for kind in data["order"]:
        for part in ("patterns", "candidates", "not_patterns", "shapes"):
            if part in data[kind]:
                data[kind][part] = [re.compile(p) for p in data[kind][part]]
    data["card"]["prefixes"] = re.compile(data["card"]["prefixes"])
    side = data["phone"]["not_next_to"]
    data["phone"]["glued"] = re.compile(f"[{side}]")
    return data


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _cards(text: str) -> list[Found]:
    spec = rules()["card"]
    out = []
    for pat in spec["candidates"]:
        for m in pat.finditer(text):
            digits = _digits(m.group())
            if 13 <= len(digits) <= 19 and spec["prefixes"].match(digits) and luhn.is_valid(digits):
                out.append(Found("card", m.start(), m.end(), digits))
    return out


def _card_shaped(text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for p in rules()["card"]["shapes"] for m in p.finditer(text)]


def _ibans(text: str) -> list[Found]:
    out = []
    for pat in rules()["iban"]["candidates"]:
        for m in pat.finditer(text):
            raw = m.group()
            while len(raw.replace(" ", "")) >= 15:  # drop trailing groups until the check digits agree
                if stdnum_iban.is_valid(raw):
                    out.append(Found("iban", m.start(), m.start() + len(raw), stdnum_iban.compact(raw)))
                    break
                raw = raw[: raw.rstrip().rfind(" ")] if " " in raw.strip() else raw[:-1]
    return out


def _phones(text: str) -> list[Found]:
    spec = rules()["phone"]
    out: list[Found] = []
    for region in spec["regions"]:
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.POSSIBLE):
            if any(f.start < m.end and m.start < f.end for f in out):
                continue  # read in an earlier region already
            if _is_phone(text, m.start, m.end, spec):
                out.append(Found("phone", m.start, m.end, _phone_key(m.raw_string, spec["regions"])))
    return out


def _is_phone(text: str, start: int, end: int, spec: dict[str, Any]) -> bool:
    raw = text[start:end]
    digits = _digits(raw)
    if len(digits) < spec["min_digits"] or any(p.search(raw) for p in spec["not_patterns"]):
        return False
    before, after = text[max(0, start - 2) : start], text[end : end + 2]
    if spec["glued"].fullmatch(before[-1:] or " ") or spec["glued"].fullmatch(after[:1] or " "):
        return False  # part of an id, an amount or a code
    if any(a <= start and end <= b for a, b in _card_shaped(text)):
        return False  # the groups of a card-shaped number that failed Luhn
    if raw.isdigit():  # an unbroken run is an id or an order number unless it is a real number
        lo, hi = spec["unbroken_digits"]
        return lo <= len(digits) <= hi and _valid_key(raw, spec["regions"]) is not None
    return True


def _valid_key(raw: str, regions: list[str]) -> str | None:
    """The E.164 form of `raw` in the first region where it is a valid number, or None."""
    for region in regions:
        try:
            num = phonenumbers.parse(raw, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number(num):
            return phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.E164)
    return None


def _phone_key(raw: str, regions: list[str]) -> str:
    """One key per number however it is written: its E.164 form where it is valid (+44 20 7946
    0958 and 020 7946 0958 agree), else in the first region where it is possible."""
    valid = _valid_key(raw, regions)
    if valid is not None:
        return valid
    for region in regions:
        try:
            num = phonenumbers.parse(raw, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_possible_number(num):
            return phonenumbers.format_number(num, phonenumbers.PhoneNumberFormat.E164)
    return _digits(raw)


def _patterned(kind: str, text: str) -> list[Found]:
    out = []
    for pat in rules()[kind]["patterns"]:
        for m in pat.finditer(text):
            g = 1 if pat.groups else 0
            value = m.group(g).strip()
            if value:
                start = m.start(g) + (len(m.group(g)) - len(m.group(g).lstrip()))
                out.append(Found(kind, start, start + len(value), _fold(value)))
    return out


def _fold(value: str) -> str:
    return " ".join(value.split()).casefold()


_FINDERS = {"card": _cards, "iban": _ibans, "phone": _phones}


def find_pii(text: str, kinds: list[str] | None = None) -> list[Found]:
    """The personal values in `text`, in order, no two overlapping (earlier kinds in pii.yaml's
    `order` win: a card's digits are not also a phone)."""
    taken: list[Found] = []
    for kind in rules()["order"]:
        if kinds is not None and kind not in kinds:
            continue
        found = _FINDERS[kind](text) if kind in _FINDERS else _patterned(kind, text)
        for f in sorted(found, key=lambda f: (f.start, -f.end)):
            if not any(f.start < t.end and t.start < f.end for t in taken):
                if not _PLACEHOLDER.fullmatch(text[f.start : f.end]):
                    taken.append(f)
    return sorted(taken, key=lambda f: f.start)


def mask_pii(text: str) -> tuple[str, dict[str, int]]:
    """(`text` with its contact data, pii.yaml's `contact` kinds, replaced by placeholders, how
    many values of each kind)."""
    r = Redactor(kinds=list(rules()["contact"]))
    return r.redact(text), r.counts()


@dataclass
class Redactor:
    """Replaces personal values with placeholders, the same value by the same placeholder in every
    text it redacts. `learn` first over every text, then `redact`: a name learnt where the speaker
    gives it is replaced wherever it appears."""

    kinds: list[str] | None = None
    table: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, key) -> placeholder
    literals: dict[str, tuple[str, str]] = field(default_factory=dict)  # text -> (kind, key)

    surrogates: bool = False
    issued: set[str] = field(default_factory=set)  # the surrogates given out: never redacted again
    originals: set[str] = field(default_factory=set)  # the values replaced: no surrogate equals one

    def _placeholder(self, kind: str, key: str) -> str:
        if (kind, key) not in self.table:
            n = 1 + sum(1 for k, _ in self.table if k == kind)
            if self.surrogates:
                script = "zh" if _CJK.search(key) else "en"
                value = surrogate(kind, n, script)
                while _fold(value) in self.originals or value in self.issued:
                    n += 100
                    value = surrogate(kind, n, script)
                self.issued.add(value)
            else:
                value = str(rules()["placeholder"]).format(kind=kind.upper(), n=n)
            self.table[(kind, key)] = value
        return self.table[(kind, key)]

    def _given_in(self, text: str) -> set[str]:
        """The surrogates in `text`, whole or cut short before an ellipsis."""
        out = set()
        for value in self.issued:
            if value in text:
                out.add(value)
            if "…" in text:
                out.update(value[:n] + "…" for n in range(3, len(value)) if value[:n] + "…" in text)
        return out

    def _given(self, text: str) -> bool:
        """Whether `text` is already a placeholder or a surrogate this redactor gave."""
        return bool(_PLACEHOLDER.fullmatch(text)) or text in self.issued

    def _key(self, kind: str, text: str) -> str:
        """The key of a whole value of `kind` (a field's value): the finder's when it reads the
        whole text as one value (a phone's E.164 form, a card's digits), else its folded text."""
        if kind in _FINDERS:
            whole = [
                f for f in _FINDERS[kind](text) if text[: f.start].strip() == text[f.end :].strip() == ""
            ]
            if whole:
                return whole[0].key
        return _fold(text)

    def learn(self, text: str, kind: str | None = None) -> None:
        """Remember the values found in `text` (all of it is one `kind` value when given)."""
        if kind is not None:
            if text.strip() and not self._given(text.strip()):
                self._remember(kind, text.strip(), self._key(kind, text))
            return
        for f in find_pii(text, self.kinds):
            if not self._given(text[f.start : f.end]):
                self._remember(f.kind, text[f.start : f.end], f.key)

    def _remember(self, kind: str, raw: str, key: str) -> None:
        self.originals.add(_fold(raw))
        self._placeholder(kind, key)
        if kind in ("name", "address") and len(raw) >= (3 if raw.isascii() else 2):  # wherever they appear
            self.literals.setdefault(raw, (kind, key))
        if kind == "name":  # "Marcus" and "Lee" alone are the same person
            for part in raw.split():
                if len(part) >= 3 and part[:1].isupper():
                    self.literals.setdefault(part, (kind, key))

    def redact(self, text: str, kind: str | None = None) -> str:
        """`text` with every personal value in it replaced by its placeholder (all of it one
        `kind` value when given)."""
        if kind is not None and text.strip() and not self._given(text.strip()):
            self.learn(text, kind)
            return self.table[(kind, self._key(kind, text))]
        # surrogates already in the text (a drafted file redacted once more) are held aside, and so
        # is one a snippet cut short ("IBAN GB45SAMP0000000…": its digits are not a phone)
        held: list[str] = []
        for value in sorted(self._given_in(text), key=len, reverse=True):
            held.append(value)
            text = text.replace(value, f"\ue000{chr(0xE100 + len(held) - 1)}\ue001")
        found = find_pii(text, self.kinds)
        out, last = [], 0
        for f in found:
            self._remember(f.kind, text[f.start : f.end], f.key)
            out += [text[last : f.start], self.table[(f.kind, f.key)]]
            last = f.end
        text = "".join(out) + text[last:]
        for raw in sorted(self.literals, key=len, reverse=True):
            if raw in text:
                # whole words in scripts with spaces; anywhere in Chinese (李明 in 已为李明登记)
                left = r"(?<![A-Za-z0-9])" if raw[:1].isascii() else ""
                right = r"(?![A-Za-z0-9])" if raw[-1:].isascii() else ""
                value = self.table[self.literals[raw]].replace("\\", "\\\\")  # a literal replacement
                text = re.sub(left + re.escape(raw) + right, value, text)
        for i, value in enumerate(held):
            text = text.replace(f"\ue000{chr(0xE100 + i)}\ue001", value)
        return text

    def redact_value(self, value: Any, fields: bool = False, kind: str | None = None) -> Any:
        """A copy of a JSON-like value with every string redacted; with `fields` (a tool's
        arguments and results, state rows) a string under a key pii.yaml's `fields` names is that
        kind whole ({"email": ...}; {"name": ...} beside another personal field)."""
        if isinstance(value, dict):
            kinds = field_kinds(value) if fields else {}
            return {k: self.redact_value(v, fields, kinds.get(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [self.redact_value(v, fields, kind) for v in value]
        if isinstance(value, str):
            return self.redact(value, kind)
        return value

    def learn_value(self, value: Any, fields: bool = False, kind: str | None = None) -> None:
        """`learn` over every string of a JSON-like value (`fields` as in `redact_value`)."""
        if isinstance(value, dict):
            kinds = field_kinds(value) if fields else {}
            for k, v in value.items():
                self.learn_value(v, fields, kinds.get(k))
        elif isinstance(value, list):
            for v in value:
                self.learn_value(v, fields, kind)
        elif isinstance(value, str):
            self.learn(value, kind)

    def counts(self) -> dict[str, int]:
        """How many distinct values of each kind were given a placeholder."""
        out: dict[str, int] = {}
        for kind, _ in self.table:
            out[kind] = out.get(kind, 0) + 1
        return out


def surrogate(kind: str, n: int, script: str = "en") -> str:
    """The `n`th fictional value of `kind` (pii.yaml `surrogates`; an address and a name in the
    script of the value replaced); cards and IBANs get valid check digits, so they read as what
    they stand for."""
    spec = rules()["surrogates"][kind]
    if isinstance(spec, dict):
        spec = spec.get(script, spec["en"])
    if isinstance(spec, list):
        base, lap = str(spec[(n - 1) % len(spec)]), (n - 1) // len(spec)
        if not lap:
            return base
        if script == "zh":
            return base + "甲乙丙丁戊己庚辛"[(lap - 1) % 8]
        first, _, last = base.partition(" ")
        return f"{first} {chr(ord('A') + (lap - 1) % 26)}. {last}"
    template = str(spec)
    if kind == "card":
        body = template.format(n=n)
        digits = body + luhn.calc_check_digit(body)
        return " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))
    if kind == "iban":
        body = template.format(n=n, check="00")
        return body[:2] + stdnum_iban.calc_check_digits(body) + body[4:]
    return template.format(n=n)


def field_kinds(row: dict[Any, Any]) -> dict[Any, str]:
    """The kind each key of a JSON object holds (pii.yaml `fields`): a `name` only beside another
    personal field (a customer's name, not a tool's or a hotel's)."""
    spec = rules()["fields"]
    out: dict[Any, str] = {}
    for key in row:
        k = str(key).lower()
        kind = next((kd for kd, keys in spec["kinds"].items() if k in keys), None)
        if kind is not None:
            out[key] = kind
    person = any(str(k).lower() in spec["person"] for k in row) or any(v != "name" for v in out.values())
    return {k: v for k, v in out.items() if v != "name" or person}


def is_placeholder(text: str) -> bool:
    """Whether `text` is a placeholder a Redactor wrote."""
    return bool(_PLACEHOLDER.fullmatch(text))


PLACEHOLDER = _PLACEHOLDER
