"""Building blocks of report.html: escaped tables and number formats shared by the sections."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from usersim.reports.summary_models import Rate


def pct(value: float | None) -> str:
    """0.6667 -> '66.7%'; None -> '—'."""
    return "—" if value is None else f"{value * 100:.1f}%"


def signed_pct(value: float | None) -> str:
    """-0.1 -> '-10.0%'; None -> '—'."""
    return "—" if value is None else f"{value * 100:+.1f}%"


def num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def text(value: Any) -> str:
    """Any value as escaped text (dicts and lists as compact JSON)."""
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False)
    return escape("—" if value is None else str(value))


def cell(value: Any, cls: str = "") -> str:
    """An escaped <td>; numbers are right-aligned."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        cls = (cls + " num").strip()
    attr = f' class="{escape(cls)}"' if cls else ""
    return f"<td{attr}>{text(value)}</td>"


def raw_cell(html: str, cls: str = "") -> str:
    """A <td> around HTML the caller has already escaped."""
    attr = f' class="{escape(cls)}"' if cls else ""
    return f"<td{attr}>{html}</td>"


def table(headers: list[str], rows: list[list[str]], cls: str = "") -> str:
    """A table from escaped header text and rows of ready <td> cells."""
    attr = f' class="{escape(cls)}"' if cls else ""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join(f"<tr>{''.join(r)}</tr>" for r in rows)
    return f"<table{attr}><tr>{head}</tr>{body}</table>"


RATE_HEADERS = ["records", "passed", "failed", "error", "unjudged", "inconclusive", "pass rate", "mean score"]


def rate_cells(rate: Rate) -> list[str]:
    """The cells of one Rate row (pass rate is passed / (passed + failed + error), what was left out shown)."""
    return [
        cell(rate.records),
        cell(rate.passed, "passed"),
        cell(rate.failed, "failed"),
        cell(rate.error, "error"),
        cell(rate.unjudged, "unjudged"),
        cell(rate.inconclusive, "inconclusive"),
        cell(rate.pass_rate_text, "num"),
        raw_cell(num(rate.mean_score), "num"),
    ]


def section(title: str, body: str, anchor: str) -> str:
    return f'<section id="{escape(anchor)}"><h2>{escape(title)}</h2>{body}</section>'
