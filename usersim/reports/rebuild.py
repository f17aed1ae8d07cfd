"""Rebuild summary.json and report.html of a run folder from its results.jsonl."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from pydantic import ValidationError

from usersim.core.record import RunRecord
from usersim.core.yamlfile import FileProblems, Problem, read_text_file
from usersim.reports.html import shown_ids, write_report
from usersim.reports.summary import build_summary, write_summary


def read_records(path: Path) -> list[RunRecord]:
    """Parse results.jsonl; a bad line raises ClickException naming `file:line: field: message`."""
    return list(iter_records(path))


def iter_records(path: Path) -> Iterator[RunRecord]:
    """The records of results.jsonl one line at a time (memory: one record, whatever the file's
    size). A line that is not UTF-8 raises FileProblems naming `file:line`; a bad record raises
    ClickException naming `file:line: field: message`."""
    path = Path(path)
    if not path.is_file():
        read_text_file(path)  # missing, a folder, a device: the same one-line problem as any file
    offset = 0
    try:
        with path.open("rb") as f:
            for n, raw in enumerate(f, start=1):
                try:
                    line = raw.decode("utf-8-sig" if n == 1 else "utf-8")
                except UnicodeDecodeError as exc:
                    raise FileProblems(
                        [
                            Problem(
                                str(path),
                                n,
                                "",
                                f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at offset {offset + exc.start}; "
                                "save the file as UTF-8",
                            )
                        ]
                    ) from None
                offset += len(raw)
                if line.strip():
                    yield _parse(path, n, line)
    except OSError as exc:
        raise FileProblems(
            [Problem(str(path), 1, "", f"cannot read the file: {exc.strerror or exc}")]
        ) from None


def _parse(path: Path, n: int, line: str) -> RunRecord:
    try:
        return RunRecord.model_validate_json(line)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or "record"
        raise click.ClickException(
            f"{path}:{n}: {field}: {err['msg']}. Was this file written by another usersim version? "
            "Re-run or re-score the run to rewrite it."
        ) from None


def _meta(run_dir: Path, results: Path) -> dict[str, Any]:
    """The run meta of the previous summary.json, else what the records themselves tell."""
    old = run_dir / "summary.json"
    if old.is_file():
        try:
            meta = json.loads(old.read_text(encoding="utf-8")).get("meta")
            if isinstance(meta, dict) and meta:
                return meta
        except (OSError, ValueError, AttributeError):  # ValueError: not JSON, not UTF-8
            pass  # a damaged summary is exactly what this command rebuilds
    first: RunRecord | None = None
    simulator: str | None = None
    started: str | None = None
    for r in iter_records(results):  # one streamed pass, only when there is no meta to reuse
        first = first or r
        simulator = simulator or r.simulator
        started = r.started_at if started is None else min(started, r.started_at)
    return {
        "run_id": first.run_id if first else run_dir.name,
        "agent": first.agent if first else None,
        "simulator": simulator,
        "judge_model": first.judge_model if first else None,
        "started_at": started,
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
    meta = _meta(run_dir, results)
    briefs: list[tuple[str, str, str]] = []

    def stream() -> Iterator[RunRecord]:
        for r in iter_records(results):
            briefs.append((r.id, r.case_id, r.status))
            yield r

    summary = build_summary(stream(), meta, run_dir=run_dir)  # one pass: the summary and the briefs
    shown = shown_ids(briefs, summary)
    picked = [r for r in iter_records(results) if shown is None or r.id in shown]
    write_summary(run_dir / "summary.json", summary)
    write_report(run_dir / "report.html", picked, summary, total=len(briefs))
    return summary
