"""What `usersim shrink` writes: the shrunk case file (next to promote's, same style), its entry in
TO_DIR/shrink.json, and the same entry in the run's meta (`shrinks`), which reports.html_shrink shows
in RUN/report.html next to the original record."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from usersim.cases.schema import Case, PromotedFrom, ShrinkInfo
from usersim.core.record import RunRecord
from usersim.graphs.promote import _persona_ref, write_case
from usersim.graphs.replay import messages_of
from usersim.graphs.shrink_units import Draft, Kept, tables
from usersim.personas.schema import Persona


def write_shrunk(
    draft: Draft,
    kept: Kept,
    case: Case,
    record: RunRecord,
    pin: PromotedFrom | None,
    info: ShrinkInfo,
    best: RunRecord,
    to_dir: Path,
) -> Path:
    """Write the case the selection `kept` builds, with its provenance; return its path."""
    built = draft.build(kept)
    assert built is not None and pin is not None
    new, persona = built
    digest = hashlib.sha256(f"{record.id}|{info.against or ''}".encode()).hexdigest()[:6]
    skills = case.skills.model_copy(deep=True)
    if record.variant.group is not None:
        skills.skill_enabled, skills.groups = record.variant.group == "B", []
    live = messages_of(best)[best.history_len :]
    new = new.model_copy(
        update={
            "id": f"{case.id}-MIN-{digest}",
            "title": _title(case, info.shrunk, record.id),
            "tags": sorted(set(case.tags) | {"regression", "shrunk"}),
            "skills": skills,
            "promoted_from": pin.model_copy(update={"shrink": info}),
            "persona_overrides": _overrides(case, persona),
            "persona": _persona_ref(case),
            "long_context": None,  # the history is the expanded variant the record ran
            "reference_transcript": live,
        }
    )
    rows = draft.units["rows"]
    dropped = bool(rows) and not set(rows) <= kept["rows"]
    return write_case(new, case, to_dir, tables(new) if dropped else None)


def _title(case: Case, shrunk: str, record_id: str) -> str:
    from usersim import lang
    from usersim.sandbox.base import case_language

    key = "promoted_shrunk"
    template = str(
        lang.resources(case_language(case)).get("drafts", key) or lang.resources("en").get("drafts", key)
    )
    return template.format(title=case.title, shrunk=shrunk, record=record_id)


def _overrides(case: Case, persona: Persona | None) -> dict[str, Any]:
    """The case's persona overrides plus every persona field the shrink (or the record's variant)
    changed: the shrunk case names the same persona file and says only what differs."""
    if persona is None or not case.persona:
        return dict(case.persona_overrides)
    from usersim.personas.loader import resolve_persona

    base = resolve_persona(case).model_dump(mode="json")
    now = persona.model_dump(mode="json")
    return {**case.persona_overrides, **{k: v for k, v in now.items() if base.get(k) != v}}


def _conversation(record: RunRecord) -> list[dict[str, Any]]:
    return [
        {
            "role": m.role,
            "content": m.content,
            "tools": [c.get("name") for c in m.tool_calls or []],
            "history": i < record.history_len,
        }
        for i, m in enumerate(record.transcript)
    ]


def entry_of(
    run_dir: Path, record: RunRecord, case: Case, path: Path, info: ShrinkInfo, best: RunRecord
) -> dict[str, Any]:
    return {
        "record": record.id,
        "case_id": case.id,
        "status": record.status,
        "turns": record.turns,
        "run_dir": str(run_dir),
        "case_file": str(path),
        **info.model_dump(mode="json"),
        "conversation": _conversation(best),
    }


def save_entry(path: Path, entry: dict[str, Any]) -> None:
    """Add (or replace: same record and good agent) the entry in a shrink.json."""
    entries: list[dict[str, Any]] = []
    if path.is_file():
        try:
            entries = list(json.loads(path.read_text(encoding="utf-8")).get("shrinks") or [])
        except (ValueError, AttributeError):
            entries = []  # a damaged file is rewritten
    same = (entry["run_dir"], entry["record"], entry["against"])
    entries = [e for e in entries if (e.get("run_dir"), e.get("record"), e.get("against")) != same]
    entries.append(entry)
    path.write_text(json.dumps({"shrinks": entries}, ensure_ascii=False, indent=2), encoding="utf-8")


def register(run_dir: Path, entry: dict[str, Any]) -> None:
    """Keep the entry in the run's meta (`shrinks`) and rebuild RUN/report.html, so the report shows
    the shrunk case next to its original."""
    from usersim.graphs.store import RunStore
    from usersim.reports.rebuild import rebuild

    summary = run_dir / "summary.json"
    data = json.loads(summary.read_text(encoding="utf-8")) if summary.is_file() else {}
    meta = data.get("meta") or {}
    same = (entry["record"], entry["against"])
    kept = [e for e in meta.get("shrinks") or [] if (e.get("record"), e.get("against")) != same]
    meta["shrinks"] = [*kept, {k: v for k, v in entry.items() if k != "run_dir"}]
    if summary.is_file():
        data["meta"] = meta
        summary.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    store = RunStore(run_dir / "results.sqlite")
    try:
        store.set_meta({"shrinks": meta["shrinks"]})
    finally:
        store.close()
    rebuild(run_dir)
