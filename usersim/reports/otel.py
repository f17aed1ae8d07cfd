"""Export a run's conversations as OpenTelemetry traces: over OTLP/HTTP to any receiver (Phoenix,
Langfuse, Jaeger, an OpenTelemetry Collector ...) or to an OTLP JSON Lines file.

Where to: `endpoint` when given (a base URL gets `/v1/traces`), else the standard environment
variables OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT (and
OTEL_EXPORTER_OTLP_HEADERS for auth), else http://localhost:4318/v1/traces. Each conversation is
exported as soon as it is given (one OTLP request per conversation); an endpoint that keeps failing
is given up after three conversations in a row, and the summary says how many were not exported —
the run itself never fails because its traces could not be sent, and `usersim otel export RUN`
sends them again later from the stored records.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from usersim.core.record import RunRecord
from usersim.core.secrets import redact

log = logging.getLogger(__name__)

INSTALL_HINT = "OpenTelemetry export needs the `otel` extra: pip install 'usersim-harness[otel]'"
GIVE_UP_AFTER = 3  # failed conversations in a row before the endpoint is given up


class OtelUnavailable(RuntimeError):
    """opentelemetry-sdk / the OTLP exporter is not installed."""


@dataclass
class ExportSummary:
    """What an export did."""

    target: str
    traces: int = 0
    spans: int = 0
    failed: int = 0

    def line(self) -> str:
        lost = f"; {self.failed} not exported (run `usersim otel export RUN_DIR` to send them again)"
        return f"otel: {self.traces} trace(s), {self.spans} span(s) to {self.target}" + (
            lost if self.failed else ""
        )


def traces_endpoint(endpoint: str | None) -> str:
    """The OTLP/HTTP traces URL: a base URL gets /v1/traces; None reads the standard variables."""
    if endpoint:
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"--otel-endpoint {redact(endpoint)!r}: expected an http(s) URL")
        return endpoint if parts.path not in ("", "/") else endpoint.rstrip("/") + "/v1/traces"
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return os.environ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318"
    return base.rstrip("/") + "/v1/traces"


class TraceExport:
    """Builds each record's trace and sends it to an OTLP/HTTP endpoint, or appends it to an OTLP
    JSON Lines file (`file`). Thread-safe: the run's writer thread calls `export`."""

    def __init__(self, endpoint: str | None = None, *, file: Path | None = None, content: bool = True):
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

            from usersim.reports.otel_spans import PlannedIds
        except ImportError as exc:
            raise OtelUnavailable(INSTALL_HINT) from exc
        from importlib.metadata import PackageNotFoundError, version

        try:
            __version__ = version("usersim-harness")
        except PackageNotFoundError:  # a checkout that is not installed
            __version__ = "unknown"

        collected: list[ReadableSpan] = []

        class _Collect(SpanProcessor):
            def on_end(self, span: ReadableSpan) -> None:
                collected.append(span)

        self._collected = collected
        self._ids = PlannedIds()
        self._provider = TracerProvider(
            resource=Resource.create({"service.name": "usersim", "service.version": __version__}),
            id_generator=self._ids,
        )
        self._provider.add_span_processor(_Collect())
        self._lock = threading.Lock()
        self._content = content
        self._file = file
        self._in_a_row = 0
        if file is not None:
            self._exporter = None
            self.summary = ExportSummary(target=str(file))
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            url = traces_endpoint(endpoint)
            self._exporter = OTLPSpanExporter(endpoint=url, timeout=5)
            self.summary = ExportSummary(target=redact(url))

    def export(self, record: RunRecord) -> None:
        """Send (or write) the record's trace; failures are counted, never raised."""
        from usersim.reports.otel_spans import emit_record

        with self._lock:
            self._collected.clear()
            emit_record(self._provider, self._ids, record, content=self._content)
            spans = list(self._collected)
            if self._exporter is None:
                assert self._file is not None
                with self._file.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(otlp_json(spans), ensure_ascii=False) + "\n")
                ok = True
            elif self._in_a_row >= GIVE_UP_AFTER:
                ok = False
            else:
                ok = self._send(spans)
            if ok:
                self.summary.traces += 1
                self.summary.spans += len(spans)
                self._in_a_row = 0
            else:
                self.summary.failed += 1
                self._in_a_row += 1

    def _send(self, spans: Sequence[Any]) -> bool:
        from opentelemetry.sdk.trace.export import SpanExportResult

        assert self._exporter is not None
        try:
            result = self._exporter.export(spans)
        except Exception as exc:  # noqa: BLE001 - a receiver's failure never fails the run
            log.warning("otel export to %s failed: %s", self.summary.target, redact(str(exc)))
            return False
        if result is not SpanExportResult.SUCCESS and self._in_a_row + 1 == GIVE_UP_AFTER:
            log.warning(
                "otel: %s failed %d times in a row; not trying again", self.summary.target, GIVE_UP_AFTER
            )
        return result is SpanExportResult.SUCCESS

    def close(self) -> ExportSummary:
        if self._exporter is not None:
            self._exporter.shutdown()
        self._provider.shutdown()
        return self.summary


def export_records(
    records: Iterable[RunRecord],
    endpoint: str | None = None,
    *,
    file: Path | None = None,
    content: bool = True,
) -> ExportSummary:
    """Export finished records (e.g. a stored run) and say what was sent."""
    exporter = TraceExport(endpoint, file=file, content=content)
    for record in records:
        exporter.export(record)
    return exporter.close()


def _hex_ids(node: Any) -> Any:
    """OTLP/JSON writes trace and span ids as hex (protobuf's JSON mapping gives base64)."""
    if isinstance(node, dict):
        return {
            k: base64.b64decode(v).hex() if k in ("traceId", "spanId", "parentSpanId") and v else _hex_ids(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def otlp_json(spans: Sequence[Any]) -> dict[str, Any]:
    """Spans as one OTLP/JSON ExportTraceServiceRequest (the file exporter's line format)."""
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return _hex_ids(MessageToDict(encode_spans(spans)))
