"""The milestones judge: a networkx DAG of the case's milestones, each reached when its check
passes; first-reached points come from evaluating the check on growing transcript prefixes.

A milestone with prerequisites is judged on the conversation from the point its last prerequisite
was reached: a cumulative check (keywords over every reply, a tool called at some point) would
otherwise count words said or calls made before the prerequisites existed (an agent announcing
"机票和酒店稍后再查" has not delivered a plan with flights and hotels). Only when the check never
passes in that window but does pass earlier is the milestone out of order.
Partial credit = share of milestones reached in DAG order; any minefield hit voids the score."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.checks import CheckContext, compact, evaluate

if TYPE_CHECKING:
    import networkx as nx


def milestone_graph(case: Case) -> nx.DiGraph:
    """Edges run prerequisite -> milestone. Raises ValueError for unknown ids or cycles."""
    import networkx as nx  # ~0.3 s to import: only when a case with milestones is judged

    g = nx.DiGraph()
    ids = [m.id for m in case.judging.milestones]
    for m in case.judging.milestones:
        g.add_node(m.id, check=m.check, description=m.description)
    for m in case.judging.milestones:
        for req in m.requires:
            if req not in g:
                raise ValueError(
                    f"milestone '{m.id}' requires unknown milestone '{req}' (known: {', '.join(ids)})"
                )
            g.add_edge(req, m.id)
    if not nx.is_directed_acyclic_graph(g):
        cycle = " -> ".join(a for a, _ in nx.find_cycle(g))
        raise ValueError(f"milestones form a cycle: {cycle}")
    return g


def first_reached(check: dict[str, Any], ctx: CheckContext) -> int | None:
    """Smallest transcript end index at which the check passes on the prefix, or None."""
    if not evaluate(check, ctx).passed:
        return None
    # Only ends right after a live message can change the outcome; scan them in order.
    for end in range(ctx.history_len + 1, len(ctx.transcript) + 1):
        if evaluate(check, ctx.prefix(end)).passed:
            return end - 1
    return len(ctx.transcript) - 1


def since(ctx: CheckContext, start: int) -> CheckContext:
    """The conversation from transcript index `start` on: what came before reads as history (not
    in any text scope), and tool calls made before it are not seen."""
    start = max(start, ctx.history_len)
    if start == ctx.history_len:
        return ctx
    first_turn = ctx.turn_of(start)
    trace = [
        e
        for e in ctx.state.tool_trace
        if (e.message_index >= start) or (e.message_index < 0 and e.turn >= first_turn)
    ]
    state = ctx.state.model_copy(update={"history_len": start, "tool_trace": trace})
    return CheckContext(ctx.transcript, ctx.case, state, ctx.calls_from_transcript)


def reached_after(
    check: dict[str, Any], ctx: CheckContext, prereqs: list[int | None]
) -> tuple[int | None, bool]:
    """(first-reached index, in order): in order when the check passes on the conversation from the
    last prerequisite's reach on; otherwise the first index it passed at all, out of order."""
    if prereqs and all(p is not None for p in prereqs):
        at = first_reached(check, since(ctx, max(p for p in prereqs if p is not None)))
        if at is not None:
            return at, True
    at = first_reached(check, ctx)
    return at, not prereqs


class MilestonesJudge:
    """Reached / missed / out-of-order milestones with partial credit; minefields void the score."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "milestones"

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        ctx = CheckContext(transcript, case, state)
        mines = [(spec, evaluate(spec, ctx)) for spec in case.judging.minefields]
        hits = [(spec, o) for spec, o in mines if o.passed]
        # a minefield that could not be decided is not a minefield avoided
        undecided = [(spec, o) for spec, o in mines if o.passed is None]
        mine_note = ""
        if hits:
            mine_note = "minefield hit, score voided: " + "; ".join(
                f"{compact(s, 80)} ({o.reason})" for s, o in hits
            )
        elif undecided:
            mine_note = f"{len(undecided)} of {len(mines)} minefield(s) could not be decided: " + "; ".join(
                f"{compact(s, 80)} ({o.reason})" for s, o in undecided
            )
        if not case.judging.milestones:
            if not case.judging.minefields:
                return []
            reason = mine_note or f"no minefield hit ({len(mines)} checked)"
            verdict = "fail" if hits else "inconclusive" if undecided else "pass"
            return [
                Verdict(
                    judge="minefields",
                    verdict=verdict,
                    reason=reason,
                    criterion="minefields",
                    score=0.0 if hits else None if undecided else 1.0,
                )
            ]
        try:
            g = milestone_graph(case)
        except ValueError as exc:
            return [Verdict(judge=self.name, verdict="error", reason=str(exc), criterion="milestones")]
        reached: dict[str, int | None] = {}
        in_order, out_of_order, missed = [], [], []
        import networkx as nx

        for mid in nx.topological_sort(g):
            preds = list(g.predecessors(mid))
            at, ok_order = reached_after(g.nodes[mid]["check"], ctx, [reached[p] for p in preds])
            reached[mid] = at
            if at is None:
                missed.append(mid)
                continue
            late = []
            if not ok_order:  # prerequisites missed, reached later, or only part of it said after them
                late = [p for p in preds if reached[p] is None or reached[p] >= at]  # type: ignore[operator]
                late = late or [p for p in preds if reached[p] == max(reached[q] or 0 for q in preds)]
            (out_of_order if late else in_order).append((mid, at, late))
        total = g.number_of_nodes()
        share = len(in_order) / total
        score = 0.0 if hits else round(share, 4)
        parts = [f"{len(in_order)}/{total} milestones reached in order ({share:.0%})"]
        if in_order:
            parts.append(
                "reached: " + ", ".join(f"{m} (msg {at}, turn {ctx.turn_of(at)})" for m, at, _ in in_order)
            )
        if out_of_order:
            parts.append(
                "out of order: "
                + ", ".join(f"{m} (msg {at}) before {'/'.join(late)}" for m, at, late in out_of_order)
            )
        if missed:
            parts.append("missed: " + ", ".join(missed))
        if mine_note:
            parts.append(mine_note)
        ok = not hits and len(in_order) == total
        verdict = "pass" if ok and not undecided else "inconclusive" if ok else "fail"
        details = {
            "reached": {m: at for m, at, _ in in_order},
            "out_of_order": {m: at for m, at, _ in out_of_order},
            "missed": missed,
            "minefields_hit": [compact(s) for s, _ in hits],
            "minefields_undecided": [compact(s) for s, _ in undecided],
            "edges": [list(e) for e in g.edges],
        }
        evidence = max((at for _, at, _ in in_order), default=None)
        return [
            Verdict(
                judge=self.name,
                verdict=verdict,
                reason="; ".join(parts),
                criterion="milestones",
                score=score,
                evidence_turn=evidence,
                details=details,
            )
        ]


@judge_registry.register("milestones")
def make_milestones(config: JudgeConfig) -> MilestonesJudge:
    """Milestone DAG: reached in order, partial credit; minefields void the score."""
    return MilestonesJudge()
