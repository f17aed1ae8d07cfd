"""`usersim report RUN_DIR`: rebuild summary.json and report.html from DIR/results.jsonl."""

from __future__ import annotations

from pathlib import Path

import click

from usersim.reports.rebuild import rebuild


@click.command("report")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
def report(run_dir: Path) -> None:
    """Rebuild RUN_DIR/summary.json and RUN_DIR/report.html from RUN_DIR/results.jsonl."""
    summary = rebuild(run_dir)
    html = run_dir / "report.html"
    t = summary["totals"]
    click.echo(
        f"{t['records']} conversations: {t['passed']} passed, {t['failed']} failed, "
        f"{t['error']} error, {t['unjudged']} unjudged, {t['inconclusive']} inconclusive; "
        f"pass rate {t['pass_rate_text']}"
    )
    click.echo(f"wrote {run_dir / 'summary.json'} and {html}")
