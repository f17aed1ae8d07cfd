"""SQLite store of run records: each conversation is committed as it finishes, so a crash loses
nothing that finished and `--resume` skips it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from usersim.core.record import RunRecord

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY,
    ordinal INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL
);
"""


class RunStore:
    """One run directory's results.sqlite."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.executescript(_SCHEMA)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.commit()

    def get_meta(self) -> dict[str, Any]:
        rows = self._db.execute("SELECT key, value FROM meta").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def set_meta(self, meta: dict[str, Any]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(k, json.dumps(v, ensure_ascii=False)) for k, v in meta.items()],
        )
        self._db.commit()

    def done_ids(self) -> set[str]:
        return {r[0] for r in self._db.execute("SELECT id FROM records")}

    def put(self, record: RunRecord, ordinal: int) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO records (id, ordinal, case_id, status, record) VALUES (?, ?, ?, ?, ?)",
            (record.id, ordinal, record.case_id, record.status, record.model_dump_json()),
        )
        self._db.commit()

    def records(self) -> list[RunRecord]:
        rows = self._db.execute("SELECT record FROM records ORDER BY ordinal, id").fetchall()
        return [RunRecord.model_validate_json(r[0]) for r in rows]

    def close(self) -> None:
        self._db.close()
