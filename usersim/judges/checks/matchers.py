"""Argument matchers of `tool_called.args` and `final_state` fields: a plain value (exact typed
equality) or one operator.

booking_id: 3RK2T9                  # exact: trimmed and case-folded text ("3rk2t9 " matches, "3RK2T9X" does not)
cabin: economy                      # exact: "Economy " matches, "basic_economy" does not
amount: 1628                        # numbers and money by value: "$1,628.00" and "¥1,628" match; "14 bags" never matches 4
departure_date: 2026-06-15          # dates by value; relative ones (明天, 下周五, 6 月中旬) resolve against
                                    # context.current_date and a range accepts any day inside it
origin: {place: 上海}               # place: the city or any of its airports (上海 / Shanghai / PVG / SHA / 浦东);
                                    # {place: PVG} accepts PVG or the city, not another airport (SHA)
destination: {any_of: [大阪, 京都]}  # one of these (each plain = exact, or an operator)
query: {contains: 签证}              # substring, only when asked for
check_in: {date_between: [2026-07-05, 7 月 6 号]}
return_date: {present: true}       # / {absent: true}
max_price: {lte: 8000}             # / {gte: n}
item_ids: {equals: [A1, B2]}       # exactly this list (order matters) / this object (same keys)
item_ids: {unordered: [B2, A1]}    # the same elements in any order
item_ids: {subset: [A1]}           # every listed element (or key: value of an object) is there
items: {each: {contains: shirt}}   # a non-empty list whose every element matches the inner matcher
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from usersim.core.registry import did_you_mean
from usersim.judges.checks.equality import known_place, same_place, text_key, values_equal
from usersim.judges.checks.normalize import parse_number, resolve_date

OPERATORS = (
    "any_of",
    "contains",
    "place",
    "date_between",
    "present",
    "absent",
    "gte",
    "lte",
    "equals",
    "unordered",
    "subset",
    "each",
)


def is_operator(value: Any) -> bool:
    """A one-key mapping whose key is a matcher operator (anything else is a literal value)."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in OPERATORS


def validate_matcher(matcher: Any, where: str) -> None:
    """Raise ValueError naming `where` when a matcher is malformed."""
    if isinstance(matcher, dict):
        if len(matcher) != 1:
            raise ValueError(
                f"{where}: a matcher mapping has exactly one operator ({', '.join(OPERATORS)}), got {sorted(matcher)}"
            )
        op, arg = next(iter(matcher.items()))
        if op not in OPERATORS:
            raise ValueError(
                f"{where}: unknown matcher '{op}'.{did_you_mean(op, set(OPERATORS))} Available: {', '.join(OPERATORS)}"
            )
        if op == "any_of" and not (isinstance(arg, list) and arg):
            raise ValueError(f"{where}: any_of needs a non-empty list of values")
        if op == "any_of":
            for i, item in enumerate(arg):  # a literal object / list is one acceptable value
                if is_operator(item) or not isinstance(item, (dict, list)):
                    validate_matcher(item, f"{where}.any_of[{i}]")
        if op in ("unordered",) and not isinstance(arg, list):
            raise ValueError(f"{where}: {op} needs a list of values")
        if op == "subset" and not isinstance(arg, (list, dict)):
            raise ValueError(f"{where}: subset needs a list of values or a mapping of fields")
        if op == "each":
            validate_matcher(arg, f"{where}.each")
        if op == "contains" and not isinstance(arg, str):
            raise ValueError(f"{where}: contains needs a string")
        if op == "contains" and not "".join(arg.split()):
            raise ValueError(
                f"{where}: {{contains: {arg!r}}} is in every value, so it accepts anything; write the "
                "text the value must contain, or {present: true} if any value will do"
            )
        if op == "place" and not (isinstance(arg, str) and known_place(arg)):
            raise ValueError(
                f"{where}: place needs a city, airport or sight the place data knows (上海, PVG, 浦东机场, "
                f"故宫), got {arg!r}; for any other value write it plain (exact) or {{contains: ...}}"
            )
        if op == "date_between":
            if not (isinstance(arg, list) and len(arg) == 2):
                raise ValueError(f"{where}: date_between needs [from, to]")
            for x in arg:
                if resolve_date(str(x), date(2026, 1, 1)) is None:
                    raise ValueError(
                        f"{where}: date_between bound '{x}' is not a date (use YYYY-MM-DD, 明天, 下周五, 6 月中旬 ...)"
                    )
        if op in ("present", "absent") and arg is not True:
            raise ValueError(f"{where}: write {{{op}: true}}")
        if op in ("gte", "lte") and parse_number(arg) is None:
            raise ValueError(f"{where}: {op} needs a number, got {arg!r}")
    elif isinstance(matcher, list):
        # ValueError, not TypeError: the case loader reports ValueErrors as file:line problems.
        raise ValueError(  # noqa: TRY004
            f"{where}: a list is ambiguous; write {{equals: [...]}} (exactly this list), {{unordered: [...]}} "
            "(same elements, any order), {subset: [...]} (at least these) or {any_of: [...]} (one of these values)"
        )


def match(matcher: Any, present: bool, actual: Any, today: date | None) -> bool:
    """Whether an argument value (`present` = the key was in the call) satisfies the matcher."""
    if isinstance(matcher, dict):
        op, arg = next(iter(matcher.items()))
        if op == "present":
            return present and actual not in (None, "")
        if op == "absent":
            return not present or actual in (None, "")
        if not present:
            return False
        if op == "any_of":
            return any(
                values_equal(m, actual, today)
                if isinstance(m, (dict, list)) and not is_operator(m)
                else match(m, present, actual, today)
                for m in arg
            )
        if op == "contains":
            return _contains(arg, actual)
        if op == "place":
            return same_place(arg, actual)
        if op == "equals":
            return values_equal(arg, actual, today)
        if op == "unordered":
            return isinstance(actual, list) and _same_multiset(arg, actual, today)
        if op == "subset":
            if isinstance(arg, dict):
                return isinstance(actual, dict) and all(
                    k in actual and values_equal(v, actual[k], today) for k, v in arg.items()
                )
            pool = list(actual) if isinstance(actual, list) else [actual]
            return _same_multiset(arg, pool, today, partial=True)
        if op == "each":
            return (
                isinstance(actual, list) and bool(actual) and all(match(arg, True, a, today) for a in actual)
            )
        if op == "date_between":
            lo, hi = resolve_date(str(arg[0]), today), resolve_date(str(arg[1]), today)
            got = resolve_date(str(actual), today)
            return bool(lo and hi and got) and lo[0] <= got[0] and got[1] <= hi[1]  # type: ignore[index]
        number = parse_number(actual)
        if number is None:
            return False
        bound = parse_number(arg)
        return number >= bound if op == "gte" else number <= bound  # type: ignore[operator]
    return present and values_equal(matcher, actual, today)


def describe(matcher: Any) -> str:
    """Compact text of a matcher for reasons: 上海, any_of(大阪|京都), <=8000."""
    if isinstance(matcher, dict):
        op, arg = next(iter(matcher.items()))
        return {
            "any_of": lambda: "any_of(" + "|".join(describe(a) for a in arg) + ")",
            "contains": lambda: f"contains '{arg}'",
            "place": lambda: f"place {arg}",
            "date_between": lambda: f"between {arg[0]} and {arg[1]}",
            "present": lambda: "present",
            "absent": lambda: "absent",
            "gte": lambda: f">={arg}",
            "lte": lambda: f"<={arg}",
            "equals": lambda: f"equals {_json(arg)}",
            "unordered": lambda: f"unordered {_json(arg)}",
            "subset": lambda: f"subset {_json(arg)}",
            "each": lambda: f"each({describe(arg)})",
        }[op]()
    return str(matcher)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _same_multiset(
    expected: list[Any], actual: list[Any], today: date | None, *, partial: bool = False
) -> bool:
    """Every expected element pairs with a distinct equal actual element (and, unless partial,
    nothing is left over)."""
    if not partial and len(expected) != len(actual):
        return False
    left = list(actual)
    for e in expected:
        hit = next((i for i, a in enumerate(left) if values_equal(e, a, today)), None)
        if hit is None:
            return False
        left.pop(hit)
    return True


def _contains(text: str, actual: Any) -> bool:
    """Substring of a text value; for a list or an object, of one of its (nested) values, never of
    the Python repr (so a key name or a bracket is no hit)."""
    if isinstance(actual, list):
        return any(_contains(text, a) for a in actual)
    if isinstance(actual, dict):
        return any(_contains(text, v) for v in actual.values())
    return actual is not None and "".join(text_key(text).split()) in "".join(text_key(actual).split())
