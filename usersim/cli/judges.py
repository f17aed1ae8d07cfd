"""`usersim judges ...`: list judges and checks, calibrate, export / import human review."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import click

from usersim.core.verdict import Verdict
from usersim.judges.base import judge_registry
from usersim.judges.calibration import (
    REVIEW_SAMPLE_RATE,
    SwapReport,
    is_recheck,
    judge_human,
    rule_vs_llm,
    swap_check,
    swap_pairs,
)
from usersim.judges.checks import check_registry
from usersim.judges.human import apply_labels, read_labels, read_records, review_items, write_items


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
        "judges": [{"name": n, "description": _judge_doc(n)} for n in judge_registry.names()],
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
        click.echo(f"  {j['name']:<16} {j['description']}")
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
@click.option(
    "--swap",
    is_flag=True,
    help="Pairwise position-swap check: each pair of final replies to the same case is judged in both "
    "orders; reports position consistency (needs --judge-model).",
)
@click.option("--judge-model", default=None, help="Judge model SPEC for --swap (openai:MODEL).")
@click.option(
    "--against",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="With --swap: pair RESULTS with this run's replies to the same cases (default: pairs within RESULTS).",
)
@click.option("--max-pairs", default=20, show_default=True, type=click.IntRange(1), help="Pairs for --swap.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def calibrate(
    results: Path,
    human_labels: Path | None,
    swap: bool,
    judge_model: str | None,
    against: Path | None,
    max_pairs: int,
    as_json: bool,
) -> None:
    """Rule-vs-LLM agreement (Cohen's kappa, >10% deviation flagged), the seed 003 re-check sample,
    judge-human agreement, and with --swap the pairwise position-swap consistency."""
    if swap and not judge_model:
        raise click.UsageError("--swap needs --judge-model openai:MODEL")
    try:
        records = read_records(results)
        reports: list[Any] = [rule_vs_llm(records)]
        if any(is_recheck(Verdict.model_validate(v)) for r in records for v in r.get("verdicts", [])):
            reports.append(rule_vs_llm(records, recheck_only=True))
        if human_labels:
            reports.append(judge_human(records, read_labels(human_labels)))
        if swap:
            reports.append(
                _swap_report(records, read_records(against) if against else None, judge_model, max_pairs)
            )
    except (OSError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps([r.model_dump() for r in reports], ensure_ascii=False, indent=2))
        return
    for rep in reports:
        if isinstance(rep, SwapReport):
            _print_swap(rep)
        else:
            _print_report(rep)


def _swap_report(
    records: list[dict], against: list[dict] | None, judge_model: str | None, max_pairs: int
) -> SwapReport:
    import asyncio

    from usersim.cases.loader import find_case
    from usersim.judges.llm import ModelComplete, judge_specs
    from usersim.judges.llm_rubric import rubric_criteria

    criteria: dict[str, str] = {}
    for case_id in {r.get("case_id", "") for r in records}:
        try:
            criteria[case_id] = "; ".join(rubric_criteria(find_case(case_id)))
        except (LookupError, ValueError):  # a case no longer in the library: compare on the request alone
            continue
    pairs = swap_pairs(records, against, criteria=criteria, max_pairs=max_pairs)
    spec = judge_specs(judge_model)[0]

    async def check() -> SwapReport:
        from usersim.llm.client import aclose_clients

        try:
            return await swap_check(pairs, ModelComplete(spec), judge_model=spec)
        finally:
            await aclose_clients()

    return asyncio.run(check())


def _print_swap(rep: SwapReport) -> None:
    if rep.pairs == 0:
        click.echo(
            f"{rep.name}: no pair of differing replies to the same case was judged"
            + (f" ({len(rep.errors)} errors)" if rep.errors else "")
        )
    else:
        click.echo(
            f"{rep.name} ({rep.judge_model}): {rep.pairs} pairs, position consistency {rep.consistency:.1%}, "
            f"position A named in {rep.first_position_wins} of {2 * rep.pairs} answers"
        )
        if rep.inconsistent:
            click.echo(f"  winner followed the position (position bias): {', '.join(rep.inconsistent[:20])}")
    for e in rep.errors[:5]:
        click.echo(f"  error: {e}")


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
