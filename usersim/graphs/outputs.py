"""What a run leaves behind: results.jsonl, summary.json, report.html, and a progress bar meanwhile."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from usersim.core.record import RunRecord
from usersim.graphs.records_view import StoredRecords
from usersim.graphs.store import RunStore


def write_outputs(
    out_dir: Path,
    source: RunStore | list[RunRecord],
    meta: dict[str, Any],
    *,
    parsed: list[RunRecord] | None = None,
) -> StoredRecords:
    """results.jsonl in plan order (rewritten from the store), summary.json and report.html, each
    streamed from the store: memory holds one record at a time plus the summary's small per-record
    view and the report's shown transcripts (reports.html.TRANSCRIPT_LIMIT), however long the run.
    `source` may also be the records in plan order (a rescore has them in hand); `parsed`, the
    store's records as parsed from it, in plan order, when the caller holds them already (the
    re-check does).

    A run small enough for the report to embed every transcript is parsed once, for the summary
    and the report together (parsing a record costs about as much as building its summary)."""
    from usersim.reports.html import TRANSCRIPT_LIMIT, shown_ids, write_report
    from usersim.reports.summary import build_summary

    store = source if isinstance(source, RunStore) else _InHand(source)

    results = out_dir / "results.jsonl"
    partial = out_dir / "results.jsonl.partial"  # replaced in one step: a crash here keeps the old file
    with partial.open("w", encoding="utf-8") as f:
        for _, text in store.iter_json():
            f.write(text + "\n")
    os.replace(partial, results)
    briefs = store.briefs()
    held = parsed
    if held is None and len(briefs) <= TRANSCRIPT_LIMIT:
        held = store.records()  # the report embeds them all: parsed once for both
    summary = build_summary(iter(held) if held is not None else store.iter_records(), meta, run_dir=out_dir)
    (out_dir / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    shown = shown_ids(briefs, summary)
    if held is not None:
        picked = held if shown is None else [r for r in held if r.id in shown]
    else:
        picked = list(store.iter_records(ids=shown)) if shown is not None else store.records()
    write_report(out_dir / "report.html", picked, summary, total=len(briefs))
    # a small run's records, held for the report, go with the view (never more than the limit)
    small = held is not None and shown is None and len(briefs) <= TRANSCRIPT_LIMIT
    return StoredRecords(results, briefs, held if small else None)


class _InHand:
    """Records in hand, read the way write_outputs reads a RunStore."""

    def __init__(self, records: list[RunRecord]):
        self._records = records

    def iter_json(self) -> Iterator[tuple[str, str]]:
        return ((r.id, r.model_dump_json()) for r in self._records)

    def iter_records(self, ids: set[str] | None = None) -> Iterator[RunRecord]:
        return (r for r in self._records if ids is None or r.id in ids)

    def records(self) -> list[RunRecord]:
        return self._records

    def briefs(self) -> list[tuple[str, str, str]]:
        return [(r.id, r.case_id, r.status) for r in self._records]


class Progress:
    """A rich progress bar on stderr (quiet when disabled or not a terminal)."""

    def __init__(self, total: int, enabled: bool):
        self._bar = None
        if enabled and total:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._bar = Progress(
                TextColumn("[bold]conversations"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[last]}"),
                TimeElapsedColumn(),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("run", total=total, last="")

    def advance(self, record: RunRecord) -> None:
        if self._bar is not None:
            self._bar.update(self._task, advance=1, last=f"{record.case_id}: {record.status}")

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
