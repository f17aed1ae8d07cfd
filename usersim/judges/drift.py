"""The drift judge: per assistant turn, how well the reply stays anchored to the user's original
intent, on seed 003's scale (100 anchored / 70 slight expansion / 30 obvious drift / 0 forgotten).

Rule-based by default (lexical anchoring: content bigrams of the first user request vs each
reply); LLM-based when a judge model is set. Seed 003 separates who moved the topic
(区分"主动扩展"和"被动漂移"), and so does each turn's `kind`:

- `user_switch`: the user EXPLICITLY changed the topic ("换个话题", "对了，…" with a new subject).
  Not drift: the anchor moves to the new topic, and the switch is reported on its own.
- `expansion` / `off_topic`: the agent moved off the anchor on its own (主动扩展).
- `passive_drift`: the user's follow-up wandered off the anchor without saying so and the reply
  followed it (被动漂移, the agent led away by the user) — drift all the same.

A user turn that goes back to an earlier topic ("回到刚才的销量") makes that topic the anchor again.
Informational (counts_toward_status False) unless the case sets a drift threshold.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from usersim.cases.schema import Case
from usersim.core.messages import Message
from usersim.core.verdict import Verdict
from usersim.judges.base import JudgeConfig, JudgeState, judge_registry
from usersim.judges.llm import Complete, JudgeModelError, ask_structured, model_complete, prompt
from usersim.judges.render import render_transcript
from usersim.lang import topics as topic_reading

LEVELS = (100, 70, 30, 0)
MIN_TERMS = 2  # fewer content terms than this in the instruction: what it is about cannot be read


def keywords(text: str) -> set[str]:
    """Content terms of a turn (lang.topics): CJK two-character pieces between function words,
    Latin content words, numbers."""
    return topic_reading.content_terms(text)


def level(overlap: float) -> int:
    """Anchoring level from the share of anchor keywords a reply repeats."""
    if overlap >= 0.3:
        return 100
    if overlap >= 0.15:
        return 70
    if overlap > 0:
        return 30
    return 0


def overall(curve: list[dict[str, Any]]) -> int | None:
    """Seed 003's scale from the curve: 100 all anchored; 70 drifted but back by the end;
    30 drifted and did not return; 0 the last reply has nothing of the intent left. Turns whose
    reading is uncertain are left out; None when the last reply is one (whether the agent came
    back cannot be told)."""
    if curve and curve[-1].get("uncertain"):
        return None
    levels = [p["anchoring"] for p in curve if not p.get("uncertain")]
    if not levels or min(levels) == 100:
        return 100
    last = levels[-1]
    return 70 if last >= 70 else (30 if last == 30 else 0)


def drift_threshold(case: Case) -> int | None:
    """The case's drift pass line: judging.drift_threshold when the schema has it, else a
    `drift-threshold:N` tag. None = the drift verdict is informational."""
    value = getattr(case.judging, "drift_threshold", None)
    if value is not None:
        return int(value)
    for tag in case.tags:
        if tag.startswith("drift-threshold:"):
            return int(tag.split(":", 1)[1])
    return None


def turns_of(transcript: list[Message], history_len: int) -> list[tuple[int, str, int, str]]:
    """(turn, user text, message index, final assistant text) per live user turn with a reply."""
    out, turn, user, last = [], 0, "", None
    if history_len and history_len < len(transcript) and transcript[history_len].role != "user":
        # A history-only case: the replayed history ends with the user message the agent answers.
        turn, user = 1, next((m.content for m in reversed(transcript[:history_len]) if m.role == "user"), "")
    for i, m in enumerate(transcript):
        if m.role == "user" and i >= history_len:
            if last is not None:
                out.append((turn, user, last[0], last[1]))
            turn, user, last = turn + 1, m.content, None
        elif m.role == "assistant" and m.content.strip() and i >= history_len and turn:
            last = (i, m.content)
    if last is not None:
        out.append((turn, user, last[0], last[1]))
    return out


def _kind(lv: int) -> str:
    return "anchored" if lv == 100 else ("expansion" if lv in (70, 30) else "off_topic")


def lexical_curve(transcript: list[Message], history_len: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Per-turn anchoring by keyword overlap with the current anchor: the original intent, or the
    topic the user last explicitly switched (or went back) to."""
    first_user = next((m.content for m in transcript if m.role == "user"), "")
    intent = keywords(first_user)
    topics = [intent]  # every anchor so far; the last is current
    anchor = set(intent)
    pending = False  # "换个话题吧" without a subject: the next user message names the new topic
    curve, prev_reply = [], first_user
    for turn, user, idx, reply in turns_of(transcript, history_len):
        u_kw = keywords(topic_reading.without_announcements(user))
        r_kw = keywords(reply)
        unrelated = len(u_kw) >= 2 and not (u_kw & anchor) and not (u_kw & keywords(prev_reply))
        earlier = next((t for t in reversed(topics[:-1]) if u_kw & t), None) if turn > 1 else None
        if earlier is None and turn > 1 and len(topics) > 1 and topic_reading.returns_to_earlier(user):
            earlier = topics[0]  # "回到正题" / "back to the main question": the original intent
        explicit = turn > 1 and (
            topic_reading.announces_switch(user) is not None
            or (unrelated and topic_reading.switch_opener(user) is not None)
        )
        point: dict[str, Any] = {"turn": turn, "message_index": idx}
        if pending and u_kw:
            anchor, pending = set(u_kw), False
            topics.append(anchor)
        if explicit:
            # a user-initiated switch: not drift; the anchor moves to the new topic
            if u_kw:
                anchor = set(u_kw)
                topics.append(anchor)
            else:
                pending = True
            base, kind = (u_kw or r_kw), "user_switch"
        elif earlier is not None and not (u_kw & anchor):
            anchor = earlier  # the user went back to an earlier topic
            topics.append(anchor)
            base, kind = anchor, None
            point["back_to_earlier_topic"] = True
        elif unrelated and topic_reading.continues(user) is None:
            # the user's follow-up left the anchor without saying so: a reply that follows it is
            # passive drift (被动漂移), measured against the anchor
            base, kind = anchor, "passive_drift"
        else:
            base, kind = anchor, None
        share = len(r_kw & base) / max(1, min(len(base), 12))
        lv = 100 if kind == "user_switch" and not u_kw else level(share)
        if kind == "passive_drift" and lv == 100:
            kind = "anchored"  # the agent kept to the anchor despite the user's detour
        if kind != "user_switch" and len(r_kw) < MIN_TERMS:
            # "好的。" / "OK": a reply with no content words is neither on nor off the topic
            point["uncertain"] = True
        point.update(
            anchoring=lv,
            kind=kind or _kind(lv),
            overlap=round(share, 3),
            matched=sorted(r_kw & base)[:8],
        )
        curve.append(point)
        prev_reply = reply
    return curve, sorted(intent)


class DriftTurn(BaseModel):
    model_config = ConfigDict(extra="ignore")

    turn: int = Field(description="User turn number.")
    anchoring: Literal[100, 70, 30, 0] = Field(description="Seed 003 scale.")
    kind: Literal["anchored", "expansion", "user_switch", "passive_drift", "off_topic"] = Field(
        description="Who moved the topic: the agent (expansion, off_topic), the user explicitly "
        "(user_switch, not drift) or the user without saying so, the agent following (passive_drift)."
    )
    reason: str = Field(default="", description="Why.")


class DriftOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    turns: list[DriftTurn] = Field(description="One entry per assistant turn.")


class DriftJudge:
    """Per-turn anchoring curve in Verdict.details; lexical, or LLM-based with a judge model."""

    cooperative = True  # waits only on usersim's model client (see core/turns.py)

    name = "drift"

    def __init__(self, judge_model: str | None = None, complete: Complete | None = None) -> None:
        self.judge_model = judge_model
        self.complete = complete or (model_complete(judge_model) if judge_model else None)

    async def __call__(self, *, transcript: list[Message], case: Case, state: JudgeState) -> list[Verdict]:
        curve, intent = lexical_curve(transcript, state.history_len)
        if not curve:
            return [
                Verdict(
                    judge=self.name,
                    verdict="inconclusive",
                    reason="no assistant reply to measure drift on",
                    criterion="semantic drift",
                    counts_toward_status=False,
                )
            ]
        mode, note = "lexical", ""
        if self.complete is not None:
            try:
                curve = await self._llm_curve(transcript, state, curve)
                mode = "llm"
            except JudgeModelError as exc:
                note = f" (LLM drift judge failed, lexical fallback: {exc})"
        score = overall(curve)
        threshold = drift_threshold(case)
        first_user = next((m.content for m in transcript if m.role == "user"), "")
        unsure = None
        if len(intent) < MIN_TERMS:
            unsure = (
                f"the first request ({first_user[:60]!r}) has too few content words to tell what its topic is"
            )
        elif score is None:
            last = curve[-1]
            unsure = (
                f"the last reply (turn {last['turn']}) has no content words to tell whether it is "
                "still on the original topic"
            )
        if unsure is not None:
            return [
                Verdict(
                    judge=self.name,
                    verdict="unjudged",
                    reason=f"uncertain: {unsure}{note}",
                    criterion=f"semantic drift (threshold {threshold})"
                    if threshold is not None
                    else "semantic drift",
                    counts_toward_status=threshold is not None,
                    details={"curve": curve, "overall": None, "mode": mode, "intent_keywords": intent},
                )
            ]
        assert score is not None
        agent_drift = [p["turn"] for p in curve if p["kind"] in ("expansion", "off_topic")]
        passive = [p["turn"] for p in curve if p["kind"] == "passive_drift"]
        switches = [p["turn"] for p in curve if p["kind"] == "user_switch"]
        points = ", ".join(f"t{p['turn']}={'?' if p.get('uncertain') else p['anchoring']}" for p in curve)
        reason = f"drift score {score} ({mode}); per turn: {points}"
        if agent_drift:
            reason += f"; agent-initiated drift (主动扩展) in turn(s) {', '.join(map(str, agent_drift))}"
        if passive:
            reason += (
                f"; passive drift (被动漂移: the reply followed the user's unannounced detour) in turn(s) "
                f"{', '.join(map(str, passive))}"
            )
        if switches:
            reason += (
                f"; user switched topic in turn(s) {', '.join(map(str, switches))} "
                "(not counted as drift; the anchor moves to the new topic)"
            )
        reason += note
        passed = score >= (threshold if threshold is not None else 70)
        return [
            Verdict(
                judge=self.name,
                verdict="pass" if passed else "fail",
                reason=reason,
                criterion=f"semantic drift (threshold {threshold})"
                if threshold is not None
                else "semantic drift",
                score=score / 100,
                counts_toward_status=threshold is not None,
                evidence_turn=next((p["message_index"] for p in curve if p["anchoring"] < 100), None),
                details={
                    "curve": curve,
                    "overall": score,
                    "mode": mode,
                    "intent_keywords": intent,
                    "threshold": threshold,
                    "agent_drift_turns": agent_drift,
                    "passive_drift_turns": passive,
                    "user_switch_turns": switches,
                },
            )
        ]

    async def _llm_curve(
        self, transcript: list[Message], state: JudgeState, lexical: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        first_user = next((m.content for m in transcript if m.role == "user"), "")
        turns = ", ".join(f"turn {p['turn']}: [{p['message_index']}]" for p in lexical)
        text = prompt(
            "drift",
            intent=first_user,
            transcript=render_transcript(transcript, state.history_len),
            turns=turns,
        )
        wanted = {p["turn"] for p in lexical}

        def gaps(out: DriftOutput) -> str | None:
            missing = sorted(wanted - {t.turn for t in out.turns})
            return f"ratings missing for turn(s) {missing}" if missing else None

        out = await ask_structured(
            self.complete,
            [{"role": "user", "content": text}],
            DriftOutput,  # type: ignore[arg-type]
            judge_model=str(self.judge_model),
            check=gaps,
        )
        rated = {t.turn: t for t in out.turns}
        curve = []
        for p in lexical:
            t = rated.get(p["turn"])
            curve.append(
                {**{k: v for k, v in p.items() if k != "uncertain"}, "anchoring": t.anchoring, "kind": t.kind}
                | {"reason": t.reason}
                if t
                else {**p, "reason": "lexical (judge gave no rating)"}
            )
        return curve


@judge_registry.register("drift")
def make_drift(config: JudgeConfig) -> DriftJudge:
    """Per-turn anchoring to the original intent (seed 003 100/70/30/0); informational unless the case sets a threshold."""
    return DriftJudge(config.judge_model)
