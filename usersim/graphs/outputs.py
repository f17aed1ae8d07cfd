"""What a run leaves behind: results.jsonl, summary.json, report.html, and a progress bar meanwhile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from usersim.core.record import RunRecord


def write_outputs(out_dir: Path, records: list[RunRecord], meta: dict[str, Any]) -> None:
    """results.jsonl in plan order (rewritten from the store), summary.json and report.html."""
    from usersim.reports.html import write_report
    from usersim.reports.summary import build_summary

    with (out_dir / "results.jsonl").open("w", encoding="utf-8") as f:
        for r in records:
            f.write(r.model_dump_json() + "\n")
    summary = build_summary(records, meta, run_dir=out_dir)
    (out_dir / "summary.json").write_text(json.dumps(summary, ensure_ascii=False, indent=2), encoding="utf-8")
    write_report(out_dir / "report.html", records, summary)


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
