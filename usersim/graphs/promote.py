"""Promote a run record (typically a failing organic conversation) to a regression case.

Two forms:

* `prefix` (default): the recorded user turns up to the first failing turn are replayed, then the
  same persona variant (seed pinned) simulates on through the same graph. The flawed agent fails the
  same way again; a fixed agent answers the failing turn well and the simulated user carries on from
  there, so the case can pass. All of the case's own checks are kept (they include the failed ones).
* `strict`: a static case whose history is the recorded conversation before the failing turn and
  whose message is that turn's user line; only the agent's reply to it is judged, with the checks
  that make sense for one reply and the state checks (`final_state` judges the state the replayed
  history's writes and the reply left); conversation-shaped ones such as `turns`, `stop_reason` or
  `asked_clarification` are named in the case's notes, and what was still missing becomes keyword
  checks.

The promoted file references the source's domain files (environment state, tool modules, policy,
persona) by paths relative to itself rather than inlining them, and its title is in the case's
language.

Either way the recorded conversation is kept as `reference_transcript`; the divergence judge reports
where the agent now departs from it, as information only.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
from pathlib import Path
from typing import Any, Literal

import yaml

from usersim.cases.loader import find_case, load_case
from usersim.cases.schema import Case, CaseInput, PromotedFrom
from usersim.core.messages import Message
from usersim.core.record import RunRecord
from usersim.core.registry import UnknownNameError, did_you_mean
from usersim.graphs.replay import messages_of
from usersim.graphs.store import RunStore
from usersim.personas.loader import persona_problems
from usersim.personas.schema import Persona

log = logging.getLogger(__name__)

Form = Literal["prefix", "strict"]

# Checks that judge what a single reply says or does; the rest judge the whole conversation.
REPLY_CHECKS = {
    "keywords",
    "constraint",
    "count",
    "memory_recall",
    "tool_called",
    "tool_not_called",
    "tool_order",
    "skill_triggered",
    "skill_not_triggered",
}
# Checks of the domain state after the reply: kept in the strict form, judged on the state the
# replayed history's writes left (usersim.cases.history) plus the reply's own calls.
STATE_CHECKS = {"final_state"}
# Checks that are met once for the whole conversation: not asked again of the reply at the failing turn
# when the conversation before it already met them.
_MET_ONCE = {"tool_called", "keywords", "skill_triggered"}
# Checks about how the conversation opens (the first live assistant turn).
_OPENING_CHECKS = {"asked_clarification"}
# Turns tried for a case that proves itself, from the failing turn found on (each one or two runs).
_TURN_TRIES = 6
# Judges whose evidence_turn points at what was achieved, not at what went wrong.
_EVIDENCE_OF_PROGRESS = {"task_completion", "milestones"}


def find_record(run_dir: Path, record_id: str) -> tuple[RunRecord, dict]:
    store = RunStore(run_dir / "results.sqlite")
    try:
        records, meta = store.records(), store.get_meta()
    finally:
        store.close()
    by_id = {r.id: r for r in records}
    if record_id in by_id:
        return by_id[record_id], meta
    matches = [r for r in records if r.case_id == record_id]
    if len(matches) == 1:
        return matches[0], meta
    hint = did_you_mean(record_id, set(by_id))
    raise UnknownNameError(
        f"No record '{record_id}' in {run_dir}.{hint} Records: {', '.join(sorted(by_id)[:10])}"
    )


def record_persona(record: RunRecord, case: Case, meta: dict) -> Persona | None:
    """The persona (variant) the record ran with, rebuilt from the case and the run's explore settings."""
    if not case.persona:
        return None
    from usersim.personas.loader import resolve_persona
    from usersim.personas.variation import vary

    base = resolve_persona(case)
    wanted = record.variant.persona
    if not wanted or wanted == base.id:
        return base
    levels = ((meta.get("explore") or {}).get("variants") or {}).get(wanted)
    if levels is not None:  # a guided exploration's variant: its levels are in the meta
        from usersim.personas.variation import with_levels

        return with_levels(base, levels, wanted)
    n = (meta.get("explore") or {}).get("n")
    if n:
        for p in vary(base, int(n), int(meta.get("seed") or 0)):
            if p.id == wanted:
                return p
    raise ValueError(
        f"record {record.id} ran persona variant '{wanted}', which cannot be rebuilt from this run "
        f"(explore n={n!r}, seed={meta.get('seed')!r})"
    )


def _persona_overrides(case: Case, base: Persona | None, variant: Persona | None) -> dict[str, Any]:
    """The case's overrides plus every top-level persona field where the variant differs from the base."""
    if base is None or variant is None or variant.id == base.id:
        return dict(case.persona_overrides)
    b, v = base.model_dump(mode="json"), variant.model_dump(mode="json")
    return {**case.persona_overrides, **{k: val for k, val in v.items() if b.get(k) != val}}


def agenda_trace(record: RunRecord, persona: Persona, max_turns: int) -> tuple[int, dict[int, list[str]]]:
    """Replay the agent's recorded replies through the persona's agenda (as the rule simulator does):
    the first turn after which nothing the user still wanted was ever delivered (the turn after the
    last delivery, or the turn a scripted change reopened the request), and the items pending before
    each reply."""
    from usersim.simulator.agenda import Agenda, decide
    from usersim.simulator.rule import agent_moves, due_events

    agenda = Agenda.start(persona)
    for e in persona.events:
        if e.at_turn == 1:
            agenda.apply_event(e)
    moves = agent_moves(messages_of(record)[record.history_len :])  # text and tool names per turn
    progress, pending = 1, {}
    for t in range(1, record.turns + 1):
        pending[t] = list(agenda.pending)
        before = set(agenda.delivered)
        reply, tools = moves[t - 1] if t - 1 < len(moves) else ("", [])
        obs = agenda.observe(reply, t)
        if obs.delivered:
            progress = t + 1
        events, _why = due_events(agenda, t + 1, reply, tools)  # scripted and conditional events
        upcoming = any(e.at_turn is not None and t + 1 < e.at_turn <= max_turns for e in persona.events)
        decide(agenda, obs, events, upcoming)
        if not (before | set(obs.delivered)) <= set(agenda.delivered):  # a change reopened the request
            progress = t + 1
    return progress, pending


def failing_verdicts(record: RunRecord) -> list[Any]:
    return [v for v in record.verdicts if v.counts_toward_status and v.verdict in ("fail", "error")]


def failing_turn(record: RunRecord, persona: Persona | None, max_turns: int) -> int:
    """The first user turn whose reply went wrong: the earliest turn a failing verdict cites as evidence,
    or (with a persona) the turn after which the user's open requests were never served again."""
    candidates = []
    for v in failing_verdicts(record):
        if v.judge in _EVIDENCE_OF_PROGRESS:
            continue
        if v.evidence_turn is not None and 0 <= v.evidence_turn < len(record.transcript):
            turn = record.transcript[v.evidence_turn].turn
            if turn:
                candidates.append(turn)
    if persona is not None and record.turns:
        try:
            candidates.append(agenda_trace(record, persona, max_turns)[0])
        except Exception:  # a heuristic: without it the failing turn is the evidence or the last turn
            log.warning("could not replay %s through the persona's agenda", record.id, exc_info=True)
    turn = min(candidates) if candidates else record.turns
    return max(1, min(turn, record.turns))


def _user_starts(messages: list[Message], start: int) -> list[int]:
    return [i for i in range(start, len(messages)) if messages[i].role == "user"]


def _check_met_before(check: dict[str, Any], history: list[Message]) -> bool:
    """Whether the conversation before the failing turn already met a met-once check."""
    ((kind, params),) = check.items()
    params = params or {}
    if kind not in _MET_ONCE:
        return False
    if kind == "tool_called":
        tools = params.get("tool")
        names = {tools} if isinstance(tools, str) else set(tools or [])
        called = [c for m in history for c in m.tool_calls if c.name in names]
        return len(called) >= int(params.get("min_calls", 1)) and not params.get("args")
    if kind == "keywords":
        if params.get("scope") != "assistant" or params.get("none"):
            return False
        text = "\n".join(m.content for m in history if m.role == "assistant").lower()
        words = params.get("any") or []
        return bool(words) and any(w.lower() in text for w in words) and not params.get("all")
    return False


def left_out(case: Case, kept: list[dict[str, Any]]) -> list[str]:
    """The case's checks a strict form does not ask of the one reply (conversation-shaped, or met by
    the replayed history), by type: said in the promoted case's notes, never dropped silently."""
    return [next(iter(c)) for c in case.judging.checks if c not in kept]


def strict_judging(
    case: Case, history: list[Message], pending: list[str], persona: Persona | None, *, opening: bool = False
):
    """The case's judging for one reply: reply-scoped checks not already met before, plus one keyword
    check per deliverable the user was still waiting for; no milestones, no conversation rubric."""
    from usersim.simulator.signals import item_keywords

    j = case.judging
    # the first live reply is the failing one when nothing came before: opening checks apply to it too
    allowed = REPLY_CHECKS | STATE_CHECKS | (_OPENING_CHECKS if opening else set())
    checks = [c for c in j.checks if next(iter(c)) in allowed and not _check_met_before(c, history)]
    if persona is not None:
        for item in pending:
            words = item_keywords(persona.goal, item)
            if words:
                checks.append({"keywords": {"scope": "assistant", "any": list(words)}})
    methods = [m for m in j.scoring.methods if m == "auto"] or ["auto"]
    return j.model_copy(
        deep=True,
        update={
            "checks": checks,
            "milestones": [],
            "rubric": [],
            "human_review": [],
            "drift_threshold": None,
            "scoring": j.scoring.model_copy(
                update={"methods": methods, "note": f"strict regression: {j.scoring.note or j.scoring.label}"}
            ),
        },
    )


def _title(case: Case, key: str, **values: Any) -> str:
    """The promoted case's title in the case's language (usersim/lang/data/<code>/drafts.yaml)."""
    from usersim import lang
    from usersim.sandbox.base import case_language

    code = case_language(case)
    template = str(lang.resources(code).get("drafts", key) or lang.resources("en").get("drafts", key))
    return template.format(title=case.title, **values)


def _persona_ref(case: Case) -> str | None:
    """The case's persona as the promoted case (written elsewhere) must name it: an id as it is, a
    path relative to the source case file made absolute."""
    if not case.persona or case.file is None:
        return case.persona
    path = Path(case.persona)
    if not path.is_absolute() and (case.file.parent / path).is_file():
        return str((case.file.parent / path).resolve())
    return case.persona


def promoted_case(
    record: RunRecord, case: Case, meta: dict, *, form: Form = "prefix", at_turn: int | None = None
) -> Case:
    """The regression case for `record` (see the module docstring for the two forms)."""
    messages = messages_of(record)
    history, live = messages[: record.history_len], messages[record.history_len :]
    starts = _user_starts(messages, record.history_len)
    users = [messages[i].content for i in starts]
    if not users:
        raise ValueError(f"record {record.id} has no user turn to replay")
    persona = record_persona(record, case, meta)
    max_turns = case.max_turns or (persona.max_turns if persona else None) or len(users)
    k = at_turn or failing_turn(record, persona, max_turns)
    if at_turn is None and record.branch and form == "prefix":
        # a branched continuation: replay its shared checkpoint too, so the recorded wording comes back
        k = max(k, min(int(record.branch.get("at_turn") or 0), len(users)))
    if not 1 <= k <= len(users):
        raise ValueError(f"record {record.id} has {len(users)} user turn(s); cannot promote at turn {k}")
    base = None
    if persona is not None:
        from usersim.personas.loader import resolve_persona

        base = resolve_persona(case)
    digest = hashlib.sha256(record.id.encode()).hexdigest()[:6]
    skills = case.skills.model_copy(deep=True)
    if record.variant.group is not None:
        skills.skill_enabled, skills.groups = record.variant.group == "B", []
    origin = PromotedFrom(
        run_id=str(meta.get("run_id", record.run_id or "")),
        record_id=record.id,
        case_id=case.id,
        agent=record.agent,
        simulator=record.simulator,
        status=record.status,
        form=form,
        failing_turn=k,
        failing=[f"{v.judge}: {v.reason}" for v in failing_verdicts(record)],
        persona=record.variant.persona or case.persona,
        seed=record.seed,
    )
    common: dict[str, Any] = {
        "long_context": None,  # the history is already the expanded variant
        "skills": skills,
        "tags": sorted(set(case.tags) | {"regression"}),
        "promoted_from": origin,
        "persona_overrides": _persona_overrides(case, base, persona),
        "persona": _persona_ref(case),
    }
    if form == "prefix" and case.mode == "organic":
        return case.model_copy(
            deep=True,
            update=common
            | {
                "id": f"{case.id}-REG-{digest}",
                "title": _title(case, "promoted_prefix", turns=k, record=record.id),
                "input": CaseInput(message=users[0], script=users[1:k]),
                "reference_transcript": live,
            },
        )
    if form == "prefix":  # a static source: its user turns are fixed anyway, replay them all
        return case.model_copy(
            deep=True,
            update=common
            | {
                "id": f"{case.id}-REG-{digest}",
                "title": _title(case, "promoted_static", status=record.status, record=record.id),
                "mode": "static",
                "input": CaseInput(history=history, message=users[0], script=users[1:]),
                "max_turns": None,
                "reference_transcript": live,
            },
        )
    cut = starts[k - 1]
    end = starts[k] if k < len(starts) else len(messages)
    pending: list[str] = []  # what the user still waited for, when not getting it is what failed
    undelivered = any(v.judge == "task_completion" for v in failing_verdicts(record))
    if persona is not None and k > 1 and undelivered:
        try:
            pending = agenda_trace(record, persona, max_turns)[1].get(k, [])
        except Exception:
            log.warning("could not replay %s through the persona's agenda", record.id, exc_info=True)
    judging = strict_judging(case, messages[:cut], pending, persona, opening=k == 1)
    dropped = left_out(case, judging.checks)
    note = f"strict form: not judged on one reply: {', '.join(dropped)}" if dropped else None
    return case.model_copy(
        deep=True,
        update=common
        | {
            "notes": "\n".join(x for x in (case.notes, note) if x) or None,
            "id": f"{case.id}-REG-{digest}-T{k}",
            "title": _title(case, "promoted_strict", turn=k, record=record.id),
            "mode": "static",
            "input": CaseInput(history=messages[:cut], message=users[k - 1]),
            "max_turns": None,
            "judging": judging,
            "reference_transcript": messages[cut:end],
        },
    )


def file_references(case: Case, to_dir: Path) -> dict[str, Any]:
    """The source case's environment and policy as its file wrote them (state and tool modules as
    files, a policy file by name), rewritten relative to `to_dir`: the promoted case references the
    domain's files instead of inlining them, so the two travel together (usersim.cases.relocate)."""
    from usersim.cases.loader import _read_with_includes, include_roots
    from usersim.cases.relocate import relocate

    if case.file is None:
        return {}
    raw, _ = _read_with_includes(case.file, include_roots(case.file.parent))
    picked = {k: raw[k] for k in ("environment", "policy") if raw.get(k) is not None}
    return relocate(picked, case.file.parent, to_dir)


def promote(
    run_dir: Path,
    record_id: str,
    to_dir: Path,
    cases_paths: list[str] | None = None,
    *,
    form: Form = "prefix",
    at_turn: int | None = None,
    against: str | None = None,
) -> Path:
    """Write the promoted case to TO_DIR/<id>.yaml and return its path, once it has proved itself:
    it loads, it fails again with the record's agent, and (with `against`, a correct or reference
    agent) it passes with that one. Else nothing is written and the ValueError says why."""
    record, meta = find_record(run_dir, record_id)
    if record.error:
        raise ValueError(f"record {record.id} did not run ({record.error}); nothing to promote")
    # the case folders the exploration ran (a domain of one's own) unless others are given
    case = find_case(record.case_id, cases_paths or (meta.get("explore") or {}).get("cases") or None)
    new = promoted_case(record, case, meta, form=form, at_turn=at_turn)
    found = new.promoted_from.failing_turn if new.promoted_from else None
    # the turn found first, then (unless --at-turn) the later ones: a strict case cut where the agent
    # had not yet gone wrong fails a correct agent too
    turns = [at_turn] if at_turn or not found else list(range(found, record.turns + 1))[:_TURN_TRIES]
    tried = []
    for turn in turns:
        if turn != found:
            new = promoted_case(record, case, meta, form=form, at_turn=turn)
        # written beside its final place (its file references are relative to the folder), under a
        # hidden name until it has run: a case that proves nothing never replaces or joins a suite
        pending = write_case(new, case, to_dir, name=f".{new.id}.unchecked.yaml")
        try:
            why = asyncio.run(_proves(pending, record, meta, against))
            if not why:
                return pending.replace(to_dir / f"{new.id}.yaml")
        finally:
            pending.unlink(missing_ok=True)
        tried.append(f"failing turn {turn}: {why}")
    hint = "" if form == "prefix" else "; the prefix form (--form prefix) lets the user go on after the cut"
    raise ValueError(
        f"not written: no {form} case from record {record.id} stands for it — " + "; ".join(tried) + hint
    )


async def _proves(path: Path, record: RunRecord, meta: dict, against: str | None) -> str | None:
    """Why the case at `path` would not stand for its record (None when it does): with the record's
    agent it must fail when the record failed (pass when it passed), and with `against` it must pass."""
    from usersim.graphs.shrink import Runs, _reasons

    case = load_case(path)
    runs = Runs(record, meta, None, against, budget=2)  # type: ignore[arg-type]  # no target: any failure
    again = await runs._one(case, None, runs.bad_cfg, runs.bad_plan)
    if record.status in ("failed", "passed") and again.status != record.status:
        return (
            f"does not {'fail' if record.status == 'failed' else 'pass'} with {record.agent}, the agent "
            f"it came from, as the record did: it {again.status} "
            f"({_reasons(again) or again.error or 'no failing check'})"
        )
    if runs.good_cfg is not None:
        good = await runs._one(case, None, runs.good_cfg, runs.good_plan)
        if good.status != "passed":
            return f"fails the correct agent too: with {against} it {good.status} ({_reasons(good) or good.error or ''})"
    return None


def write_case(
    new: Case, case: Case, to_dir: Path, state: dict[str, Any] | None = None, *, name: str | None = None
) -> Path:
    """Write a regression case made from `case` to TO_DIR/<id>.yaml (or TO_DIR/`name`) with its
    persona, environment and policy referenced relative to it; re-load it to prove it is valid;
    return its path. `state`: the environment's records inline instead of the source's state file
    (a shrunk fixture)."""
    to_dir.mkdir(parents=True, exist_ok=True)
    path = to_dir / (name or f"{new.id}.yaml")
    data = new.model_dump(mode="json", exclude_defaults=True)
    if data.get("persona") and Path(data["persona"]).is_absolute():
        # relative to the promoted file, so the regression case and its persona move together
        data["persona"] = os.path.relpath(data["persona"], to_dir.resolve())
    data.update(file_references(case, to_dir))
    if state is not None and isinstance(data.get("environment"), dict):
        data["environment"] = {**data["environment"], "state": state}
        data["environment"].pop("state_updates", None)  # already applied to `state`
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False, width=100), encoding="utf-8")
    problems = persona_problems(load_case(path))
    if problems:
        raise ValueError(f"the promoted case {path} does not resolve: " + "; ".join(map(str, problems)))
    return path
