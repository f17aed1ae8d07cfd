"""A python environment tool for the final_state tests."""


def transfer(db, from_account: str, to_account: str, amount: float) -> dict:
    """Move money between two accounts."""
    accounts = {a["account_id"]: a for a in db["accounts"]}
    src, dst = accounts[from_account], accounts[to_account]
    if src["balance"] < amount:
        raise ValueError("insufficient funds")
    src["balance"] -= amount
    dst["balance"] += amount
    record = {"id": f"T-{len(db.setdefault('transfers', [])) + 1}", "amount": amount}
    db["transfers"].append(record)
    return record
