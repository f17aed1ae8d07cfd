"""`usersim judges ...`: list judges and checks, calibrate, export / import human review."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import click

from usersim.judges.base import judge_registry
from usersim.judges.calibration import REVIEW_SAMPLE_RATE, judge_human, rule_vs_llm
from usersim.judges.checks import check_registry
from usersim.judges.human import apply_labels, read_labels, read_records, review_items, write_items
from usersim.judges.select import fidelity_available


def _params(model: Any) -> list[dict[str, Any]]:
    out = []
    for name, f in model.model_fields.items():
        default = None if f.is_required() else f.get_default(call_default_factory=True)
        out.append(
            {
                "name": f.alias or name,
                "type": _type_name(f.annotation),
                "required": f.is_required(),
                "default": default,
                "description": f.description or "",
            }
        )
    return out


def _judge_doc(name: str) -> str:
    doc = (judge_registry.get(name).__doc__ or "").strip().splitlines()
    return doc[0] if doc else ""


def _type_name(annotation: Any) -> str:
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return re.sub(r"\b(?:typing|[a-z_]+(?:\.[a-z_]+)+)\.", "", text)


@click.group(name="judges")
def judges() -> None:
    """Judges and rule checks: list them, calibrate judges, human review export / import."""


@judges.command(name="list")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_cmd(as_json: bool) -> None:
    """Judges and the case-file check types with their params."""
    import usersim.judges.select  # noqa: F401

    data = {
        "judges": [
            {"name": n, "description": _judge_doc(n), "available": n != "fidelity" or fidelity_available()}
            for n in judge_registry.names()
        ],
        "checks": [
            {
                "name": c,
                "description": check_registry.get(c).doc,
                "params": _params(check_registry.get(c).params),
            }
            for c in check_registry.names()
        ],
    }
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
        return
    click.echo("Judges:")
    for j in data["judges"]:
        note = "" if j["available"] else " (not available in this build)"
        click.echo(f"  {j['name']:<16} {j['description']}{note}")
    click.echo("\nChecks (judging.checks / minefields / milestone check):")
    for c in data["checks"]:
        click.echo(f"  {c['name']}: {c['description']}")
        for p in c["params"]:
            req = "required" if p["required"] else f"default {p['default']!r}"
            click.echo(f"      {p['name']}: {p['type']} ({req}) — {p['description']}")


def _print_report(rep: Any) -> None:
    if rep.items == 0:
        click.echo(f"{rep.name}: {rep.note}")
        return
    flag = "FLAG" if rep.flagged else "ok"
    click.echo(
        f"{rep.name}: {rep.items} items, agreement {rep.agreement:.1%}, kappa {rep.kappa:.3f}, "
        f"target >= {rep.target:.0%} [{flag}]"
    )
    if rep.flagged:
        click.echo(f"  {rep.note}")
        click.echo(f"  disagreements: {', '.join(rep.disagreements[:20])}")


@judges.command()
@click.argument("results", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--human", "human_labels", type=click.Path(exists=True, path_type=Path), help="Human labels (JSONL/CSV)."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def calibrate(results: Path, human_labels: Path | None, as_json: bool) -> None:
    """Rule-vs-LLM agreement (Cohen's kappa, >10% deviation flagged) and judge-human agreement."""
    try:
        records = read_records(results)
        reports = [rule_vs_llm(records)]
        if human_labels:
            reports.append(judge_human(records, read_labels(human_labels)))
    except (OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps([r.model_dump() for r in reports], ensure_ascii=False, indent=2))
        return
    for rep in reports:
        _print_report(rep)


@judges.command(name="review-export")
@click.argument("run_dir", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--to", "dest", required=True, type=click.Path(path_type=Path), help="Output file: .csv or .jsonl."
)
@click.option(
    "--rate", default=REVIEW_SAMPLE_RATE, show_default=True, help="Share of LLM-judged records sampled."
)
def review_export(run_dir: Path, dest: Path, rate: float) -> None:
    """Export queued 人工 criteria plus a deterministic calibration sample for human labelling."""
    try:
        items = review_items(read_records(run_dir), sample_rate=rate)
    except (OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    path = write_items(items, dest)
    queued = sum(i.source == "queued" for i in items)
    click.echo(
        f"wrote {len(items)} review items to {path} ({queued} queued, {len(items) - queued} calibration sample); "
        f"fill the `label` column with pass / fail / inconclusive"
    )


@judges.command(name="review-import")
@click.argument("run_dir", type=click.Path(exists=True, path_type=Path))
@click.argument("labels", type=click.Path(exists=True, path_type=Path))
def review_import(run_dir: Path, labels: Path) -> None:
    """Apply human labels to RUN_DIR/results.jsonl (the old file is kept as results.jsonl.bak)."""
    path = run_dir / "results.jsonl" if run_dir.is_dir() else run_dir
    try:
        records = read_records(path)
        counts = apply_labels(records, read_labels(labels))
    except (OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    shutil.copyfile(path, path.with_name(path.name + ".bak"))
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    _sync_run_dir(path.parent, records)
    click.echo(
        f"applied {counts['applied']} human verdict(s) and {counts['calibration']} calibration label(s) "
        f"to {path}; status and score re-combined"
    )


def _sync_run_dir(run_dir: Path, records: list[dict]) -> None:
    """Keep the run's SQLite store, summary.json and report.html in step with the labelled records."""
    from usersim.core.record import RunRecord
    from usersim.graphs.outputs import write_outputs
    from usersim.graphs.store import RunStore

    if not (run_dir / "results.sqlite").is_file():
        return
    store = RunStore(run_dir / "results.sqlite")
    try:
        typed = [RunRecord.model_validate(r) for r in records]
        for ordinal, rec in enumerate(typed):
            store.put(rec, ordinal)
        meta = store.get_meta()
    finally:
        store.close()
    write_outputs(run_dir, typed, meta)
