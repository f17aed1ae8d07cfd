"""What a run leaves behind: results.jsonl, summary.json, report.html, and a progress bar meanwhile."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from usersim.core.record import RunRecord
from usersim.graphs.records_view import StoredRecords
from usersim.graphs.store import RunStore


class Finished(NamedTuple):
    """A conversation as it reaches the runner to be stored: its place in the plan, its record and,
    from a Ray worker, the record's JSON as the worker wrote it and its transcript section for
    report.html (graphs.ray_worker), which the runner then need not make again."""

    ordinal: int
    record: RunRecord
    text: str | None = None
    section: str | None = None


def write_outputs(
    out_dir: Path,
    source: RunStore | list[RunRecord],
    meta: dict[str, Any],
    *,
    parsed: list[RunRecord] | None = None,
    kept: HeldRecords | None = None,
) -> StoredRecords:
    """results.jsonl in plan order (rewritten from the store), summary.json and report.html, each
    streamed from the store: memory holds one record at a time plus the summary's small per-record
    view and the report's shown transcripts (reports.html.TRANSCRIPT_LIMIT), however long the run.
    `source` may also be the records in plan order (a rescore has them in hand); `parsed`, the
    store's records as parsed from it, in plan order, when the caller holds them already (the
    re-check does); `kept`, what the runner kept of the records as they were stored (the records of
    a small run and their transcript sections, see HeldRecords).

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
    if held is None and kept is not None:
        held = kept.records(briefs)  # every stored record as it was stored: none parsed again
    if held is None and len(briefs) <= TRANSCRIPT_LIMIT:
        held = store.records()  # the report embeds them all: parsed once for both
    summary = build_summary(iter(held) if held is not None else store.iter_records(), meta, run_dir=out_dir)
    (out_dir / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    shown = shown_ids(briefs, summary)
    if held is not None:
        picked = held if shown is None else [r for r in held if r.id in shown]
    else:
        picked = list(store.iter_records(ids=shown)) if shown is not None else store.records()
    sections = kept.sections(picked) if kept is not None else None
    write_report(out_dir / "report.html", picked, summary, total=len(briefs), sections=sections)
    # the records in hand go with the view when they are few: those the runner kept as it stored
    # them (HOLD_RECORDS, HOLD_CHARS), or a run the report embeds whole; never a long run's
    few = (kept is not None and kept.on) or (shown is None and len(briefs) <= TRANSCRIPT_LIMIT)
    return StoredRecords(results, briefs, held if held is not None and few else None)


# A run of at most this many conversations keeps its records as they are stored (HeldRecords), and
# at most this much of their JSON: a bigger run streams its outputs from the store, as it always did.
HOLD_RECORDS = 512
HOLD_CHARS = 16_000_000


class HeldRecords:
    """The records of a small run, kept as the writer thread stores them, each with its transcript
    section for report.html rendered then (reports.html_transcript.section): at the end the
    re-check, the summary and the report read them in hand instead of parsing the store again
    (about half a millisecond a record), and the page only numbers the sections made while the
    other conversations waited on their models (1-2 ms a record, after the last conversation).

    Kept only when the run has at most HOLD_RECORDS conversations to play and nothing stored
    before (a resumed run's earlier records are not in hand), and while their JSON stays under
    HOLD_CHARS; past that everything kept is dropped and the outputs stream from the store. A
    section is used only for the very record held: a record the re-check changed is parsed again
    (graphs.runner._recheck) and rendered anew."""

    def __init__(self, to_play: int, stored_before: int = 0) -> None:
        self.on = 0 < to_play <= HOLD_RECORDS and not stored_before
        self._held: dict[str, tuple[RunRecord, str]] = {}
        self._chars = 0

    def add(self, record: RunRecord, text: str, section: str | None = None) -> None:
        """Keep a record just stored (`text`: its JSON as stored; `section`: its transcript section
        when it comes made, from a Ray worker)."""
        if not self.on:
            return
        self._chars += len(text)
        if self._chars > HOLD_CHARS:
            self._drop()
            return
        if section is None:
            from usersim.reports.html_transcript import section as render

            try:
                section = render(record)
            except Exception:  # noqa: BLE001 - the report renders it at the end and says what broke
                self._drop()
                return
        self._held[record.id] = (record, section)

    def _drop(self) -> None:
        self.on = False
        self._held.clear()

    def records(self, briefs: list[tuple[str, str, str]]) -> list[RunRecord] | None:
        """Every stored record in plan order (`briefs`: the store's (id, case_id, status) in plan
        order), or None when some stored record is not held."""
        if not self.on or len(briefs) != len(self._held):
            return None
        out = []
        for rid, _, _ in briefs:
            hit = self._held.get(rid)
            if hit is None:
                return None
            out.append(hit[0])
        return out

    def sections(self, records: list[RunRecord]) -> dict[str, str]:
        """id -> transcript section of each of `records` that is the record held."""
        out = {}
        for r in records:
            hit = self._held.get(r.id)
            if hit is not None and hit[0] is r:
                out[r.id] = hit[1]
        return out


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
