"""report.html section: who non-passing conversations are charged to, and the simulator-suspects.

The blame counts (agent / simulator / infrastructure / none) come from summary.json's `blame` and
stand beside the pass rate, which never includes simulator or infrastructure faults. Suspects
(summary.json `simulator_suspects`) are listed apart: which fidelity check failed, why, and a link
to the transcript (anchors follow the viewer's order, `#r<n>`).
"""

from __future__ import annotations

from html import escape

from usersim.core.record import RunRecord
from usersim.reports.html_parts import cell, raw_cell, section, table
from usersim.reports.summary_models import Summary

BLAME_ORDER = ("agent", "simulator", "infrastructure", "case", "none")


def _blame_table(s: Summary) -> str:
    t = s.totals
    keys = [k for k in BLAME_ORDER if k in s.blame] + [k for k in s.blame if k not in BLAME_ORDER]
    rows = [[cell("pass rate"), cell(t.pass_rate_text, "num")]]
    rows += [[cell(f"blame {k}"), cell(s.blame[k], f"blame-{k}")] for k in keys]
    if s.simulator_suspects:
        rows.append(
            [
                cell("flagged simulator-suspect (display only; status decides)"),
                cell(len(s.simulator_suspects)),
            ]
        )
    return table(["", "conversations"], rows, "blame")


def _suspect_rows(records: list[RunRecord], ids: list[str]) -> list[list[str]]:
    anchors = {r.id: n for n, r in enumerate(records)}
    by_id = {r.id: r for r in records}
    rows = []
    for rid in ids:
        r = by_id.get(rid)
        link = f'<a href="#r{anchors[rid]}">{escape(rid)}</a>' if rid in anchors else escape(rid)
        failed = (
            [v for v in r.verdicts if v.judge.startswith("fidelity") and v.verdict == "fail"] if r else []
        )
        checks = "<br>".join(escape(v.judge) for v in failed) or "—"
        reasons = "<br>".join(escape(v.reason) for v in failed) or "—"
        rows.append(
            [
                raw_cell(link),
                cell(r.status if r else "—"),
                cell(r.blame if r and r.blame else "—"),
                raw_cell(checks),
                raw_cell(reasons),
            ]
        )
    return rows


def simulator_section(records: list[RunRecord], s: Summary) -> str:
    """'Blame and simulator-suspects'; empty when nothing was charged and nothing is suspect."""
    if not s.blame and not s.simulator_suspects and not s.inconclusive:
        return ""
    body = (
        '<p class="muted">Non-passing conversations by who they are charged to. The pass rate is passed / '
        "(passed + failed + error); inconclusive conversations (the simulator could not give a clean "
        "conversation even when simulated again) and unjudged ones are left out of it and counted.</p>"
        + _blame_table(s)
    )
    if s.inconclusive:
        body += f"<h3>Inconclusive conversations ({len(s.inconclusive)}, all listed)</h3>" + table(
            ["conversation", "status", "blame", "fidelity check failed", "why"],
            _suspect_rows(records, s.inconclusive),
            "inconclusive",
        )
    if s.simulator_suspects:
        body += (
            f"<h3>Simulator-suspect conversations ({len(s.simulator_suspects)}, all listed)</h3>"
            '<p class="muted">The simulated user failed a fidelity check. Shown for review: the record\'s '
            "status decides how it counts.</p>"
            + table(
                ["conversation", "status", "blame", "fidelity check failed", "why"],
                _suspect_rows(records, s.simulator_suspects),
                "suspects",
            )
        )
    return section("Blame and simulator-suspects", body, "simulator-suspects")
