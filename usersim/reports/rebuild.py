"""Rebuild summary.json and report.html of a run folder from its results.jsonl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from usersim.core.record import RunRecord
from usersim.core.yamlfile import read_text_file
from usersim.reports.html import write_report
from usersim.reports.summary import build_summary, write_summary


def read_records(path: Path) -> list[RunRecord]:
    """Parse results.jsonl; a bad line raises ClickException naming `file:line: field: message`."""
    records = []
    text = read_text_file(path, max_bytes=1 << 36)  # not UTF-8, missing, unreadable: file:line problems
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append(RunRecord.model_validate_json(line))
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"]) or "record"
            raise click.ClickException(
                f"{path}:{n}: {field}: {err['msg']}. Was this file written by another usersim version? "
                "Re-run or re-score the run to rewrite it."
            ) from None
    return records


def _meta(run_dir: Path, records: list[RunRecord]) -> dict[str, Any]:
    """The run meta of the previous summary.json, else what the records themselves tell."""
    old = run_dir / "summary.json"
    if old.is_file():
        try:
            meta = json.loads(old.read_text(encoding="utf-8")).get("meta")
            if isinstance(meta, dict) and meta:
                return meta
        except (OSError, ValueError, AttributeError):  # ValueError: not JSON, not UTF-8
            pass  # a damaged summary is exactly what this command rebuilds
    first = records[0] if records else None
    return {
        "run_id": first.run_id if first else run_dir.name,
        "agent": first.agent if first else None,
        "simulator": next((r.simulator for r in records if r.simulator), None),
        "judge_model": first.judge_model if first else None,
        "started_at": min((r.started_at for r in records), default=None),
    }


def rebuild(run_dir: Path) -> dict[str, Any]:
    """Rewrite RUN_DIR/summary.json and RUN_DIR/report.html from results.jsonl (and decay.json if
    present); returns the summary. Call it after writing anything the report reads, e.g. decay.json."""
    run_dir = Path(run_dir)
    results = run_dir / "results.jsonl"
    if not results.is_file():
        raise click.ClickException(
            f"{results} not found. Point RUN_DIR at the --out directory of `usersim run`."
        )
    records = read_records(results)
    summary = build_summary(records, _meta(run_dir, records), run_dir=run_dir)
    write_summary(run_dir / "summary.json", summary)
    write_report(run_dir / "report.html", records, summary)
    return summary
