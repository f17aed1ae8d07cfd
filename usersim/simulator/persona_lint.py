"""Persona lint: schema errors plus the semantic mistakes that make a simulated user misbehave.

It lives with the simulator because it checks the persona against what the simulators understand
(slots, question patterns, constraint keys); layering keeps usersim.personas free of simulator imports."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from usersim import lang
from usersim.core.messages import Message
from usersim.core.registry import did_you_mean
from usersim.core.yamlfile import FileProblems, LineIndex, Problem
from usersim.personas.loader import read_persona_file
from usersim.personas.schema import Persona
from usersim.simulator.lint_adversary import adversary_problems
from usersim.simulator.lint_constraints import breaking_proposals, contradicting_proposals
from usersim.simulator.phrasing import humanize, slot_label
from usersim.simulator.signals import (
    CONSTRAINT_KEYS,
    DEFAULT_DELIVERABLE_KEYWORDS,
    canonical_item,
    unknown_topics,
)
from usersim.simulator.slots import FactMatcher, known_slots

# Facts the user must be able to give for the agent to deliver each canonical item;
# a tuple means "any one of these".
NEEDS: dict[str, list[tuple[str, ...]]] = {
    "flights": [("origin",), ("destination",), ("dates",)],
    "trains": [("origin",), ("destination",), ("dates",)],
    "hotel": [("destination", "district"), ("dates", "duration")],
    "itinerary": [("destination",), ("duration", "dates")],
    "model": [("purpose", "preferences"), ("budget",)],
    "listing": [("district", "destination"), ("budget",)],
    "restaurant": [("destination", "district")],
}


@dataclass
class LintProblem(Problem):
    """A lint finding; warnings are printed but do not fail `usersim persona lint`."""

    severity: str = "error"

    def __str__(self) -> str:
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{self.file}:{self.line}: {self.field or '<file>'}: {prefix}{self.message}"


def _available_slots(p: Persona) -> set[str]:
    slots = {f.slot for f in p.known_info}
    slots |= {e.slot for e in p.events if e.kind in ("change_fact", "change_mind") and e.slot}
    return slots


def semantic_problems(p: Persona, path: str, lines: LineIndex) -> list[LintProblem]:
    """Goal needs facts the persona lacks, contradictions, unreachable events, unknown-vs-known."""
    out: list[LintProblem] = []

    def add(loc: tuple, message: str, severity: str = "error") -> None:
        out.append(LintProblem(path, lines.line(loc), ".".join(str(x) for x in loc), message, severity))

    have = _available_slots(p)
    for i, item in enumerate(p.goal.required):
        for options in NEEDS.get(canonical_item(item), []):
            if not have & set(options):
                label = slot_label(p.language, options[0])
                add(
                    ("goal", "required", i),
                    f"'{item}' needs the user's {options[0]} ({label}), but known_info has no fact with slot "
                    f"{' or '.join(repr(o) for o in options)}. Add `- {{slot: {options[0]}, value: ...}}` to "
                    f"known_info, or drop '{item}' from goal.required.",
                )
        if (
            item not in p.goal.deliverable_keywords
            and canonical_item(item) not in DEFAULT_DELIVERABLE_KEYWORDS
        ):
            add(
                ("goal", "required", i),
                f"no deliverable_keywords for '{item}': simulators will look for the word '{item}' itself. "
                f"Add `deliverable_keywords: {{{item}: [...]}}` with words that show it was delivered.",
                "warning",
            )
    for key in p.goal.deliverable_keywords:
        if key not in p.goal.required:
            add(
                ("goal", "deliverable_keywords", key),
                f"'{key}' is not in goal.required.{did_you_mean(key, p.goal.required)} Keywords only count for required items.",
            )
    for key in p.goal.constraints:
        if key not in CONSTRAINT_KEYS:
            add(
                ("goal", "constraints", key),
                f"unknown constraint '{key}'.{did_you_mean(key, set(CONSTRAINT_KEYS))} Known: {', '.join(sorted(CONSTRAINT_KEYS))}",
            )

    changed = {e.slot for e in p.events if e.kind in ("change_fact", "change_mind") and e.slot}
    first: dict[str, tuple[int, str]] = {}
    matcher = FactMatcher(p)
    for j, fact in enumerate(p.known_info):
        name = fact.label or humanize(fact.slot)
        question = f"您的{name}是什么？" if p.language == "zh" else f"What is your {name}?"
        typo = did_you_mean(fact.slot, known_slots()) if fact.slot not in known_slots() else ""
        if typo:
            add(
                ("known_info", j, "slot"),
                f"slot '{fact.slot}' is not a built-in slot.{typo} Built-in slots come with question patterns "
                "(从哪里出发 / where are you flying from); other keys are matched by their own words only.",
                "warning",
            )
        elif fact.slot not in matcher.asked(question):
            add(
                ("known_info", j, "slot"),
                f"the rule simulator does not recognise a question about '{fact.slot}' ({question!r}). "
                "Give it a descriptive key, `aliases` or `description`; until then it is only volunteered "
                "(reveal_policy gradually / all_at_once).",
                "warning",
            )
        if fact.slot in first and first[fact.slot][1] != fact.value and fact.slot not in changed:
            k, old = first[fact.slot]
            add(
                ("known_info", j, "value"),
                f"slot '{fact.slot}' is given twice with different values ('{old}' at line {lines.line(('known_info', k))} "
                f"and '{fact.value}'). Keep one and script the change as an event "
                f"`{{at_turn: N, kind: change_fact, slot: {fact.slot}, value: {fact.value}}}`.",
            )
        first.setdefault(fact.slot, (j, fact.value))

    for i, e in enumerate(p.events):
        if p.max_turns is not None and e.at_turn is not None and e.at_turn > p.max_turns:
            add(
                ("events", i, "at_turn"),
                f"event fires at turn {e.at_turn} but max_turns is {p.max_turns}, so it never happens. "
                f"Lower at_turn or raise max_turns.",
            )
        if e.kind in ("change_fact", "add_constraint") and (not e.slot or e.value is None):
            add(("events", i), f"a {e.kind} event needs both `slot` and `value`.")
        if (
            e.kind == "add_constraint"
            and e.slot
            and e.slot.split(".", 1)[0] not in {*CONSTRAINT_KEYS, "needs"}
        ):
            add(
                ("events", i, "slot"),
                f"unknown constraint '{e.slot}'.{did_you_mean(e.slot, set(CONSTRAINT_KEYS))}",
            )
        if e.kind in ("add_required", "drop_required") and not e.slot:
            add(("events", i), f"a {e.kind} event needs `slot` (the required item).")
        if e.kind == "drop_required" and e.slot and e.slot not in p.goal.required:
            add(
                ("events", i, "slot"),
                f"'{e.slot}' is not in goal.required.{did_you_mean(e.slot, p.goal.required)}",
            )
        if e.kind == "say" and not e.text:
            add(("events", i, "text"), "a say event needs `text` (what the user says).")

    labels = {
        slot: {slot, slot_label("zh", slot), slot_label("en", slot)}
        for slot in {f.slot for f in p.known_info}
    }
    for i, topic in enumerate(unknown_topics(p)):
        for fact in p.known_info:
            names = {n.lower() for n in labels[fact.slot]}
            if topic.lower() in names or (len(topic) >= 2 and topic in fact.value):
                add(
                    ("unknown_info", i),
                    f"'{topic}' is listed as unknown, but known_info gives {fact.slot} = '{fact.value}'. "
                    "Remove it from unknown_info or from known_info.",
                )
                break
    adversary_problems(p, add)  # a manipulative user's tactics and target (simulator/lint_adversary.py)
    return out


def _ask(p: Persona, agent_says: str) -> tuple[str, list[str]]:
    """The rule simulator's answer (text, acts) to one agent turn after the persona's opening."""
    from usersim.simulator.base import SimulatorView
    from usersim.simulator.rule import RuleSimulator

    opening = p.opening_message or p.goal.description
    transcript = [Message(role="user", content=opening), Message(role="assistant", content=agent_says)]
    view = SimulatorView(
        case_id="persona-lint",
        persona=p,
        opening_message=opening,
        transcript=transcript,
        turn=2,
        max_turns=20,
    )
    turn = RuleSimulator().respond(view)
    return turn.message or "", list(turn.meta.get("acts", []))


def _squash(text: str) -> str:
    return "".join(text.split()).casefold()


def probe_problems(p: Persona, path: str, lines: LineIndex) -> list[LintProblem]:
    """Put the language layer's ways of asking for each fact (resource `probes.fact_questions`) to the
    rule simulator and report the facts it cannot answer; propose something that breaks each goal
    constraint (`probes.proposals`, see lint_constraints.breaking_proposals) and report an
    acceptance. Warnings: a persona still runs."""
    out: list[LintProblem] = []
    probes = lang.resources(p.language).topic("probes")
    hidden = {t.lower() for t in unknown_topics(p)}
    for j, fact in enumerate(p.known_info):
        if fact.slot.lower() in hidden or fact.slot in known_slots():
            continue  # built-in slots come with the simulator's own question patterns (tests/simulator)
        label = fact.label or (
            slot_label(p.language, fact.slot) if fact.slot in known_slots() else humanize(fact.slot)
        )
        missed = []
        for template in probes.get("fact_questions", []):
            question = template.format(label=label)
            reply, _ = _ask(p, question)
            if _squash(fact.value) not in _squash(reply):
                missed.append(f"{question!r} -> {reply!r}")
        if missed:
            out.append(
                LintProblem(
                    path,
                    lines.line(("known_info", j)),
                    f"known_info.{j}",
                    f"the rule simulator did not answer '{fact.slot}' ({fact.value}) to {len(missed)} of "
                    f"{len(probes.get('fact_questions', []))} ways of asking: {'; '.join(missed[:3])}. Give the fact "
                    "`aliases` or a `description` in the words agents use, or add the wording to a lang/ folder.",
                    "warning",
                )
            )
    labelled = [
        (
            f.label or (slot_label(p.language, f.slot) if f.slot in known_slots() else humanize(f.slot)),
            f.value,
        )
        for f in p.known_info
    ]
    wrong: dict[int, list[str]] = {}
    for j, proposal in contradicting_proposals(labelled, list(probes.get("fact_proposals", []))):
        reply, acts = _ask(p, proposal)
        if "reject" not in acts:
            wrong.setdefault(j, []).append(f"{proposal!r} -> {reply!r}")
    for j, accepted in wrong.items():
        out.append(
            LintProblem(
                path,
                lines.line(("known_info", j)),
                f"known_info.{j}",
                f"the rule simulator did not correct a proposal that gets '{p.known_info[j].slot}' "
                f"({p.known_info[j].value}) wrong: {'; '.join(accepted[:2])}. Give the fact a `label` "
                "in the words agents use, or add the wording to a lang/ folder.",
                "warning",
            )
        )
    for field_path, shown, proposal in breaking_proposals(
        p.goal.constraints, probes.get("proposals", {}), p.language
    ):
        reply, acts = _ask(p, proposal)
        if "reject" not in acts:
            out.append(
                LintProblem(
                    path,
                    lines.line(("goal", "constraints", *field_path)),
                    "goal.constraints." + ".".join(str(f) for f in field_path),
                    f"the rule simulator did not refuse a proposal that breaks {shown}: "
                    f"{proposal!r} -> {reply!r} (acts: {', '.join(acts) or 'none'})",
                    "warning",
                )
            )
    return out


def lint_file(path: str | Path) -> list[LintProblem]:
    """All problems of one persona file (schema errors first; semantic checks need a valid file),
    then what the rule simulator does with the persona when probed (`probe_problems`)."""
    try:
        persona, lines = read_persona_file(path)
    except FileProblems as exc:
        return [LintProblem(p.file, p.line, p.field, p.message) for p in exc.problems]
    return semantic_problems(persona, str(path), lines) + probe_problems(persona, str(path), lines)


def persona_files(paths: list[str | Path]) -> list[Path]:
    """The persona YAML files named by `paths` (folders are searched for *.yaml)."""
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        files.extend(sorted(p.glob("*.yaml")) if p.is_dir() else [p])
    return files


def lint_paths(paths: list[str | Path]) -> list[LintProblem]:
    """Lint every persona file under `paths`; ids must be unique across them."""
    problems: list[LintProblem] = []
    seen: dict[str, Path] = {}
    for f in persona_files(paths):
        found = lint_file(f)
        problems.extend(found)
        if f.stem in seen and not found:
            problems.append(
                LintProblem(str(f), 1, "id", f"persona id '{f.stem}' is also defined in {seen[f.stem]}")
            )
        seen.setdefault(f.stem, f)
    return problems
