"""SQLite store of run records: each conversation is committed as it finishes, so a crash loses
nothing that finished and `--resume` skips it.

A run folder has one writer at a time: `run_folder_lock(out)` holds an exclusive `flock` on
OUT/.usersim.lock for the whole command (released by the OS if the process dies, so kill -9 never
leaves a stale lock). `prepare_out_dir` proves the folder is usable before any work starts.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from usersim.core.record import RunRecord

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no locking
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".usersim.lock"


class RunFolderError(ValueError):
    """The run folder cannot be used (not a folder, not writable, busy, corrupt store): one clear line."""


def os_error_line(exc: OSError) -> str:
    """An OSError as one readable line: 'No space left on device: /x/results.jsonl'."""
    what = exc.strerror or str(exc) or type(exc).__name__
    return f"{what}: {exc.filename}" if exc.filename else what


def prepare_out_dir(out: Path) -> None:
    """Create OUT (and its parents) and prove a file can be written in it, before any work starts."""
    try:
        if out.exists() and not out.is_dir():
            raise RunFolderError(f"--out {out} exists and is not a folder; choose a folder path")
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise RunFolderError(f"--out {out} cannot be used as a run folder: {os_error_line(exc)}") from None


class FolderLock:
    """The exclusive writer lock of a run folder (flock on OUT/.usersim.lock, non-blocking)."""

    def __init__(self, out: Path):
        self.out = out
        self._fd: int | None = None

    def acquire(self) -> None:
        if fcntl is None:  # pragma: no cover
            return
        path = self.out / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                return  # a read-only folder: nobody can write there, reading needs no lock
            raise RunFolderError(f"{self.out}: cannot create the lock file: {os_error_line(exc)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise RunFolderError(
                f"{self.out} is in use by another usersim command ({holder}); wait for it to finish "
                "or choose another --out"
            ) from None
        stamp = datetime.now(UTC).isoformat(timespec="seconds")
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} since {stamp}".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def check_out_dir(out: Path) -> None:
    """Refuse an unusable --out before any work starts, without creating anything: an existing OUT
    must be a writable folder; a new one needs its nearest existing parent to be a writable folder."""
    if out.exists():
        if not out.is_dir():
            raise RunFolderError(f"--out {out} exists and is not a folder; choose a folder path")
        prepare_out_dir(out)  # proves writability with a probe file
        return
    parent = out.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise RunFolderError(f"--out {out} cannot be created: {parent} is a file, not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RunFolderError(f"--out {out} cannot be created: {parent} is not writable")


@contextlib.contextmanager
def run_folder_lock(out: Path) -> Iterator[None]:
    """Hold the writer lock of run folder OUT for a block; a second writer gets RunFolderError at once."""
    prepare_out_dir(out)
    lock = FolderLock(out)
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


def check_resume_meta(store_path: Path, old: dict[str, Any], new: dict[str, Any]) -> None:
    """--resume only continues the same run: same cases, agent, simulator, judge, seed and plan."""
    for key in ("case_ids", "agent", "simulator", "judge_model", "seed", "repeats", "lengths", "positions"):
        if key not in old or key not in new or old[key] == new[key]:
            continue
        if key == "case_ids":
            gone = [c for c in old[key] or [] if c not in (new[key] or [])]
            added = [c for c in new[key] or [] if c not in (old[key] or [])]
            diff = f"{len(added)} case(s) not in it ({', '.join(added[:5])}), {len(gone)} missing ({', '.join(gone[:5])})"
            raise RunFolderError(
                f"--resume: {store_path.parent} holds a run of a different suite: {diff}; "
                "select the same cases or use a new --out"
            )
        raise RunFolderError(
            f"--resume: {store_path.parent} was run with {key}={repr(old[key])[:80]}, "
            f"not {repr(new[key])[:80]}; use the same options or a new --out"
        )


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY,
    ordinal INTEGER NOT NULL,
    case_id TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_order ON records (ordinal, id);
"""


class RunStore:
    """One run directory's results.sqlite."""

    def __init__(self, path: Path):
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunFolderError(
                f"{path.parent} cannot be used as a run folder: {os_error_line(exc)}"
            ) from None
        self._lock = FolderLock(path.parent)
        self._lock.acquire()  # one open store per run folder at a time
        try:
            # written from the runner's one writer thread, read back on the caller's
            self._db = sqlite3.connect(path, check_same_thread=False)
        except sqlite3.Error as exc:
            self._lock.release()
            raise self._error(exc) from None
        try:
            self._db.executescript(_SCHEMA)
            self._db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit is in the WAL file before put() returns, so a killed process
            # (SIGKILL) loses nothing committed; only a power cut may lose the last few commits
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.commit()
        except sqlite3.Error as exc:
            self.close()
            raise self._error(exc) from None

    def _error(self, exc: BaseException, row: str | None = None) -> RunFolderError:
        if isinstance(exc, OSError):
            why = os_error_line(exc)
        else:
            why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        where = f"{self.path}" + (f" (record {row[:80]!r})" if row else "")
        return RunFolderError(
            f"{where} is not a usable run store: {why}. Move it aside (e.g. rename it to results.sqlite.bad) "
            "and run again, or choose another --out; results.jsonl in the same folder keeps a copy of the "
            "finished records"
        )

    def get_meta(self) -> dict[str, Any]:
        try:
            rows = self._db.execute("SELECT key, value FROM meta").fetchall()
            return {k: json.loads(v) for k, v in rows}
        except (sqlite3.Error, ValueError) as exc:
            raise self._error(exc) from None

    def set_meta(self, meta: dict[str, Any]) -> None:
        self._db.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(k, json.dumps(v, ensure_ascii=False)) for k, v in meta.items()],
        )
        self._db.commit()

    def done_ids(self) -> set[str]:
        try:
            return {r[0] for r in self._db.execute("SELECT id FROM records")}
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def has_records(self) -> bool:
        """Whether any record is stored (one row read, however large the run)."""
        try:
            return self._db.execute("SELECT 1 FROM records LIMIT 1").fetchone() is not None
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def put(self, record: RunRecord, ordinal: int, text: str | None = None) -> None:
        """Commit one record (`text`: its JSON, if the caller has it already). A full disk or a
        read-only file raises RunFolderError; records committed before stay in the store."""
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO records (id, ordinal, case_id, status, record) VALUES (?, ?, ?, ?, ?)",
                (record.id, ordinal, record.case_id, record.status, text or record.model_dump_json()),
            )
            self._db.commit()
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                self._db.rollback()
            raise RunFolderError(
                f"{self.path}: cannot store record {record.id!r}: {str(exc)[:200]}; the records stored "
                "before it are kept (fix the cause and rerun with --resume)"
            ) from None

    def records(self) -> list[RunRecord]:
        """Every record in plan order, all in memory (the re-check needs them together)."""
        return list(self.iter_records())

    def iter_records(self, ids: set[str] | None = None) -> Iterator[RunRecord]:
        """The records in plan order, parsed one at a time (`ids`: only those)."""
        for rid, blob in self.iter_json(ids):
            try:
                yield RunRecord.model_validate_json(blob)
            except (ValidationError, ValueError) as exc:
                raise self._error(exc, row=str(rid)) from None

    def iter_json(self, ids: set[str] | None = None) -> Iterator[tuple[str, str]]:
        """(id, record JSON) in plan order, streamed from a cursor (`ids`: only those records)."""
        # a cursor of its own, fetched in batches: memory stays one batch whatever the run's size
        try:
            cur = self._db.execute("SELECT id, record FROM records ORDER BY ordinal, id")
            while batch := cur.fetchmany(256):
                for rid, blob in batch:
                    if ids is None or rid in ids:
                        yield rid, blob
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def briefs(self) -> list[tuple[str, str, str]]:
        """(id, case_id, status) of every record in plan order: what the gate and the report's
        choice of transcripts need, without parsing a record."""
        try:
            return self._db.execute("SELECT id, case_id, status FROM records ORDER BY ordinal, id").fetchall()
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def close(self) -> None:
        try:
            self._db.close()
        finally:
            self._lock.release()
