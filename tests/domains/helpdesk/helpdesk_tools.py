"""Contoso IT helpdesk tools over the conversation's database (a test domain for usersim)."""

from __future__ import annotations


def _one(db: dict, table: str, key: str, value: str) -> dict:
    for row in db[table]:
        if str(row[key]).lower() == str(value).strip().lower():
            return row
    raise ValueError(f"no {table[:-1]} with {key} {value}")


def lookup_employee(db, employee_id: str) -> dict:
    """An employee's record with the laptops assigned to them."""
    emp = _one(db, "employees", "employee_id", employee_id)
    laptops = [
        {k: lp[k] for k in ("laptop_id", "model", "status")}
        for lp in db["laptops"]
        if lp["owner"] == emp["employee_id"]
    ]
    return {"employee_id": emp["employee_id"], "name": emp["name"], "laptops": laptops}


def open_ticket(db, employee_id: str, laptop_id: str, issue: str, callback_phone: str) -> dict:
    """Open a repair ticket for one of the employee's laptops."""
    laptop = _one(db, "laptops", "laptop_id", laptop_id)
    if laptop["owner"] != employee_id:
        raise ValueError(f"laptop {laptop_id} is not assigned to {employee_id}")
    ticket = {
        "ticket_id": f"T-{len(db['tickets']) + 1:03d}",
        "employee_id": employee_id,
        "laptop_id": laptop_id,
        "issue": issue,
        "callback_phone": callback_phone.strip(),
    }
    db["tickets"].append(ticket)
    laptop["status"] = "in_repair"
    return ticket


def ship_replacement(db, employee_id: str, laptop_id: str, deliver_to: str) -> dict:
    """Ship a replacement for a laptop in repair to an address."""
    laptop = _one(db, "laptops", "laptop_id", laptop_id)
    if laptop["status"] != "in_repair":
        raise ValueError(f"laptop {laptop_id} has no open repair ticket")
    shipment = {
        "employee_id": employee_id,
        "laptop_id": laptop_id,
        "deliver_to": deliver_to.strip().rstrip("."),
    }
    db["shipments"].append(shipment)
    return {**shipment, "arrives": "tomorrow before noon"}
