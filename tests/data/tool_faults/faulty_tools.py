"""One tool that fails the way its `how` argument says, for the refusal-vs-bug table in
tests/sandbox/test_tool_faults.py."""

from __future__ import annotations

from usersim.cases.environment import ToolError as UsersimToolError


class OutOfStock(Exception):
    """This domain's own refusal."""


class ToolError(Exception):  # a domain's own ToolError (any class of that name)
    pass


def act(db, how: str, item_id: str = "I-1") -> dict:
    """Do something to an item, or fail as told."""
    items = {i["item_id"]: i for i in db["items"]}
    db["items"][0]["touched"] = True  # every failure must roll this back
    if how == "tool_error":
        raise UsersimToolError("the warehouse is closed")
    if how == "named_tool_error":
        raise ToolError("the warehouse is on strike")
    if how == "value_error":
        raise ValueError(f"no item {item_id}")
    if how == "permission":
        raise PermissionError("only managers may do that")
    if how == "own_class":
        raise OutOfStock(f"{item_id} is out of stock")
    if how == "unknown_id":
        return items[item_id]  # KeyError of the agent's own ID: the agent's mistake
    if how == "column_typo":
        return {"price": items["I-1"]["prize"]}  # KeyError('prize'): the tool's bug
    if how == "type_error":
        return {"total": items["I-1"]["price"] + "1"}
    if how == "attribute":
        return {"name": items["I-1"].name}
    if how == "index":
        return db["items"][99]
    if how == "zero":
        return {"ratio": 1 / 0}
    if how == "assert":
        assert item_id.startswith("X"), "ids start with X"
    return {"ok": True}
