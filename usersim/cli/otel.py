"""`usersim otel export`, and the `--otel` options of run / explore / rescore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

ENDPOINT_HELP = (
    "OTLP/HTTP endpoint for --otel (a base URL gets /v1/traces). Default: the standard "
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT variables, else "
    "http://localhost:4318; OTEL_EXPORTER_OTLP_HEADERS carries auth headers."
)


def otel_options(command: Any) -> Any:
    """--otel / --otel-endpoint on a command that runs or re-judges conversations."""
    command = click.option("--otel-endpoint", default=None, metavar="URL", help=ENDPOINT_HELP)(command)
    return click.option(
        "--otel",
        is_flag=True,
        help="Export each conversation as an OpenTelemetry trace (GenAI semantic conventions: invoke_agent, "
        "chat and execute_tool spans, a gen_ai.evaluation.result event per verdict). Needs the otel extra.",
    )(command)


def export_after(records: list[Any], enabled: bool, endpoint: str | None) -> None:
    """Export finished records (rescore: the verdicts are new, the conversations stored)."""
    if not enabled:
        return
    from usersim.reports.otel import OtelUnavailable, export_records

    try:
        click.echo(export_records(records, endpoint).line(), err=True)
    except OtelUnavailable as exc:
        raise click.ClickException(str(exc)) from None


def check_otel(enabled: bool, endpoint: str | None) -> None:
    """Refuse a missing extra or a malformed endpoint before any work (exit 2)."""
    if not enabled and endpoint:
        raise click.UsageError("--otel-endpoint needs --otel")
    if not enabled:
        return
    from usersim.reports.otel import OtelUnavailable, traces_endpoint

    try:
        traces_endpoint(endpoint)
        import opentelemetry.exporter.otlp.proto.http.trace_exporter  # noqa: F401
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--otel-endpoint") from None
    except ImportError:
        from usersim.reports.otel import INSTALL_HINT

        raise click.UsageError(INSTALL_HINT) from None
    except OtelUnavailable as exc:  # pragma: no cover - same as ImportError, from TraceExport
        raise click.UsageError(str(exc)) from None


@click.group()
def otel() -> None:
    """OpenTelemetry traces of stored runs."""


@otel.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--endpoint", default=None, metavar="URL", help=ENDPOINT_HELP)
@click.option(
    "--to",
    "to_file",
    default=None,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write OTLP/JSON lines (one ExportTraceServiceRequest per conversation) to this file instead.",
)
@click.option("--no-content", is_flag=True, help="Leave message text, tool arguments and results out.")
def export(run_dir: Path, endpoint: str | None, to_file: Path | None, no_content: bool) -> None:
    """Export the stored conversations of RUN_DIR as traces (one per conversation)."""
    from usersim.graphs.store import RunStore
    from usersim.reports.otel import OtelUnavailable, export_records

    if to_file is not None and endpoint:
        raise click.UsageError("choose --endpoint or --to, not both")
    if not (run_dir / "results.sqlite").is_file():
        raise click.ClickException(f"{run_dir}: no results.sqlite (not a usersim run folder)")
    store = RunStore(run_dir / "results.sqlite")
    try:
        records = store.records()
    finally:
        store.close()
    if to_file is not None:
        to_file.parent.mkdir(parents=True, exist_ok=True)
        to_file.write_text("", encoding="utf-8")
    try:
        summary = export_records(records, endpoint, file=to_file, content=not no_content)
    except OtelUnavailable as exc:
        raise click.ClickException(str(exc)) from None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--endpoint") from None
    click.echo(summary.line())
    if summary.failed:
        raise SystemExit(1)
