"""constraint: items the agent recommends (found in its reply) satisfy a field constraint in the
sandbox catalog, e.g. every recommended laptop weighs <= 1.5 kg."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from usersim.core.registry import did_you_mean
from usersim.judges.checks.context import CheckContext
from usersim.judges.checks.mentions import EXCLUSION, Negations, find_all
from usersim.judges.checks.normalize import is_quantity, parse_number
from usersim.judges.checks.registry import Outcome, check_registry

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


def _key(item: dict[str, Any]) -> str:
    return _label(item) + "\x00" + str(item.get("id", ""))


def recommended_items(catalog: str, text: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(recommended, excluded) catalog items of a reply. An item counts as recommended when at
    least one of its mentions is outside an exclusion/negation context ("我排除了 MacBook Air",
    "Redmi Note 13 和 OPPO A3 已剔除", "不推荐：…"); an item only ever mentioned so is excluded."""
    neg = Negations(text, EXCLUSION)
    named: dict[str, dict[str, Any]] = {}
    affirmed: set[str] = set()
    for c in neg.clauses:  # clause by clause: a name glued to the next line's text still matches
        seg = text[c.start : c.end]
        for item in (_as_dict(i) for i in _lookup(catalog, seg)):
            named.setdefault(_key(item), item)
            offsets = [o for n in _names(item) for o in find_all(n, seg)] or [0]
            if any(not neg.negated(c.start + o) for o in offsets):
                affirmed.add(_key(item))
    for item in (_as_dict(i) for i in _lookup(catalog, text)):
        # an item named across a clause cut (never seen clause by clause) counts as recommended
        if _key(item) not in named:
            named[_key(item)] = item
            affirmed.add(_key(item))
    rec = [i for k, i in named.items() if k in affirmed]
    return rec, [i for k, i in named.items() if k not in affirmed]


@check_registry.register("constraint", ConstraintParams)
def constraint(params: ConstraintParams, ctx: CheckContext) -> Outcome:
    """Every catalog item the reply recommends satisfies the field constraint (items it names only
    to exclude or reject do not count)."""
    texts = ctx.texts(params.scope)
    if not texts:
        return Outcome(False, f"no assistant reply in scope '{params.scope}'")
    text = "\n".join(t for _, t in texts)
    try:
        items, excluded = recommended_items(params.catalog, text)
    except ImportError:
        return Outcome(
            None, "cannot look up recommended items: sandbox.catalog is not available in this build"
        )
    except (KeyError, ValueError) as exc:
        return Outcome(
            None, f"catalog lookup failed for '{params.catalog}': {exc.args[0] if exc.args else exc}"
        )
    rule = f"{params.field} {params.op} {params.value}"
    dropped = (
        f"not counted (named as excluded/rejected): {', '.join(_label(i) for i in excluded)}"
        if excluded
        else ""
    )
    if not items:
        what = f"no recommended {params.catalog} item from the catalog found in the reply"
        return Outcome(None, f"{what}; cannot check {rule}" + (f"; {dropped}" if dropped else ""))
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
        return Outcome(False, "; ".join(parts), score=score, evidence_turn=texts[-1][0])
    if not good:
        return Outcome(None, "; ".join(parts), evidence_turn=texts[-1][0])
    return Outcome(True, "; ".join(parts), score=score, evidence_turn=texts[-1][0])
