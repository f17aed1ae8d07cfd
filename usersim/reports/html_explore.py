"""Exploration in report.html: failure clusters and the branching tree, each linked to a representative
transcript with a copyable `usersim promote ...` command line.

Clustering lives here (not in graphs) so the report can rebuild the section from the stored records
alone: a run is an exploration when its meta carries an `explore` entry.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Callable
from html import escape
from typing import Any

from pydantic import ValidationError

from usersim.core.record import RunRecord
from usersim.reports.coverage_map import CoverageMap, coverage_html
from usersim.reports.html_parts import cell, raw_cell, section, table


def signature(reason: str) -> str:
    """A judge reason with quotes, numbers and spacing normalised: failures alike share it."""
    text = re.sub(r"[「」“”\"'][^「」“”\"']{0,40}[「」“”\"']", "…", reason.lower())
    text = re.sub(r"\d+(\.\d+)?", "#", text)
    return re.sub(r"\s+", " ", text).strip()[:90]


def cluster_failures(records: list[RunRecord]) -> list[dict[str, Any]]:
    """Failing/error conversations grouped by (judge, normalised reason); largest cluster first."""
    groups: dict[tuple[str, str], list[RunRecord]] = defaultdict(list)
    examples: dict[tuple[str, str], str] = {}
    for r in records:
        if r.status not in ("failed", "error"):
            continue
        bad = [v for v in r.verdicts if v.counts_toward_status and v.verdict in ("fail", "error")]
        keys = [(v.judge, signature(v.reason)) for v in bad] or [
            ("harness", signature(r.error or r.stop_detail))
        ]
        for v, key in zip(bad or [None], keys):
            groups[key].append(r)
            examples.setdefault(key, v.reason if v else (r.error or r.stop_detail))
    clusters = [
        {
            "judge": judge,
            "signature": sig,
            "count": len(recs),
            "example_reason": examples[(judge, sig)],
            "records": [r.id for r in recs],
            "personas": sorted({r.variant.persona for r in recs if r.variant.persona}),
        }
        for (judge, sig), recs in groups.items()
    ]
    return sorted(clusters, key=lambda c: (-c["count"], c["judge"], c["signature"]))


def promote_command(
    run_dir: str,
    record_id: str,
    form: str = "prefix",
    to: str = "regressions",
    cases: list[str] | None = None,
) -> str:
    """The shell command that promotes one record (quoted for a POSIX shell); `cases`: where the case
    files are when they are not the bundled library."""
    args = ["usersim", "promote", run_dir, record_id, "--to", to]
    for path in cases or []:
        args += ["--cases", path]
    if form != "prefix":
        args += ["--form", form]
    return " ".join(shlex.quote(a) for a in args)


def _copy(cmd: str) -> str:
    """A command line the reader can select, with a button that copies it."""
    c = escape(cmd, quote=True)
    return (
        f'<code class="cmd">{c}</code> <button type="button" data-cmd="{c}" '
        'onclick="navigator.clipboard&&navigator.clipboard.writeText(this.dataset.cmd);'
        "this.textContent='copied'\">copy</button>"
    )


def _link(anchors: dict[str, str], record_id: str) -> str:
    anchor = anchors.get(record_id)
    label = escape(record_id)
    return f'<a href="#{anchor}">{label}</a>' if anchor else label


def _clusters(records: list[RunRecord], anchors: dict[str, str], cmd: Callable[[str], str]) -> str:
    clusters = cluster_failures(records)
    if not clusters:
        return "<p>No failing conversation: nothing to promote.</p>"
    rows = []
    for c in clusters:
        rep = c["records"][0]
        rows.append(
            [
                cell(c["count"]),
                cell(c["judge"]),
                cell(c["example_reason"]),
                cell(", ".join(c["personas"]) or "—"),
                raw_cell(_link(anchors, rep)),
                raw_cell(_copy(cmd(rep))),
            ]
        )
    return (
        "<p>Failing conversations grouped by judge and normalised reason. Promote the representative to "
        "a regression case: its recorded user turns up to the failing turn are replayed, then the same "
        "persona variant (seed pinned) simulates on; add <code>--form strict</code> to judge only the "
        "reply at the failing turn.</p>"
        + table(["n", "judge", "example reason", "personas", "representative", "promote"], rows, "clusters")
    )


def _first_failure(r: RunRecord) -> str:
    bad = [v for v in r.verdicts if v.counts_toward_status and v.verdict in ("fail", "error")]
    return f"{bad[0].judge}: {bad[0].reason}"[:120] if bad else (r.error or "")[:120]


def _node(r: RunRecord, anchors: dict[str, str], cmd: Callable[[str], str]) -> str:
    line = _copy(cmd(r.id)) if r.status in ("failed", "error") and not r.error else ""
    why = _first_failure(r)
    return (
        f'{_link(anchors, r.id)} <span class="{escape(r.status)}">{escape(r.status)}</span>'
        f' <span class="muted">{r.turns} turns · stop {escape(r.stop_reason or "—")}</span>'
        + (f'<br><span class="muted">{escape(why)}</span>' if why else "")
        + (f"<br>{line}" if line else "")
    )


def _tree(records: list[RunRecord], anchors: dict[str, str], cmd: Callable[[str], str]) -> str:
    by_parent: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        if r.branch:
            by_parent[str(r.branch.get("parent_id"))].append(r)
    if not by_parent:
        return ""
    by_id = {r.id: r for r in records}
    items = []
    for parent_id, kids in by_parent.items():
        parent = by_id.get(parent_id)
        at = kids[0].branch.get("at_turn") if kids[0].branch else "?"
        failed = sum(k.status == "failed" for k in kids)
        head = _node(parent, anchors, cmd) if parent else escape(parent_id)
        leaves = "".join(
            f"<li>branch {escape(str((k.branch or {}).get('index')))}: {_node(k, anchors, cmd)}</li>"
            for k in sorted(kids, key=lambda k: (k.branch or {}).get("index", 0))
        )
        items.append(
            f"<li>{head}<br><b>checkpoint at turn {escape(str(at))}</b> → {len(kids)} continuation(s), "
            f"{failed} failed<ul>{leaves}</ul></li>"
        )
    return (
        "<h3>Branching tree</h3><p>Each conversation that got past the checkpoint continues several "
        "times from the same prefix, each with its own simulator seed.</p>"
        f'<ul class="tree">{"".join(items)}</ul>'
    )


def regression_section(records: list[RunRecord], anchors: dict[str, str]) -> str:
    """Promoted regression cases: where each conversation now departs from the recorded failure.
    Information, not a verdict: a fixed agent is expected to depart."""
    rows = []
    for r in records:
        div = next((v for v in r.verdicts if v.judge == "divergence"), None)
        if div is None:
            continue
        d = div.details or {}
        where = (
            f"turn {d.get('first_divergent_turn')} ({d.get('kind')})" if d.get("diverged") else "follows it"
        )
        rows.append(
            [
                raw_cell(_link(anchors, r.id)),
                raw_cell(f'<span class="{escape(r.status)}">{escape(r.status)}</span>'),
                cell(r.stop_reason or "—"),
                cell(where),
                cell(d.get("now", "—") if d.get("diverged") else "—"),
                cell(d.get("recorded", "—") if d.get("diverged") else "—"),
            ]
        )
    if not rows:
        return ""
    body = (
        "<p>Each regression case was promoted from a failing conversation. Where the agent now departs "
        "from that recording is shown for information; it never decides the status.</p>"
        + table(["conversation", "status", "stop", "departs at", "now", "recorded"], rows, "divergence")
    )
    return section("Regression cases: departures from the recorded failures", body, "regressions")


def explore_section(records: list[RunRecord], meta: dict[str, Any]) -> str:
    """The exploration section (failure clusters, branching tree) and the regression-case departures;
    '' when the run has neither."""
    anchors = {r.id: f"r{n}" for n, r in enumerate(records)}  # the transcript viewer's anchors
    regressions = regression_section(records, anchors)
    info = meta.get("explore")
    if not isinstance(info, dict):
        return regressions
    run_dir = str(info.get("out_dir") or meta.get("run_id") or "RUN_DIR")
    settings = (
        f"<p>{len(records)} conversations: n={escape(str(info.get('n')))} persona variants per case"
        f" ({escape(str(info.get('strategy') or 'random'))})"
        + (
            f", branched at turn {escape(str(info.get('branch_at')))} into "
            f"{escape(str(info.get('branches')))} continuations"
            if info.get("branch_at") and info.get("branches")
            else ""
        )
        + f"; seed {escape(str(meta.get('seed')))}.</p>"
    )
    cases = [str(c) for c in info.get("cases") or []]

    def cmd(record_id: str) -> str:
        return promote_command(run_dir, record_id, cases=cases)

    body = settings + _clusters(records, anchors, cmd) + _tree(records, anchors, cmd)
    if isinstance(info.get("coverage"), dict):  # written after the last conversation (graphs.explore)
        try:
            body += coverage_html(CoverageMap.model_validate(info["coverage"]))
        except ValidationError as exc:  # a map another usersim version wrote: the rest of the page stands
            body += f"<p>The run's coverage map is not readable by this version: {escape(str(exc)[:200])}</p>"
    return section("Exploration: failure clusters and coverage", body, "explore") + regressions
