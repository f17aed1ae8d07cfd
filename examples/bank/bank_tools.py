"""Acme Bank tools: plain python functions over the conversation's database.

The first parameter `db` is the state (table name -> list of records); the typed parameters after
it become the tool's JSON schema, the docstring its description. Raise an error to refuse: the
agent sees the message and nothing is written.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import Field

EXPRESS_FEE = 15.00
TODAY = date(2026, 4, 7)  # the suite's context.current_date: tools stay deterministic


def _one(db: dict, table: str, key: str, value: str) -> dict:
    for row in db[table]:
        if str(row[key]).lower() == str(value).strip().lower():
            return row
    raise ValueError(f"no {table[:-1]} with {key} {value}")


def verify_customer(
    db, customer_id: str, date_of_birth: Annotated[str, Field(description="YYYY-MM-DD")]
) -> dict:
    """Verify a customer's identity by customer ID and date of birth."""
    customer = _one(db, "customers", "customer_id", customer_id)
    if customer["date_of_birth"] != date_of_birth.strip():
        raise ValueError("identity check failed: the date of birth does not match")
    return {"verified": True, "customer_id": customer["customer_id"], "name": customer["name"]}


def find_customer(db, email: str) -> dict:
    """Find a customer's ID by their email address."""
    customer = _one(db, "customers", "email", email)
    return {"customer_id": customer["customer_id"]}


def get_customer(db, customer_id: str) -> dict:
    """A customer's profile with their accounts and cards."""
    customer = _one(db, "customers", "customer_id", customer_id)
    return {
        **{k: customer[k] for k in ("customer_id", "name", "email", "address")},
        "accounts": [a for a in db["accounts"] if a["customer_id"] == customer["customer_id"]],
        "cards": [c for c in db["cards"] if c["customer_id"] == customer["customer_id"]],
    }


def list_transactions(db, account_id: str) -> list:
    """The transactions of one account, oldest first."""
    _one(db, "accounts", "account_id", account_id)
    return sorted((t for t in db["transactions"] if t["account_id"] == account_id), key=lambda t: t["date"])


def transfer_funds(
    db,
    from_account_id: str,
    to_account_id: str,
    amount: Annotated[float, Field(gt=0, description="Amount in USD.")],
) -> dict:
    """Move money between two accounts of the same customer."""
    src = _one(db, "accounts", "account_id", from_account_id)
    dst = _one(db, "accounts", "account_id", to_account_id)
    if src["customer_id"] != dst["customer_id"]:
        raise ValueError("both accounts must belong to the same customer")
    if amount > src["balance"]:
        raise ValueError(f"insufficient funds: {from_account_id} has {src['balance']:.2f}")
    src["balance"] = round(src["balance"] - amount, 2)
    dst["balance"] = round(dst["balance"] + amount, 2)
    return {"from": src, "to": dst}


def open_dispute(db, transaction_id: str, reason: str) -> dict:
    """Open a dispute for a card transaction."""
    txn = _one(db, "transactions", "transaction_id", transaction_id)
    if any(d["transaction_id"] == txn["transaction_id"] for d in db["disputes"]):
        raise ValueError(f"{transaction_id} is already disputed")
    dispute = {
        "dispute_id": f"D-{len(db['disputes']) + 1}",
        "transaction_id": txn["transaction_id"],
        "amount": txn["amount"],
        "reason": reason,
        "status": "open",
    }
    db["disputes"].append(dispute)
    return dispute


def order_replacement_card(db, card_id: str, shipping: Literal["standard", "express"]) -> dict:
    """Order a replacement for a blocked card. Express shipping costs $15.00, charged to the card's account."""
    card = _one(db, "cards", "card_id", card_id)
    if card["status"] != "blocked":
        raise ValueError("only a blocked card can be replaced; block it first")
    fee = EXPRESS_FEE if shipping == "express" else 0.0
    if fee:
        account = _one(db, "accounts", "account_id", card["account_id"])
        account["balance"] = round(account["balance"] - fee, 2)
    order = {
        "order_id": f"R-{len(db['replacement_orders']) + 1}",
        "card_id": card["card_id"],
        "shipping": shipping,
        "fee": fee,
        "arrives_by": str(TODAY + timedelta(days=2 if shipping == "express" else 7)),
    }
    db["replacement_orders"].append(order)
    return order
