"""Northwind Mobile tools, with one deliberate bug: get_line reads the column `plan`, which the
lines table does not have (it is `plan_id`), so every call raises KeyError('plan')."""

from __future__ import annotations


class Refused(Exception):
    """A refusal of this domain: the agent sees the message (a class defined in the tools file)."""


def _line(db, line_id: str) -> dict:
    for row in db["lines"]:
        if row["line_id"] == line_id.strip().upper():
            return row
    raise ValueError(f"no line {line_id}")


def get_line(db, line_id: str) -> dict:
    """A line with the name of its plan."""
    line = _line(db, line_id)
    plan = next(p for p in db["plans"] if p["plan_id"] == line["plan"])  # the bug: it is plan_id
    return {**line, "plan_name": plan["name"]}


def change_plan(db, line_id: str, plan_id: str) -> dict:
    """Move a line to another plan."""
    line = _line(db, line_id)
    plans = {p["plan_id"]: p for p in db["plans"]}
    if plan_id not in plans:
        raise ValueError(f"no plan {plan_id}; plans: {', '.join(plans)}")
    line["plan_id"] = plan_id
    line["roaming"] = plans[plan_id]["roaming"]
    return dict(line)


def get_customer(db, customer_id: str) -> dict:
    """A customer's profile (a lookup by the agent's own ID: a missing one is the agent's error)."""
    customers = {c["customer_id"]: c for c in db["customers"]}
    return dict(customers[customer_id])


def add_credit(db, customer_id: str, amount: float) -> dict:
    """Credit a customer's bill (at most $20)."""
    if amount > 20:
        raise Refused(f"credits are at most $20, asked {amount}")
    credit = {"credit_id": f"CR-{len(db['credits']) + 1}", "customer_id": customer_id, "amount": amount}
    db["credits"].append(credit)
    return credit


def set_flag(db, line_id: str, flag: str) -> dict:
    """Turn a flag of a line on (the field is named by the argument: validation cannot see it)."""
    line = _line(db, line_id)
    line[flag] = True
    return dict(line)
