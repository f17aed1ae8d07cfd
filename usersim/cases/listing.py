"""What `usersim cases list` shows of each case, with a per-file cache of it.

Listing validates every case exactly as `usersim validate` and `usersim run` do (a file with
problems is reported and left out), which costs ~7 ms per case and the import of the checks and
tools the cases use. A case that loaded cleanly is remembered in `<cache dir>/case_list.json` with the
blake2b hash of every file its loading read (the case, its `include:` chain, state tables, policy
files) and the folder it was found under; it is listed from there while those files hash the same
and the code that judged it is unchanged: the usersim package files and the folders on sys.path
(an installed or removed plugin changes its site-packages folder) and USERSIM_INCLUDE_PATH, all
stamped into the cache's fingerprint. Never cached: a file with problems (its messages always come
from a fresh validation), a case whose loading imported Python tool code (that code and whatever
it imports decide too), a language folder beside the cases changing the language layer.

The cache directory is USERSIM_CACHE_DIR, else $XDG_CACHE_HOME/usersim (~/.cache/usersim);
USERSIM_NO_CASE_CACHE=1 turns the cache off. Writes are atomic (a temporary file renamed over the
old one), so concurrent listings at worst redo each other's work; an unreadable, corrupt or
unwritable cache is ignored.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from usersim.core.yamlfile import Problem

CACHE_FILE = "case_list.json"
PACKAGE = Path(__file__).resolve().parents[1]  # the usersim package folder
MAX_ENTRIES = 20_000  # beyond it, entries not seen by this listing are dropped
_FORMAT = 1
_OFF = {"1", "true", "yes", "on"}


def cache_file() -> Path | None:
    """Where the listing cache lives, or None when USERSIM_NO_CASE_CACHE turns it off."""
    if os.environ.get("USERSIM_NO_CASE_CACHE", "").strip().lower() in _OFF:
        return None
    base = os.environ.get("USERSIM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "usersim"
    )
    return Path(base) / CACHE_FILE


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_mtime_ns}:{st.st_size}"


def fingerprint() -> str:
    """The code and settings a cached listing depends on: every file of the usersim package (path,
    mtime, size), each sys.path folder's mtime (installing, upgrading or removing a package, a
    plugin or usersim itself, changes its site-packages folder), USERSIM_INCLUDE_PATH and the
    Python version."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{_FORMAT}|{sys.version}|{os.environ.get('USERSIM_INCLUDE_PATH', '')}".encode())
    for folder, dirs, files in os.walk(PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            p = os.path.join(folder, name)
            try:
                h.update(f"{p}={_stamp(Path(p))};".encode())
            except OSError:
                continue
    for entry in sys.path:
        try:
            h.update(f"{entry}@{os.stat(entry or '.').st_mtime_ns};".encode())
        except OSError:
            h.update(f"{entry}@-;".encode())
    return h.hexdigest()


def _hash_file(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.blake2b(f.read(), digest_size=16).hexdigest()
    except OSError:
        return None


class ListCache:
    """The listing cache of one process: read once, written once (`save`) if anything changed."""

    def __init__(self, path: Path | None, stamp: str) -> None:
        self.path = path
        self.stamp = stamp
        self.entries: dict[str, Any] = {}
        self.seen: set[str] = set()
        self.dirty = False
        if path is None:
            return
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return
        if (
            isinstance(data, dict)
            and data.get("fingerprint") == stamp
            and isinstance(data.get("entries"), dict)
        ):
            self.entries = data["entries"]
        else:
            self.dirty = True  # another code version's cache: replaced on save

    @classmethod
    def open(cls) -> ListCache:
        path = cache_file()
        return cls(path, fingerprint() if path is not None else "")

    @staticmethod
    def _key(path: Path, root: Path) -> str:
        return f"{path.resolve()}|{root.resolve()}"

    def get(self, path: Path, root: Path) -> dict[str, Any] | None:
        """The cached row of this case file found under `root`, when every file it read is unchanged."""
        if self.path is None:
            return None
        key = self._key(path, root)
        entry = self.entries.get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("reads"), dict):
            return None
        if any(_hash_file(f) != digest for f, digest in entry["reads"].items()):
            return None
        self.seen.add(key)
        row = entry.get("row")
        return dict(row) if isinstance(row, dict) else None

    def put(self, path: Path, root: Path, reads: dict[str, str], row: dict[str, Any]) -> None:
        if self.path is None or not reads:
            return
        key = self._key(path, root)
        self.entries[key] = {"reads": reads, "row": row}
        self.seen.add(key)
        self.dirty = True

    def save(self) -> None:
        """Write the cache atomically; any OS error leaves it as it was."""
        if self.path is None or not self.dirty:
            return
        entries = self.entries
        if len(entries) > MAX_ENTRIES:
            entries = {k: v for k, v in entries.items() if k in self.seen}
        body = json.dumps({"fingerprint": self.stamp, "entries": entries}, ensure_ascii=False)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".case_list.", dir=self.path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(body)
                os.replace(tmp, self.path)
            except BaseException:
                os.unlink(tmp)
                raise
        except OSError:
            return


def case_row(case: Any) -> dict[str, Any]:
    """One row of `usersim cases list --json`."""
    return {
        "id": case.id,
        "dimension": case.dimension,
        "category": case.category,
        "mode": case.mode,
        "scoring": case.scoring_label,
        "difficulty": case.difficulty,
        "title": case.title,
        "persona": case.persona,
        "long_context": case.long_context is not None,
        "groups": case.skills.groups,
    }


def list_rows(
    paths: list[str | Path] | None = None, *, on_file: Callable[[], None] | None = None
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """(a row per valid case, the problems of the others), as `load_cases_partial` decides them
    (same validation, same messages, duplicate ids reported), cached per file. Raises
    FileNotFoundError for a path that does not exist. `on_file` is called after each file validated
    (not after one served from the cache)."""
    from usersim.cases.loader import _case_files_with_roots, file_kind, language_folders, load_case
    from usersim.core.yamlfile import FileProblems, recording_reads

    problems: list[Problem] = language_folders(paths)
    has_lang = any((Path(p) / "lang").is_dir() for p in paths or [])
    cache = ListCache(None, "") if has_lang else ListCache.open()  # a domain's words: always fresh
    rows: list[dict[str, Any]] = []
    where: dict[str, Path] = {}
    explicit = {Path(p) for p in paths or []}
    for path, root in _case_files_with_roots(paths):
        if path not in explicit and file_kind(path) == "persona":
            continue  # a domain folder holds its personas beside its cases
        row = cache.get(path, root)
        if row is None:
            try:
                with recording_reads() as reads:
                    try:
                        case = load_case(path, root)
                    except FileProblems as exc:
                        problems.extend(exc.problems)
                        continue
            finally:
                if on_file is not None:
                    on_file()
            row = case_row(case)
            if not reads.untracked:
                cache.put(path, root, reads.files, row)
        if row["id"] in where:
            problems.append(
                Problem(str(path), 1, "id", f"duplicate case id '{row['id']}' (also in {where[row['id']]})")
            )
            continue
        where[row["id"]] = path
        rows.append(row)
    cache.save()
    return rows, problems
