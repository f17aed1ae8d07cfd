"""constraint: items the agent recommends (found in its reply) satisfy a field constraint in the
sandbox catalog, e.g. every recommended laptop weighs <= 1.5 kg."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from usersim.core.registry import did_you_mean
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.mentions import find_all, match_end
from usersim.judges.checks.normalize import is_quantity, parse_number
from usersim.judges.checks.registry import Outcome, check_registry
from usersim.judges.checks.vacuity import Problems, never_fails
from usersim.lang.polarity import Reader, Reading

if TYPE_CHECKING:
    from usersim.cases.schema import Case

Op = Literal["<=", ">=", "<", ">", "==", "!=", "in", "not_in"]
_NAME_KEYS = ("name", "title", "hotel_name", "flight_no", "product_id", "id")


class ConstraintParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    catalog: str = Field(description="Sandbox catalog: products | hotels | flights | ...")
    field: str = Field(
        description="Item field to test: price, weight_kg, brand, specs.ram (dotted for nested) ..."
    )
    op: Op = Field(description="<=, >=, <, >, ==, !=, in, not_in.")
    value: Any = Field(description="The bound, or a list for in / not_in.")
    scope: Literal["final", "assistant", "first"] = Field(
        default="final", description="Replies to scan for items."
    )

    @field_validator("catalog")
    @classmethod
    def _known_catalog(cls, v: str) -> str:
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
    def _value_shape(self) -> ConstraintParams:
        if self.op in ("in", "not_in") and not isinstance(self.value, list):
            raise ValueError(f"op '{self.op}' needs a list value")
        if self.op in ("<=", ">=", "<", ">") and parse_number(self.value) is None:
            raise ValueError(f"op '{self.op}' needs a number, got {self.value!r}")
        return self

    def case_problems(self, case: Case) -> Problems:
        """A field no catalog item has, and a constraint every item of the catalog satisfies (no
        recommendation can break it)."""
        try:
            from usersim.sandbox.catalog import CATALOGS
        except ImportError:
            return []
        items = [_as_dict(i) for i in CATALOGS[self.catalog]()]
        values = [v for i in items if (v := field_value(i, self.field)) is not None]
        if not values:
            fields = {f for i in items for f in _dotted(i)}
            why = f"no {self.catalog} item has a field '{self.field}'.{did_you_mean(self.field, fields)}"
            return [(("field",), why + f" Fields: {', '.join(sorted(fields)[:30])}")]
        if all(satisfies(v, self.op, self.value) for v in values):
            why = f"every {self.catalog} item has {self.field} {self.op} {self.value}, so no recommendation breaks it"
            return [(("value",), never_fails("constraint", why, "Give the bound the user asked for"))]
        return []


def _dotted(item: dict[str, Any], prefix: str = "") -> list[str]:
    """Field names of an item, nested ones dotted (specs.ram)."""
    out: list[str] = []
    for k, v in item.items():
        out.append(prefix + k)
        if isinstance(v, dict):
            out += _dotted(v, prefix + k + ".")
    return out


def _as_dict(item: Any) -> dict[str, Any]:
    if isinstance(item, dict):
        return item
    if hasattr(item, "model_dump"):
        return item.model_dump()
    return dict(vars(item))


def field_value(item: dict[str, Any], field: str) -> Any:
    """item[field], following dots into nested mappings (specs.ram); None when absent."""
    value: Any = item
    for part in field.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _label(item: dict[str, Any]) -> str:
    return next((str(item[k]) for k in _NAME_KEYS if item.get(k)), "item")


def _same(a: Any, b: Any) -> bool:
    if is_quantity(a) and is_quantity(b):
        return parse_number(a) == parse_number(b)
    return str(a).strip().casefold() == str(b).strip().casefold()


def satisfies(actual: Any, op: str, value: Any) -> bool:
    """Whether a catalog field value satisfies `op value` (numbers parsed with units)."""
    if op in ("in", "not_in"):
        inside = any(_same(actual, v) for v in value)
        return inside if op == "in" else not inside
    if op in ("==", "!="):
        eq = _same(actual, value)
        return eq if op == "==" else not eq
    a, b = parse_number(actual), parse_number(value)
    if a is None or b is None:
        return False
    return {"<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b}[op]


def _lookup(catalog: str, text: str) -> list[Any]:
    from usersim.sandbox.catalog import lookup_items  # the sandbox owns the fixture catalogs

    return list(lookup_items(catalog, text))


def _names(item: dict[str, Any]) -> list[str]:
    names = [item.get(k) for k in ("flight_no", "community_name", "name", "id")]
    return [str(n) for n in [*names, *(item.get("aliases") or [])] if n]


def _spans(item: dict[str, Any], text: str) -> list[tuple[int, int]]:
    """Spans of an item's names in text, longest first; a name inside a longer one found there
    ("XPS 13" in "Dell XPS 13") is the same mention, read once."""
    found = sorted(
        ((o, match_end(text, o, n)) for n in _names(item) for o in find_all(n, text)),
        key=lambda s: s[0] - s[1],
    )
    out: list[tuple[int, int]] = []
    for a, b in found:
        if not any(x <= a and b <= y for x, y in out):
            out.append((a, b))
    return sorted(out)


def _key(item: dict[str, Any]) -> str:
    return _label(item) + "\x00" + str(item.get("id", ""))


def recommended_items(catalog: str, text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(recommended, excluded) catalog items of a reply (see `read_items`); items read only
    unsurely count as recommended here."""
    rec, excluded, doubtful = read_items(catalog, text)
    return rec + [i for i, _ in doubtful], excluded


def read_items(
    catalog: str, text: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[dict[str, Any], Reading]]]:
    """(recommended, excluded, doubtful) catalog items of a reply, by how their mentions stand
    (lang.polarity): recommended when some mention surely stands ("推荐华为 MateBook 14", a plain
    list row), excluded when every mention is surely excluded, rejected or negated ("我排除了
    MacBook Air", "MacBook Pro 14 超出预算", a ❌ row, items under "已排除："), and so when every
    mention is surely set aside otherwise: the standard of a comparison ("比 Redmi Note 13 续航更好"),
    a question about what the user meant, a hypothetical the reply turns away from; doubtful
    otherwise (conflicting cues, an open hypothetical "如果您能接受苹果…", an offer in a question)."""
    reader = Reader(text)
    named: dict[str, dict[str, Any]] = {}
    readings: dict[str, list[Reading]] = {}
    for c in reader.clauses:  # clause by clause: a name glued to the next line's text still matches
        for item in (_as_dict(i) for i in _lookup(catalog, c.text)):
            key = _key(item)
            named.setdefault(key, item)
            for a, b in _spans(item, c.text) or [(0, 1)]:
                readings.setdefault(key, []).append(reader.at(c.start + a, c.start + b))
    for item in (_as_dict(i) for i in _lookup(catalog, text)):
        # an item named across a clause cut (never seen clause by clause) counts as recommended
        if _key(item) not in named:
            named[_key(item)] = item
            readings[_key(item)] = [Reading("neutral", "none")]
    rec, excluded, doubtful = [], [], []
    for key, item in named.items():
        rs = readings[key]
        if any(r.put_forward for r in rs):
            rec.append(item)
        elif all(r.set_aside for r in rs):
            excluded.append(item)
        else:
            doubtful.append((item, next(r for r in rs if not r.set_aside)))
    return rec, excluded, doubtful


@check_registry.register("constraint", ConstraintParams)
def constraint(params: ConstraintParams, ctx: CheckContext) -> Outcome:
    """Every catalog item the reply recommends satisfies the field constraint (items it names only
    to exclude or reject do not count)."""
    texts = ctx.texts(params.scope)
    if not texts:
        return Outcome(False, f"no assistant reply in scope '{params.scope}'")
    text = "\n".join(t for _, t in texts)
    try:
        items, excluded, doubtful = read_items(params.catalog, text)
    except ImportError:
        return Outcome(
            None, "cannot look up recommended items: sandbox.catalog is not available in this build"
        )
    except (KeyError, ValueError) as exc:
        return Outcome(
            None, f"catalog lookup failed for '{params.catalog}': {exc.args[0] if exc.args else exc}"
        )
    rule = f"{params.field} {params.op} {params.value}"
    cues = [c.describe() for i in excluded for c in _cues_for(text, i)]
    dropped = (
        f"not counted (named as excluded/rejected): {', '.join(_label(i) for i in excluded)}"
        if excluded
        else ""
    )
    evidence = texts[-1][0]
    unsure_bad = [
        (i, r)
        for i, r in doubtful
        if (v := field_value(i, params.field)) is not None and not satisfies(v, params.op, params.value)
    ]
    if not items:
        what = f"no recommended {params.catalog} item from the catalog found in the reply"
        if unsure_bad:
            return _unsure(what, rule, unsure_bad, params.field, evidence)
        return Outcome(
            None, f"{what}; cannot check {rule}" + (f"; {dropped}" if dropped else ""), cues=cues or None
        )
    good, bad, unknown = [], [], []
    for item in items:
        value = field_value(item, params.field)
        if value is None:
            unknown.append(_label(item))
        elif satisfies(value, params.op, params.value):
            good.append(f"{_label(item)} ({params.field}={value})")
        else:
            bad.append(f"{_label(item)} ({params.field}={value})")
    parts = [f"{len(items)} recommended {params.catalog} item(s) found"]
    if bad:
        parts.append(f"violating {rule}: " + ", ".join(bad))
    if good:
        parts.append("satisfying: " + ", ".join(good))
    if unknown:
        parts.append(f"no {params.field} in catalog for: " + ", ".join(unknown))
    if dropped:
        parts.append(dropped)
    score = round(len(good) / len(items), 4)
    if bad:
        return Outcome(False, "; ".join(parts), score=score, evidence_turn=evidence, cues=cues or None)
    if unsure_bad:
        return _unsure("; ".join(parts), rule, unsure_bad, params.field, evidence)
    if not good:
        return Outcome(None, "; ".join(parts), evidence_turn=evidence, cues=cues or None)
    return Outcome(True, "; ".join(parts), score=score, evidence_turn=evidence, cues=cues or None)


def _unsure(
    found: str, rule: str, doubtful: list[tuple[dict[str, Any], Reading]], field: str, evidence: int
) -> Outcome:
    names = ", ".join(
        f"{_label(i)} ({field}={field_value(i, field)}, read {r.polarity})" for i, r in doubtful
    )
    cues = [c.describe() for _, r in doubtful for c in r.cues]
    return Outcome.unsure(
        f"{found}; unsure whether these are recommended (they would violate {rule}): {names}",
        cues=cues or None,
        evidence_turn=evidence,
    )


def _cues_for(text: str, item: dict[str, Any]) -> list[Any]:
    """The cues that excluded an item (its first mention's reading)."""
    reader = Reader(text)
    for n in _names(item):
        for o in find_all(n, text):
            return list(reader.at(o, o + len(n)).cues)
    return []
