"""Zephyr Mobile tools: plain python functions over the conversation's database (first parameter)."""

from __future__ import annotations


def _one(db: dict, table: str, key: str, value: str) -> dict:
    for row in db[table]:
        if str(row[key]).lower() == str(value).strip().lower():
            return row
    raise ValueError(f"no {table[:-1]} with {key} {value}")


def get_customer(db, customer_id: str) -> dict:
    """A customer's profile with their lines (and each line's plan and add-ons)."""
    customer = _one(db, "customers", "customer_id", customer_id)
    lines = []
    for line in db["lines"]:
        if line["customer_id"] == customer["customer_id"]:
            plan = _one(db, "plans", "plan_id", line["plan_id"])
            addons = [a for a in db["addons"] if a["line_id"] == line["line_id"]]
            lines.append({**line, "plan": plan, "addons": addons})
    return {**customer, "lines": lines}


def get_bill(db, line_id: str) -> dict:
    """The latest bill of a line, with its plan and roaming charges."""
    bills = [b for b in db["bills"] if b["line_id"] == line_id]
    if not bills:
        raise ValueError(f"no bill for line {line_id}")
    return max(bills, key=lambda b: b["month"])


def list_plans(db) -> list:
    """Every plan with its monthly price and whether roaming is included."""
    return list(db["plans"])


def credit_account(db, customer_id: str, amount: float, reason: str) -> dict:
    """Credit an amount to a customer's account."""
    _one(db, "customers", "customer_id", customer_id)
    if amount <= 0:
        raise ValueError("the amount must be positive")
    credit = {
        "credit_id": f"CR-{len(db['credits']) + 1}",
        "customer_id": customer_id,
        "amount": amount,
        "reason": reason,
    }
    db["credits"].append(credit)
    return credit


def change_plan(db, line_id: str, plan_id: str) -> dict:
    """Move a line to another plan."""
    line = _one(db, "lines", "line_id", line_id)
    plan = _one(db, "plans", "plan_id", plan_id)
    line["plan_id"] = plan["plan_id"]
    return {"line_id": line["line_id"], "plan_id": plan["plan_id"], "price": plan["price"]}


def cancel_addon(db, addon_id: str) -> dict:
    """Cancel an active add-on."""
    addon = _one(db, "addons", "addon_id", addon_id)
    if addon["status"] != "active":
        raise ValueError(f"add-on {addon_id} is not active")
    addon["status"] = "cancelled"
    return {"addon_id": addon["addon_id"], "status": "cancelled"}
