"""Python tools for the write-inference tests: reads that build fresh values, writes through
helpers and records taken from the state, and a declared marker."""

from __future__ import annotations


def _row(db, key):
    return next(r for r in db["items"] if r["id"] == key)


def _touch(record):
    record["seen"] = True


def list_items(db, kind: str) -> list:
    """A read that builds its own list."""
    out = []
    for r in db["items"]:
        if r["kind"] == kind:
            out.append(dict(r))
    out.sort(key=lambda r: r["id"])
    return out


def rename(db, key: str, name: str) -> dict:
    """A write through a record taken from the state."""
    row = _row(db, key)
    row["name"] = name
    return row


def mark_seen(db, key: str) -> dict:
    """A write through a helper of the same module."""
    row = _row(db, key)
    _touch(row)
    return row


def add(db, key: str) -> dict:
    """A write that appends to a table."""
    db["items"].append({"id": key, "kind": "new", "name": key})
    return {"id": key}


def audit(db, key: str) -> dict:
    """Declared a read: logs to a side table the test does not count (the marker overrides)."""
    db.setdefault("log", []).append(key)
    return {"ok": True}


audit.writes = False  # type: ignore[attr-defined]
